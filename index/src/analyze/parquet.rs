//! Apache Parquet files: the footer first (schema, row groups, exact row count, writer,
//! per-column statistics), then a sampled read of the first rows to profile the values
//! with the shared column profile.
//!
//! Columns are the schema's leaves, named by their dotted path; structs are flattened,
//! while a list or map is one column (its leaves named in the declared type) whose cells
//! are JSON-like text. Reading stays bounded: the footer size is checked before the
//! parquet crate reads it, the sample stops at [`SAMPLE_ROWS_MAX`] rows (fewer for very
//! wide files), and long cells are cut.

mod schema;
mod values;

use super::model::{TableBuilder, TableSet};
use super::{AnalyzeError, Analyzer, Content, Format, Source};
use ::parquet::file::reader::{ChunkReader, FileReader, SerializedFileReader};
use ::parquet::record::{Field, Row};
use bytes::Bytes;
use schema::{columns, declared, Col};
use std::collections::HashMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Rows read to profile values; the footer gives the exact row count.
const SAMPLE_ROWS_MAX: u64 = 10_000;
/// Cells profiled at most (rows × columns), so that very wide files sample fewer rows.
const SAMPLE_CELLS_MAX: u64 = 1_000_000;
/// Largest footer (file metadata) we let the parquet crate read into memory.
const FOOTER_MAX: u64 = 256 << 20;

/// Describes Parquet files as one profiled table.
pub(crate) struct ParquetAnalyzer;

impl Analyzer for ParquetAnalyzer {
    fn name(&self) -> &'static str {
        "parquet"
    }
    fn version(&self) -> u32 {
        1
    }
    fn analyze(&self, src: &Source, _format: Format) -> Result<Content, AnalyzeError> {
        check_footer(src)?;
        let set = match src.bytes() {
            // Copied once: `Bytes` is the in-memory `ChunkReader` the crate knows.
            Some(b) => {
                let data = Bytes::copy_from_slice(b);
                guarded(move || describe(SerializedFileReader::new(data).map_err(malformed)?))
            }
            None => {
                let file = File::open(src.path())?;
                guarded(move || describe(SerializedFileReader::new(file).map_err(malformed)?))
            }
        }?;
        Ok(Content::Tables(set))
    }
}

fn malformed(e: impl std::fmt::Display) -> AnalyzeError {
    AnalyzeError::Malformed(format!("Parquet: {e}"))
}

/// Runs `f`, turning a panic of the parquet crate into an error: its reader asserts on
/// some malformed schemas and pages instead of returning errors.
fn guarded<T>(f: impl FnOnce() -> Result<T, AnalyzeError>) -> Result<T, AnalyzeError> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|_| {
        Err(AnalyzeError::Malformed(
            "Parquet: the reader failed on malformed metadata".into(),
        ))
    })
}

/// Checks the trailing magic and the footer length before the parquet crate allocates
/// the footer: a cut file or a lying length is an error here, not a huge read.
fn check_footer(src: &Source) -> Result<(), AnalyzeError> {
    let size = src.size();
    if size < 12 {
        return Err(malformed(format!("{size} bytes is too short")));
    }
    let mut tail = [0u8; 8];
    match src.bytes() {
        Some(b) => {
            let t = b
                .get(b.len().saturating_sub(8)..)
                .filter(|t| t.len() == 8)
                .ok_or_else(|| malformed("file shorter than its stated size"))?;
            tail.copy_from_slice(t);
        }
        None => {
            let mut f = File::open(src.path())?;
            f.seek(SeekFrom::End(-8))?;
            f.read_exact(&mut tail)?;
        }
    }
    let (len, magic) = tail.split_at(4);
    match magic {
        b"PAR1" => {}
        b"PARE" => return Err(malformed("encrypted footer, not read")),
        _ => {
            return Err(malformed(
                "no footer magic at the end: truncated or not Parquet",
            ))
        }
    }
    let len = u64::from(u32::from_le_bytes([len[0], len[1], len[2], len[3]]));
    if len + 12 > size {
        return Err(malformed(format!(
            "footer of {len} bytes does not fit in a {size}-byte file"
        )));
    }
    if len > FOOTER_MAX {
        return Err(malformed(format!(
            "footer of {len} bytes is too large to read"
        )));
    }
    Ok(())
}

