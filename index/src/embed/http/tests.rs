//! The HTTP embedders against a scripted server on 127.0.0.1: one thread answers each
//! connection with the next canned HTTP/1.1 reply and records what it was sent.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::*;
use crate::embed::Embedder;

/// One canned answer of the scripted server.
enum Reply {
    /// Answer with this status, extra headers and body, then close.
    Respond(u16, &'static [(&'static str, &'static str)], String),
    /// Read the request and never answer (the connection is held open until the script
    /// ends), so that the client times out.
    Stall,
}

fn ok(body: serde_json::Value) -> Reply {
    Reply::Respond(200, &[], body.to_string())
}

/// A request as the server received it.
#[derive(Debug)]
struct Seen {
    request_line: String,
    headers: String,
    body: serde_json::Value,
}

/// Starts a server that answers one connection per reply, in order. The join handle
/// gives the requests received; the server gives up waiting after 10 s, so a client
/// that makes fewer requests than scripted fails the test instead of hanging it.
fn serve(replies: Vec<Reply>) -> (String, JoinHandle<Vec<Seen>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    listener.set_nonblocking(true).unwrap();
    let handle = std::thread::spawn(move || {
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut seen = Vec::new();
        let mut held = Vec::new();
        for reply in replies {
            let mut stream = loop {
                match listener.accept() {
                    Ok((s, _)) => break s,
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        if Instant::now() > deadline {
                            return seen;
                        }
                        std::thread::sleep(Duration::from_millis(5));
                    }
                    Err(e) => panic!("accept: {e}"),
                }
            };
            stream.set_nonblocking(false).unwrap();
            seen.push(read_request(&mut stream));
            match reply {
                Reply::Respond(status, headers, body) => {
                    let mut head = format!(
                        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
                        body.len()
                    );
                    for (k, v) in headers {
                        head.push_str(&format!("{k}: {v}\r\n"));
                    }
                    head.push_str("\r\n");
                    stream.write_all(head.as_bytes()).unwrap();
                    stream.write_all(body.as_bytes()).unwrap();
                }
                Reply::Stall => held.push(stream),
            }
        }
        seen
    });
    (base, handle)
}

fn read_request(stream: &mut TcpStream) -> Seen {
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break p + 4;
        }
        let n = stream.read(&mut chunk).unwrap();
        assert!(n > 0, "client closed before sending headers");
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8(buf[..head_end].to_vec()).unwrap();
    let len: usize = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse().unwrap())
        })
        .unwrap_or(0);
    while buf.len() < head_end + len {
        let n = stream.read(&mut chunk).unwrap();
        assert!(n > 0, "client closed mid-body");
        buf.extend_from_slice(&chunk[..n]);
    }
    let (request_line, headers) = head.split_once("\r\n").unwrap();
    Seen {
        request_line: request_line.to_string(),
        headers: headers.to_ascii_lowercase(),
        body: serde_json::from_slice(&buf[head_end..head_end + len]).unwrap(),
    }
}

/// Options for tests: tiny backoff, short timeout, no proxy from the environment.
fn opts(batch_size: usize, max_attempts: u32) -> HttpOptions {
    HttpOptions {
        timeout: Duration::from_millis(2000),
        batch_size,
        retry: RetryPolicy {
            max_attempts,
            initial_backoff: Duration::from_millis(1),
            max_backoff: Duration::from_millis(20),
        },
        dim: None,
        env_proxy: false,
    }
}

fn assert_close(a: &[f32], b: &[f32]) {
    assert_eq!(a.len(), b.len(), "{a:?} vs {b:?}");
    for (x, y) in a.iter().zip(b) {
        assert!((x - y).abs() < 1e-6, "{a:?} vs {b:?}");
    }
}

#[test]
fn openai_orders_by_index_batches_normalizes_and_skips_blank_texts() {
    let (base, server) = serve(vec![
        ok(json!({"object": "list", "data": [
            {"object": "embedding", "index": 1, "embedding": [0.0, 0.0, 2.0]},
            {"object": "embedding", "index": 0, "embedding": [3.0, 4.0, 0.0]},
        ], "model": "m"})),
        ok(json!({"data": [{"index": 0, "embedding": [0.0, -5.0, 0.0]}]})),
    ]);
    let e = OpenAiEmbedder::with_options(
        &format!("{base}/v1/"),
        "emb-small",
        Some("sk-test".into()),
        opts(2, 3),
    )
    .unwrap();
    assert_eq!(e.dim(), 0, "unknown before the first answer");
    let v = e.embed(&["alpha", "  ", "beta", "gamma"]).unwrap();
    assert_eq!(v.len(), 4);
    assert_close(&v[0], &[0.6, 0.8, 0.0]);
    assert_close(&v[1], &[0.0, 0.0, 0.0]);
    assert_close(&v[2], &[0.0, 0.0, 1.0]);
    assert_close(&v[3], &[0.0, -1.0, 0.0]);
    assert_eq!((e.dim(), e.id().as_str()), (3, "openai-emb-small-3"));

    let seen = server.join().unwrap();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[0].request_line, "POST /v1/embeddings HTTP/1.1");
    assert!(
        seen[0].headers.contains("authorization: bearer sk-test"),
        "{}",
        seen[0].headers
    );
    assert_eq!(
        seen[0].body,
        json!({"model": "emb-small", "input": ["alpha", "beta"]})
    );
    assert_eq!(
        seen[1].body,
        json!({"model": "emb-small", "input": ["gamma"]})
    );
}

