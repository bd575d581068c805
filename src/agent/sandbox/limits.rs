//! Resource limits of a run: their defaults, parsing them from text, applying them as
//! rlimits in the child, and naming the one a failed run most likely hit.

use super::error::{SandboxError, UserError};
use std::io;
use std::time::Duration;

/// What one run may use. The defaults let a pandas + pyarrow + scikit-learn + matplotlib
/// script run and stop a runaway one before it hurts the machine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Wall clock; the whole process group is killed when it runs out.
    pub timeout: Duration,
    /// Address space (RLIMIT_AS), bytes. Virtual, not resident, memory: numpy, pandas,
    /// pyarrow (mimalloc), scikit-learn and matplotlib imported take 0.76 GB; reading
    /// Parquet, fitting a random forest and plotting take 2.6 GB with 2 threads and
    /// 3.8 GB with 64 (measured); 8 GiB leaves room and
    /// still stops a 10 GB allocation.
    pub address_space: u64,
    /// CPU time (RLIMIT_CPU), seconds, summed over the threads of each process.
    pub cpu_seconds: u64,
    /// Largest file a run may write (RLIMIT_FSIZE), bytes.
    pub file_size: u64,
    /// Processes and threads (RLIMIT_NPROC). In the jail the script runs as an
    /// unprivileged uid of its own user namespace, where the kernel counts only the
    /// run's tasks, so it holds whoever runs lakestar (root included).
    pub processes: u64,
    /// Bytes a run may write in all: its working directory, `/tmp` and `/dev/shm` are
    /// one tmpfs of this size in the jail (the files it starts with count too).
    pub quota: u64,
    /// Bytes kept of stdout and of stderr each: the head and the tail, with a
    /// "[… N bytes cut …]" marker between them.
    pub output_budget: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            timeout: Duration::from_secs(120),
            address_space: 8 << 30,
            cpu_seconds: 600,
            file_size: 1 << 30,
            processes: 256,
            quota: 2 << 30,
            output_budget: 20_000,
        }
    }
}

/// Parse a size such as `8GiB`, `512 MiB`, `1.5GB` or `1000000` (bytes; `GB` is 10⁹,
/// `GiB` 2³⁰), for the memory, file-size and output limits.
pub fn parse_size(what: &'static str, s: &str) -> Result<u64, SandboxError> {
    let bad = |reason: String| UserError::BadLimit {
        what,
        value: s.to_string(),
        reason,
        example: "give a size such as 8GiB, 512MiB or 1000000 (bytes)",
    };
    let size: bytesize::ByteSize = s.trim().parse().map_err(bad)?;
    if size.as_u64() == 0 {
        return Err(bad("it must be more than zero".into()).into());
    }
    Ok(size.as_u64())
}

/// Parse a duration such as `120s`, `2m` or `1h 30m`, for the timeout and CPU limits.
pub fn parse_duration(what: &'static str, s: &str) -> Result<Duration, SandboxError> {
    let bad = |reason: String| UserError::BadLimit {
        what,
        value: s.to_string(),
        reason,
        example: "give a duration such as 120s, 2m or 1h",
    };
    let d = humantime::parse_duration(s.trim()).map_err(|e| bad(e.to_string()))?;
    if d.is_zero() {
        return Err(bad("it must be more than zero".into()).into());
    }
    Ok(d)
}

/// The rlimits to set in the child, computed before the fork so that applying them
/// needs nothing but `setrlimit` (async-signal-safe).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Rlimits {
    address_space: u64,
    cpu_soft: u64,
    file_size: u64,
    processes: u64,
}

impl Rlimits {
    /// The rlimits for `limits`. `own_user_namespace` tells whether the child gets a
    /// user namespace of its own: RLIMIT_NPROC counts every process of the user in the
    /// namespace, so without one the processes the user already runs are added.
    pub(crate) fn new(limits: &Limits, own_user_namespace: bool) -> Rlimits {
        let processes = if own_user_namespace {
            limits.processes
        } else {
            limits
                .processes
                .saturating_add(tasks_of_real_uid().unwrap_or(0))
        };
        Rlimits {
            address_space: limits.address_space,
            cpu_soft: limits.cpu_seconds.max(1),
            file_size: limits.file_size,
            processes,
        }
    }

    /// Set the limits on the calling process. Runs in the forked child: only
    /// `setrlimit`. Core dumps are turned off too: a process killed at its CPU limit
    /// must not write gigabytes of core into the working directory.
    pub(crate) fn apply(&self) -> io::Result<()> {
        // The hard CPU limit one second after the soft one: SIGXCPU first, then SIGKILL
        // for a process that ignores it.
        let pairs = [
            (libc::RLIMIT_AS, self.address_space, self.address_space),
            (
                libc::RLIMIT_CPU,
                self.cpu_soft,
                self.cpu_soft.saturating_add(1),
            ),
            (libc::RLIMIT_FSIZE, self.file_size, self.file_size),
            (libc::RLIMIT_NPROC, self.processes, self.processes),
            (libc::RLIMIT_CORE, 0, 0),
        ];
        for (resource, soft, hard) in pairs {
            let lim = libc::rlimit {
                rlim_cur: soft as libc::rlim_t,
                rlim_max: hard as libc::rlim_t,
            };
            // SAFETY: setrlimit with a valid pointer to a local struct.
            if unsafe { libc::setrlimit(resource, &lim) } != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(())
    }
}

/// Threads (tasks) whose real uid is ours, from /proc: what RLIMIT_NPROC counts.
fn tasks_of_real_uid() -> Option<u64> {
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    if uid == 0 {
        return Some(0); // root is not held to RLIMIT_NPROC anyway
    }
    let mut n = 0u64;
    for e in std::fs::read_dir("/proc").ok()?.flatten() {
        if !e
            .file_name()
            .to_string_lossy()
            .bytes()
            .all(|b| b.is_ascii_digit())
        {
            continue;
        }
        let Ok(status) = std::fs::read_to_string(e.path().join("status")) else {
            continue; // gone since the listing
        };
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.split_whitespace().next())
                .and_then(|v| v.parse::<u64>().ok())
        };
        if field("Uid:") == Some(u64::from(uid)) {
            n += field("Threads:").unwrap_or(1);
        }
    }
    Some(n)
}

