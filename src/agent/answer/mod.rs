//! Deterministic reading of what a question asks for and of what an output holds: the
//! check that keeps a verifier from rubber-stamping, the dump detector that keeps a raw
//! repr out of an answer, and the reader that answers from a verified output when the
//! finalyzer fails. This module reads the question (`requested`); `read` reads an output,
//! `compose` builds an answer from one.
//!
//! Written by hand: no crate reads "a labelled value near these words" in free-form
//! script output; the rules are small and each is tested in `tests.rs`. They are conservative:
//! a quantity is only required when the caller names it ([`Wanted`]) or the question
//! names a statistic outright, so a question they cannot read is left to the verifier.

use regex::Regex;
use serde::Serialize;
use std::sync::OnceLock;

/// Lines above which an answer to a question that wants a short answer is a dump.
pub const SHORT_ANSWER_LINES: usize = 12;

/// Characters above which such an answer is a dump.
pub const SHORT_ANSWER_CHARS: usize = 800;

/// Characters of a value read after a label (`label: value`) at most.
const VALUE_CHARS: usize = 80;

/// Numbers in a bracketed run from which a line is a printed array (`[ 797171 500223 …`).
const ARRAY_RUN: usize = 4;

/// Words that name no particular quantity (`@p_value[...]` → `p`).
const GENERIC: &[&str] = &[
    "value",
    "values",
    "coefficient",
    "result",
    "the",
    "of",
    "in",
    "for",
    "and",
    "a",
    "an",
    "is",
    "to",
    "by",
    "per",
    "with",
    "on",
    "answer",
    "type",
    "kind",
];

/// Words that stand for each other in labels.
const SYNONYMS: &[&[&str]] = &[
    &["mean", "average", "avg", "averages", "averaged"],
    &[
        "std",
        "stdev",
        "stddev",
        "sd",
        "standard",
        "deviation",
        "dev",
    ],
    &["corr", "correlation", "pearson", "spearman", "kendall", "r"],
    &["num", "number", "count", "cnt", "n", "how", "many"],
    &[
        "pct",
        "percent",
        "percentage",
        "proportion",
        "share",
        "ratio",
    ],
    &["max", "maximum", "highest", "largest", "most", "top"],
    &["min", "minimum", "lowest", "smallest", "least"],
    &["total", "sum"],
    &["var", "variance"],
    &["p", "pvalue"],
];

/// Statistics a question without an `@name[...]` format is read for: (what it is called,
/// the phrases that ask for it, the words that label it in an output).
const STATISTICS: &[(&str, &[&str], &[&str])] = &[
    ("mean", &["mean", "average"], &["mean", "average", "avg"]),
    ("median", &["median"], &["median"]),
    (
        "standard deviation",
        &["standard deviation"],
        &["std", "standard", "stdev", "sd"],
    ),
    ("variance", &["variance"], &["variance", "var"]),
    (
        "correlation",
        &["correlation", "correlated", "correlate"],
        &["corr", "correlation", "pearson", "spearman", "kendall", "r"],
    ),
    ("skewness", &["skewness", "skew"], &["skew", "skewness"]),
    ("kurtosis", &["kurtosis"], &["kurt", "kurtosis"]),
    ("p-value", &["p-value", "p value"], &["p", "pvalue"]),
];

/// Words of a quantity's name that make it a count: `@no_of_countries[...]` is a
/// number even though it names countries.
const COUNT_WORDS: &[&str] = &["no", "num", "number", "count", "cnt", "n", "how", "many"];

/// Words of a quantity's name that make it a number (with [`COUNT_WORDS`]).
const NUMBER_WORDS: &[&str] = &[
    "mean",
    "average",
    "avg",
    "median",
    "std",
    "stdev",
    "sd",
    "deviation",
    "variance",
    "var",
    "corr",
    "correlation",
    "pearson",
    "spearman",
    "kendall",
    "total",
    "sum",
    "pct",
    "percent",
    "percentage",
    "ratio",
    "rate",
    "proportion",
    "skew",
    "skewness",
    "kurtosis",
    "pvalue",
    "p",
    "max",
    "maximum",
    "min",
    "minimum",
    "difference",
    "diff",
    "mse",
    "rmse",
    "mae",
    "r2",
    "accuracy",
    "score",
    "iqr",
    "range",
];

