//! Ablations of Algorithm 1, run in the same harness as the full loop (`bench dabench
//! --mode`) so that what each part of DS-STAR is worth can be measured with one model:
//!
//! - [`Mode::SingleShot`]: one coder call writes one script for the question (with the
//!   descriptions and the answer format); it runs once and its output is the answer.
//! - [`Mode::NoVerifier`]: plan → code → run for a fixed number of steps, each step planned
//!   from the previous output and coded on the previous script, with no verifier and no
//!   router; then the finalyzer, as in the full loop.
//!
//! Both reuse [`Loop`]'s helpers (recorded LLM calls, sandbox runs, the debugger), so their
//! run records read like the full loop's.

use super::llm::Role;
use super::prompts::Template;
use super::run::{observation, Loop, LoopOutcome, State};
use super::{AgentError, AnswerSource, Status};
use serde::Serialize;

/// Steps the no-verifier ablation plans and runs at most (fewer when `max_rounds` is
/// lower). Without a verifier nothing says when to stop; three steps cover what DABench
/// questions take the full loop (load, compute, combine), so the ablation is not starved.
pub const NO_VERIFIER_STEPS: usize = 3;

/// What the no-verifier ablation's planner is told in place of the verifier's finding.
const NOT_CHECKED: &str =
    "Nothing checked this output (no verifier in this mode): plan the next step toward the answer.";

/// Which loop a run uses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// DS-STAR's Algorithm 1: verifier, router, planner and coder until sufficient.
    #[default]
    DsStar,
    /// One script written in one call, run once.
    SingleShot,
    /// A fixed number of planned steps without verifier or router, then the finalyzer.
    NoVerifier,
}

impl Mode {
    /// The name used on the command line and in records.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::DsStar => "ds-star",
            Mode::SingleShot => "single-shot",
            Mode::NoVerifier => "no-verifier",
        }
    }
}

impl Loop<'_> {
    /// The single-shot ablation: one coder call, one run (no debugger); its values given
    /// through the answer API, written by the output adapter as the full loop's are,
    /// else its output, is the answer.
    pub(super) async fn single_shot(&self) -> Result<LoopOutcome, AgentError> {
        let mut st = State::new(self.files);
        let reply = self
            .ask(
                0,
                Role::Coder,
                Template::SingleShot,
                &[
                    ("question", self.question),
                    ("guidelines", self.guidelines()),
                    ("descriptions", &st.desc),
                ],
            )
            .await?;
        let plan = vec!["Answer the question in one script (single-shot).".to_string()];
        self.plan_changed(0, &plan)?;
        let code = self.code(&reply)?;
        let exec = self.run_script(0, &mut st, &code, "final").await?;
        let printed = exec.stdout.trim();
        let quantities = self.quantities();
        let ran = super::run::Ran {
            code: code.clone(),
            exec: exec.clone(),
        };
        let answered = self.answered(&ran, &quantities);
        let source = if answered.is_some() {
            AnswerSource::Answers
        } else {
            AnswerSource::FinalScript
        };
        let answer =
            answered.or_else(|| (exec.success() && !printed.is_empty()).then(|| printed.into()));
        if answer.is_none() {
            self.note(
                "the single-shot script printed no answer (it failed or printed nothing)".into(),
            )?;
        }
        let output = observation(&exec);
        Ok(LoopOutcome {
            status: if answer.is_some() {
                Status::Unverified
            } else {
                Status::NoAnswer
            },
            rounds: 1,
            verdicts: Vec::new(),
            plan,
            solution: (code.clone(), output),
            final_script: Some((code, exec.stdout.clone())),
            answer_source: answer.as_ref().map(|_| source),
            answer,
            answers: exec.answers.clone(),
            files: st.paths(),
            unknown_names: Vec::new(),
        })
    }

    /// The no-verifier ablation: up to [`NO_VERIFIER_STEPS`] planned steps, each coded on
    /// the previous script, then the finalyzer.
    pub(super) async fn no_verifier(&self) -> Result<LoopOutcome, AgentError> {
        let mut st = State::new(self.files);
        let steps = NO_VERIFIER_STEPS.min(self.options.max_rounds.max(1));
        let quantities = self.quantities();
        // Unchecked, as its later steps: this mode has no check of requested values.
        let (mut plan, mut ran) = self.first_step(&mut st, &[]).await?;
        let mut scripts = vec![ran.code.clone()];
        for round in 1..steps {
            let result = observation(&ran.exec);
            ran = self
                .next_step(
                    round,
                    &mut st,
                    &mut plan,
                    &mut scripts,
                    (&result, NOT_CHECKED, &[]),
                    None,
                )
                .await?;
        }
        let fin = self
            .finalize(steps, &mut st, &plan, &ran, &quantities)
            .await?;
        Ok(LoopOutcome {
            status: if fin.answer.is_some() {
                Status::Unverified
            } else {
                Status::NoAnswer
            },
            rounds: steps,
            verdicts: Vec::new(),
            plan,
            solution: (ran.code.clone(), observation(&ran.exec)),
            final_script: fin.script,
            answers: fin.answers,
            answer: fin.answer,
            answer_source: fin.source,
            files: st.paths(),
            unknown_names: Vec::new(),
        })
    }
}
