//! Markdown and plain text: size, outline of headings, tables and a leading excerpt.

use super::{encoding, terms, AnalyzeError, Analyzer, Content, Format, Source};
use crate::text_util::cut_chars;
use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use serde::{Deserialize, Serialize};

/// Text read at most; longer files are described from their beginning.
const MAX_TEXT: usize = 16 * 1024 * 1024;
const EXCERPT_CHARS: usize = 400;
const MAX_HEADINGS: usize = 200;
const MAX_TABLES: usize = 50;
/// Salient terms kept.
const TERMS: usize = 12;
/// Defined terms kept.
const DEFINITIONS: usize = 20;

/// Summary of a text or Markdown file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TextSummary {
    /// Parsed as Markdown.
    pub markdown: bool,
    /// Lines in the part read.
    pub lines: u64,
    /// Whitespace-separated words in the part read.
    pub words: u64,
    /// Whether only the first part of the file was read.
    #[serde(default)]
    pub truncated: bool,
    /// Invalid byte sequences were replaced.
    #[serde(default)]
    pub lossy: bool,
    /// The text encoding when not plain UTF-8 (`UTF-16LE`, `Latin-1 (Windows-1252)`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encoding: Option<String>,
    /// Headings in order.
    pub outline: Vec<Heading>,
    /// Tables in order.
    pub tables: Vec<TextTable>,
    /// The first prose of the file.
    pub excerpt: String,
    /// The most frequent content words, with counts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub terms: Vec<(String, u64)>,
    /// Terms the text defines (`Term: definition`, definition lists), first ones.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub definitions: Vec<String>,
    /// How many definitions the text holds.
    #[serde(default)]
    pub definition_count: u64,
    /// The first and last day (ISO) of the dates written in the first lines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dates: Option<(String, String)>,
}

/// A heading of the outline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Heading {
    /// 1 for `#`, 2 for `##`, ...
    pub level: u8,
    /// Heading text.
    pub text: String,
    /// 1-based line number.
    pub line: u64,
}

/// A table found in text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TextTable {
    /// 1-based line number where it starts.
    pub line: u64,
    /// Header cells.
    pub columns: Vec<String>,
    /// Body rows.
    pub rows: u64,
    /// The heading the table sits under, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub section: Option<String>,
}

pub(crate) struct TextAnalyzer;

impl Analyzer for TextAnalyzer {
    fn name(&self) -> &'static str {
        "text"
    }
    fn version(&self) -> u32 {
        3
    }
    fn analyze(&self, src: &Source, format: Format) -> Result<Content, AnalyzeError> {
        let (raw, truncated) = src.read_up_to(MAX_TEXT)?;
        let enc = encoding::sniff(src.head());
        let (text, lossy) = if enc == encoding_rs::UTF_8 {
            let bytes = raw.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&raw);
            match std::str::from_utf8(bytes) {
                Ok(s) => (std::borrow::Cow::Borrowed(s), false),
                Err(e) if truncated && e.error_len().is_none() => {
                    // Cut in the middle of a character: drop the partial tail.
                    let valid = &bytes[..e.valid_up_to()];
                    (String::from_utf8_lossy(valid), false)
                }
                // Valid UTF-8 in the head, invalid further on: replace what is broken.
                Err(_) => (String::from_utf8_lossy(bytes), true),
            }
        } else {
            let (t, _, errors) = enc.decode(&raw);
            (t, errors)
        };
        let mut s = TextSummary {
            markdown: format == Format::Markdown,
            lines: text.lines().count() as u64,
            words: text.split_whitespace().count() as u64,
            truncated,
            lossy,
            encoding: encoding::label(enc, src.head()),
            outline: Vec::new(),
            tables: Vec::new(),
            excerpt: String::new(),
            terms: Vec::new(),
            definitions: Vec::new(),
            definition_count: 0,
            dates: super::time::span_in_lines(&text).map(|(lo, hi)| (lo.iso(), hi.iso())),
        };
        if s.markdown {
            markdown(&text, &mut s);
        } else {
            s.excerpt = excerpt(text.lines().map(str::trim).filter(|l| !l.is_empty()));
        }
        s.terms = terms::salient(&text, TERMS);
        (s.definition_count, s.definitions) = terms::definitions(&text, DEFINITIONS);
        Ok(Content::Text(s))
    }
}

