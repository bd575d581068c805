//! Incremental indexing on copies of the shared lakes: every change class is detected and
//! only changed content is analyzed.

use crate::common::*;
use std::fs;
use std::path::Path;
use std::time::{Duration, SystemTime};

/// Drive a lake through every kind of change and check the counts of each run.
fn incremental_cycle(lake: &Path, modify: &str, delete: &str, rename: (&str, &str), touch: &str) {
    let total = count_files(lake);
    assert!(total > 3);

    let first = index_json(lake, &[]);
    assert_counts(
        &first,
        &[
            ("files_seen", total),
            ("added", total),
            ("errors", 0),
            ("deleted", 0),
        ],
    );
    assert_eq!(
        n(&first, "analyzed") + n(&first, "cache_hits"),
        total,
        "{first}"
    );
    check_catalog(&lake.join(".lakestar"));

    let again = index_json(lake, &[]);
    assert_counts(
        &again,
        &[
            ("files_seen", total),
            ("unchanged", total),
            ("analyzed", 0),
            ("added", 0),
            ("modified", 0),
        ],
    );

    // Modify: append a line (a new row for tables, a new line for text).
    let p = lake.join(modify);
    let mut body = fs::read(&p).unwrap();
    body.extend_from_slice(b"\n");
    fs::write(&p, &body).unwrap();
    let m = index_json(lake, &[]);
    assert_counts(
        &m,
        &[
            ("modified", 1),
            ("analyzed", 1),
            ("unchanged", total - 1),
            ("added", 0),
        ],
    );

    // Delete.
    fs::remove_file(lake.join(delete)).unwrap();
    let d = index_json(lake, &[]);
    assert_counts(
        &d,
        &[
            ("deleted", 1),
            ("files_seen", total - 1),
            ("analyzed", 0),
            ("unchanged", total - 1),
        ],
    );

    // Rename: the description is moved, not recomputed.
    fs::rename(lake.join(rename.0), lake.join(rename.1)).unwrap();
    let r = index_json(lake, &[]);
    assert_counts(
        &r,
        &[
            ("renamed", 1),
            ("analyzed", 0),
            ("added", 0),
            ("deleted", 0),
            ("unchanged", total - 2),
        ],
    );

    // Touch: a new mtime, the same bytes: re-hashed, not analyzed.
    let f = fs::File::options()
        .write(true)
        .open(lake.join(touch))
        .unwrap();
    f.set_modified(SystemTime::now() + Duration::from_secs(3600))
        .unwrap();
    drop(f);
    let t = index_json(lake, &[]);
    assert_counts(
        &t,
        &[
            ("analyzed", 0),
            ("modified", 0),
            ("unchanged", total - 1),
            ("cache_hits", 0),
        ],
    );

    // A copy of known content is a cache hit, not an analysis.
    fs::copy(lake.join(touch), lake.join(format!("copy-{touch}"))).unwrap();
    let c = index_json(lake, &[]);
    assert_counts(&c, &[("added", 1), ("analyzed", 0), ("cache_hits", 1)]);

    let cat = check_catalog(&lake.join(".lakestar"));
    let files = cat.load_files().unwrap();
    assert_eq!(files.len() as u64, total);
    assert!(
        files.contains_key(rename.1)
            && !files.contains_key(rename.0)
            && !files.contains_key(delete)
    );
}

#[test]
fn dabstep_context_incremental() {
    let tmp = tempfile::tempdir().unwrap();
    let lake = tmp.path().join("context");
    copy_tree(&shared_lakes().join("dabstep/context"), &lake);
    incremental_cycle(
        &lake,
        "merchant_category_codes.csv",
        "payments-readme.md",
        ("acquirer_countries.csv", "acquirers_renamed.csv"),
        "fees.json",
    );
    let row = lakestar::index::CatalogReader::open(&lake.join(".lakestar"))
        .unwrap()
        .file("merchant_category_codes.csv")
        .unwrap()
        .unwrap();
    assert_eq!(row.format.as_str(), "csv");
}

