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
//!
//! An [`Indexer`] holds the writer lock and the catalog between runs: [`Indexer::run`]
//! crawls the whole lake, [`Indexer::update`] only some paths (what `watch` saw change).
//! Both feed the same merge ([`run`]'s body), so a scoped run finds deletions, renames and
//! directory moves inside its scope exactly as a full run would.

mod gone;
mod process;
mod relink;
mod run;
mod tables;

use crate::catalog::{CatalogWriter, MetaKey};
use crate::crawl::{crawl, Crawl, CrawlOptions, Scope};
use crate::embed::Embedder;
use crate::error::{Error, InternalError, Result, UserError};
use crate::lock::WriterLock;
use run::KnownRows;
use serde::Serialize;
use std::path::{Component, Path, PathBuf};
use std::time::Instant;

/// Files up to this size are read into memory once for both hashing and analysis;
/// larger ones are hashed and analyzed as streams.
pub const IN_MEMORY_LIMIT: u64 = 8 * 1024 * 1024;

/// Files to read that a run lists in memory; beyond, the list goes to a temporary file
/// in the index directory (about 100 bytes a file), so that a first index of any size
/// lists its work in the same memory. A handful in unit tests, so that they run from
/// the file.
const WORK_IN_MEMORY: usize = if cfg!(test) { 3 } else { 65_536 };

/// Rows of paths gone since the last run that a run holds in memory for renames to
/// claim (a few hundred bytes each); beyond, they go to a temporary SQLite table of
/// (path, hash) in the index directory (`gone`), so that a folder of a million files
/// moved or deleted costs no more memory than a small one. A handful in unit tests, so
/// that they run from the table.
const GONE_IN_MEMORY: usize = if cfg!(test) { 3 } else { 65_536 };

/// Catalog rows a full run reads at a time to compare with the crawl's listing (a
/// handful in unit tests, so that they cross pages).
const KNOWN_PAGE: usize = if cfg!(test) { 3 } else { 4096 };

/// Paths per read of the run's changed paths (or of every file's path) by the passes
/// after the files are described (`relink`, `tables`): a handful in unit tests, so that
/// those passes cross chunk boundaries.
const PATHS_CHUNK: usize = if cfg!(test) { 3 } else { 2000 };

/// Call `each` with the paths `page(after, limit)` lists, a chunk of them at a time in
/// path order (`page` lists up to `limit` paths after `after`, from the first with
/// `None`).
fn in_chunks(
    mut page: impl FnMut(Option<&str>, usize) -> Result<Vec<String>>,
    mut each: impl FnMut(&[String]) -> Result<()>,
) -> Result<()> {
    let mut after: Option<String> = None;
    loop {
        let chunk = page(after.as_deref(), PATHS_CHUNK)?;
        let Some(last) = chunk.last() else {
            return Ok(());
        };
        each(&chunk)?;
        after = Some(last.clone());
    }
}

/// How to run an index.
#[derive(Debug, Clone)]
pub struct IndexOptions {
    /// Worker threads for hashing and analysis (0: one per core).
    pub jobs: usize,
    /// Follow symbolic links (loop-safe) to targets inside the lake.
    pub follow_links: bool,
    /// With `follow_links`, follow links to targets outside the lake too.
    pub follow_outside: bool,
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
    /// Build the vector graph in this run where the codes pass the scan threshold
    /// (`index --graph`). Otherwise a run writes the codes alone, in bounded memory, and
    /// the graph is left to the long-lived writers that build it apart
    /// ([`Indexer::build_graphs_apart`]; `GraphBuild` in `search::ann::update`).
    pub graph: bool,
}

impl Default for IndexOptions {
    fn default() -> Self {
        IndexOptions {
            jobs: 0,
            follow_links: false,
            follow_outside: false,
            hidden: false,
            rebuild: false,
            batch_size: 512,
            read_budget: crate::analyze::DEFAULT_BUDGET,
            full: false,
            embedder: Default::default(),
            graph: false,
        }
    }
}

