//! The messytables corpus (`../shared/lakes/messytables/horror`: hard tables real
//! publishers produced) against its blind truth records (`tests/data/messytables/`):
//! `benches/messytables_truth.py` describes every file with this binary and checks every
//! fact of every record (readable; per table: found, rows, column count, each column's
//! name and type). The floors below are today's totals: a change that reads fewer facts
//! right on either part fails here. Rules are written from the dev part; of the test
//! part only the totals are read.

use crate::common::*;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// Facts the truth records state, per part (fixed by the records alone).
const DEV_FACTS: u64 = 618;
const TEST_FACTS: u64 = 334;
/// Facts read right on the dev part, at least.
const DEV_FLOOR: u64 = 551;
/// Facts read right on the test part, at least.
const TEST_FLOOR: u64 = 288;

#[test]
fn messytables_descriptions_hold_against_the_blind_truth() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lake = shared_lakes().join("messytables/horror");
    let split: Value = serde_json::from_slice(
        &std::fs::read(root.join("tests/data/messytables/split.json")).unwrap(),
    )
    .unwrap();
    // The script runs the binary itself: it gets the same clean environment as
    // `lakestar()` gives every other test.
    let mut py = Command::new("python3");
    for (k, v) in lakestar().get_envs() {
        match v {
            Some(v) => py.env(k, v),
            None => py.env_remove(k),
        };
    }
    let out = py
        .arg(root.join("benches/messytables_truth.py"))
        .arg(env!("CARGO_BIN_EXE_lakestar"))
        .arg("--lake")
        .arg(&lake)
        .arg("--json")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the truth script failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let totals: Value = serde_json::from_slice(&out.stdout).unwrap();
    for (part, floor, all) in [
        ("dev", DEV_FLOOR, DEV_FACTS),
        ("test", TEST_FLOOR, TEST_FACTS),
    ] {
        let t = &totals[part];
        let files = split[part].as_array().unwrap().len() as u64;
        assert_eq!(t["files"], files, "{part}: every record is compared");
        let (right, facts) = (t["right"].as_u64().unwrap(), t["facts"].as_u64().unwrap());
        assert_eq!(facts, all, "{part}: every fact of every record is checked");
        assert!(
            right >= floor,
            "{part}: {right} of {facts} facts right, fewer than the floor {floor} \
             (`python3 benches/messytables_truth.py target/debug/lakestar --show-dev` lists \
             the dev misses)"
        );
    }
}
