//! The hybrid retriever: BM25 over the full-text index and cosine similarity over the
//! description embeddings, fused by reciprocal rank, plus evidence that generic
//! retrievers lack: the names and the time span a question names, against each file's
//! columns and time coverage. The stages are [`rank`](super::rank)'s: evidence, a pure
//! score, folding.

use super::ann::{Mode, VectorIndex};
use super::glob::PathGlob;
use super::names::NameMatcher;
use super::rank::evidence::{self, Covers, Evidence, Named};
use super::rank::fold::{self, Ranked};
use super::rank::{score, shares, RankingConfig, Reason, Relevance};
use super::sync::TEXT_DIR;
use super::text::TextIndex;
use super::vocab;
use crate::analyze::record::RankRecord;
use crate::analyze::Format;
use crate::catalog::{CatalogReader, MetaKey, RankedFile};
use crate::collect::Collection;
use crate::embed::Embedder;
use crate::error::{Result, UserError};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

mod hits;
mod members;

pub use hits::{Hit, HitCollection, HitTable, COMPANIONS_NAMED};
use members::own_evidence;

/// Vector-side rows from which half are read on a second thread
/// ([`Searcher::rows_split`]): below, a thread's start is a fair share of the read.
const SPLIT_ROWS_FROM: usize = 32;

/// Filters and size of a search.
#[derive(Debug, Clone, Default)]
pub struct SearchOptions {
    /// Results wanted.
    pub k: usize,
    /// Only this format ([`Format::from_user`] reads what people write).
    pub format: Option<Format>,
    /// Only paths matching this glob, compiled once (by whoever builds the options, so
    /// that a bad one is refused before any search work) and matched in linear time.
    pub glob: Option<PathGlob>,
    /// List every member of a collection on its own; by default the members of a
    /// collection (same-schema siblings) fold into the one with the best own evidence,
    /// which names the others that matched; members set apart by their own evidence
    /// (the days asked, their names) are hits of their own.
    pub expand: bool,
    /// Return the nearest descriptions even when nothing in the lake matches the
    /// question's words: an agent wants its best guess at the files, where a person
    /// searching wants to be told that nothing matched.
    pub nearest_anyway: bool,
}

/// A read-only view of an index for searching, at the state it was opened (or
/// reopened) at. It is `Sync`: a server shares one among concurrent searches.
pub struct Searcher {
    dir: PathBuf,
    /// rusqlite connections are not `Sync`; each search holds it only for its reads.
    catalog: Mutex<CatalogReader>,
    /// A second connection: the full-text side of a search reads its candidates' rows
    /// on it while the vector side reads the nearest points' files on `catalog`
    /// ([`Searcher::retrieve`]); once free, half the vector side's rows
    /// ([`Searcher::rows_split`]).
    beside: Mutex<CatalogReader>,
    text: TextIndex,
    embedder: Arc<dyn Embedder>,
    vectors: VectorIndex,
    /// Read once, when the searcher is opened.
    ranking: RankingConfig,
    /// Candidates are ranked by their descriptions' ranking records, and only the
    /// hits' descriptions are decoded; always, but in the tests that rank by the
    /// descriptions to compare.
    records: bool,
}

/// A candidate with what ranking and output need of it.
struct Candidate {
    path: String,
    row: crate::catalog::FileRow,
    /// Its description with companion links applied, once read: ranking reads the
    /// ranking record instead, and only hits (and the planned hits' summary tables)
    /// need it ([`Searcher::describe`]).
    desc: Option<crate::Description>,
    /// `desc` was read (`None` there then means the file has no description).
    described: bool,
    collection: Option<String>,
    evidence: Evidence,
    score: f64,
}

/// What one search asks, read once from the question.
struct Question {
    /// Its lowercase words, in order.
    words: Vec<String>,
    matcher: NameMatcher,
    quotes: Vec<String>,
    asked: Vec<(String, String)>,
    /// The lake has companion-documentation links, which may rename a headerless
    /// table's columns: only then is a candidate's link looked for.
    links: bool,
    /// Other spellings of its words ([`vocab`]), none when they are switched off.
    expansions: Vec<vocab::Expansion>,
}

