//! Collections in the catalog: regrouping the templates marked dirty by [`CatalogWriter::apply`]
//! and reading collections back.

use super::companions::folder_of;
use super::{CatalogReader, CatalogWriter, MetaKey};
use crate::collect::{self, Collection};
use crate::error::{Error, Result};
use rusqlite::{params, OptionalExtension};
use std::collections::{BTreeSet, HashMap};

/// Version of how collections are derived from the files: a catalog that recorded an
/// older one regroups every folder on its next run (word-named siblings, version 2).
const DERIVED: &str = "2";

/// In a catalog whose collections were derived by an older rule, mark every template
/// for regrouping (the next run's `refresh_collections` does it, and rewrites the search
/// documents whose collection text changed); in a new one, record the current rule.
pub(super) fn rederive_if_older(conn: &rusqlite::Connection) -> Result<()> {
    let recorded: Option<String> = super::meta::read(conn, MetaKey::CollectionsVersion)?;
    if recorded.as_deref() != Some(DERIVED) {
        let key = MetaKey::CollectionsVersion;
        conn.execute_batch(&format!(
            "BEGIN;
             INSERT OR IGNORE INTO dirty_templates(template)
                 SELECT DISTINCT template FROM files WHERE template IS NOT NULL;
             INSERT OR REPLACE INTO meta(key, value) VALUES ('{key}', '{DERIVED}');
             COMMIT;"
        ))?;
    }
    Ok(())
}

/// The files whose templates lie directly in a folder (`?1`; the second statement is the
/// root's): the unit of regrouping. A numeric collection lies within one template and a
/// word collection within one folder, and both within one template folder.
const IN_FOLDER: &str =
    "SELECT path, format, COALESCE(schema, ''), size, time_start, time_end, collection
     FROM files WHERE template >= ?1 || '/' AND template < ?1 || '0'
     AND instr(substr(template, length(?1) + 2), '/') = 0 ORDER BY path";
const AT_ROOT: &str =
    "SELECT path, format, COALESCE(schema, ''), size, time_start, time_end, collection
     FROM files WHERE instr(template, '/') = 0 ORDER BY path";

fn entry_and_collection(
    r: &rusqlite::Row<'_>,
) -> rusqlite::Result<(collect::Entry, Option<String>)> {
    let (a, b): (Option<String>, Option<String>) = (r.get(4)?, r.get(5)?);
    Ok((
        collect::Entry {
            path: r.get(0)?,
            format: r.get(1)?,
            schema: r.get(2)?,
            size: r.get::<_, i64>(3)? as u64,
            time: a.zip(b),
        },
        r.get(6)?,
    ))
}

fn decode(detail: &str) -> Result<Collection> {
    serde_json::from_str(detail).map_err(|e| Error::corrupt("collection", e))
}

impl CatalogReader {
    /// Every collection, largest first.
    pub fn collections(&self) -> Result<Vec<Collection>> {
        let mut stmt = self
            .conn
            .prepare("SELECT detail FROM collections ORDER BY members DESC, template")?;
        let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
        let mut out = Vec::new();
        for r in rows {
            out.push(decode(&r?)?);
        }
        Ok(out)
    }

    /// The collection with this id.
    pub fn collection(&self, id: &str) -> Result<Option<Collection>> {
        let detail: Option<String> = self
            .conn
            .prepare_cached("SELECT detail FROM collections WHERE id = ?1")?
            .query_row([id], |r| r.get(0))
            .optional()?;
        detail.map(|d| decode(&d)).transpose()
    }

