//! Keeping the vector graph in step with the catalog (the writer's side).
//!
//! Counting tombstones and the delta exactly is a join over every file (a third of a
//! second at 100k files), too much for every run that changes one file. The meta keeps
//! upper bounds instead: a changed path adds at most one tombstone (its old vector), one
//! delta vector (its new one) and one live vector, so a sync of `n` changed paths raises
//! each bound by `n`, and only a bound that reaches its limit costs an exact count.
//!
//! A rebuild has three steps: [`refresh_as`] decides and reads every file's vector in
//! one snapshot ([`GraphJob`]); [`GraphJob::build`] builds and writes the generation,
//! without the catalog; [`swap`] puts it in the catalog in one transaction, with the
//! files changed since the snapshot stale from then on. `lakestar index` runs them in a
//! row after its commits, with codes alone ([`GraphBuild::CodesOnly`]; with `--graph`,
//! [`GraphBuild::Inline`]); `watch` and `serve --watch` run the build, graph included,
//! on a thread of their own and keep indexing meanwhile ([`GraphBuild::Deferred`]).

use super::graph::{self, GraphParams, Shape};
use super::held::{self, Check};
use super::spill::Spill;
use super::stale;
use super::{exact_below, graph_above, GraphMeta, VectorMeta, REBUILD_FRACTION};
use crate::catalog::{CatalogWriter, Handover, KeyedVector, MetaKey};
use crate::compact::Code;
use crate::error::{Error, Result};
use std::cell::OnceCell;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use stream::{spill_rows, write_spilled, SpilledMembers};

mod stream;

/// What a refresh did to the graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refreshed {
    /// Nothing to rebuild: the graph (or exact search) stands.
    Kept,
    /// A new generation was built and swapped in.
    Built {
        /// Its number.
        generation: u64,
        /// The files it stands for.
        files: u64,
    },
    /// The index is too small for a graph: exact search, no graph kept.
    Exact,
}

/// Record that the vectors are about to change, so that a crash before the refresh
/// finishes is caught up by the next run. Returns whether the recorded bounds can be
/// trusted (the last refresh finished), i.e. whether [`after_sync`] may count changes
/// instead of files.
pub fn begin(cat: &CatalogWriter) -> Result<bool> {
    let mut meta = VectorMeta::load(cat)?;
    let trusted = meta.fresh;
    if meta.fresh {
        meta.fresh = false;
        cat.set_meta(MetaKey::VectorIndex, &meta.to_json())?;
    }
    Ok(trusted)
}

/// How a refresh that has to rebuild the generation does it, and whether the HNSW graph
/// is part of it.
///
/// Only a long-lived process ever walks the graph (one-off searches scan the codes:
/// [`super::nearest::Mode`]), and only it can afford what hnsw_rs needs to build one: the
/// whole graph in memory, growing with the lake. So a one-off `lakestar index` writes
/// the codes alone at any size, in bounded memory, and the graph is built where it is
/// used: by `watch` and `serve --watch`, apart from their writes, or by `index --graph`
/// for a user who wants it ready before a server starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GraphBuild {
    /// Codes alone, built and swapped in now, never a graph (`lakestar index`). A graph
    /// a long-lived process built stays as long as its generation does: it is of the
    /// shape that process wants, and dropping it would cost that process a rebuild.
    #[default]
    CodesOnly,
    /// Build and swap it in now, with the graph above [`super::graph_above`]
    /// (`lakestar index --graph`; the catalog, text and vectors are committed before, so
    /// the index is searchable, exactly, while the graph builds).
    Inline,
    /// Hand the build to the caller as a [`GraphJob`], to run off the writer's path and
    /// swap in with [`swap`], with the graph above [`super::graph_above`] (`watch`,
    /// `serve --watch`: the lake's changes keep being indexed meanwhile). `in_flight`:
    /// the generation a build under way will become; no second build starts, and its
    /// directory is spared.
    Deferred {
        /// The generation under construction, if any.
        in_flight: Option<u64>,
    },
}

impl GraphBuild {
    /// Whether a rebuild made this way includes the graph (above [`super::graph_above`]).
    fn builds_graphs(self) -> bool {
        !matches!(self, GraphBuild::CodesOnly)
    }
}

