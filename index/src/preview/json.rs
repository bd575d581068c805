//! JSON records as a table: the lines of a JSON-lines file, the elements of a top-level
//! array, or of each top-level key holding an array of objects (`{"data": [...]}`).
//! Columns are the records' keys in order of first appearance; values that are not
//! scalars are shown as JSON text.

use super::{Found, PreviewError};
use crate::analyze::{Format, Source};
use serde_json::{Map, Value};
use std::io::BufRead;

/// Largest JSON document parsed whole (as for its description).
const MAX_DOCUMENT: usize = 256 * 1024 * 1024;

/// The record tables of `src`, keeping `keep` rows of each.
pub(super) fn tables(
    src: &Source,
    format: Format,
    stem: &str,
    keep: usize,
) -> Result<Vec<Found>, PreviewError> {
    let io = |source| PreviewError::Unreadable {
        path: src.path().to_path_buf(),
        source,
    };
    if format == Format::Jsonl {
        let mut records = Vec::new();
        let mut total = 0u64;
        for line in std::io::BufReader::new(src.reader().map_err(io)?).split(b'\n') {
            let line = line.map_err(io)?;
            // Bad lines are skipped, as the description counts them apart.
            if let Ok(v) = serde_json::from_slice::<Value>(line.trim_ascii()) {
                total += 1;
                records.push(v);
                if records.len() >= keep {
                    break;
                }
            }
        }
        if records.is_empty() {
            return Err(PreviewError::NotTabular {
                what: "a JSON-lines file without a valid line".into(),
            });
        }
        return Ok(vec![table(stem.to_string(), &records, total)]);
    }
    let (bytes, cut) = src.read_up_to(MAX_DOCUMENT).map_err(io)?;
    if cut {
        return Err(PreviewError::Malformed {
            format: "a JSON document".into(),
            reason: format!("larger than {} MiB", MAX_DOCUMENT >> 20),
        });
    }
    let doc: Value = serde_json::from_slice(&bytes).map_err(|e| PreviewError::Malformed {
        format: "a JSON document".into(),
        reason: e.to_string(),
    })?;
    let found = match &doc {
        Value::Array(items) => vec![table(
            stem.to_string(),
            &items[..items.len().min(keep)],
            items.len() as u64,
        )],
        Value::Object(map) => map
            .iter()
            .filter_map(|(k, v)| match v {
                Value::Array(items) if items.iter().any(Value::is_object) => Some(table(
                    k.clone(),
                    &items[..items.len().min(keep)],
                    items.len() as u64,
                )),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    if found.is_empty() {
        return Err(PreviewError::NotTabular {
            what: "a JSON document without an array of records".into(),
        });
    }
    Ok(found)
}

/// Records as rows: objects by key, anything else as one `value` column.
fn table(name: String, records: &[Value], total: u64) -> Found {
    let mut columns: Vec<String> = Vec::new();
    for r in records {
        match r {
            Value::Object(m) => {
                for k in m.keys() {
                    if !columns.contains(k) {
                        columns.push(k.clone());
                    }
                }
            }
            _ => {
                if !columns.iter().any(|c| c == "value") {
                    columns.push("value".into());
                }
            }
        }
    }
    let empty = Map::new();
    let rows = records
        .iter()
        .map(|r| {
            let m = r.as_object().unwrap_or(&empty);
            columns
                .iter()
                .map(|c| match m.get(c) {
                    Some(v) => text(v),
                    None if !r.is_object() && c == "value" => text(r),
                    None => String::new(),
                })
                .collect()
        })
        .collect();
    Found {
        name,
        columns,
        rows,
        total,
    }
}

/// A value as a cell: strings as they are, other scalars and structures as JSON.
fn text(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}
