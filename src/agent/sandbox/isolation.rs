//! Network and filesystem isolation through an unprivileged user namespace.
//!
//! In the child, between fork and exec: a new user namespace (so that no privilege is
//! needed), a new network namespace (only a loopback device, down: no connection goes
//! anywhere) and a new mount namespace in which every mount is made read-only except the
//! run's working directory (and /dev/shm, which multiprocessing needs). The uid inside
//! is not 0, so the exec'd Python holds no capability and cannot undo any of it.
//!
//! Kernels or containers may forbid some of this. Availability is probed once, in a
//! forked child doing exactly what a run does; a run then uses the most it can and
//! reports what it could not in [`super::Execution`].

use serde::Serialize;
use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::OnceLock;

/// Whether a protection is in force for a run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum Isolation {
    /// In force.
    Isolated,
    /// Not in force, and why (for the run log).
    Unavailable(String),
}

impl Isolation {
    /// True when in force.
    pub fn is_isolated(&self) -> bool {
        matches!(self, Isolation::Isolated)
    }
}

impl std::fmt::Display for Isolation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Isolation::Isolated => f.write_str("isolated"),
            Isolation::Unavailable(why) => write!(f, "unavailable: {why}"),
        }
    }
}

/// How much isolation a run gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Level {
    /// User, network and mount namespaces; all read-only but the working directory.
    Full,
    /// User and network namespaces.
    Network,
    /// None.
    Off,
}

impl Level {
    /// The next weaker level.
    pub(crate) fn weaker(self) -> Option<Level> {
        match self {
            Level::Full => Some(Level::Network),
            Level::Network => Some(Level::Off),
            Level::Off => None,
        }
    }
}

/// What the probe found.
#[derive(Clone, Debug)]
pub(crate) struct Probe {
    /// The strongest level that works.
    pub(crate) level: Level,
    /// Why the network cannot be isolated, when it cannot.
    pub(crate) network_reason: Option<String>,
    /// Why the filesystem cannot be made read-only, when it cannot.
    pub(crate) filesystem_reason: Option<String>,
}

impl Probe {
    /// Network isolation at `level` (a run may fall below the probed level).
    pub(crate) fn network(&self, level: Level) -> Isolation {
        match (level, &self.network_reason) {
            (Level::Full | Level::Network, _) => Isolation::Isolated,
            (Level::Off, Some(why)) => Isolation::Unavailable(why.clone()),
            (Level::Off, None) => Isolation::Unavailable("namespace setup failed".into()),
        }
    }

    /// Filesystem protection at `level`.
    pub(crate) fn filesystem(&self, level: Level) -> Isolation {
        match (level, &self.filesystem_reason) {
            (Level::Full, _) => Isolation::Isolated,
            (_, Some(why)) => Isolation::Unavailable(why.clone()),
            (_, None) => Isolation::Unavailable("mount namespace setup failed".into()),
        }
    }
}

/// Probe once per process (the kernel's answer does not change while we run).
pub(crate) fn probe() -> &'static Probe {
    static PROBE: OnceLock<Probe> = OnceLock::new();
    PROBE.get_or_init(|| {
        let dir = std::env::temp_dir()
            .canonicalize()
            .unwrap_or_else(|_| "/".into());
        let full = try_in_child(Level::Full, &dir);
        let Err(fs_why) = full else {
            return Probe {
                level: Level::Full,
                network_reason: None,
                filesystem_reason: None,
            };
        };
        match try_in_child(Level::Network, &dir) {
            Ok(()) => Probe {
                level: Level::Network,
                network_reason: None,
                filesystem_reason: Some(format!(
                    "{fs_why}; data files are protected only by running in a separate working directory"
                )),
            },
            Err(net_why) => {
                let why = format!(
                    "{net_why}; unprivileged user namespaces are off here (sysctl \
                     kernel.unprivileged_userns_clone or user.max_user_namespaces, an AppArmor \
                     or seccomp policy): generated code can reach the network"
                );
                Probe {
                    level: Level::Off,
                    network_reason: Some(why.clone()),
                    filesystem_reason: Some(why),
                }
            }
        }
    })
}

/// One step of entering the namespaces, to say which failed.
#[derive(Clone, Copy, Debug)]
#[repr(i32)]
enum Step {
    Unshare = 1,
    Setgroups,
    UidMap,
    GidMap,
    PrivateMounts,
    BindWorkdir,
    ReadOnly,
    Writable,
    Chdir,
}

impl Step {
    const ALL: [Step; 9] = [
        Step::Unshare,
        Step::Setgroups,
        Step::UidMap,
        Step::GidMap,
        Step::PrivateMounts,
        Step::BindWorkdir,
        Step::ReadOnly,
        Step::Writable,
        Step::Chdir,
    ];

