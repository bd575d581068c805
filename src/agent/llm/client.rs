//! The client: one `chat` call = one answer, however many tries it takes.

use reqwest::header::RETRY_AFTER;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use super::cassette::{Entry, Player, RecordedReply, Tape};
use super::error::{LlmError, LlmInternalError, LlmUserError};
use super::price::cost_of;
use super::wire::{
    backoff, error_chain, error_message, parse_completion, parse_retry_after, request_body,
    retryable, scrub, status_hint, Completion,
};
use super::{CallOptions, Cassette, ChatReply, LlmConfig, Message, Role, Totals};

/// The header that tells proxies and logs which role a request plays.
const ROLE_HEADER: &str = "X-Lakestar-Role";

/// An OpenAI-compatible chat client. Cloning is cheap and clones share the connection
/// pool, the cassette and the totals.
#[derive(Clone)]
pub struct LlmClient {
    inner: Arc<Inner>,
}

struct Inner {
    config: LlmConfig,
    url: String,
    http: reqwest::Client,
    tape: Tape,
    totals: Mutex<Totals>,
}

/// One try's failure, and whether another try may succeed.
enum Failure {
    Final(LlmError),
    Retryable {
        status: Option<u16>,
        last: String,
        hint: &'static str,
        retry_after: Option<Duration>,
    },
}

impl LlmClient {
    /// A client for `config`, recording to or replaying from `cassette`. Opens the
    /// cassette now, so that a bad path fails before the first call.
    pub fn new(config: LlmConfig, cassette: Cassette) -> Result<Self, LlmError> {
        let http = reqwest::Client::builder()
            .timeout(config.timeout)
            .build()
            .map_err(|e| LlmInternalError::Client(error_chain(&e)))?;
        let tape = Tape::open(cassette)?;
        Ok(LlmClient {
            inner: Arc::new(Inner {
                url: config.chat_url(),
                config,
                http,
                tape,
                totals: Mutex::new(Totals::default()),
            }),
        })
    }

    /// The settings the client was made with.
    pub fn config(&self) -> &LlmConfig {
        &self.inner.config
    }

    /// True when answers come from a replayed cassette (no model or key is needed then).
    pub fn is_replaying(&self) -> bool {
        matches!(self.inner.tape, Tape::Replay(_))
    }

    /// The model `role`'s requests ask for: the configured one, else, when replaying,
    /// the one the cassette's first request of that role asked for (what a cache keyed
    /// by model needs to find a recorded run's results again).
    pub fn model_for(&self, role: Role) -> Option<String> {
        match (self.inner.config.model_for(role), &self.inner.tape) {
            (Some(m), _) => Some(m.to_string()),
            (None, Tape::Replay(player)) => player.model_for(role),
            (None, _) => None,
        }
    }

    /// The running totals of this client and its clones.
    pub fn totals(&self) -> Totals {
        self.lock_totals().clone()
    }

    /// Sends `messages` as `role` with the role's model and returns the answer, retrying
    /// 429, 408, 5xx, timeouts and failed connections up to `max_retries` times. When
    /// replaying, answers from the cassette instead.
    pub async fn chat(&self, role: Role, messages: &[Message]) -> Result<ChatReply, LlmError> {
        self.chat_with(role, messages, &CallOptions::default())
            .await
    }

    /// [`LlmClient::chat`] with per-call settings over the configured ones (another
    /// temperature for a debugger that repeats itself).
    pub async fn chat_with(
        &self,
        role: Role,
        messages: &[Message],
        options: &CallOptions,
    ) -> Result<ChatReply, LlmError> {
        let temperature = options.temperature.or(self.inner.config.temperature);
        let result = match &self.inner.tape {
            Tape::Replay(player) => self.replay(player, role, messages),
            _ => self.call(role, messages, temperature).await,
        };
        let mut totals = self.lock_totals();
        match result {
            Ok(reply) => {
                totals.add_reply(role, &reply);
                drop(totals);
                if let Tape::Record(rec) = &self.inner.tape {
                    rec.append(&self.entry(role, messages, temperature, &reply))?;
                }
                Ok(reply)
            }
            Err((err, attempts)) => {
                if attempts > 0 {
                    totals.add_failure(attempts);
                }
                Err(err)
            }
        }
    }

    /// A call to the server; on failure, the error and the tries made.
    async fn call(
        &self,
        role: Role,
        messages: &[Message],
        temperature: Option<f32>,
    ) -> Result<ChatReply, (LlmError, u32)> {
        let config = &self.inner.config;
        let model = config
            .model_for(role)
            .ok_or((LlmUserError::NoModel { role }.into(), 0))?;
        let body = request_body(model, messages, temperature);
        let start = Instant::now();
        let mut attempts = 0;
        let completion = loop {
            attempts += 1;
            match self.try_once(role, &body).await {
                Ok(c) => break c,
                Err(Failure::Final(e)) => return Err((e, attempts)),
                Err(Failure::Retryable {
                    status,
                    last,
                    hint,
                    retry_after,
                }) => {
                    if attempts > config.max_retries {
                        let err = LlmInternalError::GaveUp {
                            url: self.inner.url.clone(),
                            role,
                            attempts,
                            status,
                            last,
                            hint,
                        };
                        return Err((err.into(), attempts));
                    }
                    let wait = backoff(config.backoff_base, attempts - 1, retry_after);
                    tracing::debug!(%role, attempts, ?wait, error = %last, "retrying LLM request");
                    tokio::time::sleep(wait).await;
                }
            }
        };
        let answered = completion.model.unwrap_or_else(|| model.to_string());
        Ok(ChatReply {
            cost: cost_of(&config.prices, &answered, model, &completion.usage),
            text: completion.text,
            model: answered,
            usage: completion.usage,
            latency: start.elapsed(),
            attempts,
            replayed: false,
        })
    }

