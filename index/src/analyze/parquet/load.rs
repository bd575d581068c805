//! The pandas call that loads a Parquet file as described.

use super::schema::Col;
use ::parquet::file::metadata::KeyValue;

/// `pd.read_parquet(path)`, which yields the root fields as columns. Columns stored as a
/// pandas index (named in the file's `pandas` metadata) come back as the index, so they
/// are reset into columns and put back in file order. None when a struct's fields are
/// described as columns of their own: pandas keeps the struct as one column of dicts.
pub(super) fn call(cols: &[Col], meta: Option<&Vec<KeyValue>>) -> Option<String> {
    if !cols.iter().all(|c| c.top) {
        return None;
    }
    let index = index_columns(meta);
    if index.is_empty() {
        return Some("pd.read_parquet(path)".into());
    }
    // An index column must be one of the described columns to be put back.
    if !index.iter().all(|i| cols.iter().any(|c| &c.name == i)) {
        return None;
    }
    let names: Vec<String> = cols.iter().map(|c| py_str(&c.name)).collect();
    let index: Vec<String> = index.iter().map(|n| py_str(n)).collect();
    Some(format!(
        "pd.read_parquet(path).reset_index(names=[{}])[[{}]]",
        index.join(", "),
        names.join(", ")
    ))
}

/// The stored columns pandas turns into the index (a `RangeIndex` is stored as
/// metadata, not as a column, and is left out).
fn index_columns(meta: Option<&Vec<KeyValue>>) -> Vec<String> {
    let Some(json) = meta
        .into_iter()
        .flatten()
        .find(|kv| kv.key == "pandas")
        .and_then(|kv| kv.value.as_deref())
    else {
        return Vec::new();
    };
    let Ok(v) = serde_json::from_str::<serde_json::Value>(json) else {
        return Vec::new();
    };
    v.get("index_columns")
        .and_then(|i| i.as_array())
        .into_iter()
        .flatten()
        .filter_map(|i| i.as_str().map(str::to_string))
        .collect()
}

/// A Python string literal: a JSON string is one.
fn py_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("{s:?}"))
}
