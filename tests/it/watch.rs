//! `lakestar watch`: the real binary on temp lakes. Every change must become visible to
//! `search` and `status` (run as separate processes while the watcher runs), and the
//! catalog must end up equal to a fresh `index` of the same tree. Batches are followed
//! through `--json` lines; waits poll with generous deadlines and never assert timings.

use crate::common::*;
use lakestar::index::analyze::Content;
use lakestar::index::CatalogReader;
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a change may take to become visible before the test fails. Generous: the
/// tests share two cores with other builds, and this is a debug build.
const DEADLINE: Duration = Duration::from_secs(120);
/// The same for a burst of thousands of files.
const BURST_DEADLINE: Duration = Duration::from_secs(600);

/// A running `lakestar watch --json`.
struct Watcher {
    child: Child,
    batches: Receiver<Value>,
    stderr: Arc<Mutex<String>>,
}

impl Watcher {
    fn start(lake: &Path, idx: &Path) -> Watcher {
        Self::start_env(lake, idx, &[])
    }

    fn start_env(lake: &Path, idx: &Path, env: &[(&str, &str)]) -> Watcher {
        let mut child = lakestar()
            .envs(env.iter().copied())
            .args(["watch", lake.to_str().unwrap(), "--index"])
            .arg(idx)
            .args(["--json", "--debounce", "200", "--jobs", "2"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (tx, batches) = std::sync::mpsc::channel();
        let out = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                let v: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("watch printed a non-JSON line {line:?}: {e}"));
                if tx.send(v).is_err() {
                    break;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let (err, sink) = (child.stderr.take().unwrap(), Arc::clone(&stderr));
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(err).lines().map_while(Result::ok) {
                sink.lock().unwrap().push_str(&(line + "\n"));
            }
        });
        Watcher {
            child,
            batches,
            stderr,
        }
    }

    fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// The next batch the watcher committed.
    fn next_batch(&self, deadline: Duration) -> Value {
        match self.batches.recv_timeout(deadline) {
            Ok(v) => v,
            Err(RecvTimeoutError::Timeout) => panic!(
                "no batch from watch within {deadline:?}; stderr:\n{}",
                self.stderr()
            ),
            Err(RecvTimeoutError::Disconnected) => {
                panic!("watch exited; stderr:\n{}", self.stderr())
            }
        }
    }

    /// Batches until one satisfies `pred` (the others are passed over); the visible
    /// effect of a batch can precede its line, so tests wait for the line itself.
    fn batch_where(&self, what: &str, deadline: Duration, pred: impl Fn(&Value) -> bool) -> Value {
        let t = Instant::now();
        loop {
            let left = deadline.checked_sub(t.elapsed()).unwrap_or_else(|| {
                panic!(
                    "no batch with {what} within {deadline:?}; stderr:\n{}",
                    self.stderr()
                )
            });
            let b = self.next_batch(left);
            if pred(&b) {
                return b;
            }
        }
    }

    fn signal(&self, sig: i32) {
        // SAFETY: kill(2) on our own child's pid, which it holds until waited for.
        let r = unsafe { libc::kill(self.child.id() as i32, sig) };
        assert_eq!(r, 0, "kill({sig}) failed");
    }

