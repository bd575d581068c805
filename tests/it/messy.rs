//! The messy corpus (`lakestar_index::synth::messy`: report-style CSVs, grouped headers,
//! two tables in a file, tabs in a `.csv`, European numbers, numbers and dates as people
//! write them, widening fixed-width fields, documentation beside headerless data, dates
//! in text, a Parquet file past the distinct cap, a CSV past the read budget) is indexed
//! with the binary and every fact a person would state is checked against
//! `lakestar describe --json`. One test per layout family; each lists every mismatch of
//! every file of its family.

use crate::common::*;
use lakestar::index::analyze::{ColumnProfile, Content, Description};
use lakestar::index::synth::messy::{self, tables_of, Expected, TableFacts, TableView};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// An estimated distinct count may be off by this fraction (HyperLogLog is within ~2%).
const DISTINCT_TOLERANCE: f64 = 0.05;
/// An estimated row count may be off by this fraction.
const ROWS_TOLERANCE: f64 = 0.10;

struct Corpus {
    lake: PathBuf,
    /// Indexed with `--read-budget SMALL_BUDGET`: the large CSV is sampled.
    sampled: PathBuf,
    /// Indexed with `--full`.
    full: PathBuf,
    expected: Vec<Expected>,
}

/// The corpus, written and indexed twice once per test binary.
fn corpus() -> &'static Corpus {
    static CORPUS: OnceLock<Corpus> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("messy-facts");
        let _ = std::fs::remove_dir_all(&root);
        let lake = root.join("lake");
        let expected = messy::write_messy_corpus(&lake).unwrap();
        let lake = lake.canonicalize().unwrap();
        let (sampled, full) = (root.join("idx-sampled"), root.join("idx-full"));
        let budget = messy::SMALL_BUDGET.to_string();
        for (idx, extra) in [
            (&sampled, vec!["--read-budget", budget.as_str()]),
            (&full, vec!["--full"]),
        ] {
            let mut args = vec!["index", lake.to_str().unwrap(), "--index"];
            args.push(idx.to_str().unwrap());
            args.extend(extra);
            run_ok(&root, &args);
        }
        Corpus {
            lake,
            sampled,
            full,
            expected,
        }
    })
}

fn describe(c: &Corpus, idx: &Path, rel: &str) -> Value {
    let out = run_ok(
        &c.lake,
        &["describe", rel, "--index", idx.to_str().unwrap(), "--json"],
    );
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{rel}: bad JSON ({e}): {out}"))
}

/// Collects the mismatches of one file.
struct Diff(Vec<String>);

impl Diff {
    fn eq<T: PartialEq + std::fmt::Debug>(&mut self, what: &str, want: T, got: T) {
        if want != got {
            self.0
                .push(format!("{what}: expected {want:?}, got {got:?}"));
        }
    }
    fn fail(&mut self, msg: String) {
        self.0.push(msg);
    }
}

fn number(s: &str) -> Option<f64> {
    s.trim().parse().ok()
}

/// Values equal as numbers (`18` and `18.0`, `3100000000` and `3.1e9`), or as text.
fn same_value(want: &str, got: Option<&str>) -> bool {
    let Some(got) = got else { return false };
    match (number(want), number(got)) {
        (Some(a), Some(b)) => (a - b).abs() <= 1e-9 * a.abs().max(1.0),
        _ => want == got,
    }
}

fn check_column(d: &mut Diff, at: &str, want: &messy::Column, got: &ColumnProfile, exact: bool) {
    if !want.kind.accepts(got.kind) {
        d.fail(format!(
            "{at} type: expected {:?}, got {}",
            want.kind,
            got.kind.as_str()
        ));
    }
    if exact {
        for (what, w, g) in [("min", &want.min, &got.min), ("max", &want.max, &got.max)] {
            if let Some(w) = w {
                if !same_value(w, g.as_deref()) {
                    d.fail(format!("{at} {what}: expected {w}, got {g:?}"));
                }
            }
        }
        if let Some(n) = want.nulls {
            d.eq(&format!("{at} nulls"), n, got.nulls);
        }
        let markers: Vec<(String, u64)> = got
            .missing
            .iter()
            .map(|m| (m.marker.clone(), m.count))
            .collect();
        d.eq(&format!("{at} missing"), &want.missing, &markers);
    }
    let mut notation = got.notation.clone();
    notation.sort();
    let mut wanted = want.notation.clone();
    wanted.sort();
    d.eq(&format!("{at} notation"), wanted, notation);
    if let Some(f) = &want.date_format {
        d.eq(
            &format!("{at} date_format"),
            Some(f),
            got.date_format.as_ref(),
        );
    }
    if let Some(u) = &want.unit {
        d.eq(&format!("{at} unit"), Some(u), got.unit.as_ref());
    }
    if let Some(n) = want.distinct {
        let off = (got.distinct as f64 - n as f64).abs() / n as f64;
        if got.distinct_exact && got.distinct != n
            || !got.distinct_exact && off > DISTINCT_TOLERANCE
        {
            d.fail(format!(
                "{at} distinct: expected {n}, got {} (distinct_exact {})",
                got.distinct, got.distinct_exact
            ));
        }
    }
    d.eq(&format!("{at} estimated"), !exact, got.estimated);
}

