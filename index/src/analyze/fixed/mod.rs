//! Whitespace-aligned and fixed-width text tables, as scientific and government data
//! publish them: an optional header block of `#` or `key: value` lines, a header line, an
//! optional units line, then rows whose columns line up.
//!
//! Columns are found from the character positions that are blank on every row (so cells
//! may hold spaces, or be empty); when rows do not line up but split into the same
//! number of whitespace-separated tokens, tokens are used instead. Irregular layouts are
//! not tables: detection declines and the file is described as text. The sniffed extents
//! are then widened over every row read, so that fields that widen later stay whole.

mod layout;

/// Rows looked at to tell whether adjacent columns hold one date written in words.
const DATE_SAMPLE_ROWS: usize = 200;

use super::encoding;
use super::profile::ColumnBuilder;
use super::{AnalyzeError, Analyzer, Content, Format, Source, Table};
use encoding_rs::Encoding;
use layout::{cells, lead_cells, widen, word_spans, Split};
pub(crate) use layout::{chars_slice, sniff};
use std::io::BufRead;

pub(crate) struct FixedWidthAnalyzer;

impl Analyzer for FixedWidthAnalyzer {
    fn name(&self) -> &'static str {
        "fixed-width"
    }
    fn version(&self) -> u32 {
        // 4: time in other forms read as time (the time-forms reading rule).
        // 5: missing markers, durations and labelling integers (profile values).
        // 6: quarters (`2001Q1`, `Q1 2001`, a year beside `Q1`..`Q4`) and date-times
        // with a time scale (`2014.03.23_20:24:00_TAI`) read as time; footnoted numbers
        // grouped with spaces or dots (`1 234 p`, `1.234,5 r`) stay numbers.
        //    legacy encodings other than Windows-1252 told apart (chardetng).
        // 7: time in other forms loads as datetimes (`parse_dates`, `date_format`).
        7
    }
    fn analyze(&self, src: &Source, _format: Format) -> Result<Content, AnalyzeError> {
        let enc = encoding::sniff(src.head());
        let head = encoding::decode_head(src.head(), enc);
        let complete = match memchr::memrchr(b'\n', &head) {
            Some(i) => &head[..=i],
            None => &head[..],
        };
        let mut layout = sniff(&String::from_utf8_lossy(complete))
            .ok_or_else(|| AnalyzeError::Malformed("no regular column layout found".into()))?;
        // First pass: the column extents from every row within the budget.
        if let Split::Positions(sniffed) = &layout.split {
            let mut cols = sniffed.clone();
            let mut lines = Lines::open(src, enc)?;
            for _ in 0..layout.block {
                lines.next();
            }
            let header = match layout.header {
                true => lines
                    .next_filled()
                    .map_or_else(Vec::new, |l| word_spans(&l)),
                false => Vec::new(),
            };
            if layout.units {
                lines.next_filled();
            }
            let mut sample: Vec<String> = Vec::new();
            while let Some(l) = lines.next_filled() {
                widen(&mut cols, &header, &l);
                if sample.len() < DATE_SAMPLE_ROWS {
                    sample.push(l);
                }
                if lines.over_budget() {
                    break;
                }
            }
            merge_written_dates(&mut cols, &header, &sample);
            layout.split = Split::Positions(cols);
        }
        profile(src, enc, &layout).map(Content::Table)
    }
}

/// The headerless table of `src` read at the character positions `spans` (start, end;
/// counted from 0) below its first `block` lines: what a field list that fits the file
/// gives, where fields are written without a blank between them.
pub(crate) fn table_at(
    src: &Source,
    block: usize,
    spans: &[(usize, usize)],
) -> Result<Table, AnalyzeError> {
    let enc = encoding::sniff(src.head());
    let layout = layout::Layout {
        block,
        header: false,
        units: false,
        split: Split::Positions(spans.to_vec()),
    };
    profile(src, enc, &layout)
}

