use super::*;
use crate::analyze::describe;

const PAGE: &str = r#"<!DOCTYPE html>
<html><head><title>Fleet  report</title>
<style>td { color: red }</style>
<script>var x = "<h1>not a heading</h1> hidden words";</script>
</head>
<body>
<h1>Fleet</h1>
<p>Our vehicles and their trips.</p>
<h2>Vehicles</h2>
<table id="vehicles">
  <caption>Vehicle list</caption>
  <thead><tr><th>plate</th><th>year</th><th>km</th></tr></thead>
  <tbody>
<tr><td>AB-123</td><td>2019</td><td>12000.5</td></tr>
<tr><td>CD-456</td><td>2021</td><td>800</td></tr>
<tr><td>EF-789</td><td>2020</td><td></td></tr>
  </tbody>
</table>
<h2>Trips</h2>
<table>
  <tr><td>date</td><td>driver</td><td>trips</td></tr>
  <tr><td>2024-01-02</td><td>Ann</td><td>3</td></tr>
  <tr><td>2024-01-03</td><td>Bob</td><td>5</td></tr>
</table>
<h3>Notes</h3>
</body></html>"#;

fn analyze(html: &str) -> Content {
    let src = Source::from_bytes("p.html", html.as_bytes().to_vec());
    HtmlAnalyzer.analyze(&src, Format::Html).unwrap()
}

#[test]
fn page_with_two_tables() {
    let Content::Tables(set) = analyze(PAGE) else {
        panic!("expected tables")
    };
    assert_eq!(set.tables.len(), 2);
    assert_eq!(set.notes[0], "title: Fleet report");
    assert_eq!(
        set.notes[1],
        "outline: # Fleet · ## Vehicles · ## Trips · ### Notes"
    );
    // Fleet, Our…trips (5), Vehicles, table 1 (caption 2, header 3, 8 filled cells),
    // Trips, table 2 (9), Notes; nothing from the script or the style.
    assert_eq!(set.notes[2], "31 words of visible text");

    let v = &set.tables[0];
    assert_eq!(
        (v.name.as_str(), v.kind.as_str()),
        ("Vehicle list", "html table")
    );
    let cols = v.column_kinds();
    assert_eq!(
        cols,
        [
            ("plate", ColumnType::Text),
            ("year", ColumnType::Integer),
            ("km", ColumnType::Float)
        ]
    );
    assert_eq!((v.rows, v.header_row), (3, Some(1)));
    assert_eq!(v.columns[2].nulls, 1);
    assert_eq!(v.sample_rows[0], ["AB-123", "2019", "12000.5"]);

    let t = &set.tables[1];
    assert_eq!(t.name, "table 2");
    assert_eq!((t.rows, t.header_row), (2, Some(1)));
    let names: Vec<&str> = t.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["date", "driver", "trips"]);
    assert_eq!(t.columns[0].kind, ColumnType::Date);
    assert_eq!(t.columns[2].kind, ColumnType::Integer);
    assert!(t
        .notes
        .contains(&"no <th> cells: first row taken as header".to_string()));
}

#[test]
fn detected_and_described_through_describe() {
    let d = describe(&Source::from_bytes("page.htm", PAGE.as_bytes().to_vec()));
    assert_eq!(d.format, Format::Html);
    assert_eq!(d.analyzer, "html@9");
    assert!(matches!(d.content, Content::Tables(_)));
}

#[test]
fn a_table_past_the_profiled_rows_has_its_figures_flagged() {
    let n = MAX_PROFILE_ROWS + 10;
    let mut html = String::from("<table><tr><th>n</th><th>v</th></tr>");
    for i in 0..n {
        let v = if i % 2 == 0 { "" } else { "x" };
        html.push_str(&format!("<tr><td>{i}</td><td>{v}</td></tr>"));
    }
    html.push_str("</table>");
    let Content::Tables(set) = analyze(&html) else {
        panic!("expected tables")
    };
    let t = &set.tables[0];
    assert_eq!((t.rows, t.rows_exact), (n as u64, true));
    let [num, v] = t.columns.as_slice() else {
        panic!()
    };
    assert!(num.estimated && !num.distinct_exact);
    assert_eq!(num.max.as_deref(), Some("49999"));
    // Nulls of the profiled rows, scaled to the whole table.
    assert!(
        v.estimated && v.nulls.abs_diff(n as u64 / 2) <= 1,
        "{}",
        v.nulls
    );
    assert!(t.notes.iter().any(|n| n.contains("sample of 50000 rows")));
    assert_eq!(t.load.as_deref(), Some("pd.read_html(path)[0]"));
}

#[test]
fn page_without_tables_is_text_with_outline() {
    let html = "<html><head><title>Maps Inc</title></head><body>\n<h1>About us</h1>\n\
                <p>We make <b>to</b>day's maps.</p>\n<h2>Team</h2><p>Four people.</p>\n\
                <script>ignored()</script></body></html>";
    let Content::Text(s) = analyze(html) else {
        panic!("expected text")
    };
    assert!(!s.markdown);
    let o: Vec<(u8, &str, u64)> = s
        .outline
        .iter()
        .map(|h| (h.level, h.text.as_str(), h.line))
        .collect();
    assert_eq!(o, [(1, "About us", 2), (2, "Team", 4)]);
    assert_eq!(s.words, 9);
    assert_eq!(
        s.excerpt,
        "Maps Inc — About us We make today's maps. Team Four people."
    );
}

