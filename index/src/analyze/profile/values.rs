//! What a column's values mean beyond the cells as written: missing-value markers
//! (`M`, `(NA)`, `..` among numbers), durations (`01:02:03`, `1h 30m`, `PT1H30M`) and
//! identifiers written with digits (`00123`, a column named `id` or `zip`).
//!
//! The rules, each a [`ReadingRule`](crate::analyze::rules::ReadingRule):
//! - **Missing markers.** A cell is a candidate marker when it is short (at most
//!   [`MARKER_MAX_CHARS`] characters, at most [`MARKER_MAX_LETTERS`] letters), holds no
//!   digit and no space, and reads as no number or date; or it is a word saying so
//!   (`MISSING`, `unknown`, `suppressed`). A column whose other non-empty
//!   cells are numbers (or dates, or durations) reads its candidates as missing values
//!   when they are at most [`MARKERS_MAX`] distinct tokens and fewer cells than the
//!   values: a column of letter codes with a few numbers among them stays text.
//!   Null words pandas does not read as NaN by default (`-`, `na`, `none`, `Null`) are
//!   recorded as markers of such columns too, so the load line names them.
//! - **Footnote marks.** A number followed by a mark (`2023r`, `1,234 p`, `12.5*`,
//!   `310 (e)`) is that number when such cells are a minority of the column's numbers
//!   and carry at most [`MARKERS_MAX`] distinct marks; the notation names the marks.
//!   Numbers written with separators (`1 234 p`, `1.234,5 r`) are read with the
//!   column's other written numbers, in the one convention they agree on.
//! - **Durations.** `1h 30m`, `90 min`, `2 days` and ISO 8601 `PT1H30M` are durations
//!   wherever they stand. A clock-like `H:MM:SS` column is a duration when its header
//!   names a span (wait, duration, elapsed, …) or a value reaches 24 hours; otherwise it
//!   is a time of day and stays text. Two-part `12:30` is read as a duration by no one
//!   the same way (`MM:SS` or `HH:MM`), so it stays text. A workbook's spans stored as
//!   times (`h:mm:ss`, elapsed `[h]:mm:ss`) reach the profile as `H:MM:SS` and are read
//!   the same way; pandas reads those cells as `datetime.time` or `timedelta`, so the
//!   load line's converter reads their text.
//! - **Identifiers.** Integers written zero-padded to one width of at least
//!   [`PADDED_MIN_WIDTH`] digits (`00123`, a ZIP or FIPS code) or, nearly unique, under a
//!   header naming a key (`id`, `code`, `zip`, `fips`) are identifiers:
//!   their range stays, their mean does not. A column whose cells are mostly numbers is
//!   never an identifier: it is a measure whose odd cells kept it from being numeric.

use super::numbers::{self, Moments, Written};
use super::{ColumnProfile, ColumnType};
use crate::analyze::rules::{Applied, ReadingRule};
use crate::analyze::Content;

/// Longest missing-value marker, in characters (`(NA)`, `n.a.`, `N.A.`).
const MARKER_MAX_CHARS: usize = 5;
/// Most letters in a missing-value marker (`M`, `NA`, `n.a.`, `(D)`): a word of three
/// letters (`TIE`, `ALL`) is a value.
const MARKER_MAX_LETTERS: usize = 2;
/// Most distinct markers in one column.
pub(super) const MARKERS_MAX: usize = 3;
/// Seconds in a day: a clock value at or past it is a span, not a time of day.
pub(super) const DAY: f64 = 86_400.0;

/// Words that say a value is missing, whatever their length (any case).
const MISSING_WORDS: [&str; 8] = [
    "missing",
    "unknown",
    "nil",
    "suppressed",
    "withheld",
    "unavailable",
    "blank",
    "#n/a",
];

/// Whether `v` (trimmed, not a null word, read as no number or date) may be a
/// missing-value marker.
pub(super) fn marker_candidate(v: &str) -> bool {
    if v.len() <= 11 && MISSING_WORDS.iter().any(|w| w.eq_ignore_ascii_case(v)) {
        return true;
    }
    let mut chars = 0;
    let mut letters = 0;
    for c in v.chars() {
        chars += 1;
        if chars > MARKER_MAX_CHARS || c.is_numeric() || c.is_whitespace() {
            return false;
        }
        if c.is_alphabetic() {
            letters += 1;
        }
    }
    chars > 0 && letters <= MARKER_MAX_LETTERS
}

