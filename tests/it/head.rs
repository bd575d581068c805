//! `lakestar head` and the MCP `head` tool: the first rows of a table of every tabular
//! format, read as the description reads it (the HTTP route is in `serve/rows.rs`).

use crate::common::*;
use crate::mcp::Session;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// A report-style CSV: titles and a note above the header, a footer below.
pub(crate) const REPORT: &str = "\
Household water use by district
Prepared by the statistics office,,,
Note: provisional figures for 2023,,,

district,households,litres_per_day,remark
Noord,1200,132.5,
Oost,980,128.0,estimated
Zuid,1430,,meter fault
West,1105,140.25,

Source: statistics office,,,
* litres per household,,,
";

/// A lake of the generated fixtures (xlsx with two sheets, parquet, sqlite, …), the
/// report CSV, JSON lines, a directory holding a file named `rows`, and notes; indexed
/// beside it. Returns (tmp, lake, index).
pub(crate) fn table_lake() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let lake = tmp.path().join("lake");
    crate::fixtures::write_all(&lake);
    std::fs::write(lake.join("water.csv"), REPORT).unwrap();
    std::fs::write(
        lake.join("events.jsonl"),
        "{\"id\":1,\"kind\":\"open\"}\n{\"id\":2,\"kind\":\"close\",\"by\":{\"user\":\"ann\"}}\n",
    )
    .unwrap();
    std::fs::create_dir_all(lake.join("odd")).unwrap();
    std::fs::write(lake.join("odd/rows"), "name,n\nrowfile,1\n").unwrap();
    std::fs::write(lake.join("notes.md"), "# Notes\n\nProse about the lake.\n").unwrap();
    let idx = index_into(tmp.path(), &lake);
    (tmp, lake, idx)
}

fn head_json(cwd: &Path, args: &[&str]) -> Value {
    let mut all = vec!["head", "--json"];
    all.extend_from_slice(args);
    let out = run_ok(cwd, &all);
    serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{out:?}: {e}"))
}

/// The stderr of a `lakestar` run that must fail with exit 2.
fn refused(cwd: &Path, args: &[&str]) -> String {
    let out = run(cwd, args);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    err
}

fn row(v: &Value, i: usize) -> Vec<Value> {
    v["rows"][i].as_array().unwrap().clone()
}

#[test]
fn head_shows_the_first_rows_of_every_tabular_format_as_described() {
    let (_tmp, lake, idx) = table_lake();
    let i = ["--index", idx.to_str().unwrap()];

    // The report's real header, below its titles and note; the footer is not a row.
    let w = head_json(&lake, &["water.csv", "-n", "2", i[0], i[1]]);
    assert_eq!(w["path"], "water.csv");
    assert_eq!(w["format"], "csv");
    assert_eq!(
        w["columns"],
        json!(["district", "households", "litres_per_day", "remark"])
    );
    assert_eq!(
        w["rows"],
        json!([
            ["Noord", "1200", "132.5", null],
            ["Oost", "980", "128.0", "estimated"]
        ])
    );
    assert_eq!((w["n"].as_u64(), &w["more"]), (Some(2), &json!(true)));
    let all = head_json(&lake, &["water.csv"]);
    assert_eq!(all["rows"].as_array().unwrap().len(), 4, "{all}");
    assert_eq!(all["more"], false);
    assert_eq!(row(&all, 3)[0], "West");

    // A workbook: the first sheet under its title row, the second by --table.
    let x = head_json(&lake, &["report.xlsx", "-n", "3"]);
    assert_eq!(x["tables"], json!(["Sales", "Targets"]));
    assert_eq!(x["table"], "Sales");
    assert_eq!(x["columns"], json!(["region", "quarter", "revenue"]));
    assert_eq!(row(&x, 0), [json!("emea"), json!("1"), json!("1000")]);
    assert_eq!(x["more"], true);
    let t = head_json(&lake, &["report.xlsx", "--table", "Targets"]);
    assert_eq!(t["table"], "Targets");
    assert_eq!(t["columns"], json!(["region", "target"]));
    assert_eq!(t["rows"].as_array().unwrap().len(), 4);
    assert_eq!(row(&t, 3), [json!("latam"), json!("5000")]);

    // Parquet, with a null in the first row.
    let p = head_json(&lake, &["sales.parquet", "-n", "2"]);
    assert_eq!(p["format"], "parquet");
    assert_eq!(p["columns"], json!(["order_id", "amount", "region"]));
    assert_eq!(row(&p, 0), [json!("0"), Value::Null, json!("emea")]);
    assert_eq!(row(&p, 1), [json!("1"), json!("0.0"), json!("apac")]);

    // SQLite: tables and views, any one by name.
    let s = head_json(&lake, &["shop.sqlite", "--table", "orders", "-n", "1"]);
    assert_eq!(s["tables"], json!(["customers", "orders", "big_orders"]));
    assert_eq!(
        s["columns"],
        json!(["id", "customer_id", "total", "placed"])
    );
    assert_eq!(row(&s, 0)[3], "2022-01-01");

    // JSON lines: keys as columns, nested values as JSON text, missing keys null.
    let j = head_json(&lake, &["events.jsonl"]);
    assert_eq!(j["columns"], json!(["id", "kind", "by"]));
    assert_eq!(
        j["rows"],
        json!([["1", "open", null], ["2", "close", "{\"user\":\"ann\"}"]])
    );

    // A compressed CSV shows the rows of its content; an archive of files says what to do.
    let z = head_json(&lake, &["sales.csv.gz", "-n", "1"]);
    assert_eq!(z["columns"][0], "order_id");
    assert_eq!(row(&z, 0)[..2], [json!("0"), json!("emea")]);
    let e = refused(&lake, &["head", "bundle.zip"]);
    assert!(e.contains("extract a member"), "{e}");

    // The text table: aligned columns, the table named, more rows announced.
    let text = run_ok(&lake, &["head", "report.xlsx", "-n", "2"]);
    assert!(text.contains("sheet \"Sales\" (1 of 2"), "{text}");
    let header = text.lines().find(|l| l.contains("region")).unwrap();
    assert!(
        header.contains("quarter") && header.contains("revenue"),
        "{text}"
    );
    assert!(text.contains("more rows follow"), "{text}");
    let one = run_ok(&lake, &["head", "odd/rows"]);
    assert!(one.ends_with("\n1 row\n"), "{one}");
    let first = text.lines().find(|l| l.contains("emea")).unwrap();
    assert_eq!(
        first.find('┆'),
        header.find('┆'),
        "columns line up:\n{text}"
    );

    // Mistakes say what to do, with exit code 2.
    let e = refused(&lake, &["head", "report.xlsx", "--table", "Budget"]);
    assert!(e.contains("1 \"Sales\", 2 \"Targets\""), "{e}");
    let e = refused(&lake, &["head", "notes.md"]);
    assert!(e.contains("not a table") && e.contains("describe"), "{e}");
    for n in ["0", "1001"] {
        let e = refused(&lake, &["head", "water.csv", "-n", n]);
        assert!(e.contains("between 1 and 1000"), "{e}");
    }
    let e = refused(&lake, &["head", "odd"]);
    assert!(e.contains("is a directory"), "{e}");
    let e = refused(&lake, &["head", "nope.csv"]);
    assert!(e.contains("is not a file"), "{e}");
}

