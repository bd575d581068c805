//! Where the tables of a sheet are, end to end: workbooks written from the classes of
//! layout (a title and a two-row merged header with notes below, blocks side by side,
//! tables stacked with a summary row, and negative controls: an empty column inside one
//! table, a `Total` category among the data) are indexed, their `describe --json` facts
//! checked, and every load line run with real pandas to give the described columns and
//! rows. With the layout rules switched off the sheet reads as one table, as written.

use crate::common::*;
use crate::load_lines::{check_loads, jobs};
use lakestar::index::analyze::{ColumnType, Content, Description, NamedTable};
use rust_xlsxwriter::{Format, Workbook, Worksheet};
use serde_json::Value;
use std::path::Path;

/// Write `lines` from (`row`, `col`) down: numbers as numbers, `""` left empty.
fn put(ws: &mut Worksheet, row: u32, col: u16, lines: &[&[&str]]) {
    for (i, line) in lines.iter().enumerate() {
        for (j, v) in line.iter().enumerate() {
            let (r, c) = (row + i as u32, col + j as u16);
            match v.parse::<f64>() {
                Ok(n) => ws.write_number(r, c, n).unwrap(),
                Err(_) if v.is_empty() => ws,
                Err(_) => ws.write_string(r, c, *v).unwrap(),
            };
        }
    }
}

/// One workbook with a sheet per class of layout.
fn workbook(path: &Path) {
    let mut wb = Workbook::new();
    let plain = Format::new();

    let ws = wb.add_worksheet().set_name("Budget").unwrap();
    put(ws, 0, 0, &[&["Budget by programme"], &["Millions"]]);
    ws.merge_range(3, 0, 4, 0, "Programme", &plain).unwrap();
    for (c, year) in [(1u16, "2023"), (3, "2024")] {
        ws.merge_range(3, c, 3, c + 1, year, &plain).unwrap();
    }
    put(ws, 4, 1, &[&["Plan", "Actual", "Plan", "Actual"]]);
    put(
        ws,
        5,
        0,
        &[
            &["Roads", "10.5", "11", "12", "12.5"],
            &["Rail", "20", "19.5", "21", "22"],
            &["Ports", "3", "3.25", "4", "4"],
            &["Total", "33.5", "33.75", "37", "38.5"],
            &[],
            &["Source: programme accounts, audited."],
        ],
    );

    let ws = wb.add_worksheet().set_name("Side").unwrap();
    put(ws, 0, 0, &[&["Cases by area"]]);
    put(ws, 0, 5, &[&["Staff by area"]]);
    put(
        ws,
        2,
        0,
        &[
            &["Area", "Month", "Cases", "Rate"],
            &["A1", "2024-01", "14", "0.5"],
            &["A1", "2024-02", "12", "0.4"],
            &["B2", "2024-01", "30", "1.1"],
            &["B2", "2024-02", "28", "1"],
            &["C3", "2024-01", "7", "0.2"],
        ],
    );
    put(ws, 2, 5, &[&["Area", "Staff"], &["A1", "4"], &["B2", "9"]]);

    let ws = wb.add_worksheet().set_name("Stack").unwrap();
    put(
        ws,
        0,
        0,
        &[
            &["Part A: arrivals"],
            &["Port", "Ships", "Tonnes"],
            &["Dover", "120", "5000.5"],
            &["Hull", "80", "3100"],
            &["Tyne", "45", "1500"],
            &["All ports", "245", "9600.5"],
            &[],
            &["Part B: departures"],
            &["Port", "Ships", "Tonnes"],
            &["Dover", "118", "4900"],
            &["Total", "70", "2800"],
            &["Tyne", "40", "1400.5"],
        ],
    );

    let ws = wb.add_worksheet().set_name("Wide").unwrap();
    put(
        ws,
        0,
        0,
        &[
            &["id", "name", "", "score", "remark"],
            &["1", "Ann", "", "3.5"],
            &["2", "Bob", "", "4"],
            &["3", "Cy", "", "2.5"],
        ],
    );
    wb.save(path).unwrap();
}

