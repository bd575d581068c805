//! Per-column profiles of tabular data: inferred type (with the date format), nulls,
//! distinct values (exact up to a cap, then a HyperLogLog estimate), range, moments, top
//! values and examples. Shared by every tabular analyzer.
//!
//! Numbers written with a convention (`1,234,567`, `12.5%`, `$3,100M`, `(1,234)`, `<10`)
//! are numbers too ([`numbers`]); distinct values are counted by hash ([`distinct`]).

mod column;
mod distinct;
mod numbers;
mod offload;
mod options;
mod timecells;
mod values;

use super::dates;
pub(crate) use column::is_null;
use column::{parse_bool, parse_float, parse_int};
use serde::{Deserialize, Serialize};

pub(crate) use offload::ColumnBuilder;
pub(crate) use values::settle;
pub use values::Missing;

/// A text column with at most this many distinct values (and repeats) is categorical.
pub(super) const CATEGORICAL_MAX: u64 = 50;
/// Examples kept per column.
pub(super) const EXAMPLES: usize = 3;
/// Top values kept for categorical columns.
pub(super) const TOP: usize = 5;
/// Values longer than this are cut in examples and top values.
pub(super) const VALUE_MAX_CHARS: usize = 80;

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
    /// Nearly unique tokens without spaces: keys, codes, hashes; integers that label
    /// (zero-padded codes, a column named `id` or `zip`) keep their range, not a mean.
    Identifier,
    /// Free text.
    Text,
    /// Spans of time (`01:02:03`, `1h 30m`, `PT1H30M`), profiled in seconds.
    Duration,
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
            ColumnType::Duration => "duration",
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
    /// Values that are empty or a null marker (NA, null, NaN, None, -, and the
    /// column's [`missing`](Self::missing) markers).
    pub nulls: u64,
    /// Missing-value markers of a numeric, date or duration column that pandas does not
    /// read as NaN by itself (`M`, `(NA)`, `..`, `-`), with their counts; the load line
    /// passes them as `na_values`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<Missing>,
    /// Distinct non-null values; an estimate when `distinct_exact` is false.
    pub distinct: u64,
    /// Whether `distinct` is exact.
    pub distinct_exact: bool,
    /// Smallest value: numeric order for numbers, ISO `YYYY-MM-DD` for dates, seconds for
    /// durations. A plain
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
    /// How dates are written, strftime-like (`%m/%d/%Y`), for date and datetime columns;
    /// for a column read as time in another form (`time_span`), how it writes it (`%Y`,
    /// `FY%Y`, `fractional years`).
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
    /// With `estimated`: the figures that are exact all the same, read from the file's
    /// own whole-file statistics (a Parquet footer): `nulls`, `range`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exact: Vec<String>,
    /// The first and last day (`YYYY-MM-DD`) the values stand for, when the `time-forms`
    /// reading rule reads them as time written in another form than a date: months as
    /// `200001`, fractional years, years with a marker (`2019r`, `FY2020`), a day of
    /// year beside a year column. `date_format` then says how they are written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_span: Option<(String, String)>,
    /// The order of a numeric column's values in the file, for reading it with another
    /// column row by row; gathered while profiling, dropped once the table is read.
    #[serde(skip)]
    pub(crate) order: Option<crate::analyze::time::forms::Order>,
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
mod tests;
