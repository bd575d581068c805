//! Delimited text tables: CSV, TSV, semicolon- and pipe-separated.

use super::profile::{value_type, ColumnBuilder, ColumnProfile, ColumnType};
use super::{encoding, AnalyzeError, Analyzer, Content, Format, Source};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Read};

const CANDIDATES: [u8; 4] = [b',', b'\t', b';', b'|'];
/// Lines of the head looked at when sniffing.
const SNIFF_LINES: usize = 50;
/// Preamble lines kept in the description.
const PREAMBLE_NOTES: usize = 3;

fn cut_line(s: &str) -> String {
    let s = s.trim();
    if s.chars().count() <= 100 {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(99).collect();
        t.push('…');
        t
    }
}

/// A profiled delimited table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Table {
    /// The field delimiter, as a string (`","`, `"\t"`, ...).
    pub delimiter: String,
    /// Whether the first row is a header.
    pub header: bool,
    /// Data rows (header excluded).
    pub rows: u64,
    /// Rows whose field count differs from the header's.
    pub ragged_rows: u64,
    /// One profile per column.
    pub columns: Vec<ColumnProfile>,
    /// The text encoding when not plain UTF-8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encoding: Option<String>,
    /// Lines above the table (titles, comments) that were skipped.
    #[serde(default)]
    pub skipped_lines: u64,
    /// The first of those lines.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub preamble: Vec<String>,
    /// Whether `rows` (and null counts) are exact, or estimated from a sample.
    #[serde(default = "yes")]
    pub rows_exact: bool,
    /// Bytes profiled, when the file was larger than the read budget.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampled_bytes: Option<u64>,
    /// The pandas call that loads this table as described, `path` standing for the
    /// file's path (`pd.read_csv(path, sep="\t", thousands=",")`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<String>,
}

fn yes() -> bool {
    true
}

pub(crate) struct DelimitedAnalyzer;

impl Analyzer for DelimitedAnalyzer {
    fn name(&self) -> &'static str {
        "delimited"
    }
    fn version(&self) -> u32 {
        3
    }
    fn analyze(&self, src: &Source, format: Format) -> Result<Content, AnalyzeError> {
        let enc = encoding::sniff(src.head());
        let head = encoding::decode_head(src.head(), enc);
        let lines = scan_lines(&head);
        let layout = sniff_layout(&lines, head.len() < 4096);
        let delimiter = layout
            .as_ref()
            .map_or(if format == Format::Tsv { b'\t' } else { b',' }, |l| {
                l.delimiter
            });
        // Lines above the table: skipped, and kept (a few) as notes.
        let (skip, preamble) = match &layout {
            Some(l) if l.first > 0 => {
                let skip = lines[l.first].line;
                let notes = lines[..l.first]
                    .iter()
                    .take(PREAMBLE_NOTES)
                    .map(|p| cut_line(&String::from_utf8_lossy(&head[p.text_start..p.text_end])))
                    .collect();
                (skip, notes)
            }
            _ => (0, Vec::new()),
        };
        // Past the read budget, profile a sample (UTF-16 is read from its start only:
        // its lines cannot be cut on raw bytes).
        let sample = if encoding::is_utf16(enc) {
            None
        } else {
            src.sample()?
        };
        let inner: Box<dyn std::io::Read + Send + '_> = match &sample {
            Some(s) => Box::new(std::io::Cursor::new(&s.bytes[..])),
            None if encoding::is_utf16(enc) && src.budget().is_some_and(|b| src.size() > b) => {
                Box::new(src.reader()?.take(src.budget().unwrap_or(u64::MAX)))
            }
            None => src.reader()?,
        };
        let mut reader = std::io::BufReader::new(encoding::transcode(inner, enc)?);
        let mut sink = Vec::new();
        for _ in 0..skip {
            sink.clear();
            if reader.read_until(b'\n', &mut sink)? == 0 {
                break;
            }
        }
        let mut table = profile_table(reader, delimiter)?;
        let read = match &sample {
            Some(s) => Some(s.bytes.len() as u64),
            None => src.budget().filter(|b| src.size() > *b),
        };
        if let Some(read) = read {
            extrapolate(&mut table, src.size() as f64 / read.max(1) as f64, read);
        }
        table.encoding = encoding::label(enc, src.head());
        table.skipped_lines = skip as u64;
        table.preamble = preamble;
        Ok(Content::Table(table))
    }
}

