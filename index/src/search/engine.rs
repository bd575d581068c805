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
/// Weight of the vector ranking in the fusion, for the hash embedder's vectors (and any
/// embedder not named below): above it, the hashed n-grams cost DA-Code recall@20.
const W_VECTOR: f64 = 0.2;
/// Weight of the vector ranking when the words embedder made the vectors: at 0.3 it
/// gains DABench questions at rank 1 over 0.2 and loses none of DA-Code; at 0.4 and
/// above DA-Code loses recall@20 (BENCHMARKS.md, "Meaning in the default").
const W_VECTOR_WORDS: f64 = 0.3;
/// Weight of the vector ranking when a BERT sentence encoder made the vectors: its
/// vectors are the best of all embedders alone, and DABench MRR rises from 0.800 at 0.2
/// to 0.821 at 1.0 while DA-Code holds (0.700 → 0.703).
const W_VECTOR_BERT: f64 = 1.0;

/// The default vector weight for vectors of the embedder with id `embedder_id`.
fn vector_weight(embedder_id: &str) -> f64 {
    if embedder_id.starts_with("words-") {
        W_VECTOR_WORDS
    } else if embedder_id.starts_with("bert-") {
        W_VECTOR_BERT
    } else {
        W_VECTOR
    }
}
/// Bonus, in fused-score units, for a file whose time coverage overlaps one of the
/// intervals the question asks (to the day). A file sharing only the year gets none: the
/// year token of the text index's time field is its (weaker) evidence.
const W_TIME: f64 = 0.5 / (RRF_K + 1.0);
/// Bonus per unit of inverse document frequency of a column (or key) the question names.
const W_COLUMN: f64 = 0.5 / (RRF_K + 1.0);
/// A name in quotes counts this many times more than one merely mentioned.
const QUOTED: f64 = 2.0;
/// A column or key name of one plain word (`rainfall`, `Age`: letters only, no separator,
/// hump or digit) that the question merely uses as a word counts this share of a word's
/// strength (a word is already below a quoted name, code, or a name spelled by several
/// words: `strength` in `names`). Whole by default: both development sets reward
/// plain-word evidence, and any share below 1 cost them (BENCHMARKS.md, "Name evidence
/// sized"); the words that crowd are the [`GENERIC`] ones.
const PLAIN: f64 = 1.0;
/// The share of a word's strength for a plain name that is a word of the data
/// vocabulary itself (`value`, `type`, `period`, `file`: see
/// [`generic_word`](super::names::generic_word)), merely said: questions say them for
/// their own sake, and a few wide files having them as columns must not answer every
/// question that says them.
const GENERIC: f64 = 0.25;
/// The name evidence of one file, summed over its names, saturates at this multiple of
/// the best fused score of the question (`cap · (1 − e^(−bonus/cap))`): a small bonus
/// counts nearly whole, a large one never more than the cap. At 1 both development sets
/// lose questions at rank 1; at 2 neither does.
const NAMES_CAP: f64 = 2.0;
/// The part of it that plain words make (see [`PLAIN`]) saturates first, at this
/// multiple of the best fused score; 0 leaves it to the overall cap. Off by default: at
/// 0.5–1 both development sets lose questions (BENCHMARKS.md).
const PLAIN_CAP: f64 = 0.0;

/// The fusion weights, read once per search: the constants above (the vector weight by
/// the embedder that made the vectors), or the
/// `LAKESTAR_W_*` (and `LAKESTAR_RRF_K`) environment variables of a tuning run. The
/// bonuses scale with the fusion constant unless given: they are measured against the
/// best fused rank's score.
struct Weights {
    rrf_k: f64,
    text: f64,
    vector: f64,
    column: f64,
    quoted: f64,
    plain: f64,
    generic: f64,
    names_cap: f64,
    plain_cap: f64,
    time: f64,
}

