//! `lakestar ask`: answer a question with the DS-STAR loop over retrieved (or pinned)
//! files, printing live progress and then the answer and the run directory.

use super::output::print_json;
use super::{IndexDirArg, UsageError};
use crate::agent::build::AgentSetup;
use crate::agent::context::{self, FileContext, FileCount};
use crate::agent::llm::Cassette;
use crate::agent::run::LoopOptions;
use crate::agent::{parse, Agent, AgentError, Progress, Status, Summary};
use anyhow::{Context, Result};
use lakestar_index::locate;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Options shared by `ask` and `bench dabstep`: how the agent runs.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct AgentArgs {
    /// Give the agent exactly K retrieved files [default: as many as fit --budget].
    #[arg(short = 'k', value_name = "K")]
    pub k: Option<usize>,
    /// Tokens of file descriptions to fill when K is not given.
    #[arg(long, value_name = "TOKENS", default_value_t = 8000)]
    pub budget: usize,
    /// Verifier rounds at most; then the answer is finalized from the latest plan.
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub max_rounds: usize,
    /// Debugger attempts per failing script.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub debug_attempts: usize,
    /// Wall-clock limit of one script, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 120)]
    pub timeout: u64,
    /// Python interpreter for generated code [default: the venv of `lakestar setup
    /// python`, else python3].
    #[arg(long, value_name = "PATH")]
    pub python: Option<PathBuf>,
    /// Directory of prompt overrides (same file names as prompts/).
    #[arg(long, value_name = "DIR")]
    pub prompts: Option<PathBuf>,
    /// Store every LLM request and reply in this cassette (JSON lines).
    #[arg(long, value_name = "FILE", conflicts_with = "replay")]
    pub record: Option<PathBuf>,
    /// Answer LLM requests from this cassette, without a network or a configured model.
    #[arg(long, value_name = "FILE")]
    pub replay: Option<PathBuf>,
}

/// Arguments of `lakestar ask`.
#[derive(Debug, clap::Args)]
pub(crate) struct AskArgs {
    /// The question.
    question: String,
    #[command(flatten)]
    index: IndexDirArg,
    /// Answer-format guidelines for the final answer ("a number rounded to 2 decimals").
    #[arg(long, value_name = "TEXT")]
    guidelines: Option<String>,
    /// Work on these files instead of retrieving (the oracle setting).
    #[arg(long, value_name = "FILE", num_args = 1..)]
    files: Vec<PathBuf>,
    /// Run directory [default: INDEX/runs/ID].
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Print the run summary as JSON instead of the answer.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    agent: AgentArgs,
}

impl AgentArgs {
    /// The file count rule.
    pub fn count(&self) -> Result<FileCount> {
        match self.k {
            Some(0) => Err(UsageError("-k must be at least 1".into()).into()),
            Some(k) => Ok(FileCount::Fixed(k.min(1000))),
            None => Ok(FileCount::Budget(self.budget.max(1))),
        }
    }

    /// The loop settings.
    pub fn loop_options(&self, guidelines: Option<String>) -> LoopOptions {
        LoopOptions {
            max_rounds: self.max_rounds,
            debug_attempts: self.debug_attempts,
            guidelines,
        }
    }

    /// An agent per these options; `index_dir` is where a `lakestar.toml` may be.
    pub fn agent(&self, index_dir: Option<&Path>) -> Result<Agent> {
        let cassette = match (&self.record, &self.replay) {
            (Some(f), _) => Cassette::Record(f.clone()),
            (_, Some(f)) => Cassette::Replay(f.clone()),
            _ => Cassette::Off,
        };
        let agent = Agent::build(
            index_dir,
            &AgentSetup {
                python: self.python.clone(),
                prompts: self.prompts.clone(),
                timeout: Duration::from_secs(self.timeout),
                cassette,
            },
        )?;
        if let Some(w) = agent.python_warning() {
            eprintln!("warning: {w}");
        }
        Ok(agent)
    }
}

/// Live progress on stderr, one line per event.
pub(crate) fn print_progress(p: Progress) {
    match p {
        Progress::Call { round, role } => eprintln!("round {round} · {role}"),
        Progress::Plan { round, steps } => eprintln!("round {round} · plan has {steps} step(s)"),
        Progress::Exec { round, purpose } => eprintln!("round {round} · running {purpose}"),
        Progress::Executed { round, ok } => {
            eprintln!("round {round} · {}", if ok { "ran" } else { "failed" })
        }
        Progress::Missing { round, quantities } => {
            eprintln!("round {round} · output lacks {}", quantities.join(", "))
        }
        Progress::Verdict { round, verdict } => eprintln!(
            "round {round} · verdict: {}",
            match verdict {
                parse::Verdict::Sufficient => "sufficient",
                parse::Verdict::Insufficient => "insufficient",
            }
        ),
        Progress::Route { round, route } => match route {
            parse::Route::AddStep => eprintln!("round {round} · route: add step"),
            parse::Route::Step(n) => eprintln!("round {round} · route: back to step {n}"),
        },
    }
}

