//! What `lakestar ask` says while it runs and what its record keeps when it stops: the
//! run directory, each LLM call's wait and retries (on stderr and in the trace), the
//! LLM time limit in effect and where it comes from, and the plan and rounds of a run
//! that ends without an answer.

use crate::agent::{fenced, ok, read_json, sales_lake, trace};
use crate::common::{lakestar, python3};
use crate::llm_server::{Reply, ScriptedLlm};
use serde_json::Value;
use std::path::Path;
use std::process::Output;
use std::time::Duration;

fn of_kind(events: &[Value], kind: &str) -> Vec<Value> {
    events
        .iter()
        .filter(|e| e["kind"] == kind)
        .cloned()
        .collect()
}

#[test]
fn a_call_past_the_llm_timeout_is_retried_said_on_stderr_and_traced() {
    let (lake, _) = sales_lake();
    let llm = ScriptedLlm::start();
    // The first planner try answers after 3 s, past the 1 s limit; the retry gets the
    // next reply at once.
    llm.push(
        "planner",
        Reply::Late(Duration::from_secs(3), "Count rows.".into()),
    )
    .say("planner", "Count rows.")
    .say("coder", &fenced("print(3)"))
    .say("verifier", "sufficient")
    .say("finalyzer", &fenced("print(3)"));
    let run = lake.path().join("run");
    let out = ask_in(
        &llm,
        lake.path(),
        &run,
        &[],
        &["--llm-timeout", "1s", "--json"],
    );
    // stdout is the summary alone: progress never mixes into it.
    let summary: Value = serde_json::from_str(ok(&out).trim()).expect("one JSON summary");
    assert_eq!(summary["status"], "sufficient");
    assert_eq!(summary["llm"]["retries"], 1);
    let err = String::from_utf8_lossy(&out.stderr);
    let at = |line: &str| {
        err.find(line)
            .unwrap_or_else(|| panic!("no {line:?} in stderr:\n{err}"))
    };
    let dir = at(&format!("run directory: {}", run.display()));
    let waiting = at("round 0 · planner: waiting for the model");
    let retry = at("round 0 · planner: retry 1 of 5 after a 1 s timeout");
    let answered = at("round 0 · planner: answered in ");
    assert!(
        dir < waiting && waiting < retry && retry < answered,
        "{err}"
    );
    at("round 0 · coder: answered in ");

    let events = trace(&run);
    let start = &of_kind(&events, "start")[0];
    assert_eq!(start["llm_timeout_ms"], 1000);
    assert_eq!(start["llm_timeout_from"], "flag");
    let retries = of_kind(&events, "retry");
    assert_eq!(retries.len(), 1, "{retries:?}");
    let r = &retries[0];
    assert_eq!(
        (r["round"].as_u64(), r["role"].as_str()),
        (Some(0), Some("planner"))
    );
    assert_eq!(
        (r["retry"].as_u64(), r["max_retries"].as_u64()),
        (Some(1), Some(5))
    );
    assert_eq!(r["reason"], "a 1 s timeout");
    assert!(r["error"].as_str().unwrap().contains("timed out"), "{r}");
    let calls = of_kind(&events, "llm");
    assert_eq!(calls[0]["role"], "planner");
    assert_eq!(calls[0]["attempts"], 2);
    // The retry comes between the call's start and its answer in the trace too.
    let position = |kind: &str| events.iter().position(|e| e["kind"] == kind).unwrap();
    assert!(position("retry") < position("llm"));
}

/// Environment variables to set.
type Env<'a> = &'a [(&'a str, &'a str)];

/// `ask` about the lake of [`sales_lake`] with `env` and `args`, recorded in `run`.
fn ask_in(llm: &ScriptedLlm, lake: &Path, run: &Path, env: Env, args: &[&str]) -> Output {
    lakestar()
        .env("OPENAI_BASE_URL", llm.base_url())
        .env("LAKESTAR_MODEL", "scripted-model")
        .envs(env.iter().copied())
        .args(["ask", "What is the total amount?", "--files"])
        .arg(lake.join("sales.csv"))
        .args(["--python", &python3(), "--out"])
        .arg(run)
        .args(args)
        .current_dir(lake)
        .output()
        .unwrap()
}

