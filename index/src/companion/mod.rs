//! Companion documentation: a file that documents a headerless data file beside it (a
//! format description listing the columns of `.dat` files, a `*_variabledescrip.csv`
//! data dictionary beside a `.csv`).
//!
//! A link is a property of the lake, not of one file's content, so it never enters the
//! content-addressed description cache. The indexer recomputes the links of every folder
//! in which a file changed (`indexer::relink`, after the files are described), the catalog keeps
//! them in its `companions` table, and readers apply them to the cached descriptions
//! ([`apply_data`], [`apply_doc`]) through [`crate::catalog::CatalogReader::file_description`]:
//! the data file's `column_1…` become the documented names (with units), its `load` line
//! names them, and both descriptions name the other file.
//!
//! - [`parse`] reads a documentation file into its list of columns;
//! - [`matcher`] pairs documentation files with the data files of one folder;
//! - [`lookup`] links small lookup tables to the data files whose column values their key
//!   holds;
//! - the indexer's step that writes the links, `indexer::relink`, lives with the
//!   indexer: this module is pure (the catalog uses it), that step writes the catalog;
//! - [`summary`] tells a collection's summary table (a row per member) from the tables
//!   beside it, at search time.
//!
//! Search returns a hit's companions with it ([`Companion`], read by
//! [`crate::catalog::CatalogReader::companions`]).

pub mod fit;
pub mod lookup;
pub mod matcher;
pub mod parse;
pub mod summary;
#[cfg(test)]
mod tests;

use crate::analyze::rules::ReadingRule;
use crate::analyze::{ColumnProfile, Content, Description};
use crate::text_util::cut_chars;
use serde::{Deserialize, Serialize};

/// Documentation files larger than this are not read: a format description or a data
/// dictionary is a few kilobytes, and every candidate of a changed folder is read.
pub const DOC_MAX_BYTES: u64 = 256 * 1024;

/// Longest note of column meanings added to a data file's description, in characters.
const MEANINGS_MAX_CHARS: usize = 600;

/// One column as a documentation file lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DocColumn {
    /// The column's name.
    pub name: String,
    /// Its unit, when the documentation states one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
    /// What it holds, when the documentation says more than the name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// A field's characters in a fixed-width line, (start, end): counted from 0, end
/// excluded, as pandas' `colspecs` are.
pub type Span = (usize, usize);

/// The columns a documentation file lists, and where a fixed-width line holds them
/// when it says so.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Listing {
    /// The columns, in the data's order.
    pub columns: Vec<DocColumn>,
    /// Each column's characters (start, end), counted from 0, end excluded: from a
    /// Fortran format, ranges (`1-4`), starts and ends, or widths.
    pub spans: Option<Vec<Span>>,
    /// Per column, whether its format code makes it a number (`I4`, `F6.1`: yes; `A10`:
    /// no); `None` without a code.
    pub numeric: Vec<Option<bool>>,
    /// Whether its column count alone may name a data file's columns: the usual layouts
    /// of documentation (dictionaries, `Column 3: …`, format-code lines) may; a bare
    /// list of ranges or widths names only the files whose lines it fits.
    pub count_ok: bool,
}

/// A documentation file and the data file it documents (lake-relative paths).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Link {
    /// The headerless data file.
    pub data: String,
    /// The file that documents it.
    pub doc: String,
    /// The documented columns, in the data file's order.
    pub columns: Vec<DocColumn>,
    /// Present when the link was made by content: the documentation's field positions
    /// fit the data file's lines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fit: Option<Fit>,
}

/// How a documentation file's field list fits a data file, by content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fit {
    /// Each column's characters (start, end), counted from 0, end excluded.
    pub spans: Vec<Span>,
    /// The data file's table read at these positions, when they split its lines
    /// otherwise than its own description does (fields written without blanks between
    /// them): the description shows this table instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table: Option<Box<crate::analyze::Table>>,
}

/// A file a person opens together with a search hit: what documents it, a lookup table
/// of its codes, the data a documentation hit documents.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Companion {
    /// Lake-relative path.
    pub path: String,
    /// Why it goes with the hit: `documents it`, `documented by it`, `lookup: state → name`.
    pub why: String,
}

/// The headerless table of a description whose columns documentation can name: its
/// column count, or `None` when the file has a header or is not one table.
pub fn headerless_columns(d: &Description) -> Option<usize> {
    d.content.headerless_columns()
}

