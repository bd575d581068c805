//! Time written in other forms than calendar dates, read as time (the `time-forms`
//! reading rule): months as `YYYYMM` integers, days as `YYYYMMDD` or `YYYYDDD` integers,
//! `YYYY-MM` and `YYYY-DDD` text, quarters (`2001Q1`, `2001-Q1`, `Q1 2001`), date-times
//! with a time-scale suffix or odd separators (`2014.03.23_20:24:00_TAI`), fractional
//! years (`1987.042`), years with a marker (`2019r`, `1999*`, `FY2020`, `2020/21`), and a
//! year column beside a day-of-year, a month or a quarter column.
//!
//! The profiler reads one column at a time from its cells (`profile::timecells`, with the
//! recognizers here); [`read_tables`] reads the pairs of columns, states every reading in
//! its table's notes and counts it.

use super::super::dates::Day;
use super::super::rules::{self, Applied, ReadingRule};
use super::super::{ColumnProfile, ColumnType, Content};

/// Years a value may stand for.
pub(crate) const YEARS: std::ops::RangeInclusive<u32> = 1800..=2100;

fn all_digits(v: &str) -> bool {
    !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit())
}

fn number(v: &str) -> Option<u32> {
    all_digits(v).then(|| v.parse().ok()).flatten()
}

/// A four-digit year in [`YEARS`].
pub(crate) fn year4(v: &str) -> Option<u32> {
    (v.len() == 4)
        .then(|| number(v))
        .flatten()
        .filter(|y| YEARS.contains(y))
}

/// `200001`: six digits, a year and a month 1–12 (January 2000).
pub(crate) fn year_month(v: &str) -> Option<(u32, u32)> {
    if v.len() != 6 {
        return None;
    }
    let (y, m) = (year4(&v[..4])?, number(&v[4..])?);
    (1..=12).contains(&m).then_some((y, m))
}

/// `2001032`: seven digits, a year and a day of the year (1 February 2001).
pub(crate) fn year_ordinal(v: &str) -> Option<Day> {
    if v.len() != 7 || !all_digits(v) {
        return None;
    }
    ordinal(year4(&v[..4])?, number(&v[4..])?)
}

/// `20010201`: eight digits, a year, a month and a day.
pub(crate) fn year_month_day(v: &str) -> Option<Day> {
    if v.len() != 8 || !all_digits(v) {
        return None;
    }
    Day::new(year4(&v[..4])?, number(&v[4..6])?, number(&v[6..])?)
}

/// `Q1`..`Q4` (any case): a quarter's number.
pub(crate) fn lone_quarter(v: &str) -> Option<u32> {
    match v.as_bytes() {
        [b'Q' | b'q', d @ b'1'..=b'4'] => Some(u32::from(d - b'0')),
        _ => None,
    }
}

/// How a column writes quarters: the year first (`2001Q1`, `2001-Q1`, `2001 q1`) or the
/// quarter first (`Q1 2001`, `Q1-2001`), with the separator (0 for none) and the case of
/// the `Q`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct QuarterForm {
    pub year_first: bool,
    pub sep: u8,
    pub lower: bool,
}

impl QuarterForm {
    /// How the form is written, strftime-like (`%q` standing for the quarter's number).
    pub(crate) fn pattern(self) -> String {
        let q = if self.lower { "q%q" } else { "Q%q" };
        let sep = if self.sep == 0 {
            String::new()
        } else {
            (self.sep as char).to_string()
        };
        if self.year_first {
            format!("%Y{sep}{q}")
        } else {
            format!("{q}{sep}%Y")
        }
    }
}

/// A year and a quarter written in one cell (`2001Q1`, `2001-Q1`, `2001 Q1`, `2001q1`,
/// `Q1 2001`, `Q1-2001`), and how.
pub(crate) fn quarter(v: &str) -> Option<(u32, u32, QuarterForm)> {
    let b = v.as_bytes();
    // Six or seven bytes, a digit or a `Q` first: most cells stop here.
    if !(6..=7).contains(&b.len()) {
        return None;
    }
    let sep_of = |s: &[u8]| match s {
        [] => Some(0),
        [c @ (b'-' | b' ')] => Some(*c),
        _ => None,
    };
    match b[0] {
        b'0'..=b'9' => {
            let y = year4(v.get(..4)?)?;
            let q = lone_quarter(v.get(b.len() - 2..)?)?;
            let sep = sep_of(&b[4..b.len() - 2])?;
            let lower = b[b.len() - 2] == b'q';
            Some((
                y,
                q,
                QuarterForm {
                    year_first: true,
                    sep,
                    lower,
                },
            ))
        }
        b'Q' | b'q' => {
            let q = lone_quarter(v.get(..2)?)?;
            let y = year4(v.get(b.len() - 4..)?)?;
            let sep = sep_of(&b[2..b.len() - 4])?;
            let lower = b[0] == b'q';
            Some((
                y,
                q,
                QuarterForm {
                    year_first: false,
                    sep,
                    lower,
                },
            ))
        }
        _ => None,
    }
}

/// The pandas converter of a column whose values no `parse_dates` format reads:
/// quarters (`2001Q1`, `Q1 2001`, as `pd.Period` reads `2001Q1`: their first day) and
/// date-times with a suffix (stripped, then read with their format). An empty or null
/// cell is NaT.
pub(crate) fn converter(c: &ColumnProfile) -> Option<String> {
    let f = c.date_format.as_deref()?;
    match c.kind {
        ColumnType::Date if f.contains("%q") => {
            let (y, q) = if f.starts_with("%Y") {
                ("v[:4]", "v[-1]")
            } else {
                ("v[-4:]", "v[1]")
            };
            Some(format!(
                "lambda v: pd.Period({y} + \"Q\" + {q}, freq=\"Q\").to_timestamp() if v[-1:].isdigit() else pd.NaT"
            ))
        }
        ColumnType::Datetime if c.time_span.is_some() => {
            // The suffix is what follows the last directive.
            let end = f.rfind('%').map_or(f.len(), |i| i + 2).min(f.len());
            let (format, suffix) = f.split_at(end);
            let py = |s: &str| serde_json::to_string(s).unwrap_or_default();
            let value = if suffix.is_empty() {
                "v".to_string()
            } else {
                format!("v.removesuffix({})", py(suffix))
            };
            Some(format!(
                "lambda v: pd.to_datetime({value}, format={}, errors=\"coerce\")",
                py(format)
            ))
        }
        _ => None,
    }
}

