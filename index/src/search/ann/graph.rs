//! The HNSW graph (hnsw_rs) over unit vectors: built in memory, walked with a query's
//! code, and its candidates rescored with the query itself. Its generations on disk are
//! the `generation` submodule's (its API re-exported here).

mod generation;

use super::dist::{point, point_dot, CodeCosine};
use crate::compact::Code;
use hnsw_rs::hnsw::Hnsw;
use hnsw_rs::hnswio::HnswIo;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, Ordering};

pub use generation::{
    generation_dir, has_graph, has_shape, looks_complete, open_codes, open_generation,
    open_members, read_manifest, remove_other_generations, spill_path, verify_codes,
    write_generation, FileSum, GenerationWriter, Manifest, SealedGeneration, Shape, VECTORS_DIR,
};

/// hnsw_rs can dump only graphs made with its maximum number of layers.
const MAX_LAYER: usize = 16;

/// How a graph is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct GraphParams {
    /// Links per point and layer (HNSW's M).
    pub m: usize,
    /// Candidates examined per insertion.
    pub ef_construction: usize,
}

self_cell::self_cell!(
    /// A graph reloaded from disk. hnsw_rs ties a reloaded graph's lifetime to the
    /// `HnswIo` that read it (for its optional memory map), so the two live together.
    struct Reloaded {
        owner: HnswIo,
        #[not_covariant]
        dependent: ReloadedHnsw,
    }
);

type ReloadedHnsw<'a> = Hnsw<'a, i8, CodeCosine>;

enum Inner {
    Built(Box<Hnsw<'static, i8, CodeCosine>>),
    Reloaded(Reloaded),
}

/// An HNSW graph over the codes of unit vectors; point ids are 0..len.
pub struct Graph {
    inner: Inner,
    points: usize,
    dim: usize,
}

impl std::fmt::Debug for Graph {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Graph")
            .field("points", &self.points)
            .field("dim", &self.dim)
            .finish()
    }
}

/// Points inserted between two reads of a build's cancel flag: hnsw_rs inserts a chunk
/// in parallel; at the pace of the 100k-file bench (about 80k points in a minute on two
/// cores) a chunk of this size takes about three seconds.
pub const BUILD_CHUNK: usize = 4_096;

impl Graph {
    /// Build a graph over `codes` (point id = position), inserting in parallel. Every
    /// code must have the same dimension.
    pub fn build(codes: &[&Code], params: GraphParams) -> Graph {
        let dim = codes.first().map_or(0, |c| c.dim());
        let points: Vec<i8> = codes.iter().flat_map(|c| point(c)).collect();
        Self::build_from_points(&points, dim, params, &AtomicBool::new(false))
            .expect("a build that is never cancelled ends with a graph")
    }

    /// A graph over `points`, laid out as a generation's codes file holds them (`4 +
    /// dim` values a point: the scale's bytes, then the codes; point id = position), so
    /// that a rebuild inserts straight from the mapped file: hnsw_rs copies each point
    /// it is given, and a copy of them all made first would double the vectors a build
    /// holds. Given up (`None`) once `cancel` is set: the points go in by
    /// [`BUILD_CHUNK`], and the flag is read between chunks, so that a writer stopping
    /// mid-build (a `watch` told to stop at a million files) waits seconds, not the build.
    pub fn build_from_points(
        points: &[i8],
        dim: usize,
        params: GraphParams,
        cancel: &AtomicBool,
    ) -> Option<Graph> {
        let stride = 4 + dim;
        let n = points.len() / stride;
        let hnsw = Hnsw::<i8, CodeCosine>::new(
            params.m.clamp(2, 255),
            n.max(1),
            MAX_LAYER,
            params.ef_construction.max(params.m),
            CodeCosine,
        );
        for start in (0..n).step_by(BUILD_CHUNK) {
            if cancel.load(Ordering::Relaxed) {
                return None;
            }
            let chunk: Vec<(&[i8], usize)> = (start..n.min(start + BUILD_CHUNK))
                .map(|id| (&points[id * stride..(id + 1) * stride], id))
                .collect();
            hnsw.parallel_insert_slice(&chunk);
        }
        Some(Graph {
            inner: Inner::Built(Box::new(hnsw)),
            points: n,
            dim,
        })
    }

