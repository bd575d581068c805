//! The LLM client against the scripted OpenAI-compatible server over real HTTP on
//! 127.0.0.1: retries, headers, configuration files, cost, record and replay, timeouts.

use crate::llm_server::{Reply, ScriptedLlm};
use lakestar::agent::llm::{
    Cassette, LlmClient, LlmConfig, LlmError, Message, Price, Role, Usage, CONFIG_FILE,
};
use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

/// Settings for the scripted server: one model, quick backoff.
fn config(base_url: &str) -> LlmConfig {
    LlmConfig {
        base_url: base_url.to_string(),
        model: Some("test-model".into()),
        backoff_base: Duration::from_millis(1),
        max_retries: 3,
        timeout: Duration::from_secs(20),
        ..LlmConfig::default()
    }
}

fn client(config: LlmConfig) -> LlmClient {
    LlmClient::new(config, Cassette::Off).unwrap()
}

fn ask(q: &str) -> Vec<Message> {
    vec![Message::system("You are a data analyst."), Message::user(q)]
}

/// What the scripted server reports for `messages` and `answer` (about 4 characters a
/// token).
fn scripted_usage(messages: &[Message], answer: &str) -> Usage {
    let prompt: Vec<&str> = messages.iter().map(|m| m.content.as_str()).collect();
    Usage {
        prompt_tokens: (prompt.join("\n\n").len() / 4 + 1) as u64,
        completion_tokens: (answer.len() / 4 + 1) as u64,
        cached_tokens: 0,
    }
}

/// A base URL where nothing listens (a port just freed).
fn dead_url() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    format!("http://127.0.0.1:{}/v1", l.local_addr().unwrap().port())
}

/// The environment of a machine with nothing configured but `vars`, and a home
/// directory without a config file.
fn env_of(home: &Path, vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let mut map: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    map.insert("HOME".into(), home.display().to_string());
    move |k: &str| map.get(k).cloned()
}

#[tokio::test]
async fn rate_limited_then_ok_is_retried_and_counted_once() {
    let llm = ScriptedLlm::start();
    llm.push(
        "planner",
        Reply::Status {
            code: 429,
            retry_after: Some(1),
        },
    )
    .say("planner", "1. load the CSV");
    let c = client(config(&llm.base_url()));
    let msgs = ask("plan it");
    let reply = c.chat(Role::Planner, &msgs).await.unwrap();

    assert_eq!(reply.text, "1. load the CSV");
    assert_eq!(reply.attempts, 2);
    assert!(!reply.replayed);
    assert_eq!(reply.model, "test-model");
    let usage = scripted_usage(&msgs, "1. load the CSV");
    assert_eq!(reply.usage, usage);
    let t = c.totals();
    assert_eq!((t.calls, t.retries, t.failed), (1, 1, 0));
    assert_eq!(t.usage, usage, "tokens of the successful try only");
    assert_eq!(t.by_role["planner"].calls, 1);
    assert_eq!(t.by_role["planner"].usage, usage);
    assert_eq!(llm.requests().len(), 2);
    assert!(llm.left().is_empty());
}

/// `seed` in the settings goes with every request (servers that honour it repeat a
/// reply to the same prompt, which ablations rely on); unset, none is sent.
#[tokio::test]
async fn the_configured_seed_goes_with_every_request() {
    let llm = ScriptedLlm::start();
    llm.say("planner", "1. load").say("planner", "2. sum");
    let seeded = client(LlmConfig {
        seed: Some(20261207),
        ..config(&llm.base_url())
    });
    seeded.chat(Role::Planner, &ask("plan it")).await.unwrap();
    client(config(&llm.base_url()))
        .chat(Role::Planner, &ask("plan it"))
        .await
        .unwrap();
    let r = llm.requests();
    assert_eq!(r[0].body["seed"], 20261207);
    assert!(r[1].body.get("seed").is_none(), "{}", r[1].body);
}

