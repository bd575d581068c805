//! A generation's files as the page cache holds them best for a process that maps them
//! afresh: in huge pages.
//!
//! A `lakestar search` maps the generation and touches most of it once (the scan reads
//! every point), so its first touches — a fault per mapped run of pages, a TLB entry
//! per page — are much of its time at a million files. Linux (6.x, with ext4 or XFS)
//! caches a file's data in folios as large as the writes or the readahead that brought
//! it in, and maps a 2 MiB folio with one fault and one TLB entry. So the files are
//! written in whole, aligned [`WRITE_CHUNK`]s ([`ChunkWriter`]), which leaves them
//! cached in 2 MiB folios, and mapped with `MADV_HUGEPAGE` ([`map`]), which makes the
//! readahead that brings them back from disk (after a reboot, or once evicted) use 2 MiB
//! folios too: a new process reads the codes cold in a tenth of the faults, and random
//! points in a fraction of the time (BENCHMARKS.md, "Vector search
//! settings"). Elsewhere (other kernels,
//! other file systems) both are harmless no-ops.
//!
//! Hand-written: `std::io::BufWriter` flushes whatever it holds when a write does not
//! fit, so its writes drift off the 2 MiB boundaries; this keeps every write but the
//! last whole and aligned.

use std::fs::File;
use std::io::{self, Write};

/// Bytes of each write of a generation's file: a huge page (2 MiB on x86-64 and
/// arm64's 4 KiB-page kernels).
pub const WRITE_CHUNK: usize = 2 << 20;

/// A writer that passes on only whole [`WRITE_CHUNK`]s (the start of the file being
/// aligned, so is every write), and the rest at [`finish`](ChunkWriter::finish).
pub struct ChunkWriter<W: Write> {
    inner: W,
    buf: Vec<u8>,
}

impl<W: Write> ChunkWriter<W> {
    /// Write to `inner`, which must be at a multiple of [`WRITE_CHUNK`] (a new file).
    pub fn new(inner: W) -> ChunkWriter<W> {
        ChunkWriter {
            inner,
            buf: Vec::with_capacity(WRITE_CHUNK),
        }
    }

    /// Write what is left and return the writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.inner.write_all(&self.buf)?;
        self.inner.flush()?;
        Ok(self.inner)
    }
}

impl<W: Write> Write for ChunkWriter<W> {
    fn write(&mut self, mut bytes: &[u8]) -> io::Result<usize> {
        let n = bytes.len();
        while !bytes.is_empty() {
            if self.buf.is_empty() && bytes.len() >= WRITE_CHUNK {
                // Whole chunks straight from the caller's bytes, without a copy.
                let whole = bytes.len() / WRITE_CHUNK * WRITE_CHUNK;
                self.inner.write_all(&bytes[..whole])?;
                bytes = &bytes[whole..];
                continue;
            }
            let take = (WRITE_CHUNK - self.buf.len()).min(bytes.len());
            self.buf.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
            if self.buf.len() == WRITE_CHUNK {
                self.inner.write_all(&self.buf)?;
                self.buf.clear();
            }
        }
        Ok(n)
    }

    /// Passes nothing on: a partial chunk written now would leave the rest unaligned.
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Map `file` read-only, asking for huge pages (see the module's comment; the advice is
/// only advice, and its failure is not an error).
///
/// # Safety
///
/// The file must not change while it is mapped: a generation's files are written once,
/// synced and renamed into place, and never written again.
pub unsafe fn map(file: &File) -> io::Result<memmap2::Mmap> {
    // SAFETY: the caller's promise above.
    let map = unsafe { memmap2::Mmap::map(file) }?;
    #[cfg(target_os = "linux")]
    let _ = map.advise(memmap2::Advice::HugePage);
    Ok(map)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records the length of every write it is given.
    #[derive(Default)]
    struct Writes {
        bytes: Vec<u8>,
        lens: Vec<usize>,
    }

    impl Write for Writes {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.bytes.extend_from_slice(b);
            self.lens.push(b.len());
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn every_write_but_the_last_is_whole_chunks_and_no_byte_is_lost() {
        let mut rng = fastrand::Rng::with_seed(9);
        let data: Vec<u8> = (0..8 * WRITE_CHUNK + 12_345).map(|_| rng.u8(..)).collect();
        // Pieces of odd sizes (a point is 132 or 260 bytes), then one larger than a chunk.
        let mut w = ChunkWriter::new(Writes::default());
        let mut at = 0;
        for size in [132, 260, 1, 4096].iter().cycle().take(5_000) {
            w.write_all(&data[at..at + size]).unwrap();
            w.flush().unwrap();
            at += size;
        }
        w.write_all(&data[at..at + 3 * WRITE_CHUNK]).unwrap();
        at += 3 * WRITE_CHUNK;
        w.write_all(&data[at..]).unwrap();
        let out = w.finish().unwrap();
        assert_eq!(out.bytes, data);
        let (last, whole) = out.lens.split_last().unwrap();
        assert!(whole.iter().all(|n| n % WRITE_CHUNK == 0), "{whole:?}");
        assert_eq!(*last, data.len() % WRITE_CHUNK);
    }

    #[test]
    fn a_small_file_is_one_write_and_maps_back() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("f.bin");
        let mut w = ChunkWriter::new(File::create(&path).unwrap());
        w.write_all(b"abc").unwrap();
        w.write_all(b"def").unwrap();
        w.finish().unwrap().sync_all().unwrap();
        // SAFETY: the file is not written again.
        let map = unsafe { map(&File::open(&path).unwrap()) }.unwrap();
        assert_eq!(&map[..], b"abcdef");
    }
}
