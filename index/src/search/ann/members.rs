//! The files a generation's points stand for (`members.bin`), written with the
//! generation and never changed after, like its codes: a search resolves the points it
//! found to their paths here, and a refresh finds which changed paths the generation
//! held. A table and an index by point in the catalog would store every path twice
//! more (a tenth of the index); here the paths
//! are front-coded in sorted order by tantivy's sstable, and the rest is three arrays
//! of u32, about 20 bytes a file.
//!
//! Layout: the paths as an sstable of keys alone (ordinal = rank in byte order), padded
//! to 4 bytes; `point_of[n]` (each path's point); `starts[points + 1]` and `ords[n]` (the
//! paths of point `p` are the ordinals `ords[starts[p]..starts[p + 1]]`); then a footer
//! of the sstable's length, `n` and `points` (u64 each, little-endian) and [`MAGIC`].

use crate::spool::{Sorter, Spool};
use std::collections::HashMap;
use std::fs::File;
use std::io::{self, Write};
use std::ops::Deref;
use std::path::{Path, PathBuf};
use tantivy_common::{OwnedBytes, StableDeref};
use tantivy_sstable::{Dictionary, SSTable, VoidSSTable};

/// Last bytes of the file.
const MAGIC: &[u8; 8] = b"lsmembr1";
/// The footer: three u64 and the magic.
const FOOTER: usize = 32;
/// Bytes of paths per sstable block (the crate's default is 4,000): a point's path is
/// decoded from its block's start, and a search resolves ~200 points in as many blocks.
const BLOCK_BYTES: usize = 1024;

/// Write the members (path, point), sorted by path with no path twice, and every point
/// below `points`, to `out`, all in memory: the tests' reference for [`MembersWriter`].
#[cfg(test)]
pub fn write(out: impl Write, members: &[(&str, u32)], points: u32) -> io::Result<()> {
    if members.windows(2).any(|w| w[0].0 >= w[1].0) {
        return Err(unsorted());
    }
    if members.iter().any(|&(_, p)| p >= points) || members.len() > u32::MAX as usize {
        return Err(outside());
    }
    let mut paths = Dictionary::<VoidSSTable>::builder(Vec::new())?;
    paths.set_block_len(BLOCK_BYTES);
    for (path, _) in members {
        paths.insert(path.as_bytes(), &())?;
    }
    let paths = paths.finish()?;
    let mut out = io::BufWriter::new(out);
    out.write_all(&paths)?;
    let point_of: Vec<u32> = members.iter().map(|&(_, p)| p).collect();
    write_tail(&mut out, paths.len() as u64, &point_of, points)?;
    out.flush()
}

fn unsorted() -> io::Error {
    io::Error::other("members not sorted by path, or a path twice")
}

fn outside() -> io::Error {
    io::Error::other("a member's point is not among the points")
}

/// After `paths_len` bytes of paths: the padding, `point_of`, the ordinals grouped by
/// point, and the footer.
#[cfg(test)]
fn write_tail(
    out: &mut impl Write,
    paths_len: u64,
    point_of: &[u32],
    points: u32,
) -> io::Result<()> {
    out.write_all(&[0; 3][..pad(paths_len as usize)])?;
    for p in point_of {
        out.write_all(&p.to_le_bytes())?;
    }
    // The ordinals grouped by point (a counting sort), in path order within a point.
    let mut starts = vec![0u32; points as usize + 1];
    for &p in point_of {
        starts[p as usize + 1] += 1;
    }
    for i in 1..starts.len() {
        starts[i] += starts[i - 1];
    }
    let mut next = starts.clone();
    let mut ords = vec![0u32; point_of.len()];
    for (ord, &p) in point_of.iter().enumerate() {
        ords[next[p as usize] as usize] = ord as u32;
        next[p as usize] += 1;
    }
    for v in starts.iter().chain(&ords) {
        out.write_all(&v.to_le_bytes())?;
    }
    for v in [paths_len, point_of.len() as u64, u64::from(points)] {
        out.write_all(&v.to_le_bytes())?;
    }
    out.write_all(MAGIC)
}

