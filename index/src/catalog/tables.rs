//! Tables that span many files (`dataset`) in the catalog: one row per table folder, its
//! kind, version and description (or why it has none). A file is a member of the table
//! whose folder holds it (at any depth): membership is read from the paths, so moving
//! or adding a member changes no row but the table's, which the indexer derives again
//! when something under its folder changes (`indexer::tables`).

use super::files::{self, FILE_COLUMNS};
use super::{CatalogReader, CatalogWriter, FileRow, MetaKey};
use crate::dataset::{TableDescription, TableKind};
use crate::error::{Error, Result};
use rusqlite::{params, OptionalExtension};

/// Created with a new catalog and by the upgrade to format 5.
pub(super) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS tables (
    root    TEXT PRIMARY KEY,
    kind    TEXT NOT NULL,
    version TEXT,
    error   TEXT,
    detail  TEXT
) WITHOUT ROWID;
";

/// A table as the catalog holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct TableRow {
    /// The table's folder, lake-relative, without a trailing `/`.
    pub root: String,
    pub kind: TableKind,
    /// Delta version or Iceberg snapshot id.
    pub version: Option<String>,
    /// Why it could not be described (then `table` is absent).
    pub error: Option<String>,
    pub table: Option<TableDescription>,
}

const TABLE_COLUMNS: &str = "root, kind, version, error, detail";

/// A row's columns as stored: root, kind, version, error, detail.
type Stored = (
    String,
    String,
    Option<String>,
    Option<String>,
    Option<String>,
);

fn row_from(r: &rusqlite::Row<'_>) -> rusqlite::Result<Stored> {
    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
}

fn decode((root, kind, version, error, detail): Stored) -> Result<TableRow> {
    let kind = TableKind::parse(&kind).ok_or_else(|| {
        Error::corrupt(
            "table kind",
            serde_json::Error::io(std::io::Error::other(format!("unknown table kind {kind}"))),
        )
    })?;
    let table = detail
        .map(|d| serde_json::from_str(&d))
        .transpose()
        .map_err(|e| Error::corrupt("table description", e))?;
    Ok(TableRow {
        root,
        kind,
        version,
        error,
        table,
    })
}

/// The folders above `path` (nearest last), the lake root excluded.
fn ancestors(path: &str) -> impl Iterator<Item = &str> {
    path.match_indices('/').map(move |(i, _)| &path[..i])
}

impl CatalogReader {
    /// Every table, by folder.
    pub fn tables(&self) -> Result<Vec<TableRow>> {
        let mut stmt = self
            .conn
            .prepare_cached(&format!("SELECT {TABLE_COLUMNS} FROM tables ORDER BY root"))?;
        let rows = stmt
            .query_map([], row_from)?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        rows.into_iter().map(decode).collect()
    }

    /// Every table's folder, sorted (what a search folds members into, without decoding
    /// the descriptions).
    pub fn table_roots(&self) -> Result<Vec<String>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT root FROM tables ORDER BY root")?;
        let rows = stmt
            .query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    }

    /// The table whose folder is `root` (a trailing `/` allowed).
    pub fn table(&self, root: &str) -> Result<Option<TableRow>> {
        let root = root.trim_end_matches('/');
        let row = self
            .conn
            .prepare_cached(&format!(
                "SELECT {TABLE_COLUMNS} FROM tables WHERE root = ?1"
            ))?
            .query_row([root], row_from)
            .optional()?;
        row.map(decode).transpose()
    }

    /// The table the file at `path` is a member of: the outermost table folder above it.
    pub fn table_of(&self, path: &str) -> Result<Option<TableRow>> {
        for a in ancestors(path) {
            if let Some(t) = self.table(a)? {
                return Ok(Some(t));
            }
        }
        Ok(None)
    }

    /// The rows of the files below the folder `root`, by path.
    pub fn files_under(&self, root: &str) -> Result<Vec<FileRow>> {
        // '0' is the byte after '/': the range is everything below the folder.
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {FILE_COLUMNS} FROM files WHERE path >= ?1 || '/' AND path < ?1 || '0' ORDER BY path"
        ))?;
        let rows = stmt
            .query_map([root], files::row_from)?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    }

    /// Whether some file lies below the folder `dir`.
    pub fn has_files_under(&self, dir: &str) -> Result<bool> {
        Ok(self
            .conn
            .prepare_cached(
                "SELECT EXISTS(SELECT 1 FROM files WHERE path >= ?1 || '/' AND path < ?1 || '0')",
            )?
            .query_row([dir], |r| r.get(0))?)
    }

    /// Up to `limit` file paths after `after` (from the first with `None`), in path
    /// order: a derivation of every table reads them a chunk at a time.
    pub fn paths_after(&self, after: Option<&str>, limit: usize) -> Result<Vec<String>> {
        // `path > ''` rather than `?1 IS NULL OR …`: a range of the key, every page
        // (paths are never empty).
        let mut stmt = self
            .conn
            .prepare_cached("SELECT path FROM files WHERE path > ?1 ORDER BY path LIMIT ?2")?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = stmt
            .query_map(params![after.unwrap_or(""), limit], |r| r.get(0))?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    }

    /// The table rule the catalog's tables were derived by, if recorded.
    pub fn tables_version(&self) -> Result<Option<u32>> {
        Ok(self
            .meta(MetaKey::TablesVersion)?
            .and_then(|v| v.parse().ok()))
    }
}

