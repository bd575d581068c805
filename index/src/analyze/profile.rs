//! Per-column profiles of tabular data: inferred type (with the date format), nulls,
//! distinct values (exact up to a cap, then a HyperLogLog estimate), range, moments, top
//! values and examples. Shared by every tabular analyzer.

use super::dates::{self, Day, Shape};
use cardinality_estimator::CardinalityEstimator;
use serde::{Deserialize, Serialize};
// foldhash: value counting hashes every cell; SipHash showed in profiles.
use foldhash::HashMap;

/// Distinct values are counted exactly up to this many; past it, estimated.
const DISTINCT_CAP: usize = 10_000;
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
    /// Smallest value: numeric order for numbers, ISO `YYYY-MM-DD` for dates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<String>,
    /// Largest value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<String>,
    /// Mean of numeric columns.
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
    /// How numbers are written when not plainly (`thousands ","`, `decimal ","`,
    /// `percent`, `currency "$"`, `scale "M"`, `negative "(…)"`, `censored "<"`): the
    /// conventions a reader must undo to get the values `min`/`max`/`mean` describe.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notation: Vec<String>,
    /// Whether the figures (nulls, range, mean, std, top counts) come from a sample of
    /// the data rather than from every value.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub estimated: bool,
    /// With `estimated`: the figures that are exact all the same, read from the file's
    /// own whole-file statistics (a Parquet footer): `nulls`, `range`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exact: Vec<String>,
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
    distinct: HashMap<String, u64>,
    overflow: Option<Box<CardinalityEstimator<str>>>,
    examples: Vec<String>,
    has_space: bool,
    // Welford's running mean and variance of numeric values.
    n_num: u64,
    mean: f64,
    m2: f64,
    min_num: Option<(f64, String)>,
    max_num: Option<(f64, String)>,
    shapes: HashMap<Shape, u64>,
    /// Dates read as written (month first for ambiguous slashes).
    days: DayRange,
    /// Dates read day first where that is possible.
    days_dmy: DayRange,
}

pub(crate) fn is_null(v: &str) -> bool {
    matches!(
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

fn is_integer(v: &str) -> bool {
    let d = v.strip_prefix(['-', '+']).unwrap_or(v);
    !d.is_empty() && d.len() <= 19 && d.bytes().all(|b| b.is_ascii_digit())
}

fn parse_float(v: &str) -> Option<f64> {
    // Rust accepts "inf" and "nan" spelled out; tables that hold such words are text.
    let b = v.as_bytes();
    let digit = b.iter().any(|c| c.is_ascii_digit());
    let alpha_ok = b
        .iter()
        .all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'-' | b'+' | b'e' | b'E'));
    if digit && alpha_ok {
        v.parse().ok()
    } else {
        None
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

impl ColumnBuilder {
    pub(crate) fn new(name: impl Into<String>) -> Self {
        ColumnBuilder {
            name: name.into(),
            count: 0,
            nulls: 0,
            types: TypeCounts::default(),
            distinct: HashMap::default(),
            overflow: None,
            examples: Vec::new(),
            has_space: false,
            n_num: 0,
            mean: 0.0,
            m2: 0.0,
            min_num: None,
            max_num: None,
            shapes: HashMap::default(),
            days: DayRange::default(),
            days_dmy: DayRange::default(),
        }
    }

    /// Add one raw cell value.
    pub(crate) fn push(&mut self, raw: &str) {
        self.count += 1;
        let v = raw.trim();
        if is_null(v) {
            self.nulls += 1;
            return;
        }
        if is_integer(v) {
            self.types.int += 1;
            self.numeric(v);
        } else if parse_bool(v).is_some() {
            self.types.boolean += 1;
        } else if parse_float(v).is_some() {
            self.types.float += 1;
            self.numeric(v);
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
        if !self.has_space && v.contains(char::is_whitespace) {
            self.has_space = true;
        }
        if let Some(c) = self.distinct.get_mut(v) {
            *c += 1;
        } else if self.distinct.len() < DISTINCT_CAP {
            self.distinct.insert(v.to_string(), 1);
            if self.examples.len() < EXAMPLES {
                self.examples.push(cut(v));
            }
        } else {
            let est = self.overflow.get_or_insert_with(|| {
                let mut e = Box::new(CardinalityEstimator::<str>::new());
                for k in self.distinct.keys() {
                    e.insert(k.as_str());
                }
                e
            });
            est.insert(v);
        }
    }

    fn numeric(&mut self, v: &str) {
        let Ok(x) = v.parse::<f64>() else { return };
        if !x.is_finite() {
            return;
        }
        self.n_num += 1;
        let d = x - self.mean;
        self.mean += d / self.n_num as f64;
        self.m2 += d * (x - self.mean);
        if self.min_num.as_ref().is_none_or(|(m, _)| x < *m) {
            self.min_num = Some((x, v.to_string()));
        }
        if self.max_num.as_ref().is_none_or(|(m, _)| x > *m) {
            self.max_num = Some((x, v.to_string()));
        }
    }

    /// The finished profile.
    pub(crate) fn finish(self) -> ColumnProfile {
        let t = self.types;
        let non_null = self.count - self.nulls;
        let (distinct, distinct_exact) = match &self.overflow {
            None => (self.distinct.len() as u64, true),
            Some(e) => ((e.estimate() as u64).max(DISTINCT_CAP as u64), false),
        };
        let kind = if non_null == 0 {
            ColumnType::Empty
        } else if t.int == non_null {
            ColumnType::Integer
        } else if t.int + t.float == non_null {
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
        let (min, max) = if numeric {
            (self.min_num.map(|(_, s)| s), self.max_num.map(|(_, s)| s))
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
        let (mean, std) = if numeric && self.n_num > 0 {
            let std = (self.n_num > 1).then(|| (self.m2 / (self.n_num - 1) as f64).sqrt());
            (Some(self.mean), std)
        } else {
            (None, None)
        };
        let top = if matches!(kind, ColumnType::Categorical | ColumnType::Boolean) {
            let mut v: Vec<(String, u64)> = self.distinct.into_iter().collect();
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
            notation: Vec::new(),
            estimated: false,
            exact: Vec::new(),
        }
    }
}

/// Guess the type of a lone value, for header sniffing.
pub(crate) fn value_type(v: &str) -> ColumnType {
    let v = v.trim();
    if is_integer(v) {
        ColumnType::Integer
    } else if parse_bool(v).is_some() {
        ColumnType::Boolean
    } else if parse_float(v).is_some() {
        ColumnType::Float
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
    fn units_from_headers() {
        assert_eq!(unit_from_name("Temperature (°C)").as_deref(), Some("°C"));
        assert_eq!(unit_from_name("amount [EUR]").as_deref(), Some("EUR"));
        assert_eq!(unit_from_name("(unnamed)"), None);
        assert_eq!(unit_from_name("value (2019)"), None);
    }
}
