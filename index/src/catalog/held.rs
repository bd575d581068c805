//! Vectors held by the vector graph's current generation (`search::ann`) instead of the
//! catalog: once a generation is swapped in, every `embeddings` row whose vector it
//! holds keeps only that vector's point (a 5-byte blob, [`POINT_TAG`] and the point id)
//! in place of its code (261 bytes at 256 dimensions), since the generation's
//! `codes.bin` holds the same code. At 100k files that is 27 MB of a 127 MB catalog.
//!
//! A row keeps its key either way, so "this description has a vector by this embedder"
//! is still one row's existence, and every query that asks it is unchanged. Only the
//! readers of the vectors themselves resolve points, against the generation the same
//! snapshot names ([`Stored::Point`]).
//!
//! Points are only ever into the generation the catalog names: the swap that replaces
//! it rewrites, in its own transaction ([`handover`]), every row that pointed into the
//! outgoing generation (to its point in the incoming one when that holds the same code
//! under the same key, else back to its code), and a refresh that drops the graph
//! restores them all. A generation found lost or damaged takes its points with it: the
//! rows are deleted and [`MetaKey::VectorsMissing`] is set, in one transaction, so the
//! next sync looks for every file's missing vector and embeds it again.

use super::vector_graph::MemberRows;
use super::vectors::from_blob;
use super::{CatalogReader, CatalogWriter, MetaKey};
use crate::compact::Code;
use crate::error::Result;
use rusqlite::{params, OptionalExtension};

/// First byte of a blob that holds a point, not a code (a code's tag is `0xA0..=0xA3`,
/// and an older catalog's f32 blob is never 5 bytes long).
pub const POINT_TAG: u8 = 0xB0;

/// SQL: whether the `embeddings` row at hand holds a point (only `embeddings` has a
/// `vector` column, so the condition reads the same inside a join).
pub(super) const HELD: &str = "(length(vector) = 5 AND substr(vector, 1, 1) = x'B0')";

/// An `embeddings` row's vector, as stored.
#[derive(Debug, Clone, PartialEq)]
pub enum Stored {
    /// The vector's code.
    Code(Code),
    /// Held by the generation the catalog names, at this point.
    Point(u64),
}

impl Stored {
    /// Read a stored blob: a point, or else a code ([`from_blob`]).
    pub(super) fn from_blob(b: &[u8]) -> Stored {
        match b {
            [POINT_TAG, rest @ ..] if rest.len() == 4 => {
                Stored::Point(u64::from(u32::from_le_bytes([
                    rest[0], rest[1], rest[2], rest[3],
                ])))
            }
            _ => Stored::Code(from_blob(b)),
        }
    }
}

/// The blob of point `id`, if it fits.
fn point_blob(id: u64) -> Option<Vec<u8>> {
    let id = u32::try_from(id).ok()?;
    let mut b = vec![POINT_TAG];
    b.extend(id.to_le_bytes());
    Some(b)
}

/// What a swap needs to know of the generations it exchanges.
pub struct Handover<'a> {
    /// The embedder of the outgoing generation, whose rows may hold points into it;
    /// `None` when there is none.
    pub outgoing_embedder: Option<&'a str>,
    /// A point's code in the outgoing generation; `None` when it cannot be read.
    pub outgoing: &'a dyn Fn(u64) -> Option<Code>,
    /// The embedder of the incoming generation's vectors.
    pub incoming_embedder: &'a str,
}

