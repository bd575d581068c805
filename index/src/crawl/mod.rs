//! Crawl: walk the lake, honour `.lakestarignore`, stat every file.
//!
//! The walk uses the `ignore` crate's parallel walker (ripgrep's), which reads
//! `.lakestarignore` files in gitignore syntax and detects symlink loops when links are
//! followed. `.gitignore` is *not* honoured: data files are routinely git-ignored, and a
//! data lake is not a source tree.
//!
//! Links are followed only when asked, and then only to targets inside the lake unless
//! asked otherwise ([`links`]): a link that may not be followed is reported like a path
//! that could not be read, and neither indexed nor entered.
//!
//! A crawl may be *scoped* ([`Scope`]): the same walk from the root, with the same
//! ignore files and exclusions, that enters only the directories leading to or inside
//! the scope's paths — what `watch` uses to re-index the paths its events named.

pub mod links;

use crate::error::{Error, Result};
use crate::spool::{read_array, read_str, write_str, Record, Sorted, Sorter};
use links::{Containment, INDEX_DIR_NAME};
use std::collections::HashSet;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc, Mutex};
use std::time::UNIX_EPOCH;

/// Name of the per-directory ignore file (gitignore syntax).
pub const IGNORE_FILE: &str = ".lakestarignore";

/// Files of the listing sorted in memory at a time: beyond, the listing is sorted on
/// disk in runs of this many (about 100 bytes each: 6.5 MB), so that a lake of any size
/// is listed in the same memory. A handful in unit tests, so that they cross runs.
pub const LISTING_RUN: usize = if cfg!(test) { 3 } else { 65_536 };

/// How to crawl.
#[derive(Debug, Clone, Default)]
pub struct CrawlOptions {
    /// Follow symbolic links (loop-safe), to targets inside the lake.
    pub follow_links: bool,
    /// With `follow_links`, follow links to targets outside the lake too.
    pub follow_outside: bool,
    /// Include hidden files and directories (names starting with `.`).
    pub hidden: bool,
    /// Walker threads.
    pub threads: usize,
    /// Directories never entered (the index directory, when inside the lake).
    pub exclude: Vec<PathBuf>,
    /// Only these paths and what lies under them (`None`: the whole lake).
    pub scope: Option<Scope>,
    /// Where the listing's sorted runs go when it does not fit in memory (`None`: the
    /// system's temporary directory). Anonymous files, gone when dropped.
    pub spill_dir: Option<PathBuf>,
}

/// A set of lake-relative paths (files or directories) a crawl is limited to.
///
/// Membership tests go through two hash sets — the paths, and every proper ancestor
/// directory of them — so testing one path costs one lookup per `/` in it, whatever
/// the number of scope paths (a burst of events names thousands).
#[derive(Debug, Clone, Default)]
pub struct Scope {
    paths: HashSet<String>,
    ancestors: HashSet<String>,
}

impl Scope {
    /// The scope of `paths`: relative to the lake root, `/`-separated, without `.` or
    /// `..` components, none empty (the root is a full crawl, not a scope). A path naming
    /// a `.lakestarignore` file stands for its directory: what the file ignores changes.
    pub fn new<I, S>(paths: I) -> Scope
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut scope = Scope::default();
        for p in paths {
            let mut p: String = p.into();
            if p == IGNORE_FILE {
                p.clear();
            } else if let Some(dir) = p.strip_suffix(&format!("/{IGNORE_FILE}")) {
                p = dir.to_string();
            }
            let mut at = 0;
            while let Some(i) = p[at..].find('/') {
                scope.ancestors.insert(p[..at + i].to_string());
                at += i + 1;
            }
            scope.paths.insert(p);
        }
        scope
    }

    /// The scope holds the root itself (an ignore file at the top): the whole lake.
    pub fn is_whole_lake(&self) -> bool {
        self.paths.contains("")
    }

    /// No paths at all.
    pub fn is_empty(&self) -> bool {
        self.paths.is_empty()
    }

    /// The scope's paths, in no particular order.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.paths.iter().map(String::as_str)
    }

    /// Number of scope paths.
    pub fn len(&self) -> usize {
        self.paths.len()
    }

    /// `rel` is a scope path or lies under one.
    pub fn covers(&self, rel: &str) -> bool {
        if self.paths.contains(rel) || self.paths.contains("") {
            return true;
        }
        rel.match_indices('/')
            .any(|(i, _)| self.paths.contains(&rel[..i]))
    }

    /// The walk must enter directory `rel`: it is covered, or leads to a scope path.
    fn enters(&self, rel: &str) -> bool {
        rel.is_empty() || self.ancestors.contains(rel) || self.covers(rel)
    }
}

