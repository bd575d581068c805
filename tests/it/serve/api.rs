//! The index routes, the token rule, path confinement, limits, and searches during a
//! re-index.

use super::{assert_error, raw_get, Http, Server};
use crate::common::{copy_tree, index_into, lakestar, run_ok, shared_lakes};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// A lake of two small CSVs (one in a subdirectory) indexed beside it, and a secret
/// file outside it that links inside the lake point at.
pub(crate) fn small_lake() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let lake = tmp.path().join("lake");
    std::fs::create_dir_all(lake.join("birds")).unwrap();
    std::fs::write(
        lake.join("birds/penguins.csv"),
        "species,island,flipper_length_mm\nAdelie,Torgersen,181\nGentoo,Biscoe,217\n",
    )
    .unwrap();
    std::fs::write(
        lake.join("volcanoes.csv"),
        "volcano,country,elevation_m\nEtna,Italy,3357\nFuji,Japan,3776\n",
    )
    .unwrap();
    let outside = tmp.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(outside.join("secret.csv"), "password\nTOPSECRET-4242\n").unwrap();
    std::os::unix::fs::symlink(outside.join("secret.csv"), lake.join("secret.csv")).unwrap();
    std::os::unix::fs::symlink(&outside, lake.join("outdir")).unwrap();
    let idx = index_into(tmp.path(), &lake);
    (tmp, lake, idx)
}

#[test]
fn every_route_answers_as_documented() {
    let (_tmp, _lake, idx) = small_lake();
    let server = Server::start(&idx, &[]);
    let http = Http::new(&server);

    let (st, health) = http.get("/health");
    assert_eq!((st, &health["ok"]), (200, &json!(true)));

    let (st, status) = http.get("/status");
    assert_eq!(st, 200, "{status}");
    assert_eq!(status["by_format"]["csv"], 2, "{status}");

    let (st, found) = http.get("/search?q=penguin%20flipper%20length&k=1");
    assert_eq!(st, 200, "{found}");
    assert_eq!(found["query"], "penguin flipper length");
    let hits = found["hits"].as_array().unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0]["path"], "birds/penguins.csv");
    let (_, found) = http.get("/search?q=volcano%20elevation&format=csv&glob=*.csv");
    assert_eq!(found["hits"][0]["path"], "volcanoes.csv", "{found}");

    let (st, file) = http.get("/files/birds/penguins.csv?max_bytes=4096");
    assert_eq!(st, 200, "{file}");
    assert_eq!(file["path"], "birds/penguins.csv");
    assert_eq!(file["format"], "csv");
    assert!(file["text"].as_str().unwrap().contains("flipper_length_mm"));
    assert_error(&http.get("/files/birds/nope.csv"), 404, "not_found");

    // The document lists exactly the routes, and each one it lists is routed (an
    // unknown route or method would answer no_route / method_not_allowed).
    let (st, doc) = http.get("/openapi.json");
    assert_eq!(st, 200);
    assert_eq!(doc["openapi"], "3.1.0");
    let mut documented = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for method in item.as_object().unwrap().keys() {
            documented.push((method.clone(), path.clone()));
        }
    }
    documented.sort();
    let mut routes: Vec<(String, String)> = lakestar::serve::ROUTES
        .iter()
        .map(|(m, p)| (m.to_string(), p.to_string()))
        .collect();
    routes.sort();
    assert_eq!(documented, routes);
    for (method, path) in &routes {
        let concrete = path
            .replace("{path}", "volcanoes.csv")
            .replace("{id}", "20260101-120000-0a1b");
        let answer = match method.as_str() {
            "get" => http.get(&concrete),
            "post" => http.post_json(&concrete, &json!({"question": ""})),
            m => panic!("unexpected method {m}"),
        };
        let code = answer.1["error"]["code"].as_str().unwrap_or("");
        assert!(
            !["no_route", "method_not_allowed"].contains(&code),
            "{method} {concrete}: {answer:?}"
        );
    }
    assert_error(&http.get("/nowhere"), 404, "no_route");
    assert_error(
        &http.post_json("/search", &json!({})),
        405,
        "method_not_allowed",
    );
    assert!(server.stop().success(), "serve exits 0 on SIGTERM");
}

