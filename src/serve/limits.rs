//! What a client may cost the server: time to send its headers and its body, the size of
//! the body, and the time one search may run.
//!
//! The header timeout is hyper's (`serve` sets it on every connection); the rest is the
//! [`bounded_body`] middleware and the search handler. Without them a client that sends
//! half a header, or declares a body and never sends it, holds a connection (and, for a
//! body, a task) for as long as it likes.

use super::errors::ApiError;
use super::{AppState, MAX_BODY_BYTES};
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;
use std::time::Duration;

/// Time a client has to send a request's headers when `--header-timeout` is not given.
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// Time a client has to send a request's whole body when `--body-timeout` is not given.
pub const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(30);
/// Time one `GET /search` may take when `--search-timeout` is not given. Searches take
/// milliseconds on an open index; the first one after a start or a re-index also opens
/// the searcher (and its embedder), which may take seconds.
pub const DEFAULT_SEARCH_TIMEOUT: Duration = Duration::from_secs(10);

/// The time limits of `lakestar serve` (`--header-timeout`, `--body-timeout`,
/// `--search-timeout`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpLimits {
    /// Time from the start of a connection, or from the end of the previous response on
    /// a kept-alive one, to the end of the next request's headers; then the connection
    /// is closed without an answer (there is no request to answer).
    pub header_timeout: Duration,
    /// Time to receive a request's whole body, from the end of its headers; then 408
    /// `body_timeout` and the connection is closed. A total, not a time between chunks:
    /// a client dripping a byte at a time is dropped too.
    pub body_timeout: Duration,
    /// Time one search may take; then 503 `search_timeout`.
    pub search_timeout: Duration,
}

impl Default for HttpLimits {
    fn default() -> Self {
        HttpLimits {
            header_timeout: DEFAULT_HEADER_TIMEOUT,
            body_timeout: DEFAULT_BODY_TIMEOUT,
            search_timeout: DEFAULT_SEARCH_TIMEOUT,
        }
    }
}

/// Why a body was not read.
enum BodyFault {
    TooLarge,
    /// The client sent a malformed body (bad chunked encoding) or went away.
    Broken(axum::Error),
}

/// Read at most `max` bytes of `body`.
async fn read_capped(body: Body, max: usize) -> Result<Bytes, BodyFault> {
    let mut stream = body.into_data_stream();
    let mut buf = Vec::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(BodyFault::Broken)?;
        if buf.len() + chunk.len() > max {
            return Err(BodyFault::TooLarge);
        }
        buf.extend_from_slice(&chunk);
    }
    Ok(Bytes::from(buf))
}

/// The error, telling the client the connection ends: the rest of its body is not read,
/// so nothing it sends after would be a request.
fn closing(e: ApiError) -> Response {
    let mut r = e.into_response();
    r.headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    r
}

/// Read the request's body before any handler, within the body timeout and the size
/// limit: a declared `Content-Length` over [`MAX_BODY_BYTES`] is answered 413 at once,
/// without reading; a chunked body is cut at the limit. (axum's `DefaultBodyLimit` alone
/// waits for the bytes of a declared body it will refuse, for as long as the client
/// takes to send them.) Bodies are small, so holding one in memory costs at most the
/// limit; the handlers then read it as they would any body.
pub async fn bounded_body(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_BODY_BYTES as u64) {
        return closing(ApiError::too_large());
    }
    let limit = state.limits.body_timeout;
    let (parts, body) = req.into_parts();
    let bytes = match tokio::time::timeout(limit, read_capped(body, MAX_BODY_BYTES)).await {
        Ok(Ok(bytes)) => bytes,
        Ok(Err(BodyFault::TooLarge)) => return closing(ApiError::too_large()),
        Ok(Err(BodyFault::Broken(e))) => {
            return closing(ApiError::bad_request(format!(
                "the request body could not be read: {e}"
            )))
        }
        Err(_) => return closing(ApiError::body_timeout(limit)),
    };
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}
