//! The loop with the failure modes of small local models, scripted: a finalyzer that
//! fails or dumps, a verifier that rubber-stamps, a debugger that repeats itself, a step
//! naming a column no given file has. Real HTTP to the scripted server, real Python on
//! real CSV files.

use crate::agent::{ask, base_code, fenced, ok, read_json, roles, sales_lake, section, trace};
use crate::common::{index_into, python3, test_python};
use crate::llm_server::ScriptedLlm;
use lakestar::agent::context::{self, FileCount, IndexRetriever, Retriever};
use lakestar::agent::llm::{Cassette, LlmClient, LlmConfig};
use lakestar::agent::prompts::Prompts;
use lakestar::agent::run::LoopOptions;
use lakestar::agent::sandbox::{Limits, Python, Sandbox};
use lakestar::agent::{Agent, AnswerSource, Status};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

/// A script printing the north and south totals of `csv` with labels.
pub(crate) fn totals_script(csv: &str) -> String {
    totals_under(csv, "total:")
}

/// [`totals_script`] that also gives each region's sum with `answer("REGION_total", …)`.
pub(crate) fn totals_answered(csv: &str) -> String {
    format!(
        "{}\nfor region in ('north', 'south'):\n    answer(region + '_total', sum(int(r['amount']) for r in rows if r['region'] == region))",
        totals_script(csv)
    )
}

/// [`totals_script`] with each region's sum printed as `REGION LABEL SUM`.
pub(crate) fn totals_under(csv: &str, label: &str) -> String {
    format!(
        "import csv\nrows = list(csv.DictReader(open({csv:?})))\nfor region in ('north', 'south'):\n    print(region, {label:?}, sum(int(r['amount']) for r in rows if r['region'] == region))"
    )
}

