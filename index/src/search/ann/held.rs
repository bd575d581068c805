//! Reading back the vectors the catalog leaves to the current generation
//! (`catalog::held`): a row that holds a point is read from the codes of the generation
//! the same catalog snapshot names.

use super::dist::MappedCodes;
use super::{graph, GraphMeta, VectorMeta};
use crate::catalog::{CatalogReader, KeyedVector, Stored};
use crate::compact::Code;
use crate::error::Result;
use std::path::Path;

/// How much a reader trusts the codes it reads points from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Check {
    /// Sizes only, as a search maps them to scan (wrong bytes only misrank).
    Sizes,
    /// The digest too: a writer about to copy the vectors into a new generation or back
    /// into the catalog, where damage would outlive the generation.
    Digest,
}

/// The codes of the generation `cat` names, if it is of `embedder`: Err(why) when there
/// is none or it cannot be opened.
pub(super) fn current_codes(
    cat: &CatalogReader,
    dir: &Path,
    embedder: &str,
    check: Check,
) -> Result<std::result::Result<MappedCodes, String>> {
    let Some(g) = VectorMeta::load(cat)?.graph else {
        return Ok(Err("the catalog names no generation".into()));
    };
    if g.embedder != embedder {
        return Ok(Err(format!(
            "the generation holds vectors by {}",
            g.embedder
        )));
    }
    Ok(codes_of(dir, &g, check))
}

/// The codes of generation `g`, checked as `check` says.
pub(super) fn codes_of(
    dir: &Path,
    g: &GraphMeta,
    check: Check,
) -> std::result::Result<MappedCodes, String> {
    let codes = graph::open_codes(dir, g.generation, &g.embedder, g.points as usize);
    match check {
        Check::Sizes => codes,
        Check::Digest => codes.and_then(|c| graph::verify_codes(dir, g.generation).map(|_| c)),
    }
}

/// `rows` with every point read from `codes`, and how many points could not be read
/// (those rows are left out).
pub(super) fn resolve<T>(
    rows: Vec<(T, Stored)>,
    codes: Option<&MappedCodes>,
) -> (Vec<(T, Code)>, usize) {
    let mut unread = 0;
    let out = rows
        .into_iter()
        .filter_map(|(t, v)| match v {
            Stored::Code(c) => Some((t, c)),
            Stored::Point(id) => {
                let c = codes.and_then(|codes| codes.code(usize::try_from(id).ok()?));
                unread += usize::from(c.is_none());
                c.map(|c| (t, c))
            }
        })
        .collect();
    (out, unread)
}

/// Whether any of `rows` holds a point.
pub(super) fn any_point<T>(rows: &[(T, Stored)]) -> bool {
    rows.iter().any(|(_, v)| matches!(v, Stored::Point(_)))
}

/// [`resolve`] for keyed rows, the codes opened (as `check` says) only when a row holds
/// a point: (rows, points not read, why the codes could not be opened).
pub(super) fn resolve_keyed(
    cat: &CatalogReader,
    dir: &Path,
    embedder: &str,
    rows: Vec<KeyedVector<Stored>>,
    check: Check,
) -> Result<(Vec<KeyedVector>, usize)> {
    let rows: Vec<(KeyedVector<()>, Stored)> = rows
        .into_iter()
        .map(|mut k| {
            let v = std::mem::replace(&mut k.vector, Stored::Point(0));
            (k.with(()), v)
        })
        .collect();
    let (rows, unread) = resolve_rows(cat, dir, embedder, rows, check)?;
    Ok((rows.into_iter().map(|(k, c)| k.with(c)).collect(), unread))
}

/// [`resolve`], the codes opened (as `check` says) only when a row holds a point.
pub(super) fn resolve_rows<T>(
    cat: &CatalogReader,
    dir: &Path,
    embedder: &str,
    rows: Vec<(T, Stored)>,
    check: Check,
) -> Result<(Vec<(T, Code)>, usize)> {
    if !any_point(&rows) {
        return Ok(resolve(rows, None));
    }
    let codes = match current_codes(cat, dir, embedder, check)? {
        Ok(c) => Some(c),
        Err(why) => {
            tracing::warn!("vectors held by the vector generation cannot be read: {why}");
            None
        }
    };
    Ok(resolve(rows, codes.as_ref()))
}
