//! Sequences as long as the lake, kept in memory up to a bound and on disk beyond it:
//! what lets a first index of any size run in a fixed memory budget.
//!
//! - [`Spool`]: items read back in the order they were pushed (the indexer's list of
//!   files to read).
//! - [`Sorter`]: items read back sorted, by an external merge sort: sorted runs of a
//!   bounded length written to disk, merged as they are read (the crawl's listing, which
//!   the parallel walk produces in no order and the change detection merges by path).
//!
//! The files are anonymous temporary files (`tempfile::tempfile_in`: unlinked from the
//! start on Linux), so neither a finished run nor a killed one leaves anything behind.
//!
//! Written by hand rather than with an external-sort crate: the ones of the field
//! (`extsort`, `ext-sort`) read their records back through a decoder whose failure ends
//! the stream like its end does. Here a record lost to a full or failing disk must stop
//! the run: a file missing from the listing would be taken for deleted. A record is a
//! few lines of length-prefixed fields; the merge is a binary heap.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Seek, Write};
use std::path::{Path, PathBuf};

/// Buffer of a spool file's writer and of each run's reader while merging.
const BUFFER: usize = 64 * 1024;

/// An item that can be written to a spool file and read back.
pub trait Record: Sized {
    /// Append the item to `out`.
    fn write_to(&self, out: &mut impl Write) -> io::Result<()>;
    /// Read one item back (an error for a truncated or malformed record).
    fn read_from(input: &mut impl Read) -> io::Result<Self>;
}

/// Items in the order pushed: the first `in_memory` of them in memory; from the one
/// after, all of them in a temporary file.
pub struct Spool<T> {
    dir: Option<PathBuf>,
    in_memory: usize,
    mem: Vec<T>,
    file: Option<BufWriter<File>>,
    len: u64,
}

impl<T: Record> Spool<T> {
    /// A spool holding up to `in_memory` items in memory, its file (if it needs one) in
    /// `dir` (the system's temporary directory with `None`).
    pub fn new(dir: Option<&Path>, in_memory: usize) -> Self {
        Spool {
            dir: dir.map(Path::to_path_buf),
            in_memory,
            mem: Vec::new(),
            file: None,
            len: 0,
        }
    }

    /// Append an item.
    pub fn push(&mut self, item: T) -> io::Result<()> {
        self.len += 1;
        if self.file.is_none() && self.mem.len() < self.in_memory {
            self.mem.push(item);
            return Ok(());
        }
        let out = match &mut self.file {
            Some(out) => out,
            None => {
                let mut out = BufWriter::with_capacity(BUFFER, temp_file(self.dir.as_deref())?);
                for m in self.mem.drain(..) {
                    m.write_to(&mut out)?;
                }
                self.mem = Vec::new();
                self.file.insert(out)
            }
        };
        item.write_to(out)
    }

    /// Items pushed so far.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Nothing pushed.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Done pushing: the items, to read back.
    pub fn finish(self) -> io::Result<Spooled<T>> {
        let file = match self.file {
            Some(out) => {
                let mut f = out.into_inner().map_err(|e| e.into_error())?;
                f.rewind()?;
                Some(f)
            }
            None => None,
        };
        Ok(Spooled {
            mem: self.mem,
            file,
            len: self.len,
        })
    }
}

/// The items of a finished [`Spool`].
pub struct Spooled<T> {
    mem: Vec<T>,
    file: Option<File>,
    len: u64,
}

impl<T> Default for Spooled<T> {
    fn default() -> Self {
        Spooled {
            mem: Vec::new(),
            file: None,
            len: 0,
        }
    }
}

impl<T> std::fmt::Debug for Spooled<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Spooled")
            .field("len", &self.len)
            .field("on_disk", &self.file.is_some())
            .finish()
    }
}

impl<T: Record> Spooled<T> {
    /// Items in it.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// No items.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl<T: Record> IntoIterator for Spooled<T> {
    type Item = io::Result<T>;
    type IntoIter = SpoolReader<T>;

    fn into_iter(self) -> SpoolReader<T> {
        SpoolReader {
            mem: self.mem.into_iter(),
            left: self.len,
            file: self.file.map(|f| BufReader::with_capacity(BUFFER, f)),
        }
    }
}

/// The items of a [`Spooled`], in order; an I/O error ends them.
pub struct SpoolReader<T> {
    mem: std::vec::IntoIter<T>,
    file: Option<BufReader<File>>,
    left: u64,
}

impl<T: Record> Iterator for SpoolReader<T> {
    type Item = io::Result<T>;

    fn next(&mut self) -> Option<io::Result<T>> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        if let Some(file) = &mut self.file {
            let item = T::read_from(file);
            if item.is_err() {
                self.left = 0;
            }
            return Some(item);
        }
        self.mem.next().map(Ok)
    }
}