/// How a column writes date-times that no date shape reads: a time-scale or zone
/// suffix (`2014/03/23 20:24:00 UTC`, `2014.03.23_20:24:00_TAI`), an underscore between
/// date and time, or dots between year, month and day (`2014.03.23`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StampForm {
    /// Between year, month and day: `-`, `/` or `.`.
    pub date_sep: u8,
    /// Between the date and the time (`T`, ` `, `_`); 0 for a date alone.
    pub time_sep: u8,
    /// Seconds are written, and a fraction of them.
    pub seconds: bool,
    pub fraction: bool,
    /// What follows the time, its separator included (`_TAI`, ` UTC`, `Z`): at most
    /// [`SUFFIX_MAX`] bytes, `suffix_len` of them used.
    suffix: [u8; SUFFIX_MAX],
    suffix_len: u8,
}

/// Longest suffix after a time: a separator and five letters.
const SUFFIX_MAX: usize = 6;

impl StampForm {
    /// The suffix as written.
    pub(crate) fn suffix(&self) -> &str {
        std::str::from_utf8(&self.suffix[..self.suffix_len as usize]).unwrap_or_default()
    }

    /// How the form is written, strftime-like, the suffix as a literal.
    pub(crate) fn pattern(&self) -> String {
        let d = self.date_sep as char;
        let mut p = format!("%Y{d}%m{d}%d");
        if self.time_sep != 0 {
            p.push(self.time_sep as char);
            p.push_str("%H:%M");
            if self.seconds {
                p.push_str(":%S");
            }
            if self.fraction {
                p.push_str(".%f");
            }
            p.push_str(self.suffix());
        }
        p
    }
}

/// Two ASCII digits' value.
fn two(b: &[u8]) -> Option<u32> {
    match b {
        [a @ b'0'..=b'9', c @ b'0'..=b'9'] => Some(u32::from(a - b'0') * 10 + u32::from(c - b'0')),
        _ => None,
    }
}

/// A date-time or date written `YYYY?MM?DD` (`?` one of `-`, `/`, `.`), then maybe a
/// time `HH:MM[:SS[.f]]` after `T`, a space or `_`, then maybe a suffix of one to five
/// letters (`Z`, `UTC`, `_TAI`, ` GPS`): its day and form. `1.2.3` and `10.0.0.1` are
/// not: the year comes first, whole.
pub(crate) fn stamp(v: &str) -> Option<(Day, StampForm)> {
    let b = v.as_bytes();
    // A year's digit first and the same separator after the year and the month: most
    // cells stop at these bytes.
    if b.len() < 10 || b.len() > 40 || !b[0].is_ascii_digit() {
        return None;
    }
    let date_sep = b[4];
    if !matches!(date_sep, b'-' | b'/' | b'.') || b[7] != date_sep {
        return None;
    }
    let day = Day::new(year4(v.get(..4)?)?, two(&b[5..7])?, two(&b[8..10])?)?;
    let mut f = StampForm {
        date_sep,
        time_sep: 0,
        seconds: false,
        fraction: false,
        suffix: [0; SUFFIX_MAX],
        suffix_len: 0,
    };
    let rest = &b[10..];
    let Some((&time_sep, t)) = rest.split_first() else {
        return Some((day, f));
    };
    if !matches!(time_sep, b'T' | b' ' | b'_') || t.len() < 5 || t[2] != b':' {
        return None;
    }
    f.time_sep = time_sep;
    if two(&t[..2])? > 23 || two(&t[3..5])? > 59 {
        return None;
    }
    let mut t = &t[5..];
    if let [b':', s @ ..] = t {
        if two(s.get(..2)?)? > 60 {
            return None;
        }
        f.seconds = true;
        t = &s[2..];
        if let [b'.', frac @ ..] = t {
            let n = frac.iter().take_while(|c| c.is_ascii_digit()).count();
            if n == 0 {
                return None;
            }
            f.fraction = true;
            t = &frac[n..];
        }
    }
    // The suffix: letters, after a space or `_` or none.
    let letters = match t {
        [b' ' | b'_', l @ ..] => l,
        l => l,
    };
    if t.len() > SUFFIX_MAX
        || (!t.is_empty() && (letters.is_empty() || !letters.iter().all(u8::is_ascii_alphabetic)))
    {
        return None;
    }
    f.suffix[..t.len()].copy_from_slice(t);
    f.suffix_len = t.len() as u8;
    Some((day, f))
}

/// The first and last day of quarter `q` of year `y`.
pub(crate) fn quarter_days(y: u32, q: u32) -> Option<(Day, Day)> {
    Some((Day::new(y, q * 3 - 2, 1)?, Day::month_end(y, q * 3)?))
}

/// Day `doy` (1-based) of year `y`.
pub(crate) fn ordinal(y: u32, doy: u32) -> Option<Day> {
    let d = chrono::NaiveDate::from_yo_opt(i32::try_from(y).ok()?, doy)?;
    use chrono::Datelike;
    Day::new(y, d.month(), d.day())
}

/// Days in year `y`.
fn year_days(y: u32) -> u32 {
    if ordinal(y, 366).is_some() {
        366
    } else {
        365
    }
}

/// The day a fractional year stands for: `1987.042` is 4.2% into 1987, 16 January.
pub(crate) fn fractional_year(x: f64) -> Option<Day> {
    if !x.is_finite() || x < *YEARS.start() as f64 || x >= (*YEARS.end() + 1) as f64 {
        return None;
    }
    let y = x.floor() as u32;
    let doy = ((x - x.floor()) * year_days(y) as f64).floor() as u32 + 1;
    ordinal(y, doy.min(year_days(y)))
}

/// How a column writes years when it writes more than their digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum YearForm {
    /// `2019r`, `2020 (p)`, `1999*`: a year with a revision, provisional or footnote mark.
    Marked,
    /// `FY2020`: a fiscal year by its name.
    Fiscal,
    /// `2020/21`, `2020-21`, `2020/2021`: a fiscal year or season over two years, with its
    /// separator and whether the second year is written whole.
    Span(char, bool),
}

impl YearForm {
    /// How the form is written, strftime-like (`%y` standing for the next year).
    pub(crate) fn pattern(self) -> String {
        match self {
            YearForm::Marked => "%Y".into(),
            YearForm::Fiscal => "FY%Y".into(),
            YearForm::Span(sep, true) => format!("%Y{sep}%Y"),
            YearForm::Span(sep, false) => format!("%Y{sep}%y"),
        }
    }
}

/// A text cell that writes time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TextTime {
    /// `2001-02`: February 2001 — or the span 2001–2002 (`span`), as `2001-02` also
    /// writes a fiscal year; the column decides.
    Month { y: u32, m: u32, span: bool },
    /// `2001-032`: a year and a day of the year.
    Ordinal(Day),
    /// `2001Q1`, `Q1 2001`: a year and a quarter.
    Quarter { y: u32, q: u32, form: QuarterForm },
    /// A year written with more than its digits: the first and last year it names.
    Year {
        first: u32,
        last: u32,
        form: YearForm,
    },
}

