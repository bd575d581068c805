//! Embedders: turn texts (file descriptions, questions) into unit-length vectors for the
//! vector half of hybrid retrieval.
//!
//! Five kinds, all behind the [`Embedder`] trait:
//!
//! - [`HashEmbedder`] — the built-in default. Feature hashing of words, word pairs and
//!   character n-grams; no model, no download, deterministic everywhere. It matches
//!   vocabulary (`gdp_pc_ppp` ↔ "GDP per capita PPP"), not meaning.
//! - [`OpenAiEmbedder`] and [`OllamaEmbedder`] — an embedding model behind an HTTP API
//!   (OpenAI or any server speaking its `/v1/embeddings` shape; Ollama's `/api/embed`).
//! - [`Model2VecEmbedder`] — static token embeddings in the Model2Vec layout
//!   (`model.safetensors` + `tokenizer.json`) loaded from a local directory.
//! - [`BertEmbedder`] — a BERT-family sentence encoder (all-MiniLM-L6-v2) run on the
//!   CPU with candle; mean pooling and normalization as sentence-transformers does.
//! - [`WordsEmbedder`] — the same encoder run once per distinct word (cached on disk), a
//!   text being the weighted mean of its words' vectors beside its hash vector: meaning
//!   at nearly the hash embedder's speed.
//!
//! An index records the [`Embedder::id`] it was built with; a different id means its
//! vectors are not comparable and must be recomputed.

// The local neural embedders run with candle and tokenizers: the `neural` feature.
#[cfg(feature = "neural")]
mod bert;
mod hash;
mod http;
#[cfg(feature = "neural")]
mod model2vec;
#[cfg(feature = "neural")]
mod word_cache;
#[cfg(feature = "neural")]
mod words;

use std::path::PathBuf;

#[cfg(feature = "neural")]
pub use bert::{BertEmbedder, DEFAULT_MAX_TOKENS};
pub use hash::HashEmbedder;
pub use http::{HttpOptions, OllamaEmbedder, OpenAiEmbedder, RetryPolicy};
#[cfg(feature = "neural")]
pub use model2vec::Model2VecEmbedder;
#[cfg(feature = "neural")]
pub use words::{WordsEmbedder, WordsOptions, DEFAULT_HASH_SHARE, DEFAULT_SIF};

/// Name of the file in which `lakestar model install` records what a model is.
pub const MANIFEST: &str = "lakestar-model.json";

/// Turns texts into unit-length vectors. Implementations are chosen per index and their
/// `id()` is recorded in it, so that a change of embedder forces re-embedding.
///
/// A text with nothing to embed (empty, or only characters the embedder ignores) gives
/// the zero vector, which [`cosine`] scores 0.0 against anything.
pub trait Embedder: Send + Sync {
    /// Stable id including model and dimension, e.g. "hash-ngram-v1-512".
    fn id(&self) -> String;
    /// Length of every vector this embedder returns.
    fn dim(&self) -> usize;
    /// One L2-normalized vector per text, in order.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError>;
}

/// Cosine similarity of two vectors. Never panics: vectors of different lengths, empty
/// vectors and zero vectors all give 0.0, and so does anything that would be NaN.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    if a.len() != b.len() || a.is_empty() {
        return 0.0;
    }
    // Accumulate in f64: descriptions give vectors of a few hundred to a few thousand
    // components, and f32 sums of that many products lose the last digits that
    // separate close candidates.
    let (mut dot, mut na, mut nb) = (0.0f64, 0.0f64, 0.0f64);
    for (&x, &y) in a.iter().zip(b) {
        let (x, y) = (f64::from(x), f64::from(y));
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na == 0.0 || nb == 0.0 {
        return 0.0;
    }
    let c = dot / (na.sqrt() * nb.sqrt());
    if c.is_finite() {
        c.clamp(-1.0, 1.0) as f32
    } else {
        0.0
    }
}

/// Scales `v` to unit L2 length in place; a zero (or non-finite) vector becomes all
/// zeros rather than NaN.
pub(crate) fn l2_normalize(v: &mut [f32]) {
    let norm = v
        .iter()
        .map(|&x| f64::from(x) * f64::from(x))
        .sum::<f64>()
        .sqrt();
    if norm > 0.0 && norm.is_finite() {
        for x in v.iter_mut() {
            *x = (f64::from(*x) / norm) as f32;
        }
    } else {
        v.iter_mut().for_each(|x| *x = 0.0);
    }
}

