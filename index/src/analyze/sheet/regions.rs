//! Where the tables of a sheet are: every kept row is read as a title, header, data,
//! note or summary row of a region, and each table is a maximal run of type-consistent
//! data rows with its header rows directly above it.
//!
//! - Column bands separated by columns empty in every row are separate tables when each
//!   starts with its own header and they differ in extent or title (side by side); bands
//!   covering the same rows with no title of their own are one table with an empty column.
//! - Within a band, a row of text cells standing in a column whose data so far are
//!   numbers or dates starts a new table (stacked), its title rows going with it.
//! - A header is one to three rows: a row of text, the text rows directly below it over
//!   columns of numbers, and the rows directly above it that are not a lone title in the
//!   first column.
//! - One-cell text rows at a table's end are notes when a blank row parts them from the
//!   data or they read as notes (`Source: …`, `* …`, a sentence); rows labelled `Total`, `Mean`, … at
//!   the end of the data are summaries. Both are kept out of the data.

use super::{GridCell, GridRow};
use crate::analyze::profile::{value_type, ColumnType};
use crate::analyze::regions::Figures;
use crate::analyze::rules::{on, ReadingRule};
use crate::analyze::summary::summary_label;

/// Header rows at most.
const MAX_HEADER_ROWS: usize = 3;
/// Characters of a one-cell row below a table that make it a note whatever its column.
const NOTE_LEN: usize = 30;

/// One table of a sheet, as indices into the kept rows.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Region {
    /// First and last column (0-based) of the header and data cells.
    pub cols: (u32, u32),
    /// Rows above the header (titles, preamble), top to bottom.
    pub titles: Vec<usize>,
    /// Header rows, top to bottom.
    pub header: Vec<usize>,
    /// Data rows.
    pub data: Vec<usize>,
    /// Summary rows at the data's end.
    pub summary: Vec<usize>,
    /// One-cell rows below the data.
    pub notes: Vec<usize>,
    /// The column band the region was found in.
    pub band: (u32, u32),
}

/// A row seen through a band of columns.
#[derive(Clone, Copy)]
struct View<'a> {
    /// Index into the kept rows.
    i: usize,
    /// 0-based sheet row.
    row: u32,
    cells: &'a [GridCell],
}

fn is_text(c: &GridCell) -> bool {
    c.is_text && value_type(&c.text) == ColumnType::Text
}

/// The cells of `r` within columns `c0..=c1` (cells are sorted by column).
pub(super) fn within(r: &GridRow, (c0, c1): (u32, u32)) -> &[GridCell] {
    let a = r.cells.partition_point(|c| c.col < c0);
    let b = r.cells.partition_point(|c| c.col <= c1);
    &r.cells[a..b.max(a)]
}

/// The tables of a sheet whose kept rows are `rows`, within columns `cols`. `whole`: every
/// non-empty row of the sheet is kept, so the regions' ends are known; else the sheet is
/// read as one table from its header down, as far as it goes.
pub(super) fn regions(rows: &[GridRow], cols: (u32, u32), whole: bool) -> Vec<Region> {
    let bands = if whole && on(ReadingRule::SideBySide) {
        bands(rows, cols)
    } else {
        vec![cols]
    };
    let mut out: Vec<Region> = Vec::new();
    for band in bands {
        let view: Vec<View> = rows
            .iter()
            .enumerate()
            .filter_map(|(i, r)| {
                let cells = within(r, band);
                (!cells.is_empty()).then_some(View {
                    i,
                    row: r.row,
                    cells,
                })
            })
            .collect();
        for mut r in stack(&view, band, whole) {
            r.band = band;
            match out.last_mut() {
                // Lines above nothing (no header, no data) are notes of the table before.
                Some(prev) if r.data.is_empty() && r.header.is_empty() => {
                    prev.notes.extend(r.titles);
                }
                _ => out.push(r),
            }
        }
    }
    if out.is_empty() {
        out.push(Region {
            cols,
            ..Default::default()
        });
    }
    out
}

