//! `lakestar serve`: the HTTP API over one index (see `crate::serve`).

use super::index::{default_embedder, WalkArgs};
use super::watch::print_line;
use super::{IndexDirArg, UsageError};
use crate::agent::build::AgentSetup;
use crate::agent::{Agent, AgentError};
use crate::serve::errors::without_replay_hint;
use crate::serve::limits::{self, HttpLimits};
use crate::serve::{self, AppState, ServeError};
use crate::service::{Lake, ServiceError};
use anyhow::{Context, Result};
use lakestar_index::locate;
use lakestar_index::watch::WatchOptions;
use lakestar_index::IndexOptions;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Arguments of `lakestar serve`.
#[derive(Debug, clap::Args)]
pub(crate) struct ServeArgs {
    #[command(flatten)]
    index: IndexDirArg,
    /// Address to listen on (port 0 picks a free port; the address is printed).
    #[arg(long, value_name = "IP:PORT", default_value = "127.0.0.1:7878")]
    addr: SocketAddr,
    /// Require `Authorization: Bearer T` on every route but /health [env: LAKESTAR_TOKEN].
    /// Needed to listen on a non-loopback address.
    #[arg(long, value_name = "T")]
    token: Option<String>,
    /// Agent runs (POST /ask) in progress at most; more are answered 429.
    #[arg(long, value_name = "N", default_value_t = 2)]
    max_runs: usize,
    /// Python interpreter for generated code [default: the venv of `lakestar setup
    /// python`, else python3].
    #[arg(long, value_name = "PATH")]
    python: Option<PathBuf>,
    /// Directory of prompt overrides (same file names as prompts/).
    #[arg(long, value_name = "DIR")]
    prompts: Option<PathBuf>,
    /// Wall-clock limit of one generated script, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 120)]
    timeout: u64,
    /// Seconds a client has to send a request's headers, or a kept-alive connection may
    /// sit idle.
    #[arg(long, value_name = "SECS", default_value_t = limits::DEFAULT_HEADER_TIMEOUT.as_secs(), value_parser = secs_limit())]
    header_timeout: u64,
    /// Seconds a client has to send a request's whole body; then 408 and the connection
    /// is closed.
    #[arg(long, value_name = "SECS", default_value_t = limits::DEFAULT_BODY_TIMEOUT.as_secs(), value_parser = secs_limit())]
    body_timeout: u64,
    /// Seconds one GET /search may take; then 503 `search_timeout`.
    #[arg(long, value_name = "SECS", default_value_t = limits::DEFAULT_SEARCH_TIMEOUT.as_secs(), value_parser = secs_limit())]
    search_timeout: u64,
    /// Also run `lakestar watch` on the lake in this process (it takes the writer lock;
    /// without it the server follows a separate `index` or `watch`).
    #[arg(long)]
    watch: bool,
    /// With --watch on an object-store lake (which sends no events): list it again this
    /// often, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 60, requires = "watch")]
    interval: u64,
}

/// The background indexer of `--watch`, on a thread of its own.
struct Watcher {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<lakestar_index::Result<()>>,
}

impl Watcher {
    /// Start watching the lake at `lake`, indexed into `dir`; `failed` hears of an
    /// error that ends the watch (the lock is held by another writer, the OS watch
    /// failed), so that the server stops too rather than serve an index nobody updates.
    fn start(
        lake: PathBuf,
        dir: PathBuf,
        interval: Duration,
        failed: tokio::sync::oneshot::Sender<()>,
    ) -> Result<Self> {
        let opts = WatchOptions {
            index: {
                // The index's own walk: a watcher must not drop what `index --hidden`
                // or `--follow` found.
                let walk = WalkArgs::default().resolve(&dir);
                IndexOptions {
                    embedder: default_embedder(&dir)?,
                    follow_links: walk.follow_links,
                    follow_outside: walk.follow_outside,
                    hidden: walk.hidden,
                    ..Default::default()
                }
            },
            ..Default::default()
        };
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("watch".into())
            .spawn(move || {
                let mut on_batch = |b: &lakestar_index::watch::WatchBatch| {
                    eprint!("watch · ");
                    print_line(b);
                };
                let r = if lakestar_index::store::is_url(&lake.to_string_lossy()) {
                    // An object store sends no events: list it again on the interval.
                    lakestar_index::indexer::open_recorded(&dir, &opts.index).and_then(|mut ix| {
                        lakestar_index::watch::relist(&mut ix, interval, &flag, &mut on_batch)
                    })
                } else {
                    lakestar_index::watch::watch(&lake, &dir, &opts, &flag, &mut on_batch)
                };
                if r.is_err() {
                    let _ = failed.send(());
                }
                r
            })
            .context("starting the watch thread")?;
        Ok(Watcher { stop, thread })
    }

