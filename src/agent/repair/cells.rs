//! A cell of a correlation or covariance matrix read as `m["a", "b"]`.

use regex::Regex;
use std::sync::OnceLock;

/// `.corr()["a", "b"]` (or `.cov()`'s) made `.corr().loc["a", "b"]`: two names in one
/// pair of brackets are one key, a tuple, which the matrix's single-level columns never
/// have, so the script fails with `KeyError: ('a', 'b')` whatever the data, and a
/// debugger tends to hand the script back unchanged. The matrix is the
/// call's result only when the brackets follow its closing parenthesis directly; its
/// arguments may not hold parentheses (`.corr(method="spearman")` is fine).
pub(super) fn matrix_cells(code: &str) -> Option<String> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(
            r#"(\.(?:corr|cov)\([^()\n]*\))\[(\s*(?:"[^"\n]*"|'[^'\n]*')\s*,\s*(?:"[^"\n]*"|'[^'\n]*')\s*)\]"#,
        )
        .expect("static regex")
    });
    re.is_match(code)
        .then(|| re.replace_all(code, "$1.loc[$2]").into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pair_of_names_after_corr_or_cov_reads_the_cell() {
        // As the local model wrote it.
        assert_eq!(
            matrix_cells(r#"r = df[["neg", "pos"]].dropna().corr()["neg", "pos"]"#).as_deref(),
            Some(r#"r = df[["neg", "pos"]].dropna().corr().loc["neg", "pos"]"#)
        );
        assert_eq!(
            matrix_cells("c = d.cov()['a','b'] + d.corr(method='spearman')[ 'x' , 'y' ]")
                .as_deref(),
            Some("c = d.cov().loc['a','b'] + d.corr(method='spearman').loc[ 'x' , 'y' ]")
        );
        // Already right, one name, a column pair of a frame, or another call: untouched.
        for s in [
            "r = df.corr().loc['a', 'b']",
            "r = df.corr()['a']['b']",
            "r = df[['a', 'b']].corr()",
            "r = df.groupby('g')['a', 'b']",
            "r = df['a'].corr(df['b'])",
        ] {
            assert_eq!(matrix_cells(s), None, "{s}");
        }
    }
}
