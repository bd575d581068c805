//! Opening a database for reading only: header checks, the immutable read-only URI,
//! and the per-query time budget.

use super::{sql_err, QUERY_TIME_MAX, VALUE_BYTES_MAX};
use crate::analyze::{AnalyzeError, Source};
use rusqlite::limits::Limit;
use rusqlite::{Connection, OpenFlags};
use std::path::Path;
use std::time::Instant;

/// Checks the 100-byte header; a file shorter than the page count its header states is
/// truncated (the count is trusted only when the header marks it valid).
pub(super) fn check_header(src: &Source) -> Result<(), AnalyzeError> {
    let bad = |m: String| AnalyzeError::Malformed(format!("SQLite: {m}"));
    let h: &[u8; 100] = src
        .head()
        .get(..100)
        .and_then(|h| h.try_into().ok())
        .ok_or_else(|| bad(format!("{} bytes is too short for a header", src.size())))?;
    if !h.starts_with(b"SQLite format 3\0") {
        return Err(bad("no SQLite header".into()));
    }
    let page_size = match u16::from_be_bytes([h[16], h[17]]) {
        1 => 65_536,
        n => u64::from(n),
    };
    if page_size < 512 || !page_size.is_power_of_two() {
        return Err(bad(format!("invalid page size {page_size}")));
    }
    let pages = u64::from(u32::from_be_bytes([h[28], h[29], h[30], h[31]]));
    let count_valid = h[24..28] == h[92..96];
    if count_valid && pages.saturating_mul(page_size) > src.size() {
        return Err(bad(format!(
            "truncated: the header states {pages} pages of {page_size} bytes, the file has {} bytes",
            src.size()
        )));
    }
    Ok(())
}

/// `path` as the path part of a SQLite URI: every byte but unreserved ones and `/` is
/// percent-encoded, so `?`, `#` and `%` in names cannot end or alter it.
fn uri(path: &Path) -> String {
    #[cfg(unix)]
    let bytes = std::os::unix::ffi::OsStrExt::as_bytes(path.as_os_str()).to_vec();
    #[cfg(not(unix))]
    let bytes = path.to_string_lossy().replace('\\', "/").into_bytes();
    let mut s = String::from(if path.is_absolute() {
        "file://"
    } else {
        "file:"
    });
    for b in bytes {
        if b.is_ascii_alphanumeric() || matches!(b, b'/' | b'-' | b'.' | b'_' | b'~') {
            s.push(char::from(b));
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    s.push_str("?mode=ro&immutable=1");
    s
}

pub(super) fn open(path: &Path) -> Result<Connection, AnalyzeError> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_URI
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(uri(path), flags).map_err(sql_err)?;
    // Views and triggers of a lake's file may call functions with side effects.
    conn.pragma_update(None, "trusted_schema", false)
        .map_err(sql_err)?;
    conn.set_limit(Limit::SQLITE_LIMIT_LENGTH, VALUE_BYTES_MAX)
        .map_err(sql_err)?;
    Ok(conn)
}

/// Interrupt the connection's statements after [`QUERY_TIME_MAX`] from now.
pub(super) fn start_budget(conn: &mut Connection) {
    let deadline = Instant::now() + QUERY_TIME_MAX;
    let _ = conn.progress_handler(10_000, Some(move || Instant::now() > deadline));
}
