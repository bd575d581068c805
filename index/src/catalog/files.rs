//! File rows and the description cache: reading them back, and writing a batch of
//! changes ([`CatalogWriter::apply`]) together with the marks that later stages
//! (collections, search documents, the vector graph) work from.

use super::vector_graph::StaleMarker;
use super::{Cached, CatalogReader, CatalogWriter, Change, FileRow, FileState, Hash};
use crate::analyze::record::RankRecord;
use crate::analyze::{Description, Format, TimeCoverage};
use crate::error::{Error, Result};
use rusqlite::{params, OptionalExtension};
use std::collections::HashMap;

pub(super) fn row_from(r: &rusqlite::Row<'_>) -> rusqlite::Result<FileRow> {
    let hash: Option<Vec<u8>> = r.get(3)?;
    let format: String = r.get(4)?;
    let state: String = r.get(6)?;
    Ok(FileRow {
        path: r.get(0)?,
        size: r.get::<_, i64>(1)? as u64,
        mtime_ns: r.get(2)?,
        hash: hash.and_then(|h| h.try_into().ok()),
        format: Format::parse(&format).unwrap_or(Format::Binary),
        analyzer: r.get(5)?,
        state: FileState::parse(&state),
        error: r.get(7)?,
        racy: r.get(8)?,
        indexed_at: r.get(9)?,
        time: match (
            r.get::<_, Option<String>>(10)?,
            r.get::<_, Option<String>>(11)?,
        ) {
            (Some(start), Some(end)) => Some(TimeCoverage {
                start,
                end,
                source: r.get::<_, Option<String>>(12)?.unwrap_or_default(),
            }),
            _ => None,
        },
        sampled: r.get(13)?,
        schema: super::digest::get(r, 14)?,
    })
}

pub(super) const FILE_COLUMNS: &str =
    "path, size, mtime_ns, hash, format, analyzer, state, error, racy, indexed_at, time_start, time_end, time_source, sampled, schema, template";

impl CatalogReader {
    /// Every file row, by path.
    pub fn load_files(&self) -> Result<HashMap<String, FileRow>> {
        let mut stmt = self
            .conn
            .prepare(&format!("SELECT {FILE_COLUMNS} FROM files"))?;
        let rows = stmt.query_map([], row_from)?;
        let mut out = HashMap::new();
        for r in rows {
            let r = r?;
            out.insert(r.path.clone(), r);
        }
        Ok(out)
    }

    /// The row of one file.
    pub fn file(&self, path: &str) -> Result<Option<FileRow>> {
        // Cached: a search reads hundreds of rows, and parsing the statement each time
        // would be a tenth of a search.
        Ok(self
            .conn
            .prepare_cached(&format!("SELECT {FILE_COLUMNS} FROM files WHERE path = ?1"))?
            .query_row([path], row_from)
            .optional()?)
    }

    /// Whether the cache holds a description for (hash, analyzer key), and if so what a
    /// file row needs of it: read from the description itself, which the cache's row
    /// does not repeat (a hit is a copy or a revert, rare next to the rows it saves).
    pub fn cached(&self, hash: &Hash, analyzer: &str) -> Result<Option<Cached>> {
        Ok(self.description(hash, analyzer)?.map(|d| Cached {
            format: d.format,
            schema: Some(crate::collect::schema_digest(&d)),
            sampled: d.is_sampled(),
            time: d.time_coverage,
            error: d.error,
        }))
    }

    /// The cached description for (hash, analyzer key).
    pub fn description(&self, hash: &Hash, analyzer: &str) -> Result<Option<Description>> {
        let found: Option<(Vec<u8>, i64)> = self
            .conn
            .prepare_cached(
                "SELECT blob, raw_len FROM descriptions WHERE hash = ?1 AND analyzer = ?2",
            )?
            .query_row(params![&hash[..], analyzer], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        let Some((blob, raw_len)) = found else {
            return Ok(None);
        };
        let json = self.decompressors.borrow_mut().decompress(
            &self.conn,
            &self.dir,
            &blob,
            (raw_len.max(0) as usize).max(1),
        )?;
        serde_json::from_slice(&json)
            .map(Some)
            .map_err(|e| Error::corrupt("description", e))
    }
}

impl CatalogWriter {
    /// Apply a batch of changes in one transaction.
    pub fn apply(&mut self, changes: &[Change]) -> Result<()> {
        let applied = self.apply_in_one(changes);
        if applied.is_err() {
            // A dictionary trained in the rolled-back transaction was never stored: its
            // compressor must not write another blob. The next batch reloads the stored ones.
            self.compressors = None;
        }
        applied
    }

