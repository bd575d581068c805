//! Errors of the indexer library.
//!
//! As in milli, errors are split in two: [`UserError`] is something the person running
//! lakestar can fix (no index here, index locked, written by another version), and
//! [`InternalError`] is a fault of the machine or of lakestar itself (SQLite, I/O on the
//! index). Per-file problems met while indexing a lake are *not* errors of this kind: they
//! are recorded on the file's catalog row and the run goes on.

use std::path::PathBuf;

/// Result alias of the indexer library.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Any error of the indexer library.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Something the user can fix; the message says how.
    #[error(transparent)]
    User(#[from] UserError),
    /// A fault of the machine or of lakestar.
    #[error(transparent)]
    Internal(#[from] InternalError),
}

/// Errors the person running lakestar can fix.
#[derive(Debug, thiserror::Error)]
pub enum UserError {
    /// No index where one was asked for or searched for.
    #[error(
        "no lakestar index found {searched}; run `lakestar index LAKE` first, or pass --index DIR"
    )]
    NoIndex {
        /// Where we looked, in words ("at /x/.lakestar", "in /x or any parent").
        searched: String,
    },
    /// Another process holds the writer lock.
    #[error("index {} is locked by pid {pid} (another `lakestar index` or `watch` is running); wait for it to finish or stop it", dir.display())]
    Locked {
        /// The index directory.
        dir: PathBuf,
        /// The pid recorded by the lock holder, or 0 when it could not be read.
        pid: u32,
    },
    /// The index was written by an incompatible version of lakestar.
    #[error("index {} has format version {found}, this lakestar reads version {expected}; re-index with `lakestar index --rebuild`", dir.display())]
    IncompatibleFormat {
        /// The index directory.
        dir: PathBuf,
        /// Version found on disk.
        found: String,
        /// Version this build reads and writes.
        expected: u32,
    },
    /// The lake directory does not exist or is not a directory.
    #[error("lake {} is not a readable directory: {reason}", path.display())]
    BadLake {
        /// The path given.
        path: PathBuf,
        /// Why it was refused.
        reason: String,
    },
    /// The index belongs to another lake than the one given.
    #[error("index {} belongs to lake {}, not {}; pass the right --index or use --rebuild", index.display(), recorded.display(), given.display())]
    OtherLake {
        /// The index directory.
        index: PathBuf,
        /// The lake recorded in the index.
        recorded: PathBuf,
        /// The lake given on the command line.
        given: PathBuf,
    },
    /// The index's vectors were made by another embedder than the one asked for.
    #[error("the index was embedded with {recorded}, not {given}; re-run `lakestar index` with the embedder you want to search with")]
    EmbedderMismatch {
        /// Embedder recorded in the index.
        recorded: String,
        /// Embedder asked for.
        given: String,
    },
    /// A model could not be installed, found or distilled.
    #[error(transparent)]
    Model(crate::models::ModelError),
    /// The embedder asked for cannot be built (bad spec, missing model files).
    #[error("cannot use that embedder: {0}")]
    BadEmbedder(String),
    /// A ranking override (a `LAKESTAR_*` tuning variable) is not a usable value.
    #[error("{variable}={value:?} is not {expected}; fix or unset that environment variable")]
    BadRanking {
        /// The variable.
        variable: String,
        /// Its value.
        value: String,
        /// What it must be.
        expected: &'static str,
    },
    /// A format filter names no format lakestar knows.
    #[error(
        "unknown format {given:?}; use one of: {known} (extensions work too: xlsx, md, db, …)"
    )]
    UnknownFormat {
        /// What was asked for.
        given: String,
        /// The known format names, comma-separated.
        known: String,
    },
    /// The operating system refused to watch the lake.
    #[error("cannot watch {}: {reason}; if a limit was reached, raise it (Linux: sysctl fs.inotify.max_user_watches / max_user_instances), or run `lakestar index` when the lake changes", path.display())]
    Watch {
        /// The lake.
        path: PathBuf,
        /// What the watcher said.
        reason: String,
    },
    /// A search's path glob is too long or malformed.
    #[error(transparent)]
    BadGlob(#[from] crate::search::glob::GlobError),
    /// A file asked about cannot be read.
    #[error("cannot read {}: {source}", path.display())]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// Faults of the machine or of lakestar itself.
#[derive(Debug, thiserror::Error)]
pub enum InternalError {
    /// SQLite failed.
    #[error("catalog database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// I/O on the index directory failed.
    #[error("I/O error on {}: {source}", path.display())]
    Io {
        /// The path being read or written.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A stored description could not be decoded.
    #[error(
        "corrupt description blob in the catalog: {0}; re-index with `lakestar index --rebuild`"
    )]
    CorruptBlob(String),
    /// The full-text index or the embedder failed.
    #[error("search index error: {0}")]
    Search(String),
    /// A worker thread died.
    #[error("indexing worker failed: {0}")]
    Worker(String),
}

impl From<rusqlite::Error> for Error {
    fn from(e: rusqlite::Error) -> Self {
        Error::Internal(InternalError::Sqlite(e))
    }
}

impl Error {
    /// An I/O error on `path`, as an internal error.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Internal(InternalError::Io {
            path: path.into(),
            source,
        })
    }

    /// True when the user can fix it (exit code 2 at the CLI rather than 1).
    pub fn is_user_error(&self) -> bool {
        matches!(self, Error::User(_))
    }
}
