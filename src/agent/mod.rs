//! The agent: DS-STAR's plan → code → execute → verify loop over the files a question
//! retrieves (Nam et al., 2025, Algorithm 1).
//!
//! - [`llm`]: an OpenAI-compatible chat client (retries, role header, usage and cost,
//!   record/replay cassettes).
//! - [`sandbox`]: running generated Python under limits, in its own directory.

pub mod llm;
pub mod sandbox;
