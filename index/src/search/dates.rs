//! The dates a question asks about, to the day: `May 3rd-6th 2012`, `the 3rd–6th of May
//! 2012`, `Aug 9–11, 2016`, `2012-05-03`, `May 2012`, `Q4 2014`, `2002–2023`. Each date
//! or range is kept as its own interval, so that "May 2012 versus August 2016" asks for
//! two months, not the four years between them.
//!
//! Questions are read word by word rather than like a file name (see
//! [`time::from_path`](crate::analyze::time::from_path)): a question writes ordinals,
//! ranges within a month and filler words ("the 3rd of May"), and it holds numbers that
//! are not dates ("top 10", "3 columns"). A day counts only with a month and a year,
//! from its own phrase or from the other end of its range.

use crate::analyze::dates::{month_number, Day};

/// Years a four-digit number in a question is read as.
const YEARS: std::ops::RangeInclusive<u32> = 1800..=2100;

/// One interval a question asks about, both ends included.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Asked {
    /// First day asked.
    pub start: Day,
    /// Last day asked.
    pub end: Day,
}

/// The intervals a question asks about, in the order written, without repeats.
pub fn asked(question: &str) -> Vec<Asked> {
    let toks = tokens(question);
    let mut out: Vec<Asked> = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let Some((first, after)) = part(&toks, i) else {
            i += 1;
            continue;
        };
        let between = i > 0 && toks[i - 1] == Tok::Word("between".into());
        let ranged = connector(&toks, after, between).and_then(|next| {
            let (last, end) = part(&toks, next)?;
            Some((range(first, last)?, end))
        });
        let found = match ranged {
            Some(found) => Some(found),
            // A phrase that names no whole date (a bare "3") is no date; its words are
            // read again from the next one, which may start a date of its own.
            None => first.interval().map(|a| (a, after)),
        };
        match found {
            Some((a, end)) => {
                if !out.contains(&a) {
                    out.push(a);
                }
                i = end;
            }
            None => i += 1,
        }
    }
    out
}

/// A word of a question as dates are read.
#[derive(Debug, Clone, PartialEq)]
enum Tok {
    /// A whole day written as one word: `2012-05-03`, `2012/05/03`, `20120503`.
    Day(Day),
    /// A month written as one word: `2012-05`.
    Month(u32, u32),
    /// Digits, with whether an ordinal suffix followed (`3rd`).
    Num {
        n: u32,
        digits: usize,
        ordinal: bool,
    },
    /// A month name or abbreviation.
    Mon(u32),
    /// `Q1`…`Q4`.
    Quarter(u32),
    /// `-`, `–`, `—` between two words.
    Dash,
    Comma,
    /// Any other word, lowercased; punctuation that ends a phrase is `Word("")`.
    Word(String),
}

/// The question's words: split at white space, commas and dashes (a dash and a comma
/// are words of their own), except that one-word dates keep theirs.
fn tokens(question: &str) -> Vec<Tok> {
    let mut out = Vec::new();
    // `_` joins words in identifiers (`readings_20120503`); it is no part of a date.
    for chunk in question.split(|c: char| c.is_whitespace() || c == '_') {
        let chunk = chunk.trim_matches(|c: char| "()[]{}\"'“”‘’?!;:".contains(c));
        let (chunk, comma) = match chunk.strip_suffix(',') {
            Some(c) => (c, true),
            None => (chunk, false),
        };
        if let Some(t) = one_word_date(chunk.trim_end_matches('.')) {
            out.push(t);
        } else if chunk.matches(['-', '/']).count() >= 2
            && chunk
                .bytes()
                .all(|b| b.is_ascii_digit() || b == b'-' || b == b'/')
        {
            // Shaped like a date but none (`2019-13-45`, a phone number): no numbers.
            out.push(Tok::Word(chunk.to_owned()));
        } else {
            for (k, piece) in chunk.split(['-', '\u{2013}', '\u{2014}']).enumerate() {
                if k > 0 {
                    out.push(Tok::Dash);
                }
                for (j, p) in piece.split(',').enumerate() {
                    if j > 0 {
                        out.push(Tok::Comma);
                    }
                    if !p.is_empty() {
                        out.push(word(p));
                    }
                }
            }
        }
        if comma {
            out.push(Tok::Comma);
        }
    }
    out
}