/// The members file written a member at a time, in a bounded memory: the paths go to a
/// file (`paths`, removed at the end) as they come; each member's point to a spool, and
/// (point, ordinal) to an external sort that gives the ordinals grouped by point at
/// [`MembersWriter::finish`] — the counting sort the tests' `write` does in memory,
/// which held 12 bytes a file (and 8 a point) at the end of a rebuild.
pub struct MembersWriter {
    paths: tantivy_sstable::Writer<io::BufWriter<File>, <VoidSSTable as SSTable>::ValueWriter>,
    paths_file: PathBuf,
    last: Option<String>,
    /// Each member's point, in path order (the file's `point_of`).
    point_of: Spool<u32>,
    /// (point, ordinal) of each member: the file's `starts` and `ords`, once sorted.
    by_point: Sorter<(u32, u32)>,
    /// Members so far.
    n: u32,
    run: usize,
}

impl MembersWriter {
    /// A writer whose paths go to the file `paths_file` meanwhile, and whose spool and
    /// sort hold up to `run` items each in memory (beyond, anonymous files in the same
    /// directory).
    pub fn create(paths_file: &Path, run: usize) -> io::Result<MembersWriter> {
        let out = io::BufWriter::with_capacity(1 << 20, File::create(paths_file)?);
        let mut paths = Dictionary::<VoidSSTable>::builder(out)?;
        paths.set_block_len(BLOCK_BYTES);
        let dir = paths_file.parent();
        Ok(MembersWriter {
            paths,
            paths_file: paths_file.to_path_buf(),
            last: None,
            point_of: Spool::new(dir, run),
            by_point: Sorter::new(dir, run),
            n: 0,
            run,
        })
    }

    /// The next member: its path must come after the last one's.
    pub fn push(&mut self, path: &str, point: u32) -> io::Result<()> {
        if self.last.as_deref().is_some_and(|last| last >= path) {
            return Err(unsorted());
        }
        if self.n == u32::MAX {
            return Err(outside());
        }
        self.paths.insert(path.as_bytes(), &())?;
        self.point_of.push(point)?;
        self.by_point.push((point, self.n))?;
        self.n += 1;
        match &mut self.last {
            Some(last) => {
                last.clear();
                last.push_str(path);
            }
            None => self.last = Some(path.to_string()),
        }
        Ok(())
    }

    /// Write the members file to `out`, every member's point below `points`.
    pub fn finish(self, out: impl Write, points: u32) -> io::Result<()> {
        let file = self
            .paths
            .finish()?
            .into_inner()
            .map_err(|e| e.into_error())?;
        drop(file);
        let mut out = io::BufWriter::with_capacity(1 << 20, out);
        let paths_len = io::copy(&mut File::open(&self.paths_file)?, &mut out)?;
        std::fs::remove_file(&self.paths_file)?;
        out.write_all(&[0; 3][..pad(paths_len as usize)])?;
        for p in self.point_of.finish()? {
            out.write_all(&p?.to_le_bytes())?;
        }
        // `starts[q]` is the number of members whose point is below `q`: written as the
        // sorted pairs pass, the ordinals set aside until they are all written.
        let mut ords = Spool::new(self.paths_file.parent(), self.run);
        let (mut seen, mut next) = (0u32, 0u64);
        for pair in self.by_point.finish() {
            let (point, ord) = pair?;
            if point >= points {
                return Err(outside());
            }
            while next <= u64::from(point) {
                out.write_all(&seen.to_le_bytes())?;
                next += 1;
            }
            seen += 1;
            ords.push(ord)?;
        }
        while next <= u64::from(points) {
            out.write_all(&seen.to_le_bytes())?;
            next += 1;
        }
        for ord in ords.finish()? {
            out.write_all(&ord?.to_le_bytes())?;
        }
        for v in [paths_len, u64::from(self.n), u64::from(points)] {
            out.write_all(&v.to_le_bytes())?;
        }
        out.write_all(MAGIC)?;
        out.flush()
    }
}

