//! Companion-documentation links in the catalog (`companions`: data path → documentation
//! path and the documented columns), and the descriptions as readers see them with the
//! links applied ([`CatalogReader::file_description`]). The indexer writes a folder's links
//! whole ([`CatalogWriter::replace_companions`]) after its files are described.

use super::files::{self, FILE_COLUMNS};
use super::vector_graph::StaleMarker;
use super::{CatalogReader, CatalogWriter, FileRow, Hash};
use crate::analyze::Description;
use crate::companion::{self, lookup::LookupLink, Companion, Link};
use crate::error::{Error, Result};
use rusqlite::{params, OptionalExtension};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// Created when a writer opens the catalog, so that older indexes gain it without a
/// format change; readers of one without it see no links.
pub(super) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS companions (
    data    TEXT PRIMARY KEY,
    doc     TEXT NOT NULL,
    folder  TEXT NOT NULL,
    columns TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS companions_doc ON companions(doc);
CREATE INDEX IF NOT EXISTS companions_folder ON companions(folder);
CREATE TABLE IF NOT EXISTS lookups (
    data    TEXT NOT NULL,
    lookup  TEXT NOT NULL,
    folder  TEXT NOT NULL,
    link    TEXT NOT NULL,
    PRIMARY KEY (data, lookup)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS lookups_folder ON lookups(folder);
";

/// Create the tables in a catalog made before them. Before `companions`, every file is
/// then marked stale for search, so that the next run links every folder (and rewrites
/// the search documents once), rather than only those where something changes. The
/// `lookups` table changes no search document: a catalog without it records no lookup
/// rule either, and the next run links every folder's lookups
/// (`indexer::relink`).
pub(super) fn create_in_existing(conn: &rusqlite::Connection) -> Result<()> {
    let had: bool = conn.query_row(
        "SELECT EXISTS(SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'companions')",
        [],
        |r| r.get(0),
    )?;
    if !had {
        conn.execute_batch(&format!(
            "BEGIN; {SCHEMA} INSERT OR IGNORE INTO search_dirty(path) SELECT path FROM files; COMMIT;"
        ))?;
    } else {
        conn.execute_batch(SCHEMA)?;
    }
    Ok(())
}

/// The folder of a lake-relative path (`""` for the root).
pub fn folder_of(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(d, _)| d)
}

pub(super) fn missing_table(e: &rusqlite::Error) -> bool {
    matches!(e, rusqlite::Error::SqliteFailure(_, Some(msg))
        if msg.contains("no such table: companions") || msg.contains("no such table: lookups"))
}

/// What a link keeps in its `columns` cell: the documented columns, with how the
/// field list fits the data when the link was made by content.
#[derive(serde::Serialize, serde::Deserialize)]
struct Kept {
    columns: Vec<companion::DocColumn>,
    fit: companion::Fit,
}

/// A `columns` cell read: a list of columns, or an object with a fit too.
fn columns_from(json: &str) -> Result<(Vec<companion::DocColumn>, Option<companion::Fit>)> {
    let bad = |e| Error::corrupt("companion columns", e);
    if json.trim_start().starts_with('[') {
        return Ok((serde_json::from_str(json).map_err(bad)?, None));
    }
    let k: Kept = serde_json::from_str(json).map_err(bad)?;
    Ok((k.columns, Some(k.fit)))
}

/// A link's `columns` cell: the list alone for a link by name or count, as the cells
/// of a catalog made before links by content are.
fn columns_cell(l: &Link) -> Result<String> {
    let json = match &l.fit {
        None => serde_json::to_string(&l.columns),
        Some(fit) => serde_json::to_string(&serde_json::json!({
            "columns": l.columns,
            "fit": fit,
        })),
    };
    json.map_err(|e| Error::serialize("companion columns", e))
}

impl CatalogReader {
    /// The rows of the files directly in `folder` (not below it), by path: at most
    /// `limit` of them, the first.
    pub fn folder_files(&self, folder: &str, limit: usize) -> Result<Vec<FileRow>> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = if folder.is_empty() {
            let mut stmt = self.conn.prepare_cached(&format!(
                "SELECT {FILE_COLUMNS} FROM files WHERE instr(path, '/') = 0
                 ORDER BY path LIMIT ?1"
            ))?;
            let rows = stmt
                .query_map([limit], files::row_from)?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            rows
        } else {
            // '0' is the byte after '/': the range is everything below the folder.
            let mut stmt = self.conn.prepare_cached(&format!(
                "SELECT {FILE_COLUMNS} FROM files WHERE path >= ?1 || '/' AND path < ?1 || '0'
                 AND instr(substr(path, length(?1) + 2), '/') = 0 ORDER BY path LIMIT ?2"
            ))?;
            let rows = stmt
                .query_map(params![folder, limit], files::row_from)?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            rows
        };
        Ok(rows)
    }

    /// The link that names the columns of the data file `path`, if any.
    pub fn companion_of(&self, path: &str) -> Result<Option<Link>> {
        let found = self
            .conn
            .prepare_cached("SELECT doc, columns FROM companions WHERE data = ?1")
            .and_then(|mut s| {
                s.query_row([path], |r| {
                    Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
                })
                .optional()
            });
        let found = match found {
            Ok(f) => f,
            Err(e) if missing_table(&e) => None,
            Err(e) => return Err(e.into()),
        };
        found
            .map(|(doc, cols)| {
                let (columns, fit) = columns_from(&cols)?;
                Ok(Link {
                    data: path.to_string(),
                    doc,
                    columns,
                    fit,
                })
            })
            .transpose()
    }

    /// The first column (text) of the rows `sql` selects for `path`; none when its
    /// table is missing (an index made before it, read without a writer).
    fn texts_for(&self, sql: &str, path: &str) -> Result<Vec<String>> {
        let found = self.conn.prepare_cached(sql).and_then(|mut s| {
            s.query_map([path], |r| r.get::<_, String>(0))?
                .collect::<rusqlite::Result<Vec<_>>>()
        });
        match found {
            Ok(f) => Ok(f),
            Err(e) if missing_table(&e) => Ok(Vec::new()),
            Err(e) => Err(e.into()),
        }
    }

    /// The data files the documentation file `path` documents, by path.
    pub fn documented_by(&self, path: &str) -> Result<Vec<String>> {
        self.texts_for(
            "SELECT data FROM companions WHERE doc = ?1 ORDER BY data",
            path,
        )
    }

    /// Every folder holding a file (`""` for the root), in order.
    pub fn folders(&self) -> Result<Vec<String>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT path FROM files ORDER BY path")?;
        let mut out = std::collections::BTreeSet::new();
        for p in stmt.query_map([], |r| r.get::<_, String>(0))? {
            out.insert(folder_of(&p?).to_string());
        }
        Ok(out.into_iter().collect())
    }

    /// The folders below `folder` (the whole lake's for the root) that hold files, by
    /// path, at most `limit` of them (the first ones).
    pub fn folders_below(&self, folder: &str, limit: usize) -> Result<Vec<String>> {
        let (sql, arg) = if folder.is_empty() {
            (
                "SELECT path FROM files WHERE instr(path, '/') > 0 ORDER BY path",
                String::new(),
            )
        } else {
            (
                "SELECT path FROM files WHERE path >= ?1 || '/' AND path < ?1 || '0'
                 AND instr(substr(path, length(?1) + 2), '/') > 0 ORDER BY path",
                folder.to_string(),
            )
        };
        let mut stmt = self.conn.prepare_cached(sql)?;
        let mut rows = if folder.is_empty() {
            stmt.query([])?
        } else {
            stmt.query([arg])?
        };
        let mut out: BTreeSet<String> = BTreeSet::new();
        while let Some(r) = rows.next()? {
            let p: String = r.get(0)?;
            let f = folder_of(&p);
            if !out.contains(f) {
                if out.len() == limit {
                    break;
                }
                out.insert(f.to_string());
            }
        }
        Ok(out.into_iter().collect())
    }

    /// The lookup links of the data file `path`, by lookup path.
    pub fn lookups_of(&self, path: &str) -> Result<Vec<LookupLink>> {
        self.texts_for(
            "SELECT link FROM lookups WHERE data = ?1 ORDER BY lookup",
            path,
        )?
        .iter()
        .map(|j| serde_json::from_str(j).map_err(|e| Error::corrupt("lookup link", e)))
        .collect()
    }

    /// The files a person opens with `path`: its documentation, the data files it
    /// documents, its lookup tables — in that order.
    pub fn companions(&self, path: &str) -> Result<Vec<Companion>> {
        let mut out = Vec::new();
        if let Some(l) = self.companion_of(path)? {
            out.push(Companion {
                path: l.doc,
                why: "documents it".into(),
            });
        }
        out.extend(self.documented_by(path)?.into_iter().map(|data| Companion {
            path: data,
            why: "documented by it".into(),
        }));
        out.extend(self.lookups_of(path)?.into_iter().map(|l| Companion {
            why: l.why(),
            path: l.lookup,
        }));
        Ok(out)
    }

    /// A file's description as the lake shows it: the cached description of its content
    /// with its companion links applied (documented column names, notes naming the other
    /// file). What `describe`, search and the agent read.
    pub fn file_description(&self, row: &FileRow) -> Result<Option<Description>> {
        let (Some(h), Some(a)) = (&row.hash, &row.analyzer) else {
            return Ok(None);
        };
        let Some(mut d) = self.description(h, a)? else {
            return Ok(None);
        };
        if let Some(link) = self.companion_of(&row.path)? {
            companion::apply_data(&mut d, &link);
        }
        companion::apply_doc(&mut d, &self.documented_by(&row.path)?);
        Ok(Some(d))
    }

    /// The linked data files by description key (hash, analyzer), the first by path
    /// where several share one: what the embedding of such a key must be computed
    /// from. Read once for all the keys a sync embeds, from the companion links (few),
    /// rather than key by key through an index of every file by hash (8 MB at 100k
    /// files, kept for nothing else).
    pub fn linked_files_by_key(&self) -> Result<HashMap<(Hash, String), FileRow>> {
        let found = self
            .conn
            .prepare_cached(&format!(
                "SELECT {FILE_COLUMNS} FROM files WHERE path IN (SELECT data FROM companions)
                 ORDER BY path"
            ))
            .and_then(|mut s| {
                let mut out: HashMap<(Hash, String), FileRow> = HashMap::new();
                for row in s.query_map([], files::row_from)? {
                    let row = row?;
                    if let (Some(h), Some(a)) = (row.hash, row.analyzer.clone()) {
                        out.entry((h, a)).or_insert(row);
                    }
                }
                Ok(out)
            });
        match found {
            Ok(f) => Ok(f),
            Err(e) if missing_table(&e) => Ok(HashMap::new()),
            Err(e) => Err(e.into()),
        }
    }
}

