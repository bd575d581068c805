//! The full-text index: BM25 over what a question can name about a file — its path, its
//! name, its format, its column and key names, its values, its rendered description and
//! the years it covers — kept with tantivy in a directory of its own (`.lakestar/text/`).
//!
//! Identifiers are split into words the same way in documents and questions
//! (`gdp_pc_ppp` → `gdp pc ppp`, `stationReadings2019` → `station readings 2019`; see
//! [`words`](super::words)), prose is stemmed (English), and the fields a question most
//! likely names, the file name and the column names, weigh more than the description
//! text ([`BOOST_NAME`] and the other `BOOST_*` constants).
//!
//! **Crash safety.** [`TextIndex::update`] makes one tantivy commit per call, and a
//! tantivy commit is atomic: segment files are written first and `meta.json`, which lists
//! the live segments, is replaced last by an atomic rename. A process killed at any point
//! leaves the index as of its last completed commit; files of the interrupted commit are
//! unreferenced and garbage-collected by the next writer.
//!
//! **Concurrency.** One writer at a time: tantivy holds an OS file lock
//! (`.tantivy-writer.lock`) while a [`TextIndex`] has written, released by the kernel when
//! the process dies, so no stale lock survives a crash. A [`TextIndex`] that only searches
//! never takes it and can read while another process writes; it sees the state of the
//! last commit at the time it was opened, updated or [reloaded](TextIndex::reload).

use super::words::{tokenizers, IDENT, WORDS};
pub use crate::error::TextIndexError;
use std::path::{Path, PathBuf};
use tantivy::directory::error::LockError;
use tantivy::directory::MmapDirectory;
use tantivy::query::{
    BooleanQuery, BoostQuery, EnableScoring, Occur, PhraseQuery, Query, TermQuery,
};
use tantivy::schema::{
    Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions, Value, STORED, STRING,
};
use tantivy::{
    collector::TopDocs, DocAddress, DocSet, IndexBuilder, IndexReader, IndexWriter, ReloadPolicy,
    Score, TantivyDocument, TantivyError, Term,
};

/// Boost of the file name (stem) field: names are what people call files by.
pub const BOOST_NAME: Score = 3.0;
/// Boost of the column and key names, split into words.
pub const BOOST_COLUMNS: Score = 2.5;
/// Extra boost of a column or key name matched whole (`gdp_pc_ppp`, `fare`).
pub const BOOST_COLUMNS_WHOLE: Score = 1.5;
/// Boost of the directory path, split into words.
pub const BOOST_PATH: Score = 1.5;
/// Boost of the years of the time coverage: a year in a question is deliberate.
pub const BOOST_TIME: Score = 2.0;
/// Boost of the format (`csv`, `parquet`).
pub const BOOST_FORMAT: Score = 1.0;
/// Boost of categorical values and examples.
pub const BOOST_VALUES: Score = 1.0;
/// Boost of the rendered description: the baseline the others are measured against.
pub const BOOST_TEXT: Score = 1.0;

/// Memory budget of the writer. Descriptions are a few KiB, so even a whole lake's worth
/// of documents fits in a few segments; more memory would only make them larger.
const WRITER_MEMORY: usize = 50_000_000;
/// Indexing threads of the writer. One is plenty for documents this small, and tantivy
/// needs at least 15 MB of the budget per thread.
const WRITER_THREADS: usize = 1;
/// A time coverage longer than this many years is indexed by its first and last year
/// only, not year by year: a century-long series is not "about" each of its years.
const MAX_YEAR_SPAN: i32 = 200;

/// One file as the text index sees it (built by the caller from a catalog row and its
/// description).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TextDoc {
    /// Path relative to the lake root, `/`-separated: the unique key.
    pub path: String,
    /// Format name, e.g. "csv".
    pub format: String,
    /// Column names, sheet and table names, JSON key paths.
    pub columns: Vec<String>,
    /// Categorical values and examples worth matching.
    pub values: Vec<String>,
    /// The rendered description (and text excerpt or outline).
    pub text: String,
    /// First day covered, `YYYY-MM-DD`.
    pub time_start: Option<String>,
    /// Last day covered, `YYYY-MM-DD`.
    pub time_end: Option<String>,
}

/// One search result.
#[derive(Debug, Clone, PartialEq)]
pub struct TextHit {
    /// The file's path (its [`TextDoc::path`]).
    pub path: String,
    /// BM25 score with field boosts; comparable only within one search.
    pub score: f32,
    /// The fields the question matched, for "matched because": among "name", "columns",
    /// "path", "time", "values", "format", "text", in that order.
    pub fields: Vec<&'static str>,
}

