//! DS-STAR's Algorithm 1: plan one step, code it, run it, then up to `max_rounds` times
//! verify → route → plan the next step → code it on top of the base script → run, and
//! finally let the finalyzer write the script that prints the answer.
//!
//! The invariant that public implementations get wrong: `scripts[i]` is the script that
//! implemented `plan[..=i]`. When the router names step N, both lists are cut to N − 1
//! entries, so the coder's base code is the script of the kept prefix, not the latest
//! script.
//!
//! The rules beyond the paper (`super::rules`): a "sufficient" stands only when the
//! script gave every value the caller named through the answer API (`verify`); an
//! output that comes back unchanged is not judged again and its step gives way to one
//! asking for what is missing; `debug` stops a debugger that repeats itself; `names`
//! sends a step naming a column no file has to retrieval.

mod calls;
mod debug;
mod finalize;
mod names;
mod remedy;
mod text;
mod verify;

use text::{constraints_text, missing_text};
pub use text::{numbered, observation};

pub use super::ablation::Mode;

use super::answer::{self, adapt::Form, Wanted};
use super::budget::SharedPrefix;
use super::context::{descriptions, FileContext, Retriever};
use super::llm::{CallOptions, LlmClient, Role};
use super::parse::{self, Verdict};
use super::prompts::{Prompts, Template};
use super::record::RunRecord;
use super::rules::{Rule, RuleSet};
use super::sandbox::{Answered, Execution, Sandbox};
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
    /// Values the answer must give, by name.
    pub wanted: Vec<Wanted>,
    /// How the values given through the answer API are written.
    pub form: Form,
    /// Which loop runs: Algorithm 1, or one of its ablations.
    pub mode: Mode,
    /// The rules on (`--rules`).
    pub rules: RuleSet,
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
    /// The values given through the answer API by the script the answer comes from, at
    /// full precision.
    pub answers: Vec<Answered>,
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
        let quantities = self.quantities();
        let wanted = self.quantities_text(&quantities);
        let constraints = answer::constraints(self.question);
        let checklist = constraints_text(&constraints);

        // Round 0: the first step, its script and its result.
        let (mut plan, mut ran) = self.first_step(&mut st, &quantities).await?;
        let mut scripts = vec![ran.code.clone()];
        let mut verdicts = Vec::new();
        let mut status = Status::MaxRounds;
        let mut rounds = 0;
        // The latest plan whose script ran and gave every requested value through the
        // answer API, though the verifier found it insufficient: what the rounds' end
        // falls back on when the last step went astray.
        let mut complete: Option<(Vec<String>, Ran)> = None;

        // The previous round's output, when its script ran: an output that comes back
        // unchanged from a new step (a 1.5B coder re-prints the same means round after
        // round) is not judged again, and its step gives way to one
        // asking for what is missing.
        let mut previous: Option<String> = None;

        for round in 1..=self.options.max_rounds {
            rounds = round;
            let result = observation(&ran.exec);
            let steps = numbered(&plan);
            let asked = verify::Asked {
                quantities: &quantities,
                wanted: &wanted,
                constraints: &constraints,
                checklist: &checklist,
                steps: &steps,
                result: &result,
            };
            let judged = self.judge(round, &ran, previous.as_deref(), &asked).await?;
            previous = ran.ok().then(|| ran.exec.stdout.clone());
            let repeated = judged.repeated;
            let verdict = judged.verdict;
            let lacking = judged.lacking;
            let unapplied: Vec<&str> = judged.unapplied.iter().map(String::as_str).collect();
            verdicts.push(verdict);
            if gave_every_value(&ran, &lacking) {
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

            let dropped = if repeated && !due.is_empty() {
                // No router: the step that changed nothing is dropped, and the next one
                // asks for the missing quantities.
                let dropped = plan.pop().unwrap_or_default();
                scripts.pop();
                self.fired(Rule::RepeatedOutput, Some(round), format!(
                    "step {} printed the same output as the plan before it; it is dropped and the next step asks for the missing quantities",
                    plan.len() + 1
                ))?;
                Some(dropped)
            } else {
                let shown = verify::Shown {
                    steps: &steps,
                    result: &result,
                    missing: &missing,
                };
                self.route(round, &st, &mut plan, &mut scripts, ran.ok(), &shown)
                    .await?;
                None
            };
            ran = self
                .next_step(
                    round,
                    &mut st,
                    &mut plan,
                    &mut scripts,
                    (&result, &missing, &due),
                    dropped.as_deref(),
                )
                .await?;
            debug_assert_eq!(scripts.len(), plan.len());
        }
        if status == Status::MaxRounds && self.on(Rule::LastComplete) {
            let last_complete = gave_every_value(&ran, &self.lacking_in(&ran, &quantities));
            match complete {
                Some((p, r)) if !last_complete => {
                    self.fired(Rule::LastComplete, None, format!(
                        "no sufficient plan after {} rounds, and the latest script {}: finalizing from the latest plan whose script gave every requested value ({} steps)",
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
        } else if status == Status::MaxRounds {
            self.note(format!(
                "no sufficient plan after {} rounds: finalizing from the latest plan",
                self.options.max_rounds
            ))?;
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
            final_script: fin.script,
            answers: fin.answers,
            answer: fin.answer,
            answer_source: fin.source,
            files: st.paths(),
            unknown_names: st.unknown,
        })
    }

    /// Round 0: the planner's first step (its names checked), coded and run. With
    /// `wanted` (the requested quantities, in a mode that checks them), a first step
    /// that computes none of them is replaced by one asking for them, as a later step
    /// is ([`Self::next_step`]): a 1.5B planner may open a Shapiro–Wilk question with
    /// "compute the mean of `MEANPOT`", a round spent on a value nobody asked for.
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
        if self.on(Rule::DueStep)
            && !wanted.is_empty()
            && !wanted.iter().any(|q| q.mentioned_in(&step))
        {
            self.fired(Rule::DueStep, Some(0), format!(
                "the planner's first step computes none of the requested quantities; asking for them instead of: {step}"
            ))?;
            step = text::due_step(wanted);
        }
        let plan = vec![step];
        self.plan_changed(0, &plan)?;
        if self.on(Rule::UnknownNames) {
            self.check_step(0, st, &[self.question, &plan[0]]).await?;
        }
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
    /// replaced by one asking for them; and a step the plan already has is
    /// not added twice (small models re-propose the step whose script did not do what
    /// it said): the plan is cut back to before it, and it is coded anew at another
    /// temperature. `dropped` is a step just taken off the plan because its script
    /// printed what the plan before it had: the planner is not asked, the step asks for
    /// the missing quantities (at another temperature when it was that step already).
    pub(in crate::agent) async fn next_step(
        &self,
        round: usize,
        st: &mut State,
        plan: &mut Vec<String>,
        scripts: &mut Vec<String>,
        seen: (&str, &str, &[answer::Quantity]),
        dropped: Option<&str>,
    ) -> Result<Ran, AgentError> {
        let (result, missing, due) = seen;
        let mut call = CallOptions::default();
        let step = match dropped {
            Some(d) if !due.is_empty() => {
                let step = text::due_step(due);
                if text::same_step(d, &step) {
                    call.temperature =
                        Some(debug::other_temperature(self.llm.config().temperature));
                }
                step
            }
            _ => self.planned_step(round, plan, result, missing, due).await?,
        };
        if let Some(i) = plan
            .iter()
            .position(|s| text::same_step(s, &step))
            .filter(|_| self.on(Rule::RepeatedStep))
        {
            self.fired(Rule::RepeatedStep, Some(round), format!(
                "the planner proposed step {} again; that step is coded anew at another temperature instead of added twice",
                i + 1
            ))?;
            plan.truncate(i);
            scripts.truncate(i);
            call.temperature = Some(debug::other_temperature(self.llm.config().temperature));
        }
        plan.push(step.clone());
        self.plan_changed(round, plan)?;
        if self.on(Rule::UnknownNames) {
            self.check_step(round, st, &[&step]).await?;
        }
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

    /// The planner's next step, or the step asking for the `due` quantities when the
    /// planner's computes none of them.
    async fn planned_step(
        &self,
        round: usize,
        plan: &[String],
        result: &str,
        missing: &str,
        due: &[answer::Quantity],
    ) -> Result<String, AgentError> {
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
        let step = parse::step(&next);
        if self.on(Rule::DueStep) && !due.is_empty() && !due.iter().any(|q| q.mentioned_in(&step)) {
            let names: Vec<String> = due
                .iter()
                .take(text::MAX_DUE)
                .map(|q| format!("`{}`", q.name))
                .collect();
            self.fired(Rule::DueStep, Some(round), format!(
                "the planner's step computes none of the missing quantities; asking for {} instead of: {step}",
                names.join(", ")
            ))?;
            return Ok(text::due_step(due));
        }
        Ok(step)
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

    /// The quantities asked for: the caller's names, else the question's statistics.
    pub(in crate::agent) fn quantities(&self) -> Vec<answer::Quantity> {
        answer::requested(self.question, &self.options.wanted)
    }

    /// The `{{quantities}}` block of `quantities`, in the form the caller asked for.
    pub(in crate::agent) fn quantities_text(&self, quantities: &[answer::Quantity]) -> String {
        text::quantities_text(quantities, self.options.form == Form::Tagged)
    }
}

/// Whether `ran` ran and gave every requested value through the answer API (`lacking`:
/// what it left out): a plan the rounds' end may fall back on.
fn gave_every_value(ran: &Ran, lacking: &[String]) -> bool {
    ran.ok() && !ran.exec.answers.is_empty() && lacking.is_empty()
}
