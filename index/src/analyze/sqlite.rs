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

use super::model::{NamedTable, TableBuilder, TableSet};
use super::{AnalyzeError, Analyzer, Content, Format, Source};
use open::{check_header, open, start_budget};
use rusqlite::types::ValueRef;
use rusqlite::Connection;
use std::collections::HashSet;
use std::io::Write;
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
        1
    }
    fn analyze(&self, src: &Source, _format: Format) -> Result<Content, AnalyzeError> {
        check_header(src)?;
        // SQLite reads files only: an in-memory source gets a private copy, removed when
        // `tmp` drops (after the connection).
        let tmp = match src.bytes() {
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
        let set = describe(&mut conn);
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

fn describe(conn: &mut Connection) -> Result<TableSet, AnalyzeError> {
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
        let mut t = describe_table(conn, name, kind);
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
fn describe_table(conn: &mut Connection, name: &str, kind: &str) -> NamedTable {
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
    let limit = (PROFILE_CELLS_MAX / columns.len().max(1) as u64).clamp(1, PROFILE_ROWS_MAX);
    let mut b = TableBuilder::new(columns.iter().map(|(n, _)| n.clone()));
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
    if read < t.rows {
        notes.push(format!(
            "column profiles (types, distinct values, examples, nulls) from a sample: the first {read} of {} rows",
            t.rows
        ));
    }
    t.notes = notes;
    t
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
                ValueRef::Text(t) => {
                    let s = String::from_utf8_lossy(t);
                    if s.chars().count() > CELL_CHARS_MAX {
                        let mut s: String = s.chars().take(CELL_CHARS_MAX).collect();
                        s.push('…');
                        s
                    } else {
                        s.into_owned()
                    }
                }
                ValueRef::Blob(x) => format!("<{}-byte blob>", x.len()),
            };
        }
        b.push_row(&cells);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::ColumnType;
    use std::path::{Path, PathBuf};

    fn analyze(src: &Source) -> Result<TableSet, AnalyzeError> {
        match SqliteAnalyzer.analyze(src, Format::Sqlite)? {
            Content::Tables(t) => Ok(t),
            c => panic!("not tables: {c:?}"),
        }
    }

    /// Two tables (nulls, a blob column, declared types), an index and a view.
    fn make_db(path: &Path) {
        let c = Connection::open(path).unwrap();
        c.execute_batch(
            "PRAGMA journal_mode = WAL;
             CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT NOT NULL, height REAL,
                                  photo BLOB, born DATE);
             INSERT INTO people VALUES
               (1, 'ann', 1.62, x'00010203', '1990-01-02'),
               (2, 'bob', NULL, NULL, '1985-05-06'),
               (3, 'cy', 1.80, zeroblob(1000), NULL),
               (4, 'di', 1.75, x'ff', '2000-12-31');
             CREATE TABLE orders (order_id INTEGER, person_id INTEGER REFERENCES people(id),
                                  amount DECIMAL(10,2), note VARCHAR(20));
             INSERT INTO orders
               WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20)
               SELECT i, i % 4 + 1, i * 2.5, CASE WHEN i % 5 = 0 THEN NULL ELSE 'n' || i END
               FROM n;
             CREATE INDEX orders_person ON orders(person_id);
             CREATE VIEW tall AS SELECT name, height FROM people WHERE height > 1.7;",
        )
        .unwrap();
    }

    fn check_db(set: &TableSet) {
        let names = set.table_kinds();
        assert_eq!(
            names,
            [("people", "table"), ("orders", "table"), ("tall", "view")]
        );
        let [people, orders, tall] = set.tables.as_slice() else {
            panic!()
        };
        assert_eq!((people.rows, orders.rows, tall.rows), (4, 20, 2));
        assert!(people.rows_exact && orders.rows_exact && tall.rows_exact);
        let declared: Vec<&str> = people
            .columns
            .iter()
            .map(|c| c.declared_type.as_deref().unwrap())
            .collect();
        assert_eq!(declared, ["INTEGER", "TEXT", "REAL", "BLOB", "DATE"]);
        assert_eq!(
            orders.columns[2].declared_type.as_deref(),
            Some("DECIMAL(10,2)")
        );
        assert_eq!(people.sample_rows.len(), 3);
        assert_eq!(
            people.sample_rows[0],
            ["1", "ann", "1.62", "<4-byte blob>", "1990-01-02"]
        );
        assert_eq!(people.sample_rows[1], ["2", "bob", "", "", "1985-05-06"]);
        let [id, _, height, photo, born] = people.columns.as_slice() else {
            panic!()
        };
        assert!(id.is_unique(people.rows));
        assert_eq!((height.kind, height.nulls), (ColumnType::Float, 1));
        assert_eq!(height.max.as_deref(), Some("1.8"));
        assert_eq!(photo.nulls, 1);
        assert!(photo.examples.contains(&"<1000-byte blob>".to_string()));
        assert_eq!((born.kind, born.nulls), (ColumnType::Date, 1));
        assert_eq!(orders.columns[3].nulls, 4);
        assert_eq!(orders.columns[2].kind, ColumnType::Float);
        let view_cols: Vec<&str> = tall.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(view_cols, ["name", "height"]);
        assert_eq!(tall.columns[0].examples, ["cy", "di"]);
        // Everything was read: no sample note.
        assert!(
            people.notes.is_empty() && orders.notes.is_empty(),
            "{:?}",
            orders.notes
        );
    }

    fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>, std::time::SystemTime)> {
        let mut v: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| {
                let p = e.unwrap().path();
                let m = std::fs::metadata(&p).unwrap();
                (p.clone(), std::fs::read(&p).unwrap(), m.modified().unwrap())
            })
            .collect();
        v.sort();
        v
    }

    #[test]
    fn tables_views_blobs_on_disk_and_in_memory_and_file_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("shop.db");
        make_db(&path);
        let before = snapshot(dir.path());
        assert_eq!(before.len(), 1, "WAL checkpointed and removed on close");
        let src = Source::open(&path, 0).unwrap();
        assert!(src.bytes().is_none());
        check_db(&analyze(&src).unwrap());
        // Same bytes, same modification time, no -wal, -shm or -journal beside it.
        assert_eq!(snapshot(dir.path()), before);
        let bytes = std::fs::read(&path).unwrap();
        check_db(&analyze(&Source::from_bytes("shop.db", bytes)).unwrap());
        assert_eq!(snapshot(dir.path()), before);
    }

    #[test]
    fn odd_file_names_are_escaped_in_the_uri() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("we?ird #1 100%.db");
        make_db(&path);
        let src = Source::open(&path, 0).unwrap();
        check_db(&analyze(&src).unwrap());
    }

    #[test]
    fn big_tables_are_sampled_but_counted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.db");
        let c = Connection::open(&path).unwrap();
        c.execute_batch(
            "CREATE TABLE big (x INTEGER, label TEXT);
             INSERT INTO big
               WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10050)
               SELECT i, printf('%0500d', i) FROM n;",
        )
        .unwrap();
        drop(c);
        let set = analyze(&Source::open(&path, 0).unwrap()).unwrap();
        let t = &set.tables[0];
        assert_eq!((t.rows, t.rows_exact), (10_050, true));
        assert_eq!(t.columns[0].distinct, 10_000);
        assert_eq!(t.columns[0].max.as_deref(), Some("10000"));
        // Cells are cut to CELL_CHARS_MAX characters before the profile sees them, and
        // these labels differ only after that.
        assert_eq!(t.columns[1].distinct, 1);
        assert!(
            t.notes
                .iter()
                .any(|n| n.contains("first 10000 of 10050 rows")),
            "{:?}",
            t.notes
        );
    }

    /// GeoPackage geometry blob: "GP" header (version 0, little-endian, no envelope,
    /// SRS id) then a WKB point.
    fn gp_point(srs: i32, x: f64, y: f64) -> Vec<u8> {
        let mut b = vec![b'G', b'P', 0, 0b0000_0001];
        b.extend(srs.to_le_bytes());
        b.push(1);
        b.extend(1u32.to_le_bytes());
        b.extend(x.to_le_bytes());
        b.extend(y.to_le_bytes());
        b
    }

    fn make_gpkg(path: &Path) {
        let c = Connection::open(path).unwrap();
        c.execute_batch(
            "PRAGMA application_id = 1196444487;
             PRAGMA user_version = 10300;
             CREATE TABLE gpkg_spatial_ref_sys (srs_name TEXT NOT NULL,
               srs_id INTEGER PRIMARY KEY, organization TEXT NOT NULL,
               organization_coordsys_id INTEGER NOT NULL, definition TEXT NOT NULL,
               description TEXT);
             INSERT INTO gpkg_spatial_ref_sys VALUES
               ('WGS 84 geodetic', 4326, 'EPSG', 4326, 'GEOGCS[\"WGS 84\"]', NULL),
               ('Undefined cartesian SRS', -1, 'NONE', -1, 'undefined', NULL),
               ('Undefined geographic SRS', 0, 'NONE', 0, 'undefined', NULL);
             CREATE TABLE gpkg_contents (table_name TEXT NOT NULL PRIMARY KEY,
               data_type TEXT NOT NULL, identifier TEXT UNIQUE, description TEXT DEFAULT '',
               last_change DATETIME NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
               min_x DOUBLE, min_y DOUBLE, max_x DOUBLE, max_y DOUBLE,
               srs_id INTEGER REFERENCES gpkg_spatial_ref_sys(srs_id));
             INSERT INTO gpkg_contents
               (table_name, data_type, identifier, min_x, min_y, max_x, max_y, srs_id) VALUES
               ('cities', 'features', 'cities', 2.35, 48.85, 13.4, 52.52, 4326),
               ('stats', 'attributes', 'stats', NULL, NULL, NULL, NULL, NULL);
             CREATE TABLE gpkg_geometry_columns (table_name TEXT NOT NULL,
               column_name TEXT NOT NULL, geometry_type_name TEXT NOT NULL,
               srs_id INTEGER NOT NULL, z TINYINT NOT NULL, m TINYINT NOT NULL,
               PRIMARY KEY (table_name, column_name));
             INSERT INTO gpkg_geometry_columns VALUES ('cities', 'geom', 'POINT', 4326, 0, 0);
             CREATE TABLE cities (fid INTEGER PRIMARY KEY AUTOINCREMENT, geom POINT,
               name TEXT, population INTEGER);
             CREATE TABLE stats (id INTEGER PRIMARY KEY, city TEXT, value REAL);
             INSERT INTO stats VALUES (1, 'Paris', 0.5), (2, 'Berlin', 0.25);
             CREATE VIRTUAL TABLE rtree_cities_geom USING rtree(id, minx, maxx, miny, maxy);",
        )
        .unwrap();
        for (name, pop, x, y) in [
            ("Paris", 2_100_000, 2.35, 48.85),
            ("Berlin", 3_600_000, 13.4, 52.52),
            ("Lyon", 520_000, 4.83, 45.76),
        ] {
            c.execute(
                "INSERT INTO cities (geom, name, population) VALUES (?1, ?2, ?3)",
                rusqlite::params![gp_point(4326, x, y), name, pop],
            )
            .unwrap();
            c.execute(
                "INSERT INTO rtree_cities_geom VALUES (last_insert_rowid(), ?1, ?1, ?2, ?2)",
                rusqlite::params![x, y],
            )
            .unwrap();
        }
    }

    #[test]
    fn geopackage_layers_geometry_and_srs() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("places.gpkg");
        make_gpkg(&path);
        // As an archive member would come: in memory only.
        let bytes = std::fs::read(&path).unwrap();
        let src = Source::from_bytes("data/places.gpkg", bytes);
        assert_eq!(
            super::super::detect(src.path(), src.head(), src.size()),
            Format::Sqlite
        );
        let set = analyze(&src).unwrap();
        assert_eq!(
            set.notes[0],
            "GeoPackage: 1 attribute table, 1 feature layer"
        );
        let skipped = &set.notes[1];
        assert!(skipped.contains("3 GeoPackage metadata"), "{skipped}");
        assert!(skipped.contains("1 spatial index"), "{skipped}");
        assert!(skipped.contains("3 index shadow"), "{skipped}");
        assert!(skipped.contains("1 SQLite internal"), "{skipped}"); // sqlite_sequence
        let names = set.table_kinds();
        assert_eq!(
            names,
            [("cities", "feature layer"), ("stats", "attribute table")]
        );
        let cities = &set.tables[0];
        assert_eq!(cities.rows, 3);
        assert_eq!(
            cities.notes[0],
            "geometry column geom: POINT, SRS EPSG:4326"
        );
        assert_eq!(
            cities.notes[1],
            "extent x 2.35 … 13.4, y 48.85 … 52.52 (EPSG:4326)"
        );
        assert_eq!(cities.columns[1].declared_type.as_deref(), Some("POINT"));
        assert_eq!(cities.columns[1].examples, ["<29-byte blob>"]);
        assert_eq!(
            cities.sample_rows[1],
            ["2", "<29-byte blob>", "Berlin", "3600000"]
        );
        assert_eq!(set.tables[1].rows, 2);
    }

    #[test]
    fn truncated_and_garbage_databases_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("shop.db");
        make_db(&path);
        let bytes = std::fs::read(&path).unwrap();
        let cut = Source::from_bytes("cut.db", bytes[..2048].to_vec());
        let e = analyze(&cut).unwrap_err();
        assert!(e.to_string().contains("truncated"), "{e}");
        // A sound header over garbage pages: SQLite's own checks must say no.
        let mut g = bytes[..100].to_vec();
        g[28..32].copy_from_slice(&2u32.to_be_bytes());
        g.extend((0..8192 - 100).map(|i: u32| (i.wrapping_mul(2_654_435_761) >> 13) as u8));
        assert!(analyze(&Source::from_bytes("g.db", g)).is_err());
        for short in [&b"SQLite format 3\0"[..], b"", &[0u8; 200]] {
            assert!(analyze(&Source::from_bytes("s.db", short.to_vec())).is_err());
        }
    }
}
