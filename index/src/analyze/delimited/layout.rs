//! Where a table starts in a run of records: title lines and notes above it, a grouping
//! row over its header, the header itself, and the first body row — found by where the
//! columns become type-consistent, not by taking row 1.

use super::sniff::{class, year_like, Cls, HeadRec, PURITY};
use crate::analyze::regions;
use crate::analyze::rules::{self, ReadingRule};

/// Grouping rows (`,,Site A,,Site B,`) merged into the header at most.
const MAX_GROUP_ROWS: usize = 3;
/// Leading body rows left out of the type signature, at most: they may still be header
/// rows (a grouping row, a second header line).
const SIGNATURE_SKIP: usize = 3;

/// The type each column's body keeps, read from body rows.
#[derive(Debug, Clone, Default)]
pub(super) struct Signature {
    /// The class of each column when at least [`PURITY`] of its values have it.
    cols: Vec<Option<Cls>>,
    /// Numeric columns whose values are all years: a year there is data, not a header.
    years: Vec<bool>,
}

impl Signature {
    pub(super) fn of<'a>(rows: impl IntoIterator<Item = &'a HeadRec>) -> Signature {
        let mut counts: Vec<[usize; 4]> = Vec::new();
        let mut years: Vec<bool> = Vec::new();
        for r in rows {
            for (i, f) in r.fields.iter().enumerate() {
                let Some(c) = class(f) else { continue };
                if counts.len() <= i {
                    counts.resize(i + 1, [0; 4]);
                    years.resize(i + 1, true);
                }
                counts[i][c as usize] += 1;
                if c == Cls::Num && !year_like(f) {
                    years[i] = false;
                }
            }
        }
        let all = [Cls::Num, Cls::Date, Cls::Bool, Cls::Text];
        let cols = counts
            .iter()
            .map(|c| {
                let n: usize = c.iter().sum();
                let (k, &top) = c.iter().enumerate().max_by_key(|(_, v)| **v)?;
                (n > 0 && top as f64 >= PURITY * n as f64).then_some(all[k])
            })
            .collect();
        Signature { cols, years }
    }

    /// Whether some column has a type other than text.
    pub(super) fn typed(&self) -> bool {
        self.cols
            .iter()
            .any(|c| matches!(c, Some(c) if *c != Cls::Text))
    }

    /// (cells agreeing with a typed column, cells contradicting their column).
    fn agreement(&self, fields: &[String]) -> (usize, usize) {
        let (mut agree, mut contradict) = (0, 0);
        for (i, f) in fields.iter().enumerate() {
            let (Some(Some(want)), Some(c)) = (self.cols.get(i), class(f)) else {
                continue;
            };
            let year_over_numbers = c == Cls::Num && year_like(f) && !self.years[i];
            if c != *want || year_over_numbers {
                contradict += 1;
            } else if c != Cls::Text {
                agree += 1;
            }
        }
        (agree, contradict)
    }

    /// A row that reads like the body: nothing contradicts a column's type, and some
    /// typed column agrees (any row, when no column is typed).
    pub(super) fn data_like(&self, r: &HeadRec) -> bool {
        let (agree, contradict) = self.agreement(&r.fields);
        contradict == 0 && (agree > 0 || !self.typed())
    }

    /// A row that can be a header: at least two names (one in a one-column table), every
    /// one of them text or a year, and not a body row.
    pub(super) fn headerish(&self, r: &HeadRec) -> bool {
        let min = if self.cols.len() <= 1 { 1 } else { 2 };
        r.filled() >= min
            && r.fields.iter().all(|f| match class(f) {
                None | Some(Cls::Text) => true,
                Some(Cls::Num) => year_like(f),
                _ => false,
            })
            && (!self.typed() || !self.data_like(r))
    }
}

impl Signature {
    /// A row that heads columns like these: header-like, and a name (text, or a year
    /// over numbers that are not years) in every typed column, of which there are two
    /// or more — not a data row with gaps, missing-value markers or a word in one
    /// column.
    pub(super) fn heads(&self, r: &HeadRec) -> bool {
        // One word in the one typed column (`Unknown` among dates) is a value written
        // in words; a header names two typed columns or more.
        let typed = self
            .cols
            .iter()
            .filter(|c| matches!(c, Some(c) if *c != Cls::Text))
            .count();
        typed >= 2
            && self.headerish(r)
            && self.first_typed().is_some_and(|i| i < r.fields.len())
            && self.cols.iter().enumerate().all(|(i, c)| match c {
                // A narrower header names the columns it has.
                Some(c) if *c != Cls::Text => r.fields.get(i).is_none_or(|f| match class(f) {
                    Some(Cls::Text) => true,
                    Some(Cls::Num) => year_like(f) && !self.years[i],
                    _ => false,
                }),
                _ => true,
            })
    }

