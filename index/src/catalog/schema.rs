//! Catalog schema, pragmas and the format-version check.

use super::MetaKey;
use crate::error::{Result, UserError};
use rusqlite::Connection;
use std::path::Path;
use std::time::Duration;

/// Version of the on-disk index format. Bump on any incompatible change of the schema or
/// of the stored descriptions' layout; an index of another version must be rebuilt,
/// unless a writer of this one upgrades it ([`UPGRADES_FROM`]).
/// 2: an `embeddings` row may hold a point of the vector graph's current generation in
/// place of its vector (`catalog::held`), which a reader of version 1 would take for a
/// vector of no dimension, and a writer of version 1 would then lose.
/// 3: a smaller catalog (BENCHMARKS.md, "Indexing"): templates interned
/// (`templates`, `files.template` their id), schema digests and collection ids stored as
/// the bytes they spell (`catalog::digest`), the ranking record a column of
/// `descriptions`, which does not repeat what the description holds, and `files`
/// indexed by (collection, time) rather than by collection.
/// 4: the files of the vector graph's points live in its generation
/// (`search::ann::members`), not in a table of the catalog; [`MetaKey::VectorGraph`]
/// says a generation is swapped in.
/// 5: `tables`, the tables that span many files (`dataset`; a reader of version 4 would
/// show their members as files of their own).
pub const FORMAT_VERSION: u32 = 5;

/// The oldest version a writer's open upgrades in place (`super::upgrade`). A reader
/// reads only [`FORMAT_VERSION`]: an older catalog's tables have other columns, and it
/// is told to run `lakestar index` once.
const UPGRADES_FROM: u32 = 1;

