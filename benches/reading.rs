//! Reading truth: how many facts a reader gets right — header names, row count, column
//! types (numeric / date / text), delimiter, time coverage — for lakestar, DuckDB
//! (`read_csv_auto`, its delimiter from `sniff_csv`) and pandas (`read_csv` with
//! defaults), side by side.
//!
//! Two sets. The messy corpus (`synth::messy`): the truth is the facts its generator
//! states (`Expected`; the Parquet file is left out, no CSV reader is meant for it).
//! The shared lakes' CSV files: the truth is a careful reading with pandas — the
//! delimiter that splits the header into more than one column; a column numeric when
//! every value is a number (thousands separators and null markers such as `-` allowed),
//! a date when every distinct value (up to 2,000) holds a year or a d/m/y triple and
//! parses as one; columns without any value are not typed.
//!
//! Run: `cargo bench --bench reading` (`-- --verbose` lists every wrong fact). Installs pandas, DuckDB and pyarrow into
//! `target/bench-venv` with pip on first use.

#[path = "common/venv.rs"]
mod venv;

use lakestar::index::indexer::NoProgress;
use lakestar::index::synth::messy::{self, tables_of, Class, Expected};
use lakestar::index::{index, CatalogReader, IndexOptions};
use lakestar::service::describe::described;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Reads every job with DuckDB and pandas (and the reference reading when asked); one
/// JSON object per job: {"duckdb": reading, "pandas": reading, "reference": reading}.
const READERS: &str = r#"
import json, re, sys, warnings
import duckdb, pandas as pd
warnings.simplefilter("ignore")

def pandas_class(s):
    if pd.api.types.is_bool_dtype(s):
        return "text"
    if pd.api.types.is_numeric_dtype(s):
        return "numeric"
    if pd.api.types.is_datetime64_any_dtype(s):
        return "date"
    return "text"

def duckdb_class(t):
    t = str(t).upper()
    if t.startswith(("DATE", "TIMESTAMP")):
        return "date"
    if re.match(r"U?(TINY|SMALL|BIG|HUGE)?INT(EGER)?\b|FLOAT|DOUBLE|DECIMAL", t):
        return "numeric"
    return "text"

YEAR = re.compile(r"^(year|yr)$|_year$|^year", re.I)

def coverage(df, classes):
    """What a person derives from a reading: a date column's range, else a year column's."""
    for i, k in enumerate(classes):
        if k == "date":
            s = pd.to_datetime(df.iloc[:, i], errors="coerce").dropna()
            if len(s):
                return [s.min().strftime("%Y-%m-%d"), s.max().strftime("%Y-%m-%d")]
    for i, k in enumerate(classes):
        if k == "numeric" and YEAR.search(str(df.columns[i])):
            s = pd.to_numeric(df.iloc[:, i], errors="coerce").dropna()
            if len(s) and 1800 <= s.min() and s.max() <= 2100 and (s == s.round()).all():
                return [f"{int(s.min())}-01-01", f"{int(s.max())}-12-31"]
    return None

def reading(df, classes, delimiter):
    return {"tables": [{"columns": [str(c) for c in df.columns], "rows": len(df),
                        "classes": classes}],
            "delimiter": delimiter, "coverage": coverage(df, classes)}

def with_pandas(path):
    df = pd.read_csv(path)
    return reading(df, [pandas_class(df.iloc[:, i]) for i in range(df.shape[1])], ",")

def with_duckdb(path):
    con = duckdb.connect()
    lit = "'" + path.replace("'", "''") + "'"
    rel = con.sql(f"SELECT * FROM read_csv_auto({lit})")
    classes = [duckdb_class(t) for t in rel.types]
    df = rel.df()
    try:
        delimiter = con.sql(f"SELECT Delimiter FROM sniff_csv({lit})").fetchall()[0][0]
    except Exception:
        delimiter = None
    return reading(df, classes, delimiter)

NULLS = {"", "-", "--", "\u2013", ".", "NA", "N/A", "n/a", "null", "NULL", "None", "nan"}
NUMBER = re.compile(r"^[-+]?(\d+|\d{1,3}(,\d{3})+)(\.\d+)?([eE][-+]?\d+)?$")
DATED = re.compile(r"\d{4}|\d{1,2}[-/.]\d{1,2}[-/.]\d{2}")

