//! The sandbox running real Python: timeouts kill everything a script started, limits
//! stop runaway scripts, no secret reaches generated code, the network and the data are
//! out of reach; `lakestar setup python` makes a usable venv. The escape attacks are in
//! `escape.rs`.

use crate::common::{lakestar, test_python};
use lakestar::agent::sandbox::{
    setup_venv_with, Execution, Isolation, Limits, Policy, Python, PythonOrigin, Sandbox,
    DEFAULT_MODULES,
};
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

/// `python3` from PATH (no venv), as the sandbox resolves it.
fn system_python() -> Python {
    Python::resolve(None, Path::new("/nonexistent/lakestar-test-venv")).unwrap()
}

async fn run(limits: Limits, workdir: &Path, code: &str) -> Execution {
    Sandbox::new(system_python(), limits)
        .run(workdir, "script", code, &[])
        .await
        .unwrap()
}

/// Whether a process whose command line holds `token` is still alive on the host
/// (zombies nobody reaped count as ended). Polled, since SIGKILL takes effect
/// asynchronously; pids inside the jail are not the host's, so the token finds them.
pub(crate) fn survivor(token: &str) -> Option<i32> {
    let find = || {
        std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
            let pid: i32 = e.file_name().to_str()?.parse().ok()?;
            let cmd = std::fs::read(e.path().join("cmdline")).ok()?;
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            let state = stat
                .rsplit_once(')')?
                .1
                .split_whitespace()
                .next()?
                .to_string();
            let hit = String::from_utf8_lossy(&cmd).contains(token);
            (hit && state != "Z" && state != "X").then_some(pid)
        })
    };
    for _ in 0..100 {
        find()?;
        std::thread::sleep(Duration::from_millis(50));
    }
    find()
}

/// A unique `sleep` duration, to find the process on the host afterwards.
fn token() -> String {
    format!(
        "1000.{}{:06}",
        std::process::id(),
        fastrand::u32(..1_000_000)
    )
}

fn spawn_child(token: &str, new_session: bool) -> String {
    format!(
        "import subprocess\n\
         p = subprocess.Popen(['sleep', '{token}'], start_new_session={})\n\
         print('started', flush=True)\n",
        if new_session { "True" } else { "False" }
    )
}

#[tokio::test]
async fn sleeping_forever_is_killed_at_the_timeout_with_its_children() {
    let tmp = tempfile::tempdir().unwrap();
    let limits = Limits {
        timeout: Duration::from_secs(2),
        ..Limits::default()
    };
    let t = token();
    let code = format!("{}import time\ntime.sleep(10**6)\n", spawn_child(&t, false));
    let ex = run(limits, tmp.path(), &code).await;
    assert!(ex.timed_out, "{ex:?}");
    assert!(!ex.success());
    assert_eq!(ex.signal, Some(libc::SIGKILL), "{ex:?}");
    assert_eq!(ex.limit_hit.as_deref(), Some("timeout 2 s"));
    assert!(ex.stdout.contains("started"), "{ex:?}");
    assert_eq!(
        survivor(&t),
        None,
        "the script's child outlived the timeout"
    );
}

#[tokio::test]
async fn children_left_running_die_when_the_script_exits() {
    let tmp = tempfile::tempdir().unwrap();
    let t = token();
    let ex = run(Limits::default(), tmp.path(), &spawn_child(&t, false)).await;
    assert!(ex.success(), "{ex:?}");
    assert_eq!(survivor(&t), None, "the script's child outlived it");
}

#[tokio::test]
async fn a_child_in_a_new_session_dies_with_the_run_and_does_not_hang_it() {
    let tmp = tempfile::tempdir().unwrap();
    // A new session escapes a process-group kill and keeps stdout and stderr open;
    // the jail's init kills it when the script ends.
    let t = token();
    let ex = run(Limits::default(), tmp.path(), &spawn_child(&t, true)).await;
    assert!(ex.success(), "{ex:?}");
    assert_eq!(ex.stdout, "started\n");
    assert_eq!(survivor(&t), None, "the setsid child outlived the run");
}

#[tokio::test]
async fn allocating_10_gb_is_stopped_by_the_default_limits() {
    let tmp = tempfile::tempdir().unwrap();
    let ex = run(
        Limits::default(),
        tmp.path(),
        "b = bytearray(10 * 1024**3)\nprint('allocated', len(b))\n",
    )
    .await;
    assert!(!ex.success(), "{ex:?}");
    assert!(!ex.stdout.contains("allocated"), "{ex:?}");
    assert!(ex.stderr.contains("MemoryError"), "{ex:?}");
    assert_eq!(
        ex.limit_hit.as_deref(),
        Some("memory (address space 8.0 GiB)")
    );
}

