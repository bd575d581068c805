//! `POST /ask`, `/runs/{id}` and `/runs/{id}/events` with the scripted LLM server and a
//! real Python.

use super::{assert_error, Http, Server};
use crate::agent::fenced;
use crate::common::{index_into, lakestar, python3};
use crate::llm_server::ScriptedLlm;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// A lake of one small CSV, indexed; returns (tempdir, lake, index).
pub(crate) fn sales_lake() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let lake = tmp.path().join("lake");
    std::fs::create_dir(&lake).unwrap();
    std::fs::write(
        lake.join("sales.csv"),
        "region,amount\nnorth,10\nsouth,20\nnorth,5\n",
    )
    .unwrap();
    let idx = index_into(tmp.path(), &lake);
    (tmp, lake, idx)
}

/// `lakestar serve` talking to `llm`, generated code run by the system python3.
pub(crate) fn serve_with(llm: &ScriptedLlm, idx: &std::path::Path, extra: &[&str]) -> Server {
    let mut cmd = lakestar();
    cmd.env("OPENAI_BASE_URL", llm.base_url())
        .env("OPENAI_API_KEY", "sk-test-secret")
        .env("LAKESTAR_MODEL", "scripted-model");
    let python = python3();
    let mut args = vec!["--python", python.as_str()];
    args.extend_from_slice(extra);
    Server::start_cmd(cmd, idx, &args)
}

/// The server-sent events of a stream read to its end: (event name, data as JSON).
fn read_events(http: &Http, path: &str) -> Vec<(String, Value)> {
    let text = http.rt.block_on(async {
        let r = http
            .client
            .get(format!("{}{path}", http.base))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        assert_eq!(
            r.headers()["content-type"].to_str().unwrap(),
            "text/event-stream"
        );
        r.text().await.unwrap()
    });
    let mut events = Vec::new();
    for block in text.split("\n\n") {
        let mut name = None;
        let mut data = None;
        for line in block.lines() {
            if let Some(n) = line.strip_prefix("event: ") {
                name = Some(n.to_string());
            } else if let Some(d) = line.strip_prefix("data: ") {
                data = Some(serde_json::from_str(d).unwrap());
            }
        }
        if let (Some(n), Some(d)) = (name, data) {
            events.push((n, d));
        }
    }
    events
}

/// Poll `/runs/{id}` until it is no longer running (a hang guard of 120 s).
fn wait_run(http: &Http, id: &str) -> Value {
    let start = Instant::now();
    loop {
        let (st, run) = http.get(&format!("/runs/{id}"));
        assert_eq!(st, 200, "{run}");
        if run["status"] != "running" {
            return run;
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "run never ended"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_run_answers_and_its_trace_streams_from_start_to_finish() {
    let (_tmp, _lake, idx) = sales_lake();
    let llm = ScriptedLlm::start();
    llm.say("planner", "Sum the amount of the north region.")
        .say("coder", &fenced("print('north', 15)"))
        .say("verifier", "sufficient")
        .say("finalyzer", &fenced("print(15)"));
    let server = serve_with(&llm, &idx, &[]);
    let http = Http::new(&server);
    let (st, started) = http.post_json(
        "/ask",
        &json!({"question": "How much did the north region sell?", "files": ["sales.csv"],
                "guidelines": "a number", "max_rounds": 3}),
    );
    assert_eq!(st, 202, "{started}");
    assert_eq!(started["files"], json!(["sales.csv"]));
    let id = started["id"].as_str().unwrap().to_string();
    assert_eq!(started["events"], format!("/runs/{id}/events"));

    // Followed live (the stream ends by itself after `finish`).
    let events = read_events(&http, started["events"].as_str().unwrap());
    let names: Vec<&str> = events.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names.first(), Some(&"start"), "{names:?}");
    assert_eq!(names.last(), Some(&"finish"), "{names:?}");
    assert!(
        names.contains(&"llm") && names.contains(&"exec"),
        "{names:?}"
    );
    assert_eq!(
        events[0].1["question"],
        "How much did the north region sell?"
    );
    assert_eq!(events.last().unwrap().1["answer"], "15");

    let run = wait_run(&http, &id);
    assert_eq!(run["status"], "finished", "{run}");
    assert_eq!(run["summary"]["answer"], "15", "{run}");
    assert_eq!(run["summary"]["status"], "sufficient", "{run}");
    assert!(llm.left().is_empty(), "unused replies: {:?}", llm.left());
    // Replayed after the end: the same events.
    assert_eq!(read_events(&http, &format!("/runs/{id}/events")), events);
    assert!(idx.join("runs").join(&id).join("summary.json").is_file());

    // A retrieved run: the question finds sales.csv.
    llm.say("planner", "Sum the amounts.")
        .say("coder", &fenced("print(35)"))
        .say("verifier", "sufficient")
        .say("finalyzer", &fenced("print(35)"));
    let (st, started) = http.post_json(
        "/ask",
        &json!({"question": "What is the total sales amount over all regions?", "k": 1}),
    );
    assert_eq!(st, 202, "{started}");
    assert_eq!(started["files"], json!(["sales.csv"]));
    let run = wait_run(&http, started["id"].as_str().unwrap());
    assert_eq!(run["summary"]["answer"], "35", "{run}");

    // The LLM refuses (the scripted server has no reply left): the run fails, and says why.
    let (st, started) = http.post_json("/ask", &json!({"question": "And the south?", "k": 1}));
    assert_eq!(st, 202, "{started}");
    let run = wait_run(&http, started["id"].as_str().unwrap());
    assert_eq!(run["status"], "failed", "{run}");
    assert!(
        run["error"].as_str().unwrap().contains("no reply left"),
        "{run}"
    );
    let events = read_events(&http, started["events"].as_str().unwrap());
    assert_eq!(events.last().unwrap().0, "finish");
    assert!(server.stop().success());
}

fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat.contains(") Z "),
        Err(_) => false,
    }
}

