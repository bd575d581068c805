//! The paths that disappeared since the last run, by content hash: a new path with the
//! same content claims one as a rename; those left unclaimed are deleted at the run's
//! end.
//!
//! Held in memory, whole rows, up to a bound ([`super::GONE_IN_MEMORY`]); past it, a
//! temporary SQLite table of (path, hash), the rows read back from the catalog when
//! claimed. A folder of a million files moved or deleted must not hold a million rows in
//! memory; a table keyed by hash is what the claims need, and SQLite is already the
//! catalog's store. Its file is made in the index directory (where the run's spools go,
//! not a temporary directory that may be memory) and unlinked once open, as SQLite does
//! with its own temporary databases, so that even a killed run leaves nothing behind.

use crate::catalog::{CatalogReader, FileRow, Hash};
use crate::error::Result;
use rusqlite::{params, Connection, OptionalExtension};
use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// The gone paths, shared by the workers that claim them.
pub(super) struct Gone {
    store: Mutex<Store>,
    /// A claim from the table found no reader to read its row with (said once).
    unread: AtomicBool,
}

enum Store {
    /// Rows by hash, each list sorted by path, largest first (claims pop the smallest).
    Memory {
        by_hash: HashMap<Hash, Vec<FileRow>>,
        /// Rows without a hash (unreadable last time): never claimed, only deleted.
        unhashed: Vec<String>,
    },
    /// `gone(path, hash)`, hash NULL for the unhashed, and an index by (hash, path).
    Table(Connection),
}

impl Store {
    fn memory() -> Store {
        Store::Memory {
            by_hash: HashMap::new(),
            unhashed: Vec::new(),
        }
    }
}

impl Gone {
    /// No gone paths.
    #[cfg(test)]
    pub(super) fn empty() -> Gone {
        Gone::from_store(Store::memory())
    }

    fn from_store(store: Store) -> Gone {
        Gone {
            store: Mutex::new(store),
            unread: AtomicBool::new(false),
        }
    }

    /// The gone rows, in memory until there are more than `in_memory` of them, then in a
    /// table whose file is made in `dir`.
    pub(super) fn collect(
        rows: impl Iterator<Item = Result<FileRow>>,
        in_memory: usize,
        dir: &Path,
    ) -> Result<Gone> {
        let mut store = Store::memory();
        for (i, row) in rows.enumerate() {
            let row = row?;
            if i == in_memory {
                store = to_table(store, dir)?;
            }
            match &mut store {
                Store::Memory { by_hash, unhashed } => match row.hash {
                    Some(h) => by_hash.entry(h).or_default().push(row),
                    None => unhashed.push(row.path),
                },
                Store::Table(conn) => insert(conn, &row.path, row.hash.as_ref())?,
            }
        }
        if let Store::Memory { by_hash, .. } = &mut store {
            // Deterministic claims among rows of the same content: the smallest path
            // first (popped from the end).
            for v in by_hash.values_mut() {
                v.sort_by(|a, b| b.path.cmp(&a.path));
            }
        }
        Ok(Gone::from_store(store))
    }

    /// Claim a gone row of content `hash` (the smallest path among them), its row read
    /// from `reader` when the rows are in the table. `None` when there is none, or when
    /// the table or the row cannot be read: the new path is then described as new, and
    /// the gone one stays to be deleted, which loses nothing.
    pub(super) fn claim(&self, hash: &Hash, reader: Option<&CatalogReader>) -> Option<FileRow> {
        let mut store = self.store.lock().unwrap_or_else(|p| p.into_inner());
        match &mut *store {
            Store::Memory { by_hash, .. } => by_hash.get_mut(hash).and_then(Vec::pop),
            Store::Table(conn) => {
                let Some(reader) = reader else {
                    if !self.unread.swap(true, Ordering::Relaxed) {
                        tracing::warn!(
                            "the catalog could not be opened to read renamed files' rows: they are described again"
                        );
                    }
                    return None;
                };
                match claim_in(conn, hash, reader) {
                    Ok(row) => row,
                    Err(e) => {
                        tracing::warn!("a renamed file is described again: {e}");
                        None
                    }
                }
            }
        }
    }

