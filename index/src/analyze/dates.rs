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
    /// `Mar 1 2024`, `March 1, 2024`
    MonthDayYear,
    /// `1 Mar 2024`, `1 March 2024`
    DayMonthYear,
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
            Shape::DayMonthYear => "%d %b %Y",
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
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];

/// The month number of an English month name or abbreviation.
pub fn month_number(word: &str) -> Option<u32> {
    let w = word.trim_end_matches('.').to_ascii_lowercase();
    if w.len() < 3 {
        return None;
    }
    let i = MONTHS.iter().position(|m| w.starts_with(m))?;
    let full = [
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
    ][i];
    (w.len() == 3 || full.starts_with(&w) || (i == 8 && w == "sept")).then_some(i as u32 + 1)
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

/// `Mar 1 2024`, `March 1, 2024`, `1 March 2024`, with an optional time after.
fn parse_words(v: &str) -> Option<Parsed> {
    let mut words = v.split([' ', ',']).filter(|w| !w.is_empty());
    let (w1, w2, w3) = (words.next()?, words.next()?, words.next()?);
    let rest: Vec<&str> = words.collect();
    let time = !rest.is_empty();
    if time && !is_time(&rest.join(" ")) {
        return None;
    }
    if let Some(m) = month_number(w1) {
        let d = num(w2.trim_end_matches(|c: char| c.is_ascii_alphabetic()), 1, 2)?;
        let y = num(w3, 4, 4)?;
        return Day::new(y, m, d).map(|day| Parsed {
            day,
            shape: Shape::MonthDayYear,
            time,
            alt: None,
        });
    }
    let d = num(w1.trim_end_matches(|c: char| c.is_ascii_alphabetic()), 1, 2)?;
    let m = month_number(w2)?;
    let y = num(w3, 4, 4)?;
    Day::new(y, m, d).map(|day| Parsed {
        day,
        shape: Shape::DayMonthYear,
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
            Some(("2024-11-01".into(), Shape::MonthDayYear, false))
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
}
