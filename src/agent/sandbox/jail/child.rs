//! The jail's processes between `fork` and `exec`: only system calls on data prepared
//! before the fork (async-signal-safe: no allocation, no lock), as POSIX requires after
//! forking a multi-threaded process.
//!
//! Three processes (see docs/threat-model.md, "Generated code"):
//! - **outer**, our direct child, in the host's PID namespace: enters new user, mount,
//!   PID, network, IPC and UTS namespaces, waits for the parent to write its uid/gid
//!   maps, forks **init**, then holds the jail's mount namespace until the parent has
//!   copied the run's files out (the parent reads them through `/proc/OUTER/root`).
//! - **init**, PID 1 of the new PID namespace: builds the minimal root, waits for the
//!   parent to copy the working directory in, forks **script**, reaps every orphan, and
//!   when the script ends kills whatever it left behind. When init exits, the kernel
//!   kills every process of the namespace: nothing a run starts outlives it.
//! - **script**: drops to the sandbox uid, sets rlimits and `no_new_privs`, closes every
//!   inherited descriptor on exec, and execs Python.

use super::proto::{Msg, Step};
use std::ffi::{CStr, CString};

/// One step of building the root, applied in order by init. Paths are complete (the
/// parent joined them onto `/newroot`, `/oldroot` or `/q`).
#[derive(Debug)]
pub(crate) enum Op {
    /// `mkdir` with a mode (the umask of the child is 0).
    Mkdir(CString, u32),
    /// An empty file to bind a file onto.
    Touch(CString),
    /// A symbolic link: target, path.
    Symlink(CString, CString),
    /// A small file with its content (the synthetic /etc/passwd).
    Write(CString, Vec<u8>),
    /// Bind mount, source onto target, recursively.
    Bind(CString, CString),
    /// A tmpfs at the path with these options.
    Tmpfs(CString, CString),
    /// A proc file system of the new PID namespace.
    Proc(CString),
    /// `mount_setattr`: attributes to set and to clear, recursively or not.
    Attr {
        path: CString,
        set: u64,
        clear: u64,
        recursive: bool,
    },
    /// `chown` to the sandbox uid/gid inside.
    Chown(CString, u32, u32),
}

/// Everything the three processes need, prepared before the fork.
#[derive(Debug)]
pub(crate) struct Child {
    pub(crate) flags: libc::c_int,
    pub(crate) ops: Vec<Op>,
    /// The uid and gid the script runs as inside (`None`: keep ours, not root).
    pub(crate) drop_to: Option<(u32, u32)>,
    pub(crate) workdir: CString,
    pub(crate) program: Option<CString>,
    pub(crate) argv: Vec<CString>,
    pub(crate) envp: Vec<CString>,
    pub(crate) rlimits: Option<super::super::limits::Rlimits>,
    pub(crate) fds: Fds,
}

/// The child's ends of the pipes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fds {
    pub(crate) stdout: libc::c_int,
    pub(crate) stderr: libc::c_int,
    /// Messages to the parent ([`Msg`]).
    pub(crate) report: libc::c_int,
    /// One byte from the parent for each go-ahead; EOF: give up.
    pub(crate) go: libc::c_int,
    /// Never written: EOF when the parent closes it (done, or gone).
    pub(crate) alive: libc::c_int,
    /// The five above, sorted: every other inherited descriptor is closed (a jail
    /// forked at the same time must not hold our pipes open, nor we theirs).
    pub(crate) keep: [libc::c_int; 5],
}

/// Close every descriptor from 3 up but `keep` (sorted).
fn close_others(keep: &[libc::c_int; 5]) {
    let mut lo: libc::c_uint = 3;
    let mut ok = true;
    // SAFETY: close_range/close on descriptors of this process.
    unsafe {
        for &k in keep {
            let k = k as libc::c_uint;
            if k > lo {
                ok &= libc::close_range(lo, k - 1, 0) == 0;
            }
            lo = lo.max(k + 1);
        }
        ok &= libc::close_range(lo, libc::c_uint::MAX, 0) == 0;
        if !ok {
            // Kernels before 5.9: one by one, up to the descriptor limit.
            let mut lim = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim);
            for fd in 3..(lim.rlim_cur.min(1 << 20) as libc::c_int) {
                if !keep.contains(&fd) {
                    libc::close(fd);
                }
            }
        }
    }
}

