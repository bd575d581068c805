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
    // A second refresh meanwhile starts nothing and spares the build's directory. The
    // build makes that directory itself (removing a stale one first): wait for it rather
    // than race the build by making it here.
    let (building, built) = (l.dir.join("vectors/gen-1.tmp"), l.dir.join("vectors/gen-1"));
    let started = std::time::Instant::now();
    while !building.exists() && !built.exists() && started.elapsed().as_secs() < 60 {
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
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

/// A rebuild whose external sorts spill (runs of 1, 2 and 5 items) writes the
/// generation that numbering the distinct vectors in memory by their first file in path
/// order gives, byte for byte whatever the run: each file at its vector's point, a
/// vector of another dimension left out, and every file found after the swap.
#[test]
fn a_rebuild_whose_sorts_spill_numbers_points_by_their_first_file() {
    let kinds = 37u32;
    let file = |i: u32| format!("d{}/f{i:03}.csv", i % 4);
    let kind = |i: u32| (i * 7919 + i / 9) % kinds;
    let mut written: Option<Vec<Vec<u8>>> = None;
    for run in [1, 2, 5, SORT_RUN] {
        let mut l = lake();
        for i in 0..150u32 {
            // Every file its own description; identical vectors among the files of a kind.
            l.put_vector(&file(i), &format!("t{i}"), vector(&format!("v{}", kind(i))));
        }
        for i in 0..3 {
            l.put_vector(
                &format!("d1/odd{i}.csv"),
                &format!("odd{i}"),
                vec![0.3; DIM / 2],
            );
        }
        let apart = GraphBuild::Deferred { in_flight: None };
        let Refresh::Build(job) = refresh_as(&mut l.cat, &l.dir, EMB, 0, None, apart).unwrap()
        else {
            panic!("a rebuild is due");
        };
        let built = job.with_sort_run(run).build().unwrap();
        assert_eq!(
            swap(&mut l.cat, built).unwrap(),
            Refreshed::Built {
                generation: 1,
                files: 150
            }
        );

        // The reference: points numbered in memory, by first file in path order.
        let mut order: Vec<u32> = (0..150).collect();
        order.sort_by_key(|&i| file(i));
        let mut point_of_kind: std::collections::HashMap<u32, u32> = Default::default();
        for &i in &order {
            let next = point_of_kind.len() as u32;
            point_of_kind.entry(kind(i)).or_insert(next);
        }
        let points = point_of_kind.len();
        assert_eq!(points, kinds as usize);
        let members = graph::open_members(&l.dir, 1, EMB, points).unwrap();
        assert_eq!(members.len(), 150, "runs of {run}");
        for i in 0..150 {
            let want = point_of_kind[&kind(i)];
            assert_eq!(members.point_of(&file(i)).unwrap(), Some(u64::from(want)));
        }
        assert_eq!(members.point_of("d1/odd0.csv").unwrap(), None);
        let codes = graph::open_codes(&l.dir, 1, EMB, points).unwrap();
        for (k, &p) in &point_of_kind {
            let want = crate::compact::Code::new(&vector(&format!("v{k}")));
            assert_eq!(
                codes.code(p as usize).unwrap().codes,
                want.codes,
                "point {p}"
            );
        }
        let gen = graph::generation_dir(&l.dir, 1);
        let bytes: Vec<Vec<u8>> = ["codes.bin", "members.bin"]
            .iter()
            .map(|f| std::fs::read(gen.join(f)).unwrap())
            .collect();
        match &written {
            Some(w) => assert!(*w == bytes, "runs of {run} wrote other files"),
            None => written = Some(bytes),
        }
        // Nothing is left beside the generation (the sorts' files were anonymous).
        assert_eq!(l.generations(), vec!["gen-1"], "runs of {run}");

        // Every file of a kind is found at its vector after the swap.
        let v = l.scan(0);
        let hits = v.nearest(&l.cat, &vector("v5"), 10).unwrap();
        let mut want: Vec<String> = (0..150).filter(|&i| kind(i) == 5).map(file).collect();
        want.sort();
        let found: Vec<String> = hits
            .iter()
            .filter(|h| h.1 > 0.999)
            .map(|h| h.0.clone())
            .collect();
        assert_eq!(found, want, "runs of {run}");
    }
}

/// A writer of codes alone (`lakestar index`) builds no graph even where one is wanted
/// (`graph_above` is 0 in unit tests), keeps the graph a graph builder swapped in while
/// it is sound and its changes stay below the limits, and rebuilds codes alone when
/// they do not.
#[test]
fn a_writer_of_codes_alone_builds_no_graph_and_keeps_one_built_apart() {
    let mut l = filled(100);
    let codes = GraphBuild::CodesOnly;
    let refresh = |l: &mut Lake, how| {
        let r = refresh_as(&mut l.cat, &l.dir, EMB, 0, None, how).unwrap();
        crate::search::ann::update::inline(&mut l.cat, r).unwrap()
    };
    let has_graph = |l: &Lake, g| graph::has_graph(&l.dir, g);
    assert_eq!(
        refresh(&mut l, codes),
        Refreshed::Built {
            generation: 1,
            files: 100
        }
    );
    assert!(!has_graph(&l, 1));
    assert_eq!(l.generations(), vec!["gen-1"]);
    // Nothing changed: codes alone are kept, by a writer of codes alone only.
    assert_eq!(refresh(&mut l, codes), Refreshed::Kept);
    let apart = GraphBuild::Deferred { in_flight: None };
    let Refresh::Build(job) = refresh_as(&mut l.cat, &l.dir, EMB, 0, None, apart).unwrap() else {
        panic!("a graph builder wants the graph");
    };
    assert!(matches!(
        swap(&mut l.cat, job.build().unwrap()).unwrap(),
        Refreshed::Built { generation: 2, .. }
    ));
    assert!(has_graph(&l, 2));
    // A few changes: the graph stays for a writer of codes alone too.
    change_four(&mut l);
    assert_eq!(refresh(&mut l, codes), Refreshed::Kept);
    assert_eq!(l.generations(), vec!["gen-2"]);
    assert_eq!(l.open(0).kind(), "hnsw");
    // Past the tombstones' limit, its rebuild holds codes alone.
    for i in 40..70 {
        l.delete(&format!("f{i:03}.csv"));
    }
    assert!(matches!(
        refresh(&mut l, codes),
        Refreshed::Built { generation: 3, .. }
    ));
    assert!(!has_graph(&l, 3));
    assert_eq!(l.generations(), vec!["gen-3"]);
    assert_eq!(l.scan(0).kind(), "codes");
    assert_eq!(l.scan(0).len(), 70);
}
