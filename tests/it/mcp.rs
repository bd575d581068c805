//! `lakestar mcp`: the binary spawned as an MCP client spawns it, spoken to in JSON-RPC
//! lines over its stdin and stdout (initialize, tools/list, tools/call), on the shared
//! DABench lake and on small lakes written here. Every line the server writes to stdout
//! must parse as a JSON-RPC message.

use crate::agent::fenced;
use crate::common::*;
use crate::llm_server::ScriptedLlm;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// Longest wait for one answer: a guard against a hung server, not a timing check.
const ANSWER_WAIT: Duration = Duration::from_secs(300);

/// A running `lakestar mcp` and the lines it wrote.
pub(crate) struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    /// The server's log (stderr), shown when a test fails.
    log: std::sync::Arc<std::sync::Mutex<String>>,
    lines: Receiver<String>,
    next_id: u64,
    /// Notifications (and answers to requests given up on) received while waiting.
    notifications: Vec<Value>,
}

impl Session {
    /// Start `lakestar mcp --index IDX ARGS` with `env`, and do the handshake.
    pub(crate) fn start(idx: &Path, args: &[&str], env: &[(&str, &str)]) -> Session {
        let mut child = lakestar()
            .args(["mcp", "--index", idx.to_str().unwrap()])
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Kept rather than inherited: a passing run prints nothing of it.
        let log = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let stderr = child.stderr.take().unwrap();
        let sink = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                let mut l = sink.lock().unwrap_or_else(|p| p.into_inner());
                l.push_str(&line);
                l.push('\n');
            }
        });
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        let mut s = Session {
            child,
            stdin,
            log,
            lines: rx,
            next_id: 0,
            notifications: Vec::new(),
        };
        let init = s.request(
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "lakestar-tests", "version": "0"}
            }),
        );
        let r = &init["result"];
        assert_eq!(r["serverInfo"]["name"], "lakestar", "{init}");
        assert!(r["capabilities"]["tools"].is_object(), "{init}");
        assert!(
            r["instructions"].as_str().unwrap().contains("search_files"),
            "{init}"
        );
        s.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        s
    }

    fn send(&mut self, msg: &Value) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{msg}").unwrap();
        stdin.flush().unwrap();
    }

    /// The next line from the server, parsed: it must be a JSON-RPC 2.0 message.
    fn read(&mut self) -> Option<Value> {
        match self.lines.recv_timeout(ANSWER_WAIT) {
            Ok(line) => {
                let v: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("stdout holds a non-JSON line {line:?}: {e}"));
                assert_eq!(v["jsonrpc"], "2.0", "not JSON-RPC: {line}");
                Some(v)
            }
            Err(RecvTimeoutError::Disconnected) => None,
            Err(RecvTimeoutError::Timeout) => panic!("no answer from lakestar mcp"),
        }
    }

    /// Send a request; its id.
    fn send_request(&mut self, method: &str, params: Value) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// Wait for the response to request `id` (keeping what else arrives).
    fn response(&mut self, id: u64) -> Value {
        loop {
            let v = self.read().expect("the server closed stdout");
            if v["id"] == json!(id) && v.get("method").is_none() {
                return v;
            }
            self.notifications.push(v);
        }
    }

    /// Send a request and wait for its response.
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.send_request(method, params);
        self.response(id)
    }

    /// `tools/call NAME ARGS`: the call's result (a tool error is a result too).
    fn call(&mut self, name: &str, args: Value) -> Value {
        let v = self.request("tools/call", json!({"name": name, "arguments": args}));
        v.get("result")
            .unwrap_or_else(|| panic!("tools/call {name} failed: {v}"))
            .clone()
    }

    /// A successful call's structured content (checked against its text content).
    pub(crate) fn ok(&mut self, name: &str, args: Value) -> Value {
        let r = self.call(name, args.clone());
        assert_eq!(r["isError"], false, "{name} {args}: {r}");
        let structured = r["structuredContent"].clone();
        let text: Value = serde_json::from_str(r["content"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(text, structured, "the text content is the same JSON");
        structured
    }

    /// A call that must fail as a tool error; its message.
    pub(crate) fn err(&mut self, name: &str, args: Value) -> String {
        let r = self.call(name, args.clone());
        assert_eq!(r["isError"], true, "{name} {args} should fail: {r}");
        r["content"][0]["text"].as_str().unwrap().to_string()
    }

    /// Close stdin: the server must exit cleanly, having written only JSON-RPC.
    pub(crate) fn close(mut self) {
        drop(self.stdin.take());
        while self.read().is_some() {}
        let status = self.child.wait().unwrap();
        assert!(status.success(), "lakestar mcp exited with {status}");
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let log = self.log.lock().unwrap_or_else(|p| p.into_inner());
            eprintln!("lakestar mcp's log:\n{log}");
        }
    }
}

