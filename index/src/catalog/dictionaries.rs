//! zstd dictionaries for description blobs, one per format.
//!
//! A description is a JSON document of a kilobyte or so whose keys and phrasing repeat
//! across every file of its format; compressed alone, each blob pays for that shared
//! text again. A dictionary per format, trained on the first descriptions of that
//! format, cuts the blobs to about a third (BENCHMARKS.md, Indexing). A single dictionary
//! for all formats, trained on the first descriptions in path order, does worse than
//! none: those are all of one format.
//!
//! The writer keeps the first [`TRAIN_AFTER`] descriptions of each format (each cut to
//! [`SAMPLE_BYTES`]), trains a dictionary of at most [`DICT_BYTES`] from them, stores it
//! in `dictionaries` in the transaction that writes the blob that completed the sample,
//! and compresses that format's later descriptions with it. A zstd frame records the
//! id of its dictionary, so a reader picks the dictionary by the blob itself; a blob
//! compressed without one decodes without one.

use crate::error::{DecodeError, Error, Result};
use rusqlite::{params, Connection, OptionalExtension};
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// The table (created in new and existing catalogs).
pub(super) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS dictionaries (
    id         INTEGER PRIMARY KEY,
    format     TEXT NOT NULL,
    dict       BLOB NOT NULL,
    created_at INTEGER NOT NULL
);
";

/// Descriptions of one format that train its dictionary: the formats' shared text shows
/// in the first few hundred, and more train no better a dictionary.
pub const TRAIN_AFTER: usize = 256;
/// Bytes of each description kept as a sample: the shared text is in the keys and
/// phrasing at the top; a wide table's long column list adds memory, not much
/// dictionary. Bounds the samples held to 1 MiB per format.
pub const SAMPLE_BYTES: usize = 4 << 10;
/// Largest dictionary trained: 16 KiB compresses descriptions as well as 32 or 64 KiB,
/// and each reader keeps the ones it meets in memory.
pub const DICT_BYTES: usize = 16 << 10;
/// zstd level for description blobs, with or without a dictionary: a tenth smaller than
/// level 3 for a little more of the writer's CPU; past it the gain flattens and the time
/// does not (BENCHMARKS.md, "Indexing").
const LEVEL: i32 = 9;

/// The writer's compressors: the format's dictionary where it has one, plain zstd
/// otherwise, and the samples that will train the missing ones.
pub(super) struct Compressors {
    plain: zstd::bulk::Compressor<'static>,
    by_format: HashMap<String, zstd::bulk::Compressor<'static>>,
    samples: HashMap<String, Vec<Vec<u8>>>,
    /// Formats whose training failed this session (too little text, or an id already
    /// taken): not retried until the next writer.
    given_up: HashSet<String>,
    loaded: bool,
}

impl Compressors {
    pub(super) fn new(dir: &Path) -> Result<Compressors> {
        Ok(Compressors {
            plain: zstd::bulk::Compressor::new(LEVEL).map_err(|e| Error::io(dir, e))?,
            by_format: HashMap::new(),
            samples: HashMap::new(),
            given_up: HashSet::new(),
            loaded: false,
        })
    }