/// Words of a quantity's name that make it a thing named, not a number
/// (`@country_with_max_deaths[...]` is a country).
const ENTITY_WORDS: &[&str] = &[
    "name",
    "names",
    "pair",
    "pairs",
    "country",
    "city",
    "state",
    "category",
    "column",
    "columns",
    "feature",
    "features",
    "label",
    "class",
    "gender",
    "sex",
    "id",
    "date",
    "region",
    "species",
    "company",
    "title",
    "word",
    "method",
    "model",
    "group",
    "list",
    "which",
    "day",
    "month",
    "status",
    "type",
    "outlier_values",
];

/// A quantity the question asks for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Quantity {
    /// `mean_fare` for `@mean_fare[...]`, or the statistic (`median`).
    pub name: String,
    /// Named by an `@name[value]` format: the answer must use that form.
    pub formatted: bool,
    /// Its value is a number (a statistic, or a name made of statistic or count words
    /// and no thing's name): a value read for it without a digit (`Country`, a header
    /// cell) is not its value.
    pub numeric: bool,
    /// The words that label it in an output (each may be matched by a synonym).
    words: Vec<String>,
    /// Those of [`Quantity::words`] no other requested quantity has (`weekend` of
    /// `weekend_mean_price` beside `weekday_mean_price`): a label must not lack them.
    #[serde(skip)]
    distinct: Vec<String>,
    /// What its placeholder says it is of, besides its own words (`medianhousevalue` of
    /// `@mean_value[mean_MedianHouseValue]`): a label naming it is preferred over one
    /// that does not (`Mean of MedianHouseValue` over `Mean of MedInc`).
    #[serde(skip)]
    subject: Vec<String>,
    /// What the format says it is: the text in its brackets, when that says more than
    /// the name (`Number of entries after cleaning duplicates`).
    pub meaning: Option<String>,
    /// The words its bracket text quotes as the values to choose from (`"Normal"`, `"Not
    /// Normal"` of `[A string that should be either "Normal" or "Not Normal"]`): a value
    /// read for it must be one of them.
    #[serde(skip)]
    pub choices: Vec<String>,
}

impl Quantity {
    /// Whether `v` is one of its [`Quantity::choices`] (any case, quoted or not, maybe
    /// followed by more words: `Not Normal (p < 0.05)`).
    pub fn is_choice(&self, v: &str) -> bool {
        let v = v
            .trim()
            .trim_matches(|c: char| matches!(c, '"' | '\'' | '`' | '[' | ']' | '(' | ')'))
            .to_lowercase();
        self.choices.iter().any(|c| {
            let c = c.to_lowercase();
            v.strip_prefix(&c)
                .is_some_and(|rest| !rest.starts_with(|x: char| x.is_alphanumeric()))
        })
    }

    /// Whether the words `w` of a line label this quantity: all its words (each by
    /// itself or a synonym), or all but one of a name of three words or more.
    fn labels(&self, w: &[String]) -> bool {
        let found = self
            .words
            .iter()
            .filter(|qw| w.iter().any(|x| matches(x, qw)))
            .count();
        let n = self.words.len();
        found == n
            || (n >= 3
                && found + 1 == n
                && self
                    .distinct
                    .iter()
                    .all(|d| w.iter().any(|x| matches(x, d))))
    }

