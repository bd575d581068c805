//! The ranking records of descriptions (`rank_records`: (hash, analyzer) → the
//! [`RankRecord`] of that description, as stored), and what a search's candidate stage
//! reads in one query: a file's row, its collection and its record
//! ([`CatalogReader::ranked_file`]).
//!
//! A table of its own rather than a column of `descriptions`: a `descriptions` row is
//! mostly its blob, often spilling to overflow pages, and a column added after it would
//! be read through them; the records' rows are small, and their pages dense.
//!
//! The writer stores a record with every description it stores ([`put`]). A trigger
//! deletes the record of a description that is replaced, so that a writer that does not
//! know records (an older binary) leaves none rather than a stale one; a description
//! without a usable record is decoded whole by search, as before records.

use super::dictionaries::Decompressors;
use super::files::{self, FILE_COLUMNS};
use super::{CatalogReader, FileRow, MetaKey};
use crate::analyze::record::{RankRecord, RECORD_VERSION};
use crate::analyze::Description;
use crate::error::{Error, Result};
use rusqlite::{params, Connection};
use std::collections::HashMap;
use std::path::Path;

/// Created when a writer opens the catalog, so that older indexes gain it without a
/// format change ([`create_in_existing`]).
pub(super) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS rank_records (
    hash     BLOB NOT NULL,
    analyzer TEXT NOT NULL,
    record   BLOB NOT NULL,
    PRIMARY KEY (hash, analyzer)
) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS descriptions_record_stale AFTER UPDATE ON descriptions BEGIN
    DELETE FROM rank_records WHERE hash = old.hash AND analyzer = old.analyzer;
END;
CREATE TRIGGER IF NOT EXISTS descriptions_record_gone AFTER DELETE ON descriptions BEGIN
    DELETE FROM rank_records WHERE hash = old.hash AND analyzer = old.analyzer;
END;
";

/// Store the record of description `d`, just stored under (hash, analyzer).
pub(super) fn put(conn: &Connection, hash: &[u8], analyzer: &str, d: &Description) -> Result<()> {
    conn.prepare_cached(
        "INSERT OR REPLACE INTO rank_records(hash, analyzer, record) VALUES (?1, ?2, ?3)",
    )?
    .execute(params![hash, analyzer, RankRecord::of(d).encode()])?;
    Ok(())
}

/// Create the table in a catalog made before it, and derive the record of every
/// description when the catalog's records are of none or another [`RECORD_VERSION`]
/// (in one transaction; a few seconds at 100k files, once).
pub(super) fn create_in_existing(conn: &mut Connection, dir: &Path) -> Result<()> {
    conn.execute_batch(SCHEMA)?;
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
        let mut rows = all.query([])?;
        while let Some(r) = rows.next()? {
            let (hash, analyzer): (Vec<u8>, String) = (r.get(0)?, r.get(1)?);
            let (blob, raw_len): (Vec<u8>, i64) = (r.get(2)?, r.get(3)?);
            let json =
                decompressors.decompress(&tx, dir, &blob, (raw_len.max(0) as usize).max(1))?;
            let d: Description =
                serde_json::from_slice(&json).map_err(|e| Error::corrupt("description", e))?;
            put(&tx, &hash, &analyzer, &d)?;
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
    /// Whether the catalog has the `rank_records` table (a catalog written only by
    /// binaries before it has not; such a catalog read without a writer searches by
    /// decoding descriptions).
    pub fn has_rank_records(&self) -> Result<bool> {
        Ok(self.conn.query_row(
            "SELECT EXISTS(SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'rank_records')",
            [],
            |r| r.get(0),
        )?)
    }

    /// The row, collection and ranking record of the file at `path` (see
    /// [`CatalogReader::ranked_files`]).
    pub fn ranked_file(&self, path: &str, records: bool) -> Result<Option<RankedFile>> {
        Ok(self.ranked_files(&[path], records)?.pop().flatten())
    }

    /// The row, collection and ranking record of each file of `paths`, in one query
    /// (`None` for a path the catalog does not have), in the order of `paths`; the
    /// records are looked for only when `records` (the catalog has the table, see
    /// [`CatalogReader::has_rank_records`]). One query for a search's ~400 candidates
    /// rather than one each: a statement's step, bindings and reset cost about as much
    /// as its seek.
    pub fn ranked_files(&self, paths: &[&str], records: bool) -> Result<Vec<Option<RankedFile>>> {
        // Columns 0–15 are `FILE_COLUMNS` (what `files::row_from` reads).
        let record = if records {
            "(SELECT record FROM rank_records r
              WHERE r.hash = files.hash AND r.analyzer = files.analyzer)"
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
            let collection = r.get::<_, Option<String>>(16)?;
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
