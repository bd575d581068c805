//! `lakestar doctor`, `lakestar completions` and `lakestar man`.

use crate::common::*;
use crate::llm_server::ScriptedLlm;
use serde_json::Value;
use std::path::Path;
use std::process::Output;

/// `lakestar doctor --json ARGS` in `cwd` with `env`: the exit code and the check of
/// each name.
fn doctor(cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, Vec<Value>) {
    let out: Output = lakestar()
        .arg("doctor")
        .arg("--json")
        .args(args)
        .envs(env.iter().copied())
        .current_dir(cwd)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let v: Value = serde_json::from_str(text.trim())
        .unwrap_or_else(|e| panic!("{e}: {text:?} / {}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(v["ok"], out.status.success(), "{v}");
    (out.status.code(), v["checks"].as_array().unwrap().clone())
}

fn check<'a>(checks: &'a [Value], name: &str) -> &'a Value {
    checks
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no {name} check in {checks:?}"))
}

#[test]
fn doctor_passes_a_working_setup_and_checks_the_llm_live() {
    let tmp = tempfile::tempdir().unwrap();
    let lake = tmp.path().join("lake");
    std::fs::create_dir(&lake).unwrap();
    std::fs::write(lake.join("a.csv"), "x,y\n1,2\n").unwrap();
    let idx = index_into(tmp.path(), &lake);
    let llm = ScriptedLlm::start();
    llm.say("analyzer", "ok");
    let base = llm.base_url();
    // The venv by its real path: the jail mounts the interpreter's real directories, so
    // a venv reached through a symbolic link (target/test-venv may be one) does not start.
    let venv = test_python()
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .canonicalize()
        .unwrap();
    let python = venv.join("bin/python");
    let env = [
        ("OPENAI_BASE_URL", base.as_str()),
        ("LAKESTAR_MODEL", "scripted-model"),
    ];
    let args = [
        "--index",
        idx.to_str().unwrap(),
        "--python",
        python.to_str().unwrap(),
    ];
    let (code, checks) = doctor(tmp.path(), &args, &env);
    assert_eq!(code, Some(0), "{checks:?}");
    for c in &checks {
        assert_eq!(c["status"], "ok", "{c}");
        assert!(c["fix"].is_null(), "{c}");
    }
    let names: Vec<&str> = checks.iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["index", "embedder", "llm", "python", "sandbox"]);
    let index = check(&checks, "index")["detail"].as_str().unwrap();
    assert!(
        index.contains("1 file,")
            && index.contains(&format!(
                "format version {}",
                lakestar::index::catalog::FORMAT_VERSION
            )),
        "{index}"
    );
    assert!(index.contains("last run finished"), "{index}");
    let embedder = check(&checks, "embedder")["detail"].as_str().unwrap();
    assert!(embedder.contains("embedded with hash"), "{embedder}");
    let llm_detail = check(&checks, "llm")["detail"].as_str().unwrap();
    assert!(
        llm_detail.contains("scripted-model") && llm_detail.contains(&base),
        "{llm_detail}"
    );
    assert!(llm_detail.contains("from OPENAI_BASE_URL"), "{llm_detail}");
    let py = check(&checks, "python")["detail"].as_str().unwrap();
    assert!(py.contains("pandas ") && py.contains("--python"), "{py}");
    let sandbox = check(&checks, "sandbox")["detail"].as_str().unwrap();
    assert!(sandbox.contains("a script ran"), "{sandbox}");
    // One call, of one token, to the one model.
    let calls = llm.requests();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].body["max_tokens"], 1, "{:?}", calls[0].body);

    // The text form: a line per check, its status first.
    llm.say("analyzer", "ok");
    let out = lakestar()
        .arg("doctor")
        .args(args)
        .envs(env)
        .current_dir(tmp.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for name in ["index", "embedder", "llm", "python", "sandbox"] {
        assert!(
            text.lines()
                .any(|l| l.starts_with("ok") && l.split_whitespace().nth(1) == Some(name)),
            "{name}: {text}"
        );
    }
}

