use crate::catalog::{CatalogReader, CatalogWriter, CATALOG_FILE, FORMAT_VERSION};
use crate::lock::WriterLock;
use rusqlite::Connection;
use std::path::Path;

/// A catalog of this version put back into version 2's layout, as a version-2 binary
/// left it: `files` with text templates and hex digests indexed by template and by
/// collection, `descriptions` repeating the description's format, error, time and
/// schema, the ranking records in `rank_records` with their triggers, hex collection ids.
const AS_VERSION_2: &str = "
DROP INDEX files_template;
DROP INDEX files_collection_time;
DROP INDEX collections_template;
ALTER TABLE files RENAME TO new_files;
ALTER TABLE descriptions RENAME TO new_descriptions;
ALTER TABLE collections RENAME TO new_collections;
CREATE TABLE files (
    path TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, hash BLOB,
    format TEXT NOT NULL, analyzer TEXT, state TEXT NOT NULL, error TEXT,
    racy INTEGER NOT NULL DEFAULT 0, indexed_at INTEGER NOT NULL, time_start TEXT,
    time_end TEXT, time_source TEXT, sampled INTEGER NOT NULL DEFAULT 0, schema TEXT,
    template TEXT, collection TEXT
) WITHOUT ROWID;
INSERT INTO files SELECT f.path, f.size, f.mtime_ns, f.hash, f.format, f.analyzer, f.state,
    f.error, f.racy, f.indexed_at, f.time_start, f.time_end, f.time_source, f.sampled,
    CASE typeof(f.schema) WHEN 'blob' THEN lower(hex(f.schema)) ELSE f.schema END,
    t.template,
    CASE typeof(f.collection) WHEN 'blob' THEN lower(hex(f.collection)) ELSE f.collection END
    FROM new_files f LEFT JOIN templates t ON t.id = f.template;
CREATE INDEX files_template ON files(template);
CREATE INDEX files_collection ON files(collection);
CREATE TABLE descriptions (
    hash BLOB NOT NULL, analyzer TEXT NOT NULL, format TEXT NOT NULL, error TEXT,
    raw_len INTEGER NOT NULL, blob BLOB NOT NULL, created_at INTEGER NOT NULL,
    time_start TEXT, time_end TEXT, time_source TEXT, sampled INTEGER NOT NULL DEFAULT 0,
    schema TEXT, PRIMARY KEY (hash, analyzer)
) WITHOUT ROWID;
INSERT INTO descriptions SELECT d.hash, d.analyzer, f.format, f.error, d.raw_len, d.blob, 7,
    f.time_start, f.time_end, f.time_source, d.sampled, f.schema
    FROM new_descriptions d JOIN files f ON f.hash = d.hash AND f.analyzer = d.analyzer
    GROUP BY d.hash, d.analyzer;
CREATE TABLE rank_records (
    hash BLOB NOT NULL, analyzer TEXT NOT NULL, record BLOB NOT NULL,
    PRIMARY KEY (hash, analyzer)
) WITHOUT ROWID;
INSERT INTO rank_records SELECT hash, analyzer, record FROM new_descriptions;
CREATE TRIGGER descriptions_record_stale AFTER UPDATE ON descriptions BEGIN
    DELETE FROM rank_records WHERE hash = old.hash AND analyzer = old.analyzer;
END;
CREATE TRIGGER descriptions_record_gone AFTER DELETE ON descriptions BEGIN
    DELETE FROM rank_records WHERE hash = old.hash AND analyzer = old.analyzer;
END;
CREATE TABLE collections (
    id TEXT PRIMARY KEY, template TEXT NOT NULL, format TEXT NOT NULL,
    members INTEGER NOT NULL, time_start TEXT, time_end TEXT, detail TEXT NOT NULL
) WITHOUT ROWID;
INSERT INTO collections SELECT lower(hex(id)), template, format, members, time_start,
    time_end, detail FROM new_collections;
CREATE INDEX collections_template ON collections(template);
DROP TABLE new_files;
DROP TABLE new_descriptions;
DROP TABLE new_collections;
DROP TABLE templates;
UPDATE meta SET value = '2' WHERE key = 'format_version';
";

