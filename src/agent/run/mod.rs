//! DS-STAR's Algorithm 1: plan one step, code it, run it, then up to `max_rounds` times
//! verify → route → plan the next step → code it on top of the base script → run, and
//! finally let the finalyzer write the script that prints the answer.
//!
//! The invariant that public implementations get wrong: `scripts[i]` is the script that
//! implemented `plan[..=i]`. When the router names step N, both lists are cut to N − 1
//! entries, so the coder's base code is the script of the kept prefix, not the latest
//! script.
//!
//! Guarded for small models: a "sufficient" stands only when the output holds every
//! requested quantity (`answer::missing`); `debug` stops a debugger that repeats itself;
//! `finalize` falls back to the verified output; `names` sends a step naming a column no
//! file has to retrieval.

mod calls;
mod debug;
mod finalize;
mod names;
mod remedy;
mod text;

pub(in crate::agent) use text::quantities_text;
use text::{constraints_text, missing_text};
pub use text::{numbered, observation};

pub use super::ablation::Mode;

use super::answer;
use super::budget::SharedPrefix;
use super::context::{descriptions, FileContext, Retriever};
use super::llm::{CallOptions, LlmClient, Role};
use super::parse::{self, Route, Verdict};
use super::prompts::{Prompts, Template};
use super::record::{Event, RunRecord};
use super::sandbox::{Execution, Sandbox};
use super::{AgentError, AnswerSource, Progress, Status};

/// Tracebacks longer than this go through the summarizer before the debugger sees them;
/// shorter ones are already what a summary would be.
pub const SUMMARIZE_ABOVE: usize = 2000;

/// The temperature of a debugger call that must change course (its last reply repeated
/// an earlier script or error): far enough from the usual low settings to give another
/// answer. [`CHANGE_COURSE_TEMPERATURE_ALT`] when the configured one is already near it.
pub const CHANGE_COURSE_TEMPERATURE: f32 = 0.9;

/// See [`CHANGE_COURSE_TEMPERATURE`].
pub const CHANGE_COURSE_TEMPERATURE_ALT: f32 = 0.4;

/// What the finalyzer is told when the user gave no answer format.
pub const DEFAULT_GUIDELINES: &str =
    "No particular format was asked for: print the answer plainly (a number, a name, a short list or one sentence).";

/// Settings of the loop.
#[derive(Debug, Clone)]
pub struct LoopOptions {
    /// Verifier rounds at most.
    pub max_rounds: usize,
    /// Debugger attempts per failing script.
    pub debug_attempts: usize,
    /// Answer-format guidelines for the finalyzer.
    pub guidelines: Option<String>,
    /// Which loop runs: Algorithm 1, or one of its ablations.
    pub mode: Mode,
}

/// What the loop produced.
#[derive(Debug, Clone)]
pub struct LoopOutcome {
    /// How it ended.
    pub status: Status,
    /// Verifier rounds run.
    pub rounds: usize,
    /// Every verdict, in order.
    pub verdicts: Vec<Verdict>,
    /// The final plan.
    pub plan: Vec<String>,
    /// The script implementing it and its observed output.
    pub solution: (String, String),
    /// The finalyzer's script and its output, when it ran.
    pub final_script: Option<(String, String)>,
    /// The answer: the final script's output, trimmed, or read from the solution's.
    pub answer: Option<String>,
    /// Where the answer comes from.
    pub answer_source: Option<AnswerSource>,
    /// The data files at the end (retrieval may have added some), absolute paths.
    pub files: Vec<String>,
    /// Column or key names the question or a step named that no file has.
    pub unknown_names: Vec<String>,
}

/// One run of the loop over `files`.
pub struct Loop<'a> {
    /// The LLM.
    pub llm: &'a LlmClient,
    /// Where scripts run.
    pub sandbox: &'a Sandbox,
    /// The prompt set.
    pub prompts: &'a Prompts,
    /// The run record.
    pub record: &'a RunRecord,
    /// Live progress.
    pub progress: &'a (dyn Fn(Progress) + Send + Sync),
    /// The question.
    pub question: &'a str,
    /// The data files.
    pub files: &'a [FileContext],
    /// More files when a step names a column no file has (`None`: the files are pinned).
    pub retriever: Option<&'a dyn Retriever>,
    /// Settings.
    pub options: &'a LoopOptions,
    /// The system message every role's prompt starts with, built once per run
    /// (`Default::default()` when constructing).
    pub prefix: SharedPrefix,
}

