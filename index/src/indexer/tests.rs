//! Scoped runs against full runs on the same trees.

use super::*;
use crate::catalog::CatalogReader;
use std::collections::BTreeMap;
use std::time::Duration;

fn write(root: &Path, rel: &str, body: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, body).unwrap();
}

fn csv(n: usize) -> String {
    let mut s = String::from("id,city,value\n");
    for i in 0..n {
        s.push_str(&format!("{i},city{},{}\n", i % 7, i * 3));
    }
    s
}

/// (path → hash, analyzer) of every row of the index at `dir`.
fn rows(dir: &Path) -> BTreeMap<String, (Option<crate::catalog::Hash>, Option<String>)> {
    CatalogReader::open(dir)
        .unwrap()
        .load_files()
        .unwrap()
        .into_iter()
        .map(|(p, r)| (p, (r.hash, r.analyzer)))
        .collect()
}

fn opts() -> IndexOptions {
    IndexOptions {
        jobs: 2,
        ..Default::default()
    }
}

/// The catalog of `lake`'s index equals that of a fresh full index of the same tree.
fn assert_like_fresh(lake: &Path, idx: &Path) {
    let fresh = tempfile::tempdir().unwrap();
    index(lake, fresh.path(), &opts(), &NoProgress).unwrap();
    assert_eq!(rows(idx), rows(fresh.path()));
}

#[test]
fn scoped_updates_match_a_full_index() {
    let d = tempfile::tempdir().unwrap();
    let lake = d.path().join("lake");
    let idx = d.path().join("idx");
    write(&lake, "a/one.csv", &csv(10));
    write(&lake, "a/two.csv", &csv(20));
    write(&lake, "b/c/three.csv", &csv(30));
    write(&lake, "keep.csv", &csv(40));
    let mut ix = Indexer::open(&lake, &idx, &opts()).unwrap();
    assert_eq!(ix.run(&NoProgress).unwrap().added, 4);

    // Modify, create in a new directory, delete: named relative and absolute.
    write(&lake, "a/one.csv", &csv(11));
    write(&lake, "new/deep/four.csv", &csv(50));
    std::fs::remove_file(lake.join("a/two.csv")).unwrap();
    let r = ix
        .update(
            &[
                PathBuf::from("a/one.csv"),
                ix.lake().join("new"),
                PathBuf::from("a/two.csv"),
                PathBuf::from("/elsewhere/x.csv"),
            ],
            &NoProgress,
        )
        .unwrap();
    assert_eq!((r.modified, r.added, r.deleted), (1, 1, 1), "{r:?}");
    assert_eq!(r.files_seen, 2, "only the scope is crawled: {r:?}");
    assert_like_fresh(&lake, ix.index_dir());

    // A directory move: both ends in the scope make renames that keep descriptions.
    std::fs::rename(lake.join("b"), lake.join("moved")).unwrap();
    let r = ix
        .update(&[PathBuf::from("b"), PathBuf::from("moved")], &NoProgress)
        .unwrap();
    assert_eq!((r.renamed, r.analyzed, r.deleted), (1, 0, 0), "{r:?}");
    assert_like_fresh(&lake, ix.index_dir());

    // A whole folder deleted; an ignore file that now hides a file.
    std::fs::remove_dir_all(lake.join("new")).unwrap();
    write(&lake, ".lakestarignore", "keep.csv\n");
    let r = ix
        .update(
            &[PathBuf::from("new"), PathBuf::from(".lakestarignore")],
            &NoProgress,
        )
        .unwrap();
    assert_eq!(r.deleted, 2, "{r:?}");
    assert_like_fresh(&lake, ix.index_dir());
    assert!(!rows(ix.index_dir()).contains_key("keep.csv"));

    // The root in the scope is a full run.
    let r = ix.update(std::slice::from_ref(&lake), &NoProgress).unwrap();
    assert_eq!(r.files_seen, 2, "{r:?}");
    let meta = CatalogReader::open(ix.index_dir())
        .unwrap()
        .meta(MetaKey::LastIndexReport)
        .unwrap()
        .unwrap();
    assert!(meta.contains("\"files_seen\":2"), "{meta}");
}

