//! `lakestar index`.

use super::llm_analyzer::LlmSummary;
use super::output::print_json;
use anyhow::Result;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use lakestar_index::indexer::WalkOptions;
use lakestar_index::search::embedder::{default_for, DefaultChoice, EmbedderSpec};
use lakestar_index::{indexer, locate, IndexOptions};
use std::io::IsTerminal;
use std::path::PathBuf;

/// Arguments of `lakestar index`.
#[derive(Debug, clap::Args)]
pub(crate) struct IndexArgs {
    #[command(flatten)]
    lake: LakeArgs,
    /// Print one JSON object with the run's counts instead of a summary.
    #[arg(long)]
    json: bool,
    /// Discard the existing catalog and index from scratch.
    #[arg(long)]
    rebuild: bool,
    /// Read every file whole for exact figures (large files are otherwise profiled from
    /// a bounded sample); re-describes files that were sampled.
    #[arg(long)]
    full: bool,
    /// Build the vector graph now (for ~1M files; held in memory); otherwise searches
    /// scan the codes and `watch` builds it.
    #[arg(long)]
    graph: bool,
    /// Bytes read per file before sampling (tuning and tests).
    #[arg(long, hide = true, default_value_t = lakestar_index::analyze::DEFAULT_BUDGET)]
    read_budget: u64,
    /// Results per committed transaction (tuning and crash tests).
    #[arg(long, hide = true, default_value_t = 512)]
    batch_size: usize,
    #[command(flatten)]
    llm: super::llm_analyzer::LlmAnalyzerArgs,
}

/// The lake, its index and how to walk and embed it: what `index` and `watch` share, so
/// that a watcher is started with the same options as the index it keeps.
#[derive(Debug, clap::Args)]
pub(super) struct LakeArgs {
    /// The lake: a directory of data files, or an object-store URL (s3://BUCKET/PREFIX,
    /// gs://…, az://…, file:///DIR); a URL lake needs --index DIR.
    #[arg(default_value = ".")]
    pub lake: PathBuf,
    /// Endpoint of an S3-compatible store (MinIO, moto, R2…) [default: $AWS_ENDPOINT_URL,
    /// else AWS]; plain http only to a loopback address.
    #[arg(long, value_name = "URL")]
    pub endpoint: Option<String>,
    /// Index directory [default: LAKE/.lakestar]
    #[arg(long = "index", value_name = "DIR")]
    pub index: Option<PathBuf>,
    /// Worker threads for hashing and analysis [default: one per core]
    #[arg(
        long,
        short = 'j',
        value_name = "N",
        default_value_t = 0,
        hide_default_value = true
    )]
    pub jobs: usize,
    #[command(flatten)]
    pub walk: WalkArgs,
    /// Embedder: hash[:DIM] (built in), model2vec:DIR, bert:DIR, openai:MODEL[@URL],
    /// ollama:MODEL[@URL], or an installed model (minilm) [default: the index's own; for a
    /// new index the preferred installed model, else hash]
    #[arg(long, value_parser = parse_embedder)]
    pub embedder: Option<EmbedderSpec>,
}

impl LakeArgs {
    /// The lake's URL when it is in an object store (`file://` URLs are directories).
    pub fn object_url(&self) -> Option<&str> {
        let s = self.lake.to_str()?;
        (lakestar_index::store::is_url(s) && lakestar_index::store::file_url_path(s).is_none())
            .then_some(s)
    }

    /// The lake's directory (a `file://` URL's path); meaningless for an object store.
    pub fn dir(&self) -> PathBuf {
        self.lake
            .to_str()
            .and_then(lakestar_index::store::file_url_path)
            .unwrap_or_else(|| self.lake.clone())
    }

    /// Open the lake for a run: an object store, or the directory.
    pub fn open_indexer(
        &self,
        index_dir: &std::path::Path,
        opts: &IndexOptions,
    ) -> Result<indexer::Indexer> {
        Ok(match self.object_url() {
            Some(url) => {
                let lake = lakestar_index::store::ObjectLake::open(url, self.endpoint.as_deref())
                    .map_err(lakestar_index::UserError::from)
                    .map_err(lakestar_index::Error::from)?;
                indexer::Indexer::open_objects(lake, index_dir, opts)?
            }
            None => indexer::Indexer::open(&self.dir(), index_dir, opts)?,
        })
    }

    /// The index directory and the index options these arguments give (the rest at
    /// their defaults).
    pub fn resolve(&self) -> Result<(PathBuf, IndexOptions)> {
        let index_dir = match self.object_url() {
            Some(url) => {
                // Checked first (the URL, the endpoint, a profile; no request yet):
                // nothing about a new index is worth saying for a lake that is not.
                lakestar_index::store::ObjectLake::open(url, self.endpoint.as_deref())
                    .map_err(lakestar_index::UserError::from)
                    .map_err(lakestar_index::Error::from)?;
                self.index.clone().ok_or_else(|| {
                    super::UsageError(format!(
                        "an object-store lake ({url}) has no directory to hold its index: pass --index DIR"
                    ))
                })?
            }
            None => {
                // Checked first: nothing about a new index is worth saying for a lake
                // that is not.
                indexer::canonical_lake(&self.dir())?;
                self.index
                    .clone()
                    .unwrap_or_else(|| locate::default_index_dir(&self.dir()))
            }
        };
        let embedder = match &self.embedder {
            Some(e) => e.clone(),
            None => default_embedder(&index_dir)?,
        };
        let walk = self.walk.resolve(&index_dir);
        let opts = IndexOptions {
            jobs: self.jobs,
            follow_links: walk.follow_links,
            follow_outside: walk.follow_outside,
            hidden: walk.hidden,
            embedder,
            ..Default::default()
        };
        Ok((index_dir, opts))
    }
}

