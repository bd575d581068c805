//! `lakestar sandbox-run FILE` (hidden): run a script exactly as the agent runs generated
//! code (same interpreter choice, limits, environment and isolation), to reproduce a
//! generated script from a run's log by hand.

use super::output::print_json;
use super::setup::cli_error;
use crate::agent::sandbox::{
    default_venv_dir, parse_duration, parse_size, Limits, Policy, Python, Sandbox, SandboxError,
};
use anyhow::{bail, Context, Result};
use std::path::PathBuf;
use std::time::Duration;

/// Arguments of `lakestar sandbox-run`.
#[derive(Debug, clap::Args)]
pub(crate) struct SandboxRunArgs {
    /// The Python script.
    file: PathBuf,
    /// Working directory of the run (created; the script is written into it).
    #[arg(long, value_name = "DIR")]
    workdir: PathBuf,
    /// Interpreter [default: the venv of `lakestar setup python`, else python3]
    #[arg(long, value_name = "PATH")]
    python: Option<PathBuf>,
    /// Venv to use when --python is not given [default: as `lakestar setup python`]
    #[arg(long, value_name = "DIR")]
    venv: Option<PathBuf>,
    /// Wall-clock timeout [default: 120s]
    #[arg(long, value_name = "DURATION", value_parser = duration("timeout"))]
    timeout: Option<Duration>,
    /// Address-space limit [default: 8GiB]
    #[arg(long, value_name = "SIZE", value_parser = size("memory"))]
    memory: Option<u64>,
    /// CPU-time limit [default: 600s]
    #[arg(long, value_name = "DURATION", value_parser = duration("cpu time"))]
    cpu: Option<Duration>,
    /// Largest file the script may write [default: 1GiB]
    #[arg(long, value_name = "SIZE", value_parser = size("file size"))]
    file_size: Option<u64>,
    /// Processes and threads [default: 256]
    #[arg(long, value_name = "N")]
    processes: Option<u64>,
    /// Bytes the script may write in all: working directory, /tmp, /dev/shm [default: 2GiB]
    #[arg(long, value_name = "SIZE", value_parser = size("quota"))]
    quota: Option<u64>,
    /// A data file (or directory) the script may read, at its absolute path; repeat
    /// for more. Nothing else of the host is visible in the jail.
    #[arg(long = "data", value_name = "PATH")]
    data: Vec<PathBuf>,
    /// Bytes kept of stdout and of stderr each [default: 20000]
    #[arg(long, value_name = "BYTES")]
    output_budget: Option<usize>,
    /// Print the run as one JSON object instead of its output.
    #[arg(long)]
    json: bool,
}

fn duration(what: &'static str) -> impl Fn(&str) -> Result<Duration, SandboxError> + Clone {
    move |s| parse_duration(what, s)
}

fn size(what: &'static str) -> impl Fn(&str) -> Result<u64, SandboxError> + Clone {
    move |s| parse_size(what, s)
}

pub(crate) fn run(a: SandboxRunArgs) -> Result<()> {
    let code = std::fs::read_to_string(&a.file)
        .with_context(|| format!("cannot read {}", a.file.display()))?;
    let venv = a.venv.unwrap_or_else(default_venv_dir);
    let python = Python::resolve(a.python.as_deref(), &venv).map_err(cli_error)?;
    let d = Limits::default();
    let limits = Limits {
        timeout: a.timeout.unwrap_or(d.timeout),
        address_space: a.memory.unwrap_or(d.address_space),
        cpu_seconds: a.cpu.map_or(d.cpu_seconds, |c| c.as_secs().max(1)),
        file_size: a.file_size.unwrap_or(d.file_size),
        processes: a.processes.unwrap_or(d.processes),
        quota: a.quota.unwrap_or(d.quota),
        output_budget: a.output_budget.unwrap_or(d.output_budget),
    };
    // The script keeps its name where it is a plain one.
    let stem = a.file.file_stem().map(|s| s.to_string_lossy().into_owned());
    let name = stem
        .filter(|s| {
            !s.starts_with('.')
                && s.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-'))
        })
        .unwrap_or_else(|| "script".into());
    let sandbox = Sandbox::new(python, limits).with_policy(Policy::from_env());
    let data: Vec<PathBuf> = a
        .data
        .iter()
        .map(|p| std::path::absolute(p).unwrap_or_else(|_| p.clone()))
        .collect();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let ex = rt
        .block_on(sandbox.run(&a.workdir, &name, &code, &data))
        .map_err(cli_error)?;
    if a.json {
        print_json(&ex)?;
    } else {
        print!("{}", ex.stdout);
        eprint!("{}", ex.stderr);
        eprintln!(
            "[{} in {:.2} s; network {}; filesystem {}{}]",
            match (ex.exit_code, ex.signal) {
                (Some(c), _) => format!("exit {c}"),
                (None, Some(s)) => format!("signal {s}"),
                (None, None) => "ended".into(),
            },
            ex.duration.as_secs_f64(),
            ex.network,
            ex.filesystem,
            ex.limit_hit
                .as_deref()
                .map(|l| format!("; limit hit: {l}"))
                .unwrap_or_default(),
        );
    }
    if !ex.success() {
        bail!("the script did not succeed");
    }
    Ok(())
}