/// `files` and the tables of the same layout change: a new catalog creates them from
/// this text, and the upgrade from an older version (`super::upgrade`) too, once it has
/// set the old tables aside under other names, then copies their rows over.
pub(super) const FILES: &str = "
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
    schema     BLOB,
    template   INTEGER,
    collection BLOB
) WITHOUT ROWID;
-- The files of a template (`templates.id`): regrouping reads a template folder's.
CREATE INDEX IF NOT EXISTS files_template ON files(template);
-- A collection's members by their time coverage: the members overlapping the days a
-- question asks are one range of it, read without the rows.
CREATE INDEX IF NOT EXISTS files_collection_time ON files(collection, time_start, time_end);
-- Every template of a file, once: the files' rows hold its id (a template is as long as
-- the path, and the same for most of a folder's files).
CREATE TABLE IF NOT EXISTS templates (
    id       INTEGER PRIMARY KEY,
    template TEXT NOT NULL UNIQUE
);
-- The description cache. Only what cannot be read from the description (its size
-- before compression, whether it was sampled, which an exact one replaces) and the
-- ranking record (`catalog::rank_records`), before the blob so that it is read from the
-- row's first page.
CREATE TABLE IF NOT EXISTS descriptions (
    hash       BLOB NOT NULL,
    analyzer   TEXT NOT NULL,
    raw_len    INTEGER NOT NULL,
    sampled    INTEGER NOT NULL DEFAULT 0,
    record     BLOB,
    blob       BLOB NOT NULL,
    PRIMARY KEY (hash, analyzer)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS collections (
    id         BLOB PRIMARY KEY,
    template   TEXT NOT NULL,
    format     TEXT NOT NULL,
    members    INTEGER NOT NULL,
    time_start TEXT,
    time_end   TEXT,
    detail     TEXT NOT NULL,
    -- The longest time coverage of a member, in days (NULL: unknown): the lower bound
    -- of a search for the members covering given days (`members_overlapping`).
    longest    INTEGER
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS collections_template ON collections(template);
";

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
-- Templates whose files changed since collections were last regrouped.
CREATE TABLE IF NOT EXISTS dirty_templates (
    template TEXT PRIMARY KEY
) WITHOUT ROWID;
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

/// What the catalog keeps of the on-disk vector graph (`search::ann`, whose generation
/// holds the files of its points). Separate from `SCHEMA` so that catalogs made before
/// it gain it on their next write.
pub(super) const VECTOR_SCHEMA: &str = "
-- Every path whose file may differ from what the graph holds for it (changed, gone,
-- new since the graph was swapped in): tombstones and the delta are found among these
-- without a join over every file.
CREATE TABLE IF NOT EXISTS vector_stale (
    path TEXT PRIMARY KEY
) WITHOUT ROWID;
";

/// Prepared statements a connection keeps (rusqlite's default is 16): one search reads
/// through a dozen and more of the catalog's ~45 cached statements, and an evicted one is
/// parsed again on its next use.
pub(super) const STATEMENT_CACHE: usize = 64;

/// Bytes of the catalog a reader maps rather than reads (`mmap_size`; SQLite caps it at
/// 2 GiB): a search seeks a few hundred rows in pages all over the file, and each page
/// read through the page cache costs a `pread` and a copy. Readers only
/// ([`super::CatalogReader::open`]); a writer's connection reads through the page cache.
pub(super) const READ_MAP_BYTES: i64 = 1 << 31;

/// A reader's page cache, in KiB (`cache_size`; SQLite's default is 2 MB): the pages a
/// search's seeks go through (the b-trees' upper levels, and a long-lived reader's hot
/// rows) stay parsed from one search to the next, rather than being evicted by each
/// search's ~1,500 pages and parsed again. It fills only as far as pages are read.
pub(super) const READ_CACHE_KIB: i64 = 32 << 10;

/// SQLite's own default page cache, in KiB: the writer's, and a pass's.
pub(super) const DEFAULT_CACHE_KIB: i64 = 2000;

/// How long a connection waits for a lock another one holds.
const BUSY: Duration = Duration::from_secs(5);

/// The write-ahead log's bound. SQLite starts its log over only at a moment when no
/// reader holds a snapshot that includes log frames; a constant stream of overlapping
/// readers (a poller, a busy server) never leaves one, so its automatic checkpoints copy
/// the log into the database but never reset it, and the file grows with every commit
/// (to gigabytes during a large first index under a poll). Above this size a writer's
/// commit asks for a TRUNCATE checkpoint, which copies the log (new readers then read the
/// database only), waits [`WAL_TRUNCATE_WAIT`] for the older readers to finish, and cuts
/// the log to nothing.
pub const WAL_TRUNCATE_ABOVE: u64 = 64 << 20;

/// The share of free pages above which an index run compacts the catalog
/// ([`CatalogWriter::compact`](super::CatalogWriter::compact)).
pub const VACUUM_FREE_SHARE: f64 = 0.25;

/// How long a commit waits for readers of older snapshots to finish; when they have not,
/// the log was still copied and the next commit tries again.
const WAL_TRUNCATE_WAIT: Duration = Duration::from_millis(500);

/// The size the log file is cut back to whenever it starts over (`journal_size_limit`).
const WAL_KEEP_BYTES: i64 = 16 << 20;

/// WAL lets readers run during a write; NORMAL sync is durable against a killed process
/// (the WAL is fsynced at checkpoints), which is the failure we must survive.
pub(super) fn configure(conn: &Connection) -> Result<()> {
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.pragma_update(None, "journal_size_limit", WAL_KEEP_BYTES)?;
    // Temporary tables and sorts on disk, their pages cached like the catalog's: the
    // bundled SQLite keeps them in memory otherwise, and a graph's swap at a million
    // files fills one with a row per file (`held::handover`).
    conn.pragma_update(None, "temp_store", "FILE")?;
    conn.busy_timeout(BUSY)?;
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
    Ok(())
}

/// After a writer's commit: truncate the log at `wal` when it has grown past `above`
/// (see [`WAL_TRUNCATE_ABOVE`]). Returns whether the log was cut.
pub(super) fn bound_wal(conn: &Connection, wal: &Path, above: u64) -> Result<bool> {
    match std::fs::metadata(wal) {
        Ok(m) if m.len() > above => {}
        _ => return Ok(false),
    }
    conn.busy_timeout(WAL_TRUNCATE_WAIT)?;
    let done = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, i64>(1)?,
            r.get::<_, i64>(2)?,
        ))
    });
    conn.busy_timeout(BUSY)?;
    let (busy, log, copied) = done?;
    tracing::debug!(busy, log, copied, "truncating checkpoint of a grown log");
    Ok(busy == 0)
}

