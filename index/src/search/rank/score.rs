//! Scoring: evidence in, one number per candidate out. Pure — no index, no catalog —
//! so that every weight's effect is unit-tested here.

use super::config::RankingConfig;
use super::evidence::Evidence;
use std::collections::HashMap;

/// The reciprocal-rank fusion of the retrievers' ranks; a member found through its
/// collection stands in with its retrieved siblings' score.
pub(crate) fn fused(e: &Evidence, cfg: &RankingConfig) -> f64 {
    let rrf = |w: f64, rank: usize| w / (cfg.rrf_k + rank as f64 + 1.0);
    let mut s = 0.0;
    if let Some((rank, _)) = &e.text {
        s += rrf(cfg.text, *rank);
    }
    if let Some((rank, _)) = e.vector {
        s += rrf(cfg.vector, rank);
    }
    if let Some((stand_in, _)) = &e.member_of {
        s = s.max(*stand_in);
    }
    s
}

/// The score of each candidate: its fused rank score, plus the names the question names
/// (each weighted by its `rarity` in the lake and its strength, the sum saturating at a
/// multiple of the best fused score), plus the time bonus when its coverage overlaps an
/// asked interval.
pub(crate) fn scores(
    evidence: &[Evidence],
    rarity: &HashMap<String, f64>,
    cfg: &RankingConfig,
) -> Vec<f64> {
    let fused: Vec<f64> = evidence.iter().map(|e| self::fused(e, cfg)).collect();
    let top = fused.iter().copied().fold(0.0, f64::max);
    evidence
        .iter()
        .zip(fused)
        .map(|(e, base)| {
            let part = |plain: bool| -> f64 {
                let b: f64 = (e.named.iter().filter(|n| n.plain == plain))
                    .map(|n| rarity.get(&n.key).copied().unwrap_or(0.0) * n.strength)
                    .sum();
                b * cfg.column
            };
            let plain = saturate(part(true), cfg.plain_cap * top);
            let names = saturate(part(false) + plain, cfg.names_cap * top);
            let time = match &e.covers {
                Some(c) if !c.asked.is_empty() => {
                    let specific = c
                        .share
                        .map_or(1.0, |s| (1.0 + s.log10() / 4.0).clamp(0.0, 1.0));
                    cfg.time * (1.0 - cfg.time_specific + cfg.time_specific * specific).max(0.0)
                }
                _ => 0.0,
            };
            base + names + time
        })
        .collect()
}

/// The rarity of a name held by `df` of `n` files: `ln(1 + n / df)`.
pub(crate) fn rarity(n: f64, df: f64) -> f64 {
    (1.0 + n.max(1.0) / df.max(1.0)).ln()
}

/// `bonus` bounded by `cap` smoothly: `cap · (1 − e^(−bonus/cap))`, close to `bonus`
/// while it is small against `cap`, never above `cap`, and still increasing, so that a
/// file named more still ranks above one named less. A cap of 0 or less leaves the
/// bonus as it is.
pub(crate) fn saturate(bonus: f64, cap: f64) -> f64 {
    if cap <= 0.0 || !cap.is_finite() {
        return bonus;
    }
    cap * (1.0 - (-bonus / cap).exp())
}

#[cfg(test)]
mod tests {
    use super::super::evidence::{Covers, Named};
    use super::*;

    fn at(text: Option<usize>, vector: Option<usize>) -> Evidence {
        Evidence {
            text: text.map(|r| (r, Vec::new())),
            vector: vector.map(|r| (r, 0.5)),
            ..Evidence::default()
        }
    }

    fn named(key: &str, strength: f64, plain: bool) -> Named {
        Named {
            key: key.into(),
            strength,
            column: true,
            plain,
        }
    }

