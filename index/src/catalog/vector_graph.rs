//! What the catalog keeps of the vector graph (`search::ann`): `vector_stale`, every
//! path changed since the current generation was swapped in, and
//! [`MetaKey::VectorGraph`] while there is one. The files each point stands for live in
//! the generation (`search::ann::members`); whether a member still holds its file as it
//! is now is read from the embedding of the file's description key, which holds the
//! member's point while it does (`catalog::held`). Members whose file changed or went
//! away (tombstones) and files the graph lacks (the delta) are found among the stale
//! paths ([`CatalogReader::stale_vectors`]), in the same snapshot as everything else a
//! reader sees: a search pays for the changes since the graph, not for the lake, and
//! nothing a crash can leave half-updated (paths are marked in the transaction that
//! changes their file, and recomputed in the one that swaps a graph in).

use super::held::{handover, Handover, Stored, HELD};
use super::{CatalogReader, CatalogWriter, Hash, MetaKey};
use crate::compact::Code;
use crate::error::Result;
use rusqlite::params;

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

/// The files an incoming generation's points stand for, as its swap reads them: each
/// file with its point, in path order (no path twice), as many times as asked. A
/// rebuild reads them back from its spill file rather than holding them in memory.
pub trait MemberRows {
    /// How many there are.
    fn count(&self) -> u64;
    /// Call `f` on each (point, file), in path order.
    fn for_each_member(&self, f: &mut dyn FnMut(u64, &KeyedVector) -> Result<()>) -> Result<()>;
    /// The code at `point`.
    fn code(&self, point: u64) -> Option<Code>;
}

impl MemberRows for [(u64, &KeyedVector)] {
    fn count(&self) -> u64 {
        self.len() as u64
    }

    fn for_each_member(&self, f: &mut dyn FnMut(u64, &KeyedVector) -> Result<()>) -> Result<()> {
        let mut sorted: Vec<&(u64, &KeyedVector)> = self.iter().collect();
        sorted.sort_unstable_by(|a, b| a.1.path.cmp(&b.1.path));
        sorted.into_iter().try_for_each(|(p, m)| f(*p, m))
    }

    /// A linear search: a slice of members is a test's handful.
    fn code(&self, point: u64) -> Option<Code> {
        self.iter()
            .find(|(p, _)| *p == point)
            .map(|(_, m)| m.vector.clone())
    }
}

/// A path changed since the graph was swapped in, as the catalog has it now.
#[derive(Debug, Clone, PartialEq)]
pub struct StaleVector {
    /// Relative path.
    pub path: String,
    /// Its file's vector by the embedder asked for, as stored (none when no file has
    /// the path now, or its file has no vector yet): a point of the current generation
    /// when the file is what the graph holds for it.
    pub vector: Option<Stored>,
}

/// Marks paths in `vector_stale` inside a writer's transaction, while a generation is
/// swapped in (with none, the next swap computes every stale path itself): every change
/// of a file, and every relink that gives a file's description another vector.
pub(super) struct StaleMarker<'t> {
    put: Option<rusqlite::CachedStatement<'t>>,
}