/// A refresh's outcome: done, or a graph for the caller to build ([`GraphBuild::Deferred`]).
#[derive(Debug)]
pub enum Refresh {
    /// Nothing left to do.
    Done(Refreshed),
    /// A rebuild is due.
    Build(GraphJob),
}

/// A graph to build: every file's vector, read in one snapshot and spilled to a file
/// ([`Spill`]), and the generation it will become. Building it needs no catalog, so it
/// can run on another thread while the writer goes on; files that change meanwhile are
/// stale from the swap on.
pub struct GraphJob {
    dir: std::path::PathBuf,
    embedder: String,
    generation: u64,
    rows: Spill,
    /// Bytes of codes above which the graph is built too ([`super::graph_above`];
    /// `u64::MAX`, never, for [`GraphBuild::CodesOnly`]).
    graph_above: u64,
    /// Items its external sorts hold in memory ([`super::SORT_RUN`]).
    sort_run: usize,
}

impl std::fmt::Debug for GraphJob {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GraphJob")
            .field("generation", &self.generation)
            .field("files", &self.rows.rows())
            .finish()
    }
}

/// A generation built and on disk, for [`swap`] to put in the catalog.
pub struct BuiltGraph {
    embedder: String,
    generation: u64,
    points: u64,
    params: GraphParams,
    /// The files of the snapshot, in path order; those of the common dimension are
    /// the generation's members (a vector of another dimension is left out).
    rows: Spill,
    /// Rows held.
    files: u64,
}

impl std::fmt::Debug for BuiltGraph {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BuiltGraph")
            .field("generation", &self.generation)
            .field("points", &self.points)
            .field("files", &self.files)
            .finish()
    }
}

/// After a run that changed no vector: refresh only if the last refresh did not finish,
/// the generation's files are missing or damaged (sizes; a cheap check), or the
/// thresholds now ask for a generation where there is none, for none where there is
/// one, or for a graph in a generation of codes alone or the other way round.
pub fn check(cat: &mut CatalogWriter, dir: &Path, embedder: &str) -> Result<Refreshed> {
    check_with(cat, dir, embedder, exact_below())
}

/// [`check`] with the exact-search threshold given.
pub fn check_with(
    cat: &mut CatalogWriter,
    dir: &Path,
    embedder: &str,
    exact_below: u64,
) -> Result<Refreshed> {
    let r = check_as(cat, dir, embedder, exact_below, GraphBuild::Inline)?;
    inline(cat, r)
}

/// [`check`], building as `how` says.
pub fn check_as(
    cat: &mut CatalogWriter,
    dir: &Path,
    embedder: &str,
    exact_below: u64,
    how: GraphBuild,
) -> Result<Refresh> {
    let meta = VectorMeta::load(cat)?;
    let want = meta.live >= exact_below && meta.live > 0;
    let sound = meta
        .graph
        .as_ref()
        .is_some_and(|g| usable(dir, g, embedder, how));
    if meta.fresh && want == sound && (want || meta.graph.is_none()) {
        return Ok(Refresh::Done(if want {
            Refreshed::Kept
        } else {
            Refreshed::Exact
        }));
    }
    refresh_as(cat, dir, embedder, exact_below, None, how)
}

/// After a sync that changed `changed` paths (`None`: unknown — another embedder, or
/// the bounds are not trusted): raise the bounds, and refresh exactly only when one
/// reaches its limit.
pub fn after_sync(
    cat: &mut CatalogWriter,
    dir: &Path,
    embedder: &str,
    changed: Option<u64>,
) -> Result<Refreshed> {
    refresh_with(cat, dir, embedder, exact_below(), changed)
}

/// Bring the graph in step with the catalog's vectors by `embedder`, counting exactly:
/// drop it below the exact-search threshold, rebuild it when it is missing, damaged, of
/// another embedder or has too many tombstones or delta vectors, else keep it.
pub fn refresh(cat: &mut CatalogWriter, dir: &Path, embedder: &str) -> Result<Refreshed> {
    refresh_with(cat, dir, embedder, exact_below(), None)
}

/// [`refresh`] with the exact-search threshold given, and `changed` as in
/// [`after_sync`].
pub fn refresh_with(
    cat: &mut CatalogWriter,
    dir: &Path,
    embedder: &str,
    exact_below: u64,
    changed: Option<u64>,
) -> Result<Refreshed> {
    let r = refresh_as(cat, dir, embedder, exact_below, changed, GraphBuild::Inline)?;
    inline(cat, r)
}