impl Weights {
    fn from_env(embedder_id: &str) -> Weights {
        use super::tuned;
        let rrf_k = tuned("LAKESTAR_RRF_K", RRF_K);
        let scale = (RRF_K + 1.0) / (rrf_k + 1.0);
        Weights {
            rrf_k,
            text: tuned("LAKESTAR_W_TEXT", W_TEXT),
            vector: tuned("LAKESTAR_W_VECTOR", vector_weight(embedder_id)),
            column: tuned("LAKESTAR_W_COLUMN", W_COLUMN * scale),
            quoted: tuned("LAKESTAR_QUOTED", QUOTED),
            plain: tuned("LAKESTAR_W_PLAIN", PLAIN),
            generic: tuned("LAKESTAR_W_GENERIC", GENERIC),
            names_cap: tuned("LAKESTAR_NAMES_CAP", NAMES_CAP),
            plain_cap: tuned("LAKESTAR_PLAIN_CAP", PLAIN_CAP),
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
        let w = Weights::from_env(&self.embedder.id());
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
                .map_or_else(Vec::new, |d| named_in(d, &mut matcher, &quotes, &w));
            if let Some(s) = matcher.names_file(&path) {
                // Keyed by the file name, so that rarity counts the files sharing it: a
                // question naming `README.md` names every folder's README a little.
                let base = path.rsplit('/').next().unwrap_or(&path).to_lowercase();
                named.push(Named::other(format!("file {base}"), s));
            }
            if let Some(d) = &desc {
                for v in super::doc::categories(d) {
                    if let Some(s) = matcher.names_category(&v) {
                        named.push(Named::other(format!("category {}", v.to_lowercase()), s));
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

        // Columns and keys the question names, weighted by how rare they are in the
        // lake: a question that quotes 'SibSp' and 'Parch' is about the files that have
        // them, one that says "period" is not about every file with a `period` column.
        let rarity = self.rarity(&candidates)?;
        let top = candidates.iter().map(|c| c.score).fold(0.0, f64::max);
        let bonuses: Vec<f64> = candidates
            .iter()
            .map(|c| {
                let part = |plain: bool| -> f64 {
                    let b: f64 = (c.named.iter().filter(|n| n.plain == plain))
                        .map(|n| rarity[&n.key] * n.strength)
                        .sum();
                    b * w.column
                };
                let plain = saturate(part(true), w.plain_cap * top);
                saturate(part(false) + plain, w.names_cap * top)
            })
            .collect();
        let asked = asked_days(query);
        for (c, bonus) in candidates.iter_mut().zip(bonuses) {
            if !c.named.is_empty() {
                c.score += bonus;
                let names: Vec<&str> = c.named.iter().map(|n| n.key.as_str()).collect();
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

    /// The rarity of each name the candidates are named by, `ln(1 + N / df)`: `N` the
    /// files of the lake, `df` those having the name. When the candidates are not the
    /// whole lake, a column or key name is counted by the text index, over the whole
    /// lake: a word that is a column of a few retrieved files and of many others is not
    /// rare. File names, categories and names named in part are counted among the
    /// candidates.
    fn rarity(&self, candidates: &[Candidate]) -> Result<HashMap<String, f64>> {
        let mut df: HashMap<&str, (u64, bool)> = HashMap::new();
        for c in candidates {
            for n in &c.named {
                let e = df.entry(n.key.as_str()).or_default();
                e.0 += 1;
                e.1 |= n.column;
            }
        }
        let files = self.text.len().map_err(search_err)?;
        let whole = candidates.len() as u64 >= files;
        let n = files.max(candidates.len() as u64).max(1) as f64;
        df.into_iter()
            .map(|(key, (among, column))| {
                // Candidates that are the whole lake count exactly; the index's count of a
                // name's rarest identifier is an upper bound (`portfolio` counts the file
                // with a `Portfolio Weight` column too).
                let lake = if column && !whole {
                    self.text.name_doc_freq(key).map_err(search_err)?
                } else {
                    0
                };
                // The index may count a replaced file twice until its segments merge.
                let df = among.max(lake).min(n as u64).max(1) as f64;
                Ok((key.to_owned(), (1.0 + n / df).ln()))
            })
            .collect()
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
    /// Its names that the question names.
    named: Vec<Named>,
}

/// A name of a file that the question names.
#[derive(Debug, Clone, PartialEq)]
struct Named {
    /// What its rarity is counted under (lowercase): a column or key name, `file NAME`,
    /// `category VALUE`, or the run of a name's words named in part (`budgetyear`).
    key: String,
    /// How strongly the question names it, in [`strength`](super::names::strength)
    /// units (quotes and the plain-word share applied).
    strength: f64,
    /// The key is a whole column or key name, whose lake-wide count the text index has.
    column: bool,
    /// A plain word, merely said (see [`PLAIN`]).
    plain: bool,
}

impl Named {
    fn other(key: String, strength: f64) -> Named {
        Named {
            key,
            strength,
            column: false,
            plain: false,
        }
    }
}

/// `bonus` bounded by `cap` smoothly: `cap · (1 − e^(−bonus/cap))`, close to `bonus`
/// while it is small against `cap`, never above `cap`, and still increasing, so that a
/// file named more still ranks above one named less. A cap of 0 or less leaves the
/// bonus as it is.
fn saturate(bonus: f64, cap: f64) -> f64 {
    if cap <= 0.0 || !cap.is_finite() {
        return bonus;
    }
    cap * (1.0 - (-bonus / cap).exp())
}

/// The names of `d` that the question quotes or names (see [`NameMatcher`]), each with
/// its strength: the quoted weight for a quoted name, else the matcher's, of which a
/// plain one-word name merely said as a word gets the plain share.
fn named_in(
    d: &crate::Description,
    matcher: &mut NameMatcher,
    quotes: &[String],
    w: &Weights,
) -> Vec<Named> {
    let mut hit: Vec<Named> = super::doc::names(d)
        .into_iter()
        .filter_map(|n| {
            let lower = n.to_lowercase();
            let (key, (strength, plain)) = match name_strength(&n, matcher, quotes, w) {
                Some(s) => (lower.clone(), s),
                None => matcher.names_part(&n).map(|(k, s)| (k, (s, false)))?,
            };
            Some(Named {
                column: key == lower,
                plain,
                key,
                strength,
            })
        })
        .collect();
    hit.sort_by(|a, b| a.key.cmp(&b.key).then(b.strength.total_cmp(&a.strength)));
    hit.dedup_by(|a, b| a.key == b.key);
    hit
}

/// How strongly the question names the whole name `n`, and whether only as a plain
/// word: quoted, or as the matcher finds it, a plain word (see
/// [`plain_word`](super::names::plain_word)) that the question only says as a word (not
/// quoted, not as code) weighed by the plain share.
fn name_strength(
    n: &str,
    matcher: &mut NameMatcher,
    quotes: &[String],
    w: &Weights,
) -> Option<(f64, bool)> {
    use super::names::{generic_word, plain_word, strength};
    let lower = n.to_lowercase();
    let spaced = lower.replace(['_', '-', '.'], " ");
    let quoted = (quotes.contains(&lower) || quotes.contains(&spaced)).then_some(w.quoted);
    let said = matcher.names(n).map(|s| {
        if s <= strength::WORD && generic_word(n) {
            (s * w.generic, true)
        } else if s <= strength::WORD && plain_word(n) {
            (s * w.plain, true)
        } else {
            (s, false)
        }
    });
    match (quoted, said) {
        (Some(a), Some((b, _))) => Some((a.max(b), false)),
        (Some(a), None) => Some((a, false)),
        (None, b) => b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn weights() -> Weights {
        Weights {
            rrf_k: RRF_K,
            text: W_TEXT,
            vector: W_VECTOR,
            column: W_COLUMN,
            quoted: QUOTED,
            plain: PLAIN,
            generic: GENERIC,
            names_cap: NAMES_CAP,
            plain_cap: PLAIN_CAP,
            time: W_TIME,
        }
    }

    #[test]
    fn the_vector_weight_follows_the_embedder() {
        assert_eq!(vector_weight("hash-ngram-v1-512"), W_VECTOR);
        assert_eq!(
            vector_weight("model2vec-minilm-static-1a2b3c4d-256"),
            W_VECTOR
        );
        assert_eq!(
            vector_weight("words-v1-all-MiniLM-L6-v2-1a2b3c4d-h0.50-896"),
            W_VECTOR_WORDS
        );
        assert_eq!(
            vector_weight("bert-all-MiniLM-L6-v2-1a2b3c4d-384"),
            W_VECTOR_BERT
        );
    }

    fn strength(q: &str, name: &str) -> Option<(f64, bool)> {
        name_strength(name, &mut NameMatcher::new(q), &quoted(q), &weights())
    }

    #[test]
    fn plain_words_weigh_below_quoted_code_and_several_word_names() {
        let (plain, is_plain) = strength("the rainfall over the period", "rainfall").unwrap();
        assert!(is_plain);
        assert!(plain <= 1.0);
        let (generic, is_plain) = strength("the value over the period", "period").unwrap();
        assert!(is_plain && generic < plain);
        for (q, name) in [
            (r#"the "period" column"#, "period"),
            ("the mean of period_days", "period_days"),
            ("the max of gdpPercap", "gdpPercap"),
            ("the average wind speed", "WINDSPEED"),
        ] {
            let (s, is_plain) = strength(q, name).unwrap();
            assert!(!is_plain && s > plain, "{q} / {name}: {s}");
        }
    }

    #[test]
    fn saturation_is_bounded_increasing_and_near_whole_when_small() {
        let cap = 0.02;
        assert!((saturate(0.001, cap) - 0.001).abs() < 0.0001);
        assert!(saturate(0.04, cap) < cap);
        assert!(saturate(0.04, cap) > saturate(0.03, cap));
        assert_eq!(saturate(0.04, 0.0), 0.04);
    }
}
