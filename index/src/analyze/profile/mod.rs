//! Per-column profiles of tabular data: inferred type (with the date format), nulls,
//! distinct values (exact up to a cap, then a HyperLogLog estimate), range, moments, top
//! values and examples. Shared by every tabular analyzer.
//!
//! Numbers written with a convention (`1,234,567`, `12.5%`, `$3,100M`, `(1,234)`, `<10`)
//! are numbers too ([`numbers`]); distinct values are counted by hash ([`distinct`]).

mod distinct;
mod numbers;

use super::dates::{self, Day, Shape};
use distinct::Distinct;
use numbers::Moments;
use serde::{Deserialize, Serialize};
// foldhash: the date-shape map is touched by every date cell; SipHash showed in profiles.
use foldhash::HashMap;

/// A text column with at most this many distinct values (and repeats) is categorical.
const CATEGORICAL_MAX: u64 = 50;
/// Examples kept per column.
const EXAMPLES: usize = 3;
/// Top values kept for categorical columns.
const TOP: usize = 5;
/// Values longer than this are cut in examples and top values.
const VALUE_MAX_CHARS: usize = 80;

/// The inferred type of a column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ColumnType {
    /// Whole numbers.
    Integer,
    /// Numbers with a fraction or exponent (and integers mixed in).
    Float,
    /// true/false.
    Boolean,
    /// Calendar dates (format in [`ColumnProfile::date_format`]).
    Date,
    /// Date and time of day.
    Datetime,
    /// Text with few distinct, repeated values.
    Categorical,
    /// Nearly unique tokens without spaces: keys, codes, hashes.
    Identifier,
    /// Free text.
    Text,
    /// No non-null value.
    Empty,
}

impl ColumnType {
    /// Lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            ColumnType::Integer => "integer",
            ColumnType::Float => "float",
            ColumnType::Boolean => "boolean",
            ColumnType::Date => "date",
            ColumnType::Datetime => "datetime",
            ColumnType::Categorical => "categorical",
            ColumnType::Identifier => "identifier",
            ColumnType::Text => "text",
            ColumnType::Empty => "empty",
        }
    }
}

/// The profile of one column.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ColumnProfile {
    /// Header name (empty for an unnamed column).
    pub name: String,
    /// Inferred type.
    #[serde(rename = "type")]
    pub kind: ColumnType,
    /// Values that are empty or a null marker (NA, null, NaN, None, -).
    pub nulls: u64,
    /// Distinct non-null values; an estimate when `distinct_exact` is false.
    pub distinct: u64,
    /// Whether `distinct` is exact.
    pub distinct_exact: bool,
    /// Smallest value: numeric order for numbers, ISO `YYYY-MM-DD` for dates. A plain
    /// number as written; a number written with a [`notation`](Self::notation) as the
    /// number in its written unit (`-1234` for `(1,234)`, `3100` for `$3,100M`, `12.5` for
    /// `12.5%`, `10` for `<10`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<String>,
    /// Largest value, written like `min`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<String>,
    /// Mean of numeric columns: in the written unit, over the numeric part of censored
    /// values (`<10` counts as 10); with several scales in one column (`$850M`, `$3.1B`),
    /// `min`, `max`, `mean` and `std` are in units (850000000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean: Option<f64>,
    /// Sample standard deviation of numeric columns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub std: Option<f64>,
    /// How dates are written, strftime-like (`%m/%d/%Y`), for date and datetime columns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub date_format: Option<String>,
    /// Up to three distinct example values, in file order.
    pub examples: Vec<String>,
    /// Most frequent values with their counts (categorical and boolean columns).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub top: Vec<(String, u64)>,
    /// The type the file itself declares (SQL `DECIMAL(10,2)`, Parquet `INT64`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub declared_type: Option<String>,
    /// The unit, when a header or a units row states it (`°C`, `EUR`, `kg`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
    /// How numbers are written when not plainly (`thousands ","`, `thousands "."`,
    /// `thousands " "`, `decimal ","`, `percent`, `currency "$"`, `currency "USD"`,
    /// `scale "M"`, `negative "(…)"`, `censored "<"`, `censored ">"`): the conventions a
    /// reader must undo to get the values `min`/`max`/`mean` describe. All the column's
    /// numbers agree on one convention (a lone `1,234` reads as a thousand and more unless
    /// the column writes a decimal comma elsewhere).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notation: Vec<String>,
    /// Whether the figures (nulls, range, mean, std, top counts) come from a sample of
    /// the data rather than from every value.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub estimated: bool,
}

