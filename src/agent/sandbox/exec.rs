//! Running one script: the child's environment, namespaces and rlimits, the wall-clock
//! timeout that kills its whole process group, and the bounded capture of its output.

use super::error::SandboxError;
use super::isolation::{self, Enter, Isolation, Level};
use super::limits::{self, Limits, Rlimits};
use super::output::Capture;
use super::python::{script_file_name, Python};
use serde::Serialize;
use std::ffi::OsString;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Command;
use tokio::sync::watch;

/// The outcome of one run.
#[derive(Clone, Debug, Serialize)]
pub struct Execution {
    /// Exit code, when the script exited.
    pub exit_code: Option<i32>,
    /// The signal that ended it, when one did.
    pub signal: Option<i32>,
    /// Killed at the wall-clock timeout.
    pub timed_out: bool,
    /// The limit the run most likely hit ("timeout 120 s", "memory (address space 8.0
    /// GiB)", "cpu time (600 s)", "file size (1.0 GiB)"…); best effort.
    pub limit_hit: Option<String>,
    /// Standard output, cut to the budget (head and tail).
    pub stdout: String,
    /// Standard error, cut to the budget (head and tail).
    pub stderr: String,
    /// Full size of the standard output in bytes.
    pub stdout_bytes: u64,
    /// Full size of the standard error in bytes.
    pub stderr_bytes: u64,
    /// Wall-clock time until the script's process ended (seconds in JSON).
    #[serde(serialize_with = "seconds")]
    pub duration: Duration,
    /// Whether the network was cut off, or why not.
    pub network: Isolation,
    /// Whether everything outside the working directory was read-only, or why not.
    pub filesystem: Isolation,
    /// The script that ran (in the working directory).
    pub script: PathBuf,
}

impl Execution {
    /// Exited 0 within its limits.
    pub fn success(&self) -> bool {
        self.exit_code == Some(0) && !self.timed_out
    }
}

fn seconds<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

/// Directories searched for programs after the interpreter's own.
const SAFE_PATH: &str = "/usr/local/bin:/usr/bin:/bin";
/// The temporary directory inside the working directory.
const TMP_DIR: &str = ".tmp";
/// How long output is still read after the process group was killed: only processes
/// that left the group can still hold the pipes.
const DRAIN_GRACE: Duration = Duration::from_secs(2);

/// The whole environment of a run: nothing inherited, so no API key or token of ours
/// reaches generated code.
pub(crate) fn sandbox_env(python: &Python, workdir: &Path) -> Vec<(OsString, OsString)> {
    // The venv's scripts and the interpreter's directory first, so that `python` and
    // `pip` in a subprocess are this interpreter's.
    let venv = python.venv();
    let mut dirs: Vec<PathBuf> = venv.iter().map(|v| v.join("bin")).collect();
    if let Some(d) = python
        .path
        .parent()
        .filter(|d| !dirs.iter().any(|x| x == d))
    {
        dirs.push(d.to_path_buf());
    }
    let mut path = OsString::new();
    for dir in dirs {
        path.push(dir);
        path.push(":");
    }
    path.push(SAFE_PATH);
    let mut env: Vec<(OsString, OsString)> = vec![
        ("PATH".into(), path),
        ("HOME".into(), workdir.into()),
        ("TMPDIR".into(), workdir.join(TMP_DIR).into()),
        ("LANG".into(), "C.UTF-8".into()),
        ("LC_ALL".into(), "C.UTF-8".into()),
        ("MPLBACKEND".into(), "Agg".into()),
        ("PYTHONUNBUFFERED".into(), "1".into()),
        ("PYTHONDONTWRITEBYTECODE".into(), "1".into()),
    ];
    if let Some(v) = venv {
        env.push(("VIRTUAL_ENV".into(), v.into()));
    }
    env
}

