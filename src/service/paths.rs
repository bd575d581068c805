//! Confining the paths clients give to the lake: a path from a URL or a tool call names
//! a file of the lake, relative to its root, and nothing else.

use super::ServiceError;
use std::path::Path;

/// Longest path accepted (Linux's PATH_MAX).
pub const MAX_PATH: usize = 4096;

/// `given` as a lake-relative, `/`-separated catalog path, or a refusal: empty,
/// absolute, `..` anywhere, NUL, or a path that exists but resolves (through symbolic
/// links) outside the canonical lake root `lake`. `.` and empty components are dropped,
/// so `./a//b.csv` is `a/b.csv`. Percent-decoding is the caller's: a decoded `%2e%2e`
/// is `..` here and refused.
pub fn confine(lake: &Path, given: &str) -> Result<String, ServiceError> {
    let refuse = |reason: &str| ServiceError::Forbidden {
        path: given.chars().take(200).collect(),
        reason: reason.to_string(),
    };
    if given.len() > MAX_PATH {
        return Err(refuse("longer than 4096 bytes"));
    }
    if given.contains('\0') {
        return Err(refuse("contains a NUL byte"));
    }
    if given.starts_with('/') || given.starts_with('\\') {
        return Err(refuse(
            "absolute paths are refused; give the path relative to the lake root",
        ));
    }
    let mut parts = Vec::new();
    for c in given.split('/') {
        match c {
            "" | "." => {}
            ".." => return Err(refuse("`..` is refused; paths stay inside the lake")),
            c => parts.push(c),
        }
    }
    if parts.is_empty() {
        return Err(refuse(
            "empty path; give a file's path relative to the lake root",
        ));
    }
    let rel = parts.join("/");
    let full = lake.join(&rel);
    // A lake in an object store (its root a URL) has no links to follow.
    let url = lakestar_index::store::is_url(&lake.to_string_lossy());
    if !url && full.symlink_metadata().is_ok() {
        match full.canonicalize() {
            Ok(c) if c.starts_with(lake) => {}
            Ok(_) => return Err(refuse("it leads outside the lake (a symbolic link)")),
            // A dangling link: its target cannot be checked, so it is not followed.
            Err(_) => return Err(refuse("it is a link that cannot be resolved")),
        }
    }
    Ok(rel)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inside_paths_are_normalized_and_escapes_refused() {
        let d = tempfile::tempdir().unwrap();
        let lake = d.path().canonicalize().unwrap();
        std::fs::create_dir(lake.join("a")).unwrap();
        std::fs::write(lake.join("a/b.csv"), "x\n1\n").unwrap();
        assert_eq!(confine(&lake, "./a//b.csv").unwrap(), "a/b.csv");
        assert_eq!(confine(&lake, "a/missing.csv").unwrap(), "a/missing.csv");
        for bad in ["", ".", "/etc/passwd", "../x", "a/../../x", "a/..", "a\0b"] {
            let e = confine(&lake, bad).unwrap_err();
            assert!(matches!(e, ServiceError::Forbidden { .. }), "{bad:?}: {e}");
        }
        assert!(confine(&lake, &"a/".repeat(3000)).is_err());
    }

    #[test]
    fn symlinks_out_of_the_lake_are_refused() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.csv"), "s\n1\n").unwrap();
        let d = tempfile::tempdir().unwrap();
        let lake = d.path().canonicalize().unwrap();
        std::fs::write(lake.join("in.csv"), "x\n1\n").unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret.csv"), lake.join("out.csv"))
            .unwrap();
        std::os::unix::fs::symlink(outside.path(), lake.join("outdir")).unwrap();
        std::os::unix::fs::symlink(lake.join("in.csv"), lake.join("alias.csv")).unwrap();
        std::os::unix::fs::symlink(lake.join("gone"), lake.join("dangling.csv")).unwrap();
        assert!(confine(&lake, "out.csv").is_err());
        assert!(confine(&lake, "outdir/secret.csv").is_err());
        assert!(confine(&lake, "dangling.csv").is_err());
        assert_eq!(confine(&lake, "alias.csv").unwrap(), "alias.csv");
    }
}
