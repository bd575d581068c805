//! The passes after the files (companion and lookup links, collections, tables) read the
//! run's changed paths a chunk at a time ([`super::PATHS_CHUNK`], three here): over a
//! lake whose paths span many chunks and folders, they find what they found when they
//! held every path.

use super::*;
use crate::catalog::CatalogReader;

fn write(root: &Path, rel: &str, body: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, body).unwrap();
}

/// The root, a folder, two whose names extend it and one below it: in path order
/// `a-b/x` and `a.b/x` come before `a/x`, and `a/b/x` among `a`'s own files, so a
/// folder's changed paths are not one run of them.
const FOLDERS: [&str; 5] = ["", "a", "a-b", "a.b", "a/b"];

const STATES: [(&str, &str); 10] = [
    ("AL", "Alabama"),
    ("AK", "Alaska"),
    ("AZ", "Arizona"),
    ("CA", "California"),
    ("CO", "Colorado"),
    ("FL", "Florida"),
    ("GA", "Georgia"),
    ("NY", "New York"),
    ("TX", "Texas"),
    ("WA", "Washington"),
];

fn at(folder: &str, name: &str) -> String {
    if folder.is_empty() {
        name.to_string()
    } else {
        format!("{folder}/{name}")
    }
}

/// A headerless data file, its columns named by `obs_format.txt` beside it.
fn dat(base: f64) -> String {
    (0..4)
        .map(|i| format!("{}  {}  {:.1}\n", 1999 + i / 2, 1 + i % 2, base + i as f64))
        .collect()
}

const DOC: &str = "Format of obs.dat\n\n1  YEAR   I4    year\n2  MONTH  I2    month\n3  TAIR  F5.1  degC  air temperature\n";

/// In every folder: a documented headerless file and a table of state codes, which the
/// lookup at the root names. A Hive table in `a-b/sales`, a broken Delta one in `a.b/log`.
fn lake(root: &Path) {
    let mut codes = String::from("abbrev,state_name\n");
    for (c, n) in STATES {
        codes.push_str(&format!("{c},{n}\n"));
    }
    write(root, "state_codes.csv", &codes);
    let mut rates = String::from("year,state,unemployment_rate\n");
    for y in 2001..=2020 {
        for (i, (c, _)) in STATES.iter().enumerate() {
            rates.push_str(&format!(
                "{y},{c},{}.{}\n",
                3 + (i + y as usize) % 6,
                i % 10
            ));
        }
    }
    for (i, f) in FOLDERS.iter().enumerate() {
        write(root, &at(f, "obs.dat"), &dat(10.0 * i as f64));
        write(root, &at(f, "obs_format.txt"), DOC);
        write(root, &at(f, "rates.csv"), &rates);
    }
    for y in [2020, 2021] {
        write(
            root,
            &format!("a-b/sales/year={y}/m.csv"),
            "id,value\n1,2\n3,4\n",
        );
    }
    write(
        root,
        "a.b/log/_delta_log/00000000000000000000.json",
        "{not json",
    );
}

/// Per data file: its documentation and lookups; and the tables, with whether they
/// have an error.
type Passes = (
    Vec<(String, Option<String>, Vec<String>)>,
    Vec<(String, bool)>,
);

fn passes(idx: &Path) -> Passes {
    let cat = CatalogReader::open(idx).unwrap();
    let mut files = Vec::new();
    for f in FOLDERS {
        for name in ["obs.dat", "obs_format.txt", "rates.csv"] {
            let p = at(f, name);
            let doc = cat.companion_of(&p).unwrap().map(|l| l.doc);
            let lookups = cat.lookups_of(&p).unwrap().into_iter();
            files.push((p, doc, lookups.map(|l| l.lookup).collect()));
        }
    }
    let tables = cat.tables().unwrap().into_iter();
    (files, tables.map(|t| (t.root, t.error.is_some())).collect())
}