/// Padding after `len` bytes of paths to the next multiple of 4.
fn pad(len: usize) -> usize {
    (4 - len % 4) % 4
}

/// A generation's `members.bin`, mapped.
pub struct Members {
    paths: Dictionary<VoidSSTable>,
    bytes: OwnedBytes,
    /// Where `point_of`, `starts` and `ords` begin in `bytes`.
    point_of: usize,
    starts: usize,
    ords: usize,
    n: usize,
    points: usize,
}

/// A read-only map of a file, for `OwnedBytes`.
struct Mapped(memmap2::Mmap);

impl Deref for Mapped {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.0
    }
}

// SAFETY: the bytes of a mapping stay at the same address when the `Mmap` value moves
// (what `StableDeref` asks); tantivy's own directory wraps its maps the same way.
unsafe impl StableDeref for Mapped {}

impl Members {
    /// Map `path`, which must hold the members of `points` points. Its digest is not
    /// read (that would cost as much as a search, as for the codes); its structure is
    /// checked, and a lookup that meets damage anyway is an error, never a panic.
    pub fn open(path: &Path, points: usize) -> Result<Members, String> {
        let err = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
        let file = std::fs::File::open(path).map_err(|e| err(&e))?;
        // SAFETY: as for the codes (`dist::map_exact`): a generation's files are written
        // once, synced and renamed into place, and never written again.
        let map = unsafe { super::pages::map(&file) }.map_err(|e| err(&e))?;
        Members::from_bytes(OwnedBytes::new(Mapped(map)), points).map_err(|e| err(&e))
    }

