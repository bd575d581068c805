//! Parquet values as text: record fields for the profile, footer statistics for exact
//! whole-file null counts and ranges, and declared column types.
//!
//! Cells are formatted here rather than with `Field`'s `Display`, which unwraps on
//! out-of-range timestamps and quotes strings.

use crate::text_util::take_chars;
use ::parquet::basic::{ConvertedType, LogicalType, TimeUnit, Type as PhysicalType};
use ::parquet::data_type::Decimal;
use ::parquet::file::metadata::ParquetMetaData;
use ::parquet::file::statistics::Statistics;
use ::parquet::record::Field;
use ::parquet::schema::types::ColumnDescriptor;
use chrono::DateTime;
use std::fmt::Write;

/// Characters kept of one cell: the profile stores distinct values, so long strings are
/// cut to bound its memory.
pub(super) const CELL_CHARS_MAX: usize = 200;

/// The type a leaf column declares: physical type, then the logical (or converted) type.
pub(super) fn declared_type(col: &ColumnDescriptor) -> String {
    let mut s = match col.physical_type() {
        PhysicalType::FIXED_LEN_BYTE_ARRAY => {
            format!("FIXED_LEN_BYTE_ARRAY({})", col.type_length())
        }
        p => p.to_string(),
    };
    let logical = match col.logical_type_ref() {
        Some(l) => logical_name(l),
        None => match col.converted_type() {
            ConvertedType::NONE => None,
            ConvertedType::DECIMAL => Some(format!(
                "DECIMAL({},{})",
                col.type_precision(),
                col.type_scale()
            )),
            c => Some(c.to_string()),
        },
    };
    if let Some(l) = logical {
        s.push(' ');
        s.push_str(&l);
    }
    s
}

fn unit_name(u: &TimeUnit) -> &'static str {
    match u {
        TimeUnit::MILLIS => "MILLIS",
        TimeUnit::MICROS => "MICROS",
        TimeUnit::NANOS => "NANOS",
    }
}

fn logical_name(l: &LogicalType) -> Option<String> {
    Some(match l {
        LogicalType::String => "STRING".into(),
        LogicalType::Enum => "ENUM".into(),
        LogicalType::Json => "JSON".into(),
        LogicalType::Bson => "BSON".into(),
        LogicalType::Uuid => "UUID".into(),
        LogicalType::Float16 => "FLOAT16".into(),
        LogicalType::Date => "DATE".into(),
        LogicalType::Decimal { scale, precision } => format!("DECIMAL({precision},{scale})"),
        LogicalType::Time {
            unit,
            is_adjusted_to_u_t_c,
        } => format!("TIME({}{})", unit_name(unit), utc(*is_adjusted_to_u_t_c)),
        LogicalType::Timestamp {
            unit,
            is_adjusted_to_u_t_c,
        } => format!(
            "TIMESTAMP({}{})",
            unit_name(unit),
            utc(*is_adjusted_to_u_t_c)
        ),
        LogicalType::Integer {
            bit_width,
            is_signed,
        } => format!("{}INT{bit_width}", if *is_signed { "" } else { "U" }),
        LogicalType::Unknown => "NULL".into(),
        LogicalType::Variant { .. } => "VARIANT".into(),
        LogicalType::Geometry { .. } => "GEOMETRY".into(),
        LogicalType::Geography { .. } => "GEOGRAPHY".into(),
        LogicalType::List => "LIST".into(),
        LogicalType::Map => "MAP".into(),
        LogicalType::_Unknown { .. } => return None,
    })
}

fn utc(adjusted: bool) -> &'static str {
    if adjusted {
        ", UTC"
    } else {
        ""
    }
}

pub(crate) fn float(x: f64) -> String {
    // Whole floats keep a fraction so that a DOUBLE column is not inferred as integer.
    if x.is_finite() && x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{x:.1}")
    } else {
        format!("{x}")
    }
}

pub(crate) fn date(days: i64) -> String {
    match days
        .checked_mul(86_400)
        .and_then(|s| DateTime::from_timestamp(s, 0))
    {
        Some(d) => d.format("%Y-%m-%d").to_string(),
        None => days.to_string(),
    }
}

pub(crate) fn timestamp(v: i64, unit: &TimeUnit) -> String {
    let t = match unit {
        TimeUnit::MILLIS => DateTime::from_timestamp_millis(v),
        TimeUnit::MICROS => DateTime::from_timestamp_micros(v),
        TimeUnit::NANOS => Some(DateTime::from_timestamp_nanos(v)),
    };
    match t {
        Some(t) => t.format("%Y-%m-%d %H:%M:%S%.f").to_string(),
        None => v.to_string(),
    }
}