fn excerpt<'a>(lines: impl Iterator<Item = &'a str>) -> String {
    let mut out = String::new();
    for l in lines {
        if out.chars().count() >= EXCERPT_CHARS {
            break;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(l);
    }
    cut_chars(&out, EXCERPT_CHARS)
}

fn level(l: HeadingLevel) -> u8 {
    match l {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    }
}

fn markdown(text: &str, s: &mut TextSummary) {
    let line_starts: Vec<usize> = std::iter::once(0)
        .chain(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1))
        .collect();
    let line_of = |offset: usize| line_starts.partition_point(|&st| st <= offset) as u64;

    let mut heading: Option<(u8, String, u64)> = None;
    let mut table: Option<TextTable> = None;
    let mut in_head = false;
    let mut cell = String::new();
    let mut prose: Vec<String> = Vec::new();
    let mut para: Option<String> = None;
    let mut current_section: Option<String> = None;

    for (ev, range) in Parser::new_ext(text, Options::ENABLE_TABLES).into_offset_iter() {
        match ev {
            Event::Start(Tag::Heading { level: l, .. }) => {
                heading = Some((level(l), String::new(), line_of(range.start)))
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some((level, t, line)) = heading.take() {
                    let t = t.trim().to_string();
                    current_section = Some(t.clone());
                    if s.outline.len() < MAX_HEADINGS {
                        s.outline.push(Heading {
                            level,
                            text: t,
                            line,
                        });
                    }
                }
            }
            Event::Start(Tag::Table(_)) => {
                table = Some(TextTable {
                    line: line_of(range.start),
                    columns: Vec::new(),
                    rows: 0,
                    section: current_section.clone(),
                })
            }
            Event::End(TagEnd::Table) => {
                if let Some(t) = table.take() {
                    if s.tables.len() < MAX_TABLES {
                        s.tables.push(t);
                    }
                }
            }
            Event::Start(Tag::TableHead) => in_head = true,
            Event::End(TagEnd::TableHead) => in_head = false,
            Event::End(TagEnd::TableRow) => {
                if let Some(t) = table.as_mut() {
                    t.rows += 1;
                }
            }
            Event::Start(Tag::TableCell) => cell.clear(),
            Event::End(TagEnd::TableCell) if in_head => {
                if let Some(t) = table.as_mut() {
                    t.columns.push(cell.trim().to_string());
                }
            }
            Event::Start(Tag::Paragraph) if table.is_none() && heading.is_none() => {
                para = Some(String::new())
            }
            Event::End(TagEnd::Paragraph) => {
                if let Some(p) = para.take() {
                    if prose.iter().map(|p| p.len()).sum::<usize>() < EXCERPT_CHARS * 2 {
                        prose.push(p.trim().to_string());
                    }
                }
            }
            Event::Text(t) | Event::Code(t) => {
                if let Some((_, h, _)) = heading.as_mut() {
                    h.push_str(&t);
                } else if table.is_some() {
                    cell.push_str(&t);
                } else if let Some(p) = para.as_mut() {
                    p.push_str(&t);
                }
            }
            Event::SoftBreak | Event::HardBreak => {
                if let Some(p) = para.as_mut() {
                    p.push(' ');
                }
            }
            _ => {}
        }
    }
    s.excerpt = excerpt(prose.iter().map(String::as_str).filter(|p| !p.is_empty()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_outline_tables_excerpt() {
        let md = "# Guide\n\nIntro text here.\n\n## Fees\n\n| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n\n### Sub `code`\n";
        let src = Source::from_bytes("m.md", md.as_bytes().to_vec());
        let Content::Text(s) = TextAnalyzer.analyze(&src, Format::Markdown).unwrap() else {
            panic!()
        };
        let o: Vec<(u8, &str, u64)> = s
            .outline
            .iter()
            .map(|h| (h.level, h.text.as_str(), h.line))
            .collect();
        assert_eq!(o, [(1, "Guide", 1), (2, "Fees", 5), (3, "Sub code", 12)]);
        assert_eq!(s.tables.len(), 1);
        assert_eq!(s.tables[0].columns, ["a", "b"]);
        assert_eq!(s.tables[0].rows, 2);
        assert_eq!(s.tables[0].section.as_deref(), Some("Fees"));
        assert_eq!(s.excerpt, "Intro text here.");
    }

    #[test]
    fn latin1_is_decoded_and_broken_utf8_is_lossy() {
        let src = Source::from_bytes("t.txt", b"caf\xe9 ok\n".to_vec());
        let Content::Text(s) = TextAnalyzer.analyze(&src, Format::Text).unwrap() else {
            panic!()
        };
        assert!(!s.lossy);
        assert_eq!(s.encoding.as_deref(), Some("Latin-1 (Windows-1252)"));
        assert_eq!(s.excerpt, "caf\u{e9} ok");
        // Valid UTF-8 head, a broken byte far later: UTF-8 with a replacement.
        let mut b = "d\u{e9}j\u{e0} vu\n".repeat(10_000).into_bytes();
        b.extend_from_slice(b"bad \xff byte\n");
        let src = Source::from_bytes("t.txt", b);
        let Content::Text(s) = TextAnalyzer.analyze(&src, Format::Text).unwrap() else {
            panic!()
        };
        assert!(s.lossy);
        assert_eq!(s.encoding, None);
    }
}
