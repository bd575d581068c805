//! The Chat Completions wire format and the small decisions around it: what to send,
//! how to read the answer, how long to wait before a retry, what to say about a status.

use serde::Deserialize;
use serde_json::{json, Value};
use std::time::{Duration, SystemTime};

use super::{Message, Usage};

/// Longest wait between tries, also the cap on a server's `Retry-After`: a rate limit
/// that asks for more is better reported than waited out.
pub(crate) const MAX_BACKOFF: Duration = Duration::from_secs(60);

/// The JSON body of a request; `max_tokens` bounds the reply.
pub(crate) fn request_body(
    model: &str,
    messages: &[Message],
    temperature: Option<f32>,
    seed: Option<u64>,
    max_tokens: usize,
) -> Value {
    let mut body = json!({"model": model, "messages": messages, "max_tokens": max_tokens});
    if let Some(t) = temperature {
        body["temperature"] = json!(t);
    }
    if let Some(s) = seed {
        body["seed"] = json!(s);
    }
    body
}

/// What lakestar reads of a 2xx answer.
#[derive(Debug, PartialEq)]
pub(crate) struct Completion {
    pub text: String,
    pub model: Option<String>,
    pub usage: Usage,
}

#[derive(Deserialize)]
struct RawCompletion {
    #[serde(default)]
    choices: Vec<RawChoice>,
    model: Option<String>,
    usage: Option<RawUsage>,
    /// llama.cpp's server: `timings.cache_n`, prompt tokens taken from its cache.
    timings: Option<RawTimings>,
    /// llama.cpp's older field for the same.
    tokens_cached: Option<u64>,
}

#[derive(Deserialize)]
struct RawTimings {
    cache_n: Option<u64>,
}

