//! Index benchmark: first index, no-change re-index against a bare walk+stat of the same
//! tree, and one changed file, on synthetic lakes of mixed formats; for the first index
//! also its peak memory, when a search first answers and when the vector graph is ready
//! while it runs, and what a `lakestar search` costs a shell afterwards.
//!
//! Run: `cargo bench --bench index` (sizes 10000 and 100000), or
//! `cargo bench --bench index -- --sizes 10000,100000,1000000 --dir /tmp/lakestar-bench`.
//! Flags after `--`: `--nested` generates every size in the scaled layout (by default only
//! sizes above 100000 are, so that 10k and 100k stay comparable with the figures taken
//! with the flat layout); `--generate-only` writes the lakes, says how fast, and stops;
//! `--no-graph-rebuild` skips timing the vector graph's rebuild alone (long at 1M).
//! Lakes are generated once per size, layout and seed and reused; all timings are
//! warm-cache. The first index runs as a child process of the release `lakestar` binary
//! (`lakestar index LAKE --index IDX --embedder hash --json`), so that its peak RSS and
//! CPU (user+sys) are its own, read from `wait4`; its wall time includes process start.
//! While it runs the bench polls every 250 ms (or four times as long as a poll takes), in-process, for a search with a hit and
//! for the vector graph (which costs the child some CPU on a small machine). The rest
//! runs in-process. When a lake has enough vectors for the vector graph, the graph's
//! share of the first index is measured by rebuilding it alone. At 1M files and more the
//! no-change re-index and the one-changed-file run are timed once instead of 5 and 3 times.

use lakestar_index::catalog::CatalogReader;
use lakestar_index::catalog::CatalogWriter;
use lakestar_index::indexer::NoProgress;
use lakestar_index::lock::WriterLock;
use lakestar_index::search::ann;
use lakestar_index::search::engine::{SearchOptions, Searcher};
use lakestar_index::{crawl, index, synth, IndexOptions};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The release binary cargo builds beside the bench.
const LAKESTAR: &str = env!("CARGO_BIN_EXE_lakestar");

/// Sizes from which the no-change and one-changed-file runs are timed once.
const ONCE_FROM: u64 = 1_000_000;

/// Questions for `lakestar search`, about what the synthetic lakes hold.
const QUESTIONS: [&str; 10] = [
    "sales in emea",
    "hourly temperature readings of a sensor station",
    "purchase and refund events",
    "checkout service replicas and memory limits",
    "data dictionary of the finance team",
    "billing errors in the logs",
    "customers export by country",
    "orders per store in apac",
    "humidity degraded offline status",
    "runbook for the ingest service",
];

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

/// The lake of `n` files for the bench's seed, generated unless already there; the
/// scaled layout when `nested`.
fn lake(dir: &Path, n: u64, nested: bool) -> (PathBuf, u64) {
    let name = if nested {
        format!("lake-nested-{n}")
    } else {
        format!("lake-{n}")
    };
    let root = dir.join(&name);
    let marker = dir.join(format!("{name}.bytes"));
    if let Ok(s) = std::fs::read_to_string(&marker) {
        if root.is_dir() {
            return (root, s.trim().parse().unwrap());
        }
    }
    let _ = std::fs::remove_dir_all(&root);
    let (t, made) = time(|| {
        if nested {
            synth::generate_scaled(&root, n, 2025)
        } else {
            synth::generate(&root, n, 2025)
        }
        .expect("generate lake")
    });
    eprintln!(
        "generated {n} files ({} MB, {} layout) in {:.1}s: {:.0} files/s",
        made.bytes / 1_000_000,
        if nested { "nested" } else { "flat" },
        t.as_secs_f64(),
        n as f64 / t.as_secs_f64()
    );
    std::fs::write(&marker, made.bytes.to_string()).unwrap();
    // Let every mtime fall out of the racy window, as on a lake that is not being written.
    std::thread::sleep(Duration::from_millis(2100));
    (root, made.bytes)
}

/// What the first index, run as a child process, cost and when the index became usable.
struct FirstIndex {
    wall: Duration,
    /// User + system CPU of the child (all its threads).
    cpu: Duration,
    /// The child's peak resident set, bytes.
    peak_rss: u64,
    /// From the child's start until a search returned a hit.
    first_search: Option<Duration>,
    /// From the child's start until the vector graph served searches; None when the lake
    /// is below the exact-search threshold or no graph was built.
    graph_ready: Option<Duration>,
    report: serde_json::Value,
}

