//! The built-in embedder: signed feature hashing of words, word pairs and character
//! n-grams. No model and no download, so every index can have vectors; the scheme is
//! documented on [`HashEmbedder`].

use rayon::prelude::*;

use super::{l2_normalize, EmbedError, Embedder};
use crate::text_util::lowercase_words;

/// Version of the hashing scheme; part of [`HashEmbedder::id`]. Bump it with any change
/// to the words, features, hashing or weights below, and re-pin the values in the test
/// `vectors_are_fixed_across_versions_and_platforms`.
const SCHEME: &str = "hash-ngram-v1";

/// Weight of the word-unigram group: shared words are the strongest evidence.
const W_UNIGRAM: f64 = 1.0;
/// Weight of the word-bigram group: rewards the same words in the same order
/// (`gdp pc` vs a text that has `gdp` and `pc` far apart).
const W_BIGRAM: f64 = 0.5;
/// Weight of the character n-gram group: catches shared stems, plurals and
/// abbreviations sharing a prefix (`temp`/`temperature`), but is noisier than words.
const W_CHARGRAM: f64 = 0.7;

/// Words longer than this contribute n-grams only from their first this-many characters:
/// long hashes and base64 runs would otherwise flood the character group.
const MAX_GRAM_WORD: usize = 32;

const TAG_UNIGRAM: u8 = b'w';
const TAG_BIGRAM: u8 = b'b';
const TAG_CHARGRAM: u8 = b'c';

/// English function words dropped before building features (sorted, for binary search).
const STOPWORDS: &[&str] = &[
    "a", "about", "all", "an", "and", "any", "are", "as", "at", "be", "been", "but", "by", "can",
    "did", "do", "does", "each", "for", "from", "had", "has", "have", "how", "i", "if", "in",
    "into", "is", "it", "its", "me", "my", "no", "not", "of", "on", "or", "our", "per", "so",
    "than", "that", "the", "their", "them", "then", "there", "these", "they", "this", "those",
    "to", "was", "we", "were", "what", "when", "where", "which", "who", "whom", "why", "will",
    "with", "would", "you", "your",
];

/// The built-in embedder: hashed word and character n-grams into `dim` buckets.
///
/// It finds texts that share vocabulary with a question, including identifier spellings
/// (`gdp_pc_ppp` ↔ "GDP per capita PPP"), not synonyms — that is what the model-backed
/// embedders are for. Deterministic across runs, platforms and thread counts; no state,
/// so texts are embedded in parallel.
///
/// The scheme, version 1 (any change to it must bump the version in the id, so that
/// indexes built with the old scheme are re-embedded):
///
/// 1. Words: maximal runs of letters and digits, split again at camelCase
///    (`gdpPerCapita`, `HTMLTable`) and letter–digit (`pm25`) boundaries, lowercased. So
///    `gdp_pc_ppp`, `gdp-pc-ppp`, `gdp.pc.ppp` and `gdpPcPpp` all give `gdp pc ppp`.
/// 2. English function words (`the`, `of`, `per`, …) are dropped, unless nothing else is
///    left: they match everything and would pull unrelated texts together.
/// 3. Three feature groups: word unigrams, word bigrams (adjacent after step 2), and the
///    character 3- and 4-grams of each word with boundary marks (`<gdp>` gives `<gd`,
///    `gdp`, `dp>`, `<gdp`, `gdp>`; all-digit words give none, so `2019` and `2018`
///    share nothing; only the first 32 characters of a word give n-grams).
/// 4. Each feature is hashed with BLAKE3 (a tag byte for its group, then its text): the
///    low 64 bits modulo `dim` pick the bucket, the top bit the sign (+1/−1), so
///    collisions cancel out on average instead of piling up.
/// 5. A feature's weight is `1 + ln(tf)` (a word repeated ten times is not ten times as
///    relevant). Each group is L2-normalized on its own, then the groups are added with
///    the weights 1.0 (unigrams), 0.5 (bigrams) and 0.7 (character n-grams) and the sum
///    L2-normalized: per-group normalization keeps the many character n-grams from
///    drowning the words.
#[derive(Debug, Clone)]
pub struct HashEmbedder {
    dim: usize,
}

impl HashEmbedder {
    /// The default number of buckets. Hybrid search ranks alike within a task with 512
    /// on the three retrieval sets (BENCHMARKS.md, "Embedders"), and 256 halve the
    /// vectors on disk and the time to scan them. Indexes made with 512 keep them (their
    /// id records the dimension).
    pub const DEFAULT_DIM: usize = 256;