#[test]
fn the_environment_shows_no_secret_of_the_caller() {
    let tmp = tempfile::tempdir().unwrap();
    let script = tmp.path().join("env.py");
    std::fs::write(
        &script,
        "import os, json\nprint(json.dumps(dict(os.environ)))\n",
    )
    .unwrap();
    let workdir = tmp.path().join("run");
    // The secrets are in the environment of the lakestar process that runs the sandbox.
    let out = lakestar()
        .env("OPENAI_API_KEY", "sk-secret-for-the-test")
        .env("GITHUB_TOKEN", "ghp-secret-for-the-test")
        .env("PYTHONPATH", "/somewhere/else")
        .args([
            "sandbox-run",
            script.to_str().unwrap(),
            "--json",
            "--workdir",
        ])
        .arg(&workdir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let all = String::from_utf8(out.stdout).unwrap();
    assert!(!all.contains("secret-for-the-test"), "{all}");
    let ex: Value = serde_json::from_str(&all).unwrap();
    let env: Value = serde_json::from_str(ex["stdout"].as_str().unwrap()).unwrap();
    assert_eq!(env["MPLBACKEND"], "Agg", "{env}");
    assert_eq!(
        env["HOME"],
        workdir.canonicalize().unwrap().to_str().unwrap()
    );
    assert!(env.get("PYTHONPATH").is_none(), "{env}");
    assert!(env.get("OPENAI_API_KEY").is_none(), "{env}");
}

#[tokio::test]
async fn a_socket_fails_in_the_jail_and_connects_only_when_opted_out() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let tmp = tempfile::tempdir().unwrap();
    let code = format!(
        "import socket\n\
         try:\n    socket.create_connection(('127.0.0.1', {port}), timeout=10)\n    print('connected')\n\
         except OSError as e:\n    print('blocked', e)\n"
    );
    let sandbox = Sandbox::new(system_python(), Limits::default());
    assert_eq!(sandbox.check().unwrap(), Isolation::Isolated);
    let ex = sandbox.run(tmp.path(), "net", &code, &[]).await.unwrap();
    assert!(ex.success(), "{ex:?}");
    assert_eq!(ex.network, Isolation::Isolated);
    assert!(ex.stdout.starts_with("blocked"), "{ex:?}");
    // The explicit opt-out really connects, so the refusal above is the jail's doing.
    let open = sandbox.clone().with_policy(Policy::Unconfined);
    let ex = open.run(tmp.path(), "net", &code, &[]).await.unwrap();
    assert!(matches!(ex.network, Isolation::Unavailable(_)), "{ex:?}");
    assert!(ex.stdout.starts_with("connected"), "{ex:?}");
}

#[tokio::test]
async fn the_data_files_are_readable_and_read_only_and_outputs_come_back() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("lake").join("data.csv");
    let other = tmp.path().join("lake").join("not-given.csv");
    std::fs::create_dir_all(data.parent().unwrap()).unwrap();
    std::fs::write(&data, "a,b\n1,2\n").unwrap();
    std::fs::write(&other, "secret\n").unwrap();
    let workdir = tmp.path().join("run");
    let code = format!(
        "import os\n\
         print(open({data:?}).read().splitlines()[0])\n\
         print('other visible', os.path.exists({other:?}))\n\
         os.makedirs('out', exist_ok=True)\n\
         open('out/result.csv', 'w').write('written in the working directory')\n\
         try:\n    open({data:?}, 'a').write('9,9\\n')\n    print('data written')\n\
         except OSError as e:\n    print('data refused', e.errno)\n"
    );
    let sandbox = Sandbox::new(system_python(), Limits::default());
    let ex = sandbox
        .run(&workdir, "write", &code, std::slice::from_ref(&data))
        .await
        .unwrap();
    assert!(ex.success(), "{ex:?}");
    assert!(
        ex.stdout.starts_with("a,b\n"),
        "the data is readable: {ex:?}"
    );
    assert!(ex.stdout.contains("other visible False"), "{ex:?}");
    // EROFS (30), or EACCES (13) first when the jail's uid is not the file's owner.
    assert!(
        ex.stdout.contains("data refused 30") || ex.stdout.contains("data refused 13"),
        "{ex:?}"
    );
    assert_eq!(std::fs::read_to_string(&data).unwrap(), "a,b\n1,2\n");
    assert_eq!(
        std::fs::read_to_string(workdir.join("out/result.csv")).unwrap(),
        "written in the working directory"
    );
}