#[test]
fn doctor_says_what_to_do_without_an_index_or_a_reachable_llm() {
    let tmp = tempfile::tempdir().unwrap();
    // A loopback port nobody listens on.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let url = format!("http://127.0.0.1:{closed}/v1");
    let (code, checks) = doctor(
        tmp.path(),
        &[],
        &[("OPENAI_BASE_URL", url.as_str()), ("LAKESTAR_MODEL", "m")],
    );
    assert_eq!(code, Some(1), "{checks:?}");
    let llm = check(&checks, "llm");
    assert_eq!(llm["status"], "fail", "{llm}");
    assert!(llm["detail"].as_str().unwrap().contains(&url), "{llm}");
    assert!(
        llm["fix"].as_str().unwrap().contains("OPENAI_BASE_URL"),
        "{llm}"
    );
    let index = check(&checks, "index");
    assert_eq!(index["status"], "warn", "{index}");
    assert!(
        index["detail"].as_str().unwrap().contains("none found"),
        "{index}"
    );
    assert!(
        index["fix"]
            .as_str()
            .unwrap()
            .contains("lakestar index LAKE"),
        "{index}"
    );
    let embedder = check(&checks, "embedder");
    assert_eq!(embedder["status"], "ok", "{embedder}");
    assert!(embedder["detail"]
        .as_str()
        .unwrap()
        .contains("a new index would use hash"));

    // No model at all: a warning naming the settings, not a failure of its own.
    let (_, checks) = doctor(tmp.path(), &[], &[]);
    let llm = check(&checks, "llm");
    assert_eq!(llm["status"], "warn", "{llm}");
    assert!(
        llm["fix"].as_str().unwrap().contains("LAKESTAR_MODEL"),
        "{llm}"
    );
    // A --python that does not exist fails, and the sandbox is not tried without one.
    let (code, checks) = doctor(tmp.path(), &["--python", "/nonexistent/python3"], &[]);
    assert_eq!(code, Some(1));
    assert_eq!(check(&checks, "python")["status"], "fail");
    assert_eq!(check(&checks, "sandbox")["status"], "warn");
}

