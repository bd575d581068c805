//! Profiling speed: lakestar's exact describe (every row read) against DuckDB's
//! `SUMMARIZE` on two generated CSVs — 1 GB with 20 columns, 100 MB with 300 columns —
//! in the same run: wall time and peak RSS of each, as child processes.
//!
//! Run: `cargo bench --bench profile` (add `-- --small` for 1/10 of the sizes). The files
//! are generated once under `target/bench-profile/` (deterministic: a fixed seed); DuckDB
//! is pip-installed into `target/bench-venv` on first use. Peak RSS comes from
//! `/usr/bin/time -f %M`.

#[path = "common/venv.rs"]
mod venv;

use lakestar_index::analyze::Content;
use lakestar_index::{describe, Source};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// The child-process mode: describe one file exactly, in-process.
const CHILD: &str = "--describe-child";

const WORDS: [&str; 24] = [
    "north", "river", "stone", "amber", "field", "cloud", "maple", "harbor", "silver", "meadow",
    "quiet", "ember", "lantern", "orchard", "summit", "willow", "canyon", "marsh", "copper",
    "glacier", "prairie", "thistle", "falcon", "delta",
];
const CATEGORIES: [&str; 8] = [
    "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel",
];
const REGIONS: [&str; 5] = ["EMEA", "APAC", "NA", "LATAM", "ANZ"];

/// One generated cell of kind `k` (0..10) in row `i`.
fn cell(out: &mut Vec<u8>, rng: &mut fastrand::Rng, k: usize, i: u64) {
    match k {
        // Increasing key.
        0 => write!(out, "{i}"),
        // Integers, some null.
        1 => {
            if rng.u8(..100) < 5 {
                Ok(())
            } else {
                write!(out, "{}", rng.i64(-50_000..1_000_000))
            }
        }
        // Floats.
        2 => write!(out, "{:.3}", rng.f64() * 10_000.0 - 2_000.0),
        3 => write!(out, "{:.6}", rng.f64()),
        // Dates, datetimes.
        4 => write!(
            out,
            "20{:02}-{:02}-{:02}",
            rng.u8(0..25),
            rng.u8(1..13),
            rng.u8(1..29)
        ),
        5 => write!(
            out,
            "2024-{:02}-{:02} {:02}:{:02}:{:02}",
            rng.u8(1..13),
            rng.u8(1..29),
            rng.u8(0..24),
            rng.u8(0..60),
            rng.u8(0..60)
        ),
        // Categories, one with nulls.
        6 => write!(out, "{}", CATEGORIES[rng.usize(..CATEGORIES.len())]),
        7 => {
            if rng.u8(..100) < 10 {
                write!(out, "NA")
            } else {
                write!(out, "{}", REGIONS[rng.usize(..REGIONS.len())])
            }
        }
        // Free text (quoted: it may hold the delimiter).
        8 => {
            out.push(b'"');
            for w in 0..rng.usize(2..7) {
                if w > 0 {
                    out.push(if rng.u8(..8) == 0 { b',' } else { b' ' });
                }
                out.extend_from_slice(WORDS[rng.usize(..WORDS.len())].as_bytes());
            }
            out.push(b'"');
            Ok(())
        }
        // Codes.
        _ => write!(
            out,
            "{}-{:05}",
            REGIONS[rng.usize(..REGIONS.len())],
            rng.u32(..100_000)
        ),
    }
    .expect("write to a Vec");
}

/// Write a CSV of `cols` columns (kinds cycling) to about `bytes` bytes, unless a file of
/// that exact content is already there (its size and a marker name say so).
fn generate(path: &Path, cols: usize, bytes: u64) {
    let done = path.with_extension("done");
    if done.exists() && path.exists() {
        return;
    }
    eprintln!(
        "generating {} ({cols} columns, {bytes} bytes)…",
        path.display()
    );
    let mut rng = fastrand::Rng::with_seed(13);
    let mut f = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(path).unwrap());
    let header: Vec<String> = (0..cols).map(|c| format!("c{c}_k{}", c % 10)).collect();
    writeln!(f, "{}", header.join(",")).unwrap();
    let mut written = 0u64;
    let mut row = Vec::with_capacity(64 * cols);
    let mut i = 0u64;
    while written < bytes {
        row.clear();
        for c in 0..cols {
            if c > 0 {
                row.push(b',');
            }
            cell(&mut row, &mut rng, c % 10, i);
        }
        row.push(b'\n');
        f.write_all(&row).unwrap();
        written += row.len() as u64;
        i += 1;
    }
    f.flush().unwrap();
    std::fs::write(&done, format!("{i} rows\n")).unwrap();
}