/// One word that is not a one-word date.
fn word(w: &str) -> Tok {
    let digits = w.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 {
        let rest = w[digits..].trim_end_matches('.').to_ascii_lowercase();
        let ordinal = matches!(rest.as_str(), "st" | "nd" | "rd" | "th");
        if rest.is_empty() || ordinal {
            if let Ok(n) = w[..digits].parse() {
                return Tok::Num { n, digits, ordinal };
            }
        }
        return Tok::Word(w.to_lowercase());
    }
    let lower = w.to_lowercase();
    if let Some(q) = lower
        .strip_prefix('q')
        .and_then(|n| n.parse().ok())
        .filter(|n| (1..=4).contains(n))
    {
        return Tok::Quarter(q);
    }
    if let Some(m) = month_number(&lower) {
        return Tok::Mon(m);
    }
    // A word ending a sentence ends any phrase before it ("in 2019. May 3 ...").
    if lower.ends_with('.') {
        return Tok::Word(String::new());
    }
    Tok::Word(lower)
}

/// `2012-05-03`, `2012/05/03`, `20120503` or `2012-05`.
fn one_word_date(w: &str) -> Option<Tok> {
    let num = |s: &str, len: std::ops::RangeInclusive<usize>| {
        (len.contains(&s.len()) && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse::<u32>().ok())
            .flatten()
    };
    let year = |s: &str| num(s, 4..=4).filter(|y| YEARS.contains(y));
    if w.len() == 8 && w.bytes().all(|b| b.is_ascii_digit()) {
        let y = year(&w[..4])?;
        return Day::new(y, num(&w[4..6], 2..=2)?, num(&w[6..], 2..=2)?).map(Tok::Day);
    }
    let sep = if w.contains('/') { '/' } else { '-' };
    let parts: Vec<&str> = w.split(sep).collect();
    match parts[..] {
        [y, m, d] => Day::new(year(y)?, num(m, 1..=2)?, num(d, 1..=2)?).map(Tok::Day),
        [y, m] if m.len() == 2 => {
            let (y, m) = (year(y)?, num(m, 2..=2)?);
            (1..=12).contains(&m).then_some(Tok::Month(y, m))
        }
        _ => None,
    }
}

/// What one date phrase gives: a year, a month (or `months` of them from `m`) and a day,
/// each perhaps missing until its range supplies it.
#[derive(Debug, Clone, Copy, Default)]
struct Part {
    y: Option<u32>,
    m: Option<u32>,
    d: Option<u32>,
    /// Months the phrase spans from `m`: 3 for a quarter.
    months: u32,
}

impl Part {
    fn start(&self) -> Option<Day> {
        Day::new(self.y?, self.m.unwrap_or(1), self.d.unwrap_or(1))
    }

    fn end(&self) -> Option<Day> {
        let y = self.y?;
        match (self.m, self.d) {
            (Some(m), Some(d)) => Day::new(y, m, d),
            (Some(m), None) => Day::month_end(y, m + self.months.max(1) - 1),
            (None, _) => Day::new(y, 12, 31),
        }
    }

    /// The interval of a phrase standing alone: it needs its year, and a day its month.
    fn interval(&self) -> Option<Asked> {
        if self.d.is_some() && self.m.is_none() {
            return None;
        }
        Some(Asked {
            start: self.start()?,
            end: self.end()?,
        })
    }
}

/// The range from `a` to `b`, each end completed from the other: `3–6 May 2012` takes
/// May and 2012 from its end, `May 3rd-6th 2012` May from its start, `Dec 30 – Jan 2
/// 2013` starts in 2012.
fn range(mut a: Part, mut b: Part) -> Option<Asked> {
    if a.d.is_some() && a.m.is_none() {
        a.m = b.m;
    }
    if b.d.is_some() && b.m.is_none() {
        b.m = a.m;
    }
    let order = |p: &Part| (p.m.unwrap_or(0), p.d.unwrap_or(0));
    match (a.y, b.y) {
        (None, Some(y)) => a.y = Some(if order(&a) > order(&b) { y - 1 } else { y }),
        (Some(y), None) => b.y = Some(if order(&b) < order(&a) { y + 1 } else { y }),
        _ => {}
    }
    let (a, b) = (a.interval()?, b.interval()?);
    (a.start <= b.end).then_some(Asked {
        start: a.start,
        end: b.end,
    })
}