/// Whether a search of the index at `idx` returns a hit now; any error means "not yet".
fn searchable(idx: &Path) -> bool {
    let opts = SearchOptions {
        k: 5,
        nearest_anyway: true,
        ..Default::default()
    };
    Searcher::open_recorded(idx)
        .and_then(|s| s.search("sales in emea", &opts))
        .is_ok_and(|hits| !hits.is_empty())
}

/// Whether searches of the index at `idx` use the vector graph now: the catalog names a
/// complete generation of this embedder. (Not `ann::status`, which counts the vectors
/// with a join over every file: polled during a 1M-file index, its read transactions
/// overlapped so that SQLite could never restart the write-ahead log, which grew to
/// 6 GB.)
fn graph_serves(idx: &Path, embedder: &str) -> bool {
    CatalogReader::open(idx)
        .and_then(|cat| ann::VectorMeta::load(&cat))
        .is_ok_and(|m| {
            m.graph.is_some_and(|g| {
                g.embedder == embedder && ann::graph::looks_complete(idx, g.generation, embedder)
            })
        })
}

/// Run `lakestar index` on `root` into a fresh `idx` as a child process, polling the
/// index while it runs. A thread waits for the child with `wait4`, which gives the exact
/// end and the child's own rusage.
#[allow(clippy::zombie_processes)] // reaped by wait4, which std does not know of
fn first_index(root: &Path, idx: &Path, want_graph: bool) -> FirstIndex {
    let embedder = IndexOptions::default().embedder.build().unwrap().id();
    let out_path = idx.with_extension("json");
    let start = Instant::now();
    let child = Command::new(LAKESTAR)
        .arg("index")
        .arg(root)
        .arg("--index")
        .arg(idx)
        .args(["--embedder", "hash", "--json"])
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("run lakestar index");
    let pid = child.id() as libc::pid_t;
    let waiter = std::thread::spawn(move || {
        let mut status = 0;
        // SAFETY: a zeroed rusage is a valid value for wait4 to fill.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: pid is our child, not yet reaped (std's Child is never waited on).
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        assert_eq!(r, pid, "wait4: {}", std::io::Error::last_os_error());
        (start.elapsed(), status, usage)
    });
    let (mut first_search, mut graph_ready) = (None, None);
    while !waiter.is_finished() {
        let polled = Instant::now();
        if first_search.is_none() && searchable(idx) {
            first_search = Some(start.elapsed());
        }
        if want_graph && graph_ready.is_none() && graph_serves(idx, &embedder) {
            graph_ready = Some(start.elapsed());
        }
        // At least 250 ms, and four times what the poll took: a search before the graph
        // reads every vector, and polling must not take the child's cores.
        std::thread::sleep(Duration::from_millis(250).max(polled.elapsed() * 4));
    }
    let (wall, status, usage) = waiter.join().unwrap();
    drop(child);
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "lakestar index failed: status {status}"
    );
    // Ready only at the end: the first look after the child is as late as it gets.
    if first_search.is_none() && searchable(idx) {
        first_search = Some(wall);
    }
    if want_graph && graph_ready.is_none() && graph_serves(idx, &embedder) {
        graph_ready = Some(wall);
    }
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    let report = std::fs::read_to_string(&out_path).unwrap();
    FirstIndex {
        wall,
        cpu: tv(usage.ru_utime) + tv(usage.ru_stime),
        // Linux reports kilobytes.
        peak_rss: usage.ru_maxrss as u64 * 1024,
        first_search,
        graph_ready,
        report: serde_json::from_str(&report).expect("index --json report"),
    }
}

