//! `lakestar doctor`: the configuration in effect and a live check of each piece — the
//! index, the embedder, the LLM endpoint, Python and the sandbox — each `ok`, `warn` or
//! `fail` with what to do. The pieces are built by the code `search`, `ask` and `serve`
//! use, so a piece that passes here is the one they get.

mod checks;

use super::output::print_json;
use super::IndexDirArg;
use anyhow::{bail, Result};
use serde::Serialize;
use std::path::PathBuf;

/// Arguments of `lakestar doctor`.
#[derive(Debug, clap::Args)]
pub(crate) struct DoctorArgs {
    #[command(flatten)]
    index: IndexDirArg,
    /// Python for generated code, as `ask --python` [default: the venv of `lakestar
    /// setup python`, else python3]
    #[arg(long, value_name = "PATH")]
    python: Option<PathBuf>,
    /// Print one JSON object: {"ok", "checks": [{name, status, detail, fix}]}.
    #[arg(long)]
    json: bool,
}

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Status {
    /// Works.
    Ok,
    /// Works, or is not needed by every command, but deserves a look.
    Warn,
    /// Broken: the commands that need it fail.
    Fail,
}

impl Status {
    fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Warn => "warn",
            Status::Fail => "fail",
        }
    }
}

/// One piece checked.
#[derive(Debug, Serialize)]
pub(crate) struct Check {
    /// `index`, `embedder`, `llm`, `python`, `sandbox`.
    pub name: &'static str,
    pub status: Status,
    /// The setting in effect and what the check saw.
    pub detail: String,
    /// What to do, when not ok.
    pub fix: Option<String>,
}

impl Check {
    fn ok(name: &'static str, detail: impl Into<String>) -> Check {
        Check {
            name,
            status: Status::Ok,
            detail: detail.into(),
            fix: None,
        }
    }

    fn warn(name: &'static str, detail: impl Into<String>, fix: impl Into<String>) -> Check {
        Check {
            name,
            status: Status::Warn,
            detail: detail.into(),
            fix: Some(fix.into()),
        }
    }

    fn fail(name: &'static str, detail: impl Into<String>, fix: impl Into<String>) -> Check {
        Check {
            status: Status::Fail,
            ..Check::warn(name, detail, fix)
        }
    }
}

#[derive(Serialize)]
struct Report<'a> {
    ok: bool,
    checks: &'a [Check],
}

pub(crate) fn run(a: DoctorArgs) -> Result<()> {
    let cwd = std::env::current_dir()?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let (index, dir) = checks::index(a.index.index.as_deref(), &cwd);
    let mut all = vec![index, checks::embedder(dir.as_deref())];
    all.push(rt.block_on(checks::llm(dir.as_deref())));
    let (python, py) = checks::python(a.python.as_deref());
    all.push(python);
    all.push(rt.block_on(checks::sandbox(py)));
    let failed: Vec<&str> = all
        .iter()
        .filter(|c| c.status == Status::Fail)
        .map(|c| c.name)
        .collect();
    if a.json {
        print_json(&Report {
            ok: failed.is_empty(),
            checks: &all,
        })?;
    } else {
        for c in &all {
            println!("{:<5} {:<9} {}", c.status.as_str(), c.name, c.detail);
            if let Some(f) = &c.fix {
                println!("{:<15} fix: {f}", "");
            }
        }
    }
    if !failed.is_empty() {
        bail!(
            "{} check{} failed: {}",
            failed.len(),
            if failed.len() == 1 { "" } else { "s" },
            failed.join(", ")
        );
    }
    Ok(())
}
