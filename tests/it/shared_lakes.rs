//! Every file of every shared lake is described without an error, the stored
//! descriptions decode and render, and spot checks hold real facts.

use crate::common::*;
use lakestar::index::analyze::{render, RenderOptions};
use serde_json::Value;
use std::path::Path;

fn describe(cwd: &Path, idx: &Path, file: &str) -> Value {
    let out = run_ok(
        cwd,
        &["describe", file, "--index", idx.to_str().unwrap(), "--json"],
    );
    serde_json::from_str(&out).unwrap()
}

#[test]
fn every_shared_file_is_described_and_spot_checks_hold() {
    let tmp = tempfile::tempdir().unwrap();
    let idx = tmp.path().join("idx");
    let lakes = shared_lakes();
    let v = index_json(
        &lakes.canonicalize().unwrap(),
        &["--index", idx.to_str().unwrap()],
    );
    let total = count_files(&lakes);
    // The one class of file that cannot be described is an encrypted workbook: its
    // error says so, and every other file is described.
    let cat = check_catalog(&idx);
    let files = cat.load_files().unwrap();
    assert_eq!(files.len() as u64, total);
    let encrypted = files
        .values()
        .filter(|row| row.state.as_str() != "ok")
        .inspect(|row| {
            let error = row.error.as_deref().unwrap_or_default();
            assert!(
                error.contains("password protected"),
                "{} is not described: {error}",
                row.path
            );
        })
        .count() as u64;
    assert_counts(&v, &[("files_seen", total), ("errors", encrypted)]);

    // Every other row's description decodes and renders within the budget.
    for row in files.values().filter(|row| row.state.as_str() == "ok") {
        let d = cat
            .description(row.hash.as_ref().unwrap(), row.analyzer.as_deref().unwrap())
            .unwrap()
            .unwrap_or_else(|| panic!("{} has no description", row.path));
        let text = render(&row.path, &d, RenderOptions::default());
        assert!(text.starts_with(&row.path), "{text}");
        assert!(text.len() <= 2048, "{}: {} bytes", row.path, text.len());
        assert!(
            d.format != lakestar::index::Format::Binary,
            "{} undetected",
            row.path
        );
    }
    drop(cat);

    let t = tmp.path();
    // DABench: US dates become a typed, ranged date column; time coverage follows.
    let q4 = describe(t, &idx, "dabench/da-dev-tables/2014_q4.csv");
    let date = &q4["description"]["content"]["columns"][0];
    assert_eq!(date["type"], "date");
    assert_eq!(date["date_format"], "%m/%d/%Y");
    assert_eq!(
        (date["min"].as_str(), date["max"].as_str()),
        (Some("2014-10-01"), Some("2014-12-31"))
    );
    assert_eq!(q4["time_coverage"]["start"], "2014-10-01");
    let y2015 = describe(t, &idx, "dabench/da-dev-tables/2015.csv");
    assert_eq!(y2015["time_coverage"]["source"], "path");

    // DA-Code: UCI data without a header, YAML, NumPy, PNG, a fixed-width listing.
    let abalone = describe(
        t,
        &idx,
        "dacode/tasks/ml-competition-009/source/abalone.data",
    );
    let c = &abalone["description"]["content"];
    assert_eq!(
        (c["rows"].as_u64(), c["header"].as_bool()),
        (Some(4177), Some(false))
    );
    assert_eq!(c["columns"].as_array().unwrap().len(), 9);
    assert_eq!(c["columns"][0]["type"], "categorical");
    let yaml = describe(t, &idx, "dacode/tasks/plot-bar-006/source/plot.yaml");
    assert_eq!(yaml["format"], "yaml");
    let paths: Vec<&str> = yaml["description"]["content"]["paths"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["path"].as_str().unwrap())
        .collect();
    assert!(
        paths.contains(&"xtick_labels[]") && paths.contains(&"graph_title"),
        "{paths:?}"
    );
    let npy = describe(t, &idx, "dacode/tasks/plot-bar-006/gold/result.npy");
    let arr = &npy["description"]["content"]["arrays"][0];
    assert_eq!(arr["shape"], serde_json::json!([1, 10]));
    assert_eq!(arr["dtype"], "<i8");
    let png = describe(t, &idx, "dacode/tasks/plot-bar-006/gold/team.png");
    let m = &png["description"]["content"];
    assert_eq!(
        (m["width"].as_u64(), m["height"].as_u64()),
        (Some(3600), Some(2400))
    );
    let index = describe(t, &idx, "dacode/tasks/ml-competition-009/source/Index");
    assert_eq!(index["format"], "fixed-width");
    assert_eq!(index["description"]["content"]["rows"], 3);

    // DABStep: the payments sample keeps its 50 rows and typed columns.
    let pay = describe(t, &idx, "dabstep/context/payments_sample.csv");
    let c = &pay["description"]["content"];
    assert_eq!(c["rows"], 50);
    let cols = c["columns"].as_array().unwrap();
    assert_eq!(cols.len(), 21);
    let ty = |n: &str| {
        cols.iter().find(|c| c["name"] == n).unwrap()["type"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(ty("eur_amount"), "float");
    assert_eq!(ty("is_credit"), "boolean");
    assert_eq!(ty("card_scheme"), "categorical");
    assert_eq!(ty("ip_address"), "identifier");
}
