//! Interrupting `lakestar ask` kills the script it is running.

use crate::agent::fenced;
use crate::common::{lakestar, python3};
use crate::llm_server::ScriptedLlm;
use std::time::{Duration, Instant};

fn alive(pid: i32) -> bool {
    // A zombie (killed, not yet reaped by a PID 1 that does not reap) counts as gone.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat.contains(") Z "),
        Err(_) => false,
    }
}

#[test]
fn sigint_stops_the_run_and_kills_its_script() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("a.csv");
    std::fs::write(&csv, "x\n1\n").unwrap();
    let llm = ScriptedLlm::start();
    llm.say("planner", "Wait.")
        .say("coder", &fenced("import time\ntime.sleep(3600)"));
    let run = dir.path().join("run");
    let script = run.join("exec/001-solution/script.py");
    let script = script.to_str().unwrap();
    let child = lakestar()
        .env("OPENAI_BASE_URL", llm.base_url())
        .env("LAKESTAR_MODEL", "scripted-model")
        .args(["ask", "Wait?", "--files"])
        .arg(&csv)
        .args(["--python", &python3(), "--out"])
        .arg(&run)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let pid: i32 = loop {
        if let Some(p) = crate::common::process_with(&[script]) {
            break p;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the script never started"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(alive(pid));
    // SAFETY: signalling the child we spawned.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("interrupted"), "{err}");
    let gone = Instant::now();
    while alive(pid) && gone.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!alive(pid), "the script outlived the interrupted run");
    // The trace keeps what happened before the interruption.
    let trace = std::fs::read_to_string(run.join("trace.jsonl")).unwrap();
    assert!(trace.contains("\"kind\":\"llm\""));
}
