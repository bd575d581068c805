//! Describe throughput per format, and the same lake described DS-STAR style (one
//! Python/pandas script run per file) in the same run.
//!
//! Run: `cargo bench --bench describe` (add `-- --no-python` to skip the pandas side).
//! The pandas side installs pandas into `target/bench-venv` with pip on first use.

#[path = "../tests/it/fixtures.rs"]
mod fixtures;
#[path = "common/venv.rs"]
mod venv;

use lakestar_index::indexer::NoProgress;
use lakestar_index::{describe, index, IndexOptions, Source};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn files(root: &Path) -> Vec<PathBuf> {
    walkdir::WalkDir::new(root)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_type().is_file() && !e.path().components().any(|c| c.as_os_str() == ".lakestar")
        })
        .map(|e| e.into_path())
        .collect()
}

/// Describe every file in-process on one thread; totals per detected format.
fn per_format(paths: &[PathBuf]) -> BTreeMap<String, (u64, u64, Duration)> {
    let mut out: BTreeMap<String, (u64, u64, Duration)> = BTreeMap::new();
    for p in paths {
        let t = Instant::now();
        let src = Source::open(p, lakestar_index::indexer::IN_MEMORY_LIMIT).expect("readable");
        let d = describe(&src);
        let dt = t.elapsed();
        let e = out.entry(d.format.as_str().to_string()).or_default();
        e.0 += 1;
        e.1 += d.size;
        e.2 += dt;
    }
    out
}

fn table(title: &str, m: &BTreeMap<String, (u64, u64, Duration)>) {
    println!("\n{title}\n");
    println!("| format | files | MB | seconds | files/s | MB/s |");
    println!("|---|---:|---:|---:|---:|---:|");
    for (f, (n, b, d)) in m {
        let s = d.as_secs_f64();
        println!(
            "| {f} | {n} | {:.2} | {:.3} | {:.0} | {:.1} |",
            *b as f64 / 1e6,
            s,
            *n as f64 / s,
            *b as f64 / 1e6 / s
        );
    }
}

const DESCRIBER: &str = r#"
import sys, json
import pandas as pd
path = sys.argv[1]
lower = path.lower()
try:
    if lower.endswith((".csv", ".data")):
        df = pd.read_csv(path)
    elif lower.endswith(".tsv"):
        df = pd.read_csv(path, sep="\t")
    elif lower.endswith(".jsonl"):
        df = pd.read_json(path, lines=True)
    elif lower.endswith(".json"):
        with open(path) as f:
            obj = json.load(f)
        df = pd.json_normalize(obj) if isinstance(obj, list) else pd.json_normalize([obj])
    else:
        with open(path, "rb") as f:
            head = f.read(4096)
        print(path, len(head), head[:400])
        sys.exit(0)
    print(df.dtypes)
    print(df.head())
    print(df.describe(include="all"))
    print(df.shape)
except Exception as e:
    print("error", e)
"#;

fn venv_python(target: &Path) -> Option<PathBuf> {
    venv::bench_python(target, &["pandas"])
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let target = Path::new(env!("CARGO_MANIFEST_DIR")).join("target");
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/lakes");
    let shared = shared
        .canonicalize()
        .expect("../shared/lakes beside the repository");

    // Warm the page cache, then measure.
    let shared_files = files(&shared);
    per_format(&shared_files);
    table(
        "Shared lakes (DABStep, DABench, DA-Code), one thread, warm cache:",
        &per_format(&shared_files),
    );

    let gen = target.join("bench-formats");
    let _ = std::fs::remove_dir_all(&gen);
    for i in 0..20 {
        fixtures::write_all(&gen.join(format!("copy-{i:02}")));
    }
    let gen_files = files(&gen);
    per_format(&gen_files);
    table(
        "Generated fixtures (20 copies of every format), one thread, warm cache:",
        &per_format(&gen_files),
    );

    if args.iter().any(|a| a == "--no-python") {
        return;
    }
    let Some(py) = venv_python(&target) else {
        eprintln!("pandas could not be installed: skipping the DS-STAR-style comparison");
        return;
    };
    let script = target.join("bench-describer.py");
    std::fs::write(&script, DESCRIBER).unwrap();
    // lakestar end to end: a fresh index of the shared lakes (crawl, hash, describe, store).
    let idx = target.join("bench-describe-index");
    let _ = std::fs::remove_dir_all(&idx);
    let t = Instant::now();
    let r = index(&shared, &idx, &IndexOptions::default(), &NoProgress).unwrap();
    let ours = t.elapsed();
    assert_eq!(r.errors, 0);
    // DS-STAR style: one Python process per file running a pandas describer script.
    let t = Instant::now();
    for f in &shared_files {
        let out = Command::new(&py).arg(&script).arg(f).output().unwrap();
        assert!(
            out.status.success(),
            "{}: {}",
            f.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let theirs = t.elapsed();
    println!("\nSame lake ({} files), end to end:\n", shared_files.len());
    println!("| describer | seconds | files/s |");
    println!("|---|---:|---:|");
    println!(
        "| lakestar index (fresh index, all cores) | {:.2} | {:.0} |",
        ours.as_secs_f64(),
        shared_files.len() as f64 / ours.as_secs_f64()
    );
    println!(
        "| python + pandas script per file (DS-STAR style) | {:.2} | {:.1} |",
        theirs.as_secs_f64(),
        shared_files.len() as f64 / theirs.as_secs_f64()
    );
    println!(
        "\nratio: lakestar is {:.0}× faster",
        theirs.as_secs_f64() / ours.as_secs_f64()
    );
}
