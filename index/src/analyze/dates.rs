//! Date recognition for column profiles, file names and text.
//!
//! Written by hand rather than with chrono's `parse_from_str`: profiling tries every cell
//! of every table against a dozen shapes, and must also tell *which* shape matched (the
//! column's date format is part of its description). A single pass over the bytes does
//! both at millions of cells per second.

use serde::{Deserialize, Serialize};

/// A calendar day.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Day {
    /// Year, 1000–2999.
    pub y: u16,
    /// Month, 1–12.
    pub m: u8,
    /// Day of month, 1–31.
    pub d: u8,
}

impl Day {
    /// A plausible day, or None.
    pub fn new(y: u32, m: u32, d: u32) -> Option<Day> {
        let days = match m {
            1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
            4 | 6 | 9 | 11 => 30,
            2 if (y.is_multiple_of(4) && !y.is_multiple_of(100)) || y.is_multiple_of(400) => 29,
            2 => 28,
            _ => return None,
        };
        ((1000..=2999).contains(&y) && (1..=days).contains(&d)).then_some(Day {
            y: y as u16,
            m: m as u8,
            d: d as u8,
        })
    }

    /// Last day of a month.
    pub fn month_end(y: u32, m: u32) -> Option<Day> {
        (28..=31).rev().find_map(|d| Day::new(y, m, d))
    }

    /// `YYYY-MM-DD`.
    pub fn iso(self) -> String {
        format!("{:04}-{:02}-{:02}", self.y, self.m, self.d)
    }
}

/// The shape a date was written in, as a strftime-like pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Shape {
    /// `2024-03-01`
    IsoDash,
    /// `2024/03/01`
    IsoSlash,
    /// `3/1/2024` or `03/01/2024`: month first (US) unless a day > 12 shows otherwise.
    SlashMdy,
    /// `1/3/2024` read day first.
    SlashDmy,
    /// `01.03.2024`
    DotDmy,
    /// `Mar 1 2024`
    MonthDayYear,
    /// `Mar 1, 2024`
    MonthDayCommaYear,
    /// `March 1 2024`
    FullMonthDayYear,
    /// `March 1, 2024`
    FullMonthDayCommaYear,
    /// `1 Mar 2024`
    DayMonthYear,
    /// `1 March 2024`
    DayFullMonthYear,
    /// `2024 Mar 01`
    YearMonthDay,
    /// `2024 March 01`
    YearFullMonthDay,
    /// `01-Mar-2024`
    DayMonthDashYear,
    /// `01-Mar-24`
    DayMonthDashShortYear,
}

impl Shape {
    /// strftime-like rendering of the shape.
    pub fn pattern(self) -> &'static str {
        match self {
            Shape::IsoDash => "%Y-%m-%d",
            Shape::IsoSlash => "%Y/%m/%d",
            Shape::SlashMdy => "%m/%d/%Y",
            Shape::SlashDmy => "%d/%m/%Y",
            Shape::DotDmy => "%d.%m.%Y",
            Shape::MonthDayYear => "%b %d %Y",
            Shape::MonthDayCommaYear => "%b %d, %Y",
            Shape::FullMonthDayYear => "%B %d %Y",
            Shape::FullMonthDayCommaYear => "%B %d, %Y",
            Shape::DayMonthYear => "%d %b %Y",
            Shape::DayFullMonthYear => "%d %B %Y",
            Shape::YearMonthDay => "%Y %b %d",
            Shape::YearFullMonthDay => "%Y %B %d",
            Shape::DayMonthDashYear => "%d-%b-%Y",
            Shape::DayMonthDashShortYear => "%d-%b-%y",
        }
    }
}

/// A date (and maybe a time of day) read from a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Parsed {
    /// The day.
    pub day: Day,
    /// The shape it was written in.
    pub shape: Shape,
    /// A time of day followed.
    pub time: bool,
    /// For [`Shape::SlashMdy`]: the same text read day-first, when that is a valid day.
    pub alt: Option<Day>,
}

