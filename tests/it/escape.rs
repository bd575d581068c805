//! The escape suite: each attack on the jail runs as generated Python through the real
//! jail, and each is checked by its effect on the host (the listener got nothing, the
//! test's processes live, no child remains, the quota stopped the writes). It runs as
//! whoever runs the tests; when that is root, the last test runs it again as `nobody`,
//! so that both ways into the jail (root switching uid, a user's own namespace) are
//! exercised.

use crate::sandbox::survivor;
use lakestar::agent::sandbox::{Execution, Limits, Python, Sandbox};
use std::io::Read;
use std::os::unix::net::{SocketAddr, UnixListener};
use std::path::{Path, PathBuf};

/// Set in the environment of the suite's second, unprivileged run.
const INNER: &str = "LAKESTAR_ESCAPE_INNER";

/// `python3` on PATH (the unprivileged run puts only system directories on PATH).
fn python() -> Python {
    Python::resolve(Some(Path::new("python3")), Path::new("/nonexistent")).unwrap()
}

async fn attack(code: &str, data: &[PathBuf]) -> Execution {
    attack_with(Limits::default(), code, data).await
}

async fn attack_with(limits: Limits, code: &str, data: &[PathBuf]) -> Execution {
    let work = tempfile::tempdir().unwrap();
    let ex = Sandbox::new(python(), limits)
        .run(&work.path().join("run"), "attack", code, data)
        .await
        .unwrap();
    assert_eq!(ex.filesystem.to_string(), "isolated", "{ex:?}");
    ex
}

fn token() -> String {
    format!("{}{:06}", std::process::id(), fastrand::u32(..1_000_000))
}

#[tokio::test]
async fn secrets_of_the_host_are_not_visible() {
    let tmp = tempfile::tempdir().unwrap();
    // An index directory and a home, each with a config holding a key.
    let key = format!("sk-escape-{}", token());
    let index_toml = tmp.path().join("index/lakestar.toml");
    let home_toml = tmp.path().join("home/.config/lakestar/lakestar.toml");
    for f in [&index_toml, &home_toml] {
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, format!("[llm]\napi_key = \"{key}\"\n")).unwrap();
    }
    let data = tmp.path().join("lake.csv");
    std::fs::write(tmp.path().join("lake.csv"), "a\n1\n").unwrap();
    let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
    let code = format!(
        "import os\n\
         for p in ['/etc/shadow', {index_toml:?}, {home_toml:?}, {real:?}, '/proc/1/environ']:\n    \
             try:\n        print(p, 'READ', open(p).read())\n    \
             except OSError as e:\n        print(p, 'refused', type(e).__name__)\n\
         print('lake', open({data:?}).read().split()[0])\n\
         print('env', sorted(os.environ))\n",
        real = format!("{home}/.config/lakestar/lakestar.toml"),
    );
    let ex = attack(&code, &[data]).await;
    assert!(ex.success(), "{ex:?}");
    assert!(!ex.stdout.contains("READ"), "{}", ex.stdout);
    assert!(!ex.stdout.contains(&key), "{}", ex.stdout);
    assert!(
        ex.stdout.contains("lake a"),
        "the given data file is readable: {}",
        ex.stdout
    );
    assert!(!ex.stdout.contains("API_KEY"), "{}", ex.stdout);
}

#[tokio::test]
async fn unix_sockets_of_the_host_are_out_of_reach() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("listener.sock");
    let on_path = UnixListener::bind(&path).unwrap();
    let name = format!("lakestar-escape-{}", token());
    use std::os::linux::net::SocketAddrExt;
    let abstract_ =
        UnixListener::bind_addr(&SocketAddr::from_abstract_name(&name).unwrap()).unwrap();
    for l in [&on_path, &abstract_] {
        l.set_nonblocking(true).unwrap();
    }
    let code = format!(
        "import socket\n\
         for addr in [{path:?}, '\\0' + {name:?}]:\n    \
             s = socket.socket(socket.AF_UNIX)\n    \
             try:\n        s.connect(addr)\n        s.sendall(b'the key')\n        print('SENT', repr(addr))\n    \
             except OSError as e:\n        print('refused', type(e).__name__)\n"
    );
    let ex = attack(&code, &[]).await;
    assert!(ex.success(), "{ex:?}");
    assert!(!ex.stdout.contains("SENT"), "{}", ex.stdout);
    for l in [&on_path, &abstract_] {
        match l.accept() {
            Ok((mut s, _)) => {
                let mut got = String::new();
                let _ = s.read_to_string(&mut got);
                panic!("a connection reached the host's listener: {got:?}");
            }
            Err(e) => assert_eq!(e.kind(), std::io::ErrorKind::WouldBlock),
        }
    }
}

