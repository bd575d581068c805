//! An Iceberg table from its current metadata file, `metadata/vN.metadata.json` (named by
//! `metadata/version-hint.text` when present) or else the highest-numbered
//! `metadata/NNNNN-….metadata.json` a catalog wrote: the current schema, the default
//! partition spec, the current snapshot (`current-snapshot-id`, its `timestamp-ms`) and
//! its `summary` (`total-records`, `total-data-files`, `total-files-size`). Manifests
//! (Avro) are not read: partition values come from the data files' `key=value` folders,
//! and column ranges from the members' Parquet footers only when the data files on disk
//! are exactly the snapshot's (their count equals `total-data-files`).

use super::{
    read_text, DatasetError, Member, TableColumn, TableDescription, TableFiles, TableKind,
};
use serde_json::Value;

/// The current metadata file of the Iceberg table in the lake-relative folder `rel`,
/// relative to that folder.
pub fn current_metadata(files: &dyn TableFiles, rel: &str) -> Result<String, DatasetError> {
    let meta = format!("{rel}/metadata");
    let names = files.list(&meta).map_err(|source| DatasetError::Io {
        path: meta.clone().into(),
        source,
    })?;
    if let Ok(hint) = read_text(files, &format!("{meta}/version-hint.text")) {
        let name = format!("v{}.metadata.json", hint.trim());
        if names.contains(&name) {
            return Ok(format!("metadata/{name}"));
        }
    }
    let mut best: Option<(u64, String)> = None;
    for name in names {
        let Some(n) = metadata_version(&name) else {
            continue;
        };
        if best.as_ref().is_none_or(|(b, bn)| (n, &name) > (*b, bn)) {
            best = Some((n, name));
        }
    }
    best.map(|(_, name)| format!("metadata/{name}"))
        .ok_or_else(|| DatasetError::malformed(&meta, "no *.metadata.json"))
}

/// The version of an Iceberg metadata file's name: `v3.metadata.json` (a file-system
/// table) or `00002-<uuid>.metadata.json` (a catalog's); None for any other name, so a
/// folder of `photo.metadata.json` sidecars is not taken for a table.
pub fn metadata_version(name: &str) -> Option<u64> {
    let stem = name.strip_suffix(".metadata.json")?;
    let digits = stem.strip_prefix('v').unwrap_or(stem);
    let end = digits
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(digits.len());
    let rest = &digits[..end];
    let tail = &digits[end..];
    // `vN` ends at the digits; a catalog's `NNNNN-` is followed by its uuid.
    let shaped = if stem.starts_with('v') {
        tail.is_empty()
    } else {
        tail.starts_with('-') && tail.len() > 1
    };
    (!rest.is_empty() && shaped)
        .then(|| rest.parse().ok())
        .flatten()
}

/// Describe the Iceberg table in the lake-relative folder `rel`, read from `files`,
/// whose files the index holds as `members`.
pub fn describe(
    files: &dyn TableFiles,
    rel: &str,
    members: &[Member],
) -> Result<TableDescription, DatasetError> {
    let file = current_metadata(files, rel)?;
    let path = format!("{rel}/{file}");
    let text = read_text(files, &path)?;
    from_metadata(&path, &text, members)
}

