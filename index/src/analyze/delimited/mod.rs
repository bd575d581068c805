//! Delimited text tables: CSV, TSV, semicolon- and pipe-separated — and the report-style
//! files agencies export from spreadsheets: title lines, notes and `Source:` footers
//! around the table, a grouping row over the header, several tables in one file.
//!
//! `sniff` picks the dialect on the head, `layout` finds where a table starts, `stream`
//! cuts the records into tables and profiles them in one pass, `load` writes the pandas
//! call that reads each table as described.

mod layout;
mod lines;
mod load;
mod sniff;
mod stream;

/// Bytes read from the end of a sampled file to find its footer.
const TAIL_BYTES: u64 = 64 * 1024;

use super::model::{NamedTable, TableSet};
use super::profile::ColumnProfile;
use super::{encoding, AnalyzeError, Analyzer, Content, Format, Source};
use serde::{Deserialize, Serialize};
use sniff::Dialect;
use std::io::Read;
use stream::{Splitter, TableOut};

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
    /// Lines below the table (`Source: …`, notes), the first few.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub footer: Vec<String>,
    /// Facts about the layout ("header rows 3–4: a grouping row merged into the names").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
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
    /// The first rows as read (see [`crate::analyze::Keep`]), for a preview; not stored.
    #[serde(skip)]
    pub sample_rows: Vec<Vec<String>>,
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
        // 6: a lone line of prose is text, not a header without rows (detect).
        // 7: the load line parses date columns (`parse_dates`, `date_format`).
        // 8: regions: summary rows and key/value blocks below a table are notes, a
        // header under typed columns starts a stacked table, headerless lists, header
        // rows with a label over an empty cell.
        // 9: time in other forms (`200001`, `2001-032`, `1987.042`, `2019r`, year + day
        // of year) read as time (the time-forms reading rule).
        // 10: missing markers, durations and labelling integers (profile values).
        // 11: quarters (`2001Q1`, `Q1 2001`, a year beside `Q1`..`Q4`) and date-times
        // with a time scale (`2014.03.23_20:24:00_TAI`) read as time; footnoted numbers
        // grouped with spaces or dots (`1 234 p`, `1.234,5 r`) stay numbers.
        //     legacy encodings other than Windows-1252 told apart (chardetng).
        // 12: stacked tables cover the span of all their time axes.
        12
    }
    fn analyze(&self, src: &Source, format: Format) -> Result<Content, AnalyzeError> {
        let enc = encoding::sniff(src.head());
        let head = encoding::decode_head(src.head(), enc);
        let dialect = sniff::sniff(&head, head.len() < 4096).unwrap_or(Dialect {
            delimiter: if format == Format::Tsv { b'\t' } else { b',' },
            quoting: true,
        });
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
        // Tables end and start only in the sample's head: the pieces after it have no
        // known line numbers.
        let split_until = sample.as_ref().map_or(u64::MAX, |s| s.head_len as u64);
        let (mut tables, orphans) = split(
            encoding::transcode(inner, enc)?,
            dialect,
            split_until,
            src.keep(),
            src.applied(),
        )?;
        let read = match &sample {
            Some(s) => Some(s.bytes.len() as u64),
            None => src.budget().filter(|b| src.size() > *b),
        };
        let mut exact = vec![true; tables.len()];
        if let (Some(read), Some(last)) = (read, tables.last_mut()) {
            // Only the last table runs into the part of the file that was not read.
            let before = last.body_byte.min(read);
            let ratio = src.size().saturating_sub(before) as f64
                / read.saturating_sub(before).max(1) as f64;
            scale(last, ratio);
            if let Some(e) = exact.last_mut() {
                *e = false;
            }
        }
        if let Some(last) = tables.last_mut() {
            for o in orphans {
                if last.footer.len() < 3 {
                    last.footer.push(o);
                }
            }
        }
        // The end of a sampled file was not read: a footer there is found from its tail,
        // for the load call to drop it.
        if let (Some(_), Some(last)) = (&sample, tables.last_mut()) {
            let (lines, footer) = footer_in_tail(&tail(src, TAIL_BYTES)?, dialect, last.sparse);
            last.skip_footer = lines;
            if last.footer.is_empty() {
                last.footer = footer;
            }
        }
        let file = File {
            dialect,
            encoding: encoding::label(enc, src.head()),
            py_encoding: crate::analyze::encoding::python_name(enc, src.head()),
            sampled: read,
        };
        if tables.len() <= 1 {
            let t = tables.pop();
            return Ok(Content::Table(
                file.table(t, exact.first().copied().unwrap_or(true)),
            ));
        }
        let mut notes = vec![format!("{}-separated", delimiter_name(dialect.delimiter))];
        if let Some(e) = &file.encoding {
            notes.push(format!("encoding {e}"));
        }
        if let Some(b) = read {
            notes.push(format!(
                "profiled from a {} sample: the last table's counts are estimates",
                super::human_size(b)
            ));
        }
        let tables = tables
            .into_iter()
            .zip(exact)
            .enumerate()
            .map(|(i, (t, exact))| file.named(t, i + 1, exact))
            .collect();
        Ok(Content::Tables(TableSet { tables, notes }))
    }
}