/// One file found by the crawl. Ordered by path first (the fields' order).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Entry {
    /// Path relative to the lake root, `/`-separated.
    pub path: String,
    /// Size in bytes.
    pub size: u64,
    /// Modification time, nanoseconds since the Unix epoch.
    pub mtime_ns: i64,
    /// The object's ETag, for an object-store lake (`None` for a file on disk).
    pub etag: Option<String>,
}

impl Record for Entry {
    fn write_to(&self, out: &mut impl Write) -> io::Result<()> {
        write_str(out, &self.path)?;
        out.write_all(&self.size.to_le_bytes())?;
        out.write_all(&self.mtime_ns.to_le_bytes())?;
        match &self.etag {
            Some(etag) => {
                out.write_all(&[1])?;
                write_str(out, etag)
            }
            None => out.write_all(&[0]),
        }
    }

    fn read_from(input: &mut impl Read) -> io::Result<Self> {
        Ok(Entry {
            path: read_str(input)?,
            size: u64::from_le_bytes(read_array(input)?),
            mtime_ns: i64::from_le_bytes(read_array(input)?),
            etag: match read_array::<1>(input)? {
                [0] => None,
                _ => Some(read_str(input)?),
            },
        })
    }
}

/// A path the crawl could not read.
#[derive(Debug, Clone)]
pub struct CrawlError {
    /// Relative path (or the root) that failed.
    pub path: String,
    /// What went wrong.
    pub error: String,
}

/// What the crawl found.
#[derive(Debug, Default)]
pub struct Crawl {
    /// Files, sorted by path: in memory up to [`LISTING_RUN`] of them, on disk beyond.
    pub files: Sorted<Entry>,
    /// Paths that could not be read.
    pub errors: Vec<CrawlError>,
    /// Relative paths of directories whose listing failed: files the catalog knows below
    /// them are kept, not taken for deleted.
    pub failed_dirs: Vec<String>,
}

/// Modification time of `md` in nanoseconds since the Unix epoch (0 if unknown).
pub fn mtime_ns(md: &std::fs::Metadata) -> i64 {
    md.modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0)
}

/// `path` relative to `root`, `/`-separated; `None` for a path outside `root` or one that
/// is not valid UTF-8.
pub fn relative(root: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(root).ok()?;
    let s = rel.to_str()?;
    Some(if std::path::MAIN_SEPARATOR == '/' {
        s.to_string()
    } else {
        s.replace(std::path::MAIN_SEPARATOR, "/")
    })
}

enum Found {
    File(Entry),
    Error(CrawlError, bool),
}

fn error_path(e: &ignore::Error) -> Option<&Path> {
    match e {
        ignore::Error::WithPath { path, .. } => Some(path),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            error_path(err)
        }
        ignore::Error::Loop { child, .. } => Some(child),
        ignore::Error::Partial(errs) => errs.first().and_then(error_path),
        _ => None,
    }
}

