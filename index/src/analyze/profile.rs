//! Per-column profiles of tabular data: inferred type, nulls, distinct values, range,
//! moments and examples. Shared by every tabular analyzer.

use serde::{Deserialize, Serialize};
// foldhash: value counting hashes every cell; SipHash showed in profiles.
use foldhash::HashMap;

/// Distinct values are counted exactly up to this many; past it the count is a floor.
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
    /// Calendar dates, ISO `YYYY-MM-DD` or `YYYY/MM/DD`.
    Date,
    /// Date and time of day.
    Datetime,
    /// Text with few distinct, repeated values.
    Categorical,
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
    /// Distinct non-null values; a floor when `distinct_exact` is false.
    pub distinct: u64,
    /// Whether `distinct` is exact.
    pub distinct_exact: bool,
    /// Smallest value (numeric order for numbers, text order otherwise).
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
}

impl ColumnProfile {
    /// Every non-null value is distinct (a key or an identifier).
    pub fn is_unique(&self, rows: u64) -> bool {
        self.distinct_exact && self.nulls == 0 && rows > 1 && self.distinct == rows
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

/// Accumulates one column's values.
#[derive(Default)]
pub(crate) struct ColumnBuilder {
    name: String,
    count: u64,
    nulls: u64,
    types: TypeCounts,
    distinct: HashMap<String, u64>,
    distinct_overflow: bool,
    examples: Vec<String>,
    // Welford's running mean and variance of numeric values.
    n_num: u64,
    mean: f64,
    m2: f64,
    min_num: Option<(f64, String)>,
    max_num: Option<(f64, String)>,
    min_text: Option<String>,
    max_text: Option<String>,
}

fn is_null(v: &str) -> bool {
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

fn digits(b: &[u8]) -> bool {
    b.iter().all(u8::is_ascii_digit)
}

/// `YYYY-MM-DD` or `YYYY/MM/DD` with plausible month and day.
pub(crate) fn is_date(v: &str) -> bool {
    let b = v.as_bytes();
    if b.len() != 10 || !digits(&b[0..4]) || !digits(&b[5..7]) || !digits(&b[8..10]) {
        return false;
    }
    let sep = b[4];
    if !(sep == b'-' || sep == b'/') || b[7] != sep {
        return false;
    }
    let month = (b[5] - b'0') * 10 + (b[6] - b'0');
    let day = (b[8] - b'0') * 10 + (b[9] - b'0');
    (1..=12).contains(&month) && (1..=31).contains(&day)
}

/// A date followed by `T` or a space and `HH:MM`, with optional seconds, fraction, zone.
pub(crate) fn is_datetime(v: &str) -> bool {
    if v.len() < 16 || !v.is_char_boundary(10) || !is_date(&v[..10]) {
        return false;
    }
    let b = v.as_bytes();
    (b[10] == b'T' || b[10] == b' ')
        && digits(&b[11..13])
        && b[13] == b':'
        && digits(&b[14..16])
        && b[16..]
            .iter()
            .all(|c| c.is_ascii_digit() || matches!(c, b':' | b'.' | b'Z' | b'+' | b'-' | b' '))
}

fn cut(v: &str) -> String {
    if v.chars().count() <= VALUE_MAX_CHARS {
        v.to_string()
    } else {
        let mut s: String = v.chars().take(VALUE_MAX_CHARS - 1).collect();
        s.push('…');
        s
    }
}

impl ColumnBuilder {
    pub(crate) fn new(name: impl Into<String>) -> Self {
        ColumnBuilder {
            name: name.into(),
            ..Default::default()
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
        } else if let Some(_x) = parse_float(v) {
            self.types.float += 1;
            self.numeric(v);
        } else if is_date(v) {
            self.types.date += 1;
        } else if is_datetime(v) {
            self.types.datetime += 1;
        } else {
            self.types.text += 1;
        }
        if self.min_text.as_deref().is_none_or(|m| v < m) {
            self.min_text = Some(v.to_string());
        }
        if self.max_text.as_deref().is_none_or(|m| v > m) {
            self.max_text = Some(v.to_string());
        }
        if let Some(c) = self.distinct.get_mut(v) {
            *c += 1;
        } else if self.distinct.len() < DISTINCT_CAP {
            self.distinct.insert(v.to_string(), 1);
            if self.examples.len() < EXAMPLES {
                self.examples.push(cut(v));
            }
        } else {
            self.distinct_overflow = true;
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
        let distinct = self.distinct.len() as u64;
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
        } else if !self.distinct_overflow && distinct <= CATEGORICAL_MAX && distinct * 2 <= non_null
        {
            ColumnType::Categorical
        } else {
            ColumnType::Text
        };
        let numeric = matches!(kind, ColumnType::Integer | ColumnType::Float);
        let (min, max) = if numeric {
            (self.min_num.map(|(_, s)| s), self.max_num.map(|(_, s)| s))
        } else if matches!(kind, ColumnType::Date | ColumnType::Datetime) {
            (self.min_text, self.max_text)
        } else {
            (None, None)
        };
        let (mean, std) = if numeric && self.n_num > 0 {
            let std = if self.n_num > 1 {
                Some((self.m2 / (self.n_num - 1) as f64).sqrt())
            } else {
                None
            };
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
            name: self.name,
            kind,
            nulls: self.nulls,
            distinct,
            distinct_exact: !self.distinct_overflow,
            min,
            max,
            mean,
            std,
            examples: self.examples,
            top,
            declared_type: None,
            unit: None,
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
    } else if is_date(v) {
        ColumnType::Date
    } else if is_datetime(v) {
        ColumnType::Datetime
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
        assert!(!is_date("2024-13-01"));
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
}