#[tokio::test]
async fn server_errors_beyond_max_retries_give_up_naming_the_status() {
    let llm = ScriptedLlm::start();
    for _ in 0..4 {
        llm.push(
            "coder",
            Reply::Status {
                code: 503,
                retry_after: None,
            },
        );
    }
    let c = client(LlmConfig {
        max_retries: 2,
        ..config(&llm.base_url())
    });
    let err = c.chat(Role::Coder, &ask("code it")).await.unwrap_err();
    let msg = err.to_string();
    assert!(!err.is_user_error(), "{msg}");
    assert!(msg.contains("HTTP 503"), "{msg}");
    assert!(
        msg.contains("scripted status 503"),
        "server's message: {msg}"
    );
    assert!(msg.contains("gave up after 3 attempts"), "{msg}");
    assert!(msg.contains("coder"), "{msg}");
    assert_eq!(llm.requests().len(), 3, "1 try + 2 retries");
    assert_eq!(llm.left()["coder"], 1);
    let t = c.totals();
    assert_eq!((t.calls, t.failed, t.retries), (0, 1, 2));
    assert_eq!(t.usage, Usage::default());
}

#[tokio::test]
async fn refused_request_is_a_user_error_and_not_retried() {
    let llm = ScriptedLlm::start(); // nothing scripted: every request gets a 400
    let c = client(config(&llm.base_url()));
    let err = c.chat(Role::Verifier, &ask("ok?")).await.unwrap_err();
    let msg = err.to_string();
    assert!(err.is_user_error(), "{msg}");
    assert!(msg.contains("HTTP 400"), "{msg}");
    assert!(msg.contains("no reply left for role"), "{msg}");
    assert!(msg.contains("check the model name"), "{msg}");
    assert_eq!(llm.requests().len(), 1);
}

#[tokio::test]
async fn role_header_model_and_authorization_are_sent_only_with_a_key() {
    let llm = ScriptedLlm::start();
    llm.say("coder", "print(1)").say("router", "add step");
    let with_key = client(LlmConfig {
        api_key: Some("sk-test-123".into()),
        temperature: Some(0.25),
        role_models: HashMap::from([(Role::Coder, "coder-model".to_string())]),
        ..config(&llm.base_url())
    });
    let reply = with_key.chat(Role::Coder, &ask("code")).await.unwrap();
    assert_eq!(reply.model, "coder-model");
    client(config(&llm.base_url()))
        .chat(Role::Router, &ask("route"))
        .await
        .unwrap();

    let reqs = llm.requests();
    assert_eq!(reqs[0].role, "coder");
    assert_eq!(reqs[0].authorization.as_deref(), Some("Bearer sk-test-123"));
    assert_eq!(reqs[0].body["model"], "coder-model");
    assert_eq!(reqs[0].body["temperature"], 0.25);
    assert_eq!(reqs[0].body["messages"][0]["role"], "system");
    assert_eq!(reqs[0].body["messages"][1]["content"], "code");
    assert_eq!(reqs[1].role, "router");
    assert_eq!(reqs[1].authorization, None);
    assert_eq!(reqs[1].body["model"], "test-model");
    assert!(reqs[1].body.get("temperature").is_none());
}

#[tokio::test]
async fn every_role_sends_its_own_header_value() {
    let llm = ScriptedLlm::start();
    for r in Role::ALL {
        llm.say(r.as_str(), &format!("I am the {r}"));
    }
    let c = client(config(&llm.base_url()));
    for r in Role::ALL {
        let reply = c.chat(r, &ask("who?")).await.unwrap();
        assert_eq!(reply.text, format!("I am the {r}"));
    }
    let roles: Vec<String> = llm.requests().into_iter().map(|r| r.role).collect();
    let expected = [
        "analyzer",
        "planner",
        "coder",
        "verifier",
        "router",
        "debugger",
        "summarizer",
        "finalyzer",
    ];
    assert_eq!(roles, expected);
    assert_eq!(c.totals().by_role.len(), 8);
}