#[derive(Deserialize)]
struct RawDetails {
    cached_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct RawChoice {
    message: RawMessage,
}

#[derive(Deserialize)]
struct RawMessage {
    #[serde(default)]
    content: Option<Value>,
    #[serde(default)]
    refusal: Option<String>,
}

#[derive(Deserialize)]
struct RawUsage {
    #[serde(default)]
    prompt_tokens: Option<u64>,
    #[serde(default)]
    completion_tokens: Option<u64>,
    /// OpenAI and vLLM: `prompt_tokens_details.cached_tokens`.
    #[serde(default)]
    prompt_tokens_details: Option<RawDetails>,
}

/// Reads a chat completion: the first choice's content, as a string or as an array of
/// text parts (some servers send `[{"type": "text", "text": …}]`); `usage` may be
/// missing (zero tokens then). The error says what is wrong, with a bit of the body.
pub(crate) fn parse_completion(body: &str) -> Result<Completion, String> {
    let raw: RawCompletion =
        serde_json::from_str(body).map_err(|e| format!("{e} in {:?}", excerpt(body, 200)))?;
    let Some(choice) = raw.choices.into_iter().next() else {
        return Err(format!("no choices in {:?}", excerpt(body, 200)));
    };
    let text = match choice.message.content {
        Some(Value::String(s)) => s,
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(""),
        Some(Value::Null) | None => {
            return Err(match choice.message.refusal {
                Some(r) => format!("the model refused: {}", excerpt(&r, 300)),
                None => format!(
                    "the first choice has no content in {:?}",
                    excerpt(body, 200)
                ),
            })
        }
        Some(other) => return Err(format!("message content is {other}, not text")),
    };
    let cached = raw
        .usage
        .as_ref()
        .and_then(|u| u.prompt_tokens_details.as_ref())
        .and_then(|d| d.cached_tokens)
        .or(raw.timings.and_then(|t| t.cache_n))
        .or(raw.tokens_cached)
        .unwrap_or(0);
    let usage = raw.usage.map_or_else(Usage::default, |u| Usage {
        prompt_tokens: u.prompt_tokens.unwrap_or(0),
        completion_tokens: u.completion_tokens.unwrap_or(0),
        cached_tokens: 0,
    });
    let usage = Usage {
        cached_tokens: cached,
        ..usage
    };
    Ok(Completion {
        text,
        model: raw.model.filter(|m| !m.is_empty()),
        usage,
    })
}

/// `Retry-After` as seconds (integer, or decimal as some servers send) or as an HTTP
/// date, relative to `now`; a date in the past means no wait.
pub(crate) fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<f64>() {
        return Duration::try_from_secs_f64(secs).ok();
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// The wait before retry number `retry` (0 for the first): `base · 2^retry`, capped at
/// [`MAX_BACKOFF`], drawn uniformly from its upper half so that clients that failed
/// together do not retry together; never less than the server's `Retry-After` (itself
/// capped at [`MAX_BACKOFF`]).
pub(crate) fn backoff(base: Duration, retry: u32, retry_after: Option<Duration>) -> Duration {
    let exp = base
        .saturating_mul(2u32.saturating_pow(retry.min(31)))
        .min(MAX_BACKOFF);
    let half = exp / 2;
    let jitter = Duration::from_nanos(fastrand::u64(0..=half.as_nanos() as u64));
    (half + jitter).max(retry_after.unwrap_or_default().min(MAX_BACKOFF))
}

/// Whether a try that got `status` may succeed if made again.
pub(crate) fn retryable(status: u16) -> bool {
    matches!(status, 408 | 429 | 500..=599)
}

/// What to check for a status retrying did not fix.
pub(crate) fn status_hint(status: u16) -> &'static str {
    match status {
        401 | 403 => "check the API key (api_key in lakestar.toml or OPENAI_API_KEY) and that it may use this model",
        404 => "check the base URL and the model name (for Ollama, `ollama pull MODEL` first)",
        400 | 413 | 422 => "check the model name; the prompt may also exceed the model's context window",
        408 | 429 => "the server is rate-limiting; wait and run again, or raise max_retries",
        500..=599 => "the server kept failing; check its logs, or try again later",
        _ => "check the server's documentation for this status",
    }
}

/// The server's error message from a JSON error body (`{"error": {"message": …}}` from
/// OpenAI, `{"error": "…"}` from Ollama), else a short excerpt of the body.
pub(crate) fn error_message(body: &str) -> String {
    if let Ok(v) = serde_json::from_str::<Value>(body) {
        let msg = v
            .pointer("/error/message")
            .or_else(|| v.get("error"))
            .or_else(|| v.get("message"))
            .and_then(Value::as_str);
        if let Some(msg) = msg {
            return excerpt(msg, 300);
        }
    }
    if body.trim().is_empty() {
        "(empty body)".into()
    } else {
        excerpt(body, 300)
    }
}

/// `text` with every occurrence of the API key replaced: servers sometimes quote the
/// key they refused, and messages end up in logs.
pub(crate) fn scrub(text: String, key: Option<&str>) -> String {
    match key {
        Some(k) if !k.is_empty() && text.contains(k) => text.replace(k, "<api key>"),
        _ => text,
    }
}

/// The first `max` characters of `s`, whitespace runs collapsed to one space.
pub(crate) fn excerpt(s: &str, max: usize) -> String {
    let collapsed = s.split_whitespace().collect::<Vec<_>>().join(" ");
    match collapsed.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &collapsed[..cut]),
        None => collapsed,
    }
}

