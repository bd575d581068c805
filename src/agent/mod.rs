//! The agent: DS-STAR's plan → code → execute → verify loop over the files a question
//! retrieves (Nam et al., 2025, Algorithm 1), and the record of how it got its answer.
//!
//! - [`analyzer`]: the LLM analyzer, describing a file with an LLM-written script.
//! - [`answer`]: what a question asks for, whether an output holds it, dumps, and
//!   answers read from an output.
//! - [`build`]: an agent from the LLM configuration and the caller's settings.
//! - [`context`]: which files a run sees (retrieved by budget, or pinned) and how their
//!   descriptions read in a prompt.
//! - [`prompts`] and [`parse`]: the role prompts, and reading the replies; [`methods`]:
//!   the calls of the methods a question names, shown to every role; [`repair`]:
//!   the fixes a generated script gets before it runs when it cannot run as written.
//! - [`budget`]: fitting every prompt into the model's context window.
//! - [`run`]: the loop itself, with the debugger and the finalyzer; [`ablation`]: the
//!   single-shot and no-verifier variants measured against it.
//! - [`record`] and [`notebook`]: the run directory.
//! - [`llm`]: an OpenAI-compatible chat client (retries, role header, usage and cost,
//!   record/replay cassettes).
//! - [`sandbox`]: running generated Python under limits, in its own directory.

pub mod ablation;
pub mod analyzer;
pub mod answer;
pub mod budget;
pub mod build;
pub mod context;
pub mod llm;
pub mod methods;
pub mod notebook;
pub mod parse;
pub mod prompts;
pub mod record;
pub mod repair;
pub mod rules;
pub mod run;
pub mod sandbox;
pub mod staging;

