//! Search benchmark: vector search latency exact vs HNSW, HNSW recall against exact
//! search, the graph's build parameters, where the graph starts to beat exact search,
//! and the end-to-end hybrid query, on synthetic lakes indexed with the built-in embedder.
//!
//! Run: `cargo bench --bench search` (sizes 10000 and 100000), or
//! `cargo bench --bench search -- --sizes 10000 --queries 300 --dir /tmp/lakestar-bench`.
//! Lakes are generated once per size (shared with `benches/index.rs`); the index is
//! rebuilt on every run. All timings are in-process, warm.
//!
//! Options: `--embedder SPEC` (as `lakestar index --embedder`; installed models are
//! looked up under `LAKESTAR_MODELS`), `--efs 10,20,…` and `--efs200 200,400,…` (search
//! breadths swept for 10 and for the retriever's 200 results), `--varied N` (the varied
//! set of `search/varied.rs`, alone unless `--sizes` is given too) with `--grid
//! 16:100,32:200,…` (the (M, ef_construction) pairs it builds). `--existing DIR`
//! measures only the whole hybrid query against an index that exists, warm, over
//! `--queries` questions (nothing generated or built), opened as `lakestar search` opens
//! it and as a server does (resident). `--nibbles` with `--existing DIR` or `--varied N`
//! measures instead the recall of a 4-bit first pass over the 8-bit codes, rescored in a
//! pool ([`nibble_recall`]); `--ivf LISTS` with `--existing DIR` what an inverted file of
//! `LISTS` lists would keep of the exact nearest points (`search/ivf.rs`); `--bits` what a
//! 1-bit (sign) pass ahead of the 4-bit one would keep (`search/bits.rs`); `--pq` what
//! product-quantized and principal-prefix first passes would (`search/pq.rs`); `--touch
//! FILE seq|N [--huge]` what a new process pays to read a mapped file (`search/touch.rs`).

/// The binary's allocator (`src/main.rs`), so that the in-process figures are what
/// `lakestar serve` and `mcp` do.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[path = "search/bits.rs"]
mod bits;
#[path = "search/ivf.rs"]
mod ivf;
#[path = "search/pq.rs"]
mod pq;
#[path = "search/touch.rs"]
mod touch;
#[path = "search/varied.rs"]
mod varied;

use lakestar_index::catalog::CatalogWriter;
use lakestar_index::compact::Code;
use lakestar_index::indexer::NoProgress;
use lakestar_index::lock::WriterLock;
use lakestar_index::search::ann::dist::{normalized, Flat};
use lakestar_index::search::ann::graph::{Graph, GraphParams};
use lakestar_index::search::ann::{self, VectorIndex};
use lakestar_index::search::embedder::EmbedderSpec;
use lakestar_index::search::engine::{SearchOptions, Searcher};
use lakestar_index::{index, synth, IndexOptions};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Candidates the hybrid retriever takes from the vector side.
const CANDIDATES: usize = 200;
/// Search breadths swept by default.
const EFS: [usize; 6] = [10, 20, 40, 80, 160, 320];
/// Search breadths swept by default for the retriever's 200 candidates.
const EFS_200: [usize; 4] = [200, 400, 800, 1600];
/// Build parameters tried on the smallest lake: (M, ef_construction).
const GRID: [(usize, usize); 6] = [
    (16, 100),
    (16, 200),
    (32, 100),
    (32, 200),
    (48, 100),
    (48, 200),
];
/// Index sizes for the exact-vs-graph crossover (distinct vectors of the largest lake).
const CROSSOVER: [usize; 6] = [2000, 5000, 10000, 20000, 50000, 100000];

fn time<T>(f: impl FnOnce() -> T) -> (Duration, T) {
    let t = Instant::now();
    let r = f();
    (t.elapsed(), r)
}

/// Wall time and the process's CPU time (all threads) of `f`: on a shared machine wall
/// time grows with other people's load, CPU time much less.
fn time_cpu<T>(f: impl FnOnce() -> T) -> (Duration, Duration, T) {
    let cpu = cpu_time::ProcessTime::now();
    let (wall, r) = time(f);
    (wall, cpu.elapsed(), r)
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1000.0)
}

/// p50 and p99 of a set of latencies.
fn p50_p99(mut v: Vec<Duration>) -> (Duration, Duration) {
    v.sort();
    let at = |p: f64| v[((v.len() - 1) as f64 * p).round() as usize];
    (at(0.50), at(0.99))
}