/// How to walk the lake; each option defaults to what the index records.
#[derive(Debug, Default, clap::Args)]
pub(super) struct WalkArgs {
    /// Follow symbolic links (loop-safe) to targets inside the lake; links leading out
    /// of it are reported and left out [default: as the index records]
    #[arg(long, overrides_with = "no_follow")]
    pub follow: bool,
    /// Do not follow symbolic links, whatever the index records.
    #[arg(long)]
    pub no_follow: bool,
    /// Follow symbolic links to targets outside the lake too (implies --follow; never
    /// into an index directory) [default: as the index records]
    #[arg(
        long,
        overrides_with = "no_follow_outside",
        conflicts_with = "no_follow"
    )]
    pub follow_outside: bool,
    /// Follow links only to targets inside the lake, whatever the index records.
    #[arg(long)]
    pub no_follow_outside: bool,
    /// Include hidden files and directories [default: as the index records]
    #[arg(long, overrides_with = "no_hidden")]
    pub hidden: bool,
    /// Leave hidden files and directories out, whatever the index records.
    #[arg(long)]
    pub no_hidden: bool,
}

impl WalkArgs {
    /// How to walk the lake: as asked, else as the index at `index_dir` records, so that
    /// a run without the flags does not drop what an earlier `index --hidden` found.
    /// Says so on stderr when the record adds files.
    pub fn resolve(&self, index_dir: &std::path::Path) -> WalkOptions {
        // An unreadable record is the run's business to report (it opens the catalog too).
        let recorded = lakestar_index::indexer::recorded_walk(index_dir)
            .ok()
            .flatten()
            .unwrap_or_default();
        let (walk, taken) = self.pick(recorded);
        for flag in taken {
            eprintln!("as the index records: --{flag} (--no-{flag} to change it)");
        }
        walk
    }

    /// The walk, and the flags taken from `recorded` rather than asked for.
    fn pick(&self, recorded: WalkOptions) -> (WalkOptions, Vec<&'static str>) {
        let mut taken = Vec::new();
        let mut pick = |yes: bool, no: bool, rec: bool, flag: &'static str| {
            if yes || no {
                return yes;
            }
            if rec {
                taken.push(flag);
            }
            rec
        };
        let follow_links = pick(
            self.follow || self.follow_outside,
            self.no_follow,
            recorded.follow_links,
            "follow",
        );
        // Links not followed lead nowhere: --no-follow forgets --follow-outside too.
        let follow_outside = follow_links
            && pick(
                self.follow_outside,
                self.no_follow_outside,
                recorded.follow_outside,
                "follow-outside",
            );
        let hidden = pick(self.hidden, self.no_hidden, recorded.hidden, "hidden");
        let walk = WalkOptions {
            follow_links,
            follow_outside,
            hidden,
        };
        (walk, taken)
    }
}

fn parse_embedder(s: &str) -> Result<EmbedderSpec, String> {
    EmbedderSpec::parse(s)
}

/// The embedder when none is asked for; says which one a new index gets (on stderr: the
/// `--json` report stays alone on stdout).
pub(super) fn default_embedder(index_dir: &std::path::Path) -> Result<EmbedderSpec> {
    let models = lakestar_index::models::models_dir().ok();
    let (spec, why) = default_for(index_dir, models.as_deref())?;
    match why {
        DefaultChoice::Recorded => {}
        DefaultChoice::Installed(name) => eprintln!(
            "new index: embedder {name} (installed model, {}); pass --embedder hash for the built-in one",
            spec.to_spec_string()
        ),
        DefaultChoice::Builtin if cfg!(feature = "neural") => eprintln!(
            "new index: embedder hash (built in); `lakestar model install minilm` installs a neural one"
        ),
        DefaultChoice::Builtin => eprintln!("new index: embedder hash (built in)"),
    }
    Ok(spec)
}

struct Bar(ProgressBar);

impl indexer::Progress for Bar {
    fn start(&self, total: u64) {
        self.0.set_length(total);
    }
    fn inc(&self, n: u64) {
        self.0.inc(n);
    }
    fn finish(&self) {
        self.0.finish_and_clear();
    }
}

