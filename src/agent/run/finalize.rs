//! The finalyzer formats the verified output; it does not solve the task again. Its
//! script's output is the answer when it runs, prints something that is not a dump, and
//! (when the guidelines ask for `@name[value]`) gives every value in that form — repaired
//! deterministically when it printed the values without the form, and a number that
//! differs from the verified output's for the same quantity replaced by that one. Otherwise the answer
//! is read from the verified solution's output, so a sufficient run never ends without
//! one.

use super::{numbered, observation, Loop, Ran, State};
use crate::agent::answer::{self, Quantity};
use crate::agent::llm::Role;
use crate::agent::prompts::Template;
use crate::agent::{AgentError, AnswerSource};

/// What the finalization produced.
pub(in crate::agent) struct Finalized {
    /// The finalyzer's script and its stdout.
    pub script: (String, String),
    /// The answer, if any could be given.
    pub answer: Option<String>,
    /// Where it comes from.
    pub source: Option<AnswerSource>,
}

impl Loop<'_> {
    /// The `@name[value]` form filled by the finalyzer from `printed` (values a script
    /// printed under labels the deterministic reader cannot match, `mean of WINDSPEED`
    /// for `@mean_wind_pre`), when the format asks for it: accepted only when it gives
    /// every formatted quantity and each of its numbers was printed there on a line
    /// whose label shares a word with its quantity.
    async fn fill(
        &self,
        round: usize,
        printed: &str,
        quantities: &[Quantity],
    ) -> Result<Option<String>, AgentError> {
        if printed.is_empty() || !quantities.iter().any(|q| q.formatted) {
            return Ok(None);
        }
        let reply = self
            .ask(
                round,
                Role::Finalyzer,
                Template::FinalyzerFill,
                &[
                    ("guidelines", self.guidelines()),
                    ("quantities", &super::quantities_text(quantities)),
                    ("result", printed),
                ],
            )
            .await?;
        let formatted = quantities.iter().filter(|q| q.formatted);
        let Some(filled) = answer::in_format(reply.trim(), quantities).filter(|a| {
            formatted
                .clone()
                .all(|q| a.contains(&format!("@{}[", q.name)))
        }) else {
            self.note("the finalyzer's filled form lacks a value asked for; not used".into())?;
            return Ok(None);
        };
        if !answer::filled_from_printed(&filled, printed, quantities) {
            self.note(format!(
                "the finalyzer's filled form has a number not printed beside a label of its quantity; not used: {filled}"
            ))?;
            return Ok(None);
        }
        Ok(Some(filled))
    }

    /// Ask the finalyzer for the script that prints the answer from `ran` (the verified
    /// solution, or the latest one when the rounds ran out), run it, and choose the
    /// answer.
    pub(in crate::agent) async fn finalize(
        &self,
        round: usize,
        st: &mut State,
        plan: &[String],
        ran: &Ran,
        quantities: &[Quantity],
    ) -> Result<Finalized, AgentError> {
        let result = observation(&ran.exec);
        let reply = self
            .ask(
                round,
                Role::Finalyzer,
                Template::Finalyzer,
                &[
                    ("question", self.question),
                    ("guidelines", self.guidelines()),
                    ("quantities", &super::quantities_text(quantities)),
                    ("descriptions", &st.desc),
                    ("plan", &numbered(plan)),
                    ("code", &ran.code),
                    ("result", &result),
                ],
            )
            .await?;
        let code = self.code(&reply)?;
        let fin = self.execute_as(round, st, code, "final", plan).await?;
        let printed = fin.exec.stdout.trim();
        // A short answer is asked unless the user's guidelines say otherwise.
        let short = quantities.iter().any(|q| q.formatted) || self.guidelines_given().is_none();
        let mut refused = None;
        if !fin.ok() {
            refused = Some("the final script failed".to_string());
        } else if printed.is_empty() {
            refused = Some("the final script printed nothing".to_string());
        } else if let Some(why) = answer::dump_reason(printed, short) {
            refused = Some(format!("the final script's answer is refused: {why}"));
        }
        let mut answer = None;
        if refused.is_none() {
            match answer::in_format(printed, quantities) {
                Some(a) => {
                    if a != printed {
                        self.note(
                            "the final script printed the values without the @name[value] form; put in that form".into(),
                        )?;
                    }
                    let (a, changed) = if ran.ok() {
                        answer::keep_verified(&a, &ran.exec.stdout, quantities)
                    } else {
                        (a, Vec::new())
                    };
                    if !changed.is_empty() {
                        self.note(format!(
                            "the final script's value of {} differs from the verified output's; the verified value is kept",
                            changed.join(", ")
                        ))?;
                    }
                    answer = Some((a, AnswerSource::FinalScript));
                }
                None => {
                    refused = Some(
                        "the final script's answer lacks a value asked in the @name[value] form"
                            .into(),
                    );
                }
            }
        }
        if let Some(why) = &refused {
            match answer::from_output(&ran.exec.stdout, quantities) {
                Some(a) => {
                    self.note(format!(
                        "{why}: answering from the verified solution's output"
                    ))?;
                    answer = Some((a, AnswerSource::SolutionOutput));
                }
                None => {
                    let shown = (fin.ok()
                        && !printed.is_empty()
                        && answer::dump_reason(printed, short).is_none())
                    .then_some(printed);
                    let source = shown.unwrap_or(ran.exec.stdout.trim());
                    match (self.fill(round, source, quantities).await?, shown) {
                        (Some(a), _) => {
                            self.note(format!(
                                "{why}: the finalyzer, asked again, filled the @name[value] form from the printed values"
                            ))?;
                            answer = Some((a, AnswerSource::FilledFromOutput));
                        }
                        (None, Some(p)) => {
                            self.note(format!(
                                "{why}, and the solution's output gives none either: keeping the final script's output"
                            ))?;
                            answer = Some((p.to_string(), AnswerSource::FinalScript));
                        }
                        (None, None) => self.note(format!(
                            "{why}, and the solution's output gives no answer either"
                        ))?,
                    }
                }
            }
        }
        let (answer, source) = match answer {
            Some((mut a, source)) => {
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
                (Some(a), Some(source))
            }
            None => (None, None),
        };
        Ok(Finalized {
            script: (fin.code.clone(), fin.exec.stdout.clone()),
            answer,
            source,
        })
    }
}
