//! `lakestar ask`: answer a question with the DS-STAR loop over retrieved (or pinned)
//! files, printing the run directory, live progress on stderr, and then the answer on
//! stdout.

use super::output::{print_json, waited};
use super::{IndexDirArg, UsageError};
use crate::agent::answer::{adapt::Form, Wanted};
use crate::agent::build::AgentSetup;
use crate::agent::llm::{parse_timeout, Cassette};
use crate::agent::rules::RuleSet;
use crate::agent::{Agent, AgentError, Progress, Status, Summary};
use crate::service::ask::{self as service, AskRequest, Limits, Selection};
use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use lakestar_index::locate;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

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
    /// Wall-clock limit of one generated script, in seconds (an LLM call's limit is
    /// --llm-timeout).
    #[arg(long, value_name = "SECS", default_value_t = 120)]
    pub timeout: u64,
    /// Time limit of one try of an LLM call, as 300s or 5m [default:
    /// LAKESTAR_LLM_TIMEOUT, else timeout_secs in lakestar.toml, else 120s].
    #[arg(long, value_name = "DURATION", value_parser = parse_timeout)]
    pub llm_timeout: Option<Duration>,
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
    /// Rules beyond Algorithm 1: `default`, `none`, or names, `-NAME` leaving one out
    /// (docs/agent.md).
    #[arg(long, value_name = "RULES", default_value = "default")]
    pub rules: RuleSet,
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
    /// A value the answer must give (repeatable); scripts give it with
    /// `answer("NAME", value)`. WHAT: what it is.
    #[arg(long = "answer", value_name = "NAME[=WHAT]")]
    answers: Vec<Wanted>,
    /// `plain` (the value, or `name: value` lines) or `tagged` (`@name[value]`).
    #[arg(long, value_name = "FORM", default_value = "plain")]
    answer_form: Form,
    /// Work on these files instead of retrieving; in an object-store lake also keys
    /// (`sales/2024.csv`) or URLs, staged.
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
            wanted: Vec::new(),
            form: Form::Plain,
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
                rules: self.rules,
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
                llm_timeout: self.llm_timeout,
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

/// How often a wait for the model is said again when stderr is not a terminal.
const WAIT_LINE_EVERY: Duration = Duration::from_secs(30);

/// Live progress on stderr, one line per event. While an LLM call is waited for, a
/// terminal shows the wait ticking; elsewhere (a log, a pipe) a line says it when the
/// call starts and every [`WAIT_LINE_EVERY`] after.
pub(crate) struct Printer {
    terminal: bool,
    every: Duration,
    out: Sink,
    waiting: Mutex<Option<Waiting>>,
}

/// Where the lines go (stderr, but for tests).
type Sink = Arc<Mutex<dyn Write + Send>>;

fn say(out: &Sink, line: &str) {
    let mut out = out.lock().unwrap_or_else(|e| e.into_inner());
    let _ = writeln!(out, "{line}");
}

/// An LLM call being waited for.
enum Waiting {
    Bar(ProgressBar),
    /// The thread saying the wait; it ends when `stop` is dropped.
    Lines {
        stop: mpsc::Sender<()>,
        thread: std::thread::JoinHandle<()>,
    },
}

impl Waiting {
    fn end(self) {
        match self {
            Waiting::Bar(bar) => bar.finish_and_clear(),
            Waiting::Lines { stop, thread } => {
                drop(stop);
                let _ = thread.join();
            }
        }
    }
}

impl Printer {
    pub(crate) fn new() -> Printer {
        Printer {
            terminal: std::io::stderr().is_terminal(),
            every: WAIT_LINE_EVERY,
            out: Arc::new(Mutex::new(std::io::stderr())),
            waiting: Mutex::default(),
        }
    }

    /// Show one event: a retry above the wait it belongs to; any other event ends the
    /// wait shown, and a call starts a new one.
    pub(crate) fn show(&self, p: Progress) {
        let mut waiting = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
        if let Progress::Retry { .. } = p {
            match waiting.as_ref() {
                Some(Waiting::Bar(bar)) => bar.println(p.to_string()),
                _ => say(&self.out, &p.to_string()),
            }
            return;
        }
        if let Some(w) = waiting.take() {
            w.end();
        }
        if let Progress::Call { .. } = p {
            *waiting = Some(self.wait(p.to_string()));
        } else {
            say(&self.out, &p.to_string());
        }
    }