    /// Members of collection `id` whose time coverage overlaps the days `start … end`
    /// (`YYYY-MM-DD`, compared to the day), in path order, at most `limit`.
    pub fn members_overlapping(
        &self,
        id: &str,
        start: &str,
        end: &str,
        limit: usize,
    ) -> Result<Vec<String>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT path FROM files WHERE collection = ?1
                 AND substr(time_start, 1, 10) <= ?3 AND substr(time_end, 1, 10) >= ?2
             ORDER BY path LIMIT ?4",
        )?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = stmt.query_map(params![id, start, end, limit], |r| r.get(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The id of the collection `path` belongs to, if any.
    pub fn collection_of(&self, path: &str) -> Result<Option<String>> {
        Ok(self
            .conn
            .prepare_cached("SELECT collection FROM files WHERE path = ?1")?
            .query_row([path], |r| r.get::<_, Option<String>>(0))
            .optional()?
            .flatten())
    }
}

impl CatalogWriter {
    /// Regroup the collections of the folders of every template whose files changed, in
    /// one transaction; returns how many templates were regrouped. A file whose
    /// collection's search text ([`collect::siblings::search_text`]) changed is marked
    /// stale for search, so that the sync after it rewrites its document.
    pub fn refresh_collections(&mut self) -> Result<usize> {
        let tx = self.reader.conn.transaction()?;
        let templates: Vec<String> = {
            let mut stmt = tx.prepare("SELECT template FROM dirty_templates")?;
            let rows = stmt.query_map([], |r| r.get(0))?;
            rows.collect::<rusqlite::Result<_>>()?
        };
        let folders: BTreeSet<&str> = templates.iter().map(|t| folder_of(t)).collect();
        {
            let mut in_folder = tx.prepare_cached(IN_FOLDER)?;
            let mut at_root = tx.prepare_cached(AT_ROOT)?;
            let mut detail = tx.prepare_cached("SELECT detail FROM collections WHERE id = ?1")?;
            let mut drop_old = tx.prepare_cached("DELETE FROM collections WHERE id = ?1")?;
            let mut insert = tx.prepare_cached(
                "INSERT OR REPLACE INTO collections(id, template, format, members, time_start, time_end, detail)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?;
            let mut link = tx.prepare_cached("UPDATE files SET collection = ?2 WHERE path = ?1")?;
            let mut stale =
                tx.prepare_cached("INSERT OR IGNORE INTO search_dirty(path) VALUES (?1)")?;
            for f in folders {
                let rows = if f.is_empty() {
                    at_root.query_map([], entry_and_collection)?
                } else {
                    in_folder.query_map([f], entry_and_collection)?
                }
                .collect::<rusqlite::Result<Vec<_>>>()?;
                // The search text of each old collection, before it goes.
                let mut before: HashMap<String, Option<String>> = HashMap::new();
                for id in rows.iter().filter_map(|(_, c)| c.as_ref()) {
                    if before.contains_key(id) {
                        continue;
                    }
                    let d: Option<String> = detail.query_row([id], |r| r.get(0)).optional()?;
                    let text = d
                        .map(|d| decode(&d))
                        .transpose()?
                        .and_then(|c| collect::siblings::search_text(&c));
                    drop_old.execute([id])?;
                    before.insert(id.clone(), text);
                }
                let (entries, old): (Vec<collect::Entry>, Vec<Option<String>>) =
                    rows.into_iter().unzip();
                let mut now: HashMap<String, (String, Option<String>)> = HashMap::new();
                for (c, members) in collect::group(&entries) {
                    let detail =
                        serde_json::to_string(&c).map_err(|e| Error::serialize("collection", e))?;
                    insert.execute(params![
                        c.id,
                        c.template,
                        c.format,
                        c.members as i64,
                        c.time_start,
                        c.time_end,
                        detail
                    ])?;
                    let text = collect::siblings::search_text(&c);
                    for m in members {
                        now.insert(m, (c.id.clone(), text.clone()));
                    }
                }
                for (e, old) in entries.iter().zip(old) {
                    let new = now.get(&e.path);
                    let new_id = new.map(|(id, _)| id);
                    if old.as_ref() != new_id {
                        link.execute(params![e.path, new_id])?;
                    }
                    let old_text = old.and_then(|id| before.get(&id).cloned().flatten());
                    if old_text.as_ref() != new.and_then(|(_, t)| t.as_ref()) {
                        stale.execute([&e.path])?;
                    }
                }
            }
        }
        if !templates.is_empty() {
            // Collections left without members (every one deleted or moved away).
            tx.execute(
                "DELETE FROM collections WHERE NOT EXISTS
                     (SELECT 1 FROM files WHERE files.collection = collections.id)",
                [],
            )?;
            tx.execute("DELETE FROM dirty_templates", [])?;
        }
        tx.commit()?;
        Ok(templates.len())
    }
}
