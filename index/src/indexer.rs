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

use crate::analyze::{self, current_key, describe_as, detect, Source};
use crate::catalog::{Catalog, Change, FileRow, FileState, Hash};
use crate::crawl::{crawl, CrawlOptions, Entry};
use crate::error::{Error, InternalError, Result, UserError};
use crate::lock::WriterLock;
use rayon::prelude::*;
use serde::Serialize;
use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Mutex};
use std::time::{Duration, Instant};

/// Files up to this size are read into memory once for both hashing and analysis;
/// larger ones are hashed and analyzed as streams.
pub const IN_MEMORY_LIMIT: u64 = 8 * 1024 * 1024;

/// A file whose mtime is this close to the moment it was read may still be changing
/// within the filesystem's timestamp granularity: it is re-hashed on the next run.
const RACY_WINDOW_NS: i64 = 2_000_000_000;

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
}

impl Default for IndexOptions {
    fn default() -> Self {
        IndexOptions {
            jobs: 0,
            follow_links: false,
            hidden: false,
            rebuild: false,
            batch_size: 512,
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

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Added,
    Modified,
    Unchanged,
    Renamed,
    Deleted,
    None,
}

/// One file to read.
struct Work<'a> {
    entry: &'a Entry,
    old: Option<&'a FileRow>,
    /// Content is known to be the same, but the analyzer changed.
    reanalyze: bool,
}

struct Outcome {
    change: Option<Change>,
    kind: Kind,
    analyzed: bool,
    cache_hit: bool,
    problem: Option<(String, String)>,
}

fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0)
}

fn hash_source(src: &Source) -> std::io::Result<Hash> {
    if let Some(b) = src.bytes() {
        return Ok(*blake3::hash(b).as_bytes());
    }
    let mut h = blake3::Hasher::new();
    let mut r = src.reader()?;
    let mut buf = vec![0u8; 256 * 1024];
    loop {
        let n = r.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(*h.finalize().as_bytes())
}

/// Shared, read-mostly state of the workers.
struct Ctx<'a> {
    lake: &'a Path,
    index_dir: &'a Path,
    /// Hashes of paths that disappeared, claimable by a new path with the same content.
    gone: Mutex<HashMap<Hash, Vec<&'a FileRow>>>,
}