impl CatalogWriter {
    /// In one transaction: forget the tables of the folders `examined`, store `found`
    /// (each in one of them), and record the rule. Returns how many rows changed.
    pub fn replace_tables(&mut self, examined: &[String], found: &[TableRow]) -> Result<usize> {
        let before: Vec<TableRow> = examined
            .iter()
            .filter_map(|r| self.table(r).transpose())
            .collect::<Result<_>>()?;
        let tx = self.reader.conn.transaction()?;
        {
            let mut del = tx.prepare_cached("DELETE FROM tables WHERE root = ?1")?;
            for r in examined {
                del.execute([r])?;
            }
            let mut ins = tx.prepare_cached(&format!(
                "INSERT OR REPLACE INTO tables({TABLE_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5)"
            ))?;
            for t in found {
                let detail = t
                    .table
                    .as_ref()
                    .map(serde_json::to_string)
                    .transpose()
                    .map_err(|e| Error::serialize("table description", e))?;
                ins.execute(params![t.root, t.kind.as_str(), t.version, t.error, detail])?;
            }
            tx.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES (?1, ?2)",
                params![
                    MetaKey::TablesVersion,
                    crate::dataset::TABLES_RULE.to_string()
                ],
            )?;
        }
        tx.commit()?;
        let changed = found.iter().filter(|t| !before.contains(t)).count()
            + before
                .iter()
                .filter(|b| !found.iter().any(|t| t.root == b.root))
                .count();
        Ok(changed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lock::WriterLock;

    #[test]
    fn tables_are_replaced_by_folder_and_found_by_member() {
        let lake = tempfile::tempdir().unwrap();
        let dir = lake.path().join(".lakestar");
        std::fs::create_dir_all(&dir).unwrap();
        let lock = WriterLock::acquire(&dir).unwrap();
        let mut w = CatalogWriter::open(lock, lake.path()).unwrap();
        assert_eq!(w.tables_version().unwrap(), None);
        let row = |root: &str, version: &str| TableRow {
            root: root.into(),
            kind: TableKind::Delta,
            version: Some(version.into()),
            error: Some("broken".into()),
            table: None,
        };
        let examined = ["a/sales".to_string(), "b".to_string()];
        assert_eq!(
            w.replace_tables(&examined, &[row("a/sales", "1")]).unwrap(),
            1
        );
        assert_eq!(
            w.replace_tables(&examined, &[row("a/sales", "1")]).unwrap(),
            0
        );
        assert_eq!(
            w.replace_tables(&examined, &[row("a/sales", "2")]).unwrap(),
            1
        );
        assert_eq!(
            w.tables_version().unwrap(),
            Some(crate::dataset::TABLES_RULE)
        );
        assert_eq!(
            w.table("a/sales/").unwrap().unwrap().version.as_deref(),
            Some("2")
        );
        let of = w.table_of("a/sales/year=1/x.parquet").unwrap().unwrap();
        assert_eq!(of.root, "a/sales");
        assert_eq!(w.table_of("a/salesman/x.parquet").unwrap(), None);
        assert_eq!(w.table_of("a/sales").unwrap(), None);
        assert_eq!(w.replace_tables(&examined, &[]).unwrap(), 1);
        assert!(w.tables().unwrap().is_empty());
        assert!(w.table_roots().unwrap().is_empty());
    }
}