def reference_class(s):
    """numeric, date or text as a careful reader states it; None when no value says."""
    if pd.api.types.is_bool_dtype(s):
        return "text"
    v = [x for x in s.dropna().astype(str).str.strip().unique() if x not in NULLS]
    if not v:
        return None
    if pd.api.types.is_numeric_dtype(s) or all(NUMBER.match(x) for x in v):
        return "numeric"
    v = v[:2000]
    if all(DATED.search(x) for x in v) and bool(
            pd.to_datetime(pd.Series(v), format="mixed", errors="coerce").notna().all()):
        return "date"
    return "text"

def reference(path):
    """pandas with the delimiter that splits the header (thousands separators, null
    markers, dates with a year understood); columns without a value are not typed."""
    first = "\t" if path.endswith(".tsv") else ","
    for sep in [first, ",", "\t", ";", "|"]:
        df = pd.read_csv(path, sep=sep, low_memory=False)
        if df.shape[1] > 1:
            break
    else:
        sep, df = None, pd.read_csv(path, low_memory=False)
    classes = [reference_class(df.iloc[:, i]) for i in range(df.shape[1])]
    r = reading(df, classes, sep)
    r["coverage"] = None
    return r

def safely(f, path):
    try:
        return f(path)
    except Exception as e:
        return {"error": f"{type(e).__name__}: {e}"}

out = []
for job in json.load(open(sys.argv[1])):
    r = {"duckdb": safely(with_duckdb, job["path"]), "pandas": safely(with_pandas, job["path"])}
    if job["reference"]:
        r["reference"] = safely(reference, job["path"])
    out.append(r)
json.dump(out, open(sys.argv[2], "w"))
"#;

/// What a reader states about a file.
#[derive(Debug, Default)]
struct Reading {
    /// Per table: column names, rows, column classes.
    tables: Vec<(Vec<String>, u64, Vec<String>)>,
    delimiter: Option<String>,
    coverage: Option<(String, String)>,
}

impl Reading {
    fn from_json(v: &Value) -> Reading {
        let s = |v: &Value| v.as_str().unwrap_or_default().to_string();
        let list = |v: &Value| {
            v.as_array()
                .map_or(Vec::new(), |a| a.iter().map(s).collect())
        };
        Reading {
            tables: v["tables"].as_array().map_or(Vec::new(), |ts| {
                ts.iter()
                    .map(|t| {
                        let rows = t["rows"].as_u64().unwrap_or(0);
                        (list(&t["columns"]), rows, list(&t["classes"]))
                    })
                    .collect()
            }),
            delimiter: v["delimiter"].as_str().map(String::from),
            coverage: v["coverage"].as_array().map(|c| (s(&c[0]), s(&c[1]))),
        }
    }

    /// The facts of the messy corpus's `e`, in the same form.
    fn truth(e: &Expected) -> Reading {
        Reading {
            tables: e
                .tables
                .iter()
                .map(|t| {
                    let names = t.columns.iter().map(|c| c.name.clone()).collect();
                    let classes = t.columns.iter().map(|c| c.kind.class().as_str().into());
                    (names, t.rows, classes.collect())
                })
                .collect(),
            delimiter: e.delimiter.map(String::from),
            coverage: e.time_coverage.clone(),
        }
    }
}

/// lakestar's reading of `rel`, as `describe` shows it from the index.
fn lakestar_reading(cat: &CatalogReader, lake: &Path, rel: &str) -> Reading {
    let Some(row) = cat.file(rel).expect("catalog readable") else {
        return Reading::default();
    };
    let d = described(cat, lake, &row, 2048, false).expect("described");
    let Some(desc) = &d.description else {
        return Reading::default();
    };
    let tables = tables_of(desc);
    Reading {
        tables: tables
            .iter()
            .map(|t| {
                let names = t.columns.iter().map(|c| c.name.clone()).collect();
                let classes = t.columns.iter().map(|c| Class::of(c.kind).as_str().into());
                (names, t.rows, classes.collect())
            })
            .collect(),
        delimiter: match tables.as_slice() {
            [t] => t.delimiter.map(String::from),
            _ => None,
        },
        coverage: d.time_coverage.map(|c| (c.start, c.end)),
    }
}

/// Facts right and facts stated, per kind of fact.
type Score = BTreeMap<&'static str, (u64, u64)>;

/// Whether `got` names the columns as `truth` does, blanks around names aside; a column
/// the header leaves unnamed (pandas' `Unnamed: N`) may be named anything.
fn same_names(truth: &[String], got: &[String]) -> bool {
    truth.len() == got.len()
        && truth
            .iter()
            .zip(got)
            .all(|(t, g)| t.trim() == g.trim() || t.starts_with("Unnamed: "))
}

