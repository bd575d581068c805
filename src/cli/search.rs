//! `lakestar search` and `lakestar eval retrieval`.

use super::output::print_json;
use super::{IndexDirArg, UsageError};
use anyhow::{Context, Result};
use lakestar_index::locate;
use lakestar_index::search::engine::{SearchOptions, Searcher};
use lakestar_index::search::eval;
use lakestar_index::search::glob::PathGlob;
use lakestar_index::UserError;
use std::path::{Path, PathBuf};

/// Arguments of `lakestar search`.
#[derive(Debug, clap::Args)]
pub(crate) struct SearchArgs {
    /// The question or keywords.
    query: String,
    #[command(flatten)]
    index: IndexDirArg,
    /// Results to return.
    #[arg(short = 'k', default_value_t = 10)]
    k: usize,
    /// One JSON object per line per file, best first.
    #[arg(long)]
    json: bool,
    /// Only files of this format (csv, json, parquet, ...).
    #[arg(long)]
    format: Option<String>,
    /// Only paths matching this glob (`sales/**/*.csv`; `*` and `?` stay within one
    /// directory, `**` spans directories; at most 512 bytes).
    #[arg(long)]
    glob: Option<String>,
    /// List every member of a collection on its own (by default, same-schema siblings
    /// fold into their best match, which names the others that matched).
    #[arg(long)]
    expand: bool,
}

/// Arguments of `lakestar eval`.
#[derive(Debug, clap::Args)]
pub(crate) struct EvalArgs {
    #[command(subcommand)]
    what: EvalWhat,
}

#[derive(Debug, clap::Subcommand)]
enum EvalWhat {
    /// Recall@K and MRR of `search` over a JSONL of {"query": …, "relevant": [paths or globs]}.
    Retrieval {
        /// The task file.
        #[arg(long)]
        tasks: PathBuf,
        #[command(flatten)]
        index: IndexDirArg,
        /// Cut-offs.
        #[arg(short = 'k', value_delimiter = ',', default_value = "1,5,10,20")]
        k: Vec<usize>,
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
        /// Fold collections as `search` does (the folded members a hit names do not
        /// count as retrieved). By default every file is ranked on its own: recall is a
        /// measure over files.
        #[arg(long)]
        fold: bool,
    },
}

/// The searcher of the index found from `explicit` or the current directory.
fn searcher(explicit: Option<&Path>) -> Result<Searcher> {
    let cwd = std::env::current_dir()?;
    let dir = locate::find_index(explicit, &cwd)?;
    Ok(Searcher::open_recorded(&dir)?)
}

pub(crate) fn run_search(a: SearchArgs) -> Result<()> {
    if a.k == 0 || a.k > 10_000 {
        return Err(UsageError("-k must be between 1 and 10000".into()).into());
    }
    // Compiled before the index is opened: a bad glob is refused at once.
    let glob = PathGlob::filter(a.glob.as_deref())
        .map_err(|e| lakestar_index::Error::from(UserError::from(e)))?;
    let s = searcher(a.index.index.as_deref())?;
    let hits = s.search(
        &a.query,
        &SearchOptions {
            k: a.k,
            format: a.format,
            glob,
            expand: a.expand,
        },
    )?;
    if a.json {
        for h in &hits {
            print_json(h)?;
        }
        return Ok(());
    }
    if hits.is_empty() {
        println!("no match");
    }
    for (i, h) in hits.iter().enumerate() {
        println!("{:>2}. {}  ({:.4})", i + 1, h.path, h.score);
        if !h.summary.is_empty() {
            println!("    {}", h.summary);
        }
        if !h.reasons.is_empty() {
            let why: Vec<String> = h.reasons.iter().map(ToString::to_string).collect();
            println!("    why: {}", why.join("; "));
        }
        if let Some(c) = &h.collection {
            print!(
                "    collection {} ({} files, {})",
                c.id, c.members, c.template
            );
            if c.matched > 0 {
                let more = c.matched - c.matching.len();
                print!("; also matching: {}", c.matching.join(", "));
                if more > 0 {
                    print!(" and {more} more");
                }
            }
            println!();
        }
        for m in &h.companions {
            println!("    with: {} ({})", m.path, m.why);
        }
    }
    Ok(())
}

pub(crate) fn run_eval(a: EvalArgs) -> Result<()> {
    let EvalWhat::Retrieval {
        tasks,
        index,
        k,
        json,
        fold,
    } = a.what;
    let text =
        std::fs::read_to_string(&tasks).with_context(|| format!("reading {}", tasks.display()))?;
    let tasks =
        eval::read_tasks(&text).map_err(|e| UsageError(format!("{}: {e}", tasks.display())))?;
    let s = searcher(index.index.as_deref())?;
    let mut failure = None;
    let report = eval::evaluate(&tasks, &k, |q, kmax| {
        eval::ranked_paths(&s, q, kmax, fold).unwrap_or_else(|e| {
            failure.get_or_insert(e);
            Vec::new()
        })
    });
    if let Some(e) = failure {
        return Err(e.into());
    }
    if json {
        return print_json(&report);
    }
    println!("{} tasks", report.tasks);
    for (k, r) in &report.recall {
        println!("recall@{k:<3} {r:.3}");
    }
    println!("MRR        {:.3}", report.mrr);
    if !report.groups.is_empty() {
        let ks: Vec<String> = report.recall.iter().map(|(k, _)| format!("@{k}")).collect();
        println!("\n{:<16} {:>5}  {}  MRR", "group", "tasks", ks.join("    "));
        for g in &report.groups {
            let r: Vec<String> = g.recall.iter().map(|(_, r)| format!("{r:.3}")).collect();
            println!(
                "{:<16} {:>5}  {}  {:.3}",
                g.group,
                g.tasks,
                r.join(" "),
                g.mrr
            );
        }
    }
    let misses: Vec<_> = report
        .results
        .iter()
        .filter(|r| r.first_hit.is_none_or(|h| h > 1))
        .collect();
    if !misses.is_empty() {
        println!("\nnot ranked first ({}):", misses.len());
        for m in misses {
            let at = m
                .first_hit
                .map_or("not found".to_string(), |h| format!("rank {h}"));
            println!(
                "  [{at}] {}\n      top: {}",
                m.query,
                m.top.iter().take(3).cloned().collect::<Vec<_>>().join(", ")
            );
        }
    }
    Ok(())
}
