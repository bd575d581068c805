//! Field listings that place each column in a fixed-width line: a Fortran format
//! statement with the names beside it (`(I4,1X,F6.1,2X,A10)`), lines giving a field's
//! character range, start and end, or width (`year 1-4`, `1 4 year`, `year 4`,
//! `2  5  6  month`), and SAS `input` statements (`input year 1-4 month 6-7;`).
//!
//! A listing's positions are what lets it name the columns of a data file by content
//! (`companion::fit`): the widths must cover the data's lines and its numeric fields
//! must read as numbers.

use super::{non_empty, usable_name, Listing};
use crate::companion::{DocColumn, Span};

/// A field of a format statement: its span and its descriptor's kind.
type Field = (Span, char);

/// A listing must place at least this many fields: one line is too easily prose.
const MIN_FIELDS: usize = 2;
/// Lines of ranges or widths without a format code must place at least this many:
/// `exceed 3` and `current 9` in two sentences are no layout.
const MIN_RANGED_FIELDS: usize = 3;
/// Widest field believed, in characters.
const MAX_FIELD_WIDTH: u64 = 1000;

/// A Fortran-style edit descriptor's kind and width: `I4` → (`I`, 4), `F6.1` → (`F`,
/// 6), `ES12.4` → (`E`, 12); `None` for anything else.
pub(super) fn code_width(tok: &str) -> Option<(char, usize)> {
    let t = tok.trim_matches(|c| c == '(' || c == ')' || c == ',');
    let rest = t
        .strip_prefix("ES")
        .or_else(|| t.strip_prefix("EN"))
        .map(|r| ('E', r))
        .or_else(|| {
            // Capital letters only: `g10` in `2003, g10 Code GmbH` is no format code.
            let mut cs = t.chars();
            let k = cs.next()?;
            "AIFEDGLZ".contains(k).then_some((k, cs.as_str()))
        })?;
    let (kind, body) = rest;
    let (w, d) = body.split_once('.').unwrap_or((body, "0"));
    let digits = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
    if !digits(w) || !digits(d) {
        return None;
    }
    let w: usize = w.parse().ok()?;
    (w > 0 && w as u64 <= MAX_FIELD_WIDTH).then_some((kind, w))
}

/// Whether a descriptor kind is read as a number.
pub(super) fn numeric_kind(kind: char) -> bool {
    matches!(kind, 'I' | 'F' | 'E' | 'D' | 'G')
}

/// The fields of a Fortran format statement: each data descriptor's (start, end) and
/// kind, blanks (`1X`), tabs (`T12`) and repeats (`3I2`, `2(I4,F6.1)`) applied; `None`
/// when the text is not one (or holds a record break `/`).
pub(super) fn fortran_statement(body: &str) -> Option<Vec<Field>> {
    let mut fields = Vec::new();
    let mut at = 0usize;
    expand(body, &mut at, &mut fields, 0)?;
    (fields.len() >= MIN_FIELDS).then_some(fields)
}

/// Expand the descriptors of `body` (inside one pair of parentheses) onto `fields`.
fn expand(body: &str, at: &mut usize, fields: &mut Vec<Field>, depth: usize) -> Option<()> {
    if depth > 3 || fields.len() > 2000 {
        return None;
    }
    for item in split_items(body)? {
        let item = item.trim();
        if item.is_empty() {
            return None;
        }
        let digits = item.len() - item.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let (repeat, rest) = match digits {
            0 => (1, item),
            _ => (item[..digits].parse::<usize>().ok()?, &item[digits..]),
        };
        if repeat == 0 || repeat > 500 {
            return None;
        }
        let rest = rest.trim();
        if let Some(inner) = rest.strip_prefix('(').and_then(|r| r.strip_suffix(')')) {
            for _ in 0..repeat {
                expand(inner, at, fields, depth + 1)?;
            }
        } else if rest.eq_ignore_ascii_case("X") {
            *at += repeat;
        } else if let Some(n) = rest.strip_prefix(['T', 't']) {
            // `Tn`: the next field starts at column n.
            *at = n.parse::<usize>().ok()?.checked_sub(1)?;
        } else {
            let (kind, w) = code_width(rest)?;
            for _ in 0..repeat {
                fields.push(((*at, *at + w), kind));
                *at += w;
            }
        }
    }
    Some(())
}

/// The comma-separated items of a format body, parenthesised groups kept whole.
fn split_items(body: &str) -> Option<Vec<&str>> {
    let (mut items, mut depth, mut start) = (Vec::new(), 0i32, 0);
    for (i, c) in body.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&body[start..i]);
                start = i + 1;
            }
            '/' | '\'' | '"' => return None,
            _ => {}
        }
        if depth < 0 {
            return None;
        }
    }
    items.push(&body[start..]);
    (depth == 0).then_some(items)
}

