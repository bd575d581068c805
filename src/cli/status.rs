//! `lakestar status`.

use super::output::print_json;
use super::IndexDirArg;
use anyhow::Result;
use lakestar_index::analyze::human_size as size;
use lakestar_index::locate;

/// Arguments of `lakestar status`.
#[derive(Debug, clap::Args)]
pub(crate) struct StatusArgs {
    #[command(flatten)]
    index: IndexDirArg,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(a: StatusArgs) -> Result<()> {
    let cwd = std::env::current_dir()?;
    let dir = locate::find_index(a.index.index.as_deref(), &cwd)?;
    let status = crate::service::status::status(&dir)?;
    if a.json {
        return print_json(&status);
    }
    let join = |m: &std::collections::BTreeMap<String, u64>| {
        if m.is_empty() {
            return "none".to_string();
        }
        m.iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    println!("lake:       {}", status.lake_root.display());
    println!(
        "index:      {} ({})",
        status.index_dir.display(),
        size(status.index_bytes)
    );
    println!("files:      {} ({})", status.files, size(status.bytes));
    println!("by format:  {}", join(&status.by_format));
    println!("by state:   {}", join(&status.by_state));
    println!("cache:      {} descriptions", status.cached_descriptions);
    println!(
        "collections: {} (`lakestar collections`)",
        status.collections
    );
    if let Some(v) = &status.vectors {
        match v.generation {
            Some(g) if v.kind == "hnsw" || v.kind == "codes" => println!(
                "vectors:    {} by {}, {} generation {g}: {} points for {} files, {} tombstones, {} searched exactly beside it",
                v.live,
                v.embedder,
                if v.kind == "hnsw" { "HNSW" } else { "scanned (codes only)" },
                v.points,
                v.files,
                v.tombstones,
                v.delta
            ),
            _ => println!(
                "vectors:    {} by {}, exact search (a graph is built from {})",
                v.live, v.embedder, v.exact_below
            ),
        }
        if v.graph_wanted {
            println!(
                "            too many codes for a server to scan quickly: `lakestar index --graph`, `watch` or `serve --watch` builds the graph it would walk"
            );
        }
    }
    println!(
        "last index: {}",
        status.last_index_at.as_deref().unwrap_or("never finished")
    );
    if let Some(r) = &status.last_index {
        println!("last run:   {}", last_run(r));
    }
    if status.errors.is_empty() {
        println!("errors:     none");
    } else {
        println!("errors:     {}", status.errors.len());
        for e in &status.errors {
            println!("  {} [{}]: {}", e.path, e.state, e.error);
        }
    }
    Ok(())
}

/// The last run's counts in words, from its recorded report (fields a run of an older
/// lakestar did not record are left out).
fn last_run(r: &serde_json::Value) -> String {
    let n = |k: &str| r.get(k).and_then(serde_json::Value::as_u64);
    let mut parts = Vec::new();
    if let Some(seen) = n("files_seen") {
        parts.push(format!("{} seen", super::output::count(seen, "file")));
    }
    for k in [
        "added",
        "modified",
        "deleted",
        "renamed",
        "unchanged",
        "analyzed",
    ] {
        if let Some(v) = n(k) {
            parts.push(format!("{v} {k}"));
        }
    }
    if let Some(v) = n("cache_hits") {
        parts.push(format!("{v} from cache"));
    }
    if let Some(v) = n("errors") {
        parts.push(super::output::count(v, "error"));
    }
    let mut line = parts.join(", ");
    if let Some(s) = r.get("seconds").and_then(serde_json::Value::as_f64) {
        line.push_str(&format!(" in {s:.2}s"));
    }
    line
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_last_run_reads_as_counts() {
        let r = serde_json::json!({"files_seen": 1, "added": 1, "modified": 0, "deleted": 0,
            "renamed": 0, "unchanged": 0, "analyzed": 1, "cache_hits": 0, "errors": 2,
            "seconds": 0.5});
        assert_eq!(
            super::last_run(&r),
            "1 file seen, 1 added, 0 modified, 0 deleted, 0 renamed, 0 unchanged, 1 analyzed, 0 from cache, 2 errors in 0.50s"
        );
    }
}