#[test]
fn a_scoped_run_that_finds_nothing_keeps_the_last_report() {
    let d = tempfile::tempdir().unwrap();
    let lake = d.path().join("lake");
    write(&lake, "one.csv", &csv(10));
    write(&lake, ".hidden/two.csv", &csv(10));
    let mut ix = Indexer::open(&lake, &d.path().join("idx"), &opts()).unwrap();
    ix.run(&NoProgress).unwrap();
    let last = |ix: &Indexer| {
        let c = CatalogReader::open(ix.index_dir()).unwrap();
        (
            c.meta(MetaKey::LastIndexReport).unwrap().unwrap(),
            c.meta(MetaKey::LastIndexFinishedAt).unwrap().unwrap(),
        )
    };
    let before = last(&ix);
    assert!(before.0.contains("\"added\":1"), "{before:?}");
    std::thread::sleep(Duration::from_millis(5));

    // Events in a hidden directory, and on a path that is gone already.
    write(&lake, ".hidden/two.csv", &csv(11));
    let r = ix
        .update(
            &[PathBuf::from(".hidden/two.csv"), PathBuf::from("gone.csv")],
            &NoProgress,
        )
        .unwrap();
    assert_eq!((r.added, r.modified, r.deleted), (0, 0, 0), "{r:?}");
    assert_eq!(last(&ix), before);

    // A full run always reports, even when nothing changed; a scoped run that changes
    // something reports too.
    ix.run(&NoProgress).unwrap();
    let full = last(&ix);
    assert!(
        full.1 > before.1 && full.0.contains("\"unchanged\":1"),
        "{full:?}"
    );
    std::thread::sleep(Duration::from_millis(5));
    write(&lake, "three.csv", &csv(3));
    assert_eq!(
        ix.update(&[PathBuf::from("three.csv")], &NoProgress)
            .unwrap()
            .added,
        1
    );
    let after = last(&ix);
    assert!(
        after.1 > full.1 && after.0.contains("\"added\":1"),
        "{after:?}"
    );
}

#[test]
fn runs_record_how_they_walked_the_lake() {
    let d = tempfile::tempdir().unwrap();
    let lake = d.path().join("lake");
    let idx = d.path().join("idx");
    write(&lake, "one.csv", &csv(3));
    assert_eq!(recorded_walk(&idx).unwrap(), None);
    let hidden = IndexOptions {
        hidden: true,
        ..opts()
    };
    index(&lake, &idx, &hidden, &NoProgress).unwrap();
    let want = WalkOptions {
        hidden: true,
        ..Default::default()
    };
    assert_eq!(recorded_walk(&idx).unwrap(), Some(want));
    let outside = IndexOptions {
        follow_links: true,
        follow_outside: true,
        ..opts()
    };
    index(&lake, &idx, &outside, &NoProgress).unwrap();
    let want = WalkOptions {
        follow_links: true,
        follow_outside: true,
        hidden: false,
    };
    assert_eq!(recorded_walk(&idx).unwrap(), Some(want));
    // Outside without following is no walk at all: not recorded as one.
    let confused = IndexOptions {
        follow_outside: true,
        ..opts()
    };
    index(&lake, &idx, &confused, &NoProgress).unwrap();
    assert_eq!(recorded_walk(&idx).unwrap(), Some(WalkOptions::default()));
    // A record made before `follow_outside` existed reads as inside only.
    let old = r#"{"follow_links":true,"hidden":false}"#;
    CatalogWriter::open(
        WriterLock::acquire(&idx).unwrap(),
        &lake.canonicalize().unwrap(),
    )
    .unwrap()
    .set_meta(MetaKey::WalkOptions, old)
    .unwrap();
    let want = WalkOptions {
        follow_links: true,
        ..Default::default()
    };
    assert_eq!(recorded_walk(&idx).unwrap(), Some(want));
}

#[test]
fn an_open_indexer_holds_the_lock() {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(d.path().join("lake")).unwrap();
    let idx = d.path().join("idx");
    let _ix = Indexer::open(&d.path().join("lake"), &idx, &opts()).unwrap();
    let err = index(&d.path().join("lake"), &idx, &opts(), &NoProgress).unwrap_err();
    assert!(
        err.is_user_error() && err.to_string().contains("locked"),
        "{err}"
    );
}

