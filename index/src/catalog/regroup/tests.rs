use super::*;
use crate::analyze::Format;
use crate::catalog::{Change, FileRow};
use crate::lock::WriterLock;

#[test]
fn templates_read_a_chunk_at_a_time_regroup_every_folder() {
    let dir = tempfile::tempdir().unwrap();
    let mut cat =
        CatalogWriter::open(WriterLock::acquire(dir.path()).unwrap(), dir.path()).unwrap();
    // Two templates in each folder: the root, `a`, two whose names extend it and one
    // below it; more templates than a chunk of them.
    let folders = ["", "a", "a-b", "a.b", "a/b"];
    let mut paths = Vec::new();
    for f in folders {
        for name in ["r", "s"] {
            for i in 0..3 {
                let p = format!("{f}/{name}{i}.csv");
                paths.push(p.trim_start_matches('/').to_string());
            }
        }
    }
    let changes: Vec<Change> = paths
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let mut row = FileRow::ok_for_test(p, 9, [i as u8; 32], Format::Csv, "a@1");
            row.schema = Some("0123456789abcdef".into());
            Change::Upsert {
                row,
                description: None,
            }
        })
        .collect();
    cat.apply(&changes).unwrap();
    assert_eq!(cat.refresh_collections().unwrap(), 2 * folders.len());
    assert!(TEMPLATES_CHUNK < 2 * folders.len());
    for p in &paths {
        assert!(cat.collection_of(p).unwrap().is_some(), "{p}");
    }
    assert_eq!(cat.collections().unwrap().len(), 2 * folders.len());
    assert_eq!(
        cat.refresh_collections().unwrap(),
        0,
        "nothing left to regroup"
    );
}

