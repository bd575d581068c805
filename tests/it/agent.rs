//! The agent's loop (DS-STAR Algorithm 1) driven through `lakestar ask` and
//! `lakestar bench dabstep`, against the scripted LLM server on 127.0.0.1 and a real
//! Python subprocess.

use crate::common::{lakestar, python3, test_python};
use crate::llm_server::{Reply, ScriptedLlm};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

/// A lake of one small CSV; returns (tempdir, absolute csv path).
pub(crate) fn sales_lake() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("sales.csv");
    std::fs::write(&csv, "region,amount\nnorth,10\nsouth,20\nnorth,5\n").unwrap();
    let csv = csv.canonicalize().unwrap();
    (dir, csv)
}

/// Run `lakestar ask` against `llm` with the loop settings of the tests.
pub(crate) fn ask(llm: &ScriptedLlm, cwd: &Path, args: &[&str]) -> Output {
    lakestar()
        .env("OPENAI_BASE_URL", llm.base_url())
        .env("OPENAI_API_KEY", "sk-test-secret")
        .env("LAKESTAR_MODEL", "scripted-model")
        .arg("ask")
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap()
}

pub(crate) fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "lakestar ask failed: {}\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

pub(crate) fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

pub(crate) fn trace(run: &Path) -> Vec<Value> {
    std::fs::read_to_string(run.join("trace.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The text of a prompt between a heading line and the next heading.
pub(crate) fn section<'a>(prompt: &'a str, heading: &str) -> &'a str {
    let start = prompt
        .find(heading)
        .unwrap_or_else(|| panic!("no {heading:?} in:\n{prompt}"))
        + heading.len();
    let rest = &prompt[start..];
    let end = rest.find("\n# ").unwrap_or(rest.len());
    rest[..end].trim()
}

/// The script a coder prompt shows as its base code.
pub(crate) fn base_code(prompt: &str) -> &str {
    let start = prompt.find("```python\n").expect("a base script") + "```python\n".len();
    let end = prompt[start..].find("\n```").unwrap() + start;
    &prompt[start..end]
}

/// A reply holding `code` in a fenced block, with chatter around it.
pub fn fenced(code: &str) -> String {
    format!("Here it is:\n```python\n{code}\n```\n")
}

pub(crate) fn roles(llm: &ScriptedLlm) -> Vec<String> {
    llm.requests().into_iter().map(|r| r.role).collect()
}

#[test]
fn router_naming_step_2_keeps_step_1_and_restores_its_script() {
    let (lake, csv) = sales_lake();
    let csv = csv.display().to_string();
    let code1 =
        format!("import csv\nrows = list(csv.DictReader(open({csv:?})))\nprint('rows', len(rows))");
    let code2 = format!("{code1}\nprint('total', sum(int(r['amount']) for r in rows))");
    let code3 = format!("{code2}\nprint('wrong turn')");
    let code4 = format!(
        "{code1}\nprint('north', sum(int(r['amount']) for r in rows if r['region'] == 'north'))"
    );
    let llm = ScriptedLlm::start();
    llm.say("planner", "Load sales.csv and count its rows.")
        .say("planner", "Sum the amount column.")
        .say("planner", "Divide the total by the number of regions.")
        .say("planner", "Sum the amount of the north region.");
    llm.say("coder", &fenced(&code1))
        .say("coder", &fenced(&code2))
        .say("coder", &fenced(&code3))
        .say("coder", &fenced(&code4));
    for v in ["insufficient", "insufficient", "insufficient", "sufficient"] {
        llm.say("verifier", v);
    }
    llm.say("router", "Add Step")
        .say("router", "Add Step")
        .say("router", "Step 2");
    llm.say("finalyzer", &fenced("print(15)"));
    let run = lake.path().join("run");
    let out = ok(&ask(
        &llm,
        lake.path(),
        &[
            "How much did the north region sell?",
            "--files",
            &csv,
            "--python",
            &python3(),
            "--out",
            run.to_str().unwrap(),
        ],
    ));
    assert_eq!(out.trim(), "15");
    assert!(llm.left().is_empty(), "unused replies: {:?}", llm.left());

    // After `Step 2` the planner sees exactly step 1, and the coder builds on step 1's
    // script, not on the latest one.
    let planner = llm.prompts("planner");
    assert_eq!(planner.len(), 4);
    assert_eq!(
        section(&planner[3], "# Plan so far"),
        "1. Load sales.csv and count its rows."
    );
    assert_eq!(
        section(&planner[2], "# Plan so far"),
        "1. Load sales.csv and count its rows.\n2. Sum the amount column."
    );
    // ... and the result it is conditioned on is the last one (the wrong turn's).
    assert!(section(&planner[3], "# Output of the script").contains("wrong turn"));
    let coder = llm.prompts("coder");
    assert_eq!(base_code(&coder[1]), code1);
    assert_eq!(base_code(&coder[2]), code2);
    assert_eq!(
        base_code(&coder[3]),
        code1,
        "base code restored to step 1's script"
    );
    assert!(coder[3].contains("2. Sum the amount of the north region."));
    assert!(!coder[3].contains("Divide the total"));
    // The router is shown the steps numbered from 1 and how many there are.
    let router = llm.prompts("router");
    assert!(router[2].contains("3. Divide the total by the number of regions."));
    assert!(router[2].contains("(3 steps)"));

    let summary = read_json(&run.join("summary.json"));
    assert_eq!(summary["status"], "sufficient");
    assert_eq!(summary["rounds"], 4);
    assert_eq!(
        summary["verdicts"],
        serde_json::json!(["insufficient", "insufficient", "insufficient", "sufficient"])
    );
    assert_eq!(summary["plan"].as_array().unwrap().len(), 2);
    let routes: Vec<Value> = trace(&run)
        .into_iter()
        .filter(|e| e["kind"] == "route")
        .collect();
    assert_eq!(routes[2]["route"]["decision"], "step");
    assert_eq!(routes[2]["route"]["step"], 2);
    assert_eq!(routes[2]["kept"], 1);
}

#[test]
fn a_run_stops_at_the_first_sufficient_and_writes_its_record() {
    let (lake, csv) = sales_lake();
    let csv = csv.display().to_string();
    let code = format!("import csv\nrows = list(csv.DictReader(open({csv:?})))\nprint('north total', sum(int(r['amount']) for r in rows if r['region'] == 'north'))");
    let llm = ScriptedLlm::start();
    llm.say("planner", "Sum the north amounts.")
        .say("coder", &fenced(&code))
        .say("verifier", "**Sufficient.**")
        .say(
            "finalyzer",
            &fenced(&format!("{code}\n").replace("print('north total', ", "print(")),
        );
    let run = lake.path().join("run");
    let out = ok(&ask(
        &llm,
        lake.path(),
        &[
            "North sales?",
            "--files",
            &csv,
            "--python",
            &python3(),
            "--out",
            run.to_str().unwrap(),
            "--guidelines",
            "Just the integer.",
        ],
    ));
    assert_eq!(out.trim(), "15");
    assert_eq!(roles(&llm), ["planner", "coder", "verifier", "finalyzer"]);
    // Every call names its role, carries the key, and asks for the configured model.
    for r in llm.requests() {
        assert_eq!(r.authorization.as_deref(), Some("Bearer sk-test-secret"));
        assert_eq!(r.body["model"], "scripted-model");
    }
    // The prompts carry the question, the absolute path and the description's columns.
    let planner = &llm.prompts("planner")[0];
    assert!(planner.contains("North sales?") && planner.contains(&csv));
    assert!(planner.contains("region") && planner.contains("amount"));
    assert!(llm.prompts("finalyzer")[0].contains("Just the integer."));

    assert_eq!(
        std::fs::read_to_string(run.join("answer.txt")).unwrap(),
        "15\n"
    );
    assert!(std::fs::read_to_string(run.join("final.py"))
        .unwrap()
        .contains("print(sum("));
    assert!(std::fs::read_to_string(run.join("plan.md"))
        .unwrap()
        .contains("1. Sum the north amounts."));
    let summary = read_json(&run.join("summary.json"));
    assert_eq!(summary["status"], "sufficient");
    assert_eq!(summary["rounds"], 1);
    assert_eq!(summary["llm"]["calls"], 4);
    assert!(summary["llm"]["usage"]["prompt_tokens"].as_u64().unwrap() > 0);
    let kinds: Vec<String> = trace(&run)
        .iter()
        .map(|e| e["kind"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(kinds.first().map(String::as_str), Some("start"));
    assert_eq!(kinds.last().map(String::as_str), Some("finish"));
    assert_eq!(kinds.iter().filter(|k| *k == "llm").count(), 4);
    assert_eq!(kinds.iter().filter(|k| *k == "exec").count(), 2);
    let exec = trace(&run)
        .into_iter()
        .find(|e| e["kind"] == "exec")
        .unwrap();
    assert_eq!(exec["exit_code"], 0);
    assert_eq!(exec["stdout"].as_str().unwrap().trim(), "north total 15");

    check_notebook(&run.join("run.ipynb"));
}

/// `run.ipynb` is an nbformat-4 notebook: checked by the `nbformat` package's validator
/// in the test venv, and its cells by hand.
fn check_notebook(path: &Path) {
    let nb = read_json(path);
    assert_eq!(nb["nbformat"], 4);
    let cells = nb["cells"].as_array().unwrap();
    assert!(cells.iter().any(|c| c["cell_type"] == "markdown"
        && c["source"][0].as_str().unwrap().starts_with("## Step 1")));
    assert!(cells
        .iter()
        .any(|c| c["cell_type"] == "code" && !c["outputs"].as_array().unwrap().is_empty()));
    let py = test_python();
    let check = std::process::Command::new(&py)
        .args([
            "-c",
            "import sys, nbformat; nbformat.validate(nbformat.read(sys.argv[1], as_version=4)); print('valid')",
        ])
        .arg(path)
        .output()
        .unwrap();
    assert!(
        check.status.success(),
        "nbformat rejects {}: {}",
        path.display(),
        String::from_utf8_lossy(&check.stderr)
    );
}

#[test]
fn rounds_run_out_and_the_latest_plan_is_finalized() {
    let (lake, csv) = sales_lake();
    let csv = csv.display().to_string();
    let llm = ScriptedLlm::start();
    for (i, step) in ["Load it.", "Count rows.", "Count regions."]
        .iter()
        .enumerate()
    {
        llm.say("planner", step);
        llm.say("coder", &fenced(&format!("print('step {}')", i + 1)));
    }
    for _ in 0..2 {
        llm.say("verifier", "insufficient");
        llm.say("router", "Add Step");
    }
    llm.say("finalyzer", &fenced("print(2)"));
    let run = lake.path().join("run");
    let out = ok(&ask(
        &llm,
        lake.path(),
        &[
            "How many regions?",
            "--files",
            &csv,
            "--python",
            &python3(),
            "--max-rounds",
            "2",
            "--out",
            run.to_str().unwrap(),
        ],
    ));
    assert_eq!(out.trim(), "2");
    assert!(llm.left().is_empty(), "unused replies: {:?}", llm.left());
    assert_eq!(
        llm.prompts("verifier").len(),
        2,
        "one verifier call per round"
    );
    let fin = &llm.prompts("finalyzer")[0];
    assert_eq!(
        section(fin, "# Plan"),
        "1. Load it.\n2. Count rows.\n3. Count regions."
    );
    assert!(section(fin, "# Its output").contains("step 3"));
    let summary = read_json(&run.join("summary.json"));
    assert_eq!(summary["status"], "max_rounds");
    assert_eq!(summary["rounds"], 2);
}

#[test]
fn the_debugger_fixes_the_latest_attempt_not_the_original() {
    let (lake, csv) = sales_lake();
    let csv = csv.display().to_string();
    // `Amt`, not `Amount`: a column written in another spelling is repaired before the
    // script runs, and this test needs a KeyError for the debugger.
    let original = format!("import csv\nrows = list(csv.DictReader(open({csv:?})))\nprint(sum(int(r['Amt']) for r in rows))");
    let fix1 = format!("import csv\nrows = list(csv.DictReader(open({csv:?})))\ntotal = sum(int(r['amount']) for r in rows)\nprint(totl)");
    let fix2 = format!("import csv\nrows = list(csv.DictReader(open({csv:?})))\ntotal = sum(int(r['amount']) for r in rows)\nprint(total)");
    let llm = ScriptedLlm::start();
    llm.say("planner", "Sum the amounts.")
        .say("coder", &fenced(&original))
        .say("debugger", &fenced(&fix1))
        .say("debugger", &fenced(&fix2))
        .say("verifier", "sufficient")
        .say("finalyzer", &fenced("print(35)"));
    let run = lake.path().join("run");
    let out = ok(&ask(
        &llm,
        lake.path(),
        &[
            "Total sales?",
            "--files",
            &csv,
            "--python",
            &python3(),
            "--out",
            run.to_str().unwrap(),
        ],
    ));
    assert_eq!(out.trim(), "35");
    let debugger = llm.prompts("debugger");
    assert_eq!(debugger.len(), 2);
    assert_eq!(base_code(&debugger[0]), original);
    assert!(section(&debugger[0], "# Error").contains("KeyError: 'Amt'"));
    // The descriptions (the real column names) are in the debugger's prompt.
    assert!(section(&debugger[0], "# Data files").contains("amount"));
    assert_eq!(
        base_code(&debugger[1]),
        fix1,
        "the second fix starts from the first"
    );
    assert!(section(&debugger[1], "# Error").contains("NameError"));
    // The verifier judged the fixed script and its output.
    let verifier = &llm.prompts("verifier")[0];
    assert_eq!(base_code(verifier), fix2);
    assert_eq!(section(verifier, "# Its output"), "35");
    let execs: Vec<Value> = trace(&run)
        .into_iter()
        .filter(|e| e["kind"] == "exec")
        .collect();
    let purposes: Vec<&str> = execs
        .iter()
        .map(|e| e["purpose"].as_str().unwrap())
        .collect();
    assert_eq!(
        purposes,
        ["solution", "solution debug 1", "solution debug 2", "final"]
    );
    assert_ne!(execs[0]["exit_code"], 0);
}

#[test]
fn a_script_that_keeps_failing_makes_the_round_insufficient_without_the_verifier() {
    let (lake, csv) = sales_lake();
    let csv = csv.display().to_string();
    let llm = ScriptedLlm::start();
    llm.say("planner", "Read the file.")
        .say(
            "coder",
            &fenced("raise SystemExit('no such column: Amount')"),
        )
        .say("debugger", &fenced("raise SystemExit('still no column')"))
        .say("router", "Step 1")
        .say("planner", "Read the file with csv.")
        .say("coder", &fenced("print('rows 3')"))
        .say("verifier", "sufficient")
        .say("finalyzer", &fenced("print(3)"));
    let run = lake.path().join("run");
    let out = ok(&ask(
        &llm,
        lake.path(),
        &[
            "Rows?",
            "--files",
            &csv,
            "--python",
            &python3(),
            "--debug-attempts",
            "1",
            "--out",
            run.to_str().unwrap(),
        ],
    ));
    assert_eq!(out.trim(), "3");
    assert!(llm.left().is_empty(), "unused replies: {:?}", llm.left());
    // Round 1 went straight to the router; Step 1 emptied the plan, so the next script
    // was written from scratch (the first-step coder prompt, no base code).
    assert_eq!(
        roles(&llm),
        [
            "planner",
            "coder",
            "debugger",
            "router",
            "planner",
            "coder",
            "verifier",
            "finalyzer"
        ]
    );
    assert!(
        section(&llm.prompts("router")[0], "# Output of the script").contains("still no column")
    );
    assert_eq!(
        section(&llm.prompts("planner")[1], "# Plan so far"),
        "(no steps: the plan starts over)"
    );
    assert!(!llm.prompts("coder")[1].contains("# Current script"));
    let summary = read_json(&run.join("summary.json"));
    assert_eq!(
        summary["verdicts"],
        serde_json::json!(["insufficient", "sufficient"])
    );
    let verdicts: Vec<Value> = trace(&run)
        .into_iter()
        .filter(|e| e["kind"] == "verdict")
        .collect();
    assert!(verdicts[0]["reply"].as_str().unwrap().contains("not asked"));
}

#[test]
fn unreadable_verifier_and_router_replies_take_the_documented_fallback() {
    let (lake, csv) = sales_lake();
    let csv = csv.display().to_string();
    let llm = ScriptedLlm::start();
    llm.say("planner", "Load.")
        .say("coder", &fenced("print('loaded')"))
        .say("verifier", "Hard to say, it depends.")
        // Asked again for the verdict alone, it still gives none.
        .say("verifier", "Maybe.")
        .say("router", "I would rather rethink things.")
        .say("planner", "Count.")
        .say("coder", &fenced("print('loaded')\nprint('count 3')"))
        .say("verifier", "{\"verdict\": \"SUFFICIENT\"}")
        .say("finalyzer", &fenced("print(3)"));
    let run = lake.path().join("run");
    ok(&ask(
        &llm,
        lake.path(),
        &[
            "Rows?",
            "--files",
            &csv,
            "--python",
            &python3(),
            "--out",
            run.to_str().unwrap(),
        ],
    ));
    assert!(llm.left().is_empty(), "unused replies: {:?}", llm.left());
    let t = trace(&run);
    let verdict = t.iter().find(|e| e["kind"] == "verdict").unwrap();
    assert_eq!(verdict["verdict"], "insufficient");
    assert_eq!(verdict["fallback"], true);
    let route = t.iter().find(|e| e["kind"] == "route").unwrap();
    assert_eq!(route["route"]["decision"], "add_step");
    assert_eq!(route["fallback"], true);
    assert_eq!(route["kept"], 1);
    let notes: Vec<&str> = t
        .iter()
        .filter(|e| e["kind"] == "note" || e["kind"] == "rule")
        .map(|e| e["message"].as_str().unwrap())
        .collect();
    assert!(notes
        .iter()
        .any(|n| n.contains("verifier reply not readable")));
    assert!(notes
        .iter()
        .any(|n| n.contains("verifier reply still not readable")));
    assert!(notes
        .iter()
        .any(|n| n.contains("router reply not readable")));
    // Add Step kept step 1 and its script as the base.
    assert_eq!(base_code(&llm.prompts("coder")[1]), "print('loaded')");
}

#[test]
fn a_rate_limited_call_is_retried_and_counted_once() {
    let (lake, csv) = sales_lake();
    let csv = csv.display().to_string();
    let llm = ScriptedLlm::start();
    llm.push(
        "planner",
        Reply::Status {
            code: 429,
            retry_after: Some(0),
        },
    )
    .say("planner", "Count rows.")
    .say("coder", &fenced("print(3)"))
    .say("verifier", "sufficient")
    .say("finalyzer", &fenced("print(3)"));
    let run = lake.path().join("run");
    ok(&ask(
        &llm,
        lake.path(),
        &[
            "Rows?",
            "--files",
            &csv,
            "--python",
            &python3(),
            "--out",
            run.to_str().unwrap(),
        ],
    ));
    assert_eq!(llm.requests().len(), 5, "4 calls, one of them sent twice");
    let summary = read_json(&run.join("summary.json"));
    assert_eq!(summary["llm"]["calls"], 4);
    let llm_events: Vec<Value> = trace(&run)
        .into_iter()
        .filter(|e| e["kind"] == "llm")
        .collect();
    assert_eq!(llm_events.len(), 4);
    assert_eq!(llm_events[0]["attempts"], 2);
    let summed: u64 = llm_events
        .iter()
        .map(|e| e["prompt_tokens"].as_u64().unwrap())
        .sum();
    assert_eq!(summary["llm"]["usage"]["prompt_tokens"], summed);
}

#[test]
fn a_recorded_run_replays_without_the_server() {
    let (lake, csv) = sales_lake();
    let csv = csv.display().to_string();
    let cassette = lake.path().join("cassette.jsonl");
    let args = |run: &Path| -> Vec<String> {
        vec![
            "North?".into(),
            "--files".into(),
            csv.clone(),
            "--python".into(),
            python3(),
            "--out".into(),
            run.display().to_string(),
        ]
    };
    {
        let llm = ScriptedLlm::start();
        llm.say("planner", "Sum north.")
            .say("coder", &fenced("print('north 15')"))
            .say("verifier", "sufficient")
            .say("finalyzer", &fenced("print(15)"));
        let mut a = args(&lake.path().join("run1"));
        a.extend(["--record".into(), cassette.display().to_string()]);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        assert_eq!(ok(&ask(&llm, lake.path(), &a)).trim(), "15");
    }
    // The server is gone, and no model or key is configured.
    let mut a = args(&lake.path().join("run2"));
    a.extend(["--replay".into(), cassette.display().to_string()]);
    let out = lakestar()
        .arg("ask")
        .args(&a)
        .current_dir(lake.path())
        .output()
        .unwrap();
    assert_eq!(ok(&out).trim(), "15");
    let summary = read_json(&lake.path().join("run2/summary.json"));
    assert_eq!(summary["status"], "sufficient");
}

#[test]
fn without_a_configured_llm_ask_says_how_to_configure_one() {
    let (lake, csv) = sales_lake();
    let err = crate::common::ask_without_a_model(lakestar(), lake.path(), &csv);
    assert!(
        err.contains("LAKESTAR_MODEL") && err.contains("lakestar.toml"),
        "{err}"
    );
}