#[test]
fn head_reads_files_of_a_shared_lake_with_or_without_an_index() {
    let ctx = shared_lakes().join("dabstep/context");
    let tmp = tempfile::tempdir().unwrap();
    // Without an index: the file analyzed on the fly, named as given.
    let fees = ctx.join("fees.json");
    let f = head_json(tmp.path(), &[fees.to_str().unwrap(), "-n", "2"]);
    assert_eq!(f["format"], "json");
    assert_eq!(f["path"], fees.to_str().unwrap());
    let cols: Vec<&str> = f["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert_eq!(cols[..3], ["ID", "card_scheme", "account_type"]);
    assert_eq!(
        row(&f, 0)[..3],
        [json!("1"), json!("TransactPlus"), json!("[]")]
    );
    assert_eq!(f["more"], true);

    // With one: the lake-relative path, from inside the lake's index.
    let idx = index_into(tmp.path(), &ctx);
    let p = head_json(
        tmp.path(),
        &[
            "payments_sample.csv",
            "--index",
            idx.to_str().unwrap(),
            "-n",
            "1",
        ],
    );
    assert_eq!(p["path"], "payments_sample.csv");
    assert_eq!(p["columns"][0], "psp_reference");
    assert_eq!(
        row(&p, 0)[..3],
        [
            json!("20034594130"),
            json!("Crossfit_Hanna"),
            json!("NexPay")
        ]
    );
}

#[test]
fn the_mcp_head_tool_answers_as_the_cli() {
    let (_tmp, lake, idx) = table_lake();
    let mut s = Session::start(&idx, &[], &[]);
    let v = s.ok(
        "head",
        json!({"path": "report.xlsx", "table": "Targets", "n": 2}),
    );
    assert_eq!(v["table"], "Targets");
    assert_eq!(v["rows"], json!([["emea", "5000"], ["apac", "5000"]]));
    assert_eq!(v["more"], true);
    assert_eq!(
        v,
        head_json(&lake, &["report.xlsx", "--table", "Targets", "-n", "2"])
    );
    let w = s.ok("head", json!({"path": "water.csv"}));
    assert_eq!(w["n"], 20);
    assert_eq!(w["columns"][0], "district");
    for (args, says) in [
        (json!({"path": "water.csv", "n": 0}), "between 1 and 1000"),
        (
            json!({"path": "water.csv", "n": 1001}),
            "between 1 and 1000",
        ),
        (json!({"path": "../x.csv"}), "`..` is refused"),
        (json!({"path": "nope.csv"}), "not in the index"),
        (json!({"path": "notes.md"}), "not a table"),
        (
            json!({"path": "shop.sqlite", "table": "x"}),
            "1 \"customers\", 2 \"orders\"",
        ),
    ] {
        let e = s.err("head", args.clone());
        assert!(e.contains(says), "{args}: {e}");
    }
    s.close();
}