/// The second pass: the table's profile under `layout`.
fn profile(
    src: &Source,
    enc: &'static Encoding,
    layout: &layout::Layout,
) -> Result<Table, AnalyzeError> {
    {
        let mut lines = Lines::open(src, enc)?;
        // Every block line is read (and counted) before the first three are kept.
        let block: Vec<String> = lines.by_ref().take(layout.block).collect();
        let preamble: Vec<String> = block
            .iter()
            .map(|l| l.trim().to_string())
            .filter(|l| !l.is_empty())
            .take(3)
            .collect();
        let mut names: Vec<String> = Vec::new();
        let mut units: Vec<String> = Vec::new();
        if layout.header {
            names = lines
                .next_filled()
                .map(|l| lead_cells(&l, &layout.split))
                .unwrap_or_default();
        }
        if layout.units {
            units = lines
                .next_filled()
                .map(|l| lead_cells(&l, &layout.split))
                .unwrap_or_default();
        }
        let skiprows = lines.count;
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
        unique_names(&mut names);
        let mut cols: Vec<ColumnBuilder> = names.iter().map(ColumnBuilder::new).collect();
        let (mut rows, mut ragged, mut wider) = (0u64, 0u64, false);
        let mut cut = false;
        let keep = src.keep();
        let mut sample_rows: Vec<Vec<String>> = Vec::new();
        while let Some(l) = lines.next_filled() {
            let cs = cells(&l, &layout.split);
            rows += 1;
            if sample_rows.len() < keep.rows {
                sample_rows.push(cs.iter().map(|c| keep.cell(c)).collect());
            }
            if cs.len() != ncols {
                ragged += 1;
                wider |= cs.len() > ncols;
            }
            for (i, c) in cs.iter().enumerate().take(ncols) {
                cols[i].push(c);
            }
            for c in cols.iter_mut().skip(cs.len()) {
                c.push("");
            }
            if lines.over_budget() {
                cut = true;
                break;
            }
        }
        let read = lines.read;
        let mut columns: Vec<_> = cols.into_iter().map(ColumnBuilder::finish).collect();
        for (c, u) in columns.iter_mut().zip(&units) {
            let u = u.trim_matches(|c| matches!(c, '(' | ')' | '[' | ']'));
            if !u.is_empty() {
                c.unit = Some(u.to_string());
            }
        }
        // Rows with more tokens than columns make pandas fail: no load line for them.
        let load = (!wider).then(|| load_call(&layout.split, skiprows, &names, enc, src.head()));
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
            load,
            sample_rows,
        };
        if cut {
            super::delimited::extrapolate(&mut table, src.size() as f64 / read.max(1) as f64, read);
        }
        Ok(table)
    }
}

/// The lines of a source as UTF-8, counted, stopping past the read budget.
struct Lines<'a> {
    reader: std::io::BufReader<Box<dyn std::io::Read + Send + 'a>>,
    /// Lines returned so far.
    count: u64,
    /// Bytes read so far.
    read: u64,
    limit: u64,
}

impl<'a> Lines<'a> {
    fn open(src: &'a Source, enc: &'static Encoding) -> Result<Lines<'a>, AnalyzeError> {
        Ok(Lines {
            reader: std::io::BufReader::new(encoding::utf8_reader(src, enc)?),
            count: 0,
            read: 0,
            limit: src.budget().unwrap_or(u64::MAX),
        })
    }

    fn over_budget(&self) -> bool {
        self.read > self.limit
    }

    /// The next line that is not blank (pandas skips blank lines too).
    fn next_filled(&mut self) -> Option<String> {
        self.by_ref().find(|l| !l.trim().is_empty())
    }
}