/// A null word of [`super::is_null`] that pandas' `read_csv` does not read as NaN by
/// default: a load line must name it.
pub(super) fn pandas_keeps(v: &str) -> bool {
    matches!(v, "na" | "Null" | "none" | "-")
}

/// How a duration is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Form {
    /// `H:MM:SS`: a time of day unless the column says otherwise.
    Clock,
    /// `1h 30m`, `90 min`, `PT1H30M`: a duration as written.
    Spelled,
}

/// Seconds of a duration cell, and how it is written.
pub(super) fn duration(v: &str) -> Option<(f64, Form)> {
    let b = v.as_bytes();
    match b.first()? {
        b'0'..=b'9' => {}
        b'P' => return iso(v).map(|s| (s, Form::Spelled)),
        _ => return None,
    }
    if b.contains(&b':') {
        return clock(v).map(|s| (s, Form::Clock));
    }
    spelled(v).map(|s| (s, Form::Spelled))
}

/// `H:MM:SS` with one to five hour digits (a workbook's `[h]:mm:ss` runs past 999
/// hours) and an optional fraction of seconds.
fn clock(v: &str) -> Option<f64> {
    let mut parts = v.split(':');
    let (h, m, s) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() || h.is_empty() || h.len() > 5 || m.len() != 2 {
        return None;
    }
    let (whole, frac) = s.split_once('.').unwrap_or((s, ""));
    let digits = |x: &str| x.bytes().all(|c| c.is_ascii_digit());
    if whole.len() != 2 || !digits(h) || !digits(m) || !digits(whole) || !digits(frac) {
        return None;
    }
    let (h, m, s): (f64, f64, f64) = (h.parse().ok()?, m.parse().ok()?, s.parse().ok()?);
    (m < 60.0 && s < 60.0).then_some(h * 3600.0 + m * 60.0 + s)
}

/// The seconds of one unit pandas' `to_timedelta` also reads.
fn unit_seconds(u: &str) -> Option<f64> {
    Some(match u {
        "d" | "day" | "days" => DAY,
        "h" | "hr" | "hour" | "hours" => 3600.0,
        "m" | "min" | "minute" | "minutes" => 60.0,
        "s" | "sec" | "second" | "seconds" => 1.0,
        "ms" => 0.001,
        _ => return None,
    })
}

/// `1h 30m`, `90 min`, `1 day 2 hours`, `45s`: numbers each followed by a unit.
fn spelled(v: &str) -> Option<f64> {
    let mut total = 0.0;
    let mut rest = v.trim();
    let mut parts = 0;
    while !rest.is_empty() {
        let n_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .filter(|&i| i > 0)?;
        let n: f64 = rest[..n_end].parse().ok()?;
        let after = rest[n_end..].trim_start();
        let u_end = after
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(after.len());
        total += n * unit_seconds(&after[..u_end])?;
        parts += 1;
        rest = after[u_end..].trim_start_matches([' ', ',']);
    }
    (parts > 0).then_some(total)
}

/// ISO 8601 `PnDTnHnMnS` (each part optional, at least one present).
fn iso(v: &str) -> Option<f64> {
    let rest = v.strip_prefix('P')?;
    let (days, time) = match rest.split_once('T') {
        Some((d, t)) => (d, Some(t)),
        None => (rest, None),
    };
    let mut total = 0.0;
    let mut any = false;
    let mut read = |s: &str, units: &[(char, f64)]| -> Option<()> {
        let mut s = s;
        let mut next = 0;
        while !s.is_empty() {
            let i = s.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
            let unit = s[i..].chars().next()?;
            let k = units[next..].iter().position(|(u, _)| *u == unit)? + next;
            total += s[..i].parse::<f64>().ok()? * units[k].1;
            any = true;
            next = k + 1;
            s = &s[i + unit.len_utf8()..];
        }
        Some(())
    };
    read(days, &[('W', 7.0 * DAY), ('D', DAY)])?;
    if let Some(t) = time {
        if t.is_empty() {
            return None;
        }
        read(t, &[('H', 3600.0), ('M', 60.0), ('S', 1.0)])?;
    }
    any.then_some(total)
}

/// The number before a footnote mark: plain (its value, and whether it is whole), or
/// written with separators (`1 234`, `1.234,5`, `1,234`), which the column's convention
/// reads with its other written numbers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Foot {
    Plain(f64, bool),
    Written(Written),
}

