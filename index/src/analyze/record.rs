//! The ranking record of a description: the little of it that a search's candidate
//! stage reads ([`names`], [`categories`] and which of them are
//! [`dominant_categories`]), stored beside the description in the catalog
//! (`descriptions.record`) so that ranking ~400 candidates does not decompress and decode ~400
//! whole descriptions (over a third of a search: BENCHMARKS.md). Only
//! the hits' descriptions are read whole.
//!
//! The stored form is hand-rolled: a version byte, a flags byte, then two
//! length-prefixed lists of length-prefixed UTF-8 strings (LEB128 lengths). It is two
//! lists of strings, so a schema-driven format buys nothing; JSON would bring back the
//! escape-aware parsing this record exists to avoid, and no binary serde format is a
//! dependency. Decoding is a few slice splits and a UTF-8 check per string.

use super::{ColumnType, Content, Description};
// Defined with the crate's errors, which wrap it (`DecodeError::Record`).
pub use crate::error::RecordError;

/// The version of what a record holds and how it is derived. Bump it whenever
/// [`names`], [`categories`], [`dominant_categories`] or
/// [`Content::headerless_columns`] change what they return, or the layout
/// changes: a record of another version is not used (the description is decoded
/// instead), and a writer opening the catalog derives every record again. A test pins
/// each version's records of varied descriptions, so a change that forgets the bump fails.
pub const RECORD_VERSION: u8 = 1;

/// Flag: the description is a single headerless table, whose columns a companion link
/// may rename (`companion::apply_data`): with a link, the record's names are not
/// the ones search must see, and the description is read instead.
const HEADERLESS: u8 = 1;

/// What ranking reads of a description as stored (before companion links apply).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RankRecord {
    /// [`names`], in order.
    pub names: Vec<String>,
    /// [`categories`] (sorted, without duplicates), each with whether it is among
    /// [`dominant_categories`].
    pub categories: Vec<(String, bool)>,
    /// A single headerless table: a companion link may rename its columns.
    pub headerless: bool,
}

impl RankRecord {
    /// The record of `d`, as stored (no companion link applied).
    pub fn of(d: &Description) -> RankRecord {
        let dominant = dominant_categories(d);
        RankRecord {
            names: names(d),
            categories: categories(d)
                .into_iter()
                .map(|v| {
                    let dom = dominant.contains(&v);
                    (v, dom)
                })
                .collect(),
            headerless: d.content.headerless_columns().is_some(),
        }
    }

    /// The stored form, led by [`RECORD_VERSION`].
    pub fn encode(&self) -> Vec<u8> {
        let strings: usize = self.names.iter().map(String::len).sum::<usize>()
            + self.categories.iter().map(|(v, _)| v.len()).sum::<usize>();
        let mut out =
            Vec::with_capacity(2 + strings + 2 * (self.names.len() + self.categories.len()) + 4);
        out.push(RECORD_VERSION);
        out.push(if self.headerless { HEADERLESS } else { 0 });
        put_len(&mut out, self.names.len());
        for n in &self.names {
            put_str(&mut out, n);
        }
        put_len(&mut out, self.categories.len());
        for (v, dominant) in &self.categories {
            out.push(u8::from(*dominant));
            put_str(&mut out, v);
        }
        out
    }

    /// The record stored as `bytes`; `Ok(None)` for a record of another
    /// [`RECORD_VERSION`] (derived by other rules: not to be used).
    pub fn decode(bytes: &[u8]) -> Result<Option<RankRecord>, RecordError> {
        let mut r = Reader(bytes);
        if r.byte("the version")? != RECORD_VERSION {
            return Ok(None);
        }
        let flags = r.byte("the flags")?;
        let n = r.len("the count of names")?;
        // Bounded by the bytes left (each string takes at least its length byte), so a
        // damaged count cannot ask for a huge allocation.
        let mut names = Vec::with_capacity(n.min(r.0.len()));
        for _ in 0..n {
            names.push(r.string("a name")?.to_string());
        }
        let n = r.len("the count of categories")?;
        let mut categories = Vec::with_capacity(n.min(r.0.len()));
        for _ in 0..n {
            let dominant = r.byte("a category's flag")? != 0;
            categories.push((r.string("a category")?.to_string(), dominant));
        }
        if !r.0.is_empty() {
            return Err(RecordError::Trailing(r.0.len()));
        }
        Ok(Some(RankRecord {
            names,
            categories,
            headerless: flags & HEADERLESS != 0,
        }))
    }
}

