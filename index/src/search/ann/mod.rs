//! The vector half of retrieval: the files whose description embeddings are nearest a
//! question's, from an HNSW graph on disk or, for small indexes, by exact search.
//!
//! The catalog is the source of truth (its `embeddings` and `files`), except that the
//! vectors the current generation holds are kept there alone, the catalog's rows
//! keeping their points ([`held`], `catalog::held`); the graph is a derived,
//! rebuildable accelerator:
//!
//! - [`after_sync`] runs after every sync ([`check`] after a run that changed nothing). Below [`EXACT_BELOW`] live vectors it keeps no
//!   graph (exact search is as fast there). Above, it builds one from every file's
//!   vector — one point per distinct vector: HNSW degrades on duplicates, and same-schema
//!   siblings often embed identically — into a new generation directory, and swaps it in
//!   with one catalog transaction (the stale paths + meta), then removes the old one.
//!   The generation holds the files each point stands for ([`members`]).
//! - hnsw_rs cannot delete points, and rewriting its dump on every run would cost a
//!   full write of the vectors for a one-file change. So the graph stays as built: a
//!   file whose vector it holds but which changed or went away is a *tombstone*,
//!   filtered at query time, and a file the graph lacks (new, changed, renamed) is in
//!   the *delta*, searched exactly beside the graph. Both are found among the paths the
//!   catalog marked stale, with the generation's members ([`stale`]); when either passes [`REBUILD_FRACTION`] of the files
//!   the graph stands for, the next refresh rebuilds.
//! - [`VectorIndex::open`] reads one catalog snapshot; if the graph is missing, of
//!   another embedder, unreadable or fails its digests, it searches exactly over the
//!   stored vectors instead — correct, only slower, as long as the generation's codes
//!   can be read — and the next index run rebuilds whatever a cheap check finds missing,
//!   embedding again the vectors of codes that were lost.

#[cfg(target_arch = "x86_64")]
mod avx2;
pub mod dist;
pub mod graph;
mod held;
pub mod members;
mod nearest;
pub mod nibbles;
mod pages;
mod pool;
mod select;
mod spill;
mod stale;
pub mod update;

use crate::catalog::{CatalogReader, KeyedVector, MetaKey};
use crate::error::Result;
use serde::{Deserialize, Serialize};
use std::path::Path;

pub use nearest::{Mode, VectorIndex};
pub use update::{after_sync, check, refresh};

/// Live vectors below which no generation is kept and search is exact over the
/// catalog's vectors: below it, reading every vector from the catalog costs no more than
/// mapping a generation's codes, and above it the generation's cheap build soon pays
/// (BENCHMARKS.md, Search).
/// `LAKESTAR_EXACT_BELOW` overrides it (tests force the graph with 0).
pub const EXACT_BELOW: u64 = 1_000;
/// Tombstones (or delta vectors) beyond this fraction of the files the graph stands for
/// trigger a rebuild.
pub const REBUILD_FRACTION: f64 = 0.2;
/// Links per point (HNSW's M; twice as many on the bottom layer): 16 builds cheaper but
/// finds fewer of the retriever's candidates at [`EF_SEARCH`] (BENCHMARKS.md, Search).
pub const M: usize = 32;
/// Candidates per insertion while building. The build's CPU is about proportional to
/// it; the recall 100 loses against 200, the wide [`EF_SEARCH`] wins back, and 50 loses
/// too much (BENCHMARKS.md, Search).
pub const EF_CONSTRUCTION: usize = 100;
/// Candidates examined per search (at least the number of results asked for; the
/// retriever asks for 200, so this is its search breadth), all rescored against the
/// query. Questions' neighbours lie within thousandths of each other, which the graph's
/// walk over codes tells apart only by looking this wide (BENCHMARKS.md, Search). A
/// one-off search scans the codes exactly and never uses it.
pub const EF_SEARCH: usize = 1600;

/// A scan over a generation's 4-bit codes ([`nibbles`]) rescores from the 8-bit codes
/// this many points per result asked, and at least [`NIBBLE_POOL_MIN`]: enough to keep
/// nearly every one of the exact results (BENCHMARKS.md, "Vector search settings").
pub const NIBBLE_POOL_PER_RESULT: usize = 5;
/// The smallest pool of a 4-bit scan (see [`NIBBLE_POOL_PER_RESULT`]).
pub const NIBBLE_POOL_MIN: usize = 1_000;
/// Bytes of a generation's codes above which it also gets their 4-bit copy, which
/// adds half the codes' bytes to the index: below 16 MiB (about 64k files at 256
/// dimensions) the 8-bit scan is a fraction of a millisecond of the query, and the copy
/// not worth its bytes (BENCHMARKS.md, "Vector search settings").
pub const NIBBLES_ABOVE: u64 = 16 << 20;

/// Items a rebuild's external sorts ([`crate::spool::Sorter`]) and spools hold in
/// memory before they go to disk: the sorts that find a generation's distinct vectors
/// (20 bytes an item) and group its members by point (8). At this size a sort of a
/// million files writes 16 runs and merges them in one pass, reading each through a
/// 64 KiB buffer; a lake below it never touches the disk.
pub const SORT_RUN: usize = 1 << 16;

/// The threshold in force: [`NIBBLES_ABOVE`] or `LAKESTAR_NIBBLES_ABOVE`; 0 in unit
/// tests, which test the copy on a few hundred points.
pub fn nibbles_above() -> u64 {
    if cfg!(test) {
        return 0;
    }
    std::env::var("LAKESTAR_NIBBLES_ABOVE")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(NIBBLES_ABOVE)
}