fn check_table(d: &mut Diff, at: &str, want: &TableFacts, got: &TableView, exact: bool) {
    if let Some(n) = &want.name {
        d.eq(&format!("{at} name"), Some(n.as_str()), got.name);
    }
    let names: Vec<&str> = got.columns.iter().map(|c| c.name.as_str()).collect();
    let wanted: Vec<&str> = want.columns.iter().map(|c| c.name.as_str()).collect();
    d.eq(&format!("{at} columns"), &wanted, &names);
    if exact {
        d.eq(
            &format!("{at} rows"),
            (want.rows, true),
            (got.rows, got.rows_exact),
        );
    } else {
        let off = (got.rows as f64 - want.rows as f64).abs() / want.rows as f64;
        if got.rows_exact || off > ROWS_TOLERANCE {
            d.fail(format!(
                "{at} rows: expected about {} (rows_exact false), got {} (rows_exact {})",
                want.rows, got.rows, got.rows_exact
            ));
        }
    }
    for w in &want.columns {
        if let Some(g) = got.columns.iter().find(|c| c.name == w.name) {
            check_column(d, &format!("{at} column {:?}", w.name), w, g, exact);
        }
    }
}

/// Every mismatch between the facts of `e` and its description `v`.
fn mismatches(e: &Expected, v: &Value, full: bool) -> Vec<String> {
    let mut d = Diff(Vec::new());
    let exact = full || !e.larger_than_budget;
    d.eq("state", "ok", v["state"].as_str().unwrap_or("?"));
    if let Some(f) = e.format {
        d.eq("format", Some(f), v["format"].as_str());
    }
    if let Some(c) = &e.companion {
        if !v.to_string().contains(c.as_str()) {
            d.fail(format!("companion {c:?} is not named in the description"));
        }
    }
    if let (Some((start, end)), true) = (&e.time_coverage, exact) {
        let got = &v["time_coverage"];
        d.eq(
            "time coverage",
            (Some(start.as_str()), Some(end.as_str())),
            (got["start"].as_str(), got["end"].as_str()),
        );
    }
    if e.uncovered && !v["time_coverage"].is_null() {
        d.fail(format!(
            "time coverage: expected none, got {}",
            v["time_coverage"]
        ));
    }
    let desc: Description = match serde_json::from_value(v["description"].clone()) {
        Ok(desc) => desc,
        Err(err) => {
            d.fail(format!("no description ({err})"));
            return d.0;
        }
    };
    if let Some(md) = e.markdown {
        match &desc.content {
            Content::Text(t) => d.eq("markdown", md, t.markdown),
            _ => d.fail("content: expected text".into()),
        }
    }
    let tables = tables_of(&desc);
    if e.format.is_some() || !e.tables.is_empty() {
        d.eq("tables", e.tables.len(), tables.len());
    }
    if let (Some(delim), [t]) = (e.delimiter, tables.as_slice()) {
        d.eq("delimiter", Some(delim), t.delimiter);
    }
    for (i, (want, got)) in e.tables.iter().zip(&tables).enumerate() {
        check_table(&mut d, &format!("table {}", i + 1), want, got, exact);
    }
    d.0
}

/// Check every file of `layout` (all files when None) against the index `full` or not.
fn check_family(layout: Option<&str>, full: bool) {
    let c = corpus();
    let idx = if full { &c.full } else { &c.sampled };
    let mut report = Vec::new();
    let files: Vec<&Expected> = c
        .expected
        .iter()
        .filter(|e| layout.is_none_or(|l| e.layout == l))
        .collect();
    assert!(!files.is_empty(), "no file of layout {layout:?}");
    for e in files {
        let v = describe(c, idx, &e.path);
        let bad = mismatches(e, &v, full);
        if !bad.is_empty() {
            report.push(format!(
                "{}:\n    {}\n  as described:\n{}",
                e.path,
                bad.join("\n    "),
                v["text"].as_str().unwrap_or("").trim_end()
            ));
        }
    }
    assert!(
        report.is_empty(),
        "{} file(s) read wrong:\n\n{}",
        report.len(),
        report.join("\n\n")
    );
}

#[test]
fn report_csvs_title_blank_line_grouped_header_footer_two_tables() {
    check_family(Some("report"), false);
}

#[test]
fn regions_key_values_summaries_stacked_tables_headerless_lists_header_depth() {
    check_family(Some("regions"), false);
}

#[test]
fn dialect_by_consistency_tabs_in_csv_and_european_numbers() {
    check_family(Some("dialect"), false);
}