/// Where the second end of a range starts, when a range connector stands at `i`: a
/// dash, `to`, `through`, `until`, or `and` after `between`.
fn connector(toks: &[Tok], i: usize, between: bool) -> Option<usize> {
    match toks.get(i)? {
        Tok::Dash => Some(i + 1),
        Tok::Word(w) if matches!(w.as_str(), "to" | "through" | "thru" | "until" | "till") => {
            Some(i + 1)
        }
        Tok::Word(w) if between && w == "and" => Some(i + 1),
        _ => None,
    }
}

/// The date phrase starting at `i` and where it ends: `[the] 3rd [of] May[,] 2012`,
/// `May [the] 3rd[,] 2012`, `May[,] 2012`, `2012 May 3`, `Q4 2014`, `2014 Q4`, a year,
/// a one-word date, and — only to be completed by a range — `3rd`, `6th 2012` or
/// `May 3rd`.
fn part(toks: &[Tok], mut i: usize) -> Option<(Part, usize)> {
    // Past an optional word at `i`.
    let past = |i: usize, t: &Tok| if toks.get(i) == Some(t) { i + 1 } else { i };
    let the = Tok::Word("the".into());
    i = past(i, &the);
    let day = |i: usize| match toks.get(i) {
        Some(&Tok::Num { n, digits, .. }) if digits <= 2 && (1..=31).contains(&n) => Some(n),
        _ => None,
    };
    let year = |i: usize| match toks.get(i) {
        Some(&Tok::Num {
            n,
            digits: 4,
            ordinal: false,
        }) if YEARS.contains(&n) => Some(n),
        _ => None,
    };
    let month = |i: usize| match toks.get(i) {
        Some(&Tok::Mon(m)) => Some(m),
        _ => None,
    };
    // A year after an optional comma: `May 3rd, 2012`.
    let year_after = |i: usize| {
        let j = past(i, &Tok::Comma);
        year(j).map(|y| (y, j + 1))
    };
    match toks.get(i)? {
        &Tok::Day(d) => Some((
            Part {
                y: Some(u32::from(d.y)),
                m: Some(u32::from(d.m)),
                d: Some(u32::from(d.d)),
                ..Part::default()
            },
            i + 1,
        )),
        &Tok::Month(y, m) => Some((
            Part {
                y: Some(y),
                m: Some(m),
                ..Part::default()
            },
            i + 1,
        )),
        &Tok::Quarter(q) => {
            let j = past(i + 1, &Tok::Dash);
            let y = year(j);
            let quarter = Part {
                y,
                m: Some(3 * q - 2),
                months: 3,
                ..Part::default()
            };
            Some((quarter, if y.is_some() { j + 1 } else { i + 1 }))
        }
        &Tok::Mon(m) => {
            let j = past(i + 1, &the);
            if let Some(d) = day(j) {
                let p = Part {
                    m: Some(m),
                    d: Some(d),
                    ..Part::default()
                };
                return Some(match year_after(j + 1) {
                    Some((y, end)) => (Part { y: Some(y), ..p }, end),
                    None => (p, j + 1),
                });
            }
            let (y, end) = year_after(i + 1)?;
            Some((
                Part {
                    y: Some(y),
                    m: Some(m),
                    ..Part::default()
                },
                end,
            ))
        }
        Tok::Num { .. } => {
            if let Some(y) = year(i) {
                let p = Part {
                    y: Some(y),
                    ..Part::default()
                };
                if let (Some(m), Some(d)) = (month(i + 1), day(i + 2)) {
                    return Some((
                        Part {
                            m: Some(m),
                            d: Some(d),
                            ..p
                        },
                        i + 3,
                    ));
                }
                let j = past(i + 1, &Tok::Dash);
                if let Some(&Tok::Quarter(q)) = toks.get(j) {
                    let quarter = Part {
                        m: Some(3 * q - 2),
                        months: 3,
                        ..p
                    };
                    return Some((quarter, j + 1));
                }
                return Some((p, i + 1));
            }
            let d = day(i)?;
            let j = past(i + 1, &Tok::Word("of".into()));
            let p = Part {
                d: Some(d),
                ..Part::default()
            };
            let (p, j) = match month(j) {
                Some(m) => (Part { m: Some(m), ..p }, j + 1),
                None => (p, i + 1),
            };
            Some(match year_after(j) {
                Some((y, end)) => (Part { y: Some(y), ..p }, end),
                None => (p, j),
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests;
