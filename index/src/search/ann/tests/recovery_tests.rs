//! Damage, interruptions and another embedder's graph: searches fall back to exact
//! search, and the next run rebuilds.

use super::*;

#[test]
fn a_damaged_or_missing_graph_falls_back_to_exact_and_the_next_run_rebuilds() {
    let mut l = filled(80);
    l.refresh(0);
    let (data, mut bytes) = flip_byte(&l, "ann.hnsw.data", -3);
    let n = bytes.len();
    let v = l.open(0);
    assert_eq!((v.kind(), v.len()), ("exact", 80));
    assert_eq!(
        v.nearest(&l.cat, &vector("content 5"), 1).unwrap()[0].0,
        "f005.csv"
    );

    // A truncated file is what a writer notices cheaply: it rebuilds.
    bytes.truncate(n / 2);
    std::fs::write(&data, &bytes).unwrap();
    assert!(matches!(
        check_with(&mut l.cat, &l.dir, EMB, 0).unwrap(),
        Refreshed::Built { generation: 2, .. }
    ));
    let v = l.open(0);
    assert_eq!(v.kind(), "hnsw", "{v:?} {:?}", l.generations());
    // Nothing changed, nothing damaged: the check is a no-op.
    assert_eq!(
        check_with(&mut l.cat, &l.dir, EMB, 0).unwrap(),
        Refreshed::Kept
    );

    // Lost with the vectors it held (`catalog::held`): searches go on without them,
    // and the next run gives them up and embeds them again before it rebuilds.
    std::fs::remove_dir_all(l.dir.join(graph::VECTORS_DIR)).unwrap();
    let v = l.open(0);
    assert_eq!((v.kind(), v.len()), ("exact", 0));
    assert_eq!(update::give_up_lost(&mut l.cat, &l.dir).unwrap(), 80);
    for i in 0..80 {
        l.put(&format!("f{i:03}.csv"), &format!("content {i}"));
    }
    l.cat.clear_vectors_missing().unwrap();
    assert!(matches!(
        check_with(&mut l.cat, &l.dir, EMB, 0).unwrap(),
        Refreshed::Built { generation: 3, .. }
    ));
    assert_eq!(l.open(0).kind(), "hnsw");
}

#[test]
fn an_interrupted_refresh_is_finished_by_the_next_check() {
    let mut l = filled(50);
    l.refresh(0);
    for i in 0..20 {
        l.delete(&format!("f{i:03}.csv"));
    }
    // A sync began (and crashed before its refresh), leaving a half-written generation.
    update::begin(&l.cat).unwrap();
    std::fs::create_dir_all(l.dir.join("vectors/gen-2.tmp")).unwrap();
    assert!(matches!(
        check_with(&mut l.cat, &l.dir, EMB, 0).unwrap(),
        Refreshed::Built { generation: 3, .. }
    ));
    assert_eq!(l.generations(), vec!["gen-3"]);
}

#[test]
fn another_embedder_s_graph_is_ignored_and_replaced() {
    let mut l = filled(40);
    l.refresh(0);
    let other = "other-emb-16";
    let items: Vec<_> = (0..40)
        .map(|i| {
            let c = format!("content {i}");
            (hash(&c), "csv@1".to_string(), vector(&format!("other {i}")))
        })
        .collect();
    l.cat.put_embeddings(other, &items).unwrap();
    let v = VectorIndex::open_with(&l.cat, &l.dir, other, 0, Mode::Graph).unwrap();
    assert_eq!(v.kind(), "exact");
    assert_eq!(
        v.nearest(&l.cat, &vector("other 4"), 1).unwrap()[0].0,
        "f004.csv",
        "searched with the other embedder's vectors"
    );
    assert!(matches!(
        refresh_with(&mut l.cat, &l.dir, other, 0, None).unwrap(),
        Refreshed::Built { generation: 2, .. }
    ));
    assert_eq!(
        VectorIndex::open_with(&l.cat, &l.dir, other, 0, Mode::Graph)
            .unwrap()
            .kind(),
        "hnsw"
    );
}
