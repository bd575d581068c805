//! Retrieval: which files answer a question. Full-text (BM25) and vector search over the
//! descriptions, fused by rank, with what descriptions know (time coverage, column names)
//! as extra evidence.

pub mod doc;
pub mod eval;
