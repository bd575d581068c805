//! Errors of the LLM client, split as in the indexer: what the person running lakestar
//! can fix (configuration, key, model name, cassette) and what went wrong on the way
//! (a server that kept failing, an answer that cannot be read, I/O).
//!
//! No message ever holds the API key: server messages are scrubbed of it before they
//! are kept (see `wire::scrub`).

use std::path::PathBuf;

use super::Role;

/// Any error of the LLM client.
#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    /// Something the user can fix; the message says how.
    #[error(transparent)]
    User(#[from] LlmUserError),
    /// A fault of the server, the network or the machine.
    #[error(transparent)]
    Internal(#[from] LlmInternalError),
}

impl LlmError {
    /// True when the user can fix it (exit code 2 at the CLI rather than 1).
    pub fn is_user_error(&self) -> bool {
        matches!(self, LlmError::User(_))
    }

    /// When the server refused a prompt as too large: the window it stated, if any.
    pub fn context_exceeded(&self) -> Option<Option<usize>> {
        match self {
            LlmError::User(LlmUserError::ContextExceeded { context, .. }) => Some(*context),
            _ => None,
        }
    }
}

/// Errors the person running lakestar can fix.
#[derive(Debug, thiserror::Error)]
pub enum LlmUserError {
    /// No model is set for a role.
    #[error("no LLM model is configured for the {role} role; set `model` under [llm] (or `{role}` under [llm.models]) in lakestar.toml in the index directory or in $XDG_CONFIG_HOME/lakestar/, or set LAKESTAR_MODEL")]
    NoModel {
        /// The role asked for.
        role: Role,
    },
    /// A configuration file cannot be read, parsed, or holds a bad value.
    #[error("bad LLM configuration in {}: {detail}; see \"Configuring the LLM\" in the README", file.display())]
    Config {
        /// The file.
        file: PathBuf,
        /// What is wrong, naming the key.
        detail: String,
    },
    /// An environment variable holds a bad value.
    #[error("bad value in the environment variable {var}: {detail}")]
    Env {
        /// The variable.
        var: &'static str,
        /// What is wrong.
        detail: String,
    },
    /// The server refused the request for a reason retrying cannot fix (400, 401, 403,
    /// 404, 422…).
    #[error(
        "the LLM server at {url} answered HTTP {status} for the {role} role: {message}; {hint}"
    )]
    Refused {
        /// The URL posted to.
        url: String,
        /// The role of the request.
        role: Role,
        /// The HTTP status.
        status: u16,
        /// The server's error message, shortened.
        message: String,
        /// What to check.
        hint: &'static str,
    },
    /// The server refused the prompt as larger than the model's context window.
    #[error("the LLM server at {url} refused the {role} prompt as larger than the model's context{}: {message}; set context_tokens under [llm] (or the model under [llm.context_tokens_by_model]) in lakestar.toml, or LAKESTAR_CONTEXT_TOKENS, to the model's window", context.map(|n| format!(" ({n} tokens)")).unwrap_or_default())]
    ContextExceeded {
        /// The URL posted to.
        url: String,
        /// The role of the request.
        role: Role,
        /// The window, when the server stated it (then learned by the client).
        context: Option<usize>,
        /// The server's error message, shortened.
        message: String,
    },
    /// The server cannot be reached at all (bad URL, unknown host).
    #[error("cannot send a request to {url}: {detail}; check the base URL (base_url in lakestar.toml or OPENAI_BASE_URL)")]
    BadUrl {
        /// The URL.
        url: String,
        /// Why.
        detail: String,
    },
    /// The cassette file cannot be opened or created.
    #[error("cannot open the cassette {}: {source}; check the --record/--replay path", path.display())]
    CassetteOpen {
        /// The cassette.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A line of the replayed cassette is not a recorded call.
    #[error("the cassette {} is malformed at line {line}: {detail}; record it again with --record", path.display())]
    CassetteMalformed {
        /// The cassette.
        path: PathBuf,
        /// The line, from 1.
        line: usize,
        /// What is wrong.
        detail: String,
    },
    /// The run asked for a call the replayed cassette does not hold.
    #[error("the run diverged from the cassette {} at a {role} request: {detail}; replay only reruns the recorded run (record again with --record after changing prompts, data or code)", path.display())]
    ReplayDiverged {
        /// The cassette.
        path: PathBuf,
        /// The role of the request without a match.
        role: Role,
        /// The nearest recorded request and where it differs.
        detail: String,
    },
}

/// Faults of the server, the network or the machine.
#[derive(Debug, thiserror::Error)]
pub enum LlmInternalError {
    /// A retryable failure (429, 5xx, timeout, dropped connection) that lasted through
    /// every retry.
    #[error("the LLM server at {url} kept failing for the {role} role: {last} (gave up after {attempts} attempts); {hint}")]
    GaveUp {
        /// The URL posted to.
        url: String,
        /// The role of the request.
        role: Role,
        /// Tries made.
        attempts: u32,
        /// The HTTP status of the last try, if it got one.
        status: Option<u16>,
        /// The last failure, in words.
        last: String,
        /// What to do.
        hint: &'static str,
    },
    /// A 2xx answer that is not a chat completion lakestar can read.
    #[error("the LLM server at {url} sent an answer lakestar cannot read: {detail}; check that it speaks OpenAI's Chat Completions API")]
    BadResponse {
        /// The URL posted to.
        url: String,
        /// What is wrong, with an excerpt of the body.
        detail: String,
    },
    /// Writing the recorded cassette failed.
    #[error("cannot write the cassette {}: {source}", path.display())]
    CassetteWrite {
        /// The cassette.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The HTTP client could not be built (TLS setup).
    #[error("cannot set up the HTTP client: {0}")]
    Client(String),
}
