//! The vector graph's bookkeeping (`search::ann`): which file, by path and description
//! key, each point of the on-disk graph holds. Points whose file changed or went away
//! (tombstones) and files the graph lacks (the delta) then follow from one join with
//! `files`, in the same snapshot as everything else a reader sees — nothing to keep in
//! step by hand, and nothing a crash can leave half-updated.

use super::vectors::from_blob;
use super::{Catalog, Hash};
use crate::error::{InternalError, Result};
use rusqlite::params;

/// A file's vector together with the description it was computed from.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyedVector {
    /// Relative path.
    pub path: String,
    /// Content hash of the file.
    pub hash: Hash,
    /// Analyzer key of its description.
    pub analyzer: String,
    /// The vector, as stored.
    pub vector: Vec<f32>,
}

/// The graph's points that no longer hold their file's current description.
const TOMBSTONES: &str = "FROM vector_points v LEFT JOIN files f ON f.path = v.path
     WHERE f.path IS NULL OR f.hash IS NOT v.hash OR f.analyzer IS NOT v.analyzer";

/// Files with a vector by `?1` that the graph does not hold as they are now.
const DELTA: &str = "FROM files f
     JOIN embeddings e ON e.hash = f.hash AND e.analyzer = f.analyzer AND e.embedder = ?1
     WHERE NOT EXISTS (SELECT 1 FROM vector_points v
                       WHERE v.path = f.path AND v.hash = f.hash AND v.analyzer = f.analyzer)";

impl Catalog {
    /// Run `f` on one consistent snapshot of the catalog (one read transaction), so that
    /// what it reads in several queries belongs to the same committed state.
    pub fn read_snapshot<T>(&self, f: impl FnOnce(&Catalog) -> Result<T>) -> Result<T> {
        let tx = self.conn.unchecked_transaction()?;
        let out = f(self)?;
        tx.commit()?;
        Ok(out)
    }

    /// Files with a vector by `embedder`.
    pub fn vector_count(&self, embedder: &str) -> Result<u64> {
        let n: i64 = self.conn.query_row(
            "SELECT COUNT(*) FROM files f
             JOIN embeddings e ON e.hash = f.hash AND e.analyzer = f.analyzer AND e.embedder = ?1",
            [embedder],
            |r| r.get(0),
        )?;
        Ok(n as u64)
    }

    /// Every file's vector by `embedder` with its description key, in path order.
    pub fn keyed_file_vectors(&self, embedder: &str) -> Result<Vec<KeyedVector>> {
        let mut stmt = self.conn.prepare(
            "SELECT f.path, f.hash, f.analyzer, e.vector FROM files f
             JOIN embeddings e ON e.hash = f.hash AND e.analyzer = f.analyzer AND e.embedder = ?1
             ORDER BY f.path",
        )?;
        let rows = stmt.query_map([embedder], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, Vec<u8>>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, Vec<u8>>(3)?,
            ))
        })?;
        let mut out = Vec::new();
        for r in rows {
            let (path, hash, analyzer, blob) = r?;
            // The join matched an embedding keyed by this very hash, so it has 32 bytes.
            if let Ok(hash) = Hash::try_from(hash.as_slice()) {
                out.push(KeyedVector {
                    path,
                    hash,
                    analyzer,
                    vector: from_blob(&blob),
                });
            }
        }
        Ok(out)
    }

    /// The paths of the graph's points, indexed by point id.
    pub fn graph_paths(&self) -> Result<Vec<String>> {
        let mut stmt = self
            .conn
            .prepare("SELECT id, path FROM vector_points ORDER BY id")?;
        let rows = stmt.query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))?;
        let mut out = Vec::new();
        for r in rows {
            let (id, path) = r?;
            if id != out.len() as i64 {
                return Err(InternalError::Search(format!(
                    "vector point ids are not 0..n (found {id} at position {}); run `lakestar index` to rebuild the vector index",
                    out.len()
                ))
                .into());
            }
            out.push(path);
        }
        Ok(out)
    }

    /// Ids of the graph's points whose file changed or went away, ascending.
    pub fn graph_tombstones(&self) -> Result<Vec<usize>> {
        let mut stmt = self
            .conn
            .prepare(&format!("SELECT v.id {TOMBSTONES} ORDER BY v.id"))?;
        let rows = stmt.query_map([], |r| r.get::<_, i64>(0))?;
        let mut out = Vec::new();
        for r in rows {
            out.push(r? as usize);
        }
        Ok(out)
    }

    /// How many of the graph's points are tombstones.
    pub fn graph_tombstone_count(&self) -> Result<u64> {
        let n: i64 = self
            .conn
            .query_row(&format!("SELECT COUNT(*) {TOMBSTONES}"), [], |r| r.get(0))?;
        Ok(n as u64)
    }

    /// Vectors by `embedder` of the files the graph does not hold as they are now:
    /// (path, vector), in path order.
    pub fn graph_delta(&self, embedder: &str) -> Result<Vec<(String, Vec<f32>)>> {
        let mut stmt = self
            .conn
            .prepare(&format!("SELECT f.path, e.vector {DELTA} ORDER BY f.path"))?;
        let rows = stmt.query_map([embedder], |r| {
            Ok((r.get::<_, String>(0)?, from_blob(&r.get::<_, Vec<u8>>(1)?)))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// How many files the graph lacks (see [`Catalog::graph_delta`]).
    pub fn graph_delta_count(&self, embedder: &str) -> Result<u64> {
        let n: i64 = self
            .conn
            .query_row(&format!("SELECT COUNT(*) {DELTA}"), [embedder], |r| {
                r.get(0)
            })?;
        Ok(n as u64)
    }

    /// Replace the graph's points (a point's id is its position in `points`) and set the
    /// meta value `key` that describes the graph, in one transaction: a reader sees the
    /// old graph's points and description or the new ones, never a mix.
    pub fn replace_graph_points(
        &mut self,
        points: &[KeyedVector],
        key: &str,
        value: &str,
    ) -> Result<()> {
        let tx = self.conn.transaction()?;
        tx.execute("DELETE FROM vector_points", [])?;
        {
            let mut put = tx.prepare_cached(
                "INSERT INTO vector_points(id, path, hash, analyzer) VALUES (?1, ?2, ?3, ?4)",
            )?;
            for (id, p) in points.iter().enumerate() {
                put.execute(params![id as i64, p.path, &p.hash[..], p.analyzer])?;
            }
        }
        tx.execute(
            "INSERT INTO meta(key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            params![key, value],
        )?;
        tx.commit()?;
        Ok(())
    }
}