pub(crate) fn hit_paths(search: &Value) -> Vec<String> {
    search["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["path"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn an_mcp_client_searches_describes_and_reads_the_status_of_the_dabench_lake() {
    let (_tmp, idx) = index_shared("dabench/da-dev-tables");
    let mut s = Session::start(&idx, &[], &[]);

    let list = s.request("tools/list", json!({}));
    let tools = list["result"]["tools"].as_array().unwrap();
    let mut names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "ask",
            "describe_file",
            "head",
            "index_status",
            "reindex",
            "search_files"
        ]
    );
    for t in tools {
        assert_eq!(t["inputSchema"]["type"], "object", "{t}");
        assert!(t["description"].as_str().unwrap().len() > 200, "{t}");
    }
    let search = tools.iter().find(|t| t["name"] == "search_files").unwrap();
    assert_eq!(search["inputSchema"]["required"], json!(["query"]));
    for p in ["query", "k", "format", "glob"] {
        assert!(search["inputSchema"]["properties"][p].is_object(), "{p}");
    }
    assert_eq!(search["annotations"]["readOnlyHint"], true);

    // Questions of the DABench development set whose table is known.
    let r = s.ok(
        "search_files",
        json!({"query": "Is there any correlation between the TOTUSJH and TOTUSJZ columns in the dataset?", "k": 5}),
    );
    assert_eq!(r["count"], 5);
    let paths = hit_paths(&r);
    assert_eq!(paths[0], "3901.csv", "{r}");
    let top = &r["hits"][0];
    assert_eq!(top["format"], "csv");
    assert!(top["score"].as_f64().unwrap() > 0.0);
    assert!(top["summary"].as_str().unwrap().starts_with("3901.csv"));
    let r = s.ok(
        "search_files",
        json!({"query": "Which country has the highest number of deaths recorded in a single year?"}),
    );
    assert_eq!(r["count"], 10, "k defaults to 10");
    assert!(hit_paths(&r)[..3].contains(&"estimated_numbers.csv".to_string()));
    let csv = s.ok(
        "search_files",
        json!({"query": "deaths by country", "format": ".CSV", "k": 3}),
    );
    assert_eq!(csv["count"], 3);
    let xlsx = s.ok(
        "search_files",
        json!({"query": "deaths by country", "format": "xlsx"}),
    );
    assert_eq!(xlsx["count"], 0, "no spreadsheet in this lake: {xlsx}");

    let d = s.ok("describe_file", json!({"path": "3901.csv"}));
    assert_eq!(d["path"], "3901.csv");
    assert_eq!(d["format"], "csv");
    assert_eq!(d["state"], "ok");
    assert_eq!(d["stale"], false);
    let text = d["description"].as_str().unwrap();
    assert!(
        text.contains("TOTUSJH") && text.contains("TOTUSJZ"),
        "{text}"
    );
    let short = s.ok(
        "describe_file",
        json!({"path": "./3901.csv", "max_bytes": 256}),
    );
    assert!(short["description"].as_str().unwrap().len() <= 256);

    // Bad arguments are tool errors that say what is wrong; the server goes on.
    assert!(s
        .err("describe_file", json!({"path": "../x"}))
        .contains("`..` is refused"));
    assert!(s
        .err("describe_file", json!({"path": "/etc/passwd"}))
        .contains("absolute paths are refused"));
    assert!(s
        .err("describe_file", json!({"path": "nope.csv"}))
        .contains("not in the index"));
    assert!(s
        .err("describe_file", json!({"path": "3901.csv", "max_bytes": 0}))
        .contains("max_bytes must be between"));
    assert!(s
        .err("search_files", json!({"query": "  "}))
        .contains("empty"));
    for k in [0, 1001, 1u64 << 40] {
        let e = s.err("search_files", json!({"query": "wind speed", "k": k}));
        assert!(e.contains("k must be between 1 and 1000"), "{e}");
    }
    assert!(s
        .err("search_files", json!({"query": "x", "k": -1}))
        .contains("k"));
    let e = s.err(
        "search_files",
        json!({"query": "x", "format": "spreadsheet-ish"}),
    );
    assert!(e.contains("unknown format") && e.contains("parquet"), "{e}");
    let unknown = s.request(
        "tools/call",
        json!({"name": "drop_tables", "arguments": {}}),
    );
    assert!(unknown["error"].is_object(), "{unknown}");

    let st = s.ok("index_status", json!({}));
    let files = count_files(&shared_lakes().join("dabench/da-dev-tables"));
    assert_eq!(n(&st, "files"), files);
    assert_eq!(n(&st, "files"), 64);
    assert_eq!(st["by_format"]["csv"], 64);
    assert_eq!(st["errors_total"], 0);
    assert!(st["last_index_at"].is_string());

    // Without an LLM, ask says how to configure one.
    let e = s.err("ask", json!({"question": "What is the mean of TOTUSJH?"}));
    assert!(
        e.contains("LAKESTAR_MODEL")
            && e.contains("OPENAI_BASE_URL")
            && e.contains("lakestar.toml"),
        "{e}"
    );
    assert!(s.err("ask", json!({"question": ""})).contains("empty"));
    s.close();
}