/// A script that finished is not failed by an abort in the interpreter's teardown (as
/// deltalake's runtime does now and then, delta-io/delta-rs#2184; here a module's
/// finalizer calls `abort`), and it ends as `python script.py` would: late threads
/// joined, atexit handlers run, a file left open flushed, its exit code, a traceback of
/// its own frames.
#[tokio::test]
async fn a_finished_script_ends_as_python_would_and_teardown_cannot_fail_it() {
    let tmp = tempfile::tempdir().unwrap();
    let finished = "import atexit, os, sys, threading, time, types\n\
        native = types.ModuleType('native_like')\n\
        class Runtime:\n    def __del__(self):\n        os.abort()\n\
        native.rt = Runtime()\n\
        sys.modules['native_like'] = native\n\
        left_open = open('left-open.txt', 'w')\n\
        left_open.write('flushed')\n\
        def late():\n    time.sleep(0.3)\n    print('late thread', flush=True)\n\
        threading.Thread(target=late).start()\n\
        atexit.register(lambda: print('atexit'))\n\
        print(__name__, os.path.basename(__file__), sys.argv[1:], flush=True)\n\
        sys.exit(int(os.environ.get('CODE', '3')))\n";
    let failing = "def f():\n    return 1 / 0\nprint('before')\nf()\n";
    let sandbox = Sandbox::new(system_python(), Limits::default());
    for policy in [Policy::Jail, Policy::Unconfined] {
        let sandbox = sandbox.clone().with_policy(policy);
        let workdir = tmp.path().join(format!("{policy:?}"));
        let ex = sandbox.run(&workdir, "ends", finished, &[]).await.unwrap();
        assert_eq!((ex.exit_code, ex.signal), (Some(3), None), "{ex:?}");
        assert_eq!(
            ex.stdout, "__main__ ends.py []\nlate thread\natexit\n",
            "{ex:?}"
        );
        assert_eq!(
            std::fs::read_to_string(workdir.join("left-open.txt")).unwrap(),
            "flushed"
        );
        let ex = sandbox.run(&workdir, "fails", failing, &[]).await.unwrap();
        assert_eq!((ex.exit_code, ex.stdout.as_str()), (Some(1), "before\n"));
        let frames: Vec<&str> = ex.stderr.lines().filter(|l| l.contains("File ")).collect();
        assert_eq!(frames.len(), 2, "{}", ex.stderr);
        assert!(
            frames.iter().all(|l| l.contains("fails.py")),
            "{}",
            ex.stderr
        );
        assert!(ex.stderr.contains("ZeroDivisionError"), "{}", ex.stderr);
        let ex = sandbox.run(&workdir, "bad", "x = (\n", &[]).await.unwrap();
        assert_eq!(ex.exit_code, Some(1));
        assert!(
            ex.stderr.contains("bad.py\", line 1") && ex.stderr.contains("SyntaxError"),
            "{}",
            ex.stderr
        );
        assert!(!ex.stderr.contains("<string>"), "{}", ex.stderr);
    }
}

#[tokio::test]
async fn huge_output_is_cut_to_the_budget_without_hanging() {
    let tmp = tempfile::tempdir().unwrap();
    // 50 MB on stdout between a first and a last line; some on stderr too.
    let code = "import sys\n\
        sys.stdout.write('FIRST\\n')\n\
        line = 'x' * 999 + '\\n'\n\
        for _ in range(50_000):\n    sys.stdout.write(line)\n\
        sys.stdout.write('LAST\\n')\n\
        sys.stderr.write('e' * 100_000)\n";
    let ex = run(Limits::default(), tmp.path(), code).await;
    assert!(ex.success(), "{ex:?}");
    assert_eq!(ex.stdout_bytes, 6 + 50_000 * 1000 + 5);
    assert_eq!(ex.stderr_bytes, 100_000);
    let budget = Limits::default().output_budget;
    for text in [&ex.stdout, &ex.stderr] {
        assert!(text.len() <= budget + 40, "{} bytes kept", text.len());
        assert!(text.contains(" bytes cut …]"), "no marker");
    }
    assert!(ex.stdout.starts_with("FIRST\nxxx"));
    assert!(ex.stdout.ends_with("xxx\nLAST\n"));
    // What was kept and what was cut add up to what was printed.
    let cut: u64 = ex
        .stdout
        .split("[… ")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let marker = format!("\n[… {cut} bytes cut …]\n");
    assert_eq!(ex.stdout.matches(&marker).count(), 1);
    assert_eq!(
        cut + (ex.stdout.len() - marker.len()) as u64,
        ex.stdout_bytes
    );
}

