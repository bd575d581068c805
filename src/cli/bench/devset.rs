//! `lakestar bench devset`: write the generated retrieval development set
//! (`lakestar_index::synth::devset`) and say how to measure it.

use anyhow::{Context, Result};
use lakestar_index::synth::devset::{self, Mechanism};
use std::path::PathBuf;

/// `lakestar bench devset`'s arguments.
#[derive(Debug, clap::Args)]
pub(crate) struct DevsetArgs {
    /// Directory to write `lake/` and `tasks.jsonl` into (a set written there before is
    /// replaced; another `lake/` is refused).
    out: PathBuf,
}

pub(crate) fn run(a: DevsetArgs) -> Result<()> {
    let set = devset::generate(&a.out)
        .with_context(|| format!("writing the development set to {}", a.out.display()))?;
    let per: Vec<String> = Mechanism::ALL
        .iter()
        .map(|m| {
            let n = set.tasks.iter().filter(|t| t.mechanism == *m).count();
            format!("{} {n}", m.as_str())
        })
        .collect();
    println!(
        "{}: {} files, {} bytes\n{}: {} tasks ({})",
        set.lake.display(),
        set.files,
        set.bytes,
        set.tasks_file.display(),
        set.tasks.len(),
        per.join(", ")
    );
    let idx = a.out.join("idx");
    println!("\nmeasure with:");
    println!(
        "  lakestar index {} --index {} --embedder hash",
        set.lake.display(),
        idx.display()
    );
    for fold in ["", " --fold"] {
        println!(
            "  lakestar eval retrieval --tasks {} --index {} -k 1,5,10{fold}",
            set.tasks_file.display(),
            idx.display()
        );
    }
    Ok(())
}