/// Column bands: runs of columns holding cells of rows of two cells or more, split where
/// the blocks on either side are separate tables.
fn bands(rows: &[GridRow], (c0, c1): (u32, u32)) -> Vec<(u32, u32)> {
    let width = (c1 - c0 + 1) as usize;
    let mut used = vec![false; width];
    for r in rows.iter().filter(|r| r.cells.len() >= 2) {
        for c in &r.cells {
            if let Some(u) = c.col.checked_sub(c0).and_then(|i| used.get_mut(i as usize)) {
                *u = true;
            }
        }
    }
    let mut runs: Vec<(u32, u32)> = Vec::new();
    for (k, &u) in used.iter().enumerate() {
        let col = c0 + k as u32;
        match runs.last_mut() {
            Some(last) if u && last.1 + 1 == col => last.1 = col,
            _ if u => runs.push((col, col)),
            _ => {}
        }
    }
    let mut out: Vec<(u32, u32)> = Vec::new();
    for run in runs {
        match out.last_mut() {
            Some(prev) if !separate(rows, *prev, run) => prev.1 = run.1,
            _ => out.push(run),
        }
    }
    if out.len() <= 1 {
        return vec![(c0, c1)];
    }
    out
}

/// First and last kept row of two cells or more with a cell in `band`, and whether the
/// band's cells in the first of them are all text (a header).
fn extent(rows: &[GridRow], band: (u32, u32)) -> Option<(usize, usize, bool)> {
    let full: Vec<usize> = (0..rows.len())
        .filter(|&i| rows[i].cells.len() >= 2 && !within(&rows[i], band).is_empty())
        .collect();
    let (&first, &last) = (full.first()?, full.last()?);
    let headed = within(&rows[first], band).iter().all(is_text);
    Some((first, last, headed))
}

/// Whether blocks `a` (left) and `b` are separate tables: each starts with a header, and
/// they cover different rows or `b` has a title of its own above its header.
fn separate(rows: &[GridRow], a: (u32, u32), b: (u32, u32)) -> bool {
    let (Some((af, al, ah)), Some((bf, bl, bh))) = (extent(rows, a), extent(rows, b)) else {
        return false;
    };
    if !(ah && bh) {
        return false;
    }
    let own_title = rows[..bf].iter().rev().take(3).any(|r| {
        let cells = within(r, b);
        cells.len() == 1 && is_text(&cells[0]) && within(r, a).len() <= 1
    });
    (af, al) != (bf, bl) || own_title
}

/// The tables of one band, top to bottom.
fn stack(view: &[View], band: (u32, u32), whole: bool) -> Vec<Region> {
    let mut out = Vec::new();
    let mut p = 0;
    let stacked = whole && on(ReadingRule::StackedTables);
    while p < view.len() {
        let (mut region, next) = one(&view[p..], band, stacked);
        let next = p + next;
        if whole {
            tail(&mut region, view, band);
            region.cols = used_cols(&region, view).unwrap_or(band);
        } else {
            region.cols = band;
        }
        out.push(region);
        p = next;
    }
    out
}

/// The first table of `view`, and where the next one starts (relative to `view`).
fn one(view: &[View], band: (u32, u32), stacked: bool) -> (Region, usize) {
    let first: Vec<&[GridCell]> = view
        .iter()
        .take(super::SCAN_ROWS + 6)
        .map(|v| v.cells)
        .collect();
    let layout = super::layout(&first);
    let mut r = Region::default();
    let data_start = match layout.header {
        Some(h) => {
            let (top, bottom) = if on(ReadingRule::HeaderDepth) {
                depth(view, h, band.0)
            } else {
                (h, h)
            };
            r.titles = view[..top].iter().map(|v| v.i).collect();
            r.header = view[top..=bottom].iter().map(|v| v.i).collect();
            bottom + 1
        }
        None => {
            r.titles = layout.titles.iter().map(|&k| view[k].i).collect();
            layout.data_start
        }
    };
    // Per column: (text cells, other cells) in the data so far.
    let width = (band.1 - band.0 + 1) as usize;
    let mut kinds = vec![(0u32, 0u32); width];
    let mut end = view.len();
    for k in data_start..view.len() {
        if stacked && k > data_start && k + 1 < view.len() && breaks(&view[k], &kinds, band.0) {
            end = start_of_next(view, data_start, k);
            break;
        }
        for c in view[k].cells {
            if let Some(slot) = kinds.get_mut((c.col - band.0) as usize) {
                if is_text(c) {
                    slot.0 += 1;
                } else {
                    slot.1 += 1;
                }
            }
        }
    }
    r.data = view[data_start.min(end)..end].iter().map(|v| v.i).collect();
    (r, end)
}

