//! Delimited text tables: CSV, TSV, semicolon- and pipe-separated.

use super::profile::{value_type, ColumnBuilder, ColumnProfile, ColumnType};
use super::{AnalyzeError, Analyzer, Content, Format, Source};
use serde::{Deserialize, Serialize};

const CANDIDATES: [u8; 4] = [b',', b'\t', b';', b'|'];
/// Lines of the head looked at when sniffing.
const SNIFF_LINES: usize = 50;

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
}

pub(crate) struct DelimitedAnalyzer;

impl Analyzer for DelimitedAnalyzer {
    fn name(&self) -> &'static str {
        "delimited"
    }
    fn version(&self) -> u32 {
        1
    }
    fn analyze(&self, src: &Source, format: Format) -> Result<Content, AnalyzeError> {
        let head = src
            .head()
            .strip_prefix(b"\xEF\xBB\xBF")
            .unwrap_or(src.head());
        let delimiter =
            sniff_delimiter(head).unwrap_or(if format == Format::Tsv { b'\t' } else { b',' });
        profile_table(src, delimiter).map(Content::Table)
    }
}

fn reader_builder(delimiter: u8) -> csv::ReaderBuilder {
    let mut b = csv::ReaderBuilder::new();
    b.delimiter(delimiter).has_headers(false).flexible(true);
    b
}

/// Field counts of the first [`SNIFF_LINES`] records of `head`, for every candidate
/// delimiter at once (`counts[line][candidate]`), honouring double quotes: delimiters and
/// newlines inside quotes do not count. One pass serves every candidate because quoting
/// does not depend on the delimiter.
///
/// Written by hand rather than with the `csv` crate because building a `csv` reader
/// compiles a DFA, and sniffing would build one per candidate per file: that was a
/// quarter of a whole index run's time.
fn field_counts(head: &[u8]) -> Vec<[usize; CANDIDATES.len()]> {
    let mut lines = Vec::new();
    let mut fields = [1usize; CANDIDATES.len()];
    let mut in_quotes = false;
    let mut content = false;
    let complete = match memchr::memrchr(b'\n', head) {
        Some(i) => &head[..=i],
        None => head,
    };
    for &b in complete {
        match b {
            b'"' => {
                in_quotes = !in_quotes;
                content = true;
            }
            _ if in_quotes => content = true,
            b'\n' => {
                if content {
                    lines.push(fields);
                    if lines.len() == SNIFF_LINES {
                        return lines;
                    }
                }
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
        lines.push(fields);
    }
    lines
}

/// The delimiter that splits the head's lines into the same number (≥ 2) of fields most
/// consistently, if any does.
pub(crate) fn sniff_delimiter(head: &[u8]) -> Option<u8> {
    let lines = field_counts(head);
    if lines.len() < 2 && !(lines.len() == 1 && head.len() < 4096) {
        return None;
    }
    let mut best: Option<(u8, f64, usize)> = None;
    for (ci, d) in CANDIDATES.into_iter().enumerate() {
        let mut freq: Vec<(usize, usize)> = Vec::new(); // (field count, lines)
        for l in &lines {
            match freq.iter_mut().find(|(c, _)| *c == l[ci]) {
                Some(f) => f.1 += 1,
                None => freq.push((l[ci], 1)),
            }
        }
        let &(mode, n) = freq
            .iter()
            .max_by_key(|(len, n)| (*n, *len))
            .expect("lines is not empty");
        if mode < 2 {
            continue;
        }
        let consistency = n as f64 / lines.len() as f64;
        if consistency < 0.8 {
            continue;
        }
        let better = match best {
            None => true,
            Some((_, c, m)) => consistency > c || (consistency == c && mode > m),
        };
        if better {
            best = Some((d, consistency, mode));
        }
    }
    best.map(|b| b.0)
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
fn profile_table(src: &Source, delimiter: u8) -> Result<Table, AnalyzeError> {
    let reader = src.reader()?;
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
        assert_eq!(t.columns[0].name, "");
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
    fn quoted_newlines_are_one_record() {
        let t = table("id,note\n1,\"two\nlines\"\n2,plain\n");
        assert_eq!(t.rows, 2);
    }
}