/// Walk `root` (an absolute, canonical directory). Fails only when the listing cannot
/// be written to its spill directory.
pub fn crawl(root: &Path, opts: &CrawlOptions) -> Result<Crawl> {
    let exclude = opts.exclude.clone();
    let scope = opts.scope.clone();
    let root_buf = root.to_path_buf();
    let in_scope = move |e: &ignore::DirEntry, is_dir: bool| {
        let Some(scope) = &scope else { return true };
        // A non-UTF-8 path is kept so that the visitor reports it, as a full crawl does.
        let Some(rel) = relative(&root_buf, e.path()) else {
            return true;
        };
        if is_dir {
            scope.enters(&rel)
        } else {
            scope.covers(&rel)
        }
    };
    // Links the walk may not take, reported after it (the filter cannot send them: it
    // only says yes or no).
    let refused: Arc<Mutex<Vec<CrawlError>>> = Arc::default();
    let contain = opts
        .follow_links
        .then(|| Containment::new(root, opts.follow_outside, &opts.exclude));
    let (refused_in, root_in) = (Arc::clone(&refused), root.to_path_buf());
    let walker = ignore::WalkBuilder::new(root)
        .standard_filters(false)
        .hidden(!opts.hidden)
        .parents(false)
        .add_custom_ignore_filename(IGNORE_FILE)
        .follow_links(opts.follow_links)
        .threads(opts.threads)
        .filter_entry(move |e| {
            let is_dir = e.file_type().is_some_and(|t| t.is_dir());
            if is_dir && (e.file_name() == INDEX_DIR_NAME || exclude.iter().any(|x| x == e.path()))
            {
                return false;
            }
            // The scope first: links outside it are not this crawl's to judge.
            if !in_scope(e, is_dir) {
                return false;
            }
            let Some(contain) = &contain else {
                return true;
            };
            if e.path_is_symlink() {
                if let Some(error) = contain.refuse_link(e.path()) {
                    let path = relative(&root_in, e.path())
                        .unwrap_or_else(|| e.path().to_string_lossy().into_owned());
                    let mut refused = refused_in.lock().unwrap_or_else(|p| p.into_inner());
                    refused.push(CrawlError { path, error });
                    return false;
                }
            }
            // The index met again below a followed link is left out as silently as
            // the index itself.
            !(is_dir && contain.is_excluded_dir(e.path()))
        })
        .build_parallel();

    let (tx, rx) = mpsc::channel::<Found>();
    let mut out = Crawl::default();
    let mut files = Sorter::new(opts.spill_dir.as_deref(), LISTING_RUN);
    let mut spill_failed: Option<io::Error> = None;
    // The listing is taken in as the walk sends it: a walk left to finish first would
    // hold the whole lake in the channel as well (270 MB at a million files, where the
    // listing itself is 160 MB).
    std::thread::scope(|scope| {
        scope.spawn(move || {
            walker.run(|| {
                let tx = tx.clone();
                Box::new(move |res| {
                    use ignore::WalkState::Continue;
                    let found = match res {
                        Ok(entry) => {
                            let ft = match entry.file_type() {
                                Some(ft) => ft,
                                None => return Continue, // stdin; cannot happen here
                            };
                            if !ft.is_file() || entry.file_name() == IGNORE_FILE {
                                return Continue; // directories, unfollowed links, sockets, ...
                            }
                            let Some(path) = relative(root, entry.path()) else {
                                let _ = tx.send(Found::Error(
                                    CrawlError {
                                        path: entry.path().to_string_lossy().into_owned(),
                                        error: "path is not valid UTF-8; rename it to index it"
                                            .into(),
                                    },
                                    false,
                                ));
                                return Continue;
                            };
                            match entry.metadata() {
                                Ok(md) => Found::File(Entry {
                                    path,
                                    size: md.len(),
                                    mtime_ns: mtime_ns(&md),
                                    etag: None,
                                }),
                                Err(e) => Found::Error(
                                    CrawlError {
                                        path,
                                        error: e.to_string(),
                                    },
                                    false,
                                ),
                            }
                        }
                        Err(e) => {
                            let path = error_path(&e)
                                .map(|p| {
                                    relative(root, p)
                                        .unwrap_or_else(|| p.to_string_lossy().into_owned())
                                })
                                .unwrap_or_default();
                            let is_dir = error_path(&e).is_some_and(|p| p.is_dir());
                            Found::Error(
                                CrawlError {
                                    path,
                                    error: e.to_string(),
                                },
                                is_dir,
                            )
                        }
                    };
                    let _ = tx.send(found);
                    Continue
                })
            });
            drop(tx);
        });
        for f in rx {
            match f {
                Found::File(e) => {
                    // After a failure the rest is drained (the walk is not left blocked)
                    // and the run fails below.
                    if spill_failed.is_none() {
                        if let Err(e) = files.push(e) {
                            spill_failed = Some(e);
                        }
                    }
                }
                Found::Error(e, is_dir) => {
                    if is_dir {
                        out.failed_dirs.push(e.path.clone());
                    }
                    out.errors.push(e);
                }
            }
        }
    });
    // Not failed directories: what the catalog holds below a refused link (an index
    // made before the rule) is gone from the lake as far as the index is concerned.
    out.errors.extend(std::mem::take(
        &mut *refused.lock().unwrap_or_else(|p| p.into_inner()),
    ));
    if let Some(e) = spill_failed {
        let dir = opts.spill_dir.clone().unwrap_or_else(std::env::temp_dir);
        return Err(Error::io(dir, e));
    }
    out.files = files.finish();
    out.errors.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

/// The paths of a listing, in memory (tests).
#[cfg(test)]
fn paths_of(c: Crawl) -> Vec<String> {
    c.files
        .into_vec()
        .unwrap()
        .into_iter()
        .map(|e| e.path)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn honours_ignore_file_and_hidden() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(root.join(".lakestar")).unwrap();
        std::fs::write(root.join("a/b/x.csv"), "1").unwrap();
        std::fs::write(root.join("a/skip.tmp"), "1").unwrap();
        std::fs::write(root.join(".git/config"), "1").unwrap();
        std::fs::write(root.join(".lakestar/catalog.sqlite"), "1").unwrap();
        std::fs::write(root.join(IGNORE_FILE), "*.tmp\n").unwrap();
        let c = crawl(&root, &CrawlOptions::default()).unwrap();
        assert!(c.errors.is_empty());
        assert_eq!(paths_of(c), ["a/b/x.csv"]);
    }

    #[test]
    fn a_listing_longer_than_a_run_comes_back_sorted_from_disk() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("lake");
        let spill = d.path().join("spill");
        std::fs::create_dir_all(&spill).unwrap();
        let mut want = Vec::new();
        // Names whose byte order differs from a walk's ("a-b" < "a.b" < "a/…" < "a0").
        for dir in ["a", "a-b", "a.b", "a0", "z/é", ""] {
            for f in ["x.csv", "a.json", "B.md", "0"] {
                let rel = if dir.is_empty() {
                    f.to_string()
                } else {
                    format!("{dir}/{f}")
                };
                std::fs::create_dir_all(root.join(&rel).parent().unwrap()).unwrap();
                std::fs::write(root.join(&rel), &rel).unwrap();
                want.push(rel);
            }
        }
        want.sort();
        let root = root.canonicalize().unwrap();
        assert!(want.len() > 5 * LISTING_RUN, "several runs");
        for threads in [1, 4] {
            let opts = CrawlOptions {
                threads,
                spill_dir: Some(spill.clone()),
                ..Default::default()
            };
            let c = crawl(&root, &opts).unwrap();
            assert_eq!(c.files.len(), want.len() as u64);
            let files = c.files.into_vec().unwrap();
            assert_eq!(
                files.iter().map(|e| e.path.clone()).collect::<Vec<_>>(),
                want
            );
            assert!(files
                .iter()
                .all(|e| e.size == e.path.len() as u64 && e.mtime_ns > 0));
        }
        // The runs were anonymous files: nothing is left where they were written.
        assert_eq!(std::fs::read_dir(&spill).unwrap().count(), 0);
        // A listing that cannot be written is an error that names the place, not a
        // shorter listing.
        let opts = CrawlOptions {
            spill_dir: Some(d.path().join("missing")),
            ..Default::default()
        };
        let err = crawl(&root, &opts).unwrap_err().to_string();
        assert!(err.contains("missing"), "{err}");
    }

    #[test]
    fn scoped_crawl_walks_only_the_scope_with_the_same_rules() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        for p in [
            "a/b/x.csv",
            "a/b/y.tmp",
            "a/c.csv",
            "ab.csv",
            "z/w.csv",
            "z/.h.csv",
        ] {
            std::fs::create_dir_all(root.join(p).parent().unwrap()).unwrap();
            std::fs::write(root.join(p), "1").unwrap();
        }
        std::fs::write(root.join(IGNORE_FILE), "*.tmp\n").unwrap();
        let scoped = |paths: &[&str]| -> Vec<String> {
            let opts = CrawlOptions {
                scope: Some(Scope::new(paths.iter().copied())),
                ..Default::default()
            };
            paths_of(crawl(&root, &opts).unwrap())
        };
        // The root's ignore file applies inside the scope, as in a full crawl.
        assert_eq!(scoped(&["a/b"]), ["a/b/x.csv"]);
        assert_eq!(
            scoped(&["a", "z/w.csv"]),
            ["a/b/x.csv", "a/c.csv", "z/w.csv"]
        );
        // A prefix that is not a path component does not match.
        assert_eq!(scoped(&["a/b/x"]), Vec::<String>::new());
        assert_eq!(scoped(&["z/.h.csv", "gone/file"]), Vec::<String>::new());
        // A changed ignore file widens to its directory (here the whole lake).
        assert_eq!(scoped(&[IGNORE_FILE]).len(), 4);
        let s = Scope::new(["a/b/x.csv"]);
        assert!(s.enters("a") && s.enters("a/b") && !s.enters("z") && !s.enters("a/c"));
        assert!(s.covers("a/b/x.csv") && !s.covers("a/b/x.csv2") && !s.covers("a/b"));
    }

    #[cfg(unix)]
    #[test]
    fn symlink_loops_are_safe() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("a")).unwrap();
        std::fs::write(root.join("a/x.csv"), "1").unwrap();
        std::os::unix::fs::symlink(&root, root.join("a/loop")).unwrap();
        std::os::unix::fs::symlink(root.join("a/x.csv"), root.join("link.csv")).unwrap();
        let plain = crawl(&root, &CrawlOptions::default()).unwrap();
        assert_eq!(plain.files.len(), 1, "links are not followed by default");
        let follow = crawl(
            &root,
            &CrawlOptions {
                follow_links: true,
                ..Default::default()
            },
        )
        .unwrap();
        assert!(
            follow.errors.iter().any(|e| e.error.contains("loop")),
            "{:?}",
            follow.errors
        );
        assert_eq!(paths_of(follow), ["a/x.csv", "link.csv"]);
    }

    #[cfg(unix)]
    #[test]
    fn links_out_of_the_lake_are_reported_not_walked_unless_allowed() {
        let d = tempfile::tempdir().unwrap();
        let base = d.path().canonicalize().unwrap();
        let (root, out) = (base.join("lake"), base.join("out"));
        std::fs::create_dir_all(root.join("data")).unwrap();
        std::fs::create_dir_all(out.join("deep")).unwrap();
        std::fs::write(root.join("data/x.csv"), "1").unwrap();
        std::fs::write(out.join("deep/y.csv"), "1").unwrap();
        std::os::unix::fs::symlink("data", root.join("in")).unwrap();
        std::os::unix::fs::symlink("../out", root.join("out")).unwrap();
        std::os::unix::fs::symlink("/etc", root.join("etc")).unwrap();
        // A link that resolves inside through another outside it.
        std::os::unix::fs::symlink(root.join("data"), out.join("back")).unwrap();
        std::os::unix::fs::symlink("../out/back", root.join("round")).unwrap();
        let walk = |follow_outside: bool| {
            let opts = CrawlOptions {
                follow_links: true,
                follow_outside,
                ..Default::default()
            };
            crawl(&root, &opts).unwrap()
        };
        let c = walk(false);
        let errors: Vec<(&str, bool)> = c
            .errors
            .iter()
            .map(|e| (e.path.as_str(), e.error.contains("outside the lake")))
            .collect();
        assert_eq!(errors, [("etc", true), ("out", true)]);
        // Refused links are not failed directories: rows below them may go.
        assert!(c.failed_dirs.is_empty());
        assert_eq!(paths_of(c), ["data/x.csv", "in/x.csv", "round/x.csv"]);

        let c = walk(true);
        assert!(c.errors.iter().all(|e| !e.error.contains("outside")));
        let paths = paths_of(c);
        assert!(
            paths.iter().any(|p| p == "out/deep/y.csv")
                && paths.iter().any(|p| p == "out/back/x.csv")
        );
        assert!(paths.iter().any(|p| p.starts_with("etc/")), "{paths:?}");
    }
}
