//! `lakestar bench dabstep`: run a task file in DABStep's format through the agent and
//! write a submission (`task_id`, `agent_answer`, `reasoning_trace` per line).

use super::ask::{print_progress, runtime, until_interrupted, AgentArgs};
use super::UsageError;
use crate::agent::context;
use crate::agent::run::numbered;
use anyhow::{Context, Result};
use lakestar_index::{index, locate, IndexOptions};
use serde::Deserialize;
use std::io::Write;
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
    Dabstep {
        /// Tasks, one JSON object per line: task_id, question, guidelines.
        #[arg(long)]
        tasks: PathBuf,
        /// The directory of the context files.
        #[arg(long)]
        lake: PathBuf,
        /// The submission file to write (JSON lines).
        #[arg(long)]
        out: PathBuf,
        /// Index of the lake [default: LAKE/.lakestar if present, else OUT.index, built
        /// on first use].
        #[arg(long, value_name = "DIR")]
        index: Option<PathBuf>,
        /// Only these task ids (comma-separated).
        #[arg(long, value_delimiter = ',')]
        only: Vec<String>,
        #[command(flatten)]
        agent: AgentArgs,
    },
}

#[derive(Deserialize)]
struct Task {
    #[serde(deserialize_with = "id_string")]
    task_id: String,
    question: String,
    #[serde(default)]
    guidelines: Option<String>,
}

/// Task ids are strings in DABStep's files and numbers in some copies.
fn id_string<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let v = serde_json::Value::deserialize(d)?;
    match v {
        serde_json::Value::String(s) => Ok(s),
        serde_json::Value::Number(n) => Ok(n.to_string()),
        other => Err(serde::de::Error::custom(format!(
            "task_id must be a string or number, not {other}"
        ))),
    }
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_os_string();
    s.push(suffix);
    PathBuf::from(s)
}

pub(crate) fn run(a: BenchArgs) -> Result<()> {
    let BenchWhat::Dabstep {
        tasks,
        lake,
        out,
        index: index_arg,
        only,
        agent,
    } = a.what;
    let text = std::fs::read_to_string(&tasks)
        .map_err(|e| UsageError(format!("cannot read --tasks {}: {e}", tasks.display())))?;
    let mut list = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let t: Task = serde_json::from_str(line).map_err(|e| {
            UsageError(format!(
                "{} line {}: not a DABStep task ({e}); each line needs task_id and question",
                tasks.display(),
                n + 1
            ))
        })?;
        if only.is_empty() || only.contains(&t.task_id) {
            list.push(t);
        }
    }
    if list.is_empty() {
        return Err(UsageError(format!("no task to run in {}", tasks.display())).into());
    }
    if !lake.is_dir() {
        return Err(UsageError(format!("--lake {} is not a directory", lake.display())).into());
    }

    let index_dir = match index_arg {
        Some(d) => d,
        None => {
            let own = locate::default_index_dir(&lake);
            if locate::find_index(Some(&own), &lake).is_ok() {
                own
            } else {
                with_suffix(&out, ".index")
            }
        }
    };
    // Bring the index up to date (a no-op when nothing changed).
    let report = index(
        &lake,
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

    let runs = with_suffix(&out, ".runs");
    let mut sub = std::fs::File::create(&out)
        .map_err(|e| UsageError(format!("cannot write --out {}: {e}", out.display())))?;
    let rt = runtime()?;
    let (mut answered, mut failed) = (0, 0);
    for t in &list {
        eprintln!("task {}: {}", t.task_id, t.question);
        let run_dir = runs.join(&t.task_id);
        if run_dir.exists() {
            std::fs::remove_dir_all(&run_dir)
                .with_context(|| format!("clearing {}", run_dir.display()))?;
        }
        // A client per task so that each summary counts its own tokens.
        let ag = agent.agent(Some(&index_dir))?;
        let files = context::retrieve(&index_dir, &t.question, agent.count()?)?;
        let (summary, stopped) = until_interrupted(
            &rt,
            &run_dir,
            ag.ask(
                &t.question,
                &files,
                "retrieved",
                None,
                &agent.loop_options(t.guidelines.clone()),
                &run_dir,
                &print_progress,
            ),
        )??;
        if let Some(e) = &stopped {
            eprintln!("task {}: stopped: {e}", t.task_id);
        }
        match &summary.answer {
            Some(a) => {
                answered += 1;
                eprintln!("task {}: {a}", t.task_id);
            }
            None => failed += 1,
        }
        let trace = format!(
            "Files: {}\nPlan:\n{}\nStatus: {:?} after {} round(s). Run record: {}",
            summary.files.join(", "),
            numbered(&summary.plan),
            summary.status,
            summary.rounds,
            run_dir.display()
        );
        let line = serde_json::json!({
            "task_id": t.task_id,
            "agent_answer": summary.answer.clone().unwrap_or_default(),
            "reasoning_trace": trace,
        });
        writeln!(sub, "{line}")
            .and_then(|_| sub.flush())
            .with_context(|| format!("writing {}", out.display()))?;
    }
    eprintln!(
        "{answered} of {} task(s) answered, {failed} without an answer; submission: {}",
        list.len(),
        out.display()
    );
    Ok(())
}