/// The schema's fields.
#[derive(Clone, Copy)]
struct Fields {
    /// The path, whole: the key for deletion, and stored to name the hits.
    path: Field,
    path_words: Field,
    name: Field,
    format: Field,
    columns: Field,
    columns_whole: Field,
    values: Field,
    text: Field,
    time: Field,
}

impl Fields {
    /// The searched fields with their reported names and boosts, in report order.
    fn searched(&self) -> [(Field, &'static str, Score); 8] {
        [
            (self.name, "name", BOOST_NAME),
            (self.columns, "columns", BOOST_COLUMNS),
            (self.columns_whole, "columns", BOOST_COLUMNS_WHOLE),
            (self.path_words, "path", BOOST_PATH),
            (self.time, "time", BOOST_TIME),
            (self.values, "values", BOOST_VALUES),
            (self.format, "format", BOOST_FORMAT),
            (self.text, "text", BOOST_TEXT),
        ]
    }
}

/// The schema. Changing it makes existing indexes fail to open with
/// [`TextIndexError::SchemaMismatch`], which tells the user to rebuild.
fn schema() -> (Schema, Fields) {
    // Split words need positions: a query word such as `gdp_pc_ppp` becomes the phrase
    // "gdp pc ppp". Whole identifiers are single tokens and need none.
    let words = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(WORDS)
            .set_index_option(IndexRecordOption::WithFreqsAndPositions),
    );
    let ident = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(IDENT)
            .set_index_option(IndexRecordOption::WithFreqs),
    );
    let mut b = Schema::builder();
    let fields = Fields {
        path: b.add_text_field("path", STRING | STORED),
        path_words: b.add_text_field("path_words", words.clone()),
        name: b.add_text_field("name", words.clone()),
        format: b.add_text_field("format", ident.clone()),
        columns: b.add_text_field("columns", words.clone()),
        columns_whole: b.add_text_field("columns_whole", ident.clone()),
        values: b.add_text_field("values", words.clone()),
        text: b.add_text_field("text", words),
        time: b.add_text_field("time", ident),
    };
    (b.build(), fields)
}

/// One clause of a boolean query.
type Clause = (Occur, Box<dyn Query>);

/// The full-text index of one lake.
pub struct TextIndex {
    dir: PathBuf,
    index: tantivy::Index,
    reader: IndexReader,
    /// Created on the first update, so that an index opened only to search never takes
    /// the writer lock.
    writer: Option<IndexWriter>,
    fields: Fields,
    /// The searched fields' boosts, in [`Fields::searched`]'s order.
    boosts: [Score; 8],
}

impl TextIndex {
    /// Open the index in `dir` (e.g. `.lakestar/text/`), creating the directory and an
    /// empty index when there is none.
    pub fn open(dir: &Path) -> Result<TextIndex, TextIndexError> {
        let dir = dir.to_path_buf();
        std::fs::create_dir_all(&dir).map_err(|source| TextIndexError::CreateDir {
            dir: dir.clone(),
            source,
        })?;
        let open_err = |source: TantivyError| TextIndexError::Open {
            dir: dir.clone(),
            source,
        };
        let (schema, fields) = schema();
        // Segments mapped with huge pages, as the vector generation's files are
        // (`ann::pages`): readahead from disk then brings them in as 2 MiB folios, which
        // a new process maps with a fault each instead of one per 64 KiB.
        #[cfg(target_os = "linux")]
        let directory =
            MmapDirectory::open_with_madvice(&dir, tantivy::directory::Advice::HugePage);
        #[cfg(not(target_os = "linux"))]
        let directory = MmapDirectory::open(&dir);
        let directory = directory.map_err(|e| open_err(e.into()))?;
        // The builder registers our analyzers whether the index is created or opened
        // (tantivy does not store analyzers, only their names).
        let index = IndexBuilder::new()
            .schema(schema)
            .tokenizers(tokenizers())
            .open_or_create(directory)
            .map_err(|e| match e {
                TantivyError::SchemaError(_) => TextIndexError::SchemaMismatch { dir: dir.clone() },
                e => open_err(e),
            })?;
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(open_err)?;
        let boosts = fields.searched().map(|(_, _, boost)| boost);
        Ok(TextIndex {
            dir,
            index,
            reader,
            writer: None,
            fields,
            boosts,
        })
    }

