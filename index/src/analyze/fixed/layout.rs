//! Finding a fixed-width or whitespace table layout in text, and its column extents.
//!
//! Positions are counted in characters, not bytes, as pandas' `read_fwf` counts them.

use super::super::profile::{value_type, ColumnType};

/// Table lines looked at when sniffing.
const SNIFF_LINES: usize = 200;
/// Lines of preamble (of any kind) a table may follow.
const MAX_PREAMBLE_LINES: usize = 80;
/// Widest line (in characters) read as a fixed-width row.
const MAX_WIDTH: usize = 4096;

/// How the rows split into cells.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Split {
    /// Character ranges (start, end) of each column.
    Positions(Vec<(usize, usize)>),
    /// Runs of whitespace between this many tokens.
    Tokens(usize),
}

/// The layout found in a text.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Layout {
    /// Lines of the header block (comments, `key: value` metadata, blank lines).
    pub(crate) block: usize,
    /// The header line exists.
    pub(crate) header: bool,
    /// A units line follows the header.
    pub(crate) units: bool,
    /// How rows split into cells.
    pub(crate) split: Split,
}

pub(crate) fn is_block_line(l: &str) -> bool {
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

/// The characters `a..b` of `line` (character positions, clamped to the line).
pub(crate) fn chars_slice(line: &str, a: usize, b: usize) -> &str {
    if line.is_ascii() {
        let (a, b) = (a.min(line.len()), b.min(line.len()));
        return &line[a..b];
    }
    let mut offsets = line
        .char_indices()
        .map(|(i, _)| i)
        .chain(std::iter::once(line.len()));
    let start = offsets.nth(a).unwrap_or(line.len());
    let end = if b > a {
        offsets.nth(b - a - 1).unwrap_or(line.len())
    } else {
        start
    };
    &line[start..end.max(start)]
}

pub(crate) fn cells<'a>(line: &'a str, split: &Split) -> Vec<&'a str> {
    match split {
        Split::Tokens(_) => line.split_whitespace().collect(),
        Split::Positions(cols) => cols
            .iter()
            .map(|&(a, b)| chars_slice(line, a, b).trim())
            .collect(),
    }
}

/// Cells of a header or units line. Its words need not sit exactly over the data
/// columns (a header is often wider or shifted), so with positional columns each word
/// goes to the column it overlaps most, or the nearest one.
pub(crate) fn lead_cells(line: &str, split: &Split) -> Vec<String> {
    let Split::Positions(cols) = split else {
        return line.split_whitespace().map(String::from).collect();
    };
    let mut out = vec![String::new(); cols.len()];
    let mut pos = 0;
    for word in line.split_whitespace() {
        let at = line[pos..].find(word).map_or(pos, |i| pos + i);
        pos = at + word.len();
        // Character positions, as the columns are.
        let start = line[..at].chars().count();
        let end = start + word.chars().count();
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
    let width = lines.iter().map(|l| l.chars().count()).max()?;
    if width > MAX_WIDTH {
        return None;
    }
    let mut used = vec![false; width];
    for l in lines {
        for (i, c) in l.chars().enumerate() {
            if !c.is_whitespace() {
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
///
/// The table starts after the header block of comment and `key: value` lines; failing
/// that, after any other preamble (`KEY = value` metadata, section markers, a title
/// block) that ends where the lines become a regular table running to the end of the
/// lines looked at, as long as the table starts cleanly and is at least half as long as
/// what precedes it.
pub(crate) fn sniff(text: &str) -> Option<Layout> {
    let all: Vec<&str> = text.lines().take(SNIFF_LINES + 100).collect();
    let block = all.iter().take_while(|l| is_block_line(l)).count();
    if let Some(layout) = sniff_from(&all, block) {
        return Some(layout);
    }
    let words = |l: &str| l.split_whitespace().count();
    (block + 1..all.len().min(MAX_PREAMBLE_LINES))
        .filter(|&k| {
            let (prev, line) = (all[k - 1], all[k]);
            // Where the lines change shape, and then start cleanly: the next rows split
            // into the same number of words (stray lines are not taken for rows).
            let n = words(line);
            let mut next = all[k..].iter().filter(|l| !l.trim().is_empty()).take(4);
            !line.trim().is_empty()
                && (prev.trim().is_empty() || words(prev) != n)
                && n >= 2
                && next.all(|l| words(l) == n)
        })
        .find_map(|k| {
            let rows = all[k..].iter().filter(|l| !l.trim().is_empty()).count();
            if rows * 2 < k {
                return None;
            }
            sniff_from(&all, k)
        })
}

/// The table layout of `all` after its first `block` lines.
fn sniff_from(all: &[&str], block: usize) -> Option<Layout> {
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

/// The character ranges of the words of a line.
pub(crate) fn word_spans(line: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in line.chars().chain(std::iter::once(' ')).enumerate() {
        match (c.is_whitespace(), start) {
            (false, None) => start = Some(i),
            (true, Some(s)) => {
                out.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    out
}

/// Widens the column extents `cols` (sorted, disjoint) to hold the non-blank runs of a
/// row: the sniffed rows may not show a field at its widest (a right-aligned day of year
/// is one character wide for its first nine days). A run overlapping one column extends
/// it; a run in a gap joins the column it is one blank away from (a word of a cell with
/// spaces), or starts a new column where a word of the header (`header`, its word
/// spans) names one that the sniffed rows left empty; a run over several columns (a
/// stray line) changes nothing. Columns never grow into each other.
pub(crate) fn widen(cols: &mut Vec<(usize, usize)>, header: &[(usize, usize)], line: &str) {
    for (s, e) in word_spans(line) {
        if s >= MAX_WIDTH {
            break;
        }
        let first = cols.partition_point(|&(_, b)| b <= s);
        let last = cols.partition_point(|&(a, _)| a < e);
        // Columns first..last overlap the run [s, e).
        let target = match last.checked_sub(first) {
            Some(1) => Some(first),
            Some(0) => {
                let left = first.checked_sub(1).filter(|&i| s - cols[i].1 <= 1);
                let right = (first < cols.len() && cols[first].0 - e <= 1).then_some(first);
                let named = || {
                    let lo = first.checked_sub(1).map_or(0, |i| cols[i].1 + 1);
                    let hi = cols
                        .get(first)
                        .map_or(usize::MAX, |c| c.0.saturating_sub(1));
                    header
                        .iter()
                        .any(|&(a, b)| a < e && s < b && a >= lo && b <= hi)
                };
                if left.is_none() && right.is_none() && named() {
                    cols.insert(first, (s, e));
                    continue;
                }
                left.or(right)
            }
            _ => None,
        };
        let Some(i) = target else { continue };
        let lo = if i == 0 { 0 } else { cols[i - 1].1 };
        let hi = cols.get(i + 1).map_or(usize::MAX, |c| c.0);
        cols[i].0 = cols[i].0.min(s).max(lo);
        cols[i].1 = cols[i].1.max(e).min(hi);
    }
}
