//! Agent runs over HTTP: `POST /ask` starts one in a tokio task and answers at once with
//! its id; `GET /runs/{id}` says how it stands; `GET /runs/{id}/events` streams its trace.
//! `GET /ask` says whether an LLM is configured at all.
//!
//! The run directory (`INDEX/runs/ID`, the same place `lakestar ask` writes) is the
//! truth: its `summary.json` says how a run ended and its `trace.jsonl` is what the event
//! stream replays and follows. The registry only knows which runs this process is
//! running, so runs of `lakestar ask` and of earlier servers can be read too.

use super::errors::ApiError;
use super::AppState;
use crate::agent::context::FileContext;
use crate::agent::rules::RuleSet;
use crate::agent::{Agent, AgentError, Summary};
use crate::service::ask::{self as service, AskRequest, Limits, Selection};
use crate::service::{paths, ServiceError};
use axum::extract::rejection::{JsonRejection, PathRejection};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::Json;
use futures_util::Stream;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::convert::Infallible;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{watch, Semaphore};
use tokio::task::AbortHandle;

pub use service::{DEFAULT_BUDGET, DEFAULT_ROUNDS, MAX_FILES, MAX_ROUNDS, MAX_WANTED};
/// How often an event stream looks for new trace lines. The trace file is polled rather
/// than fed from the agent so that a stream follows any run in the index's runs
/// directory the same way, whoever writes it.
const POLL: Duration = Duration::from_millis(100);

/// The runs this server started and still runs.
pub struct Runs {
    dir: PathBuf,
    slots: Arc<Semaphore>,
    max: usize,
    active: Mutex<HashMap<String, AbortHandle>>,
    /// Runs that stopped before writing a summary (their record could not be written,
    /// or the task died), with why. Rare; kept for the process's life.
    failed: Mutex<HashMap<String, String>>,
}

impl Runs {
    /// Runs recorded under `dir`, at most `max` at a time.
    pub fn new(dir: PathBuf, max: usize) -> Self {
        Runs {
            dir,
            slots: Arc::new(Semaphore::new(max)),
            max,
            active: Mutex::default(),
            failed: Mutex::default(),
        }
    }

    fn is_active(&self, id: &str) -> bool {
        self.active
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains_key(id)
    }

    /// Stop every run in progress (at shutdown). Dropping a run kills its script; what it
    /// traced so far stays.
    pub fn stop_all(&self) {
        // Collected first: a stopped run removes itself from the registry.
        let handles: Vec<AbortHandle> = self
            .active
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .cloned()
            .collect();
        for handle in handles {
            handle.abort();
        }
    }

    fn ended(&self, id: &str, failure: Option<String>) {
        if let Some(why) = failure {
            tracing::warn!("run {id} stopped: {why}");
            self.failed
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(id.to_string(), why);
        }
        self.active
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(id);
    }
}

/// Whether `id` has the shape [`crate::agent::run_id`] gives (`YYYYMMDD-HHMMSS-hhhh`): nothing else
/// names a run, so no id can point elsewhere on disk.
pub fn valid_run_id(id: &str) -> bool {
    let b = id.as_bytes();
    b.len() == 20
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 15 => *c == b'-',
            0..=14 => c.is_ascii_digit(),
            _ => c.is_ascii_digit() || (b'a'..=b'f').contains(c),
        })
}

fn checked_id(id: Result<Path<String>, PathRejection>) -> Result<String, ApiError> {
    let Path(id) = id?;
    if valid_run_id(&id) {
        Ok(id)
    } else {
        Err(ApiError::bad_request(
            "not a run id: ids look like 20260101-120000-0a1b, as POST /ask returns them",
        ))
    }
}

/// The body of `POST /ask`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AskBody {
    /// The question.
    question: String,
    /// Give the agent exactly this many retrieved files (default: as many as fit 8000
    /// tokens of descriptions).
    k: Option<usize>,
    /// Work on these lake-relative files instead of retrieving.
    files: Option<Vec<String>>,
    /// Answer-format guidelines.
    guidelines: Option<String>,
    /// Values to give, as `ask --answer`: `NAME` or `NAME=WHAT`.
    answer_names: Option<Vec<String>>,
    /// `plain` or `tagged`, as `ask --answer-form`.
    answer_form: Option<String>,
    /// Verifier rounds at most.
    max_rounds: Option<usize>,
    /// The rules the loop adds to Algorithm 1, as `--rules` spells them (default: all).
    rules: Option<String>,
}

/// The answer of `POST /ask`.
#[derive(Debug, Serialize)]
pub struct Started {
    /// The run id.
    pub id: String,
    /// Where its state is.
    pub run: String,
    /// Where its events stream.
    pub events: String,
    /// The files it works on, lake-relative.
    pub files: Vec<String>,
}