#[test]
fn dabench_tables_incremental() {
    let tmp = tempfile::tempdir().unwrap();
    let lake = tmp.path().join("tables");
    copy_tree(&shared_lakes().join("dabench/da-dev-tables"), &lake);
    let mut names: Vec<String> = fs::read_dir(&lake)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(names.len() >= 60, "{names:?}");
    incremental_cycle(
        &lake,
        &names[0],
        &names[1],
        (&names[2], "renamed-table.csv"),
        &names[3],
    );
    let status: serde_json::Value =
        serde_json::from_str(&run_ok(&lake, &["status", "--json"])).unwrap();
    assert_eq!(n(&status, "files"), names.len() as u64);
    assert!(status["errors"].as_array().unwrap().is_empty(), "{status}");
}

#[test]
fn index_of_read_only_shared_lake_goes_elsewhere() {
    // The shared lakes are read-only: --index puts the index outside the lake.
    let tmp = tempfile::tempdir().unwrap();
    let idx = tmp.path().join("idx");
    let lake = shared_lakes().join("dabstep/context");
    let out = run_ok(
        tmp.path(),
        &[
            "index",
            lake.to_str().unwrap(),
            "--index",
            idx.to_str().unwrap(),
            "--json",
        ],
    );
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_counts(&v, &[("files_seen", 7), ("added", 7), ("errors", 0)]);
    let st: serde_json::Value = serde_json::from_str(&run_ok(
        tmp.path(),
        &["status", "--index", idx.to_str().unwrap(), "--json"],
    ))
    .unwrap();
    assert_eq!(st["by_format"]["csv"], 3);
    assert_eq!(st["by_format"]["json"], 2);
    assert_eq!(st["by_format"]["markdown"], 2);
    assert_eq!(st["by_state"]["ok"], 7);
    assert_eq!(
        st["lake_root"].as_str().unwrap(),
        lake.canonicalize().unwrap().to_str().unwrap()
    );
    assert!(n(&st, "index_bytes") > 0);
    assert!(st["last_index_at"].as_str().unwrap().ends_with('Z'));
}

#[test]
fn an_analyzer_version_change_redescribes_exactly_its_formats() {
    let tmp = tempfile::tempdir().unwrap();
    let lake = tmp.path().join("lake");
    fs::create_dir_all(&lake).unwrap();
    fs::write(lake.join("a.csv"), "k,v\n1,2\n").unwrap();
    fs::write(lake.join("b.csv"), "k,v\n3,4\n").unwrap();
    fs::write(lake.join("c.json"), "{\"k\": 1}").unwrap();
    fs::write(lake.join("d.md"), "# T\n\ntext\n").unwrap();
    assert_counts(&index_json(&lake, &[]), &[("analyzed", 4)]);
    // Make the catalog look written by an older delimited analyzer.
    let db = rusqlite::Connection::open(lake.join(".lakestar/catalog.sqlite")).unwrap();
    db.execute_batch(
        "UPDATE files SET analyzer = 'delimited@0' WHERE format = 'csv';
         UPDATE descriptions SET analyzer = 'delimited@0' WHERE analyzer LIKE 'delimited@%';",
    )
    .unwrap();
    drop(db);
    let v = index_json(&lake, &[]);
    assert_counts(
        &v,
        &[
            ("analyzed", 2),
            ("unchanged", 4),
            ("modified", 0),
            ("cache_hits", 0),
        ],
    );
    assert_counts(&index_json(&lake, &[]), &[("analyzed", 0)]);
    let cat = check_catalog(&lake.join(".lakestar"));
    let files = cat.load_files().unwrap();
    let key = lakestar::index::analyze::current_key(lakestar::index::Format::Csv);
    assert_eq!(files["a.csv"].analyzer.as_deref(), Some(key.as_str()));
}
