//! The work on one file: read, hash, classify (touch, rename, change), describe or reuse
//! a cached description.

use super::IN_MEMORY_LIMIT;
use crate::analyze::{self, current_key, describe_as, detect, Source};
use crate::catalog::{CatalogReader, Change, FileRow, FileState, Hash};
use crate::crawl::links::{refuse_read, Containment};
use crate::crawl::Entry;
use crate::spool::{read_array, Record};
use std::io::{self, Read, Write};
use std::path::Path;

/// A file whose mtime is this close to the moment it was read may still be changing
/// within the filesystem's timestamp granularity: it is re-hashed on the next run.
const RACY_WINDOW_NS: i64 = 2_000_000_000;

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Kind {
    Added,
    Modified,
    Unchanged,
    Renamed,
    Deleted,
    None,
}

/// One file to read, as the change detection lists it (in a [`crate::spool::Spool`]:
/// a first index lists every file of the lake).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Todo {
    pub(super) entry: Entry,
    /// The catalog knows the path.
    pub(super) known: bool,
    /// Content is known to be the same, but the analyzer changed.
    pub(super) reanalyze: bool,
}

impl Record for Todo {
    fn write_to(&self, out: &mut impl Write) -> io::Result<()> {
        self.entry.write_to(out)?;
        out.write_all(&[u8::from(self.known) | u8::from(self.reanalyze) << 1])
    }

    fn read_from(input: &mut impl Read) -> io::Result<Self> {
        let entry = Entry::read_from(input)?;
        let [flags] = read_array(input)?;
        Ok(Todo {
            entry,
            known: flags & 1 != 0,
            reanalyze: flags & 2 != 0,
        })
    }
}

/// One file to read, with what the catalog knows of it.
pub(super) struct Work {
    pub(super) entry: Entry,
    /// Its catalog row, when known.
    pub(super) old: Option<Box<FileRow>>,
    /// Content is known to be the same, but the analyzer changed.
    pub(super) reanalyze: bool,
}

#[cfg(test)]
impl Work {
    /// A file the catalog does not know.
    fn new(entry: Entry) -> Self {
        Work {
            entry,
            old: None,
            reanalyze: false,
        }
    }
}

pub(super) struct Outcome {
    pub(super) change: Option<Change>,
    pub(super) kind: Kind,
    pub(super) analyzed: bool,
    pub(super) cache_hit: bool,
    pub(super) problem: Option<(String, String)>,
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
pub(super) struct Ctx<'a> {
    pub(super) lake: &'a Path,
    pub(super) index_dir: &'a Path,
    /// Where followed links may lead; `None` when links are not followed.
    pub(super) links: Option<&'a Containment>,
    /// Paths that disappeared, claimable by a new path with the same content.
    pub(super) gone: super::gone::Gone,
    /// Read budget per file; `None` in `--full` mode.
    pub(super) budget: Option<u64>,
    /// The lake's object store, when the lake is one (entries are objects, not files).
    pub(super) objects: Option<&'a std::sync::Arc<crate::store::ObjectLake>>,
}

