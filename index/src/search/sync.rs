//! Keeping the search side true: after every index run, the full-text documents of the
//! paths marked stale are rewritten (one tantivy commit), and every description without
//! an embedding by the current embedder gets one. Stale marks are written in the same
//! catalog transaction as the file change and cleared only after the text index commit,
//! so a crash anywhere leaves work that the next run finishes.

use super::doc;
use super::text::{TextDoc, TextIndex};
use crate::catalog::Catalog;
use crate::embed::Embedder;
use crate::error::{InternalError, Result};
use rayon::prelude::*;
use std::path::Path;

/// Name of the full-text index directory inside the index directory.
pub const TEXT_DIR: &str = "text";
/// Catalog meta key recording the embedder of the stored vectors (its id).
pub const EMBEDDER_META: &str = "embedder";
/// Catalog meta key recording how to build that embedder again (its spec).
pub const EMBEDDER_SPEC_META: &str = "embedder_spec";
/// Paths per text-index commit.
const CHUNK: usize = 2000;
/// Texts per embedder call (calls run in parallel).
const EMBED_BATCH: usize = 32;

/// What a sync did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct SyncReport {
    /// Documents written.
    pub documents: usize,
    /// Documents removed.
    pub removed: usize,
    /// Descriptions embedded.
    pub embedded: usize,
}

fn search_err(e: impl std::fmt::Display) -> crate::Error {
    InternalError::Search(e.to_string()).into()
}

/// The text-index document of one catalog row, or None when the path is gone.
fn document(cat: &Catalog, path: &str) -> Result<Option<TextDoc>> {
    let Some(row) = cat.file(path)? else {
        return Ok(None);
    };
    let desc = match (&row.hash, &row.analyzer) {
        (Some(h), Some(a)) => cat.description(h, a)?,
        _ => None,
    };
    let (columns, values, text) = match &desc {
        Some(d) => (doc::names(d), doc::values(d), doc::semantic_text(d)),
        None => (
            Vec::new(),
            Vec::new(),
            format!("{path} — {}", row.error.as_deref().unwrap_or("unreadable")),
        ),
    };
    Ok(Some(TextDoc {
        path: row.path.clone(),
        format: row.format.as_str().to_string(),
        columns,
        values,
        text,
        time_start: row.time.as_ref().map(|t| t.start.clone()),
        time_end: row.time.as_ref().map(|t| t.end.clone()),
    }))
}

/// Bring the full-text index and the embeddings of the index at `dir` up to date.
pub fn sync(
    cat: &mut Catalog,
    dir: &Path,
    embedder: &dyn Embedder,
    spec: &str,
) -> Result<SyncReport> {
    let mut report = SyncReport::default();
    let text_dir = dir.join(TEXT_DIR);
    if !text_dir.join("meta.json").is_file() {
        cat.mark_all_search_dirty()?;
    }
    let dirty = cat.search_dirty()?;
    let id = embedder.id();
    // Invariant: with no stale mark and the same embedder, every description has its
    // embedding (embeddings are written before marks are cleared). A no-change run
    // therefore costs two small reads, not a join over every file.
    let same_embedder = cat.meta(EMBEDDER_META)?.as_deref() == Some(id.as_str());
    if dirty.is_empty() && same_embedder {
        return Ok(report);
    }
    // Same embedder: only the changed paths can lack an embedding.
    let missing = if same_embedder {
        cat.missing_embeddings_for(&id, &dirty)?
    } else {
        cat.missing_embeddings(&id)?
    };
    for chunk in missing.chunks(1024) {
        let mut texts = Vec::with_capacity(chunk.len());
        for (h, a) in chunk {
            // Path-free text: embeddings are cached by description, shared by copies.
            let t = match cat.description(h, a)? {
                Some(d) => doc::semantic_text(&d),
                None => String::new(),
            };
            texts.push(t);
        }
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        // Embedding is the costly part of a first sync: spread it over the cores.
        let vectors: Vec<Vec<f32>> = refs
            .par_chunks(EMBED_BATCH)
            .map(|c| embedder.embed(c))
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(search_err)?
            .into_iter()
            .flatten()
            .collect();
        let items: Vec<_> = chunk
            .iter()
            .zip(vectors)
            .map(|((h, a), v)| (*h, a.clone(), v))
            .collect();
        cat.put_embeddings(&id, &items)?;
        report.embedded += items.len();
    }
    let mut text = TextIndex::open(&text_dir).map_err(search_err)?;
    for chunk in dirty.chunks(CHUNK) {
        let mut upserts = Vec::new();
        let mut removed = Vec::new();
        for p in chunk {
            match document(cat, p)? {
                Some(d) => upserts.push(d),
                None => removed.push(p.clone()),
            }
        }
        text.update(&upserts, &removed).map_err(search_err)?;
        cat.clear_search_dirty(chunk)?;
        report.documents += upserts.len();
        report.removed += removed.len();
    }
    cat.set_meta(EMBEDDER_META, &id)?;
    cat.set_meta(EMBEDDER_SPEC_META, spec)?;
    Ok(report)
}