impl Iterator for Lines<'_> {
    type Item = String;
    fn next(&mut self) -> Option<String> {
        let mut line = String::new();
        match self.reader.read_line(&mut line) {
            Ok(0) | Err(_) => None,
            Ok(n) => {
                self.read += n as u64;
                self.count += 1;
                line.truncate(line.trim_end_matches(['\n', '\r']).len());
                Some(line)
            }
        }
    }
}

/// Joins three adjacent columns that together hold a date in words on (nearly) every
/// row (`02 Dec 1996`, `Jun 4, 2021`, `2021 Jun 04`): aligned listings put spaces inside
/// their dates. Not when the header names more than one of the three (then they are
/// separate fields by the file's own account).
fn merge_written_dates(cols: &mut Vec<(usize, usize)>, header: &[(usize, usize)], rows: &[String]) {
    let mut i = 0;
    while i + 2 < cols.len() && !rows.is_empty() {
        let span = (cols[i].0, cols[i + 2].1);
        let named = cols[i..i + 3]
            .iter()
            .filter(|&&(a, b)| header.iter().any(|&(s, e)| s < b && a < e))
            .count();
        let dated = rows
            .iter()
            .filter(|l| {
                let c = cells(l, &Split::Positions(cols[i..i + 3].to_vec()));
                c.iter()
                    .all(|x| !x.is_empty() && super::dates::parse(x).is_none())
                    && super::dates::parse(&c.join(" ")).is_some_and(|p| !p.time)
            })
            .count();
        if named <= 1 && dated * 10 >= rows.len() * 9 {
            cols.splice(i..i + 3, [span]);
        }
        i += 1;
    }
}

/// Repeated names made unique as pandas does (`x`, `x.1`, `x.2`): pandas refuses
/// repeated names, and the load line must yield the names described.
fn unique_names(names: &mut [String]) {
    let mut seen: std::collections::HashSet<String> = std::collections::HashSet::new();
    for n in names.iter_mut() {
        if !seen.insert(n.clone()) {
            let base = n.clone();
            *n = (1..)
                .map(|i| format!("{base}.{i}"))
                .find(|c| !seen.contains(c))
                .unwrap_or(base);
            seen.insert(n.clone());
        }
    }
}

/// A Python string literal (a JSON string is one).
fn py_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("{s:?}"))
}