/// Recall@k of `approx` against `exact`, by similarity: an answer counts when it is at
/// least as similar as the exact k-th (less 1e-5). Identical descriptions give identical
/// vectors, so exact answers tie often and counting ids would punish a correct answer
/// for picking the other of two equal files.
fn recall<T>(exact: &[(T, f32)], approx: &[(T, f32)], k: usize) -> f64 {
    let k = k.min(exact.len());
    if k == 0 {
        return 1.0;
    }
    let kth = exact[k - 1].1 - 1e-5;
    approx.iter().take(k).filter(|a| a.1 >= kth).count() as f64 / k as f64
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

/// How alike the questions' exact neighbours are at ranks 1, 10 and 200: how hard the
/// vectors make the graph's job (near-equal similarities are easy to miss).
fn print_neighbour_similarity<I>(truth: &[Vec<(I, f32)>]) {
    let at = |rank: usize| {
        mean(
            &truth
                .iter()
                .filter_map(|t| t.get(rank).map(|x| f64::from(x.1)))
                .collect::<Vec<_>>(),
        )
    };
    println!(
        "exact similarity of the questions' neighbours (mean): rank 1 {:.3}, rank 10 {:.3}, rank 200 {:.3}\n",
        at(0),
        at(9),
        at(CANDIDATES - 1)
    );
}

/// Deterministic questions in the synthetic lake's vocabulary.
fn questions(n: usize, seed: u64) -> Vec<String> {
    const WORDS: [&str; 40] = [
        "sales",
        "orders",
        "customer",
        "quantity",
        "unit price",
        "channel",
        "emea",
        "apac",
        "latam",
        "quarter",
        "sensor",
        "readings",
        "temperature",
        "humidity",
        "pressure",
        "station",
        "status",
        "events",
        "purchase",
        "refund",
        "click",
        "user",
        "amount",
        "service",
        "replicas",
        "memory",
        "timeout",
        "endpoint",
        "methodology",
        "glossary",
        "runbook",
        "changelog",
        "log",
        "error",
        "request",
        "inventory",
        "shipments",
        "country",
        "score",
        "products",
    ];
    let mut rng = fastrand::Rng::with_seed(seed);
    (0..n)
        .map(|_| {
            let mut q: Vec<&str> = (0..rng.usize(2..6))
                .map(|_| WORDS[rng.usize(..WORDS.len())])
                .collect();
            q.dedup();
            let mut s = q.join(" ");
            if rng.bool() {
                s.push_str(&format!(" {}", rng.u32(2015..2025)));
            }
            s
        })
        .collect()
}

/// The synthetic lake of `n` files under `dir`, generated once (same layout as the
/// index bench, so both reuse it).
fn lake(dir: &Path, n: u64) -> PathBuf {
    let root = dir.join(format!("lake-{n}"));
    let marker = dir.join(format!("lake-{n}.bytes"));
    if marker.is_file() && root.is_dir() {
        return root;
    }
    let _ = std::fs::remove_dir_all(&root);
    let (t, made) = time(|| synth::generate(&root, n, 2025).expect("generate lake"));
    eprintln!("generated {n} files in {:.1}s", t.as_secs_f64());
    std::fs::write(&marker, made.bytes.to_string()).unwrap();
    std::thread::sleep(Duration::from_millis(2100));
    root
}

fn dir_size(p: &Path) -> u64 {
    walkdir::WalkDir::new(p)
        .into_iter()
        .filter_map(Result::ok)
        .filter_map(|e| e.metadata().ok())
        .filter(|m| m.is_file())
        .map(|m| m.len())
        .sum()
}

/// Latency of `f` per query and what it answered.
fn per_query<T>(qs: &[Vec<f32>], mut f: impl FnMut(&[f32]) -> T) -> (Vec<Duration>, Vec<T>) {
    qs.iter()
        .map(|q| {
            let (t, r) = time(|| f(q));
            (t, r)
        })
        .unzip()
}

/// The distinct vectors of `v` (as the graph holds them), in a fixed pseudo-random
/// order so that any prefix is a fair sample of the lake.
fn distinct(v: Vec<Code>) -> Vec<Code> {
    let mut seen = std::collections::HashSet::new();
    let mut out: Vec<Code> = v
        .into_iter()
        .filter(|x| seen.insert(x.codes.clone()))
        .collect();
    fastrand::Rng::with_seed(11).shuffle(&mut out);
    out
}

/// The whole hybrid query against the index at `idx`, warm (each question asked once
/// before the timed pass), opened twice: as `lakestar search` opens it (the codes
/// scanned below the graph threshold) and as a long-lived process does (`serve`, `mcp`:
/// [`Searcher::open_resident`]), the "in-process" figure.
fn existing(idx: &Path, texts: &[String]) {
    type Open = fn(&Path) -> lakestar_index::Result<Searcher>;
    let openings: [(&str, Open); 2] = [
        ("as `lakestar search`", Searcher::open_recorded),
        ("resident", Searcher::open_resident),
    ];
    for (how, open) in openings {
        let (t_open, s) = time(|| open(idx).expect("an index at --existing"));
        let so = SearchOptions {
            k: 10,
            ..Default::default()
        };
        for q in texts {
            s.search(q, &so).unwrap();
        }
        let cpu = cpu_time::ProcessTime::now();
        let lat: Vec<Duration> = texts
            .iter()
            .map(|q| time(|| s.search(q, &so).unwrap()).0)
            .collect();
        let cpu = cpu.elapsed();
        let (p50, p99) = p50_p99(lat);
        println!(
            "{how}: {} files, {} questions: open {}, hybrid query p50 {} p99 {}, CPU {} per query",
            s.len(),
            texts.len(),
            ms(t_open),
            ms(p50),
            ms(p99),
            ms(cpu / texts.len() as u32)
        );
    }
}

/// The codes of the newest generation of the index at `idx`, and `texts` embedded as
/// queries (unit vectors).
fn generation_codes(idx: &Path, texts: &[String]) -> (Vec<Code>, Vec<Vec<f32>>) {
    use lakestar_index::search::ann::dist::MappedCodes;
    let dir = std::fs::read_dir(idx.join("vectors"))
        .expect("a vectors/ directory (an index with a vector generation)")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("manifest.json").is_file())
        .max()
        .expect("a generation");
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
    let (dim, points) = (
        manifest["dim"].as_u64().unwrap() as usize,
        manifest["points"].as_u64().unwrap() as usize,
    );
    let mapped = MappedCodes::open(&dir.join("codes.bin"), dim, points).unwrap();
    let codes: Vec<Code> = (0..points).map(|i| mapped.code(i).unwrap()).collect();
    let embedder = EmbedderSpec::default().build().unwrap();
    let queries: Vec<Vec<f32>> = texts
        .iter()
        .map(|t| normalized(&embedder.embed(&[t.as_str()]).unwrap().remove(0)))
        .collect();
    (codes, queries)
}