use context::{FileContext, Retriever};
use llm::{LlmClient, Role};
use prompts::Prompts;
use record::{Event, RunRecord};
use run::{Loop, LoopOptions};
use sandbox::Sandbox;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Errors of an agent run.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// The LLM could not be reached or refused (see the message for what to do).
    #[error(transparent)]
    Llm(#[from] llm::LlmError),
    /// Python could not be found or started.
    #[error(transparent)]
    Sandbox(#[from] sandbox::SandboxError),
    /// The index could not be read.
    #[error(transparent)]
    Index(#[from] lakestar_index::Error),
    /// A prompt override is wrong.
    #[error("prompt {}: {message}", path.display())]
    Prompts {
        /// The file or directory.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// No data file to work on.
    #[error("{0}")]
    NoFiles(String),
    /// No LLM model is configured (the message names every setting that gives one).
    #[error("{0}")]
    NotConfigured(String),
    /// The run directory cannot be written.
    #[error("cannot write the run record at {}: {source}", path.display())]
    RunDir {
        /// The path.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A prompt does not fit the model's context even with every part cut to its minimum.
    #[error("the {role} prompt does not fit the model's context even cut to its minimum: it needs {needed} tokens, {available} are available ({context}-token context minus {reserve} kept for the reply), {} over; raise context_tokens under [llm] in lakestar.toml (or LAKESTAR_CONTEXT_TOKENS) if the model allows, or lower --budget so that fewer files are described", needed - available)]
    PromptTooLarge {
        /// The role whose prompt it is.
        role: Role,
        /// Tokens the smallest prompt takes.
        needed: usize,
        /// Tokens a prompt may take.
        available: usize,
        /// The model's context window.
        context: usize,
        /// Tokens kept for the reply.
        reserve: usize,
    },
    /// A concurrent task died (a bug: it panicked).
    #[error("an agent task failed: {0}")]
    Task(String),
}

impl AgentError {
    /// Whether the person running lakestar can fix it (as opposed to a fault).
    pub fn is_user_error(&self) -> bool {
        match self {
            AgentError::Llm(e) => e.is_user_error(),
            AgentError::Sandbox(e) => e.is_user_error(),
            AgentError::Index(e) => e.is_user_error(),
            AgentError::Prompts { .. }
            | AgentError::NoFiles(_)
            | AgentError::NotConfigured(_)
            | AgentError::PromptTooLarge { .. } => true,
            AgentError::RunDir { .. } | AgentError::Task(_) => false,
        }
    }
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// The verifier judged the plan sufficient and the final script printed an answer.
    Sufficient,
    /// The rounds ran out; the answer comes from the latest plan.
    MaxRounds,
    /// An ablation without a verifier (single-shot, no-verifier) printed an answer.
    Unverified,
    /// No answer: the final script failed or printed nothing, and the latest output
    /// gives none either (never after a sufficient verdict).
    NoAnswer,
    /// The run stopped on an error (LLM unreachable, record unwritable).
    Error,
}

/// Where an answer comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AnswerSource {
    /// The values a script gave through the answer API (`answer(name, value)`), written
    /// in the asked form by an output adapter (`answer::adapt`).
    Answers,
    /// The finalyzer's script printed it.
    FinalScript,
}

impl AnswerSource {
    /// The serialized name.
    pub fn as_str(self) -> &'static str {
        match self {
            AnswerSource::Answers => "answers",
            AnswerSource::FinalScript => "final_script",
        }
    }
}

/// Live progress of a run, for a terminal or an event stream.
#[derive(Debug, Clone)]
pub enum Progress {
    /// An LLM call starts.
    Call {
        /// The round.
        round: usize,
        /// The role.
        role: Role,
    },
    /// The plan changed.
    Plan {
        /// The round.
        round: usize,
        /// Its length.
        steps: usize,
    },
    /// A script starts.
    Exec {
        /// The round.
        round: usize,
        /// "solution", "final", "solution debug 1", ….
        purpose: String,
    },
    /// A script ended.
    Executed {
        /// The round.
        round: usize,
        /// Exit status 0.
        ok: bool,
    },
    /// The output lacks values the question asks for (the round is insufficient
    /// whatever the verifier said).
    Missing {
        /// The round.
        round: usize,
        /// The quantities without a value.
        quantities: Vec<String>,
    },
    /// The verifier's verdict.
    Verdict {
        /// The round.
        round: usize,
        /// The verdict.
        verdict: parse::Verdict,
    },
    /// The router's decision.
    Route {
        /// The round.
        round: usize,
        /// The decision.
        route: parse::Route,
    },
    /// A try of an LLM call failed and is made again.
    Retry {
        /// The round.
        round: usize,
        /// The retry, its role and why.
        retry: llm::Retry,
    },
    /// An LLM call answered.
    Answered {
        /// The round.
        round: usize,
        /// The role.
        role: Role,
        /// Prompt tokens.
        prompt_tokens: u64,
        /// Completion tokens.
        completion_tokens: u64,
        /// The wait, retries included.
        latency: std::time::Duration,
    },
}

impl std::fmt::Display for Progress {
    /// One line for people: "round 1 · coder: waiting for the model".
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Progress::Call { round, role } => {
                write!(f, "round {round} · {role}: waiting for the model")
            }
            Progress::Retry { round, retry: r } => write!(
                f,
                "round {round} · {}: retry {} of {} after {}",
                r.role, r.retry, r.max_retries, r.reason
            ),
            Progress::Answered {
                round,
                role,
                prompt_tokens,
                completion_tokens,
                latency,
            } => write!(
                f,
                "round {round} · {role}: answered in {}, {prompt_tokens} prompt + {completion_tokens} reply tokens",
                llm::secs(*latency)
            ),
            Progress::Plan { round, steps } => write!(f, "round {round} · plan has {steps} step(s)"),
            Progress::Exec { round, purpose } => write!(f, "round {round} · running {purpose}"),
            Progress::Executed { round, ok } => {
                write!(f, "round {round} · {}", if *ok { "ran" } else { "failed" })
            }
            Progress::Missing { round, quantities } => {
                write!(f, "round {round} · output lacks {}", quantities.join(", "))
            }
            Progress::Verdict { round, verdict } => write!(
                f,
                "round {round} · verdict: {}",
                match verdict {
                    parse::Verdict::Sufficient => "sufficient",
                    parse::Verdict::Insufficient => "insufficient",
                }
            ),
            Progress::Route { round, route } => match route {
                parse::Route::AddStep => write!(f, "round {round} · route: add step"),
                parse::Route::Step(n) => write!(f, "round {round} · route: back to step {n}"),
            },
        }
    }
}

