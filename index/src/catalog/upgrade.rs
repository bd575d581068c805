//! Bringing a catalog of an older format version to this one ([`super::FORMAT_VERSION`]),
//! in one transaction on a writer's open: a kill leaves it as it was, and readers keep
//! their snapshot meanwhile.
//!
//! - Version 1 → 2: version 1's index of files by hash goes. Its vectors stay in their
//!   rows until the next swap of a generation hands them over (`catalog::held`).
//! - Version 2 → 3: `files`, `descriptions` and `collections` are copied into the
//!   tables of the smaller layout ([`super::schema::FILES`]): templates interned, digests
//!   packed ([`super::digest`]), the ranking records moved from `rank_records` into
//!   their descriptions' rows, the columns a description holds dropped from its row,
//!   each collection's longest member coverage recorded.
//!   The pages given up are returned by the run's compaction (they are more than a
//!   quarter of the file).
//! - Version 3 → 4: the graph's members (`vector_points` and its index by point) go;
//!   they live in the generation (`search::ann::members`). The generation an older
//!   catalog names has none, so the run's refresh of the vectors rebuilds it (searches
//!   are exact meanwhile, reading its codes), and its swap hands the rows'
//!   points over as any swap does.
//! - Version 4 → 5: `tables` is created, empty; the catalog records no table rule
//!   (`tables_version`), so the next run finds and describes every table.

use super::schema::{FILES, FORMAT_VERSION};
use super::{digest, MetaKey};
use crate::error::Result;
use rusqlite::Connection;

/// The old layout's indexes and triggers go first: the new indexes take the same names.
const SET_ASIDE: &str = "
DROP INDEX IF EXISTS files_hash;
DROP INDEX IF EXISTS files_template;
DROP INDEX IF EXISTS files_collection;
DROP INDEX IF EXISTS collections_template;
DROP TRIGGER IF EXISTS descriptions_record_stale;
DROP TRIGGER IF EXISTS descriptions_record_gone;
ALTER TABLE files RENAME TO old_files;
ALTER TABLE descriptions RENAME TO old_descriptions;
ALTER TABLE collections RENAME TO old_collections;
";

/// Upgrade a catalog of version `found` (older than this one's).
pub(super) fn upgrade(conn: &mut Connection, found: u32) -> Result<()> {
    let started = std::time::Instant::now();
    let tx = conn.transaction()?;
    if found < 3 {
        to_version_3(&tx)?;
    }
    tx.execute_batch(
        "DROP INDEX IF EXISTS vector_points_id;
         DROP TABLE IF EXISTS vector_points;",
    )?;
    tx.execute_batch(super::tables::SCHEMA)?;
    tx.execute(
        "UPDATE meta SET value = ?2 WHERE key = ?1",
        rusqlite::params![MetaKey::FormatVersion, FORMAT_VERSION.to_string()],
    )?;
    tx.commit()?;
    tracing::info!(
        from = found,
        to = FORMAT_VERSION,
        ms = started.elapsed().as_millis() as u64,
        "upgraded the catalog's format"
    );
    Ok(())
}

/// Version 1 or 2 → 3, inside the upgrade's transaction.
fn to_version_3(tx: &rusqlite::Transaction<'_>) -> Result<()> {
    let records: bool = tx.query_row(
        "SELECT EXISTS(SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'rank_records')",
        [],
        |r| r.get(0),
    )?;
    tx.execute_batch(SET_ASIDE)?;
    tx.execute_batch(FILES)?;
    // A catalog made before ranking records has none to move: the writer's open then
    // derives them (`rank_records::rederive_if_older`, its version not recorded).
    let record = if records {
        "(SELECT record FROM rank_records r WHERE r.hash = d.hash AND r.analyzer = d.analyzer)"
    } else {
        "NULL"
    };
    let (schema, collection, id) = (
        digest::packed_sql("f.schema"),
        digest::packed_sql("f.collection"),
        digest::packed_sql("c.id"),
    );
    tx.execute_batch(&format!(
        "INSERT INTO templates(template)
             SELECT DISTINCT template FROM old_files WHERE template IS NOT NULL ORDER BY template;
         INSERT INTO files(path, size, mtime_ns, hash, format, analyzer, state, error, racy,
                           indexed_at, time_start, time_end, time_source, sampled, schema,
                           template, collection)
             SELECT f.path, f.size, f.mtime_ns, f.hash, f.format, f.analyzer, f.state, f.error,
                    f.racy, f.indexed_at, f.time_start, f.time_end, f.time_source, f.sampled,
                    {schema}, t.id, {collection}
             FROM old_files f LEFT JOIN templates t ON t.template = f.template ORDER BY f.path;
         INSERT INTO descriptions(hash, analyzer, raw_len, sampled, record, blob)
             SELECT d.hash, d.analyzer, d.raw_len, d.sampled, {record}, d.blob
             FROM old_descriptions d;
         INSERT INTO collections(id, template, format, members, time_start, time_end, detail)
             SELECT {id}, c.template, c.format, c.members, c.time_start, c.time_end, c.detail
             FROM old_collections c;
         DROP TABLE old_files;
         DROP TABLE old_descriptions;
         DROP TABLE old_collections;
         DROP TABLE IF EXISTS rank_records;"
    ))?;
    let ids: Vec<rusqlite::types::Value> = tx
        .prepare("SELECT id FROM collections")?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    for id in &ids {
        super::collections::set_longest(tx, id)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
