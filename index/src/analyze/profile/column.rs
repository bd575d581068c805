//! One column's accumulator: every cell typed (plain numbers first, then written
//! numbers, dates, text), counted and hashed.

use super::dates::{self, Day, Shape};
use super::distinct::Distinct;
use super::numbers::{self, Moments};
use super::timecells::TimeCells;
use super::{
    unit_from_name, ColumnProfile, ColumnType, CATEGORICAL_MAX, EXAMPLES, TOP, VALUE_MAX_CHARS,
};
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
        }
    }

    /// Add one raw cell value.
    pub(super) fn push(&mut self, raw: &str) {
        self.count += 1;
        let v = trim(raw);
        if is_null(v) {
            self.nulls += 1;
            return;
        }
        if let Some(x) = parse_int(v) {
            self.types.int += 1;
            self.time.int(v, x);
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
            } else if let Some(p) = dates::parse(v) {
                if p.time {
                    self.types.datetime += 1;
                } else {
                    self.types.date += 1;
                }
                *self.shapes.entry(p.shape).or_default() += 1;
                self.days.add(p.day);
                self.days_dmy.add(p.alt.unwrap_or(p.day));
            } else {
                self.types.text += 1;
                self.time.text(v);
            }
        }
        let keep_names = CATEGORICAL_MAX as usize;
        if self.distinct.add(v, keep_names) && self.examples.len() < EXAMPLES {
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
    pub(super) fn finish(self) -> ColumnProfile {
        let mut t = self.types;
        let non_null = self.count - self.nulls;
        let (distinct, distinct_exact) = self.distinct.count();
        // Written numbers count as numbers when they agree on one convention.
        let written = self
            .written
            .as_ref()
            .map(|w| (w.cells, w.resolve(t.int + t.float, t.float)));
        let resolved = match written {
            Some((_, Some(r))) => Some(r),
            Some((cells, None)) => {
                t.text += cells;
                None
            }
            None => None,
        };
        let written_cells = resolved.as_ref().map_or(0, |r| r.moments.n);
        let kind = if non_null == 0 {
            ColumnType::Empty
        } else if t.int + written_cells == non_null && resolved.as_ref().is_none_or(|r| r.integral)
        {
            ColumnType::Integer
        } else if t.int + t.float + written_cells == non_null {
            ColumnType::Float
        } else if t.boolean == non_null {
            ColumnType::Boolean
        } else if t.date == non_null {
            ColumnType::Date
        } else if t.date + t.datetime == non_null {
            ColumnType::Datetime
        } else if distinct_exact && distinct <= CATEGORICAL_MAX && distinct * 2 <= non_null {
            ColumnType::Categorical
        } else if !self.has_space && non_null >= 10 && distinct * 10 >= non_null * 9 {
            ColumnType::Identifier
        } else {
            ColumnType::Text
        };
        let numeric = matches!(kind, ColumnType::Integer | ColumnType::Float);
        let is_date = matches!(kind, ColumnType::Date | ColumnType::Datetime);
        let mut date_format = None;
        let mut moments = self.plain;
        let mut notation = Vec::new();
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
                notation = r.notation;
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
        } else {
            (None, None)
        };
        let (mean, std) = if numeric && moments.n > 0 {
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
        let order = self.time.order();
        let mut kind = kind;
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
            unit: unit_from_name(&self.name),
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