/// Wall times of `lakestar search` processes, each question twice: (p50, p99).
fn search_processes(idx: &Path) -> (Duration, Duration) {
    let mut times = Vec::new();
    for _ in 0..2 {
        for q in QUESTIONS {
            let (t, st) = time(|| {
                Command::new(LAKESTAR)
                    .args(["search", q, "--index"])
                    .arg(idx)
                    .args(["-k", "10"])
                    .stdout(Stdio::null())
                    .status()
                    .expect("run lakestar search")
            });
            assert!(st.success(), "lakestar search {q:?}: {st}");
            times.push(t);
        }
    }
    times.sort();
    let p99 = times[(times.len() * 99).div_ceil(100) - 1];
    (times[times.len() / 2], p99)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let flag = |name: &str| args.iter().any(|a| a == name);
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
    let nested = |n: u64| flag("--nested") || n > 100_000;
    if flag("--generate-only") {
        for &n in &sizes {
            lake(&dir, n, nested(n));
        }
        return;
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("cores: {cores}; jobs: one per core; warm page cache");
    println!("first index: a `lakestar index` child process (wall includes its start; CPU is user+sys)\n");
    println!("| files | data | first index | CPU | files/s | MB/s | no-change re-index | bare walk+stat (walkdir) | ratio | parallel crawl only | one changed file |");
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let mut graphs = Vec::new();
    let mut sizes_seen = Vec::new();
    let mut usable = Vec::new();
    for n in sizes {
        let (root, bytes) = lake(&dir, n, nested(n));
        let idx = dir.join(format!(
            "index-{}{n}",
            if nested(n) { "nested-" } else { "" }
        ));
        let _ = std::fs::remove_dir_all(&idx);
        let opts = IndexOptions::default();
        let want_graph = n >= ann::exact_below();
        let fi = first_index(&root, &idx, want_graph);
        assert_eq!(fi.report["files_seen"], n, "{}", fi.report);
        // A per-file error (a generated random blob read as something else) is a finding
        // to report, not a reason to lose a 20-minute run.
        if fi.report["errors"] != 0 {
            eprintln!(
                "first index of {n} files: {} per-file errors (`lakestar status --index {}` lists them)",
                fi.report["errors"],
                idx.display()
            );
        }
        let (first, first_cpu) = (fi.wall, fi.cpu);
        if !flag("--no-graph-rebuild") {
            if let Some(g) = graph_rebuild(&root, &idx, &opts) {
                graphs.push((n, first, first_cpu, g));
            }
        }
        sizes_seen.push((n, bytes, index_size(&idx)));
        let (p50, p99) = search_processes(&idx);
        usable.push((n, nested(n), want_graph, fi, p50, p99));

        let (reps, one_reps) = if n >= ONCE_FROM { (1, 1) } else { (5, 3) };
        let mut again = Vec::new();
        let mut walk = Vec::new();
        let mut crawl_only = Vec::new();
        for _ in 0..reps {
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
            let (t, c) = time(|| crawl::crawl(&root, &copts).unwrap());
            assert_eq!(c.files.len(), n);
            crawl_only.push(t);
        }
        // Every 7th file from the second: the listing is read once, not held.
        let victims: Vec<String> = crawl::crawl(&root, &Default::default())
            .unwrap()
            .files
            .map(|e| e.unwrap().path)
            .skip(1)
            .step_by(7)
            .take(one_reps)
            .collect();
        let mut one = Vec::new();
        for victim in &victims {
            let victim = root.join(victim);
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
        if n >= ONCE_FROM {
            println!("| | | | | | | (timed once) | (once) | | (once) | (once) |");
        }
    }
    println!("\nFirst index as it runs (polled every 250 ms: times are when the poll saw it) and `lakestar search` processes afterwards (20 runs, 10 questions, wall including process start):\n");
    println!("| files | layout | peak RSS of first index | first search answered at | vector graph serving at | `lakestar search` p50 | p99 (max of 20) |");
    println!("|---:|---|---:|---:|---:|---:|---:|");
    let secs =
        |d: Option<Duration>| d.map_or("never".into(), |d| format!("{:.1} s", d.as_secs_f64()));
    for (n, nested, want_graph, fi, p50, p99) in &usable {
        let graph = if *want_graph {
            secs(fi.graph_ready)
        } else {
            "exact (no graph)".into()
        };
        println!(
            "| {n} | {} | {:.0} MB | {} of {:.1} s | {graph} | {:.0} ms | {:.0} ms |",
            if *nested { "nested" } else { "flat" },
            fi.peak_rss as f64 / 1e6,
            secs(fi.first_search),
            fi.wall.as_secs_f64(),
            p50.as_secs_f64() * 1000.0,
            p99.as_secs_f64() * 1000.0,
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
