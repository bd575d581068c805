use super::*;

fn file(dir: &tempfile::TempDir, name: &str, content: &[u8]) -> PathBuf {
    let p = dir.path().join(name);
    std::fs::write(&p, content).unwrap();
    p
}

fn cells(row: &[Option<String>]) -> Vec<&str> {
    row.iter().map(|c| c.as_deref().unwrap_or("∅")).collect()
}

const REPORT: &str = "\
Regional rainfall report
Prepared by the water office, 2023
Note: provisional figures

station,month,rain_mm,remark
Alpha,2023-01,12.5,
Beta,2023-01,3.0,dry
Gamma,2023-01,,missing gauge
Delta,2023-01,7.25,

Source: water office
* provisional
";

#[test]
fn a_report_csv_shows_its_real_header_and_rows_not_its_notes() {
    let d = tempfile::tempdir().unwrap();
    let p = file(&d, "rain.csv", REPORT.as_bytes());
    let v = head(&p, None, 2).unwrap();
    assert_eq!(v.format, "csv");
    assert_eq!(v.columns, ["station", "month", "rain_mm", "remark"]);
    assert_eq!(v.rows.len(), 2);
    assert_eq!(cells(&v.rows[0]), ["Alpha", "2023-01", "12.5", "∅"]);
    assert_eq!(cells(&v.rows[1]), ["Beta", "2023-01", "3.0", "dry"]);
    assert!(v.more);
    let all = head(&p, None, 20).unwrap();
    assert_eq!(all.rows.len(), 4, "{:?}", all.rows);
    assert!(!all.more);
    assert_eq!(
        cells(&all.rows[2]),
        ["Gamma", "2023-01", "∅", "missing gauge"]
    );
    assert_eq!(all.tables, std::slice::from_ref(&all.table));
}

#[test]
fn fixed_width_tables_skip_their_header_block() {
    let d = tempfile::tempdir().unwrap();
    let text = "\
# Gauges of the upper basin
# Retrieved 2024-02-01

GAUGE       LEVEL_CM   FLOW  STATE
ub-001         143.2   12.5  normal
ub-002          98.0         offline
ub-003         201.7   30.1  flood watch
ub-004         110.4    9.8  normal
";
    let p = file(&d, "gauges.txt", text.as_bytes());
    let v = head(&p, None, 3).unwrap();
    assert_eq!(v.format, "fixed-width");
    assert_eq!(v.columns, ["GAUGE", "LEVEL_CM", "FLOW", "STATE"]);
    assert_eq!(cells(&v.rows[0]), ["ub-001", "143.2", "12.5", "normal"]);
    assert_eq!(cells(&v.rows[1]), ["ub-002", "98.0", "∅", "offline"]);
    assert_eq!(
        cells(&v.rows[2]),
        ["ub-003", "201.7", "30.1", "flood watch"]
    );
    assert!(v.more);
}

#[test]
fn json_lines_and_documents_read_as_records() {
    let d = tempfile::tempdir().unwrap();
    let p = file(
        &d,
        "ev.jsonl",
        b"{\"id\":1,\"kind\":\"a\"}\nnot json\n{\"id\":2,\"tags\":[1,2],\"kind\":null}\n{\"id\":3}\n",
    );
    let v = head(&p, None, 2).unwrap();
    assert_eq!(v.format, "jsonl");
    assert_eq!(v.columns, ["id", "kind", "tags"]);
    assert_eq!(cells(&v.rows[0]), ["1", "a", "∅"]);
    assert_eq!(cells(&v.rows[1]), ["2", "∅", "[1,2]"]);
    assert!(v.more);

    let p = file(
        &d,
        "doc.json",
        br#"{"meta": {"v": 1}, "people": [{"name": "Ann"}], "cities": [{"city": "Oslo", "pop": 700000}]}"#,
    );
    let v = head(&p, Some("cities"), 5).unwrap();
    assert_eq!(v.tables, ["people", "cities"]);
    assert_eq!(v.columns, ["city", "pop"]);
    assert_eq!(cells(&v.rows[0]), ["Oslo", "700000"]);
    assert!(!v.more);
}

