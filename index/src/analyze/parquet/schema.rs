//! The described table's columns from a Parquet schema: leaves by dotted path, with
//! lists and maps kept whole, and the type each declares.

use super::values;
use ::parquet::basic::{ConvertedType, LogicalType, Repetition};
use ::parquet::schema::types::{SchemaDescriptor, Type as SchemaType};
use std::collections::HashMap;

/// Leaves named in the declared type of one list or map column.
const NESTED_LEAVES_SHOWN: usize = 8;

/// One column of the described table: a leaf, or a list/map subtree.
pub(super) struct Col {
    /// Dotted path.
    pub name: String,
    /// Leaf indices under it, in schema order.
    pub leaves: Vec<usize>,
    /// "LIST", "MAP" or "repeated" for a nested column.
    pub nested: Option<&'static str>,
    /// The leaf's logical type, for a leaf column.
    pub logical: Option<LogicalType>,
    /// A field of the root (not inside a struct): pandas reads it as one column.
    pub top: bool,
}

/// Columns in schema order: structs are walked into, lists, maps and repeated fields are
/// one column each — the same shapes the record reader gives back.
pub(super) fn columns(schema: &SchemaDescriptor) -> Vec<Col> {
    fn walk(
        t: &SchemaType,
        prefix: &mut Vec<String>,
        out: &mut Vec<(Vec<String>, Option<&'static str>)>,
    ) {
        for f in t.get_fields() {
            prefix.push(f.name().to_string());
            let info = f.get_basic_info();
            let nested = if info.has_repetition() && info.repetition() == Repetition::REPEATED {
                Some("repeated")
            } else if f.is_group() {
                match info.converted_type() {
                    ConvertedType::LIST => Some("LIST"),
                    ConvertedType::MAP | ConvertedType::MAP_KEY_VALUE => Some("MAP"),
                    _ => None,
                }
            } else {
                None
            };
            if f.is_group() && nested.is_none() {
                walk(f, prefix, out);
            } else {
                out.push((prefix.clone(), nested));
            }
            prefix.pop();
        }
    }
    let mut paths = Vec::new();
    walk(schema.root_schema(), &mut Vec::new(), &mut paths);
    let by_path: HashMap<Vec<String>, usize> = paths
        .iter()
        .enumerate()
        .map(|(i, (p, _))| (p.clone(), i))
        .collect();
    let mut cols: Vec<Col> = paths
        .iter()
        .map(|(p, nested)| Col {
            name: p.join("."),
            leaves: Vec::new(),
            nested: *nested,
            logical: None,
            top: p.len() == 1,
        })
        .collect();
    for (leaf, descr) in schema.columns().iter().enumerate() {
        let parts = descr.path().parts();
        let owner = (1..=parts.len())
            .rev()
            .find_map(|k| by_path.get(&parts[..k]));
        if let Some(col) = owner.and_then(|&i| cols.get_mut(i)) {
            col.leaves.push(leaf);
            if col.nested.is_none() {
                col.logical = descr.logical_type_ref().cloned();
            }
        }
    }
    cols
}

pub(super) fn declared(col: &Col, schema: &SchemaDescriptor) -> Option<String> {
    let leaf = |i: usize| schema.columns().get(i);
    match col.nested {
        None => col
            .leaves
            .first()
            .and_then(|&i| leaf(i))
            .map(|d| values::declared_type(d)),
        Some(kind) => {
            let mut parts: Vec<String> = col
                .leaves
                .iter()
                .take(NESTED_LEAVES_SHOWN)
                .filter_map(|&i| leaf(i))
                .map(|d| format!("{} {}", d.path().string(), values::declared_type(d)))
                .collect();
            if col.leaves.len() > NESTED_LEAVES_SHOWN {
                parts.push(format!("{} more", col.leaves.len() - NESTED_LEAVES_SHOWN));
            }
            Some(format!("{kind} of {}", parts.join("; ")))
        }
    }
}