/// Items to read back sorted, stably (items equal by their order come back in the order
/// pushed): kept in memory up to `run` of them; beyond, each `run` items are sorted and
/// written to a file of their own, and the files are merged as they are read (those
/// past [`FAN_IN`] merged ahead, in levels).
pub struct Sorter<T> {
    dir: Option<PathBuf>,
    run: usize,
    buf: Vec<T>,
    /// The runs on disk, in the order their items came, each with its level (0: `run`
    /// items; `l + 1`: [`FAN_IN`] runs of level `l` merged). Levels never rise along it.
    runs: Vec<(u32, Spooled<T>)>,
    len: u64,
}

/// Runs a merge reads at once. Past this many runs of one level, they are merged into
/// one run of the next level, so that a sort keeps at most `FAN_IN - 1` files open per
/// level (about four levels at a billion items) and reads its last merge through as
/// many buffers, however many items come; each item is written once more per level.
/// (A sort that kept one file open per run until its end would, past about 30M items of
/// [`crate::search::ann::SORT_RUN`] a run, hold more than a process may open by default.)
const FAN_IN: usize = if cfg!(test) { 4 } else { 64 };

impl<T: Record + Ord> Sorter<T> {
    /// A sorter of runs of `run` items (at least one), written to `dir` (the system's
    /// temporary directory with `None`).
    pub fn new(dir: Option<&Path>, run: usize) -> Self {
        Sorter {
            dir: dir.map(Path::to_path_buf),
            run: run.max(1),
            buf: Vec::new(),
            runs: Vec::new(),
            len: 0,
        }
    }

    /// Add an item.
    pub fn push(&mut self, item: T) -> io::Result<()> {
        self.len += 1;
        self.buf.push(item);
        if self.buf.len() >= self.run {
            self.buf.sort();
            let mut spool = Spool::new(self.dir.as_deref(), 0);
            for item in self.buf.drain(..) {
                spool.push(item)?;
            }
            self.runs.push((0, spool.finish()?));
            self.cascade()?;
        }
        Ok(())
    }

    /// Merge the last [`FAN_IN`] runs into one while they are of one level. Only
    /// neighbours are merged, in order, so ties still go to the items pushed first.
    fn cascade(&mut self) -> io::Result<()> {
        while self.runs.len() >= FAN_IN {
            let from = self.runs.len() - FAN_IN;
            let level = self.runs[from].0;
            if self.runs[from..].iter().any(|(l, _)| *l != level) {
                break;
            }
            let group: Vec<Spooled<T>> = self.runs.drain(from..).map(|(_, r)| r).collect();
            let mut spool = Spool::new(self.dir.as_deref(), 0);
            for item in Sorted::merge(group) {
                spool.push(item?)?;
            }
            self.runs.push((level + 1, spool.finish()?));
        }
        Ok(())
    }

    /// Done adding: the items, to read in order.
    pub fn finish(mut self) -> Sorted<T> {
        self.buf.sort();
        let mut runs: Vec<Spooled<T>> = self.runs.into_iter().map(|(_, r)| r).collect();
        runs.push(Spooled {
            len: self.buf.len() as u64,
            mem: self.buf,
            file: None,
        });
        Sorted::merge(runs)
    }
}

/// The items of a [`Sorter`], in order; an I/O error ends them.
pub struct Sorted<T> {
    sources: Vec<SpoolReader<T>>,
    /// The next item of each source not yet exhausted, smallest on top (ties go to the
    /// source pushed first).
    heap: BinaryHeap<Reverse<(T, usize)>>,
    primed: bool,
    failed: bool,
    len: u64,
}

impl<T: Record + Ord> Sorted<T> {
    /// The items of sorted `runs`, merged (ties to the earlier run).
    fn merge(runs: Vec<Spooled<T>>) -> Self {
        Sorted {
            len: runs.iter().map(|r| r.len).sum(),
            sources: runs.into_iter().map(Spooled::into_iter).collect(),
            heap: BinaryHeap::new(),
            primed: false,
            failed: false,
        }
    }

    /// Items in it.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// No items.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The items of `v`, sorted (a listing made in memory).
    pub fn from_vec(v: Vec<T>) -> Self {
        let mut s = Sorter::new(None, usize::MAX);
        s.len = v.len() as u64;
        s.buf = v;
        s.finish()
    }

    /// Every item, in memory (tests and small listings).
    pub fn into_vec(self) -> io::Result<Vec<T>> {
        self.collect()
    }

    fn pull(&mut self, source: usize) -> io::Result<()> {
        if let Some(item) = self.sources[source].next() {
            self.heap.push(Reverse((item?, source)));
        }
        Ok(())
    }
}

