//! Analyzers: from a file's bytes to a [`Description`].
//!
//! Detection looks at content first (magic bytes, sniffing) and at the extension second
//! ([`detect`]). Each format has one [`Analyzer`], named and versioned: the pair is the
//! analyzer key (`csv@1`) stored with every description, so that changing one analyzer
//! re-describes exactly the files it handles. A failed analysis is not an error of the
//! run: it yields a degraded description that carries the error message.

mod archive;
mod array;
mod content_de;
pub(crate) mod dates;
mod delimited;
mod detect;
mod encoding;
mod excel;
pub(crate) mod fixed;
#[cfg(test)]
pub(crate) mod fixtures;
mod guard;
mod html;
mod json;
mod markup;
mod media;
mod model;
pub(crate) mod parquet;
mod profile;
pub(crate) mod pycall;
pub mod record;
pub(crate) mod regions;
mod render;
pub mod rules;
mod sheet;
mod source;
mod sqlite;
mod structured;
pub(crate) mod summary;
mod terms;
mod text;
pub mod time;
mod title;

use serde::{Deserialize, Serialize};

pub use detect::{detect, Format};
pub use profile::{ColumnProfile, ColumnType};
pub use render::{human_size, render, RenderOptions};
pub use source::{Source, DEFAULT_BUDGET};

pub use delimited::Table;
pub use json::{JsonPath, JsonSummary};
#[cfg(test)]
pub(crate) use model::TableBuilder;
pub use model::{
    ArchiveSummary, ArrayInfo, ArraySet, Keep, MediaInfo, Member, NamedTable, TableSet,
    TimeCoverage,
};
pub use text::{Heading, TextSummary, TextTable};

/// The description of one file's content: what an analyst or an LLM needs to use it.
///
/// It depends only on the content (and the extension, for detection), never on the path,
/// so it is cached by content hash.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Description {
    /// Detected format.
    pub format: Format,
    /// Size in bytes.
    pub size: u64,
    /// Key of the analyzer that wrote it (`name@version`).
    pub analyzer: String,
    /// What was found inside.
    pub content: Content,
    /// The time span the file covers, when one was found (columns, name, text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_coverage: Option<TimeCoverage>,
    /// Facts about the analysis itself ("figures estimated from the first 64 MiB").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Why the analysis failed, when it did; `content` is then a degraded description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// How often each reading rule fired ([`rules::ReadingRule`] by name): rows kept as
    /// notes, cells read as missing, tables split off, …
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub rules: std::collections::BTreeMap<String, u64>,
}

impl Description {
    /// Made from a sample of a file larger than the read budget (not every figure exact).
    pub fn is_sampled(&self) -> bool {
        match &self.content {
            Content::Table(t) => t.sampled_bytes.is_some(),
            Content::Json(j) => j.sampled_bytes.is_some(),
            Content::Tables(t) => t.tables.iter().any(|t| t.sampled),
            Content::Text(_)
            | Content::Archive(_)
            | Content::Arrays(_)
            | Content::Media(_)
            | Content::Opaque(_) => false,
        }
    }
}

/// The format-specific part of a description. Read by hand (`content_de`), written by
/// the derive: keep the two lists of kinds alike.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Content {
    /// Delimited or fixed-width text table (CSV, TSV, ...).
    Table(Table),
    /// Several named tables: spreadsheets, databases, HTML tables, Parquet.
    Tables(TableSet),
    /// JSON, JSON lines, and structure formats read like JSON (YAML, TOML, XML).
    Json(JsonSummary),
    /// Markdown or plain text.
    Text(TextSummary),
    /// Archives and compressed streams, with their first data members described.
    Archive(ArchiveSummary),
    /// Arrays and variables (NumPy, NetCDF, HDF5).
    Arrays(ArraySet),
    /// Images and PDF documents.
    Media(MediaInfo),
    /// A file we only recognise: its type and size.
    Opaque(Opaque),
}

impl Content {
    /// Every profiled column of a tabular description, with its table's row count: the
    /// one table's, or each named table's. The one place that says which kinds have them.
    pub fn profiled_columns(&self) -> impl Iterator<Item = (u64, &ColumnProfile)> {
        let (one, named): (Option<&Table>, &[NamedTable]) = match self {
            Content::Table(t) => (Some(t), &[]),
            Content::Tables(ts) => (None, &ts.tables),
            Content::Json(_)
            | Content::Text(_)
            | Content::Archive(_)
            | Content::Arrays(_)
            | Content::Media(_)
            | Content::Opaque(_) => (None, &[]),
        };
        let one = one
            .into_iter()
            .flat_map(|t| t.columns.iter().map(move |c| (t.rows, c)));
        let named = named
            .iter()
            .flat_map(|t| t.columns.iter().map(move |c| (t.rows, c)));
        one.chain(named)
    }