/// Finish a refresh here and now: build and swap in what it asks for.
pub fn inline(cat: &mut CatalogWriter, r: Refresh) -> Result<Refreshed> {
    match r {
        Refresh::Done(r) => Ok(r),
        Refresh::Build(job) => swap(cat, job.build()?),
    }
}

/// [`refresh_with`], building as `how` says.
pub fn refresh_as(
    cat: &mut CatalogWriter,
    dir: &Path,
    embedder: &str,
    exact_below: u64,
    changed: Option<u64>,
    how: GraphBuild,
) -> Result<Refresh> {
    let meta = VectorMeta::load(cat)?;
    let current = meta.graph.clone().filter(|g| usable(dir, g, embedder, how));
    let io = |e| Error::io(dir.join(graph::VECTORS_DIR), e);
    let in_flight = match how {
        GraphBuild::CodesOnly | GraphBuild::Inline => None,
        GraphBuild::Deferred { in_flight } => in_flight,
    };
    let done = |r| Ok(Refresh::Done(r));

    // The bounds alone may prove there is nothing to do.
    if let Some(n) = changed {
        let bounded = VectorMeta {
            live: meta.live + n,
            tombstones: meta.tombstones + n,
            delta: meta.delta + n,
            fresh: true,
            ..meta.clone()
        };
        let settled = match &current {
            Some(g) => {
                let limit = g.files as f64 * REBUILD_FRACTION;
                bounded.tombstones as f64 <= limit && bounded.delta as f64 <= limit
            }
            None => meta.graph.is_none() && bounded.live < exact_below,
        };
        if settled {
            cat.set_meta(MetaKey::VectorIndex, &bounded.to_json())?;
            return done(if current.is_some() {
                Refreshed::Kept
            } else {
                Refreshed::Exact
            });
        }
    }

    let stale = match &current {
        Some(g) => stale::counts(cat, dir, g)?,
        None => None,
    };
    // A generation whose members cannot be read is rebuilt like a damaged one.
    let current = current.filter(|_| stale.is_some());
    let (live, tombstones, delta) = match (&current, stale) {
        (Some(g), Some((tombstones, delta))) => (
            g.files.saturating_sub(tombstones) + delta,
            tombstones,
            delta,
        ),
        _ => (cat.vector_count(embedder)?, 0, 0),
    };

    if live < exact_below || live == 0 {
        let none = VectorMeta {
            live,
            fresh: true,
            ..VectorMeta::default()
        };
        if let Some(g) = &meta.graph {
            // Every vector the generation held goes back to the catalog, whose exact
            // search reads them there.
            let outgoing = outgoing_codes(dir, g);
            let no_members: &[(u64, &KeyedVector)] = &[];
            cat.replace_graph_members(
                no_members,
                MetaKey::VectorIndex,
                &none.to_json(),
                &Handover {
                    outgoing_embedder: Some(&g.embedder),
                    outgoing: &outgoing,
                    incoming_embedder: embedder,
                },
            )?;
        } else {
            cat.set_meta(MetaKey::VectorIndex, &none.to_json())?;
        }
        graph::remove_other_generations(dir, None, in_flight).map_err(io)?;
        return done(Refreshed::Exact);
    }

    let keep = current.as_ref().map(|g| g.generation);
    let counted = VectorMeta {
        live,
        tombstones,
        delta,
        fresh: true,
        ..meta.clone()
    };
    if let Some(g) = &current {
        let limit = g.files as f64 * REBUILD_FRACTION;
        if tombstones as f64 <= limit && delta as f64 <= limit {
            cat.set_meta(MetaKey::VectorIndex, &counted.to_json())?;
            // Leftovers of an interrupted build, if any.
            graph::remove_other_generations(dir, keep, in_flight).map_err(io)?;
            return done(Refreshed::Kept);
        }
    }
    if let GraphBuild::Deferred { in_flight } = how {
        // A rebuild is due and happens apart: the counts stand, and the refresh is not
        // finished until its swap, so that a crash before it is caught up. One already
        // under way covers these files or leaves them stale.
        let pending = VectorMeta {
            fresh: false,
            ..counted.clone()
        };
        cat.set_meta(MetaKey::VectorIndex, &pending.to_json())?;
        if in_flight.is_some() {
            return done(Refreshed::Kept);
        }
    }
    // The generation the catalog names stays until its successor is swapped in, even
    // damaged or of the other shape: the catalog's rows hold points into it
    // (`catalog::held`), read back below and handed over by the swap.
    let named = meta.graph.as_ref().map(|g| g.generation);
    let highest = graph::remove_other_generations(dir, named, None).map_err(io)?;
    let generation = highest.max(named.unwrap_or(0)) + 1;
    let (rows, unread) = spill_rows(cat, dir, embedder, generation)?;
    tracing::debug!(
        rows = rows.rows(),
        unread,
        generation,
        "vector rows spilled"
    );
    if unread > 0 {
        rows.remove();
        // Damaged where no cheap check looks: rather than a generation without them,
        // its points are given up and embedded again (by this sync, or the next run),
        // and the refresh is left unfinished until then.
        let forgotten = cat.forget_held_vectors(embedder)?;
        tracing::warn!(
            unread,
            forgotten,
            "the vector generation does not match its digest; its vectors are embedded again"
        );
        let pending = VectorMeta {
            fresh: false,
            ..counted
        };
        cat.set_meta(MetaKey::VectorIndex, &pending.to_json())?;
        return done(if current.is_some() {
            Refreshed::Kept
        } else {
            Refreshed::Exact
        });
    }
    Ok(Refresh::Build(GraphJob {
        dir: dir.to_path_buf(),
        embedder: embedder.to_string(),
        generation,
        rows,
        graph_above: if how.builds_graphs() {
            graph_above()
        } else {
            u64::MAX
        },
        sort_run: super::SORT_RUN,
    }))
}