/// Count the facts of `truth` that `got` states right; the wrong ones, described.
fn score(truth: &Reading, got: &Reading, into: &mut Score) -> Vec<String> {
    let mut wrong = Vec::new();
    let mut count = |kind: &'static str, right: bool, what: String| {
        let e = into.entry(kind).or_default();
        e.0 += u64::from(right);
        e.1 += 1;
        if !right {
            wrong.push(what);
        }
    };
    for (i, (names, rows, classes)) in truth.tables.iter().enumerate() {
        let t = got.tables.get(i);
        count(
            "header names",
            t.is_some_and(|t| same_names(names, &t.0)),
            format!(
                "table {}: names {:?}, not {names:?}",
                i + 1,
                t.map(|t| &t.0)
            ),
        );
        count(
            "row count",
            t.is_some_and(|t| t.1 == *rows),
            format!("table {}: rows {:?}, not {rows}", i + 1, t.map(|t| t.1)),
        );
        for (j, class) in classes.iter().enumerate() {
            if class.is_empty() {
                continue; // no value to type it by
            }
            let g = t.and_then(|t| t.2.get(j));
            count(
                "column types",
                g == Some(class),
                format!("table {}: {:?} is {g:?}, not {class}", i + 1, names[j]),
            );
        }
    }
    if let Some(d) = &truth.delimiter {
        count(
            "delimiter",
            got.delimiter.as_ref() == Some(d),
            format!("delimiter {:?}, not {d:?}", got.delimiter),
        );
    }
    if let Some(c) = &truth.coverage {
        count(
            "time coverage",
            got.coverage.as_ref() == Some(c),
            format!("time coverage {:?}, not {c:?}", got.coverage),
        );
    }
    wrong
}

const TOOLS: [&str; 3] = ["lakestar", "DuckDB read_csv_auto", "pandas read_csv"];

/// One scored file: its group (layout or set), the truth and each tool's reading.
struct Case {
    group: String,
    path: String,
    truth: Reading,
    readings: [Reading; 3],
}

fn add(into: &mut Score, from: &Score) {
    for (k, (r, n)) in from {
        let e = into.entry(k).or_default();
        e.0 += r;
        e.1 += n;
    }
}

fn cell((right, total): (u64, u64)) -> String {
    format!(
        "{right} / {total} ({:.0}%)",
        100.0 * right as f64 / total.max(1) as f64
    )
}

fn total(s: &Score) -> (u64, u64) {
    s.values().fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
}

/// Print the scores; with `verbose`, every wrong fact first.
fn print_tables(cases: &[Case], verbose: bool) {
    // Per group, then per kind of fact over everything.
    let mut groups: Vec<(String, [Score; 3])> = Vec::new();
    let mut kinds: [Score; 3] = Default::default();
    for c in cases {
        let at = match groups.iter().position(|g| g.0 == c.group) {
            Some(i) => i,
            None => {
                groups.push((c.group.clone(), Default::default()));
                groups.len() - 1
            }
        };
        for (t, r) in c.readings.iter().enumerate() {
            let mut s = Score::new();
            let wrong = score(&c.truth, r, &mut s);
            if verbose && !wrong.is_empty() {
                println!("{} — {}:\n  {}", c.path, TOOLS[t], wrong.join("\n  "));
            }
            add(&mut groups[at].1[t], &s);
            add(&mut kinds[t], &s);
        }
    }
    println!("\n| files | {} |", TOOLS.join(" | "));
    println!("|---|---:|---:|---:|");
    for (g, s) in &groups {
        println!(
            "| {g} | {} | {} | {} |",
            cell(total(&s[0])),
            cell(total(&s[1])),
            cell(total(&s[2]))
        );
    }
    println!(
        "| **all** | **{}** | **{}** | **{}** |",
        cell(total(&kinds[0])),
        cell(total(&kinds[1])),
        cell(total(&kinds[2]))
    );
    println!("\n| fact | {} |", TOOLS.join(" | "));
    println!("|---|---:|---:|---:|");
    for k in kinds[0].keys() {
        let get = |s: &Score| s.get(k).copied().unwrap_or_default();
        println!(
            "| {k} | {} | {} | {} |",
            cell(get(&kinds[0])),
            cell(get(&kinds[1])),
            cell(get(&kinds[2]))
        );
    }
}

