//! What changed since the graph was built: tombstones never come back, the delta is
//! searched beside the graph, and past their bounds a rebuild swaps in a new generation.

use super::*;

#[test]
fn changes_before_a_refresh_are_tombstoned_and_searched_in_the_delta() {
    // The state a crash leaves between the catalog's commits and the vector refresh.
    let mut l = filled(100);
    l.refresh(0);
    change_four(&mut l);
    let v = l.open(0);
    assert_eq!((v.kind(), v.len()), ("hnsw", 100));
    let st = status(&l.cat, &l.dir, EMB).unwrap();
    assert_eq!(
        (st.files, st.tombstones, st.delta, st.live),
        (100, 3, 3, 100)
    );

    let hits = v.nearest(&l.cat, &vector("content 10"), 100).unwrap();
    assert!(!paths(&hits).contains(&"f010.csv"), "deleted file returned");
    assert!(!paths(&hits).contains(&"f030.csv"), "old name returned");
    assert_eq!(hits.len(), 100);
    // The edited file ranks by its new vector, not the one the graph holds.
    let old = v.nearest(&l.cat, &vector("content 20"), 1).unwrap();
    assert_ne!(old[0].0, "f020.csv");
    let new = v.nearest(&l.cat, &vector("content 20, edited"), 1).unwrap();
    assert_eq!(new[0].0, "f020.csv");
    assert_eq!(
        v.nearest(&l.cat, &vector("content 30"), 1).unwrap()[0].0,
        "moved/f030.csv"
    );
    assert_eq!(
        v.nearest(&l.cat, &vector("brand new"), 1).unwrap()[0].0,
        "new.csv"
    );
    // Few changes: the refresh keeps the graph.
    assert_eq!(l.refresh(0), Refreshed::Kept);
    assert_eq!(l.generations(), vec!["gen-1"]);
}

#[test]
fn tombstones_past_the_threshold_rebuild_into_a_new_generation() {
    let mut l = filled(100);
    l.refresh(0);
    for i in 0..21 {
        l.delete(&format!("f{i:03}.csv"));
    }
    assert_eq!(
        l.refresh(0),
        Refreshed::Built {
            generation: 2,
            files: 79
        }
    );
    assert_eq!(l.generations(), vec!["gen-2"]);
    let st = status(&l.cat, &l.dir, EMB).unwrap();
    assert_eq!(
        (st.generation, st.files, st.tombstones, st.delta),
        (Some(2), 79, 0, 0)
    );
    let v = l.open(0);
    assert_eq!((v.kind(), v.len()), ("hnsw", 79));
    let hits = v.nearest(&l.cat, &vector("content 3"), 79).unwrap();
    assert_eq!(hits.len(), 79);
    assert!(hits.iter().all(|h| h.0.as_str() >= "f021.csv"));
    // Likewise a delta past the threshold.
    for i in 0..20 {
        l.put(&format!("g{i}.csv"), &format!("more {i}"));
    }
    assert!(matches!(
        l.refresh(0),
        Refreshed::Built { generation: 3, .. }
    ));
    // Falling below the threshold drops the graph.
    assert_eq!(l.refresh(1000), Refreshed::Exact);
    assert!(l.generations().is_empty());
    assert_eq!(l.open(0).kind(), "exact");
}

