//! Tables that span many files: a Hive-partitioned folder (`key=value/…`), a Delta Lake
//! table (`_delta_log/`) and an Iceberg table (`metadata/*.metadata.json`), each
//! described as one table ([`TableDescription`]). Like companion links and collections,
//! a table is a fact about a folder, not about one file's content: the indexer finds the
//! roots among the paths a run changed ([`roots_of`]) and derives each table from its own
//! log or metadata (Delta, Iceberg: read from disk) or from its members' descriptions
//! (Hive), after the files are described (`indexer::tables`).
//!
//! Pure: the Delta and Iceberg readers read their log and metadata through the
//! [`TableFiles`] they are given (the lake on disk, or an object store).

pub mod delta;
pub mod hive;
pub mod iceberg;
pub mod render;

use crate::analyze::TimeCoverage;
use serde::{Deserialize, Serialize};

pub use crate::error::DatasetError;

/// Distinct values listed per partition column (the count says how many there are).
pub const MAX_PARTITION_VALUES: usize = 50;
/// Columns of a table rendered with their statistics; the rest are named only.
pub const MAX_RENDERED_COLUMNS: usize = 60;
/// The version of the rules that find and describe tables, recorded in the catalog
/// (`tables_version`): a catalog recording another (or none) has every table derived
/// again by the next run.
pub const TABLES_RULE: u32 = 2;

/// What kind of table a folder holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TableKind {
    /// Data files under `key=value` folders.
    Hive,
    /// A Delta Lake table: `_delta_log/` beside its data files.
    Delta,
    /// An Iceberg table: `metadata/` (and `data/`).
    Iceberg,
}

impl TableKind {
    /// The stored name (catalog, JSON).
    pub fn as_str(self) -> &'static str {
        match self {
            TableKind::Hive => "hive",
            TableKind::Delta => "delta",
            TableKind::Iceberg => "iceberg",
        }
    }

    /// The stored name read back.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "hive" => Some(TableKind::Hive),
            "delta" => Some(TableKind::Delta),
            "iceberg" => Some(TableKind::Iceberg),
            _ => None,
        }
    }

    /// Its name for people.
    pub fn human(self) -> &'static str {
        match self {
            TableKind::Hive => "Hive-partitioned dataset",
            TableKind::Delta => "Delta table",
            TableKind::Iceberg => "Iceberg table",
        }
    }
}

/// One column of a table, with the statistics the table keeps for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TableColumn {
    pub name: String,
    /// The table's own type name (`long`, `string`, `date`; Parquet's for Hive).
    #[serde(rename = "type")]
    pub kind: String,
    /// A partition column (its values are in [`TableDescription::partitions`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub partition: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nulls: Option<u64>,
}

/// A partition column and its distinct values (sorted, at most
/// [`MAX_PARTITION_VALUES`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Partition {
    pub name: String,
    pub values: Vec<String>,
    /// Distinct values in all.
    pub distinct: u64,
}

/// A table that spans many files, described as one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TableDescription {
    pub kind: TableKind,
    pub columns: Vec<TableColumn>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub partitions: Vec<Partition>,
    /// Rows of the current version, from the table's own statistics; absent when it
    /// keeps none (a note says why).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows: Option<u64>,
    /// Rows of the current version's data files that their deletion vectors delete
    /// (Delta), not counted in `rows`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deleted_rows: Option<u64>,
    /// Data files of the current version.
    pub data_files: u64,
    /// Their bytes.
    pub bytes: u64,
    /// Delta: the table version; Iceberg: the current snapshot id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// When that version or snapshot was written (UTC, RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub written_at: Option<String>,
    /// From date-like partition values and the date columns' ranges.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_coverage: Option<TimeCoverage>,
    /// The Python that reads the whole table, `path` standing for the table's folder
    /// (Iceberg: for its current metadata file, relative to the folder).
    pub load: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// A file of a table's folder, as the index holds it.
#[derive(Debug, Clone)]
pub struct Member {
    /// Relative to the table's folder.
    pub path: String,
    pub size: u64,
    /// Its own description (a Hive table's figures come from these).
    pub description: Option<crate::analyze::Description>,
}

#[cfg(test)]
impl TableDescription {
    /// (name, type, partition) of each column, for tests.
    pub(crate) fn schema(&self) -> Vec<(&str, &str, bool)> {
        self.columns
            .iter()
            .map(|c| (c.name.as_str(), c.kind.as_str(), c.partition))
            .collect()
    }
}

