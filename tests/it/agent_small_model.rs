//! The loop against more failure modes of the local 1.5B model, scripted: a planner that
//! proposes a step the plan already has, rounds that end on a step that went astray after
//! an earlier output held every requested quantity, and scripts that cannot run as written
//! (a missing import, a description's `load:` line copied verbatim, a KeyError on a
//! column another given file has). Real HTTP to the scripted server, real Python.

use crate::agent::{base_code, fenced, ok, sales_lake};
use crate::agent_loop::{ask_pinned, events, notes, purposes, totals_answered, totals_script};
use crate::common::{python3, test_python};
use crate::llm_server::ScriptedLlm;
use std::path::{Path, PathBuf};

#[test]
fn a_step_the_plan_already_has_is_coded_anew_not_added_twice() {
    let (lake, csv) = sales_lake();
    let csv = csv.display().to_string();
    let rows = format!("print('rows:', len(open({csv:?}).read().splitlines()) - 1)");
    let llm = ScriptedLlm::start();
    llm.say("planner", "Count the rows of the sales file.")
        .say("coder", &fenced(&rows))
        .say("verifier", "Verdict: insufficient")
        .say("router", "Add Step")
        .say("planner", "Sum the `amount` of each region.")
        // The coder does not do what the step says.
        .say("coder", &fenced(&format!("{rows}\nprint('regions: 2')")))
        .say("verifier", "Verdict: insufficient")
        .say("router", "Add Step")
        // The same step again, other quoting: step 2 is coded anew on step 1's script.
        .say("planner", "sum the amount of each region")
        .say("coder", &fenced(&totals_script(&csv)))
        .say("verifier", "Verdict: sufficient")
        .say("finalyzer", &fenced("print(15)"));
    let (out, run) = ask_pinned(
        &llm,
        lake.path(),
        &csv,
        &python3(),
        "How much did the north region sell?",
        &["--debug-attempts", "0"],
    );
    assert_eq!(ok(&out).trim(), "15");
    assert!(llm.left().is_empty(), "unused replies: {:?}", llm.left());
    let plans = events(&run, "plan");
    let last = plans.last().unwrap()["steps"].as_array().unwrap().clone();
    assert_eq!(last.len(), 2, "{last:?}");
    assert_eq!(last[1], "sum the amount of each region");
    assert!(notes(&run)
        .iter()
        .any(|n| n.contains("proposed step 2 again; that step is coded anew")));
    let coders: Vec<_> = llm
        .requests()
        .into_iter()
        .filter(|r| r.role == "coder")
        .collect();
    assert_eq!(coders.len(), 3);
    assert!(coders[1].body.get("temperature").is_none());
    assert_eq!(
        coders[2].body["temperature"].as_f64(),
        Some(0.8999999761581421)
    );
    // Coded on the script of the kept step 1, not on the astray step 2's.
    assert_eq!(base_code(&coders[2].prompt()), rows);
}

/// The `last-complete` rule: rounds that end on a step gone astray finalize from the
/// latest plan whose script gave every requested value; left out, from the latest plan.
#[test]
fn rounds_that_end_astray_finalize_from_the_last_plan_that_gave_every_value() {
    let (lake, csv) = sales_lake();
    let csv = csv.display().to_string();
    let totals = format!(
        "{}\nanswer('north_total', sum(int(r['amount']) for r in rows if r['region'] == 'north'))",
        totals_script(&csv)
    );
    for off in [false, true] {
        let llm = ScriptedLlm::start();
        llm.say("planner", "Sum the amount of each region.")
            .say("coder", &fenced(&totals))
            // A verifier that says no to a complete output, and a plan that then goes astray.
            .say("verifier", "Verdict: insufficient")
            .say("router", "Add Step")
            .say("planner", "Keep only the rows of the south.")
            .say("coder", &fenced("print('rows kept: 1')"))
            .say("verifier", "Verdict: insufficient")
            .say("router", "Add Step")
            .say("planner", "Print the kept rows.")
            .say("coder", &fenced("print('row: south 20')"));
        if off {
            llm.say("finalyzer", &fenced("print('@north_total[20]')"));
        }
        let mut args = vec![
            "--max-rounds",
            "2",
            "--debug-attempts",
            "0",
            "--guidelines",
            "@north_total[value]",
            "--answer",
            "north_total=value",
            "--answer-form",
            "tagged",
        ];
        if off {
            args.extend(["--rules", "default,-last-complete"]);
        }
        let (out, run) = ask_pinned(
            &llm,
            lake.path(),
            &csv,
            &python3(),
            "How much did the north region sell?",
            &args,
        );
        assert!(llm.left().is_empty(), "unused replies: {:?}", llm.left());
        let fired = events(&run, "rule")
            .iter()
            .any(|e| e["rule"] == "last-complete");
        if off {
            // The latest plan printed the south's row: the finalyzer formats that.
            assert_eq!(ok(&out).trim(), "@north_total[20]");
            assert!(!fired);
        } else {
            // The first plan's values, written without a finalyzer call.
            assert_eq!(ok(&out).trim(), "@north_total[15]");
            assert!(llm.prompts("finalyzer").is_empty());
            assert!(fired);
            assert!(notes(&run).iter().any(|n| n.contains(
                "the latest script lacks a requested quantity: finalizing from the latest plan whose script gave every requested value (1 steps)"
            )));
        }
    }
}

