//! The run record: one directory per run holding `trace.jsonl` (every LLM call,
//! execution, verdict and route, appended and flushed as they happen, so a killed run
//! keeps what it did and a reader can follow a live one), `plan.md`, `final.py`,
//! `answer.txt`, `run.ipynb` and `summary.json`. The record keeps what its trace says
//! of the run so far ([`Traced`]), so that a run that stops on an error is summed up
//! from the same state its trace shows.

use super::AgentError;
use serde::Serialize;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

/// One line of `trace.jsonl`.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Event {
    /// The run starts.
    Start {
        /// The question.
        question: String,
        /// The files given to the LLM, absolute paths, with how they were chosen.
        files: Vec<String>,
        /// "retrieved" or "pinned".
        selection: String,
        /// Answer-format guidelines, if any.
        guidelines: Option<String>,
        /// Values the answer must give, by name.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        wanted: Vec<super::answer::Wanted>,
        /// How the named values are written.
        #[serde(default)]
        form: super::answer::adapt::Form,
        /// The round limit.
        max_rounds: usize,
        /// The loop: `ds-star` or an ablation.
        mode: super::ablation::Mode,
        /// The time limit of one try of an LLM call, in milliseconds.
        llm_timeout_ms: u64,
        /// Where that limit comes from: `flag`, `env`, `file` or `default`.
        llm_timeout_from: super::llm::Origin,
        /// The rules on (`--rules`, spelled as it parses back).
        rules: super::rules::RuleSet,
    },
    /// Something the reader of the record should know (sandbox limits, fallbacks).
    Note {
        /// What happened.
        message: String,
    },
    /// A rule fired: what it changed, or what it did instead of the bare loop.
    Rule {
        /// The round, when the rule fired in one.
        #[serde(skip_serializing_if = "Option::is_none")]
        round: Option<usize>,
        /// The rule's name.
        rule: super::rules::Rule,
        /// The failure class it addresses.
        class: &'static str,
        /// What it did.
        message: String,
    },
    /// One LLM call.
    Llm {
        /// The round (0: before the first verification).
        round: usize,
        /// The `X-Lakestar-Role` header.
        role: String,
        /// The prompt file used.
        prompt_name: String,
        /// The model that answered.
        model: String,
        /// The system message: the prefix shared by the roles of the run.
        #[serde(skip_serializing_if = "Option::is_none")]
        system: Option<String>,
        /// The user message: the role's own prompt.
        prompt: String,
        /// The reply text.
        reply: String,
        /// The context window the prompt was fitted into.
        context_tokens: usize,
        /// Prompt tokens.
        prompt_tokens: u64,
        /// Prompt tokens the server took from its prefix cache (0 when it does not say).
        cached_tokens: u64,
        /// Leading tokens identical to the previous call's prompt: an estimate by the
        /// client's token counter, not a server figure.
        prefix_reused_estimate: u64,
        /// Completion tokens.
        completion_tokens: u64,
        /// Cost in USD, when a price is known.
        cost: Option<f64>,
        /// Milliseconds.
        latency_ms: u64,
        /// Attempts (1 + retries).
        attempts: u32,
        /// Answered from a cassette.
        replayed: bool,
    },
    /// A try of an LLM call failed (timeout, 429, 5xx, lost connection) and is made
    /// again after a wait.
    Retry {
        /// The round.
        round: usize,
        /// The role of the call.
        role: String,
        /// The retry about to be made, from 1.
        retry: u32,
        /// Retries allowed.
        max_retries: u32,
        /// What failed, in a few words ("a 120 s timeout", "HTTP 503").
        reason: String,
        /// The failure in full.
        error: String,
        /// Milliseconds waited before the retry.
        wait_ms: u64,
    },
    /// An LLM call failed for good: the run stops with this error.
    LlmFailed {
        /// The round.
        round: usize,
        /// The role of the call.
        role: String,
        /// The prompt file used.
        prompt_name: String,
        /// The error.
        error: String,
    },
    /// One execution of a script.
    Exec {
        /// The round.
        round: usize,
        /// What ran: "solution", "debug 1", "final", ….
        purpose: String,
        /// The script file.
        script: String,
        /// Its code.
        code: String,
        /// Exit code, when it exited.
        exit_code: Option<i32>,
        /// The signal that killed it.
        signal: Option<i32>,
        /// Killed at the wall-clock timeout.
        timed_out: bool,
        /// A resource limit it hit, as far as can be told.
        limit_hit: Option<String>,
        /// Standard output (cut to the budget).
        stdout: String,
        /// Standard error (cut to the budget).
        stderr: String,
        /// Milliseconds.
        duration_ms: u64,
    },
    /// The verifier's judgement (or the rule that stood in for it).
    Verdict {
        /// The round.
        round: usize,
        /// "sufficient" or "insufficient".
        verdict: super::parse::Verdict,
        /// The reply, or why no verifier was asked.
        reply: String,
        /// The reply was unreadable and the fallback applied.
        fallback: bool,
        /// What the verifier said, when it was asked (the verdict differs when the
        /// output lacks a requested quantity).
        verifier: Option<super::parse::Verdict>,
        /// The requested quantities the output gives no value for.
        missing: Vec<String>,
        /// The question's constraints the verifier marked not applied.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        unapplied: Vec<String>,
    },
    /// A step named columns or keys no file has: what retrieval added.
    Files {
        /// The round.
        round: usize,
        /// The names, quoted.
        names: String,
        /// Files added, absolute paths (none when pinned or retrieval found nothing).
        added: Vec<String>,
        /// The names still unknown afterwards (said in the answer).
        unknown: Vec<String>,
    },
    /// The router's decision and what it did to the plan.
    Route {
        /// The round.
        round: usize,
        /// The decision.
        route: super::parse::Route,
        /// The reply.
        reply: String,
        /// The reply was unreadable (or named no existing step) and the fallback applied.
        fallback: bool,
        /// Steps kept.
        kept: usize,
    },
    /// The plan after a change.
    Plan {
        /// The round.
        round: usize,
        /// The steps.
        steps: Vec<String>,
    },
    /// The run ends.
    Finish {
        /// See [`super::Status`].
        status: super::Status,
        /// The answer, if any.
        answer: Option<String>,
        /// Where it comes from.
        answer_source: Option<super::AnswerSource>,
    },
}

