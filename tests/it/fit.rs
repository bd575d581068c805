//! Prompts that fit the model: cut to the context window the
//! server states or refuses with, refused with the role and overflow named when even
//! their minimum is too large, and built on a system prefix identical for every role, with
//! the server's cached tokens reported. Driven through `lakestar ask` against the scripted
//! server, whose own tokenizer does the counting.

use crate::agent::fenced;
use crate::common::{lakestar, python3};
use crate::llm_server::{Recorded, ScriptedLlm};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

/// A lake of one small CSV: (tempdir, absolute csv path).
fn lake() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("sales.csv");
    std::fs::write(&csv, "region,amount\nnorth,10\nsouth,20\nnorth,5\n").unwrap();
    let csv = csv.canonicalize().unwrap().display().to_string();
    (dir, csv)
}

fn ask(
    llm: &ScriptedLlm,
    dir: &Path,
    csv: &str,
    env: &[(&str, &str)],
    question: &str,
) -> (Output, PathBuf) {
    let run = dir.join("run");
    let mut cmd = lakestar();
    cmd.env("OPENAI_BASE_URL", llm.base_url())
        .env("LAKESTAR_MODEL", "scripted-model");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd
        .args([
            "ask",
            question,
            "--files",
            csv,
            "--python",
            &python3(),
            "--out",
        ])
        .arg(&run)
        .current_dir(dir)
        .output()
        .unwrap();
    (out, run)
}

