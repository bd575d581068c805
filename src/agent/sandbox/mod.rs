//! Sandboxed execution of generated Python.
//!
//! - [`python`]: which interpreter ([`Python::resolve`]: `--python`, else the venv of
//!   `lakestar setup python`, else `python3`) and what it can import.
//! - [`venv`]: `lakestar setup python` ([`setup_venv`]).
//! - [`exec`]: one run ([`Sandbox::run`]): its own working directory (the cwd, `HOME`
//!   and `TMPDIR`), a scrubbed environment, stdin from /dev/null, a wall-clock timeout
//!   that kills the whole process group, output cut to a budget.
//! - [`limits`]: rlimits on address space, CPU time, file size and processes; the
//!   quota on what a run writes.
//! - [`jail`]: the jail every run executes in (namespaces, minimal root, quota tmpfs).
//! - [`isolation`]: the policy (the jail, or the explicit unsafe opt-out).

mod error;
mod exec;
mod isolation;
mod jail;
mod limits;
mod output;
mod python;
mod venv;

pub use error::{InternalError, SandboxError, UserError};
pub use exec::Execution;
pub use isolation::{Isolation, Policy};
pub use limits::{parse_duration, parse_size, Limits};
pub use python::{default_venv_dir, Python, PythonOrigin, DEFAULT_MODULES};
pub use venv::{setup_venv, setup_venv_with, DEFAULT_PACKAGES};

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// Runs generated Python with one interpreter under one set of limits.
#[derive(Clone, Debug)]
pub struct Sandbox {
    python: Python,
    limits: Limits,
    policy: Policy,
    /// The interpreter's runtime directories, found once (one Python start).
    runtime: Arc<OnceLock<Vec<PathBuf>>>,
}

impl Sandbox {
    /// A sandbox running `python` under `limits`, in the jail.
    pub fn new(python: Python, limits: Limits) -> Self {
        Sandbox {
            python,
            limits,
            policy: Policy::Jail,
            runtime: Arc::default(),
        }
    }

    /// The same sandbox under `policy`.
    pub fn with_policy(mut self, policy: Policy) -> Self {
        self.policy = policy;
        self
    }

    /// The interpreter.
    pub fn python(&self) -> &Python {
        &self.python
    }

    /// The limits of every run.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// How runs are isolated.
    pub fn policy(&self) -> Policy {
        self.policy
    }

    /// Whether runs are isolated: under [`Policy::Jail`], `Err` when this machine
    /// cannot build the jail (probed once), naming what is missing and the opt-out.
    pub fn check(&self) -> Result<Isolation, SandboxError> {
        match self.policy {
            Policy::Jail => jail::probe()
                .map(|()| Isolation::Isolated)
                .map_err(jail::unavailable),
            Policy::Unconfined => Ok(Isolation::Unavailable(isolation::UNCONFINED.into())),
        }
    }

    /// Write `code` to `workdir/NAME.py` (`workdir` is created; it is the cwd), run it
    /// with `data` (absolute paths) readable, capture its output. A script that fails,
    /// times out or hits a limit is an [`Execution`], not an error; errors are for a
    /// run that could not be started (a machine that cannot jail it, among them).
    pub async fn run(
        &self,
        workdir: &Path,
        name: &str,
        code: &str,
        data: &[PathBuf],
    ) -> Result<Execution, SandboxError> {
        let runtime = self.runtime.get_or_init(|| self.python.runtime_dirs());
        let spec = exec::RunSpec {
            python: &self.python,
            limits: &self.limits,
            policy: self.policy,
            runtime,
            data,
        };
        exec::run(&spec, workdir, name, code).await
    }
}