/// Top and bottom of the header whose first text row is `view[h]`: text rows directly
/// below it over columns of numbers, and rows directly above it that are not a lone cell
/// in the first column (a title); three rows at most.
fn depth(view: &[View], h: usize, first_col: u32) -> (usize, usize) {
    let mut bottom = h;
    while bottom + 2 < view.len()
        && bottom - h + 1 < MAX_HEADER_ROWS
        && view[bottom + 1].row == view[bottom].row + 1
        && view[bottom + 1].cells.iter().all(|c| c.is_text)
        && over_numbers(&view[bottom + 1], &view[bottom + 2..])
    {
        bottom += 1;
    }
    let mut top = h;
    while top > 0
        && bottom - top + 1 < MAX_HEADER_ROWS
        && view[top - 1].row + 1 == view[top].row
        && upper(&view[top - 1], first_col)
    {
        top -= 1;
    }
    (top, bottom)
}

/// Whether a row of strings stands over columns that hold numbers or dates in the rows
/// below it (so it names them rather than being one of them): one of its cells is text
/// over such values, or a number written as a string (`2021`) over numbers stored as
/// numbers.
fn over_numbers(row: &View, below: &[View]) -> bool {
    row.cells.iter().any(|c| {
        let (mut text, mut other, mut stored_as_strings) = (0, 0, 0);
        for v in below.iter().take(5) {
            if let Some(x) = v.cells.iter().find(|x| x.col == c.col) {
                if is_text(x) {
                    text += 1;
                } else {
                    other += 1;
                    stored_as_strings += usize::from(x.is_text);
                }
            }
        }
        other > 0 && text == 0 && (is_text(c) || stored_as_strings == 0)
    })
}

/// Whether a row directly above a header row belongs to the header: short cells, and not
/// one lone cell in the table's first column (that is a title).
fn upper(row: &View, first_col: u32) -> bool {
    let short = row.cells.iter().all(|c| c.text.chars().count() <= 60);
    let lone_first = row.cells.len() == 1 && row.cells[0].col == first_col;
    short && !lone_first
}

/// Whether `row`, below at least one data row, is the header of a new table: all text,
/// at least two cells, one of them in a column whose data so far are numbers or dates.
fn breaks(row: &View, kinds: &[(u32, u32)], first_col: u32) -> bool {
    row.cells.len() >= 2
        && row.cells.iter().all(is_text)
        && row.cells.iter().any(|c| {
            kinds
                .get((c.col - first_col) as usize)
                .is_some_and(|&(text, other)| other >= 2 && text * 5 <= other)
        })
}

/// Where the table whose header is `view[k]` starts: the header rows directly above it
/// and the one-cell rows before them, from the last blank row among them (the rows before
/// a blank row end the table above as notes).
fn start_of_next(view: &[View], data_start: usize, k: usize) -> usize {
    let mut s = k;
    while s > data_start + 1 && view[s - 1].cells.len() == 1 && is_text(&view[s - 1].cells[0]) {
        s -= 1;
    }
    // The rows directly above the header stay with it; from a blank row up they are notes.
    let mut j = k;
    while j > s && view[j - 1].row + 1 == view[j].row {
        j -= 1;
    }
    if j > s {
        j
    } else {
        s
    }
}

