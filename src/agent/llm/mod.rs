//! OpenAI-compatible chat client: the agent's one way to talk to a model.
//!
//! Any server that speaks Chat Completions (`POST {base_url}/chat/completions`) will do:
//! OpenAI, Gemini's OpenAI-compatible endpoint, Ollama, vLLM, llama.cpp's server. The
//! client
//!
//! - takes its settings from `lakestar.toml` and the environment ([`LlmConfig`]), with a
//!   model per [`Role`] allowed;
//! - sends the role of every request in an `X-Lakestar-Role` header, so that proxies and
//!   logs can attribute cost;
//! - retries 429, 408, 5xx, timeouts and failed connections with exponential backoff and
//!   jitter, honouring `Retry-After`;
//! - counts tokens from the answers' `usage`, and cost from an optional price table
//!   ([`Totals`]);
//! - records every call to a JSONL cassette, or answers from one without a network
//!   ([`Cassette`]), for deterministic reruns.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

mod cassette;
mod client;
mod config;
mod error;
mod price;
pub mod secrets;
pub mod tokens;
mod window;
mod wire;

pub use cassette::Cassette;
pub use client::LlmClient;
pub use config::{
    parse_timeout, LlmConfig, Origin, CONFIG_FILE, DEFAULT_CONTEXT_TOKENS,
    DEFAULT_MAX_OUTPUT_TOKENS, TIMEOUT_VAR,
};
pub use error::{LlmError, LlmInternalError, LlmUserError};
pub use price::Price;
pub(crate) use wire::error_chain;

/// The part a request plays in the DS-STAR loop; sent as the `X-Lakestar-Role` header
/// and usable as a key of `[llm.models]` to pick a model per role.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Describes one data file.
    Analyzer,
    /// Proposes the next step of the plan.
    Planner,
    /// Writes the code of the plan.
    Coder,
    /// Judges whether the plan answers the question.
    Verifier,
    /// Decides to add a step or go back to one.
    Router,
    /// Fixes code that failed.
    Debugger,
    /// Shortens long descriptions or outputs.
    Summarizer,
    /// Formats the final answer.
    Finalyzer,
}

impl Role {
    /// Every role, in the order of the loop.
    pub const ALL: [Role; 8] = [
        Role::Analyzer,
        Role::Planner,
        Role::Coder,
        Role::Verifier,
        Role::Router,
        Role::Debugger,
        Role::Summarizer,
        Role::Finalyzer,
    ];

    /// The lowercase name: the header value and the config key.
    pub fn as_str(&self) -> &'static str {
        match self {
            Role::Analyzer => "analyzer",
            Role::Planner => "planner",
            Role::Coder => "coder",
            Role::Verifier => "verifier",
            Role::Router => "router",
            Role::Debugger => "debugger",
            Role::Summarizer => "summarizer",
            Role::Finalyzer => "finalyzer",
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Role {
    type Err = String;

    /// Parses a lowercase role name; the error lists the valid ones.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Role::ALL
            .into_iter()
            .find(|r| r.as_str() == s)
            .ok_or_else(|| {
                let names: Vec<_> = Role::ALL.iter().map(Role::as_str).collect();
                format!("unknown role {s:?}; expected one of {}", names.join(", "))
            })
    }
}

/// One chat message.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    /// "system", "user" or "assistant".
    pub role: String,
    /// The text.
    pub content: String,
}

impl Message {
    /// A system message.
    pub fn system(s: impl Into<String>) -> Self {
        Message {
            role: "system".into(),
            content: s.into(),
        }
    }

    /// A user message.
    pub fn user(s: impl Into<String>) -> Self {
        Message {
            role: "user".into(),
            content: s.into(),
        }
    }

    /// An assistant message (a previous answer put back in the conversation).
    pub fn assistant(s: impl Into<String>) -> Self {
        Message {
            role: "assistant".into(),
            content: s.into(),
        }
    }
}

/// Settings of one call that override the configured ones.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CallOptions {
    /// Sampling temperature for this call; `None`: the configured one.
    pub temperature: Option<f32>,
}

/// A try that failed and is made again, reported while the call goes on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Retry {
    /// The role of the call.
    pub role: Role,
    /// The retry about to be made, from 1.
    pub retry: u32,
    /// Retries allowed (`max_retries`).
    pub max_retries: u32,
    /// What failed, in a few words: "a 120 s timeout", "HTTP 503", "a failed connection".
    pub reason: String,
    /// The failure in full, as an error after the last retry would say it.
    pub error: String,
    /// The wait before the retry.
    pub wait: Duration,
}

/// A duration in seconds for people: "120 s", "1.5 s".
pub fn secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.0} s")
    } else {
        format!("{} s", (s * 10.0).round() / 10.0)
    }
}

/// Tokens of one call or of many, as servers report them in `usage`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Usage {
    /// Tokens of the request's messages.
    pub prompt_tokens: u64,
    /// Tokens of the answer.
    pub completion_tokens: u64,
    /// Prompt tokens the server took from its prefix cache, where it says
    /// (`usage.prompt_tokens_details.cached_tokens`, llama.cpp's `timings.cache_n`).
    #[serde(default)]
    pub cached_tokens: u64,
}

impl Usage {
    /// Adds `other` to `self`.
    pub fn add(&mut self, other: &Usage) {
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
        self.cached_tokens += other.cached_tokens;
    }
}

