//! Sandboxed execution of generated Python.
//!
//! - [`python`]: which interpreter ([`Python::resolve`]: `--python`, else the venv of
//!   `lakestar setup python`, else `python3`) and what it can import.
//! - [`venv`]: `lakestar setup python` ([`setup_venv`]).
//! - [`exec`]: one run ([`Sandbox::run`]): its own working directory (the cwd, `HOME`
//!   and `TMPDIR`), a scrubbed environment, stdin from /dev/null, a wall-clock timeout
//!   that kills the whole process group, output cut to a budget.
//! - [`limits`]: rlimits on address space, CPU time, file size and processes.
//! - [`isolation`]: network off, and everything outside the working directory read-only,
//!   through an unprivileged user namespace where the kernel allows it.

mod error;
mod exec;
mod isolation;
mod limits;
mod output;
mod python;
mod venv;

pub use error::{InternalError, SandboxError, UserError};
pub use exec::Execution;
pub use isolation::Isolation;
pub use limits::{parse_duration, parse_size, Limits};
pub use python::{default_venv_dir, Python, PythonOrigin, DEFAULT_MODULES};
pub use venv::{setup_venv, setup_venv_with, DEFAULT_PACKAGES};

use std::path::Path;

/// Runs generated Python with one interpreter under one set of limits.
#[derive(Clone, Debug)]
pub struct Sandbox {
    python: Python,
    limits: Limits,
}

impl Sandbox {
    /// A sandbox running `python` under `limits`.
    pub fn new(python: Python, limits: Limits) -> Self {
        Sandbox { python, limits }
    }

    /// The interpreter.
    pub fn python(&self) -> &Python {
        &self.python
    }

    /// The limits of every run.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Whether network isolation works on this kernel (probed once, cached).
    pub fn network_isolation(&self) -> Isolation {
        let p = isolation::probe();
        p.network(p.level)
    }

    /// Whether runs see everything outside their working directory read-only (probed
    /// once, cached). When not, only the convention that code writes in its working
    /// directory protects the data files.
    pub fn filesystem_isolation(&self) -> Isolation {
        let p = isolation::probe();
        p.filesystem(p.level)
    }

    /// Write `code` to `workdir/NAME.py` (`workdir` is created; it is the cwd), run it,
    /// capture its output. A script that fails, times out or hits a limit is an
    /// [`Execution`], not an error; errors are for a run that could not be started.
    pub async fn run(
        &self,
        workdir: &Path,
        name: &str,
        code: &str,
    ) -> Result<Execution, SandboxError> {
        exec::run(&self.python, &self.limits, workdir, name, code).await
    }
}
