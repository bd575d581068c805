//! The hybrid retriever: BM25 over the full-text index and cosine similarity over the
//! description embeddings, fused by reciprocal rank, plus evidence that generic
//! retrievers lack: the time span a question names against each file's time coverage.

use super::ann::VectorIndex;
use super::glob::PathGlob;
use super::names::NameMatcher;
use super::sync::{EMBEDDER_META, TEXT_DIR};
use super::text::TextIndex;
use crate::analyze::time;
use crate::catalog::Catalog;
use crate::companion::Companion;
use crate::embed::Embedder;
use crate::error::{InternalError, Result, UserError};
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

/// Candidates taken from each retriever before fusion.
const CANDIDATES: usize = 200;
/// Reciprocal-rank-fusion constant: higher flattens the rank curve.
const RRF_K: f64 = 60.0;
/// Weight of the BM25 ranking in the fusion.
const W_TEXT: f64 = 1.0;
/// Weight of the vector ranking in the fusion.
const W_VECTOR: f64 = 0.2;
/// Bonus, in fused-score units, for a file whose time coverage overlaps one of the
/// intervals the question asks (to the day). A file sharing only the year gets none: the
/// year token of the text index's time field is its (weaker) evidence.
const W_TIME: f64 = 0.5 / (RRF_K + 1.0);
/// Bonus per unit of inverse document frequency of a column (or key) the question names.
const W_COLUMN: f64 = 0.5 / (RRF_K + 1.0);
/// A name in quotes counts this many times more than one merely mentioned.
const QUOTED: f64 = 2.0;

/// The fusion weights, read once per search: the constants above, or the
/// `LAKESTAR_W_*` (and `LAKESTAR_RRF_K`) environment variables of a tuning run. The
/// bonuses scale with the fusion constant unless given: they are measured against the
/// best fused rank's score.
struct Weights {
    rrf_k: f64,
    text: f64,
    vector: f64,
    column: f64,
    quoted: f64,
    time: f64,
}

impl Weights {
    fn from_env() -> Weights {
        use super::tuned;
        let rrf_k = tuned("LAKESTAR_RRF_K", RRF_K);
        let scale = (RRF_K + 1.0) / (rrf_k + 1.0);
        Weights {
            rrf_k,
            text: tuned("LAKESTAR_W_TEXT", W_TEXT),
            vector: tuned("LAKESTAR_W_VECTOR", W_VECTOR),
            column: tuned("LAKESTAR_W_COLUMN", W_COLUMN * scale),
            quoted: tuned("LAKESTAR_QUOTED", QUOTED),
            time: tuned("LAKESTAR_W_TIME", W_TIME * scale),
        }
    }
}

/// Phrases the question quotes: "High Price", 'Pclass', `wage`, “Fare”.
fn quoted(query: &str) -> Vec<String> {
    let mut out = Vec::new();
    let chars: Vec<(usize, char)> = query.char_indices().collect();
    let mut i = 0;
    while i < chars.len() {
        let (pos, c) = chars[i];
        let close = match c {
            '"' => Some('"'),
            '`' => Some('`'),
            '“' => Some('”'),
            '‘' => Some('’'),
            // An apostrophe opens a quote only at the start of a word (not in "fisher's").
            '\'' if i == 0 || !chars[i - 1].1.is_alphanumeric() => Some('\''),
            _ => None,
        };
        if let Some(close) = close {
            if let Some(j) = (i + 1..chars.len()).find(|&j| chars[j].1 == close) {
                let inner = &query[pos + c.len_utf8()..chars[j].0];
                if !inner.trim().is_empty() && inner.chars().count() <= 60 {
                    out.push(inner.trim().to_lowercase());
                }
                i = j + 1;
                continue;
            }
        }
        i += 1;
    }
    out
}

/// Filters and size of a search.
#[derive(Debug, Clone, Default)]
pub struct SearchOptions {
    /// Results wanted.
    pub k: usize,
    /// Only this format (`csv`, `parquet`, ...).
    pub format: Option<String>,
    /// Only paths matching this glob, compiled once (by whoever builds the options, so
    /// that a bad one is refused before any search work) and matched in linear time.
    pub glob: Option<PathGlob>,
    /// List every member of a collection on its own; by default the members of a
    /// collection (same-schema siblings) fold into the best one, which names the others
    /// that matched.
    pub expand: bool,
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
    /// The collection the file belongs to, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub collection: Option<HitCollection>,
    /// Files a person opens with it: its documentation, the data a documentation file
    /// documents, lookup tables of its codes (at most [`COMPANIONS_NAMED`]). A file
    /// returned above (as a hit or a companion) is not repeated.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub companions: Vec<Companion>,
}

