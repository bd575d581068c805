//! Whitespace-aligned and fixed-width text tables, as scientific and government data
//! publish them: an optional header block of `#` or `key: value` lines, a header line, an
//! optional units line, then rows whose columns line up.
//!
//! Columns are found from the character positions that are blank on every row (so cells
//! may hold spaces, or be empty); when rows do not line up but split into the same
//! number of whitespace-separated tokens, tokens are used instead. Irregular layouts are
//! not tables: detection declines and the file is described as text.

use super::encoding;
use super::profile::{value_type, ColumnBuilder, ColumnType};
use super::{AnalyzeError, Analyzer, Content, Format, Source, Table};
use std::io::BufRead;

/// Table lines looked at when sniffing.
const SNIFF_LINES: usize = 200;

/// How the rows split into cells.
#[derive(Debug, Clone, PartialEq)]
enum Split {
    /// Character ranges (start, end) of each column.
    Positions(Vec<(usize, usize)>),
    /// Runs of whitespace between this many tokens.
    Tokens(usize),
}

/// The layout found in a text.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Layout {
    /// Lines of the header block (comments, `key: value` metadata, blank lines).
    block: usize,
    /// The header line exists.
    header: bool,
    /// A units line follows the header.
    units: bool,
    split: Split,
}

fn is_block_line(l: &str) -> bool {
    let t = l.trim_start();
    t.is_empty()
        || t.starts_with('#')
        || t.starts_with('%')
        || t.starts_with("//")
        || t.starts_with('!')
        || t.starts_with(':')
        || t.split_once(": ")
            .is_some_and(|(k, _)| !k.is_empty() && k.len() <= 40 && !k.contains("  "))
}

fn cells<'a>(line: &'a str, split: &Split) -> Vec<&'a str> {
    match split {
        Split::Tokens(_) => line.split_whitespace().collect(),
        Split::Positions(cols) => cols
            .iter()
            .map(|&(a, b)| {
                let a = a.min(line.len());
                let b = b.min(line.len());
                // Positions are in bytes of ASCII-aligned text; stay on char boundaries.
                let (mut a, mut b) = (a, b);
                while !line.is_char_boundary(a) {
                    a -= 1;
                }
                while !line.is_char_boundary(b) {
                    b += 1;
                }
                line[a..b].trim()
            })
            .collect(),
    }
}

/// Cells of a header or units line. Its words need not sit exactly over the data
/// columns (a header is often wider or shifted), so with positional columns each word
/// goes to the column it overlaps most, or the nearest one.
fn lead_cells(line: &str, split: &Split) -> Vec<String> {
    let Split::Positions(cols) = split else {
        return line.split_whitespace().map(String::from).collect();
    };
    let mut out = vec![String::new(); cols.len()];
    let mut pos = 0;
    for word in line.split_whitespace() {
        let start = line[pos..].find(word).map_or(pos, |i| pos + i);
        let end = start + word.len();
        pos = end;
        let best = cols
            .iter()
            .enumerate()
            .max_by_key(|(_, &(a, b))| {
                let overlap = end.min(b) as i64 - start.max(a) as i64;
                let distance = if overlap > 0 {
                    0
                } else {
                    (start as i64 - b as i64).max(a as i64 - end as i64)
                };
                (overlap.max(0), -distance)
            })
            .map_or(0, |(i, _)| i);
        if !out[best].is_empty() {
            out[best].push(' ');
        }
        out[best].push_str(word);
    }
    out
}