/// Why texts could not be embedded. Every message says what to check or do next.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    /// The embedder was configured with values it cannot work with.
    #[error("invalid embedder configuration: {0}")]
    Config(String),
    /// The embedding server could not be reached or the connection failed.
    #[error("cannot reach the embedding server at {url}: {detail}; check that the server is running and that the base URL is right")]
    Network {
        /// The URL that was requested.
        url: String,
        /// What went wrong, from the HTTP client (including timeouts).
        detail: String,
    },
    /// The embedding server answered with an error status.
    #[error("embedding server {url} answered HTTP {status}: {message}; {hint}")]
    Status {
        /// The URL that was requested.
        url: String,
        /// The HTTP status code.
        status: u16,
        /// The server's error message, or an excerpt of the body.
        message: String,
        /// What to check for this status.
        hint: &'static str,
    },
    /// The server answered 2xx but not with the expected JSON shape.
    #[error("embedding server {url} sent an unexpected response: {detail}; check that the base URL points at an {api} embeddings API")]
    BadResponse {
        /// The URL that was requested.
        url: String,
        /// Which API shape was expected ("OpenAI-compatible", "Ollama").
        api: &'static str,
        /// What was wrong with it.
        detail: String,
    },
    /// Vectors came back with another length than expected.
    #[error("embedder {embedder} returned vectors of dimension {found}, expected {expected}; set the dimension the model really produces, or re-create the index for the new model")]
    DimensionMismatch {
        /// The embedder's id (model name).
        embedder: String,
        /// The dimension given or learned earlier.
        expected: usize,
        /// The dimension received.
        found: usize,
    },
    /// A Model2Vec model directory could not be loaded.
    #[error("cannot load the Model2Vec model in {}: {detail}; the directory needs model.safetensors (a vocab × dim embeddings tensor) and the model's tokenizer.json", dir.display())]
    Model {
        /// The model directory.
        dir: PathBuf,
        /// What was wrong.
        detail: String,
    },
    /// The tokenizer failed on an input text.
    #[error("the model's tokenizer failed on a text: {0}; the tokenizer.json may not match this tokenizers version")]
    Tokenize(String),
    /// A BERT model directory could not be loaded.
    #[error("cannot load the BERT model in {}: {detail}; the directory needs config.json, model.safetensors and tokenizer.json of one BERT-family model (reinstall it with `lakestar model install`)", dir.display())]
    Bert {
        /// The model directory.
        dir: PathBuf,
        /// What was wrong.
        detail: String,
    },
    /// Running the model failed.
    #[error("the BERT model failed on a batch of texts: {0}")]
    Inference(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cosine_of_parallel_orthogonal_and_opposite() {
        assert!((cosine(&[1.0, 2.0], &[2.0, 4.0]) - 1.0).abs() < 1e-6);
        assert_eq!(cosine(&[1.0, 0.0], &[0.0, 3.0]), 0.0);
        assert!((cosine(&[1.0, 1.0], &[-1.0, -1.0]) + 1.0).abs() < 1e-6);
    }

    #[test]
    fn cosine_never_panics_on_odd_input() {
        assert_eq!(cosine(&[1.0, 2.0], &[1.0]), 0.0);
        assert_eq!(cosine(&[], &[]), 0.0);
        assert_eq!(cosine(&[0.0, 0.0], &[1.0, 0.0]), 0.0);
        assert_eq!(cosine(&[f32::NAN, 1.0], &[1.0, 1.0]), 0.0);
        assert_eq!(cosine(&[f32::INFINITY, 1.0], &[1.0, 1.0]), 0.0);
    }

    #[test]
    fn normalize_gives_unit_length_and_keeps_zero_vectors_zero() {
        let mut v = vec![3.0, 4.0];
        l2_normalize(&mut v);
        assert!((v[0] - 0.6).abs() < 1e-7 && (v[1] - 0.8).abs() < 1e-7);
        let mut z = vec![0.0; 3];
        l2_normalize(&mut z);
        assert_eq!(z, vec![0.0; 3]);
    }
}
