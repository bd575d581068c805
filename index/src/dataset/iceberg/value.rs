//! Iceberg values as text: a column's lower and upper bounds in a manifest (Iceberg's
//! single-value binary serialisation, by the column's type) and a data file's partition
//! values (an Avro value, by the partition field's transform), written as the Parquet
//! analyzer writes the same values, so that ranges read from manifests and from footers
//! look alike.

use crate::analyze::parquet::values::{be_signed, date, float, scaled, time_of_day, timestamp};
use apache_avro::types::Value as Avro;
use parquet::basic::TimeUnit;

/// The text of a bound of a column of Iceberg type `kind` (`long`, `decimal(9, 2)`…);
/// None for a type whose bounds are not shown (binary, nested) or bytes that do not fit
/// the type. A column promoted from `int` to `long` (or `float` to `double`) keeps the
/// bounds its older files were written with, four bytes, so both widths are read.
pub(crate) fn bound(kind: &str, bytes: &[u8]) -> Option<String> {
    let le = |n: usize| -> Option<i64> {
        match (n, bytes.len()) {
            (4, 4) | (8, 4) => Some(i32::from_le_bytes(bytes.try_into().ok()?).into()),
            (8, 8) => Some(i64::from_le_bytes(bytes.try_into().ok()?)),
            _ => None,
        }
    };
    Some(match kind {
        "boolean" => match bytes {
            [b] => (*b != 0).to_string(),
            _ => return None,
        },
        "int" => le(4)?.to_string(),
        "long" => le(8)?.to_string(),
        "float" | "double" => match bytes.len() {
            4 => float(f32::from_le_bytes(bytes.try_into().ok()?).into()),
            8 => float(f64::from_le_bytes(bytes.try_into().ok()?)),
            _ => return None,
        },
        "date" => date(le(4)?),
        "time" => time_of_day(le(8)?, 1_000_000),
        "timestamp" | "timestamptz" => timestamp(le(8)?, &TimeUnit::MICROS),
        "timestamp_ns" | "timestamptz_ns" => timestamp(le(8)?, &TimeUnit::NANOS),
        // Writers cut string bounds (to 16 characters by default): a bound is a prefix
        // of the value, which orders the same way.
        "string" => std::str::from_utf8(bytes).ok()?.to_string(),
        "uuid" => uuid(bytes)?,
        _ => scaled(be_signed(bytes)?, decimal_scale(kind)?),
    })
}

/// The scale of a `decimal(P, S)` type.
fn decimal_scale(kind: &str) -> Option<i32> {
    let inner = kind.strip_prefix("decimal(")?.strip_suffix(')')?;
    inner.split(',').nth(1)?.trim().parse().ok()
}

fn uuid(bytes: &[u8]) -> Option<String> {
    let b: &[u8; 16] = bytes.try_into().ok()?;
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    Some(format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    ))
}

/// The text of a partition value as Iceberg writes it in a data file's folder name:
/// `transform` (`identity`, `day`, `bucket[16]`…) applied to a column of type `source`.
/// A null is `null`; a value of a type this does not read, `<unreadable>`.
pub(crate) fn partition(v: &Avro, transform: &str, source: &str) -> String {
    let v = match v {
        Avro::Union(_, inner) => inner,
        other => other,
    };
    let int = || -> Option<i64> {
        match v {
            Avro::Int(i) | Avro::Date(i) | Avro::TimeMillis(i) => Some((*i).into()),
            Avro::Long(i)
            | Avro::TimeMicros(i)
            | Avro::TimestampMillis(i)
            | Avro::TimestampMicros(i)
            | Avro::TimestampNanos(i)
            | Avro::LocalTimestampMillis(i)
            | Avro::LocalTimestampMicros(i)
            | Avro::LocalTimestampNanos(i) => Some(*i),
            _ => None,
        }
    };
    let text = match (transform, v) {
        (_, Avro::Null) => return "null".to_string(),
        ("year", _) => int().map(|y| (1970 + y).to_string()),
        ("month", _) => int().map(|m| {
            let (y, m) = (1970 + m.div_euclid(12), m.rem_euclid(12) + 1);
            format!("{y:04}-{m:02}")
        }),
        ("day", _) => int().map(date),
        ("hour", _) => int().map(|h| match h.checked_mul(3_600_000_000) {
            // `2024-05-01 13:00:00` as Iceberg names it: `2024-05-01-13`.
            Some(us) => timestamp(us, &TimeUnit::MICROS)
                .get(..13)
                .map_or_else(|| h.to_string(), |s| s.replacen(' ', "-", 1)),
            None => h.to_string(),
        }),
        (t, _) if t.starts_with("bucket") => int().map(|b| b.to_string()),
        // identity and truncate keep the source column's type.
        _ => source_value(v, source),
    };
    text.unwrap_or_else(|| "<unreadable>".to_string())
}

