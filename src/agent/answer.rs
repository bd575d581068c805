//! Deterministic reading of what a question asks for and of what an output holds: the
//! check that keeps a verifier from rubber-stamping, the dump detector that keeps a raw
//! repr out of an answer, and the reader that answers from a verified output when the
//! finalyzer fails.
//!
//! Written by hand: no crate reads "a labelled value near these words" in free-form
//! script output; the rules are small and each is tested below. They are conservative:
//! a quantity is only required when the format names it (`@name[...]`) or the question
//! names a statistic outright, so a question they cannot read is left to the verifier.

use regex::Regex;
use serde::Serialize;
use std::borrow::Cow;
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
    /// What the format says it is: the text in its brackets, when that says more than
    /// the name (`Number of entries after cleaning duplicates`).
    pub meaning: Option<String>,
}

impl Quantity {
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

/// The quantities `question` and its `guidelines` ask for: every `@name[...]` of either;
/// when there is none, the statistics the question names.
pub fn requested(question: &str, guidelines: Option<&str>) -> Vec<Quantity> {
    let mut out: Vec<Quantity> = Vec::new();
    for text in [question, guidelines.unwrap_or("")] {
        for (name, meaning) in format_names(text) {
            if out.iter().all(|q| q.name != name) {
                let mut words: Vec<String> = words(&name)
                    .into_iter()
                    .filter(|w| !GENERIC.contains(&w.as_str()))
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
                out.push(Quantity {
                    name,
                    formatted: true,
                    numeric,
                    words,
                    distinct: Vec::new(),
                    meaning,
                });
            }
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
                // Any one label word will do: joined into one synonym set.
                words: vec![labels.join("|")],
                meaning: None,
            });
        }
    }
    out
}

/// The names of `@name[` in `text`, in order.
/// Longest bracket text kept as a quantity's meaning (longer is a sentence of rules).
const MEANING_MAX: usize = 160;

/// Every `@name[meaning]` of `text`: the names and their bracket texts.
fn format_names(text: &str) -> Vec<(String, String)> {
    let mut names = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find('@') {
        let after = &rest[at + 1..];
        let len = after
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(after.len());
        // `@name[...]` is how instructions write the form itself, not a quantity.
        let generic = ["[...]", "[…]"].iter().any(|g| after[len..].starts_with(g));
        if len > 0 && after[len..].starts_with('[') && !generic {
            let inside = &after[len + 1..];
            let meaning = inside.find(']').map_or("", |end| &inside[..end]);
            names.push((after[..len].to_string(), meaning.to_string()));
        }
        rest = &after[len..];
    }
    names
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
    if short.len() >= 4 && long.starts_with(short) {
        return true;
    }
    SYNONYMS
        .iter()
        .any(|set| set.contains(&w) && set.contains(&q))
}

/// Whether `line` is part of a printed pandas/numpy object rather than a labelled value.
pub fn is_dump_line(line: &str) -> bool {
    const MARKS: &[&str] = &[
        "dtype:",
        "dtype=",
        "ArrowStringArray",
        "ArrowExtensionArray",
        "<PandasArray>",
        "<NumpyExtensionArray>",
        "<IntegerArray>",
        "<FloatingArray>",
        "<StringArray>",
        "array([",
        "Index([",
        "[... rows x",
    ];
    if MARKS.iter().any(|m| line.contains(m)) {
        return true;
    }
    if line.trim_start().starts_with("Length: ") {
        return true;
    }
    // A numpy array's run of numbers: `[ 797171  500223  ...` or `[1.5 2.5 3.5 4.5]`
    // (no commas: a Python list `[1, 2, 3, 4]` is an answer).
    let mut rest = line;
    while let Some(open) = rest.find('[') {
        let inner = &rest[open + 1..];
        let end = inner.find(']').unwrap_or(inner.len());
        let run = &inner[..end];
        let numbers = run
            .split(char::is_whitespace)
            .filter(|t| !t.is_empty())
            .take_while(|t| is_number(t) || *t == "..." || *t == "…")
            .count();
        if numbers >= ARRAY_RUN && !run.contains(',') {
            return true;
        }
        rest = &inner[end.min(inner.len())..];
    }
    false
}

