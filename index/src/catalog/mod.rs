//! The catalog: one SQLite database (WAL mode) in the index directory.
//!
//! Tables:
//! - `meta` — key/value: format version, lake root, last run… (the keys: [`meta::Key`]).
//! - `files` — one row per crawled file: relative path, size, mtime, blake3 hash, format,
//!   analyzer key, state and last error.
//! - `descriptions` — the content-addressed cache: (hash, analyzer key) → zstd-compressed
//!   JSON of the [`Description`]. Rows outlive the files that made them, so content that
//!   comes back (a revert, a copy) is not analyzed again.
//!   Each row also holds the description's ranking record ([`crate::analyze::record`]):
//!   what a search ranks candidates by, read instead of the whole description (see
//!   [`rank_records`]).
//! - `llm_descriptions` — the LLM analyzer's cache: (hash, model, prompt hash) → the
//!   describer script's output or its error.
//! - `companions` — companion-documentation links: a headerless data file → the file
//!   documenting its columns (see [`crate::companion`]); applied by
//!   [`CatalogReader::file_description`].
//!
//! Reading is a [`CatalogReader`]; writing is only possible through the one
//! [`CatalogWriter`], which owns the index's writer lock. Every change of an index run
//! goes through [`CatalogWriter::apply`], one transaction per batch, so a killed run
//! leaves the catalog as of its last committed batch.

mod changed;
mod collections;
mod companions;
mod dictionaries;
mod digest;
mod files;
mod held;
mod known;
mod llm_descriptions;
pub mod meta;
mod rank_records;
mod regroup;
mod schema;
mod tables;
mod upgrade;
mod vector_graph;
mod vectors;

use crate::analyze::{Description, Format, TimeCoverage};
use crate::error::{InternalError, Result, UserError};
use crate::lock::WriterLock;
use rusqlite::{params, Connection, OpenFlags};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub use companions::folder_of;
pub use held::{Handover, Stored};
pub use known::KnownPages;
pub use llm_descriptions::{LlmAnalyzerKey, LlmDescription};
pub use meta::Key as MetaKey;
pub use rank_records::RankedFile;
pub use schema::FORMAT_VERSION;
pub use tables::TableRow;
pub use vector_graph::{KeyedVector, MemberRows, StaleVector};

/// File name of the catalog database inside the index directory.
pub const CATALOG_FILE: &str = "catalog.sqlite";

/// A blake3 content hash.
pub type Hash = [u8; 32];

/// State of a file's catalog row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FileState {
    /// Described.
    Ok,
    /// Read, but the analyzer failed: the description is degraded and `error` says why.
    Error,
    /// Could not be read: no hash, no description.
    Unreadable,
}

impl FileState {
    /// Stable lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            FileState::Ok => "ok",
            FileState::Error => "error",
            FileState::Unreadable => "unreadable",
        }
    }

    fn parse(s: &str) -> FileState {
        match s {
            "ok" => FileState::Ok,
            "error" => FileState::Error,
            _ => FileState::Unreadable,
        }
    }
}

/// One row of the `files` table.
#[derive(Debug, Clone, PartialEq)]
pub struct FileRow {
    /// Path relative to the lake root, `/`-separated.
    pub path: String,
    /// Size in bytes at the last index.
    pub size: u64,
    /// Modification time in nanoseconds since the Unix epoch.
    pub mtime_ns: i64,
    /// Content hash; `None` when unreadable.
    pub hash: Option<Hash>,
    /// Detected format.
    pub format: Format,
    /// Key of the analyzer whose description the row points at.
    pub analyzer: Option<String>,
    /// Row state.
    pub state: FileState,
    /// Last error, for `Error` and `Unreadable` rows.
    pub error: Option<String>,
    /// The mtime was too close to the time of reading to trust (size, mtime) next time:
    /// the next run re-hashes the file (git's "racily clean" problem).
    pub racy: bool,
    /// When the row was written, Unix milliseconds.
    pub indexed_at: i64,
    /// The time span the file covers: from its content when it shows one, else from its
    /// path.
    pub time: Option<TimeCoverage>,
    /// The description was made from a sample (the file exceeds the read budget).
    pub sampled: bool,
    /// Digest of the description's schema signature (see [`crate::collect`]).
    pub schema: Option<String>,
}

