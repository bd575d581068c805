//! The bytes an analyzer reads.

use std::fs::File;
use std::io::{self, Cursor, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// How many leading bytes every analyzer and the detector may look at without I/O.
pub const HEAD_LEN: usize = 64 * 1024;

/// A file handed to an analyzer: its path (for extension hints and re-reads), size, head,
/// and — for small files — the whole content already in memory, so that hashing and
/// analysis read the disk once.
#[derive(Debug, Clone)]
pub struct Source {
    path: PathBuf,
    size: u64,
    data: Option<Arc<[u8]>>,
    head: Arc<[u8]>,
}

impl Source {
    /// A source whose whole content is in memory.
    pub fn from_bytes(path: impl Into<PathBuf>, data: Vec<u8>) -> Self {
        let data: Arc<[u8]> = data.into();
        let head: Arc<[u8]> = data[..data.len().min(HEAD_LEN)].into();
        Source {
            path: path.into(),
            size: data.len() as u64,
            data: Some(data),
            head,
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
            size,
            data: None,
            head: head.into(),
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
