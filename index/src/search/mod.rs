//! Retrieval: which files answer a question. Full-text (BM25) and vector search over the
//! descriptions, fused by rank, with what descriptions know (time coverage, column names)
//! as extra evidence.
//!
//! [`text`] is the full-text index over file paths, column names, values and rendered
//! descriptions, kept in `.lakestar/text/`; [`doc`] says what of a description it reads;
//! [`ann`] finds the nearest description embeddings (an HNSW graph on disk, or exact
//! search for small indexes); [`eval`] measures retrieval against a task file; [`glob`]
//! compiles the path globs that filter a search and name an evaluation's relevant files;
//! `dates` reads the days a question asks about; [`vocab`] the other spellings of its words; [`rank`] turns what the retrievers
//! found into evidence, scores and folded hits, under one configuration.

pub mod ann;
mod dates;
pub mod doc;
pub mod embedder;
pub mod engine;
pub mod eval;
pub mod glob;
mod names;
pub mod rank;
pub mod sync;
pub mod text;
pub mod vocab;
mod words;

pub use names::written_exactly;
pub use words::{matching_spans, QueryWords};
