//! Description parts shared by several formats: named tables (sheets, database tables,
//! HTML tables, Parquet), archives, arrays, media and time coverage.

use super::profile::{ColumnBuilder, ColumnProfile};
use super::Description;
use serde::{Deserialize, Serialize};

/// Sample rows kept per table.
pub const SAMPLE_ROWS: usize = 3;
/// Characters kept per sample cell.
const SAMPLE_CELL_CHARS: usize = 40;

/// How many first rows an analyzer keeps of each table, and how much of each cell: a
/// few cut cells for a description, more and whole for a preview (`lakestar head`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Keep {
    /// Rows kept, from the first data row.
    pub rows: usize,
    /// Characters kept of a cell (`None`: all).
    pub cell_chars: Option<usize>,
}

impl Default for Keep {
    fn default() -> Self {
        Keep {
            rows: SAMPLE_ROWS,
            cell_chars: Some(SAMPLE_CELL_CHARS),
        }
    }
}

impl Keep {
    /// `n` whole rows.
    pub fn rows(n: usize) -> Self {
        Keep {
            rows: n,
            cell_chars: None,
        }
    }

    /// `s` as kept.
    pub(crate) fn cell(&self, s: &str) -> String {
        match self.cell_chars {
            Some(n) => crate::text_util::cut_chars(s, n),
            None => s.to_string(),
        }
    }
}

/// Several named tables in one file: workbook sheets, database tables and views, HTML
/// tables, a Parquet file's one table.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TableSet {
    /// The tables, in file order.
    pub tables: Vec<NamedTable>,
    /// Facts about the whole file ("3 row groups", "GeoPackage, SRS EPSG:4326").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// One table of a [`TableSet`].
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct NamedTable {
    /// Sheet, table or view name; `table 2` for unnamed HTML tables.
    pub name: String,
    /// What it is: "sheet", "table", "view", "feature layer", "html table", ...
    pub kind: String,
    /// Data rows (header excluded).
    pub rows: u64,
    /// Whether `rows` is exact (false: estimated from a sample).
    pub rows_exact: bool,
    /// Column profiles.
    pub columns: Vec<ColumnProfile>,
    /// 1-based row number of the header in the source, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header_row: Option<u64>,
    /// Used range, e.g. `A1:F120` for a sheet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range: Option<String>,
    /// The first rows, cells cut to a few dozen characters.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sample_rows: Vec<Vec<String>>,
    /// Facts about this table ("title row 1: Quarterly sales", "geometry POINT, EPSG:4326").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The pandas call that loads this table as described, `path` standing for the
    /// file's path (`pd.read_excel(path, sheet_name="Q1", header=2)`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<String>,
    /// The figures come from a sample the read budget chose: a run without the budget
    /// (`--full`) would read every row.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sampled: bool,
}

impl NamedTable {
    /// Flags the figures of a table profiled from its first `read` of `self.rows` rows
    /// as estimates — distinct counts become floors, null counts are scaled to the
    /// table — and says so in a note.
    pub(crate) fn mark_sample(&mut self, read: u64) {
        self.notes.push(format!(
            "figures from a sample of {read} rows (the first of {}{}): distinct counts are floors, nulls and means estimates",
            self.rows,
            if self.rows_exact { "" } else { ", estimated" }
        ));
        let ratio = self.rows as f64 / read.max(1) as f64;
        for c in &mut self.columns {
            c.estimated = true;
            c.distinct_exact = false;
            c.nulls = (c.nulls as f64 * ratio).round() as u64;
        }
    }
}

#[cfg(test)]
impl NamedTable {
    /// (name, type) of every column, for assertions.
    pub(crate) fn column_kinds(&self) -> Vec<(&str, super::ColumnType)> {
        self.columns
            .iter()
            .map(|c| (c.name.as_str(), c.kind))
            .collect()
    }
}

#[cfg(test)]
impl TableSet {
    /// (name, kind) of every table, for assertions.
    pub(crate) fn table_kinds(&self) -> Vec<(&str, &str)> {
        self.tables
            .iter()
            .map(|t| (t.name.as_str(), t.kind.as_str()))
            .collect()
    }
}

/// Builds the rows, columns and samples of a [`NamedTable`] from string cells, with the
/// same per-column profile every tabular format gets.
pub(crate) struct TableBuilder {
    columns: Vec<ColumnBuilder>,
    rows: u64,
    samples: Vec<Vec<String>>,
    keep: Keep,
}

impl TableBuilder {
    /// A table with these column names.
    pub(crate) fn new<S: Into<String>>(names: impl IntoIterator<Item = S>) -> Self {
        TableBuilder {
            columns: names.into_iter().map(ColumnBuilder::new).collect(),
            rows: 0,
            samples: Vec::new(),
            keep: Keep::default(),
        }
    }

    /// Keep these first rows as the sample (a preview keeps more, whole).
    pub(crate) fn keeping(mut self, keep: Keep) -> Self {
        self.keep = keep;
        self
    }

