//! Errors of the indexer library.
//!
//! As in milli, errors are split in two: [`UserError`] is something the person running
//! lakestar can fix (no index here, index locked, written by another version), and
//! [`InternalError`] is a fault of the machine or of lakestar itself (SQLite, I/O on the
//! index). Per-file problems met while indexing a lake are *not* errors of this kind: they
//! are recorded on the file's catalog row and the run goes on.
//!
//! Errors of the parts (the text index, the embedder, a stored value's decoder) are kept
//! as the [`source`](std::error::Error::source) of the variant that wraps them, not
//! flattened into strings.

use crate::embed::EmbedError;
use crate::models::ModelError;
use std::path::PathBuf;
use tantivy::TantivyError;

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
    /// The index was written by an older version of lakestar, whose catalog the next
    /// `lakestar index` upgrades in place; only a writer may change it.
    #[error("index {} has format version {found}, older than this lakestar's {expected}; run `lakestar index` once to upgrade it in place (or re-index with `lakestar index --rebuild`)", dir.display())]
    OlderFormat {
        /// The index directory.
        dir: PathBuf,
        /// Version found on disk.
        found: u32,
        /// Version this build reads and writes.
        expected: u32,
    },
    /// An object-store lake could not be opened or listed.
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
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
    Model(ModelError),
    /// The embedder asked for cannot be built (bad spec, options or model name).
    #[error("cannot use that embedder: {0}")]
    BadEmbedder(String),
    /// The embedder asked for was found but cannot be loaded or reached (its model
    /// files, its server).
    #[error("cannot use that embedder: {0}")]
    UnusableEmbedder(#[source] EmbedError),
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
    #[error("cannot watch {}: {source}; if a limit was reached, raise it (Linux: sysctl fs.inotify.max_user_watches / max_user_instances), or run `lakestar index` when the lake changes", path.display())]
    Watch {
        /// The lake.
        path: PathBuf,
        /// What the watcher said.
        source: notify::Error,
    },
    /// A search's path glob is too long or malformed.
    #[error(transparent)]
    BadGlob(#[from] GlobError),
    /// A file asked about cannot be read.
    #[error("cannot read {}: {source}", path.display())]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The full-text index is being written by another process, or was written by
    /// another version ([`TextIndexError::is_user_error`]); its message says what to do.
    #[error(transparent)]
    TextIndex(TextIndexError),
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
    /// A value stored in the catalog could not be decoded when read: the index is damaged.
    #[error("corrupt {what} in the catalog: {source}; re-index with `lakestar index --rebuild`")]
    CorruptBlob {
        /// What was being read ("description", "collection", …).
        what: &'static str,
        /// Why it did not decode.
        source: DecodeError,
    },
    /// A meta key every index records is missing: the index is damaged.
    #[error("the catalog records no {key}; re-index with `lakestar index --rebuild`")]
    MissingMeta {
        /// The meta key.
        key: &'static str,
    },
    /// A value could not be serialised to be stored. Every stored type serialises, so
    /// this is a bug of lakestar, not a damaged index.
    #[error("cannot serialise {what} for the catalog: {source}; this is a bug in lakestar, please report it")]
    Serialize {
        /// What was being written.
        what: &'static str,
        /// serde_json's error.
        source: serde_json::Error,
    },
    /// The full-text index failed; its message says what to do.
    #[error(transparent)]
    TextIndex(TextIndexError),
    /// The embedder failed; its message says what to do.
    #[error(transparent)]
    Embed(#[from] EmbedError),
    /// The indexing threads could not be started.
    #[error("cannot start {jobs} indexing threads: {source}; pass a smaller --jobs")]
    ThreadPool {
        /// Threads asked for.
        jobs: usize,
        /// rayon's error.
        source: rayon::ThreadPoolBuildError,
    },
    /// A worker thread died.
    #[error("indexing worker failed: {0}")]
    Worker(String),
}

/// Why a stored value could not be decoded.
#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    /// Decompressing failed (zstd reports through `io::Error`).
    #[error("zstd: {0}")]
    Zstd(#[from] std::io::Error),
    /// The decompressed bytes are not UTF-8.
    #[error("not UTF-8: {0}")]
    Utf8(#[from] std::string::FromUtf8Error),
    /// The JSON does not decode into the stored type.
    #[error("JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// The blob was compressed with a dictionary the catalog does not hold.
    #[error("its zstd dictionary {0} is not in the catalog")]
    MissingDictionary(u32),
    /// A ranking record (`analyze::record`) does not decode.
    #[error("{0}")]
    Record(#[from] RecordError),
}

/// Why a stored ranking record (`analyze::record`) did not decode.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// The bytes end inside the named part.
    #[error("it ends inside {0}")]
    Truncated(&'static str),
    /// A string is not UTF-8.
    #[error("a string is not UTF-8: {0}")]
    Utf8(#[from] std::str::Utf8Error),
    /// Bytes follow the last list.
    #[error("{0} bytes follow its end")]
    Trailing(usize),
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

    /// A stored `what` that did not decode when read.
    pub(crate) fn corrupt(what: &'static str, source: impl Into<DecodeError>) -> Self {
        Error::Internal(InternalError::CorruptBlob {
            what,
            source: source.into(),
        })
    }

    /// A `what` that did not serialise to be stored.
    pub(crate) fn serialize(what: &'static str, source: serde_json::Error) -> Self {
        Error::Internal(InternalError::Serialize { what, source })
    }

    /// True when the user can fix it (exit code 2 at the CLI rather than 1).
    pub fn is_user_error(&self) -> bool {
        matches!(self, Error::User(_))
    }
}

impl From<TextIndexError> for Error {
    /// A busy or other-version text index is the user's to fix, like the catalog's own
    /// lock and format; the rest is internal.
    fn from(e: TextIndexError) -> Self {
        if e.is_user_error() {
            Error::User(UserError::TextIndex(e))
        } else {
            Error::Internal(InternalError::TextIndex(e))
        }
    }
}

impl From<EmbedError> for Error {
    fn from(e: EmbedError) -> Self {
        Error::Internal(InternalError::Embed(e))
    }
}

impl From<ModelError> for Error {
    fn from(e: ModelError) -> Self {
        match e {
            ModelError::Io { path, source } => InternalError::Io { path, source }.into(),
            other => UserError::Model(other).into(),
        }
    }
}

// The errors of the text index and of path globs are defined here rather than in
// `search`, which returns this module's `Error`: so `error` depends on no module that
// depends on it (`search::text` and `search::glob` re-export them).

/// Errors of the text index; each message says what to do about it.
#[derive(Debug, thiserror::Error)]
pub enum TextIndexError {
    /// The index directory could not be created.
    #[error("cannot create the text index directory {}: {source}; check that the index directory is writable", dir.display())]
    CreateDir {
        /// The index directory.
        dir: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The directory holds an index with other fields (another lakestar version).
    #[error("text index {} was written by another version of lakestar (its fields differ); delete that directory and re-run `lakestar index` to rebuild it", dir.display())]
    SchemaMismatch {
        /// The index directory.
        dir: PathBuf,
    },
    /// Another process is writing the index.
    #[error("text index {} is being written by another process (another `lakestar index` or `watch`); wait for it to finish or stop it", dir.display())]
    Locked {
        /// The index directory.
        dir: PathBuf,
    },
    /// The index could not be opened.
    #[error("cannot open the text index {}: {source}; if it is damaged, delete that directory and re-run `lakestar index` to rebuild it", dir.display())]
    Open {
        /// The index directory.
        dir: PathBuf,
        /// tantivy's error.
        source: TantivyError,
    },
    /// An update failed; none of it was committed.
    #[error("cannot update the text index {}: {source}; nothing of this update was committed, check free disk space and run the update again", dir.display())]
    Write {
        /// The index directory.
        dir: PathBuf,
        /// tantivy's error.
        source: TantivyError,
    },
    /// Reading the index failed.
    #[error("cannot read the text index {}: {source}; if this persists, delete that directory and re-run `lakestar index` to rebuild it", dir.display())]
    Read {
        /// The index directory.
        dir: PathBuf,
        /// tantivy's error.
        source: TantivyError,
    },
}

impl TextIndexError {
    /// True for what the user can fix: another writer, or an index of another version.
    pub fn is_user_error(&self) -> bool {
        matches!(
            self,
            TextIndexError::Locked { .. } | TextIndexError::SchemaMismatch { .. }
        )
    }
}

/// Bytes of a glob at most. Real path filters are a few dozen bytes; the bound keeps what
/// a client can make the server compile small.
pub const MAX_GLOB_BYTES: usize = 512;

/// A glob that cannot be used. Both are the user's to fix (a 400 over HTTP).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GlobError {
    /// Longer than [`MAX_GLOB_BYTES`].
    #[error("the glob is {len} bytes; at most {MAX_GLOB_BYTES} are accepted: give a shorter pattern, such as sales/**/*.csv")]
    TooLong {
        /// Its length in bytes.
        len: usize,
    },
    /// Not a glob (an unclosed `[` or `{`, a bad range).
    #[error("{pattern:?} is not a valid glob ({reason}); give a pattern such as sales/**/*.csv: `*` and `?` match within one directory, `**` spans directories, [abc] and {{a,b}} choose")]
    Invalid {
        /// The pattern given (cut to 200 characters).
        pattern: String,
        /// What globset said.
        reason: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    #[test]
    fn a_text_index_error_keeps_tantivys_error_as_its_source() {
        let e = Error::from(TextIndexError::Read {
            dir: "/i/text".into(),
            source: tantivy::TantivyError::InvalidArgument("bad segment".into()),
        });
        assert!(!e.is_user_error());
        assert!(e.to_string().contains("re-run `lakestar index`"), "{e}");
        let source = e.source().expect("a source");
        assert!(source.is::<tantivy::TantivyError>(), "{source:?}");

        let locked = Error::from(TextIndexError::Locked {
            dir: "/i/text".into(),
        });
        assert!(locked.is_user_error(), "{locked}");
    }

    #[test]
    fn a_blob_that_does_not_decode_keeps_the_decoders_error_and_says_to_rebuild() {
        let json = serde_json::from_str::<u32>("{").unwrap_err();
        let e = Error::corrupt("collection", json);
        let msg = e.to_string();
        assert!(
            msg.starts_with("corrupt collection in the catalog: JSON: "),
            "{msg}"
        );
        assert!(msg.contains("lakestar index --rebuild"), "{msg}");
        let source = e.source().expect("a source");
        assert!(matches!(
            source.downcast_ref::<DecodeError>(),
            Some(DecodeError::Json(_))
        ));
        assert!(source
            .source()
            .expect("the decoder's")
            .is::<serde_json::Error>());
    }

    #[test]
    fn a_value_that_does_not_serialise_is_a_bug_not_a_damaged_index() {
        // JSON objects need string keys.
        let map = std::collections::HashMap::from([((1, 2), 3)]);
        let e = Error::serialize("walk options", serde_json::to_string(&map).unwrap_err());
        let msg = e.to_string();
        assert!(msg.contains("bug in lakestar"), "{msg}");
        assert!(
            !msg.contains("corrupt") && !msg.contains("rebuild"),
            "{msg}"
        );
        assert!(e.source().expect("a source").is::<serde_json::Error>());
    }
}

/// Why a table that spans many files (`dataset`: a Delta log, Iceberg metadata, a Hive
/// layout) could not be described. It is that table's error, stored on its row and
/// shown by `describe`; it never fails a run.
#[derive(Debug, thiserror::Error)]
pub enum DatasetError {
    /// A log or metadata file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A log or metadata file is not the JSON it should be.
    #[error("{path} is not valid JSON: {source}")]
    Json {
        path: String,
        #[source]
        source: serde_json::Error,
    },
    /// The JSON parsed but lacks what the format requires.
    #[error("{path}: {what}")]
    Malformed { path: String, what: String },
    /// An Iceberg manifest list or manifest that is not a readable Avro object container
    /// file of the shape the Iceberg spec gives (or a Parquet file of a Delta checkpoint
    /// that its reader failed on).
    #[error("{path} cannot be read: {what}; if the file was cut short or copied from an unfinished write, copy it again (the table is described again when its files change)")]
    Unreadable { path: String, what: String },
    /// A Delta log whose JSON commits no longer start at version 0 (older commits were
    /// cleaned up) and that has no checkpoint to start from (none named by
    /// `_last_checkpoint`, none complete in its listing).
    #[error("the Delta log {path} starts at version {first} and has no checkpoint to start from")]
    CheckpointOnly { path: String, first: u64 },
}

impl DatasetError {
    pub(crate) fn malformed(path: &str, what: impl Into<String>) -> Self {
        DatasetError::Malformed {
            path: path.to_string(),
            what: what.into(),
        }
    }

    pub(crate) fn unreadable(path: &str, what: impl ToString) -> Self {
        DatasetError::Unreadable {
            path: path.to_string(),
            what: what.to_string(),
        }
    }
}
