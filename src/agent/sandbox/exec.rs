//! Running one script: its environment and rlimits, in the jail (or, opted out,
//! unconfined), the wall-clock timeout that kills everything it started, the bounded
//! capture of its output.

use super::answers::{self, Answered};
use super::error::{InternalError, SandboxError};
use super::isolation::{Isolation, Policy, UNCONFINED};
use super::jail;
use super::limits::{self, Limits, Rlimits};
use super::output::Capture;
use super::python::{script_file_name, Python};
use serde::Serialize;
use serde_json::Value;
use std::ffi::{CString, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
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
    /// Whether the network was cut off (the jail), or why not.
    pub network: Isolation,
    /// Whether the file system was the jail's minimal root, or why not.
    pub filesystem: Isolation,
    /// The script that ran (in the working directory).
    pub script: PathBuf,
    /// What the script recorded with `answer(name, value)`, in the order of the calls
    /// (a name recorded twice is here twice; [`Execution::answered`] takes the last).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub answers: Vec<Answered>,
    /// Lines of the answers file that could not be read (not JSON, no string name, past
    /// the size cap).
    #[serde(skip_serializing_if = "is_zero")]
    pub answers_unreadable: usize,
}

impl Execution {
    /// Exited 0 within its limits.
    pub fn success(&self) -> bool {
        self.exit_code == Some(0) && !self.timed_out
    }

    /// The value last recorded under `name`, names compared without case and with
    /// `_`, `-`, `.` and spaces alike ("Mean_Fare" is "mean fare"); `None` when none
    /// was, or when the last record under it is an error (a value too large).
    pub fn answered(&self, name: &str) -> Option<&Value> {
        answers::last_answer(&self.answers, name)
    }
}

fn is_zero(n: &usize) -> bool {
    *n == 0
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

/// What one run is given besides its code.
pub(crate) struct RunSpec<'a> {
    pub(crate) python: &'a Python,
    pub(crate) limits: &'a Limits,
    pub(crate) policy: Policy,
    /// Directories of the Python runtime, visible read-only in the jail.
    pub(crate) runtime: &'a [PathBuf],
    /// The data files, visible read-only in the jail.
    pub(crate) data: &'a [PathBuf],
}

/// Runs a script as `python script.py` would but ends the process after Python's own
/// shutdown steps, before native extensions' teardown can abort a finished run (see the
/// file).
const LAUNCHER: &str = include_str!("launcher.py");

