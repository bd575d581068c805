//! Archives and compressed files: zip, tar (plain or inside gzip/zstd/bzip2/xz), and single
//! gzip, zstd, bzip2 and xz streams.
//!
//! A single stream is described as what it holds: its first [`STREAM_CAP`] bytes are
//! decompressed, detected and described like a file of their own, named without the
//! compression extension (`sales.csv.gz` → `sales.csv`). An archive lists its members
//! and describes its first few data members, each decompressed up to [`MEMBER_CAP`].
//! Every byte decompressed goes through a cap, never through a size the file declares, so
//! a zip bomb costs a few dozen MiB at most. Archives inside archives are opened
//! [`MAX_DEPTH`] levels deep; the depth travels as an argument of the private helpers
//! (never through global or thread-local state), so a file's description never depends on
//! what else the thread did.

mod tarball;
pub(crate) mod zipfile;

use super::model::{ArchiveSummary, Keep, Member};
use super::render::human_size;
use super::{
    analyzer_key, detect, AnalyzeError, Analyzer, Content, Description, Format, Opaque, Source,
};
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

/// Largest decompressed prefix of a single compressed stream that is described.
pub(crate) const STREAM_CAP: usize = 64 * 1024 * 1024;
/// Largest decompressed prefix of an archive member that is described.
pub(crate) const MEMBER_CAP: usize = 16 * 1024 * 1024;
/// Members listed per archive (all of them are counted).
pub(crate) const MAX_LISTED: usize = 1000;
/// Data members described per archive.
pub(crate) const DESCRIBED_MEMBERS: usize = 3;
/// Nesting levels opened: an archive, and an archive inside it.
pub(crate) const MAX_DEPTH: u32 = 2;
/// Memory the xz decoder may use (its dictionary); `xz -9` needs 64 MiB.
const XZ_MEM_LIMIT_KB: u32 = 256 * 1024;

/// Describes archives ([`Format::Archive`]) and compressed streams ([`Format::Compressed`]).
pub(crate) struct ArchiveAnalyzer;

impl Analyzer for ArchiveAnalyzer {
    fn name(&self) -> &'static str {
        "archive"
    }
    fn version(&self) -> u32 {
        2
    }
    fn analyze(&self, src: &Source, _format: Format) -> Result<Content, AnalyzeError> {
        analyze_at(src, 1).map(Content::Archive)
    }
}

/// Summarize the archive or stream `src`, found `depth` levels deep (1 = the file itself).
/// The content decides how it is read, whatever the detected format says.
fn analyze_at(src: &Source, depth: u32) -> Result<ArchiveSummary, AnalyzeError> {
    let head = src.head();
    if let Some(codec) = Codec::sniff(head) {
        return compressed(src, codec, depth);
    }
    if zipfile::looks_like_zip(head) {
        return zipfile::summarize(src, depth);
    }
    if tarball::looks_like_tar(head) {
        return tarball::summarize_plain(src, depth);
    }
    match infer::get(head) {
        // 7z, rar, cab, ar, ...: recognised, not read.
        Some(t) => Ok(ArchiveSummary {
            container: t.extension().to_string(),
            notes: vec![format!(
                "members not listed: {} archives are not read",
                t.extension()
            )],
            ..ArchiveSummary::default()
        }),
        None => Err(AnalyzeError::Malformed(
            "not a zip, tar or compressed stream".into(),
        )),
    }
}

/// Describe one member (or the content of a stream) found inside an archive that is
/// itself `depth` levels deep: archives in it are opened only while under [`MAX_DEPTH`].
/// `keep`: the first rows its tables keep (a preview of a compressed stream keeps more).
pub(crate) fn describe_member(name: &str, bytes: Vec<u8>, depth: u32, keep: Keep) -> Description {
    let src = Source::from_bytes(name, bytes).with_keep(keep);
    let format = detect(src.path(), src.head(), src.size());
    if !matches!(format, Format::Archive | Format::Compressed) {
        return super::describe_as(&src, format);
    }
    let mut d = Description {
        format,
        size: src.size(),
        analyzer: analyzer_key(&ArchiveAnalyzer),
        content: Content::Opaque(Opaque {
            detected: format.human().to_string(),
            mime: None,
        }),
        time_coverage: None,
        notes: Vec::new(),
        error: None,
        rules: Default::default(),
    };
    if depth >= MAX_DEPTH {
        d.notes.push(format!(
            "not opened: archives are opened {MAX_DEPTH} levels deep"
        ));
        return d;
    }
    match analyze_at(&src, depth + 1) {
        Ok(s) => d.content = Content::Archive(s),
        Err(e) => {
            d.content = Content::Opaque(Opaque {
                detected: format!("{} (could not be analyzed)", format.human()),
                mime: None,
            });
            d.error = Some(e.to_string());
        }
    }
    d
}

