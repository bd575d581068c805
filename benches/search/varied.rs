//! Vector search on a varied set (`--varied N`): the synthetic lake has eight kinds of
//! file whose descriptions differ only in random values, so its vectors form a few
//! tight clusters. Here the points are N descriptions recombined from the real tables of
//! `../shared/lakes` (DABench, DA-Code, DABStep) and the questions are those benchmarks'
//! own, so that graph recall is measured on vectors shaped like a real lake's.
//!
//! Each point is one real file's semantic text (`doc::names` and `doc::values`, as the
//! indexer embeds them) perturbed: every column kept with probability 0.7 (at least one),
//! the order shuffled, half of the time 1–3 columns of another file added, every
//! categorical value kept with probability 0.3. Deterministic per seed.

use crate::{mean, ms, p50_p99, per_query, recall, time, time_cpu, CANDIDATES};
use lakestar_index::compact::Code;
use lakestar_index::embed::Embedder;
use lakestar_index::search::ann;
use lakestar_index::search::ann::dist::{self, normalized, Flat};
use lakestar_index::search::ann::graph::{Graph, GraphParams};
use lakestar_index::search::doc;
use lakestar_index::{describe, Source};
use rayon::prelude::*;
use std::path::Path;

/// Texts per embedder call (calls run in parallel, as in the indexer's sync).
const EMBED_BATCH: usize = 32;

/// (column names, categorical values) of every file under `root` that has names.
fn schemas(root: &Path) -> Vec<(Vec<String>, Vec<String>)> {
    let mut paths: Vec<_> = walkdir::WalkDir::new(root)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(|e| e.into_path())
        .collect();
    paths.sort();
    paths
        .iter()
        .filter_map(|p| {
            let src = Source::open(p, lakestar_index::indexer::IN_MEMORY_LIMIT).ok()?;
            let d = describe(&src);
            let names = doc::names(&d);
            (!names.is_empty()).then(|| (names, doc::values(&d)))
        })
        .collect()
}

/// `n` perturbed recombinations of `schemas` (see the module documentation).
fn texts(schemas: &[(Vec<String>, Vec<String>)], n: usize, seed: u64) -> Vec<String> {
    let mut rng = fastrand::Rng::with_seed(seed);
    (0..n)
        .map(|_| {
            let (names, values) = &schemas[rng.usize(..schemas.len())];
            let mut cols: Vec<&str> = names
                .iter()
                .filter(|_| rng.f32() < 0.7)
                .map(String::as_str)
                .collect();
            if cols.is_empty() {
                cols.push(&names[rng.usize(..names.len())]);
            }
            if rng.bool() {
                let (other, _) = &schemas[rng.usize(..schemas.len())];
                for _ in 0..rng.usize(1..4) {
                    cols.push(&other[rng.usize(..other.len())]);
                }
            }
            rng.shuffle(&mut cols);
            let vals: Vec<&str> = values
                .iter()
                .filter(|_| rng.f32() < 0.3)
                .map(String::as_str)
                .collect();
            let mut s = cols.join(", ");
            if !vals.is_empty() {
                s.push('\n');
                s.push_str(&vals.join(", "));
            }
            s
        })
        .collect()
}

/// The questions of the DABench development set, the DA-Code sample and DABStep.
fn questions(root: &Path) -> Vec<String> {
    let field = |file: &str, pointer: &str| -> Vec<String> {
        let p = root.join(file);
        std::fs::read_to_string(&p)
            .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter_map(|v| v.pointer(pointer)?.as_str().map(str::to_string))
            .collect()
    };
    let mut qs = field("dabench/da-dev-questions.jsonl", "/question");
    qs.extend(field("dacode/tasks.jsonl", "/task/instruction"));
    qs.extend(field("dabstep/tasks/dev.jsonl", "/question"));
    qs
}

fn embed_all(embedder: &dyn Embedder, texts: &[String]) -> Vec<Vec<f32>> {
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    refs.par_chunks(EMBED_BATCH)
        .map(|c| embedder.embed(c).expect("embed"))
        .collect::<Vec<_>>()
        .into_iter()
        .flatten()
        .collect()
}

/// Mean recall@k of `got` against `truth` (see [`recall`]).
fn mean_recall(truth: &[Vec<(usize, f32)>], got: &[Vec<(usize, f32)>], k: usize) -> f64 {
    let r: Vec<f64> = truth
        .iter()
        .zip(got)
        .map(|(t, g)| recall(t, g, k))
        .collect();
    mean(&r)
}

/// Measure the graph against exact search on `n` varied texts: for every build
/// parameter pair (M, ef_construction) of `grid`, build time (wall and CPU), and per
/// search breadth of `efs` the latency of a search for the retriever's 200 candidates,
/// their recall, and the recall of their top 10; then, by index size, where the graph
/// overtakes exact search at the chosen parameters.
/// The varied set's distinct codes (as [`run`] makes them, shuffled alike) and the
/// benchmarks' questions as unit vectors, for measurements that need only the points.
pub fn points(embedder: &dyn Embedder, n: usize) -> (Vec<Code>, Vec<Vec<f32>>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/lakes");
    let texts = texts(&schemas(&root), n, 2025);
    let mut seen = std::collections::HashSet::new();
    let mut codes: Vec<Code> = embed_all(embedder, &texts)
        .iter()
        .map(|v| Code::new(v))
        .filter(|c| seen.insert(c.codes.clone()))
        .collect();
    fastrand::Rng::with_seed(11).shuffle(&mut codes);
    let queries = embed_all(embedder, &questions(&root))
        .iter()
        .map(|q| normalized(q))
        .collect();
    (codes, queries)
}