    /// Whether a line whose words are `w`, `label` those before its value, labels this
    /// quantity: its words (see [`Quantity::labels`]), and then, when its placeholder
    /// names a subject (`medianhousevalue` of `@mean_value[mean_MedianHouseValue]`),
    /// with `strict` a label that names it, else one that names no other thing
    /// (`Mean: 2.12`, not `Mean of MedInc`). Without all its words, only its distinct
    /// ones and nothing else named: the general form of `labels`' one-word allowance,
    /// which stays as it was (it does not ask that the label name nothing else).
    fn labelled_by(&self, w: &[String], label: &[String], strict: bool) -> bool {
        let named = |x: &String| self.subject.iter().any(|s| matches(x, s));
        let names_another = || {
            label.iter().any(|x| {
                x.len() >= 3
                    && !x.chars().all(|c| c.is_ascii_digit())
                    && !statistic_word(x)
                    && !self.words.iter().any(|q| matches(x, q))
                    && !named(x)
            })
        };
        if !self.labels(w) {
            // A label without the words the requested quantities share — their common
            // subject, which a printout about that subject leaves out (`<mean>: 0.00`
            // and `<standard deviation>: 0.01` for `@importance_score_mean` and
            // `@importance_score_std`) — labels the one its distinct words
            // name, if it names nothing else. A single quantity has no shared words.
            let shared = self.distinct.len() < self.words.len();
            return shared
                && !self.distinct.is_empty()
                && self
                    .distinct
                    .iter()
                    .all(|d| w.iter().any(|x| matches(x, d)))
                && !names_another();
        }
        if strict {
            self.subject.iter().all(|s| w.iter().any(|x| matches(x, s)))
        } else {
            self.subject.is_empty() || !names_another()
        }
    }

    /// Whether the words `w` of a line share one with this quantity's label words (each
    /// by itself or a synonym); a quantity named by generic words only shares with any.
    fn shares_a_word(&self, w: &[String]) -> bool {
        self.words.is_empty() || self.words.iter().any(|qw| w.iter().any(|x| matches(x, qw)))
    }

    /// Whether `text` (a plan step) speaks of this quantity: its name, its label words,
    /// or most of the words of its meaning.
    pub fn mentioned_in(&self, text: &str) -> bool {
        let w = words(text);
        if self.labels(&w) || text.to_lowercase().contains(&self.name.to_lowercase()) {
            return true;
        }
        self.meaning.as_deref().is_some_and(|m| {
            let mw: Vec<String> = words(m)
                .into_iter()
                .filter(|x| x.len() > 3 && !GENERIC.contains(&x.as_str()))
                .collect();
            let found = mw
                .iter()
                .filter(|x| w.iter().any(|y| matches(y, x)))
                .count();
            !mw.is_empty() && 2 * found > mw.len()
        })
    }
}

/// The bracket text of a quantity when it is a placeholder (one identifier, as
/// `mean_MedianHouseValue`), else nothing: a sentence says what a value is, not what of.
fn meaning_text(meaning: &Option<String>, name: &str) -> String {
    match meaning {
        Some(m) if !m.contains(char::is_whitespace) && m != name => m.clone(),
        _ => String::new(),
    }
}

/// The words of `placeholder` that name what a quantity is of: not its own `words` (nor
/// their synonyms), not a statistic, count or generic word.
fn subject_words(placeholder: &str, own: &[String]) -> Vec<String> {
    words(placeholder)
        .into_iter()
        .filter(|w| w.len() >= 3 && !statistic_word(w) && !own.iter().any(|o| matches(w, o)))
        .collect()
}

/// A word that names a statistic, a count or nothing in particular (`mean`, `std`,
/// `number`, `value`, `list`).
fn statistic_word(w: &str) -> bool {
    SYNONYMS.iter().any(|set| set.contains(&w))
        || STATISTICS.iter().any(|(_, _, labels)| labels.contains(&w))
        || [GENERIC, COUNT_WORDS, NUMBER_WORDS, ENTITY_WORDS]
            .iter()
            .any(|set| set.contains(&w))
}

/// A value the caller wants given under a name (`mean_fare`), with what it is when the
/// name alone does not say (`Number of entries after cleaning duplicates`, or the values
/// to choose from: `"Normal" or "Not Normal"`). Benchmarks read them off their answer
/// formats at the edge (`bench::dabench`); `ask --answer NAME[=WHAT]` takes them from
/// the user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Wanted {
    /// The name the script gives the value under (`answer("mean_fare", …)`).
    pub name: String,
    /// What it is, when the name alone does not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub about: Option<String>,
}

/// [`requested`] of the names of DABench's `@name[what]` form in `format`: unit tests
/// write their quantities that way.
#[cfg(test)]
pub(crate) fn requested_in(question: &str, format: &str) -> Vec<Quantity> {
    requested(question, &crate::bench::dabench::answer_names(format))
}

/// Longest name of a wanted value.
pub const MAX_WANTED_NAME: usize = 64;

