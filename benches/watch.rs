//! Watch benchmark: the latency from a file write to its visibility, under `watch`, on
//! synthetic lakes of 10k and 100k files.
//!
//! Run: `cargo bench --bench watch` (sizes 10000 and 100000), or
//! `cargo bench --bench watch -- --sizes 10000 --probes 20 --debounce 300 --dir /tmp/b`.
//!
//! Per size: the lake is generated once (`lakestar_index::synth`, as benches/index.rs
//! does; a lake of its own, since probes are written into it) and indexed, then the
//! watcher runs in a thread. Each probe writes a new CSV whose column name is a word
//! found nowhere else and measures, from just before the write:
//! - **committed**: until the watcher reports the batch holding the file;
//! - **searchable**: until a freshly opened `Searcher::open_recorded` finds the file by
//!   that word (a long-lived server would refresh its reader instead of reopening).
//!
//! Probes are a second apart, so each is its own batch. Reported as p50 / p95 / max in
//! ms, with the run time of the probe's batch and the open + query time of the searcher
//! that found it (a fresh one per try).

use lakestar_index::indexer::NoProgress;
use lakestar_index::search::engine::{SearchOptions, Searcher};
use lakestar_index::watch::{watch, BatchKind, WatchOptions};
use lakestar_index::{index, synth, IndexOptions};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const PROBE_DIR: &str = "watch-probe";

fn lake(dir: &Path, n: u64) -> PathBuf {
    let root = dir.join(format!("watch-lake-{n}"));
    let marker = dir.join(format!("watch-lake-{n}.done"));
    if marker.is_file() && root.is_dir() {
        let _ = std::fs::remove_dir_all(root.join(PROBE_DIR));
        return root;
    }
    let _ = std::fs::remove_dir_all(&root);
    let t = Instant::now();
    let made = synth::generate(&root, n, 2025).expect("generate lake");
    eprintln!(
        "generated {n} files ({} MB) in {:.1}s",
        made.bytes / 1_000_000,
        t.elapsed().as_secs_f64()
    );
    std::fs::write(&marker, "").unwrap();
    // Let every mtime fall out of the racy window, as on a lake that is not being written.
    std::thread::sleep(Duration::from_millis(2100));
    root
}

/// (p50, p95, max) of `v`, in milliseconds.
fn stats(mut v: Vec<Duration>) -> String {
    v.sort();
    let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
    let ms = |d: Duration| d.as_millis();
    format!(
        "{} / {} / {}",
        ms(at(0.5)),
        ms(at(0.95)),
        ms(*v.last().unwrap())
    )
}

fn probe_csv(word: &str) -> String {
    let mut s = format!("id,{word},amount\n");
    for i in 0..20 {
        s.push_str(&format!("{i},v{},{}\n", i % 3, i * 11));
    }
    s
}

/// One batch as the watcher reported it: when, its scope, how long its run took.
struct Landed {
    at: Instant,
    scope: Vec<PathBuf>,
    run: Duration,
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
    let probes: usize = arg("--probes").map_or(20, |s| s.parse().expect("--probes N"));
    let debounce = Duration::from_millis(arg("--debounce").map_or(300, |s| s.parse().unwrap()));
    let dir = PathBuf::from(arg("--dir").unwrap_or_else(|| {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("target/bench-lakes")
            .to_string_lossy()
            .into_owned()
    }));
    std::fs::create_dir_all(&dir).unwrap();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "cores: {cores}; jobs: one per core; debounce {} ms; {probes} probes per size\n",
        debounce.as_millis()
    );
    println!("| files | reconcile | write → committed | batch run | write → found by a fresh searcher | of which open + query |");
    println!("|---:|---:|---:|---:|---:|---:|");
    for n in sizes {
        let root = lake(&dir, n);
        let idx = dir.join(format!("watch-index-{n}"));
        let t = Instant::now();
        index(&root, &idx, &IndexOptions::default(), &NoProgress).expect("index");
        eprintln!("indexed {n} files in {:.1}s", t.elapsed().as_secs_f64());
        std::fs::create_dir_all(root.join(PROBE_DIR)).unwrap();

        let opts = WatchOptions {
            debounce,
            ..Default::default()
        };
        let stop = AtomicBool::new(false);
        let (tx, rx) = mpsc::channel::<(BatchKind, Landed)>();
        let (committed, searchable, runs, opens, reconcile) = std::thread::scope(|s| {
            let (root, idx, opts, stop) = (&root, &idx, &opts, &stop);
            s.spawn(move || {
                watch(root, idx, opts, stop, &mut |b| {
                    let landed = Landed {
                        at: Instant::now(),
                        scope: b.scope.clone(),
                        run: Duration::from_secs_f64(b.report.seconds),
                    };
                    let _ = tx.send((b.kind, landed));
                })
                .expect("watch")
            });
            let (kind, rec) = rx.recv().expect("reconcile batch");
            assert_eq!(kind, BatchKind::Reconcile);
            let probe_root = root.canonicalize().unwrap().join(PROBE_DIR);
            let (mut committed, mut searchable, mut runs, mut opens) =
                (Vec::new(), Vec::new(), Vec::new(), Vec::new());
            for i in 0..probes {
                std::thread::sleep(Duration::from_secs(1));
                let word = format!("zqprobe{n}x{i}kw");
                let rel = format!("{PROBE_DIR}/{word}.csv");
                let t0 = Instant::now();
                std::fs::write(root.join(&rel), probe_csv(&word)).unwrap();
                let path = probe_root.join(format!("{word}.csv"));
                let landed = loop {
                    let (_, b) = rx
                        .recv_timeout(Duration::from_secs(60))
                        .expect("probe batch within 60 s");
                    if b.scope.contains(&path) {
                        break b;
                    }
                };
                committed.push(landed.at - t0);
                runs.push(landed.run);
                let mut tries = 0;
                loop {
                    tries += 1;
                    let t = Instant::now();
                    let s = Searcher::open_recorded(idx).expect("open searcher");
                    let hits = s.search(&word, &SearchOptions::default()).expect("search");
                    if hits.first().is_some_and(|h| h.path == rel) {
                        // Timed before the searcher is dropped: freeing a 100k graph
                        // takes half a second, which is no part of visibility.
                        opens.push(t.elapsed());
                        searchable.push(t0.elapsed());
                        if tries > 1 {
                            eprintln!("{rel}: found on try {tries}");
                        }
                        break;
                    }
                    assert!(t0.elapsed() < Duration::from_secs(60), "{rel} never found");
                    std::thread::sleep(Duration::from_millis(5));
                }
            }
            stop.store(true, Ordering::Relaxed);
            (committed, searchable, runs, opens, rec.run)
        });
        println!(
            "| {n} | {:.2} s | {} | {} | {} | {} |",
            reconcile.as_secs_f64(),
            stats(committed),
            stats(runs),
            stats(searchable),
            stats(opens)
        );
        let _ = std::fs::remove_dir_all(root.join(PROBE_DIR));
    }
}