const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

/// A month name's number, and whether it was written in full (`%B`) rather than
/// abbreviated (`%b`: three letters, `Sept`, or a trailing dot). No allocation: this runs
/// on every text cell a profile sees.
fn month_word(word: &str) -> Option<(u32, bool)> {
    let dotted = word.ends_with('.');
    let w = word.trim_end_matches('.').as_bytes();
    if w.len() < 3 || w.len() > 9 || !w[0].is_ascii_alphabetic() {
        return None;
    }
    let i = MONTHS
        .iter()
        .position(|m| m.len() >= w.len() && m.as_bytes()[..w.len()].eq_ignore_ascii_case(w))
        .or_else(|| w.eq_ignore_ascii_case(b"sept").then_some(8))?;
    let full = !dotted && w.len() > 3 && w.len() == MONTHS[i].len();
    // A prefix longer than three letters must be the whole name or `Sept`.
    if w.len() > 3 && !full && !(i == 8 && w.len() == 4) {
        return None;
    }
    Some((i as u32 + 1, full))
}

/// The month number of an English month name or abbreviation.
pub fn month_number(word: &str) -> Option<u32> {
    month_word(word).map(|(m, _)| m)
}

fn num(s: &str, min_len: usize, max_len: usize) -> Option<u32> {
    (s.len() >= min_len && s.len() <= max_len && s.bytes().all(|b| b.is_ascii_digit()))
        .then(|| s.parse().ok())
        .flatten()
}

/// A time of day: `HH:MM`, `HH:MM:SS`, fractions, zone suffixes, AM/PM.
fn is_time(rest: &str) -> bool {
    let t = rest.trim();
    let t = t
        .strip_suffix("AM")
        .or_else(|| t.strip_suffix("PM"))
        .or_else(|| t.strip_suffix("am"))
        .or_else(|| t.strip_suffix("pm"))
        .unwrap_or(t)
        .trim_end();
    let b = t.as_bytes();
    b.len() >= 4
        && b.len() <= 40
        && b.first().is_some_and(u8::is_ascii_digit)
        && t.contains(':')
        && b.iter().all(|c| {
            c.is_ascii_digit() || matches!(c, b':' | b'.' | b'Z' | b'+' | b'-' | b' ' | b'T' | b'z')
        })
}

/// Read a date, with an optional time of day after it.
pub fn parse(v: &str) -> Option<Parsed> {
    let v = v.trim();
    if v.len() < 6 || v.len() > 64 || !v.as_bytes()[0].is_ascii_alphanumeric() {
        return None;
    }
    // Numeric shapes: split the date part at the first space or 'T' after it.
    let b = v.as_bytes();
    if b[0].is_ascii_digit() {
        // `04-Jun-2021`: a month word between dashes (checked first: `OCT` holds a `T`).
        let lead = b.iter().take_while(|c| c.is_ascii_digit()).count();
        if b.get(lead) == Some(&b'-') && b.get(lead + 1).is_some_and(u8::is_ascii_alphabetic) {
            return parse_dashed_month(v);
        }
        let end = v.find([' ', 'T']).unwrap_or(v.len());
        let (date, rest) = v.split_at(end);
        let Some(sep) = date.bytes().find(|c| matches!(c, b'-' | b'/' | b'.')) else {
            return parse_words(v);
        };
        let time = !rest.is_empty();
        if time && !is_time(rest.trim_start_matches('T')) {
            return None;
        }
        let parts: Vec<&str> = date.split(sep as char).collect();
        if parts.len() != 3 {
            // `1 Mar 2024`
            return parse_words(v);
        }
        let (a, m, c) = (parts[0], parts[1], parts[2]);
        if let (Some(y), Some(mo), Some(d)) = (num(a, 4, 4), num(m, 1, 2), num(c, 1, 2)) {
            let shape = if sep == b'/' {
                Shape::IsoSlash
            } else if sep == b'-' {
                Shape::IsoDash
            } else {
                return None;
            };
            return Day::new(y, mo, d).map(|day| Parsed {
                day,
                shape,
                time,
                alt: None,
            });
        }
        let (x, y2, yr) = (num(a, 1, 2)?, num(m, 1, 2)?, num(c, 4, 4)?);
        return match sep {
            b'/' => {
                let mdy = Day::new(yr, x, y2);
                let dmy = Day::new(yr, y2, x);
                match (mdy, dmy) {
                    (Some(day), alt) => Some(Parsed {
                        day,
                        shape: Shape::SlashMdy,
                        time,
                        alt,
                    }),
                    (None, Some(day)) => Some(Parsed {
                        day,
                        shape: Shape::SlashDmy,
                        time,
                        alt: None,
                    }),
                    (None, None) => None,
                }
            }
            b'.' => Day::new(yr, y2, x).map(|day| Parsed {
                day,
                shape: Shape::DotDmy,
                time,
                alt: None,
            }),
            _ => None,
        };
    }
    parse_words(v)
}