/// A point's code in generation `g`, its codes opened (digest checked) at the first
/// call: what a swap hands the outgoing generation's vectors over with. `None` for
/// every point when they cannot be read.
fn outgoing_codes<'a>(dir: &'a Path, g: &'a GraphMeta) -> impl Fn(u64) -> Option<Code> + 'a {
    let codes: OnceCell<Option<super::dist::MappedCodes>> = OnceCell::new();
    move |id| {
        codes
            .get_or_init(|| {
                held::codes_of(dir, g, Check::Digest)
                    .map_err(|why| tracing::warn!(generation = g.generation, "{why}"))
                    .ok()
            })
            .as_ref()?
            .code(usize::try_from(id).ok()?)
    }
}

/// Before a sync: when the codes of the generation the catalog names are lost or
/// visibly damaged (a cheap check: its manifest and the file's size), the vectors the
/// catalog left to it are given up, so that the sync embeds them again. Returns how
/// many. (A damaged graph beside sound codes loses nothing: the rebuild reads them.)
pub fn give_up_lost(cat: &mut CatalogWriter, dir: &Path) -> Result<usize> {
    let Some(g) = VectorMeta::load(cat)?.graph else {
        return Ok(0);
    };
    if graph::open_codes(dir, g.generation, &g.embedder, g.points as usize).is_ok() {
        return Ok(0);
    }
    cat.forget_held_vectors(&g.embedder)
}

/// Whether generation `g` can stay: of this embedder, complete by a cheap check, and of
/// a shape `how` accepts: with a graph exactly above [`graph_above`] for a process that
/// builds graphs; for one that writes codes alone, codes alone or a graph where one is
/// wanted (a generation with a graph below the threshold is rebuilt without it).
fn usable(dir: &Path, g: &GraphMeta, embedder: &str, how: GraphBuild) -> bool {
    let shape = if how.builds_graphs() {
        Shape::GraphExactlyIfWanted
    } else {
        Shape::GraphIfWanted
    };
    g.embedder == embedder
        && graph::looks_complete(dir, g.generation, embedder)
        && graph::has_shape(dir, g.generation, graph_above(), shape)
}

impl GraphJob {
    /// The generation this job writes.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The job with the graph built only above `bytes` of codes (tests ask for codes
    /// alone with `u64::MAX`).
    pub fn with_graph_above(mut self, bytes: u64) -> GraphJob {
        self.graph_above = bytes;
        self
    }

    /// The job with its external sorts holding `items` in memory (tests make them
    /// spill with a few).
    pub fn with_sort_run(mut self, items: usize) -> GraphJob {
        self.sort_run = items.max(1);
        self
    }

