//! Keeping the vector graph in step with the catalog (the writer's side).
//!
//! Counting tombstones and the delta exactly is a join over every file (a third of a
//! second at 100k files), too much for every run that changes one file. The meta keeps
//! upper bounds instead: a changed path adds at most one tombstone (its old vector), one
//! delta vector (its new one) and one live vector, so a sync of `n` changed paths raises
//! each bound by `n`, and only a bound that reaches its limit costs an exact count.

use super::graph::{self, Graph, GraphParams};
use super::{common_dim, exact_below, GraphMeta, VectorMeta, EF_CONSTRUCTION, M, REBUILD_FRACTION};
use crate::catalog::{CatalogWriter, KeyedVector, MetaKey};
use crate::compact::Code;
use crate::error::{Error, Result};
use std::collections::HashMap;
use std::path::Path;

/// What a refresh did to the graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refreshed {
    /// Nothing to rebuild: the graph (or exact search) stands.
    Kept,
    /// A new generation was built and swapped in.
    Built {
        /// Its number.
        generation: u64,
        /// The files it stands for.
        files: u64,
    },
    /// The index is too small for a graph: exact search, no graph kept.
    Exact,
}

/// Record that the vectors are about to change, so that a crash before the refresh
/// finishes is caught up by the next run. Returns whether the recorded bounds can be
/// trusted (the last refresh finished), i.e. whether [`after_sync`] may count changes
/// instead of files.
pub fn begin(cat: &CatalogWriter) -> Result<bool> {
    let mut meta = VectorMeta::load(cat)?;
    let trusted = meta.fresh;
    if meta.fresh {
        meta.fresh = false;
        cat.set_meta(MetaKey::VectorIndex, &meta.to_json())?;
    }
    Ok(trusted)
}

/// After a run that changed no vector: refresh only if the last refresh did not finish,
/// the graph's files are missing or damaged (sizes; a cheap check), or the threshold
/// now asks for a graph where there is none or the other way round.
pub fn check(cat: &mut CatalogWriter, dir: &Path, embedder: &str) -> Result<Refreshed> {
    check_with(cat, dir, embedder, exact_below())
}

/// [`check`] with the exact-search threshold given.
pub fn check_with(
    cat: &mut CatalogWriter,
    dir: &Path,
    embedder: &str,
    exact_below: u64,
) -> Result<Refreshed> {
    let meta = VectorMeta::load(cat)?;
    let want = meta.live >= exact_below && meta.live > 0;
    let sound = meta.graph.as_ref().is_some_and(|g| {
        g.embedder == embedder && graph::looks_complete(dir, g.generation, embedder)
    });
    if meta.fresh && want == sound && (want || meta.graph.is_none()) {
        return Ok(if want {
            Refreshed::Kept
        } else {
            Refreshed::Exact
        });
    }
    refresh_with(cat, dir, embedder, exact_below, None)
}

/// After a sync that changed `changed` paths (`None`: unknown — another embedder, or
/// the bounds are not trusted): raise the bounds, and refresh exactly only when one
/// reaches its limit.
pub fn after_sync(
    cat: &mut CatalogWriter,
    dir: &Path,
    embedder: &str,
    changed: Option<u64>,
) -> Result<Refreshed> {
    refresh_with(cat, dir, embedder, exact_below(), changed)
}

/// Bring the graph in step with the catalog's vectors by `embedder`, counting exactly:
/// drop it below the exact-search threshold, rebuild it when it is missing, damaged, of
/// another embedder or has too many tombstones or delta vectors, else keep it.
pub fn refresh(cat: &mut CatalogWriter, dir: &Path, embedder: &str) -> Result<Refreshed> {
    refresh_with(cat, dir, embedder, exact_below(), None)
}

