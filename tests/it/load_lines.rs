//! Every table of a tabular description carries a `load` line (the pandas call that
//! loads it as described), and running it with real pandas (the test venv) yields
//! exactly the described column names, in order, and the row count when it is exact.
//! Checked on the messy corpus, the generated fixtures and the shared lakes; all the
//! calls of a set run in one Python process.

use crate::common::*;
use lakestar::index::analyze::ColumnType;
use lakestar::index::analyze::Description;
use lakestar::index::synth::messy::{self, tables_of};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Formats whose descriptions must say how to load every table.
const TABULAR: [&str; 7] = [
    "csv",
    "tsv",
    "fixed-width",
    "excel",
    "parquet",
    "sqlite",
    "html",
];

/// Runs each job's call with `path` bound to its file; one JSON result per job.
const RUNNER: &str = r#"
import json, sys, sqlite3, warnings
import pandas as pd
warnings.simplefilter("ignore")
out = []
for j in json.load(open(sys.argv[1])):
    try:
        df = eval(j["load"], {"pd": pd, "sqlite3": sqlite3, "path": j["path"]})
        if not isinstance(df, pd.DataFrame):
            raise TypeError(f"the call returned {type(df).__name__}, not a DataFrame")
        names = [str(c) for c in df.columns]
        # By position: a repeated name selects several columns.
        of = lambda f: [names[i] for i in range(df.shape[1]) if f(df.iloc[:, i])]
        out.append({"columns": names, "rows": len(df),
                    "dates": of(pd.api.types.is_datetime64_any_dtype),
                    "numeric": of(pd.api.types.is_numeric_dtype),
                    "spans": of(pd.api.types.is_timedelta64_dtype)})
    except Exception as e:
        out.append({"error": f"{type(e).__name__}: {e}"})
json.dump(out, open(sys.argv[2], "w"))
"#;

/// One described table and what loading it must give.
pub(crate) struct Job {
    /// `file` or `file [table name]`, for messages.
    label: String,
    path: PathBuf,
    load: Option<String>,
    columns: Vec<String>,
    /// The row count, when the description states it exactly.
    rows: Option<u64>,
    /// The columns described as dates or datetimes.
    dates: Vec<String>,
    /// The numeric columns with missing-value markers: they must load as numbers.
    marked: Vec<String>,
    /// The columns described as durations: they must load as timedeltas.
    spans: Vec<String>,
    /// The columns read as dates written in another form (`200001`, `2001-032`): they
    /// must load as datetimes.
    forms: Vec<String>,
}

/// Index `lake` into `work/idx` and collect a job per table of every tabular file of
/// `rels` (relative to `lake`).
pub(crate) fn jobs(work: &Path, lake: &Path, rels: &[String]) -> Vec<Job> {
    let idx = index_into(work, lake);
    let mut jobs = Vec::new();
    for rel in rels {
        let out = run_ok(
            lake,
            &["describe", rel, "--index", idx.to_str().unwrap(), "--json"],
        );
        let v: Value = serde_json::from_str(&out).unwrap();
        if !TABULAR.contains(&v["format"].as_str().unwrap_or("")) {
            continue;
        }
        let d: Description = serde_json::from_value(v["description"].clone())
            .unwrap_or_else(|e| panic!("{rel}: {e}"));
        for t in tables_of(&d) {
            jobs.push(Job {
                label: match t.name {
                    Some(n) => format!("{rel} [{n}]"),
                    None => rel.clone(),
                },
                path: lake.join(rel),
                load: t.load.map(String::from),
                columns: t.columns.iter().map(|c| c.name.clone()).collect(),
                rows: t.rows_exact.then_some(t.rows),
                dates: t
                    .columns
                    .iter()
                    .filter(|c| matches!(c.kind, ColumnType::Date | ColumnType::Datetime))
                    .map(|c| c.name.clone())
                    .collect(),
                marked: t
                    .columns
                    .iter()
                    .filter(|c| matches!(c.kind, ColumnType::Integer | ColumnType::Float))
                    // Separators pandas undoes; percent or currency signs it keeps.
                    .filter(|c| {
                        !c.missing.is_empty()
                            && c.notation
                                .iter()
                                .all(|n| n.starts_with("thousands") || n.starts_with("decimal"))
                    })
                    .map(|c| c.name.clone())
                    .collect(),
                spans: t
                    .columns
                    .iter()
                    .filter(|c| c.kind == ColumnType::Duration)
                    .map(|c| c.name.clone())
                    .collect(),
                forms: t
                    .columns
                    .iter()
                    .filter(|c| c.kind == ColumnType::Date && c.time_span.is_some())
                    .map(|c| c.name.clone())
                    .collect(),
            });
        }
    }
    jobs
}

