//! The answer contract and the rules registry, end to end: a scripted LLM over real HTTP,
//! generated scripts in real Python calling the sandbox's `answer(name, value)`, the
//! answer written by an output adapter; `--rules` switching the loop's rules, each firing
//! counted in the trace and `summary.json`.

use crate::agent::{fenced, ok, read_json, roles, sales_lake};
use crate::agent_loop::{ask_pinned, events, purposes};
use crate::common::{python3, test_python};
use crate::llm_server::ScriptedLlm;
use serde_json::Value;

/// A script summing the north and south amounts of `csv`; `answers` is Python run after
/// the sums, with `north` and `south` bound (`answer("north_total", north)`…).
fn sums_then(csv: &str, answers: &str) -> String {
    format!(
        "import csv\nrows = list(csv.DictReader(open({csv:?})))\nnorth = sum(int(r['amount']) for r in rows if r['region'] == 'north')\nsouth = sum(int(r['amount']) for r in rows if r['region'] == 'south')\nprint('north total:', north)\nprint('south total:', south)\n{answers}"
    )
}

#[test]
fn values_passed_to_the_answer_api_reach_the_answer_exactly_without_a_finalyzer() {
    let (lake, csv) = sales_lake();
    let csv = csv.display().to_string();
    // Full precision: 0.1 + 0.2 is not 0.3 in binary, and the answer keeps it so.
    let code = sums_then(
        &csv,
        "answer('north_total', north)\nanswer('share', 0.1 + 0.2)\nanswer('regions', ['north', 'south'])",
    );
    let llm = ScriptedLlm::start();
    llm.say("planner", "Sum the amounts by region.")
        .say("coder", &fenced(&code))
        .say("verifier", "Verdict: sufficient");
    let (out, run) = ask_pinned(
        &llm,
        lake.path(),
        &csv,
        &python3(),
        "What did the north sell, what share is it, which regions are there?",
        &[
            "--guidelines",
            "@north_total[value], @share[value], @regions[value]",
            "--answer",
            "north_total=value",
            "--answer",
            "share=value",
            "--answer",
            "regions=value",
            "--answer-form",
            "tagged",
        ],
    );
    assert_eq!(
        ok(&out).trim(),
        "@north_total[15], @share[0.30000000000000004], @regions[north, south]"
    );
    // No finalyzer: the values were given.
    assert_eq!(roles(&llm), ["planner", "coder", "verifier"]);
    assert!(llm.left().is_empty(), "unused replies: {:?}", llm.left());
    let summary = read_json(&run.join("summary.json"));
    assert_eq!(summary["answer_source"], "answers");
    let share = summary["answers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "share")
        .unwrap();
    assert_eq!(share["value"].as_f64().unwrap(), 0.1 + 0.2);
    // The coder was asked for the values by name, in the shared prefix.
    let coder = &llm.requests()[1];
    let system = coder.body["messages"][0]["content"].as_str().unwrap();
    assert!(
        system.contains("`answer(\"north_total\", value)`"),
        "{system}"
    );
}

#[test]
fn a_requested_quantity_missing_from_the_answers_keeps_the_loop_going() {
    let (lake, csv) = sales_lake();
    let csv = csv.display().to_string();
    // The south total is neither answered nor printed.
    let first = sums_then(&csv, "answer('north_total', north)")
        .replace("print('south total:', south)\n", "");
    let second = sums_then(
        &csv,
        "answer('north_total', north)\nanswer('south_total', south)",
    );
    let llm = ScriptedLlm::start();
    llm.say("planner", "Sum the north amounts.")
        .say("coder", &fenced(&first))
        // A rubber stamp: the contract overrules it.
        .say("verifier", "Verdict: sufficient")
        .say("router", "Add Step")
        .say("planner", "Sum the south amounts too, south_total.")
        .say("coder", &fenced(&second))
        .say("verifier", "Verdict: sufficient");
    let (out, run) = ask_pinned(
        &llm,
        lake.path(),
        &csv,
        &python3(),
        "What did each region sell?",
        &[
            "--guidelines",
            "@north_total[value], @south_total[value]",
            "--answer",
            "north_total=value",
            "--answer",
            "south_total=value",
            "--answer-form",
            "tagged",
        ],
    );
    assert_eq!(ok(&out).trim(), "@north_total[15], @south_total[20]");
    assert!(llm.left().is_empty(), "unused replies: {:?}", llm.left());
    let verdicts = events(&run, "verdict");
    assert_eq!(verdicts[0]["verdict"], "insufficient");
    assert_eq!(verdicts[0]["missing"], serde_json::json!(["south_total"]));
    assert_eq!(verdicts[1]["verdict"], "sufficient");
    // The planner was told what is missing.
    let next = &llm.prompts("planner")[1];
    assert!(next.contains("south_total"), "{next}");
}

#[test]
fn a_script_that_only_prints_is_judged_by_the_verifier_and_formatted_by_the_finalyzer() {
    let (lake, csv) = sales_lake();
    let csv = csv.display().to_string();
    let llm = ScriptedLlm::start();
    llm.say("planner", "Sum the north amounts.")
        .say("coder", &fenced(&sums_then(&csv, "")))
        .say("verifier", "Verdict: sufficient")
        .say("finalyzer", &fenced("print('@north_total[15]')"));
    let (out, run) = ask_pinned(
        &llm,
        lake.path(),
        &csv,
        &python3(),
        "What did the north sell?",
        &[
            "--guidelines",
            "@north_total[value]",
            "--answer",
            "north_total=value",
            "--answer-form",
            "tagged",
            "--rules",
            "none",
        ],
    );
    assert_eq!(ok(&out).trim(), "@north_total[15]");
    assert!(llm.left().is_empty(), "unused replies: {:?}", llm.left());
    let summary = read_json(&run.join("summary.json"));
    assert_eq!(summary["answer_source"], "final_script");
    assert_eq!(summary["answers"], serde_json::json!([]));
}

/// A first script that uses `pd.` without importing pandas (the `missing-imports` rule's
/// class) and prints the north total.
fn unimported(csv: &str) -> String {
    format!(
        "df = pd.read_csv({csv:?})\nprint('north total:', int(df[df['region'] == 'north']['amount'].sum()))"
    )
}

#[test]
fn rules_none_runs_algorithm_1_bare_and_default_counts_each_firing() {
    let (lake, csv) = sales_lake();
    let csv = csv.display().to_string();
    let fixed = format!("import pandas as pd\n{}", unimported(&csv));

    // Default rules: the import is added before the script runs; counted.
    let llm = ScriptedLlm::start();
    llm.say("planner", "Sum the north amounts.")
        .say("coder", &fenced(&unimported(&csv)))
        .say("verifier", "Verdict: sufficient")
        .say("finalyzer", &fenced("print(15)"));
    let (out, run) = ask_pinned(
        &llm,
        lake.path(),
        &csv,
        test_python().to_str().unwrap(),
        "What did the north sell?",
        &[],
    );
    assert_eq!(ok(&out).trim(), "15");
    assert_eq!(purposes(&run), ["solution", "final"]);
    let summary = read_json(&run.join("summary.json"));
    assert_eq!(summary["rules"]["on"], "default");
    assert_eq!(summary["rules"]["fired"]["missing-imports"], 1);
    // Said with the answer.
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("rules fired: missing-imports ×1"), "{said}");
    let fired = events(&run, "rule");
    assert_eq!(fired[0]["rule"], "missing-imports");
    assert!(fired[0]["class"].as_str().unwrap().contains("import"));

    // None: the script runs as written, fails, and the debugger (Algorithm 1's) fixes it.
    let llm = ScriptedLlm::start();
    llm.say("planner", "Sum the north amounts.")
        .say("coder", &fenced(&unimported(&csv)))
        .say("debugger", &fenced(&fixed))
        .say("verifier", "Verdict: sufficient")
        .say("finalyzer", &fenced("print(15)"));
    let (out, run) = ask_pinned(
        &llm,
        lake.path(),
        &csv,
        test_python().to_str().unwrap(),
        "What did the north sell?",
        &["--rules", "none"],
    );
    assert_eq!(ok(&out).trim(), "15");
    assert!(llm.left().is_empty(), "unused replies: {:?}", llm.left());
    assert_eq!(purposes(&run), ["solution", "solution debug 1", "final"]);
    let summary = read_json(&run.join("summary.json"));
    assert_eq!(summary["rules"]["on"], "none");
    assert_eq!(summary["rules"]["fired"], serde_json::json!({}));
    assert!(events(&run, "rule").is_empty());
    let start = &events(&run, "start")[0];
    assert_eq!(start["rules"], "none");

    // Leave-one-out spells the same way back.
    let llm = ScriptedLlm::start();
    llm.say("planner", "Sum the north amounts.")
        .say("coder", &fenced(&unimported(&csv)))
        .say("debugger", &fenced(&fixed))
        .say("verifier", "Verdict: sufficient")
        .say("finalyzer", &fenced("print(15)"));
    let (out, run) = ask_pinned(
        &llm,
        lake.path(),
        &csv,
        test_python().to_str().unwrap(),
        "What did the north sell?",
        &["--rules", "default,-missing-imports"],
    );
    assert_eq!(ok(&out).trim(), "15");
    let summary = read_json(&run.join("summary.json"));
    assert_eq!(summary["rules"]["on"], "default,-missing-imports");
    assert_eq!(
        summary["rules"]["fired"].get("missing-imports"),
        None::<&Value>
    );
}

