//! The pandas call that loads one sheet's table as described: `pd.read_excel` with the
//! sheet, the header row (or generated names below the skipped rows) and the columns of
//! the used range.
//!
//! pandas counts sheet rows as stored, blank ones included: `header=N` is the 0-based
//! sheet row of the header, and blank rows inside the table come back as rows of NaN,
//! so a table with such rows (which the description does not count) drops them. A table
//! with rows below it (notes, summaries, a table stacked under it) stops at `nrows`, which
//! counts sheet rows from the first data row; one of several header rows is given its
//! flattened names with `header=None`.

use super::{col_letters, GridRow, MAX_CELL_BYTES};
use crate::analyze::collapse;

/// Where the described table sits in its sheet.
pub(super) struct Placement<'a> {
    /// The sheet's name.
    pub sheet: &'a str,
    /// The header's last row, when the table has a header.
    pub header: Option<&'a GridRow>,
    /// Header rows: more than one are merged into the described names, so pandas is
    /// given the names rather than a header row.
    pub header_rows: usize,
    /// 0-based sheet row of the first data row, when there is one.
    pub first_data_row: Option<u32>,
    /// 0-based first and last column of the table.
    pub cols: (u32, u32),
    /// The described column names, in order.
    pub names: &'a [String],
    /// Blank sheet rows lie between the first and the last data row.
    pub blank_rows_inside: bool,
    /// Sheet rows from the first data row to the last, when more follows below them
    /// (notes, summary rows, another table).
    pub nrows: Option<u64>,
}

/// The call, `path` standing for the file; None for a sheet with no table.
pub(super) fn call(p: &Placement<'_>) -> Option<String> {
    let (first, last) = p.cols;
    if p.names.is_empty() || (p.header.is_none() && p.first_data_row.is_none()) {
        return None;
    }
    let mut args = vec![format!("sheet_name={}", py_str(p.sheet))];
    let as_written = p
        .header
        .filter(|h| p.header_rows <= 1 && pandas_names_match(h, p.names, first, last));
    let mut rename = None;
    match (as_written, p.header) {
        (Some(h), _) => args.push(format!("header={}", h.row)),
        (None, header) => {
            // Skip through the header row (if any) and name the columns ourselves.
            let skip = match header {
                Some(h) => h.row + 1,
                None => p.first_data_row.unwrap_or(0),
            };
            args.push("header=None".into());
            if skip > 0 {
                args.push(format!("skiprows={skip}"));
            }
            let list = format!(
                "[{}]",
                p.names
                    .iter()
                    .map(|n| py_str(n))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            if distinct(p.names) {
                args.push(format!("names={list}"));
            } else {
                // `names=` refuses duplicates; `set_axis` keeps them as described.
                rename = Some(list);
            }
        }
    }
    args.push(format!(
        "usecols=\"{}:{}\"",
        col_letters(first),
        col_letters(last)
    ));
    if let Some(n) = p.nrows {
        args.push(format!("nrows={n}"));
    }
    let mut call = format!("pd.read_excel(path, {})", args.join(", "));
    if let Some(list) = rename {
        call.push_str(&format!(".set_axis({list}, axis=1)"));
    }
    if p.blank_rows_inside {
        call.push_str(".dropna(how=\"all\")");
    }
    Some(call)
}

/// Whether pandas, reading `header` as the header row, names the columns exactly
/// `names`: every cell a string as written (not cut, not reflowed), none missing, none
/// repeated in the row (pandas would rename `a` to `a.1`).
fn pandas_names_match(header: &GridRow, names: &[String], first: u32, last: u32) -> bool {
    let width = (last - first + 1) as usize;
    // pandas renames a name seen earlier in the whole header row, left of `usecols` too.
    let outside_repeats = header
        .cells
        .iter()
        .any(|c| c.col < first && names.contains(&c.text));
    names.len() == width
        && !outside_repeats
        && distinct(names)
        && (first..=last).zip(names).all(|(col, name)| {
            header.cells.iter().any(|c| {
                c.col == col
                    && c.is_text
                    && c.text.len() < MAX_CELL_BYTES
                    && c.text == *name
                    && collapse(&c.text) == c.text
            })
        })
}

fn distinct(names: &[String]) -> bool {
    let mut seen: Vec<&str> = names.iter().map(String::as_str).collect();
    seen.sort_unstable();
    seen.windows(2).all(|w| w[0] != w[1])
}

/// A Python string literal: a JSON string is one.
fn py_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("{s:?}"))
}
