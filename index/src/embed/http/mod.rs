//! Embedding models behind an HTTP API: OpenAI's `/v1/embeddings` shape (OpenAI itself,
//! and the many servers that copy it: vLLM, llama.cpp, LM Studio, TEI…) and Ollama's
//! `/api/embed`.
//!
//! Both share one client loop: texts go in batches; a batch that meets 429, a 5xx, a
//! timeout or a dropped connection is retried with exponential backoff (honouring
//! `Retry-After`), while errors that retrying cannot fix (400, 401, 404, connection
//! refused, a malformed answer) fail at once with a message that says what to check.
//!
//! The client is reqwest's blocking one, like the rest of this crate: it must not be
//! called from inside an async runtime.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use reqwest::blocking::Client;
use reqwest::header::RETRY_AFTER;
use reqwest::StatusCode;
use serde::Deserialize;
use serde_json::json;

use super::{l2_normalize, EmbedError, Embedder};

mod messages;
#[cfg(test)]
mod tests;

use messages::{
    error_chain, error_message, excerpt, parse_retry_after, status_hint, with_attempts,
};

/// How failed requests are retried: `max_attempts` tries in all, waiting
/// `initial_backoff`, then twice that, and so on, never more than `max_backoff`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Tries per batch, the first included (at least 1).
    pub max_attempts: u32,
    /// Wait before the first retry.
    pub initial_backoff: Duration,
    /// Longest wait between tries, also the cap on a server's `Retry-After`.
    pub max_backoff: Duration,
}

impl Default for RetryPolicy {
    /// 5 tries, waiting 0.5 s, 1 s, 2 s, 4 s: enough to ride out a rate-limit window or
    /// a server restart without stalling an indexing run for minutes.
    fn default() -> Self {
        Self {
            max_attempts: 5,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(30),
        }
    }
}

impl RetryPolicy {
    /// The wait before retry number `retry` (0 for the first retry): the exponential
    /// backoff, or the server's `Retry-After` when that is longer, capped at
    /// `max_backoff`.
    pub fn delay(&self, retry: u32, retry_after: Option<Duration>) -> Duration {
        let exp = self
            .initial_backoff
            .saturating_mul(2u32.saturating_pow(retry));
        exp.max(retry_after.unwrap_or_default())
            .min(self.max_backoff)
    }
}

/// Settings shared by the HTTP embedders; `HttpOptions::default()` suits real servers.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// Time limit of one request, from connecting to the end of the answer.
    pub timeout: Duration,
    /// Texts per request (at least 1). 64 keeps a request of long descriptions well
    /// under the servers' body and token-per-request limits.
    pub batch_size: usize,
    /// Retries on 429, 5xx, timeouts and dropped connections.
    pub retry: RetryPolicy,
    /// The dimension the model is known to produce; answers of another length are an
    /// error. `None`: learned from the first answer.
    pub dim: Option<usize>,
    /// Whether to use the `HTTP_PROXY`/`HTTPS_PROXY`/`NO_PROXY` environment variables.
    pub env_proxy: bool,
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(60),
            batch_size: 64,
            retry: RetryPolicy::default(),
            dim: None,
            env_proxy: true,
        }
    }
}

/// Which wire shape a server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Api {
    OpenAi,
    Ollama,
}

impl Api {
    fn name(self) -> &'static str {
        match self {
            Api::OpenAi => "OpenAI-compatible",
            Api::Ollama => "Ollama",
        }
    }

    fn id_prefix(self) -> &'static str {
        match self {
            Api::OpenAi => "openai",
            Api::Ollama => "ollama",
        }
    }
}

/// The client loop shared by both APIs.
#[derive(Debug)]
struct HttpEmbedder {
    api: Api,
    client: Client,
    url: String,
    model: String,
    api_key: Option<String>,
    opts: HttpOptions,
    /// The model's dimension; 0 until given or learned from an answer.
    dim: AtomicUsize,
}

