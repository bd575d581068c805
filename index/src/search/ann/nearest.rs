//! [`VectorIndex`]: the nearest files to a query vector, from the current generation's
//! points (minus its tombstones, plus the delta) or by exact search over the catalog.
//!
//! Opening reads only what changed since the generation was swapped in (its tombstones
//! and the delta, among the catalog's stale paths); the points a search finds are
//! resolved to their files afterwards from the generation's members (mapped), so that
//! opening costs the same at a thousand files as at a million.

use super::dist::{self, Flat, MappedCodes};
use super::graph::{self, Graph};
use super::held::{self, Check};
use super::members::Members;
use super::stale;
use super::{common_dim, exact_below, scan_up_to, GraphMeta, VectorMeta, EF_SEARCH};
use crate::catalog::CatalogReader;
use crate::compact::Code;
use crate::error::Result;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// How a generation's points are searched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// Every point scored from the generation's mapped codes: exact, and nothing to
    /// load, which is what a process that searches once or a few times wants (loading
    /// the graph is most of a `lakestar search` at 100k files).
    #[default]
    Scan,
    /// The HNSW graph, loaded: a long-lived process pays the load once and then
    /// searches in a few milliseconds.
    Graph,
    /// A long-lived process: [`Mode::Scan`] up to `scan_up_to` bytes of codes
    /// ([`super::SCAN_UP_TO`]), where the exact scan is as fast as the graph at the
    /// breadth recall needs and maps a third of the memory the graph loads;
    /// [`Mode::Graph`] above, where the generation has a graph (a writer that builds
    /// graphs builds one there: [`super::graph_above`]); codes alone are scanned.
    Resident {
        /// Bytes of codes scanned at most.
        scan_up_to: u64,
    },
}

/// Where a generation's nearest points come from.
enum Points {
    Scan(MappedCodes),
    /// Shared, so that a reopened index whose generation is unchanged keeps it.
    Graph(Arc<Graph>),
}

/// The current generation, as of the index's opening.
struct Generation {
    points: Points,
    /// Its number: members are resolved only while the catalog still names it.
    number: u64,
    embedder: String,
    /// Files it stands for.
    files: usize,
    /// Members that were tombstones when the index was opened.
    tombstones: HashSet<String>,
    /// The files of its points.
    members: Members,
    /// The index directory: where exact search reads the points of the generation
    /// that replaced this one.
    dir: PathBuf,
}

/// Where the nearest vectors come from.
enum Backing {
    /// Every live vector, read from the catalog and scored exhaustively.
    Exact { paths: Vec<String>, flat: Flat },
    /// The generation minus its tombstones, plus the delta scored exhaustively.
    Generation {
        generation: Box<Generation>,
        delta_paths: Vec<String>,
        delta: Flat,
    },
}

/// Nearest-neighbour search over the description vectors of one index.
pub struct VectorIndex {
    backing: Backing,
    ef: usize,
    mode: Mode,
}

impl std::fmt::Debug for VectorIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VectorIndex")
            .field("kind", &self.kind())
            .field("len", &self.len())
            .finish()
    }
}

