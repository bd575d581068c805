//! `lakestar serve`: the real binary on 127.0.0.1, driven by reqwest and by raw HTTP/1.1
//! request lines (reqwest normalizes `..` and `%2e%2e` out of URLs before sending).

pub(crate) mod api;
pub(crate) mod ask;
mod limits;
mod rows;

use crate::common::lakestar;
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// A running `lakestar serve`; killed when dropped.
pub struct Server {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    /// `127.0.0.1:PORT`.
    pub addr: String,
    /// Lines of stderr after the `listening on` line (the reader thread keeps draining
    /// the pipe while this is held: a full pipe would block the server's logging).
    stderr: mpsc::Receiver<String>,
}

impl Server {
    /// Serve the index at `index` on a free loopback port with `extra` arguments.
    pub fn start(index: &Path, extra: &[&str]) -> Server {
        Self::start_cmd(lakestar(), index, extra)
    }

    /// [`Server::start`] from a prepared command (environment).
    pub fn start_cmd(mut cmd: Command, index: &Path, extra: &[&str]) -> Server {
        let mut child = cmd
            .args(["serve", "--addr", "127.0.0.1:0", "--index"])
            .arg(index)
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (tx, rx) = mpsc::channel();
        let stderr = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut seen = Vec::new();
        let addr = loop {
            // A hang guard, not a measurement: the server prints this line at once.
            match rx.recv_timeout(Duration::from_secs(60)) {
                Ok(line) => {
                    if let Some(rest) = line.strip_prefix("listening on http://") {
                        break rest.split_whitespace().next().unwrap().to_string();
                    }
                    seen.push(line);
                }
                Err(_) => panic!("serve never said where it listens; stderr: {seen:?}"),
            }
        };
        Server {
            child,
            base: format!("http://{addr}"),
            addr,
            stderr: rx,
        }
    }

    /// The next line of stderr starting with `prefix` (a hang guard of 60 s).
    pub fn wait_line(&self, prefix: &str) -> String {
        loop {
            match self.stderr.recv_timeout(Duration::from_secs(60)) {
                Ok(line) if line.starts_with(prefix) => return line,
                Ok(_) => {}
                Err(e) => panic!("no stderr line starting with {prefix:?}: {e}"),
            }
        }
    }

    /// SIGTERM, then the exit status.
    pub fn stop(mut self) -> ExitStatus {
        // SAFETY: signalling the child we spawned.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "serve did not stop on SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A reqwest client with its own runtime, for blocking-style tests.
pub struct Http {
    pub rt: tokio::runtime::Runtime,
    pub client: reqwest::Client,
    pub base: String,
    token: Option<String>,
}

/// A response: status and body parsed as JSON (Null when it is not JSON).
pub type Answer = (u16, Value);

impl Http {
    pub fn new(server: &Server) -> Http {
        Http {
            rt: tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap(),
            client: reqwest::Client::new(),
            base: server.base.clone(),
            token: None,
        }
    }

    /// Send `Authorization: Bearer token` from now on.
    pub fn with_token(mut self, token: &str) -> Http {
        self.token = Some(token.to_string());
        self
    }

    fn send(&self, req: reqwest::RequestBuilder) -> Answer {
        let req = match &self.token {
            Some(t) => req.bearer_auth(t),
            None => req,
        };
        self.rt.block_on(async {
            let resp = req.send().await.unwrap();
            let status = resp.status().as_u16();
            let text = resp.text().await.unwrap();
            (status, serde_json::from_str(&text).unwrap_or(Value::Null))
        })
    }

    pub fn get(&self, path: &str) -> Answer {
        self.send(self.client.get(format!("{}{path}", self.base)))
    }

    pub fn post_json(&self, path: &str, body: &Value) -> Answer {
        self.send(self.client.post(format!("{}{path}", self.base)).json(body))
    }

    pub fn post_raw(&self, path: &str, content_type: &str, body: Vec<u8>) -> Answer {
        self.send(
            self.client
                .post(format!("{}{path}", self.base))
                .header("content-type", content_type)
                .body(body),
        )
    }
}

/// Send `GET target` exactly as written (no normalization) over a fresh connection;
/// returns the status and the body.
pub fn raw_get(addr: &str, target: &str, headers: &[&str]) -> (u16, String) {
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let mut req = format!("GET {target} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for h in headers {
        req.push_str(h);
        req.push_str("\r\n");
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes()).unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).unwrap();
    let text = String::from_utf8_lossy(&out).into_owned();
    let status: u16 = text
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no status line in {text:?}"));
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (status, body)
}

/// Assert the API's error shape with this status and code.
#[track_caller]
pub fn assert_error(answer: &Answer, status: u16, code: &str) {
    let (got, body) = answer;
    assert_eq!(*got, status, "{body}");
    assert_eq!(body["error"]["code"], code, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty()),
        "{body}"
    );
}
