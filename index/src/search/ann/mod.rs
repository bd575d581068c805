//! The vector half of retrieval: the files whose description embeddings are nearest a
//! question's, from an HNSW graph on disk or, for small indexes, by exact search.
//!
//! The catalog is the source of truth (its `embeddings` and `files`); the graph is a
//! derived, rebuildable accelerator:
//!
//! - [`refresh`] runs after every sync. Below [`EXACT_BELOW`] live vectors it keeps no
//!   graph (exact search is as fast there). Above, it builds one from every file's
//!   vector into a new generation directory and swaps it in with one catalog
//!   transaction (points table + meta), then removes the old one.
//! - hnsw_rs cannot delete points, and rewriting its dump on every run would cost a
//!   full write of the vectors for a one-file change. So the graph stays as built: a
//!   point whose file changed or went away is a *tombstone*, filtered at query time, and
//!   a file the graph lacks (new, or changed) is in the *delta*, searched exactly beside
//!   the graph. Both follow from a join of the graph's points with `files`; when either
//!   passes [`REBUILD_FRACTION`] of the graph's points, the next refresh rebuilds.
//! - [`VectorIndex::open`] reads one catalog snapshot; if the graph is missing, of
//!   another embedder, unreadable or fails its digests, it searches exactly over the
//!   stored vectors instead — correct, only slower — and the next index run rebuilds
//!   whatever a cheap check finds missing.

pub mod dist;
pub mod graph;
pub mod update;

use crate::catalog::Catalog;
use crate::error::Result;
use dist::Flat;
use graph::Graph;
use serde::{Deserialize, Serialize};
use std::path::Path;

pub use update::{check, refresh};

/// Live vectors below which no graph is kept and search is exact (measured: see
/// BENCHMARKS.md). `LAKESTAR_EXACT_BELOW` overrides it (tests force the graph with 0).
pub const EXACT_BELOW: u64 = 5000;
/// Tombstones (or delta vectors) beyond this fraction of the graph's points trigger a
/// rebuild.
pub const REBUILD_FRACTION: f64 = 0.2;
/// Links per point (HNSW's M), chosen by measurement (BENCHMARKS.md).
pub const M: usize = 16;
/// Candidates per insertion while building.
pub const EF_CONSTRUCTION: usize = 100;
/// Candidates examined per search (at least the number of results asked for).
pub const EF_SEARCH: usize = 64;
/// Catalog meta key holding the [`VectorMeta`] (JSON).
pub const VECTOR_META: &str = "vector_index";

/// The live-vector threshold in force: [`EXACT_BELOW`] or `LAKESTAR_EXACT_BELOW`.
pub fn exact_below() -> u64 {
    std::env::var("LAKESTAR_EXACT_BELOW")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(EXACT_BELOW)
}

/// The graph a catalog's `vector_points` describe.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GraphMeta {
    /// Generation number (directory `vectors/gen-N`).
    pub generation: u64,
    /// Embedder id of its vectors.
    pub embedder: String,
    /// Points in it.
    pub points: u64,
    /// Build parameters.
    pub params: graph::GraphParams,
}

/// What the catalog records of the vector index (meta [`VECTOR_META`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct VectorMeta {
    /// The current graph, if any.
    pub graph: Option<GraphMeta>,
    /// Live vectors at the last refresh.
    pub live: u64,
    /// The last refresh finished after the vectors last changed (cleared when a sync
    /// starts, so that a crash in between is caught up by the next run).
    pub fresh: bool,
}

impl VectorMeta {
    /// The recorded state, or the default when there is none or it cannot be read.
    pub fn load(cat: &Catalog) -> Result<VectorMeta> {
        Ok(cat
            .meta(VECTOR_META)?
            .and_then(|s| serde_json::from_str(&s).ok())
            .unwrap_or_default())
    }

    fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// The state of an index's vector search, for `lakestar status`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VectorStatus {
    /// `hnsw` when searches use the graph, else `exact`.
    pub kind: &'static str,
    /// Embedder id of the vectors.
    pub embedder: String,
    /// Files with a vector.
    pub live: u64,
    /// The graph's generation.
    pub generation: Option<u64>,
    /// Points in the graph.
    pub points: u64,
    /// Graph points whose file changed or went away.
    pub tombstones: u64,
    /// Files searched exactly beside the graph (new or changed since it was built).
    pub delta: u64,
    /// The live-vector threshold below which search is exact.
    pub exact_below: u64,
}