    /// Add one row; extra cells get `column_N` columns, missing cells count as nulls.
    pub(crate) fn push_row<S: AsRef<str>>(&mut self, cells: impl IntoIterator<Item = S>) {
        self.rows += 1;
        let keep = self.samples.len() < self.keep.rows;
        let mut sample = Vec::new();
        let mut n = 0;
        for (i, c) in cells.into_iter().enumerate() {
            let c = c.as_ref();
            if i >= self.columns.len() {
                self.columns
                    .push(ColumnBuilder::new(format!("column_{}", i + 1)));
            }
            self.columns[i].push(c);
            if keep {
                sample.push(self.keep.cell(c));
            }
            n = i + 1;
        }
        for col in self.columns.iter_mut().skip(n) {
            col.push("");
        }
        if keep {
            self.samples.push(sample);
        }
    }

    /// Rows pushed so far.
    pub(crate) fn rows(&self) -> u64 {
        self.rows
    }

    /// A finished table named `name`, of kind `kind`, with exact row count.
    pub(crate) fn finish(self, name: impl Into<String>, kind: impl Into<String>) -> NamedTable {
        NamedTable {
            name: name.into(),
            kind: kind.into(),
            rows: self.rows,
            rows_exact: true,
            columns: self
                .columns
                .into_iter()
                .map(ColumnBuilder::finish)
                .collect(),
            header_row: None,
            range: None,
            sample_rows: self.samples,
            notes: Vec::new(),
            load: None,
            sampled: false,
        }
    }
}

/// An archive (zip, tar) or a single compressed stream (gzip, zstd, bzip2, xz).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ArchiveSummary {
    /// Container type: "zip", "tar", "gzip", "zstd", "bzip2", "xz", "tar.gz", ...
    pub container: String,
    /// Members listed (all of them up to a cap), in archive order.
    pub members: Vec<Member>,
    /// Members in the archive (may exceed `members.len()`).
    pub members_total: u64,
    /// Sum of the members' uncompressed sizes, as the archive states them.
    pub uncompressed_bytes: u64,
    /// Descriptions of the first data members (or of the one stream), by member path.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub described: Vec<(String, Description)>,
    /// Facts and limits hit ("decompression stopped at 64 MiB").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// One member of an archive.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Member {
    /// Path inside the archive.
    pub path: String,
    /// Uncompressed size in bytes.
    pub size: u64,
}

/// Arrays and variables: NumPy .npy/.npz, NetCDF, HDF5.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ArraySet {
    /// Container type: "npy", "npz", "NetCDF-3", "HDF5", ...
    pub container: String,
    /// Named dimensions, when the format has them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dimensions: Vec<(String, u64)>,
    /// The arrays or variables.
    pub arrays: Vec<ArrayInfo>,
    /// Other facts (global attributes, limits).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// One array or variable.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ArrayInfo {
    /// Name (`arr_0` for unnamed npz members, the file stem for .npy).
    pub name: String,
    /// Element type as the format states it, e.g. `<f8`, `int32`.
    pub dtype: String,
    /// Shape; named dimensions appear in `dims`.
    pub shape: Vec<u64>,
    /// Dimension names, when known.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dims: Vec<String>,
    /// Attributes worth showing (units, long_name).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attrs: Vec<(String, String)>,
}

/// Images and PDF documents.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct MediaInfo {
    /// What it is: "PNG image", "PDF document", ... (serialized as `media_type`: `kind`
    /// is the tag of [`super::Content`]).
    #[serde(rename = "media_type")]
    pub kind: String,
    /// Width in pixels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub width: Option<u32>,
    /// Height in pixels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub height: Option<u32>,
    /// Pages of a document.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pages: Option<u32>,
    /// Document title from its metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Headings or first lines of the document's text.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outline: Vec<String>,
    /// Other facts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// The span of time a file covers, and where that was read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimeCoverage {
    /// First day covered, `YYYY-MM-DD`.
    pub start: String,
    /// Last day covered, `YYYY-MM-DD`.
    pub end: String,
    /// Where it was found: `column "order_date"`, `file name`, `text`.
    pub source: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::ColumnType;

    #[test]
    fn table_builder_profiles_and_samples() {
        let mut b = TableBuilder::new(["id", "name"]);
        b.push_row(["1", "a"]);
        b.push_row(["2", "b", "extra"]);
        b.push_row(["3"]);
        b.push_row(["4", "d"]);
        let t = b.finish("t", "table");
        assert_eq!(t.rows, 4);
        assert_eq!(t.columns.len(), 3);
        assert_eq!(t.columns[0].kind, ColumnType::Integer);
        assert_eq!(t.columns[1].nulls, 1);
        assert_eq!(t.columns[2].name, "column_3");
        assert_eq!(t.sample_rows.len(), SAMPLE_ROWS);
        assert_eq!(t.sample_rows[1], ["2", "b", "extra"]);
    }
}
