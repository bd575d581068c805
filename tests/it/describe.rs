//! `lakestar describe` shows the facts an analyst needs, from the index or on the fly.

use crate::common::*;
use serde_json::Value;
use std::path::PathBuf;

fn indexed_dabstep() -> (tempfile::TempDir, PathBuf) {
    index_shared("dabstep/context")
}

fn describe_json(tmp: &std::path::Path, idx: &std::path::Path, file: &str) -> Value {
    let out = run_ok(
        tmp,
        &["describe", file, "--index", idx.to_str().unwrap(), "--json"],
    );
    serde_json::from_str(&out).unwrap()
}

#[test]
fn merchant_category_codes_columns_types_examples_rows() {
    let (tmp, idx) = indexed_dabstep();
    let v = describe_json(tmp.path(), &idx, "merchant_category_codes.csv");
    assert_eq!(v["indexed"], true);
    assert_eq!(v["stale"], false);
    let t = &v["description"]["content"];
    assert_eq!(t["kind"], "table");
    assert_eq!(t["rows"], 769);
    assert_eq!(t["header"], true);
    let cols = t["columns"].as_array().unwrap();
    let names: Vec<&str> = cols.iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["Unnamed: 0", "mcc", "description"]);
    let types: Vec<&str> = cols.iter().map(|c| c["type"].as_str().unwrap()).collect();
    // Merchant category codes are zero-padded to four digits (`0742`): labels.
    assert_eq!(types, ["integer", "identifier", "text"]);
    assert_eq!(cols[1]["examples"][0], "1520");
    assert_eq!(
        cols[2]["examples"][0],
        "General Contractors - Residential and Commercial"
    );
    assert_eq!(cols[0]["min"], "0");
    assert_eq!(cols[0]["max"], "768");

    let text = run_ok(
        tmp.path(),
        &[
            "describe",
            "merchant_category_codes.csv",
            "--index",
            idx.to_str().unwrap(),
        ],
    );
    assert!(
        text.starts_with("merchant_category_codes.csv — CSV, 26.6 KB, 769 rows × 3 columns"),
        "{text}"
    );
    assert!(
        text.contains("mcc") && text.contains("e.g. 1520, 1711, 1731"),
        "{text}"
    );
    assert!(text.contains("\"Electrical Contractors\""), "{text}");
}

#[test]
fn fees_json_is_a_list_of_1000_objects_with_typed_keys() {
    let (tmp, idx) = indexed_dabstep();
    let v = describe_json(tmp.path(), &idx, "fees.json");
    let j = &v["description"]["content"];
    assert_eq!(j["kind"], "json");
    assert_eq!(j["root"], "array of 1000 objects");
    let paths = j["paths"].as_array().unwrap();
    let find = |p: &str| {
        paths
            .iter()
            .find(|x| x["path"] == p)
            .unwrap_or_else(|| panic!("no path {p}"))
    };
    let main_type = |p: &str| find(p)["types"][0][0].as_str().unwrap().to_string();
    assert_eq!(main_type("[].ID"), "integer");
    assert_eq!(main_type("[].card_scheme"), "string");
    assert_eq!(main_type("[].rate"), "integer");
    assert_eq!(main_type("[].fixed_amount"), "float");
    for list in ["[].account_type", "[].aci", "[].merchant_category_code"] {
        assert_eq!(main_type(list), "array", "{list}");
        assert_eq!(find(list)["count"], 1000);
    }
    assert_eq!(main_type("[].merchant_category_code[]"), "integer");
    assert_eq!(main_type("[].aci[]"), "string");
    // Nullable keys show both types.
    let cd: Vec<&str> = find("[].capture_delay")["types"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t[0].as_str().unwrap())
        .collect();
    assert!(cd.contains(&"null") && cd.contains(&"string"), "{cd:?}");
    // Children follow their parent in the listing.
    let order: Vec<&str> = paths.iter().map(|p| p["path"].as_str().unwrap()).collect();
    let at = order.iter().position(|p| *p == "[].account_type").unwrap();
    assert_eq!(order[at + 1], "[].account_type[]");

    let text = run_ok(
        tmp.path(),
        &["describe", "fees.json", "--index", idx.to_str().unwrap()],
    );
    assert!(
        text.starts_with("fees.json — JSON, 531.1 KB, array of 1000 objects"),
        "{text}"
    );
    assert!(
        text.contains("[].merchant_category_code[]  integer"),
        "{text}"
    );
}

#[test]
fn manual_md_outline() {
    let (tmp, idx) = indexed_dabstep();
    let v = describe_json(tmp.path(), &idx, "manual.md");
    let t = &v["description"]["content"];
    assert_eq!(t["kind"], "text");
    assert_eq!(t["markdown"], true);
    let outline: Vec<(u64, &str)> = t["outline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| (h["level"].as_u64().unwrap(), h["text"].as_str().unwrap()))
        .collect();
    assert_eq!(
        outline[0],
        (
            1,
            "Merchant Guide to Optimizing Payment Processing and Minimizing Fees"
        )
    );
    for want in [
        (2, "1. Introduction"),
        (2, "2. Account Type"),
        (2, "5. Understanding Payment Processing Fees"),
        (3, "5.1 Best Practices for Minimizing Transaction Costs"),
        (2, "10. Contact Information"),
    ] {
        assert!(outline.contains(&want), "{want:?} missing from {outline:?}");
    }
    let tables = t["tables"].as_array().unwrap();
    assert!(
        tables.iter().any(|x| x["columns"][0] == "Account Type"),
        "{tables:?}"
    );
    let text = run_ok(
        tmp.path(),
        &["describe", "manual.md", "--index", idx.to_str().unwrap()],
    );
    assert!(
        text.contains("outline:") && text.contains("## 2. Account Type"),
        "{text}"
    );
}

#[test]
fn rendering_is_deterministic_and_cache_faithful() {
    let (tmp, idx) = indexed_dabstep();
    let lake = shared_lakes().join("dabstep/context");
    for f in [
        "fees.json",
        "manual.md",
        "merchant_category_codes.csv",
        "merchant_data.json",
    ] {
        let a = run_ok(
            tmp.path(),
            &["describe", f, "--index", idx.to_str().unwrap()],
        );
        let b = run_ok(
            tmp.path(),
            &["describe", f, "--index", idx.to_str().unwrap()],
        );
        assert_eq!(a, b);
        // On the fly (no index in reach) gives the same text as the stored description.
        let abs = lake.join(f);
        let fly = run_ok(tmp.path(), &["describe", abs.to_str().unwrap()]);
        assert_eq!(fly.replace(abs.to_str().unwrap(), f), a, "{f}");
    }
}

#[test]
fn describe_outside_any_index_analyzes_on_the_fly() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("t.tsv"),
        "city\tpop\tfounded\nParis\t2100000\t1950-01-01\nLyon\t520000\t1943-01-01\n",
    )
    .unwrap();
    let out = run_ok(tmp.path(), &["describe", "t.tsv", "--json"]);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["indexed"], false);
    assert_eq!(v["format"], "tsv");
    assert_eq!(v["description"]["content"]["rows"], 2);
    assert_eq!(v["description"]["content"]["columns"][1]["type"], "integer");
    assert_eq!(v["description"]["content"]["columns"][2]["type"], "date");

    let missing = run(tmp.path(), &["describe", "nope.csv"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("nope.csv does not exist"));
}
