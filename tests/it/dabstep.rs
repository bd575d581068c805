//! End to end: `lakestar bench dabstep` over the real DABStep context files, with a real
//! pandas in the test venv and scripted LLM replies whose code is real pandas code.

use crate::agent::fenced;
use crate::common::{lakestar, shared_lakes, test_python};
use crate::llm_server::ScriptedLlm;
use serde_json::Value;

/// DABStep dev tasks 1273, 1305 and 1464 over the real context files, with scripted
/// replies whose code is real pandas code: the submission must hold the gold answers.
#[test]
fn dabstep_dev_tasks_end_to_end_with_real_pandas() {
    let context = shared_lakes()
        .join("dabstep/context")
        .canonicalize()
        .unwrap();
    let fees = context.join("fees.json").display().to_string();
    let mcc = context
        .join("merchant_category_codes.csv")
        .display()
        .to_string();
    let gold: std::collections::HashMap<String, String> =
        std::fs::read_to_string(shared_lakes().join("dabstep/tasks/dev.jsonl"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|t| ["1273", "1305", "1464"].contains(&t["task_id"].as_str().unwrap()))
            .map(|t| {
                (
                    t["task_id"].as_str().unwrap().to_string(),
                    t["answer"].as_str().unwrap().to_string(),
                )
            })
            .collect();
    assert_eq!(gold.len(), 3);

    let load = format!(
        "import json\nimport pandas as pd\nfees = pd.DataFrame(json.load(open({fees:?})))\n\
         def applies(values, wanted):\n    # An empty list or a null means the rule applies to every value.\n    \
         return values is None or len(values) == 0 or wanted in values\n"
    );
    let t1273 = format!(
        "{load}gc = fees[(fees['card_scheme'] == 'GlobalCard') & (fees['is_credit'].isna() | (fees['is_credit'] == True))]\n\
         fee = gc['fixed_amount'] + gc['rate'] * 10 / 10000\nprint('rules', len(gc))\nprint('average fee', fee.mean())"
    );
    let t1305_1 = format!(
        "{load}mcc = pd.read_csv({mcc:?})\ncode = int(mcc.loc[mcc['description'] == 'Eating Places and Restaurants', 'mcc'].iloc[0])\nprint('mcc', code)"
    );
    let t1305_2 = format!(
        "{t1305_1}\nsel = fees[(fees['card_scheme'] == 'GlobalCard') & fees['account_type'].apply(lambda v: applies(v, 'H')) & fees['merchant_category_code'].apply(lambda v: applies(v, code))]\n\
         print('rules', len(sel))\nprint('average fee', (sel['fixed_amount'] + sel['rate'] * 10 / 10000).mean())"
    );
    let t1464 = format!(
        "{load}sel = fees[fees['account_type'].apply(lambda v: applies(v, 'R')) & fees['aci'].apply(lambda v: applies(v, 'B'))]\nprint('ids', list(sel['ID']))"
    );
    let llm = ScriptedLlm::start();
    // 1273: one step.
    llm.say(
        "planner",
        "Average fixed_amount + rate * 10 / 10000 over GlobalCard rules that apply to credit.",
    )
    .say("coder", &fenced(&t1273))
    .say("verifier", "sufficient")
    .say(
        "finalyzer",
        &fenced(&t1273.replace(
            "print('rules', len(gc))\nprint('average fee', fee.mean())",
            "print(f'{fee.mean():.6f}')",
        )),
    );
    // 1305: two steps, the router adding the second.
    llm.say("planner", "Find the MCC of 'Eating Places and Restaurants'.")
        .say("coder", &fenced(&t1305_1))
        .say("verifier", "insufficient")
        .say("router", "Add Step")
        .say("planner", "Average the GlobalCard fee for 10 EUR over rules applying to account type H and that MCC.")
        .say("coder", &fenced(&t1305_2))
        .say("verifier", "sufficient")
        .say(
            "finalyzer",
            &fenced(
                &t1305_2
                    .replace("print('mcc', code)\n", "")
                    .replace(
                        "print('rules', len(sel))\nprint('average fee', (sel['fixed_amount'] + sel['rate'] * 10 / 10000).mean())",
                        "print(f\"{(sel['fixed_amount'] + sel['rate'] * 10 / 10000).mean():.6f}\")",
                    ),
            ),
        );
    // 1464: one step.
    llm.say(
        "planner",
        "List the IDs of fee rules applying to account type R and ACI B.",
    )
    .say("coder", &fenced(&t1464))
    .say("verifier", "sufficient")
    .say(
        "finalyzer",
        &fenced(&t1464.replace(
            "print('ids', list(sel['ID']))",
            "print(', '.join(str(i) for i in sel['ID']))",
        )),
    );

    let tmp = tempfile::tempdir().unwrap();
    let tasks = tmp.path().join("tasks.jsonl");
    let all = std::fs::read_to_string(shared_lakes().join("dabstep/tasks/dev.jsonl")).unwrap();
    let picked: Vec<&str> = ["1273", "1305", "1464"]
        .iter()
        .map(|id| {
            all.lines()
                .find(|l| serde_json::from_str::<Value>(l).unwrap()["task_id"].as_str() == Some(id))
                .unwrap()
        })
        .collect();
    std::fs::write(&tasks, picked.join("\n")).unwrap();
    let out = tmp.path().join("submission.jsonl");
    let py = test_python();
    let res = lakestar()
        .env("OPENAI_BASE_URL", llm.base_url())
        .env("LAKESTAR_MODEL", "scripted-model")
        .args(["bench", "dabstep", "--tasks"])
        .arg(&tasks)
        .arg("--lake")
        .arg(&context)
        .arg("--out")
        .arg(&out)
        .arg("--index")
        .arg(tmp.path().join("idx"))
        .arg("--python")
        .arg(&py)
        .output()
        .unwrap();
    assert!(
        res.status.success(),
        "bench failed: {}",
        String::from_utf8_lossy(&res.stderr)
    );
    assert!(llm.left().is_empty(), "unused replies: {:?}", llm.left());
    let lines: Vec<Value> = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    for l in &lines {
        let id = l["task_id"].as_str().unwrap();
        assert_eq!(l["agent_answer"].as_str().unwrap(), gold[id], "task {id}");
        assert!(l["reasoning_trace"].as_str().unwrap().contains("1. "));
    }
    // The retrieved files given to the LLM include the fee rules, by absolute path.
    assert!(llm.prompts("planner")[0].contains(&fees));
}
