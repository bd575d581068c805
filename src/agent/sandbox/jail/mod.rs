//! The jail generated code runs in: an unprivileged uid in new user, mount, PID,
//! network, IPC and UTS namespaces, on a minimal root, with one size-limited tmpfs for
//! everything it writes. See docs/threat-model.md.
//!
//! Written by hand on `libc` rather than by running bubblewrap: bubblewrap is not on
//! every machine (nor on this project's CI), it cannot copy the working directory back
//! out of a quota tmpfs, and running it as root needs its setuid mode. The parent side
//! is here; the forked processes are in [`child`]; the root's layout in [`plan`].

mod child;
mod copy;
mod plan;
mod proto;

use super::error::{SandboxError, UserError};
use super::limits::Rlimits;
use child::{Child, Fds};
pub(crate) use plan::Layout;
use proto::MSG_LEN;
pub(crate) use proto::{Msg, Step};
use std::ffi::CString;
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The uid and gid code runs as when lakestar runs as root (`nobody`).
pub(crate) const ROOT_SANDBOX_ID: u32 = 65534;
/// Top-level entries of the working directory not copied back (the script's TMPDIR).
const NOT_COPIED_BACK: &[&str] = &[".tmp"];

/// A jail about to run one program.
pub(crate) struct Spec<'a> {
    pub(crate) layout: Layout<'a>,
    /// The interpreter and its arguments; `None`: run nothing (the probe).
    pub(crate) program: Option<(&'a Path, Vec<CString>)>,
    pub(crate) env: Vec<CString>,
    pub(crate) rlimits: Option<Rlimits>,
}

/// Who the script runs as: `(uid, gid)` inside, and whether we switch to it (as root).
pub(crate) fn sandbox_ids() -> (u32, u32, bool) {
    // SAFETY: getters without preconditions.
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    if uid == 0 {
        (ROOT_SANDBOX_ID, ROOT_SANDBOX_ID, true)
    } else {
        (uid, gid, false)
    }
}

/// A started jail: our child's pid and the parent's ends of the pipes.
pub(crate) struct Started {
    pub(crate) pid: libc::pid_t,
    pub(crate) stdout: Option<OwnedFd>,
    pub(crate) stderr: Option<OwnedFd>,
    report: File,
    go: Option<File>,
    alive: Option<File>,
    described: Vec<String>,
    pub(crate) left_out: Vec<String>,
}

fn pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 with a valid array of two ints.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just created and are owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

fn cstr(p: &Path) -> CString {
    CString::new(p.as_os_str().as_bytes()).unwrap_or_default()
}

/// Fork the jail's outer process for `spec`. Nothing runs until [`Started::setup`].
pub(crate) fn start(spec: &Spec) -> Result<Started, SandboxError> {
    let io = |what: &'static str| move |e| SandboxError::io(what, e);
    let plan = plan::plan(&spec.layout);
    let (out_r, out_w) = pipe().map_err(io("creating the output pipe"))?;
    let (err_r, err_w) = pipe().map_err(io("creating the error pipe"))?;
    let (rep_r, rep_w) = pipe().map_err(io("creating the report pipe"))?;
    let (go_r, go_w) = pipe().map_err(io("creating the go pipe"))?;
    let (alive_r, alive_w) = pipe().map_err(io("creating the liveness pipe"))?;
    let (uid, gid, switch) = sandbox_ids();
    let (program, argv) = match &spec.program {
        Some((p, args)) => {
            let mut argv = vec![cstr(p)];
            argv.extend(args.iter().cloned());
            (Some(cstr(p)), argv)
        }
        None => (None, Vec::new()),
    };
    // The child's fixed pointer arrays (no allocation after the fork).
    if argv.len() >= 8 || spec.env.len() >= 32 {
        return Err(SandboxError::io(
            "preparing the jail",
            std::io::Error::other("too many arguments or environment variables"),
        ));
    }
    let mut keep = [
        out_w.as_raw_fd(),
        err_w.as_raw_fd(),
        rep_w.as_raw_fd(),
        go_r.as_raw_fd(),
        alive_r.as_raw_fd(),
    ];
    keep.sort_unstable();
    let child = Child {
        flags: libc::CLONE_NEWUSER
            | libc::CLONE_NEWNS
            | libc::CLONE_NEWPID
            | libc::CLONE_NEWNET
            | libc::CLONE_NEWIPC
            | libc::CLONE_NEWUTS,
        ops: plan.ops,
        drop_to: switch.then_some((uid, gid)),
        workdir: cstr(spec.layout.workdir),
        program,
        argv,
        envp: spec.env.clone(),
        rlimits: spec.rlimits,
        fds: Fds {
            stdout: out_w.as_raw_fd(),
            stderr: err_w.as_raw_fd(),
            report: rep_w.as_raw_fd(),
            go: go_r.as_raw_fd(),
            alive: alive_r.as_raw_fd(),
            keep,
        },
    };
    // SAFETY: the child runs `Child::outer`, which makes system calls only on data
    // prepared above, and never returns.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(SandboxError::io("fork", std::io::Error::last_os_error()));
    }
    if pid == 0 {
        child.outer();
    }
    drop((out_w, err_w, rep_w, go_r, alive_r));
    Ok(Started {
        pid,
        stdout: Some(out_r),
        stderr: Some(err_r),
        report: File::from(rep_r),
        go: Some(File::from(go_w)),
        alive: Some(File::from(alive_w)),
        described: plan.described,
        left_out: plan.left_out,
    })
}

