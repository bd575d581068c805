//! The first rows of a table (`lakestar head`, `GET /files/{path}/rows`), read with the
//! parsing that wrote the file's description.
//!
//! A preview is a description made to keep more rows: the analyzer that locates the
//! header, the data start, the delimiter, the sheet and the table's bounds runs as it
//! does for the index, keeping its first `n + 1` data rows whole (see [`Keep`]) instead of
//! three cut samples. JSON records, which a description summarizes as key paths rather
//! than as a table, are read as records here ([`json`]).

mod json;

use crate::analyze::{self, Content, Description, Format, Keep, Source};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Rows a preview shows when none are asked for.
pub const DEFAULT_ROWS: usize = 20;
/// Rows a preview shows at most (the same on every surface).
pub const MAX_ROWS: usize = 1000;
/// Bytes a preview reads of a large text file: its head and spread samples, as for a
/// description but a quarter of its budget, since the profile is not wanted. Only a
/// table that starts past the first half of it (in a report file of several tables
/// larger than this) would be found by a description and not here.
const PREVIEW_BUDGET: u64 = analyze::DEFAULT_BUDGET / 4;

/// The first rows of one table of a file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Preview {
    /// The format's name (`csv`, `excel`, `parquet`, …).
    pub format: String,
    /// The table shown.
    pub table: String,
    /// Every table of the file (sheets, database tables, tables of a report), in order.
    pub tables: Vec<String>,
    /// Column names as the description reads them.
    pub columns: Vec<String>,
    /// The rows, one cell per column: text, or `None` when empty or missing.
    pub rows: Vec<Vec<Option<String>>>,
    /// More rows follow.
    pub more: bool,
}

/// Why there is no preview. Every kind is the user's to act on; the message says how.
#[derive(Debug, thiserror::Error)]
pub enum PreviewError {
    /// A row count out of bounds.
    #[error("n must be between 1 and {MAX_ROWS}, not {0}")]
    BadCount(usize),
    /// The file could not be opened or read.
    #[error("{}: {source}", path.display())]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file holds no table.
    #[error("{what}, not a table: head shows tables (CSV/TSV, fixed-width, Excel/ODS, Parquet, JSON records, SQLite, HTML tables); `lakestar describe` shows what it holds")]
    NotTabular {
        /// What the file is, in words.
        what: String,
    },
    /// The file has tables, none by the name or number asked for.
    #[error("{}", unknown(name, tables))]
    UnknownTable {
        /// The name asked for.
        name: String,
        /// The names there are.
        tables: Vec<String>,
    },
    /// The analyzer could not read the file as its format.
    #[error("{format} that could not be read: {reason}")]
    Malformed {
        /// The format, in words.
        format: String,
        /// The analyzer's error.
        reason: String,
    },
}

/// Why `name` picks none of `tables`, and the tables to pick from, numbered.
fn unknown(name: &str, tables: &[String]) -> String {
    let asked = match table_number(name) {
        Some(n) => format!("no table {n}"),
        None => format!("no table named {name:?}"),
    };
    let has = match tables.len() {
        1 => "1 table".to_string(),
        n => format!("{n} tables"),
    };
    format!(
        "{asked}: the file has {has}, {}; pass a name or a number",
        numbered(tables)
    )
}

/// The tables as a person picks them: `1 "Sales", 2 "Targets"`.
fn numbered(names: &[String]) -> String {
    let shown: Vec<String> = names
        .iter()
        .take(50)
        .enumerate()
        .map(|(i, n)| format!("{} {n:?}", i + 1))
        .collect();
    let more = names.len().saturating_sub(50);
    if more > 0 {
        format!("{} and {more} more", shown.join(", "))
    } else {
        shown.join(", ")
    }
}

/// The place among `tables` of the table `name` picks: its name, else its name in
/// another case when only one table has it, else its number (1-based, as `head` lists
/// them; a table named like a number is found by its name first).
pub fn table_at(tables: &[String], name: &str) -> Result<usize, PreviewError> {
    tables
        .iter()
        .position(|t| t == name)
        .or_else(|| {
            let mut like = tables
                .iter()
                .enumerate()
                .filter(|(_, t)| t.eq_ignore_ascii_case(name));
            match (like.next(), like.next()) {
                (Some((i, _)), None) => Some(i),
                _ => None,
            }
        })
        .or_else(|| {
            table_number(name)
                .filter(|&n| n <= tables.len())
                .map(|n| n - 1)
        })
        .ok_or_else(|| PreviewError::UnknownTable {
            name: name.to_string(),
            tables: tables.to_vec(),
        })
}

/// `name` read as a table's number (1-based), when it is one.
fn table_number(name: &str) -> Option<usize> {
    name.trim().parse::<usize>().ok().filter(|&n| n > 0)
}

/// One table as an analyzer kept it: its name, columns and first rows.
struct Found {
    name: String,
    columns: Vec<String>,
    rows: Vec<Vec<String>>,
    /// Data rows in the whole table (may be an estimate).
    total: u64,
}