#[test]
fn the_llm_timeout_is_the_flag_else_the_environment_else_the_file() {
    let (lake, _) = sales_lake();
    let xdg = lake.path().join("xdg");
    std::fs::create_dir_all(xdg.join("lakestar")).unwrap();
    std::fs::write(
        xdg.join("lakestar/lakestar.toml"),
        "[llm]\ntimeout_secs = 3\n",
    )
    .unwrap();
    let xdg = xdg.to_str().unwrap();
    let llm = ScriptedLlm::start();
    let cases: [(Env, &[&str], u64, &str); 3] = [
        (
            &[("XDG_CONFIG_HOME", xdg), ("LAKESTAR_LLM_TIMEOUT", "7s")],
            &["--llm-timeout", "2m"],
            120_000,
            "flag",
        ),
        (
            &[("XDG_CONFIG_HOME", xdg), ("LAKESTAR_LLM_TIMEOUT", "7s")],
            &[],
            7000,
            "env",
        ),
        (&[("XDG_CONFIG_HOME", xdg)], &[], 3000, "file"),
    ];
    for (i, (env, args, ms, from)) in cases.into_iter().enumerate() {
        let run = lake.path().join(format!("run{i}"));
        let out = ask_in(&llm, lake.path(), &run, env, args);
        assert!(!out.status.success(), "no reply is scripted");
        let start = &of_kind(&trace(&run), "start")[0];
        assert_eq!(start["llm_timeout_ms"], ms, "{env:?} {args:?}");
        assert_eq!(start["llm_timeout_from"], from, "{env:?} {args:?}");
    }

    // A bad value is refused, naming where it is and how to write one.
    let out = ask_in(
        &llm,
        lake.path(),
        &lake.path().join("bad-env"),
        &[("LAKESTAR_LLM_TIMEOUT", "300")],
        &[],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("LAKESTAR_LLM_TIMEOUT") && err.contains("300s"),
        "{err}"
    );
    let out = ask_in(
        &llm,
        lake.path(),
        &lake.path().join("bad-flag"),
        &[],
        &["--llm-timeout", "0s"],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--llm-timeout"), "{err}");

    // `--timeout` says it is the script's limit and points to `--llm-timeout`.
    let help = lakestar().args(["ask", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    let timeout = help
        .split("\n\n")
        .find(|p| p.contains("--timeout <SECS>"))
        .unwrap_or_else(|| panic!("{help}"));
    assert!(
        timeout.contains("script") && timeout.contains("--llm-timeout"),
        "{timeout}"
    );
}

#[test]
fn a_run_whose_llm_fails_in_round_2_keeps_its_plan_and_rounds() {
    let (lake, _) = sales_lake();
    let llm = ScriptedLlm::start();
    llm.say("planner", "Load the file.")
        .say("coder", &fenced("print('loaded')"))
        .say("verifier", "insufficient")
        .say("router", "Add Step")
        .say("planner", "Sum the amounts.")
        .say("coder", &fenced("print(35)"));
    // Round 2's verifier gets no reply (the server refuses it): the run stops there.
    let run = lake.path().join("run");
    let out = ask_in(&llm, lake.path(), &run, &[], &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(llm.left().is_empty(), "unused replies: {:?}", llm.left());

    let events = trace(&run);
    let failed = of_kind(&events, "llm_failed");
    assert_eq!(failed.len(), 1, "{events:?}");
    assert_eq!(failed[0]["role"], "verifier");
    assert_eq!(failed[0]["round"], 2);
    let last_plan = of_kind(&events, "plan").last().unwrap()["steps"].clone();
    assert_eq!(
        last_plan,
        serde_json::json!(["Load the file.", "Sum the amounts."])
    );
    let rounds = events.iter().filter_map(|e| e["round"].as_u64()).max();
    let verdicts: Vec<Value> = of_kind(&events, "verdict")
        .iter()
        .map(|v| v["verdict"].clone())
        .collect();

    let summary = read_json(&run.join("summary.json"));
    assert_eq!(summary["status"], "error");
    assert!(
        summary["error"].as_str().unwrap().contains("verifier"),
        "{summary}"
    );
    assert_eq!(summary["plan"], last_plan);
    assert_eq!(summary["rounds"].as_u64(), rounds);
    assert_eq!(summary["rounds"], 2);
    assert_eq!(summary["verdicts"], Value::Array(verdicts));
    assert_eq!(summary["verdicts"], serde_json::json!(["insufficient"]));
    let plan = std::fs::read_to_string(run.join("plan.md")).expect("plan.md is written");
    assert!(
        plan.contains("1. Load the file.\n2. Sum the amounts.\n"),
        "{plan}"
    );
}