#[test]
fn a_missing_import_and_a_copied_load_line_are_repaired_before_the_script_runs() {
    let (lake, csv) = sales_lake();
    let csv = csv.display().to_string();
    let python = test_python();
    // As the local model wrote it: no import, the description's `load:` line as is.
    let script = format!(
        "load: pd.read_csv({csv:?})\nprint('north total:', int(df[df['region'] == 'north']['amount'].sum()))"
    );
    let llm = ScriptedLlm::start();
    llm.say("planner", "Sum the amount of the north region.")
        .say("coder", &fenced(&script))
        .say("verifier", "Verdict: sufficient")
        .say("finalyzer", &fenced("print(15)"));
    let (out, run) = ask_pinned(
        &llm,
        lake.path(),
        &csv,
        python.to_str().unwrap(),
        "How much did the north region sell?",
        &["--debug-attempts", "0"],
    );
    assert_eq!(ok(&out).trim(), "15");
    assert!(llm.left().is_empty(), "unused replies: {:?}", llm.left());
    assert_eq!(purposes(&run), ["solution", "final"]);
    let exec = &events(&run, "exec")[0];
    assert_eq!(exec["exit_code"], 0, "{exec}");
    assert!(exec["stdout"].as_str().unwrap().contains("north total: 15"));
    let code = exec["code"].as_str().unwrap();
    assert!(
        code.starts_with("import pandas as pd\ndf = pd.read_csv("),
        "{code}"
    );
    let notes = notes(&run);
    assert!(notes
        .iter()
        .any(|n| n.contains("added the missing `import pandas as pd`")));
    assert!(notes
        .iter()
        .any(|n| n.contains("`load:` line was copied as is")));
}

