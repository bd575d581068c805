//! Tar archives, plain or inside a compressed stream. A tar has no directory: listing it
//! walks every header. A plain tar seeks over the members' data; a compressed one has to
//! decompress it, up to [`SCAN_CAP`].

use super::{add_described, add_member, is_data_path, read_member, DESCRIBED_MEMBERS};
use crate::analyze::model::ArchiveSummary;
use crate::analyze::render::human_size;
use crate::analyze::{AnalyzeError, Source};
use std::cell::Cell;
use std::io::{self, BufReader, Cursor, Read, Seek, SeekFrom};
use std::rc::Rc;

/// Size of a tar header block.
pub(crate) const BLOCK: usize = 512;
/// Decompressed bytes a compressed tar is walked through before the listing stops.
const SCAN_CAP: u64 = 2 * 1024 * 1024 * 1024;
/// Bytes the tar reader may read for one member's headers: GNU long names and pax
/// records are read whole into memory, so their size must not come from the file.
const HEADER_BUDGET: u64 = 1024 * 1024;

/// Whether `head` starts with a tar header: the POSIX/GNU magic, or an old (v7) header
/// whose checksum holds.
pub(crate) fn looks_like_tar(head: &[u8]) -> bool {
    let Some(block) = head.get(..BLOCK) else {
        return false;
    };
    if &block[257..262] == b"ustar" {
        return true;
    }
    if block[0] == 0 {
        return false;
    }
    let field = String::from_utf8_lossy(&block[148..156]);
    let Ok(stated) = u32::from_str_radix(field.trim_matches(|c: char| c == ' ' || c == '\0'), 8)
    else {
        return false;
    };
    // The checksum counts its own field as eight spaces.
    let sum: u32 = block
        .iter()
        .enumerate()
        .map(|(i, &b)| {
            if (148..156).contains(&i) {
                32
            } else {
                u32::from(b)
            }
        })
        .sum();
    sum == stated
}

/// List and describe the plain tar `src`, found `depth` levels deep.
pub(crate) fn summarize_plain(src: &Source, depth: u32) -> Result<ArchiveSummary, AnalyzeError> {
    match src.bytes() {
        Some(b) => walk_seekable(Cursor::new(b), depth),
        None => walk_seekable(BufReader::new(src.seekable()?), depth),
    }
}

/// List and describe the tar that the decompressing reader `r` yields.
pub(crate) fn summarize_stream(
    r: Box<dyn Read + '_>,
    container: &str,
    depth: u32,
) -> Result<ArchiveSummary, AnalyzeError> {
    let meter = Rc::new(Meter::new(SCAN_CAP));
    let mut archive = tar::Archive::new(Metered {
        inner: r,
        meter: Rc::clone(&meter),
    });
    let entries = archive.entries()?;
    walk(entries, &meter, true, container, depth)
}

fn walk_seekable<R: Read + Seek>(r: R, depth: u32) -> Result<ArchiveSummary, AnalyzeError> {
    // Seeking skips the data: no cap needed on what is read.
    let meter = Rc::new(Meter::new(u64::MAX));
    let mut archive = tar::Archive::new(Metered {
        inner: r,
        meter: Rc::clone(&meter),
    });
    let entries = archive.entries_with_seek()?;
    walk(entries, &meter, false, "tar", depth)
}

/// Which read limit stopped the walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Limit {
    Scan,
    Header,
}

/// Counts what the tar reader reads, and refuses reads past the scan cap, or past the
/// header budget while the reader is between members (armed).
struct Meter {
    cap: u64,
    total: Cell<u64>,
    since_armed: Cell<u64>,
    armed: Cell<bool>,
    hit: Cell<Option<Limit>>,
}

impl Meter {
    fn new(cap: u64) -> Self {
        Meter {
            cap,
            total: Cell::new(0),
            since_armed: Cell::new(0),
            armed: Cell::new(false),
            hit: Cell::new(None),
        }
    }

    fn arm(&self, on: bool) {
        self.armed.set(on);
        self.since_armed.set(0);
    }
}

/// A reader that reports to a [`Meter`]. Shared through `Rc` because the tar reader owns
/// it while the walk needs to arm it between members.
struct Metered<R> {
    inner: R,
    meter: Rc<Meter>,
}

impl<R: Read> Read for Metered<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let m = &self.meter;
        let scan_room = m.cap.saturating_sub(m.total.get());
        let header_room = if m.armed.get() {
            HEADER_BUDGET.saturating_sub(m.since_armed.get())
        } else {
            u64::MAX
        };
        if buf.is_empty() {
            return Ok(0);
        }
        if scan_room == 0 || header_room == 0 {
            m.hit.set(Some(if scan_room == 0 {
                Limit::Scan
            } else {
                Limit::Header
            }));
            return Err(io::Error::other("read limit reached"));
        }
        let room = scan_room.min(header_room);
        let want = buf.len().min(usize::try_from(room).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..want])?;
        m.total.set(m.total.get() + n as u64);
        m.since_armed.set(m.since_armed.get() + n as u64);
        Ok(n)
    }
}