/// The tables of a `describe --json` output, and the rules counted.
fn described(out: &str) -> (Vec<NamedTable>, Vec<String>) {
    let v: Value = serde_json::from_str(out).unwrap();
    let d: Description = serde_json::from_value(v["description"].clone()).unwrap();
    let rules = d.rules.keys().cloned().collect();
    match d.content {
        Content::Tables(ts) => (ts.tables, rules),
        other => panic!("not tables: {other:?}"),
    }
}

/// (name, range, rows, column names) of every table.
fn facts(ts: &[NamedTable]) -> Vec<(String, String, u64, Vec<String>)> {
    ts.iter()
        .map(|t| {
            (
                t.name.clone(),
                t.range.clone().unwrap_or_default(),
                t.rows,
                t.columns.iter().map(|c| c.name.clone()).collect(),
            )
        })
        .collect()
}

fn strs(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn sheets_are_read_as_their_tables_and_load_as_described() {
    let work = tempfile::tempdir().unwrap();
    let lake = work.path().join("lake");
    std::fs::create_dir_all(&lake).unwrap();
    workbook(&lake.join("layouts.xlsx"));
    let lake = lake.canonicalize().unwrap();
    let idx = index_into(work.path(), &lake);
    let out = run_ok(
        &lake,
        &[
            "describe",
            "layouts.xlsx",
            "--index",
            idx.to_str().unwrap(),
            "--json",
        ],
    );
    let (ts, rules) = described(&out);
    let got = facts(&ts);
    let want = vec![
        (
            "Budget".to_string(),
            "A1:E11".to_string(),
            3,
            strs(&[
                "Programme",
                "2023 / Plan",
                "2023 / Actual",
                "2024 / Plan",
                "2024 / Actual",
            ]),
        ),
        (
            "Side".into(),
            "A1:D8".into(),
            5,
            strs(&["Area", "Month", "Cases", "Rate"]),
        ),
        (
            "Staff by area".into(),
            "F1:G5".into(),
            2,
            strs(&["Area", "Staff"]),
        ),
        (
            "Stack".into(),
            "A1:C6".into(),
            3,
            strs(&["Port", "Ships", "Tonnes"]),
        ),
        (
            "Part B: departures".into(),
            "A8:C12".into(),
            3,
            strs(&["Port", "Ships", "Tonnes"]),
        ),
        (
            "Wide".into(),
            "A1:E4".into(),
            3,
            strs(&["id", "name", "C", "score", "remark"]),
        ),
    ];
    assert_eq!(got, want, "{out}");
    assert_eq!(ts[0].columns[1].kind, ColumnType::Float);
    assert_eq!(ts[3].columns[1].kind, ColumnType::Integer);
    let notes = ts[0].notes.join("\n");
    assert!(notes.contains("row 9 (Total) kept as notes"), "{notes}");
    assert!(notes.contains("Source: programme accounts"), "{notes}");
    assert!(ts[3]
        .notes
        .iter()
        .any(|n| n.contains("(All ports) kept as notes")));
    // A `Total` category among the data is data.
    assert!(!ts[4].notes.iter().any(|n| n.contains("kept as notes")));
    for r in [
        "header-depth",
        "side-by-side",
        "stacked-tables",
        "summary-rows",
    ] {
        assert!(rules.iter().any(|x| x == r), "{r} not counted: {rules:?}");
    }
    // Every table's load line gives its described columns and rows with pandas.
    check_loads(
        work.path(),
        &jobs(work.path(), &lake, &["layouts.xlsx".to_string()]),
    );
}

#[test]
fn with_layout_rules_off_a_sheet_is_one_table_as_written() {
    let work = tempfile::tempdir().unwrap();
    let lake = work.path().join("lake");
    std::fs::create_dir_all(&lake).unwrap();
    workbook(&lake.join("layouts.xlsx"));
    let idx = work.path().join("idx");
    run_ok(
        work.path(),
        &[
            "index",
            lake.to_str().unwrap(),
            "--index",
            idx.to_str().unwrap(),
            "--reading-rules",
            "none",
        ],
    );
    let out = run_ok(
        &lake,
        &[
            "describe",
            "layouts.xlsx",
            "--index",
            idx.to_str().unwrap(),
            "--json",
        ],
    );
    let (ts, rules) = described(&out);
    let names: Vec<&str> = ts.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["Budget", "Side", "Stack", "Wide"], "{out}");
    assert!(rules.is_empty(), "{rules:?}");
}