pub(crate) fn run(a: IndexArgs) -> Result<()> {
    let (index_dir, base) = a.lake.resolve()?;
    let opts = IndexOptions {
        rebuild: a.rebuild,
        batch_size: a.batch_size,
        read_budget: a.read_budget,
        full: a.full,
        graph: a.graph,
        ..base
    };
    let bar = if !a.json && std::io::stderr().is_terminal() {
        let pb = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
        pb.set_style(
            ProgressStyle::with_template(
                "{spinner} indexing [{bar:30}] {pos}/{len} files {rate} eta {eta}",
            )
            .expect("static template")
            .with_key("rate", super::output::rate_key("files"))
            .progress_chars("=> "),
        );
        pb
    } else {
        ProgressBar::hidden()
    };
    let agent = match a.llm.llm_analyzer {
        true => Some(super::llm_analyzer::agent(&a.llm, &index_dir)?),
        false => None,
    };
    let report = a.lake.open_indexer(&index_dir, &opts)?.run(&Bar(bar))?;
    // The native run has released the writer lock; the LLM pass takes it again.
    let (llm, stopped) = match agent {
        Some(agent) => {
            let (summary, stopped) = super::llm_analyzer::run(&a.llm, agent, &index_dir)?;
            (Some(summary), stopped)
        }
        None => (None, None),
    };
    if a.json {
        let mut v = serde_json::to_value(&report)?;
        if let Some(s) = &llm {
            v["llm_analyzer"] = serde_json::to_value(s)?;
        }
        print_json(&v)?;
    } else {
        print_summary(&report, llm.as_ref());
    }
    match stopped {
        Some(e) => Err(anyhow::Error::new(e).context(
            "the LLM analyzer stopped; the files it described are stored, the rest are described by the next `index --llm-analyzer`",
        )),
        None => Ok(()),
    }
}

fn print_summary(report: &lakestar_index::IndexReport, llm: Option<&LlmSummary>) {
    let fetched = report.fetched.map_or(String::new(), |f| {
        format!(
            "; fetched {} in {}",
            super::output::count(f.bytes, "byte"),
            super::output::count(f.requests, "request")
        )
    });
    println!(
        "indexed {} in {:.2}s: {} added, {} modified, {} deleted, {} renamed, {} unchanged; {} analyzed, {} from cache, {}{fetched}",
        super::output::count(report.files_seen, "file"),
        report.seconds,
        report.added,
        report.modified,
        report.deleted,
        report.renamed,
        report.unchanged,
        report.analyzed,
        report.cache_hits,
        super::output::count(report.errors, "error")
    );
    const SHOWN: usize = 20;
    for (path, msg) in report.problems.iter().take(SHOWN) {
        eprintln!("  {path}: {msg}");
    }
    let more = report
        .errors
        .saturating_sub(report.problems.len().min(SHOWN) as u64);
    if more > 0 {
        eprintln!("  … {more} more; see `lakestar status`");
    }
    let Some(l) = llm else { return };
    println!(
        "LLM analyzer ({}, prompt {}): {} described, {} cached, {} failed; {} LLM calls",
        l.model, l.prompt, l.described, l.cached, l.failed, l.llm_calls
    );
    for (path, msg) in l.problems.iter().take(SHOWN) {
        eprintln!("  {path}: describer failed (native description kept): {msg}");
    }
    if l.problems.len() > SHOWN {
        eprintln!("  … {} more failed describers", l.problems.len() - SHOWN);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        walk: WalkArgs,
    }

    fn pick(args: &[&str], recorded: WalkOptions) -> (WalkOptions, Vec<&'static str>) {
        let cli = Cli::try_parse_from(std::iter::once("x").chain(args.iter().copied())).unwrap();
        cli.walk.pick(recorded)
    }

    fn walk(follow_links: bool, follow_outside: bool) -> WalkOptions {
        WalkOptions {
            follow_links,
            follow_outside,
            hidden: false,
        }
    }

    #[test]
    fn follow_outside_implies_follow_and_is_taken_from_the_record_until_turned_off() {
        let none = WalkOptions::default();
        let outside = walk(true, true);
        assert_eq!(pick(&[], none), (none, vec![]));
        assert_eq!(pick(&["--follow"], none), (walk(true, false), vec![]));
        assert_eq!(pick(&["--follow-outside"], none), (outside, vec![]));
        // Recorded: kept, and said.
        assert_eq!(
            pick(&[], outside),
            (outside, vec!["follow", "follow-outside"])
        );
        assert_eq!(
            pick(&["--follow"], outside),
            (outside, vec!["follow-outside"])
        );
        // Turned off: inside only, or no links at all.
        assert_eq!(
            pick(&["--no-follow-outside"], outside),
            (walk(true, false), vec!["follow"])
        );
        assert_eq!(pick(&["--no-follow"], outside), (none, vec![]));
        // The last of a pair wins (--no-follow-outside alone asks for no following);
        // --no-follow contradicts --follow-outside.
        assert_eq!(
            pick(&["--follow-outside", "--no-follow-outside"], none).0,
            none
        );
        assert_eq!(
            pick(&["--no-follow-outside", "--follow-outside"], none).0,
            outside
        );
        let err = Cli::try_parse_from(["x", "--no-follow", "--follow-outside"]).err();
        assert!(err.is_some_and(|e| e.to_string().contains("cannot be used with")));
    }
}