/// `lakestar ask QUESTION --files CSV --python PY --out LAKE/run-PORT EXTRA…` (a run
/// directory per scripted server); returns the output and the run directory.
pub(crate) fn ask_pinned(
    llm: &ScriptedLlm,
    lake: &Path,
    csv: &str,
    python: &str,
    question: &str,
    extra: &[&str],
) -> (Output, PathBuf) {
    let run = lake.join(format!(
        "run-{}",
        llm.base_url().rsplit(':').next().unwrap().replace('/', "")
    ));
    let mut args = vec![
        question,
        "--files",
        csv,
        "--python",
        python,
        "--out",
        run.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    (ask(llm, lake, &args), run)
}

/// The purposes of the executions, in order.
/// The north-region question over the pinned sales file, answered `@north_total[15]`
/// with every scripted reply used; the CLI's output and the run directory.
fn ask_north_total(llm: &ScriptedLlm, lake: &Path, csv: &str) -> (Output, PathBuf) {
    let (out, run) = ask_pinned(
        llm,
        lake,
        csv,
        &python3(),
        "How much did the north region sell?",
        &[
            "--guidelines",
            "@north_total[value]",
            "--answer",
            "north_total=value",
            "--answer-form",
            "tagged",
        ],
    );
    assert_eq!(ok(&out).trim(), "@north_total[15]");
    assert!(llm.left().is_empty(), "unused replies: {:?}", llm.left());
    (out, run)
}

pub(crate) fn purposes(run: &Path) -> Vec<String> {
    events(run, "exec")
        .iter()
        .map(|e| e["purpose"].as_str().unwrap().to_string())
        .collect()
}

pub(crate) fn events(run: &Path, kind: &str) -> Vec<Value> {
    trace(run)
        .into_iter()
        .filter(|e| e["kind"] == kind)
        .collect()
}

/// The messages of notes and of rules' firings, in order.
pub(crate) fn notes(run: &Path) -> Vec<String> {
    trace(run)
        .into_iter()
        .filter(|e| e["kind"] == "note" || e["kind"] == "rule")
        .map(|e| e["message"].as_str().unwrap().to_string())
        .collect()
}

/// The paper's finalyzer formats the verified output; when its script fails even after
/// debugging, the run says so and gives no answer rather than one read by a pattern.
#[test]
fn a_failing_final_script_gives_no_answer_and_says_so() {
    let (lake, csv) = sales_lake();
    let csv = csv.display().to_string();
    let llm = ScriptedLlm::start();
    llm.say("planner", "Sum the amount of each region.")
        .say("coder", &fenced(&totals_script(&csv)))
        .say(
            "verifier",
            "north_total: 15\nsouth_total: 20\nVerdict: sufficient",
        )
        // The finalyzer re-solves, badly; its fix fails too.
        .say("finalyzer", &fenced("n, s = 15\nprint(n, s)"))
        .say("debugger", &fenced("n, s = [15]\nprint(n, s)"));
    let (out, run) = ask_pinned(
        &llm,
        lake.path(),
        &csv,
        &python3(),
        "What did the north and the south region sell?",
        &[
            "--debug-attempts",
            "1",
            "--guidelines",
            "@north_total[value], @south_total[value] where value is an integer.",
            "--answer",
            "north_total=value",
            "--answer",
            "south_total=value",
            "--answer-form",
            "tagged",
        ],
    );
    assert!(llm.left().is_empty(), "unused replies: {:?}", llm.left());
    let summary = read_json(&run.join("summary.json"));
    assert_eq!(
        summary["status"],
        "no_answer",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(summary["answer"].is_null());
    assert!(notes(&run)
        .iter()
        .any(|n| n.contains("the final script failed: no answer")));
    // The finalyzer was given the verified output, the quantities and the guidelines.
    let fin = &llm.prompts("finalyzer")[0];
    assert!(section(fin, "# Its output").contains("north total: 15"));
    assert!(section(fin, "# What the answer must give").contains("@south_total[value]"));
    assert!(fin.contains("Do NOT solve the task again"));
}

#[test]
fn a_sufficient_over_an_output_lacking_a_requested_quantity_does_not_end_the_loop() {
    let (lake, csv) = sales_lake();
    let csv = csv.display().to_string();
    let load = format!("print(open({csv:?}).read())");
    let llm = ScriptedLlm::start();
    llm.say("planner", "Load sales.csv and print it.")
        .say("coder", &fenced(&format!("{load}\nanswer('rows', 4)")))
        // The small model's rubber stamp after a script that only loaded the data.
        .say("verifier", "**Verdict:** Sufficient.")
        .say("router", "Add Step")
        .say(
            "planner",
            "Sum the amount of the north region and print it.",
        )
        .say(
            "coder",
            &fenced(&format!(
                "{load}\nprint('north total:', 10 + 5)\nanswer('north_total', 10 + 5)"
            )),
        )
        .say(
            "verifier",
            "- north_total: printed, 15\n- constraints: none\nVerdict: sufficient",
        );
    let (out, run) = ask_north_total(&llm, lake.path(), &csv);
    assert_eq!(
        roles(&llm),
        ["planner", "coder", "verifier", "router", "planner", "coder", "verifier"]
    );
    // The router and the next-step planner are told what is missing.
    for prompt in [&llm.prompts("router")[0], &llm.prompts("planner")[1]] {
        assert!(
            section(prompt, "# What is missing").contains("No value was given for: north_total"),
            "{prompt}"
        );
    }
    // The verifier walks through the quantities it is given.
    let v = &llm.prompts("verifier")[0];
    assert!(section(v, "# What the question asks for").contains("north_total"));
    assert!(v.contains("For EACH quantity"));
    let summary = read_json(&run.join("summary.json"));
    assert_eq!(
        summary["verdicts"],
        serde_json::json!(["insufficient", "sufficient"])
    );
    let verdicts = events(&run, "verdict");
    assert_eq!(verdicts[0]["verifier"], "sufficient");
    assert_eq!(verdicts[0]["verdict"], "insufficient");
    assert_eq!(verdicts[0]["missing"], serde_json::json!(["north_total"]));
    assert_eq!(verdicts[1]["missing"], serde_json::json!([]));
    // Progress shows what is missing.
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("round 1 · output lacks north_total"), "{err}");
}

/// The local model's verifier answered with the answer itself (`@mean_fare[34.65]`) and
/// no verdict: asked once more for the verdict line, it ends the loop in round 1 instead
/// of spending rounds on an unread verdict.
#[test]
fn a_verifier_reply_without_a_verdict_is_asked_again_for_it() {
    let (lake, csv) = sales_lake();
    let csv = csv.display().to_string();
    let llm = ScriptedLlm::start();
    llm.say(
        "planner",
        "Sum the amount of the north region and print it.",
    )
    .say(
        "coder",
        &fenced(&format!("open({csv:?}).read()\nprint('north total:', 15)")),
    )
    .say("verifier", "@north_total[15]")
    .say("verifier", "Verdict: sufficient")
    .say("finalyzer", &fenced("print('@north_total[15]')"));
    let (_, run) = ask_north_total(&llm, lake.path(), &csv);
    assert_eq!(
        roles(&llm),
        ["planner", "coder", "verifier", "verifier", "finalyzer"]
    );
    let again = &llm.prompts("verifier")[1];
    assert!(again.contains("gave no verdict"), "{again}");
    assert!(section(again, "# Its output").contains("north total: 15"));
    let summary = read_json(&run.join("summary.json"));
    assert_eq!(summary["verdicts"], serde_json::json!(["sufficient"]));
    assert!(notes(&run).iter().any(|n| n.contains("asked again")));
}

#[test]
fn a_debugger_that_repeats_a_script_changes_course_and_the_repeat_is_not_run() {
    let (lake, csv) = sales_lake();
    let csv = csv.display().to_string();
    let broken = format!(
        "import csv\nrows = list(csv.DictReader(open({csv:?})))\ntotal = sum(int(r['amount']) for r in rows)\ncount, mean = total\nprint('total:', total)"
    );
    // The same script with a comment and other spacing: a repeat.
    let same = broken.replace("count, mean = total", "# unpack\ncount,  mean = total   ");
    let fixed = broken.replace("count, mean = total\n", "");
    let llm = ScriptedLlm::start();
    llm.say("planner", "Sum the amounts.")
        .say("coder", &fenced(&broken))
        .say("debugger", &fenced(&same))
        .say("debugger", &fenced(&fixed))
        .say("verifier", "sufficient")
        .say("finalyzer", &fenced("print(35)"));
    let (out, run) = ask_pinned(&llm, lake.path(), &csv, &python3(), "Total sales?", &[]);
    let out = ok(&out);
    assert_eq!(out.trim(), "35");
    assert!(llm.left().is_empty(), "unused replies: {:?}", llm.left());
    // The repeat was never run: the original, then the fix.
    assert_eq!(purposes(&run), ["solution", "solution debug 1", "final"]);
    assert!(notes(&run)
        .iter()
        .any(|n| n.contains("returned attempt 1's script again (not run)")));
    // The second ask changed course: another temperature, the earlier attempt and its
    // error in the prompt.
    let asks: Vec<_> = llm
        .requests()
        .into_iter()
        .filter(|r| r.role == "debugger")
        .collect();
    assert_eq!(asks.len(), 2);
    assert!(asks[0].body.get("temperature").is_none());
    assert_eq!(
        asks[1].body["temperature"].as_f64(),
        Some(0.8999999761581421)
    );
    let first = section(&asks[0].prompt(), "# Earlier attempts").to_string();
    assert!(first.contains("first fix"), "{first}");
    let second = asks[1].prompt();
    let earlier = section(&second, "# Earlier attempts");
    assert!(earlier.contains("Do NOT return any of them again"));
    assert!(earlier.contains("count, mean = total"));
    assert!(earlier.contains("cannot unpack"));
    assert_eq!(base_code(&asks[1].prompt()), broken);
}

#[test]
fn the_same_error_again_makes_the_debugger_change_course() {
    let (lake, csv) = sales_lake();
    let csv = csv.display().to_string();
    let broken = "total = 35\nmean = total / 0\nprint(total)";
    let same_error = "total = 35\nmean = total / (1 - 1)\nprint(total)";
    let llm = ScriptedLlm::start();
    llm.say("planner", "Sum the amounts.")
        .say("coder", &fenced(broken))
        .say("debugger", &fenced(same_error))
        .say("debugger", &fenced("print('total:', 35)"))
        .say("verifier", "sufficient")
        .say("finalyzer", &fenced("print(35)"));
    let (out, run) = ask_pinned(&llm, lake.path(), &csv, &python3(), "Total sales?", &[]);
    assert_eq!(ok(&out).trim(), "35");
    assert!(llm.left().is_empty(), "unused replies: {:?}", llm.left());
    assert_eq!(
        purposes(&run),
        ["solution", "solution debug 1", "solution debug 2", "final"]
    );
    assert!(notes(&run)
        .iter()
        .any(|n| n.contains("failed with the same error as an earlier attempt; changing course")));
    let asks: Vec<_> = llm
        .requests()
        .into_iter()
        .filter(|r| r.role == "debugger")
        .collect();
    assert!(asks[0].body.get("temperature").is_none());
    assert!(asks[1].body.get("temperature").is_some());
    let second = asks[1].prompt();
    let earlier = section(&second, "# Earlier attempts");
    assert!(earlier.contains("## Attempt 1") && earlier.contains("total / 0"));
    assert!(earlier.contains("## Attempt 2") && earlier.contains("total / (1 - 1)"));
    assert!(earlier.contains("ZeroDivisionError"));
}

#[test]
fn a_debugger_that_keeps_repeating_itself_gives_the_step_back_to_the_router() {
    let (lake, csv) = sales_lake();
    let csv = csv.display().to_string();
    let broken = "total = 35\ncount, mean = total\nprint(total)";
    let llm = ScriptedLlm::start();
    llm.say("planner", "Sum the amounts.")
        .say("coder", &fenced(broken))
        .say("debugger", &fenced(broken))
        .say("debugger", &fenced(&format!("# same again\n{broken}")))
        .say("router", "Step 1")
        .say("planner", "Sum the amount column with csv.")
        .say("coder", &fenced("print('total:', 35)"))
        .say("verifier", "sufficient")
        .say("finalyzer", &fenced("print(35)"));
    let (out, run) = ask_pinned(
        &llm,
        lake.path(),
        &csv,
        &python3(),
        "Total sales?",
        &["--debug-attempts", "3"],
    );
    let out = ok(&out);
    assert_eq!(out.trim(), "35");
    assert!(llm.left().is_empty(), "unused replies: {:?}", llm.left());
    assert_eq!(purposes(&run), ["solution", "solution", "final"]);
    assert!(notes(&run)
        .iter()
        .any(|n| n.contains("after changing course (not run); debugging stops")));
    let verdicts = events(&run, "verdict");
    assert!(verdicts[0]["reply"].as_str().unwrap().contains("not asked"));
}

#[test]
fn a_column_no_pinned_file_has_is_said_in_the_answer() {
    let (lake, csv) = sales_lake();
    let csv = csv.display().to_string();
    let llm = ScriptedLlm::start();
    llm.say("planner", "Average the amount column.")
        .say("coder", &fenced("print('mean amount:', 35 / 3)"))
        .say("verifier", "sufficient")
        .say("finalyzer", &fenced("print(11.67)"));
    let (out, run) = ask_pinned(
        &llm,
        lake.path(),
        &csv,
        &python3(),
        "What is the mean of the \"Close Price\" column?",
        &[],
    );
    let out = ok(&out);
    assert!(out.starts_with("11.67\n"), "{out}");
    assert!(
        out.contains("no given file has a column or key named \"Close Price\""),
        "{out}"
    );
    let summary = read_json(&run.join("summary.json"));
    assert_eq!(summary["unknown_names"], serde_json::json!(["Close Price"]));
    let files = events(&run, "files");
    assert_eq!(files.len(), 1);
    assert_eq!(files[0]["added"], serde_json::json!([]));
    assert!(notes(&run).iter().any(|n| n.contains("files pinned")));
}

/// An agent on the scripted server and the test venv's Python, built in-process (the
/// CLI passes no retriever yet).
fn agent(llm: &ScriptedLlm) -> Agent {
    let config = LlmConfig {
        base_url: llm.base_url(),
        model: Some("scripted-model".into()),
        backoff_base: Duration::from_millis(1),
        timeout: Duration::from_secs(30),
        ..LlmConfig::default()
    };
    let python = Python::resolve(Some(&test_python()), Path::new("/nonexistent")).unwrap();
    Agent {
        llm: LlmClient::new(config, Cassette::Off).unwrap(),
        sandbox: Sandbox::new(python, Limits::default()),
        prompts: Prompts::builtin(),
    }
}

/// An indexed lake of sales.csv and stocks.csv; returns (tempdir, index, sales, stocks).
fn two_file_lake() -> (tempfile::TempDir, PathBuf, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let lake = dir.path().join("lake");
    std::fs::create_dir(&lake).unwrap();
    std::fs::write(
        lake.join("sales.csv"),
        "region,amount\nnorth,10\nsouth,20\nnorth,5\n",
    )
    .unwrap();
    std::fs::write(
        lake.join("stocks.csv"),
        "Date,Close Price,Volume\n2024-01-02,10.5,100\n2024-01-03,11.5,120\n2024-01-04,11.0,90\n",
    )
    .unwrap();
    let idx = index_into(dir.path(), &lake);
    let sales = lake.join("sales.csv").canonicalize().unwrap();
    let stocks = lake.join("stocks.csv").canonicalize().unwrap();
    (dir, idx, sales, stocks)
}

/// `Agent::ask` in-process over `files` with `retriever`, recording into `run`.
fn ask_with_retriever(
    llm: &ScriptedLlm,
    question: &str,
    files: &[context::FileContext],
    retriever: &dyn Retriever,
    run: &Path,
) -> lakestar::agent::Summary {
    let (summary, stopped) = ask_with_rules(llm, question, files, retriever, run, "default");
    assert!(stopped.is_none(), "{stopped:?}");
    summary
}

/// [`ask_with_retriever`] with the rules `rules` (`--rules`), the run's error kept.
fn ask_with_rules(
    llm: &ScriptedLlm,
    question: &str,
    files: &[context::FileContext],
    retriever: &dyn Retriever,
    run: &Path,
    rules: &str,
) -> (
    lakestar::agent::Summary,
    Option<lakestar::agent::AgentError>,
) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(agent(llm).ask(
        question,
        files,
        "pinned",
        Some(retriever),
        &LoopOptions {
            max_rounds: 3,
            debug_attempts: 1,
            guidelines: None,
            wanted: Vec::new(),
            form: Default::default(),
            mode: Default::default(),
            rules: rules.parse().unwrap(),
        },
        run,
        &|_| {},
    ))
    .unwrap()
}

