//! DS-STAR's Algorithm 1: plan one step, code it, run it, then up to `max_rounds` times
//! verify → route → plan the next step → code it on top of the base script → run, and
//! finally let the finalyzer write the script that prints the answer.
//!
//! The invariant that public implementations get wrong: `scripts[i]` is the script that
//! implemented `plan[..=i]`. When the router names step N, both lists are cut to N − 1
//! entries, so the coder's base code is the script of the kept prefix, not the latest
//! script.

use super::budget::{self, Room, SharedPrefix};
use super::context::{descriptions, FileContext};
use super::llm::{LlmClient, Message, Role};
use super::parse::{self, Route, Verdict};
use super::prompts::{Prompts, Template};
use super::record::{Event, RunRecord};
use super::sandbox::{Execution, Sandbox};
use super::{AgentError, Progress, Status};

/// Tracebacks longer than this go through the summarizer before the debugger sees them;
/// shorter ones are already what a summary would be.
pub const SUMMARIZE_ABOVE: usize = 2000;

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
    /// The answer: the final script's output, trimmed.
    pub answer: Option<String>,
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
    /// Settings.
    pub options: &'a LoopOptions,
    /// The system message every role's prompt starts with, built once per run
    /// (`Default::default()` when constructing).
    pub prefix: SharedPrefix,
}

/// A script after execution (and debugging): its final code and what it showed.
struct Ran {
    code: String,
    exec: Execution,
}

impl Ran {
    fn ok(&self) -> bool {
        self.exec.success()
    }
}

