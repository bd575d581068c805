//! Turning HTTP failures into messages that say what went wrong and what to check.

use std::time::Duration;

use reqwest::StatusCode;

use crate::embed::EmbedError;

/// Notes in the error how many tries were made.
pub(super) fn with_attempts(err: EmbedError, attempts: u32) -> EmbedError {
    match err {
        EmbedError::Network { url, detail } => EmbedError::Network {
            url,
            detail: format!("{detail} (gave up after {attempts} attempts)"),
        },
        EmbedError::Status {
            url,
            status,
            message,
            hint,
        } => EmbedError::Status {
            url,
            status,
            message: format!("{message} (gave up after {attempts} attempts)"),
            hint,
        },
        other => other,
    }
}

/// `Retry-After` in seconds (integer, or decimal as some servers send). The HTTP-date
/// form is not parsed: the exponential backoff applies then.
pub(super) fn parse_retry_after(value: &str) -> Option<Duration> {
    let secs: f64 = value.trim().parse().ok()?;
    (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs.min(86_400.0)))
}

/// What to check for an error status.
pub(super) fn status_hint(status: StatusCode) -> &'static str {
    match status.as_u16() {
        401 | 403 => "check the API key and that it may use this model",
        404 => "check the base URL and the model name (for Ollama, `ollama pull MODEL` first)",
        400 | 413 | 422 => "check the model name, and lower the batch size if texts are long (the model's input limit may be exceeded)",
        429 => "still rate-limited after retrying; lower the batch size or wait and run again",
        500..=599 => "the server kept failing after retries; check its logs, or try again later",
        _ => "check the server's documentation for this status",
    }
}

/// The server's error message from a JSON error body (`{"error": {"message": …}}` from
/// OpenAI, `{"error": "…"}` from Ollama), else a short excerpt of the body.
pub(super) fn error_message(body: &str) -> String {
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(body) {
        let msg = v
            .pointer("/error/message")
            .or_else(|| v.get("error"))
            .or_else(|| v.get("message"))
            .and_then(|m| m.as_str());
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

/// The first `max` characters of `s`, whitespace runs collapsed to one space.
pub(super) fn excerpt(s: &str, max: usize) -> String {
    let collapsed = s.split_whitespace().collect::<Vec<_>>().join(" ");
    match collapsed.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &collapsed[..cut]),
        None => collapsed,
    }
}

/// The error and its sources, joined: reqwest's own message hides the cause
/// ("connection refused") in the source chain.
pub(super) fn error_chain(e: &dyn std::error::Error) -> String {
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
