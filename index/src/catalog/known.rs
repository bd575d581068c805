//! Loading the change-detection view of file rows ([`Known`]): all of them for a full
//! run, or those equal to or under a scope's paths for a scoped one.

use super::{CatalogReader, Known};
use crate::analyze::Format;
use crate::crawl::Scope;
use crate::error::Result;

/// Above this many scope paths, one scan of every row filtered in memory beats a range
/// query per path (a query costs about as much as reading a few dozen rows).
const SCAN_ABOVE: usize = 4096;

/// The `SELECT … FROM files` of a [`Known`], with the current analyzer key per format
/// inlined as a CASE so that SQLite flags stale rows.
fn select() -> String {
    let mut case = String::from("CASE format");
    for &f in Format::ALL {
        case.push_str(&format!(
            " WHEN '{}' THEN '{}'",
            f.as_str(),
            crate::analyze::current_key(f)
        ));
    }
    case.push_str(" END");
    format!(
        "SELECT path, size, mtime_ns, racy, state = 'unreadable', analyzer IS NOT ({case}), sampled FROM files"
    )
}

/// One page of [`CatalogReader::known_after`].
fn page_sql() -> String {
    format!("{} WHERE path > ?1 ORDER BY path LIMIT ?2", select())
}

/// How SQLite runs `sql` (`EXPLAIN QUERY PLAN`'s details), for tests that check a query
/// is answered from an index rather than by a scan.
#[cfg(test)]
pub(super) fn plan(conn: &rusqlite::Connection, sql: &str) -> Vec<String> {
    let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
    let nulls = vec![rusqlite::types::Null; stmt.parameter_count()];
    let rows = stmt
        .query_map(rusqlite::params_from_iter(nulls), |r| r.get::<_, String>(3))
        .unwrap();
    rows.map(Result::unwrap).collect()
}

fn known_from(r: &rusqlite::Row<'_>) -> rusqlite::Result<Known> {
    Ok(Known {
        path: r.get(0)?,
        size: r.get::<_, i64>(1)? as u64,
        mtime_ns: r.get(2)?,
        racy: r.get(3)?,
        unreadable: r.get(4)?,
        stale: r.get(5)?,
        sampled: r.get(6)?,
    })
}

impl CatalogReader {
    /// Every row's change-detection view, ordered by path (byte order, as Rust sorts
    /// strings), so that it can be merged with a sorted crawl.
    pub fn load_known(&self) -> Result<Vec<Known>> {
        let mut stmt = self.conn.prepare(&format!("{} ORDER BY path", select()))?;
        let rows = stmt.query_map([], known_from)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Up to `limit` rows of [`CatalogReader::load_known`], those after `after` (from
    /// the first with `None`): a full run reads them a page at a time.
    pub fn known_after(&self, after: Option<&str>, limit: usize) -> Result<Vec<Known>> {
        // `path > ''` for the first page rather than `?1 IS NULL OR …`, which SQLite
        // cannot answer from the key: each page would scan the rows before it (12 s
        // instead of 2 for a no-change run at a million files). Paths are never empty.
        let mut stmt = self.conn.prepare_cached(&page_sql())?;
        let rows = stmt.query_map(
            rusqlite::params![after.unwrap_or(""), limit as i64],
            known_from,
        )?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Every row of [`CatalogReader::load_known`], read `page` rows at a time.
    pub fn known_pages(&self, page: usize) -> KnownPages<'_> {
        KnownPages {
            cat: self,
            page: page.max(1),
            rows: Vec::new().into_iter(),
            last: None,
            done: false,
        }
    }

    /// The rows equal to or under one of `scope`'s paths, ordered by path, each once.
    pub fn load_known_in(&self, scope: &Scope) -> Result<Vec<Known>> {
        if scope.is_whole_lake() {
            return self.load_known();
        }
        if scope.len() > SCAN_ABOVE {
            let mut all = self.load_known()?;
            all.retain(|k| scope.covers(&k.path));
            return Ok(all);
        }
        // Two primary-key lookups per path: the path itself, and the range of paths
        // below it ('0' is the byte after '/'). One `a = ? OR (range)` query would leave
        // the choice of plan to SQLite; these two are certain to use the key.
        let base = select();
        let mut exact = self
            .conn
            .prepare_cached(&format!("{base} WHERE path = ?1"))?;
        let mut below = self.conn.prepare_cached(&format!(
            "{base} WHERE path >= ?1 || '/' AND path < ?1 || '0' ORDER BY path"
        ))?;
        let mut out = Vec::new();
        for p in scope.paths() {
            for r in exact.query_map([p], known_from)? {
                out.push(r?);
            }
            for r in below.query_map([p], known_from)? {
                out.push(r?);
            }
        }
        // Overlapping scope paths ("a" and "a/b") find the same rows.
        out.sort_unstable_by(|a, b| a.path.cmp(&b.path));
        out.dedup_by(|a, b| a.path == b.path);
        Ok(out)
    }
}

/// The rows of [`CatalogReader::known_pages`], in path order.
pub struct KnownPages<'a> {
    cat: &'a CatalogReader,
    page: usize,
    rows: std::vec::IntoIter<Known>,
    last: Option<String>,
    done: bool,
}

impl Iterator for KnownPages<'_> {
    type Item = Result<Known>;

