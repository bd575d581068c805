//! The benchmarks' own Python: `target/bench-venv`, made with pip on first use, holding
//! the tools lakestar is measured against (pandas, DuckDB). Shared by the benches that
//! include it with `#[path = "common/venv.rs"] mod venv;`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The bench venv's python with every module of `packages` importable (pip-installing
/// the missing ones), or None when pip cannot provide them.
pub fn bench_python(target: &Path, packages: &[&str]) -> Option<PathBuf> {
    let venv = target.join("bench-venv");
    let py = venv.join("bin/python");
    let importable = |py: &Path| {
        let script = packages
            .iter()
            .map(|p| format!("import {p}"))
            .collect::<Vec<_>>()
            .join("; ");
        Command::new(py)
            .args(["-c", &script])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if py.exists() && importable(&py) {
        return Some(py);
    }
    eprintln!(
        "installing {} into {} (pip)…",
        packages.join(", "),
        venv.display()
    );
    let ok = (py.exists()
        || Command::new("python3")
            .args(["-m", "venv"])
            .arg(&venv)
            .status()
            .is_ok_and(|s| s.success()))
        && Command::new(venv.join("bin/pip"))
            .args(["install", "-q"])
            .args(packages)
            .status()
            .is_ok_and(|s| s.success());
    (ok && importable(&py)).then_some(py)
}