/// `summary.json`.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// The question.
    pub question: String,
    /// How the run ended.
    pub status: Status,
    /// The answer (also in `answer.txt`).
    pub answer: Option<String>,
    /// Where the answer comes from: `answers` (the answer API) or `final_script`.
    pub answer_source: Option<AnswerSource>,
    /// The values given through the answer API by the script the answer comes from, at
    /// full precision (a name given twice: both, in order).
    pub answers: Vec<sandbox::Answered>,
    /// Column or key names the question or a step named that no file has (also said
    /// in the answer).
    pub unknown_names: Vec<String>,
    /// Verifier rounds run (of a run stopped on an error: the last round its trace
    /// reached).
    pub rounds: usize,
    /// Each round's verdict.
    pub verdicts: Vec<parse::Verdict>,
    /// The final plan (of a run stopped on an error: the latest plan of its trace).
    pub plan: Vec<String>,
    /// The data files, absolute paths (with those retrieval added during the run).
    pub files: Vec<String>,
    /// LLM calls, tokens and cost, in all and by role.
    pub llm: llm::Totals,
    /// Wall-clock milliseconds.
    pub duration_ms: u64,
    /// Whether generated code ran without network, and if not why.
    pub network: String,
    /// Whether generated code saw the file system read-only, and if not why.
    pub filesystem: String,
    /// The run directory.
    pub run_dir: PathBuf,
    /// The error that stopped the run.
    pub error: Option<String>,
    /// The rules on and how often each fired.
    pub rules: RulesUsed,
}

/// The rules of a run: which were on, and how often each fired (by name; rules that
/// never fired are left out).
#[derive(Debug, Clone, Default, Serialize)]
pub struct RulesUsed {
    /// `--rules`, spelled as it parses back.
    pub on: rules::RuleSet,
    /// Firings by rule.
    pub fired: std::collections::BTreeMap<&'static str, usize>,
}

/// An agent: an LLM, a sandbox and a prompt set.
pub struct Agent {
    /// The LLM client.
    pub llm: LlmClient,
    /// Where generated code runs.
    pub sandbox: Sandbox,
    /// The prompts.
    pub prompts: Prompts,
}

