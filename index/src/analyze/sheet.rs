//! The format-neutral half of the spreadsheet analyzer: a bounded grid of a sheet's
//! non-empty cells, header-row detection (title rows and blank rows above the header are
//! skipped) and the sheet's [`NamedTable`].
//!
//! Cells arrive in row order from any reader (streamed xlsx/xlsb cells, or an in-memory
//! xls/ods range). The grid counts every non-empty row and the used range, but keeps the
//! text of only the first rows, within a byte budget, so that a huge sheet is profiled
//! from its beginning while its row count stays exact.

mod load;
mod regions;

use super::collapse;
use super::model::{Keep, NamedTable, TableBuilder};
use super::profile::{value_type, ColumnType};
use super::rules::{on, Applied, ReadingRule};
use crate::text_util::{cut_bytes, cut_chars};
use regions::Region;

/// Non-empty rows examined when looking for the header.
const SCAN_ROWS: usize = 30;
/// Data rows profiled per sheet; further rows are only counted.
pub(crate) const MAX_PROFILE_ROWS: usize = 50_000;
/// Text kept per sheet for profiling (the cells of the first rows).
const MAX_KEPT_BYTES: usize = 64 * 1024 * 1024;
/// Characters kept of one cell: long notes profile as text all the same.
const MAX_CELL_BYTES: usize = 1024;
/// Columns profiled per sheet.
const MAX_COLS: u32 = 1024;
/// Rows above a table listed one by one in its notes.
const MAX_TITLE_NOTES: usize = 4;
/// Characters of a title or skipped row shown in a note.
const NOTE_CHARS: usize = 80;

/// One non-empty cell: its column and its value as text.
#[derive(Debug, Clone)]
pub(crate) struct GridCell {
    col: u32,
    text: String,
    /// The workbook stores it as a string (not a number, date or boolean).
    is_text: bool,
}

/// The non-empty cells of one row.
#[derive(Debug, Clone)]
struct GridRow {
    row: u32,
    cells: Vec<GridCell>,
}

/// The cells of one sheet, as read.
#[derive(Debug, Default)]
pub(crate) struct Grid {
    kept: Vec<GridRow>,
    kept_bytes: usize,
    keeping: bool,
    /// Distinct non-empty rows seen (counted on row changes of the stream).
    nonempty_rows: u64,
    last_row: Option<u32>,
    out_of_order: bool,
    /// Used range over every cell with a value (errors and empty strings included).
    bounds: Option<((u32, u32), (u32, u32))>,
    /// First data rows kept as the table's sample.
    keep: Keep,
}

impl Grid {
    /// An empty grid, ready to receive cells in row order.
    pub(crate) fn new() -> Self {
        Grid {
            keeping: true,
            ..Default::default()
        }
    }

    /// Keep these first data rows as the sample (a preview keeps more).
    pub(crate) fn keeping(mut self, keep: Keep) -> Self {
        self.keep = keep;
        self
    }

    /// Add a cell. `text` empty means a cell that holds nothing usable (an error value, an
    /// empty string): it extends the used range but is no content.
    pub(crate) fn push(&mut self, row: u32, col: u32, text: String, is_text: bool) {
        self.bounds = Some(match self.bounds {
            None => ((row, col), (row, col)),
            Some(((r0, c0), (r1, c1))) => ((r0.min(row), c0.min(col)), (r1.max(row), c1.max(col))),
        });
        if text.trim().is_empty() {
            return;
        }
        if self.last_row != Some(row) {
            if self.last_row.is_some_and(|r| row < r) {
                self.out_of_order = true;
            }
            self.last_row = Some(row);
            self.nonempty_rows += 1;
            if self.keeping && self.kept.len() >= SCAN_ROWS + MAX_PROFILE_ROWS {
                self.keeping = false;
            }
            if self.keeping {
                self.kept.push(GridRow {
                    row,
                    cells: Vec::new(),
                });
            }
        }
        if !self.keeping {
            return;
        }
        let text = cut_bytes(text, MAX_CELL_BYTES, "");
        self.kept_bytes += text.len() + std::mem::size_of::<GridCell>();
        if self.kept_bytes > MAX_KEPT_BYTES {
            // Drop the partly kept row: profiles see whole rows only.
            self.kept.pop();
            self.keeping = false;
            return;
        }
        if let Some(r) = self.kept.last_mut() {
            r.cells.push(GridCell { col, text, is_text });
        }
    }

