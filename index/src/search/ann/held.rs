//! Reading back the vectors the catalog leaves to the current generation
//! (`catalog::held`): a row that holds a point is read from the codes of the generation
//! the same catalog snapshot names.

use super::dist::MappedCodes;
use super::{graph, GraphMeta, VectorMeta};
use crate::catalog::{CatalogReader, KeyedVector, Stored};
use crate::compact::Code;
use crate::error::Result;
use std::cell::OnceCell;
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
    let resolver = Resolver::new(cat, dir, embedder, check);
    let mut unread = 0;
    let mut out = Vec::with_capacity(rows.len());
    for (t, v) in rows {
        match resolver.code(v)? {
            Some(c) => out.push((t, c)),
            None => unread += 1,
        }
    }
    Ok((out, unread))
}

/// Rows' vectors as codes, a row at a time: a point is read from the codes of the
/// generation the catalog names, opened (as `check` says) at the first point asked for.
pub(super) struct Resolver<'a> {
    cat: &'a CatalogReader,
    dir: &'a Path,
    embedder: &'a str,
    check: Check,
    codes: OnceCell<Option<MappedCodes>>,
}

impl<'a> Resolver<'a> {
    pub(super) fn new(
        cat: &'a CatalogReader,
        dir: &'a Path,
        embedder: &'a str,
        check: Check,
    ) -> Resolver<'a> {
        Resolver {
            cat,
            dir,
            embedder,
            check,
            codes: OnceCell::new(),
        }
    }

    /// The code a row stores, or the one its point stands for; `None` when the point
    /// cannot be read (a warning says why the codes could not be opened, once).
    pub(super) fn code(&self, v: Stored) -> Result<Option<Code>> {
        let id = match v {
            Stored::Code(c) => return Ok(Some(c)),
            Stored::Point(id) => id,
        };
        let codes = match self.codes.get() {
            Some(c) => c,
            None => {
                let opened = current_codes(self.cat, self.dir, self.embedder, self.check)?
                    .map_err(|why| {
                        tracing::warn!(
                            "vectors held by the vector generation cannot be read: {why}"
                        )
                    })
                    .ok();
                self.codes.get_or_init(|| opened)
            }
        };
        Ok(codes
            .as_ref()
            .and_then(|c| c.code(usize::try_from(id).ok()?)))
    }
}
