//! [`VectorIndex`]: the nearest files to a query vector, from the graph (minus its
//! tombstones, plus the delta) or by exact search.

use super::dist::{self, Flat};
use super::graph::{self, Graph};
use super::{common_dim, exact_below, GraphMeta, VectorMeta, EF_SEARCH};
use crate::catalog::CatalogReader;
use crate::compact::Code;
use crate::error::Result;
use std::path::Path;
use std::sync::Arc;

/// The graph and the files its points stand for.
struct Members {
    /// Shared, so that a reopened index whose generation is unchanged keeps it.
    graph: Arc<Graph>,
    /// The generation it was read from.
    generation: u64,
    /// Member range of point `i`: `start[i]..start[i + 1]` (the catalog lists members
    /// by point id).
    start: Vec<usize>,
    /// (path, still as the graph holds it).
    files: Vec<(String, bool)>,
    /// Members that are tombstones.
    tombstones: usize,
}

/// Where the nearest vectors come from.
enum Backing {
    /// Every live vector, scored exhaustively.
    Exact { paths: Vec<String>, flat: Flat },
    /// The graph minus its tombstones, plus the delta scored exhaustively.
    Graph {
        members: Box<Members>,
        delta_paths: Vec<String>,
        delta: Flat,
    },
}

/// Nearest-neighbour search over the description vectors of one index.
pub struct VectorIndex {
    backing: Backing,
    ef: usize,
}

impl std::fmt::Debug for VectorIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VectorIndex")
            .field("kind", &self.kind())
            .field("len", &self.len())
            .finish()
    }
}

/// Exact search over `rows` (path, code): rows of dimension `dim` kept.
fn flat_of(rows: Vec<(String, Code)>, dim: usize) -> (Vec<String>, Flat) {
    let mut flat = Flat::new(dim);
    let mut paths = Vec::with_capacity(rows.len());
    for (p, v) in rows {
        if flat.push(&v) {
            paths.push(p);
        }
    }
    (paths, flat)
}

impl VectorIndex {
    /// Open the vectors of the index at `dir` made by `embedder`: the graph when the
    /// index has enough live vectors and a sound graph of this embedder, else exact.
    pub fn open(cat: &CatalogReader, dir: &Path, embedder: &str) -> Result<VectorIndex> {
        Self::open_with(cat, dir, embedder, exact_below())
    }

    /// [`VectorIndex::open`] with the exact-search threshold given.
    pub fn open_with(
        cat: &CatalogReader,
        dir: &Path,
        embedder: &str,
        threshold: u64,
    ) -> Result<VectorIndex> {
        Self::open_reusing(cat, dir, embedder, threshold, None)
    }

    /// [`VectorIndex::open`] again after the index changed, for a long-lived searcher:
    /// the graph already loaded is kept when the index still uses its generation (only
    /// the member list, tombstones and delta are read again), which makes the reopen of
    /// a 100k-file index cost a catalog read instead of a graph load.
    pub fn reopen(&self, cat: &CatalogReader, dir: &Path, embedder: &str) -> Result<VectorIndex> {
        self.reopen_with(cat, dir, embedder, exact_below())
    }

    /// [`VectorIndex::reopen`] with the exact-search threshold given.
    pub fn reopen_with(
        &self,
        cat: &CatalogReader,
        dir: &Path,
        embedder: &str,
        threshold: u64,
    ) -> Result<VectorIndex> {
        let loaded = match &self.backing {
            Backing::Graph { members, .. } => Some((members.generation, members.graph.clone())),
            Backing::Exact { .. } => None,
        };
        Self::open_reusing(cat, dir, embedder, threshold, loaded)
    }

    fn open_reusing(
        cat: &CatalogReader,
        dir: &Path,
        embedder: &str,
        threshold: u64,
        loaded: Option<(u64, Arc<Graph>)>,
    ) -> Result<VectorIndex> {
        cat.read_snapshot(|cat| {
            let meta = VectorMeta::load(cat)?;
            if let Some(g) = meta.graph.filter(|g| g.embedder == embedder) {
                let reuse = loaded.filter(|(generation, _)| *generation == g.generation);
                match Self::open_graph(cat, dir, &g, threshold, reuse.map(|(_, graph)| graph))? {
                    Ok(Some(v)) => return Ok(v),
                    Ok(None) => {}
                    Err(why) => tracing::warn!(
                        generation = g.generation,
                        "vector graph not used ({why}); searching exactly, the next `lakestar index` rebuilds it"
                    ),
                }
            }
            Self::open_exact(cat, embedder)
        })
    }

    /// Exact search over every stored vector by `embedder`.
    pub fn open_exact(cat: &CatalogReader, embedder: &str) -> Result<VectorIndex> {
        let rows = cat.file_vectors(embedder)?;
        let dim = common_dim(rows.iter().map(|(_, v)| v.dim()));
        let (paths, flat) = flat_of(rows, dim);
        Ok(VectorIndex {
            backing: Backing::Exact { paths, flat },
            ef: EF_SEARCH,
        })
    }