    /// Whether some column holds data beyond text and years (a year is a title's too).
    pub(super) fn holds_data(&self) -> bool {
        self.cols.iter().enumerate().any(|(i, c)| match c {
            Some(Cls::Text) | None => false,
            Some(Cls::Num) => !self.years[i],
            Some(_) => true,
        })
    }

    /// The first column of a type other than text.
    pub(super) fn first_typed(&self) -> Option<usize> {
        self.cols
            .iter()
            .position(|c| matches!(c, Some(c) if *c != Cls::Text))
    }

    /// Whether the first column holds text.
    pub(super) fn text_first(&self) -> bool {
        matches!(self.cols.first(), Some(Some(Cls::Text)))
    }
}

/// Rows a table has at least before a row of names under it starts a table of its own.
pub(super) const STACKED_MIN_ROWS: usize = 3;

/// No two cells alike.
pub(super) fn distinct(cells: &[String]) -> bool {
    let mut seen = std::collections::HashSet::new();
    cells.iter().all(|c| seen.insert(c.trim()))
}

/// Where a table starts among the records.
#[derive(Debug, Clone)]
pub(super) struct Found {
    /// The first record of the table (grouping row, header or body); earlier ones are
    /// preamble.
    pub start: usize,
    /// The first body record.
    pub body: usize,
    /// Column names, grouping labels merged in; `None` for a table without header.
    pub names: Option<Vec<String>>,
    /// Grouping rows merged into the names.
    pub groups: usize,
    /// The body's column types, to tell where the table ends.
    pub signature: Signature,
    /// A one-column list read without a header: its first value is of the same kind as
    /// the rest ([`ReadingRule::HeaderlessList`]).
    pub headerless_list: bool,
}