    /// The used range in A1 notation, e.g. `A1:F120`.
    pub(crate) fn range(&self) -> Option<String> {
        self.bounds
            .map(|((r0, c0), (r1, c1))| format!("{}:{}", a1(r0, c0), a1(r1, c1)))
    }

    /// The sheet's tables (one, or several found by [`regions`]). `complete` is false
    /// when reading stopped before the sheet's end; `declared_last_row` (0-based) is the
    /// last row the sheet declares, if known; `merged` are the sheet's merged regions
    /// (empty when unknown).
    pub(crate) fn finish(
        mut self,
        name: &str,
        complete: bool,
        declared_last_row: Option<u32>,
        merged: &[Merged],
        applied: &Applied,
    ) -> Vec<NamedTable> {
        let at = Sheet {
            name,
            complete,
            declared_last_row,
            merged,
            applied,
        };
        let range = self.range();
        let Some(((_, min_col), (_, max_col))) = self.bounds else {
            let mut t = TableBuilder::new(Vec::<String>::new()).finish(name, "sheet");
            t.rows_exact = complete;
            t.notes.push("empty sheet".into());
            return vec![t];
        };
        for r in &mut self.kept {
            if !r.cells.is_sorted_by_key(|c| c.col) {
                r.cells.sort_by_key(|c| c.col);
            }
        }
        let last_col = max_col.min(min_col.saturating_add(MAX_COLS - 1));
        // Region ends are known only when every non-empty row is at hand, in order.
        let whole = complete && !self.out_of_order && self.kept.len() as u64 == self.nonempty_rows;
        let found = regions::regions(&self.kept, (min_col, last_col), whole);
        let bands = {
            let mut b: Vec<(u32, u32)> = found.iter().map(|r| r.band).collect();
            b.dedup();
            b.len()
        };
        applied.add(ReadingRule::SideBySide, bands as u64 - 1);
        applied.add(ReadingRule::StackedTables, (found.len() - bands) as u64);
        let mut names = Vec::new();
        let mut out = Vec::new();
        for (n, reg) in found.iter().enumerate() {
            let mut t = self.table(&at, reg, whole);
            if found.len() > 1 {
                let title = reg
                    .titles
                    .last()
                    .map(|&i| row_text(&self.kept[i], reg.band))
                    .filter(|s| !s.is_empty());
                // The first table keeps the sheet's name, so that the sheet a person
                // opens (and `sheet_name=`, `--table SHEET`) still finds it; the others
                // are named by their title rows (the first one's title is in its notes).
                let mut table_name = match title {
                    _ if n == 0 => name.to_string(),
                    Some(t) => cut_chars(&t, NOTE_CHARS),
                    None => format!("{name} ({})", n + 1),
                };
                if names.contains(&table_name) {
                    table_name = format!("{table_name} ({})", n + 1);
                }
                names.push(table_name.clone());
                t.name = table_name;
                let how = if bands > 1 && found.iter().filter(|r| r.band == reg.band).count() > 1 {
                    "side by side and stacked"
                } else if bands > 1 {
                    "side by side"
                } else {
                    "stacked"
                };
                t.notes.insert(
                    0,
                    format!(
                        "table {} of {} in sheet {name:?} ({how}), cells {}",
                        n + 1,
                        found.len(),
                        t.range.as_deref().unwrap_or("")
                    ),
                );
            } else {
                t.range = range.clone();
            }
            if max_col > last_col {
                t.notes.push(format!(
                    "{} columns right of {} not profiled",
                    max_col - last_col,
                    col_letters(last_col)
                ));
            }
            if self.out_of_order {
                t.notes
                    .push("cells stored out of row order: row count approximate".into());
            }
            out.push(t);
        }
        out
    }