fn succeeded(out: &Output) -> String {
    assert!(
        out.status.success(),
        "lakestar ask failed: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn llm_events(run: &Path) -> Vec<Value> {
    std::fs::read_to_string(run.join("trace.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["kind"] == "llm")
        .collect()
}

/// A script printing 3,000 lines of numbers: about 25 KB, far more tokens than the
/// windows below.
const DUMP: &str = "for i in range(3000):\n    print(i, i * 7919 % 100003, i * 31337 % 99991)";

/// Queue the replies of a run whose script prints [`DUMP`] and whose answer is 15.
fn queue_dump_run(llm: &ScriptedLlm) {
    llm.say("planner", "Print every amount.")
        .say("coder", &fenced(DUMP))
        .say("verifier", "sufficient")
        .say("finalyzer", &fenced("print(15)"));
}

/// Tokens a request may take by the server's count: its prompt and its reply reserve.
fn within(r: &Recorded, context: usize) -> bool {
    r.prompt_tokens + r.body["max_tokens"].as_u64().unwrap() as usize <= context
}

#[test]
fn a_prompt_larger_than_the_context_is_cut_to_fit_and_the_run_goes_on() {
    let (dir, csv) = lake();
    let llm = ScriptedLlm::start();
    // The window comes from the server's /props, the counts from its /tokenize.
    llm.context(4096).llama_endpoints();
    queue_dump_run(&llm);
    let (out, run) = ask(&llm, dir.path(), &csv, &[], "North sales?");
    assert_eq!(succeeded(&out), "15");
    assert!(llm.left().is_empty(), "{:?}", llm.left());

    let requests = llm.requests();
    assert_eq!(requests.len(), 4);
    for r in &requests {
        assert!(
            !r.refused && within(r, 4096),
            "{} took {}",
            r.role,
            r.prompt_tokens
        );
    }
    // The output was too large: cut head + tail with a marker, first and last lines kept.
    for role in ["verifier", "finalyzer"] {
        let prompt = &llm.prompts(role)[0];
        assert!(
            prompt.contains("left out here to fit the model's context"),
            "{role}"
        );
        assert!(prompt.contains("\n0 0 0\n"), "{role}: head kept");
        assert!(prompt.contains("2999 "), "{role}: tail kept");
    }
    for e in llm_events(&run) {
        assert_eq!(e["context_tokens"], 4096);
    }
}

#[test]
fn a_refusal_stating_the_window_is_learned_and_the_call_retried_within_it() {
    let (dir, csv) = lake();
    let llm = ScriptedLlm::start();
    // A window configured far too large, a server that refuses beyond 2,600 tokens and
    // offers neither /props nor /tokenize.
    llm.context(2600);
    queue_dump_run(&llm);
    let env = [("LAKESTAR_CONTEXT_TOKENS", "100000")];
    let (out, run) = ask(&llm, dir.path(), &csv, &env, "North sales?");
    assert_eq!(succeeded(&out), "15");

    let requests = llm.requests();
    let refused: Vec<&Recorded> = requests.iter().filter(|r| r.refused).collect();
    assert_eq!(refused.len(), 1, "one refusal, then the learned window");
    assert_eq!(refused[0].role, "verifier");
    let verifier: Vec<&Recorded> = requests.iter().filter(|r| r.role == "verifier").collect();
    assert_eq!(verifier.len(), 2);
    assert!(within(verifier[1], 2600), "{}", verifier[1].prompt_tokens);
    // Every later call fits the learned window too.
    let after = requests.iter().position(|r| r.refused).unwrap();
    assert!(requests[after + 1..].iter().all(|r| within(r, 2600)));
    let notes: Vec<String> = std::fs::read_to_string(run.join("trace.jsonl"))
        .unwrap()
        .lines()
        .filter(|l| l.contains("\"kind\":\"note\""))
        .map(str::to_string)
        .collect();
    assert!(
        notes.iter().any(|n| n.contains("2600-token context")),
        "{notes:?}"
    );
    let events = llm_events(&run);
    assert_eq!(events.last().unwrap()["context_tokens"], 2600);
}

#[test]
fn a_prompt_whose_minimum_cannot_fit_names_the_role_and_the_overflow() {
    let (dir, csv) = lake();
    let llm = ScriptedLlm::start();
    let question = "Which region sold the most? ".repeat(200);
    let env = [("LAKESTAR_CONTEXT_TOKENS", "1500")];
    let (out, run) = ask(&llm, dir.path(), &csv, &env, &question);
    assert_eq!(out.status.code(), Some(2), "a user error");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("the planner prompt does not fit"), "{err}");
    assert!(
        err.contains("476 are available") && err.contains("over"),
        "{err}"
    );
    assert!(err.contains("context_tokens"), "{err}");
    assert!(
        llm.requests().is_empty(),
        "nothing larger than the context is sent"
    );
    assert!(json(&run.join("summary.json"))["error"]
        .as_str()
        .unwrap()
        .contains("planner"));
}

#[test]
fn every_role_shares_one_system_prefix_and_cached_tokens_are_reported() {
    let (dir, csv) = lake();
    let llm = ScriptedLlm::start();
    llm.prefix_cache();
    let load = format!("import csv\nrows = list(csv.DictReader(open({csv:?})))");
    // `price`: a key no column is one letter from (`amout` is repaired to `amount`
    // before the script runs, and the debugger would not be asked).
    llm.say("planner", "Load the file.")
        .say("planner", "Sum the north amounts.")
        .say(
            "coder",
            &fenced(&format!("{load}\nprint(rows[0]['price'])")),
        )
        .say("debugger", &fenced(&format!("{load}\nprint(len(rows))")))
        .say(
            "coder",
            &fenced(&format!(
                "{load}\nprint(sum(int(r['amount']) for r in rows if r['region'] == 'north'))"
            )),
        )
        .say("verifier", "insufficient")
        .say("verifier", "sufficient")
        .say("router", "Add Step")
        .say("finalyzer", &fenced("print(15)"));
    let (out, run) = ask(&llm, dir.path(), &csv, &[], "North sales?");
    assert_eq!(succeeded(&out), "15");
    assert!(llm.left().is_empty(), "{:?}", llm.left());

    let requests = llm.requests();
    let mut roles: Vec<&str> = requests.iter().map(|r| r.role.as_str()).collect();
    roles.sort();
    roles.dedup();
    assert_eq!(
        roles,
        [
            "coder",
            "debugger",
            "finalyzer",
            "planner",
            "router",
            "verifier"
        ]
    );
    let system = &requests[0].body["messages"][0];
    assert_eq!(system["role"], "system");
    let text = system["content"].as_str().unwrap();
    assert!(text.contains("North sales?") && text.contains(&format!("## {csv}")));
    for r in &requests {
        let m = r.body["messages"].as_array().unwrap();
        assert_eq!(m.len(), 2, "{}", r.role);
        assert_eq!(&m[0], system, "{}: the prefix is byte-identical", r.role);
        assert_eq!(m[1]["role"], "user");
        // What changes comes after the prefix, and the descriptions are not repeated.
        assert!(!m[1]["content"]
            .as_str()
            .unwrap()
            .contains(&format!("## {csv}")));
    }

    let summary = json(&run.join("summary.json"));
    let cached = summary["llm"]["usage"]["cached_tokens"].as_u64().unwrap();
    let events = llm_events(&run);
    let traced: u64 = events
        .iter()
        .map(|e| e["cached_tokens"].as_u64().unwrap())
        .sum();
    assert_eq!(cached, traced);
    // Every call after the first found at least the prefix cached.
    let prefix_tokens = crate::llm_server::server_tokens(text) as u64;
    assert!(
        cached >= prefix_tokens * (events.len() as u64 - 1),
        "{cached}"
    );
    assert!(
        summary["llm"]["by_role"]["planner"]["usage"]["cached_tokens"]
            .as_u64()
            .unwrap()
            > 0
    );
    // The client's own estimate of the reused prefix, labelled as such.
    assert!(summary["llm"]["prefix_reused_estimate"].as_u64().unwrap() >= prefix_tokens);
    assert_eq!(events[0]["prefix_reused_estimate"], 0);
    assert!(events[1]["prefix_reused_estimate"].as_u64().unwrap() > 0);
}

#[test]
fn a_server_that_wants_max_completion_tokens_gets_it_from_then_on() {
    let (dir, csv) = lake();
    let llm = ScriptedLlm::start();
    llm.wants_max_completion_tokens();
    llm.say("planner", "Sum the north amounts.")
        .say("coder", &fenced("print(15)"))
        .say("verifier", "sufficient")
        .say("finalyzer", &fenced("print(15)"));
    let (out, _) = ask(&llm, dir.path(), &csv, &[], "North sales?");
    assert_eq!(succeeded(&out), "15");
    let requests = llm.requests();
    assert_eq!(requests.len(), 5, "one refusal, then each role once");
    assert!(requests[0].body.get("max_tokens").is_some());
    for r in &requests[1..] {
        assert!(r.body.get("max_tokens").is_none(), "{}", r.role);
        assert_eq!(r.body["max_completion_tokens"], 1024);
    }
}

#[test]
fn a_run_cut_by_the_servers_tokenizer_replays_without_a_server() {
    let (dir, csv) = lake();
    let cassette = dir.path().join("calls.jsonl");
    let llm = ScriptedLlm::start();
    llm.context(4096).llama_endpoints();
    queue_dump_run(&llm);
    let run = |extra: &[&str], out: &str, server: Option<&str>| {
        let mut cmd = lakestar();
        if let Some(url) = server {
            cmd.env("OPENAI_BASE_URL", url)
                .env("LAKESTAR_MODEL", "scripted-model");
        }
        cmd.args([
            "ask",
            "North sales?",
            "--files",
            &csv,
            "--python",
            &python3(),
        ])
        .args(extra)
        .arg("--out")
        .arg(dir.path().join(out))
        .current_dir(dir.path())
        .output()
        .unwrap()
    };
    let c = cassette.to_str().unwrap();
    let url = llm.base_url();
    assert_eq!(
        succeeded(&run(&["--record", c], "recorded", Some(&url))),
        "15"
    );
    assert!(llm_events(&dir.path().join("recorded"))
        .iter()
        .any(|e| e["prompt"]
            .as_str()
            .unwrap()
            .contains("left out here to fit")));
    // No server, no model: the recorded windows and counts cut the prompts the same way
    // (the estimate alone would cut them elsewhere, and the replay would diverge).
    drop(llm);
    let out = run(&["--replay", c], "replayed", None);
    assert_eq!(succeeded(&out), "15");
    let prompts = |name: &str| -> Vec<Value> {
        llm_events(&dir.path().join(name))
            .into_iter()
            .map(|e| e["prompt"].clone())
            .collect()
    };
    assert_eq!(prompts("recorded"), prompts("replayed"));
}
