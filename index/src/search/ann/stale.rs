//! The current generation's tombstones and delta, found among the catalog's stale paths
//! ([`CatalogReader::stale_vectors`]) with the generation's own members: a member whose
//! file no longer has its point (changed, relinked or gone) is a tombstone; a file with a
//! vector the generation does not hold as it is now is in the delta.

use super::graph;
use super::members::Members;
use super::GraphMeta;
use crate::catalog::{CatalogReader, Stored};
use crate::error::Result;
use std::path::Path;

/// What changed since the generation was swapped in.
#[derive(Debug, Default)]
pub struct Staleness {
    /// Paths of members that no longer hold their file, in path order.
    pub tombstones: Vec<String>,
    /// Files the generation lacks, with their vector as stored, in path order.
    pub delta: Vec<(String, Stored)>,
}

/// The staleness of the generation whose `members` these are, by `embedder`, as the
/// snapshot `cat` has it. `Ok(Err(why))` when the members cannot be read (damage:
/// the generation is then not used, and the next refresh rebuilds it).
pub fn staleness(
    cat: &CatalogReader,
    embedder: &str,
    members: &Members,
) -> Result<std::result::Result<Staleness, String>> {
    let mut out = Staleness::default();
    for s in cat.stale_vectors(embedder)? {
        let point = match members.point_of(&s.path) {
            Ok(p) => p,
            Err(e) => return Ok(Err(e.to_string())),
        };
        let holds = point.is_some() && s.vector == point.map(Stored::Point);
        if holds {
            continue;
        }
        if point.is_some() {
            out.tombstones.push(s.path.clone());
        }
        if let Some(v) = s.vector {
            out.delta.push((s.path, v));
        }
    }
    Ok(Ok(out))
}

/// Generation `g`'s tombstones and delta, counted among the stale paths; None when its
/// members cannot be read.
pub fn counts(cat: &CatalogReader, dir: &Path, g: &GraphMeta) -> Result<Option<(u64, u64)>> {
    let Ok(members) = graph::open_members(dir, g.generation, &g.embedder, g.points as usize) else {
        return Ok(None);
    };
    Ok(staleness(cat, &g.embedder, &members)?
        .ok()
        .map(|s| (s.tombstones.len() as u64, s.delta.len() as u64)))
}
