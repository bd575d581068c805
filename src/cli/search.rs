//! `lakestar search` and `lakestar eval retrieval`.

use super::output::print_json;
use super::{IndexDirArg, UsageError};
use crate::service::{Lake, MAX_K};
use anyhow::{Context, Result};
use lakestar_index::locate;
use lakestar_index::search::engine::{SearchOptions, Searcher};
use lakestar_index::search::eval;
use lakestar_index::search::glob::PathGlob;
use lakestar_index::{Format, UserError};
use std::path::{Path, PathBuf};

/// Arguments of `lakestar search`.
#[derive(Debug, clap::Args)]
pub(crate) struct SearchArgs {
    /// The question or keywords.
    query: String,
    #[command(flatten)]
    index: IndexDirArg,
    /// Results to return (1 to 1000, as over HTTP and MCP).
    #[arg(short = 'k', default_value_t = 10, value_parser = parse_k)]
    k: usize,
    /// One JSON object per line per file, best first.
    #[arg(long)]
    json: bool,
    /// Only files of this format: a name (csv, excel, parquet, …) or an extension (xlsx,
    /// md, db, …).
    #[arg(long, value_parser = parse_format)]
    format: Option<Format>,
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
        /// Fold collections as `search` does (folded members do not count as
        /// retrieved); by default every file is ranked on its own.
        #[arg(long)]
        fold: bool,
        /// Also measure the relevance labels: how often a strong, fair or weak hit
        /// among the first 10 of `search` (folded) was relevant.
        #[arg(long)]
        labels: bool,
        /// Search each query as `ask` retrieves for it: without the method names it says
        /// ("Shapiro-Wilk test", …).
        #[arg(long)]
        as_agent: bool,
    },
}

/// The searcher of the index found from `explicit` or the current directory.
fn searcher(explicit: Option<&Path>) -> Result<Searcher> {
    let cwd = std::env::current_dir()?;
    let dir = locate::find_index(explicit, &cwd)?;
    Ok(Searcher::open_recorded(&dir)?)
}

fn parse_k(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(k) if (1..=MAX_K).contains(&k) => Ok(k),
        _ => Err(format!("-k must be a number from 1 to {MAX_K}")),
    }
}

fn parse_format(s: &str) -> Result<Format, String> {
    Format::from_user(s).map_err(|e| e.to_string())
}

/// `lakestar search`; whether anything matched (the exit code says so, as ripgrep's).
pub(crate) fn run_search(a: SearchArgs) -> Result<bool> {
    // Compiled before the index is opened: a bad glob is refused at once.
    let glob = PathGlob::filter(a.glob.as_deref())
        .map_err(|e| lakestar_index::Error::from(UserError::from(e)))?;
    let cwd = std::env::current_dir()?;
    // The service checks the query and `k` as it does for HTTP and MCP.
    let lake = Lake::open_once(&locate::find_index(a.index.index.as_deref(), &cwd)?)?;
    let hits = lake.search(
        &a.query,
        &SearchOptions {
            k: a.k,
            format: a.format,
            glob,
            expand: a.expand,
            ..Default::default()
        },
    )?;
    if a.json {
        for h in &hits {
            print_json(h)?;
        }
    } else if hits.is_empty() {
        eprintln!("no file matches; try other words, or drop --format / --glob");
    } else {
        super::hits::print(&a.query, &hits)?;
    }
    // The process ends here: the OS takes the searcher's memory back at once, where
    // dropping it frees a large index's graph point by point (a sixth of a 100k-file
    // search's time).
    std::mem::forget(lake);
    Ok(!hits.is_empty())
}

pub(crate) fn run_eval(a: EvalArgs) -> Result<()> {
    let EvalWhat::Retrieval {
        tasks,
        index,
        k,
        json,
        fold,
        labels,
        as_agent,
    } = a.what;
    let text =
        std::fs::read_to_string(&tasks).with_context(|| format!("reading {}", tasks.display()))?;
    let mut tasks =
        eval::read_tasks(&text).map_err(|e| UsageError(format!("{}: {e}", tasks.display())))?;
    if as_agent {
        let methods = crate::agent::methods::Methods::builtin();
        for t in &mut tasks {
            t.query = methods.without_names(&t.query);
        }
    }
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
    let labels = match labels {
        true => Some(eval::label_precision(&s, &tasks, 10)?),
        false => None,
    };
    if json {
        let mut v = serde_json::to_value(&report)?;
        if let Some(l) = &labels {
            v["labels"] = serde_json::to_value(l)?;
        }
        return print_json(&v);
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
    if let Some(labels) = &labels {
        println!("\nlabel    hits in top 10  relevant   first hits  relevant");
        for f in labels {
            let share = |a: usize, b: usize| {
                if b == 0 {
                    "—".to_string()
                } else {
                    format!("{:.2}", a as f64 / b as f64)
                }
            };
            println!(
                "{:<8} {:>14}  {:>8}   {:>10}  {:>8}",
                f.label.as_str(),
                f.hits,
                share(f.relevant, f.hits),
                f.first,
                share(f.first_relevant, f.first)
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
