//! The lake at a glance: `GET /overview` and the web UI's first page. What `status`
//! counts, plus what a person scans a lake for: bytes per format, the time span the files
//! cover, the collections, the largest files and a listing of the files.

use super::status::{self, Status};
use lakestar_index::catalog::FileRow;
use lakestar_index::collect::Collection;
use lakestar_index::CatalogReader;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;

/// Collections an overview lists at most (the largest first).
pub const COLLECTIONS_LISTED: usize = 100;
/// Files an overview lists at most (by path).
pub const FILES_LISTED: usize = 500;
/// The largest files an overview names.
pub const LARGEST_LISTED: usize = 10;

/// Files and bytes of one format.
#[derive(Debug, Serialize)]
pub struct FormatShare {
    /// Format name.
    pub format: String,
    /// Files of that format.
    pub files: u64,
    /// Their total size.
    pub bytes: u64,
}

/// The days the files cover, from their content or their paths.
#[derive(Debug, Serialize)]
pub struct TimeSpan {
    /// The earliest first day, `YYYY-MM-DD`.
    pub start: String,
    /// The latest last day, `YYYY-MM-DD`.
    pub end: String,
    /// Files with a time coverage.
    pub files: u64,
}

/// One file as a listing shows it.
#[derive(Debug, Serialize)]
pub struct FileBrief {
    /// Lake-relative path.
    pub path: String,
    /// Format name.
    pub format: String,
    /// Size in bytes.
    pub size: u64,
    /// ok, error, unreadable, ...
    pub state: String,
    /// First and last day covered, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time: Option<(String, String)>,
}

impl From<&FileRow> for FileBrief {
    fn from(r: &FileRow) -> Self {
        FileBrief {
            path: r.path.clone(),
            format: r.format.as_str().into(),
            size: r.size,
            state: r.state.as_str().into(),
            time: r.time.as_ref().map(|t| (t.start.clone(), t.end.clone())),
        }
    }
}

/// The lake at a glance.
#[derive(Debug, Serialize)]
pub struct Overview {
    /// What `status` says (counts, errors, last run, vectors).
    pub status: Status,
    /// Files and bytes per format, most files first.
    pub formats: Vec<FormatShare>,
    /// The days covered, when any file says.
    pub time: Option<TimeSpan>,
    /// The collections, most members first (at most [`COLLECTIONS_LISTED`]).
    pub collections: Vec<Collection>,
    /// The largest files (at most [`LARGEST_LISTED`]).
    pub largest: Vec<FileBrief>,
    /// The files by path (at most [`FILES_LISTED`]; `status.files` counts them all).
    pub files: Vec<FileBrief>,
}

/// The overview of the index at `dir`.
pub fn overview(dir: &Path) -> lakestar_index::Result<Overview> {
    let status = status::status(dir)?;
    let cat = CatalogReader::open(dir)?;
    let mut rows: Vec<FileRow> = cat.load_files()?.into_values().collect();
    rows.sort_by(|a, b| a.path.cmp(&b.path));

    let mut by_format: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    for r in &rows {
        let e = by_format.entry(r.format.as_str()).or_default();
        e.0 += 1;
        e.1 += r.size;
    }
    let mut formats: Vec<FormatShare> = by_format
        .into_iter()
        .map(|(f, (files, bytes))| FormatShare {
            format: f.to_string(),
            files,
            bytes,
        })
        .collect();
    formats.sort_by(|a, b| b.files.cmp(&a.files).then(b.bytes.cmp(&a.bytes)));

    // Days are `YYYY-MM-DD`: their string order is their time order.
    let covered: Vec<_> = rows.iter().filter_map(|r| r.time.as_ref()).collect();
    let time = (!covered.is_empty()).then(|| TimeSpan {
        start: covered
            .iter()
            .map(|t| t.start.clone())
            .min()
            .unwrap_or_default(),
        end: covered
            .iter()
            .map(|t| t.end.clone())
            .max()
            .unwrap_or_default(),
        files: covered.len() as u64,
    });

    let mut collections = cat.collections()?;
    collections.truncate(COLLECTIONS_LISTED);

    let mut by_size: Vec<&FileRow> = rows.iter().collect();
    by_size.sort_by(|a, b| b.size.cmp(&a.size).then(a.path.cmp(&b.path)));
    let largest = by_size
        .into_iter()
        .take(LARGEST_LISTED)
        .map(FileBrief::from)
        .collect();
    let files = rows
        .iter()
        .take(FILES_LISTED)
        .map(FileBrief::from)
        .collect();
    Ok(Overview {
        status,
        formats,
        time,
        collections,
        largest,
        files,
    })
}