fn describe<R: ChunkReader + 'static>(
    reader: SerializedFileReader<R>,
) -> Result<TableSet, AnalyzeError> {
    let md = reader.metadata();
    let fm = md.file_metadata();
    let schema = fm.schema_descr();
    let rows = u64::try_from(fm.num_rows()).unwrap_or(0);
    let cols = columns(schema);

    let groups = md.num_row_groups();
    let mut notes = vec![format!(
        "{groups} row group{}",
        if groups == 1 { "" } else { "s" }
    )];
    if let Some(by) = fm.created_by() {
        notes.push(format!("created by {by}"));
    }
    let mut codecs: Vec<String> = Vec::new();
    for c in md.row_groups().iter().flat_map(|rg| rg.columns()) {
        let name = c.compression().to_string();
        if !codecs.contains(&name) {
            codecs.push(name);
        }
    }
    if !codecs.is_empty() {
        notes.push(format!("compression: {}", codecs.join(", ")));
    }

    let limit = (SAMPLE_CELLS_MAX / cols.len().max(1) as u64).clamp(1, SAMPLE_ROWS_MAX);
    let mut builder = TableBuilder::new(cols.iter().map(|c| c.name.clone()));
    let failure = sample(&reader, &cols, limit, &mut builder);
    let read = builder.rows();
    let mut table = builder.finish("data", "parquet");
    table.rows = rows;
    table.rows_exact = true;

    let mut from_footer = 0;
    for (col, prof) in cols.iter().zip(table.columns.iter_mut()) {
        prof.declared_type = declared(col, schema);
        let (None, [leaf]) = (col.nested, col.leaves.as_slice()) else {
            continue;
        };
        let stats = values::footer_stats(md, *leaf);
        let mut used = false;
        // A footer count below what the sample saw is a writer that left it out.
        if let Some(n) = stats.nulls.filter(|n| *n >= prof.nulls) {
            prof.nulls = n;
            used = true;
        }
        if prof.min.is_some() {
            if let (Some(lo), Some(hi)) = (stats.min, stats.max) {
                (prof.min, prof.max) = (Some(lo), Some(hi));
                used = true;
            }
        }
        from_footer += usize::from(used);
    }
    table.notes = table_notes(read, rows, failure, from_footer, cols.len());
    Ok(TableSet {
        tables: vec![table],
        notes,
    })
}

fn table_notes(
    read: u64,
    rows: u64,
    failure: Option<String>,
    from_footer: usize,
    columns: usize,
) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(e) = failure {
        notes.push(format!("reading rows stopped after {read} rows: {e}"));
    }
    if read < rows {
        notes.push(format!(
            "column profiles (types, distinct values, examples) from a sample: the first {read} of {rows} rows"
        ));
    }
    if from_footer > 0 {
        notes.push(format!(
            "null counts and ranges of {from_footer} of {columns} columns from the footer statistics (all rows)"
        ));
    }
    notes
}

/// Reads up to `limit` rows into `b`; the reason reading stopped early, if it did.
fn sample<R: ChunkReader + 'static>(
    reader: &SerializedFileReader<R>,
    cols: &[Col],
    limit: u64,
    b: &mut TableBuilder,
) -> Option<String> {
    let index: HashMap<&str, usize> = cols
        .iter()
        .enumerate()
        .map(|(i, c)| (c.name.as_str(), i))
        .collect();
    let mut run = || -> Result<(), String> {
        let rows = reader.get_row_iter(None).map_err(|e| e.to_string())?;
        let mut cells = vec![String::new(); cols.len()];
        for row in rows.take(usize::try_from(limit).unwrap_or(usize::MAX)) {
            let row = row.map_err(|e| e.to_string())?;
            cells.iter_mut().for_each(String::clear);
            flatten(&row, "", cols, &index, &mut cells);
            b.push_row(&cells);
        }
        Ok(())
    };
    match catch_unwind(AssertUnwindSafe(&mut run)) {
        Ok(Ok(())) => None,
        Ok(Err(e)) => Some(e),
        Err(_) => Some("the reader failed on malformed data".into()),
    }
}

/// Puts the cells of `row` (a record, or a struct inside one) in their columns; the
/// columns of a null struct stay empty, that is null.
fn flatten(
    row: &Row,
    prefix: &str,
    cols: &[Col],
    index: &HashMap<&str, usize>,
    cells: &mut [String],
) {
    for (name, field) in row.get_column_iter() {
        let key = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}.{name}")
        };
        match (index.get(key.as_str()), field) {
            (Some(&i), f) => {
                if let (Some(cell), Some(col)) = (cells.get_mut(i), cols.get(i)) {
                    *cell = values::cell(f, col.logical.as_ref());
                }
            }
            (None, Field::Group(g)) => flatten(g, &key, cols, index, cells),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::ColumnType;
    use ::parquet::basic::Compression;
    use ::parquet::data_type::{ByteArray, ByteArrayType, DoubleType, Int32Type, Int64Type};
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
    }

    #[test]
    fn large_files_are_sampled() {
        let n = SAMPLE_ROWS_MAX as i64 + 500;
        let bytes = write(
            "message m { REQUIRED INT64 id; }",
            vec![vec![Batch::I64((0..n).collect(), None)]],
        );
        let t = &analyze(&Source::from_bytes("big.parquet", bytes))
            .unwrap()
            .tables[0];
        assert_eq!(t.rows, n as u64);
        assert_eq!(t.columns[0].distinct, SAMPLE_ROWS_MAX);
        // The range is the whole file's, from the footer, not the sample's.
        assert_eq!(t.columns[0].max.as_deref(), Some(&*(n - 1).to_string()));
        assert!(t
            .notes
            .iter()
            .any(|n| n.contains("the first 10000 of 10500 rows")));
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
        let footer =
            u32::from_le_bytes(bytes[bytes.len() - 8..bytes.len() - 4].try_into().unwrap());
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
}
