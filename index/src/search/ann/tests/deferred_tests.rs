//! Graphs built apart from the writer (`GraphBuild::Deferred`): cancelled, swapped in
//! with what changed meanwhile stale, or discarded when the catalog moved past them.

use super::*;
use crate::search::ann::update::{refresh_as, swap, GraphBuild, Refresh};
use std::sync::atomic::AtomicBool;

#[test]
fn a_cancelled_build_writes_nothing_and_the_next_refresh_builds_again() {
    let mut l = filled(100);
    let apart = GraphBuild::Deferred { in_flight: None };
    let Refresh::Build(job) = refresh_as(&mut l.cat, &l.dir, EMB, 0, None, apart).unwrap() else {
        panic!("a rebuild is due");
    };
    assert!(job.build_unless(&AtomicBool::new(true)).unwrap().is_none());
    assert!(l.generations().is_empty(), "{:?}", l.generations());
    assert!(!VectorMeta::load(&l.cat).unwrap().fresh);
    assert_eq!(l.scan(0).kind(), "exact");
    // Given up before its first chunk, it is due again.
    assert!(matches!(
        l.refresh(0),
        Refreshed::Built { generation: 1, .. }
    ));
    assert_eq!(l.scan(0).kind(), "codes");
}

#[test]
fn a_graph_built_apart_is_swapped_in_with_what_changed_meanwhile_stale() {
    let mut l = filled(100);
    let apart = GraphBuild::Deferred { in_flight: None };
    let Refresh::Build(job) = refresh_as(&mut l.cat, &l.dir, EMB, 0, None, apart).unwrap() else {
        panic!("a rebuild is due");
    };
    assert_eq!(job.generation(), 1);
    // Until the swap: no graph, and the refresh is not finished (a crash is caught up).
    assert!(!VectorMeta::load(&l.cat).unwrap().fresh);
    assert_eq!(l.scan(0).kind(), "exact");
    let handle = std::thread::spawn(move || job.build().unwrap());
    // The writer goes on while the graph builds.
    change_four(&mut l);
    // A second refresh meanwhile starts nothing and spares the build's directory.
    std::fs::create_dir_all(l.dir.join("vectors/gen-1.tmp")).unwrap();
    let busy = GraphBuild::Deferred { in_flight: Some(1) };
    assert!(matches!(
        refresh_as(&mut l.cat, &l.dir, EMB, 0, None, busy).unwrap(),
        Refresh::Done(Refreshed::Exact | Refreshed::Kept)
    ));
    let built = handle.join().unwrap();
    assert_eq!(
        swap(&mut l.cat, built).unwrap(),
        Refreshed::Built {
            generation: 1,
            files: 100
        }
    );
    let meta = VectorMeta::load(&l.cat).unwrap();
    assert!(meta.fresh);
    assert_eq!((meta.tombstones, meta.delta, meta.live), (3, 3, 100));
    assert_eq!(l.generations(), vec!["gen-1"]);
    for v in [l.open(0), l.scan(0)] {
        assert_eq!(v.len(), 100);
        assert_eq!(
            v.nearest(&l.cat, &vector("brand new"), 1).unwrap()[0].0,
            "new.csv"
        );
        let hits = v.nearest(&l.cat, &vector("content 10"), 100).unwrap();
        assert!(!paths(&hits).contains(&"f010.csv"));
        assert_eq!(
            v.nearest(&l.cat, &vector("content 20, edited"), 1).unwrap()[0].0,
            "f020.csv"
        );
    }
}

#[test]
fn a_build_the_catalog_moved_past_is_discarded() {
    let mut l = filled(60);
    let apart = GraphBuild::Deferred { in_flight: None };
    let Refresh::Build(first) = refresh_as(&mut l.cat, &l.dir, EMB, 0, None, apart).unwrap() else {
        panic!("a rebuild is due");
    };
    let stale = first.build().unwrap();
    // Meanwhile a rebuild of its own (an index run's) took the catalog further.
    assert!(matches!(
        l.refresh(0),
        Refreshed::Built { generation: 2, .. }
    ));
    assert_eq!(swap(&mut l.cat, stale).unwrap(), Refreshed::Kept);
    assert_eq!(
        VectorMeta::load(&l.cat).unwrap().graph.unwrap().generation,
        2
    );
    assert_eq!(l.generations(), vec!["gen-2"]);
}

#[test]
fn a_generation_of_codes_alone_is_scanned_in_every_mode_and_gets_a_graph_once_one_is_wanted() {
    let mut l = filled(100);
    let Refresh::Build(job) =
        refresh_as(&mut l.cat, &l.dir, EMB, 0, None, GraphBuild::Inline).unwrap()
    else {
        panic!("a rebuild is due");
    };
    let built = job.with_graph_above(u64::MAX).build().unwrap();
    assert!(matches!(
        swap(&mut l.cat, built).unwrap(),
        Refreshed::Built { generation: 1, .. }
    ));
    let mut files: Vec<_> = std::fs::read_dir(l.dir.join("vectors/gen-1"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    files.sort();
    assert_eq!(
        files,
        vec!["codes.bin", "manifest.json", "members.bin", "nibbles.bin"]
    );
    let resident = Mode::Resident { scan_up_to: 0 };
    let in_resident = VectorIndex::open_with(&l.cat, &l.dir, EMB, 0, resident).unwrap();
    let exact = l.exact();
    for v in [l.open(0), l.scan(0), in_resident] {
        assert_eq!((v.kind(), v.len()), ("codes", 100));
        for i in [3, 42, 97] {
            let q = vector(&format!("content {i}"));
            let hits = v.nearest(&l.cat, &q, 5).unwrap();
            assert_eq!(hits[0].0, format!("f{i:03}.csv"));
            assert_eq!(hits, exact.nearest(&l.cat, &q, 5).unwrap());
        }
    }
    // Nothing changed, but a graph is wanted now (unit tests want one always): the check
    // rebuilds, and the generation of codes serves until the swap.
    assert!(matches!(
        check_with(&mut l.cat, &l.dir, EMB, 0).unwrap(),
        Refreshed::Built { generation: 2, .. }
    ));
    assert_eq!(l.open(0).kind(), "hnsw");
    assert_eq!(l.generations(), vec!["gen-2"]);
    assert_eq!(
        check_with(&mut l.cat, &l.dir, EMB, 0).unwrap(),
        Refreshed::Kept
    );
}
