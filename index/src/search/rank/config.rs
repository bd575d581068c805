//! Every weight, boost and cutoff of ranking, in one [`RankingConfig`] read once per
//! searcher. The defaults are the constants below (BENCHMARKS.md shows the runs that
//! chose them); a tuning run overrides any of them with its `LAKESTAR_*` environment
//! variable, which is logged, and a value that is not a finite non-negative number (a
//! positive one where zero would break ranking) is refused before any search.

use crate::error::UserError;
use crate::search::text::{
    BOOST_COLUMNS, BOOST_COLUMNS_WHOLE, BOOST_FORMAT, BOOST_NAME, BOOST_PATH, BOOST_TEXT,
    BOOST_TIME, BOOST_VALUES,
};

/// Candidates taken from each retriever before fusion.
pub const CANDIDATES: usize = 200;
/// Reciprocal-rank-fusion constant: higher flattens the rank curve.
pub const RRF_K: f64 = 60.0;
/// Weight of the BM25 ranking in the fusion.
pub const W_TEXT: f64 = 1.0;
/// Weight of the vector ranking in the fusion, for the hash embedder's vectors (and any
/// embedder not named below): above it, the hashed n-grams cost DA-Code recall@20.
pub const W_VECTOR: f64 = 0.2;
/// Weight of the vector ranking when the words embedder made the vectors: at 0.3 it
/// gains DABench questions at rank 1 over 0.2 and loses none of DA-Code; at 0.4 and
/// above DA-Code loses recall@20 (BENCHMARKS.md, "Embedders").
pub const W_VECTOR_WORDS: f64 = 0.3;
/// Weight of the vector ranking when a BERT sentence encoder made the vectors: its
/// vectors are the best of all embedders alone, and DABench MRR rises with the weight up
/// to 1.0 while DA-Code holds.
pub const W_VECTOR_BERT: f64 = 1.0;

