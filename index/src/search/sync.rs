//! Keeping the search side true: after every index run, the full-text documents of the
//! paths marked stale are rewritten (one tantivy commit), and every description without
//! an embedding by the current embedder gets one. Stale marks are written in the same
//! catalog transaction as the file change and cleared only after the embeddings and the
//! text index commit, so a crash anywhere leaves work that the next run finishes. Last,
//! the vector graph is brought in step ([`super::ann::after_sync`]). A change of what the
//! documents hold ([`SEARCH_DOCS`]) redoes all of it once.

use super::ann::update::{GraphBuild, GraphJob, Refresh};
use super::doc;
use super::text::{TextDoc, TextIndex};
use crate::analyze::Description;
use crate::catalog::{CatalogWriter, FileRow, Hash, MetaKey};
use crate::embed::Embedder;
use crate::error::Result;
use rayon::prelude::*;
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// Name of the full-text index directory inside the index directory.
pub const TEXT_DIR: &str = "text";
/// Version of what the search side holds of a file: its full-text document and the
/// text its embedding is made from ([`doc`]). Raise it with any change to either; a
/// catalog that records another one rewrites every document and re-embeds every
/// description on its next sync, rather than searching a mix of old and new.
/// (2: a data file's document holds its lookups' labels among its values.)
pub const SEARCH_DOCS: &str = "2";
/// Paths per text-index commit, and per read of the stale paths (a handful in unit
/// tests, so that their syncs go through many chunks).
const CHUNK: usize = if cfg!(test) { 3 } else { 2000 };
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

/// The text-index document of a catalog row and its description, with the line its
/// collection adds (`siblings`: the members' names) and the labels of its lookups among
/// its values (`labels`: what its codes mean) — neither embedded, since they say
/// nothing of this file's own content.
fn document(
    row: &FileRow,
    desc: Option<&Description>,
    semantic: Option<&str>,
    siblings: Option<&str>,
    labels: Vec<String>,
) -> TextDoc {
    let (columns, mut values, mut text) = match (desc, semantic) {
        (Some(d), Some(t)) => (doc::names(d), doc::values(d), t.to_string()),
        _ => (
            Vec::new(),
            Vec::new(),
            format!(
                "{} — {}",
                row.path,
                row.error.as_deref().unwrap_or("unreadable")
            ),
        ),
    };
    if let Some(s) = siblings {
        text.push('\n');
        text.push_str(s);
    }
    values.extend(labels);
    TextDoc {
        path: row.path.clone(),
        format: row.format.as_str().to_string(),
        columns,
        values,
        text,
        time_start: row.time.as_ref().map(|t| t.start.clone()),
        time_end: row.time.as_ref().map(|t| t.end.clone()),
    }
}

/// Embed `items` (description key, semantic text) in parallel batches and store them.
fn embed_and_store(
    cat: &mut CatalogWriter,
    embedder: &dyn Embedder,
    id: &str,
    items: Vec<((Hash, String), String)>,
) -> Result<usize> {
    if items.is_empty() {
        return Ok(0);
    }
    let refs: Vec<&str> = items.iter().map(|(_, t)| t.as_str()).collect();
    // Embedding is the costly part of a first sync: spread it over the cores.
    let vectors: Vec<Vec<f32>> = refs
        .par_chunks(EMBED_BATCH)
        .map(|c| embedder.embed(c))
        .collect::<std::result::Result<Vec<_>, _>>()?
        .into_iter()
        .flatten()
        .collect();
    let stored: Vec<_> = items
        .into_iter()
        .zip(vectors)
        .map(|(((h, a), _), v)| (h, a, v))
        .collect();
    cat.put_embeddings(id, &stored)?;
    Ok(stored.len())
}