/// Create the schema in one transaction (a killed first run leaves nothing half-made),
/// or check the version of an existing one and upgrade it when older.
pub(super) fn init_or_check(conn: &mut Connection, dir: &Path, lake: &Path) -> Result<()> {
    let exists: bool = conn.query_row(
        "SELECT EXISTS(SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta')",
        [],
        |r| r.get(0),
    )?;
    if exists {
        let found = check_version(conn, dir)?;
        if found != FORMAT_VERSION {
            super::upgrade::upgrade(conn, found)?;
        }
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
        conn.execute_batch(super::dictionaries::SCHEMA)?;
        super::companions::create_in_existing(conn)?;
        super::rank_records::rederive_if_older(conn, dir)?;
        super::collections::rederive_if_older(conn)?;
        super::vectors::compact_older(conn)?;
        return Ok(());
    }
    let tx = conn.transaction()?;
    tx.execute_batch(SCHEMA)?;
    tx.execute_batch(FILES)?;
    tx.execute_batch(VECTOR_SCHEMA)?;
    tx.execute_batch(super::llm_descriptions::SCHEMA)?;
    tx.execute_batch(super::dictionaries::SCHEMA)?;
    tx.execute_batch(super::companions::SCHEMA)?;
    tx.execute_batch(super::tables::SCHEMA)?;
    tx.execute(
        "INSERT INTO meta(key, value) VALUES (?1, ?2), (?3, ?4), (?5, ?6), (?7, ?8)",
        rusqlite::params![
            MetaKey::FormatVersion,
            FORMAT_VERSION.to_string(),
            MetaKey::LakeRoot,
            lake.to_string_lossy(),
            MetaKey::CreatedAt,
            crate::now_ms().to_string(),
            MetaKey::RankRecordsVersion,
            crate::analyze::record::RECORD_VERSION.to_string(),
        ],
    )?;
    tx.commit()?;
    // Records the current grouping rule and vector encoding (nothing to redo yet).
    super::collections::rederive_if_older(conn)?;
    super::vectors::compact_older(conn)?;
    Ok(())
}

/// The format version of the catalog: one this binary writes or a writer's open
/// upgrades; any other is refused, with the way out in the message.
pub(super) fn check_version(conn: &Connection, dir: &Path) -> Result<u32> {
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
    match found.as_deref().and_then(|v| v.parse::<u32>().ok()) {
        Some(v) if (UPGRADES_FROM..=FORMAT_VERSION).contains(&v) => Ok(v),
        _ => Err(UserError::IncompatibleFormat {
            dir: dir.to_path_buf(),
            found: found.unwrap_or_else(|| "unknown".into()),
            expected: FORMAT_VERSION,
        }
        .into()),
    }
}

/// Refuse to read a catalog of any version but this one's: an older one is upgraded by
/// the next writer (`lakestar index`), which the message says; a newer or unknown one
/// must be rebuilt.
pub(super) fn check_readable(conn: &Connection, dir: &Path) -> Result<()> {
    let found = check_version(conn, dir)?;
    if found == FORMAT_VERSION {
        return Ok(());
    }
    Err(UserError::OlderFormat {
        dir: dir.to_path_buf(),
        found,
        expected: FORMAT_VERSION,
    }
    .into())
}

#[cfg(test)]
mod tests {
    use crate::catalog::{CatalogWriter, CATALOG_FILE};
    use crate::lock::WriterLock;
    use rusqlite::{Connection, OpenFlags};
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::time::Duration;