#[test]
fn rate_limit_is_retried_and_succeeds_once() {
    let (base, server) = serve(vec![
        Reply::Respond(
            429,
            &[("Retry-After", "1")],
            json!({"error": {"message": "Rate limit reached"}}).to_string(),
        ),
        ok(json!({"data": [{"index": 0, "embedding": [1.0, 0.0]}]})),
    ]);
    let e = OpenAiEmbedder::with_options(&base, "m", None, opts(64, 3)).unwrap();
    let t = Instant::now();
    let v = e.embed(&["q"]).unwrap();
    assert_close(&v[0], &[1.0, 0.0]);
    // Retry-After (1 s) is honoured only up to max_backoff (20 ms here).
    assert!(
        t.elapsed() < Duration::from_millis(900),
        "{:?}",
        t.elapsed()
    );
    let seen = server.join().unwrap();
    assert_eq!(seen.len(), 2, "one retry, then one success");
    assert_eq!(seen[1].request_line, "POST /v1/embeddings HTTP/1.1");
    assert!(
        !seen[0].headers.contains("authorization"),
        "no key, no header"
    );
}

#[test]
fn server_errors_give_up_after_max_attempts_with_the_body() {
    let fail = || Reply::Respond(500, &[], "upstream model crashed\n  (oom)".to_string());
    // Exactly three replies: a fourth attempt would find the port closed and fail with
    // a network error instead of the status checked below.
    let (base, server) = serve(vec![fail(), fail(), fail()]);
    let e = OpenAiEmbedder::with_options(&base, "m", None, opts(64, 3)).unwrap();
    let err = e.embed(&["q"]).unwrap_err();
    match &err {
        EmbedError::Status {
            status, message, ..
        } => {
            assert_eq!(*status, 500);
            assert!(
                message.contains("upstream model crashed (oom)"),
                "{message}"
            );
            assert!(message.contains("after 3 attempts"), "{message}");
        }
        other => panic!("expected a status error, got {other:?}"),
    }
    assert!(err.to_string().contains("check its logs"), "{err}");
    assert_eq!(server.join().unwrap().len(), 3);
}

#[test]
fn client_errors_are_not_retried() {
    let (base, server) = serve(vec![Reply::Respond(
        401,
        &[],
        json!({"error": {"message": "Incorrect API key provided"}}).to_string(),
    )]);
    let e = OpenAiEmbedder::with_options(&base, "m", Some("bad".into()), opts(64, 5)).unwrap();
    let err = e.embed(&["q"]).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("HTTP 401: Incorrect API key provided"),
        "{msg}"
    );
    assert!(msg.contains("check the API key"), "{msg}");
    assert_eq!(server.join().unwrap().len(), 1);
}

#[test]
fn a_timeout_is_retried() {
    let (base, server) = serve(vec![
        Reply::Stall,
        ok(json!({"data": [{"index": 0, "embedding": [0.0, 2.0]}]})),
    ]);
    let mut o = opts(64, 2);
    o.timeout = Duration::from_millis(300);
    let e = OpenAiEmbedder::with_options(&base, "m", None, o).unwrap();
    let v = e.embed(&["slow"]).unwrap();
    assert_close(&v[0], &[0.0, 1.0]);
    assert_eq!(server.join().unwrap().len(), 2);
}

#[test]
fn ollama_shape() {
    let (base, server) = serve(vec![ok(json!({
        "model": "nomic-embed-text",
        "embeddings": [[1.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 7.0]],
    }))]);
    let e =
        OllamaEmbedder::with_options(&format!("{base}/"), "nomic-embed-text", opts(64, 3)).unwrap();
    let v = e.embed(&["first", "second"]).unwrap();
    let h = std::f32::consts::FRAC_1_SQRT_2;
    assert_close(&v[0], &[h, h, 0.0, 0.0]);
    assert_close(&v[1], &[0.0, 0.0, 0.0, 1.0]);
    assert_eq!(e.id(), "ollama-nomic-embed-text-4");
    let seen = server.join().unwrap();
    assert_eq!(seen[0].request_line, "POST /api/embed HTTP/1.1");
    assert_eq!(
        seen[0].body,
        json!({"model": "nomic-embed-text", "input": ["first", "second"]})
    );
}