impl CatalogWriter {
    /// Replace the lookup links of the files of `folder` with `links`, in one
    /// transaction; a data file whose links changed is marked stale for search (its
    /// document carries their labels).
    pub fn replace_lookups(&mut self, folder: &str, links: &[LookupLink]) -> Result<()> {
        let tx = self.reader.conn.transaction()?;
        {
            let mut old: Vec<(String, String)> = tx
                .prepare_cached("SELECT data, link FROM lookups WHERE folder = ?1")?
                .query_map([folder], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<rusqlite::Result<_>>()?;
            let jsons: Vec<String> = links
                .iter()
                .map(serde_json::to_string)
                .collect::<std::result::Result<_, _>>()
                .map_err(|e| Error::serialize("lookup link", e))?;
            let mut new: Vec<(String, String)> = links
                .iter()
                .zip(&jsons)
                .map(|(l, j)| (l.data.clone(), j.clone()))
                .collect();
            old.sort();
            new.sort();
            // The common case, a folder without lookups before or after, writes nothing.
            if old != new {
                let mut changed: BTreeSet<&str> = BTreeSet::new();
                changed.extend(
                    old.iter()
                        .filter(|o| !new.contains(o))
                        .map(|o| o.0.as_str()),
                );
                changed.extend(
                    new.iter()
                        .filter(|n| !old.contains(n))
                        .map(|n| n.0.as_str()),
                );
                tx.execute("DELETE FROM lookups WHERE folder = ?1", [folder])?;
                let mut insert = tx.prepare_cached(
                    "INSERT OR REPLACE INTO lookups(data, lookup, folder, link) VALUES (?1, ?2, ?3, ?4)",
                )?;
                for (l, json) in links.iter().zip(&jsons) {
                    insert.execute(params![l.data, l.lookup, folder, json])?;
                }
                let mut mark =
                    tx.prepare_cached("INSERT OR IGNORE INTO search_dirty(path) VALUES (?1)")?;
                for p in changed {
                    mark.execute([p])?;
                }
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// Replace the links of the files of `folder` with `links`, in one transaction. The
    /// data and documentation files of every link that appeared, went or changed — and
    /// of every link whose data file is in `changed` (paths with new content, sorted;
    /// only those among the links' data files matter) — are marked stale for search,
    /// and the data file's embedding is dropped and its vector-graph point made a
    /// tombstone: they were computed from the names before, and are keyed by content,
    /// which a link does not change. Returns how many links changed.
    pub fn replace_companions(
        &mut self,
        folder: &str,
        links: &[Link],
        changed: &[String],
    ) -> Result<usize> {
        let tx = self.reader.conn.transaction()?;
        let mut touched = 0;
        {
            let mut old: BTreeMap<String, (String, String)> = BTreeMap::new();
            {
                let mut stmt = tx.prepare_cached(
                    "SELECT data, doc, columns FROM companions WHERE folder = ?1",
                )?;
                for r in stmt.query_map([folder], |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, String>(2)?,
                    ))
                })? {
                    let (data, doc, cols) = r?;
                    old.insert(data, (doc, cols));
                }
            }
            // The common case, a folder without documentation, writes nothing.
            if !(old.is_empty() && links.is_empty()) {
                tx.execute("DELETE FROM companions WHERE folder = ?1", [folder])?;
            }
            let mut insert = tx.prepare_cached(
                "INSERT OR REPLACE INTO companions(data, doc, folder, columns) VALUES (?1, ?2, ?3, ?4)",
            )?;
            let mut stale =
                tx.prepare_cached("INSERT OR IGNORE INTO search_dirty(path) VALUES (?1)")?;
            let mut drop_vector = tx.prepare_cached(
                "DELETE FROM embeddings WHERE (hash, analyzer) IN
                   (SELECT hash, analyzer FROM files WHERE path = ?1 AND hash IS NOT NULL)",
            )?;
            let mut stale_vector = StaleMarker::new(&tx)?;
            let mut affected: Vec<(String, Option<String>, Option<String>)> = Vec::new();
            for l in links {
                let cols = columns_cell(l)?;
                insert.execute(params![l.data, l.doc, folder, cols])?;
                let before = old.remove(&l.data);
                let same = before
                    .as_ref()
                    .is_some_and(|(d, c)| *d == l.doc && *c == cols);
                if !same || is_among(changed, &l.data) {
                    affected.push((l.data.clone(), before.map(|b| b.0), Some(l.doc.clone())));
                }
            }
            for (data, (doc, _)) in old {
                affected.push((data, Some(doc), None));
            }
            for (data, before, after) in &affected {
                touched += 1;
                for p in std::iter::once(data).chain(before).chain(after) {
                    stale.execute([p])?;
                }
                // Its graph point, if any, is then a tombstone (the key's row no longer
                // holds it: `catalog::vector_graph`), and the file searched exactly, in
                // the delta, once embedded again: both are found among the stale paths.
                drop_vector.execute([data])?;
                stale_vector.mark(data)?;
            }
        }
        tx.commit()?;
        Ok(touched)
    }
}

/// Whether `path` is among the sorted `paths`.
fn is_among(paths: &[String], path: &str) -> bool {
    paths.binary_search_by(|p| p.as_str().cmp(path)).is_ok()
}