/// The default vector weight for vectors of the embedder with id `embedder_id`.
pub fn vector_weight(embedder_id: &str) -> f64 {
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
pub const W_TIME: f64 = 0.5 / (RRF_K + 1.0);
/// The share of the time bonus that goes by how much of a file's coverage the asked
/// days make, on a log scale over four decades (a file of the asked day: all of it;
/// a year's file for one day: a third; a 30-year table: none); the rest is given for
/// any overlap. Off by default: at 0.5 and 1 the generated dev set gains a question at
/// rank 1 and DA-Code loses one (BENCHMARKS.md, "Ranking defaults").
pub const TIME_SPECIFIC: f64 = 0.0;
/// Bonus per unit of inverse document frequency of a column (or key) the question names.
pub const W_COLUMN: f64 = 0.5 / (RRF_K + 1.0);
/// A name in quotes counts this many times more than one merely mentioned.
pub const QUOTED: f64 = 2.0;
/// A column or key name of one plain word (`rainfall`, `Age`: letters only, no separator,
/// hump or digit) that the question merely uses as a word counts this share of a word's
/// strength (a word is already below a quoted name, code, or a name spelled by several
/// words: `strength` in `names`). Whole by default: both development sets reward
/// plain-word evidence, and any share below 1 costs them (BENCHMARKS.md, "Ranking
/// defaults"); the words that crowd are the [`GENERIC`] ones.
pub const PLAIN: f64 = 1.0;
/// The share of a word's strength for a plain name that is a word of the data
/// vocabulary itself (`value`, `type`, `period`, `file`), merely said: questions say them
/// for their own sake, and a few wide files having them as columns must not answer every
/// question that says them.
pub const GENERIC: f64 = 0.25;
/// The name evidence of one file, summed over its names, saturates at this multiple of
/// the best fused score of the question (`cap · (1 − e^(−bonus/cap))`): a small bonus
/// counts nearly whole, a large one never more than the cap. At 1 both development sets
/// lose questions at rank 1; at 2 neither does.
pub const NAMES_CAP: f64 = 2.0;
/// The part of it that plain words make (see [`PLAIN`]) saturates first, at this
/// multiple of the best fused score; 0 leaves it to the overall cap. Off by default: at
/// 0.5–1 both development sets lose questions (BENCHMARKS.md).
pub const PLAIN_CAP: f64 = 0.0;
/// Members of one collection returned as hits of their own because their own evidence
/// (the days they cover, their names) answers the question; the rest fold. A question
/// over 2002–2023 of a yearly collection needs its 22 members, one asking for "every
/// state" its 50 or 51.
pub const MEMBER_HITS: usize = 64;
/// Vector neighbours whose similarity is given as a reason.
pub const SIMILAR_REASONS: usize = 10;
/// When no file's words match the question (no full-text hit, no name named), the
/// nearest vectors are returned only if the best is at least this similar: nearest
/// neighbours always exist, and for gibberish ("zzqx") they are noise (hash vectors of
/// unrelated text score 0.05–0.15 here), which `search` then reports as no match.
pub const ALONE_SIMILARITY: f64 = 0.3;

/// The boost of another spelling of a question's word ([`crate::search::vocab`]: `Jun`
/// for June, rainfall for precipitation) as a share of the word's own; 0 switches
/// expansion off.
pub const W_SYNONYMS: f64 = 0.5;
/// Parts of a multi-part question searched on their own besides the whole question
/// (clauses split at `;`, sentence ends, `, and`, `, then`, `as well as`), their hits
/// merged in turns so that each part keeps a share of the list; 1 searches the whole
/// question alone.
pub const PARTS: usize = 6;
/// Parts a question must have for them to be searched on their own: a question of two
/// sentences is most often one question said in two steps ("Calculate X. Then Y.").
pub const PARTS_FROM: usize = 3;
/// The first hits of each part that take turns with the whole question's; the whole
/// question's list gives the rest.
pub const PART_HITS: usize = 1;
/// Whether a question asking two or more time windows has the members covering each
/// window take turns in the list (1), rather than the best-scored window's members
/// filling it first (0).
pub const WINDOW_SHARES: f64 = 1.0;
/// Whether a member set apart by its own evidence ranks with its collection's best
/// member (1), rather than by its own description's match (0).
pub const COLLECTION_SCORE: f64 = 1.0;
/// Whether folded members and companions fill the list up to `k` after the hits that
/// hold them (1), or stay named under those hits only (0).
pub const FILL: f64 = 1.0;
/// Whether a short code (`NJ`, `UK`, `Q3`: two or three letters and digits with a
/// capital) names a category or a member's varying part when the question writes it
/// exactly so, not at a sentence's start (1), or is too short to name anything (0).
pub const SHORT_CODES: f64 = 1.0;
/// The strength, as a share of a named file's, of a file whose name's words the
/// question names with its numbers left out (`graduation_rates_2022.csv` by "the
/// graduation rate"); 0 leaves such names unnamed.
pub const FILE_WORDS: f64 = 1.0;

/// The text index's field boosts, in the order of its searched fields (name, columns,
/// whole columns, path, time, values, format, text).
pub type Boosts = [f32; 8];

/// The ranking parameters of one searcher. See the constants for what each means.
#[derive(Debug, Clone, PartialEq)]
pub struct RankingConfig {
    /// [`CANDIDATES`] (`LAKESTAR_CANDIDATES`).
    pub candidates: usize,
    /// [`RRF_K`] (`LAKESTAR_RRF_K`).
    pub rrf_k: f64,
    /// [`W_TEXT`] (`LAKESTAR_W_TEXT`).
    pub text: f64,
    /// [`W_VECTOR`], or by embedder ([`vector_weight`]) (`LAKESTAR_W_VECTOR`).
    pub vector: f64,
    /// [`W_COLUMN`], scaled with the fusion constant (`LAKESTAR_W_COLUMN`).
    pub column: f64,
    /// [`QUOTED`] (`LAKESTAR_QUOTED`).
    pub quoted: f64,
    /// [`PLAIN`] (`LAKESTAR_W_PLAIN`).
    pub plain: f64,
    /// [`GENERIC`] (`LAKESTAR_W_GENERIC`).
    pub generic: f64,
    /// [`NAMES_CAP`] (`LAKESTAR_NAMES_CAP`).
    pub names_cap: f64,
    /// [`PLAIN_CAP`] (`LAKESTAR_PLAIN_CAP`).
    pub plain_cap: f64,
    /// [`W_TIME`], scaled with the fusion constant (`LAKESTAR_W_TIME`).
    pub time: f64,
    /// [`TIME_SPECIFIC`] (`LAKESTAR_TIME_SPECIFIC`).
    pub time_specific: f64,
    /// [`MEMBER_HITS`] (`LAKESTAR_MEMBER_HITS`).
    pub member_hits: usize,
    /// [`SIMILAR_REASONS`] (`LAKESTAR_SIMILAR_REASONS`).
    pub similar_reasons: usize,
    /// [`ALONE_SIMILARITY`] (`LAKESTAR_ALONE_SIMILARITY`).
    pub alone_similarity: f64,
    /// [`W_SYNONYMS`] (`LAKESTAR_W_SYNONYMS`).
    pub synonyms: f64,
    /// [`PARTS`] (`LAKESTAR_PARTS`).
    pub parts: usize,
    /// [`PARTS_FROM`] (`LAKESTAR_PARTS_FROM`).
    pub parts_from: usize,
    /// [`PART_HITS`] (`LAKESTAR_PART_HITS`).
    pub part_hits: usize,
    /// [`WINDOW_SHARES`] (`LAKESTAR_WINDOW_SHARES`): on when above 0.
    pub window_shares: f64,
    /// [`COLLECTION_SCORE`] (`LAKESTAR_COLLECTION_SCORE`): on when above 0.
    pub collection_score: f64,
    /// [`FILL`] (`LAKESTAR_FILL`): on when above 0.
    pub fill: f64,
    /// [`SHORT_CODES`] (`LAKESTAR_SHORT_CODES`): on when above 0.
    pub short_codes: f64,
    /// [`FILE_WORDS`] (`LAKESTAR_FILE_WORDS`).
    pub file_words: f64,
    /// The text index's field boosts (`LAKESTAR_BOOST_NAME`, `…_COLUMNS`,
    /// `…_COLUMNS_WHOLE`, `…_PATH`, `…_TIME`, `…_VALUES`, `…_FORMAT`, `…_TEXT`).
    pub boosts: Boosts,
}

impl Default for RankingConfig {
    fn default() -> Self {
        RankingConfig {
            candidates: CANDIDATES,
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
            time_specific: TIME_SPECIFIC,
            member_hits: MEMBER_HITS,
            similar_reasons: SIMILAR_REASONS,
            alone_similarity: ALONE_SIMILARITY,
            synonyms: W_SYNONYMS,
            parts: PARTS,
            parts_from: PARTS_FROM,
            part_hits: PART_HITS,
            window_shares: WINDOW_SHARES,
            collection_score: COLLECTION_SCORE,
            fill: FILL,
            short_codes: SHORT_CODES,
            file_words: FILE_WORDS,
            boosts: [
                BOOST_NAME,
                BOOST_COLUMNS,
                BOOST_COLUMNS_WHOLE,
                BOOST_PATH,
                BOOST_TIME,
                BOOST_VALUES,
                BOOST_FORMAT,
                BOOST_TEXT,
            ],
        }
    }
}

/// The variables of the field boosts, in [`Boosts`] order.
const BOOST_VARS: [&str; 8] = [
    "LAKESTAR_BOOST_NAME",
    "LAKESTAR_BOOST_COLUMNS",
    "LAKESTAR_BOOST_COLUMNS_WHOLE",
    "LAKESTAR_BOOST_PATH",
    "LAKESTAR_BOOST_TIME",
    "LAKESTAR_BOOST_VALUES",
    "LAKESTAR_BOOST_FORMAT",
    "LAKESTAR_BOOST_TEXT",
];

impl RankingConfig {
    /// The defaults for vectors of `embedder_id`, with the process environment's
    /// overrides.
    pub fn from_env(embedder_id: &str) -> Result<RankingConfig, UserError> {
        Self::from_vars(embedder_id, |k| std::env::var(k).ok())
    }

    /// The defaults for vectors of `embedder_id`, with the overrides `var` gives (an
    /// empty value is no override).
    pub fn from_vars(
        embedder_id: &str,
        var: impl Fn(&str) -> Option<String>,
    ) -> Result<RankingConfig, UserError> {
        let mut c = RankingConfig {
            vector: vector_weight(embedder_id),
            ..RankingConfig::default()
        };
        let mut over = Overrides { var: &var };
        let rrf_k = over.number("LAKESTAR_RRF_K", c.rrf_k, true)?;
        // The bonuses are measured against the best fused rank's score, which the
        // fusion constant sets: they scale with it unless given.
        let scale = (c.rrf_k + 1.0) / (rrf_k + 1.0);
        c.rrf_k = rrf_k;
        c.candidates = over.count("LAKESTAR_CANDIDATES", c.candidates)?;
        c.text = over.number("LAKESTAR_W_TEXT", c.text, false)?;
        c.vector = over.number("LAKESTAR_W_VECTOR", c.vector, false)?;
        c.column = over.number("LAKESTAR_W_COLUMN", c.column * scale, false)?;
        c.quoted = over.number("LAKESTAR_QUOTED", c.quoted, false)?;
        c.plain = over.number("LAKESTAR_W_PLAIN", c.plain, false)?;
        c.generic = over.number("LAKESTAR_W_GENERIC", c.generic, false)?;
        c.names_cap = over.number("LAKESTAR_NAMES_CAP", c.names_cap, false)?;
        c.plain_cap = over.number("LAKESTAR_PLAIN_CAP", c.plain_cap, false)?;
        c.time = over.number("LAKESTAR_W_TIME", c.time * scale, false)?;
        c.time_specific = over.number("LAKESTAR_TIME_SPECIFIC", c.time_specific, false)?;
        c.member_hits = over.count("LAKESTAR_MEMBER_HITS", c.member_hits)?;
        c.similar_reasons = over.count("LAKESTAR_SIMILAR_REASONS", c.similar_reasons)?;
        c.alone_similarity = over.number("LAKESTAR_ALONE_SIMILARITY", c.alone_similarity, false)?;
        c.synonyms = over.number("LAKESTAR_W_SYNONYMS", c.synonyms, false)?;
        c.parts = over.count("LAKESTAR_PARTS", c.parts)?;
        c.parts_from = over.count("LAKESTAR_PARTS_FROM", c.parts_from)?;
        c.part_hits = over.count("LAKESTAR_PART_HITS", c.part_hits)?;
        c.window_shares = over.number("LAKESTAR_WINDOW_SHARES", c.window_shares, false)?;
        c.collection_score = over.number("LAKESTAR_COLLECTION_SCORE", c.collection_score, false)?;
        c.fill = over.number("LAKESTAR_FILL", c.fill, false)?;
        c.short_codes = over.number("LAKESTAR_SHORT_CODES", c.short_codes, false)?;
        c.file_words = over.number("LAKESTAR_FILE_WORDS", c.file_words, false)?;
        for (b, v) in c.boosts.iter_mut().zip(BOOST_VARS) {
            *b = over.number(v, f64::from(*b), false)? as f32;
        }
        Ok(c)
    }
}

/// Reads overrides, logging each one taken.
struct Overrides<'a, F> {
    var: &'a F,
}

