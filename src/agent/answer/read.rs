//! Reading an output: the value a quantity has in free-form script output, what is
//! missing from it, and whether a line is a printed object rather than a value.

use super::{words, Quantity, ARRAY_RUN, VALUE_CHARS};
use regex::Regex;
use std::borrow::Cow;
use std::sync::OnceLock;

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

/// Whether `line` looks like a row of a printed Series: an integer index then one cell.
fn is_series_row(line: &str) -> bool {
    let cells: Vec<&str> = line.split_whitespace().collect();
    cells.len() == 2
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
    let output = readable(output);
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
        if !q.choices.is_empty() {
            return q.is_choice(v);
        }
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
    // Lines naming what the quantity is of first (`Mean of MedianHouseValue` before
    // `Mean of MedInc` for `@mean_value[mean_MedianHouseValue]`), then any.
    let passes: &[bool] = if q.subject.is_empty() {
        &[false]
    } else {
        &[true, false]
    };
    for &strict in passes {
        if let Some(v) = labelled_value(&lines, q, strict, &fits) {
            return Some(v);
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

/// The value of the first line (not a dump, not a table header) that labels `q` and
/// holds a value that `fits` ([`Quantity::labelled_by`] says what `strict` asks).
fn labelled_value(
    lines: &[&str],
    q: &Quantity,
    strict: bool,
    fits: &dyn Fn(&str) -> bool,
) -> Option<String> {
    for (i, line) in lines.iter().enumerate() {
        if is_dump_line(line) {
            continue;
        }
        let next = lines[i + 1..].iter().find(|l| !l.trim().is_empty());
        // The header of a printed table (`Country  Year  …` over `0  Afghanistan …`)
        // labels columns, not a value.
        // Nor does a label over a printed Series (`<mean of ratio>: 0    6.8e+09` over
        // `1    8.2e+09`, a column divided where its mean was asked).
        if next.is_some_and(|n| is_table_row(n) || is_series_row(n)) {
            continue;
        }
        // `shapiro_w: ShapiroResult(statistic=0.954, pvalue=0.0027)`: labelled by the
        // words before the object (not its field names), its value is the field the
        // quantity names, else the statistic.
        let fields = result_fields(line);
        if let (Some(at), false) = (result_start(line), fields.is_empty()) {
            let label = words(&line[..at]);
            if q.labelled_by(&label, &label, strict) {
                let pick = field_for(&fields, q)
                    .or_else(|| fields.iter().find(|(k, _)| k == "statistic"))
                    .or(fields.first());
                if let Some((_, v)) = pick {
                    return Some(v.clone());
                }
            }
            continue;
        }
        let label = line.split([':', '=']).next().unwrap_or(line);
        if !q.labelled_by(&words(line), &words(label), strict) {
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
    None
}

/// `output` as the readers take it: numpy scalars unwrapped ([`unwrap_numpy`]), and a
/// line that is a printed dict (`{'p_value': 0.0, 'significance': 'Yes'}`) written as one
/// `key: value` line per entry, so that each value is read under its own key (read as one
/// line, the first key labels the rest of the dict).
pub(super) fn readable(output: &str) -> Cow<'_, str> {
    let output = unwrap_numpy(output);
    let split = |l: &str| dict_entries(l).or_else(|| pair_entries(l));
    if !output.lines().any(|l| split(l).is_some()) {
        return output;
    }
    let mut out = String::with_capacity(output.len());
    for l in output.lines() {
        match split(l) {
            Some(entries) => {
                for (k, v) in entries {
                    out.push_str(&format!("{k}: {v}\n"));
                }
            }
            None => {
                out.push_str(l);
                out.push('\n');
            }
        }
    }
    Cow::Owned(out)
}

/// The entries of a line of comma-separated `key: value` pairs, each key prefixed by the
/// line's own label when it has one (`Shapiro-Wilk test: Statistic: 0.98, p-value:
/// 1.6e-10` is `Shapiro-Wilk test Statistic: 0.98` and `Shapiro-Wilk test p-value:
/// 1.6e-10`); `None` for any other line. Read whole, the label would take the pairs as
/// its value and the p-value would never be read.
fn pair_entries(line: &str) -> Option<Vec<(String, String)>> {
    static PAIR: OnceLock<Regex> = OnceLock::new();
    let pair = PAIR.get_or_init(|| {
        Regex::new(r"^\s*([A-Za-z][A-Za-z0-9 _.\-]{0,40}?)\s*[:=]\s*(\S.*?)\s*$")
            .expect("a valid pattern")
    });
    if is_dump_line(line) || line.contains(['[', '{', '(']) {
        return None;
    }
    let pairs = |text: &str| -> Option<Vec<(String, String)>> {
        let parts: Vec<&str> = text.split(',').collect();
        if parts.len() < 2 {
            return None;
        }
        parts
            .iter()
            .map(|p| {
                let c = pair.captures(p)?;
                Some((c[1].to_string(), c[2].to_string()))
            })
            .collect()
    };
    if let Some(all) = pairs(line) {
        return Some(all);
    }
    let (label, rest) = line.split_once(':')?;
    let label = label.trim();
    if label.is_empty() || label.chars().count() > 60 {
        return None;
    }
    let inner = pairs(rest)?;
    Some(
        inner
            .into_iter()
            .map(|(k, v)| (format!("{label} {k}"), v))
            .collect(),
    )
}

/// The entries of a line that is a Python dict or JSON object with string keys, values
/// unquoted; `None` for any other line.
fn dict_entries(line: &str) -> Option<Vec<(String, String)>> {
    let inner = line.trim().strip_prefix('{')?.strip_suffix('}')?;
    let unquote = |s: &str| -> Option<String> {
        let s = s.trim();
        let q = s.chars().next().filter(|c| matches!(c, '\'' | '"'))?;
        s.strip_prefix(q)?.strip_suffix(q).map(str::to_string)
    };
    // Split at the commas and colons outside quotes and brackets.
    let (mut depth, mut quote, mut start) = (0usize, None::<char>, 0usize);
    let mut parts: Vec<(usize, usize, Option<usize>)> = Vec::new();
    let mut colon = None;
    for (i, c) in inner.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '(' | '[' | '{') => depth += 1,
            (None, ')' | ']' | '}') => depth = depth.checked_sub(1)?,
            (None, ':') if depth == 0 && colon.is_none() => colon = Some(i),
            (None, ',') if depth == 0 => {
                parts.push((start, i, colon.take()));
                start = i + 1;
            }
            _ => {}
        }
    }
    if quote.is_some() || depth != 0 {
        return None;
    }
    parts.push((start, inner.len(), colon));
    let mut out = Vec::new();
    for (a, b, colon) in parts {
        if inner[a..b].trim().is_empty() {
            continue;
        }
        let colon = colon?;
        let key = unquote(&inner[a..colon])?;
        let value = inner[colon + 1..b].trim();
        out.push((key, unquote(value).unwrap_or_else(|| value.to_string())));
    }
    (!out.is_empty()).then_some(out)
}

/// `output` with numpy 2's scalar reprs (`np.float64(0.95)`, `np.int64(3)`, which it
/// prints inside tuples, lists and result objects) replaced by the number inside.
pub(super) fn unwrap_numpy(output: &str) -> Cow<'_, str> {
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
pub(super) fn single_value(output: &str) -> Option<&str> {
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
pub(super) fn answer_lines(output: &str) -> Vec<&str> {
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
