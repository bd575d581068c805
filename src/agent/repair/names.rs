//! Column names written otherwise than the files write them: padded with spaces a
//! person does not see, spelled as a variable (`num_calls_abandoned`), or mistyped by a
//! letter (`MEANGJZH` for `MEANJZH`). Each has one reading when exactly one column
//! answers to it.

use regex::Regex;
use std::collections::HashMap;
use std::sync::OnceLock;

/// The columns whose names carry spaces a person does not see (leading, trailing or
/// doubled), each with the name as written without them; only where that name is no
/// column itself and stands for one column alone. A script that writes
/// `df["num. calls abandoned"]` for the column `num. calls abandoned ` fails with a
/// KeyError that a small model's debugger does not read as a matter of spaces.
pub(super) fn padded_names(columns: &[String]) -> Vec<(String, String)> {
    let bare = |c: &str| c.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out: Vec<(String, String)> = Vec::new();
    for c in columns {
        let b = bare(c);
        if b.is_empty() || b == *c || columns.contains(&b) {
            continue;
        }
        let others = columns.iter().filter(|o| *o != c && bare(o) == b).count();
        if others == 0 && !out.iter().any(|(x, _)| *x == b) {
            out.push((b, c.clone()));
        }
    }
    out
}

/// A name's spelling-free key: lowercase words of letters and digits (`num_calls_abandoned`,
/// `Num. Calls Abandoned ` and `num. calls abandoned` are one key).
fn loose_key(s: &str) -> String {
    s.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// String literals in a list or subscript (`df["num_calls_abandoned"]`, `[["Age", "fare"]]`)
/// that are no column of `columns` but spell exactly one of them otherwise (case,
/// `_`/`.`/spaces): the column's own name is put in their place. A small model writes the
/// name as it would name a variable, and its debugger, shown the KeyError, guesses another
/// spelling (`num. calls abandoned ` tried as `num_calls_abandoned`).
/// Names that differ only in spaces are [`padded_names`]'s, replaced wherever quoted: that
/// match is exact but for whitespace; one by case and punctuation is trusted only where a
/// column is read.
///
/// A name one letter away from exactly one column ([`typo_of`]: `MEANGJZH` for `MEANJZH`,
/// whose script then fails with a KeyError on every line that reads it) is
/// that column too, where the script reads it before it could have made it: the first
/// line that writes it reads it (`df["MEANGJZH"] = df["MEANGJZH"] + 1e-10`), not only
/// assigns it (`df["Close2"] = …` makes a new column and is left alone).
pub(super) fn loose_names(code: &str, columns: &[String]) -> (String, Vec<String>) {
    static LITERAL: OnceLock<Regex> = OnceLock::new();
    let literal =
        LITERAL.get_or_init(|| Regex::new(r#""[^"\\\n]*"|'[^'\\\n]*'"#).expect("a valid pattern"));
    let mut by_key: HashMap<String, Option<&String>> = HashMap::new();
    for c in columns {
        let k = loose_key(c);
        if k.is_empty() {
            continue;
        }
        by_key
            .entry(k)
            .and_modify(|e| {
                if e.is_some_and(|x| x != c) {
                    *e = None;
                }
            })
            .or_insert(Some(c));
    }
    let mut fixes: Vec<String> = Vec::new();
    let mut out = String::with_capacity(code.len());
    for line in code.split_inclusive('\n') {
        let (body, comment) = match line.find('#') {
            Some(i) => line.split_at(i),
            None => (line, ""),
        };
        let mut fixed = String::with_capacity(body.len());
        let mut last = 0;
        for m in literal.find_iter(body) {
            let before = body[..m.start()].trim_end().chars().last();
            let after = body[m.end()..].trim_start().chars().next();
            let lit = m.as_str();
            let (q, text) = (lit.chars().next().unwrap_or('"'), &lit[1..lit.len() - 1]);
            let column = (matches!(before, Some('[' | ','))
                && matches!(after, Some(']' | ','))
                && !columns.iter().any(|x| x == text))
            .then(|| match by_key.get(&loose_key(text)) {
                Some(c) => *c,
                None => typo_of(text, &by_key).filter(|_| read_first(code, text)),
            })
            .flatten();
            if let Some((col, l)) = column.and_then(|col| py_literal(col, q).map(|l| (col, l))) {
                let fix = format!("the column {col:?} was written {text:?}");
                if !fixes.contains(&fix) {
                    fixes.push(fix);
                }
                fixed.push_str(&body[last..m.start()]);
                fixed.push_str(&l);
                last = m.end();
            }
        }
        fixed.push_str(&body[last..]);
        out.push_str(&fixed);
        out.push_str(comment);
    }
    (out, fixes)
}

/// Keys shorter than this are not taken for another's typo: among short names one letter
/// is often all that tells two apart (`age`, `ag`; `x1`, `x2`).
const TYPO_MIN_CHARS: usize = 5;

/// The one column whose loose key is one edit (a letter added, dropped, changed, or two
/// swapped) from `text`'s, if exactly one is.
fn typo_of<'a>(text: &str, by_key: &HashMap<String, Option<&'a String>>) -> Option<&'a String> {
    let key = loose_key(text);
    if key.chars().count() < TYPO_MIN_CHARS {
        return None;
    }
    let mut near = by_key
        .iter()
        .filter(|(k, _)| k.chars().count() >= TYPO_MIN_CHARS && strsim::osa_distance(k, &key) == 1);
    match (near.next(), near.next()) {
        (Some((_, Some(col))), None) => Some(col),
        _ => None,
    }
}

/// Whether the first line of `code` that quotes `text` reads it: it has an occurrence that
/// is not the target of an assignment (`["text"] =`, but `==` reads).
fn read_first(code: &str, text: &str) -> bool {
    let quoted = [format!("\"{text}\""), format!("'{text}'")];
    let Some(line) = code
        .lines()
        .map(|l| l.split('#').next().unwrap_or(""))
        .find(|l| quoted.iter().any(|q| l.contains(q.as_str())))
    else {
        return false;
    };
    quoted.iter().any(|q| {
        line.match_indices(q.as_str()).any(|(i, _)| {
            let after = line[i + q.len()..].trim_start();
            let assigned = after
                .strip_prefix(']')
                .map(str::trim_start)
                .is_some_and(|a| a.starts_with('=') && !a.starts_with("=="));
            !assigned
        })
    })
}

/// `s` as a Python string literal quoted with `q` (`"Density\\n(P/Km2)"` for a name
/// with a line break), or `None` for a name with another control character.
pub(super) fn py_literal(s: &str, q: char) -> Option<String> {
    let mut out = String::from(q);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == q => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() => return None,
            c => out.push(c),
        }
    }
    out.push(q);
    Some(out)
}