/// The answer to one [`LlmClient::chat`] call.
#[derive(Clone, Debug, Serialize)]
pub struct ChatReply {
    /// The assistant message's text.
    pub text: String,
    /// The model that answered as the server names it (often a dated version of the
    /// one asked for), or the model asked for when the answer names none.
    pub model: String,
    /// Tokens of the successful attempt (zero when the server reports none).
    pub usage: Usage,
    /// Cost in USD, when the price table knows the model.
    pub cost: Option<f64>,
    /// Wall time of the whole call, retries and the waits between them included: what
    /// the caller waited. A replayed reply carries the recorded latency.
    pub latency: Duration,
    /// Tries made: 1 + retries.
    pub attempts: u32,
    /// True when the reply came from a replayed cassette, not from a server.
    pub replayed: bool,
    /// Leading tokens of the prompt identical to the previous call's, by the client's
    /// token counter: an estimate of what a single-slot prefix cache (llama-cpp-python's)
    /// can reuse; such servers report no cache figures.
    pub prefix_reused_estimate: u64,
}

/// Running totals of a client's calls.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Totals {
    /// Calls that got a reply; a call counts once however many tries it took.
    pub calls: u64,
    /// Calls that failed (after their retries, if the failure was retryable).
    pub failed: u64,
    /// Retries made, over successful and failed calls.
    pub retries: u64,
    /// Tokens of the successful calls.
    pub usage: Usage,
    /// Cost in USD of the calls whose model the price table knows; `None` when it knew
    /// none of them.
    pub cost: Option<f64>,
    /// Successful calls whose model had no price (their cost is missing from `cost`).
    pub unpriced_calls: u64,
    /// Sum of [`ChatReply::prefix_reused_estimate`]: an estimate, not a server figure.
    pub prefix_reused_estimate: u64,
    /// The same per role, keyed by [`Role::as_str`].
    pub by_role: BTreeMap<String, RoleTotals>,
}

/// Totals of one role's successful calls.
#[derive(Clone, Debug, Default, Serialize)]
pub struct RoleTotals {
    /// Calls that got a reply.
    pub calls: u64,
    /// Their tokens.
    pub usage: Usage,
    /// Their cost in USD, as in [`Totals::cost`].
    pub cost: Option<f64>,
    /// As [`Totals::prefix_reused_estimate`].
    pub prefix_reused_estimate: u64,
}

impl Totals {
    /// Counts one successful call.
    fn add_reply(&mut self, role: Role, reply: &ChatReply) {
        self.calls += 1;
        self.retries += u64::from(reply.attempts.saturating_sub(1));
        self.usage.add(&reply.usage);
        self.prefix_reused_estimate += reply.prefix_reused_estimate;
        match reply.cost {
            Some(c) => *self.cost.get_or_insert(0.0) += c,
            None => self.unpriced_calls += 1,
        }
        let r = self.by_role.entry(role.as_str().to_string()).or_default();
        r.calls += 1;
        r.usage.add(&reply.usage);
        r.prefix_reused_estimate += reply.prefix_reused_estimate;
        if let Some(c) = reply.cost {
            *r.cost.get_or_insert(0.0) += c;
        }
    }

    /// Counts one failed call that made `attempts` tries.
    fn add_failure(&mut self, attempts: u32) {
        self.failed += 1;
        self.retries += u64::from(attempts.saturating_sub(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_round_trip_through_their_names() {
        for r in Role::ALL {
            assert_eq!(r.as_str().parse::<Role>(), Ok(r));
            assert_eq!(r.to_string(), r.as_str());
            let json = serde_json::to_string(&r).unwrap();
            assert_eq!(json, format!("\"{}\"", r.as_str()));
        }
        let err = "Coder".parse::<Role>().unwrap_err();
        assert!(err.contains("coder") && err.contains("finalyzer"), "{err}");
    }

    #[test]
    fn seconds_read_as_words() {
        assert_eq!(secs(Duration::from_secs(120)), "120 s");
        assert_eq!(secs(Duration::from_millis(1500)), "1.5 s");
        assert_eq!(secs(Duration::from_millis(250)), "0.3 s");
    }

    #[test]
    fn totals_count_calls_retries_tokens_and_cost_by_role() {
        let reply = |attempts, cost| ChatReply {
            text: "x".into(),
            model: "m".into(),
            usage: Usage {
                prompt_tokens: 10,
                completion_tokens: 2,
                cached_tokens: 4,
            },
            cost,
            latency: Duration::ZERO,
            attempts,
            replayed: false,
            prefix_reused_estimate: 3,
        };
        let mut t = Totals::default();
        t.add_reply(Role::Coder, &reply(3, Some(0.5)));
        t.add_reply(Role::Planner, &reply(1, None));
        t.add_failure(2);
        assert_eq!((t.calls, t.failed, t.retries), (2, 1, 3));
        assert_eq!(t.usage.prompt_tokens, 20);
        assert_eq!(t.cost, Some(0.5));
        assert_eq!(t.unpriced_calls, 1);
        assert_eq!(t.by_role["coder"].cost, Some(0.5));
        assert_eq!(t.by_role["planner"].cost, None);
        assert_eq!(t.by_role["planner"].usage.completion_tokens, 2);
        assert_eq!(t.usage.cached_tokens, 8);
        assert_eq!(t.by_role["coder"].usage.cached_tokens, 4);
        assert_eq!(t.prefix_reused_estimate, 6);
    }
}