#[test]
fn a_token_guards_every_route_but_health() {
    let (_tmp, _lake, idx) = small_lake();
    let server = Server::start(&idx, &["--token", "s3cret-token"]);
    let anon = Http::new(&server);
    assert_eq!(anon.get("/health").0, 200);
    for route in [
        "/status",
        "/search?q=penguin",
        "/files/volcanoes.csv",
        "/openapi.json",
        "/ask",
        "/runs/20260101-120000-0a1b",
        "/runs/20260101-120000-0a1b/events",
    ] {
        assert_error(&anon.get(route), 401, "unauthorized");
        let (st, body) = raw_get(&server.addr, route, &["Authorization: Bearer wrong"]);
        assert_eq!(st, 401, "{route}: {body}");
        let (st, body) = raw_get(&server.addr, route, &["Authorization: Basic czNjcmV0"]);
        assert_eq!(st, 401, "{route}: {body}");
    }
    assert_error(
        &anon.post_json("/ask", &json!({"question": "q"})),
        401,
        "unauthorized",
    );
    // The scheme's name is case-insensitive.
    let (st, body) = raw_get(
        &server.addr,
        "/status",
        &["Authorization: bearer s3cret-token"],
    );
    assert_eq!(st, 200, "{body}");
    let authed = Http::new(&server).with_token("s3cret-token");
    assert_eq!(authed.get("/status").0, 200);
    let (st, found) = authed.get("/search?q=penguin");
    assert_eq!(st, 200);
    assert_eq!(found["hits"][0]["path"], "birds/penguins.csv");
    drop(server);

    // The same token from the environment.
    let mut cmd = lakestar();
    cmd.env("LAKESTAR_TOKEN", "from-env");
    let server = Server::start_cmd(cmd, &idx, &[]);
    assert_error(&Http::new(&server).get("/status"), 401, "unauthorized");
    assert_eq!(
        Http::new(&server).with_token("from-env").get("/status").0,
        200
    );
    drop(server);

    // Listening beyond loopback without a token is refused before binding.
    let out = lakestar()
        .args(["serve", "--addr", "0.0.0.0:0", "--index"])
        .arg(&idx)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--token"), "{err}");
}

#[test]
fn paths_leaving_the_lake_are_refused_and_never_read() {
    let (tmp, lake, idx) = small_lake();
    let server = Server::start(&idx, &[]);
    let outside = tmp.path().join("outside/secret.csv");
    let abs_inside = lake.join("volcanoes.csv");
    let targets = [
        "/files/../outside/secret.csv".to_string(),
        "/files/birds/../../outside/secret.csv".to_string(),
        "/files/%2e%2e/outside/secret.csv".to_string(),
        "/files/%2E%2E%2Foutside%2Fsecret.csv".to_string(),
        "/files/birds/%2e%2e/%2e%2e/outside/secret.csv".to_string(),
        format!(
            "/files/%2F{}",
            outside.display().to_string().trim_start_matches('/')
        ),
        format!("/files/{}", outside.display()),
        // An absolute path to a file inside the lake is refused too: paths are relative.
        format!("/files/{}", abs_inside.display()),
        "/files/secret.csv".to_string(),
        "/files/outdir/secret.csv".to_string(),
        "/files/birds%2F..%2F..%2Fetc%2Fpasswd".to_string(),
    ];
    for target in &targets {
        let (st, body) = raw_get(&server.addr, target, &[]);
        assert!(!body.contains("TOPSECRET"), "{target} leaked: {body}");
        let v: Value =
            serde_json::from_str(&body).unwrap_or_else(|e| panic!("{target}: {e}: {body:?}"));
        assert_eq!(st, 403, "{target}: {body}");
        assert_eq!(v["error"]["code"], "forbidden_path", "{target}: {body}");
    }
    // Pinned files of a run are confined the same way, before anything else is checked.
    let http = Http::new(&server);
    for bad in ["../outside/secret.csv", "secret.csv", "/etc/passwd"] {
        let answer = http.post_json("/ask", &json!({"question": "q?", "files": [bad]}));
        assert_error(&answer, 403, "forbidden_path");
        assert!(!answer.1.to_string().contains("TOPSECRET"));
    }
    // The link inside the lake that stays inside is fine.
    std::os::unix::fs::symlink(lake.join("volcanoes.csv"), lake.join("alias.csv")).unwrap();
    let (st, _) = raw_get(&server.addr, "/files/alias.csv", &[]);
    assert_eq!(
        st, 404,
        "inside the lake but not indexed: not found, not forbidden"
    );
}