#[test]
fn an_unknown_rule_name_is_refused_with_the_names() {
    let (lake, csv) = sales_lake();
    let csv = csv.display().to_string();
    let llm = ScriptedLlm::start();
    let (out, _) = ask_pinned(
        &llm,
        lake.path(),
        &csv,
        &python3(),
        "What did the north sell?",
        &["--rules", "default,-no-such-rule"],
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no-such-rule") && err.contains("missing-imports"),
        "{err}"
    );
    assert!(llm.requests().is_empty());
}

/// The `@name[value]` adapter on DABench's dev questions (the split's tuning part; the
/// test part is only run, never read): each gold sub-answer given through the answer
/// API as a script would (numbers as numbers, at full precision), written by the adapter
/// with the question's own rounding, graded by the benchmark's grader. Every dev question
/// whose format names exactly its gold's names is answered whole.
#[test]
fn the_dabench_adapter_writes_what_the_grader_reads_on_the_dev_questions() {
    use lakestar::agent::answer::{adapt, requested};
    use lakestar::agent::sandbox::Answered;
    use lakestar::bench::dabench::{self, Split};
    let dir = crate::common::shared_lakes().join("dabench");
    let questions = dabench::read_questions(&dir.join("da-dev-questions.jsonl")).unwrap();
    let labels = dabench::read_labels(&dir.join("da-dev-labels.jsonl")).unwrap();
    let dev = dabench::split_ids(Split::Dev).unwrap();
    let (mut whole, mut named) = (0, 0);
    for q in questions.iter().filter(|q| dev.contains(&q.id)) {
        let gold = &labels[&q.id];
        let guidelines = q.guidelines();
        let quantities = requested(&q.prompt(), &q.wanted());
        let names: Vec<&str> = quantities.iter().map(|q| q.name.as_str()).collect();
        // A question whose format names other quantities than its gold is left out (the
        // grader has nothing to read for them).
        let same = gold.iter().all(|(n, _)| names.contains(&n.as_str()))
            && names.iter().all(|n| gold.iter().any(|(g, _)| g == n));
        if !same {
            continue;
        }
        named += 1;
        let answers: Vec<Answered> = gold
            .iter()
            .map(|(n, v)| {
                let value = match v.trim().parse::<f64>() {
                    Ok(f) if v.contains('.') => serde_json::json!(f),
                    _ => match v.trim().parse::<i64>() {
                        Ok(i) => serde_json::json!(i),
                        Err(_) => serde_json::json!(v),
                    },
                };
                Answered::new(n.clone(), value)
            })
            .collect();
        let prompt = q.prompt();
        let answer = adapt::format(
            &answers,
            &quantities,
            &[&prompt, &guidelines],
            adapt::Form::Tagged,
        )
        .unwrap_or_else(|| panic!("question {}: no answer from {answers:?}", q.id));
        let parts = dabench::grade(Some(&answer), gold);
        if parts.iter().all(|p| p.right) {
            whole += 1;
        } else {
            panic!("question {}: {answer} graded {parts:?}", q.id);
        }
    }
    // Most dev formats name exactly their gold's names.
    assert!(named >= 20, "{named} of 30");
    assert_eq!(whole, named);
}