#[test]
fn numbers_and_dates_as_people_write_them() {
    check_family(Some("notation"), false);
}

#[test]
fn fixed_width_fields_that_widen_stay_whole() {
    check_family(Some("fixed-width"), false);
}

#[test]
fn headerless_data_takes_its_names_from_the_documentation_beside_it() {
    check_family(Some("companion"), false);
}

#[test]
fn time_coverage_from_data_before_path_and_from_text() {
    check_family(Some("time"), false);
}

#[test]
fn time_in_other_forms_than_dates_is_time_and_look_alikes_are_not() {
    check_family(Some("time-forms"), false);
}

/// With the time-forms rule off, the same files read as their cells are written: the
/// `YYYYMM` periods are integers and give no coverage.
#[test]
fn the_time_forms_rule_switched_off_reads_the_cells_as_written() {
    let c = corpus();
    let rel = "timeforms/retail_sales_by_month.csv";
    // No index: the file is described on the fly, under the rules of this process.
    let mut cmd = lakestar();
    cmd.current_dir(&c.lake)
        .env("LAKESTAR_READING_RULES", "-time-forms")
        .args(["describe", rel, "--json"]);
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let d: Description = serde_json::from_value(v["description"].clone()).unwrap();
    let tables = tables_of(&d);
    let period = &tables[0].columns[0];
    assert_eq!(
        (
            period.name.as_str(),
            period.kind.as_str(),
            period.time_span.is_none()
        ),
        ("Period", "integer", true),
        "{v}"
    );
    assert!(v["time_coverage"].is_null(), "{v}");
    assert!(d.rules.is_empty(), "{:?}", d.rules);
}

/// With the region rules off, a summary row and a key/value block below a table are rows
/// of the table, as the cells are written; on, they are notes, counted by rule.
#[test]
fn region_rules_switched_off_read_the_rows_as_written() {
    let c = corpus();
    let rules = |v: &Value, r: &str| v["description"]["rules"][r].as_u64();
    let rows = |v: &Value| v["description"]["content"]["rows"].as_u64();
    for (rel, rule, extra) in [
        ("regions/permits_with_totals.csv", "summary-rows", 2),
        ("regions/rainfall_key_values.csv", "key-value-blocks", 0),
    ] {
        let on = describe(c, &c.full, rel);
        let off: Value = serde_json::from_str(&run_ok_env(
            &c.lake,
            &["describe", rel, "--json"],
            &[("LAKESTAR_READING_RULES", "-summary-rows,-key-value-blocks")],
        ))
        .unwrap();
        assert!(rules(&on, rule) > Some(0), "{rel}: {on}");
        assert_eq!(rules(&off, rule), None, "{rel}: {off}");
        assert!(rows(&off) > rows(&on), "{rel}: {on}\n{off}");
        if extra > 0 {
            assert_eq!(rows(&off), rows(&on).map(|n| n + extra), "{rel}");
        }
    }
}

#[test]
fn comment_lines_are_text_not_markdown() {
    check_family(Some("text"), false);
}

#[test]
fn figures_from_a_sample_are_marked_and_parquet_distincts_are_honest() {
    check_family(Some("honest"), false);
}

#[test]
fn missing_markers_measures_and_durations_by_what_the_values_mean() {
    check_family(Some("values"), false);
}

#[test]
fn value_rules_switched_off_read_the_cells_as_written() {
    // The same files described with and without the value rules: each decision is the
    // rule's, counted when on, absent when off.
    let c = corpus();
    let rels = ["stations/daily_observations.csv", "service/desk_waits.csv"];
    let col = |v: &Value, name: &str| {
        v["description"]["content"]["columns"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("no column {name}: {v}"))
    };
    let on: Vec<Value> = rels.iter().map(|r| describe(c, &c.full, r)).collect();
    let off: Vec<Value> = rels
        .iter()
        .map(|r| {
            let out = run_ok_env(
                &c.lake,
                &["describe", r, "--json"],
                &[(
                    "LAKESTAR_READING_RULES",
                    "-missing-markers,-durations,-measures",
                )],
            );
            serde_json::from_str(&out).unwrap()
        })
        .collect();
    assert_eq!(col(&on[0], "Temp (F)")["type"], "float");
    assert_eq!(col(&off[0], "Temp (F)")["type"], "text");
    assert!(col(&off[0], "Temp (F)").get("missing").is_none());
    assert!(on[0]["description"]["rules"]["missing-markers"].as_u64() > Some(0));
    assert!(off[0]["description"]["rules"]
        .get("missing-markers")
        .is_none());
    assert_eq!(col(&on[1], "wait")["type"], "duration");
    assert_ne!(col(&off[1], "wait")["type"], "duration");
    assert_eq!(on[1]["description"]["rules"]["durations"], 3);
}

#[test]
fn full_reading_gives_every_figure_exactly() {
    check_family(None, true);
}
