//! One vocabulary on every surface, ripgrep's exit codes, readable results, and the
//! messages a new user meets first.

use crate::common::{lakestar, run, run_ok};
use crate::serve::{assert_error, Http, Server};
use std::path::PathBuf;

/// The HTTP tests' lake of two CSVs, with a JSON-lines file, indexed into its own
/// `.lakestar/` (so that `--index lake` names it by its lake).
fn lake() -> (tempfile::TempDir, PathBuf) {
    let (tmp, lake, _idx) = crate::serve::api::small_lake();
    std::fs::write(
        lake.join("quakes.jsonl"),
        "{\"place\":\"Chile\",\"magnitude\":8.8}\n{\"place\":\"Japan\",\"magnitude\":9.1}\n",
    )
    .unwrap();
    run_ok(tmp.path(), &["index", "lake"]);
    (tmp, lake)
}

fn code(out: &std::process::Output) -> i32 {
    out.status.code().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn search_exits_as_ripgrep_and_takes_formats_by_any_common_name() {
    let (tmp, _lake) = lake();
    let at = |args: &[&str]| {
        let mut a = vec!["search"];
        a.extend_from_slice(args);
        a.extend_from_slice(&["--index", "lake"]);
        run(tmp.path(), &a)
    };
    // --index takes the lake: its .lakestar/ is the index.
    let found = at(&["penguin flipper length"]);
    assert_eq!(code(&found), 0, "{}", text(&found.stderr));
    let out = text(&found.stdout);
    assert!(out.starts_with(" 1. birds/penguins.csv  strong\n"), "{out}");
    // The summary does not repeat the path printed above it; no colour into a pipe.
    assert!(
        out.contains("\n    CSV, ") && !out.contains('\u{1b}'),
        "{out}"
    );

    let none = at(&["zzqx qqxz"]);
    assert_eq!(code(&none), 1, "{}", text(&none.stdout));
    assert!(none.stdout.is_empty());
    assert!(text(&none.stderr).contains("no file matches"));

    let typo = at(&["volcano", "--format", "parqet"]);
    assert_eq!(code(&typo), 2);
    let err = text(&typo.stderr);
    assert!(
        err.contains("unknown format \"parqet\"")
            && err.contains("csv, tsv")
            && err.contains("parquet"),
        "{err}"
    );
    for (format, want) in [
        ("CSV", "volcanoes.csv"),
        (".jsonl", "quakes.jsonl"),
        ("ndjson", "quakes.jsonl"),
    ] {
        let out = at(&["volcano quake magnitude", "--format", format, "--json"]);
        assert_eq!(code(&out), 0, "{format}: {}", text(&out.stderr));
        let first: serde_json::Value =
            serde_json::from_str(text(&out.stdout).lines().next().unwrap()).unwrap();
        assert_eq!(first["path"], want, "{format}");
        assert!(["strong", "fair", "weak"].contains(&first["relevance"].as_str().unwrap()));
        assert_eq!(first["share"], 1.0);
    }
    // A format with no file in the lake is valid and matches nothing: exit 1.
    assert_eq!(code(&at(&["volcano", "--format", "xlsx"])), 1);

    // The same limit as HTTP and MCP.
    let big = at(&["volcano", "-k", "1001"]);
    assert_eq!(code(&big), 2);
    assert!(
        text(&big.stderr).contains("1 to 1000"),
        "{}",
        text(&big.stderr)
    );
    assert_eq!(code(&at(&["volcano", "-k", "1000"])), 0);

    // Errors are 2 as well, whatever their kind.
    let elsewhere = tempfile::tempdir().unwrap();
    let no_index = run(elsewhere.path(), &["search", "volcano"]);
    assert_eq!(code(&no_index), 2);
    assert!(text(&no_index.stderr).contains("lakestar index"));
}

#[test]
fn colour_is_for_terminals_or_when_asked() {
    let (tmp, _lake) = lake();
    let coloured = run(
        tmp.path(),
        &[
            "search",
            "volcano elevation",
            "--index",
            "lake",
            "--color",
            "always",
        ],
    );
    let out = text(&coloured.stdout);
    // The question's words are marked in the path and the summary.
    assert!(out.contains("\u{1b}[1m\u{1b}[33mvolcano"), "{out:?}");
    let mut cmd = lakestar();
    let plain = cmd
        .current_dir(tmp.path())
        .env("NO_COLOR", "1")
        .args(["search", "volcano elevation", "--index", "lake"])
        .output()
        .unwrap();
    assert!(!text(&plain.stdout).contains('\u{1b}'));
    let never = run(
        tmp.path(),
        &["search", "volcano", "--index", "lake", "--color", "never"],
    );
    assert!(!text(&never.stdout).contains('\u{1b}'));
    // Errors too: coloured when asked, plain into a pipe.
    let err = run(
        tmp.path(),
        &["search", "x", "--index", "nowhere", "--color", "always"],
    );
    assert!(
        text(&err.stderr).starts_with("\u{1b}[1m\u{1b}[31merror:"),
        "{:?}",
        text(&err.stderr)
    );
    let err = run(tmp.path(), &["search", "x", "--index", "nowhere"]);
    assert!(
        text(&err.stderr).starts_with("error: no lakestar index"),
        "{}",
        text(&err.stderr)
    );
}

#[test]
fn http_and_mcp_share_the_vocabulary_and_limits() {
    let (_tmp, lake) = lake();
    let server = Server::start(&lake.join(".lakestar"), &[]);
    let http = Http::new(&server);
    let (st, found) = http.get("/search?q=quake%20magnitude&format=ndjson");
    assert_eq!(st, 200, "{found}");
    assert_eq!(found["hits"][0]["path"], "quakes.jsonl");
    assert!(found["hits"][0]["relevance"].is_string(), "{found}");
    let typo = http.get("/search?q=x&format=parqet");
    assert_error(&typo, 400, "bad_request");
    assert!(typo.1["error"]["message"]
        .as_str()
        .unwrap()
        .contains("csv, tsv"));
    assert_error(&http.get("/search?q=x&k=1001"), 400, "bad_request");
    assert_eq!(http.get("/search?q=volcano&k=1000").0, 200);
}

#[test]
fn first_messages_say_what_is_wrong_before_anything_else() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = run(tmp.path(), &["index", "no-such-lake"]);
    assert_eq!(code(&missing), 2);
    let err = text(&missing.stderr);
    assert!(!err.contains("new index"), "{err}");
    assert!(
        err.contains("no-such-lake") && err.contains("does not exist"),
        "{err}"
    );
    assert!(!tmp.path().join("no-such-lake").exists());

    let (tmp, _lake) = lake();
    let dir = run(tmp.path(), &["describe", "lake/birds"]);
    assert_eq!(code(&dir), 2);
    assert!(
        text(&dir.stderr).contains("lake/birds is a directory"),
        "{}",
        text(&dir.stderr)
    );
    let gone = run(tmp.path(), &["describe", "lake/nope.csv"]);
    assert!(
        text(&gone.stderr).contains("does not exist"),
        "{}",
        text(&gone.stderr)
    );

    // status prints the last run's counts; counts of one are singular.
    let status = run_ok(tmp.path(), &["status", "--index", "lake"]);
    assert!(
        status.contains("last run:   3 files seen, 3 added, 0 modified"),
        "{status}"
    );
    let one = tmp.path().join("one");
    std::fs::create_dir(&one).unwrap();
    std::fs::write(one.join("a.csv"), "x,y\n1,2\n").unwrap();
    let said = run_ok(tmp.path(), &["index", "one"]);
    assert!(said.starts_with("indexed 1 file in "), "{said}");
    assert!(said.trim_end().ends_with(", 0 errors"), "{said}");
}