    /// [`Members::open`] over bytes already read.
    fn from_bytes(bytes: OwnedBytes, points: usize) -> Result<Members, String> {
        let len = bytes.len();
        let footer = len
            .checked_sub(FOOTER)
            .map(|at| &bytes.as_slice()[at..])
            .filter(|f| &f[24..] == MAGIC)
            .ok_or("not a members file")?;
        let word = |i: usize| u64::from_le_bytes(footer[i * 8..i * 8 + 8].try_into().unwrap());
        let (sstable, n, stored_points) = (word(0), word(1), word(2));
        if stored_points != points as u64 {
            return Err(format!(
                "{stored_points} points, the manifest says {points}"
            ));
        }
        let sstable = usize::try_from(sstable).map_err(|_| "too large")?;
        let n = usize::try_from(n).map_err(|_| "too large")?;
        let point_of = sstable
            .checked_add(pad(sstable))
            .ok_or("malformed footer")?;
        let want = (n as u128 * 2 + points as u128 + 1) * 4 + point_of as u128 + FOOTER as u128;
        if want != len as u128 {
            return Err(format!("{len} bytes, its footer implies {want}"));
        }
        let slice = bytes.slice(0..sstable);
        // tantivy-sstable asserts on some malformed input: contained here, and damage
        // costs the generation (exact search takes over), not the process.
        let paths = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            Dictionary::<VoidSSTable>::from_bytes(slice)
        }))
        .map_err(|_| "its paths are malformed".to_string())?
        .map_err(|e| e.to_string())?;
        if paths.num_terms() != n {
            return Err(format!("{} paths, its footer says {n}", paths.num_terms()));
        }
        Ok(Members {
            paths,
            bytes,
            point_of,
            starts: point_of + 4 * n,
            ords: point_of + 4 * n + 4 * (points + 1),
            n,
            points,
        })
    }

    /// The u32 at index `i` of the array at `at`.
    fn word(&self, at: usize, i: usize) -> u32 {
        let b = &self.bytes.as_slice()[at + 4 * i..at + 4 * i + 4];
        u32::from_le_bytes([b[0], b[1], b[2], b[3]])
    }

    /// Files the points stand for.
    pub fn len(&self) -> usize {
        self.n
    }

    /// Whether no file has a point.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The point the file at `path` had when the generation was written.
    pub fn point_of(&self, path: &str) -> io::Result<Option<u64>> {
        let ord = contained(|| self.paths.term_ord(path.as_bytes()))?;
        Ok(ord
            .filter(|&o| (o as usize) < self.n)
            .map(|o| u64::from(self.word(self.point_of, o as usize))))
    }

    /// The point of the member at `ord` (its rank in path order), if there is one.
    pub fn point_at(&self, ord: usize) -> Option<u32> {
        (ord < self.n).then(|| self.word(self.point_of, ord))
    }

    /// The paths of each of the points `ids` (in path order); a point with none, or
    /// past the last, is absent.
    pub fn paths_of(&self, ids: &[u64]) -> io::Result<HashMap<u64, Vec<String>>> {
        let mut wanted: Vec<(u64, u64)> = Vec::new();
        for &id in ids {
            let Some(p) = usize::try_from(id).ok().filter(|&p| p < self.points) else {
                continue;
            };
            let (start, end) = (self.word(self.starts, p), self.word(self.starts, p + 1));
            let (start, end) = (start as usize, (end as usize).min(self.n));
            for i in start..end.max(start) {
                let ord = self.word(self.ords, i) as u64;
                if (ord as usize) < self.n {
                    wanted.push((ord, id));
                }
            }
        }
        wanted.sort_unstable();
        wanted.dedup();
        let ords: Vec<u64> = wanted.iter().map(|&(o, _)| o).collect();
        let mut paths = Vec::with_capacity(ords.len());
        let found = contained(|| {
            self.paths.sorted_ords_to_term_cb(&ords, |b| {
                paths.push(String::from_utf8_lossy(b).into_owned())
            })
        })?;
        if !found || paths.len() != ords.len() {
            return Err(io::Error::other("members.bin lacks paths its points list"));
        }
        let mut out: HashMap<u64, Vec<String>> = HashMap::new();
        for ((_, id), path) in wanted.into_iter().zip(paths) {
            out.entry(id).or_default().push(path);
        }
        Ok(out)
    }
}

