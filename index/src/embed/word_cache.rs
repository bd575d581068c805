//! The on-disk cache of [`WordsEmbedder`](super::WordsEmbedder): one vector per word, as
//! the BERT embedded it, so that a word runs through the transformer once per model and
//! machine, not once per index run or search.
//!
//! `words-cache.bin` beside the model's files: a header (`LKWORDS1`, the model's digest
//! as 64 hex digits, the dimension as u32 LE), then records appended as words are met
//! (word length as u8, the word's UTF-8 bytes, `dim` f32 LE). Records are appended with
//! one write each; a reader stops at a truncated last record (a crash mid-write), and a
//! file with another model's header is replaced. The cache only saves time: a word's
//! vector is a function of the model and the word, so what it holds never changes a
//! vector, and a cache that cannot be written is a warning, not an error.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

const MAGIC: &[u8; 8] = b"LKWORDS1";
/// Name of the cache file in the model directory.
pub const FILE: &str = "words-cache.bin";
const HEADER: usize = 8 + 64 + 4;

/// Word vectors read from, and appended to, one cache file.
#[derive(Debug)]
pub(crate) struct WordCache {
    path: PathBuf,
    digest: String,
    dim: usize,
}

impl WordCache {
    /// The cache at `path` for the model with `digest` (64 hex digits) and `dim`.
    pub(crate) fn new(path: &Path, digest: &str, dim: usize) -> Self {
        Self {
            path: path.to_path_buf(),
            digest: digest.to_string(),
            dim,
        }
    }

    /// Every word vector the file holds for this model; empty when there is no file, or
    /// it belongs to another model. A truncated last record is cut off the file.
    pub(crate) fn load(&self) -> HashMap<String, Box<[f32]>> {
        let mut out = HashMap::new();
        let Ok(bytes) = std::fs::read(&self.path) else {
            return out;
        };
        if bytes.len() < HEADER || &bytes[..HEADER] != self.header().as_slice() {
            return out;
        }
        let mut at = HEADER;
        let rec = |len: usize| 1 + len + 4 * self.dim;
        while let Some(&len) = bytes.get(at) {
            let len = usize::from(len);
            if at + rec(len) > bytes.len() {
                break;
            }
            let word = &bytes[at + 1..at + 1 + len];
            let vals = &bytes[at + 1 + len..at + rec(len)];
            if let Ok(word) = std::str::from_utf8(word) {
                let v: Box<[f32]> = vals
                    .chunks_exact(4)
                    .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                    .collect();
                out.insert(word.to_string(), v);
            }
            at += rec(len);
        }
        if at < bytes.len() {
            // A record cut short by a crash: cut it off, so that the next append starts
            // on a record boundary.
            let cut = std::fs::OpenOptions::new()
                .write(true)
                .open(&self.path)
                .and_then(|f| f.set_len(at as u64));
            if let Err(e) = cut {
                tracing::warn!(path = %self.path.display(), error = %e, "cannot repair the word cache");
            }
        }
        out
    }

    /// Appends `words` (each at most 255 bytes, vectors of `dim`), writing a new header
    /// first when the file is missing or another model's.
    pub(crate) fn append(&self, words: &[(String, Box<[f32]>)]) -> std::io::Result<()> {
        let mut buf = Vec::with_capacity(words.len() * (8 + 4 * self.dim));
        for (w, v) in words {
            let Ok(len) = u8::try_from(w.len()) else {
                continue;
            };
            if v.len() != self.dim {
                continue;
            }
            buf.push(len);
            buf.extend_from_slice(w.as_bytes());
            buf.extend(v.iter().flat_map(|x| x.to_le_bytes()));
        }
        if buf.is_empty() {
            return Ok(());
        }
        let fresh = match std::fs::File::open(&self.path) {
            Ok(f) => {
                let mut head = vec![0u8; HEADER];
                let ok = std::io::Read::read_exact(&mut &f, &mut head).is_ok();
                !ok || head != self.header()
            }
            Err(_) => true,
        };
        if fresh {
            // Written whole under a temporary name, then renamed: a reader never sees a
            // header without the records that came with it.
            let dir = self.path.parent().unwrap_or(Path::new("."));
            let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
            tmp.write_all(&self.header())?;
            tmp.write_all(&buf)?;
            tmp.persist(&self.path).map_err(|e| e.error)?;
            return Ok(());
        }
        let mut f = std::fs::OpenOptions::new().append(true).open(&self.path)?;
        f.write_all(&buf)
    }

    fn header(&self) -> Vec<u8> {
        let mut h = Vec::with_capacity(HEADER);
        h.extend_from_slice(MAGIC);
        let mut digest = self.digest.as_bytes().to_vec();
        digest.resize(64, b'0');
        h.extend_from_slice(&digest);
        h.extend_from_slice(&(self.dim as u32).to_le_bytes());
        h
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(x: f32) -> Box<[f32]> {
        vec![x, -x, 0.5].into_boxed_slice()
    }

    #[test]
    fn appended_words_load_back_and_other_models_start_over() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join(FILE);
        let c = WordCache::new(&path, &"a".repeat(64), 3);
        assert!(c.load().is_empty());
        c.append(&[("rain".into(), v(1.0)), ("fee".into(), v(2.0))])
            .unwrap();
        c.append(&[("précipitation".into(), v(3.0))]).unwrap();
        let m = c.load();
        assert_eq!(m.len(), 3);
        assert_eq!(m["précipitation"], v(3.0));
        assert_eq!(m["rain"], v(1.0));

        // A crash in the middle of a record loses that record only.
        let len = std::fs::metadata(&path).unwrap().len();
        let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        f.set_len(len - 5).unwrap();
        let m = c.load();
        assert_eq!(m.len(), 2);
        assert!(!m.contains_key("précipitation"));
        // … and the next record lands on a boundary.
        c.append(&[("year".into(), v(5.0))]).unwrap();
        let m = c.load();
        assert_eq!((m.len(), &m["year"]), (3, &v(5.0)));

        // Another model's vectors are never read; its file is replaced on the next write.
        let other = WordCache::new(&path, &"b".repeat(64), 3);
        assert!(other.load().is_empty());
        other.append(&[("sales".into(), v(4.0))]).unwrap();
        assert_eq!(other.load().len(), 1);
        assert!(c.load().is_empty());
    }
}