#[test]
fn lake_relative_paths() {
    let lake = Path::new("/l/k");
    let rel = |p: &str| lake_relative(lake, Path::new(p));
    assert_eq!(rel("/l/k/a/b.csv").as_deref(), Some("a/b.csv"));
    assert_eq!(rel("/l/k").as_deref(), Some(""));
    assert_eq!(rel("./a//b/").as_deref(), Some("a/b"));
    assert_eq!(rel("/l/other/a"), None);
    assert_eq!(rel("a/../../x"), None);
}

#[test]
fn frequent_small_runs_do_not_pile_up_text_segments() {
    let d = tempfile::tempdir().unwrap();
    let lake = d.path().join("lake");
    write(&lake, "seed.csv", &csv(3));
    let mut ix = Indexer::open(&lake, &d.path().join("idx"), &opts()).unwrap();
    ix.run(&NoProgress).unwrap();
    const RUNS: usize = 30;
    for i in 0..RUNS {
        write(&lake, &format!("f{i}.csv"), &format!("id,col{i}\n1,2\n"));
        let r = ix
            .update(&[PathBuf::from(format!("f{i}.csv"))], &NoProgress)
            .unwrap();
        assert_eq!(r.added, 1, "{r:?}");
    }
    // One commit per run, one segment per commit: the open writer merges them in the
    // background (a writer dropped after each commit would leave all of them).
    let segments = || {
        let meta = std::fs::read_to_string(ix.index_dir().join("text/meta.json")).unwrap();
        let v: serde_json::Value = serde_json::from_str(&meta).unwrap();
        v["segments"].as_array().unwrap().len()
    };
    let t = Instant::now();
    while segments() > RUNS / 2 {
        assert!(
            t.elapsed() < std::time::Duration::from_secs(60),
            "{} text segments after {RUNS} runs",
            segments()
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// A report counts every problem and lists the first `PROBLEMS_KEPT` by path, holding
/// at most twice that many while it runs.
#[test]
fn a_report_lists_the_first_problems_by_path_and_counts_them_all() {
    let mut r = super::IndexReport::default();
    let n = 2 * super::PROBLEMS_KEPT + 500;
    for i in (0..n).rev() {
        r.problem(format!("dir/f{i:05}.csv"), format!("unreadable {i}"));
        assert!(r.problems.len() < 2 * super::PROBLEMS_KEPT);
        if i == 10 {
            // A run's own problem sorts after paths that start with `!`: kept anyway.
            r.problem("(search index)".into(), "disk full".into());
            r.problem("!odd.csv".into(), "unreadable".into());
        }
    }
    r.settle_problems();
    assert_eq!(r.errors, n as u64 + 2);
    assert_eq!(r.problems.len(), super::PROBLEMS_KEPT + 1);
    let mut want: Vec<(String, String)> = vec![("!odd.csv".into(), "unreadable".into())];
    want.extend(
        (0..super::PROBLEMS_KEPT - 1)
            .map(|i| (format!("dir/f{i:05}.csv"), format!("unreadable {i}"))),
    );
    want.insert(1, ("(search index)".into(), "disk full".into()));
    assert_eq!(r.problems, want);
}

/// More gone paths than a run holds in memory (a handful in unit tests): a moved folder
/// is still renames that keep their descriptions, files of the same content included,
/// and what is gone for good is deleted.
#[test]
fn a_move_of_more_files_than_held_in_memory_is_renames() {
    let d = tempfile::tempdir().unwrap();
    let lake = d.path().join("lake");
    let idx = d.path().join("idx");
    for i in 0..8 {
        write(&lake, &format!("old/f{i}.csv"), &csv(100 + i));
    }
    // Two files of one content: each move claims one of them.
    write(&lake, "old/twin-a.csv", &csv(7));
    write(&lake, "old/twin-b.csv", &csv(7));
    for i in 0..3 {
        write(&lake, &format!("doomed/g{i}.csv"), &csv(200 + i));
    }
    let mut ix = Indexer::open(&lake, &idx, &opts()).unwrap();
    assert_eq!(ix.run(&NoProgress).unwrap().added, 13);
    std::fs::rename(lake.join("old"), lake.join("new")).unwrap();
    std::fs::remove_dir_all(lake.join("doomed")).unwrap();
    let r = ix.run(&NoProgress).unwrap();
    assert_eq!(
        (r.renamed, r.deleted, r.added, r.analyzed, r.errors),
        (10, 3, 0, 0, 0),
        "{r:?}"
    );
    assert_like_fresh(&lake, ix.index_dir());
}