/// Write `code` to `workdir/NAME.py` and run it under `limits`.
pub(crate) async fn run(
    python: &Python,
    limits: &Limits,
    workdir: &Path,
    name: &str,
    code: &str,
) -> Result<Execution, SandboxError> {
    let file = script_file_name(name)?;
    let io = |what: &str, p: &Path| {
        let what = format!("{what} {}", p.display());
        move |e| SandboxError::io(what, e)
    };
    tokio::fs::create_dir_all(workdir)
        .await
        .map_err(io("creating", workdir))?;
    // Absolute and free of symlinks: it is bind-mounted onto itself.
    let workdir = tokio::fs::canonicalize(workdir)
        .await
        .map_err(io("resolving", workdir))?;
    let tmp = workdir.join(TMP_DIR);
    tokio::fs::create_dir_all(&tmp)
        .await
        .map_err(io("creating", &tmp))?;
    let script = workdir.join(file);
    tokio::fs::write(&script, code)
        .await
        .map_err(io("writing", &script))?;

    let probe = isolation::probe();
    let env = sandbox_env(python, &workdir);
    let mut level = probe.level;
    let mut fallback: Option<String> = None;
    let mut child = loop {
        let enter =
            Enter::new(level, &workdir).map_err(io("preparing namespaces for", &workdir))?;
        let rlimits = Rlimits::new(limits, level != Level::Off);
        let mut cmd = Command::new(&python.path);
        cmd.arg(&script)
            .current_dir(&workdir)
            .env_clear()
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        // SAFETY: the hook runs between fork and exec and makes system calls only, on
        // data prepared before the fork (see Enter::enter and Rlimits::apply).
        unsafe {
            cmd.pre_exec(move || {
                enter.enter_io()?;
                rlimits.apply()
            });
        }
        match cmd.spawn() {
            Ok(child) => break child,
            Err(e) => match level.weaker() {
                // The probe said this level works, yet it failed here (a working
                // directory on a file system that refuses bind mounts…): try with less.
                // Not for ENOENT: that is the interpreter missing, not the namespaces.
                Some(weaker) if e.raw_os_error() != Some(libc::ENOENT) => {
                    tracing::warn!(
                        "sandbox: {level:?} isolation failed for this run ({e}), trying {weaker:?}"
                    );
                    fallback = Some(format!("{level:?} isolation failed for this run: {e}"));
                    level = weaker;
                }
                _ => {
                    let what = format!("starting {}", python.path.display());
                    return Err(SandboxError::io(what, e));
                }
            },
        }
    };
    let start = Instant::now();
    let deadline = tokio::time::Instant::now() + limits.timeout;
    let mut group = GroupKill(child.id().map(|pid| pid as libc::pid_t));
    let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
        let e = std::io::Error::other("the child has no stdout or stderr pipe");
        return Err(SandboxError::io("capturing output", e));
    };
    let (done_tx, done_rx) = watch::channel(false);
    let waiter = async move {
        let (status, timed_out) = match tokio::time::timeout_at(deadline, child.wait()).await {
            Ok(status) => (status, false),
            Err(_) => {
                group.kill();
                (child.wait().await, true)
            }
        };
        let duration = start.elapsed();
        // Children the script left running die with it.
        group.kill();
        group.disarm();
        let _ = done_tx.send(true);
        (status, timed_out, duration)
    };
    let budget = limits.output_budget;
    let ((status, timed_out, duration), (out, out_left), (err, err_left)) = tokio::join!(
        waiter,
        read_capped(stdout, budget, done_rx.clone()),
        read_capped(stderr, budget, done_rx),
    );
    let status = status.map_err(io("waiting for", &python.path))?;
    let (stdout, stdout_bytes) = out.finish();
    let (mut stderr, stderr_bytes) = err.finish();
    if out_left || err_left {
        stderr.push_str("\n[lakestar: stopped reading output held open by processes that left the process group]\n");
    }
    let (exit_code, signal) = (status.code(), status.signal());
    let limit_hit = limits::limit_hit(limits, timed_out, exit_code, signal, &stderr);
    let unavailable = |iso: Isolation| match (&fallback, iso) {
        (Some(why), Isolation::Unavailable(_)) => Isolation::Unavailable(why.clone()),
        (_, iso) => iso,
    };
    Ok(Execution {
        exit_code,
        signal,
        timed_out,
        limit_hit,
        stdout,
        stderr,
        stdout_bytes,
        stderr_bytes,
        duration,
        network: unavailable(probe.network(level)),
        filesystem: unavailable(probe.filesystem(level)),
        script,
    })
}