fn reader_builder(delimiter: u8) -> csv::ReaderBuilder {
    let mut b = csv::ReaderBuilder::new();
    b.delimiter(delimiter).has_headers(false).flexible(true);
    b
}

/// Scale a table profiled from `read` bytes of a larger file to the whole file: row and
/// null counts are estimated by the byte ratio, distinct counts become floors.
pub(crate) fn extrapolate(t: &mut Table, ratio: f64, read: u64) {
    let scale = |n: u64| (n as f64 * ratio).round() as u64;
    t.rows = scale(t.rows);
    t.ragged_rows = scale(t.ragged_rows);
    for c in &mut t.columns {
        c.nulls = scale(c.nulls);
        c.distinct_exact = false;
        c.estimated = true;
    }
    t.rows_exact = false;
    t.sampled_bytes = Some(read);
}

/// One record of the head, as the sniffer sees it.
struct Line {
    /// 0-based physical line where the record starts.
    line: usize,
    /// Field count per candidate delimiter.
    fields: [usize; CANDIDATES.len()],
    /// Starts with a comment marker (`#`, `%`, `//`).
    comment: bool,
    /// The record's text (first line of it), for preamble notes.
    text_start: usize,
    text_end: usize,
}

/// The first [`SNIFF_LINES`] records of `head`, with field counts for every candidate
/// delimiter at once, honouring double quotes: delimiters and newlines inside quotes do
/// not count. One pass serves every candidate because quoting does not depend on the
/// delimiter.
///
/// Written by hand rather than with the `csv` crate because building a `csv` reader
/// compiles a DFA, and sniffing would build one per candidate per file: that was a
/// quarter of a whole index run's time.
fn scan_lines(head: &[u8]) -> Vec<Line> {
    let mut lines = Vec::new();
    let mut fields = [1usize; CANDIDATES.len()];
    let mut in_quotes = false;
    let mut content = false;
    let mut phys = 0;
    let mut start_line = 0;
    let mut start = 0;
    let complete = match memchr::memrchr(b'\n', head) {
        Some(i) => &head[..=i],
        None => head,
    };
    let push = |lines: &mut Vec<Line>, fields, start_line, start: usize, end: usize| {
        let text = complete[start..end].trim_ascii_start();
        let comment = text.starts_with(b"#") || text.starts_with(b"%") || text.starts_with(b"//");
        lines.push(Line {
            line: start_line,
            fields,
            comment,
            text_start: start,
            text_end: end,
        });
    };
    for (i, &b) in complete.iter().enumerate() {
        match b {
            b'"' => {
                in_quotes = !in_quotes;
                content = true;
            }
            b'\n' if in_quotes => phys += 1,
            _ if in_quotes => content = true,
            b'\n' => {
                if content {
                    push(&mut lines, fields, start_line, start, i);
                    if lines.len() == SNIFF_LINES {
                        return lines;
                    }
                }
                phys += 1;
                start_line = phys;
                start = i + 1;
                fields = [1; CANDIDATES.len()];
                content = false;
            }
            b'\r' => {}
            b',' => (fields[0], content) = (fields[0] + 1, true),
            b'\t' => (fields[1], content) = (fields[1] + 1, true),
            b';' => (fields[2], content) = (fields[2] + 1, true),
            b'|' => (fields[3], content) = (fields[3] + 1, true),
            _ => content = true,
        }
    }
    if content && !complete.ends_with(b"\n") {
        push(&mut lines, fields, start_line, start, complete.len());
    }
    lines
}

/// What sniffing the head found.
struct Layout {
    delimiter: u8,
    /// Index into the scanned lines of the first table record (header or data).
    first: usize,
}