impl Agent {
    /// Answer `question` over `files`, recording the run in `run_dir` (created; it must
    /// not hold an earlier run). The summary is returned, and written, even when the run
    /// stopped on an error: that error comes beside it (and is in `summary.error`). Only
    /// a record that cannot be written is an `Err`. `retriever` gives more files when a
    /// step names a column no file has (`None` for pinned files).
    #[allow(clippy::too_many_arguments)]
    pub async fn ask(
        &self,
        question: &str,
        files: &[FileContext],
        selection: &str,
        retriever: Option<&dyn Retriever>,
        options: &LoopOptions,
        run_dir: &Path,
        progress: &(dyn Fn(Progress) + Send + Sync),
    ) -> Result<(Summary, Option<AgentError>), AgentError> {
        let record = RunRecord::create(run_dir)?;
        let paths: Vec<String> = files.iter().map(|f| f.path.display().to_string()).collect();
        record.event(&Event::Start {
            question: question.to_string(),
            files: paths.clone(),
            selection: selection.to_string(),
            guidelines: options.guidelines.clone(),
            wanted: options.wanted.clone(),
            form: options.form,
            max_rounds: options.max_rounds,
            mode: options.mode,
            llm_timeout_ms: self.llm.config().timeout.as_millis() as u64,
            llm_timeout_from: self.llm.config().timeout_origin,
            rules: options.rules,
        })?;
        if let Some(message) = staging::note(files) {
            record.event(&Event::Note { message })?;
        }
        // A machine that cannot jail generated code refuses here, before any LLM call.
        let (network, filesystem) = match self.sandbox.check()? {
            sandbox::Isolation::Isolated => (
                "isolated (own network namespace, no interface up)".to_string(),
                "jailed: a minimal read-only root with the data files; writes go to a quota tmpfs"
                    .to_string(),
            ),
            sandbox::Isolation::Unavailable(why) => {
                let message = format!("generated code runs WITHOUT isolation: {why}");
                record.event(&Event::Note {
                    message: message.clone(),
                })?;
                (message.clone(), message)
            }
        };
        // The `method-calls` rule: the calls of the methods the question names, in every
        // role's prefix.
        let bare;
        let prompts = if options.rules.on(rules::Rule::MethodCalls) {
            let titles = self.prompts.methods().titles(question);
            if !titles.is_empty() {
                record.rule(
                    rules::Rule::MethodCalls,
                    None,
                    format!("the calls of {} are shown to every role", titles.join(", ")),
                )?;
            }
            &self.prompts
        } else {
            bare = self.prompts.without_methods();
            &bare
        };
        let looped = Loop {
            llm: &self.llm,
            sandbox: &self.sandbox,
            prompts,
            record: &record,
            progress,
            question,
            files,
            retriever,
            options,
            prefix: Default::default(),
        }
        .run()
        .await;
        let mut summary = Summary {
            question: question.to_string(),
            status: Status::Error,
            answer: None,
            answer_source: None,
            answers: Vec::new(),
            unknown_names: Vec::new(),
            rounds: 0,
            verdicts: Vec::new(),
            plan: Vec::new(),
            files: paths.clone(),
            llm: self.llm.totals(),
            duration_ms: record.elapsed_ms(),
            network,
            filesystem,
            run_dir: run_dir.to_path_buf(),
            error: None,
            rules: RulesUsed {
                on: options.rules,
                fired: Default::default(),
            },
        };
        let mut stopped = None;
        match looped {
            Ok(out) => {
                summary.status = out.status;
                summary.answer = out.answer.clone();
                summary.answer_source = out.answer_source;
                summary.answers = out.answers.clone();
                summary.unknown_names = out.unknown_names.clone();
                summary.files = out.files.clone();
                summary.rounds = out.rounds;
                summary.verdicts = out.verdicts.clone();
                summary.plan = out.plan.clone();
                record.write(
                    "plan.md",
                    record::plan_markdown(question, &out.plan).as_bytes(),
                )?;
                if let Some((code, _)) = &out.final_script {
                    record.write("final.py", code.as_bytes())?;
                }
                let mut answer = out.answer.clone().unwrap_or_default();
                answer.push('\n');
                record.write("answer.txt", answer.as_bytes())?;
                let nb = notebook::notebook(&notebook::NotebookInput {
                    question,
                    files: &out.files,
                    plan: &out.plan,
                    solution: Some((&out.solution.0, &out.solution.1)),
                    final_script: out
                        .final_script
                        .as_ref()
                        .map(|(c, o)| (c.as_str(), o.as_str())),
                });
                record.write(
                    "run.ipynb",
                    serde_json::to_string_pretty(&nb)
                        .expect("a notebook serializes")
                        .as_bytes(),
                )?;
            }
            Err(e) => {
                // What the run got to, as its trace records it.
                let traced = record.traced();
                summary.rounds = traced.rounds;
                summary.verdicts = traced.verdicts;
                summary.files = traced.files;
                record.write(
                    "plan.md",
                    record::plan_markdown(question, &traced.plan).as_bytes(),
                )?;
                summary.plan = traced.plan;
                summary.error = Some(e.to_string());
                stopped = Some(e);
            }
        }
        summary.rules.fired = record.traced().rules;
        record.event(&Event::Finish {
            status: summary.status,
            answer: summary.answer.clone(),
            answer_source: summary.answer_source,
        })?;
        record.write(
            "summary.json",
            serde_json::to_string_pretty(&summary)
                .expect("a summary serializes")
                .as_bytes(),
        )?;
        Ok((summary, stopped))
    }
}

/// A new run directory name: UTC time to the second and a random suffix, so that names
/// sort by time and two runs in the same second do not collide.
pub fn run_id() -> String {
    let t = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let digits: String = t.chars().filter(char::is_ascii_digit).collect();
    format!(
        "{}-{}-{:04x}",
        &digits[..8],
        &digits[8..14],
        fastrand::u16(..)
    )
}