#[test]
fn workbook_sheets_are_tables_and_the_second_can_be_asked_for() {
    use rust_xlsxwriter::Workbook;
    let mut wb = Workbook::new();
    let ws = wb.add_worksheet().set_name("Summary").unwrap();
    ws.write_string(0, 0, "Quarterly summary").unwrap();
    ws.write_string(2, 0, "region").unwrap();
    ws.write_string(2, 1, "total").unwrap();
    ws.write_string(3, 0, "North").unwrap();
    ws.write_number(3, 1, 12.5).unwrap();
    let ws = wb.add_worksheet().set_name("Codes").unwrap();
    for (r, (code, label)) in [
        ("code", "label"),
        ("100", "label 0"),
        ("101", "label 1"),
        ("102", "x"),
    ]
    .into_iter()
    .enumerate()
    {
        ws.write(r as u32, 0, code).unwrap();
        ws.write(r as u32, 1, label).unwrap();
    }
    let d = tempfile::tempdir().unwrap();
    let p = file(&d, "book.xlsx", &wb.save_to_buffer().unwrap());
    let first = head(&p, None, 10).unwrap();
    assert_eq!(first.tables, ["Summary", "Codes"]);
    assert_eq!(first.table, "Summary");
    assert_eq!(first.columns, ["region", "total"]);
    assert_eq!(cells(&first.rows[0]), ["North", "12.5"]);
    let codes = head(&p, Some("codes"), 2).unwrap();
    assert_eq!(codes.table, "Codes");
    assert_eq!(codes.columns, ["code", "label"]);
    assert_eq!(cells(&codes.rows[1]), ["101", "label 1"]);
    assert!(codes.more);
    // By number, 1-based as listed; past the last, the tables are named with theirs.
    let second = head(&p, Some("2"), 2).unwrap();
    assert_eq!((second.table, second.rows), (codes.table, codes.rows));
    let e = head(&p, Some("3"), 2).unwrap_err().to_string();
    assert_eq!(
        e,
        "no table 3: the file has 2 tables, 1 \"Summary\", 2 \"Codes\"; pass a name or a number"
    );
}

#[test]
fn wrong_requests_say_what_to_do() {
    let d = tempfile::tempdir().unwrap();
    let p = file(&d, "a.csv", b"x,y\n1,2\n");
    let e = head(&p, Some("nope"), 5).unwrap_err().to_string();
    assert!(
        e.contains("no table named \"nope\"") && e.contains("1 \"a\""),
        "{e}"
    );
    for n in [0, MAX_ROWS + 1] {
        let e = head(&p, None, n).unwrap_err().to_string();
        assert!(e.contains("between 1 and 1000"), "{e}");
    }
    let t = file(&d, "notes.md", b"# Notes\n\nSome prose about the lake.\n");
    let e = head(&t, None, 5).unwrap_err().to_string();
    assert!(e.contains("not a table") && e.contains("describe"), "{e}");
    let e = head(&d.path().join("missing.csv"), None, 5).unwrap_err();
    assert!(matches!(e, PreviewError::Unreadable { .. }), "{e}");
}

#[test]
fn long_cells_are_kept_whole_in_a_preview() {
    let d = tempfile::tempdir().unwrap();
    let long = "word ".repeat(30);
    let p = file(&d, "l.csv", format!("id,text\n1,{long}\n").as_bytes());
    let v = head(&p, None, 1).unwrap();
    assert_eq!(v.rows[0][1].as_deref(), Some(long.trim()));
}

#[test]
fn a_compressed_table_shows_the_rows_of_its_content() {
    use std::io::Write;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(REPORT.as_bytes()).unwrap();
    let d = tempfile::tempdir().unwrap();
    let p = file(&d, "rain.csv.gz", &gz.finish().unwrap());
    let v = head(&p, None, 1).unwrap();
    assert_eq!(v.format, "compressed");
    assert_eq!(v.table, "rain");
    assert_eq!(v.columns, ["station", "month", "rain_mm", "remark"]);
    assert_eq!(cells(&v.rows[0]), ["Alpha", "2023-01", "12.5", "∅"]);
    assert!(v.more);
}