impl Event {
    /// The round the event belongs to, for the events of the loop's rounds.
    fn round(&self) -> Option<usize> {
        match self {
            Event::Llm { round, .. }
            | Event::Retry { round, .. }
            | Event::LlmFailed { round, .. }
            | Event::Exec { round, .. }
            | Event::Verdict { round, .. }
            | Event::Files { round, .. }
            | Event::Route { round, .. }
            | Event::Plan { round, .. } => Some(*round),
            Event::Rule { round, .. } => *round,
            Event::Start { .. } | Event::Note { .. } | Event::Finish { .. } => None,
        }
    }
}

/// What the trace written so far says of the run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Traced {
    /// The highest round of its events.
    pub rounds: usize,
    /// The latest plan.
    pub plan: Vec<String>,
    /// The verdicts, in order.
    pub verdicts: Vec<super::parse::Verdict>,
    /// The data files: those of the start and those retrieval added.
    pub files: Vec<String>,
    /// How often each rule fired, by name.
    pub rules: std::collections::BTreeMap<&'static str, usize>,
}

impl Traced {
    fn add(&mut self, event: &Event) {
        if let Some(round) = event.round() {
            self.rounds = self.rounds.max(round);
        }
        match event {
            Event::Start { files, .. } => self.files = files.clone(),
            Event::Files { added, .. } => self.files.extend(added.iter().cloned()),
            Event::Plan { steps, .. } => self.plan = steps.clone(),
            Event::Verdict { verdict, .. } => self.verdicts.push(*verdict),
            Event::Rule { rule, .. } => *self.rules.entry(rule.name()).or_default() += 1,
            _ => {}
        }
    }
}

/// An open run directory.
pub struct RunRecord {
    dir: PathBuf,
    trace: Mutex<std::fs::File>,
    traced: Mutex<Traced>,
    started: Instant,
}

impl RunRecord {
    /// Create `dir` (it must not hold a previous run's trace) and open its trace.
    pub fn create(dir: &Path) -> Result<RunRecord, AgentError> {
        let io = |e: std::io::Error| AgentError::RunDir {
            path: dir.to_path_buf(),
            source: e,
        };
        std::fs::create_dir_all(dir).map_err(io)?;
        let trace = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(dir.join("trace.jsonl"))
            .map_err(io)?;
        Ok(RunRecord {
            dir: dir.to_path_buf(),
            trace: Mutex::new(trace),
            traced: Mutex::default(),
            started: Instant::now(),
        })
    }

