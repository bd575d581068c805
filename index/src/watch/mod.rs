//! `watch`: keep an index up to date as the lake changes.
//!
//! The watcher holds the writer lock for as long as it runs. It starts the OS watch
//! (`notify`: inotify, FSEvents, ReadDirectoryChanges; recursive on the lake) *before*
//! a full reconciling run, so that whatever changed while nothing watched is caught, and
//! nothing written during that run is lost. Then it follows events: every path an event
//! names waits in [`Pending`] until it has been quiet for the debounce (a file still
//! being written keeps producing events; one whose mtime is that recent is held too),
//! and the ready paths go, as one batch, to [`Indexer::update`] — the same pipeline as
//! `index`, limited to them. An event-queue overflow (or any watcher error) makes a full
//! rescan instead, since events were lost.
//!
//! Events inside the index directory and inside any `.lakestar` directory are ignored:
//! the index usually lives in the lake, and its own writes must not feed the watch.
//! Reads (open, close without writing) are ignored too — the indexer's own reads make
//! them.
//!
//! Symbolic links: without `follow_links` the OS watch does not go through them (a link
//! to `/` would otherwise put a watch on every directory of the machine). With it, the
//! OS watch follows every link — it has no rule for where they lead — so events below a
//! link the walk may not take ([`Containment`]) are dropped here, and a scoped run
//! would refuse the link again anyway.

mod pending;

use crate::crawl::links::Containment;
use crate::error::{InternalError, Result, UserError};
use crate::indexer::{IndexOptions, IndexReport, Indexer, NoProgress};
use notify::event::{AccessKind, AccessMode, EventKind};
use notify::{RecursiveMode, Watcher};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant, SystemTime};

pub use pending::Pending;

/// The longest the loop blocks waiting for events, so that a stop request is seen soon.
const TICK: Duration = Duration::from_millis(100);
/// Time spent draining queued events before looking for ready paths, so that a
/// never-ending stream of events cannot starve the indexing.
const DRAIN_FOR: Duration = Duration::from_millis(50);

/// How to watch.
#[derive(Debug, Clone)]
pub struct WatchOptions {
    /// How each run indexes (`rebuild` applies to the reconciling run only).
    pub index: IndexOptions,
    /// A path is indexed once no event has named it for this long.
    pub debounce: Duration,
    /// A path waiting this long is indexed even while events keep naming it.
    pub max_wait: Duration,
}

impl Default for WatchOptions {
    fn default() -> Self {
        WatchOptions {
            index: IndexOptions::default(),
            debounce: Duration::from_millis(300),
            max_wait: Duration::from_secs(2),
        }
    }
}

/// Why a batch ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchKind {
    /// The full run at the start.
    Reconcile,
    /// A full run after events were lost (queue overflow, watcher error).
    Rescan,
    /// A scoped run over the paths events named.
    Events,
}

impl BatchKind {
    /// Stable lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            BatchKind::Reconcile => "reconcile",
            BatchKind::Rescan => "rescan",
            BatchKind::Events => "events",
        }
    }
}

/// One committed batch of the watch.
#[derive(Debug, Clone)]
pub struct WatchBatch {
    /// Why it ran.
    pub kind: BatchKind,
    /// The paths events named (absolute), for [`BatchKind::Events`]; empty for full runs.
    pub scope: Vec<PathBuf>,
    /// What the run did (a scoped run counts only its scope).
    pub report: IndexReport,
    /// From the first event naming one of the batch's paths to the batch's commit;
    /// `None` for full runs.
    pub latency: Option<Duration>,
}

/// Watch the lake at `lake`, indexed into `index_dir`, until `stop` is set; `on_batch`
/// hears of every committed batch. A batch in progress when `stop` is set is finished
/// first. Per-file and search-side problems are in the batches' reports; only failures
/// of the lock, the catalog or the OS watch end the watch with an error.
pub fn watch(
    lake: &Path,
    index_dir: &Path,
    opts: &WatchOptions,
    stop: &AtomicBool,
    on_batch: &mut dyn FnMut(&WatchBatch),
) -> Result<()> {
    let mut ix = Indexer::open(lake, index_dir, &opts.index)?;
    // A rebuild of the vector graph (tens of seconds at 100k files) must not hold up
    // the changes behind it.
    ix.build_graphs_apart();
    let (tx, rx) = mpsc::channel();
    let watch_error = |source: notify::Error| UserError::Watch {
        path: lake.to_path_buf(),
        source,
    };
    let config = notify::Config::default().with_follow_symlinks(opts.index.follow_links);
    let mut watcher = notify::RecommendedWatcher::new(tx, config).map_err(watch_error)?;
    watcher
        .watch(ix.lake(), RecursiveMode::Recursive)
        .map_err(watch_error)?;
    let report = ix.run(&NoProgress)?;
    on_batch(&WatchBatch {
        kind: BatchKind::Reconcile,
        scope: Vec::new(),
        report,
        latency: None,
    });
    follow(&mut ix, &rx, opts, stop, on_batch)?;
    stop_graph(&mut ix);
    Ok(())
}

