//! Settings of the LLM client: `lakestar.toml`, then the environment.
//!
//! The file is the index directory's `lakestar.toml` when there is one, else
//! `$XDG_CONFIG_HOME/lakestar/lakestar.toml` (`~/.config/lakestar/lakestar.toml` when
//! `XDG_CONFIG_HOME` is unset); only the first found is read. Its `[llm]` table:
//!
//! ```toml
//! [llm]
//! base_url = "http://127.0.0.1:11434/v1"  # default https://api.openai.com/v1
//! api_key = "..."                         # sent as `Authorization: Bearer`; none if unset
//! model = "gpt-4o-mini"                   # the model of every role without its own
//! temperature = 0.2                       # omitted from requests when unset
//! seed = 7                                # sampling seed, for repeatable runs; unset: none
//! timeout_secs = 120                      # per try (LAKESTAR_LLM_TIMEOUT, --llm-timeout)
//! max_retries = 5                         # on 429, 408, 5xx, timeouts, failed connections
//! backoff_secs = 1                        # first wait; doubles per retry, at most 60 s
//! context_tokens = 8192                   # the model's context window (see below)
//! max_output_tokens = 1024                # reply reserve, sent as `max_tokens`
//! [llm.context_tokens_by_model]           # a context window per model
//! "qwen2.5-coder-1.5b" = 16384
//! [llm.models]                            # a model per role
//! coder = "qwen2.5-coder:14b"
//! [llm.prices."gpt-4o-mini"]              # USD per million tokens, for the cost
//! input_per_mtok = 0.15
//! output_per_mtok = 0.60
//! ```
//!
//! A file that holds a key and that other users can read is used, with a warning that
//! says to `chmod 600` it ([`secrets`](super::secrets)).
//!
//! Then the environment overrides the file: `OPENAI_API_KEY`, `OPENAI_BASE_URL`,
//! `LAKESTAR_MODEL` (the default model; `[llm.models]` still wins for its roles),
//! `LAKESTAR_CONTEXT_TOKENS` (the context window of every model) and
//! `LAKESTAR_LLM_TIMEOUT` (the time limit of one try, a duration such as `300s` or `5m`).
//! A caller's own setting (`--llm-timeout`) overrides the environment; [`Origin`] says
//! where the timeout in effect comes from.
//!
//! A model's context window is, in order: learned from a server's "exceeds the context"
//! answer, `[llm.context_tokens_by_model]`, `context_tokens`, what the server says
//! (`/props`, `/models`), else [`DEFAULT_CONTEXT_TOKENS`].
//! Unknown keys under `[llm]` are errors (a typo must not silently fall back to a
//! default); other top-level tables are left to the parts of lakestar that own them.

use serde::Deserialize;
use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::error::{LlmError, LlmUserError};
use super::{Price, Role};

/// The name of the configuration file, in the index directory or the XDG config dir.
pub const CONFIG_FILE: &str = "lakestar.toml";

/// The context window assumed when neither the configuration nor the server says it:
/// 8,192 tokens, the smallest window of the models people commonly serve locally
/// (llama.cpp's and Ollama's usual `n_ctx`, Qwen2.5 and Llama 3 at their defaults). A
/// larger model only loses room; a larger guess would make a small one refuse prompts.
pub const DEFAULT_CONTEXT_TOKENS: usize = 8192;

/// The reply reserve by default: enough for the longest script a role writes, short
/// enough that a rambling small model cannot use up its window.
pub const DEFAULT_MAX_OUTPUT_TOKENS: usize = 1024;

/// The environment variable of the time limit of one try.
pub const TIMEOUT_VAR: &str = "LAKESTAR_LLM_TIMEOUT";

/// Where a setting's value comes from, weakest first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// Nothing set it.
    #[default]
    Default,
    /// `lakestar.toml` ([`LlmConfig::file`]).
    File,
    /// The environment.
    Env,
    /// The command line, or the caller's own setting.
    Flag,
}

