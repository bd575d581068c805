//! One generated fixture per format, indexed through the CLI: each description states
//! the facts its writer put in.

use crate::common::*;
use crate::fixtures::{self, SALES_ROWS};
use serde_json::Value;

#[test]
fn every_generated_format_is_described_truthfully() {
    let tmp = tempfile::tempdir().unwrap();
    let lake = tmp.path().join("lake");
    fixtures::write_all(&lake);
    let total = count_files(&lake);
    let v = index_json(&lake, &[]);
    assert_counts(&v, &[("files_seen", total), ("errors", 0)]);
    let d = |f: &str| -> Value {
        let v: Value = serde_json::from_str(&run_ok(&lake, &["describe", f, "--json"])).unwrap();
        assert_eq!(v["state"], "ok", "{f}: {v}");
        v
    };
    let content = |f: &str| d(f)["description"]["content"].clone();
    let names = |cols: &Value| -> Vec<String> {
        cols.as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap().to_string())
            .collect()
    };

    let p = content("sales.parquet");
    let t = &p["tables"][0];
    assert_eq!(t["rows"], 1000);
    assert_eq!(names(&t["columns"]), ["order_id", "amount", "region"]);
    assert_eq!(t["columns"][1]["nulls"], 100);
    assert!(p["notes"].to_string().contains("2 row groups"), "{p}");

    let x = content("report.xlsx");
    let sales = &x["tables"][0];
    assert_eq!(
        (
            sales["name"].as_str(),
            sales["header_row"].as_u64(),
            sales["rows"].as_u64()
        ),
        (Some("Sales"), Some(3), Some(40))
    );
    assert_eq!(names(&sales["columns"]), ["region", "quarter", "revenue"]);
    assert!(
        sales["notes"].to_string().contains("Quarterly sales 2023"),
        "{sales}"
    );
    assert_eq!(x["tables"][1]["name"], "Targets");

    let s = content("shop.sqlite");
    let tables: Vec<(String, String, u64)> = s["tables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap().into(),
                t["kind"].as_str().unwrap().into(),
                t["rows"].as_u64().unwrap(),
            )
        })
        .collect();
    assert!(
        tables.contains(&("customers".into(), "table".into(), 100)),
        "{tables:?}"
    );
    assert!(
        tables.contains(&("orders".into(), "table".into(), 250)),
        "{tables:?}"
    );
    assert!(
        tables.iter().any(|t| t.0 == "big_orders" && t.1 == "view"),
        "{tables:?}"
    );

    let h = content("rates.html");
    assert_eq!(h["tables"].as_array().unwrap().len(), 2);
    assert_eq!(h["tables"][0]["name"], "EUR rates");
    assert_eq!(names(&h["tables"][0]["columns"]), ["currency", "rate"]);
    assert_eq!(h["tables"][1]["rows"], 2);

    for (f, container) in [("sales.csv.gz", "gzip"), ("sales.csv.zst", "zstd")] {
        let a = content(f);
        assert_eq!(a["container"], container);
        assert_eq!(a["described"][0][1]["content"]["rows"], SALES_ROWS, "{f}");
    }
    let z = content("bundle.zip");
    assert_eq!(z["container"], "zip");
    let described: Vec<&str> = z["described"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m[0].as_str().unwrap())
        .collect();
    assert_eq!(described, ["data/sales.csv", "meta.json"]);
    let tgz = content("bundle.tar.gz");
    assert_eq!(
        (tgz["container"].as_str(), tgz["members_total"].as_u64()),
        (Some("tar.gz"), Some(2))
    );

    let npy = content("weights.npy");
    assert_eq!(
        (
            npy["arrays"][0]["dtype"].as_str(),
            npy["arrays"][0]["shape"].clone()
        ),
        (Some("<f8"), serde_json::json!([2, 3]))
    );
    let npz = content("arrays.npz");
    let arrays: Vec<&str> = npz["arrays"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(arrays, ["x", "w"]);

    let st = d("station.txt");
    assert_eq!(st["format"], "fixed-width");
    let c = &st["description"]["content"];
    assert_eq!(c["rows"], 4);
    assert_eq!(c["columns"][1]["unit"], "degC");
    assert_eq!(st["time_coverage"]["start"], "2019-03-01");

    for f in ["cities-utf16.csv", "cities-latin1.csv"] {
        let c = content(f);
        assert_eq!(c["columns"][0]["examples"][0], "Li\u{e8}ge", "{f}");
        assert!(c["encoding"].is_string(), "{f}");
    }
    let pre = content("with-preamble.csv");
    assert_eq!(
        (pre["skipped_lines"].as_u64(), pre["rows"].as_u64()),
        (Some(3), Some(SALES_ROWS as u64))
    );
    assert_eq!(pre["columns"][3]["type"], "date");

    let paths = |f: &str| -> Vec<String> {
        content(f)["paths"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["path"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(paths("config.yaml").contains(&"limits.memory_mb".to_string()));
    assert!(paths("settings.toml").contains(&"source[].rows".to_string()));
    assert!(paths("catalog.xml").contains(&"catalog.book[].@id".to_string()));

    let png = content("chart.png");
    assert_eq!(
        (png["width"].as_u64(), png["height"].as_u64()),
        (Some(640), Some(480))
    );
}
