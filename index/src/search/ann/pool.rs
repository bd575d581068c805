//! The points of a 4-bit scan worth rescoring, kept while the scan runs: each task keeps
//! the scores at or above a floor that rises as it sees better ones, so that a scan of a
//! million points keeps a few thousand instead of writing every score to a buffer and
//! selecting over it afterwards (the buffer's fresh pages and the selection's two passes
//! would be milliseconds on a `lakestar search`'s critical path at a million files;
//! BENCHMARKS.md, "Vector search settings").
//!
//! Invariant: a [`Kept`] holds every point it was shown whose score is at least its
//! floor (by `f32::total_cmp`), and its floor is never above the `rank`-th best score
//! of all points (each task's is at most the `rank`-th best it saw; tasks share the
//! highest through a [`SharedFloor`], so that a task starting late skips what others
//! already know to be below it). So the `rank`-th best of all points, and every point
//! at least as good, are among the kept: [`Kept::within`] answers what `select::within`
//! answers over every score.

use super::select::nth_best;
use std::cmp::Ordering;
use std::sync::atomic::{AtomicU32, Ordering as Atomic};

/// The least f32 by `total_cmp` (a negative NaN with every bit set): a floor that keeps
/// everything.
const LOWEST: f32 = f32::from_bits(u32::MAX);

/// Kept points past this many times `rank` are cut down to the `rank` best: rare enough
/// that the cut's selection costs nothing, often enough that the kept stay a few
/// thousand.
const CUT_AT: usize = 4;

/// Scores kept for one rank: see the module.
#[derive(Debug, Clone)]
pub(crate) struct Kept {
    rank: usize,
    /// [`LOWEST`] until the first cut: everything is kept.
    floor: f32,
    /// (point id, score), in no particular order.
    points: Vec<(u32, f32)>,
}

impl Kept {
    /// Nothing kept yet, for questions up to the `rank`-th best (at least 1).
    pub(crate) fn new(rank: usize) -> Kept {
        Kept {
            rank: rank.max(1),
            floor: LOWEST,
            points: Vec::new(),
        }
    }

    /// The rank this was kept for: [`Kept::within`] answers for ranks up to it.
    pub(crate) fn rank(&self) -> usize {
        self.rank
    }

    /// Show it the scores of the points `first`, `first + 1`, …, after raising its floor
    /// to `shared`'s; then offer its own floor there.
    pub(crate) fn absorb(&mut self, first: usize, scores: &[f32], shared: &SharedFloor) {
        self.raise(shared.get());
        let floor = self.floor;
        for (i, &s) in scores.iter().enumerate() {
            if s.total_cmp(&floor) != Ordering::Less {
                self.points.push(((first + i) as u32, s));
            }
        }
        if self.points.len() > CUT_AT * self.rank {
            self.cut();
            shared.offer(self.floor);
        }
    }

    /// Its floor raised to `floor` when that is higher (one known never to be above the
    /// `rank`-th best of all points).
    fn raise(&mut self, floor: f32) {
        if self.floor.total_cmp(&floor) == Ordering::Less {
            self.floor = floor;
        }
    }

    /// Both sides' points: the higher floor holds for the union.
    pub(crate) fn merge(mut self, other: Kept) -> Kept {
        self.raise(other.floor);
        self.points.extend(other.points);
        if self.points.len() > CUT_AT * self.rank {
            self.cut();
        }
        self
    }

    /// Raise the floor to the `rank`-th best kept and drop what is below it.
    fn cut(&mut self) {
        let mut scores: Vec<f32> = self.points.iter().map(|&(_, s)| s).collect();
        let nth = nth_best(&mut scores, self.rank);
        self.raise(nth);
        let floor = self.floor;
        self.points
            .retain(|&(_, s)| s.total_cmp(&floor) != Ordering::Less);
    }

    /// The ids (ascending) of the points whose score is at least the `rank`-th best (a
    /// plain `>=`: a NaN there keeps nothing), as `select::within(scores, rank, 0.0)`
    /// over every score; `rank` at most [`Kept::rank`] and at most the points shown.
    /// (No margin below the `rank`-th best: what lies below the floor is gone.)
    pub(crate) fn within(&self, rank: usize) -> Vec<usize> {
        debug_assert!(rank >= 1 && rank <= self.rank && rank <= self.points.len());
        let mut scores: Vec<f32> = self.points.iter().map(|&(_, s)| s).collect();
        let floor = nth_best(&mut scores, rank);
        let mut ids: Vec<usize> = self
            .points
            .iter()
            .filter(|&&(_, s)| s >= floor)
            .map(|&(id, _)| id as usize)
            .collect();
        ids.sort_unstable();
        ids
    }
}

