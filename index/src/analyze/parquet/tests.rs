//! Tests of the Parquet analyzer on files written by the parquet crate.

use super::*;
use crate::analyze::ColumnType;
use ::parquet::basic::Compression;
use ::parquet::data_type::{
    ByteArray, ByteArrayType, DoubleType, FixedLenByteArray, FixedLenByteArrayType, Int32Type,
    Int64Type,
};
use ::parquet::file::properties::WriterProperties;
use ::parquet::file::writer::SerializedFileWriter;
use ::parquet::schema::parser::parse_message_type;
use std::sync::Arc;

/// One column's values for one row group: (values, definition levels, repetition levels).
enum Batch {
    I32(Vec<i32>, Option<Vec<i16>>, Option<Vec<i16>>),
    I64(Vec<i64>, Option<Vec<i16>>),
    F64(Vec<f64>, Option<Vec<i16>>),
    Str(Vec<&'static str>, Option<Vec<i16>>, Option<Vec<i16>>),
    Owned(Vec<String>, Option<Vec<i16>>),
    /// Fixed-length byte arrays (big-endian decimals).
    Fixed(Vec<Vec<u8>>, Option<Vec<i16>>),
}

/// A Parquet file written by the parquet crate: one `Vec<Batch>` per row group.
fn write(schema: &str, groups: Vec<Vec<Batch>>) -> Vec<u8> {
    let schema = Arc::new(parse_message_type(schema).unwrap());
    let props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_created_by("lakestar test".into())
        .build();
    let mut w = SerializedFileWriter::new(Vec::new(), schema, Arc::new(props)).unwrap();
    for group in groups {
        let mut rg = w.next_row_group().unwrap();
        for batch in group {
            let mut col = rg.next_column().unwrap().unwrap();
            match batch {
                Batch::I32(v, d, r) => {
                    col.typed::<Int32Type>()
                        .write_batch(&v, d.as_deref(), r.as_deref())
                        .unwrap();
                }
                Batch::I64(v, d) => {
                    col.typed::<Int64Type>()
                        .write_batch(&v, d.as_deref(), None)
                        .unwrap();
                }
                Batch::F64(v, d) => {
                    col.typed::<DoubleType>()
                        .write_batch(&v, d.as_deref(), None)
                        .unwrap();
                }
                Batch::Fixed(v, d) => {
                    let v: Vec<FixedLenByteArray> = v
                        .into_iter()
                        .map(|b| FixedLenByteArray::from(ByteArray::from(b)))
                        .collect();
                    col.typed::<FixedLenByteArrayType>()
                        .write_batch(&v, d.as_deref(), None)
                        .unwrap();
                }
                Batch::Owned(v, d) => {
                    let v: Vec<ByteArray> = v.into_iter().map(|s| s.into_bytes().into()).collect();
                    col.typed::<ByteArrayType>()
                        .write_batch(&v, d.as_deref(), None)
                        .unwrap();
                }
                Batch::Str(v, d, r) => {
                    let v: Vec<ByteArray> = v.into_iter().map(ByteArray::from).collect();
                    col.typed::<ByteArrayType>()
                        .write_batch(&v, d.as_deref(), r.as_deref())
                        .unwrap();
                }
            }
            col.close().unwrap();
        }
        rg.close().unwrap();
    }
    w.into_inner().unwrap()
}

const FLAT: &str = "message m {
    REQUIRED INT64 id;
    OPTIONAL DOUBLE score;
    OPTIONAL BYTE_ARRAY name (UTF8);
    OPTIONAL INT32 day (DATE);
}";

/// Five rows in two row groups (3 + 2); score has 2 nulls, name 1, day none.
fn flat_file() -> Vec<u8> {
    use Batch::*;
    write(
        FLAT,
        vec![
            vec![
                I64(vec![1, 2, 3], None),
                F64(vec![1.5, 2.5], Some(vec![1, 0, 1])),
                Str(vec!["ann", "bob"], Some(vec![1, 1, 0]), None),
                I32(vec![19_723, 19_724, 19_725], Some(vec![1, 1, 1]), None),
            ],
            vec![
                I64(vec![4, 5], None),
                F64(vec![-4.0], Some(vec![0, 1])),
                Str(vec!["cy", "ann"], Some(vec![1, 1]), None),
                I32(vec![19_726, 19_800], Some(vec![1, 1]), None),
            ],
        ],
    )
}