/// A number as scripts print them: `-1,234.5`, `3e-4`, `45%`, `nan`.
fn is_number(t: &str) -> bool {
    let t = t.trim_end_matches('%').replace(',', "");
    !t.is_empty() && (t.parse::<f64>().is_ok() || t.eq_ignore_ascii_case("nan"))
}

/// Whether `line` looks like a row of a printed table: an integer index then two or
/// more cells.
fn is_table_row(line: &str) -> bool {
    let cells: Vec<&str> = line.split_whitespace().collect();
    cells.len() >= 3
        && cells[0].chars().all(|c| c.is_ascii_digit())
        && !line.contains(':')
        && !line.contains('=')
}

/// The value a line gives after its label: the text after the last `:` or `=`, else its
/// last number. `None` when the line holds no value.
fn value_of(line: &str) -> Option<String> {
    if let Some(v) = bracket_value(line) {
        return Some(v);
    }
    // The label ends at its first `:` (`Time: 12:30`, `pair: Age and Fare (r=0.1)`),
    // else at its first `=`.
    let cut = line.find(':').or_else(|| line.find('='));
    if let Some(i) = cut {
        let v = line[i + 1..].trim().trim_end_matches('.').trim();
        if !v.is_empty() && v.chars().count() <= VALUE_CHARS {
            return Some(v.to_string());
        }
    }
    line.split_whitespace()
        .rev()
        .map(|t| t.trim_matches(|c: char| matches!(c, ',' | ';' | '(' | ')' | '.')))
        .find(|t| is_number(t))
        .map(str::to_string)
}

/// The number of the last `= number` of `line` (`(r=0.41)`, `p = 0.03,`); a number after
/// a comparison (`p-value > 0.05`, a rule echoed) is no value.
fn assigned_number(line: &str) -> Option<String> {
    line.rmatch_indices('=').find_map(|(i, _)| {
        let after = line[i + 1..].trim_start();
        let token = after
            .split(|c: char| c.is_whitespace() || matches!(c, ')' | ']' | ';' | ','))
            .next()?
            .trim_end_matches('.');
        is_number(token).then(|| token.to_string())
    })
}

/// `v` of a line holding `@name[v]`.
fn bracket_value(line: &str) -> Option<String> {
    let at = line.find('@')?;
    let open = line[at..].find('[')? + at;
    let close = line[open..].find(']')? + open;
    let v = line[open + 1..close].trim();
    (!v.is_empty()).then(|| v.to_string())
}

/// The value `output` gives for `q`, if any: `@name[v]` written out, or a line (not a
/// dump) whose words label `q` and that holds a value, or a label line followed by a
/// line holding the value alone.
pub fn value_for(output: &str, q: &Quantity) -> Option<String> {
    let output = unwrap_numpy(output);
    let output = output.as_ref();
    // A number is asked: a value must start with one (`0.054`, `12.5 %`, `[1, 2]`); a
    // word of the output, or a sentence with a number in it (`Normal (p-value > 0.05)
    // if …`, the rule echoed), is not its value.
    let fits = |v: &str| {
        let first = v
            .split_whitespace()
            .next()
            .unwrap_or("")
            .trim_matches(|c: char| matches!(c, '[' | ']' | '(' | ')' | ',' | ';'));
        !q.numeric
            || is_number(first)
            || ["nan", "inf", "-inf"].contains(&v.trim().to_lowercase().as_str())
    };
    let tag = format!("@{}[", q.name);
    for line in output.lines() {
        if let Some(i) = line.find(&tag) {
            if let Some(v) = bracket_value(&line[i..]).filter(|v| fits(v)) {
                return Some(v);
            }
        }
    }
    let lines: Vec<&str> = output.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        if is_dump_line(line) {
            continue;
        }
        let next = lines[i + 1..].iter().find(|l| !l.trim().is_empty());
        // The header of a printed table (`Country  Year  …` over `0  Afghanistan …`)
        // labels columns, not a value.
        if next.is_some_and(|n| is_table_row(n)) {
            continue;
        }
        // `shapiro_w: ShapiroResult(statistic=0.954, pvalue=0.0027)`: labelled by the
        // words before the object (not its field names), its value is the field the
        // quantity names, else the statistic.
        let fields = result_fields(line);
        if let (Some(at), false) = (result_start(line), fields.is_empty()) {
            if q.labels(&words(&line[..at])) {
                let pick = field_for(&fields, q)
                    .or_else(|| fields.iter().find(|(k, _)| k == "statistic"))
                    .or(fields.first());
                if let Some((_, v)) = pick {
                    return Some(v.clone());
                }
            }
            continue;
        }
        let w = words(line);
        if !q.labels(&w) {
            continue;
        }
        if let Some(v) = value_of(line).filter(|v| fits(v)) {
            return Some(v);
        }
        // A number asked, and the labelled value is words around an assignment
        // (`Strongest correlation: Age and Fare (r=0.41)`): the number assigned.
        if q.numeric {
            if let Some(n) = assigned_number(line) {
                return Some(n);
            }
        }
        // `Mean fare:` then `32.2` on the next line.
        if let Some(n) = next {
            let n = n.trim();
            if !is_dump_line(n) && n.chars().count() <= VALUE_CHARS && !n.contains(':') && fits(n) {
                return Some(n.to_string());
            }
        }
    }
    // No line labels it, but one result object has a field it names (`p_value` from the
    // `pvalue=` of the only test printed).
    let mut named = lines
        .iter()
        .filter(|l| !is_dump_line(l))
        .filter_map(|l| field_for(&result_fields(l), q).map(|(_, v)| v.clone()));
    match (named.next(), named.next()) {
        (Some(v), None) => Some(v),
        _ => None,
    }
}

