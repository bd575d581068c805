//! The live files of an Iceberg snapshot, from its manifest list and manifests (Avro
//! object container files, read with `apache-avro`): each file's record count, size,
//! partition values and per-column lower and upper bounds and null counts. An entry whose
//! status is 2 (deleted) is no longer live; delete files (merge-on-read) are counted
//! apart, as their records are deletes rather than rows.
//!
//! Manifests are named by absolute URIs (`file:///…`, `s3://…`); they are read through
//! [`TableFiles`] at the same place relative to the table's folder as relative to its
//! `location`, so a table copied elsewhere (or read from a bucket) is still read.

use super::value;
use crate::dataset::{guarded, DatasetError, TableFiles};
use apache_avro::types::Value as Avro;
use std::collections::HashMap;

/// Manifests read per snapshot at most, and their bytes (the lengths the manifest list
/// gives): a table past either is described from its snapshot summary instead, so that a
/// huge table costs no more than a bounded number of reads.
pub(crate) const MAX_MANIFESTS: usize = 10_000;
pub(crate) const MAX_MANIFEST_BYTES: u64 = 256 << 20;

/// A live data file of the snapshot.
#[derive(Debug, Clone, Default)]
pub(crate) struct DataFile {
    pub records: u64,
    pub size: u64,
    /// (partition field name, value as Iceberg names it in a folder).
    pub partition: Vec<(String, String)>,
    /// By field id: bounds in Iceberg's single-value serialisation, null counts.
    pub lower: HashMap<i64, Vec<u8>>,
    pub upper: HashMap<i64, Vec<u8>>,
    pub nulls: HashMap<i64, u64>,
}

/// What the snapshot's manifests hold.
#[derive(Debug, Default)]
pub(crate) struct Live {
    pub data: Vec<DataFile>,
    /// Live delete files (position or equality deletes, deletion vectors) and the
    /// deletes they record.
    pub delete_files: u64,
    pub deletes: u64,
}

/// A field of a partition spec: its name, transform and source column's type.
#[derive(Debug, Clone)]
pub(crate) struct SpecField {
    pub name: String,
    pub transform: String,
    pub source: String,
}

/// A manifest as the manifest list names it.
struct ManifestRef {
    path: String,
    /// 0: data files, 1: delete files.
    content: i64,
    spec: Option<i64>,
    length: u64,
}

/// Where a snapshot's manifests are, and how to read them.
pub(crate) struct Table<'a> {
    pub files: &'a dyn TableFiles,
    /// The table's folder, lake-relative.
    pub rel: &'a str,
    /// The metadata's `location`: the URI the manifests' names start with.
    pub location: &'a str,
    /// Partition specs by id.
    pub specs: &'a HashMap<i64, Vec<SpecField>>,
}

