//! The one error shape of the HTTP API: `{"error":{"code":…,"message":…}}` with the
//! status that fits. `code` is stable (clients branch on it); `message` says what to do.

use super::MAX_BODY_BYTES;
use crate::agent::AgentError;
use crate::service::ServiceError;
use axum::extract::rejection::{JsonRejection, PathRejection, QueryRejection};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use lakestar_index::search::glob::GlobError;
use serde_json::json;
use std::time::Duration;

/// An error answer.
#[derive(Debug, Clone)]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// A stable, machine-readable name (`forbidden_path`, `bad_request`, …).
    pub code: &'static str,
    /// For people: what went wrong and what to do.
    pub message: String,
}

impl ApiError {
    /// An error with this status, code and message.
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            message: message.into(),
        }
    }

    /// 400 `bad_request`.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "bad_request", message)
    }

    /// 404 `not_found`.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, "not_found", message)
    }

    /// 413 `too_large`: a body over [`MAX_BODY_BYTES`].
    pub fn too_large() -> Self {
        Self::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "too_large",
            format!("the request body is larger than {MAX_BODY_BYTES} bytes, the most this server accepts"),
        )
    }

    /// 408 `body_timeout`: the body did not arrive within `limit`.
    pub fn body_timeout(limit: Duration) -> Self {
        Self::new(
            StatusCode::REQUEST_TIMEOUT,
            "body_timeout",
            format!(
                "the request body did not arrive within {} s (the server's --body-timeout); send it at once, with a Content-Length it matches",
                limit.as_secs_f64()
            ),
        )
    }

    /// 503 `search_timeout`: the search took longer than `limit`.
    pub fn search_timeout(limit: Duration) -> Self {
        Self::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "search_timeout",
            format!(
                "the search took longer than {} s (the server's --search-timeout); try again, or narrow it with format, glob or a smaller k",
                limit.as_secs_f64()
            ),
        )
    }

    /// 500 `internal`: the cause goes to the server's log, not to the client (it may
    /// name the server's files).
    pub fn internal(cause: impl std::fmt::Display) -> Self {
        tracing::error!("internal error: {cause}");
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "the server failed; its log (stderr) says why",
        )
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = json!({"error": {"code": self.code, "message": self.message}});
        (self.status, Json(body)).into_response()
    }
}

impl From<ServiceError> for ApiError {
    fn from(e: ServiceError) -> Self {
        let status = match &e {
            ServiceError::Forbidden { .. } => StatusCode::FORBIDDEN,
            ServiceError::NotFound { .. } => StatusCode::NOT_FOUND,
            ServiceError::BadRequest(_) | ServiceError::Preview(_) => StatusCode::BAD_REQUEST,
            // No index, wrong format version: the server cannot answer until someone
            // runs `lakestar index`.
            ServiceError::Index(i) if i.is_user_error() => StatusCode::SERVICE_UNAVAILABLE,
            ServiceError::Index(_) => return ApiError::internal(e),
        };
        ApiError::new(status, e.code(), e.to_string())
    }
}

impl From<AgentError> for ApiError {
    fn from(e: AgentError) -> Self {
        match &e {
            // The server's configuration, not the request, is missing something.
            AgentError::NotConfigured(message) => ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "llm_not_configured",
                format!(
                    "{} (lakestar.toml is read again at every POST /ask; environment variables are the ones `lakestar serve` started with)",
                    without_replay_hint(message)
                ),
            ),
            AgentError::NoFiles(_) => {
                ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "no_files", e.to_string())
            }
            _ if e.is_user_error() => ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "agent_unavailable",
                e.to_string(),
            ),
            _ => ApiError::internal(e),
        }
    }
}

/// The not-configured message without the CLI's advice to replay a cassette, which a
/// server cannot do.
pub fn without_replay_hint(message: &str) -> &str {
    message
        .strip_suffix("; or answer from a cassette with --replay FILE")
        .unwrap_or(message)
}

impl From<JsonRejection> for ApiError {
    fn from(r: JsonRejection) -> Self {
        let (code, message) = match r.status() {
            StatusCode::PAYLOAD_TOO_LARGE => return ApiError::too_large(),
            StatusCode::UNSUPPORTED_MEDIA_TYPE => (
                "unsupported_media_type",
                "send the body as JSON with `Content-Type: application/json`".to_string(),
            ),
            // Well-formed JSON that is not the expected object (a missing or unknown field).
            StatusCode::UNPROCESSABLE_ENTITY => ("invalid_body", r.body_text()),
            _ => ("bad_request", r.body_text()),
        };
        ApiError::new(r.status(), code, message)
    }
}

/// A bad `glob=`: the client's to fix.
impl From<GlobError> for ApiError {
    fn from(e: GlobError) -> Self {
        ApiError::bad_request(e.to_string())
    }
}

impl From<QueryRejection> for ApiError {
    fn from(r: QueryRejection) -> Self {
        ApiError::bad_request(r.body_text())
    }
}

impl From<PathRejection> for ApiError {
    fn from(r: PathRejection) -> Self {
        ApiError::bad_request(r.body_text())
    }
}

/// A blocking task that died (it panicked): a fault of ours.
impl From<tokio::task::JoinError> for ApiError {
    fn from(e: tokio::task::JoinError) -> Self {
        ApiError::internal(format!("a worker task failed: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn service_errors_map_to_statuses_and_stable_codes() {
        let cases = [
            (
                ServiceError::Forbidden {
                    path: "../x".into(),
                    reason: "no".into(),
                },
                403,
                "forbidden_path",
            ),
            (
                ServiceError::NotFound { path: "a".into() },
                404,
                "not_found",
            ),
            (ServiceError::BadRequest("k".into()), 400, "bad_request"),
        ];
        for (e, status, code) in cases {
            let a = ApiError::from(e);
            assert_eq!(a.status.as_u16(), status);
            assert_eq!(a.code, code);
        }
        let a = ApiError::from(AgentError::NotConfigured(
            crate::agent::build::NOT_CONFIGURED.into(),
        ));
        assert_eq!(a.status.as_u16(), 503);
        assert!(a.message.contains("LAKESTAR_MODEL"), "{}", a.message);
        assert!(!a.message.contains("--replay"), "{}", a.message);
    }
}