#[tokio::test]
async fn writing_past_the_file_size_limit_fails() {
    let tmp = tempfile::tempdir().unwrap();
    let limits = Limits {
        file_size: 1 << 20,
        ..Limits::default()
    };
    let code =
        "with open('big.bin', 'wb') as f:\n    f.write(b'\\0' * (2 << 20))\nprint('wrote')\n";
    let ex = run(limits, tmp.path(), code).await;
    assert!(!ex.success(), "{ex:?}");
    assert!(!ex.stdout.contains("wrote"));
    assert_eq!(
        ex.limit_hit.as_deref(),
        Some("file size (1.0 MiB)"),
        "{ex:?}"
    );
    let len = std::fs::metadata(tmp.path().join("big.bin")).unwrap().len();
    assert!(len <= 1 << 20, "{len} bytes written");
}

#[tokio::test]
async fn the_rlimits_are_set_in_the_child() {
    let tmp = tempfile::tempdir().unwrap();
    let limits = Limits {
        address_space: 3 << 30,
        cpu_seconds: 77,
        file_size: 5 << 20,
        processes: 99,
        ..Limits::default()
    };
    let code = "import resource as r\n\
        for n in ('AS', 'CPU', 'FSIZE', 'NPROC', 'CORE'):\n    \
            print(n, *r.getrlimit(getattr(r, 'RLIMIT_' + n)))\n";
    let sandbox = Sandbox::new(system_python(), limits);
    let ex = sandbox.run(tmp.path(), "limits", code, &[]).await.unwrap();
    assert!(ex.success(), "{ex:?}");
    let lines: Vec<&str> = ex.stdout.lines().collect();
    assert_eq!(lines[0], format!("AS {0} {0}", 3u64 << 30));
    assert_eq!(lines[1], "CPU 77 78");
    assert_eq!(lines[2], format!("FSIZE {0} {0}", 5u64 << 20));
    assert_eq!(lines[4], "CORE 0 0");
    let nproc: u64 = lines[3].split(' ').nth(1).unwrap().parse().unwrap();
    assert_eq!(nproc, 99, "per-run in its own user namespace");
}

/// `--python python3` is looked up on PATH; a bare name PATH lacks is named as such.
#[test]
fn a_bare_python_name_is_resolved_on_path() {
    let tmp = tempfile::tempdir().unwrap();
    let script = tmp.path().join("s.py");
    std::fs::write(&script, "import sys\nprint(sys.version_info[0])\n").unwrap();
    let run = |python: &str| {
        lakestar()
            .args(["sandbox-run", script.to_str().unwrap(), "--python", python])
            .arg("--workdir")
            .arg(tmp.path().join(python))
            .output()
            .unwrap()
    };
    let out = run("python3");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "3");

    let out = run("no-such-python-4711");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no-such-python-4711: not found on PATH"),
        "{err}"
    );
}