impl Loop<'_> {
    /// Run Algorithm 1 and the finalyzer.
    pub async fn run(&self) -> Result<LoopOutcome, AgentError> {
        let desc = descriptions(self.files);
        let mut execs = 0usize;

        // Round 0: the first step, its script and its result.
        let first = self
            .ask(
                0,
                Role::Planner,
                Template::PlannerFirst,
                &[("question", self.question), ("descriptions", &desc)],
            )
            .await?;
        let mut plan = vec![first.trim().to_string()];
        self.plan_changed(0, &plan)?;
        let reply = self
            .ask(
                0,
                Role::Coder,
                Template::CoderFirst,
                &[("descriptions", &desc), ("step", &plan[0])],
            )
            .await?;
        let mut ran = self
            .execute(0, &mut execs, self.code(&reply)?, &desc)
            .await?;
        let mut scripts = vec![ran.code.clone()];
        let mut verdicts = Vec::new();
        let mut status = Status::MaxRounds;
        let mut rounds = 0;

        for round in 1..=self.options.max_rounds {
            rounds = round;
            let result = observation(&ran.exec);
            let steps = numbered(&plan);
            let verdict = if ran.ok() {
                let reply = self
                    .ask(
                        round,
                        Role::Verifier,
                        Template::Verifier,
                        &[
                            ("question", self.question),
                            ("plan", &steps),
                            ("code", &ran.code),
                            ("result", &result),
                        ],
                    )
                    .await?;
                let v = parse::verdict(&reply);
                if v.fallback {
                    self.note(format!(
                        "round {round}: verifier reply not readable as sufficient/insufficient; counted as insufficient"
                    ))?;
                }
                self.record.event(&Event::Verdict {
                    round,
                    verdict: v.value,
                    reply,
                    fallback: v.fallback,
                })?;
                v.value
            } else {
                self.record.event(&Event::Verdict {
                    round,
                    verdict: Verdict::Insufficient,
                    reply: "(not asked: the script still fails after debugging)".into(),
                    fallback: false,
                })?;
                Verdict::Insufficient
            };
            verdicts.push(verdict);
            (self.progress)(Progress::Verdict { round, verdict });
            if verdict == Verdict::Sufficient {
                status = Status::Sufficient;
                break;
            }

            let reply = self
                .ask(
                    round,
                    Role::Router,
                    Template::Router,
                    &[
                        ("question", self.question),
                        ("descriptions", &desc),
                        ("plan", &steps),
                        ("count", &plan.len().to_string()),
                        ("result", &result),
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

            let kept = if plan.is_empty() {
                "(no steps: the plan starts over)".to_string()
            } else {
                numbered(&plan)
            };
            let next = self
                .ask(
                    round,
                    Role::Planner,
                    Template::PlannerNext,
                    &[
                        ("question", self.question),
                        ("descriptions", &desc),
                        ("plan", &kept),
                        ("result", &result),
                    ],
                )
                .await?;
            plan.push(next.trim().to_string());
            self.plan_changed(round, &plan)?;

            let step = plan.last().expect("a step was just pushed").clone();
            let reply = match scripts.last() {
                Some(base) => {
                    self.ask(
                        round,
                        Role::Coder,
                        Template::CoderNext,
                        &[
                            ("descriptions", &desc),
                            ("plan", &numbered(&plan)),
                            ("code", base),
                            ("previous", &(plan.len() - 1).to_string()),
                            ("number", &plan.len().to_string()),
                            ("step", &step),
                        ],
                    )
                    .await?
                }
                None => {
                    self.ask(
                        round,
                        Role::Coder,
                        Template::CoderFirst,
                        &[("descriptions", &desc), ("step", &step)],
                    )
                    .await?
                }
            };
            ran = self
                .execute(round, &mut execs, self.code(&reply)?, &desc)
                .await?;
            scripts.push(ran.code.clone());
            debug_assert_eq!(scripts.len(), plan.len());
        }
        if status == Status::MaxRounds {
            self.note(format!(
                "no sufficient plan after {} rounds: finalizing from the latest plan",
                self.options.max_rounds
            ))?;
        }

        // The finalyzer formats the answer from the latest plan and its result.
        let result = observation(&ran.exec);
        let guidelines = self
            .options
            .guidelines
            .as_deref()
            .filter(|g| !g.trim().is_empty())
            .unwrap_or(DEFAULT_GUIDELINES);
        let reply = self
            .ask(
                rounds,
                Role::Finalyzer,
                Template::Finalyzer,
                &[
                    ("question", self.question),
                    ("guidelines", guidelines),
                    ("descriptions", &desc),
                    ("plan", &numbered(&plan)),
                    ("code", &ran.code),
                    ("result", &result),
                ],
            )
            .await?;
        let fin = self
            .execute_as(rounds, &mut execs, self.code(&reply)?, &desc, "final")
            .await?;
        let answer = fin
            .ok()
            .then(|| fin.exec.stdout.trim().to_string())
            .filter(|a| !a.is_empty());
        if answer.is_none() {
            self.note("the final script printed no answer (it failed or printed nothing)".into())?;
        }
        Ok(LoopOutcome {
            status: if answer.is_some() {
                status
            } else {
                Status::NoAnswer
            },
            rounds,
            verdicts,
            plan,
            solution: (ran.code.clone(), result),
            final_script: Some((fin.code.clone(), fin.exec.stdout.clone())),
            answer,
        })
    }

    /// One LLM call through a template, recorded: the run's shared prefix as the system
    /// message (for the roles that have one), the template with `values` as the user
    /// message, both fitted into the model's context. A refusal that states the window
    /// is learned from and the call, fitted again, made once more.
    async fn ask(
        &self,
        round: usize,
        role: Role,
        template: Template,
        values: &[(&str, &str)],
    ) -> Result<String, AgentError> {
        (self.progress)(Progress::Call { round, role });
        let mut refused = false;
        let (messages, context, reply) = loop {
            let (messages, context) = self.messages(role, template, values).await?;
            match self.llm.chat(role, &messages).await {
                Ok(reply) => break (messages, context, reply),
                Err(e) => match e.context_exceeded() {
                    Some(Some(n)) if !refused => {
                        refused = true;
                        self.note(format!(
                            "the server refused the {role} prompt as larger than its {n}-token context: fitted to that and asked again"
                        ))?;
                    }
                    _ => return Err(e.into()),
                },
            }
        };
        let (user, system) = match messages.as_slice() {
            [system, user] => (user.content.clone(), Some(system.content.clone())),
            _ => (
                messages
                    .iter()
                    .map(|m| m.content.as_str())
                    .collect::<Vec<_>>()
                    .join("\n\n"),
                None,
            ),
        };
        self.record.event(&Event::Llm {
            round,
            role: role.as_str().to_string(),
            prompt_name: template.file_name().to_string(),
            model: reply.model.clone(),
            system,
            prompt: user,
            reply: reply.text.clone(),
            context_tokens: context,
            prompt_tokens: reply.usage.prompt_tokens,
            cached_tokens: reply.usage.cached_tokens,
            prefix_reused_estimate: reply.prefix_reused_estimate,
            completion_tokens: reply.usage.completion_tokens,
            cost: reply.cost,
            latency_ms: reply.latency.as_millis() as u64,
            attempts: reply.attempts,
            replayed: reply.replayed,
        })?;
        Ok(reply.text)
    }

    /// The messages of one call, fitted into `role`'s context window (also returned).
    async fn messages(
        &self,
        role: Role,
        template: Template,
        values: &[(&str, &str)],
    ) -> Result<(Vec<Message>, usize), AgentError> {
        let room = Room::of(self.llm, role).await;
        let prefix = if template.after_common() {
            Some(
                self.prefix
                    .get(self.llm, self.prompts, self.question, self.files)
                    .await,
            )
        } else {
            None
        };
        let user = budget::fit(
            self.llm,
            role,
            self.prompts,
            template,
            values,
            prefix.as_ref(),
            room,
        )
        .await?;
        let mut messages: Vec<Message> = prefix
            .map(|p| Message::system(p.text))
            .into_iter()
            .collect();
        messages.push(Message::user(user));
        Ok((messages, room.context))
    }

    /// The code of a reply; a reply without a fenced block is run as it is (noted).
    fn code(&self, reply: &str) -> Result<String, AgentError> {
        let c = parse::code(reply);
        if c.fallback {
            self.note("a reply had no fenced code block; running the whole reply as code".into())?;
        }
        Ok(c.code)
    }

    fn note(&self, message: String) -> Result<(), AgentError> {
        tracing::info!("{message}");
        self.record.event(&Event::Note { message })
    }

    fn plan_changed(&self, round: usize, plan: &[String]) -> Result<(), AgentError> {
        self.record.event(&Event::Plan {
            round,
            steps: plan.to_vec(),
        })?;
        (self.progress)(Progress::Plan {
            round,
            steps: plan.len(),
        });
        Ok(())
    }

    async fn execute(
        &self,
        round: usize,
        execs: &mut usize,
        code: String,
        desc: &str,
    ) -> Result<Ran, AgentError> {
        self.execute_as(round, execs, code, desc, "solution").await
    }

    /// Run `code`; while it fails and attempts remain, have the debugger fix the latest
    /// attempt (not the original) from its summarized error and the descriptions.
    async fn execute_as(
        &self,
        round: usize,
        execs: &mut usize,
        mut code: String,
        desc: &str,
        purpose: &str,
    ) -> Result<Ran, AgentError> {
        let mut exec = self.run_script(round, execs, &code, purpose).await?;
        for attempt in 1..=self.options.debug_attempts {
            if exec.success() {
                break;
            }
            let error = self.error_report(round, &exec).await?;
            let reply = self
                .ask(
                    round,
                    Role::Debugger,
                    Template::DebuggerSolution,
                    &[("descriptions", desc), ("code", &code), ("error", &error)],
                )
                .await?;
            code = self.code(&reply)?;
            exec = self
                .run_script(round, execs, &code, &format!("{purpose} debug {attempt}"))
                .await?;
        }
        Ok(Ran { code, exec })
    }

    async fn run_script(
        &self,
        round: usize,
        execs: &mut usize,
        code: &str,
        purpose: &str,
    ) -> Result<Execution, AgentError> {
        *execs += 1;
        let dir = self.record.exec_dir(*execs, purpose);
        (self.progress)(Progress::Exec {
            round,
            purpose: purpose.to_string(),
        });
        let exec = self.sandbox.run(&dir, "script", code).await?;
        self.record.event(&Event::Exec {
            round,
            purpose: purpose.to_string(),
            script: exec.script.display().to_string(),
            code: code.to_string(),
            exit_code: exec.exit_code,
            signal: exec.signal,
            timed_out: exec.timed_out,
            limit_hit: exec.limit_hit.clone(),
            stdout: exec.stdout.clone(),
            stderr: exec.stderr.clone(),
            duration_ms: exec.duration.as_millis() as u64,
        })?;
        (self.progress)(Progress::Executed {
            round,
            ok: exec.success(),
        });
        Ok(exec)
    }

    /// What the debugger is told about a failure: the traceback, through the summarizer
    /// when it is long; a limit or timeout in words.
    async fn error_report(&self, round: usize, exec: &Execution) -> Result<String, AgentError> {
        let mut error = exec.stderr.trim().to_string();
        if let Some(limit) = &exec.limit_hit {
            error = format!("The script was stopped: {limit}.\n{error}");
        }
        if error.len() > SUMMARIZE_ABOVE {
            error = self
                .ask(
                    round,
                    Role::Summarizer,
                    Template::Summarizer,
                    &[("error", &error)],
                )
                .await?;
        }
        if error.is_empty() {
            error = format!(
                "The script exited with status {} and printed nothing on stderr.",
                exec.exit_code
                    .map_or("(killed)".to_string(), |c| c.to_string())
            );
        }
        Ok(error)
    }
}

/// Steps numbered from 1, one per line.
pub fn numbered(plan: &[String]) -> String {
    plan.iter()
        .enumerate()
        .map(|(i, s)| format!("{}. {}", i + 1, s))
        .collect::<Vec<_>>()
        .join("\n")
}

/// What a script showed, as the LLM reads it: stdout, then stderr when it holds anything
/// (warnings of a successful run, the traceback of a failed one).
pub fn observation(exec: &Execution) -> String {
    let mut s = exec.stdout.trim_end().to_string();
    let err = exec.stderr.trim_end();
    if !err.is_empty() {
        if !s.is_empty() {
            s.push_str("\n\n");
        }
        if exec.success() {
            s.push_str("[stderr]\n");
        } else {
            s.push_str("[the script failed]\n");
        }
        s.push_str(err);
    }
    if let Some(limit) = &exec.limit_hit {
        s.push_str(&format!("\n[stopped: {limit}]"));
    }
    if s.is_empty() {
        s = "(no output)".into();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_are_numbered_from_one() {
        assert_eq!(numbered(&["a".into(), "b".into()]), "1. a\n2. b");
    }
}