#[tokio::test]
async fn signals_reach_nothing_outside_the_jail() {
    let t = format!("1000.{}", token());
    let mut victim = std::process::Command::new("sleep").arg(&t).spawn().unwrap();
    let pid = victim.id();
    let code = format!(
        "import os, signal\n\
         for target in [os.getppid(), {pid}, 1]:\n    \
             try:\n        os.kill(target, signal.SIGKILL)\n        print('sent', target)\n    \
             except OSError as e:\n        print('refused', target, type(e).__name__)\n\
         try:\n    os.kill(-1, signal.SIGKILL)\n\
         except OSError as e:\n    print('kill -1 refused', e)\n\
         print('still here')\n"
    );
    let ex = attack(&code, &[]).await;
    // The test process (the script's real parent's parent) is evidently alive; the
    // victim the test started must be too.
    assert!(
        victim.try_wait().unwrap().is_none(),
        "the test's process was killed: {ex:?}"
    );
    assert!(ex.stdout.contains("still here"), "{ex:?}");
    assert_eq!(ex.exit_code, Some(0), "{ex:?}");
    victim.kill().unwrap();
    victim.wait().unwrap();
}

#[tokio::test]
async fn a_setsid_grandchild_does_not_outlive_the_run() {
    let t = format!("1000.{}", token());
    let code = format!(
        "import os, subprocess\n\
         if os.fork() == 0:\n    \
             os.setsid()\n    \
             subprocess.Popen(['sleep', '{t}'], start_new_session=True)\n    \
             os._exit(0)\n\
         os.wait()\n\
         print('left a daemon')\n"
    );
    let ex = attack(&code, &[]).await;
    assert!(ex.success(), "{ex:?}");
    assert_eq!(
        survivor(&t),
        None,
        "a process started in the jail outlived it"
    );
}

#[tokio::test]
async fn a_thousand_forks_stop_at_the_process_limit() {
    let limits = Limits {
        processes: 64,
        ..Limits::default()
    };
    let code = "import os, time\n\
        n = 0\n\
        for _ in range(1000):\n    \
            try:\n        pid = os.fork()\n    \
            except OSError as e:\n        print('stopped', type(e).__name__, e.errno)\n        break\n    \
            if pid == 0:\n        time.sleep(60)\n        os._exit(0)\n    \
            n += 1\n\
        print('forked', n)\n";
    let ex = attack_with(limits, code, &[]).await;
    assert!(ex.success(), "{ex:?}");
    let forked: u64 = ex
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("forked "))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{ex:?}"));
    assert!(forked < 64, "{forked} forks under a limit of 64");
    assert!(ex.stdout.contains("stopped BlockingIOError 11"), "{ex:?}");
}

#[tokio::test]
async fn writing_3_gib_across_files_stops_at_the_quota_and_nothing_stays_in_shm() {
    let t = token();
    let code = format!(
        "import os\n\
         chunk = b'\\0' * (64 << 20)\n\
         total = 0\n\
         places = ['part{{}}.bin', '/tmp/part{{}}.bin', '/dev/shm/lakestar-escape-{t}-{{}}']\n\
         try:\n    \
             for i in range(48):\n        \
                 with open(places[i % 3].format(i), 'wb') as f:\n            \
                     f.write(chunk)\n        \
                 total += len(chunk)\n\
         except OSError as e:\n    \
             print('stopped', e.errno)\n\
         print('wrote', total)\n"
    );
    let ex = attack(&code, &[]).await;
    assert!(ex.success(), "{ex:?}");
    let wrote: u64 = ex
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("wrote "))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{ex:?}"));
    assert!(ex.stdout.contains("stopped 28"), "ENOSPC: {ex:?}");
    assert!(wrote <= 2 << 30, "{wrote} bytes written past a 2 GiB quota");
    assert!(wrote >= 1 << 30, "the quota is not that small: {wrote}");
    let leaked: Vec<_> = std::fs::read_dir("/dev/shm")
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains(&t))
        .collect();
    assert!(
        leaked.is_empty(),
        "files left in the host's /dev/shm: {leaked:?}"
    );
    let host_tmp = std::fs::read_dir(std::env::temp_dir()).unwrap().flatten();
    assert!(
        !host_tmp
            .into_iter()
            .any(|e| e.file_name().to_string_lossy().starts_with("part")),
        "the jail's /tmp is not the host's"
    );
}