/// OpenAI's API, the default base URL.
const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// Settings of an [`LlmClient`](super::LlmClient).
#[derive(Clone)]
pub struct LlmConfig {
    /// The API root; requests go to `{base_url}/chat/completions`.
    pub base_url: String,
    /// Sent as `Authorization: Bearer KEY` when set.
    pub api_key: Option<String>,
    /// The model of every role without one in `role_models`.
    pub model: Option<String>,
    /// A model per role.
    pub role_models: HashMap<Role, String>,
    /// Sampling temperature; the server's default when `None`.
    pub temperature: Option<f32>,
    /// Sampling seed sent with every request (servers that honour it, as llama.cpp's
    /// and OpenAI's, then repeat a reply to the same prompt): ablations compare runs
    /// that differ only by what is switched.
    pub seed: Option<u64>,
    /// Time limit of one try, from connecting to the end of the answer.
    pub timeout: Duration,
    /// Where `timeout` comes from.
    pub timeout_origin: Origin,
    /// Retries after the first try on 429, 408, 5xx, timeouts and failed connections.
    pub max_retries: u32,
    /// Wait before the first retry; doubled per retry, capped at 60 s, with jitter.
    pub backoff_base: Duration,
    /// Model name → price, for the cost of calls.
    pub prices: HashMap<String, Price>,
    /// The context window of every model without its own, when configured.
    pub context_tokens: Option<usize>,
    /// A context window per model name.
    pub context_tokens_by_model: HashMap<String, usize>,
    /// Tokens kept for the reply; sent as `max_tokens`.
    pub max_output_tokens: usize,
    /// The file the settings were read from, if any.
    pub file: Option<PathBuf>,
}

impl Default for LlmConfig {
    /// OpenAI's endpoint, no key, no model, 120 s per try, 5 retries from 1 s.
    fn default() -> Self {
        LlmConfig {
            base_url: DEFAULT_BASE_URL.into(),
            api_key: None,
            model: None,
            role_models: HashMap::new(),
            temperature: None,
            seed: None,
            timeout: Duration::from_secs(120),
            timeout_origin: Origin::Default,
            max_retries: 5,
            backoff_base: Duration::from_secs(1),
            prices: HashMap::new(),
            context_tokens: None,
            context_tokens_by_model: HashMap::new(),
            max_output_tokens: DEFAULT_MAX_OUTPUT_TOKENS,
            file: None,
        }
    }
}

impl fmt::Debug for LlmConfig {
    /// Like a derived `Debug`, but never shows the API key.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LlmConfig")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<set>"))
            .field("model", &self.model)
            .field("role_models", &self.role_models)
            .field("temperature", &self.temperature)
            .field("seed", &self.seed)
            .field("timeout", &self.timeout)
            .field("timeout_origin", &self.timeout_origin)
            .field("max_retries", &self.max_retries)
            .field("backoff_base", &self.backoff_base)
            .field("prices", &self.prices)
            .field("context_tokens", &self.context_tokens)
            .field("context_tokens_by_model", &self.context_tokens_by_model)
            .field("max_output_tokens", &self.max_output_tokens)
            .field("file", &self.file)
            .finish()
    }
}

/// The top level of `lakestar.toml`: only `[llm]` is read here.
#[derive(Deserialize)]
struct FileDoc {
    llm: Option<FileLlm>,
}

/// The `[llm]` table.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileLlm {
    base_url: Option<String>,
    api_key: Option<String>,
    model: Option<String>,
    temperature: Option<f32>,
    seed: Option<u64>,
    timeout_secs: Option<f64>,
    max_retries: Option<u32>,
    backoff_secs: Option<f64>,
    #[serde(default)]
    models: HashMap<String, String>,
    #[serde(default)]
    prices: HashMap<String, Price>,
    context_tokens: Option<i64>,
    max_output_tokens: Option<i64>,
    #[serde(default)]
    context_tokens_by_model: HashMap<String, i64>,
}

impl LlmConfig {
    /// Settings from `lakestar.toml` (in `index_dir` if given and present, else in the
    /// XDG config dir), then the process environment (`OPENAI_API_KEY`,
    /// `OPENAI_BASE_URL`, `LAKESTAR_MODEL`, `LAKESTAR_CONTEXT_TOKENS`,
    /// `LAKESTAR_LLM_TIMEOUT`), which wins. Unknown keys and bad values are
    /// user errors naming the file (or variable) and the key.
    pub fn load(index_dir: Option<&Path>) -> Result<Self, LlmError> {
        Self::load_with_env(index_dir, |k| std::env::var(k).ok())
    }