/// Companions a hit names at most.
pub const COMPANIONS_NAMED: usize = 5;

/// A hit's collection: which one, and (folded) its other members that matched.
#[derive(Debug, Clone, Serialize)]
pub struct HitCollection {
    /// Collection id (`lakestar collections ID` shows it).
    pub id: String,
    /// The members' path template.
    pub template: String,
    /// How many members it has.
    pub members: u64,
    /// Folded: the other members that matched the question, best first (at most
    /// [`MATCHING_NAMED`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub matching: Vec<String>,
    /// Folded: how many other members matched in all.
    #[serde(skip_serializing_if = "is_zero")]
    pub matched: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Other matching members a folded hit names; the rest are counted.
pub const MATCHING_NAMED: usize = 10;

/// A read-only view of an index for searching, at the state it was opened (or
/// reopened) at. It is `Sync`: a server shares one among concurrent searches.
pub struct Searcher {
    dir: PathBuf,
    /// rusqlite connections are not `Sync`; each search holds it only for its reads.
    catalog: Mutex<Catalog>,
    text: TextIndex,
    embedder: Arc<dyn Embedder>,
    vectors: VectorIndex,
}

fn search_err(e: impl std::fmt::Display) -> crate::Error {
    InternalError::Search(e.to_string()).into()
}

impl Searcher {
    /// Open the index at `dir` with the embedder it records (the built-in one for an
    /// index that records none).
    pub fn open_recorded(dir: &Path) -> Result<Searcher> {
        let spec = Catalog::open_reader(dir)?
            .meta(crate::search::sync::EMBEDDER_SPEC_META)?
            .map(|s| {
                crate::search::embedder::EmbedderSpec::parse(&s).map_err(UserError::BadEmbedder)
            })
            .transpose()?
            .unwrap_or_default();
        Searcher::open(dir, spec.build()?)
    }

    /// Open the index at `dir` with the embedder its vectors were made with.
    pub fn open(dir: &Path, embedder: Box<dyn Embedder>) -> Result<Searcher> {
        Self::open_with(dir, Arc::from(embedder), None)
    }

    /// A searcher over the index's current state, for a long-lived process after the
    /// index changed: the embedder (a model, possibly large) and, while its generation
    /// stands, the vector graph are kept rather than loaded again.
    pub fn reopen(&self) -> Result<Searcher> {
        Self::open_with(&self.dir, self.embedder.clone(), Some(&self.vectors))
    }

