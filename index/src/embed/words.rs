//! Whole-word vectors from an installed BERT, for meaning at static-model speed.
//!
//! A text is split into words the way the hash embedder splits it (identifiers at `_`,
//! camelCase and digits; lowercased; function words dropped), each distinct word is
//! embedded once by the sentence encoder as a sentence of its own (`[CLS] word [SEP]`,
//! mean-pooled and normalized: what all-MiniLM-L6-v2 was trained to compare), and the
//! text's vector is the weighted mean of its words' vectors — a frequent word (by its
//! rank in the BERT vocabulary, SIF as Model2Vec weighs pieces) counts less than a rare
//! one, repeats count `1 + ln(tf)`. "rainfall" and "precipitation" are then close
//! because the encoder puts them close, without running the transformer over every
//! description: a lake's vocabulary grows far slower than its files, and words already
//! met come from [`word_cache`](super::word_cache) on disk.
//!
//! Unlike a distilled token table (`model distill`), a word the BERT vocabulary lacks
//! (`gdppercap`, `precipitation`) is not a mean of its word pieces' context-free rows: the
//! encoder reads its pieces together. And the hash embedder's vector of the same text is
//! kept beside the word vector (`hash share`, concatenated with weights √s and √(1−s), so
//! that the cosine of two texts is `s · cos_hash + (1 − s) · cos_words`): spellings of
//! column names still match by character n-grams where the words alone would not.
//!
//! The transformer is loaded only when a text has a word not yet cached, so searching an
//! index whose questions use known words costs no model load.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

use rayon::prelude::*;
use tokenizers::Tokenizer;

use super::hash::content_words;
use super::word_cache::{WordCache, FILE};
use super::{l2_normalize, BertEmbedder, EmbedError, Embedder, HashEmbedder};

/// Share of the hash embedder's cosine in the combined one, unless told otherwise.
pub const DEFAULT_HASH_SHARE: f32 = 0.5;
/// SIF coefficient of the word weights `a / (a + p)` (`p` the Zipf probability of the
/// word's rank among the vocabulary's whole words), unless told otherwise.
pub const DEFAULT_SIF: f64 = 1e-3;
/// Words of the vocabulary (the most frequent, of two letters or more) whose mean vector
/// is the direction all word vectors share, taken out when centring.
const CENTRE_WORDS: usize = 1000;

/// How the words embedder weighs and combines.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WordsOptions {
    /// Share of the hash embedder's cosine in the combined one (0 to 1).
    pub hash_share: f32,
    /// SIF coefficient of the word weights (above 0).
    pub sif: f64,
    /// Subtract the mean vector of the vocabulary's most frequent words from every word
    /// vector, so that what all words share does not make all texts alike (on by
    /// default: it lifts the word vectors' own MRR on DABench; BENCHMARKS.md, Embedders).
    pub centre: bool,
    /// Embed words the vocabulary does not hold whole (each by the encoder, once, at the
    /// first text that has it); without, they count only in the hash part.
    pub oov: bool,
}

impl Default for WordsOptions {
    fn default() -> Self {
        WordsOptions {
            hash_share: DEFAULT_HASH_SHARE,
            sif: DEFAULT_SIF,
            centre: true,
            oov: true,
        }
    }
}
/// Words longer than this are noise (hashes, base64), not words.
const MAX_WORD: usize = 32;
/// Words per forward pass when new words are embedded (all of one length: no padding).
const BATCH: usize = 64;
/// Version of the recipe, part of the id: bump it with any change to how a word or a
/// text is turned into a vector.
const RECIPE: &str = "words-v1";

/// The dimension of the hash part: 512, not the hash embedder's default, so that indexes
/// embedded with this recipe keep their id and vectors.
const HASH_DIM: usize = 512;