    /// The graph path: Ok(None) when the index is small enough for exact search,
    /// Err(why) when the graph cannot be used.
    fn open_graph(
        cat: &CatalogReader,
        dir: &Path,
        g: &GraphMeta,
        threshold: u64,
        loaded: Option<Arc<Graph>>,
    ) -> Result<std::result::Result<Option<VectorIndex>, String>> {
        let listed = cat.graph_members()?;
        let tombstones = listed.iter().filter(|m| !m.live).count();
        let delta_rows = cat.graph_delta(&g.embedder)?;
        let live = (listed.len() - tombstones + delta_rows.len()) as u64;
        if live < threshold || live == 0 {
            return Ok(Ok(None));
        }
        let points = g.points as usize;
        if listed.len() as u64 != g.files || listed.iter().any(|m| m.id >= g.points) {
            return Ok(Err(format!(
                "the catalog lists {} files over {} points, the graph was built over {} and {}",
                listed.len(),
                listed.iter().map(|m| m.id + 1).max().unwrap_or(0),
                g.files,
                g.points
            )));
        }
        let graph = match loaded {
            Some(graph) => graph,
            None => match graph::open_generation(dir, g.generation, &g.embedder, points) {
                Ok(graph) => Arc::new(graph),
                Err(why) => return Ok(Err(why)),
            },
        };
        // Members come ordered by point id: count per point, then prefix sums.
        let mut start = vec![0usize; points + 1];
        for m in &listed {
            start[m.id as usize + 1] += 1;
        }
        for i in 0..points {
            start[i + 1] += start[i];
        }
        let files = listed.into_iter().map(|m| (m.path, m.live)).collect();
        let (delta_paths, delta) = flat_of(delta_rows, graph.dim());
        Ok(Ok(Some(VectorIndex {
            backing: Backing::Graph {
                members: Box::new(Members {
                    graph,
                    generation: g.generation,
                    start,
                    files,
                    tombstones,
                }),
                delta_paths,
                delta,
            },
            ef: EF_SEARCH,
        })))
    }

    /// Whether `self` and `other` search the same loaded graph (not a copy).
    pub fn shares_graph_with(&self, other: &VectorIndex) -> bool {
        match (&self.backing, &other.backing) {
            (Backing::Graph { members: a, .. }, Backing::Graph { members: b, .. }) => {
                Arc::ptr_eq(&a.graph, &b.graph)
            }
            _ => false,
        }
    }

    /// `hnsw` or `exact`.
    pub fn kind(&self) -> &'static str {
        match self.backing {
            Backing::Exact { .. } => "exact",
            Backing::Graph { .. } => "hnsw",
        }
    }

    /// Live vectors searched (one per file).
    pub fn len(&self) -> usize {
        match &self.backing {
            Backing::Exact { flat, .. } => flat.len(),
            Backing::Graph { members, delta, .. } => {
                members.files.len() - members.tombstones + delta.len()
            }
        }
    }

    /// Whether nothing is searched.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Set the graph's search breadth (candidates examined; at least the results asked
    /// for). No effect on exact search.
    pub fn set_ef(&mut self, ef: usize) {
        self.ef = ef.max(1);
    }

    /// The `n` files whose vectors are nearest `query`: (path, cosine similarity), best
    /// first, ties by path. Exact search and the graph answer in the same shape; the
    /// graph's answer is approximate and never holds a tombstone.
    pub fn nearest(&self, query: &[f32], n: usize) -> Vec<(String, f32)> {
        let q = dist::normalized(query);
        let mut out: Vec<(&str, f32)> = match &self.backing {
            Backing::Exact { paths, flat } => flat
                .top(&q, n)
                .into_iter()
                .map(|(i, s)| (paths[i].as_str(), s))
                .collect(),
            Backing::Graph {
                members,
                delta_paths,
                delta,
            } => {
                let mut found = members.nearest(&q, n, self.ef);
                found.extend(
                    delta
                        .top(&q, n)
                        .into_iter()
                        .map(|(i, s)| (delta_paths[i].as_str(), s)),
                );
                found
            }
        };
        out.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
        out.truncate(n);
        out.into_iter().map(|(p, s)| (p.to_string(), s)).collect()
    }
}

impl Members {
    /// At least `n` live files of the graph's nearest points (fewer only when the graph
    /// holds fewer). Tombstones take places in hnsw_rs's answer, so it is asked for
    /// enough more points to make up for their share, and again for twice as many until
    /// `n` live files are found or the whole graph has been asked for.
    fn nearest(&self, q: &[f32], n: usize, ef: usize) -> Vec<(&str, f32)> {
        let total = self.graph.len();
        let want = n.min(self.files.len() - self.tombstones);
        if want == 0 {
            return Vec::new();
        }
        let share = self.tombstones as f64 / self.files.len() as f64;
        let mut k = ((n as f64 / (1.0 - share).max(0.05)).ceil() as usize + 8).min(total);
        loop {
            let mut found = Vec::new();
            for (id, sim) in self.graph.search(q, k, ef.max(k)) {
                let (Some(&a), Some(&b)) = (self.start.get(id), self.start.get(id + 1)) else {
                    continue;
                };
                found.extend(
                    self.files[a..b]
                        .iter()
                        .filter(|f| f.1)
                        .map(|f| (f.0.as_str(), sim)),
                );
            }
            if found.len() >= want || k >= total {
                return found;
            }
            k = (k * 2).min(total);
        }
    }
}