/// Paths that meet every rule of grouping, each with its format and schema: dated
/// folders, numbers padded or not, a literal brace, word-named siblings beside numbered
/// files, the root, several schemas and formats in one template; and `n` more drawn
/// from `seed`.
fn lake(seed: u64, n: usize) -> Vec<(String, Format, &'static str)> {
    let (s1, s2, s3) = ("11111111aaaaaaaa", "22222222bbbbbbbb", "33333333cccccccc");
    let mut out: Vec<(String, Format, &'static str)> = Vec::new();
    for y in [2019, 2020] {
        for m in 1..=7 {
            for k in 1..=3 {
                let s = if m == 4 { s2 } else { s1 };
                out.push((format!("logs/{y}/{m:02}/app-{k}.log"), Format::Csv, s));
                out.push((
                    format!("logs/{y}/{m:02}/day-{y}{m:02}{:02}.csv", k * 9),
                    Format::Csv,
                    s1,
                ));
            }
        }
    }
    for s in ["Ohio", "Utah", "Texas", "New_York", "Maine", "Idaho"] {
        out.push((format!("by_state/{s}.csv"), Format::Csv, s1));
    }
    out.push(("by_state/summary.csv".into(), Format::Csv, s2));
    out.push(("by_state/part_1.csv".into(), Format::Csv, s1));
    out.push(("by_state/part_2.csv".into(), Format::Csv, s1));
    for p in [
        "r1.csv",
        "r2.csv",
        "r3.csv",
        "alpha_sales.csv",
        "beta_sales.csv",
    ] {
        out.push((p.into(), Format::Csv, s1));
    }
    out.push(("gamma_sales.csv".into(), Format::Csv, s1));
    for p in ["w/{x}1.csv", "w/{x}2.csv", "w/{x}3.csv", "w/{n}.csv"] {
        out.push((p.into(), Format::Csv, s1));
    }
    for p in [
        "z/f01.csv",
        "z/f1.csv",
        "z/f001.csv",
        "z/f10.csv",
        "z/f010.csv",
        "z/f9.csv",
    ] {
        out.push((p.into(), Format::Csv, s3));
    }
    let words = [
        "north", "south", "east", "west", "Zürich", "Zug", "a1", "b2",
    ];
    let mut x = seed;
    let mut next = |m: u64| {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (x >> 33) % m
    };
    for _ in 0..n {
        let (a, b) = (next(3), next(4));
        let schema = [s1, s2, s3][next(3) as usize];
        let format = if next(4) == 0 {
            Format::Json
        } else {
            Format::Csv
        };
        let name = if next(3) == 0 {
            format!("sales_{}", words[next(words.len() as u64) as usize])
        } else {
            format!("item_{}", next(60))
        };
        out.push((format!("p{a}/s{b}/{name}.csv"), format, schema));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out.dedup_by(|a, b| a.0 == b.0);
    out
}

fn upsert((path, format, schema): &(String, Format, &str), i: usize) -> Change {
    let mut row = FileRow::ok_for_test(path, 7 + i as u64, [i as u8; 32], *format, "a@1");
    row.schema = Some(schema.to_string());
    row.time = crate::analyze::time::from_path(path);
    Change::Upsert {
        row,
        description: None,
    }
}

/// The catalog's collections and links are what grouping every file at once gives.
fn assert_grouped_as_at_once(cat: &CatalogWriter) {
    let mut stmt = cat
        .conn
        .prepare(
            "SELECT path, format, schema, size, time_start, time_end, collection
             FROM files ORDER BY path",
        )
        .unwrap();
    let rows: Vec<(Entry, Option<String>)> = stmt
        .query_map([], entry_and_collection)
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let entries: Vec<Entry> = rows.iter().map(|(e, _)| e.clone()).collect();
    let expected = collect::at_once::group(&entries);
    let mut want: Vec<Collection> = expected.iter().map(|(c, _)| c.clone()).collect();
    want.sort_by(|a, b| a.id.cmp(&b.id));
    let mut got = cat.collections().unwrap();
    got.sort_by(|a, b| a.id.cmp(&b.id));
    assert_eq!(got, want);
    assert!(
        want.iter().any(|c| !c.names.is_empty()),
        "word siblings met"
    );
    assert!(want.iter().any(|c| c.parts.iter().any(|p| p.distinct > 3)));
    let of: HashMap<&str, &str> = expected
        .iter()
        .flat_map(|(c, members)| members.iter().map(|m| (m.as_str(), c.id.as_str())))
        .collect();
    for (e, c) in &rows {
        assert_eq!(c.as_deref(), of.get(e.path.as_str()).copied(), "{}", e.path);
    }
}

#[test]
fn regrouping_a_folder_at_a_time_gives_what_grouping_every_file_at_once_gives() {
    // Distinct values are counted from disk.
    const { assert!(PART_VALUES_RUN < 10) };
    for seed in [1, 2, 3] {
        let dir = tempfile::tempdir().unwrap();
        let mut cat =
            CatalogWriter::open(WriterLock::acquire(dir.path()).unwrap(), dir.path()).unwrap();
        let files = lake(seed, 300);
        let changes: Vec<Change> = files
            .iter()
            .enumerate()
            .map(|(i, f)| upsert(f, i))
            .collect();
        cat.apply(&changes).unwrap();
        cat.refresh_collections().unwrap();
        assert_grouped_as_at_once(&cat);
        // Files deleted, renamed (into another template or folder) and added.
        let mut changes = Vec::new();
        for (i, (path, format, schema)) in files.iter().enumerate() {
            match i % 7 {
                0 => changes.push(Change::Delete { path: path.clone() }),
                3 => {
                    let to = (path.replace(".csv", "_v2.csv"), *format, *schema);
                    let Change::Upsert { row, .. } = upsert(&to, i) else {
                        unreachable!()
                    };
                    changes.push(Change::Rename {
                        from: path.clone(),
                        row,
                    });
                }
                _ => {}
            }
        }
        for (i, f) in lake(seed + 10, 40).iter().enumerate() {
            if !files.iter().any(|g| g.0 == f.0) {
                changes.push(upsert(f, 1000 + i));
            }
        }
        cat.apply(&changes).unwrap();
        cat.refresh_collections().unwrap();
        assert_grouped_as_at_once(&cat);
        // The spill files are anonymous: nothing is left beside the catalog.
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(
            names
                .iter()
                .all(|n| n.starts_with("catalog") || n.contains("lock")),
            "{names:?}"
        );
    }
}

#[test]
fn a_template_folder_is_read_in_template_order_without_a_sort() {
    let dir = tempfile::tempdir().unwrap();
    let cat = CatalogWriter::open(WriterLock::acquire(dir.path()).unwrap(), dir.path()).unwrap();
    for sql in [BY_TEMPLATE, BY_TEMPLATE_AT_ROOT] {
        let plan = super::super::known::plan(&cat.conn, sql);
        assert!(!plan.iter().any(|l| l.contains("TEMP B-TREE")), "{plan:?}");
        assert!(
            plan.iter().any(|l| l.contains("files_template")),
            "{plan:?}"
        );
        assert!(plan[0].contains(" t "), "templates first: {plan:?}");
    }
}
