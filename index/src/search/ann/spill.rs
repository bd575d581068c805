//! The rows a rebuild reads from one catalog snapshot, spilled to a file beside the
//! generation they become (`vectors/gen-N.rows`) instead of held in memory: at a
//! million files they would be 1.4 GB of the first index's peak. The build reads them twice
//! in path order, to find the distinct codes and then to write the codes and members;
//! the swap reads them again, with each row's point, to hand the catalog's rows over.
//! The file goes with the generations that are not kept (`remove_other_generations`),
//! so a crash leaves nothing behind for long.
//!
//! Written by hand: a file this process writes and reads back in order, a few times,
//! and never keeps; a length-prefixed record is a few lines, where a serialization
//! crate would add a format and a dependency for nothing more.
//!
//! Record: path length (u32), path, content hash (32 bytes), analyzer length (u16),
//! analyzer, scale (f32), dimension (u32), codes (i8 each); little-endian.

use crate::catalog::{Hash, KeyedVector};
use crate::compact::Code;
use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

/// Buffer of the spill's reader and writer.
const BUFFER: usize = 1 << 20;

/// A spill being written.
pub(super) struct SpillWriter {
    path: PathBuf,
    out: BufWriter<File>,
    rows: u64,
    dims: HashMap<usize, u64>,
}

/// A spill written: its rows, in the order they were pushed.
#[derive(Debug)]
pub(super) struct Spill {
    path: PathBuf,
    rows: u64,
    dims: HashMap<usize, u64>,
}

impl SpillWriter {
    /// Create (or truncate) the spill at `path`.
    pub(super) fn create(path: &Path) -> io::Result<SpillWriter> {
        Ok(SpillWriter {
            path: path.to_path_buf(),
            out: BufWriter::with_capacity(BUFFER, File::create(path)?),
            rows: 0,
            dims: HashMap::new(),
        })
    }

    /// Append a row.
    pub(super) fn push(&mut self, r: &KeyedVector) -> io::Result<()> {
        let too_long = || io::Error::other("a path or analyzer too long to spill");
        let path = u32::try_from(r.path.len()).map_err(|_| too_long())?;
        let analyzer = u16::try_from(r.analyzer.len()).map_err(|_| too_long())?;
        let dim = u32::try_from(r.vector.dim()).map_err(|_| too_long())?;
        let o = &mut self.out;
        o.write_all(&path.to_le_bytes())?;
        o.write_all(r.path.as_bytes())?;
        o.write_all(&r.hash)?;
        o.write_all(&analyzer.to_le_bytes())?;
        o.write_all(r.analyzer.as_bytes())?;
        o.write_all(&r.vector.scale.to_le_bytes())?;
        o.write_all(&dim.to_le_bytes())?;
        o.write_all(bytemuck::cast_slice(&r.vector.codes))?;
        self.rows += 1;
        *self.dims.entry(r.vector.dim()).or_default() += 1;
        Ok(())
    }

    /// Flush it: the spill to read back.
    pub(super) fn finish(self) -> io::Result<Spill> {
        self.out.into_inner().map_err(|e| e.into_error())?;
        Ok(Spill {
            path: self.path,
            rows: self.rows,
            dims: self.dims,
        })
    }

    /// Give it up: the file is removed.
    pub(super) fn discard(self) {
        let path = self.path.clone();
        drop(self);
        let _ = std::fs::remove_file(path);
    }
}

impl Spill {
    /// Rows in it.
    pub(super) fn rows(&self) -> u64 {
        self.rows
    }

    /// The dimension most rows have (all of them, unless the embedder misbehaved).
    pub(super) fn common_dim(&self) -> usize {
        super::most_common_dim(&self.dims)
    }

    /// Its rows, in order.
    pub(super) fn read(&self) -> io::Result<SpillReader> {
        Ok(SpillReader {
            input: BufReader::with_capacity(BUFFER, File::open(&self.path)?),
            left: self.rows,
        })
    }

    /// Remove the file.
    pub(super) fn remove(&self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// The rows of a [`Spill`], in order.
pub(super) struct SpillReader {
    input: BufReader<File>,
    left: u64,
}

impl SpillReader {
    fn record(&mut self) -> io::Result<KeyedVector> {
        let i = &mut self.input;
        let n = u32_of(i)? as usize;
        let path = String::from_utf8(read_vec(i, n)?)
            .map_err(|_| io::Error::other("a spilled path is not UTF-8"))?;
        let mut hash: Hash = [0; 32];
        i.read_exact(&mut hash)?;
        let mut two = [0; 2];
        i.read_exact(&mut two)?;
        let analyzer = String::from_utf8(read_vec(i, u16::from_le_bytes(two) as usize)?)
            .map_err(|_| io::Error::other("a spilled analyzer is not UTF-8"))?;
        let scale = f32::from_bits(u32_of(i)?);
        let n = u32_of(i)? as usize;
        let codes = read_vec(i, n)?;
        Ok(KeyedVector {
            path,
            hash,
            analyzer,
            vector: Code {
                scale,
                codes: codes.into_iter().map(|b| b as i8).collect(),
            },
        })
    }
}

impl Iterator for SpillReader {
    type Item = io::Result<KeyedVector>;

    fn next(&mut self) -> Option<io::Result<KeyedVector>> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        Some(self.record())
    }
}

fn u32_of(i: &mut impl Read) -> io::Result<u32> {
    let mut b = [0; 4];
    i.read_exact(&mut b)?;
    Ok(u32::from_le_bytes(b))
}

fn read_vec(i: &mut impl Read, n: usize) -> io::Result<Vec<u8>> {
    let mut v = vec![0; n];
    i.read_exact(&mut v)?;
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(path: &str, analyzer: &str, codes: Vec<i8>) -> KeyedVector {
        KeyedVector {
            path: path.into(),
            hash: [path.len() as u8; 32],
            analyzer: analyzer.into(),
            vector: Code { scale: 0.25, codes },
        }
    }

    #[test]
    fn rows_come_back_as_they_went_in() {
        let dir = tempfile::tempdir().unwrap();
        let rows = vec![
            row("a.csv", "csv", vec![1, -2, 127, -127]),
            row("b/é.json", "", vec![0, 0, 0, 0]),
            row("", "x", vec![]),
            row("c.csv", "csv", vec![5, 6, 7, 8]),
        ];
        let mut w = SpillWriter::create(&dir.path().join("gen-1.rows")).unwrap();
        for r in &rows {
            w.push(r).unwrap();
        }
        let spill = w.finish().unwrap();
        assert_eq!((spill.rows(), spill.common_dim()), (4, 4));
        for _ in 0..2 {
            let back: Vec<KeyedVector> = spill.read().unwrap().map(Result::unwrap).collect();
            assert_eq!(back, rows);
        }
        spill.remove();
        assert!(spill.read().is_err());
    }

    #[test]
    fn a_truncated_spill_is_an_error_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gen-1.rows");
        let mut w = SpillWriter::create(&path).unwrap();
        w.push(&row("a.csv", "csv", vec![1; 300])).unwrap();
        let spill = w.finish().unwrap();
        let len = std::fs::metadata(&path).unwrap().len();
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(len - 10)
            .unwrap();
        let back: Vec<io::Result<KeyedVector>> = spill.read().unwrap().collect();
        assert_eq!(back.len(), 1);
        assert!(back[0].is_err());
    }
}
