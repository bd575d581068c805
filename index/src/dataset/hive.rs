//! A Hive-partitioned dataset: data files of one format under `key=value/…` folders, the
//! same keys in the same order on every path (`sales/year=2024/month=5/part-0.parquet`).
//! Partition values come from the paths; schema, rows and column ranges from the
//! members' own descriptions (Parquet footers, CSV profiles), which the indexer has
//! already made.

use super::{DatasetError, Member, TableColumn, TableDescription, TableKind};
use crate::analyze::{ColumnProfile, Content, Format};

/// A data file's one table: (rows, rows exact, columns).
fn table_of(m: &Member) -> Option<(u64, bool, &[ColumnProfile])> {
    let d = m.description.as_ref()?;
    match &d.content {
        Content::Table(t) => Some((t.rows, t.rows_exact, &t.columns)),
        Content::Tables(ts) => match ts.tables.as_slice() {
            [t] => Some((t.rows, t.rows_exact, &t.columns)),
            _ => None,
        },
        _ => None,
    }
}

/// Whether a file is data (not `_SUCCESS`, `_common_metadata`, `.crc` and the like).
fn is_data_name(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    !(name.starts_with('_') || name.starts_with('.') || name.ends_with(".crc"))
}

/// The partition levels of a path relative to the table's folder: `None` when a folder
/// on it is not a `key=value` level (or the file lies in the folder itself).
fn levels(path: &str) -> Option<Vec<(&str, &str)>> {
    let (dirs, _) = path.rsplit_once('/')?;
    dirs.split('/').map(super::partition_level).collect()
}

/// Whether the file at `path` (relative to the folder) is a data file under partition
/// levels: the members whose descriptions [`describe`] reads.
pub fn is_data_member(path: &str) -> bool {
    is_data_name(path) && levels(path).is_some()
}

/// Describe the folder `rel` as a Hive-partitioned dataset of `members` (paths relative
/// to it): `Ok(None)` when no data file lies under `key=value` folders.
pub fn describe(rel: &str, members: &[Member]) -> Result<Option<TableDescription>, DatasetError> {
    let data: Vec<(&Member, Vec<(&str, &str)>)> = members
        .iter()
        .filter(|m| is_data_name(&m.path))
        .filter_map(|m| levels(&m.path).map(|l| (m, l)))
        .collect();
    let Some((first, first_levels)) = data.first() else {
        return Ok(None);
    };
    let keys: Vec<&str> = first_levels.iter().map(|(k, _)| *k).collect();
    let format = first.description.as_ref().map(|d| d.format);
    for (m, l) in &data {
        if l.iter().map(|(k, _)| *k).ne(keys.iter().copied()) {
            return Err(DatasetError::malformed(
                rel,
                format!(
                    "partition folders differ: {} is not under {}",
                    m.path,
                    keys.iter()
                        .map(|k| format!("{k}=…"))
                        .collect::<Vec<_>>()
                        .join("/")
                ),
            ));
        }
        if m.description.as_ref().map(|d| d.format) != format {
            return Err(DatasetError::malformed(
                rel,
                format!("{} is not of the format of {}", m.path, first.path),
            ));
        }
    }
    let mut notes = Vec::new();
    let mut columns: Vec<TableColumn> = Vec::new();
    let mut rows = Some(0u64);
    let mut undescribed = 0;
    let mut later = false;
    for (m, _) in &data {
        let Some((n, exact, cols)) = table_of(m) else {
            undescribed += 1;
            rows = None;
            continue;
        };
        rows = rows.filter(|_| exact).map(|r| r + n);
        for c in cols {
            if !columns.iter().any(|k| k.name == c.name) {
                if later {
                    notes.push(format!("column {} is not in every file", c.name));
                }
                columns.push(TableColumn {
                    name: c.name.clone(),
                    kind: c
                        .declared_type
                        .clone()
                        .unwrap_or_else(|| c.kind.as_str().to_string()),
                    partition: false,
                    min: None,
                    max: None,
                    nulls: None,
                });
            }
        }
        later = true;
    }
    if undescribed > 0 {
        notes.push(format!(
            "{undescribed} data files have no table description"
        ));
    } else if rows.is_none() {
        notes.push("rows not known exactly: some files were profiled from a sample".into());
    }
    merge_ranges(&mut columns, data.iter().map(|(m, _)| *m));
    let partitions = super::partitions_of(data.iter().flat_map(|(_, l)| l.iter().copied()));
    for p in &partitions {
        match columns.iter_mut().find(|c| c.name == p.name) {
            Some(c) => c.partition = true,
            None => columns.push(TableColumn {
                name: p.name.clone(),
                kind: value_type(&p.values).to_string(),
                partition: true,
                min: None,
                max: None,
                nulls: None,
            }),
        }
    }
    let load = match format {
        Some(Format::Parquet) => format!("pd.read_parquet({})", super::py_str(rel)),
        _ => format!(
            "pyarrow.dataset.dataset({}, format=\"csv\", partitioning=\"hive\").to_table().to_pandas()",
            super::py_str(rel)
        ),
    };
    Ok(Some(TableDescription {
        kind: TableKind::Hive,
        time_coverage: super::time_coverage(&partitions, &columns),
        columns,
        partitions,
        rows,
        deleted_rows: None,
        data_files: data.len() as u64,
        bytes: data.iter().map(|(m, _)| m.size).sum(),
        version: None,
        written_at: None,
        load,
        notes,
    }))
}

