//! What an index holds: the `status` of the CLI, the HTTP API and the MCP server.

use lakestar_index::catalog::MetaKey;
use lakestar_index::catalog::{CatalogStats, FileError};
use lakestar_index::search::ann::{self, VectorStatus};
use lakestar_index::CatalogReader;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Counts, size, errors and the last run of one index.
#[derive(Debug, Serialize)]
pub struct Status {
    /// The lake the index describes.
    pub lake_root: PathBuf,
    /// The index directory.
    pub index_dir: PathBuf,
    /// Bytes the index takes on disk.
    pub index_bytes: u64,
    /// Files in the catalog.
    pub files: u64,
    /// Their total size.
    pub bytes: u64,
    /// Files per format.
    pub by_format: BTreeMap<String, u64>,
    /// Files per state (ok, error, unreadable, ...).
    pub by_state: BTreeMap<String, u64>,
    /// Descriptions in the content-addressed cache.
    pub cached_descriptions: u64,
    /// Collections of same-schema files.
    pub collections: u64,
    /// Files that could not be described, and why.
    pub errors: Vec<FileError>,
    /// When the last index run (or watch batch) finished, RFC 3339.
    pub last_index_at: Option<String>,
    /// That run's report.
    pub last_index: Option<serde_json::Value>,
    /// Vector search: exact or the HNSW graph, with its generation, points, tombstones.
    pub vectors: Option<VectorStatus>,
}

/// A Unix-milliseconds timestamp as RFC 3339 (UTC, seconds).
pub fn rfc3339(ms: i64) -> String {
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms.max(0) as u64);
    humantime::format_rfc3339_seconds(t).to_string()
}

/// Bytes under `dir` (0 when it cannot be listed: a figure for display only).
fn dir_size(dir: &Path) -> u64 {
    fn walk(dir: &Path) -> std::io::Result<u64> {
        let mut total = 0;
        for e in std::fs::read_dir(dir)? {
            let e = e?;
            let md = e.metadata()?;
            total += if md.is_dir() {
                walk(&e.path())?
            } else {
                md.len()
            };
        }
        Ok(total)
    }
    walk(dir).unwrap_or(0)
}

/// The status of the index at `dir`, read from one catalog connection.
pub fn status(dir: &Path) -> lakestar_index::Result<Status> {
    let cat = CatalogReader::open(dir)?;
    let CatalogStats {
        files,
        bytes,
        by_format,
        by_state,
        cached_descriptions,
        errors,
    } = cat.stats()?;
    let last_ms: Option<i64> = cat
        .meta(MetaKey::LastIndexFinishedAt)?
        .and_then(|s| s.parse().ok());
    let vectors = match cat.meta(MetaKey::Embedder)? {
        Some(embedder) => Some(ann::status(&cat, dir, &embedder)?),
        None => None,
    };
    Ok(Status {
        lake_root: cat.lake_root()?,
        index_bytes: dir_size(dir),
        index_dir: dir.to_path_buf(),
        files,
        bytes,
        by_format,
        by_state,
        cached_descriptions,
        collections: cat.collections()?.len() as u64,
        errors,
        last_index_at: last_ms.map(rfc3339),
        last_index: cat
            .meta(MetaKey::LastIndexReport)?
            .and_then(|s| serde_json::from_str(&s).ok()),
        vectors,
    })
}