/// An identity (or truncated) partition value of a column of type `source`.
fn source_value(v: &Avro, source: &str) -> Option<String> {
    Some(match v {
        Avro::String(s) => s.clone(),
        Avro::Boolean(b) => b.to_string(),
        Avro::Int(i) if source == "date" => date((*i).into()),
        Avro::Int(i) => i.to_string(),
        Avro::Long(i) if source == "time" => time_of_day(*i, 1_000_000),
        Avro::Long(i) if source.starts_with("timestamp") => {
            let unit = if source.ends_with("_ns") {
                TimeUnit::NANOS
            } else {
                TimeUnit::MICROS
            };
            timestamp(*i, &unit)
        }
        Avro::Long(i) => i.to_string(),
        Avro::Float(x) => float((*x).into()),
        Avro::Double(x) => float(*x),
        Avro::Date(d) => date((*d).into()),
        Avro::TimeMicros(t) => time_of_day(*t, 1_000_000),
        Avro::TimestampMicros(t) | Avro::LocalTimestampMicros(t) => {
            timestamp(*t, &TimeUnit::MICROS)
        }
        Avro::TimestampNanos(t) | Avro::LocalTimestampNanos(t) => timestamp(*t, &TimeUnit::NANOS),
        Avro::Uuid(u) => u.to_string(),
        Avro::Decimal(d) => scaled(
            be_signed(&Vec::<u8>::try_from(d).ok()?)?,
            decimal_scale(source)?,
        ),
        Avro::Bytes(b) | Avro::Fixed(_, b) if source.starts_with("decimal") => {
            scaled(be_signed(b)?, decimal_scale(source)?)
        }
        Avro::Bytes(b) | Avro::Fixed(_, b) => format!("<{}-byte binary>", b.len()),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_decode_by_type() {
        assert_eq!(bound("boolean", &[1]).as_deref(), Some("true"));
        assert_eq!(bound("boolean", &[0]).as_deref(), Some("false"));
        assert_eq!(bound("int", &(-7i32).to_le_bytes()).as_deref(), Some("-7"));
        assert_eq!(
            bound("long", &(1i64 << 40).to_le_bytes()).as_deref(),
            Some("1099511627776")
        );
        // A long column whose older files were written as int.
        assert_eq!(bound("long", &42i32.to_le_bytes()).as_deref(), Some("42"));
        assert_eq!(
            bound("float", &1.5f32.to_le_bytes()).as_deref(),
            Some("1.5")
        );
        assert_eq!(
            bound("double", &(-2.0f64).to_le_bytes()).as_deref(),
            Some("-2.0")
        );
        assert_eq!(
            bound("double", &0.25f32.to_le_bytes()).as_deref(),
            Some("0.25")
        );
        assert_eq!(
            bound("date", &19_723i32.to_le_bytes()).as_deref(),
            Some("2024-01-01")
        );
        // 2024-01-01 12:00:05 in microseconds.
        let ts = 1_704_110_405_000_000i64;
        assert_eq!(
            bound("timestamp", &ts.to_le_bytes()).as_deref(),
            Some("2024-01-01 12:00:05")
        );
        assert_eq!(
            bound("timestamptz", &ts.to_le_bytes()).as_deref(),
            Some("2024-01-01 12:00:05")
        );
        assert_eq!(
            bound("timestamp_ns", &(ts * 1000 + 7).to_le_bytes()).as_deref(),
            Some("2024-01-01 12:00:05.000000007")
        );
        assert_eq!(
            bound("time", &3_723_000_000i64.to_le_bytes()).as_deref(),
            Some("01:02:03.000000")
        );
        assert_eq!(
            bound("string", "Tromsø".as_bytes()).as_deref(),
            Some("Tromsø")
        );
        // Decimals: big-endian two's complement, unscaled, as short as the value.
        assert_eq!(
            bound("decimal(9, 2)", &[0x02, 0xee]).as_deref(),
            Some("7.50")
        );
        assert_eq!(
            bound("decimal(9,2)", &[0xff, 0x38]).as_deref(),
            Some("-2.00")
        );
        assert_eq!(bound("decimal(38, 0)", &[0x01]).as_deref(), Some("1"));
        let u = [
            0x12, 0x3e, 0x45, 0x67, 0xe8, 0x9b, 0x12, 0xd3, 0xa4, 0x56, 0x42, 0x66, 0x14, 0x17,
            0x40, 0x00,
        ];
        assert_eq!(
            bound("uuid", &u).as_deref(),
            Some("123e4567-e89b-12d3-a456-426614174000")
        );
    }

    #[test]
    fn bounds_that_do_not_fit_their_type_are_not_shown() {
        assert_eq!(bound("int", &[1, 2, 3]), None);
        assert_eq!(bound("long", &[1; 5]), None);
        assert_eq!(bound("boolean", &[]), None);
        assert_eq!(bound("double", &[0; 3]), None);
        assert_eq!(bound("string", &[0xff, 0xfe]), None);
        assert_eq!(bound("uuid", &[0; 15]), None);
        assert_eq!(bound("decimal(9, 2)", &[]), None);
        assert_eq!(bound("decimal(9, 2)", &[1; 17]), None);
        assert_eq!(bound("binary", &[1, 2]), None);
        assert_eq!(bound("fixed[2]", &[1, 2]), None);
        assert_eq!(bound("struct", &[1, 2, 3, 4]), None);
    }

    #[test]
    fn partition_values_read_as_iceberg_names_them() {
        let s = Avro::Union(1, Box::new(Avro::String("Oslo".into())));
        assert_eq!(partition(&s, "identity", "string"), "Oslo");
        assert_eq!(
            partition(&Avro::Union(0, Box::new(Avro::Null)), "identity", "string"),
            "null"
        );
        assert_eq!(
            partition(&Avro::Date(19_723), "day", "timestamp"),
            "2024-01-01"
        );
        assert_eq!(partition(&Avro::Int(19_723), "day", "date"), "2024-01-01");
        assert_eq!(partition(&Avro::Int(54), "year", "date"), "2024");
        assert_eq!(partition(&Avro::Int(652), "month", "date"), "2024-05");
        assert_eq!(partition(&Avro::Int(-1), "month", "date"), "1969-12");
        assert_eq!(
            partition(&Avro::Int(473_353), "hour", "timestamp"),
            "2024-01-01-01"
        );
        assert_eq!(partition(&Avro::Int(3), "bucket[16]", "long"), "3");
        assert_eq!(
            partition(&Avro::String("ab".into()), "truncate[2]", "string"),
            "ab"
        );
        assert_eq!(
            partition(&Avro::Int(19_723), "identity", "date"),
            "2024-01-01"
        );
        assert_eq!(partition(&Avro::Long(7), "identity", "long"), "7");
        assert_eq!(
            partition(
                &Avro::TimestampMicros(1_704_110_405_000_000),
                "identity",
                "timestamp"
            ),
            "2024-01-01 12:00:05"
        );
        assert_eq!(
            partition(
                &Avro::Decimal(vec![0x02, 0xee].into()),
                "identity",
                "decimal(9, 2)"
            ),
            "7.50"
        );
        assert_eq!(
            partition(
                &Avro::Fixed(2, vec![0x02, 0xee]),
                "identity",
                "decimal(9, 2)"
            ),
            "7.50"
        );
        assert_eq!(
            partition(&Avro::Bytes(vec![0xff]), "identity", "binary"),
            "<1-byte binary>"
        );
        assert_eq!(
            partition(&Avro::Long(i64::MAX), "hour", "timestamp"),
            i64::MAX.to_string()
        );
        assert_eq!(
            partition(&Avro::Array(vec![]), "identity", "string"),
            "<unreadable>"
        );
    }
}
