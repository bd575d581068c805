//! Ranking as one configured stage: retrieval results become typed [`evidence`], a pure
//! [`score`] function weighs it under the searcher's [`RankingConfig`], [`shares`] lets
//! the windows and clauses of a question take turns in the list, and [`fold`] decides
//! which members of a collection are hits of their own.

pub mod config;
pub mod evidence;
pub(crate) mod fold;
pub mod relevance;
pub(crate) mod score;
pub(crate) mod shares;

pub use config::RankingConfig;
pub use evidence::Reason;
pub use relevance::Relevance;
