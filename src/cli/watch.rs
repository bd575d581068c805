//! `lakestar watch`: the background indexer.

use super::output::print_json;
use anyhow::{Context, Result};
use lakestar_index::watch::{watch, WatchBatch, WatchOptions};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Arguments of `lakestar watch`.
#[derive(Debug, clap::Args)]
pub(crate) struct WatchArgs {
    #[command(flatten)]
    lake: super::index::LakeArgs,
    /// Index a changed path once no event has named it for this many milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 300)]
    debounce: u64,
    /// Index a path that keeps changing at least this often, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 2000)]
    max_wait: u64,
    /// Print one JSON object per committed batch on stdout instead of a line on stderr.
    #[arg(long)]
    json: bool,
    /// An object-store lake has no events: it is listed again this often, in seconds
    /// (each listing reads only new and changed objects).
    #[arg(long, value_name = "SECS", default_value_t = 60)]
    interval: u64,
}

/// Watch an object-store lake: a full run (a listing; only new and changed objects are
/// read) every `--interval` seconds until `stop` is set.
fn relist(
    a: &WatchArgs,
    index_dir: &std::path::Path,
    opts: &WatchOptions,
    stop: &AtomicBool,
    on_batch: &mut dyn FnMut(&WatchBatch),
) -> Result<()> {
    let mut indexer = a.lake.open_indexer(index_dir, &opts.index)?;
    let interval = Duration::from_secs(a.interval);
    lakestar_index::watch::relist(&mut indexer, interval, stop, on_batch)?;
    Ok(())
}

/// One batch as `--json` prints it: the run's counts (`index --json`'s fields) plus
/// `kind`, `paths` and `latency_ms`.
fn batch_json(b: &WatchBatch) -> Result<serde_json::Value> {
    let mut v = serde_json::to_value(&b.report)?;
    v["kind"] = b.kind.as_str().into();
    v["paths"] = b.scope.len().into();
    v["latency_ms"] = b.latency.map(|d| d.as_millis() as u64).into();
    Ok(v)
}

pub(super) fn print_line(b: &WatchBatch) {
    let r = &b.report;
    let latency = b
        .latency
        .map(|d| format!(", {} ms after the first event", d.as_millis()))
        .unwrap_or_default();
    eprintln!(
        "{}: {}, {} seen: {} added, {} modified, {} renamed, {} deleted, {}; {} ms{latency}",
        b.kind.as_str(),
        super::output::count(b.scope.len() as u64, "path"),
        super::output::count(r.files_seen, "file"),
        r.added,
        r.modified,
        r.renamed,
        r.deleted,
        super::output::count(r.errors, "error"),
        (r.seconds * 1000.0).round() as u64,
    );
    const SHOWN: usize = 10;
    for (path, msg) in r.problems.iter().take(SHOWN) {
        eprintln!("  {path}: {msg}");
    }
    let more = r.errors.saturating_sub(r.problems.len().min(SHOWN) as u64);
    if more > 0 {
        eprintln!("  … {more} more; see `lakestar status`");
    }
}

pub(crate) fn run(a: WatchArgs) -> Result<()> {
    let (index_dir, index) = a.lake.resolve()?;
    let opts = WatchOptions {
        index,
        debounce: Duration::from_millis(a.debounce),
        max_wait: Duration::from_millis(a.max_wait.max(a.debounce)),
    };
    // The first SIGINT/SIGTERM asks for a clean stop between batches; a second one,
    // while the stop is pending, ends the process at once.
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register_conditional_shutdown(sig, 1, Arc::clone(&stop))
            .and_then(|_| signal_hook::flag::register(sig, Arc::clone(&stop)))
            .context("installing the SIGINT/SIGTERM handlers")?;
    }
    eprintln!(
        "watching {} (index {}); Ctrl-C stops after the batch in progress",
        a.lake.lake.display(),
        index_dir.display()
    );
    let mut output_error = None;
    let mut on_batch = |b: &WatchBatch| {
        let printed = if a.json {
            batch_json(b).and_then(|v| print_json(&v))
        } else {
            print_line(b);
            Ok(())
        };
        if let Err(e) = printed {
            // stdout closed: nobody hears of the batches any more.
            output_error.get_or_insert(e);
            stop.store(true, Ordering::Relaxed);
        }
    };
    match a.lake.object_url() {
        Some(_) => relist(&a, &index_dir, &opts, &stop, &mut on_batch)?,
        None => watch(&a.lake.dir(), &index_dir, &opts, &stop, &mut on_batch)?,
    }
    if let Some(e) = output_error {
        return Err(e.context("printing a batch"));
    }
    eprintln!("stopped");
    Ok(())
}