/// Bring the full-text index and the embeddings of the index at `dir` up to date.
///
/// Each stale path's description is decoded once and serves both its document and, when
/// missing, its embedding; embeddings of a chunk are stored before its stale marks are
/// cleared, so that "no mark and the same embedder" means "nothing to do".
pub fn sync(
    cat: &mut CatalogWriter,
    dir: &Path,
    embedder: &dyn Embedder,
    spec: &str,
) -> Result<SyncReport> {
    let (report, job) = sync_with(cat, dir, &mut None, embedder, spec, GraphBuild::Inline)?;
    debug_assert!(job.is_none(), "an inline refresh builds its graph itself");
    Ok(report)
}

/// [`sync`] with the text index kept by the caller between syncs (`None`: opened here
/// and left in `text`). A writer that lives on merges the segments that many small
/// commits make (one per `watch` batch); one dropped after each commit never does, and
/// the segments pile up. The vector graph is refreshed as `graph` says: a rebuild it
/// defers comes back as a [`GraphJob`] for the caller to run.
pub fn sync_with(
    cat: &mut CatalogWriter,
    dir: &Path,
    text: &mut Option<TextIndex>,
    embedder: &dyn Embedder,
    spec: &str,
    graph: GraphBuild,
) -> Result<(SyncReport, Option<GraphJob>)> {
    let mut report = SyncReport::default();
    let text_dir = dir.join(TEXT_DIR);
    if !text_dir.join("meta.json").is_file() {
        cat.mark_all_search_dirty()?;
    }
    let docs_current = cat.meta(MetaKey::SearchDocsVersion)?.as_deref() == Some(SEARCH_DOCS);
    if !docs_current {
        // Marks and deletions are redone by the next sync if this one stops early: the
        // version is recorded last.
        cat.mark_all_search_dirty()?;
        cat.drop_embeddings()?;
    }
    // A generation lost since the last run takes the vectors the catalog left to it
    // (`catalog::held`); those, and any a refresh gave up, are looked for among every
    // file's (not only the changed ones') and embedded again.
    super::ann::update::give_up_lost(cat, dir)?;
    let rescan = cat.vectors_missing()?;
    let dirty = cat.search_dirty_count()?;
    let id = embedder.id();
    let same_embedder =
        docs_current && cat.meta(MetaKey::Embedder)?.as_deref() == Some(id.as_str());
    if dirty == 0 && same_embedder && !rescan {
        let r = super::ann::update::check_as(cat, dir, &id, super::ann::exact_below(), graph)?;
        return Ok((report, pending(cat, r, graph)?));
    }
    let counted = super::ann::update::begin(cat)?;

    let text = match text {
        Some(t) => t,
        None => text.insert(TextIndex::open(&text_dir)?),
    };
    // Collection id → the line its members' documents carry.
    let mut sibling_text: HashMap<String, Option<String>> = HashMap::new();
    // A chunk of the stale paths at a time, never all of them (a million at a first
    // index): each chunk's descriptions that lack an embedding are looked up with it
    // (one embedded by an earlier chunk is found), and the few it could not embed
    // from its paths are embedded by their keys at the end.
    let mut leftover: HashSet<(Hash, String)> = HashSet::new();
    let mut after: Option<String> = None;
    loop {
        let chunk = cat.search_dirty_after(after.as_deref(), CHUNK)?;
        let Some(last) = chunk.last() else {
            break;
        };
        after = Some(last.clone());
        let mut missing: HashSet<(Hash, String)> = cat
            .missing_embeddings_for(&id, &chunk)?
            .into_iter()
            .collect();
        let mut upserts = Vec::new();
        let mut removed = Vec::new();
        let mut to_embed = Vec::new();
        for p in &chunk {
            let Some(row) = cat.file(p)? else {
                removed.push(p.clone());
                continue;
            };
            let key = row.hash.zip(row.analyzer.clone());
            // With its companion links applied: documented column names are searched.
            let desc = cat.file_description(&row)?;
            let semantic = desc.as_ref().map(doc::semantic_text);
            if let (Some(k), Some(t)) = (key, &semantic) {
                if missing.remove(&k) {
                    to_embed.push((k, t.clone()));
                }
            }
            let siblings = match cat.collection_of(p)? {
                Some(id) => match sibling_text.get(&id) {
                    Some(t) => t.clone(),
                    None => {
                        let t = cat
                            .collection(&id)?
                            .and_then(|c| crate::collect::siblings::search_text(&c));
                        sibling_text.insert(id, t.clone());
                        t
                    }
                },
                None => None,
            };
            let labels = cat
                .lookups_of(p)?
                .into_iter()
                .flat_map(|l| l.labels)
                .collect();
            upserts.push(document(
                &row,
                desc.as_ref(),
                semantic.as_deref(),
                siblings.as_deref(),
                labels,
            ));
        }
        leftover.extend(missing);
        report.embedded += embed_and_store(cat, embedder, &id, to_embed)?;
        text.update(&upserts, &removed)?;
        cat.clear_search_dirty(&chunk)?;
        report.documents += upserts.len();
        report.removed += removed.len();
    }

    // Descriptions of unchanged files a new embedder has not seen yet (or any the
    // catalog has lost), and the chunks' leftovers.
    let leftover = if !same_embedder || rescan {
        cat.missing_embeddings(&id)?
    } else {
        // A later chunk may have embedded one of them.
        cat.keys_without_embedding(&id, leftover.into_iter().collect())?
    };
    report.embedded += embed_keys(cat, embedder, &id, leftover)?;
    cat.set_meta(MetaKey::Embedder, &id)?;
    cat.set_meta(MetaKey::EmbedderSpec, spec)?;
    cat.set_meta(MetaKey::SearchDocsVersion, SEARCH_DOCS)?;
    if rescan {
        cat.clear_vectors_missing()?;
    }
    // Same embedder: only the stale paths' vectors changed, which bounds the graph's
    // tombstones and delta without counting them.
    let changed = (counted && same_embedder && !rescan).then_some(dirty);
    let mut r =
        super::ann::update::refresh_as(cat, dir, &id, super::ann::exact_below(), changed, graph)?;
    if cat.vectors_missing()? {
        // The refresh found the generation damaged and gave its vectors up: embedded
        // again now, the refresh finishes in this run.
        report.embedded += embed_keys(cat, embedder, &id, cat.missing_embeddings(&id)?)?;
        cat.clear_vectors_missing()?;
        r = super::ann::update::refresh_as(cat, dir, &id, super::ann::exact_below(), None, graph)?;
    }
    Ok((report, pending(cat, r, graph)?))
}