    /// The table of one region.
    fn table(&self, at: &Sheet, reg: &Region, whole: bool) -> NamedTable {
        let Sheet {
            name,
            complete,
            declared_last_row,
            merged,
            applied,
        } = *at;
        let (first_col, last_col) = reg.cols;
        let header: Vec<&GridRow> = reg.header.iter().map(|&i| &self.kept[i]).collect();
        let names = self.names(&header, reg.cols, merged);
        let mut b = TableBuilder::new(names.iter().cloned()).keeping(self.keep);
        let mut row_buf: Vec<&str> = Vec::new();
        for &i in &reg.data {
            let r = &self.kept[i];
            row_buf.clear();
            row_buf.resize((last_col - first_col + 1) as usize, "");
            for c in &r.cells {
                if let Some(slot) = c
                    .col
                    .checked_sub(first_col)
                    .and_then(|i| row_buf.get_mut(i as usize))
                {
                    *slot = &c.text;
                }
            }
            b.push_row(row_buf.iter());
            if b.rows() as usize >= MAX_PROFILE_ROWS {
                break;
            }
        }
        let profiled = b.rows();
        let bottom = header.last().copied();
        let first_data_row = reg.data.first().map(|&i| self.kept[i].row);
        let last_data_row = reg.data.last().map(|&i| self.kept[i].row);
        // Rows above the data are part of the non-empty rows counted while streaming.
        let above = (reg.titles.len() + reg.header.len()) as u64;
        let mut rows = if whole {
            reg.data.len() as u64
        } else {
            self.nonempty_rows.saturating_sub(above)
        };
        let (span, nrows) = if whole {
            let span = match (first_data_row, last_data_row) {
                (Some(f), Some(l)) => u64::from(l - f) + 1,
                _ => 0,
            };
            // Anything below the data in the sheet (notes, another table) is cut off.
            let more_below = last_data_row.is_some_and(|l| self.last_row.is_some_and(|s| s > l));
            (span, more_below.then_some(span))
        } else {
            // pandas reads from the row below the header (or the first data row) to the
            // last non-empty one, blank rows included.
            let span = match (bottom, first_data_row, self.last_row) {
                (Some(h), _, Some(last)) => u64::from(last.saturating_sub(h.row)),
                (None, Some(first), Some(last)) => u64::from(last.saturating_sub(first)) + 1,
                _ => 0,
            };
            (span, None)
        };
        let load = load::call(&load::Placement {
            sheet: name,
            header: bottom,
            header_rows: header.len(),
            first_data_row,
            cols: reg.cols,
            names: &names,
            blank_rows_inside: span > rows,
            nrows,
        });
        let mut t = b.finish(name, "sheet");
        t.load = load;
        t.header_row = bottom.map(|h| u64::from(h.row) + 1);
        if !complete {
            if let (Some(last), Some(first_data)) = (declared_last_row, first_data_row) {
                rows = rows.max(u64::from(last.saturating_sub(first_data)) + 1);
            }
        }
        t.rows = rows;
        t.rows_exact = complete && !self.out_of_order;
        let top = reg
            .titles
            .first()
            .or(reg.header.first())
            .or(reg.data.first());
        let end = [reg.data.last(), reg.summary.last(), reg.notes.last()]
            .into_iter()
            .flatten()
            .max();
        if let (Some(&top), Some(&end)) = (top, end.or(top)) {
            t.range = Some(format!(
                "{}:{}",
                a1(self.kept[top].row, first_col),
                a1(self.kept[end].row, last_col)
            ));
        }
        // The rows right above the header say most; a long preamble is summed up.
        let skipped = reg.titles.len().saturating_sub(MAX_TITLE_NOTES);
        if skipped > 0 {
            t.notes.push(format!(
                "{skipped} rows of text above the table from row {}",
                self.kept[reg.titles[0]].row + 1
            ));
        }
        for &i in &reg.titles[skipped..] {
            let r = &self.kept[i];
            let text = cut_chars(&row_text(r, reg.band), NOTE_CHARS);
            let what = if regions::within(r, reg.band).len() == 1 {
                "title row"
            } else {
                "row above the header"
            };
            t.notes.push(format!("{what} {}: {text}", r.row + 1));
        }
        if header.len() > 1 {
            applied.add(ReadingRule::HeaderDepth, 1);
            let example = names
                .iter()
                .find(|n| n.contains(" / "))
                .map(|n| format!(" (`{n}`)"))
                .unwrap_or_default();
            t.notes.push(format!(
                "header rows {}–{} read as one name per column{example}",
                header[0].row + 1,
                header[header.len() - 1].row + 1
            ));
        }
        if !reg.summary.is_empty() {
            applied.add(ReadingRule::SummaryRows, reg.summary.len() as u64);
            let labels: Vec<String> = reg
                .summary
                .iter()
                .filter_map(|&i| self.kept[i].cells.first())
                .map(|c| {
                    if c.is_text {
                        cut_chars(&collapse(&c.text), 24)
                    } else {
                        "sums of the columns".to_string()
                    }
                })
                .collect();
            t.notes.push(format!(
                "{} ({}) kept as notes, not data",
                rows_said(reg.summary.iter().map(|&i| self.kept[i].row)),
                labels.join(", ")
            ));
        }
        if !reg.notes.is_empty() {
            applied.add(ReadingRule::KeyValueBlocks, reg.notes.len() as u64);
            for &i in &reg.notes {
                let r = &self.kept[i];
                t.notes.push(format!(
                    "note row {} below the table: {}",
                    r.row + 1,
                    cut_chars(&row_text(r, reg.band), NOTE_CHARS)
                ));
            }
        }
        if header.is_empty() && rows > 0 {
            t.notes
                .push("no header row found: columns named by letter".into());
        }
        if profiled < rows || !complete {
            t.mark_sample(profiled);
        }
        t
    }