impl HttpEmbedder {
    fn new(
        api: Api,
        url: String,
        model: String,
        api_key: Option<String>,
        opts: HttpOptions,
    ) -> Result<Self, EmbedError> {
        if model.trim().is_empty() {
            return Err(EmbedError::Config(
                "the embedding model name is empty; give the model to use (e.g. text-embedding-3-small, nomic-embed-text)".into(),
            ));
        }
        if opts.batch_size == 0 || opts.retry.max_attempts == 0 || opts.dim == Some(0) {
            return Err(EmbedError::Config(
                "batch size, attempts and dimension must all be at least 1".into(),
            ));
        }
        let mut builder = Client::builder()
            .timeout(opts.timeout)
            .connect_timeout(opts.timeout.min(Duration::from_secs(10)))
            .user_agent(concat!("lakestar/", env!("CARGO_PKG_VERSION")));
        if !opts.env_proxy {
            builder = builder.no_proxy();
        }
        let client = builder.build().map_err(|e| {
            EmbedError::Config(format!(
                "cannot set up the HTTP client: {}",
                error_chain(&e)
            ))
        })?;
        Ok(Self {
            api,
            client,
            url,
            model,
            api_key: api_key.filter(|k| !k.is_empty()),
            dim: AtomicUsize::new(opts.dim.unwrap_or(0)),
            opts,
        })
    }

    fn id(&self) -> String {
        format!("{}-{}-{}", self.api.id_prefix(), self.model, self.dim())
    }

    fn dim(&self) -> usize {
        self.dim.load(Ordering::Acquire)
    }

    fn probe(&self) -> Result<usize, EmbedError> {
        self.embed_batch(&["dimension probe"])?;
        Ok(self.dim())
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        // Blank texts are not sent: OpenAI refuses empty input, and there is nothing to
        // embed anyway. They get the zero vector, as with every embedder.
        let sent: Vec<usize> = (0..texts.len())
            .filter(|&i| !texts[i].trim().is_empty())
            .collect();
        let mut out: Vec<Option<Vec<f32>>> = vec![None; texts.len()];
        for chunk in sent.chunks(self.opts.batch_size) {
            let batch: Vec<&str> = chunk.iter().map(|&i| texts[i]).collect();
            for (&i, v) in chunk.iter().zip(self.embed_batch(&batch)?) {
                out[i] = Some(v);
            }
        }
        if sent.len() < texts.len() && self.dim() == 0 {
            self.probe()?;
        }
        let dim = self.dim();
        Ok(out
            .into_iter()
            .map(|v| v.unwrap_or_else(|| vec![0.0; dim]))
            .collect())
    }

    /// One request (with retries) for at most `batch_size` non-blank texts.
    fn embed_batch(&self, batch: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let body = json!({ "model": self.model, "input": batch });
        let text = self.post(&body)?;
        let mut vectors = match self.api {
            Api::OpenAi => parse_openai(&text, batch.len()),
            Api::Ollama => parse_ollama(&text, batch.len()),
        }
        .map_err(|detail| EmbedError::BadResponse {
            url: self.url.clone(),
            api: self.api.name(),
            detail,
        })?;
        for v in &mut vectors {
            self.check_dim(v.len())?;
            l2_normalize(v);
        }
        Ok(vectors)
    }

    /// Checks a vector's length against the known dimension, learning it from the first
    /// answer when none was given.
    fn check_dim(&self, found: usize) -> Result<(), EmbedError> {
        if found == 0 {
            return Err(EmbedError::BadResponse {
                url: self.url.clone(),
                api: self.api.name(),
                detail: "an embedding is empty".into(),
            });
        }
        let expected =
            match self
                .dim
                .compare_exchange(0, found, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return Ok(()),
                Err(known) => known,
            };
        if expected == found {
            Ok(())
        } else {
            Err(EmbedError::DimensionMismatch {
                embedder: format!("{}-{}", self.api.id_prefix(), self.model),
                expected,
                found,
            })
        }
    }

    /// POSTs `body` and returns the body of the 2xx answer, retrying what may succeed on
    /// a second try.
    fn post(&self, body: &serde_json::Value) -> Result<String, EmbedError> {
        let policy = &self.opts.retry;
        let mut attempt = 0;
        loop {
            attempt += 1;
            let (err, retry_after) = match self.post_once(body) {
                Ok(text) => return Ok(text),
                Err(Failure::Final(err)) => return Err(err),
                Err(Failure::Retryable(err, retry_after)) => (err, retry_after),
            };
            if attempt >= policy.max_attempts {
                return Err(with_attempts(err, attempt));
            }
            let wait = policy.delay(attempt - 1, retry_after);
            tracing::debug!(url = %self.url, attempt, ?wait, error = %err, "retrying embedding request");
            std::thread::sleep(wait);
        }
    }