/// A script after execution (and debugging): its final code and what it showed.
#[derive(Clone)]
pub(in crate::agent) struct Ran {
    pub(in crate::agent) code: String,
    pub(in crate::agent) exec: Execution,
}

impl Ran {
    pub(in crate::agent) fn ok(&self) -> bool {
        self.exec.success()
    }
}

/// What changes during a run besides the plan: the files (retrieval may add some) and
/// their descriptions, the names checked against them, the executions counted.
pub(in crate::agent) struct State {
    files: Vec<FileContext>,
    pub(in crate::agent) desc: String,
    /// Normalized names already checked (each is resolved once).
    checked: Vec<String>,
    /// Names no file has, even after retrieval.
    unknown: Vec<String>,
    /// Normalized names the question or a step says the analysis creates.
    created: Vec<String>,
    execs: usize,
}

impl State {
    /// The state of a run starting on `files`.
    pub(in crate::agent) fn new(files: &[FileContext]) -> State {
        State {
            files: files.to_vec(),
            desc: descriptions(files),
            checked: Vec::new(),
            unknown: Vec::new(),
            created: Vec::new(),
            execs: 0,
        }
    }

    /// The data files now, absolute paths.
    pub(in crate::agent) fn paths(&self) -> Vec<String> {
        self.files
            .iter()
            .map(|f| f.path.display().to_string())
            .collect()
    }
}

