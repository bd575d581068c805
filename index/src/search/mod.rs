//! Retrieval: finding the files of a lake that a question needs.
//!
//! [`text`] is the full-text (BM25) index over file paths, column names, values and
//! rendered descriptions, kept in `.lakestar/text/`.

pub mod text;
mod words;