pub(crate) fn time_of_day(v: i64, per_second: i64) -> String {
    if !(0..86_400 * per_second).contains(&v) {
        return v.to_string();
    }
    let secs = v / per_second;
    let frac = v % per_second;
    let width = per_second.ilog10() as usize;
    format!(
        "{:02}:{:02}:{:02}.{frac:0width$}",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

/// A scaled integer as decimal text: 12345 with scale 2 is "123.45".
pub(crate) fn scaled(unscaled: i128, scale: i32) -> String {
    let digits = unscaled.unsigned_abs().to_string();
    let sign = if unscaled < 0 { "-" } else { "" };
    let Ok(scale) = usize::try_from(scale) else {
        return format!("{unscaled}");
    };
    if scale == 0 || scale > 38 {
        return format!("{unscaled}");
    }
    let padded = format!("{digits:0>width$}", width = scale + 1);
    let (int, frac) = padded.split_at(padded.len() - scale);
    format!("{sign}{int}.{frac}")
}

/// A big-endian two's-complement integer of at most 16 bytes.
pub(crate) fn be_signed(bytes: &[u8]) -> Option<i128> {
    if bytes.is_empty() || bytes.len() > 16 {
        return None;
    }
    let fill = if bytes[0] & 0x80 != 0 { 0xFF } else { 0 };
    let mut buf = [fill; 16];
    buf[16 - bytes.len()..].copy_from_slice(bytes);
    Some(i128::from_be_bytes(buf))
}

fn decimal(d: &Decimal) -> String {
    match be_signed(d.data()) {
        Some(v) => scaled(v, d.scale()),
        None => format!("<{}-byte decimal>", d.data().len()),
    }
}

fn bytes_text(b: &[u8]) -> String {
    match std::str::from_utf8(b) {
        Ok(s) => take_chars(s, CELL_CHARS_MAX),
        Err(_) => format!("<{}-byte binary>", b.len()),
    }
}

/// One record field as a profile cell. `logical` is the leaf's logical type, for the
/// encodings the record reader leaves raw (nanosecond timestamps).
pub(super) fn cell(f: &Field, logical: Option<&LogicalType>) -> String {
    match f {
        Field::Long(v) => match logical {
            Some(LogicalType::Timestamp {
                unit: TimeUnit::NANOS,
                ..
            }) => timestamp(*v, &TimeUnit::NANOS),
            Some(LogicalType::Time {
                unit: TimeUnit::NANOS,
                ..
            }) => time_of_day(*v, 1_000_000_000),
            _ => v.to_string(),
        },
        Field::Null
        | Field::Bool(_)
        | Field::Byte(_)
        | Field::Short(_)
        | Field::Int(_)
        | Field::UByte(_)
        | Field::UShort(_)
        | Field::UInt(_)
        | Field::ULong(_)
        | Field::Float16(_)
        | Field::Float(_)
        | Field::Double(_)
        | Field::Decimal(_)
        | Field::Bytes(_)
        | Field::Date(_)
        | Field::TimeMillis(_)
        | Field::TimeMicros(_)
        | Field::TimestampMillis(_)
        | Field::TimestampMicros(_) => scalar(f),
        Field::Str(s) => take_chars(s, CELL_CHARS_MAX),
        Field::Group(_) | Field::ListInternal(_) | Field::MapInternal(_) => {
            let mut s = String::new();
            nested(f, &mut s);
            if s.len() > CELL_CHARS_MAX {
                take_chars(&s, CELL_CHARS_MAX)
            } else {
                s
            }
        }
    }
}

fn scalar(f: &Field) -> String {
    match f {
        Field::Null => String::new(),
        Field::Bool(v) => v.to_string(),
        Field::Byte(v) => v.to_string(),
        Field::Short(v) => v.to_string(),
        Field::Int(v) => v.to_string(),
        Field::Long(v) => v.to_string(),
        Field::UByte(v) => v.to_string(),
        Field::UShort(v) => v.to_string(),
        Field::UInt(v) => v.to_string(),
        Field::ULong(v) => v.to_string(),
        Field::Float16(v) => float(f64::from(*v)),
        Field::Float(v) => float(f64::from(*v)),
        Field::Double(v) => float(*v),
        Field::Decimal(d) => decimal(d),
        Field::Str(s) => take_chars(s, CELL_CHARS_MAX),
        Field::Bytes(b) => bytes_text(b.data()),
        Field::Date(d) => date(i64::from(*d)),
        Field::TimeMillis(v) => time_of_day(i64::from(*v), 1_000),
        Field::TimeMicros(v) => time_of_day(*v, 1_000_000),
        Field::TimestampMillis(v) => timestamp(*v, &TimeUnit::MILLIS),
        Field::TimestampMicros(v) => timestamp(*v, &TimeUnit::MICROS),
        Field::Group(_) | Field::ListInternal(_) | Field::MapInternal(_) => String::new(),
    }
}

/// JSON-like text of a nested value, stopping soon after [`CELL_CHARS_MAX`] characters.
fn nested(f: &Field, out: &mut String) {
    if out.len() > CELL_CHARS_MAX {
        return;
    }
    match f {
        Field::Null => out.push_str("null"),
        Field::Str(_) | Field::Bytes(_) | Field::Date(_) | Field::Decimal(_) => {
            let _ = write!(out, "{:?}", scalar(f));
        }
        Field::TimestampMillis(_)
        | Field::TimestampMicros(_)
        | Field::TimeMillis(_)
        | Field::TimeMicros(_) => {
            let _ = write!(out, "{:?}", scalar(f));
        }
        Field::Group(row) => {
            out.push('{');
            for (i, (name, v)) in row.get_column_iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                let _ = write!(out, "{name:?}: ");
                nested(v, out);
            }
            out.push('}');
        }
        Field::ListInternal(list) => {
            out.push('[');
            for (i, v) in list.elements().iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                nested(v, out);
            }
            out.push(']');
        }
        Field::MapInternal(map) => {
            out.push('{');
            for (i, (k, v)) in map.entries().iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                nested(k, out);
                out.push_str(": ");
                nested(v, out);
            }
            out.push('}');
        }
        _ => out.push_str(&scalar(f)),
    }
}

