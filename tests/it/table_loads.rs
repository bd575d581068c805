//! The load lines of workbooks, Parquet files and SQLite databases on their awkward
//! shapes — a title row above the header, a header that is not in the first row or
//! column, generated and repeated names, blank rows inside a table, a pandas index stored
//! in a Parquet file, odd table names, generated columns — run with real pandas: each
//! must yield exactly the described column names and row count.

use crate::common::test_python;
use lakestar_index::analyze::{Content, NamedTable};
use lakestar_index::describe_file;
use std::path::Path;
use std::process::Command;

fn workbook(path: &Path) {
    use rust_xlsxwriter::{Format, Workbook};
    let mut wb = Workbook::new();
    let none = Format::new();
    // A merged title, a blank row, the header in B3:D3, a blank row inside the data.
    let s = wb.add_worksheet().set_name("Report").unwrap();
    s.merge_range(0, 1, 0, 3, "Complaints by category, 2023", &none)
        .unwrap();
    for (c, h) in ["id", "category", "count"].iter().enumerate() {
        s.write_string(2, 1 + c as u16, *h).unwrap();
    }
    for r in 0..6u32 {
        let row = 3 + r + u32::from(r >= 3);
        s.write_number(row, 1, f64::from(r + 1)).unwrap();
        s.write_string(row, 2, ["noise", "odour", "dust"][r as usize % 3])
            .unwrap();
        s.write_number(row, 3, f64::from(r * 7)).unwrap();
    }
    // Numbers only under a title: no header, columns named by letter.
    let s = wb.add_worksheet().set_name("Readings").unwrap();
    s.write_string(0, 0, "Raw readings").unwrap();
    for r in 0..5u32 {
        s.write_number(2 + r, 0, f64::from(r)).unwrap();
        s.write_number(2 + r, 1, f64::from(r) * 1.5).unwrap();
    }
    // A grouping row over repeated names, a numeric and a missing header cell.
    let s = wb.add_worksheet().set_name("Sites 'A' & \"B\"").unwrap();
    s.merge_range(0, 1, 0, 2, "Site A", &none).unwrap();
    s.merge_range(0, 3, 0, 4, "Site B", &none).unwrap();
    for (c, h) in ["Date", "Flag", "Count", "Flag", "Count"]
        .iter()
        .enumerate()
    {
        s.write_string(1, c as u16, *h).unwrap();
    }
    s.write_number(1, 5, 2023.0).unwrap();
    for r in 0..4u32 {
        s.write_string(2 + r, 0, format!("2023-01-0{}", r + 1))
            .unwrap();
        for c in 1..=6u16 {
            s.write_number(2 + r, c, f64::from(r) + f64::from(c))
                .unwrap();
        }
    }
    wb.save(path).unwrap();
}

fn database(path: &Path) {
    let db = rusqlite::Connection::open(path).unwrap();
    db.execute_batch(
        r#"CREATE TABLE "it's ""odd""" (a INTEGER, b TEXT, c INTEGER AS (a * 2));
           INSERT INTO "it's ""odd""" (a, b) VALUES (1, 'x'), (2, NULL), (3, 'z');
           CREATE VIEW "odd view" AS SELECT b AS "the b", a + 1 FROM "it's ""odd""";"#,
    )
    .unwrap();
}

