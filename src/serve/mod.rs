//! `lakestar serve`: the HTTP API (axum) over one index — search, status, descriptions,
//! and agent runs followed as server-sent events.
//!
//! - [`errors`]: the one JSON error shape.
//! - [`handlers`]: `/health`, `/status`, `/search`, `/files/{path}`, `/files/{path}/rows`.
//! - [`runs`]: `GET /ask` (whether an LLM is configured), `POST /ask`, `/runs/{id}`,
//!   `/runs/{id}/events`, and the registry of runs.
//! - [`openapi`]: the OpenAPI document of [`ROUTES`].
//! - [`limits`]: the header, body and search time limits, and the body size limit.
//! - [`ui`]: the web UI at `/`: pages and assets embedded in the binary, the token cookie.
//!
//! Every call into the index is blocking (SQLite, tantivy, the embedder) and goes through
//! `spawn_blocking`; the [`Lake`] shares one searcher that reopens itself when an index
//! run (or a watcher in another process) commits.

pub mod errors;
pub mod handlers;
pub mod limits;
pub mod openapi;
pub mod runs;
pub mod ui;

use crate::agent::build::AgentSetup;
use crate::service::Lake;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::StatusCode;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use errors::ApiError;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
pub use limits::HttpLimits;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::sync::watch;

/// Bytes of a request body at most (a question with its guidelines and pinned files).
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// Every route, as (method, OpenAPI path). The router and the OpenAPI document are both
/// checked against this list.
pub const ROUTES: &[(&str, &str)] = &[
    ("get", "/health"),
    ("get", "/status"),
    ("get", "/overview"),
    ("get", "/search"),
    ("get", "/files/{path}"),
    ("get", "/files/{path}/rows"),
    ("get", "/ask"),
    ("post", "/ask"),
    ("get", "/runs/{id}"),
    ("get", "/runs/{id}/events"),
    ("get", "/openapi.json"),
];

/// What the handlers share.
#[derive(Clone)]
pub struct AppState {
    /// The index served.
    pub lake: Arc<Lake>,
    /// BLAKE3 of the bearer token, when one is required. Comparing digests takes the
    /// same time whatever the token given (blake3's `Hash` equality is constant-time).
    pub token: Option<blake3::Hash>,
    /// Agent runs started by `POST /ask`.
    pub runs: Arc<runs::Runs>,
    /// How `POST /ask` builds an agent.
    pub agent: Arc<AgentSetup>,
    /// Turns true when the server shuts down: event streams end, runs are stopped.
    pub shutdown: watch::Receiver<bool>,
    /// What a client may take of the server's time.
    pub limits: HttpLimits,
}

impl AppState {
    /// State serving `lake`; `token` is required on every route but `/health` when given.
    pub fn new(
        lake: Lake,
        token: Option<&str>,
        agent: AgentSetup,
        max_runs: usize,
        shutdown: watch::Receiver<bool>,
    ) -> Self {
        let runs_dir = lake.dir().join("runs");
        AppState {
            lake: Arc::new(lake),
            token: token.map(|t| blake3::hash(t.trim().as_bytes())),
            runs: Arc::new(runs::Runs::new(runs_dir, max_runs)),
            agent: Arc::new(agent),
            shutdown,
            limits: HttpLimits::default(),
        }
    }

    /// The same state with these time limits instead of the defaults.
    pub fn with_limits(self, limits: HttpLimits) -> Self {
        AppState { limits, ..self }
    }
}

/// The API's router.
pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/status", get(handlers::status))
        .route("/overview", get(handlers::overview))
        .route("/search", get(handlers::search))
        .route("/files/{*path}", get(handlers::file))
        .route("/ask", post(runs::ask).get(runs::readiness))
        .route("/runs/{id}", get(runs::run))
        .route("/runs/{id}/events", get(runs::events))
        .route("/openapi.json", get(openapi::document))
        .merge(ui::pages())
        // Only the routes above need the token: a load balancer's health probe has none.
        .route_layer(middleware::from_fn_with_state(state.clone(), require_token))
        .route("/health", get(handlers::health))
        .merge(ui::assets())
        .fallback(|| async {
            ApiError::new(
                StatusCode::NOT_FOUND,
                "no_route",
                "no such route; GET /openapi.json lists the API",
            )
        })
        .method_not_allowed_fallback(|| async {
            ApiError::new(
                StatusCode::METHOD_NOT_ALLOWED,
                "method_not_allowed",
                "this route does not take that method; GET /openapi.json lists the API",
            )
        })
        // Kept behind `bounded_body` as a second guard: an extractor never reads more.
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        // Outermost: a body is refused or read (within its time) before anything else.
        .layer(middleware::from_fn_with_state(
            state.clone(),
            limits::bounded_body,
        ))
        .layer(middleware::from_fn(ui::security_headers))
        .with_state(state)
}