#[test]
fn oversized_and_malformed_input_is_refused_with_json_errors() {
    let (_tmp, _lake, idx) = small_lake();
    let server = Server::start(&idx, &[]);
    let http = Http::new(&server);
    let big = json!({"question": "x".repeat(70 * 1024)});
    let answer = http.post_raw("/ask", "application/json", big.to_string().into_bytes());
    assert_error(&answer, 413, "too_large");
    assert_error(&http.get("/search?q=penguin&k=1001"), 400, "bad_request");
    assert_error(&http.get("/search?q=penguin&k=0"), 400, "bad_request");
    assert_error(&http.get("/search?q=penguin&k=-3"), 400, "bad_request");
    assert_error(&http.get("/search?q=penguin&k=many"), 400, "bad_request");
    assert_error(&http.get("/search?k=3"), 400, "bad_request");
    assert_error(&http.get("/search?q=%20"), 400, "bad_request");
    let long = format!("/search?q={}", "word%20".repeat(2000));
    assert_error(&http.get(&long), 400, "bad_request");
    assert_error(
        &http.get("/files/volcanoes.csv?max_bytes=0"),
        400,
        "bad_request",
    );
    assert_error(
        &http.get("/files/volcanoes.csv?max_bytes=99999999999"),
        400,
        "bad_request",
    );
    assert_error(
        &http.post_raw("/ask", "application/json", b"{not json".to_vec()),
        400,
        "bad_request",
    );
    assert_error(
        &http.post_raw("/ask", "text/plain", b"{\"question\":\"q\"}".to_vec()),
        415,
        "unsupported_media_type",
    );
    assert_error(
        &http.post_json("/ask", &json!({"question": "q", "unknown": 1})),
        422,
        "invalid_body",
    );
    assert_error(
        &http.post_json("/ask", &json!({"question": "q", "k": 5000})),
        400,
        "bad_request",
    );
    assert_error(
        &http.post_json("/ask", &json!({"question": "q", "max_rounds": 1000})),
        400,
        "bad_request",
    );
    assert_error(&http.get("/runs/..%2F..%2Fetc"), 400, "bad_request");
    assert_error(&http.get("/runs/20260101-120000-0a1b"), 404, "not_found");
    let (st, body) = raw_get(&server.addr, "/runs/../../etc/passwd/events", &[]);
    assert!(st == 400 || st == 404, "{st}: {body}");
    assert!(!body.contains("root:"), "{body}");
    // The server still answers after all that.
    assert_eq!(http.get("/health").0, 200);
}

/// The file that a query for `term` should find first.
fn unique_csv(dir: &Path, term: &str) {
    std::fs::write(
        dir.join(format!("{term}.csv")),
        format!("{term}_id,{term}_count\n1,2\n3,4\n"),
    )
    .unwrap();
}