/// The live files of `snapshot` (its JSON in the metadata file at `meta_path`); None
/// when its manifests are more than [`MAX_MANIFESTS`] or [`MAX_MANIFEST_BYTES`].
pub(crate) fn live_files(
    t: &Table,
    meta_path: &str,
    snapshot: &serde_json::Value,
) -> Result<Option<Live>, DatasetError> {
    let refs = if let Some(list) = snapshot.get("manifest-list").and_then(|v| v.as_str()) {
        let path = t.lake_path(list)?;
        let mut refs = Vec::new();
        for rec in records(t.files, &path)? {
            refs.push(ManifestRef {
                path: string(&rec, "manifest_path").ok_or_else(|| {
                    DatasetError::unreadable(&path, "an entry has no manifest_path")
                })?,
                content: int(&rec, "content").unwrap_or(0),
                spec: int(&rec, "partition_spec_id"),
                length: int(&rec, "manifest_length").unwrap_or(0).max(0) as u64,
            });
        }
        refs
    } else if let Some(all) = snapshot.get("manifests").and_then(|v| v.as_array()) {
        // Format version 1 may list the manifests in the snapshot itself.
        all.iter()
            .filter_map(|m| m.as_str())
            .map(|p| ManifestRef {
                path: p.to_string(),
                content: 0,
                spec: None,
                length: 0,
            })
            .collect()
    } else {
        return Err(DatasetError::malformed(
            meta_path,
            "the current snapshot names no manifest list",
        ));
    };
    let bytes: u64 = refs.iter().map(|r| r.length).sum();
    if refs.len() > MAX_MANIFESTS || bytes > MAX_MANIFEST_BYTES {
        return Ok(None);
    }
    let mut live = Live::default();
    for r in &refs {
        let path = t.lake_path(&r.path)?;
        let spec = r.spec.and_then(|id| t.specs.get(&id));
        for entry in records(t.files, &path)? {
            // 0 existing, 1 added, 2 deleted: a deleted entry is a file of an older
            // snapshot.
            if int(&entry, "status") == Some(2) {
                continue;
            }
            let file = field(&entry, "data_file")
                .ok_or_else(|| DatasetError::unreadable(&path, "an entry has no data_file"))?;
            let records = int(file, "record_count")
                .ok_or_else(|| DatasetError::unreadable(&path, "a data_file has no record_count"))?
                .max(0) as u64;
            if int(file, "content").unwrap_or(r.content) != 0 {
                live.delete_files += 1;
                live.deletes += records;
                continue;
            }
            live.data.push(DataFile {
                records,
                size: int(file, "file_size_in_bytes").unwrap_or(0).max(0) as u64,
                partition: partition(field(file, "partition"), spec),
                lower: by_id(field(file, "lower_bounds"), bytes_of),
                upper: by_id(field(file, "upper_bounds"), bytes_of),
                nulls: by_id(field(file, "null_value_counts"), |v| {
                    long_of(v).map(|n| n.max(0) as u64)
                }),
            });
        }
    }
    Ok(Some(live))
}

impl Table<'_> {
    /// The lake-relative path of the file a manifest list names by `uri`: its place
    /// under the table's `location`, else (a table whose location is elsewhere: copied,
    /// or written under another scheme) its place under a `metadata/` folder.
    fn lake_path(&self, uri: &str) -> Result<String, DatasetError> {
        let bare = |s: &str| -> String {
            let s = s.split_once("://").map_or(s, |(_, rest)| rest);
            let s = s.strip_prefix("file:").unwrap_or(s);
            s.trim_start_matches('/').trim_end_matches('/').to_string()
        };
        let (loc, path) = (bare(self.location), bare(uri));
        let inside = path
            .strip_prefix(&loc)
            .and_then(|r| r.strip_prefix('/'))
            .filter(|_| !loc.is_empty())
            .map(str::to_string)
            .or_else(|| {
                path.rfind("/metadata/")
                    .map(|i| path[i + 1..].to_string())
                    .or_else(|| path.starts_with("metadata/").then(|| path.clone()))
            });
        match inside {
            Some(r) if !r.split('/').any(|p| p == "..") => Ok(format!("{}/{r}", self.rel)),
            _ => Err(DatasetError::malformed(
                self.rel,
                format!(
                    "the manifest {uri} lies outside the table's location {} and its metadata folder; lakestar reads a table's manifests from its own folder",
                    self.location
                ),
            )),
        }
    }
}

/// The records of the Avro object container file at lake-relative `path`.
fn records(files: &dyn TableFiles, path: &str) -> Result<Vec<Avro>, DatasetError> {
    let bytes = files.read(path).map_err(|source| DatasetError::Io {
        path: path.into(),
        source,
    })?;
    guarded(path, || {
        let reader = apache_avro::Reader::new(bytes.as_slice())
            .map_err(|e| DatasetError::unreadable(path, format!("not an Avro file: {e}")))?;
        reader
            .map(|r| r.map_err(|e| DatasetError::unreadable(path, e)))
            .collect()
    })
}

/// A record's field, a union's branch unwrapped.
fn field<'a>(rec: &'a Avro, name: &str) -> Option<&'a Avro> {
    let Avro::Record(fields) = rec else {
        return None;
    };
    fields
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| unwrap(v))
        .filter(|v| !matches!(v, Avro::Null))
}

fn unwrap(v: &Avro) -> &Avro {
    match v {
        Avro::Union(_, inner) => inner,
        other => other,
    }
}

fn long_of(v: &Avro) -> Option<i64> {
    match unwrap(v) {
        Avro::Int(i) => Some((*i).into()),
        Avro::Long(i) => Some(*i),
        _ => None,
    }
}