/// Embed the descriptions of these keys (of files whose documents are not rewritten)
/// and store them. A linked file's content is embedded as shown, documented names
/// included.
fn embed_keys(
    cat: &mut CatalogWriter,
    embedder: &dyn Embedder,
    id: &str,
    keys: Vec<(Hash, String)>,
) -> Result<usize> {
    if keys.is_empty() {
        return Ok(0);
    }
    let linked = cat.linked_files_by_key()?;
    let mut embedded = 0;
    for chunk in keys.chunks(1024) {
        let mut items = Vec::with_capacity(chunk.len());
        for (h, a) in chunk {
            let d = match linked.get(&(*h, a.clone())) {
                Some(row) => cat.file_description(row)?,
                None => cat.description(h, a)?,
            };
            if let Some(d) = d {
                items.push(((*h, a.clone()), doc::semantic_text(&d)));
            }
        }
        embedded += embed_and_store(cat, embedder, id, items)?;
    }
    Ok(embedded)
}

/// The graph job a refresh leaves to the caller: a rebuild it defers; anything else
/// is finished here.
fn pending(cat: &mut CatalogWriter, r: Refresh, graph: GraphBuild) -> Result<Option<GraphJob>> {
    match (r, graph) {
        (Refresh::Build(job), GraphBuild::Deferred { .. }) => Ok(Some(job)),
        (r, _) => super::ann::update::inline(cat, r).map(|_| None),
    }
}