    /// The index with these field boosts instead of the `BOOST_*` constants, in the
    /// order of the searched fields (name, columns, whole columns, path, time, values,
    /// format, text): a searcher's [`RankingConfig`](super::rank::RankingConfig).
    pub fn with_boosts(mut self, boosts: &[Score; 8]) -> TextIndex {
        self.boosts = *boosts;
        self
    }

    /// `query` (plain words, [`plain_words`]) as the clauses of one union of every word
    /// in every searched field, boosted (times `scale`): what tantivy's query parser makes of it, but flat. The
    /// parser nests a union over the fields in the union over the words, and tantivy
    /// scores nested unions in full; a flat union of term queries is scored by
    /// block-max WAND, which skips the blocks of postings that cannot reach the top
    /// `k` (BENCHMARKS.md, "Search latency"). A word the field's analyzer
    /// cuts into several tokens is a phrase there (`gdp_pc_ppp` → "gdp pc ppp"), as the
    /// parser makes it; one it drops (a stop word) is not searched there.
    fn flat_clauses(&self, query: &str, scale: Score) -> Result<Vec<Clause>, TantivyError> {
        let mut clauses = Vec::new();
        for ((field, _, _), &boost) in self.fields.searched().iter().zip(&self.boosts) {
            clauses.extend(self.field_clauses(*field, query, boost * scale)?);
        }
        Ok(clauses)
    }

    /// Each word of `query` in `field`, boosted: one term, or a phrase where the field's
    /// analyzer cuts the word into several tokens (none where the field keeps no
    /// positions, as tantivy's lenient parser); nothing for a word it drops. A word
    /// written twice counts once, as the parser drops repeated clauses (a question's
    /// "reject or fail to reject" would weigh `reject` double).
    fn field_clauses(
        &self,
        field: Field,
        query: &str,
        boost: Score,
    ) -> Result<Vec<Clause>, TantivyError> {
        let mut analyzer = self.index.tokenizer_for_field(field)?;
        let positions = self
            .index
            .schema()
            .get_field_entry(field)
            .field_type()
            .get_index_record_option()
            .is_some_and(|o| o.has_positions());
        let mut clauses: Vec<Clause> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for word in query.split_whitespace().filter(|w| seen.insert(*w)) {
            let mut terms: Vec<(usize, Term)> = Vec::new();
            analyzer
                .token_stream(word)
                .process(&mut |t| terms.push((t.position, Term::from_field_text(field, &t.text))));
            let leaf: Box<dyn Query> = match terms.len() {
                0 => continue,
                1 => Box::new(TermQuery::new(
                    terms.remove(0).1,
                    IndexRecordOption::WithFreqs,
                )),
                _ if !positions => continue,
                _ => Box::new(PhraseQuery::new_with_offset(terms)),
            };
            clauses.push((Occur::Should, Box::new(BoostQuery::new(leaf, boost))));
        }
        Ok(clauses)
    }

    /// Replace the documents of the `upserts` paths and delete the `removed` paths, in
    /// one commit: after a crash, either all of it is on disk or none of it. A path given
    /// twice in `upserts` keeps its last document.
    pub fn update(
        &mut self,
        upserts: &[TextDoc],
        removed: &[String],
    ) -> Result<(), TextIndexError> {
        if upserts.is_empty() && removed.is_empty() {
            return Ok(());
        }
        let docs: Vec<(Term, TantivyDocument)> = upserts
            .iter()
            .map(|d| (self.path_term(&d.path), self.document(d)))
            .collect();
        let removed: Vec<Term> = removed.iter().map(|p| self.path_term(p)).collect();
        let dir = self.dir.clone();
        let writer = self.writer()?;
        let result = (|| {
            // A delete applies to the documents added before it, so each delete+add pair
            // replaces whatever the path had, including an earlier add of this call.
            for (term, doc) in docs {
                writer.delete_term(term);
                writer.add_document(doc)?;
            }
            for term in removed {
                writer.delete_term(term);
            }
            writer.commit()
        })();
        if let Err(source) = result {
            // Drop the uncommitted operations, or the next update would commit them with
            // its own. A writer that cannot even roll back is dropped and recreated.
            if writer.rollback().is_err() {
                self.writer = None;
            }
            return Err(TextIndexError::Write { dir, source });
        }
        self.reader
            .reload()
            .map_err(|source| TextIndexError::Read { dir, source })
    }

    /// The top `k` files for a free-text question, best first, with their scores and
    /// the fields that matched. Questions are natural language, not query syntax:
    /// punctuation, quotes and operators (`NOT`, `-`, `field:`) are read as plain words,
    /// and a question without a searchable word gives no hits rather than an error.
    pub fn search(&self, query: &str, k: usize) -> Result<Vec<TextHit>, TextIndexError> {
        self.search_with(query, "", 0.0, k)
    }

