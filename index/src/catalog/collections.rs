//! Collections in the catalog: their templates, the members' time bounds, reading
//! collections back (the regrouping itself is [`super::regroup`]'s).

use super::{digest, CatalogReader, MetaKey};
use crate::collect::{self, Collection};
use crate::error::{Error, Result};
use chrono::{Datelike, NaiveDate};
use rusqlite::types::Value;
use rusqlite::{params, OptionalExtension};
use std::collections::HashMap;

/// Version of how collections are derived from the files: a catalog that recorded an
/// older one regroups every folder on its next run (word-named siblings, version 2).
const DERIVED: &str = "2";

/// In a catalog whose collections were derived by an older rule, mark every template
/// for regrouping (the next run's `refresh_collections` does it, and rewrites the search
/// documents whose collection text changed); in a new one, record the current rule.
pub(super) fn rederive_if_older(conn: &rusqlite::Connection) -> Result<()> {
    let recorded: Option<String> = super::meta::read(conn, MetaKey::CollectionsVersion)?;
    if recorded.as_deref() != Some(DERIVED) {
        let key = MetaKey::CollectionsVersion;
        conn.execute_batch(&format!(
            "BEGIN;
             INSERT OR IGNORE INTO dirty_templates(template)
                 SELECT template FROM templates t
                 WHERE EXISTS (SELECT 1 FROM files f WHERE f.template = t.id);
             INSERT OR REPLACE INTO meta(key, value) VALUES ('{key}', '{DERIVED}');
             COMMIT;"
        ))?;
    }
    Ok(())
}

/// The ids of templates (`templates`) as [`CatalogWriter::apply`] writes rows: each
/// looked up or added once per batch.
pub(super) struct Templates<'c> {
    find: rusqlite::CachedStatement<'c>,
    add: rusqlite::CachedStatement<'c>,
    known: HashMap<String, i64>,
}

impl<'c> Templates<'c> {
    pub(super) fn new(conn: &'c rusqlite::Connection) -> rusqlite::Result<Templates<'c>> {
        Ok(Templates {
            find: conn.prepare_cached("SELECT id FROM templates WHERE template = ?1")?,
            add: conn.prepare_cached("INSERT INTO templates(template) VALUES (?1)")?,
            known: HashMap::new(),
        })
    }

    /// The id of `template`, added when new.
    pub(super) fn id(&mut self, template: &str) -> rusqlite::Result<i64> {
        if let Some(&id) = self.known.get(template) {
            return Ok(id);
        }
        let id = match self.find.query_row([template], |r| r.get(0)).optional()? {
            Some(id) => id,
            None => self.add.insert([template])?,
        };
        self.known.insert(template.to_string(), id);
        Ok(id)
    }
}

pub(super) fn entry_and_collection(
    r: &rusqlite::Row<'_>,
) -> rusqlite::Result<(collect::Entry, Option<String>)> {
    let (a, b): (Option<String>, Option<String>) = (r.get(4)?, r.get(5)?);
    Ok((
        collect::Entry {
            path: r.get(0)?,
            format: r.get(1)?,
            schema: digest::get(r, 2)?.unwrap_or_default(),
            size: r.get::<_, i64>(3)? as u64,
            time: a.zip(b),
        },
        digest::get(r, 6)?,
    ))
}

pub(super) fn decode(detail: &str) -> Result<Collection> {
    serde_json::from_str(detail).map_err(|e| Error::corrupt("collection", e))
}

/// The day `s` starts with, when it starts with a real `YYYY-MM-DD` date: in that shape
/// the order of the text is the order of the days.
fn strict_day(s: &str) -> Option<NaiveDate> {
    let head = s.as_bytes().get(..10)?;
    let shaped = head.iter().enumerate().all(|(i, b)| match i {
        4 | 7 => *b == b'-',
        _ => b.is_ascii_digit(),
    });
    if !shaped {
        return None;
    }
    // ASCII up to there: the slices fall on characters.
    let n = |from: usize, to: usize| s[from..to].parse::<u32>().ok();
    NaiveDate::from_ymd_opt(i32::try_from(n(0, 4)?).ok()?, n(5, 7)?, n(8, 10)?)
}

/// The longest coverage of a collection's members, in days (end day minus start day),
/// from the `(time_start, time_end)` of those that have both; `None` when one of them
/// is not two real days, or none has any.
fn longest<'a>(times: impl IntoIterator<Item = (&'a str, &'a str)>) -> Option<i64> {
    let mut longest = None;
    for (start, end) in times {
        let span = (strict_day(end)? - strict_day(start)?).num_days();
        longest = Some(longest.map_or(span, |l: i64| l.max(span)));
    }
    longest
}

