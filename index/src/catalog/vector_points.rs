//! The vector graph's bookkeeping (`search::ann`): which files, by path, each point of
//! the on-disk graph stands for (files with identical vectors share one point), and
//! `vector_stale`, every path changed since the graph was swapped in. Whether a member
//! still holds its file as it is now is read from the embedding of the file's
//! description key, which holds the member's point while it does ([`holds`]).
//! Members whose file changed or went away (tombstones) and files the graph lacks (the
//! delta) are found among the stale paths, in the same snapshot as everything else a
//! reader sees: a search pays for the changes since the graph, not for the lake, and
//! nothing a crash can leave half-updated (paths are marked in the transaction that
//! changes their file, and recomputed in the one that swaps a graph in).

use super::held::{handover, point_sql, Handover, Stored};
use super::{CatalogReader, CatalogWriter, Hash, MetaKey};
use crate::compact::Code;
use crate::error::Result;
use rusqlite::params;
use std::collections::HashMap;

/// A file's vector together with the description it was computed from.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyedVector<V = Code> {
    /// Relative path.
    pub path: String,
    /// Content hash of the file.
    pub hash: Hash,
    /// Analyzer key of its description.
    pub analyzer: String,
    /// The vector: its direction's code, or as stored ([`Stored`]: maybe a point).
    pub vector: V,
}

impl<V> KeyedVector<V> {
    /// The same file and key with another vector.
    pub fn with<W>(self, vector: W) -> KeyedVector<W> {
        KeyedVector {
            path: self.path,
            hash: self.hash,
            analyzer: self.analyzer,
            vector,
        }
    }
}

/// Whether the graph holds what file `f` (an alias of `files`, or NULL) is now, as
/// member `v` of point `v.id`: the embedding of the file's description key by `?1`
/// holds that very point (a swap rewrites the row of every code its generation holds
/// into its point, `catalog::held`). A file that changed has another key, whose row
/// holds another point or a code; a description relinked to a companion has its row
/// deleted and embedded again.
fn holds(v: &str, f: &str) -> String {
    format!(
        "EXISTS (SELECT 1 FROM embeddings e WHERE e.hash = {f}.hash AND e.analyzer = {f}.analyzer
                 AND e.embedder = ?1 AND e.vector = {})",
        point_sql(&format!("{v}.id"))
    )
}

/// The graph's members that no longer hold their file as it is now (by `?1`): stale
/// paths only, since a path whose file did not change since the swap is not one.
/// `CROSS JOIN` keeps SQLite's planner from starting at the larger table (the catalog
/// has no statistics, and it would scan every member to avoid a sort).
fn tombstones() -> String {
    format!(
        "FROM vector_stale s CROSS JOIN vector_points v ON v.path = s.path
         LEFT JOIN files f ON f.path = v.path
         WHERE NOT {}",
        holds("v", "f")
    )
}

/// Stale files with a vector by `?1` that the graph does not hold as they are now.
fn delta() -> String {
    format!(
        "FROM vector_stale s CROSS JOIN files f ON f.path = s.path
         CROSS JOIN embeddings e ON e.hash = f.hash AND e.analyzer = f.analyzer AND e.embedder = ?1
         WHERE NOT EXISTS (SELECT 1 FROM vector_points v
                           WHERE v.path = f.path AND e.vector = {})",
        point_sql("v.id")
    )
}

/// Every path the graph (as `vector_points` now lists it, by `?1`) may not hold as it
/// is: its tombstones and every file it lacks, whether or not that file has a vector
/// yet (one may come later without its row changing).
fn recompute_stale() -> String {
    format!(
        "INSERT OR IGNORE INTO vector_stale(path)
           SELECT v.path FROM vector_points v LEFT JOIN files f ON f.path = v.path
           WHERE NOT {}
           UNION ALL
           SELECT f.path FROM files f WHERE NOT EXISTS (SELECT 1 FROM vector_points v
             WHERE v.path = f.path AND {})",
        holds("v", "f"),
        holds("v", "f")
    )
}