/// The first table among `rows`, if any row holds data.
pub(super) fn find(rows: &[HeadRec]) -> Option<Found> {
    let wide: Vec<usize> = (0..rows.len())
        .filter(|&i| !rows[i].comment && rows[i].filled() >= 2)
        .collect();
    if wide.is_empty() {
        // One column: no titles to tell apart; the first row heads it unless it reads
        // like the rest.
        let first = rows.iter().position(|r| !r.comment && r.filled() >= 1)?;
        let sig = Signature::of(&rows[first + 1..]);
        let header = (sig.headerish(&rows[first]) || rows.len() == first + 1)
            && class(&rows[first].fields[0]) == Some(Cls::Text);
        let rest: Vec<&str> = rows[first + 1..]
            .iter()
            .filter(|r| !r.comment)
            .filter_map(|r| r.fields.first().map(String::as_str))
            .collect();
        let list = header
            && !sig.typed()
            && rules::on(ReadingRule::HeaderlessList)
            && regions::headerless_list(&rows[first].fields[0], &rest);
        let mut f = found(rows, first, (header && !list).then_some(first), 0, sig);
        f.headerless_list = list;
        return Some(f);
    }
    let mut freq: Vec<(usize, usize)> = Vec::new();
    for &i in &wide {
        let n = rows[i].fields.len();
        match freq.iter_mut().find(|(c, _)| *c == n) {
            Some(f) => f.1 += 1,
            None => freq.push((n, 1)),
        }
    }
    let width = freq.iter().max_by_key(|(len, n)| (*n, *len))?.0;
    let mut first = *wide
        .iter()
        .find(|&&i| rows[i].fields.len() == width)
        .unwrap_or(&wide[0]);
    // A `#` line just above the table that splits like it is its commented-out header
    // (`#featureID,row ID,...`, VCF's `#CHROM`): the table starts there.
    if first > 0 {
        let p = &rows[first - 1];
        if p.comment && p.fields.len() == width && p.line + 1 == rows[first].line {
            first -= 1;
        }
    }
    // The block ends at an empty row, or where a table of another width starts below:
    // after a blank line, or at a row of names over a row of its width that is not.
    let names = |r: &HeadRec| {
        r.filled() >= 2
            && r.fields.iter().all(|f| match class(f) {
                None | Some(Cls::Text) => true,
                Some(Cls::Num) => year_like(f),
                _ => false,
            })
    };
    let block_end = |first: usize| {
        (first + 1..rows.len())
            .find(|&i| {
                let other = rows[i].fields.len() != rows[first].fields.len();
                rows[i].filled() == 0
                    || (other && rows[i].line > rows[i - 1].line + 1)
                    || (other
                        && i >= first + 2
                        && names(&rows[i])
                        && rows
                            .get(i + 1)
                            .is_some_and(|n| n.fields.len() == rows[i].fields.len() && !names(n)))
            })
            .unwrap_or(rows.len())
    };
    let mut end = block_end(first);
    // A line or two of text cut off by an empty row from a table below is its title
    // block (`,,Key figures,,2011` over `,,in euro per inhabitant`), not a table.
    while end - first <= 2 && !Signature::of(&rows[first..end]).holds_data() {
        let Some(next) = (end..rows.len())
            .find(|&i| !rows[i].comment && rows[i].filled() >= 2 && rows[i].fields.len() == width)
        else {
            break;
        };
        first = next;
        end = block_end(first);
    }
    if rules::on(ReadingRule::StackedTables) {
        end = first + stacked_header(&rows[first..end]).unwrap_or(end - first);
    }
    let block = &rows[first..end];
    let skip = (block.len() / 2).min(SIGNATURE_SKIP);
    let sig = Signature::of(&block[skip..]);
    let header = if sig.typed() {
        // The header is the last header-like row above the first body-like one.
        let body = (0..block.len())
            .find(|&i| sig.data_like(&block[i]))
            .unwrap_or(block.len());
        (0..body).rev().find(|&i| sig.headerish(&block[i]))
    } else {
        // All text: by convention the first row names the columns, unless it repeats
        // a value (then it is one more row).
        let mut seen = std::collections::HashSet::new();
        let repeats = block[0]
            .fields
            .iter()
            .any(|v| !v.trim().is_empty() && !seen.insert(v.trim()));
        (!repeats || block[0].comment).then_some(0)
    };
    let groups = match header {
        Some(h) if rules::on(ReadingRule::HeaderDepth) => grouping_rows(rows, first + h),
        _ => 0,
    };
    Some(found(rows, first, header.map(|h| first + h), groups, sig))
}

/// Where a second table stacked in `block` starts, right below the first with no line
/// between: a row of distinct names (text or years) in every cell that heads the typed
/// columns of the rows above it, with a row of data under it. The first table has a
/// header and [`STACKED_MIN_ROWS`] rows at least: one odd row under a header is more
/// likely a row written in words than a table.
fn stacked_header(block: &[HeadRec]) -> Option<usize> {
    let names_only = |r: &HeadRec| {
        !r.comment
            && r.filled() >= 2
            && r.filled() == r.fields.len()
            && distinct(&r.fields)
            && r.fields.iter().all(|f| match class(f) {
                None | Some(Cls::Text) => true,
                Some(Cls::Num) => year_like(f),
                _ => false,
            })
    };
    (STACKED_MIN_ROWS + 1..block.len().saturating_sub(1)).find(|&k| {
        let (h, next) = (&block[k], &block[k + 1]);
        names_only(h) && !names_only(next) && {
            let sig = Signature::of(&block[1..k]);
            // Under a header of another width the data is the new table's own.
            let data = if h.fields.len() == block[1].fields.len() {
                sig.data_like(next)
            } else {
                next.fields.len() == h.fields.len()
            };
            sig.heads(h) && data
        }
    })
}

fn found(
    rows: &[HeadRec],
    first: usize,
    header: Option<usize>,
    groups: usize,
    sig: Signature,
) -> Found {
    let Some(h) = header else {
        return Found {
            start: first,
            body: first,
            names: None,
            groups: 0,
            signature: sig,
            headerless_list: false,
        };
    };
    let mut names: Vec<String> = rows[h].fields.clone();
    for g in (h - groups..h).rev() {
        names = merge_group(&rows[g].fields, &names);
    }
    Found {
        start: h - groups,
        body: h + 1,
        names: Some(names),
        groups,
        signature: sig,
        headerless_list: false,
    }
}