#[test]
fn malformed_html_is_still_described() {
    let html = "<html><body><h1>Broken <b>page<table><tr><th>a<th>b\
                <tr><td>1<td>x<tr><td>2<td>y<div><p>unclosed";
    let Content::Tables(set) = analyze(html) else {
        panic!("expected tables")
    };
    let t = &set.tables[0];
    assert_eq!(t.rows, 2);
    let names: Vec<&str> = t.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["a", "b"]);
    assert_eq!(t.columns[0].kind, ColumnType::Integer);
    // Garbage and deep nesting do not panic either.
    let deep = "<div>".repeat(50_000) + "x";
    let Content::Text(s) = analyze(&deep) else {
        panic!()
    };
    assert!(s.truncated);
    let src = Source::from_bytes("g.html", vec![0xff, 0xfe, b'<', b'p', b'>', 0x80]);
    let Content::Text(s) = HtmlAnalyzer.analyze(&src, Format::Html).unwrap() else {
        panic!()
    };
    assert!(s.lossy);
}

#[test]
fn spans_align_columns() {
    let html = "<table><tr><th rowspan=2>city</th><th colspan=2>temp</th></tr>\
                <tr><th>min</th><th>max</th></tr>\
                <tr><td rowspan=2>Oslo</td><td>-3</td><td>4</td></tr>\
                <tr><td>-5</td><td>2</td></tr></table>";
    let Content::Tables(set) = analyze(html) else {
        panic!()
    };
    let t = &set.tables[0];
    let names: Vec<&str> = t.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["city", "temp / min", "temp / max"]);
    assert_eq!((t.rows, t.header_row), (2, Some(2)));
    assert_eq!(t.sample_rows[1], ["Oslo", "-5", "2"]);
    assert_eq!(t.columns[1].kind, ColumnType::Integer);
}

fn loads(html: &str) -> Vec<Option<String>> {
    let Content::Tables(set) = analyze(html) else {
        panic!("expected tables")
    };
    set.tables.into_iter().map(|t| t.load).collect()
}

#[test]
fn load_lines_index_the_tables_pandas_returns() {
    let got = loads(PAGE);
    assert_eq!(
        got,
        [
            Some("pd.read_html(path)[0]".to_string()),
            Some("pd.read_html(path, header=0)[1]".to_string())
        ]
    );
    // An empty table is skipped by pandas and gets no line; the index goes on after it.
    let html = "<table>\n</table><table><tr><th>a b</th><th>c</th></tr><tr><td>1</td><td>2</td></tr></table>";
    assert_eq!(
        loads(html),
        [None, Some("pd.read_html(path)[0]".to_string())]
    );
    // Grouped headers and generated names are set as described.
    let html = "<table><tr><th rowspan=2>city</th><th colspan=2>temp</th></tr>\
                <tr><th>min</th><th>max</th></tr><tr><td>Oslo</td><td>-3</td><td>4</td></tr></table>\
                <table><tr><td>1</td><td>2</td></tr></table>";
    assert_eq!(
        loads(html),
        [
            Some(
                r#"pd.read_html(path)[0].set_axis(["city", "temp / min", "temp / max"], axis=1)"#
                    .to_string()
            ),
            Some(r#"pd.read_html(path)[1].set_axis(["column_1", "column_2"], axis=1)"#.to_string())
        ]
    );
}

#[test]
fn no_load_line_where_pandas_reads_otherwise() {
    // A hidden row (pandas drops it), a table holding another, a span pandas cannot
    // read (it fails on the whole page), a row without text.
    let row = "<tr><td>1</td><td>x</td></tr>";
    let hidden = format!(
        "<table><tr><th>a</th><th>b</th></tr>{row}<tr style='display: none'>{row}</tr></table>"
    );
    assert_eq!(loads(&hidden), [None]);
    let nested = format!("<table><tr><th>a</th><th>b</th></tr><tr><td><table>{row}</table></td><td>y</td></tr></table><table>{row}</table>");
    assert_eq!(
        loads(&nested),
        [
            None,
            Some(r#"pd.read_html(path)[1].set_axis(["column_1", "column_2"], axis=1)"#.to_string()),
            Some(r#"pd.read_html(path)[2].set_axis(["column_1", "column_2"], axis=1)"#.to_string())
        ]
    );
    let odd = format!("<table><tr><th colspan='2px'>a</th></tr>{row}</table>");
    assert_eq!(loads(&odd), [None]);
    let blank = format!("<table><tr><th>a</th><th>b</th></tr>{row}<tr><td></td><td> </td></tr></table>{hidden}<table>{row}</table>");
    assert_eq!(loads(&blank), [None, None, None]);
    // Rows outside a <tbody> beside one: lxml reads them after the <tbody> rows.
    let mixed =
        "<table><tr><td>h</td><td>g</td></tr><tbody><tr><td>1</td><td>2</td></tr></tbody></table>";
    assert_eq!(loads(mixed), [None]);
    // A row without cells can make pandas fail on the whole page.
    let failing = format!("<table>{row}</table><table><tr><th>a</th></tr><tr></tr></table>");
    assert_eq!(loads(&failing), [None, None]);
    // A header pandas may decode otherwise is set as described.
    let nbsp = format!("<table><tr><th>\u{a0}a</th><th>b</th></tr>{row}</table>");
    assert_eq!(
        loads(&nbsp),
        [Some(
            r#"pd.read_html(path)[0].set_axis(["a", "b"], axis=1)"#.to_string()
        )]
    );
}
