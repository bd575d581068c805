//! The bytes an analyzer reads.

use std::fs::File;
use std::io::{self, Cursor, Read, Seek};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::store::RemoteObject;

use super::model::Keep;

/// How many leading bytes every analyzer and the detector may look at without I/O.
pub const HEAD_LEN: usize = 64 * 1024;

/// A file handed to an analyzer: its path (for extension hints and re-reads), size, head,
/// and — for small files — the whole content already in memory, so that hashing and
/// analysis read the disk once. A large object of an object-store lake is read by ranged
/// requests instead ([`Source::from_remote`]); analyzers never open the path themselves
/// but ask [`Source::seekable`] or [`Source::reader`], which read either alike.
#[derive(Debug, Clone)]
pub struct Source {
    path: PathBuf,
    remote: Option<Arc<RemoteObject>>,
    size: u64,
    data: Option<Arc<[u8]>>,
    head: Arc<[u8]>,
    budget: Option<u64>,
    keep: Keep,
    /// The reading rules that fired while this source was described.
    applied: Arc<super::rules::Applied>,
}

/// Bytes the default profile reads of one file at most (`index --full` lifts it).
pub const DEFAULT_BUDGET: u64 = 64 * 1024 * 1024;
/// Evenly spaced pieces a sample takes after the head.
const SAMPLE_PIECES: u64 = 8;

/// A bounded sample of a large text file: its head and evenly spaced pieces, each cut to
/// whole lines.
#[derive(Debug)]
pub struct Sample {
    /// The sampled bytes: the head, then the pieces (each starting on a new line).
    pub bytes: Vec<u8>,
    /// How many of them are the head (the rest are pieces).
    pub head_len: usize,
}

impl Source {
    /// A source whose whole content is in memory.
    pub fn from_bytes(path: impl Into<PathBuf>, data: Vec<u8>) -> Self {
        let data: Arc<[u8]> = data.into();
        let head: Arc<[u8]> = data[..data.len().min(HEAD_LEN)].into();
        Source {
            path: path.into(),
            remote: None,
            size: data.len() as u64,
            data: Some(data),
            head,
            budget: Some(DEFAULT_BUDGET),
            keep: Keep::default(),
            applied: Arc::default(),
        }
    }

    /// A source read from disk on demand; only the head is read now.
    pub fn from_file(path: impl Into<PathBuf>, size: u64) -> io::Result<Self> {
        let path = path.into();
        let mut head = Vec::with_capacity(HEAD_LEN.min(size as usize));
        File::open(&path)?
            .take(HEAD_LEN as u64)
            .read_to_end(&mut head)?;
        Ok(Source {
            path,
            remote: None,
            size,
            data: None,
            head: head.into(),
            budget: Some(DEFAULT_BUDGET),
            keep: Keep::default(),
            applied: Arc::default(),
        })
    }

    /// Open `path`, reading it whole when it is at most `in_memory_limit` bytes.
    pub fn open(path: impl Into<PathBuf>, in_memory_limit: u64) -> io::Result<Self> {
        let path = path.into();
        let size = std::fs::metadata(&path)?.len();
        if size <= in_memory_limit {
            let data = std::fs::read(&path)?;
            Ok(Self::from_bytes(path, data))
        } else {
            Self::from_file(path, size)
        }
    }

