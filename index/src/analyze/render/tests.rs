use super::tabular::columns;
use super::*;
use crate::analyze::ColumnProfile;

/// The column line of a profile of `vals`, adjusted by `f`, in a 1,000-row table.
fn column_line(vals: &[&str], f: impl FnOnce(&mut ColumnProfile)) -> String {
    let mut b = crate::analyze::profile::ColumnBuilder::new("c");
    for v in vals {
        b.push(v);
    }
    let mut c = b.finish();
    f(&mut c);
    let mut s = String::new();
    let caps = Caps {
        items: 10,
        examples: 0,
    };
    columns(&mut s, "", &[c], 1_000, caps);
    s
}

#[test]
fn how_numbers_are_written_is_shown() {
    use crate::analyze::Source;
    let csv = "region,cases,share\nNorth,\"1,234\",12.5%\nSouth,\"12,001\",3.1%\nEast,987,0.4%\n";
    let d = crate::analyze::describe(&Source::from_bytes("t.csv", csv.as_bytes().to_vec()));
    let text = render("t.csv", &d, RenderOptions::default());
    assert!(
        text.contains("cases   integer     written with thousands \",\""),
        "{text}"
    );
    assert!(
        text.contains("share   float       written with percent"),
        "{text}"
    );
    assert!(
        text.contains(r#"load: pd.read_csv("t.csv", thousands=",")"#),
        "{text}"
    );
}

#[test]
fn estimated_figures_are_marked_and_exact_ones_are_not() {
    let vals = ["1", "5", "", "3"];
    let plain = column_line(&vals, |_| {});
    assert!(plain.contains(" 1 … 5, 3 distinct, 1 null") && plain.contains("mean 3"));
    assert!(!plain.contains('~') && !plain.contains('≥'), "{plain}");
    let sampled = column_line(&vals, |c| {
        c.estimated = true;
        c.distinct_exact = false;
    });
    assert!(
        sampled.contains("~1 … ~5, ≥3 distinct, ~1 null") && sampled.contains("mean ~3"),
        "{sampled}"
    );
    // A Parquet footer's range and nulls are exact within a sampled profile.
    let footer = column_line(&vals, |c| {
        c.estimated = true;
        c.distinct_exact = false;
        c.exact = vec!["nulls".into(), "range".into()];
    });
    assert!(
        footer.contains(" 1 … 5, ≥3 distinct, 1 null") && footer.contains("mean ~3"),
        "{footer}"
    );
    // Every value read, distinct past the exact cap: the sketch's estimate.
    let sketch = column_line(&vals, |c| c.distinct_exact = false);
    assert!(
        sketch.contains("~3 distinct") && sketch.contains("mean 3"),
        "{sketch}"
    );
}

#[test]
fn budget_drops_examples_before_columns() {
    use crate::analyze::{Content, Format, Source};
    let mut csv = String::from("a_long_column_name_1,b_long_column_name_2,c_long_column_name_3,d_long_column_name_4,e_long_column_name_5,f_long_column_name_6\n");
    for i in 0..50 {
        csv.push_str(&format!(
            "{i},text value number {i} with words,{}.5,x{i},2020-01-{:02},y\n",
            i * 3,
            i % 28 + 1
        ));
    }
    let d = crate::analyze::describe(&Source::from_bytes("t.csv", csv.into_bytes()));
    assert!(matches!(d.content, Content::Table(_)));
    assert_eq!(d.format, Format::Csv);
    let full = render("t.csv", &d, RenderOptions { max_bytes: 100_000 });
    // The budget holds the load line (which parses the date column) and the columns.
    let small = render("t.csv", &d, RenderOptions { max_bytes: 800 });
    assert!(small.len() <= 800, "{small}");
    assert!(full.len() > small.len());
    // All six columns survive; examples went first.
    for c in 1..=6 {
        assert!(small.contains(&format!("_column_name_{c}")), "{small}");
    }
    assert_eq!(
        render("t.csv", &d, RenderOptions { max_bytes: 800 }),
        small,
        "deterministic"
    );
}

#[test]
fn the_load_call_names_the_file_outside_string_literals_only() {
    assert_eq!(
        with_path(
            r#"pd.read_csv(path, sep="\t", comment="path")"#,
            "dir/a b.csv"
        ),
        r#"pd.read_csv("dir/a b.csv", sep="\t", comment="path")"#
    );
    assert_eq!(
        with_path(
            "pd.read_sql_query('SELECT * FROM \\'path\\'', sqlite3.connect(path))",
            "x\"y.db"
        ),
        "pd.read_sql_query('SELECT * FROM \\'path\\'', sqlite3.connect(\"x\\\"y.db\"))"
    );
    assert_eq!(with_path("f(paths, path_)", "p"), "f(paths, path_)");
}

#[test]
fn a_cut_text_keeps_within_the_budget_marker_included() {
    for (text, max) in [
        ("x".repeat(100), 10),
        ("é".repeat(100), 11),
        ("ab".into(), 2),
    ] {
        let cut = cut_bytes(text.clone(), max, CUT_MARK);
        assert!(cut.len() <= max, "{cut:?} is over {max}");
        assert!(cut.len() == text.len() || cut.ends_with(" …\n"), "{cut:?}");
    }
}

#[test]
fn sizes_and_numbers() {
    assert_eq!(human_size(999), "999 B");
    assert_eq!(human_size(26611), "26.6 KB");
    assert_eq!(thousands(138236), "138,236");
    assert_eq!(num(2.5), "2.5");
    assert_eq!(num(3.0), "3");
}

#[test]
fn a_member_is_loaded_by_the_stream_path_or_not_at_all() {
    use crate::analyze::Source;
    use std::io::Write as _;
    let csv = b"id,amount\n1,10\n2,20\n3,30\n";
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(csv).unwrap();
    let gz = e.finish().unwrap();
    let d = crate::analyze::describe(&Source::from_bytes("sales.csv.gz", gz));
    let text = render("sales.csv.gz", &d, RenderOptions::default());
    assert!(
        text.contains(r#"load: pd.read_csv("sales.csv.gz")"#),
        "{text}"
    );
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for name in ["a.csv", "b.csv"] {
        zip.start_file(name, zip::write::SimpleFileOptions::default())
            .unwrap();
        zip.write_all(csv).unwrap();
    }
    let bytes = zip.finish().unwrap().into_inner();
    let d = crate::analyze::describe(&Source::from_bytes("both.zip", bytes));
    let text = render("both.zip", &d, RenderOptions::default());
    assert!(text.contains("a.csv") && !text.contains("load:"), "{text}");
}

#[test]
fn one_is_singular() {
    assert_eq!(super::counted(1, "line"), "1 line");
    assert_eq!(super::counted(3196, "word"), "3,196 words");
}

#[test]
fn a_name_with_spaces_no_reader_sees_is_shown_quoted() {
    use crate::analyze::Source;
    // As exported call-centre reports write their header (DABench's group statistics).
    let csv = "timestamp,num. calls abandoned ,avg.  wait\n1,2,3\n4,5,6\n";
    let d = crate::analyze::describe(&Source::from_bytes("t.csv", csv.as_bytes().to_vec()));
    let text = render("t.csv", &d, RenderOptions::default());
    assert!(text.contains("\n  \"num. calls abandoned \" "), "{text}");
    assert!(text.contains("\n  \"avg.  wait\" "), "{text}");
    assert!(text.contains("\n  timestamp "), "{text}");
}

#[test]
fn a_cut_keeps_whole_lines_and_says_what_it_left_out() {
    let text = "m.md — Markdown, 2.0 KB, 40 lines, 300 words\n  outline:\n    # Guide\n    ## Fees and the rules that set them\n  time coverage: 2023-01-01 … 2024-11-01 (from text)\n  note: figures from the first part\n";
    let cut = cut_lines(text, 150, &[], 4096);
    assert!(cut.len() <= 150, "{cut}");
    assert_eq!(
        cut,
        "m.md — Markdown, 2.0 KB, 40 lines, 300 words\n  outline:\n    # Guide\n  … 3 more lines (time coverage, note) left out; --max-bytes 4096 shows all\n"
    );
    // Every line but the note is a whole line of the text.
    for l in cut.lines().filter(|l| !l.contains("left out")) {
        assert!(text.lines().any(|t| t == l), "{l:?} is cut");
    }
    // A column's line is not taken for a label; one left-out line is "1 more line".
    assert_eq!(line_label("    note  text  e.g. \"a: b\""), None);
    assert_eq!(line_label("  load: pd.read_csv(path)"), Some("load"));
    let long = "a\nbb\n  load: pd.read_csv(path, sep=\";\", encoding=\"latin-1\", skiprows=3)\n";
    assert!(long.len() > 70);
    let one = cut_lines(long, 70, &[], 40);
    assert_eq!(
        one,
        "a\nbb\n  … 1 more line (load) left out; --max-bytes 40 shows all\n"
    );
    // Column lines are counted as the columns' profiles.
    let table = "t.csv — CSV, 1 KB\n  id      integer  unique\n  amount  float    mean 3\n  name    text     e.g. \"a\"\n  note: from a sample\n";
    let names = ["id", "amount", "name"].map(String::from);
    assert_eq!(
        cut_lines(table, 130, &names, 900),
        "t.csv — CSV, 1 KB\n  id      integer  unique\n  … 3 more lines (2 columns' profiles, note) left out; --max-bytes 900 shows all\n"
    );
    // A budget below the first line and the note: cut inside, within the budget.
    let tiny = cut_lines(text, 20, &[], 4096);
    assert!(tiny.len() <= 20 && tiny.ends_with(" …\n"), "{tiny:?}");
}