    /// One name per column of `cols` from the header rows, top to bottom: the rows above
    /// the last carry a cell across its merged region (or, with no merged regions known,
    /// up to the row's next cell), and the distinct parts are joined (`2021 / Estimate`).
    /// A column with no header text is named by its letter.
    fn names(&self, header: &[&GridRow], (c0, c1): (u32, u32), merged: &[Merged]) -> Vec<String> {
        // Merged regions decide the carrying when the header rows have any.
        let (top, bottom) = match (header.first(), header.last()) {
            (Some(a), Some(b)) => (a.row, b.row),
            _ => return (c0..=c1).map(col_letters).collect(),
        };
        let merged: Vec<Merged> = merged
            .iter()
            .copied()
            .filter(|((r0, _), (r1, _))| *r0 <= bottom && *r1 >= top)
            .collect();
        let merged = &merged[..];
        (c0..=c1)
            .map(|c| {
                let mut parts: Vec<String> = Vec::new();
                for (k, h) in header.iter().enumerate() {
                    let upper = k + 1 < header.len();
                    let text = header_text(h, header, c, c0, upper, merged);
                    let text = text.map(collapse).unwrap_or_default();
                    if !text.is_empty() && parts.last() != Some(&text) {
                        parts.push(text);
                    }
                }
                if parts.is_empty() {
                    col_letters(c)
                } else {
                    parts.join(" / ")
                }
            })
            .collect()
    }
}

/// What a sheet's tables share.
#[derive(Clone, Copy)]
struct Sheet<'a> {
    name: &'a str,
    complete: bool,
    declared_last_row: Option<u32>,
    merged: &'a [Merged],
    applied: &'a Applied,
}

/// A merged region: (first row, first column), (last row, last column), 0-based.
pub(crate) type Merged = ((u32, u32), (u32, u32));

/// The header text of row `h` at column `c`: its cell; else the top-left cell of a merged
/// region covering it (within the header rows); else, for a row above the last when no
/// merged region is known, the nearest cell to its left within the table.
fn header_text<'a>(
    h: &'a GridRow,
    header: &[&'a GridRow],
    c: u32,
    c0: u32,
    upper: bool,
    merged: &[Merged],
) -> Option<&'a str> {
    let cell_at = |r: &'a GridRow, col: u32| {
        r.cells
            .iter()
            .find(|x| x.col == col)
            .map(|x| x.text.as_str())
    };
    if let Some(t) = cell_at(h, c) {
        return Some(t);
    }
    if !merged.is_empty() {
        let m = merged.iter().find(|((r0, q0), (r1, q1))| {
            (*r0..=*r1).contains(&h.row) && (*q0..=*q1).contains(&c)
        })?;
        let ((r0, q0), _) = *m;
        return header
            .iter()
            .find(|r| r.row == r0)
            .and_then(|r| cell_at(r, q0));
    }
    if !upper {
        return None;
    }
    h.cells
        .iter()
        .rev()
        .find(|x| x.col < c && x.col >= c0)
        .map(|x| x.text.as_str())
}

/// A row's cells within columns `cols` joined with ` | `, spaces collapsed.
fn row_text(r: &GridRow, cols: (u32, u32)) -> String {
    let text: Vec<String> = regions::within(r, cols)
        .iter()
        .map(|c| collapse(&c.text))
        .collect();
    text.join(" | ")
}

