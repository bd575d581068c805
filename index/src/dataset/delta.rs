//! A Delta Lake table from its log: `_delta_log/NNNNNNNNNNNNNNNNNNNN.json`, each a commit
//! of newline-delimited actions, replayed in version order. `metaData` gives the schema
//! (`schemaString`) and `partitionColumns`; `protocol` the reader features; `add` and
//! `remove` the data files of the current version, each `add` with its
//! `partitionValues`, `stats` (`numRecords`, `minValues`, `maxValues`, `nullCount`) and
//! `deletionVector` (its `cardinality`: rows deleted from the file, not counted);
//! `commitInfo` the time of the last commit. A checkpoint (`checkpoint`: classic,
//! multi-part or V2) replaces the commits up to its version, and the JSON commits after
//! it are replayed on top; without `_last_checkpoint`, the newest complete checkpoint
//! in the log's listing is taken. A log whose JSON commits do not start at 0 and that
//! has no checkpoint is a [`DatasetError::CheckpointOnly`].

mod checkpoint;

use super::{
    read_text, DatasetError, Partition, TableColumn, TableDescription, TableFiles, TableKind,
};
use checkpoint::Checkpoint;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};

/// A data file of the current version.
#[derive(Debug, Clone, Default)]
struct AddFile {
    size: u64,
    partition: Vec<(String, String)>,
    rows: Option<u64>,
    /// Rows its deletion vector deletes (`deletionVector.cardinality`).
    deleted: u64,
    min: HashMap<String, String>,
    max: HashMap<String, String>,
    nulls: HashMap<String, u64>,
}

/// The log's replay so far.
#[derive(Debug, Default)]
struct Replay {
    schema: Option<Vec<TableColumn>>,
    partition_columns: Vec<String>,
    /// By path and deletion vector: a file whose vector changes is removed with the old
    /// one and added with the new one, in one commit whose actions have no order.
    files: BTreeMap<(String, String), AddFile>,
    /// The last `protocol` action's `readerFeatures`.
    reader_features: Vec<String>,
    version: Option<u64>,
    written_at: Option<i64>,
}

/// Reader features of a table that deltalake's `DeltaTable.to_pandas()` refuses (as of
/// deltalake 1.6) while its `QueryBuilder` reads the table: such a table's load line
/// goes through the QueryBuilder.
const PANDAS_REFUSES: [&str; 2] = ["deletionVectors", "v2Checkpoint"];

/// Describe the Delta table in the lake-relative folder `rel`, read from `files`.
pub fn describe(files: &dyn TableFiles, rel: &str) -> Result<TableDescription, DatasetError> {
    let log_rel = format!("{rel}/_delta_log");
    let names = files.list(&log_rel).map_err(|source| DatasetError::Io {
        path: log_rel.clone().into(),
        source,
    })?;
    let mut commits: Vec<(u64, String)> = Vec::new();
    for name in &names {
        if let Some(v) = name
            .strip_suffix(".json")
            .filter(|s| s.len() == 20 && s.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|s| s.parse::<u64>().ok())
        {
            commits.push((v, format!("{log_rel}/{name}")));
        }
    }
    commits.sort();
    let checkpoint = checkpoint::last(files, &log_rel, &names)?;
    let after = checkpoint.as_ref().map(|c| c.version);
    let mut texts = Vec::with_capacity(commits.len());
    for (v, p) in commits.iter().filter(|(v, _)| after.is_none_or(|a| *v > a)) {
        texts.push((*v, read_text(files, p)?));
    }
    replay(
        &log_rel,
        checkpoint,
        texts.iter().map(|(v, t)| (*v, t.as_str())),
    )
}

/// Replay `commits` (version, text), in version order; `log` names the log in errors.
pub fn from_commits<'a>(
    log: &str,
    commits: impl IntoIterator<Item = (u64, &'a str)>,
) -> Result<TableDescription, DatasetError> {
    replay(log, None, commits)
}

