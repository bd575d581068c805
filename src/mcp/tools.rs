//! The tools: their parameters (JSON schemas from `schemars`, field docs becoming the
//! descriptions an agent reads) and what each returns.

use super::{blocking, json_result, service_error, tool_error, LakeServer, ToolError, ToolResult};
use crate::agent::context::DESCRIPTION_BYTES;
use crate::service::rows::{DEFAULT_ROWS, MAX_ROWS};
use crate::service::MAX_K;
use lakestar_index::search::embedder::default_for;
use lakestar_index::search::engine::SearchOptions;
use lakestar_index::search::glob::PathGlob;
use lakestar_index::{Format, IndexOptions};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::service::RequestContext;
use rmcp::{tool, tool_router, RoleServer};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

/// Results `search_files` returns when the call gives no `k`.
pub const DEFAULT_K: i64 = 10;
/// Bytes of a description `describe_file` returns at most when asked for more.
pub const MAX_DESCRIBE_BYTES: i64 = 65_536;
/// Fewest bytes of a description worth returning.
pub const MIN_DESCRIBE_BYTES: i64 = 256;
/// Per-file errors `index_status` lists (the rest are counted).
const STATUS_ERRORS: usize = 20;

/// `search_files` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SearchFilesParams {
    /// The question to answer, or words for the data wanted (topics, column names,
    /// places, dates). A whole question works best: the ranking looks for the columns,
    /// values and dates it names.
    pub query: String,
    /// How many files to return, best first: 1 to 1000 (default 10).
    #[serde(default)]
    #[schemars(range(min = 1, max = 1000))]
    pub k: Option<i64>,
    /// Only files of this format: csv, tsv, json, jsonl, parquet, xlsx (or excel),
    /// sqlite, yaml, xml, html, markdown, text, fixed-width, npy, scientific, archive, pdf.
    #[serde(default)]
    pub format: Option<String>,
    /// Only paths matching this glob, relative to the lake root (e.g. "sales/**/*.csv"):
    /// `*` and `?` match within one directory, `**` spans directories. At most 512 bytes.
    #[serde(default)]
    #[schemars(length(max = 512))]
    pub glob: Option<String>,
    /// List every member of a collection (same-schema files such as daily exports) on
    /// its own; by default they fold into the best-matching member, which names the others.
    #[serde(default)]
    pub expand: Option<bool>,
}

/// `describe_file` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct DescribeFileParams {
    /// The file's path relative to the lake root, exactly as search_files returns it.
    pub path: String,
    /// Bytes of description text at most: 256 to 65536 (default 4096). Long
    /// descriptions drop extra examples first.
    #[serde(default)]
    #[schemars(range(min = 256, max = 65536))]
    pub max_bytes: Option<i64>,
}

/// `head` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct HeadParams {
    /// The file's path relative to the lake root, exactly as search_files returns it.
    pub path: String,
    /// Rows wanted: 1 to 1000 (default 20).
    #[serde(default)]
    #[schemars(range(min = 1, max = 1000))]
    pub n: Option<i64>,
    /// The table or sheet, by name or by number ("2": 1-based, in the order the
    /// answer's `tables` lists them) (default: the first with rows).
    #[serde(default)]
    pub table: Option<String>,
}

/// `ask` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct AskParams {
    /// The question, answerable from the lake's data.
    pub question: String,
    /// How the answer should be formatted (e.g. "a number rounded to 2 decimals").
    #[serde(default)]
    pub guidelines: Option<String>,
    /// Give the agent exactly this many retrieved files, 1 to 100 (default: as many as
    /// fit the server's description budget).
    #[serde(default)]
    #[schemars(range(min = 1, max = 100))]
    pub k: Option<i64>,
    /// Verification rounds at most, 0 to 100 (default: the server's, 20).
    #[serde(default)]
    #[schemars(range(max = 100))]
    pub max_rounds: Option<i64>,
    /// Rules beyond Algorithm 1, as `ask --rules` (default: all).
    #[serde(default)]
    pub rules: Option<String>,
    /// Values to give, as `ask --answer`: `NAME` or `NAME=WHAT`.
    #[serde(default)]
    pub answer_names: Option<Vec<String>>,
    /// `plain` (default) or `tagged`.
    #[serde(default)]
    pub answer_form: Option<String>,
}

/// A count from a tool call, checked against its range. Counts are taken as `i64` so
/// that a negative one gets this message rather than a deserialization error.
pub(super) fn in_range(name: &str, v: i64, lo: i64, hi: i64) -> Result<usize, ToolError> {
    if v < lo || v > hi {
        return Err(tool_error(format!(
            "{name} must be between {lo} and {hi} (got {v})"
        )));
    }
    Ok(v as usize)
}