/// A leaf column's statistics over the whole file, from the footer.
#[derive(Debug, Default, PartialEq)]
pub(super) struct FooterStats {
    /// Sum of the row groups' null counts, when every row group states one.
    pub nulls: Option<u64>,
    /// Smallest value, when every row group with values states an exact one.
    pub min: Option<String>,
    /// Largest value, likewise.
    pub max: Option<String>,
    /// The range is of strings, in byte order.
    pub text: bool,
}

#[derive(Clone, PartialEq, PartialOrd)]
enum Val {
    Int(i128),
    Float(f64),
    Bytes(Vec<u8>),
}

fn is_unsigned(col: &ColumnDescriptor) -> bool {
    matches!(
        col.logical_type_ref(),
        Some(LogicalType::Integer {
            is_signed: false,
            ..
        })
    ) || matches!(
        col.converted_type(),
        ConvertedType::UINT_8
            | ConvertedType::UINT_16
            | ConvertedType::UINT_32
            | ConvertedType::UINT_64
    )
}

fn is_string(col: &ColumnDescriptor) -> bool {
    matches!(
        col.logical_type_ref(),
        Some(LogicalType::String | LogicalType::Enum | LogicalType::Json)
    ) || matches!(
        col.converted_type(),
        ConvertedType::UTF8 | ConvertedType::ENUM | ConvertedType::JSON
    )
}

fn is_decimal(col: &ColumnDescriptor) -> bool {
    matches!(col.logical_type_ref(), Some(LogicalType::Decimal { .. }))
        || col.converted_type() == ConvertedType::DECIMAL
}

/// The (min, max) of one row group's statistics, as comparable values; None when absent,
/// inexact, or of a type whose footer order we do not trust.
fn range(s: &Statistics, col: &ColumnDescriptor) -> Option<(Val, Val)> {
    let unsigned = is_unsigned(col);
    // Old writers' min/max used signed byte order: right for signed numbers only.
    if s.is_min_max_deprecated()
        && (unsigned
            || matches!(
                s,
                Statistics::ByteArray(_) | Statistics::FixedLenByteArray(_)
            ))
    {
        return None;
    }
    let pair = |lo: Option<Val>, hi: Option<Val>| Some((lo?, hi?));
    match s {
        Statistics::Int32(v) => {
            let int = |x: &i32| {
                Val::Int(if unsigned {
                    *x as u32 as i128
                } else {
                    *x as i128
                })
            };
            pair(v.min_opt().map(int), v.max_opt().map(int))
        }
        Statistics::Int64(v) => {
            let int = |x: &i64| {
                Val::Int(if unsigned {
                    *x as u64 as i128
                } else {
                    *x as i128
                })
            };
            pair(v.min_opt().map(int), v.max_opt().map(int))
        }
        Statistics::Float(v) => pair(
            v.min_opt().map(|x| Val::Float(f64::from(*x))),
            v.max_opt().map(|x| Val::Float(f64::from(*x))),
        ),
        Statistics::Double(v) => pair(
            v.min_opt().map(|x| Val::Float(*x)),
            v.max_opt().map(|x| Val::Float(*x)),
        ),
        Statistics::ByteArray(v) if is_string(col) && s.min_is_exact() && s.max_is_exact() => pair(
            v.min_opt().map(|x| Val::Bytes(x.data().to_vec())),
            v.max_opt().map(|x| Val::Bytes(x.data().to_vec())),
        ),
        // Decimals in byte arrays: big-endian two's complement, ordered as signed numbers.
        Statistics::ByteArray(v) if is_decimal(col) => pair(
            v.min_opt().and_then(|x| be_signed(x.data())).map(Val::Int),
            v.max_opt().and_then(|x| be_signed(x.data())).map(Val::Int),
        ),
        Statistics::FixedLenByteArray(v) if is_decimal(col) => pair(
            v.min_opt().and_then(|x| be_signed(x.data())).map(Val::Int),
            v.max_opt().and_then(|x| be_signed(x.data())).map(Val::Int),
        ),
        _ => None,
    }
    .filter(|(lo, hi)| {
        !matches!(lo, Val::Float(x) if x.is_nan()) && !matches!(hi, Val::Float(x) if x.is_nan())
    })
}

