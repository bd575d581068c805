//! One-line remedies for the errors small models make most with pandas and scipy, added
//! to what the debugger is told. A small model's debugger, shown only the traceback of
//! `.dt` on a text column, returns the same script until the run gives up; the fix is
//! one well-known call it does not think of.
//!
//! Matched on the exception text only; each remedy names the general cure, never a file
//! or column.

use crate::agent::repair;
use regex::Regex;
use std::borrow::Cow;
use std::sync::OnceLock;

/// (text of the exception, remedy). First match wins.
const REMEDIES: &[(&str, &str)] = &[
    (
        "Can only use .dt accessor with datetimelike values",
        "The column holds dates as text: convert it first with `pd.to_datetime(df[col], format=...)` (the format its description gives after `as`), or load the file with its description's `load:` call, which parses dates.",
    ),
    (
        "could not convert string to float",
        "A column holds numbers written as text (thousands separators, %, currency signs): load the file with its description's `load:` call, or convert with `pd.to_numeric(df[col].astype(str).str.replace(',', ''), errors='coerce')`.",
    ),
    (
        "unsupported operand type(s)",
        "A value is text or None where a number is needed: convert the column with `pd.to_numeric(df[col], errors='coerce')` and drop missing values first.",
    ),
    (
        "cannot unpack non-iterable",
        "The call returns one value (or one result object with named fields such as `.statistic` and `.pvalue`): do not unpack it into several names.",
    ),
    (
        "Input contains NaN",
        "Drop the rows with missing values in the columns used (`df.dropna(subset=[...])`) before fitting or testing.",
    ),
    (
        "The truth value of a Series is ambiguous",
        "Combine conditions on columns with `&` and `|`, each in parentheses, not `and`/`or`; use `.any()` or `.all()` for one truth value.",
    ),
    (
        "Unknown format code 'f' for object of type 'str'",
        "The value is text: convert it with `float(...)` before formatting it as a number.",
    ),
    (
        "could not convert",
        "A column holds text where numbers are needed: select the numeric columns (`df.select_dtypes('number')`) or convert with `pd.to_numeric(..., errors='coerce')`.",
    ),
];

/// The remedy for the last exception of `stderr`, if it is a known one.
pub(super) fn remedy(stderr: &str) -> Option<Cow<'static, str>> {
    let last = stderr
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty() && !l.starts_with(' '))?;
    if let Some(cure) = function_as_method(last) {
        return Some(Cow::Owned(cure));
    }
    if tuple_key(last) {
        return Some(Cow::Borrowed(TUPLE_KEY));
    }
    REMEDIES
        .iter()
        .find(|(text, _)| last.contains(text))
        .map(|(_, r)| Cow::Borrowed(*r))
}

/// The cure of [`tuple_key`].
const TUPLE_KEY: &str = "Several names in one pair of brackets are one key, a tuple: select columns with a list, `df[['a', 'b']]`, and read one cell of a table such as `.corr()`'s with `.loc['a', 'b']`.";

/// A KeyError on a tuple of names (`KeyError: ('neg', 'pos')`: `df.corr()['neg', 'pos']`,
/// which a debugger tends to return unchanged): the names are written in one pair of
/// brackets.
fn tuple_key(last: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r#"^KeyError: \((?:'[^']*'|"[^"]*")(?:, (?:'[^']*'|"[^"]*"))+\)$"#)
            .expect("static regex")
    })
    .is_match(last.trim_end())
}

/// A statistics function called as a method (`df['x'].shapiro()`: "'Series' object has
/// no attribute 'shapiro'"): the module that has it and how to call
/// it. Only names of `repair`'s list, which have one usual home.
fn function_as_method(last: &str) -> Option<String> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(r"'(\w+)' object has no attribute '(\w+)'").expect("static regex")
    });
    let c = re.captures(last)?;
    let (kind, name) = (&c[1], &c[2]);
    let module = repair::home_of(name)?;
    Some(format!(
        "`{name}` is a function of `{module}`, not a method of a {kind}: `from {module} import {name}`, then call `{name}(values)` with the {kind} as its argument (drop missing values first)."
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_errors_get_their_remedy_and_others_none() {
        let dt = "Traceback (most recent call last):\n  File \"s.py\", line 7, in <module>\n    x = df['Date'].dt.weekday\nAttributeError: Can only use .dt accessor with datetimelike values. Did you mean: 'at'?\n";
        assert!(remedy(dt).unwrap().contains("pd.to_datetime"));
        let unpack = "Traceback (most recent call last):\n  File \"s.py\", line 3\nTypeError: cannot unpack non-iterable float object";
        assert!(remedy(unpack).unwrap().contains(".pvalue"));
        // Only the exception line counts, not code quoted in the traceback.
        let other = "Traceback (most recent call last):\n  File \"s.py\", line 3\n    # could not convert\nKeyError: 'Age'";
        assert_eq!(remedy(other), None);
    }

    #[test]
    fn a_key_error_on_a_tuple_of_names_says_lists_select_and_loc_reads_a_cell() {
        let e = "Traceback (most recent call last):\n  File \"s.py\", line 7, in <module>\n    r, p = df[[\"neg\", \"pos\"]].dropna().corr()[\"neg\", \"pos\"]\n    raise KeyError(key) from err\nKeyError: ('neg', 'pos')\n";
        let cure = remedy(e).unwrap();
        assert!(
            cure.contains("df[['a', 'b']]") && cure.contains(".loc['a', 'b']"),
            "{cure}"
        );
        assert!(remedy("KeyError: (\"it's\", 'b')").is_some());
        // One name, or a tuple that is not of names, is another error.
        assert_eq!(remedy("KeyError: 'neg'"), None);
        assert_eq!(remedy("KeyError: (0, 1)"), None);
        assert_eq!(remedy("KeyError: ('neg',)"), None);
    }

    #[test]
    fn a_statistics_function_called_as_a_method_is_named_with_its_module() {
        let e = "Traceback (most recent call last):\n  File \"s.py\", line 5, in <module>\n    w, p = df['Age'].shapiro()\nAttributeError: 'Series' object has no attribute 'shapiro'\n";
        let cure = remedy(e).unwrap();
        assert!(cure.contains("from scipy.stats import shapiro"), "{cure}");
        assert!(cure.contains("not a method of a Series"), "{cure}");
        // A misspelt pandas attribute has no remedy from this list.
        let typo = "AttributeError: 'DatetimeProperties' object has no attribute 'dayof_week'";
        assert_eq!(remedy(typo), None);
    }
}