#[tool_router(vis = "pub(super)")]
impl LakeServer {
    #[tool(
        description = "Find the files of the data lake that hold the data for a question \
(hybrid full-text + vector search over every file's description: names, columns, keys, \
values, time coverage). Call this first. Returns JSON: {query, count, hits: [{path, score, \
relevance, format, summary, reasons, collection?}]}, best first; `relevance` is strong, \
fair or weak (a weak hit is almost never the file). `path` is relative to the lake root: \
pass it unchanged to describe_file. `summary` is the first line of the description \
(format, rows, columns); `reasons` say why it ranks (matched columns, names, dates). \
`collection` marks same-schema files (e.g. one per day) folded into this hit: `members` \
counts them, `template` shows their path pattern, `matching` names other members that \
matched. Scores compare within one query only. Use `format` or `glob` to narrow.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn search_files(&self, Parameters(p): Parameters<SearchFilesParams>) -> ToolResult {
        let format = match p.format.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(f) => Some(Format::from_user(f).map_err(tool_error)?),
        };
        let k = in_range("k", p.k.unwrap_or(DEFAULT_K), 1, MAX_K as i64)?;
        let opts = SearchOptions {
            k,
            format,
            glob: PathGlob::filter(p.glob.as_deref()).map_err(tool_error)?,
            expand: p.expand.unwrap_or(false),
            ..Default::default()
        };
        let lake = self.lake.clone();
        let query = p.query;
        blocking(move || {
            let hits = lake.search(&query, &opts).map_err(service_error)?;
            Ok(json_result(json!({
                "query": query,
                "count": hits.len(),
                "hits": hits,
            })))
        })
        .await
    }

    #[tool(
        description = "Describe one file of the lake as the index holds it: format, size, \
state, time coverage, the collection it belongs to, and `description`, a text profile \
of its content (tables with their columns, types, null counts, ranges, top values and \
examples; JSON key paths; sheets; arrays). Use it on the top search_files hits before \
writing code or calling ask, to check the file has the columns the question needs. \
`path` is relative to the lake root, as search_files returns it; paths outside the lake \
are refused. `stale: true` means the file changed since it was indexed (call reindex). \
`llm_description` is present when `lakestar index --llm-analyzer` described the file.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn describe_file(&self, Parameters(p): Parameters<DescribeFileParams>) -> ToolResult {
        let max_bytes = in_range(
            "max_bytes",
            p.max_bytes.unwrap_or(DESCRIPTION_BYTES as i64),
            MIN_DESCRIBE_BYTES,
            MAX_DESCRIBE_BYTES,
        )?;
        let lake = self.lake.clone();
        blocking(move || {
            let d = lake
                .describe(&p.path, max_bytes, true)
                .map_err(service_error)?;
            let mut v = json!({
                "path": d.path,
                "format": d.format,
                "state": d.state,
                "size": d.size,
                "stale": d.stale,
                "time_coverage": d.time_coverage,
                "description": d.text,
            });
            if let Some(e) = d.error {
                v["error"] = json!(e);
            }
            if let Some(c) = d.collection {
                v["collection"] = json!(c);
            }
            match d.llm {
                Some(l) if l.text.is_some() => v["llm_description"] = json!(l.text),
                _ => {}
            }
            Ok(json_result(v))
        })
        .await
    }

    #[tool(
        description = "The first rows of one table of a file of the lake, read the way \
its description reads it (the real header row under titles and notes, the right sheet, \
delimiter and table bounds): CSV/TSV, fixed-width, Excel/ODS sheets, Parquet, JSON \
records, SQLite tables, HTML tables. Use it after describe_file to see actual values \
(codes, units, formats) before writing code. Returns JSON: {path, format, table (the \
one shown), tables (every table or sheet of the file: pass one as `table`), columns, \
rows (cells as text, null when empty), n, more (rows follow)}. Files without a table \
are refused with a message.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn head(&self, Parameters(p): Parameters<HeadParams>) -> ToolResult {
        let n = in_range("n", p.n.unwrap_or(DEFAULT_ROWS as i64), 1, MAX_ROWS as i64)?;
        let lake = self.lake.clone();
        blocking(move || {
            let table = p.table.filter(|t| !t.trim().is_empty());
            let rows = lake
                .rows(&p.path, table.as_deref(), n)
                .map_err(service_error)?;
            Ok(json_result(
                serde_json::to_value(&rows).map_err(tool_error)?,
            ))
        })
        .await
    }

    #[tool(
        description = "What the index holds: the lake root, file count and total size, \
files per format and per state (ok, error, unreadable), collections, when the last index \
run finished and its report (added, modified, deleted, ...), the vector index, and the \
files that could not be described (the first 20; `errors_total` counts all). Use it to \
learn what kinds of data the lake has, or whether the index is recent.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn index_status(&self) -> ToolResult {
        let lake = self.lake.clone();
        blocking(move || {
            let status = lake.status().map_err(service_error)?;
            let total = status.errors.len();
            let mut v = serde_json::to_value(&status).map_err(tool_error)?;
            if let Some(errors) = v["errors"].as_array_mut() {
                errors.truncate(STATUS_ERRORS);
            }
            v["errors_total"] = json!(total);
            Ok(json_result(v))
        })
        .await
    }

    #[tool(
        description = "Bring the index up to date with the lake: an incremental run that \
reads only new and changed files, drops deleted ones and keeps renamed ones. Call it \
when files were added or changed since the last run (index_status shows when that was; \
describe_file shows `stale`). Returns the run's report as JSON: files_seen, added, \
modified, deleted, renamed, unchanged, analyzed, cache_hits, errors, seconds. It fails \
with a message when another writer holds the index (`lakestar index` or `lakestar \
watch`; a watcher keeps the index fresh already, so there is nothing to do).",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn reindex(&self) -> ToolResult {
        let dir = self.lake.dir().to_path_buf();
        let (follow_links, hidden) = (self.options.follow_links, self.options.hidden);
        blocking(move || {
            // The index's own embedder: a model from the models directory only if the
            // index records it, never a newly installed one (that would re-embed all).
            let (embedder, _) = default_for(&dir, None).map_err(tool_error)?;
            // And its own walk, read at each call: the index may have been remade.
            let walk = lakestar_index::indexer::recorded_walk(&dir)
                .map_err(|e| service_error(e.into()))?
                .unwrap_or_default();
            let opts = IndexOptions {
                embedder,
                follow_links: follow_links || walk.follow_links,
                // Out of the lake only as the index records: `--follow` alone means inside.
                follow_outside: walk.follow_outside,
                hidden: hidden || walk.hidden,
                ..IndexOptions::default()
            };
            // The lake the index records: its directory, or its object store.
            let report = lakestar_index::indexer::open_recorded(&dir, &opts)
                .and_then(|mut ix| ix.run(&lakestar_index::indexer::NoProgress))
                .map_err(|e| service_error(e.into()))?;
            Ok(json_result(
                serde_json::to_value(&report).map_err(tool_error)?,
            ))
        })
        .await
    }

    #[tool(
        description = "Answer a question from the lake's data with lakestar's agent \
(DS-STAR: it retrieves the files, plans, writes Python, runs it, verifies and repeats, \
then prints the answer). Slow (minutes, many LLM calls): search_files and \
describe_file first tell whether the lake holds the data. Needs an LLM configured for \
the server (LAKESTAR_MODEL, OPENAI_BASE_URL, OPENAI_API_KEY, or lakestar.toml); \
without one it fails saying so. Returns JSON: {answer, answers (the values given by \
name, full precision), status (sufficient | max_rounds), rounds, files (absolute paths used), run_dir (the record: \
trace.jsonl, final.py, run.ipynb), llm (calls, tokens)}. A run without an answer is an \
error naming its run_dir. Progress notifications are sent when the call carries a \
progressToken.",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    async fn ask(
        &self,
        Parameters(p): Parameters<AskParams>,
        context: RequestContext<RoleServer>,
    ) -> ToolResult {
        super::ask::ask(self, p, context).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_glob_bound_the_schema_states_is_the_one_enforced() {
        let schema = serde_json::to_value(schemars::schema_for!(SearchFilesParams)).unwrap();
        let max = &schema["properties"]["glob"]["maxLength"];
        assert_eq!(
            max.as_u64(),
            Some(lakestar_index::search::glob::MAX_GLOB_BYTES as u64),
            "{schema}"
        );
    }

    #[test]
    fn counts_outside_their_range_are_refused() {
        assert_eq!(in_range("k", 5, 1, 10).unwrap(), 5);
        assert!(in_range("k", 0, 1, 10).is_err());
        assert!(in_range("k", -1, 1, 10).is_err());
        assert!(in_range("k", i64::MAX, 1, 10).is_err());
    }
}
