//! The dialect of a delimited head: which delimiter and whether double quotes quote,
//! chosen by how consistent the field counts and the column types come out under each
//! candidate (the idea of CleverCSV's pattern × type score), not by counting characters.
//!
//! A tab file whose numbers hold commas (`1999\t12,345\t1,234,567`) splits on commas into
//! a consistent number of fields too; what gives the comma away is the cells it leaves:
//! text glued across tabs (`1999\t12`) instead of numbers.

use super::super::profile::{value_type, ColumnType};

/// Candidate delimiters, in order of preference on a tie.
pub(super) const CANDIDATES: [u8; 4] = [b',', b'\t', b';', b'|'];
/// Records of the head looked at when sniffing.
pub(super) const SNIFF_LINES: usize = 50;
/// Share of records (from the table's first) that must split alike for a delimiter to
/// count at all.
const MIN_CONSISTENCY: f64 = 0.8;
/// A plain text cell is worth this much of a typed one (number, date, boolean): a split
/// that makes numbers out of text is the more likely one.
const TEXT_CELL: f64 = 0.5;
/// Share of a column's values that must have one class for the column to be typed.
pub(super) const PURITY: f64 = 0.8;
/// Reading with quotes ignored must score this many times better than with quotes
/// honoured to be chosen (stray inch marks, `5'11"`).
const QUOTES_OFF_MARGIN: f64 = 1.5;

/// How a delimited file is split.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Dialect {
    pub delimiter: u8,
    /// Whether double quotes quote fields (`"a,b"`); false reads them as text.
    pub quoting: bool,
}

/// The class of a cell for consistency checks: what a column of such cells would be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Cls {
    Num,
    Date,
    Bool,
    Text,
}

/// The class of a cell, `None` when it is empty or a null marker.
pub(super) fn class(v: &str) -> Option<Cls> {
    let v = v.trim();
    if super::super::profile::is_null(v) {
        return None;
    }
    Some(match value_type(v) {
        ColumnType::Integer | ColumnType::Float => Cls::Num,
        ColumnType::Date | ColumnType::Datetime => Cls::Date,
        ColumnType::Boolean => Cls::Bool,
        _ => Cls::Text,
    })
}

/// A year as column headers write them (`2019`): a number that can head a numeric column.
pub(super) fn year_like(v: &str) -> bool {
    let v = v.trim();
    v.len() == 4
        && v.bytes().all(|b| b.is_ascii_digit())
        && (1800..=2100).contains(&v.parse::<u32>().unwrap_or(0))
}

/// One record of the head, split under one dialect.
#[derive(Debug, Clone)]
pub(super) struct HeadRec {
    pub fields: Vec<String>,
    /// 1-based physical line where the record starts.
    pub line: u64,
    /// Starts with a comment marker (`#`, `%`, `//`).
    pub comment: bool,
}

impl HeadRec {
    /// Non-empty cells.
    pub fn filled(&self) -> usize {
        self.fields.iter().filter(|f| !f.trim().is_empty()).count()
    }
}