/// A day of month, with an ordinal suffix allowed (`1st`, `22nd`).
fn day_word(w: &str) -> Option<u32> {
    num(w.trim_end_matches(|c: char| c.is_ascii_alphabetic()), 1, 2)
}

/// `Mar 1 2024`, `March 1, 2024`, `1 March 2024`, `2024 Jun 04`, with an optional time
/// after.
fn parse_words(v: &str) -> Option<Parsed> {
    // The first three words, split on spaces and commas; where a comma was seen; the rest.
    let mut words: [&str; 3] = [""; 3];
    let mut comma_before = [false; 3];
    let mut n = 0;
    let mut comma = false;
    let mut rest = "";
    let mut i = 0;
    let b = v.as_bytes();
    while i < b.len() {
        match b[i] {
            b' ' => i += 1,
            b',' => {
                comma = true;
                i += 1;
            }
            _ if n == 3 => {
                rest = &v[i..];
                break;
            }
            _ => {
                let start = i;
                while i < b.len() && !matches!(b[i], b' ' | b',') {
                    i += 1;
                }
                words[n] = &v[start..i];
                comma_before[n] = comma;
                comma = false;
                n += 1;
            }
        }
    }
    if n < 3 || comma_before[0] || comma {
        return None;
    }
    let time = !rest.is_empty();
    if time && !is_time(rest) {
        return None;
    }
    let [w1, w2, w3] = words;
    let (y, m, d, shape) = if let Some((m, full)) = month_word(w1) {
        // `March 1, 2024`: the comma, when there is one, follows the day.
        if comma_before[1] {
            return None;
        }
        let shape = match (full, comma_before[2]) {
            (false, false) => Shape::MonthDayYear,
            (false, true) => Shape::MonthDayCommaYear,
            (true, false) => Shape::FullMonthDayYear,
            (true, true) => Shape::FullMonthDayCommaYear,
        };
        (num(w3, 4, 4)?, m, day_word(w2)?, shape)
    } else if comma_before[1] || comma_before[2] {
        return None;
    } else if let Some(y) = num(w1, 4, 4) {
        let (m, full) = month_word(w2)?;
        let shape = if full {
            Shape::YearFullMonthDay
        } else {
            Shape::YearMonthDay
        };
        (y, m, num(w3, 1, 2)?, shape)
    } else {
        let d = day_word(w1)?;
        let (m, full) = month_word(w2)?;
        let shape = if full {
            Shape::DayFullMonthYear
        } else {
            Shape::DayMonthYear
        };
        (num(w3, 4, 4)?, m, d, shape)
    };
    Day::new(y, m, d).map(|day| Parsed {
        day,
        shape,
        time,
        alt: None,
    })
}

