//! The indexer's step: recompute the links of every folder in which a file changed.

use super::lookup::{self, DataFile, LookupLink, LookupTable, SampledColumn};
use super::matcher::{match_folder, FolderFile};
use super::{headerless_columns, parse, DOC_MAX_BYTES};
use crate::analyze::{ColumnProfile, Content, Description, Format};
use crate::catalog::{folder_of, Catalog, FileRow, FileState};
use crate::error::Result;
use std::collections::{BTreeSet, HashSet};
use std::io::Read;
use std::path::Path;

/// Folders with more files than this are not examined: every change in a folder
/// decodes the descriptions of its tables again, and documentation beside tens of
/// thousands of files is rarer than the cost is certain.
const MAX_FOLDER_FILES: usize = 20_000;

/// Extensions of files read as possible documentation (any name with a documentation
/// word in it is read too).
const DOC_EXTENSIONS: [&str; 8] = ["txt", "text", "fmt", "md", "csv", "tsv", "desc", "def"];

/// Whether a file may document others: small, described, and text by its name.
fn doc_candidate(row: &FileRow) -> bool {
    if row.state != FileState::Ok || row.size > DOC_MAX_BYTES || row.size == 0 {
        return false;
    }
    let name = row
        .path
        .rsplit('/')
        .next()
        .unwrap_or(&row.path)
        .to_lowercase();
    let ext = name.rsplit_once('.').map_or("", |(_, e)| e);
    DOC_EXTENSIONS.contains(&ext) || super::matcher::has_doc_word(&name)
}

/// Formats whose description can be a headerless table.
fn data_candidate(row: &FileRow) -> bool {
    row.state == FileState::Ok
        && matches!(row.format, Format::Csv | Format::Tsv | Format::FixedWidth)
}

/// The text of a documentation candidate, read from the lake (at most
/// [`DOC_MAX_BYTES`]); `None` when it cannot be read now (the next change redoes it).
fn read_doc(lake: &Path, rel: &str) -> Option<String> {
    let mut buf = Vec::new();
    std::fs::File::open(lake.join(rel))
        .ok()?
        .take(DOC_MAX_BYTES)
        .read_to_end(&mut buf)
        .ok()?;
    Some(String::from_utf8_lossy(&buf).into_owned())
}

/// The links of the files directly in `folder`.
fn folder_links(cat: &Catalog, lake: &Path, folder: &str) -> Result<Vec<super::Link>> {
    let rows = cat.folder_files(folder)?;
    if rows.len() > MAX_FOLDER_FILES || !rows.iter().any(doc_candidate) {
        return Ok(Vec::new());
    }
    let mut files = Vec::with_capacity(rows.len());
    // Per file: whether to read it from disk as possible documentation.
    let mut read = Vec::with_capacity(rows.len());
    for row in &rows {
        let desc = match (&row.hash, &row.analyzer) {
            (Some(h), Some(a)) if data_candidate(row) => cat.description(h, a)?,
            _ => None,
        };
        let headerless = desc.as_ref().and_then(headerless_columns);
        // A delimited file documents columns only with a header naming a column of
        // names (`Variable`, `Name`…): the others are not read again. A format text is
        // often itself read as a headerless table (its lines are aligned columns), so a
        // fixed-width file is read whatever its description.
        let delimited = matches!(row.format, Format::Csv | Format::Tsv);
        read.push(
            doc_candidate(row) && (!delimited || desc.as_ref().is_some_and(parse::names_header)),
        );
        files.push(FolderFile {
            path: row.path.clone(),
            headerless,
            documents: None,
        });
    }
    if files.iter().all(|f| f.headerless.is_none()) {
        return Ok(Vec::new());
    }
    for ((f, row), read) in files.iter_mut().zip(&rows).zip(read) {
        if read {
            f.documents = read_doc(lake, &row.path).and_then(|t| parse::parse(&t));
        }
    }
    Ok(match_folder(&files))
}