#[test]
fn bounds_spare_the_count_until_they_reach_the_limit() {
    let mut l = filled(100);
    l.refresh(0);
    let sync = |l: &mut Lake, changed: u64| {
        assert!(update::begin(&l.cat).unwrap(), "the last refresh finished");
        refresh_with(&mut l.cat, &l.dir, EMB, 0, Some(changed)).unwrap()
    };
    // The same file edited 25 times: the bounds pass 20, the exact count finds 1 and 1.
    for i in 0..25 {
        l.put("f050.csv", &format!("edit {i}"));
        assert_eq!(sync(&mut l, 1), Refreshed::Kept);
    }
    // Counted at the 21st edit (1 and 1), raised by the 4 after it.
    let meta = VectorMeta::load(&l.cat).unwrap();
    assert_eq!((meta.tombstones, meta.delta, meta.live), (5, 5, 104));
    assert_eq!(meta.graph.as_ref().unwrap().generation, 1);
    assert_eq!(l.refresh(0), Refreshed::Kept);
    let meta = VectorMeta::load(&l.cat).unwrap();
    assert_eq!((meta.tombstones, meta.delta, meta.live), (1, 1, 100));
    // 19 deletions stay within the bounds; one more needs the count, which rebuilds.
    for i in 0..19 {
        l.delete(&format!("f{i:03}.csv"));
    }
    assert_eq!(sync(&mut l, 19), Refreshed::Kept);
    assert_eq!(VectorMeta::load(&l.cat).unwrap().tombstones, 20);
    l.delete("f099.csv");
    assert!(matches!(
        sync(&mut l, 1),
        Refreshed::Built {
            generation: 2,
            files: 80
        }
    ));
    // A sync that began and never refreshed: the next one cannot trust the bounds.
    assert!(update::begin(&l.cat).unwrap());
    assert!(!update::begin(&l.cat).unwrap());
}

#[test]
fn only_changed_paths_are_read_as_tombstones_and_delta() {
    let mut l = filled(60);
    l.refresh(0);
    let members = current_members(&l);
    assert!(tombstones(&l, &members).is_empty());
    assert!(delta_paths(&l, &members).is_empty());
    l.delete("f001.csv");
    l.put("f002.csv", "content 2, edited");
    l.rewrite("f003.csv", "content 3"); // rewritten as it was: stale, but neither
    l.put("new.csv", "brand new");
    assert_eq!(tombstones(&l, &members), vec!["f001.csv", "f002.csv"]);
    assert_eq!(delta_paths(&l, &members), vec!["f002.csv", "new.csv"]);

    // Members swapped in from an older snapshot (a graph built while the lake moved
    // on): what changed since is stale from the swap on.
    let mut older = file_vectors(&l.cat, &l.dir, EMB).unwrap();
    older.retain(|m| m.path != "new.csv");
    l.put("f004.csv", "content 4, edited after the snapshot");
    // The same generation's members again, at their points.
    let swapped: Vec<(u64, &crate::catalog::KeyedVector)> = older
        .iter()
        .map(|m| (members.point_of(&m.path).unwrap().expect("a member"), m))
        .collect();
    // The rows' points stay as they are: no generation is handed over here.
    let none = crate::catalog::Handover {
        outgoing_embedder: None,
        outgoing: &|_| None,
        incoming_embedder: EMB,
    };
    l.cat
        .replace_graph_members(&swapped[..], MetaKey::VectorIndex, "{}", &none)
        .unwrap();
    assert_eq!(tombstones(&l, &members), vec!["f004.csv"]);
    assert_eq!(delta_paths(&l, &members), vec!["f004.csv", "new.csv"]);
    // No graph: nothing stale is kept.
    let no_members: &[(u64, &crate::catalog::KeyedVector)] = &[];
    l.cat
        .replace_graph_members(no_members, MetaKey::VectorIndex, "{}", &none)
        .unwrap();
    l.put("f005.csv", "edited without a graph");
    assert!(l.cat.stale_vectors(EMB).unwrap().is_empty());
}

/// The members of the generation the catalog names.
fn current_members(l: &Lake) -> members::Members {
    let g = VectorMeta::load(&l.cat)
        .unwrap()
        .graph
        .expect("a generation");
    graph::open_members(&l.dir, g.generation, EMB, g.points as usize).unwrap()
}

fn tombstones(l: &Lake, members: &members::Members) -> Vec<String> {
    stale::staleness(&l.cat, EMB, members)
        .unwrap()
        .unwrap()
        .tombstones
}

fn delta_paths(l: &Lake, members: &members::Members) -> Vec<String> {
    stale::staleness(&l.cat, EMB, members)
        .unwrap()
        .unwrap()
        .delta
        .into_iter()
        .map(|d| d.0)
        .collect()
}