const BASE: &CStr = c"/tmp";

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

fn report(fd: libc::c_int, msg: Msg) {
    let bytes = msg.encode();
    // SAFETY: write of a local buffer; a short or failed write leaves the parent with
    // EOF, which it reports as a setup failure.
    unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
}

fn fail(fd: libc::c_int, step: Step) -> ! {
    report(fd, Msg::Failed(step, errno()));
    // SAFETY: _exit is async-signal-safe.
    unsafe { libc::_exit(121) }
}

/// Fork a child that runs `child`; in the parent, close stdio (only the script keeps
/// the output pipes open, so that the parent reads them to EOF) and return its pid.
fn fork_then(report: libc::c_int, child: impl FnOnce()) -> libc::pid_t {
    // SAFETY: fork, close: system calls; the child runs code of this module only.
    unsafe {
        let pid = libc::fork();
        if pid < 0 {
            fail(report, Step::Fork);
        }
        if pid == 0 {
            child();
            libc::_exit(120); // `child` never returns
        }
        for fd in 0..3 {
            libc::close(fd);
        }
        pid
    }
}

/// Wait for one go-ahead byte; `false` on EOF (the parent gave up).
fn wait_go(fd: libc::c_int) -> bool {
    let mut b = [0u8; 1];
    loop {
        // SAFETY: read into a local one-byte buffer.
        let n = unsafe { libc::read(fd, b.as_mut_ptr().cast(), 1) };
        if n < 0 && errno() == libc::EINTR {
            continue;
        }
        return n == 1;
    }
}