pub(super) fn process(ctx: &Ctx<'_>, cache: Option<&CatalogReader>, w: &Work) -> Outcome {
    let e = &w.entry;
    // An object's identity comes from its listing: nothing is read unless it must be
    // described.
    let (hash, mut opened) = match ctx.objects {
        Some(_) => {
            let etag = e
                .etag
                .clone()
                .unwrap_or_else(|| format!("mtime:{}", e.mtime_ns));
            (crate::store::content_identity(&etag, e.size), None)
        }
        None => {
            let src = match open_local(ctx, w) {
                Ok(src) => src,
                Err(outcome) => return *outcome,
            };
            match hash_source(&src) {
                Ok(h) => (h, Some(src)),
                Err(err) => {
                    return failed(
                        e,
                        Kind::None,
                        None,
                        format!("read failed while hashing: {err}"),
                    )
                }
            }
        }
    };
    let racy = e.mtime_ns + RACY_WINDOW_NS > now_ns();
    let size = opened.as_ref().map_or(e.size, Source::size);

    if let Some(old) = &w.old {
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
        if let Some(from) = ctx.gone.claim(&hash, cache) {
            // Coverage read from the old path does not move with the file.
            let time = match &from.time {
                Some(t) if t.source != "path" => Some(t.clone()),
                _ => analyze::time::from_path(&e.path),
            };
            let row = FileRow {
                path: e.path.clone(),
                size,
                mtime_ns: e.mtime_ns,
                racy,
                indexed_at: crate::now_ms(),
                time,
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

    let kind = match (&w.old, w.reanalyze) {
        (None, _) => Kind::Added,
        (Some(_), true) => Kind::Unchanged,
        (Some(_), false) => Kind::Modified,
    };
    let src = match opened.take() {
        Some(src) => src,
        None => match open_remote(ctx, w) {
            Ok(src) => src,
            Err(outcome) => return *outcome,
        },
    };
    let format = detect(src.path(), src.head(), size);
    if let (Some(lake), Some(bytes)) = (ctx.objects, src.bytes()) {
        // A small table may be read again by the lookup step (`relink`): keep its
        // bytes rather than GET it a second time.
        if matches!(
            format,
            analyze::Format::Csv | analyze::Format::Tsv | analyze::Format::FixedWidth
        ) && size <= crate::companion::lookup::LOOKUP_MAX_BYTES
        {
            lake.keep(&e.path, bytes::Bytes::copy_from_slice(bytes));
        }
    }
    let key = current_key(format);
    // In --full mode a description made from a sample does not count as cached.
    let cached = cache
        .and_then(|c| c.cached(&hash, &key).ok().flatten())
        .filter(|c| !(c.sampled && ctx.budget.is_none()));
    let (description, error, content_time, sampled, schema, cache_hit) = match cached {
        Some(c) => (None, c.error, c.time, c.sampled, c.schema, true),
        None => {
            let d = describe_as(&src, format);
            let error = d.error.clone();
            let time = d.time_coverage.clone();
            let sampled = d.is_sampled();
            let schema = Some(crate::collect::schema_digest(&d));
            (Some(Box::new(d)), error, time, sampled, schema, false)
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
        time: content_time.or_else(|| analyze::time::from_path(&e.path)),
        sampled,
        schema,
    };
    Outcome {
        analyzed: description.is_some(),
        change: Some(Change::Upsert { row, description }),
        kind,
        cache_hit,
        problem: error.map(|m| (e.path.clone(), m)),
    }
}

/// The outcome of a file that could not be processed: `problem` on its path.
fn failed(e: &Entry, kind: Kind, change: Option<Change>, msg: String) -> Outcome {
    Outcome {
        change,
        kind,
        analyzed: false,
        cache_hit: false,
        problem: Some((e.path.clone(), msg)),
    }
}

/// Open the file of `w` on disk, or the outcome that it could not be.
fn open_local(ctx: &Ctx<'_>, w: &Work) -> Result<Source, Box<Outcome>> {
    let e = &w.entry;
    let abs = ctx.lake.join(&e.path);
    // The crawl judged the path when it listed it; it may have become a link since (the
    // reads of a large lake come long after its walk). Refused now, it is gone from the
    // index as a vanished file is.
    if let Some(why) = refuse_read(&abs, ctx.links) {
        let change = w.old.as_ref().map(|_| Change::Delete {
            path: e.path.clone(),
        });
        let kind = if change.is_some() {
            Kind::Deleted
        } else {
            Kind::None
        };
        return Err(Box::new(failed(e, kind, change, why)));
    }
    Source::open(&abs, IN_MEMORY_LIMIT)
        .map(|s| s.with_budget(ctx.budget))
        .map_err(|err| Box::new(open_failed(w, err)))
}

/// Open the object of `w` by ranged requests, or the outcome that it could not be.
fn open_remote(ctx: &Ctx<'_>, w: &Work) -> Result<Source, Box<Outcome>> {
    let e = &w.entry;
    let lake = ctx.objects.expect("an object-store lake");
    let obj = std::sync::Arc::new(lake.object(&e.path, e.size));
    Source::from_remote(&e.path, obj, IN_MEMORY_LIMIT)
        .map(|s| s.with_budget(ctx.budget))
        .map_err(|err| Box::new(open_failed(w, err)))
}

/// The outcome of a file whose open failed: deleted when it vanished, else unreadable.
fn open_failed(w: &Work, err: std::io::Error) -> Outcome {
    let e = &w.entry;
    if err.kind() == std::io::ErrorKind::NotFound {
        // Vanished between crawl and read: it is deleted now.
        let (kind, change) = match &w.old {
            Some(_) => (
                Kind::Deleted,
                Some(Change::Delete {
                    path: e.path.clone(),
                }),
            ),
            None => (Kind::None, None),
        };
        return failed(e, kind, change, "file vanished while indexing".into());
    }
    let row = FileRow {
        path: e.path.clone(),
        size: e.size,
        mtime_ns: e.mtime_ns,
        hash: None,
        format: w.old.as_ref().map_or(analyze::Format::Binary, |o| o.format),
        analyzer: None,
        state: FileState::Unreadable,
        error: Some(format!("cannot read: {err}")),
        racy: false,
        indexed_at: crate::now_ms(),
        time: analyze::time::from_path(&e.path),
        sampled: false,
        schema: None,
    };
    let kind = if w.old.is_some() {
        Kind::Modified
    } else {
        Kind::Added
    };
    failed(
        e,
        kind,
        Some(Change::Upsert {
            row,
            description: None,
        }),
        format!("cannot read: {err}"),
    )
}

#[cfg(test)]
mod tests {
    use super::super::gone::Gone;
    use super::*;

    fn row(path: &str, hash: Hash) -> FileRow {
        let csv = analyze::Format::Csv;
        FileRow::ok_for_test(path, 4, hash, csv, &current_key(csv))
    }

    #[test]
    fn a_file_that_vanishes_before_it_is_read_is_a_problem_not_a_failure() {
        let d = tempfile::tempdir().unwrap();
        let lake = d.path().canonicalize().unwrap();
        let ctx = Ctx {
            lake: &lake,
            index_dir: &lake,
            links: None,
            gone: Gone::empty(),
            budget: None,
            objects: None,
        };
        let entry = Entry {
            path: "gone.csv".into(),
            size: 4,
            mtime_ns: 1,
            etag: None,
        };
        let new = process(&ctx, None, &Work::new(entry.clone()));
        assert_eq!(new.kind, Kind::None);
        assert!(new.change.is_none());
        assert!(new.problem.unwrap().1.contains("vanished"));

        let old = row("gone.csv", [0; 32]);
        let known = process(
            &ctx,
            None,
            &Work {
                entry: entry.clone(),
                old: Some(Box::new(old.clone())),
                reanalyze: false,
            },
        );
        assert_eq!(known.kind, Kind::Deleted);
        assert!(matches!(known.change, Some(Change::Delete { ref path }) if path == "gone.csv"));
    }

    #[cfg(unix)]
    #[test]
    fn a_file_swapped_for_a_link_out_of_the_lake_is_not_read_and_its_row_goes() {
        let d = tempfile::tempdir().unwrap();
        let base = d.path().canonicalize().unwrap();
        let (lake, out) = (base.join("lake"), base.join("out"));
        std::fs::create_dir_all(&lake).unwrap();
        std::fs::create_dir_all(&out).unwrap();
        std::fs::write(out.join("secret.csv"), "token\nhunter2\n").unwrap();
        std::os::unix::fs::symlink(out.join("secret.csv"), lake.join("x.csv")).unwrap();
        let inside = Containment::new(&lake, false, &[]);
        let entry = Entry {
            path: "x.csv".into(),
            size: 4,
            mtime_ns: 1,
            etag: None,
        };
        for links in [None, Some(&inside)] {
            let ctx = Ctx {
                lake: &lake,
                index_dir: &lake,
                links,
                gone: Gone::empty(),
                budget: None,
                objects: None,
            };
            let known = Work {
                entry: entry.clone(),
                old: Some(Box::new(row("x.csv", [0; 32]))),
                reanalyze: false,
            };
            let o = process(&ctx, None, &known);
            assert_eq!(o.kind, Kind::Deleted);
            assert!(matches!(o.change, Some(Change::Delete { ref path }) if path == "x.csv"));
            assert!(o.problem.unwrap().1.contains("secret.csv"));
            let new = process(&ctx, None, &Work::new(entry.clone()));
            assert_eq!((new.kind, new.change.is_none()), (Kind::None, true));
        }
        // Allowed out, it is read like any file.
        let anywhere = Containment::new(&lake, true, &[]);
        let ctx = Ctx {
            lake: &lake,
            index_dir: &lake,
            links: Some(&anywhere),
            gone: Gone::empty(),
            budget: None,
            objects: None,
        };
        let o = process(&ctx, None, &Work::new(entry.clone()));
        assert_eq!(o.kind, Kind::Added);
    }

    #[test]
    fn same_content_under_a_new_name_claims_the_gone_row() {
        let d = tempfile::tempdir().unwrap();
        let lake = d.path().canonicalize().unwrap();
        std::fs::write(lake.join("new.csv"), "a,b\n").unwrap();
        let hash = *blake3::hash(b"a,b\n").as_bytes();
        let old = row("old.csv", hash);
        let ctx = Ctx {
            lake: &lake,
            index_dir: &lake,
            links: None,
            gone: Gone::collect([Ok(old.clone())].into_iter(), 1, &lake).unwrap(),
            budget: None,
            objects: None,
        };
        let entry = Entry {
            path: "new.csv".into(),
            size: 4,
            mtime_ns: 1,
            etag: None,
        };
        let o = process(&ctx, None, &Work::new(entry.clone()));
        assert_eq!(o.kind, Kind::Renamed);
        assert!(!o.analyzed);
        match o.change {
            Some(Change::Rename { from, row }) => {
                assert_eq!(from, "old.csv");
                assert_eq!(row.path, "new.csv");
                assert_eq!(row.analyzer, old.analyzer);
            }
            other => panic!("{other:?}"),
        }
        // A second file with the same content finds nothing left to claim: it is added.
        std::fs::write(lake.join("twin.csv"), "a,b\n").unwrap();
        let twin = Entry {
            path: "twin.csv".into(),
            ..entry
        };
        let o = process(&ctx, None, &Work::new(twin.clone()));
        assert_eq!(o.kind, Kind::Added);
        assert!(o.analyzed);
    }
}