#[test]
fn a_key_error_on_a_column_another_given_file_has_tells_the_debugger_which() {
    let lake = tempfile::tempdir().unwrap();
    let houses = lake.path().join("houses.csv");
    let people = lake.path().join("people.csv");
    std::fs::write(&houses, "rooms,price\n3,100\n4,150\n").unwrap();
    std::fs::write(&people, "name,age\nann,30\nbob,50\n").unwrap();
    let (houses, people) = (
        houses.canonicalize().unwrap(),
        people.canonicalize().unwrap(),
    );
    let wrong = format!(
        "import csv\nrows = list(csv.DictReader(open({:?})))\nprint('mean age:', sum(int(r['age']) for r in rows) / len(rows))",
        houses.display().to_string()
    );
    let right = wrong.replace(&houses.display().to_string(), &people.display().to_string());
    let llm = ScriptedLlm::start();
    llm.say("planner", "Compute the mean age.")
        .say("coder", &fenced(&wrong))
        .say("debugger", &fenced(&right))
        .say("verifier", "Verdict: sufficient")
        .say("finalyzer", &fenced("print(40)"));
    let people_arg = people.display().to_string();
    let (out, _run) = ask_pinned(
        &llm,
        lake.path(),
        &houses.display().to_string(),
        &python3(),
        "What is the mean age?",
        &["--debug-attempts", "1", "--files", &people_arg],
    );
    assert_eq!(ok(&out).trim(), "40");
    assert!(llm.left().is_empty(), "unused replies: {:?}", llm.left());
    let debugger = &llm.prompts("debugger")[0];
    let hint = format!(
        "Note: the column \"age\" is in `{}`; load the file that has it",
        people.display()
    );
    assert!(debugger.contains(&hint), "{debugger}");

    // The key-holders rule left out: the debugger gets the traceback alone.
    let llm = ScriptedLlm::start();
    llm.say("planner", "Compute the mean age.")
        .say("coder", &fenced(&wrong))
        .say("debugger", &fenced(&right))
        .say("verifier", "Verdict: sufficient")
        .say("finalyzer", &fenced("print(40)"));
    let (out, run) = ask_pinned(
        &llm,
        lake.path(),
        &houses.display().to_string(),
        &python3(),
        "What is the mean age?",
        &[
            "--debug-attempts",
            "1",
            "--files",
            &people_arg,
            "--rules",
            "default,-key-holders",
        ],
    );
    assert_eq!(ok(&out).trim(), "40");
    assert!(!llm.prompts("debugger")[0].contains(&hint));
    assert!(!events(&run, "rule")
        .iter()
        .any(|e| e["rule"] == "key-holders"));
}

/// Ask for the north's and the south's totals (two requested quantities) over the sales
/// file, and check the answer the scripted finalyzer gives; the run's directory.
fn north_and_south(llm: &ScriptedLlm, lake: &Path, csv: &str) -> PathBuf {
    let (out, run) = ask_pinned(
        llm,
        lake,
        csv,
        &python3(),
        "How much did the north and the south sell?",
        &[
            "--debug-attempts",
            "0",
            "--guidelines",
            "@north_total[value], @south_total[total sales of the south region]",
            "--answer",
            "north_total=value",
            "--answer",
            "south_total=total sales of the south region",
            "--answer-form",
            "tagged",
        ],
    );
    assert_eq!(ok(&out).trim(), "@north_total[15], @south_total[20]");
    assert!(llm.left().is_empty(), "unused replies: {:?}", llm.left());
    run
}

#[test]
fn a_step_that_computes_none_of_the_missing_quantities_is_replaced_by_one_that_does() {
    let (lake, csv) = sales_lake();
    let csv = csv.display().to_string();
    let north = format!(
        "import csv\nrows = list(csv.DictReader(open({csv:?})))\nn = sum(int(r['amount']) for r in rows if r['region'] == 'north')\nprint('north total:', n)\nanswer('north_total', n)"
    );
    let llm = ScriptedLlm::start();
    llm.say("planner", "Sum the amounts of the north.")
        .say("coder", &fenced(&north))
        .say("verifier", "Verdict: sufficient")
        .say("router", "Add Step")
        // Drifts to something no quantity needs.
        .say("planner", "Count the rows of the file.")
        .say("coder", &fenced(&totals_answered(&csv)))
        .say("verifier", "Verdict: sufficient");
    let run = north_and_south(&llm, lake.path(), &csv);
    let due = "Compute south_total (total sales of the south region) from the data, following every constraint of the question, print it labelled `south_total: <value>` and give it with `answer(\"south_total\", value)`.";
    let plans = events(&run, "plan");
    assert_eq!(plans.last().unwrap()["steps"][1], due);
    assert!(notes(&run).iter().any(|n| n.contains(
        "computes none of the missing quantities; asking for `south_total` instead of: Count the rows of the file."
    )));
    assert!(llm.prompts("coder")[1].contains(due));
}