/// Say once per generation that a long-lived process scans codes it would rather walk
/// a graph over: the graph is built only where asked for (`update::GraphBuild`), and a
/// server's user should know which command gives it.
fn hint_graph_missing(generation: u64, bytes: usize) {
    static HINTED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    if HINTED.swap(generation, std::sync::atomic::Ordering::Relaxed) != generation {
        tracing::warn!(
            generation,
            codes_mb = bytes >> 20,
            "every vector query scans this generation's codes, which holds no graph; `lakestar index --graph`, `watch` or `serve --watch` builds the graph that answers faster"
        );
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
    /// Open the vectors of the index at `dir` made by `embedder` for a few searches:
    /// the current generation's codes, scanned, when the index has enough live vectors
    /// and a sound generation of this embedder, else exact search over the catalog.
    pub fn open(cat: &CatalogReader, dir: &Path, embedder: &str) -> Result<VectorIndex> {
        Self::open_with(cat, dir, embedder, exact_below(), Mode::Scan)
    }

    /// [`VectorIndex::open`] for a long-lived process ([`Mode::Resident`]): the graph
    /// loaded once, for generations too large to scan.
    pub fn open_resident(cat: &CatalogReader, dir: &Path, embedder: &str) -> Result<VectorIndex> {
        Self::open_with(
            cat,
            dir,
            embedder,
            exact_below(),
            Mode::Resident {
                scan_up_to: scan_up_to(),
            },
        )
    }

    /// [`VectorIndex::open`] with the exact-search threshold and the mode given.
    pub fn open_with(
        cat: &CatalogReader,
        dir: &Path,
        embedder: &str,
        threshold: u64,
        mode: Mode,
    ) -> Result<VectorIndex> {
        Self::open_reusing(cat, dir, embedder, threshold, mode, None)
    }

    /// [`VectorIndex::open`] again after the index changed, in the same mode: a graph
    /// already loaded is kept when the index still uses its generation (only the
    /// tombstones and delta are read again), which makes the reopen of a 100k-file
    /// index cost a few catalog reads instead of a graph load.
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
            Backing::Generation { generation, .. } => match &generation.points {
                Points::Graph(g) => Some((generation.number, g.clone())),
                Points::Scan(_) => None,
            },
            Backing::Exact { .. } => None,
        };
        Self::open_reusing(cat, dir, embedder, threshold, self.mode, loaded)
    }

    fn open_reusing(
        cat: &CatalogReader,
        dir: &Path,
        embedder: &str,
        threshold: u64,
        mode: Mode,
        loaded: Option<(u64, Arc<Graph>)>,
    ) -> Result<VectorIndex> {
        // A generation that a writer replaces between this snapshot and the opening of
        // its files is gone, and with it the vectors the snapshot's rows left to it: a
        // second snapshot names its successor.
        let mut retried = false;
        loop {
            let opened = cat.read_snapshot(|cat| {
                let meta = VectorMeta::load(cat)?;
                if let Some(g) = meta.graph.filter(|g| g.embedder == embedder) {
                    let reuse = loaded
                        .clone()
                        .filter(|(generation, _)| *generation == g.generation);
                    let opened = Self::open_generation(
                        cat,
                        dir,
                        &g,
                        threshold,
                        mode,
                        reuse.map(|(_, graph)| graph),
                    )?;
                    match opened {
                        Ok(Some(v)) => return Ok(Some(v)),
                        Ok(None) => {}
                        Err(_) if !retried && !graph::looks_complete(dir, g.generation, embedder) => {
                            return Ok(None)
                        }
                        Err(why) => tracing::warn!(
                            generation = g.generation,
                            "vector graph not used ({why}); searching exactly, the next `lakestar index` rebuilds it"
                        ),
                    }
                }
                let mut v = Self::open_exact_in(cat, dir, embedder)?;
                v.mode = mode;
                Ok(Some(v))
            })?;
            match opened {
                Some(v) => return Ok(v),
                None => retried = true,
            }
        }
    }

    /// Exact search over every stored vector by `embedder` (the points the catalog left
    /// to the generation read from its codes).
    pub fn open_exact(cat: &CatalogReader, dir: &Path, embedder: &str) -> Result<VectorIndex> {
        cat.read_snapshot(|cat| Self::open_exact_in(cat, dir, embedder))
    }

    /// [`VectorIndex::open_exact`] inside a snapshot already begun.
    fn open_exact_in(cat: &CatalogReader, dir: &Path, embedder: &str) -> Result<VectorIndex> {
        let rows = cat.file_vectors(embedder)?;
        let (rows, unread) = held::resolve_rows(cat, dir, embedder, rows, Check::Sizes)?;
        if unread > 0 {
            tracing::warn!(
                unread,
                "files without their vector until the next `lakestar index` embeds them again"
            );
        }
        let dim = common_dim(rows.iter().map(|(_, v)| v.dim()));
        let (paths, flat) = flat_of(rows, dim);
        Ok(VectorIndex {
            backing: Backing::Exact { paths, flat },
            ef: EF_SEARCH,
            mode: Mode::Scan,
        })
    }

    /// The generation path: Ok(None) when the index is small enough for exact search,
    /// Err(why) when the generation cannot be used.
    fn open_generation(
        cat: &CatalogReader,
        dir: &Path,
        g: &GraphMeta,
        threshold: u64,
        mode: Mode,
        loaded: Option<Arc<Graph>>,
    ) -> Result<std::result::Result<Option<VectorIndex>, String>> {
        let members = match graph::open_members(dir, g.generation, &g.embedder, g.points as usize) {
            Ok(m) => m,
            Err(why) => return Ok(Err(why)),
        };
        let stale = match stale::staleness(cat, &g.embedder, &members)? {
            Ok(s) => s,
            Err(why) => return Ok(Err(why)),
        };
        let tombstones: HashSet<String> = stale.tombstones.into_iter().collect();
        let delta_rows = stale.delta;
        let files = g.files as usize;
        let live = (files.saturating_sub(tombstones.len()) + delta_rows.len()) as u64;
        if live < threshold || live == 0 {
            return Ok(Ok(None));
        }
        let points = g.points as usize;
        // The codes are mapped (a few milliseconds) unless the graph is asked for: a
        // resident index scans them when they are small enough. A generation of codes
        // alone (built where no process would load its graph) is scanned in every mode.
        let codes_only = mode != Mode::Scan && !graph::has_graph(dir, g.generation);
        let codes = match mode {
            Mode::Graph if !codes_only => None,
            _ => match graph::open_codes(dir, g.generation, &g.embedder, points) {
                Ok(codes) => Some(codes),
                Err(why) => return Ok(Err(why)),
            },
        };
        let codes = codes.filter(|c| match mode {
            Mode::Resident { scan_up_to } => {
                if codes_only && c.bytes() as u64 > scan_up_to {
                    hint_graph_missing(g.generation, c.bytes());
                }
                codes_only || c.bytes() as u64 <= scan_up_to
            }
            _ => true,
        });
        let (points, dim) = match (codes, loaded) {
            (Some(codes), _) => {
                let dim = codes.dim();
                (Points::Scan(codes), dim)
            }
            (None, Some(graph)) => {
                let dim = graph.dim();
                (Points::Graph(graph), dim)
            }
            (None, None) => match graph::open_generation(dir, g.generation, &g.embedder, points) {
                Ok(graph) => {
                    let dim = graph.dim();
                    (Points::Graph(Arc::new(graph)), dim)
                }
                Err(why) => return Ok(Err(why)),
            },
        };
        // The delta's rows may hold points of this generation (a renamed or copied
        // file): read from its codes, mapped here if the graph was loaded instead.
        let delta_rows = match &points {
            Points::Scan(codes) => held::resolve(delta_rows, Some(codes)).0,
            Points::Graph(_) => {
                held::resolve_rows(cat, dir, &g.embedder, delta_rows, Check::Sizes)?.0
            }
        };
        let (delta_paths, delta) = flat_of(delta_rows, dim);
        Ok(Ok(Some(VectorIndex {
            backing: Backing::Generation {
                generation: Box::new(Generation {
                    points,
                    number: g.generation,
                    embedder: g.embedder.clone(),
                    files,
                    tombstones,
                    members,
                    dir: dir.to_path_buf(),
                }),
                delta_paths,
                delta,
            },
            ef: EF_SEARCH,
            mode,
        })))
    }

    /// Whether `self` and `other` search the same loaded graph (not a copy).
    pub fn shares_graph_with(&self, other: &VectorIndex) -> bool {
        match (&self.backing, &other.backing) {
            (
                Backing::Generation { generation: a, .. },
                Backing::Generation { generation: b, .. },
            ) => match (&a.points, &b.points) {
                (Points::Graph(a), Points::Graph(b)) => Arc::ptr_eq(a, b),
                _ => false,
            },
            _ => false,
        }
    }

    /// `hnsw` (the graph), `codes` (the generation's codes, scanned) or `exact` (every
    /// vector, read from the catalog).
    pub fn kind(&self) -> &'static str {
        match &self.backing {
            Backing::Exact { .. } => "exact",
            Backing::Generation { generation, .. } => match generation.points {
                Points::Graph(_) => "hnsw",
                Points::Scan(_) => "codes",
            },
        }
    }

    /// Live vectors searched (one per file).
    pub fn len(&self) -> usize {
        match &self.backing {
            Backing::Exact { flat, .. } => flat.len(),
            Backing::Generation {
                generation, delta, ..
            } => generation.live() + delta.len(),
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
    /// first, ties by path. Every backing answers in the same shape; the graph's answer
    /// is approximate and none holds a tombstone. The points found are resolved to
    /// their files in `cat`, which must be the catalog the index was opened from; if a
    /// new generation has been swapped in since, the search is exact over the catalog.
    pub fn nearest(
        &self,
        cat: &CatalogReader,
        query: &[f32],
        n: usize,
    ) -> Result<Vec<(String, f32)>> {
        let q = dist::normalized(query);
        let mut out: Vec<(String, f32)> = match &self.backing {
            Backing::Exact { paths, flat } => flat
                .top(&q, n)
                .into_iter()
                .map(|(i, s)| (paths[i].clone(), s))
                .collect(),
            Backing::Generation {
                generation,
                delta_paths,
                delta,
            } => {
                let Some(mut found) = generation.nearest(cat, &q, n, self.ef)? else {
                    return Self::open_exact(cat, &generation.dir, &generation.embedder)?
                        .nearest(cat, query, n);
                };
                found.extend(
                    delta
                        .top(&q, n)
                        .into_iter()
                        .map(|(i, s)| (delta_paths[i].clone(), s)),
                );
                found
            }
        };
        out.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        out.truncate(n);
        Ok(out)
    }
}

impl Generation {
    /// Files it stands for that were live at opening.
    fn live(&self) -> usize {
        self.files.saturating_sub(self.tombstones.len())
    }

    /// At least `n` live files of the nearest points (fewer only when the generation
    /// holds fewer), or None when the catalog no longer names this generation or its
    /// members cannot be read (the caller then searches exactly).
    /// Tombstones take places among the points, so enough more points are taken to make
    /// up for their share, and twice as many again until `n` live files are found or
    /// every point has been taken.
    fn nearest(
        &self,
        cat: &CatalogReader,
        q: &[f32],
        n: usize,
        ef: usize,
    ) -> Result<Option<Vec<(String, f32)>>> {
        let want = n.min(self.live());
        if want == 0 {
            return Ok(Some(Vec::new()));
        }
        let total = match &self.points {
            Points::Scan(codes) => codes.len(),
            Points::Graph(graph) => graph.len(),
        };
        let share = self.tombstones.len() as f64 / self.files.max(1) as f64;
        let mut k = ((n as f64 / (1.0 - share).max(0.05)).ceil() as usize + 8).min(total);
        let scan = match &self.points {
            Points::Scan(codes) => Some(codes.scan(q, k)),
            Points::Graph(_) => None,
        };
        cat.read_snapshot(|cat| {
            let current = VectorMeta::load(cat)?.graph.map(|g| g.generation);
            if current != Some(self.number) {
                return Ok(None);
            }
            loop {
                let top = match (&scan, &self.points) {
                    (Some(scan), _) => scan.top(k),
                    (None, Points::Graph(graph)) => graph.search(q, k, ef.max(k)),
                    (None, Points::Scan(_)) => Vec::new(),
                };
                let ids: Vec<u64> = top.iter().map(|&(id, _)| id as u64).collect();
                let mut files = match self.members.paths_of(&ids) {
                    Ok(files) => files,
                    // Damage the opening's checks did not see: searched exactly instead.
                    Err(e) => {
                        tracing::warn!(error = %e, "the vector generation's members are unreadable");
                        return Ok(None);
                    }
                };
                let mut found = Vec::new();
                for (id, sim) in top {
                    for path in files.remove(&(id as u64)).unwrap_or_default() {
                        if !self.tombstones.contains(&path) {
                            found.push((path, sim));
                        }
                    }
                }
                if found.len() >= want || k >= total {
                    return Ok(Some(found));
                }
                k = (k * 2).min(total);
            }
        })
    }
}