/// The request of a body, validated as every surface validates it (pinned paths are
/// confined to the lake later, in [`prepare`]).
fn request(b: &AskBody) -> Result<AskRequest, ApiError> {
    if b.files.as_ref().is_some_and(Vec::is_empty) {
        return Err(ApiError::bad_request(
            "files is empty; leave it out to retrieve files for the question",
        ));
    }
    let rules = match &b.rules {
        Some(r) => r
            .parse::<RuleSet>()
            .map_err(|e| ApiError::bad_request(format!("rules: {e}")))?,
        None => RuleSet::all(),
    };
    let (wanted, form) =
        service::answer_fields(b.answer_names.as_deref(), b.answer_form.as_deref())?;
    let r = AskRequest {
        question: b.question.clone(),
        guidelines: b.guidelines.clone(),
        wanted,
        form,
        selection: match &b.files {
            Some(f) => Selection::Pinned(f.iter().map(PathBuf::from).collect()),
            None => Selection::Retrieved {
                k: b.k,
                budget: None,
            },
        },
        limits: Limits {
            max_rounds: b.max_rounds.unwrap_or(DEFAULT_ROUNDS),
            rules,
            ..Limits::default()
        },
    };
    r.validate()?;
    Ok(r)
}

/// The agent and the files of a new run (blocking: reads the index, resolves Python).
/// Pinned paths are confined to the lake first, whatever else is wrong.
fn prepare(
    s: &AppState,
    mut r: AskRequest,
) -> Result<(Agent, Vec<FileContext>, &'static str, AskRequest), ApiError> {
    let dir = s.lake.dir();
    if let Selection::Pinned(given) = &r.selection {
        let mut abs = Vec::new();
        for f in given {
            let rel = paths::confine(s.lake.root(), &f.to_string_lossy())?;
            let full = s.lake.root().join(&rel);
            if !full.is_file() {
                return Err(ServiceError::NotFound { path: rel }.into());
            }
            abs.push(full);
        }
        r.selection = Selection::Pinned(abs);
    }
    let agent = Agent::build(Some(dir), &s.agent)?;
    // The served searcher: no second load of the embedder and the vector graph.
    let searcher = match r.selection {
        Selection::Retrieved { .. } => Some(s.lake.searcher()?),
        Selection::Pinned(_) => None,
    };
    let (files, selection) = r.files(
        Some(dir),
        searcher.as_deref(),
        s.lake.root(),
        agent.prompts.methods(),
    )?;
    Ok((agent, files, selection, r))
}

/// The answer of `GET /ask`: whether `POST /ask` can run an agent.
#[derive(Debug, Serialize)]
pub struct Readiness {
    /// An LLM is configured, or a cassette replays one.
    pub ready: bool,
    /// The configured model (the planner's, when roles differ).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Why not, and how to configure one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

/// `GET /ask`: whether this server can answer questions, read the way `POST /ask` reads
/// the configuration (again on every call: an edited `lakestar.toml` counts at once), so
/// that a page can say so before a question is typed.
pub async fn readiness(State(s): State<AppState>) -> Result<Json<Readiness>, ApiError> {
    use crate::agent::llm::{Cassette, LlmConfig, Role};
    let dir = s.lake.dir().to_path_buf();
    let replaying = matches!(s.agent.cassette, Cassette::Replay(_));
    let config = tokio::task::spawn_blocking(move || LlmConfig::load(Some(&dir)))
        .await
        .map_err(|e| ApiError::internal(e.to_string()))?;
    Ok(Json(match config {
        Ok(c) if c.is_configured() || replaying => Readiness {
            ready: true,
            model: c.model_for(Role::Planner).map(String::from),
            why: None,
        },
        Ok(_) => Readiness {
            ready: false,
            model: None,
            why: Some(
                super::errors::without_replay_hint(crate::agent::build::NOT_CONFIGURED).into(),
            ),
        },
        Err(e) => Readiness {
            ready: false,
            model: None,
            why: Some(e.to_string()),
        },
    }))
}

/// `POST /ask`: start a run; 202 with its id, or an error before anything started (no
/// LLM configured, no file found, too many runs).
pub async fn ask(
    State(s): State<AppState>,
    body: Result<Json<AskBody>, JsonRejection>,
) -> Result<(StatusCode, Json<Started>), ApiError> {
    let Json(body) = body?;
    let request = request(&body)?;
    let permit = s.runs.slots.clone().try_acquire_owned().map_err(|_| {
        ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            "too_many_runs",
            format!(
                "{} runs are in progress, the most this server runs at once; retry when one has finished",
                s.runs.max
            ),
        )
    })?;
    let state = s.clone();
    let (agent, files, request, id, run_dir) = tokio::task::spawn_blocking(move || {
        let (agent, files, _, request) = prepare(&state, request)?;
        let (id, run_dir) = service::reserve_run_dir(&state.runs.dir)
            .map_err(|e| ApiError::internal(format!("{}: {e}", state.runs.dir.display())))?;
        Ok::<_, ApiError>((agent, files, request, id, run_dir))
    })
    .await??;
    let rel: Vec<String> = files.iter().map(|f| f.rel.clone()).collect();
    tracing::info!("run {id} starts over {} file(s)", files.len());
    let runs = s.runs.clone();
    let index_dir = s.lake.dir().to_path_buf();
    // The registry is locked while the task is spawned, so that it cannot end (and
    // remove itself) before it is listed.
    let mut active = runs.active.lock().unwrap_or_else(|p| p.into_inner());
    let task_id = id.clone();
    let task_runs = runs.clone();
    let handle = tokio::spawn(async move {
        let _permit = permit;
        let mut listed = Listed {
            runs: task_runs,
            id: task_id,
            failure: None,
        };
        let out = request
            .run(&agent, &files, Some(&index_dir), &run_dir, &|_| {})
            .await;
        listed.failure = Some(failure(out));
    });
    active.insert(id.clone(), handle.abort_handle());
    drop(active);
    Ok((
        StatusCode::ACCEPTED,
        Json(Started {
            run: format!("/runs/{id}"),
            events: format!("/runs/{id}/events"),
            files: rel,
            id,
        }),
    ))
}