/// The table of the metadata file at lake-relative `path`, holding `text`.
pub fn from_metadata(
    path: &str,
    text: &str,
    members: &[Member],
) -> Result<TableDescription, DatasetError> {
    let meta: Value = serde_json::from_str(text).map_err(|source| DatasetError::Json {
        path: path.to_string(),
        source,
    })?;
    let schema =
        current_schema(&meta).ok_or_else(|| DatasetError::malformed(path, "no current schema"))?;
    let fields = schema
        .get("fields")
        .and_then(Value::as_array)
        .ok_or_else(|| DatasetError::malformed(path, "the schema has no fields"))?;
    let mut columns = Vec::new();
    let mut ids = Vec::new();
    for f in fields {
        let name = f
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| DatasetError::malformed(path, "a schema field has no name"))?;
        ids.push(f.get("id").and_then(Value::as_i64));
        columns.push(TableColumn {
            name: name.to_string(),
            kind: super::delta::type_name(f.get("type")),
            partition: false,
            min: None,
            max: None,
            nulls: None,
        });
    }
    // The default spec's fields: each names its source column and transform.
    let mut part_names = Vec::new();
    if let Some(spec) = default_spec(&meta) {
        for pf in spec
            .get("fields")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let source = pf.get("source-id").and_then(Value::as_i64);
            if let Some(i) = ids.iter().position(|id| *id == source && source.is_some()) {
                columns[i].partition = true;
            }
            if let Some(n) = pf.get("name").and_then(Value::as_str) {
                part_names.push(n.to_string());
            }
        }
    }
    let mut notes = Vec::new();
    let snapshot = current_snapshot(&meta);
    let summary = snapshot.and_then(|s| s.get("summary"));
    let number = |key: &str| -> Option<u64> {
        summary.and_then(|s| s.get(key)).and_then(|v| match v {
            Value::String(s) => s.parse().ok(),
            other => other.as_u64(),
        })
    };
    let (rows, data_files, bytes) = match snapshot {
        None => (Some(0), 0, 0),
        Some(_) => (
            number("total-records"),
            number("total-data-files").unwrap_or(0),
            number("total-files-size").unwrap_or(0),
        ),
    };
    if rows.is_none() {
        notes.push("rows not known: the snapshot's summary has no total-records".to_string());
    }
    // Data files on disk: partition values from their folders, and (when they are the
    // snapshot's files exactly) column ranges from their footers.
    let data: Vec<&Member> = members
        .iter()
        .filter(|m| m.path.starts_with("data/") && m.path.ends_with(".parquet"))
        .collect();
    let partitions = super::partitions_of(data.iter().flat_map(|m| {
        m.path
            .split('/')
            .filter_map(super::partition_level)
            .filter(|(k, _)| part_names.iter().any(|n| n == k))
    }));
    if !data.is_empty() && data.len() as u64 == data_files {
        super::hive::merge_ranges(&mut columns, data.iter().copied());
    } else {
        notes.push(
            "column ranges not shown: the manifests are not read and the data folder holds files of other snapshots"
                .to_string(),
        );
    }
    Ok(TableDescription {
        kind: TableKind::Iceberg,
        time_coverage: super::time_coverage(&partitions, &columns),
        columns,
        partitions,
        rows,
        data_files,
        bytes,
        version: snapshot
            .and_then(|s| s.get("snapshot-id"))
            .map(|v| v.to_string()),
        written_at: snapshot
            .and_then(|s| s.get("timestamp-ms"))
            .and_then(Value::as_i64)
            .and_then(super::at_ms),
        load: format!(
            "pyiceberg.table.StaticTable.from_metadata({}).scan().to_pandas()",
            super::py_str(path)
        ),
        notes,
    })
}

fn current_schema(meta: &Value) -> Option<&Value> {
    let id = meta.get("current-schema-id").and_then(Value::as_i64);
    match (meta.get("schemas").and_then(Value::as_array), id) {
        (Some(all), Some(id)) => all
            .iter()
            .find(|s| s.get("schema-id").and_then(Value::as_i64) == Some(id)),
        // Format version 1 may keep only `schema`.
        _ => meta.get("schema"),
    }
}

fn default_spec(meta: &Value) -> Option<&Value> {
    let id = meta.get("default-spec-id").and_then(Value::as_i64);
    match (meta.get("partition-specs").and_then(Value::as_array), id) {
        (Some(all), Some(id)) => all
            .iter()
            .find(|s| s.get("spec-id").and_then(Value::as_i64) == Some(id)),
        _ => None,
    }
}

