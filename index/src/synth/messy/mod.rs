//! A corpus of messy files, one per layout that agencies and science archives publish
//! (report-style CSVs, grouped headers, two tables in one file, tabs in a `.csv`,
//! European numbers, numbers and dates as people write them, widening fixed-width
//! fields, headerless data with its documentation beside it, dates in text, time in
//! other forms in CSV, HTML, SQLite and Parquet, a Parquet file past the distinct cap, a
//! CSV past the read budget), each with the facts a person
//! reading it would state ([`Expected`]). Deterministic: the same files on every run.
//!
//! The integration tests (`tests/it/messy.rs`, `tests/it/load_lines.rs`) assert these
//! facts against lakestar's descriptions; `benches/reading.rs` counts them for lakestar,
//! DuckDB and pandas.

mod layouts;

use crate::analyze::{ColumnProfile, ColumnType, Content, Description};
use std::io;
use std::path::Path;

/// A read budget under which the corpus's large CSV is sampled while every other file
/// is read whole (`index --read-budget`).
pub const SMALL_BUDGET: u64 = 2 << 20;

/// A column type as a person states it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Whole numbers.
    Integer,
    /// Numbers with a fraction.
    Float,
    /// A number that is fairly either (`$3,100M`: whole millions, or a scaled figure).
    Number,
    /// Calendar dates.
    Date,
    /// Dates with a time of day.
    Datetime,
    /// Spans of time, profiled in seconds.
    Duration,
    /// Words, codes, categories (text, categorical or identifier).
    Text,
}

/// The coarse class of a column: what every reader (lakestar, DuckDB, pandas) can be
/// scored on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// Integer or float.
    Numeric,
    /// Date or datetime.
    Date,
    /// Anything else.
    Text,
}

impl Class {
    /// The class of a profiled column type.
    pub fn of(t: ColumnType) -> Class {
        match t {
            ColumnType::Integer | ColumnType::Float => Class::Numeric,
            ColumnType::Date | ColumnType::Datetime => Class::Date,
            _ => Class::Text,
        }
    }

    /// `numeric`, `date` or `text`.
    pub fn as_str(self) -> &'static str {
        match self {
            Class::Numeric => "numeric",
            Class::Date => "date",
            Class::Text => "text",
        }
    }
}

impl Kind {
    /// Whether a profiled type states this kind.
    pub fn accepts(self, t: ColumnType) -> bool {
        match self {
            Kind::Integer => t == ColumnType::Integer,
            Kind::Float => t == ColumnType::Float,
            Kind::Number => matches!(t, ColumnType::Integer | ColumnType::Float),
            Kind::Date => t == ColumnType::Date,
            Kind::Datetime => t == ColumnType::Datetime,
            Kind::Duration => t == ColumnType::Duration,
            Kind::Text => matches!(
                t,
                ColumnType::Text | ColumnType::Categorical | ColumnType::Identifier
            ),
        }
    }

    /// Its coarse class.
    pub fn class(self) -> Class {
        match self {
            Kind::Integer | Kind::Float | Kind::Number => Class::Numeric,
            Kind::Date | Kind::Datetime => Class::Date,
            Kind::Text | Kind::Duration => Class::Text,
        }
    }
}

/// What a person states about one column. `None` and empty fields are not asserted.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    /// The name a reader uses (`Pool 4 / Count` under a grouping header).
    pub name: String,
    /// Its type.
    pub kind: Kind,
    /// Smallest value: a plain number (`-1234`, `3100000000`, `12.5`) or an ISO date.
    pub min: Option<String>,
    /// Largest value.
    pub max: Option<String>,
    /// How the numbers are written (the vocabulary of `ColumnProfile::notation`).
    pub notation: Vec<String>,
    /// strptime pattern every value parses with (`%B %d, %Y`).
    pub date_format: Option<String>,
    /// The unit a header or a documentation file states.
    pub unit: Option<String>,
    /// Distinct non-null values.
    pub distinct: Option<u64>,
    /// Null values.
    pub nulls: Option<u64>,
    /// Missing-value markers (`M`, `(NA)`) and their counts, in order first seen.
    pub missing: Vec<(String, u64)>,
}