/// The limit a finished run most likely hit, in words, or `None`. Best effort: from
/// the timeout, the signal that ended it, and the end of its stderr. A run that exited
/// 0 hit none, whatever it printed.
pub(crate) fn limit_hit(
    limits: &Limits,
    timed_out: bool,
    exit_code: Option<i32>,
    signal: Option<i32>,
    stderr: &str,
) -> Option<String> {
    if timed_out {
        return Some(format!("timeout {}", secs(limits.timeout)));
    }
    if exit_code == Some(0) {
        return None;
    }
    let memory = || {
        format!(
            "memory (address space {})",
            bytesize::ByteSize::b(limits.address_space).display().iec()
        )
    };
    let file_size = || {
        format!(
            "file size ({})",
            bytesize::ByteSize::b(limits.file_size).display().iec()
        )
    };
    match signal {
        Some(libc::SIGXCPU) => return Some(format!("cpu time ({} s)", limits.cpu_seconds)),
        Some(libc::SIGXFSZ) => return Some(file_size()),
        // Not ours (ours is the timeout): the CPU hard limit or the kernel's OOM killer.
        Some(libc::SIGKILL) => {
            return Some(format!(
                "killed: cpu time ({} s) or out of memory",
                limits.cpu_seconds
            ))
        }
        _ => {}
    }
    let has = |needle: &str| stderr.contains(needle);
    if has("MemoryError") || has("Cannot allocate memory") || has("std::bad_alloc") {
        Some(memory())
    } else if has("File too large") {
        Some(file_size())
    } else if has("No space left on device") || has("Disk quota exceeded") {
        Some(format!(
            "disk quota ({} written in all)",
            bytesize::ByteSize::b(limits.quota).display().iec()
        ))
    } else if has("can't start new thread") || has("Resource temporarily unavailable") {
        Some(format!("processes/threads ({})", limits.processes))
    } else {
        None
    }
}

/// `120 s`, `1.5 s`.
fn secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{} s", s as u64)
    } else {
        format!("{s:.1} s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_binary_and_decimal_units() {
        assert_eq!(parse_size("memory", "8GiB").unwrap(), 8 << 30);
        assert_eq!(parse_size("memory", "512 MiB").unwrap(), 512 << 20);
        assert_eq!(parse_size("memory", "2GB").unwrap(), 2_000_000_000);
        assert_eq!(parse_size("memory", " 1000000 ").unwrap(), 1_000_000);
    }

    #[test]
    fn bad_sizes_say_what_to_give() {
        for bad in ["", "lots", "8 parsecs", "0", "-1GiB"] {
            let e = parse_size("memory", bad).unwrap_err();
            assert!(e.is_user_error(), "{bad}");
            let msg = e.to_string();
            assert!(msg.contains("bad memory") && msg.contains("8GiB"), "{msg}");
        }
    }

    #[test]
    fn durations_parse_and_zero_is_refused() {
        assert_eq!(
            parse_duration("timeout", "120s").unwrap(),
            Duration::from_secs(120)
        );
        assert_eq!(
            parse_duration("timeout", "2m 30s").unwrap(),
            Duration::from_secs(150)
        );
        assert!(parse_duration("timeout", "0s").unwrap_err().is_user_error());
        assert!(parse_duration("timeout", "soon").is_err());
    }

    #[test]
    fn the_process_limit_is_per_run_only_in_an_own_user_namespace() {
        let l = Limits::default();
        assert_eq!(Rlimits::new(&l, true).processes, 256);
        assert!(Rlimits::new(&l, false).processes >= 256);
        assert_eq!(Rlimits::new(&l, true).cpu_soft, 600);
    }

    #[test]
    fn limit_hit_names_the_limit_from_the_evidence() {
        let l = Limits::default();
        let hit = |t, code, sig, err| limit_hit(&l, t, code, sig, err);
        assert_eq!(hit(true, None, Some(9), "").unwrap(), "timeout 120 s");
        assert_eq!(
            hit(false, Some(1), None, "Traceback…\nMemoryError\n").unwrap(),
            "memory (address space 8.0 GiB)"
        );
        assert_eq!(
            hit(false, Some(1), None, "OSError: [Errno 27] File too large").unwrap(),
            "file size (1.0 GiB)"
        );
        assert_eq!(
            hit(false, None, Some(libc::SIGXCPU), "").unwrap(),
            "cpu time (600 s)"
        );
        assert!(
            hit(false, Some(1), None, "RuntimeError: can't start new thread")
                .unwrap()
                .starts_with("processes")
        );
        assert_eq!(hit(false, Some(1), None, "KeyError: 'x'"), None);
        // Exit 0 hit nothing, even if it printed a caught MemoryError.
        assert_eq!(hit(false, Some(0), None, "MemoryError"), None);
    }
}
