//! A Delta log's checkpoint, as `_last_checkpoint` names it: a classic single Parquet
//! file, the parts of a multi-part one, or a V2 checkpoint (UUID-named, JSON or Parquet)
//! with its sidecar files; its actions, all files' united, replace the commits up to
//! its version.

use crate::dataset::{read_text, DatasetError, TableFiles};
use serde_json::Value;

/// Parts of a multi-part checkpoint read at most: a `_last_checkpoint` naming more is
/// taken for a broken one rather than read part by part.
const MAX_CHECKPOINT_PARTS: u64 = 10_000;

/// A checkpoint's actions: its version, the name of its (first) file for errors.
pub(super) struct Checkpoint {
    pub version: u64,
    pub name: String,
    pub actions: Vec<Value>,
}

/// The checkpoint `_last_checkpoint` names (none when the log has none): a classic
/// `NNN.checkpoint.parquet`, the parts `NNN.checkpoint.PPPPPPPPPP.QQQQQQQQQQ.parquet` of
/// a multi-part one (their actions united), or a V2 checkpoint (`v2Checkpoint`'s path,
/// else the one `NNN.checkpoint.<uuid>.json|parquet` among `names`, the log's files),
/// whose `sidecar` actions name Parquet files of add and remove actions in `_sidecars/`.
pub(super) fn last(
    files: &dyn TableFiles,
    log_rel: &str,
    names: &[String],
) -> Result<Option<Checkpoint>, DatasetError> {
    let at = format!("{log_rel}/_last_checkpoint");
    let Ok(text) = read_text(files, &at) else {
        return Ok(None);
    };
    let last: Value = serde_json::from_str(&text).map_err(|source| DatasetError::Json {
        path: at.clone(),
        source,
    })?;
    let version = last
        .get("version")
        .and_then(Value::as_u64)
        .ok_or_else(|| DatasetError::malformed(&at, "no version"))?;
    let parts = last.get("parts").and_then(Value::as_u64).unwrap_or(1);
    let classic = format!("{version:020}.checkpoint.parquet");
    let chosen: Vec<String> = if let Some(p) =
        last.pointer("/v2Checkpoint/path").and_then(Value::as_str)
    {
        vec![p.rsplit('/').next().unwrap_or(p).to_string()]
    } else if parts > MAX_CHECKPOINT_PARTS {
        return Err(DatasetError::malformed(
            &at,
            format!("names a checkpoint of {parts} parts, more than the {MAX_CHECKPOINT_PARTS} lakestar reads"),
        ));
    } else if parts > 1 {
        (1..=parts)
            .map(|i| format!("{version:020}.checkpoint.{i:010}.{parts:010}.parquet"))
            .collect()
    } else if names.contains(&classic) {
        vec![classic]
    } else {
        // A V2 checkpoint named by a uuid; two writers may each have left one, and any
        // complete one holds the same table: the greatest name, as Delta's readers pick.
        let prefix = format!("{version:020}.checkpoint.");
        let v2 = names
            .iter()
            .filter(|n| {
                n.strip_prefix(&prefix).is_some_and(|rest| {
                    let uuid = rest
                        .strip_suffix(".json")
                        .or_else(|| rest.strip_suffix(".parquet"));
                    uuid.is_some_and(|u| {
                        u.len() == 36 && u.bytes().filter(|b| *b == b'-').count() == 4
                    })
                })
            })
            .max();
        vec![v2.cloned().unwrap_or(classic)]
    };
    let mut actions = Vec::new();
    for name in &chosen {
        actions.extend(checkpoint_actions(files, &format!("{log_rel}/{name}"))?);
    }
    // A V2 checkpoint's file actions may lie in sidecar files.
    let mut sidecar_actions = Vec::new();
    for a in &actions {
        if let Some(p) = a.pointer("/sidecar/path").and_then(Value::as_str) {
            let name = p.rsplit('/').next().unwrap_or(p);
            let path = format!("{log_rel}/_sidecars/{name}");
            sidecar_actions.extend(parquet_actions(files, &path)?);
        }
    }
    actions.extend(sidecar_actions);
    Ok(Some(Checkpoint {
        version,
        name: chosen.into_iter().next().unwrap_or_default(),
        actions,
    }))
}

/// The actions of the checkpoint file at lake-relative `path`: newline-delimited JSON
/// (a V2 checkpoint may be written so) or Parquet.
fn checkpoint_actions(files: &dyn TableFiles, path: &str) -> Result<Vec<Value>, DatasetError> {
    if !path.ends_with(".json") {
        return parquet_actions(files, path);
    }
    read_text(files, path)?
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            serde_json::from_str(l).map_err(|source| DatasetError::Json {
                path: path.to_string(),
                source,
            })
        })
        .collect()
}

/// The actions of a checkpoint's Parquet file at lake-relative `path` (the `parquet`
/// crate's row reader, each row one action: its one non-null column, `add`, `remove`,
/// `metaData`…, maps as objects).
fn parquet_actions(files: &dyn TableFiles, path: &str) -> Result<Vec<Value>, DatasetError> {
    let file = files.read(path).map_err(|source| DatasetError::Io {
        path: path.into(),
        source,
    })?;
    let file = bytes::Bytes::from(file);
    let unreadable = |e: parquet::errors::ParquetError| DatasetError::unreadable(path, e);
    crate::dataset::guarded(path, || {
        let reader = parquet::file::reader::SerializedFileReader::new(file).map_err(unreadable)?;
        let rows =
            parquet::file::reader::FileReader::get_row_iter(&reader, None).map_err(unreadable)?;
        let mut actions = Vec::new();
        for row in rows {
            let mut action = row.map_err(unreadable)?.to_json_value();
            if let Value::Object(o) = &mut action {
                o.retain(|_, v| !v.is_null());
            }
            actions.push(action);
        }
        Ok(actions)
    })
}
