//! The model's context window and token counts, as far as the server tells them.
//!
//! Probed once per client, on first need: `GET {root}/props` (llama.cpp's llama-server:
//! `default_generation_settings.n_ctx` or `n_ctx`, the window it runs with), then
//! `GET {base_url}/models` (`max_model_len` from vLLM, `context_length` /
//! `max_context_length` from LM Studio and OpenRouter, `meta.n_ctx` then
//! `meta.n_ctx_train` from llama.cpp). The tokenizer: llama.cpp's
//! `POST {root}/tokenize {"content": …}` → `{"tokens": […]}`, else llama-cpp-python's
//! `POST {root}/extras/tokenize/count {"input": …}` → `{"count": n}`; neither → the
//! estimate of [`super::tokens`]. Any failure of a probe (404, no server, odd JSON)
//! only means "not said". `{root}` is the base URL without a trailing `/v1`.
//!
//! A 400 that states the window ("Requested tokens (17311) exceed context window of
//! 8192" from llama-cpp-python, "maximum context length is 8192 tokens" from OpenAI
//! and vLLM, llama.cpp's `n_ctx`) teaches it for the model; when it also states how many
//! tokens the prompt had, the estimate is scaled up so it no longer undercounts.

use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

/// How long a probe may take: the endpoints answer from memory.
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// A tokenizer endpoint of the server.
#[derive(Debug, Clone)]
pub(crate) enum Tokenizer {
    /// llama.cpp: `POST /tokenize {"content"}` → `{"tokens"}`.
    LlamaCpp(String),
    /// llama-cpp-python: `POST /extras/tokenize/count {"input"}` → `{"count"}`.
    Extras(String),
}

/// What the server said about itself.
#[derive(Debug, Clone, Default)]
pub(crate) struct Probe {
    pub context: Option<usize>,
    pub tokenizer: Option<Tokenizer>,
}

/// What a client knows about windows: the probe (once), and what 400s taught.
#[derive(Default)]
pub(crate) struct Window {
    pub probe: tokio::sync::OnceCell<Probe>,
    /// Model → window, from a server's "exceeds the context" answer.
    pub learned: Mutex<HashMap<String, usize>>,
    /// ≥ 1: by how much the estimate undercounted, from such an answer.
    pub scale: Mutex<f64>,
}

/// What a refused request says about the context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Overflow {
    /// The window, when stated.
    pub context: Option<usize>,
    /// The prompt's tokens by the server's count, when stated.
    pub requested: Option<usize>,
}

/// The base URL without its trailing `/v1` (where llama.cpp's own endpoints are).
pub(crate) fn root_url(base_url: &str) -> String {
    let b = base_url.trim_end_matches('/');
    b.strip_suffix("/v1").unwrap_or(b).to_string()
}

/// The window from llama.cpp's `/props`.
pub(crate) fn context_from_props(v: &Value) -> Option<usize> {
    positive(v.pointer("/default_generation_settings/n_ctx")).or_else(|| positive(v.get("n_ctx")))
}

/// The window from a `/models` list: the entry of `model` if listed, else the first.
pub(crate) fn context_from_models(v: &Value, model: Option<&str>) -> Option<usize> {
    let list = v.get("data").and_then(Value::as_array)?;
    let entry = model
        .and_then(|m| {
            list.iter()
                .find(|e| e.get("id").and_then(Value::as_str) == Some(m))
        })
        .or_else(|| list.first())?;
    [
        "/max_model_len",
        "/context_length",
        "/max_context_length",
        "/top_provider/context_length",
        "/meta/n_ctx",
        "/meta/n_ctx_train",
    ]
    .iter()
    .find_map(|p| positive(entry.pointer(p)))
}

fn positive(v: Option<&Value>) -> Option<usize> {
    v.and_then(Value::as_u64)
        .filter(|&n| n > 0)
        .and_then(|n| usize::try_from(n).ok())
}

/// Whether an error body says the prompt exceeded the context, and what it states.
pub(crate) fn overflow(body: &str) -> Option<Overflow> {
    let json: Option<Value> = serde_json::from_str(body).ok();
    let err = json.as_ref().map(|v| v.get("error").unwrap_or(v));
    let message = err
        .and_then(|e| e.get("message").and_then(Value::as_str).or(e.as_str()))
        .unwrap_or(body);
    let lower = message.to_lowercase();
    let context = err
        .and_then(|e| positive(e.get("n_ctx")))
        .or_else(|| number_after(&lower, "context window of"))
        .or_else(|| number_after(&lower, "maximum context length is"))
        .or_else(|| number_after(&lower, "context length of"));
    let requested = err
        .and_then(|e| positive(e.get("n_prompt_tokens")))
        .or_else(|| number_after(&lower, "requested tokens ("))
        .or_else(|| number_after(&lower, "resulted in"))
        .or_else(|| number_after(&lower, "you requested"));
    let says = context.is_some()
        || err.and_then(|e| e.get("type")).and_then(Value::as_str)
            == Some("exceed_context_size_error")
        || (lower.contains("context") && (lower.contains("exceed") || lower.contains("maximum")));
    says.then_some(Overflow { context, requested })
}

