//! Search bookkeeping in the catalog: the paths whose search documents are stale, and
//! the embeddings of descriptions per embedder.

use super::held::Stored;
use super::{CatalogReader, CatalogWriter, Hash, MetaKey};
use crate::compact::Code;
use crate::error::Result;
use rusqlite::{params, OptionalExtension};

/// A vector as stored: its compact code ([`Code::to_blob`]).
fn to_blob(v: &[f32]) -> Vec<u8> {
    Code::new(v).to_blob()
}

/// A stored vector's code; a blob that is not one reads as the empty code, which no
/// search compares with anything (its dimension is no embedder's).
pub(super) fn from_blob(b: &[u8]) -> Code {
    Code::from_blob(b).unwrap_or(Code {
        scale: 0.0,
        codes: Vec::new(),
    })
}

/// The encoding written now: [`Code`] blobs.
const ENCODING: &str = "code-i8";

/// Rewrite the f32 vectors of an older catalog as codes, once (meta [`MetaKey::VectorEncoding`]),
/// and give the space back: at 512 dimensions an f32 vector did not fit its row and took
/// an overflow page of its own, so this shrinks such a catalog by most of its size.
/// Reading old blobs works either way ([`Code::from_blob`]); this is only for the size.
pub(super) fn compact_older(conn: &mut rusqlite::Connection) -> Result<()> {
    let recorded: Option<String> = super::meta::read(conn, MetaKey::VectorEncoding)?;
    if recorded.as_deref() == Some(ENCODING) {
        return Ok(());
    }
    let tx = conn.transaction()?;
    let mut rewritten = 0usize;
    {
        let mut old = tx.prepare(
            "SELECT hash, analyzer, embedder, vector FROM embeddings WHERE length(vector) % 4 = 0",
        )?;
        let mut put = tx.prepare(
            "UPDATE embeddings SET vector = ?4 WHERE hash = ?1 AND analyzer = ?2 AND embedder = ?3",
        )?;
        let mut rows = old.query([])?;
        while let Some(r) = rows.next()? {
            let (h, a, e, v): (Vec<u8>, String, String, Vec<u8>) =
                (r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?);
            put.execute(params![h, a, e, from_blob(&v).to_blob()])?;
            rewritten += 1;
        }
    }
    tx.execute(
        "INSERT OR REPLACE INTO meta(key, value) VALUES (?1, ?2)",
        params![MetaKey::VectorEncoding, ENCODING],
    )?;
    tx.commit()?;
    if rewritten > 0 {
        // The freed pages would be reused by later writes; a catalog that just lost most
        // of its size should also be that much smaller on disk. Failing that (no room for
        // the copy VACUUM writes) costs only the size.
        if let Err(e) = conn.execute_batch("VACUUM") {
            tracing::warn!(
                "stored vectors rewritten compactly, but the catalog could not be vacuumed: {e}"
            );
        }
        tracing::info!(rewritten, "stored vectors rewritten as codes");
    }
    Ok(())
}

/// A chunk of [`CatalogReader::search_dirty_after`]. `path > ''` for the first chunk:
/// `?1 IS NULL OR …` is not answered from the key, and each chunk would scan the paths
/// before it. Paths are never empty.
const DIRTY_AFTER: &str = "SELECT path FROM search_dirty WHERE path > ?1 ORDER BY path LIMIT ?2";