    fn apply_in_one(&mut self, changes: &[Change]) -> Result<()> {
        if self.compressors.is_none() {
            self.compressors = Some(super::dictionaries::Compressors::new(&self.reader.dir)?);
        }
        let compressors = self.compressors.as_mut().expect("set above");
        let tx = self.reader.conn.transaction()?;
        {
            let mut upsert = tx.prepare_cached(&format!(
                "INSERT OR REPLACE INTO files({FILE_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)"
            ))?;
            let mut cache = tx.prepare_cached(
                // An exact description replaces one made from a sample; nothing else is
                // replaced. Its ranking record goes with it.
                "INSERT INTO descriptions(hash, analyzer, raw_len, sampled, record, blob)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                 ON CONFLICT(hash, analyzer) DO UPDATE SET raw_len = excluded.raw_len,
                   sampled = excluded.sampled, record = excluded.record, blob = excluded.blob
                 WHERE descriptions.sampled > excluded.sampled",
            )?;
            let mut delete = tx.prepare_cached("DELETE FROM files WHERE path = ?1")?;
            let mut touch = tx.prepare_cached(
                "UPDATE files SET size = ?2, mtime_ns = ?3, racy = ?4 WHERE path = ?1",
            )?;
            let mut templates = super::collections::Templates::new(&tx)?;
            let mut write_row =
                |stmt: &mut rusqlite::CachedStatement<'_>, row: &FileRow, template: &str| {
                    let template = templates.id(template)?;
                    stmt.execute(params![
                        row.path,
                        row.size as i64,
                        row.mtime_ns,
                        row.hash.as_ref().map(|h| &h[..]),
                        row.format.as_str(),
                        row.analyzer,
                        row.state.as_str(),
                        row.error,
                        row.racy,
                        row.indexed_at,
                        row.time.as_ref().map(|t| &t.start),
                        row.time.as_ref().map(|t| &t.end),
                        row.time.as_ref().map(|t| &t.source),
                        row.sampled,
                        super::digest::opt_to_sql(row.schema.as_deref()),
                        template,
                    ])
                };
            // Collections of the touched templates are regrouped after the run; marking
            // them in the same transaction keeps that promise across a crash.
            let mut dirty =
                tx.prepare_cached("INSERT OR IGNORE INTO dirty_templates(template) VALUES (?1)")?;
            // Likewise the search documents of changed paths.
            let mut stale_doc =
                tx.prepare_cached("INSERT OR IGNORE INTO search_dirty(path) VALUES (?1)")?;
            // And, while there is a vector graph, the paths it may no longer hold as they
            // are (`search::ann` finds its tombstones and delta among them).
            let mut stale_vector = StaleMarker::new(&tx)?;
            let mut mark = |path: &str, template: &str| -> rusqlite::Result<usize> {
                stale_doc.execute([path])?;
                stale_vector.mark(path)?;
                dirty.execute([template])
            };
            for c in changes {
                match c {
                    Change::Upsert { row, description } => {
                        if let (Some(d), Some(h), Some(a)) = (description, &row.hash, &row.analyzer)
                        {
                            let json = serde_json::to_vec(d)
                                .map_err(|e| Error::serialize("description", e))?;
                            let blob = compressors.compress(
                                &tx,
                                &self.reader.dir,
                                d.format.as_str(),
                                &json,
                            )?;
                            cache.execute(params![
                                &h[..],
                                a,
                                json.len() as i64,
                                d.is_sampled(),
                                RankRecord::of(d).encode(),
                                blob,
                            ])?;
                        }
                        let t = crate::collect::template(&row.path).text;
                        write_row(&mut upsert, row, &t)?;
                        mark(&row.path, &t)?;
                    }
                    Change::Rename { from, row } => {
                        delete.execute([from])?;
                        let t = crate::collect::template(&row.path).text;
                        write_row(&mut upsert, row, &t)?;
                        mark(from, &crate::collect::template(from).text)?;
                        mark(&row.path, &t)?;
                    }
                    Change::Touch {
                        path,
                        size,
                        mtime_ns,
                        racy,
                    } => {
                        touch.execute(params![path, *size as i64, mtime_ns, racy])?;
                    }
                    Change::Delete { path } => {
                        delete.execute([path])?;
                        mark(path, &crate::collect::template(path).text)?;
                    }
                }
            }
        }
        tx.commit()?;
        self.bound_wal()?;
        Ok(())
    }
}
