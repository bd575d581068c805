//! `index --follow` and `--follow-outside`: links leading out of the lake (to a directory
//! of our own and to `/etc`) stay out of the index, its search and its HTTP API unless
//! `--follow-outside` takes them; links inside the lake are followed; the choice is
//! recorded, and a run under the rule drops what an index made without it holds.

#![cfg(unix)]

use crate::common::*;
use crate::serve::{Http, Server};
use serde_json::Value;
use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::Output;

/// A word only the outside CSV holds, in its header and its values.
const SECRET: &str = "zanzibarite";

/// `tmp/lake` with `data/sales.csv`, a link `inner` to `data`, a link `ext` to
/// `tmp/outside` (a CSV of [`SECRET`]s) and a link `etc` to `/etc`, of which an ignore
/// file keeps only `passwd` (all of `/etc` would be slow to index, and vary).
fn lake() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let (lake, outside) = (tmp.path().join("lake"), tmp.path().join("outside"));
    fs::create_dir_all(lake.join("data")).unwrap();
    fs::create_dir_all(&outside).unwrap();
    fs::write(
        lake.join("data/sales.csv"),
        "region,heliotrope_sales\nnorth,10\nsouth,20\n",
    )
    .unwrap();
    fs::write(
        outside.join("secret.csv"),
        format!("account,{SECRET}_pin\nalice,{SECRET}1234\nbob,{SECRET}5678\n"),
    )
    .unwrap();
    symlink("data", lake.join("inner")).unwrap();
    symlink(&outside, lake.join("ext")).unwrap();
    symlink("/etc", lake.join("etc")).unwrap();
    fs::write(lake.join(".lakestarignore"), "etc/*\n!etc/passwd\n").unwrap();
    (tmp, lake)
}

/// `lakestar index LAKE --json ARGS`: the report and stderr.
fn index(lake: &Path, args: &[&str]) -> (Value, String) {
    let mut all = vec!["index", lake.to_str().unwrap(), "--json"];
    all.extend_from_slice(args);
    let out: Output = run(lake, &all);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "lakestar {all:?}: {stderr}");
    let report = serde_json::from_slice(&out.stdout).unwrap();
    (report, stderr)
}

fn catalog_paths(lake: &Path) -> Vec<String> {
    let mut v: Vec<String> = check_catalog(&lake.join(".lakestar"))
        .load_files()
        .unwrap()
        .into_keys()
        .collect();
    v.sort();
    v
}

fn search(lake: &Path, q: &str) -> Vec<String> {
    paths(&json_lines(&crate::common::search_out(
        lake,
        &["search", q, "-k", "20", "--json"],
    )))
}

/// A query may still have nearest neighbours, so what counts is that no hit lies behind
/// a link out of the lake.
fn assert_only_lake_files(hits: &[String]) {
    assert!(
        hits.iter().all(|p| p.ends_with("sales.csv")),
        "outside files found: {hits:?}"
    );
}