impl Column {
    /// A column of this name and kind.
    pub fn new(name: &str, kind: Kind) -> Column {
        Column {
            name: name.into(),
            kind,
            min: None,
            max: None,
            notation: Vec::new(),
            date_format: None,
            unit: None,
            distinct: None,
            nulls: None,
            missing: Vec::new(),
        }
    }
    /// With this range.
    pub fn range(mut self, min: impl ToString, max: impl ToString) -> Self {
        self.min = Some(min.to_string());
        self.max = Some(max.to_string());
        self
    }
    /// With these notations.
    pub fn notation(mut self, n: &[&str]) -> Self {
        self.notation = n.iter().map(|s| s.to_string()).collect();
        self
    }
    /// With this date format.
    pub fn date_format(mut self, f: &str) -> Self {
        self.date_format = Some(f.into());
        self
    }
    /// With this unit.
    pub fn unit(mut self, u: &str) -> Self {
        self.unit = Some(u.into());
        self
    }
    /// With this many distinct values.
    pub fn distinct(mut self, n: u64) -> Self {
        self.distinct = Some(n);
        self
    }
    /// With this many nulls.
    pub fn nulls(mut self, n: u64) -> Self {
        self.nulls = Some(n);
        self
    }
    /// With this missing-value marker, written in `n` cells.
    pub fn missing(mut self, marker: &str, n: u64) -> Self {
        self.missing.push((marker.into(), n));
        self
    }
}

/// What a person states about one table of a file.
#[derive(Debug, Clone, PartialEq)]
pub struct TableFacts {
    /// Its title, for one of several tables in a file.
    pub name: Option<String>,
    /// Data rows.
    pub rows: u64,
    /// Its columns, in order.
    pub columns: Vec<Column>,
}

impl TableFacts {
    /// A table of `rows` rows with these columns.
    pub fn new(rows: u64, columns: Vec<Column>) -> TableFacts {
        TableFacts {
            name: None,
            rows,
            columns,
        }
    }
    /// With this title.
    pub fn named(mut self, title: &str) -> Self {
        self.name = Some(title.into());
        self
    }
}

/// The facts of one corpus file.
#[derive(Debug, Clone, PartialEq)]
pub struct Expected {
    /// Path relative to the corpus directory, `/`-separated.
    pub path: String,
    /// The layout family (`report`, `dialect`, `notation`, `fixed-width`, `companion`,
    /// `time`, `time-forms`, `text`, `honest`, `regions`), for per-family tests and the
    /// benchmark's table.
    pub layout: &'static str,
    /// Detected format (`Format::as_str`), when a person would insist on one.
    pub format: Option<&'static str>,
    /// The field delimiter of a delimited table.
    pub delimiter: Option<&'static str>,
    /// The tables, in file order (empty: not a table; not asserted when `format` is
    /// None too).
    pub tables: Vec<TableFacts>,
    /// Whether a text file is Markdown.
    pub markdown: Option<bool>,
    /// First and last day covered (`YYYY-MM-DD`).
    pub time_coverage: Option<(String, String)>,
    /// The file covers no time a reader could state (a negative control): its
    /// description must give no time coverage.
    pub uncovered: bool,
    /// The file this one documents or is documented by, named in its description.
    pub companion: Option<String>,
    /// Larger than [`SMALL_BUDGET`]: figures are estimated unless read in full.
    pub larger_than_budget: bool,
}

