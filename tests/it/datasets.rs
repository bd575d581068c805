//! Tables that span many files: a Hive-partitioned Parquet dataset (pyarrow), Delta
//! tables (`deltalake`: versions, a multi-part and a V2 checkpoint, deletion vectors)
//! and Iceberg tables in a local SQL catalog (`pyiceberg`: appends, an overwrite and a
//! delete), written by real Python, indexed, and each described as one table; their
//! members are not hits of their own, and their load lines read them.

use crate::common::*;
use serde_json::Value;
use std::path::Path;

/// The fixture script (`datasets/make_tables.py`): writes the tables into the lake, the
/// Iceberg catalog's database into `scratch`; prints the Iceberg tables' snapshot ids
/// and metadata files.
const MAKE: &str = include_str!("datasets/make_tables.py");

fn python(cwd: &Path, code: &str, args: &[&str]) -> String {
    run_python(cwd, code, args)
}

fn describe(lake: &Path, path: &str) -> Value {
    serde_json::from_str(&run_ok(lake, &["describe", path, "--json"])).unwrap()
}

fn column_names(t: &Value) -> Vec<(String, String, bool)> {
    t["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap().to_string(),
                c["type"].as_str().unwrap().to_string(),
                c["partition"].as_bool().unwrap_or(false),
            )
        })
        .collect()
}

