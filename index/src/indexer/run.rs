//! The body shared by full and scoped runs: merge what the crawl found with what the
//! catalog knows, read what changed in parallel, commit in batches, delete last, then
//! bring collections and the search side in step.

use super::gone::Gone;
use super::process::{process, Ctx, Kind, Outcome, Todo, Work};
use super::{IndexReport, Indexer, Progress, GONE_IN_MEMORY, KNOWN_PAGE, WORK_IN_MEMORY};
use crate::catalog::{CatalogReader, Change, Known, MetaKey};
use crate::crawl::links::Containment;
use crate::crawl::Crawl;
use crate::error::{Error, Result};
use crate::search::ann::update::GraphBuild;
use crate::search::sync::SyncReport;
use crate::spool::Spool;
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The catalog rows a run compares with what the crawl found.
pub(super) enum KnownRows {
    /// Every row, read from the catalog a page at a time (a full run).
    All,
    /// These rows, sorted by path (a scoped run's).
    Listed(Vec<Known>),
}

impl Indexer {
    /// Bring the catalog in step with `found` (sorted by path), given the rows `known`
    /// over the same part of the lake. A `scoped` run that finds
    /// nothing to do leaves the last run's report and time as they were: a watcher's
    /// batch of events in ignored paths is not a run worth reporting, nor a change for
    /// searchers to reopen on.
    pub(super) fn merge(
        &mut self,
        started: Instant,
        found: Crawl,
        known: KnownRows,
        scoped: bool,
        progress: &dyn Progress,
    ) -> Result<IndexReport> {
        let Crawl {
            files,
            errors,
            failed_dirs,
        } = found;
        let mut report = IndexReport {
            files_seen: files.len(),
            ..Default::default()
        };
        let fetched_before = self.objects.as_ref().map(|o| o.fetched().get());
        for ce in errors {
            report.problem(ce.path, ce.error);
        }

        // Classify without reading the files: a merge of two path-sorted streams, the
        // crawl's listing and the catalog's rows. What is to be read goes to a spool (in
        // memory for a small run, on disk for a large one): at a first index, that is
        // every file of the lake.
        let under_failed_dir = |p: &str| {
            failed_dirs.iter().any(|d| {
                d.is_empty()
                    || p.strip_prefix(d.as_str())
                        .is_some_and(|r| r.starts_with('/'))
            })
        };
        let spool_error = |e| Error::io(&self.index_dir, e);
        let mut todo: Spool<Todo> = Spool::new(Some(&self.index_dir), WORK_IN_MEMORY);
        let mut gone_paths: Spool<String> = Spool::new(Some(&self.index_dir), GONE_IN_MEMORY);
        let mut rows = 0u64;
        {
            let mut f = files.map(|r| r.map_err(spool_error));
            let mut k: Box<dyn Iterator<Item = Result<Known>>> = match known {
                KnownRows::All => Box::new(self.catalog.known_pages(KNOWN_PAGE)),
                KnownRows::Listed(v) => Box::new(v.into_iter().map(Ok)),
            };
            let (mut next_f, mut next_k) = (f.next().transpose()?, k.next().transpose()?);
            loop {
                let order = match (&next_f, &next_k) {
                    (None, None) => break,
                    (Some(_), None) => std::cmp::Ordering::Less,
                    (None, Some(_)) => std::cmp::Ordering::Greater,
                    (Some(e), Some(r)) => e.path.as_str().cmp(r.path.as_str()),
                };
                match order {
                    std::cmp::Ordering::Less => {
                        let entry = next_f.take().expect("compared");
                        todo.push(Todo {
                            entry,
                            known: false,
                            reanalyze: false,
                        })
                        .map_err(spool_error)?;
                        next_f = f.next().transpose()?;
                    }
                    std::cmp::Ordering::Greater => {
                        let r = next_k.take().expect("compared");
                        rows += 1;
                        if !under_failed_dir(&r.path) {
                            gone_paths.push(r.path).map_err(spool_error)?;
                        }
                        next_k = k.next().transpose()?;
                    }
                    std::cmp::Ordering::Equal => {
                        let (e, r) = (
                            next_f.take().expect("compared"),
                            next_k.take().expect("compared"),
                        );
                        rows += 1;
                        let same_meta = r.size == e.size
                            && r.mtime_ns == e.mtime_ns
                            && !r.racy
                            && !r.unreadable;
                        // Re-describe even when the content turns out unchanged.
                        let redo = !r.unreadable && (r.stale || (self.opts.full && r.sampled));
                        if !same_meta || redo {
                            todo.push(Todo {
                                entry: e,
                                known: true,
                                reanalyze: redo,
                            })
                            .map_err(spool_error)?;
                        } else {
                            report.unchanged += 1;
                        }
                        next_f = f.next().transpose()?;
                        next_k = k.next().transpose()?;
                    }
                }
            }
        }
        // A first index: worth compacting at its end (`CatalogWriter::compact`).
        let filling = !scoped && rows == 0;
        // Full rows only for what needs them: those that are gone (here, or as they are
        // claimed once there are many), and known files to read (as they are read).
        let catalog = &self.catalog;
        let gone_rows = gone_paths
            .finish()
            .map_err(spool_error)?
            .into_iter()
            .filter_map(|path| match path {
                Ok(path) => catalog.file(&path).transpose(),
                Err(e) => Some(Err(spool_error(e))),
            });
        let gone = Gone::collect(gone_rows, GONE_IN_MEMORY, &self.index_dir)?;
        let todo = todo.finish().map_err(spool_error)?;

        tracing::debug!(elapsed = ?started.elapsed(), to_read = todo.len(), "classified");
        progress.start(todo.len());
        let links = self.opts.follow_links.then(|| {
            Containment::new(
                &self.lake,
                self.opts.follow_outside,
                std::slice::from_ref(&self.index_dir),
            )
        });
        let ctx = Ctx {
            lake: &self.lake,
            index_dir: &self.index_dir,
            links: links.as_ref(),
            gone,
            budget: (!self.opts.full).then_some(self.opts.read_budget),
            objects: self.objects.as_ref(),
        };
        let (tx, rx) = mpsc::sync_channel::<Result<Outcome>>(256);
        let (work_tx, work_rx) = mpsc::sync_channel::<Result<Work>>(256);
        // Set when the run fails: the threads then drain what is left without work.
        let abort = AtomicBool::new(false);

        let batch_size = self.opts.batch_size.max(1);
        std::thread::scope(|s| -> Result<()> {
            let (ctx, abort) = (&ctx, &abort);
            let pool = &self.pool;
            // The list read back in order, each known file with its catalog row.
            s.spawn(move || {
                let reader = match CatalogReader::open(ctx.index_dir) {
                    Ok(r) => r,
                    Err(e) => {
                        let _ = work_tx.send(Err(e));
                        return;
                    }
                };
                for t in todo {
                    if abort.load(Ordering::Relaxed) {
                        break;
                    }
                    let w = t.map_err(|e| Error::io(ctx.index_dir, e)).and_then(|t| {
                        let old = match t.known {
                            true => reader.file(&t.entry.path)?.map(Box::new),
                            false => None,
                        };
                        Ok(Work {
                            entry: t.entry,
                            old,
                            reanalyze: t.reanalyze,
                        })
                    });
                    let failed = w.is_err();
                    if work_tx.send(w).is_err() || failed {
                        break;
                    }
                }
            });
            s.spawn(move || {
                pool.install(|| {
                    work_rx.into_iter().par_bridge().for_each_init(
                        || (tx.clone(), CatalogReader::open(ctx.index_dir).ok()),
                        |(tx, cache), w| {
                            if abort.load(Ordering::Relaxed) {
                                return;
                            }
                            let _ = tx.send(w.map(|w| process(ctx, cache.as_ref(), &w)));
                        },
                    )
                });
                drop(tx);
            });
            let mut batch = Vec::with_capacity(batch_size);
            let mut last_commit = Instant::now();
            let stop = |e: Error| {
                abort.store(true, Ordering::Relaxed);
                e
            };
            for o in rx {
                let o = o.map_err(stop)?;
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
                if let Some((path, message)) = o.problem {
                    report.problem(path, message);
                }
                if let Some(c) = o.change {
                    batch.push(c);
                }
                progress.inc(1);
                if batch.len() >= batch_size || last_commit.elapsed() > Duration::from_secs(1) {
                    self.catalog.apply(&batch).map_err(stop)?;
                    batch.clear();
                    last_commit = Instant::now();
                }
            }
            self.catalog.apply(&batch)?;
            Ok(())
        })?;

        // Deletions last: whatever disappeared and was not claimed by a rename.
        let catalog = &mut self.catalog;
        report.deleted += ctx.gone.for_each_left(batch_size * 8, |paths| {
            let deletes: Vec<Change> = paths
                .into_iter()
                .map(|path| Change::Delete { path })
                .collect();
            catalog.apply(&deletes)
        })?;

        // Companion links of the folders where something changed, after every file of
        // the run is described and before the search side reads the descriptions. The
        // stale-for-search marks are the changes not yet caught up (a crash after this
        // point leaves them for the next run, which redoes the same folders). Taken as
        // they are now, on disk: the passes below mark more files stale, and read the
        // changed paths a chunk at a time (every path of the lake at a first index).
        self.catalog.snapshot_changed()?;
        let reader = match &self.objects {
            Some(o) => super::relink::LakeReader::Objects(o),
            None => super::relink::LakeReader::Dir(&self.lake),
        };
        tracing::debug!(elapsed = ?started.elapsed(), "changed paths snapshot");
        let relinked = super::relink::relink(&mut self.catalog, reader, self.jobs)?;
        tracing::debug!(elapsed = ?started.elapsed(), relinked, "companion links");
        if let Some(o) = &self.objects {
            o.forget_kept();
        }
        let regrouped = self.catalog.refresh_collections()?;
        tracing::debug!(elapsed = ?started.elapsed(), regrouped, "collections regrouped");
        // Tables that span many files, from the same marks (a crash before the sync
        // leaves them for the next run, which derives the same tables again).
        let retabled =
            super::tables::retable(&mut self.catalog, &self.lake, self.objects.as_ref())?;
        self.catalog.forget_changed()?;
        // The search side follows the catalog; a failure there (an embedding server down)
        // is reported and retried by the next run, never loses the catalog's work.
        let mut synced_nothing = false;
        match self.sync() {
            Ok(r) => {
                tracing::debug!(?r, "search index synced");
                synced_nothing = r.documents == 0 && r.removed == 0 && r.embedded == 0;
            }
            Err(e) => report.problem("(search index)".into(), e.to_string()),
        }
        let compacted = self.catalog.compact(filling && report.added > 0)?;
        tracing::debug!(elapsed = ?started.elapsed(), regrouped, retabled, compacted, "committed");
        report.settle_problems();
        report.seconds = started.elapsed().as_secs_f64();
        if let (Some(o), Some((bytes, requests))) = (&self.objects, fetched_before) {
            let (b, r) = o.fetched().get();
            report.fetched = Some(super::FetchReport {
                bytes: b - bytes,
                requests: r - requests,
            });
        }
        let nothing = report.added + report.modified + report.deleted + report.renamed == 0
            && report.analyzed == 0
            && report.errors == 0
            && regrouped == 0
            && relinked == 0
            && retabled == 0
            && synced_nothing;
        if scoped && nothing {
            progress.finish();
            return Ok(report);
        }
        let walk = super::WalkOptions {
            follow_links: self.opts.follow_links,
            // Only meaningful with links followed: a later `--follow` alone must not
            // find an old `--follow-outside` it never saw in effect.
            follow_outside: self.opts.follow_links && self.opts.follow_outside,
            hidden: self.opts.hidden,
        };
        self.catalog.set_meta(
            MetaKey::WalkOptions,
            &serde_json::to_string(&walk).map_err(|e| Error::serialize("walk options", e))?,
        )?;
        if let Some(endpoint) = self.objects.as_deref().and_then(|o| o.endpoint()) {
            self.catalog.set_meta(MetaKey::Endpoint, endpoint)?;
        }
        self.catalog
            .set_meta(MetaKey::LastIndexFinishedAt, &crate::now_ms().to_string())?;
        self.catalog.set_meta(
            MetaKey::LastIndexReport,
            &serde_json::to_string(&report).map_err(|e| Error::serialize("index report", e))?,
        )?;
        progress.finish();
        Ok(report)
    }