fn current_snapshot(meta: &Value) -> Option<&Value> {
    let id = meta.get("current-snapshot-id").filter(|v| !v.is_null())?;
    let id = id.as_i64()?;
    if id < 0 {
        return None;
    }
    meta.get("snapshots")?
        .as_array()?
        .iter()
        .find(|s| s.get("snapshot-id").and_then(Value::as_i64) == Some(id))
}

#[cfg(test)]
mod tests {
    use super::*;

    const META: &str = r#"{
      "format-version": 2, "table-uuid": "u", "location": "file:///lake/ice",
      "current-schema-id": 1,
      "schemas": [
        {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "old", "required": false, "type": "string"}]},
        {"type": "struct", "schema-id": 1, "fields": [
          {"id": 1, "name": "city", "required": false, "type": "string"},
          {"id": 2, "name": "day", "required": false, "type": "date"},
          {"id": 3, "name": "amount", "required": false, "type": {"type": "decimal(10,2)"}}]}],
      "default-spec-id": 0,
      "partition-specs": [{"spec-id": 0, "fields": [{"source-id": 1, "field-id": 1000, "transform": "identity", "name": "city"}]}],
      "current-snapshot-id": 22,
      "snapshots": [
        {"snapshot-id": 11, "timestamp-ms": 1700000000000, "summary": {"operation": "append", "total-records": "3", "total-data-files": "1"}},
        {"snapshot-id": 22, "parent-snapshot-id": 11, "timestamp-ms": 1700000100000,
         "summary": {"operation": "append", "total-records": "7", "total-data-files": "3", "total-files-size": "4096"}}]
    }"#;

    fn member(path: &str) -> Member {
        Member {
            path: path.into(),
            size: 10,
            description: None,
        }
    }

    #[test]
    fn only_iceberg_shaped_names_are_metadata_files() {
        assert_eq!(metadata_version("v3.metadata.json"), Some(3));
        assert_eq!(metadata_version("00002-1f3e-ab.metadata.json"), Some(2));
        assert_eq!(metadata_version("img0.metadata.json"), None);
        assert_eq!(metadata_version("v3x.metadata.json"), None);
        assert_eq!(metadata_version("00002.metadata.json"), None);
        assert_eq!(metadata_version("v3.json"), None);
    }

    #[test]
    fn the_current_snapshot_and_schema_describe_the_table() {
        let members = [
            member("data/city=Oslo/a.parquet"),
            member("data/city=Bergen/b.parquet"),
            member("data/city=Oslo/c.parquet"),
            member("metadata/snap-22.avro"),
        ];
        let t = from_metadata("ice/metadata/00002-x.metadata.json", META, &members).unwrap();
        assert_eq!(t.version.as_deref(), Some("22"));
        assert_eq!((t.rows, t.data_files, t.bytes), (Some(7), 3, 4096));
        assert_eq!(t.written_at.as_deref(), Some("2023-11-14T22:15:00Z"));
        assert_eq!(
            t.schema(),
            [
                ("city", "string", true),
                ("day", "date", false),
                ("amount", "decimal(10,2)", false)
            ]
        );
        assert_eq!(t.partitions[0].values, ["Bergen", "Oslo"]);
        assert!(
            t.load.contains("\"ice/metadata/00002-x.metadata.json\""),
            "{}",
            t.load
        );
    }

    #[test]
    fn malformed_metadata_is_an_error() {
        assert!(matches!(
            from_metadata("m.json", "[1,", &[]),
            Err(DatasetError::Json { .. })
        ));
        let e =
            from_metadata("m.json", r#"{"current-schema-id": 5, "schemas": []}"#, &[]).unwrap_err();
        assert!(e.to_string().contains("no current schema"), "{e}");
        // No snapshot yet: an empty table.
        let t = from_metadata(
            "m.json",
            r#"{"current-schema-id": 0, "schemas": [{"schema-id": 0, "fields": []}], "current-snapshot-id": -1}"#,
            &[],
        )
        .unwrap();
        assert_eq!((t.rows, t.data_files, t.version), (Some(0), 0, None));
    }
}
