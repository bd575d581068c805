//! The index run: crawl, detect changes, hash and analyze in parallel, commit in batches.
//!
//! Change detection, per crawled path:
//! - (size, mtime) equal to the catalog row, and the row not "racy" → unchanged, not read;
//! - otherwise the content is hashed: the same hash → a touch (metadata only); another
//!   hash → modified; no row → added, unless a path that disappeared had the same hash,
//!   which makes it a rename that reuses the description.
//!
//! Workers (a rayon pool of `jobs` threads) send their results through a bounded channel
//! to the calling thread, the only writer, which commits every `batch_size` results or
//! every second in one transaction. A killed run thus loses at most one uncommitted
//! batch, and the next run redoes exactly that work. Deletions are applied last, so an
//! interrupted run never drops a row for a file that still exists.

mod process;

use crate::catalog::{Catalog, Change, FileRow, Hash};
use crate::crawl::{crawl, CrawlOptions};
use crate::error::{Error, InternalError, Result, UserError};
use crate::lock::WriterLock;
use process::{process, Ctx, Kind, Outcome, Work};
use rayon::prelude::*;
use serde::Serialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Mutex};
use std::time::{Duration, Instant};

/// Files up to this size are read into memory once for both hashing and analysis;
/// larger ones are hashed and analyzed as streams.
pub const IN_MEMORY_LIMIT: u64 = 8 * 1024 * 1024;

/// How to run an index.
#[derive(Debug, Clone)]
pub struct IndexOptions {
    /// Worker threads for hashing and analysis (0: one per core).
    pub jobs: usize,
    /// Follow symbolic links (loop-safe).
    pub follow_links: bool,
    /// Include hidden files and directories.
    pub hidden: bool,
    /// Delete the catalog first and index from scratch.
    pub rebuild: bool,
    /// Results per committed transaction.
    pub batch_size: usize,
    /// Bytes an analyzer reads of one file before it profiles a sample instead.
    pub read_budget: u64,
    /// Read every file whole for exact figures; re-describes files described from samples.
    pub full: bool,
    /// The embedder of the search index.
    pub embedder: crate::search::embedder::EmbedderSpec,
}

impl Default for IndexOptions {
    fn default() -> Self {
        IndexOptions {
            jobs: 0,
            follow_links: false,
            hidden: false,
            rebuild: false,
            batch_size: 512,
            read_budget: crate::analyze::DEFAULT_BUDGET,
            full: false,
            embedder: Default::default(),
        }
    }
}

/// What an index run did. Serialized as the `index --json` contract: these integer
/// fields and `seconds`, nothing else.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct IndexReport {
    /// Files found by the crawl.
    pub files_seen: u64,
    /// New paths.
    pub added: u64,
    /// Paths whose content changed.
    pub modified: u64,
    /// Paths that disappeared.
    pub deleted: u64,
    /// Paths that moved (a disappeared path with the same content as a new one).
    pub renamed: u64,
    /// Paths with the same content as before (touched files included).
    pub unchanged: u64,
    /// Files run through an analyzer.
    pub analyzed: u64,
    /// Files whose description came from the content-addressed cache.
    pub cache_hits: u64,
    /// Per-file problems met (unreadable, failed analysis, vanished, crawl errors).
    pub errors: u64,
    /// Wall-clock duration.
    pub seconds: f64,
    /// The problems, path and message (not part of the JSON contract).
    #[serde(skip)]
    pub problems: Vec<(String, String)>,
}

/// Progress reporting hooks (the CLI draws a bar; tests and the library pass [`NoProgress`]).
pub trait Progress: Sync {
    /// The number of files that need reading is known.
    fn start(&self, _total: u64) {}
    /// `n` more files done.
    fn inc(&self, _n: u64) {}
    /// The run is over.
    fn finish(&self) {}
}

/// Progress that reports nothing.
pub struct NoProgress;
impl Progress for NoProgress {}

fn canonical_lake(lake: &Path) -> Result<PathBuf> {
    let c = lake.canonicalize().map_err(|e| UserError::BadLake {
        path: lake.to_path_buf(),
        reason: e.to_string(),
    })?;
    if !c.is_dir() {
        return Err(UserError::BadLake {
            path: lake.to_path_buf(),
            reason: "not a directory".into(),
        }
        .into());
    }
    Ok(c)
}