    /// [`load`](Self::load) with the environment given as a lookup function (tests,
    /// and callers that hold their own environment).
    pub fn load_with_env(
        index_dir: Option<&Path>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, LlmError> {
        let var = |k: &str| env(k).filter(|v| !v.is_empty());
        let mut config = LlmConfig::default();
        for file in candidate_files(index_dir, &var) {
            match std::fs::read_to_string(&file) {
                Ok(text) => {
                    config = Self::from_toml(&text, &file)?;
                    super::secrets::warn_if_exposed(&file, &text);
                    break;
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => {
                    return Err(LlmUserError::Config {
                        detail: format!("cannot read it: {e}"),
                        file,
                    }
                    .into())
                }
            }
        }
        if let Some(key) = var("OPENAI_API_KEY") {
            config.api_key = Some(key);
        }
        if let Some(url) = var("OPENAI_BASE_URL") {
            config.base_url = check_url(&url).map_err(|detail| LlmUserError::Env {
                var: "OPENAI_BASE_URL",
                detail,
            })?;
        }
        if let Some(model) = var("LAKESTAR_MODEL") {
            config.model = Some(model);
        }
        if let Some(n) = var("LAKESTAR_CONTEXT_TOKENS") {
            let n = n.trim().parse::<i64>().map_err(|e| e.to_string());
            config.context_tokens =
                Some(
                    n.and_then(window_size)
                        .map_err(|detail| LlmUserError::Env {
                            var: "LAKESTAR_CONTEXT_TOKENS",
                            detail,
                        })?,
                );
        }
        if let Some(t) = var(TIMEOUT_VAR) {
            config.timeout = parse_timeout(&t).map_err(|detail| LlmUserError::Env {
                var: TIMEOUT_VAR,
                detail,
            })?;
            config.timeout_origin = Origin::Env;
        }
        if config.context_for_config_check() <= config.max_output_tokens {
            return Err(LlmUserError::Config {
                file: config.file.clone().unwrap_or_else(|| PathBuf::from(CONFIG_FILE)),
                detail: format!(
                    "llm.max_output_tokens ({}) leaves no room for a prompt in a context of {} tokens; lower it or raise context_tokens",
                    config.max_output_tokens,
                    config.context_for_config_check()
                ),
            }
            .into());
        }
        Ok(config)
    }

    /// Settings from the text of a `lakestar.toml` (`file` names it in errors), over the
    /// defaults; the environment is not read.
    pub fn from_toml(text: &str, file: &Path) -> Result<Self, LlmError> {
        let bad = |detail: String| LlmUserError::Config {
            file: file.to_path_buf(),
            detail,
        };
        let doc: FileDoc = toml::from_str(text).map_err(|e| bad(e.to_string()))?;
        let mut c = LlmConfig {
            file: Some(file.to_path_buf()),
            ..LlmConfig::default()
        };
        let Some(llm) = doc.llm else {
            return Ok(c);
        };
        if let Some(url) = llm.base_url {
            c.base_url = check_url(&url).map_err(|d| bad(format!("llm.base_url: {d}")))?;
        }
        c.api_key = llm.api_key.filter(|k| !k.is_empty());
        if let Some(model) = llm.model {
            c.model = Some(check_model(model).map_err(|d| bad(format!("llm.model: {d}")))?);
        }
        if let Some(t) = llm.temperature {
            if !(t.is_finite() && (0.0..=2.0).contains(&t)) {
                return Err(
                    bad(format!("llm.temperature must be between 0 and 2, not {t}")).into(),
                );
            }
            c.temperature = Some(t);
        }
        c.seed = llm.seed;
        if let Some(s) = llm.timeout_secs {
            c.timeout = positive_secs(s).map_err(|d| bad(format!("llm.timeout_secs {d}")))?;
            c.timeout_origin = Origin::File;
        }
        if let Some(s) = llm.backoff_secs {
            c.backoff_base = positive_secs(s).map_err(|d| bad(format!("llm.backoff_secs {d}")))?;
        }
        if let Some(n) = llm.max_retries {
            c.max_retries = n;
        }
        for (key, model) in llm.models {
            let role: Role = key
                .parse()
                .map_err(|e| bad(format!("llm.models.{key}: {e}")))?;
            let model = check_model(model).map_err(|d| bad(format!("llm.models.{key}: {d}")))?;
            c.role_models.insert(role, model);
        }
        if let Some(n) = llm.context_tokens {
            c.context_tokens =
                Some(window_size(n).map_err(|d| bad(format!("llm.context_tokens {d}")))?);
        }
        if let Some(n) = llm.max_output_tokens {
            c.max_output_tokens = usize::try_from(n)
                .ok()
                .filter(|&n| n > 0)
                .ok_or_else(|| bad(format!("llm.max_output_tokens must be positive, not {n}")))?;
        }
        for (model, n) in llm.context_tokens_by_model {
            let n = window_size(n)
                .map_err(|d| bad(format!("llm.context_tokens_by_model.\"{model}\" {d}")))?;
            c.context_tokens_by_model.insert(model, n);
        }
        for (model, price) in llm.prices {
            price
                .check()
                .map_err(|d| bad(format!("llm.prices.\"{model}\": {d}")))?;
            c.prices.insert(model, price);
        }
        Ok(c)
    }

    /// The model for `role`: its own in `role_models`, else the default one.
    pub fn model_for(&self, role: Role) -> Option<&str> {
        self.role_models
            .get(&role)
            .or(self.model.as_ref())
            .map(String::as_str)
    }

    /// The configured context window of `model`: its own, else the one of all models.
    pub fn context_for(&self, model: Option<&str>) -> Option<usize> {
        model
            .and_then(|m| self.context_tokens_by_model.get(m).copied())
            .or(self.context_tokens)
    }

    /// The smallest window configured or assumed, to check the reply reserve against.
    fn context_for_config_check(&self) -> usize {
        self.context_tokens_by_model
            .values()
            .copied()
            .chain(self.context_tokens)
            .min()
            .unwrap_or(DEFAULT_CONTEXT_TOKENS)
    }

    /// Where the timeout in effect comes from, in words: "from LAKESTAR_LLM_TIMEOUT",
    /// "from /path/lakestar.toml", "the default".
    pub fn timeout_source(&self) -> String {
        match (self.timeout_origin, &self.file) {
            (Origin::Flag, _) => "from --llm-timeout".into(),
            (Origin::Env, _) => format!("from {TIMEOUT_VAR}"),
            (Origin::File, Some(f)) => format!("from {}", f.display()),
            _ => "the default".into(),
        }
    }

    /// True when every role has a model (the agent refuses to start otherwise).
    pub fn is_configured(&self) -> bool {
        Role::ALL.iter().all(|&r| self.model_for(r).is_some())
    }

    /// `{base_url}/chat/completions`.
    pub(crate) fn chat_url(&self) -> String {
        format!("{}/chat/completions", self.base_url.trim_end_matches('/'))
    }
}

/// The files to try, in order: the index directory's, then the XDG config dir's.
fn candidate_files(
    index_dir: Option<&Path>,
    var: &impl Fn(&str) -> Option<String>,
) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = index_dir.map(|d| d.join(CONFIG_FILE)).into_iter().collect();
    // The XDG rule written out: two variables do not justify a crate.
    let config_home = var("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| var("HOME").map(|h| Path::new(&h).join(".config")));
    if let Some(dir) = config_home {
        files.push(dir.join("lakestar").join(CONFIG_FILE));
    }
    files
}

/// The URL without trailing slashes, if it is an http(s) URL.
fn check_url(url: &str) -> Result<String, String> {
    let parsed = reqwest::Url::parse(url).map_err(|e| format!("{url:?} is not a URL ({e})"))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(format!("{url:?} must start with http:// or https://"));
    }
    Ok(url.trim_end_matches('/').to_string())
}

/// A context window in tokens: at least [`MIN_CONTEXT_TOKENS`].
fn window_size(n: i64) -> Result<usize, String> {
    usize::try_from(n)
        .ok()
        .filter(|&n| n >= MIN_CONTEXT_TOKENS)
        .ok_or_else(|| {
            format!("must be a number of tokens of at least {MIN_CONTEXT_TOKENS}, not {n}")
        })
}

/// No model worth running has a smaller window; a smaller value is a typo.
const MIN_CONTEXT_TOKENS: usize = 512;

fn check_model(model: String) -> Result<String, String> {
    if model.trim().is_empty() {
        Err("the model name is empty".into())
    } else {
        Ok(model)
    }
}

/// A time limit given as a duration (`300s`, `5m`, `1m 30s`): the value of
/// `LAKESTAR_LLM_TIMEOUT` and `--llm-timeout`.
pub fn parse_timeout(s: &str) -> Result<Duration, String> {
    humantime::parse_duration(s.trim())
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| format!("{s:?} is not a positive duration; write it as 300s, 5m or 1m30s"))
}

