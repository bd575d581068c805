//! Zip archives: the central directory lists every member with its stated size; the first
//! data members are decompressed up to the member cap and described.

use super::{add_described, add_member, is_data_path, read_member, DESCRIBED_MEMBERS};
use crate::analyze::model::ArchiveSummary;
use crate::analyze::{AnalyzeError, Source};
use std::io::{BufReader, Cursor, Read, Seek};

/// Whether `head` starts like a zip: a local file header, an empty archive's end record,
/// or a spanned archive's marker.
pub(crate) fn looks_like_zip(head: &[u8]) -> bool {
    head.starts_with(b"PK\x03\x04")
        || head.starts_with(b"PK\x05\x06")
        || head.starts_with(b"PK\x07\x08")
}

/// List and describe the zip `src`, found `depth` levels deep.
pub(crate) fn summarize(src: &Source, depth: u32) -> Result<ArchiveSummary, AnalyzeError> {
    match src.bytes() {
        Some(b) => summarize_reader(Cursor::new(b), depth),
        // Opened read-only and never locked; the zip reader seeks to the central directory.
        None => summarize_reader(BufReader::new(src.seekable()?), depth),
    }
}

/// The open zip's members, for readers that hold zips (npz) as well as for [`summarize`].
pub(crate) fn open<R: Read + Seek>(r: R) -> Result<zip::ZipArchive<R>, AnalyzeError> {
    zip::ZipArchive::new(r).map_err(|e| AnalyzeError::Malformed(format!("unreadable zip: {e}")))
}

/// A member's path as the archive spells it, decoded leniently.
pub(crate) fn member_name(entry: &zip::read::ZipFileEntry<'_>) -> String {
    match entry.name() {
        Ok(n) => n.into_owned(),
        Err(_) => String::from_utf8_lossy(entry.name_raw()).into_owned(),
    }
}