pub fn run(embedder: &dyn Embedder, n: usize, efs: &[usize], grid: &[(usize, usize)]) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/lakes");
    let schemas = schemas(&root);
    let qtexts = questions(&root);
    let texts = texts(&schemas, n, 2025);
    let (t_embed, vectors) = time(|| embed_all(embedder, &texts));
    let qunit: Vec<Vec<f32>> = embed_all(embedder, &qtexts)
        .iter()
        .map(|q| normalized(q))
        .collect();
    // One point per distinct vector, as the graph holds them (ann::update), shuffled so
    // that any prefix is a fair sample.
    // Points are codes, as the catalog stores them; distinct by their code.
    let mut seen = std::collections::HashSet::new();
    let mut points: Vec<(Vec<f32>, Code)> = vectors
        .into_iter()
        .map(|v| {
            let c = Code::new(&v);
            (normalized(&v), c)
        })
        .filter(|(_, c)| seen.insert(c.codes.clone()))
        .collect();
    fastrand::Rng::with_seed(11).shuffle(&mut points);
    let codes: Vec<&Code> = points.iter().map(|p| &p.1).collect();
    let refs: Vec<&Code> = codes.clone();
    let dim = refs[0].dim();
    println!(
        "### Varied set: {n} texts recombined from {} real files ({} distinct vectors, dim {dim}, embedded in {:.1} s), {} questions\n",
        schemas.len(),
        refs.len(),
        t_embed.as_secs_f64(),
        qunit.len()
    );
    let flat = flat_of(&codes);
    let (lat, truth) = per_query(&qunit, |q| flat.top(q, CANDIDATES));
    crate::print_neighbour_similarity(&truth);
    // What the codes cost before any graph: exact search over them against exact search
    // over the f32 vectors they were made from.
    let (f32_lat, f32_truth) = per_query(&qunit, |q| {
        let mut s: Vec<(usize, f32)> = points
            .iter()
            .map(|p| dist::dot(q, &p.0))
            .enumerate()
            .collect();
        s.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        s.truncate(CANDIDATES);
        s
    });
    println!(
        "exact over codes against exact over f32: recall@{CANDIDATES} {:.4}, recall@10 {:.4}; p50 {} (codes) against {} (f32, unsorted scan + sort)\n",
        mean_recall(&f32_truth, &truth, CANDIDATES),
        mean_recall(&f32_truth, &truth, 10),
        ms(p50_p99(lat.clone()).0),
        ms(p50_p99(f32_lat).0)
    );
    println!("| M | ef_construction | build | build CPU | ef | p50 | p99 | recall@{CANDIDATES} | recall@10 |");
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let (p50, p99) = p50_p99(lat);
    println!(
        "| exact | — | — | — | — | {} | {} | 1 | 1 |",
        ms(p50),
        ms(p99)
    );
    for &(m, ef_construction) in grid {
        let params = GraphParams { m, ef_construction };
        let (t, c, g) = time_cpu(|| Graph::build(&refs, params));
        for (i, &ef) in efs.iter().enumerate() {
            let (lat, got) = per_query(&qunit, |q| g.search(q, CANDIDATES, ef));
            let (p50, p99) = p50_p99(lat);
            let build = if i == 0 {
                format!("{:.1} s | {:.1} s", t.as_secs_f64(), c.as_secs_f64())
            } else {
                "| ".into()
            };
            println!(
                "| {m} | {ef_construction} | {build} | {} | {} | {} | {:.3} | {:.3} |",
                ef.max(CANDIDATES),
                ms(p50),
                ms(p99),
                mean_recall(&truth, &got, CANDIDATES),
                mean_recall(&truth, &got, 10)
            );
        }
    }

    let ef = ann::EF_SEARCH.max(CANDIDATES);
    let params = GraphParams {
        m: ann::M,
        ef_construction: ann::EF_CONSTRUCTION,
    };
    println!(
        "\n#### Exact vs graph by index size (prefixes; M {}, ef_construction {}, ef {ef}; p50 of a search for {CANDIDATES})\n",
        params.m, params.ef_construction
    );
    println!("| N | exact | graph | recall@{CANDIDATES} | recall@10 |");
    println!("|---:|---:|---:|---:|---:|");
    for size in [5000, 10_000, 20_000, 50_000]
        .into_iter()
        .filter(|&s| s < refs.len())
    {
        let sub = &refs[..size];
        let f = flat_of(&codes[..size]);
        let g = Graph::build(sub, params);
        let (lat, truth) = per_query(&qunit, |q| f.top(q, CANDIDATES));
        let (glat, got) = per_query(&qunit, |q| g.search(q, CANDIDATES, ef));
        println!(
            "| {size} | {} | {} | {:.3} | {:.3} |",
            ms(p50_p99(lat).0),
            ms(p50_p99(glat).0),
            mean_recall(&truth, &got, CANDIDATES),
            mean_recall(&truth, &got, 10)
        );
    }
    println!();
}

fn flat_of(codes: &[&Code]) -> Flat {
    let mut f = Flat::new(codes[0].dim());
    for c in codes {
        f.push(c);
    }
    f
}
