//! The rebuild's streaming steps: the snapshot's rows spilled as the catalog is read
//! ([`spill_rows`]), the generation written from the spill ([`write_spilled`]), and the
//! spill read back as the swap's members ([`SpilledMembers`]).

use super::BuiltGraph;
use crate::catalog::{CatalogWriter, KeyedVector, MemberRows, Stored};
use crate::compact::Code;
use crate::error::{Error, Result};
use crate::search::ann::graph::{self, GenerationWriter, GraphParams};
use crate::search::ann::held::{Check, Resolver};
use crate::search::ann::spill::{Spill, SpillWriter};
use crate::search::ann::{EF_CONSTRUCTION, M};
use crate::spool::{Record, Sorted, Sorter};
use std::cell::OnceCell;
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

/// Write generation `generation` from the spilled `rows`: one point per distinct vector
/// (HNSW degrades on duplicates; identical vectors are common among same-schema
/// siblings), numbered in the order of their first row, as an in-memory map from code
/// to point would number them; its codes and members written in path order; the graph
/// over them when their codes pass `graph_above` bytes. Given up (`Ok(None)`, its
/// directory removed) once `cancel` is set. Returns the points, the parameters and the
/// files held.
///
/// Its memory is bounded by `run` (beyond, external sorts on disk, in the generation's
/// directory): the distinct vectors are found by three sorts of small records instead
/// of a map from each code's digest to its point, which held about 25 bytes a distinct
/// vector, and each row's point is read back from the members file by the swap
/// ([`SpilledMembers`]) instead of kept. A graph, when one is built, holds its points
/// in memory all the same (hnsw_rs keeps its own copy of each).
pub(super) fn write_spilled(
    dir: &Path,
    embedder: &str,
    generation: u64,
    rows: &Spill,
    graph_above: u64,
    run: usize,
    cancel: &AtomicBool,
) -> Result<Option<(u64, GraphParams, u64)>> {
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
    let mut out =
        GenerationWriter::create(dir, generation, embedder, dim, params, run).map_err(io)?;
    let Some(points_of) = point_of_rows(rows, dim, out.dir(), run, cancel).map_err(io)? else {
        let _ = out.abandon();
        return Ok(None);
    };
    let mut points_of = points_of.peekable();
    let mut files = 0;
    for (i, r) in rows.read().map_err(io)?.enumerate() {
        if i % graph::BUILD_CHUNK == 0 && cancelled() {
            let _ = out.abandon();
            return Ok(None);
        }
        let r = r.map_err(io)?;
        let row = i as u32;
        // A row of another dimension has no point (and no entry).
        let point = match points_of.peek() {
            None => continue,
            Some(Ok((at, _))) if *at != row => continue,
            Some(_) => points_of.next().expect("peeked").map_err(io)?.1,
        };
        // Points are numbered by their first row: a new one is the next to write.
        match (point as usize).cmp(&out.points()) {
            std::cmp::Ordering::Less => {}
            std::cmp::Ordering::Equal => {
                out.push_point(&r.vector).map_err(io)?;
            }
            std::cmp::Ordering::Greater => {
                let _ = out.abandon();
                return Err(io(changed()));
            }
        }
        out.push_member(&r.path, point).map_err(io)?;
        files += 1;
    }
    if points_of.next().is_some() {
        let _ = out.abandon();
        return Err(io(changed()));
    }
    // Its files and last run are not needed through the graph's build.
    drop(points_of);
    let sealed = out.seal().map_err(io)?;
    let built = if sealed.code_bytes() > graph_above {
        let Some(built) = sealed.build_graph(params, cancel).map_err(io)? else {
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
    Ok(Some((points, params, files)))
}

/// The spill or the sorts' files read back other than written.
fn changed() -> std::io::Error {
    std::io::Error::other("the spilled rows changed while read")
}

/// Each held row's point (its index among the spilled rows, and the point), in row
/// order: rows of another dimension than `dim` are left out. A point is numbered by its
/// first row, so that the points come in the order of the rows that first hold them.
/// Three external sorts of `run` items at a time, in `tmp`: by half the code's digest
/// (the rows of one vector together), by the vector's first row (the points in order),
/// by row. `None` once `cancel` is set.
fn point_of_rows(
    rows: &Spill,
    dim: usize,
    tmp: &Path,
    run: usize,
    cancel: &AtomicBool,
) -> std::io::Result<Option<Sorted<(u32, u32)>>> {
    if rows.rows() > u64::from(u32::MAX) {
        return Err(std::io::Error::other("too many files for one generation"));
    }
    let cancelled = || cancel.load(Ordering::Relaxed);
    // Keyed by half the digest: 128 bits make a collision among even billions of codes
    // a chance below 1e-20, and the sort's records are smaller.
    let mut by_code: Sorter<([u8; 16], u32)> = Sorter::new(Some(tmp), run);
    for (r, row) in rows.read()?.zip(0u32..) {
        if (row as usize).is_multiple_of(graph::BUILD_CHUNK) && cancelled() {
            return Ok(None);
        }
        let r = r?;
        if r.vector.dim() == dim {
            let digest = blake3::hash(bytemuck::cast_slice(&r.vector.codes));
            let key: [u8; 16] = digest.as_bytes()[..16].try_into().expect("16 of 32 bytes");
            by_code.push((key, row))?;
        }
    }
    // (first row of the vector, row): the rows of a vector sort after its first.
    let mut by_first: Sorter<(u32, u32)> = Sorter::new(Some(tmp), run);
    let mut last: Option<([u8; 16], u32)> = None;
    let done = each_unless(by_code.finish(), cancel, |(key, row)| {
        let first = match last {
            Some((k, first)) if k == key => first,
            _ => row,
        };
        last = Some((key, first));
        by_first.push((first, row))
    })?;
    if !done {
        return Ok(None);
    }
    let mut by_row: Sorter<(u32, u32)> = Sorter::new(Some(tmp), run);
    let mut point: Option<(u32, u32)> = None;
    let done = each_unless(by_first.finish(), cancel, |(first, row)| {
        let p = match point {
            Some((f, p)) if f == first => p,
            Some((_, p)) => p + 1,
            None => 0,
        };
        point = Some((first, p));
        by_row.push((row, p))
    })?;
    if !done {
        return Ok(None);
    }
    Ok(Some(by_row.finish()))
}

/// Call `f` on each item of `sorted`, reading `cancel` every [`graph::BUILD_CHUNK`]
/// items: whether every item was seen (`false`: cancelled).
fn each_unless<T: Record + Ord>(
    sorted: Sorted<T>,
    cancel: &AtomicBool,
    mut f: impl FnMut(T) -> std::io::Result<()>,
) -> std::io::Result<bool> {
    for (n, item) in sorted.enumerate() {
        if n.is_multiple_of(graph::BUILD_CHUNK) && cancel.load(Ordering::Relaxed) {
            return Ok(false);
        }
        f(item?)?;
    }
    Ok(true)
}

/// The members of a built generation, read back from its spilled rows, each row's point
/// from the generation's members file: what its swap hands the catalog.
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
        let b = self.built;
        let io = |e| Error::io(graph::spill_path(self.dir, b.generation), e);
        // Needs the generation just written, beside the spill.
        let gen_err = |why: String| {
            let dir = graph::generation_dir(self.dir, b.generation);
            Error::io(dir, std::io::Error::other(why))
        };
        let members = graph::open_members(self.dir, b.generation, &b.embedder, b.points as usize)
            .map_err(gen_err)?;
        if members.len() as u64 != b.files {
            return Err(gen_err("its members are not the spilled rows".into()));
        }
        // The rows of the common dimension are the members, in the same (path) order.
        let dim = b.rows.common_dim();
        let mut ord = 0;
        for r in b.rows.read().map_err(io)? {
            let r = r.map_err(io)?;
            if r.vector.dim() != dim {
                continue;
            }
            let point = members.point_at(ord).ok_or_else(|| {
                io(std::io::Error::other(
                    "the generation's members are not its rows",
                ))
            })?;
            ord += 1;
            f(u64::from(point), &r)?;
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
