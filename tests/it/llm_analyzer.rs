//! `lakestar index --llm-analyzer`: describer scripts written by the scripted LLM, run by
//! the system python3, debugged from their traceback, cached by (content, model,
//! prompt), and shown by `ask`.

use crate::common::{lakestar, n, python3, run_ok};
use crate::llm_server::ScriptedLlm;
use lakestar::index::CatalogReader;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

/// A lake of two small CSVs in `dir/lake`, indexed into `dir/idx`.
fn two_files(dir: &Path) -> (PathBuf, PathBuf) {
    let lake = dir.join("lake");
    std::fs::create_dir_all(&lake).unwrap();
    std::fs::write(lake.join("a.csv"), "city,pop\nOslo,700\nBergen,290\n").unwrap();
    std::fs::write(lake.join("b.csv"), "item,qty\napple,3\n").unwrap();
    (lake.canonicalize().unwrap(), dir.join("idx"))
}

fn with_llm(llm: &ScriptedLlm) -> std::process::Command {
    let mut c = lakestar();
    c.env("OPENAI_BASE_URL", llm.base_url())
        .env("OPENAI_API_KEY", "sk-test-secret")
        .env("LAKESTAR_MODEL", "scripted-model");
    c
}

/// `index LAKE --index IDX --json --llm-analyzer --python python3 EXTRA…`.
fn index_llm(llm: &ScriptedLlm, lake: &Path, idx: &Path, extra: &[&str]) -> Output {
    with_llm(llm)
        .args([
            "index",
            lake.to_str().unwrap(),
            "--index",
            idx.to_str().unwrap(),
        ])
        .args(["--json", "--llm-analyzer", "--python", &python3()])
        .args(extra)
        .output()
        .unwrap()
}

/// The JSON report of a successful run.
fn report(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "lakestar failed: {}\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn fenced(code: &str) -> String {
    format!("```python\n{code}\n```\n")
}

/// A describer that prints `tag`, the header and the row count of the CSV at `path`.
fn csv_describer(path: &Path, tag: &str) -> String {
    format!(
        "import csv\nrows = list(csv.reader(open({:?})))\nprint({tag:?}, 'header=' + ','.join(rows[0]), 'rows=%d' % (len(rows) - 1))",
        path.display().to_string()
    )
}

/// The stored LLM description of `rel` under the index's recorded (model, prompt).
fn stored(idx: &Path, rel: &str) -> lakestar::index::catalog::LlmDescription {
    let cat = CatalogReader::open(idx).unwrap();
    let key = cat
        .llm_analyzer_key()
        .unwrap()
        .expect("an llm_analyzer key");
    let hash = cat.file(rel).unwrap().unwrap().hash.unwrap();
    cat.llm_description(&hash, &key.model, &key.prompt)
        .unwrap()
        .unwrap_or_else(|| panic!("no LLM description of {rel}"))
}

fn llm_counts(v: &Value) -> (u64, u64, u64, u64) {
    let l = &v["llm_analyzer"];
    (
        n(l, "described"),
        n(l, "cached"),
        n(l, "failed"),
        n(l, "llm_calls"),
    )
}