/// A value answered under another name than the caller's: the contract lacks it, and the
/// loop goes on until a script answers it under its name.
#[test]
fn a_value_answered_under_another_name_is_lacking_until_given_under_its_own() {
    let (lake, csv) = sales_lake();
    let csv = csv.display().to_string();
    let question = "What did the north sell?";
    let llm = ScriptedLlm::start();
    llm.say("planner", "Sum the north amounts.")
        .say("coder", &fenced(&sums_then(&csv, "answer('north', north)")))
        .say("verifier", "Verdict: sufficient")
        .say("router", "Add Step")
        .say("planner", "Give north_total.")
        .say(
            "coder",
            &fenced(&sums_then(&csv, "answer('north_total', north)")),
        )
        .say("verifier", "Verdict: sufficient");
    let args = [
        "--guidelines",
        "@north_total[value]",
        "--answer",
        "north_total=value",
        "--answer-form",
        "tagged",
    ];
    let (out, run) = ask_pinned(&llm, lake.path(), &csv, &python3(), question, &args);
    assert_eq!(ok(&out).trim(), "@north_total[15]");
    assert!(llm.left().is_empty(), "unused replies: {:?}", llm.left());
    let verdicts = events(&run, "verdict");
    assert_eq!(verdicts[0]["verifier"], "sufficient");
    assert_eq!(verdicts[0]["missing"], serde_json::json!(["north_total"]));
    assert!(events(&run, "rule").is_empty());
}

