//! lakestar's indexer: crawl a data lake, describe every file, and keep the descriptions
//! in an on-disk catalog that later runs update incrementally.
//!
//! The pipeline, one module per stage:
//! [`crawl`] (walk and stat) → [`indexer`] (change detection, hashing, parallel analysis,
//! batched commits) → [`analyze`] (format detection and per-format descriptions) →
//! [`catalog`] (SQLite + zstd blobs). [`lock`] keeps writers apart; [`locate`] finds an
//! index the way git finds a repository. No LLM is involved anywhere in this crate.

pub mod analyze;
pub mod catalog;
pub mod collect;
pub mod compact;
pub mod companion;
pub mod crawl;
pub mod dataset;
pub mod embed;
mod error;
mod failpoint;
pub mod indexer;
#[cfg(test)]
mod layering_tests;
pub mod locate;
pub mod lock;
pub mod models;
pub mod preview;
pub mod progress;
pub mod search;
pub mod spool;
pub mod store;
// Generators for benchmarks and tests, not for library users: behind a feature.
#[cfg(any(test, feature = "synth"))]
pub mod synth;
pub(crate) mod text_util;
pub mod watch;

pub use analyze::{describe, render, Description, Format, RenderOptions, Source};
pub use catalog::{CatalogReader, CatalogWriter, FileRow, FileState};
pub use error::{DatasetError, DecodeError, Error, InternalError, Result, UserError};
pub use indexer::{index, IndexOptions, IndexReport, Progress};

/// Now, in milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Describe the file at `path` on the fly, outside any index.
pub fn describe_file(path: &std::path::Path) -> Result<Description> {
    let src =
        Source::open(path, indexer::IN_MEMORY_LIMIT).map_err(|source| UserError::Unreadable {
            path: path.to_path_buf(),
            source,
        })?;
    Ok(describe(&src))
}
