//! `lakestar collections`.

use super::output::print_json;
use super::{IndexDirArg, UsageError};
use anyhow::Result;
use lakestar_index::analyze::RenderOptions;
use lakestar_index::{locate, render, CatalogReader};

/// Arguments of `lakestar collections`.
#[derive(Debug, clap::Args)]
pub(crate) struct CollectionsArgs {
    /// Show this collection in full (its id, or its template).
    collection: Option<String>,
    #[command(flatten)]
    index: IndexDirArg,
    /// Print JSON: one object per collection and line.
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(a: CollectionsArgs) -> Result<()> {
    let cwd = std::env::current_dir()?;
    let dir = locate::find_index(a.index.index.as_deref(), &cwd)?;
    let cat = CatalogReader::open(&dir)?;
    let all = cat.collections()?;
    let Some(wanted) = a.collection else {
        if all.is_empty() && !a.json {
            println!("no collections: no group of at least {} same-schema files whose paths differ only in numbers, or whose names in one folder differ in a word", lakestar_index::collect::MIN_MEMBERS);
        }
        for c in &all {
            if a.json {
                print_json(c)?;
            } else {
                print!("{}", lakestar_index::collect::render(c, None));
            }
        }
        return Ok(());
    };
    let Some(c) = all.iter().find(|c| c.id == wanted || c.template == wanted) else {
        return Err(UsageError(format!(
            "no collection {wanted:?}; `lakestar collections` lists them"
        ))
        .into());
    };
    if a.json {
        return print_json(c);
    }
    let schema = match cat.file(&c.representative)? {
        Some(row) => match (&row.hash, &row.analyzer) {
            (Some(h), Some(k)) => cat
                .description(h, k)?
                .map(|d| render(&row.path, &d, RenderOptions { max_bytes: 1536 })),
            _ => None,
        },
        None => None,
    };
    print!("{}", lakestar_index::collect::render(c, schema.as_deref()));
    Ok(())
}
