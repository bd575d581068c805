//! Where a table starts in a run of records: title lines and notes above it, a grouping
//! row over its header, the header itself, and the first body row — found by where the
//! columns become type-consistent, not by taking row 1.

use super::sniff::{class, year_like, Cls, HeadRec, PURITY};

/// Grouping rows (`,,Site A,,Site B,`) merged into the header at most.
const MAX_GROUP_ROWS: usize = 2;
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
        return Some(found(rows, first, header.then_some(first), 0, sig));
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
    let end = (first + 1..rows.len())
        .find(|&i| rows[i].filled() == 0)
        .unwrap_or(rows.len());
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
        Some(h) => grouping_rows(rows, first + h),
        None => 0,
    };
    Some(found(rows, first, header.map(|h| first + h), groups, sig))
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
    }
}

/// Grouping rows directly above the header at `h`: on the line just above, as wide,
/// the first cell empty (labels sit over the data columns), two labels or more, all text
/// or years, fewer names than the row below.
fn grouping_rows(rows: &[HeadRec], h: usize) -> usize {
    let mut n = 0;
    while n < MAX_GROUP_ROWS && h > n {
        let (g, below) = (&rows[h - n - 1], &rows[h - n]);
        let labels_ok = g.fields.iter().all(|f| match class(f) {
            None | Some(Cls::Text) => true,
            Some(Cls::Num) => year_like(f),
            _ => false,
        });
        let is_group = !g.comment
            && g.line + 1 == below.line
            && g.fields.len() == below.fields.len()
            && g.fields.first().is_some_and(|f| f.trim().is_empty())
            && g.filled() >= 2
            && g.filled() < below.filled()
            && labels_ok;
        if !is_group {
            break;
        }
        n += 1;
    }
    n
}

/// Names under a grouping row: each label forward-filled up to the next one and put in
/// front of the names below it (`Site A / Count`).
fn merge_group(group: &[String], names: &[String]) -> Vec<String> {
    let mut label = "";
    names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            if let Some(g) = group.get(i).map(|g| g.trim()).filter(|g| !g.is_empty()) {
                label = g;
            }
            match (label, n.trim()) {
                ("", _) => n.clone(),
                (l, "") => l.to_string(),
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