    /// Points in the graph.
    pub fn len(&self) -> usize {
        self.points
    }

    /// Whether the graph has no point.
    pub fn is_empty(&self) -> bool {
        self.points == 0
    }

    /// Vector dimension.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// About the `k` points nearest the unit vector `q`, searching `ef` candidates:
    /// (point id, similarity), best first. Empty when `q` has another dimension.
    ///
    /// The graph is walked with `q`'s code; every candidate the walk ends with (`ef` of
    /// them, not only the `k` nearest by code) is then rescored with `q` itself and the
    /// best `k` kept, so only each point's own rounding remains in the order: codes
    /// reorder neighbours a few thousandths apart, and keeping only hnsw_rs's `k` lost a
    /// twentieth of the true top 10 on the varied set.
    pub fn search(&self, q: &[f32], k: usize, ef: usize) -> Vec<(usize, f32)> {
        if q.len() != self.dim || k == 0 || self.points == 0 {
            return Vec::new();
        }
        let ef = ef.max(k);
        let code = point(&Code::new(q));
        let rescore = |h: &Hnsw<'_, i8, CodeCosine>| -> Vec<(usize, f32)> {
            h.search(&code, ef, ef)
                .into_iter()
                .map(|n| {
                    let sim = match h.get_point_indexation().get_point_data(&n.p_id) {
                        Some(p) => point_dot(q, &p),
                        None => 1.0 - n.distance,
                    };
                    (n.d_id, sim)
                })
                .collect()
        };
        let found = match &self.inner {
            Inner::Built(h) => rescore(h),
            Inner::Reloaded(r) => r.with_dependent(|_, h| rescore(h)),
        };
        super::dist::best(found, k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::ann::dist::normalized;

    /// Deterministic pseudo-random unit-ish vectors.
    pub(crate) fn vectors(n: usize, dim: usize, seed: u64) -> Vec<Vec<f32>> {
        let mut rng = fastrand::Rng::with_seed(seed);
        (0..n)
            .map(|_| (0..dim).map(|_| rng.f32() - 0.5).collect())
            .collect()
    }

    pub(super) const PARAMS: GraphParams = GraphParams {
        m: 8,
        ef_construction: 32,
    };

    pub(super) fn codes(v: &[Vec<f32>]) -> Vec<Code> {
        v.iter().map(|v| Code::new(v)).collect()
    }

    pub(super) fn refs(v: &[Code]) -> Vec<&Code> {
        v.iter().collect()
    }

    #[test]
    fn identical_and_zero_vectors_build_and_search_without_panicking() {
        let mut v = vec![vec![0.25f32; 16]; 40];
        v.extend(vec![vec![0.0f32; 16]; 10]);
        v.extend(vectors(50, 16, 1));
        let g = Graph::build(&refs(&codes(&v)), PARAMS);
        assert_eq!(g.len(), 100);
        let hits = g.search(&normalized(&[0.25; 16]), 5, 32);
        assert_eq!(hits.len(), 5);
        for (id, sim) in &hits {
            assert!(*id < 40, "{hits:?}");
            assert!((sim - 1.0).abs() < 1e-5, "{hits:?}");
        }
        // A zero query is similar to nothing, but still answers.
        assert_eq!(g.search(&[0.0; 16], 3, 16).len(), 3);
        assert!(g.search(&[1.0; 3], 3, 16).is_empty());
    }

    #[test]
    fn found_points_are_rescored_against_the_query_itself() {
        let v = vectors(200, 32, 5);
        let c = codes(&v);
        let g = Graph::build(&refs(&c), PARAMS);
        for q in vectors(5, 32, 77) {
            let q = normalized(&q);
            let found = g.search(&q, 20, 200);
            assert_eq!(found.len(), 20);
            for (id, sim) in &found {
                assert!(
                    (sim - c[*id].dot(&q)).abs() < 1e-5,
                    "{id}: {sim} vs {}",
                    c[*id].dot(&q)
                );
            }
            assert!(found.windows(2).all(|w| w[0].1 >= w[1].1), "best first");
        }
    }
}