fn bytes_of(v: &Avro) -> Option<Vec<u8>> {
    match unwrap(v) {
        Avro::Bytes(b) | Avro::Fixed(_, b) => Some(b.clone()),
        _ => None,
    }
}

fn int(rec: &Avro, name: &str) -> Option<i64> {
    field(rec, name).and_then(long_of)
}

fn string(rec: &Avro, name: &str) -> Option<String> {
    match field(rec, name)? {
        Avro::String(s) => Some(s.clone()),
        _ => None,
    }
}

/// An Iceberg map keyed by field id: Avro has only string-keyed maps, so Iceberg writes
/// it as an array of `{key, value}` records.
fn by_id<T>(v: Option<&Avro>, value: impl Fn(&Avro) -> Option<T>) -> HashMap<i64, T> {
    let mut out = HashMap::new();
    match v {
        Some(Avro::Array(items)) => {
            for kv in items {
                if let (Some(k), Some(v)) = (int(kv, "key"), field(kv, "value").and_then(&value)) {
                    out.insert(k, v);
                }
            }
        }
        Some(Avro::Map(m)) => {
            for (k, v) in m {
                if let (Ok(k), Some(v)) = (k.parse(), value(v)) {
                    out.insert(k, v);
                }
            }
        }
        _ => {}
    }
    out
}