/// The `method-calls` rule: a question naming a method gets its calls in every role's
/// prefix, counted; with the rule off the prefix has none.
#[test]
fn the_calls_of_a_named_method_are_shown_only_with_the_method_calls_rule() {
    let (lake, csv) = sales_lake();
    let csv = csv.display().to_string();
    let question = "Are the amounts normally distributed by a Shapiro-Wilk test?";
    for (extra, shown) in [(None, true), (Some("default,-method-calls"), false)] {
        let llm = ScriptedLlm::start();
        llm.say("planner", "Test the amounts.")
            .say("coder", &fenced("print('p-value: 0.5')"))
            .say("verifier", "Verdict: sufficient")
            .say("finalyzer", &fenced("print('yes')"));
        let mut args = vec![];
        if let Some(r) = extra {
            args.extend(["--rules", r]);
        }
        let (out, run) = ask_pinned(&llm, lake.path(), &csv, &python3(), question, &args);
        assert_eq!(ok(&out).trim(), "yes");
        let system = llm.requests()[0].body["messages"][0]["content"]
            .as_str()
            .unwrap()
            .to_string();
        assert_eq!(
            system.contains("# Methods the question names"),
            shown,
            "{extra:?}: {system}"
        );
        let fired = events(&run, "rule");
        assert_eq!(
            fired.iter().any(|e| e["rule"] == "method-calls"
                && e["message"] == "the calls of Shapiro-Wilk are shown to every role"),
            shown,
            "{extra:?}: {fired:?}"
        );
    }
}

/// A rule, the question, and the scripted replies (role, reply) of its situation.
type Case<'a> = (&'a str, &'a str, &'a [(&'a str, &'a str)]);

