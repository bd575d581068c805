//! SQLite databases and GeoPackages: tables and views with their declared column types,
//! exact row counts, first rows and a column profile over the first rows.
//!
//! The database is opened read-only and immutable (`mode=ro&immutable=1`), so SQLite
//! takes no lock and writes nothing next to the lake's file (no journal, -wal or -shm).
//! Reads stay bounded: profiles stop at [`PROFILE_ROWS_MAX`] rows (fewer for very wide
//! tables), cells are cut and blobs are read as their length only, each query has a
//! time budget, and schema objects are trusted for nothing (`trusted_schema=OFF`).

mod geopackage;
mod open;

use super::model::{Keep, NamedTable, TableBuilder, TableSet};
use super::{AnalyzeError, Analyzer, Content, Format, Source};
use crate::text_util::take_chars;
use open::{check_header, open, start_budget};
use rusqlite::types::ValueRef;
use rusqlite::Connection;
use std::collections::HashSet;
use std::io::{Read, Write};
use std::time::Duration;

/// Rows read per table to profile values; row counts are exact all the same.
const PROFILE_ROWS_MAX: u64 = 10_000;
/// Cells profiled per table at most (rows × columns).
const PROFILE_CELLS_MAX: u64 = 1_000_000;
/// Characters kept of a text cell: the profile stores distinct values.
const CELL_CHARS_MAX: usize = 200;
/// Tables and views described; the rest are counted in a note.
const TABLES_MAX: usize = 200;
/// Wall time one query (a count, a profile read) may take before it is interrupted.
const QUERY_TIME_MAX: Duration = Duration::from_secs(30);
/// Largest single value SQLite will load for us.
const VALUE_BYTES_MAX: i32 = 64 << 20;

/// Describes SQLite databases and GeoPackages as a set of tables.
pub(crate) struct SqliteAnalyzer;

impl Analyzer for SqliteAnalyzer {
    fn name(&self) -> &'static str {
        "sqlite"
    }
    fn version(&self) -> u32 {
        // 4: time in other forms read as time (the time-forms reading rule).
        // 5: missing markers, durations and labelling integers (profile values).
        // 6: quarters (`2001Q1`, `Q1 2001`, a year beside `Q1`..`Q4`) and date-times
        // with a time scale (`2014.03.23_20:24:00_TAI`) read as time; footnoted numbers
        // grouped with spaces or dots (`1 234 p`, `1.234,5 r`) stay numbers.
        // 7: the database covers the span of all its tables' time axes.
        // 8: time in other forms loads as datetimes (`.assign` after the reader).
        8
    }
    fn analyze(&self, src: &Source, _format: Format) -> Result<Content, AnalyzeError> {
        check_header(src)?;
        // SQLite reads files only: an in-memory source gets a private copy, removed when
        // `tmp` drops (after the connection); so does an object read by ranged requests,
        // within the read budget.
        let fetched;
        let bytes = match (src.bytes(), src.remote()) {
            (Some(b), _) => Some(b),
            (None, Some(obj)) => {
                let budget = src.budget().unwrap_or(u64::MAX);
                if obj.size() > budget {
                    return Err(AnalyzeError::Malformed(format!(
                        "SQLite database of {} bytes in an object store is larger than the read budget ({budget} bytes); pass --full to fetch it whole",
                        obj.size()
                    )));
                }
                let mut all = Vec::new();
                src.reader()?.read_to_end(&mut all)?;
                fetched = all;
                Some(&fetched[..])
            }
            (None, None) => None,
        };
        let tmp = match bytes {
            Some(b) => {
                let mut f = tempfile::Builder::new()
                    .prefix("lakestar-")
                    .suffix(".sqlite")
                    .tempfile()?;
                f.write_all(b)?;
                f.flush()?;
                Some(f)
            }
            None => None,
        };
        let path = tmp.as_ref().map_or(src.path(), |t| t.path());
        let mut conn = open(path)?;
        let set = describe(&mut conn, src.budget().is_none(), src.keep());
        drop(conn);
        drop(tmp);
        set.map(Content::Tables)
    }
}

fn sql_err(e: rusqlite::Error) -> AnalyzeError {
    AnalyzeError::Malformed(format!("SQLite: {e}"))
}