#[test]
fn a_step_naming_a_column_no_file_has_goes_back_to_retrieval() {
    let (dir, idx, sales, stocks) = two_file_lake();
    // The run starts with the wrong file only.
    let files = context::pinned(std::slice::from_ref(&sales), Some(&idx), dir.path()).unwrap();
    assert_eq!(files[0].columns, ["region", "amount"]);
    let retriever = IndexRetriever::open(&idx, FileCount::Fixed(3)).unwrap();
    assert!(retriever
        .more("Close Price", std::slice::from_ref(&sales))
        .unwrap()
        .iter()
        .all(|f| f.path != sales));

    let llm = ScriptedLlm::start();
    let code = format!(
        "import pandas as pd\ndf = pd.read_csv({:?})\nprint('mean close price:', round(df['Close Price'].mean(), 2))",
        stocks.display().to_string()
    );
    llm.say("planner", "Average the 'Close Price' column.")
        .say("coder", &fenced(&code))
        .say("verifier", "Verdict: sufficient")
        .say("finalyzer", &fenced("print(11.0)"));
    let run = dir.path().join("run");
    let summary = ask_with_retriever(
        &llm,
        "What is the mean of the \"Close Price\" column?",
        &files,
        &retriever,
        &run,
    );
    assert_eq!(summary.status, Status::Sufficient);
    assert_eq!(summary.answer.as_deref(), Some("11.0"));
    assert_eq!(summary.answer_source, Some(AnswerSource::FinalScript));
    assert!(summary.unknown_names.is_empty());
    let stocks_s = stocks.display().to_string();
    assert!(summary.files.contains(&stocks_s), "{:?}", summary.files);
    let added = events(&run, "files");
    assert_eq!(added.len(), 1);
    assert!(added[0]["added"]
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p == &Value::String(stocks_s.clone())));
    // The coder saw the new file, with the call that loads it by its absolute path.
    let coder = &llm.prompts("coder")[0];
    assert!(
        coder.contains(&format!("load: pd.read_csv({stocks_s:?}")),
        "{coder}"
    );
    assert!(coder.contains("Load each file with its `load:` line"));
    // The planner (before retrieval) saw only the pinned file.
    assert!(!llm.prompts("planner")[0].contains("stocks.csv"));
}