/// A data file's partition tuple (a record of the spec's fields, by name), each value
/// as Iceberg names it. A field the spec does not know is read by its Avro type.
fn partition(v: Option<&Avro>, spec: Option<&Vec<SpecField>>) -> Vec<(String, String)> {
    let Some(Avro::Record(fields)) = v else {
        return Vec::new();
    };
    fields
        .iter()
        .map(|(name, v)| {
            let f = spec.and_then(|s| s.iter().find(|f| &f.name == name));
            let (transform, source) = f.map_or(("identity", ""), |f| {
                (f.transform.as_str(), f.source.as_str())
            });
            (name.clone(), value::partition(v, transform, source))
        })
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    //! Manifests written with apache-avro in the Iceberg spec's schemas (trimmed to the
    //! fields read), for this module's and `iceberg`'s tests.
    use super::*;
    pub(crate) use crate::dataset::MemFiles;
    use apache_avro::{Schema, Writer};

    const LIST: &str = r#"{"type": "record", "name": "manifest_file", "fields": [
        {"name": "manifest_path", "type": "string"},
        {"name": "manifest_length", "type": "long"},
        {"name": "partition_spec_id", "type": "int"},
        {"name": "content", "type": "int"}]}"#;

    const MANIFEST: &str = r#"{"type": "record", "name": "manifest_entry", "fields": [
        {"name": "status", "type": "int"},
        {"name": "data_file", "type": {"type": "record", "name": "r2", "fields": [
            {"name": "content", "type": "int"},
            {"name": "file_path", "type": "string"},
            {"name": "partition", "type": {"type": "record", "name": "r102", "fields": [
                {"name": "city", "type": ["null", "string"]}]}},
            {"name": "record_count", "type": "long"},
            {"name": "file_size_in_bytes", "type": "long"},
            {"name": "null_value_counts", "type": ["null", {"type": "array", "items":
                {"type": "record", "name": "k121_v122", "fields": [
                    {"name": "key", "type": "int"}, {"name": "value", "type": "long"}]}}]},
            {"name": "lower_bounds", "type": ["null", {"type": "array", "items":
                {"type": "record", "name": "k126_v127", "fields": [
                    {"name": "key", "type": "int"}, {"name": "value", "type": "bytes"}]}}]},
            {"name": "upper_bounds", "type": ["null", {"type": "array", "items":
                {"type": "record", "name": "k129_v130", "fields": [
                    {"name": "key", "type": "int"}, {"name": "value", "type": "bytes"}]}}]}]}}]}"#;

    fn avro(schema: &str, records: Vec<Avro>) -> Vec<u8> {
        let schema = Schema::parse_str(schema).unwrap();
        let codec = apache_avro::Codec::Deflate(Default::default());
        let mut w = Writer::with_codec(&schema, Vec::new(), codec).unwrap();
        for r in records {
            w.append_value(r).unwrap();
        }
        w.into_inner().unwrap()
    }

    /// A manifest list naming `manifests` (path, content).
    pub(crate) fn manifest_list(manifests: &[(&str, i32)]) -> Vec<u8> {
        let recs = manifests
            .iter()
            .map(|(p, c)| {
                Avro::Record(vec![
                    ("manifest_path".into(), Avro::String(p.to_string())),
                    ("manifest_length".into(), Avro::Long(100)),
                    ("partition_spec_id".into(), Avro::Int(0)),
                    ("content".into(), Avro::Int(*c)),
                ])
            })
            .collect();
        avro(LIST, recs)
    }

    /// One manifest entry: status, content, city, rows, column 2's bounds (longs) and
    /// null count.
    pub(crate) struct Entry {
        pub status: i32,
        pub content: i32,
        pub city: Option<&'static str>,
        pub rows: i64,
        pub bounds: Option<(i64, i64)>,
        pub nulls: i64,
    }

    pub(crate) fn manifest(entries: &[Entry]) -> Vec<u8> {
        let kv = |k: i32, v: Avro| -> Avro {
            Avro::Record(vec![("key".into(), Avro::Int(k)), ("value".into(), v)])
        };
        let recs = entries
            .iter()
            .map(|e| {
                let city = match e.city {
                    Some(c) => Avro::Union(1, Box::new(Avro::String(c.into()))),
                    None => Avro::Union(0, Box::new(Avro::Null)),
                };
                let bound = |v: Option<i64>| match v {
                    Some(v) => Avro::Union(
                        1,
                        Box::new(Avro::Array(vec![kv(
                            2,
                            Avro::Bytes(v.to_le_bytes().to_vec()),
                        )])),
                    ),
                    None => Avro::Union(0, Box::new(Avro::Null)),
                };
                Avro::Record(vec![
                    ("status".into(), Avro::Int(e.status)),
                    (
                        "data_file".into(),
                        Avro::Record(vec![
                            ("content".into(), Avro::Int(e.content)),
                            (
                                "file_path".into(),
                                Avro::String("file:///w/t/data/x.parquet".into()),
                            ),
                            (
                                "partition".into(),
                                Avro::Record(vec![("city".into(), city)]),
                            ),
                            ("record_count".into(), Avro::Long(e.rows)),
                            ("file_size_in_bytes".into(), Avro::Long(1000)),
                            (
                                "null_value_counts".into(),
                                Avro::Union(
                                    1,
                                    Box::new(Avro::Array(vec![kv(2, Avro::Long(e.nulls))])),
                                ),
                            ),
                            ("lower_bounds".into(), bound(e.bounds.map(|b| b.0))),
                            ("upper_bounds".into(), bound(e.bounds.map(|b| b.1))),
                        ]),
                    ),
                ])
            })
            .collect();
        avro(MANIFEST, recs)
    }

    fn table<'a>(
        files: &'a MemFiles,
        specs: &'a HashMap<i64, Vec<SpecField>>,
        location: &'a str,
    ) -> Table<'a> {
        Table {
            files,
            rel: "t",
            location,
            specs,
        }
    }

    fn specs() -> HashMap<i64, Vec<SpecField>> {
        HashMap::from([(
            0,
            vec![SpecField {
                name: "city".into(),
                transform: "identity".into(),
                source: "string".into(),
            }],
        )])
    }

    #[test]
    fn deleted_entries_are_not_live_and_delete_files_are_counted_apart() {
        let entry = |status, content, rows| Entry {
            status,
            content,
            city: Some("Oslo"),
            rows,
            bounds: Some((1, 9)),
            nulls: 0,
        };
        let files = MemFiles(HashMap::from([
            (
                "t/metadata/snap-1.avro".to_string(),
                manifest_list(&[
                    ("s3://b/w/t/metadata/m0.avro", 0),
                    ("s3://b/w/t/metadata/m1.avro", 1),
                ]),
            ),
            (
                "t/metadata/m0.avro".to_string(),
                manifest(&[entry(1, 0, 5), entry(2, 0, 7), entry(0, 0, 3)]),
            ),
            (
                "t/metadata/m1.avro".to_string(),
                manifest(&[entry(1, 1, 2)]),
            ),
        ]));
        let specs = specs();
        let t = table(&files, &specs, "s3://b/w/t");
        let snap = serde_json::json!({"manifest-list": "s3://b/w/t/metadata/snap-1.avro"});
        let live = live_files(&t, "t/metadata/v1.metadata.json", &snap)
            .unwrap()
            .unwrap();
        assert_eq!(
            live.data.iter().map(|f| f.records).collect::<Vec<_>>(),
            [5, 3]
        );
        assert_eq!((live.delete_files, live.deletes), (1, 2));
        assert_eq!(
            live.data[0].partition,
            [("city".to_string(), "Oslo".to_string())]
        );
        assert_eq!(live.data[0].lower[&2], 1i64.to_le_bytes());
        assert_eq!(live.data[0].nulls[&2], 0);
    }

    #[test]
    fn manifests_are_found_where_the_table_is() {
        let files = MemFiles::default();
        let specs = specs();
        let t = |location| Table {
            files: &files,
            rel: "lake/t",
            location,
            specs: &specs,
        };
        let at = |loc: &'static str, uri: &str| t(loc).lake_path(uri);
        for (loc, uri) in [
            ("file:///w/t", "file:///w/t/metadata/a.avro"),
            ("file:/w/t", "file:///w/t/metadata/a.avro"),
            ("s3://b/w/t/", "s3a://b/w/t/metadata/a.avro"),
            // Copied from elsewhere: the metadata folder's file.
            ("s3://other/t", "s3://other/x/metadata/a.avro"),
        ] {
            assert_eq!(
                at(loc, uri).unwrap(),
                "lake/t/metadata/a.avro",
                "{loc} {uri}"
            );
        }
        assert!(at("s3://b/w/t", "s3://b/elsewhere/a.avro").is_err());
        assert!(at("s3://b/w/t", "s3://b/w/t/../../x/a.avro").is_err());
    }

    #[test]
    fn a_broken_manifest_is_an_error_not_a_panic() {
        let good = manifest_list(&[("file:///w/t/metadata/m0.avro", 0)]);
        let specs = specs();
        let snap = serde_json::json!({"manifest-list": "file:///w/t/metadata/snap.avro"});
        for bad in [
            b"not avro at all".to_vec(),
            good[..good.len() / 2].to_vec(),
            good.iter().map(|b| b ^ 0x5a).collect(),
        ] {
            let files = MemFiles(HashMap::from([("t/metadata/snap.avro".to_string(), bad)]));
            let t = table(&files, &specs, "file:///w/t");
            let e = live_files(&t, "m.json", &snap).unwrap_err();
            assert!(
                matches!(e, DatasetError::Unreadable { .. } | DatasetError::Io { .. }),
                "{e}"
            );
        }
        // A manifest list whose manifest is missing.
        let files = MemFiles(HashMap::from([("t/metadata/snap.avro".to_string(), good)]));
        let t = table(&files, &specs, "file:///w/t");
        let e = live_files(&t, "m.json", &snap).unwrap_err();
        assert!(e.to_string().contains("t/metadata/m0.avro"), "{e}");
        // No manifest list at all.
        let e = live_files(&t, "m.json", &serde_json::json!({"snapshot-id": 1})).unwrap_err();
        assert!(e.to_string().contains("names no manifest list"), "{e}");
    }

    #[test]
    fn too_many_manifests_are_not_read() {
        let list: Vec<(String, i32)> = (0..=MAX_MANIFESTS)
            .map(|i| (format!("file:///w/t/metadata/m{i}.avro"), 0))
            .collect();
        let refs: Vec<(&str, i32)> = list.iter().map(|(p, c)| (p.as_str(), *c)).collect();
        let files = MemFiles(HashMap::from([(
            "t/metadata/snap.avro".to_string(),
            manifest_list(&refs),
        )]));
        let specs = specs();
        let t = table(&files, &specs, "file:///w/t");
        let snap = serde_json::json!({"manifest-list": "file:///w/t/metadata/snap.avro"});
        assert!(live_files(&t, "m.json", &snap).unwrap().is_none());
    }
}
