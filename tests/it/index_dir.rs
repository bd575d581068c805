//! Where the index lives and who may write it: discovery, the writer lock, the format
//! version, ignore files, and bad input recorded per file.

use crate::common::*;
use std::fs;

#[test]
fn finds_the_nearest_index_upwards_and_says_when_there_is_none() {
    let tmp = tempfile::tempdir().unwrap();
    let lake = tmp.path().join("lake");
    fs::create_dir_all(lake.join("a/b")).unwrap();
    fs::write(lake.join("a/b/x.csv"), "k,v\n1,2\n").unwrap();
    run_ok(&lake, &["index"]);
    assert!(lake.join(".lakestar/catalog.sqlite").is_file());
    // From a subdirectory, status and describe find the index like git finds .git.
    let st = run_ok(&lake.join("a/b"), &["status", "--json"]);
    let st: serde_json::Value = serde_json::from_str(&st).unwrap();
    assert_eq!(st["files"], 1);
    let d = run_ok(&lake.join("a/b"), &["describe", "x.csv", "--json"]);
    let d: serde_json::Value = serde_json::from_str(&d).unwrap();
    assert_eq!(d["indexed"], true);
    assert_eq!(d["path"], "a/b/x.csv");
    // The index directory never indexes itself.
    let again = index_json(&lake, &[]);
    assert_counts(&again, &[("files_seen", 1), ("unchanged", 1)]);

    let elsewhere = tmp.path().join("empty");
    fs::create_dir_all(&elsewhere).unwrap();
    let out = run(&elsewhere, &["status"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no lakestar index found") && err.contains("lakestar index"),
        "{err}"
    );
    let out = run(&elsewhere, &["status", "--index", "/nonexistent/idx"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("at /nonexistent/idx"));
}

#[test]
fn second_writer_gets_a_clear_locked_error_and_readers_go_on() {
    let tmp = tempfile::tempdir().unwrap();
    let lake = tmp.path().join("lake");
    fs::create_dir_all(&lake).unwrap();
    fs::write(lake.join("x.csv"), "k,v\n1,2\n").unwrap();
    run_ok(&lake, &["index"]);
    let held = lakestar::index::lock::WriterLock::acquire(&lake.join(".lakestar")).unwrap();
    let out = run(&lake, &["index"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("locked by pid {}", std::process::id())),
        "{err}"
    );
    // Readers do not need the lock.
    run_ok(&lake, &["status"]);
    run_ok(&lake, &["describe", "x.csv"]);
    release_lock(held);
    run_ok(&lake, &["index"]);
}

#[test]
fn incompatible_format_version_asks_for_rebuild() {
    let tmp = tempfile::tempdir().unwrap();
    let lake = tmp.path().join("lake");
    fs::create_dir_all(&lake).unwrap();
    fs::write(lake.join("x.csv"), "k,v\n1,2\n").unwrap();
    run_ok(&lake, &["index"]);
    let db = rusqlite::Connection::open(lake.join(".lakestar/catalog.sqlite")).unwrap();
    db.execute(
        "UPDATE meta SET value = '999' WHERE key = 'format_version'",
        [],
    )
    .unwrap();
    drop(db);
    for args in [&["status"][..], &["index"][..]] {
        let out = run(&lake, args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("format version 999") && err.contains("--rebuild"),
            "{err}"
        );
    }
    let v = index_json(&lake, &["--rebuild"]);
    assert_counts(&v, &[("added", 1), ("analyzed", 1)]);
    run_ok(&lake, &["status"]);
}

#[test]
fn ignore_file_hidden_files_and_links() {
    let tmp = tempfile::tempdir().unwrap();
    let lake = tmp.path().join("lake");
    fs::create_dir_all(lake.join("scratch")).unwrap();
    fs::create_dir_all(lake.join("data")).unwrap();
    fs::write(lake.join("data/keep.csv"), "a,b\n1,2\n").unwrap();
    fs::write(lake.join("data/skip.tmp"), "x").unwrap();
    fs::write(lake.join("scratch/big.csv"), "a,b\n1,2\n").unwrap();
    fs::write(lake.join(".hidden.csv"), "a,b\n1,2\n").unwrap();
    fs::write(lake.join(".lakestarignore"), "*.tmp\nscratch/\n").unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(lake.join("data"), lake.join("linked")).unwrap();
    let v = index_json(&lake, &[]);
    assert_counts(&v, &[("files_seen", 1)]);
    let v = index_json(&lake, &["--hidden", "--follow"]);
    // .hidden.csv and linked/keep.csv join, with keep.csv's content: cache hits.
    // .lakestarignore itself is never data.
    assert_counts(
        &v,
        &[
            ("files_seen", 3),
            ("added", 2),
            ("renamed", 0),
            ("cache_hits", 2),
            ("analyzed", 0),
        ],
    );
    let cat = check_catalog(&lake.join(".lakestar"));
    let mut paths: Vec<String> = cat.load_files().unwrap().into_keys().collect();
    paths.sort();
    assert_eq!(paths, [".hidden.csv", "data/keep.csv", "linked/keep.csv"]);

    // The index records how it walked: a run without the flags keeps those files, and
    // says why; --no-hidden and --no-follow drop them.
    let out = run(&lake, &["index", "--json"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success()
            && stderr.contains("as the index records: --follow")
            && stderr.contains("as the index records: --hidden"),
        "{stderr}"
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_counts(&v, &[("files_seen", 3), ("deleted", 0), ("unchanged", 3)]);
    let v = index_json(&lake, &["--no-hidden", "--no-follow"]);
    assert_counts(&v, &[("files_seen", 1), ("deleted", 2)]);
    let v = index_json(&lake, &[]);
    assert_counts(&v, &[("files_seen", 1), ("deleted", 0)]);
}

#[test]
fn bad_input_is_a_per_file_error_and_the_run_goes_on() {
    let tmp = tempfile::tempdir().unwrap();
    let lake = tmp.path().join("lake");
    fs::create_dir_all(&lake).unwrap();
    fs::write(lake.join("good.csv"), "a,b\n1,2\n").unwrap();
    fs::write(lake.join("broken.json"), "{\"a\": [1, 2").unwrap();
    fs::write(lake.join("all-bad.jsonl"), "{oops\n{nope\n").unwrap();
    fs::write(lake.join("empty.csv"), "").unwrap();
    fs::write(
        lake.join("random.bin"),
        (0..4096u32)
            .map(|i| (i * 7919 % 251) as u8)
            .collect::<Vec<_>>(),
    )
    .unwrap();
    fs::write(lake.join("latin1.txt"), b"caf\xe9 cr\xe8me\n").unwrap();
    let mut one_line = vec![b'x'; 3 * 1024 * 1024];
    one_line.push(b'\n');
    fs::write(lake.join("one-line.txt"), &one_line).unwrap();
    let v = index_json(&lake, &[]);
    assert_counts(&v, &[("files_seen", 7), ("added", 7), ("errors", 2)]);
    let st: serde_json::Value =
        serde_json::from_str(&run_ok(&lake, &["status", "--json"])).unwrap();
    assert_eq!(st["by_state"]["ok"], 5, "{st}");
    assert_eq!(st["by_state"]["error"], 2, "{st}");
    let errors = st["errors"].as_array().unwrap();
    let broken = errors.iter().find(|e| e["path"] == "broken.json").unwrap();
    assert!(
        broken["error"].as_str().unwrap().contains("invalid JSON"),
        "{broken}"
    );
    assert_eq!(st["by_format"]["empty"], 1);
    assert_eq!(st["by_format"]["binary"], 1);
    // A degraded description is still there to read.
    let d = run_ok(&lake, &["describe", "broken.json"]);
    assert!(d.contains("error: invalid JSON"), "{d}");
    // Fixing the file clears its error; `errors` counts the problems of this run only.
    fs::write(lake.join("broken.json"), "{\"a\": [1, 2]}").unwrap();
    let v = index_json(&lake, &[]);
    assert_counts(&v, &[("modified", 1), ("analyzed", 1), ("errors", 0)]);
    let st: serde_json::Value =
        serde_json::from_str(&run_ok(&lake, &["status", "--json"])).unwrap();
    let errors: Vec<&str> = st["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["path"].as_str().unwrap())
        .collect();
    assert_eq!(errors, ["all-bad.jsonl"]);
}

#[test]
fn large_files_are_sampled_and_full_makes_them_exact() {
    let tmp = tempfile::tempdir().unwrap();
    let lake = tmp.path().join("lake");
    fs::create_dir_all(&lake).unwrap();
    let mut big = String::from("id,when,amount\n");
    for i in 0..100_000u32 {
        big.push_str(&format!(
            "{i},2021-{:02}-{:02},{}\n",
            i % 12 + 1,
            i % 28 + 1,
            i % 977
        ));
    }
    fs::write(lake.join("big.csv"), &big).unwrap();
    fs::write(lake.join("small.csv"), "a,b\n1,2\n").unwrap();
    let budget = ["--read-budget", "262144"];
    let v = index_json(&lake, &budget);
    assert_counts(&v, &[("analyzed", 2)]);
    let d: serde_json::Value =
        serde_json::from_str(&run_ok(&lake, &["describe", "big.csv", "--json"])).unwrap();
    let t = &d["description"]["content"];
    assert_eq!(t["rows_exact"], false);
    let est = t["rows"].as_u64().unwrap();
    assert!((95_000..105_000).contains(&est), "{est}");
    let text = run_ok(&lake, &["describe", "big.csv"]);
    assert!(text.contains("~") && text.contains("--full"), "{text}");
    // A plain re-run keeps the sample; --full re-describes exactly the sampled file.
    assert_counts(&index_json(&lake, &budget), &[("analyzed", 0)]);
    let mut full_args = budget.to_vec();
    full_args.push("--full");
    assert_counts(
        &index_json(&lake, &full_args),
        &[("analyzed", 1), ("unchanged", 2)],
    );
    let d: serde_json::Value =
        serde_json::from_str(&run_ok(&lake, &["describe", "big.csv", "--json"])).unwrap();
    assert_eq!(d["description"]["content"]["rows"], 100_000);
    assert_eq!(d["description"]["content"]["rows_exact"], true);
    assert_counts(&index_json(&lake, &full_args), &[("analyzed", 0)]);
    assert_counts(&index_json(&lake, &budget), &[("analyzed", 0)]);
}