/// The highest floor any task of one scan reached, shared between them: an f32 kept as
/// a u32 whose order is `total_cmp`'s, so that raising it is one `fetch_max`.
#[derive(Debug)]
pub(crate) struct SharedFloor(AtomicU32);

impl SharedFloor {
    /// No floor yet: [`LOWEST`].
    pub(crate) fn new() -> SharedFloor {
        SharedFloor(AtomicU32::new(key(LOWEST)))
    }

    fn get(&self) -> f32 {
        unkey(self.0.load(Atomic::Relaxed))
    }

    fn offer(&self, floor: f32) {
        self.0.fetch_max(key(floor), Atomic::Relaxed);
    }
}

/// `f`'s bits reordered so that unsigned order is `total_cmp`'s: negatives flipped
/// whole, positives with the sign bit set.
fn key(f: f32) -> u32 {
    let b = f.to_bits();
    if b >> 31 == 1 {
        !b
    } else {
        b | 1 << 31
    }
}

/// The f32 of a [`key`].
fn unkey(k: u32) -> f32 {
    f32::from_bits(if k >> 31 == 1 { k & !(1 << 31) } else { !k })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::ann::select::{self, tests::scores};

    /// `s` shown in chunks of `chunk` to `tasks` keepers taking turns and sharing a
    /// floor, then merged.
    fn kept(s: &[f32], rank: usize, chunk: usize, tasks: usize) -> Kept {
        let shared = SharedFloor::new();
        let mut keepers = vec![Kept::new(rank); tasks];
        for (c, part) in s.chunks(chunk).enumerate() {
            keepers[c % tasks].absorb(c * chunk, part, &shared);
        }
        keepers.into_iter().reduce(Kept::merge).unwrap()
    }

    #[test]
    fn keys_order_as_total_cmp_and_round_trip() {
        let mut v = vec![
            LOWEST,
            f32::NEG_INFINITY,
            -1.5,
            -0.0,
            0.0,
            1e-40,
            0.25,
            f32::INFINITY,
            f32::NAN,
        ];
        v.sort_by(f32::total_cmp);
        for w in v.windows(2) {
            assert!(key(w[0]) < key(w[1]), "{} {}", w[0], w[1]);
        }
        for x in v {
            assert_eq!(unkey(key(x)).to_bits(), x.to_bits());
        }
    }

    #[test]
    fn what_is_kept_answers_as_the_selection_over_every_score() {
        for (n, levels) in [(100_000, 1 << 20), (100_000, 7), (30_000, 1000), (900, 50)] {
            let s = scores(n, levels, n as u64 ^ levels);
            for (chunk, tasks) in [(4096, 1), (4096, 3), (1000, 2), (7, 5)] {
                let k = kept(&s, 1000.min(n), chunk, tasks);
                for rank in [1, 10, 200, 1000.min(n)] {
                    assert_eq!(
                        k.within(rank),
                        select::within(&s, rank, 0.0),
                        "n {n} levels {levels} chunk {chunk} tasks {tasks} rank {rank}"
                    );
                }
                if n > 10_000 && levels > 1000 {
                    // A few thousand kept, not the lake (ties at the floor all stay).
                    assert!(
                        k.points.len() <= CUT_AT * 1000 * tasks,
                        "{}",
                        k.points.len()
                    );
                }
            }
        }
    }

    #[test]
    fn the_best_last_and_nans_are_kept_as_the_selection_keeps_them() {
        // Ascending scores: every chunk raises the floor, and the best come last.
        let s: Vec<f32> = (0..50_000).map(|i| i as f32 / 50_000.0).collect();
        let k = kept(&s, 1000, 4096, 2);
        assert_eq!(k.within(1000), select::within(&s, 1000, 0.0));
        assert_eq!(k.within(1000), (49_000..50_000).collect::<Vec<_>>());
        // NaNs rank above everything by `total_cmp`; a NaN floor keeps nothing.
        let mut s = scores(20_000, 1 << 16, 3);
        for x in s.iter_mut().step_by(5) {
            *x = f32::NAN;
        }
        let k = kept(&s, 1000, 4096, 2);
        assert_eq!(k.within(1000), select::within(&s, 1000, 0.0));
        assert!(k.within(1000).is_empty());
    }
}