impl<T> Default for Sorted<T> {
    fn default() -> Self {
        Sorted {
            sources: Vec::new(),
            heap: BinaryHeap::new(),
            primed: true,
            failed: false,
            len: 0,
        }
    }
}

impl<T> std::fmt::Debug for Sorted<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sorted")
            .field("len", &self.len)
            .field("runs", &self.sources.len())
            .finish()
    }
}

impl<T: Record + Ord> Iterator for Sorted<T> {
    type Item = io::Result<T>;

    fn next(&mut self) -> Option<io::Result<T>> {
        if self.failed {
            return None;
        }
        let step = (|| {
            if !self.primed {
                self.primed = true;
                for s in 0..self.sources.len() {
                    self.pull(s)?;
                }
            }
            let Some(Reverse((item, source))) = self.heap.pop() else {
                return Ok(None);
            };
            self.pull(source)?;
            Ok(Some(item))
        })();
        match step {
            Ok(item) => item.map(Ok),
            Err(e) => {
                self.failed = true;
                Some(Err(e))
            }
        }
    }
}

/// A number, as a spool file holds it (little-endian).
impl Record for u32 {
    fn write_to(&self, out: &mut impl Write) -> io::Result<()> {
        out.write_all(&self.to_le_bytes())
    }

    fn read_from(input: &mut impl Read) -> io::Result<Self> {
        Ok(u32::from_le_bytes(read_array(input)?))
    }
}

/// A string, length-prefixed.
impl Record for String {
    fn write_to(&self, out: &mut impl Write) -> io::Result<()> {
        write_str(out, self)
    }

    fn read_from(input: &mut impl Read) -> io::Result<Self> {
        read_str(input)
    }
}

/// Bytes of a fixed length (a digest, or part of one).
impl<const N: usize> Record for [u8; N] {
    fn write_to(&self, out: &mut impl Write) -> io::Result<()> {
        out.write_all(self)
    }

    fn read_from(input: &mut impl Read) -> io::Result<Self> {
        read_array(input)
    }
}

/// A pair, one part after the other (sorted by the first, then the second).
impl<A: Record, B: Record> Record for (A, B) {
    fn write_to(&self, out: &mut impl Write) -> io::Result<()> {
        self.0.write_to(out)?;
        self.1.write_to(out)
    }

    fn read_from(input: &mut impl Read) -> io::Result<Self> {
        Ok((A::read_from(input)?, B::read_from(input)?))
    }
}

fn temp_file(dir: Option<&Path>) -> io::Result<File> {
    match dir {
        Some(d) => tempfile::tempfile_in(d),
        None => tempfile::tempfile(),
    }
}

/// A length-prefixed string.
pub(crate) fn write_str(out: &mut impl Write, s: &str) -> io::Result<()> {
    let n = u32::try_from(s.len()).map_err(|_| io::Error::other("a string too long to spool"))?;
    out.write_all(&n.to_le_bytes())?;
    out.write_all(s.as_bytes())
}

/// A string written by [`write_str`].
pub(crate) fn read_str(input: &mut impl Read) -> io::Result<String> {
    let n = u32::from_le_bytes(read_array(input)?) as usize;
    let mut v = vec![0; n];
    input.read_exact(&mut v)?;
    String::from_utf8(v).map_err(|_| io::Error::other("a spooled string is not UTF-8"))
}

