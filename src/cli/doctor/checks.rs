//! The checks of `lakestar doctor`, one function per piece.

use super::Check;
use crate::agent::build::NOT_CONFIGURED;
use crate::agent::llm::{secs, Cassette, LlmClient, LlmConfig, Message, Role};
use crate::agent::sandbox::{
    default_venv_dir, Isolation, Limits, Policy, Python, PythonOrigin, Sandbox, DEFAULT_MODULES,
};
use lakestar_index::catalog::MetaKey;
use lakestar_index::search::embedder::{new_index_default, DefaultChoice, EmbedderSpec};
use lakestar_index::{locate, CatalogReader};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long the LLM endpoint may take to answer one token.
const LLM_TIMEOUT: Duration = Duration::from_secs(15);
/// How long the sandbox's trivial script may take (a jail and a Python start).
const SCRIPT_TIMEOUT: Duration = Duration::from_secs(60);

/// The index `search`, `ask` and `serve` would use, and its directory when found.
pub(super) fn index(explicit: Option<&Path>, cwd: &Path) -> (Check, Option<PathBuf>) {
    let dir = match locate::find_index(explicit, cwd) {
        Ok(d) => d,
        Err(e) if matches!(&e, lakestar_index::Error::User(lakestar_index::UserError::NoIndex { .. })) => {
            return (
                Check::warn(
                    "index",
                    format!("none found: {e}"),
                    "run `lakestar index LAKE` (it writes LAKE/.lakestar), then run commands inside the lake or pass --index DIR",
                ),
                None,
            )
        }
        Err(e) => return (Check::fail("index", e.to_string(), "see the message"), None),
    };
    let status = match crate::service::status::status(&dir) {
        Ok(s) => s,
        Err(e) => {
            let fix = if e.is_user_error() {
                "see the message"
            } else {
                "the index is damaged: `lakestar index LAKE --rebuild` makes it anew"
            };
            return (Check::fail("index", e.to_string(), fix), Some(dir));
        }
    };
    let version = CatalogReader::open(&dir)
        .ok()
        .and_then(|c| c.meta(MetaKey::FormatVersion).ok().flatten())
        .unwrap_or_else(|| "?".into());
    let detail = format!(
        "{} (format version {version}) for lake {}: {} file{}, {}",
        dir.display(),
        status.lake_root.display(),
        status.files,
        if status.files == 1 { "" } else { "s" },
        match &status.last_index_at {
            Some(at) => format!("last run finished {at}"),
            None => "no finished run".into(),
        }
    );
    let check = if status.last_index_at.is_none() {
        Check::warn("index", detail, "run `lakestar index LAKE` to finish it")
    } else if !lakestar_index::store::is_url(&status.lake_root.to_string_lossy())
        && !status.lake_root.is_dir()
    {
        Check::fail(
            "index",
            format!("{detail}; the lake directory is gone"),
            "index the lake where it is now: `lakestar index LAKE --rebuild`",
        )
    } else {
        Check::ok("index", detail)
    };
    (check, Some(dir))
}