/// Whole-word vectors of a BERT model, plus the hash embedder's. See the module
/// documentation.
pub struct WordsEmbedder {
    id: String,
    dir: PathBuf,
    hidden: usize,
    hash: Option<(HashEmbedder, f32)>,
    sif: f64,
    oov: bool,
    /// With centring: the words whose mean is taken out, and that mean (computed at load).
    centre_words: Vec<String>,
    centre: std::sync::OnceLock<Vec<f32>>,
    /// Whole words of the BERT vocabulary → rank (by id: BERT vocabularies list words
    /// roughly by frequency).
    ranks: HashMap<String, usize>,
    /// Σ 1/(rank + 2) over the ranks: the Zipf normalizer.
    harmonic: f64,
    vectors: RwLock<HashMap<String, Box<[f32]>>>,
    /// The encoder, loaded on the first word not in the cache.
    bert: Mutex<Option<Arc<BertEmbedder>>>,
    /// Held while new words are added to the map and appended to the cache file.
    adding: Mutex<()>,
    cache: WordCache,
}

impl std::fmt::Debug for WordsEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WordsEmbedder")
            .field("id", &self.id)
            .field("dir", &self.dir)
            .finish_non_exhaustive()
    }
}

impl WordsEmbedder {
    /// The words embedder of the BERT model in `dir` (config.json, tokenizer.json,
    /// model.safetensors), with the hash embedder's cosine weighted `hash_share` (0 to 1;
    /// 0 leaves the word vectors alone) and the other options at their defaults.
    pub fn load(dir: &Path, hash_share: f32) -> Result<Self, EmbedError> {
        Self::load_with(
            dir,
            &WordsOptions {
                hash_share,
                ..WordsOptions::default()
            },
        )
    }

    /// [`WordsEmbedder::load`] with all options. Word vectors already cached in `dir` are
    /// read; the model itself is loaded only when a new word comes (or, with centring, when
    /// the cache lacks the centring words: then at load).
    pub fn load_with(dir: &Path, opts: &WordsOptions) -> Result<Self, EmbedError> {
        let hash_share = opts.hash_share;
        let fail = |detail: String| EmbedError::Bert {
            dir: dir.to_path_buf(),
            detail,
        };
        if !(0.0..=1.0).contains(&hash_share) || !hash_share.is_finite() {
            return Err(EmbedError::Config(format!(
                "the hash share of the words embedder is {hash_share}; it must be between 0 and 1"
            )));
        }
        if !(opts.sif > 0.0 && opts.sif.is_finite()) {
            return Err(EmbedError::Config(format!(
                "the SIF coefficient of the words embedder is {}; it must be above 0",
                opts.sif
            )));
        }
        let read = |name: &str| {
            std::fs::read(dir.join(name)).map_err(|e| fail(format!("cannot read {name}: {e}")))
        };
        let config = read("config.json")?;
        let tok_bytes = read("tokenizer.json")?;
        let model = sample(&dir.join("model.safetensors"))
            .map_err(|e| fail(format!("cannot read model.safetensors: {e}")))?;
        let hidden = serde_json::from_slice::<serde_json::Value>(&config)
            .ok()
            .and_then(|c| c.get("hidden_size").and_then(|h| h.as_u64()))
            .and_then(|h| usize::try_from(h).ok())
            .filter(|&h| h > 0)
            .ok_or_else(|| fail("config.json has no hidden_size".into()))?;
        let tokenizer = Tokenizer::from_bytes(&tok_bytes).map_err(|e| {
            fail(format!(
                "tokenizer.json is not a tokenizer this build reads: {e}"
            ))
        })?;
        let ranks = word_ranks(&tokenizer);
        let harmonic = (0..ranks.len().max(1))
            .map(|r| 1.0 / (r as f64 + 2.0))
            .sum();

        let mut h = blake3::Hasher::new();
        for part in [&config, &tok_bytes, &model] {
            h.update(&(part.len() as u64).to_le_bytes());
            h.update(part);
        }
        let digest = h.finalize().to_hex().to_string();
        let hash = (hash_share > 0.0)
            .then(|| HashEmbedder::new(HASH_DIM).map(|e| (e, hash_share)))
            .transpose()?;
        let dim = hidden + hash.as_ref().map_or(0, |(e, _)| e.dim());
        let name = super::bert::model_name(dir);
        let mut variant = format!("h{hash_share:.2}");
        if opts.sif != DEFAULT_SIF {
            variant += &format!("-s{:e}", opts.sif);
        }
        if !opts.centre {
            variant += "-nc";
        }
        if !opts.oov {
            variant += "-v";
        }
        let id = format!("{RECIPE}-{name}-{}-{variant}-{dim}", &digest[..8]);
        let centre_words = if opts.centre {
            let mut by_rank: Vec<(&String, &usize)> = ranks.iter().collect();
            by_rank.sort_by_key(|(_, &r)| r);
            by_rank
                .into_iter()
                .map(|(w, _)| w.clone())
                .filter(|w| w.chars().count() >= 2)
                .take(CENTRE_WORDS)
                .collect()
        } else {
            Vec::new()
        };
        let cache = WordCache::new(&dir.join(FILE), &digest, hidden);
        let vectors = RwLock::new(cache.load());
        let e = Self {
            id,
            dir: dir.to_path_buf(),
            hidden,
            hash,
            sif: opts.sif,
            oov: opts.oov,
            centre_words,
            centre: std::sync::OnceLock::new(),
            ranks,
            harmonic,
            vectors,
            bert: Mutex::new(None),
            adding: Mutex::new(()),
            cache,
        };
        // The centre is computed here, before any batch runs in parallel: otherwise every
        // batch of a first run would embed the centring words. After `model install` they
        // are cached, and this is a mean of cached vectors.
        if !e.centre_words.is_empty() {
            let words: Vec<&str> = e.centre_words.iter().map(String::as_str).collect();
            e.ensure(&words)?;
            e.centre();
        }
        Ok(e)
    }