/// A marker after a year: a few letters or footnote signs, maybe in brackets (`r`,
/// `(p)`, `*`, `est.`), never a month name or anything with a digit.
fn marker(rest: &str) -> bool {
    let m = rest.trim();
    let m = m
        .strip_prefix('(')
        .and_then(|m| m.strip_suffix(')'))
        .or_else(|| m.strip_prefix('[').and_then(|m| m.strip_suffix(']')))
        .unwrap_or(m)
        .trim();
    let n = m.chars().count();
    (1..=4).contains(&n)
        && m.chars()
            .all(|c| c.is_alphabetic() || matches!(c, '*' | '†' | '‡' | '+' | '#' | '^' | '.'))
        && super::super::dates::month_number(m).is_none()
}

/// The year after `y` as written after a separator: `02` or `2002` after `2001`.
fn next_year(y: u32, w: &str) -> Option<bool> {
    match w.len() {
        2 => (number(w)? == (y + 1) % 100).then_some(false),
        4 => (number(w)? == y + 1).then_some(true),
        _ => None,
    }
}

/// Time written in a text cell (see [`TextTime`]); `None` for anything else, plain
/// numbers included.
pub(crate) fn text_time(v: &str) -> Option<TextTime> {
    let v = v.trim();
    // Every form starts with a year's digit, `FY` or a quarter's `Q`: most text is ruled
    // out at once.
    if !v
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_digit() || matches!(b, b'F' | b'f' | b'Q' | b'q'))
    {
        return None;
    }
    if let Some((y, q, form)) = quarter(v) {
        return Some(TextTime::Quarter { y, q, form });
    }
    if let Some(rest) = v
        .strip_prefix("FY")
        .or_else(|| v.strip_prefix("Fy"))
        .or_else(|| v.strip_prefix("fy"))
    {
        let rest = rest.strip_prefix([' ', '-']).unwrap_or(rest);
        return match text_time(rest) {
            Some(TextTime::Year { first, last, .. }) => Some(TextTime::Year {
                first,
                last,
                form: YearForm::Fiscal,
            }),
            Some(TextTime::Month { y, span: true, .. }) => Some(TextTime::Year {
                first: y,
                last: y + 1,
                form: YearForm::Fiscal,
            }),
            _ => year4(rest).map(|y| TextTime::Year {
                first: y,
                last: y,
                form: YearForm::Fiscal,
            }),
        };
    }
    let y = year4(v.get(..4)?)?;
    let rest = &v[4..];
    let sep = rest.chars().next()?;
    if matches!(sep, '-' | '/' | '–') {
        let after = &rest[sep.len_utf8()..];
        let span = next_year(y, after);
        if sep == '-' && after.len() == 2 {
            if let Some(m) = number(after).filter(|m| (1..=12).contains(m)) {
                return Some(TextTime::Month {
                    y,
                    m,
                    span: span.is_some(),
                });
            }
        }
        if sep == '-' && after.len() == 3 {
            return number(after)
                .and_then(|d| ordinal(y, d))
                .map(TextTime::Ordinal);
        }
        return span.map(|full| TextTime::Year {
            first: y,
            last: y + 1,
            form: YearForm::Span(sep, full),
        });
    }
    marker(rest).then_some(TextTime::Year {
        first: y,
        last: y,
        form: YearForm::Marked,
    })
}

/// A text cell that stands for a missing value in a column of years: no digit, a few
/// characters (`..`, `n.a.`, `x`, `—`).
pub(crate) fn missing_like(v: &str) -> bool {
    // Five characters are at most 20 bytes: a long text is no marker, uncounted.
    if v.len() > 20 {
        return false;
    }
    let n = v.chars().count();
    (1..=5).contains(&n) && !v.chars().any(|c| c.is_ascii_digit())
}

/// Lowercase words of a column name, camelCase split (`tranMonth` → `tran`, `month`).
fn words(name: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        cur.extend(c.to_lowercase());
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// A name that says the column is a key or a code, whatever its values look like.
pub(crate) fn names_a_key(name: &str) -> bool {
    words(name).iter().any(|w| {
        matches!(
            w.as_str(),
            "id" | "ids"
                | "uid"
                | "code"
                | "codes"
                | "no"
                | "nr"
                | "num"
                | "number"
                | "zip"
                | "zipcode"
                | "postcode"
                | "postal"
                | "key"
                | "phone"
                | "account"
                | "serial"
                | "sku"
                | "fips"
                | "geoid"
                | "ref"
                | "isbn"
        )
    })
}

/// A name that says the column holds time: a date, a period, a month, a year.
pub(crate) fn names_time(name: &str) -> bool {
    let n = name.to_lowercase();
    ["date", "time", "period", "month", "year", "yyyy", "epoch"]
        .iter()
        .any(|k| n.contains(k))
        || words(name).iter().any(|w| {
            matches!(
                w.as_str(),
                "day" | "yr" | "ym" | "ymd" | "mon" | "when" | "ts" | "dt" | "t" | "decyear"
            )
        })
}

/// A name that says the column is a day of the year.
pub(crate) fn names_day_of_year(name: &str) -> bool {
    let w = words(name);
    let n = w.concat();
    w.iter().any(|w| {
        matches!(
            w.as_str(),
            "doy" | "jday" | "julian" | "yday" | "dayofyear" | "ordinal" | "jd"
        )
    }) || n.contains("dayofyear")
        || n.contains("dayofyr")
}

/// A name made only of `unit` words and a few fillers (`Month`, `MM`, `Month of year`,
/// `day number`): `rain_mm` and `Day Mins` are not months or days.
fn names_only(name: &str, unit: &[&str]) -> bool {
    let w = words(name);
    w.iter().any(|w| unit.contains(&w.as_str()))
        && w.iter().all(|w| {
            unit.contains(&w.as_str())
                || matches!(w.as_str(), "of" | "the" | "no" | "num" | "number" | "year")
        })
}

/// A name that says the column is a month number.
fn names_month(name: &str) -> bool {
    names_only(name, &["month", "mon", "mo", "mm", "mth"])
}

/// A name that says the column is a quarter's number.
fn names_quarter(name: &str) -> bool {
    names_only(name, &["quarter", "quarters", "qtr", "q"])
}

/// A name that says the column is a day of the month.
fn names_day(name: &str) -> bool {
    names_only(name, &["day", "dd", "dom", "month"]) && !names_month(name)
}

/// A name that says the column is a year (`year`, `Yr`, `Fiscal Year`).
pub(crate) fn names_year(name: &str) -> bool {
    let n = name.to_lowercase();
    n.contains("year")
        || words(name)
            .iter()
            .any(|w| matches!(w.as_str(), "yr" | "yyyy"))
}

/// The order of a numeric column's values in the file, for reading a pair of columns
/// row by row when their table is sorted. Gathered while profiling, not stored.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct Order {
    /// First and last value, in file order.
    pub first: f64,
    pub last: f64,
    /// How often a value is above, and below, the one before it.
    pub up: u64,
    pub down: u64,
    /// The smallest and largest quarter of a column of `Q1`..`Q4` alone.
    pub quarters: Option<(u32, u32)>,
}