fn quote(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// Why a schema object is not described: internal to SQLite, GeoPackage metadata, or a
/// spatial index (R-tree and its shadow tables).
fn internal(name: &str, sql: &str, shadow: &HashSet<String>) -> Option<&'static str> {
    let lower = name.to_lowercase();
    let sql = sql.to_lowercase();
    if lower.starts_with("sqlite_") {
        Some("SQLite internal")
    } else if lower.starts_with("gpkg_") || lower.starts_with("gpkgext_") {
        Some("GeoPackage metadata")
    } else if sql.starts_with("create virtual table") && sql.contains("rtree") {
        Some("spatial index")
    } else if shadow.contains(&lower) {
        Some("index shadow")
    } else {
        None
    }
}

/// Every table and view; `full` profiles every row rather than the first ones.
fn describe(conn: &mut Connection, full: bool, keep: Keep) -> Result<TableSet, AnalyzeError> {
    start_budget(conn);
    let mut objects: Vec<(String, String, String)> = Vec::new();
    {
        let mut stmt = conn
            .prepare(
                "SELECT type, name, coalesce(sql, '') FROM sqlite_schema \
                 WHERE type IN ('table', 'view') ORDER BY rowid",
            )
            .map_err(sql_err)?;
        let mut rows = stmt.query([]).map_err(sql_err)?;
        while let Some(r) = rows.next().map_err(sql_err)? {
            objects.push((
                r.get(0).map_err(sql_err)?,
                r.get(1).map_err(sql_err)?,
                r.get(2).map_err(sql_err)?,
            ));
        }
    }
    // Shadow tables (R-tree, FTS) as SQLite itself classifies them; older files just
    // have none listed.
    let mut shadow = HashSet::new();
    if let Ok(mut stmt) =
        conn.prepare("SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'shadow'")
    {
        if let Ok(names) = stmt.query_map([], |r| r.get::<_, String>(0)) {
            shadow.extend(names.flatten().map(|n| n.to_lowercase()));
        }
    }
    let gpkg = objects
        .iter()
        .any(|(_, n, _)| n.eq_ignore_ascii_case("gpkg_contents"))
        .then(|| geopackage::read(conn));

    let mut notes = Vec::new();
    if let Some(g) = &gpkg {
        notes.push(g.summary());
    }
    let mut skipped: Vec<(&'static str, usize)> = Vec::new();
    let mut tables = Vec::new();
    let mut not_described = 0;
    for (ty, name, sql) in &objects {
        if let Some(why) = internal(name, sql, &shadow) {
            match skipped.iter_mut().find(|(w, _)| *w == why) {
                Some(s) => s.1 += 1,
                None => skipped.push((why, 1)),
            }
            continue;
        }
        if tables.len() >= TABLES_MAX {
            not_described += 1;
            continue;
        }
        let kind = match (gpkg.as_ref().and_then(|g| g.kind(name)), ty.as_str()) {
            (Some(k), _) => k,
            (None, "view") => "view",
            (None, _) if sql.to_lowercase().starts_with("create virtual table") => "virtual table",
            (None, _) => "table",
        };
        let mut t = describe_table(conn, name, kind, full, keep);
        if let Some(layer) = gpkg.as_ref().and_then(|g| g.layer(name)) {
            t.notes.splice(0..0, layer.notes.iter().cloned());
        }
        tables.push(t);
    }
    if !skipped.is_empty() {
        let parts: Vec<String> = skipped.iter().map(|(w, n)| format!("{n} {w}")).collect();
        notes.push(format!("not listed: {} tables", parts.join(", ")));
    }
    if not_described > 0 {
        notes.push(format!(
            "{not_described} more tables and views not described"
        ));
    }
    Ok(TableSet { tables, notes })
}

/// A table or view; a failure to read it becomes a note on it, not an error of the file.
fn describe_table(
    conn: &mut Connection,
    name: &str,
    kind: &str,
    full: bool,
    keep: Keep,
) -> NamedTable {
    let mut notes = Vec::new();
    start_budget(conn);
    let columns = match table_columns(conn, name) {
        Ok(c) => c,
        Err(e) => {
            notes.push(format!("columns could not be read: {e}"));
            Vec::new()
        }
    };
    start_budget(conn);
    let count: Result<u64, rusqlite::Error> = conn
        .query_row(&format!("SELECT count(*) FROM {}", quote(name)), [], |r| {
            r.get::<_, i64>(0)
        })
        .map(|n| u64::try_from(n).unwrap_or(0));
    // Without a budget (`--full`), every row: the profile bounds its own memory.
    let limit = if full {
        i64::MAX as u64
    } else {
        (PROFILE_CELLS_MAX / columns.len().max(1) as u64).clamp(1, PROFILE_ROWS_MAX)
    };
    let mut b = TableBuilder::new(columns.iter().map(|(n, _)| n.clone())).keeping(keep);
    start_budget(conn);
    if !columns.is_empty() {
        if let Err(e) = profile(conn, name, &columns, limit, &mut b) {
            notes.push(format!("reading rows stopped after {} rows: {e}", b.rows()));
        }
    }
    let read = b.rows();
    let mut t = b.finish(name, kind);
    for (prof, (_, ty)) in t.columns.iter_mut().zip(&columns) {
        prof.declared_type = (!ty.is_empty()).then(|| ty.clone());
    }
    match count {
        Ok(n) => t.rows = n,
        Err(e) => {
            // Without a count, the rows read are a floor unless reading ended early.
            t.rows_exact = read < limit && !notes.iter().any(|n| n.starts_with("reading"));
            notes.push(format!("row count failed: {e}"));
        }
    }
    t.notes = notes;
    if read < t.rows {
        t.mark_sample(read);
        // A read that stopped early without a budget is as good as it gets.
        t.sampled = !full;
        if t.sampled {
            t.notes
                .push("`lakestar index --full` profiles every row".into());
        }
    }
    t.load = Some(load_call(conn, name, &columns));
    t
}

/// `pd.read_sql_query('SELECT * FROM "name"', sqlite3.connect(path))`, when SQLite's
/// own `SELECT *` yields the described columns (not so with generated columns, which
/// the table's column list leaves out); else the columns are listed.
fn load_call(conn: &Connection, name: &str, columns: &[(String, String)]) -> String {
    let star = format!("SELECT * FROM {}", quote(name));
    let same = conn.prepare(&star).is_ok_and(|st| {
        st.column_names()
            .eq(columns.iter().map(|(n, _)| n.as_str()))
    });
    let sql = if same || columns.is_empty() {
        star
    } else {
        let list: Vec<String> = columns.iter().map(|(n, _)| quote(n)).collect();
        format!("SELECT {} FROM {}", list.join(", "), quote(name))
    };
    format!(
        "pd.read_sql_query({}, sqlite3.connect(path))",
        py_single_quoted(&sql)
    )
}

/// A single-quoted Python string literal (the SQL's identifiers are double-quoted).
fn py_single_quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('\'');
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// Column names and declared types.
fn table_columns(conn: &Connection, name: &str) -> Result<Vec<(String, String)>, rusqlite::Error> {
    let mut stmt = conn.prepare("SELECT name, type FROM pragma_table_info(?1)")?;
    let cols = stmt
        .query_map([name], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, Option<String>>(1)?.unwrap_or_default(),
            ))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(cols)
}