    /// The paths left unclaimed, `chunk` at a time (in path order when they are in the
    /// table); returns how many.
    pub(super) fn for_each_left(
        self,
        chunk: usize,
        mut f: impl FnMut(Vec<String>) -> Result<()>,
    ) -> Result<u64> {
        let chunk = chunk.max(1);
        let mut n = 0u64;
        let mut emit = |paths: &mut Vec<String>| -> Result<()> {
            n += paths.len() as u64;
            f(std::mem::take(paths))
        };
        let mut paths = Vec::with_capacity(chunk);
        match self.store.into_inner().unwrap_or_else(|p| p.into_inner()) {
            Store::Memory { by_hash, unhashed } => {
                let rows = by_hash.into_values().flatten().map(|r| r.path);
                for p in unhashed.into_iter().chain(rows) {
                    paths.push(p);
                    if paths.len() == chunk {
                        emit(&mut paths)?;
                    }
                }
            }
            Store::Table(conn) => {
                // A page at a time, by path: no statement is kept open across `f`.
                let mut stmt =
                    conn.prepare("SELECT path FROM gone WHERE path > ?1 ORDER BY path LIMIT ?2")?;
                let mut after = String::new();
                loop {
                    let page: Vec<String> = stmt
                        .query_map(params![after, chunk as i64], |r| r.get(0))?
                        .collect::<rusqlite::Result<_>>()?;
                    let Some(last) = page.last() else { break };
                    after = last.clone();
                    paths = page;
                    emit(&mut paths)?;
                }
            }
        }
        if !paths.is_empty() {
            emit(&mut paths)?;
        }
        Ok(n)
    }
}

/// The rows held in memory moved to a new temporary table, its file in `dir`.
fn to_table(store: Store, dir: &Path) -> Result<Store> {
    let Store::Memory { by_hash, unhashed } = store else {
        return Ok(store);
    };
    let io = |e| crate::error::Error::io(dir, e);
    // Our handle is closed before SQLite opens the file (closing another descriptor of
    // it would drop SQLite's locks), and the name removed once SQLite holds it open.
    let path = tempfile::Builder::new()
        .prefix(".gone-")
        .suffix(".sqlite")
        .tempfile_in(dir)
        .map_err(io)?
        .into_temp_path();
    let conn = Connection::open(&path)?;
    path.close().map_err(io)?;
    conn.execute_batch(
        "PRAGMA journal_mode = OFF;
         PRAGMA synchronous = OFF;
         CREATE TABLE gone (path TEXT PRIMARY KEY, hash BLOB) WITHOUT ROWID;
         CREATE INDEX gone_hash ON gone (hash, path);",
    )?;
    for p in &unhashed {
        insert(&conn, p, None)?;
    }
    for (h, rows) in &by_hash {
        for r in rows {
            insert(&conn, &r.path, Some(h))?;
        }
    }
    Ok(Store::Table(conn))
}

fn insert(conn: &Connection, path: &str, hash: Option<&Hash>) -> Result<()> {
    conn.prepare_cached("INSERT OR REPLACE INTO gone (path, hash) VALUES (?1, ?2)")?
        .execute(params![path, hash.map(|h| &h[..])])?;
    Ok(())
}

