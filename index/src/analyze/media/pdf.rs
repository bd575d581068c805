//! PDF documents, read with `lopdf` (pure Rust, maintained, with bounds on stream
//! decompression and nesting).
//!
//! What is read: the page count and the Info dictionary (title; author, subject and
//! creation date as notes) from the cross-reference data, without parsing every object;
//! then, for files up to [`MAX_FULL_LOAD`], the outline (bookmarks) or, when there is
//! none, the first non-empty lines of the first page's text. Files over [`MAX_PDF`] are
//! described from their header only, with a note. Encrypted files that need a password
//! and files that do not parse are errors.
//!
//! The outline or first lines, read from the document's objects, are [`outline`]'s.

mod outline;

use super::super::{AnalyzeError, Analyzer, Content, Format, MediaInfo, Source};
use crate::text_util::cut_chars;
use lopdf::Document;
use outline::read_outline_or_text;

/// Largest PDF read at all: the metadata reader needs the whole file in memory.
pub const MAX_PDF: u64 = 256 * 1024 * 1024;
/// Largest PDF whose objects are all parsed, for the outline and the first page's text.
pub const MAX_FULL_LOAD: u64 = 32 * 1024 * 1024;
/// Characters kept per line of a title, note or outline.
const LINE_CHARS: usize = 120;

/// Describes PDF documents: pages, title, outline or first lines.
pub(crate) struct PdfAnalyzer;

impl Analyzer for PdfAnalyzer {
    fn name(&self) -> &'static str {
        "pdf"
    }
    fn version(&self) -> u32 {
        1
    }
    fn analyze(&self, src: &Source, _format: Format) -> Result<Content, AnalyzeError> {
        let mut info = MediaInfo {
            kind: "PDF document".into(),
            ..MediaInfo::default()
        };
        if let Some(v) = header_version(src.head()) {
            info.notes.push(format!("PDF {v}"));
        }
        if src.size() > MAX_PDF {
            info.notes.push(format!(
                "not parsed: {} MiB is over the {} MiB limit",
                src.size() >> 20,
                MAX_PDF >> 20
            ));
            return Ok(Content::Media(info));
        }
        let owned;
        let bytes = match src.bytes() {
            Some(b) => b,
            None => {
                let (b, cut) = src.read_up_to(MAX_PDF as usize)?;
                if cut {
                    return Err(AnalyzeError::Malformed(format!(
                        "PDF grew over the {} MiB limit while read",
                        MAX_PDF >> 20
                    )));
                }
                owned = b;
                &owned[..]
            }
        };
        read_metadata(bytes, &mut info)?;
        if bytes.len() as u64 > MAX_FULL_LOAD {
            info.notes.push(format!(
                "outline and text not read: over {} MiB",
                MAX_FULL_LOAD >> 20
            ));
        } else {
            read_outline_or_text(bytes, &mut info);
        }
        Ok(Content::Media(info))
    }
}

/// `1.7` from `%PDF-1.7`.
fn header_version(head: &[u8]) -> Option<String> {
    let at = memchr::memmem::find(&head[..head.len().min(1024)], b"%PDF-")?;
    let v: String = head[at + 5..]
        .iter()
        .take(4)
        .take_while(|c| c.is_ascii_digit() || **c == b'.')
        .map(|&c| c as char)
        .collect();
    (!v.is_empty()).then_some(v)
}

/// Page count and Info fields, from the cross-reference data and the objects they need.
fn read_metadata(bytes: &[u8], info: &mut MediaInfo) -> Result<(), AnalyzeError> {
    let meta = Document::load_metadata_mem(bytes)
        .map_err(|e| AnalyzeError::Malformed(format!("invalid PDF: {e}")))?;
    if meta.encrypted && meta.page_count == 0 {
        return Err(AnalyzeError::Malformed(
            "encrypted PDF: it cannot be read without its password".into(),
        ));
    }
    if meta.page_count == 0 {
        return Err(AnalyzeError::Malformed(
            "invalid PDF: no page found (truncated or damaged file?)".into(),
        ));
    }
    info.pages = Some(meta.page_count);
    info.title = clean(meta.title);
    if meta.encrypted {
        info.notes
            .push("encrypted, readable without a password".into());
    }
    if meta.xref_recovery.is_some() {
        info.notes.push(
            "cross-reference data damaged (truncated or edited file?): read from a repaired index"
                .into(),
        );
    }
    if let Some(a) = clean(meta.author) {
        info.notes.push(format!("author: {a}"));
    }
    if let Some(s) = clean(meta.subject) {
        info.notes.push(format!("subject: {s}"));
    }
    if let Some(d) = clean(meta.creation_date) {
        info.notes.push(format!("created: {}", pdf_date(&d)));
    }
    Ok(())
}

/// Trimmed, on one line, and only when not empty.
fn clean(s: Option<String>) -> Option<String> {
    let s = s?;
    let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
    (!s.is_empty()).then(|| cut_chars(&s, LINE_CHARS))
}

