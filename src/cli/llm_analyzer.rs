//! `lakestar index --llm-analyzer`: after the native index run, describe every file
//! again with an LLM-written script (DS-STAR §3.1), cached in the catalog by (content
//! hash, model, prompt hash).

use super::ask::AgentArgs;
use crate::agent::analyzer::{self, Job, Outcome};
use crate::agent::llm::Role;
use crate::agent::prompts::Template;
use crate::agent::{Agent, AgentError};
use anyhow::Result;
use lakestar_index::catalog::{Hash, LlmAnalyzerKey, LlmDescription};
use lakestar_index::lock::WriterLock;
use lakestar_index::{CatalogReader, CatalogWriter, FileState};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The directory of the index where describer scripts run (one subdirectory per file,
/// removed when it is done): never in the lake.
const WORK_DIR: &str = "llm-analyzer";

/// Options of the LLM analyzer pass.
#[derive(Debug, clap::Args)]
pub(crate) struct LlmAnalyzerArgs {
    /// Also describe every file with an LLM-written describer script (DS-STAR's
    /// analyzer), shown to `ask`; needs an LLM or --replay.
    #[arg(long)]
    pub llm_analyzer: bool,
    /// Debugger attempts per failing describer script.
    #[arg(long, value_name = "N", default_value_t = 3, requires = "llm_analyzer")]
    pub debug_attempts: usize,
    /// Describe again the files whose describer failed before (else only a new content,
    /// model or prompt retries them).
    #[arg(long, requires = "llm_analyzer")]
    pub llm_retry_failed: bool,
    /// Wall-clock limit of one describer script, in seconds.
    #[arg(
        long,
        value_name = "SECS",
        default_value_t = 120,
        requires = "llm_analyzer"
    )]
    pub timeout: u64,
    /// Python interpreter for the describer scripts [default: the venv of `lakestar
    /// setup python`, else python3].
    #[arg(long, value_name = "PATH", requires = "llm_analyzer")]
    pub python: Option<PathBuf>,
    /// Directory of prompt overrides (analyzer.md, debugger_analyzer.md).
    #[arg(long, value_name = "DIR", requires = "llm_analyzer")]
    pub prompts: Option<PathBuf>,
    /// Store every LLM request and reply in this cassette (JSON lines).
    #[arg(
        long,
        value_name = "FILE",
        conflicts_with = "replay",
        requires = "llm_analyzer"
    )]
    pub record: Option<PathBuf>,
    /// Answer LLM requests from this cassette, without a network or a configured model.
    #[arg(long, value_name = "FILE", requires = "llm_analyzer")]
    pub replay: Option<PathBuf>,
    /// Files described at once (tests use 1 for a deterministic order of requests).
    #[arg(long, hide = true, value_name = "N", default_value_t = analyzer::CONCURRENCY)]
    pub llm_jobs: usize,
}

/// What the pass did, in files (copies of one content count once each).
#[derive(Debug, Default, Serialize)]
pub(crate) struct LlmSummary {
    /// The analyzer role's model (part of the cache key).
    pub model: String,
    /// The analyzer prompt's hash (part of the cache key).
    pub prompt: String,
    /// Files described by a script in this run.
    pub described: u64,
    /// Files whose result was already stored (success or failure).
    pub cached: u64,
    /// Files whose describer still failed after the debugger (in this run, or before
    /// and not retried); they keep their native description.
    pub failed: u64,
    /// LLM calls made.
    pub llm_calls: u64,
    /// What stopped the pass, when something did (files finished before are stored).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Failed files and why (not in the JSON: the catalog keeps them).
    #[serde(skip)]
    pub problems: Vec<(String, String)>,
}

impl LlmAnalyzerArgs {
    fn agent_args(&self) -> AgentArgs {
        AgentArgs {
            k: None,
            budget: 0,
            max_rounds: 0,
            debug_attempts: self.debug_attempts,
            timeout: self.timeout,
            llm_timeout: None,
            python: self.python.clone(),
            prompts: self.prompts.clone(),
            record: self.record.clone(),
            replay: self.replay.clone(),
            rules: Default::default(),
        }
    }
}