/// The first step too (DABench q268: "compute the mean of `MEANPOT`" for a Shapiro–Wilk
/// question): it computes none of the requested quantities, so it asks for them.
#[test]
fn a_first_step_that_computes_none_of_the_requested_quantities_asks_for_them() {
    let (lake, csv) = sales_lake();
    let csv = csv.display().to_string();
    let llm = ScriptedLlm::start();
    llm.say("planner", "Count the rows of the file.")
        .say("coder", &fenced(&totals_script(&csv)))
        .say("verifier", "Verdict: sufficient")
        .say(
            "finalyzer",
            &fenced("print('@north_total[15], @south_total[20]')"),
        );
    let run = north_and_south(&llm, lake.path(), &csv);
    let due = "Compute north_total, south_total (total sales of the south region) from the data, following every constraint of the question, print each labelled with its name: `north_total: <value>`, `south_total: <value>`, and give each with `answer(\"north_total\", value)`, `answer(\"south_total\", value)`.";
    let plans = events(&run, "plan");
    assert_eq!(plans[0]["steps"][0], due);
    assert!(notes(&run).iter().any(|n| n.contains(
        "round 0: the planner's first step computes none of the requested quantities; asking for them instead of: Count the rows of the file."
    )));
    assert!(llm.prompts("coder")[0].contains(due));
    // A first step that computes one of them is kept as the planner wrote it.
    let llm = ScriptedLlm::start();
    llm.say("planner", "Sum the amounts of the north region.")
        .say("coder", &fenced(&totals_script(&csv)))
        .say("verifier", "Verdict: sufficient")
        .say("finalyzer", &fenced("print('@north_total[15]')"));
    let (out, run) = ask_pinned(
        &llm,
        lake.path(),
        &csv,
        &python3(),
        "How much did the north sell?",
        &[
            "--debug-attempts",
            "0",
            "--guidelines",
            "@north_total[value]",
            "--answer",
            "north_total=value",
            "--answer-form",
            "tagged",
        ],
    );
    assert_eq!(ok(&out).trim(), "@north_total[15]");
    assert_eq!(
        events(&run, "plan")[0]["steps"][0],
        "Sum the amounts of the north region."
    );
}

#[test]
fn a_step_that_still_fails_is_replaced_not_built_on() {
    let (lake, csv) = sales_lake();
    let csv = csv.display().to_string();
    let llm = ScriptedLlm::start();
    llm.say("planner", "Read the weekday of each sale.")
        .say("coder", &fenced("raise ValueError('boom')"))
        // The router adds a step after a step whose script failed.
        .say("router", "Add Step")
        .say("planner", "Sum the amount of each region.")
        .say("coder", &fenced(&totals_script(&csv)))
        .say("verifier", "Verdict: sufficient")
        .say("finalyzer", &fenced("print(15)"));
    let (out, run) = ask_pinned(
        &llm,
        lake.path(),
        &csv,
        &python3(),
        "How much did the north region sell?",
        &["--debug-attempts", "0"],
    );
    assert_eq!(ok(&out).trim(), "15");
    assert!(llm.left().is_empty(), "unused replies: {:?}", llm.left());
    let plans = events(&run, "plan");
    let last = plans.last().unwrap()["steps"].as_array().unwrap().clone();
    assert_eq!(last, ["Sum the amount of each region."], "{last:?}");
    assert!(notes(&run)
        .iter()
        .any(|n| n.contains("step 1 still fails after debugging; the next step replaces it")));
    // The second step is coded from scratch (the first-step prompt), not on the failed
    // script.
    let coders = llm.prompts("coder");
    assert_eq!(coders.len(), 2);
    assert!(!coders[1].contains("boom"), "{}", coders[1]);
    assert!(coders[1].contains("Write a Python script that carries out one step"));
}

