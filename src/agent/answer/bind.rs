//! Values the verifier reads off an output for requested quantities that the
//! deterministic reader finds no label for. The 1.5B model labels what it prints loosely
//! (`<mean>: 136.13…` for `@mean_loan`) and its verifier, asked to walk
//! through each quantity, writes `@mean_loan[136.13]`: it has matched the value to the
//! quantity. That match is taken only when it is grounded: the output prints the value
//! (as written, or rounded to the decimals the verifier wrote) after the label of a line
//! that shares a word with the quantity, and no other quantity's value is that number.
//! A value the output does not print — a small verifier also writes values it made up
//! (`@p_value[0.1728]`) — binds nothing.
//!
//! Written by hand for the same reason as the rest of this module: the rules read
//! free-form output and are small.

use super::compose::plain_number;
use super::read::{is_dump_line, readable, value_for};
use super::{words, Quantity};
use serde::Serialize;

/// A requested quantity and the value an output prints for it, as the verifier matched
/// them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Binding {
    /// The quantity's name.
    pub name: String,
    /// The value as the output prints it (full precision).
    pub value: String,
}

impl Binding {
    /// The binding in the answer form, `@name[value]`: what a reader of an output with
    /// this line appended finds for the quantity.
    pub fn tag(&self) -> String {
        format!("@{}[{}]", self.name, self.value)
    }
}

/// The bindings `reply` (a verifier's walk-through) makes for the formatted quantities
/// named in `lacking` that are grounded in `output` (see the module's doc).
pub fn bindings(
    reply: &str,
    output: &str,
    quantities: &[Quantity],
    lacking: &[String],
) -> Vec<Binding> {
    let output = readable(output);
    let lines: Vec<(Vec<String>, String)> = output
        .lines()
        .filter(|l| !is_dump_line(l))
        .filter_map(label_and_value)
        .collect();
    // A number another quantity's value is read from is that quantity's: a verifier may
    // give one printed mean for both the mean with and without outliers.
    let mut taken: Vec<f64> = quantities
        .iter()
        .filter(|q| !lacking.contains(&q.name))
        .filter_map(|q| value_for(&output, q))
        .filter_map(|v| first_number(&v))
        .collect();
    let mut out = Vec::new();
    for q in quantities
        .iter()
        .filter(|q| q.formatted && lacking.contains(&q.name))
    {
        let Some(claimed) = claimed_value(reply, &q.name) else {
            continue;
        };
        let shares = lines.iter().filter(|(label, _)| q.shares_a_word(label));
        let found = match (q.choices.is_empty(), first_number(&claimed)) {
            (true, Some(c)) => {
                let decimals = decimals_of(&claimed);
                shares
                    .flat_map(|(_, value)| numbers(value))
                    .find(|(_, x)| !taken.contains(x) && rounds_to(*x, c, decimals))
                    .map(|(t, x)| {
                        taken.push(x);
                        t
                    })
            }
            _ => {
                let claimed = word_value(&claimed);
                let fits = !claimed.is_empty()
                    && claimed.chars().any(char::is_alphabetic)
                    && (q.choices.is_empty() || q.is_choice(&claimed));
                fits.then(|| {
                    shares
                        .filter(|(_, value)| same_word_value(q, value, &claimed))
                        .map(|_| claimed.clone())
                        .next()
                })
                .flatten()
            }
        };
        if let Some(value) = found {
            out.push(Binding {
                name: q.name.clone(),
                value,
            });
        }
    }
    out
}

/// The words of a line's label and its value text: split at the first `:` or `=`, else
/// before its last number. `None` for a line without a value.
fn label_and_value(line: &str) -> Option<(Vec<String>, String)> {
    if let Some(i) = line.find(':').or_else(|| line.find('=')) {
        let value = line[i + 1..].trim();
        return (!value.is_empty()).then(|| (words(&line[..i]), value.to_string()));
    }
    let last = line.split_whitespace().next_back()?;
    let number = last.trim_matches(|c: char| matches!(c, ',' | ';' | '(' | ')' | '.'));
    first_number(number)?;
    let label = &line[..line.rfind(last).unwrap_or(0)];
    Some((words(label), number.to_string()))
}