    fn open_with(
        dir: &Path,
        embedder: Arc<dyn Embedder>,
        previous: Option<&VectorIndex>,
    ) -> Result<Searcher> {
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
                searched: format!(
                    "for search at {} (run `lakestar index` to build it)",
                    text_dir.display()
                ),
            }
            .into());
        }
        let text = TextIndex::open(&text_dir).map_err(search_err)?;
        let vectors = match previous {
            Some(v) => v.reopen(&catalog, dir, &embedder.id())?,
            None => VectorIndex::open(&catalog, dir, &embedder.id())?,
        };
        Ok(Searcher {
            dir: dir.to_path_buf(),
            catalog: Mutex::new(catalog),
            text,
            embedder,
            vectors,
        })
    }

    /// Files indexed for search.
    pub fn len(&self) -> usize {
        self.vectors.len()
    }

    /// Whether nothing is indexed.
    pub fn is_empty(&self) -> bool {
        self.vectors.is_empty()
    }

    /// The index directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The catalog connection (a panic in another search cannot have left it in a
    /// half-done state: every use is a read).
    fn catalog(&self) -> MutexGuard<'_, Catalog> {
        self.catalog.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The top files for `query`.
    pub fn search(&self, query: &str, opts: &SearchOptions) -> Result<Vec<Hit>> {
        let k = opts.k.max(1);
        let w = Weights::from_env();
        let mut fused: HashMap<String, (f64, Vec<String>)> = HashMap::new();
        for (rank, hit) in self
            .text
            .search(query, CANDIDATES)
            .map_err(search_err)?
            .into_iter()
            .enumerate()
        {
            let e = fused.entry(hit.path).or_default();
            e.0 += w.text / (w.rrf_k + rank as f64 + 1.0);
            if !hit.fields.is_empty() {
                e.1.push(format!("matches {}", hit.fields.join(", ")));
            }
        }
        if let Some(q) = self
            .embedder
            .embed(&[query])
            .map_err(search_err)?
            .into_iter()
            .next()
        {
            let nearest = self.vectors.nearest(&q, CANDIDATES);
            for (rank, (path, sim)) in nearest.into_iter().enumerate() {
                let e = fused.entry(path).or_default();
                e.0 += w.vector / (w.rrf_k + rank as f64 + 1.0);
                if rank < 10 {
                    e.1.push(format!("similar description ({sim:.2})"));
                }
            }
        }

        // Each candidate's row and description are read once, after the filters.
        let mut matcher = NameMatcher::new(query);
        let quotes = quoted(query);
        let mut candidates = Vec::with_capacity(fused.len());
        for (path, (score, reasons)) in fused {
            // The lock is taken per read, not per search: decoding and ranking run in
            // parallel across concurrent searches.
            let row = self.catalog().file(&path)?;
            let Some(row) = row else {
                continue;
            };
            if opts
                .format
                .as_deref()
                .is_some_and(|f| f != row.format.as_str())
                || opts.glob.as_ref().is_some_and(|g| !g.is_match(&path))
            {
                continue;
            }
            let desc = self.catalog().file_description(&row)?;
            let mut named = desc
                .as_ref()
                .map_or_else(Vec::new, |d| named_in(d, &mut matcher, &quotes, w.quoted));
            if let Some(s) = matcher.names_file(&path) {
                // Keyed by the file name, so that rarity counts the files sharing it: a
                // question naming `README.md` names every folder's README a little.
                let base = path.rsplit('/').next().unwrap_or(&path).to_lowercase();
                named.push((format!("file {base}"), s));
            }
            if let Some(d) = &desc {
                for v in super::doc::categories(d) {
                    if let Some(s) = matcher.names_category(&v) {
                        named.push((format!("category {}", v.to_lowercase()), s));
                    }
                }
            }
            candidates.push(Candidate {
                path,
                score,
                reasons,
                row,
                desc,
                named,
            });
        }

        // Columns and keys the question names, weighted by how rare they are among the
        // candidates: a question that quotes 'SibSp' and 'Parch' is about the files that
        // have them.
        let mut df: HashMap<&str, usize> = HashMap::new();
        for c in &candidates {
            for (n, _) in &c.named {
                *df.entry(n.as_str()).or_default() += 1;
            }
        }
        let n_candidates = candidates.len().max(1) as f64;
        let bonuses: Vec<f64> = candidates
            .iter()
            .map(|c| {
                c.named
                    .iter()
                    .map(|(n, strength)| {
                        (1.0 + n_candidates / df[n.as_str()] as f64).ln() * strength
                    })
                    .sum()
            })
            .collect();
        let asked = asked_days(query);
        for (c, bonus) in candidates.iter_mut().zip(bonuses) {
            if !c.named.is_empty() {
                c.score += bonus * w.column;
                let names: Vec<&str> = c.named.iter().map(|(n, _)| n.as_str()).collect();
                c.reasons.push(format!("names {}", names.join(", ")));
            }
            if let Some(t) = &c.row.time {
                // Compared to the day: a timestamp's time of day (`2012-05-06T23:00`)
                // must not put it after the day it falls on.
                let day = |s: &str| s.get(..10).unwrap_or(s).to_owned();
                let (start, end) = (day(&t.start), day(&t.end));
                // Each asked interval on its own: a file between two asked days, or
                // sharing only their year, is not what was asked (the year token of the
                // time field already credits the shared year, less strongly).
                let overlapped: Vec<String> = asked
                    .iter()
                    .filter(|(a, b)| start <= *b && *a <= end)
                    .map(|(a, b)| format!("{a} … {b}"))
                    .collect();
                if !overlapped.is_empty() {
                    c.score += w.time;
                    c.reasons.push(format!(
                        "covers {} … {} (asked {})",
                        t.start,
                        t.end,
                        overlapped.join(", ")
                    ));
                }
            }
        }
        candidates.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then_with(|| a.path.cmp(&b.path))
        });
        self.finish(candidates, k, opts.expand)
    }

    /// The top `k` of the ranked candidates as hits, with their collections: folded
    /// (one hit per collection, naming the other members that matched) unless `expand`
    /// — and with their companions. Every file is returned once: a companion of a hit
    /// is not a hit of its own below it (the next candidate takes its place), and a hit
    /// above is not named again as a companion.
    fn finish(&self, ranked: Vec<Candidate>, k: usize, expand: bool) -> Result<Vec<Hit>> {
        let mut hits: Vec<Hit> = Vec::with_capacity(k);
        let mut returned: HashSet<String> = HashSet::new();
        // Collection id → index of its hit.
        let mut shown: HashMap<String, usize> = HashMap::new();
        let mut details: HashMap<String, Option<crate::collect::Collection>> = HashMap::new();
        for c in ranked {
            if hits.len() == k && (expand || shown.is_empty()) {
                break;
            }
            if returned.contains(&c.path) {
                continue;
            }
            let id = self.catalog().collection_of(&c.path)?;
            if let Some(id) = &id {
                if !expand {
                    if let Some(&at) = shown.get(id) {
                        if let Some(hc) = hits[at].collection.as_mut() {
                            if hc.matching.len() < MATCHING_NAMED {
                                hc.matching.push(c.path.clone());
                            }
                            hc.matched += 1;
                        }
                        continue;
                    }
                }
            }
            if hits.len() == k {
                continue;
            }
            let collection = match id {
                Some(id) => {
                    if !details.contains_key(&id) {
                        let d = self.catalog().collection(&id)?;
                        details.insert(id.clone(), d);
                    }
                    shown.insert(id.clone(), hits.len());
                    details[&id].as_ref().map(|d| HitCollection {
                        id: id.clone(),
                        template: d.template.clone(),
                        members: d.members,
                        matching: Vec::new(),
                        matched: 0,
                    })
                }
                None => None,
            };
            returned.insert(c.path.clone());
            let mut companions = self.catalog().companions(&c.path)?;
            companions.retain(|m| !returned.contains(&m.path));
            companions.truncate(COMPANIONS_NAMED);
            returned.extend(companions.iter().map(|m| m.path.clone()));
            // Summaries only for what is returned.
            hits.push(Hit {
                summary: c
                    .desc
                    .as_ref()
                    .map(|d| crate::render(&c.path, d, crate::RenderOptions { max_bytes: 400 }))
                    .and_then(|r| r.lines().next().map(str::to_string))
                    .unwrap_or_default(),
                format: c.row.format.as_str().to_string(),
                path: c.path,
                score: c.score,
                reasons: c.reasons,
                collection,
                companions,
            });
        }
        Ok(hits)
    }
}