/// Grouping rows directly above the header at `h`: on the line just above, as wide, all
/// text or years, and laid out over it: the first cell empty with two labels or more
/// (one over another grouping row), fewer than the row below (labels sit over the data
/// columns), or a label whose
/// span runs on over names below (`2020` over `Estimate,MOE`) beside a label standing
/// over an empty cell (`Region` over nothing: the name is the upper one).
fn grouping_rows(rows: &[HeadRec], h: usize) -> usize {
    let mut n = 0;
    while n < MAX_GROUP_ROWS && h > n {
        let (g, below) = (&rows[h - n - 1], &rows[h - n]);
        let labels_ok = g.fields.iter().all(|f| match class(f) {
            None | Some(Cls::Text) => true,
            Some(Cls::Num) => year_like(f),
            _ => false,
        });
        let empty = |r: &HeadRec, i: usize| r.fields.get(i).is_none_or(|f| f.trim().is_empty());
        // One label over data columns is enough when a grouping row is below it.
        let least = if n > 0 { 1 } else { 2 };
        let over_data = g.fields.first().is_some_and(|f| f.trim().is_empty())
            && g.filled() >= least
            && (g.filled() < below.filled() || n > 0);
        // Names where the row below has none (`,,Groningen,Friesland` over
        // `NR.,Cluster,,`): the two rows name the columns together.
        // A lone label at the left is a title, not names.
        let complements =
            g.filled() >= 2 && (0..g.fields.len()).all(|i| empty(g, i) || empty(below, i));
        let spans = (1..g.fields.len())
            .any(|i| !empty(g, i - 1) && empty(g, i) && !empty(below, i) && !empty(below, i - 1));
        let stands = (0..g.fields.len()).any(|i| !empty(g, i) && empty(below, i));
        let is_group = !g.comment
            && g.line + 1 == below.line
            && g.fields.len() == below.fields.len()
            && (over_data || (spans && stands) || complements)
            && g.filled() < below.fields.len()
            && labels_ok;
        if !is_group {
            break;
        }
        n += 1;
    }
    n
}

/// Names under a grouping row: each label forward-filled up to the next one and put in
/// front of the names below it (`Site A / Count`). A label over an empty name is that
/// column's name alone and spans nothing (`Region` over nothing, then `2020` over
/// `Estimate`).
fn merge_group(group: &[String], names: &[String]) -> Vec<String> {
    let mut label = "";
    names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            if let Some(g) = group.get(i).map(|g| g.trim()).filter(|g| !g.is_empty()) {
                label = g;
                if n.trim().is_empty() {
                    let own = g.to_string();
                    label = "";
                    return own;
                }
            }
            match (label, n.trim()) {
                ("", _) => n.clone(),
                // A span ends at a column without a name below.
                (_, "") => {
                    label = "";
                    n.clone()
                }
                (l, n) => format!("{l} / {n}"),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::sniff::records;
    use super::*;

    fn layout(text: &str) -> (Found, Vec<HeadRec>) {
        let rows = records(text.as_bytes(), b',', true, 100);
        (find(&rows).unwrap(), rows)
    }

    #[test]
    fn the_header_is_where_types_settle() {
        let (f, _) = layout("Complaints by Category,,,\n,,,\nCategory,2019,2020,2021\nNoise,12,5,6\nHeat,7,8,9\nWater,1,2,3\n");
        assert_eq!((f.start, f.body), (2, 3));
        assert_eq!(f.names.unwrap(), ["Category", "2019", "2020", "2021"]);
        let (f, _) = layout("1,2.5,x\n2,3.5,y\n3,4.5,z\n");
        assert_eq!((f.names, f.body), (None, 0));
    }

    #[test]
    fn a_grouping_row_is_merged_into_the_names() {
        let (f, _) = layout(",,Site A,,Site B,\nDate,Kind,Flag,Count,Flag,Count\n2020-01-01,a,x,1,y,2\n2020-01-02,b,x,3,y,4\n2020-01-03,a,x,5,y,6\n");
        assert_eq!((f.start, f.body, f.groups), (0, 2, 1));
        assert_eq!(
            f.names.unwrap(),
            [
                "Date",
                "Kind",
                "Site A / Flag",
                "Site A / Count",
                "Site B / Flag",
                "Site B / Count"
            ]
        );
    }
}