/// A whole number in a column's `min`/`max`.
fn whole(v: Option<&str>) -> Option<u32> {
    let x: f64 = v?.parse().ok()?;
    (x.fract() == 0.0 && x >= 0.0 && x <= u32::MAX as f64).then_some(x as u32)
}

/// What a column of whole numbers in `lo..=hi` under `name` holds, for pairing.
fn whole_column(c: &ColumnProfile) -> Option<(u32, u32)> {
    if !matches!(c.kind, ColumnType::Integer | ColumnType::Float) {
        return None;
    }
    Some((whole(c.min.as_deref())?, whole(c.max.as_deref())?))
}

/// Columns that name days together: a year column and the others.
struct Pair {
    year: usize,
    with: Vec<usize>,
    what: &'static str,
    span: (Day, Day),
}

/// The days a year column and a day-of-year, or month (and day), column name together:
/// from the first and last rows when the rows are in time order, else the bounds every
/// row lies within.
fn pair_span(cols: &[ColumnProfile]) -> Option<Pair> {
    let yi = cols.iter().position(|c| {
        names_year(&c.name)
            && whole_column(c).is_some_and(|(lo, hi)| YEARS.contains(&lo) && YEARS.contains(&hi))
    })?;
    let year = &cols[yi];
    let (ylo, yhi) = whole_column(year)?;
    let find = |names: fn(&str) -> bool, max: u32| {
        cols.iter().position(|c| {
            c.time_span.is_none()
                && names(&c.name)
                && whole_column(c).is_some_and(|(lo, hi)| lo >= 1 && hi <= max)
        })
    };
    let first_last = |c: &ColumnProfile| c.order.map(|o| (o.first as u32, o.last as u32));
    // Rows in time order, as far as the columns' own orders tell: the years never go
    // down, and a finer column goes down only when a coarser one goes up (a new year,
    // a new month).
    let ups = |c: &ColumnProfile| c.order.map_or(u64::MAX, |o| o.up);
    let downs = |c: &ColumnProfile| c.order.map_or(u64::MAX, |o| o.down);
    let sorted = |finer: &[usize]| {
        let mut coarser_ups = ups(year);
        downs(year) == 0
            && finer.iter().all(|&i| {
                let ok = downs(&cols[i]) <= coarser_ups;
                coarser_ups = coarser_ups.saturating_add(ups(&cols[i]));
                ok
            })
    };
    // A day of year, or a `day` column past 31 with no month beside it.
    let doy = find(names_day_of_year, 366).or_else(|| {
        find(names_day, 366)
            .filter(|&i| whole_column(&cols[i]).is_some_and(|(_, hi)| hi > 31))
            .filter(|_| find(names_month, 12).is_none())
    });
    if let Some(di) = doy {
        let (dlo, dhi) = whole_column(&cols[di])?;
        let rows = first_last(year)
            .zip(first_last(&cols[di]))
            .and_then(|(y, d)| {
                let (a, b) = (ordinal(y.0, d.0)?, ordinal(y.1, d.1)?);
                (sorted(&[di]) && a <= b).then_some((a, b))
            });
        let (a, b) = match rows {
            Some(r) => r,
            None => (ordinal(ylo, dlo)?, ordinal(yhi, dhi.min(year_days(yhi)))?),
        };
        return Some(Pair {
            year: yi,
            with: vec![di],
            what: "year, day of year",
            span: (a, b),
        });
    }
    // A quarter: `Q1`..`Q4` alone, or 1..4 under a header naming a quarter.
    let quarters = |c: &ColumnProfile| {
        c.order.and_then(|o| o.quarters).or_else(|| {
            names_quarter(&c.name)
                .then(|| whole_column(c))
                .flatten()
                .filter(|&(lo, hi)| lo >= 1 && hi <= 4)
        })
    };
    if let Some(qi) = cols
        .iter()
        .position(|c| c.time_span.is_none() && quarters(c).is_some())
    {
        let (qlo, qhi) = quarters(&cols[qi])?;
        let rows = first_last(year)
            .zip(first_last(&cols[qi]))
            .and_then(|(y, q)| {
                let (a, b) = (quarter_days(y.0, q.0)?.0, quarter_days(y.1, q.1)?.1);
                (sorted(&[qi]) && a <= b).then_some((a, b))
            });
        let (a, b) = match rows {
            Some(r) => r,
            None => (quarter_days(ylo, qlo)?.0, quarter_days(yhi, qhi)?.1),
        };
        return Some(Pair {
            year: yi,
            with: vec![qi],
            what: "year, quarter",
            span: (a, b),
        });
    }
    let mi = find(names_month, 12)?;
    let di = find(names_day, 31);
    let (mlo, mhi) = whole_column(&cols[mi])?;
    let days = di.and_then(|i| whole_column(&cols[i]));
    let day_of = |y: u32, m: u32, d: Option<u32>, end: bool| match d {
        Some(d) => Day::new(y, m, d),
        None if end => Day::month_end(y, m),
        None => Day::new(y, m, 1),
    };
    let rows = (|| {
        let (y, m) = (first_last(year)?, first_last(&cols[mi])?);
        let d = match di {
            Some(i) => Some(first_last(&cols[i])?),
            None => None,
        };
        let a = day_of(y.0, m.0, d.map(|d| d.0), false)?;
        let b = day_of(y.1, m.1, d.map(|d| d.1), true)?;
        let finer: Vec<usize> = std::iter::once(mi).chain(di).collect();
        (sorted(&finer) && a <= b).then_some((a, b))
    })();
    let (a, b) = match rows {
        Some(r) => r,
        None => (
            day_of(ylo, mlo, days.map(|d| d.0), false)?,
            day_of(yhi, mhi, None, true)?,
        ),
    };
    let mut with = vec![mi];
    with.extend(di);
    Some(Pair {
        year: yi,
        with,
        what: if di.is_some() {
            "year, month, day"
        } else {
            "year, month"
        },
        span: (a, b),
    })
}

/// The strftime format of a column read as dates in another form (`%Y%m`, `%Y%j`,
/// `%Y-%m`): pandas reads its cells as numbers or text, so a load line parses them.
pub(crate) fn date_form(c: &ColumnProfile) -> Option<&str> {
    if c.kind != ColumnType::Date || c.time_span.is_none() {
        return None;
    }
    // Quarters load through a converter ([`converter`]): pandas has no `%q`.
    c.date_format
        .as_deref()
        .filter(|f| f.contains('%') && !f.contains("%q"))
}