/// In the swap's transaction `tx`: rewrite the rows that point into the outgoing
/// generation, and let the incoming one (`members`: point id and file, with the code it
/// holds) hold every row whose stored code it holds. A row rewritten since the
/// generation's snapshot holds another code and is left as it is. Rows whose vector
/// the outgoing generation cannot give back are deleted and
/// [`MetaKey::VectorsMissing`] set. Returns how many rows were given up so.
///
/// Nothing here is proportional to the lake in memory: the rows are read in batches,
/// the members streamed, and the incoming points by key (needed only when both
/// generations are by the same embedder) kept in a temporary table.
pub(super) fn handover(
    tx: &rusqlite::Transaction<'_>,
    members: &(impl MemberRows + ?Sized),
    h: &Handover<'_>,
) -> Result<usize> {
    let mut set = tx.prepare_cached(
        "UPDATE embeddings SET vector = ?4 WHERE hash = ?1 AND analyzer = ?2 AND embedder = ?3",
    )?;
    let mut lost = 0;
    if let Some(out) = h.outgoing_embedder {
        let same = out == h.incoming_embedder;
        if same {
            tx.execute_batch(
                "DROP TABLE IF EXISTS temp.incoming;
                 CREATE TEMP TABLE incoming(
                     hash BLOB NOT NULL, analyzer TEXT NOT NULL, point INTEGER NOT NULL,
                     PRIMARY KEY (hash, analyzer)) WITHOUT ROWID;",
            )?;
            let mut put = tx.prepare(
                "INSERT OR IGNORE INTO temp.incoming(hash, analyzer, point) VALUES (?1, ?2, ?3)",
            )?;
            members.for_each_member(&mut |point, m| {
                put.execute(params![&m.hash[..], m.analyzer, point as i64])?;
                Ok(())
            })?;
        }
        let mut incoming = same
            .then(|| {
                tx.prepare("SELECT point FROM temp.incoming WHERE hash = ?1 AND analyzer = ?2")
            })
            .transpose()?;
        let mut forget = tx.prepare_cached(
            "DELETE FROM embeddings WHERE hash = ?1 AND analyzer = ?2 AND embedder = ?3",
        )?;
        // In key order, a batch at a time: the rows rewritten stop being held, and the
        // next batch starts after the last key.
        let mut batch = tx.prepare(&format!(
            "SELECT hash, analyzer, vector FROM embeddings
             WHERE embedder = ?1 AND {HELD} AND (hash, analyzer) > (?2, ?3)
             ORDER BY hash, analyzer LIMIT {HANDOVER_BATCH}"
        ))?;
        let mut after: (Vec<u8>, String) = (Vec::new(), String::new());
        loop {
            let rows = batch
                .query_map(params![out, after.0, after.1], |r| {
                    Ok((
                        r.get::<_, Vec<u8>>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, Vec<u8>>(2)?,
                    ))
                })?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            let Some((hash, analyzer, _)) = rows.last() else {
                break;
            };
            after = (hash.clone(), analyzer.clone());
            for (hash, analyzer, blob) in rows {
                let Stored::Point(old) = Stored::from_blob(&blob) else {
                    continue;
                };
                let next: Option<u64> = match &mut incoming {
                    Some(q) => q
                        .query_row(params![hash, analyzer], |r| r.get::<_, i64>(0))
                        .optional()?
                        .map(|p| p as u64),
                    None => None,
                };
                let blob = match ((h.outgoing)(old), next) {
                    (Some(code), Some(id)) if members.code(id).as_ref() == Some(&code) => {
                        point_blob(id).unwrap_or_else(|| code.to_blob())
                    }
                    (Some(code), _) => code.to_blob(),
                    (None, _) => {
                        forget.execute(params![hash, analyzer, out])?;
                        lost += 1;
                        continue;
                    }
                };
                set.execute(params![hash, analyzer, out, blob])?;
            }
        }
        if same {
            tx.execute("DROP TABLE temp.incoming", [])?;
        }
    }
    // Each member's row that still holds the member's code is held by the incoming
    // generation from now on (rows handed over above hold its point already).
    let mut hold = tx.prepare_cached(
        "UPDATE embeddings SET vector = ?4
         WHERE hash = ?1 AND analyzer = ?2 AND embedder = ?3 AND vector = ?5",
    )?;
    members.for_each_member(&mut |id, m| {
        if let Some(point) = point_blob(id) {
            hold.execute(params![
                &m.hash[..],
                m.analyzer,
                h.incoming_embedder,
                point,
                m.vector.to_blob()
            ])?;
        }
        Ok(())
    })?;
    if lost > 0 {
        tracing::warn!(
            lost,
            "vectors of the outgoing generation could not be read back; they are embedded again"
        );
        mark_missing(tx)?;
    }
    Ok(lost)
}

/// Rows of the outgoing generation a swap reads at a time (a handful in unit tests, so
/// that their swaps go through several batches).
const HANDOVER_BATCH: usize = if cfg!(test) { 7 } else { 4_096 };

fn mark_missing(conn: &rusqlite::Connection) -> Result<()> {
    conn.execute(
        "INSERT OR REPLACE INTO meta(key, value) VALUES (?1, '1')",
        [MetaKey::VectorsMissing],
    )?;
    Ok(())
}

impl CatalogReader {
    /// Rows by `embedder` whose vector a generation holds.
    pub fn held_vector_count(&self, embedder: &str) -> Result<u64> {
        let n: i64 = self.conn.query_row(
            &format!("SELECT COUNT(*) FROM embeddings WHERE embedder = ?1 AND {HELD}"),
            [embedder],
            |r| r.get(0),
        )?;
        Ok(n as u64)
    }

    /// Whether vectors were given up with a lost generation since the last sync
    /// ([`CatalogWriter::forget_held_vectors`]): that sync must look for every file's.
    pub fn vectors_missing(&self) -> Result<bool> {
        Ok(self.meta(MetaKey::VectorsMissing)?.is_some())
    }
}

impl CatalogWriter {
    /// Give up every point by `embedder` (its generation is lost or damaged): the rows
    /// are deleted and [`MetaKey::VectorsMissing`] set in one transaction, so that the
    /// next sync embeds them again. Returns how many there were.
    pub fn forget_held_vectors(&mut self, embedder: &str) -> Result<usize> {
        let tx = self.reader.conn.transaction()?;
        let n = tx.execute(
            &format!("DELETE FROM embeddings WHERE embedder = ?1 AND {HELD}"),
            [embedder],
        )?;
        if n > 0 {
            mark_missing(&tx)?;
        }
        tx.commit()?;
        Ok(n)
    }

    /// The sync that looked for every file's vector has stored them.
    pub fn clear_vectors_missing(&self) -> Result<()> {
        self.conn
            .execute("DELETE FROM meta WHERE key = ?1", [MetaKey::VectorsMissing])?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn point_blobs_are_told_from_codes_of_every_length() {
        for id in [0u64, 1, 77_000, u64::from(u32::MAX)] {
            let b = point_blob(id).unwrap();
            assert_eq!(b.len(), 5);
            assert_eq!(Stored::from_blob(&b), Stored::Point(id));
        }
        assert_eq!(point_blob(1 << 32), None, "no point id past u32");
        for dim in [0usize, 1, 3, 4, 256] {
            let v: Vec<f32> = (0..dim).map(|i| i as f32 - 1.5).collect();
            let c = Code::new(&v);
            assert_eq!(
                Stored::from_blob(&c.to_blob()),
                Stored::Code(c),
                "dim {dim}"
            );
        }
        let f32_blob: Vec<u8> = [0.5f32].iter().flat_map(|x| x.to_le_bytes()).collect();
        assert!(matches!(Stored::from_blob(&f32_blob), Stored::Code(c) if c.dim() == 1));
    }
}
