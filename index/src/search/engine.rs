//! The hybrid retriever: BM25 over the full-text index and cosine similarity over the
//! description embeddings, fused by reciprocal rank, plus evidence that generic
//! retrievers lack: the time span a question names against each file's time coverage.

use super::sync::{EMBEDDER_META, TEXT_DIR};
use super::text::TextIndex;
use crate::analyze::time;
use crate::catalog::Catalog;
use crate::embed::{cosine, Embedder};
use crate::error::{InternalError, Result, UserError};
use serde::Serialize;
use std::collections::HashMap;
use std::path::Path;

/// Candidates taken from each retriever before fusion.
const CANDIDATES: usize = 200;
/// Reciprocal-rank-fusion constant: higher flattens the rank curve.
const RRF_K: f64 = 60.0;
/// Weight of the BM25 ranking in the fusion.
const W_TEXT: f64 = 1.0;
/// Weight of the vector ranking in the fusion.
const W_VECTOR: f64 = 0.7;
/// Bonus, in fused-score units, for a file whose time coverage overlaps the question's.
const W_TIME: f64 = 0.5 / (RRF_K + 1.0);

/// Filters and size of a search.
#[derive(Debug, Clone, Default)]
pub struct SearchOptions {
    /// Results wanted.
    pub k: usize,
    /// Only this format (`csv`, `parquet`, ...).
    pub format: Option<String>,
    /// Only paths matching this glob.
    pub glob: Option<String>,
}

/// One ranked file.
#[derive(Debug, Clone, Serialize)]
pub struct Hit {
    /// Relative path, `/`-separated.
    pub path: String,
    /// Fused score (higher is better; comparable within one query).
    pub score: f64,
    /// Format name.
    pub format: String,
    /// The first line of the file's description.
    pub summary: String,
    /// Why it ranks: matched fields, vector similarity, time overlap.
    pub reasons: Vec<String>,
}

/// A read-only view of an index for searching.
pub struct Searcher {
    catalog: Catalog,
    text: TextIndex,
    embedder: Box<dyn Embedder>,
    vectors: Vec<(String, Vec<f32>)>,
}

fn search_err(e: impl std::fmt::Display) -> crate::Error {
    InternalError::Search(e.to_string()).into()
}

impl Searcher {
    /// Open the index at `dir` with the embedder its vectors were made with.
    pub fn open(dir: &Path, embedder: Box<dyn Embedder>) -> Result<Searcher> {
        let catalog = Catalog::open_reader(dir)?;
        let recorded = catalog.meta(EMBEDDER_META)?;
        if recorded.as_deref().is_some_and(|r| r != embedder.id()) {
            return Err(UserError::EmbedderMismatch {
                recorded: recorded.unwrap_or_default(),
                given: embedder.id(),
            }
            .into());
        }
        let text_dir = dir.join(TEXT_DIR);
        if !text_dir.join("meta.json").is_file() {
            return Err(UserError::NoIndex {
                searched: format!("for search at {} (run `lakestar index` to build it)", text_dir.display()),
            }
            .into());
        }
        let text = TextIndex::open(&text_dir).map_err(search_err)?;
        let vectors = catalog.file_vectors(&embedder.id())?;
        Ok(Searcher { catalog, text, embedder, vectors })
    }

    /// Files indexed for search.
    pub fn len(&self) -> usize {
        self.vectors.len()
    }

    /// Whether nothing is indexed.
    pub fn is_empty(&self) -> bool {
        self.vectors.is_empty()
    }

    /// The top files for `query`.
    pub fn search(&self, query: &str, opts: &SearchOptions) -> Result<Vec<Hit>> {
        let k = opts.k.max(1);
        let mut fused: HashMap<String, (f64, Vec<String>)> = HashMap::new();
        for (rank, hit) in self.text.search(query, CANDIDATES).map_err(search_err)?.into_iter().enumerate() {
            let e = fused.entry(hit.path).or_default();
            e.0 += W_TEXT / (RRF_K + rank as f64 + 1.0);
            if !hit.fields.is_empty() {
                e.1.push(format!("matches {}", hit.fields.join(", ")));
            }
        }
        if let Some(q) = self.embedder.embed(&[query]).map_err(search_err)?.into_iter().next() {
            let mut sims: Vec<(f32, &str)> = self.vectors.iter().map(|(p, v)| (cosine(&q, v), p.as_str())).collect();
            sims.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
            for (rank, (sim, path)) in sims.into_iter().take(CANDIDATES).enumerate() {
                let e = fused.entry(path.to_string()).or_default();
                e.0 += W_VECTOR / (RRF_K + rank as f64 + 1.0);
                if rank < 10 {
                    e.1.push(format!("similar description ({sim:.2})"));
                }
            }
        }
        let asked = time::from_path(&query.to_lowercase().replace(['/', '.', ','], " "));
        let mut hits = Vec::new();
        for (path, (mut score, mut reasons)) in fused {
            let Some(row) = self.catalog.file(&path)? else { continue };
            if opts.format.as_deref().is_some_and(|f| f != row.format.as_str()) {
                continue;
            }
            if opts.glob.as_deref().is_some_and(|g| !super::eval::glob_match(g, &path)) {
                continue;
            }
            if let (Some(q), Some(t)) = (&asked, &row.time) {
                if t.start <= q.end && q.start <= t.end {
                    score += W_TIME;
                    reasons.push(format!("covers {} … {} (asked {} … {})", t.start, t.end, q.start, q.end));
                }
            }
            let summary = match (&row.hash, &row.analyzer) {
                (Some(h), Some(a)) => self
                    .catalog
                    .description(h, a)?
                    .map(|d| crate::render(&path, &d, crate::RenderOptions { max_bytes: 400 }))
                    .and_then(|r| r.lines().next().map(str::to_string))
                    .unwrap_or_default(),
                _ => String::new(),
            };
            hits.push(Hit {
                format: row.format.as_str().to_string(),
                path,
                score,
                summary,
                reasons,
            });
        }
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.path.cmp(&b.path)));
        hits.truncate(k);
        Ok(hits)
    }
}
