//! The vector index against a real catalog: graph and exact search agree, tombstones
//! never come back, rebuilds swap generations, and damage falls back to exact search.

use super::update::{check_with, refresh_with, Refreshed};
use super::*;
use crate::catalog::{CatalogWriter, Change, FileRow, FileState, Hash};
use crate::lock::WriterLock;
use crate::Format;

const EMB: &str = "test-emb-16";
const DIM: usize = 16;

struct Lake {
    _tmp: tempfile::TempDir,
    dir: std::path::PathBuf,
    cat: CatalogWriter,
}

fn lake() -> Lake {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("idx");
    let cat = CatalogWriter::open(WriterLock::acquire(&dir).unwrap(), tmp.path()).unwrap();
    Lake {
        _tmp: tmp,
        dir,
        cat,
    }
}

fn hash(content: &str) -> Hash {
    *blake3::hash(content.as_bytes()).as_bytes()
}

fn row(path: &str, content: &str) -> FileRow {
    FileRow {
        path: path.into(),
        size: content.len() as u64,
        mtime_ns: 1,
        hash: Some(hash(content)),
        format: Format::Csv,
        analyzer: Some("csv@1".into()),
        state: FileState::Ok,
        error: None,
        racy: false,
        indexed_at: 0,
        time: None,
        sampled: false,
        schema: None,
    }
}

/// A deterministic vector per content string.
fn vector(content: &str) -> Vec<f32> {
    let mut rng =
        fastrand::Rng::with_seed(u64::from_le_bytes(hash(content)[..8].try_into().unwrap()));
    (0..DIM).map(|_| rng.f32() - 0.5).collect()
}

impl Lake {
    /// Write (or overwrite) `path` with `content` and its embedding.
    fn put(&mut self, path: &str, content: &str) {
        self.put_vector(path, content, vector(content));
    }

    fn put_vector(&mut self, path: &str, content: &str, v: Vec<f32>) {
        self.cat
            .apply(&[Change::Upsert {
                row: row(path, content),
                description: None,
            }])
            .unwrap();
        self.cat
            .put_embeddings(EMB, &[(hash(content), "csv@1".into(), v)])
            .unwrap();
    }

    fn delete(&mut self, path: &str) {
        self.cat
            .apply(&[Change::Delete { path: path.into() }])
            .unwrap();
    }

    fn rename(&mut self, from: &str, to: &str, content: &str) {
        self.cat
            .apply(&[Change::Rename {
                from: from.into(),
                row: row(to, content),
            }])
            .unwrap();
    }

    fn refresh(&mut self, threshold: u64) -> Refreshed {
        refresh_with(&mut self.cat, &self.dir, EMB, threshold, None).unwrap()
    }

    /// The graph loaded, as a long-lived process opens it.
    fn open(&self, threshold: u64) -> VectorIndex {
        VectorIndex::open_with(&self.cat, &self.dir, EMB, threshold, Mode::Graph).unwrap()
    }

    /// The generation's codes scanned, as a one-off search opens it.
    fn scan(&self, threshold: u64) -> VectorIndex {
        VectorIndex::open_with(&self.cat, &self.dir, EMB, threshold, Mode::Scan).unwrap()
    }

    fn exact(&self) -> VectorIndex {
        VectorIndex::open_exact(&self.cat, EMB).unwrap()
    }

    fn generations(&self) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(self.dir.join(graph::VECTORS_DIR))
            .map(|d| {
                d.map(|e| e.unwrap().file_name().into_string().unwrap())
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    }
}

fn filled(n: usize) -> Lake {
    let mut l = lake();
    for i in 0..n {
        l.put(&format!("f{i:03}.csv"), &format!("content {i}"));
    }
    l
}

/// One file deleted, one edited, one renamed, one added.
fn change_four(l: &mut Lake) {
    l.delete("f010.csv");
    l.put("f020.csv", "content 20, edited");
    l.rename("f030.csv", "moved/f030.csv", "content 30");
    l.put("new.csv", "brand new");
}

fn paths(hits: &[(String, f32)]) -> Vec<&str> {
    hits.iter().map(|h| h.0.as_str()).collect()
}

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
fn a_damaged_or_missing_graph_falls_back_to_exact_and_the_next_run_rebuilds() {
    let mut l = filled(80);
    l.refresh(0);
    let data = graph::generation_dir(&l.dir, 1).join("ann.hnsw.data");
    let mut bytes = std::fs::read(&data).unwrap();
    let n = bytes.len();
    bytes[n - 3] ^= 0x55;
    std::fs::write(&data, &bytes).unwrap();
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
    assert_eq!(l.open(0).kind(), "hnsw");
    // Nothing changed, nothing damaged: the check is a no-op.
    assert_eq!(
        check_with(&mut l.cat, &l.dir, EMB, 0).unwrap(),
        Refreshed::Kept
    );

    std::fs::remove_dir_all(l.dir.join(graph::VECTORS_DIR)).unwrap();
    assert_eq!(l.open(0).kind(), "exact");
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
fn only_changed_paths_are_read_as_tombstones_and_delta() {
    let mut l = filled(60);
    l.refresh(0);
    assert!(l.cat.graph_tombstones().unwrap().is_empty());
    assert!(l.cat.graph_delta(EMB).unwrap().is_empty());
    l.delete("f001.csv");
    l.put("f002.csv", "content 2, edited");
    l.put("f003.csv", "content 3"); // rewritten as it was: stale, but neither
    l.put("new.csv", "brand new");
    assert_eq!(
        l.cat.graph_tombstones().unwrap(),
        vec!["f001.csv", "f002.csv"]
    );
    assert_eq!(delta_paths(&l), vec!["f002.csv", "new.csv"]);

    // Members swapped in from an older snapshot (a graph built while the lake moved
    // on): what changed since is stale from the swap on.
    let mut older = l.cat.keyed_file_vectors(EMB).unwrap();
    older.retain(|m| m.path != "new.csv");
    l.put("f004.csv", "content 4, edited after the snapshot");
    let members: Vec<(u64, &crate::catalog::KeyedVector)> = older
        .iter()
        .enumerate()
        .map(|(i, m)| (i as u64, m))
        .collect();
    l.cat
        .replace_graph_members(&members, MetaKey::VectorIndex, "{}")
        .unwrap();
    assert_eq!(l.cat.graph_tombstones().unwrap(), vec!["f004.csv"]);
    assert_eq!(delta_paths(&l), vec!["f004.csv", "new.csv"]);
    // No graph: nothing stale is kept.
    l.cat
        .replace_graph_members(&[], MetaKey::VectorIndex, "{}")
        .unwrap();
    l.put("f005.csv", "edited without a graph");
    assert!(l.cat.graph_tombstones().unwrap().is_empty());
    assert!(delta_paths(&l).is_empty());
}

fn delta_paths(l: &Lake) -> Vec<String> {
    l.cat
        .graph_delta(EMB)
        .unwrap()
        .into_iter()
        .map(|d| d.0)
        .collect()
}

#[test]
fn a_cancelled_build_writes_nothing_and_the_next_refresh_builds_again() {
    use super::update::{refresh_as, GraphBuild, Refresh};
    use std::sync::atomic::AtomicBool;
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
    use super::update::{refresh_as, swap, GraphBuild, Refresh};
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
    use super::update::{refresh_as, swap, GraphBuild, Refresh};
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