fn positive_secs(s: f64) -> Result<Duration, String> {
    Duration::try_from_secs_f64(s)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| format!("must be a positive number of seconds, not {s}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<LlmConfig, String> {
        LlmConfig::from_toml(text, Path::new("/x/lakestar.toml")).map_err(|e| e.to_string())
    }

    #[test]
    fn full_file_is_read() {
        let c = parse(
            r#"
            [llm]
            base_url = "http://127.0.0.1:11434/v1/"
            api_key = "k"
            model = "gpt-4o-mini"
            temperature = 0.2
            seed = 7
            timeout_secs = 1.5
            max_retries = 2
            backoff_secs = 0.01
            context_tokens = 32768
            max_output_tokens = 2048
            [llm.models]
            coder = "qwen2.5-coder:14b"
            [llm.context_tokens_by_model]
            "qwen2.5-coder:14b" = 16384
            [llm.prices."gpt-4o-mini"]
            input_per_mtok = 0.15
            output_per_mtok = 0.6
            [agent]
            anything = "belongs to another part"
            "#,
        )
        .unwrap();
        assert_eq!(c.base_url, "http://127.0.0.1:11434/v1");
        assert_eq!(c.chat_url(), "http://127.0.0.1:11434/v1/chat/completions");
        assert_eq!(c.api_key.as_deref(), Some("k"));
        assert_eq!(c.temperature, Some(0.2));
        assert_eq!(c.seed, Some(7));
        assert_eq!(c.timeout, Duration::from_millis(1500));
        assert_eq!(c.timeout_origin, Origin::File);
        assert_eq!(c.timeout_source(), "from /x/lakestar.toml");
        assert_eq!(c.backoff_base, Duration::from_millis(10));
        assert_eq!(c.max_retries, 2);
        assert_eq!(c.model_for(Role::Coder), Some("qwen2.5-coder:14b"));
        assert_eq!(c.model_for(Role::Planner), Some("gpt-4o-mini"));
        assert_eq!(c.prices["gpt-4o-mini"].output_per_mtok, 0.6);
        assert!(c.is_configured());
        assert_eq!(c.context_for(Some("qwen2.5-coder:14b")), Some(16384));
        assert_eq!(c.context_for(Some("gpt-4o-mini")), Some(32768));
        assert_eq!(c.max_output_tokens, 2048);
    }

    #[test]
    fn empty_file_gives_defaults_and_no_model() {
        let c = parse("").unwrap();
        assert_eq!(c.base_url, DEFAULT_BASE_URL);
        assert_eq!(c.timeout, Duration::from_secs(120));
        assert_eq!(c.timeout_source(), "the default");
        assert_eq!(c.max_retries, 5);
        assert!(!c.is_configured());
        assert_eq!(c.model_for(Role::Coder), None);
    }

    #[test]
    fn bad_keys_and_values_name_the_file_and_key() {
        let cases = [
            ("[llm]\ntmperature = 0.2", "tmperature"),
            ("[llm]\ntemperature = 7.0", "llm.temperature"),
            ("[llm]\ntimeout_secs = -1", "llm.timeout_secs"),
            ("[llm]\ntimeout_secs = 0", "llm.timeout_secs"),
            ("[llm]\nmax_retries = -1", "max_retries"),
            ("[llm]\nbase_url = \"ftp://x\"", "llm.base_url"),
            ("[llm]\nbase_url = \"not a url\"", "llm.base_url"),
            ("[llm]\nmodel = \"\"", "llm.model"),
            ("[llm.models]\ncodr = \"m\"", "llm.models.codr"),
            (
                "[llm.prices.m]\ninput_per_mtok = -1\noutput_per_mtok = 1",
                "llm.prices.\"m\"",
            ),
            ("[llm.prices.m]\ninput_per_mtok = 1", "output_per_mtok"),
            ("[llm\n", "TOML"),
            ("[llm]\ncontext_tokens = 100", "llm.context_tokens"),
            ("[llm]\nmax_output_tokens = 0", "llm.max_output_tokens"),
            (
                "[llm.context_tokens_by_model]\nm = -5",
                "llm.context_tokens_by_model.\"m\"",
            ),
        ];
        for (text, key) in cases {
            let err = parse(text).unwrap_err();
            assert!(err.contains("/x/lakestar.toml"), "{text}: {err}");
            assert!(err.contains(key), "{text}: {err} should name {key}");
        }
    }

    #[test]
    fn environment_overrides_and_bad_env_url_is_named() {
        let env = |k: &str| match k {
            "OPENAI_BASE_URL" => Some("http://localhost:8000/v1".to_string()),
            "LAKESTAR_MODEL" => Some("m".to_string()),
            "OPENAI_API_KEY" => Some(String::new()), // empty: unset
            "HOME" => Some("/nonexistent-home".to_string()),
            _ => None,
        };
        let c = LlmConfig::load_with_env(None, env).unwrap();
        assert_eq!(c.base_url, "http://localhost:8000/v1");
        assert_eq!(c.model.as_deref(), Some("m"));
        assert_eq!(c.api_key, None);
        assert_eq!(c.file, None);

        let err = LlmConfig::load_with_env(None, |k| {
            (k == "OPENAI_BASE_URL").then(|| "localhost:8000".to_string())
        })
        .unwrap_err();
        assert!(err.is_user_error());
        assert!(err.to_string().contains("OPENAI_BASE_URL"), "{err}");

        let ctx = |v: &str| {
            let v = v.to_string();
            LlmConfig::load_with_env(None, move |k| {
                (k == "LAKESTAR_CONTEXT_TOKENS").then(|| v.clone())
            })
        };
        assert_eq!(ctx("4096").unwrap().context_for(None), Some(4096));
        let err = ctx("lots").unwrap_err().to_string();
        assert!(err.contains("LAKESTAR_CONTEXT_TOKENS"), "{err}");
        let err = ctx("1024").unwrap_err().to_string();
        assert!(err.contains("max_output_tokens"), "{err}");
    }

    #[test]
    fn the_timeout_variable_overrides_the_file_and_bad_values_are_named() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(CONFIG_FILE), "[llm]\ntimeout_secs = 30\n").unwrap();
        let with = |v: Option<&str>| {
            let v = v.map(str::to_string);
            LlmConfig::load_with_env(Some(dir.path()), move |k| {
                (k == TIMEOUT_VAR).then(|| v.clone()).flatten()
            })
        };
        let c = with(None).unwrap();
        assert_eq!(
            (c.timeout, c.timeout_origin),
            (Duration::from_secs(30), Origin::File)
        );
        let c = with(Some("5m")).unwrap();
        assert_eq!(
            (c.timeout, c.timeout_origin),
            (Duration::from_secs(300), Origin::Env)
        );
        assert_eq!(c.timeout_source(), "from LAKESTAR_LLM_TIMEOUT");
        for bad in ["300", "0s", "soon"] {
            let err = with(Some(bad)).unwrap_err().to_string();
            assert!(
                err.contains(TIMEOUT_VAR) && err.contains("300s"),
                "{bad}: {err}"
            );
        }
        assert_eq!(parse_timeout("1m 30s"), Ok(Duration::from_secs(90)));
    }

    #[test]
    fn config_files_are_the_index_then_xdg_then_home() {
        let env = |k: &str| match k {
            "XDG_CONFIG_HOME" => Some("relative/ignored".to_string()),
            "HOME" => Some("/home/u".to_string()),
            _ => None,
        };
        assert_eq!(
            candidate_files(Some(Path::new("/lake/.lakestar")), &env),
            [
                PathBuf::from("/lake/.lakestar/lakestar.toml"),
                PathBuf::from("/home/u/.config/lakestar/lakestar.toml")
            ]
        );
        let xdg = |k: &str| (k == "XDG_CONFIG_HOME").then(|| "/cfg".to_string());
        assert_eq!(
            candidate_files(None, &xdg),
            [PathBuf::from("/cfg/lakestar/lakestar.toml")]
        );
    }

    #[test]
    fn debug_never_shows_the_key() {
        let c = LlmConfig {
            api_key: Some("sk-secret".into()),
            ..LlmConfig::default()
        };
        let shown = format!("{c:?}");
        assert!(
            !shown.contains("sk-secret") && shown.contains("<set>"),
            "{shown}"
        );
    }
}
