//! Errors of the sandbox, split as in the indexer: [`UserError`] is something the person
//! running lakestar can fix (no Python, no venv module, a bad limit), [`InternalError`] a
//! fault of the machine or of the caller (I/O on the working directory, a bad script name).
//! What the generated code does wrong is not an error: it is an [`super::Execution`].

use std::path::PathBuf;

/// Any error of the sandbox.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// Something the user can fix; the message says how.
    #[error(transparent)]
    User(#[from] UserError),
    /// A fault of the machine or of lakestar.
    #[error(transparent)]
    Internal(#[from] InternalError),
}

impl SandboxError {
    /// True when the user can fix it (exit code 2 at the CLI rather than 1).
    pub fn is_user_error(&self) -> bool {
        matches!(self, SandboxError::User(_))
    }

    /// An I/O error while doing `what`, as an internal error.
    pub(crate) fn io(what: impl Into<String>, source: std::io::Error) -> Self {
        InternalError::Io {
            what: what.into(),
            source,
        }
        .into()
    }
}

/// Errors the person running lakestar can fix.
#[derive(Debug, thiserror::Error)]
pub enum UserError {
    /// `--python PATH` names nothing.
    #[error("--python {}: no such file; pass the path of a Python 3 interpreter", path.display())]
    PythonMissing {
        /// The path given.
        path: PathBuf,
    },
    /// `--python NAME`, a bare name, is not on PATH.
    #[error("--python {}: not found on PATH; pass the path of a Python 3 interpreter or a name on PATH (python3)", name.display())]
    PythonNotOnPath {
        /// The name given.
        name: PathBuf,
    },
    /// An interpreter that does not run, or is not Python 3.
    #[error("{} does not run as Python 3 ({reason}); {hint}", path.display())]
    PythonBroken {
        /// The interpreter.
        path: PathBuf,
        /// What went wrong, with the end of its stderr.
        reason: String,
        /// What to do about it.
        hint: &'static str,
    },
    /// Neither a venv nor `python3` on PATH.
    #[error("no Python found: no venv at {} and no `python3` on PATH; install python3 and run `lakestar setup python`, or pass --python PATH", venv.display())]
    NoPython {
        /// Where the venv was looked for.
        venv: PathBuf,
    },
    /// A venv whose setup started and never finished, or whose interpreter is gone.
    #[error("the venv at {} is incomplete or broken (an interrupted `lakestar setup python`, or its base Python removed?); run `lakestar setup python` again, or pass --python PATH", venv.display())]
    VenvIncomplete {
        /// The venv directory.
        venv: PathBuf,
    },
    /// A directory given as the venv that is not one.
    #[error("{} exists and is not a Python venv (no bin/python, no pyvenv.cfg); pass another --venv DIR (or LAKESTAR_VENV), or remove it", dir.display())]
    NotAVenv {
        /// The directory.
        dir: PathBuf,
    },
    /// The base interpreter cannot create venvs.
    #[error("{} cannot create a venv ({reason}); install the venv module (Debian/Ubuntu: `apt install python3-venv`), or pass --python BASE with one", python.display())]
    NoVenvModule {
        /// The base interpreter.
        python: PathBuf,
        /// What failed.
        reason: String,
    },
    /// pip failed.
    #[error("pip could not install {packages} into {} ({status}); check access to PyPI and the package names, then run `lakestar setup python` again", venv.display())]
    PipFailed {
        /// The venv directory.
        venv: PathBuf,
        /// The packages asked for, space-separated.
        packages: String,
        /// How pip ended.
        status: String,
    },
    /// The kernel refuses what the jail needs (namespaces, mounts).
    #[error("generated code cannot be isolated here: {why}. The jail needs unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, user.max_user_namespaces > 0, no AppArmor or seccomp policy forbidding them) with mount, PID, network, IPC and UTS namespaces; enable them, or run generated code without isolation at your own risk with --unsafe-no-isolation (LAKESTAR_UNSAFE_NO_ISOLATION=1)")]
    IsolationUnavailable {
        /// The step that failed and its errno.
        why: String,
    },
    /// A limit that does not parse.
    #[error("bad {what} {value:?}: {reason}; {example}")]
    BadLimit {
        /// Which limit.
        what: &'static str,
        /// The text given.
        value: String,
        /// Why it was refused.
        reason: String,
        /// A value that would be accepted.
        example: &'static str,
    },
}

/// Faults of the machine or of the caller.
#[derive(Debug, thiserror::Error)]
pub enum InternalError {
    /// I/O on the working directory, the venv or a pipe failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done, with the path.
        what: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The jail of one run could not be built although the probe's could.
    #[error("the sandbox for this run could not be built: {why}")]
    Jail {
        /// The step that failed and its errno.
        why: String,
    },
    /// A script name that is not a plain file name.
    #[error("bad script name {0:?}: use letters, digits, `_`, `-` and `.` only")]
    BadScriptName(String),
}
