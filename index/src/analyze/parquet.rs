//! Apache Parquet files: the footer first (schema, row groups, exact row count, writer,
//! per-column statistics), then a read of the first rows (of every row without a read
//! budget, `--full`) to profile the values with the shared column profile. Figures from
//! the first rows only are flagged as estimates; the footer's are exact.
//!
//! Columns are the schema's leaves, named by their dotted path; structs are flattened,
//! while a list or map is one column (its leaves named in the declared type) whose cells
//! are JSON-like text. Reading stays bounded: the footer size is checked before the
//! parquet crate reads it, the sample stops at [`SAMPLE_ROWS_MAX`] rows (fewer for very
//! wide files), and long cells are cut.

mod figures;
mod load;
mod schema;
pub(crate) mod values;

use super::model::{Keep, TableBuilder, TableSet};
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
        // 4: time in other forms read as time (the time-forms reading rule).
        // 5: missing markers, durations and labelling integers (profile values).
        // 6: quarters (`2001Q1`, `Q1 2001`, a year beside `Q1`..`Q4`) and date-times
        // with a time scale (`2014.03.23_20:24:00_TAI`) read as time; footnoted numbers
        // grouped with spaces or dots (`1 234 p`, `1.234,5 r`) stay numbers.
        // 7: time in other forms loads as datetimes (`.assign` after the reader).
        7
    }
    fn analyze(&self, src: &Source, _format: Format) -> Result<Content, AnalyzeError> {
        check_footer(src)?;
        let budget = src.budget();
        let keep = src.keep();
        let set = match (src.bytes(), src.remote()) {
            // Copied once: `Bytes` is the in-memory `ChunkReader` the crate knows.
            (Some(b), _) => read(Bytes::copy_from_slice(b), budget, keep),
            // An object read by ranged requests: the footer, then only the pages read.
            (None, Some(obj)) => read(crate::store::reader::Chunks(obj.clone()), budget, keep),
            (None, None) => read(File::open(src.path())?, budget, keep),
        }?;
        Ok(Content::Tables(set))
    }
}

/// Describe the Parquet data `r` holds, a panic of the reader caught.
fn read<R: ChunkReader + 'static>(
    r: R,
    budget: Option<u64>,
    keep: Keep,
) -> Result<TableSet, AnalyzeError> {
    guarded(move || {
        describe(
            SerializedFileReader::new(r).map_err(malformed)?,
            budget,
            keep,
        )
    })
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
            let mut f = src.seekable()?;
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

/// The file as one table. Every row is profiled when the decoded data fits the read
/// `budget` (or there is none, `--full`), as a delimited file within it is read whole;
/// otherwise the first rows.
fn describe<R: ChunkReader + 'static>(
    reader: SerializedFileReader<R>,
    budget: Option<u64>,
    keep: Keep,
) -> Result<TableSet, AnalyzeError> {
    let md = reader.metadata();
    let decoded: i64 = md.row_groups().iter().map(|rg| rg.total_byte_size()).sum();
    let full = budget.is_none_or(|b| u64::try_from(decoded).is_ok_and(|d| d <= b));
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

    // Read whole, every row is profiled: memory stays bounded, as the row reader
    // streams pages and the profile caps what it keeps per column.
    let limit = if full {
        u64::MAX
    } else {
        (SAMPLE_CELLS_MAX / cols.len().max(1) as u64).clamp(1, SAMPLE_ROWS_MAX)
    };
    let mut builder = TableBuilder::new(cols.iter().map(|c| c.name.clone())).keeping(keep);
    let failure = sample(&reader, &cols, limit, &mut builder);
    let read = builder.rows();
    let mut table = builder.finish("data", "parquet");
    table.rows = rows;
    table.rows_exact = true;
    for (col, prof) in cols.iter().zip(table.columns.iter_mut()) {
        prof.declared_type = declared(col, schema);
    }
    let from_footer = figures::settle(&mut table, &cols, md, read);
    // A read that stopped early when reading whole is as good as it gets.
    table.sampled &= !full;
    table.notes = figures::notes(read, rows, failure, from_footer, cols.len());
    table.load = load::call(&cols, fm.key_value_metadata());
    Ok(TableSet {
        tables: vec![table],
        notes,
    })
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
mod tests;