#[test]
fn reindex_adds_a_new_file_and_refuses_while_another_writer_holds_the_index() {
    let tmp = tempfile::tempdir().unwrap();
    let lake = tmp.path().join("lake");
    std::fs::create_dir(&lake).unwrap();
    std::fs::write(
        lake.join("penguins.csv"),
        "species,island,flipper_length_mm\nAdelie,Torgersen,181\nGentoo,Biscoe,217\n",
    )
    .unwrap();
    // A hidden file, indexed with --hidden: reindex keeps it, as the index records.
    std::fs::write(lake.join(".notes.csv"), "note\nkeep me\n").unwrap();
    let idx = tmp.path().join("idx");
    run_ok(
        tmp.path(),
        &[
            "index",
            lake.to_str().unwrap(),
            "--index",
            idx.to_str().unwrap(),
            "--hidden",
        ],
    );
    let mut s = Session::start(&idx, &[], &[]);
    assert_eq!(n(&s.ok("index_status", json!({})), "files"), 2);

    std::fs::write(
        lake.join("volcanoes.csv"),
        "volcano,country,elevation_m\nEtna,Italy,3357\nFuji,Japan,3776\n",
    )
    .unwrap();
    let q = json!({"query": "volcano elevation by country", "k": 3});
    assert!(!hit_paths(&s.ok("search_files", q.clone())).contains(&"volcanoes.csv".into()));
    // A watcher (here: the lock taken by this test) keeps the index: reindex says so.
    let held = lakestar::index::lock::WriterLock::acquire(&idx).unwrap();
    let e = s.err("reindex", json!({}));
    assert!(
        e.contains(&format!("locked by pid {}", std::process::id())) && e.contains("watch"),
        "{e}"
    );
    release_lock(held);

    let report = s.ok("reindex", json!({}));
    assert_counts(
        &report,
        &[
            ("files_seen", 3),
            ("added", 1),
            ("unchanged", 2),
            ("deleted", 0),
            ("errors", 0),
        ],
    );
    assert_eq!(hit_paths(&s.ok("search_files", q))[0], "volcanoes.csv");
    let d = s.ok("describe_file", json!({"path": "volcanoes.csv"}));
    assert!(d["description"].as_str().unwrap().contains("elevation_m"));
    assert_eq!(n(&s.ok("index_status", json!({})), "files"), 3);
    assert_counts(
        &s.ok("reindex", json!({})),
        &[("unchanged", 3), ("added", 0), ("deleted", 0)],
    );
    s.close();
}