impl Child {
    /// The outer process: runs in our forked child and never returns.
    pub(crate) fn outer(&self) -> ! {
        let fds = self.fds;
        // SAFETY (this function): system calls on prepared data and local buffers.
        unsafe {
            let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY);
            if null < 0
                || libc::dup2(null, 0) < 0
                || libc::dup2(fds.stdout, 1) < 0
                || libc::dup2(fds.stderr, 2) < 0
            {
                fail(fds.report, Step::Stdio);
            }
            close_others(&fds.keep);
            for fd in [fds.stdout, fds.stderr] {
                if fd > 2 {
                    libc::close(fd);
                }
            }
            // Our own process group: the parent's timeout kills it whole.
            libc::setpgid(0, 0);
            if libc::unshare(self.flags) != 0 {
                fail(fds.report, Step::Unshare);
            }
            report(fds.report, Msg::Unshared);
            // The parent writes our uid and gid maps, then says go.
            if !wait_go(fds.go) {
                libc::_exit(122);
            }
            let init = fork_then(fds.report, || self.init());
            let pidfd = libc::syscall(libc::SYS_pidfd_open, init, 0) as libc::c_int;
            let mut init_status = 0;
            if pidfd >= 0 {
                let mut fds_poll = [
                    libc::pollfd {
                        fd: pidfd,
                        events: libc::POLLIN,
                        revents: 0,
                    },
                    libc::pollfd {
                        fd: fds.alive,
                        events: libc::POLLIN,
                        revents: 0,
                    },
                ];
                loop {
                    let n = libc::poll(fds_poll.as_mut_ptr(), 2, -1);
                    if n < 0 && errno() == libc::EINTR {
                        continue;
                    }
                    if fds_poll[0].revents != 0 {
                        break;
                    }
                    if fds_poll[1].revents != 0 {
                        // The parent is gone or gave up: the jail goes with it.
                        libc::kill(init, libc::SIGKILL);
                        break;
                    }
                }
            }
            while libc::waitpid(init, &mut init_status, 0) < 0 && errno() == libc::EINTR {}
            if !(libc::WIFEXITED(init_status) && libc::WEXITSTATUS(init_status) == 0) {
                report(fds.report, Msg::InitDied(init_status));
            }
            // Hold the mount namespace until the parent has copied the files out.
            let mut b = [0u8; 1];
            while libc::read(fds.alive, b.as_mut_ptr().cast(), 1) < 0 && errno() == libc::EINTR {}
            libc::_exit(0)
        }
    }

    /// PID 1 of the jail.
    fn init(&self) -> ! {
        let fds = self.fds;
        // SAFETY (this function): system calls on prepared data and local buffers.
        unsafe {
            // Outer is single-threaded: its death (the timeout's SIGKILL) ends us, and
            // with us the namespace.
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            // Not dumpable: the script, which may share our uid, can neither ptrace us
            // (we hold the namespace's capabilities) nor read our /proc entries.
            libc::prctl(libc::PR_SET_DUMPABLE, 0);
            self.build_root();
            let name = b"lakestar";
            libc::sethostname(name.as_ptr().cast(), name.len());
            report(fds.report, Msg::Ready);
            // The parent copies the working directory in, then says go.
            if !wait_go(fds.go) {
                libc::_exit(123);
            }
            let script = fork_then(fds.report, || self.script());
            let mut status = 0;
            loop {
                let mut st = 0;
                let pid = libc::waitpid(-1, &mut st, 0);
                if pid == script {
                    status = st;
                    break;
                }
                if pid < 0 && errno() != libc::EINTR {
                    break;
                }
            }
            // Whatever the script left running (setsid'd, double-forked) dies now.
            libc::kill(-1, libc::SIGKILL);
            let mut st = 0;
            while libc::waitpid(-1, &mut st, 0) > 0 || errno() == libc::EINTR {}
            report(fds.report, Msg::Exited(status));
            libc::_exit(0)
        }
    }

    /// Build the minimal root and enter it (bubblewrap's order: a tmpfs base to pivot
    /// into, the host under `/oldroot` as the source of binds, the new root assembled
    /// at `/newroot`, then the base and the host dropped).
    fn build_root(&self) {
        let r = self.fds.report;
        let null = std::ptr::null::<libc::c_char>();
        // SAFETY (this function): mount-related system calls on prepared C strings.
        unsafe {
            if libc::mount(
                null,
                c"/".as_ptr(),
                null,
                libc::MS_REC | libc::MS_PRIVATE,
                null.cast(),
            ) != 0
            {
                fail(r, Step::Private);
            }
            let flags = libc::MS_NOSUID | libc::MS_NODEV;
            if libc::mount(
                c"tmpfs".as_ptr(),
                BASE.as_ptr(),
                c"tmpfs".as_ptr(),
                flags,
                c"size=1m,mode=0755".as_ptr().cast(),
            ) != 0
            {
                fail(r, Step::Base);
            }
            libc::umask(0);
            if libc::chdir(BASE.as_ptr()) != 0
                || libc::mkdir(c"newroot".as_ptr(), 0o755) != 0
                || libc::mkdir(c"oldroot".as_ptr(), 0o755) != 0
                || libc::mkdir(c"q".as_ptr(), 0o755) != 0
            {
                fail(r, Step::Base);
            }
            if libc::syscall(libc::SYS_pivot_root, c".".as_ptr(), c"oldroot".as_ptr()) != 0 {
                fail(r, Step::PivotBase);
            }
            if libc::chdir(c"/".as_ptr()) != 0 {
                fail(r, Step::PivotBase);
            }
            for (i, op) in self.ops.iter().enumerate() {
                if apply(op).is_err() {
                    fail(r, Step::Op(i as u16));
                }
            }
            if libc::umount2(c"/oldroot".as_ptr(), libc::MNT_DETACH) != 0 {
                fail(r, Step::DropHost);
            }
            if libc::chdir(c"/newroot".as_ptr()) != 0
                || libc::syscall(libc::SYS_pivot_root, c".".as_ptr(), c".".as_ptr()) != 0
                || libc::umount2(c".".as_ptr(), libc::MNT_DETACH) != 0
                || libc::chdir(c"/".as_ptr()) != 0
            {
                fail(r, Step::PivotRoot);
            }
        }
    }

    /// The script's process: drop privileges, then exec.
    fn script(&self) -> ! {
        let r = self.fds.report;
        // SAFETY (this function): system calls on prepared data.
        unsafe {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            if let Some((uid, gid)) = self.drop_to {
                if libc::setgroups(0, std::ptr::null()) != 0
                    || libc::setresgid(gid, gid, gid) != 0
                    || libc::setresuid(uid, uid, uid) != 0
                {
                    fail(r, Step::DropUid);
                }
            }
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                fail(r, Step::NoNewPrivs);
            }
            if let Some(rl) = &self.rlimits {
                if rl.apply().is_err() {
                    fail(r, Step::Rlimits);
                }
            }
            // No descriptor of ours (an index, a database, a directory to escape
            // through) survives the exec; `report` stays usable until then.
            if libc::close_range(
                3,
                libc::c_uint::MAX,
                libc::CLOSE_RANGE_CLOEXEC as libc::c_int,
            ) != 0
            {
                let mut lim = libc::rlimit {
                    rlim_cur: 0,
                    rlim_max: 0,
                };
                libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim);
                for fd in 3..(lim.rlim_cur.min(1 << 20) as libc::c_int) {
                    libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
                }
            }
            if libc::chdir(self.workdir.as_ptr()) != 0 {
                fail(r, Step::Chdir);
            }
            let Some(program) = &self.program else {
                libc::_exit(0);
            };
            let mut argv = [std::ptr::null::<libc::c_char>(); 8];
            for (slot, a) in argv.iter_mut().zip(&self.argv) {
                *slot = a.as_ptr();
            }
            let mut envp = [std::ptr::null::<libc::c_char>(); 32];
            for (slot, e) in envp.iter_mut().zip(&self.envp) {
                *slot = e.as_ptr();
            }
            libc::execve(program.as_ptr(), argv.as_ptr(), envp.as_ptr());
            fail(r, Step::Exec);
        }
    }
}

