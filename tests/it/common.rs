//! Helpers shared by the integration tests.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// The shared lakes directory (`../shared/lakes` from the workspace root).
pub fn shared_lakes() -> PathBuf {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/lakes");
    assert!(
        p.is_dir(),
        "{} is missing: the tests need ../shared beside the repo",
        p.display()
    );
    p
}

/// The lakestar binary under test. Its models directory and configuration directory are
/// ones that never exist, and the LLM settings of the environment are removed, so that
/// what a developer installed or configured does not change what the tests see.
pub fn lakestar() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_lakestar"));
    let nowhere = Path::new(env!("CARGO_TARGET_TMPDIR")).join("nothing-configured-here");
    c.env_remove("LAKESTAR_LOG")
        .env_remove("LAKESTAR_HF_ENDPOINT")
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("LAKESTAR_MODEL")
        .env_remove("LAKESTAR_CONTEXT_TOKENS")
        .env_remove("LAKESTAR_LLM_TIMEOUT")
        .env_remove("LAKESTAR_VENV")
        .env_remove("LAKESTAR_READING_RULES")
        .env("XDG_CONFIG_HOME", &nowhere)
        .env(
            "LAKESTAR_MODELS",
            Path::new(env!("CARGO_TARGET_TMPDIR")).join("no-models-here"),
        );
    c
}

/// The Python of a venv made by `lakestar setup python --venv target/test-venv`, with
/// pandas and the rest of the data stack. Set up once per test binary; the venv stays
/// under target/ between runs, so later setups only check it (quick), and an interrupted
/// one is redone by the setup itself.
pub fn test_python() -> PathBuf {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON
        .get_or_init(|| {
            let target = Path::new(env!("CARGO_TARGET_TMPDIR")).parent().unwrap();
            let venv = target.join("test-venv");
            let out = lakestar()
                .args([
                    "setup",
                    "python",
                    "--package",
                    "nbformat",
                    "--package",
                    "deltalake",
                    "--package",
                    "pyiceberg[sql-sqlite,pyarrow]",
                    "--package",
                    "moto[server]",
                    "--venv",
                    venv.to_str().unwrap(),
                ])
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "lakestar setup python failed: {}\nstdout: {}\nstderr: {}",
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            venv.join("bin").join("python")
        })
        .clone()
}

/// The system python3, for tests whose generated scripts need no pandas.
pub fn python3() -> String {
    let out = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 is on PATH");
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// Run lakestar with `args` in `cwd`; panic with its output unless it succeeds.
pub fn run_ok(cwd: &Path, args: &[&str]) -> String {
    run_ok_env(cwd, args, &[])
}

/// `lakestar search ARGS`: its stdout, which is empty exactly when it exits 1 (no
/// match, as ripgrep); any other failure fails the test.
pub fn search_out(cwd: &Path, args: &[&str]) -> String {
    let out = run(cwd, args);
    let stdout = String::from_utf8(out.stdout).unwrap();
    match out.status.code() {
        Some(0) => assert!(!stdout.is_empty(), "exit 0 with no hit: {args:?}"),
        Some(1) => assert!(stdout.is_empty(), "exit 1 with hits: {stdout}"),
        _ => panic!(
            "lakestar {args:?} failed: {}\nstderr: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ),
    }
    stdout
}

/// [`run_ok`] with extra environment variables.
pub fn run_ok_env(cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> String {
    let out = lakestar()
        .envs(env.iter().copied())
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap();
    stdout_of_success(out, &format!("lakestar {args:?}"))
}

/// Run Python `code` (then `args`) with the test venv's interpreter in `cwd`, through
/// the sandbox's launcher: deltalake's runtime can abort the interpreter's teardown
/// after the code has done its work (delta-io/delta-rs#2184); its stdout.
pub fn run_python(cwd: &Path, code: &str, args: &[&str]) -> String {
    let script = tempfile::Builder::new().suffix(".py").tempfile().unwrap();
    std::fs::write(script.path(), code).unwrap();
    let out = Command::new(test_python())
        .args(["-c", include_str!("../../src/agent/sandbox/launcher.py")])
        .arg(script.path())
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap();
    stdout_of_success(out, "python")
}

/// The stdout of a command that must have succeeded (`what` names it when it did not).
pub fn stdout_of_success(out: Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what} failed: {}\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// One JSON value per line of `out` (what `search --json` prints).
pub fn json_lines(out: &str) -> Vec<Value> {
    out.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The `path` of every search hit, in order.
pub fn paths(hits: &[Value]) -> Vec<String> {
    hits.iter()
        .map(|h| h["path"].as_str().unwrap().to_string())
        .collect()
}

/// The hits of a search before those that fill the list to `k` (folded members and
/// companions listed after the hits that hold them).
pub fn unfilled(hits: Vec<Value>) -> Vec<Value> {
    hits.into_iter()
        .filter(|h| !h["reasons"].to_string().contains("fills the list"))
        .collect()
}

/// Run lakestar with `args` in `cwd`, whatever the outcome.
pub fn run(cwd: &Path, args: &[&str]) -> Output {
    lakestar().args(args).current_dir(cwd).output().unwrap()
}

/// Run `lakestar index LAKE --json ...` and parse its report.
pub fn index_json(lake: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["index", lake.to_str().unwrap(), "--json"];
    args.extend_from_slice(extra);
    let out = run_ok(lake, &args);
    let v: Value =
        serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("bad JSON {out:?}: {e}"));
    v
}

/// Index the read-only shared lake `rel` (e.g. `dabstep/context`) into an index in a
/// fresh temp directory; returns the directory (kept alive by the caller) and the index.
pub fn index_shared(rel: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let idx = index_into(tmp.path(), &shared_lakes().join(rel));
    (tmp, idx)
}

/// Index `lake` into `dir/idx` (run from `dir`); returns the index directory.
pub fn index_into(dir: &Path, lake: &Path) -> PathBuf {
    let idx = dir.join("idx");
    run_ok(
        dir,
        &[
            "index",
            lake.to_str().unwrap(),
            "--index",
            idx.to_str().unwrap(),
        ],
    );
    idx
}

/// Copy a directory tree (the shared lakes are read-only, tests need writable copies).
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), &dest).unwrap();
            // Copies keep the read-only mode of the shared files; tests modify them.
            let mut perm = std::fs::metadata(&dest).unwrap().permissions();
            #[allow(clippy::permissions_set_readonly_false)]
            perm.set_readonly(false);
            std::fs::set_permissions(&dest, perm).unwrap();
        }
    }
}