fn summarize_reader<R: Read + Seek>(r: R, depth: u32) -> Result<ArchiveSummary, AnalyzeError> {
    let mut zip = open(r)?;
    let mut s = ArchiveSummary {
        container: "zip".to_string(),
        ..ArchiveSummary::default()
    };
    let mut chosen = Vec::new();
    for i in 0..zip.len() {
        let Ok(entry) = zip.by_index_data(i) else {
            continue;
        };
        let path = member_name(&entry);
        let size = entry.size();
        add_member(&mut s, &path, size);
        if chosen.len() < DESCRIBED_MEMBERS && entry.is_file() && size > 0 && is_data_path(&path) {
            chosen.push((i, path, size));
        }
    }
    if zip.has_duplicate_names() {
        s.notes
            .push("some member names occur more than once; the last one is listed".into());
    }
    for (i, path, size) in chosen {
        match zip.by_index(i) {
            Ok(mut member) => {
                let (bytes, outcome) = read_member(&mut member);
                add_described(&mut s, &path, size, bytes, outcome, depth);
            }
            // Encrypted, or compressed with a method not built in.
            Err(e) => s.notes.push(format!("{path}: not described ({e})")),
        }
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::super::{MAX_DEPTH, MEMBER_CAP};
    use crate::analyze::{describe, Content, Description, Format, Source};
    use std::io::{Cursor, Write};
    use zip::write::SimpleFileOptions;
    use zip::{CompressionMethod, ZipWriter};

    fn archive_of(d: &Description) -> &crate::analyze::ArchiveSummary {
        match &d.content {
            Content::Archive(a) => a,
            c => panic!("not an archive: {c:?} ({:?})", d.error),
        }
    }

    fn zip_bytes(files: &[(&str, &[u8])], dirs: &[&str]) -> Vec<u8> {
        let mut w = ZipWriter::new(Cursor::new(Vec::new()));
        let opts = SimpleFileOptions::default().compression_method(CompressionMethod::Deflated);
        for d in dirs {
            w.add_directory(*d, opts).unwrap();
        }
        for (name, data) in files {
            w.start_file(*name, opts).unwrap();
            w.write_all(data).unwrap();
        }
        w.finish().unwrap().into_inner()
    }

    #[test]
    fn zip_lists_members_and_describes_data_files() {
        let csv = b"id,city,amount\n1,Paris,3.5\n2,Lyon,4.25\n3,Nice,1\n";
        let json = br#"[{"id": 1, "tag": "a"}, {"id": 2, "tag": "b"}]"#;
        let bytes = zip_bytes(
            &[
                ("data/sales.csv", csv),
                ("__MACOSX/data/._sales.csv", b"\0\x05\x16\x07junk"),
                ("data/.hidden.csv", b"a,b\n1,2\n"),
                ("data/meta.json", json),
            ],
            &["data/"],
        );
        let d = describe(&Source::from_bytes("bundle.zip", bytes));
        assert_eq!(d.format, Format::Archive);
        assert_eq!(d.analyzer, "archive@2");
        let a = archive_of(&d);
        assert_eq!(a.container, "zip");
        assert_eq!(a.members_total, 5);
        let paths: Vec<&str> = a.members.iter().map(|m| m.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "data/",
                "data/sales.csv",
                "__MACOSX/data/._sales.csv",
                "data/.hidden.csv",
                "data/meta.json"
            ]
        );
        let total = (csv.len() + 8 + 8 + json.len()) as u64;
        assert_eq!(a.uncompressed_bytes, total);
        assert_eq!(a.members[1].size, csv.len() as u64);
        // Directory, resource fork and hidden file are skipped.
        let described: Vec<&str> = a.described.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(described, ["data/sales.csv", "data/meta.json"]);
        let (_, sales) = &a.described[0];
        assert_eq!(sales.format, Format::Csv);
        match &sales.content {
            Content::Table(t) => {
                assert_eq!(t.rows, 3);
                let names: Vec<&str> = t.columns.iter().map(|c| c.name.as_str()).collect();
                assert_eq!(names, ["id", "city", "amount"]);
            }
            c => panic!("not a table: {c:?}"),
        }
        let (_, meta) = &a.described[1];
        assert_eq!(meta.format, Format::Json);
        match &meta.content {
            Content::Json(j) => assert_eq!(j.root, "array of 2 objects"),
            c => panic!("not json: {c:?}"),
        }
        assert!(a.notes.is_empty(), "{:?}", a.notes);
    }

    #[test]
    fn empty_zip_has_no_members() {
        let bytes = zip_bytes(&[], &[]);
        assert_eq!(bytes.len(), 22);
        let d = describe(&Source::from_bytes("empty.zip", bytes));
        assert_eq!(d.format, Format::Archive);
        let a = archive_of(&d);
        assert_eq!(a.container, "zip");
        assert_eq!((a.members_total, a.uncompressed_bytes), (0, 0));
        assert!(a.members.is_empty() && a.described.is_empty());
        assert!(d.error.is_none());
    }

    #[test]
    fn zip_bomb_is_described_from_a_capped_prefix() {
        // 200 MiB of zeros streamed through the zip writer. zstd at level 1 keeps this
        // quick in debug builds; the member is a few KiB, so the archive claims tens of
        // thousands of times its size.
        const SIZE: usize = 200 * 1024 * 1024;
        let mut w = ZipWriter::new(Cursor::new(Vec::new()));
        let opts = SimpleFileOptions::default()
            .compression_method(CompressionMethod::Zstd)
            .compression_level(Some(1))
            .large_file(false);
        w.start_file("zeros.bin", opts).unwrap();
        let zeros = vec![0u8; 1 << 20];
        for _ in 0..SIZE >> 20 {
            w.write_all(&zeros).unwrap();
        }
        let bytes = w.finish().unwrap().into_inner();
        assert!(
            bytes.len() < SIZE / 100,
            "not a bomb: {} bytes",
            bytes.len()
        );

        let d = describe(&Source::from_bytes("bomb.zip", bytes));
        let a = archive_of(&d);
        assert_eq!(a.members_total, 1);
        assert_eq!(a.uncompressed_bytes, SIZE as u64);
        let (path, inner) = &a.described[0];
        assert_eq!(path, "zeros.bin");
        // Only the cap was decompressed and handed on.
        assert_eq!(inner.size, MEMBER_CAP as u64);
        assert_eq!(a.notes.len(), 1);
        assert!(
            a.notes[0].starts_with("zeros.bin: described from its first 16.8 MB")
                && a.notes[0].contains("states 209.7 MB"),
            "{:?}",
            a.notes
        );
    }

    #[test]
    fn nested_archives_open_two_levels_deep() {
        let level3 = zip_bytes(&[("deep.csv", b"a,b\n1,2\n")], &[]);
        let level2 = zip_bytes(
            &[("inner.zip", &level3), ("mid.csv", b"x,y\n1,2\n3,4\n")],
            &[],
        );
        let level1 = zip_bytes(&[("middle.zip", &level2)], &[]);
        let d = describe(&Source::from_bytes("outer.zip", level1));
        let outer = archive_of(&d);
        let (name, middle) = &outer.described[0];
        assert_eq!(name, "middle.zip");
        let middle_a = archive_of(middle);
        assert_eq!(middle_a.members_total, 2);
        let (name, inner) = &middle_a.described[0];
        assert_eq!(name, "inner.zip");
        // Third level: recognised, listed by its parent, not opened.
        assert_eq!(inner.format, Format::Archive);
        assert!(matches!(inner.content, Content::Opaque(_)));
        assert_eq!(
            inner.notes,
            [format!(
                "not opened: archives are opened {MAX_DEPTH} levels deep"
            )]
        );
        assert!(matches!(middle_a.described[1].1.content, Content::Table(_)));
    }

    #[test]
    fn garbage_after_zip_magic_is_an_error_not_a_panic() {
        let mut bytes = zip_bytes(&[("a.csv", b"a,b\n1,2\n")], &[]);
        bytes.truncate(bytes.len() - 30);
        let d = describe(&Source::from_bytes("cut.zip", bytes));
        assert_eq!(d.format, Format::Archive);
        assert!(d.error.as_deref().unwrap().contains("zip"), "{:?}", d.error);
        let d = describe(&Source::from_bytes(
            "junk.zip",
            b"PK\x03\x04garbage".to_vec(),
        ));
        assert!(d.error.is_some());
    }
}