/// Whether an archive member is worth describing: no directory, hidden file or macOS
/// resource fork.
pub(crate) fn is_data_path(path: &str) -> bool {
    !path.ends_with('/')
        && path
            .split(['/', '\\'])
            .all(|c| !c.starts_with('.') && c != "__MACOSX")
}

/// Append what `r` yields to `buf` until `buf` holds `cap` bytes or the stream ends. On
/// error, what was read before stays in `buf`. Grows `buf` by doubling up to `cap` only,
/// so a capped read never reserves more than the cap.
pub(crate) fn fill(r: &mut dyn Read, buf: &mut Vec<u8>, cap: usize) -> io::Result<()> {
    let mut chunk = [0u8; 64 * 1024];
    while buf.len() < cap {
        let want = chunk.len().min(cap - buf.len());
        let n = match r.read(&mut chunk[..want]) {
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.len() + n > buf.capacity() {
            let target = (buf.capacity() * 2).clamp(buf.len() + n, cap);
            buf.reserve_exact(target - buf.len());
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    Ok(())
}

/// Whether `r` has at least one more byte.
pub(crate) fn has_more(r: &mut dyn Read) -> io::Result<bool> {
    let mut one = [0u8; 1];
    loop {
        match r.read(&mut one) {
            Ok(n) => return Ok(n > 0),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
}

/// A single-stream compression format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Codec {
    /// gzip (RFC 1952), including concatenated members.
    Gzip,
    /// Zstandard frames.
    Zstd,
    /// bzip2 streams.
    Bzip2,
    /// xz containers (LZMA2).
    Xz,
}

impl Codec {
    /// The codec whose magic bytes start `head`.
    pub(crate) fn sniff(head: &[u8]) -> Option<Codec> {
        if head.starts_with(b"\x1f\x8b") {
            Some(Codec::Gzip)
        } else if head.starts_with(b"\x28\xb5\x2f\xfd") {
            Some(Codec::Zstd)
        } else if head.starts_with(b"BZh") && matches!(head.get(3), Some(b'1'..=b'9')) {
            Some(Codec::Bzip2)
        } else if head.starts_with(b"\xfd7zXZ\x00") {
            Some(Codec::Xz)
        } else {
            None
        }
    }

    fn name(self) -> &'static str {
        match self {
            Codec::Gzip => "gzip",
            Codec::Zstd => "zstd",
            Codec::Bzip2 => "bzip2",
            Codec::Xz => "xz",
        }
    }

    /// Container name of a tar compressed with this codec.
    fn tar_name(self) -> &'static str {
        match self {
            Codec::Gzip => "tar.gz",
            Codec::Zstd => "tar.zst",
            Codec::Bzip2 => "tar.bz2",
            Codec::Xz => "tar.xz",
        }
    }

    /// File suffixes of this codec (lowercase), and what each one stands for once removed.
    fn suffixes(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Codec::Gzip => &[(".tgz", ".tar"), (".gz", ""), (".gzip", "")],
            Codec::Zstd => &[(".tzst", ".tar"), (".zst", ""), (".zstd", "")],
            Codec::Bzip2 => &[
                (".tbz2", ".tar"),
                (".tbz", ".tar"),
                (".bz2", ""),
                (".bz", ""),
            ],
            Codec::Xz => &[(".txz", ".tar"), (".xz", "")],
        }
    }

    /// A decompressing reader over `r`. Concatenated streams (bgzip, pbzip2, `cat a.gz
    /// b.gz`) are read through as one, as the command-line tools do.
    fn decoder<'a>(self, r: Box<dyn Read + Send + 'a>) -> io::Result<Box<dyn Read + 'a>> {
        Ok(match self {
            Codec::Gzip => Box::new(flate2::read::MultiGzDecoder::new(r)),
            // The default window limit (128 MiB) bounds the decoder's memory.
            Codec::Zstd => Box::new(zstd::stream::read::Decoder::new(r)?),
            Codec::Bzip2 => Box::new(bzip2::read::MultiBzDecoder::new(r)),
            Codec::Xz => Box::new(lzma_rust2::XzReader::new_mem_limit(
                r,
                true,
                XZ_MEM_LIMIT_KB,
            )),
        })
    }

    /// The uncompressed size the stream states about itself, when it does so cheaply:
    /// zstd's frame header, xz's index, gzip's trailer (modulo 4 GiB, last member only).
    fn declared_size(self, src: &Source) -> Option<String> {
        match self {
            Codec::Zstd => zstd::zstd_safe::get_frame_content_size(src.head())
                .ok()
                .flatten()
                .map(human_size),
            Codec::Xz => match src.bytes() {
                Some(b) => lzma_rust2::xz_uncompressed_size(io::Cursor::new(b)).ok(),
                None => src
                    .seekable()
                    .and_then(|f| lzma_rust2::xz_uncompressed_size(io::BufReader::new(f)))
                    .ok(),
            }
            .map(human_size),
            Codec::Gzip => {
                let tail = match src.bytes() {
                    Some(b) => b.get(b.len().checked_sub(4)?..)?.try_into().ok()?,
                    None => {
                        let mut f = src.seekable().ok()?;
                        f.seek(SeekFrom::End(-4)).ok()?;
                        let mut t = [0u8; 4];
                        f.read_exact(&mut t).ok()?;
                        t
                    }
                };
                let n = u64::from(u32::from_le_bytes(tail));
                // A smaller figure contradicts the cap being hit: several members, or
                // wrapped past 4 GiB. Say nothing rather than something wrong.
                (n > STREAM_CAP as u64).then(|| format!("{} (modulo 4 GiB)", human_size(n)))
            }
            Codec::Bzip2 => None,
        }
    }
}

