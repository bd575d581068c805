//! An Iceberg table from its current metadata file, `metadata/vN.metadata.json` (named by
//! `metadata/version-hint.text` when present) or else the highest-numbered
//! `metadata/NNNNN-….metadata.json` a catalog wrote: the current schema, the default
//! partition spec, the current snapshot (`current-snapshot-id`, its `timestamp-ms`) and
//! its manifests (`manifest`): the live data files, their rows, bytes, partition values
//! and per-column bounds and null counts. Files of other snapshots that still lie in
//! `data/` count for nothing, as the manifests do not name them.

mod manifest;
mod value;

use super::{read_text, DatasetError, TableColumn, TableDescription, TableFiles, TableKind};
use serde_json::Value;
use std::collections::HashMap;

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

/// Describe the Iceberg table in the lake-relative folder `rel`, read from `files`.
pub fn describe(files: &dyn TableFiles, rel: &str) -> Result<TableDescription, DatasetError> {
    let file = current_metadata(files, rel)?;
    let path = format!("{rel}/{file}");
    let text = read_text(files, &path)?;
    from_metadata(files, rel, &path, &text)
}

/// The table in the lake-relative folder `rel` of the metadata file at lake-relative
/// `path`, holding `text`; its manifests are read from `files`.
pub fn from_metadata(
    files: &dyn TableFiles,
    rel: &str,
    path: &str,
    text: &str,
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
    let specs = specs(&meta, &ids, &columns);
    // The default spec's fields name the partition columns.
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
        }
    }
    let mut notes = Vec::new();
    let snapshot = current_snapshot(&meta);
    let location = meta.get("location").and_then(Value::as_str).unwrap_or("");
    let table = manifest::Table {
        files,
        rel,
        location,
        specs: &specs,
    };
    let live = match snapshot {
        None => Some(manifest::Live::default()),
        Some(s) => manifest::live_files(&table, path, s)?,
    };
    let (rows, data_files, bytes, partitions) = match &live {
        Some(live) => {
            column_stats(&mut columns, &ids, live);
            if live.delete_files > 0 {
                notes.push(format!(
                    "{} delete files (merge-on-read) record {} deleted rows, not subtracted: rows, ranges and nulls count the data files as written",
                    live.delete_files, live.deletes
                ));
            }
            let partitions = super::partitions_of(
                live.data
                    .iter()
                    .flat_map(|f| f.partition.iter().map(|(k, v)| (k.as_str(), v.as_str()))),
            );
            (
                Some(live.data.iter().map(|f| f.records).sum()),
                live.data.len() as u64,
                live.data.iter().map(|f| f.size).sum(),
                partitions,
            )
        }
        None => {
            notes.push(format!(
                "manifests not read (more than {} or {} of them): rows and files from the snapshot's summary, no partition values or column ranges",
                manifest::MAX_MANIFESTS,
                crate::analyze::human_size(manifest::MAX_MANIFEST_BYTES)
            ));
            let summary = snapshot.and_then(|s| s.get("summary"));
            let number = |key: &str| -> Option<u64> {
                summary.and_then(|s| s.get(key)).and_then(|v| match v {
                    Value::String(s) => s.parse().ok(),
                    other => other.as_u64(),
                })
            };
            if number("total-records").is_none() {
                notes.push("rows not known: the snapshot's summary has no total-records".into());
            }
            (
                number("total-records"),
                number("total-data-files").unwrap_or(0),
                number("total-files-size").unwrap_or(0),
                Vec::new(),
            )
        }
    };
    Ok(TableDescription {
        kind: TableKind::Iceberg,
        time_coverage: super::time_coverage(&partitions, &columns),
        columns,
        partitions,
        rows,
        deleted_rows: None,
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

/// Each column's range and nulls over the live data files, from their manifest entries:
/// shown only when every file has them for the column (a file whose values are all null
/// has no bounds and needs none).
fn column_stats(columns: &mut [TableColumn], ids: &[Option<i64>], live: &manifest::Live) {
    if live.data.is_empty() {
        return;
    }
    for (c, id) in columns.iter_mut().zip(ids) {
        let Some(id) = id else { continue };
        let mut nulls = Some(0u64);
        let mut bounds = Some(Vec::new());
        for f in &live.data {
            let n = f.nulls.get(id).copied();
            nulls = nulls.zip(n).map(|(a, b)| a + b);
            let decode = |b: Option<&Vec<u8>>| b.and_then(|b| value::bound(&c.kind, b));
            match (decode(f.lower.get(id)), decode(f.upper.get(id))) {
                (Some(lo), Some(hi)) => {
                    if let Some(b) = bounds.as_mut() {
                        b.push((lo, hi));
                    }
                }
                _ if n == Some(f.records) => {}
                _ => bounds = None,
            }
        }
        c.nulls = nulls;
        for (lo, hi) in bounds.into_iter().flatten() {
            super::widen(c, Some(lo), Some(hi));
        }
    }
}

/// The table's partition specs by id, each field with the type of its source column in
/// the current schema (`ids` and `columns`); format version 1's lone `partition-spec`
/// is spec 0.
fn specs(
    meta: &Value,
    ids: &[Option<i64>],
    columns: &[TableColumn],
) -> HashMap<i64, Vec<manifest::SpecField>> {
    let fields_of = |fields: &Value| -> Vec<manifest::SpecField> {
        fields
            .as_array()
            .into_iter()
            .flatten()
            .map(|pf| {
                let source = pf.get("source-id").and_then(Value::as_i64);
                let kind = ids
                    .iter()
                    .position(|id| id.is_some() && *id == source)
                    .map_or(String::new(), |i| columns[i].kind.clone());
                manifest::SpecField {
                    name: pf
                        .get("name")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                    transform: pf
                        .get("transform")
                        .and_then(Value::as_str)
                        .unwrap_or("identity")
                        .to_string(),
                    source: kind,
                }
            })
            .collect()
    };
    let mut out = HashMap::new();
    if let Some(all) = meta.get("partition-specs").and_then(Value::as_array) {
        for spec in all {
            if let (Some(id), Some(fields)) = (
                spec.get("spec-id").and_then(Value::as_i64),
                spec.get("fields"),
            ) {
                out.insert(id, fields_of(fields));
            }
        }
    } else if let Some(fields) = meta.get("partition-spec") {
        out.insert(0, fields_of(fields));
    }
    out
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
    use super::manifest::tests::{manifest, manifest_list, Entry, MemFiles};
    use super::*;

    const META: &str = r#"{
      "format-version": 2, "table-uuid": "u", "location": "file:///lake/ice",
      "current-schema-id": 1,
      "schemas": [
        {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "old", "required": false, "type": "string"}]},
        {"type": "struct", "schema-id": 1, "fields": [
          {"id": 1, "name": "city", "required": false, "type": "string"},
          {"id": 2, "name": "visits", "required": false, "type": "long"},
          {"id": 3, "name": "amount", "required": false, "type": {"type": "decimal(10,2)"}}]}],
      "default-spec-id": 0,
      "partition-specs": [{"spec-id": 0, "fields": [{"source-id": 1, "field-id": 1000, "transform": "identity", "name": "city"}]}],
      "current-snapshot-id": 22,
      "snapshots": [
        {"snapshot-id": 11, "timestamp-ms": 1700000000000, "manifest-list": "file:///lake/ice/metadata/snap-11.avro",
         "summary": {"operation": "append", "total-records": "3", "total-data-files": "1"}},
        {"snapshot-id": 22, "parent-snapshot-id": 11, "timestamp-ms": 1700000100000,
         "manifest-list": "file:///lake/ice/metadata/snap-22.avro",
         "summary": {"operation": "overwrite", "total-records": "99", "total-data-files": "99", "total-files-size": "4096"}}]
    }"#;

    fn entry(status: i32, city: &'static str, rows: i64, bounds: Option<(i64, i64)>) -> Entry {
        Entry {
            status,
            content: 0,
            city: Some(city),
            rows,
            bounds,
            nulls: 1,
        }
    }

    /// Snapshot 22's manifests: three live files, one deleted (its rows and its wider
    /// range count for nothing), one delete file.
    fn files() -> MemFiles {
        MemFiles(HashMap::from([
            (
                "ice/metadata/snap-22.avro".to_string(),
                manifest_list(&[
                    ("file:///lake/ice/metadata/m-a.avro", 0),
                    ("file:///lake/ice/metadata/m-d.avro", 1),
                ]),
            ),
            (
                "ice/metadata/m-a.avro".to_string(),
                manifest(&[
                    entry(1, "Oslo", 4, Some((3, 9))),
                    entry(2, "Alta", 50, Some((-100, 100))),
                    entry(0, "Bergen", 2, Some((5, 20))),
                    // Every value null: no bounds, and none needed.
                    entry(1, "Oslo", 1, None),
                ]),
            ),
            (
                "ice/metadata/m-d.avro".to_string(),
                manifest(&[Entry {
                    content: 1,
                    ..entry(1, "Oslo", 2, None)
                }]),
            ),
        ]))
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
    fn the_current_snapshots_manifests_describe_the_table() {
        let t = from_metadata(&files(), "ice", "ice/metadata/00002-x.metadata.json", META).unwrap();
        assert_eq!(t.version.as_deref(), Some("22"));
        // Rows, files and bytes are the live entries', not the summary's.
        assert_eq!((t.rows, t.data_files, t.bytes), (Some(7), 3, 3000));
        assert_eq!(t.written_at.as_deref(), Some("2023-11-14T22:15:00Z"));
        assert_eq!(
            t.schema(),
            [
                ("city", "string", true),
                ("visits", "long", false),
                ("amount", "decimal(10,2)", false)
            ]
        );
        assert_eq!(t.partitions[0].values, ["Bergen", "Oslo"]);
        let visits = &t.columns[1];
        assert_eq!(
            (visits.min.as_deref(), visits.max.as_deref()),
            (Some("3"), Some("20"))
        );
        assert_eq!(visits.nulls, Some(3));
        // Column 3 has no bounds in any manifest.
        assert_eq!(t.columns[2].min, None);
        assert!(
            t.notes[0].contains("1 delete files (merge-on-read) record 2 deleted rows"),
            "{:?}",
            t.notes
        );
        assert!(
            t.load.contains("\"ice/metadata/00002-x.metadata.json\""),
            "{}",
            t.load
        );
    }

    #[test]
    fn malformed_metadata_or_manifests_are_an_error() {
        let none = MemFiles::default();
        assert!(matches!(
            from_metadata(&none, "ice", "m.json", "[1,"),
            Err(DatasetError::Json { .. })
        ));
        let e = from_metadata(
            &none,
            "ice",
            "m.json",
            r#"{"current-schema-id": 5, "schemas": []}"#,
        )
        .unwrap_err();
        assert!(e.to_string().contains("no current schema"), "{e}");
        // No snapshot yet: an empty table.
        let t = from_metadata(
            &none,
            "ice",
            "m.json",
            r#"{"current-schema-id": 0, "schemas": [{"schema-id": 0, "fields": []}], "current-snapshot-id": -1}"#,
        )
        .unwrap();
        assert_eq!((t.rows, t.data_files, t.version), (Some(0), 0, None));
        // The manifest list is missing: that table's error, naming it.
        let e = from_metadata(&none, "ice", "m.json", META).unwrap_err();
        assert!(e.to_string().contains("ice/metadata/snap-22.avro"), "{e}");
        // A manifest is not Avro.
        let mut broken = files();
        broken
            .0
            .insert("ice/metadata/m-a.avro".into(), b"Obj\x01garbage".to_vec());
        let e = from_metadata(&broken, "ice", "m.json", META).unwrap_err();
        assert!(matches!(e, DatasetError::Unreadable { .. }), "{e}");
        assert!(e.to_string().contains("ice/metadata/m-a.avro"), "{e}");
    }
}