#[test]
fn connection_refused_is_a_clear_network_error() {
    // Bind then drop: nothing listens on the port any more.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let e = OllamaEmbedder::with_options(&format!("http://127.0.0.1:{port}"), "m", opts(64, 3))
        .unwrap();
    let err = e.embed(&["q"]).unwrap_err();
    assert!(matches!(err, EmbedError::Network { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(
        msg.contains(&format!(
            "cannot reach the embedding server at http://127.0.0.1:{port}/api/embed"
        )),
        "{msg}"
    );
    assert!(msg.to_lowercase().contains("refused"), "{msg}");
    assert!(msg.contains("check that the server is running"), "{msg}");
}

#[test]
fn dimension_mismatch_and_bad_shapes_are_errors() {
    let (base, server) = serve(vec![
        ok(json!({"data": [{"index": 0, "embedding": [1.0, 2.0, 3.0]}]})),
        ok(json!({"embeddings": [[1.0]]})),
        ok(json!({"data": [{"index": 0, "embedding": [1.0]}, {"index": 0, "embedding": [1.0]}]})),
        Reply::Respond(200, &[], "<html>not json</html>".into()),
    ]);
    let mut o = opts(64, 1);
    o.dim = Some(4);
    let e = OpenAiEmbedder::with_options(&base, "m", None, o).unwrap();
    assert_eq!(e.id(), "openai-m-4", "a given dimension is known at once");
    match e.embed(&["a"]).unwrap_err() {
        EmbedError::DimensionMismatch {
            expected, found, ..
        } => assert_eq!((expected, found), (4, 3)),
        other => panic!("{other:?}"),
    }
    let e = OpenAiEmbedder::with_options(&base, "m", None, opts(64, 1)).unwrap();
    let err = e.embed(&["a"]).unwrap_err().to_string();
    assert!(err.contains("missing field `data`"), "{err}");
    let err = e.embed(&["a", "b"]).unwrap_err().to_string();
    assert!(err.contains("index 0 appears twice"), "{err}");
    let err = e.embed(&["a"]).unwrap_err().to_string();
    assert!(
        err.contains("unexpected response") && err.contains("not json"),
        "{err}"
    );
    assert!(err.contains("OpenAI-compatible"), "{err}");
    assert_eq!(server.join().unwrap().len(), 4);
}

#[test]
fn urls_and_configuration() {
    assert_eq!(
        openai_url("https://api.openai.com").unwrap(),
        "https://api.openai.com/v1/embeddings"
    );
    assert_eq!(
        openai_url("http://h:8000/v1/").unwrap(),
        "http://h:8000/v1/embeddings"
    );
    assert_eq!(
        openai_url("http://h/proxy").unwrap(),
        "http://h/proxy/v1/embeddings"
    );
    assert!(matches!(
        openai_url("localhost:11434"),
        Err(EmbedError::Config(_))
    ));
    assert!(matches!(openai_url("ftp://h"), Err(EmbedError::Config(_))));
    let e = OllamaEmbedder::new("http://localhost:11434/", "nomic-embed-text").unwrap();
    assert_eq!(e.url(), "http://localhost:11434/api/embed");
    assert!(matches!(
        OllamaEmbedder::new("http://h", " "),
        Err(EmbedError::Config(_))
    ));
    let mut o = opts(0, 3);
    assert!(OllamaEmbedder::with_options("http://h", "m", o.clone()).is_err());
    o.batch_size = 1;
    o.dim = Some(0);
    assert!(OllamaEmbedder::with_options("http://h", "m", o).is_err());
    // Nothing to send: no request, no error.
    assert!(e.embed(&[]).unwrap().is_empty());
}

#[test]
fn backoff_doubles_honours_retry_after_and_is_capped() {
    let p = RetryPolicy {
        max_attempts: 5,
        initial_backoff: Duration::from_millis(500),
        max_backoff: Duration::from_secs(30),
    };
    let ms = Duration::from_millis;
    assert_eq!(p.delay(0, None), ms(500));
    assert_eq!(p.delay(1, None), ms(1000));
    assert_eq!(p.delay(3, None), ms(4000));
    assert_eq!(p.delay(20, None), ms(30_000));
    assert_eq!(p.delay(0, Some(ms(7000))), ms(7000));
    assert_eq!(
        p.delay(3, Some(ms(1000))),
        ms(4000),
        "never shorter than the backoff"
    );
    assert_eq!(p.delay(0, Some(ms(120_000))), ms(30_000));
    assert_eq!(parse_retry_after(" 3 "), Some(ms(3000)));
    assert_eq!(parse_retry_after("0.25"), Some(ms(250)));
    assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), None);
    assert_eq!(parse_retry_after("-1"), None);
}

#[test]
fn error_messages_come_from_the_body() {
    assert_eq!(
        error_message(r#"{"error":{"message":"bad model","type":"x"}}"#),
        "bad model"
    );
    assert_eq!(
        error_message(r#"{"error":"model \"x\" not found, try pulling it first"}"#),
        "model \"x\" not found, try pulling it first"
    );
    assert_eq!(error_message(""), "(empty body)");
    let long = "x".repeat(1000);
    assert_eq!(error_message(&long).chars().count(), 301);
}
