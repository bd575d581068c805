//! The outline a PDF's description shows: its bookmarks, else the first lines of its
//! first page, read from the document's objects (files up to
//! [`MAX_FULL_LOAD`](super::MAX_FULL_LOAD)).

use super::{clean, LINE_CHARS};
use crate::analyze::{AnalyzeError, MediaInfo};
use lopdf::content::Content as PdfContent;
use lopdf::{decode_text_string, Document, Encoding, LoadOptions, Object, ObjectId};
use std::collections::{BTreeMap, HashSet};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Largest decompressed size of one stream when parsing every object or extracting text.
const MAX_STREAM: usize = 16 * 1024 * 1024;
/// Outline entries kept, and their depth (1 = top level).
const OUTLINE_ITEMS: usize = 40;
const OUTLINE_DEPTH: usize = 3;
/// Outline nodes visited at most, deeper entries included.
const OUTLINE_STEPS: usize = 10_000;
/// First lines of text kept.
const FIRST_LINES: usize = 6;

/// Runs one of the optional steps after the metadata, a panic of `lopdf` in it becoming
/// a note: the metadata already read is kept. (A panic elsewhere is caught by the
/// boundary around every analyzer and becomes the file's error.)
fn guarded<T>(what: &str, f: impl FnOnce() -> T) -> Result<T, AnalyzeError> {
    catch_unwind(AssertUnwindSafe(f))
        .map_err(|_| AnalyzeError::Malformed(format!("PDF reader failed on this file ({what})")))
}

/// The outline (bookmarks), else the first lines of the first page. Failures here only
/// leave a note: the metadata already described the file.
pub(super) fn read_outline_or_text(bytes: &[u8], info: &mut MediaInfo) {
    let options = LoadOptions {
        max_decompressed_size: Some(MAX_STREAM),
        ..LoadOptions::default()
    };
    let doc = match guarded("objects", || {
        Document::load_mem_with_options(bytes, options)
    }) {
        Ok(Ok(doc)) => doc,
        Ok(Err(e)) => {
            info.notes.push(format!("outline and text not read: {e}"));
            return;
        }
        Err(e) => {
            info.notes.push(format!("outline and text not read: {e}"));
            return;
        }
    };
    match guarded("outline", || outline(&doc)) {
        Ok(items) if !items.is_empty() => {
            info.notes.push("outline: the document's bookmarks".into());
            info.outline = items;
            return;
        }
        Ok(_) => {}
        Err(e) => info.notes.push(e.to_string()),
    }
    match guarded("text", || first_lines(&doc)) {
        Ok(Ok(lines)) if !lines.is_empty() => {
            info.notes.push("outline: first lines of page 1".into());
            info.outline = lines;
        }
        Ok(Ok(_)) => info.notes.push("no text found on page 1".into()),
        Ok(Err(e)) => info.notes.push(format!("text of page 1 not read: {e}")),
        Err(e) => info.notes.push(e.to_string()),
    }
}

/// Bookmark titles, indented two spaces per level, depth first. `lopdf`'s own outline
/// reader follows `/Next` links without cycle detection, so this walk is ours: each
/// outline object is visited once, and the walk is capped.
fn outline(doc: &Document) -> Vec<String> {
    let mut out = Vec::new();
    let Ok(catalog) = doc.catalog() else {
        return out;
    };
    let Ok(root) = doc.get_dict_in_dict(catalog, b"Outlines") else {
        return out;
    };
    let mut seen: HashSet<ObjectId> = HashSet::new();
    // Stack of (node, level); a node's /Next is pushed before its /First so children
    // come right after their parent.
    let mut stack: Vec<(&Object, usize)> = Vec::new();
    if let Ok(first) = root.get(b"First") {
        stack.push((first, 1));
    }
    let mut steps = 0;
    while let Some((node, level)) = stack.pop() {
        steps += 1;
        if steps > OUTLINE_STEPS || out.len() >= OUTLINE_ITEMS {
            break;
        }
        if let Object::Reference(id) = node {
            if !seen.insert(*id) {
                continue;
            }
        }
        let Ok((_, Object::Dictionary(item))) = doc.dereference(node) else {
            continue;
        };
        let title = item
            .get_deref(b"Title", doc)
            .ok()
            .and_then(|t| decode_text_string(t).ok())
            .and_then(|t| clean(Some(t)));
        if let Some(t) = title {
            out.push(format!("{}{t}", "  ".repeat(level - 1)));
        }
        if let Ok(next) = item.get(b"Next") {
            stack.push((next, level));
        }
        if level < OUTLINE_DEPTH {
            if let Ok(first) = item.get(b"First") {
                stack.push((first, level + 1));
            }
        }
    }
    out
}

