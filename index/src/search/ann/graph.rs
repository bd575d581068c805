//! The HNSW graph (hnsw_rs) over unit vectors, and its generations on disk.
//!
//! A generation is a directory `vectors/gen-N/` holding hnsw_rs's dump (`ann.hnsw.graph`,
//! `ann.hnsw.data`), the points' codes as one flat file (`codes.bin`, for exact search
//! without loading the graph: [`MappedCodes`]) and a `manifest.json` with the sizes and
//! BLAKE3 digests of all three. It is
//! written as `gen-N.tmp/`, synced, and renamed into place, and never changed after: the
//! catalog says which generation is current, so a reader sees a whole generation or none.
//! Loading checks the digests first, because hnsw_rs's reader asserts (and in places
//! exits the process) on malformed input: it only ever sees bytes this module wrote.

use super::dist::{point, point_dot, CodeCosine, MappedCodes};
use crate::compact::Code;
use hnsw_rs::api::AnnT;
use hnsw_rs::hnsw::Hnsw;
use hnsw_rs::hnswio::HnswIo;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// Directory of the vector graph's generations inside the index directory.
pub const VECTORS_DIR: &str = "vectors";
/// hnsw_rs's dump basename inside a generation.
const BASENAME: &str = "ann";
/// The manifest's file name inside a generation.
const MANIFEST: &str = "manifest.json";
/// Version of the generation layout; a generation of another version is rebuilt.
/// 2: points are codes ([`Code`]), not f32 vectors. 3: `codes.bin`, and the catalog
/// keeps `vector_stale` and an index of `vector_points` by point (written together).
const LAYOUT: u32 = 3;
/// The flat file of the points' codes inside a generation.
const CODES: &str = "codes.bin";
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

/// A file of a generation: name, size, BLAKE3 digest (hex).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileSum {
    /// File name inside the generation directory.
    pub name: String,
    /// Size in bytes.
    pub bytes: u64,
    /// BLAKE3 of the content, hex.
    pub blake3: String,
}

/// What a generation holds; written last, so its presence means the dump is complete.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// Layout version ([`LAYOUT`]).
    pub layout: u32,
    /// Generation number.
    pub generation: u64,
    /// Embedder id of the vectors.
    pub embedder: String,
    /// Type name of the distance (hnsw_rs refuses to load a dump under another one).
    pub distance: String,
    /// Vector dimension.
    pub dim: usize,
    /// Points in the graph.
    pub points: usize,
    /// Build parameters.
    pub params: GraphParams,
    /// The dump's files.
    pub files: Vec<FileSum>,
    /// The flat file of the points, point `i` at `i · (4 + dim)` bytes, laid out as a
    /// graph point ([`point`]).
    pub codes: FileSum,
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
        Self::build_unless(codes, params, &AtomicBool::new(false))
            .expect("a build that is never cancelled ends with a graph")
    }

    /// [`Graph::build`], given up (`None`) once `cancel` is set: the points go in by
    /// [`BUILD_CHUNK`], and the flag is read between chunks, so that a writer stopping
    /// mid-build (a `watch` told to stop at a million files) waits seconds, not the build.
    pub fn build_unless(
        codes: &[&Code],
        params: GraphParams,
        cancel: &AtomicBool,
    ) -> Option<Graph> {
        let dim = codes.first().map_or(0, |c| c.dim());
        let hnsw = Hnsw::<i8, CodeCosine>::new(
            params.m.clamp(2, 255),
            codes.len().max(1),
            MAX_LAYER,
            params.ef_construction.max(params.m),
            CodeCosine,
        );
        let points: Vec<Vec<i8>> = codes.iter().map(|c| point(c)).collect();
        let items: Vec<(&Vec<i8>, usize)> = points.iter().zip(0..).collect();
        for chunk in items.chunks(BUILD_CHUNK) {
            if cancel.load(Ordering::Relaxed) {
                return None;
            }
            hnsw.parallel_insert(chunk);
        }
        Some(Graph {
            inner: Inner::Built(Box::new(hnsw)),
            points: codes.len(),
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

    /// Write the graph into `dir` (which must exist and be empty) with fsynced files; the
    /// manifest is the caller's to write once the dump is complete.
    fn dump(&self, dir: &Path) -> io::Result<Vec<FileSum>> {
        let Inner::Built(h) = &self.inner else {
            return Err(io::Error::other("only a freshly built graph is dumped"));
        };
        let name = h.file_dump(dir, BASENAME).map_err(io::Error::other)?;
        if name != BASENAME {
            return Err(io::Error::other(format!(
                "hnsw_rs dumped under {name}, not {BASENAME}"
            )));
        }
        let mut sums = Vec::new();
        for suffix in ["hnsw.graph", "hnsw.data"] {
            let name = format!("{BASENAME}.{suffix}");
            let path = dir.join(&name);
            File::open(&path)?.sync_all()?;
            let (bytes, blake3) = digest(&path)?;
            sums.push(FileSum {
                name,
                bytes,
                blake3,
            });
        }
        Ok(sums)
    }

    /// Reload the generation in `dir` described by `m`, after checking its files against
    /// the manifest's digests.
    fn load(dir: &Path, m: &Manifest) -> Result<Graph, String> {
        for f in &m.files {
            let (bytes, blake3) =
                digest(&dir.join(&f.name)).map_err(|e| format!("{}: {e}", f.name))?;
            if bytes != f.bytes || blake3 != f.blake3 {
                return Err(format!("{} does not match its manifest", f.name));
            }
        }
        let io = HnswIo::new(dir, BASENAME);
        // The digests match what this module wrote, so hnsw_rs's asserts should hold;
        // should one fire anyway, it costs the graph (exact search takes over), not the
        // process.
        let loaded = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            Reloaded::try_new(io, |io| io.load_hnsw_with_dist(CodeCosine))
        }))
        .map_err(|_| "hnsw_rs panicked while loading".to_string())?
        .map_err(|e| format!("hnsw_rs could not load it: {e}"))?;
        let points = loaded.with_dependent(|_, h| h.get_nb_point());
        if points != m.points {
            return Err(format!(
                "{points} points loaded, the manifest says {}",
                m.points
            ));
        }
        Ok(Graph {
            inner: Inner::Reloaded(loaded),
            points,
            dim: m.dim,
        })
    }
}