/// `output` with numpy 2's scalar reprs (`np.float64(0.95)`, `np.int64(3)`, which it
/// prints inside tuples, lists and result objects) replaced by the number inside.
fn unwrap_numpy(output: &str) -> Cow<'_, str> {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"\b(?:np|numpy)\.(?:float|int|uint|complex|longdouble|str_|bool_)\d*\(([^()]*)\)",
        )
        .expect("a valid pattern")
    })
    .replace_all(output, "$1")
}

/// The `name=number` fields of the first result object's repr in `line`
/// (`ShapiroResult(statistic=0.95, pvalue=0.002)`, `LinregressResult(slope=…, …)`), in
/// order; empty when it holds none.
fn result_fields(line: &str) -> Vec<(String, String)> {
    let Some(m) = result_object().find(line) else {
        return Vec::new();
    };
    let body = &line[m.end()..];
    // Split at the commas outside brackets, up to the `)` that closes the object.
    let (mut depth, mut start, mut parts) = (0usize, 0usize, Vec::new());
    for (i, c) in body.char_indices() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' if depth == 0 => {
                parts.push(&body[start..i]);
                break;
            }
            ')' | ']' | '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&body[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts
        .into_iter()
        .filter_map(|p| p.split_once('='))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .filter(|(k, v)| k.chars().all(|c| c.is_alphanumeric() || c == '_') && is_number(v))
        .collect()
}

/// A result object's repr: `ShapiroResult(`, `TtestResult(`, `LinregressResult(`.
fn result_object() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"\b[A-Z]\w*Result\(").expect("a valid pattern"))
}

/// Where the first result object of `line` starts.
fn result_start(line: &str) -> Option<usize> {
    result_object().find(line).map(|m| m.start())
}

/// The field of `fields` that `q` names: `pvalue` for `p_value` or `p_value_male`,
/// `slope` for `slope`, `statistic` for `t_statistic`.
fn field_for<'f>(fields: &'f [(String, String)], q: &Quantity) -> Option<&'f (String, String)> {
    let squash = |s: &str| -> String {
        s.chars()
            .filter(|c| c.is_alphanumeric())
            .flat_map(char::to_lowercase)
            .collect()
    };
    let name = squash(&q.name);
    fields.iter().find(|(k, _)| {
        let k = squash(k);
        k == name || (k.len() >= 5 && name.contains(&k))
    })
}

