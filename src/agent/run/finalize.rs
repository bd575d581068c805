//! The answer. When the verified solution gave every requested value through the answer
//! API, an output adapter writes them in the asked form and no finalyzer is called.
//! Otherwise the finalyzer formats the verified output (it does not solve the task
//! again): its script's answer-API values, or its output. Rules of the `finalize` family
//! mend that output: the `@name[value]` form put on printed values (`printed-form`), the
//! verified number kept (`verified-value`), a dump or failure answered from the verified
//! output (`refuse-dump`), the form filled by the finalyzer asked again (`fill-form`).

use super::{numbered, observation, Loop, Ran, State};
use crate::agent::answer::{self, adapt::Form, Quantity};
use crate::agent::llm::Role;
use crate::agent::prompts::Template;
use crate::agent::rules::Rule;
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
                    (
                        "quantities",
                        &super::quantities_text(quantities, self.options.form == Form::Tagged),
                    ),
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
                    (
                        "quantities",
                        &super::quantities_text(quantities, self.options.form == Form::Tagged),
                    ),
                    ("descriptions", &st.desc),
                    ("plan", &numbered(plan)),
                    ("code", &ran.code),
                    ("result", &result),
                ],
            )
            .await?;
        let code = self.code(&reply)?;
        let fin = self.execute_as(round, st, code, "final", plan).await?;
        if let Some(a) = self.answered(&fin, quantities) {
            let a = self.with_unknown_names(st, a);
            return Ok(Finalized {
                script: Some((fin.code.clone(), fin.exec.stdout.clone())),
                answer: Some(a),
                source: Some(AnswerSource::Answers),
                answers: fin.exec.answers.clone(),
            });
        }
        let printed = fin.exec.stdout.trim();
        // A short answer is asked unless the user's guidelines say otherwise.
        let short = quantities.iter().any(|q| q.formatted) || self.guidelines_given().is_none();
        // The printed-output readers write the `@name[value]` form only when it is asked
        // for; in the plain form named values are written `name: value`.
        let plain: Vec<Quantity>;
        let quantities = if self.options.form == Form::Tagged {
            quantities
        } else {
            plain = quantities
                .iter()
                .cloned()
                .map(|mut q| {
                    q.formatted = false;
                    q
                })
                .collect();
            &plain
        };
        let mut refused = None;
        if !fin.ok() {
            refused = Some("the final script failed".to_string());
        } else if printed.is_empty() {
            refused = Some("the final script printed nothing".to_string());
        } else if let Some(why) =
            answer::dump_reason(printed, short).filter(|_| self.on(Rule::RefuseDump))
        {
            refused = Some(format!("the final script's answer is refused: {why}"));
        }
        let mut answer = None;
        if refused.is_none() {
            let formed = if self.on(Rule::PrintedForm) {
                answer::in_format(printed, quantities)
            } else {
                Some(printed.to_string())
            };
            match formed {
                Some(a) => {
                    if a != printed {
                        self.fired(
                            Rule::PrintedForm,
                            None,
                            "the final script printed the values without the @name[value] form; put in that form".into(),
                        )?;
                    }
                    let (a, changed) = if ran.ok() && self.on(Rule::VerifiedValue) {
                        answer::keep_verified(&a, &ran.exec.stdout, quantities)
                    } else {
                        (a, Vec::new())
                    };
                    if !changed.is_empty() {
                        self.fired(Rule::VerifiedValue, None, format!(
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
        if let Some(why) = refused.as_ref().filter(|_| self.on(Rule::RefuseDump)) {
            match answer::from_output(&ran.exec.stdout, quantities) {
                Some(a) => {
                    self.fired(
                        Rule::RefuseDump,
                        None,
                        format!("{why}: answering from the verified solution's output"),
                    )?;
                    answer = Some((a, AnswerSource::SolutionOutput));
                }
                None => {
                    let shown = (fin.ok()
                        && !printed.is_empty()
                        && answer::dump_reason(printed, short).is_none())
                    .then_some(printed);
                    let source = shown.unwrap_or(ran.exec.stdout.trim());
                    let filled = if self.on(Rule::FillForm) {
                        self.fill(round, source, quantities).await?
                    } else {
                        None
                    };
                    match (filled, shown) {
                        (Some(a), _) => {
                            self.fired(Rule::FillForm, None, format!(
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
        } else if let Some(why) = &refused {
            self.note(format!("{why}: no answer"))?;
        }
        let (answer, source) = match answer {
            Some((a, source)) => (Some(self.with_unknown_names(st, a)), Some(source)),
            None => (None, None),
        };
        Ok(Finalized {
            script: Some((fin.code.clone(), fin.exec.stdout.clone())),
            answer,
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