    /// The column count of a description of one table without a header row (the
    /// columns a documentation file may name): `None` for any other.
    pub fn headerless_columns(&self) -> Option<usize> {
        self.single_table()
            .filter(|(header, columns)| !header && !columns.is_empty())
            .map(|(_, columns)| columns.len())
    }

    /// The table of a description of exactly one (a `Table`, or `Tables` holding one):
    /// whether it has a header row, and its columns.
    pub fn single_table(&self) -> Option<(bool, &[ColumnProfile])> {
        match self {
            Content::Table(t) => Some((t.header, &t.columns)),
            Content::Tables(ts) => match ts.tables.as_slice() {
                [t] => Some((t.header_row.is_some(), &t.columns)),
                _ => None,
            },
            Content::Json(_)
            | Content::Text(_)
            | Content::Archive(_)
            | Content::Arrays(_)
            | Content::Media(_)
            | Content::Opaque(_) => None,
        }
    }
}

/// A file we do not (yet) look inside.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Opaque {
    /// Human name of the detected type, e.g. "PNG image" or "binary data".
    pub detected: String,
    /// MIME type when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime: Option<String>,
}

/// Why an analyzer could not describe a file.
#[derive(Debug, thiserror::Error)]
pub enum AnalyzeError {
    /// The content is not valid for the format.
    #[error("{0}")]
    Malformed(String),
    /// The file could not be read.
    #[error("read failed: {0}")]
    Io(#[from] std::io::Error),
    /// The analyzer panicked: a bug, caught at the boundary around every analyzer.
    #[error("{0}")]
    Panicked(String),
}

/// One format's analyzer.
pub trait Analyzer: Sync {
    /// Short stable name, part of the analyzer key.
    fn name(&self) -> &'static str;
    /// Bumped whenever the analyzer's output changes for some input.
    fn version(&self) -> u32;
    /// Describe the content of `src`, detected as `format`.
    fn analyze(&self, src: &Source, format: Format) -> Result<Content, AnalyzeError>;
}

/// Whitespace runs (newlines in wrapped cells) as single spaces.
pub(crate) fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The analyzer key (`name@version`) stored with each description; the reading rules
/// switched off, when some are, follow it (`delimited@8~-summary-rows`).
pub fn analyzer_key(a: &dyn Analyzer) -> String {
    format!(
        "{}@{}{}",
        a.name(),
        a.version(),
        rules::in_force().key_suffix()
    )
}

/// The analyzer responsible for `format`. One line per format, on purpose.
pub fn analyzer_for(format: Format) -> &'static dyn Analyzer {
    match format {
        Format::Csv => &delimited::DelimitedAnalyzer,
        Format::Tsv => &delimited::DelimitedAnalyzer,
        Format::FixedWidth => &fixed::FixedWidthAnalyzer,
        Format::Json => &json::JsonAnalyzer,
        Format::Jsonl => &json::JsonAnalyzer,
        Format::Yaml => &structured::StructuredAnalyzer,
        Format::Toml => &structured::StructuredAnalyzer,
        Format::Xml => &structured::StructuredAnalyzer,
        Format::Markdown => &text::TextAnalyzer,
        Format::Text => &text::TextAnalyzer,
        Format::Html => &html::HtmlAnalyzer,
        Format::Parquet => &parquet::ParquetAnalyzer,
        Format::Excel => &excel::ExcelAnalyzer,
        Format::Sqlite => &sqlite::SqliteAnalyzer,
        Format::Pdf => &media::PdfAnalyzer,
        Format::Image => &media::ImageAnalyzer,
        Format::Archive => &archive::ArchiveAnalyzer,
        Format::Compressed => &archive::ArchiveAnalyzer,
        Format::Npy => &array::ArrayAnalyzer,
        Format::Scientific => &array::ArrayAnalyzer,
        Format::Binary => &OpaqueAnalyzer,
        Format::Empty => &OpaqueAnalyzer,
    }
}

/// The current analyzer key for `format`: a stored description with another key is stale.
pub fn current_key(format: Format) -> String {
    analyzer_key(analyzer_for(format))
}

/// Detect the format of `src` and describe it. Never fails: a failed analysis gives a
/// degraded description with [`Description::error`] set.
pub fn describe(src: &Source) -> Description {
    let format = detect(src.path(), src.head(), src.size());
    describe_as(src, format)
}

