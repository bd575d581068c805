//! The points of a scan worth rescoring: every score at least the `rank`-th best less a
//! margin, found without ordering all of them. (The 4-bit scan keeps its pool while it
//! runs instead, [`super::pool`]; this serves the 8-bit scan, whose margin reaches below
//! the rank's last.)
//!
//! A copy of a million scores and a selection over it would take a tenth of a `lakestar
//! search` process's CPU at a million files, on the vector side's one thread
//! (BENCHMARKS.md, "Vector search settings"). A sample of the scores gives a
//! threshold that is very likely below the `rank`-th best; one pass keeps the scores
//! above it, and the selection runs over those few. The threshold is checked, not
//! trusted: when fewer than `rank` scores pass it, the selection runs over them all. The
//! answer is the same either way.

use std::cmp::Ordering;

/// How many of the `rank` best the sample is expected to hold (the stride is `rank /
/// SAMPLED_ABOVE`): enough that the threshold drawn from it rarely lands above the
/// rank-th best.
const SAMPLED_ABOVE: usize = 64;

/// The ids (ascending) of the scores of `scores` that are at least the `rank`-th best
/// (by `f32::total_cmp`, best first) less `margin` (`>=`, as a plain comparison: a NaN
/// floor keeps nothing). `rank` is at least 1 and at most `scores.len()`.
pub(crate) fn within(scores: &[f32], rank: usize, margin: f32) -> Vec<usize> {
    debug_assert!(rank >= 1 && rank <= scores.len());
    let nth = sampled_nth(scores, rank).unwrap_or_else(|| nth_best(&mut scores.to_vec(), rank));
    ids_at_least(scores, nth - margin)
}

/// The `rank`-th best of `scores`, selected among those at least a sampled threshold;
/// None when there is no sample or fewer than `rank` scores pass its threshold (which
/// is then above the rank-th best).
fn sampled_nth(scores: &[f32], rank: usize) -> Option<f32> {
    let t = sampled_threshold(scores, rank)?;
    let mut above: Vec<f32> = scores
        .iter()
        .copied()
        .filter(|s| s.total_cmp(&t) != Ordering::Less)
        .collect();
    // At least `rank` scores at or above `t`: the rank best are all among them.
    (above.len() >= rank).then(|| nth_best(&mut above, rank))
}

/// The `rank`-th best of `scores` (reordered).
pub(super) fn nth_best(scores: &mut [f32], rank: usize) -> f32 {
    *scores
        .select_nth_unstable_by(rank - 1, |a, b| b.total_cmp(a))
        .1
}

/// The ids of the scores at least `floor`.
fn ids_at_least(scores: &[f32], floor: f32) -> Vec<usize> {
    scores
        .iter()
        .enumerate()
        .filter(|&(_, &s)| s >= floor)
        .map(|(id, _)| id)
        .collect()
}

/// A score likely below the `rank`-th best: from every `stride`-th score, the one
/// ranked about 1.5 times as far down the sample as the rank-th best would be, plus a
/// few. None when the scores are too few for a sample to save anything.
fn sampled_threshold(scores: &[f32], rank: usize) -> Option<f32> {
    let stride = rank / SAMPLED_ABOVE;
    if stride < 2 || scores.len() < 4 * rank {
        return None;
    }
    let mut sample: Vec<f32> = scores.iter().step_by(stride).copied().collect();
    let expected = rank / stride;
    let j = (expected + expected / 2 + 16).min(sample.len());
    Some(nth_best(&mut sample, j))
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// What `within` must give: the full selection, without the sample.
    fn full(scores: &[f32], rank: usize, margin: f32) -> Vec<usize> {
        ids_at_least(scores, nth_best(&mut scores.to_vec(), rank) - margin)
    }

    /// Scores from a small deterministic generator, with ties (`levels` distinct values).
    pub(in crate::search::ann) fn scores(n: usize, levels: u64, seed: u64) -> Vec<f32> {
        let mut x = seed;
        (0..n)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((x >> 33) % levels) as f32 / levels as f32 - 0.5
            })
            .collect()
    }

    #[test]
    fn the_sample_changes_nothing() {
        assert!(sampled_nth(&scores(100_000, 1 << 20, 1), 1000).is_some());
        for (n, levels) in [
            (100_000, 1 << 20),
            (100_000, 7),
            (30_000, 1000),
            (5_000, 50),
        ] {
            let s = scores(n, levels, n as u64 + levels);
            for rank in [1, 10, 200, 1000, 2000] {
                for margin in [0.0, 0.01] {
                    let got = within(&s, rank, margin);
                    assert_eq!(
                        got,
                        full(&s, rank, margin),
                        "n {n} levels {levels} rank {rank}"
                    );
                    assert!(got.len() >= rank);
                }
            }
        }
    }

    #[test]
    fn a_sample_above_the_rank_falls_back_to_the_whole() {
        // The sampled scores are the best ones: the threshold taken from them lets fewer
        // than `rank` scores pass, so the whole selection runs.
        let rank = 1000;
        let stride = rank / SAMPLED_ABOVE;
        // The 200 best scores all lie where the sample looks, everything else below.
        let s: Vec<f32> = (0..50_000)
            .map(|i| {
                if i % stride == 0 && i / stride < 200 {
                    1.0 + i as f32 / 1e6
                } else {
                    (i % 997) as f32 / 1e4 + i as f32 / 1e9
                }
            })
            .collect();
        assert!(sampled_nth(&s, rank).is_none());
        assert_eq!(within(&s, rank, 0.0), full(&s, rank, 0.0));
        assert_eq!(within(&s, rank, 0.0).len(), rank);
    }

    #[test]
    fn a_nan_floor_keeps_nothing_as_before() {
        let mut s = scores(20_000, 1 << 16, 3);
        for x in s.iter_mut().step_by(5) {
            *x = f32::NAN;
        }
        assert_eq!(within(&s, 1000, 0.0), full(&s, 1000, 0.0));
        assert!(within(&s, 1000, 0.0).is_empty());
    }
}
