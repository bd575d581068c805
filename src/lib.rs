//! lakestar: make big, messy data lakes answerable.
//!
//! The indexer (crawl, catalog, analyze) lives in the `lakestar-index` crate of this
//! workspace; this crate holds what sits on top of it: the agent, the service layer every
//! surface answers from, the HTTP and MCP servers, benchmark grading and the command line.

pub mod agent;
pub mod bench;
pub mod cli;
pub mod mcp;
pub mod serve;
pub mod service;

pub use lakestar_index as index;