fn process(ctx: &Ctx<'_>, cache: Option<&Catalog>, w: &Work<'_>) -> Outcome {
    let e = w.entry;
    let abs = ctx.lake.join(&e.path);
    let fail = |kind: Kind, change: Option<Change>, msg: String| Outcome {
        change,
        kind,
        analyzed: false,
        cache_hit: false,
        problem: Some((e.path.clone(), msg)),
    };
    let src = match Source::open(&abs, IN_MEMORY_LIMIT) {
        Ok(s) => s,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            // Vanished between crawl and read: it is deleted now.
            let (kind, change) = match w.old {
                Some(_) => (
                    Kind::Deleted,
                    Some(Change::Delete {
                        path: e.path.clone(),
                    }),
                ),
                None => (Kind::None, None),
            };
            return fail(kind, change, "file vanished while indexing".into());
        }
        Err(err) => {
            let row = FileRow {
                path: e.path.clone(),
                size: e.size,
                mtime_ns: e.mtime_ns,
                hash: None,
                format: w.old.map_or(analyze::Format::Binary, |o| o.format),
                analyzer: None,
                state: FileState::Unreadable,
                error: Some(format!("cannot read: {err}")),
                racy: false,
                indexed_at: crate::now_ms(),
            };
            let kind = if w.old.is_some() {
                Kind::Modified
            } else {
                Kind::Added
            };
            return fail(
                kind,
                Some(Change::Upsert {
                    row,
                    description: None,
                }),
                format!("cannot read: {err}"),
            );
        }
    };
    let hash = match hash_source(&src) {
        Ok(h) => h,
        Err(err) => {
            return fail(
                Kind::None,
                None,
                format!("read failed while hashing: {err}"),
            );
        }
    };
    let racy = e.mtime_ns + RACY_WINDOW_NS > now_ns();
    let size = src.size();

    if let Some(old) = w.old {
        if old.hash == Some(hash) && !w.reanalyze {
            return Outcome {
                change: Some(Change::Touch {
                    path: e.path.clone(),
                    size,
                    mtime_ns: e.mtime_ns,
                    racy,
                }),
                kind: Kind::Unchanged,
                analyzed: false,
                cache_hit: false,
                problem: None,
            };
        }
    } else {
        let claimed = {
            let mut gone = ctx.gone.lock().unwrap_or_else(|p| p.into_inner());
            gone.get_mut(&hash).and_then(Vec::pop)
        };
        if let Some(from) = claimed {
            let row = FileRow {
                path: e.path.clone(),
                size,
                mtime_ns: e.mtime_ns,
                racy,
                indexed_at: crate::now_ms(),
                ..from.clone()
            };
            return Outcome {
                change: Some(Change::Rename {
                    from: from.path.clone(),
                    row,
                }),
                kind: Kind::Renamed,
                analyzed: false,
                cache_hit: false,
                problem: None,
            };
        }
    }

    let kind = match (w.old, w.reanalyze) {
        (None, _) => Kind::Added,
        (Some(_), true) => Kind::Unchanged,
        (Some(_), false) => Kind::Modified,
    };
    let format = detect(src.path(), src.head(), size);
    let key = current_key(format);
    let cached = cache.and_then(|c| c.cached(&hash, &key).ok().flatten());
    let (description, error, cache_hit) = match cached {
        Some((_, error)) => (None, error, true),
        None => {
            let d = describe_as(&src, format);
            let error = d.error.clone();
            (Some(Box::new(d)), error, false)
        }
    };
    let row = FileRow {
        path: e.path.clone(),
        size,
        mtime_ns: e.mtime_ns,
        hash: Some(hash),
        format,
        analyzer: Some(key),
        state: if error.is_some() {
            FileState::Error
        } else {
            FileState::Ok
        },
        error: error.clone(),
        racy,
        indexed_at: crate::now_ms(),
    };
    Outcome {
        analyzed: description.is_some(),
        change: Some(Change::Upsert { row, description }),
        kind,
        cache_hit,
        problem: error.map(|m| (e.path.clone(), m)),
    }
}

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
    let (old, found) = std::thread::scope(|s| {
        let loader = s.spawn(|| Catalog::open_reader(&index_dir).and_then(|c| c.load_files()));
        let found = crawl(&lake, &crawl_opts);
        let old = loader
            .join()
            .map_err(|_| Error::from(InternalError::Worker("catalog loader panicked".into())))?;
        Ok::<_, Error>((old?, found))
    })?;

    let mut report = IndexReport {
        files_seen: found.files.len() as u64,
        ..Default::default()
    };
    for ce in &found.errors {
        report.errors += 1;
        report.problems.push((ce.path.clone(), ce.error.clone()));
    }

    // Classify without reading.
    let mut work = Vec::new();
    let mut seen = std::collections::HashSet::with_capacity(found.files.len());
    for e in &found.files {
        seen.insert(e.path.as_str());
        match old.get(&e.path) {
            None => work.push(Work {
                entry: e,
                old: None,
                reanalyze: false,
            }),
            Some(row) => {
                let same_meta = row.size == e.size && row.mtime_ns == e.mtime_ns && !row.racy;
                if same_meta && row.state != FileState::Unreadable {
                    if row.analyzer.as_deref() != Some(current_key(row.format).as_str()) {
                        work.push(Work {
                            entry: e,
                            old: Some(row),
                            reanalyze: true,
                        });
                    } else {
                        report.unchanged += 1;
                    }
                } else {
                    work.push(Work {
                        entry: e,
                        old: Some(row),
                        reanalyze: false,
                    });
                }
            }
        }
    }
    let under_failed_dir = |p: &str| {
        found.failed_dirs.iter().any(|d| {
            d.is_empty()
                || p.strip_prefix(d.as_str())
                    .is_some_and(|r| r.starts_with('/'))
        })
    };
    let mut gone: HashMap<Hash, Vec<&FileRow>> = HashMap::new();
    let mut gone_unhashed = Vec::new();
    for (path, row) in &old {
        if seen.contains(path.as_str()) || under_failed_dir(path) {
            continue;
        }
        match row.hash {
            Some(h) => gone.entry(h).or_default().push(row),
            None => gone_unhashed.push(path.clone()),
        }
    }
    // Deterministic claim order among same-content candidates.
    for v in gone.values_mut() {
        v.sort_by(|a, b| b.path.cmp(&a.path));
    }

    progress.start(work.len() as u64);
    let ctx = Ctx {
        lake: &lake,
        index_dir: &index_dir,
        gone: Mutex::new(gone),
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