impl Wanted {
    /// A wanted value; the name must be 1 to [`MAX_WANTED_NAME`] letters, digits or `_`
    /// (it becomes a Python string and a label in the answer).
    pub fn new(name: &str, about: Option<&str>) -> Result<Wanted, String> {
        let name = name.trim();
        if name.is_empty()
            || name.len() > MAX_WANTED_NAME
            || !name.chars().all(|c| c.is_alphanumeric() || c == '_')
        {
            return Err(format!(
                "{name:?} is not an answer name: use 1 to {MAX_WANTED_NAME} letters, digits or `_` (mean_fare)"
            ));
        }
        Ok(Wanted {
            name: name.to_string(),
            about: about
                .map(str::trim)
                .filter(|a| !a.is_empty())
                .map(str::to_string),
        })
    }
}

impl std::str::FromStr for Wanted {
    type Err = String;

    /// `NAME` or `NAME=WHAT`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.split_once('=') {
            Some((n, a)) => Wanted::new(n, Some(a)),
            None => Wanted::new(s, None),
        }
    }
}

/// The quantities asked for: every `wanted` value, in order; when none is wanted, the
/// statistics `question` names (a guess at the names, which any value given satisfies).
pub fn requested(question: &str, wanted: &[Wanted]) -> Vec<Quantity> {
    let mut out: Vec<Quantity> = Vec::new();
    // `with` tells `mean_with_outliers` from `mean_without_outliers`: kept when a
    // sibling says `without`, generic otherwise.
    let negated = wanted
        .iter()
        .any(|w| words(&w.name).iter().any(|x| x == "without"));
    for (name, meaning) in wanted
        .iter()
        .map(|w| (w.name.clone(), w.about.clone().unwrap_or_default()))
    {
        let meaning_raw = meaning.clone();
        if out.iter().all(|q| q.name != name) {
            let mut words: Vec<String> = words(&name)
                .into_iter()
                .filter(|w| !GENERIC.contains(&w.as_str()) || (negated && w == "with"))
                .collect();
            if words.is_empty() {
                words = vec![name.to_lowercase()];
            }
            let all = self::words(&name);
            let has = |set: &[&str]| all.iter().any(|w| set.contains(&w.as_str()));
            let numeric = has(COUNT_WORDS) || (has(NUMBER_WORDS) && !has(ENTITY_WORDS));
            let meaning = Some(meaning.trim().to_string()).filter(|m| {
                let mw = self::words(m);
                // `[value]`, `[mean_fare]`: a placeholder, not a meaning.
                mw != all
                    && mw.iter().any(|w| !GENERIC.contains(&w.as_str()))
                    && m.len() <= MEANING_MAX
            });
            let subject = subject_words(&meaning_text(&meaning, &name), &words);
            let choices = choices(&meaning_raw);
            out.push(Quantity {
                name,
                formatted: true,
                numeric: numeric && choices.is_empty(),
                words,
                distinct: Vec::new(),
                subject,
                meaning,
                choices,
            });
        }
    }
    if !out.is_empty() {
        // The words that tell a quantity from a sibling: another that shares some of its
        // words and has words of its own (`weekday_…` beside `weekend_…`; not
        // `strongest_correlation` beside `strongest_correlation_pair`, which one line
        // may label together).
        let all: Vec<Vec<String>> = out.iter().map(|q| q.words.clone()).collect();
        for (i, q) in out.iter_mut().enumerate() {
            for (j, other) in all.iter().enumerate() {
                let shares = q.words.iter().any(|w| other.contains(w));
                let own = other.iter().any(|w| !q.words.contains(w));
                if j == i || !shares || !own {
                    continue;
                }
                for w in q.words.iter().filter(|w| !other.contains(w)) {
                    if !q.distinct.contains(w) {
                        q.distinct.push(w.clone());
                    }
                }
            }
        }
        return out;
    }
    let q = format!(" {} ", words(question).join(" "));
    for (name, asked, labels) in STATISTICS {
        let hit = asked
            .iter()
            .any(|a| q.contains(&format!(" {} ", words(a).join(" "))));
        if hit {
            out.push(Quantity {
                name: name.to_string(),
                formatted: false,
                numeric: true,
                distinct: Vec::new(),
                subject: Vec::new(),
                // Any one label word will do: joined into one synonym set.
                words: vec![labels.join("|")],
                meaning: None,
                choices: Vec::new(),
            });
        }
    }
    out
}