/// How a lake was walked, recorded in the catalog by every run so that later runs
/// (`watch`, `serve --watch`, the MCP `reindex`, a plain `index`) walk it the same way
/// rather than drop the hidden or linked files the index holds. Fields missing from an
/// older record are false.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(default)]
pub struct WalkOptions {
    /// Symbolic links were followed (`index --follow`).
    pub follow_links: bool,
    /// Links were followed out of the lake too (`index --follow-outside`).
    pub follow_outside: bool,
    /// Hidden files and directories were included (`index --hidden`).
    pub hidden: bool,
}

/// The walk options the index at `index_dir` records: `None` for no index yet, or one
/// made before they were recorded.
pub fn recorded_walk(index_dir: &Path) -> Result<Option<WalkOptions>> {
    if !index_dir.join(crate::catalog::CATALOG_FILE).is_file() {
        return Ok(None);
    }
    // Read before the run's writer upgrades an older catalog, which a reader refuses.
    let Some(json) = crate::catalog::read_meta(index_dir, MetaKey::WalkOptions)? else {
        return Ok(None);
    };
    serde_json::from_str(&json)
        .map(Some)
        .map_err(|e| Error::corrupt("walk options (meta `walk_options`)", e))
}

/// What an index run did. Serialized as the `index --json` contract: these integer
/// fields and `seconds`, nothing else. A scoped run ([`Indexer::update`]) counts only its
/// scope: `files_seen` is the files found there, `unchanged` those of them left as they
/// were.
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
    /// What was fetched from the object store, for an object-store lake only (absent
    /// from the JSON of a lake on disk).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fetched: Option<FetchReport>,
    /// The problems, path and message, sorted: the first [`PROBLEMS_KEPT`] by path, and
    /// the run's own, of the `errors` met (not part of the JSON contract).
    #[serde(skip)]
    pub problems: Vec<(String, String)>,
}

/// Problems of paths an [`IndexReport`] lists at most, the first by path: a lake of a
/// million unreadable files must not hold a million messages. Every one is counted in
/// `errors`; a file's problem is also kept with its row in the catalog (`lakestar
/// status`), a crawl's (a refused link, an unreadable folder) only in this list. The
/// run's own problems (`(search index)`, `(watch)`) are few, and always listed.
pub const PROBLEMS_KEPT: usize = 1000;

impl IndexReport {
    /// Count a per-file problem and list it if it is among the first [`PROBLEMS_KEPT`]
    /// by path.
    pub fn problem(&mut self, path: String, message: String) {
        self.errors += 1;
        self.problems.push((path, message));
        // Sorted and cut only now and then: at most twice the list's bound is held.
        if self.problems.len() >= 2 * PROBLEMS_KEPT {
            self.settle_problems();
        }
    }

    /// Sort the problems listed and keep the first [`PROBLEMS_KEPT`] of paths, and every
    /// one of the run's own (named in parentheses).
    pub fn settle_problems(&mut self) {
        self.problems.sort();
        let mut of_paths = 0;
        self.problems.retain(|(path, _)| {
            of_paths += usize::from(!path.starts_with('('));
            path.starts_with('(') || of_paths <= PROBLEMS_KEPT
        });
    }
}

/// What a run fetched from an object store: the bytes of every ranged GET, and how many
/// requests (listing requests not counted).
#[derive(Debug, Clone, Copy, Default, Serialize, serde::Deserialize, PartialEq, Eq)]
pub struct FetchReport {
    /// Bytes received.
    pub bytes: u64,
    /// GET requests made.
    pub requests: u64,
}

pub use crate::progress::{NoProgress, Progress};