#[test]
fn fifty_concurrent_searches_during_a_reindex_all_answer() {
    let tmp = tempfile::tempdir().unwrap();
    let lake = tmp.path().join("lake");
    copy_tree(&shared_lakes().join("dabench/da-dev-tables"), &lake);
    let idx = index_into(tmp.path(), &lake);
    let server = Server::start(&idx, &[]);
    let http = Http::new(&server);
    let (_, before) = http.get("/search?q=abalone%20rings&k=3");
    let top = before["hits"][0]["path"].as_str().unwrap().to_string();
    assert!(top.contains("abalone"), "{before}");

    // New files and a changed one, indexed by another process while searches run.
    for i in 0..40 {
        unique_csv(&lake, &format!("zanzibarite{i}"));
    }
    let reindex = lakestar()
        .args([
            "index",
            lake.to_str().unwrap(),
            "--index",
            idx.to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let client = http.client.clone();
    let base = http.base.clone();
    let mut rounds = 0;
    let mut during = 0;
    let mut reindex = Some(reindex);
    // Waves of 50 until the re-index has finished (and at least two waves).
    while rounds < 2 || reindex.is_some() {
        let running = match reindex.as_mut().map(|c| c.try_wait().unwrap()) {
            Some(None) => true,
            Some(Some(status)) => {
                let out = reindex.take().unwrap().wait_with_output().unwrap();
                assert!(status.success(), "{}", String::from_utf8_lossy(&out.stderr));
                false
            }
            None => false,
        };
        let answers: Vec<(u16, Value)> = http.rt.block_on(async {
            let mut tasks = Vec::new();
            for i in 0..50 {
                let (client, base) = (client.clone(), base.clone());
                let q = if i % 2 == 0 {
                    "abalone rings"
                } else {
                    "zanzibarite7 count"
                };
                tasks.push(tokio::spawn(async move {
                    let r = client
                        .get(format!("{base}/search"))
                        .query(&[("q", q), ("k", "5")])
                        .send()
                        .await
                        .unwrap();
                    let st = r.status().as_u16();
                    (st, r.json::<Value>().await.unwrap())
                }));
            }
            let mut out = Vec::new();
            for t in tasks {
                out.push(t.await.unwrap());
            }
            out
        });
        for (i, (st, body)) in answers.iter().enumerate() {
            assert_eq!(*st, 200, "{body}");
            let hits = body["hits"].as_array().unwrap();
            assert!(!hits.is_empty(), "{body}");
            if i % 2 == 0 {
                assert_eq!(hits[0]["path"], top.as_str(), "{body}");
            }
        }
        if running {
            during += 1;
        }
        rounds += 1;
    }
    assert!(during > 0, "no wave ran while the re-index did");
    // After the re-index the shared searcher has reopened: the new files are found.
    let (_, after) = http.get("/search?q=zanzibarite7%20count&k=1");
    assert_eq!(after["hits"][0]["path"], "zanzibarite7.csv", "{after}");
    let (_, status) = http.get("/status");
    assert_eq!(
        status["files"].as_u64().unwrap(),
        crate::common::count_files(&lake)
    );
    run_ok(tmp.path(), &["status", "--index", idx.to_str().unwrap()]);
}

#[test]
fn serve_watch_indexes_a_new_file_and_search_finds_it() {
    let (_tmp, lake, idx) = small_lake();
    let server = Server::start(&idx, &["--watch"]);
    let http = Http::new(&server);
    server.wait_line("watch · reconcile");
    let start = std::time::Instant::now();
    unique_csv(&lake, "quokkasighting");
    loop {
        let (st, found) = http.get("/search?q=quokkasighting%20count&k=1");
        assert_eq!(st, 200, "{found}");
        if found["hits"][0]["path"] == "quokkasighting.csv" {
            break;
        }
        // A hang guard, not a measurement: the watcher's debounce is 300 ms.
        assert!(
            start.elapsed() < std::time::Duration::from_secs(60),
            "the new file never became searchable: {found}"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let (_, file) = http.get("/files/quokkasighting.csv");
    assert_eq!(file["format"], "csv", "{file}");
    assert!(server.stop().success(), "serve --watch exits 0 on SIGTERM");
    // The lock was released: a plain index run works again.
    run_ok(
        lake.parent().unwrap(),
        &[
            "index",
            lake.to_str().unwrap(),
            "--index",
            idx.to_str().unwrap(),
        ],
    );
}

#[test]
fn serve_watch_refuses_to_start_when_another_writer_holds_the_index() {
    let (_tmp, _lake, idx) = small_lake();
    let first = Server::start(&idx, &["--watch"]);
    // The first watcher holds the lock once its reconcile run has committed.
    first.wait_line("watch · reconcile");
    let mut second = lakestar()
        .args(["serve", "--addr", "127.0.0.1:0", "--watch", "--index"])
        .arg(&idx)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let status = second.wait().unwrap();
    let mut err = String::new();
    std::io::Read::read_to_string(second.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(2), "{err}");
    assert!(err.contains("lock"), "{err}");
    assert!(first.stop().success());
}