/// Write `code` to `workdir/NAME.py` and run it per `spec`.
pub(crate) async fn run(
    spec: &RunSpec<'_>,
    workdir: &Path,
    name: &str,
    code: &str,
) -> Result<Execution, SandboxError> {
    let file = script_file_name(name)?;
    let io = |what: &str, p: &Path| {
        let what = format!("{what} {}", p.display());
        move |e| SandboxError::io(what, e)
    };
    if spec.policy == Policy::Jail {
        // Before anything is written: a machine that cannot jail refuses at once.
        jail::probe().map_err(jail::unavailable)?;
    }
    tokio::fs::create_dir_all(workdir)
        .await
        .map_err(io("creating", workdir))?;
    // Absolute and free of symlinks: the jail mounts it at this path.
    let workdir = tokio::fs::canonicalize(workdir)
        .await
        .map_err(io("resolving", workdir))?;
    let tmp = workdir.join(TMP_DIR);
    tokio::fs::create_dir_all(&tmp)
        .await
        .map_err(io("creating", &tmp))?;
    let script = workdir.join(file);
    // A run under a name used before starts without the answers of the last one.
    let answers_file = answers::file_for(&script);
    match tokio::fs::symlink_metadata(&answers_file).await {
        Ok(m) if m.is_dir() => tokio::fs::remove_dir_all(&answers_file).await,
        Ok(_) => tokio::fs::remove_file(&answers_file).await,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
    .map_err(io("removing", &answers_file))?;
    tokio::fs::write(&script, code)
        .await
        .map_err(io("writing", &script))?;
    let mut ex = match spec.policy {
        Policy::Jail => run_jailed(spec, &workdir, script).await,
        Policy::Unconfined => run_unconfined(spec, &workdir, script).await,
    }?;
    let read = tokio::task::spawn_blocking(move || answers::read(&answers_file)).await;
    (ex.answers, ex.answers_unreadable) =
        read.map_err(|e| SandboxError::io("reading the answers", std::io::Error::other(e)))?;
    Ok(ex)
}

/// The parts of an [`Execution`] both runners compute alike.
struct Ended {
    status: Option<std::process::ExitStatus>,
    timed_out: bool,
    duration: Duration,
    stdout: Capture,
    stderr: Capture,
    notes: Vec<String>,
}

fn execution(spec: &RunSpec<'_>, e: Ended, script: PathBuf) -> Execution {
    let (stdout, stdout_bytes) = e.stdout.finish();
    let (mut stderr, stderr_bytes) = e.stderr.finish();
    for note in e.notes {
        stderr.push_str(&format!("\n[lakestar: {note}]\n"));
    }
    let exit_code = e.status.and_then(|s| s.code());
    let signal = e.status.and_then(|s| s.signal());
    let limit_hit = limits::limit_hit(spec.limits, e.timed_out, exit_code, signal, &stderr);
    let isolation = match spec.policy {
        Policy::Jail => Isolation::Isolated,
        Policy::Unconfined => Isolation::Unavailable(UNCONFINED.into()),
    };
    Execution {
        exit_code,
        signal,
        timed_out: e.timed_out,
        limit_hit,
        stdout,
        stderr,
        stdout_bytes,
        stderr_bytes,
        duration: e.duration,
        network: isolation.clone(),
        filesystem: isolation,
        script,
        answers: Vec::new(),
        answers_unreadable: 0,
    }
}

/// In the jail ([`jail`]): set up, copy in, run, copy out.
async fn run_jailed(
    spec: &RunSpec<'_>,
    workdir: &Path,
    script: PathBuf,
) -> Result<Execution, SandboxError> {
    let (uid, gid, _) = jail::sandbox_ids();
    let env = sandbox_env(spec.python, workdir)
        .into_iter()
        .map(|(k, v)| {
            let mut kv = k.into_vec();
            kv.push(b'=');
            kv.extend(v.into_vec());
            CString::new(kv).unwrap_or_default()
        })
        .collect();
    let jail_spec = jail::Spec {
        layout: jail::Layout {
            runtime: spec.runtime,
            data: spec.data,
            workdir,
            quota: spec.limits.quota,
            uid,
            gid,
        },
        program: Some((
            &spec.python.path,
            vec![
                CString::new("-c").unwrap_or_default(),
                CString::new(LAUNCHER).unwrap_or_default(),
                CString::new(script.as_os_str().as_bytes()).unwrap_or_default(),
            ],
        )),
        env,
        rlimits: Some(Rlimits::new(spec.limits, true)),
    };
    let start = Instant::now();
    let deadline = tokio::time::Instant::now() + spec.limits.timeout;
    let mut started = jail::start(&jail_spec)?;
    let mut guard = JailGuard(Some(started.pid));
    let (Some(out), Some(err)) = (started.stdout.take(), started.stderr.take()) else {
        let e = std::io::Error::other("the jail has no output pipes");
        return Err(SandboxError::io("capturing output", e));
    };
    let pipe = |fd| tokio::net::unix::pipe::Receiver::from_owned_fd(fd);
    let stdout = pipe(out).map_err(|e| SandboxError::io("reading output", e))?;
    let stderr = pipe(err).map_err(|e| SandboxError::io("reading output", e))?;
    let (done_tx, done_rx) = watch::channel(false);
    let wd = workdir.to_path_buf();
    let waiter = async {
        let r = jailed_wait(started, &wd, deadline, &guard).await;
        let _ = done_tx.send(true);
        r
    };
    let budget = spec.limits.output_budget;
    let (waited, (out, out_left), (err, err_left)) = tokio::join!(
        waiter,
        read_capped(stdout, budget, done_rx.clone()),
        read_capped(stderr, budget, done_rx),
    );
    let (status, timed_out, mut notes) = match waited {
        Ok(w) => {
            guard.disarm();
            w
        }
        Err(e) => return Err(e),
    };
    if out_left || err_left {
        notes.push("stopped reading output held open after the run".into());
    }
    let ended = Ended {
        status,
        timed_out,
        duration: start.elapsed(),
        stdout: out,
        stderr: err,
        notes,
    };
    Ok(execution(spec, ended, script))
}

/// Set the jail up, wait for the script, copy the files out. The script's wait status
/// (`None` when it never ran to an end), whether it timed out, notes for its stderr.
async fn jailed_wait(
    mut started: jail::Started,
    workdir: &Path,
    deadline: tokio::time::Instant,
    guard: &JailGuard,
) -> Result<(Option<std::process::ExitStatus>, bool, Vec<String>), SandboxError> {
    use std::process::ExitStatus;
    let failed = |why: String| -> SandboxError { InternalError::Jail { why }.into() };
    let joined =
        |e: tokio::task::JoinError| SandboxError::io("the jail's setup", std::io::Error::other(e));
    let wd = workdir.to_path_buf();
    let mut notes: Vec<String> = started
        .left_out
        .iter()
        .map(|l| format!("not visible in the jail: {l}"))
        .collect();
    let setup = tokio::task::spawn_blocking(move || {
        let r = started.setup(&wd);
        (started, r)
    });
    // A timed-out run was killed (its whole PID namespace) by SIGKILL.
    let killed = || Some(ExitStatus::from_raw(libc::SIGKILL));
    let mut started = match tokio::time::timeout_at(deadline, setup).await {
        Err(_) => {
            guard.kill();
            return Ok((killed(), true, notes));
        }
        Ok(joined_setup) => match joined_setup.map_err(joined)? {
            (s, Ok(())) => s,
            (_, Err(why)) => {
                guard.kill();
                return Err(failed(why));
            }
        },
    };
    let wait = tokio::task::spawn_blocking(move || {
        let m = started.read_msg();
        (started, m)
    });
    let (started, msg) = match tokio::time::timeout_at(deadline, wait).await {
        Err(_) => {
            guard.kill();
            return Ok((killed(), true, notes));
        }
        Ok(j) => j.map_err(joined)?,
    };
    let status = match msg.map_err(failed)? {
        Some(jail::Msg::Exited(raw)) => ExitStatus::from_raw(raw),
        Some(jail::Msg::InitDied(raw)) => ExitStatus::from_raw(raw),
        Some(jail::Msg::Failed(step, errno)) => {
            guard.kill();
            let e = std::io::Error::from_raw_os_error(errno);
            return Err(match step {
                jail::Step::Exec => SandboxError::io("starting the interpreter in the jail", e),
                _ => failed(started.describe_failure(step, errno)),
            });
        }
        other => {
            guard.kill();
            return Err(failed(format!(
                "the jail ended without a status ({other:?})"
            )));
        }
    };
    let wd = workdir.to_path_buf();
    let copied = tokio::task::spawn_blocking(move || {
        let r = started.copy_out(&wd);
        started.finish();
        r
    })
    .await
    .map_err(joined)?;
    match copied {
        Ok(skipped) if !skipped.is_empty() => notes.push(format!(
            "not copied back from the jail (links, sockets, FIFOs): {}",
            skipped.join(", ")
        )),
        Ok(_) => {}
        Err(e) => notes.push(format!("copying the working directory back failed: {e}")),
    }
    Ok((Some(status), false, notes))
}

/// Kills the jail (its outer process's group; init's death ends the rest) unless
/// disarmed; reaps the outer process in the background.
struct JailGuard(Option<libc::pid_t>);

impl JailGuard {
    fn kill(&self) {
        if let Some(pid) = self.0 {
            // SAFETY: our child's group; the child is reaped only by `Drop`/`finish`
            // after the last kill, so the id is still ours.
            unsafe { libc::killpg(pid, libc::SIGKILL) };
        }
    }

    fn disarm(&mut self) {
        self.0 = None;
    }
}

impl Drop for JailGuard {
    fn drop(&mut self) {
        if let Some(pid) = self.0 {
            self.kill();
            std::thread::spawn(move || jail::reap(pid));
        }
    }
}

/// Without isolation: a process group under the rlimits, killed at the timeout.
async fn run_unconfined(
    spec: &RunSpec<'_>,
    workdir: &Path,
    script: PathBuf,
) -> Result<Execution, SandboxError> {
    let python = spec.python;
    let env = sandbox_env(python, workdir);
    let rlimits = Rlimits::new(spec.limits, false);
    let mut cmd = Command::new(&python.path);
    cmd.args(["-c", LAUNCHER])
        .arg(&script)
        .current_dir(workdir)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    // SAFETY: the hook runs between fork and exec and makes system calls only.
    unsafe {
        cmd.pre_exec(move || rlimits.apply());
    }
    let what = || format!("starting {}", python.path.display());
    let mut child = cmd.spawn().map_err(|e| SandboxError::io(what(), e))?;
    let start = Instant::now();
    let deadline = tokio::time::Instant::now() + spec.limits.timeout;
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
    let budget = spec.limits.output_budget;
    let ((status, timed_out, duration), (out, out_left), (err, err_left)) = tokio::join!(
        waiter,
        read_capped(stdout, budget, done_rx.clone()),
        read_capped(stderr, budget, done_rx),
    );
    let status = status
        .map_err(|e| SandboxError::io(format!("waiting for {}", python.path.display()), e))?;
    let mut notes = Vec::new();
    if out_left || err_left {
        notes.push(
            "stopped reading output held open by processes that left the process group".into(),
        );
    }
    let ended = Ended {
        status: Some(status),
        timed_out,
        duration,
        stdout: out,
        stderr: err,
        notes,
    };
    Ok(execution(spec, ended, script))
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
    fn answered_is_the_last_record_under_a_loosely_equal_name() {
        let mut ex = Execution {
            exit_code: Some(0),
            signal: None,
            timed_out: false,
            limit_hit: None,
            stdout: String::new(),
            stderr: String::new(),
            stdout_bytes: 0,
            stderr_bytes: 0,
            duration: Duration::ZERO,
            network: Isolation::Isolated,
            filesystem: Isolation::Isolated,
            script: "/w/s.py".into(),
            answers: vec![
                Answered::new("Mean_Fare", 1.into()),
                Answered::new("count", 3.into()),
                Answered::new("mean.fare", 2.into()),
            ],
            answers_unreadable: 0,
        };
        assert_eq!(ex.answered("mean fare"), Some(&Value::from(2)));
        assert_eq!(ex.answered("COUNT"), Some(&Value::from(3)));
        assert_eq!(ex.answered("meanfare"), None);
        ex.answers.push(Answered {
            name: "count".into(),
            value: Value::Null,
            error: Some("value too large (2000000 bytes)".into()),
        });
        assert_eq!(ex.answered("count"), None);
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
