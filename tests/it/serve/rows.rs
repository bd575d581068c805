//! `GET /files/{path}/rows`: the first rows of a table over HTTP, the same answer as
//! `lakestar head --json`.

use super::{assert_error, raw_get, Http, Server};
use crate::common::run_ok;
use crate::head::table_lake;
use serde_json::{json, Value};

#[test]
fn rows_of_a_table_over_http() {
    let (_tmp, lake, idx) = table_lake();
    let server = Server::start(&idx, &["--token", "t0ken"]);
    let http = Http::new(&server).with_token("t0ken");

    let (st, v) = http.get("/files/water.csv/rows?n=2");
    assert_eq!(st, 200, "{v}");
    assert_eq!(
        v,
        json!({
            "path": "water.csv", "format": "csv", "table": "water", "tables": ["water"],
            "columns": ["district", "households", "litres_per_day", "remark"],
            "rows": [["Noord", "1200", "132.5", null], ["Oost", "980", "128.0", "estimated"]],
            "n": 2, "more": true
        })
    );
    // The same answer as the CLI's.
    let cli: Value =
        serde_json::from_str(&run_ok(&lake, &["head", "--json", "water.csv", "-n", "2"])).unwrap();
    assert_eq!(v, cli);

    let (st, v) = http.get("/files/report.xlsx/rows?table=Targets");
    assert_eq!(st, 200, "{v}");
    assert_eq!((&v["table"], &v["n"]), (&json!("Targets"), &json!(20)));
    assert_eq!(v["rows"][0], json!(["emea", "5000"]));
    // By its number, 1-based in the order of `tables`: the same answer.
    let i = v["tables"]
        .as_array()
        .unwrap()
        .iter()
        .position(|t| t == "Targets");
    let (st, by_number) = http.get(&format!("/files/report.xlsx/rows?table={}", i.unwrap() + 1));
    assert_eq!((st, &by_number), (200, &v));
    let (_, v) = http.get("/files/shop.sqlite/rows?table=customers&n=1");
    assert_eq!(v["rows"], json!([["0", "c0", "NL"]]), "{v}");

    // A file named `rows` is described; its own rows are one `/rows` further.
    let (st, v) = http.get("/files/odd/rows");
    assert_eq!(st, 200, "{v}");
    assert_eq!(v["path"], "odd/rows");
    assert!(v["text"].as_str().unwrap().contains("rowfile"), "{v}");
    let (st, v) = http.get("/files/odd/rows/rows");
    assert_eq!(st, 200, "{v}");
    assert_eq!(v["rows"], json!([["rowfile", "1"]]));

    for bad in ["n=0", "n=1001", "n=-1", "n=ten"] {
        let (st, v) = http.get(&format!("/files/water.csv/rows?{bad}"));
        assert_eq!(
            (st, &v["error"]["code"]),
            (400, &json!("bad_request")),
            "{bad}: {v}"
        );
    }
    let answer = http.get("/files/water.csv/rows?n=1001");
    assert!(answer.1["error"]["message"]
        .as_str()
        .unwrap()
        .contains("between 1 and 1000"));
    assert_error(
        &http.get("/files/report.xlsx/rows?table=Budget"),
        400,
        "unknown_table",
    );
    assert_error(&http.get("/files/notes.md/rows"), 400, "not_tabular");
    assert_error(&http.get("/files/nope.csv/rows"), 404, "not_found");
    for target in [
        "/files/../outside.csv/rows",
        "/files/odd/../../x.csv/rows",
        "/files/%2e%2e/x.csv/rows",
    ] {
        let (st, body) = raw_get(&server.addr, target, &["Authorization: Bearer t0ken"]);
        assert_eq!(st, 403, "{target}: {body}");
        assert!(body.contains("forbidden_path"), "{target}: {body}");
    }
    // The token guards the route.
    assert_error(
        &Http::new(&server).get("/files/water.csv/rows"),
        401,
        "unauthorized",
    );
    let (st, _) = raw_get(
        &server.addr,
        "/files/water.csv/rows",
        &["Authorization: Bearer no"],
    );
    assert_eq!(st, 401);
}
