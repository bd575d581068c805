//! `lakestar describe`.

use super::output::print_json;
use super::{IndexDirArg, UsageError};
use anyhow::{Context, Result};
use lakestar_index::analyze::{RenderOptions, TimeCoverage};
use lakestar_index::catalog::FileRow;
use lakestar_index::{crawl, locate, render, Catalog, Description};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Arguments of `lakestar describe`.
#[derive(Debug, clap::Args)]
pub(crate) struct DescribeArgs {
    /// The file: relative to the lake root (or to the current directory), or absolute.
    path: PathBuf,
    #[command(flatten)]
    index: IndexDirArg,
    /// Print the structured description as JSON.
    #[arg(long)]
    json: bool,
    /// Budget of the text rendering, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = 2048)]
    max_bytes: usize,
    /// Show the description written by `index --llm-analyzer` (the output of its
    /// describer script) instead of the native one; with --json, add it as `llm`.
    #[arg(long)]
    llm: bool,
}

/// What `index --llm-analyzer` stored for a file.
#[derive(Serialize)]
struct LlmShown {
    model: String,
    prompt: String,
    /// The describer's output; absent when it failed.
    text: Option<String>,
    /// Why it failed.
    error: Option<String>,
    /// The last script run.
    script: String,
    attempts: u32,
}

/// The LLM description of `row` under the index's recorded (model, prompt).
fn llm_shown(cat: &Catalog, row: &FileRow) -> Result<Option<LlmShown>> {
    let (Some(key), Some(hash)) = (cat.llm_analyzer_key()?, row.hash.as_ref()) else {
        return Ok(None);
    };
    Ok(cat
        .llm_description(hash, &key.model, &key.prompt)?
        .map(|d| LlmShown {
            model: key.model,
            prompt: key.prompt,
            text: d.text,
            error: d.error,
            script: d.script,
            attempts: d.attempts,
        }))
}

#[derive(Serialize)]
struct Described {
    /// Relative to the lake when indexed, else as given.
    path: String,
    /// Taken from an index (false: analyzed on the fly).
    indexed: bool,
    /// The file changed on disk since it was indexed.
    stale: bool,
    size: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    hash: Option<String>,
    format: String,
    state: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    /// The time span covered: from the content when it shows one, else from the path.
    time_coverage: Option<TimeCoverage>,
    /// The collection the file belongs to (see `lakestar collections`).
    #[serde(skip_serializing_if = "Option::is_none")]
    collection: Option<lakestar_index::collect::Collection>,
    description: Option<Description>,
    text: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    llm: Option<LlmShown>,
}

fn hex(h: &[u8]) -> String {
    h.iter().map(|b| format!("{b:02x}")).collect()
}

/// The catalog row for `arg` and the lake root, when some index knows the file.
fn lookup(
    arg: &Path,
    explicit: Option<&Path>,
    cwd: &Path,
) -> Result<Option<(Catalog, PathBuf, FileRow)>> {
    let abs = if arg.is_absolute() {
        arg.to_path_buf()
    } else {
        cwd.join(arg)
    };
    let dir = match explicit {
        Some(d) => Some(locate::find_index(Some(d), cwd)?),
        None => locate::find_upwards(cwd).or_else(|| abs.parent().and_then(locate::find_upwards)),
    };
    let Some(dir) = dir else { return Ok(None) };
    let cat = Catalog::open_reader(&dir)?;
    let lake = cat.lake_root()?;
    let mut candidates = Vec::new();
    if let Ok(canon) = abs.canonicalize() {
        if let Some(rel) = crawl::relative(&lake, &canon) {
            candidates.push(rel);
        }
    }
    if arg.is_relative() {
        let s = arg.to_string_lossy().replace('\\', "/");
        candidates.push(s.trim_start_matches("./").to_string());
    }
    for rel in candidates {
        if let Some(row) = cat.file(&rel)? {
            return Ok(Some((cat, lake, row)));
        }
    }
    Ok(None)
}

