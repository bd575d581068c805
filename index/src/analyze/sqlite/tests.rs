//! Tests of the SQLite analyzer on databases made with rusqlite.

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
        t.notes.iter().any(|n| n.contains("sample of 10000 rows")),
        "{:?}",
        t.notes
    );
    // A sample's figures are flagged, and `--full` would read more.
    let x = &t.columns[0];
    assert!(x.estimated && !x.distinct_exact && t.sampled);
    assert_eq!(
        t.load.as_deref(),
        Some(r#"pd.read_sql_query('SELECT * FROM "big"', sqlite3.connect(path))"#)
    );
    // Without a budget, every row: exact figures.
    let src = Source::open(&path, 0).unwrap().with_budget(None);
    let t = &analyze(&src).unwrap().tables[0];
    let x = &t.columns[0];
    assert!(!x.estimated && !t.sampled);
    // Past the exact cap of distinct values, the sketch's estimate (flagged inexact).
    assert!(!x.distinct_exact && x.distinct.abs_diff(10_050) < 500);
    assert_eq!((x.max.as_deref(), x.mean), (Some("10050"), Some(5_025.5)));
    assert!(t.notes.is_empty(), "{:?}", t.notes);
}

#[test]
fn load_calls_quote_odd_names_and_list_generated_columns() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("odd.db");
    let c = Connection::open(&path).unwrap();
    c.execute_batch(
        r#"CREATE TABLE "it's ""odd""" (a INTEGER, b INTEGER AS (a * 2));
           INSERT INTO "it's ""odd""" (a) VALUES (1), (2);"#,
    )
    .unwrap();
    drop(c);
    let t = &analyze(&Source::open(&path, 0).unwrap()).unwrap().tables[0];
    assert_eq!(t.name, r#"it's "odd""#);
    // The generated column is not among the described ones: SELECT * would add it.
    let names: Vec<&str> = t.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["a"]);
    assert_eq!(
        t.load.as_deref(),
        Some(r#"pd.read_sql_query('SELECT "a" FROM "it\'s ""odd"""', sqlite3.connect(path))"#)
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
