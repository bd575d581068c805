//! Globs that a backtracking matcher takes minutes (or hours) on answer at once on every
//! surface — `search --glob`, `GET /search?glob=`, the MCP `glob` — and a glob over the
//! bound is refused by each, in the same words.

use crate::common::*;
use crate::mcp::{hit_paths, Session};
use crate::serve::{assert_error, Http, Server};
use serde_json::json;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Generous: the work takes milliseconds; a backtracking matcher's takes minutes per path.
const AT_ONCE: Duration = Duration::from_secs(5);

/// A lake with a deep path and a long file name (what the pathological globs backtrack
/// over), and one CSV they match, indexed beside it.
fn deep_lake() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let lake = tmp.path().join("lake");
    let deep = lake.join("d01/d02/d03/d04/d05/d06/d07/d08/d09/d10/d11/d12");
    std::fs::create_dir_all(&deep).unwrap();
    std::fs::write(deep.join("notes.txt"), "volcano notes from the field\n").unwrap();
    std::fs::write(
        lake.join(format!("{}.txt", "a".repeat(60))),
        "volcano list, unsorted\n",
    )
    .unwrap();
    std::fs::write(
        lake.join("volcanoes.csv"),
        "volcano,country,elevation_m\nEtna,Italy,3357\n",
    )
    .unwrap();
    let idx = index_into(tmp.path(), &lake);
    (tmp, idx)
}

/// `**/` twelve times then `*.csv`: only volcanoes.csv matches.
fn stars() -> String {
    format!("{}*.csv", "**/".repeat(12))
}

/// `*a` forty times then `b.csv`: nothing matches.
fn many_a() -> String {
    format!("{}b.csv", "*a".repeat(40))
}

#[test]
fn pathological_globs_answer_at_once_on_the_cli_http_and_mcp() {
    let (tmp, idx) = deep_lake();
    let idx_s = idx.to_str().unwrap();
    let too_long = "x".repeat(600);

    // CLI.
    for (glob, want) in [(stars(), vec!["volcanoes.csv"]), (many_a(), vec![])] {
        let start = Instant::now();
        let out = crate::common::search_out(
            tmp.path(),
            &[
                "search", "volcano", "--index", idx_s, "--glob", &glob, "--json",
            ],
        );
        assert!(start.elapsed() < AT_ONCE, "{glob}: {:?}", start.elapsed());
        assert_eq!(paths(&json_lines(&out)), want, "{glob}");
    }
    let out = run(
        tmp.path(),
        &["search", "volcano", "--index", idx_s, "--glob", &too_long],
    );
    assert_eq!(out.status.code(), Some(2), "a user error");
    let cli_err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(cli_err.contains("at most 512"), "{cli_err}");

    // HTTP.
    let server = Server::start(&idx, &[]);
    let http = Http::new(&server);
    let search = |glob: &str| {
        let url = reqwest::Url::parse_with_params(
            &format!("{}/search", http.base),
            &[("q", "volcano"), ("glob", glob)],
        )
        .unwrap();
        http.get(&url.as_str()[http.base.len()..])
    };
    for (glob, want) in [(stars(), vec!["volcanoes.csv"]), (many_a(), vec![])] {
        let start = Instant::now();
        let (st, found) = search(&glob);
        assert!(start.elapsed() < AT_ONCE, "{glob}: {:?}", start.elapsed());
        assert_eq!(st, 200, "{found}");
        assert_eq!(hit_paths(&found), want, "{glob}: {found}");
    }
    let refused = search(&too_long);
    assert_error(&refused, 400, "bad_request");
    assert!(
        cli_err.contains(refused.1["error"]["message"].as_str().unwrap()),
        "the same words as the CLI: {cli_err} / {}",
        refused.1
    );
    assert_error(&search("data/[abc.csv"), 400, "bad_request");
    drop(server);

    // MCP.
    let mut s = Session::start(&idx, &[], &[]);
    for (glob, want) in [(stars(), vec!["volcanoes.csv"]), (many_a(), vec![])] {
        let start = Instant::now();
        let r = s.ok("search_files", json!({"query": "volcano", "glob": glob}));
        assert!(start.elapsed() < AT_ONCE, "{glob}: {:?}", start.elapsed());
        assert_eq!(hit_paths(&r), want, "{glob}: {r}");
    }
    let e = s.err(
        "search_files",
        json!({"query": "volcano", "glob": too_long}),
    );
    assert!(
        cli_err.contains(&e),
        "the same words as the CLI: {cli_err} / {e}"
    );
    s.close();
}
