//! The index routes: `/health`, `/status`, `/overview`, `/search`, `/files/{path}`,
//! `/files/{path}/rows`.

use super::errors::ApiError;
use super::AppState;
use crate::service::rows::DEFAULT_ROWS;
use crate::service::{Lake, Overview, Rows, ServiceError, Status};
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::Uri;
use axum::response::{IntoResponse, Response};
use axum::Json;
use lakestar_index::search::engine::{Hit, SearchOptions};
use lakestar_index::search::glob::PathGlob;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;

/// Results of a search when `k` is not given.
pub const DEFAULT_K: usize = 10;
/// Bytes of a description's text rendering when `max_bytes` is not given.
pub const DEFAULT_DESCRIBE_BYTES: usize = 2048;
/// Bytes of a description's text rendering at most.
pub const MAX_DESCRIBE_BYTES: usize = 1 << 20;

/// Run a blocking call into the index off the async workers.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, ServiceError> + Send + 'static,
) -> Result<T, ApiError> {
    Ok(tokio::task::spawn_blocking(f).await??)
}

/// [`blocking`], answering 503 `search_timeout` when `f` takes longer than `limit`. The
/// client gets that answer at once, but a blocking thread cannot be stopped: `f`
/// finishes in the background and its result is dropped.
async fn blocking_within<T: Send + 'static>(
    limit: Duration,
    f: impl FnOnce() -> Result<T, ServiceError> + Send + 'static,
) -> Result<T, ApiError> {
    match tokio::time::timeout(limit, tokio::task::spawn_blocking(f)).await {
        Ok(joined) => Ok(joined??),
        Err(_) => Err(ApiError::search_timeout(limit)),
    }
}

/// `GET /health`: the process answers (no token needed, no index read).
pub async fn health() -> Json<Value> {
    Json(json!({"ok": true, "version": env!("CARGO_PKG_VERSION")}))
}

/// `GET /status`: what the index holds.
pub async fn status(State(s): State<AppState>) -> Result<Json<Status>, ApiError> {
    let lake = s.lake.clone();
    Ok(Json(blocking(move || lake.status()).await?))
}

/// `GET /overview`: the lake at a glance (what the web UI's first page shows).
pub async fn overview(State(s): State<AppState>) -> Result<Json<Overview>, ApiError> {
    let lake = s.lake.clone();
    Ok(Json(blocking(move || lake.overview()).await?))
}

/// The parameters of `GET /search`.
#[derive(Debug, Deserialize)]
pub struct SearchParams {
    /// The question or keywords.
    q: Option<String>,
    /// Results wanted (1..=`service::MAX_K`).
    k: Option<usize>,
    /// Only this format.
    format: Option<String>,
    /// Only paths matching this glob (blank: no filter).
    glob: Option<String>,
    /// List collection members on their own.
    #[serde(default)]
    expand: bool,
}

/// The answer of `GET /search`.
#[derive(Debug, Serialize)]
pub struct SearchAnswer {
    /// The query as received.
    pub query: String,
    /// The files, best first.
    pub hits: Vec<Hit>,
}

/// `GET /search?q=…&k=…&format=…&glob=…&expand=…`.
pub async fn search(
    State(s): State<AppState>,
    params: Result<Query<SearchParams>, QueryRejection>,
) -> Result<Json<SearchAnswer>, ApiError> {
    let Query(p) = params?;
    let query =
        p.q.ok_or_else(|| ApiError::bad_request("the parameter q (the question) is required"))?;
    let opts = SearchOptions {
        k: p.k.unwrap_or(DEFAULT_K),
        format: match p.format.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(f) => Some(
                lakestar_index::Format::from_user(f)
                    .map_err(|e| ApiError::bad_request(e.to_string()))?,
            ),
        },
        glob: PathGlob::filter(p.glob.as_deref())?,
        expand: p.expand,
        ..Default::default()
    };
    let lake = s.lake.clone();
    let q = query.clone();
    let hits = blocking_within(s.limits.search_timeout, move || lake.search(&q, &opts)).await?;
    Ok(Json(SearchAnswer { query, hits }))
}