/// Apply `link` to the description of its data file: the columns take the documented
/// names and units, the `load` line names them, a note names the documentation. A link
/// by content whose positions split the lines otherwise than the description shows the
/// table read at those positions. A description whose column count no longer matches
/// is left as it is.
pub fn apply_data(d: &mut Description, link: &Link) {
    if headerless_columns(d).is_none() {
        return;
    }
    let fit = link.fit.as_ref();
    if let (Some(table), Content::Table(t)) = (fit.and_then(|f| f.table.as_ref()), &mut d.content) {
        *t = (**table).clone();
    }
    if headerless_columns(d) != Some(link.columns.len()) {
        return;
    }
    let (columns, load): (&mut Vec<ColumnProfile>, &mut Option<String>) = match &mut d.content {
        Content::Table(t) => (&mut t.columns, &mut t.load),
        Content::Tables(ts) => {
            let t = &mut ts.tables[0];
            (&mut t.columns, &mut t.load)
        }
        Content::Json(_)
        | Content::Text(_)
        | Content::Archive(_)
        | Content::Arrays(_)
        | Content::Media(_)
        | Content::Opaque(_) => return,
    };
    for (c, doc) in columns.iter_mut().zip(&link.columns) {
        c.name = doc.name.clone();
        if doc.unit.is_some() {
            c.unit = doc.unit.clone();
        }
    }
    let names: Vec<&str> = link.columns.iter().map(|c| c.name.as_str()).collect();
    if let Some(call) = load.as_mut() {
        *call = with_names(call, &names);
    }
    match fit {
        Some(f) => {
            // A decision on the file's content: counted and said, as reading rules are.
            *d.rules
                .entry(ReadingRule::FormatCompanion.name().to_string())
                .or_default() += link.columns.len() as u64;
            d.notes.push(format!(
                "columns named by {} (its field list: {} fields at characters {}, which fit the lines)",
                link.doc,
                link.columns.len(),
                spans_text(&f.spans)
            ));
            if f.table.is_some() {
                d.notes.push(
                    "fields read at the documented positions: the data writes some without a blank between them"
                        .into(),
                );
            }
        }
        None => d.notes.push(format!("columns named by {}", link.doc)),
    }
    if let Some(m) = meanings(&link.columns) {
        d.notes.push(m);
    }
}

/// Data files a documentation file's note names; past them, it counts the rest.
const DOCUMENTED_NAMED: usize = 5;

/// Apply to a documentation file's description the data files it documents.
pub fn apply_doc(d: &mut Description, data: &[String]) {
    match data {
        [] => {}
        [one] => d.notes.push(format!("documents {one}")),
        many => {
            let mut named = many[..many.len().min(DOCUMENTED_NAMED)].join(", ");
            if many.len() > DOCUMENTED_NAMED {
                named.push_str(", …");
            }
            d.notes.push(format!(
                "documents the fields of {} files: {named}",
                many.len()
            ));
        }
    }
}

/// `1-4, 5-6, 7-12`: spans as the characters they cover, counted from 1, cut to a
/// dozen.
fn spans_text(spans: &[(usize, usize)]) -> String {
    let mut parts: Vec<String> = spans
        .iter()
        .take(12)
        .map(|(a, b)| format!("{}-{}", a + 1, b))
        .collect();
    if spans.len() > 12 {
        parts.push("…".into());
    }
    parts.join(", ")
}

/// "column meanings: TEMP = air temperature; …", cut to [`MEANINGS_MAX_CHARS`]: what the
/// documentation says beyond the names, for the reader and for search.
fn meanings(columns: &[DocColumn]) -> Option<String> {
    let parts: Vec<String> = columns
        .iter()
        .filter_map(|c| {
            let d = c.description.as_deref()?.trim();
            (!d.is_empty() && !d.eq_ignore_ascii_case(&c.name)).then(|| format!("{} = {d}", c.name))
        })
        .collect();
    if parts.is_empty() {
        return None;
    }
    Some(cut_chars(
        &format!("column meanings: {}", parts.join("; ")),
        MEANINGS_MAX_CHARS,
    ))
}