pub(crate) fn run(a: DescribeArgs) -> Result<()> {
    let cwd = std::env::current_dir()?;
    let opts = RenderOptions {
        max_bytes: a.max_bytes,
    };
    let out = match lookup(&a.path, a.index.index.as_deref(), &cwd)? {
        Some((cat, lake, row)) => {
            let description = match (&row.hash, &row.analyzer) {
                (Some(h), Some(k)) => cat.description(h, k)?,
                _ => None,
            };
            let stale = std::fs::metadata(lake.join(&row.path))
                .map(|md| md.len() != row.size || crawl::mtime_ns(&md) != row.mtime_ns)
                .unwrap_or(true);
            if stale && !a.json {
                eprintln!(
                    "note: {} changed since it was indexed; run `lakestar index` to refresh",
                    row.path
                );
            }
            let text = match &description {
                Some(d) => render(&row.path, d, opts),
                None => format!(
                    "{} — {}\n",
                    row.path,
                    row.error.as_deref().unwrap_or("no description stored")
                ),
            };
            Described {
                path: row.path.clone(),
                indexed: true,
                stale,
                size: row.size,
                hash: row.hash.as_ref().map(|h| hex(h)),
                format: row.format.as_str().into(),
                state: row.state.as_str().into(),
                error: row.error.clone(),
                time_coverage: row.time.clone(),
                collection: match cat.collection_of(&row.path)? {
                    Some(id) => cat.collection(&id)?,
                    None => None,
                },
                description,
                text,
                llm: if a.llm { llm_shown(&cat, &row)? } else { None },
            }
        }
        None => {
            let file = if a.path.is_absolute() {
                a.path.clone()
            } else {
                cwd.join(&a.path)
            };
            if a.llm {
                return Err(UsageError(format!(
                    "no index lists {}, so it has no LLM description; run `lakestar index LAKE --llm-analyzer`",
                    a.path.display()
                ))
                .into());
            }
            if !file.is_file() {
                return Err(UsageError(format!(
                    "{} is not a file (and no index lists it); give a path relative to the lake root or the current directory",
                    a.path.display()
                ))
                .into());
            }
            let d = lakestar_index::describe_file(&file)
                .with_context(|| format!("describing {}", a.path.display()))?;
            let shown = a.path.to_string_lossy().into_owned();
            Described {
                text: render(&shown, &d, opts),
                path: shown.clone(),
                indexed: false,
                stale: false,
                size: d.size,
                hash: None,
                format: d.format.as_str().into(),
                state: if d.error.is_some() { "error" } else { "ok" }.into(),
                error: d.error.clone(),
                time_coverage: d
                    .time_coverage
                    .clone()
                    .or_else(|| lakestar_index::analyze::time::from_path(&shown)),
                collection: None,
                description: Some(d),
                llm: None,
            }
        }
    };
    if a.json {
        return print_json(&out);
    }
    if a.llm {
        return match &out.llm {
            Some(LlmShown {
                text: Some(text), ..
            }) => {
                println!("{} — described by an LLM-written script\n{text}", out.path);
                Ok(())
            }
            Some(LlmShown {
                error: Some(error), ..
            }) => Err(UsageError(format!(
                "the describer script of {} failed, so `ask` uses its native description; `lakestar index --llm-analyzer --llm-retry-failed` tries again. Its error:\n{error}",
                out.path
            ))
            .into()),
            _ => Err(UsageError(format!(
                "{} has no LLM description for the index's recorded model and prompt; run `lakestar index LAKE --llm-analyzer`",
                out.path
            ))
            .into()),
        };
    }
    print!("{}", out.text);
    if let Some(c) = &out.collection {
        println!(
            "  member of collection {} ({} files; `lakestar collections {}`)",
            c.template, c.members, c.id
        );
    }
    Ok(())
}
