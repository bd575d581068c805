//! kill -9 in the middle of an index run: the catalog stays consistent and the next run
//! redoes only what was not committed.

use crate::common::*;
use lakestar::index::CatalogReader;
use std::process::Stdio;
use std::time::{Duration, Instant};

fn committed(idx: &std::path::Path) -> usize {
    CatalogReader::open(idx)
        .and_then(|c| c.load_files())
        .map(|f| f.len())
        .unwrap_or(0)
}

#[test]
fn kill_9_midway_then_rerun_completes_consistently() {
    const FILES: u64 = 4000;
    let tmp = tempfile::tempdir().unwrap();
    let lake = tmp.path().join("lake");
    let made = lakestar::index::synth::generate(&lake, FILES, 42).unwrap();
    assert_eq!(made.files, FILES);
    let total = count_files(&lake);
    let idx = lake.join(".lakestar");

    let mut child = lakestar()
        .args([
            "index",
            lake.to_str().unwrap(),
            "--jobs",
            "1",
            "--batch-size",
            "25",
            "--json",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("index finished ({status}) before it could be killed; make the lake bigger");
        }
        if committed(&idx) >= 100 {
            break;
        }
        assert!(Instant::now() < deadline, "no batch committed within 120 s");
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();

    let cat = check_catalog(&idx);
    let before = cat.load_files().unwrap().len() as u64;
    drop(cat);
    assert!(
        before >= 100 && before < total,
        "killed midway: {before} of {total} committed"
    );

    // The kill released the lock; the rerun picks up exactly the uncommitted files.
    let v = index_json(&lake, &[]);
    assert_counts(
        &v,
        &[
            ("files_seen", total),
            ("added", total - before),
            ("unchanged", before),
            ("deleted", 0),
            ("errors", 0),
        ],
    );
    assert_eq!(
        n(&v, "analyzed") + n(&v, "cache_hits"),
        total - before,
        "{v}"
    );

    let cat = check_catalog(&idx);
    let files = cat.load_files().unwrap();
    assert_eq!(files.len() as u64, total);
    assert!(files
        .values()
        .all(|r| r.hash.is_some() && r.analyzer.is_some()));
    drop(cat);
    let again = index_json(&lake, &[]);
    assert_counts(&again, &[("unchanged", total), ("analyzed", 0)]);

    // The search side caught up too: results exist, and every file is searchable.
    let out = run_ok(
        &lake,
        &[
            "search",
            "sensor readings temperature humidity",
            "-k",
            "20",
            "--json",
            "--expand",
        ],
    );
    let hits: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(hits.len(), 20);
    for h in &hits {
        assert!(lake.join(h["path"].as_str().unwrap()).is_file(), "{h}");
    }
    let db = rusqlite::Connection::open(idx.join("catalog.sqlite")).unwrap();
    let dirty: i64 = db
        .query_row("SELECT COUNT(*) FROM search_dirty", [], |r| r.get(0))
        .unwrap();
    let embedded: i64 = db
        .query_row("SELECT COUNT(DISTINCT hash) FROM embeddings", [], |r| {
            r.get(0)
        })
        .unwrap();
    let hashes: i64 = db
        .query_row("SELECT COUNT(DISTINCT hash) FROM files", [], |r| r.get(0))
        .unwrap();
    assert_eq!((dirty, embedded), (0, hashes));
}
