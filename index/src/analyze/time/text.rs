//! Dates written in text: the first lines of text files and table preambles.

use super::super::dates::{self, Day};

/// Lines of a text scanned for dates written in it.
const SCAN_LINES: usize = 200;
/// Characters of one line scanned for dates (a longer line is cut).
const SCAN_LINE_CHARS: usize = 400;

/// The span of the dates written in the first lines of a text: `Issued: 2021 Jun 04`,
/// `2021-06-04`, `June 4, 2021`, and day-month without a year (`05 Jun-07 Jun`), which
/// take the year of the nearest dated line and are dropped when there is none. Only
/// whole dates count (a year, a version number or a phone number is not one), and
/// yearless ones need a capitalised month name.
pub(crate) fn span_in_lines(text: &str) -> Option<(Day, Day)> {
    let mut full: Vec<(usize, Day)> = Vec::new();
    let mut yearless: Vec<(usize, u32, u32)> = Vec::new();
    for (n, line) in text.lines().take(SCAN_LINES).enumerate() {
        let line = match line.char_indices().nth(SCAN_LINE_CHARS) {
            Some((i, _)) => &line[..i],
            None => line,
        };
        scan_line(line, |d| full.push((n, d)), |m, d| yearless.push((n, m, d)));
    }
    let mut days: Vec<Day> = full.iter().map(|(_, d)| *d).collect();
    for (n, m, d) in yearless {
        let Some(&(_, near)) = full.iter().min_by_key(|(line, _)| line.abs_diff(n)) else {
            break;
        };
        // The year that puts it closest to the dated line (`31 Dec-02 Jan` spans two).
        let y = near.y as u32;
        if let Some(day) = [y - 1, y, y + 1]
            .into_iter()
            .filter_map(|y| Day::new(y, m, d))
            .min_by_key(|day| day_number(*day).abs_diff(day_number(near)))
        {
            days.push(day);
        }
    }
    Some((*days.iter().min()?, *days.iter().max()?))
}

/// Days since a fixed origin, close enough to compare distances between days.
fn day_number(d: Day) -> u32 {
    d.y as u32 * 372 + d.m as u32 * 31 + d.d as u32
}

/// A day of month of one or two digits.
fn day_of_month(w: &str) -> Option<u32> {
    (!w.is_empty() && w.len() <= 2 && w.bytes().all(|b| b.is_ascii_digit()))
        .then(|| w.parse().ok())
        .flatten()
        .filter(|d| (1..=31).contains(d))
}

/// A capitalised month name (`Jun`, `June`): lowercase `may` is a verb.
fn month_name(w: &str) -> Option<u32> {
    w.starts_with(|c: char| c.is_ascii_uppercase())
        .then(|| dates::month_number(w))
        .flatten()
}

/// Calls `full` with each whole date of `line` and `yearless` with each (month, day)
/// written without a year.
fn scan_line(line: &str, mut full: impl FnMut(Day), mut yearless: impl FnMut(u32, u32)) {
    let edge = |c: char| !c.is_ascii_alphanumeric();
    // Words, with ranges (`05 Jun-07 Jun`) cut at their dash unless the word is a date.
    let mut words: Vec<&str> = Vec::new();
    for w in line.split(|c: char| c.is_whitespace() || c == ',') {
        let w = w.trim_matches(edge);
        if w.is_empty() {
            continue;
        }
        if w.contains(['-', '\u{2013}'])
            && w.contains(|c: char| c.is_ascii_alphabetic())
            && dates::parse(w).is_none()
        {
            words.extend(
                w.split(['-', '\u{2013}'])
                    .map(|p| p.trim_matches(edge))
                    .filter(|p| !p.is_empty()),
            );
            continue;
        }
        words.push(w);
    }
    let mut i = 0;
    while i < words.len() {
        if let Some(p) = dates::parse(words[i]) {
            full(p.day);
            i += 1;
            continue;
        }
        if i + 2 < words.len() {
            let phrase = format!("{} {} {}", words[i], words[i + 1], words[i + 2]);
            if let Some(p) = dates::parse(&phrase) {
                full(p.day);
                i += 3;
                continue;
            }
        }
        if let Some(next) = words.get(i + 1) {
            let pair = match (day_of_month(words[i]), month_name(next)) {
                (Some(d), Some(m)) => Some((m, d)),
                _ => month_name(words[i]).zip(day_of_month(next)),
            };
            if let Some((m, d)) = pair {
                yearless(m, d);
                i += 2;
                continue;
            }
        }
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{coverage, t};
    use super::*;

    const BULLETIN: &str = "\
:Product: 3-Day Forecast
:Issued: 2021 Jun 04 0030 UTC
# Prepared by a generated forecast office
#
A. Geomagnetic activity summary:
The greatest observed 3 hr Kp over the past 24 hours was 2 (below NOAA Scale
levels). Contact 303-497-3171 for details; product version 2.1.3, page 1 of 2.

B. Forecast for 05 Jun-07 Jun 2021 follows, issued with software 10.2.2020b.
The chance of a storm is low through Jun 07 and may rise after.
";

    #[test]
    fn dates_written_in_text_give_its_coverage() {
        assert_eq!(
            coverage("bulletin.txt", BULLETIN),
            t("2021-06-04", "2021-06-07", "text")
        );
        // Day-month without a year takes the year of the nearest dated line.
        let text = "Issued 2019-12-30\nOutlook 31 Dec-02 Jan\nNothing else.\n";
        let (lo, hi) = span_in_lines(text).unwrap();
        assert_eq!(
            (lo.iso(), hi.iso()),
            ("2019-12-30".into(), "2020-01-02".into())
        );
        for plain in [
            "Version 1.2.3 released; call 555-123-4567 or see page 3 of 12.\n",
            "Copyright 2019 the authors. You may 5 times retry.\n",
            "Meet on 05 Jun: no year anywhere here.\n",
            "Build 2020.10.31.4 and 12:30 and 2021/13/45.\n",
        ] {
            assert_eq!(span_in_lines(plain), None, "{plain}");
        }
    }
}