    /// [`TextIndex::search`] with the words of `also` (other spellings of the
    /// question's words, [`super::vocab`]) in the query at `also_boost` times their
    /// fields' boosts; 0 leaves them out.
    pub fn search_with(
        &self,
        query: &str,
        also: &str,
        also_boost: f32,
        k: usize,
    ) -> Result<Vec<TextHit>, TextIndexError> {
        let read_err = |source| TextIndexError::Read {
            dir: self.dir.clone(),
            source,
        };
        let searcher = self.reader.searcher();
        let k = k.min(usize::try_from(searcher.num_docs()).unwrap_or(usize::MAX));
        let query = plain_words(query);
        if k == 0 || query.is_empty() {
            return Ok(Vec::new());
        }
        let also = if also_boost > 0.0 {
            plain_words(also)
        } else {
            String::new()
        };
        // One flat union still: the other spellings are more words of it.
        let mut clauses = self.flat_clauses(&query, 1.0).map_err(read_err)?;
        clauses.extend(self.flat_clauses(&also, also_boost).map_err(read_err)?);
        let parsed = BooleanQuery::new(clauses);
        let query = if also.is_empty() {
            query
        } else {
            format!("{query} {also}")
        };
        let top = searcher
            .search(&parsed, &TopDocs::with_limit(k).order_by_score())
            .map_err(read_err)?;
        let fields = self
            .matched_fields(&searcher, &query, &top)
            .map_err(read_err)?;
        let mut hits = Vec::with_capacity(top.len());
        for ((score, addr), fields) in top.into_iter().zip(fields) {
            let doc: TantivyDocument = searcher.doc(addr).map_err(read_err)?;
            let path = doc
                .get_first(self.fields.path)
                .and_then(|v| v.as_str())
                .unwrap_or_default()
                .to_owned();
            hits.push(TextHit {
                path,
                score,
                fields,
            });
        }
        Ok(hits)
    }

    /// Make the commits of other processes visible: a search sees the index as of the
    /// last commit when it was opened, updated or reloaded.
    pub fn reload(&self) -> Result<(), TextIndexError> {
        self.reader.reload().map_err(|source| TextIndexError::Read {
            dir: self.dir.clone(),
            source,
        })
    }

    /// Number of documents.
    pub fn len(&self) -> Result<u64, TextIndexError> {
        Ok(self.reader.searcher().num_docs())
    }

    /// In how many files `name`, a column or key name, occurs whole (as the [`IDENT`]
    /// analyzer cuts it: `[].capture_delay` is `capture_delay`). A name that cuts into
    /// several identifiers (`No. of deaths`) counts the files holding its rarest one, an
    /// upper bound; a name with none counts 0. The name evidence of a search weighs a
    /// name by this, its rarity over the whole lake.
    pub fn name_doc_freq(&self, name: &str) -> Result<u64, TextIndexError> {
        let field = self.fields.columns_whole;
        let read_err = |source| TextIndexError::Read {
            dir: self.dir.clone(),
            source,
        };
        let mut analyzer = self.index.tokenizer_for_field(field).map_err(read_err)?;
        let mut tokens = Vec::new();
        analyzer
            .token_stream(name)
            .process(&mut |t| tokens.push(t.text.clone()));
        let searcher = self.reader.searcher();
        let mut rarest: Option<u64> = None;
        for t in tokens {
            let n = searcher
                .doc_freq(&Term::from_field_text(field, &t))
                .map_err(read_err)?;
            rarest = Some(rarest.map_or(n, |r| r.min(n)));
        }
        Ok(rarest.unwrap_or(0))
    }

    /// Whether the index holds no document.
    pub fn is_empty(&self) -> Result<bool, TextIndexError> {
        Ok(self.len()? == 0)
    }

