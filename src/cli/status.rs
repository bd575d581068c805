//! `lakestar status`.

use super::output::{print_json, rfc3339};
use super::IndexDirArg;
use anyhow::Result;
use lakestar_index::analyze::human_size as size;
use lakestar_index::catalog::{CatalogStats, FileError};
use lakestar_index::search::ann::{self, VectorStatus};
use lakestar_index::search::sync::EMBEDDER_META;
use lakestar_index::{locate, Catalog};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Arguments of `lakestar status`.
#[derive(Debug, clap::Args)]
pub(crate) struct StatusArgs {
    #[command(flatten)]
    index: IndexDirArg,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct Status {
    lake_root: PathBuf,
    index_dir: PathBuf,
    index_bytes: u64,
    files: u64,
    bytes: u64,
    by_format: std::collections::BTreeMap<String, u64>,
    by_state: std::collections::BTreeMap<String, u64>,
    cached_descriptions: u64,
    collections: u64,
    errors: Vec<FileError>,
    last_index_at: Option<String>,
    last_index: Option<serde_json::Value>,
    /// Vector search: exact or the HNSW graph, with its generation, points, tombstones.
    vectors: Option<VectorStatus>,
}

fn dir_size(dir: &Path) -> u64 {
    walkdir_size(dir).unwrap_or(0)
}

fn walkdir_size(dir: &Path) -> std::io::Result<u64> {
    let mut total = 0;
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        let md = e.metadata()?;
        total += if md.is_dir() {
            walkdir_size(&e.path())?
        } else {
            md.len()
        };
    }
    Ok(total)
}

pub(crate) fn run(a: StatusArgs) -> Result<()> {
    let cwd = std::env::current_dir()?;
    let dir = locate::find_index(a.index.index.as_deref(), &cwd)?;
    let cat = Catalog::open_reader(&dir)?;
    let CatalogStats {
        files,
        bytes,
        by_format,
        by_state,
        cached_descriptions,
        errors,
    } = cat.stats()?;
    let last_ms: Option<i64> = cat
        .meta("last_index_finished_at")?
        .and_then(|s| s.parse().ok());
    let vectors = match cat.meta(EMBEDDER_META)? {
        Some(embedder) => Some(ann::status(&cat, &dir, &embedder)?),
        None => None,
    };
    let status = Status {
        lake_root: cat.lake_root()?,
        index_bytes: dir_size(&dir),
        index_dir: dir,
        files,
        bytes,
        by_format,
        by_state,
        cached_descriptions,
        collections: cat.collections()?.len() as u64,
        errors,
        last_index_at: last_ms.map(rfc3339),
        last_index: cat
            .meta("last_index_report")?
            .and_then(|s| serde_json::from_str(&s).ok()),
        vectors,
    };
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
