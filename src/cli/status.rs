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
            Some(g) if v.kind == "hnsw" => println!(
                "vectors:    {} by {}, HNSW generation {g}: {} points for {} files, {} tombstones, {} searched exactly beside it",
                v.live, v.embedder, v.points, v.files, v.tombstones, v.delta
            ),
            _ => println!(
                "vectors:    {} by {}, exact search (a graph is built from {})",
                v.live, v.embedder, v.exact_below
            ),
        }
    }
    println!(
        "last index: {}",
        status.last_index_at.as_deref().unwrap_or("never finished")
    );
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