    /// For each hit, the names of the fields the query matches in it. Each field's own
    /// query is run over the hits' segments, seeking the hits in doc order: a few postings
    /// lookups per hit, cheap for the k ≤ 100 of a search.
    fn matched_fields(
        &self,
        searcher: &tantivy::Searcher,
        query: &str,
        top: &[(Score, DocAddress)],
    ) -> tantivy::Result<Vec<Vec<&'static str>>> {
        let mut fields = vec![Vec::new(); top.len()];
        let mut order: Vec<usize> = (0..top.len()).collect();
        order.sort_by_key(|&i| (top[i].1.segment_ord, top[i].1.doc_id));
        for (field, name, _) in self.fields.searched() {
            let clauses = self.field_clauses(field, query, 1.0)?;
            if clauses.is_empty() {
                continue;
            }
            let q = BooleanQuery::new(clauses);
            let weight = q.weight(EnableScoring::disabled_from_searcher(searcher))?;
            let mut current = None;
            for &i in &order {
                let addr = top[i].1;
                let scorer = match &mut current {
                    Some((segment, scorer)) if *segment == addr.segment_ord => scorer,
                    _ => {
                        let reader = searcher.segment_reader(addr.segment_ord);
                        &mut current
                            .insert((addr.segment_ord, weight.scorer(reader, 1.0)?))
                            .1
                    }
                };
                // Hits come in ascending doc order, so seeking only moves forward.
                let doc = if scorer.doc() < addr.doc_id {
                    scorer.seek(addr.doc_id)
                } else {
                    scorer.doc()
                };
                if doc == addr.doc_id && !fields[i].contains(&name) {
                    fields[i].push(name);
                }
            }
        }
        Ok(fields)
    }

    /// The writer, created on first use.
    fn writer(&mut self) -> Result<&mut IndexWriter, TextIndexError> {
        if self.writer.is_none() {
            let writer = self
                .index
                .writer_with_num_threads(WRITER_THREADS, WRITER_MEMORY)
                .map_err(|e| match e {
                    TantivyError::LockFailure(LockError::LockBusy, _) => TextIndexError::Locked {
                        dir: self.dir.clone(),
                    },
                    source => TextIndexError::Write {
                        dir: self.dir.clone(),
                        source,
                    },
                })?;
            self.writer = Some(writer);
        }
        Ok(self.writer.as_mut().expect("writer was just created"))
    }

    fn path_term(&self, path: &str) -> Term {
        Term::from_field_text(self.fields.path, path)
    }

    /// The tantivy document of `d`.
    fn document(&self, d: &TextDoc) -> TantivyDocument {
        let f = &self.fields;
        let mut doc = TantivyDocument::default();
        doc.add_text(f.path, &d.path);
        // The words analyzer splits at `/ _ - .` and inside identifiers.
        doc.add_text(f.path_words, &d.path);
        doc.add_text(f.name, file_stem(&d.path));
        doc.add_text(f.format, &d.format);
        for c in &d.columns {
            doc.add_text(f.columns, c);
            doc.add_text(f.columns_whole, c);
        }
        for v in &d.values {
            doc.add_text(f.values, v);
        }
        doc.add_text(f.text, &d.text);
        for year in years(d.time_start.as_deref(), d.time_end.as_deref()) {
            doc.add_text(f.time, year.to_string());
        }
        doc
    }
}

/// The file name of a `/`-separated path without its last extension.
fn file_stem(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    match name.rfind('.') {
        // A leading dot (".env") starts the name, it does not end it.
        Some(dot) if dot > 0 => &name[..dot],
        _ => name,
    }
}

/// The years a time coverage spans, each as a token: a question's "2019" matches a file
/// covering 2017–2021. Dates are `YYYY-MM-DD`; anything else is ignored.
fn years(start: Option<&str>, end: Option<&str>) -> Vec<i32> {
    let year = |d: &str| {
        let y = d.get(..4)?;
        y.bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| y.parse::<i32>().ok())?
    };
    match (start.and_then(year), end.and_then(year)) {
        (Some(a), Some(b)) => {
            let (a, b) = (a.min(b), a.max(b));
            if b - a > MAX_YEAR_SPAN {
                vec![a, b]
            } else {
                (a..=b).collect()
            }
        }
        (Some(y), None) | (None, Some(y)) => vec![y],
        (None, None) => Vec::new(),
    }
}

/// A question reduced to plain words for tantivy's query grammar: every character that
/// is not a letter, a digit or `_` becomes a space (quotes, `:`, `-`, `+`, brackets,
/// `*`, `^`… are syntax there), and the uppercase operator words are lowercased so that
/// "passengers who did NOT survive" does not exclude the files about survival. What is
/// dropped loses nothing: the analyzers split words at those characters anyway.
fn plain_words(question: &str) -> String {
    let spaced: String = question
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '_' {
                c
            } else {
                ' '
            }
        })
        .collect();
    spaced
        .split_whitespace()
        .map(|w| match w {
            "AND" | "OR" | "NOT" | "IN" | "TO" => w.to_lowercase(),
            _ => w.to_owned(),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests;
