//! One round's judgement: the deterministic check of the requested quantities, the
//! verifier's verdict and its walk-through, and the rules that combine them. Also the
//! judgement a round gets without a verifier call: a script that still fails, or one
//! whose output is the previous round's again. Then, for an insufficient round, the
//! router's choice of where the plan goes on from.

use super::{Loop, Ran, State};
use crate::agent::answer::Quantity;
use crate::agent::llm::Role;
use crate::agent::parse::{self, Route, Verdict};
use crate::agent::prompts::Template;
use crate::agent::record::Event;
use crate::agent::rules::Rule;
use crate::agent::{AgentError, Progress};

/// What a round's judgement found.
pub(super) struct Judged {
    /// The verdict that stands.
    pub verdict: Verdict,
    /// Requested quantities no answer-API value gives.
    pub lacking: Vec<String>,
    /// Constraints the verifier marked not applied.
    pub unapplied: Vec<String>,
    /// The output is `previous`'s again and still lacks a requested quantity: not
    /// judged by the verifier.
    pub repeated: bool,
}

/// What the verifier's prompt shows besides the round's script and output.
pub(super) struct Asked<'a> {
    pub quantities: &'a [Quantity],
    pub wanted: &'a str,
    pub constraints: &'a [String],
    pub checklist: &'a str,
    pub steps: &'a str,
    pub result: &'a str,
}

/// What the router is shown besides the question and descriptions.
pub(super) struct Shown<'a> {
    pub steps: &'a str,
    pub result: &'a str,
    pub missing: &'a str,
}

impl Loop<'_> {
    /// Ask the router where the plan goes on from, and cut `plan` and `scripts` to it:
    /// `Step N` keeps the steps before N; a step whose script still fails (`ran_ok`
    /// false) is dropped before one is added after it.
    pub(super) async fn route(
        &self,
        round: usize,
        st: &State,
        plan: &mut Vec<String>,
        scripts: &mut Vec<String>,
        ran_ok: bool,
        shown: &Shown<'_>,
    ) -> Result<(), AgentError> {
        let reply = self
            .ask(
                round,
                Role::Router,
                Template::Router,
                &[
                    ("question", self.question),
                    ("descriptions", &st.desc),
                    ("plan", shown.steps),
                    ("count", &plan.len().to_string()),
                    ("result", shown.result),
                    ("missing", shown.missing),
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
        } else if !ran_ok && self.on(Rule::FailedStep) {
            // A step whose script still fails is no base to build on: the next step
            // takes its place (the paper's router would name it; small models add).
            self.fired(Rule::FailedStep, Some(round), format!(
                "step {} still fails after debugging; the next step replaces it instead of building on its script",
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
        Ok(())
    }

    /// Judge round `round`'s `ran`: the verifier is asked only when the script ran and
    /// its output is not `previous` (the last round's, when its script ran) again while
    /// a requested quantity is missing.
    pub(super) async fn judge(
        &self,
        round: usize,
        ran: &Ran,
        previous: Option<&str>,
        asked: &Asked<'_>,
    ) -> Result<Judged, AgentError> {
        let lacking = if ran.ok() {
            self.lacking_in(ran, asked.quantities)
        } else {
            Vec::new()
        };
        let repeated = self.on(Rule::RepeatedOutput)
            && ran.ok()
            && !lacking.is_empty()
            && previous == Some(ran.exec.stdout.as_str());
        if !ran.ok() || repeated {
            let reply = if ran.ok() {
                "(not asked: the output is the previous round's again, which lacked a requested quantity)"
            } else {
                "(not asked: the script still fails after debugging)"
            };
            self.record.event(&Event::Verdict {
                round,
                verdict: Verdict::Insufficient,
                reply: reply.into(),
                fallback: false,
                verifier: None,
                missing: lacking.clone(),
                unapplied: Vec::new(),
            })?;
            return Ok(Judged {
                verdict: Verdict::Insufficient,
                lacking,
                unapplied: Vec::new(),
                repeated,
            });
        }
        let values = [
            ("guidelines", self.guidelines()),
            ("quantities", asked.wanted),
            ("constraints", asked.checklist),
            ("plan", asked.steps),
            ("code", ran.code.as_str()),
            ("result", asked.result),
        ];
        let mut reply = self
            .ask(round, Role::Verifier, Template::Verifier, &values)
            .await?;
        let mut v = parse::verdict(&reply);
        if v.fallback && self.on(Rule::VerdictAgain) {
            // One short ask for the verdict line (its system prefix is cached) costs
            // less than a round spent on an unread verdict.
            self.fired(Rule::VerdictAgain, Some(round),
                "verifier reply not readable as sufficient/insufficient; asked again for the verdict alone".into()
            )?;
            let first = reply;
            reply = self
                .ask(round, Role::Verifier, Template::VerifierVerdict, &values)
                .await?;
            v = parse::verdict(&reply);
            if v.fallback {
                self.note(format!(
                    "round {round}: verifier reply still not readable; counted as insufficient"
                ))?;
            }
            reply = format!("{first}\n\n{reply}");
        }
        // A constraint the walk-through marks not applied outweighs a "sufficient" at
        // its end; the deterministic check has the last word over both.
        let unapplied: Vec<String> = if self.on(Rule::Constraints) {
            parse::unapplied(&reply, asked.constraints.len())
                .into_iter()
                .map(|n| asked.constraints[n - 1].clone())
                .collect()
        } else {
            Vec::new()
        };
        let verdict = if lacking.is_empty() && unapplied.is_empty() {
            v.value
        } else {
            Verdict::Insufficient
        };
        if v.value == Verdict::Sufficient && lacking.is_empty() && !unapplied.is_empty() {
            self.fired(Rule::Constraints, Some(round), format!(
                "the verifier said sufficient but marked {} of the question's constraints not applied; counted as insufficient",
                unapplied.len()
            ))?;
        }
        self.record.event(&Event::Verdict {
            round,
            verdict,
            reply,
            fallback: v.fallback,
            verifier: Some(v.value),
            missing: lacking.clone(),
            unapplied: unapplied.clone(),
        })?;
        Ok(Judged {
            verdict,
            lacking,
            unapplied,
            repeated: false,
        })
    }

    /// The requested quantities `ran` gives no value for. The answer contract decides: a
    /// quantity the caller names must be given by `answer(name, value)` under its name
    /// (statistics read off the question are a guess at the names, which any answer
    /// satisfies). A script that only prints is judged by the verifier alone, as in the
    /// paper.
    pub(super) fn lacking_in(&self, ran: &Ran, quantities: &[Quantity]) -> Vec<String> {
        if ran.exec.answers.is_empty() {
            return Vec::new();
        }
        quantities
            .iter()
            .filter(|q| q.formatted && ran.exec.answered(&q.name).is_none())
            .map(|q| q.name.clone())
            .collect()
    }
}