/// The pandas call that reads the table as described: `read_fwf` with the column extents
/// for aligned columns, `read_csv` on whitespace runs otherwise; the lines before the
/// first row skipped, the names given (blank lines are skipped by pandas as here).
fn load_call(
    split: &Split,
    skiprows: u64,
    names: &[String],
    enc: &'static Encoding,
    head: &[u8],
) -> String {
    let names = names
        .iter()
        .map(|n| py_str(n))
        .collect::<Vec<_>>()
        .join(", ");
    let encoding = crate::analyze::encoding::python_name(enc, head)
        .map(|e| format!(", encoding={}", py_str(e)))
        .unwrap_or_default();
    match split {
        Split::Positions(cols) => {
            let specs = cols
                .iter()
                .map(|(a, b)| format!("({a}, {b})"))
                .collect::<Vec<_>>()
                .join(", ");
            format!(
                "pd.read_fwf(path, colspecs=[{specs}], skiprows={skiprows}, header=None, \
                 names=[{names}]{encoding})"
            )
        }
        // quoting=3 (csv.QUOTE_NONE): quotes are characters of the cells, as here.
        Split::Tokens(_) => format!(
            "pd.read_csv(path, sep=r\"\\s+\", skiprows={skiprows}, header=None, \
             names=[{names}], quoting=3{encoding})"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::super::profile::ColumnType;
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

    /// An hourly table whose day of year is right-aligned: `   1` for the first nine
    /// days (216 rows, past the sniffed lines), ` 365` at the end.
    fn hourly() -> String {
        let mut t = String::from("# Hourly readings\n# Station: generated\n\n");
        t.push_str("YEAR  DOY  HR   VALUE  FLAG\n");
        for doy in 1..=365 {
            for hr in 0..24 {
                let flag = if (doy + hr) % 50 == 0 { "est" } else { "" };
                let v = (doy * 24 + hr) as f64 / 10.0;
                t.push_str(format!("2021 {doy:>4} {hr:>3} {v:>7.1}  {flag}").trim_end());
                t.push('\n');
            }
        }
        t
    }

    fn table(name: &str, text: &str) -> Table {
        let src = Source::from_bytes(name, text.as_bytes().to_vec());
        match FixedWidthAnalyzer
            .analyze(&src, Format::FixedWidth)
            .unwrap()
        {
            Content::Table(t) => t,
            c => panic!("{c:?}"),
        }
    }

    #[test]
    fn fields_that_widen_after_the_sniffed_rows_stay_whole() {
        let t = table("hourly.txt", &hourly());
        assert_eq!(t.delimiter, "fixed-width");
        assert_eq!(t.rows, 365 * 24);
        assert_eq!(t.ragged_rows, 0);
        let doy = &t.columns[1];
        assert_eq!(doy.name, "DOY");
        assert_eq!(doy.kind, ColumnType::Integer);
        assert_eq!(
            (doy.min.as_deref(), doy.max.as_deref()),
            (Some("1"), Some("365"))
        );
        assert_eq!(doy.distinct, 365);
        let value = &t.columns[3];
        assert_eq!(value.max.as_deref(), Some("878.3"));
        // The flag column, empty on most rows, keeps its place.
        assert_eq!(t.columns[4].name, "FLAG");
        assert_eq!(t.columns[4].top[0].0, "est");
        assert_eq!(
            t.load.as_deref(),
            Some(
                "pd.read_fwf(path, colspecs=[(0, 4), (6, 9), (11, 13), (16, 21), (23, 26)], \
                 skiprows=4, header=None, names=[\"YEAR\", \"DOY\", \"HR\", \"VALUE\", \"FLAG\"])"
            )
        );
    }

    #[test]
    fn a_date_in_words_split_by_alignment_is_one_column() {
        let text = "Index of files\n\n02 Dec 1996      114 Index\n12 Jun 1996   191873 data.txt\n 3 Jun 1997     4319 notes.txt\n12 Jan 1997       17 x\n";
        let t = table("Index", text);
        let names: Vec<&str> = t.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["column_1", "column_2", "column_3"]);
        let d = &t.columns[0];
        assert_eq!(d.kind, ColumnType::Date);
        assert_eq!(d.date_format.as_deref(), Some("%d %b %Y"));
        assert_eq!(
            (d.min.as_deref(), d.max.as_deref()),
            (Some("1996-06-12"), Some("1997-06-03"))
        );
        assert!(
            t.load.as_deref().unwrap().contains("colspecs=[(0, 11), "),
            "{:?}",
            t.load
        );
        // Three named fields stay three.
        let text = "day  mon  year  n\n 02  Dec  1996  1\n 12  Jun  1996  2\n 03  Jun  1997  3\n 12  Jan  1997  4\n";
        assert_eq!(table("d.txt", text).columns.len(), 4);
    }

    #[test]
    fn repeated_header_names_are_made_unique() {
        let t = table("q.txt", "id  flux  flux  flux.1\n 1   2.5   3.5     7\n 2   2.0   3.0     8\n 3   1.5   2.5     9\n 4   1.0   2.0     1\n");
        let names: Vec<&str> = t.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["id", "flux", "flux.1", "flux.1.1"]);
    }

    #[test]
    fn widening_keeps_columns_apart() {
        let mut cols = vec![(0, 4), (7, 8), (10, 12)];
        widen(&mut cols, &[], "2021  10  ok");
        assert_eq!(cols, [(0, 4), (6, 8), (10, 12)]);
        widen(&mut cols, &[], "2021 100  ok then");
        assert_eq!(cols, [(0, 4), (5, 8), (10, 17)]);
        // A line over several columns changes nothing.
        widen(&mut cols, &[], "a-footer-line-that-spans-everything");
        assert_eq!(cols, [(0, 4), (5, 8), (10, 17)]);
        // A run in a gap far from any column starts one only under a header word.
        widen(&mut cols, &[], "                      x");
        assert_eq!(cols, [(0, 4), (5, 8), (10, 17)]);
        widen(&mut cols, &[(20, 24)], "                      x");
        assert_eq!(cols, [(0, 4), (5, 8), (10, 17), (22, 23)]);
        // Characters, not bytes.
        let mut cols = vec![(0, 2), (4, 5)];
        widen(&mut cols, &[], "é é  12");
        assert_eq!(cols, [(0, 3), (4, 7)]);
    }

    /// The load lines of the fixed-width and whitespace fixtures, run with real pandas
    /// when the test venv is there (the integration tests make it), yield the described
    /// names and row count.
    #[test]
    fn load_lines_read_the_table_as_described() {
        let station = table("260.txt", STATION);
        assert_eq!(
            station.load.as_deref(),
            Some(
                "pd.read_fwf(path, colspecs=[(0, 8), (11, 14), (16, 20), (22, 31)], \
                 skiprows=6, header=None, names=[\"YYYYMMDD\", \"TG\", \"RH\", \"STATUS\"])"
            )
        );
        let tokens = "x y label\n1 2.5 a\n10 3 \"bb\n100 4.25 c\n7 1 d\n";
        let ws = table("t.dat", tokens);
        assert_eq!(ws.delimiter, "whitespace");
        assert_eq!(
            ws.load.as_deref(),
            Some(
                "pd.read_csv(path, sep=r\"\\s+\", skiprows=1, header=None, \
                 names=[\"x\", \"y\", \"label\"], quoting=3)"
            )
        );
        let latin = "T\u{e9}mp  Ville\n 1.5  Orl\u{e9}ans\n12.0  Nice\n 3.25 Lyon\n 4.0  Caen\n";
        let (latin_bytes, _, _) = encoding_rs::WINDOWS_1252.encode(latin);
        let src = Source::from_bytes("v.txt", latin_bytes.to_vec());
        let Content::Table(lt) = FixedWidthAnalyzer
            .analyze(&src, Format::FixedWidth)
            .unwrap()
        else {
            panic!()
        };
        assert!(
            lt.load
                .as_deref()
                .unwrap()
                .ends_with(", encoding=\"cp1252\")"),
            "{:?}",
            lt.load
        );
        let python =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/test-venv/bin/python");
        if !python.exists() {
            eprintln!("no test venv: pandas not run");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let hourly = hourly();
        let cases: Vec<(&str, Vec<u8>, Table)> = vec![
            ("260.txt", STATION.as_bytes().to_vec(), station),
            ("t.dat", tokens.as_bytes().to_vec(), ws),
            ("v.txt", latin_bytes.to_vec(), lt),
            (
                "hourly.txt",
                hourly.as_bytes().to_vec(),
                table("hourly.txt", &hourly),
            ),
        ];
        for (name, bytes, t) in cases {
            let path = dir.path().join(name);
            std::fs::write(&path, bytes).unwrap();
            let call = crate::analyze::render::with_path(
                t.load.as_deref().unwrap(),
                path.to_str().unwrap(),
            );
            let script = format!(
                "import json, pandas as pd\nd = {call}\nprint(json.dumps([list(d.columns), len(d)]))"
            );
            let out = std::process::Command::new(&python)
                .args(["-c", &script])
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{name}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let (cols, rows): (Vec<String>, u64) = serde_json::from_slice(&out.stdout).unwrap();
            let names: Vec<String> = t.columns.iter().map(|c| c.name.clone()).collect();
            assert_eq!((cols, rows), (names, t.rows), "{name}: {call}");
        }
    }
}