fn expected() -> Passes {
    let mut files = Vec::new();
    for f in FOLDERS {
        files.push((at(f, "obs.dat"), Some(at(f, "obs_format.txt")), vec![]));
        files.push((at(f, "obs_format.txt"), None, vec![]));
        files.push((at(f, "rates.csv"), None, vec!["state_codes.csv".into()]));
    }
    let tables = vec![("a-b/sales".into(), false), ("a.b/log".into(), true)];
    (files, tables)
}

fn opts() -> IndexOptions {
    IndexOptions {
        jobs: 2,
        ..Default::default()
    }
}

#[test]
fn the_passes_over_changed_paths_in_chunks_find_every_link_and_table() {
    let d = tempfile::tempdir().unwrap();
    let (root, idx) = (d.path().join("lake"), d.path().join("idx"));
    lake(&root);
    let mut ix = Indexer::open(&root, &idx, &opts()).unwrap();
    let r = ix.run(&NoProgress).unwrap();
    assert!(r.added as usize > 5 * PATHS_CHUNK, "{r:?}");
    assert_eq!(passes(&idx), expected());

    // A data file changed, and a Hive layout inside the table, which the changed path
    // claims as a table of its own but the table above it holds (found among the
    // changed paths' folders, not only by the claims).
    write(&root, "a.b/obs.dat", &dat(199.0));
    write(&root, "a-b/sales/sub/year=2022/m.csv", "id,value\n5,6\n");
    let r = ix.run(&NoProgress).unwrap();
    assert_eq!((r.modified, r.added), (1, 1), "{r:?}");
    assert_eq!(passes(&idx), expected());
    drop(ix);

    // Catalogs of older rules derive every table and link every folder's lookups again.
    rusqlite::Connection::open(idx.join(crate::catalog::CATALOG_FILE))
        .unwrap()
        .execute_batch(
            "DELETE FROM tables; DELETE FROM lookups;
             UPDATE meta SET value = '0' WHERE key = 'tables_version';
             DELETE FROM meta WHERE key = 'lookups_version';",
        )
        .unwrap();
    let r = index(&root, &idx, &opts(), &NoProgress).unwrap();
    assert_eq!(r.added + r.modified + r.deleted, 0, "{r:?}");
    assert_eq!(passes(&idx), expected());

    // A fresh index of the same tree agrees.
    let fresh = d.path().join("fresh");
    index(&root, &fresh, &opts(), &NoProgress).unwrap();
    assert_eq!(passes(&fresh), expected());
}

/// Every folder's lookups linked again, as after a change of their rule, by `jobs`
/// threads each keeping `budget` bytes of tables.
fn relink_afresh(root: &Path, idx: &Path, jobs: usize, budget: usize) -> Result<usize> {
    rusqlite::Connection::open(idx.join(crate::catalog::CATALOG_FILE))
        .unwrap()
        .execute_batch("DELETE FROM lookups; DELETE FROM meta WHERE key = 'lookups_version';")
        .unwrap();
    let lock = crate::lock::WriterLock::acquire(idx).unwrap();
    let mut cat = crate::catalog::CatalogWriter::open(lock, root).unwrap();
    super::relink::relink_within(&mut cat, super::relink::LakeReader::Dir(root), jobs, budget)
}

/// Every lookup link, as stored.
fn lookup_rows(idx: &Path) -> Vec<(String, String, String)> {
    let conn = rusqlite::Connection::open(idx.join(crate::catalog::CATALOG_FILE)).unwrap();
    let mut stmt = conn
        .prepare("SELECT data, lookup, link FROM lookups ORDER BY data, lookup")
        .unwrap();
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)));
    rows.unwrap().map(Result::unwrap).collect()
}