    fn describe(self) -> &'static str {
        match self {
            Step::Unshare => "unshare(user, network namespaces)",
            Step::Setgroups => "writing /proc/self/setgroups",
            Step::UidMap => "writing /proc/self/uid_map",
            Step::GidMap => "writing /proc/self/gid_map",
            Step::PrivateMounts => "making mounts private",
            Step::BindWorkdir => "bind-mounting the working directory",
            Step::ReadOnly => "mount_setattr(read-only, recursive) on /",
            Step::Writable => "making the working directory writable",
            Step::Chdir => "entering the working directory",
        }
    }
}

/// Everything the child needs to enter the namespaces, prepared before the fork so that
/// the child only makes system calls (async-signal-safe: no allocation, no locks).
#[derive(Debug)]
pub(crate) struct Enter {
    level: Level,
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
    workdir: CString,
    /// Mounts left writable: the working directory's bind mount, /dev/shm.
    writable: Vec<CString>,
}

impl Enter {
    /// Prepare entering `level` with `workdir` (absolute, symlinks resolved) writable.
    pub(crate) fn new(level: Level, workdir: &Path) -> io::Result<Enter> {
        let workdir = CString::new(workdir.as_os_str().as_bytes())?;
        let mut writable = vec![workdir.clone()];
        if is_mount_point(Path::new("/dev/shm"), Path::new("/dev")) {
            writable.push(CString::new("/dev/shm")?);
        }
        // SAFETY: geteuid/getegid have no preconditions.
        let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
        // Inside, never uid 0: a non-root uid keeps no capability across exec. Root is
        // seen as `nobody` (65534), others as themselves.
        let inside = |id: u32| if id == 0 { 65534 } else { id };
        Ok(Enter {
            level,
            uid_map: format!("{} {uid} 1\n", inside(uid)).into_bytes(),
            gid_map: format!("{} {gid} 1\n", inside(gid)).into_bytes(),
            workdir,
            writable,
        })
    }

    /// Enter the namespaces; the error names the failed step and its errno. Runs in the
    /// forked child: system calls on prepared data only.
    pub(crate) fn enter(&self) -> Result<(), (i32, i32)> {
        if self.level == Level::Off {
            return Ok(());
        }
        let fail = |step: Step| Err((step as i32, errno()));
        let mut flags = libc::CLONE_NEWUSER | libc::CLONE_NEWNET;
        if self.level == Level::Full {
            flags |= libc::CLONE_NEWNS;
        }
        // SAFETY (all blocks below): plain system calls with valid C strings and
        // structs that live for the whole call.
        if unsafe { libc::unshare(flags) } != 0 {
            return fail(Step::Unshare);
        }
        if write_file(c"/proc/self/setgroups", b"deny").is_err() {
            return fail(Step::Setgroups);
        }
        if write_file(c"/proc/self/uid_map", &self.uid_map).is_err() {
            return fail(Step::UidMap);
        }
        if write_file(c"/proc/self/gid_map", &self.gid_map).is_err() {
            return fail(Step::GidMap);
        }
        if self.level == Level::Network {
            return Ok(());
        }
        let null = std::ptr::null();
        let flags = libc::MS_REC | libc::MS_PRIVATE;
        if unsafe { libc::mount(null, c"/".as_ptr(), null, flags, null as _) } != 0 {
            return fail(Step::PrivateMounts);
        }
        let wd = self.workdir.as_ptr();
        let flags = libc::MS_BIND | libc::MS_REC;
        if unsafe { libc::mount(wd, wd, null, flags, null as _) } != 0 {
            return fail(Step::BindWorkdir);
        }
        let ro = mount_attr(libc::MOUNT_ATTR_RDONLY, 0);
        if mount_setattr(c"/".as_ptr(), libc::AT_RECURSIVE, &ro) != 0 {
            return fail(Step::ReadOnly);
        }
        let rw = mount_attr(0, libc::MOUNT_ATTR_RDONLY);
        for w in &self.writable {
            if mount_setattr(w.as_ptr(), 0, &rw) != 0 {
                return fail(Step::Writable);
            }
        }
        // The cwd was entered before the bind mount covered it: enter the mount.
        if unsafe { libc::chdir(wd) } != 0 {
            return fail(Step::Chdir);
        }
        Ok(())
    }

    /// [`Enter::enter`] for a `pre_exec` hook.
    pub(crate) fn enter_io(&self) -> io::Result<()> {
        self.enter()
            .map_err(|(_, errno)| io::Error::from_raw_os_error(errno))
    }
}

fn mount_attr(set: u64, clear: u64) -> libc::mount_attr {
    libc::mount_attr {
        attr_set: set,
        attr_clr: clear,
        propagation: 0,
        userns_fd: 0,
    }
}

