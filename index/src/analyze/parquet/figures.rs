//! Which figures of a Parquet table are exact: the footer's whole-file statistics (null
//! counts, ranges) are, and so is everything profiled when every row was read; the rest
//! of a profile made from the first rows is an estimate, flagged as one.

use super::schema::Col;
use super::values::{footer_stats, FooterStats};
use crate::analyze::model::NamedTable;
use crate::analyze::profile::ColumnType;
use ::parquet::file::metadata::ParquetMetaData;

/// Longest string shown as a text column's smallest or largest value.
const TEXT_RANGE_CHARS_MAX: usize = 40;

/// Settles the figures of `t`, profiled from its first `read` rows (`t.rows` is the
/// footer's exact count): footer statistics replace the sample's nulls and ranges where
/// the footer has them, and a sample's other figures are marked estimated. Returns how
/// many columns took figures from the footer.
pub(super) fn settle(t: &mut NamedTable, cols: &[Col], md: &ParquetMetaData, read: u64) -> usize {
    let rows = t.rows;
    let sampled = read < rows;
    let mut from_footer = 0;
    for (col, prof) in cols.iter().zip(t.columns.iter_mut()) {
        let stats = match (col.nested, col.leaves.as_slice()) {
            (None, [leaf]) => footer_stats(md, *leaf),
            _ => FooterStats::default(),
        };
        let seen_nulls = prof.nulls;
        if sampled {
            prof.estimated = true;
            // What the first rows hold is a floor of what the file holds.
            prof.distinct_exact = false;
            prof.nulls = scale(seen_nulls, rows, read);
        }
        let mut used = false;
        // A footer count below what the sample saw is a writer that left it out.
        if let Some(n) = stats.nulls.filter(|n| *n >= seen_nulls) {
            prof.nulls = n;
            used = true;
            if sampled {
                prof.exact.push("nulls".into());
            }
        }
        // A string's byte order is not the order of the numbers or dates it spells; and
        // long strings make a range no one reads (a cut one would not be exact).
        let short = |v: &Option<String>| {
            v.as_ref()
                .is_some_and(|v| v.chars().count() <= TEXT_RANGE_CHARS_MAX)
        };
        let ordered = !stats.text
            || (matches!(
                prof.kind,
                ColumnType::Text
                    | ColumnType::Categorical
                    | ColumnType::Identifier
                    | ColumnType::Empty
            ) && short(&stats.min)
                && short(&stats.max));
        // A column read as time (`200001` as a month) keeps the range of that reading:
        // the footer's is of the values as stored.
        let ordered = ordered && prof.time_span.is_none();
        if let (Some(lo), Some(hi), true) = (stats.min, stats.max, ordered) {
            (prof.min, prof.max) = (Some(lo), Some(hi));
            used = true;
            if sampled {
                prof.exact.push("range".into());
            }
        }
        from_footer += usize::from(used);
    }
    t.sampled = sampled;
    from_footer
}

/// `n` seen in `read` rows, scaled to `rows`.
fn scale(n: u64, rows: u64, read: u64) -> u64 {
    if read == 0 {
        return n;
    }
    (n as f64 * rows as f64 / read as f64).round() as u64
}

/// The table's notes: why reading stopped, what was sampled, what the footer gave.
pub(super) fn notes(
    read: u64,
    rows: u64,
    failure: Option<String>,
    from_footer: usize,
    columns: usize,
) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(e) = failure {
        notes.push(format!("reading rows stopped after {read} rows: {e}"));
    }
    if read < rows {
        notes.push(format!(
            "figures from a sample of {read} rows (the first of {rows}): distinct counts are floors, means estimates (`lakestar index --full` reads every row)"
        ));
    }
    if from_footer > 0 {
        notes.push(format!(
            "null counts and ranges of {from_footer} of {columns} columns from the footer statistics (all rows)"
        ));
    }
    notes
}
