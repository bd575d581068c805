//! One file's description as the index holds it: `describe` of the CLI, `GET /files/…`
//! and the MCP `describe_file` tool.

use lakestar_index::analyze::{RenderOptions, TimeCoverage};
use lakestar_index::catalog::{FileRow, TableRow};
use lakestar_index::dataset::{self, TableDescription, TableKind};
use lakestar_index::{crawl, render, CatalogReader, Description};
use serde::Serialize;
use std::path::Path;

/// What `index --llm-analyzer` stored for a file.
#[derive(Debug, Serialize)]
pub struct LlmShown {
    /// The model that wrote the describer script.
    pub model: String,
    /// The hash of the prompt it was given.
    pub prompt: String,
    /// The describer's output; absent when it failed.
    pub text: Option<String>,
    /// Why it failed.
    pub error: Option<String>,
    /// The last script run.
    pub script: String,
    /// Scripts tried.
    pub attempts: u32,
}

/// A file's description with what the catalog knows of it.
#[derive(Debug, Serialize)]
pub struct Described {
    /// Relative to the lake when indexed, else as given.
    pub path: String,
    /// Taken from an index (false: analyzed on the fly).
    pub indexed: bool,
    /// The file changed on disk since it was indexed.
    pub stale: bool,
    /// Size in bytes.
    pub size: u64,
    /// Content hash (BLAKE3, hex).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hash: Option<String>,
    /// Format name.
    pub format: String,
    /// ok, error, unreadable, ...
    pub state: String,
    /// Why it could not be described.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The time span covered: from the content when it shows one, else from the path.
    pub time_coverage: Option<TimeCoverage>,
    /// The collection the file belongs to (see `lakestar collections`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub collection: Option<lakestar_index::collect::Collection>,
    /// The structured description.
    pub description: Option<Description>,
    /// Its text rendering, as the agent and search see it.
    pub text: String,
    /// The LLM analyzer's description, when asked for and stored.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub llm: Option<LlmShown>,
    /// The table that spans many files: the one described (`path` its folder), or the
    /// one this file is a member of.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub table: Option<TableShown>,
}

/// A table that spans many files (Hive-partitioned, Delta, Iceberg).
#[derive(Debug, Serialize)]
pub struct TableShown {
    /// Its folder, ending in `/`.
    pub root: String,
    /// `hive`, `delta` or `iceberg`.
    pub kind: TableKind,
    /// Delta version, Iceberg snapshot id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Why it could not be described.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The table's description (when the table itself is described, not a member).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<TableDescription>,
}

impl TableShown {
    fn of(t: TableRow, whole: bool) -> Self {
        TableShown {
            root: format!("{}/", t.root),
            kind: t.kind,
            version: t.version,
            error: t.error,
            description: t.table.filter(|_| whole),
        }
    }
}

/// The table whose folder is lake-relative `root`, described, if the index holds one.
pub fn described_table(
    cat: &CatalogReader,
    root: &str,
) -> lakestar_index::Result<Option<Described>> {
    let Some(t) = cat.table(root)? else {
        return Ok(None);
    };
    let folder = format!("{}/", t.root);
    let text =
        dataset::render::render_or_error(&t.root, t.kind, t.table.as_ref(), t.error.as_deref());
    let (size, time) = t
        .table
        .as_ref()
        .map_or((0, None), |d| (d.bytes, d.time_coverage.clone()));
    Ok(Some(Described {
        path: folder,
        indexed: true,
        stale: false,
        size,
        hash: None,
        format: t.kind.as_str().into(),
        state: if t.error.is_some() { "error" } else { "ok" }.into(),
        error: t.error.clone(),
        time_coverage: time,
        collection: None,
        description: None,
        text,
        llm: None,
        table: Some(TableShown::of(t, true)),
    }))
}

fn hex(h: &[u8]) -> String {
    h.iter().map(|b| format!("{b:02x}")).collect()
}

/// The LLM description of `row` under the index's recorded (model, prompt).
pub fn llm_shown(cat: &CatalogReader, row: &FileRow) -> lakestar_index::Result<Option<LlmShown>> {
    let (Some(key), Some(hash)) = (cat.llm_analyzer_key()?, row.hash.as_ref()) else {
        return Ok(None);
    };
    Ok(cat
        .llm_description(hash, &key.model, &key.prompt)?
        .map(|d| LlmShown {
            model: key.model,
            prompt: key.prompt,
            text: d.text,
            error: d.error,
            script: d.script,
            attempts: d.attempts,
        }))
}

/// `d` with only the table `name` picks, by name or 1-based number as `head` picks it,
/// and a note saying which of how many; `Ok(None)` when `d` is not of several tables.
pub fn one_table(
    d: &Description,
    name: &str,
) -> Result<Option<Description>, lakestar_index::preview::PreviewError> {
    let lakestar_index::analyze::Content::Tables(set) = &d.content else {
        return Ok(None);
    };
    let names: Vec<String> = set.tables.iter().map(|t| t.name.clone()).collect();
    let at = lakestar_index::preview::table_at(&names, name)?;
    let mut one = d.clone();
    if let lakestar_index::analyze::Content::Tables(set) = &mut one.content {
        set.tables = vec![set.tables.swap_remove(at)];
    }
    one.notes.push(format!(
        "{} {} of the file's {}, alone (without --table: all)",
        set.tables[at].kind,
        at + 1,
        names.len()
    ));
    Ok(Some(one))
}

/// The description of the catalog row `row` of the lake at `lake`, its text rendering
/// cut to `max_bytes`; with `llm`, the LLM analyzer's too.
pub fn described(
    cat: &CatalogReader,
    lake: &Path,
    row: &FileRow,
    max_bytes: usize,
    llm: bool,
) -> lakestar_index::Result<Described> {
    // With companion links applied (documented column names, notes).
    let description = cat.file_description(row)?;
    // An object-store lake is not checked here: that would cost a request per describe
    // (and the network); its next `index` finds what changed.
    let in_store = lake.to_str().is_some_and(lakestar_index::store::is_url);
    let stale = !in_store
        && std::fs::metadata(lake.join(&row.path))
            .map(|md| md.len() != row.size || crawl::mtime_ns(&md) != row.mtime_ns)
            .unwrap_or(true);
    let mut text = match &description {
        Some(d) => render(&row.path, d, RenderOptions { max_bytes }),
        None => format!(
            "{} — {}\n",
            row.path,
            row.error.as_deref().unwrap_or("no description stored")
        ),
    };
    let table = cat.table_of(&row.path)?;
    if let Some(t) = &table {
        text.push_str(&dataset::render::member_line(
            &t.root,
            t.kind,
            t.version.as_deref(),
        ));
        text.push('\n');
    }
    Ok(Described {
        path: row.path.clone(),
        indexed: true,
        stale,
        size: row.size,
        hash: row.hash.as_ref().map(|h| hex(h)),
        format: row.format.as_str().into(),
        state: row.state.as_str().into(),
        error: row.error.clone(),
        time_coverage: row.time.clone(),
        collection: match cat.collection_of(&row.path)? {
            Some(id) => cat.collection(&id)?,
            None => None,
        },
        description,
        text,
        llm: if llm { llm_shown(cat, row)? } else { None },
        table: table.map(|t| TableShown::of(t, false)),
    })
}
