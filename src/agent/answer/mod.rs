//! What a question asks for: the values the caller names ([`Wanted`], read into
//! [`Quantity`]s by [`requested`]) or, when it names none, the statistics the question
//! names; the question's constraints, numbered for the verifier; and the output
//! adapters that write the values given through the answer API ([`adapt`]).
//!
//! Written by hand: no crate reads "which of these quantities does a plan step speak
//! of"; the word lists are small and tested in `tests.rs`.

use serde::Serialize;

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

/// A quantity the question asks for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Quantity {
    /// `mean_fare`, a name the caller gave, or the statistic (`median`).
    pub name: String,
    /// Named by the caller: a script that gives values must give it under that name.
    pub formatted: bool,
    /// The words that say it in a plan step (each may be matched by a synonym).
    words: Vec<String>,
    /// Those of [`Quantity::words`] no other requested quantity has (`weekend` of
    /// `weekend_mean_price` beside `weekday_mean_price`): a step must not lack them.
    #[serde(skip)]
    distinct: Vec<String>,
    /// What the caller says it is, when that says more than the name (`Number of
    /// entries after cleaning duplicates`).
    pub meaning: Option<String>,
}

impl Quantity {
    /// Whether the words `w` say this quantity: all its words (each by itself or a
    /// synonym), or all but one of a name of three words or more.
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

/// A value the caller wants given under a name (`mean_fare`), with what it is when the
/// name alone does not say (`Number of entries after cleaning duplicates`). Benchmarks
/// read them off their answer formats at the edge (`bench::dabench`); `ask --answer
/// NAME[=WHAT]` takes them from the user.
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
        if out.iter().all(|q| q.name != name) {
            let mut words: Vec<String> = words(&name)
                .into_iter()
                .filter(|w| !GENERIC.contains(&w.as_str()) || (negated && w == "with"))
                .collect();
            if words.is_empty() {
                words = vec![name.to_lowercase()];
            }
            let all = self::words(&name);
            let meaning = Some(meaning.trim().to_string()).filter(|m| {
                let mw = self::words(m);
                // `[value]`, `[mean_fare]`: a placeholder, not a meaning.
                mw != all
                    && mw.iter().any(|w| !GENERIC.contains(&w.as_str()))
                    && m.len() <= MEANING_MAX
            });
            out.push(Quantity {
                name,
                formatted: true,
                words,
                distinct: Vec::new(),
                meaning,
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
    for (name, asked, said) in STATISTICS {
        let hit = asked
            .iter()
            .any(|a| q.contains(&format!(" {} ", words(a).join(" "))));
        if hit {
            out.push(Quantity {
                name: name.to_string(),
                formatted: false,
                distinct: Vec::new(),
                // Any one of its words will do: joined into one synonym set.
                words: vec![said.join("|")],
                meaning: None,
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

/// Lowercased words: letters and digits; `_` and everything else separate.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Whether a word `w` of a step can stand for quantity word `q` (`q` may be a `|`-joined set).
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
#[cfg(test)]
mod tests;