/// Run the DuckDB/pandas readers on `paths` (`reference`: add the reference reading).
fn python_readings(py: &Path, work: &Path, paths: &[(PathBuf, bool)]) -> Vec<Value> {
    let jobs: Vec<Value> = paths
        .iter()
        .map(|(p, r)| json!({"path": p, "reference": r}))
        .collect();
    let (input, output, script) = (
        work.join("jobs.json"),
        work.join("readings.json"),
        work.join("readers.py"),
    );
    std::fs::write(&input, serde_json::to_vec(&jobs).unwrap()).unwrap();
    std::fs::write(&script, READERS).unwrap();
    let out = Command::new(py)
        .arg(&script)
        .arg(&input)
        .arg(&output)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "readers failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&std::fs::read(&output).unwrap()).unwrap()
}

fn indexed(lake: &Path, idx: &Path) -> CatalogReader {
    let _ = std::fs::remove_dir_all(idx);
    let r = index(lake, idx, &IndexOptions::default(), &NoProgress).expect("index");
    assert_eq!(r.errors, 0, "{}", lake.display());
    CatalogReader::open(idx).expect("catalog")
}

/// The shared lakes' CSV and TSV files: DABench tables, DABStep context, DA-Code sources.
fn shared_tables(lakes: &Path) -> Vec<String> {
    let mut out: Vec<String> = walkdir::WalkDir::new(lakes)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .filter_map(|e| {
            let rel = e
                .path()
                .strip_prefix(lakes)
                .ok()?
                .to_string_lossy()
                .into_owned();
            let wanted = rel.starts_with("dabench/da-dev-tables/")
                || rel.starts_with("dabstep/context/")
                || rel.starts_with("dacode/tasks/") && rel.contains("/source/");
            (wanted && (rel.ends_with(".csv") || rel.ends_with(".tsv"))).then_some(rel)
        })
        .collect();
    out.sort();
    out
}

fn main() {
    let target = Path::new(env!("CARGO_MANIFEST_DIR")).join("target");
    let Some(py) = venv::bench_python(&target, &["pandas", "duckdb", "pyarrow"]) else {
        eprintln!("pandas, DuckDB and pyarrow could not be installed: no comparison to make");
        return;
    };
    let work = target.join("bench-reading");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).unwrap();

    // The messy corpus: truth from the generator.
    let lake = work.join("messy");
    let expected: Vec<Expected> = messy::write_messy_corpus(&lake)
        .expect("corpus written")
        .into_iter()
        .filter(|e| e.format != Some("parquet"))
        .filter(|e| !e.tables.is_empty() || e.time_coverage.is_some())
        .collect();
    let lake = lake.canonicalize().unwrap();
    let cat = indexed(&lake, &work.join("messy-idx"));
    let paths: Vec<(PathBuf, bool)> = expected
        .iter()
        .map(|e| (lake.join(&e.path), false))
        .collect();
    let theirs = python_readings(&py, &work, &paths);
    let mut cases: Vec<Case> = expected
        .iter()
        .zip(&theirs)
        .map(|(e, v)| Case {
            group: format!("messy: {}", e.layout),
            path: e.path.clone(),
            truth: Reading::truth(e),
            readings: [
                lakestar_reading(&cat, &lake, &e.path),
                Reading::from_json(&v["duckdb"]),
                Reading::from_json(&v["pandas"]),
            ],
        })
        .collect();

    // The shared lakes: truth from the reference reading.
    let lakes = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/lakes")
        .canonicalize()
        .expect("../shared/lakes beside the repository");
    let rels = shared_tables(&lakes);
    let cat = indexed(&lakes, &work.join("shared-idx"));
    let paths: Vec<(PathBuf, bool)> = rels.iter().map(|r| (lakes.join(r), true)).collect();
    let theirs = python_readings(&py, &work, &paths);
    for (rel, v) in rels.iter().zip(&theirs) {
        if v["reference"].get("error").is_some() {
            eprintln!("{rel}: no reference reading ({})", v["reference"]["error"]);
            continue;
        }
        cases.push(Case {
            group: format!("shared lakes: {}", rel.split('/').next().unwrap_or("")),
            path: rel.clone(),
            truth: Reading::from_json(&v["reference"]),
            readings: [
                lakestar_reading(&cat, &lakes, rel),
                Reading::from_json(&v["duckdb"]),
                Reading::from_json(&v["pandas"]),
            ],
        });
    }
    println!(
        "\nReading truth: facts right / facts stated ({} messy corpus files, {} shared-lake tables)",
        expected.len(),
        rels.len()
    );
    print_tables(&cases, std::env::args().any(|a| a == "--verbose"));
}