    async fn try_once(&self, role: Role, body: &serde_json::Value) -> Result<Completion, Failure> {
        let inner = &self.inner;
        let key = inner.config.api_key.as_deref();
        let mut req = inner
            .http
            .post(&inner.url)
            .header(ROLE_HEADER, role.as_str())
            .json(body);
        if let Some(key) = key {
            req = req.bearer_auth(key);
        }
        let resp = req.send().await.map_err(|e| self.transport_failure(&e))?;
        let status = resp.status().as_u16();
        let retry_after = resp
            .headers()
            .get(RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| parse_retry_after(v, SystemTime::now()));
        let text = resp.text().await.map_err(|e| self.transport_failure(&e))?;
        if (200..300).contains(&status) {
            return parse_completion(&text).map_err(|detail| {
                Failure::Final(
                    LlmInternalError::BadResponse {
                        url: inner.url.clone(),
                        detail: scrub(detail, key),
                    }
                    .into(),
                )
            });
        }
        let message = scrub(error_message(&text), key);
        if retryable(status) {
            Err(Failure::Retryable {
                status: Some(status),
                last: format!("HTTP {status}: {message}"),
                hint: status_hint(status),
                retry_after,
            })
        } else {
            Err(Failure::Final(
                LlmUserError::Refused {
                    url: inner.url.clone(),
                    role,
                    status,
                    message,
                    hint: status_hint(status),
                }
                .into(),
            ))
        }
    }

    fn transport_failure(&self, e: &reqwest::Error) -> Failure {
        let inner = &self.inner;
        if e.is_builder() || e.is_redirect() {
            return Failure::Final(
                LlmUserError::BadUrl {
                    url: inner.url.clone(),
                    detail: error_chain(e),
                }
                .into(),
            );
        }
        // Failed connections are retried too: local servers (Ollama, vLLM) refuse
        // connections for a while when they restart or load a model.
        let (last, hint) = if e.is_timeout() {
            (
                format!("no answer within {:?} (timed out)", inner.config.timeout),
                "raise timeout_secs in lakestar.toml if the model is slow to answer",
            )
        } else if e.is_connect() {
            (
                format!("cannot connect: {}", error_chain(e)),
                "check that the server runs at the base URL (base_url in lakestar.toml or OPENAI_BASE_URL)",
            )
        } else {
            (
                format!("the connection failed: {}", error_chain(e)),
                "check the network and the server's logs",
            )
        };
        Failure::Retryable {
            status: None,
            last: scrub(last, inner.config.api_key.as_deref()),
            hint,
            retry_after: None,
        }
    }

    /// The recorded answer to this request; on failure, the error and zero tries.
    fn replay(
        &self,
        player: &Player,
        role: Role,
        messages: &[Message],
    ) -> Result<ChatReply, (LlmError, u32)> {
        let entry = player.take(role, messages).map_err(|e| (e.into(), 0))?;
        let r = entry.reply;
        // Priced with today's table when it knows the model, so that a price added
        // after recording applies; else the recorded cost.
        let cost = cost_of(&self.inner.config.prices, &r.model, &entry.model, &r.usage).or(r.cost);
        Ok(ChatReply {
            text: r.text,
            model: r.model,
            usage: r.usage,
            cost,
            latency: Duration::from_millis(r.latency_ms),
            attempts: r.attempts.max(1),
            replayed: true,
        })
    }

    /// The cassette line of a successful call.
    fn entry(
        &self,
        role: Role,
        messages: &[Message],
        temperature: Option<f32>,
        reply: &ChatReply,
    ) -> Entry {
        let config = &self.inner.config;
        Entry {
            role,
            model: config.model_for(role).unwrap_or(&reply.model).to_string(),
            messages: messages.to_vec(),
            temperature,
            reply: RecordedReply {
                text: reply.text.clone(),
                model: reply.model.clone(),
                usage: reply.usage.clone(),
                cost: reply.cost,
                latency_ms: u64::try_from(reply.latency.as_millis()).unwrap_or(u64::MAX),
                attempts: reply.attempts,
            },
        }
    }

    fn lock_totals(&self) -> std::sync::MutexGuard<'_, Totals> {
        // Totals are plain counters: a panic elsewhere cannot leave them inconsistent
        // enough to matter, so a poisoned lock is used as is.
        self.inner.totals.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync<T: Send + Sync>(_: &T) {}
    fn assert_send<T: Send>(_: T) {}

    /// The agent shares one client across tasks of a multi-threaded runtime: the client
    /// and the future of `chat` must be `Send`, which a guard held across an `.await`
    /// would break.
    #[test]
    fn client_and_chat_future_can_cross_threads() {
        let c = LlmClient::new(LlmConfig::default(), Cassette::Off).unwrap();
        assert_send_sync(&c);
        let msgs = [Message::user("q")];
        assert_send(c.chat(Role::Coder, &msgs));
    }
}
