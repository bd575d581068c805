//! One column's accumulator: every cell typed (plain numbers first, then written
//! numbers, dates, text), counted and hashed.

use super::dates::{self, Day, Shape};
use super::distinct::Distinct;
use super::numbers::{self, Moments};
use super::timecells::TimeCells;
use super::values::{self, Cells, Form, Missing, MARKERS_MAX};
use super::{
    unit_from_name, ColumnProfile, ColumnType, CATEGORICAL_MAX, EXAMPLES, TOP, VALUE_MAX_CHARS,
};
use crate::analyze::rules::{self, ReadingRule};
// foldhash: the date-shape map is touched by every date cell; SipHash showed in profiles.
use crate::text_util::cut_chars;
use foldhash::HashMap;

#[derive(Default, Clone, Copy)]
struct TypeCounts {
    int: u64,
    float: u64,
    boolean: u64,
    date: u64,
    datetime: u64,
    duration: u64,
    text: u64,
}

#[derive(Default, Clone, Copy)]
struct DayRange(Option<(Day, Day)>);

impl DayRange {
    fn add(&mut self, d: Day) {
        self.0 = Some(match self.0 {
            None => (d, d),
            Some((lo, hi)) => (lo.min(d), hi.max(d)),
        });
    }
}

/// Accumulates one column's values.
pub(super) struct Column {
    name: String,
    count: u64,
    nulls: u64,
    types: TypeCounts,
    distinct: Distinct,
    examples: Vec<String>,
    has_space: bool,
    /// Plainly written numbers.
    plain: Moments,
    /// The smallest and largest plain numbers as written (buffers reused: a sorted
    /// column sets a new extreme on every row).
    min_text: String,
    max_text: String,
    /// Numbers written with a notation; boxed, as most columns have none.
    written: Option<Box<numbers::Column>>,
    shapes: HashMap<Shape, u64>,
    /// Dates read as written (month first for ambiguous slashes).
    days: DayRange,
    /// Dates read day first where that is possible.
    days_dmy: DayRange,
    /// What the cells say about time in other forms (`200001`, `2019r`, `1987.042`).
    time: TimeCells,
    /// Integers written with a leading zero (`00123`).
    padded: u64,
    /// The length of every integer as written: 0 before the first, `u8::MAX` when
    /// they differ.
    int_width: u8,
    /// Durations, marker candidates, null words pandas keeps; boxed, as most columns
    /// have none.
    cells: Option<Box<Cells>>,
    /// A text cell of no other reading (not a date, duration, footnoted number, time
    /// form or missing marker) was seen: the column can only be text, a category or
    /// an identifier, so the readings that need every cell of a type stop looking.
    free_text: bool,
}

pub(crate) fn is_null(v: &str) -> bool {
    v.len() <= 4
        && matches!(
            v,
            "" | "NA"
                | "N/A"
                | "n/a"
                | "na"
                | "null"
                | "NULL"
                | "Null"
                | "NaN"
                | "nan"
                | "None"
                | "none"
                | "-"
        )
}

pub(crate) fn parse_bool(v: &str) -> Option<bool> {
    match v {
        "true" | "True" | "TRUE" => Some(true),
        "false" | "False" | "FALSE" => Some(false),
        _ => None,
    }
}

/// A plain integer (sign, up to 19 digits) and its value.
#[inline]
pub(super) fn parse_int(v: &str) -> Option<f64> {
    let b = v.as_bytes();
    let (neg, d) = match b.first()? {
        b'-' => (true, &b[1..]),
        b'+' => (false, &b[1..]),
        _ => (false, b),
    };
    if d.is_empty() || d.len() > 19 {
        return None;
    }
    let mut n: u64 = 0;
    for &c in d {
        let x = c.wrapping_sub(b'0');
        if x > 9 {
            return None;
        }
        n = n * 10 + u64::from(x);
    }
    // u64 → f64 rounds to nearest, as parsing the digits as f64 would.
    let x = n as f64;
    Some(if neg { -x } else { x })
}

/// A plain float and its value (`inf` and `nan` spelled out are text).
#[inline]
pub(super) fn parse_float(v: &str) -> Option<f64> {
    let b = v.as_bytes();
    let mut digit = false;
    for c in b {
        match c {
            b'0'..=b'9' => digit = true,
            b'.' | b'-' | b'+' | b'e' | b'E' => {}
            _ => return None,
        }
    }
    if digit {
        v.parse().ok()
    } else {
        None
    }
}

/// `str::trim`, skipping the Unicode scan when the ends are plain ASCII.
#[inline]
fn trim(v: &str) -> &str {
    match (v.as_bytes().first(), v.as_bytes().last()) {
        (Some(&a), Some(&z)) if a > b' ' && a < 0x80 && z > b' ' && z < 0x80 => v,
        _ => v.trim(),
    }
}

