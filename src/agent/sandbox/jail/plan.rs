//! What the jail's root holds, computed before the fork: the list of [`Op`]s init applies.
//!
//! The root is a small read-only tmpfs with, at their host paths: the system's program
//! and library directories and the Python runtime (read-only binds), a few files of
//! `/etc` the dynamic loader and time zones need plus a synthetic `passwd`, device nodes,
//! a proc of the jail's PID namespace, the data files of the run (read-only binds), and
//! three directories of one size-limited tmpfs (the quota): the working directory,
//! `/tmp` and `/dev/shm`. Nothing else of the host exists inside.
//!
//! Mount points are created only in tmpfs of ours, never inside a host bind: a target
//! under a host bind must already exist there, reached without a symbolic link, or it is
//! left out. So building the root cannot write to the host.

use super::child::Op;
use std::collections::BTreeMap;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

/// Host directories of programs and libraries, bound read-only (or recreated as the
/// symbolic links they are on merged-/usr systems).
const SYSTEM: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32",
];
/// Host files of /etc the loader and libraries read; nothing else of /etc is visible.
const ETC: &[&str] = &[
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/localtime",
    "/etc/timezone",
];
/// Device nodes bound from the host's /dev.
const DEVICES: &[&str] = &["null", "zero", "full", "random", "urandom"];
/// Inodes of the quota tmpfs: enough for any script, few enough that millions of
/// empty files cannot exhaust memory.
const QUOTA_INODES: u64 = 200_000;

/// Where something in the root comes from.
#[derive(Clone, Debug)]
enum Source {
    /// A host path, bound read-only.
    Host(PathBuf),
    /// A device node of the host, bound read-write (writes to /dev/null).
    Device(PathBuf),
    /// A directory of the quota tmpfs (`/q/NAME`), bound read-write.
    Scratch(&'static str),
    /// A symbolic link with this target.
    Symlink(PathBuf),
    /// A small file of ours.
    Write(Vec<u8>),
    /// A tmpfs of ours with these options.
    Tmpfs(String),
    /// proc.
    Proc,
}

/// What a path of the root is, as planned.
#[derive(Clone, Debug)]
enum Node {
    /// A directory of one of our tmpfs: mount points may be made in it.
    Ours,
    /// A host bind from this source: what lies below exists only if it does on the host.
    Host(PathBuf),
    /// A symbolic link: nothing is made through it.
    Link,
    /// A file.
    File,
}

/// The inputs of a plan.
#[derive(Debug)]
pub(crate) struct Layout<'a> {
    /// Directories (or files) of the Python runtime: prefixes, sys.path, the venv.
    pub(crate) runtime: &'a [PathBuf],
    /// Data files (or directories) of the run, absolute, as the generated code names them.
    pub(crate) data: &'a [PathBuf],
    /// The working directory, absolute and canonical.
    pub(crate) workdir: &'a Path,
    /// Bytes of the quota tmpfs.
    pub(crate) quota: u64,
    /// The uid and gid the script has inside.
    pub(crate) uid: u32,
    pub(crate) gid: u32,
}

/// The steps, and each one in words (to name a failed step).
#[derive(Debug, Default)]
pub(crate) struct Plan {
    pub(crate) ops: Vec<Op>,
    pub(crate) described: Vec<String>,
    /// Paths left out, and why (for the run's log).
    pub(crate) left_out: Vec<String>,
}

impl Plan {
    fn push(&mut self, op: Op, what: String) {
        self.ops.push(op);
        self.described.push(what);
    }
}

fn c(p: impl AsRef<[u8]>) -> CString {
    // Paths come from the OS (no interior NUL); a NUL would only make the op fail.
    CString::new(p.as_ref().to_vec()).unwrap_or_default()
}

fn under(prefix: &str, p: &Path) -> CString {
    let mut v = prefix.as_bytes().to_vec();
    v.extend_from_slice(p.as_os_str().as_bytes());
    c(v)
}

/// `p` made absolute without `.`/`..` (lexically: the jail sees paths as given).
fn normal(p: &Path) -> Option<PathBuf> {
    if !p.is_absolute() {
        return None;
    }
    let mut out = PathBuf::from("/");
    for comp in p.components() {
        match comp {
            Component::Normal(x) => out.push(x),
            Component::ParentDir => {
                out.pop();
            }
            _ => {}
        }
    }
    Some(out)
}