/// A runtime for one command.
pub(crate) fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the async runtime")
}

/// Run `fut` until it ends or the user interrupts (SIGINT, SIGTERM). An interrupted run
/// is dropped, and dropping it kills the script it was running (the sandbox kills the
/// process group); its trace so far stays in the run directory.
pub(crate) fn until_interrupted<T>(
    rt: &tokio::runtime::Runtime,
    run_dir: &Path,
    fut: impl std::future::Future<Output = T>,
) -> Result<T> {
    rt.block_on(async {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .context("installing the SIGTERM handler")?;
        tokio::select! {
            out = fut => Ok(out),
            _ = tokio::signal::ctrl_c() => Err(interrupted(run_dir)),
            _ = term.recv() => Err(interrupted(run_dir)),
        }
    })
}

fn interrupted(run_dir: &Path) -> anyhow::Error {
    anyhow::anyhow!(
        "interrupted; the trace so far is in {}",
        run_dir.join("trace.jsonl").display()
    )
}

/// Where runs go when neither --out nor an index says.
fn default_runs_dir() -> PathBuf {
    std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))
        .unwrap_or_else(std::env::temp_dir)
        .join("lakestar/runs")
}

/// The files of a run: pinned, or retrieved from the index.
fn select(
    a: &AskArgs,
    index_dir: Option<&Path>,
    cwd: &Path,
) -> Result<(Vec<FileContext>, &'static str)> {
    if !a.files.is_empty() {
        return Ok((context::pinned(&a.files, index_dir, cwd)?, "pinned"));
    }
    let dir = index_dir.ok_or_else(|| {
        UsageError(
            "no index to retrieve files from: run `lakestar index LAKE`, pass --index DIR, or pin files with --files".into(),
        )
    })?;
    Ok((
        context::retrieve(dir, &a.question, a.agent.count()?)?,
        "retrieved",
    ))
}

pub(crate) fn run(a: AskArgs) -> Result<()> {
    if a.question.trim().is_empty() {
        return Err(UsageError("the question is empty".into()).into());
    }
    let cwd = std::env::current_dir()?;
    let index_dir = match &a.index.index {
        Some(d) => Some(locate::find_index(Some(d), &cwd)?),
        None if a.files.is_empty() => Some(locate::find_index(None, &cwd)?),
        None => locate::find_upwards(&cwd),
    };
    let (files, selection) = select(&a, index_dir.as_deref(), &cwd)?;
    let agent = a.agent.agent(index_dir.as_deref())?;
    let run_dir = match &a.out {
        Some(d) => d.clone(),
        None => index_dir
            .as_ref()
            .map(|d| d.join("runs"))
            .unwrap_or_else(default_runs_dir)
            .join(crate::agent::run_id()),
    };
    eprintln!(
        "{} file(s) {selection}: {}",
        files.len(),
        files
            .iter()
            .map(|f| f.rel.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let options = a.agent.loop_options(a.guidelines.clone());
    let (summary, stopped) = until_interrupted(
        &runtime()?,
        &run_dir,
        agent.ask(
            &a.question,
            &files,
            selection,
            None,
            &options,
            &run_dir,
            &print_progress,
        ),
    )??;
    report(&summary, stopped, a.json)
}

/// Print the outcome; a run without an answer is an error (exit 1), with the run
/// directory named so its record can be read.
fn report(s: &Summary, stopped: Option<AgentError>, json: bool) -> Result<()> {
    if json {
        print_json(s)?;
    } else if let Some(answer) = &s.answer {
        println!("{answer}");
        eprintln!(
            "{} after {} round(s){}; run: {}",
            match s.status {
                Status::Sufficient => "sufficient",
                _ => "rounds exhausted",
            },
            s.rounds,
            match s.answer_source {
                Some(crate::agent::AnswerSource::SolutionOutput) => {
                    " (answer read from the verified output: the final script gave none)"
                }
                _ => "",
            },
            s.run_dir.display()
        );
    }
    match (stopped, s.status) {
        (Some(e), _) => Err(anyhow::Error::new(e).context(format!(
            "the run stopped (record in {})",
            s.run_dir.display()
        ))),
        (None, Status::NoAnswer) => Err(anyhow::anyhow!(
            "no answer: the final script failed or printed nothing (record in {})",
            s.run_dir.display()
        )),
        _ => Ok(()),
    }
}