    /// Embed and write the full-text documents of what changed, with the index's
    /// embedder and text index, both kept open between runs; a graph rebuild goes to a
    /// thread of its own when graphs are built apart.
    fn sync(&mut self) -> Result<SyncReport> {
        if self.embedder.is_none() {
            self.embedder = Some(self.opts.embedder.build()?);
        }
        let embedder = self.embedder.as_deref().expect("built above");
        let graph = if self.graphs_apart {
            GraphBuild::Deferred {
                in_flight: self.graph_in_flight(),
            }
        } else if self.opts.graph {
            GraphBuild::Inline
        } else {
            GraphBuild::CodesOnly
        };
        let (report, job) = crate::search::sync::sync_with(
            &mut self.catalog,
            &self.index_dir,
            &mut self.text,
            embedder,
            &self.opts.embedder.to_spec_string(),
            graph,
        )?;
        if let Some(job) = job {
            let generation = job.generation();
            let cancel = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
            let flag = cancel.clone();
            let handle = std::thread::Builder::new()
                .name("lakestar-graph".into())
                .spawn(move || job.build_unless(&flag))
                .map_err(|e| Error::io(&self.index_dir, e))?;
            self.building = Some(super::Building {
                generation,
                cancel,
                handle,
            });
        }
        Ok(report)
    }
}
