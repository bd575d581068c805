//! Regrouping the collections of the templates marked dirty by [`CatalogWriter::apply`],
//! a template folder at a time, holding the folder's collections in memory rather than
//! its files: a template of dated folders (`logs/{n}/{n}/app-{n}.log`) can span most of
//! a lake.
//!
//! Two reads of each template folder's files:
//! 1. by template, then path: each template's numeric collections are built from their
//!    members as they come ([`collect::Builder`]), and the old collections are noted;
//! 2. by path: each file is linked to its numeric collection, or, when none holds it,
//!    set aside with the others of its folder until the folder ends, when its word-named
//!    siblings are grouped ([`collect::siblings::group`]) and linked.
//!
//! Together they give what grouping the folder's files at once gives (the tests hold
//! them to `collect::at_once`).

use super::collections::{decode, entry_and_collection, set_longest};
use super::companions::folder_of;
use super::{digest, CatalogWriter};
use crate::collect::{self, Builder, Collection, Entry};
use crate::error::{Error, Result};
use rusqlite::{params, CachedStatement, OptionalExtension};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::Path;

/// Templates per read of those to regroup (a handful in unit tests, so that they cross
/// chunk boundaries).
const TEMPLATES_CHUNK: usize = if cfg!(test) { 3 } else { 2000 };

/// Values of one placeholder held in memory before they are sorted in a file, to count
/// the distinct ones (a handful in unit tests, so that they do).
const PART_VALUES_RUN: usize = if cfg!(test) { 3 } else { 65_536 };

/// The files whose templates lie directly in a folder (`?1`; the `_AT_ROOT` statements
/// are the root's): the unit of regrouping. A numeric collection lies within one
/// template and a word collection within one folder, and both within one template
/// folder. In template order, then path order (the template's text last).
///
/// CROSS JOIN keeps `templates` the outer loop: its index by text gives the template
/// order and `files_template` each template's files in path order, so the rows come
/// without a sort.
const BY_TEMPLATE: &str = "SELECT f.path, f.format, f.schema, f.size,
         f.time_start, f.time_end, f.collection, t.template
     FROM templates t CROSS JOIN files f ON f.template = t.id
     WHERE t.template >= ?1 || '/' AND t.template < ?1 || '0'
         AND instr(substr(t.template, length(?1) + 2), '/') = 0
     ORDER BY t.template, f.path";
const BY_TEMPLATE_AT_ROOT: &str = "SELECT f.path, f.format, f.schema, f.size,
         f.time_start, f.time_end, f.collection, t.template
     FROM templates t CROSS JOIN files f ON f.template = t.id
     WHERE instr(t.template, '/') = 0
     ORDER BY t.template, f.path";
/// The same files in path order.
const IN_FOLDER: &str = "SELECT path, format, schema, size, time_start, time_end, collection
     FROM files WHERE template IN (SELECT id FROM templates
         WHERE template >= ?1 || '/' AND template < ?1 || '0'
         AND instr(substr(template, length(?1) + 2), '/') = 0) ORDER BY path";
const AT_ROOT: &str = "SELECT path, format, schema, size, time_start, time_end, collection
     FROM files WHERE template IN (SELECT id FROM templates WHERE instr(template, '/') = 0)
     ORDER BY path";

/// A numeric collection's key: its template's text, format and schema.
type Key = (String, String, String);

/// A collection made by this regrouping: its id, and the search text its members'
/// documents carry ([`collect::siblings::search_text`]).
type Made = (String, Option<String>);

/// A numeric collection with its members' schema digest (part of its key, which the
/// collection does not keep).
type Schemed = (String, Collection);

/// The statements one regrouping runs, prepared once.
struct Writes<'t> {
    detail: CachedStatement<'t>,
    drop_old: CachedStatement<'t>,
    insert: CachedStatement<'t>,
    link: CachedStatement<'t>,
    stale: CachedStatement<'t>,
}