impl ColumnProfile {
    /// Every non-null value is distinct (a key or an identifier).
    pub fn is_unique(&self, rows: u64) -> bool {
        self.distinct_exact && self.nulls == 0 && rows > 1 && self.distinct == rows
    }

    /// The first and last day of a date or datetime column.
    pub fn date_range(&self) -> Option<(&str, &str)> {
        match self.kind {
            ColumnType::Date | ColumnType::Datetime => {
                Some((self.min.as_deref()?, self.max.as_deref()?))
            }
            _ => None,
        }
    }
}

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
pub(crate) struct ColumnBuilder {
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
}

fn is_null(v: &str) -> bool {
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
fn parse_int(v: &str) -> Option<f64> {
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
fn parse_float(v: &str) -> Option<f64> {
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

fn cut(v: &str) -> String {
    super::cut_chars(v, VALUE_MAX_CHARS)
}

/// `Temperature (°C)` → `°C`; `amount [EUR]` → `EUR`.
pub(crate) fn unit_from_name(name: &str) -> Option<String> {
    let n = name.trim_end();
    let (open, close) = match n.chars().last()? {
        ')' => ('(', ')'),
        ']' => ('[', ']'),
        _ => return None,
    };
    let start = n.rfind(open)?;
    let unit = n[start + 1..n.len() - close.len_utf8()].trim();
    let plausible = !unit.is_empty()
        && unit.chars().count() <= 12
        && start > 0
        && unit.split_whitespace().count() <= 2
        && !unit.chars().all(|c| c.is_ascii_digit());
    plausible.then(|| unit.to_string())
}

/// A number for `min`/`max`: the shortest text that reads back as the same f64.
fn show(x: f64) -> String {
    format!("{x}")
}

impl ColumnBuilder {
    pub(crate) fn new(name: impl Into<String>) -> Self {
        ColumnBuilder {
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
        }
    }

    /// Add one raw cell value.
    pub(crate) fn push(&mut self, raw: &str) {
        self.count += 1;
        let v = trim(raw);
        if is_null(v) {
            self.nulls += 1;
            return;
        }
        if let Some(x) = parse_int(v) {
            self.types.int += 1;
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
            }
        }
        let keep_names = CATEGORICAL_MAX as usize;
        if self.distinct.add(v, keep_names) && self.examples.len() < EXAMPLES {
            self.examples.push(cut(v));
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
    pub(crate) fn finish(self) -> ColumnProfile {
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
            v.into_iter().map(|(s, c)| (cut(&s), c)).collect()
        } else {
            Vec::new()
        };
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
        }
    }
}

/// Guess the type of a lone value, for header sniffing and type consistency: numbers
/// written with a notation (`1,234`, `12.5%`, `$3,100M`) are numbers.
pub(crate) fn value_type(v: &str) -> ColumnType {
    let v = v.trim();
    if parse_int(v).is_some() {
        ColumnType::Integer
    } else if parse_bool(v).is_some() {
        ColumnType::Boolean
    } else if parse_float(v).is_some() {
        ColumnType::Float
    } else if let Some(integral) = numbers::lone(v) {
        if integral {
            ColumnType::Integer
        } else {
            ColumnType::Float
        }
    } else if let Some(p) = dates::parse(v) {
        if p.time {
            ColumnType::Datetime
        } else {
            ColumnType::Date
        }
    } else {
        ColumnType::Text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile(vals: &[&str]) -> ColumnProfile {
        let mut b = ColumnBuilder::new("c");
        for v in vals {
            b.push(v);
        }
        b.finish()
    }

    #[test]
    fn infers_types() {
        assert_eq!(profile(&["1", "2", "-3"]).kind, ColumnType::Integer);
        assert_eq!(profile(&["1", "2.5", ""]).kind, ColumnType::Float);
        assert_eq!(profile(&["True", "False", "NA"]).kind, ColumnType::Boolean);
        assert_eq!(
            profile(&["2024-01-31", "2023/12/01"]).kind,
            ColumnType::Date
        );
        assert_eq!(
            profile(&["2024-01-31 10:00:00", "2024-01-31"]).kind,
            ColumnType::Datetime
        );
        assert_eq!(profile(&["a", "b", "a", "a"]).kind, ColumnType::Categorical);
        assert_eq!(profile(&["alpha", "beta", "gamma"]).kind, ColumnType::Text);
        assert_eq!(profile(&["", "NA"]).kind, ColumnType::Empty);
        assert_eq!(profile(&["inf", "nan", "x"]).kind, ColumnType::Text);
        let ids: Vec<String> = (0..20).map(|i| format!("pKPY{i}zJq")).collect();
        let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
        assert_eq!(profile(&ids).kind, ColumnType::Identifier);
    }

    #[test]
    fn dates_have_format_and_iso_range() {
        let p = profile(&["10/1/2014", "12/31/2014", "11/5/2014"]);
        assert_eq!(p.kind, ColumnType::Date);
        assert_eq!(p.date_format.as_deref(), Some("%m/%d/%Y"));
        assert_eq!(
            (p.min.as_deref(), p.max.as_deref()),
            (Some("2014-10-01"), Some("2014-12-31"))
        );
        // One value that can only be day-first makes the whole column day-first.
        let p = profile(&["01/02/2020", "25/02/2020"]);
        assert_eq!(p.date_format.as_deref(), Some("%d/%m/%Y"));
        assert_eq!(p.min.as_deref(), Some("2020-02-01"));
        let p = profile(&["Apr 13  2017 12:00:00 AM", "Apr 14  2017 01:15:00 PM"]);
        assert_eq!(p.kind, ColumnType::Datetime);
        assert_eq!(p.date_range(), Some(("2017-04-13", "2017-04-14")));
    }

    #[test]
    fn stats_are_right() {
        let p = profile(&["10", "2", "", "4", "4"]);
        assert_eq!(p.nulls, 1);
        assert_eq!(p.distinct, 3);
        assert_eq!(p.min.as_deref(), Some("2"));
        assert_eq!(p.max.as_deref(), Some("10"));
        assert_eq!(p.mean, Some(5.0));
        assert_eq!(p.examples, vec!["10", "2", "4"]);
        let c = profile(&["x", "y", "x", "x", "y", "z"]);
        assert_eq!(
            c.top,
            vec![("x".into(), 3), ("y".into(), 2), ("z".into(), 1)]
        );
    }

    #[test]
    fn distinct_beyond_the_cap_is_estimated() {
        let mut b = ColumnBuilder::new("n");
        for i in 0..50_000 {
            b.push(&format!("v{i}"));
        }
        let p = b.finish();
        assert!(!p.distinct_exact);
        let err = (p.distinct as f64 - 50_000.0).abs() / 50_000.0;
        assert!(err < 0.05, "estimate {} too far from 50000", p.distinct);
    }

    #[test]
    fn written_numbers_are_numbers_with_their_notation() {
        let p = profile(&["1,234,567", "12,345", "", "999"]);
        assert_eq!(p.kind, ColumnType::Integer);
        assert_eq!(p.notation, ["thousands \",\""]);
        assert_eq!(
            (p.min.as_deref(), p.max.as_deref()),
            (Some("999"), Some("1234567"))
        );
        assert_eq!(p.mean, Some((1234567.0 + 12345.0 + 999.0) / 3.0));
        assert_eq!(p.examples, ["1,234,567", "12,345", "999"]);
        let p = profile(&["1.234.567,89", "1.234", "12,5", "7"]);
        assert_eq!(p.kind, ColumnType::Float);
        assert_eq!(p.notation, ["thousands \".\"", "decimal \",\""]);
        assert_eq!(
            (p.min.as_deref(), p.max.as_deref()),
            (Some("7"), Some("1234567.89"))
        );
        // Dot-grouped integers, the lone `1.234` read as the rest.
        let p = profile(&["1.234", "15.678", "2.345.678"]);
        assert_eq!(p.kind, ColumnType::Integer);
        assert_eq!(p.max.as_deref(), Some("2345678"));
        let p = profile(&["12.5%", "3%", "NA", "100%"]);
        assert_eq!(
            (p.kind, p.notation.clone()),
            (ColumnType::Float, vec!["percent".to_string()])
        );
        assert_eq!(
            (p.min.as_deref(), p.max.as_deref()),
            (Some("3"), Some("100"))
        );
        let p = profile(&["$3,100M", "$950M", "$12M"]);
        assert_eq!(p.kind, ColumnType::Integer);
        assert_eq!(
            p.notation,
            ["thousands \",\"", "currency \"$\"", "scale \"M\""]
        );
        assert_eq!(
            (p.min.as_deref(), p.max.as_deref()),
            (Some("12"), Some("3100"))
        );
        assert_eq!(p.mean, Some(1354.0));
        let p = profile(&["(1,234)", "560", "2,000"]);
        assert_eq!(p.kind, ColumnType::Integer);
        assert_eq!(p.notation, ["thousands \",\"", "negative \"(…)\""]);
        assert_eq!(
            (p.min.as_deref(), p.max.as_deref()),
            (Some("-1234"), Some("2000"))
        );
        let p = profile(&["<10", "15", "23", ">2000"]);
        assert_eq!(p.kind, ColumnType::Integer);
        assert_eq!(p.notation, ["censored \"<\"", "censored \">\""]);
        assert_eq!(
            (p.min.as_deref(), p.max.as_deref()),
            (Some("10"), Some("2000"))
        );
        assert_eq!(p.mean, Some(512.0));
        // A plain extreme stays as written (and wins a tie).
        let p = profile(&["<0.5", "0.50", "1,200.75"]);
        assert_eq!(
            (p.kind, p.min.as_deref(), p.max.as_deref()),
            (ColumnType::Float, Some("0.50"), Some("1200.75"))
        );
        let p = profile(&["0.50", "0.25", "<0.75"]);
        assert_eq!(p.max.as_deref(), Some("0.75"));
        assert_eq!(p.min.as_deref(), Some("0.25"));
    }

    #[test]
    fn number_lookalikes_stay_text() {
        let kind = |v: &[&str]| profile(v).kind;
        assert_eq!(kind(&["1,2,3", "4,5", "6,7,8"]), ColumnType::Text);
        assert_eq!(kind(&["1.2.3", "1.10.0", "2.0.1"]), ColumnType::Text);
        assert_eq!(
            kind(&["555-1234", "(555) 123-4567", "555-9876"]),
            ColumnType::Text
        );
        assert_eq!(kind(&["50% off", "20% off", "free"]), ColumnType::Text);
        assert_eq!(kind(&["1,234", "1.234,5", "1,234.5"]), ColumnType::Text);
        assert_eq!(kind(&["$5", "€7", "£9"]), ColumnType::Text);
        // Codes with leading zeros are not written numbers (the plain reading of `02134`
        // as an integer is unchanged: it is how pandas reads it).
        let p = profile(&["01,234", "02,345", "03,456"]);
        assert_eq!(p.kind, ColumnType::Text);
        assert!(p.notation.is_empty());
        // Plain floats with three decimals stay plain.
        let p = profile(&["1.234", "2.5", "3.125"]);
        assert_eq!((p.kind, p.notation.is_empty()), (ColumnType::Float, true));
        assert_eq!(p.max.as_deref(), Some("3.125"));
        // Mostly words with a few written numbers: text, and no notation claimed.
        let p = profile(&["about 5", "$5", "n/a", "many"]);
        assert!(p.notation.is_empty() && p.min.is_none());
    }

    #[test]
    fn lone_values_type_like_columns() {
        for (v, t) in [
            ("1,234,567", ColumnType::Integer),
            ("1.234.567,89", ColumnType::Float),
            ("12.5%", ColumnType::Float),
            ("$3,100M", ColumnType::Integer),
            ("(1,234)", ColumnType::Integer),
            ("<10", ColumnType::Integer),
            ("1,2,3", ColumnType::Text),
            ("1.2.3", ColumnType::Text),
            ("Revenue ($M)", ColumnType::Text),
            ("% change", ColumnType::Text),
            ("2024-01-31", ColumnType::Date),
        ] {
            assert_eq!(value_type(v), t, "{v}");
        }
    }

    #[test]
    fn units_from_headers() {
        assert_eq!(unit_from_name("Temperature (°C)").as_deref(), Some("°C"));
        assert_eq!(unit_from_name("amount [EUR]").as_deref(), Some("EUR"));
        assert_eq!(unit_from_name("(unnamed)"), None);
        assert_eq!(unit_from_name("value (2019)"), None);
    }
}
