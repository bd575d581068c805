//! HTTP search throughput: `GET /search` on loopback against the server of `lakestar
//! serve` (started in-process on 127.0.0.1, the same router and runtime setup), driven
//! by N concurrent keep-alive clients for a fixed time per setting.
//!
//! Run: `cargo bench --bench http` (DABench's 64 CSVs and a synthetic 10k lake;
//! concurrency 1, 8, 32; 10 s each), or
//! `cargo bench --bench http -- --secs 5 --concurrency 1,8 --dir /tmp/lakestar-bench`.
//! Indexes are made once under the bench directory and updated (a no-change run) after.
//! Client and server share the machine's cores.

use lakestar::agent::build::AgentSetup;
use lakestar::serve::{self, AppState};
use lakestar::service::Lake;
use lakestar_index::indexer::NoProgress;
use lakestar_index::{index, synth, IndexOptions};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Queries for the synthetic lake, in its vocabulary (regions, services, tables, topics).
const SYNTH_QUERIES: [&str; 12] = [
    "sales emea 2021 q3 unit price",
    "orders per channel in apac",
    "sensor readings station temperature",
    "checkout service errors log",
    "billing events json",
    "customers table export",
    "inventory shipments tsv",
    "data dictionary methodology",
    "quarterly revenue latam",
    "auth service latency",
    "products sku quantity",
    "changelog runbook glossary",
];

struct Setting {
    concurrency: usize,
    requests: usize,
    errors: usize,
    elapsed: Duration,
    p50: Duration,
    p99: Duration,
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// `concurrency` clients, each sending one request after another for `secs`.
async fn drive(base: &str, queries: Arc<Vec<String>>, concurrency: usize, secs: u64) -> Setting {
    let client = reqwest::Client::new();
    let deadline = Instant::now() + Duration::from_secs(secs);
    let start = Instant::now();
    let mut tasks = Vec::new();
    for c in 0..concurrency {
        let (client, queries, url) = (client.clone(), queries.clone(), format!("{base}/search"));
        tasks.push(tokio::spawn(async move {
            let (mut lat, mut errors) = (Vec::new(), 0usize);
            let mut i = c;
            while Instant::now() < deadline {
                let q = &queries[i % queries.len()];
                i += 1;
                let t = Instant::now();
                let ok = match client.get(&url).query(&[("q", q.as_str())]).send().await {
                    Ok(r) => r.status().is_success() && r.bytes().await.is_ok(),
                    Err(_) => false,
                };
                if ok {
                    lat.push(t.elapsed());
                } else {
                    errors += 1;
                }
            }
            (lat, errors)
        }));
    }
    let (mut lat, mut errors) = (Vec::new(), 0);
    for t in tasks {
        let (l, e) = t.await.expect("a client task");
        lat.extend(l);
        errors += e;
    }
    let elapsed = start.elapsed();
    lat.sort();
    Setting {
        concurrency,
        requests: lat.len(),
        errors,
        elapsed,
        p50: percentile(&lat, 0.50),
        p99: percentile(&lat, 0.99),
    }
}

/// Serve the index at `idx` on a free loopback port in a thread of its own; returns the
/// base URL and the sender that stops it.
fn start_server(
    idx: &Path,
) -> (
    String,
    tokio::sync::oneshot::Sender<()>,
    std::thread::JoinHandle<()>,
) {
    let lake = Lake::open(idx).expect("open the index");
    let (port_tx, port_rx) = std::sync::mpsc::channel();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let thread = std::thread::spawn(move || {
        // As `lakestar serve` builds it.
        let rt = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .max_blocking_threads(64)
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = serve::bind("127.0.0.1:0".parse().unwrap()).await.unwrap();
            port_tx.send(listener.local_addr().unwrap().port()).unwrap();
            let (tx, rx) = tokio::sync::watch::channel(false);
            let state = AppState::new(lake, None, AgentSetup::default(), 1, rx);
            serve::serve(listener, state, tx, async {
                let _ = stop_rx.await;
            })
            .await
            .unwrap();
        });
    });
    let port = port_rx.recv().unwrap();
    (format!("http://127.0.0.1:{port}"), stop_tx, thread)
}

fn dabench_queries(lakes: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(lakes.join("dabench/da-dev-questions.jsonl"))
        .expect("../shared/lakes/dabench/da-dev-questions.jsonl");
    text.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| v["question"].as_str().map(str::to_string))
        .take(200)
        .collect()
}

/// Index `lake` into `idx` (a no-change run when it is already indexed).
fn ensure_index(lake: &Path, idx: &Path) -> u64 {
    let t = Instant::now();
    let report = index(lake, idx, &IndexOptions::default(), &NoProgress).expect("index");
    eprintln!(
        "indexed {} ({} files) in {:.1}s",
        lake.display(),
        report.files_seen,
        t.elapsed().as_secs_f64()
    );
    report.files_seen
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let secs: u64 = arg("--secs").map_or(10, |s| s.parse().expect("--secs takes a number"));
    let concurrency: Vec<usize> = arg("--concurrency")
        .unwrap_or_else(|| "1,8,32".into())
        .split(',')
        .map(|s| s.trim().parse().expect("--concurrency takes numbers"))
        .collect();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = PathBuf::from(arg("--dir").unwrap_or_else(|| {
        root.join("target/bench-lakes")
            .to_string_lossy()
            .into_owned()
    }));
    std::fs::create_dir_all(&dir).unwrap();
    let shared = root.join("../shared/lakes");

    let synth_lake = dir.join("lake-10000");
    if !synth_lake.is_dir() {
        synth::generate(&synth_lake, 10_000, 2025).expect("generate the synthetic lake");
    }
    let lakes = [
        (
            "DABench tables",
            shared.join("dabench/da-dev-tables"),
            dir.join("http-dabench-idx"),
            dabench_queries(&shared),
        ),
        (
            "synthetic 10k",
            synth_lake,
            dir.join("http-synth-10000-idx"),
            SYNTH_QUERIES.iter().map(|s| s.to_string()).collect(),
        ),
    ];
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("cores: {cores} (clients and server share them); {secs} s per setting; k = 10\n");
    println!("| lake | files | clients | requests | req/s | p50 | p99 | errors |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    let client_rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    for (name, lake, idx, queries) in lakes {
        let files = ensure_index(&lake, &idx);
        let (base, stop, thread) = start_server(&idx);
        let queries = Arc::new(queries);
        // Warm-up: every query once (page cache, the searcher opened).
        client_rt.block_on(drive(&base, queries.clone(), 1, 1));
        for &c in &concurrency {
            let s = client_rt.block_on(drive(&base, queries.clone(), c, secs));
            println!(
                "| {name} | {files} | {} | {} | {:.0} | {:.1} ms | {:.1} ms | {} |",
                s.concurrency,
                s.requests,
                s.requests as f64 / s.elapsed.as_secs_f64(),
                s.p50.as_secs_f64() * 1000.0,
                s.p99.as_secs_f64() * 1000.0,
                s.errors
            );
        }
        let _ = stop.send(());
        thread.join().unwrap();
    }
}
