//! The paths a run changed, as they stood when its passes after the files began
//! (`temp.run_changed`): the companion, lookup and table passes read them a chunk at a
//! time, never all at once (every path of the lake at a first index). A snapshot rather
//! than `search_dirty` itself, which those passes add to as they mark files stale: what
//! they examine must not grow while they examine it. A temporary table of the writer's
//! connection, on disk (`temp_store` is FILE, [`super::schema::configure`]).

use super::CatalogWriter;
use crate::error::Result;
use rusqlite::{params, OptionalExtension};

/// Created when a writer opens the catalog: empty, nothing changed, until a snapshot.
pub(super) const SCHEMA: &str =
    "CREATE TEMP TABLE IF NOT EXISTS run_changed(path TEXT PRIMARY KEY) WITHOUT ROWID;";

impl CatalogWriter {
    /// Take the paths now marked stale for search as the run's changed paths (those of
    /// an earlier snapshot let go). Returns how many there are.
    pub fn snapshot_changed(&mut self) -> Result<u64> {
        let tx = self.reader.conn.transaction()?;
        tx.execute("DELETE FROM temp.run_changed", [])?;
        let n = tx.execute(
            "INSERT INTO temp.run_changed(path) SELECT path FROM search_dirty",
            [],
        )?;
        tx.commit()?;
        Ok(n as u64)
    }

    /// Up to `limit` of the snapshot's paths after `after` (from the first with `None`),
    /// in path order.
    pub fn changed_after(&self, after: Option<&str>, limit: usize) -> Result<Vec<String>> {
        // `path > ''` rather than `?1 IS NULL OR …`: a range of the key, every page
        // (paths are never empty).
        let mut stmt = self.conn.prepare_cached(
            "SELECT path FROM temp.run_changed WHERE path > ?1 ORDER BY path LIMIT ?2",
        )?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = stmt.query_map(params![after.unwrap_or(""), limit], |r| r.get(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Whether `path` is among the snapshot's paths.
    pub fn is_changed(&self, path: &str) -> Result<bool> {
        Ok(self
            .conn
            .prepare_cached("SELECT 1 FROM temp.run_changed WHERE path = ?1")?
            .query_row([path], |_| Ok(()))
            .optional()?
            .is_some())
    }

    /// Let go of the snapshot (its pages, on disk, are reused by the next one).
    pub fn forget_changed(&mut self) -> Result<()> {
        self.conn.execute("DELETE FROM temp.run_changed", [])?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lock::WriterLock;

    #[test]
    fn the_snapshot_does_not_follow_later_marks() {
        let lake = tempfile::tempdir().unwrap();
        let dir = lake.path().join(".lakestar");
        std::fs::create_dir_all(&dir).unwrap();
        let mut w = CatalogWriter::open(WriterLock::acquire(&dir).unwrap(), lake.path()).unwrap();
        assert!(w.changed_after(None, 10).unwrap().is_empty(), "none yet");
        let mark = |w: &CatalogWriter, p: &str| {
            w.conn
                .execute("INSERT OR IGNORE INTO search_dirty(path) VALUES (?1)", [p])
                .unwrap();
        };
        for p in ["b/x", "a/y", "a-b/z", "c", "a.b/w"] {
            mark(&w, p);
        }
        assert_eq!(w.snapshot_changed().unwrap(), 5);
        mark(&w, "a/late");
        let mut all = Vec::new();
        let mut after: Option<String> = None;
        loop {
            let chunk = w.changed_after(after.as_deref(), 2).unwrap();
            let Some(last) = chunk.last() else { break };
            assert!(chunk.len() <= 2);
            after = Some(last.clone());
            all.extend(chunk);
        }
        assert_eq!(all, ["a-b/z", "a.b/w", "a/y", "b/x", "c"]);
        assert!(w.is_changed("a/y").unwrap());
        assert!(
            !w.is_changed("a/late").unwrap(),
            "marked after the snapshot"
        );
        assert!(!w.is_changed("a").unwrap());
        // A new snapshot replaces the old one; a forgotten one is empty.
        assert_eq!(w.snapshot_changed().unwrap(), 6);
        assert!(w.is_changed("a/late").unwrap());
        w.forget_changed().unwrap();
        assert!(w.changed_after(None, 10).unwrap().is_empty());
        assert_eq!(w.search_dirty_count().unwrap(), 6, "the marks stay");
    }
}