/// Refuse a request without the token when one is set: `Authorization: Bearer TOKEN`,
/// or the cookie a browser got by opening a page with `?token=TOKEN` (see [`ui::auth`]).
/// A browser is answered a page saying how to get in, an API client the JSON error.
async fn require_token(State(state): State<AppState>, req: Request, next: Next) -> Response {
    use ui::auth::{self, Credential};
    let Some(expected) = state.token else {
        return next.run(req).await;
    };
    let valid = |t: &str| blake3::hash(t.trim().as_bytes()) == expected;
    let refused = match auth::credential(&req) {
        Credential::Bearer(t) | Credential::Cookie(t) if valid(&t) => {
            return next.run(req).await;
        }
        Credential::Login { token, location } if valid(&token) => {
            return auth::login(&token, &location);
        }
        Credential::Bearer(_) => "wrong bearer token",
        Credential::Login { .. } => "wrong token in ?token=",
        Credential::Cookie(_) => "the token of this browser's cookie is not this server's (it was restarted with another); open /?token=TOKEN again",
        Credential::OtherScheme | Credential::None => {
            if auth::wants_html(&req) {
                return auth::unauthorized_page("no token was given");
            }
            "this server needs `Authorization: Bearer TOKEN` (the token `lakestar serve` was started with)"
        }
    };
    if auth::wants_html(&req) {
        return auth::unauthorized_page(refused);
    }
    ApiError::new(StatusCode::UNAUTHORIZED, "unauthorized", refused).into_response()
}

/// Why a server cannot start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// A non-loopback address without a token.
    #[error("{addr} is reachable from other machines: pass --token T (or set LAKESTAR_TOKEN) so that clients must send `Authorization: Bearer T`, or bind 127.0.0.1")]
    TokenRequired {
        /// The address asked for.
        addr: SocketAddr,
    },
    /// An empty token.
    #[error("the token is empty; pass a non-empty --token")]
    EmptyToken,
    /// The address cannot be bound.
    #[error("cannot listen on {addr}: {source}; pick another --addr (port 0 picks a free one)")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// The cause.
        source: std::io::Error,
    },
}

/// Check the token rule: a token is required whenever `addr` is not a loopback address.
pub fn check_token_rule(addr: SocketAddr, token: Option<&str>) -> Result<(), ServeError> {
    match token {
        Some(t) if t.trim().is_empty() => Err(ServeError::EmptyToken),
        Some(_) => Ok(()),
        None if addr.ip().is_loopback() => Ok(()),
        None => Err(ServeError::TokenRequired { addr }),
    }
}

/// Bind `addr`.
pub async fn bind(addr: SocketAddr) -> Result<tokio::net::TcpListener, ServeError> {
    tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| ServeError::Bind { addr, source })
}

/// Serve `state` on `listener` until `stop` resolves; then stop the runs in progress
/// (their scripts are killed; their traces stay) and wait for the open requests.
///
/// The accept loop is written here rather than taken from `axum::serve`, which sets no
/// timer on hyper and so no header timeout: a client sending half a header held its
/// connection forever. Each connection is HTTP/1.1 (all axum's default features speak)
/// with the header timeout of `state.limits`.
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: AppState,
    shutdown: watch::Sender<bool>,
    stop: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let runs = state.runs.clone();
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(state.limits.header_timeout);
    let app = router(state);
    let graceful = GracefulShutdown::new();
    let mut stop = std::pin::pin!(stop);
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    accept_failed(e).await;
                    continue;
                }
            },
            () = &mut stop => break,
        };
        let conn =
            http.serve_connection(TokioIo::new(stream), TowerToHyperService::new(app.clone()));
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            // A header timeout, a client hanging up, a malformed request: that
            // connection's end, nothing to do for the server.
            if let Err(e) = conn.await {
                tracing::debug!("connection closed: {e}");
            }
        });
    }
    drop(listener);
    // Event streams watch this and end, so open connections do not hold the shutdown;
    // runs are stopped so that none outlives the server.
    let _ = shutdown.send(true);
    runs.stop_all();
    // Idle connections close at once, busy ones after their response.
    graceful.shutdown().await;
    Ok(())
}

/// After a failed `accept`: a connection that failed before it was taken is nothing to
/// the server; anything else (out of file descriptors) is waited out, as `axum::serve`
/// does, rather than retried in a busy loop.
async fn accept_failed(e: std::io::Error) {
    use std::io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    if matches!(
        e.kind(),
        ConnectionAborted | ConnectionRefused | ConnectionReset
    ) {
        return;
    }
    tracing::error!("accepting a connection failed: {e}; retrying in 1 s");
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_required_off_loopback_only() {
        let lo: SocketAddr = "127.0.0.1:0".parse().unwrap();
        let lo6: SocketAddr = "[::1]:0".parse().unwrap();
        let any: SocketAddr = "0.0.0.0:7878".parse().unwrap();
        assert!(check_token_rule(lo, None).is_ok());
        assert!(check_token_rule(lo6, None).is_ok());
        assert!(matches!(
            check_token_rule(any, None),
            Err(ServeError::TokenRequired { .. })
        ));
        assert!(check_token_rule(any, Some("s3cret")).is_ok());
        assert!(matches!(
            check_token_rule(any, Some(" ")),
            Err(ServeError::EmptyToken)
        ));
    }
}
