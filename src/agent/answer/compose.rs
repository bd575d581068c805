//! Composing an answer: telling a dump from an answer, putting values in the requested
//! `@name[value]` form, keeping verified numbers, and answering from a verified output.

use super::read::{answer_lines, is_dump_line, single_value, value_for};
use super::{Quantity, SHORT_ANSWER_CHARS, SHORT_ANSWER_LINES};

/// Why `answer` is a dump rather than an answer, if it is: a printed pandas/numpy
/// object, or (when a short answer was asked) too many lines or characters.
pub fn dump_reason(answer: &str, short: bool) -> Option<String> {
    if let Some(l) = answer.lines().find(|l| is_dump_line(l)) {
        return Some(format!("it prints a pandas/numpy object ({})", l.trim()));
    }
    if short {
        let n = answer.lines().count();
        if n > SHORT_ANSWER_LINES {
            return Some(format!(
                "it is {n} lines long where a short answer was asked"
            ));
        }
        if answer.chars().count() > SHORT_ANSWER_CHARS {
            return Some("it is too long for the short answer asked".into());
        }
    }
    None
}

/// `answer` in the `@name[value]` form of the formatted quantities, when it gives them
/// all (already in that form, or as labelled values); `None` when one is missing. An
/// answer without formatted quantities is returned as it is.
pub fn in_format(answer: &str, quantities: &[Quantity]) -> Option<String> {
    let formatted: Vec<&Quantity> = quantities.iter().filter(|q| q.formatted).collect();
    if formatted.is_empty() {
        return Some(answer.trim().to_string());
    }
    if formatted
        .iter()
        .all(|q| answer.contains(&format!("@{}[", q.name)) && value_for(answer, q).is_some())
    {
        return Some(answer.trim().to_string());
    }
    let values: Option<Vec<String>> = formatted
        .iter()
        .map(|q| value_for(answer, q).map(|v| format!("@{}[{v}]", q.name)))
        .collect();
    values.map(|v| v.join(", "))
}

/// The finalyzer formats; it does not compute. `answer` (in `@name[value]` form) with
/// every number that disagrees with the value the verified `output` gives for the same
/// quantity replaced by the output's, rounded as the answer wrote it (`0.9543` for
/// `0.9543095491`). Values that are words (`Not Normal`, a rule applied) and values the
/// output does not give are kept. Returns the answer and the names whose value changed.
pub fn keep_verified(answer: &str, output: &str, quantities: &[Quantity]) -> (String, Vec<String>) {
    let mut out = answer.to_string();
    let mut changed = Vec::new();
    for q in quantities.iter().filter(|q| q.formatted) {
        let tag = format!("@{}[", q.name);
        let Some(start) = out.find(&tag).map(|i| i + tag.len()) else {
            continue;
        };
        let Some(end) = out[start..].find(']').map(|i| start + i) else {
            continue;
        };
        let given = out[start..end].trim().to_string();
        let Some(verified) = value_for(output, q) else {
            continue;
        };
        let Some(v) = plain_number(&verified) else {
            continue;
        };
        let first = given.split_whitespace().next().unwrap_or("");
        let first = first.trim_matches(|c: char| matches!(c, ',' | ';' | '(' | ')'));
        let Some(g) = plain_number(first) else {
            continue;
        };
        let scientific = first.contains(['e', 'E']);
        let decimals = first.split_once('.').map_or(0, |(_, f)| f.len());
        let single = first.len() == given.len();
        let agrees = if scientific {
            (g - v).abs() <= 1e-3 * v.abs().max(f64::MIN_POSITIVE)
        } else {
            (g - v).abs() <= 0.5 * 10f64.powi(-(decimals as i32)) * (1.0 + 1e-9) + 1e-12 * v.abs()
        };
        if single && agrees {
            continue;
        }
        let value = if scientific {
            verified.trim().to_string()
        } else {
            format!("{v:.decimals$}")
        };
        out.replace_range(start..end, &value);
        changed.push(q.name.clone());
    }
    (out, changed)
}

/// `t` as a number when it is one plain number (`-0.25`, `1,234.5`, `3e-4`; not `45%`,
/// `nan` or words).
pub(super) fn plain_number(t: &str) -> Option<f64> {
    let t = t.trim().replace(',', "");
    t.parse::<f64>().ok().filter(|x| x.is_finite())
}

/// Whether an answer a model filled in from `output` (`@name[value]` parts) only copies:
/// every number in a bracket was printed on a line whose words share one with its
/// quantity (`mean of WINDSPEED` for `@mean_wind_pre`), as printed or rounded to the
/// decimals the answer wrote (`5.98` for `5.9788…`). A number from an unrelated line
/// (an IQR of 0.0 taken as an outlier count) or one never printed
/// fails. Word values are not checked.
pub fn filled_from_printed(answer: &str, output: &str, quantities: &[Quantity]) -> bool {
    let output = super::read::readable(output);
    let lines: Vec<(Vec<String>, Vec<f64>)> = output
        .lines()
        .map(|l| {
            let numbers = l
                .split(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | '-' | 'e' | 'E' | '+')))
                .filter_map(|t| plain_number(t.trim_matches(|c| matches!(c, '.' | '+'))))
                .collect();
            (super::words(l), numbers)
        })
        .collect();
    let mut rest = answer;
    while let Some(at) = rest.find('@') {
        rest = &rest[at + 1..];
        let (Some(open), Some(close)) = (rest.find('['), rest.find(']')) else {
            break;
        };
        if close < open {
            continue;
        }
        let name = rest[..open].trim();
        let value = rest[open + 1..close].trim();
        rest = &rest[close..];
        let Some(v) = plain_number(value) else {
            continue;
        };
        let decimals = value.split_once('.').map_or(0, |(_, d)| d.len()) as i32;
        let scale = 10f64.powi(decimals);
        let same = |x: &f64| (x - v).abs() < 1e-12 || ((x * scale).round() - v * scale).abs() < 0.5;
        let q = quantities.iter().find(|q| q.name == name);
        let found = lines.iter().any(|(words, numbers)| {
            numbers.iter().any(same) && q.is_none_or(|q| q.shares_a_word(words))
        });
        if !found {
            return false;
        }
    }
    true
}

/// An answer read from a verified output: the formatted quantities as `@name[value]`
/// when the format names some (those the output gives); else the lines giving the
/// requested statistics (`median: 28`); else the output's last labelled lines.
pub fn from_output(output: &str, quantities: &[Quantity]) -> Option<String> {
    if quantities.iter().any(|q| q.formatted) {
        let found: Vec<String> = quantities
            .iter()
            .filter_map(|q| value_for(output, q).map(|v| format!("@{}[{v}]", q.name)))
            .collect();
        return (!found.is_empty()).then(|| found.join(", "));
    }
    if let (false, Some(v)) = (quantities.iter().any(|q| q.formatted), single_value(output)) {
        return Some(v.to_string());
    }
    if !quantities.is_empty() {
        let found: Vec<String> = quantities
            .iter()
            .filter_map(|q| value_for(output, q).map(|v| format!("{}: {v}", q.name)))
            .collect();
        if !found.is_empty() {
            return Some(found.join("\n"));
        }
    }
    // The newest step prints last.
    let lines = answer_lines(output);
    let last = lines[lines.len().saturating_sub(3)..].join("\n");
    (!last.is_empty()).then_some(last)
}