    /// The run directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where the scripts of one execution run.
    pub fn exec_dir(&self, n: usize, purpose: &str) -> PathBuf {
        let slug: String = purpose
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        self.dir.join("exec").join(format!("{n:03}-{slug}"))
    }

    /// Append one event, with the milliseconds since the run started, and flush it.
    pub fn event(&self, event: &Event) -> Result<(), AgentError> {
        let mut v = serde_json::to_value(event).expect("events serialize");
        v["t_ms"] = (self.started.elapsed().as_millis() as u64).into();
        let mut line = serde_json::to_string(&v).expect("events serialize");
        line.push('\n');
        let mut f = self.trace.lock().unwrap_or_else(|p| p.into_inner());
        f.write_all(line.as_bytes())
            .and_then(|_| f.flush())
            .map_err(|e| AgentError::RunDir {
                path: self.dir.join("trace.jsonl"),
                source: e,
            })?;
        self.traced
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .add(event);
        Ok(())
    }

    /// Record that `rule` fired (in `round`, when in one), with what it did.
    pub fn rule(
        &self,
        rule: super::rules::Rule,
        round: Option<usize>,
        message: String,
    ) -> Result<(), AgentError> {
        let message = match round {
            Some(r) => format!("round {r}: {message}"),
            None => message,
        };
        tracing::info!("rule {rule}: {message}");
        self.event(&Event::Rule {
            round,
            rule,
            class: rule.class(),
            message,
        })
    }

    /// What the trace written so far says of the run.
    pub fn traced(&self) -> Traced {
        self.traced
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Milliseconds since the run started.
    pub fn elapsed_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    /// Write one file of the record.
    pub fn write(&self, name: &str, contents: &[u8]) -> Result<(), AgentError> {
        let path = self.dir.join(name);
        std::fs::write(&path, contents).map_err(|e| AgentError::RunDir { path, source: e })
    }
}

/// `plan.md`: the question and the numbered steps.
pub fn plan_markdown(question: &str, steps: &[String]) -> String {
    let mut s = format!("# Plan\n\nQuestion: {}\n\n", question.trim());
    for (i, step) in steps.iter().enumerate() {
        s.push_str(&format!("{}. {}\n", i + 1, step.trim()));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_lines_are_json_with_kind_and_time_and_a_second_run_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join("r");
        let rec = RunRecord::create(&run).unwrap();
        rec.event(&Event::Note {
            message: "hello".into(),
        })
        .unwrap();
        rec.event(&Event::Plan {
            round: 1,
            steps: vec!["a".into()],
        })
        .unwrap();
        let text = std::fs::read_to_string(run.join("trace.jsonl")).unwrap();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines[0]["kind"], "note");
        assert_eq!(lines[1]["kind"], "plan");
        assert_eq!(lines[1]["steps"][0], "a");
        assert!(lines[1]["t_ms"].is_u64());
        assert!(RunRecord::create(&run).is_err());
    }

    #[test]
    fn the_traced_state_follows_the_events_written() {
        let dir = tempfile::tempdir().unwrap();
        let rec = RunRecord::create(&dir.path().join("r")).unwrap();
        let plan = |round, steps: &[&str]| Event::Plan {
            round,
            steps: steps.iter().map(|s| s.to_string()).collect(),
        };
        rec.event(&plan(0, &["load"])).unwrap();
        rec.event(&Event::Verdict {
            round: 1,
            verdict: super::super::parse::Verdict::Insufficient,
            reply: String::new(),
            fallback: false,
            verifier: None,
            missing: Vec::new(),
            unapplied: Vec::new(),
        })
        .unwrap();
        rec.event(&plan(1, &["load", "sum"])).unwrap();
        rec.event(&Event::LlmFailed {
            round: 2,
            role: "verifier".into(),
            prompt_name: "verifier.md".into(),
            error: "gave up".into(),
        })
        .unwrap();
        let t = rec.traced();
        assert_eq!(t.rounds, 2);
        assert_eq!(t.plan, ["load", "sum"]);
        assert_eq!(t.verdicts.len(), 1);
    }

    #[test]
    fn plan_is_numbered_from_one() {
        assert_eq!(
            plan_markdown("q?", &["load".into(), "sum".into()]),
            "# Plan\n\nQuestion: q?\n\n1. load\n2. sum\n"
        );
    }
}