#[test]
fn lookups_linked_by_several_threads_are_those_one_links_and_a_failure_stops_them() {
    let d = tempfile::tempdir().unwrap();
    let (root, idx) = (d.path().join("lake"), d.path().join("idx"));
    lake(&root);
    // Folders enough for every thread to take several of them.
    let rates = std::fs::read_to_string(root.join("a/rates.csv")).unwrap();
    for i in 0..12 {
        write(&root, &format!("more/f{i:02}/rates.csv"), &rates);
    }
    index(&root, &idx, &opts(), &NoProgress).unwrap();
    let linked = lookup_rows(&idx);
    assert_eq!(linked.len(), FOLDERS.len() + 12, "{linked:?}");
    let relink_with = |jobs: usize| relink_afresh(&root, &idx, jobs, super::relink::LOOKUP_BYTES);
    for jobs in [1, 2, 3, 64] {
        relink_with(jobs).unwrap();
        assert_eq!(lookup_rows(&idx), linked, "{jobs} threads");
    }
    // Descriptions that no longer decode: an error, whichever thread meets it first,
    // and the others stop.
    rusqlite::Connection::open(idx.join(crate::catalog::CATALOG_FILE))
        .unwrap()
        .execute_batch("UPDATE descriptions SET blob = x'00'")
        .unwrap();
    for jobs in [1, 2, 3] {
        assert!(relink_with(jobs).is_err(), "{jobs} threads");
    }
}

/// However few bytes of tables a linking thread may keep, the links are the same: the
/// tables of a folder that does not fit are matched a batch at a time (here a folder
/// of keyed tables above its data folders, keyed tables beside the data, and one at the
/// root; budgets from none kept and batches of one table, through some folders kept, to
/// all of them).
#[test]
fn lookups_linked_within_any_budget_of_tables_are_the_same() {
    let d = tempfile::tempdir().unwrap();
    let (root, idx) = (d.path().join("lake"), d.path().join("idx"));
    lake(&root);
    let industries = [
        "Mining", "Retail", "Farming", "Finance", "Shipping", "Textiles",
    ];
    let mut table = String::from("industry_code,industry\n");
    for (i, n) in industries.iter().enumerate() {
        table.push_str(&format!("{},{n}\n", 110 + i));
    }
    write(&root, "more/industry_codes.csv", &table);
    let mut table = String::from("region,region_name\n");
    for (i, n) in ["North", "South", "East", "West", "Centre"]
        .iter()
        .enumerate()
    {
        table.push_str(&format!("R{i},{n} region\n"));
    }
    write(&root, "more/region_codes.csv", &table);
    for f in 0..6 {
        let mut sites = String::from("site,site_name\n");
        for s in 0..8 {
            sites.push_str(&format!("S{f}{s},Station {f} {s}\n"));
        }
        write(&root, &format!("more/f{f:02}/site_codes.csv"), &sites);
        let mut sales = String::from("year,state,industry_code,region,site,amount\n");
        for r in 0..40 {
            let (state, _) = STATES[r % STATES.len()];
            sales.push_str(&format!(
                "{},{state},{},R{},S{f}{},{}\n",
                2001 + r % 5,
                110 + r % industries.len(),
                r % 5,
                r % 8,
                r * 7 + f
            ));
        }
        write(&root, &format!("more/f{f:02}/sales.csv"), &sales);
    }
    index(&root, &idx, &opts(), &NoProgress).unwrap();
    let linked = lookup_rows(&idx);
    // Each folder's sales reach the root's, the folder above's and their own tables.
    for f in 0..6 {
        let sales = format!("more/f{f:02}/sales.csv");
        let mut found: Vec<&str> = linked
            .iter()
            .filter(|l| l.0 == sales)
            .map(|l| l.1.as_str())
            .collect();
        found.sort_unstable();
        let site = format!("more/f{f:02}/site_codes.csv");
        let mut want = vec![
            "more/industry_codes.csv",
            site.as_str(),
            "more/region_codes.csv",
            "state_codes.csv",
        ];
        want.sort_unstable();
        assert_eq!(found, want, "{sales}");
    }
    for budget in [0, 1, 400, 1_500, 3_000, 6_000, usize::MAX] {
        for jobs in [1, 2] {
            relink_afresh(&root, &idx, jobs, budget).unwrap();
            assert_eq!(lookup_rows(&idx), linked, "{budget} bytes, {jobs} threads");
        }
    }
}