fn float(x: f64) -> String {
    // Whole reals keep a fraction so that a REAL column is not inferred as integer.
    if x.is_finite() && x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{x:.1}")
    } else {
        format!("{x}")
    }
}

/// Reads the first `limit` rows into `b`. Blobs come back as `<N-byte blob>` and text
/// cut by SQLite itself, so that no cell is loaded whole into the profile.
fn profile(
    conn: &Connection,
    name: &str,
    columns: &[(String, String)],
    limit: u64,
    b: &mut TableBuilder,
) -> Result<(), rusqlite::Error> {
    let exprs: Vec<String> = columns
        .iter()
        .map(|(c, _)| {
            let c = quote(c);
            format!(
                "CASE typeof({c}) WHEN 'blob' THEN '<' || length({c}) || '-byte blob>' \
                 WHEN 'text' THEN substr({c}, 1, {}) ELSE {c} END",
                CELL_CHARS_MAX + 1
            )
        })
        .collect();
    let sql = format!(
        "SELECT {} FROM {} LIMIT {limit}",
        exprs.join(", "),
        quote(name)
    );
    let mut stmt = conn.prepare(&sql)?;
    let mut rows = stmt.query([])?;
    let mut cells = vec![String::new(); columns.len()];
    while let Some(r) = rows.next()? {
        for (i, cell) in cells.iter_mut().enumerate() {
            *cell = match r.get_ref(i)? {
                ValueRef::Null => String::new(),
                ValueRef::Integer(n) => n.to_string(),
                ValueRef::Real(x) => float(x),
                ValueRef::Text(t) => take_chars(&String::from_utf8_lossy(t), CELL_CHARS_MAX),
                ValueRef::Blob(x) => format!("<{}-byte blob>", x.len()),
            };
        }
        b.push_row(&cells);
    }
    Ok(())
}

#[cfg(test)]
mod tests;
