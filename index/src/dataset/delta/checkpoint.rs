//! A Delta log's checkpoint, as `_last_checkpoint` names it (without one, the newest
//! complete checkpoint the log's listing shows): a classic single Parquet file, the
//! parts of a multi-part one, or a V2 checkpoint (UUID-named, JSON or Parquet) with its
//! sidecar files; its actions, all files' united, replace the commits up to its version.

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
        // No `_last_checkpoint` (a writer need not leave one): the newest complete
        // checkpoint the log's listing shows, as the protocol lets a reader find it.
        return match listed(names) {
            Some((version, chosen)) => read(files, log_rel, version, chosen).map(Some),
            None => Ok(None),
        };
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
    read(files, log_rel, version, chosen).map(Some)
}

/// The checkpoint of `version` made of the files `chosen` (names in the log).
fn read(
    files: &dyn TableFiles,
    log_rel: &str,
    version: u64,
    chosen: Vec<String>,
) -> Result<Checkpoint, DatasetError> {
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
    Ok(Checkpoint {
        version,
        name: chosen.into_iter().next().unwrap_or_default(),
        actions,
    })
}

/// The newest complete checkpoint among the log's file `names`: its version and files
/// (a classic one, every part of a multi-part one, or a V2 one named by a UUID).
fn listed(names: &[String]) -> Option<(u64, Vec<String>)> {
    let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
    let mut found: Vec<(u64, Vec<String>)> = Vec::new();
    // (version, parts) → the part files seen.
    let mut multi: std::collections::BTreeMap<(u64, u64), Vec<String>> = Default::default();
    for name in names {
        let Some((v, rest)) = name.split_once(".checkpoint.") else {
            continue;
        };
        let Some(version) = digits(v, 20).then(|| v.parse::<u64>().ok()).flatten() else {
            continue;
        };
        if rest == "parquet" {
            found.push((version, vec![name.clone()]));
        } else if let Some((part, of)) = rest
            .strip_suffix(".parquet")
            .and_then(|p| p.split_once('.'))
            .filter(|(a, b)| digits(a, 10) && digits(b, 10))
        {
            let of: u64 = of.parse().unwrap_or(0);
            if part.parse::<u64>().is_ok_and(|p| (1..=of).contains(&p))
                && of <= MAX_CHECKPOINT_PARTS
            {
                multi.entry((version, of)).or_default().push(name.clone());
            }
        } else if rest
            .strip_suffix(".json")
            .or_else(|| rest.strip_suffix(".parquet"))
            .is_some_and(|u| u.len() == 36 && u.bytes().filter(|b| *b == b'-').count() == 4)
        {
            found.push((version, vec![name.clone()]));
        }
    }
    for ((version, of), mut parts) in multi {
        parts.sort();
        parts.dedup();
        if parts.len() as u64 == of {
            found.push((version, parts));
        }
    }
    // The newest; of two at one version (a classic and a V2), the greatest name.
    found
        .into_iter()
        .max_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)))
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

#[cfg(test)]
mod tests {
    use super::listed;

    #[test]
    fn the_newest_complete_checkpoint_is_found_by_listing() {
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let v = |n: u64| format!("{n:020}");
        let log = names(&[
            &format!("{}.checkpoint.parquet", v(2)),
            &format!("{}.json", v(3)),
            // Version 5 in three parts, one missing: incomplete, not taken.
            &format!("{}.checkpoint.0000000001.0000000003.parquet", v(5)),
            &format!("{}.checkpoint.0000000002.0000000003.parquet", v(5)),
            // Version 4 in two parts, both there.
            &format!("{}.checkpoint.0000000002.0000000002.parquet", v(4)),
            &format!("{}.checkpoint.0000000001.0000000002.parquet", v(4)),
            "_last_checkpoint.tmp",
        ]);
        let (version, files) = listed(&log).unwrap();
        assert_eq!(version, 4);
        assert_eq!(files.len(), 2);
        assert!(files[0].contains(".0000000001.0000000002."), "{files:?}");
        let uuid = format!(
            "{}.checkpoint.3a0d65cd-72af-43c0-9f3f-2a3d1b4c5e6f.json",
            v(9)
        );
        let (version, files) = listed(&names(&[&uuid])).unwrap();
        assert_eq!((version, files), (9, vec![uuid]));
        assert_eq!(listed(&names(&[&format!("{}.json", v(0))])), None);
    }
}