/// Constraints a verifier is asked to check one by one, at most.
pub const MAX_CONSTRAINTS: usize = 8;

/// The constraints a verifier checks one by one: the sentences after a `Constraints:`
/// line when the question has one (as benchmark questions do), else the question's own
/// sentences that are not questions ("Exclude outliers beyond 3 standard deviations."),
/// leaving out a format's lead-in and template lines.
/// A 1.5B verifier told to check "each constraint" checks none; a numbered list it can
/// walk ("choose the one that appears first" otherwise goes unapplied).
pub fn constraints(question: &str) -> Vec<String> {
    let lower = question.to_lowercase();
    let text = match lower.find("constraints:") {
        Some(at) => &question[at + "constraints:".len()..],
        None => question,
    };
    let mut out: Vec<String> = Vec::new();
    for line in text.lines() {
        let line = line.trim().trim_start_matches(|c: char| {
            c.is_ascii_digit() || c == '.' || c == ')' || c == '-' || c == '*'
        });
        let mut rest = line.trim();
        while !rest.is_empty() {
            // A sentence ends at `.`, `?` or `!` before a space and a capital, or at the end.
            let end = rest
                .char_indices()
                .find(|&(i, c)| {
                    matches!(c, '.' | '?' | '!')
                        && rest[i + 1..].starts_with(' ')
                        && rest[i + 1..].trim_start().starts_with(char::is_uppercase)
                })
                .map_or(rest.len(), |(i, c)| i + c.len_utf8());
            let sentence = rest[..end].trim();
            rest = rest[end..].trim_start();
            let words = sentence.split_whitespace().count();
            // Not a constraint: a question, the lead-in of a format ("as follows:"), or a
            // line of the format's template (`"highest country": [...],`).
            let prose = sentence.starts_with(char::is_alphabetic)
                && !sentence.ends_with('?')
                && !sentence.ends_with(':');
            if words >= 3 && prose && out.len() < MAX_CONSTRAINTS {
                out.push(sentence.to_string());
            }
        }
    }
    out
}

/// Longest bracket text kept as a quantity's meaning (longer is a sentence of rules).
const MEANING_MAX: usize = 160;

/// The quoted words a bracket text offers as the values (at least two, each short and
/// without digits: `"Normal" or "Not Normal"`, `'True' or 'False'`); none otherwise.
fn choices(bracket: &str) -> Vec<String> {
    static QUOTED: OnceLock<Regex> = OnceLock::new();
    let quoted = QUOTED
        .get_or_init(|| Regex::new(r#""([^"]{1,30})"|'([^']{1,30})'"#).expect("a valid pattern"));
    let mut out: Vec<String> = Vec::new();
    for c in quoted.captures_iter(bracket) {
        let w = c.get(1).or(c.get(2)).map_or("", |m| m.as_str()).trim();
        if w.is_empty() || w.chars().any(|c| c.is_ascii_digit()) {
            return Vec::new();
        }
        if !out.iter().any(|o| o.eq_ignore_ascii_case(w)) {
            out.push(w.to_string());
        }
    }
    if out.len() < 2 {
        out.clear();
    }
    out
}

/// Lowercased words: letters and digits; `_` and everything else separate.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Whether output word `w` can stand for quantity word `q` (`q` may be a `|`-joined set).
fn matches(w: &str, q: &str) -> bool {
    if q.contains('|') {
        return q.split('|').any(|q| matches(w, q));
    }
    if w == q {
        return true;
    }
    let (short, long) = if w.len() <= q.len() { (w, q) } else { (q, w) };
    // A generic word stands for no longer one (`with` is not `without`).
    if short.len() >= 4 && long.starts_with(short) && !GENERIC.contains(&short) {
        return true;
    }
    SYNONYMS
        .iter()
        .any(|set| set.contains(&w) && set.contains(&q))
}

pub mod adapt;
mod bind;
mod compose;
mod read;
#[cfg(test)]
mod tests;

pub use bind::{bindings, Binding};
pub use compose::{dump_reason, filled_from_printed, from_output, in_format, keep_verified};
pub use read::{is_dump_line, missing, value_for};
