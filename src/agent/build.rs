//! Building an [`Agent`] from the LLM configuration found for an index and the
//! settings of the caller: what `ask`, `bench`, the LLM analyzer and the servers share.

use super::llm::{Cassette, LlmClient, LlmConfig, Origin};
use super::prompts::Prompts;
use super::sandbox::{default_venv_dir, Limits, Policy, Python, Sandbox};
use super::{Agent, AgentError};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The message of [`AgentError::NotConfigured`]: every setting that names a model.
pub const NOT_CONFIGURED: &str = "no LLM is configured: set LAKESTAR_MODEL (and OPENAI_BASE_URL, OPENAI_API_KEY as your server needs), or `model` under [llm] in lakestar.toml (in the index directory or ~/.config/lakestar/); or answer from a cassette with --replay FILE";

/// What an agent is built from, beside the LLM configuration.
#[derive(Debug, Clone)]
pub struct AgentSetup {
    /// Python for generated code [default: the venv of `lakestar setup python`, else
    /// python3].
    pub python: Option<PathBuf>,
    /// Directory of prompt overrides.
    pub prompts: Option<PathBuf>,
    /// Wall-clock limit of one script.
    pub timeout: Duration,
    /// Time limit of one try of an LLM call, over the configured one.
    pub llm_timeout: Option<Duration>,
    /// Record or replay the LLM calls.
    pub cassette: Cassette,
    /// The jail, or the explicit unsafe opt-out [default: from
    /// `LAKESTAR_UNSAFE_NO_ISOLATION`].
    pub policy: Policy,
}

impl Default for AgentSetup {
    fn default() -> Self {
        AgentSetup {
            python: None,
            prompts: None,
            timeout: Limits::default().timeout,
            llm_timeout: None,
            cassette: Cassette::Off,
            policy: Policy::from_env(),
        }
    }
}

impl Agent {
    /// An agent per `setup`; `index_dir` is where a `lakestar.toml` may be. Without a
    /// configured model (and no cassette to replay) this is
    /// [`AgentError::NotConfigured`].
    pub fn build(index_dir: Option<&Path>, setup: &AgentSetup) -> Result<Agent, AgentError> {
        let mut config = LlmConfig::load(index_dir)?;
        if let Some(t) = setup.llm_timeout {
            config.timeout = t;
            config.timeout_origin = Origin::Flag;
        }
        let replaying = matches!(setup.cassette, Cassette::Replay(_));
        if !replaying && !config.is_configured() {
            return Err(AgentError::NotConfigured(NOT_CONFIGURED.into()));
        }
        let llm = LlmClient::new(config, setup.cassette.clone())?;
        let python = Python::resolve(setup.python.as_deref(), &default_venv_dir())?;
        let limits = Limits {
            timeout: setup.timeout.max(Duration::from_secs(1)),
            ..Limits::default()
        };
        let prompts = match &setup.prompts {
            Some(dir) => Prompts::load(dir)?,
            None => Prompts::builtin(),
        };
        Ok(Agent {
            llm,
            sandbox: Sandbox::new(python, limits).with_policy(setup.policy),
            prompts,
        })
    }

    /// A warning to show when the agent's Python lacks the data stack the prompts
    /// assume (the run still starts: a script may not need it).
    pub fn python_warning(&self) -> Option<String> {
        let python = self.sandbox.python();
        match python.missing_modules(&["pandas", "numpy"]) {
            Ok(missing) if !missing.is_empty() => Some(format!(
                "{} lacks {}; run `lakestar setup python` (or pass --python)",
                python.path.display(),
                missing.join(", ")
            )),
            _ => None,
        }
    }
}
