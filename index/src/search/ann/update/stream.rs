//! The rebuild's streaming steps: the snapshot's rows spilled as the catalog is read
//! ([`spill_rows`]), the generation written from the spill ([`write_spilled`]), and the
//! spill read back as the swap's members ([`SpilledMembers`]).

use super::{BuiltGraph, NOT_HELD};
use crate::catalog::{CatalogWriter, KeyedVector, MemberRows, Stored};
use crate::compact::Code;
use crate::error::{Error, Result};
use crate::search::ann::graph::{self, GenerationWriter, Graph, GraphParams};
use crate::search::ann::held::{Check, Resolver};
use crate::search::ann::spill::{Spill, SpillWriter};
use crate::search::ann::{EF_CONSTRUCTION, M};
use std::cell::OnceCell;
use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

/// Every file's vector by `embedder`, in path order, spilled to generation
/// `generation`'s rows file as it is read (the ones the catalog left to the current
/// generation read from its codes): the spill, and how many could not be read (left
/// out).
pub(super) fn spill_rows(
    cat: &CatalogWriter,
    dir: &Path,
    embedder: &str,
    generation: u64,
) -> Result<(Spill, usize)> {
    let path = graph::spill_path(dir, generation);
    let io = |e| Error::io(&path, e);
    std::fs::create_dir_all(dir.join(graph::VECTORS_DIR)).map_err(io)?;
    let mut out = SpillWriter::create(&path).map_err(io)?;
    // Digest checked: damage would otherwise be copied into the next generation.
    let resolver = Resolver::new(cat, dir, embedder, Check::Digest);
    let mut unread = 0;
    let read = cat.for_each_keyed_file_vector(embedder, |mut r| {
        let v = std::mem::replace(&mut r.vector, Stored::Point(0));
        match resolver.code(v)? {
            Some(c) => out.push(&r.with(c)).map_err(io),
            None => {
                unread += 1;
                Ok(())
            }
        }
    });
    if let Err(e) = read {
        out.discard();
        return Err(e);
    }
    Ok((out.finish().map_err(io)?, unread))
}

/// Write generation `generation` from the spilled `rows`, read once in path order: one
/// point per distinct vector (HNSW degrades on duplicates; identical vectors are common
/// among same-schema siblings), its codes and members written as they come, the graph
/// over them when their codes pass `graph_above` bytes. Given up (`Ok(None)`, its
/// directory removed) once `cancel` is set. Returns the points, the parameters, and
/// each row's point.
///
/// Only the map from a code's digest to its point (about 25 bytes a distinct vector)
/// and each row's point (4 bytes) are kept; a graph, when one is built, holds its
/// points in memory (hnsw_rs keeps its own copy of each).
pub(super) fn write_spilled(
    dir: &Path,
    embedder: &str,
    generation: u64,
    rows: &Spill,
    graph_above: u64,
    cancel: &AtomicBool,
) -> Result<Option<(u64, GraphParams, Vec<u32>)>> {
    let io = |e| Error::io(dir.join(graph::VECTORS_DIR), e);
    let cancelled = || cancel.load(Ordering::Relaxed);
    if cancelled() {
        return Ok(None);
    }
    let dim = rows.common_dim();
    let params = GraphParams {
        m: M,
        ef_construction: EF_CONSTRUCTION,
    };
    let mut out = GenerationWriter::create(dir, generation, embedder, dim, params).map_err(io)?;
    // Keyed by half the digest: 128 bits make a collision among even billions of codes
    // a chance below 1e-20, and the map, the rebuild's largest part, is half the size.
    let mut ids: HashMap<[u8; 16], u32> = HashMap::new();
    let mut point_of: Vec<u32> = Vec::with_capacity(rows.rows() as usize);
    for (i, r) in rows.read().map_err(io)?.enumerate() {
        if i % graph::BUILD_CHUNK == 0 && cancelled() {
            let _ = out.abandon();
            return Ok(None);
        }
        let r = r.map_err(io)?;
        if r.vector.dim() != dim {
            point_of.push(NOT_HELD);
            continue;
        }
        let digest = blake3::hash(bytemuck::cast_slice(&r.vector.codes));
        let key: [u8; 16] = digest.as_bytes()[..16].try_into().expect("16 of 32 bytes");
        let id = match ids.get(&key) {
            Some(&id) => id,
            None => {
                let id = out.push_point(&r.vector).map_err(io)?;
                ids.insert(key, id);
                id
            }
        };
        out.push_member(&r.path, id).map_err(io)?;
        point_of.push(id);
    }
    drop(ids);
    let sealed = out.seal().map_err(io)?;
    let built = if sealed.code_bytes() > graph_above {
        let codes = sealed.codes().map_err(io)?;
        let points: Vec<&Code> = codes.iter().collect();
        let Some(built) = Graph::build_unless(&points, params, cancel) else {
            let _ = sealed.abandon();
            return Ok(None);
        };
        Some(built)
    } else if cancelled() {
        let _ = sealed.abandon();
        return Ok(None);
    } else {
        None
    };
    let points = sealed.points() as u64;
    sealed.finish(built.as_ref()).map_err(io)?;
    Ok(Some((points, params, point_of)))
}

/// The members of a built generation, read back from its spilled rows: what its swap
/// hands the catalog.
pub(super) struct SpilledMembers<'a> {
    pub(super) built: &'a BuiltGraph,
    /// The generation's codes, opened at the first call of [`MemberRows::code`].
    pub(super) codes: OnceCell<Option<crate::search::ann::dist::MappedCodes>>,
    pub(super) dir: &'a Path,
}

impl MemberRows for SpilledMembers<'_> {
    fn count(&self) -> u64 {
        self.built.files
    }

    fn for_each_member(&self, f: &mut dyn FnMut(u64, &KeyedVector) -> Result<()>) -> Result<()> {
        let io = |e| Error::io(graph::spill_path(self.dir, self.built.generation), e);
        let rows = self.built.rows.read().map_err(io)?;
        for (r, &point) in rows.zip(&self.built.point_of) {
            let r = r.map_err(io)?;
            if point != NOT_HELD {
                f(u64::from(point), &r)?;
            }
        }
        Ok(())
    }

    fn code(&self, point: u64) -> Option<Code> {
        self.codes
            .get_or_init(|| {
                let b = self.built;
                graph::open_codes(self.dir, b.generation, &b.embedder, b.points as usize)
                    .map_err(|why| tracing::warn!(generation = b.generation, "{why}"))
                    .ok()
            })
            .as_ref()?
            .code(usize::try_from(point).ok()?)
    }
}