    /// The largest size the log reaches while `commits` batches of embeddings are
    /// written under two readers that between them always hold a snapshot open.
    fn largest_log(bound: Option<u64>, commits: usize) -> u64 {
        let d = tempfile::tempdir().unwrap();
        let mut cat =
            CatalogWriter::open(WriterLock::acquire(d.path()).unwrap(), d.path()).unwrap();
        cat.wal_bound = bound.unwrap_or(u64::MAX);
        let stop = Arc::new(AtomicBool::new(false));
        let db = d.path().join(CATALOG_FILE);
        let readers: Vec<_> = (0..2u64)
            .map(|i| {
                let (stop, db) = (stop.clone(), db.clone());
                std::thread::spawn(move || {
                    std::thread::sleep(Duration::from_millis(20 * i));
                    let r =
                        Connection::open_with_flags(&db, OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
                    r.busy_timeout(Duration::from_secs(5)).unwrap();
                    while !stop.load(Ordering::Relaxed) {
                        r.execute_batch("BEGIN").unwrap();
                        let _: i64 = r
                            .query_row("SELECT count(*) FROM embeddings", [], |r| r.get(0))
                            .unwrap();
                        std::thread::sleep(Duration::from_millis(40));
                        r.execute_batch("COMMIT").unwrap();
                    }
                })
            })
            .collect();
        let wal = d.path().join(format!("{CATALOG_FILE}-wal"));
        let mut largest = 0;
        for c in 0..commits {
            let items: Vec<_> = (0..100u32)
                .map(|i| {
                    let mut h = [0u8; 32];
                    h[..8].copy_from_slice(&(c as u64 * 1000 + u64::from(i)).to_le_bytes());
                    let v: Vec<f32> = (0..256).map(|k| ((k + i) % 7) as f32 - 3.0).collect();
                    (h, "a".to_string(), v)
                })
                .collect();
            cat.put_embeddings("e", &items).unwrap();
            largest = largest.max(std::fs::metadata(&wal).map_or(0, |m| m.len()));
        }
        stop.store(true, Ordering::Relaxed);
        for r in readers {
            r.join().unwrap();
        }
        largest
    }

    #[test]
    fn the_log_stays_bounded_under_readers_that_always_hold_a_snapshot() {
        const MB: u64 = 1 << 20;
        let unbounded = largest_log(None, 100);
        let bounded = largest_log(Some(MB), 100);
        eprintln!("largest log: {unbounded} bytes unbounded, {bounded} bounded");
        // Without the bound the log only grows (SQLite cannot start it over while a
        // snapshot is always open); with it, it stays near the bound.
        assert!(unbounded > 8 * MB, "unbounded log: {unbounded}");
        assert!(
            bounded < 3 * MB,
            "bounded log: {bounded} (unbounded {unbounded})"
        );
    }

    #[test]
    fn a_filled_catalog_is_compacted_and_an_emptied_one_gives_its_space_back() {
        let d = tempfile::tempdir().unwrap();
        let mut cat =
            CatalogWriter::open(WriterLock::acquire(d.path()).unwrap(), d.path()).unwrap();
        let db = d.path().join(CATALOG_FILE);
        let pages = |cat: &CatalogWriter| -> i64 {
            cat.conn
                .query_row("PRAGMA page_count", [], |r| r.get(0))
                .unwrap()
        };
        // Content hashes arrive in random order, as an index run's do.
        let mut rng = fastrand::Rng::with_seed(7);
        for _ in 0..20 {
            let items: Vec<_> = (0..200)
                .map(|_| {
                    let mut h = [0u8; 32];
                    rng.fill(&mut h);
                    let v: Vec<f32> = (0..256).map(|_| rng.f32() - 0.5).collect();
                    (h, "a".to_string(), v)
                })
                .collect();
            cat.put_embeddings("e", &items).unwrap();
        }
        let before = pages(&cat);
        // Neither filled by this run nor loose: left alone.
        assert!(!cat.compact(false).unwrap());
        assert_eq!(pages(&cat), before);
        assert!(cat.compact(true).unwrap());
        let after = pages(&cat);
        assert!(
            (after as f64) < 0.95 * before as f64,
            "{before} pages before, {after} after"
        );
        let n: i64 = cat
            .conn
            .query_row("SELECT count(*) FROM embeddings", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 4000, "compacting keeps every row");
        // The copy went through the log, which is cut at once.
        let wal = d.path().join(format!("{CATALOG_FILE}-wal"));
        assert_eq!(std::fs::metadata(wal).map_or(0, |m| m.len()), 0);

        // Most rows gone: their pages are free, and the next run gives them back.
        cat.conn
            .execute("DELETE FROM embeddings WHERE hash > x'40'", [])
            .unwrap();
        assert!(cat.compact(false).unwrap());
        assert!(pages(&cat) < after / 2, "{} of {after}", pages(&cat));
        assert!(std::fs::metadata(&db).unwrap().len() < (after as u64) * 4096 / 2);
    }
}