/// What a verified output lacks: the requested quantities it gives no value for, or,
/// when nothing in particular was requested, a note that it holds no answer at all (only
/// dumps or tables, or nothing).
pub fn missing(output: &str, quantities: &[Quantity]) -> Vec<String> {
    // One statistic asked in words, and the output is that one value.
    if let [q] = quantities {
        if !q.formatted && single_value(output).is_some() {
            return Vec::new();
        }
    }
    // `nan` is read as the value printed, but no answer: it comes from an empty
    // selection or missing values, which a further step must deal with.
    let mut out: Vec<String> = quantities
        .iter()
        .filter(|q| value_for(output, q).is_none_or(|v| v.trim().eq_ignore_ascii_case("nan")))
        .map(|q| q.name.clone())
        .collect();
    if quantities.is_empty() && answer_lines(output).is_empty() {
        out.push("an answer (the output holds no labelled value, only data)".into());
    }
    out
}

/// The whole of `output` when it is one short line, not a dump.
fn single_value(output: &str) -> Option<&str> {
    let lines: Vec<&str> = output.lines().filter(|l| !l.trim().is_empty()).collect();
    match lines.as_slice() {
        [only] if !is_dump_line(only) && only.trim().chars().count() <= VALUE_CHARS => {
            Some(only.trim())
        }
        _ => None,
    }
}