/// The vector status of the index at `dir` for `embedder`, counted now (without loading
/// the graph: a graph that fails its digests still shows here, and searches go exact).
pub fn status(cat: &Catalog, dir: &Path, embedder: &str) -> Result<VectorStatus> {
    let threshold = exact_below();
    cat.read_snapshot(|cat| {
        let meta = VectorMeta::load(cat)?;
        let graph = meta.graph.filter(|g| {
            g.embedder == embedder && graph::looks_complete(dir, g.generation, embedder)
        });
        let mut s = VectorStatus {
            kind: "exact",
            embedder: embedder.to_string(),
            live: 0,
            generation: None,
            points: 0,
            tombstones: 0,
            delta: 0,
            exact_below: threshold,
        };
        match graph {
            Some(g) => {
                s.generation = Some(g.generation);
                s.points = g.points;
                s.tombstones = cat.graph_tombstone_count()?;
                s.delta = cat.graph_delta_count(embedder)?;
                s.live = (s.points - s.tombstones.min(s.points)) + s.delta;
                if s.live >= threshold && s.live > 0 {
                    s.kind = "hnsw";
                }
            }
            None => s.live = cat.vector_count(embedder)?,
        }
        Ok(s)
    })
}

/// Where the nearest vectors come from.
enum Backing {
    /// Every live vector, scored exhaustively.
    Exact { paths: Vec<String>, flat: Flat },
    /// The graph, minus its tombstones, plus the delta scored exhaustively.
    Graph {
        graph: Graph,
        paths: Vec<String>,
        dead: Vec<bool>,
        tombstones: usize,
        delta_paths: Vec<String>,
        delta: Flat,
    },
}

/// Nearest-neighbour search over the description vectors of one index.
pub struct VectorIndex {
    backing: Backing,
    ef: usize,
}

impl std::fmt::Debug for VectorIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VectorIndex")
            .field("kind", &self.kind())
            .field("len", &self.len())
            .finish()
    }
}

/// Exact search over `rows` (path, vector): vectors of the most common dimension kept.
fn flat_of(rows: Vec<(String, Vec<f32>)>, dim: usize) -> (Vec<String>, Flat) {
    let mut flat = Flat::new(dim);
    let mut paths = Vec::with_capacity(rows.len());
    for (p, v) in rows {
        if flat.push(&v) {
            paths.push(p);
        }
    }
    (paths, flat)
}

/// The dimension most of `rows` have (all of them, unless the embedder misbehaved).
fn common_dim<'a>(rows: impl Iterator<Item = &'a [f32]>) -> usize {
    let mut counts: std::collections::HashMap<usize, usize> = Default::default();
    for v in rows {
        *counts.entry(v.len()).or_default() += 1;
    }
    counts
        .into_iter()
        .max_by_key(|&(d, n)| (n, d))
        .map_or(0, |(d, _)| d)
}

impl VectorIndex {
    /// Open the vectors of the index at `dir` made by `embedder`: the graph when the
    /// index has enough live vectors and a sound graph of this embedder, else exact.
    pub fn open(cat: &Catalog, dir: &Path, embedder: &str) -> Result<VectorIndex> {
        Self::open_with(cat, dir, embedder, exact_below())
    }

    /// [`VectorIndex::open`] with the exact-search threshold given.
    pub fn open_with(
        cat: &Catalog,
        dir: &Path,
        embedder: &str,
        threshold: u64,
    ) -> Result<VectorIndex> {
        cat.read_snapshot(|cat| {
            let meta = VectorMeta::load(cat)?;
            if let Some(g) = meta.graph.filter(|g| g.embedder == embedder) {
                match Self::open_graph(cat, dir, &g, threshold)? {
                    Ok(Some(v)) => return Ok(v),
                    Ok(None) => {}
                    Err(why) => tracing::warn!(
                        generation = g.generation,
                        "vector graph not used ({why}); searching exactly, the next `lakestar index` rebuilds it"
                    ),
                }
            }
            Self::open_exact(cat, embedder)
        })
    }

    /// Exact search over every stored vector by `embedder`.
    pub fn open_exact(cat: &Catalog, embedder: &str) -> Result<VectorIndex> {
        let rows = cat.file_vectors(embedder)?;
        let dim = common_dim(rows.iter().map(|(_, v)| v.as_slice()));
        let (paths, flat) = flat_of(rows, dim);
        Ok(VectorIndex {
            backing: Backing::Exact { paths, flat },
            ef: EF_SEARCH,
        })
    }