/// A number for `min`/`max`: the shortest text that reads back as the same f64.
fn show(x: f64) -> String {
    format!("{x}")
}

impl Column {
    pub(super) fn new(name: impl Into<String>) -> Self {
        Column {
            name: name.into(),
            count: 0,
            nulls: 0,
            types: TypeCounts::default(),
            distinct: Distinct::default(),
            examples: Vec::new(),
            has_space: false,
            plain: Moments::default(),
            min_text: String::new(),
            max_text: String::new(),
            written: None,
            shapes: HashMap::default(),
            days: DayRange::default(),
            days_dmy: DayRange::default(),
            time: TimeCells::new(),
            padded: 0,
            int_width: 0,
            cells: None,
            free_text: false,
        }
    }

    /// Add one raw cell value.
    pub(super) fn push(&mut self, raw: &str) {
        self.count += 1;
        let v = trim(raw);
        if is_null(v) {
            self.nulls += 1;
            if values::pandas_keeps(v) {
                self.cells.get_or_insert_default().kept_null(v);
            }
            return;
        }
        if let Some(x) = parse_int(v) {
            self.types.int += 1;
            self.time.int(v, x);
            let w = u8::try_from(v.len()).unwrap_or(u8::MAX);
            if self.int_width == 0 {
                self.int_width = w;
            } else if self.int_width != w {
                self.int_width = u8::MAX;
            }
            if v.len() > 1 && v.starts_with('0') {
                self.padded += 1;
            }
            self.plain_number(x, v);
        } else if parse_bool(v).is_some() {
            self.types.boolean += 1;
        } else if let Some(x) = parse_float(v) {
            // `1.234` may be a dot-grouped 1234: the column decides (see `numbers`).
            match numbers::ambiguous_dot(v)
                .then(|| numbers::parse(v))
                .flatten()
            {
                Some(w) => self.written.get_or_insert_default().add(&w),
                None => {
                    self.types.float += 1;
                    self.time.float(x);
                    if x.is_finite() {
                        self.plain_number(x, v);
                    }
                }
            }
        } else {
            if !self.has_space && v.contains(char::is_whitespace) {
                self.has_space = true;
            }
            if let Some(w) = numbers::parse(v) {
                self.written.get_or_insert_default().add(&w);
            } else if self.free_text {
                self.types.text += 1;
            } else if let Some(p) = dates::parse(v) {
                if p.time {
                    self.types.datetime += 1;
                } else {
                    self.types.date += 1;
                }
                *self.shapes.entry(p.shape).or_default() += 1;
                self.days.add(p.day);
                self.days_dmy.add(p.alt.unwrap_or(p.day));
            } else if let Some((secs, form)) = values::duration(v) {
                self.types.duration += 1;
                let c = self.cells.get_or_insert_default();
                c.seconds.add(secs);
                c.clock += u64::from(form == Form::Clock);
            } else if let Some((n, mark)) = values::footnoted(v) {
                self.types.text += 1;
                // `2019r` is a marked year to the time forms as well.
                self.time.text(v);
                self.cells.get_or_insert_default().footnoted(n, mark);
            } else {
                self.types.text += 1;
                let timed = self.time.text(v);
                let marker = values::marker_candidate(v) && {
                    let c = self.cells.get_or_insert_default();
                    c.marker(v);
                    !c.markers_overflow
                };
                self.free_text = !timed && !marker;
            }
        }
        let keep_names = CATEGORICAL_MAX as usize;
        // Room for examples that turn out to be markers.
        if self.distinct.add(v, keep_names) && self.examples.len() < EXAMPLES + MARKERS_MAX {
            self.examples.push(cut_chars(v, VALUE_MAX_CHARS));
        }
    }

    #[inline]
    fn plain_number(&mut self, x: f64, v: &str) {
        if self.plain.n == 0 || x < self.plain.min {
            self.min_text.clear();
            self.min_text.push_str(v);
        }
        if self.plain.n == 0 || x > self.plain.max {
            self.max_text.clear();
            self.max_text.push_str(v);
        }
        self.plain.add(x);
    }

