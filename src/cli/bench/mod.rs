//! `lakestar bench`: run a benchmark's questions through the agent.
//!
//! - `dabstep`: DABStep's task format, written as a submission file.
//! - `dabench`: InfiAgent-DABench, graded as the benchmark does (`bench::dabench`), with
//!   the ablation modes of the loop.
//! - `devset`: write the generated retrieval development set (no agent involved; the
//!   default `devset` feature).

mod dabench;
mod dabstep;
#[cfg(feature = "devset")]
mod devset;

use crate::agent::{AgentError, Summary};
use crate::cli::ask::{until_interrupted, AgentArgs, Printer};
use crate::service::ask::AskRequest;
use anyhow::{Context, Result};
use lakestar_index::{index, locate, IndexOptions};
use std::path::{Path, PathBuf};

/// Arguments of `lakestar bench`.
#[derive(Debug, clap::Args)]
pub(crate) struct BenchArgs {
    #[command(subcommand)]
    what: BenchWhat,
}

#[derive(Debug, clap::Subcommand)]
enum BenchWhat {
    /// DABStep: questions over a shared set of context files, answers in a given format.
    Dabstep(dabstep::DabstepArgs),
    /// InfiAgent-DABench: questions over CSV tables, graded (PASQ, ABQ, UASQ by level).
    Dabench(dabench::DabenchArgs),
    /// Write the generated retrieval development set (a lake and its questions, grouped
    /// by retrieval mechanism) and print the commands that index and measure it.
    #[cfg(feature = "devset")]
    Devset(devset::DevsetArgs),
}

pub(crate) fn run(a: BenchArgs) -> Result<()> {
    match a.what {
        BenchWhat::Dabstep(a) => dabstep::run(a),
        BenchWhat::Dabench(a) => dabench::run(a),
        #[cfg(feature = "devset")]
        BenchWhat::Devset(a) => devset::run(a),
    }
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_os_string();
    s.push(suffix);
    PathBuf::from(s)
}

/// The index of `lake`, brought up to date (a no-op when nothing changed): `given`, else
/// the lake's own index when it has one, else `fallback`.
fn prepare_index(lake: &Path, given: Option<PathBuf>, fallback: &Path) -> Result<PathBuf> {
    let index_dir = match given {
        Some(d) => d,
        None => {
            let own = locate::default_index_dir(lake);
            if locate::find_index(Some(&own), lake).is_ok() {
                own
            } else {
                fallback.to_path_buf()
            }
        }
    };
    let report = index(
        lake,
        &index_dir,
        &IndexOptions::default(),
        &lakestar_index::indexer::NoProgress,
    )
    .with_context(|| format!("indexing {}", lake.display()))?;
    eprintln!(
        "index {}: {} file(s)",
        index_dir.display(),
        report.files_seen
    );
    Ok(index_dir)
}

/// One question through the service's `ask` into `run_dir` (cleared first: a rerun
/// replaces it), with an agent of its own so that its summary counts its own tokens.
fn run_one(
    rt: &tokio::runtime::Runtime,
    args: &AgentArgs,
    index_dir: &Path,
    request: &AskRequest,
    run_dir: &Path,
) -> Result<(Summary, Option<AgentError>)> {
    if run_dir.exists() {
        std::fs::remove_dir_all(run_dir)
            .with_context(|| format!("clearing {}", run_dir.display()))?;
    }
    let agent = args.agent(Some(index_dir))?;
    let (files, _) = request.files(
        Some(index_dir),
        None,
        &std::env::current_dir()?,
        agent.prompts.methods(),
    )?;
    let printer = Printer::new();
    let ran = until_interrupted(
        rt,
        run_dir,
        request.run(&agent, &files, Some(index_dir), run_dir, &|p| {
            printer.show(p)
        }),
    );
    drop(printer);
    Ok(ran??)
}