/// Replay the `checkpoint`'s actions (with its version), then `commits` (version, text)
/// after it, in version order; `log` names the log in errors.
fn replay<'a>(
    log: &str,
    checkpoint: Option<Checkpoint>,
    commits: impl IntoIterator<Item = (u64, &'a str)>,
) -> Result<TableDescription, DatasetError> {
    let mut r = Replay::default();
    if let Some(c) = checkpoint {
        let path = format!("{log}/{}", c.name);
        for action in &c.actions {
            r.apply(&path, action)?;
        }
        r.version = Some(c.version);
    }
    for (version, text) in commits {
        let expected = r.version.map_or(0, |v| v + 1);
        if version != expected {
            return Err(if r.version.is_none() {
                DatasetError::CheckpointOnly {
                    path: log.to_string(),
                    first: version,
                }
            } else {
                DatasetError::malformed(log, format!("commit {expected} is missing"))
            });
        }
        let path = format!("{log}/{version:020}.json");
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let action: Value =
                serde_json::from_str(line).map_err(|source| DatasetError::Json {
                    path: path.clone(),
                    source,
                })?;
            r.apply(&path, &action)?;
        }
        r.version = Some(version);
    }
    let Some(version) = r.version else {
        return Err(DatasetError::malformed(log, "no commits"));
    };
    let Some(mut columns) = r.schema else {
        return Err(DatasetError::malformed(
            log,
            "no metaData action with a schema",
        ));
    };
    for c in columns.iter_mut() {
        c.partition = r.partition_columns.contains(&c.name);
    }
    let mut rows = Some(0u64);
    let mut notes = Vec::new();
    let mut bytes = 0;
    let mut deleted = 0u64;
    for f in r.files.values() {
        bytes += f.size;
        rows = rows.zip(f.rows).map(|(a, b)| a + b);
        deleted += f.deleted;
    }
    // Statistics are written with the file, before any deletion vector deletes from it.
    let rows = rows.map(|n| n.saturating_sub(deleted));
    if rows.is_none() {
        notes.push("rows not known: some data files carry no statistics".to_string());
    }
    if deleted > 0 {
        notes.push(
            "column ranges and nulls may include the rows deleted by deletion vectors: Delta computes a file's statistics when it is written, before deletion"
                .to_string(),
        );
    }
    let refused: Vec<&str> = r
        .reader_features
        .iter()
        .map(String::as_str)
        .filter(|f| PANDAS_REFUSES.contains(f))
        .collect();
    let folder = super::py_str(log.strip_suffix("/_delta_log").unwrap_or(log));
    let load = if !refused.is_empty() {
        notes.push(format!(
            "deltalake's DeltaTable.to_pandas() does not read a table with the reader feature {}; the load line reads it with deltalake.QueryBuilder",
            refused.join(", ")
        ));
        // The SQL name is never the folder's literal, which `render::load_at` moves.
        let name = if folder == "\"t\"" { "u" } else { "t" };
        format!(
            "pyarrow.table(deltalake.QueryBuilder().register(\"{name}\", deltalake.DeltaTable({folder})).execute(\"select * from {name}\")).to_pandas()"
        )
    } else {
        format!("deltalake.DeltaTable({folder}).to_pandas()")
    };
    // Statistics hold for the table only when every file has them for the column.
    for c in columns.iter_mut().filter(|c| !c.partition) {
        let mut nulls = Some(0u64);
        let mut have_range = !r.files.is_empty();
        for f in r.files.values() {
            nulls = nulls.zip(f.nulls.get(&c.name)).map(|(a, b)| a + b);
            have_range &= f.min.contains_key(&c.name) && f.max.contains_key(&c.name);
        }
        c.nulls = nulls.filter(|_| !r.files.is_empty());
        if have_range {
            for f in r.files.values() {
                super::widen(c, f.min.get(&c.name).cloned(), f.max.get(&c.name).cloned());
            }
        }
    }
    let partitions: Vec<Partition> = super::partitions_of(
        r.files
            .values()
            .flat_map(|f| f.partition.iter().map(|(k, v)| (k.as_str(), v.as_str()))),
    );
    Ok(TableDescription {
        kind: TableKind::Delta,
        time_coverage: super::time_coverage(&partitions, &columns),
        columns,
        partitions,
        rows,
        deleted_rows: (deleted > 0).then_some(deleted),
        data_files: r.files.len() as u64,
        bytes,
        version: Some(version.to_string()),
        written_at: r.written_at.and_then(super::at_ms),
        load,
        notes,
    })
}