#[test]
fn ask_runs_the_agent_with_a_configured_llm_and_reports_progress() {
    let tmp = tempfile::tempdir().unwrap();
    let lake = tmp.path().join("lake");
    std::fs::create_dir(&lake).unwrap();
    std::fs::write(
        lake.join("sales.csv"),
        "region,amount\nnorth,10\nsouth,20\nnorth,5\n",
    )
    .unwrap();
    let idx = index_into(tmp.path(), &lake);
    let csv = lake.canonicalize().unwrap().join("sales.csv");
    let code = format!(
        "import csv\nrows = list(csv.DictReader(open({:?})))\nprint(sum(int(r['amount']) for r in rows if r['region'] == 'north'))",
        csv.display().to_string()
    );
    let llm = ScriptedLlm::start();
    llm.say("planner", "Sum the north amounts.")
        .say("coder", &fenced(&code))
        .say("verifier", "Sufficient.")
        // The finalyzer gives the value asked for by name.
        .say(
            "finalyzer",
            &fenced(&code.replace("print(sum(", "answer('north_total', sum(")),
        );
    let base = llm.base_url();
    let mut s = Session::start(
        &idx,
        &["--python", &python3()],
        &[
            ("OPENAI_BASE_URL", base.as_str()),
            ("OPENAI_API_KEY", "sk-test"),
            ("LAKESTAR_MODEL", "scripted-model"),
        ],
    );
    assert!(s
        .err("ask", json!({"question": "North sales?", "k": 0}))
        .contains("k must be between 1 and 100"));
    let v = s.request(
        "tools/call",
        json!({
            "name": "ask",
            "arguments": {"question": "North sales?", "guidelines": "Just the integer.",
                          "answer_names": ["north_total"]},
            "_meta": {"progressToken": "ask-1"}
        }),
    );
    let r = &v["result"];
    assert_eq!(r["isError"], false, "{v}");
    let a = &r["structuredContent"];
    assert_eq!(a["answer"], "15", "{a}");
    assert_eq!(a["answers"], json!([{"name": "north_total", "value": 15}]));
    assert_eq!(a["status"], "sufficient");
    assert_eq!(a["rounds"], 1);
    assert_eq!(a["files"], json!([csv.display().to_string()]));
    assert_eq!(a["llm"]["calls"], 4);
    let run_dir = Path::new(a["run_dir"].as_str().unwrap());
    let runs = run_dir.parent().unwrap();
    assert!(runs.ends_with("runs"), "{}", run_dir.display());
    assert_eq!(
        runs.parent().unwrap().canonicalize().unwrap(),
        idx.canonicalize().unwrap()
    );
    assert_eq!(
        std::fs::read_to_string(run_dir.join("answer.txt")).unwrap(),
        "15\n"
    );
    assert!(llm.prompts("finalyzer")[0].contains("Just the integer."));
    assert!(llm.left().is_empty(), "{:?}", llm.left());
    // Progress: one notification per event, numbered, for the call's token.
    let progress: Vec<&Value> = s
        .notifications
        .iter()
        .filter(|n| n["method"] == "notifications/progress")
        .collect();
    assert!(progress.len() >= 6, "{:?}", s.notifications);
    for (i, p) in progress.iter().enumerate() {
        assert_eq!(p["params"]["progressToken"], "ask-1");
        assert_eq!(p["params"]["progress"].as_f64().unwrap(), (i + 1) as f64);
    }
    assert!(progress
        .iter()
        .any(|p| p["params"]["message"] == "round 1 · verdict: sufficient"));
    s.close();
}

/// A process that exists and is not a zombie.
fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat.contains(") Z "),
        Err(_) => false,
    }
}

#[test]
fn a_cancelled_ask_kills_its_script_and_the_server_goes_on() {
    let tmp = tempfile::tempdir().unwrap();
    let lake = tmp.path().join("lake");
    std::fs::create_dir(&lake).unwrap();
    std::fs::write(lake.join("a.csv"), "x\n1\n").unwrap();
    let idx = index_into(tmp.path(), &lake);
    let llm = ScriptedLlm::start();
    llm.say("planner", "Wait.")
        .say("coder", &fenced("import time\ntime.sleep(3600)"));
    let base = llm.base_url();
    let mut s = Session::start(
        &idx,
        &["--python", &python3()],
        &[
            ("OPENAI_BASE_URL", base.as_str()),
            ("LAKESTAR_MODEL", "scripted-model"),
        ],
    );
    let id = s.send_request(
        "tools/call",
        json!({"name": "ask", "arguments": {"question": "Wait?"}}),
    );
    let start = Instant::now();
    let pid: i32 = loop {
        let runs = idx.join("runs");
        let found =
            crate::common::process_with(&[runs.to_str().unwrap(), "exec/001-solution/script.py"]);
        if let Some(p) = found {
            break p;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the script never started"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(alive(pid));
    s.send(&json!({
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": id, "reason": "the user gave up"}
    }));
    let gone = Instant::now();
    while alive(pid) && gone.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!alive(pid), "the script outlived the cancelled call");
    assert_eq!(n(&s.ok("index_status", json!({})), "files"), 1);
    s.close();
}