    /// The graph path: Ok(None) when the index is small enough for exact search,
    /// Err(why) when the graph cannot be used.
    fn open_graph(
        cat: &Catalog,
        dir: &Path,
        g: &GraphMeta,
        threshold: u64,
    ) -> Result<std::result::Result<Option<VectorIndex>, String>> {
        let tomb = cat.graph_tombstones()?;
        let delta_rows = cat.graph_delta(&g.embedder)?;
        let live = g.points.saturating_sub(tomb.len() as u64) + delta_rows.len() as u64;
        if live < threshold || live == 0 {
            return Ok(Ok(None));
        }
        let paths = cat.graph_paths()?;
        if paths.len() as u64 != g.points {
            return Ok(Err(format!(
                "the catalog lists {} points, the graph has {}",
                paths.len(),
                g.points
            )));
        }
        let graph = match graph::open_generation(dir, g.generation, &g.embedder, paths.len()) {
            Ok(graph) => graph,
            Err(why) => return Ok(Err(why)),
        };
        let mut dead = vec![false; paths.len()];
        for &id in &tomb {
            if let Some(d) = dead.get_mut(id) {
                *d = true;
            }
        }
        let (delta_paths, delta) = flat_of(delta_rows, graph.dim());
        Ok(Ok(Some(VectorIndex {
            backing: Backing::Graph {
                graph,
                paths,
                dead,
                tombstones: tomb.len(),
                delta_paths,
                delta,
            },
            ef: EF_SEARCH,
        })))
    }

    /// `hnsw` or `exact`.
    pub fn kind(&self) -> &'static str {
        match self.backing {
            Backing::Exact { .. } => "exact",
            Backing::Graph { .. } => "hnsw",
        }
    }

    /// Live vectors searched.
    pub fn len(&self) -> usize {
        match &self.backing {
            Backing::Exact { flat, .. } => flat.len(),
            Backing::Graph {
                graph,
                tombstones,
                delta,
                ..
            } => graph.len() - tombstones + delta.len(),
        }
    }

    /// Whether nothing is searched.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Set the graph's search breadth (candidates examined; at least the results asked
    /// for). No effect on exact search.
    pub fn set_ef(&mut self, ef: usize) {
        self.ef = ef.max(1);
    }

    /// The `n` files whose vectors are nearest `query`: (path, cosine similarity), best
    /// first, ties by path. Exact search and the graph answer in the same shape; the
    /// graph's answer is approximate and never holds a tombstone.
    pub fn nearest(&self, query: &[f32], n: usize) -> Vec<(String, f32)> {
        let q = dist::normalized(query);
        let mut out: Vec<(&str, f32)> = match &self.backing {
            Backing::Exact { paths, flat } => flat
                .top(&q, n)
                .into_iter()
                .map(|(i, s)| (paths[i].as_str(), s))
                .collect(),
            Backing::Graph {
                graph,
                paths,
                dead,
                tombstones,
                delta_paths,
                delta,
            } => {
                let mut live = live_nearest(graph, dead, *tombstones, &q, n, self.ef)
                    .into_iter()
                    .map(|(i, s)| (paths[i].as_str(), s))
                    .collect::<Vec<_>>();
                live.extend(
                    delta
                        .top(&q, n)
                        .into_iter()
                        .map(|(i, s)| (delta_paths[i].as_str(), s)),
                );
                live
            }
        };
        out.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
        out.truncate(n);
        out.into_iter().map(|(p, s)| (p.to_string(), s)).collect()
    }
}

/// The graph's `n` nearest live points. Tombstones take places in hnsw_rs's answer, so
/// it is asked for enough more to make up for their share, and again for twice as many
/// until `n` live points are found or the whole graph has been asked for.
fn live_nearest(
    graph: &Graph,
    dead: &[bool],
    tombstones: usize,
    q: &[f32],
    n: usize,
    ef: usize,
) -> Vec<(usize, f32)> {
    let total = graph.len();
    let want = n.min(total - tombstones.min(total));
    if want == 0 {
        return Vec::new();
    }
    let share = tombstones as f64 / total as f64;
    let mut k = ((n as f64 / (1.0 - share).max(0.05)).ceil() as usize + 8).min(total);
    loop {
        let found: Vec<(usize, f32)> = graph
            .search(q, k, ef.max(k))
            .into_iter()
            .filter(|&(id, _)| !dead.get(id).copied().unwrap_or(true))
            .collect();
        if found.len() >= want || k >= total {
            return found;
        }
        k = (k * 2).min(total);
    }
}

#[cfg(test)]
mod tests;
