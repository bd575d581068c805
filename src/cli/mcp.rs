//! `lakestar mcp`: serve the index to an MCP client over stdio (see [`crate::mcp`]).

use super::ask::runtime;
use super::IndexDirArg;
use crate::agent::build::AgentSetup;
use crate::mcp::{LakeServer, McpOptions};
use crate::service::ask as service;
use crate::service::Lake;
use anyhow::Result;
use lakestar_index::locate;
use std::path::PathBuf;
use std::time::Duration;

/// Arguments of `lakestar mcp`.
#[derive(Debug, clap::Args)]
pub(crate) struct McpArgs {
    #[command(flatten)]
    index: IndexDirArg,
    /// `reindex` follows symbolic links (to targets inside the lake, or anywhere when the
    /// index records `--follow-outside`) [default: as the index records]
    #[arg(long)]
    follow: bool,
    /// `reindex` includes hidden files [default: as the index records]
    #[arg(long)]
    hidden: bool,
    /// Python interpreter for the `ask` tool's generated code [default: the venv of
    /// `lakestar setup python`, else python3].
    #[arg(long, value_name = "PATH")]
    python: Option<PathBuf>,
    /// Directory of prompt overrides for `ask` (same file names as prompts/).
    #[arg(long, value_name = "DIR")]
    prompts: Option<PathBuf>,
    /// Wall-clock limit of one script of `ask`, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 120)]
    timeout: u64,
    /// Verifier rounds of `ask` at most, unless a call asks for fewer or more.
    #[arg(long, value_name = "N", default_value_t = service::DEFAULT_ROUNDS)]
    max_rounds: usize,
    /// Debugger attempts per failing script of `ask`.
    #[arg(long, value_name = "N", default_value_t = service::DEFAULT_DEBUG_ATTEMPTS)]
    debug_attempts: usize,
    /// Tokens of file descriptions `ask` gives the agent when a call sets no `k`.
    #[arg(long, value_name = "TOKENS", default_value_t = service::DEFAULT_BUDGET)]
    budget: usize,
}

pub(crate) fn run(a: McpArgs) -> Result<()> {
    let cwd = std::env::current_dir()?;
    let dir = locate::find_index(a.index.index.as_deref(), &cwd)?;
    // Absolute, so that the status and the run directories `ask` reports make sense to
    // a client that started the server from anywhere.
    let dir = dir.canonicalize().unwrap_or(dir);
    // Opened before serving, so that a missing index fails the start with its message
    // (on stderr, which clients show) instead of failing every tool call.
    let lake = Lake::open(&dir)?;
    tracing::info!("serving {} over MCP on stdio", dir.display());
    let server = LakeServer::new(
        lake,
        McpOptions {
            follow_links: a.follow,
            hidden: a.hidden,
            agent: AgentSetup {
                python: a.python,
                prompts: a.prompts,
                timeout: Duration::from_secs(a.timeout),
                ..AgentSetup::default()
            },
            max_rounds: a.max_rounds,
            debug_attempts: a.debug_attempts,
            budget: a.budget,
        },
    );
    runtime()?.block_on(server.serve_stdio())?;
    Ok(())
}