/// The plan for `layout`.
pub(crate) fn plan(layout: &Layout) -> Plan {
    let mut entries: Vec<(PathBuf, Source)> = Vec::new();
    for s in SYSTEM {
        let p = Path::new(s);
        match std::fs::symlink_metadata(p) {
            Ok(m) if m.file_type().is_symlink() => {
                if let Ok(t) = std::fs::read_link(p) {
                    entries.push((p.into(), Source::Symlink(t)));
                }
            }
            Ok(m) if m.is_dir() => entries.push((p.into(), Source::Host(p.into()))),
            _ => {}
        }
    }
    entries.push(("/etc".into(), Source::Tmpfs("size=64k,mode=0755".into())));
    for e in ETC {
        let p = Path::new(e);
        match std::fs::symlink_metadata(p) {
            Ok(m) if m.file_type().is_symlink() => {
                if let Ok(t) = std::fs::read_link(p) {
                    entries.push((p.into(), Source::Symlink(t)));
                }
            }
            Ok(m) if m.is_file() => entries.push((p.into(), Source::Host(p.into()))),
            _ => {}
        }
    }
    let (uid, gid, home) = (layout.uid, layout.gid, layout.workdir.display());
    let passwd = format!("sandbox:x:{uid}:{gid}:lakestar sandbox:{home}:/usr/sbin/nologin\n");
    entries.push(("/etc/passwd".into(), Source::Write(passwd.into_bytes())));
    entries.push((
        "/etc/group".into(),
        Source::Write(format!("sandbox:x:{gid}:\n").into_bytes()),
    ));
    entries.push(("/dev".into(), Source::Tmpfs("size=64k,mode=0755".into())));
    for d in DEVICES {
        let p = Path::new("/dev").join(d);
        if p.exists() {
            entries.push((p.clone(), Source::Device(p)));
        }
    }
    for (name, target) in [
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
    ] {
        entries.push((Path::new("/dev").join(name), Source::Symlink(target.into())));
    }
    entries.push(("/dev/shm".into(), Source::Scratch("shm")));
    entries.push(("/proc".into(), Source::Proc));
    entries.push(("/tmp".into(), Source::Scratch("tmp")));
    for r in layout.runtime {
        if let Ok(canon) = r.canonicalize() {
            entries.push((canon.clone(), Source::Host(canon)));
        }
    }
    for d in layout.data {
        // Gone or relative: left out, and the script sees it missing, as it is.
        if let (Some(target), Ok(src)) = (normal(d), d.canonicalize()) {
            entries.push((target, Source::Host(src)));
        }
    }
    entries.push((layout.workdir.into(), Source::Scratch("work")));
    // Parents before children; among equals, the order above (system first).
    entries.sort_by_key(|(p, _)| p.components().count());

    let mut plan = Plan::default();
    let quota = format!(
        "size={},nr_inodes={QUOTA_INODES},mode=0755",
        layout.quota.max(1 << 20)
    );
    plan.push(
        Op::Tmpfs(c("/newroot"), c("size=4m,nr_inodes=20000,mode=0755")),
        "mounting the root tmpfs".into(),
    );
    plan.push(
        Op::Tmpfs(c("/q"), c(&quota)),
        format!("mounting the quota tmpfs ({quota})"),
    );
    for (dir, mode) in [("/q/work", 0o700), ("/q/tmp", 0o1777), ("/q/shm", 0o1777)] {
        plan.push(Op::Mkdir(c(dir), mode), format!("creating {dir}"));
    }
    plan.push(
        Op::Chown(c("/q/work"), uid, gid),
        "giving the working directory to the sandbox uid".into(),
    );

    let mut nodes: BTreeMap<PathBuf, Node> = BTreeMap::new();
    nodes.insert("/".into(), Node::Ours);
    let mut host_binds: Vec<PathBuf> = Vec::new();
    let mut scratch: Vec<PathBuf> = Vec::new();
    let mut read_only_tmpfs: Vec<PathBuf> = vec!["/".into()];
    for (target, source) in entries {
        if nodes.contains_key(&target) {
            continue; // a runtime directory named twice, a data file given twice
        }
        match place(&mut plan, &mut nodes, &target, &source) {
            Ok(()) => {}
            Err(why) => {
                plan.left_out.push(format!("{}: {why}", target.display()));
                continue;
            }
        }
        let dst = under("/newroot", &target);
        let shown = target.display();
        match source {
            Source::Host(src) => {
                plan.push(
                    Op::Bind(under("/oldroot", &src), dst),
                    format!("binding {} read-only", src.display()),
                );
                host_binds.push(target.clone());
                nodes.insert(target, Node::Host(src));
            }
            Source::Device(src) => {
                plan.push(
                    Op::Bind(under("/oldroot", &src), dst.clone()),
                    format!("binding the device {}", src.display()),
                );
                plan.push(
                    Op::Attr {
                        path: dst,
                        set: libc::MOUNT_ATTR_NOSUID | libc::MOUNT_ATTR_NOEXEC,
                        clear: 0,
                        recursive: false,
                    },
                    format!("restricting {shown}"),
                );
                nodes.insert(target, Node::File);
            }
            Source::Scratch(name) => {
                plan.push(
                    Op::Bind(c(format!("/q/{name}")), dst),
                    format!("binding the quota tmpfs at {shown}"),
                );
                scratch.push(target.clone());
                nodes.insert(target, Node::Ours);
            }
            Source::Symlink(t) => {
                plan.push(
                    Op::Symlink(c(t.as_os_str().as_bytes()), dst),
                    format!("linking {shown} to {}", t.display()),
                );
                nodes.insert(target, Node::Link);
            }
            Source::Write(bytes) => {
                plan.push(Op::Write(dst, bytes), format!("writing {shown}"));
                nodes.insert(target, Node::File);
            }
            Source::Tmpfs(opts) => {
                plan.push(
                    Op::Tmpfs(dst, c(&opts)),
                    format!("mounting a tmpfs at {shown}"),
                );
                read_only_tmpfs.push(target.clone());
                nodes.insert(target, Node::Ours);
            }
            Source::Proc => {
                plan.push(Op::Proc(dst), "mounting proc".into());
                nodes.insert(target, Node::File);
            }
        }
    }
    // Read-only: host binds (recursively: their submounts too), then our tmpfs; the
    // scratch binds below them stay writable (each bind is a mount of its own).
    for t in &host_binds {
        plan.push(
            Op::Attr {
                path: under("/newroot", t),
                set: libc::MOUNT_ATTR_RDONLY | libc::MOUNT_ATTR_NOSUID | libc::MOUNT_ATTR_NODEV,
                clear: 0,
                recursive: true,
            },
            format!("making {} read-only", t.display()),
        );
    }
    for t in &scratch {
        plan.push(
            Op::Attr {
                path: under("/newroot", t),
                set: libc::MOUNT_ATTR_NOSUID | libc::MOUNT_ATTR_NODEV,
                clear: libc::MOUNT_ATTR_RDONLY,
                recursive: false,
            },
            format!("keeping {} writable", t.display()),
        );
    }
    for t in read_only_tmpfs.iter().rev() {
        plan.push(
            Op::Attr {
                path: under("/newroot", t),
                set: libc::MOUNT_ATTR_RDONLY,
                clear: 0,
                recursive: false,
            },
            format!("making {} read-only", t.display()),
        );
    }
    plan
}