/// A lake with a daily collection (the days of January 2020), a yearly one and loose
/// files, indexed by this binary.
fn indexed(root: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let (lake, idx) = (root.join("lake"), root.join("idx"));
    for dir in ["daily", "yearly", "notes"] {
        std::fs::create_dir_all(lake.join(dir)).unwrap();
    }
    for day in 1..=20 {
        let text = format!("station,reading\nS{day},{}\nT{day},{}\n", day * 3, day + 1);
        std::fs::write(lake.join(format!("daily/2020-01-{day:02}.csv")), text).unwrap();
    }
    for year in 2001..=2006 {
        let text = format!("region,gdp\nNorth,{year}\nSouth,{}\n", year + 7);
        std::fs::write(lake.join(format!("yearly/gdp_{year}.csv")), text).unwrap();
    }
    std::fs::write(
        lake.join("notes/README.md"),
        "# Notes\n\nStations and regions.\n",
    )
    .unwrap();
    std::fs::write(lake.join("top.json"), r#"{"a": 1, "b": [1, 2]}"#).unwrap();
    // Written an hour ago: a file modified within the clock's resolution of a run is
    // marked racy by that run and cleared by the next, which the reads would show.
    let past = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    for dir in ["daily", "yearly", "notes", ""] {
        for e in std::fs::read_dir(lake.join(dir)).unwrap() {
            let path = e.unwrap().path();
            if path.is_file() {
                let f = std::fs::File::options().write(true).open(&path).unwrap();
                f.set_modified(past).unwrap();
            }
        }
    }
    run(&lake, &idx);
    (lake, idx)
}

/// An index run of `lake` into `idx`.
fn run(lake: &Path, idx: &Path) {
    crate::index(
        lake,
        idx,
        &crate::IndexOptions::default(),
        &crate::indexer::NoProgress,
    )
    .unwrap();
}

/// Everything the catalog answers that the layout change touches, as text.
fn reads(cat: &CatalogReader) -> Vec<String> {
    let files = cat.load_files().unwrap();
    let mut paths: Vec<&str> = files.keys().map(String::as_str).collect();
    paths.sort_unstable();
    let mut out = vec![format!("{:?}", cat.collections().unwrap())];
    for p in &paths {
        let f = &files[*p];
        let ranked = cat.ranked_file(p, true).unwrap().unwrap();
        let cached = cat
            .cached(f.hash.as_ref().unwrap(), f.analyzer.as_deref().unwrap())
            .unwrap();
        out.push(format!(
            "{f:?} {:?} {:?} {:?} {cached:?}",
            ranked.collection,
            ranked.record,
            cat.collection_of(p).unwrap()
        ));
    }
    for c in cat.collections().unwrap() {
        let members = cat
            .members_overlapping(&c.id, "2020-01-05", "2020-01-07", 10)
            .unwrap();
        out.push(format!("{} {members:?}", c.id));
    }
    out
}

fn indexes_of_files(c: &Connection) -> Vec<String> {
    let mut s = c
        .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'files' ORDER BY name")
        .unwrap();
    s.query_map([], |r| r.get(0))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap()
}

/// Open a writer on the index at `idx` (which upgrades its catalog), and check that the
/// catalog is of this version with the new layout's indexes of `files`.
fn upgraded_by_a_writer(lake: &Path, idx: &Path) -> Connection {
    drop(CatalogWriter::open(WriterLock::acquire(idx).unwrap(), lake).unwrap());
    let c = Connection::open(idx.join(CATALOG_FILE)).unwrap();
    assert_eq!(version(&c), FORMAT_VERSION.to_string());
    assert_eq!(
        indexes_of_files(&c),
        ["files_collection_time", "files_template"]
    );
    c
}

fn version(c: &Connection) -> String {
    c.query_row(
        "SELECT value FROM meta WHERE key = 'format_version'",
        [],
        |r| r.get(0),
    )
    .unwrap()
}

#[test]
fn a_version_2_catalog_is_refused_to_readers_and_upgraded_by_a_writer_to_the_same_reads() {
    let d = tempfile::tempdir().unwrap();
    let (lake, idx) = indexed(d.path());
    let before = reads(&CatalogReader::open(&idx).unwrap());
    // The lake has what the reads must cover: collections, members of the days asked,
    // records, digests.
    let days = r#"["daily/2020-01-05.csv", "daily/2020-01-06.csv", "daily/2020-01-07.csv"]"#;
    assert!(before.iter().any(|l| l.ends_with(days)), "{before:#?}");
    assert!(before.iter().any(|l| l.contains("Some(RankRecord")));
    let db = idx.join(CATALOG_FILE);
    Connection::open(&db)
        .unwrap()
        .execute_batch(AS_VERSION_2)
        .unwrap();

    let Err(e) = CatalogReader::open(&idx) else {
        panic!("a reader opened a version-2 catalog");
    };
    assert!(e.to_string().contains("run `lakestar index` once"), "{e}");
    assert_eq!(
        version(&Connection::open(&db).unwrap()),
        "2",
        "a reader changes nothing"
    );
    // What the run must know before its writer upgrades the catalog is still read.
    assert_eq!(
        crate::indexer::recorded_walk(&idx).unwrap(),
        Some(crate::indexer::WalkOptions::default())
    );
    let (_, chosen) = crate::search::embedder::default_for(&idx, None).unwrap();
    assert!(
        matches!(chosen, crate::search::embedder::DefaultChoice::Recorded),
        "the index's own embedder"
    );

    let c = upgraded_by_a_writer(&lake, &idx);
    let gone: i64 = c
        .query_row(
            "SELECT COUNT(*) FROM sqlite_master WHERE name IN ('rank_records', 'old_files',
             'old_descriptions', 'old_collections', 'descriptions_record_stale')",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(gone, 0);
    // Digests are stored as their bytes, every file's template once.
    let (packed, templates): (i64, i64) = c
        .query_row(
            "SELECT (SELECT COUNT(*) FROM files WHERE typeof(schema) = 'blob' AND length(schema) = 8),
                    (SELECT COUNT(*) FROM templates)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    let paths: Vec<String> = c
        .prepare("SELECT path FROM files")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    let distinct: std::collections::BTreeSet<String> = paths
        .iter()
        .map(|p| crate::collect::template(p).text)
        .collect();
    assert_eq!((packed, templates), (28, distinct.len() as i64));
    drop(c);
    assert_eq!(reads(&CatalogReader::open(&idx).unwrap()), before);

    // A run on the upgraded catalog changes nothing it reads.
    run(&lake, &idx);
    assert_eq!(reads(&CatalogReader::open(&idx).unwrap()), before);
}

#[test]
fn a_version_1_catalog_is_upgraded_by_a_writer_and_a_newer_one_refused() {
    let d = tempfile::tempdir().unwrap();
    let (lake, idx) = indexed(d.path());
    let before = reads(&CatalogReader::open(&idx).unwrap());
    let db = idx.join(CATALOG_FILE);
    Connection::open(&db)
        .unwrap()
        .execute_batch(&format!(
            "{AS_VERSION_2}
             UPDATE meta SET value = '1' WHERE key = 'format_version';
             CREATE INDEX files_hash ON files(hash);"
        ))
        .unwrap();
    let c = upgraded_by_a_writer(&lake, &idx);
    assert_eq!(reads(&CatalogReader::open(&idx).unwrap()), before);

    // A newer version than this one reads is refused, with the way out.
    c.execute(
        "UPDATE meta SET value = ?1 WHERE key = 'format_version'",
        [(FORMAT_VERSION + 1).to_string()],
    )
    .unwrap();
    let Err(e) = CatalogReader::open(&idx) else {
        panic!("a catalog of a newer version opened");
    };
    assert!(e.to_string().contains("--rebuild"), "{e}");
}

#[test]
fn a_version_4_catalog_gains_tables_and_its_next_run_derives_them() {
    let d = tempfile::tempdir().unwrap();
    let (lake, idx) = indexed(d.path());
    let before = reads(&CatalogReader::open(&idx).unwrap());
    Connection::open(idx.join(CATALOG_FILE))
        .unwrap()
        .execute_batch(
            "DROP TABLE tables;
             DELETE FROM meta WHERE key = 'tables_version';
             UPDATE meta SET value = '4' WHERE key = 'format_version';",
        )
        .unwrap();
    let Err(e) = CatalogReader::open(&idx) else {
        panic!("a version 4 catalog opened to a reader");
    };
    assert!(e.to_string().contains("run `lakestar index` once"), "{e}");
    drop(upgraded_by_a_writer(&lake, &idx));
    let cat = CatalogReader::open(&idx).unwrap();
    assert_eq!(reads(&cat), before);
    assert!(cat.tables().unwrap().is_empty());
    assert_eq!(cat.tables_version().unwrap(), None);
    drop(cat);
    run(&lake, &idx);
    let cat = CatalogReader::open(&idx).unwrap();
    assert_eq!(
        cat.tables_version().unwrap(),
        Some(crate::dataset::TABLES_RULE)
    );
}