/// Every point's exact similarity to the unit vector `q` (points as
/// [`point`](lakestar_index::search::ann::dist::point) makes them), and the point ids
/// best first, ties by id: what the recall measurements count against.
fn exact_order(points: &[Vec<i8>], q: &[f32]) -> (Vec<f32>, Vec<usize>) {
    use lakestar_index::search::ann::dist::point_dot;
    use rayon::prelude::*;
    let exact: Vec<f32> = points.par_iter().map(|p| point_dot(q, p)).collect();
    let mut order: Vec<usize> = (0..exact.len()).collect();
    order.sort_by(|&a, &b| exact[b].total_cmp(&exact[a]).then(a.cmp(&b)));
    (exact, order)
}

/// What the 4-bit first pass (`ann::nibbles`, as scans run it) costs in recall: every
/// code's 4-bit point, the query quantized as a scan quantizes it, the `pool` best by
/// that score rescored from the 8-bit codes, against the exact 200 and 10 best of the
/// 8-bit codes, by similarity as [`recall`] counts (a tie of the exact n-th counts).
fn nibble_recall(codes: &[Code], queries: &[Vec<f32>]) {
    use lakestar_index::search::ann::dist::point;
    use lakestar_index::search::ann::nibbles::{nibble_point, scores_into, NibbleQuery};
    let points: Vec<Vec<i8>> = codes.iter().map(point).collect();
    let nib: Vec<u8> = codes.iter().flat_map(nibble_point).collect();
    let pools = [200usize, 400, 1000, 2000, 5000, 10000];
    let (mut hit200, mut hit10) = (vec![0usize; pools.len()], vec![0usize; pools.len()]);
    let (mut n200, mut n10) = (0usize, 0usize);
    for q in queries {
        let (exact, order) = exact_order(&points, q);
        let (k200, k10) = (order.len().min(200), order.len().min(10));
        if k10 == 0 {
            continue;
        }
        let (f200, f10) = (exact[order[k200 - 1]] - 1e-5, exact[order[k10 - 1]] - 1e-5);
        n200 += k200;
        n10 += k10;
        let Some(nq) = NibbleQuery::new(q) else {
            continue;
        };
        let mut scores = vec![0.0f32; codes.len()];
        scores_into(&nq, &nib, &mut scores);
        let mut approx: Vec<(usize, f32)> = scores.into_iter().enumerate().collect();
        approx.sort_by(|a, b| b.1.total_cmp(&a.1));
        for (k, &pool) in pools.iter().enumerate() {
            let mut kept: Vec<f32> = approx.iter().take(pool).map(|&(i, _)| exact[i]).collect();
            kept.sort_by(|a, b| b.total_cmp(a));
            hit200[k] += kept.iter().take(k200).filter(|&&s| s >= f200).count();
            hit10[k] += kept.iter().take(k10).filter(|&&s| s >= f10).count();
        }
    }
    println!(
        "4-bit first pass over {} points ({} questions):",
        codes.len(),
        queries.len()
    );
    for (k, pool) in pools.iter().enumerate() {
        println!(
            "pool {pool:>6}: recall@200 {:.4}, recall@10 {:.4}",
            hit200[k] as f64 / n200.max(1) as f64,
            hit10[k] as f64 / n10.max(1) as f64
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let numbers = |name: &str, default: &str| -> Vec<usize> {
        arg(name)
            .unwrap_or_else(|| default.into())
            .split(',')
            .filter(|s| !s.trim().is_empty())
            .map(|s| s.trim().parse().expect("a list of numbers"))
            .collect()
    };
    let varied: Option<usize> = arg("--varied").map(|s| s.parse().expect("--varied N"));
    let sizes: Vec<u64> = numbers(
        "--sizes",
        if varied.is_some() { "" } else { "10000,100000" },
    )
    .into_iter()
    .map(|n| n as u64)
    .collect();
    let efs = numbers("--efs", &EFS.map(|e| e.to_string()).join(","));
    let efs200 = numbers("--efs200", &EFS_200.map(|e| e.to_string()).join(","));
    let nq: usize = arg("--queries").map_or(300, |s| s.parse().expect("--queries N"));
    if let Some(file) = arg("--touch") {
        let mode = args
            .iter()
            .position(|a| a == "--touch")
            .and_then(|i| args.get(i + 2))
            .expect("--touch FILE seq|N");
        touch::touch(&file, mode, args.iter().any(|a| a == "--huge"));
        return;
    }
    if let Some(idx) = arg("--existing") {
        if args.iter().any(|a| a == "--nibbles") {
            let (codes, queries) = generation_codes(Path::new(&idx), &questions(nq, 7));
            nibble_recall(&codes, &queries);
            return;
        }
        if args.iter().any(|a| a == "--bits") {
            let (codes, queries) = generation_codes(Path::new(&idx), &questions(nq, 7));
            bits::bits_recall(&codes, &queries);
            return;
        }
        if args.iter().any(|a| a == "--pq") {
            let (codes, queries) = generation_codes(Path::new(&idx), &questions(nq, 7));
            pq::pq_recall(&codes, &queries);
            return;
        }
        if let Some(lists) = arg("--ivf") {
            let lists = lists.parse().expect("--ivf LISTS");
            let (codes, queries) = generation_codes(Path::new(&idx), &questions(nq, 7));
            ivf::ivf_recall(&codes, &queries, lists);
            return;
        }
        existing(Path::new(&idx), &questions(nq, 7));
        return;
    }
    let dir = PathBuf::from(arg("--dir").unwrap_or_else(|| {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("target/bench-lakes")
            .to_string_lossy()
            .into_owned()
    }));
    std::fs::create_dir_all(&dir).unwrap();
    // The graph is built and measured at every size, whatever the default threshold
    // (single-threaded here: nothing else reads the environment meanwhile).
    std::env::set_var("LAKESTAR_EXACT_BELOW", "0");
    // ... and built even where a server would scan the codes instead.
    std::env::set_var("LAKESTAR_SCAN_UP_TO", "0");
    let opts = IndexOptions {
        embedder: arg("--embedder")
            .map(|s| EmbedderSpec::parse(&s).expect("--embedder"))
            .unwrap_or_default(),
        // As `index --graph`: a plain run writes the codes alone.
        graph: true,
        ..Default::default()
    };
    let embedder = opts.embedder.build().unwrap();
    let emb = embedder.id();
    let texts = questions(nq, 7);
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let qvecs: Vec<Vec<f32>> = embedder.embed(&refs).unwrap();
    let qunit: Vec<Vec<f32>> = qvecs.iter().map(|q| normalized(q)).collect();
    let chosen = GraphParams {
        m: ann::M,
        ef_construction: ann::EF_CONSTRUCTION,
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "cores: {cores}; embedder {emb}; {nq} questions; M {} ef_construction {} ef_search {}; exact below {} live vectors\n",
        chosen.m,
        chosen.ef_construction,
        ann::EF_SEARCH,
        ann::EXACT_BELOW
    );

    if let Some(n) = varied {
        let grid: Vec<(usize, usize)> = arg("--grid")
            .unwrap_or_else(|| "16:100,32:50,32:100,32:200,48:100".into())
            .split(',')
            .map(|p| {
                let (m, e) = p.split_once(':').expect("--grid M:EF,…");
                (m.parse().expect("M"), e.parse().expect("ef_construction"))
            })
            .collect();
        if args.iter().any(|a| a == "--nibbles") {
            let (codes, queries) = varied::points(embedder.as_ref(), n);
            nibble_recall(&codes, &queries);
            return;
        }
        varied::run(embedder.as_ref(), n, &efs200, &grid);
    }

    let mut smallest: Option<Vec<Code>> = None;
    let mut largest: Option<Vec<Code>> = None;
    let mut summary = Vec::new();
    for &n in &sizes {
        let root = lake(&dir, n);
        let idx = dir.join(format!("search-index-{n}"));
        let _ = std::fs::remove_dir_all(&idx);
        let (t_index, c_index, r) = time_cpu(|| index(&root, &idx, &opts, &NoProgress).unwrap());
        assert_eq!(r.errors, 0, "{r:?}");
        // A full rebuild of the graph alone: remove it, let the writer's check rebuild it.
        std::fs::remove_dir_all(idx.join("vectors")).unwrap();
        let mut cat = CatalogWriter::open(
            WriterLock::acquire(&idx).unwrap(),
            &root.canonicalize().unwrap(),
        )
        .unwrap();
        let (t_build, c_build, built) = time_cpu(|| ann::check(&mut cat, &idx, &emb).unwrap());
        assert!(
            matches!(built, ann::update::Refreshed::Built { .. }),
            "{built:?}"
        );
        let graph_bytes = dir_size(&idx.join("vectors"));
        // What every index run that changed something pays when the graph stays.
        let (t_kept, kept) = time(|| ann::refresh(&mut cat, &idx, &emb).unwrap());
        assert_eq!(kept, ann::update::Refreshed::Kept);

        let (t_open_exact, exact) = time(|| VectorIndex::open_exact(&cat, &idx, &emb).unwrap());
        let (t_open_graph, mut graph) =
            time(|| VectorIndex::open_with(&cat, &idx, &emb, 0, ann::Mode::Graph).unwrap());
        assert_eq!(graph.kind(), "hnsw");
        let (t_open_codes, codes) =
            time(|| VectorIndex::open_with(&cat, &idx, &emb, 0, ann::Mode::Scan).unwrap());
        assert_eq!(codes.kind(), "codes");
        let live = exact.len();
        assert_eq!(graph.len(), live);
        assert_eq!(codes.len(), live);

        println!("### {n} files ({live} vectors, dim {})\n", qvecs[0].len());
        println!(
            "first index {:.1} s, {:.1} s CPU (graph included); graph rebuild alone {:.1} s, {:.1} s CPU; refresh keeping the graph {}; graph on disk {:.1} MB; open: exact {}, graph {}, codes {}\n",
            t_index.as_secs_f64(),
            c_index.as_secs_f64(),
            t_build.as_secs_f64(),
            c_build.as_secs_f64(),
            ms(t_kept),
            graph_bytes as f64 / 1e6,
            ms(t_open_exact),
            ms(t_open_graph),
            ms(t_open_codes)
        );
        let near = |v: &VectorIndex, q: &[f32], n: usize| v.nearest(&cat, q, n).unwrap();
        let (lat_e10, truth10) = per_query(&qvecs, |q| near(&exact, q, 10));
        let (lat_e200, truth200) = per_query(&qvecs, |q| near(&exact, q, CANDIDATES));
        let (e10, e10_99) = p50_p99(lat_e10);
        let (e200, e200_99) = p50_p99(lat_e200);
        println!("| search | ef | k | p50 | p99 | recall@k |");
        println!("|---|---:|---:|---:|---:|---:|");
        println!("| exact | — | 10 | {} | {} | 1 |", ms(e10), ms(e10_99));
        println!(
            "| exact | — | {CANDIDATES} | {} | {} | 1 |",
            ms(e200),
            ms(e200_99)
        );
        for k in [10, CANDIDATES] {
            let truth = if k == 10 { &truth10 } else { &truth200 };
            let (lat, got) = per_query(&qvecs, |q| near(&codes, q, k));
            let r: Vec<f64> = truth
                .iter()
                .zip(&got)
                .map(|(t, g)| recall(t, g, k))
                .collect();
            let (p50, p99) = p50_p99(lat);
            println!(
                "| codes (mapped, scanned) | — | {k} | {} | {} | {:.3} |",
                ms(p50),
                ms(p99),
                mean(&r)
            );
        }
        for &ef in &efs {
            graph.set_ef(ef);
            let (lat, got) = per_query(&qvecs, |q| near(&graph, q, 10));
            let r: Vec<f64> = truth10
                .iter()
                .zip(&got)
                .map(|(t, g)| recall(t, g, 10))
                .collect();
            let (p50, p99) = p50_p99(lat);
            println!(
                "| hnsw | {ef} | 10 | {} | {} | {:.3} |",
                ms(p50),
                ms(p99),
                mean(&r)
            );
        }
        let mut g200 = Duration::ZERO;
        for &ef in &efs200 {
            graph.set_ef(ef);
            let (lat, got) = per_query(&qvecs, |q| near(&graph, q, CANDIDATES));
            let r: Vec<f64> = truth200
                .iter()
                .zip(&got)
                .map(|(t, g)| recall(t, g, CANDIDATES))
                .collect();
            let (p50, p99) = p50_p99(lat);
            if ef == CANDIDATES.max(ann::EF_SEARCH) {
                g200 = p50;
            }
            println!(
                "| hnsw | {ef} | {CANDIDATES} | {} | {} | {:.3} |",
                ms(p50),
                ms(p99),
                mean(&r)
            );
        }
        graph.set_ef(ann::EF_SEARCH);
        println!();
        print_neighbour_similarity(&truth200);

        // The whole hybrid query (BM25 + vectors + fusion + evidence), as `lakestar
        // search` runs it, with the graph and with exact vectors.
        let so = SearchOptions {
            k: 10,
            ..Default::default()
        };
        let mut e2e = Vec::new();
        let mut answers = Vec::new();
        for (label, threshold) in [
            ("hnsw", "0"),
            ("codes", "0"),
            ("exact", "18446744073709551615"),
        ] {
            std::env::set_var("LAKESTAR_EXACT_BELOW", threshold);
            let (t_open, s) = time(|| {
                if label == "hnsw" {
                    Searcher::open_resident(&idx).unwrap()
                } else {
                    Searcher::open(&idx, opts.embedder.build().unwrap()).unwrap()
                }
            });
            let (lat, got): (Vec<Duration>, Vec<Vec<String>>) = texts
                .iter()
                .map(|q| {
                    let (t, hits) = time(|| s.search(q, &so).unwrap());
                    (t, hits.into_iter().map(|h| h.path).collect())
                })
                .unzip();
            let (p50, p99) = p50_p99(lat);
            println!(
                "hybrid search, vectors {label}: open {}, query p50 {} p99 {}",
                ms(t_open),
                ms(p50),
                ms(p99)
            );
            e2e.push((label, p50, p99));
            answers.push(got);
        }
        std::env::set_var("LAKESTAR_EXACT_BELOW", "0");
        let overlap: Vec<f64> = answers[0]
            .iter()
            .zip(&answers[2])
            .map(|(a, b)| a.iter().filter(|p| b.contains(p)).count() as f64 / b.len().max(1) as f64)
            .collect();
        println!(
            "hybrid top-10 with the graph vs exact vectors: {:.3} of the files in common\n",
            mean(&overlap)
        );
        summary.push((n, e10, e10_99, e200, g200, e2e));
        let stored: Vec<Code> = ann::file_vectors(&cat, &idx, &emb)
            .unwrap()
            .into_iter()
            .map(|k| k.vector)
            .collect();
        if smallest.is_none() {
            smallest = Some(distinct(stored.clone()));
        }
        largest = Some(distinct(stored));
    }

    let (Some(vectors), Some(big)) = (smallest, largest) else {
        return;
    };
    let refs: Vec<&Code> = vectors.iter().collect();
    let mut flat = Flat::new(refs[0].dim());
    for v in &vectors {
        flat.push(v);
    }
    let truth10: Vec<Vec<(usize, f32)>> = qunit.iter().map(|q| flat.top(q, 10)).collect();
    println!(
        "### Build parameters ({} distinct vectors of the {}-file lake; recall@10 at ef {})\n",
        refs.len(),
        sizes[0],
        ann::EF_SEARCH
    );
    println!("| M | ef_construction | build | p50 k=10 | recall@10 | p50 k={CANDIDATES} |");
    println!("|---:|---:|---:|---:|---:|---:|");
    for (m, efc) in GRID {
        let params = GraphParams {
            m,
            ef_construction: efc,
        };
        let (t, g) = time(|| Graph::build(&refs, params));
        let (lat, got) = per_query(&qunit, |q| g.search(q, 10, ann::EF_SEARCH));
        let r: Vec<f64> = truth10
            .iter()
            .zip(&got)
            .map(|(t, g)| recall(t, g, 10))
            .collect();
        let (lat200, _) = per_query(&qunit, |q| g.search(q, CANDIDATES, CANDIDATES));
        println!(
            "| {m} | {efc} | {:.2} s | {} | {:.3} | {} |",
            t.as_secs_f64(),
            ms(p50_p99(lat).0),
            mean(&r),
            ms(p50_p99(lat200).0)
        );
    }

    println!(
        "\n### Exact vs graph by index size (N distinct vectors of the {}-file lake, shuffled; p50, and recall@{CANDIDATES} by ef)\n",
        sizes[sizes.len() - 1]
    );
    print!(
        "| N | exact k=10 | graph k=10 (ef {}) | exact k={CANDIDATES} |",
        ann::EF_SEARCH
    );
    for ef in &EFS_200[..3] {
        print!(" graph k={CANDIDATES} ef {ef} |");
    }
    println!("\n|---:|---:|---:|---:|---:|---:|---:|");
    for size in CROSSOVER.into_iter().filter(|&s| s <= big.len()) {
        let sub: Vec<&Code> = big[..size].iter().collect();
        let mut f = Flat::new(sub[0].dim());
        for v in &big[..size] {
            f.push(v);
        }
        let g = Graph::build(&sub, chosen);
        let p = |lat: Vec<Duration>| ms(p50_p99(lat).0);
        let e10 = p(per_query(&qunit, |q| f.top(q, 10)).0);
        let g10 = p(per_query(&qunit, |q| g.search(q, 10, ann::EF_SEARCH)).0);
        let (lat, truth) = per_query(&qunit, |q| f.top(q, CANDIDATES));
        print!("| {size} | {e10} | {g10} | {} |", p(lat));
        for &ef in &EFS_200[..3] {
            let (lat, got) = per_query(&qunit, |q| g.search(q, CANDIDATES, ef));
            let r: Vec<f64> = truth
                .iter()
                .zip(&got)
                .map(|(t, g)| recall(t, g, CANDIDATES))
                .collect();
            print!(" {} ({:.2}) |", p(lat), mean(&r));
        }
        println!();
    }

    println!("\n### Summary\n");
    println!("| files | exact k=10 p50 / p99 | exact k={CANDIDATES} p50 | hnsw k={CANDIDATES} p50 | hybrid query p50 / p99 (hnsw) | (codes) | (exact) |");
    println!("|---:|---:|---:|---:|---:|---:|---:|");
    for (n, e10, e10_99, e200, g200, e2e) in summary {
        let pair = |i: usize| format!("{} / {}", ms(e2e[i].1), ms(e2e[i].2));
        println!(
            "| {n} | {} / {} | {} | {} | {} | {} | {} |",
            ms(e10),
            ms(e10_99),
            ms(e200),
            ms(g200),
            pair(0),
            pair(1),
            pair(2)
        );
    }
}