/// A run's place in the registry, given up when its task ends however it ends: with
/// an outcome, or dropped (aborted at shutdown, or a panic) without one.
struct Listed {
    runs: Arc<Runs>,
    id: String,
    /// Set when `Agent::ask` returned: why it ended without a summary, if it did.
    failure: Option<Option<String>>,
}

impl Drop for Listed {
    fn drop(&mut self) {
        let failure = self.failure.take().unwrap_or_else(|| {
            Some("the run was stopped before it ended (server shutdown or a fault)".into())
        });
        self.runs.ended(&self.id, failure);
    }
}

/// Why a run ended without a summary on disk, if it did.
fn failure(out: Result<(Summary, Option<AgentError>), AgentError>) -> Option<String> {
    match out {
        Ok((summary, _)) => {
            tracing::info!(
                "run in {} ended: {:?}",
                summary.run_dir.display(),
                summary.status
            );
            None
        }
        Err(e) => Some(e.to_string()),
    }
}

/// `GET /runs/{id}`: `running`, `finished` (with the summary), `failed` (with the
/// error, and the summary when one was written), or `incomplete` (a run directory
/// without a summary that this server is not running: stopped, or another process's).
pub async fn run(
    State(s): State<AppState>,
    id: Result<Path<String>, PathRejection>,
) -> Result<Json<Value>, ApiError> {
    let id = checked_id(id)?;
    if s.runs.is_active(&id) {
        return Ok(Json(json!({"id": id, "status": "running"})));
    }
    let dir = s.runs.dir.join(&id);
    let summary = match tokio::fs::read_to_string(dir.join("summary.json")).await {
        Ok(text) => Some(serde_json::from_str::<Value>(&text).map_err(ApiError::internal)?),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(ApiError::internal(e)),
    };
    if let Some(summary) = summary {
        let status = if summary["status"] == "error" {
            "failed"
        } else {
            "finished"
        };
        let error = summary["error"].clone();
        return Ok(Json(
            json!({"id": id, "status": status, "error": error, "summary": summary}),
        ));
    }
    let failed = s
        .runs
        .failed
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(&id)
        .cloned();
    if let Some(why) = failed {
        return Ok(Json(json!({"id": id, "status": "failed", "error": why})));
    }
    if tokio::fs::metadata(&dir).await.is_ok() {
        return Ok(Json(json!({"id": id, "status": "incomplete"})));
    }
    Err(ApiError::not_found(format!(
        "no run {id} in this index; POST /ask starts one"
    )))
}

/// `GET /runs/{id}/events`: the run's trace as server-sent events, one per line of
/// `trace.jsonl` (the SSE event name is the line's `kind`, the data the line): the lines
/// so far, then new ones as the run writes them, ending after `finish` (or when the run
/// stops without one, or the server shuts down).
pub async fn events(
    State(s): State<AppState>,
    id: Result<Path<String>, PathRejection>,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    let id = checked_id(id)?;
    let path = s.runs.dir.join(&id).join("trace.jsonl");
    if !s.runs.is_active(&id) && tokio::fs::metadata(&path).await.is_err() {
        return Err(ApiError::not_found(format!(
            "no run {id} in this index; POST /ask starts one"
        )));
    }
    let follower = Follower {
        id,
        path,
        runs: s.runs.clone(),
        shutdown: s.shutdown.clone(),
        offset: 0,
        partial: Vec::new(),
        lines: std::collections::VecDeque::new(),
        seq: 0,
        done: false,
    };
    let stream = futures_util::stream::unfold(follower, |mut f| async move {
        f.next().await.map(|e| (Ok(e), f))
    });
    Ok(Sse::new(stream).keep_alive(KeepAlive::default()))
}