impl Searcher {
    /// Open the index at `dir` with the embedder it records (the built-in one for an
    /// index that records none).
    pub fn open_recorded(dir: &Path) -> Result<Searcher> {
        Searcher::open(dir, Self::recorded_spec(dir)?.build()?)
    }

    /// The embedder the index at `dir` records (the built-in one when it records none).
    fn recorded_spec(dir: &Path) -> Result<crate::search::embedder::EmbedderSpec> {
        Ok(
            crate::search::embedder::EmbedderSpec::recorded(&CatalogReader::open(dir)?)?
                .unwrap_or_default(),
        )
    }

    /// Open the index at `dir` with the embedder its vectors were made with, for one
    /// search or a few: nothing is loaded that a search does not read (the vector
    /// generation's codes are mapped and scanned, [`Mode::Scan`]).
    pub fn open(dir: &Path, embedder: Box<dyn Embedder>) -> Result<Searcher> {
        Self::open_with(dir, Arc::from(embedder), None, Mode::Scan)
    }

    /// [`Searcher::open_recorded`] for a long-lived process (a server): a vector
    /// generation too large to scan quickly has its graph loaded once ([`Mode::Resident`]).
    pub fn open_resident(dir: &Path) -> Result<Searcher> {
        let spec = Self::recorded_spec(dir)?;
        Self::open_with(
            dir,
            Arc::from(spec.build()?),
            None,
            Mode::Resident {
                scan_up_to: crate::search::ann::scan_up_to(),
            },
        )
    }

    /// A searcher over the index's current state, for a long-lived process after the
    /// index changed: the embedder (a model, possibly large) and, while its generation
    /// stands, the vector graph are kept rather than loaded again.
    pub fn reopen(&self) -> Result<Searcher> {
        Self::open_with(
            &self.dir,
            self.embedder.clone(),
            Some(&self.vectors),
            Mode::Scan,
        )
    }