    /// The stored dictionaries, newest per format, read once per writer.
    fn load(&mut self, conn: &Connection, dir: &Path) -> Result<()> {
        if self.loaded {
            return Ok(());
        }
        let mut stmt =
            conn.prepare("SELECT format, dict FROM dictionaries ORDER BY created_at, id")?;
        let rows = stmt.query_map([], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, Vec<u8>>(1)?))
        })?;
        for row in rows {
            let (format, dict) = row?;
            let c = zstd::bulk::Compressor::with_dictionary(LEVEL, &dict)
                .map_err(|e| Error::io(dir, e))?;
            self.by_format.insert(format, c);
        }
        self.loaded = true;
        Ok(())
    }

    /// `json`, a description of `format`, compressed; may train that format's
    /// dictionary and store it through `conn` (the caller's transaction).
    pub(super) fn compress(
        &mut self,
        conn: &Connection,
        dir: &Path,
        format: &str,
        json: &[u8],
    ) -> Result<Vec<u8>> {
        self.load(conn, dir)?;
        if let Some(c) = self.by_format.get_mut(format) {
            return c.compress(json).map_err(|e| Error::io(dir, e));
        }
        let blob = self.plain.compress(json).map_err(|e| Error::io(dir, e))?;
        if self.given_up.contains(format) {
            return Ok(blob);
        }
        let samples = self.samples.entry(format.to_string()).or_default();
        samples.push(json[..json.len().min(SAMPLE_BYTES)].to_vec());
        if samples.len() >= TRAIN_AFTER {
            let samples = self.samples.remove(format).unwrap_or_default();
            match train(&samples) {
                Some((id, dict)) => {
                    let stored = conn.execute(
                        "INSERT OR IGNORE INTO dictionaries(id, format, dict, created_at) VALUES (?1, ?2, ?3, ?4)",
                        params![id, format, dict, crate::now_ms()],
                    )?;
                    if stored == 1 {
                        let c = zstd::bulk::Compressor::with_dictionary(LEVEL, &dict)
                            .map_err(|e| Error::io(dir, e))?;
                        self.by_format.insert(format.to_string(), c);
                    } else {
                        // Another format's dictionary has this id: the frames could not
                        // tell them apart.
                        self.given_up.insert(format.to_string());
                    }
                }
                None => {
                    self.given_up.insert(format.to_string());
                }
            }
        }
        Ok(blob)
    }
}

/// A dictionary trained on `samples` and its id, or `None` when zstd cannot make one
/// (too little or too uniform text): that format stays plain.
fn train(samples: &[Vec<u8>]) -> Option<(u32, Vec<u8>)> {
    let total: usize = samples.iter().map(Vec::len).sum();
    let dict = zstd::dict::from_samples(samples, DICT_BYTES.min(total)).ok()?;
    let id = zstd::zstd_safe::get_dict_id(&dict)?.get();
    Some((id, dict))
}

/// A reader's decompressors: plain, and one per dictionary met so far.
#[derive(Default)]
pub(super) struct Decompressors {
    plain: Option<zstd::bulk::Decompressor<'static>>,
    by_id: HashMap<u32, zstd::bulk::Decompressor<'static>>,
}