#[test]
fn a_constraint_the_verifier_marks_not_applied_outweighs_its_sufficient() {
    let (lake, csv) = sales_lake();
    let csv = csv.display().to_string();
    let big = format!(
        "import csv\nrows = list(csv.DictReader(open({csv:?})))\nprint('north total:', sum(int(r['amount']) for r in rows if r['region'] == 'north' and int(r['amount']) > 6))"
    );
    let llm = ScriptedLlm::start();
    llm.say("planner", "Sum the amount of each region.")
        .say("coder", &fenced(&totals_script(&csv)))
        // The walk-through marks the constraint not applied, and still ends "sufficient".
        .say(
            "verifier",
            "- north total: 15\n1. Count only sales above 6: not applied\nVerdict: sufficient",
        )
        .say("router", "Add Step")
        .say("planner", "Keep only the sales above 6.")
        .say("coder", &fenced(&big))
        .say(
            "verifier",
            "1. Count only sales above 6: applied\nVerdict: sufficient",
        )
        .say("finalyzer", &fenced("print(10)"));
    let (out, run) = ask_pinned(
        &llm,
        lake.path(),
        &csv,
        &python3(),
        "How much did the north region sell? Count only sales above 6.",
        &[],
    );
    assert_eq!(ok(&out).trim(), "10");
    assert!(llm.left().is_empty(), "unused replies: {:?}", llm.left());
    // The verifier was shown the constraint, numbered.
    let verifier = llm.prompts("verifier");
    assert!(
        verifier[0].contains("# Constraints to check\n1. Count only sales above 6."),
        "{}",
        verifier[0]
    );
    let verdicts = events(&run, "verdict");
    assert_eq!(verdicts[0]["verdict"], "insufficient");
    assert_eq!(verdicts[0]["verifier"], "sufficient");
    assert_eq!(verdicts[0]["unapplied"][0], "Count only sales above 6.");
    assert_eq!(verdicts[1]["verdict"], "sufficient");
    assert!(notes(&run)
        .iter()
        .any(|n| n.contains("marked 1 of the question's constraints not applied")));
    // The router and the planner are told which constraint is not applied.
    let router = &llm.prompts("router")[0];
    assert!(
        router.contains("not applied by the script: \"Count only sales above 6.\""),
        "{router}"
    );
    assert!(llm.prompts("planner")[1].contains("Count only sales above 6."));
}

/// DABench q271: the 1.5B coder re-printed the same means for a new step, five rounds
/// running. An output that comes back unchanged is not judged again: its step is dropped
/// and the next asks for the missing quantities, without the verifier, router or planner.
#[test]
fn a_step_whose_output_is_the_last_ones_again_gives_way_to_the_missing_quantities() {
    let (lake, csv) = sales_lake();
    let csv = csv.display().to_string();
    let rows = format!(
        "n = len(open({csv:?}).read().splitlines()) - 1\nprint('rows:', n)\nanswer('rows', n)"
    );
    let llm = ScriptedLlm::start();
    llm.say("planner", "Sum the amounts of the north region.")
        // The coder does not do what the step says...
        .say("coder", &fenced(&rows))
        .say("verifier", "Verdict: insufficient")
        .say("router", "Add Step")
        .say(
            "planner",
            "Sum the amounts of the north region, then of the south.",
        )
        // ...nor what the next one says: the same output again.
        .say("coder", &fenced(&format!("{rows}\nx = 1")))
        .say("coder", &fenced(&totals_answered(&csv)))
        .say("verifier", "Verdict: sufficient");
    let run = north_and_south(&llm, lake.path(), &csv);
    assert!(notes(&run).iter().any(|n| n.contains(
        "round 2: step 2 printed the same output as the plan before it; it is dropped and the next step asks for the missing quantities"
    )));
    let verdicts = events(&run, "verdict");
    assert_eq!(verdicts.len(), 3);
    assert!(verdicts[1]["reply"]
        .as_str()
        .unwrap()
        .starts_with("(not asked: the output is the previous round's again"));
    assert_eq!(verdicts[1]["missing"][0], "north_total");
    let due = "Compute north_total, south_total (total sales of the south region) from the data, following every constraint of the question, print each labelled with its name: `north_total: <value>`, `south_total: <value>`, and give each with `answer(\"north_total\", value)`, `answer(\"south_total\", value)`.";
    let last = events(&run, "plan").last().unwrap()["steps"].clone();
    assert_eq!(
        last,
        serde_json::json!(["Sum the amounts of the north region.", due])
    );
    // Coded on step 1's script, the dropped step's left behind.
    let coders = llm.prompts("coder");
    assert_eq!(coders.len(), 3);
    assert!(coders[2].contains(due));
    assert_eq!(base_code(&coders[2]), rows);
    assert_eq!(llm.prompts("verifier").len(), 2);
    assert_eq!(llm.prompts("router").len(), 1);
    assert_eq!(llm.prompts("planner").len(), 2);
}
