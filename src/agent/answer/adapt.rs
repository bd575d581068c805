//! Output adapters: the values a script gave through the answer API (`answer(name,
//! value)`, see [`crate::agent::sandbox`]) written once, at the edge, in the form the
//! caller asked for. The loop keeps the values at full precision; rounding and the form
//! happen only here.
//!
//! - [`Form::AtName`]: `@name[value]`, one per requested quantity, when the guidelines
//!   ask for that form (DABench's).
//! - [`Form::Plain`]: the value alone when there is one, `name: value` lines otherwise.
//!
//! Numbers are rounded only when the question or guidelines ask for one number of
//! decimal places ("rounded to two decimal places"); otherwise they keep every digit
//! Python gave them.

use super::Quantity;
use crate::agent::sandbox::{last_answer as last, name_key, Answered};
use regex::Regex;
use serde_json::Value;
use std::sync::OnceLock;

/// How an answer is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// `@name[value]`, comma-separated.
    AtName,
    /// The value, or `name: value` lines.
    Plain,
}

impl Form {
    /// The form `quantities` ask for: `@name[value]` when the guidelines named any.
    pub fn of(quantities: &[Quantity]) -> Form {
        if quantities.iter().any(|q| q.formatted) {
            Form::AtName
        } else {
            Form::Plain
        }
    }
}

/// The answer from `answers` (a script's calls, in order; a name given twice counts by
/// its last value): every requested quantity's value, in the order asked, or `None` when
/// one has none. Quantities the format does not name (statistics read off the question)
/// are a guess at the names: when the answers do not give them all, every name answered
/// stands instead, in the order first given. `texts` (the question, the guidelines) say
/// how many decimals are asked.
pub fn format(answers: &[Answered], quantities: &[Quantity], texts: &[&str]) -> Option<String> {
    let by_quantity: Option<Vec<(&str, &Value)>> = quantities
        .iter()
        .map(|q| last(answers, &q.name).map(|v| (q.name.as_str(), v)))
        .collect();
    let guessed = !quantities.iter().any(|q| q.formatted);
    let picked: Vec<(&str, &Value)> = if quantities.is_empty() || (guessed && by_quantity.is_none())
    {
        let mut names: Vec<&str> = Vec::new();
        for a in answers.iter().filter(|a| a.error.is_none()) {
            if !names.iter().any(|n| name_key(n) == name_key(&a.name)) {
                names.push(&a.name);
            }
        }
        names
            .into_iter()
            .filter_map(|n| last(answers, n).map(|v| (n, v)))
            .collect()
    } else {
        by_quantity?
    };
    if picked.is_empty() {
        return None;
    }
    let places = decimals_asked(texts);
    let text = |v: &Value| value_text(v, places);
    Some(match Form::of(quantities) {
        Form::AtName => picked
            .iter()
            .map(|(n, v)| format!("@{n}[{}]", text(v)))
            .collect::<Vec<_>>()
            .join(", "),
        Form::Plain if picked.len() == 1 => text(picked[0].1),
        Form::Plain => picked
            .iter()
            .map(|(n, v)| format!("{n}: {}", text(v)))
            .collect::<Vec<_>>()
            .join("\n"),
    })
}

/// The one number of decimal places `texts` ask for, if they ask for exactly one.
fn decimals_asked(texts: &[&str]) -> Option<usize> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(
            r"(?i)\b(\d+|one|two|three|four|five|six)\s+decimal(?:\s+place|\s+point|\s+digit)?s?\b",
        )
        .expect("static regex")
    });
    let mut found: Option<usize> = None;
    for t in texts {
        for c in re.captures_iter(t) {
            let n = match c[1].to_ascii_lowercase().as_str() {
                "one" => 1,
                "two" => 2,
                "three" => 3,
                "four" => 4,
                "five" => 5,
                "six" => 6,
                d => d.parse().ok()?,
            };
            match found {
                Some(f) if f != n => return None,
                _ => found = Some(n),
            }
        }
    }
    found
}

/// A value as text: numbers to `places` decimals when asked (integers stay integers),
/// else as Python gave them; text as is; lists comma-separated; tables and objects as
/// compact JSON.
fn value_text(v: &Value, places: Option<usize>) -> String {
    match v {
        Value::Number(n) => match (places, n.as_f64()) {
            (Some(p), Some(f)) if !n.is_i64() && !n.is_u64() => format!("{f:.p$}"),
            _ => n.to_string(),
        },
        Value::String(s) => s.clone(),
        Value::Bool(b) => if *b { "True" } else { "False" }.to_string(),
        Value::Null => "None".to_string(),
        Value::Array(items) => items
            .iter()
            .map(|i| value_text(i, places))
            .collect::<Vec<_>>()
            .join(", "),
        Value::Object(_) => v.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::answer::requested;
    use serde_json::json;

    fn answers(pairs: &[(&str, Value)]) -> Vec<Answered> {
        pairs
            .iter()
            .map(|(n, v)| Answered::new(*n, v.clone()))
            .collect()
    }

    #[test]
    fn values_keep_full_precision_unless_decimals_are_asked() {
        let a = answers(&[("mean", json!(0.1 + 0.2))]);
        assert_eq!(
            format(&a, &[], &["What is the mean?"]).unwrap(),
            "0.30000000000000004"
        );
        assert_eq!(
            format(&a, &[], &["Round the mean to two decimal places."]).unwrap(),
            "0.30"
        );
        // Two different counts: which is whose is not known, so nothing is rounded.
        assert_eq!(
            format(&a, &[], &["one to 2 decimals", "the other to 3 decimals"]).unwrap(),
            "0.30000000000000004"
        );
        let i = answers(&[("count", json!(12))]);
        assert_eq!(format(&i, &[], &["to 2 decimal places"]).unwrap(), "12");
    }

    #[test]
    fn the_at_name_form_follows_the_requested_order_and_needs_every_value() {
        let q = requested(
            "Compute the mean and the count.",
            Some("@mean_fare[mean], @n_rows[count]"),
        );
        assert_eq!(Form::of(&q), Form::AtName);
        let a = answers(&[
            ("N rows", json!(891)),
            ("mean_fare", json!(1.5)),
            ("mean_fare", json!(32.2042)),
        ]);
        assert_eq!(
            format(&a, &q, &["rounded to two decimal places"]).unwrap(),
            "@mean_fare[32.20], @n_rows[891]"
        );
        let partial = answers(&[("mean_fare", json!(32.2))]);
        assert_eq!(format(&partial, &q, &[]), None);
    }

    #[test]
    fn plain_answers_write_one_value_alone_and_several_by_name() {
        let a = answers(&[
            ("top", json!(["Paris", "Lyon"])),
            ("ok", json!(true)),
            ("table", json!({"columns": ["a"], "rows": [[1]]})),
        ]);
        assert_eq!(
            format(&a, &[], &[]).unwrap(),
            "top: Paris, Lyon\nok: True\ntable: {\"columns\":[\"a\"],\"rows\":[[1]]}"
        );
        assert_eq!(format(&[], &[], &[]), None);
        // Statistics read off the question are a guess at the names: other names stand.
        let q = requested("What is the mean and the median of the fare?", None);
        assert!(!q.is_empty() && !q.iter().any(|q| q.formatted));
        let given = answers(&[("mean_fare", json!(32.2)), ("median_fare", json!(14.45))]);
        assert_eq!(
            format(&given, &q, &[]).unwrap(),
            "mean_fare: 32.2\nmedian_fare: 14.45"
        );
    }
}
