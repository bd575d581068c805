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
//! - [`answers`]: what a script records with `answer(name, value)`.
//!
//! # The answer API
//!
//! Every script runs under a launcher (`launcher.py`) that gives it a builtin
//! `answer(name, value)`, also importable as `from lakestar import answer`. Each call
//! appends one line `{"name": NAME, "value": VALUE}` to `NAME.answers.jsonl` beside the
//! script `NAME.py`, written at once, so a script that fails later keeps what it
//! answered; it returns `value` unchanged and never raises. [`Sandbox::run`] removes
//! that file before the run and reads it after into [`Execution::answers`] (8 MiB at
//! most; lines that are not a record are counted in
//! [`Execution::answers_unreadable`]); [`Execution::answered`] gives the last value
//! under a name. In the jail the file comes back with the working directory, so a run
//! killed at the timeout there has none.
//!
//! Values as written (the name as text, 1000 characters at most):
//! - `None`, `bool`, `str`, `int` as JSON; an `int` beyond 64 bits as its decimal text.
//! - `float` at full precision (the shortest text that reads back to the same double;
//!   read back exactly); NaN and the infinities as `"nan"`, `"inf"`, `"-inf"`.
//! - numpy scalars and arrays as their `.tolist()` (numbers, nested lists).
//! - pandas `Series` as an object of index (as text) to value; `DataFrame` as
//!   `{"columns": [...], "index": [...], "rows": [[...], ...]}` of its first 1000 rows,
//!   with `"truncated": true` and `"total_rows"` when cut; an `Index` as a list.
//! - `list`, `tuple`, `set` as lists; `dict` as an object, keys as text; nested values
//!   alike (64 levels at most).
//! - Anything else (`Decimal`, dates, `Timestamp`…) as its `str()`; so is a value
//!   whose conversion fails.
//!
//! A line is 1 MiB at most: a `DataFrame` is cut to fewer rows to fit; anything else
//! larger is recorded as `{"name": NAME, "error": "value too large (N bytes)"}`
//! ([`Answered::error`]), a collection of more items than could fit without being
//! converted first (`(N items, over 1048576 bytes)`).

mod answers;
mod error;
mod exec;
mod isolation;
mod jail;
mod limits;
mod output;
mod python;
mod venv;

pub use answers::{last_answer, name_key, Answered};
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
