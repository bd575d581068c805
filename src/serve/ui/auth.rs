//! The token rules for browsers. A browser cannot send `Authorization: Bearer` when it
//! navigates, so `GET /any/page?token=T` with the right token answers a redirect to the
//! same URL without it and sets an HttpOnly, SameSite=Strict cookie holding the token;
//! from then on the cookie stands for the header (the page's scripts never see it). The
//! token leaves the address bar at once, and `Referrer-Policy: no-referrer` keeps it out
//! of any referrer.

use axum::extract::Request;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{Html, IntoResponse, Response};

/// The cookie's name.
pub const COOKIE: &str = "lakestar_token";

/// What a request brings to prove it may be served.
pub enum Credential {
    /// `Authorization: Bearer T`.
    Bearer(String),
    /// `?token=T` on a GET: checked, then traded for the cookie.
    Login {
        /// The token.
        token: String,
        /// The URL to send the browser to: the same one without `token`.
        location: String,
    },
    /// The cookie set by a login.
    Cookie(String),
    /// An `Authorization` header of another scheme.
    OtherScheme,
    /// Nothing.
    None,
}

/// The credential `req` carries, in the order header, `?token=`, cookie.
pub fn credential(req: &Request) -> Credential {
    if let Some(v) = req.headers().get(header::AUTHORIZATION) {
        return match v
            .to_str()
            .ok()
            .and_then(|v| v.trim().split_once(' '))
            // The scheme's name is case-insensitive (RFC 9110 §11.1).
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        {
            Some((_, token)) => Credential::Bearer(token.trim().to_string()),
            None => Credential::OtherScheme,
        };
    }
    if req.method() == axum::http::Method::GET {
        if let Some(query) = req.uri().query() {
            let mut token = None;
            let mut rest = form_urlencoded::Serializer::new(String::new());
            for (k, v) in form_urlencoded::parse(query.as_bytes()) {
                if k == "token" {
                    token = Some(v.into_owned());
                } else {
                    rest.append_pair(&k, &v);
                }
            }
            if let Some(token) = token {
                let rest = rest.finish();
                // `//host/…` (or `/\host`) would send the browser to another site.
                let path = match req.uri().path() {
                    p if p.starts_with("//") || p.starts_with("/\\") => "/",
                    p => p,
                };
                let location = if rest.is_empty() {
                    path.to_string()
                } else {
                    format!("{path}?{rest}")
                };
                return Credential::Login { token, location };
            }
        }
    }
    match cookie_value(req) {
        Some(token) => Credential::Cookie(token),
        None => Credential::None,
    }
}

/// The token in the cookie (stored hex-encoded: a token may hold bytes a cookie cannot).
fn cookie_value(req: &Request) -> Option<String> {
    req.headers()
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE)
        .and_then(|(_, value)| unhex(value))
}

fn hex(s: &str) -> String {
    s.bytes().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Option<String> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    let bytes = (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect::<Option<Vec<u8>>>()?;
    String::from_utf8(bytes).ok()
}

/// 303 to `location`, setting the cookie that holds `token`. Session-long (no Max-Age),
/// HttpOnly (no script reads it), SameSite=Strict (no other site's page sends it: the
/// cookie cannot be used for cross-site requests).
pub fn login(token: &str, location: &str) -> Response {
    let cookie = format!(
        "{COOKIE}={}; Path=/; HttpOnly; SameSite=Strict",
        hex(token.trim())
    );
    let mut r = StatusCode::SEE_OTHER.into_response();
    let h = r.headers_mut();
    // Built from a path the request had and hex digits: always a valid header value.
    if let (Ok(loc), Ok(c)) = (
        HeaderValue::from_str(location),
        HeaderValue::from_str(&cookie),
    ) {
        h.insert(header::LOCATION, loc);
        h.insert(header::SET_COOKIE, c);
    }
    r
}

/// Whether the client is a browser navigating (it accepts HTML), not an API client.
pub fn wants_html(req: &Request) -> bool {
    req.headers()
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("text/html"))
}

/// The 401 page a browser gets: how to get in. It repeats nothing of the request (`why`
/// is one of the server's own messages, escaped all the same).
pub fn unauthorized_page(why: &str) -> Response {
    let why = why
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    let page = super::UNAUTHORIZED_HTML.replace("{why}", &why);
    (StatusCode::UNAUTHORIZED, Html(page)).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(uri: &str, headers: &[(&str, &str)]) -> Request {
        let mut b = Request::builder().uri(uri);
        for (k, v) in headers {
            b = b.header(*k, *v);
        }
        b.body(axum::body::Body::empty()).unwrap()
    }

    #[test]
    fn credentials_are_read_from_header_query_and_cookie() {
        let c = credential(&req("/", &[("authorization", "bearer  s3cret ")]));
        assert!(matches!(c, Credential::Bearer(t) if t == "s3cret"));
        let c = credential(&req("/", &[("authorization", "Basic abc")]));
        assert!(matches!(c, Credential::OtherScheme));
        let c = credential(&req("/ui/search?q=a+b&token=t%20k&k=5", &[]));
        assert!(
            matches!(&c, Credential::Login { token, location } if token == "t k" && location == "/ui/search?q=a+b&k=5"),
        );
        let c = credential(&req("/?token=x", &[]));
        assert!(matches!(&c, Credential::Login { location, .. } if location == "/"));
        for elsewhere in ["//evil.example/x?token=x", "/%5Cevil.example?token=x"] {
            let c = credential(&req(elsewhere, &[]));
            assert!(
                matches!(&c, Credential::Login { location, .. } if location.starts_with('/') && !location.starts_with("//") && !location.contains("evil.example/x")),
                "{elsewhere}"
            );
        }
        let cookie = format!("a=b; {COOKIE}={}; c=d", hex("t;k é"));
        let c = credential(&req("/", &[("cookie", &cookie)]));
        assert!(matches!(c, Credential::Cookie(t) if t == "t;k é"));
        let c = credential(&req("/", &[("cookie", "lakestar_token=zz")]));
        assert!(matches!(c, Credential::None));
        assert!(matches!(credential(&req("/x", &[])), Credential::None));
    }

    #[test]
    fn a_login_redirects_and_sets_a_strict_http_only_cookie() {
        let r = login("s3cret", "/ui/search?q=x");
        assert_eq!(r.status(), StatusCode::SEE_OTHER);
        assert_eq!(r.headers()[header::LOCATION], "/ui/search?q=x");
        let c = r.headers()[header::SET_COOKIE].to_str().unwrap();
        assert!(c.starts_with(&format!("{COOKIE}={}", hex("s3cret"))), "{c}");
        assert!(
            c.contains("HttpOnly") && c.contains("SameSite=Strict"),
            "{c}"
        );
    }
}