/// Why a jail could not be set up, in words.
fn failed(step: Step, errno: i32, described: &[String]) -> String {
    let what = step.describe(&|i| {
        described
            .get(usize::from(i))
            .cloned()
            .unwrap_or_else(|| format!("step {i} of the root"))
    });
    format!(
        "{what} failed: {}",
        std::io::Error::from_raw_os_error(errno)
    )
}

impl Started {
    /// The jail's root as we see it.
    fn root(&self) -> PathBuf {
        PathBuf::from(format!("/proc/{}/root", self.pid))
    }

    /// A failed step in words.
    pub(crate) fn describe_failure(&self, step: Step, errno: i32) -> String {
        failed(step, errno, &self.described)
    }

    /// Blocking: the next message of the jail; `None` at EOF (every process of it
    /// gone).
    pub(crate) fn read_msg(&mut self) -> Result<Option<Msg>, String> {
        let mut b = [0u8; MSG_LEN];
        match self.report.read_exact(&mut b) {
            Ok(()) => Msg::decode(&b)
                .map(Some)
                .ok_or_else(|| "a garbled report".to_string()),
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Ok(None),
            Err(e) => Err(format!("reading the jail's report: {e}")),
        }
    }

    fn expect(&mut self, want: Msg) -> Result<(), String> {
        match self.read_msg()? {
            Some(m) if m == want => Ok(()),
            Some(Msg::Failed(step, errno)) => Err(failed(step, errno, &self.described)),
            Some(other) => Err(format!("the jail said {other:?} instead of {want:?}")),
            None => Err("the jail's process ended during setup".into()),
        }
    }

    fn go(&mut self) -> Result<(), String> {
        let go = self.go.as_mut().ok_or("the jail was already started")?;
        go.write_all(b"g")
            .map_err(|e| format!("starting the jail: {e}"))
    }

    /// Blocking: write the uid/gid maps, let init build the root, copy `workdir`'s
    /// files in, and let the script start. `Err` says which step failed.
    pub(crate) fn setup(&mut self, workdir: &Path) -> Result<(), String> {
        self.expect(Msg::Unshared)?;
        let (uid, gid, switch) = sandbox_ids();
        let proc = PathBuf::from(format!("/proc/{}", self.pid));
        let write = |name: &str, text: &str| {
            std::fs::write(proc.join(name), text)
                .map_err(|e| format!("writing /proc/PID/{name} ({text:?}): {e}"))
        };
        if switch {
            // Root inside is root outside, for init to read a runtime under /root;
            // the script runs as the second line's uid, with no capability.
            let map = format!("0 0 1\n{uid} {uid} 1\n");
            write("uid_map", &map)?;
            write("gid_map", &format!("0 0 1\n{gid} {gid} 1\n"))?;
        } else {
            write("setgroups", "deny")?;
            write("uid_map", &format!("{uid} {uid} 1\n"))?;
            write("gid_map", &format!("{gid} {gid} 1\n"))?;
        }
        self.go()?;
        self.expect(Msg::Ready)?;
        if !workdir.as_os_str().is_empty() {
            let inside = self
                .root()
                .join(workdir.strip_prefix("/").unwrap_or(workdir));
            copy::copy_tree(workdir, &inside, switch.then_some((uid, gid)), &[])
                .map_err(|e| format!("copying the working directory in: {e}"))?;
        }
        self.go()?;
        self.go = None;
        Ok(())
    }

    /// Blocking: after [`Msg::Exited`], copy the working directory's files back out.
    pub(crate) fn copy_out(&self, workdir: &Path) -> std::io::Result<Vec<String>> {
        let inside = self
            .root()
            .join(workdir.strip_prefix("/").unwrap_or(workdir));
        copy::copy_tree(&inside, workdir, None, NOT_COPIED_BACK).map(|c| c.skipped)
    }

    /// Let the outer process exit and reap it (blocking, briefly).
    pub(crate) fn finish(mut self) {
        self.alive = None;
        reap(self.pid);
    }
}

/// Wait for our child `pid`.
pub(crate) fn reap(pid: libc::pid_t) {
    let mut status = 0;
    // SAFETY: waiting for our own child.
    while unsafe { libc::waitpid(pid, &mut status, 0) } < 0
        && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted
    {}
}

/// Whether a jail can be built here, probed once (a jail that runs nothing); `Err`
/// names the kernel feature that is missing.
pub(crate) fn probe() -> Result<(), String> {
    static PROBE: OnceLock<Result<(), String>> = OnceLock::new();
    PROBE
        .get_or_init(|| {
            // Only a mount point inside the jail: nothing is written there.
            let workdir = std::env::temp_dir()
                .canonicalize()
                .map_err(|e| format!("resolving the temporary directory: {e}"))?;
            let (uid, gid, _) = sandbox_ids();
            let spec = Spec {
                layout: Layout {
                    runtime: &[],
                    data: &[],
                    workdir: &workdir,
                    quota: 1 << 20,
                    uid,
                    gid,
                },
                program: None,
                env: Vec::new(),
                rlimits: None,
            };
            let mut started = start(&spec).map_err(|e| e.to_string())?;
            let pid = started.pid;
            let outcome = started
                .setup(Path::new(""))
                .and_then(|()| match started.read_msg()? {
                    Some(Msg::Exited(0)) => Ok(()),
                    Some(Msg::Failed(step, errno)) => Err(failed(step, errno, &started.described)),
                    other => Err(format!("the probe jail ended with {other:?}")),
                });
            if outcome.is_err() {
                // SAFETY: killing our own child's process group.
                unsafe { libc::killpg(pid, libc::SIGKILL) };
            }
            started.finish();
            outcome
        })
        .clone()
}

/// The error when the jail cannot be built.
pub(crate) fn unavailable(why: String) -> SandboxError {
    UserError::IsolationUnavailable { why }.into()
}