    fn wait(&self, label: String) -> Waiting {
        if self.terminal {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template("{spinner} {msg}, {waited}")
                    .expect("a valid template")
                    .with_key(
                        "waited",
                        |s: &ProgressState, w: &mut dyn std::fmt::Write| {
                            let _ = w.write_str(&waited(s.elapsed()));
                        },
                    ),
            );
            bar.set_message(label);
            bar.enable_steady_tick(Duration::from_millis(200));
            return Waiting::Bar(bar);
        }
        say(&self.out, &label);
        let (stop, rx) = mpsc::channel::<()>();
        let (start, every, out) = (Instant::now(), self.every, self.out.clone());
        let thread = std::thread::spawn(move || {
            while let Err(mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(every) {
                say(&out, &format!("{label}, {}", waited(start.elapsed())));
            }
        });
        Waiting::Lines { stop, thread }
    }
}

impl Drop for Printer {
    /// A run that stops during a call leaves no wait shown.
    fn drop(&mut self) {
        let waiting = self.waiting.get_mut().unwrap_or_else(|e| e.into_inner());
        if let Some(w) = waiting.take() {
            w.end();
        }
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
    let mut request = a
        .agent
        .request(&a.question, a.guidelines.clone(), a.files.clone())?;
    request.wanted = a.answers.clone();
    request.form = a.answer_form;
    request.validate().map_err(|e| UsageError(e.to_string()))?;
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
    eprintln!("run directory: {}", run_dir.display());
    let printer = Printer::new();
    let ran = until_interrupted(
        &runtime()?,
        &run_dir,
        request.run(&agent, &files, index_dir.as_deref(), &run_dir, &|p| {
            printer.show(p)
        }),
    );
    drop(printer);
    let (summary, stopped) = ran??;
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
            "{} after {} round(s); run: {}",
            match s.status {
                Status::Sufficient => "sufficient",
                Status::Unverified => "answered without a verifier",
                _ => "rounds exhausted",
            },
            s.rounds,
            s.run_dir.display()
        );
        // The rules that changed what the bare loop would have done, with the answer.
        if !s.rules.fired.is_empty() {
            let fired: Vec<String> = s
                .rules
                .fired
                .iter()
                .map(|(rule, n)| format!("{rule} ×{n}"))
                .collect();
            eprintln!(
                "rules fired: {} (trace.jsonl has each; --rules none runs without them)",
                fired.join(", ")
            );
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::llm::{Retry, Role};

    #[test]
    fn a_wait_off_a_terminal_is_said_at_its_start_at_each_interval_and_at_its_end() {
        let buf = Arc::new(Mutex::new(Vec::<u8>::new()));
        let printer = Printer {
            terminal: false,
            every: Duration::from_millis(100),
            out: buf.clone(),
            waiting: Mutex::default(),
        };
        let (round, role) = (1, Role::Coder);
        printer.show(Progress::Call { round, role });
        std::thread::sleep(Duration::from_millis(350));
        printer.show(Progress::Retry {
            round,
            retry: Retry {
                role,
                retry: 1,
                max_retries: 5,
                reason: "a 120 s timeout".into(),
                error: "no answer within 120 s (timed out)".into(),
                wait: Duration::from_secs(1),
            },
        });
        printer.show(Progress::Answered {
            round,
            role,
            prompt_tokens: 1200,
            completion_tokens: 30,
            latency: Duration::from_millis(2500),
        });
        std::thread::sleep(Duration::from_millis(250));
        drop(printer);
        let text = String::from_utf8(buf.lock().unwrap().clone()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let waits = lines
            .iter()
            .filter(|l| **l == "round 1 · coder: waiting for the model, 0 s")
            .count();
        assert!((2..=4).contains(&waits), "{text}");
        assert_eq!(lines[0], "round 1 · coder: waiting for the model", "{text}");
        assert_eq!(
            lines[lines.len() - 2..],
            [
                "round 1 · coder: retry 1 of 5 after a 120 s timeout",
                "round 1 · coder: answered in 2.5 s, 1200 prompt + 30 reply tokens"
            ],
            "{text}"
        );
        // Nothing is said of a wait after the call ended.
        assert_eq!(lines.len(), waits + 3, "{text}");
    }
}