/// Lines of `output` that read as answers: a label with a value, not part of a dump or
/// a table; or the whole output when it is one short line.
fn answer_lines(output: &str) -> Vec<&str> {
    if let Some(only) = single_value(output) {
        return vec![only];
    }
    let lines: Vec<&str> = output.lines().filter(|l| !l.trim().is_empty()).collect();
    lines
        .into_iter()
        .filter(|l| !is_dump_line(l) && !is_table_row(l))
        .filter(|l| words(l).iter().any(|w| w.chars().any(char::is_alphabetic)))
        .filter(|l| value_of(l).is_some())
        .map(str::trim)
        .collect()
}

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
fn plain_number(t: &str) -> Option<f64> {
    let t = t.trim().replace(',', "");
    t.parse::<f64>().ok().filter(|x| x.is_finite())
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

#[cfg(test)]
mod tests {
    use super::*;

    fn names(qs: &[Quantity]) -> Vec<&str> {
        qs.iter().map(|q| q.name.as_str()).collect()
    }

    #[test]
    fn a_value_is_read_after_the_first_separator_and_a_number_from_words_around_it() {
        // As the local model's script printed it (DABench question 310).
        let q = requested(
            "x",
            Some(
                "@strongest_correlation_pair[pair] @strongest_correlation_coefficient[coefficient]",
            ),
        );
        let out = "Mean age: 29.7\nStrongest positive correlation: Age and Fare (r=0.41)";
        assert_eq!(
            value_for(out, &q[0]).as_deref(),
            Some("Age and Fare (r=0.41)")
        );
        assert_eq!(value_for(out, &q[1]).as_deref(), Some("0.41"));
        let time = requested("x", Some("@start_time[t]"));
        assert_eq!(
            value_for("start time: 12:30", &time[0]).as_deref(),
            Some("12:30")
        );
    }

    #[test]
    fn values_are_read_from_numpy_scalars_and_result_objects() {
        // As the local model's script printed them (DABench question 375).
        let qs = requested(
            "",
            Some("@shapiro_w[test_statistic], @p_value[p_value], @skewness[skewness_value], @kurtosis[kurtosis_value]"),
        );
        let out = "<mean>: 21144.07608695652\n<shapiro_w>: ShapiroResult(statistic=np.float64(0.9543095491220899), pvalue=np.float64(0.0027291466836339875))\n<skewness>: 0.1520317726967334\n<kurtosis>: -1.1336054960924962\n";
        assert!(missing(out, &qs).is_empty(), "{:?}", missing(out, &qs));
        let get = |n: &str| value_for(out, qs.iter().find(|q| q.name == n).unwrap());
        assert_eq!(get("shapiro_w").as_deref(), Some("0.9543095491220899"));
        assert_eq!(get("p_value").as_deref(), Some("0.0027291466836339875"));
        let q = &requested("", Some("@p_value_male[p], @slope[s]"));
        let out = "fit: LinregressResult(slope=np.float64(2.5), intercept=1.0, rvalue=0.9, pvalue=0.01, stderr=0.1)\ncorr male: (np.float64(0.41), np.float64(0.003))";
        assert_eq!(value_for(out, &q[1]).as_deref(), Some("2.5"));
        assert_eq!(value_for(out, &q[0]).as_deref(), Some("0.01"));
        assert_eq!(
            unwrap_numpy(out).lines().nth(1),
            Some("corr male: (0.41, 0.003)")
        );
        // Two tests printed and nothing labels the p-value asked: which one is not
        // guessed.
        let two = "a: TtestResult(statistic=1.0, pvalue=0.2, df=10.0)\nb: TtestResult(statistic=3.0, pvalue=0.01, df=10.0)";
        assert_eq!(value_for(two, &requested("", Some("@p_value[p]"))[0]), None);
    }

    #[test]
    fn the_final_answer_keeps_the_verified_numbers() {
        let qs = requested(
            "",
            Some("@shapiro_w[w], @p_value[p], @skewness[s], @normality[Normal or Not Normal]"),
        );
        let verified = "shapiro_w: 0.9543095491220899\np_value: 0.0027291466836339875\nskewness: 0.1520317726967334\nnormality: Normal";
        // As the local finalyzer printed it (DABench question 375): two numbers in one
        // bracket; and a skewness computed anew, differently.
        let (a, changed) = keep_verified(
            "@shapiro_w[0.9543 0.0027], @p_value[0.0027], @skewness[0.2001], @normality[Not Normal]",
            verified,
            &qs,
        );
        assert_eq!(
            a,
            "@shapiro_w[0.9543], @p_value[0.0027], @skewness[0.1520], @normality[Not Normal]"
        );
        assert_eq!(changed, ["shapiro_w", "skewness"]);
        // Rounded as asked, scientific, or not given by the output: kept.
        let (a, changed) = keep_verified(
            "@shapiro_w[0.95], @p_value[2.729e-03], @skewness[0.15]",
            "shapiro_w: 0.9543\np_value: 0.0027291",
            &qs,
        );
        assert_eq!(a, "@shapiro_w[0.95], @p_value[2.729e-03], @skewness[0.15]");
        assert!(changed.is_empty());
    }

    #[test]
    fn a_label_lacking_the_word_that_tells_two_quantities_apart_is_neither() {
        // As the local model printed them (DABench question 419): the weekend mean was
        // read from the weekday line, which lacks only `weekend`.
        let qs = requested(
            "",
            Some("@weekday_mean_price[a] @weekend_mean_price[b] @clean_entries_count[c]"),
        );
        let out = "<Mean Opening Price (Weekdays)>: 571.875\n<Mean Opening Price (Weekends)>: nan\nClean entries: 1153";
        assert_eq!(value_for(out, &qs[0]).as_deref(), Some("571.875"));
        assert_eq!(value_for(out, &qs[1]).as_deref(), Some("nan"));
        assert_eq!(missing(out, &qs), ["weekend_mean_price"]);
        let only_weekday = "<Mean Opening Price (Weekdays)>: 571.875";
        assert_eq!(value_for(only_weekday, &qs[1]), None);
        // A quantity sharing no word with another keeps the one-word leeway.
        assert_eq!(value_for(out, &qs[2]).as_deref(), Some("1153"));
    }

    #[test]
    fn stddev_is_labelled_by_standard_deviation() {
        // As the local model's script printed it (DABench question 272).
        let q = requested("x", Some("@mean_ratio[m], @stddev_ratio[s]"));
        let out =
            "<mean ratio>: 10419870478751.084\n<standard deviation ratio>: 3593655649585.2207";
        assert_eq!(value_for(out, &q[1]).as_deref(), Some("3593655649585.2207"));
        assert!(missing(out, &q).is_empty());
    }

    #[test]
    fn a_numeric_quantity_takes_no_sentence_with_a_number_in_it() {
        // As the local model's script printed it (DABench question 268).
        let q = requested(
            "Are the MEANPOT values normally distributed?",
            Some("@normality_test_result[Normal or Not Normal] @p_value[The p-value, rounded to three decimal places]"),
        );
        let echoed = "Mean POT: 1571.7\nShapiro-Wilk Test Result: Normal (p-value > 0.05) if p-value is greater than 0.05, Not Normal otherwise";
        assert_eq!(value_for(echoed, &q[1]), None);
        assert_eq!(missing(echoed, &q), ["p_value"]);
        for (out, v) in [
            ("p-value: 0.0547", "0.0547"),
            ("p value = 1.2e-10 (two-sided)", "1.2e-10 (two-sided)"),
            ("p_value: [0.01, 0.02]", "[0.01, 0.02]"),
            ("p-value: nan", "nan"),
        ] {
            assert_eq!(value_for(out, &q[1]).as_deref(), Some(v), "{out}");
        }
    }

    #[test]
    fn a_step_mentions_a_quantity_by_name_label_or_meaning() {
        // DABench question 271's format.
        let q = requested(
            "Preprocess the dataset.",
            Some("Return 4 values: @clean_entries[Number of entries after cleaning duplicates], @mean_USFLUX[Mean of the USFLUX column after filling missing values, rounded to two decimal places], @norm_TOTUSJZ[value]."),
        );
        assert_eq!(names(&q), ["clean_entries", "mean_USFLUX", "norm_TOTUSJZ"]);
        assert_eq!(
            q[0].meaning.as_deref(),
            Some("Number of entries after cleaning duplicates")
        );
        assert_eq!(q[2].meaning, None, "a placeholder is no meaning");
        let drifted = "Compute the mean of the `MEANGAM` column and print it.";
        assert!(q.iter().all(|q| !q.mentioned_in(drifted)));
        assert!(q[0].mentioned_in("Print clean_entries after dropping duplicate rows."));
        assert!(q[0].mentioned_in("Count the entries after cleaning the duplicates."));
        assert!(q[1].mentioned_in("Fill the missing USFLUX values and print the mean USFLUX."));
        assert!(q[2].mentioned_in("Min-max normalize TOTUSJZ and print norm TOTUSJZ."));
    }

    #[test]
    fn quantities_come_from_the_format_or_the_named_statistics() {
        let q = requested(
            "What is the mean fare? Drop outliers by the IQR rule.",
            Some("@mean_fare[mean], @p_value[p] where mean_fare is rounded to 2 decimals. Also @mean_fare[x]."),
        );
        assert_eq!(names(&q), ["mean_fare", "p_value"]);
        assert!(q.iter().all(|q| q.formatted));
        let q = requested(
            "What is the median and the standard deviation of age?",
            None,
        );
        assert_eq!(names(&q), ["median", "standard deviation"]);
        // Nothing the reader can name: nothing required.
        assert!(requested("How much did the north region sell?", None).is_empty());
        // An e-mail address is not a format.
        assert!(requested("Mail me at a@b.c", None).is_empty());
        // Instructions that write the form itself name no quantity.
        let q = requested("", Some("Answer as @name[...] pairs:\n@mean_fare[m]"));
        assert_eq!(names(&q), ["mean_fare"]);
    }

    #[test]
    fn a_value_must_be_labelled_and_not_a_dump() {
        let q = &requested("", Some("@mean_fare[m] @p_value[p]"));
        assert_eq!(
            value_for("Average fare: 32.20", &q[0]).as_deref(),
            Some("32.20")
        );
        assert_eq!(
            value_for("mean_fare = 32.2\n", &q[0]).as_deref(),
            Some("32.2")
        );
        assert_eq!(
            value_for("@mean_fare[32.2]", &q[0]).as_deref(),
            Some("32.2")
        );
        assert_eq!(
            value_for("Mean of Fare:\n32.2", &q[0]).as_deref(),
            Some("32.2")
        );
        assert_eq!(value_for("P-value: 0.03", &q[1]).as_deref(), Some("0.03"));
        // Loading the data and printing the column names no mean.
        let load = "Fare column loaded: 891 rows\n0    7.25\n1   71.28\nName: Fare, dtype: float64";
        assert_eq!(value_for(load, &q[0]), None);
        assert_eq!(missing(load, q), ["mean_fare", "p_value"]);
        let stats = requested("What is the mean close price?", None);
        assert_eq!(missing("mean close: 12.5", &stats), Vec::<String>::new());
        assert_eq!(missing("[ 797171  500223  1 2 ]", &stats), ["mean"]);
        assert!(missing("12.5", &stats).is_empty());
        let q = &requested(
            "",
            Some("@relationship_type[type] @mean_sepal_petal_ratio[r]"),
        );
        assert_eq!(
            value_for("Relationship: linear", &q[0]).as_deref(),
            Some("linear")
        );
        assert_eq!(
            value_for("sepal/petal ratio: 1.9", &q[1]).as_deref(),
            Some("1.9")
        );
        assert_eq!(value_for("mean sepal length: 5.8", &q[1]), None);
    }

    #[test]
    fn without_named_quantities_an_output_needs_one_labelled_value() {
        assert!(missing("north total 15", &[]).is_empty());
        assert!(missing("35", &[]).is_empty());
        let head = "   region  amount\n0   north      10\n1   south      20\n2   north       5";
        assert_eq!(missing(head, &[]).len(), 1);
        assert_eq!(missing("", &[]).len(), 1);
    }

    #[test]
    fn dumps_are_recognized() {
        for d in [
            "[ 797171  500223  133124 ... 12 ]",
            "0    a\n1    b\nName: city, dtype: object",
            "<ArrowStringArray>\n['a', 'b']\nLength: 2, dtype: string",
            "array([1, 2, 3])",
            "[1.5 2.5 3.5 4.5]",
        ] {
            assert!(dump_reason(d, false).is_some(), "{d}");
        }
        let long = (0..30)
            .map(|i| format!("row {i}"))
            .collect::<Vec<_>>()
            .join("\n");
        assert!(dump_reason(&long, true).is_some());
        assert!(dump_reason(&long, false).is_none());
        for ok in ["15", "@mean[3.2], @max[7]", "[1, 2, 3, 4, 5]", "north: 15"] {
            assert_eq!(dump_reason(ok, true), None, "{ok}");
        }
    }

    #[test]
    fn a_number_asked_is_not_read_from_a_word_or_a_table_header() {
        let q = requested(
            "",
            Some("@no_of_countries_with_outliers[n], @mean_no_of_deaths[m], @country_with_max_deaths[c]"),
        );
        let numeric: Vec<bool> = q.iter().map(|q| q.numeric).collect();
        assert_eq!(numeric, [true, true, false]);
        // A printed frame: its header names the columns, its rows hold no labelled value.
        let head = "       Country  Year  ...  No. of deaths_max   WHO Region\n\
                    0  Afghanistan  2017  ...              510.0  Eastern Mediterranean\n\
                    1      Algeria  2017  ...                NaN                 Africa\n";
        assert_eq!(from_output(head, &q), None);
        assert_eq!(value_for("mean no of deaths: Country", &q[1]), None);
        assert_eq!(
            value_for("mean no of deaths: Country\nmean no of deaths: 12.5", &q[1]).as_deref(),
            Some("12.5")
        );
        // A thing's name may be a word.
        assert_eq!(
            value_for("country with max deaths: Nigeria", &q[2]).as_deref(),
            Some("Nigeria")
        );
        assert_eq!(
            value_for("@mean_no_of_deaths[nan]", &q[1]).as_deref(),
            Some("nan")
        );
        // Read, but no answer: the loop must go on.
        assert_eq!(
            missing("mean no of deaths: nan", &q[1..2]),
            ["mean_no_of_deaths"]
        );
    }

    #[test]
    fn answers_are_put_in_the_format_and_read_from_outputs() {
        let q = requested("", Some("@mean_fare[m], @max_age[a]"));
        assert_eq!(
            in_format("Mean fare: 32.2\nMax age: 80", &q).as_deref(),
            Some("@mean_fare[32.2], @max_age[80]")
        );
        assert_eq!(
            in_format("@mean_fare[32.2] @max_age[80]", &q).as_deref(),
            Some("@mean_fare[32.2] @max_age[80]")
        );
        assert_eq!(in_format("32.2", &q), None);
        let out = "rows 891\nmean fare 32.2\nName: Age, dtype: float64\nmaximum age: 80";
        assert_eq!(
            from_output(out, &q).as_deref(),
            Some("@mean_fare[32.2], @max_age[80]")
        );
        let stats = requested("What is the median age?", None);
        assert_eq!(
            from_output("rows 891\nmedian age: 28\nmean age: 29.7", &stats).as_deref(),
            Some("median: 28")
        );
        assert_eq!(
            from_output("rows 3\nnorth total 15", &[]).as_deref(),
            Some("rows 3\nnorth total 15")
        );
        assert_eq!(from_output("", &[]), None);
    }
}