/// Describe `src` as `format` (already detected).
pub fn describe_as(src: &Source, format: Format) -> Description {
    describe_with(analyzer_for(format), src, format)
}

/// Describe `src` with `analyzer`, inside the one panic boundary every analysis goes
/// through (the indexer's workers and archive members alike).
fn describe_with(analyzer: &dyn Analyzer, src: &Source, format: Format) -> Description {
    let src = &src.clone().with_fresh_applied();
    let (mut content, error) = match guard::run(analyzer.name(), || analyzer.analyze(src, format)) {
        Ok(mut c) => {
            // Columns that name days together, and a note for each column read as time.
            time::forms::read_tables(&mut c, src.applied());
            (c, None)
        }
        Err(e) => (
            Content::Opaque(Opaque {
                detected: format!("{} (could not be analyzed)", format.human()),
                mime: None,
            }),
            Some(e.to_string()),
        ),
    };
    profile::settle(&mut content, src.applied());
    Description {
        format,
        size: src.size(),
        analyzer: analyzer_key(analyzer),
        time_coverage: time::from_content(&content),
        content,
        notes: Vec::new(),
        error,
        rules: src.applied().counts(),
    }
}

/// Describes formats that have no analyzer of their own: detected type and size.
struct OpaqueAnalyzer;

impl Analyzer for OpaqueAnalyzer {
    fn name(&self) -> &'static str {
        "generic"
    }
    fn version(&self) -> u32 {
        1
    }
    fn analyze(&self, src: &Source, format: Format) -> Result<Content, AnalyzeError> {
        let mime = infer::get(src.head()).map(|t| t.mime_type().to_string());
        let detected = match (&mime, format) {
            (Some(m), Format::Binary) => format!("binary data ({m})"),
            _ => format.human().to_string(),
        };
        Ok(Content::Opaque(Opaque { detected, mime }))
    }
}

#[cfg(test)]
mod remote_tests;

#[cfg(test)]
mod tests {
    use super::*;

    /// Every content kind survives the JSON round trip the catalog puts it through (an
    /// internally tagged enum breaks if a variant has a field named like the tag).
    #[test]
    fn every_content_kind_round_trips_through_json() {
        let contents = vec![
            Content::Table(Table {
                delimiter: ",".into(),
                header: true,
                rows: 0,
                ragged_rows: 0,
                columns: Vec::new(),
                encoding: None,
                skipped_lines: 0,
                preamble: Vec::new(),
                footer: Vec::new(),
                notes: Vec::new(),
                rows_exact: true,
                sampled_bytes: None,
                load: None,
                sample_rows: Vec::new(),
            }),
            Content::Tables(TableSet {
                tables: vec![NamedTable {
                    kind: "sheet".into(),
                    ..Default::default()
                }],
                notes: vec!["n".into()],
            }),
            Content::Json(json::summarize_value(&serde_json::json!({"a": [1]}))),
            text::TextAnalyzer
                .analyze(
                    &Source::from_bytes("a.md", b"# Title\n\nSome words.\n".to_vec()),
                    Format::Markdown,
                )
                .unwrap(),
            Content::Archive(ArchiveSummary::default()),
            Content::Arrays(ArraySet::default()),
            Content::Media(MediaInfo {
                kind: "PNG image".into(),
                width: Some(1),
                ..Default::default()
            }),
            Content::Opaque(Opaque {
                detected: "x".into(),
                mime: None,
            }),
        ];
        // Exhaustive: a new kind does not compile here until it has a case above.
        let kinds: std::collections::BTreeSet<u8> = contents
            .iter()
            .map(|c| match c {
                Content::Table(_) => 0,
                Content::Tables(_) => 1,
                Content::Json(_) => 2,
                Content::Text(_) => 3,
                Content::Archive(_) => 4,
                Content::Arrays(_) => 5,
                Content::Media(_) => 6,
                Content::Opaque(_) => 7,
            })
            .collect();
        assert_eq!(kinds.len(), 8, "a content kind has no case");
        for content in contents {
            let d = Description {
                format: Format::Binary,
                size: 1,
                analyzer: "x@1".into(),
                content,
                time_coverage: None,
                notes: Vec::new(),
                error: None,
                rules: [("summary-rows".to_string(), 2)].into(),
            };
            let json = serde_json::to_string(&d).unwrap();
            let back: Description =
                serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}"));
            assert_eq!(back, d);
        }
    }
}