/// The delimiter that splits the head's records into the same number (≥ 2) of fields most
/// consistently — counted from the first record that has that many, so that a preamble
/// (title lines, `#` comments) does not hide the table below it.
fn sniff_layout(lines: &[Line], small: bool) -> Option<Layout> {
    if lines.len() < 2 && !(lines.len() == 1 && small) {
        return None;
    }
    let mut best: Option<(Layout, f64, usize)> = None;
    for (ci, d) in CANDIDATES.into_iter().enumerate() {
        let mut freq: Vec<(usize, usize)> = Vec::new(); // (field count, records)
        for l in lines.iter().filter(|l| !l.comment) {
            match freq.iter_mut().find(|(c, _)| *c == l.fields[ci]) {
                Some(f) => f.1 += 1,
                None => freq.push((l.fields[ci], 1)),
            }
        }
        let Some(&(mode, _)) = freq.iter().max_by_key(|(len, n)| (*n, *len)) else {
            continue;
        };
        if mode < 2 {
            continue;
        }
        let Some(first) = lines
            .iter()
            .position(|l| !l.comment && l.fields[ci] == mode)
        else {
            continue;
        };
        // A `#` line just above the table that splits like it is its commented-out
        // header (`#featureID,row ID,...`, VCF's `#CHROM`): the table starts there.
        let first = match first.checked_sub(1).map(|i| &lines[i]) {
            Some(p) if p.comment && p.fields[ci] == mode && p.line + 1 == lines[first].line => {
                first - 1
            }
            _ => first,
        };
        let rest = &lines[first..];
        if first > lines.len() / 2 || (rest.len() < 2 && !small) {
            continue;
        }
        let n = rest.iter().filter(|l| l.fields[ci] == mode).count();
        let consistency = n as f64 / rest.len() as f64;
        if consistency < 0.8 {
            continue;
        }
        let better = match &best {
            None => true,
            Some((_, c, m)) => consistency > *c || (consistency == *c && mode > *m),
        };
        if better {
            best = Some((
                Layout {
                    delimiter: d,
                    first,
                },
                consistency,
                mode,
            ));
        }
    }
    best.map(|b| b.0)
}

/// The delimiter of a delimited head, if it is one (used by format detection).
pub(crate) fn sniff_delimiter(head: &[u8]) -> Option<u8> {
    sniff_layout(&scan_lines(head), head.len() < 4096).map(|l| l.delimiter)
}

/// Whether the first record is a header: it is data when, in some column whose body is
/// typed (numbers, dates, booleans), its value has that type too, or when it repeats a
/// value. Otherwise it is a header — as in most real files.
fn sniff_header(recs: &[csv::StringRecord]) -> bool {
    let Some((first, body)) = recs.split_first() else {
        return false;
    };
    if body.is_empty() {
        return first.iter().all(|v| value_type(v) == ColumnType::Text);
    }
    let mut seen = std::collections::HashSet::new();
    if first
        .iter()
        .any(|v| !v.trim().is_empty() && !seen.insert(v.trim()))
    {
        return false;
    }
    let mut typed_columns = 0;
    for (i, v) in first.iter().enumerate() {
        let mut body_type = None;
        let mut consistent = true;
        for r in body {
            let Some(cell) = r.get(i) else { continue };
            if cell.trim().is_empty() {
                continue;
            }
            let t = numeric_kind(value_type(cell));
            match body_type {
                None => body_type = Some(t),
                Some(b) if b == t => {}
                Some(_) => consistent = false,
            }
        }
        match body_type {
            Some(t) if consistent && t != ColumnType::Text => {
                typed_columns += 1;
                if !v.trim().is_empty() && numeric_kind(value_type(v)) == t {
                    return false;
                }
            }
            _ => {}
        }
    }
    // An all-text table whose first row looks like the others: still call it a header.
    typed_columns > 0 || first.iter().all(|v| value_type(v) == ColumnType::Text)
}

fn numeric_kind(t: ColumnType) -> ColumnType {
    match t {
        ColumnType::Integer => ColumnType::Float,
        ColumnType::Date => ColumnType::Datetime,
        t => t,
    }
}

/// Profile the whole table in one streaming pass. The first [`SNIFF_LINES`] records are
/// held back until the header question is settled on them.
fn profile_table(reader: impl std::io::Read, delimiter: u8) -> Result<Table, AnalyzeError> {
    let mut rdr = reader_builder(delimiter).from_reader(reader);
    let mut held: Vec<csv::ByteRecord> = Vec::with_capacity(SNIFF_LINES);
    let mut record = csv::ByteRecord::new();
    let mut profiler: Option<Profiler> = None;
    loop {
        match rdr.read_byte_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {}
            Err(e) => {
                return Err(match e.into_kind() {
                    csv::ErrorKind::Io(io) => AnalyzeError::Io(io),
                    other => AnalyzeError::Malformed(format!("CSV parse error: {other:?}")),
                })
            }
        }
        if record.len() == 1 && record[0].iter().all(u8::is_ascii_whitespace) {
            continue; // blank line
        }
        match profiler.as_mut() {
            Some(p) => p.push(&record),
            None => {
                held.push(record.clone());
                if held.len() == SNIFF_LINES {
                    profiler = Some(Profiler::start(&held));
                }
            }
        }
    }
    let profiler = match profiler {
        Some(p) => p,
        None => Profiler::start(&held),
    };
    Ok(profiler.finish(delimiter))
}