    /// Stop after the batch in progress; the watch's error, if it ended on one.
    fn finish(self) -> Result<()> {
        self.stop.store(true, Ordering::Relaxed);
        match self.thread.join() {
            Ok(r) => Ok(r?),
            Err(_) => Err(anyhow::anyhow!("the watch thread panicked")),
        }
    }
}

/// A time limit's flag: 1 s to a day. None can be turned off (that would bring back the
/// client that holds a connection forever), and a bound keeps deadlines representable.
fn secs_limit() -> clap::builder::RangedU64ValueParser {
    clap::value_parser!(u64).range(1..=86_400)
}

/// The time limits the flags give.
fn http_limits(a: &ServeArgs) -> HttpLimits {
    HttpLimits {
        header_timeout: Duration::from_secs(a.header_timeout),
        body_timeout: Duration::from_secs(a.body_timeout),
        search_timeout: Duration::from_secs(a.search_timeout),
    }
}

fn user(e: ServeError) -> anyhow::Error {
    UsageError(e.to_string()).into()
}

pub(crate) fn run(a: ServeArgs) -> Result<()> {
    let token = a
        .token
        .clone()
        .or_else(|| std::env::var("LAKESTAR_TOKEN").ok());
    serve::check_token_rule(a.addr, token.as_deref()).map_err(user)?;
    if a.max_runs == 0 {
        return Err(UsageError("--max-runs must be at least 1".into()).into());
    }
    let limits = http_limits(&a);
    let cwd = std::env::current_dir()?;
    let dir = locate::find_index(a.index.index.as_deref(), &cwd)?;
    // Absolute, so that what /status and run summaries show means something to a client.
    let dir = dir.canonicalize().unwrap_or(dir);
    let lake = Lake::open(&dir).map_err(|e| match e {
        // The index's own error, so that its exit code (user or internal) carries over.
        ServiceError::Index(e) => anyhow::Error::new(e),
        other => UsageError(other.to_string()).into(),
    })?;
    let setup = AgentSetup {
        python: a.python.clone(),
        prompts: a.prompts.clone(),
        timeout: Duration::from_secs(a.timeout),
        ..AgentSetup::default()
    };
    // Said at start rather than at the first POST /ask, where nobody reads stderr.
    match Agent::build(Some(&dir), &setup) {
        Ok(agent) => {
            if let Some(w) = agent.python_warning() {
                eprintln!("warning: {w}");
            }
        }
        Err(AgentError::NotConfigured(m)) => eprintln!(
            "note: POST /ask is unavailable until an LLM is configured: {}",
            without_replay_hint(&m)
        ),
        Err(e) => eprintln!("note: POST /ask is unavailable until fixed: {e}"),
    }
    // The binary restores SIGPIPE's default (for `| head`), but a server writes to
    // sockets that clients close: hyper's vectored writes (writev) would raise SIGPIPE
    // and kill the process instead of returning EPIPE for that one connection.
    // SAFETY: setting a signal disposition; no handler runs Rust code.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        // Searches and descriptions run on blocking threads; a burst of requests waits
        // for one rather than starting hundreds.
        .max_blocking_threads(64)
        .build()
        .context("starting the async runtime")?;
    let (watch_failed, watch_failure) = tokio::sync::oneshot::channel();
    let watcher = match a.watch {
        true => Some(Watcher::start(
            lake.root().to_path_buf(),
            dir.clone(),
            Duration::from_secs(a.interval),
            watch_failed,
        )?),
        false => None,
    };
    let served = rt.block_on(async move {
        let listener = serve::bind(a.addr).await.map_err(user)?;
        let local = listener.local_addr()?;
        let (tx, rx) = tokio::sync::watch::channel(false);
        let state =
            AppState::new(lake, token.as_deref(), setup, a.max_runs, rx).with_limits(limits);
        // Tests and scripts bind port 0 and read the port from this line.
        eprintln!(
            "listening on http://{local} (index {}{})",
            dir.display(),
            if token.is_some() {
                "; bearer token required"
            } else {
                ""
            }
        );
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .context("installing the SIGTERM handler")?;
        let stop = async move {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
                // Only an error sends; without --watch the sender is dropped (Err).
                Ok(()) = watch_failure => {}
            }
        };
        serve::serve(listener, state, tx, stop)
            .await
            .context("serving HTTP")
    });
    // The watch's error (if it stopped the server) comes first: it is the cause.
    if let Some(w) = watcher {
        w.finish().context("--watch")?;
    }
    served?;
    eprintln!("stopped");
    Ok(())
}