/// `call` with its `names=[…]` argument set to `names` (added before the closing
/// parenthesis when it has none), so that the load line yields the documented columns.
pub fn with_names(call: &str, names: &[&str]) -> String {
    let list = format!(
        "[{}]",
        names
            .iter()
            .map(|n| serde_json::to_string(n).unwrap_or_else(|_| format!("{n:?}")))
            .collect::<Vec<_>>()
            .join(", ")
    );
    match find_names_arg(call) {
        Some((start, end)) => format!("{}{list}{}", &call[..start], &call[end..]),
        None => match call.rfind(')') {
            Some(close) => {
                let head = call[..close].trim_end();
                let sep = if head.ends_with('(') { "" } else { ", " };
                format!("{head}{sep}names={list}{}", &call[close..])
            }
            None => call.to_string(),
        },
    }
}

/// The byte range of the list after `names=` outside string literals: from its `[` to
/// just past its matching `]`.
fn find_names_arg(call: &str) -> Option<(usize, usize)> {
    use crate::analyze::pycall;
    pycall::word_at(call, "names").into_iter().find_map(|at| {
        // `names` is ASCII: `at + 5` is a character boundary.
        let list = call[at + 5..].trim_start().strip_prefix('=')?.trim_start();
        let start = call.len() - list.len();
        list.starts_with('[')
            .then(|| pycall::list_end(call, start).map(|end| (start, end)))
            .flatten()
    })
}

#[cfg(test)]
mod unit {
    use super::*;

    #[test]
    fn the_names_argument_is_replaced_or_added() {
        assert_eq!(
            with_names(
                r#"pd.read_csv(path, header=None, names=["column_1", "column_2"])"#,
                &["a", "b \"c\""]
            ),
            r#"pd.read_csv(path, header=None, names=["a", "b \"c\""])"#
        );
        assert_eq!(
            with_names(
                r#"pd.read_fwf(path, colspecs=[(0, 4), (4, 8)], header=None, names=['x]', 'y'], comment="names=[")"#,
                &["YEAR", "DAY"]
            ),
            r#"pd.read_fwf(path, colspecs=[(0, 4), (4, 8)], header=None, names=["YEAR", "DAY"], comment="names=[")"#
        );
        assert_eq!(
            with_names("pd.read_csv(path, header=None)", &["a"]),
            r#"pd.read_csv(path, header=None, names=["a"])"#
        );
        assert_eq!(
            with_names("pd.read_csv(path, sep=',', colnames=[1])", &["a"]),
            r#"pd.read_csv(path, sep=',', colnames=[1], names=["a"])"#
        );
    }

    #[test]
    fn a_link_renames_a_headerless_table_and_notes_both_sides() {
        let mut d = crate::analyze::describe(&crate::analyze::Source::from_bytes(
            "x.csv",
            b"a,1,2.5\nb,2,3.5\nc,3,4.5\n".to_vec(),
        ));
        if let Content::Table(t) = &mut d.content {
            t.load = Some(
                r#"pd.read_csv(path, header=None, names=["column_1", "column_2", "column_3"])"#
                    .into(),
            );
        }
        let col = |n: &str, u: Option<&str>, d: Option<&str>| DocColumn {
            name: n.into(),
            unit: u.map(Into::into),
            description: d.map(Into::into),
        };
        let link = Link {
            data: "x.csv".into(),
            doc: "x_variabledescrip.csv".into(),
            columns: vec![
                col("site", None, Some("Site code")),
                col("count", Some("birds"), None),
                col("mass", Some("g"), Some("mass")),
            ],
            fit: None,
        };
        apply_data(&mut d, &link);
        let Content::Table(t) = &d.content else {
            panic!("a table")
        };
        let names: Vec<&str> = t.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["site", "count", "mass"]);
        assert_eq!(t.columns[2].unit.as_deref(), Some("g"));
        assert_eq!(
            t.load.as_deref(),
            Some(r#"pd.read_csv(path, header=None, names=["site", "count", "mass"])"#)
        );
        assert_eq!(
            d.notes,
            [
                "columns named by x_variabledescrip.csv",
                "column meanings: site = Site code"
            ]
        );
        // Another column count: the link no longer fits, nothing is renamed.
        let mut short = link.clone();
        short.columns.pop();
        let mut d2 = d.clone();
        apply_data(&mut d2, &short);
        assert_eq!(d2, d);
        let mut doc = d.clone();
        doc.notes.clear();
        apply_doc(&mut doc, &["x.csv".into()]);
        assert_eq!(doc.notes, ["documents x.csv"]);
    }
}