/// The first `max` records of `head` split on `d`, whitespace-only lines left out (as the
/// streaming reader and pandas leave them out). Quotes follow the `csv` crate: a quote
/// opening a field quotes it, `""` inside is one quote.
///
/// Written by hand rather than with the `csv` crate because building a `csv` reader
/// compiles a DFA, and sniffing would build one per candidate per file: a quarter of a
/// whole index run's time.
pub(super) fn records(head: &[u8], d: u8, quoting: bool, max: usize) -> Vec<HeadRec> {
    let complete = match memchr::memrchr(b'\n', head) {
        Some(i) => &head[..=i],
        None => head,
    };
    let mut out = Vec::new();
    let mut fields: Vec<String> = Vec::new();
    let mut field: Vec<u8> = Vec::new();
    let mut in_quotes = false;
    let mut at_start = true;
    let mut line = 1u64;
    let mut start_line = 1u64;
    let finish = |fields: &mut Vec<String>, field: &mut Vec<u8>| {
        fields.push(String::from_utf8_lossy(field).into_owned());
        field.clear();
    };
    let mut i = 0;
    while i < complete.len() {
        let b = complete[i];
        i += 1;
        if in_quotes {
            if b == b'"' {
                if complete.get(i) == Some(&b'"') {
                    field.push(b'"');
                    i += 1;
                } else {
                    in_quotes = false;
                }
            } else {
                if b == b'\n' {
                    line += 1;
                }
                field.push(b);
            }
            continue;
        }
        match b {
            b'"' if quoting && at_start => {
                in_quotes = true;
                at_start = false;
            }
            b'\r' => {}
            b'\n' => {
                finish(&mut fields, &mut field);
                let blank = fields.len() == 1 && fields[0].trim().is_empty();
                if !blank {
                    let first = fields[0].trim_start();
                    out.push(HeadRec {
                        comment: first.starts_with('#')
                            || first.starts_with('%')
                            || first.starts_with("//"),
                        fields: std::mem::take(&mut fields),
                        line: start_line,
                    });
                    if out.len() == max {
                        return out;
                    }
                }
                fields.clear();
                line += 1;
                start_line = line;
                at_start = true;
            }
            _ if b == d => {
                finish(&mut fields, &mut field);
                at_start = true;
            }
            _ => {
                field.push(b);
                at_start = false;
            }
        }
    }
    if !field.is_empty() || !fields.is_empty() {
        finish(&mut fields, &mut field);
        if !(fields.len() == 1 && fields[0].trim().is_empty()) {
            let first = fields[0].trim_start();
            out.push(HeadRec {
                comment: first.starts_with('#')
                    || first.starts_with('%')
                    || first.starts_with("//"),
                fields,
                line: start_line,
            });
        }
    }
    out
}

/// The dialect whose split of `head` scores best, if any splits it into ≥ 2 fields
/// consistently. `small`: the head is the whole (short) file, so one record may do.
pub(super) fn sniff(head: &[u8], small: bool) -> Option<Dialect> {
    let quotes = memchr::memchr(b'"', head).is_some();
    let mut best: Option<(Dialect, f64, usize)> = None;
    for delimiter in CANDIDATES {
        for quoting in [true, false] {
            if !quoting && !quotes {
                continue;
            }
            let recs = records(head, delimiter, quoting, SNIFF_LINES);
            let Some((mut q, mode)) = score(&recs, delimiter, small) else {
                continue;
            };
            if !quoting {
                q /= QUOTES_OFF_MARGIN;
            }
            let better = match &best {
                None => true,
                Some((_, bq, bm)) => q > *bq + 1e-9 || ((q - *bq).abs() <= 1e-9 && mode > *bm),
            };
            if better {
                best = Some((Dialect { delimiter, quoting }, q, mode));
            }
        }
    }
    best.map(|b| b.0)
}

