//! Searches through every view of the index (exact, loaded graph, scanned codes,
//! resident, reopened) answer as exact search does.

use super::*;

#[test]
fn below_the_threshold_search_is_exact_and_no_graph_is_kept() {
    let mut l = filled(30);
    assert_eq!(l.refresh(31), Refreshed::Exact);
    assert!(l.generations().is_empty());
    let v = l.open(31);
    assert_eq!((v.kind(), v.len()), ("exact", 30));
    let hits = v.nearest(&l.cat, &vector("content 7"), 3).unwrap();
    assert_eq!(hits[0].0, "f007.csv");
    assert!((hits[0].1 - 1.0).abs() < 1e-5);
}

#[test]
fn the_graph_answers_like_exact_search_in_the_same_shape() {
    let mut l = filled(120);
    assert_eq!(
        l.refresh(0),
        Refreshed::Built {
            generation: 1,
            files: 120
        }
    );
    assert_eq!(l.generations(), vec!["gen-1"]);
    let g = l.open(0);
    let e = l.exact();
    assert_eq!((g.kind(), g.len(), e.len()), ("hnsw", 120, 120));
    for i in [0, 17, 64, 119] {
        let q = vector(&format!("content {i}"));
        // ef ≥ points: the graph search is exhaustive here, so the answers are equal.
        let (a, b) = (
            g.nearest(&l.cat, &q, 10).unwrap(),
            e.nearest(&l.cat, &q, 10).unwrap(),
        );
        assert_eq!(paths(&a), paths(&b));
        for (x, y) in a.iter().zip(&b) {
            assert!((x.1 - y.1).abs() < 1e-5, "{a:?} {b:?}");
        }
        assert_eq!(a[0].0, format!("f{i:03}.csv"));
    }
    // More asked than there are: everything, once.
    let all = g.nearest(&l.cat, &vector("x"), 500).unwrap();
    assert_eq!(all.len(), 120);
    // A query of another dimension matches nothing rather than failing.
    assert!(g.nearest(&l.cat, &[1.0, 2.0], 5).unwrap().is_empty());
}

#[test]
fn a_reopen_keeps_the_loaded_graph_while_its_generation_stands() {
    let mut l = filled(100);
    l.refresh(0);
    let first = l.open(0);
    l.delete("f010.csv");
    l.put("new.csv", "brand new");
    assert_eq!(l.refresh(0), Refreshed::Kept);
    let second = first.reopen_with(&l.cat, &l.dir, EMB, 0).unwrap();
    assert!(second.shares_graph_with(&first));
    assert_eq!(
        second.nearest(&l.cat, &vector("brand new"), 1).unwrap()[0].0,
        "new.csv"
    );
    assert!(
        !paths(&second.nearest(&l.cat, &vector("content 10"), 100).unwrap()).contains(&"f010.csv")
    );
    // The first view is unchanged: requests in flight keep what they started with.
    assert_eq!(
        first.nearest(&l.cat, &vector("content 10"), 1).unwrap()[0].0,
        "f010.csv"
    );
    for i in 0..21 {
        l.delete(&format!("f{i:03}.csv"));
    }
    assert!(matches!(l.refresh(0), Refreshed::Built { .. }));
    let third = second.reopen_with(&l.cat, &l.dir, EMB, 0).unwrap();
    assert!(!third.shares_graph_with(&second));
    assert_eq!((third.kind(), third.len()), ("hnsw", 80));
}

#[test]
fn a_resident_index_scans_small_codes_and_loads_the_graph_of_larger_ones() {
    let mut l = filled(100);
    l.refresh(0);
    let resident = |scan_up_to: u64| {
        VectorIndex::open_with(&l.cat, &l.dir, EMB, 0, Mode::Resident { scan_up_to }).unwrap()
    };
    // 100 points of 4 + 16 bytes.
    let small = resident(100 * 20);
    assert_eq!((small.kind(), small.len()), ("codes", 100));
    let large = resident(100 * 20 - 1);
    assert_eq!((large.kind(), large.len()), ("hnsw", 100));
    // Both answer alike, and a reopen keeps the choice rule, not the outcome.
    let q = vector("content 42");
    assert_eq!(
        small.nearest(&l.cat, &q, 1).unwrap()[0].0,
        large.nearest(&l.cat, &q, 1).unwrap()[0].0
    );
    l.put("new.csv", "brand new");
    assert_eq!(l.refresh(0), Refreshed::Kept);
    let again = large.reopen_with(&l.cat, &l.dir, EMB, 0).unwrap();
    assert!(again.shares_graph_with(&large));
}