/// At a watcher's stop: a graph under way is swapped in if it finishes soon; a longer
/// build (minutes at a million files) is given up rather than waited for, and the next
/// long-lived writer builds it.
fn stop_graph(ix: &mut Indexer) {
    let t = Instant::now();
    while ix.graph_in_flight().is_some() && t.elapsed() < GRAPH_STOP_WAIT {
        swap_graph(ix);
        std::thread::sleep(Duration::from_millis(20));
    }
    swap_graph(ix);
    if let Some(g) = ix.cancel_graph() {
        tracing::info!(
            generation = g,
            "the vector graph being built was given up at the stop; the next watcher builds it"
        );
    }
}

/// Keep the index that `ix` writes (of an object-store lake, which sends no events) up
/// to date by listing it again: a full run (a listing; only new and changed objects are
/// read) now and then every `interval`, until `stop` is set; `on_batch` hears of each.
/// The vector graph is built apart, as [`watch`] builds it.
pub fn relist(
    ix: &mut Indexer,
    interval: Duration,
    stop: &AtomicBool,
    on_batch: &mut dyn FnMut(&WatchBatch),
) -> Result<()> {
    ix.build_graphs_apart();
    let mut kind = BatchKind::Reconcile;
    while !stop.load(Ordering::Relaxed) {
        let report = ix.run(&NoProgress)?;
        on_batch(&WatchBatch {
            kind,
            scope: Vec::new(),
            report,
            latency: None,
        });
        kind = BatchKind::Rescan;
        let next = Instant::now() + interval;
        while !stop.load(Ordering::Relaxed) && Instant::now() < next {
            swap_graph(ix);
            std::thread::sleep(TICK);
        }
    }
    stop_graph(ix);
    Ok(())
}

/// How long a stopping watcher waits for a vector graph under way before giving it up.
pub const GRAPH_STOP_WAIT: Duration = Duration::from_secs(5);

/// Swap in the vector graph built apart, if it is ready. A failed build is logged, not fatal: the index stays searchable, exactly, and the
/// next run retries it.
fn swap_graph(ix: &mut Indexer) {
    match ix.finish_graph(false) {
        Ok(Some(r)) => tracing::info!(?r, "vector graph swapped in"),
        Ok(None) => {}
        Err(e) => tracing::warn!("vector graph not built ({e}); the next run retries"),
    }
}

/// What the events received so far call for.
#[derive(Default)]
struct Intake {
    pending: Pending,
    /// Events were lost: the problems that said so.
    rescan: Option<Vec<(String, String)>>,
}