/// Make the mount point of `target` (and its missing parents) in our tmpfs, or check
/// that it exists in the host bind above it.
fn place(
    plan: &mut Plan,
    nodes: &mut BTreeMap<PathBuf, Node>,
    target: &Path,
    source: &Source,
) -> Result<(), String> {
    let mut at = PathBuf::from("/");
    let comps: Vec<_> = target.components().skip(1).collect();
    for (i, comp) in comps.iter().enumerate() {
        at.push(comp);
        let last = i + 1 == comps.len();
        match nodes.get(&at) {
            Some(Node::Ours) if !last => continue,
            Some(Node::Link) => return Err(format!("{} is a link in the jail", at.display())),
            Some(Node::File) => return Err(format!("{} is a file in the jail", at.display())),
            Some(Node::Host(src)) => {
                // Below a host bind: the rest must exist there, without links.
                let rest = target.strip_prefix(&at).unwrap_or(Path::new(""));
                let host = src.join(rest);
                return match host.canonicalize() {
                    Ok(canon) if canon == host => match (source, host.is_dir()) {
                        (Source::Host(s), d) if s.is_dir() == d => Ok(()),
                        (Source::Scratch(_), true) => Ok(()),
                        _ => Err("the path above it shows something else here".into()),
                    },
                    _ => Err(format!(
                        "it lies under {} and does not exist there (or through a link)",
                        at.display()
                    )),
                };
            }
            Some(Node::Ours) => unreachable!("the last component is never planned yet"),
            None => {}
        }
        let dst = under("/newroot", &at);
        if last {
            let file = match source {
                Source::Host(s) | Source::Device(s) => !s.is_dir(),
                Source::Write(_) | Source::Symlink(_) => return Ok(()), // made by its op
                Source::Scratch(_) | Source::Tmpfs(_) | Source::Proc => false,
            };
            if file {
                plan.push(
                    Op::Touch(dst),
                    format!("creating the mount point {}", at.display()),
                );
            } else {
                plan.push(Op::Mkdir(dst, 0o755), format!("creating {}", at.display()));
            }
        } else {
            plan.push(Op::Mkdir(dst, 0o755), format!("creating {}", at.display()));
            nodes.insert(at.clone(), Node::Ours);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn described(p: &Plan) -> String {
        p.described.join("\n")
    }

    #[test]
    fn the_root_holds_the_system_the_runtime_the_data_and_the_scratch_only() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let data = root.join("lake/a.csv");
        std::fs::create_dir_all(data.parent().unwrap()).unwrap();
        std::fs::write(&data, "x\n1\n").unwrap();
        let work = root.join("run/exec-1");
        std::fs::create_dir_all(&work).unwrap();
        let p = plan(&Layout {
            runtime: &[],
            data: &[data.clone(), root.join("gone.csv")],
            workdir: &work,
            quota: 1 << 30,
            uid: 65534,
            gid: 65534,
        });
        let text = described(&p);
        assert!(text.contains("binding /usr read-only"), "{text}");
        assert!(
            text.contains(&format!("binding {} read-only", data.display())),
            "{text}"
        );
        assert!(
            text.contains(&format!("binding the quota tmpfs at {}", work.display())),
            "{text}"
        );
        assert!(text.contains("binding the quota tmpfs at /tmp"), "{text}");
        assert!(text.contains("size=1073741824"), "{text}");
        // Nothing of /etc but the listed files and ours; no home, no /root, no /var.
        for secret in [
            "/etc/shadow",
            "/root",
            "/var",
            "/home",
            "/etc/passwd read-only",
        ] {
            assert!(
                !text.contains(&format!("binding {secret}")),
                "{secret}: {text}"
            );
        }
        // The vanished file is simply absent.
        assert!(!text.contains("gone.csv"), "{text}");
    }

    #[test]
    fn nothing_is_created_inside_a_host_bind() {
        // A runtime directory bound read-only, with a data file inside it, and one
        // reached through a link inside it.
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let runtime = root.join("runtime");
        let elsewhere = root.join("elsewhere");
        std::fs::create_dir_all(runtime.join("sub")).unwrap();
        std::fs::create_dir_all(&elsewhere).unwrap();
        std::fs::write(runtime.join("sub/in.csv"), "x\n").unwrap();
        std::fs::write(elsewhere.join("x.csv"), "x\n").unwrap();
        std::os::unix::fs::symlink(&elsewhere, runtime.join("link")).unwrap();
        let work = root.join("work");
        std::fs::create_dir_all(&work).unwrap();
        let p = plan(&Layout {
            runtime: std::slice::from_ref(&runtime),
            data: &[runtime.join("sub/in.csv"), runtime.join("link/x.csv")],
            workdir: &work,
            quota: 1 << 20,
            uid: 1000,
            gid: 1000,
        });
        let inside = format!("/newroot{}/", runtime.display());
        for (op, what) in p.ops.iter().zip(&p.described) {
            if let Op::Mkdir(path, _) | Op::Touch(path) = op {
                let s = path.to_string_lossy();
                assert!(!s.starts_with(&inside), "{what}: {s}");
            }
        }
        assert!(
            p.left_out.iter().any(|l| l.contains("link/x.csv")),
            "{:?}",
            p.left_out
        );
        assert!(
            !p.left_out.iter().any(|l| l.contains("in.csv")),
            "{:?}",
            p.left_out
        );
    }
}