    fn post_once(&self, body: &serde_json::Value) -> Result<String, Failure> {
        let mut req = self.client.post(&self.url).json(body);
        if let Some(key) = &self.api_key {
            req = req.bearer_auth(key);
        }
        let resp = req.send().map_err(|e| self.transport_failure(&e))?;
        let status = resp.status();
        let retry_after = resp
            .headers()
            .get(RETRY_AFTER)
            .and_then(|v| v.to_str().ok().and_then(parse_retry_after));
        let text = resp.text().map_err(|e| self.transport_failure(&e))?;
        if status.is_success() {
            return Ok(text);
        }
        let err = EmbedError::Status {
            url: self.url.clone(),
            status: status.as_u16(),
            message: error_message(&text),
            hint: status_hint(status),
        };
        if status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error() {
            Err(Failure::Retryable(err, retry_after))
        } else {
            Err(Failure::Final(err))
        }
    }

    fn transport_failure(&self, e: &reqwest::Error) -> Failure {
        let detail = if e.is_timeout() {
            format!(
                "no answer within {:?} ({}); raise the timeout if the model is slow to load",
                self.opts.timeout,
                error_chain(e)
            )
        } else {
            error_chain(e)
        };
        let err = EmbedError::Network {
            url: self.url.clone(),
            detail,
        };
        // A refused or unresolvable connection will not fix itself within the backoff
        // window; a timeout or a connection dropped mid-answer may.
        if e.is_timeout() || !(e.is_connect() || e.is_builder() || e.is_redirect()) {
            Failure::Retryable(err, None)
        } else {
            Failure::Final(err)
        }
    }
}

/// One try's failure, and whether another try may succeed.
enum Failure {
    Final(EmbedError),
    Retryable(EmbedError, Option<Duration>),
}

/// Vectors from an OpenAI-shaped answer, put in input order by their `index`.
fn parse_openai(text: &str, n: usize) -> Result<Vec<Vec<f32>>, String> {
    #[derive(Deserialize)]
    struct Answer {
        data: Vec<Item>,
    }
    #[derive(Deserialize)]
    struct Item {
        index: usize,
        embedding: Vec<f32>,
    }
    let answer: Answer = serde_json::from_str(text)
        .map_err(|e| format!("{e} in body starting {:?}", excerpt(text, 120)))?;
    if answer.data.len() != n {
        return Err(format!("{} embeddings for {n} inputs", answer.data.len()));
    }
    let mut out: Vec<Option<Vec<f32>>> = vec![None; n];
    for item in answer.data {
        match out.get_mut(item.index) {
            Some(slot @ None) => *slot = Some(item.embedding),
            Some(Some(_)) => return Err(format!("index {} appears twice", item.index)),
            None => return Err(format!("index {} out of range for {n} inputs", item.index)),
        }
    }
    // n items with distinct in-range indexes fill every slot.
    Ok(out.into_iter().flatten().collect())
}

/// Vectors from an Ollama `/api/embed` answer (already in input order).
fn parse_ollama(text: &str, n: usize) -> Result<Vec<Vec<f32>>, String> {
    #[derive(Deserialize)]
    struct Answer {
        embeddings: Vec<Vec<f32>>,
    }
    let answer: Answer = serde_json::from_str(text)
        .map_err(|e| format!("{e} in body starting {:?}", excerpt(text, 120)))?;
    if answer.embeddings.len() != n {
        return Err(format!(
            "{} embeddings for {n} inputs",
            answer.embeddings.len()
        ));
    }
    Ok(answer.embeddings)
}

/// Checks a base URL and removes trailing slashes.
fn base(base_url: &str) -> Result<String, EmbedError> {
    let trimmed = base_url.trim().trim_end_matches('/');
    match reqwest::Url::parse(trimmed) {
        Ok(u) if matches!(u.scheme(), "http" | "https") && u.host().is_some() => {
            Ok(trimmed.to_string())
        }
        _ => Err(EmbedError::Config(format!(
            "embedding server base URL {base_url:?} is not an http(s) URL; give one like http://localhost:11434 or https://api.openai.com"
        ))),
    }
}