    /// SIGTERM, then the exit status (the watcher finishes its batch first).
    fn terminate(mut self) -> std::process::ExitStatus {
        self.signal(libc::SIGTERM);
        let t = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                t.elapsed() < DEADLINE,
                "watch did not stop on SIGTERM; stderr:\n{}",
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Poll `ok` until it holds; fail after `deadline`, saying what was awaited.
fn until(what: &str, deadline: Duration, w: &Watcher, mut ok: impl FnMut() -> bool) {
    let t = Instant::now();
    while !ok() {
        assert!(
            t.elapsed() < deadline,
            "{what}: not seen within {deadline:?}; watch stderr:\n{}",
            w.stderr()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn write(lake: &Path, rel: &str, body: &str) {
    let p = lake.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, body).unwrap();
}

/// A small CSV whose header carries `word` (so that search can find it).
fn csv(word: &str, rows: usize) -> String {
    let mut s = format!("id,{word},amount\n");
    for i in 0..rows {
        s.push_str(&format!("{i},{word}{},{}\n", i % 5, i * 7));
    }
    s
}

fn search(idx: &Path, q: &str) -> Vec<String> {
    let out = crate::common::search_out(
        idx,
        &["search", "--index", idx.to_str().unwrap(), "--json", q],
    );
    paths(&json_lines(&out))
}

fn status_files(idx: &Path) -> u64 {
    let out = run_ok(idx, &["status", "--index", idx.to_str().unwrap(), "--json"]);
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    n(&v, "files")
}

/// What must match between two indexes of the same tree, per path: hash, state,
/// format, analyzer, error, time coverage and the description itself.
fn snapshot(idx: &Path) -> BTreeMap<String, String> {
    let cat = check_catalog(idx);
    let mut out = BTreeMap::new();
    for (path, row) in cat.load_files().unwrap() {
        let desc = match (&row.hash, &row.analyzer) {
            (Some(h), Some(a)) => cat
                .description(h, a)
                .unwrap()
                .map(|d| serde_json::to_string(&d).unwrap()),
            _ => None,
        };
        let key = format!(
            "{:?} {:?} {} {:?} {:?} {:?} {desc:?}",
            row.hash.map(hex),
            row.state,
            row.format.as_str(),
            row.analyzer,
            row.error,
            row.time
        );
        out.insert(path, key);
    }
    out
}

fn hex(h: [u8; 32]) -> String {
    h.iter().map(|b| format!("{b:02x}")).collect()
}

fn catalog_paths(idx: &Path) -> Vec<String> {
    snapshot(idx).into_keys().collect()
}

/// The catalog at `idx` equals that of a fresh index of `lake` (into another directory).
fn assert_like_fresh(lake: &Path, idx: &Path) {
    let fresh = tempfile::tempdir().unwrap();
    let fresh_idx = fresh.path().join("idx");
    run_ok(
        fresh.path(),
        &[
            "index",
            lake.to_str().unwrap(),
            "--index",
            fresh_idx.to_str().unwrap(),
            "--embedder",
            "hash",
        ],
    );
    let (got, want) = (snapshot(idx), snapshot(&fresh_idx));
    let only = |a: &BTreeMap<String, String>, b: &BTreeMap<String, String>| -> Vec<String> {
        a.keys().filter(|k| !b.contains_key(*k)).cloned().collect()
    };
    assert_eq!(
        only(&got, &want),
        Vec::<String>::new(),
        "only in the watched index"
    );
    assert_eq!(
        only(&want, &got),
        Vec::<String>::new(),
        "only in the fresh index"
    );
    for (path, row) in &want {
        assert_eq!(&got[path], row, "{path} differs from a fresh index");
    }
}

/// The rows of the description of `path` (a table), if the catalog has it.
fn table_rows(idx: &Path, path: &str) -> Option<(u64, u64)> {
    let cat = CatalogReader::open(idx).ok()?;
    let row = cat.file(path).ok()??;
    let d = cat
        .description(&row.hash?, row.analyzer.as_deref()?)
        .ok()??;
    match d.content {
        Content::Table(t) => Some((t.rows, d.size)),
        _ => None,
    }
}

/// `count` files of a few rows each under `dir/`, 100 per subdirectory, as fast as
/// possible; the first carries the word `first{tag}`, the others `b{tag}{i}` columns.
fn burst(lake: &Path, dir: &str, tag: &str, range: std::ops::Range<usize>) {
    for i in range {
        let rel = format!("{dir}/d{:03}/f{i:05}.csv", i / 100);
        write(lake, &rel, &csv(&format!("b{tag}{i}"), 3));
    }
}

/// `n` small CSVs under `many/`, each with a word of its own.
fn write_many(lake: &Path, n: usize) {
    for i in 0..n {
        write(
            lake,
            &format!("many/t{i:02}.csv"),
            &csv(&format!("w{i}x"), 5),
        );
    }
}

fn setup() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let lake = tmp.path().join("lake");
    write(&lake, "base/alpha.csv", &csv("heliotrope", 20));
    write(&lake, "base/beta.csv", &csv("marigold", 20));
    write(&lake, "notes.md", "# Notes\n\nNothing here yet.\n");
    // The index inside the lake, where it usually is: its own writes must not loop.
    let idx = lake.join(".lakestar");
    (tmp, lake, idx)
}

#[test]
fn watch_follows_every_kind_of_change() {
    let (_tmp, lake, idx) = setup();
    let w = Watcher::start(&lake, &idx);
    let first = w.next_batch(DEADLINE);
    assert_eq!(first["kind"], "reconcile", "{first}");
    assert_eq!(n(&first, "added"), 3, "{first}");

    // Create: a new file in a new directory.
    write(&lake, "sales/orders.csv", &csv("zebrafinch", 10));
    until("created file in search", DEADLINE, &w, || {
        search(&idx, "zebrafinch").first().map(String::as_str) == Some("sales/orders.csv")
    });
    assert_eq!(status_files(&idx), 4);

    // Modify: new content, new description.
    write(&lake, "sales/orders.csv", &csv("quokka", 12));
    until("modified file in search", DEADLINE, &w, || {
        search(&idx, "quokka").first().map(String::as_str) == Some("sales/orders.csv")
    });
    assert_eq!(table_rows(&idx, "sales/orders.csv").unwrap().0, 12);

    // Rename: the description moves with the file, nothing is analyzed again.
    std::fs::rename(
        lake.join("sales/orders.csv"),
        lake.join("sales/orders-2025.csv"),
    )
    .unwrap();
    let b = w.batch_where("a rename", DEADLINE, |b| n(b, "renamed") > 0);
    assert_eq!((n(&b, "renamed"), n(&b, "analyzed")), (1, 0), "{b}");
    let p = catalog_paths(&idx);
    assert!(p.contains(&"sales/orders-2025.csv".into()) && !p.contains(&"sales/orders.csv".into()));
    assert_eq!(search(&idx, "quokka")[0], "sales/orders-2025.csv");

    // Delete.
    std::fs::remove_file(lake.join("notes.md")).unwrap();
    until("deleted file gone from status", DEADLINE, &w, || {
        status_files(&idx) == 3
    });

    // Directory move: every file below is renamed.
    std::fs::rename(lake.join("base"), lake.join("archive")).unwrap();
    let b = w.batch_where("a directory move", DEADLINE, |b| n(b, "renamed") > 0);
    assert_eq!(
        (n(&b, "renamed"), n(&b, "analyzed"), n(&b, "deleted")),
        (2, 0, 0),
        "{b}"
    );
    let p = catalog_paths(&idx);
    assert!(p.contains(&"archive/alpha.csv".into()) && !p.iter().any(|p| p.starts_with("base/")));
    assert_eq!(search(&idx, "heliotrope")[0], "archive/alpha.csv");

    // An editor's atomic save: a temp file written, then renamed over the original.
    write(&lake, "archive/beta.csv.tmp-4242", &csv("nasturtium", 30));
    std::fs::rename(
        lake.join("archive/beta.csv.tmp-4242"),
        lake.join("archive/beta.csv"),
    )
    .unwrap();
    until("atomically saved file", DEADLINE, &w, || {
        search(&idx, "nasturtium").first().map(String::as_str) == Some("archive/beta.csv")
    });
    assert!(!catalog_paths(&idx).iter().any(|p| p.contains(".tmp-")));
    assert_eq!(table_rows(&idx, "archive/beta.csv").unwrap().0, 30);

    // A file written in pieces over about a second is indexed whole.
    let mut body = csv("sunflower", 0);
    let path = lake.join("archive/slow.csv");
    let mut f = std::fs::File::create(&path).unwrap();
    f.write_all(body.as_bytes()).unwrap();
    for piece in 0..10 {
        let mut chunk = String::new();
        for i in 0..50 {
            let r = piece * 50 + i;
            chunk.push_str(&format!("{r},sunflower{},{}\n", r % 5, r * 7));
        }
        f.write_all(chunk.as_bytes()).unwrap();
        f.flush().unwrap();
        body.push_str(&chunk);
        std::thread::sleep(Duration::from_millis(100));
    }
    drop(f);
    let size = body.len() as u64;
    until("slowly written file indexed whole", DEADLINE, &w, || {
        table_rows(&idx, "archive/slow.csv") == Some((500, size))
    });

    // A whole folder deleted.
    write(&lake, "tmp/a/1.csv", &csv("x1", 2));
    write(&lake, "tmp/a/2.csv", &csv("x2", 2));
    write(&lake, "tmp/b/3.csv", &csv("x3", 2));
    until("folder's files indexed", DEADLINE, &w, || {
        catalog_paths(&idx)
            .iter()
            .filter(|p| p.starts_with("tmp/"))
            .count()
            == 3
    });
    std::fs::remove_dir_all(lake.join("tmp")).unwrap();
    until("deleted folder gone", DEADLINE, &w, || {
        !catalog_paths(&idx).iter().any(|p| p.starts_with("tmp/"))
    });

    // The writer lock is held: another writer is refused, readers were served above.
    let other = run(&lake, &["index", lake.to_str().unwrap()]);
    assert_eq!(other.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&other.stderr).contains("locked by pid"));

    let stderr_before = w.stderr();
    let status = w.terminate();
    assert!(status.success(), "watch exit {status}; {stderr_before}");
    assert_like_fresh(&lake, &idx);
}

#[test]
fn watch_takes_a_burst_of_5000_files() {
    const N: usize = 5000;
    let (_tmp, lake, idx) = setup();
    let w = Watcher::start(&lake, &idx);
    assert_eq!(w.next_batch(DEADLINE)["kind"], "reconcile");
    burst(&lake, "burst", "x", 0..N);
    let mut added = 0;
    while added < N as u64 {
        let b = w.next_batch(BURST_DEADLINE);
        assert_eq!(b["kind"], "events", "{b}");
        assert_eq!(n(&b, "errors"), 0, "{b}");
        added += n(&b, "added");
    }
    assert_eq!(added, N as u64);
    assert_eq!(status_files(&idx), 3 + N as u64);
    assert_eq!(search(&idx, "bx4321")[0], "burst/d043/f04321.csv");
    assert!(w.terminate().success());
    assert_like_fresh(&lake, &idx);
}

#[test]
fn sigkill_mid_burst_then_restart_reconciles() {
    let (_tmp, lake, idx) = setup();
    let w = Watcher::start(&lake, &idx);
    assert_eq!(w.next_batch(DEADLINE)["kind"], "reconcile");
    // A burst spread over a few seconds, killed as soon as its first batch landed.
    let writer = {
        let lake = lake.clone();
        std::thread::spawn(move || {
            for i in 0..2000 {
                burst(&lake, "burst", "k", i..i + 1);
                std::thread::sleep(Duration::from_millis(2));
            }
        })
    };
    let b = w.next_batch(DEADLINE);
    assert_eq!(b["kind"], "events", "{b}");
    let mut w = w;
    w.child.kill().unwrap(); // SIGKILL
    w.child.wait().unwrap();
    writer.join().unwrap();
    let committed = catalog_paths(&idx).len();
    assert!(
        committed < 3 + 2000,
        "killed after the whole burst: {committed}"
    );

    // More changes while nothing watches: a modification, a deletion, a move.
    write(&lake, "base/alpha.csv", &csv("gardenia", 25));
    std::fs::remove_file(lake.join("notes.md")).unwrap();
    std::fs::rename(lake.join("burst/d001"), lake.join("moved-d001")).unwrap();

    let w = Watcher::start(&lake, &idx);
    let r = w.next_batch(BURST_DEADLINE);
    assert_eq!(r["kind"], "reconcile", "{r}");
    assert_eq!(n(&r, "files_seen"), 2002, "{r}");
    assert!(w.terminate().success());
    assert_like_fresh(&lake, &idx);
    assert_eq!(search(&idx, "gardenia")[0], "base/alpha.csv");
}

#[test]
fn an_overflowing_event_queue_rescans() {
    // The kernel queues at most fs.inotify.max_queued_events (16,384 by default) events
    // per watcher; a stopped watcher cannot read them, and each new file makes at least
    // three (create, modify, close): a third of the queue plus 1,500 files overflow it.
    let queued: u64 = std::fs::read_to_string("/proc/sys/fs/inotify/max_queued_events")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(16_384);
    let files = (queued / 3 + 1500) as usize;
    let (_tmp, lake, idx) = setup();
    let w = Watcher::start(&lake, &idx);
    assert_eq!(w.next_batch(DEADLINE)["kind"], "reconcile");
    // The directories first, so that the watcher watches them before it is stopped
    // (files in a directory it does not watch yet make no events at all).
    for d in 0..=files / 100 {
        std::fs::create_dir_all(lake.join(format!("flood/d{d:03}"))).unwrap();
    }
    w.batch_where("the new directories", DEADLINE, |b| b["kind"] == "events");
    w.signal(libc::SIGSTOP);
    burst(&lake, "flood", "o", 0..files);
    w.signal(libc::SIGCONT);
    let b = w.batch_where("a rescan", BURST_DEADLINE, |b| b["kind"] == "rescan");
    assert!(n(&b, "errors") >= 1, "the overflow is reported: {b}");
    assert_eq!(n(&b, "files_seen"), 3 + files as u64, "{b}");
    assert_eq!(status_files(&idx), 3 + files as u64);
    assert!(w.terminate().success());
    assert_like_fresh(&lake, &idx);
}

#[test]
fn a_second_watcher_is_refused_and_sigint_stops_cleanly() {
    let (_tmp, lake, idx) = setup();
    let w = Watcher::start(&lake, &idx);
    assert_eq!(w.next_batch(DEADLINE)["kind"], "reconcile");
    let second = run(&lake, &["watch", lake.to_str().unwrap()]);
    assert_eq!(second.status.code(), Some(2), "{second:?}");
    assert!(String::from_utf8_lossy(&second.stderr).contains("locked by pid"));
    w.signal(libc::SIGINT);
    let mut w = w;
    let t = Instant::now();
    let status = loop {
        if let Some(s) = w.child.try_wait().unwrap() {
            break s;
        }
        assert!(t.elapsed() < DEADLINE, "watch ignored SIGINT");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "{status}");
    assert!(w.stderr().contains("stopped"), "{}", w.stderr());
    // The lock went with it.
    run_ok(&lake, &["index", lake.to_str().unwrap()]);
}

#[cfg(unix)]
#[test]
fn watch_follows_links_as_the_index_records_and_not_out_of_the_lake() {
    let (tmp, lake, idx) = setup();
    let outside = tmp.path().join("outside");
    write(&outside, "old.csv", &csv("saffron", 5));
    std::os::unix::fs::symlink(&outside, lake.join("ext")).unwrap();
    let (lake_s, idx_s) = (lake.to_str().unwrap(), idx.to_str().unwrap());
    run_ok(&lake, &["index", lake_s, "--index", idx_s, "--follow"]);
    let w = Watcher::start(&lake, &idx);
    let first = w.next_batch(DEADLINE);
    assert_eq!(
        (&first["kind"], n(&first, "errors")),
        (&"reconcile".into(), 1)
    );
    until("the recorded walk said on stderr", DEADLINE, &w, || {
        w.stderr().contains("as the index records: --follow")
    });
    // A file appearing behind the link makes no batch (its event is dropped, and a run
    // would refuse the link); one in the lake, written after it, does.
    write(&outside, "new.csv", &csv("vermilion", 5));
    std::thread::sleep(Duration::from_secs(1));
    write(&lake, "base/gamma.csv", &csv("cobalt", 5));
    let b = w.batch_where("the new lake file", DEADLINE, |b| n(b, "added") > 0);
    assert_eq!((n(&b, "added"), n(&b, "errors")), (1, 0), "{b}");
    let p = catalog_paths(&idx);
    assert!(
        p.contains(&"base/gamma.csv".into()) && !p.iter().any(|p| p.starts_with("ext/")),
        "{p:?}"
    );
    drop(w);

    // Recorded `--follow-outside`: the watcher takes what appears behind the link.
    run_ok(
        &lake,
        &["index", lake_s, "--index", idx_s, "--follow-outside"],
    );
    let w = Watcher::start(&lake, &idx);
    assert_eq!(w.next_batch(DEADLINE)["kind"], "reconcile");
    write(&outside, "later.csv", &csv("umber", 5));
    until("a file behind the link indexed", DEADLINE, &w, || {
        catalog_paths(&idx).contains(&"ext/later.csv".into())
    });
    let p = catalog_paths(&idx);
    assert!(p.contains(&"ext/new.csv".into()), "{p:?}");
}

/// The vector graph is built apart from the watcher's writes: with its build held at
/// a test pause point, the lake's changes are still indexed and found (by exact search
/// over the committed vectors); a `kill -9` there leaves a half-written generation that
/// the next run removes before it builds the graph.
#[test]
fn changes_are_indexed_while_the_graph_builds_and_a_kill_there_is_caught_up() {
    let (_tmp, lake, idx) = setup();
    write_many(&lake, 30);
    let env = [
        ("LAKESTAR_EXACT_BELOW", "0"),
        ("LAKESTAR_SCAN_UP_TO", "0"),
        ("LAKESTAR_PAUSE_AT", "graph-build"),
    ];
    let mut w = Watcher::start_env(&lake, &idx, &env);
    let first = w.next_batch(DEADLINE);
    assert_eq!(
        (first["kind"].as_str(), n(&first, "added")),
        (Some("reconcile"), 33)
    );
    until("the graph's build to reach its pause", DEADLINE, &w, || {
        idx.join("paused-graph-build").is_file()
    });
    write(&lake, "late/zinnia.csv", &csv("zinnia", 10));
    let b = w.batch_where("the new file", DEADLINE, |b| n(b, "added") > 0);
    assert_eq!(n(&b, "added"), 1, "{b}");
    assert_eq!(search(&idx, "zinnia")[0], "late/zinnia.csv");
    let out = run_ok(
        &idx,
        &["status", "--index", idx.to_str().unwrap(), "--json"],
    );
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["vectors"]["generation"], Value::Null, "{v}");

    w.child.kill().unwrap(); // SIGKILL, mid-build
    w.child.wait().unwrap();
    assert!(
        idx.join("vectors/gen-1.tmp").is_dir(),
        "the build was under way"
    );
    let r = index_hnsw(&lake, &idx);
    assert_eq!((n(&r, "errors"), n(&r, "analyzed")), (0, 0), "{r}");
    let out = run_ok_env(
        &idx,
        &["status", "--index", idx.to_str().unwrap(), "--json"],
        &[("LAKESTAR_EXACT_BELOW", "0"), ("LAKESTAR_SCAN_UP_TO", "0")],
    );
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(
        (
            v["vectors"]["kind"].as_str(),
            v["vectors"]["files"].as_u64()
        ),
        (Some("hnsw"), Some(34)),
        "{v}"
    );
    assert!(!idx.join("vectors/gen-1.tmp").exists());
    assert_eq!(search(&idx, "zinnia")[0], "late/zinnia.csv");
}

/// A plain `index` writes the codes alone at any size; a watcher started on its index
/// builds the graph a long-lived process walks, in the background, with no change in
/// the lake to prompt it; searches find the same files meanwhile and after.
#[test]
fn a_watcher_builds_the_graph_a_plain_index_left_out() {
    let (_tmp, lake, idx) = setup();
    write_many(&lake, 20);
    let env = [("LAKESTAR_EXACT_BELOW", "0"), ("LAKESTAR_SCAN_UP_TO", "0")];
    let (lake_s, idx_s) = (lake.to_str().unwrap(), idx.to_str().unwrap());
    run_ok_env(&lake, &["index", lake_s, "--index", idx_s, "--json"], &env);
    let vectors = || -> Value {
        let out = run_ok_env(&idx, &["status", "--index", idx_s, "--json"], &env);
        serde_json::from_str::<Value>(out.trim()).unwrap()["vectors"].clone()
    };
    let v = vectors();
    assert_eq!(
        (
            v["kind"].as_str(),
            v["generation"].as_u64(),
            v["graph_wanted"].as_bool()
        ),
        (Some("codes"), Some(1), Some(true)),
        "{v}"
    );
    assert!(!idx.join("vectors/gen-1/ann.hnsw.graph").exists());
    let search = |q: &str| {
        let args = ["search", "--index", idx_s, "--json", q];
        paths(&json_lines(&run_ok_env(&idx, &args, &env)))
    };
    let before = search("marigold");

    let w = Watcher::start_env(&lake, &idx, &env);
    let first = w.next_batch(DEADLINE);
    assert_eq!(
        (first["kind"].as_str(), n(&first, "added")),
        (Some("reconcile"), 0),
        "{first}"
    );
    until("the graph to be swapped in", DEADLINE, &w, || {
        vectors()["kind"] == "hnsw"
    });
    let v = vectors();
    assert_eq!(
        (
            v["generation"].as_u64(),
            v["files"].as_u64(),
            v["graph_wanted"].as_bool()
        ),
        (Some(2), Some(23), Some(false)),
        "{v}"
    );
    assert!(idx.join("vectors/gen-2/ann.hnsw.graph").is_file());
    assert!(
        !idx.join("vectors/gen-1").exists(),
        "the codes' generation removed"
    );
    assert_eq!(search("marigold"), before);
    assert_eq!(before[0], "base/beta.csv");
}

/// `lakestar index LAKE --index IDX --graph --json` with the graph forced on.
fn index_hnsw(lake: &Path, idx: &Path) -> Value {
    let out = run_ok_env(
        lake,
        &[
            "index",
            lake.to_str().unwrap(),
            "--index",
            idx.to_str().unwrap(),
            "--graph",
            "--json",
        ],
        &[("LAKESTAR_EXACT_BELOW", "0"), ("LAKESTAR_SCAN_UP_TO", "0")],
    );
    serde_json::from_str(out.trim()).unwrap()
}