/// The least `time_start` of a member covering a day from `start` on, when every
/// member covers at most `longest` days: the day `longest` days before `start`. Every
/// member whose coverage ends on or after `start` (text order, which is day order for
/// real days) starts on or after it. `None` (no bound) when `start` is no real day or
/// the day falls outside four-digit years.
fn lower_bound(start: &str, longest: i64) -> Option<String> {
    let day = strict_day(start)?.checked_sub_signed(chrono::TimeDelta::try_days(longest)?)?;
    (0..=9999)
        .contains(&day.year())
        .then(|| day.format("%Y-%m-%d").to_string())
}

/// Record in the collection `id`'s row its members' [`longest`] coverage, reading
/// their times as a stream (a collection can hold most of the lake).
pub(super) fn set_longest(conn: &rusqlite::Connection, id: &Value) -> Result<()> {
    let mut stmt = conn.prepare_cached(
        "SELECT time_start, time_end FROM files
         WHERE collection = ?1 AND time_start IS NOT NULL AND time_end IS NOT NULL",
    )?;
    let mut rows = stmt.query([id])?;
    let mut l = None;
    while let Some(r) = rows.next()? {
        let (a, b): (String, String) = (r.get(0)?, r.get(1)?);
        match longest([(a.as_str(), b.as_str())]) {
            Some(span) => l = Some(l.map_or(span, |l: i64| l.max(span))),
            // One member without two real days leaves the collection unbounded.
            None => {
                l = None;
                break;
            }
        }
    }
    drop(rows);
    conn.prepare_cached("UPDATE collections SET longest = ?2 WHERE id = ?1")?
        .execute(params![id, l])?;
    Ok(())
}

impl CatalogReader {
    /// Every collection, largest first.
    pub fn collections(&self) -> Result<Vec<Collection>> {
        let mut stmt = self
            .conn
            .prepare("SELECT detail FROM collections ORDER BY members DESC, template")?;
        let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
        let mut out = Vec::new();
        for r in rows {
            out.push(decode(&r?)?);
        }
        Ok(out)
    }

    /// The collection with this id.
    pub fn collection(&self, id: &str) -> Result<Option<Collection>> {
        let detail: Option<String> = self
            .conn
            .prepare_cached("SELECT detail FROM collections WHERE id = ?1")?
            .query_row([digest::to_sql(id)], |r| r.get(0))
            .optional()?;
        detail.map(|d| decode(&d)).transpose()
    }

    /// Members of collection `id` whose time coverage overlaps the days `start … end`
    /// (`YYYY-MM-DD`, compared to the day), in path order, at most `limit`.
    ///
    /// One range of the index by (collection, time_start, time_end), read without the
    /// rows, bounded on both sides: above, `time_start < end || '~'`, which is
    /// `substr(time_start, 1, 10) <= end` for an `end` of ten characters (times are
    /// ASCII, and `~` sorts after each of their characters) in a form the index can
    /// bound; below, by the collection's longest member coverage (`lower_bound`).
    /// A day asked of a 15,000-member daily collection reads its day's members, not
    /// every member before it in path order.
    pub fn members_overlapping(
        &self,
        id: &str,
        start: &str,
        end: &str,
        limit: usize,
    ) -> Result<Vec<String>> {
        let id = digest::to_sql(id);
        let longest: Option<i64> = self
            .conn
            .prepare_cached("SELECT longest FROM collections WHERE id = ?1")?
            .query_row([&id], |r| r.get(0))
            .optional()?
            .flatten();
        let from = longest
            .and_then(|l| lower_bound(start, l))
            .unwrap_or_default();
        // INDEXED BY: without statistics, the planner could as well walk the primary
        // key for the ORDER BY and look every row up.
        let mut stmt = self.conn.prepare_cached(
            "SELECT path FROM files INDEXED BY files_collection_time
             WHERE collection = ?1 AND time_start >= ?5 AND time_start < ?3 || '~'
                 AND substr(time_start, 1, 10) <= ?3 AND substr(time_end, 1, 10) >= ?2
             ORDER BY path LIMIT ?4",
        )?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = stmt.query_map(params![id, start, end, limit, from], |r| r.get(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The id of the collection `path` belongs to, if any.
    pub fn collection_of(&self, path: &str) -> Result<Option<String>> {
        Ok(self
            .conn
            .prepare_cached("SELECT collection FROM files WHERE path = ?1")?
            .query_row([path], |r| digest::get(r, 0))
            .optional()?
            .flatten())
    }
}

#[cfg(test)]
mod tests;