#[cfg(test)]
impl FileRow {
    /// A readable file's row as unit tests write it: `mtime_ns` 1, indexed at 0, no time
    /// coverage, schema or sample.
    pub(crate) fn ok_for_test(
        path: &str,
        size: u64,
        hash: Hash,
        format: Format,
        analyzer: &str,
    ) -> FileRow {
        FileRow {
            path: path.into(),
            size,
            mtime_ns: 1,
            hash: Some(hash),
            format,
            analyzer: Some(analyzer.into()),
            state: FileState::Ok,
            error: None,
            racy: false,
            indexed_at: 0,
            time: None,
            sampled: false,
            schema: None,
        }
    }
}

/// One change to the catalog, applied in a batch.
#[derive(Debug)]
pub enum Change {
    /// Insert or replace a file row; store the description in the cache when given.
    Upsert {
        /// The new row. With a description, its `schema` is that description's digest
        /// ([`crate::collect::schema_digest`], computed once by the indexer; a cache hit
        /// computes it again from the description, [`CatalogReader::cached`]).
        row: FileRow,
        /// A freshly computed description to cache under (row.hash, row.analyzer).
        description: Option<Box<Description>>,
    },
    /// Move a row to a new path (a rename: same content), with fresh metadata.
    Rename {
        /// The old path.
        from: String,
        /// The row at its new path.
        row: FileRow,
    },
    /// Only the metadata changed (a `touch`): same content, new mtime.
    Touch {
        /// The path.
        path: String,
        /// New size (equal to the old, by hash).
        size: u64,
        /// New mtime.
        mtime_ns: i64,
        /// New racy flag.
        racy: bool,
    },
    /// The file is gone.
    Delete {
        /// The path.
        path: String,
    },
}

/// What change detection needs to know of a file row, loaded for every row on every
/// run: kept small so that a no-change run costs little more than the crawl.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Known {
    /// Relative path.
    pub path: String,
    /// Size at the last index.
    pub size: u64,
    /// Mtime at the last index.
    pub mtime_ns: i64,
    /// Must be re-hashed whatever its metadata (see [`FileRow::racy`]).
    pub racy: bool,
    /// Could not be read last time: retried on every run.
    pub unreadable: bool,
    /// Described by another version of its format's analyzer: to be described again.
    pub stale: bool,
    /// Described from a sample (re-described by `--full`).
    pub sampled: bool,
}

/// What a file row needs of a cached description.
#[derive(Debug, Clone, PartialEq)]
pub struct Cached {
    /// The description's format.
    pub format: Format,
    /// Its analysis error, if any.
    pub error: Option<String>,
    /// The time span its content covers.
    pub time: Option<TimeCoverage>,
    /// It was made from a sample.
    pub sampled: bool,
    /// Digest of its schema signature.
    pub schema: Option<String>,
}

/// Counts and facts for `status`.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct CatalogStats {
    /// Files in the catalog.
    pub files: u64,
    /// Total size of the files, bytes.
    pub bytes: u64,
    /// Files per format.
    pub by_format: BTreeMap<String, u64>,
    /// Files per state.
    pub by_state: BTreeMap<String, u64>,
    /// Descriptions in the cache (including those of files no longer present).
    pub cached_descriptions: u64,
    /// Files in `error` or `unreadable` state, with their messages (first 1000 by path).
    pub errors: Vec<FileError>,
}

/// A file with a problem.
#[derive(Debug, Clone, serde::Serialize)]
pub struct FileError {
    /// Relative path.
    pub path: String,
    /// `error` or `unreadable`.
    pub state: String,
    /// The message.
    pub error: String,
}

/// A connection to the catalog of one index, for reading. Readers never block the
/// writer nor wait for it (WAL).
pub struct CatalogReader {
    conn: Connection,
    dir: PathBuf,
    /// Reused across descriptions (a zstd context per blob costs measurably),
    /// with the dictionaries met so far.
    decompressors: std::cell::RefCell<dictionaries::Decompressors>,
}

/// The connection that writes the catalog of one index; it owns the index's
/// [`WriterLock`], so there is at most one, and only while the lock is held. Reads go
/// through the [`CatalogReader`] it derefs to (in its own transactions' view).
pub struct CatalogWriter {
    reader: CatalogReader,
    /// Reused across batches (a zstd context per blob costs measurably), with
    /// the formats' dictionaries.
    compressors: Option<dictionaries::Compressors>,
    /// The log size above which a commit truncates it ([`schema::WAL_TRUNCATE_ABOVE`]).
    wal_bound: u64,
    /// Held for as long as the writer lives; dropped after the connection is closed.
    _lock: WriterLock,
}