impl Expected {
    fn new(path: &str, layout: &'static str, format: Option<&'static str>) -> Expected {
        Expected {
            path: path.into(),
            layout,
            format,
            delimiter: None,
            tables: Vec::new(),
            markdown: None,
            time_coverage: None,
            uncovered: false,
            companion: None,
            larger_than_budget: false,
        }
    }
    fn delimiter(mut self, d: &'static str) -> Self {
        self.delimiter = Some(d);
        self
    }
    fn table(mut self, t: TableFacts) -> Self {
        self.tables.push(t);
        self
    }
    fn coverage(mut self, start: &str, end: &str) -> Self {
        self.time_coverage = Some((start.into(), end.into()));
        self
    }
    fn uncovered(mut self) -> Self {
        self.uncovered = true;
        self
    }
    fn companion(mut self, file: &str) -> Self {
        self.companion = Some(file.into());
        self
    }
    fn markdown(mut self, md: bool) -> Self {
        self.markdown = Some(md);
        self
    }
    fn sampled(mut self) -> Self {
        self.larger_than_budget = true;
        self
    }
}

/// Write the corpus under `dir` (created if needed); the facts of every file written.
pub fn write_messy_corpus(dir: &Path) -> io::Result<Vec<Expected>> {
    let mut out = Vec::new();
    for (rel, body, facts) in layouts::text_files() {
        let path = dir.join(&rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, body)?;
        out.push(facts);
    }
    out.push(layouts::parquet_trips(dir)?);
    out.push(layouts::sqlite_observations(dir)?);
    out.push(layouts::parquet_periods(dir)?);
    Ok(out)
}

/// One table of a description, whatever its content kind: a delimited or fixed-width
/// table, or one of several named tables.
#[derive(Debug, Clone, Copy)]
pub struct TableView<'a> {
    /// The table's name (several tables in a file, sheets, Parquet).
    pub name: Option<&'a str>,
    /// Data rows.
    pub rows: u64,
    /// Whether `rows` is exact.
    pub rows_exact: bool,
    /// Column profiles.
    pub columns: &'a [ColumnProfile],
    /// The pandas call that loads it.
    pub load: Option<&'a str>,
    /// The field delimiter (delimited tables).
    pub delimiter: Option<&'a str>,
}

/// Every table of `d`, in order (none for content that is not tabular).
pub fn tables_of(d: &Description) -> Vec<TableView<'_>> {
    match &d.content {
        Content::Table(t) => vec![TableView {
            name: None,
            rows: t.rows,
            rows_exact: t.rows_exact,
            columns: &t.columns,
            load: t.load.as_deref(),
            delimiter: Some(&t.delimiter),
        }],
        Content::Tables(ts) => ts
            .tables
            .iter()
            .map(|t| TableView {
                name: Some(&t.name),
                rows: t.rows,
                rows_exact: t.rows_exact,
                columns: &t.columns,
                load: t.load.as_deref(),
                delimiter: None,
            })
            .collect(),
        Content::Json(_)
        | Content::Text(_)
        | Content::Archive(_)
        | Content::Arrays(_)
        | Content::Media(_)
        | Content::Opaque(_) => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The corpus is the same on every run, and its facts agree with its files.
    #[test]
    fn the_corpus_is_deterministic_and_self_consistent() {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        let ea = write_messy_corpus(a.path()).unwrap();
        let eb = write_messy_corpus(b.path()).unwrap();
        assert_eq!(ea, eb);
        for e in &ea {
            let x = std::fs::read(a.path().join(&e.path)).unwrap();
            let y = std::fs::read(b.path().join(&e.path)).unwrap();
            assert!(x == y, "{} differs between runs", e.path);
            let big = x.len() as u64 > SMALL_BUDGET;
            assert_eq!(big, e.larger_than_budget, "{}", e.path);
        }
        let paths: Vec<&str> = ea.iter().map(|e| e.path.as_str()).collect();
        for e in &ea {
            if let Some(c) = &e.companion {
                let dir = e.path.rsplit_once('/').map_or("", |(d, _)| d);
                assert!(paths.contains(&format!("{dir}/{c}").as_str()), "{c}");
            }
        }
    }
}
