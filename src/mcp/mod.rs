//! `lakestar mcp`: the index served to an MCP client (an agent) over stdio, with the
//! `rmcp` crate.
//!
//! Six tools answer from one [`Lake`]: `search_files`, `describe_file`, `head` and
//! `index_status` (the service layer, shared with the HTTP server), `reindex` (the
//! incremental indexer, in a blocking task) and `ask` (the DS-STAR agent). A bad
//! argument or a refused request is a tool result with `isError: true` and a message
//! saying what to do, so the calling agent can read it and correct itself; the server
//! keeps running. Stdout carries the protocol alone: logs go to stderr.

mod ask;
mod tools;

use crate::agent::build::AgentSetup;
use crate::service::{Lake, ServiceError};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{
    CallToolResult, ContentBlock, Implementation, IntoContents, ServerCapabilities, ServerConfig,
};
use rmcp::{tool_handler, ServerHandler, ServiceExt};
use std::sync::Arc;

/// How `reindex` crawls and `ask` runs the agent (the `lakestar mcp` options).
#[derive(Debug, Clone)]
pub struct McpOptions {
    /// `reindex` follows symbolic links (as `index --follow`) even if the index does
    /// not record it.
    pub follow_links: bool,
    /// `reindex` includes hidden files (as `index --hidden`) even if the index does not
    /// record it.
    pub hidden: bool,
    /// Python, prompts and the script timeout of the agent.
    pub agent: AgentSetup,
    /// Verifier rounds at most when the call does not say.
    pub max_rounds: usize,
    /// Debugger attempts per failing script.
    pub debug_attempts: usize,
    /// Tokens of file descriptions to give the agent when the call gives no `k`.
    pub budget: usize,
}

impl Default for McpOptions {
    fn default() -> Self {
        McpOptions {
            follow_links: false,
            hidden: false,
            agent: AgentSetup::default(),
            max_rounds: crate::service::ask::DEFAULT_ROUNDS,
            debug_attempts: crate::service::ask::DEFAULT_DEBUG_ATTEMPTS,
            budget: crate::service::ask::DEFAULT_BUDGET,
        }
    }
}

/// Why the MCP session could not run.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    /// The client's handshake failed (not an MCP client, or it went away).
    #[error("the MCP session did not start: {0}; `lakestar mcp` is meant to be started by an MCP client, which speaks JSON-RPC on its stdin")]
    Start(String),
    /// The session's task died.
    #[error("the MCP session failed: {0}")]
    Session(String),
}

/// The MCP server of one index.
#[derive(Clone)]
pub struct LakeServer {
    lake: Arc<Lake>,
    options: Arc<McpOptions>,
    tool_router: ToolRouter<Self>,
}

impl LakeServer {
    /// A server answering from `lake`.
    pub fn new(lake: Lake, options: McpOptions) -> Self {
        LakeServer {
            lake: Arc::new(lake),
            options: Arc::new(options),
            tool_router: Self::tool_router(),
        }
    }

    /// Serve one client on stdin/stdout until it closes the connection.
    pub async fn serve_stdio(self) -> Result<(), McpError> {
        let running = self
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| McpError::Start(e.to_string()))?;
        let reason = running
            .waiting()
            .await
            .map_err(|e| McpError::Session(e.to_string()))?;
        tracing::info!("MCP session ended: {reason:?}");
        Ok(())
    }
}

/// The tools a client lists, with their descriptions and argument schemas (for the
/// reference page `lakestar docs mcp` prints).
pub fn tools() -> Vec<rmcp::model::Tool> {
    LakeServer::tool_router().list_all()
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for LakeServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("lakestar", env!("CARGO_PKG_VERSION")))
            .with_instructions(format!(
                "lakestar serves the index of the data lake at {}: every file described \
                 (format, columns or keys, types, ranges, examples, time coverage). To \
                 answer a question about the data: search_files with the question, \
                 describe_file on the top hits to check their columns (head shows their first \
                 rows), then read the files \
                 yourself or call ask to have lakestar's agent write and run the analysis. \
                 Paths are relative to the lake root, as search_files returns them.",
                self.lake.root().display()
            ))
    }
}

/// A successful tool result: `value` as structured content and, for clients that read
/// only text, as compact JSON text (what the MCP specification asks for).
fn json_result(value: serde_json::Value) -> CallToolResult {
    CallToolResult::structured(value)
}

/// A refusal or failure the calling agent reads: the tool's result gets `isError: true`
/// and this message (rmcp turns a tool's `Err` into such a result).
#[derive(Debug)]
pub struct ToolError(String);

impl IntoContents for ToolError {
    fn into_contents(self) -> Vec<ContentBlock> {
        vec![ContentBlock::text(self.0)]
    }
}

/// What a tool returns.
type ToolResult = Result<CallToolResult, ToolError>;

fn tool_error(message: impl std::fmt::Display) -> ToolError {
    ToolError(message.to_string())
}

/// A service error as a tool error; faults of the server are logged too (on stderr).
fn service_error(e: ServiceError) -> ToolError {
    if !e.is_user_error() {
        tracing::error!("{}: {e}", e.code());
    }
    tool_error(e)
}

/// Run blocking work (SQLite, tantivy, the indexer) off the async workers.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ToolError> {
    tokio::task::spawn_blocking(f).await.unwrap_or_else(|e| {
        tracing::error!("a tool task failed: {e}");
        Err(tool_error(format!(
            "internal error: the tool's task failed ({e}); see the server's log"
        )))
    })
}