/// The body of the first line holding a format statement: `(I4,2X,F6.1)`, optionally
/// after `FORMAT` or a label (`format: (…)`).
fn statement_line(text: &str) -> Option<(usize, Vec<Field>)> {
    text.lines().enumerate().find_map(|(i, l)| {
        let open = l.find('(')?;
        let close = l.rfind(')')?;
        let before = l[..open].trim().trim_end_matches([':', '=']).trim();
        let words_before = before.split_whitespace().count();
        if close <= open || words_before > 3 || !l[close + 1..].trim().is_empty() {
            return None;
        }
        fortran_statement(&l[open + 1..close]).map(|f| (i, f))
    })
}

/// Whether a token can be a field's name in a list of names.
fn name_token(t: &str) -> bool {
    let mut cs = t.chars();
    cs.next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && cs.all(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | '-'))
        && !t.ends_with(['.', '-'])
        && t.chars().count() <= 40
}

/// A Fortran format statement and the names of its fields: another listing of the same
/// count in the text (`1  year  …`), or a line of exactly that many names beside it.
pub(super) fn statement_listing(text: &str, others: Option<Listing>) -> Option<Listing> {
    let (at, fields) = statement_line(text)?;
    let n = fields.len();
    // Names from a listing of the usual layouts keep its standing; a bare line of
    // names links by content only.
    let (columns, count_ok) = match others.filter(|l| l.columns.len() == n) {
        Some(l) => (l.columns, l.count_ok),
        None => (
            text.lines()
                .enumerate()
                // Names stand next to their statement, a blank line apart at most.
                .filter(|(i, _)| *i != at && i.abs_diff(at) <= 2)
                .find_map(|(_, l)| {
                    let l = l.split_once(':').map_or(l, |(k, v)| {
                        if k.split_whitespace().count() <= 2 {
                            v
                        } else {
                            l
                        }
                    });
                    let names: Vec<&str> = l
                        .split(|c: char| c.is_whitespace() || c == ',')
                        .filter(|t| !t.is_empty())
                        .collect();
                    (names.len() == n && names.iter().all(|t| name_token(t))).then(|| {
                        names
                            .iter()
                            .map(|t| DocColumn {
                                name: t.to_string(),
                                unit: None,
                                description: None,
                            })
                            .collect()
                    })
                })?,
            false,
        ),
    };
    Some(Listing {
        columns,
        spans: Some(fields.iter().map(|f| f.0).collect()),
        numeric: fields.iter().map(|f| Some(numeric_kind(f.1))).collect(),
        count_ok,
    })
}

/// A number token of a ranged line: an integer, or a range `a-b` (two numbers).
pub(super) fn numbers(tok: &str) -> Option<Vec<u64>> {
    let t = tok.trim_end_matches([':', '.', ',', ')']);
    let t = t.trim_start_matches(['@', '(']);
    if let Some((a, b)) = t.split_once(['-', '–']) {
        let (a, b) = (a.parse().ok()?, b.parse().ok()?);
        return (a <= b).then(|| vec![a, b]);
    }
    let n: u64 = t.parse().ok()?;
    (n <= 100_000).then(|| vec![n])
}

/// One line of a ranged listing: its numbers (in order, a range giving two) and where
/// they stand, its name and the words after.
#[derive(Debug)]
pub(super) struct Ranged {
    nums: Vec<u64>,
    /// The numbers come before the name (`1-4 year`), not after it (`year 1-4`).
    lead: bool,
    /// A range token (`1-4`) gave the first two numbers.
    range: bool,
    column: DocColumn,
}

/// A line `[numbers] name [numbers] [description]`, numbers on one side only.
pub(super) fn ranged(line: &str) -> Option<Ranged> {
    let toks: Vec<&str> = line.split_whitespace().collect();
    let lead = toks.iter().take_while(|t| numbers(t).is_some()).count();
    let name = toks.get(lead)?;
    // `$` marks a text field in SAS layouts.
    let name = name.trim_end_matches(['$', ':']);
    if !name_token(name) || !usable_name(name) {
        return None;
    }
    let mut after = lead + 1;
    if toks.get(after) == Some(&"$") {
        after += 1;
    }
    let trail = toks[after..]
        .iter()
        .take_while(|t| numbers(t).is_some())
        .count();
    // Numbers on both sides only as `1  year  4` (the field's number, then the rest).
    if (lead > 1 && trail > 0) || lead + trail == 0 || lead + trail > 3 {
        return None;
    }
    let num_toks: Vec<&str> = toks[..lead]
        .iter()
        .chain(&toks[after..after + trail])
        .copied()
        .collect();
    let rest = &toks[after + trail..];
    let range = num_toks.iter().any(|t| t.contains(['-', '–']));
    let nums: Vec<u64> = num_toks
        .iter()
        .filter_map(|t| numbers(t))
        .flatten()
        .collect();
    // A lone number before the name is a list's numbering, not a position.
    if lead == 1 && trail == 0 && !range {
        return None;
    }
    let lead_side = lead > 0;
    let (desc, unit) = super::split_unit(&rest.join(" "));
    Some(Ranged {
        nums,
        lead: lead_side,
        range,
        column: DocColumn {
            name: name.to_string(),
            unit,
            description: non_empty(&desc),
        },
    })
}

/// What each number of a ranged line is.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Role {
    /// The field's number, 1, 2, 3….
    No,
    /// First character, counted from 1.
    Start,
    /// Last character, included.
    End,
    Width,
}