/// How well `d` splits `recs`: field-count consistency (from the first record that has
/// the modal count, so that a preamble does not hide the table) × the share of cells
/// that read as values × how pure each column's type is. `None` when `d` does not split
/// the head into a table. Also returns the modal field count, for ties.
fn score(recs: &[HeadRec], d: u8, small: bool) -> Option<(f64, usize)> {
    let rows: Vec<&HeadRec> = recs.iter().filter(|r| !r.comment).collect();
    if rows.len() < 2 && !(rows.len() == 1 && small) {
        return None;
    }
    let mut freq: Vec<(usize, usize)> = Vec::new();
    for r in &rows {
        match freq.iter_mut().find(|(c, _)| *c == r.fields.len()) {
            Some(f) => f.1 += 1,
            None => freq.push((r.fields.len(), 1)),
        }
    }
    let &(mode, _) = freq.iter().max_by_key(|(len, n)| (*n, *len))?;
    if mode < 2 {
        return None;
    }
    let first = rows
        .iter()
        .position(|r| r.fields.len() == mode && r.filled() >= 2)
        .or_else(|| rows.iter().position(|r| r.fields.len() == mode))?;
    let rest = &rows[first..];
    if first > rows.len() / 2 || (rest.len() < 2 && !small) {
        return None;
    }
    let global = rest.iter().filter(|r| r.fields.len() == mode).count() as f64 / rest.len() as f64;
    // Several tables of different widths split consistently within each.
    let local = if rest.len() > 1 {
        rest.windows(2)
            .filter(|w| w[0].fields.len() == w[1].fields.len())
            .count() as f64
            / (rest.len() - 1) as f64
    } else {
        1.0
    };
    let consistency = global.max(local);
    if consistency < MIN_CONSISTENCY {
        return None;
    }
    let mut cells = 0usize;
    let mut worth = 0.0;
    let mut columns: Vec<[usize; 4]> = vec![[0; 4]; mode];
    // The first row may be the header: types are read below it, alike for every
    // candidate.
    let body = if rest.len() > 1 { &rest[1..] } else { rest };
    for r in body.iter().filter(|r| r.filled() >= 2) {
        for (i, f) in r.fields.iter().enumerate() {
            let Some(c) = class(f) else { continue };
            cells += 1;
            // A cell holding a tab is a wrong split on its own: tabs are not written
            // inside values.
            worth += if d != b'\t' && f.contains('\t') {
                0.0
            } else if c == Cls::Text {
                TEXT_CELL
            } else {
                1.0
            };
            if let Some(col) = columns.get_mut(i) {
                col[c as usize] += 1;
            }
        }
    }
    let types = if cells == 0 {
        TEXT_CELL
    } else {
        worth / cells as f64
    };
    let purities: Vec<f64> = columns
        .iter()
        .filter_map(|c| {
            let n: usize = c.iter().sum();
            (n > 0).then(|| *c.iter().max().unwrap_or(&0) as f64 / n as f64)
        })
        .collect();
    let purity = if purities.is_empty() {
        1.0
    } else {
        purities.iter().sum::<f64>() / purities.len() as f64
    };
    Some((consistency * types * purity, mode))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn delim(text: &str) -> Option<u8> {
        sniff(text.as_bytes(), true).map(|d| d.delimiter)
    }

    #[test]
    fn a_tab_file_with_thousands_separators_is_read_on_tabs() {
        let t = super::super::tests::tab_thousands();
        assert_eq!(delim(&t), Some(b'\t'));
    }

    #[test]
    fn plain_dialects() {
        assert_eq!(delim("a,b,c\n1,2,3\n4,5,6\n"), Some(b','));
        assert_eq!(delim("a;b;c\n1;2,5;3\n4;5,5;6\n"), Some(b';'));
        assert_eq!(delim("a|b\n1|2\n3|4\n"), Some(b'|'));
        assert_eq!(delim("just some prose\nwith lines\n"), None);
    }

    #[test]
    fn stray_quotes_are_read_as_text_when_that_splits_consistently() {
        // One stray quote opens a field that never closes: honouring it would swallow
        // the rest of the file.
        let mut t = String::from("item,note,qty\nbolt,\"big,3\n");
        for i in 0..20 {
            t.push_str(&format!("part {i},small,{}\n", 150 + i));
        }
        let d = sniff(t.as_bytes(), true).unwrap();
        assert_eq!((d.delimiter, d.quoting), (b',', false));
        let d = sniff(b"a,b\n\"x, y\",1\n\"z\",2\n", true).unwrap();
        assert!(d.quoting);
    }

    #[test]
    fn records_honour_quotes_and_count_lines() {
        let r = records(b"a,b\n\"x\ny\",\"q\"\"q\"\n\n  \nc,d\n", b',', true, 10);
        assert_eq!(r.len(), 3);
        assert_eq!(r[1].fields, ["x\ny", "q\"q"]);
        assert_eq!((r[0].line, r[1].line, r[2].line), (1, 2, 6));
    }
}