#[test]
fn doctor_shows_the_llm_timeout_in_effect_and_where_it_comes_from() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("xdg/lakestar/lakestar.toml");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, "[llm]\ntimeout_secs = 3\n").unwrap();
    let xdg = tmp.path().join("xdg");
    let xdg = xdg.to_str().unwrap();
    // A --python that does not exist: the sandbox is not tried, the doctor is quick.
    let args = ["--python", "/nonexistent/python3"];
    let detail = |env: &[(&str, &str)]| {
        let (_, checks) = doctor(tmp.path(), &args, env);
        check(&checks, "llm")["detail"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let d = detail(&[("XDG_CONFIG_HOME", xdg), ("LAKESTAR_LLM_TIMEOUT", "5m")]);
    assert!(
        d.contains("timeout 300 s per try (from LAKESTAR_LLM_TIMEOUT)"),
        "{d}"
    );
    let d = detail(&[("XDG_CONFIG_HOME", xdg)]);
    assert!(
        d.contains(&format!("timeout 3 s per try (from {})", file.display())),
        "{d}"
    );
    let d = detail(&[]);
    assert!(d.contains("timeout 120 s per try (the default)"), "{d}");
}

#[test]
fn doctor_compares_the_index_embedder_with_the_installed_models_and_loads_it() {
    use lakestar::index::models::{tiny, MODELS_ENV};
    let tmp = tempfile::tempdir().unwrap();
    let lake = tmp.path().join("lake");
    std::fs::create_dir(&lake).unwrap();
    std::fs::write(lake.join("a.csv"), "station,rain\nalpha,1\n").unwrap();
    let bert = tmp.path().join("tiny-bert");
    tiny::write(&bert, 7).unwrap();
    let models = tmp.path().join("models");
    let m = models.to_str().unwrap();
    let in_models = |args: &[&str]| {
        let out = lakestar()
            .env(MODELS_ENV, &models)
            .args(args)
            .current_dir(tmp.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    // Indexed with the built-in embedder, then a model installed: searches keep the
    // index's, a new index would take the model.
    let hashed = index_into(tmp.path(), &lake);
    in_models(&[
        "model",
        "install",
        "minilm",
        "--from",
        bert.to_str().unwrap(),
    ]);
    let env = [(MODELS_ENV, m)];
    let (_, checks) = doctor(tmp.path(), &["--index", hashed.to_str().unwrap()], &env);
    let e = check(&checks, "embedder");
    assert_eq!(e["status"], "warn", "{e}");
    assert!(
        e["detail"].as_str().unwrap().contains("embedded with hash"),
        "{e}"
    );
    assert!(
        e["detail"].as_str().unwrap().contains("minilm (installed)"),
        "{e}"
    );
    assert!(e["fix"].as_str().unwrap().contains("--rebuild"), "{e}");

    // Embedded with a model whose files are gone: searches cannot embed the query.
    let idx = tmp.path().join("idx-bert");
    let spec = format!("bert:{}", bert.display());
    in_models(&[
        "index",
        lake.to_str().unwrap(),
        "--index",
        idx.to_str().unwrap(),
        "--embedder",
        &spec,
    ]);
    std::fs::remove_dir_all(&bert).unwrap();
    let (code, checks) = doctor(tmp.path(), &["--index", idx.to_str().unwrap()], &env);
    let e = check(&checks, "embedder");
    assert_eq!(
        (code, &e["status"]),
        (Some(1), &serde_json::json!("fail")),
        "{e}"
    );
    assert!(
        e["detail"].as_str().unwrap().contains("does not load"),
        "{e}"
    );
}

#[test]
fn completions_and_man_pages_come_from_the_command_definitions() {
    let tmp = tempfile::tempdir().unwrap();
    let bash = run_ok(tmp.path(), &["completions", "bash"]);
    assert!(
        bash.contains("_lakestar()") && bash.contains("complete -F"),
        "{bash}"
    );
    for word in ["search", "describe", "head", "doctor", "--index", "--table"] {
        assert!(bash.contains(word), "bash completions lack {word}");
    }
    for shell in ["zsh", "fish", "powershell", "elvish"] {
        let s = run_ok(tmp.path(), &["completions", shell]);
        assert!(
            s.contains("lakestar") && s.contains("search"),
            "{shell}: {s}"
        );
    }
    let out = run(tmp.path(), &["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2));

    let page = run_ok(tmp.path(), &["man"]);
    assert!(page.contains(".TH lakestar 1"), "{page}");
    assert!(
        page.contains(".SH SUBCOMMANDS") && page.contains("lakestar\\-search(1)"),
        "{page}"
    );
    let dir = tmp.path().join("man");
    run_ok(tmp.path(), &["man", "--out", dir.to_str().unwrap()]);
    for name in [
        "lakestar.1",
        "lakestar-search.1",
        "lakestar-head.1",
        "lakestar-model-install.1",
    ] {
        let p = dir.join(name);
        let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(
            text.starts_with(".ie") || text.contains(".TH"),
            "{name}: {text}"
        );
    }
    let search = std::fs::read_to_string(dir.join("lakestar-search.1")).unwrap();
    assert!(
        search.contains(".TH lakestar-search 1") && search.contains(env!("CARGO_PKG_VERSION")),
        "{search}"
    );
    assert!(search.contains("\\-\\-glob"), "{search}");
    assert!(
        !dir.join("lakestar-sandbox-run.1").exists(),
        "hidden commands get no page"
    );
}