/// Run a lookup of the sstable, its asserts (on damaged bytes) made an error.
fn contained<T>(f: impl FnOnce() -> io::Result<T>) -> io::Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
        .map_err(|_| io::Error::other("members.bin is damaged"))?
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(members: &[(&str, u32)], points: u32) -> Members {
        let mut out = Vec::new();
        write(&mut out, members, points).unwrap();
        Members::from_bytes(OwnedBytes::new(out), points as usize).unwrap()
    }

    #[test]
    fn paths_resolve_both_ways() {
        // Many paths sharing prefixes, over several blocks; points shared by some files.
        let paths: Vec<String> = (0..5000)
            .map(|i| format!("region-{}/2024/{:02}/sales_{i:05}.csv", i % 7, i % 12))
            .collect();
        let mut sorted: Vec<&str> = paths.iter().map(String::as_str).collect();
        sorted.sort_unstable();
        let members: Vec<(&str, u32)> = sorted
            .iter()
            .enumerate()
            .map(|(i, p)| (*p, (i % 3000) as u32))
            .collect();
        let m = build(&members, 3001);
        assert_eq!(m.len(), 5000);
        for &(p, id) in members.iter().step_by(97) {
            assert_eq!(m.point_of(p).unwrap(), Some(u64::from(id)));
        }
        assert_eq!(m.point_of("region-9/none.csv").unwrap(), None);
        assert_eq!(m.point_of("").unwrap(), None);
        let found = m.paths_of(&[0, 1999, 2999, 3000, 7, 99_999]).unwrap();
        for id in [0u64, 1999, 2999, 7] {
            let mut want: Vec<&str> = members
                .iter()
                .filter(|&&(_, p)| u64::from(p) == id)
                .map(|&(path, _)| path)
                .collect();
            want.sort_unstable();
            assert_eq!(found[&id], want, "point {id}");
        }
        // Point 3000 has no file; 99,999 is past the last.
        assert!(!found.contains_key(&3000) && !found.contains_key(&99_999));
        assert_eq!(found.len(), 4);
    }

    #[test]
    fn the_streaming_writer_writes_the_same_file_spilled_or_not() {
        let paths: Vec<String> = (0..3000)
            .map(|i| format!("y{}/f_{i:05}.csv", i % 5))
            .collect();
        let mut sorted: Vec<&str> = paths.iter().map(String::as_str).collect();
        sorted.sort_unstable();
        // Points shared by many paths, some points with none (40 of them, 30 used).
        let members: Vec<(&str, u32)> = sorted
            .iter()
            .zip(0u32..)
            .map(|(p, i)| (*p, (i * 7919 + i / 100) % 30))
            .collect();
        let dir = tempfile::tempdir().unwrap();
        let paths_file = dir.path().join("paths");
        for run in [1, 7, 1000, 1 << 16] {
            for m in [&members[..], &[], &members[..1]] {
                let mut want = Vec::new();
                write(&mut want, m, 40).unwrap();
                let mut w = MembersWriter::create(&paths_file, run).unwrap();
                for &(p, id) in m {
                    w.push(p, id).unwrap();
                }
                let mut got = Vec::new();
                w.finish(&mut got, 40).unwrap();
                assert!(got == want, "{} members, runs of {run}", m.len());
                // The paths' file is gone, and the spilled runs were never named.
                assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
            }
        }
        let mut w = MembersWriter::create(&paths_file, 2).unwrap();
        w.push("b", 0).unwrap();
        assert!(w.push("a", 0).is_err() && w.push("b", 0).is_err());
        w.push("c", 1).unwrap();
        w.push("d", 0).unwrap();
        assert!(w.finish(Vec::new(), 1).is_err(), "point 1 is not below 1");
    }

    #[test]
    fn no_members_and_unsorted_input() {
        let m = build(&[], 0);
        assert!(m.is_empty());
        assert!(m.paths_of(&[0, 1]).unwrap().is_empty());
        assert_eq!(m.point_of("a").unwrap(), None);
        let mut out = Vec::new();
        assert!(write(&mut out, &[("b", 0), ("a", 0)], 1).is_err());
        assert!(write(&mut out, &[("a", 0), ("a", 0)], 1).is_err());
        assert!(write(&mut out, &[("a", 1)], 1).is_err());
    }

    #[test]
    fn damage_is_an_error_not_a_panic() {
        let members: Vec<(String, u32)> = (0..800).map(|i| (format!("d/{i:04}.csv"), i)).collect();
        let members: Vec<(&str, u32)> = members.iter().map(|(p, i)| (p.as_str(), *i)).collect();
        let mut good = Vec::new();
        write(&mut good, &members, 800).unwrap();
        assert!(Members::from_bytes(OwnedBytes::new(good.clone()), 799).is_err());
        assert!(
            Members::from_bytes(OwnedBytes::new(good[..good.len() - 1].to_vec()), 800).is_err()
        );
        assert!(Members::from_bytes(OwnedBytes::new(Vec::new()), 0).is_err());
        // Every byte of the paths and arrays flipped in turn (a sample of positions):
        // opening and lookups return, whatever they return.
        for at in (0..good.len() - FOOTER).step_by(13) {
            let mut bad = good.clone();
            bad[at] ^= 0x5A;
            if let Ok(m) = Members::from_bytes(OwnedBytes::new(bad), 800) {
                let _ = m.point_of("d/0400.csv");
                let _ = m.paths_of(&[0, 400, 799]);
            }
        }
    }
}
