//! Index benchmark: first index, no-change re-index against a bare walk+stat of the same
//! tree, and one changed file, on synthetic lakes of mixed formats.
//!
//! Run: `cargo bench --bench index` (sizes 10000 and 100000), or
//! `cargo bench --bench index -- --sizes 10000 --dir /tmp/lakestar-bench`.
//! Lakes are generated once per size and seed and reused; all timings are warm-cache.
//! When a lake has enough vectors for the vector graph, the graph's share of the first
//! index is measured by rebuilding it alone.

use lakestar_index::catalog::CatalogWriter;
use lakestar_index::indexer::NoProgress;
use lakestar_index::lock::WriterLock;
use lakestar_index::search::ann;
use lakestar_index::{crawl, index, synth, IndexOptions};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn time<T>(f: impl FnOnce() -> T) -> (Duration, T) {
    let t = Instant::now();
    let r = f();
    (t.elapsed(), r)
}

/// Wall time and the process's CPU time (all threads) of `f`. The machine is shared:
/// wall time grows with other people's load, CPU time much less.
fn time_cpu<T>(f: impl FnOnce() -> T) -> (Duration, Duration, T) {
    let cpu = cpu_time::ProcessTime::now();
    let (wall, r) = time(f);
    (wall, cpu.elapsed(), r)
}

/// The baseline: what any tool must do to notice changes — list and stat every file.
fn bare_walk_stat(root: &Path) -> u64 {
    let mut n = 0;
    for e in walkdir::WalkDir::new(root)
        .into_iter()
        .filter_map(Result::ok)
    {
        if e.file_type().is_file() && e.metadata().is_ok() {
            n += 1;
        }
    }
    n
}

fn lake(dir: &Path, n: u64) -> (PathBuf, u64) {
    let root = dir.join(format!("lake-{n}"));
    let marker = dir.join(format!("lake-{n}.bytes"));
    if let Ok(s) = std::fs::read_to_string(&marker) {
        if root.is_dir() {
            return (root, s.trim().parse().unwrap());
        }
    }
    let _ = std::fs::remove_dir_all(&root);
    let (t, made) = time(|| synth::generate(&root, n, 2025).expect("generate lake"));
    eprintln!(
        "generated {n} files ({} MB) in {:.1}s",
        made.bytes / 1_000_000,
        t.as_secs_f64()
    );
    std::fs::write(&marker, made.bytes.to_string()).unwrap();
    // Let every mtime fall out of the racy window, as on a lake that is not being written.
    std::thread::sleep(Duration::from_millis(2100));
    (root, made.bytes)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let sizes: Vec<u64> = arg("--sizes")
        .unwrap_or_else(|| "10000,100000".into())
        .split(',')
        .map(|s| s.trim().parse().expect("--sizes takes numbers"))
        .collect();
    let dir = PathBuf::from(arg("--dir").unwrap_or_else(|| {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("target/bench-lakes")
            .to_string_lossy()
            .into_owned()
    }));
    std::fs::create_dir_all(&dir).unwrap();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("cores: {cores}; jobs: one per core; warm page cache\n");
    println!("| files | data | first index | CPU | files/s | MB/s | no-change re-index | bare walk+stat (walkdir) | ratio | parallel crawl only | one changed file |");
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let mut graphs = Vec::new();
    let mut sizes_seen = Vec::new();
    for n in sizes {
        let (root, bytes) = lake(&dir, n);
        let idx = dir.join(format!("index-{n}"));
        let _ = std::fs::remove_dir_all(&idx);
        let opts = IndexOptions::default();
        let (first, first_cpu, r) = time_cpu(|| index(&root, &idx, &opts, &NoProgress).unwrap());
        assert_eq!(r.files_seen, n);
        assert_eq!(r.errors, 0);
        if let Some(g) = graph_rebuild(&root, &idx, &opts) {
            graphs.push((n, first, first_cpu, g));
        }
        sizes_seen.push((n, bytes, index_size(&idx)));

        let mut again = Vec::new();
        let mut walk = Vec::new();
        let mut crawl_only = Vec::new();
        for _ in 0..5 {
            let (t, r) = time(|| index(&root, &idx, &opts, &NoProgress).unwrap());
            assert_eq!(
                (r.unchanged, r.analyzed),
                (n, 0),
                "no-change run changed something: {r:?}"
            );
            again.push(t);
            let (t, seen) = time(|| bare_walk_stat(&root));
            assert_eq!(seen, n);
            walk.push(t);
            let copts = crawl::CrawlOptions {
                threads: cores,
                ..Default::default()
            };
            let (t, c) = time(|| crawl::crawl(&root, &copts));
            assert_eq!(c.files.len() as u64, n);
            crawl_only.push(t);
        }
        let crawl = crawl::crawl(&root, &Default::default());
        let mut one = Vec::new();
        for i in 0..3 {
            let victim = root.join(&crawl.files[i * 7 + 1].path);
            let mut body = std::fs::read(&victim).unwrap();
            body.extend_from_slice(b"\n");
            std::fs::write(&victim, body).unwrap();
            let (t, r) = time(|| index(&root, &idx, &opts, &NoProgress).unwrap());
            assert_eq!((r.modified, r.analyzed), (1, 1), "{r:?}");
            one.push(t);
        }
        let (again, walk, crawl_only, one) =
            (median(again), median(walk), median(crawl_only), median(one));
        let ms = |d: Duration| format!("{:.0} ms", d.as_secs_f64() * 1000.0);
        println!(
            "| {n} | {:.0} MB | {:.2} s | {:.1} s | {:.0} | {:.1} | {} | {} | {:.2}× | {} | {} |",
            bytes as f64 / 1e6,
            first.as_secs_f64(),
            first_cpu.as_secs_f64(),
            n as f64 / first.as_secs_f64(),
            bytes as f64 / 1e6 / first.as_secs_f64(),
            ms(again),
            ms(walk),
            again.as_secs_f64() / walk.as_secs_f64(),
            ms(crawl_only),
            ms(one),
        );
    }
    println!("\nIndex size on disk after the first index, by part (MB; catalog tables by SQLite's dbstat, each with its indexes):\n");
    for (n, bytes, parts) in &sizes_seen {
        let total: u64 = parts.iter().map(|p| p.1).sum();
        let list: Vec<String> = parts
            .iter()
            .map(|(name, b)| format!("{name} {:.1}", *b as f64 / 1e6))
            .collect();
        println!(
            "- {n} files: {:.1} MB for {:.1} MB of data ({:.2}×): {}",
            total as f64 / 1e6,
            *bytes as f64 / 1e6,
            total as f64 / *bytes as f64,
            list.join(", ")
        );
    }
    let s = |d: Duration| d.as_secs_f64();
    for (n, first, first_cpu, (points, wall, cpu)) in graphs {
        println!(
            "\n{n} files: vector graph of {points} points rebuilt alone in {:.1} s, {:.1} s CPU ({:.0} % of the first index's wall time, {:.0} % of its CPU)",
            s(wall),
            s(cpu),
            100.0 * s(wall) / s(first),
            100.0 * s(cpu) / s(first_cpu),
        );
    }
}