/// `row 14` or `rows 14–16` (1-based) of 0-based sheet rows in order.
fn rows_said(rows: impl Iterator<Item = u32>) -> String {
    let rows: Vec<u32> = rows.collect();
    match (rows.first(), rows.last()) {
        (Some(a), Some(b)) if a != b => format!("rows {}–{}", a + 1, b + 1),
        (Some(a), _) => format!("row {}", a + 1),
        _ => String::new(),
    }
}

/// Where the header and the data are among the kept non-empty rows.
#[derive(Debug, PartialEq)]
struct Layout {
    /// Index of the header row.
    header: Option<usize>,
    /// Rows above the data that are not the header (titles, notes).
    titles: Vec<usize>,
    /// Index of the first data row.
    data_start: usize,
}

/// Find the header: the first row (of the first [`SCAN_ROWS`]) whose cells are mostly
/// text, that fills at least two thirds of the width of the rows below it, and has data
/// rows below it. Rows above it are titles; without a header, only leading one-cell
/// rows above wider rows are titles.
fn layout(rows: &[&[GridCell]]) -> Layout {
    let below_width = |i: usize| -> usize {
        rows.iter()
            .skip(i + 1)
            .take(5)
            .map(|r| r.len())
            .max()
            .unwrap_or(0)
    };
    let widest = rows.iter().map(|r| r.len()).max().unwrap_or(0);
    for i in 0..rows.len().min(SCAN_ROWS) {
        let Some(r) = rows.get(i) else { break };
        let n = r.len();
        let text = r
            .iter()
            .filter(|c| c.is_text && value_type(&c.text) == ColumnType::Text)
            .count();
        let width = below_width(i);
        if width == 0 {
            break;
        }
        // A lone cell heads only a one-column table: over a wider table it is a title
        // (lines of prose above a table are one-cell rows too).
        let lone_ok = width == 1 && (widest == 1 || !on(ReadingRule::HeaderDepth));
        let wide_enough = n * 3 >= width * 2 && (n >= 2 || lone_ok);
        if wide_enough && text * 3 >= n * 2 {
            return Layout {
                header: Some(i),
                titles: (0..i).collect(),
                data_start: i + 1,
            };
        }
    }
    let titles: Vec<usize> = rows
        .iter()
        .enumerate()
        .take_while(|(i, r)| r.len() == 1 && below_width(*i) > 1)
        .map(|(i, _)| i)
        .collect();
    Layout {
        header: None,
        data_start: titles.len(),
        titles,
    }
}