    #[test]
    fn fusion_follows_ranks_and_weights() {
        let cfg = RankingConfig::default();
        let s = scores(
            &[at(Some(0), None), at(Some(1), Some(0)), at(None, Some(0))],
            &HashMap::new(),
            &cfg,
        );
        assert!(s[1] > s[0] && s[0] > s[2], "{s:?}");
        assert!((s[0] - 1.0 / 61.0).abs() < 1e-12);
        let text_only = RankingConfig { vector: 0.0, ..cfg };
        let s = scores(
            &[at(Some(0), None), at(None, Some(0))],
            &HashMap::new(),
            &text_only,
        );
        assert_eq!(s[1], 0.0);
    }

    #[test]
    fn rare_names_count_more_and_the_bonus_is_capped() {
        let cfg = RankingConfig::default();
        let rarity: HashMap<String, f64> = [
            ("rare".to_string(), rarity(1000.0, 1.0)),
            ("common".to_string(), rarity(1000.0, 500.0)),
        ]
        .into();
        let mut a = at(Some(5), None);
        a.named = vec![named("rare", 1.0, false)];
        let mut b = at(Some(5), None);
        b.named = vec![named("common", 1.0, false)];
        let mut c = at(Some(5), None);
        c.named = vec![named("rare", 100.0, false)];
        let s = scores(&[at(Some(0), None), a, b, c], &rarity, &cfg);
        assert!(s[1] > s[2], "{s:?}");
        // Never more than the cap over the file's own fused score.
        let cap = cfg.names_cap * s[0];
        assert!(s[3] - 1.0 / 66.0 <= cap + 1e-12, "{s:?}");
        assert!(s[3] > s[1]);
    }

    #[test]
    fn plain_words_saturate_first_when_capped() {
        let cfg = RankingConfig {
            plain_cap: 0.5,
            ..RankingConfig::default()
        };
        let rarity: HashMap<String, f64> = [("w".to_string(), 10.0)].into();
        let mut e = at(Some(0), None);
        e.named = vec![named("w", 1.0, true)];
        let s = scores(&[e], &rarity, &cfg);
        assert!(s[0] - 1.0 / 61.0 <= 0.5 / 61.0 + 1e-12, "{s:?}");
    }

    #[test]
    fn asked_days_covered_add_the_time_bonus() {
        let cfg = RankingConfig::default();
        let mut covered = at(Some(3), None);
        covered.covers = Some(Covers {
            start: "a".into(),
            end: "b".into(),
            asked: vec![("a".into(), "b".into())],
            share: None,
        });
        let mut beside = at(Some(3), None);
        beside.covers = Some(Covers {
            start: "a".into(),
            end: "b".into(),
            asked: Vec::new(),
            share: None,
        });
        let s = scores(&[covered, beside], &HashMap::new(), &cfg);
        assert!((s[0] - s[1] - cfg.time).abs() < 1e-12);
    }

    #[test]
    fn a_file_about_the_days_asked_gets_more_of_the_time_bonus_than_one_spanning_years() {
        let cfg = RankingConfig {
            time_specific: 0.5,
            ..RankingConfig::default()
        };
        let asked = [("2012-05-03".to_string(), "2012-05-03".to_string())];
        let at = |start: &str, end: &str| Evidence {
            text: Some((3, Vec::new())),
            covers: Some(Covers::new(start, end, &asked)),
            ..Evidence::default()
        };
        let s = scores(
            &[
                at("2012-05-03", "2012-05-03"),
                at("2012-01-01", "2012-12-31"),
                at("1990-01-01", "2023-12-31"),
            ],
            &HashMap::new(),
            &cfg,
        );
        assert!(s[0] > s[1] && s[1] > s[2], "{s:?}");
        let base = 1.0 / 64.0;
        assert!((s[0] - base - cfg.time).abs() < 1e-12);
        assert!(s[2] - base >= cfg.time * 0.5 - 1e-12);
    }

    #[test]
    fn a_member_found_through_its_collection_stands_in_with_its_siblings_score() {
        let cfg = RankingConfig::default();
        let e = Evidence {
            member_of: Some((0.01, "c1".into())),
            ..Evidence::default()
        };
        assert_eq!(fused(&e, &cfg), 0.01);
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