/// The agent of the pass, made before the native run so that a missing LLM or a bad
/// prompt directory is said at once.
pub(crate) fn agent(a: &LlmAnalyzerArgs, index_dir: &Path) -> Result<Agent> {
    a.agent_args().agent(Some(index_dir))
}

/// Run the pass over the index at `index_dir`, under its writer lock. The summary is
/// returned also when the pass stopped on an error (the error beside it, and its
/// message in `error`); `Err` is for a pass that could not start (no LLM configured,
/// bad prompts, locked index).
pub(crate) fn run(
    a: &LlmAnalyzerArgs,
    agent: Agent,
    index_dir: &Path,
) -> Result<(LlmSummary, Option<AgentError>)> {
    let model = agent.llm.model_for(Role::Analyzer).ok_or_else(|| {
        super::UsageError(
            "no model for the analyzer role: set LAKESTAR_MODEL or [llm] model in lakestar.toml, or replay a cassette that recorded analyzer requests".into(),
        )
    })?;
    let prompt = agent.prompts.hash(Template::Analyzer);
    let lock = WriterLock::acquire(index_dir)?;
    let lake = CatalogReader::open(index_dir)?.lake_root()?;
    let catalog = CatalogWriter::open(lock, &lake)?;
    catalog.set_llm_analyzer_key(&LlmAnalyzerKey {
        model: model.clone(),
        prompt: prompt.clone(),
    })?;
    let mut summary = LlmSummary {
        model: model.clone(),
        prompt: prompt.clone(),
        ..Default::default()
    };

    // Described files by content: one script per distinct content.
    let mut by_hash: BTreeMap<Hash, Vec<String>> = BTreeMap::new();
    for row in catalog.load_files()?.into_values() {
        if let (FileState::Ok, Some(h)) = (row.state, row.hash) {
            by_hash.entry(h).or_default().push(row.path);
        }
    }
    let mut todo: Vec<(Hash, Vec<String>)> = Vec::new();
    for (hash, mut paths) in by_hash {
        paths.sort();
        let n = paths.len() as u64;
        match catalog.llm_description(&hash, &model, &prompt)? {
            Some(d) if d.text.is_some() => summary.cached += n,
            Some(d) if !a.llm_retry_failed => {
                summary.cached += n;
                summary.failed += n;
                let why = d.error.unwrap_or_default();
                for p in &paths {
                    summary.problems.push((p.clone(), exception_line(&why)));
                }
            }
            _ => todo.push((hash, paths)),
        }
    }
    todo.sort_by(|x, y| x.1[0].cmp(&y.1[0]));
    let root = index_dir.join(WORK_DIR);
    let jobs: Vec<Job> = todo
        .iter()
        .map(|(hash, paths)| Job {
            path: lake.join(&paths[0]),
            work_dir: root.join(hex16(hash)),
        })
        .collect();
    let agent = Arc::new(agent);
    let stored = super::ask::runtime()?.block_on(analyzer::describe_all(
        agent.clone(),
        &jobs,
        a.llm_jobs,
        a.debug_attempts,
        |i, d| {
            let (hash, paths) = &todo[i];
            let n = paths.len() as u64;
            let (text, error) = match d.outcome {
                Outcome::Described(t) => {
                    summary.described += n;
                    (Some(t), None)
                }
                Outcome::Failed(e) => {
                    summary.failed += n;
                    for p in paths {
                        summary.problems.push((p.clone(), exception_line(&e)));
                    }
                    (None, Some(e))
                }
            };
            catalog.put_llm_description(
                hash,
                &model,
                &prompt,
                &LlmDescription {
                    text,
                    script: d.script,
                    error,
                    attempts: d.attempts,
                    created_at: lakestar_index::now_ms(),
                },
            )?;
            Ok(())
        },
    ));
    // Only scratch directories: whatever is left of them can go.
    let _ = std::fs::remove_dir_all(&root);
    summary.llm_calls = agent.llm.totals().calls;
    let stopped = stored.err();
    if let Some(e) = &stopped {
        summary.error = Some(e.to_string());
    }
    Ok((summary, stopped))
}

/// The last non-empty line of an error (the exception of a traceback).
fn exception_line(error: &str) -> String {
    error
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("failed")
        .trim()
        .to_string()
}

fn hex16(h: &Hash) -> String {
    h[..8].iter().map(|b| format!("{b:02x}")).collect()
}