/// The embedder searches use (the one the index records) against the one a new index
/// would get from the installed models, and whether it loads.
pub(super) fn embedder(dir: Option<&Path>) -> Check {
    let models = lakestar_index::models::models_dir().ok();
    let (fresh, why) = new_index_default(models.as_deref());
    let fresh_name = match &why {
        DefaultChoice::Installed(name) => format!("{name} (installed)"),
        _ if cfg!(feature = "neural") => {
            "hash (built in; `lakestar model install minilm` for meaning)".into()
        }
        _ => "hash (built in)".into(),
    };
    let catalog = dir.and_then(|d| CatalogReader::open(d).ok());
    let recorded = catalog
        .as_ref()
        .and_then(|c| c.meta(MetaKey::EmbedderSpec).ok().flatten());
    let recorded_id = catalog
        .as_ref()
        .and_then(|c| c.meta(MetaKey::Embedder).ok().flatten());
    let Some(recorded) = recorded else {
        return match fresh.build() {
            Ok(_) => Check::ok(
                "embedder",
                format!("no index records one; a new index would use {fresh_name}, which loads"),
            ),
            Err(e) => Check::fail(
                "embedder",
                format!("a new index would use {fresh_name}, which does not load: {e}"),
                "reinstall it with `lakestar model install NAME`, or index with --embedder hash",
            ),
        };
    };
    let spec = match EmbedderSpec::parse_recorded(&recorded, recorded_id.as_deref()) {
        Ok(s) => s,
        Err(e) => {
            return Check::fail(
                "embedder",
                format!("the index records {recorded:?}, which does not parse: {e}"),
                "re-index with `lakestar index LAKE --rebuild --embedder NAME`",
            )
        }
    };
    let start = Instant::now();
    if let Err(e) = spec.build() {
        return Check::fail(
            "embedder",
            format!("the index was embedded with {recorded}, which does not load here: {e}"),
            "install that model again (`lakestar model install NAME`), or re-index with `lakestar index LAKE --rebuild`",
        );
    }
    let detail = format!(
        "the index was embedded with {recorded} (loads in {} ms)",
        start.elapsed().as_millis()
    );
    if spec.to_spec_string() != fresh.to_spec_string() && !matches!(why, DefaultChoice::Builtin) {
        return Check::warn(
            "embedder",
            format!("{detail}; a new index would use {fresh_name}"),
            format!(
                "searches keep the index's embedder; `lakestar index LAKE --rebuild` re-embeds with {}",
                fresh.to_spec_string()
            ),
        );
    }
    Check::ok("embedder", detail)
}

/// Where the base URL came from, in words.
fn url_source(config: &LlmConfig) -> String {
    if std::env::var("OPENAI_BASE_URL").is_ok_and(|v| !v.is_empty()) {
        "from OPENAI_BASE_URL".into()
    } else if let Some(f) = &config.file {
        format!("from {}", f.display())
    } else {
        "the default".into()
    }
}

/// The LLM endpoint and model `ask` would use (the same configuration), with one
/// one-token chat per distinct model.
pub(super) async fn llm(dir: Option<&Path>) -> Check {
    let config = match LlmConfig::load(dir) {
        Ok(c) => c,
        Err(e) => return Check::fail("llm", e.to_string(), "fix the setting the message names"),
    };
    let at = format!("{} ({})", config.base_url, url_source(&config));
    // The limit `ask` would wait per try; `--llm-timeout` overrides it per command.
    let timeout = format!(
        "; timeout {} per try ({})",
        secs(config.timeout),
        config.timeout_source()
    );
    if !config.is_configured() {
        return Check::warn(
            "llm",
            format!("endpoint {at}, no model: `ask` cannot run{timeout}"),
            NOT_CONFIGURED,
        );
    }
    let mut probe = config.clone();
    probe.max_retries = 0;
    probe.timeout = LLM_TIMEOUT;
    probe.max_output_tokens = 1;
    let client = match LlmClient::new(probe, Cassette::Off) {
        Ok(c) => c,
        Err(e) => return Check::fail("llm", e.to_string(), "see the message"),
    };
    let mut seen: Vec<String> = Vec::new();
    let mut slowest = Duration::ZERO;
    for role in Role::ALL {
        let Some(model) = config.model_for(role) else {
            continue;
        };
        if seen.iter().any(|m| m == model) {
            continue;
        }
        seen.push(model.to_string());
        match client
            .chat(role, &[Message::user("Reply with one word: ok")])
            .await
        {
            Ok(reply) => slowest = slowest.max(reply.latency),
            Err(e) => {
                let fix = if e.is_user_error() {
                    "check the model name (LAKESTAR_MODEL or [llm] model) and the key (OPENAI_API_KEY) the server wants".to_string()
                } else {
                    format!(
                    "start the server, or set OPENAI_BASE_URL (or base_url under [llm] in lakestar.toml) to your OpenAI-compatible endpoint; it is {}",
                    config.base_url
                )
                };
                return Check::fail(
                    "llm",
                    format!("model {model} at {at} did not answer: {e}{timeout}"),
                    fix,
                );
            }
        }
    }
    Check::ok(
        "llm",
        format!(
            "model {} at {at} answered in {} ms{}{timeout}",
            seen.join(", "),
            slowest.as_millis(),
            if config.api_key.is_some() {
                " (with OPENAI_API_KEY / api_key)"
            } else {
                ""
            }
        ),
    )
}