/// Size and BLAKE3 (hex) of a file, read in a streaming pass.
fn digest(path: &Path) -> io::Result<(u64, String)> {
    let mut h = blake3::Hasher::new();
    h.update_reader(File::open(path)?)?;
    let bytes = std::fs::metadata(path)?.len();
    Ok((bytes, h.finalize().to_hex().to_string()))
}

/// The directory of generation `g` under the index directory.
pub fn generation_dir(index_dir: &Path, g: u64) -> PathBuf {
    index_dir.join(VECTORS_DIR).join(format!("gen-{g}"))
}

/// The manifest a generation of these vectors would carry, without its files yet.
fn manifest(generation: u64, embedder: &str, graph: &Graph, params: GraphParams) -> Manifest {
    Manifest {
        layout: LAYOUT,
        generation,
        embedder: embedder.to_string(),
        distance: std::any::type_name::<CodeCosine>().to_string(),
        dim: graph.dim,
        points: graph.points,
        params,
        files: Vec::new(),
        codes: FileSum {
            name: CODES.into(),
            bytes: 0,
            blake3: String::new(),
        },
    }
}

/// Write the points of `codes` (in point order) as `dir/codes.bin`, synced.
fn write_codes(dir: &Path, codes: &[&Code]) -> io::Result<FileSum> {
    let path = dir.join(CODES);
    let mut out = io::BufWriter::new(File::create(&path)?);
    for c in codes {
        out.write_all(&c.scale.to_le_bytes())?;
        out.write_all(bytemuck::cast_slice(&c.codes))?;
    }
    out.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    let (bytes, blake3) = digest(&path)?;
    Ok(FileSum {
        name: CODES.into(),
        bytes,
        blake3,
    })
}

/// Write `graph`, built over `codes`, as generation `g` of the index at `index_dir`: into
/// `gen-g.tmp/`, synced, then renamed to `gen-g/`. Returns its manifest.
pub fn write_generation(
    index_dir: &Path,
    g: u64,
    embedder: &str,
    graph: &Graph,
    codes: &[&Code],
    params: GraphParams,
) -> io::Result<Manifest> {
    if codes.len() != graph.points || codes.iter().any(|c| c.dim() != graph.dim) {
        return Err(io::Error::other("the codes are not the graph's points"));
    }
    let root = index_dir.join(VECTORS_DIR);
    std::fs::create_dir_all(&root)?;
    let done = generation_dir(index_dir, g);
    let tmp = root.join(format!("gen-{g}.tmp"));
    for stale in [&tmp, &done] {
        match std::fs::remove_dir_all(stale) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
    }
    std::fs::create_dir(&tmp)?;
    let mut m = manifest(g, embedder, graph, params);
    m.files = graph.dump(&tmp)?;
    crate::failpoint::pause_at("graph-build", index_dir);
    m.codes = write_codes(&tmp, codes)?;
    let mut f = File::create(tmp.join(MANIFEST))?;
    f.write_all(&serde_json::to_vec_pretty(&m).map_err(io::Error::other)?)?;
    f.sync_all()?;
    File::open(&tmp)?.sync_all()?;
    std::fs::rename(&tmp, &done)?;
    File::open(&root)?.sync_all()?;
    Ok(m)
}

