//! The vector half of retrieval: the files whose description embeddings are nearest a
//! question's, from an HNSW graph on disk or, for small indexes, by exact search.
//!
//! The catalog is the source of truth (its `embeddings` and `files`); the graph is a
//! derived, rebuildable accelerator:
//!
//! - [`after_sync`] runs after every sync ([`check`] after a run that changed nothing). Below [`EXACT_BELOW`] live vectors it keeps no
//!   graph (exact search is as fast there). Above, it builds one from every file's
//!   vector — one point per distinct vector: HNSW degrades on duplicates, and same-schema
//!   siblings often embed identically — into a new generation directory, and swaps it in
//!   with one catalog transaction (`vector_points` + meta), then removes the old one.
//! - hnsw_rs cannot delete points, and rewriting its dump on every run would cost a
//!   full write of the vectors for a one-file change. So the graph stays as built: a
//!   file whose vector it holds but which changed or went away is a *tombstone*,
//!   filtered at query time, and a file the graph lacks (new, changed, renamed) is in
//!   the *delta*, searched exactly beside the graph. Both follow from a join of
//!   `vector_points` with `files`; when either passes [`REBUILD_FRACTION`] of the files
//!   the graph stands for, the next refresh rebuilds.
//! - [`VectorIndex::open`] reads one catalog snapshot; if the graph is missing, of
//!   another embedder, unreadable or fails its digests, it searches exactly over the
//!   stored vectors instead — correct, only slower — and the next index run rebuilds
//!   whatever a cheap check finds missing.

pub mod dist;
pub mod graph;
mod nearest;
pub mod update;

use crate::catalog::Catalog;
use crate::error::Result;
use serde::{Deserialize, Serialize};
use std::path::Path;

pub use nearest::VectorIndex;
pub use update::{after_sync, check, refresh};

/// Live vectors below which no graph is kept and search is exact. The graph's vector
/// search overtakes exact search's from about 5,000 vectors, but up to 20,000 exact
/// search costs 2 ms or less, a tenth of the hybrid query it is part of, while the
/// graph's recall on the built-in embedder is 0.6–0.9 (BENCHMARKS.md).
/// `LAKESTAR_EXACT_BELOW` overrides it (tests force the graph with 0).
pub const EXACT_BELOW: u64 = 20_000;
/// Tombstones (or delta vectors) beyond this fraction of the files the graph stands for
/// trigger a rebuild.
pub const REBUILD_FRACTION: f64 = 0.2;
/// Links per point (HNSW's M; twice as many on the bottom layer). Measured on the
/// built-in embedder (BENCHMARKS.md): 32 with [`EF_CONSTRUCTION`] 200 gives recall@10
/// 0.82 at ef 64 where 16 and 100 give 0.6, at the same query cost and 1.5× the build.
pub const M: usize = 32;
/// Candidates per insertion while building.
pub const EF_CONSTRUCTION: usize = 200;
/// Candidates examined per search (at least the number of results asked for; the
/// retriever asks for 200).
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
    /// Points in it (distinct vectors).
    pub points: u64,
    /// Files it stands for.
    pub files: u64,
    /// Build parameters.
    pub params: graph::GraphParams,
}

/// What the catalog records of the vector index (meta [`VECTOR_META`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct VectorMeta {
    /// The current graph, if any.
    pub graph: Option<GraphMeta>,
    /// Live vectors: counted at the last exact refresh, plus changes since (an upper
    /// bound).
    pub live: u64,
    /// Tombstones, likewise an upper bound.
    pub tombstones: u64,
    /// Delta vectors, likewise an upper bound.
    pub delta: u64,
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
    /// Points in the graph (distinct vectors).
    pub points: u64,
    /// Files the graph stands for.
    pub files: u64,
    /// Of those, files that changed or went away since it was built.
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
            files: 0,
            tombstones: 0,
            delta: 0,
            exact_below: threshold,
        };
        match graph {
            Some(g) => {
                s.generation = Some(g.generation);
                s.points = g.points;
                s.files = g.files;
                s.tombstones = cat.graph_tombstone_count()?;
                s.delta = cat.graph_delta_count(embedder)?;
                s.live = s.files.saturating_sub(s.tombstones) + s.delta;
                if s.live >= threshold && s.live > 0 {
                    s.kind = "hnsw";
                }
            }
            None => s.live = cat.vector_count(embedder)?,
        }
        Ok(s)
    })
}

/// The dimension most of `vectors` have (all of them, unless the embedder misbehaved).
fn common_dim<'a>(vectors: impl Iterator<Item = &'a [f32]>) -> usize {
    let mut counts: std::collections::HashMap<usize, usize> = Default::default();
    for v in vectors {
        *counts.entry(v.len()).or_default() += 1;
    }
    counts
        .into_iter()
        .max_by_key(|&(d, n)| (n, d))
        .map_or(0, |(d, _)| d)
}

#[cfg(test)]
mod tests;