#[tokio::test]
async fn the_network_is_unreachable() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let code = format!(
        "import socket\n\
         try:\n    socket.create_connection(('127.0.0.1', {port}), timeout=5)\n    print('CONNECTED')\n\
         except OSError as e:\n    print('refused', e.errno)\n"
    );
    let ex = attack(&code, &[]).await;
    assert!(ex.success(), "{ex:?}");
    assert!(!ex.stdout.contains("CONNECTED"), "{ex:?}");
}

/// The tests of the suite that attack the jail (run again as nobody).
const ATTACKS: &[&str] = &[
    "escape::secrets_of_the_host_are_not_visible",
    "escape::unix_sockets_of_the_host_are_out_of_reach",
    "escape::signals_reach_nothing_outside_the_jail",
    "escape::a_setsid_grandchild_does_not_outlive_the_run",
    "escape::a_thousand_forks_stop_at_the_process_limit",
    "escape::writing_3_gib_across_files_stops_at_the_quota_and_nothing_stays_in_shm",
    "escape::the_network_is_unreachable",
];

/// The suite again, as `nobody`, when the tests run as root.
#[test]
fn the_escape_suite_holds_for_an_unprivileged_user_too() {
    if std::env::var_os(INNER).is_some() {
        return; // this is the second run
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("the escape suite already ran unprivileged (uid is not 0)");
        return;
    }
    // A copy of this test binary that `nobody` can execute (the build directory may
    // be under a home it cannot enter).
    let dir = tempfile::Builder::new()
        .prefix("lakestar-escape-")
        .tempdir()
        .unwrap();
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let exe = dir.path().join("it");
    let me = std::env::current_exe().unwrap();
    if std::fs::hard_link(&me, &exe).is_err() {
        std::fs::copy(&me, &exe).unwrap();
    }
    let out = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(&exe)
        // The attacks (not the CLI test below, whose binary may sit where nobody
        // cannot enter).
        .args(ATTACKS)
        .arg("--test-threads=2")
        .env_clear()
        .env(INNER, "1")
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", "/tmp")
        .env("TMPDIR", "/tmp")
        .output()
        .expect("setpriv (util-linux) runs the suite as nobody");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "as nobody:\n{text}");
    let passed = format!("test result: ok. {} passed", ATTACKS.len());
    assert!(text.contains(&passed), "as nobody:\n{text}");
}

/// `lakestar ARGS` where the kernel refuses new user namespaces (a user namespace whose
/// `user.max_user_namespaces` is 0, as a hardened host would set it).
fn without_user_namespaces(args: &[&str], envs: &[(&str, &str)]) -> std::process::Output {
    let mut cmd = std::process::Command::new("unshare");
    cmd.args(["--user", "--map-root-user", "sh", "-c"])
        .arg("echo 0 > /proc/sys/user/max_user_namespaces && exec \"$@\"")
        .arg("sh")
        .arg(env!("CARGO_BIN_EXE_lakestar"))
        .args(args);
    for (k, v) in envs {
        cmd.env(k, v);
    }
    cmd.output().expect("unshare (util-linux)")
}

#[test]
fn a_kernel_without_user_namespaces_is_refused_and_the_opt_out_is_explicit() {
    let tmp = tempfile::tempdir().unwrap();
    let script = tmp.path().join("s.py");
    std::fs::write(&script, "print('ran')\n").unwrap();
    let csv = tmp.path().join("a.csv");
    std::fs::write(&csv, "x\n1\n").unwrap();
    let work = tmp.path().join("w");
    let (s, w) = (script.to_str().unwrap(), work.to_str().unwrap());
    let python = python().path.display().to_string();
    let run = ["sandbox-run", s, "--workdir", w, "--python", &python];
    let out = without_user_namespaces(&run, &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("cannot be isolated here: unshare("), "{err}");
    assert!(err.contains("--unsafe-no-isolation"), "{err}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("ran"));
    // `ask` refuses before its first LLM call: the model's address is a closed port,
    // and the error is the jail's, not the connection's.
    let out = without_user_namespaces(
        &[
            "ask",
            "Rows?",
            "--files",
            csv.to_str().unwrap(),
            "--python",
            &python,
        ],
        &[
            ("LAKESTAR_MODEL", "m"),
            ("OPENAI_BASE_URL", "http://127.0.0.1:9/v1"),
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("cannot be isolated here"), "{err}");
    // The opt-out runs the code, unconfined, and says so.
    let mut opted = vec!["--unsafe-no-isolation"];
    opted.extend(run);
    let out = without_user_namespaces(&opted, &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "ran\n");
    assert!(err.contains("without the jail"), "{err}");
    assert!(err.contains("network unavailable"), "{err}");
}
