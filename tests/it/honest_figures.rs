//! Figures computed from a sample say so, in the JSON and in the text; `index --full`
//! makes them exact, Parquet included.

use crate::common::{assert_counts, index_json, run_ok};
use serde_json::Value;
use std::fs;
use std::path::Path;
use std::sync::Arc;

/// 30,000 rows in three row groups: `id` unique, `code` 5,000 distinct strings.
fn parquet(path: &Path) {
    use parquet::data_type::{ByteArray, ByteArrayType, Int64Type};
    use parquet::file::properties::WriterProperties;
    use parquet::file::writer::SerializedFileWriter;
    let schema = Arc::new(
        parquet::schema::parser::parse_message_type(
            "message m { required int64 seq; required binary code (UTF8); }",
        )
        .unwrap(),
    );
    let props = Arc::new(WriterProperties::builder().build());
    let mut w = SerializedFileWriter::new(fs::File::create(path).unwrap(), schema, props).unwrap();
    for group in 0..3i64 {
        let ids: Vec<i64> = (group * 10_000..(group + 1) * 10_000).collect();
        let codes: Vec<ByteArray> = ids
            .iter()
            .map(|i| ByteArray::from(format!("c{:05}", i % 5_000).as_str()))
            .collect();
        let mut rg = w.next_row_group().unwrap();
        let mut c = rg.next_column().unwrap().unwrap();
        c.typed::<Int64Type>()
            .write_batch(&ids, None, None)
            .unwrap();
        c.close().unwrap();
        let mut c = rg.next_column().unwrap().unwrap();
        c.typed::<ByteArrayType>()
            .write_batch(&codes, None, None)
            .unwrap();
        c.close().unwrap();
        rg.close().unwrap();
    }
    w.close().unwrap();
}

fn described(lake: &Path, file: &str) -> (Value, String) {
    let json: Value = serde_json::from_str(&run_ok(lake, &["describe", file, "--json"])).unwrap();
    let text = run_ok(lake, &["describe", file]);
    (json["description"]["content"].clone(), text)
}

fn line<'a>(text: &'a str, column: &str) -> &'a str {
    text.lines()
        .find(|l| l.trim_start().starts_with(&format!("{column} ")))
        .unwrap_or_else(|| panic!("no line for {column} in {text}"))
}

#[test]
fn sampled_figures_are_marked_and_full_makes_them_exact() {
    let tmp = tempfile::tempdir().unwrap();
    let lake = tmp.path().join("lake");
    fs::create_dir_all(&lake).unwrap();
    parquet(&lake.join("events.parquet"));
    let mut csv = String::from("id,amount\n");
    for i in 0..50_000u32 {
        csv.push_str(&format!("{i},{}\n", i % 977));
    }
    fs::write(lake.join("big.csv"), &csv).unwrap();
    let budget = ["--read-budget", "262144"];
    assert_counts(&index_json(&lake, &budget), &[("analyzed", 2)]);

    // Parquet: the first 10,000 rows are a sample; the footer's figures are exact.
    let (t, text) = described(&lake, "events.parquet");
    let id = &t["tables"][0]["columns"][0];
    assert_eq!(id["distinct_exact"], false, "{id}");
    assert_eq!(id["estimated"], true);
    assert_eq!(id["exact"], serde_json::json!(["nulls", "range"]));
    assert_eq!(
        (id["min"].as_str(), id["max"].as_str()),
        (Some("0"), Some("29999"))
    );
    let l = line(&text, "seq");
    assert!(
        l.contains("0 … 29999") && l.contains("≥10,000 distinct") && l.contains("mean ~"),
        "{l}"
    );
    assert!(
        text.contains("figures from a sample of 10000 rows"),
        "{text}"
    );
    // The CSV past the budget: every column estimated, `~` before its range and mean.
    let (t, text) = described(&lake, "big.csv");
    assert!(t["columns"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["estimated"] == true));
    let l = line(&text, "amount");
    assert!(l.contains("~0 … ~976") && l.contains("mean ~"), "{l}");

    // --full re-describes both, exactly.
    let mut full = budget.to_vec();
    full.push("--full");
    assert_counts(&index_json(&lake, &full), &[("analyzed", 2)]);
    let (t, text) = described(&lake, "events.parquet");
    let [id, code] = [&t["tables"][0]["columns"][0], &t["tables"][0]["columns"][1]];
    assert!(
        id.get("estimated").is_none() && id.get("exact").is_none(),
        "{id}"
    );
    assert_eq!(id["mean"], 14_999.5);
    // Past the exact cap, the sketch (flagged); under it, exact over every row.
    assert_eq!(id["distinct_exact"], false);
    assert!(
        id["distinct"].as_u64().unwrap().abs_diff(30_000) < 1_500,
        "{id}"
    );
    assert_eq!(
        (code["distinct"].as_u64(), code["distinct_exact"].as_bool()),
        (Some(5_000), Some(true))
    );
    let l = line(&text, "seq");
    assert!(l.contains("~30,") || l.contains("~29,"), "{l}");
    assert!(
        !l.contains("mean ~") && !text.contains("figures from a sample"),
        "{text}"
    );
    let (t, _) = described(&lake, "big.csv");
    assert!(t["columns"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c.get("estimated").is_none()));
    // Nothing sampled is left for another --full run.
    assert_counts(&index_json(&lake, &full), &[("analyzed", 0)]);
}