/// `D:20240105133000+01'00'` → `2024-01-05 13:30:00 +01:00`; other text as it is.
fn pdf_date(raw: &str) -> String {
    let s = raw.strip_prefix("D:").unwrap_or(raw);
    let n = s.bytes().take_while(u8::is_ascii_digit).count();
    let d = |a: usize, b: usize| s.get(a..b).unwrap_or("");
    if n < 8 {
        return raw.to_string();
    }
    let mut out = format!("{}-{}-{}", d(0, 4), d(4, 6), d(6, 8));
    if n >= 12 {
        out.push_str(&format!(" {}:{}", d(8, 10), d(10, 12)));
        if n >= 14 {
            out.push_str(&format!(":{}", d(12, 14)));
        }
        let tz = s.get(n..).unwrap_or("");
        if tz.starts_with('Z') {
            out.push_str(" UTC");
        } else if let Some(sign) = tz.chars().next().filter(|c| *c == '+' || *c == '-') {
            let digits: String = tz.chars().filter(char::is_ascii_digit).take(4).collect();
            if digits.len() == 4 {
                out.push_str(&format!(" {sign}{}:{}", &digits[..2], &digits[2..]));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::describe;
    use lopdf::content::{Content as PdfContent, Operation};
    use lopdf::{dictionary, Bookmark, Object, Stream};

    /// A real PDF written by lopdf: one page per entry of `pages`, each with its lines of
    /// text, an Info dictionary, and a bookmark per page when `bookmarks` is set.
    pub(super) fn make_pdf(pages: &[&[&str]], title: &str, bookmarks: bool) -> Vec<u8> {
        let mut doc = Document::with_version("1.5");
        let pages_id = doc.new_object_id();
        let font_id = doc.add_object(dictionary! {
            "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica",
        });
        let resources_id = doc.add_object(dictionary! {
            "Font" => dictionary! { "F1" => font_id },
        });
        let mut kids = Vec::new();
        for (i, lines) in pages.iter().enumerate() {
            let mut ops = vec![
                Operation::new("BT", vec![]),
                Operation::new("Tf", vec!["F1".into(), 14.into()]),
                Operation::new("Td", vec![72.into(), 720.into()]),
            ];
            for (j, line) in lines.iter().enumerate() {
                if j > 0 {
                    ops.push(Operation::new("Td", vec![0.into(), (-18).into()]));
                }
                ops.push(Operation::new("Tj", vec![Object::string_literal(*line)]));
            }
            ops.push(Operation::new("ET", vec![]));
            let content = PdfContent { operations: ops };
            let content_id = doc.add_object(Stream::new(dictionary! {}, content.encode().unwrap()));
            let page_id = doc.add_object(dictionary! {
                "Type" => "Page", "Parent" => pages_id, "Contents" => content_id,
            });
            if bookmarks {
                let t = format!("Chapter {}", i + 1);
                let top = doc.add_bookmark(Bookmark::new(t, [0.0; 3], 0, page_id), None);
                let sub = format!("Section {}.1", i + 1);
                doc.add_bookmark(Bookmark::new(sub, [0.0; 3], 0, page_id), Some(top));
            }
            kids.push(page_id.into());
        }
        let count = kids.len() as i64;
        doc.objects.insert(
            pages_id,
            Object::Dictionary(dictionary! {
                "Type" => "Pages", "Kids" => kids, "Count" => count,
                "Resources" => resources_id,
                "MediaBox" => vec![0.into(), 0.into(), 595.into(), 842.into()],
            }),
        );
        let mut catalog = dictionary! { "Type" => "Catalog", "Pages" => pages_id };
        if let Some(outline_id) = doc.build_outline() {
            catalog.set("Outlines", outline_id);
        }
        let catalog_id = doc.add_object(catalog);
        let info_id = doc.add_object(dictionary! {
            "Title" => Object::string_literal(title),
            "Author" => Object::string_literal("Grace Hopper"),
            "CreationDate" => Object::string_literal("D:20240105133000+01'00'"),
        });
        doc.trailer.set("Root", catalog_id);
        doc.trailer.set("Info", info_id);
        doc.compress();
        let mut out = Vec::new();
        doc.save_to(&mut out).unwrap();
        out
    }

    fn media(bytes: Vec<u8>) -> MediaInfo {
        let d = describe(&Source::from_bytes("report.pdf", bytes));
        assert_eq!(d.format, Format::Pdf);
        assert_eq!(d.analyzer, "pdf@1");
        assert!(d.error.is_none(), "{:?}", d.error);
        match d.content {
            Content::Media(m) => m,
            c => panic!("{c:?}"),
        }
    }

    fn error(bytes: Vec<u8>) -> String {
        let src = Source::from_bytes("bad.pdf", bytes);
        match PdfAnalyzer.analyze(&src, Format::Pdf) {
            Err(e) => e.to_string(),
            Ok(c) => panic!("expected an error, got {c:?}"),
        }
    }

    #[test]
    fn pages_title_notes_and_bookmarks() {
        let pdf = make_pdf(
            &[&["Quarterly report"], &["Appendix"], &["Index"]],
            "Q3 Sales",
            true,
        );
        let m = media(pdf);
        assert_eq!(m.kind, "PDF document");
        assert_eq!(m.pages, Some(3));
        assert_eq!(m.title.as_deref(), Some("Q3 Sales"));
        assert_eq!(
            m.outline,
            [
                "Chapter 1",
                "  Section 1.1",
                "Chapter 2",
                "  Section 2.1",
                "Chapter 3",
                "  Section 3.1"
            ]
        );
        assert!(m.notes.contains(&"PDF 1.5".to_string()), "{:?}", m.notes);
        assert!(m.notes.contains(&"author: Grace Hopper".to_string()));
        assert!(m
            .notes
            .contains(&"created: 2024-01-05 13:30:00 +01:00".to_string()));
        assert!(m
            .notes
            .contains(&"outline: the document's bookmarks".to_string()));
    }

    #[test]
    fn first_lines_of_the_first_page_without_bookmarks() {
        let pdf = make_pdf(
            &[
                &["Annual Survey 2023", "Methods and data"],
                &["Second page"],
            ],
            "Survey",
            false,
        );
        let m = media(pdf);
        assert_eq!(m.pages, Some(2));
        assert_eq!(m.outline, ["Annual Survey 2023", "Methods and data"]);
        assert!(m
            .notes
            .contains(&"outline: first lines of page 1".to_string()));
    }

    #[test]
    fn truncated_and_garbage_pdfs_are_errors() {
        let pdf = make_pdf(&[&["a"], &["b"]], "T", false);
        for keep in [20, pdf.len() / 3] {
            let e = error(pdf[..keep].to_vec());
            assert!(e.starts_with("invalid PDF"), "{keep}: {e}");
        }
        let e = error(b"%PDF-1.4\n\xff\xfe garbage garbage\n%%EOF".to_vec());
        assert!(e.starts_with("invalid PDF"), "{e}");
    }

    #[test]
    fn lost_trailer_is_read_from_a_repaired_index_and_said_so() {
        let pdf = make_pdf(&[&["a"], &["b"]], "T", false);
        let m = media(pdf[..pdf.len() - 10].to_vec());
        assert_eq!(m.pages, Some(2));
        assert!(
            m.notes
                .iter()
                .any(|n| n.starts_with("cross-reference data damaged")),
            "{:?}",
            m.notes
        );
    }

    fn encrypt(pdf: &[u8], user_password: &str) -> Vec<u8> {
        let mut doc = Document::load_mem(pdf).unwrap();
        let id = Object::String(
            b"lakestar-test-id".to_vec(),
            lopdf::StringFormat::Hexadecimal,
        );
        doc.trailer.set("ID", vec![id.clone(), id]);
        let version = lopdf::EncryptionVersion::V2 {
            document: &doc,
            owner_password: "owner",
            user_password,
            key_length: 128,
            permissions: lopdf::Permissions::all(),
        };
        let state = lopdf::EncryptionState::try_from(version).unwrap();
        doc.encrypt(&state).unwrap();
        let mut out = Vec::new();
        doc.save_to(&mut out).unwrap();
        out
    }

    #[test]
    fn encrypted_pdfs() {
        let pdf = make_pdf(&[&["Secret plans"]], "Hidden", false);
        let e = error(encrypt(&pdf, "letmein"));
        assert!(e.starts_with("encrypted PDF"), "{e}");
        // Encrypted with an empty user password: readable, and said so.
        let m = media(encrypt(&pdf, ""));
        assert_eq!(m.pages, Some(1));
        assert_eq!(m.title.as_deref(), Some("Hidden"));
        assert!(m
            .notes
            .contains(&"encrypted, readable without a password".to_string()));
        assert_eq!(m.outline, ["Secret plans"]);
    }

    #[test]
    fn dates_read_as_dates() {
        assert_eq!(pdf_date("D:20240105"), "2024-01-05");
        assert_eq!(pdf_date("D:202401051330Z"), "2024-01-05 13:30 UTC");
        assert_eq!(pdf_date("yesterday"), "yesterday");
    }

    #[test]
    fn every_cut_of_a_pdf_is_handled_without_panic() {
        let pdf = make_pdf(&[&["one"], &["two"]], "Cuts", true);
        let (mut ok, mut err) = (0, 0);
        for end in (0..pdf.len()).step_by(7) {
            let src = Source::from_bytes("cut.pdf", pdf[..end].to_vec());
            // Through the panic boundary, as the indexer calls it.
            let d = crate::analyze::describe_as(&src, Format::Pdf);
            match (d.content, d.error) {
                (Content::Media(m), None) => {
                    ok += 1;
                    // A description is only given with the pages found.
                    assert!(m.pages.is_some_and(|p| p >= 1), "{end}: {m:?}");
                }
                (_, Some(_)) => err += 1,
                (c, None) => panic!("{c:?}"),
            }
        }
        assert!(ok > 0 && err > 0, "{ok} ok, {err} errors");
    }
}