    /// Embeds every whole word of the model's vocabulary (and the centring words) into
    /// the cache now, so that a lake's first index finds most of its words there rather
    /// than running the encoder for them. Returns how many words were new.
    pub fn embed_vocabulary(&self) -> Result<usize, EmbedError> {
        let count = || self.vectors.read().unwrap_or_else(|e| e.into_inner()).len();
        let before = count();
        let mut words: Vec<&str> = self.ranks.keys().map(String::as_str).collect();
        words.extend(self.centre_words.iter().map(String::as_str));
        self.ensure(&words)?;
        Ok(count() - before)
    }

    /// Words of `text` that count: content words of at most [`MAX_WORD`] characters, not
    /// all digits.
    fn words(&self, text: &str) -> Vec<String> {
        content_words(text)
            .into_iter()
            .filter(|w| w.chars().count() <= MAX_WORD && !w.chars().all(|c| c.is_numeric()))
            .filter(|w| self.oov || self.ranks.contains_key(w))
            .collect()
    }

    /// The SIF weight of `word`: near 0 for the most frequent words of the vocabulary,
    /// near 1 for rare ones and for words the vocabulary does not hold whole.
    fn weight(&self, word: &str) -> f64 {
        let rank = self.ranks.get(word).copied().unwrap_or(self.ranks.len());
        let p = 1.0 / (rank as f64 + 2.0) / self.harmonic;
        self.sif / (self.sif + p)
    }

    /// Makes sure every word of `words` has a vector: those not cached run through the
    /// encoder (loaded now if need be) and are appended to the cache file.
    ///
    /// No lock is held while the encoder runs: it runs on rayon's pool, and a worker
    /// waiting there may take up another batch of texts that needs the same lock (a
    /// deadlock). Two threads meeting the same new word may both embed it; the vector
    /// is the same, and only one copy is kept.
    fn ensure(&self, words: &[&str]) -> Result<(), EmbedError> {
        let todo: Vec<String> = {
            let known = self.vectors.read().unwrap_or_else(|e| e.into_inner());
            let mut m: Vec<String> = words
                .iter()
                .filter(|w| !known.contains_key(**w))
                .map(|w| w.to_string())
                .collect();
            m.sort_unstable();
            m.dedup();
            m
        };
        if todo.is_empty() {
            return Ok(());
        }
        let model = self.model()?;
        let started = std::time::Instant::now();
        let fresh = embed_words(&model, &todo, self.hidden)?;
        tracing::debug!(words = fresh.len(), elapsed = ?started.elapsed(), "embedded new words");
        let _adding = self.adding.lock().unwrap_or_else(|e| e.into_inner());
        let fresh: Vec<WordVector> = {
            let known = self.vectors.read().unwrap_or_else(|e| e.into_inner());
            fresh
                .into_iter()
                .filter(|(w, _)| !known.contains_key(w))
                .collect()
        };
        if let Err(e) = self.cache.append(&fresh) {
            tracing::warn!(dir = %self.dir.display(), error = %e, "cannot write the word cache; new words will be embedded again next time");
        }
        let mut known = self.vectors.write().unwrap_or_else(|e| e.into_inner());
        known.extend(fresh);
        Ok(())
    }