struct Profiler {
    header: bool,
    header_len: Option<usize>,
    columns: Vec<ColumnBuilder>,
    rows: u64,
    ragged: u64,
}

impl Profiler {
    /// Decide the header on the held records, then profile them.
    fn start(held: &[csv::ByteRecord]) -> Profiler {
        let strings: Vec<csv::StringRecord> = held
            .iter()
            .map(|r| {
                r.iter()
                    .map(|f| String::from_utf8_lossy(f).into_owned())
                    .collect()
            })
            .collect();
        let header = sniff_header(&strings);
        let mut p = Profiler {
            header,
            header_len: None,
            columns: Vec::new(),
            rows: 0,
            ragged: 0,
        };
        let mut rest = held;
        if let Some(first) = held.first() {
            let names: Vec<String> = if header {
                strings[0]
                    .iter()
                    .enumerate()
                    .map(|(i, s)| {
                        if i == 0 {
                            s.trim_start_matches('\u{feff}')
                        } else {
                            s
                        }
                        .trim()
                        .to_string()
                    })
                    .enumerate()
                    // Empty header cells get the names pandas gives them, which are
                    // the names the agent's code will see.
                    .map(|(i, s)| {
                        if s.is_empty() {
                            format!("Unnamed: {i}")
                        } else {
                            s
                        }
                    })
                    .collect()
            } else {
                (1..=first.len()).map(|i| format!("column_{i}")).collect()
            };
            p.header_len = Some(names.len());
            p.columns = names.into_iter().map(ColumnBuilder::new).collect();
            if header {
                rest = &held[1..];
            }
        }
        for r in rest {
            p.push(r);
        }
        p
    }

    fn push(&mut self, record: &csv::ByteRecord) {
        self.rows += 1;
        if Some(record.len()) != self.header_len {
            self.ragged += 1;
        }
        for (i, field) in record.iter().enumerate() {
            if i >= self.columns.len() {
                self.columns
                    .push(ColumnBuilder::new(format!("column_{}", i + 1)));
            }
            self.columns[i].push(&String::from_utf8_lossy(field));
        }
    }

    fn finish(self, delimiter: u8) -> Table {
        Table {
            delimiter: (delimiter as char).to_string(),
            header: self.header,
            rows: self.rows,
            ragged_rows: self.ragged,
            columns: self
                .columns
                .into_iter()
                .map(ColumnBuilder::finish)
                .collect(),
            encoding: None,
            skipped_lines: 0,
            preamble: Vec::new(),
            rows_exact: true,
            sampled_bytes: None,
            load: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> Table {
        let src = Source::from_bytes("t.csv", text.as_bytes().to_vec());
        match DelimitedAnalyzer.analyze(&src, Format::Csv).unwrap() {
            Content::Table(t) => t,
            c => panic!("not a table: {c:?}"),
        }
    }

    #[test]
    fn header_and_types() {
        let t = table(",mcc,description\n0,1520,\"Heating, Plumbing\"\n1,1711,Electrical\n");
        assert!(t.header);
        assert_eq!(t.rows, 2);
        assert_eq!(t.columns[0].name, "Unnamed: 0");
        assert_eq!(t.columns[1].kind, ColumnType::Integer);
        assert_eq!(t.columns[2].examples[0], "Heating, Plumbing");
    }

    #[test]
    fn no_header_and_other_delimiters() {
        let t = table("1;2.5;x\n2;3.5;y\n3;4.5;z\n");
        assert!(!t.header);
        assert_eq!(t.delimiter, ";");
        assert_eq!(t.rows, 3);
        assert_eq!(t.columns[1].kind, ColumnType::Float);
        let t = table("a|b\n1|2\n3|4\n5|6\n7\n");
        assert_eq!(t.delimiter, "|");
        assert_eq!(t.ragged_rows, 1);
    }

    #[test]
    fn preamble_lines_are_skipped_and_kept() {
        let t = table("Sales report 2019\nGenerated by ERP, v2\n\n# comment, with comma\nregion,amount,date\nemea,10,2019-01-02\napac,12,2019-01-03\nna,7,2019-01-04\n");
        assert_eq!(t.skipped_lines, 4);
        assert_eq!(t.preamble[0], "Sales report 2019");
        assert!(t.header);
        assert_eq!(t.rows, 3);
        let names: Vec<&str> = t.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["region", "amount", "date"]);
        assert_eq!(t.columns[2].kind, ColumnType::Date);
    }

    #[test]
    fn a_commented_header_line_is_the_header() {
        let t =
            table("#featureID,row ID,importance.score\nf1,241,0.067\nf2,695,0.041\nf3,382,0.034\n");
        let names: Vec<&str> = t.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["#featureID", "row ID", "importance.score"]);
        assert_eq!(t.rows, 3);
        // A comment that does not split like the table stays a note.
        let t = table("# exported 2019\na,b,c\n1,2,3\n4,5,6\n");
        assert_eq!(t.preamble, ["# exported 2019"]);
        assert_eq!(t.columns[0].name, "a");
    }