#[test]
fn runs_beyond_the_limit_are_refused_and_shutdown_stops_the_running_one() {
    let (_tmp, _lake, idx) = sales_lake();
    let llm = ScriptedLlm::start();
    llm.say("planner", "Wait.")
        .say("coder", &fenced("import time\ntime.sleep(3600)"));
    let server = serve_with(&llm, &idx, &["--max-runs", "1", "--timeout", "3600"]);
    let http = Http::new(&server);
    let (st, started) = http.post_json(
        "/ask",
        &json!({"question": "Wait?", "files": ["sales.csv"]}),
    );
    assert_eq!(st, 202, "{started}");
    let id = started["id"].as_str().unwrap();
    assert_error(
        &http.post_json("/ask", &json!({"question": "And?", "files": ["sales.csv"]})),
        429,
        "too_many_runs",
    );
    let (_, run) = http.get(&format!("/runs/{id}"));
    assert_eq!(run["status"], "running", "{run}");
    let script = idx
        .join("runs")
        .join(id)
        .join("exec/001-solution/script.py");
    let script = script.to_str().unwrap();
    let start = Instant::now();
    let pid: i32 = loop {
        if let Some(p) = crate::common::process_with(&[script]) {
            break p;
        }
        assert!(start.elapsed() < Duration::from_secs(60), "no script ran");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(alive(pid));
    // An open event stream does not hold the shutdown.
    let events = http.rt.spawn(
        http.client
            .get(format!("{}/runs/{id}/events", http.base))
            .send(),
    );
    std::thread::sleep(Duration::from_millis(200));
    assert!(server.stop().success(), "serve exits 0 on SIGTERM");
    // The kernel ends the jail's processes when its init dies, not within the same
    // instant: allow a loaded machine a moment.
    let stopped = Instant::now();
    while alive(pid) && stopped.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!alive(pid), "the run's script outlived the server");
    let _ = http.rt.block_on(events);
}

#[test]
fn ask_without_an_llm_is_a_json_error_and_starts_nothing() {
    let (_tmp, _lake, idx) = sales_lake();
    let server = Server::start(&idx, &[]);
    let http = Http::new(&server);
    let answer = http.post_json("/ask", &json!({"question": "How much?"}));
    assert_error(&answer, 503, "llm_not_configured");
    let message = answer.1["error"]["message"].as_str().unwrap();
    assert!(message.contains("LAKESTAR_MODEL"), "{message}");
    assert!(
        !idx.join("runs").exists()
            || std::fs::read_dir(idx.join("runs"))
                .unwrap()
                .next()
                .is_none(),
        "a run directory was made"
    );
    assert_error(
        &http.post_json("/ask", &json!({"question": "q", "files": ["missing.csv"]})),
        404,
        "not_found",
    );
}
