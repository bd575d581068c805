//! `GET /openapi.json`: an OpenAPI 3.1 document of the API.
//!
//! Written by hand rather than derived with `utoipa`: the bodies are the index's types
//! (`Hit`, `Description` and its dozens of nested types in `lakestar-index`), and deriving
//! schemas for them would put an HTTP-documentation dependency and annotations all
//! through the indexer. The document names every route, parameter and error code, and
//! the key fields of each body; a test checks it against [`super::ROUTES`].

use super::handlers::{DEFAULT_DESCRIBE_BYTES, DEFAULT_K, MAX_DESCRIBE_BYTES};
use super::runs::{DEFAULT_BUDGET, DEFAULT_ROUNDS, MAX_FILES, MAX_ROUNDS, MAX_WANTED};
use super::MAX_BODY_BYTES;
use crate::service::overview::{COLLECTIONS_LISTED, FILES_LISTED};
use crate::service::rows::{DEFAULT_ROWS, MAX_ROWS};
use crate::service::{MAX_K, MAX_QUERY_BYTES};
use axum::Json;
use lakestar_index::search::glob::MAX_GLOB_BYTES;
use serde_json::{json, Value};

/// The handler.
pub async fn document() -> Json<Value> {
    Json(spec())
}

fn error_response(description: &str) -> Value {
    json!({
        "description": description,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
    })
}

fn ok_json(description: &str, schema: Value) -> Value {
    json!({
        "description": description,
        "content": {"application/json": {"schema": schema}}
    })
}

fn query(name: &str, required: bool, description: &str, schema: Value) -> Value {
    json!({"name": name, "in": "query", "required": required,
           "description": description, "schema": schema})
}

fn run_id_param() -> Value {
    json!({"name": "id", "in": "path", "required": true,
           "description": "A run id as POST /ask returns it (YYYYMMDD-HHMMSS-hhhh).",
           "schema": {"type": "string", "pattern": "^[0-9]{8}-[0-9]{6}-[0-9a-f]{4}$"}})
}

