//! One `ask` behind three surfaces: the same bad request is refused by the CLI, the HTTP
//! API and the MCP tool with the same words (the service's validation), before any LLM
//! call or run directory.

use crate::common::{index_into, lakestar, python3};
use crate::llm_server::ScriptedLlm;
use crate::mcp::Session;
use crate::serve::{assert_error, Http, Server};
use serde_json::json;

#[test]
fn the_same_bad_request_is_refused_alike_by_cli_http_and_mcp() {
    let tmp = tempfile::tempdir().unwrap();
    let lake = tmp.path().join("lake");
    std::fs::create_dir(&lake).unwrap();
    std::fs::write(lake.join("sales.csv"), "region,amount\nnorth,10\n").unwrap();
    let idx = index_into(tmp.path(), &lake);
    let llm = ScriptedLlm::start();
    let base = llm.base_url();
    let env = [
        ("OPENAI_BASE_URL", base.as_str()),
        ("OPENAI_API_KEY", "sk-test"),
        ("LAKESTAR_MODEL", "scripted-model"),
    ];
    let python = python3();

    // (CLI arguments, JSON fields, the message all three give)
    let cases = [
        (
            vec!["   "],
            json!({"question": "   "}),
            "the question is empty",
        ),
        (
            vec!["q?", "--max-rounds", "101"],
            json!({"question": "q?", "max_rounds": 101}),
            "max_rounds must be between 0 and 100 (got 101)",
        ),
        (
            vec!["q?", "-k", "0"],
            json!({"question": "q?", "k": 0}),
            "k must be between 1 and 100 (got 0)",
        ),
        (
            vec!["q?", "--rules", "default,-no-such-rule"],
            json!({"question": "q?", "rules": "default,-no-such-rule"}),
            "unknown rule \"no-such-rule\"; the names are default, none",
        ),
        (
            vec!["q?", "--answer", "mean fare"],
            json!({"question": "q?", "answer_names": ["mean fare"]}),
            "\"mean fare\" is not an answer name: use 1 to 64 letters, digits or `_`",
        ),
        (
            vec!["q?", "--answer-form", "json"],
            json!({"question": "q?", "answer_form": "json"}),
            "unknown answer form \"json\"; use plain or tagged",
        ),
        (
            vec!["q?", "--answer", "n", "--answer", "n=the count"],
            json!({"question": "q?", "answer_names": ["n", "n=the count"]}),
            "the answer name \"n\" is given twice",
        ),
    ];

    let mut cmd = lakestar();
    cmd.envs(env);
    let server = Server::start_cmd(cmd, &idx, &["--python", &python]);
    let http = Http::new(&server);
    let mut mcp = Session::start(&idx, &["--python", &python], &env);
    for (args, body, message) in &cases {
        let out = lakestar()
            .envs(env)
            .arg("ask")
            .args(args)
            .arg("--index")
            .arg(&idx)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(message), "CLI {args:?}: {err}");

        let answer = http.post_json("/ask", body);
        assert_error(&answer, 400, "bad_request");
        let text = answer.1["error"]["message"].as_str().unwrap();
        assert!(text.contains(message), "HTTP {body}: {text}");

        let text = mcp.err("ask", body.clone());
        assert!(text.contains(message), "MCP {body}: {text}");
    }
    mcp.close();
    assert!(
        llm.requests().is_empty(),
        "no LLM call for a refused request"
    );
    assert!(
        !idx.join("runs").exists(),
        "no run directory for a refused request"
    );
}
