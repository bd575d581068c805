//! The first rows of a table: `lakestar head`, `GET /files/{path}/rows` and the MCP
//! `head` tool, read by [`lakestar_index::preview`].

use super::ServiceError;
use lakestar_index::catalog::FileRow;
use lakestar_index::preview::{self, PreviewError};
use lakestar_index::store::ObjectLake;
use serde::Serialize;
use std::path::Path;
use std::sync::Arc;

pub use preview::{DEFAULT_ROWS, MAX_ROWS};

/// The first rows of one table of a file: the JSON every surface answers with.
#[derive(Debug, Serialize)]
pub struct Rows {
    /// Relative to the lake when indexed, else as given.
    pub path: String,
    /// The format's name (`csv`, `excel`, `parquet`, …).
    pub format: String,
    /// The table shown.
    pub table: String,
    /// Every table or sheet of the file, in order.
    pub tables: Vec<String>,
    /// Column names as the description reads them.
    pub columns: Vec<String>,
    /// One cell per column: text, or null when empty or missing.
    pub rows: Vec<Vec<Option<String>>>,
    /// Rows asked for.
    pub n: usize,
    /// More rows follow.
    pub more: bool,
}

/// A stable, machine-readable name of a preview error (see [`ServiceError::code`]).
pub(super) fn code(e: &PreviewError) -> &'static str {
    match e {
        PreviewError::BadCount(_) => "bad_request",
        PreviewError::NotTabular { .. } => "not_tabular",
        PreviewError::UnknownTable { .. } => "unknown_table",
        PreviewError::Unreadable { .. } | PreviewError::Malformed { .. } => "unreadable_file",
    }
}

/// The first `n` rows of table `table` (default: the first with rows) of `file`, shown
/// as `shown`.
pub fn rows(file: &Path, shown: &str, table: Option<&str>, n: usize) -> Result<Rows, ServiceError> {
    let p = preview::head(file, table, n).map_err(|e| match e {
        // Its path is the server's: the client knows the file by `shown`.
        PreviewError::Unreadable { source, .. } => {
            ServiceError::Preview(PreviewError::Unreadable {
                path: shown.into(),
                source,
            })
        }
        e => ServiceError::Preview(e),
    })?;
    Ok(shaped(p, shown, n))
}

/// The first rows of the indexed file `row` of the lake at `root`: read from the lake's
/// directory, or, for a lake in an object store (`objects`), by ranged requests within
/// the preview's budget.
pub fn indexed(
    root: &Path,
    objects: Option<&Arc<ObjectLake>>,
    row: &FileRow,
    table: Option<&str>,
    n: usize,
) -> Result<Rows, ServiceError> {
    match objects {
        Some(lake) => {
            let p = preview::head_object(lake, &row.path, row.size, table, n)
                .map_err(ServiceError::Preview)?;
            Ok(shaped(p, &row.path, n))
        }
        None => rows(&root.join(&row.path), &row.path, table, n),
    }
}

fn shaped(p: preview::Preview, shown: &str, n: usize) -> Rows {
    Rows {
        path: shown.to_string(),
        format: p.format,
        table: p.table,
        tables: p.tables,
        columns: p.columns,
        rows: p.rows,
        n,
        more: p.more,
    }
}