/// Run every job's load line with pandas; panic listing every table without one, every
/// Python error and every difference from the description.
pub(crate) fn check_loads(work: &Path, jobs: &[Job]) -> Vec<Value> {
    assert!(!jobs.is_empty(), "no tabular file described");
    let mut bad: Vec<String> = jobs
        .iter()
        .filter(|j| j.load.is_none())
        .map(|j| format!("{}: no load line", j.label))
        .collect();
    let runnable: Vec<&Job> = jobs.iter().filter(|j| j.load.is_some()).collect();
    let input: Vec<Value> = runnable
        .iter()
        .map(|j| json!({"path": j.path, "load": j.load}))
        .collect();
    let (jobs_file, results_file) = (work.join("loads.json"), work.join("results.json"));
    std::fs::write(&jobs_file, serde_json::to_vec(&input).unwrap()).unwrap();
    let script = work.join("run_loads.py");
    std::fs::write(&script, RUNNER).unwrap();
    let out = Command::new(test_python())
        .args([&script, &jobs_file, &results_file])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the pandas runner failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let results: Vec<Value> =
        serde_json::from_slice(&std::fs::read(&results_file).unwrap()).unwrap();
    for (j, r) in runnable.iter().zip(&results) {
        let load = j.load.as_deref().unwrap_or_default();
        if let Some(e) = r["error"].as_str() {
            bad.push(format!("{}: `{load}` failed: {e}", j.label));
            continue;
        }
        let got: Vec<&str> = r["columns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_str().unwrap())
            .collect();
        if got != j.columns {
            bad.push(format!(
                "{}: `{load}` columns: expected {:?}, got {got:?}",
                j.label, j.columns
            ));
        }
        // Only a column described as a date may load as one.
        for d in r["dates"].as_array().unwrap() {
            let d = d.as_str().unwrap();
            if !j.dates.iter().any(|c| c == d) {
                bad.push(format!(
                    "{}: `{load}` loads {d:?} as datetimes, described otherwise",
                    j.label
                ));
            }
        }
        for (want, key, what) in [
            (&j.marked, "numeric", "numbers"),
            (&j.spans, "spans", "timedeltas"),
            (&j.forms, "dates", "datetimes"),
        ] {
            let got: Vec<&str> = r[key]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(Value::as_str)
                .collect();
            for c in want.iter().filter(|c| !got.contains(&c.as_str())) {
                bad.push(format!(
                    "{}: `{load}` does not load {c:?} as {what}",
                    j.label
                ));
            }
        }
        let rows = r["rows"].as_u64().unwrap();
        if j.rows.is_some_and(|n| n != rows) {
            bad.push(format!(
                "{}: `{load}` rows: expected {}, got {rows}",
                j.label,
                j.rows.unwrap_or_default()
            ));
        }
    }
    assert!(
        bad.is_empty(),
        "{} of {} tables do not load as described:\n{}",
        bad.len(),
        jobs.len(),
        bad.join("\n")
    );
    results
}

/// Files under `dir`, relative to `root`, sorted.
fn files_under(root: &Path, dir: &Path) -> Vec<String> {
    let mut out: Vec<String> = walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            let rel = e.path().strip_prefix(root).unwrap();
            rel.to_string_lossy().replace('\\', "/")
        })
        .collect();
    out.sort();
    out
}