    #[test]
    fn empty_header_cells_are_named_as_pandas_names_them() {
        let t = table(",name,,score\n0,ann,x,1.5\n1,bob,y,2.5\n");
        let names: Vec<&str> = t.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["Unnamed: 0", "name", "Unnamed: 2", "score"]);
    }

    #[test]
    fn utf16_and_latin1_are_transcoded() {
        let text = "name\tcity\nJos\u{e9}\tLi\u{e8}ge\nAnn\tGent\n";
        let mut b = vec![0xFF, 0xFE];
        for u in text.encode_utf16() {
            b.extend_from_slice(&u.to_le_bytes());
        }
        assert_eq!(
            super::super::detect(std::path::Path::new("x.txt"), &b, b.len() as u64),
            Format::Tsv
        );
        let src = Source::from_bytes("x.tsv", b);
        let Content::Table(t) = DelimitedAnalyzer.analyze(&src, Format::Tsv).unwrap() else {
            panic!()
        };
        assert_eq!(t.encoding.as_deref(), Some("UTF-16LE"));
        assert_eq!(t.columns[0].examples, ["Jos\u{e9}", "Ann"]);
        assert_eq!(t.columns[1].examples[0], "Li\u{e8}ge");
        let src = Source::from_bytes("x.csv", b"name,city\nJos\xe9,Li\xe8ge\n".to_vec());
        let Content::Table(t) = DelimitedAnalyzer.analyze(&src, Format::Csv).unwrap() else {
            panic!()
        };
        assert_eq!(t.encoding.as_deref(), Some("Latin-1 (Windows-1252)"));
        assert_eq!(t.columns[0].examples, ["Jos\u{e9}"]);
    }

    #[test]
    fn large_files_are_sampled_within_the_budget_and_full_is_exact() {
        let mut text = String::from("id,day,amount\n");
        for i in 0..200_000u32 {
            text.push_str(&format!("{i},2020-01-{:02},{}.5\n", i % 28 + 1, i % 1000));
        }
        let size = text.len() as u64;
        let src = Source::from_bytes("big.csv", text.into_bytes()).with_budget(Some(256 * 1024));
        let Content::Table(t) = DelimitedAnalyzer.analyze(&src, Format::Csv).unwrap() else {
            panic!()
        };
        assert!(!t.rows_exact);
        assert!(t.sampled_bytes.unwrap() <= 256 * 1024);
        let err = (t.rows as f64 - 200_000.0).abs() / 200_000.0;
        assert!(err < 0.05, "estimated {} rows", t.rows);
        assert!(size > 256 * 1024);
        let Content::Table(full) = DelimitedAnalyzer
            .analyze(&src.with_budget(None), Format::Csv)
            .unwrap()
        else {
            panic!()
        };
        assert!(full.rows_exact);
        assert_eq!(full.rows, 200_000);
        assert_eq!(full.columns[0].max.as_deref(), Some("199999"));
    }

    #[test]
    fn quoted_newlines_are_one_record() {
        let t = table("id,note\n1,\"two\nlines\"\n2,plain\n");
        assert_eq!(t.rows, 2);
    }
}