/// The loop's rules, each in the scripted situation of its failure class: with the rule
/// on it fires (a `rule` event, counted in `summary.json`); with it left out
/// (`--rules default,-NAME`) it does not, and the run takes Algorithm 1's path instead
/// (replies scripted for the rule's path may go unused, or the run stop short of them).
#[test]
fn each_loop_rule_fires_in_its_class_and_not_when_left_out() {
    let (lake, csv) = sales_lake();
    let csv = csv.display().to_string();
    let both = sums_then(&csv, "");
    let failing = format!("{both}\nx = float('1,5')");
    // Gives north_total alone through the answer API: south_total is lacking.
    let north_only = both.replace(
        "print('south total:', south)\n",
        "answer('north_total', north)\n",
    );
    let asked = "What did the north and the south sell?";
    let constrained =
        "What did the north and the south sell?\n\nConstraints:\nCount only whole sales.";
    let formed = "print('@north_total[15], @south_total[20]')";
    let cases: &[Case] = &[
        (
            "due-step",
            asked,
            &[
                ("planner", "Count the rows of the file."),
                ("coder", &fenced(&both)),
                ("verifier", "Verdict: sufficient"),
                (
                    "finalyzer",
                    &fenced("print('@north_total[15], @south_total[20]')"),
                ),
            ],
        ),
        (
            "verdict-again",
            asked,
            &[
                ("planner", "Sum north_total and south_total."),
                ("coder", &fenced(&both)),
                ("verifier", "Both totals are printed."),
                ("verifier", "Verdict: sufficient"),
                (
                    "finalyzer",
                    &fenced("print('@north_total[15], @south_total[20]')"),
                ),
            ],
        ),
        (
            "remedies",
            asked,
            &[
                ("planner", "Sum north_total and south_total."),
                ("coder", &fenced(&failing)),
                ("debugger", &fenced(&both)),
                ("verifier", "Verdict: sufficient"),
                (
                    "finalyzer",
                    &fenced("print('@north_total[15], @south_total[20]')"),
                ),
            ],
        ),
        (
            "change-course",
            asked,
            &[
                ("planner", "Sum north_total and south_total."),
                ("coder", &fenced(&failing)),
                ("debugger", &fenced(&failing)),
                ("debugger", &fenced(&both)),
                ("verifier", "Verdict: sufficient"),
                (
                    "finalyzer",
                    &fenced("print('@north_total[15], @south_total[20]')"),
                ),
            ],
        ),
        (
            "failed-step",
            asked,
            &[
                ("planner", "Sum north_total and south_total."),
                ("coder", &fenced(&failing)),
                ("debugger", &fenced(&format!("{failing}\n"))),
                ("debugger", &fenced(&format!("{failing}\ny = 1"))),
                ("router", "Add Step"),
                ("planner", "Sum north_total and south_total again."),
                ("coder", &fenced(&both)),
                ("verifier", "Verdict: sufficient"),
                (
                    "finalyzer",
                    &fenced("print('@north_total[15], @south_total[20]')"),
                ),
            ],
        ),
        (
            "repeated-step",
            asked,
            &[
                ("planner", "Sum north_total and south_total."),
                ("coder", &fenced(&north_only)),
                ("verifier", "Verdict: insufficient"),
                ("router", "Add Step"),
                ("planner", "Sum north_total and south_total."),
                ("coder", &fenced(&both)),
                ("verifier", "Verdict: sufficient"),
                ("finalyzer", &fenced(formed)),
            ],
        ),
        (
            "constraints",
            constrained,
            &[
                ("planner", "Sum north_total and south_total."),
                ("coder", &fenced(&both)),
                ("verifier", "Constraint 1: not applied\nVerdict: sufficient"),
                ("router", "Add Step"),
                ("planner", "Sum whole sales only."),
                ("coder", &fenced(&both)),
                ("verifier", "Constraint 1: applied\nVerdict: sufficient"),
                ("finalyzer", &fenced(formed)),
            ],
        ),
        (
            "repeated-output",
            asked,
            &[
                ("planner", "Sum north_total."),
                ("coder", &fenced(&north_only)),
                ("verifier", "Verdict: insufficient"),
                ("router", "Add Step"),
                ("planner", "Sum south_total."),
                ("coder", &fenced(&format!("{north_only}\nx = 1"))),
                ("coder", &fenced(&both)),
                ("verifier", "Verdict: sufficient"),
                ("finalyzer", &fenced(formed)),
            ],
        ),
    ];
    for (rule, question, replies) in cases {
        for off in [false, true] {
            let llm = ScriptedLlm::start();
            for (role, reply) in *replies {
                llm.say(role, reply);
            }
            let spec = format!("default,-{rule}");
            let mut args = vec![
                "--guidelines",
                "@north_total[value], @south_total[value]",
                "--answer",
                "north_total=value",
                "--answer",
                "south_total=value",
                "--answer-form",
                "tagged",
                "--debug-attempts",
                "2",
            ];
            if off {
                args.extend(["--rules", &spec]);
            }
            let (out, run) = ask_pinned(&llm, lake.path(), &csv, &python3(), question, &args);
            let fired = events(&run, "rule")
                .iter()
                .filter(|e| e["rule"] == *rule)
                .count();
            if off {
                assert_eq!(fired, 0, "{rule} left out fired");
            } else {
                assert!(
                    fired > 0,
                    "{rule} did not fire: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
                assert_eq!(
                    ok(&out).trim(),
                    "@north_total[15], @south_total[20]",
                    "{rule}"
                );
                let summary = read_json(&run.join("summary.json"));
                assert_eq!(summary["rules"]["fired"][rule], fired, "{rule}");
            }
        }
    }
}

/// A long traceback goes through the summarizer, which comes after the same shared
/// prefix as every other role: a single-slot prompt cache then keeps the prefix for the
/// debugger after it.
#[test]
fn the_summarizer_shares_the_prefix_of_the_other_roles() {
    let (lake, csv) = sales_lake();
    let csv = csv.display().to_string();
    let long = format!("{}\nraise ValueError('x' * 2500)", sums_then(&csv, ""));
    let llm = ScriptedLlm::start();
    llm.say("planner", "Sum the north amounts.")
        .say("coder", &fenced(&long))
        .say("summarizer", "ValueError at line 8: a long message.")
        .say("debugger", &fenced(&sums_then(&csv, "")))
        .say("verifier", "Verdict: sufficient")
        .say("finalyzer", &fenced("print('@north_total[15]')"));
    let (out, _) = ask_pinned(
        &llm,
        lake.path(),
        &csv,
        &python3(),
        "What did the north sell?",
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
    let requests = llm.requests();
    let system = |role: &str| {
        let r = requests.iter().find(|r| r.role == role).unwrap();
        assert_eq!(r.body["messages"][0]["role"], "system", "{role}");
        r.body["messages"][0]["content"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(system("summarizer"), system("coder"));
    assert_eq!(system("debugger"), system("coder"));
}

/// The plain adapter on DABStep's dev tasks: each gold answer given as a script would give
/// it (a number, a list, text) and written with the task's own guidelines ("rounded to 6
/// decimals", "a comma separated list") comes out as the gold is written.
#[test]
fn the_plain_adapter_writes_dabsteps_answers_as_its_guidelines_ask() {
    use lakestar::agent::answer::{adapt, requested};
    use lakestar::agent::sandbox::Answered;
    let tasks = crate::common::shared_lakes().join("dabstep/tasks/dev.jsonl");
    let mut n = 0;
    for line in std::fs::read_to_string(tasks).unwrap().lines() {
        let t: Value = serde_json::from_str(line).unwrap();
        let (question, guidelines) = (
            t["question"].as_str().unwrap(),
            t["guidelines"].as_str().unwrap(),
        );
        let gold = t["answer"].as_str().unwrap();
        let item = |s: &str| match s.trim().parse::<i64>() {
            Ok(i) => serde_json::json!(i),
            Err(_) => serde_json::json!(s.trim()),
        };
        let value = if gold.contains(", ") {
            Value::Array(gold.split(", ").map(item).collect())
        } else {
            match gold.parse::<f64>() {
                Ok(f) => serde_json::json!(f),
                Err(_) => serde_json::json!(gold),
            }
        };
        let quantities = requested(question, &[]);
        let answer = adapt::format(
            &[Answered::new("answer", value)],
            &quantities,
            &[question, guidelines],
            adapt::Form::Plain,
        );
        assert_eq!(answer.as_deref(), Some(gold), "task {}", t["task_id"]);
        n += 1;
    }
    assert!(n >= 10, "{n} tasks");
}