    /// The fewest buckets: fewer makes every text collide.
    pub const MIN_DIM: usize = 16;

    /// A hash embedder with `dim` buckets (at least [`Self::MIN_DIM`]).
    pub fn new(dim: usize) -> Result<Self, EmbedError> {
        if dim < Self::MIN_DIM {
            return Err(EmbedError::Config(format!(
                "hash embedder dimension {dim} is too small; use at least {} (default {})",
                Self::MIN_DIM,
                Self::DEFAULT_DIM
            )));
        }
        Ok(Self { dim })
    }

    /// The dimension an id of this scheme names (`hash-ngram-v1-512` → 512); `None` for
    /// any other id.
    pub fn dim_in_id(id: &str) -> Option<usize> {
        id.strip_prefix(SCHEME)?.strip_prefix('-')?.parse().ok()
    }

    /// Embeds one text: an L2-normalized vector, or the zero vector when the text has
    /// no letters or digits.
    pub fn embed_one(&self, text: &str) -> Vec<f32> {
        let words = content_words(text);
        let mut out = vec![0.0f64; self.dim];
        let mut features = Vec::new();
        let mut buf = String::new();

        // Unigrams.
        features.extend(words.iter().map(|w| feature_hash(TAG_UNIGRAM, w)));
        self.add_group(&mut out, &mut features, W_UNIGRAM);

        // Bigrams.
        for pair in words.windows(2) {
            buf.clear();
            buf.push_str(&pair[0]);
            buf.push(' ');
            buf.push_str(&pair[1]);
            features.push(feature_hash(TAG_BIGRAM, &buf));
        }
        self.add_group(&mut out, &mut features, W_BIGRAM);

        // Character 3- and 4-grams with boundary marks.
        let mut chars: Vec<char> = Vec::with_capacity(MAX_GRAM_WORD + 2);
        for w in words.iter().filter(|w| !w.chars().all(|c| c.is_numeric())) {
            chars.clear();
            chars.push('<');
            chars.extend(w.chars().take(MAX_GRAM_WORD));
            chars.push('>');
            for n in [3, 4] {
                for gram in chars.windows(n) {
                    buf.clear();
                    buf.extend(gram);
                    features.push(feature_hash(TAG_CHARGRAM, &buf));
                }
            }
        }
        self.add_group(&mut out, &mut features, W_CHARGRAM);

        let mut v: Vec<f32> = out.into_iter().map(|x| x as f32).collect();
        l2_normalize(&mut v);
        v
    }

    /// Adds one feature group to `out`: signed, sublinear-tf counts, normalized to unit
    /// length, times `weight`. Drains `features`.
    fn add_group(&self, out: &mut [f64], features: &mut Vec<u64>, weight: f64) {
        if features.is_empty() {
            return;
        }
        // Sorting groups equal features together so that tf is a run length; the order
        // of summation is then fixed too, which keeps results bit-identical everywhere.
        features.sort_unstable();
        let mut group = vec![0.0f64; self.dim];
        for run in features.chunk_by(|a, b| a == b) {
            let h = run[0];
            let tf = run.len() as f64;
            let bucket = (h % self.dim as u64) as usize;
            let sign = if h >> 63 == 1 { -1.0 } else { 1.0 };
            group[bucket] += sign * (1.0 + tf.ln());
        }
        features.clear();
        let norm = group.iter().map(|x| x * x).sum::<f64>().sqrt();
        if norm > 0.0 {
            for (o, g) in out.iter_mut().zip(&group) {
                *o += weight * g / norm;
            }
        }
    }
}

impl Default for HashEmbedder {
    fn default() -> Self {
        Self {
            dim: Self::DEFAULT_DIM,
        }
    }
}

impl Embedder for HashEmbedder {
    fn id(&self) -> String {
        format!("{SCHEME}-{}", self.dim)
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts.par_iter().map(|t| self.embed_one(t)).collect())
    }
}

/// A feature's 64-bit hash: BLAKE3 (a fixed function, unlike std's seeded hashers) of
/// the group tag followed by the feature text.
fn feature_hash(tag: u8, text: &str) -> u64 {
    let mut h = blake3::Hasher::new();
    h.update(&[tag]);
    h.update(text.as_bytes());
    let bytes = h.finalize();
    let mut first = [0u8; 8];
    first.copy_from_slice(&bytes.as_bytes()[..8]);
    u64::from_le_bytes(first)
}

