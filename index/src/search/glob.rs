//! Path globs: the `--glob` of a search (CLI, HTTP `glob=`, MCP `glob`) and the relevance
//! patterns of a retrieval evaluation.
//!
//! A glob is compiled once with `globset`, into a regular expression matched in time
//! linear in the path: a hand-written backtracking matcher takes minutes on
//! `**/**/**/…/*.csv` against a deep path, and a search runs the glob against every
//! candidate. Its length is bounded too ([`MAX_GLOB_BYTES`]), so that compiling it is
//! cheap whoever sends it.

pub use crate::error::{GlobError, MAX_GLOB_BYTES};
use globset::{GlobBuilder, GlobMatcher};
use serde::Deserialize;

/// A compiled glob over lake-relative, `/`-separated paths: `*` and `?` do not cross `/`,
/// `**` spans directories (`**/x.csv` matches `x.csv` too), `[abc]` and `{a,b}` choose.
#[derive(Debug, Clone, Deserialize)]
#[serde(try_from = "String")]
pub struct PathGlob {
    pattern: String,
    matcher: GlobMatcher,
}

impl PathGlob {
    /// Compile `pattern`, or say why it cannot be used.
    pub fn new(pattern: &str) -> Result<PathGlob, GlobError> {
        if pattern.len() > MAX_GLOB_BYTES {
            return Err(GlobError::TooLong { len: pattern.len() });
        }
        let glob = GlobBuilder::new(pattern)
            .literal_separator(true)
            .build()
            .map_err(|e| GlobError::Invalid {
                pattern: pattern.chars().take(200).collect(),
                reason: e.kind().to_string(),
            })?;
        Ok(PathGlob {
            pattern: pattern.to_string(),
            matcher: glob.compile_matcher(),
        })
    }

    /// The filter a search surface was given (`--glob`, `glob=`, the MCP `glob`): none
    /// when absent or blank (an agent or a form sends `""` for "no filter"), else the
    /// compiled glob. Every surface goes through this, so all refuse the same globs in
    /// the same words.
    pub fn filter(given: Option<&str>) -> Result<Option<PathGlob>, GlobError> {
        match given {
            Some(g) if !g.trim().is_empty() => PathGlob::new(g).map(Some),
            _ => Ok(None),
        }
    }

    /// Whether `path` (lake-relative, `/`-separated) matches.
    pub fn is_match(&self, path: &str) -> bool {
        self.matcher.is_match(path)
    }

    /// The pattern as given.
    pub fn as_str(&self) -> &str {
        &self.pattern
    }
}

impl TryFrom<String> for PathGlob {
    type Error = GlobError;

    fn try_from(pattern: String) -> Result<Self, GlobError> {
        PathGlob::new(&pattern)
    }
}

impl std::fmt::Display for PathGlob {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.pattern)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    fn glob_match(pattern: &str, path: &str) -> bool {
        PathGlob::new(pattern).unwrap().is_match(path)
    }

    #[test]
    fn star_and_question_mark_stay_in_one_directory_and_double_star_spans_them() {
        assert!(glob_match("a/*.csv", "a/x.csv"));
        assert!(!glob_match("a/*.csv", "a/b/x.csv"));
        assert!(glob_match("a/**/x.csv", "a/b/c/x.csv"));
        assert!(glob_match("a/**/x.csv", "a/x.csv"));
        assert!(glob_match("**/x.csv", "x.csv"));
        assert!(glob_match("**/x.csv", "d/e/x.csv"));
        assert!(glob_match("x?.csv", "x1.csv"));
        assert!(!glob_match("a?b.csv", "a/b.csv"));
        assert!(!glob_match("x.csv", "y.csv"));
        assert!(!glob_match("*.csv", "sub/x.csv"));
        assert!(glob_match("sales/**", "sales/2024/q1.csv"));
        assert!(glob_match("sales/{2023,2024}/*.csv", "sales/2024/q1.csv"));
        assert!(!glob_match("sales/{2023,2024}/*.csv", "sales/2022/q1.csv"));
        assert!(glob_match("q[0-9].csv", "q1.csv"));
    }

    #[test]
    fn pathological_globs_match_in_linear_time() {
        // A backtracking matcher takes minutes on each of these.
        let deep = "d01/d02/d03/d04/d05/d06/d07/d08/d09/d10/d11/d12/notes.txt";
        let stars = format!("{}*.csv", "**/".repeat(12));
        let many_a = format!("{}b.csv", "*a".repeat(40));
        let long_a = format!("{}.txt", "a".repeat(200));
        let start = Instant::now();
        for _ in 0..100 {
            assert!(!glob_match(&stars, deep));
            assert!(!glob_match(&many_a, &long_a));
        }
        // Generous: the work is microseconds; a backtracking matcher's is minutes.
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{:?}",
            start.elapsed()
        );
        assert!(glob_match(&stars, "a/b/c.csv"));
    }

    #[test]
    fn too_long_or_malformed_globs_are_user_errors_saying_what_to_give() {
        let long = "a".repeat(MAX_GLOB_BYTES + 1);
        let e = PathGlob::new(&long).unwrap_err();
        assert_eq!(
            e,
            GlobError::TooLong {
                len: MAX_GLOB_BYTES + 1
            }
        );
        assert!(e.to_string().contains("sales/**/*.csv"), "{e}");
        assert!(PathGlob::new(&"a".repeat(MAX_GLOB_BYTES)).is_ok());
        for bad in ["data/[abc.csv", "data/{a,b.csv"] {
            let e = PathGlob::new(bad).unwrap_err();
            assert!(matches!(e, GlobError::Invalid { .. }), "{bad}: {e:?}");
            assert!(e.to_string().contains("sales/**/*.csv"), "{e}");
        }
        assert!(PathGlob::filter(None).unwrap().is_none());
        assert!(PathGlob::filter(Some(" ")).unwrap().is_none());
        assert_eq!(
            PathGlob::filter(Some("*.csv")).unwrap().unwrap().as_str(),
            "*.csv"
        );
        assert!(PathGlob::filter(Some(&long)).is_err());
        let e: crate::Error = crate::UserError::from(PathGlob::new(&long).unwrap_err()).into();
        assert!(e.is_user_error());
    }
}