impl std::ops::Deref for CatalogWriter {
    type Target = CatalogReader;

    fn deref(&self) -> &CatalogReader {
        &self.reader
    }
}

impl CatalogWriter {
    /// Open the catalog of the index whose writer `lock` is held, creating it for `lake`
    /// if it does not exist.
    pub fn open(lock: WriterLock, lake: &Path) -> Result<CatalogWriter> {
        let dir = lock.dir();
        let mut conn = Connection::open(dir.join(CATALOG_FILE))?;
        schema::configure(&conn)?;
        schema::init_or_check(&mut conn, dir, lake)?;
        conn.execute_batch(changed::SCHEMA)?;
        Ok(CatalogWriter {
            reader: CatalogReader {
                conn,
                dir: dir.to_path_buf(),
                decompressors: Default::default(),
            },
            compressors: None,
            wal_bound: schema::WAL_TRUNCATE_ABOVE,
            _lock: lock,
        })
    }
}

/// One `meta` value of the catalog at `dir`, whose format this binary reads or a
/// writer's open upgrades (`meta` is alike in every version): what a run must know
/// before its writer opens, and upgrades, the catalog (the walk it recorded).
pub fn read_meta(dir: &Path, key: MetaKey) -> Result<Option<String>> {
    let conn = Connection::open_with_flags(
        dir.join(CATALOG_FILE),
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    schema::check_version(&conn, dir)?;
    meta::read(&conn, key)
}

impl CatalogReader {
    /// Open the catalog of the index at `dir` for reading.
    pub fn open(dir: &Path) -> Result<CatalogReader> {
        let path = dir.join(CATALOG_FILE);
        if !path.is_file() {
            return Err(UserError::NoIndex {
                searched: format!("at {}", dir.display()),
            }
            .into());
        }
        let conn = Connection::open_with_flags(
            &path,
            OpenFlags::SQLITE_OPEN_READ_ONLY
                | OpenFlags::SQLITE_OPEN_NO_MUTEX
                | OpenFlags::SQLITE_OPEN_URI,
        )?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        conn.set_prepared_statement_cache_capacity(schema::STATEMENT_CACHE);
        conn.pragma_update(None, "mmap_size", schema::READ_MAP_BYTES)?;
        conn.pragma_update(None, "cache_size", -schema::READ_CACHE_KIB)?;
        // Plans that do not depend on the values bound. Otherwise SQLite marks a
        // statement for re-planning when a value it looked at while planning is bound
        // again, and the `clear_bindings` rusqlite calls on every cached statement's
        // return then throws the statement away: the companion lookups of every hit and
        // the members of a collection would be parsed anew on every call. The catalog's
        // queries have one plan whatever the values.
        conn.set_db_config(
            rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG,
            true,
        )?;
        schema::check_readable(&conn, dir)?;
        Ok(CatalogReader {
            conn,
            dir: dir.to_path_buf(),
            decompressors: Default::default(),
        })
    }

    /// Open the catalog at `dir` for one of the indexer's passes over much of it (the
    /// lookup links' threads): read as the writer's connection reads, through SQLite's
    /// default page cache, not mapped. A pass reads most of the file once, and mapped
    /// pages count in the process's resident memory: mapped readers of a million-file
    /// first index's lookups would hold gigabytes of the catalog's pages.
    pub fn open_for_pass(dir: &Path) -> Result<CatalogReader> {
        let r = CatalogReader::open(dir)?;
        r.conn.pragma_update(None, "mmap_size", 0)?;
        r.conn
            .pragma_update(None, "cache_size", -schema::DEFAULT_CACHE_KIB)?;
        Ok(r)
    }

    /// The index directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// A metadata value.
    pub fn meta(&self, key: MetaKey) -> Result<Option<String>> {
        meta::read(&self.conn, key)
    }

    /// The lake root recorded in the index.
    pub fn lake_root(&self) -> Result<PathBuf> {
        self.meta(MetaKey::LakeRoot)?
            .map(PathBuf::from)
            .ok_or_else(|| {
                InternalError::MissingMeta {
                    key: MetaKey::LakeRoot.as_str(),
                }
                .into()
            })
    }

    /// The object-store lake the index describes, opened with the endpoint its runs
    /// recorded (else `AWS_ENDPOINT_URL`) and the environment's credentials; `None` for
    /// a lake on disk. Nothing is requested yet.
    pub fn object_lake(&self) -> Result<Option<crate::store::ObjectLake>> {
        let root = self.lake_root()?;
        let url = root.to_string_lossy();
        if !crate::store::is_url(&url) {
            return Ok(None);
        }
        let endpoint = self.meta(MetaKey::Endpoint)?;
        let lake = crate::store::ObjectLake::open(&url, endpoint.as_deref())
            .map_err(crate::error::UserError::from)?;
        Ok(Some(lake))
    }

    /// Counts by format and state, errors, cache size.
    pub fn stats(&self) -> Result<CatalogStats> {
        let mut s = CatalogStats::default();
        let mut stmt = self
            .conn
            .prepare("SELECT format, state, COUNT(*), COALESCE(SUM(size), 0) FROM files GROUP BY format, state")?;
        let rows = stmt.query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, i64>(2)?,
                r.get::<_, i64>(3)?,
            ))
        })?;
        for r in rows {
            let (format, state, n, bytes) = r?;
            s.files += n as u64;
            s.bytes += bytes as u64;
            *s.by_format.entry(format).or_default() += n as u64;
            *s.by_state.entry(state).or_default() += n as u64;
        }
        s.cached_descriptions =
            self.conn
                .query_row("SELECT COUNT(*) FROM descriptions", [], |r| {
                    r.get::<_, i64>(0)
                })? as u64;
        let mut stmt = self.conn.prepare(
            "SELECT path, state, COALESCE(error, '') FROM files WHERE state != 'ok' ORDER BY path LIMIT 1000",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(FileError {
                path: r.get(0)?,
                state: r.get(1)?,
                error: r.get(2)?,
            })
        })?;
        for r in rows {
            s.errors.push(r?);
        }
        Ok(s)
    }

    /// SQLite's own consistency check; `Ok(())` when the database is sound and every
    /// described file row points at a cached description.
    pub fn check_integrity(&self) -> Result<Vec<String>> {
        let mut problems = Vec::new();
        let ic: String = self
            .conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))?;
        if ic != "ok" {
            problems.push(format!("integrity_check: {ic}"));
        }
        let mut stmt = self.conn.prepare(
            "SELECT f.path FROM files f LEFT JOIN descriptions d ON d.hash = f.hash AND d.analyzer = f.analyzer
             WHERE f.state != 'unreadable' AND d.hash IS NULL LIMIT 100",
        )?;
        for p in stmt.query_map([], |r| r.get::<_, String>(0))? {
            problems.push(format!("{}: no cached description", p?));
        }
        Ok(problems)
    }
}

