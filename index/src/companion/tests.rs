//! Links kept true by full and scoped index runs: the documentation changes, goes,
//! appears, and the data file changes its shape.

use crate::analyze::Content;
use crate::catalog::{CatalogReader, CatalogWriter};
use crate::embed::{Embedder, HashEmbedder};
use crate::indexer::{IndexOptions, Indexer, NoProgress};
use crate::lock::WriterLock;
use std::path::{Path, PathBuf};

fn write(root: &Path, rel: &str, body: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, body).unwrap();
}

const DAT: &str = "1999  1  12.5\n1999  2  13.1\n2000  1  -2.0\n2000  2   4.0\n";

fn doc(third: &str) -> String {
    format!("Format of obs.dat\n\n1  YEAR   I4    year\n2  MONTH  I2    month\n3  {third}  F5.1  degC  air temperature\n")
}

/// The column names and notes of `path` as the catalog shows it.
fn shown(idx: &Path, path: &str) -> (Vec<String>, Vec<String>) {
    let cat = CatalogReader::open(idx).unwrap();
    let row = cat.file(path).unwrap().unwrap();
    let d = cat.file_description(&row).unwrap().unwrap();
    let names = match &d.content {
        Content::Table(t) => t.columns.iter().map(|c| c.name.clone()).collect(),
        _ => Vec::new(),
    };
    (names, d.notes)
}