/// A number with a footnote mark (`2023r`, `1,234 p`, `1.234,5 r`, `12 345(e)`, `12.5*`,
/// `45†`, `310 (e)`): the number and the mark.
pub(super) fn footnoted(v: &str) -> Option<(Foot, &str)> {
    // A number starts with a digit, a sign, a point, a currency or a bracket: most text
    // is ruled out at its first byte.
    if !v.bytes().next().is_some_and(|b| {
        b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.' | b'$' | b'(') || b >= 0x80
    }) {
        return None;
    }
    let symbols = v.trim_end_matches(['*', '†', '‡']);
    let (body, mark) = if symbols.len() < v.len() {
        (symbols, &v[symbols.len()..])
    } else if let Some(inner) = v.strip_suffix(')') {
        let open = inner.rfind('(')?;
        let m = &inner[open + 1..];
        let ok = m.chars().count() == 1 && m.chars().all(|c| c.is_ascii_alphanumeric());
        (ok.then_some(&v[..open])?, &v[open..])
    } else {
        let last = v.chars().next_back()?;
        if !last.is_ascii_lowercase() {
            return None;
        }
        (&v[..v.len() - 1], &v[v.len() - 1..])
    };
    if mark.chars().count() > 3 {
        return None;
    }
    let body = body.trim_end();
    if !body.ends_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    if let Some(x) = super::column::parse_int(body) {
        return Some((Foot::Plain(x, true), mark));
    }
    if let Some(x) = super::column::parse_float(body).filter(|x| x.is_finite()) {
        return Some((Foot::Plain(x, false), mark));
    }
    // Separators only (`1 234`, `1.234,5`): a currency, a percent or a scale before a
    // mark is some other text (`3 km p` never gets here: it ends in a letter).
    let separated = body
        .bytes()
        .all(|c| c.is_ascii_digit() || matches!(c, b',' | b'.' | b' ' | b'\'' | b'-') || c >= 0x80);
    separated
        .then(|| numbers::parse(body))
        .flatten()
        .filter(|w| w.separated_only())
        .map(|w| (Foot::Written(w), mark))
}

/// A header that names a span of time rather than a moment.
pub(super) fn names_a_span(name: &str) -> bool {
    const SPANS: [&str; 14] = [
        "wait",
        "waiting",
        "duration",
        "elapsed",
        "length",
        "runtime",
        "run time",
        "time spent",
        "time taken",
        "lap",
        "delay",
        "turnaround",
        "uptime",
        "downtime",
    ];
    let n = name.to_lowercase();
    SPANS.iter().any(|s| contains_word(&n, s))
}

/// Words that name a key.
const KEYS: [&str; 12] = [
    "id", "ids", "code", "key", "zip", "zipcode", "fips", "geoid", "postcode", "uuid", "sku",
    "isbn",
];

/// A header naming a key: its integers are labels, not quantities.
pub(super) fn names_a_key(name: &str) -> bool {
    words(name).any(|w| KEYS.contains(&w.to_lowercase().as_str()))
}

/// A header whose last word is a key (`GF_ID`, `station code`, `AgencyNum`, `Case No`)
/// and that counts nothing (`Number of IDs`): the column is that key, so its integers
/// label things even where they repeat (a key into another table).
pub(super) fn ends_in_a_key(name: &str) -> bool {
    let ws: Vec<String> = words(name).map(str::to_lowercase).collect();
    let Some(last) = ws.last() else {
        return false;
    };
    let key = KEYS.contains(&last.as_str())
        || (ws.len() >= 2 && matches!(last.as_str(), "num" | "nr" | "no"));
    key && !ws.iter().any(|w| {
        matches!(
            w.as_str(),
            "number" | "count" | "total" | "sum" | "amount" | "of" | "per" | "n"
        )
    })
}

/// The words of a header: split at non-alphanumerics and at lower-to-upper case
/// changes (`PassengerId` → `Passenger`, `Id`; `station_id` → `station`, `id`).
fn words(name: &str) -> impl Iterator<Item = &str> {
    let mut out = Vec::new();
    let mut start = None;
    let mut prev_lower = false;
    for (i, c) in name.char_indices() {
        if !c.is_alphanumeric() {
            if let Some(s) = start.take() {
                out.push(&name[s..i]);
            }
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower {
            if let Some(s) = start {
                out.push(&name[s..i]);
            }
            start = Some(i);
        } else if start.is_none() {
            start = Some(i);
        }
        prev_lower = c.is_lowercase();
    }
    if let Some(s) = start {
        out.push(&name[s..]);
    }
    out.into_iter()
}

/// `phrase` in `haystack` (lowercase), at word boundaries.
fn contains_word(haystack: &str, phrase: &str) -> bool {
    haystack.match_indices(phrase).any(|(i, _)| {
        let before = haystack[..i].chars().next_back();
        let after = haystack[i + phrase.len()..].chars().next();
        before.is_none_or(|c| !c.is_alphanumeric()) && after.is_none_or(|c| !c.is_alphanumeric())
    })
}

/// The value cells of one column beyond plain numbers, dates and text: boxed on the
/// column, as most columns have none of them.
#[derive(Default)]
pub(super) struct Cells {
    /// Candidate markers and their counts, in order seen.
    pub markers: Vec<(String, u64)>,
    /// More than [`MARKERS_MAX`] distinct candidates.
    pub markers_overflow: bool,
    /// Null words pandas keeps as text, with their counts.
    pub kept_nulls: Vec<(String, u64)>,
    /// Durations in seconds.
    pub seconds: Moments,
    /// Durations written `H:MM:SS`.
    pub clock: u64,
    /// Numbers with a footnote mark, their marks (at most [`MARKERS_MAX`]) and whether
    /// every one is whole.
    pub foot: Moments,
    pub marks: Vec<(String, u64)>,
    pub marks_overflow: bool,
    pub foot_fraction: bool,
    /// Numbers with a footnote mark written with separators (`1 234 p`): read with the
    /// column's other written numbers when the marks are taken.
    pub foot_written: numbers::Column,
}

/// Count `v` among `tokens`, keeping at most [`MARKERS_MAX`] distinct ones; false when
/// `v` is one too many.
fn count_token(tokens: &mut Vec<(String, u64)>, v: &str) -> bool {
    if let Some(m) = tokens.iter_mut().find(|(t, _)| t == v) {
        m.1 += 1;
    } else if tokens.len() < MARKERS_MAX {
        tokens.push((v.to_string(), 1));
    } else {
        return false;
    }
    true
}

impl Cells {
    pub(super) fn marker(&mut self, v: &str) {
        self.markers_overflow |= !count_token(&mut self.markers, v);
    }

    pub(super) fn footnoted(&mut self, n: Foot, mark: &str) {
        match n {
            Foot::Plain(x, integral) => {
                self.foot.add(x);
                self.foot_fraction |= !integral;
            }
            Foot::Written(w) => self.foot_written.add(&w),
        }
        self.marks_overflow |= !count_token(&mut self.marks, mark);
    }

    pub(super) fn kept_null(&mut self, v: &str) {
        match self.kept_nulls.iter_mut().find(|(t, _)| t == v) {
            Some(m) => m.1 += 1,
            None => self.kept_nulls.push((v.to_string(), 1)),
        }
    }

    /// Cells holding a number with a footnote mark.
    pub(super) fn foot_cells(&self) -> u64 {
        self.foot.n + self.foot_written.cells
    }

    /// Cells read as markers.
    pub(super) fn marker_cells(&self) -> u64 {
        self.markers.iter().map(|m| m.1).sum()
    }
}

/// A missing-value marker recorded on a column.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Missing {
    /// The token as written (`M`, `(NA)`, `..`).
    pub marker: String,
    /// Cells holding it.
    pub count: u64,
}

/// Settle a description's tables after their reader is done: the load lines name the
/// columns' missing markers, durations, footnoted numbers and time in other forms, and
/// the rules that read them are counted. One place for every table reader.
pub(crate) fn settle(content: &mut Content, applied: &Applied) {
    let settle_one = |cols: &[ColumnProfile], load: &mut Option<String>| {
        for c in cols {
            let markers: u64 = c.missing.iter().map(|m| m.count).sum();
            applied.add(ReadingRule::MissingMarkers, markers);
            applied.add(
                ReadingRule::Durations,
                u64::from(c.kind == ColumnType::Duration),
            );
            // Integers read as labels, footnoted numbers read as numbers.
            let label = c.kind == ColumnType::Identifier
                && c.min
                    .as_deref()
                    .and_then(super::column::parse_int)
                    .is_some();
            let footnoted = c.notation.iter().any(|n| n.starts_with(FOOTNOTE));
            applied.add(ReadingRule::Measures, u64::from(label || footnoted));
        }
        if let Some(l) = load
            .as_deref()
            .and_then(|l| super::options::complete(l, cols))
        {
            *load = Some(l);
        }
    };
    match content {
        Content::Table(t) => settle_one(&t.columns, &mut t.load),
        Content::Tables(ts) => {
            for t in &mut ts.tables {
                settle_one(&t.columns, &mut t.load);
            }
        }
        _ => {}
    }
}

/// The notation of numbers some of which carry a footnote mark, the marks following
/// (`footnote "r" "p"`).
pub(crate) const FOOTNOTE: &str = "footnote ";

/// Fewest digits of a zero-padded code: `05` is as often a month or a day as a code.
pub(super) const PADDED_MIN_WIDTH: u8 = 3;

/// The notation of integers written zero-padded to one width.
pub(crate) const ZERO_PADDED: &str = "zero-padded";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_are_short_and_wordless() {
        for m in [
            "M", "N/A", "--", "(NA)", "*", "..", "x", "n.a.", "(D)", "(X)", "s", "—", "MISSING",
            "Unknown",
        ] {
            assert!(marker_candidate(m), "{m}");
        }
        for t in ["Ohio", "A1", "n a", "(N/A)x", "pending", "12", "TIE"] {
            assert!(!marker_candidate(t), "{t}");
        }
    }

    #[test]
    fn durations_as_written() {
        assert_eq!(duration("00:00:07"), Some((7.0, Form::Clock)));
        assert_eq!(duration("1:02:03.5"), Some((3723.5, Form::Clock)));
        assert_eq!(duration("25:30:00"), Some((91800.0, Form::Clock)));
        assert_eq!(duration("1234:56:07"), Some((4445767.0, Form::Clock)));
        assert_eq!(duration("1h 30m"), Some((5400.0, Form::Spelled)));
        assert_eq!(duration("90 min"), Some((5400.0, Form::Spelled)));
        assert_eq!(duration("1 day 2 hours"), Some((93600.0, Form::Spelled)));
        assert_eq!(duration("PT1H30M"), Some((5400.0, Form::Spelled)));
        assert_eq!(duration("P1DT2H"), Some((93600.0, Form::Spelled)));
        for no in [
            "07:30",
            "12:61:00",
            "PT",
            "P",
            "3 hrs",
            "5 apples",
            "Paris",
            "1:2:3",
            "123456:00:00",
        ] {
            assert_eq!(duration(no), None, "{no}");
        }
    }

    #[test]
    fn footnote_marks_after_numbers() {
        let plain = |v| match footnoted(v) {
            Some((Foot::Plain(x, whole), m)) => Some((x, whole, m)),
            _ => None,
        };
        assert_eq!(plain("2023r"), Some((2023.0, true, "r")));
        assert_eq!(plain("12.5*"), Some((12.5, false, "*")));
        assert_eq!(plain("45†"), Some((45.0, true, "†")));
        assert_eq!(plain("310 (e)"), Some((310.0, true, "(e)")));
        // Separators: the written number, for the column's convention to read.
        let written = |v| match footnoted(v) {
            Some((Foot::Written(w), m)) => Some((w.value, m)),
            _ => None,
        };
        assert_eq!(written("1,234,567 p"), Some((1234567.0, "p")));
        assert_eq!(written("1 234 p"), Some((1234.0, "p")));
        assert_eq!(written("12 345(e)"), Some((12345.0, "(e)")));
        assert_eq!(written("1.234,5 r").map(|w| w.1), Some("r"));
        for no in [
            "r",
            "abc",
            "A12",
            "12AB",
            "(e)",
            "12 (ab)",
            "3.5.1x",
            "3 km p",
            "12 Main St",
            "$5 p",
            "5% r",
            "1..2 p",
        ] {
            assert_eq!(footnoted(no), None, "{no}");
        }
    }

    #[test]
    fn headers_name_spans_and_keys() {
        assert!(names_a_span("wait") && names_a_span("Trip Duration (s)"));
        assert!(names_a_span("run time") && !names_a_span("Time") && !names_a_span("Departure"));
        assert!(!names_a_span("Wavelength"));
        assert!(names_a_key("PassengerId") && names_a_key("station_id") && names_a_key("FIPS"));
        assert!(names_a_key("ZIP Code") && !names_a_key("Width") && !names_a_key("Video"));
        for key in [
            "GF_ID",
            "station code",
            "ResourceAgencyNum",
            "Case No",
            "zip",
        ] {
            assert!(ends_in_a_key(key), "{key}");
        }
        for not in [
            "Number of IDs",
            "ID count",
            "Num",
            "codes per site",
            "Width",
            "valid",
        ] {
            assert!(!ends_in_a_key(not), "{not}");
        }
    }
}