/// The last `n` bytes of the file.
fn tail(src: &Source, n: u64) -> std::io::Result<Vec<u8>> {
    if let Some(b) = src.bytes() {
        return Ok(b[b.len().saturating_sub(n as usize)..].to_vec());
    }
    use std::io::{Seek, SeekFrom};
    let mut f = src.seekable()?;
    f.seek(SeekFrom::Start(src.size().saturating_sub(n)))?;
    let mut buf = Vec::new();
    f.take(n).read_to_end(&mut buf)?;
    Ok(buf)
}

/// The footer at the end of `tail` (its first, partial line dropped): the physical lines
/// after the last row that is not a note — what pandas' `skipfooter` counts — and the
/// notes' text. `sparse`: the table has rows of one value, so no lone value is a note.
fn footer_in_tail(tail: &[u8], dialect: Dialect, sparse: bool) -> (u64, Vec<String>) {
    let Some(nl) = memchr::memchr(b'\n', tail) else {
        return (0, Vec::new());
    };
    let text = &tail[nl + 1..];
    let recs = sniff::records(text, dialect.delimiter, dialect.quoting, usize::MAX);
    let note = |r: &sniff::HeadRec| match r.filled() {
        0 => true,
        1 => {
            !sparse
                && r.fields.iter().skip(1).all(|f| f.trim().is_empty())
                && sniff::class(&r.fields[0]) == Some(sniff::Cls::Text)
        }
        _ => false,
    };
    let run = recs.iter().rev().take_while(|r| note(r)).count();
    if run == 0 || run == recs.len() {
        return (0, Vec::new());
    }
    let first = &recs[recs.len() - run];
    let mut lines = memchr::memchr_iter(b'\n', text).count() as u64;
    if !text.ends_with(b"\n") {
        lines += 1;
    }
    let notes = recs[recs.len() - run..]
        .iter()
        .filter(|r| r.filled() > 0)
        .take(3)
        .map(|r| {
            r.fields
                .iter()
                .map(|f| f.trim())
                .filter(|f| !f.is_empty())
                .collect::<Vec<_>>()
                .join(", ")
        })
        .collect();
    ((lines + 1).saturating_sub(first.line), notes)
}

/// Read every record and cut the stream into tables.
fn split(
    reader: impl Read,
    dialect: Dialect,
    split_until: u64,
    keep: crate::analyze::Keep,
    applied: &crate::analyze::rules::Applied,
) -> Result<(Vec<TableOut>, Vec<String>), AnalyzeError> {
    let (reader, lines) = lines::Counting::new(reader);
    let mut rdr = csv::ReaderBuilder::new()
        .delimiter(dialect.delimiter)
        .quoting(dialect.quoting)
        .has_headers(false)
        .flexible(true)
        .from_reader(reader);
    let mut splitter = Splitter::new(split_until, keep, applied);
    let mut record = csv::ByteRecord::new();
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
            continue; // blank line: pandas skips it too
        }
        let byte = lines.past_breaks(record.position().map_or(0, |p| p.byte()));
        let line = lines.line_at(byte);
        let end_line = lines
            .line_at(rdr.position().byte().saturating_sub(1))
            .max(line);
        splitter.push(&record, line, end_line, byte);
    }
    Ok(splitter.finish())
}

/// Scale counts taken from part of a file by `ratio`: row and null counts become
/// estimates, distinct counts floors. Returns the scaled `(rows, ragged)`.
fn scale_counts(rows: u64, ragged: u64, columns: &mut [ColumnProfile], ratio: f64) -> (u64, u64) {
    let s = |n: u64| (n as f64 * ratio).round() as u64;
    for c in columns {
        c.nulls = s(c.nulls);
        c.distinct_exact = false;
        c.estimated = true;
    }
    (s(rows), s(ragged))
}

/// Scale a table profiled from part of the file by `ratio`.
fn scale(t: &mut TableOut, ratio: f64) {
    (t.rows, t.ragged) = scale_counts(t.rows, t.ragged, &mut t.columns, ratio);
}

/// Scale a table profiled from `read` bytes of a larger file to the whole file, by the
/// byte ratio.
pub(crate) fn extrapolate(t: &mut Table, ratio: f64, read: u64) {
    (t.rows, t.ragged_rows) = scale_counts(t.rows, t.ragged_rows, &mut t.columns, ratio);
    t.rows_exact = false;
    t.sampled_bytes = Some(read);
}