/// Column ranges from positions blank on every line.
fn positions(lines: &[&str]) -> Option<Vec<(usize, usize)>> {
    let width = lines.iter().map(|l| l.len()).max()?;
    if width > 4096 {
        return None;
    }
    let mut used = vec![false; width];
    for l in lines {
        for (i, b) in l.bytes().enumerate() {
            if !b.is_ascii_whitespace() {
                used[i] = true;
            }
        }
    }
    let mut cols = Vec::new();
    let mut start = None;
    for (i, &u) in used.iter().enumerate() {
        match (u, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                cols.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        cols.push((s, width));
    }
    (cols.len() >= 2).then_some(cols)
}

fn numeric(t: ColumnType) -> bool {
    matches!(t, ColumnType::Integer | ColumnType::Float)
}

/// Find a table layout in `text`, or None when it is not a regular table.
pub(crate) fn sniff(text: &str) -> Option<Layout> {
    let all: Vec<&str> = text.lines().take(SNIFF_LINES + 100).collect();
    let block = all.iter().take_while(|l| is_block_line(l)).count();
    let rest: Vec<&str> = all[block..]
        .iter()
        .copied()
        .filter(|l| !l.trim().is_empty())
        .take(SNIFF_LINES)
        .collect();
    if rest.len() < 4 {
        return None;
    }
    // A header line and a units line are text over numeric columns; try 0, 1, 2 of them.
    for lead in 0..=2usize.min(rest.len() - 3) {
        let body = &rest[lead..];
        let n = body[0].split_whitespace().count();
        let tokens_ok = n >= 2 && body.iter().all(|l| l.split_whitespace().count() == n);
        let split = match positions(body) {
            Some(p) if tokens_ok && p.len() == n => Split::Positions(p),
            _ if tokens_ok => Split::Tokens(n),
            Some(p) => {
                // Cells with spaces or empty cells: positions are the only way; require
                // that most rows fill most columns.
                let filled = body
                    .iter()
                    .filter(|l| {
                        let cs = cells(l, &Split::Positions(p.clone()));
                        cs.iter().filter(|c| !c.is_empty()).count() * 2 >= p.len()
                    })
                    .count();
                if filled * 10 < body.len() * 9 {
                    continue;
                }
                Split::Positions(p)
            }
            None => continue,
        };
        let ncols = match &split {
            Split::Positions(p) => p.len(),
            Split::Tokens(n) => *n,
        };
        // The body must have numeric columns, and the lead lines must not look like body.
        let mut types = vec![None::<ColumnType>; ncols];
        let mut consistent = vec![true; ncols];
        for l in body.iter().take(50) {
            for (i, c) in cells(l, &split).iter().enumerate().take(ncols) {
                if c.is_empty() {
                    continue;
                }
                let t = value_type(c);
                let t = if t == ColumnType::Integer {
                    ColumnType::Float
                } else {
                    t
                };
                match types[i] {
                    None => types[i] = Some(t),
                    Some(x) if x == t => {}
                    Some(_) => consistent[i] = false,
                }
            }
        }
        let numeric_cols = (0..ncols)
            .filter(|&i| consistent[i] && types[i].is_some_and(numeric))
            .count();
        if numeric_cols == 0 || ncols > 200 {
            continue;
        }
        let lead_ok = rest[..lead].iter().all(|l| {
            let cs = cells(l, &split);
            (0..ncols).any(|i| {
                consistent[i]
                    && types[i].is_some_and(numeric)
                    && cs
                        .get(i)
                        .is_some_and(|c| !c.is_empty() && !numeric(value_type(c)))
            })
        });
        if !lead_ok {
            continue;
        }
        // A header names most columns; a line that does not is a title: part of the block.
        if lead >= 1 {
            let named = lead_cells(rest[0], &split)
                .iter()
                .filter(|c| !c.is_empty())
                .count();
            if named * 10 < ncols * 7 {
                let title_line = all[block..]
                    .iter()
                    .position(|l| *l == rest[0])
                    .map_or(block, |i| block + i);
                return Some(Layout {
                    block: title_line + 1,
                    header: false,
                    units: false,
                    split,
                });
            }
        }
        return Some(Layout {
            block,
            header: lead >= 1,
            units: lead == 2,
            split,
        });
    }
    None
}

pub(crate) struct FixedWidthAnalyzer;

impl Analyzer for FixedWidthAnalyzer {
    fn name(&self) -> &'static str {
        "fixed-width"
    }
    fn version(&self) -> u32 {
        1
    }
    fn analyze(&self, src: &Source, _format: Format) -> Result<Content, AnalyzeError> {
        let enc = encoding::sniff(src.head());
        let head = encoding::decode_head(src.head(), enc);
        let complete = match memchr::memrchr(b'\n', &head) {
            Some(i) => &head[..=i],
            None => &head[..],
        };
        let layout = sniff(&String::from_utf8_lossy(complete))
            .ok_or_else(|| AnalyzeError::Malformed("no regular column layout found".into()))?;
        // Stream the lines; past the read budget, stop and extrapolate.
        let limit = src.budget().unwrap_or(u64::MAX);
        let mut reader = std::io::BufReader::new(encoding::utf8_reader(src, enc)?);
        let read = std::cell::Cell::new(0u64);
        let mut lines = std::iter::from_fn(|| {
            let mut line = String::new();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => None,
                Ok(n) => {
                    read.set(read.get() + n as u64);
                    Some(line.trim_end_matches(['\n', '\r']).to_string())
                }
            }
        });
        let preamble: Vec<String> = lines
            .by_ref()
            .take(layout.block)
            .map(|l| l.trim().to_string())
            .filter(|l| !l.is_empty())
            .take(3)
            .collect();
        let mut lines = lines.filter(|l| !l.trim().is_empty());
        let mut names: Vec<String> = Vec::new();
        let mut units: Vec<String> = Vec::new();
        if layout.header {
            names = lines
                .next()
                .map(|l| lead_cells(&l, &layout.split))
                .unwrap_or_default();
        }
        if layout.units {
            units = lines
                .next()
                .map(|l| lead_cells(&l, &layout.split))
                .unwrap_or_default();
        }
        let ncols = match &layout.split {
            Split::Positions(p) => p.len(),
            Split::Tokens(n) => *n,
        };
        names.resize(ncols, String::new());
        for (i, n) in names.iter_mut().enumerate() {
            if n.is_empty() {
                *n = format!("column_{}", i + 1);
            }
        }
        let mut cols: Vec<ColumnBuilder> = names.iter().map(ColumnBuilder::new).collect();
        let (mut rows, mut ragged) = (0u64, 0u64);
        let mut cut = false;
        for l in lines.by_ref() {
            let cs = cells(&l, &layout.split);
            rows += 1;
            if cs.len() != ncols {
                ragged += 1;
            }
            for (i, c) in cs.iter().enumerate().take(ncols) {
                cols[i].push(c);
            }
            for c in cols.iter_mut().skip(cs.len()) {
                c.push("");
            }
            if read.get() > limit {
                cut = true;
                break;
            }
        }
        drop(lines);
        let mut columns: Vec<_> = cols.into_iter().map(ColumnBuilder::finish).collect();
        for (c, u) in columns.iter_mut().zip(&units) {
            let u = u.trim_matches(|c| matches!(c, '(' | ')' | '[' | ']'));
            if !u.is_empty() {
                c.unit = Some(u.to_string());
            }
        }
        let mut table = Table {
            delimiter: match layout.split {
                Split::Positions(_) => "fixed-width".into(),
                Split::Tokens(_) => "whitespace".into(),
            },
            header: layout.header,
            rows,
            ragged_rows: ragged,
            columns,
            encoding: encoding::label(enc, src.head()),
            skipped_lines: layout.block as u64,
            preamble,
            footer: Vec::new(),
            notes: Vec::new(),
            rows_exact: true,
            sampled_bytes: None,
            load: None,
        };
        if cut {
            let read = read.get();
            super::delimited::extrapolate(&mut table, src.size() as f64 / read.max(1) as f64, read);
        }
        Ok(Content::Table(table))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STATION: &str = "\
# Station: De Bilt (260)
# Source: KNMI daily data
# Period: 2019-03-01 to 2019-03-05

YYYYMMDD    TG    RH  STATUS
            degC  mm
20190301   6.5   0.0  ok
20190302   8.1   2.3  ok
20190303   7.9  12.0  rain warn
20190304   5.0        missing
20190305   4.4   0.4  ok
";

    #[test]
    fn station_table_with_block_header_and_units() {
        let layout = sniff(STATION).expect("a table");
        assert_eq!(layout.block, 4);
        assert!(layout.header && layout.units);
        assert!(matches!(layout.split, Split::Positions(_)));
        let src = Source::from_bytes("260.txt", STATION.as_bytes().to_vec());
        let Content::Table(t) = FixedWidthAnalyzer
            .analyze(&src, Format::FixedWidth)
            .unwrap()
        else {
            panic!()
        };
        assert_eq!(t.rows, 5);
        let names: Vec<&str> = t.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["YYYYMMDD", "TG", "RH", "STATUS"]);
        assert_eq!(t.columns[1].kind, ColumnType::Float);
        assert_eq!(t.columns[1].unit.as_deref(), Some("degC"));
        assert_eq!(t.columns[2].nulls, 1);
        assert_eq!(t.columns[3].examples, ["ok", "rain warn", "missing"]);
        assert_eq!(t.preamble[0], "# Station: De Bilt (260)");
    }

    #[test]
    fn whitespace_tokens_without_alignment() {
        let text = "x y label\n1 2.5 a\n10 3 bb\n100 4.25 c\n7 1 d\n";
        let l = sniff(text).expect("a table");
        assert!(l.header);
        let src = Source::from_bytes("t.dat", text.as_bytes().to_vec());
        let Content::Table(t) = FixedWidthAnalyzer
            .analyze(&src, Format::FixedWidth)
            .unwrap()
        else {
            panic!()
        };
        assert_eq!(t.rows, 4);
        assert_eq!(t.columns[0].kind, ColumnType::Integer);
    }

    #[test]
    fn a_title_line_is_not_a_header() {
        let text = "Index of abalone\n02 Dec 1996      114 Index\n12 Jun 1996   191873 abalone.data\n12 Jun 1996     4319 abalone.names\n";
        let l = sniff(text).expect("a table");
        assert_eq!((l.block, l.header), (1, false));
        let src = Source::from_bytes("Index", text.as_bytes().to_vec());
        let Content::Table(t) = FixedWidthAnalyzer
            .analyze(&src, Format::FixedWidth)
            .unwrap()
        else {
            panic!()
        };
        assert_eq!(t.rows, 3);
        assert_eq!(t.preamble, ["Index of abalone"]);
    }

    #[test]
    fn prose_is_not_a_table() {
        assert_eq!(sniff("This is a note.\nIt has words in lines.\nNothing lines up here at all.\nThe end of it.\n"), None);
        assert_eq!(sniff("1. Title of Database: Abalone data\n\n2. Sources:\n   (a) Original owners\n   (b) Donor\n"), None);
    }
}