/// Count the data files in a tree (what the crawl should see: no hidden files).
pub fn count_files(dir: &Path) -> u64 {
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        if e.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        if e.file_type().unwrap().is_dir() {
            n += count_files(&e.path());
        } else {
            n += 1;
        }
    }
    n
}

/// The integer field `k` of a JSON object.
pub fn n(v: &Value, k: &str) -> u64 {
    v.get(k)
        .and_then(Value::as_u64)
        .unwrap_or_else(|| panic!("no integer {k} in {v}"))
}

/// Check the counts of an index report: `expected` lists (field, value); every other
/// integer field of the contract must be present.
pub fn assert_counts(v: &Value, expected: &[(&str, u64)]) {
    let fields = [
        "files_seen",
        "added",
        "modified",
        "deleted",
        "renamed",
        "unchanged",
        "analyzed",
        "cache_hits",
        "errors",
    ];
    let obj = v.as_object().unwrap();
    assert_eq!(
        obj.len(),
        fields.len() + 1,
        "exactly the contract's fields: {v}"
    );
    assert!(obj["seconds"].is_f64(), "{v}");
    for f in fields {
        n(v, f);
    }
    for (k, want) in expected {
        assert_eq!(n(v, k), *want, "{k} in {v}");
    }
}

/// Open the catalog of the index at `dir` and check its consistency.
pub fn check_catalog(dir: &Path) -> lakestar::index::CatalogReader {
    let cat = lakestar::index::CatalogReader::open(dir).unwrap();
    let problems = cat.check_integrity().unwrap();
    assert!(problems.is_empty(), "catalog problems: {problems:?}");
    cat
}

/// The host pid of a live process whose command line contains every one of `needles`
/// (a jailed script's pid inside its PID namespace is not the host's, but its command
/// line names its script's path).
pub fn process_with(needles: &[&str]) -> Option<i32> {
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
        let pid: i32 = e.file_name().to_str()?.parse().ok()?;
        let cmd = String::from_utf8_lossy(&std::fs::read(e.path().join("cmdline")).ok()?)
            .replace('\0', " ");
        let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
        let zombie = stat.contains(") Z ");
        (!zombie && needles.iter().all(|n| cmd.contains(n))).then_some(pid)
    })
}

/// `lakestar ask` about `csv` by `cmd` (the binary, with what environment a test gives
/// it), which configures no model: it must stop with a user error; returns its stderr.
pub fn ask_without_a_model(mut cmd: Command, cwd: &Path, csv: &Path) -> String {
    let out = cmd
        .args(["ask", "Rows?", "--files"])
        .arg(csv)
        .current_dir(cwd)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Release a writer lock this test process holds and wait until another process can take
/// it. The lock is an flock on an open file description, and a child that another test
/// thread is forking at that moment shares it until its exec (or the jail's first
/// `close_range`): on a loaded machine a writer started right after the drop can be
/// refused "locked by pid" of this process.
pub fn release_lock(held: lakestar::index::lock::WriterLock) {
    let dir = held.dir().to_path_buf();
    drop(held);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        match lakestar::index::lock::WriterLock::acquire(&dir) {
            Ok(again) => return drop(again),
            Err(_) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            Err(e) => panic!("the writer lock of {} stayed held: {e}", dir.display()),
        }
    }
}