/// The manifest of generation `g`, if it is there and readable.
pub fn read_manifest(index_dir: &Path, g: u64) -> Option<Manifest> {
    let bytes = std::fs::read(generation_dir(index_dir, g).join(MANIFEST)).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Whether generation `g` looks complete for `embedder` without reading it whole: a
/// manifest of this layout and distance, and files of the recorded sizes. (Readers
/// check the digests; this is what a writer can afford on every run.)
pub fn looks_complete(index_dir: &Path, g: u64, embedder: &str) -> bool {
    let Some(m) = read_manifest(index_dir, g) else {
        return false;
    };
    let dir = generation_dir(index_dir, g);
    m.layout == LAYOUT
        && m.generation == g
        && m.embedder == embedder
        && m.distance == std::any::type_name::<CodeCosine>()
        && m.files
            .iter()
            .chain([&m.codes])
            .all(|f| std::fs::metadata(dir.join(&f.name)).is_ok_and(|md| md.len() == f.bytes))
}

/// Generation `g`'s manifest, if it is of this layout and holds `points` points by
/// `embedder`.
fn expected_manifest(
    index_dir: &Path,
    g: u64,
    embedder: &str,
    points: usize,
) -> Result<Manifest, String> {
    let m = read_manifest(index_dir, g).ok_or("no readable manifest")?;
    if m.layout != LAYOUT || m.generation != g || m.distance != std::any::type_name::<CodeCosine>()
    {
        return Err("a generation of another layout".into());
    }
    if m.embedder != embedder || m.points != points {
        return Err(format!(
            "it holds {} points by {}, the catalog expects {points} by {embedder}",
            m.points, m.embedder
        ));
    }
    Ok(m)
}

/// Map generation `g`'s codes for exact search, checking that it is what the catalog
/// expects (this embedder, this many points) and that the file has the size this
/// implies. Its digest is not read: that would cost as much as a search, and wrong
/// bytes here can only misrank, never crash.
pub fn open_codes(
    index_dir: &Path,
    g: u64,
    embedder: &str,
    points: usize,
) -> Result<MappedCodes, String> {
    let m = expected_manifest(index_dir, g, embedder, points)?;
    if m.codes.bytes != points as u64 * (4 + m.dim as u64) {
        return Err(format!("{} does not match its manifest", m.codes.name));
    }
    MappedCodes::open(
        &generation_dir(index_dir, g).join(&m.codes.name),
        m.dim,
        points,
    )
}

/// Load generation `g`, checking that it is what the catalog expects: this embedder and
/// this many points.
pub fn open_generation(
    index_dir: &Path,
    g: u64,
    embedder: &str,
    points: usize,
) -> Result<Graph, String> {
    let m = expected_manifest(index_dir, g, embedder, points)?;
    Graph::load(&generation_dir(index_dir, g), &m)
}

/// Remove every generation (and half-written one) except `keep`, and except `spare`
/// whole or half-written (a build under way). Returns the highest generation number
/// seen, so that a new one never reuses a name.
pub fn remove_other_generations(
    index_dir: &Path,
    keep: Option<u64>,
    spare: Option<u64>,
) -> io::Result<u64> {
    let root = index_dir.join(VECTORS_DIR);
    let entries = match std::fs::read_dir(&root) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(keep.unwrap_or(0)),
        Err(e) => return Err(e),
    };
    let mut highest = keep.unwrap_or(0);
    for e in entries {
        let e = e?;
        let name = e.file_name().to_string_lossy().into_owned();
        let number = name
            .strip_prefix("gen-")
            .map(|s| s.trim_end_matches(".tmp"))
            .and_then(|s| s.parse::<u64>().ok());
        if let Some(n) = number {
            highest = highest.max(n);
        }
        if number.is_some() && keep.is_some_and(|k| name == format!("gen-{k}")) {
            continue;
        }
        if number.is_some() && number == spare {
            continue;
        }
        let p = e.path();
        if e.file_type()?.is_dir() {
            std::fs::remove_dir_all(&p)?;
        } else {
            std::fs::remove_file(&p)?;
        }
    }
    Ok(highest)
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

    const PARAMS: GraphParams = GraphParams {
        m: 8,
        ef_construction: 32,
    };

    fn codes(v: &[Vec<f32>]) -> Vec<Code> {
        v.iter().map(|v| Code::new(v)).collect()
    }

    fn refs(v: &[Code]) -> Vec<&Code> {
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

    #[test]
    fn a_written_generation_reloads_and_answers_like_the_built_graph() {
        let d = tempfile::tempdir().unwrap();
        let v = vectors(300, 24, 7);
        let c = codes(&v);
        let g = Graph::build(&refs(&c), PARAMS);
        assert!(write_generation(d.path(), 3, "emb", &g, &refs(&c[1..]), PARAMS).is_err());
        let m = write_generation(d.path(), 3, "emb", &g, &refs(&c), PARAMS).unwrap();
        assert_eq!((m.points, m.dim, m.generation), (300, 24, 3));
        assert_eq!(m.codes.bytes, 300 * (4 + 24));
        let mapped = open_codes(d.path(), 3, "emb", 300).unwrap();
        assert_eq!((mapped.len(), mapped.dim()), (300, 24));
        assert!(looks_complete(d.path(), 3, "emb"));
        assert!(!looks_complete(d.path(), 3, "other"));
        let back = open_generation(d.path(), 3, "emb", 300).unwrap();
        for q in vectors(10, 24, 99) {
            let q = normalized(&q);
            let a = g.search(&q, 10, 300);
            let b = back.search(&q, 10, 300);
            assert_eq!(a.len(), 10);
            // ef ≥ points: both searches are exhaustive, so they agree on the best point.
            assert_eq!(a[0].0, b[0].0);
            assert!((a[0].1 - b[0].1).abs() < 1e-6);
            // The mapped codes score every point as the graph rescores the ones it finds.
            let all = mapped.scores(&q);
            assert_eq!(all.len(), 300);
            for (id, sim) in &a {
                assert_eq!(all[*id].0, *id);
                assert!((all[*id].1 - sim).abs() < 1e-6, "{id}");
            }
            assert_eq!(super::super::dist::best(all, 10), a);
        }
        assert!(mapped.scores(&[0.5; 3]).is_empty());
        assert!(open_codes(d.path(), 3, "emb", 299).is_err());
        assert!(open_generation(d.path(), 3, "emb", 299).is_err());
        assert!(open_generation(d.path(), 4, "emb", 300).is_err());
    }

    #[test]
    fn corrupt_truncated_or_missing_files_are_refused_not_loaded() {
        let d = tempfile::tempdir().unwrap();
        let v = vectors(100, 8, 3);
        let c = codes(&v);
        let g = Graph::build(&refs(&c), PARAMS);
        write_generation(d.path(), 1, "emb", &g, &refs(&c), PARAMS).unwrap();
        // A codes file of the wrong size is refused, and tells a writer to rebuild.
        let flat = generation_dir(d.path(), 1).join(CODES);
        let kept = std::fs::read(&flat).unwrap();
        std::fs::write(&flat, &kept[..kept.len() - 1]).unwrap();
        assert!(open_codes(d.path(), 1, "emb", 100).is_err());
        assert!(!looks_complete(d.path(), 1, "emb"));
        std::fs::write(&flat, &kept).unwrap();
        assert!(open_codes(d.path(), 1, "emb", 100).is_ok());
        let data = generation_dir(d.path(), 1).join("ann.hnsw.data");
        let mut bytes = std::fs::read(&data).unwrap();
        let mid = bytes.len() / 2;
        bytes[mid] ^= 0xff;
        std::fs::write(&data, &bytes).unwrap();
        // Same size: only the digest tells.
        assert!(looks_complete(d.path(), 1, "emb"));
        let e = open_generation(d.path(), 1, "emb", 100).unwrap_err();
        assert!(e.contains("does not match"), "{e}");
        bytes.truncate(mid);
        std::fs::write(&data, &bytes).unwrap();
        assert!(!looks_complete(d.path(), 1, "emb"));
        std::fs::remove_file(&data).unwrap();
        assert!(open_generation(d.path(), 1, "emb", 100).is_err());
        std::fs::write(generation_dir(d.path(), 1).join(MANIFEST), "{not json").unwrap();
        assert!(open_generation(d.path(), 1, "emb", 100).is_err());
    }

    #[test]
    fn other_generations_and_leftovers_are_removed() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join(VECTORS_DIR);
        for name in ["gen-1", "gen-2", "gen-7.tmp"] {
            std::fs::create_dir_all(root.join(name)).unwrap();
        }
        std::fs::write(root.join("stray"), "x").unwrap();
        assert_eq!(
            remove_other_generations(d.path(), Some(2), Some(7)).unwrap(),
            7
        );
        let mut left: Vec<_> = std::fs::read_dir(&root)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        assert_eq!(
            left,
            vec!["gen-2", "gen-7.tmp"],
            "a build under way is spared"
        );
        assert_eq!(
            remove_other_generations(d.path(), Some(2), None).unwrap(),
            7
        );
        let left: Vec<_> = std::fs::read_dir(&root)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(left, vec!["gen-2"]);
        assert_eq!(remove_other_generations(d.path(), None, None).unwrap(), 2);
        assert_eq!(std::fs::read_dir(&root).unwrap().count(), 0);
        let none = tempfile::tempdir().unwrap();
        assert_eq!(
            remove_other_generations(none.path(), None, None).unwrap(),
            0
        );
    }
}