/// Where a table's log and metadata are read from, by lake-relative paths: the lake's
/// folder on disk ([`LocalFiles`]) or an object store (the indexer lists it from the
/// catalog and reads it by GETs).
pub trait TableFiles {
    /// The names of the files directly in the folder `dir`.
    fn list(&self, dir: &str) -> std::io::Result<Vec<String>>;
    /// The whole content of the file at `path`.
    fn read(&self, path: &str) -> std::io::Result<Vec<u8>>;
}

/// A lake on disk, its root folder.
pub struct LocalFiles<'a>(pub &'a std::path::Path);

impl TableFiles for LocalFiles<'_> {
    fn list(&self, dir: &str) -> std::io::Result<Vec<String>> {
        Ok(std::fs::read_dir(self.0.join(dir))?
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect())
    }

    fn read(&self, path: &str) -> std::io::Result<Vec<u8>> {
        std::fs::read(self.0.join(path))
    }
}

/// Files in memory, by lake-relative path, for tests.
#[cfg(test)]
#[derive(Default)]
pub(crate) struct MemFiles(pub std::collections::HashMap<String, Vec<u8>>);

#[cfg(test)]
impl TableFiles for MemFiles {
    fn list(&self, dir: &str) -> std::io::Result<Vec<String>> {
        Ok(self
            .0
            .keys()
            .filter_map(|k| k.strip_prefix(dir)?.strip_prefix('/'))
            .filter(|n| !n.contains('/'))
            .map(str::to_string)
            .collect())
    }

    fn read(&self, path: &str) -> std::io::Result<Vec<u8>> {
        self.0
            .get(path)
            .cloned()
            .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::NotFound, path.to_string()))
    }
}

/// The text of the file at `path` in `files`; a read or UTF-8 failure is a
/// [`DatasetError::Io`].
pub(crate) fn read_text(files: &dyn TableFiles, path: &str) -> Result<String, DatasetError> {
    let io = |source| DatasetError::Io {
        path: path.into(),
        source,
    };
    let bytes = files.read(path).map_err(io)?;
    String::from_utf8(bytes)
        .map_err(|e| io(std::io::Error::new(std::io::ErrorKind::InvalidData, e)))
}

/// Runs `read`, which reads the file at `path` with a library (the parquet crate for a
/// Delta checkpoint, apache-avro for an Iceberg manifest), turning a panic into that
/// table's error: the parquet crate asserts on some malformed files instead of returning
/// an error, and one bad file must not fail the run.
pub(crate) fn guarded<T>(
    path: &str,
    read: impl FnOnce() -> Result<T, DatasetError>,
) -> Result<T, DatasetError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(read)).unwrap_or_else(|_| {
        Err(DatasetError::unreadable(
            path,
            "its reader failed on malformed data",
        ))
    })
}

/// A `key=value` folder name, split.
pub fn partition_level(name: &str) -> Option<(&str, &str)> {
    let (k, v) = name.split_once('=')?;
    let ok = !k.is_empty()
        && !v.is_empty()
        && k.chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '-' || c == '.');
    ok.then_some((k, v))
}

/// The candidate table roots of lake-relative `paths` (each path's innermost claim: the
/// folder above `_delta_log/`, above `metadata/…metadata.json`, above the first
/// `key=value` level), sorted and distinct. The lake root itself is never a table.
pub fn roots_of<'a>(paths: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut roots = std::collections::BTreeSet::new();
    for p in paths {
        let parts: Vec<&str> = p.split('/').collect();
        for (i, part) in parts.iter().enumerate().skip(1) {
            let last = i + 1 == parts.len();
            let claims = *part == "_delta_log"
                || (*part == "metadata" && !last)
                || (!last && partition_level(part).is_some());
            if claims {
                roots.insert(parts[..i].join("/"));
                break;
            }
        }
    }
    roots.into_iter().collect()
}

/// Whether lake-relative `path` lies under the folder `root`.
pub fn is_under(path: &str, root: &str) -> bool {
    path.strip_prefix(root).is_some_and(|r| r.starts_with('/'))
}

/// Values compared as numbers when both are, else as text (ISO dates order as text).
pub(crate) fn value_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    match (a.parse::<f64>(), b.parse::<f64>()) {
        (Ok(x), Ok(y)) => x.partial_cmp(&y).unwrap_or(std::cmp::Ordering::Equal),
        _ => a.cmp(b),
    }
}

/// Widen a running minimum and maximum by another file's.
pub(crate) fn widen(col: &mut TableColumn, min: Option<String>, max: Option<String>) {
    if let Some(m) = min {
        if col.min.as_deref().is_none_or(|c| value_cmp(&m, c).is_lt()) {
            col.min = Some(m);
        }
    }
    if let Some(m) = max {
        if col.max.as_deref().is_none_or(|c| value_cmp(&m, c).is_gt()) {
            col.max = Some(m);
        }
    }
}