/// Readings of a line's numbers by their count, most usual first.
fn schemes(n: usize, range: bool) -> &'static [&'static [Role]] {
    use Role::*;
    match (n, range) {
        (1, _) => &[&[Width]],
        (2, true) => &[&[Start, End]],
        (2, false) => &[&[Start, End], &[No, Width], &[Start, Width], &[No, Start]],
        (3, true) => &[&[No, Start, End], &[Start, End, Width]],
        (3, false) => &[&[No, Start, End], &[Start, End, Width], &[No, Start, Width]],
        _ => &[],
    }
}

/// The spans of ranged lines read with one scheme, if they make a layout: fields in
/// order without overlap, numbers counting 1, 2, 3…, stated widths agreeing.
fn spans_by(lines: &[Ranged], roles: &[Role]) -> Option<Vec<(usize, usize)>> {
    let mut spans = Vec::with_capacity(lines.len());
    let mut next = 0u64; // where a field given only by its width starts
    for (i, l) in lines.iter().enumerate() {
        let get = |r: Role| roles.iter().position(|x| *x == r).map(|p| l.nums[p]);
        if get(Role::No).is_some_and(|n| n != i as u64 + 1) {
            return None;
        }
        let (start, end) = match (get(Role::Start), get(Role::End), get(Role::Width)) {
            (Some(s), Some(e), w) => {
                if s == 0 || e < s || w.is_some_and(|w| w != e - s + 1) {
                    return None;
                }
                (s - 1, e)
            }
            (Some(s), None, Some(w)) if s > 0 => (s - 1, s - 1 + w),
            (None, None, Some(w)) => (next, next + w),
            _ => return None,
        };
        if end - start == 0 || end - start > MAX_FIELD_WIDTH {
            return None;
        }
        next = end;
        spans.push((start as usize, end as usize));
    }
    let mut sorted = spans.clone();
    sorted.sort_unstable();
    sorted.windows(2).all(|w| w[0].1 <= w[1].0).then_some(spans)
}

/// A listing of ranged lines: the lines of the most common shape (count of numbers,
/// side), read by the first scheme that makes a layout; the fields in column order.
pub(super) fn ranged_listing(text: &str) -> Option<Listing> {
    let lines: Vec<(usize, Ranged)> = text
        .lines()
        .enumerate()
        .filter_map(|(i, l)| Some((i, ranged(l)?)))
        .collect();
    let mut shapes: Vec<((usize, bool, bool), usize)> = Vec::new();
    for (_, l) in &lines {
        let k = (l.nums.len(), l.lead, l.range);
        match shapes.iter_mut().find(|(s, _)| *s == k) {
            Some((_, n)) => *n += 1,
            None => shapes.push((k, 1)),
        }
    }
    let ((n, lead, range), count) = shapes.into_iter().max_by_key(|&(_, c)| c)?;
    if count < MIN_FIELDS {
        return None;
    }
    // The fields of a layout are listed together: the longest run of such lines at
    // most two lines apart (numbers scattered through prose are no listing).
    let mut runs: Vec<Vec<Ranged>> = Vec::new();
    let mut last = usize::MAX;
    for (at, l) in lines {
        if (l.nums.len(), l.lead, l.range) != (n, lead, range) {
            continue;
        }
        match runs.last_mut() {
            Some(run) if at <= last + 3 => run.push(l),
            _ => runs.push(vec![l]),
        }
        last = at;
    }
    let chosen = runs.into_iter().max_by_key(Vec::len)?;
    if chosen.len() < MIN_RANGED_FIELDS {
        return None;
    }
    let spans = schemes(n, range)
        .iter()
        .find_map(|roles| spans_by(&chosen, roles))?;
    let mut fields: Vec<((usize, usize), DocColumn)> = spans
        .into_iter()
        .zip(chosen.into_iter().map(|l| l.column))
        .collect();
    fields.sort_by_key(|f| f.0);
    let numeric = vec![None; fields.len()];
    let (spans, columns) = fields.into_iter().unzip();
    Some(Listing {
        columns,
        spans: Some(spans),
        numeric,
        count_ok: false,
    })
}

/// A SAS `input` statement: `input year 1-4 month 6-7 name $ 9-20;` — the statement's
/// tokens, from `input` to `;`, read as one ranged line per field.
pub(super) fn sas_input(text: &str) -> Option<Listing> {
    let lower = text.to_ascii_lowercase();
    let at = lower
        .match_indices("input")
        .find(|(i, _)| {
            lower[..*i]
                .chars()
                .next_back()
                .is_none_or(|c| c.is_whitespace() || c == ';')
                && lower[i + 5..].starts_with(|c: char| c.is_whitespace())
        })?
        .0;
    let body = &text[at + 5..];
    let body = &body[..body.find(';')?];
    let toks: Vec<&str> = body.split_whitespace().collect();
    let mut lines = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let mut j = i + 1;
        while j < toks.len() && (toks[j] == "$" || numbers(toks[j]).is_some()) {
            j += 1;
        }
        lines.push(toks[i..j].join(" "));
        i = j;
    }
    ranged_listing(&lines.join("\n"))
}