#[test]
fn the_codes_scan_answers_exactly_and_a_superseded_view_falls_back_to_the_catalog() {
    let mut l = filled(100);
    l.refresh(0);
    change_four(&mut l);
    let s = l.scan(0);
    assert_eq!((s.kind(), s.len()), ("codes", 100));
    let e = l.exact();
    for q in [
        "content 10",
        "content 20",
        "content 20, edited",
        "brand new",
        "x",
    ] {
        let (a, b) = (
            s.nearest(&l.cat, &vector(q), 100).unwrap(),
            e.nearest(&l.cat, &vector(q), 100).unwrap(),
        );
        assert_eq!(paths(&a), paths(&b), "{q}");
        assert!(a.iter().zip(&b).all(|(x, y)| (x.1 - y.1).abs() < 1e-6));
    }
    assert!(!paths(&s.nearest(&l.cat, &vector("content 10"), 100).unwrap()).contains(&"f010.csv"));
    assert_eq!(
        s.nearest(&l.cat, &vector("content 30"), 1).unwrap()[0].0,
        "moved/f030.csv"
    );

    // A rebuild swaps generation 2 in after the view was opened: generation 1's points
    // no longer resolve, so the view answers exactly, from the catalog as it is now.
    for i in 40..65 {
        l.delete(&format!("f{i:03}.csv"));
    }
    assert!(matches!(
        l.refresh(0),
        Refreshed::Built { generation: 2, .. }
    ));
    let q = vector("content 50");
    let hits = s.nearest(&l.cat, &q, 5).unwrap();
    assert!(
        !paths(&hits).contains(&"f050.csv"),
        "a deleted file came back"
    );
    assert_eq!(hits, l.exact().nearest(&l.cat, &q, 5).unwrap());
}

#[test]
fn files_with_identical_vectors_share_a_point_and_all_come_back() {
    let mut l = filled(60);
    for i in 0..25 {
        l.put_vector(&format!("twin{i:02}.csv"), &format!("t{i}"), vector("twin"));
    }
    assert!(matches!(l.refresh(0), Refreshed::Built { files: 85, .. }));
    let st = status(&l.cat, &l.dir, EMB).unwrap();
    assert_eq!((st.points, st.files), (61, 85));
    let v = l.open(0);
    assert_eq!(v.len(), 85);
    let hits = v.nearest(&l.cat, &vector("twin"), 30).unwrap();
    let twins: Vec<&str> = hits.iter().take(25).map(|h| h.0.as_str()).collect();
    assert_eq!(
        twins,
        (0..25)
            .map(|i| format!("twin{i:02}.csv"))
            .collect::<Vec<_>>(),
        "all of them, ties by path"
    );
    // One twin goes: the point stays for the others.
    l.delete("twin03.csv");
    let v = l.open(0);
    let hits = v.nearest(&l.cat, &vector("twin"), 24).unwrap();
    assert_eq!(hits.len(), 24);
    assert!(!paths(&hits).contains(&"twin03.csv"));
    assert!(hits.iter().all(|h| h.1 > 0.999));
}

#[test]
fn identical_and_zero_vectors_do_not_panic() {
    let mut l = lake();
    for i in 0..30 {
        l.put_vector(&format!("same{i}.csv"), &format!("s{i}"), vec![0.5; DIM]);
    }
    for i in 0..10 {
        l.put_vector(&format!("zero{i}.csv"), &format!("z{i}"), vec![0.0; DIM]);
    }
    assert!(matches!(l.refresh(0), Refreshed::Built { .. }));
    let v = l.open(0);
    assert_eq!(v.kind(), "hnsw");
    let hits = v.nearest(&l.cat, &[0.5; DIM], 5).unwrap();
    assert_eq!(hits.len(), 5);
    assert!(hits.iter().all(|h| h.0.starts_with("same") && h.1 > 0.999));
    assert_eq!(v.nearest(&l.cat, &[0.0; DIM], 5).unwrap().len(), 5);
}

#[test]
fn the_index_can_move_between_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<VectorIndex>();
}