/// The type of a partition column read from its values: `int`, `date` or `string`.
fn value_type(values: &[String]) -> &'static str {
    if values.iter().all(|v| v.parse::<i64>().is_ok()) {
        "int"
    } else if values
        .iter()
        .all(|v| chrono::NaiveDate::parse_from_str(v, "%Y-%m-%d").is_ok())
    {
        "date"
    } else {
        "string"
    }
}

/// Widen `columns`' ranges and sum their nulls over the members' descriptions, where
/// each member's figures are exact (a footer's statistics, a whole-file profile); a
/// column some member lacks exact figures for shows none.
fn merge_ranges<'a>(
    columns: &mut [TableColumn],
    members: impl Iterator<Item = &'a Member> + Clone,
) {
    for col in columns.iter_mut() {
        let mut nulls = Some(0u64);
        let mut ranged = true;
        let mut seen = false;
        for m in members.clone() {
            let Some((_, _, cols)) = table_of(m) else {
                nulls = None;
                ranged = false;
                continue;
            };
            let Some(c) = cols.iter().find(|c| c.name == col.name) else {
                continue;
            };
            seen = true;
            let exact = |what: &str| !c.estimated || c.exact.iter().any(|e| e == what);
            nulls = nulls.filter(|_| exact("nulls")).map(|n| n + c.nulls);
            if exact("range") {
                super::widen(col, c.min.clone(), c.max.clone());
            } else {
                ranged = false;
            }
        }
        if !ranged || !seen {
            col.min = None;
            col.max = None;
        }
        col.nulls = nulls.filter(|_| seen);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::{Description, TableSet};

    fn parquet(path: &str, rows: u64, lo: &str, hi: &str) -> Member {
        let mut b = crate::analyze::TableBuilder::new(["amount"]);
        for cell in [lo, hi, ""] {
            b.push_row([cell]);
        }
        let mut table = b.finish("data", "parquet");
        table.rows = rows;
        table.columns[0].declared_type = Some("INT64".into());
        Member {
            path: path.into(),
            size: 100,
            description: Some(Description {
                format: Format::Parquet,
                size: 100,
                analyzer: "parquet@1".into(),
                content: Content::Tables(TableSet {
                    tables: vec![table],
                    ..Default::default()
                }),
                time_coverage: None,
                notes: vec![],
                error: None,
                rules: Default::default(),
            }),
        }
    }

    #[test]
    fn partitions_from_paths_and_figures_from_the_footers() {
        let members = [
            parquet("year=2023/region=eu/p0.parquet", 4, "2", "90"),
            parquet("year=2024/region=us/p0.parquet", 6, "-5", "10"),
            Member {
                path: "_SUCCESS".into(),
                size: 0,
                description: None,
            },
        ];
        let t = describe("sales", &members).unwrap().unwrap();
        assert_eq!((t.rows, t.data_files, t.bytes), (Some(10), 2, 200));
        assert_eq!(
            t.schema(),
            [
                ("amount", "INT64", false),
                ("year", "int", true),
                ("region", "string", true)
            ]
        );
        assert_eq!(t.columns[0].min.as_deref(), Some("-5"));
        assert_eq!(t.columns[0].max.as_deref(), Some("90"));
        assert_eq!(t.columns[0].nulls, Some(2));
        assert_eq!(t.partitions[1].values, ["eu", "us"]);
        assert_eq!(t.load, "pd.read_parquet(\"sales\")");
        let tc = t.time_coverage.unwrap();
        assert_eq!(
            (tc.start.as_str(), tc.end.as_str()),
            ("2023-01-01", "2024-12-31")
        );
    }

    #[test]
    fn a_folder_without_partition_levels_is_no_table_and_mixed_levels_an_error() {
        assert_eq!(
            describe("x", &[parquet("a.parquet", 1, "1", "1")]).unwrap(),
            None
        );
        let e = describe(
            "x",
            &[
                parquet("year=1/a.parquet", 1, "1", "1"),
                parquet("day=2/b.parquet", 1, "1", "1"),
            ],
        )
        .unwrap_err();
        assert!(e.to_string().contains("partition folders differ"), "{e}");
    }
}