/// Remove the catalog files of the index at `dir` (the caller holds the lock).
fn remove_catalog(dir: &Path) -> Result<()> {
    for name in ["catalog.sqlite", "catalog.sqlite-wal", "catalog.sqlite-shm"] {
        let p = dir.join(name);
        match std::fs::remove_file(&p) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(p, e)),
        }
    }
    Ok(())
}

/// Index the lake at `lake` into the index directory `index_dir`.
pub fn index(
    lake: &Path,
    index_dir: &Path,
    opts: &IndexOptions,
    progress: &dyn Progress,
) -> Result<IndexReport> {
    let started = Instant::now();
    let lake = canonical_lake(lake)?;
    std::fs::create_dir_all(index_dir).map_err(|e| Error::io(index_dir, e))?;
    let index_dir = index_dir
        .canonicalize()
        .map_err(|e| Error::io(index_dir, e))?;
    let _lock = WriterLock::acquire(&index_dir)?;
    if opts.rebuild {
        remove_catalog(&index_dir)?;
    }
    let mut catalog = Catalog::open_writer(&index_dir, &lake)?;
    let jobs = if opts.jobs == 0 {
        std::thread::available_parallelism().map_or(2, |n| n.get())
    } else {
        opts.jobs
    };

    // Load the catalog while the crawl runs: both are I/O-bound.
    let crawl_opts = CrawlOptions {
        follow_links: opts.follow_links,
        hidden: opts.hidden,
        threads: jobs,
        exclude: vec![index_dir.clone()],
    };
    let (known, found) = std::thread::scope(|s| {
        let loader = s.spawn(|| {
            let t = Instant::now();
            let r = Catalog::open_reader(&index_dir).and_then(|c| c.load_known());
            tracing::debug!(elapsed = ?t.elapsed(), "catalog loaded");
            r
        });
        let t = Instant::now();
        let found = crawl(&lake, &crawl_opts);
        tracing::debug!(elapsed = ?t.elapsed(), files = found.files.len(), "crawl done");
        let known = loader
            .join()
            .map_err(|_| Error::from(InternalError::Worker("catalog loader panicked".into())))?;
        Ok::<_, Error>((known?, found))
    })?;

    let mut report = IndexReport {
        files_seen: found.files.len() as u64,
        ..Default::default()
    };
    for ce in &found.errors {
        report.errors += 1;
        report.problems.push((ce.path.clone(), ce.error.clone()));
    }

    // Classify without reading the files: a merge of two path-sorted lists.
    let under_failed_dir = |p: &str| {
        found.failed_dirs.iter().any(|d| {
            d.is_empty()
                || p.strip_prefix(d.as_str())
                    .is_some_and(|r| r.starts_with('/'))
        })
    };
    let mut work: Vec<Work<'_>> = Vec::new();
    let mut gone_paths: Vec<&str> = Vec::new();
    {
        let (mut f, mut k) = (found.files.iter().peekable(), known.iter().peekable());
        loop {
            let order = match (f.peek(), k.peek()) {
                (None, None) => break,
                (Some(_), None) => std::cmp::Ordering::Less,
                (None, Some(_)) => std::cmp::Ordering::Greater,
                (Some(e), Some(r)) => e.path.as_str().cmp(r.path.as_str()),
            };
            match order {
                std::cmp::Ordering::Less => {
                    let e = f.next().expect("peeked");
                    work.push(Work::new(e, false));
                }
                std::cmp::Ordering::Greater => {
                    let r = k.next().expect("peeked");
                    if !under_failed_dir(&r.path) {
                        gone_paths.push(&r.path);
                    }
                }
                std::cmp::Ordering::Equal => {
                    let (e, r) = (f.next().expect("peeked"), k.next().expect("peeked"));
                    let same_meta =
                        r.size == e.size && r.mtime_ns == e.mtime_ns && !r.racy && !r.unreadable;
                    // Re-describe even when the content turns out unchanged.
                    let redo = !r.unreadable && (r.stale || (opts.full && r.sampled));
                    if !same_meta || redo {
                        let mut w = Work::new(e, true);
                        w.reanalyze = redo;
                        work.push(w);
                    } else {
                        report.unchanged += 1;
                    }
                }
            }
        }
    }
    // Full rows only for what needs them: known files to read, and those that are gone.
    for w in work.iter_mut().filter(|w| w.known) {
        w.old = catalog.file(&w.entry.path)?;
    }
    let mut gone: HashMap<Hash, Vec<FileRow>> = HashMap::new();
    let mut gone_unhashed = Vec::new();
    for path in gone_paths {
        if let Some(row) = catalog.file(path)? {
            match row.hash {
                Some(h) => gone.entry(h).or_default().push(row),
                None => gone_unhashed.push(row.path),
            }
        }
    }
    // Deterministic claim order among same-content candidates (popped from the end).
    for v in gone.values_mut() {
        v.sort_by(|a, b| b.path.cmp(&a.path));
    }

    tracing::debug!(elapsed = ?started.elapsed(), to_read = work.len(), "classified");
    progress.start(work.len() as u64);
    let ctx = Ctx {
        lake: &lake,
        index_dir: &index_dir,
        gone: Mutex::new(gone),
        budget: (!opts.full).then_some(opts.read_budget),
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .thread_name(|i| format!("lakestar-index-{i}"))
        .build()
        .map_err(|e| InternalError::Worker(e.to_string()))?;
    let (tx, rx) = mpsc::sync_channel::<Outcome>(256);

    let batch_size = opts.batch_size.max(1);
    std::thread::scope(|s| -> Result<()> {
        let ctx = &ctx;
        let work = &work;
        let pool = &pool;
        s.spawn(move || {
            pool.install(|| {
                work.par_iter().for_each_init(
                    || (tx.clone(), Catalog::open_reader(ctx.index_dir).ok()),
                    |(tx, cache), w| {
                        let _ = tx.send(process(ctx, cache.as_ref(), w));
                    },
                )
            });
            drop(tx);
        });
        let mut batch = Vec::with_capacity(batch_size);
        let mut last_commit = Instant::now();
        for o in rx {
            match o.kind {
                Kind::Added => report.added += 1,
                Kind::Modified => report.modified += 1,
                Kind::Unchanged => report.unchanged += 1,
                Kind::Renamed => report.renamed += 1,
                Kind::Deleted => report.deleted += 1,
                Kind::None => {}
            }
            report.analyzed += o.analyzed as u64;
            report.cache_hits += o.cache_hit as u64;
            if let Some(p) = o.problem {
                report.errors += 1;
                report.problems.push(p);
            }
            if let Some(c) = o.change {
                batch.push(c);
            }
            progress.inc(1);
            if batch.len() >= batch_size || last_commit.elapsed() > Duration::from_secs(1) {
                catalog.apply(&batch)?;
                batch.clear();
                last_commit = Instant::now();
            }
        }
        catalog.apply(&batch)?;
        Ok(())
    })?;

    // Deletions last: whatever disappeared and was not claimed by a rename.
    let mut deletes: Vec<Change> = gone_unhashed
        .into_iter()
        .map(|path| Change::Delete { path })
        .collect();
    let gone = ctx.gone.into_inner().unwrap_or_else(|p| p.into_inner());
    deletes.extend(gone.into_values().flatten().map(|r| Change::Delete {
        path: r.path.clone(),
    }));
    report.deleted += deletes.len() as u64;
    for chunk in deletes.chunks(batch_size * 8) {
        catalog.apply(chunk)?;
    }

    let regrouped = catalog.refresh_collections()?;
    // The search side follows the catalog; a failure there (an embedding server down)
    // is reported and retried by the next run, never loses the catalog's work.
    let synced = opts.embedder.build().and_then(|e| {
        crate::search::sync::sync(
            &mut catalog,
            &index_dir,
            e.as_ref(),
            &opts.embedder.to_spec_string(),
        )
    });
    match synced {
        Ok(r) => tracing::debug!(?r, "search index synced"),
        Err(e) => {
            report.errors += 1;
            report
                .problems
                .push(("(search index)".into(), e.to_string()));
        }
    }
    tracing::debug!(elapsed = ?started.elapsed(), regrouped, "committed");
    report.problems.sort();
    report.seconds = started.elapsed().as_secs_f64();
    catalog.set_meta("last_index_finished_at", &crate::now_ms().to_string())?;
    catalog.set_meta(
        "last_index_report",
        &serde_json::to_string(&report).map_err(|e| InternalError::CorruptBlob(e.to_string()))?,
    )?;
    progress.finish();
    Ok(report)
}