/// Bytes of a generation's codes up to which a long-lived process scans them rather than
/// loading the graph ([`nearest::Mode::Resident`]), and so up to which no graph is built
/// ([`graph_above`]). The walk at the breadth recall needs reads its points all over
/// memory, so it gains on the scan far more slowly than the bytes grow; below this a
/// graph only costs build time, memory and disk (BENCHMARKS.md, "Vector search
/// settings"), though it saves CPU per query, which a saturated server notices first.
/// 256 MiB is about a million points at 256 dimensions, 690k at 384.
/// `LAKESTAR_SCAN_UP_TO` overrides it (tests force the graph with 0).
pub const SCAN_UP_TO: u64 = 256 << 20;

/// The threshold in force: [`SCAN_UP_TO`] or `LAKESTAR_SCAN_UP_TO`.
pub fn scan_up_to() -> u64 {
    std::env::var("LAKESTAR_SCAN_UP_TO")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(SCAN_UP_TO)
}

/// Bytes of a generation's codes above which a rebuild by a writer that builds graphs
/// (`update::GraphBuild::Inline`, `Deferred`; never `CodesOnly`) also builds the HNSW
/// graph: [`scan_up_to`], since below it every process scans the codes and a graph would only
/// cost build time, memory and disk. Unit tests build it always: they test the
/// graph on a few hundred points, and ask for codes alone explicitly.
pub fn graph_above() -> u64 {
    if cfg!(test) {
        0
    } else {
        scan_up_to()
    }
}

/// The live-vector threshold in force: [`EXACT_BELOW`] or `LAKESTAR_EXACT_BELOW`.
pub fn exact_below() -> u64 {
    std::env::var("LAKESTAR_EXACT_BELOW")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(EXACT_BELOW)
}

/// The generation the catalog names (its members are in it: [`members`]).
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

/// What the catalog records of the vector index (meta [`MetaKey::VectorIndex`]).
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
    pub fn load(cat: &CatalogReader) -> Result<VectorMeta> {
        Ok(cat
            .meta(MetaKey::VectorIndex)?
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
    /// `hnsw` when the generation holds a graph (a server loads it above its scan
    /// threshold), `codes` when it holds the codes alone (always scanned), else `exact`
    /// (every vector read from the catalog).
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
    /// A generation of codes alone too large for a long-lived process to scan
    /// quickly ([`scan_up_to`]): it would walk a graph, which `index --graph`, `watch`
    /// and `serve --watch` build ([`update::GraphBuild`]).
    pub graph_wanted: bool,
}

/// The vector status of the index at `dir` for `embedder`, counted now (without loading
/// the graph: a graph that fails its digests still shows here, and searches go exact).
pub fn status(cat: &CatalogReader, dir: &Path, embedder: &str) -> Result<VectorStatus> {
    let threshold = exact_below();
    cat.read_snapshot(|cat| {
        let meta = VectorMeta::load(cat)?;
        // A generation whose members cannot be read is not searched: exact here too.
        let graph = match meta.graph.filter(|g| {
            g.embedder == embedder && graph::looks_complete(dir, g.generation, embedder)
        }) {
            Some(g) => stale::counts(cat, dir, &g)?.map(|counts| (counts, g)),
            None => None,
        };
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
            graph_wanted: false,
        };
        match graph {
            Some(((tombstones, delta), g)) => {
                s.generation = Some(g.generation);
                s.points = g.points;
                s.files = g.files;
                s.tombstones = tombstones;
                s.delta = delta;
                s.live = s.files.saturating_sub(s.tombstones) + s.delta;
                if s.live >= threshold && s.live > 0 {
                    let manifest = graph::read_manifest(dir, g.generation);
                    let has_graph = manifest.as_ref().is_some_and(|m| m.has_graph());
                    s.kind = if has_graph { "hnsw" } else { "codes" };
                    s.graph_wanted =
                        !has_graph && manifest.is_some_and(|m| m.codes.bytes > scan_up_to());
                }
            }
            None => s.live = cat.vector_count(embedder)?,
        }
        Ok(s)
    })
}

/// Every file's vector by `embedder` with its description key, in path order, the ones
/// the catalog left to the current generation read from its codes (those that cannot be
/// read are left out).
pub fn file_vectors(cat: &CatalogReader, dir: &Path, embedder: &str) -> Result<Vec<KeyedVector>> {
    cat.read_snapshot(|cat| {
        let rows = cat.keyed_file_vectors(embedder)?;
        Ok(held::resolve_keyed(cat, dir, embedder, rows, held::Check::Sizes)?.0)
    })
}

/// The dimension most vectors have (all of them, unless the embedder misbehaved), from
/// their dimensions.
fn common_dim(dims: impl Iterator<Item = usize>) -> usize {
    let mut counts: std::collections::HashMap<usize, u64> = Default::default();
    for d in dims {
        *counts.entry(d).or_default() += 1;
    }
    most_common_dim(&counts)
}

/// [`common_dim`] from the count of vectors of each dimension (ties: the larger one).
fn most_common_dim(counts: &std::collections::HashMap<usize, u64>) -> usize {
    counts
        .iter()
        .max_by_key(|&(d, n)| (n, d))
        .map_or(0, |(&d, _)| d)
}

#[cfg(test)]
mod tests;