/// What the note says a column's values were read as.
fn reading(c: &ColumnProfile) -> String {
    let f = c.date_format.as_deref().unwrap_or_default();
    match f {
        "%Y%m" => "months written YYYYMM".into(),
        "%Y-%m" => "months written YYYY-MM".into(),
        "%Y%m%d" => "days written YYYYMMDD".into(),
        "%Y%j" => "days written YYYYDDD (year, day of year)".into(),
        "%Y-%j" => "days written YYYY-DDD (year, day of year)".into(),
        f if f.contains("%q") => format!("quarters written {f}"),
        f if f.contains("%H") => format!("date-times written {f}"),
        f if f.contains("%d") => format!("days written {f}"),
        "fractional years" => format!(
            "fractional years ({} … {})",
            c.min.as_deref().unwrap_or("?"),
            c.max.as_deref().unwrap_or("?")
        ),
        _ => {
            // The cells that are more than a year's digits, as examples.
            let mut odd: Vec<&str> = c
                .examples
                .iter()
                .map(String::as_str)
                .chain(c.top.iter().map(|(v, _)| v.as_str()))
                .filter(|v| text_time(v).is_some() || missing_like(v))
                .collect();
            odd.dedup();
            odd.truncate(3);
            if odd.is_empty() {
                format!("years written {f}")
            } else {
                format!("years written {f} (with {})", odd.join(", "))
            }
        }
    }
}

/// The pair (or triple) of columns of one table that name days together, and a note
/// and a count for it and for every column the profiler read as time.
fn read_table(cols: &mut [ColumnProfile], notes: &mut Vec<String>, applied: &Applied) {
    let mut paired = Vec::new();
    if let Some(p) = pair_span(cols) {
        let names: Vec<String> = std::iter::once(p.year)
            .chain(p.with.iter().copied())
            .map(|i| format!("{:?}", cols[i].name))
            .collect();
        let (a, b) = (p.span.0.iso(), p.span.1.iso());
        notes.push(format!(
            "{} read together as days ({}): {a} … {b}",
            names.join(" + "),
            p.what
        ));
        applied.add(ReadingRule::TimeForms, 1);
        // The finest column carries the span: it is what makes the days.
        if let Some(&last) = p.with.last() {
            cols[last].time_span = Some((a, b));
        }
        paired = p.with;
    }
    for (i, c) in cols.iter().enumerate() {
        if let (Some((a, b)), false) = (&c.time_span, paired.contains(&i)) {
            notes.push(format!("{:?} read as {}: {a} … {b}", c.name, reading(c)));
            applied.add(ReadingRule::TimeForms, 1);
        }
    }
}