/// `N` bytes.
pub(crate) fn read_array<const N: usize>(input: &mut impl Read) -> io::Result<[u8; N]> {
    let mut b = [0; N];
    input.read_exact(&mut b)?;
    Ok(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
    struct Item(String, u64);

    impl Record for Item {
        fn write_to(&self, out: &mut impl Write) -> io::Result<()> {
            write_str(out, &self.0)?;
            out.write_all(&self.1.to_le_bytes())
        }
        fn read_from(input: &mut impl Read) -> io::Result<Self> {
            Ok(Item(
                read_str(input)?,
                u64::from_le_bytes(read_array(input)?),
            ))
        }
    }

    fn items(n: u64) -> Vec<Item> {
        // A scrambled order with repeated keys and multi-byte characters.
        (0..n)
            .map(|i| Item(format!("é/{}", (i * 7919) % (n / 2 + 1)), i))
            .collect()
    }

    #[test]
    fn a_spool_gives_back_what_it_was_given_in_memory_and_on_disk() {
        let dir = tempfile::tempdir().unwrap();
        for in_memory in [0, 3, 10, 100] {
            let mut s = Spool::new(Some(dir.path()), in_memory);
            for i in items(10) {
                s.push(i).unwrap();
            }
            assert_eq!(s.len(), 10);
            let back: Vec<Item> = s
                .finish()
                .unwrap()
                .into_iter()
                .collect::<io::Result<_>>()
                .unwrap();
            assert_eq!(back, items(10), "in memory: {in_memory}");
        }
        // Nothing is left in the directory: the files are anonymous.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        let empty: Spool<Item> = Spool::new(None, 0);
        assert_eq!(empty.finish().unwrap().into_iter().count(), 0);
    }

    #[test]
    fn a_sorter_sorts_across_runs_like_a_sort_in_memory() {
        let dir = tempfile::tempdir().unwrap();
        for (n, run) in [
            (0, 1),
            (1, 1),
            (10, 3),
            (1000, 7),
            (1000, 1000),
            (1000, 5000),
        ] {
            let mut s = Sorter::new(Some(dir.path()), run);
            for i in items(n) {
                s.push(i).unwrap();
            }
            let sorted = s.finish();
            assert_eq!(sorted.len(), n);
            let mut want = items(n);
            want.sort();
            assert_eq!(sorted.into_vec().unwrap(), want, "{n} items, runs of {run}");
        }
        assert_eq!(Sorted::from_vec(items(50)).into_vec().unwrap(), {
            let mut v = items(50);
            v.sort();
            v
        });
    }

    #[test]
    fn a_long_sort_keeps_few_runs_open_and_keeps_ties_in_order() {
        // Items equal by key but told apart by their order: a stable sort's output.
        #[derive(Debug, Clone, PartialEq, Eq)]
        struct Keyed(u32, u32);
        impl PartialOrd for Keyed {
            fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
                Some(self.cmp(o))
            }
        }
        impl Ord for Keyed {
            fn cmp(&self, o: &Self) -> std::cmp::Ordering {
                self.0.cmp(&o.0)
            }
        }
        impl Record for Keyed {
            fn write_to(&self, out: &mut impl Write) -> io::Result<()> {
                (self.0, self.1).write_to(out)
            }
            fn read_from(input: &mut impl Read) -> io::Result<Self> {
                let (a, b) = <(u32, u32)>::read_from(input)?;
                Ok(Keyed(a, b))
            }
        }
        let items: Vec<Keyed> = (0u32..3000).map(|i| Keyed(i * 7919 % 7, i)).collect();
        let mut s = Sorter::new(None, 50);
        let mut most = 0;
        for i in &items {
            s.push(i.clone()).unwrap();
            most = most.max(s.runs.len());
        }
        // 60 runs of 50 at a fan-in of 4: three levels, at most 3 runs open in each.
        assert!(most <= 3 * 3 + 1, "{most} runs open at once");
        let mut want = items.clone();
        want.sort_by_key(|k| k.0);
        assert_eq!(s.finish().into_vec().unwrap(), want);
    }

    #[test]
    fn pairs_of_bytes_and_numbers_sort_by_their_first_part_then_the_second() {
        let items: Vec<([u8; 3], u32)> = (0u32..500)
            .map(|i| {
                (
                    [(i * 37 % 11) as u8, 0, (i % 3) as u8],
                    i.wrapping_mul(2654435761),
                )
            })
            .collect();
        let mut want = items.clone();
        want.sort();
        for run in [1, 4, 1000] {
            let mut s = Sorter::new(None, run);
            for &i in &items {
                s.push(i).unwrap();
            }
            assert_eq!(s.finish().into_vec().unwrap(), want, "runs of {run}");
        }
    }

    #[test]
    fn a_damaged_record_is_an_error_not_the_end() {
        struct Short;
        impl Record for Short {
            fn write_to(&self, out: &mut impl Write) -> io::Result<()> {
                out.write_all(&[1])
            }
            fn read_from(input: &mut impl Read) -> io::Result<Self> {
                read_array::<2>(input).map(|_| Short)
            }
        }
        impl PartialEq for Short {
            fn eq(&self, _: &Self) -> bool {
                true
            }
        }
        impl Eq for Short {}
        impl PartialOrd for Short {
            fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
                Some(self.cmp(o))
            }
        }
        impl Ord for Short {
            fn cmp(&self, _: &Self) -> std::cmp::Ordering {
                std::cmp::Ordering::Equal
            }
        }
        // Three one-byte records read as two-byte ones: the second read is short.
        let mut s = Spool::new(None, 0);
        for _ in 0..3 {
            s.push(Short).unwrap();
        }
        let read: Vec<io::Result<Short>> = s.finish().unwrap().into_iter().collect();
        assert!(read[0].is_ok() && read[1].is_err() && read.len() == 2);
        let mut s = Sorter::new(None, 3);
        for _ in 0..3 {
            s.push(Short).unwrap();
        }
        let read: Vec<io::Result<Short>> = s.finish().collect();
        assert!(read.iter().any(|r| r.is_err()), "the error comes through");
        assert!(read.last().unwrap().is_err(), "and ends the items");
    }
}