/// The document.
pub fn spec() -> Value {
    let unauthorized = error_response("No or wrong bearer token (when the server has one).");
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "lakestar",
            "version": env!("CARGO_PKG_VERSION"),
            "description": format!("Search and describe the files of one indexed data lake, and ask questions answered by the DS-STAR agent. With --token, every route but /health needs `Authorization: Bearer TOKEN` (browsers open /?token=TOKEN once for an HttpOnly, SameSite=Strict cookie; the web UI follows the same rule). Errors are {{\"error\": {{\"code\", \"message\"}}}}. A body declared over {MAX_BODY_BYTES} bytes gets 413 (too_large) unread, one slower than --body-timeout 408 (body_timeout); both close the connection, as do headers slower than --header-timeout.")
        },
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": {
                "Error": {
                    "type": "object", "required": ["error"],
                    "properties": {"error": {"type": "object", "required": ["code", "message"], "properties": {
                        "code": {"type": "string", "enum": [
                            "bad_request", "unauthorized", "forbidden_path", "not_found", "no_route",
                            "method_not_allowed", "too_large", "body_timeout", "invalid_body", "unsupported_media_type", "no_files",
                            "too_many_runs", "index_unavailable", "search_timeout", "llm_not_configured",
                            "not_tabular", "unknown_table", "unreadable_file",
                            "agent_unavailable", "internal"]},
                        "message": {"type": "string", "description": "What went wrong and what to do."}
                    }}}
                },
                "Rows": {
                    "type": "object", "required": ["path", "format", "table", "tables", "columns", "rows", "n", "more"],
                    "properties": {
                        "path": {"type": "string", "description": "Lake-relative, /-separated."},
                        "format": {"type": "string"},
                        "table": {"type": "string", "description": "The table shown."},
                        "tables": {"type": "array", "items": {"type": "string"}, "description": "Every table or sheet of the file."},
                        "columns": {"type": "array", "items": {"type": "string"}},
                        "rows": {"type": "array", "items": {"type": "array", "items": {"type": ["string", "null"]}}, "description": "One cell per column: text, or null when empty or missing."},
                        "n": {"type": "integer", "description": "Rows asked for."},
                        "more": {"type": "boolean", "description": "More rows follow."}
                    }
                },
                "Hit": {
                    "type": "object", "required": ["path", "score", "format", "summary", "reasons"],
                    "properties": {
                        "path": {"type": "string", "description": "Lake-relative, /-separated."},
                        "score": {"type": "number"},
                        "format": {"type": "string"},
                        "summary": {"type": "string"},
                        "reasons": {"type": "array", "items": {"type": "string"}},
                        "collection": {"type": "object", "properties": {
                            "id": {"type": "string"}, "template": {"type": "string"},
                            "members": {"type": "integer"},
                            "matching": {"type": "array", "items": {"type": "string"}},
                            "matched": {"type": "integer"}}},
                        "companions": {"type": "array", "description": "Files to open with it: its documentation, lookup tables of its codes (not repeated when returned above).",
                            "items": {"type": "object", "required": ["path", "why"], "properties": {
                                "path": {"type": "string"}, "why": {"type": "string"}}}}
                    }
                },
                "Status": {
                    "type": "object",
                    "required": ["lake_root", "index_dir", "files", "bytes", "by_format", "by_state"],
                    "properties": {
                        "lake_root": {"type": "string"}, "index_dir": {"type": "string"},
                        "index_bytes": {"type": "integer"}, "files": {"type": "integer"},
                        "bytes": {"type": "integer"},
                        "by_format": {"type": "object", "additionalProperties": {"type": "integer"}},
                        "by_state": {"type": "object", "additionalProperties": {"type": "integer"}},
                        "cached_descriptions": {"type": "integer"}, "collections": {"type": "integer"},
                        "errors": {"type": "array", "items": {"type": "object"}},
                        "last_index_at": {"type": ["string", "null"]},
                        "last_index": {"type": ["object", "null"]},
                        "vectors": {"type": ["object", "null"]}
                    }
                },
                "FileBrief": {
                    "type": "object", "required": ["path", "format", "size", "state"],
                    "properties": {
                        "path": {"type": "string"}, "format": {"type": "string"},
                        "size": {"type": "integer"}, "state": {"type": "string"},
                        "time": {"type": "array", "description": "First and last day covered.", "items": {"type": "string"}}
                    }
                },
                "Described": {
                    "type": "object", "required": ["path", "indexed", "stale", "size", "format", "state", "text"],
                    "properties": {
                        "path": {"type": "string"}, "indexed": {"type": "boolean"},
                        "stale": {"type": "boolean", "description": "The file changed since it was indexed."},
                        "size": {"type": "integer"}, "hash": {"type": "string"},
                        "format": {"type": "string"}, "state": {"type": "string"},
                        "error": {"type": "string"},
                        "time_coverage": {"type": ["object", "null"]},
                        "collection": {"type": "object"},
                        "description": {"type": ["object", "null"], "description": "The structured description (tables, columns with profiles, keys, sheets, …)."},
                        "text": {"type": "string", "description": "The text rendering the agent and search see."},
                        "llm": {"type": "object", "description": "With llm=true: what `index --llm-analyzer` stored."}
                    }
                },
                "RunState": {
                    "type": "object", "required": ["id", "status"],
                    "properties": {
                        "id": {"type": "string"},
                        "status": {"type": "string", "enum": ["running", "finished", "failed", "incomplete"]},
                        "error": {"type": ["string", "null"]},
                        "summary": {"type": "object", "description": "summary.json: status, answer, rounds, verdicts, plan, files, llm, duration_ms, …"}
                    }
                }
            }
        },
        "security": [{"bearer": []}],
        "paths": {
            "/health": {"get": {
                "summary": "Whether the server answers (no token needed).",
                "security": [],
                "responses": {"200": ok_json("Alive.", json!({"type": "object", "properties": {
                    "ok": {"type": "boolean"}, "version": {"type": "string"}}}))}
            }},
            "/status": {"get": {
                "summary": "What the index holds: counts by format and state, errors, size, last run.",
                "responses": {
                    "200": ok_json("The status.", json!({"$ref": "#/components/schemas/Status"})),
                    "401": unauthorized,
                    "503": error_response("No usable index (run `lakestar index`).")
                }
            }},
            "/overview": {"get": {
                "summary": "The lake at a glance: the status, files and bytes per format, the days the files cover, the collections, the largest files and a listing of the files (what the web UI's first page shows).",
                "responses": {
                    "200": ok_json("The overview.", json!({"type": "object", "required": ["status", "formats", "collections", "largest", "files"], "properties": {
                        "status": {"$ref": "#/components/schemas/Status"},
                        "formats": {"type": "array", "items": {"type": "object", "properties": {
                            "format": {"type": "string"}, "files": {"type": "integer"}, "bytes": {"type": "integer"}}}},
                        "time": {"type": ["object", "null"], "properties": {
                            "start": {"type": "string"}, "end": {"type": "string"}, "files": {"type": "integer"}}},
                        "collections": {"type": "array", "description": format!("At most {COLLECTIONS_LISTED}, most members first."), "items": {"type": "object"}},
                        "largest": {"type": "array", "items": {"$ref": "#/components/schemas/FileBrief"}},
                        "files": {"type": "array", "description": format!("At most {FILES_LISTED}, by path."), "items": {"$ref": "#/components/schemas/FileBrief"}}}})),
                    "401": unauthorized,
                    "503": error_response("No usable index (run `lakestar index`).")
                }
            }},
            "/search": {"get": {
                "summary": "The files that answer a question (hybrid BM25 + vector retrieval).",
                "parameters": [
                    query("q", true, &format!("The question or keywords (at most {MAX_QUERY_BYTES} bytes)."), json!({"type": "string"})),
                    query("k", false, "Results wanted.", json!({"type": "integer", "minimum": 1, "maximum": MAX_K, "default": DEFAULT_K})),
                    query("format", false, "Only files of this format (csv, json, parquet, …).", json!({"type": "string"})),
                    query("glob", false, "Only paths matching this glob (sales/**/*.csv): `*` and `?` match within one directory, `**` spans directories, [abc] and {a,b} choose. Blank: no filter.", json!({"type": "string", "maxLength": MAX_GLOB_BYTES})),
                    query("expand", false, "List collection members on their own instead of folding them into the best one.", json!({"type": "boolean", "default": false}))
                ],
                "responses": {
                    "200": ok_json("The hits, best first.", json!({"type": "object", "required": ["query", "hits"], "properties": {
                        "query": {"type": "string"},
                        "hits": {"type": "array", "items": {"$ref": "#/components/schemas/Hit"}}}})),
                    "400": error_response(&format!("No q, an empty or too long query, k out of range, a glob longer than {MAX_GLOB_BYTES} bytes or malformed.")),
                    "401": unauthorized,
                    "503": error_response("No usable index (index_unavailable), or the search took longer than the server's --search-timeout (search_timeout).")
                }
            }},
            "/files/{path}": {"get": {
                "summary": "The description of one indexed file.",
                "parameters": [
                    {"name": "path", "in": "path", "required": true,
                     "description": "Lake-relative path (may hold /). `..`, absolute paths and links leading out of the lake are refused.",
                     "schema": {"type": "string"}},
                    query("max_bytes", false, "Budget of the text rendering.", json!({"type": "integer", "minimum": 1, "maximum": MAX_DESCRIBE_BYTES, "default": DEFAULT_DESCRIBE_BYTES})),
                    query("llm", false, "Add the LLM analyzer's description.", json!({"type": "boolean", "default": false}))
                ],
                "responses": {
                    "200": ok_json("The description.", json!({"$ref": "#/components/schemas/Described"})),
                    "400": error_response("Bad parameters."),
                    "401": unauthorized,
                    "403": error_response("The path leaves the lake (forbidden_path)."),
                    "404": error_response("Not in the index.")
                }
            }},
            "/files/{path}/rows": {"get": {
                "summary": "The first rows of one table of an indexed file (CSV/TSV, fixed-width, Excel/ODS sheets, Parquet, JSON records, SQLite, HTML tables), read as its description reads them. When a file of the lake has the path `…/rows` itself, this URL describes it instead.",
                "parameters": [
                    {"name": "path", "in": "path", "required": true,
                     "description": "Lake-relative path of the file (may hold /), followed by /rows.",
                     "schema": {"type": "string"}},
                    query("n", false, "Rows wanted.", json!({"type": "integer", "minimum": 1, "maximum": MAX_ROWS, "default": DEFAULT_ROWS})),
                    query("table", false, "The table or sheet, by name or by number (`2`: 1-based, in the order `tables` in the answer lists them) (default: the first with rows).", json!({"type": "string"}))
                ],
                "responses": {
                    "200": ok_json("The rows.", json!({"$ref": "#/components/schemas/Rows"})),
                    "400": error_response("n out of range (bad_request), no table of that name (unknown_table: the message lists them), not a tabular file (not_tabular), or a file that cannot be read as its format (unreadable_file)."),
                    "401": unauthorized,
                    "403": error_response("The path leaves the lake (forbidden_path)."),
                    "404": error_response("Not in the index.")
                }
            }},
            "/ask": {"get": {
                "summary": "Whether this server can answer questions: an LLM is configured (or a cassette replays); when not, `why` says how to configure one.",
                "responses": {
                    "200": ok_json("Readiness.", json!({"type": "object", "required": ["ready"], "properties": {
                        "ready": {"type": "boolean"},
                        "model": {"type": "string", "description": "The configured model (the planner's, when roles differ)."},
                        "why": {"type": "string", "description": "Why it cannot, and how to configure an LLM."}}})),
                    "401": unauthorized
                }
            }, "post": {
                "summary": "Start an agent run answering a question; follow it at /runs/{id} and /runs/{id}/events.",
                "requestBody": {"required": true, "content": {"application/json": {"schema": {
                    "type": "object", "required": ["question"], "additionalProperties": false,
                    "description": format!("At most {MAX_BODY_BYTES} bytes."),
                    "properties": {
                        "question": {"type": "string", "maxLength": MAX_QUERY_BYTES},
                        "k": {"type": "integer", "minimum": 1, "maximum": MAX_FILES, "description": format!("Exactly this many retrieved files (default: as many as fit {DEFAULT_BUDGET} tokens of descriptions).")},
                        "files": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": MAX_FILES, "description": "Lake-relative files to work on instead of retrieving."},
                        "guidelines": {"type": "string", "description": "Answer-format guidelines."},
                        "answer_names": {"type": "array", "items": {"type": "string"}, "maxItems": MAX_WANTED, "description": "As `ask --answer`."},
                        "answer_form": {"type": "string", "enum": ["plain", "tagged"], "default": "plain"},
                        "max_rounds": {"type": "integer", "minimum": 0, "maximum": MAX_ROUNDS, "default": DEFAULT_ROUNDS},
                        "rules": {"type": "string", "default": "default", "description": "As `ask --rules` (agent.md)."}
                    }}}}},
                "responses": {
                    "202": ok_json("Started.", json!({"type": "object", "required": ["id", "run", "events", "files"], "properties": {
                        "id": {"type": "string"}, "run": {"type": "string"}, "events": {"type": "string"},
                        "files": {"type": "array", "items": {"type": "string"}}}})),
                    "400": error_response("A bad body (empty or too long question, k or max_rounds out of range)."),
                    "401": unauthorized,
                    "403": error_response("A pinned file leaves the lake."),
                    "404": error_response("A pinned file does not exist."),
                    "408": error_response("The body did not arrive within the server's --body-timeout."),
                    "413": error_response("The body is too large."),
                    "415": error_response("The body is not sent as application/json."),
                    "422": error_response("A missing or unknown field (invalid_body), or no file found for the question (no_files)."),
                    "429": error_response("Too many runs in progress."),
                    "503": error_response("No LLM configured (llm_not_configured), or no Python.")
                }
            }},
            "/runs/{id}": {"get": {
                "summary": "How a run stands, with its summary once finished.",
                "parameters": [run_id_param()],
                "responses": {
                    "200": ok_json("The run.", json!({"$ref": "#/components/schemas/RunState"})),
                    "400": error_response("Not a run id."),
                    "401": unauthorized,
                    "404": error_response("No such run.")
                }
            }},
            "/runs/{id}/events": {"get": {
                "summary": "The run's trace as server-sent events: every line of trace.jsonl so far, then new ones, ending after `finish`. The event name is the line's kind (start, llm, retry, llm_failed, exec, verdict, files, route, plan, note, finish); the data is the JSON line.",
                "parameters": [run_id_param()],
                "responses": {
                    "200": {"description": "An event stream.", "content": {"text/event-stream": {"schema": {"type": "string"}}}},
                    "400": error_response("Not a run id."),
                    "401": unauthorized,
                    "404": error_response("No such run.")
                }
            }},
            "/openapi.json": {"get": {
                "summary": "This document.",
                "responses": {"200": ok_json("OpenAPI 3.1.", json!({"type": "object"})), "401": unauthorized}
            }}
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_document_lists_exactly_the_routes() {
        let doc = spec();
        let paths = doc["paths"].as_object().unwrap();
        let mut documented = Vec::new();
        for (path, item) in paths {
            for method in item.as_object().unwrap().keys() {
                documented.push((method.clone(), path.clone()));
            }
        }
        documented.sort();
        let mut routes: Vec<(String, String)> = super::super::ROUTES
            .iter()
            .map(|(m, p)| (m.to_string(), p.to_string()))
            .collect();
        routes.sort();
        assert_eq!(documented, routes);
        // Every $ref resolves.
        let text = doc.to_string();
        for name in text.split("#/components/schemas/").skip(1) {
            let name: String = name.chars().take_while(|c| c.is_alphanumeric()).collect();
            assert!(doc["components"]["schemas"].get(&name).is_some(), "{name}");
        }
    }
}