impl CatalogReader {
    /// Run `f` on one consistent snapshot of the catalog (one read transaction), so that
    /// what it reads in several queries belongs to the same committed state.
    pub fn read_snapshot<T>(&self, f: impl FnOnce(&CatalogReader) -> Result<T>) -> Result<T> {
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
    pub fn keyed_file_vectors(&self, embedder: &str) -> Result<Vec<KeyedVector<Stored>>> {
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
                    vector: Stored::from_blob(&blob),
                });
            }
        }
        Ok(out)
    }

    /// The files each of the graph's points `ids` stands for (tombstones included), by
    /// path, in one query (a search resolves its ~200 nearest points at once); a point
    /// no file has is absent.
    pub fn points_files(&self, ids: &[u64]) -> Result<HashMap<u64, Vec<String>>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT id, path FROM vector_points
             WHERE id IN (SELECT value FROM json_each(?1)) ORDER BY id, path",
        )?;
        // A JSON array, which cannot fail to encode: SQLite reads it with `json_each`.
        let listed = serde_json::Value::from(ids.to_vec()).to_string();
        let mut out: HashMap<u64, Vec<String>> = HashMap::new();
        for row in stmt.query_map([listed], |r| Ok((r.get::<_, i64>(0)?, r.get(1)?)))? {
            let (id, path) = row?;
            out.entry(id as u64).or_default().push(path);
        }
        Ok(out)
    }

    /// The paths of the tombstones of the graph of `embedder`'s vectors: members whose
    /// file changed or went away.
    pub fn graph_tombstones(&self, embedder: &str) -> Result<Vec<String>> {
        let mut stmt = self
            .conn
            .prepare(&format!("SELECT v.path {} ORDER BY s.path", tombstones()))?;
        let rows = stmt.query_map([embedder], |r| r.get::<_, String>(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// How many of the files the graph of `embedder`'s vectors stands for are tombstones.
    pub fn graph_tombstone_count(&self, embedder: &str) -> Result<u64> {
        let n: i64 = self.conn.query_row(
            &format!("SELECT COUNT(*) {}", tombstones()),
            [embedder],
            |r| r.get(0),
        )?;
        Ok(n as u64)
    }

    /// Vectors by `embedder` of the files the graph does not hold as they are now:
    /// (path, vector), in path order.
    pub fn graph_delta(&self, embedder: &str) -> Result<Vec<(String, Stored)>> {
        let mut stmt = self.conn.prepare(&format!(
            "SELECT f.path, e.vector {} ORDER BY s.path",
            delta()
        ))?;
        let rows = stmt.query_map([embedder], |r| {
            Ok((
                r.get::<_, String>(0)?,
                Stored::from_blob(&r.get::<_, Vec<u8>>(1)?),
            ))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// How many files the graph lacks (see [`CatalogReader::graph_delta`]).
    pub fn graph_delta_count(&self, embedder: &str) -> Result<u64> {
        let n: i64 =
            self.conn
                .query_row(&format!("SELECT COUNT(*) {}", delta()), [embedder], |r| {
                    r.get(0)
                })?;
        Ok(n as u64)
    }
}

impl CatalogWriter {
    /// Replace the files the graph stands for and set the meta value `key` that
    /// describes the graph, in one transaction: a reader sees the old graph's members and
    /// description or the new ones, never a mix. The same transaction hands the vectors
    /// the outgoing generation held over to the incoming one or back to the rows
    /// ([`handover`]); returns how many could not be read back and were given up.
    pub fn replace_graph_members(
        &mut self,
        members: &[(u64, &KeyedVector)],
        key: MetaKey,
        value: &str,
        vectors: &Handover<'_>,
    ) -> Result<usize> {
        let tx = self.reader.conn.transaction()?;
        let lost = handover(&tx, members, vectors)?;
        tx.execute("DELETE FROM vector_points", [])?;
        {
            let mut put =
                tx.prepare_cached("INSERT INTO vector_points(path, id) VALUES (?1, ?2)")?;
            for (id, m) in members {
                put.execute(params![m.path, *id as i64])?;
            }
        }
        // The members may come from an older snapshot than this one (the graph is built
        // outside the writer's transactions): what changed since is stale from here on.
        tx.execute("DELETE FROM vector_stale", [])?;
        if !members.is_empty() {
            tx.execute(&recompute_stale(), [vectors.incoming_embedder])?;
        }
        tx.execute(
            "INSERT INTO meta(key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            params![key, value],
        )?;
        tx.commit()?;
        Ok(lost)
    }
}