/// The name of what `path` holds once decompressed: `sales.csv.gz` → `sales.csv`,
/// `logs.tgz` → `logs.tar`; unchanged without a known suffix.
fn inner_name(path: &Path, codec: Codec) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let lower = name.to_ascii_lowercase();
    for (suffix, replacement) in codec.suffixes() {
        if lower.len() > suffix.len() && lower.ends_with(suffix) {
            // The suffix is ASCII, so this cut is on a char boundary.
            return format!("{}{replacement}", &name[..name.len() - suffix.len()]);
        }
    }
    if name.is_empty() {
        "content".to_string()
    } else {
        name
    }
}

/// A compressed stream: a tar inside it is listed as an archive, anything else is
/// decompressed up to [`STREAM_CAP`] and described.
fn compressed(src: &Source, codec: Codec, depth: u32) -> Result<ArchiveSummary, AnalyzeError> {
    let mut dec = codec.decoder(src.reader()?)?;
    let mut buf = Vec::new();
    let first = fill(&mut dec, &mut buf, tarball::BLOCK);
    if first.is_ok() && tarball::looks_like_tar(&buf) {
        drop(dec);
        // Start over: the tar reader wants the stream from its first byte.
        let dec = codec.decoder(src.reader()?)?;
        return tarball::summarize_stream(dec, codec.tar_name(), depth);
    }
    let result = first.and_then(|()| fill(&mut dec, &mut buf, STREAM_CAP));
    let (cut, error) = match result {
        Ok(()) if buf.len() == STREAM_CAP => match has_more(&mut dec) {
            Ok(more) => (more, None),
            Err(e) => (false, Some(e)),
        },
        Ok(()) => (false, None),
        Err(e) => (false, Some(e)),
    };
    drop(dec);
    if let (Some(e), true) = (&error, buf.is_empty()) {
        return Err(AnalyzeError::Malformed(format!(
            "the {} stream could not be decompressed: {e}",
            codec.name()
        )));
    }
    let mut summary = ArchiveSummary {
        container: codec.name().to_string(),
        uncompressed_bytes: buf.len() as u64,
        ..ArchiveSummary::default()
    };
    if cut {
        let stated = codec
            .declared_size(src)
            .map(|s| format!("; the stream states {s} uncompressed"))
            .unwrap_or_default();
        summary.notes.push(format!(
            "decompressed the first {} of a {} compressed stream{stated}",
            human_size(STREAM_CAP as u64),
            human_size(src.size())
        ));
    }
    if let Some(e) = error {
        summary.notes.push(format!(
            "the {} stream is truncated or corrupt after {} decompressed ({e}); \
             what was decompressed is described",
            codec.name(),
            human_size(buf.len() as u64)
        ));
    }
    let name = inner_name(src.path(), codec);
    let described = describe_member(&name, buf, depth, src.keep());
    summary.described.push((name, described));
    Ok(summary)
}

