//! The ranking records of descriptions (`descriptions.record`: the [`RankRecord`] of
//! the row's description, as stored), and what a search's candidate stage reads in one
//! query: a file's row, its collection and its record ([`CatalogReader::ranked_file`]).
//!
//! A column of `descriptions` (a table of its own would repeat the description's key: a
//! tenth of the catalog). It is stored before the blob,
//! so that it lies in the row's first page even when the blob spills to overflow pages.
//! The writer stores a record with every description it stores
//! ([`CatalogWriter::apply`](super::CatalogWriter::apply)); a description without a
//! usable record is decoded whole by search.

use super::dictionaries::Decompressors;
use super::files::{self, FILE_COLUMNS};
use super::{CatalogReader, FileRow, MetaKey};
use crate::analyze::record::{RankRecord, RECORD_VERSION};
use crate::analyze::Description;
use crate::error::{Error, Result};
use rusqlite::{params, Connection};
use std::collections::HashMap;
use std::path::Path;

/// Derive the record of every description when the catalog's records are of none or
/// another [`RECORD_VERSION`] (in one transaction; a few seconds at 100k files, once).
pub(super) fn rederive_if_older(conn: &mut Connection, dir: &Path) -> Result<()> {
    let current = RECORD_VERSION.to_string();
    if super::meta::read(conn, MetaKey::RankRecordsVersion)?.as_deref() == Some(&current) {
        return Ok(());
    }
    let started = std::time::Instant::now();
    let tx = conn.transaction()?;
    let mut decompressors = Decompressors::default();
    let mut derived = 0u64;
    {
        let mut all = tx.prepare("SELECT hash, analyzer, blob, raw_len FROM descriptions")?;
        let mut put =
            tx.prepare("UPDATE descriptions SET record = ?3 WHERE hash = ?1 AND analyzer = ?2")?;
        let mut rows = all.query([])?;
        while let Some(r) = rows.next()? {
            let (hash, analyzer): (Vec<u8>, String) = (r.get(0)?, r.get(1)?);
            let (blob, raw_len): (Vec<u8>, i64) = (r.get(2)?, r.get(3)?);
            let json =
                decompressors.decompress(&tx, dir, &blob, (raw_len.max(0) as usize).max(1))?;
            let d: Description =
                serde_json::from_slice(&json).map_err(|e| Error::corrupt("description", e))?;
            put.execute(params![hash, analyzer, RankRecord::of(&d).encode()])?;
            derived += 1;
        }
    }
    tx.execute(
        "INSERT OR REPLACE INTO meta(key, value) VALUES (?1, ?2)",
        params![MetaKey::RankRecordsVersion, current],
    )?;
    tx.commit()?;
    tracing::info!(
        derived,
        ms = started.elapsed().as_millis() as u64,
        "derived the ranking records of the cached descriptions"
    );
    Ok(())
}

/// What a search's candidate stage reads of a file: its row, its collection, and the
/// ranking record of its description when there is a usable one.
#[derive(Debug, Clone)]
pub struct RankedFile {
    /// The file's row.
    pub row: FileRow,
    /// The id of its collection, if any.
    pub collection: Option<String>,
    /// The record of its description as stored; `None` when it has no description, or
    /// the catalog no record of it (made before records, or by an older writer) or one
    /// of another version.
    pub record: Option<RankRecord>,
}

impl CatalogReader {
    /// The row, collection and ranking record of the file at `path` (see
    /// [`CatalogReader::ranked_files`]).
    pub fn ranked_file(&self, path: &str, records: bool) -> Result<Option<RankedFile>> {
        Ok(self.ranked_files(&[path], records)?.pop().flatten())
    }

    /// The row, collection and ranking record of each file of `paths`, in one query
    /// (`None` for a path the catalog does not have), in the order of `paths`; the
    /// records are read only when `records` (without, search ranks by the descriptions,
    /// as it does a description without a record). One query for a search's ~400 candidates
    /// rather than one each: a statement's step, bindings and reset cost about as much
    /// as its seek.
    pub fn ranked_files(&self, paths: &[&str], records: bool) -> Result<Vec<Option<RankedFile>>> {
        // Columns 0–15 are `FILE_COLUMNS` (what `files::row_from` reads).
        let record = if records {
            "(SELECT record FROM descriptions d
              WHERE d.hash = files.hash AND d.analyzer = files.analyzer)"
        } else {
            "NULL"
        };
        let sql = format!(
            "SELECT {FILE_COLUMNS}, collection, {record} FROM files
             WHERE path IN (SELECT value FROM json_each(?1))"
        );
        // A JSON array, which cannot fail to encode: SQLite reads it with `json_each`.
        let listed = serde_json::Value::from(paths.to_vec()).to_string();
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let mut rows = stmt.query([listed])?;
        let mut found: HashMap<String, RankedFile> = HashMap::with_capacity(paths.len());
        while let Some(r) = rows.next()? {
            let row = files::row_from(r)?;
            let collection = super::digest::get(r, 16)?;
            let record = match r.get::<_, Option<Vec<u8>>>(17)? {
                Some(bytes) => {
                    RankRecord::decode(&bytes).map_err(|e| Error::corrupt("ranking record", e))?
                }
                None => None,
            };
            found.insert(
                row.path.clone(),
                RankedFile {
                    row,
                    collection,
                    record,
                },
            );
        }
        Ok(paths.iter().map(|p| found.remove(*p)).collect())
    }

    /// Whether any file has a companion-documentation link (most lakes have none: a
    /// search then asks no candidate for one).
    pub fn has_companion_links(&self) -> Result<bool> {
        let found = self
            .conn
            .prepare_cached("SELECT EXISTS(SELECT 1 FROM companions)")
            .and_then(|mut s| s.query_row([], |r| r.get::<_, bool>(0)));
        match found {
            Ok(b) => Ok(b),
            Err(e) if super::companions::missing_table(&e) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }
}

#[cfg(test)]
mod tests;