/// The stored vector of `path` is the embedding of its description as shown, and no
/// search work is left pending.
fn assert_vector_follows(idx: &Path, path: &str) {
    let cat = CatalogReader::open(idx).unwrap();
    assert!(cat.search_dirty().unwrap().is_empty());
    let row = cat.file(path).unwrap().unwrap();
    let d = cat.file_description(&row).unwrap().unwrap();
    let e = HashEmbedder::default();
    let want = e.embed(&[&crate::search::doc::semantic_text(&d)]).unwrap();
    let stored = crate::search::ann::file_vectors(&cat, idx, &e.id()).unwrap();
    let got = &stored.iter().find(|k| k.path == path).unwrap().vector;
    assert_eq!(
        got,
        &crate::compact::Code::new(&want[0]),
        "{path}: the vector of another description"
    );
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn scoped_runs_keep_links_true() {
    let d = tempfile::tempdir().unwrap();
    let lake = d.path().join("lake");
    let idx = d.path().join("idx");
    write(&lake, "w/obs.dat", DAT);
    write(&lake, "w/obs_format.txt", &doc("TAIR"));
    write(&lake, "w/other.csv", "id,value\n1,2\n3,4\n");
    let opts = IndexOptions {
        jobs: 2,
        ..Default::default()
    };
    let mut ix = Indexer::open(&lake, &idx, &opts).unwrap();
    ix.run(&NoProgress).unwrap();
    let linked = |third: &str| {
        (
            strings(&["YEAR", "MONTH", third]),
            vec![
                "columns named by w/obs_format.txt".to_string(),
                // Descriptions that only repeat the name are left out.
                format!("column meanings: {third} = air temperature"),
            ],
        )
    };
    let (names, notes) = shown(&idx, "w/obs.dat");
    assert_eq!(names, ["YEAR", "MONTH", "TAIR"]);
    assert_eq!(notes[0], "columns named by w/obs_format.txt");
    assert_eq!(shown(&idx, "w/obs_format.txt").1, ["documents w/obs.dat"]);
    assert_eq!(shown(&idx, "w/other.csv").1, Vec::<String>::new());
    assert_vector_follows(&idx, "w/obs.dat");

    // The documentation changes (the data file does not): a scoped run on the doc alone.
    let hash_before = CatalogReader::open(&idx)
        .unwrap()
        .file("w/obs.dat")
        .unwrap()
        .unwrap()
        .hash;
    write(&lake, "w/obs_format.txt", &doc("TEMP_AIR"));
    ix.update(&[PathBuf::from("w/obs_format.txt")], &NoProgress)
        .unwrap();
    let row = CatalogReader::open(&idx)
        .unwrap()
        .file("w/obs.dat")
        .unwrap()
        .unwrap();
    assert_eq!(row.hash, hash_before, "the data file was not re-described");
    assert_eq!(shown(&idx, "w/obs.dat"), linked("TEMP_AIR"));
    assert_vector_follows(&idx, "w/obs.dat");

    // The documentation goes: the names revert.
    std::fs::remove_file(lake.join("w/obs_format.txt")).unwrap();
    ix.update(&[PathBuf::from("w/obs_format.txt")], &NoProgress)
        .unwrap();
    assert_eq!(
        shown(&idx, "w/obs.dat"),
        (strings(&["column_1", "column_2", "column_3"]), Vec::new())
    );
    assert_vector_follows(&idx, "w/obs.dat");

    // A new documentation file appears, under a readme-like name.
    write(&lake, "w/README.txt", &doc("TEMP_AIR"));
    ix.update(&[PathBuf::from("w/README.txt")], &NoProgress)
        .unwrap();
    let (names, notes) = shown(&idx, "w/obs.dat");
    assert_eq!(names, ["YEAR", "MONTH", "TEMP_AIR"]);
    assert_eq!(notes[0], "columns named by w/README.txt");
    assert_eq!(shown(&idx, "w/README.txt").1, ["documents w/obs.dat"]);

    // The data file gains a column: the documentation no longer fits, the link goes.
    write(
        &lake,
        "w/obs.dat",
        "1999  1  12.5  3\n1999  2  13.1  4\n2000  1  -2.0  5\n2000  2   4.0  6\n",
    );
    ix.update(&[PathBuf::from("w/obs.dat")], &NoProgress)
        .unwrap();
    assert_eq!(
        shown(&idx, "w/obs.dat").0,
        ["column_1", "column_2", "column_3", "column_4"]
    );
    assert_eq!(shown(&idx, "w/README.txt").1, Vec::<String>::new());
    assert_vector_follows(&idx, "w/obs.dat");

    // A full run over the same tree finds exactly what the scoped runs left.
    drop(ix);
    let fresh = d.path().join("fresh");
    crate::indexer::index(&lake, &fresh, &opts, &NoProgress).unwrap();
    for p in ["w/obs.dat", "w/README.txt", "w/other.csv"] {
        assert_eq!(shown(&idx, p), shown(&fresh, p), "{p}");
    }
}

#[test]
fn a_new_embedder_embeds_linked_files_as_shown() {
    let d = tempfile::tempdir().unwrap();
    let lake = d.path().join("lake");
    let idx = d.path().join("idx");
    write(&lake, "w/obs.dat", DAT);
    write(&lake, "w/obs_format.txt", &doc("TAIR"));
    let opts = IndexOptions {
        jobs: 1,
        ..Default::default()
    };
    crate::indexer::index(&lake, &idx, &opts, &NoProgress).unwrap();
    // Another embedder: every description is embedded again, outside any file change.
    let e = HashEmbedder::new(64).unwrap();
    let mut cat = CatalogWriter::open(
        WriterLock::acquire(&idx).unwrap(),
        &lake.canonicalize().unwrap(),
    )
    .unwrap();
    crate::search::sync::sync(&mut cat, &idx, &e, "hash64").unwrap();
    let row = cat.file("w/obs.dat").unwrap().unwrap();
    let shown = cat.file_description(&row).unwrap().unwrap();
    let want = e
        .embed(&[&crate::search::doc::semantic_text(&shown)])
        .unwrap();
    let stored = crate::search::ann::file_vectors(&cat, &idx, &e.id()).unwrap();
    assert_eq!(
        stored
            .iter()
            .find(|k| k.path == "w/obs.dat")
            .unwrap()
            .vector,
        crate::compact::Code::new(&want[0])
    );
}

#[test]
fn an_index_made_before_links_links_every_folder_on_its_next_run() {
    let d = tempfile::tempdir().unwrap();
    let lake = d.path().join("lake");
    let idx = d.path().join("idx");
    write(&lake, "w/obs.dat", DAT);
    write(&lake, "w/obs_format.txt", &doc("TAIR"));
    let opts = IndexOptions::default();
    crate::indexer::index(&lake, &idx, &opts, &NoProgress).unwrap();
    // As an index made before the table: no table, no links.
    rusqlite::Connection::open(idx.join(crate::catalog::CATALOG_FILE))
        .unwrap()
        .execute_batch("DROP TABLE companions")
        .unwrap();
    assert_eq!(
        shown(&idx, "w/obs.dat").0,
        ["column_1", "column_2", "column_3"]
    );
    // A run that finds no file changed links the folder.
    let r = crate::indexer::index(&lake, &idx, &opts, &NoProgress).unwrap();
    assert_eq!(r.unchanged, 2);
    assert_eq!(shown(&idx, "w/obs.dat").0, ["YEAR", "MONTH", "TAIR"]);
    assert_vector_follows(&idx, "w/obs.dat");
}

#[test]
fn a_linked_file_whose_content_changes_to_an_embedded_one_is_embedded_as_shown() {
    let d = tempfile::tempdir().unwrap();
    let lake = d.path().join("lake");
    let idx = d.path().join("idx");
    let other = "1998  3   1.5\n1998  4   2.5\n2001  1  -7.0\n2001  2   9.0\n";
    write(&lake, "w/obs.dat", DAT);
    write(&lake, "w/obs_format.txt", &doc("TAIR"));
    // The same content elsewhere, undocumented: embedded by its bare description.
    write(&lake, "v/copy.dat", other);
    let opts = IndexOptions {
        jobs: 1,
        ..Default::default()
    };
    let mut ix = Indexer::open(&lake, &idx, &opts).unwrap();
    ix.run(&NoProgress).unwrap();
    // The link stays the same; the new content's embedding, made without it, goes.
    write(&lake, "w/obs.dat", other);
    ix.update(&[PathBuf::from("w/obs.dat")], &NoProgress)
        .unwrap();
    assert_eq!(shown(&idx, "w/obs.dat").0, ["YEAR", "MONTH", "TAIR"]);
    assert_vector_follows(&idx, "w/obs.dat");
}

/// A yearly file written with Fortran's `(I4,2I2,F6.1,A5)`: the date's fields touch.
fn jammed(year: u32) -> String {
    (1..=12)
        .map(|m| {
            format!(
                "{year}{m:02}{:02}{:>6.1}{:>5}\n",
                m * 2,
                m as f64 * 1.5 - 4.0,
                format!("S{m}")
            )
        })
        .collect()
}

/// The load line and rule counts of `path` as the catalog shows it.
fn load_and_rules(idx: &Path, path: &str) -> (Option<String>, u64) {
    let cat = CatalogReader::open(idx).unwrap();
    let row = cat.file(path).unwrap().unwrap();
    let d = cat.file_description(&row).unwrap().unwrap();
    let load = match &d.content {
        Content::Table(t) => t.load.clone(),
        _ => None,
    };
    (load, d.rules.get("format-companion").copied().unwrap_or(0))
}

#[test]
fn a_field_list_names_the_yearly_files_whose_lines_it_fits() {
    let d = tempfile::tempdir().unwrap();
    let lake = d.path().join("lake");
    let idx = d.path().join("idx");
    for y in [1998, 1999, 2000] {
        write(&lake, &format!("m/obs_{y}.dat"), &jammed(y));
    }
    let fields = |last: &str| {
        format!("Observation files\n\n1  I4    year\n2  I2    month\n3  I2    day\n4  F6.1  tair\n5  A5    {last}\n")
    };
    write(&lake, "m/fields.txt", &fields("station"));
    // Release notes numbered like fields, and a field list of another width: neither
    // names anything.
    write(
        &lake,
        "m/notes.txt",
        "1 Fixed bug in the reader\n2 Added export\n",
    );
    write(
        &lake,
        "m/other_layout.txt",
        "year 1-4\nmonth 5-6\ncount 7-9\n",
    );
    let opts = IndexOptions {
        jobs: 2,
        ..Default::default()
    };
    let mut ix = Indexer::open(&lake, &idx, &opts).unwrap();
    ix.run(&NoProgress).unwrap();
    let five = |last: &str| strings(&["year", "month", "day", "tair", last]);
    for y in [1998, 1999, 2000] {
        let path = format!("m/obs_{y}.dat");
        let (names, notes) = shown(&idx, &path);
        assert_eq!(names, five("station"), "{path}");
        assert_eq!(
            notes[..2],
            [
                "columns named by m/fields.txt (its field list: 5 fields at characters 1-4, 5-6, 7-8, 9-14, 15-19, which fit the lines)".to_string(),
                "fields read at the documented positions: the data writes some without a blank between them".to_string(),
            ]
        );
        let (load, counted) = load_and_rules(&idx, &path);
        assert_eq!(
            load.as_deref(),
            Some(
                r#"pd.read_fwf(path, colspecs=[(0, 4), (4, 6), (6, 8), (8, 14), (14, 19)], skiprows=0, header=None, names=["year", "month", "day", "tair", "station"])"#
            )
        );
        assert_eq!(counted, 5);
    }
    assert_eq!(
        shown(&idx, "m/fields.txt").1,
        ["documents the fields of 3 files: m/obs_1998.dat, m/obs_1999.dat, m/obs_2000.dat"]
    );
    assert!(shown(&idx, "m/notes.txt").1.is_empty());
    assert!(shown(&idx, "m/other_layout.txt").1.is_empty());
    assert_vector_follows(&idx, "m/obs_1999.dat");

    // The field list changes: the data files, unchanged, follow.
    write(&lake, "m/fields.txt", &fields("stn_id"));
    ix.update(&[PathBuf::from("m/fields.txt")], &NoProgress)
        .unwrap();
    assert_eq!(shown(&idx, "m/obs_1998.dat").0, five("stn_id"));
    assert_vector_follows(&idx, "m/obs_1998.dat");

    // A field list that no longer fits the lines: the names go.
    write(
        &lake,
        "m/fields.txt",
        "1  I4  year\n2  I4  month\n3  F6.1  tair\n",
    );
    ix.update(&[PathBuf::from("m/fields.txt")], &NoProgress)
        .unwrap();
    let (names, notes) = shown(&idx, "m/obs_1998.dat");
    assert!(names[0].starts_with("column_"), "{names:?}");
    assert!(notes.iter().all(|n| !n.contains("named by")), "{notes:?}");
}