/// Record one member in `s`: counted always, listed up to [`MAX_LISTED`].
pub(crate) fn add_member(s: &mut ArchiveSummary, path: &str, size: u64) {
    s.members_total += 1;
    s.uncompressed_bytes = s.uncompressed_bytes.saturating_add(size);
    if s.members.len() < MAX_LISTED {
        s.members.push(Member {
            path: path.to_string(),
            size,
        });
    }
}

/// Describe a member whose first bytes were read into `bytes`: `cut` when it goes on past
/// [`MEMBER_CAP`], `error` when reading it failed part way.
pub(crate) fn add_described(
    s: &mut ArchiveSummary,
    path: &str,
    stated_size: u64,
    bytes: Vec<u8>,
    outcome: io::Result<bool>,
    depth: u32,
) {
    match outcome {
        Ok(true) => s.notes.push(format!(
            "{path}: described from its first {} (the archive states {})",
            human_size(bytes.len() as u64),
            human_size(stated_size)
        )),
        Ok(false) if (bytes.len() as u64) < stated_size.min(MEMBER_CAP as u64) => {
            s.notes.push(format!(
                "{path}: ends after {} of the {} stated; that part is described",
                human_size(bytes.len() as u64),
                human_size(stated_size)
            ))
        }
        Ok(false) => {}
        Err(e) if bytes.is_empty() => {
            s.notes.push(format!("{path}: not described ({e})"));
            return;
        }
        Err(e) => s.notes.push(format!(
            "{path}: truncated or corrupt after {} ({e}); that part is described",
            human_size(bytes.len() as u64)
        )),
    }
    s.described.push((
        path.to_string(),
        describe_member(path, bytes, depth, Keep::default()),
    ));
}