/// mount_setattr(2), which libc has no wrapper for.
fn mount_setattr(path: *const libc::c_char, flags: libc::c_int, attr: &libc::mount_attr) -> i64 {
    // SAFETY: `path` is a valid C string and `attr` a valid struct of the size given.
    unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            path,
            flags as libc::c_uint,
            attr as *const libc::mount_attr,
            std::mem::size_of::<libc::mount_attr>(),
        )
    }
}

fn errno() -> i32 {
    io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// Write `data` to `path` in one `write`, as /proc's map files require.
fn write_file(path: &std::ffi::CStr, data: &[u8]) -> Result<(), ()> {
    // SAFETY: open/write/close on a valid C string and buffer.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(());
        }
        let n = libc::write(fd, data.as_ptr().cast(), data.len());
        libc::close(fd);
        if n == data.len() as isize {
            Ok(())
        } else {
            Err(())
        }
    }
}

/// Whether `path` is on another filesystem than `parent` (a mount of its own).
fn is_mount_point(path: &Path, parent: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(path), std::fs::metadata(parent)) {
        (Ok(a), Ok(b)) => a.is_dir() && a.dev() != b.dev(),
        _ => false,
    }
}

/// Enter `level` in a forked child that exits at once; `Err` says which step failed.
fn try_in_child(level: Level, dir: &Path) -> Result<(), String> {
    let enter = Enter::new(level, dir).map_err(|e| format!("preparing the namespaces: {e}"))?;
    let mut fds = [0; 2];
    // SAFETY: pipe2 with a valid array of two ints.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(format!("pipe: {}", io::Error::last_os_error()));
    }
    let [read_fd, write_fd] = fds;
    // SAFETY: the child makes system calls only (Enter::enter, write, _exit), which is
    // what is allowed after fork in a multi-threaded process.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        let (step, errno) = match enter.enter() {
            Ok(()) => (0, 0),
            Err(e) => e,
        };
        let mut msg = [0u8; 8];
        msg[..4].copy_from_slice(&step.to_ne_bytes());
        msg[4..].copy_from_slice(&errno.to_ne_bytes());
        // SAFETY: write and _exit in the child.
        unsafe {
            libc::write(write_fd, msg.as_ptr().cast(), msg.len());
            libc::_exit(0);
        }
    }
    // SAFETY: closing our copy of the write end, so that read sees EOF if the child dies.
    unsafe { libc::close(write_fd) };
    if pid < 0 {
        // SAFETY: closing the read end we own.
        unsafe { libc::close(read_fd) };
        return Err(format!("fork: {}", io::Error::last_os_error()));
    }
    let mut msg = [0u8; 8];
    let mut got = 0;
    while got < msg.len() {
        // SAFETY: reading into the unfilled part of a local buffer.
        let n = unsafe { libc::read(read_fd, msg[got..].as_mut_ptr().cast(), msg.len() - got) };
        if n < 0 && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
            continue;
        }
        if n <= 0 {
            break;
        }
        got += n as usize;
    }
    let mut status = 0;
    // SAFETY: reaping our own child; closing the read end we own.
    unsafe {
        while libc::waitpid(pid, &mut status, 0) < 0
            && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted
        {}
        libc::close(read_fd);
    }
    if got < msg.len() {
        return Err("the probe child died before reporting".into());
    }
    let step = i32::from_ne_bytes(msg[..4].try_into().expect("4 bytes"));
    let errno = i32::from_ne_bytes(msg[4..].try_into().expect("4 bytes"));
    if step == 0 {
        return Ok(());
    }
    let what = Step::ALL
        .iter()
        .find(|s| **s as i32 == step)
        .map_or("namespace setup", |s| s.describe());
    Err(format!(
        "{what} failed: {}",
        io::Error::from_raw_os_error(errno)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_uid_inside_is_never_root() {
        let e = Enter::new(Level::Full, Path::new("/tmp")).unwrap();
        let map = String::from_utf8(e.uid_map.clone()).unwrap();
        let inside: u32 = map.split(' ').next().unwrap().parse().unwrap();
        assert_ne!(inside, 0, "{map}");
        assert!(map.ends_with(" 1\n"), "{map}");
    }

    #[test]
    fn the_probe_gives_a_reason_for_whatever_is_missing() {
        let p = probe();
        match p.level {
            Level::Full => {
                assert!(p.network(Level::Full).is_isolated());
                assert!(p.filesystem(Level::Full).is_isolated());
            }
            Level::Network => {
                assert!(p.network(Level::Network).is_isolated());
                assert!(!p.filesystem(Level::Network).is_isolated());
            }
            Level::Off => {
                let Isolation::Unavailable(why) = p.network(Level::Off) else {
                    panic!("off but isolated")
                };
                assert!(why.contains("failed"), "{why}");
            }
        }
    }
}
