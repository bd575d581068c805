//! The vectors a generation holds are not kept twice (`catalog::held`): once it is
//! swapped in, the catalog's rows keep its points, every reader reads them back, each
//! way a generation goes (rebuilt, dropped, lost, damaged) hands them on or gives them
//! up to be embedded again, and every search answers as it did with the vectors in the
//! catalog.

use super::*;

/// Every file's top ten for a few queries, as `v` answers them.
fn answers(l: &Lake, v: &VectorIndex) -> Vec<Vec<(String, f32)>> {
    [
        "content 5",
        "content 33",
        "brand new",
        "content 30",
        "nothing alike",
    ]
    .iter()
    .map(|q| v.nearest(&l.cat, &vector(q), 10).unwrap())
    .collect()
}

/// What each file's vector should be: the one [`Lake::put`] stored for its content.
fn expected(contents: &[(&str, &str)]) -> Vec<Vec<(String, f32)>> {
    let mut fresh = lake();
    for (p, c) in contents {
        fresh.put(p, c);
    }
    answers(&fresh, &fresh.exact())
}

fn contents(n: usize) -> Vec<(String, String)> {
    (0..n)
        .map(|i| (format!("f{i:03}.csv"), format!("content {i}")))
        .collect()
}

fn refs(v: &[(String, String)]) -> Vec<(&str, &str)> {
    v.iter().map(|(p, c)| (p.as_str(), c.as_str())).collect()
}

#[test]
fn a_swapped_in_generation_holds_the_vectors_and_every_reader_answers_alike() {
    let mut l = filled(80);
    let before = answers(&l, &l.exact());
    assert_eq!(l.cat.held_vector_count(EMB).unwrap(), 0);
    assert!(matches!(l.refresh(0), Refreshed::Built { .. }));
    assert_eq!(
        l.cat.held_vector_count(EMB).unwrap(),
        80,
        "every row a point"
    );
    assert_eq!(answers(&l, &l.exact()), before, "exact, points read back");
    assert_eq!(answers(&l, &l.scan(0)), before, "the codes scanned");
    // 80 points: the graph's walk at its breadth is exhaustive.
    assert_eq!(answers(&l, &l.open(0)), before, "the graph");

    // The graph dropped (the index fell below the threshold): every vector is back in
    // the catalog, and nothing points anywhere.
    assert_eq!(l.refresh(1_000), Refreshed::Exact);
    assert!(l.generations().is_empty());
    assert_eq!(l.cat.held_vector_count(EMB).unwrap(), 0);
    assert_eq!(answers(&l, &l.exact()), before);
}

#[test]
fn a_rebuild_hands_the_points_on_and_gives_back_what_it_no_longer_holds() {
    let mut l = filled(60);
    l.refresh(0);
    change_four(&mut l);
    // A copy of a file: same description, the same row (a point) serves both.
    l.put("copy.csv", "content 40");
    for i in 0..15 {
        l.delete(&format!("f{:03}.csv", 45 + i));
    }
    let mut now = contents(45);
    now.retain(|(p, _)| !["f010.csv", "f020.csv", "f030.csv"].contains(&p.as_str()));
    for (p, c) in [
        ("f020.csv", "content 20, edited"),
        ("moved/f030.csv", "content 30"),
        ("new.csv", "brand new"),
        ("copy.csv", "content 40"),
    ] {
        now.push((p.into(), c.into()));
    }
    let want = expected(&refs(&now));
    // Before the rebuild the renamed file and the copy are in the delta, read from
    // the generation's points.
    assert_eq!(answers(&l, &l.scan(0)), want);
    assert_eq!(answers(&l, &l.exact()), want);

    assert!(matches!(
        l.refresh(0),
        Refreshed::Built { generation: 2, .. }
    ));
    assert_eq!(l.generations(), vec!["gen-2"]);
    // One point per distinct live description (46 files, the copy sharing its
    // original's); the deleted files' and the edited one's rows hold their codes again
    // (gen-1 is gone).
    assert_eq!(l.cat.held_vector_count(EMB).unwrap(), 45);
    assert_eq!(answers(&l, &l.scan(0)), want);
    assert_eq!(answers(&l, &l.open(0)), want);
    assert_eq!(answers(&l, &l.exact()), want);

    // A deleted file comes back unchanged: its row, given back, is its vector.
    l.cat
        .apply(&[Change::Upsert {
            row: row("f050.csv", "content 50"),
            description: None,
        }])
        .unwrap();
    now.push(("f050.csv".into(), "content 50".into()));
    assert_eq!(answers(&l, &l.exact()), expected(&refs(&now)));
}

#[test]
fn a_lost_generation_gives_its_points_up_to_be_embedded_again() {
    let mut l = filled(40);
    l.refresh(0);
    std::fs::remove_dir_all(l.dir.join(graph::VECTORS_DIR)).unwrap();
    // Searches go on without the vectors they cannot read.
    assert!(l.exact().is_empty());
    assert!(!l.cat.vectors_missing().unwrap());
    assert_eq!(update::give_up_lost(&mut l.cat, &l.dir).unwrap(), 40);
    assert!(
        l.cat.vectors_missing().unwrap(),
        "the next sync looks for them"
    );
    assert_eq!(l.cat.held_vector_count(EMB).unwrap(), 0);
    assert_eq!(l.cat.missing_embeddings(EMB).unwrap().len(), 40);
    // Nothing more to give up.
    assert_eq!(update::give_up_lost(&mut l.cat, &l.dir).unwrap(), 0);
}

#[test]
fn a_damaged_generation_s_points_are_not_copied_into_the_next() {
    let mut l = filled(50);
    l.refresh(0);
    // Same size, other bytes: only the digest tells, which a rebuild checks.
    flip_byte(&l, "codes.bin", 10);
    assert_eq!(update::give_up_lost(&mut l.cat, &l.dir).unwrap(), 0);
    for i in 0..20 {
        l.delete(&format!("f{i:03}.csv"));
    }
    // The rebuild this asks for waits for them to be embedded again.
    assert_eq!(l.refresh(0), Refreshed::Kept);
    assert_eq!(l.generations(), vec!["gen-1"]);
    assert!(l.cat.vectors_missing().unwrap());
    assert_eq!(l.cat.missing_embeddings(EMB).unwrap().len(), 30);
    // What the next sync does: embed them again; the rebuild it triggers holds them.
    for i in 20..50 {
        l.put(&format!("f{i:03}.csv"), &format!("content {i}"));
    }
    l.cat.clear_vectors_missing().unwrap();
    assert!(matches!(
        l.refresh(0),
        Refreshed::Built { generation: 2, .. }
    ));
    assert_eq!(l.cat.held_vector_count(EMB).unwrap(), 30);
    let want = expected(&refs(&contents(50)[20..]));
    assert_eq!(answers(&l, &l.scan(0)), want);
}
