//! Slow and oversized clients: a request whose headers or body do not arrive in time is
//! dropped, a body declared over the limit is refused before it is read.

use super::{Http, Server};
use serde_json::Value;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// The server's header and body timeouts in these tests.
const LIMIT: Duration = Duration::from_secs(1);

/// Connect, send `bytes`, then read until the server closes the connection; what it
/// sent and how long after the send it closed.
fn send_and_wait_for_close(addr: &str, bytes: &[u8]) -> (String, Duration) {
    let mut s = TcpStream::connect(addr).unwrap();
    // A hang guard well past what any assertion allows.
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let start = Instant::now();
    s.write_all(bytes).unwrap();
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => out.extend_from_slice(&buf[..n]),
            // A reset is a close too.
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break,
            Err(e) => panic!(
                "the connection was not closed: {e} after {:?}",
                start.elapsed()
            ),
        }
    }
    (String::from_utf8_lossy(&out).into_owned(), start.elapsed())
}

/// The status and JSON body of a raw response.
fn parse(response: &str) -> (u16, Value) {
    let status = response
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no status line in {response:?}"));
    let body = response.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    (status, serde_json::from_str(body).unwrap_or(Value::Null))
}

#[test]
fn slow_clients_are_dropped_after_the_timeout_and_a_declared_oversized_body_at_once() {
    let (_tmp, _lake, idx) = super::api::small_lake();
    let server = Server::start(&idx, &["--header-timeout", "1", "--body-timeout", "1"]);
    let addr = server.addr.as_str();
    let dropped_by = LIMIT * 3;

    // Half a header, then nothing: closed without an answer (there is no request).
    let (got, after) = send_and_wait_for_close(addr, b"GET /health HTTP/1.1\r\nHost: x\r\n");
    assert!(got.is_empty(), "{got}");
    assert!(after >= LIMIT / 2 && after < dropped_by, "{after:?}");

    // A connection that never sends anything.
    let (got, after) = send_and_wait_for_close(addr, b"");
    assert!(got.is_empty(), "{got}");
    assert!(after < dropped_by, "{after:?}");

    // Headers in time, half the body, then nothing: 408, then closed.
    let (got, after) = send_and_wait_for_close(
        addr,
        b"POST /ask HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"question\": \"wh",
    );
    assert!(after >= LIMIT / 2 && after < dropped_by, "{after:?}");
    let (st, body) = parse(&got);
    assert_eq!(
        (st, &body["error"]["code"]),
        (408, &"body_timeout".into()),
        "{got}"
    );
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("--body-timeout"),
        "{got}"
    );

    // 100 MB declared, nothing sent: 413 at once, not after the body timeout.
    let (got, after) = send_and_wait_for_close(
        addr,
        b"POST /ask HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 104857600\r\n\r\n",
    );
    assert!(after < LIMIT, "{after:?}");
    let (st, body) = parse(&got);
    assert_eq!(
        (st, &body["error"]["code"]),
        (413, &"too_large".into()),
        "{got}"
    );

    // A chunked body (no length declared) is cut at the limit.
    let mut chunked =
        b"POST /ask HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
            .to_vec();
    for _ in 0..20 {
        chunked.extend_from_slice(b"1000\r\n");
        chunked.extend_from_slice(&[b' '; 4096]);
        chunked.extend_from_slice(b"\r\n");
    }
    let (got, _) = send_and_wait_for_close(addr, &chunked);
    assert_eq!(parse(&got).0, 413, "{got}");

    // A well-behaved client is served as before, and a kept-alive connection is reused.
    let http = Http::new(&server);
    let (st, found) = http.get("/search?q=volcano");
    assert_eq!(st, 200, "{found}");
    assert_eq!(found["hits"][0]["path"], "volcanoes.csv", "{found}");
    assert!(server.stop().success(), "serve exits 0 on SIGTERM");
}
