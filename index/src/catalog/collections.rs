//! Collections in the catalog: regrouping the templates marked dirty by [`Catalog::apply`]
//! and reading collections back.

use super::Catalog;
use crate::collect::{self, Collection};
use crate::error::{InternalError, Result};
use rusqlite::{params, OptionalExtension};

impl Catalog {
    /// Regroup the collections of every template whose files changed, in one transaction;
    /// returns how many templates were regrouped.
    pub fn refresh_collections(&mut self) -> Result<usize> {
        let tx = self.conn.transaction()?;
        let templates: Vec<String> = {
            let mut stmt = tx.prepare("SELECT template FROM dirty_templates")?;
            let rows = stmt.query_map([], |r| r.get(0))?;
            rows.collect::<rusqlite::Result<_>>()?
        };
        {
            let mut files = tx.prepare_cached(
                "SELECT path, format, COALESCE(schema, ''), size, time_start, time_end, collection, state
                 FROM files WHERE template = ?1 ORDER BY path",
            )?;
            let mut drop_old = tx.prepare_cached("DELETE FROM collections WHERE template = ?1")?;
            let mut unlink =
                tx.prepare_cached("UPDATE files SET collection = NULL WHERE template = ?1")?;
            let mut insert = tx.prepare_cached(
                "INSERT OR REPLACE INTO collections(id, template, format, members, time_start, time_end, detail)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?;
            let mut link = tx.prepare_cached("UPDATE files SET collection = ?2 WHERE path = ?1")?;
            for t in &templates {
                drop_old.execute([t])?;
                unlink.execute([t])?;
                let entries = files
                    .query_map([t], |r| {
                        let (a, b): (Option<String>, Option<String>) = (r.get(4)?, r.get(5)?);
                        Ok(collect::Entry {
                            path: r.get(0)?,
                            format: r.get(1)?,
                            schema: r.get(2)?,
                            size: r.get::<_, i64>(3)? as u64,
                            time: a.zip(b),
                        })
                    })?
                    .collect::<rusqlite::Result<Vec<_>>>()?;
                for (c, members) in collect::group(&entries) {
                    let detail = serde_json::to_string(&c)
                        .map_err(|e| InternalError::CorruptBlob(e.to_string()))?;
                    insert.execute(params![
                        c.id,
                        c.template,
                        c.format,
                        c.members as i64,
                        c.time_start,
                        c.time_end,
                        detail
                    ])?;
                    for m in members {
                        link.execute(params![m, c.id])?;
                    }
                }
            }
        }
        tx.execute("DELETE FROM dirty_templates", [])?;
        tx.commit()?;
        Ok(templates.len())
    }

    /// Every collection, largest first.
    pub fn collections(&self) -> Result<Vec<Collection>> {
        let mut stmt = self
            .conn
            .prepare("SELECT detail FROM collections ORDER BY members DESC, template")?;
        let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
        let mut out = Vec::new();
        for r in rows {
            out.push(
                serde_json::from_str(&r?).map_err(|e| InternalError::CorruptBlob(e.to_string()))?,
            );
        }
        Ok(out)
    }

    /// The collection with this id.
    pub fn collection(&self, id: &str) -> Result<Option<Collection>> {
        let detail: Option<String> = self
            .conn
            .query_row("SELECT detail FROM collections WHERE id = ?1", [id], |r| {
                r.get(0)
            })
            .optional()?;
        detail
            .map(|d| {
                serde_json::from_str(&d)
                    .map_err(|e| InternalError::CorruptBlob(e.to_string()).into())
            })
            .transpose()
    }

    /// The id of the collection `path` belongs to, if any.
    pub fn collection_of(&self, path: &str) -> Result<Option<String>> {
        Ok(self
            .conn
            .query_row(
                "SELECT collection FROM files WHERE path = ?1",
                [path],
                |r| r.get::<_, Option<String>>(0),
            )
            .optional()?
            .flatten())
    }
}