/// A lookup candidate's table read from the lake: small, delimited, with a header and
/// a key column; `None` otherwise (or when it cannot be read now).
fn lookup_table(lake: &Path, row: &FileRow, d: &Description) -> Option<LookupTable> {
    let Content::Table(t) = &d.content else {
        return None;
    };
    let small = t.header && t.rows_exact && t.rows <= lookup::LOOKUP_MAX_ROWS;
    let delimiter = match t.delimiter.as_bytes() {
        [b] => *b,
        _ => return None,
    };
    if !small || t.columns.len() < 2 || !t.columns.iter().any(|c| c.is_unique(t.rows)) {
        return None;
    }
    let mut buf = Vec::new();
    std::fs::File::open(lake.join(&row.path))
        .ok()?
        .take(lookup::LOOKUP_MAX_BYTES)
        .read_to_end(&mut buf)
        .ok()?;
    let text = String::from_utf8_lossy(&buf);
    let (columns, values) = lookup::read_columns(&text, delimiter, t.skipped_lines as usize)?;
    let keys = lookup::key_columns(&columns, &values);
    (!keys.is_empty()).then(|| LookupTable {
        path: row.path.clone(),
        columns,
        keys,
        cells: values,
    })
}

/// The columns of a described table with the values the description keeps.
fn sampled_columns(d: &Description) -> Vec<SampledColumn> {
    let one = |c: &ColumnProfile| {
        let mut values: Vec<String> = c.top.iter().map(|(v, _)| v.clone()).collect();
        values.extend(c.examples.iter().cloned());
        SampledColumn {
            name: c.name.clone(),
            values,
            distinct: c.distinct_exact.then_some(c.distinct),
        }
    };
    match &d.content {
        Content::Table(t) => t.columns.iter().map(one).collect(),
        Content::Tables(ts) => ts
            .tables
            .iter()
            .flat_map(|t| t.columns.iter().map(one))
            .collect(),
        _ => Vec::new(),
    }
}

/// The lookup links of the files directly in `folder`: only when a small delimited file
/// is there, the descriptions of its tables are read.
fn folder_lookups(cat: &Catalog, lake: &Path, folder: &str) -> Result<Vec<LookupLink>> {
    let rows = cat.folder_files(folder)?;
    let small = |r: &FileRow| {
        r.state == FileState::Ok
            && matches!(r.format, Format::Csv | Format::Tsv)
            && r.size > 0
            && r.size <= lookup::LOOKUP_MAX_BYTES
    };
    if rows.len() > MAX_FOLDER_FILES || rows.len() < 2 || !rows.iter().any(small) {
        return Ok(Vec::new());
    }
    let mut tables = Vec::new();
    let mut data = Vec::new();
    for row in rows.iter().filter(|r| r.state == FileState::Ok) {
        let Some(d) = cat.file_description(row)? else {
            continue;
        };
        if small(row) {
            if let Some(t) = lookup_table(lake, row, &d) {
                tables.push(t);
            }
        }
        let columns = sampled_columns(&d);
        if !columns.is_empty() {
            data.push(DataFile {
                path: row.path.clone(),
                columns,
            });
        }
    }
    if tables.is_empty() {
        return Ok(Vec::new());
    }
    Ok(lookup::match_lookups(&tables, &data))
}

/// Recompute the companion links of the folders of `changed` (lake-relative paths that
/// were added, modified, renamed or deleted since the search side last caught up): a
/// link depends on both files, so a change to either redoes its folder. Lookup links of
/// every folder are recomputed once when the catalog's were made by an older rule.
/// Returns how many documentation links appeared, went or changed. A data file whose
/// lookup links changed is marked stale for search: its document carries their labels.
pub fn relink(cat: &mut Catalog, lake: &Path, changed: &[String]) -> Result<usize> {
    let mut folders: BTreeSet<&str> = changed.iter().map(|p| folder_of(p)).collect();
    let changed: HashSet<&str> = changed.iter().map(String::as_str).collect();
    let mut touched = 0;
    for folder in &folders {
        let links = folder_links(cat, lake, folder)?;
        touched += cat.replace_companions(folder, &links, &changed)?;
    }
    let every = cat.meta(lookup::LOOKUP_RULE_META)?.as_deref() != Some(lookup::LOOKUP_RULE);
    let all: Vec<String>;
    if every {
        all = cat.folders()?;
        folders.extend(all.iter().map(String::as_str));
    }
    for folder in &folders {
        let links = folder_lookups(cat, lake, folder)?;
        cat.replace_lookups(folder, &links)?;
    }
    if every {
        cat.set_meta(lookup::LOOKUP_RULE_META, lookup::LOOKUP_RULE)?;
    }
    Ok(touched)
}