impl<R: Seek> Seek for Metered<R> {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        self.inner.seek(pos)
    }
}

/// Walk the entries: count and list each, describe the first data members, and stop with
/// a note on the first error. `drain` reads each member's rest before the next header
/// (streams), so that the header budget covers headers only.
fn walk<R: Read>(
    mut entries: tar::Entries<'_, R>,
    meter: &Meter,
    drain: bool,
    container: &str,
    depth: u32,
) -> Result<ArchiveSummary, AnalyzeError> {
    let mut s = ArchiveSummary {
        container: container.to_string(),
        ..ArchiveSummary::default()
    };
    let mut described = 0;
    let mut stop = None;
    loop {
        meter.arm(true);
        let next = entries.next();
        meter.arm(false);
        let mut entry = match next {
            None => break,
            Some(Ok(e)) => e,
            Some(Err(e)) => {
                stop = Some(e);
                break;
            }
        };
        let kind = entry.header().entry_type();
        let skip = kind.is_pax_global_extensions()
            || kind.is_pax_local_extensions()
            || kind.is_gnu_longname()
            || kind.is_gnu_longlink();
        if !skip {
            let mut path = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
            if kind.is_dir() && !path.ends_with('/') {
                path.push('/');
            }
            let size = entry.size();
            add_member(&mut s, &path, size);
            let regular = kind.is_file() || kind.is_contiguous() || kind.is_gnu_sparse();
            if described < DESCRIBED_MEMBERS && regular && size > 0 && is_data_path(&path) {
                described += 1;
                let (bytes, outcome) = read_member(&mut entry);
                add_described(&mut s, &path, size, bytes, outcome, depth);
            }
        }
        if drain {
            if let Err(e) = io::copy(&mut entry, &mut io::sink()) {
                stop = Some(e);
                break;
            }
        }
    }
    if let Some(e) = stop {
        let note = match meter.hit.get() {
            Some(Limit::Scan) => format!(
                "listing stopped after decompressing {}: the archive has at least {} members",
                human_size(meter.cap),
                s.members_total
            ),
            Some(Limit::Header) => format!(
                "listing stopped after {} members at an extended header over {}",
                s.members_total,
                human_size(HEADER_BUDGET)
            ),
            None if s.members_total == 0 => {
                return Err(AnalyzeError::Malformed(format!("unreadable tar: {e}")))
            }
            None => format!(
                "the archive is truncated or corrupt after {} members ({e})",
                s.members_total
            ),
        };
        s.notes.push(note);
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::fixtures::tar_of;
    use crate::analyze::{describe, Content, Description, Format};
    use std::io::Write;

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    fn archive_of(d: &Description) -> &ArchiveSummary {
        match &d.content {
            Content::Archive(a) => a,
            c => panic!("not an archive: {c:?} ({:?})", d.error),
        }
    }

    const CSV: &[u8] = b"day,visits\n2024-01-01,10\n2024-01-02,12\n";
    const TSV: &[u8] = b"k\tv\na\t1\nb\t2\nc\t3\n";

    #[test]
    fn tar_gz_lists_members_and_describes_them() {
        let tgz = gzip(&tar_of(&[("logs/visits.csv", CSV), ("logs/kv.tsv", TSV)]));
        for name in ["logs.tar.gz", "logs.tgz", "logs.gz"] {
            let d = describe(&Source::from_bytes(name, tgz.clone()));
            let a = archive_of(&d);
            assert_eq!(a.container, "tar.gz", "{name}");
            assert_eq!(a.members_total, 2);
            assert_eq!(a.members[0].path, "logs/visits.csv");
            assert_eq!(a.members[1].size, TSV.len() as u64);
            assert_eq!(a.uncompressed_bytes, (CSV.len() + TSV.len()) as u64);
            let formats: Vec<Format> = a.described.iter().map(|(_, d)| d.format).collect();
            assert_eq!(formats, [Format::Csv, Format::Tsv]);
            match &a.described[1].1.content {
                Content::Table(t) => assert_eq!(t.rows, 3),
                c => panic!("not a table: {c:?}"),
            }
            assert!(a.notes.is_empty(), "{:?}", a.notes);
        }
        // The name says tar: detected as an archive; a bare .gz stays a compressed file.
        assert_eq!(
            describe(&Source::from_bytes("logs.tgz", tgz.clone())).format,
            Format::Archive
        );
        assert_eq!(
            describe(&Source::from_bytes("logs.tar.gz", tgz.clone())).format,
            Format::Archive
        );
        assert_eq!(
            describe(&Source::from_bytes("logs.gz", tgz)).format,
            Format::Compressed
        );
    }

    #[test]
    fn plain_tar_from_disk_seeks_over_data() {
        let mut files: Vec<(String, Vec<u8>)> = vec![("a/".into(), Vec::new())];
        for i in 0..1005 {
            files.push((format!("a/f{i}.txt"), format!("line {i}\n").into_bytes()));
        }
        let mut b = tar::Builder::new(Vec::new());
        let mut dir = tar::Header::new_ustar();
        dir.set_entry_type(tar::EntryType::Directory);
        dir.set_size(0);
        dir.set_mode(0o755);
        dir.set_cksum();
        b.append_data(&mut dir, "a", io::empty()).unwrap();
        for (name, data) in &files[1..] {
            let mut h = tar::Header::new_ustar();
            h.set_size(data.len() as u64);
            h.set_mode(0o644);
            h.set_cksum();
            b.append_data(&mut h, name, &data[..]).unwrap();
        }
        let bytes = b.into_inner().unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("many.tar");
        std::fs::write(&path, &bytes).unwrap();
        // Not in memory: read from disk.
        let src = Source::open(&path, 0).unwrap();
        assert!(src.bytes().is_none());
        let d = describe(&src);
        assert_eq!(d.format, Format::Archive);
        let a = archive_of(&d);
        assert_eq!(a.container, "tar");
        assert_eq!(a.members_total, 1006);
        assert_eq!(a.members.len(), super::super::MAX_LISTED);
        assert_eq!(a.members[0].path, "a/");
        assert_eq!(a.members[1].path, "a/f0.txt");
        assert_eq!(a.described.len(), 3);
        assert_eq!(a.described[2].0, "a/f2.txt");
        assert_eq!(a.described[2].1.size, 7);
    }

    #[test]
    fn truncated_tar_gz_keeps_what_was_listed() {
        let big: Vec<u8> = (0..200_000u32)
            .flat_map(|i| format!("{i},{}\n", i * 7).into_bytes())
            .collect();
        let tar = tar_of(&[("small.csv", CSV), ("big.csv", &big), ("last.csv", CSV)]);
        let tgz = gzip(&tar);
        let cut = tgz[..tgz.len() / 2].to_vec();
        let d = describe(&Source::from_bytes("cut.tar.gz", cut));
        let a = archive_of(&d);
        assert_eq!(a.members_total, 2);
        assert_eq!(a.notes.len(), 2, "{:?}", a.notes);
        assert!(
            a.notes[0].starts_with("big.csv: truncated or corrupt"),
            "{:?}",
            a.notes
        );
        assert!(a.notes[1].starts_with("the archive is truncated or corrupt after 2 members"));
        // Garbage that starts like gzip but holds nothing is an error.
        let d = describe(&Source::from_bytes(
            "x.tar.gz",
            b"\x1f\x8b\x08\0\0\0\0\0\0\x03\x07junk".to_vec(),
        ));
        assert!(d.error.is_some());
    }

    #[test]
    fn oversized_long_name_stops_the_listing() {
        // A GNU long-name entry stating a 3 MiB name: the tar reader would read it whole.
        let mut tar = tar_of(&[("ok.csv", CSV)]);
        tar.truncate(tar.len() - 2 * BLOCK); // drop the end-of-archive blocks
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(tar::EntryType::GNULongName);
        h.as_gnu_mut().unwrap().name[..13].copy_from_slice(b"././@LongLink");
        h.set_size(3 << 20);
        h.set_cksum();
        tar.extend_from_slice(h.as_bytes());
        tar.extend(std::iter::repeat_n(b'n', 3 << 20));
        let d = describe(&Source::from_bytes("long.tar.gz", gzip(&tar)));
        let a = archive_of(&d);
        assert_eq!(a.members_total, 1);
        assert!(
            a.notes[0].starts_with("listing stopped after 1 members at an extended header"),
            "{:?}",
            a.notes
        );
    }

    #[test]
    fn v7_headers_are_recognised_by_checksum() {
        let mut h = tar::Header::new_old();
        h.set_path("old.txt").unwrap();
        h.set_size(0);
        h.set_cksum();
        assert!(looks_like_tar(h.as_bytes()));
        let mut bad = *h.as_bytes();
        bad[0] ^= 1;
        assert!(!looks_like_tar(&bad));
        assert!(!looks_like_tar(&[0u8; 100]));
    }
}