/// The value `reply` gives for `name`: `@name[v]`, or a line `name: v` / `name = v`
/// (list marks, backticks and emphasis around the name allowed).
fn claimed_value(reply: &str, name: &str) -> Option<String> {
    let tag = format!("@{name}[");
    if let Some(i) = reply.find(&tag) {
        let rest = &reply[i + tag.len()..];
        let v = rest[..rest.find(']')?].trim();
        return (!v.is_empty()).then(|| v.to_string());
    }
    reply.lines().find_map(|l| {
        let l = l
            .trim_start()
            .trim_start_matches(|c: char| c.is_ascii_digit() || matches!(c, '-' | '*' | '.' | ')'))
            .trim_start()
            .trim_start_matches(['`', '*', '@']);
        let rest = l.strip_prefix(name)?;
        let rest = rest.trim_start_matches(['`', '*', ']', '[']).trim_start();
        let v = rest.strip_prefix([':', '='])?.trim();
        (!v.is_empty()).then(|| v.to_string())
    })
}

/// A claimed word value without quotes or a trailing remark (`"Normal" (p > 0.05)`).
fn word_value(v: &str) -> String {
    let v = v.split(['(', ',', ';']).next().unwrap_or(v);
    v.trim()
        .trim_end_matches('.')
        .trim_matches(|c: char| matches!(c, '"' | '\'' | '`' | '*'))
        .trim()
        .to_string()
}

/// Whether a line's `value` text is the word value `claimed`: it starts with it, and
/// for a quantity with choices it is that choice, not a longer one (`Not Normal` is not
/// `Normal`).
fn same_word_value(q: &Quantity, value: &str, claimed: &str) -> bool {
    let v = value
        .trim()
        .trim_matches(|c: char| matches!(c, '"' | '\'' | '`'))
        .to_lowercase();
    let c = claimed.to_lowercase();
    let starts = v
        .strip_prefix(&c)
        .is_some_and(|rest| !rest.starts_with(|x: char| x.is_alphanumeric()));
    starts && longest_choice(q, &v) == longest_choice(q, &c)
}

/// The longest of `q`'s choices `text` starts with.
fn longest_choice(q: &Quantity, text: &str) -> Option<String> {
    q.choices
        .iter()
        .map(|c| c.to_lowercase())
        .filter(|c| {
            text.strip_prefix(c.as_str())
                .is_some_and(|rest| !rest.starts_with(|x: char| x.is_alphanumeric()))
        })
        .max_by_key(String::len)
}

/// The numbers of a value text, each with the token it was printed as.
fn numbers(value: &str) -> Vec<(String, f64)> {
    value
        .split(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | '(' | ')' | '[' | ']'))
        .map(|t| t.trim_end_matches('.'))
        .filter_map(|t| plain_number(t).map(|x| (t.to_string(), x)))
        .collect()
}

/// The first whitespace-separated token of `v` as a number.
fn first_number(v: &str) -> Option<f64> {
    let t = v.split_whitespace().next()?;
    plain_number(t.trim_matches(|c: char| matches!(c, ',' | ';' | '(' | ')' | '[' | ']')))
}

/// Decimals written in a claimed number; `None` in scientific notation.
fn decimals_of(v: &str) -> Option<usize> {
    let t = v.split_whitespace().next().unwrap_or(v);
    if t.contains(['e', 'E']) {
        return None;
    }
    Some(
        t.split_once('.')
            .map_or(0, |(_, d)| d.trim_end_matches(']').len()),
    )
}

