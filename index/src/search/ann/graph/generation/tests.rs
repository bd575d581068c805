use super::super::tests::{codes, refs, vectors, PARAMS};
use super::*;
use crate::search::ann::dist::{best, normalized};

#[test]
fn a_written_generation_reloads_and_answers_like_the_built_graph() {
    let d = tempfile::tempdir().unwrap();
    let v = vectors(300, 24, 7);
    let c = codes(&v);
    let g = Graph::build(&refs(&c), PARAMS);
    assert!(write_generation(d.path(), 3, "emb", Some(&g), &refs(&c[1..]), &[], PARAMS).is_err());
    let m = write_generation(d.path(), 3, "emb", Some(&g), &refs(&c), &[], PARAMS).unwrap();
    assert!(m.has_graph() && has_graph(d.path(), 3));
    assert_eq!((m.points, m.dim, m.generation), (300, 24, 3));
    assert_eq!(m.codes.bytes, 300 * (4 + 24));
    let mapped = open_codes(d.path(), 3, "emb", 300).unwrap();
    assert_eq!((mapped.len(), mapped.dim()), (300, 24));
    assert!(looks_complete(d.path(), 3, "emb"));
    assert!(!looks_complete(d.path(), 3, "other"));
    let back = open_generation(d.path(), 3, "emb", 300).unwrap();
    for q in vectors(10, 24, 99) {
        let q = normalized(&q);
        let a = g.search(&q, 10, 300);
        let b = back.search(&q, 10, 300);
        assert_eq!(a.len(), 10);
        // ef ≥ points: both searches are exhaustive, so they agree on the best point.
        assert_eq!(a[0].0, b[0].0);
        assert!((a[0].1 - b[0].1).abs() < 1e-6);
        // The mapped codes score every point as the graph rescores the ones it finds.
        let all = mapped.scores(&q);
        assert_eq!(all.len(), 300);
        for (id, sim) in &a {
            assert_eq!(all[*id].0, *id);
            assert!((all[*id].1 - sim).abs() < 1e-6, "{id}");
        }
        assert_eq!(best(all, 10), a);
    }
    assert!(mapped.scores(&[0.5; 3]).is_empty());
    assert!(open_codes(d.path(), 3, "emb", 299).is_err());
    assert!(open_generation(d.path(), 3, "emb", 299).is_err());
    assert!(open_generation(d.path(), 4, "emb", 300).is_err());
}

#[test]
fn corrupt_truncated_or_missing_files_are_refused_not_loaded() {
    let d = tempfile::tempdir().unwrap();
    let v = vectors(100, 8, 3);
    let c = codes(&v);
    let g = Graph::build(&refs(&c), PARAMS);
    write_generation(d.path(), 1, "emb", Some(&g), &refs(&c), &[], PARAMS).unwrap();
    // A codes file of the wrong size is refused, and tells a writer to rebuild.
    let flat = generation_dir(d.path(), 1).join(CODES);
    let kept = std::fs::read(&flat).unwrap();
    std::fs::write(&flat, &kept[..kept.len() - 1]).unwrap();
    assert!(open_codes(d.path(), 1, "emb", 100).is_err());
    assert!(!looks_complete(d.path(), 1, "emb"));
    std::fs::write(&flat, &kept).unwrap();
    assert!(open_codes(d.path(), 1, "emb", 100).is_ok());
    let data = generation_dir(d.path(), 1).join("ann.hnsw.data");
    let mut bytes = std::fs::read(&data).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0xff;
    std::fs::write(&data, &bytes).unwrap();
    // Same size: only the digest tells.
    assert!(looks_complete(d.path(), 1, "emb"));
    let e = open_generation(d.path(), 1, "emb", 100).unwrap_err();
    assert!(e.contains("does not match"), "{e}");
    bytes.truncate(mid);
    std::fs::write(&data, &bytes).unwrap();
    assert!(!looks_complete(d.path(), 1, "emb"));
    std::fs::remove_file(&data).unwrap();
    assert!(open_generation(d.path(), 1, "emb", 100).is_err());
    std::fs::write(generation_dir(d.path(), 1).join(MANIFEST), "{not json").unwrap();
    assert!(open_generation(d.path(), 1, "emb", 100).is_err());
}