impl Writes<'_> {
    /// Store the collection `c` and add it to `made`; returns its index there.
    fn insert(&mut self, c: &Collection, made: &mut Vec<Made>) -> Result<usize> {
        let detail = serde_json::to_string(c).map_err(|e| Error::serialize("collection", e))?;
        self.insert.execute(params![
            digest::to_sql(&c.id),
            c.template,
            c.format,
            c.members as i64,
            c.time_start,
            c.time_end,
            detail
        ])?;
        made.push((c.id.clone(), collect::siblings::search_text(c)));
        Ok(made.len() - 1)
    }

    /// The search text of the old collection `id`, which then goes.
    fn take_old(&mut self, id: &str) -> Result<Option<String>> {
        let d: Option<String> = self
            .detail
            .query_row([digest::to_sql(id)], |r| r.get(0))
            .optional()?;
        let text = d
            .map(|d| decode(&d))
            .transpose()?
            .and_then(|c| collect::siblings::search_text(&c));
        self.drop_old.execute([digest::to_sql(id)])?;
        Ok(text)
    }

    /// Link the file `e`, in the collection `old` until now, to `new` (none: to no
    /// collection); mark it stale for search when the text its collection gives its
    /// document changed (`before`: each old collection's).
    fn link(
        &mut self,
        e: &Entry,
        old: Option<String>,
        new: Option<&Made>,
        before: &HashMap<String, Option<String>>,
    ) -> Result<()> {
        let new_id = new.map(|(id, _)| id);
        if old.as_ref() != new_id {
            self.link.execute(params![
                e.path,
                digest::opt_to_sql(new_id.map(String::as_str))
            ])?;
        }
        let old_text = old.and_then(|id| before.get(&id).cloned().flatten());
        if old_text.as_ref() != new.and_then(|(_, t)| t.as_ref()) {
            self.stale.execute([&e.path])?;
        }
        Ok(())
    }
}

/// The first read of a template folder: its numeric collections, each with its schema,
/// and the ids of the collections its files belonged to.
fn numeric_collections(
    rows: &mut rusqlite::Rows<'_>,
    spill: &Path,
) -> Result<(Vec<Schemed>, HashSet<String>)> {
    let spilled = |e: std::io::Error| Error::io(spill, e);
    let mut out = Vec::new();
    let mut old = HashSet::new();
    // The collections being built: those of the current template, unless a file's
    // template in the catalog differs from the one its path gives now.
    let mut live: BTreeMap<Key, Builder> = BTreeMap::new();
    let mut current = String::new();
    let mut finish = |b: Builder, schema: String| -> Result<()> {
        if let Some(c) = b.finish().map_err(spilled)? {
            out.push((schema, c));
        }
        Ok(())
    };
    while let Some(r) = rows.next()? {
        let (e, was) = entry_and_collection(r)?;
        let stored: String = r.get(7)?;
        if stored != current {
            // The template before is complete.
            let (done, rest): (BTreeMap<Key, Builder>, _) = std::mem::take(&mut live)
                .into_iter()
                .partition(|((t, ..), _)| *t == current);
            live = rest;
            for ((.., schema), b) in done {
                finish(b, schema)?;
            }
            current = stored;
        }
        old.extend(was);
        let t = collect::template(&e.path);
        if t.parts.is_empty() {
            continue;
        }
        let key = (t.text, e.format.clone(), e.schema.clone());
        let b = live
            .entry(key)
            .or_insert_with_key(|(text, format, schema)| {
                Builder::new(text, format, schema, Some(spill), PART_VALUES_RUN)
            });
        b.add(&e, &t.parts).map_err(spilled)?;
    }
    for ((.., schema), b) in live {
        finish(b, schema)?;
    }
    Ok((out, old))
}

/// Group the word-named siblings among `left` (the files of one folder that no numeric
/// collection holds, in path order), store their collections and link every file of
/// `left`, which is emptied.
fn link_siblings(
    w: &mut Writes<'_>,
    left: &mut Vec<(Entry, Option<String>)>,
    made: &mut Vec<Made>,
    before: &HashMap<String, Option<String>>,
) -> Result<()> {
    let grouped = {
        let refs: Vec<&Entry> = left.iter().map(|(e, _)| e).collect();
        collect::siblings::group(&refs)
    };
    let mut now: HashMap<&str, usize> = HashMap::new();
    for (c, members) in &grouped {
        let i = w.insert(c, made)?;
        for m in members {
            now.insert(m, i);
        }
    }
    for (e, old) in left.drain(..) {
        let new = now.get(e.path.as_str()).map(|&i| &made[i]);
        w.link(&e, old, new, before)?;
    }
    Ok(())
}