/// Wall seconds and peak RSS (MB) of a child command, run under `/usr/bin/time`.
fn measure(cmd: &[&std::ffi::OsStr]) -> (f64, f64, String) {
    let t = Instant::now();
    let out = Command::new("/usr/bin/time")
        .arg("-f")
        .arg("peak-rss-kb %M")
        .args(cmd)
        .output()
        .expect("/usr/bin/time runs");
    let secs = t.elapsed().as_secs_f64();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{cmd:?} failed: {stderr}");
    let kb: f64 = stderr
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("peak-rss-kb "))
        .and_then(|v| v.trim().parse().ok())
        .expect("peak RSS from /usr/bin/time");
    let stdout = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (secs, kb / 1024.0, stdout)
}

const SUMMARIZE: &str = r#"
import sys, duckdb
con = duckdb.connect()
rows = con.execute("SUMMARIZE SELECT * FROM read_csv_auto(?)", [sys.argv[1]]).fetchall()
print(len(rows), "columns summarized")
"#;

/// The child: an exact describe (no read budget), as `lakestar index --full` does.
fn child(path: &Path) {
    let src = Source::open(path, lakestar_index::indexer::IN_MEMORY_LIMIT)
        .expect("readable")
        .with_budget(None);
    let d = describe(&src);
    match d.content {
        Content::Table(t) => {
            assert!(t.rows_exact);
            println!("{} rows, {} columns", t.rows, t.columns.len());
        }
        c => panic!("not a table: {c:?}"),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == CHILD) {
        child(Path::new(&args[i + 1]));
        return;
    }
    let small = args.iter().any(|a| a == "--small");
    let target = Path::new(env!("CARGO_MANIFEST_DIR")).join("target");
    let dir = target.join("bench-profile");
    std::fs::create_dir_all(&dir).unwrap();
    let div = if small { 10 } else { 1 };
    let files: Vec<(PathBuf, usize)> = vec![
        (dir.join(format!("wide-300x{}mb.csv", 100 / div)), 300),
        (dir.join(format!("long-20x{}mb.csv", 1000 / div)), 20),
    ];
    for (p, cols) in &files {
        let mb = if *cols == 20 { 1000 } else { 100 } / div;
        generate(p, *cols, mb * 1_000_000);
    }
    let Some(py) = venv::bench_python(&target, &["duckdb"]) else {
        eprintln!("DuckDB could not be installed: no comparison");
        return;
    };
    let script = target.join("bench-summarize.py");
    std::fs::write(&script, SUMMARIZE).unwrap();
    let me = std::env::current_exe().unwrap();
    let ver = Command::new(&py)
        .args(["-c", "import duckdb; print(duckdb.__version__)"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    println!("\nProfiling speed, exact (every row), warm cache; DuckDB {ver}:\n");
    println!("| file | MB | lakestar s | DuckDB s | speed (DuckDB s / lakestar s) | lakestar MB RSS | DuckDB MB RSS | memory (lakestar / DuckDB) |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    for (p, _) in &files {
        let size = std::fs::metadata(p).unwrap().len() as f64 / 1e6;
        // Warm the page cache for both.
        let _ = std::fs::read(p);
        let (ls, lm, lout) = measure(&[me.as_os_str(), CHILD.as_ref(), p.as_os_str()]);
        let (ds, dm, dout) = measure(&[py.as_os_str(), script.as_os_str(), p.as_os_str()]);
        eprintln!("lakestar: {lout}; duckdb: {dout}");
        println!(
            "| {} | {size:.0} | {ls:.2} | {ds:.2} | {:.2}× | {lm:.0} | {dm:.0} | {:.2} |",
            p.file_name().unwrap().to_string_lossy(),
            ds / ls,
            lm / dm
        );
    }
}
