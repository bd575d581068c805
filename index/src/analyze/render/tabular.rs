//! The tabular parts of a rendering: a delimited table, a set of named tables, their
//! column lines and the `load:` line.

use super::{counted, human_size, more, num, plural, thousands, Caps};
use crate::analyze::{ColumnProfile, ColumnType, Table, TableSet};
use crate::text_util::cut_chars;
use std::fmt::Write;

/// Examples are cut shorter than stored: a prompt needs their shape, not their length.
const EXAMPLE_CHARS: usize = 40;

fn quote_examples(ex: &[String], kind: ColumnType, n: usize) -> String {
    let text = matches!(kind, ColumnType::Text | ColumnType::Categorical);
    ex.iter()
        .take(n)
        .map(|e| {
            let e = cut_chars(e, EXAMPLE_CHARS);
            if text {
                format!("{e:?}")
            } else {
                e
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The `load:` line: the stored pandas call with the file's path in place of `path`.
fn load_line(s: &mut String, indent: &str, path: Option<&str>, load: Option<&str>) {
    if let (Some(path), Some(load)) = (path, load) {
        let _ = writeln!(s, "{indent}load: {}", with_path(load, path));
    }
}

/// `call` with every bare word `path` (outside string literals) replaced by `path` as a
/// Python string literal (a JSON string is one).
pub(crate) fn with_path(call: &str, path: &str) -> String {
    let lit = serde_json::to_string(path).unwrap_or_else(|_| format!("{path:?}"));
    let mut out = String::with_capacity(call.len() + lit.len());
    let mut from = 0;
    for at in crate::analyze::pycall::word_at(call, "path") {
        out.push_str(&call[from..at]);
        out.push_str(&lit);
        from = at + "path".len();
    }
    out.push_str(&call[from..]);
    out
}

pub(super) fn table(s: &mut String, path: Option<&str>, t: &Table, caps: Caps) {
    let delim = match t.delimiter.as_str() {
        "\t" => "tab",
        "," => "comma",
        ";" => "semicolon",
        "|" => "pipe",
        other => other,
    };
    let layout = match t.delimiter.as_str() {
        "fixed-width" => "fixed-width columns".to_string(),
        "whitespace" => "whitespace-separated".to_string(),
        _ => format!("{delim}-separated"),
    };
    let _ = writeln!(
        s,
        ", {} × {}, {}, {}",
        if t.rows_exact {
            counted(t.rows, "row")
        } else {
            format!("~{}", counted(t.rows, "row"))
        },
        counted(t.columns.len() as u64, "column"),
        layout,
        if t.header {
            format!("header row {}", t.skipped_lines + 1)
        } else {
            "no header row".to_string()
        }
    );
    load_line(s, "  ", path, t.load.as_deref());
    if let Some(e) = &t.encoding {
        let _ = writeln!(s, "  encoding {e}");
    }
    if let Some(b) = t.sampled_bytes {
        let _ = writeln!(
            s,
            "  profiled from a {} sample: counts are estimates (`lakestar index --full` for exact figures)",
            human_size(b)
        );
    }
    if t.skipped_lines > 0 {
        let first = t
            .preamble
            .first()
            .map(|p| format!(": {p:?}"))
            .unwrap_or_default();
        let _ = writeln!(
            s,
            "  table starts after {} preamble lines{first}",
            t.skipped_lines
        );
    }
    for n in &t.notes {
        let _ = writeln!(s, "  {n}");
    }
    for f in &t.footer {
        let _ = writeln!(s, "  below the table: {f:?}");
    }
    if t.ragged_rows > 0 {
        let _ = writeln!(
            s,
            "  {} rows have a different number of fields than the header",
            thousands(t.ragged_rows)
        );
    }
    columns(s, "  ", &t.columns, t.rows, caps);
}

/// The column lines shared by every tabular content.
pub(super) fn columns(s: &mut String, indent: &str, cols: &[ColumnProfile], rows: u64, caps: Caps) {
    let width = cols
        .iter()
        .take(caps.items)
        .map(|c| display_name(&c.name).chars().count())
        .max()
        .unwrap_or(0)
        .min(28);
    for c in cols.iter().take(caps.items) {
        let name = display_name(&c.name);
        let mut facts: Vec<String> = Vec::new();
        if let Some(u) = &c.unit {
            facts.push(format!("unit {u}"));
        }
        if let Some(d) = &c.declared_type {
            facts.push(format!("declared {d}"));
        }
        if let Some(f) = &c.date_format {
            facts.push(format!("as {f}"));
        }
        if !c.notation.is_empty() {
            facts.push(format!("written with {}", c.notation.join(", ")));
        }
        // `~` marks a figure from a sample, unless the file's own statistics gave it.
        let est = |figure: &str| {
            if c.estimated && !c.exact.iter().any(|e| e == figure) {
                "~"
            } else {
                ""
            }
        };
        if let (Some(lo), Some(hi)) = (&c.min, &c.max) {
            let e = est("range");
            facts.push(format!("{e}{lo} … {e}{hi}"));
        }
        if c.is_unique(rows) {
            facts.push("unique".into());
        } else if c.kind != ColumnType::Empty {
            // A sample's count is a floor; past the exact cap on every value, a sketch's.
            let more = match (c.distinct_exact, c.estimated) {
                (true, _) => "",
                (false, true) => "≥",
                (false, false) => "~",
            };
            facts.push(format!("{more}{} distinct", thousands(c.distinct)));
        }
        if c.nulls > 0 {
            let pct = 100.0 * c.nulls as f64 / rows.max(1) as f64;
            facts.push(format!(
                "{}{} null ({pct:.1}%)",
                est("nulls"),
                thousands(c.nulls)
            ));
        }
        if !c.missing.is_empty() {
            let m: Vec<String> = c
                .missing
                .iter()
                .map(|m| format!("{:?} ({})", m.marker, thousands(m.count)))
                .collect();
            facts.push(format!("read as missing: {}", m.join(", ")));
        }
        if let Some(m) = c.mean {
            facts.push(format!("mean {}{}", est("mean"), num(m)));
        }
        if !c.top.is_empty() && caps.examples > 0 {
            let top: Vec<String> = c
                .top
                .iter()
                .take(caps.examples + 2)
                .map(|(v, n)| format!("{v} ({n})"))
                .collect();
            facts.push(format!("top {}", top.join(", ")));
        } else if !c.examples.is_empty() && caps.examples > 0 {
            facts.push(format!(
                "e.g. {}",
                quote_examples(&c.examples, c.kind, caps.examples)
            ));
        }
        let _ = writeln!(
            s,
            "{indent}{name:<width$}  {:<11} {}",
            c.kind.as_str(),
            facts.join(", ")
        );
    }
    if cols.len() > caps.items {
        let _ = writeln!(s, "{indent}… {} more columns", cols.len() - caps.items);
    }
}

pub(super) fn tables(s: &mut String, path: Option<&str>, t: &TableSet, caps: Caps) {
    let kinds: Vec<&str> = t.tables.iter().map(|x| x.kind.as_str()).collect();
    let what = match kinds.first() {
        Some(k) if kinds.iter().all(|x| x == k) => plural(k, t.tables.len()),
        _ => plural("table", t.tables.len()),
    };
    let _ = writeln!(s, ", {what}");
    for n in &t.notes {
        let _ = writeln!(s, "  {n}");
    }
    for tb in t.tables.iter().take(caps.items.min(20)) {
        let rows = if tb.rows_exact {
            thousands(tb.rows)
        } else {
            format!("~{} (estimated)", thousands(tb.rows))
        };
        let mut head = format!(
            "  {} \"{}\": {rows} rows × {} columns",
            tb.kind,
            tb.name,
            tb.columns.len()
        );
        if let Some(r) = &tb.range {
            let _ = write!(head, ", range {r}");
        }
        if let Some(h) = tb.header_row {
            let _ = write!(head, ", header row {h}");
        }
        let _ = writeln!(s, "{head}");
        load_line(s, "    ", path, tb.load.as_deref());
        for n in &tb.notes {
            let _ = writeln!(s, "    {n}");
        }
        columns(s, "    ", &tb.columns, tb.rows, caps);
    }
    more(s, t.tables.len(), caps.items.min(20), "tables");
}

/// A column name as shown: quoted (with escapes) when it holds spaces a reader would
/// not see in a padded list — leading, trailing, doubled or other than a plain space —
/// since code must write it exactly (`"num. calls abandoned "`).
pub(super) fn display_name(n: &str) -> String {
    if n.is_empty() {
        "(unnamed)".into()
    } else if n.split_whitespace().collect::<Vec<_>>().join(" ") != n {
        format!("{n:?}")
    } else {
        n.to_string()
    }
}
