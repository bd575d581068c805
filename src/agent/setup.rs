//! Building an [`Agent`] from its settings: what `ask`, `bench`, the LLM analyzer and the
//! servers share, so that each says the same thing when no LLM is configured.

use super::llm::{Cassette, LlmClient, LlmConfig};
use super::prompts::Prompts;
use super::sandbox::{default_venv_dir, Limits, Python, Sandbox};
use super::{Agent, AgentError};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The settings an agent is built from.
#[derive(Debug, Clone)]
pub struct AgentSetup {
    /// Python interpreter for generated code (default: the venv of `lakestar setup
    /// python`, else python3).
    pub python: Option<PathBuf>,
    /// Directory of prompt overrides (default: the built-in prompts).
    pub prompts: Option<PathBuf>,
    /// Wall-clock limit of one script.
    pub timeout: Duration,
    /// Record or replay the LLM calls.
    pub cassette: Cassette,
}

impl Default for AgentSetup {
    fn default() -> Self {
        AgentSetup {
            python: None,
            prompts: None,
            timeout: Duration::from_secs(120),
            cassette: Cassette::Off,
        }
    }
}

impl AgentSetup {
    /// A new agent (with its own LLM client, so that its totals are its run's alone);
    /// `index_dir` is where a `lakestar.toml` may be. No configured model and no
    /// cassette to replay is [`AgentError::NoLlm`].
    pub fn build(&self, index_dir: Option<&Path>) -> Result<Agent, AgentError> {
        let config = LlmConfig::load(index_dir)?;
        let replaying = matches!(self.cassette, Cassette::Replay(_));
        if !replaying && !config.is_configured() {
            return Err(AgentError::NoLlm);
        }
        let llm = LlmClient::new(config, self.cassette.clone())?;
        let python = Python::resolve(self.python.as_deref(), &default_venv_dir())?;
        let limits = Limits {
            timeout: self.timeout.max(Duration::from_secs(1)),
            ..Limits::default()
        };
        let prompts = match &self.prompts {
            Some(dir) => Prompts::load(dir)?,
            None => Prompts::builtin(),
        };
        Ok(Agent {
            llm,
            sandbox: Sandbox::new(python, limits),
            prompts,
        })
    }
}

/// A warning when `python` lacks the data stack generated code expects (None when it
/// has it, or when that cannot be told).
pub fn missing_stack_warning(python: &Python) -> Option<String> {
    match python.missing_modules(&["pandas", "numpy"]) {
        Ok(missing) if !missing.is_empty() => Some(format!(
            "{} lacks {}; run `lakestar setup python` (or pass --python)",
            python.path.display(),
            missing.join(", ")
        )),
        _ => None,
    }
}
