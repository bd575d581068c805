//! The text of a table that spans many files, as `describe` prints it and as the search
//! document and the agent read it: deterministic, the load line with the folder's path.

use super::{TableDescription, MAX_RENDERED_COLUMNS};
use crate::analyze::human_size;
use std::fmt::Write;

/// The text of the table in the lake-relative folder `root` (`error`: why it could not
/// be described, when `table` is absent).
pub fn render(root: &str, table: &TableDescription) -> String {
    let mut out = String::new();
    let mut rows = table
        .rows
        .map_or("rows not known".to_string(), |r| format!("{r} rows"));
    if let Some(d) = table.deleted_rows {
        let _ = write!(rows, " (not counting {d} deleted by deletion vectors)");
    }
    let _ = write!(
        out,
        "{root}/ — {}: {rows}, {} columns, {} data files ({})",
        table.kind.human(),
        table.columns.len(),
        table.data_files,
        human_size(table.bytes)
    );
    if let Some(v) = &table.version {
        let what = match table.kind {
            super::TableKind::Iceberg => "snapshot",
            _ => "version",
        };
        let _ = write!(out, ", {what} {v}");
        if let Some(at) = &table.written_at {
            let _ = write!(out, " ({at})");
        }
    }
    out.push('\n');
    if let Some(t) = &table.time_coverage {
        let _ = writeln!(out, "time: {} … {} ({})", t.start, t.end, t.source);
    }
    if !table.partitions.is_empty() {
        out.push_str("partitioned by:\n");
        for p in &table.partitions {
            let more = if p.distinct > p.values.len() as u64 {
                format!(", … ({} in all)", p.distinct)
            } else {
                String::new()
            };
            let _ = writeln!(out, "  {}: {}{more}", p.name, p.values.join(", "));
        }
    }
    out.push_str("columns:\n");
    for c in table.columns.iter().take(MAX_RENDERED_COLUMNS) {
        let _ = write!(out, "  {}  {}", c.name, c.kind);
        if c.partition {
            out.push_str("  partition");
        }
        if let (Some(lo), Some(hi)) = (&c.min, &c.max) {
            let _ = write!(out, "  range {lo} … {hi}");
        }
        if let Some(n) = c.nulls.filter(|n| *n > 0) {
            let _ = write!(out, "  nulls {n}");
        }
        out.push('\n');
    }
    if table.columns.len() > MAX_RENDERED_COLUMNS {
        let rest: Vec<&str> = table.columns[MAX_RENDERED_COLUMNS..]
            .iter()
            .map(|c| c.name.as_str())
            .collect();
        let _ = writeln!(out, "  … {}", rest.join(", "));
    }
    for n in &table.notes {
        let _ = writeln!(out, "note: {n}");
    }
    let _ = writeln!(out, "load: {}", table.load);
    out
}

/// The text of a stored table: its description's, or the error that left it without.
pub fn render_or_error(
    root: &str,
    kind: super::TableKind,
    table: Option<&TableDescription>,
    error: Option<&str>,
) -> String {
    match table {
        Some(t) => render(root, t),
        None => format!(
            "{root}/ — {}: {}\n",
            kind.human(),
            error.unwrap_or("not described")
        ),
    }
}

/// `text` (a table's rendering) with its load line reading the table at `to` (an
/// absolute path, for code run elsewhere) instead of at the lake-relative `root`.
pub fn load_at(text: &str, root: &str, to: &str) -> String {
    text.lines()
        .map(|l| match l.strip_prefix("load: ") {
            Some(call) => format!("load: {}\n", moved(call, root, to)),
            None => format!("{l}\n"),
        })
        .collect()
}

/// `call` with its first string literal that is the folder `root` or a path under it
/// (`"sales"`, `"ice/metadata/v2.metadata.json"`) starting at `to` instead: a literal
/// `root` is only the prefix of (`"salesforce"`) stays.
fn moved(call: &str, root: &str, to: &str) -> String {
    let from = format!("\"{root}");
    let at = call
        .match_indices(&from)
        .map(|(i, _)| i)
        .find(|i| matches!(call.as_bytes().get(i + from.len()), Some(b'"' | b'/')));
    match at {
        Some(i) => format!("{}\"{to}{}", &call[..i], &call[i + from.len()..]),
        None => call.to_string(),
    }
}

/// The line a member's description carries: which table it belongs to.
pub fn member_line(root: &str, kind: super::TableKind, version: Option<&str>) -> String {
    match version {
        Some(v) if kind == super::TableKind::Iceberg => {
            format!("member of {} {root}/ (snapshot {v})", kind.human())
        }
        Some(v) => format!("member of {} {root}/ (version {v})", kind.human()),
        None => format!("member of {} {root}/", kind.human()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::{Partition, TableColumn, TableKind};

    #[test]
    fn the_text_names_kind_rows_version_partitions_and_load() {
        let t = TableDescription {
            kind: TableKind::Delta,
            columns: vec![TableColumn {
                name: "id".into(),
                kind: "long".into(),
                partition: false,
                min: Some("1".into()),
                max: Some("9".into()),
                nulls: Some(0),
            }],
            partitions: vec![Partition {
                name: "region".into(),
                values: vec!["eu".into()],
                distinct: 3,
            }],
            rows: Some(9),
            deleted_rows: Some(3),
            data_files: 2,
            bytes: 2048,
            version: Some("2".into()),
            written_at: None,
            time_coverage: None,
            load: "deltalake.DeltaTable(\"sales\").to_pandas()".into(),
            notes: vec![],
        };
        let text = render("sales", &t);
        assert!(
            text.starts_with(
                "sales/ — Delta table: 9 rows (not counting 3 deleted by deletion vectors), 1 columns, 2 data files"
            ),
            "{text}"
        );
        assert!(text.contains("version 2"), "{text}");
        assert!(text.contains("region: eu, … (3 in all)"), "{text}");
        assert!(text.contains("id  long  range 1 … 9"), "{text}");
        assert!(
            text.ends_with("load: deltalake.DeltaTable(\"sales\").to_pandas()\n"),
            "{text}"
        );
        let moved = load_at(&text, "sales", "/lake/sales");
        assert!(
            moved.ends_with("load: deltalake.DeltaTable(\"/lake/sales\").to_pandas()\n"),
            "{moved}"
        );
        assert!(moved.starts_with("sales/ — Delta table"), "{moved}");
        // Only the table's own path moves, not a literal it is the prefix of.
        assert_eq!(
            load_at("load: f(\"tx\", g(\"t\"))\n", "t", "/lake/t"),
            "load: f(\"tx\", g(\"/lake/t\"))\n"
        );
        assert_eq!(
            load_at("load: h(\"t/metadata/v1.metadata.json\")\n", "t", "/l/t"),
            "load: h(\"/l/t/metadata/v1.metadata.json\")\n"
        );
        assert_eq!(
            member_line("sales", TableKind::Delta, Some("2")),
            "member of Delta table sales/ (version 2)"
        );
    }
}
