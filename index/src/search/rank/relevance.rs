//! A hit's relevance in words. Fused scores (0.0260 vs 0.0257) compare hits of one
//! search and say nothing about how sure a hit is; the label reads what a hit holds of
//! the question (its words in the description; a name, a category, the days asked, its
//! own part of a collection) and how far it trails the best hit. Its thresholds and the precision each
//! label has on the generated dev set are in BENCHMARKS.md.

use super::evidence::Evidence;
use serde::Serialize;

/// How well a hit matches the question.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Relevance {
    /// Found by wording or meaning alone, or far below the best hit.
    Weak,
    /// Close to the best hit, on matched words.
    Fair,
    /// Close to the best hit, and it holds something the question names: a column, a
    /// category, its own name, the days asked.
    Strong,
}

impl Relevance {
    /// The label as printed.
    pub fn as_str(self) -> &'static str {
        match self {
            Relevance::Weak => "weak",
            Relevance::Fair => "fair",
            Relevance::Strong => "strong",
        }
    }
}

/// Score share of the best hit at or above which a hit can be strong.
const STRONG_SHARE: f64 = 0.8;
/// Score share of the best hit below which a hit is weak.
const FAIR_SHARE: f64 = 0.5;
/// Share of the question's words its description must hold to be strong.
const STRONG_WORDS: f64 = 0.5;
/// Share of the question's words below which a hit is weak.
const FAIR_WORDS: f64 = 0.25;

/// The label of a hit with evidence `e`, whose score is `share` of the best hit's and
/// whose description holds `covered` of the question's words.
pub(crate) fn relevance(e: &Evidence, share: f64, covered: f64) -> Relevance {
    let named = !e.named.is_empty() || e.own > 0;
    if share >= STRONG_SHARE && covered >= STRONG_WORDS && named {
        Relevance::Strong
    } else if share >= FAIR_SHARE && (covered >= FAIR_WORDS || named) {
        Relevance::Fair
    } else {
        Relevance::Weak
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::rank::evidence::Named;

    fn worded() -> Evidence {
        Evidence {
            text: Some((0, vec!["columns".into()])),
            ..Default::default()
        }
    }

    #[test]
    fn names_and_words_make_a_close_hit_strong_and_distance_weakens_any() {
        let mut e = worded();
        assert_eq!(relevance(&e, 1.0, 1.0), Relevance::Fair);
        e.named.push(Named::other("fare".into(), 1.0));
        assert_eq!(relevance(&e, 1.0, 1.0), Relevance::Strong);
        assert_eq!(relevance(&e, 1.0, 0.3), Relevance::Fair);
        assert_eq!(relevance(&e, 0.6, 1.0), Relevance::Fair);
        assert_eq!(relevance(&e, 0.3, 1.0), Relevance::Weak);
        let meaning_only = Evidence {
            vector: Some((0, 0.9)),
            ..Default::default()
        };
        assert_eq!(relevance(&meaning_only, 1.0, 0.0), Relevance::Weak);
    }
}