impl Replay {
    fn apply(&mut self, path: &str, action: &Value) -> Result<(), DatasetError> {
        if let Some(meta) = action.get("metaData") {
            let schema = meta
                .get("schemaString")
                .and_then(Value::as_str)
                .ok_or_else(|| DatasetError::malformed(path, "metaData without schemaString"))?;
            let schema: Value =
                serde_json::from_str(schema).map_err(|source| DatasetError::Json {
                    path: format!("{path} (schemaString)"),
                    source,
                })?;
            self.schema = Some(columns_of(path, &schema)?);
            self.partition_columns = strings(meta.get("partitionColumns"));
        } else if let Some(add) = action.get("add") {
            let file_path = add
                .get("path")
                .and_then(Value::as_str)
                .ok_or_else(|| DatasetError::malformed(path, "add without path"))?;
            self.files.insert(
                (file_path.to_string(), vector_id(add)),
                add_file(path, add)?,
            );
        } else if let Some(remove) = action.get("remove") {
            if let Some(p) = remove.get("path").and_then(Value::as_str) {
                self.files.remove(&(p.to_string(), vector_id(remove)));
            }
        } else if let Some(protocol) = action.get("protocol") {
            self.reader_features = strings(protocol.get("readerFeatures"));
        } else if let Some(info) = action.get("commitInfo") {
            if let Some(t) = info.get("timestamp").and_then(Value::as_i64) {
                self.written_at = Some(t);
            }
        }
        Ok(())
    }
}

/// The unique id of an `add` or `remove` action's deletion vector (the protocol's
/// `storageType` + `pathOrInlineDv` + `@offset`); empty for a file without one.
fn vector_id(action: &Value) -> String {
    let Some(dv) = action.get("deletionVector").filter(|v| v.is_object()) else {
        return String::new();
    };
    let text = |k: &str| dv.get(k).and_then(text_of).unwrap_or_default();
    let mut id = text("storageType") + &text("pathOrInlineDv");
    if let Some(o) = dv.get("offset").and_then(text_of) {
        id = format!("{id}@{o}");
    }
    id
}