    /// An object of an object-store lake: read whole in one request when it is at most
    /// `in_memory_limit` bytes, else only its head now and the rest by ranged requests as
    /// the analyzer asks. `path` is its lake-relative key (for extension hints).
    pub fn from_remote(
        path: impl Into<PathBuf>,
        obj: Arc<RemoteObject>,
        in_memory_limit: u64,
    ) -> io::Result<Self> {
        let size = obj.size();
        if size <= in_memory_limit {
            let data = obj.read_exact_range(0, size)?;
            if (data.len() as u64) < size {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "object shorter than listed (changed while read?)",
                ));
            }
            return Ok(Self::from_bytes(path, data.to_vec()));
        }
        let head = obj.read_exact_range(0, HEAD_LEN as u64)?;
        Ok(Source {
            path: path.into(),
            remote: Some(obj),
            size,
            data: None,
            head: head.to_vec().into(),
            budget: Some(DEFAULT_BUDGET),
            keep: Keep::default(),
            applied: Arc::default(),
        })
    }

    /// The object this source reads by ranged requests, if it is one (not in memory).
    pub fn remote(&self) -> Option<&Arc<RemoteObject>> {
        self.remote.as_ref()
    }

    /// A seekable reader over the whole content: from memory, from a fresh open of the
    /// file, or by ranged requests through the object's block cache. Every analyzer that
    /// seeks (footers, directories, tails) reads through this.
    pub fn seekable(&self) -> io::Result<Box<dyn ReadSeek + '_>> {
        match (&self.data, &self.remote) {
            (Some(d), _) => Ok(Box::new(Cursor::new(&d[..]))),
            (None, Some(obj)) => Ok(Box::new(obj.reader())),
            (None, None) => Ok(Box::new(File::open(&self.path)?)),
        }
    }

    /// The same source with another read budget (`None`: read everything).
    pub fn with_budget(mut self, budget: Option<u64>) -> Self {
        self.budget = budget;
        self
    }

    /// The same source with other first rows kept per table (see [`Keep`]).
    pub fn with_keep(mut self, keep: Keep) -> Self {
        self.keep = keep;
        self
    }

    /// Where analyzers count the reading rules they apply ([`super::rules`]).
    pub fn applied(&self) -> &super::rules::Applied {
        &self.applied
    }

    /// The same source with a fresh count of applied rules.
    pub(crate) fn with_fresh_applied(mut self) -> Self {
        self.applied = Arc::default();
        self
    }

    /// The first rows analyzers keep of each table.
    pub fn keep(&self) -> Keep {
        self.keep
    }

    /// The read budget of analyzers that can sample (`None`: read everything).
    pub fn budget(&self) -> Option<u64> {
        self.budget
    }

    /// A bounded sample of a text file larger than the budget: the first half of the
    /// budget, then [`SAMPLE_PIECES`] evenly spaced pieces sharing the other half, each
    /// cut to whole lines. `None` when the file fits the budget (read it all).
    pub fn sample(&self) -> io::Result<Option<Sample>> {
        let Some(budget) = self.budget else {
            return Ok(None);
        };
        if self.size <= budget {
            return Ok(None);
        }
        let head_budget = budget / 2;
        let piece = (budget - head_budget) / SAMPLE_PIECES;
        let mut bytes = self.read_range(0, head_budget)?;
        cut_to_line(&mut bytes);
        let head_len = bytes.len();
        let span = self.size - head_budget;
        for i in 0..SAMPLE_PIECES {
            let at = head_budget + span * i / SAMPLE_PIECES;
            let mut chunk = self.read_range(at, piece)?;
            // Drop the partial first line, then the partial last one.
            let Some(nl) = memchr::memchr(b'\n', &chunk) else {
                continue;
            };
            chunk.drain(..=nl);
            cut_to_line(&mut chunk);
            bytes.extend_from_slice(&chunk);
        }
        Ok(Some(Sample { bytes, head_len }))
    }

    fn read_range(&self, at: u64, len: u64) -> io::Result<Vec<u8>> {
        if let Some(d) = &self.data {
            let a = (at as usize).min(d.len());
            let b = (at.saturating_add(len) as usize).min(d.len());
            return Ok(d[a..b].to_vec());
        }
        if let Some(obj) = &self.remote {
            return Ok(obj.read_exact_range(at, len)?.to_vec());
        }
        let mut f = File::open(&self.path)?;
        f.seek(io::SeekFrom::Start(at))?;
        let mut buf = Vec::with_capacity(len.min(self.size) as usize);
        f.take(len).read_to_end(&mut buf)?;
        Ok(buf)
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Size in bytes.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The first [`HEAD_LEN`] bytes (or all, if shorter).
    pub fn head(&self) -> &[u8] {
        &self.head
    }

    /// The whole content when it is in memory.
    pub fn bytes(&self) -> Option<&[u8]> {
        self.data.as_deref()
    }

    /// A reader over the whole content, from memory or from a fresh open of the file.
    pub fn reader(&self) -> io::Result<Box<dyn Read + Send + '_>> {
        match &self.data {
            Some(d) => Ok(Box::new(Cursor::new(&d[..]))),
            // The block reader is its own buffer.
            None if self.remote.is_some() => Ok(Box::new(self.seekable()?)),
            None => Ok(Box::new(io::BufReader::with_capacity(
                256 * 1024,
                File::open(&self.path)?,
            ))),
        }
    }

    /// Read at most `limit` bytes of the content; the flag tells whether it was cut.
    pub fn read_up_to(&self, limit: usize) -> io::Result<(Vec<u8>, bool)> {
        if let Some(d) = &self.data {
            let n = d.len().min(limit);
            return Ok((d[..n].to_vec(), d.len() > limit));
        }
        let mut buf = Vec::new();
        self.reader()?
            .take(limit as u64 + 1)
            .read_to_end(&mut buf)?;
        let cut = buf.len() > limit;
        buf.truncate(limit);
        Ok((buf, cut))
    }
}

/// What [`Source::seekable`] returns: a reader that also seeks.
pub trait ReadSeek: Read + Seek + Send {}
impl<T: Read + Seek + Send> ReadSeek for T {}

/// Cut `b` after its last newline (drop a partial last line).
fn cut_to_line(b: &mut Vec<u8>) {
    match memchr::memrchr(b'\n', b) {
        Some(i) => b.truncate(i + 1),
        None => b.clear(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_are_bounded_whole_lines() {
        let text: String = (0..100_000).map(|i| format!("{i},row {i}\n")).collect();
        let src =
            Source::from_bytes("big.csv", text.clone().into_bytes()).with_budget(Some(64 * 1024));
        let s = src.sample().unwrap().expect("larger than the budget");
        assert!(s.bytes.len() <= 64 * 1024);
        assert!(s.head_len > 0 && s.head_len < s.bytes.len());
        let sampled = String::from_utf8(s.bytes).unwrap();
        for line in sampled.lines() {
            let (n, rest) = line.split_once(',').unwrap();
            assert_eq!(rest, format!("row {n}"), "every sampled line is whole");
        }
        // Pieces reach the end of the file.
        let last: u64 = sampled
            .lines()
            .last()
            .unwrap()
            .split(',')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!(last > 85_000, "{last}");
        assert!(Source::from_bytes("s.csv", b"a\n".to_vec())
            .sample()
            .unwrap()
            .is_none());
        assert!(src.with_budget(None).sample().unwrap().is_none());
    }
}