#[tokio::test]
async fn per_role_models_from_the_index_config_file_with_env_overriding() {
    let llm = ScriptedLlm::start();
    llm.say("planner", "p")
        .say("coder", "c")
        .say("planner", "p2");
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join(".lakestar");
    std::fs::create_dir(&index).unwrap();
    std::fs::write(
        index.join(CONFIG_FILE),
        format!(
            "[llm]\nbase_url = \"{}\"\nmodel = \"file-model\"\nbackoff_secs = 0.001\n\
             [llm.models]\ncoder = \"file-coder\"\n",
            dead_url()
        ),
    )
    .unwrap();

    // The file's base URL is dead: the calls below succeed only because the
    // environment's wins.
    let env = env_of(dir.path(), &[("OPENAI_BASE_URL", &llm.base_url())]);
    let cfg = LlmConfig::load_with_env(Some(&index), env).unwrap();
    assert_eq!(cfg.file.as_deref(), Some(index.join(CONFIG_FILE).as_path()));
    assert!(cfg.is_configured());
    let c = client(cfg);
    c.chat(Role::Planner, &ask("a")).await.unwrap();
    c.chat(Role::Coder, &ask("b")).await.unwrap();

    let env = env_of(
        dir.path(),
        &[
            ("OPENAI_BASE_URL", &llm.base_url()),
            ("LAKESTAR_MODEL", "env-model"),
        ],
    );
    let cfg = LlmConfig::load_with_env(Some(&index), env).unwrap();
    assert_eq!(
        cfg.model_for(Role::Coder),
        Some("file-coder"),
        "role beats env"
    );
    client(cfg).chat(Role::Planner, &ask("c")).await.unwrap();

    let models: Vec<_> = llm
        .requests()
        .iter()
        .map(|r| r.body["model"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(models, ["file-model", "file-coder", "env-model"]);
}

#[test]
fn config_comes_from_xdg_config_home_unless_the_index_has_one() {
    let dir = tempfile::tempdir().unwrap();
    let (index, xdg) = (dir.path().join("index"), dir.path().join("xdg"));
    std::fs::create_dir_all(xdg.join("lakestar")).unwrap();
    std::fs::create_dir(&index).unwrap();
    let xdg_file = xdg.join("lakestar").join(CONFIG_FILE);
    std::fs::write(
        &xdg_file,
        "[llm]\nmodel = \"xdg-model\"\napi_key = \"from-file\"\n",
    )
    .unwrap();
    let xdg_s = xdg.display().to_string();

    let cfg = LlmConfig::load_with_env(
        Some(&index),
        env_of(dir.path(), &[("XDG_CONFIG_HOME", &xdg_s)]),
    )
    .unwrap();
    assert_eq!(cfg.model.as_deref(), Some("xdg-model"));
    assert_eq!(cfg.file.as_deref(), Some(xdg_file.as_path()));
    assert_eq!(cfg.api_key.as_deref(), Some("from-file"));

    let env = env_of(
        dir.path(),
        &[("XDG_CONFIG_HOME", &xdg_s), ("OPENAI_API_KEY", "from-env")],
    );
    let cfg = LlmConfig::load_with_env(None, env).unwrap();
    assert_eq!(cfg.api_key.as_deref(), Some("from-env"), "env beats file");

    std::fs::write(index.join(CONFIG_FILE), "[llm]\nmodel = \"index-model\"\n").unwrap();
    let cfg = LlmConfig::load_with_env(
        Some(&index),
        env_of(dir.path(), &[("XDG_CONFIG_HOME", &xdg_s)]),
    )
    .unwrap();
    assert_eq!(cfg.model.as_deref(), Some("index-model"));
    assert_eq!(cfg.api_key, None, "only the first file found is read");

    // Nothing anywhere: defaults, and not configured.
    let empty = tempfile::tempdir().unwrap();
    let cfg = LlmConfig::load_with_env(None, env_of(empty.path(), &[])).unwrap();
    assert!(!cfg.is_configured());
    assert_eq!(cfg.file, None);

    std::fs::write(index.join(CONFIG_FILE), "[llm]\nmodle = \"x\"\n").unwrap();
    let err = LlmConfig::load_with_env(Some(&index), env_of(empty.path(), &[])).unwrap_err();
    assert!(err.is_user_error());
    let msg = err.to_string();
    assert!(
        msg.contains(&index.join(CONFIG_FILE).display().to_string()),
        "{msg}"
    );
    assert!(msg.contains("modle"), "{msg}");
}

#[tokio::test]
async fn no_model_is_a_user_error_naming_the_ways_to_set_one() {
    let c = client(LlmConfig {
        base_url: dead_url(),
        ..LlmConfig::default()
    });
    let err = c.chat(Role::Analyzer, &ask("describe")).await.unwrap_err();
    assert!(matches!(err, LlmError::User(_)));
    let msg = err.to_string();
    for way in [
        "lakestar.toml",
        "[llm.models]",
        "LAKESTAR_MODEL",
        "analyzer",
    ] {
        assert!(msg.contains(way), "{msg} should name {way}");
    }
    assert_eq!(c.totals().failed, 0, "no try was made");
}

#[tokio::test]
async fn cost_comes_from_the_price_table() {
    let llm = ScriptedLlm::start();
    llm.say("summarizer", "short").say("coder", "code");
    let price = Price {
        input_per_mtok: 2.0,
        output_per_mtok: 10.0,
    };
    let c = client(LlmConfig {
        prices: HashMap::from([("test-model".to_string(), price)]),
        role_models: HashMap::from([(Role::Coder, "unpriced".to_string())]),
        ..config(&llm.base_url())
    });
    let msgs = ask("summarize this long text");
    let reply = c.chat(Role::Summarizer, &msgs).await.unwrap();
    let u = scripted_usage(&msgs, "short");
    let expected = (u.prompt_tokens as f64 * 2.0 + u.completion_tokens as f64 * 10.0) / 1e6;
    assert!((reply.cost.unwrap() - expected).abs() < 1e-15);
    let coder = c.chat(Role::Coder, &msgs).await.unwrap();
    assert_eq!(coder.cost, None);

    let t = c.totals();
    assert!((t.cost.unwrap() - expected).abs() < 1e-15);
    assert_eq!(t.unpriced_calls, 1);
    assert!((t.by_role["summarizer"].cost.unwrap() - expected).abs() < 1e-15);
    assert_eq!(t.by_role["coder"].cost, None);
}

#[tokio::test]
async fn record_then_replay_without_a_network_gives_the_same_replies() {
    let dir = tempfile::tempdir().unwrap();
    let tape = dir.path().join("run.jsonl");
    let calls = [
        (Role::Planner, "step one?"),
        (Role::Coder, "write code"),
        (Role::Planner, "step one?"), // the same request again, another answer
        (Role::Verifier, "done?"),
    ];
    let llm = ScriptedLlm::start();
    llm.say("planner", "load")
        .say("coder", "import pandas")
        .say("planner", "filter")
        .push(
            "verifier",
            Reply::Status {
                code: 500,
                retry_after: None,
            },
        )
        .say("verifier", "yes");
    let recorder = LlmClient::new(config(&llm.base_url()), Cassette::Record(tape.clone())).unwrap();
    let mut recorded = Vec::new();
    for (role, q) in calls {
        recorded.push(recorder.chat(role, &ask(q)).await.unwrap());
    }
    drop(llm); // the server is gone from here on
    let lines = std::fs::read_to_string(&tape).unwrap();
    assert_eq!(lines.lines().count(), 4);

    // No model, no key, and a dead URL with no retries: only the cassette can answer.
    let replay_config = LlmConfig {
        base_url: dead_url(),
        max_retries: 0,
        ..LlmConfig::default()
    };
    let player = LlmClient::new(replay_config.clone(), Cassette::Replay(tape.clone())).unwrap();
    assert!(player.is_replaying());
    // A request the recorded run never made: the nearest recorded one is shown.
    let err = player
        .chat(Role::Coder, &ask("write other code"))
        .await
        .unwrap_err();
    assert!(err.is_user_error());
    let msg = err.to_string();
    assert!(msg.contains("diverged") && msg.contains("coder"), "{msg}");
    assert!(
        msg.contains("other code") && msg.contains("write code"),
        "{msg}"
    );

    // Roles may come in another order than recorded; identical requests in order.
    for i in [1, 0, 3, 2] {
        let (role, q) = calls[i];
        let r = player.chat(role, &ask(q)).await.unwrap();
        assert!(r.replayed);
        assert_eq!(r.text, recorded[i].text);
        assert_eq!(r.model, recorded[i].model);
        assert_eq!(r.usage, recorded[i].usage);
        assert_eq!(r.attempts, recorded[i].attempts);
    }
    assert_eq!(recorded[3].attempts, 2);
    let (a, b) = (recorder.totals(), player.totals());
    assert_eq!(
        (a.calls, a.retries, &a.usage),
        (b.calls, b.retries, &b.usage)
    );

    // One more identical planner request than recorded.
    let err = player
        .chat(Role::Planner, &ask("step one?"))
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("no more planner requests"),
        "{err}"
    );

    // A missing cassette is named.
    let missing = dir.path().join("nope.jsonl");
    let err = LlmClient::new(replay_config, Cassette::Replay(missing))
        .err()
        .unwrap();
    assert!(
        err.is_user_error() && err.to_string().contains("nope.jsonl"),
        "{err}"
    );
}

#[tokio::test]
async fn a_server_that_never_answers_times_out() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    // Accept connections and hold them open without a byte of answer.
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((stream, _)) = listener.accept().await {
            held.push(stream);
        }
    });
    let c = client(LlmConfig {
        timeout: Duration::from_millis(200),
        max_retries: 0,
        ..config(&format!("http://127.0.0.1:{port}/v1"))
    });
    let err = c.chat(Role::Debugger, &ask("fix")).await.unwrap_err();
    assert!(!err.is_user_error());
    let msg = err.to_string();
    assert!(msg.contains("timed out") && msg.contains("0.2 s"), "{msg}");
    assert!(msg.contains("gave up after 1 attempts"), "{msg}");
    assert!(msg.contains("timeout_secs"), "says what to do: {msg}");
}