/// `04-Jun-2021`, `04-JUN-21`, with an optional time after a space.
fn parse_dashed_month(v: &str) -> Option<Parsed> {
    let (date, rest) = v.split_once(' ').unwrap_or((v, ""));
    let time = !rest.trim().is_empty();
    if time && !is_time(rest) {
        return None;
    }
    let mut parts = date.split('-');
    let (d, m, y) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() || m.len() != 3 {
        return None;
    }
    let d = num(d, 1, 2)?;
    let (m, _) = month_word(m)?;
    let (y, shape) = match y.len() {
        4 => (num(y, 4, 4)?, Shape::DayMonthDashYear),
        // Two-digit years pivot as strptime's `%y` does: 69–99 → 1900s, 00–68 → 2000s.
        2 => {
            let yy = num(y, 2, 2)?;
            let y = if yy >= 69 { 1900 + yy } else { 2000 + yy };
            (y, Shape::DayMonthDashShortYear)
        }
        _ => return None,
    };
    Day::new(y, m, d).map(|day| Parsed {
        day,
        shape,
        time,
        alt: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(v: &str) -> Option<(String, Shape, bool)> {
        parse(v).map(|p| (p.day.iso(), p.shape, p.time))
    }

    #[test]
    fn shapes() {
        assert_eq!(
            day("2024-03-01"),
            Some(("2024-03-01".into(), Shape::IsoDash, false))
        );
        assert_eq!(
            day("2024-03-01T10:00:00Z"),
            Some(("2024-03-01".into(), Shape::IsoDash, true))
        );
        assert_eq!(
            day("2024/03/01 10:00"),
            Some(("2024-03-01".into(), Shape::IsoSlash, true))
        );
        assert_eq!(
            day("10/1/2014"),
            Some(("2014-10-01".into(), Shape::SlashMdy, false))
        );
        assert_eq!(
            day("25/12/2014"),
            Some(("2014-12-25".into(), Shape::SlashDmy, false))
        );
        assert_eq!(
            day("01.03.2024"),
            Some(("2024-03-01".into(), Shape::DotDmy, false))
        );
        assert_eq!(
            day("Apr 13  2017 12:00:00 AM"),
            Some(("2017-04-13".into(), Shape::MonthDayYear, true))
        );
        assert_eq!(
            day("November 1, 2024"),
            Some(("2024-11-01".into(), Shape::FullMonthDayCommaYear, false))
        );
        assert_eq!(
            day("1 Sept 2019"),
            Some(("2019-09-01".into(), Shape::DayMonthYear, false))
        );
        for bad in [
            "2024-02-30",
            "13/13/2020",
            "hello world 2020",
            "12345678",
            "1.5",
            "Mar 40 2020",
            "may be 2020",
        ] {
            assert_eq!(day(bad), None, "{bad}");
        }
    }

    #[test]
    fn dates_in_words_with_their_patterns() {
        for (text, iso, pattern) in [
            ("September 1, 2021", "2021-09-01", "%B %d, %Y"),
            ("Sep 1, 2021", "2021-09-01", "%b %d, %Y"),
            ("Sep. 1, 2021", "2021-09-01", "%b %d, %Y"),
            ("Sept 1, 2021", "2021-09-01", "%b %d, %Y"),
            ("June 30 2021", "2021-06-30", "%B %d %Y"),
            ("1 Sep 2021", "2021-09-01", "%d %b %Y"),
            ("1 September 2021", "2021-09-01", "%d %B %Y"),
            ("21st March 2020", "2020-03-21", "%d %B %Y"),
            ("2021 Jun 04", "2021-06-04", "%Y %b %d"),
            ("2021 June 04", "2021-06-04", "%Y %B %d"),
            ("04-Jun-2021", "2021-06-04", "%d-%b-%Y"),
            ("04-OCT-2021", "2021-10-04", "%d-%b-%Y"),
            ("4-oct-21", "2021-10-04", "%d-%b-%y"),
            ("31-Dec-99", "1999-12-31", "%d-%b-%y"),
        ] {
            let p = parse(text).unwrap_or_else(|| panic!("{text}: not a date"));
            assert_eq!(
                (p.day.iso().as_str(), p.shape.pattern()),
                (iso, pattern),
                "{text}"
            );
            assert!(!p.time, "{text}");
        }
        let p = parse("2021 Jun 04 13:30").unwrap();
        assert_eq!((p.shape, p.time), (Shape::YearMonthDay, true));
        let p = parse("04-OCT-2021 08:00:00").unwrap();
        assert_eq!((p.shape, p.time), (Shape::DayMonthDashYear, true));
        for bad in [
            "September 31, 2021",
            "Septem 1, 2021",
            "Marching 1, 2021",
            "1, Sep 2021",
            "Sep, 1 2021",
            "1 Sep, 2021",
            "2021, Jun 04",
            "2021 Jun 4th",
            "04-June-2021",
            "04-Jun-221",
            "04-Jun-2021-1",
            "Jun 04 2021 and more",
            "12 Monkeys 1995",
            "version 2 2021",
            "may 5 of 2021",
        ] {
            assert_eq!(day(bad), None, "{bad}");
        }
        assert_eq!(month_number("Sept."), Some(9));
        assert_eq!(month_number("sep"), Some(9));
        assert_eq!(month_number("janu"), None);
    }

    /// Columns of dates in words come out as Date columns with their pattern and ISO
    /// range, through the whole description of a CSV.
    #[test]
    fn a_column_of_dates_in_words_is_a_date_column() {
        use crate::analyze::{describe, ColumnType, Content, Source};
        let rows = [
            (
                "September 1, 2021",
                "Sep 1, 2021",
                "1 Sep 2021",
                "2021 Jun 04",
                "04-Jun-2021",
            ),
            (
                "October 15, 2021",
                "Oct 15, 2021",
                "15 Oct 2021",
                "2021 Jul 14",
                "14-Jul-2021",
            ),
            (
                "November 30, 2021",
                "Nov 30, 2021",
                "30 Nov 2021",
                "2021 Aug 24",
                "24-Aug-2021",
            ),
            (
                "December 1, 2020",
                "Dec 1, 2020",
                "1 Dec 2020",
                "2020 Dec 01",
                "01-Dec-2020",
            ),
            (
                "March 3, 2022",
                "Mar 3, 2022",
                "3 Mar 2022",
                "2022 Mar 03",
                "03-Mar-2022",
            ),
        ];
        let mut csv = String::from("issued,abbr,dmy,ymd,dashed,n\n");
        for (i, (a, b, c, d, e)) in rows.iter().enumerate() {
            csv.push_str(&format!("\"{a}\",\"{b}\",{c},{d},{e},{i}\n"));
        }
        let d = describe(&Source::from_bytes("issues.csv", csv.into_bytes()));
        let Content::Table(t) = &d.content else {
            panic!("{:?}", d.content)
        };
        type Row<'a> = (
            &'a str,
            ColumnType,
            Option<&'a str>,
            Option<&'a str>,
            Option<&'a str>,
        );
        let got: Vec<Row> = t.columns[..5]
            .iter()
            .map(|c| {
                (
                    c.name.as_str(),
                    c.kind,
                    c.date_format.as_deref(),
                    c.min.as_deref(),
                    c.max.as_deref(),
                )
            })
            .collect();
        let want = |n, f, lo, hi| (n, ColumnType::Date, Some(f), Some(lo), Some(hi));
        assert_eq!(
            got,
            [
                want("issued", "%B %d, %Y", "2020-12-01", "2022-03-03"),
                want("abbr", "%b %d, %Y", "2020-12-01", "2022-03-03"),
                want("dmy", "%d %b %Y", "2020-12-01", "2022-03-03"),
                want("ymd", "%Y %b %d", "2020-12-01", "2022-03-03"),
                want("dashed", "%d-%b-%Y", "2020-12-01", "2022-03-03"),
            ]
        );
        let cov = d.time_coverage.expect("coverage");
        assert_eq!(
            (cov.start.as_str(), cov.end.as_str()),
            ("2020-12-01", "2022-03-03")
        );
    }
}