/// The strings of a JSON array (none when it is absent).
fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// A statistics value as text: strings as they are, numbers and the rest as JSON.
fn text_of(v: &Value) -> Option<String> {
    match v {
        Value::Null | Value::Object(_) | Value::Array(_) => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

fn add_file(path: &str, add: &Value) -> Result<AddFile, DatasetError> {
    let mut f = AddFile {
        size: add.get("size").and_then(Value::as_u64).unwrap_or(0),
        deleted: add
            .pointer("/deletionVector/cardinality")
            .and_then(Value::as_u64)
            .unwrap_or(0),
        ..Default::default()
    };
    if let Some(pv) = add.get("partitionValues").and_then(Value::as_object) {
        f.partition = pv
            .iter()
            .map(|(k, v)| (k.clone(), text_of(v).unwrap_or_else(|| "null".into())))
            .collect();
    }
    if let Some(stats) = add.get("stats").and_then(Value::as_str) {
        let stats: Value = serde_json::from_str(stats).map_err(|source| DatasetError::Json {
            path: format!("{path} (stats)"),
            source,
        })?;
        f.rows = stats.get("numRecords").and_then(Value::as_u64);
        let map = |key: &str| -> HashMap<String, String> {
            stats
                .get(key)
                .and_then(Value::as_object)
                .map(|o| {
                    o.iter()
                        .filter_map(|(k, v)| text_of(v).map(|t| (k.clone(), t)))
                        .collect()
                })
                .unwrap_or_default()
        };
        f.min = map("minValues");
        f.max = map("maxValues");
        f.nulls = stats
            .get("nullCount")
            .and_then(Value::as_object)
            .map(|o| {
                o.iter()
                    .filter_map(|(k, v)| v.as_u64().map(|n| (k.clone(), n)))
                    .collect()
            })
            .unwrap_or_default();
    }
    Ok(f)
}

/// The top-level fields of a Delta schema (`{"type":"struct","fields":[…]}`).
fn columns_of(path: &str, schema: &Value) -> Result<Vec<TableColumn>, DatasetError> {
    let fields = schema
        .get("fields")
        .and_then(Value::as_array)
        .ok_or_else(|| DatasetError::malformed(path, "schemaString has no fields"))?;
    fields
        .iter()
        .map(|f| {
            let name = f
                .get("name")
                .and_then(Value::as_str)
                .ok_or_else(|| DatasetError::malformed(path, "a schema field has no name"))?;
            Ok(TableColumn {
                name: name.to_string(),
                kind: type_name(f.get("type")),
                partition: false,
                min: None,
                max: None,
                nulls: None,
            })
        })
        .collect()
}

/// A Delta or Iceberg type: a primitive's name, a nested type's kind (`struct`, `array`).
pub(super) fn type_name(t: Option<&Value>) -> String {
    match t {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Object(o)) => o
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("unknown")
            .to_string(),
        _ => "unknown".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const META: &str = r#"{"metaData":{"id":"x","format":{"provider":"parquet","options":{}},"schemaString":"{\"type\":\"struct\",\"fields\":[{\"name\":\"id\",\"type\":\"long\",\"nullable\":true,\"metadata\":{}},{\"name\":\"day\",\"type\":\"date\",\"nullable\":true,\"metadata\":{}},{\"name\":\"region\",\"type\":\"string\",\"nullable\":true,\"metadata\":{}}]}","partitionColumns":["region"],"configuration":{}}}"#;

    fn add(path: &str, region: &str, rows: u64, min: i64, max: i64, day: &str) -> String {
        let stats = format!(
            r#"{{"numRecords":{rows},"minValues":{{"id":{min},"day":"{day}"}},"maxValues":{{"id":{max},"day":"{day}"}},"nullCount":{{"id":0,"day":1}}}}"#
        );
        serde_json::json!({"add": {"path": path, "partitionValues": {"region": region},
            "size": 100, "modificationTime": 1, "dataChange": true, "stats": stats}})
        .to_string()
    }

    #[test]
    fn the_current_version_counts_only_live_files() {
        let v0 = format!(
            "{}\n{META}\n{}\n",
            r#"{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}"#,
            add("region=eu/a.parquet", "eu", 10, 1, 10, "2024-01-01")
        );
        let v1 = add("region=us/b.parquet", "us", 5, 11, 15, "2024-02-01");
        // Version 2 overwrites: a tombstone for both, one new file.
        let v2 = format!(
            "{}\n{}\n{}\n{}",
            r#"{"remove":{"path":"region=eu/a.parquet","dataChange":true}}"#,
            r#"{"remove":{"path":"region=us/b.parquet","dataChange":true}}"#,
            add("region=eu/c.parquet", "eu", 7, -3, 4, "2023-12-31"),
            r#"{"commitInfo":{"timestamp":1700000000000,"operation":"WRITE"}}"#
        );
        let t = from_commits("s/_delta_log", [(0, v0.as_str()), (1, &v1), (2, &v2)]).unwrap();
        assert_eq!(t.version.as_deref(), Some("2"));
        assert_eq!((t.rows, t.data_files, t.bytes), (Some(7), 1, 100));
        assert_eq!(t.partitions[0].values, ["eu"]);
        let names: Vec<&str> = t.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["id", "day", "region"]);
        assert!(t.columns[2].partition);
        assert_eq!(t.columns[0].min.as_deref(), Some("-3"));
        assert_eq!(t.columns[0].max.as_deref(), Some("4"));
        assert_eq!(t.columns[1].nulls, Some(1));
        assert_eq!(t.written_at.as_deref(), Some("2023-11-14T22:13:20Z"));
        assert_eq!(t.time_coverage.unwrap().start, "2023-12-31");
        // Before the overwrite: both files, their sum.
        let t = from_commits("s/_delta_log", [(0, v0.as_str()), (1, &v1)]).unwrap();
        assert_eq!((t.rows, t.data_files), (Some(15), 2));
        assert_eq!(t.partitions[0].values, ["eu", "us"]);
    }

    #[test]
    fn a_broken_log_is_an_error_not_a_panic() {
        let e = from_commits("s/_delta_log", [(0, "{not json")]).unwrap_err();
        assert!(matches!(e, DatasetError::Json { .. }), "{e}");
        let e = from_commits("s/_delta_log", [(3, META)]).unwrap_err();
        assert!(
            matches!(e, DatasetError::CheckpointOnly { first: 3, .. }),
            "{e}"
        );
        let e = from_commits("s/_delta_log", [(0, META), (2, META)]).unwrap_err();
        assert!(e.to_string().contains("commit 1 is missing"), "{e}");
        let e = from_commits("s/_delta_log", [(0, r#"{"add":{"path":"a"}}"#)]).unwrap_err();
        assert!(e.to_string().contains("no metaData"), "{e}");
        let e = from_commits("s/_delta_log", []).unwrap_err();
        assert!(e.to_string().contains("no commits"), "{e}");
    }

    fn with_vector(add: &str, dv: serde_json::Value) -> String {
        let mut v: Value = serde_json::from_str(add).unwrap();
        v["add"]["deletionVector"] = dv;
        v.to_string()
    }

    #[test]
    fn deletion_vectors_take_their_rows_off_the_count() {
        let protocol = r#"{"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["deletionVectors"],"writerFeatures":["deletionVectors"]}}"#;
        let a = add("region=eu/a.parquet", "eu", 10, 1, 10, "2024-01-01");
        let b = add("region=us/b.parquet", "us", 5, 11, 15, "2024-02-01");
        let v0 = format!("{protocol}\n{META}\n{a}\n{b}\n");
        let dv = |id: &str, n: u64| serde_json::json!({"storageType": "u", "pathOrInlineDv": id, "offset": 1, "sizeInBytes": 40, "cardinality": n});
        // A DELETE: a.parquet gets a vector of 3 rows; the add comes before its remove,
        // as a commit's actions have no order.
        let v1 = format!(
            "{}\n{}",
            with_vector(&a, dv("ab^-aqEH.-t@S}K{vb[*k^", 3)),
            r#"{"remove":{"path":"region=eu/a.parquet","dataChange":true}}"#
        );
        // A second DELETE on the same file: its vector grows to 4 rows.
        let v2 = format!(
            "{}\n{}",
            with_vector(&a, dv("zz^-aqEH.-t@S}K{vb[*k^", 4)),
            serde_json::json!({"remove": {"path": "region=eu/a.parquet", "dataChange": true,
                "deletionVector": dv("ab^-aqEH.-t@S}K{vb[*k^", 3)}})
        );
        let t = from_commits("s/_delta_log", [(0, v0.as_str()), (1, &v1), (2, &v2)]).unwrap();
        assert_eq!(
            (t.rows, t.deleted_rows, t.data_files),
            (Some(11), Some(4), 2)
        );
        assert!(
            t.notes
                .iter()
                .any(|n| n.contains("may include the rows deleted by deletion vectors")),
            "{:?}",
            t.notes
        );
        assert!(
            t.load
                .contains("deltalake.QueryBuilder().register(\"t\", deltalake.DeltaTable(\"s\"))"),
            "{}",
            t.load
        );
        // Before any vector: every row counts, and the table reads with to_pandas().
        let plain = format!("{META}\n{a}\n{b}\n");
        let t = from_commits("s/_delta_log", [(0, plain.as_str())]).unwrap();
        assert_eq!((t.rows, t.deleted_rows), (Some(15), None));
        assert_eq!(t.load, "deltalake.DeltaTable(\"s\").to_pandas()");
    }

    #[test]
    fn checkpoints_are_found_by_their_kind() {
        use crate::dataset::MemFiles;
        let a = add("region=eu/a.parquet", "eu", 10, 1, 10, "2024-01-01");
        let log = |files: &[(&str, String)]| {
            MemFiles(
                files
                    .iter()
                    .map(|(n, t)| (format!("s/_delta_log/{n}"), t.clone().into_bytes()))
                    .collect(),
            )
        };
        let uuid = "00000000000000000001.checkpoint.3a0d65cd-4056-49b8-937b-95f9e3ee90e5.json";
        let v2 = format!("{{\"checkpointMetadata\":{{\"version\":1}}}}\n{META}\n{a}\n");
        let next = add("region=us/b.parquet", "us", 5, 11, 15, "2024-02-01");
        // A V2 checkpoint named by its uuid, found by listing, and by `v2Checkpoint`.
        for last in [
            r#"{"version":1}"#.to_string(),
            format!(r#"{{"version":1,"v2Checkpoint":{{"path":"{uuid}"}}}}"#),
        ] {
            let files = log(&[
                ("_last_checkpoint", last),
                (uuid, v2.clone()),
                ("00000000000000000002.json", next.clone()),
            ]);
            let t = describe(&files, "s").unwrap();
            assert_eq!(
                (t.version.as_deref(), t.rows, t.data_files),
                (Some("2"), Some(15), 2)
            );
        }
        // A multi-part checkpoint with a part missing names the part.
        let files = log(&[("_last_checkpoint", r#"{"version":1,"parts":3}"#.into())]);
        let e = describe(&files, "s").unwrap_err();
        assert!(
            e.to_string()
                .contains("00000000000000000001.checkpoint.0000000001.0000000003.parquet"),
            "{e}"
        );
        let files = log(&[(
            "_last_checkpoint",
            r#"{"version":1,"parts":99999999}"#.into(),
        )]);
        let e = describe(&files, "s").unwrap_err();
        assert!(
            e.to_string().contains("more than the 10000 lakestar reads"),
            "{e}"
        );
        // A checkpoint that is not Parquet is that table's error.
        let files = log(&[
            ("_last_checkpoint", r#"{"version":1}"#.into()),
            (
                "00000000000000000001.checkpoint.parquet",
                "PAR1 nonsense PAR1".into(),
            ),
        ]);
        let e = describe(&files, "s").unwrap_err();
        assert!(matches!(e, DatasetError::Unreadable { .. }), "{e}");
    }
}