fn claim_in(conn: &Connection, hash: &Hash, reader: &CatalogReader) -> Result<Option<FileRow>> {
    loop {
        let path: Option<String> = conn
            .prepare_cached("SELECT path FROM gone WHERE hash = ?1 ORDER BY path LIMIT 1")?
            .query_row([&hash[..]], |r| r.get(0))
            .optional()?;
        let Some(path) = path else {
            return Ok(None);
        };
        // Taken from the table once its row is read (a claim that fails on an error
        // leaves the path to be deleted); a path the catalog no longer holds has
        // nothing to claim or delete, and the next of the same content is tried.
        let row = reader.file(&path)?;
        conn.prepare_cached("DELETE FROM gone WHERE path = ?1")?
            .execute([&path])?;
        if row.is_some() {
            return Ok(row);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(path: &str, hash: Option<u8>) -> FileRow {
        let mut r = FileRow::ok_for_test(
            path,
            1,
            [hash.unwrap_or(0); 32],
            crate::analyze::Format::Csv,
            "csv@1",
        );
        r.hash = hash.map(|h| [h; 32]);
        r
    }

    fn left(g: Gone, chunk: usize) -> (u64, Vec<String>) {
        let mut all = Vec::new();
        let n = g
            .for_each_left(chunk, |paths| {
                assert!(!paths.is_empty() && paths.len() <= chunk);
                all.extend(paths);
                Ok(())
            })
            .unwrap();
        all.sort();
        (n, all)
    }

    /// The same claims and leftovers whether the rows are held in memory or in the
    /// table (whose claims read the rows from the catalog).
    #[test]
    fn memory_and_table_claim_the_same_rows_and_leave_the_same_paths() {
        let d = tempfile::tempdir().unwrap();
        let lake = d.path().join("lake");
        std::fs::create_dir_all(&lake).unwrap();
        let rows = [
            row("b.csv", Some(1)),
            row("a.csv", Some(1)),
            row("c.csv", Some(2)),
            row("dead.csv", None),
            row("e.csv", Some(3)),
        ];
        let lock = crate::lock::WriterLock::acquire(d.path()).unwrap();
        let mut cat = crate::catalog::CatalogWriter::open(lock, &lake).unwrap();
        let changes: Vec<_> = rows
            .iter()
            .map(|r| crate::catalog::Change::Upsert {
                row: r.clone(),
                description: None,
            })
            .collect();
        cat.apply(&changes).unwrap();
        let reader = CatalogReader::open(d.path()).unwrap();
        for in_memory in [0, 1, 4, 5, 100] {
            let g = Gone::collect(rows.iter().cloned().map(Ok), in_memory, d.path()).unwrap();
            let table = matches!(*g.store.lock().unwrap(), Store::Table(_));
            assert_eq!(table, in_memory < rows.len(), "{in_memory}");
            let names: Vec<_> = std::fs::read_dir(d.path())
                .unwrap()
                .map(|e| e.unwrap().file_name().into_string().unwrap())
                .filter(|n| n.starts_with(".gone-"))
                .collect();
            assert!(names.is_empty(), "the table's file is unlinked: {names:?}");
            let claimed = |h| g.claim(&[h; 32], Some(&reader)).map(|r| r.path);
            assert_eq!(claimed(1).as_deref(), Some("a.csv"), "{in_memory}");
            assert_eq!(claimed(1).as_deref(), Some("b.csv"));
            assert_eq!(claimed(1), None);
            assert_eq!(claimed(9), None);
            assert_eq!(claimed(0), None, "an unhashed row is never claimed");
            // Without a reader, the table cannot give a row: nothing is taken.
            if table {
                assert!(g.claim(&[2; 32], None).is_none());
            }
            let got = g.claim(&[3; 32], Some(&reader)).unwrap();
            assert_eq!(got, rows[4], "the whole row");
            for chunk in [1, 2, 10] {
                let g = Gone::collect(rows.iter().cloned().map(Ok), in_memory, d.path()).unwrap();
                assert!(g.claim(&[2; 32], Some(&reader)).is_some());
                assert_eq!(
                    left(g, chunk),
                    (
                        4,
                        vec!["a.csv", "b.csv", "dead.csv", "e.csv"]
                            .into_iter()
                            .map(String::from)
                            .collect()
                    ),
                    "{in_memory} {chunk}"
                );
            }
        }
    }

    /// In the table, a gone path the catalog no longer holds is passed over for the next
    /// of the same content, not claimed again and again.
    #[test]
    fn a_claim_from_the_table_passes_over_a_path_the_catalog_lacks() {
        let d = tempfile::tempdir().unwrap();
        let lake = d.path().join("lake");
        std::fs::create_dir_all(&lake).unwrap();
        let lock = crate::lock::WriterLock::acquire(d.path()).unwrap();
        let mut cat = crate::catalog::CatalogWriter::open(lock, &lake).unwrap();
        let held = row("a1.csv", Some(5));
        cat.apply(&[crate::catalog::Change::Upsert {
            row: held.clone(),
            description: None,
        }])
        .unwrap();
        let reader = CatalogReader::open(d.path()).unwrap();
        let rows = [row("a0.csv", Some(5)), held.clone(), row("a2.csv", Some(5))];
        let g = Gone::collect(rows.into_iter().map(Ok), 0, d.path()).unwrap();
        assert_eq!(g.claim(&[5; 32], Some(&reader)), Some(held));
        assert_eq!(g.claim(&[5; 32], Some(&reader)), None);
        assert_eq!(left(g, 10), (0, vec![]));
    }
}