/// The interpreter the sandbox would run generated code with, and whether it has the
/// data stack.
pub(super) fn python(explicit: Option<&Path>) -> (Check, Option<Python>) {
    let venv = default_venv_dir();
    let py =
        match Python::resolve(explicit, &venv) {
            Ok(p) => p,
            Err(e) => return (
                Check::fail(
                    "python",
                    e.to_string(),
                    "run `lakestar setup python` (a venv with pandas & co.), or pass --python PATH",
                ),
                None,
            ),
        };
    let origin = match &py.origin {
        PythonOrigin::Flag => "--python".to_string(),
        PythonOrigin::Venv(d) => format!("the venv {}", d.display()),
        PythonOrigin::System => format!("python3 on PATH; no venv at {}", venv.display()),
    };
    let at = format!("{} ({origin})", py.path.display());
    let missing = match py.missing_modules(DEFAULT_MODULES) {
        Ok(m) => m,
        Err(e) => {
            return (
                Check::fail("python", format!("{at}: {e}"), "pass another --python"),
                None,
            )
        }
    };
    let pandas = py
        .versions(&["pandas"])
        .ok()
        .and_then(|v| v.into_iter().next().and_then(|(_, v)| v));
    let check = if missing.iter().any(|m| m == "pandas") {
        Check::fail(
            "python",
            format!("{at} has no pandas"),
            "run `lakestar setup python`, or pass --python PATH of one with pandas",
        )
    } else if !missing.is_empty() {
        Check::warn(
            "python",
            format!(
                "{at}, pandas {}; missing {}",
                pandas.unwrap_or_default(),
                missing.join(", ")
            ),
            "run `lakestar setup python` to install them",
        )
    } else {
        Check::ok(
            "python",
            format!("{at}, pandas {}", pandas.unwrap_or_default()),
        )
    };
    (check, Some(py))
}

/// Whether generated code runs isolated here: a trivial script through the real
/// sandbox, under the policy `ask` would use.
pub(super) async fn sandbox(python: Option<Python>) -> Check {
    let Some(python) = python else {
        return Check::warn(
            "sandbox",
            "not checked: it needs the Python above",
            "fix the python check first",
        );
    };
    let limits = Limits {
        timeout: SCRIPT_TIMEOUT,
        ..Limits::default()
    };
    let policy = Policy::from_env();
    let sandbox = Sandbox::new(python, limits).with_policy(policy);
    let level = match sandbox.check() {
        Ok(Isolation::Isolated) => "jail (no network, a minimal read-only root)".to_string(),
        Ok(Isolation::Unavailable(why)) => format!("no isolation: {why}"),
        Err(e) => {
            return Check::fail(
                "sandbox",
                e.to_string(),
                "let this user create namespaces (the message names the step the kernel refused), or accept the risk with --unsafe-no-isolation",
            )
        }
    };
    // A fresh directory of this process's own, removed after the run.
    let work = std::env::temp_dir().join(format!("lakestar-doctor-{}", std::process::id()));
    let ran = sandbox.run(&work, "doctor", "print(6 * 7)\n", &[]).await;
    let _ = std::fs::remove_dir_all(&work);
    match ran {
        Ok(ex) if ex.success() && ex.stdout.trim() == "42" => {
            let detail = format!(
                "{level}; a script ran in {:.2} s (network {}, filesystem {})",
                ex.duration.as_secs_f64(),
                ex.network,
                ex.filesystem
            );
            if policy == Policy::Unconfined {
                Check::warn(
                    "sandbox",
                    detail,
                    "generated code runs as you; drop --unsafe-no-isolation (LAKESTAR_UNSAFE_NO_ISOLATION) where the jail works",
                )
            } else {
                Check::ok("sandbox", detail)
            }
        }
        Ok(ex) => Check::fail(
            "sandbox",
            format!(
                "{level}; a trivial script failed (exit {:?}{}): {}",
                ex.exit_code,
                ex.limit_hit.map(|l| format!(", {l}")).unwrap_or_default(),
                ex.stderr.trim()
            ),
            "check the python above; `lakestar sandbox-run FILE --workdir DIR` runs a script as the agent does",
        ),
        Err(e) => Check::fail(
            "sandbox",
            format!("{level}; the script could not start: {e}"),
            "see the message",
        ),
    }
}