/// The embeddings endpoint of an OpenAI-compatible server: `{base}/v1/embeddings`, or
/// `{base}/embeddings` when the base already ends in `/v1`.
fn openai_url(base_url: &str) -> Result<String, EmbedError> {
    let b = base(base_url)?;
    Ok(if b.ends_with("/v1") {
        format!("{b}/embeddings")
    } else {
        format!("{b}/v1/embeddings")
    })
}

/// An embedding model behind an OpenAI-compatible `/v1/embeddings` endpoint.
///
/// Sends `{"model", "input": [texts]}` with `Authorization: Bearer KEY` when a key is
/// given, and reads `data[].embedding` in `index` order. Its dimension is known once
/// given (`HttpOptions::dim`), after [`probe`](Self::probe), or after the first
/// [`embed`](Embedder::embed); until then [`Embedder::dim`] is 0 and the id ends in
/// `-0`, so call `probe` before recording the id in an index.
#[derive(Debug)]
pub struct OpenAiEmbedder {
    inner: HttpEmbedder,
}

impl OpenAiEmbedder {
    /// An embedder for `model` at `base_url` (e.g. `https://api.openai.com`, or
    /// `http://localhost:8000/v1`) with default options.
    pub fn new(base_url: &str, model: &str, api_key: Option<String>) -> Result<Self, EmbedError> {
        Self::with_options(base_url, model, api_key, HttpOptions::default())
    }

    /// Like [`new`](Self::new), with explicit timeouts, batching, retries and dimension.
    pub fn with_options(
        base_url: &str,
        model: &str,
        api_key: Option<String>,
        opts: HttpOptions,
    ) -> Result<Self, EmbedError> {
        let url = openai_url(base_url)?;
        Ok(Self {
            inner: HttpEmbedder::new(Api::OpenAi, url, model.to_string(), api_key, opts)?,
        })
    }

    /// Embeds one short text to learn the model's dimension (and to check that server,
    /// key and model work); returns the dimension.
    pub fn probe(&self) -> Result<usize, EmbedError> {
        self.inner.probe()
    }

    /// The embeddings endpoint requests go to.
    pub fn url(&self) -> &str {
        &self.inner.url
    }
}

impl Embedder for OpenAiEmbedder {
    /// `openai-MODEL-DIM`, e.g. `openai-text-embedding-3-small-1536`.
    fn id(&self) -> String {
        self.inner.id()
    }

    fn dim(&self) -> usize {
        self.inner.dim()
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.inner.embed(texts)
    }
}

/// An embedding model served by Ollama's `/api/embed` (`{"model", "input": [texts]}` →
/// `{"embeddings": [...]}`). The dimension is learned as for [`OpenAiEmbedder`].
#[derive(Debug)]
pub struct OllamaEmbedder {
    inner: HttpEmbedder,
}

impl OllamaEmbedder {
    /// An embedder for `model` (e.g. `nomic-embed-text`) at `base_url` (usually
    /// `http://localhost:11434`) with default options.
    pub fn new(base_url: &str, model: &str) -> Result<Self, EmbedError> {
        Self::with_options(base_url, model, HttpOptions::default())
    }

    /// Like [`new`](Self::new), with explicit timeouts, batching, retries and dimension.
    pub fn with_options(
        base_url: &str,
        model: &str,
        opts: HttpOptions,
    ) -> Result<Self, EmbedError> {
        let url = format!("{}/api/embed", base(base_url)?);
        Ok(Self {
            inner: HttpEmbedder::new(Api::Ollama, url, model.to_string(), None, opts)?,
        })
    }

    /// Embeds one short text to learn the model's dimension (and to check that the
    /// server and model work); returns the dimension.
    pub fn probe(&self) -> Result<usize, EmbedError> {
        self.inner.probe()
    }

    /// The embeddings endpoint requests go to.
    pub fn url(&self) -> &str {
        &self.inner.url
    }
}

impl Embedder for OllamaEmbedder {
    /// `ollama-MODEL-DIM`, e.g. `ollama-nomic-embed-text-768`.
    fn id(&self) -> String {
        self.inner.id()
    }

    fn dim(&self) -> usize {
        self.inner.dim()
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.inner.embed(texts)
    }
}