/// Reads a trace as it grows.
struct Follower {
    id: String,
    path: PathBuf,
    runs: Arc<Runs>,
    shutdown: watch::Receiver<bool>,
    offset: u64,
    /// Bytes after the last newline read (a line being written).
    partial: Vec<u8>,
    lines: std::collections::VecDeque<String>,
    seq: u64,
    done: bool,
}

impl Follower {
    async fn next(&mut self) -> Option<Event> {
        loop {
            if self.done {
                return None;
            }
            if let Some(line) = self.lines.pop_front() {
                return Some(self.event(line));
            }
            // Looked at before reading: a run that ends after this still has its last
            // lines read below, and one that ended before has written them all.
            let active = self.runs.is_active(&self.id);
            if self.read_more().await > 0 {
                continue;
            }
            let stopping = self.shutdown.has_changed().is_err() || *self.shutdown.borrow();
            if !active || stopping {
                return None;
            }
            tokio::select! {
                _ = tokio::time::sleep(POLL) => {}
                _ = self.shutdown.changed() => {}
            }
        }
    }

    fn event(&mut self, line: String) -> Event {
        let kind = serde_json::from_str::<Value>(&line)
            .ok()
            .and_then(|v| v["kind"].as_str().map(str::to_string))
            .unwrap_or_else(|| "line".to_string());
        if kind == "finish" {
            self.done = true;
        }
        self.seq += 1;
        Event::default()
            .event(kind)
            .id(self.seq.to_string())
            .data(line)
    }

    /// Read what was appended since the last read; returns the complete lines found.
    async fn read_more(&mut self) -> usize {
        use tokio::io::{AsyncReadExt, AsyncSeekExt};
        let Ok(mut file) = tokio::fs::File::open(&self.path).await else {
            return 0;
        };
        let mut buf = Vec::new();
        if file
            .seek(std::io::SeekFrom::Start(self.offset))
            .await
            .is_err()
            || file.read_to_end(&mut buf).await.is_err()
        {
            return 0;
        }
        self.offset += buf.len() as u64;
        self.partial.extend_from_slice(&buf);
        let mut found = 0;
        while let Some(nl) = self.partial.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = self.partial.drain(..=nl).collect();
            let line = String::from_utf8_lossy(&line[..nl]).trim_end().to_string();
            if !line.is_empty() {
                self.lines.push_back(line);
                found += 1;
            }
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_our_run_ids_are_accepted() {
        assert!(valid_run_id(&crate::agent::run_id()));
        assert!(valid_run_id("20260101-120000-0a1b"));
        for bad in [
            "",
            "..",
            "../../etc",
            "20260101-120000-0A1B",
            "20260101-120000-0a1",
            "20260101-120000-0a1bc",
            "2026010a-120000-0a1b",
            "20260101_120000-0a1b",
            "20260101-120000/0a1b",
        ] {
            assert!(!valid_run_id(bad), "{bad:?}");
        }
    }

    #[tokio::test]
    async fn a_follower_reads_whole_lines_as_they_are_appended() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("trace.jsonl");
        let (_tx, rx) = watch::channel(false);
        let runs = Arc::new(Runs::new(dir.path().to_path_buf(), 1));
        let mut f = Follower {
            id: "20260101-120000-0a1b".into(),
            path: path.clone(),
            runs,
            shutdown: rx,
            offset: 0,
            partial: Vec::new(),
            lines: Default::default(),
            seq: 0,
            done: false,
        };
        assert_eq!(f.read_more().await, 0, "no file yet");
        let mut file = std::fs::File::create(&path).unwrap();
        file.write_all(b"{\"kind\":\"start\"}\n{\"kind\":\"no")
            .unwrap();
        assert_eq!(f.read_more().await, 1);
        file.write_all(b"te\"}\n").unwrap();
        assert_eq!(f.read_more().await, 1);
        assert_eq!(f.lines, ["{\"kind\":\"start\"}", "{\"kind\":\"note\"}"]);
        file.write_all(b"{\"kind\":\"finish\"}\n{\"kind\":\"after\"}\n")
            .unwrap();
        // Not active (never registered): the stream gives what is there, up to finish.
        let mut n = 0;
        while f.next().await.is_some() {
            n += 1;
        }
        assert_eq!(n, 3);
    }
}