    fn next(&mut self) -> Option<Result<Known>> {
        if self.rows.len() == 0 && !self.done {
            match self.cat.known_after(self.last.as_deref(), self.page) {
                Ok(rows) => {
                    self.done = rows.len() < self.page;
                    self.rows = rows.into_iter();
                }
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            }
        }
        let k = self.rows.next()?;
        // The last row of a page is where the next one starts.
        if self.rows.len() == 0 {
            self.last = Some(k.path.clone());
        }
        Some(Ok(k))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{CatalogWriter, Change, FileRow, FileState};
    use crate::lock::WriterLock;

    fn row(path: &str) -> Change {
        Change::Upsert {
            row: FileRow {
                path: path.into(),
                size: 1,
                mtime_ns: 1,
                hash: None,
                format: Format::Binary,
                analyzer: None,
                state: FileState::Unreadable,
                error: Some("test".into()),
                racy: false,
                indexed_at: 0,
                time: None,
                sampled: false,
                schema: None,
            },
            description: None,
        }
    }

    #[test]
    fn scoped_rows_are_the_paths_and_their_subtrees() {
        let d = tempfile::tempdir().unwrap();
        let mut cat =
            CatalogWriter::open(WriterLock::acquire(d.path()).unwrap(), d.path()).unwrap();
        let paths = [
            "a", "a-b/x", "a.csv", "a/b", "a/b/c", "a/c", "ab/x", "b/a", "z",
        ];
        cat.apply(&paths.map(row)).unwrap();
        let got = |scope: &[&str]| -> Vec<String> {
            cat.load_known_in(&Scope::new(scope.iter().copied()))
                .unwrap()
                .into_iter()
                .map(|k| k.path)
                .collect()
        };
        assert_eq!(got(&["a"]), ["a", "a/b", "a/b/c", "a/c"]);
        assert_eq!(got(&["a/b", "a", "z"]), ["a", "a/b", "a/b/c", "a/c", "z"]);
        assert_eq!(got(&["b/a", "missing", "a/b/c/d"]), ["b/a"]);
        assert_eq!(got(&[".lakestarignore"]).len(), paths.len());
        // A page is a range of the key, not a scan of the rows before it.
        let plan = plan(&cat.conn, &page_sql());
        assert!(
            plan.iter().any(|d| d.starts_with("SEARCH files"))
                && !plan.iter().any(|d| d.starts_with("SCAN")),
            "{plan:?}"
        );
        // Page by page, any page size, the same rows as all at once.
        let all = cat.load_known().unwrap();
        for page in [1, 2, 3, paths.len(), 100] {
            let paged: Vec<Known> = cat.known_pages(page).collect::<Result<_>>().unwrap();
            assert_eq!(paged, all, "pages of {page}");
        }
        // The in-memory path gives the same answer.
        let many: Vec<String> = (0..SCAN_ABOVE + 1)
            .map(|i| format!("n/{i}"))
            .chain(["a".to_string()])
            .collect();
        let scope = Scope::new(many);
        let rows: Vec<String> = cat
            .load_known_in(&scope)
            .unwrap()
            .into_iter()
            .map(|k| k.path)
            .collect();
        assert_eq!(rows, ["a", "a/b", "a/b/c", "a/c"]);
    }
}