    /// Write every distinct vector as its generation's codes (`vectors/gen-N/`, via
    /// `gen-N.tmp/`), with the graph over them when they pass its threshold. Needs no
    /// catalog.
    pub fn build(self) -> Result<BuiltGraph> {
        Ok(self
            .build_unless(&AtomicBool::new(false))?
            .expect("a build that is never cancelled ends with a graph"))
    }

    /// [`GraphJob::build`], given up (`Ok(None)`, nothing written) once `cancel` is set
    /// ([`Graph::build_from_points`]).
    pub fn build_unless(self, cancel: &AtomicBool) -> Result<Option<BuiltGraph>> {
        let GraphJob {
            dir,
            embedder,
            generation,
            rows,
            graph_above,
            sort_run,
        } = self;
        let built = write_spilled(
            &dir,
            &embedder,
            generation,
            &rows,
            graph_above,
            sort_run,
            cancel,
        );
        tracing::debug!(generation, ok = built.is_ok(), "vector generation written");
        match built {
            Ok(Some((points, params, files))) => Ok(Some(BuiltGraph {
                embedder,
                generation,
                points,
                params,
                rows,
                files,
            })),
            Ok(None) => {
                rows.remove();
                Ok(None)
            }
            Err(e) => {
                rows.remove();
                Err(e)
            }
        }
    }
}

/// Put a built generation in the catalog (stale paths and meta, one transaction),
/// count what changed since its snapshot, and remove the older generation. A build the
/// catalog has moved past (another embedder since, or a newer generation) is removed
/// instead, and the graph left as it is.
pub fn swap(cat: &mut CatalogWriter, built: BuiltGraph) -> Result<Refreshed> {
    let dir = cat.dir().to_path_buf();
    let io = |e| Error::io(dir.join(graph::VECTORS_DIR), e);
    let meta = VectorMeta::load(cat)?;
    let embedder = cat.meta(MetaKey::Embedder)?;
    let superseded = embedder.as_deref().is_some_and(|e| e != built.embedder)
        || meta
            .graph
            .as_ref()
            .is_some_and(|g| g.generation >= built.generation);
    if superseded {
        let keep = meta.graph.as_ref().map(|g| g.generation);
        graph::remove_other_generations(&dir, keep, None).map_err(io)?;
        return Ok(Refreshed::Kept);
    }
    crate::failpoint::pause_at("graph-swap", &dir);
    let files = built.files;
    let graph = GraphMeta {
        generation: built.generation,
        embedder: built.embedder.clone(),
        points: built.points,
        files,
        params: built.params,
    };
    let members = SpilledMembers {
        built: &built,
        codes: OnceCell::new(),
        dir: &dir,
    };
    let outgoing = meta.graph.as_ref().map(|g| (g, outgoing_codes(&dir, g)));
    tracing::debug!(
        generation = built.generation,
        files,
        "vector members handed over"
    );
    // Not fresh until the counts below are in: a crash between is caught up.
    let swapped = VectorMeta {
        graph: Some(graph.clone()),
        live: files,
        tombstones: 0,
        delta: 0,
        fresh: false,
    };
    cat.replace_graph_members(
        &members,
        MetaKey::VectorIndex,
        &swapped.to_json(),
        &Handover {
            outgoing_embedder: outgoing.as_ref().map(|(g, _)| g.embedder.as_str()),
            outgoing: match &outgoing {
                Some((_, codes)) => codes,
                None => &|_| None,
            },
            incoming_embedder: &built.embedder,
        },
    )?;
    // Files that changed while the graph was built are stale from the swap on: counted
    // among the stale paths, a read proportional to them. (Members it cannot read back
    // leave the counts at their bound: the next refresh finds the damage and rebuilds.)
    let (tombstones, delta) = stale::counts(cat, &dir, &graph)?.unwrap_or((files, files));
    let counted = VectorMeta {
        live: files.saturating_sub(tombstones) + delta,
        tombstones,
        delta,
        fresh: true,
        ..swapped
    };
    cat.set_meta(MetaKey::VectorIndex, &counted.to_json())?;
    graph::remove_other_generations(&dir, Some(built.generation), None).map_err(io)?;
    tracing::debug!(
        generation = built.generation,
        files,
        "vector graph swapped in"
    );
    Ok(Refreshed::Built {
        generation: built.generation,
        files,
    })
}
