//! Digests as the catalog stores them: a schema digest or collection id (16 lowercase
//! hex characters, `collect::schema_digest`, `collect::Collection::id`) is kept as the 8
//! bytes it spells, in `files.schema`, `files.collection` and `collections.id` — half the
//! bytes, in the rows and in the index by collection. Any other text is kept as it is,
//! so that every string reads back unchanged ([`to_sql`], [`get`]); the upgrade from
//! an older catalog converts with [`packed_sql`], the same rule in SQL.

use rusqlite::types::{FromSql, FromSqlResult, Value, ValueRef};

/// Whether `s` is stored as bytes: non-empty lowercase hex of an even length, which
/// reads back as the same text.
fn packs(s: &str) -> bool {
    !s.is_empty()
        && s.len().is_multiple_of(2)
        && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// The value stored for digest `s`.
pub(super) fn to_sql(s: &str) -> Value {
    if !packs(s) {
        return Value::Text(s.to_string());
    }
    let nibble = |b: u8| match b {
        b'0'..=b'9' => b - b'0',
        _ => b - b'a' + 10,
    };
    Value::Blob(
        s.as_bytes()
            .chunks_exact(2)
            .map(|p| (nibble(p[0]) << 4) | nibble(p[1]))
            .collect(),
    )
}

/// The value stored for an optional digest.
pub(super) fn opt_to_sql(s: Option<&str>) -> Value {
    s.map_or(Value::Null, to_sql)
}

/// The digest a stored value stands for.
struct Digest(String);

impl FromSql for Digest {
    fn column_result(v: ValueRef<'_>) -> FromSqlResult<Self> {
        match v {
            ValueRef::Blob(b) => {
                // Two digits a byte from a table: `format!` per byte costs a search
                // measurably (two digests for each of ~400 candidates).
                const HEX: &[u8; 16] = b"0123456789abcdef";
                let mut s = String::with_capacity(2 * b.len());
                for &byte in b {
                    s.push(char::from(HEX[usize::from(byte >> 4)]));
                    s.push(char::from(HEX[usize::from(byte & 15)]));
                }
                Ok(Digest(s))
            }
            _ => String::column_result(v).map(Digest),
        }
    }
}

/// Column `i` of `r` as a digest.
pub(super) fn get(r: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<Option<String>> {
    Ok(r.get::<_, Option<Digest>>(i)?.map(|d| d.0))
}

/// The SQL expression storing column `col` (text, as older catalogs hold it) by the rule
/// of [`to_sql`].
pub(super) fn packed_sql(col: &str) -> String {
    format!(
        "CASE WHEN {col} GLOB '[0-9a-f]*' AND NOT {col} GLOB '*[^0-9a-f]*'
              AND length({col}) % 2 = 0 THEN unhex({col}) ELSE {col} END"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::Connection;

    #[test]
    fn a_digest_is_stored_as_its_bytes_and_any_text_reads_back_as_it_was() {
        let c = Connection::open_in_memory().unwrap();
        c.execute_batch("CREATE TABLE t (v BLOB)").unwrap();
        let texts = ["af0ff1453a3e0d15", "AF0F", "abc", "", "s1", "0g"];
        for t in texts {
            c.execute("INSERT INTO t VALUES (?1)", [to_sql(t)]).unwrap();
        }
        let mut stmt = c.prepare("SELECT v, typeof(v), length(v) FROM t").unwrap();
        let rows: Vec<(Option<String>, String, i64)> = stmt
            .query_map([], |r| Ok((get(r, 0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        let read: Vec<_> = rows.iter().map(|r| r.0.clone().unwrap()).collect();
        assert_eq!(read, texts);
        assert_eq!((rows[0].1.as_str(), rows[0].2), ("blob", 8));
        assert!(rows[1..].iter().all(|r| r.1 == "text"), "{rows:?}");

        // The upgrade's SQL packs exactly what `to_sql` packs.
        c.execute_batch("CREATE TABLE old (v TEXT)").unwrap();
        for t in texts {
            c.execute("INSERT INTO old VALUES (?1)", [t]).unwrap();
        }
        let packed: Vec<Vec<u8>> = c
            .prepare(&format!("SELECT quote({}) FROM old", packed_sql("v")))
            .unwrap()
            .query_map([], |r| r.get::<_, String>(0).map(String::into_bytes))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        let expected: Vec<Vec<u8>> = c
            .prepare("SELECT quote(v) FROM t")
            .unwrap()
            .query_map([], |r| r.get::<_, String>(0).map(String::into_bytes))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert_eq!(packed, expected);
        assert_eq!(opt_to_sql(None), Value::Null);
    }
}