impl<'t> StaleMarker<'t> {
    pub(super) fn new(tx: &'t rusqlite::Transaction<'_>) -> Result<StaleMarker<'t>> {
        let graph: bool = tx.query_row(
            "SELECT EXISTS(SELECT 1 FROM meta WHERE key = ?1)",
            [MetaKey::VectorGraph],
            |r| r.get(0),
        )?;
        let put = graph
            .then(|| tx.prepare_cached("INSERT OR IGNORE INTO vector_stale(path) VALUES (?1)"))
            .transpose()?;
        Ok(StaleMarker { put })
    }

    pub(super) fn mark(&mut self, path: &str) -> rusqlite::Result<()> {
        if let Some(put) = &mut self.put {
            put.execute([path])?;
        }
        Ok(())
    }
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
        let mut out = Vec::new();
        self.for_each_keyed_file_vector(embedder, |r| {
            out.push(r);
            Ok(())
        })?;
        Ok(out)
    }

    /// [`CatalogReader::keyed_file_vectors`], handed to `f` one at a time (a rebuild
    /// spills them rather than holding a million in memory).
    pub fn for_each_keyed_file_vector(
        &self,
        embedder: &str,
        mut f: impl FnMut(KeyedVector<Stored>) -> Result<()>,
    ) -> Result<()> {
        let mut stmt = self.conn.prepare(
            "SELECT f.path, f.hash, f.analyzer, e.vector FROM files f
             JOIN embeddings e ON e.hash = f.hash AND e.analyzer = f.analyzer AND e.embedder = ?1
             ORDER BY f.path",
        )?;
        let mut rows = stmt.query([embedder])?;
        while let Some(r) = rows.next()? {
            let hash: Vec<u8> = r.get(1)?;
            // The join matched an embedding keyed by this very hash, so it has 32 bytes.
            let Ok(hash) = Hash::try_from(hash.as_slice()) else {
                continue;
            };
            f(KeyedVector {
                path: r.get(0)?,
                hash,
                analyzer: r.get(2)?,
                vector: Stored::from_blob(&r.get::<_, Vec<u8>>(3)?),
            })?;
        }
        Ok(())
    }

    /// Every path changed since the graph was swapped in, with its file's vector by
    /// `embedder` as it is now, in path order: the generation's members among them
    /// that no longer hold their file are its tombstones, and the files with a vector it
    /// does not hold its delta (`search::ann`).
    pub fn stale_vectors(&self, embedder: &str) -> Result<Vec<StaleVector>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT s.path, e.vector FROM vector_stale s
             LEFT JOIN files f ON f.path = s.path
             LEFT JOIN embeddings e
               ON e.hash = f.hash AND e.analyzer = f.analyzer AND e.embedder = ?1
             ORDER BY s.path",
        )?;
        let rows = stmt.query_map([embedder], |r| {
            Ok(StaleVector {
                path: r.get(0)?,
                vector: r
                    .get::<_, Option<Vec<u8>>>(1)?
                    .map(|b| Stored::from_blob(&b)),
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

impl CatalogWriter {
    /// Swap in the generation whose points the files `members` stand for (point, file),
    /// setting the meta value `key` that describes the graph, in one transaction: a
    /// reader sees the old graph and its description or the new ones, never a mix. The
    /// same transaction hands the vectors the outgoing generation held over to the
    /// incoming one or back to the rows ([`handover`]), and marks stale every path the
    /// incoming generation does not hold as it is now (the members may come from an
    /// older snapshot: the graph is built outside the writer's transactions); returns
    /// how many vectors could not be read back and were given up.
    pub fn replace_graph_members(
        &mut self,
        members: &(impl MemberRows + ?Sized),
        key: MetaKey,
        value: &str,
        vectors: &Handover<'_>,
    ) -> Result<usize> {
        let tx = self.reader.conn.transaction()?;
        let lost = handover(&tx, members, vectors)?;
        tx.execute("DELETE FROM vector_stale", [])?;
        if members.count() == 0 {
            tx.execute("DELETE FROM meta WHERE key = ?1", [MetaKey::VectorGraph])?;
        } else {
            mark_stale(&tx, members, vectors.incoming_embedder)?;
            tx.execute(
                "INSERT INTO meta(key, value) VALUES (?1, ?2)
                 ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                params![MetaKey::VectorGraph, members.count().to_string()],
            )?;
        }
        tx.execute(
            "INSERT INTO meta(key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            params![key, value],
        )?;
        tx.commit()?;
        Ok(lost)
    }
}

/// Mark stale every path of a file or a member that the members (point, file) do not
/// hold as the file is now (by `embedder`): its tombstones and every file the graph
/// lacks, whether or not that file has a vector yet (one may come later without its row
/// changing). A merge of the files, in path order, with the members sorted alike.
fn mark_stale(
    tx: &rusqlite::Transaction<'_>,
    members: &(impl MemberRows + ?Sized),
    embedder: &str,
) -> Result<()> {
    let mut files = tx.prepare(&format!(
        "SELECT f.path, CASE WHEN {HELD} THEN e.vector END FROM files f
         LEFT JOIN embeddings e
           ON e.hash = f.hash AND e.analyzer = f.analyzer AND e.embedder = ?1
         ORDER BY f.path"
    ))?;
    let mut files = files.query([embedder])?;
    let mut next_file = || -> Result<Option<(String, Option<Stored>)>> {
        Ok(match files.next()? {
            Some(row) => Some((
                row.get(0)?,
                row.get::<_, Option<Vec<u8>>>(1)?
                    .map(|b| Stored::from_blob(&b)),
            )),
            None => None,
        })
    };
    let mut put = tx.prepare_cached("INSERT OR IGNORE INTO vector_stale(path) VALUES (?1)")?;
    let mut file = next_file()?;
    members.for_each_member(&mut |point, m| {
        // Files the graph lacks come before the member.
        while let Some((path, _)) = file.as_ref().filter(|(p, _)| p.as_str() < m.path.as_str()) {
            put.execute([path])?;
            file = next_file()?;
        }
        match &file {
            Some((path, held)) if *path == m.path => {
                if *held != Some(Stored::Point(point)) {
                    put.execute([path])?;
                }
                file = next_file()?;
            }
            // A member without a file (gone since the snapshot).
            _ => {
                put.execute([&m.path])?;
            }
        }
        Ok(())
    })?;
    while let Some((path, _)) = file {
        put.execute([&path])?;
        file = next_file()?;
    }
    Ok(())
}