/// The parameters of `GET /files/{path}`.
#[derive(Debug, Deserialize)]
pub struct FileParams {
    /// Budget of the text rendering.
    max_bytes: Option<usize>,
    /// Add the LLM analyzer's description.
    #[serde(default)]
    llm: bool,
}

/// `GET /files/{path}`: the description of one indexed file; `GET /files/{path}/rows`:
/// the first rows of one of its tables. Both share the catch-all route: a path ending in
/// `/rows` asks for rows unless a file of the lake has that very path. The path is
/// percent-decoded by the extractor, then confined to the lake by the service (`..`,
/// absolute paths and links leading out are refused).
pub async fn file(
    State(s): State<AppState>,
    path: Result<Path<String>, PathRejection>,
    uri: Uri,
) -> Result<Response, ApiError> {
    let Path(path) = path?;
    let lake = s.lake.clone();
    if let Some(of) = path.strip_suffix("/rows") {
        let (l, p) = (lake.clone(), path.clone());
        let named_rows = tokio::task::spawn_blocking(move || l.is_file(&p))
            .await
            .map_err(ApiError::internal)?;
        if !named_rows {
            return Ok(rows(lake, of.to_string(), &uri).await?.into_response());
        }
    }
    let Query(p) = Query::<FileParams>::try_from_uri(&uri)?;
    let max_bytes = p.max_bytes.unwrap_or(DEFAULT_DESCRIBE_BYTES);
    if max_bytes == 0 || max_bytes > MAX_DESCRIBE_BYTES {
        return Err(ApiError::bad_request(format!(
            "max_bytes must be between 1 and {MAX_DESCRIBE_BYTES}"
        )));
    }
    let described = blocking(move || lake.describe(&path, max_bytes, p.llm)).await?;
    Ok(Json(described).into_response())
}

/// The parameters of `GET /files/{path}/rows`.
#[derive(Debug, Deserialize)]
pub struct RowsParams {
    /// Rows wanted (1..=`service::rows::MAX_ROWS`).
    n: Option<usize>,
    /// The table or sheet, by name or 1-based number (default: the first with rows).
    table: Option<String>,
}

/// `GET /files/{path}/rows?n=…&table=…`.
async fn rows(lake: Arc<Lake>, path: String, uri: &Uri) -> Result<Json<Rows>, ApiError> {
    let Query(p) = Query::<RowsParams>::try_from_uri(uri)?;
    let n = p.n.unwrap_or(DEFAULT_ROWS);
    let table = p.table.filter(|t| !t.trim().is_empty());
    Ok(Json(
        blocking(move || lake.rows(&path, table.as_deref(), n)).await?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[tokio::test]
    async fn a_search_over_its_time_is_answered_at_once_and_one_within_it_is_not() {
        let start = Instant::now();
        let late = blocking_within(Duration::from_millis(100), || {
            std::thread::sleep(Duration::from_secs(3));
            Ok(())
        })
        .await
        .unwrap_err();
        assert!(
            start.elapsed() < Duration::from_secs(2),
            "{:?}",
            start.elapsed()
        );
        assert_eq!((late.status.as_u16(), late.code), (503, "search_timeout"));
        assert!(
            late.message.contains("--search-timeout"),
            "{}",
            late.message
        );
        let on_time = blocking_within(Duration::from_secs(10), || Ok(7)).await;
        assert_eq!(on_time.unwrap(), 7);
        let refused = blocking_within(Duration::from_secs(10), || -> Result<(), _> {
            Err(ServiceError::BadRequest("no".into()))
        })
        .await
        .unwrap_err();
        assert_eq!(refused.status.as_u16(), 400);
    }
}
