//! Catalog schema, pragmas and the format-version check.

use super::MetaKey;
use crate::error::{Result, UserError};
use rusqlite::Connection;
use std::path::Path;

/// Version of the on-disk index format. Bump on any incompatible change of the schema or
/// of the stored descriptions' layout; an index of another version must be rebuilt.
pub const FORMAT_VERSION: u32 = 1;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
-- WITHOUT ROWID: rows are stored in path order, so the path-ordered scan every run
-- starts with is sequential.
CREATE TABLE IF NOT EXISTS files (
    path       TEXT PRIMARY KEY,
    size       INTEGER NOT NULL,
    mtime_ns   INTEGER NOT NULL,
    hash       BLOB,
    format     TEXT NOT NULL,
    analyzer   TEXT,
    state      TEXT NOT NULL,
    error      TEXT,
    racy       INTEGER NOT NULL DEFAULT 0,
    indexed_at INTEGER NOT NULL,
    time_start TEXT,
    time_end   TEXT,
    time_source TEXT,
    sampled    INTEGER NOT NULL DEFAULT 0,
    schema     TEXT,
    template   TEXT,
    collection TEXT
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS files_hash ON files(hash);
CREATE INDEX IF NOT EXISTS files_template ON files(template);
CREATE INDEX IF NOT EXISTS files_collection ON files(collection);
CREATE TABLE IF NOT EXISTS descriptions (
    hash       BLOB NOT NULL,
    analyzer   TEXT NOT NULL,
    format     TEXT NOT NULL,
    error      TEXT,
    raw_len    INTEGER NOT NULL,
    blob       BLOB NOT NULL,
    created_at INTEGER NOT NULL,
    time_start TEXT,
    time_end   TEXT,
    time_source TEXT,
    sampled    INTEGER NOT NULL DEFAULT 0,
    schema     TEXT,
    PRIMARY KEY (hash, analyzer)
) WITHOUT ROWID;
-- Templates whose files changed since collections were last regrouped.
CREATE TABLE IF NOT EXISTS dirty_templates (
    template TEXT PRIMARY KEY
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS collections (
    id         TEXT PRIMARY KEY,
    template   TEXT NOT NULL,
    format     TEXT NOT NULL,
    members    INTEGER NOT NULL,
    time_start TEXT,
    time_end   TEXT,
    detail     TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS collections_template ON collections(template);
-- Paths whose search documents must be rewritten (marked with every file change).
CREATE TABLE IF NOT EXISTS search_dirty (
    path TEXT PRIMARY KEY
) WITHOUT ROWID;
-- Embeddings of descriptions, by description identity and embedder.
CREATE TABLE IF NOT EXISTS embeddings (
    hash     BLOB NOT NULL,
    analyzer TEXT NOT NULL,
    embedder TEXT NOT NULL,
    vector   BLOB NOT NULL,
    PRIMARY KEY (hash, analyzer, embedder)
) WITHOUT ROWID;
";

/// The files the points of the on-disk vector graph (`search::ann`) stand for: a point
/// id per file, shared by files whose vectors are identical. Separate from `SCHEMA` so
/// that catalogs made before it gain it on their next write.
const VECTOR_SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS vector_points (
    path     TEXT PRIMARY KEY,
    id       INTEGER NOT NULL,
    hash     BLOB NOT NULL,
    analyzer TEXT NOT NULL
) WITHOUT ROWID;
-- A search resolves only the points it found to their files.
CREATE INDEX IF NOT EXISTS vector_points_id ON vector_points(id);
-- Every path whose file may differ from what the graph holds for it (changed, gone,
-- new since the graph was swapped in): tombstones and the delta are found among these
-- without a join over every file.
CREATE TABLE IF NOT EXISTS vector_stale (
    path TEXT PRIMARY KEY
) WITHOUT ROWID;
";

/// WAL lets readers run during a write; NORMAL sync is durable against a killed process
/// (the WAL is fsynced at checkpoints), which is the failure we must survive.
pub(super) fn configure(conn: &Connection) -> Result<()> {
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    Ok(())
}

/// Create the schema in one transaction (a killed first run leaves nothing half-made),
/// or check the version of an existing one.
pub(super) fn init_or_check(conn: &mut Connection, dir: &Path, lake: &Path) -> Result<()> {
    let exists: bool = conn.query_row(
        "SELECT EXISTS(SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta')",
        [],
        |r| r.get(0),
    )?;
    if exists {
        check_version(conn, dir)?;
        let recorded: Option<String> = super::meta::read(conn, MetaKey::LakeRoot)?;
        if let Some(rec) = recorded {
            if Path::new(&rec) != lake {
                return Err(UserError::OtherLake {
                    index: dir.to_path_buf(),
                    recorded: rec.into(),
                    given: lake.to_path_buf(),
                }
                .into());
            }
        }
        conn.execute_batch(VECTOR_SCHEMA)?;
        conn.execute_batch(super::llm_descriptions::SCHEMA)?;
        super::companions::create_in_existing(conn)?;
        super::collections::rederive_if_older(conn)?;
        super::vectors::compact_older(conn)?;
        return Ok(());
    }
    let tx = conn.transaction()?;
    tx.execute_batch(SCHEMA)?;
    tx.execute_batch(VECTOR_SCHEMA)?;
    tx.execute_batch(super::llm_descriptions::SCHEMA)?;
    tx.execute_batch(super::companions::SCHEMA)?;
    tx.execute(
        "INSERT INTO meta(key, value) VALUES (?1, ?2), (?3, ?4), (?5, ?6)",
        rusqlite::params![
            MetaKey::FormatVersion,
            FORMAT_VERSION.to_string(),
            MetaKey::LakeRoot,
            lake.to_string_lossy(),
            MetaKey::CreatedAt,
            crate::now_ms().to_string()
        ],
    )?;
    tx.commit()?;
    // Records the current grouping rule and vector encoding (nothing to redo yet).
    super::collections::rederive_if_older(conn)?;
    super::vectors::compact_older(conn)?;
    Ok(())
}

/// Refuse an index written by another format version, with the way out in the message.
pub(super) fn check_version(conn: &Connection, dir: &Path) -> Result<()> {
    let found: Option<String> = match conn.query_row(
        "SELECT value FROM meta WHERE key = ?1",
        [MetaKey::FormatVersion],
        |r| r.get(0),
    ) {
        Ok(v) => Some(v),
        Err(rusqlite::Error::QueryReturnedNoRows) => None,
        // No meta table at all (not a lakestar catalog, or a different layout).
        Err(rusqlite::Error::SqliteFailure(_, Some(msg))) if msg.contains("no such table") => None,
        Err(e) => return Err(e.into()),
    };
    match found {
        Some(v) if v == FORMAT_VERSION.to_string() => Ok(()),
        other => Err(UserError::IncompatibleFormat {
            dir: dir.to_path_buf(),
            found: other.unwrap_or_else(|| "unknown".into()),
            expected: FORMAT_VERSION,
        }
        .into()),
    }
}