/// Whether printed `x` is claimed `c`: the same number, or `x` rounded to the claimed
/// decimals (a whole number claimed must be printed as it is; scientific notation to
/// four significant digits).
fn rounds_to(x: f64, c: f64, decimals: Option<usize>) -> bool {
    if (x - c).abs() <= 1e-12 * c.abs().max(1.0) {
        return true;
    }
    match decimals {
        None => (x - c).abs() <= 1e-4 * c.abs(),
        Some(0) => false,
        Some(d) => {
            let scale = 10f64.powi(d as i32);
            ((x * scale).round() - (c * scale).round()).abs() < 0.5
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::answer::{missing, requested_in};

    fn qs(format: &str) -> Vec<Quantity> {
        requested_in("q", format)
    }

    /// Values printed under labels that share a word with their quantities but do not
    /// name them, which the reader cannot give them; the verifier can.
    #[test]
    fn a_verifier_binds_values_printed_under_loose_labels() {
        let q = qs("@mean_fare_first_class[mean fare of 1st class], @mean_fare_third_class[mean fare of 3rd class]");
        let output = "Pclass 1 average: 84.1546875
Pclass 3 average: 13.675550101832993
";
        let lacking = missing(output, &q);
        assert_eq!(lacking.len(), 2, "{lacking:?}");
        let reply =
            "@mean_fare_first_class[84.15], @mean_fare_third_class[13.68]\nVerdict: sufficient";
        let b = bindings(reply, output, &q, &lacking);
        let tags: Vec<String> = b.iter().map(Binding::tag).collect();
        assert_eq!(
            tags,
            [
                "@mean_fare_first_class[84.1546875]",
                "@mean_fare_third_class[13.675550101832993]"
            ]
        );
        // With the bindings appended, nothing is missing.
        let bound = format!("{output}{}\n", tags.join("\n"));
        assert!(missing(&bound, &q).is_empty(), "{:?}", missing(&bound, &q));
        // Rounded otherwise than written, or swapped between lines that both share a
        // word: the first does not bind, the second binds as the verifier said.
        let b = bindings("@mean_fare_first_class[84.16]", output, &q, &lacking);
        assert!(b.is_empty(), "{b:?}");
    }

    #[test]
    fn values_the_output_does_not_print_bind_nothing() {
        let q = qs("@p_value[p], @significance[Yes or No]");
        let output = "<p-value for class 1 vs class 3>: 8.797424981276622e-22\n";
        let lacking = vec!["significance".to_string(), "p_value".to_string()];
        // Invented p-value, a significance the output never says.
        let b = bindings("@p_value[0.1728]\n@significance[Yes]", output, &q, &lacking);
        assert!(b.is_empty(), "{b:?}");
        // The printed one, in scientific notation, binds.
        let b = bindings("@p_value[8.797425e-22]", output, &q, &lacking);
        assert_eq!(b[0].value, "8.797424981276622e-22");
    }

    /// The one printed mean, claimed for two quantities.
    #[test]
    fn a_number_read_for_one_quantity_binds_no_other() {
        let q = qs("@mean_deaths_with_outliers[x], @mean_deaths_without_outliers[y]");
        let output = "mean deaths with outliers: 6.123493975903615\n";
        let lacking = missing(output, &q);
        assert_eq!(lacking, vec!["mean_deaths_without_outliers".to_string()]);
        let reply = "@mean_deaths_with_outliers[6.1235], @mean_deaths_without_outliers[6.1235]";
        assert!(bindings(reply, output, &q, &lacking).is_empty());
        // Nor do two lacking quantities share one number.
        let output = "<deaths>: 6.123493975903615\n";
        let lacking = missing(output, &q);
        assert_eq!(lacking.len(), 2);
        assert_eq!(bindings(reply, output, &q, &lacking).len(), 1);
    }

    #[test]
    fn a_line_that_shares_no_word_with_the_quantity_binds_nothing() {
        let q = qs("@outlier_count[n]");
        let output = "rows: 3\nmean fare: 3\n";
        let lacking = vec!["outlier_count".to_string()];
        assert!(bindings("@outlier_count[3]", output, &q, &lacking).is_empty());
        // A whole number claimed must be printed as it is, not rounded.
        let output = "outliers found: 2.6\n";
        assert!(bindings("@outlier_count[3]", output, &q, &lacking).is_empty());
        let output = "outliers found: 3\n";
        assert_eq!(
            bindings("- outlier_count: 3", output, &q, &lacking)[0].value,
            "3"
        );
    }

    #[test]
    fn word_values_bind_when_the_output_says_them_and_choices_stay_apart() {
        let q = qs(r#"@normality_result[A string that should be either "Normal" or "Not Normal"]"#);
        let lacking = vec!["normality_result".to_string()];
        let output = "normality of Age: Not Normal (p = 0.001)\n";
        assert!(bindings("@normality_result[Normal]", output, &q, &lacking).is_empty());
        let b = bindings(
            "1. `normality_result`: \"Not Normal\"",
            output,
            &q,
            &lacking,
        );
        assert_eq!(b[0].value, "Not Normal");
        // Words that are no choice bind nothing.
        assert!(bindings("@normality_result[not printed]", output, &q, &lacking).is_empty());
    }
}