#[test]
fn every_messy_corpus_table_loads_as_described() {
    let work = tempfile::tempdir().unwrap();
    let lake = work.path().join("lake");
    let expected = messy::write_messy_corpus(&lake).unwrap();
    let rels: Vec<String> = expected.iter().map(|e| e.path.clone()).collect();
    let jobs = jobs(work.path(), &lake.canonicalize().unwrap(), &rels);
    check_loads(work.path(), &jobs);
}

#[test]
fn date_columns_load_as_datetimes() {
    // A stock-price table as published (`Sep 17, 2017`, thousands separators), a
    // datetime column, and a column whose dates are written two ways.
    let work = tempfile::tempdir().unwrap();
    let lake = work.path().join("lake");
    std::fs::create_dir_all(&lake).unwrap();
    let mut csv = String::from("Date,Stamp,Mixed,Volume\n");
    for d in 1..=28 {
        let mixed = if d % 2 == 0 {
            format!("2017-02-{d:02}")
        } else {
            format!("02/{d:02}/2017")
        };
        csv.push_str(&format!(
            "\"Sep {d:02}, 2017\",2017-09-{d:02} 10:{d:02}:00,{mixed},\"{},000\"\n",
            d * 7
        ));
    }
    std::fs::write(lake.join("prices.csv"), csv).unwrap();
    let lake = lake.canonicalize().unwrap();
    let jobs = jobs(work.path(), &lake, &["prices.csv".to_string()]);
    let load = jobs[0].load.clone().unwrap();
    assert!(
        load.contains(r#"parse_dates=["Date", "Stamp""#) && load.contains(r#""Date": "%b %d, %Y""#),
        "{load}"
    );
    let results = check_loads(work.path(), &jobs);
    let dates: Vec<&str> = results[0]["dates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_str().unwrap())
        .collect();
    assert!(
        dates.contains(&"Date") && dates.contains(&"Stamp"),
        "{load}: {dates:?}"
    );
    assert!(!dates.contains(&"Volume"), "{load}: {dates:?}");
}

#[test]
fn time_written_as_numbers_or_codes_loads_as_datetimes() {
    // Months as `YYYYMM` numbers, days as `YYYYMMDD` and `YYYYDDD` numbers, `YYYY-DDD`
    // and `YYYY-MM` text: described as dates, and the load line parses every one.
    let work = tempfile::tempdir().unwrap();
    let lake = work.path().join("lake");
    std::fs::create_dir_all(&lake).unwrap();
    let mut csv = String::from("Period,Day,obs_date,Ordinal,Month,n\n");
    for i in 1..=12u32 {
        csv.push_str(&format!(
            "2019{i:02},201903{i:02},2019{:03},2019-{:03},2019-{i:02},{i}\n",
            i * 30,
            i * 29
        ));
    }
    std::fs::write(lake.join("forms.csv"), csv).unwrap();
    let lake = lake.canonicalize().unwrap();
    let jobs = jobs(work.path(), &lake, &["forms.csv".to_string()]);
    let want = ["Period", "Day", "obs_date", "Ordinal", "Month"];
    assert_eq!(jobs[0].dates, want, "{:?}", jobs[0].load);
    let results = check_loads(work.path(), &jobs);
    let dates: Vec<&str> = results[0]["dates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_str().unwrap())
        .collect();
    assert_eq!(dates, want, "{:?}", jobs[0].load);
}

#[test]
fn quarters_load_as_datetimes() {
    // Quarters written with the year first or last, with and without a separator, one
    // cell empty: described as dates, and the load line's converters read every one.
    let work = tempfile::tempdir().unwrap();
    let lake = work.path().join("lake");
    std::fs::create_dir_all(&lake).unwrap();
    let mut csv = String::from("Period,Quarter,obs,Label,n\n");
    for i in 0..12u32 {
        let (y, q) = (2001 + i / 4, i % 4 + 1);
        let label = if i == 5 {
            String::new()
        } else {
            format!("Q{q}-{y}")
        };
        csv.push_str(&format!("{y}Q{q},{y} Q{q},{y}-q{q},{label},{i}\n"));
    }
    std::fs::write(lake.join("quarters.csv"), csv).unwrap();
    let lake = lake.canonicalize().unwrap();
    let jobs = jobs(work.path(), &lake, &["quarters.csv".to_string()]);
    let want = ["Period", "Quarter", "obs", "Label"];
    assert_eq!(jobs[0].dates, want, "{:?}", jobs[0].load);
    let results = check_loads(work.path(), &jobs);
    let dates: Vec<&str> = results[0]["dates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_str().unwrap())
        .collect();
    assert_eq!(dates, want, "{:?}", jobs[0].load);
}

#[test]
fn date_times_with_a_suffix_load_as_datetimes() {
    // A time scale after an underscore or a space, a `T` with fractions and `Z`, dots
    // with no seconds; one cell empty: every one loads as datetimes, the `1.2.3`
    // versions as text.
    let work = tempfile::tempdir().unwrap();
    let lake = work.path().join("lake");
    std::fs::create_dir_all(&lake).unwrap();
    let mut csv = String::from("T_OBS,T_REC,stamp,local,version\n");
    for d in 1..=12u32 {
        let obs = if d == 4 {
            String::new()
        } else {
            format!("2014.03.{d:02}_20:24:00_TAI")
        };
        csv.push_str(&format!(
            "{obs},2014/03/{d:02} 20:24:{d:02} UTC,2014-03-{d:02}T01:02:03.5Z,2014.03.{d:02} 06:{d:02},1.{d}.0\n"
        ));
    }
    std::fs::write(lake.join("stamps.csv"), csv).unwrap();
    let lake = lake.canonicalize().unwrap();
    let jobs = jobs(work.path(), &lake, &["stamps.csv".to_string()]);
    let want = ["T_OBS", "T_REC", "stamp", "local"];
    assert_eq!(jobs[0].dates, want, "{:?}", jobs[0].load);
    let results = check_loads(work.path(), &jobs);
    let dates: Vec<&str> = results[0]["dates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_str().unwrap())
        .collect();
    assert_eq!(dates, want, "{:?}", jobs[0].load);
}

#[test]
fn footnoted_numbers_in_other_conventions_load_as_numbers() {
    // Marks after numbers grouped with spaces, with dots and a decimal comma, with
    // commas: every one loads as numbers through its converter; distances stay text.
    let work = tempfile::tempdir().unwrap();
    let lake = work.path().join("lake");
    std::fs::create_dir_all(&lake).unwrap();
    let mut csv = String::from("Area;Yield;Count;Depot\n");
    for i in 1..=20u32 {
        let mark = |k: u32, m: &str| {
            if i % k == 0 {
                m.to_string()
            } else {
                String::new()
            }
        };
        csv.push_str(&format!(
            "{} {:03}{};{}.{:03},{}{};{},{:03}{};{} km p\n",
            i,
            i * 7,
            mark(6, " p"),
            i,
            i * 13,
            i % 10,
            mark(7, " r"),
            i,
            i * 3,
            mark(9, "(e)"),
            i
        ));
    }
    std::fs::write(lake.join("marks.csv"), csv).unwrap();
    let lake = lake.canonicalize().unwrap();
    let jobs = jobs(work.path(), &lake, &["marks.csv".to_string()]);
    let results = check_loads(work.path(), &jobs);
    let numeric: Vec<&str> = results[0]["numeric"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_str().unwrap())
        .collect();
    assert_eq!(numeric, ["Area", "Yield", "Count"], "{:?}", jobs[0].load);
}

#[test]
fn durations_stored_as_excel_times_load_as_timedeltas() {
    // A time of day (`hh:mm:ss`), spans as times under a span's name (`h:mm:ss`),
    // elapsed times past a day (`[h]:mm:ss`) and minutes (`[mm]:ss`), one cell empty:
    // the spans load as timedeltas, the time of day as it is.
    use rust_xlsxwriter::{Format, Workbook};
    let work = tempfile::tempdir().unwrap();
    let lake = work.path().join("lake");
    std::fs::create_dir_all(&lake).unwrap();
    let mut wb = Workbook::new();
    let ws = wb.add_worksheet().set_name("Calls").unwrap();
    let formats =
        ["hh:mm:ss", "h:mm:ss", "[h]:mm:ss", "[mm]:ss"].map(|f| Format::new().set_num_format(f));
    for (c, h) in ["Start time", "Wait time", "Handling", "Elapsed", "Agent"]
        .iter()
        .enumerate()
    {
        ws.write_string(0, c as u16, *h).unwrap();
    }
    let day = 86_400.0;
    for i in 0..12u32 {
        let (r, f) = (i + 1, f64::from(i));
        let secs = [
            8.0 * 3600.0 + f * 1800.0,
            30.0 + f * 61.0,
            3600.0 + f * 9000.0,
            15.0 + f * 20.0,
        ];
        for (c, (s, fmt)) in secs.iter().zip(&formats).enumerate() {
            if !(c == 1 && i == 5) {
                ws.write_number_with_format(r, c as u16, s / day, fmt)
                    .unwrap();
            }
        }
        ws.write_string(r, 4, ["Ann", "Bo", "Cy"][i as usize % 3])
            .unwrap();
    }
    wb.save(lake.join("calls.xlsx")).unwrap();
    let lake = lake.canonicalize().unwrap();
    let jobs = jobs(work.path(), &lake, &["calls.xlsx".to_string()]);
    assert_eq!(
        jobs[0].spans,
        ["Wait time", "Handling", "Elapsed"],
        "{:?}",
        jobs[0].load
    );
    let results = check_loads(work.path(), &jobs);
    let spans: Vec<&str> = results[0]["spans"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_str().unwrap())
        .collect();
    assert_eq!(
        spans,
        ["Wait time", "Handling", "Elapsed"],
        "{:?}",
        jobs[0].load
    );
}

#[test]
fn renamed_sheet_columns_and_time_forms_load_as_described() {
    // A sheet whose header repeats a name (pandas is given the names after reading),
    // its table right of column A under a title: months as `YYYYMM` numbers, values
    // missing as `M` and `--`, and six-digit order numbers (a key, not months). A
    // second sheet of dated rows a year later. The workbook covers both sheets' spans.
    use rust_xlsxwriter::{ExcelDateTime, Format, Workbook};
    let work = tempfile::tempdir().unwrap();
    let lake = work.path().join("lake");
    std::fs::create_dir_all(&lake).unwrap();
    let mut wb = Workbook::new();
    let ws = wb.add_worksheet().set_name("Monthly").unwrap();
    ws.write_string(0, 1, "Monthly readings by site").unwrap();
    for (c, h) in ["Period", "Value", "Value", "Order no"].iter().enumerate() {
        ws.write_string(2, 1 + c as u16, *h).unwrap();
    }
    for i in 0..12u32 {
        let r = 3 + i;
        ws.write_number(r, 1, f64::from(202_001 + i)).unwrap();
        if i % 5 == 2 {
            ws.write_string(r, 2, "M").unwrap();
        } else {
            ws.write_number(r, 2, f64::from(i) * 1.5 + 0.25).unwrap();
        }
        if i % 4 == 1 {
            ws.write_string(r, 3, "--").unwrap();
        } else {
            ws.write_number(r, 3, f64::from(i * 3)).unwrap();
        }
        ws.write_number(r, 4, f64::from(199_001 + i)).unwrap();
    }
    let ws = wb.add_worksheet().set_name("Daily").unwrap();
    let day = Format::new().set_num_format("yyyy-mm-dd");
    ws.write_string(0, 0, "Date").unwrap();
    ws.write_string(0, 1, "n").unwrap();
    for d in 1..=20u8 {
        let when = ExcelDateTime::from_ymd(2021, 3, d).unwrap();
        ws.write_datetime_with_format(u32::from(d), 0, &when, &day)
            .unwrap();
        ws.write_number(u32::from(d), 1, f64::from(d)).unwrap();
    }
    wb.save(lake.join("readings.xlsx")).unwrap();
    let lake = lake.canonicalize().unwrap();
    let jobs = jobs(work.path(), &lake, &["readings.xlsx".to_string()]);
    let load = jobs[0].load.clone().unwrap();
    assert_eq!(jobs[0].forms, ["Period"], "{load}");
    assert!(
        load.contains(".set_axis(")
            && load.contains(r#"na_values={2: ["M"], 3: ["--"]}"#)
            && load.contains(r#"converters={1: lambda v: pd.to_datetime(str(v), format="%Y%m")}"#),
        "{load}"
    );
    let results = check_loads(work.path(), &jobs);
    let got = |key: &str| -> Vec<String> {
        results[0][key]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(got("dates"), ["Period"], "{load}");
    assert_eq!(got("numeric"), ["Value", "Value", "Order no"], "{load}");
    // `jobs` indexed the lake into `work/idx`.
    let idx = work.path().join("idx");
    let out = run_ok(
        &lake,
        &[
            "describe",
            "readings.xlsx",
            "--index",
            idx.to_str().unwrap(),
            "--json",
        ],
    );
    let v: Value = serde_json::from_str(&out).unwrap();
    let cov = &v["description"]["time_coverage"];
    assert_eq!(
        (&cov["start"], &cov["end"], &cov["source"]),
        (
            &json!("2020-01-01"),
            &json!("2021-03-20"),
            &json!(r#"columns "Period" (Monthly), "Date" (Daily)"#)
        ),
        "{cov}"
    );
}

#[test]
fn every_fixture_table_loads_as_described() {
    let work = tempfile::tempdir().unwrap();
    let lake = work.path().join("lake");
    crate::fixtures::write_all(&lake);
    let lake = lake.canonicalize().unwrap();
    let rels = files_under(&lake, &lake);
    check_loads(work.path(), &jobs(work.path(), &lake, &rels));
}

#[test]
fn every_shared_lake_table_loads_as_described() {
    let work = tempfile::tempdir().unwrap();
    let lakes = shared_lakes().canonicalize().unwrap();
    let mut rels = files_under(&lakes, &lakes.join("dabench/da-dev-tables"));
    rels.extend(files_under(&lakes, &lakes.join("dabstep/context")));
    for task in std::fs::read_dir(lakes.join("dacode/tasks")).unwrap() {
        let source = task.unwrap().path().join("source");
        if source.is_dir() {
            rels.extend(files_under(&lakes, &source));
        }
    }
    check_loads(work.path(), &jobs(work.path(), &lakes, &rels));
}

#[test]
fn every_messytables_dev_page_and_workbook_table_loads_as_described() {
    // Real workbooks and pages nobody here wrote: renamed columns with markers, sheets
    // with several tables. Only the dev split is described; the readers of `.ods` and
    // `.xls` need engines the test venv lacks.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let split: Value = serde_json::from_slice(
        &std::fs::read(root.join("tests/data/messytables/split.json")).unwrap(),
    )
    .unwrap();
    let work = tempfile::tempdir().unwrap();
    let lake = work.path().join("lake");
    std::fs::create_dir_all(&lake).unwrap();
    let horror = shared_lakes().join("messytables/horror");
    let mut rels = Vec::new();
    for f in split["dev"].as_array().unwrap() {
        let f = f.as_str().unwrap();
        if ![".html", ".xlsx", ".xlsm"].iter().any(|e| f.ends_with(e)) {
            continue;
        }
        std::fs::copy(horror.join(f), lake.join(f)).unwrap();
        rels.push(f.to_string());
    }
    let lake = lake.canonicalize().unwrap();
    let mut jobs = jobs(work.path(), &lake, &rels);
    // Tables whose reading pandas cannot be told to match carry no load line.
    jobs.retain(|j| j.load.is_some());
    check_loads(work.path(), &jobs);
}
