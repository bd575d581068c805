//! The answer API of the sandbox with real Python: what a script passes to
//! `answer(name, value)` reaches `Execution::answers` exactly, in the jail and out of
//! it; a failing script keeps its answers, a re-run does not see old ones, and a script
//! that writes the answers file itself gets its lines counted, not trusted.

use crate::common::test_python;
use lakestar::agent::sandbox::{Answered, Execution, Limits, Policy, Python, Sandbox};
use serde_json::{json, Value};
use std::path::Path;

/// `python3` from PATH (no venv), as the sandbox resolves it.
fn system_python() -> Python {
    Python::resolve(None, Path::new("/nonexistent/lakestar-test-venv")).unwrap()
}

/// The test venv's Python, with numpy and pandas.
fn venv_python() -> Python {
    Python::resolve(None, test_python().parent().unwrap().parent().unwrap()).unwrap()
}

async fn run(python: Python, policy: Policy, workdir: &Path, name: &str, code: &str) -> Execution {
    Sandbox::new(python, Limits::default())
        .with_policy(policy)
        .run(workdir, name, code, &[])
        .await
        .unwrap()
}

fn bits(v: &Value) -> u64 {
    v.as_f64()
        .unwrap_or_else(|| panic!("not a number: {v}"))
        .to_bits()
}

#[tokio::test]
async fn answered_values_reach_the_execution_exactly_in_the_jail_and_out() {
    let code = r#"
import math, os, decimal
assert answer("sum", 0.1 + 0.2) == 0.1 + 0.2
answer("third", 1 / 3)
answer("tiny", 5e-324)
answer("max", 1.7976931348623157e308)
answer("normal_min", 2.2250738585072014e-308)
answer("e23", 1e23)
answer("ordinary", 58.447122649893124)
answer("big int", 2**64 - 1)
answer("wider int", 10**30)
answer("negative", -2**63)
answer("text", 'say "hi"\nnext line\ttab \\ üñí €😀 \ud800')
answer("nan", float("nan"))
answer("inf", math.inf)
answer("minus inf", -math.inf)
answer("list", [1, 2.5, "x", None, True, (1, 2), {3}])
answer("dict", {"a": 1, 2: "b", "n": {"x": [float("nan")]}})
answer("decimal", decimal.Decimal("1.10"))
from lakestar import answer as imported
imported("imported", 7)
os.chdir("/")
answer("Mean_Fare", 1)
answer("mean fare", 32.204207968574636)
answer(17, "a name that is no string")
answer("too big", "x" * (2 << 20))
print("done")
"#;
    let tmp = tempfile::tempdir().unwrap();
    for policy in [Policy::Jail, Policy::Unconfined] {
        let workdir = tmp.path().join(format!("{policy:?}"));
        let ex = run(system_python(), policy, &workdir, "values", code).await;
        assert!(ex.success(), "{policy:?}: {ex:?}");
        assert_eq!(ex.stdout, "done\n");
        assert_eq!(ex.answers_unreadable, 0);
        let get = |name: &str| {
            ex.answered(name)
                .unwrap_or_else(|| panic!("{policy:?}: no answer {name:?}: {:?}", ex.answers))
        };
        for (name, f) in [
            ("sum", 0.1 + 0.2),
            ("third", 1.0 / 3.0),
            ("tiny", 5e-324),
            ("max", 1.7976931348623157e308),
            ("normal_min", 2.2250738585072014e-308),
            ("e23", 1e23),
            ("ordinary", 58.447122649893124),
        ] {
            assert_eq!(bits(get(name)), f64::to_bits(f), "{name}: {}", get(name));
        }
        assert_eq!(get("big int"), &json!(u64::MAX));
        assert_eq!(get("wider int"), &json!("1000000000000000000000000000000"));
        assert_eq!(get("negative"), &json!(i64::MIN));
        assert_eq!(
            get("text"),
            &json!("say \"hi\"\nnext line\ttab \\ üñí €😀 \u{FFFD}")
        );
        assert_eq!(get("nan"), &json!("nan"));
        assert_eq!(get("inf"), &json!("inf"));
        assert_eq!(get("minus inf"), &json!("-inf"));
        assert_eq!(get("list"), &json!([1, 2.5, "x", null, true, [1, 2], [3]]));
        assert_eq!(get("dict"), &json!({"a": 1, "2": "b", "n": {"x": ["nan"]}}));
        assert_eq!(get("decimal"), &json!("1.10"));
        assert_eq!(get("IMPORTED"), &json!(7));
        // The script changed directory; the file is still the one beside it. The
        // same name (compared loosely) twice: both lines, the last one counts.
        assert_eq!(bits(get("mean-fare")), f64::to_bits(32.204207968574636));
        let fares: Vec<&Answered> = ex
            .answers
            .iter()
            .filter(|a| a.name.to_lowercase().contains("fare"))
            .collect();
        assert_eq!(fares.len(), 2);
        assert_eq!(get("17"), &json!("a name that is no string"));
        let big = ex.answers.iter().find(|a| a.name == "too big").unwrap();
        assert_eq!(big.value, Value::Null);
        assert!(
            big.error
                .as_deref()
                .is_some_and(|e| e.starts_with("value too large (")),
            "{big:?}"
        );
        assert_eq!(ex.answered("too big"), None);
        assert_eq!(ex.answered("never answered"), None);
        // The run log carries them.
        let logged = serde_json::to_value(&ex).unwrap();
        assert_eq!(
            logged["answers"][0],
            json!({"name": "sum", "value": 0.1 + 0.2})
        );
        assert!(logged.get("answers_unreadable").is_none(), "{logged}");
    }
}