/// Kills the process group when told to and when dropped (a cancelled run leaves no
/// process behind).
struct GroupKill(Option<libc::pid_t>);

impl GroupKill {
    fn kill(&self) {
        if let Some(pgid) = self.0 {
            // SAFETY: killpg on the group we created; the leader is not reaped before
            // the first call, and later calls come right after reaping, when only the
            // group's survivors still hold its id.
            unsafe { libc::killpg(pgid, libc::SIGKILL) };
        }
    }
}

impl GroupKill {
    /// Kill no more: from here on the group id may be reused.
    fn disarm(&mut self) {
        self.0 = None;
    }
}

impl Drop for GroupKill {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Read `r` to its end into a capture of `budget` bytes; once `done` fires, read for
/// [`DRAIN_GRACE`] more at most. True in second place when it gave up before the end.
async fn read_capped<R: AsyncRead + Unpin>(
    mut r: R,
    budget: usize,
    mut done: watch::Receiver<bool>,
) -> (Capture, bool) {
    let mut cap = Capture::new(budget);
    let mut buf = vec![0u8; 64 << 10];
    let mut stop: Option<tokio::time::Instant> = None;
    loop {
        let give_up = async {
            match stop {
                Some(t) => tokio::time::sleep_until(t).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            n = r.read(&mut buf) => match n {
                Ok(0) | Err(_) => return (cap, false),
                Ok(n) => cap.push(&buf[..n]),
            },
            _ = done.changed(), if stop.is_none() => {
                stop = Some(tokio::time::Instant::now() + DRAIN_GRACE);
            }
            () = give_up => return (cap, true),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::sandbox::PythonOrigin;

    fn keys(env: &[(OsString, OsString)]) -> Vec<String> {
        let mut k: Vec<String> = env
            .iter()
            .map(|(k, _)| k.to_string_lossy().into_owned())
            .collect();
        k.sort();
        k
    }

    fn get<'a>(env: &'a [(OsString, OsString)], key: &str) -> &'a str {
        env.iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.to_str().unwrap())
            .unwrap()
    }

    #[test]
    fn the_environment_is_only_what_the_sandbox_sets() {
        let py = Python {
            path: "/opt/py/bin/python3".into(),
            origin: PythonOrigin::System,
        };
        let env = sandbox_env(&py, Path::new("/w/run1"));
        assert_eq!(
            keys(&env),
            [
                "HOME",
                "LANG",
                "LC_ALL",
                "MPLBACKEND",
                "PATH",
                "PYTHONDONTWRITEBYTECODE",
                "PYTHONUNBUFFERED",
                "TMPDIR"
            ]
        );
        assert_eq!(get(&env, "HOME"), "/w/run1");
        assert_eq!(get(&env, "TMPDIR"), "/w/run1/.tmp");
        assert_eq!(get(&env, "MPLBACKEND"), "Agg");
        assert_eq!(
            get(&env, "PATH"),
            "/opt/py/bin:/usr/local/bin:/usr/bin:/bin"
        );
    }

    #[test]
    fn a_venv_python_gets_virtual_env_and_its_bin_first() {
        let py = Python {
            path: "/v/bin/python".into(),
            origin: PythonOrigin::Venv("/v".into()),
        };
        let env = sandbox_env(&py, Path::new("/w"));
        assert_eq!(get(&env, "VIRTUAL_ENV"), "/v");
        assert_eq!(get(&env, "PATH"), "/v/bin:/usr/local/bin:/usr/bin:/bin");
        assert_eq!(env.len(), 9);
    }
}