/// The first `n` rows of the table named `table` of the file at `path` (by default
/// the first table with rows).
pub fn head(path: &Path, table: Option<&str>, n: usize) -> Result<Preview, PreviewError> {
    if n == 0 || n > MAX_ROWS {
        return Err(PreviewError::BadCount(n));
    }
    let src = Source::open(path, crate::indexer::IN_MEMORY_LIMIT).map_err(|source| {
        PreviewError::Unreadable {
            path: path.to_path_buf(),
            source,
        }
    })?;
    head_of(src, path, table, n)
}

/// [`head`] of the object at `rel` (of `size` bytes) of an object-store lake: read by
/// ranged requests within the preview's budget, never whole when it is large.
pub fn head_object(
    lake: &std::sync::Arc<crate::store::ObjectLake>,
    rel: &str,
    size: u64,
    table: Option<&str>,
    n: usize,
) -> Result<Preview, PreviewError> {
    if n == 0 || n > MAX_ROWS {
        return Err(PreviewError::BadCount(n));
    }
    let obj = std::sync::Arc::new(lake.object(rel, size));
    let src = Source::from_remote(
        rel,
        obj,
        crate::indexer::IN_MEMORY_LIMIT.min(PREVIEW_BUDGET),
    )
    .map_err(|source| PreviewError::Unreadable {
        path: PathBuf::from(rel),
        source,
    })?;
    head_of(src, Path::new(rel), table, n)
}

/// The preview of `src`, the file at `path` (its name gives a lone table's name).
fn head_of(
    src: Source,
    path: &Path,
    table: Option<&str>,
    n: usize,
) -> Result<Preview, PreviewError> {
    let src = src
        .with_budget(Some(PREVIEW_BUDGET))
        .with_keep(Keep::rows(n + 1));
    let format = analyze::detect(src.path(), src.head(), src.size());
    let stem = path
        .file_stem()
        .map_or_else(|| "table".into(), |s| s.to_string_lossy().into_owned());
    let found = match format {
        Format::Json | Format::Jsonl => json::tables(&src, format, &stem, n + 1)?,
        _ => kept_tables(&src, format, &stem)?,
    };
    pick(found, format, table, n)
}

/// The tables of a description made with more rows kept.
fn kept_tables(src: &Source, format: Format, stem: &str) -> Result<Vec<Found>, PreviewError> {
    tables_of(analyze::describe_as(src, format), stem)
}

/// The tables `d` kept; a single compressed stream (`sales.csv.gz`) shows the tables of
/// its content.
fn tables_of(d: Description, stem: &str) -> Result<Vec<Found>, PreviewError> {
    if let Some(reason) = d.error {
        return Err(PreviewError::Malformed {
            format: format!("a {} file", d.format.human()),
            reason,
        });
    }
    let names = |cols: &[analyze::ColumnProfile]| cols.iter().map(|c| c.name.clone()).collect();
    match d.content {
        Content::Table(t) => Ok(vec![Found {
            name: stem.to_string(),
            columns: names(&t.columns),
            rows: t.sample_rows,
            total: t.rows,
        }]),
        Content::Tables(set) => Ok(set
            .tables
            .into_iter()
            .map(|t| Found {
                name: t.name,
                columns: names(&t.columns),
                rows: t.sample_rows,
                total: t.rows,
            })
            .collect()),
        Content::Archive(mut a) if d.format == Format::Compressed && a.described.len() == 1 => {
            let (name, inner) = a.described.remove(0);
            let stem = Path::new(&name)
                .file_stem()
                .map_or_else(|| stem.to_string(), |s| s.to_string_lossy().into_owned());
            tables_of(inner, &stem)
        }
        Content::Archive(a) => Err(PreviewError::NotTabular {
            what: format!(
                "a {} archive ({} members); extract a member and run head on it",
                a.container, a.members_total
            ),
        }),
        Content::Json(_)
        | Content::Text(_)
        | Content::Arrays(_)
        | Content::Media(_)
        | Content::Opaque(_) => Err(PreviewError::NotTabular {
            what: format!("a {} file", d.format.human()),
        }),
    }
}

/// The preview of the table asked for among `found`.
fn pick(
    mut found: Vec<Found>,
    format: Format,
    table: Option<&str>,
    n: usize,
) -> Result<Preview, PreviewError> {
    let tables: Vec<String> = found.iter().map(|t| t.name.clone()).collect();
    if found.is_empty() {
        return Err(PreviewError::NotTabular {
            what: format!("a {} file without tables", format.human()),
        });
    }
    let at = match table {
        Some(name) => table_at(&tables, name)?,
        // The first table with rows: a cover sheet or an empty table says nothing.
        None => found.iter().position(|t| !t.rows.is_empty()).unwrap_or(0),
    };
    let t = found.swap_remove(at);
    let more = t.rows.len() > n || t.total > n as u64;
    let mut columns = t.columns;
    let width = t.rows.iter().map(Vec::len).max().unwrap_or(0);
    while columns.len() < width {
        columns.push(format!("column_{}", columns.len() + 1));
    }
    let rows = t
        .rows
        .into_iter()
        .take(n)
        .map(|r| {
            let mut cells: Vec<Option<String>> = r
                .into_iter()
                .map(|c| (!c.trim().is_empty()).then_some(c))
                .collect();
            cells.resize(columns.len(), None);
            cells
        })
        .collect();
    Ok(Preview {
        format: format.as_str().to_string(),
        table: t.name,
        tables,
        columns,
        rows,
        more,
    })
}

#[cfg(test)]
mod tests;