impl<F: Fn(&str) -> Option<String>> Overrides<'_, F> {
    fn raw(&self, name: &str) -> Option<String> {
        (self.var)(name)
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    }

    /// A finite number ≥ 0 (> 0 when `positive`).
    fn number(&mut self, name: &str, default: f64, positive: bool) -> Result<f64, UserError> {
        let Some(raw) = self.raw(name) else {
            return Ok(default);
        };
        match raw.parse::<f64>() {
            Ok(v) if v.is_finite() && v >= 0.0 && (!positive || v > 0.0) => {
                tracing::info!(variable = name, value = v, default, "ranking override");
                Ok(v)
            }
            _ => Err(UserError::BadRanking {
                variable: name.to_string(),
                value: raw,
                expected: if positive {
                    "a finite number above 0"
                } else {
                    "a finite number of 0 or more"
                },
            }),
        }
    }

    /// A whole number ≥ 1.
    fn count(&mut self, name: &str, default: usize) -> Result<usize, UserError> {
        let Some(raw) = self.raw(name) else {
            return Ok(default);
        };
        match raw.parse::<usize>() {
            Ok(v) if v >= 1 => {
                tracing::info!(variable = name, value = v, default, "ranking override");
                Ok(v)
            }
            _ => Err(UserError::BadRanking {
                variable: name.to_string(),
                value: raw,
                expected: "a whole number of 1 or more",
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(vars: &[(&str, &str)]) -> Result<RankingConfig, UserError> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        RankingConfig::from_vars("hash-ngram-v1-512", |k| {
            vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone())
        })
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
        let c = RankingConfig::from_vars("bert-x-384", |_| None).unwrap();
        assert_eq!(c.vector, W_VECTOR_BERT);
        let c = RankingConfig::from_vars("bert-x-384", |k| {
            (k == "LAKESTAR_W_VECTOR").then(|| "0.4".to_string())
        })
        .unwrap();
        assert_eq!(c.vector, 0.4);
    }

    #[test]
    fn no_overrides_give_the_constants() {
        assert_eq!(with(&[]).unwrap(), RankingConfig::default());
        assert_eq!(
            with(&[("LAKESTAR_W_TEXT", " ")]).unwrap(),
            RankingConfig::default()
        );
    }

    #[test]
    fn overrides_are_taken_and_bonuses_follow_the_fusion_constant() {
        let c = with(&[
            ("LAKESTAR_W_VECTOR", "0.5"),
            ("LAKESTAR_RRF_K", "20"),
            ("LAKESTAR_BOOST_PATH", "3"),
            ("LAKESTAR_MEMBER_HITS", "5"),
        ])
        .unwrap();
        assert_eq!(c.vector, 0.5);
        assert_eq!(c.rrf_k, 20.0);
        assert!((c.time - 0.5 / 21.0).abs() < 1e-12);
        assert!((c.column - 0.5 / 21.0).abs() < 1e-12);
        assert_eq!(c.boosts[3], 3.0);
        assert_eq!(c.member_hits, 5);
        // Given outright, a bonus is not scaled.
        let c = with(&[("LAKESTAR_RRF_K", "20"), ("LAKESTAR_W_TIME", "0.1")]).unwrap();
        assert_eq!(c.time, 0.1);
    }

    #[test]
    fn bad_values_are_refused_naming_the_variable() {
        for (var, value) in [
            ("LAKESTAR_W_TEXT", "-1"),
            ("LAKESTAR_W_VECTOR", "NaN"),
            ("LAKESTAR_W_TIME", "inf"),
            ("LAKESTAR_RRF_K", "0"),
            ("LAKESTAR_CANDIDATES", "0"),
            ("LAKESTAR_MEMBER_HITS", "2.5"),
            ("LAKESTAR_BOOST_NAME", "lots"),
        ] {
            let e = with(&[(var, value)]).unwrap_err().to_string();
            assert!(e.contains(var) && e.contains(value), "{e}");
        }
    }
}