/// The lake's canonical path, or the user error saying why `lake` cannot be one.
pub fn canonical_lake(lake: &Path) -> Result<PathBuf> {
    let c = lake.canonicalize().map_err(|e| UserError::BadLake {
        path: lake.to_path_buf(),
        reason: match e.kind() {
            std::io::ErrorKind::NotFound => "it does not exist".into(),
            std::io::ErrorKind::PermissionDenied => "permission denied".into(),
            _ => e.to_string(),
        },
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

/// A vector graph under construction on a thread of its own.
struct Building {
    generation: u64,
    /// Set to give the build up at its next chunk ([`Indexer::cancel_graph`]).
    cancel: std::sync::Arc<std::sync::atomic::AtomicBool>,
    /// `Ok(None)`: given up.
    handle: std::thread::JoinHandle<Result<Option<crate::search::ann::update::BuiltGraph>>>,
}

/// An open index, ready to run: the writer lock is held and the catalog open until it is
/// dropped.
pub struct Indexer {
    lake: PathBuf,
    index_dir: PathBuf,
    opts: IndexOptions,
    jobs: usize,
    pool: rayon::ThreadPool,
    /// Built on first use and kept: loading a model per `watch` batch would dominate it.
    embedder: Option<Box<dyn Embedder>>,
    /// Opened on first use and kept, so that its writer merges the small segments of
    /// frequent small runs.
    text: Option<crate::search::text::TextIndex>,
    /// Vector graphs are built on a thread of their own ([`Indexer::build_graphs_apart`]).
    graphs_apart: bool,
    /// The graph being built there, if any.
    building: Option<Building>,
    /// The lake's object store, when the lake is a URL: listed instead of walked.
    objects: Option<std::sync::Arc<crate::store::ObjectLake>>,
    /// The listing made when the store was opened, for the first run to use.
    /// The listing made when the indexer opened, and when it started (the first run's
    /// time counts from there).
    listed: Option<(Instant, Vec<crate::store::Listed>)>,
    /// Last, so dropped last: it holds the writer lock, which must outlive the text
    /// index's writer.
    catalog: CatalogWriter,
}

impl Drop for Indexer {
    /// A graph still being built is given up and its thread joined (the next writer
    /// that builds graphs finds it missing and builds it): the thread must not write
    /// into the index after the writer lock is released.
    fn drop(&mut self) {
        self.cancel_graph();
    }
}

impl Indexer {
    /// Take the writer lock of `index_dir` (created if missing) and open its catalog
    /// for `lake`; with `opts.rebuild`, the catalog is deleted first.
    pub fn open(lake: &Path, index_dir: &Path, opts: &IndexOptions) -> Result<Indexer> {
        Self::open_at(canonical_lake(lake)?, index_dir, opts)
    }

    /// [`Indexer::open`] of a lake root already canonical (or a URL).
    fn open_at(lake: PathBuf, index_dir: &Path, opts: &IndexOptions) -> Result<Indexer> {
        std::fs::create_dir_all(index_dir).map_err(|e| Error::io(index_dir, e))?;
        let index_dir = index_dir
            .canonicalize()
            .map_err(|e| Error::io(index_dir, e))?;
        let lock = WriterLock::acquire(&index_dir)?;
        if opts.rebuild {
            remove_catalog(&index_dir)?;
        }
        let catalog = CatalogWriter::open(lock, &lake)?;
        let jobs = if opts.jobs == 0 {
            std::thread::available_parallelism().map_or(2, |n| n.get())
        } else {
            opts.jobs
        };
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(jobs)
            .thread_name(|i| format!("lakestar-index-{i}"))
            .build()
            .map_err(|source| InternalError::ThreadPool { jobs, source })?;
        Ok(Indexer {
            lake,
            index_dir,
            opts: opts.clone(),
            jobs,
            pool,
            embedder: None,
            text: None,
            graphs_apart: false,
            building: None,
            objects: None,
            listed: None,
            catalog,
        })
    }

    /// Take the writer lock of `index_dir` and open its catalog for the object-store
    /// lake `lake` (listed, never walked; links and hidden files do not apply). The
    /// catalog records the lake's URL as its root. The store is listed first, so that a
    /// wrong bucket, endpoint or credentials leave no index behind.
    pub fn open_objects(
        lake: crate::store::ObjectLake,
        index_dir: &Path,
        opts: &IndexOptions,
    ) -> Result<Indexer> {
        let listing = Instant::now();
        let listed = lake.list().map_err(UserError::from)?;
        let url = PathBuf::from(lake.url());
        let mut opts = opts.clone();
        opts.follow_links = false;
        opts.follow_outside = false;
        let mut indexer = Self::open_at(url, index_dir, &opts)?;
        indexer.objects = Some(std::sync::Arc::new(lake));
        indexer.listed = Some((listing, listed));
        Ok(indexer)
    }

    /// The object-store lake, when the lake is one.
    pub fn objects(&self) -> Option<&crate::store::ObjectLake> {
        self.objects.as_deref()
    }

    /// Build vector graphs off the writer's path from now on: a run commits the catalog,
    /// text and vectors and returns, the graph is built on a thread of its own, and
    /// [`Indexer::finish_graph`] swaps it in. For a long-lived writer (`watch`, `serve`),
    /// which keeps indexing the lake's changes meanwhile.
    pub fn build_graphs_apart(&mut self) {
        self.graphs_apart = true;
    }

    /// Swap in the graph built apart if it is ready (or, with `wait`, once it is):
    /// `Ok(None)` when there is none to swap yet. A failed build is reported here; the
    /// next run retries it.
    pub fn finish_graph(
        &mut self,
        wait: bool,
    ) -> Result<Option<crate::search::ann::update::Refreshed>> {
        let Some(b) = self.building.take_if(|b| wait || b.handle.is_finished()) else {
            return Ok(None);
        };
        let built = b
            .handle
            .join()
            .map_err(|_| InternalError::Worker("the vector graph's build panicked".into()))??;
        match built {
            Some(built) => Ok(Some(crate::search::ann::update::swap(
                &mut self.catalog,
                built,
            )?)),
            None => Ok(None),
        }
    }

    /// Give up the graph being built apart, if any, at its next chunk
    /// ([`crate::search::ann::graph::BUILD_CHUNK`]), and wait for its thread: what a
    /// stopping writer does rather than wait for a build that may take many minutes.
    /// Nothing of it was swapped in; the next writer that builds graphs (`watch`,
    /// `serve --watch`, `index --graph`) builds it again. Returns its generation.
    pub fn cancel_graph(&mut self) -> Option<u64> {
        let b = self.building.take()?;
        b.cancel.store(true, std::sync::atomic::Ordering::Relaxed);
        let _ = b.handle.join();
        Some(b.generation)
    }

    /// The generation of the graph being built apart, if one is.
    pub fn graph_in_flight(&self) -> Option<u64> {
        self.building.as_ref().map(|b| b.generation)
    }

    /// The lake root, canonical.
    pub fn lake(&self) -> &Path {
        &self.lake
    }

    /// The index directory, canonical.
    pub fn index_dir(&self) -> &Path {
        &self.index_dir
    }

    fn crawl_options(&self, scope: Option<Scope>) -> CrawlOptions {
        CrawlOptions {
            follow_links: self.opts.follow_links,
            follow_outside: self.opts.follow_outside,
            hidden: self.opts.hidden,
            threads: self.jobs,
            exclude: vec![self.index_dir.clone()],
            scope,
            spill_dir: Some(self.index_dir.clone()),
        }
    }

    /// Index the whole lake: crawl it, and bring the catalog and the search index in
    /// step with what was found.
    pub fn run(&mut self, progress: &dyn Progress) -> Result<IndexReport> {
        let mut started = Instant::now();
        if let Some(objects) = &self.objects {
            // The listing is part of the run, also when it was made at the open.
            let found = match self.listed.take() {
                Some((at, listed)) => {
                    started = at;
                    listed
                }
                None => objects.list().map_err(UserError::from)?,
            };
            let found = Crawl {
                files: crate::spool::Sorted::from_vec(
                    found
                        .into_iter()
                        .map(|l| crate::crawl::Entry {
                            path: l.path,
                            size: l.size,
                            mtime_ns: l.mtime_ns,
                            etag: l.etag,
                        })
                        .collect(),
                ),
                ..Default::default()
            };
            return self.merge(started, found, KnownRows::All, false, progress);
        }
        let t = Instant::now();
        let found = crawl(&self.lake, &self.crawl_options(None))?;
        tracing::debug!(elapsed = ?t.elapsed(), files = found.files.len(), "crawl done");
        self.merge(started, found, KnownRows::All, false, progress)
    }

    /// Index only `scope`: paths (absolute, or relative to the lake) of files or
    /// directories that may have changed, appeared or disappeared. Each is crawled as a
    /// full run would crawl it (ignore files, hidden files, links), and compared with
    /// the catalog rows equal to it or under it: a missing path's rows are deleted, and
    /// a path that moved is a rename when both its old and new paths are in the scope.
    /// Paths outside the lake are ignored; the lake root itself makes a full run.
    pub fn update(&mut self, scope: &[PathBuf], progress: &dyn Progress) -> Result<IndexReport> {
        let started = Instant::now();
        let rel: Vec<String> = scope
            .iter()
            .filter_map(|p| lake_relative(&self.lake, p))
            .collect();
        let scope = Scope::new(rel);
        // An object store is listed whole: it has no cheap listing of a few keys.
        if scope.is_whole_lake() || self.objects.is_some() {
            return self.run(progress);
        }
        let t = Instant::now();
        let found = crawl(&self.lake, &self.crawl_options(Some(scope.clone())))?;
        let known = self.catalog.load_known_in(&scope)?;
        tracing::debug!(elapsed = ?t.elapsed(), scope = scope.len(), files = found.files.len(), known = known.len(), "scoped crawl done");
        self.merge(started, found, KnownRows::Listed(known), true, progress)
    }
}

/// `p` as a lake-relative, `/`-separated path without `.` components; `""` for the root;
/// `None` when it lies outside the lake, climbs with `..`, or is not UTF-8.
fn lake_relative(lake: &Path, p: &Path) -> Option<String> {
    let rel = if p.is_absolute() {
        p.strip_prefix(lake).ok()?
    } else {
        p
    };
    let mut parts = Vec::new();
    for c in rel.components() {
        match c {
            Component::Normal(s) => parts.push(s.to_str()?),
            Component::CurDir => {}
            _ => return None,
        }
    }
    Some(parts.join("/"))
}

/// Index the lake at `lake` into the index directory `index_dir`: a full run of an
/// [`Indexer`] that is closed (and its lock released) at the end.
pub fn index(
    lake: &Path,
    index_dir: &Path,
    opts: &IndexOptions,
    progress: &dyn Progress,
) -> Result<IndexReport> {
    Indexer::open(lake, index_dir, opts)?.run(progress)
}

/// Open a writer on the index at `index_dir` for the lake it records: its directory, or
/// its object store (with the endpoint the index recorded, else `AWS_ENDPOINT_URL`, and
/// the environment's credentials). For callers that know the index, not the lake
/// (`serve --watch`, MCP `reindex`).
pub fn open_recorded(index_dir: &Path, opts: &IndexOptions) -> Result<Indexer> {
    use crate::catalog::{read_meta, CATALOG_FILE};
    if !index_dir.join(CATALOG_FILE).is_file() {
        return Err(UserError::NoIndex {
            searched: format!("at {}", index_dir.display()),
        }
        .into());
    }
    let root = read_meta(index_dir, MetaKey::LakeRoot)?.ok_or(InternalError::MissingMeta {
        key: MetaKey::LakeRoot.as_str(),
    })?;
    if !crate::store::is_url(&root) {
        return Indexer::open(Path::new(&root), index_dir, opts);
    }
    let endpoint = read_meta(index_dir, MetaKey::Endpoint)?;
    let lake =
        crate::store::ObjectLake::open(&root, endpoint.as_deref()).map_err(UserError::from)?;
    Indexer::open_objects(lake, index_dir, opts)
}

#[cfg(test)]
mod passes_tests;
#[cfg(test)]
mod tests;