/// Read the first [`MEMBER_CAP`] bytes of a member: the bytes, and whether it goes on.
pub(crate) fn read_member(r: &mut dyn Read) -> (Vec<u8>, io::Result<bool>) {
    let mut buf = Vec::new();
    let outcome = fill(r, &mut buf, MEMBER_CAP).and_then(|()| {
        if buf.len() == MEMBER_CAP {
            has_more(r)
        } else {
            Ok(false)
        }
    });
    (buf, outcome)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::describe;
    use std::io::Write;

    const CSV: &str = "id,name,price\n1,apple,0.5\n2,pear,0.75\n3,plum,1.25\n4,fig,2\n";

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    fn compress(codec: Codec, data: &[u8]) -> Vec<u8> {
        match codec {
            Codec::Gzip => gzip(data),
            Codec::Zstd => zstd::encode_all(data, 3).unwrap(),
            Codec::Bzip2 => {
                let mut e = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::fast());
                e.write_all(data).unwrap();
                e.finish().unwrap()
            }
            Codec::Xz => {
                let mut w = lzma_rust2::XzWriter::new(Vec::new(), lzma_rust2::XzOptions::default())
                    .unwrap();
                w.write_all(data).unwrap();
                w.finish().unwrap()
            }
        }
    }

    fn summary(d: &Description) -> &ArchiveSummary {
        match &d.content {
            Content::Archive(a) => a,
            c => panic!("not an archive: {c:?} ({:?})", d.error),
        }
    }

    #[test]
    fn streams_are_described_as_their_content() {
        for (codec, file, container) in [
            (Codec::Gzip, "fruit.csv.gz", "gzip"),
            (Codec::Zstd, "fruit.csv.zst", "zstd"),
            (Codec::Bzip2, "fruit.csv.bz2", "bzip2"),
            (Codec::Xz, "fruit.csv.xz", "xz"),
        ] {
            let bytes = compress(codec, CSV.as_bytes());
            let d = describe(&Source::from_bytes(file, bytes));
            assert_eq!(d.format, Format::Compressed, "{file}");
            assert_eq!(d.analyzer, "archive@2");
            let a = summary(&d);
            assert_eq!(a.container, container);
            assert_eq!(a.uncompressed_bytes, CSV.len() as u64);
            assert!(a.notes.is_empty(), "{file}: {:?}", a.notes);
            let (name, inner) = &a.described[0];
            assert_eq!(name, "fruit.csv");
            assert_eq!(inner.format, Format::Csv);
            assert_eq!(inner.size, CSV.len() as u64);
            match &inner.content {
                Content::Table(t) => {
                    assert_eq!(t.rows, 4, "{file}");
                    let cols: Vec<&str> = t.columns.iter().map(|c| c.name.as_str()).collect();
                    assert_eq!(cols, ["id", "name", "price"]);
                }
                c => panic!("{file}: not a table: {c:?}"),
            }
        }
    }

    #[test]
    fn concatenated_gzip_members_are_read_through() {
        let (a, b) = CSV.split_at(CSV.find("3,").unwrap());
        let mut bytes = gzip(a.as_bytes());
        bytes.extend(gzip(b.as_bytes()));
        let d = describe(&Source::from_bytes("fruit.csv.gz", bytes));
        assert_eq!(summary(&d).uncompressed_bytes, CSV.len() as u64);
    }

    #[test]
    fn truncated_gzip_describes_what_was_decompressed() {
        let rows: String = (0..20_000)
            .map(|i| format!("{i},item{i},{}.5\n", i % 97))
            .collect();
        let text = format!("id,name,price\n{rows}");
        let bytes = gzip(text.as_bytes());
        let cut = bytes[..bytes.len() / 2].to_vec();
        let d = describe(&Source::from_bytes("items.csv.gz", cut));
        assert!(d.error.is_none(), "{:?}", d.error);
        let a = summary(&d);
        assert_eq!(a.notes.len(), 1);
        assert!(
            a.notes[0].starts_with("the gzip stream is truncated or corrupt after"),
            "{:?}",
            a.notes
        );
        let (_, inner) = &a.described[0];
        assert!(inner.size > 0 && inner.size < text.len() as u64);
        match &inner.content {
            Content::Table(t) => {
                assert!(t.rows > 1000 && t.rows < 20_000, "{} rows", t.rows);
                assert_eq!(t.columns[1].name, "name");
            }
            c => panic!("not a table: {c:?}"),
        }
        // Only a header, nothing decompressed: an error, not a panic.
        let d = describe(&Source::from_bytes("items.csv.gz", bytes[..12].to_vec()));
        assert_eq!(d.format, Format::Compressed);
        let e = d.error.expect("an error");
        assert!(e.contains("could not be decompressed"), "{e}");
    }

    #[test]
    fn stream_cap_bounds_decompression() {
        // 80 MiB of zeros as a few KiB of zstd, in one frame that states its size.
        let big = vec![0u8; 80 << 20];
        let bytes = zstd::bulk::compress(&big, 1).unwrap();
        drop(big);
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("zeros.bin.zst");
        std::fs::write(&path, &bytes).unwrap();
        let d = describe(&Source::open(&path, 0).unwrap());
        let a = summary(&d);
        assert_eq!(a.uncompressed_bytes, STREAM_CAP as u64);
        assert_eq!(a.described[0].0, "zeros.bin");
        assert_eq!(a.described[0].1.size, STREAM_CAP as u64);
        assert_eq!(a.notes.len(), 1);
        assert!(
            a.notes[0].starts_with("decompressed the first 67.1 MB of a")
                && a.notes[0].ends_with("the stream states 83.9 MB uncompressed"),
            "{:?}",
            a.notes
        );
    }

    #[test]
    fn inner_names_drop_the_compression_suffix() {
        let n = |p: &str, c| inner_name(Path::new(p), c);
        assert_eq!(n("dir/sales.csv.gz", Codec::Gzip), "sales.csv");
        assert_eq!(n("logs.TGZ", Codec::Gzip), "logs.tar");
        assert_eq!(n("a.json.zst", Codec::Zstd), "a.json");
        assert_eq!(n("a.tbz2", Codec::Bzip2), "a.tar");
        assert_eq!(n("a.txt.xz", Codec::Xz), "a.txt");
        assert_eq!(n("blob", Codec::Xz), "blob");
        assert_eq!(n(".gz", Codec::Gzip), ".gz");
    }

    #[test]
    fn data_paths_skip_directories_and_hidden_files() {
        assert!(is_data_path("a/b.csv"));
        assert!(!is_data_path("a/"));
        assert!(!is_data_path("a/.b.csv"));
        assert!(!is_data_path("__MACOSX/a/._b.csv"));
        assert!(!is_data_path(".git/config"));
    }

    #[test]
    fn fill_stops_at_the_cap_and_keeps_data_on_error() {
        let mut buf = Vec::new();
        fill(&mut &[7u8; 1000][..], &mut buf, 300).unwrap();
        assert_eq!((buf.len(), buf.capacity()), (300, 300));
        struct Failing(usize);
        impl Read for Failing {
            fn read(&mut self, b: &mut [u8]) -> io::Result<usize> {
                if self.0 == 0 {
                    return Err(io::Error::other("boom"));
                }
                let n = self.0.min(b.len()).min(10);
                self.0 -= n;
                Ok(n)
            }
        }
        let mut buf = Vec::new();
        assert!(fill(&mut Failing(25), &mut buf, 100).is_err());
        assert_eq!(buf.len(), 25);
    }
}