/// The event loop after the reconciling run: events from `rx` until `stop`.
fn follow(
    ix: &mut Indexer,
    rx: &Receiver<notify::Result<notify::Event>>,
    opts: &WatchOptions,
    stop: &AtomicBool,
    on_batch: &mut dyn FnMut(&WatchBatch),
) -> Result<()> {
    let links = opts.index.follow_links.then(|| {
        Containment::new(
            ix.lake(),
            opts.index.follow_outside,
            &[ix.index_dir().to_path_buf()],
        )
    });
    let filter = Filter {
        lake: ix.lake().to_path_buf(),
        index_dir: ix.index_dir().to_path_buf(),
        links,
    };
    let mut intake = Intake::default();
    while !stop.load(Ordering::Relaxed) {
        swap_graph(ix);
        let now = Instant::now();
        let wait = intake
            .pending
            .next_due(opts.debounce, opts.max_wait)
            .map_or(TICK, |due| due.saturating_duration_since(now).min(TICK));
        match rx.recv_timeout(wait) {
            Ok(ev) => {
                // One time for the whole burst: events that arrived together are due
                // together, however slowly a loaded machine drains them.
                let at = Instant::now();
                filter.take(&mut intake, ev, at);
                let until = at + DRAIN_FOR;
                while Instant::now() < until {
                    match rx.try_recv() {
                        Ok(ev) => filter.take(&mut intake, ev, at),
                        Err(_) => break,
                    }
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => {
                return Err(InternalError::Worker("the file-system watcher stopped".into()).into())
            }
        }
        if let Some(problems) = intake.rescan.take() {
            intake.pending.clear();
            let mut report = ix.run(&NoProgress)?;
            for (path, message) in problems {
                report.problem(path, message);
            }
            report.settle_problems();
            on_batch(&WatchBatch {
                kind: BatchKind::Rescan,
                scope: Vec::new(),
                report,
                latency: None,
            });
            continue;
        }
        let ready = intake
            .pending
            .take_ready(Instant::now(), opts.debounce, opts.max_wait, |p| {
                stable(p, opts.debounce)
            });
        if ready.is_empty() {
            continue;
        }
        let first = ready.iter().map(|(_, t)| *t).min();
        let scope: Vec<PathBuf> = ready.into_iter().map(|(p, _)| p).collect();
        let report = ix.update(&scope, &NoProgress)?;
        on_batch(&WatchBatch {
            kind: BatchKind::Events,
            scope,
            report,
            latency: first.map(|t| t.elapsed()),
        });
    }
    Ok(())
}

/// The content at `p` has stopped moving: gone, or last modified at least `debounce`
/// ago. A file written without pause produces events, but a writer that paused longer
/// than the debounce between two writes is caught here only if its mtime is recent.
fn stable(p: &Path, debounce: Duration) -> bool {
    let Ok(md) = std::fs::symlink_metadata(p) else {
        return true;
    };
    match md.modified().map(|m| SystemTime::now().duration_since(m)) {
        Ok(Ok(age)) => age >= debounce,
        // In the future (clock skew), or no mtime: `max_wait` decides.
        Ok(Err(_)) => false,
        Err(_) => true,
    }
}

/// Which events count, and for which paths.
struct Filter {
    lake: PathBuf,
    index_dir: PathBuf,
    /// Where followed links may lead; `None` when links are not followed.
    links: Option<Containment>,
}

impl Filter {
    /// Note the paths `ev` names as touched `at`, or a rescan.
    fn take(&self, intake: &mut Intake, ev: notify::Result<notify::Event>, at: Instant) {
        let ev = match ev {
            Ok(ev) => ev,
            Err(e) => {
                let problem = ("(watch)".to_string(), format!("{e}; rescanned the lake"));
                intake.rescan.get_or_insert_with(Vec::new).push(problem);
                return;
            }
        };
        if ev.need_rescan() {
            let problem = (
                "(watch)".to_string(),
                "the event queue overflowed; rescanned the lake".to_string(),
            );
            intake.rescan.get_or_insert_with(Vec::new).push(problem);
            return;
        }
        let counts = match ev.kind {
            EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
            EventKind::Access(_) | EventKind::Other => false,
            EventKind::Any | EventKind::Create(_) | EventKind::Modify(_) | EventKind::Remove(_) => {
                true
            }
        };
        if !counts {
            return;
        }
        for p in ev.paths {
            if self.counts(&p) {
                intake.pending.touch(p, at);
            }
        }
    }

    /// A path inside the lake (not the root itself), outside the index directory and
    /// any `.lakestar` directory, and not below a link the walk may not take.
    fn counts(&self, p: &Path) -> bool {
        let Ok(rel) = p.strip_prefix(&self.lake) else {
            return false;
        };
        !rel.as_os_str().is_empty()
            && !p.starts_with(&self.index_dir)
            && !rel
                .components()
                .any(|c| c == Component::Normal(".lakestar".as_ref()))
            && !self.below_refused_link(p)
    }

    /// `p`'s directory resolves where links may not lead. The path itself is not
    /// judged: an event naming a new link goes to the scoped run, which reports it.
    /// A directory that cannot be resolved (just removed) keeps the event: deletions
    /// must reach the catalog.
    fn below_refused_link(&self, p: &Path) -> bool {
        let (Some(links), Some(dir)) = (&self.links, p.parent()) else {
            return false;
        };
        dir.canonicalize()
            .is_ok_and(|t| links.refuse_target(&t).is_some())
    }
}

#[cfg(test)]
mod tests;