#[test]
fn a_missing_python_is_named_and_exits_2() {
    let tmp = tempfile::tempdir().unwrap();
    let script = tmp.path().join("s.py");
    std::fs::write(&script, "print(1)\n").unwrap();
    let out = lakestar()
        .args(["sandbox-run", script.to_str().unwrap(), "--python"])
        .arg("/nonexistent/bin/python3")
        .arg("--workdir")
        .arg(tmp.path().join("w"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("/nonexistent/bin/python3"), "{err}");

    let out = lakestar()
        .args([
            "setup",
            "python",
            "--python",
            "/nonexistent/bin/python3",
            "--venv",
        ])
        .arg(tmp.path().join("venv"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("/nonexistent/bin/python3"), "{err}");
}

#[test]
fn setup_python_makes_a_venv_with_the_data_stack_and_a_second_run_is_a_check() {
    let python = test_python();
    let venv = python.parent().unwrap().parent().unwrap().to_path_buf();
    // The venv is preferred over python3 on PATH.
    let resolved = Python::resolve(None, &venv).unwrap();
    assert_eq!(resolved.origin, PythonOrigin::Venv(venv.clone()));
    assert_eq!(resolved.path, python);
    assert_eq!(
        resolved.missing_modules(DEFAULT_MODULES).unwrap(),
        Vec::<String>::new()
    );
    assert_eq!(
        system_python()
            .missing_modules(&["json", "no_such_module_here"])
            .unwrap(),
        ["no_such_module_here"]
    );
    // Setting up again only checks.
    let out = lakestar()
        .args(["setup", "python", "--venv"])
        .arg(&venv)
        .output()
        .unwrap();
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("Requirement already satisfied: pandas"),
        "{stdout}"
    );
    assert!(stdout.contains("installed: pandas "), "{stdout}");
    assert!(!stdout.contains("(not found)"), "{stdout}");
}

#[tokio::test]
async fn a_venv_reached_through_a_linked_directory_runs_in_the_jail() {
    let venv = test_python()
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .to_path_buf();
    let tmp = tempfile::tempdir().unwrap();
    let link = tmp.path().join("linked-venv");
    std::os::unix::fs::symlink(&venv, &link).unwrap();
    let python = Python::resolve(None, &link).unwrap();
    let work = tmp.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let ex = Sandbox::new(python, Limits::default())
        .run(
            &work,
            "linked",
            "import sys, pandas\nprint(sys.prefix != sys.base_prefix)\n",
            &[],
        )
        .await
        .unwrap();
    assert!(ex.success(), "{ex:?}");
    assert_eq!(ex.stdout, "True\n");
}

#[tokio::test]
async fn the_data_stack_runs_under_the_default_limits() {
    let python = Python::resolve(None, test_python().parent().unwrap().parent().unwrap()).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let code = "import numpy as np, pandas as pd, pyarrow, scipy.stats, openpyxl\n\
        import sklearn.ensemble, matplotlib.pyplot as plt\n\
        df = pd.DataFrame(np.random.rand(20_000, 8), columns=list('abcdefgh'))\n\
        df.to_parquet('d.parquet')\n\
        df = pd.read_parquet('d.parquet')\n\
        df.head(100).to_excel('d.xlsx')\n\
        sklearn.ensemble.RandomForestRegressor(n_estimators=10, n_jobs=-1).fit(df[list('abcdefg')], df['h'])\n\
        df.plot()\n\
        plt.savefig('p.png')\n\
        print(len(pd.read_excel('d.xlsx')), scipy.stats.pearsonr(df.a, df.b)[0] < 1)\n";
    let ex = Sandbox::new(python, Limits::default())
        .run(tmp.path(), "stack", code, &[])
        .await
        .unwrap();
    assert!(ex.success(), "{ex:?}");
    assert_eq!(ex.stdout, "100 True\n");
    assert!(tmp.path().join("p.png").is_file());
}

#[test]
fn an_interrupted_setup_is_refused_then_redone() {
    let tmp = tempfile::tempdir().unwrap();
    let venv = tmp.path().join("venv");
    // pip fails (a path that is no project, so no network): the setup stops half-way.
    let no_project = tmp.path().join("no-such-project").display().to_string();
    let e = setup_venv_with(&venv, None, &[no_project.as_str()]).unwrap_err();
    assert!(
        e.is_user_error() && e.to_string().contains("pip could not install"),
        "{e}"
    );
    let e = Python::resolve(None, &venv).unwrap_err();
    assert!(e.to_string().contains("incomplete"), "{e}");
    // Setting up again finishes it.
    let py = setup_venv_with(&venv, None, &[]).unwrap();
    assert_eq!(Python::resolve(None, &venv).unwrap(), py);
    // A venv whose interpreter went missing is rebuilt.
    std::fs::remove_file(venv.join("bin/python")).unwrap();
    assert!(Python::resolve(None, &venv).is_err());
    let py = setup_venv_with(&venv, None, &[]).unwrap();
    assert_eq!(py.path, venv.join("bin/python"));
    assert_eq!(Python::resolve(None, &venv).unwrap(), py);
}

#[test]
fn a_directory_that_is_not_a_venv_is_left_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("precious");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("notes.txt"), "keep me").unwrap();
    let e = setup_venv_with(&dir, None, &[]).unwrap_err();
    assert!(e.to_string().contains("not a Python venv"), "{e}");
    assert!(Python::resolve(None, &dir).is_err());
    assert_eq!(
        std::fs::read_to_string(dir.join("notes.txt")).unwrap(),
        "keep me"
    );
}