/// The integer right after `phrase` in `text` (spaces and a `(` allowed between).
fn number_after(text: &str, phrase: &str) -> Option<usize> {
    let at = text.find(phrase)? + phrase.len();
    let rest = text[at..].trim_start_matches([' ', '(']);
    let digits: String = rest
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == ',')
        .filter(char::is_ascii_digit)
        .collect();
    digits.parse().ok().filter(|&n| n > 0)
}

/// Asks the server for its window and tokenizer; anything it does not answer is `None`.
pub(crate) async fn probe(
    http: &reqwest::Client,
    base_url: &str,
    key: Option<&str>,
    model: Option<&str>,
) -> Probe {
    let root = root_url(base_url);
    let get = |url: String| {
        let mut req = http.get(url).timeout(PROBE_TIMEOUT);
        if let Some(k) = key {
            req = req.bearer_auth(k);
        }
        async move { json_of(req).await }
    };
    let mut context = get(format!("{root}/props"))
        .await
        .as_ref()
        .and_then(context_from_props);
    if context.is_none() {
        context = get(format!("{}/models", base_url.trim_end_matches('/')))
            .await
            .as_ref()
            .and_then(|v| context_from_models(v, model));
    }
    let candidates = [
        Tokenizer::LlamaCpp(format!("{root}/tokenize")),
        Tokenizer::Extras(format!("{root}/extras/tokenize/count")),
    ];
    let mut tokenizer = None;
    for t in candidates {
        if count(http, &t, key, model, "a").await.is_some() {
            tokenizer = Some(t);
            break;
        }
    }
    tracing::debug!(?context, ?tokenizer, "probed the LLM server");
    Probe { context, tokenizer }
}

/// Tokens of `text` by the server's tokenizer; `None` when it did not answer.
pub(crate) async fn count(
    http: &reqwest::Client,
    tokenizer: &Tokenizer,
    key: Option<&str>,
    model: Option<&str>,
    text: &str,
) -> Option<usize> {
    let (url, body) = match tokenizer {
        Tokenizer::LlamaCpp(url) => (url, json!({"content": text})),
        Tokenizer::Extras(url) => (url, json!({"input": text, "model": model})),
    };
    let mut req = http.post(url).timeout(PROBE_TIMEOUT).json(&body);
    if let Some(k) = key {
        req = req.bearer_auth(k);
    }
    let v = json_of(req).await?;
    match tokenizer {
        Tokenizer::LlamaCpp(_) => v.get("tokens").and_then(Value::as_array).map(Vec::len),
        Tokenizer::Extras(_) => v
            .get("count")
            .and_then(Value::as_u64)
            .and_then(|n| usize::try_from(n).ok()),
    }
}

async fn json_of(req: reqwest::RequestBuilder) -> Option<Value> {
    let resp = req.send().await.ok()?;
    if !resp.status().is_success() {
        return None;
    }
    resp.json().await.ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_from_props_and_model_lists() {
        let props = json!({"default_generation_settings": {"n_ctx": 8192}, "n_ctx": 4096});
        assert_eq!(context_from_props(&props), Some(8192));
        assert_eq!(context_from_props(&json!({"n_ctx": 4096})), Some(4096));
        assert_eq!(context_from_props(&json!({"detail": "Not Found"})), None);

        let vllm = json!({"data": [{"id": "a", "max_model_len": 32768}, {"id": "b", "max_model_len": 4096}]});
        assert_eq!(context_from_models(&vllm, Some("b")), Some(4096));
        assert_eq!(context_from_models(&vllm, Some("zzz")), Some(32768));
        let lms = json!({"data": [{"id": "m", "max_context_length": 131072}]});
        assert_eq!(context_from_models(&lms, None), Some(131072));
        let llama = json!({"data": [{"id": "m", "meta": {"n_ctx_train": 32768}}]});
        assert_eq!(context_from_models(&llama, Some("m")), Some(32768));
        let plain = json!({"data": [{"id": "m", "owned_by": "me"}]});
        assert_eq!(context_from_models(&plain, Some("m")), None);
        assert_eq!(root_url("http://h:8080/v1/"), "http://h:8080");
        assert_eq!(root_url("http://h:8080"), "http://h:8080");
    }

    #[test]
    fn overflow_answers_of_the_common_servers() {
        let lcp = r#"{"error":{"message":"Requested tokens (17311) exceed context window of 8192","type":"internal_server_error"}}"#;
        assert_eq!(
            overflow(lcp),
            Some(Overflow {
                context: Some(8192),
                requested: Some(17311)
            })
        );
        let openai = r#"{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9,001 tokens. Please reduce the length of the messages.","code":"context_length_exceeded"}}"#;
        assert_eq!(
            overflow(openai),
            Some(Overflow {
                context: Some(8192),
                requested: Some(9001)
            })
        );
        let llama = r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":9000,"n_ctx":4096}}"#;
        assert_eq!(
            overflow(llama),
            Some(Overflow {
                context: Some(4096),
                requested: Some(9000)
            })
        );
        let vague = r#"{"error":"prompt exceeds the context"}"#;
        assert_eq!(
            overflow(vague),
            Some(Overflow {
                context: None,
                requested: None
            })
        );
        assert_eq!(
            overflow(r#"{"error":{"message":"model 'x' not found"}}"#),
            None
        );
        assert_eq!(overflow("<html>bad request</html>"), None);
    }
}