fn format_val(v: &Val, col: &ColumnDescriptor) -> String {
    match v {
        Val::Int(i) => {
            let small = i64::try_from(*i).ok();
            match (col.logical_type_ref(), col.converted_type(), small) {
                (Some(LogicalType::Date), _, Some(d)) | (None, ConvertedType::DATE, Some(d)) => {
                    date(d)
                }
                (Some(LogicalType::Timestamp { unit, .. }), _, Some(t)) => timestamp(t, unit),
                (None, ConvertedType::TIMESTAMP_MILLIS, Some(t)) => timestamp(t, &TimeUnit::MILLIS),
                (None, ConvertedType::TIMESTAMP_MICROS, Some(t)) => timestamp(t, &TimeUnit::MICROS),
                (Some(LogicalType::Decimal { scale, .. }), _, _) => scaled(*i, *scale),
                (None, ConvertedType::DECIMAL, _) => scaled(*i, col.type_scale()),
                _ => i.to_string(),
            }
        }
        Val::Float(x) => float(*x),
        Val::Bytes(b) => bytes_text(b),
    }
}

/// Whole-file statistics of leaf column `leaf` from the footer.
pub(super) fn footer_stats(md: &ParquetMetaData, leaf: usize) -> FooterStats {
    let mut nulls = Some(0u64);
    let mut lo: Option<Val> = None;
    let mut hi: Option<Val> = None;
    let mut range_ok = true;
    for rg in md.row_groups() {
        let Some(chunk) = rg.columns().get(leaf) else {
            return FooterStats::default();
        };
        let Some(s) = chunk.statistics() else {
            return FooterStats::default();
        };
        let n = s.null_count_opt();
        nulls = nulls.zip(n).map(|(a, b)| a.saturating_add(b));
        match range(s, chunk.column_descr()) {
            Some((a, b)) => {
                if lo.as_ref().is_none_or(|l| a < *l) {
                    lo = Some(a);
                }
                if hi.as_ref().is_none_or(|h| b > *h) {
                    hi = Some(b);
                }
            }
            // A row group of nulls only has no range, and needs none.
            None => {
                let all_null = n.is_some_and(|n| i64::try_from(n).ok() == Some(chunk.num_values()));
                range_ok &= all_null;
            }
        }
    }
    let col = md
        .file_metadata()
        .schema_descr()
        .columns()
        .get(leaf)
        .cloned();
    let fmt = |v: Option<Val>| match (&col, v) {
        (Some(c), Some(v)) if range_ok => Some(format_val(&v, c)),
        _ => None,
    };
    FooterStats {
        nulls,
        text: matches!(lo, Some(Val::Bytes(_))),
        min: fmt(lo),
        max: fmt(hi),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_values_safely() {
        assert_eq!(scaled(12345, 2), "123.45");
        assert_eq!(scaled(-5, 3), "-0.005");
        assert_eq!(be_signed(&[0xFF, 0xFE]), Some(-2));
        assert_eq!(date(19_723), "2024-01-01");
        assert_eq!(timestamp(0, &TimeUnit::MILLIS), "1970-01-01 00:00:00");
        // Out of chrono's range: raw number, no panic.
        assert_eq!(timestamp(i64::MAX, &TimeUnit::MILLIS), i64::MAX.to_string());
        assert_eq!(date(i64::MAX), i64::MAX.to_string());
        assert_eq!(time_of_day(3_723_500, 1_000), "01:02:03.500");
        assert_eq!(float(2.0), "2.0");
        assert_eq!(
            cell(&Field::Str("x".repeat(500)), None).chars().count(),
            CELL_CHARS_MAX + 1
        );
        let accents = "é".repeat(CELL_CHARS_MAX);
        assert_eq!(cell(&Field::Str(accents.clone()), None), accents);
    }
}