#[tokio::test]
async fn a_failing_script_keeps_its_answers_and_a_rerun_starts_clean() {
    let tmp = tempfile::tempdir().unwrap();
    for policy in [Policy::Jail, Policy::Unconfined] {
        let workdir = tmp.path().join(format!("{policy:?}"));
        let ex = run(
            system_python(),
            policy,
            &workdir,
            "round_1",
            "answer('mean', 2.5)\nraise ValueError('later')\n",
        )
        .await;
        assert_eq!(ex.exit_code, Some(1), "{ex:?}");
        assert!(ex.stderr.contains("ValueError: later"), "{ex:?}");
        assert_eq!(ex.answers, [Answered::new("mean", json!(2.5))]);
        assert!(workdir.join("round_1.answers.jsonl").is_file());
        // The same name again, answering nothing: the first run's answers are gone.
        let ex = run(system_python(), policy, &workdir, "round_1", "print(1)\n").await;
        assert!(ex.success(), "{ex:?}");
        assert!(ex.answers.is_empty(), "{ex:?}");
        assert!(!workdir.join("round_1.answers.jsonl").exists());
        assert!(serde_json::to_value(&ex).unwrap().get("answers").is_none());
    }
}

#[tokio::test]
async fn a_script_writing_the_answers_file_itself_gets_its_lines_counted() {
    // Garbage, records without a string name, a JSON NaN, a 3 MiB line, a NUL: each
    // counted; the well-formed lines around them are read.
    let code = r#"
answer("first", 1)
with open("hostile.answers.jsonl", "a") as f:
    f.write("garbage\n")
    f.write('{"name": 3, "value": 1}\n')
    f.write('{"value": 1}\n')
    f.write('{"name": "n", "value": NaN}\n')
    f.write('{"name": "x", "value": "' + "x" * (3 << 20) + '"}\n')
    f.write('\0\0\0\n')
    f.write('[1, 2\n')
    f.write('{"name": "written", "value": [1, {"a": null}]}\n')
answer("last", "ok")
"#;
    let tmp = tempfile::tempdir().unwrap();
    let ex = run(system_python(), Policy::Jail, tmp.path(), "hostile", code).await;
    assert!(ex.success(), "{ex:?}");
    assert_eq!(
        ex.answers,
        [
            Answered::new("first", json!(1)),
            Answered::new("written", json!([1, {"a": null}])),
            Answered::new("last", json!("ok")),
        ]
    );
    assert_eq!(ex.answers_unreadable, 7);
    assert_eq!(serde_json::to_value(&ex).unwrap()["answers_unreadable"], 7);

    // 12 MiB of records: 8 MiB are read, the line the cap cuts is counted.
    let code = r#"
line = '{"name": "r", "value": "' + "y" * 1000 + '"}\n'
with open("flood.answers.jsonl", "w") as f:
    for _ in range(12 * 1024):
        f.write(line)
"#;
    let ex = run(system_python(), Policy::Jail, tmp.path(), "flood", code).await;
    assert!(ex.success(), "{ex:?}");
    let line = 1000 + r#"{"name": "r", "value": ""}"#.len() + 1;
    assert_eq!(ex.answers.len(), (8 << 20) / line);
    assert_eq!(ex.answers_unreadable, 1);
}