/// Parquet files written by pandas itself: a named index, an unnamed one, and a plain
/// `RangeIndex` (stored as metadata only).
fn pandas_parquets(python: &Path, dir: &Path) {
    let script = r#"
import sys, pandas as pd
d = sys.argv[1]
df = pd.DataFrame({"station": ["a", "b", "c"], "temp": [1.5, None, 3.0]})
df.set_index("station").to_parquet(f"{d}/named_index.parquet")
df.set_axis([10, 20, 30]).to_parquet(f"{d}/unnamed_index.parquet")
df.to_parquet(f"{d}/range_index.parquet")
"#;
    let out = Command::new(python)
        .args(["-c", script])
        .arg(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// What pandas yields for each call: (column names, rows), or the error.
fn run_loads(python: &Path, calls: &[(String, String)]) -> Vec<Result<(Vec<String>, u64), String>> {
    let script = r#"
import json, sys, sqlite3, pandas as pd
out = []
for path, call in json.load(sys.stdin):
    try:
        df = eval(call, {"pd": pd, "sqlite3": sqlite3, "path": path})
        out.append({"ok": [[str(c) for c in df.columns], len(df)]})
    except Exception as e:
        out.append({"err": f"{type(e).__name__}: {e}"})
print(json.dumps(out))
"#;
    let mut child = Command::new(python)
        .args(["-c", script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    serde_json::to_writer(child.stdin.take().unwrap(), calls).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    v.into_iter()
        .map(|r| match r.get("ok") {
            Some(ok) => Ok(serde_json::from_value(ok.clone()).unwrap()),
            None => Err(r["err"].as_str().unwrap_or("?").to_string()),
        })
        .collect()
}

fn tables(path: &Path) -> Vec<NamedTable> {
    match describe_file(path).unwrap().content {
        Content::Tables(t) => t.tables,
        c => panic!("{}: not tables: {c:?}", path.display()),
    }
}

#[test]
fn load_lines_of_awkward_tables_yield_what_is_described() {
    let python = test_python();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    workbook(&dir.join("report.xlsx"));
    database(&dir.join("odd.sqlite"));
    pandas_parquets(&python, dir);
    // The generated formats' plain fixtures too.
    crate::fixtures::write_all(&dir.join("fixtures"));

    let mut described: Vec<(String, NamedTable)> = Vec::new();
    for file in [
        "report.xlsx",
        "odd.sqlite",
        "named_index.parquet",
        "unnamed_index.parquet",
        "range_index.parquet",
        "fixtures/sales.parquet",
        "fixtures/report.xlsx",
        "fixtures/shop.sqlite",
    ] {
        let path = dir.join(file).to_string_lossy().into_owned();
        for t in tables(Path::new(&path)) {
            described.push((path.clone(), t));
        }
    }
    let load = |name: &str| {
        described
            .iter()
            .find(|(p, t)| t.name == name || p.ends_with(name))
            .and_then(|(_, t)| t.load.clone())
            .unwrap_or_else(|| panic!("no load line for {name}"))
    };
    // The header is found below the title, in the sheet's used columns, and the blank
    // row inside the data is dropped as the description does not count it.
    assert_eq!(
        load("Report"),
        r#"pd.read_excel(path, sheet_name="Report", header=2, usecols="B:D").dropna(how="all")"#
    );
    assert_eq!(
        load("Readings"),
        r#"pd.read_excel(path, sheet_name="Readings", header=None, skiprows=2, names=["A", "B"], usecols="A:B")"#
    );
    // The grouping row above the repeated names is part of the header: one name each.
    assert!(
        load("Sites 'A' & \"B\"").contains(
            r#"names=["Date", "Site A / Flag", "Site A / Count", "Site B / Flag", "Site B / Count", "2023", "G"]"#
        ),
        "{}",
        load("Sites 'A' & \"B\"")
    );
    assert!(load("named_index.parquet").contains("reset_index(names=[\"station\"])"));
    assert_eq!(load("range_index.parquet"), "pd.read_parquet(path)");

    let calls: Vec<(String, String)> = described
        .iter()
        .map(|(p, t)| {
            let call = t
                .load
                .clone()
                .unwrap_or_else(|| panic!("{p} {}: no load line", t.name));
            (p.clone(), call)
        })
        .collect();
    for ((path, t), got) in described.iter().zip(run_loads(&python, &calls)) {
        let want: Vec<String> = t.columns.iter().map(|c| c.name.clone()).collect();
        let call = t.load.as_deref().unwrap_or_default();
        let (cols, rows) = got.unwrap_or_else(|e| panic!("{path} {}: {call}: {e}", t.name));
        assert_eq!(cols, want, "{path} {}: {call}", t.name);
        assert_eq!(rows, t.rows, "{path} {}: {call}", t.name);
    }
}

/// HTML pages of every header shape, with tables pandas skips or reads otherwise among
/// them: (file, the described tables that must have a load line).
const PAGES: &[(&str, &str, &[&str])] = &[
    (
        "thead.html",
        "<html><head><meta charset='utf-8'><title>t</title></head><body>\
         <table><caption>Vehicle  list</caption>\
         <thead><tr><th> plate </th><th>year</th><th>km</th></tr></thead><tbody>\
         <tr><td>AB-123</td><td>2019</td><td>1,200.5</td></tr>\
         <tr><td>CD-456</td><td>2021</td><td></td></tr></tbody></table></body></html>",
        &["Vehicle list"],
    ),
    (
        "text_header.html",
        "<table id='trips'>\n<tr><td>date</td><td>driver</td><td>trips</td></tr>\n\
         <tr><td>2024-01-02</td><td>Ann</td><td>3</td></tr>\n\
         <tr><td>2024-01-03</td><td>Bob <b>B.</b></td><td>5</td></tr>\n</table>",
        &["trips"],
    ),
    (
        "spans.html",
        "<table><tr><th rowspan=2>city</th><th colspan=2>temp</th><th rowspan=2>note</th></tr>\
         <tr><th>min</th><th>max</th></tr>\
         <tr><td rowspan=2>Oslo</td><td>-3</td><td>4</td><td>cold</td></tr>\
         <tr><td>-5</td><td colspan=2>2</td></tr>\
         <tr><td>Rome</td><td>8</td><td>15</td><td></td></tr></table>",
        &["table 1"],
    ),
    (
        "two_and_empty.html",
        "<h1>Two tables</h1><table>\n</table>\
         <table id='first'><tr><th>a<br>b</th><th>a<br>b</th><th></th></tr>\
         <tr><td>1</td><td>2</td><td>3</td></tr></table>\
         <table><caption>only a caption</caption></table>\
         <table id='second'><tr><td>1</td><td>x</td></tr><tr><td>2</td><td>y</td></tr></table>\
         <table id='big'><thead><tr><th>n</th><th>Größe</th></tr></thead>\
         <tr><td>1</td><td>1</td></tr><tr><td>2</td><td>2</td></tr></table>",
        &["first", "second", "big"],
    ),
    (
        "nested.html",
        "<table id='outer'><tr><th>k</th><th>v</th></tr>\
         <tr><td>a</td><td><table id='inner'><tr><th>x</th></tr><tr><td>1</td></tr></table></td></tr>\
         </table><table id='after'><tr><th>p</th><th>q</th></tr><tr><td>1</td><td>2</td></tr></table>",
        &["inner", "after"],
    ),
    (
        "malformed.html",
        "<html><body><h1>Broken <b>page<table><tr><th>a<th>b\
         <tr><td>1<td>x<tr><td>2<td>y<div><p>unclosed",
        &["table 1"],
    ),
    (
        // No charset: lxml reads the page as Latin-1, the header's no-break space as two
        // characters.
        "nbsp.html",
        "<table id='n'><tr><th>\u{a0}a</th><th>b c</th></tr><tr><td>1</td><td>x</td></tr></table>",
        &["n"],
    ),
];

#[test]
fn html_load_lines_yield_what_is_described() {
    let python = test_python();
    let tmp = tempfile::tempdir().unwrap();
    let mut described: Vec<(String, NamedTable)> = Vec::new();
    for (file, html, with_load) in PAGES {
        let path = tmp.path().join(file);
        std::fs::write(&path, html).unwrap();
        let path = path.to_string_lossy().into_owned();
        let tables = tables(Path::new(&path));
        for name in *with_load {
            let t = tables.iter().find(|t| t.name == *name);
            assert!(
                t.is_some_and(|t| t.load.is_some()),
                "{file} {name}: no load line in {:?}",
                tables
                    .iter()
                    .map(|t| (&t.name, &t.load))
                    .collect::<Vec<_>>()
            );
        }
        described.extend(tables.into_iter().map(|t| (path.clone(), t)));
    }
    let load = |name: &str| {
        described
            .iter()
            .find(|(_, t)| t.name == name)
            .and_then(|(_, t)| t.load.clone())
    };
    assert_eq!(
        load("Vehicle list").as_deref(),
        Some("pd.read_html(path)[0]")
    );
    assert_eq!(
        load("trips").as_deref(),
        Some("pd.read_html(path, header=0)[0]")
    );
    // Tables pandas skips (no rows) have no line; the outer of a nested pair neither.
    assert_eq!(load("only a caption"), None);
    assert_eq!(load("outer"), None);

    let with_load: Vec<&(String, NamedTable)> =
        described.iter().filter(|(_, t)| t.load.is_some()).collect();
    let calls: Vec<(String, String)> = with_load
        .iter()
        .map(|(p, t)| (p.clone(), t.load.clone().unwrap_or_default()))
        .collect();
    for ((path, t), got) in with_load.iter().zip(run_loads(&python, &calls)) {
        let want: Vec<String> = t.columns.iter().map(|c| c.name.clone()).collect();
        let call = t.load.as_deref().unwrap_or_default();
        let (cols, rows) = got.unwrap_or_else(|e| panic!("{path} {}: {call}: {e}", t.name));
        assert_eq!(cols, want, "{path} {}: {call}", t.name);
        assert_eq!(rows, t.rows, "{path} {}: {call}", t.name);
    }
}
