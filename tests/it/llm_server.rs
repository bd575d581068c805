//! A scripted OpenAI-compatible Chat Completions server on 127.0.0.1: the one stand-in
//! the tests allow (no machine here reaches a real LLM).
//!
//! Replies are queued per role, the role being what the client sends in the
//! `X-Lakestar-Role` header; every request is recorded so that a test can check the
//! prompts the agent wrote. A request for a role with nothing left in its queue gets a
//! 400 (not retried by the client), so a test whose script runs out fails at once with
//! the role named.
//!
//! Like a local llama.cpp server it can also be given a context window
//! ([`ScriptedLlm::context`]: a request whose prompt and `max_tokens` exceed it gets
//! llama-cpp-python's 400), report it at `GET /props`, count tokens at `POST /tokenize`,
//! and report a prefix cache in `usage`; its tokenizer is [`server_tokens`].

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
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
    /// A 200 with this text, sent only after the wait: a slow model.
    Late(std::time::Duration, String),
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
    /// The prompt's tokens by the server's own count ([`server_tokens`] of each message,
    /// plus [`MESSAGE_TOKENS`] each).
    pub prompt_tokens: usize,
    /// Refused as larger than the context window.
    pub refused: bool,
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
    /// The window enforced, if any.
    context: Option<usize>,
    /// Whether `/props` and `/tokenize` answer (else 404, like a server without them).
    llama_endpoints: bool,
    /// Whether `usage` reports cached prompt tokens (a prefix cache of one slot).
    cache: bool,
    /// The previous request's messages, for the cache.
    last_prompt: String,
    /// Whether `max_tokens` is refused, as OpenAI's reasoning models do.
    wants_max_completion_tokens: bool,
}

/// Tokens a chat template adds around one message.
pub const MESSAGE_TOKENS: usize = 4;

/// The scripted server's tokenizer, after Qwen2's pre-tokenizer: every digit a token,
/// every punctuation character a token (a single space before it or before a word
/// merges in), a word one token, whitespace runs one token (two when a line break is
/// followed by indentation).
pub fn server_tokens(text: &str) -> usize {
    let c: Vec<char> = text.chars().collect();
    let (mut n, mut i) = (0, 0);
    while i < c.len() {
        if c[i].is_alphabetic() {
            while i < c.len() && c[i].is_alphabetic() {
                i += 1;
            }
            n += 1;
        } else if !c[i].is_whitespace() {
            n += 1;
            i += 1;
        } else {
            let start = i;
            while i < c.len() && c[i].is_whitespace() {
                i += 1;
            }
            let run = &c[start..i];
            let merges = run == [' '] && i < c.len() && !c[i].is_numeric();
            if !merges {
                n += 1;
                if run
                    .iter()
                    .rposition(|&x| x == '\n')
                    .is_some_and(|p| p + 1 < run.len())
                {
                    n += 1;
                }
            }
        }
    }
    n
}

/// The joined messages of a request body, as the cache compares them.
fn joined(body: &Value) -> String {
    body["messages"]
        .as_array()
        .map(|m| {
            m.iter()
                .map(|m| {
                    format!(
                        "<{}>{}",
                        m["role"].as_str().unwrap_or(""),
                        m["content"].as_str().unwrap_or("")
                    )
                })
                .collect()
        })
        .unwrap_or_default()
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
                    .route("/props", get(props))
                    .route("/tokenize", post(tokenize))
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

    /// Enforce a context window of `tokens`, counted by [`server_tokens`].
    pub fn context(&self, tokens: usize) -> &Self {
        self.script.lock().unwrap().context = Some(tokens);
        self
    }

    /// Answer `GET /props` (with the window) and `POST /tokenize`, as llama.cpp does.
    pub fn llama_endpoints(&self) -> &Self {
        self.script.lock().unwrap().llama_endpoints = true;
        self
    }

    /// Report the prompt tokens shared with the previous request as cached.
    pub fn prefix_cache(&self) -> &Self {
        self.script.lock().unwrap().cache = true;
        self
    }

    /// Refuse `max_tokens` with OpenAI's 400, asking for `max_completion_tokens`.
    pub fn wants_max_completion_tokens(&self) -> &Self {
        self.script.lock().unwrap().wants_max_completion_tokens = true;
        self
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

async fn props(State(script): State<Arc<Mutex<Script>>>) -> Response {
    let s = script.lock().unwrap();
    match (s.llama_endpoints, s.context) {
        (true, Some(n)) => {
            Json(json!({"default_generation_settings": {"n_ctx": n}})).into_response()
        }
        _ => StatusCode::NOT_FOUND.into_response(),
    }
}

async fn tokenize(State(script): State<Arc<Mutex<Script>>>, Json(body): Json<Value>) -> Response {
    if !script.lock().unwrap().llama_endpoints {
        return StatusCode::NOT_FOUND.into_response();
    }
    let n = server_tokens(body["content"].as_str().unwrap_or(""));
    Json(json!({"tokens": vec![1; n]})).into_response()
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
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let prompt_tokens: usize = messages
        .iter()
        .map(|m| server_tokens(m["content"].as_str().unwrap_or("")) + MESSAGE_TOKENS)
        .sum();
    let max_tokens = body["max_tokens"].as_u64().unwrap_or(0) as usize;
    let mut recorded = Recorded {
        role: role.clone(),
        authorization: header("authorization"),
        body: body.clone(),
        prompt_tokens,
        refused: false,
    };
    let (reply, cached) = {
        let mut s = script.lock().unwrap();
        if s.wants_max_completion_tokens && body.get("max_tokens").is_some() {
            s.requests.push(recorded);
            let message = "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.";
            return (
                StatusCode::BAD_REQUEST,
                Json(json!({"error": {"message": message, "type": "invalid_request_error", "param": "max_tokens"}})),
            )
                .into_response();
        }
        if let Some(n) = s.context.filter(|&n| prompt_tokens + max_tokens > n) {
            recorded.refused = true;
            s.requests.push(recorded);
            // llama-cpp-python's answer, status and wording.
            let message =
                format!("Requested tokens ({prompt_tokens}) exceed context window of {n}");
            return (
                StatusCode::BAD_REQUEST,
                Json(json!({"error": {"message": message, "type": "internal_server_error"}})),
            )
                .into_response();
        }
        s.requests.push(recorded.clone());
        let text = joined(&body);
        let common: String = s
            .last_prompt
            .chars()
            .zip(text.chars())
            .take_while(|(a, b)| a == b)
            .map(|(a, _)| a)
            .collect();
        let cached = if s.cache { server_tokens(&common) } else { 0 };
        s.last_prompt = text;
        (
            s.replies.get_mut(&role).and_then(VecDeque::pop_front),
            cached,
        )
    };
    if let Some(Reply::Late(wait, _)) = &reply {
        tokio::time::sleep(*wait).await;
    }
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
        Some(Reply::Text(text) | Reply::Late(_, text)) => {
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
                    "total_tokens": prompt_tokens + completion_tokens,
                    "prompt_tokens_details": {"cached_tokens": cached}
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
