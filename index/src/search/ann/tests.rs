//! The vector index against a real catalog: graph and exact search agree, tombstones
//! never come back, rebuilds swap generations, and damage falls back to exact search.
//! Here the fixture (a [`Lake`]: a catalog with files and their vectors); the tests, by
//! theme, in the submodules.

use super::update::{check_with, refresh_with, Refreshed};
use super::*;
use crate::catalog::{CatalogWriter, Change, FileRow, Hash};
use crate::lock::WriterLock;
use crate::Format;

mod deferred_tests;
mod held_tests;
mod recovery_tests;
mod search_tests;
mod staleness_tests;

const EMB: &str = "test-emb-16";
const DIM: usize = 16;

struct Lake {
    _tmp: tempfile::TempDir,
    dir: std::path::PathBuf,
    cat: CatalogWriter,
}

fn lake() -> Lake {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("idx");
    let cat = CatalogWriter::open(WriterLock::acquire(&dir).unwrap(), tmp.path()).unwrap();
    Lake {
        _tmp: tmp,
        dir,
        cat,
    }
}

fn hash(content: &str) -> Hash {
    *blake3::hash(content.as_bytes()).as_bytes()
}

fn row(path: &str, content: &str) -> FileRow {
    let size = content.len() as u64;
    FileRow::ok_for_test(path, size, hash(content), Format::Csv, "csv@1")
}

/// A deterministic vector per content string.
fn vector(content: &str) -> Vec<f32> {
    let mut rng =
        fastrand::Rng::with_seed(u64::from_le_bytes(hash(content)[..8].try_into().unwrap()));
    (0..DIM).map(|_| rng.f32() - 0.5).collect()
}

impl Lake {
    /// Write (or overwrite) `path` with `content` and its embedding.
    fn put(&mut self, path: &str, content: &str) {
        self.put_vector(path, content, vector(content));
    }

    fn put_vector(&mut self, path: &str, content: &str, v: Vec<f32>) {
        self.cat
            .apply(&[Change::Upsert {
                row: row(path, content),
                description: None,
            }])
            .unwrap();
        self.cat
            .put_embeddings(EMB, &[(hash(content), "csv@1".into(), v)])
            .unwrap();
    }

    /// The file written again as it was: its description key keeps its vector (a sync
    /// embeds only keys that have none).
    fn rewrite(&mut self, path: &str, content: &str) {
        self.cat
            .apply(&[Change::Upsert {
                row: row(path, content),
                description: None,
            }])
            .unwrap();
    }

    fn delete(&mut self, path: &str) {
        self.cat
            .apply(&[Change::Delete { path: path.into() }])
            .unwrap();
    }

    fn rename(&mut self, from: &str, to: &str, content: &str) {
        self.cat
            .apply(&[Change::Rename {
                from: from.into(),
                row: row(to, content),
            }])
            .unwrap();
    }

    fn refresh(&mut self, threshold: u64) -> Refreshed {
        refresh_with(&mut self.cat, &self.dir, EMB, threshold, None).unwrap()
    }

    /// The graph loaded, as a long-lived process opens it.
    fn open(&self, threshold: u64) -> VectorIndex {
        VectorIndex::open_with(&self.cat, &self.dir, EMB, threshold, Mode::Graph).unwrap()
    }

    /// The generation's codes scanned, as a one-off search opens it.
    fn scan(&self, threshold: u64) -> VectorIndex {
        VectorIndex::open_with(&self.cat, &self.dir, EMB, threshold, Mode::Scan).unwrap()
    }

    fn exact(&self) -> VectorIndex {
        VectorIndex::open_exact(&self.cat, &self.dir, EMB).unwrap()
    }

    fn generations(&self) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(self.dir.join(graph::VECTORS_DIR))
            .map(|d| {
                d.map(|e| e.unwrap().file_name().into_string().unwrap())
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    }
}

/// Flip the bits of the byte `at` (from the end when negative) of `file` in generation
/// 1, keeping its size: damage only a digest tells. Its path and bytes after.
fn flip_byte(l: &Lake, file: &str, at: isize) -> (std::path::PathBuf, Vec<u8>) {
    let path = graph::generation_dir(&l.dir, 1).join(file);
    let mut bytes = std::fs::read(&path).unwrap();
    let i = if at < 0 {
        bytes.len() - at.unsigned_abs()
    } else {
        at as usize
    };
    bytes[i] ^= 0x55;
    std::fs::write(&path, &bytes).unwrap();
    (path, bytes)
}

fn filled(n: usize) -> Lake {
    let mut l = lake();
    for i in 0..n {
        l.put(&format!("f{i:03}.csv"), &format!("content {i}"));
    }
    l
}

/// One file deleted, one edited, one renamed, one added.
fn change_four(l: &mut Lake) {
    l.delete("f010.csv");
    l.put("f020.csv", "content 20, edited");
    l.rename("f030.csv", "moved/f030.csv", "content 30");
    l.put("new.csv", "brand new");
}

fn paths(hits: &[(String, f32)]) -> Vec<&str> {
    hits.iter().map(|h| h.0.as_str()).collect()
}
