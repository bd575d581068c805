//! The client: one `chat` call = one answer, however many tries it takes.

use reqwest::header::RETRY_AFTER;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use super::cassette::{text_key, Entry, Player, RecordedReply, Tape};
use super::config::DEFAULT_CONTEXT_TOKENS;
use super::error::{LlmError, LlmInternalError, LlmUserError};
use super::price::cost_of;
use super::tokens;
use super::window::{self, Window};
use super::wire::{
    backoff, error_chain, error_message, parse_completion, parse_retry_after, request_body,
    retryable, scrub, status_hint, Completion,
};
use super::{secs, CallOptions, Cassette, ChatReply, LlmConfig, Message, Retry, Role, Totals};
use std::collections::BTreeMap;

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
    window: Window,
    /// The previous call's prompt, for the prefix-reuse estimate.
    last_prompt: Mutex<String>,
    /// Counts made since the last recorded call (recording only): text key → tokens.
    counted: Mutex<BTreeMap<String, usize>>,
    /// Set once the server asked for `max_completion_tokens` instead of `max_tokens`.
    completion_limit: std::sync::atomic::AtomicBool,
}

/// One try's failure, and whether another try may succeed.
enum Failure {
    Final(LlmError),
    /// The server wants the reply limit as `max_completion_tokens` (OpenAI's reasoning
    /// models refuse `max_tokens`).
    CompletionLimit,
    Retryable {
        status: Option<u16>,
        /// In a few words, for the retry's report.
        reason: String,
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
                window: Window::default(),
                last_prompt: Mutex::new(String::new()),
                counted: Mutex::default(),
                completion_limit: Default::default(),
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

    /// Tokens kept for a reply (sent as `max_tokens`).
    pub fn max_output_tokens(&self) -> usize {
        self.inner.config.max_output_tokens
    }

    /// The context window of `role`'s model: learned from a refusal, configured, said
    /// by the server (probed once), else [`DEFAULT_CONTEXT_TOKENS`]. A replay asks no
    /// server: it takes the window the recorded call was fitted into.
    pub async fn context_tokens(&self, role: Role) -> usize {
        if let Some(n) = self.player().and_then(|p| p.context_for(role)) {
            return n;
        }
        let model = self.model_for(role);
        let learned = model
            .as_ref()
            .and_then(|m| lock(&self.inner.window.learned).get(m).copied());
        if let Some(n) = learned {
            return n;
        }
        if let Some(n) = self.inner.config.context_for(model.as_deref()) {
            return n;
        }
        self.probe(role)
            .await
            .and_then(|p| p.context)
            .unwrap_or(DEFAULT_CONTEXT_TOKENS)
    }

    /// Tokens of `text`: the server's tokenizer where it has one, else the estimate of
    /// [`tokens::estimate`], scaled up when a refusal showed it undercounting. A replay
    /// gives the recorded count of the same text, so it cuts prompts as the recording did.
    pub async fn count_tokens(&self, role: Role, text: &str) -> usize {
        if let Some(n) = self.player().and_then(|p| p.count(text)) {
            return n;
        }
        let n = self.count_now(role, text).await;
        if matches!(self.inner.tape, Tape::Record(_)) {
            lock(&self.inner.counted).insert(text_key(text), n);
        }
        n
    }

    async fn count_now(&self, role: Role, text: &str) -> usize {
        if let Some(t) = self.probe(role).await.and_then(|p| p.tokenizer.as_ref()) {
            let model = self.model_for(role);
            let key = self.inner.config.api_key.as_deref();
            if let Some(n) = window::count(&self.inner.http, t, key, model.as_deref(), text).await {
                return n;
            }
        }
        let scale = *lock(&self.inner.window.scale);
        let est = tokens::estimate(text);
        if scale > 1.0 {
            (est as f64 * scale).ceil() as usize
        } else {
            est
        }
    }

    fn player(&self) -> Option<&Player> {
        match &self.inner.tape {
            Tape::Replay(p) => Some(p),
            _ => None,
        }
    }

    /// The server's answers about itself, asked once; `None` when replaying.
    async fn probe(&self, role: Role) -> Option<&window::Probe> {
        if self.is_replaying() {
            return None;
        }
        let inner = &self.inner;
        let model = self.model_for(role);
        Some(
            inner
                .window
                .probe
                .get_or_init(|| {
                    window::probe(
                        &inner.http,
                        &inner.config.base_url,
                        inner.config.api_key.as_deref(),
                        model.as_deref(),
                    )
                })
                .await,
        )
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
        self.chat_watched(role, messages, options, &|_| {}).await
    }

    /// [`LlmClient::chat_with`], telling `on_retry` of each failed try before it is made
    /// again, so that a caller waiting on a slow or failing server can say why.
    pub async fn chat_watched(
        &self,
        role: Role,
        messages: &[Message],
        options: &CallOptions,
        on_retry: &(dyn Fn(&Retry) + Send + Sync),
    ) -> Result<ChatReply, LlmError> {
        let temperature = options.temperature.or(self.inner.config.temperature);
        let result = match &self.inner.tape {
            Tape::Replay(player) => self.replay(player, role, messages),
            _ => self.call(role, messages, temperature, on_retry).await,
        };
        let result = match result {
            Ok(mut reply) => {
                reply.prefix_reused_estimate = self.prefix_reused(role, messages).await as u64;
                Ok(reply)
            }
            Err(e) => Err(e),
        };
        match result {
            Ok(reply) => {
                self.lock_totals().add_reply(role, &reply);
                if let Tape::Record(rec) = &self.inner.tape {
                    let mut entry = self.entry(role, messages, temperature, &reply);
                    entry.context_tokens = Some(self.context_tokens(role).await);
                    entry.counts = std::mem::take(&mut *lock(&self.inner.counted));
                    rec.append(&entry)?;
                }
                Ok(reply)
            }
            Err((err, attempts)) => {
                if attempts > 0 {
                    self.lock_totals().add_failure(attempts);
                }
                Err(err)
            }
        }
    }

    /// Leading tokens `messages` share with the previous call's, by [`Self::count_tokens`].
    async fn prefix_reused(&self, role: Role, messages: &[Message]) -> usize {
        let text: String = messages
            .iter()
            .map(|m| format!("<{}>\n{}\n", m.role, m.content))
            .collect();
        let shared = {
            let mut last = lock(&self.inner.last_prompt);
            let common: usize = last
                .chars()
                .zip(text.chars())
                .take_while(|(a, b)| a == b)
                .map(|(a, _)| a.len_utf8())
                .sum();
            let shared = text[..common].to_string();
            *last = text;
            shared
        };
        if shared.is_empty() {
            0
        } else {
            self.count_tokens(role, &shared).await
        }
    }

    /// A call to the server; on failure, the error and the tries made.
    async fn call(
        &self,
        role: Role,
        messages: &[Message],
        temperature: Option<f32>,
        on_retry: &(dyn Fn(&Retry) + Send + Sync),
    ) -> Result<ChatReply, (LlmError, u32)> {
        let config = &self.inner.config;
        let model = config
            .model_for(role)
            .ok_or((LlmUserError::NoModel { role }.into(), 0))?;
        let body = |renamed: bool| {
            let mut b = request_body(
                model,
                messages,
                temperature,
                config.seed,
                config.max_output_tokens,
            );
            if let (true, Some(o)) = (renamed, b.as_object_mut()) {
                if let Some(n) = o.remove("max_tokens") {
                    o.insert("max_completion_tokens".into(), n);
                }
            }
            b
        };
        let limit = &self.inner.completion_limit;
        let start = Instant::now();
        let mut attempts = 0;
        let completion = loop {
            attempts += 1;
            let renamed = limit.load(std::sync::atomic::Ordering::Relaxed);
            match self.try_once(role, model, messages, &body(renamed)).await {
                Ok(c) => break c,
                Err(Failure::Final(e)) => return Err((e, attempts)),
                // Asked again at once with the other name, remembered for later calls; a
                // body without `max_tokens` never gets this answer again.
                Err(Failure::CompletionLimit) => {
                    limit.store(true, std::sync::atomic::Ordering::Relaxed);
                }
                Err(Failure::Retryable {
                    status,
                    reason,
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
                    on_retry(&Retry {
                        role,
                        retry: attempts,
                        max_retries: config.max_retries,
                        reason,
                        error: last,
                        wait,
                    });
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
            prefix_reused_estimate: 0,
        })
    }

    async fn try_once(
        &self,
        role: Role,
        model: &str,
        messages: &[Message],
        body: &serde_json::Value,
    ) -> Result<Completion, Failure> {
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
        if status == 400
            && body.get("max_tokens").is_some()
            && message.contains("max_completion_tokens")
        {
            return Err(Failure::CompletionLimit);
        }
        if matches!(status, 400 | 413 | 422) {
            if let Some(o) = window::overflow(&text) {
                self.learn(model, messages, o);
                return Err(Failure::Final(
                    LlmUserError::ContextExceeded {
                        url: inner.url.clone(),
                        role,
                        context: o.context,
                        message,
                    }
                    .into(),
                ));
            }
        }
        if retryable(status) {
            Err(Failure::Retryable {
                status: Some(status),
                reason: format!("HTTP {status}"),
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

    /// Keeps what a refusal for size said: the model's window, and how far the estimate
    /// fell short of the server's count of the same prompt.
    fn learn(&self, model: &str, messages: &[Message], o: window::Overflow) {
        let w = &self.inner.window;
        if let Some(n) = o.context {
            lock(&w.learned).insert(model.to_string(), n);
        }
        if let Some(requested) = o.requested {
            let est: usize = messages.iter().map(|m| tokens::estimate(&m.content)).sum();
            if est > 0 && requested > est {
                let mut scale = lock(&w.scale);
                *scale = scale.max(requested as f64 / est as f64);
            }
        }
        tracing::info!(
            model,
            ?o,
            "the LLM server refused a prompt as larger than its context"
        );
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
        let timeout = secs(inner.config.timeout);
        let (reason, last, hint) = if e.is_timeout() {
            (
                format!("a {timeout} timeout"),
                format!("no answer within {timeout} (timed out)"),
                "raise the time limit of one try (--llm-timeout, LAKESTAR_LLM_TIMEOUT, or timeout_secs in lakestar.toml) if the model is slow to answer",
            )
        } else if e.is_connect() {
            (
                "a failed connection".to_string(),
                format!("cannot connect: {}", error_chain(e)),
                "check that the server runs at the base URL (base_url in lakestar.toml or OPENAI_BASE_URL)",
            )
        } else {
            (
                "a broken connection".to_string(),
                format!("the connection failed: {}", error_chain(e)),
                "check the network and the server's logs",
            )
        };
        Failure::Retryable {
            status: None,
            reason,
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
            prefix_reused_estimate: 0,
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
            context_tokens: None,
            counts: BTreeMap::new(),
        }
    }

    fn lock_totals(&self) -> std::sync::MutexGuard<'_, Totals> {
        lock(&self.inner.totals)
    }
}

/// Locks a mutex of plain counters or caches: a panic elsewhere cannot leave them
/// inconsistent enough to matter, so a poisoned lock is used as is.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
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

    #[tokio::test]
    async fn a_refusal_teaches_the_window_and_how_far_the_estimate_fell_short() {
        let config = LlmConfig {
            // Nothing listens there: the probe finds no tokenizer and no window.
            base_url: "http://127.0.0.1:9/v1".into(),
            model: Some("m".into()),
            context_tokens: Some(100_000),
            ..LlmConfig::default()
        };
        let c = LlmClient::new(config, Cassette::Off).unwrap();
        let text = "1234567890".repeat(10);
        assert_eq!(c.context_tokens(Role::Coder).await, 100_000);
        assert_eq!(c.count_tokens(Role::Coder, &text).await, 100);
        let messages = [Message::user(text.clone())];
        let o = window::Overflow {
            context: Some(4096),
            requested: Some(250),
        };
        c.learn("m", &messages, o);
        assert_eq!(c.context_tokens(Role::Verifier).await, 4096);
        assert_eq!(c.count_tokens(Role::Coder, &text).await, 250);
        // A count below the estimate never lowers it.
        let o = window::Overflow {
            context: None,
            requested: Some(10),
        };
        c.learn("m", &messages, o);
        assert_eq!(c.count_tokens(Role::Coder, &text).await, 250);
        assert_eq!(c.context_tokens(Role::Coder).await, 4096);
    }
}