/// Create the new file `p` holding `data`; `Err` leaves errno set.
fn create(p: &CStr, data: &[u8]) -> Result<(), ()> {
    // SAFETY: open/write/close on a prepared C string and buffer.
    unsafe {
        let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_CLOEXEC;
        let fd = libc::open(p.as_ptr(), flags, 0o644);
        if fd < 0 {
            return Err(());
        }
        let n = if data.is_empty() {
            0
        } else {
            libc::write(fd, data.as_ptr().cast(), data.len())
        };
        libc::close(fd);
        if n == data.len() as isize {
            Ok(())
        } else {
            Err(())
        }
    }
}

/// Apply one step; `Err` leaves errno set.
fn apply(op: &Op) -> Result<(), ()> {
    let null = std::ptr::null::<libc::c_char>();
    let ok = |rc: libc::c_long| if rc == 0 { Ok(()) } else { Err(()) };
    // SAFETY: system calls on prepared C strings and buffers.
    unsafe {
        match op {
            Op::Mkdir(p, mode) => ok(libc::mkdir(p.as_ptr(), *mode) as _),
            Op::Touch(p) => create(p, &[]),
            Op::Symlink(target, p) => ok(libc::symlink(target.as_ptr(), p.as_ptr()) as _),
            Op::Write(p, data) => create(p, data),
            Op::Bind(src, dst) => ok(libc::mount(
                src.as_ptr(),
                dst.as_ptr(),
                null,
                libc::MS_BIND | libc::MS_REC,
                null.cast(),
            ) as _),
            Op::Tmpfs(dst, opts) => ok(libc::mount(
                c"tmpfs".as_ptr(),
                dst.as_ptr(),
                c"tmpfs".as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV,
                opts.as_ptr().cast(),
            ) as _),
            Op::Proc(dst) => ok(libc::mount(
                c"proc".as_ptr(),
                dst.as_ptr(),
                c"proc".as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                null.cast(),
            ) as _),
            Op::Attr {
                path,
                set,
                clear,
                recursive,
            } => {
                let attr = libc::mount_attr {
                    attr_set: *set,
                    attr_clr: *clear,
                    propagation: 0,
                    userns_fd: 0,
                };
                let flags = if *recursive { libc::AT_RECURSIVE } else { 0 };
                ok(libc::syscall(
                    libc::SYS_mount_setattr,
                    libc::AT_FDCWD,
                    path.as_ptr(),
                    flags as libc::c_uint,
                    &attr as *const libc::mount_attr,
                    std::mem::size_of::<libc::mount_attr>(),
                ))
            }
            Op::Chown(p, uid, gid) => ok(libc::chown(p.as_ptr(), *uid, *gid) as _),
        }
    }
}
