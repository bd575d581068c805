//! The web UI at `/`: four pages (the lake at a glance, search, a file, ask) over the
//! JSON API, hand-written HTML, CSS and JavaScript embedded in the binary (no build step,
//! nothing fetched from elsewhere).
//!
//! The pages are one static shell each; their scripts fetch the API and build the page
//! with DOM calls that set text (`textContent`, never `innerHTML`), so a file name or a
//! cell value from the lake is shown as text whatever it holds. Every answer of the
//! server carries a Content-Security-Policy of `default-src 'self'` without
//! `unsafe-inline`: even markup that got through could run no script of its own.
//!
//! - [`auth`]: the token for browsers (`?token=` once, then an HttpOnly cookie).

pub mod auth;

use super::AppState;
use axum::extract::Request;
use axum::http::{header, HeaderName, HeaderValue};
use axum::middleware::Next;
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::Router;

/// The pages, as (route, script name, title). Each is the shell with its script.
pub const PAGES: &[(&str, &str, &str)] = &[
    ("/", "overview", "Overview"),
    ("/ui/search", "search", "Search"),
    ("/ui/file", "file", "File"),
    ("/ui/ask", "ask", "Ask"),
];

/// The embedded assets, as (name under `/ui/assets/`, content type, bytes).
pub const ASSETS: &[(&str, &str, &str)] = &[
    (
        "app.css",
        "text/css; charset=utf-8",
        include_str!("assets/app.css"),
    ),
    (
        "common.js",
        "text/javascript; charset=utf-8",
        include_str!("assets/common.js"),
    ),
    (
        "overview.js",
        "text/javascript; charset=utf-8",
        include_str!("assets/overview.js"),
    ),
    (
        "search.js",
        "text/javascript; charset=utf-8",
        include_str!("assets/search.js"),
    ),
    (
        "file.js",
        "text/javascript; charset=utf-8",
        include_str!("assets/file.js"),
    ),
    (
        "ask.js",
        "text/javascript; charset=utf-8",
        include_str!("assets/ask.js"),
    ),
    ("icon.svg", "image/svg+xml", include_str!("assets/icon.svg")),
];

const SHELL_HTML: &str = include_str!("assets/shell.html");
/// The page of a browser without the token (`{why}` is filled with a fixed message).
pub(super) const UNAUTHORIZED_HTML: &str = include_str!("assets/unauthorized.html");

/// The policy on every answer: the page's own scripts, styles and requests only; no
/// inline script or style, no framing, forms only to this server.
pub const CSP: &str =
    "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/// The page routes (behind the token, like the API).
pub fn pages() -> Router<AppState> {
    let mut r = Router::new();
    for (route, script, title) in PAGES {
        let html = SHELL_HTML
            .replace("{title}", title)
            .replace("{page}", script);
        r = r.route(route, get(move || async move { Html(html) }));
    }
    r
}

/// The asset routes. Open without the token: they are the same in every binary and
/// hold nothing of the lake, and the 401 page needs its stylesheet.
pub fn assets() -> Router<AppState> {
    let mut r = Router::new();
    for (name, content_type, body) in ASSETS {
        r = r.route(
            &format!("/ui/assets/{name}"),
            get(move || async move {
                (
                    [
                        (header::CONTENT_TYPE, *content_type),
                        (header::CACHE_CONTROL, "no-cache"),
                    ],
                    *body,
                )
            }),
        );
    }
    r
}

/// Add the security headers to every answer (pages, assets and the API alike).
pub async fn security_headers(req: Request, next: Next) -> Response {
    let mut r = next.run(req).await;
    let h = r.headers_mut();
    for (name, value) in [
        (header::CONTENT_SECURITY_POLICY, CSP),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        // A page opened with ?token= is redirected at once, but no referrer leaves anyway.
        (header::REFERRER_POLICY, "no-referrer"),
        (
            HeaderName::from_static("cross-origin-opener-policy"),
            "same-origin",
        ),
    ] {
        h.insert(name, HeaderValue::from_static(value));
    }
    r.into_response()
}
