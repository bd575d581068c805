//! Search bookkeeping in the catalog: the paths whose search documents are stale, and
//! the embeddings of descriptions per embedder.

use super::{Catalog, Hash};
use crate::error::Result;
use rusqlite::{params, OptionalExtension};

/// Encode a vector as little-endian f32 bytes.
fn to_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Decode little-endian f32 bytes (a trailing partial value is ignored).
pub(super) fn from_blob(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

impl Catalog {
    /// Paths marked stale for search since the last [`Catalog::clear_search_dirty`].
    pub fn search_dirty(&self) -> Result<Vec<String>> {
        let mut stmt = self
            .conn
            .prepare("SELECT path FROM search_dirty ORDER BY path")?;
        let rows = stmt.query_map([], |r| r.get(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

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
        let tx = self.conn.transaction()?;
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
        for p in paths {
            let found = stmt
                .query_row(params![embedder, p], |r| {
                    Ok((r.get::<_, Vec<u8>>(0)?, r.get::<_, String>(1)?))
                })
                .optional()?;
            if let Some((h, a)) = found {
                if let Ok(h) = Hash::try_from(h.as_slice()) {
                    if !out.iter().any(|(x, y)| *x == h && *y == a) {
                        out.push((h, a));
                    }
                }
            }
        }
        Ok(out)
    }

    /// Store embeddings in one transaction.
    pub fn put_embeddings(
        &mut self,
        embedder: &str,
        items: &[(Hash, String, Vec<f32>)],
    ) -> Result<()> {
        let tx = self.conn.transaction()?;
        {
            let mut put = tx.prepare_cached(
                "INSERT OR REPLACE INTO embeddings(hash, analyzer, embedder, vector) VALUES (?1, ?2, ?3, ?4)",
            )?;
            for (h, a, v) in items {
                put.execute(params![&h[..], a, embedder, to_blob(v)])?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// Every file's vector by `embedder`: (path, vector), in path order.
    pub fn file_vectors(&self, embedder: &str) -> Result<Vec<(String, Vec<f32>)>> {
        let mut stmt = self.conn.prepare(
            "SELECT f.path, e.vector FROM files f
             JOIN embeddings e ON e.hash = f.hash AND e.analyzer = f.analyzer AND e.embedder = ?1
             ORDER BY f.path",
        )?;
        let rows = stmt.query_map([embedder], |r| {
            Ok((r.get::<_, String>(0)?, from_blob(&r.get::<_, Vec<u8>>(1)?)))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blobs_round_trip() {
        let v = vec![0.5f32, -1.25, 3.0];
        assert_eq!(from_blob(&to_blob(&v)), v);
    }
}
