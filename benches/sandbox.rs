//! What the jail costs: one script run through `Sandbox::run` jailed and unconfined
//! (`--unsafe-no-isolation`), and the same script under bubblewrap when it is installed,
//! N runs each, one after another, in one process (so the interpreter's runtime probe is
//! paid once, as in an `ask`).
//!
//! Run: `cargo bench --bench sandbox` (20 runs of `print(1)` and of `import pandas`, with
//! the Python of `lakestar setup python` or `python3`), or
//! `cargo bench --bench sandbox -- --runs 50 --python /path/to/python`.

use lakestar::agent::sandbox::{default_venv_dir, Limits, Policy, Python, Sandbox};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const SCRIPTS: [(&str, &str); 2] = [
    ("print(1)", "print(1)\n"),
    ("import pandas", "import pandas\nprint(1)\n"),
];

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// The same root as the jail's, built by bubblewrap's own options.
fn bwrap(python: &Python, script: &Path) -> Option<Duration> {
    let real = python.path.canonicalize().ok()?;
    let prefix = real.parent()?.parent()?.to_path_buf();
    let mut cmd = Command::new("bwrap");
    cmd.args(["--unshare-all", "--die-with-parent", "--new-session"]);
    for d in ["/usr", "/bin", "/sbin", "/lib", "/lib64"] {
        match std::fs::read_link(d) {
            Ok(t) => cmd.arg("--symlink").arg(t).arg(d),
            Err(_) if Path::new(d).is_dir() => cmd.args(["--ro-bind", d, d]),
            Err(_) => continue,
        };
    }
    for d in [prefix].into_iter().chain(python.venv()) {
        cmd.arg("--ro-bind").arg(&d).arg(&d);
    }
    cmd.args(["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"])
        .arg("--ro-bind")
        .arg(script)
        .arg(script)
        .args(["--uid", "65534", "--gid", "65534"])
        .arg(&python.path)
        .arg(script);
    let t = Instant::now();
    let out = cmd.output().ok()?;
    out.status.success().then(|| t.elapsed())
}

fn main() {
    let runs: usize = arg("--runs").and_then(|r| r.parse().ok()).unwrap_or(20);
    let explicit = arg("--python").map(PathBuf::from);
    let python = Python::resolve(explicit.as_deref(), &default_venv_dir()).expect("a Python");
    let rt = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    println!(
        "{runs} runs each, median wall time per run; python {}",
        python.path.display()
    );
    println!("| script | jailed | unconfined | jail cost | bubblewrap |");
    println!("|---|---:|---:|---:|---:|");
    for (label, code) in SCRIPTS {
        let mut times = Vec::new();
        for policy in [Policy::Jail, Policy::Unconfined] {
            let sandbox = Sandbox::new(python.clone(), Limits::default()).with_policy(policy);
            let mut t = Vec::new();
            for i in 0..runs + 1 {
                let work = dir.path().join(format!("{policy:?}-{i}"));
                let start = Instant::now();
                let ex = rt.block_on(sandbox.run(&work, "bench", code, &[])).unwrap();
                assert!(ex.success(), "{ex:?}");
                if i > 0 {
                    t.push(start.elapsed()); // the first run pays the probes
                }
            }
            times.push(median(t));
        }
        let script = dir.path().join("bench.py");
        std::fs::write(&script, code).unwrap();
        let bw: Vec<Duration> = (0..runs).filter_map(|_| bwrap(&python, &script)).collect();
        let bw = if bw.len() == runs {
            format!("{:.0} ms", median(bw).as_secs_f64() * 1e3)
        } else {
            "not installed / failed".into()
        };
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        println!(
            "| {label} | {:.0} ms | {:.0} ms | {:+.0} ms | {bw} |",
            ms(times[0]),
            ms(times[1]),
            ms(times[0]) - ms(times[1])
        );
    }
}