/// The error and its sources, joined, a source left out when an earlier message quotes
/// it: reqwest's own message hides the cause ("connection refused") in the source chain,
/// while lakestar's errors quote theirs (the CLI prints errors with it too).
pub(crate) fn error_chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = s.source();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_as_string_or_parts_and_usage_optional() {
        let c = parse_completion(
            r#"{"model":"m-2024","choices":[{"message":{"role":"assistant","content":"hi"}}],
                "usage":{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6}}"#,
        )
        .unwrap();
        assert_eq!(c.text, "hi");
        assert_eq!(c.model.as_deref(), Some("m-2024"));
        assert_eq!(
            c.usage,
            Usage {
                prompt_tokens: 5,
                completion_tokens: 1,
                cached_tokens: 0
            }
        );
        let cached = |body: &str| parse_completion(body).unwrap().usage.cached_tokens;
        assert_eq!(
            cached(
                r#"{"choices":[{"message":{"content":"x"}}],"usage":{"prompt_tokens":9,"prompt_tokens_details":{"cached_tokens":7}}}"#
            ),
            7
        );
        assert_eq!(
            cached(
                r#"{"choices":[{"message":{"content":"x"}}],"usage":{"prompt_tokens":9},"timings":{"cache_n":6,"prompt_n":3}}"#
            ),
            6
        );
        assert_eq!(
            cached(r#"{"choices":[{"message":{"content":"x"}}],"tokens_cached":5}"#),
            5
        );

        let c = parse_completion(
            r#"{"choices":[{"message":{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}}]}"#,
        )
        .unwrap();
        assert_eq!(c.text, "ab");
        assert_eq!(c.model, None);
        assert_eq!(c.usage, Usage::default());

        let c = parse_completion(
            r#"{"choices":[{"message":{"content":"x"}}],"usage":{"prompt_tokens":3}}"#,
        )
        .unwrap();
        assert_eq!(c.usage.prompt_tokens, 3);
        assert_eq!(c.usage.completion_tokens, 0);
    }

    #[test]
    fn unreadable_completions_say_why() {
        let err = |b: &str| parse_completion(b).unwrap_err();
        assert!(err("<html>busy</html>").contains("<html>busy"));
        assert!(err(r#"{"choices":[]}"#).contains("no choices"));
        assert!(err(r#"{"choices":[{"message":{"content":null}}]}"#).contains("no content"));
        assert!(
            err(r#"{"choices":[{"message":{"content":null,"refusal":"no"}}]}"#)
                .contains("refused: no")
        );
        assert!(err(r#"{"choices":[{"message":{"content":5}}]}"#).contains("not text"));
    }

    #[test]
    fn retry_after_in_seconds_or_http_date() {
        let now = httpdate::parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT").unwrap();
        let p = |v| parse_retry_after(v, now);
        assert_eq!(p("0"), Some(Duration::ZERO));
        assert_eq!(p(" 2 "), Some(Duration::from_secs(2)));
        assert_eq!(p("1.5"), Some(Duration::from_millis(1500)));
        assert_eq!(
            p("Sun, 06 Nov 1994 08:49:40 GMT"),
            Some(Duration::from_secs(3))
        );
        assert_eq!(p("Sun, 06 Nov 1994 08:00:00 GMT"), Some(Duration::ZERO));
        assert_eq!(p("-1"), None);
        assert_eq!(p("soon"), None);
    }

    #[test]
    fn backoff_doubles_with_jitter_caps_and_honours_retry_after() {
        let base = Duration::from_millis(100);
        for _ in 0..100 {
            let d = backoff(base, 2, None);
            assert!(
                d >= Duration::from_millis(200) && d <= Duration::from_millis(400),
                "{d:?}"
            );
            assert!(backoff(base, 40, None) <= MAX_BACKOFF);
            assert!(backoff(base, 40, None) >= MAX_BACKOFF / 2);
            let ra = backoff(base, 0, Some(Duration::from_secs(5)));
            assert_eq!(ra, Duration::from_secs(5));
            let huge = backoff(base, 0, Some(Duration::from_secs(86_400)));
            assert_eq!(huge, MAX_BACKOFF);
        }
    }

    #[test]
    fn statuses_to_retry() {
        for s in [408, 429, 500, 502, 503, 599] {
            assert!(retryable(s), "{s}");
        }
        for s in [400, 401, 403, 404, 422] {
            assert!(!retryable(s), "{s}");
        }
    }

    #[test]
    fn error_messages_from_json_bodies_scrubbed_of_the_key() {
        assert_eq!(
            error_message(r#"{"error":{"message":"Incorrect API key provided: sk-abc"}}"#),
            "Incorrect API key provided: sk-abc"
        );
        assert_eq!(
            error_message(r#"{"error":"model 'x' not found"}"#),
            "model 'x' not found"
        );
        assert_eq!(error_message(""), "(empty body)");
        assert_eq!(
            scrub("bad key sk-abc".into(), Some("sk-abc")),
            "bad key <api key>"
        );
        assert_eq!(scrub("fine".into(), None), "fine");
    }

    #[test]
    fn request_body_has_temperature_and_seed_only_when_set() {
        let m = [Message::user("q")];
        let b = request_body("m", &m, None, None, 100);
        assert!(b.get("temperature").is_none() && b.get("seed").is_none());
        assert_eq!(b["messages"][0]["content"], "q");
        assert_eq!(b["max_tokens"], 100);
        let b = request_body("m", &m, Some(0.5), Some(7), 100);
        assert_eq!(b["temperature"], 0.5);
        assert_eq!(b["seed"], 7);
    }
}