/// [`refresh`] with the exact-search threshold given, and `changed` as in
/// [`after_sync`].
pub fn refresh_with(
    cat: &mut CatalogWriter,
    dir: &Path,
    embedder: &str,
    exact_below: u64,
    changed: Option<u64>,
) -> Result<Refreshed> {
    let meta = VectorMeta::load(cat)?;
    let current = meta
        .graph
        .clone()
        .filter(|g| g.embedder == embedder && graph::looks_complete(dir, g.generation, embedder));
    let io = |e| Error::io(dir.join(graph::VECTORS_DIR), e);

    // The bounds alone may prove there is nothing to do.
    if let Some(n) = changed {
        let bounded = VectorMeta {
            live: meta.live + n,
            tombstones: meta.tombstones + n,
            delta: meta.delta + n,
            fresh: true,
            ..meta.clone()
        };
        let settled = match &current {
            Some(g) => {
                let limit = g.files as f64 * REBUILD_FRACTION;
                bounded.tombstones as f64 <= limit && bounded.delta as f64 <= limit
            }
            None => meta.graph.is_none() && bounded.live < exact_below,
        };
        if settled {
            cat.set_meta(MetaKey::VectorIndex, &bounded.to_json())?;
            return Ok(if current.is_some() {
                Refreshed::Kept
            } else {
                Refreshed::Exact
            });
        }
    }

    let (live, tombstones, delta) = match &current {
        Some(g) => {
            let tombstones = cat.graph_tombstone_count()?;
            let delta = cat.graph_delta_count(embedder)?;
            (
                g.files.saturating_sub(tombstones) + delta,
                tombstones,
                delta,
            )
        }
        None => (cat.vector_count(embedder)?, 0, 0),
    };

    if live < exact_below || live == 0 {
        let none = VectorMeta {
            live,
            fresh: true,
            ..VectorMeta::default()
        };
        if meta.graph.is_some() {
            cat.replace_graph_members(&[], MetaKey::VectorIndex, &none.to_json())?;
        } else {
            cat.set_meta(MetaKey::VectorIndex, &none.to_json())?;
        }
        graph::remove_other_generations(dir, None).map_err(io)?;
        return Ok(Refreshed::Exact);
    }

    let keep = current.as_ref().map(|g| g.generation);
    if let Some(g) = &current {
        let limit = g.files as f64 * REBUILD_FRACTION;
        if tombstones as f64 <= limit && delta as f64 <= limit {
            let counted = VectorMeta {
                live,
                tombstones,
                delta,
                fresh: true,
                ..meta
            };
            cat.set_meta(MetaKey::VectorIndex, &counted.to_json())?;
            // Leftovers of an interrupted build, if any.
            graph::remove_other_generations(dir, keep).map_err(io)?;
            return Ok(Refreshed::Kept);
        }
    }
    rebuild(cat, dir, embedder, &meta, keep)
}

/// Build a new generation from every file's vector and swap it in. The current
/// generation (`keep`) stays readable until the catalog points at the new one.
fn rebuild(
    cat: &mut CatalogWriter,
    dir: &Path,
    embedder: &str,
    meta: &VectorMeta,
    keep: Option<u64>,
) -> Result<Refreshed> {
    let io = |e| Error::io(dir.join(graph::VECTORS_DIR), e);
    let highest = graph::remove_other_generations(dir, keep).map_err(io)?;
    let next = highest.max(meta.graph.as_ref().map_or(0, |g| g.generation)) + 1;
    let mut rows = cat.keyed_file_vectors(embedder)?;
    let dim = common_dim(rows.iter().map(|r| r.vector.dim()));
    rows.retain(|r| r.vector.dim() == dim);
    let params = GraphParams {
        m: M,
        ef_construction: EF_CONSTRUCTION,
    };
    // One point per distinct vector (HNSW degrades on duplicates; identical vectors
    // are common among same-schema siblings): the catalog maps each file to its point.
    let mut ids: HashMap<[u8; 32], u64> = HashMap::new();
    let mut points: Vec<&Code> = Vec::new();
    let mut members: Vec<(u64, &KeyedVector)> = Vec::with_capacity(rows.len());
    let mut bytes = Vec::new();
    for r in &rows {
        bytes.clear();
        bytes.extend(r.vector.codes.iter().map(|&c| c as u8));
        let id = *ids
            .entry(*blake3::hash(&bytes).as_bytes())
            .or_insert_with(|| {
                points.push(&r.vector);
                points.len() as u64 - 1
            });
        members.push((id, r));
    }
    let built = Graph::build(&points, params);
    graph::write_generation(dir, next, embedder, &built, &points, params).map_err(io)?;
    let files = rows.len() as u64;
    let meta = VectorMeta {
        graph: Some(GraphMeta {
            generation: next,
            embedder: embedder.to_string(),
            points: points.len() as u64,
            files,
            params,
        }),
        live: files,
        tombstones: 0,
        delta: 0,
        fresh: true,
    };
    cat.replace_graph_members(&members, MetaKey::VectorIndex, &meta.to_json())?;
    graph::remove_other_generations(dir, Some(next)).map_err(io)?;
    tracing::debug!(generation = next, files, "vector graph rebuilt");
    Ok(Refreshed::Built {
        generation: next,
        files,
    })
}