/// Names a description exposes, in order, without duplicates: column names, sheet and
/// table names, JSON key names (the last segment of each path), array names.
pub fn names(d: &Description) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |s: &str| {
        let s = s.trim();
        if !s.is_empty() && !out.iter().any(|x| x == s) {
            out.push(s.to_string());
        }
    };
    match &d.content {
        Content::Table(t) => t.columns.iter().for_each(|c| push(&c.name)),
        Content::Tables(ts) => {
            for t in &ts.tables {
                push(&t.name);
                t.columns.iter().for_each(|c| push(&c.name));
            }
        }
        Content::Json(j) => {
            for p in &j.paths {
                let last = p.path.rsplit('.').next().unwrap_or(&p.path);
                push(last.trim_end_matches("[]").trim_start_matches('@'));
            }
        }
        Content::Arrays(a) => {
            a.arrays.iter().for_each(|x| push(&x.name));
            a.dimensions.iter().for_each(|(n, _)| push(n));
        }
        Content::Archive(a) => {
            for (member, inner) in &a.described {
                push(member);
                for n in names(inner) {
                    push(&n);
                }
            }
        }
        Content::Text(t) => t
            .tables
            .iter()
            .flat_map(|x| &x.columns)
            .for_each(|c| push(c)),
        Content::Media(_) | Content::Opaque(_) => {}
    }
    out
}

/// The categories of a description's categorical columns (their most frequent values):
/// what a question names when it says "in the Americas region" or "for diesel cars".
pub fn categories(d: &Description) -> Vec<String> {
    let mut out: Vec<String> = d
        .content
        .profiled_columns()
        .map(|(_, c)| c)
        .filter(|c| c.kind == ColumnType::Categorical)
        .flat_map(|c| c.top.iter().map(|(v, _)| v.trim().to_string()))
        .filter(|v| !v.is_empty())
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The categories that make up at least half of their column's values (a file of one
/// incident: its `incident` column is all `Camp Fire`): values that say what the file
/// is about, not merely that it holds them.
pub fn dominant_categories(d: &Description) -> Vec<String> {
    d.content
        .profiled_columns()
        .filter(|(_, c)| c.kind == ColumnType::Categorical)
        .flat_map(|(rows, c)| {
            let filled = rows.saturating_sub(c.nulls).max(1);
            c.top
                .iter()
                .filter(move |(_, n)| n * 2 >= filled)
                .map(|(v, _)| v.trim().to_string())
        })
        .filter(|v| !v.is_empty())
        .collect()
}

/// `n` as LEB128: seven bits a byte, low first, the high bit saying more follow.
fn put_len(out: &mut Vec<u8>, mut n: usize) {
    while n >= 0x80 {
        out.push((n as u8 & 0x7f) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    put_len(out, s.len());
    out.extend_from_slice(s.as_bytes());
}

/// The unread rest of a stored record.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn byte(&mut self, what: &'static str) -> Result<u8, RecordError> {
        let (&b, rest) = self.0.split_first().ok_or(RecordError::Truncated(what))?;
        self.0 = rest;
        Ok(b)
    }

    fn len(&mut self, what: &'static str) -> Result<usize, RecordError> {
        let mut n: usize = 0;
        for shift in (0..usize::BITS).step_by(7) {
            let b = self.byte(what)?;
            n |= usize::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(n);
            }
        }
        // More continuation bytes than a usize holds: not a length this writer wrote.
        Err(RecordError::Truncated(what))
    }

    fn string(&mut self, what: &'static str) -> Result<&'a str, RecordError> {
        let n = self.len(what)?;
        if n > self.0.len() {
            return Err(RecordError::Truncated(what));
        }
        let (s, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(std::str::from_utf8(s)?)
    }
}

#[cfg(test)]
mod tests;