/// Notes and summary rows at the end of a region's data.
fn tail(r: &mut Region, view: &[View], band: (u32, u32)) {
    let at = |i: usize| at(view, i);
    if on(ReadingRule::KeyValueBlocks) {
        while r.data.len() > 1 {
            let Some(&last) = r.data.last() else { break };
            let Some(v) = at(last) else { break };
            let prev_row = r
                .data
                .get(r.data.len() - 2)
                .and_then(|&i| at(i))
                .map(|p| p.row);
            let gap = prev_row.is_some_and(|p| v.row > p + 1);
            // One text cell, maybe after a short footnote marker (`1`, `*`, `a)`).
            let lone = match v.cells {
                [c] => is_text(c),
                [m, c] => m.text.chars().count() <= 3 && is_text(c),
                _ => false,
            };
            let text = v.cells.last().map(|c| c.text.as_str()).unwrap_or("");
            if !(lone && (gap || note_like(text))) {
                break;
            }
            r.notes.insert(0, last);
            r.data.pop();
        }
    }
    if on(ReadingRule::SummaryRows) {
        let first_col = r
            .data
            .iter()
            .filter_map(|&i| at(i))
            .filter_map(|v| v.cells.first().map(|c| c.col))
            .min()
            .unwrap_or(band.0);
        // Labels of the data rows as long as a short summary word (`n`, `All`) are codes
        // among which such a word is one more code.
        let longest_label = r
            .data
            .iter()
            .filter_map(|&i| at(i))
            .filter_map(|v| v.cells.first().filter(|c| c.col == first_col))
            .filter(|c| summary_label(&c.text).is_none())
            .map(|c| c.text.trim().chars().count())
            .max()
            .unwrap_or(0);
        while r.data.len() > 1 {
            let Some(&last) = r.data.last() else { break };
            // A summary is a label and figures.
            let labelled = at(last).is_some_and(|v| {
                v.cells.iter().any(|c| !is_text(c))
                    && v.cells.first().is_some_and(|c| {
                        let len = c.text.trim().chars().count();
                        c.col == first_col
                            && summary_label(&c.text).is_some()
                            && (len > 3 || longest_label > 3)
                    })
            });
            if !labelled {
                break;
            }
            r.summary.insert(0, last);
            r.data.pop();
        }
        // A row of figures under no label that states the sums of the columns above
        // (a total whose label cell is left empty), as in delimited text.
        if let Some(&last) = r.data.last().filter(|_| r.data.len() > 2) {
            if at(last).is_some_and(|v| unlabelled_sums(v, &r.data, view, first_col, band)) {
                r.summary.insert(0, last);
                r.data.pop();
            }
        }
    }
}

/// Whether `v`, the last of the `data` rows, has no label in `first_col` and every
/// figure in it is the sum of its column over the data rows above.
fn unlabelled_sums(
    v: &View,
    data: &[usize],
    view: &[View],
    first_col: u32,
    band: (u32, u32),
) -> bool {
    if v.cells.first().is_none_or(|c| c.col == first_col) {
        return false;
    }
    let width = (band.1 - band.0 + 1) as usize;
    let mut cells = vec![""; width];
    for c in v.cells {
        if let Some(slot) = cells.get_mut((c.col - band.0) as usize) {
            *slot = c.text.as_str();
        }
    }
    let mut figures = vec![Figures::default(); width];
    for u in data[..data.len() - 1].iter().filter_map(|&i| at(view, i)) {
        for c in u.cells {
            if let (Some(f), Some(x)) = (
                figures.get_mut((c.col - band.0) as usize),
                crate::analyze::regions::number(&c.text),
            ) {
                f.add(x);
            }
        }
    }
    crate::analyze::regions::figures_check(&cells, &figures, (data.len() - 1) as u64, None)
}

/// The row of `view` at kept index `i` (`view` is in kept order).
fn at<'v, 'a>(view: &'v [View<'a>], i: usize) -> Option<&'v View<'a>> {
    view.binary_search_by_key(&i, |v| v.i)
        .ok()
        .map(|k| &view[k])
}

/// First and last column of a region's header and data cells.
fn used_cols(r: &Region, view: &[View]) -> Option<(u32, u32)> {
    let (mut lo, mut hi) = (u32::MAX, 0);
    for v in r.header.iter().chain(&r.data).filter_map(|&i| at(view, i)) {
        if let (Some(a), Some(b)) = (v.cells.first(), v.cells.last()) {
            lo = lo.min(a.col);
            hi = hi.max(b.col);
        }
    }
    (lo <= hi).then_some((lo, hi))
}

/// Text that reads as a note under a table: `Source: …`, `Note …`, `* …`, `(1) …`, or
/// a sentence.
fn note_like(text: &str) -> bool {
    let t = text.trim_start();
    let lower = t.to_lowercase();
    t.chars().count() > NOTE_LEN
        || ["note", "source", "*", "(", "[", "†", "¹"]
            .iter()
            .any(|p| lower.starts_with(p))
}
