//! A two-sample statistic of two columns of one table, computed with the rows where
//! either is missing still in.

use regex::{Captures, Regex};
use std::sync::OnceLock;

/// `stats.pearsonr(df["a"], df["b"])` (or `spearmanr`, `kendalltau`) made
/// `stats.pearsonr(*df[["a", "b"]].dropna().T.values)`: scipy returns `nan` for both the
/// statistic and the p-value when either column has one missing value, so the script
/// runs and prints `nan` (one missing value in 2,000 rows is enough, every round).
/// Dropping the rows where either is missing is what pandas' own
/// `.corr()` does, and on columns without missing values the result is the same. Only
/// two columns of the same table, each written as a plain string key.
pub(super) fn paired_columns(code: &str) -> Option<String> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(
            r#"(stats\.(?:pearsonr|spearmanr|kendalltau)\()\s*([A-Za-z_]\w*)\[\s*("[^"\n]*"|'[^'\n]*')\s*\]\s*,\s*([A-Za-z_]\w*)\[\s*("[^"\n]*"|'[^'\n]*')\s*\]\s*\)"#,
        )
        .expect("static regex")
    });
    let mut changed = false;
    let fixed = re.replace_all(code, |c: &Captures| {
        if c[2] != c[4] {
            return c[0].to_string();
        }
        changed = true;
        format!(
            "{}*{}[[{}, {}]].dropna().T.values)",
            &c[1], &c[2], &c[3], &c[5]
        )
    });
    changed.then(|| fixed.into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_test_of_two_columns_of_one_table_leaves_out_rows_missing_either() {
        // As the local model wrote it.
        assert_eq!(
            paired_columns(r#"r, p = stats.pearsonr(df["High"], df["Low"])"#).as_deref(),
            Some(r#"r, p = stats.pearsonr(*df[["High", "Low"]].dropna().T.values)"#)
        );
        assert_eq!(
            paired_columns("rho, p = stats.spearmanr( d['a'] , d['b'] )").as_deref(),
            Some("rho, p = stats.spearmanr(*d[['a', 'b']].dropna().T.values)")
        );
        // Two tables, computed columns or already paired: left alone.
        for s in [
            r#"stats.pearsonr(a["x"], b["y"])"#,
            r#"stats.pearsonr(df["x"] * 2, df["y"])"#,
            r#"stats.pearsonr(pair["a"], pair["b"], alternative="greater")"#,
            "stats.pearsonr(x, y)",
        ] {
            assert_eq!(paired_columns(s), None, "{s}");
        }
    }
}
