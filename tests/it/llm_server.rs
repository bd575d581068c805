//! A scripted OpenAI-compatible Chat Completions server on 127.0.0.1: the one stand-in
//! the tests allow (no machine here reaches a real LLM).
//!
//! Replies are queued per role, the role being what the client sends in the
//! `X-Lakestar-Role` header; every request is recorded so that a test can check the
//! prompts the agent wrote. A request for a role with nothing left in its queue gets a
//! 400 (not retried by the client), so a test whose script runs out fails at once with
//! the role named.

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use serde_json::{json, Value};
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

/// One scripted answer.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A 200 whose assistant message is this text.
    Text(String),
    /// An error status, with an optional `Retry-After` in seconds.
    Status { code: u16, retry_after: Option<u64> },
}

/// One request the server received.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// The `X-Lakestar-Role` header ("" when missing).
    pub role: String,
    /// The `Authorization` header, if any.
    pub authorization: Option<String>,
    /// The JSON body.
    pub body: Value,
}

impl Recorded {
    /// The messages' contents joined by blank lines: what the model was shown.
    pub fn prompt(&self) -> String {
        self.body["messages"]
            .as_array()
            .map(|m| {
                m.iter()
                    .filter_map(|m| m["content"].as_str())
                    .collect::<Vec<_>>()
                    .join("\n\n")
            })
            .unwrap_or_default()
    }
}

#[derive(Default)]
struct Script {
    replies: HashMap<String, VecDeque<Reply>>,
    requests: Vec<Recorded>,
}

/// A running scripted server; it stops when dropped.
pub struct ScriptedLlm {
    port: u16,
    script: Arc<Mutex<Script>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl ScriptedLlm {
    /// Start a server on an ephemeral loopback port.
    pub fn start() -> Self {
        let script = Arc::new(Mutex::new(Script::default()));
        let (port_tx, port_rx) = std::sync::mpsc::channel();
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let shared = script.clone();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                port_tx.send(listener.local_addr().unwrap().port()).unwrap();
                let app = Router::new()
                    .route("/v1/chat/completions", post(chat))
                    .with_state(shared);
                axum::serve(listener, app)
                    .with_graceful_shutdown(async {
                        let _ = stop_rx.await;
                    })
                    .await
                    .unwrap();
            });
        });
        let port = port_rx.recv().unwrap();
        ScriptedLlm {
            port,
            script,
            stop: Some(stop_tx),
            thread: Some(thread),
        }
    }

    /// The base URL to give a client (`OPENAI_BASE_URL`).
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// Queue a text reply for `role`.
    pub fn say(&self, role: &str, text: &str) -> &Self {
        self.push(role, Reply::Text(text.to_string()))
    }

    /// Queue any reply for `role`.
    pub fn push(&self, role: &str, reply: Reply) -> &Self {
        let mut s = self.script.lock().unwrap();
        s.replies
            .entry(role.to_string())
            .or_default()
            .push_back(reply);
        self
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<Recorded> {
        self.script.lock().unwrap().requests.clone()
    }

    /// The prompts received for `role`, in order.
    pub fn prompts(&self, role: &str) -> Vec<String> {
        self.requests()
            .iter()
            .filter(|r| r.role == role)
            .map(Recorded::prompt)
            .collect()
    }

    /// Replies still queued, by role (a finished run should leave none).
    pub fn left(&self) -> HashMap<String, usize> {
        let s = self.script.lock().unwrap();
        s.replies
            .iter()
            .filter(|(_, q)| !q.is_empty())
            .map(|(r, q)| (r.clone(), q.len()))
            .collect()
    }
}

impl Drop for ScriptedLlm {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

async fn chat(
    State(script): State<Arc<Mutex<Script>>>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    let role = header("x-lakestar-role").unwrap_or_default();
    let recorded = Recorded {
        role: role.clone(),
        authorization: header("authorization"),
        body: body.clone(),
    };
    let reply = {
        let mut s = script.lock().unwrap();
        s.requests.push(recorded.clone());
        s.replies.get_mut(&role).and_then(VecDeque::pop_front)
    };
    match reply {
        None => (
            StatusCode::BAD_REQUEST,
            Json(json!({"error": {"message": format!("scripted server: no reply left for role {role:?}")}})),
        )
            .into_response(),
        Some(Reply::Status { code, retry_after }) => {
            let mut r = (
                StatusCode::from_u16(code).unwrap(),
                Json(json!({"error": {"message": format!("scripted status {code}")}})),
            )
                .into_response();
            if let Some(s) = retry_after {
                r.headers_mut()
                    .insert("retry-after", s.to_string().parse().unwrap());
            }
            r
        }
        Some(Reply::Text(text)) => {
            // Token counts the way a real server reports them: roughly 4 characters each.
            let prompt_tokens = recorded.prompt().len() / 4 + 1;
            let completion_tokens = text.len() / 4 + 1;
            Json(json!({
                "id": "chatcmpl-scripted",
                "object": "chat.completion",
                "model": body["model"],
                "choices": [{
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop"
                }],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens
                }
            }))
            .into_response()
        }
    }
}

#[test]
fn scripted_server_replies_per_role_in_order_and_records() {
    let llm = ScriptedLlm::start();
    llm.push(
        "planner",
        Reply::Status {
            code: 429,
            retry_after: Some(1),
        },
    )
    .say("planner", "load the file");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let url = format!("{}/chat/completions", llm.base_url());
    let send = |role: &'static str| {
        let url = url.clone();
        async move {
            reqwest::Client::new()
                .post(url)
                .header("X-Lakestar-Role", role)
                .json(&json!({"model": "m", "messages": [{"role": "user", "content": "q?"}]}))
                .send()
                .await
                .unwrap()
        }
    };
    rt.block_on(async {
        let first = send("planner").await;
        assert_eq!(first.status(), 429);
        assert_eq!(first.headers()["retry-after"], "1");
        let second: Value = send("planner").await.json().await.unwrap();
        assert_eq!(second["choices"][0]["message"]["content"], "load the file");
        assert!(second["usage"]["prompt_tokens"].as_u64().unwrap() > 0);
        assert_eq!(send("coder").await.status(), 400);
    });
    assert_eq!(llm.prompts("planner"), vec!["q?", "q?"]);
    assert_eq!(llm.requests().len(), 3);
    assert!(llm.left().is_empty());
}