fn analyze(src: &Source) -> Result<TableSet, AnalyzeError> {
    match ParquetAnalyzer.analyze(src, Format::Parquet)? {
        Content::Tables(t) => Ok(t),
        c => panic!("not tables: {c:?}"),
    }
}

fn check_flat(set: &TableSet) {
    assert!(
        set.notes.contains(&"2 row groups".to_string()),
        "{:?}",
        set.notes
    );
    assert!(set.notes.contains(&"created by lakestar test".to_string()));
    assert!(set.notes.contains(&"compression: SNAPPY".to_string()));
    let [t] = set.tables.as_slice() else {
        panic!("one table expected")
    };
    assert_eq!((t.name.as_str(), t.kind.as_str()), ("data", "parquet"));
    assert_eq!((t.rows, t.rows_exact), (5, true));
    let names: Vec<&str> = t.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["id", "score", "name", "day"]);
    let declared: Vec<&str> = t
        .columns
        .iter()
        .map(|c| c.declared_type.as_deref().unwrap())
        .collect();
    assert_eq!(
        declared,
        ["INT64", "DOUBLE", "BYTE_ARRAY UTF8", "INT32 DATE"]
    );
    let [id, score, name, day] = t.columns.as_slice() else {
        panic!()
    };
    assert_eq!(id.kind, ColumnType::Integer);
    assert!(id.is_unique(t.rows));
    assert_eq!(
        (id.min.as_deref(), id.max.as_deref()),
        (Some("1"), Some("5"))
    );
    assert_eq!(score.kind, ColumnType::Float);
    assert_eq!(score.nulls, 2);
    assert_eq!(
        (score.min.as_deref(), score.max.as_deref()),
        (Some("-4.0"), Some("2.5"))
    );
    assert_eq!(name.nulls, 1);
    assert_eq!(name.examples, ["ann", "bob", "cy"]);
    assert_eq!(day.kind, ColumnType::Date);
    assert_eq!(day.max.as_deref(), Some("2024-03-18"));
    assert_eq!(day.examples[0], "2024-01-01");
    assert_eq!(t.sample_rows[1], ["2", "", "bob", "2024-01-02"]);
    // Every row was read: no sample note, but the footer statistics are credited.
    assert_eq!(t.notes.len(), 1, "{:?}", t.notes);
    assert!(t.notes[0].contains("footer statistics"));
}

#[test]
fn two_row_groups_in_memory_and_on_disk() {
    let bytes = flat_file();
    check_flat(&analyze(&Source::from_bytes("t.parquet", bytes.clone())).unwrap());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.parquet");
    std::fs::write(&path, &bytes).unwrap();
    let src = Source::open(&path, 0).unwrap();
    assert!(src.bytes().is_none());
    check_flat(&analyze(&src).unwrap());
}