impl CatalogWriter {
    /// Set a metadata value.
    pub fn set_meta(&self, key: MetaKey, value: &str) -> Result<()> {
        self.conn.execute(
            "INSERT INTO meta(key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            params![key, value],
        )?;
        Ok(())
    }

    /// Rewrite the catalog without its pages' slack (`VACUUM`) when that is worth a copy
    /// of it: after a run that filled an empty catalog (`filled`), whose rows keyed by
    /// content hash arrived in random order and left B-tree pages about four fifths full
    /// (a tenth of the catalog at 100k files, for about 1 % of the run's time), or when
    /// free pages are more than [`schema::VACUUM_FREE_SHARE`] of the file (many files
    /// deleted). Returns whether it ran. A failure (no room for the copy) costs only the
    /// size: it is logged, not returned.
    pub fn compact(&mut self, filled: bool) -> Result<bool> {
        let conn = &self.reader.conn;
        let pages: i64 = conn.query_row("PRAGMA page_count", [], |r| r.get(0))?;
        let free: i64 = conn.query_row("PRAGMA freelist_count", [], |r| r.get(0))?;
        if pages == 0 || !(filled || free as f64 > schema::VACUUM_FREE_SHARE * pages as f64) {
            return Ok(false);
        }
        if let Err(e) = conn.execute_batch("VACUUM") {
            tracing::warn!("the catalog could not be compacted (it stays as large): {e}");
            return Ok(false);
        }
        // The copy went through the log: cut it now rather than keep its size on disk.
        let wal = self.reader.dir.join(format!("{CATALOG_FILE}-wal"));
        schema::bound_wal(conn, &wal, 0)?;
        Ok(true)
    }

    /// After a commit: keep the write-ahead log bounded under constant readers
    /// ([`schema::WAL_TRUNCATE_ABOVE`]). Returns whether it was cut.
    fn bound_wal(&self) -> Result<bool> {
        let wal = self.reader.dir.join(format!("{CATALOG_FILE}-wal"));
        schema::bound_wal(&self.reader.conn, &wal, self.wal_bound)
    }
}
