use super::*;
use crate::analyze::{Format, TimeCoverage};
use crate::catalog::CatalogWriter;
use crate::catalog::{Change, FileRow};
use crate::lock::WriterLock;

/// A daily collection of `days` (file `d/r{i}.csv` covering `start … end`), regrouped.
fn catalog(dir: &std::path::Path, days: &[(&str, &str)]) -> (CatalogWriter, String) {
    let mut cat = CatalogWriter::open(WriterLock::acquire(dir).unwrap(), dir).unwrap();
    let changes: Vec<Change> = days
        .iter()
        .enumerate()
        .map(|(i, (start, end))| {
            let mut row =
                FileRow::ok_for_test(&format!("d/r{i}.csv"), 9, [i as u8; 32], Format::Csv, "a@1");
            row.schema = Some("0123456789abcdef".into());
            row.time = Some(TimeCoverage {
                start: start.to_string(),
                end: end.to_string(),
                source: "text".into(),
            });
            Change::Upsert {
                row,
                description: None,
            }
        })
        .collect();
    cat.apply(&changes).unwrap();
    cat.refresh_collections().unwrap();
    let id = cat.collection_of("d/r0.csv").unwrap().unwrap();
    (cat, id)
}

/// The members the old query found: every row of the collection, filtered.
fn every_member_overlapping(cat: &CatalogReader, id: &str, start: &str, end: &str) -> Vec<String> {
    let mut out: Vec<String> = cat
        .load_files()
        .unwrap()
        .into_values()
        .filter(|f| cat.collection_of(&f.path).unwrap().as_deref() == Some(id))
        .filter_map(|f| f.time.map(|t| (f.path, t)))
        .filter(|(_, t)| day_of(&t.start) <= end && day_of(&t.end) >= start)
        .map(|(p, _)| p)
        .collect();
    out.sort();
    out
}

fn day_of(s: &str) -> &str {
    &s[..s.len().min(10)]
}

fn longest_of(cat: &CatalogReader, id: &str) -> Option<i64> {
    cat.conn
        .query_row(
            "SELECT longest FROM collections WHERE id = ?1",
            [digest::to_sql(id)],
            |r| r.get(0),
        )
        .unwrap()
}

const ASKED: [(&str, &str); 7] = [
    ("2020-01-01", "2020-12-31"),
    ("2021-02-12", "2021-02-12"),
    ("2021-03-01", "2021-03-31"),
    ("2019-01-01", "2019-12-31"),
    ("2021-12-30", "2022-01-02"),
    ("0001-01-01", "9999-12-31"),
    ("2023-01-01", "2023-12-31"),
];

#[test]
fn members_covering_the_days_asked_are_the_ones_every_row_filtered_gives() {
    let dir = tempfile::tempdir().unwrap();
    // Days from 2020-01-01 every 9 days, most covering one day, some up to a week, one
    // with a time of day.
    let days: Vec<(String, String)> = (0..90)
        .map(|i| {
            let start = NaiveDate::from_ymd_opt(2020, 1, 1).unwrap() + chrono::Days::new(9 * i);
            let end = start + chrono::Days::new(if i % 7 == 3 { 7 } else { 0 });
            let f = |d: NaiveDate| d.format("%Y-%m-%d").to_string();
            match i {
                5 => (format!("{}T10:00", f(start)), f(end)),
                _ => (f(start), f(end)),
            }
        })
        .collect();
    let as_str: Vec<(&str, &str)> = days.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    let (cat, id) = catalog(dir.path(), &as_str);
    assert_eq!(longest_of(&cat, &id), Some(7));
    for (start, end) in ASKED {
        let all = every_member_overlapping(&cat, &id, start, end);
        let found = cat.members_overlapping(&id, start, end, 1000).unwrap();
        assert_eq!(found, all, "{start} … {end}");
        let first = cat.members_overlapping(&id, start, end, 3).unwrap();
        assert_eq!(first, all[..all.len().min(3)], "{start} … {end}, 3");
    }
    // A day covered only by a member that starts days before it (2021-02-09 … 16).
    assert_eq!(
        cat.members_overlapping(&id, "2021-02-12", "2021-02-12", 10)
            .unwrap(),
        ["d/r45.csv"]
    );

    // One range of the index, not a row per member.
    let plan: String = cat
        .conn
        .prepare(
            "EXPLAIN QUERY PLAN SELECT path FROM files INDEXED BY files_collection_time
             WHERE collection = ?1 AND time_start >= ?5 AND time_start < ?3 || '~'
             ORDER BY path LIMIT ?4",
        )
        .unwrap()
        .query_map(params![digest::to_sql(&id), "a", "b", 1, "c"], |r| {
            r.get::<_, String>(3)
        })
        .unwrap()
        .collect::<rusqlite::Result<Vec<_>>>()
        .unwrap()
        .join("; ");
    assert!(
        plan.contains(
            "COVERING INDEX files_collection_time (collection=? AND time_start>? AND time_start<?)"
        ),
        "{plan}"
    );
}

#[test]
fn a_member_whose_coverage_is_no_real_day_leaves_the_search_unbounded_and_exact() {
    let dir = tempfile::tempdir().unwrap();
    let days = [
        ("2021-03-01", "2021-03-01"),
        ("2021-03-04", "2021-03-04"),
        ("2021-02-30", "2021-03-09"),
        ("2020-12-31", "2021-12-31"),
        ("1999", "2021-03-05"),
    ];
    let (cat, id) = catalog(dir.path(), &days);
    assert_eq!(longest_of(&cat, &id), None);
    for (start, end) in ASKED {
        let all = every_member_overlapping(&cat, &id, start, end);
        let found = cat.members_overlapping(&id, start, end, 1000).unwrap();
        assert_eq!(found, all, "{start} … {end}");
    }
}

#[test]
fn the_longest_coverage_and_the_bound_it_gives() {
    assert_eq!(
        longest([("2020-01-01", "2020-01-31"), ("2020-02-01", "2020-02-02")]),
        Some(30)
    );
    assert_eq!(longest([("2020-01-05", "2020-01-01")]), Some(-4));
    assert_eq!(longest([("2020-01-01", "2020-13-01")]), None);
    assert_eq!(longest([("2020-1-01", "2020-01-01")]), None);
    assert_eq!(longest([("20é0-01-01", "2020-01-01")]), None);
    assert_eq!(longest(std::iter::empty()), None);
    assert_eq!(lower_bound("2020-03-01", 1).as_deref(), Some("2020-02-29"));
    assert_eq!(lower_bound("2020-03-01", -2).as_deref(), Some("2020-03-03"));
    assert_eq!(lower_bound("0000-01-02", 5), None);
    assert_eq!(lower_bound("2020-03", 1), None);
}