#[tokio::test]
async fn numpy_and_pandas_values_arrive_as_numbers_lists_and_tables() {
    let code = r#"
import numpy as np, pandas as pd
answer("np float", np.float64(0.1) * 3)
answer("np float32", np.float32(0.1))
answer("np int", np.int64(-7))
answer("np bool", np.bool_(True))
answer("np array", np.array([[1, 2], [3, 4]]))
answer("np nan", np.array([1.5, np.nan]))
answer("series", pd.Series([1.5, 2.25], index=[10, 20]))
answer("value counts", pd.Series(["a", "b", "a"]).value_counts())
df = pd.DataFrame({
    "n": [1, 2, 3],
    "x": [0.1 + 0.2, float("nan"), 2.0],
    "s": ["a", None, "c"],
    "t": pd.to_datetime(["2024-01-02", "2024-01-03", None]),
}, index=["i", "j", "k"])
answer("frame", df)
answer("long frame", pd.DataFrame({"v": range(1500)}))
wide = pd.DataFrame({f"c{k}": ["z" * 50] * 1000 for k in range(40)})
answer("wide frame", wide)
answer("index", df.index)
answer("huge array", np.zeros(1_000_000))
answer("mean", df["n"].mean())
"#;
    let tmp = tempfile::tempdir().unwrap();
    let ex = run(venv_python(), Policy::Jail, tmp.path(), "stack", code).await;
    assert!(ex.success(), "{ex:?}");
    assert_eq!(ex.answers_unreadable, 0);
    let get = |name: &str| {
        ex.answered(name)
            .unwrap_or_else(|| panic!("no answer {name:?}: {:?}", ex.answers))
    };
    assert_eq!(bits(get("np float")), f64::to_bits(0.1 * 3.0));
    assert_eq!(bits(get("np float32")), f64::to_bits(f64::from(0.1f32)));
    assert_eq!(get("np int"), &json!(-7));
    assert_eq!(get("np bool"), &json!(true));
    assert_eq!(get("np array"), &json!([[1, 2], [3, 4]]));
    assert_eq!(get("np nan"), &json!([1.5, "nan"]));
    assert_eq!(get("series"), &json!({"10": 1.5, "20": 2.25}));
    assert_eq!(get("value counts"), &json!({"a": 2, "b": 1}));
    assert_eq!(
        get("frame"),
        &json!({
            "columns": ["n", "x", "s", "t"],
            "index": ["i", "j", "k"],
            "rows": [
                [1, 0.1 + 0.2, "a", "2024-01-02 00:00:00"],
                // A missing text is NaN in pandas' string dtype, as pandas shows it.
                [2, "nan", "nan", "2024-01-03 00:00:00"],
                [3, 2.0, "c", "NaT"],
            ],
        })
    );
    let long = get("long frame");
    assert_eq!(long["rows"].as_array().unwrap().len(), 1000);
    assert_eq!(long["rows"][999], json!([999]));
    assert_eq!(
        (&long["truncated"], &long["total_rows"]),
        (&json!(true), &json!(1500))
    );
    // 40 columns of 50 characters in 1000 rows pass 1 MiB: fewer rows, still a table.
    let wide = get("wide frame");
    let rows = wide["rows"].as_array().unwrap().len();
    assert!(rows > 100 && rows < 1000, "{rows} rows");
    assert_eq!(
        (&wide["truncated"], &wide["total_rows"]),
        (&json!(true), &json!(1000))
    );
    assert_eq!(wide["columns"].as_array().unwrap().len(), 40);
    assert_eq!(get("index"), &json!(["i", "j", "k"]));
    let huge = ex.answers.iter().find(|a| a.name == "huge array").unwrap();
    assert_eq!(
        huge.error.as_deref(),
        Some("value too large (1000000 items, over 1048576 bytes)")
    );
    assert_eq!(get("mean"), &json!(2.0));
}

/// The answer API imports neither numpy nor pandas for a script that does not; a
/// script that never answers leaves no file and has no answers.
#[tokio::test]
async fn answering_imports_no_data_stack_and_not_answering_leaves_no_file() {
    let tmp = tempfile::tempdir().unwrap();
    let code = "import sys\nanswer('n', 1)\nprint(sorted(m for m in ('numpy', 'pandas', 'json') if m in sys.modules))\n";
    let ex = run(venv_python(), Policy::Jail, tmp.path(), "plain", code).await;
    assert!(ex.success(), "{ex:?}");
    assert_eq!(ex.stdout, "['json']\n");
    let ex = run(
        system_python(),
        Policy::Jail,
        tmp.path(),
        "none",
        "print(2)\n",
    )
    .await;
    assert_eq!((ex.answers.len(), ex.answers_unreadable), (0, 0));
    assert!(!tmp.path().join("none.answers.jsonl").exists());
}