/// The delimiter of a delimited head, if it is one (used by format detection).
pub(crate) fn sniff_delimiter(head: &[u8]) -> Option<u8> {
    let d = sniff::sniff(head, head.len() < 4096)?.delimiter;
    // A file of one line splits into "a header without rows" on any comma or
    // semicolon; when a field of it is a run of words, it is a sentence (a one-line
    // README), not a header.
    let mut lines = head
        .split(|&b| b == b'\n')
        .filter(|l| !l.trim_ascii().is_empty());
    if let (Some(only), None) = (lines.next(), lines.next()) {
        let text = String::from_utf8_lossy(only);
        if text
            .split(char::from(d))
            .any(|f| f.split_whitespace().count() >= PROSE_WORDS)
        {
            return None;
        }
    }
    Some(d)
}

/// Words in one field from which a lone line reads as a sentence: header cells are
/// names (`median household income`), not clauses.
const PROSE_WORDS: usize = 6;

fn delimiter_name(d: u8) -> &'static str {
    match d {
        b'\t' => "tab",
        b',' => "comma",
        b';' => "semicolon",
        _ => "pipe",
    }
}

/// What every table of one file shares.
struct File {
    dialect: Dialect,
    encoding: Option<String>,
    py_encoding: Option<&'static str>,
    /// Bytes read, when the file was sampled.
    sampled: Option<u64>,
}

impl File {
    /// The pandas call for `t`.
    fn load(&self, t: &TableOut, exact: bool) -> String {
        // Names are passed when pandas would not read them as described: no header, a
        // grouping row merged in, or rows wider than the header.
        let explicit_names = !t.header || t.groups > 0 || t.max_fields > t.width;
        let skip_lines = if explicit_names {
            if t.rows > 0 {
                t.body_line.saturating_sub(1)
            } else {
                t.last_line
            }
        } else {
            t.header_line.unwrap_or(1).saturating_sub(1)
        };
        load::call(&load::Load {
            delimiter: self.dialect.delimiter,
            quoting: self.dialect.quoting,
            encoding: self.py_encoding,
            skip_lines,
            explicit_names,
            nrows: (t.followed && exact).then_some(t.rows),
            skip_footer: t.skip_footer,
            skip_initial_space: t.skip_initial_space,
            columns: &t.columns,
        })
    }

    /// Layout facts worth a line.
    fn notes(t: &TableOut) -> Vec<String> {
        let mut notes = Vec::new();
        if t.groups > 0 {
            if let Some(h) = t.header_line {
                notes.push(format!(
                    "header rows {}–{h}: the grouping row above the header is merged into the names",
                    t.start_line
                ));
            }
        }
        notes.extend(t.decisions.iter().cloned());
        notes
    }

    fn table(&self, t: Option<TableOut>, exact: bool) -> Table {
        let Some(t) = t else {
            return Table {
                delimiter: (self.dialect.delimiter as char).to_string(),
                header: false,
                rows: 0,
                ragged_rows: 0,
                columns: Vec::new(),
                encoding: self.encoding.clone(),
                skipped_lines: 0,
                preamble: Vec::new(),
                footer: Vec::new(),
                notes: Vec::new(),
                rows_exact: true,
                sampled_bytes: None,
                load: None,
                sample_rows: Vec::new(),
            };
        };
        let load = self.load(&t, exact);
        Table {
            delimiter: (self.dialect.delimiter as char).to_string(),
            header: t.header,
            rows: t.rows,
            ragged_rows: t.ragged,
            encoding: self.encoding.clone(),
            skipped_lines: t.start_line.saturating_sub(1),
            notes: Self::notes(&t),
            preamble: t.preamble,
            footer: t.footer,
            rows_exact: exact,
            sampled_bytes: if exact { None } else { self.sampled },
            load: Some(load),
            columns: t.columns,
            sample_rows: t.samples,
        }
    }

    fn named(&self, t: TableOut, number: usize, exact: bool) -> NamedTable {
        let load = self.load(&t, exact);
        let mut notes = Self::notes(&t);
        let title = t.title.clone();
        for p in &t.preamble {
            if Some(p) != title.as_ref() {
                notes.push(format!("above: {p}"));
            }
        }
        for f in &t.footer {
            notes.push(format!("below: {f}"));
        }
        if t.ragged > 0 {
            notes.push(format!(
                "{} rows have a different number of fields than the header",
                t.ragged
            ));
        }
        NamedTable {
            name: title.unwrap_or_else(|| format!("table {number}")),
            kind: "table".into(),
            rows: t.rows,
            rows_exact: exact,
            sampled: !exact,
            header_row: t.header_line,
            range: Some(format!("lines {}–{}", t.start_line, t.last_line)),
            sample_rows: t.samples,
            notes,
            load: Some(load),
            columns: t.columns,
        }
    }
}

#[cfg(test)]
mod tests;