#[test]
fn describers_are_debugged_from_the_traceback_cached_and_shown_by_ask() {
    let tmp = tempfile::tempdir().unwrap();
    let (lake, idx) = two_files(tmp.path());
    let (a, b) = (lake.join("a.csv"), lake.join("b.csv"));
    let failing = format!(
        "import csv\nrows = list(csv.DictReader(open({:?})))\nprint(rows[0]['population'])",
        a.display().to_string()
    );
    let fixed = csv_describer(&a, "A-DESC");
    let llm = ScriptedLlm::start();
    llm.say("analyzer", &fenced(&failing))
        .say("debugger", &fenced(&fixed))
        .say("analyzer", &fenced(&csv_describer(&b, "B-DESC")));
    let v = report(&index_llm(&llm, &lake, &idx, &["--llm-jobs", "1"]));
    assert!(llm.left().is_empty(), "unused replies: {:?}", llm.left());
    // The native report's integer fields are untouched.
    assert_eq!((n(&v, "files_seen"), n(&v, "added")), (2, 2));
    assert_eq!(llm_counts(&v), (2, 0, 0, 3));
    assert_eq!(v["llm_analyzer"]["model"], "scripted-model");

    // The analyzer is given the absolute path; the debugger the failing code and its
    // traceback, and no description of any file.
    let analyzer = llm.prompts("analyzer");
    assert!(analyzer[0].contains(&a.display().to_string()));
    assert!(analyzer[1].contains(&b.display().to_string()));
    let debugger = llm.prompts("debugger");
    assert_eq!(debugger.len(), 1);
    assert!(debugger[0].contains(&failing), "{}", debugger[0]);
    assert!(debugger[0].contains("KeyError: 'population'"));
    assert!(debugger[0].contains("Traceback"));
    // The script is named without the index's scratch directory.
    assert!(
        debugger[0].contains("File \"describe.py\", line 3"),
        "{}",
        debugger[0]
    );
    assert!(!debugger[0].contains("llm-analyzer"), "{}", debugger[0]);
    for leak in ["Oslo", "Bergen", "city,pop", "B-DESC", "described by"] {
        assert!(!debugger[0].contains(leak), "{leak} in {}", debugger[0]);
    }

    let da = stored(&idx, "a.csv");
    assert_eq!(da.text.as_deref(), Some("A-DESC header=city,pop rows=2"));
    assert_eq!((da.script.as_str(), da.attempts), (fixed.as_str(), 2));
    assert_eq!(da.error, None);
    assert_eq!(
        stored(&idx, "b.csv").text.as_deref(),
        Some("B-DESC header=item,qty rows=1")
    );
    // Scripts ran in the index's scratch directory, removed after; the lake is as it was.
    assert!(!idx.join("llm-analyzer").exists());
    let mut names: Vec<_> = std::fs::read_dir(&lake)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["a.csv", "b.csv"]);

    // Nothing changed: not one request.
    let before = llm.requests().len();
    let v = report(&index_llm(&llm, &lake, &idx, &[]));
    assert_eq!(llm.requests().len(), before);
    assert_eq!(llm_counts(&v), (0, 2, 0, 0));

    // One file changed: one analyzer call, for that file.
    std::fs::write(&b, "item,qty\napple,3\npear,4\n").unwrap();
    llm.say("analyzer", &fenced(&csv_describer(&b, "B2-DESC")));
    let v = report(&index_llm(&llm, &lake, &idx, &[]));
    let new = &llm.requests()[before..];
    assert_eq!(new.len(), 1);
    assert_eq!(new[0].role, "analyzer");
    assert!(new[0].prompt().contains(&b.display().to_string()));
    assert_eq!(llm_counts(&v), (1, 1, 0, 1));
    assert_eq!(
        stored(&idx, "b.csv").text.as_deref(),
        Some("B2-DESC header=item,qty rows=2")
    );
    let first_prompt = v["llm_analyzer"]["prompt"].as_str().unwrap().to_string();

    // Another analyzer prompt: every file is described again.
    let prompts = tmp.path().join("prompts");
    std::fs::create_dir_all(&prompts).unwrap();
    std::fs::write(
        prompts.join("analyzer.md"),
        "Describe {{file}} in one line.\n",
    )
    .unwrap();
    llm.say("analyzer", &fenced(&csv_describer(&a, "A3-DESC")))
        .say("analyzer", &fenced(&csv_describer(&b, "B3-DESC")));
    let before = llm.requests().len();
    let v = report(&index_llm(
        &llm,
        &lake,
        &idx,
        &["--prompts", prompts.to_str().unwrap(), "--llm-jobs", "1"],
    ));
    let new: Vec<String> = llm.requests()[before..]
        .iter()
        .map(|r| r.prompt())
        .collect();
    assert_eq!(new.len(), 2);
    assert!(new.iter().all(|p| p.starts_with("Describe /")), "{new:?}");
    assert_eq!(llm_counts(&v), (2, 0, 0, 2));
    assert_ne!(v["llm_analyzer"]["prompt"], first_prompt.as_str());

    // `describe --llm` shows it too; plain `describe` the native one.
    let idx_s = idx.to_str().unwrap();
    let out = run_ok(
        tmp.path(),
        &["describe", "lake/a.csv", "--index", idx_s, "--llm"],
    );
    assert_eq!(
        out,
        "a.csv — described by an LLM-written script\nA3-DESC header=city,pop rows=2\n"
    );
    let out = run_ok(
        tmp.path(),
        &[
            "describe",
            "lake/a.csv",
            "--index",
            idx_s,
            "--llm",
            "--json",
        ],
    );
    let d: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(d["llm"]["text"], "A3-DESC header=city,pop rows=2");
    assert_eq!(d["llm"]["attempts"], 1);
    let out = run_ok(tmp.path(), &["describe", "lake/a.csv", "--index", idx_s]);
    assert!(!out.contains("A3-DESC") && out.contains("Oslo"), "{out}");

    // `ask` shows the LLM description of the recorded (model, prompt) to the planner.
    llm.say("planner", "Print the header of a.csv.")
        .say("coder", &fenced("print('city,pop')"))
        .say("verifier", "sufficient")
        .say("finalyzer", &fenced("print('city,pop')"));
    let out = with_llm(&llm)
        .args(["ask", "Which columns does a.csv have?", "--index"])
        .arg(&idx)
        .args(["--files", a.to_str().unwrap(), "--python", &python3()])
        .arg("--out")
        .arg(tmp.path().join("run"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let planner = &llm.prompts("planner")[0];
    assert!(
        planner
            .contains("a.csv — described by an LLM-written script\nA3-DESC header=city,pop rows=2"),
        "{planner}"
    );
}

#[test]
fn a_describer_that_keeps_failing_leaves_the_native_description() {
    let tmp = tempfile::tempdir().unwrap();
    let (lake, idx) = two_files(tmp.path());
    let llm = ScriptedLlm::start();
    // Both files at once (the default concurrency): the same replies fit either.
    for _ in 0..2 {
        llm.say("analyzer", &fenced("raise ValueError('cannot parse')"))
            .say("debugger", &fenced("raise ValueError('still broken')"));
    }
    let v = report(&index_llm(&llm, &lake, &idx, &["--debug-attempts", "1"]));
    assert!(llm.left().is_empty(), "unused replies: {:?}", llm.left());
    assert_eq!(llm_counts(&v), (0, 0, 2, 4));
    let d = stored(&idx, "a.csv");
    assert_eq!(d.text, None);
    assert!(
        d.error
            .as_deref()
            .unwrap()
            .contains("ValueError: still broken"),
        "{d:?}"
    );
    assert_eq!(d.attempts, 2);

    // Not retried on the next run, and reported.
    let out = with_llm(&llm)
        .args([
            "index",
            lake.to_str().unwrap(),
            "--index",
            idx.to_str().unwrap(),
        ])
        .args(["--llm-analyzer", "--python", &python3()])
        .output()
        .unwrap();
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stdout.contains("0 described, 2 cached, 2 failed; 0 LLM calls"),
        "{stdout}"
    );
    assert!(
        stderr.contains(
            "a.csv: describer failed (native description kept): ValueError: still broken"
        ),
        "{stderr}"
    );
    assert_eq!(llm.requests().len(), 4);
    let out = lakestar()
        .args(["describe", "a.csv", "--llm", "--index"])
        .arg(&idx)
        .current_dir(&lake)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("failed") && stderr.contains("ValueError: still broken"),
        "{stderr}"
    );

    // The prompts show the native description.
    llm.say("planner", "Count the rows.")
        .say("coder", &fenced("print(2)"))
        .say("verifier", "sufficient")
        .say("finalyzer", &fenced("print(2)"));
    let out = with_llm(&llm)
        .args(["ask", "How many rows?", "--index"])
        .arg(&idx)
        .args(["--files", lake.join("a.csv").to_str().unwrap()])
        .args(["--python", &python3(), "--out"])
        .arg(tmp.path().join("run"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let planner = &llm.prompts("planner")[0];
    assert!(!planner.contains("LLM-written"), "{planner}");
    assert!(planner.contains("Oslo"), "{planner}");

    // --llm-retry-failed describes them again.
    for _ in 0..2 {
        llm.say("analyzer", &fenced("print('described at last')"));
    }
    let v = report(&index_llm(&llm, &lake, &idx, &["--llm-retry-failed"]));
    assert_eq!(llm_counts(&v), (2, 0, 0, 2));
    assert_eq!(
        stored(&idx, "b.csv").text.as_deref(),
        Some("described at last")
    );
}

#[test]
fn an_index_without_llm_analyzer_needs_no_llm() {
    let tmp = tempfile::tempdir().unwrap();
    let (lake, idx) = two_files(tmp.path());
    // No LLM settings at all (the test command clears them): indexing works.
    let out = lakestar()
        .args([
            "index",
            lake.to_str().unwrap(),
            "--index",
            idx.to_str().unwrap(),
        ])
        .arg("--json")
        .output()
        .unwrap();
    let v = report(&out);
    assert!(v.get("llm_analyzer").is_none(), "{v}");
    // With an LLM configured, still not one request.
    let llm = ScriptedLlm::start();
    std::fs::write(lake.join("c.csv"), "x\n1\n").unwrap();
    let out = with_llm(&llm)
        .args([
            "index",
            lake.to_str().unwrap(),
            "--index",
            idx.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(llm.requests().is_empty());

    // --llm-analyzer without an LLM says how to configure one (a user error, exit 2).
    let out = lakestar()
        .args([
            "index",
            lake.to_str().unwrap(),
            "--index",
            idx.to_str().unwrap(),
        ])
        .args(["--llm-analyzer", "--python", &python3()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("LAKESTAR_MODEL"), "{stderr}");
    // The agent options need --llm-analyzer.
    let out = lakestar()
        .args(["index", lake.to_str().unwrap(), "--debug-attempts", "2"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_recorded_pass_replays_without_an_llm_into_the_same_cache_key() {
    let tmp = tempfile::tempdir().unwrap();
    let (lake, idx) = two_files(tmp.path());
    std::fs::remove_file(lake.join("b.csv")).unwrap();
    let cassette = tmp.path().join("calls.jsonl");
    let llm = ScriptedLlm::start();
    llm.say("analyzer", &fenced("raise KeyError('x')"))
        .say("debugger", &fenced("print('fixed on replay too')"));
    let v = report(&index_llm(
        &llm,
        &lake,
        &idx,
        &["--record", cassette.to_str().unwrap()],
    ));
    assert_eq!(llm_counts(&v), (1, 0, 0, 2));

    // A fresh index, no LLM configured: the cassette answers, under the recorded model.
    let idx2 = tmp.path().join("idx2");
    let out = lakestar()
        .args([
            "index",
            lake.to_str().unwrap(),
            "--index",
            idx2.to_str().unwrap(),
        ])
        .args(["--json", "--llm-analyzer", "--python", &python3()])
        .args(["--replay", cassette.to_str().unwrap()])
        .output()
        .unwrap();
    let v = report(&out);
    assert_eq!(llm_counts(&v), (1, 0, 0, 2));
    assert_eq!(v["llm_analyzer"]["model"], "scripted-model");
    assert_eq!(
        stored(&idx2, "a.csv").text.as_deref(),
        Some("fixed on replay too")
    );
    assert_eq!(llm.requests().len(), 2);
}