#[test]
fn follow_keeps_links_out_of_the_lake_out_and_follow_outside_takes_them() {
    let (_tmp, lake) = lake();
    let (v, stderr) = index(&lake, &["--follow"]);
    assert_counts(&v, &[("files_seen", 2), ("errors", 2)]);
    assert_eq!(catalog_paths(&lake), ["data/sales.csv", "inner/sales.csv"]);
    // The summary names each refused link and what would take it.
    let out = run(&lake, &["index", lake.to_str().unwrap(), "--follow"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stderr);
    for link in ["etc", "ext"] {
        let line = text
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{link}: ")))
            .unwrap_or_else(|| panic!("no line for {link} in {text}\n(json run: {stderr})"));
        assert!(
            line.contains("is outside the lake; pass --follow-outside to index it"),
            "{line}"
        );
    }
    // The target as it resolves (`/private/etc` on macOS).
    let etc = Path::new("/etc").canonicalize().unwrap();
    assert!(
        text.contains(&format!("link target {} ", etc.display())),
        "{text}"
    );
    assert_only_lake_files(&search(&lake, SECRET));
    assert_eq!(search(&lake, "heliotrope sales")[0], "data/sales.csv");

    // Recorded: a run without flags walks the same way, and says so.
    let (v, stderr) = index(&lake, &[]);
    assert_counts(&v, &[("files_seen", 2), ("unchanged", 2), ("errors", 2)]);
    assert!(
        stderr.contains("as the index records: --follow (--no-follow to change it)"),
        "{stderr}"
    );

    // Served: neither the outside file's path nor its values come back from /search.
    let server = Server::start(&lake.join(".lakestar"), &[]);
    let http = Http::new(&server);
    for q in [SECRET, "zanzibarite1234", "root"] {
        let (st, found) = http.get(&format!("/search?q={q}&k=50"));
        assert_eq!(st, 200, "{found}");
        let hits: Vec<&str> = found["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["path"].as_str().unwrap())
            .collect();
        assert!(
            hits.iter().all(|p| p.ends_with("sales.csv")),
            "{q}: {hits:?}"
        );
    }
    drop(server);

    let (v, stderr) = index(&lake, &["--follow-outside"]);
    assert_counts(&v, &[("added", 2), ("errors", 0)]);
    assert_eq!(
        catalog_paths(&lake),
        [
            "data/sales.csv",
            "etc/passwd",
            "ext/secret.csv",
            "inner/sales.csv"
        ],
        "{stderr}"
    );
    assert_eq!(search(&lake, SECRET)[0], "ext/secret.csv");
    let (v, stderr) = index(&lake, &[]);
    assert_counts(&v, &[("unchanged", 4), ("errors", 0)]);
    assert!(
        stderr.contains("as the index records: --follow-outside"),
        "{stderr}"
    );

    // Turned off again: inside only, and the outside rows go.
    let (v, _) = index(&lake, &["--no-follow-outside"]);
    assert_counts(&v, &[("deleted", 2), ("errors", 2)]);
    assert_eq!(catalog_paths(&lake), ["data/sales.csv", "inner/sales.csv"]);
    assert_only_lake_files(&search(&lake, SECRET));
}

#[test]
fn an_index_made_before_the_rule_loses_its_outside_files_on_the_next_run() {
    let (_tmp, lake) = lake();
    index(&lake, &["--follow-outside"]);
    assert!(catalog_paths(&lake).contains(&"ext/secret.csv".to_string()));
    // What an older lakestar recorded for `--follow`, which then went anywhere.
    let db = rusqlite::Connection::open(lake.join(".lakestar/catalog.sqlite")).unwrap();
    db.execute(
        "UPDATE meta SET value = '{\"follow_links\":true,\"hidden\":false}' WHERE key = 'walk_options'",
        [],
    )
    .unwrap();
    drop(db);
    let (v, stderr) = index(&lake, &[]);
    assert!(
        stderr.contains("as the index records: --follow ") && !stderr.contains("follow-outside ("),
        "{stderr}"
    );
    assert_counts(&v, &[("files_seen", 2), ("deleted", 2), ("errors", 2)]);
    assert_eq!(catalog_paths(&lake), ["data/sales.csv", "inner/sales.csv"]);
    assert_only_lake_files(&search(&lake, SECRET));
}

/// More refused links than a report lists (`indexer::PROBLEMS_KEPT`, 1,000): the
/// summary names the first twenty by path and counts every other one.
#[test]
fn a_summary_names_the_first_problems_and_counts_the_rest() {
    let (tmp, lake) = lake();
    for i in 0..1010 {
        symlink(tmp.path().join("outside"), lake.join(format!("x{i:04}"))).unwrap();
    }
    let out = run(&lake, &["index", lake.to_str().unwrap(), "--follow"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stderr);
    let summary = String::from_utf8_lossy(&out.stdout);
    assert!(summary.contains("1012 errors"), "{summary}");
    let named: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("is outside the lake"))
        .map(|l| l.trim().split(':').next().unwrap())
        .collect();
    let mut want = vec!["etc".to_string(), "ext".to_string()];
    want.extend((0..18).map(|i| format!("x{i:04}")));
    assert_eq!(named, want, "{text}");
    assert!(text.contains("… 992 more; see `lakestar status`"), "{text}");
}