/// Reads the pairs of columns of every table of `content` that name days together, and
/// states in each table's notes the columns read as time.
pub(crate) fn read_tables(content: &mut Content, applied: &Applied) {
    let on = rules::on(ReadingRule::TimeForms);
    let one = |cols: &mut [ColumnProfile], notes: &mut Vec<String>| {
        if on {
            read_table(cols, notes, applied);
        }
        for c in cols.iter_mut() {
            c.order = None;
        }
    };
    match content {
        Content::Table(t) => one(&mut t.columns, &mut t.notes),
        Content::Tables(ts) => {
            for t in &mut ts.tables {
                one(&mut t.columns, &mut t.notes);
            }
        }
        Content::Json(_)
        | Content::Text(_)
        | Content::Archive(_)
        | Content::Arrays(_)
        | Content::Media(_)
        | Content::Opaque(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{coverage, t};
    use super::*;
    use crate::analyze::{describe, Description, Source};

    fn day(y: u32, m: u32, d: u32) -> Option<Day> {
        Day::new(y, m, d)
    }

    #[test]
    fn cells_that_write_time() {
        assert_eq!(year_month("200001"), Some((2000, 1)));
        assert_eq!(year_month("199912"), Some((1999, 12)));
        for not in ["200013", "200000", "100234", "20001", "2000011", "-20001"] {
            assert_eq!(year_month(not), None, "{not}");
        }
        assert_eq!(year_ordinal("2001032"), day(2001, 2, 1));
        assert_eq!(year_ordinal("2000366"), day(2000, 12, 31));
        assert_eq!(year_ordinal("2001366"), None);
        assert_eq!(year_month_day("20010229"), None);
        assert_eq!(year_month_day("20040229"), day(2004, 2, 29));
        assert_eq!(fractional_year(1987.042), day(1987, 1, 16));
        assert_eq!(fractional_year(2023.958), day(2023, 12, 16));
        assert_eq!(fractional_year(1700.5), None);
        let year = |first, last, form| Some(TextTime::Year { first, last, form });
        for (v, want) in [
            (
                "2001-032",
                Some(TextTime::Ordinal(Day::new(2001, 2, 1).unwrap())),
            ),
            ("2001-366", None),
            (
                "2001-02",
                Some(TextTime::Month {
                    y: 2001,
                    m: 2,
                    span: true,
                }),
            ),
            (
                "2001-05",
                Some(TextTime::Month {
                    y: 2001,
                    m: 5,
                    span: false,
                }),
            ),
            ("2001/02", year(2001, 2002, YearForm::Span('/', false))),
            ("2001-2002", year(2001, 2002, YearForm::Span('-', true))),
            ("2012-13", year(2012, 2013, YearForm::Span('-', false))),
            ("2012-14", None),
            ("FY2020", year(2020, 2020, YearForm::Fiscal)),
            ("FY 2020/21", year(2020, 2021, YearForm::Fiscal)),
            ("2019r", year(2019, 2019, YearForm::Marked)),
            ("2020 (p)", year(2020, 2020, YearForm::Marked)),
            ("1999*", year(1999, 1999, YearForm::Marked)),
            ("2021 est.", year(2021, 2021, YearForm::Marked)),
            ("2001 Jan", None),
            ("Q5 2001", None),
            ("A1Q2", None),
            ("2001 average", None),
            ("1234r", None),
            ("2001", None),
            ("A2001", None),
        ] {
            assert_eq!(text_time(v), want, "{v}");
        }
        assert!(missing_like("..") && missing_like("n.a.") && missing_like("x"));
        assert!(!missing_like("2001") && !missing_like("missing value"));
        assert!(names_a_key("customer_id") && names_a_key("GameID") && names_a_key("Code"));
        assert!(!names_a_key("Period") && !names_a_key("valid"));
        assert!(names_time("tranMonth") && names_time("Date") && names_time("yyyymm"));
        assert!(!names_time("Value") && !names_time("account"));
    }

    #[test]
    fn quarters_as_written() {
        let yf = |sep, lower| QuarterForm {
            year_first: true,
            sep,
            lower,
        };
        assert_eq!(quarter("2001Q1"), Some((2001, 1, yf(0, false))));
        assert_eq!(quarter("2001-Q2"), Some((2001, 2, yf(b'-', false))));
        assert_eq!(quarter("2001 Q3"), Some((2001, 3, yf(b' ', false))));
        assert_eq!(quarter("2001q4"), Some((2001, 4, yf(0, true))));
        let (y, q, f) = quarter("Q1 2001").unwrap();
        assert_eq!(
            (y, q, f.year_first, f.pattern()),
            (2001, 1, false, "Q%q %Y".into())
        );
        assert_eq!(quarter("Q4-1999").map(|t| (t.0, t.1)), Some((1999, 4)));
        assert_eq!(yf(b'-', false).pattern(), "%Y-Q%q");
        for no in [
            "2001Q5", "2001Q0", "A1Q2", "Q1", "Q12001x", "1234Q1", "2001/Q1", "2001QQ1",
            "Q1  2001", "2001 Q1 ",
        ] {
            assert_eq!(quarter(no), None, "{no}");
        }
        assert_eq!(lone_quarter("Q3"), Some(3));
        assert_eq!(lone_quarter("q1"), Some(1));
        for no in ["Q5", "Q0", "Q", "Q12", "A1"] {
            assert_eq!(lone_quarter(no), None, "{no}");
        }
        assert_eq!(
            quarter_days(2001, 4),
            Some((day(2001, 10, 1).unwrap(), day(2001, 12, 31).unwrap()))
        );
    }

    #[test]
    fn quarters_in_a_column_are_dates_from_the_first_day_to_the_last() {
        for (header, cell) in [
            (
                "Period",
                (|y, q| format!("{y}Q{q}")) as fn(u32, u32) -> String,
            ),
            ("quarter", |y, q| format!("{y}-Q{q}")),
            ("x", |y, q| format!("{y} Q{q}")),
            ("Date", |y, q| format!("Q{q} {y}")),
            ("obs", |y, q| format!("{y}q{q}")),
        ] {
            let text = csv(
                &format!("{header},GDP"),
                (2001..=2003)
                    .flat_map(|y| (1..=4).map(move |q| format!("{},{}", cell(y, q), q * 10))),
            );
            let d = described("gdp.csv", &text);
            let (cols, notes) = table(&d);
            let c = &cols[0];
            assert_eq!(c.kind, ColumnType::Date, "{header}");
            assert_eq!(
                (c.min.as_deref(), c.max.as_deref()),
                (Some("2001-01-01"), Some("2003-10-01")),
                "{header}"
            );
            assert_eq!(
                coverage("gdp.csv", &text),
                t("2001-01-01", "2003-12-31", &format!("column {header:?}"))
            );
            assert!(
                notes.iter().any(|n| n.contains("read as quarters written")),
                "{notes:?}"
            );
            assert_eq!(d.rules.get("time-forms"), Some(&1));
            let Content::Table(tb) = &d.content else {
                unreachable!()
            };
            let load = tb.load.as_deref().unwrap_or_default();
            assert!(
                load.contains("pd.Period(") && !load.contains("parse_dates"),
                "{load}"
            );
        }
    }

    #[test]
    fn a_year_and_a_quarter_name_days_together() {
        // `Q1`..`Q4` under any header, rows in order.
        let text = csv(
            "Year,Qtr,Output",
            (2010..=2012).flat_map(|y| (1..=4).map(move |q| format!("{y},Q{q},{}", y + q))),
        );
        let d = described("out.csv", &text);
        let cov = d.time_coverage.clone().expect("coverage");
        assert_eq!(
            (cov.start.as_str(), cov.end.as_str()),
            ("2010-01-01", "2012-12-31")
        );
        let (_, notes) = table(&d);
        assert!(
            notes
                .iter()
                .any(|n| n.starts_with("\"Year\" + \"Qtr\" read together as days (year, quarter)")),
            "{notes:?}"
        );
        // Numbers 1..4 under a header naming the quarter; rows starting mid-year.
        let text = csv(
            "year,quarter,n",
            [(2015, 3), (2015, 4), (2016, 1), (2016, 2)]
                .iter()
                .map(|(y, q)| format!("{y},{q},1")),
        );
        assert_eq!(
            coverage("q.csv", &text).map(|c| (c.0, c.1)),
            Some(("2015-07-01".into(), "2016-06-30".into()))
        );
    }

    #[test]
    fn codes_that_look_like_quarters_are_not_time() {
        // Codes with a quarter inside; product codes `Q1`..`Q9` beside no year; a
        // numeric `quarter` past 4 beside a year; `Q1`..`Q4` with no year column.
        let codes = csv(
            "code,n",
            ["A1Q2", "B3Q4", "C2Q1", "D4Q3"]
                .iter()
                .map(|v| format!("{v},1")),
        );
        let products = csv("Product,Sales", (1..=9).map(|i| format!("Q{i},{}", i * 5)));
        let past4 = csv("Year,Quarter,n", (1..=8).map(|i| format!("2001,{i},{i}")));
        let no_year = csv("Survey,n", (1..=8).map(|i| format!("Q{},{i}", i % 4 + 1)));
        for (name, text) in [
            ("codes.csv", codes),
            ("products.csv", products),
            ("past4.csv", past4.clone()),
            ("noyear.csv", no_year),
        ] {
            let d = described(name, &text);
            let (cols, notes) = table(&d);
            assert!(
                cols.iter()
                    .all(|c| c.kind != ColumnType::Date && c.time_span.is_none()),
                "{name}: {cols:?}"
            );
            assert!(
                !notes.iter().any(|n| n.contains("quarter")),
                "{name}: {notes:?}"
            );
        }
        // The year alone still gives its coverage.
        assert_eq!(
            coverage("past4.csv", &past4).map(|c| c.2),
            Some("column \"Year\"".into())
        );
    }

    #[test]
    fn date_times_with_a_suffix_or_odd_separators() {
        let (d, f) = stamp("2014.03.23_20:24:00_TAI").unwrap();
        assert_eq!(d, day(2014, 3, 23).unwrap());
        assert_eq!(f.pattern(), "%Y.%m.%d_%H:%M:%S_TAI");
        assert_eq!(f.suffix(), "_TAI");
        let p = |v: &str| stamp(v).map(|(_, f)| f.pattern());
        assert_eq!(
            p("2014/03/23 20:24:00 UTC").as_deref(),
            Some("%Y/%m/%d %H:%M:%S UTC")
        );
        assert_eq!(
            p("2014-03-23T20:24:00.125Z").as_deref(),
            Some("%Y-%m-%dT%H:%M:%S.%fZ")
        );
        assert_eq!(p("2014.03.23 06:05").as_deref(), Some("%Y.%m.%d %H:%M"));
        assert_eq!(p("2014.03.23").as_deref(), Some("%Y.%m.%d"));
        for no in [
            "1.2.3",
            "10.0.0.1",
            "192.168.10.1",
            "2.10.30.1234",
            "2014.13.23",
            "2014.03.23_25:00:00",
            "2014.03.23_20:24:00_TAI7",
            "2014.03.23_20:24:00 +01",
            "2014.03.23x20:24",
            "2014.03-23",
            "2014.03.23_20:24:00_LONGER",
            "1234.03.23",
        ] {
            assert_eq!(stamp(no), None, "{no}");
        }
    }

    #[test]
    fn date_times_with_a_time_scale_are_date_times_with_coverage() {
        for (cell, header) in [
            (
                (|d| format!("2014.03.{d:02}_20:24:00_TAI")) as fn(u32) -> String,
                "T_OBS",
            ),
            (|d| format!("2014/03/{d:02} 20:24:00 UTC"), "obs"),
            (|d| format!("2014.03.{d:02} 06:{d:02}"), "x"),
        ] {
            let text = csv(
                &format!("{header},flux"),
                (1..=20).map(|d| format!("{},{}", cell(d), d * 3)),
            );
            let d = described("obs.csv", &text);
            let (cols, notes) = table(&d);
            assert_eq!(cols[0].kind, ColumnType::Datetime, "{header}");
            assert_eq!(
                (cols[0].min.as_deref(), cols[0].max.as_deref()),
                (Some("2014-03-01"), Some("2014-03-20"))
            );
            assert_eq!(
                coverage("obs.csv", &text),
                t("2014-03-01", "2014-03-20", &format!("column {header:?}"))
            );
            assert!(
                notes
                    .iter()
                    .any(|n| n.contains("read as date-times written")),
                "{notes:?}"
            );
            let Content::Table(tb) = &d.content else {
                unreachable!()
            };
            let load = tb.load.as_deref().unwrap_or_default();
            assert!(
                load.contains("pd.to_datetime(") && !load.contains("parse_dates"),
                "{load}"
            );
        }
        // Dates with dots: a date column, parsed by its format.
        let text = csv("release,n", (1..=9).map(|d| format!("2014.03.{d:02},{d}")));
        let d = described("r.csv", &text);
        let c = &table(&d).0[0];
        assert_eq!(
            (c.kind, c.date_format.as_deref()),
            (ColumnType::Date, Some("%Y.%m.%d"))
        );
        // Two suffixes in one column: not one form, left as text.
        let mixed = csv(
            "t,n",
            (1..=9).map(|d| {
                let s = if d % 2 == 0 { "TAI" } else { "UTC" };
                format!("2014.03.{d:02}_20:24:00_{s},{d}")
            }),
        );
        assert!(coverage("m.csv", &mixed).is_none());
    }

    #[test]
    fn versions_and_addresses_with_dots_are_not_time() {
        let text = csv(
            "version,host,n",
            (1..=12).map(|i| format!("1.{i}.3,10.0.0.{i},{i}")),
        );
        let d = described("v.csv", &text);
        let (cols, notes) = table(&d);
        assert!(
            cols.iter()
                .all(|c| !matches!(c.kind, ColumnType::Date | ColumnType::Datetime)),
            "{cols:?}"
        );
        assert!(d.time_coverage.is_none() && notes.is_empty(), "{notes:?}");
    }

    fn described(name: &str, csv: &str) -> Description {
        describe(&Source::from_bytes(name, csv.as_bytes().to_vec()))
    }

    /// The one table's columns and notes.
    fn table(d: &Description) -> (&[ColumnProfile], &[String]) {
        match &d.content {
            Content::Table(t) => (&t.columns, &t.notes),
            other => panic!("not a table: {other:?}"),
        }
    }

    fn csv(header: &str, rows: impl IntoIterator<Item = String>) -> String {
        let mut s = format!("{header}\n");
        for r in rows {
            s.push_str(&r);
            s.push('\n');
        }
        s
    }

    #[test]
    fn yyyymm_integers_under_a_date_header_are_months() {
        let text = csv(
            "Date,Value",
            (1..=6).map(|m| format!("2000{m:02},{}", m * 3)),
        );
        let d = described("series.csv", &text);
        let (cols, notes) = table(&d);
        let c = &cols[0];
        assert_eq!(
            (c.kind, c.date_format.as_deref()),
            (ColumnType::Date, Some("%Y%m"))
        );
        assert_eq!(
            (c.min.as_deref(), c.max.as_deref()),
            (Some("2000-01-01"), Some("2000-06-01"))
        );
        assert_eq!(
            coverage("series.csv", &text),
            t("2000-01-01", "2000-06-30", "column \"Date\"")
        );
        assert!(
            notes
                .iter()
                .any(|n| n.contains("\"Date\" read as months written YYYYMM")),
            "{notes:?}"
        );
        assert_eq!(d.rules.get("time-forms"), Some(&1));
        let Content::Table(tb) = &d.content else {
            unreachable!()
        };
        let load = tb.load.as_deref().unwrap_or_default();
        assert!(
            load.contains(r#"parse_dates=["Date"]"#) && load.contains(r#""Date": "%Y%m""#),
            "{load}"
        );
        // No header saying so: months that step one by one (per region) still are.
        let text = csv(
            "Region,Stamp,Sales",
            ["North", "South"]
                .iter()
                .flat_map(|r| (1..=12).map(move |m| format!("{r},2019{m:02},{}", m * 7))),
        );
        assert_eq!(
            coverage("sales.csv", &text),
            t("2019-01-01", "2019-12-31", "column \"Stamp\"")
        );
    }

    #[test]
    fn six_digit_numbers_that_are_not_months_stay_numbers() {
        let mut rng = fastrand::Rng::with_seed(52);
        // Ids whose first four digits are no year; a month part past 12; months in
        // random order under a neutral name; valid months under an id header.
        let ids = csv(
            "id,score",
            (0..20).map(|i| format!("{},{i}", 100_000 + i * 4_117)),
        );
        let past12 = csv(
            "Date,n",
            (0..20).map(|i| format!("2001{:02},{i}", 1 + i * 3)),
        );
        let random = csv(
            "Value,n",
            (0..30).map(|i| format!("{}{:02},{i}", rng.u32(1950..2020), rng.u32(1..=12))),
        );
        let keyed = csv("PeriodCode,n", (1..=12).map(|m| format!("2001{m:02},{m}")));
        for (name, text) in [
            ("ids.csv", ids),
            ("past12.csv", past12),
            ("random.csv", random),
            ("keyed.csv", keyed),
        ] {
            let d = described(name, &text);
            let (cols, notes) = table(&d);
            // Numbers, or identifiers by their name (the measures rule): never time.
            assert!(
                matches!(cols[0].kind, ColumnType::Integer | ColumnType::Identifier),
                "{name}: {:?}",
                cols[0].kind
            );
            assert_eq!(cols[0].time_span, None, "{name}");
            assert!(d.time_coverage.is_none(), "{name}: {:?}", d.time_coverage);
            assert!(
                !notes.iter().any(|n| n.contains("read as")) && !d.rules.contains_key("time-forms"),
                "{name}: {notes:?}"
            );
        }
    }

    #[test]
    fn fractional_years_give_coverage_and_stay_numbers() {
        let text = csv(
            "time,co2",
            (0..24).map(|i| format!("{:.3},{}", 1987.042 + i as f64 / 12.0, 350 + i)),
        );
        let d = described("co2.csv", &text);
        let (cols, notes) = table(&d);
        assert_eq!(
            (cols[0].kind, cols[0].date_format.as_deref()),
            (ColumnType::Float, Some("fractional years"))
        );
        assert_eq!(
            coverage("co2.csv", &text),
            t("1987-01-16", "1988-12-16", "column \"time\"")
        );
        assert!(
            notes
                .iter()
                .any(|n| n.contains("fractional years (1987.042 … 1988.959)")),
            "{notes:?}"
        );
        // Prices that happen to lie between 1800 and 2100, in no order: not years.
        let mut rng = fastrand::Rng::with_seed(7);
        let prices = csv(
            "price,qty",
            (0..30).map(|i| format!("{}.{:02},{i}", rng.u32(1800..2100), rng.u32(1..100))),
        );
        let d = described("prices.csv", &prices);
        assert_eq!(table(&d).0[0].date_format, None);
        assert!(d.time_coverage.is_none());
    }

    #[test]
    fn a_year_and_a_day_of_year_name_days_together() {
        let text = csv(
            "year,doy,flux",
            (0..400).map(|i| {
                let (y, doy) = if 152 + i > 365 {
                    (1988, 152 + i - 365)
                } else {
                    (1987, 152 + i)
                };
                format!("{y},{doy},{}", i % 17)
            }),
        );
        let d = described("flux.csv", &text);
        let cov = d.time_coverage.clone().expect("coverage");
        assert_eq!(
            (cov.start.as_str(), cov.end.as_str()),
            ("1987-06-01", "1988-07-04")
        );
        let (_, notes) = table(&d);
        assert!(
            notes
                .iter()
                .any(|n| n.starts_with("\"year\" + \"doy\" read together as days")),
            "{notes:?}"
        );
        // Rows out of order: the bounds every row lies within.
        let shuffled = csv(
            "Year,Day of Year,x",
            [(1990, 200), (1989, 40), (1990, 10), (1989, 300)]
                .iter()
                .map(|(y, d)| format!("{y},{d},1")),
        );
        assert_eq!(
            coverage("s.csv", &shuffled).map(|c| (c.0, c.1)),
            Some(("1989-01-10".into(), "1990-10-27".into()))
        );
        // One year, days of it in no order: the first row is not the first day.
        let one_year = csv(
            "year,day_of_year,amount",
            [40, 12, 300, 21].iter().map(|d| format!("2023,{d},1")),
        );
        assert_eq!(
            coverage("p.csv", &one_year).map(|c| (c.0, c.1)),
            Some(("2023-01-12".into(), "2023-10-27".into()))
        );
        // Year, month and day columns.
        let ymd = csv(
            "YEAR,MONTH,DAY,value",
            [(2010, 3, 5), (2010, 7, 1), (2011, 2, 14)]
                .iter()
                .map(|(y, m, d)| format!("{y},{m},{d},1")),
        );
        assert_eq!(
            coverage("ymd.csv", &ymd).map(|c| (c.0, c.1)),
            Some(("2010-03-05".into(), "2011-02-14".into()))
        );
    }

    #[test]
    fn day_of_year_and_month_text_are_dates() {
        let text = csv(
            "obs,level",
            (1..=40).map(|d| format!("2001-{:03},{d}", d * 9)),
        );
        let d = described("levels.csv", &text);
        let c = &table(&d).0[0];
        assert_eq!(
            (
                c.kind,
                c.date_format.as_deref(),
                c.min.as_deref(),
                c.max.as_deref()
            ),
            (
                ColumnType::Date,
                Some("%Y-%j"),
                Some("2001-01-09"),
                Some("2001-12-26")
            )
        );
        let text = csv("Month,n", (1..=12).map(|m| format!("1996-{m:02},{m}")));
        let d = described("m.csv", &text);
        let c = &table(&d).0[0];
        assert_eq!(
            (c.kind, c.date_format.as_deref()),
            (ColumnType::Date, Some("%Y-%m"))
        );
        assert_eq!(
            coverage("m.csv", &text),
            t("1996-01-01", "1996-12-31", "column \"Month\"")
        );
        // `2010-11` alone may be November 2010 or the fiscal year 2010/11: left as text.
        let one = csv(
            "Reporting period,n",
            (1..=5).map(|i| format!("2010-11,{i}")),
        );
        let d = described("one.csv", &one);
        assert_eq!(table(&d).0[0].kind, ColumnType::Categorical);
        assert!(d.time_coverage.is_none());
    }

    #[test]
    fn years_with_markers_or_fiscal_years_stay_years() {
        let mut rows: Vec<String> = (2001..=2018).map(|y| format!("{y},{}", y - 2000)).collect();
        rows.extend(["2019r,19".into(), "2020p,20".into(), "..,21".into()]);
        let text = csv("Year,Value", rows);
        assert_eq!(
            coverage("y.csv", &text),
            t("2001-01-01", "2020-12-31", "column \"Year\"")
        );
        let d = described("y.csv", &text);
        let (cols, notes) = table(&d);
        // The marks are footnotes and `..` a missing marker (the value rules): the years
        // stay numbers, and give the coverage above.
        assert_eq!(cols[0].kind, ColumnType::Integer);
        assert!(
            d.rules.contains_key("measures") && d.rules.contains_key("missing-markers"),
            "{notes:?} {:?}",
            d.rules
        );
        let fiscal = csv(
            "Financial Year,Spend",
            (2001..=2010).map(|y| format!("{y}/{:02},{}", (y + 1) % 100, y)),
        );
        assert_eq!(
            coverage("f.csv", &fiscal),
            t("2001-01-01", "2011-12-31", "column \"Financial Year\"")
        );
        let fy = csv("Period,Spend", (2001..=2010).map(|y| format!("FY{y},{y}")));
        assert_eq!(
            coverage("fy.csv", &fy),
            t("2001-01-01", "2010-12-31", "column \"Period\"")
        );
        // Years under a date header.
        let date = csv("Date,n", (1991..=2017).map(|y| format!("{y},{y}")));
        assert_eq!(
            coverage("d.csv", &date),
            t("1991-01-01", "2017-12-31", "column \"Date\"")
        );
        // Codes that start with a year-like number and words: not years.
        let codes = csv(
            "Label,n",
            ["2001 Main St", "1999 Elm St", "2005 Oak Ave", "x"]
                .iter()
                .map(|v| format!("{v},1")),
        );
        assert!(coverage("c.csv", &codes).is_none());
    }
}