impl Loop<'_> {
    /// Run Algorithm 1 and the finalyzer.
    pub async fn run(&self) -> Result<LoopOutcome, AgentError> {
        match self.options.mode {
            Mode::DsStar => {}
            Mode::SingleShot => return self.single_shot().await,
            Mode::NoVerifier => return self.no_verifier().await,
        }
        let mut st = State::new(self.files);
        let quantities = answer::requested(self.question, self.guidelines_given());
        let wanted = quantities_text(&quantities);
        let constraints = answer::constraints(self.question);
        let checklist = constraints_text(&constraints);

        // Round 0: the first step, its script and its result.
        let (mut plan, mut ran) = self.first_step(&mut st, &quantities).await?;
        let mut scripts = vec![ran.code.clone()];
        let mut verdicts = Vec::new();
        let mut status = Status::MaxRounds;
        let mut rounds = 0;
        // The latest plan whose script ran and printed every requested quantity, though
        // the verifier found it insufficient: what the rounds' end falls back on when the
        // last step went astray.
        let mut complete: Option<(Vec<String>, Ran)> = None;

        for round in 1..=self.options.max_rounds {
            rounds = round;
            let result = observation(&ran.exec);
            let steps = numbered(&plan);
            let lacking = if ran.ok() {
                answer::missing(&ran.exec.stdout, &quantities)
            } else {
                Vec::new()
            };
            let mut unapplied: Vec<&str> = Vec::new();
            let verdict = if ran.ok() {
                let values = [
                    ("guidelines", self.guidelines()),
                    ("quantities", wanted.as_str()),
                    ("constraints", checklist.as_str()),
                    ("plan", steps.as_str()),
                    ("code", ran.code.as_str()),
                    ("result", result.as_str()),
                ];
                let mut reply = self
                    .ask(round, Role::Verifier, Template::Verifier, &values)
                    .await?;
                let mut v = parse::verdict(&reply);
                if v.fallback {
                    // Small models often answer with the answer itself; one short ask for
                    // the verdict line (its system prefix is cached) costs less than a
                    // round spent on an unread verdict.
                    self.note(format!(
                        "round {round}: verifier reply not readable as sufficient/insufficient; asked again for the verdict alone"
                    ))?;
                    reply = self
                        .ask(round, Role::Verifier, Template::VerifierVerdict, &values)
                        .await?;
                    v = parse::verdict(&reply);
                    if v.fallback {
                        self.note(format!(
                            "round {round}: verifier reply still not readable; counted as insufficient"
                        ))?;
                    }
                }
                // A constraint the walk-through marks not applied outweighs a "sufficient"
                // at its end; the deterministic check has the last word over both.
                unapplied = parse::unapplied(&reply, constraints.len())
                    .into_iter()
                    .map(|n| constraints[n - 1].as_str())
                    .collect();
                let value = if lacking.is_empty() && unapplied.is_empty() {
                    v.value
                } else {
                    Verdict::Insufficient
                };
                if v.value == Verdict::Sufficient && lacking.is_empty() && !unapplied.is_empty() {
                    self.note(format!(
                        "round {round}: the verifier said sufficient but marked {} of the question's constraints not applied; counted as insufficient",
                        unapplied.len()
                    ))?;
                }
                self.record.event(&Event::Verdict {
                    round,
                    verdict: value,
                    reply,
                    fallback: v.fallback,
                    verifier: Some(v.value),
                    missing: lacking.clone(),
                    unapplied: unapplied.iter().map(|c| c.to_string()).collect(),
                })?;
                value
            } else {
                self.record.event(&Event::Verdict {
                    round,
                    verdict: Verdict::Insufficient,
                    reply: "(not asked: the script still fails after debugging)".into(),
                    fallback: false,
                    verifier: None,
                    missing: Vec::new(),
                    unapplied: Vec::new(),
                })?;
                Verdict::Insufficient
            };
            verdicts.push(verdict);
            if ran.ok() && lacking.is_empty() {
                complete = Some((plan.clone(), ran.clone()));
            }
            if !lacking.is_empty() {
                (self.progress)(Progress::Missing {
                    round,
                    quantities: lacking.clone(),
                });
            }
            (self.progress)(Progress::Verdict { round, verdict });
            if verdict == Verdict::Sufficient {
                status = Status::Sufficient;
                break;
            }
            let missing = missing_text(&lacking, &unapplied, ran.ok());
            let due: Vec<answer::Quantity> = quantities
                .iter()
                .filter(|q| lacking.contains(&q.name))
                .cloned()
                .collect();

            let reply = self
                .ask(
                    round,
                    Role::Router,
                    Template::Router,
                    &[
                        ("question", self.question),
                        ("descriptions", &st.desc),
                        ("plan", &steps),
                        ("count", &plan.len().to_string()),
                        ("result", &result),
                        ("missing", &missing),
                    ],
                )
                .await?;
            let route = parse::route(&reply, plan.len());
            if route.fallback {
                self.note(format!(
                    "round {round}: router reply not readable as `Add Step` or `Step N` (1…{}); taken as Add Step",
                    plan.len()
                ))?;
            }
            if let Route::Step(n) = route.value {
                plan.truncate(n - 1);
                scripts.truncate(n - 1);
            } else if !ran.ok() {
                // A step whose script still fails is no base to build on: the next step
                // takes its place (the paper's router would name it; small models add).
                self.note(format!(
                    "round {round}: step {} still fails after debugging; the next step replaces it instead of building on its script",
                    plan.len()
                ))?;
                plan.pop();
                scripts.pop();
            }
            self.record.event(&Event::Route {
                round,
                route: route.value,
                reply,
                fallback: route.fallback,
                kept: plan.len(),
            })?;
            (self.progress)(Progress::Route {
                round,
                route: route.value,
            });

            ran = self
                .next_step(
                    round,
                    &mut st,
                    &mut plan,
                    &mut scripts,
                    (&result, &missing, &due),
                )
                .await?;
            debug_assert_eq!(scripts.len(), plan.len());
        }
        if status == Status::MaxRounds {
            let last_complete =
                ran.ok() && answer::missing(&ran.exec.stdout, &quantities).is_empty();
            match complete {
                Some((p, r)) if !last_complete => {
                    self.note(format!(
                        "no sufficient plan after {} rounds, and the latest script {}: finalizing from the latest plan whose output held every requested quantity ({} steps)",
                        self.options.max_rounds,
                        if ran.ok() { "lacks a requested quantity" } else { "fails" },
                        p.len()
                    ))?;
                    plan = p;
                    ran = r;
                }
                _ => self.note(format!(
                    "no sufficient plan after {} rounds: finalizing from the latest plan",
                    self.options.max_rounds
                ))?,
            }
        }

        let fin = self
            .finalize(rounds, &mut st, &plan, &ran, &quantities)
            .await?;
        Ok(LoopOutcome {
            status: if fin.answer.is_some() {
                status
            } else {
                Status::NoAnswer
            },
            rounds,
            verdicts,
            plan,
            solution: (ran.code.clone(), observation(&ran.exec)),
            final_script: Some(fin.script),
            answer: fin.answer,
            answer_source: fin.source,
            files: st.paths(),
            unknown_names: st.unknown,
        })
    }

    /// Round 0: the planner's first step (its names checked), coded and run. With
    /// `wanted` (the requested quantities, in a mode that checks them), a first step
    /// that computes none of them is replaced by one asking for them, as a later step
    /// is ([`Self::next_step`]): the 1.5B planner opened a Shapiro–Wilk question with
    /// "compute the mean of `MEANPOT`" (DABench q268), a round spent on a value nobody
    /// asked for before the check sent it back.
    pub(in crate::agent) async fn first_step(
        &self,
        st: &mut State,
        wanted: &[answer::Quantity],
    ) -> Result<(Vec<String>, Ran), AgentError> {
        let first = self
            .ask(
                0,
                Role::Planner,
                Template::PlannerFirst,
                &[("question", self.question), ("descriptions", &st.desc)],
            )
            .await?;
        let mut step = parse::step(&first);
        if !wanted.is_empty() && !wanted.iter().any(|q| q.mentioned_in(&step)) {
            self.note(format!(
                "round 0: the planner's first step computes none of the requested quantities; asking for them instead of: {step}"
            ))?;
            step = text::due_step(wanted);
        }
        let plan = vec![step];
        self.plan_changed(0, &plan)?;
        self.check_step(0, st, &[self.question, &plan[0]]).await?;
        let reply = self
            .ask(
                0,
                Role::Coder,
                Template::CoderFirst,
                &[("descriptions", &st.desc), ("step", &plan[0])],
            )
            .await?;
        let code = self.code(&reply)?;
        let ran = self.execute(0, st, code, &plan).await?;
        Ok((plan, ran))
    }

    /// A later round: the planner's next step after `plan` (its names checked), coded on
    /// the last of `scripts` (`scripts[i]` implements `plan[..=i]`; none when the plan
    /// starts over) and run; its script is pushed onto `scripts`.
    ///
    /// `seen` is what the planner is shown: the output, what is missing, and the
    /// requested quantities the output lacks. Two guards for small models: a step that
    /// computes none of those quantities (the planner drifted to something else) is
    /// replaced by one asking for the first of them; and a step the plan already has is
    /// not added twice (small models re-propose the step whose script did not do what
    /// it said): the plan is cut back to before it, and it is coded anew at another
    /// temperature.
    pub(in crate::agent) async fn next_step(
        &self,
        round: usize,
        st: &mut State,
        plan: &mut Vec<String>,
        scripts: &mut Vec<String>,
        seen: (&str, &str, &[answer::Quantity]),
    ) -> Result<Ran, AgentError> {
        let (result, missing, due) = seen;
        let kept = if plan.is_empty() {
            "(no steps: the plan starts over)".to_string()
        } else {
            numbered(plan)
        };
        let next = self
            .ask(
                round,
                Role::Planner,
                Template::PlannerNext,
                &[("plan", &kept), ("result", result), ("missing", missing)],
            )
            .await?;
        let mut step = parse::step(&next);
        if !due.is_empty() && !due.iter().any(|q| q.mentioned_in(&step)) {
            let names: Vec<String> = due
                .iter()
                .take(text::MAX_DUE)
                .map(|q| format!("`{}`", q.name))
                .collect();
            self.note(format!(
                "round {round}: the planner's step computes none of the missing quantities; asking for {} instead of: {step}",
                names.join(", ")
            ))?;
            step = text::due_step(due);
        }
        let mut call = CallOptions::default();
        if let Some(i) = plan.iter().position(|s| text::same_step(s, &step)) {
            self.note(format!(
                "round {round}: the planner proposed step {} again; that step is coded anew at another temperature instead of added twice",
                i + 1
            ))?;
            plan.truncate(i);
            scripts.truncate(i);
            call.temperature = Some(debug::other_temperature(self.llm.config().temperature));
        }
        plan.push(step.clone());
        self.plan_changed(round, plan)?;
        self.check_step(round, st, &[&step]).await?;
        let reply = match scripts.last() {
            Some(base) => {
                self.ask_with(
                    round,
                    Role::Coder,
                    Template::CoderNext,
                    &[
                        ("plan", &numbered(plan)),
                        ("code", base),
                        ("previous", &(plan.len() - 1).to_string()),
                        ("number", &plan.len().to_string()),
                        ("step", &step),
                    ],
                    &call,
                )
                .await?
            }
            None => {
                self.ask_with(
                    round,
                    Role::Coder,
                    Template::CoderFirst,
                    &[("step", &step)],
                    &call,
                )
                .await?
            }
        };
        let code = self.code(&reply)?;
        let ran = self.execute(round, st, code, plan).await?;
        scripts.push(ran.code.clone());
        Ok(ran)
    }

    /// The user's guidelines, when given.
    pub(in crate::agent) fn guidelines_given(&self) -> Option<&str> {
        self.options
            .guidelines
            .as_deref()
            .filter(|g| !g.trim().is_empty())
    }

    /// The guidelines a prompt shows.
    pub(in crate::agent) fn guidelines(&self) -> &str {
        self.guidelines_given().unwrap_or(DEFAULT_GUIDELINES)
    }
}