/// The day intervals a question asks about (`YYYY-MM-DD` pairs), each kept apart (see
/// [`dates`](super::dates)); a question they find none in is read like a file name, for
/// the shapes only names use.
fn asked_days(query: &str) -> Vec<(String, String)> {
    let asked = super::dates::asked(query);
    if asked.is_empty() {
        return time::from_text(query)
            .map(|t| vec![(t.start, t.end)])
            .unwrap_or_default();
    }
    asked
        .into_iter()
        .map(|a| (a.start.iso(), a.end.iso()))
        .collect()
}

/// A fused result with what ranking and output need of it.
struct Candidate {
    path: String,
    score: f64,
    reasons: Vec<String>,
    row: crate::catalog::FileRow,
    desc: Option<crate::Description>,
    /// Its column and key names that the question names (lowercase), with how strongly.
    named: Vec<(String, f64)>,
}

/// The names of `d` (lowercased) that the question quotes or names (see [`NameMatcher`]),
/// each with its strength: `quoted` for a quoted name, else the matcher's.
fn named_in(
    d: &crate::Description,
    matcher: &mut NameMatcher,
    quotes: &[String],
    quoted: f64,
) -> Vec<(String, f64)> {
    let spaced = |n: &str| n.replace(['_', '-', '.'], " ");
    let mut hit: Vec<(String, f64)> = super::doc::names(d)
        .into_iter()
        .filter_map(|n| {
            let lower = n.to_lowercase();
            let q = (quotes.contains(&lower) || quotes.contains(&spaced(&lower))).then_some(quoted);
            let s = match (q, matcher.names(&n)) {
                (Some(a), Some(b)) => a.max(b),
                (Some(a), None) | (None, Some(a)) => a,
                (None, None) => return matcher.names_part(&n),
            };
            Some((lower, s))
        })
        .collect();
    hit.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.total_cmp(&a.1)));
    hit.dedup_by(|a, b| a.0 == b.0);
    hit
}