#[tokio::test]
async fn the_key_never_shows_in_errors() {
    let llm = ScriptedLlm::start(); // 400 for everything
    let key = "sk-very-secret-key";
    let c = client(LlmConfig {
        api_key: Some(key.into()),
        ..config(&llm.base_url())
    });
    let err = c.chat(Role::Coder, &ask("x")).await.unwrap_err();
    assert!(!err.to_string().contains(key));
    assert!(!format!("{err:?}").contains(key));
    assert!(!format!("{:?}", c.config()).contains(key));
}

#[cfg(unix)]
#[test]
fn a_config_file_with_a_key_others_can_read_is_warned_about() {
    use std::os::unix::fs::PermissionsExt;
    let (lake, csv) = crate::agent::sales_lake();
    let xdg = lake.path().join("xdg");
    let file = xdg.join("lakestar").join(CONFIG_FILE);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    // A key but no model: `ask` reads the file, then stops for want of a model.
    std::fs::write(&file, "[llm]\napi_key = \"sk-in-a-file\"\n").unwrap();
    let ask = || {
        let mut cmd = crate::common::lakestar();
        cmd.env("XDG_CONFIG_HOME", &xdg);
        crate::common::ask_without_a_model(cmd, lake.path(), &csv)
    };
    let fix = format!("chmod 600 {}", file.display());
    for (mode, warned) in [(0o644, true), (0o640, true), (0o600, false)] {
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(mode)).unwrap();
        let err = ask();
        assert_eq!(
            err.matches(&fix).count(),
            usize::from(warned),
            "{mode:o}: {err}"
        );
        assert!(
            !err.contains("sk-in-a-file"),
            "the key is never shown: {err}"
        );
    }
}