impl CatalogWriter {
    /// Regroup the collections of the folders of every template whose files changed, in
    /// one transaction; returns how many templates were regrouped. A file whose
    /// collection's search text ([`collect::siblings::search_text`]) changed is marked
    /// stale for search, so that the sync after it rewrites its document.
    pub fn refresh_collections(&mut self) -> Result<usize> {
        let spill = self.reader.dir.clone();
        let tx = self.reader.conn.transaction()?;
        // The templates' folders, read a chunk of templates at a time: templates can be
        // nearly one per file (a lake of unique names), their folders are far fewer.
        let mut templates = 0;
        let mut folders: BTreeSet<String> = BTreeSet::new();
        {
            // `template > ''` for the first page: a template, made from a path, is never
            // empty.
            let mut page = tx.prepare(
                "SELECT template FROM dirty_templates WHERE template > ?1
                 ORDER BY template LIMIT ?2",
            )?;
            let mut after = String::new();
            loop {
                let chunk: Vec<String> = page
                    .query_map(params![after, TEMPLATES_CHUNK as i64], |r| r.get(0))?
                    .collect::<rusqlite::Result<_>>()?;
                let Some(last) = chunk.last() else {
                    break;
                };
                templates += chunk.len();
                for t in &chunk {
                    let f = folder_of(t);
                    if !folders.contains(f) {
                        folders.insert(f.to_string());
                    }
                }
                after = last.clone();
            }
        }
        {
            let mut by_template = tx.prepare_cached(BY_TEMPLATE)?;
            let mut by_template_at_root = tx.prepare_cached(BY_TEMPLATE_AT_ROOT)?;
            let mut in_folder = tx.prepare_cached(IN_FOLDER)?;
            let mut at_root = tx.prepare_cached(AT_ROOT)?;
            let mut w = Writes {
                detail: tx.prepare_cached("SELECT detail FROM collections WHERE id = ?1")?,
                drop_old: tx.prepare_cached("DELETE FROM collections WHERE id = ?1")?,
                insert: tx.prepare_cached(
                    "INSERT OR REPLACE INTO collections(id, template, format, members, time_start, time_end, detail)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                )?,
                link: tx.prepare_cached("UPDATE files SET collection = ?2 WHERE path = ?1")?,
                stale: tx.prepare_cached("INSERT OR IGNORE INTO search_dirty(path) VALUES (?1)")?,
            };
            for f in &folders {
                let (numeric, old) = {
                    let mut rows = if f.is_empty() {
                        by_template_at_root.query([])?
                    } else {
                        by_template.query([f])?
                    };
                    numeric_collections(&mut rows, &spill)?
                };
                // The search text of each old collection, before it goes.
                let mut before: HashMap<String, Option<String>> = HashMap::new();
                for id in old {
                    let text = w.take_old(&id)?;
                    before.insert(id, text);
                }
                let mut made: Vec<Made> = Vec::new();
                // Each numeric collection's index in `made`, by template text, then by
                // (format, schema).
                let mut numeric_of: HashMap<String, Vec<(String, String, usize)>> = HashMap::new();
                for (schema, c) in numeric {
                    let i = w.insert(&c, &mut made)?;
                    numeric_of
                        .entry(c.template)
                        .or_default()
                        .push((c.format, schema, i));
                }
                // The files no numeric collection holds, of the folder being read: a
                // folder's files directly in it are one run of the path order (any path
                // between two of them lies deeper, so its template lies in another
                // template folder).
                let mut left: Vec<(Entry, Option<String>)> = Vec::new();
                let mut rows = if f.is_empty() {
                    at_root.query([])?
                } else {
                    in_folder.query([f])?
                };
                while let Some(r) = rows.next()? {
                    let (e, old) = entry_and_collection(r)?;
                    if left
                        .first()
                        .is_some_and(|(l, _)| folder_of(&l.path) != folder_of(&e.path))
                    {
                        link_siblings(&mut w, &mut left, &mut made, &before)?;
                    }
                    let t = collect::template(&e.path);
                    let numeric = numeric_of.get(&t.text).and_then(|v| {
                        v.iter()
                            .find(|(format, schema, _)| *format == e.format && *schema == e.schema)
                    });
                    match numeric {
                        Some(&(.., i)) if !t.parts.is_empty() => {
                            w.link(&e, old, Some(&made[i]), &before)?
                        }
                        _ => left.push((e, old)),
                    }
                }
                drop(rows);
                link_siblings(&mut w, &mut left, &mut made, &before)?;
                // With every member linked: a collection lies within one folder.
                for (id, _) in &made {
                    set_longest(&tx, &digest::to_sql(id))?;
                }
            }
        }
        if templates > 0 {
            // Collections left without members (every one deleted or moved away).
            tx.execute(
                "DELETE FROM collections WHERE NOT EXISTS
                     (SELECT 1 FROM files WHERE files.collection = collections.id)",
                [],
            )?;
            // Templates no file has any more (their files deleted or renamed).
            tx.execute(
                "DELETE FROM templates WHERE template IN (SELECT template FROM dirty_templates)
                 AND NOT EXISTS (SELECT 1 FROM files WHERE files.template = templates.id)",
                [],
            )?;
            tx.execute("DELETE FROM dirty_templates", [])?;
        }
        tx.commit()?;
        Ok(templates)
    }
}

#[cfg(test)]
mod tests;