/// The first non-empty lines of the first page's text, decompression bounded.
///
/// `lopdf`'s `extract_text` breaks lines only at `ET`, `T*`, `'` and `"`, so text set line
/// by line with `Td` moves (LaTeX and many other producers) comes out as one run. This
/// loop reads the same operators with lopdf's content parser and font encodings, breaks
/// lines at vertical moves too, and stops once it has enough lines.
fn first_lines(doc: &Document) -> Result<Vec<String>, lopdf::Error> {
    let Some((_, &page)) = doc.get_pages().iter().next() else {
        return Ok(Vec::new());
    };
    let encodings: BTreeMap<Vec<u8>, Encoding<'_>> = doc
        .get_page_fonts(page)?
        .into_iter()
        .filter_map(|(name, font)| {
            font.get_font_encoding_with_limit(doc, MAX_STREAM)
                .ok()
                .map(|e| (name, e))
        })
        .collect();
    let data = doc.get_page_content_with_limit(page, MAX_STREAM)?;
    let mut lines = Vec::new();
    let mut line = String::new();
    let mut encoding = None;
    let mut tm_y: Option<f32> = None;
    for op in PdfContent::decode_iter(&data) {
        // A damaged stream still gives the lines read before the damage.
        let Ok(op) = op else { break };
        let operand = |i: usize| op.operands.get(i).and_then(|o| o.as_float().ok());
        match op.operator.as_str() {
            "Tf" => {
                encoding = op
                    .operands
                    .first()
                    .and_then(|o| o.as_name().ok())
                    .and_then(|n| encodings.get(n));
            }
            "Tj" | "TJ" | "'" | "\"" => {
                if op.operator == "'" || op.operator == "\"" {
                    end_line(&mut line, &mut lines);
                }
                if let Some(enc) = encoding {
                    show_text(&mut line, enc, &op.operands);
                }
            }
            "T*" | "ET" => end_line(&mut line, &mut lines),
            "Td" | "TD" if operand(1).is_some_and(|y| y != 0.0) => end_line(&mut line, &mut lines),
            "Tm" => {
                let y = operand(5);
                if tm_y.is_some() && y != tm_y {
                    end_line(&mut line, &mut lines);
                }
                tm_y = y;
            }
            _ => {}
        }
        if lines.len() >= FIRST_LINES {
            break;
        }
    }
    end_line(&mut line, &mut lines);
    lines.truncate(FIRST_LINES);
    Ok(lines)
}

fn end_line(line: &mut String, lines: &mut Vec<String>) {
    if let Some(l) = clean(Some(std::mem::take(line))) {
        lines.push(l);
    }
}

/// Append the strings of a text-showing operator; a large negative kerning in a `TJ`
/// array is a word space.
fn show_text(line: &mut String, encoding: &Encoding<'_>, operands: &[Object]) {
    // A line longer than this is cut when kept anyway.
    if line.len() > 4 * LINE_CHARS {
        return;
    }
    for o in operands {
        match o {
            Object::String(bytes, _) => {
                if let Ok(t) = Document::decode_text(encoding, bytes) {
                    line.push_str(&t);
                }
            }
            Object::Array(items) => {
                for item in items {
                    match item {
                        Object::String(bytes, _) => {
                            if let Ok(t) = Document::decode_text(encoding, bytes) {
                                line.push_str(&t);
                            }
                        }
                        other if other.as_float().is_ok_and(|k| k < -200.0) => line.push(' '),
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::make_pdf;
    use super::*;

    #[test]
    fn cyclic_outline_terminates() {
        let mut doc = Document::load_mem(&make_pdf(&[&["a"]], "T", true)).unwrap();
        let catalog = doc.catalog().unwrap().clone();
        let outlines = doc.get_dict_in_dict(&catalog, b"Outlines").unwrap().clone();
        let first = outlines.get(b"First").unwrap().as_reference().unwrap();
        // Make the first item its own successor.
        if let Ok(Object::Dictionary(d)) = doc.get_object_mut(first) {
            d.set("Next", first);
        }
        assert_eq!(outline(&doc), ["Chapter 1", "  Section 1.1"]);
    }
}