#[test]
fn a_generation_of_codes_alone_is_scanned_and_refuses_to_load_a_graph() {
    let d = tempfile::tempdir().unwrap();
    let c = codes(&vectors(50, 8, 11));
    let m = write_generation(d.path(), 2, "emb", None, &refs(&c), &[], PARAMS).unwrap();
    assert!(!m.has_graph() && !has_graph(d.path(), 2));
    assert_eq!((m.points, m.dim, m.codes.bytes), (50, 8, 50 * (4 + 8)));
    let mut left: Vec<_> = std::fs::read_dir(generation_dir(d.path(), 2))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    left.sort();
    assert_eq!(left, vec![CODES, MANIFEST, MEMBERS, NIBBLES]);
    assert_eq!(m.nibbles.as_ref().map(|n| n.bytes), Some(50 * (4 + 4)));
    assert!(looks_complete(d.path(), 2, "emb"));
    let codes = open_codes(d.path(), 2, "emb", 50).unwrap();
    assert_eq!(codes.len(), 50);
    assert!(codes.has_nibbles());
    // A generation written before the 4-bit copy (its manifest has none) is scanned
    // from its codes; so is one whose copy is cut short.
    let path = generation_dir(d.path(), 2).join(MANIFEST);
    let mut older = m.clone();
    older.nibbles = None;
    std::fs::write(&path, serde_json::to_vec(&older).unwrap()).unwrap();
    assert!(!std::fs::read_to_string(&path).unwrap().contains("nibbles"));
    assert!(looks_complete(d.path(), 2, "emb"));
    assert!(!open_codes(d.path(), 2, "emb", 50).unwrap().has_nibbles());
    std::fs::write(&path, serde_json::to_vec(&m).unwrap()).unwrap();
    let nib = generation_dir(d.path(), 2).join(NIBBLES);
    let bytes = std::fs::read(&nib).unwrap();
    std::fs::write(&nib, &bytes[..bytes.len() - 1]).unwrap();
    assert!(!looks_complete(d.path(), 2, "emb"));
    assert!(!open_codes(d.path(), 2, "emb", 50).unwrap().has_nibbles());
    std::fs::write(&nib, &bytes).unwrap();
    let e = open_generation(d.path(), 2, "emb", 50).unwrap_err();
    assert!(e.contains("no graph"), "{e}");
    // A graph builder wants a graph exactly above the threshold; a writer of codes
    // alone takes codes alone at any size, and a graph above the threshold.
    let exactly = |g, above| has_shape(d.path(), g, above, Shape::GraphExactlyIfWanted);
    let codes_or_wanted = |g, above| has_shape(d.path(), g, above, Shape::GraphIfWanted);
    assert!(exactly(2, 600));
    assert!(!exactly(2, 599));
    assert!(codes_or_wanted(2, 600) && codes_or_wanted(2, 599));
    let g = Graph::build(&refs(&c), PARAMS);
    write_generation(d.path(), 3, "emb", Some(&g), &refs(&c), &[], PARAMS).unwrap();
    assert!(exactly(3, 599));
    assert!(!exactly(3, 600));
    assert!(codes_or_wanted(3, 599));
    assert!(!codes_or_wanted(3, 600), "a graph where none is wanted");
    assert!(!exactly(4, 0) && !codes_or_wanted(4, 0), "no generation 4");
}

#[test]
fn other_generations_and_leftovers_are_removed() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join(VECTORS_DIR);
    for name in ["gen-1", "gen-2", "gen-7.tmp"] {
        std::fs::create_dir_all(root.join(name)).unwrap();
    }
    std::fs::write(root.join("stray"), "x").unwrap();
    assert_eq!(
        remove_other_generations(d.path(), Some(2), Some(7)).unwrap(),
        7
    );
    let mut left: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    left.sort();
    assert_eq!(
        left,
        vec!["gen-2", "gen-7.tmp"],
        "a build under way is spared"
    );
    assert_eq!(
        remove_other_generations(d.path(), Some(2), None).unwrap(),
        7
    );
    let left: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(left, vec!["gen-2"]);
    assert_eq!(remove_other_generations(d.path(), None, None).unwrap(), 2);
    assert_eq!(std::fs::read_dir(&root).unwrap().count(), 0);
    let none = tempfile::tempdir().unwrap();
    assert_eq!(
        remove_other_generations(none.path(), None, None).unwrap(),
        0
    );
}

#[test]
fn members_are_written_with_the_generation_and_one_without_them_is_rebuilt() {
    let d = tempfile::tempdir().unwrap();
    let c = codes(&vectors(40, 8, 3));
    let names: Vec<String> = (0..50).map(|i| format!("dir/f{i:03}.csv")).collect();
    // Ten files share their point with another (identical vectors).
    let members: Vec<(&str, u32)> = names
        .iter()
        .enumerate()
        .map(|(i, p)| (p.as_str(), (i % 40) as u32))
        .collect();
    let m = write_generation(d.path(), 1, "emb", None, &refs(&c), &members, PARAMS).unwrap();
    assert!(m.members.is_some() && looks_complete(d.path(), 1, "emb"));
    let read = open_members(d.path(), 1, "emb", 40).unwrap();
    assert_eq!(read.len(), 50);
    assert_eq!(read.point_of("dir/f045.csv").unwrap(), Some(5));
    assert_eq!(
        read.paths_of(&[5]).unwrap()[&5],
        vec!["dir/f005.csv", "dir/f045.csv"]
    );
    assert!(
        open_members(d.path(), 1, "emb", 41).is_err(),
        "another point count"
    );

    // A generation written before its members were kept with it: its codes are read,
    // but it is not complete, so the next refresh rebuilds it.
    let path = generation_dir(d.path(), 1).join(MANIFEST);
    let mut old = read_manifest(d.path(), 1).unwrap();
    old.members = None;
    std::fs::write(&path, serde_json::to_vec(&old).unwrap()).unwrap();
    assert!(!looks_complete(d.path(), 1, "emb"));
    assert!(open_members(d.path(), 1, "emb", 40).is_err());
    assert_eq!(open_codes(d.path(), 1, "emb", 40).unwrap().len(), 40);
}
