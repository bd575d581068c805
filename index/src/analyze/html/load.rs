//! The pandas call that loads one HTML table as described: `pd.read_html(path)[i]`.
//!
//! pandas (with lxml) returns the page's `<table>`s in document order, nested ones
//! included, leaving out those without text or without rows; its header is the
//! `<thead>` rows, else the leading rows made only of `<th>` cells; spans repeat their
//! text as here. A call is given only where pandas' reading is known to match the
//! description: tables holding other tables, hidden (`display`) parts, rows without
//! text, rowspans past the table and `<tfoot>`s (which pandas moves to the end, spans
//! and all) get none, and a table pandas may or may not return leaves the tables after
//! it without one (their index is unknown).

/// What pandas' reading of one table depends on, gathered while describing it.
#[derive(Default)]
pub(super) struct Shape {
    /// `<tr>`s with at least one cell.
    pub rows_with_cells: usize,
    /// `<tr>`s without cells.
    pub cell_less_rows: usize,
    /// `<tr>`s whose cells are all empty.
    pub blank_rows: usize,
    /// A data row (after the header) has text.
    pub data_text: bool,
    /// Some cell has text (nested tables' cells included).
    pub any_text: bool,
    /// A row without text that pandas may take as a header row (in `<thead>`, or of
    /// `<th>` cells only).
    pub blank_head_like: bool,
    /// The table holds another table (pandas takes the inner rows as its own too).
    pub holds_table: bool,
    /// A `style` attribute mentioning `display` in, on or above the table, or a `<style>`
    /// inside it: pandas drops `display:none` parts and `<style>` elements.
    pub styled: bool,
    /// Has a `<tfoot>`, a rowspan past the last row, or a rowspan from above right of a
    /// row's end (pandas lays those out differently).
    pub irregular: bool,
    /// Header rows pandas takes: the `<thead>` rows, else the leading all-`<th>` rows.
    pub pandas_head: usize,
    /// Header rows the description took.
    pub header_rows: usize,
    /// The description's header is a first row of text without `<th>`.
    pub first_row_header: bool,
    /// The widest row as pandas lays it out (trailing empty cells kept).
    pub width: usize,
    /// The one header row's cells as pandas reads them, where known (see `RawCell`).
    pub head_texts: Vec<Option<String>>,
}

/// Whether pandas' `read_html` returns a table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Found {
    Kept,
    /// No rows: pandas skips it (no text, or no data: `EmptyDataError`).
    Skipped,
    /// Cannot tell.
    Unknown,
}

impl Shape {
    /// pandas reads the table without failing (a failure fails the whole page's call):
    /// a row without cells or a header of blank rows can make it fail.
    pub(super) fn tame(&self) -> bool {
        self.cell_less_rows == 0 && !self.blank_head_like
    }

    pub(super) fn found(&self) -> Found {
        if self.styled {
            Found::Unknown
        } else if self.rows_with_cells == 0 && self.cell_less_rows == 0 {
            Found::Skipped
        } else if self.any_text && (self.data_text || self.holds_table) {
            Found::Kept
        } else {
            Found::Unknown
        }
    }

    /// The call for the table pandas returns as `index`, described with `names`.
    pub(super) fn call(&self, index: usize, names: &[String]) -> Option<String> {
        if self.found() != Found::Kept
            || self.holds_table
            || self.irregular
            || self.cell_less_rows > 0
            || self.blank_rows > 0
            || self.width != names.len()
            || names.is_empty()
        {
            return None;
        }
        let args = if self.first_row_header {
            // pandas sees no header (no `<th>`): name the columns by the first row.
            if self.pandas_head != 0 || self.header_rows != 1 {
                return None;
            }
            ", header=0"
        } else {
            if self.pandas_head != self.header_rows {
                return None;
            }
            ""
        };
        let call = format!("pd.read_html(path{args})[{index}]");
        if self.header_rows == 1 && self.pandas_names_match(names) {
            return Some(call);
        }
        let list: Vec<String> = names.iter().map(|n| py_str(n)).collect();
        Some(format!("{call}.set_axis([{}], axis=1)", list.join(", ")))
    }

    /// Whether pandas names the columns exactly `names` from the one header row: each
    /// cell's text known, non-empty, ASCII (pandas may decode the page by its
    /// `<meta charset>`) and not repeated (pandas would rename `a` to `a.1`).
    fn pandas_names_match(&self, names: &[String]) -> bool {
        let mut seen: Vec<&str> = names.iter().map(String::as_str).collect();
        seen.sort_unstable();
        self.head_texts.len() == names.len()
            && seen.windows(2).all(|w| w[0] != w[1])
            && self
                .head_texts
                .iter()
                .zip(names)
                .all(|(t, n)| t.as_deref() == Some(n.as_str()) && !n.is_empty() && n.is_ascii())
    }
}

/// A Python string literal: a JSON string is one.
fn py_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("{s:?}"))
}
