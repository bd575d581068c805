//! Output adapters: the values a script gave through the answer API (`answer(name,
//! value)`, see [`crate::agent::sandbox`]) written once, at the edge, in the form the
//! caller asked for. The loop keeps the values at full precision; rounding and the form
//! happen only here.
//!
//! - [`Form::Tagged`]: `@name[value]`, one per requested quantity (the form DABench
//!   grades; `bench dabench` and `ask --answer-form tagged` ask for it).
//! - [`Form::Plain`]: the value alone when there is one, `name: value` lines otherwise.
//!
//! Numbers are rounded only when the question or guidelines ask for one number of
//! decimal places ("rounded to two decimal places"); otherwise they keep every digit
//! Python gave them.

use super::Quantity;
use crate::agent::sandbox::{last_answer as last, name_key, Answered};
use regex::Regex;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::OnceLock;

/// How an answer is written: chosen by the caller, never read off the question.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Form {
    /// The value, or `name: value` lines.
    #[default]
    Plain,
    /// `@name[value]`, comma-separated.
    Tagged,
}

impl std::str::FromStr for Form {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "plain" => Ok(Form::Plain),
            "tagged" => Ok(Form::Tagged),
            _ => Err(format!("unknown answer form {s:?}; use plain or tagged")),
        }
    }
}

/// The answer from `answers` (a script's calls, in order; a name given twice counts by
/// its last value): every requested quantity's value, in the order asked, or `None` when
/// one has none. Quantities the format does not name (statistics read off the question)
/// are a guess at the names: when the answers do not give them all, every name answered
/// stands instead, in the order first given. `texts` (the question, the guidelines) say
/// how many decimals are asked; `form` how the values are written.
pub fn format(
    answers: &[Answered],
    quantities: &[Quantity],
    texts: &[&str],
    form: Form,
) -> Option<String> {
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
    Some(match form {
        Form::Tagged => picked
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
    use crate::agent::answer::{requested, Wanted};
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
            format(&a, &[], &["What is the mean?"], Form::Plain).unwrap(),
            "0.30000000000000004"
        );
        assert_eq!(
            format(
                &a,
                &[],
                &["Round the mean to two decimal places."],
                Form::Plain
            )
            .unwrap(),
            "0.30"
        );
        // Two different counts: which is whose is not known, so nothing is rounded.
        assert_eq!(
            format(
                &a,
                &[],
                &["one to 2 decimals", "the other to 3 decimals"],
                Form::Plain
            )
            .unwrap(),
            "0.30000000000000004"
        );
        let i = answers(&[("count", json!(12))]);
        assert_eq!(
            format(&i, &[], &["to 2 decimal places"], Form::Plain).unwrap(),
            "12"
        );
    }

    #[test]
    fn the_at_name_form_follows_the_requested_order_and_needs_every_value() {
        let wanted: Vec<Wanted> = ["mean_fare=mean", "n_rows=count"]
            .iter()
            .map(|w| w.parse().unwrap())
            .collect();
        let q = requested("Compute the mean and the count.", &wanted);
        let a = answers(&[
            ("N rows", json!(891)),
            ("mean_fare", json!(1.5)),
            ("mean_fare", json!(32.2042)),
        ]);
        assert_eq!(
            format(&a, &q, &["rounded to two decimal places"], Form::Tagged).unwrap(),
            "@mean_fare[32.20], @n_rows[891]"
        );
        assert_eq!(
            format(&a, &q, &[], Form::Plain).unwrap(),
            "mean_fare: 32.2042\nn_rows: 891"
        );
        let partial = answers(&[("mean_fare", json!(32.2))]);
        assert_eq!(format(&partial, &q, &[], Form::Tagged), None);
        assert_eq!("tagged".parse::<Form>(), Ok(Form::Tagged));
        assert!("@name".parse::<Form>().is_err());
    }

    #[test]
    fn plain_answers_write_one_value_alone_and_several_by_name() {
        let a = answers(&[
            ("top", json!(["Paris", "Lyon"])),
            ("ok", json!(true)),
            ("table", json!({"columns": ["a"], "rows": [[1]]})),
        ]);
        assert_eq!(
            format(&a, &[], &[], Form::Plain).unwrap(),
            "top: Paris, Lyon\nok: True\ntable: {\"columns\":[\"a\"],\"rows\":[[1]]}"
        );
        assert_eq!(format(&[], &[], &[], Form::Plain), None);
        // Statistics read off the question are a guess at the names: other names stand.
        let q = requested("What is the mean and the median of the fare?", &[]);
        assert!(!q.is_empty() && !q.iter().any(|q| q.formatted));
        let given = answers(&[("mean_fare", json!(32.2)), ("median_fare", json!(14.45))]);
        assert_eq!(
            format(&given, &q, &[], Form::Plain).unwrap(),
            "mean_fare: 32.2\nmedian_fare: 14.45"
        );
    }
}