/// The partition columns of `(key, value)` pairs, in first-seen key order.
pub(crate) fn partitions_of<'a>(
    pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Vec<Partition> {
    let mut order: Vec<String> = Vec::new();
    let mut values: std::collections::HashMap<String, std::collections::BTreeSet<String>> =
        Default::default();
    for (k, v) in pairs {
        if !values.contains_key(k) {
            order.push(k.to_string());
        }
        values
            .entry(k.to_string())
            .or_default()
            .insert(v.to_string());
    }
    order
        .into_iter()
        .map(|name| {
            let set = &values[&name];
            let mut vals: Vec<String> = set.iter().cloned().collect();
            vals.sort_by(|a, b| value_cmp(a, b));
            vals.truncate(MAX_PARTITION_VALUES);
            Partition {
                distinct: set.len() as u64,
                values: vals,
                name,
            }
        })
        .collect()
}

/// Time coverage from date-like partition values (`2024-05-01`; a `year` column's
/// years) and the ranges of date-typed columns.
pub(crate) fn time_coverage(
    partitions: &[Partition],
    columns: &[TableColumn],
) -> Option<TimeCoverage> {
    let mut span: Option<(String, String, String)> = None;
    let mut take = |start: String, end: String, source: String| {
        span = Some(match span.take() {
            None => (start, end, source),
            Some((s, e, src)) => (s.min(start), e.max(end), src),
        });
    };
    let day = |v: &str| -> Option<String> {
        let d = v.get(..10)?;
        chrono::NaiveDate::parse_from_str(d, "%Y-%m-%d")
            .ok()
            .map(|_| d.to_string())
    };
    for p in partitions {
        // Only a complete list says the span.
        if p.values.len() as u64 != p.distinct {
            continue;
        }
        let days: Vec<String> = p.values.iter().filter_map(|v| day(v)).collect();
        if !days.is_empty() && days.len() == p.values.len() {
            let (s, e) = (days.iter().min()?.clone(), days.iter().max()?.clone());
            take(s, e, format!("partition \"{}\"", p.name));
        } else if p.name.eq_ignore_ascii_case("year") {
            let years: Vec<i32> = p.values.iter().filter_map(|v| v.parse().ok()).collect();
            if !years.is_empty()
                && years.len() == p.values.len()
                && years.iter().all(|y| (1000..=9999).contains(y))
            {
                let (s, e) = (years.iter().min()?, years.iter().max()?);
                take(
                    format!("{s}-01-01"),
                    format!("{e}-12-31"),
                    format!("partition \"{}\"", p.name),
                );
            }
        }
    }
    for c in columns {
        let t = c.kind.to_ascii_lowercase();
        if !(t.starts_with("date") || t.starts_with("timestamp")) {
            continue;
        }
        if let (Some(s), Some(e)) = (
            c.min.as_deref().and_then(day),
            c.max.as_deref().and_then(day),
        ) {
            take(s, e, format!("column \"{}\"", c.name));
        }
    }
    span.map(|(start, end, source)| TimeCoverage { start, end, source })
}

/// A Python string literal of `s`.
pub(crate) fn py_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("{s:?}"))
}

/// The RFC 3339 text of Unix milliseconds.
pub(crate) fn at_ms(ms: i64) -> Option<String> {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_are_the_folders_above_logs_metadata_and_partitions() {
        let roots = roots_of([
            "sales/_delta_log/00000000000000000000.json",
            "sales/year=2024/part-0.parquet",
            "ice/metadata/00001-x.metadata.json",
            "hive/region=eu/day=2024-01-01/a.parquet",
            "plain/a.csv",
            "year=2024/top.parquet",
            "odd/x=1",
        ]);
        assert_eq!(roots, ["hive", "ice", "sales"]);
    }

    #[test]
    fn partition_values_are_sorted_bounded_and_counted() {
        let vals: Vec<String> = (0..70).map(|i| i.to_string()).collect();
        let p = partitions_of(
            vals.iter()
                .map(|v| ("n", v.as_str()))
                .chain([("k", "b"), ("k", "a")]),
        );
        assert_eq!(p[0].name, "n");
        assert_eq!(p[0].distinct, 70);
        assert_eq!(p[0].values.len(), MAX_PARTITION_VALUES);
        assert_eq!(p[0].values[..3], ["0", "1", "2"]);
        assert_eq!(p[1].values, ["a", "b"]);
        let t = time_coverage(&partitions_of([("year", "2023"), ("year", "2021")]), &[]).unwrap();
        assert_eq!(
            (t.start.as_str(), t.end.as_str()),
            ("2021-01-01", "2023-12-31")
        );
    }
}