/// Spreadsheet column letters of a 0-based column: 0 → `A`, 26 → `AA`.
pub(crate) fn col_letters(col: u32) -> String {
    let mut n = u64::from(col) + 1;
    let mut out = Vec::new();
    while n > 0 {
        let rem = ((n - 1) % 26) as u8;
        out.push(b'A' + rem);
        n = (n - 1) / 26;
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}

/// A1 notation of a 0-based (row, column).
pub(crate) fn a1(row: u32, col: u32) -> String {
    format!("{}{}", col_letters(col), u64::from(row) + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (column, text, stored as a string)
    type TestCell<'a> = (u32, &'a str, bool);

    /// The only table of a sheet.
    fn one(g: Grid, name: &str, complete: bool, declared: Option<u32>) -> NamedTable {
        let mut t = g.finish(name, complete, declared, &[], &Applied::default());
        assert_eq!(t.len(), 1, "{t:?}");
        t.remove(0)
    }

    fn grid(rows: &[(u32, &[TestCell])]) -> Grid {
        let mut g = Grid::new();
        for (r, cells) in rows {
            for (c, t, is_text) in cells.iter() {
                g.push(*r, *c, t.to_string(), *is_text);
            }
        }
        g
    }

    #[test]
    fn letters_and_a1() {
        assert_eq!(col_letters(0), "A");
        assert_eq!(col_letters(25), "Z");
        assert_eq!(col_letters(26), "AA");
        assert_eq!(col_letters(701), "ZZ");
        assert_eq!(col_letters(16383), "XFD");
        assert_eq!(a1(119, 5), "F120");
    }

    #[test]
    fn header_below_title_and_preamble() {
        let g = grid(&[
            (0, &[(0, "Report", true)]),
            (1, &[(0, "By", true), (1, "Alice", true)]),
            (
                3,
                &[
                    (0, "id", true),
                    (1, "name", true),
                    (2, "score", true),
                    (3, "at", true),
                ],
            ),
            (
                4,
                &[
                    (0, "1", false),
                    (1, "x", true),
                    (2, "2.5", false),
                    (3, "2024-01-01", false),
                ],
            ),
            (5, &[(0, "2", false), (1, "y", true), (2, "3.5", false)]),
        ]);
        let t = one(g, "s", true, None);
        assert_eq!(t.header_row, Some(4));
        assert_eq!(t.rows, 2);
        assert_eq!(t.range.as_deref(), Some("A1:D6"));
        let names: Vec<&str> = t.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["id", "name", "score", "at"]);
        assert_eq!(t.columns[2].kind, ColumnType::Float);
        assert_eq!(
            (t.columns[3].kind, t.columns[3].nulls),
            (ColumnType::Date, 1)
        );
        assert_eq!(
            t.notes,
            ["title row 1: Report", "row above the header 2: By | Alice"]
        );
    }

    #[test]
    fn numbers_only_have_no_header() {
        let g = grid(&[
            (0, &[(0, "1", false), (1, "2", false)]),
            (1, &[(0, "3", false), (1, "4", false)]),
        ]);
        let t = one(g, "n", true, None);
        assert_eq!(t.header_row, None);
        assert_eq!(t.rows, 2);
        assert_eq!(t.columns[1].name, "B");
        assert_eq!(t.columns[0].kind, ColumnType::Integer);
    }

    #[test]
    fn empty_and_error_only_cells() {
        let t = one(Grid::new(), "e", true, None);
        assert_eq!((t.rows, t.columns.len()), (0, 0));
        assert_eq!(t.notes, ["empty sheet"]);
        // An error cell (empty text) widens the range but adds no row.
        let g = grid(&[
            (0, &[(0, "a", true), (1, "b", true)]),
            (1, &[(0, "1", false), (1, "2", false)]),
            (2, &[(3, "", false)]),
        ]);
        let t = one(g, "e", true, None);
        assert_eq!(t.range.as_deref(), Some("A1:D3"));
        assert_eq!(t.rows, 1);
    }

    #[test]
    fn incomplete_sheet_uses_declared_rows() {
        let g = grid(&[
            (0, &[(0, "a", true), (1, "b", true)]),
            (1, &[(0, "1", false), (1, "2", false)]),
        ]);
        let t = one(g, "big", false, Some(999));
        assert_eq!(t.rows, 999);
        assert!(!t.rows_exact);
        // Figures from the rows read are flagged; the budget plays no part (not `sampled`).
        assert!(t.columns.iter().all(|c| c.estimated && !c.distinct_exact));
        assert!(!t.sampled);
        assert!(
            t.notes.iter().any(|n| n.contains("sample of 1 rows")),
            "{:?}",
            t.notes
        );
    }

    #[test]
    fn prose_above_and_marked_footnotes_below_are_not_the_table() {
        let mut rows: Vec<(u32, Vec<TestCell>)> = Vec::new();
        for r in 0..8u32 {
            // Paragraphs of one-cell lines with blank lines between them.
            if r % 3 != 2 {
                rows.push((
                    r,
                    vec![(1, "A line of introductory prose about the data", true)],
                ));
            }
        }
        rows.push((
            9,
            vec![(1, "item", true), (2, "count", true), (3, "share", true)],
        ));
        for (i, item) in ["pens", "ink", "paper", "clips"].iter().enumerate() {
            let r = 10 + i as u32;
            rows.push((
                r,
                vec![(1, item, true), (2, "12", false), (3, "0.25", false)],
            ));
        }
        rows.push((15, vec![(1, "Notes:", true)]));
        rows.push((
            16,
            vec![
                (0, "1", false),
                (1, "Counts are taken at the end of each month.", true),
            ],
        ));
        let refs: Vec<(u32, &[TestCell])> = rows.iter().map(|(r, c)| (*r, &c[..])).collect();
        let t = one(grid(&refs), "p", true, None);
        assert_eq!(t.header_row, Some(10));
        assert_eq!(t.rows, 4);
        let names: Vec<&str> = t.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["item", "count", "share"]);
        assert_eq!(t.columns[1].kind, ColumnType::Integer);
        assert_eq!(
            t.load.as_deref(),
            Some(r#"pd.read_excel(path, sheet_name="p", header=9, usecols="B:D", nrows=4)"#)
        );
        let notes = t.notes.join("\n");
        assert!(
            notes.contains("rows of text above the table from row 1"),
            "{notes}"
        );
        assert!(
            notes.contains("note row 17 below the table: 1 | Counts"),
            "{notes}"
        );
    }

    #[test]
    fn a_short_code_that_is_a_summary_word_ends_the_data_as_data() {
        let g = grid(&[
            (0, &[(0, "code", true), (1, "value", true)]),
            (1, &[(0, "a", true), (1, "1", false)]),
            (2, &[(0, "m", true), (1, "2", false)]),
            (3, &[(0, "n", true), (1, "3", false)]),
        ]);
        let t = one(g, "c", true, None);
        assert_eq!(t.rows, 3);
        assert!(t.notes.is_empty(), "{:?}", t.notes);
        // The same word under longer labels sums them up.
        let g = grid(&[
            (0, &[(0, "region", true), (1, "value", true)]),
            (1, &[(0, "North", true), (1, "1", false)]),
            (2, &[(0, "South", true), (1, "2", false)]),
            (3, &[(0, "n", true), (1, "2", false)]),
        ]);
        let t = one(g, "c", true, None);
        assert_eq!(t.rows, 2);
        assert_eq!(t.notes, ["row 4 (n) kept as notes, not data"]);
    }

    #[test]
    fn a_row_of_sums_under_no_label_ends_the_data() {
        let rows = |last: &'static str| {
            grid(&[
                (
                    0,
                    &[(0, "region", true), (1, "cases", true), (2, "deaths", true)],
                ),
                (1, &[(0, "North", true), (1, "10", false), (2, "1", false)]),
                (2, &[(0, "South", true), (1, "20", false), (2, "2", false)]),
                (3, &[(0, "East", true), (1, "5", false), (2, "0", false)]),
                (4, &[(1, last, false), (2, "3", false)]),
            ])
        };
        let t = one(rows("35"), "c", true, None);
        assert_eq!(t.rows, 3);
        assert_eq!(
            t.notes,
            ["row 5 (sums of the columns) kept as notes, not data"]
        );
        // Negative control: figures that are not the sums are a row with its label
        // missing.
        let t = one(rows("36"), "c", true, None);
        assert_eq!(t.rows, 4);
    }

    #[test]
    fn a_group_row_over_year_names_without_merges_carries_to_the_next_cell() {
        // The upper row is wide enough to pass for the header alone; the text row below
        // it stands over numbers, so it belongs to the header too.
        let g = grid(&[
            (0, &[(0, "Population and income", true)]),
            (
                2,
                &[
                    (0, "Area", true),
                    (1, "Population", true),
                    (3, "Income", true),
                    (4, "Other", true),
                ],
            ),
            (
                3,
                &[
                    (1, "2020", true),
                    (2, "2021", true),
                    (3, "2020", true),
                    (4, "2021", true),
                ],
            ),
            (
                4,
                &[
                    (0, "North", true),
                    (1, "10", false),
                    (2, "11", false),
                    (3, "5.5", false),
                    (4, "1", false),
                ],
            ),
            (
                5,
                &[
                    (0, "South", true),
                    (1, "20", false),
                    (2, "21", false),
                    (3, "6.5", false),
                    (4, "2", false),
                ],
            ),
        ]);
        let t = one(g, "g", true, None);
        let names: Vec<&str> = t.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "Area",
                "Population / 2020",
                "Population / 2021",
                "Income / 2020",
                "Other / 2021"
            ]
        );
        assert_eq!((t.header_row, t.rows), (Some(4), 2));
        assert!(t
            .load
            .as_deref()
            .unwrap()
            .contains("header=None, skiprows=4, names=["));
    }

    #[test]
    fn numbers_stored_as_strings_under_a_header_are_data() {
        let g = grid(&[
            (0, &[(0, "site", true), (1, "count", true)]),
            (1, &[(0, "A", true), (1, "10", true)]),
            (2, &[(0, "B", true), (1, "20", true)]),
            (3, &[(0, "C", true), (1, "30", true)]),
        ]);
        let t = one(g, "s", true, None);
        assert_eq!((t.header_row, t.rows), (Some(1), 3));
        assert_eq!(t.columns[1].name, "count");
    }
}