#[test]
fn a_key_error_on_a_name_the_question_asked_for_goes_back_to_retrieval() {
    let (dir, idx, sales, stocks) = two_file_lake();
    let files = context::pinned(std::slice::from_ref(&sales), Some(&idx), dir.path()).unwrap();
    let retriever = IndexRetriever::open(&idx, FileCount::Fixed(3)).unwrap();
    let stocks_s = stocks.display().to_string();
    let wrong = format!(
        "import pandas as pd\ndf = pd.read_csv({:?})\nprint('mean close price:', df['Close Price'].mean())",
        sales.display().to_string()
    );
    let right = wrong.replace(&sales.display().to_string(), &stocks_s);
    let llm = ScriptedLlm::start();
    llm.say("planner", "Average the close price.")
        .say("coder", &fenced(&wrong))
        .say("debugger", &fenced(&right))
        .say("verifier", "Verdict: sufficient")
        .say("finalyzer", &fenced("print(11.0)"));
    let run = dir.path().join("run");
    let summary = ask_with_retriever(
        &llm,
        "What is the mean close price?",
        &files,
        &retriever,
        &run,
    );
    assert_eq!(summary.status, Status::Sufficient);
    assert_eq!(summary.answer.as_deref(), Some("11.0"));
    assert!(summary.files.contains(&stocks_s), "{:?}", summary.files);
    // Nothing marked a column in the question or step: the KeyError did.
    let added = events(&run, "files");
    assert_eq!(added.len(), 1);
    assert_eq!(added[0]["round"], 0);
    assert!(added[0]["names"].as_str().unwrap().contains("Close Price"));
    // The debugger was shown the file retrieval added.
    let debugger = &llm.prompts("debugger")[0];
    assert!(section(debugger, "# Data files").contains(&stocks_s));
    assert!(!llm.prompts("coder")[0].contains(&stocks_s));
    assert!(events(&run, "rule")
        .iter()
        .any(|e| e["rule"] == "unknown-names"));

    // The unknown-names rule left out: no retrieval, the debugger sees the pinned file only.
    let llm = ScriptedLlm::start();
    llm.say("planner", "Average the close price.")
        .say("coder", &fenced(&wrong))
        .say("debugger", &fenced(&right));
    let run = dir.path().join("run-bare");
    let (summary, _) = ask_with_rules(
        &llm,
        "What is the mean close price?",
        &files,
        &retriever,
        &run,
        "default,-unknown-names",
    );
    assert!(!summary.files.contains(&stocks_s), "{:?}", summary.files);
    assert!(events(&run, "files").is_empty());
    assert!(!events(&run, "rule")
        .iter()
        .any(|e| e["rule"] == "unknown-names"));
    assert!(!section(&llm.prompts("debugger")[0], "# Data files").contains(&stocks_s));
}