impl CatalogReader {
    /// Paths marked stale for search since the last [`CatalogWriter::clear_search_dirty`].
    pub fn search_dirty(&self) -> Result<Vec<String>> {
        let mut stmt = self
            .conn
            .prepare("SELECT path FROM search_dirty ORDER BY path")?;
        let rows = stmt.query_map([], |r| r.get(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Up to `limit` of the paths [`CatalogReader::search_dirty`] lists, those after
    /// `after` (all from the first with `None`): the sync reads them a chunk at a time.
    pub fn search_dirty_after(&self, after: Option<&str>, limit: usize) -> Result<Vec<String>> {
        let mut stmt = self.conn.prepare_cached(DIRTY_AFTER)?;
        let rows = stmt.query_map(params![after.unwrap_or(""), limit as i64], |r| r.get(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// How many paths are marked stale for search.
    pub fn search_dirty_count(&self) -> Result<u64> {
        let n: i64 = self
            .conn
            .query_row("SELECT COUNT(*) FROM search_dirty", [], |r| r.get(0))?;
        Ok(n as u64)
    }

    /// Described files with no embedding by `embedder` yet: (hash, analyzer key).
    pub fn missing_embeddings(&self, embedder: &str) -> Result<Vec<(Hash, String)>> {
        let mut stmt = self.conn.prepare(
            "SELECT DISTINCT f.hash, f.analyzer FROM files f
             LEFT JOIN embeddings e ON e.hash = f.hash AND e.analyzer = f.analyzer AND e.embedder = ?1
             WHERE f.hash IS NOT NULL AND f.analyzer IS NOT NULL AND e.hash IS NULL",
        )?;
        let rows = stmt.query_map([embedder], |r| {
            let h: Vec<u8> = r.get(0)?;
            Ok((h, r.get::<_, String>(1)?))
        })?;
        let mut out = Vec::new();
        for r in rows {
            let (h, a) = r?;
            if let Ok(h) = Hash::try_from(h.as_slice()) {
                out.push((h, a));
            }
        }
        Ok(out)
    }

    /// Of these description keys, the ones with no embedding by `embedder` yet.
    pub fn keys_without_embedding(
        &self,
        embedder: &str,
        keys: Vec<(Hash, String)>,
    ) -> Result<Vec<(Hash, String)>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT EXISTS(SELECT 1 FROM embeddings WHERE hash = ?1 AND analyzer = ?2 AND embedder = ?3)",
        )?;
        let mut out = Vec::new();
        for (h, a) in keys {
            let has: bool = stmt.query_row(params![&h[..], a, embedder], |r| r.get(0))?;
            if !has {
                out.push((h, a));
            }
        }
        Ok(out)
    }

    /// Of these paths, the described ones with no embedding by `embedder` yet.
    pub fn missing_embeddings_for(
        &self,
        embedder: &str,
        paths: &[String],
    ) -> Result<Vec<(Hash, String)>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT f.hash, f.analyzer FROM files f
             LEFT JOIN embeddings e ON e.hash = f.hash AND e.analyzer = f.analyzer AND e.embedder = ?1
             WHERE f.path = ?2 AND f.hash IS NOT NULL AND f.analyzer IS NOT NULL AND e.hash IS NULL",
        )?;
        let mut out: Vec<(Hash, String)> = Vec::new();
        let mut seen: std::collections::HashSet<(Hash, String)> = Default::default();
        for p in paths {
            let found = stmt
                .query_row(params![embedder, p], |r| {
                    Ok((r.get::<_, Vec<u8>>(0)?, r.get::<_, String>(1)?))
                })
                .optional()?;
            if let Some((h, a)) = found {
                if let Ok(h) = Hash::try_from(h.as_slice()) {
                    if seen.insert((h, a.clone())) {
                        out.push((h, a));
                    }
                }
            }
        }
        Ok(out)
    }

    /// Every file's vector by `embedder`: (path, code of its direction or the point
    /// holding it), in path order.
    pub fn file_vectors(&self, embedder: &str) -> Result<Vec<(String, Stored)>> {
        let mut stmt = self.conn.prepare(
            "SELECT f.path, e.vector FROM files f
             JOIN embeddings e ON e.hash = f.hash AND e.analyzer = f.analyzer AND e.embedder = ?1
             ORDER BY f.path",
        )?;
        let rows = stmt.query_map([embedder], |r| {
            Ok((
                r.get::<_, String>(0)?,
                Stored::from_blob(&r.get::<_, Vec<u8>>(1)?),
            ))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

impl CatalogWriter {
    /// Mark every file stale for search (the search index was lost or rebuilt).
    pub fn mark_all_search_dirty(&self) -> Result<()> {
        self.conn.execute(
            "INSERT OR IGNORE INTO search_dirty(path) SELECT path FROM files",
            [],
        )?;
        Ok(())
    }

    /// Forget these stale marks (their documents were written and committed).
    pub fn clear_search_dirty(&mut self, paths: &[String]) -> Result<()> {
        let tx = self.reader.conn.transaction()?;
        {
            let mut del = tx.prepare_cached("DELETE FROM search_dirty WHERE path = ?1")?;
            for p in paths {
                del.execute([p])?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// Forget every stored embedding (what they were made from changed).
    pub fn drop_embeddings(&self) -> Result<()> {
        self.conn.execute("DELETE FROM embeddings", [])?;
        Ok(())
    }

    /// Store embeddings in one transaction.
    pub fn put_embeddings(
        &mut self,
        embedder: &str,
        items: &[(Hash, String, Vec<f32>)],
    ) -> Result<()> {
        let tx = self.reader.conn.transaction()?;
        {
            let mut put = tx.prepare_cached(
                "INSERT OR REPLACE INTO embeddings(hash, analyzer, embedder, vector) VALUES (?1, ?2, ?3, ?4)",
            )?;
            for (h, a, v) in items {
                put.execute(params![&h[..], a, embedder, to_blob(v)])?;
            }
        }
        tx.commit()?;
        self.bound_wal()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lock::WriterLock;

    #[test]
    fn a_chunk_of_stale_paths_is_a_range_of_the_key_and_chunks_add_up() {
        let d = tempfile::tempdir().unwrap();
        let cat = CatalogWriter::open(WriterLock::acquire(d.path()).unwrap(), d.path()).unwrap();
        let plan = super::super::known::plan(&cat.conn, DIRTY_AFTER);
        assert!(
            plan.iter().any(|p| p.starts_with("SEARCH search_dirty"))
                && !plan.iter().any(|p| p.starts_with("SCAN")),
            "{plan:?}"
        );
        let paths = ["a", "a-b/x", "a.b", "a/b", "b", "é"];
        for p in paths {
            cat.conn
                .execute("INSERT INTO search_dirty(path) VALUES (?1)", [p])
                .unwrap();
        }
        let (mut all, mut after) = (Vec::new(), None::<String>);
        while let Some(last) = {
            let chunk = cat.search_dirty_after(after.as_deref(), 4).unwrap();
            all.extend(chunk.iter().cloned());
            chunk.last().cloned()
        } {
            after = Some(last);
        }
        assert_eq!(all, paths);
    }

    #[test]
    fn an_older_catalog_s_f32_vectors_are_rewritten_as_codes_once() {
        let d = tempfile::tempdir().unwrap();
        let (idx, lake) = (d.path().join("idx"), d.path().join("lake"));
        std::fs::create_dir_all(&lake).unwrap();
        let v: Vec<f32> = (0..512).map(|i| (i as f32 * 0.1).sin()).collect();
        let f32_blob: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        {
            let cat = CatalogWriter::open(WriterLock::acquire(&idx).unwrap(), &lake).unwrap();
            // As a catalog of the previous version holds it: f32 bytes, no encoding meta.
            cat.conn
                .execute(
                    "INSERT INTO embeddings(hash, analyzer, embedder, vector) VALUES (?1, 'a@1', 'e', ?2)",
                    params![vec![7u8; 32], f32_blob],
                )
                .unwrap();
            cat.conn
                .execute("DELETE FROM meta WHERE key = ?1", [MetaKey::VectorEncoding])
                .unwrap();
        }
        let stored = |cat: &CatalogReader| -> Vec<u8> {
            cat.conn
                .query_row("SELECT vector FROM embeddings", [], |r| r.get(0))
                .unwrap()
        };
        let reader = CatalogReader::open(&idx).unwrap();
        assert_eq!(stored(&reader).len(), 2048, "a reader changes nothing");
        assert_eq!(
            from_blob(&stored(&reader)),
            Code::new(&v),
            "and reads it as a code"
        );
        let cat = CatalogWriter::open(WriterLock::acquire(&idx).unwrap(), &lake).unwrap();
        let blob = stored(&cat);
        assert_eq!(blob.len(), 517);
        assert_eq!(Code::from_blob(&blob), Some(Code::new(&v)));
        assert_eq!(
            cat.meta(MetaKey::VectorEncoding).unwrap().as_deref(),
            Some(ENCODING)
        );
    }

    #[test]
    fn blobs_round_trip_as_codes() {
        let v = vec![0.5f32, -1.25, 3.0];
        assert_eq!(from_blob(&to_blob(&v)), Code::new(&v));
        assert_eq!(from_blob(&[1, 2]).dim(), 0);
    }
}
