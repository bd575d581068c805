//! The loop's calls out: a recorded LLM call fitted into the model's context, the code of
//! a reply repaired before it runs, and the notes and plan changes of the run record.

use super::Loop;
use crate::agent::budget::{self, Room};
use crate::agent::llm::{CallOptions, Message, Retry, Role};
use crate::agent::parse;
use crate::agent::prompts::Template;
use crate::agent::record::Event;
use crate::agent::repair;
use crate::agent::rules::Rule;
use crate::agent::{AgentError, Progress};

impl Loop<'_> {
    /// One LLM call through a template, recorded: the run's shared prefix as the system
    /// message (for the roles that have one), the template with `values` as the user
    /// message, both fitted into the model's context. A refusal that states the window
    /// is learned from and the call, fitted again, made once more. Retries and a final
    /// failure are traced as they happen, so every surface that follows the trace sees
    /// why a call takes long.
    pub(in crate::agent) async fn ask(
        &self,
        round: usize,
        role: Role,
        template: Template,
        values: &[(&str, &str)],
    ) -> Result<String, AgentError> {
        self.ask_with(round, role, template, values, &CallOptions::default())
            .await
    }

    /// [`Loop::ask`] with per-call settings.
    pub(super) async fn ask_with(
        &self,
        round: usize,
        role: Role,
        template: Template,
        values: &[(&str, &str)],
        call: &CallOptions,
    ) -> Result<String, AgentError> {
        (self.progress)(Progress::Call { round, role });
        let on_retry = |r: &Retry| {
            let traced = self.record.event(&Event::Retry {
                round,
                role: role.as_str().to_string(),
                retry: r.retry,
                max_retries: r.max_retries,
                reason: r.reason.clone(),
                error: r.error.clone(),
                wait_ms: r.wait.as_millis() as u64,
            });
            // A trace that cannot be written fails the next event the loop writes.
            if let Err(e) = traced {
                tracing::warn!("{e}");
            }
            (self.progress)(Progress::Retry {
                round,
                retry: r.clone(),
            });
        };
        let mut refused = false;
        let (messages, context, reply) = loop {
            let (messages, context) = self.messages(role, template, values).await?;
            match self
                .llm
                .chat_watched(role, &messages, call, &on_retry)
                .await
            {
                Ok(reply) => break (messages, context, reply),
                Err(e) => match e.context_exceeded() {
                    Some(Some(n)) if !refused => {
                        refused = true;
                        self.note(format!(
                            "the server refused the {role} prompt as larger than its {n}-token context: fitted to that and asked again"
                        ))?;
                    }
                    _ => {
                        self.record.event(&Event::LlmFailed {
                            round,
                            role: role.as_str().to_string(),
                            prompt_name: template.file_name().to_string(),
                            error: e.to_string(),
                        })?;
                        return Err(e.into());
                    }
                },
            }
        };
        (self.progress)(Progress::Answered {
            round,
            role,
            prompt_tokens: reply.usage.prompt_tokens,
            completion_tokens: reply.usage.completion_tokens,
            latency: reply.latency,
        });
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
            // The values to give are the same for every role: they belong to the shared
            // prefix, which the server's cache reuses, not to each role's prompt.
            let quantities = self.quantities();
            let shared = format!(
                "{}\n\n# Values to give\n{}",
                self.question.trim_end(),
                self.quantities_text(&quantities)
            );
            Some(
                self.prefix
                    .get(self.llm, self.prompts, &shared, self.files)
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

    /// The code of a reply, repaired where it cannot run as written (`repair`); a reply
    /// without a fenced block is run as it is. Both noted.
    pub(in crate::agent) fn code(&self, reply: &str) -> Result<String, AgentError> {
        let c = parse::code(reply);
        if c.fallback {
            self.note("a reply had no fenced code block; running its code-like lines".into())?;
        }
        let columns: Vec<String> = self.files.iter().flat_map(|f| f.columns.clone()).collect();
        let r = repair::repair_with(
            &c.code,
            &repair::load_calls(self.files),
            &columns,
            self.options.rules,
        );
        for (fix, rule) in r.fixes.iter().zip(&r.rules) {
            self.fired(
                *rule,
                None,
                format!("repaired the script before running it: {fix}"),
            )?;
        }
        Ok(r.code)
    }

    pub(in crate::agent) fn note(&self, message: String) -> Result<(), AgentError> {
        tracing::info!("{message}");
        self.record.event(&Event::Note { message })
    }

    /// Whether `rule` is on in this run.
    pub(in crate::agent) fn on(&self, rule: Rule) -> bool {
        self.options.rules.on(rule)
    }

    /// Record that `rule` fired (in `round`, when it fired in one), with what it did.
    pub(in crate::agent) fn fired(
        &self,
        rule: Rule,
        round: Option<usize>,
        message: String,
    ) -> Result<(), AgentError> {
        self.record.rule(rule, round, message)
    }

    pub(in crate::agent) fn plan_changed(
        &self,
        round: usize,
        plan: &[String],
    ) -> Result<(), AgentError> {
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
}