/// The text's words (step 1 of the scheme) minus stop words (step 2).
pub(crate) fn content_words(text: &str) -> Vec<String> {
    let all = lowercase_words(text);
    let content: Vec<String> = all
        .iter()
        .filter(|w| STOPWORDS.binary_search(&w.as_str()).is_err())
        .cloned()
        .collect();
    if content.is_empty() {
        all
    } else {
        content
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::cosine;

    fn norm(v: &[f32]) -> f32 {
        v.iter().map(|x| x * x).sum::<f32>().sqrt()
    }

    #[test]
    fn stopwords_are_sorted_for_binary_search() {
        assert!(STOPWORDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn function_words_are_dropped_unless_they_are_all() {
        assert_eq!(
            content_words("the GDP of France"),
            ["gdp", "france"],
            "function words dropped"
        );
        assert_eq!(content_words("to be or not"), ["to", "be", "or", "not"]);
    }

    #[test]
    fn identical_texts_give_identical_unit_vectors() {
        let e = HashEmbedder::default();
        let t = "sales_2023.parquet: columns region, revenueUsd, order_date";
        let v = e.embed(&[t, t]).unwrap();
        assert_eq!(v.len(), 2);
        assert_eq!(v[0], v[1]);
        assert_eq!(v[0].len(), HashEmbedder::DEFAULT_DIM);
        assert!((norm(&v[0]) - 1.0).abs() < 1e-5, "norm {}", norm(&v[0]));
    }

    #[test]
    fn related_texts_score_clearly_higher_than_unrelated() {
        let e = HashEmbedder::default();
        let doc = "gdp_pc_ppp.csv columns country year gdp_pc_ppp";
        let v = e
            .embed(&[
                doc,
                "GDP per capita PPP by country",
                "hourly rainfall in millimetres at weather stations",
                "patient admissions by hospital ward and diagnosis code",
            ])
            .unwrap();
        let related = cosine(&v[0], &v[1]);
        let unrelated = cosine(&v[0], &v[2]).max(cosine(&v[0], &v[3]));
        assert!(related > 0.3, "related {related}");
        assert!(unrelated < 0.1, "unrelated {unrelated}");
        assert!(related > unrelated + 0.25, "{related} vs {unrelated}");
    }

    #[test]
    fn spelling_variants_of_an_identifier_are_one_vector() {
        let e = HashEmbedder::default();
        let v = e
            .embed(&["gdp_pc_ppp", "gdp-pc-ppp", "gdpPcPpp", "GDP PC PPP"])
            .unwrap();
        for w in &v[1..] {
            assert_eq!(&v[0], w);
        }
    }

    #[test]
    fn vectors_are_fixed_across_versions_and_platforms() {
        // Pinned values: if this fails, the hashing changed and SCHEME must be bumped
        // (indexes built with the old scheme hold incomparable vectors).
        let v = HashEmbedder::new(512)
            .unwrap()
            .embed_one("gdp_pc_ppp.csv columns country year");
        let nonzero = v.iter().filter(|x| **x != 0.0).count();
        assert_eq!(nonzero, 56);
        for (i, want) in [(2, 0.152_941_45), (19, -0.075_807_45), (61, 0.283_192_55)] {
            assert!(
                (v[i] - want).abs() < 1e-6,
                "v[{i}] = {}, pinned {want}",
                v[i]
            );
        }
    }

    #[test]
    fn empty_text_is_the_zero_vector_and_scores_zero() {
        let e = HashEmbedder::new(64).unwrap();
        let v = e.embed(&["", " ,;- ", "gdp"]).unwrap();
        assert_eq!(v[0], vec![0.0; 64]);
        assert_eq!(v[1], vec![0.0; 64]);
        assert!(v.iter().flatten().all(|x| x.is_finite()));
        assert_eq!(cosine(&v[0], &v[2]), 0.0);
        assert_eq!(cosine(&v[0], &v[0]), 0.0);
        assert!((norm(&v[2]) - 1.0).abs() < 1e-5);
    }

    #[test]
    fn id_names_scheme_and_dimension_and_small_dims_are_refused() {
        assert_eq!(HashEmbedder::default().id(), "hash-ngram-v1-256");
        let e = HashEmbedder::new(512).unwrap();
        assert_eq!((e.id().as_str(), e.dim()), ("hash-ngram-v1-512", 512));
        assert!(e.embed(&["x"]).unwrap()[0].len() == 512);
        assert!(matches!(HashEmbedder::new(0), Err(EmbedError::Config(_))));
        assert!(e.embed(&[]).unwrap().is_empty());
    }
}
