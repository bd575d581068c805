//! `lakestar ask`: answer a question with the DS-STAR loop over retrieved (or pinned)
//! files, printing live progress and then the answer and the run directory.

use super::output::print_json;
use super::{IndexDirArg, UsageError};
use crate::agent::build::AgentSetup;
use crate::agent::llm::Cassette;
use crate::agent::{parse, Agent, AgentError, Progress, Status, Summary};
use crate::service::ask::{self as service, AskRequest, Limits, Selection};
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
    #[arg(long, value_name = "TOKENS", default_value_t = service::DEFAULT_BUDGET)]
    pub budget: usize,
    /// Verifier rounds at most; then the answer is finalized from the latest plan.
    #[arg(long, value_name = "N", default_value_t = service::DEFAULT_ROUNDS)]
    pub max_rounds: usize,
    /// Debugger attempts per failing script.
    #[arg(long, value_name = "N", default_value_t = service::DEFAULT_DEBUG_ATTEMPTS)]
    pub debug_attempts: usize,
    /// Wall-clock limit of one script, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 120)]
    pub timeout: u64,
    /// Python interpreter for generated code, a path or a name on PATH [default: the
    /// venv of `lakestar setup python`, else python3].
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
    /// Work on these files instead of retrieving (the oracle setting); with the index of
    /// an object-store lake, also objects by key (`sales/2024.csv`) or URL, staged.
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
    /// The request for `question` with these options: over `pinned` files, or retrieved
    /// ones when none is pinned; validated as every surface validates it.
    pub fn request(
        &self,
        question: &str,
        guidelines: Option<String>,
        pinned: Vec<PathBuf>,
    ) -> Result<AskRequest> {
        let r = AskRequest {
            question: question.to_string(),
            guidelines,
            selection: if pinned.is_empty() {
                Selection::Retrieved {
                    k: self.k,
                    budget: Some(self.budget),
                }
            } else {
                Selection::Pinned(pinned)
            },
            limits: Limits {
                max_rounds: self.max_rounds,
                debug_attempts: self.debug_attempts,
                ..Limits::default()
            },
        };
        r.validate().map_err(|e| UsageError(e.to_string()))?;
        Ok(r)
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
                ..AgentSetup::default()
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

pub(crate) fn run(a: AskArgs) -> Result<()> {
    let request = a
        .agent
        .request(&a.question, a.guidelines.clone(), a.files.clone())?;
    let cwd = std::env::current_dir()?;
    let index_dir = match &a.index.index {
        Some(d) => Some(locate::find_index(Some(d), &cwd)?),
        None if a.files.is_empty() => Some(locate::find_index(None, &cwd)?),
        None => locate::find_upwards(&cwd),
    };
    let agent = a.agent.agent(index_dir.as_deref())?;
    let (files, selection) =
        request.files(index_dir.as_deref(), None, &cwd, agent.prompts.methods())?;
    let run_dir = match &a.out {
        Some(d) => d.clone(),
        None => service::default_run_dir(index_dir.as_deref()),
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
    let (summary, stopped) = until_interrupted(
        &runtime()?,
        &run_dir,
        request.run(
            &agent,
            &files,
            index_dir.as_deref(),
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
                Status::Unverified => "answered without a verifier",
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
