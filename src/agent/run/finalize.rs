//! The answer. When the verified solution gave every requested value through the answer
//! API, an output adapter writes them in the asked form and no finalyzer is called.
//! Otherwise the finalyzer formats the verified output (it does not solve the task
//! again), as in the paper: its script's answer-API values, else its output.

use super::{numbered, observation, Loop, Ran, State};
use crate::agent::answer::{self, Quantity};
use crate::agent::llm::Role;
use crate::agent::prompts::Template;
use crate::agent::sandbox::Answered;
use crate::agent::{AgentError, AnswerSource};

/// What the finalization produced.
pub(in crate::agent) struct Finalized {
    /// The finalyzer's script and its stdout, when it ran.
    pub script: Option<(String, String)>,
    /// The answer, if any could be given.
    pub answer: Option<String>,
    /// Where it comes from.
    pub source: Option<AnswerSource>,
    /// The values given through the answer API by the script the answer comes from.
    pub answers: Vec<Answered>,
}

impl Loop<'_> {
    /// The answer from `ran`'s values given through the answer API, when they give every
    /// requested quantity (any value, when none is requested): written by the output
    /// adapter ([`answer::adapt`]), without a finalyzer call.
    pub(in crate::agent) fn answered(&self, ran: &Ran, quantities: &[Quantity]) -> Option<String> {
        if !ran.ok() {
            return None;
        }
        let texts = [self.question, self.guidelines_given().unwrap_or("")];
        answer::adapt::format(&ran.exec.answers, quantities, &texts, self.options.form)
    }

    /// The answer from `ran` (the verified solution, or the latest one when the rounds
    /// ran out): its answer-API values through the output adapter when they give every
    /// requested quantity; otherwise the finalyzer's script, run, its answer-API values
    /// or its output.
    pub(in crate::agent) async fn finalize(
        &self,
        round: usize,
        st: &mut State,
        plan: &[String],
        ran: &Ran,
        quantities: &[Quantity],
    ) -> Result<Finalized, AgentError> {
        if let Some(a) = self.answered(ran, quantities) {
            self.note(
                "the solution gave every requested value through the answer API: the answer is written from them, without a finalyzer call".into(),
            )?;
            let a = self.with_unknown_names(st, a);
            return Ok(Finalized {
                script: None,
                answer: Some(a),
                source: Some(AnswerSource::Answers),
                answers: ran.exec.answers.clone(),
            });
        }
        let result = observation(&ran.exec);
        let reply = self
            .ask(
                round,
                Role::Finalyzer,
                Template::Finalyzer,
                &[
                    ("question", self.question),
                    ("guidelines", self.guidelines()),
                    ("quantities", &self.quantities_text(quantities)),
                    ("descriptions", &st.desc),
                    ("plan", &numbered(plan)),
                    ("code", &ran.code),
                    ("result", &result),
                ],
            )
            .await?;
        let code = self.code(&reply)?;
        let fin = self.execute_as(round, st, code, "final", plan).await?;
        let script = Some((fin.code.clone(), fin.exec.stdout.clone()));
        let (answer, source) = if let Some(a) = self.answered(&fin, quantities) {
            (Some(a), Some(AnswerSource::Answers))
        } else {
            let printed = fin.exec.stdout.trim();
            if !fin.ok() {
                self.note("the final script failed: no answer".into())?;
                (None, None)
            } else if printed.is_empty() {
                self.note("the final script printed nothing: no answer".into())?;
                (None, None)
            } else {
                (Some(printed.to_string()), Some(AnswerSource::FinalScript))
            }
        };
        Ok(Finalized {
            script,
            answer: answer.map(|a| self.with_unknown_names(st, a)),
            source,
            answers: fin.exec.answers.clone(),
        })
    }

    /// `a` with the note that names no given file has are not used, when there are any.
    fn with_unknown_names(&self, st: &State, mut a: String) -> String {
        if !st.unknown.is_empty() {
            a.push_str(&format!(
                "\n(Note: no given file has a column or key named {}; the answer does not use it.)",
                st.unknown
                    .iter()
                    .map(|n| format!("{n:?}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        a
    }
}