fn partition_values(t: &Value, name: &str) -> Vec<String> {
    t["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("no partition {name}: {t}"))["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

/// Run the fixture script in `cwd`: the tables into `lake`, the Iceberg catalog into
/// `scratch`; what it printed.
fn make(cwd: &Path, lake: &Path, scratch: &Path) -> Value {
    serde_json::from_str(&python(
        cwd,
        MAKE,
        &[lake.to_str().unwrap(), scratch.to_str().unwrap()],
    ))
    .unwrap()
}

/// The column `name` of a table: (min, max, nulls).
fn column<'a>(t: &'a Value, name: &str) -> (&'a str, &'a str, &'a Value) {
    let c = t["columns"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no column {name}: {t}"));
    (
        c["min"].as_str().unwrap_or("-"),
        c["max"].as_str().unwrap_or("-"),
        &c["nulls"],
    )
}

/// Run the table's load line in the lake with the venv's Python: its row count.
fn loaded_rows(lake: &Path, load: &str) -> u64 {
    let code = format!(
        "import pandas as pd, pyarrow.dataset, deltalake, pyiceberg.table\nprint(len({load}))"
    );
    python(lake, &code, &[]).trim().parse().unwrap()
}

#[test]
fn hive_delta_and_iceberg_tables_are_each_one_described_table() {
    let tmp = tempfile::tempdir().unwrap();
    let (lake, scratch) = (tmp.path().join("lake"), tmp.path().join("scratch"));
    std::fs::create_dir_all(&lake).unwrap();
    std::fs::create_dir_all(&scratch).unwrap();
    std::fs::write(
        lake.join("notes.csv"),
        "topic,owner\nsales,ann\norders,bob\n",
    )
    .unwrap();
    // Sidecar files named `*.metadata.json` are not an Iceberg table's metadata.
    std::fs::create_dir_all(lake.join("photos/metadata")).unwrap();
    for i in 0..3 {
        std::fs::write(
            lake.join(format!("photos/metadata/img{i}.metadata.json")),
            format!("{{\"camera\": \"x\", \"iso\": {i}00}}"),
        )
        .unwrap();
    }
    let made = make(tmp.path(), &lake, &scratch);
    index_json(&lake, &[]);

    // Hive: partitions from the paths, figures from the footers.
    let v = describe(&lake, "sales/");
    assert_eq!(v["path"], "sales/");
    let t = &v["table"]["description"];
    assert_eq!(t["kind"], "hive");
    assert_eq!(t["rows"], 5);
    assert_eq!(t["data_files"], 5);
    assert_eq!(
        column_names(t),
        [
            ("amount".into(), "DOUBLE".into(), false),
            ("units".into(), "INT64".into(), false),
            ("year".into(), "int".into(), true),
            ("region".into(), "string".into(), true),
        ]
    );
    assert_eq!(partition_values(t, "year"), ["2022", "2023", "2024"]);
    assert_eq!(partition_values(t, "region"), ["eu", "us"]);
    assert_eq!(
        (
            t["columns"][0]["min"].as_str(),
            t["columns"][0]["max"].as_str()
        ),
        (Some("1.5"), Some("5.5"))
    );
    assert_eq!(t["time_coverage"]["start"], "2022-01-01");
    assert_eq!(t["notes"], Value::Null, "{t}");
    assert_eq!(loaded_rows(&lake, t["load"].as_str().unwrap()), 5);

    // Delta: version 2 (an overwrite) holds 4 rows, not the 9 of every file on disk.
    let v = describe(&lake, "orders");
    let t = &v["table"]["description"];
    assert_eq!(t["kind"], "delta");
    assert_eq!(t["version"], "2");
    assert_eq!(t["rows"], 4);
    assert_eq!(t["data_files"], 3);
    assert_eq!(
        column_names(t),
        [
            ("order_id".into(), "long".into(), false),
            ("country".into(), "string".into(), true),
            ("qty".into(), "long".into(), false),
        ]
    );
    assert_eq!(partition_values(t, "country"), ["DK", "FI", "SE"]);
    assert_eq!(t["columns"][0]["min"], "6");
    assert_eq!(loaded_rows(&lake, t["load"].as_str().unwrap()), 4);
    let text = run_ok(&lake, &["describe", "orders/"]);
    assert!(
        text.starts_with("orders/ — Delta table: 4 rows, 3 columns, 3 data files"),
        "{text}"
    );
    assert!(
        text.contains("version 2") && text.contains("country: DK, FI, SE"),
        "{text}"
    );

    // Iceberg: the current snapshot of two appends.
    let root = "warehouse/shop/visits";
    let v = describe(&lake, root);
    let t = &v["table"]["description"];
    assert_eq!(t["kind"], "iceberg");
    assert_eq!(t["version"], made["snapshot"]);
    assert_eq!(t["rows"], 5);
    assert_eq!(t["data_files"], 4);
    assert_eq!(
        column_names(t),
        [
            ("city".into(), "string".into(), true),
            ("day".into(), "date".into(), false),
            ("visits".into(), "long".into(), false),
        ]
    );
    assert_eq!(partition_values(t, "city"), ["Bergen", "Oslo", "Tromso"]);
    assert_eq!(t["time_coverage"]["end"], "2024-03-06");
    let load = t["load"].as_str().unwrap();
    assert!(load.contains(made["metadata"].as_str().unwrap()), "{load}");
    assert_eq!(loaded_rows(&lake, load), 5);

    let v = describe(&lake, "photos/metadata/img0.metadata.json");
    assert_eq!(v["table"], Value::Null, "{v}");
    assert_eq!(v["format"], "json", "{v}");

    // A member names its table, in JSON and text.
    let member = std::fs::read_dir(lake.join("orders/country=FI"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .file_name();
    let member = format!("orders/country=FI/{}", member.to_string_lossy());
    let v = describe(&lake, &member);
    assert_eq!(v["table"]["root"], "orders/");
    assert_eq!(v["table"]["version"], "2");
    let text = run_ok(&lake, &["describe", &member]);
    assert!(
        text.ends_with("member of Delta table orders/ (version 2)\n"),
        "{text}"
    );

    // Search returns each table once, by its folder, and no member.
    for (question, folder) in [
        ("order qty by country", "orders/"),
        ("sales amount units by region", "sales/"),
        ("city visits per day", "warehouse/shop/visits/"),
    ] {
        let hits = json_lines(&search_out(
            &lake,
            &["search", question, "--json", "-k", "20"],
        ));
        let got = paths(&hits);
        assert!(got.iter().any(|p| p == folder), "{question}: {got:?}");
        for p in &got {
            assert!(
                !["sales/", "orders/", "warehouse/"]
                    .iter()
                    .any(|r| p.starts_with(r) && p.len() > r.len() && !p.ends_with('/')),
                "{question}: member {p} is a hit: {got:?}"
            );
        }
        assert_eq!(got.iter().filter(|p| *p == folder).count(), 1, "{got:?}");
        let hit = hits.iter().find(|h| h["path"] == folder).unwrap();
        assert!(hit["table"]["kind"].is_string(), "{hit}");
    }

    // A no-change run derives nothing; a fourth Delta commit re-derives that table.
    let r = index_json(&lake, &[]);
    assert_counts(&r, &[("added", 0), ("modified", 0), ("analyzed", 0)]);
    python(
        &lake,
        "import pandas as pd, deltalake\ndeltalake.write_deltalake('orders', pd.DataFrame({'order_id': [10], 'country': ['IS'], 'qty': [7]}), mode='append')",
        &[],
    );
    index_json(&lake, &[]);
    let t = &describe(&lake, "orders/")["table"]["description"];
    assert_eq!(t["version"], "3");
    assert_eq!(t["rows"], 5);
    assert_eq!(partition_values(t, "country"), ["DK", "FI", "IS", "SE"]);
    assert_eq!(loaded_rows(&lake, t["load"].as_str().unwrap()), 5);
    // The Hive table is as it was.
    assert_eq!(describe(&lake, "sales/")["table"]["description"]["rows"], 5);

    // A table whose folder goes is gone from describe and search.
    std::fs::remove_dir_all(lake.join("sales")).unwrap();
    index_json(&lake, &[]);
    let out = run(&lake, &["describe", "sales/"]);
    assert!(
        !out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let hits = json_lines(&search_out(
        &lake,
        &[
            "search",
            "sales amount units by region",
            "--json",
            "-k",
            "20",
        ],
    ));
    assert!(!paths(&hits).contains(&"sales/".to_string()), "{hits:?}");
}

#[test]
fn a_malformed_delta_log_is_that_tables_error_not_a_failed_run() {
    let tmp = tempfile::tempdir().unwrap();
    let lake = tmp.path();
    std::fs::create_dir_all(lake.join("broken/_delta_log")).unwrap();
    std::fs::write(
        lake.join("broken/_delta_log/00000000000000000000.json"),
        // Valid JSON lines (the file itself is described), but no table: no metaData.
        "{\"commitInfo\": {}}\n{\"add\": {\"path\": \"a.parquet\", \"size\": 1}}\n",
    )
    .unwrap();
    std::fs::write(lake.join("ok.csv"), "a,b\n1,2\n").unwrap();
    let r = index_json(lake, &[]);
    assert_counts(&r, &[("added", 2), ("errors", 0)]);
    let v = describe(lake, "broken/");
    assert_eq!(v["state"], "error");
    assert_eq!(v["table"]["kind"], "delta");
    let e = v["error"].as_str().unwrap();
    assert!(e.contains("no metaData action"), "{e}");
    // The lake's other files are searched as before.
    let hits = json_lines(&search_out(lake, &["search", "ok", "--json"]));
    assert!(paths(&hits).contains(&"ok.csv".to_string()), "{hits:?}");
}

#[test]
fn a_delta_log_cleaned_up_after_a_checkpoint_is_read_from_it() {
    let tmp = tempfile::tempdir().unwrap();
    let lake = tmp.path();
    python(
        lake,
        "import os, pandas as pd, deltalake\n\
         w = deltalake.write_deltalake\n\
         w('t', pd.DataFrame({'id': [1, 2], 'c': ['a', 'b']}), partition_by=['c'])\n\
         w('t', pd.DataFrame({'id': [3], 'c': ['a']}), mode='append')\n\
         w('t', pd.DataFrame({'id': [4, 5, 6], 'c': ['z', 'z', 'y']}), mode='overwrite')\n\
         deltalake.DeltaTable('t').create_checkpoint()\n\
         w('t', pd.DataFrame({'id': [7], 'c': ['q']}), mode='append')\n\
         for v in range(3):\n    os.remove(f't/_delta_log/{v:020}.json')\n",
        &[],
    );
    index_json(lake, &[]);
    let v = describe(lake, "t/");
    let t = &v["table"]["description"];
    assert_eq!(v["error"], Value::Null, "{v}");
    assert_eq!(t["version"], "3");
    assert_eq!(t["rows"], 4);
    assert_eq!(t["data_files"], 3);
    assert_eq!(partition_values(t, "c"), ["q", "y", "z"]);
    assert_eq!(t["columns"][0]["max"], "7");
    assert_eq!(loaded_rows(lake, t["load"].as_str().unwrap()), 4);

    // Without `_last_checkpoint`, the checkpoint is found in the log's listing.
    std::fs::remove_file(lake.join("t/_delta_log/_last_checkpoint")).unwrap();
    index_json(lake, &[]);
    let v = describe(lake, "t/");
    assert_eq!(v["error"], Value::Null, "{v}");
    let t = &v["table"]["description"];
    assert_eq!(
        (t["version"].as_str(), t["rows"].as_u64()),
        (Some("3"), Some(4)),
        "{t}"
    );
    // Without the checkpoint too, the log is that table's error.
    std::fs::remove_file(lake.join("t/_delta_log/00000000000000000002.checkpoint.parquet"))
        .unwrap();
    index_json(lake, &[]);
    let v = describe(lake, "t/");
    let e = v["error"].as_str().unwrap();
    assert!(
        e.contains("starts at version 2") || e.contains("starts at version 3"),
        "{e}"
    );
}

/// The fixture lake, made and indexed: its temporary folder, the lake, what the
/// script printed.
fn made_and_indexed() -> (tempfile::TempDir, std::path::PathBuf, Value) {
    let tmp = tempfile::tempdir().unwrap();
    let (lake, scratch) = (tmp.path().join("lake"), tmp.path().join("scratch"));
    std::fs::create_dir_all(&lake).unwrap();
    std::fs::create_dir_all(&scratch).unwrap();
    let made = make(tmp.path(), &lake, &scratch);
    let r = index_json(&lake, &[]);
    assert_counts(&r, &[("errors", 0)]);
    (tmp, lake, made)
}

/// An Iceberg table whose `data/` still holds files of older snapshots (an overwrite,
/// a delete) is described from its current snapshot's manifests.
#[test]
fn an_iceberg_table_is_described_from_its_current_snapshots_manifests() {
    let (_tmp, lake, made) = made_and_indexed();
    // Iceberg: six data files on disk, one live (the overwrite's two rows); every range
    // from that file's manifest entry, decoded by type.
    let root = "warehouse/shop/prices";
    let on_disk = walk_files(&lake.join(root).join("data"));
    assert_eq!(
        on_disk, 6,
        "the fixture should leave older snapshots' files"
    );
    let v = describe(&lake, root);
    assert_eq!(v["error"], Value::Null, "{v}");
    let t = &v["table"]["description"];
    assert_eq!(t["version"], made["prices_snapshot"]);
    assert_eq!(
        (t["rows"].as_u64(), t["data_files"].as_u64()),
        (Some(2), Some(1)),
        "{t}"
    );
    assert_eq!(partition_values(t, "city"), ["Oslo"]);
    assert_eq!(column(t, "n"), ("5", "8", &Value::from(0)));
    assert_eq!(column(t, "price").0, "6.25");
    assert_eq!(column(t, "price").1, "10.00");
    assert_eq!(column(t, "day").0, "2024-05-05");
    assert_eq!(column(t, "day").1, "2024-05-08");
    assert_eq!(column(t, "at").0, "2024-01-01 12:00:05");
    assert_eq!(column(t, "at").1, "2024-01-01 12:00:08");
    assert_eq!((column(t, "ratio").0, column(t, "ratio").1), ("2.5", "4.0"));
    assert_eq!((column(t, "ok").0, column(t, "ok").1), ("false", "true"));
    assert_eq!(t["time_coverage"]["end"], "2024-05-08");
    assert_eq!(t["notes"], Value::Null, "{t}");
    let load = t["load"].as_str().unwrap();
    assert!(
        load.contains(made["prices_metadata"].as_str().unwrap()),
        "{load}"
    );
    assert_eq!(loaded_rows(&lake, load), 2);
}

/// A Delta log whose commits were cleaned up after a multi-part or a V2 (UUID-named,
/// sidecar) checkpoint is read from it.
#[test]
fn delta_multi_part_and_v2_checkpoints_are_read() {
    let (_tmp, lake, _) = made_and_indexed();
    // Delta, a multi-part checkpoint (its three parts hold versions 0–2) and a V2 one
    // (its file actions in a sidecar), each with commit 3 after it. The V2 table is read
    // with the QueryBuilder, as deltalake's to_pandas() refuses its v2Checkpoint feature.
    for (table, query_builder) in [("events", false), ("clicks", true)] {
        let t = &describe(&lake, table)["table"]["description"];
        assert_eq!(t["version"], "3", "{t}");
        assert_eq!(
            (t["rows"].as_u64(), t["data_files"].as_u64()),
            (Some(6), Some(6)),
            "{t}"
        );
        assert_eq!(partition_values(t, "kind"), ["a", "b", "c", "d", "e"]);
        assert_eq!((column(t, "id").0, column(t, "id").1), ("1", "6"));
        let load = t["load"].as_str().unwrap();
        assert_eq!(load.contains("QueryBuilder"), query_builder, "{load}");
        assert_eq!(loaded_rows(&lake, load), 6);
    }
}

/// A Delta table with a deletion vector counts its rows without the deleted ones, and
/// says so.
#[test]
fn delta_deletion_vectors_take_their_rows_off_the_count() {
    let (_tmp, lake, _) = made_and_indexed();
    // Delta, a deletion vector deleting 2 of the first file's 4 rows.
    let t = &describe(&lake, "returns")["table"]["description"];
    assert_eq!(t["version"], "2", "{t}");
    assert_eq!(
        (
            t["rows"].as_u64(),
            t["deleted_rows"].as_u64(),
            t["data_files"].as_u64()
        ),
        (Some(5), Some(2), Some(2)),
        "{t}"
    );
    // The statistics are the files' as written: the deleted rows' ids are still in them.
    assert_eq!((column(t, "id").0, column(t, "id").1), ("1", "7"));
    assert_eq!(loaded_rows(&lake, t["load"].as_str().unwrap()), 5);
    let text = run_ok(&lake, &["describe", "returns/"]);
    assert!(
        text.starts_with(
            "returns/ — Delta table: 5 rows (not counting 2 deleted by deletion vectors)"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "note: column ranges and nulls may include the rows deleted by deletion vectors"
        ),
        "{text}"
    );
}

/// Files under `dir`, recursively.
fn walk_files(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| {
            if e.file_type().unwrap().is_dir() {
                walk_files(&e.path())
            } else {
                1
            }
        })
        .sum()
}
