//! Distinct values and value counts from one 64-bit hash per cell.
//!
//! Exact up to [`DISTINCT_CAP`] values with a set of hashes — two of 10,000 values share
//! a 64-bit hash with probability about 10⁸ / 2⁶⁵ ≈ 3·10⁻¹², so the count is exact in
//! practice — then a HyperLogLog sketch fed the same hashes. The first string of each
//! hash is kept only while the column can still be categorical, for its top values: no
//! string is allocated for a cell already seen.

use cardinality_estimator::CardinalityEstimator;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, BuildHasherDefault, Hasher};

/// Distinct values are counted exactly up to this many; past it, estimated.
pub(crate) const DISTINCT_CAP: usize = 10_000;
/// Seed of the cell hash: fixed, so that estimates are the same on every run.
const SEED: u64 = 0x6c61_6b65_7374_6172;

/// The keys are already hashes: the map uses them as they are.
#[derive(Default)]
pub(crate) struct Prehashed(u64);

impl Hasher for Prehashed {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        // Only u64 keys are hashed with this hasher; fold anything else in anyway.
        for b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(*b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

type Counts = HashMap<u64, u64, BuildHasherDefault<Prehashed>>;
type Seen = HashSet<u64, BuildHasherDefault<Prehashed>>;

/// The 64-bit hash of a cell.
#[inline]
pub(crate) fn hash(v: &str) -> u64 {
    // foldhash's quality variant: HyperLogLog reads the hash's low and high bits.
    foldhash::quality::FixedState::with_seed(SEED).hash_one(v.as_bytes())
}

/// Counts a column's distinct values (see the module doc).
#[derive(Default)]
pub(crate) struct Distinct {
    /// Hash → occurrences, while the column can be categorical.
    counts: Counts,
    /// The hashes seen, once it cannot (half the memory of `counts`: wide tables hold
    /// up to [`DISTINCT_CAP`] of them per column).
    seen: Seen,
    /// The first string of each hash, while at most `keep_names` values were seen.
    names: Vec<(u64, String)>,
    names_dropped: bool,
    overflow: Option<Box<CardinalityEstimator<str>>>,
}

impl Distinct {
    /// Count one value; true when it is new (while exact). `keep_names` is the most
    /// distinct values whose strings (and counts) are kept.
    #[inline]
    pub(crate) fn add(&mut self, v: &str, keep_names: usize) -> bool {
        let h = hash(v);
        if let Some(est) = &mut self.overflow {
            est.insert_hash(h);
            return false;
        }
        if !self.names_dropped {
            if let Some(c) = self.counts.get_mut(&h) {
                *c += 1;
                return false;
            }
            if self.counts.len() < keep_names.min(DISTINCT_CAP) {
                self.counts.insert(h, 1);
                self.names.push((h, v.to_string()));
                return true;
            }
            // Clearly not categorical: no more strings or counts.
            self.seen = self.counts.keys().copied().collect();
            self.counts = Counts::default();
            self.names = Vec::new();
            self.names_dropped = true;
        }
        if self.seen.len() < DISTINCT_CAP {
            return self.seen.insert(h);
        }
        if self.seen.contains(&h) {
            return false;
        }
        self.sketch();
        if let Some(est) = &mut self.overflow {
            est.insert_hash(h);
        }
        false
    }

    /// Distinct values, and whether that is exact.
    pub(crate) fn count(&self) -> (u64, bool) {
        match &self.overflow {
            None => ((self.counts.len() + self.seen.len()) as u64, true),
            Some(e) => ((e.estimate() as u64).max(DISTINCT_CAP as u64), false),
        }
    }

    /// Every value with its count, when the strings were kept.
    pub(crate) fn values(self) -> Vec<(String, u64)> {
        let counts = self.counts;
        self.names
            .into_iter()
            .map(|(h, s)| {
                let n = counts.get(&h).copied().unwrap_or(0);
                (s, n)
            })
            .collect()
    }

    /// Past the cap: the exact set becomes a sketch.
    fn sketch(&mut self) {
        let mut est = Box::new(CardinalityEstimator::<str>::new());
        for k in self.counts.keys().chain(&self.seen) {
            est.insert_hash(*k);
        }
        self.overflow = Some(est);
        self.counts = Counts::default();
        self.seen = Seen::default();
        self.names = Vec::new();
        self.names_dropped = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_then_estimated_and_names_only_while_few() {
        let mut d = Distinct::default();
        for v in ["a", "b", "a", "c", "a"] {
            d.add(v, 50);
        }
        assert_eq!(d.count(), (3, true));
        let mut vals = d.values();
        vals.sort();
        assert_eq!(vals, [("a".into(), 3), ("b".into(), 1), ("c".into(), 1)]);

        let mut d = Distinct::default();
        for i in 0..60 {
            d.add(&format!("v{i}"), 50);
        }
        assert_eq!(d.count(), (60, true));
        assert!(d.values().is_empty(), "strings dropped past 50 values");

        let mut d = Distinct::default();
        for i in 0..30_000 {
            d.add(&i.to_string(), 50);
        }
        let (n, exact) = d.count();
        assert!(!exact);
        assert!((n as f64 - 30_000.0).abs() < 1_500.0, "{n}");
    }
}