impl Decompressors {
    /// Decompress `blob` (at most `capacity` bytes), with the dictionary its frame
    /// names, read from `conn` the first time.
    pub(super) fn decompress(
        &mut self,
        conn: &Connection,
        dir: &Path,
        blob: &[u8],
        capacity: usize,
    ) -> Result<Vec<u8>> {
        let d = match zstd::zstd_safe::get_dict_id_from_frame(blob) {
            None => match &mut self.plain {
                Some(d) => d,
                slot => {
                    slot.insert(zstd::bulk::Decompressor::new().map_err(|e| Error::io(dir, e))?)
                }
            },
            Some(id) => match self.by_id.entry(id.get()) {
                std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::hash_map::Entry::Vacant(e) => {
                    let dict: Option<Vec<u8>> = conn
                        .prepare_cached("SELECT dict FROM dictionaries WHERE id = ?1")?
                        .query_row([id.get()], |r| r.get(0))
                        .optional()?;
                    let dict = dict.ok_or_else(|| {
                        Error::corrupt("description", DecodeError::MissingDictionary(id.get()))
                    })?;
                    e.insert(
                        zstd::bulk::Decompressor::with_dictionary(&dict)
                            .map_err(|e| Error::corrupt("description", e))?,
                    )
                }
            },
        };
        d.decompress(blob, capacity)
            .map_err(|e| Error::corrupt("description", e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::{describe, Source};
    use crate::catalog::{CatalogReader, CatalogWriter, Change, FileRow};
    use crate::lock::WriterLock;

    fn upsert(path: &str, text: &str) -> Change {
        let d = describe(&Source::from_bytes(path, text.as_bytes().to_vec()));
        let hash = *blake3::hash(text.as_bytes()).as_bytes();
        Change::Upsert {
            row: FileRow::ok_for_test(path, text.len() as u64, hash, d.format, "a@1"),
            description: Some(Box::new(d)),
        }
    }

    fn csv(i: usize) -> String {
        let mut s = format!("station_{i},reading_{i},when\n");
        for r in 0..20 {
            s.push_str(&format!(
                "S{},{}.{},2024-01-{:02}\n",
                r % 7,
                i * r,
                r,
                r % 28 + 1
            ));
        }
        s
    }

    fn blob(cat: &CatalogReader, text: &str) -> Vec<u8> {
        cat.conn
            .query_row(
                "SELECT blob FROM descriptions WHERE hash = ?1",
                [&blake3::hash(text.as_bytes()).as_bytes()[..]],
                |r| r.get(0),
            )
            .unwrap()
    }

    #[test]
    fn a_format_gets_a_dictionary_after_its_first_descriptions_and_every_blob_reads_back() {
        let d = tempfile::tempdir().unwrap();
        let mut cat =
            CatalogWriter::open(WriterLock::acquire(d.path()).unwrap(), d.path()).unwrap();
        let n = TRAIN_AFTER + 100;
        let texts: Vec<String> = (0..n).map(csv).collect();
        // In batches, as the indexer commits them; a few other formats between.
        for (b, chunk) in texts.chunks(50).enumerate() {
            let mut changes: Vec<Change> = chunk
                .iter()
                .enumerate()
                .map(|(i, t)| upsert(&format!("t/{b}_{i}.csv"), t))
                .collect();
            changes.push(upsert(
                &format!("n/{b}.md"),
                &format!("# Note {b}\n\nText.\n"),
            ));
            cat.apply(&changes).unwrap();
        }
        let dicts: Vec<(u32, String)> = cat
            .conn
            .prepare("SELECT id, format FROM dictionaries")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(
            dicts.len(),
            1,
            "only csv had enough descriptions: {dicts:?}"
        );
        assert_eq!(dicts[0].1, "csv");
        let id = |b: &[u8]| zstd::zstd_safe::get_dict_id_from_frame(b).map(|i| i.get());
        assert_eq!(
            id(&blob(&cat, &texts[0])),
            None,
            "written before the dictionary"
        );
        assert_eq!(id(&blob(&cat, &texts[TRAIN_AFTER - 1])), None);
        assert_eq!(id(&blob(&cat, &texts[TRAIN_AFTER])), Some(dicts[0].0));
        // Smaller than the same JSON compressed alone.
        let later = &texts[TRAIN_AFTER + 50];
        let stored = blob(&cat, later);
        let alone = zstd::bulk::compress(
            &serde_json::to_vec(&describe(&Source::from_bytes(
                "x.csv",
                later.as_bytes().to_vec(),
            )))
            .unwrap(),
            LEVEL,
        )
        .unwrap();
        assert!(
            stored.len() * 2 < alone.len(),
            "{} vs {}",
            stored.len(),
            alone.len()
        );
        // Every description reads back, through the writer and a fresh reader; a writer
        // opened later uses the stored dictionary.
        drop(cat);
        let reader = CatalogReader::open(d.path()).unwrap();
        for t in &texts {
            let h = blake3::hash(t.as_bytes());
            let back = reader.description(h.as_bytes(), "a@1").unwrap().unwrap();
            assert_eq!(back.format, crate::Format::Csv);
        }
        let mut cat =
            CatalogWriter::open(WriterLock::acquire(d.path()).unwrap(), d.path()).unwrap();
        let extra = csv(n + 1);
        cat.apply(&[upsert("t/extra.csv", &extra)]).unwrap();
        assert_eq!(id(&blob(&cat, &extra)), Some(dicts[0].0));
        // A dictionary gone from the catalog is a clear error, not a panic or garbage.
        cat.conn.execute("DELETE FROM dictionaries", []).unwrap();
        drop(cat);
        let reader = CatalogReader::open(d.path()).unwrap();
        let e = reader
            .description(blake3::hash(extra.as_bytes()).as_bytes(), "a@1")
            .unwrap_err()
            .to_string();
        assert!(e.contains("dictionary") && e.contains("--rebuild"), "{e}");
        let first = blake3::hash(texts[0].as_bytes());
        assert!(reader
            .description(first.as_bytes(), "a@1")
            .unwrap()
            .is_some());
    }
}