#[test]
fn structs_flatten_and_lists_are_one_column() {
    use Batch::*;
    let bytes = write(
        "message m {
            REQUIRED INT32 id;
            OPTIONAL group loc { REQUIRED DOUBLE lat; REQUIRED DOUBLE lon; }
            OPTIONAL group tags (LIST) {
                REPEATED group list { OPTIONAL BYTE_ARRAY element (UTF8); }
            }
        }",
        vec![vec![
            I32(vec![1, 2], None, None),
            F64(vec![48.5], Some(vec![1, 0])),
            F64(vec![2.25], Some(vec![1, 0])),
            Str(vec!["a", "b"], Some(vec![3, 3, 1]), Some(vec![0, 1, 0])),
        ]],
    );
    let set = analyze(&Source::from_bytes("n.parquet", bytes)).unwrap();
    let t = &set.tables[0];
    let names: Vec<&str> = t.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["id", "loc.lat", "loc.lon", "tags"]);
    assert_eq!(t.columns[1].nulls, 1);
    assert_eq!(t.columns[1].declared_type.as_deref(), Some("DOUBLE"));
    assert_eq!(
        t.columns[3].declared_type.as_deref(),
        Some("LIST of tags.list.element BYTE_ARRAY UTF8")
    );
    assert_eq!(t.sample_rows[0], ["1", "48.5", "2.25", r#"["a", "b"]"#]);
    assert_eq!(t.sample_rows[1], ["2", "", "", "[]"]);
    // pandas keeps `loc` as one column of dicts: no load line claims otherwise.
    assert_eq!(t.load, None);
}

/// 30,000 rows in three row groups: `n` 0… unique (a count, not a key), `code` 5,000 distinct strings,
/// `score` null on every seventh row.
fn many_distinct() -> Vec<u8> {
    const GROUP: i64 = 10_000;
    let groups = (0..3)
        .map(|g| {
            let ids: Vec<i64> = (g * GROUP..(g + 1) * GROUP).collect();
            let codes: Vec<String> = ids.iter().map(|i| format!("c{:05}", i % 5_000)).collect();
            let def: Vec<i16> = ids.iter().map(|i| i16::from(i % 7 != 0)).collect();
            let scores: Vec<f64> = ids
                .iter()
                .filter(|i| *i % 7 != 0)
                .map(|i| *i as f64 / 2.0)
                .collect();
            vec![
                Batch::I64(ids, None),
                Batch::Owned(codes, None),
                Batch::F64(scores, Some(def)),
            ]
        })
        .collect();
    write(
        "message m { REQUIRED INT64 n; REQUIRED BYTE_ARRAY code (UTF8); OPTIONAL DOUBLE score; }",
        groups,
    )
}

#[test]
fn a_sample_of_the_first_rows_is_flagged_and_the_footer_is_exact() {
    // Its decoded data is past this budget: the first rows are a sample.
    let src = Source::from_bytes("big.parquet", many_distinct()).with_budget(Some(64 * 1024));
    let set = analyze(&src).unwrap();
    let t = &set.tables[0];
    assert_eq!((t.rows, t.rows_exact, t.sampled), (30_000, true, true));
    let [id, code, score] = t.columns.as_slice() else {
        panic!()
    };
    // Distinct counts of the first 10,000 rows are floors, not exact.
    assert_eq!((id.distinct, id.distinct_exact), (10_000, false));
    assert!(id.estimated && !id.is_unique(t.rows));
    // Ranges and nulls are the whole file's, from the footer, and flagged exact.
    assert_eq!(
        (id.min.as_deref(), id.max.as_deref()),
        (Some("0"), Some("29999"))
    );
    assert_eq!(id.exact, ["nulls", "range"]);
    assert_eq!(
        (code.min.as_deref(), code.max.as_deref()),
        (Some("c00000"), Some("c04999"))
    );
    assert_eq!(score.nulls, 30_000u64.div_ceil(7));
    assert_eq!(score.max.as_deref(), Some("14999.5"));
    // The mean is the first rows' only.
    assert!((id.mean.unwrap() - 4_999.5).abs() < 1e-6);
    assert!(t.notes.iter().any(|n| n.contains("sample of 10000 rows")));
    let text = crate::analyze::render(
        "big.parquet",
        &crate::analyze::Description {
            format: Format::Parquet,
            size: 1,
            analyzer: "parquet@2".into(),
            content: Content::Tables(set.clone()),
            time_coverage: None,
            notes: Vec::new(),
            error: None,
            rules: Default::default(),
        },
        Default::default(),
    );
    let id_line = text
        .lines()
        .find(|l| l.trim_start().starts_with("n "))
        .unwrap();
    assert!(
        id_line.contains("0 … 29999") && id_line.contains("≥10,000 distinct"),
        "{id_line}"
    );
    assert!(
        id_line.contains("mean ~5000") || id_line.contains("mean ~4999.5"),
        "{id_line}"
    );
    assert_eq!(t.load.as_deref(), Some("pd.read_parquet(path)"));
}

#[test]
fn fixed_length_decimals_take_their_range_from_the_footer() {
    let be = |v: i32| v.to_be_bytes().to_vec();
    let bytes = write(
        "message m { OPTIONAL FIXED_LEN_BYTE_ARRAY (4) amount (DECIMAL(9,2)); }",
        vec![
            vec![Batch::Fixed(
                vec![be(150), be(-12_345)],
                Some(vec![1, 0, 1]),
            )],
            vec![Batch::Fixed(vec![be(67_890)], Some(vec![1]))],
        ],
    );
    let reader = SerializedFileReader::new(Bytes::from(bytes.clone())).unwrap();
    let stats = values::footer_stats(reader.metadata(), 0);
    assert_eq!(
        (stats.min.as_deref(), stats.max.as_deref(), stats.nulls),
        (Some("-123.45"), Some("678.90"), Some(1))
    );
    let t = &analyze(&Source::from_bytes("d.parquet", bytes))
        .unwrap()
        .tables[0];
    let amount = &t.columns[0];
    assert_eq!(
        (amount.min.as_deref(), amount.max.as_deref(), amount.nulls),
        (Some("-123.45"), Some("678.90"), 1)
    );
    // Every row read: nothing estimated.
    assert!(!amount.estimated && amount.exact.is_empty() && !t.sampled);
}

#[test]
fn full_reads_every_row_group() {
    // Read whole both without a budget and within the default one.
    let within = Source::from_bytes("big.parquet", many_distinct());
    assert!(!analyze(&within).unwrap().tables[0].sampled);
    let src = Source::from_bytes("big.parquet", many_distinct()).with_budget(None);
    let t = &analyze(&src).unwrap().tables[0];
    assert!(!t.sampled);
    let [id, code, score] = t.columns.as_slice() else {
        panic!()
    };
    assert!(!id.estimated && id.exact.is_empty());
    // Past the exact cap, the sketch: close, and flagged inexact.
    assert!(!id.distinct_exact);
    assert!(id.distinct.abs_diff(30_000) < 1_500, "{}", id.distinct);
    // Under the cap with every value seen: exact.
    assert_eq!((code.distinct, code.distinct_exact), (5_000, true));
    assert!((id.mean.unwrap() - 14_999.5).abs() < 1e-6);
    assert_eq!(score.nulls, 30_000u64.div_ceil(7));
    assert!(
        t.notes.iter().all(|n| !n.contains("sample")),
        "{:?}",
        t.notes
    );
}

#[test]
fn truncated_and_garbage_files_are_errors() {
    let bytes = flat_file();
    for cut in [bytes.len() - 1, bytes.len() - 9, bytes.len() / 2, 11, 4] {
        let src = Source::from_bytes("t.parquet", bytes[..cut].to_vec());
        assert!(analyze(&src).is_err(), "cut at {cut}");
    }
    // Right magic and a plausible length, garbage metadata.
    let mut g = b"PAR1".to_vec();
    g.extend((0..200u32).map(|i| (i * 37 % 251) as u8));
    g.extend(100u32.to_le_bytes());
    g.extend(b"PAR1");
    assert!(analyze(&Source::from_bytes("g.parquet", g)).is_err());
    // A footer length larger than the file.
    let mut g = b"PAR1PAR1".to_vec();
    g.extend(u32::MAX.to_le_bytes());
    g.extend(b"PAR1");
    let e = analyze(&Source::from_bytes("h.parquet", g)).unwrap_err();
    assert!(e.to_string().contains("does not fit"), "{e}");
}

#[test]
fn reader_panics_on_odd_schemas_are_caught() {
    use Batch::*;
    // A LIST group with a second field: valid to write, and the record reader
    // asserts (panics) on it.
    let bytes = write(
        "message m {
            OPTIONAL group tags (LIST) {
                REPEATED group list { OPTIONAL INT32 element; }
                OPTIONAL INT32 x;
            }
        }",
        vec![vec![
            I32(vec![7], Some(vec![3]), Some(vec![0])),
            I32(vec![1], Some(vec![2]), None),
        ]],
    );
    let set = analyze(&Source::from_bytes("odd.parquet", bytes)).unwrap();
    let t = &set.tables[0];
    assert_eq!(t.rows, 1);
    assert_eq!(t.columns[0].name, "tags");
    assert!(
        t.notes[0].starts_with("reading rows stopped after 0 rows"),
        "{:?}",
        t.notes
    );
}

#[test]
fn corrupted_data_pages_degrade_without_panic() {
    let mut bytes = flat_file();
    // Scribble over the data pages (between the leading magic and the footer).
    let footer = u32::from_le_bytes(bytes[bytes.len() - 8..bytes.len() - 4].try_into().unwrap());
    let data_end = bytes.len() - 8 - footer as usize;
    for (i, b) in bytes[4..data_end].iter_mut().enumerate() {
        *b = (i as u8).wrapping_mul(101) ^ 0x5A;
    }
    match analyze(&Source::from_bytes("c.parquet", bytes)) {
        Ok(set) => {
            let t = &set.tables[0];
            assert_eq!(t.rows, 5);
            assert!(
                t.notes
                    .iter()
                    .any(|n| n.starts_with("reading rows stopped")),
                "{:?}",
                t.notes
            );
        }
        Err(e) => assert!(e.to_string().starts_with("Parquet"), "{e}"),
    }
}
