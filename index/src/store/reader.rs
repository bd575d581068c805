//! Reading one object by ranged GETs: exact ranges, and a `Read + Seek` view through a
//! small cache of [`BLOCK_SIZE`] blocks shared by every reader of the object.

use super::{ObjectLake, BLOCK_SIZE, CACHED_BLOCKS};
use bytes::Bytes;
use object_store::path::Path as ObjectPath;
use std::io::{self, Read, Seek, SeekFrom};
use std::sync::{Arc, Mutex};

/// An object to read: its lake, key and size, and the blocks read so far.
pub struct RemoteObject {
    lake: Arc<ObjectLake>,
    location: ObjectPath,
    size: u64,
    /// Recently read blocks, most recent last: (block index, bytes).
    blocks: Mutex<Vec<(u64, Bytes)>>,
}

impl std::fmt::Debug for RemoteObject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteObject")
            .field("location", &self.location.as_ref())
            .field("size", &self.size)
            .finish()
    }
}

impl RemoteObject {
    pub(super) fn new(lake: Arc<ObjectLake>, location: ObjectPath, size: u64) -> Self {
        RemoteObject {
            lake,
            location,
            size,
            blocks: Mutex::new(Vec::new()),
        }
    }

    /// Size in bytes, from the listing.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Bytes `at..at + len` (cut at the end), in one GET, bypassing the block cache: for
    /// reads of known extent (the head, a sample's pieces, a whole small object).
    pub fn read_exact_range(&self, at: u64, len: u64) -> io::Result<Bytes> {
        let end = at.saturating_add(len).min(self.size);
        if at >= end {
            return Ok(Bytes::new());
        }
        self.lake.get_range(&self.location, at..end)
    }

    /// Block `i`, from the cache or one GET.
    fn block(&self, i: u64) -> io::Result<Bytes> {
        {
            let mut blocks = self.blocks.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(at) = blocks.iter().position(|(b, _)| *b == i) {
                let hit = blocks.remove(at);
                let bytes = hit.1.clone();
                blocks.push(hit);
                return Ok(bytes);
            }
        }
        let bytes = self.read_exact_range(i * BLOCK_SIZE, BLOCK_SIZE)?;
        let mut blocks = self.blocks.lock().unwrap_or_else(|p| p.into_inner());
        if blocks.len() >= CACHED_BLOCKS {
            blocks.remove(0);
        }
        blocks.push((i, bytes.clone()));
        Ok(bytes)
    }

    /// Bytes `at..at + len` (cut at the end) through the block cache.
    pub fn read_at(&self, at: u64, len: usize) -> io::Result<Bytes> {
        let end = at.saturating_add(len as u64).min(self.size);
        if at >= end {
            return Ok(Bytes::new());
        }
        let (first, last) = (at / BLOCK_SIZE, (end - 1) / BLOCK_SIZE);
        if first == last {
            let b = self.block(first)?;
            let from = (at - first * BLOCK_SIZE) as usize;
            let to = (end - first * BLOCK_SIZE) as usize;
            return Ok(b.slice(from.min(b.len())..to.min(b.len())));
        }
        // Spanning blocks: one GET of the whole range (a column chunk, a member).
        self.read_exact_range(at, end - at)
    }

    /// A `Read + Seek` view from offset 0.
    pub fn reader(self: &Arc<Self>) -> BlockReader {
        BlockReader {
            obj: self.clone(),
            pos: 0,
        }
    }
}

/// A `Read + Seek` view of a [`RemoteObject`]; readers of one object share its blocks.
#[derive(Debug)]
pub struct BlockReader {
    obj: Arc<RemoteObject>,
    pos: u64,
}

impl Read for BlockReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.pos >= self.obj.size || buf.is_empty() {
            return Ok(0);
        }
        let i = self.pos / BLOCK_SIZE;
        let block = self.obj.block(i)?;
        let from = (self.pos - i * BLOCK_SIZE) as usize;
        if from >= block.len() {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "object shorter than listed (changed while read?)",
            ));
        }
        let n = buf.len().min(block.len() - from);
        buf[..n].copy_from_slice(&block[from..from + n]);
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for BlockReader {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let new = match to {
            SeekFrom::Start(n) => Some(n),
            SeekFrom::End(d) => self.obj.size.checked_add_signed(d),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        };
        self.pos = new.ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "seek before the object's start",
            )
        })?;
        Ok(self.pos)
    }
}

/// The object as parquet's `ChunkReader`: page reads go through the block cache.
#[derive(Debug, Clone)]
pub struct Chunks(pub Arc<RemoteObject>);

impl parquet::file::reader::Length for Chunks {
    fn len(&self) -> u64 {
        self.0.size
    }
}

impl parquet::file::reader::ChunkReader for Chunks {
    type T = BlockReader;

    fn get_read(&self, start: u64) -> parquet::errors::Result<BlockReader> {
        let mut r = self.0.reader();
        r.pos = start;
        Ok(r)
    }

    fn get_bytes(&self, start: u64, length: usize) -> parquet::errors::Result<Bytes> {
        let b = self
            .0
            .read_at(start, length)
            .map_err(|e| parquet::errors::ParquetError::External(Box::new(e)))?;
        if b.len() < length {
            return Err(parquet::errors::ParquetError::EOF(format!(
                "object ends before byte {}",
                start + length as u64
            )));
        }
        Ok(b)
    }
}