    /// The encoder, loaded now if this is the first word not in the cache.
    fn model(&self) -> Result<Arc<BertEmbedder>, EmbedError> {
        let mut bert = self.bert.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(m) = bert.as_ref() {
            return Ok(m.clone());
        }
        let m = Arc::new(BertEmbedder::load(&self.dir)?);
        *bert = Some(m.clone());
        Ok(m)
    }

    /// The mean vector of the centring words (all cached at load), or `None` without
    /// centring.
    fn centre(&self) -> Option<&[f32]> {
        if self.centre_words.is_empty() {
            return None;
        }
        let c = self.centre.get_or_init(|| {
            let known = self.vectors.read().unwrap_or_else(|e| e.into_inner());
            let mut sum = vec![0.0f64; self.hidden];
            for v in self.centre_words.iter().filter_map(|w| known.get(w)) {
                for (s, &x) in sum.iter_mut().zip(v.iter()) {
                    *s += f64::from(x);
                }
            }
            let n = self.centre_words.len() as f64;
            sum.into_iter().map(|x| (x / n) as f32).collect()
        });
        Some(c)
    }

    /// The vector of one text, its words' vectors (and the centring words') all cached.
    fn combine(&self, text: &str, words: &[String]) -> Vec<f32> {
        let centre = self.centre();
        let known = self.vectors.read().unwrap_or_else(|e| e.into_inner());
        let mut sorted: Vec<&str> = words.iter().map(String::as_str).collect();
        sorted.sort_unstable();
        let mut sum = vec![0.0f64; self.hidden];
        // Runs of one word: its tf; summing in sorted order keeps the result independent
        // of thread and batch.
        for run in sorted.chunk_by(|a, b| a == b) {
            let Some(v) = known.get(run[0]) else {
                continue;
            };
            let w = self.weight(run[0]) * (1.0 + (run.len() as f64).ln());
            for (s, &x) in sum.iter_mut().zip(v.iter()) {
                *s += w * f64::from(x);
            }
            if let Some(c) = centre {
                for (s, &x) in sum.iter_mut().zip(c) {
                    *s -= w * f64::from(x);
                }
            }
        }
        drop(known);
        let mut words_part: Vec<f32> = sum.into_iter().map(|x| x as f32).collect();
        l2_normalize(&mut words_part);
        let Some((hash, share)) = &self.hash else {
            return words_part;
        };
        let (a, b) = (share.sqrt(), (1.0 - share).sqrt());
        let mut v: Vec<f32> = hash.embed_one(text).into_iter().map(|x| a * x).collect();
        v.extend(words_part.into_iter().map(|x| b * x));
        l2_normalize(&mut v);
        v
    }
}

impl Embedder for WordsEmbedder {
    /// `words-v1-NAME-DIGEST-hSHARE-DIM`: the model's name and a digest of its files,
    /// the hash share and the dimension (the model's hidden size, plus the hash
    /// embedder's 512 when the share is above 0).
    fn id(&self) -> String {
        self.id.clone()
    }

