//! `lakestar describe`.

use super::output::print_json;
use super::{IndexDirArg, UsageError};
use crate::service::describe::{described, described_table, one_table, Described, LlmShown};
use anyhow::{Context, Result};
use lakestar_index::analyze::RenderOptions;
use lakestar_index::catalog::FileRow;
use lakestar_index::{crawl, locate, render, CatalogReader};
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
    /// Budget of the text rendering, in bytes (0: no budget). A cut rendering ends
    /// with a line saying what was left out and the budget that shows it all.
    #[arg(long, value_name = "BYTES", default_value_t = 2048)]
    max_bytes: usize,
    /// Only this table of a file of several (a workbook, a database, a page): by name or
    /// by number (1-based, as `head` lists them).
    #[arg(long, value_name = "NAME|N")]
    table: Option<String>,
    /// Show the description written by `index --llm-analyzer` (the output of its
    /// describer script) instead of the native one; with --json, add it as `llm`.
    #[arg(long)]
    llm: bool,
}

/// The index that may know `arg`, its lake root and the lake-relative paths `arg` may
/// stand for.
fn candidates(
    arg: &Path,
    explicit: Option<&Path>,
    cwd: &Path,
) -> Result<Option<(CatalogReader, PathBuf, Vec<String>)>> {
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
    let cat = CatalogReader::open(&dir)?;
    let lake = cat.lake_root()?;
    let mut candidates = Vec::new();
    if let Ok(canon) = abs.canonicalize() {
        if let Some(rel) = crawl::relative(&lake, &canon) {
            candidates.push(rel);
        }
    }
    if arg.is_relative() {
        let s = arg.to_string_lossy().replace('\\', "/");
        candidates.push(s.trim_start_matches("./").trim_end_matches('/').to_string());
    }
    Ok(Some((cat, lake, candidates)))
}

/// The catalog row for `arg` and the lake root, when some index knows the file.
pub(super) fn lookup(
    arg: &Path,
    explicit: Option<&Path>,
    cwd: &Path,
) -> Result<Option<(CatalogReader, PathBuf, FileRow)>> {
    let Some((cat, lake, candidates)) = candidates(arg, explicit, cwd)? else {
        return Ok(None);
    };
    for rel in candidates {
        if let Some(row) = cat.file(&rel)? {
            return Ok(Some((cat, lake, row)));
        }
    }
    Ok(None)
}

/// The table whose folder `arg` names (`sales/`), when some index holds one.
fn lookup_table(arg: &Path, explicit: Option<&Path>, cwd: &Path) -> Result<Option<Described>> {
    let Some((cat, _, candidates)) = candidates(arg, explicit, cwd)? else {
        return Ok(None);
    };
    for rel in candidates.iter().filter(|r| !r.is_empty()) {
        if let Some(d) = described_table(&cat, rel)? {
            return Ok(Some(d));
        }
    }
    Ok(None)
}

pub(crate) fn run(mut a: DescribeArgs) -> Result<()> {
    let cwd = std::env::current_dir()?;
    if a.max_bytes == 0 {
        a.max_bytes = usize::MAX;
    }
    let opts = RenderOptions {
        max_bytes: a.max_bytes,
    };
    let out = match lookup(&a.path, a.index.index.as_deref(), &cwd)? {
        Some((cat, lake, row)) => {
            let out = described(&cat, &lake, &row, a.max_bytes, a.llm)?;
            if out.stale && !a.json {
                eprintln!(
                    "note: {} changed since it was indexed; run `lakestar index` to refresh",
                    row.path
                );
            }
            out
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
            if let Some(table) = lookup_table(&a.path, a.index.index.as_deref(), &cwd)? {
                if a.json {
                    return print_json(&table);
                }
                print!("{}", table.text);
                return Ok(());
            }
            if file.is_dir() {
                return Err(UsageError(format!(
                    "{} is a directory; describe takes one file (`lakestar search QUESTION` finds files, `lakestar status` shows what an index holds)",
                    a.path.display()
                ))
                .into());
            }
            if !file.is_file() {
                let what = match file.try_exists() {
                    Ok(false) => "does not exist",
                    _ => "is not a readable file",
                };
                return Err(UsageError(format!(
                    "{} {what}, and no index lists it; give a path relative to the lake root or the current directory",
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
                table: None,
            }
        }
    };
    let mut out = out;
    if let Some(name) = &a.table {
        let one = match &out.description {
            Some(d) => one_table(d, name).map_err(crate::service::ServiceError::Preview)?,
            None => None,
        };
        let Some(one) = one else {
            return Err(UsageError(format!(
                "{} is not a file of several tables; --table picks one of a workbook's sheets, a database's tables or a page's tables",
                out.path
            ))
            .into());
        };
        out.text = render(&out.path, &one, opts);
        out.description = Some(one);
    }
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