    /// `mode` applies to a first opening; a reopening keeps the previous one's.
    fn open_with(
        dir: &Path,
        embedder: Arc<dyn Embedder>,
        previous: Option<&VectorIndex>,
        mode: Mode,
    ) -> Result<Searcher> {
        let ranking = RankingConfig::from_env(&embedder.id())?;
        let catalog = CatalogReader::open(dir)?;
        let recorded = catalog.meta(MetaKey::Embedder)?;
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
        let text = TextIndex::open(&text_dir)?.with_boosts(&ranking.boosts);
        let vectors = match previous {
            Some(v) => v.reopen(&catalog, dir, &embedder.id())?,
            None => VectorIndex::open_with(
                &catalog,
                dir,
                &embedder.id(),
                super::ann::exact_below(),
                mode,
            )?,
        };
        Ok(Searcher {
            dir: dir.to_path_buf(),
            catalog: Mutex::new(catalog),
            beside: Mutex::new(CatalogReader::open(dir)?),
            text,
            embedder,
            vectors,
            ranking,
            records: true,
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

    /// The ranking parameters in force.
    pub fn ranking(&self) -> &RankingConfig {
        &self.ranking
    }

    /// The catalog connection (a panic in another search cannot have left it in a
    /// half-done state: every use is a read).
    fn catalog(&self) -> MutexGuard<'_, CatalogReader> {
        self.catalog.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The second connection (see `beside`), as [`Searcher::catalog`].
    fn beside(&self) -> MutexGuard<'_, CatalogReader> {
        self.beside.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The top files for `query`. A question of several parts
    /// ([`shares::parts`](super::rank::shares::parts)) is searched whole and part by
    /// part, and the lists take turns: each part keeps a share of the first `k`.
    pub fn search(&self, query: &str, opts: &SearchOptions) -> Result<Vec<Hit>> {
        let k = opts.k.max(1);
        let whole = self.search_one(query, opts)?;
        let parts = shares::parts(query, self.ranking.parts);
        if parts.len() < self.ranking.parts_from.max(2) || self.ranking.parts < 2 {
            return Ok(whole);
        }
        let mut lists = vec![whole];
        for part in &parts {
            // A part's weak hits are noise for the whole question ("then give the
            // mean" finds any table): only what the part itself matches takes turns.
            let mut hits = self.search_one(part, opts)?;
            hits.retain(|h| h.relevance > Relevance::Weak);
            hits.truncate(self.ranking.part_hits);
            lists.push(hits);
        }
        Ok(shares::in_turns(lists, k, |h: &Hit| h.path.clone())
            .into_iter()
            .map(|(list, mut hit)| {
                if list > 0 {
                    hit.reasons.push(Reason::Part(parts[list - 1].clone()));
                }
                hit
            })
            .collect())
    }

    /// The top files for `query` as one question.
    fn search_one(&self, query: &str, opts: &SearchOptions) -> Result<Vec<Hit>> {
        let cfg = &self.ranking;
        let q = Question {
            words: evidence::question_words(query),
            matcher: NameMatcher::new(query).with_short_codes(cfg.short_codes > 0.0),
            quotes: evidence::quoted(query),
            asked: evidence::asked_days(query),
            links: self.catalog().has_companion_links()?,
            expansions: if cfg.synonyms > 0.0 {
                vocab::expansions(query)
            } else {
                Vec::new()
            },
        };
        let (mut q, mut candidates) = self.retrieve(query, q, opts)?;
        if !opts.nearest_anyway && !worth_returning(&candidates, cfg.alone_similarity) {
            return Ok(Vec::new());
        }
        let collections = self.collections(&candidates)?;
        self.add_members(&mut candidates, &collections, &mut q, opts)?;
        let own_category = members::own_categories(&candidates);
        for (c, category) in candidates.iter_mut().zip(own_category) {
            if let Some(coll) = c.collection.as_ref().and_then(|id| collections.get(id)) {
                (c.evidence.own, c.evidence.named_part) = own_evidence(c, coll, &q, category);
            }
        }

        let rarity = self.rarity(&candidates)?;
        let evidence: Vec<Evidence> = candidates.iter().map(|c| c.evidence.clone()).collect();
        for (c, s) in candidates
            .iter_mut()
            .zip(score::scores(&evidence, &rarity, cfg))
        {
            c.score = s;
        }
        if cfg.collection_score > 0.0 {
            collection_scores(&mut candidates);
        }
        let mut candidates = by_score(candidates);
        if cfg.window_shares > 0.0 && q.asked.len() >= 2 {
            candidates = windows_in_turns(candidates, &q.asked);
        }
        let ranked: Vec<Ranked> = candidates
            .iter()
            .map(|c| Ranked {
                collection: c.collection.as_deref(),
                own: c.evidence.own,
            })
            .collect();
        let plan = fold::fold(&ranked, opts.expand, cfg.member_hits);
        self.finish(query, q.expansions, candidates, plan, &collections, opts)
    }

    /// The retrievers' candidates: full-text and nearest vectors, each with its rank and
    /// its evidence, but for those the filters exclude or the catalog no longer has; and
    /// the question as read.
    ///
    /// The vector side (embedding, the codes' scan, itself parallel, the points' files,
    /// then those files' rows) runs on a thread of its own while this one runs the
    /// full-text query and reads its candidates' rows and names (on a second
    /// connection: the vector side holds the first). The rows of files both sides found
    /// are read twice, which costs less than reading the vector side's after the join,
    /// on this thread's path (a tenth of a search at 100k files). A plain thread rather
    /// than rayon's: the sides take locks, and a rayon worker holding one while it waits
    /// on the scan's tasks could be handed another search's task that wants the same
    /// lock.
    fn retrieve(
        &self,
        query: &str,
        mut q: Question,
        opts: &SearchOptions,
    ) -> Result<(Question, Vec<Candidate>)> {
        let cfg = &self.ranking;
        // Deep enough for the list asked: `k` hits need at least `k` candidates.
        let depth = cfg.candidates.max(opts.k);
        let also = vocab::added_words(&q.expansions);
        type Nearest = (Vec<(String, f32)>, Vec<Option<RankedFile>>);
        let (text, nearest) = std::thread::scope(|s| {
            let nearest = s.spawn(|| -> Result<Nearest> {
                let Some(v) = self.embedder.embed(&[query])?.into_iter().next() else {
                    return Ok((Vec::new(), Vec::new()));
                };
                let catalog = self.catalog();
                let found = self.vectors.nearest(&catalog, &v, depth)?;
                let paths: Vec<&str> = found.iter().map(|(p, _)| p.as_str()).collect();
                let rows = self.rows_split(&catalog, &paths)?;
                Ok((found, rows))
            });
            let text = (|| -> Result<Vec<Candidate>> {
                let hits = self
                    .text
                    .search_with(query, &also, cfg.synonyms as f32, depth)?;
                let found = hits
                    .into_iter()
                    .enumerate()
                    .map(|(rank, hit)| {
                        let fields = hit.fields.into_iter().map(String::from).collect();
                        let ev = Evidence {
                            text: Some((rank, fields)),
                            ..Evidence::default()
                        };
                        (hit.path, ev)
                    })
                    .collect();
                let rows = |paths: &[&str]| self.beside().ranked_files(paths, self.records);
                self.candidates_read(found, rows, &mut q, opts)
            })();
            let nearest = nearest
                .join()
                .unwrap_or_else(|p| std::panic::resume_unwind(p));
            (text, nearest)
        });
        let mut candidates = text?;
        let (nearest, nearest_rows) = nearest?;
        let at: HashMap<&str, usize> = candidates
            .iter()
            .enumerate()
            .map(|(i, c)| (c.path.as_str(), i))
            .collect();
        let mut vector: Vec<(usize, (usize, f32))> = Vec::new();
        let mut rest: Vec<(String, Evidence)> = Vec::new();
        let mut rest_rows: Vec<Option<RankedFile>> = Vec::new();
        for (rank, ((path, sim), row)) in nearest.into_iter().zip(nearest_rows).enumerate() {
            match at.get(path.as_str()) {
                Some(&i) => vector.push((i, (rank, sim))),
                None => {
                    let ev = Evidence {
                        vector: Some((rank, sim)),
                        ..Evidence::default()
                    };
                    rest.push((path, ev));
                    rest_rows.push(row);
                }
            }
        }
        for (i, v) in vector {
            candidates[i].evidence.vector = Some(v);
        }
        let more = self.candidates_read(rest, |_| Ok(rest_rows), &mut q, opts)?;
        candidates.extend(more);
        Ok((q, candidates))
    }

    /// The rows of `paths` (as [`CatalogReader::ranked_files`]), half of them read on
    /// the second connection by a thread of their own when it is free: at a million
    /// files the vector side's rows are B-tree pages of a large catalog read for the
    /// first time, 4–10 ms of a search, read while the text side is done and the
    /// other core idle. When the text side still holds that connection (small indexes,
    /// where both sides are quick), this thread reads the second half too.
    fn rows_split(
        &self,
        catalog: &CatalogReader,
        paths: &[&str],
    ) -> Result<Vec<Option<RankedFile>>> {
        if paths.len() < SPLIT_ROWS_FROM {
            return catalog.ranked_files(paths, self.records);
        }
        let (first, second) = paths.split_at(paths.len() / 2);
        let (rows, rest) = std::thread::scope(|s| {
            // The guard cannot cross threads: the helper takes the lock itself, and
            // gives up at once if the text side holds it.
            let rest = s.spawn(|| {
                let beside = match self.beside.try_lock() {
                    Ok(b) => b,
                    Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
                    Err(std::sync::TryLockError::WouldBlock) => return None,
                };
                Some(beside.ranked_files(second, self.records))
            });
            let rows = catalog.ranked_files(first, self.records);
            let rest = rest.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
            (rows, rest)
        });
        let mut rows = rows?;
        rows.extend(match rest {
            Some(rest) => rest?,
            None => catalog.ranked_files(second, self.records)?,
        });
        Ok(rows)
    }

    /// The `found` paths as candidates with their evidence, but for those the filters
    /// exclude or the catalog no longer has. Their rows, collections and ranking records
    /// are read once, here, in one query; a description only when the record cannot
    /// stand for it (no record, or a companion link that may rename its columns).
    fn candidates(
        &self,
        found: Vec<(String, Evidence)>,
        q: &mut Question,
        opts: &SearchOptions,
    ) -> Result<Vec<Candidate>> {
        // The lock is taken per read, not per search: decoding and ranking run in
        // parallel across concurrent searches.
        let rows = |paths: &[&str]| self.catalog().ranked_files(paths, self.records);
        self.candidates_read(found, rows, q, opts)
    }

    /// [`Searcher::candidates`], the rows read by `rows`.
    fn candidates_read(
        &self,
        found: Vec<(String, Evidence)>,
        rows: impl FnOnce(&[&str]) -> Result<Vec<Option<RankedFile>>>,
        q: &mut Question,
        opts: &SearchOptions,
    ) -> Result<Vec<Candidate>> {
        let paths: Vec<&str> = found.iter().map(|(p, _)| p.as_str()).collect();
        let rows = rows(&paths)?;
        let mut out = Vec::with_capacity(found.len());
        for ((path, ev), row) in found.into_iter().zip(rows) {
            if let Some(row) = row {
                out.extend(self.candidate(path, row, ev, q, opts)?);
            }
        }
        Ok(out)
    }

    /// `path`, read as `found`, as a candidate with its evidence, unless the filters
    /// exclude it.
    fn candidate(
        &self,
        path: String,
        found: RankedFile,
        mut ev: Evidence,
        q: &mut Question,
        opts: &SearchOptions,
    ) -> Result<Option<Candidate>> {
        let row = found.row;
        if opts.format.is_some_and(|f| f != row.format)
            || opts.glob.as_ref().is_some_and(|g| !g.is_match(&path))
        {
            return Ok(None);
        }
        let linked = |r: &RankRecord| -> Result<bool> {
            Ok(r.headerless && q.links && self.catalog().companion_of(&path)?.is_some())
        };
        let (record, desc, described) = match found.record {
            Some(r) if !linked(&r)? => (Some(r), None, false),
            _ => {
                let desc = self.catalog().file_description(&row)?;
                (desc.as_ref().map(RankRecord::of), desc, true)
            }
        };
        let cfg = &self.ranking;
        let mut named = record.as_ref().map_or_else(Vec::new, |r| {
            evidence::named_in(&r.names, &mut q.matcher, &q.quotes, cfg)
        });
        if let Some(s) = q.matcher.names_file(&path) {
            // Keyed by the file name, so that rarity counts the files sharing it: a
            // question naming `README.md` names every folder's README a little.
            let base = path.rsplit('/').next().unwrap_or(&path).to_lowercase();
            named.push(Named::other(format!("file {base}"), s));
        } else if cfg.file_words > 0.0 && found.collection.is_none() {
            // A member's words are its collection's: they name every member alike, and
            // the members would crowd a list ranked file by file.
            if let Some((key, s)) = q.matcher.names_file_words(&path) {
                named.push(Named::other(key, s * cfg.file_words));
            }
        }
        for (v, dominant) in record.iter().flat_map(|r| &r.categories) {
            if let Some(s) = q.matcher.names_category(v) {
                let key = format!("category {}", v.to_lowercase());
                if *dominant {
                    ev.dominant.push(key.clone());
                }
                named.push(Named::other(key, s));
            }
        }
        ev.named = named;
        ev.covers = row
            .time
            .as_ref()
            .map(|t| Covers::new(&t.start, &t.end, &q.asked));
        Ok(Some(Candidate {
            path,
            row,
            desc,
            described,
            collection: found.collection,
            evidence: ev,
            score: 0.0,
        }))
    }

    /// Read `c`'s description (with its companion links), unless it was.
    fn describe(&self, c: &mut Candidate) -> Result<()> {
        if !c.described {
            c.desc = self.catalog().file_description(&c.row)?;
            c.described = true;
        }
        Ok(())
    }

    /// The collections of the candidates, by id.
    fn collections(&self, candidates: &[Candidate]) -> Result<HashMap<String, Collection>> {
        let mut out = HashMap::new();
        for id in candidates.iter().filter_map(|c| c.collection.as_ref()) {
            if !out.contains_key(id) {
                if let Some(c) = self.catalog().collection(id)? {
                    out.insert(id.clone(), c);
                }
            }
        }
        Ok(out)
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
            for n in &c.evidence.named {
                let e = df.entry(n.key.as_str()).or_default();
                e.0 += 1;
                e.1 |= n.column;
            }
        }
        let files = self.text.len()?;
        let whole = candidates.len() as u64 >= files;
        let n = files.max(candidates.len() as u64).max(1);
        df.into_iter()
            .map(|(key, (among, column))| {
                // Candidates that are the whole lake count exactly; the index's count of a
                // name's rarest identifier is an upper bound (`portfolio` counts the file
                // with a `Portfolio Weight` column too).
                let lake = if column && !whole {
                    self.text.name_doc_freq(key)?
                } else {
                    0
                };
                // The index may count a replaced file twice until its segments merge.
                let df = among.max(lake).min(n);
                Ok((key.to_owned(), score::rarity(n as f64, df as f64)))
            })
            .collect()
    }
}

/// `candidates` best first, ties by path. Their order is sorted rather than they: a
/// candidate is a few hundred bytes, and moving them about is a share of a search.
fn by_score(candidates: Vec<Candidate>) -> Vec<Candidate> {
    let mut order: Vec<usize> = (0..candidates.len()).collect();
    order.sort_by(|&a, &b| {
        let (a, b) = (&candidates[a], &candidates[b]);
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.path.cmp(&b.path))
    });
    let mut slots: Vec<Option<Candidate>> = candidates.into_iter().map(Some).collect();
    order.into_iter().filter_map(|i| slots[i].take()).collect()
}

/// A collection is scored once: a member set apart by its own evidence (the days
/// asked, its name) ranks with its collection's best member, not by how well its own
/// near-copy of a description matched (a range's middle years lack the years the
/// question writes, which other collections' members of those years have).
fn collection_scores(candidates: &mut [Candidate]) {
    let mut best: HashMap<String, (f64, String)> = HashMap::new();
    for c in candidates.iter() {
        if let Some(id) = &c.collection {
            let b = best
                .entry(id.clone())
                .or_insert_with(|| (c.score, c.path.clone()));
            if c.score > b.0 {
                *b = (c.score, c.path.clone());
            }
        }
    }
    for c in candidates.iter_mut() {
        if let Some((b, path)) = c.collection.as_ref().and_then(|id| best.get(id)) {
            if c.evidence.own > 0 && c.score < *b {
                c.score = *b;
                c.evidence.scored_with = Some(path.clone());
            }
        }
    }
}

/// `candidates` (best first) with the members of each collection covering the asked
/// windows taking turns by window in the places they hold ([`shares::take_turns`]): a
/// long window's members do not push a short window's member of the same collection
/// down the list. Other files, and other collections' members, keep their places.
fn windows_in_turns(candidates: Vec<Candidate>, asked: &[(String, String)]) -> Vec<Candidate> {
    let mut members: HashMap<&str, Vec<(usize, Vec<usize>)>> = HashMap::new();
    for (i, c) in candidates.iter().enumerate() {
        let (Some(id), Some(covers)) = (&c.collection, &c.evidence.covers) else {
            continue;
        };
        let windows: Vec<usize> = covers
            .asked
            .iter()
            .filter_map(|a| asked.iter().position(|b| b == a))
            .collect();
        if !windows.is_empty() {
            members.entry(id.as_str()).or_default().push((i, windows));
        }
    }
    let mut order: Vec<usize> = (0..candidates.len()).collect();
    let mut moved_up: Vec<(usize, usize)> = Vec::new();
    for places in members.values() {
        let lanes: Vec<Option<Vec<usize>>> = places.iter().map(|(_, w)| Some(w.clone())).collect();
        for ((at, _), j) in places.iter().zip(shares::take_turns(&lanes, asked.len())) {
            let (from, windows) = &places[j];
            order[*at] = *from;
            if *at < *from {
                moved_up.push((*from, windows[0]));
            }
        }
    }
    let mut slots: Vec<Option<Candidate>> = candidates.into_iter().map(Some).collect();
    for (i, w) in moved_up {
        if let Some(c) = slots[i].as_mut() {
            c.evidence.turn = Some(asked[w].clone());
        }
    }
    order.into_iter().filter_map(|i| slots[i].take()).collect()
}

/// Whether the candidates hold anything of the question: a full-text hit, a name it
/// names, or a vector neighbour at least `alone` similar (see
/// [`ALONE_SIMILARITY`](super::rank::config::ALONE_SIMILARITY)).
fn worth_returning(candidates: &[Candidate], alone: f64) -> bool {
    candidates.iter().any(|c| {
        let e = &c.evidence;
        e.text.is_some()
            || !e.named.is_empty()
            || e.vector.is_some_and(|(_, sim)| f64::from(sim) >= alone)
    })
}

#[cfg(test)]
mod tests;