/// The vector graph's share of a first index: (points, wall, CPU) of its rebuild alone
/// (read the vectors, build, write a generation). None when the index keeps no graph
/// (fewer vectors than `ann::EXACT_BELOW`).
fn graph_rebuild(
    root: &Path,
    idx: &Path,
    opts: &IndexOptions,
) -> Option<(u64, Duration, Duration)> {
    let emb = opts.embedder.build().unwrap().id();
    let mut cat = CatalogWriter::open(
        WriterLock::acquire(idx).unwrap(),
        &root.canonicalize().unwrap(),
    )
    .unwrap();
    let points = ann::VectorMeta::load(&cat).unwrap().graph?.points;
    std::fs::remove_dir_all(idx.join("vectors")).unwrap();
    let (wall, cpu, built) = time_cpu(|| ann::check(&mut cat, idx, &emb).unwrap());
    assert!(
        matches!(built, ann::update::Refreshed::Built { .. }),
        "{built:?}"
    );
    Some((points, wall, cpu))
}

/// Bytes of every file under `dir`.
fn dir_bytes(dir: &Path) -> u64 {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .filter_map(|e| e.metadata().ok())
        .map(|m| m.len())
        .sum()
}

/// The index at `idx` by part: each catalog table with its indexes (dbstat pages), the
/// catalog's free pages and write-ahead log, the text index, the vector graph.
fn index_size(idx: &Path) -> Vec<(String, u64)> {
    let db = idx.join("catalog.sqlite");
    let conn =
        rusqlite::Connection::open_with_flags(&db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let mut parts: Vec<(String, u64)> = conn
        .prepare(
            "SELECT COALESCE(m.tbl_name, d.name), SUM(d.pgsize) FROM dbstat d
             LEFT JOIN sqlite_master m ON m.name = d.name GROUP BY 1 ORDER BY 2 DESC",
        )
        .unwrap()
        .query_map([], |r| {
            Ok((
                format!("catalog {}", r.get::<_, String>(0)?),
                r.get::<_, i64>(1)? as u64,
            ))
        })
        .unwrap()
        .map(Result::unwrap)
        .filter(|p| p.1 >= 1_000_000)
        .collect();
    let file = std::fs::metadata(&db).map_or(0, |m| m.len());
    let listed: u64 = parts.iter().map(|p| p.1).sum();
    parts.push(("catalog other".into(), file.saturating_sub(listed)));
    let wal = std::fs::metadata(idx.join("catalog.sqlite-wal")).map_or(0, |m| m.len());
    parts.push(("catalog WAL".into(), wal));
    parts.push(("text".into(), dir_bytes(&idx.join("text"))));
    parts.push(("vectors".into(), dir_bytes(&idx.join("vectors"))));
    parts
}
