use super::*;
use crate::analyze::{describe, Content, Source};
use crate::catalog::{CatalogWriter, Change};
use crate::lock::WriterLock;

const CSV: &str = "region,amount\nNorth,1\nNorth,2\nSouth,3\nNorth,4\n";

fn hash_of(text: &str) -> [u8; 32] {
    *blake3::hash(text.as_bytes()).as_bytes()
}

fn upsert(path: &str, text: &str, d: Description) -> Change {
    Change::Upsert {
        row: FileRow::ok_for_test(path, text.len() as u64, hash_of(text), d.format, "a@1"),
        description: Some(Box::new(d)),
    }
}

fn writer(dir: &Path) -> CatalogWriter {
    CatalogWriter::open(WriterLock::acquire(dir).unwrap(), dir).unwrap()
}

fn record_of(cat: &CatalogReader, path: &str) -> Option<RankRecord> {
    cat.ranked_file(path, true).unwrap().unwrap().record
}

/// `d` as a description made from a sample, its first column named `name`.
fn sampled(mut d: Description, name: &str) -> Description {
    let Content::Table(t) = &mut d.content else {
        panic!("not a table")
    };
    t.sampled_bytes = Some(10);
    t.columns[0].name = name.into();
    d
}

#[test]
fn a_record_is_stored_with_each_description_and_follows_its_replacement() {
    let dir = tempfile::tempdir().unwrap();
    let mut cat = writer(dir.path());
    let exact = describe(&Source::from_bytes("a.csv", CSV.as_bytes().to_vec()));
    cat.apply(&[upsert("a.csv", CSV, sampled(exact.clone(), "guess"))])
        .unwrap();
    let found = cat.ranked_file("a.csv", true).unwrap().unwrap();
    assert_eq!(found.row.path, "a.csv");
    assert_eq!(found.record.unwrap().names, ["guess", "amount"]);
    // The exact description replaces the sampled one, and its record the record.
    cat.apply(&[upsert("a.csv", CSV, exact.clone())]).unwrap();
    assert_eq!(record_of(&cat, "a.csv"), Some(RankRecord::of(&exact)));
    // A sampled one does not replace the exact one: neither does its record.
    cat.apply(&[upsert("a.csv", CSV, sampled(exact.clone(), "other"))])
        .unwrap();
    assert_eq!(record_of(&cat, "a.csv"), Some(RankRecord::of(&exact)));
    // Without records asked for, or for a path not in the catalog.
    assert!(cat
        .ranked_file("a.csv", false)
        .unwrap()
        .unwrap()
        .record
        .is_none());
    assert!(cat.ranked_file("b.csv", true).unwrap().is_none());
}

#[test]
fn files_read_together_are_each_as_read_alone_in_the_order_asked() {
    let dir = tempfile::tempdir().unwrap();
    let mut cat = writer(dir.path());
    let texts: Vec<(String, String)> = (0..5)
        .map(|i| (format!("d{i}/f.csv"), format!("k{i},v\na,{i}\n")))
        .collect();
    let changes: Vec<Change> = texts
        .iter()
        .map(|(p, t)| {
            upsert(
                p,
                t,
                describe(&Source::from_bytes(p, t.as_bytes().to_vec())),
            )
        })
        .collect();
    cat.apply(&changes).unwrap();
    let asked = ["d3/f.csv", "gone.csv", "d0/f.csv", "d4/f.csv", "d1/f.csv"];
    for records in [true, false] {
        let together = cat.ranked_files(&asked, records).unwrap();
        assert_eq!(together.len(), asked.len());
        for (path, found) in asked.iter().zip(&together) {
            let alone = cat.ranked_file(path, records).unwrap();
            assert_eq!(found.is_some(), *path != "gone.csv", "{path}");
            let (Some(found), Some(alone)) = (found, alone) else {
                continue;
            };
            assert_eq!(found.row.path, *path);
            assert_eq!(found.row.hash, alone.row.hash);
            assert_eq!(found.collection, alone.collection);
            assert_eq!(found.record, alone.record);
            assert_eq!(found.record.is_some(), records, "{path}");
        }
    }
    assert!(cat.ranked_files(&[], true).unwrap().is_empty());
}

#[test]
fn a_catalog_made_before_records_gets_them_when_a_writer_opens_it() {
    let dir = tempfile::tempdir().unwrap();
    let texts: Vec<String> = (0..30)
        .map(|i| format!("station_{i},kind\nS{i},wind\nS{i},rain\n"))
        .collect();
    {
        let mut cat = writer(dir.path());
        let changes: Vec<Change> = texts
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let p = format!("f{i}.csv");
                upsert(
                    &p,
                    t,
                    describe(&Source::from_bytes(&p, t.as_bytes().to_vec())),
                )
            })
            .collect();
        cat.apply(&changes).unwrap();
        // What a catalog written only by binaries before records looks like once
        // upgraded (or one whose records are of another version).
        cat.conn
            .execute_batch(
                "UPDATE descriptions SET record = NULL;
                 DELETE FROM meta WHERE key = 'rank_records_version';",
            )
            .unwrap();
    }
    let reader = CatalogReader::open(dir.path()).unwrap();
    let row = reader.ranked_file("f3.csv", true).unwrap().unwrap();
    assert!(row.record.is_none());
    drop(reader);

    let cat = writer(dir.path());
    for (i, t) in texts.iter().enumerate() {
        let p = format!("f{i}.csv");
        let d = describe(&Source::from_bytes(&p, t.as_bytes().to_vec()));
        assert_eq!(record_of(&cat, &p), Some(RankRecord::of(&d)), "{p}");
    }
    assert_eq!(
        cat.meta(MetaKey::RankRecordsVersion).unwrap(),
        Some(RECORD_VERSION.to_string())
    );
}

#[test]
fn companion_links_are_known_without_asking_each_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut cat = writer(dir.path());
    assert!(!cat.has_companion_links().unwrap());
    let link = crate::companion::Link {
        data: "d/data.txt".into(),
        doc: "d/README.md".into(),
        columns: Vec::new(),
        fit: None,
    };
    cat.replace_companions("d", &[link], &[]).unwrap();
    assert!(cat.has_companion_links().unwrap());
}