    fn dim(&self) -> usize {
        self.hidden + self.hash.as_ref().map_or(0, |(e, _)| e.dim())
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let words: Vec<Vec<String>> = texts.par_iter().map(|t| self.words(t)).collect();
        let all: Vec<&str> = words.iter().flatten().map(String::as_str).collect();
        self.ensure(&all)?;
        Ok(texts
            .par_iter()
            .zip(&words)
            .map(|(t, w)| self.combine(t, w))
            .collect())
    }
}

/// A word and its vector.
type WordVector = (String, Box<[f32]>);

/// Normalized sentence vectors of single words, each as `[CLS] pieces… [SEP]`. Words of
/// one length in pieces share a batch, so no padding enters any of them; a word with no
/// piece (only characters the tokenizer drops) gets the zero vector.
fn embed_words(
    bert: &BertEmbedder,
    words: &[String],
    hidden: usize,
) -> Result<Vec<WordVector>, EmbedError> {
    let mut by_len: std::collections::BTreeMap<usize, Vec<(usize, Vec<u32>)>> = Default::default();
    let frame = bert.encode("")?.len();
    let mut out: Vec<WordVector> = words
        .iter()
        .map(|w| (w.clone(), vec![0.0f32; hidden].into_boxed_slice()))
        .collect();
    for (i, w) in words.iter().enumerate() {
        let ids = bert.encode(w)?;
        if ids.len() > frame {
            by_len.entry(ids.len()).or_default().push((i, ids));
        }
    }
    let batches: Vec<&[(usize, Vec<u32>)]> = by_len
        .values()
        .flat_map(|group| group.chunks(BATCH))
        .collect();
    let done: Vec<Vec<(usize, Vec<f32>)>> = batches
        .par_iter()
        .map(|batch| {
            let seqs: Vec<Vec<u32>> = batch.iter().map(|(_, ids)| ids.clone()).collect();
            let pooled = bert.pooled(&seqs)?;
            Ok(batch
                .iter()
                .zip(pooled)
                .map(|((i, _), mut v)| {
                    l2_normalize(&mut v);
                    (*i, v)
                })
                .collect())
        })
        .collect::<Result<_, EmbedError>>()?;
    for (i, v) in done.into_iter().flatten() {
        out[i].1 = v.into_boxed_slice();
    }
    Ok(out)
}

/// Whole, alphabetic words of the vocabulary (no `##` piece, special token or
/// placeholder) → their rank by id.
fn word_ranks(tokenizer: &Tokenizer) -> HashMap<String, usize> {
    let mut words: Vec<(u32, String)> = tokenizer
        .get_vocab(false)
        .into_iter()
        .filter(|(t, _)| !t.starts_with("##") && t.chars().all(char::is_alphabetic))
        .map(|(t, id)| (id, t))
        .collect();
    words.sort_unstable();
    words
        .into_iter()
        .enumerate()
        .map(|(rank, (_, t))| (t, rank))
        .collect()
}

/// Blocks of the weights file read into the model's digest.
const SAMPLES: u64 = 64;
/// Bytes per sampled block.
const SAMPLE_BYTES: usize = 64 * 1024;

/// The weights file's length and [`SAMPLES`] blocks spread over it, first and last
/// included: what the model's digest covers of it. Reading all 90 MB of MiniLM to hash
/// it would cost each search about 100 ms; any retrained or other model differs in its
/// header (the first block lists every tensor with its offsets) or in nearly every block.
fn sample(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = std::fs::File::open(path)?;
    let len = f.metadata()?.len();
    let mut out = len.to_le_bytes().to_vec();
    let block = SAMPLE_BYTES as u64;
    if len <= SAMPLES * block {
        f.read_to_end(&mut out)?;
        return Ok(out);
    }
    let mut buf = vec![0u8; SAMPLE_BYTES];
    for i in 0..SAMPLES {
        let at = (len - block) * i / (SAMPLES - 1);
        f.seek(SeekFrom::Start(at))?;
        f.read_exact(&mut buf)?;
        out.extend_from_slice(&buf);
    }
    Ok(out)
}

#[cfg(test)]
#[path = "words_tests.rs"]
mod tests;