    /// The finished profile.
    pub(super) fn finish(mut self) -> ColumnProfile {
        let mut t = self.types;
        let mut non_null = self.count - self.nulls;
        let (mut distinct, distinct_exact) = self.distinct.count();
        let mut cells = self.cells.take().unwrap_or_default();
        // Clock values are durations under a header naming a span, or past a day.
        let durations = t.duration > 0
            && rules::on(ReadingRule::Durations)
            && (cells.clock == 0
                || values::names_a_span(&self.name)
                || cells.seconds.max >= values::DAY);
        if !durations {
            t.text += t.duration;
            t.duration = 0;
        }
        // Footnoted numbers count as numbers when the marks are few and mark a minority.
        let foot = cells.foot_cells();
        let mut footnote = None;
        if foot > 0
            && !cells.marks_overflow
            && foot * 2 < t.int + t.float + self.written.as_ref().map_or(0, |w| w.cells)
            && rules::on(ReadingRule::Measures)
        {
            t.text -= foot;
            let plain = cells.foot.n;
            if cells.foot_fraction {
                t.float += plain;
            } else {
                t.int += plain;
            }
            if plain > 0 {
                if cells.foot.min < self.plain.min || self.plain.n == 0 {
                    self.min_text = show(cells.foot.min);
                }
                if cells.foot.max > self.plain.max || self.plain.n == 0 {
                    self.max_text = show(cells.foot.max);
                }
                self.plain.merge(&cells.foot);
            }
            // Written ones join the column's written numbers: one convention for all.
            if cells.foot_written.cells > 0 {
                let w = std::mem::take(&mut cells.foot_written);
                self.written.get_or_insert_default().merge(&w);
            }
            let marks: Vec<String> = cells.marks.iter().map(|(m, _)| format!("{m:?}")).collect();
            footnote = Some(format!("{}{}", values::FOOTNOTE, marks.join(" ")));
        }
        // Written numbers count as numbers when they agree on one convention.
        let written = self.written.as_ref().map(|w| {
            let small_ints =
                t.int >= 3 && t.float == 0 && self.plain.min > -1000.0 && self.plain.max < 1000.0;
            (w.cells, w.resolve(t.int + t.float, t.float, small_ints))
        });
        let resolved = match written {
            Some((_, Some(r))) => Some(r),
            Some((cells, None)) => {
                t.text += cells;
                None
            }
            None => None,
        };
        let written_cells = resolved.as_ref().map_or(0, |r| r.moments.n);
        let integral = resolved.as_ref().is_none_or(|r| r.integral);
        let measures = rules::on(ReadingRule::Measures);
        let decide = |t: &TypeCounts, non_null: u64, distinct: u64| {
            let numbers = t.int + t.float + written_cells;
            if non_null == 0 {
                ColumnType::Empty
            } else if t.int + written_cells == non_null && integral {
                ColumnType::Integer
            } else if numbers == non_null {
                ColumnType::Float
            } else if t.boolean == non_null {
                ColumnType::Boolean
            } else if t.date == non_null {
                ColumnType::Date
            } else if t.date + t.datetime == non_null {
                ColumnType::Datetime
            } else if t.duration == non_null {
                ColumnType::Duration
            } else if distinct_exact && distinct <= CATEGORICAL_MAX && distinct * 2 <= non_null {
                ColumnType::Categorical
            } else if !self.has_space
                && non_null >= 10
                && distinct * 10 >= non_null * 9
                && !(measures && numbers * 2 > non_null)
            {
                // Mostly numbers are a measure some cells kept from being numeric.
                ColumnType::Identifier
            } else {
                ColumnType::Text
            }
        };
        let mut kind = decide(&t, non_null, distinct);
        // Markers: the column read without them must be numbers, dates or durations.
        let marker_cells = cells.marker_cells();
        let mut missing = Vec::new();
        if marker_cells > 0
            && !cells.markers_overflow
            && marker_cells * 2 < non_null
            && rules::on(ReadingRule::MissingMarkers)
        {
            let mut u = t;
            u.text -= marker_cells;
            let d = distinct.saturating_sub(cells.markers.len() as u64);
            let k = decide(&u, non_null - marker_cells, d);
            if takes_markers(k) {
                (t, kind, distinct) = (u, k, d);
                non_null -= marker_cells;
                self.nulls += marker_cells;
                self.examples
                    .retain(|e| !cells.markers.iter().any(|(m, _)| m == e));
                missing.extend(cells.markers.iter().map(|(m, n)| Missing {
                    marker: m.clone(),
                    count: *n,
                }));
            }
        }
        if takes_markers(kind) {
            missing.extend(cells.kept_nulls.iter().map(|(m, n)| Missing {
                marker: m.clone(),
                count: *n,
            }));
        }
        self.examples.truncate(EXAMPLES);
        // Integers that label: zero-padded to one width, nearly unique under a key's
        // name, or repeated under a header that is a key's name (a key into another
        // table).
        let mut labels = Vec::new();
        if measures && kind == ColumnType::Integer && written_cells == 0 {
            let padded = self.padded > 0
                && self.int_width != u8::MAX
                && self.int_width >= values::PADDED_MIN_WIDTH;
            let keyed = self.plain.min >= 0.0
                && ((values::names_a_key(&self.name)
                    && non_null >= 10
                    && distinct * 10 >= non_null * 9)
                    || (values::ends_in_a_key(&self.name) && distinct >= 2 && distinct < non_null));
            if padded {
                labels.push(values::ZERO_PADDED.to_string());
            }
            if padded || keyed {
                kind = ColumnType::Identifier;
            }
        }
        let numeric = matches!(kind, ColumnType::Integer | ColumnType::Float);
        let is_date = matches!(kind, ColumnType::Date | ColumnType::Datetime);
        let mut date_format = None;
        let mut moments = self.plain;
        let mut notation = labels;
        notation.extend(footnote.filter(|_| numeric));
        let (min, max) = if numeric {
            let mut min = (self.plain.n > 0).then_some(self.min_text);
            let mut max = (self.plain.n > 0).then_some(self.max_text);
            if let Some(r) = resolved {
                let w = r.moments;
                if w.n > 0 && (min.is_none() || w.min < moments.min) {
                    min = Some(show(w.min));
                }
                if w.n > 0 && (max.is_none() || w.max > moments.max) {
                    max = Some(show(w.max));
                }
                moments.merge(&w);
                notation.splice(0..0, r.notation);
            }
            (min, max)
        } else if is_date {
            // The dominant shape; slashes are read day first if any value demands it.
            let day_first = self.shapes.contains_key(&Shape::SlashDmy);
            let mut shapes: Vec<(Shape, u64)> = self.shapes.iter().map(|(s, n)| (*s, *n)).collect();
            shapes.sort_by_key(|(s, n)| (std::cmp::Reverse(*n), s.pattern()));
            let mut pattern = shapes.first().map_or("", |(s, _)| s.pattern()).to_string();
            if day_first && pattern == Shape::SlashMdy.pattern() {
                pattern = Shape::SlashDmy.pattern().to_string();
            }
            if kind == ColumnType::Datetime {
                pattern.push_str(" %H:%M…");
            }
            date_format = Some(pattern);
            let range = if day_first { self.days_dmy } else { self.days };
            match range.0 {
                Some((lo, hi)) => (Some(lo.iso()), Some(hi.iso())),
                None => (None, None),
            }
        } else if kind == ColumnType::Identifier && self.plain.n > 0 && t.int == non_null {
            // Labels written as integers keep their range (`00123` … `00999`).
            (Some(self.min_text), Some(self.max_text))
        } else if kind == ColumnType::Duration {
            moments = cells.seconds;
            (Some(show(moments.min)), Some(show(moments.max)))
        } else {
            (None, None)
        };
        let timed = kind == ColumnType::Duration;
        let (mean, std) = if (numeric || timed) && moments.n > 0 {
            let std = (moments.n > 1).then(|| (moments.m2 / (moments.n - 1) as f64).sqrt());
            (Some(moments.mean), std)
        } else {
            (None, None)
        };
        let top = if matches!(kind, ColumnType::Categorical | ColumnType::Boolean) {
            let mut v = self.distinct.values();
            // Count descending, then value, so that ties render the same on every run.
            v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            v.truncate(TOP);
            v.into_iter()
                .map(|(s, c)| (cut_chars(&s, VALUE_MAX_CHARS), c))
                .collect()
        } else {
            Vec::new()
        };
        let order = self.time.order(non_null);
        let (mut min, mut max, mut mean, mut std) = (min, max, mean, std);
        let mut time_span = None;
        if let Some(r) = self.time.read(
            &self.name,
            kind,
            non_null,
            distinct,
            (min.as_deref(), max.as_deref()),
        ) {
            if r.kind != kind {
                (mean, std) = (None, None);
            }
            kind = r.kind;
            date_format = Some(r.date_format);
            if let Some((lo, hi)) = r.range {
                (min, max) = (Some(lo), Some(hi));
            }
            time_span = Some((r.span.0.iso(), r.span.1.iso()));
        }
        ColumnProfile {
            unit: if timed {
                Some("s".to_string())
            } else {
                unit_from_name(&self.name)
            },
            missing,
            name: self.name,
            kind,
            nulls: self.nulls,
            distinct,
            distinct_exact,
            min,
            max,
            mean,
            std,
            date_format,
            examples: self.examples,
            top,
            declared_type: None,
            notation,
            estimated: false,
            exact: Vec::new(),
            time_span,
            order,
        }
    }
}

/// Types whose cells a missing-value marker can stand among.
fn takes_markers(kind: ColumnType) -> bool {
    matches!(
        kind,
        ColumnType::Integer
            | ColumnType::Float
            | ColumnType::Date
            | ColumnType::Datetime
            | ColumnType::Duration
    )
}
