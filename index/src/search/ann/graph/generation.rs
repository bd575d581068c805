//! A graph's generations on disk.
//!
//! A generation is a directory `vectors/gen-N/` holding the points' codes as one flat
//! file (`codes.bin`, for exact search without loading a graph: [`MappedCodes`]), when
//! its codes are large enough for a long-lived process to want it hnsw_rs's dump of the
//! graph (`ann.hnsw.graph`, `ann.hnsw.data`; [`Manifest::has_graph`]), and a
//! `manifest.json` with the sizes and BLAKE3 digests of its files. It is
//! written as `gen-N.tmp/`, synced, and renamed into place, and never changed after: the
//! catalog says which generation is current, so a reader sees a whole generation or none.
//! Loading checks the digests first, because hnsw_rs's reader asserts (and in places
//! exits the process) on malformed input: it only ever sees bytes this module wrote.

use super::{Graph, GraphParams, Inner, Reloaded};
use crate::compact::Code;
use crate::search::ann::dist::{CodeCosine, MappedCodes};
use hnsw_rs::api::AnnT;
use hnsw_rs::hnswio::HnswIo;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

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
/// Their 4-bit copy ([`crate::search::ann::nibbles`]), which scans read first.
const NIBBLES: &str = "nibbles.bin";

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
    /// The graph dump's files; none in a generation whose codes are only scanned.
    pub files: Vec<FileSum>,
    /// The flat file of the points, point `i` at `i · (4 + dim)` bytes, laid out as a
    /// graph point ([`point`](crate::search::ann::dist::point)).
    pub codes: FileSum,
    /// The codes' 4-bit copy ([`crate::search::ann::nibbles`]); absent from generations
    /// written before it (their scans read the 8-bit codes alone), and ignored by the
    /// binaries of then, so the layout keeps its version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nibbles: Option<FileSum>,
}

impl Manifest {
    /// Whether the generation holds a graph, not only its codes.
    pub fn has_graph(&self) -> bool {
        !self.files.is_empty()
    }
}

impl Graph {
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
        if !m.has_graph() {
            return Err("the generation holds no graph, only its codes".into());
        }
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

/// The manifest a generation of these points would carry, without its files yet.
fn manifest(
    generation: u64,
    embedder: &str,
    dim: usize,
    points: usize,
    params: GraphParams,
) -> Manifest {
    Manifest {
        layout: LAYOUT,
        generation,
        embedder: embedder.to_string(),
        distance: std::any::type_name::<CodeCosine>().to_string(),
        dim,
        points,
        params,
        files: Vec::new(),
        codes: FileSum {
            name: CODES.into(),
            bytes: 0,
            blake3: String::new(),
        },
        nibbles: None,
    }
}

/// Write the points of `codes` (in point order) as `dir/codes.bin`, synced.
fn write_codes(dir: &Path, codes: &[&Code]) -> io::Result<FileSum> {
    let point = |c: &Code| {
        let mut p = c.scale.to_le_bytes().to_vec();
        p.extend_from_slice(bytemuck::cast_slice(&c.codes));
        p
    };
    write_points(dir, CODES, codes, point, || {})
}

/// Write the 4-bit copy of `codes` (in point order) as `dir/nibbles.bin`, synced.
/// A test can stop the process halfway through it (`nibbles-write`, a failpoint of
/// `index_dir`).
fn write_nibbles(dir: &Path, codes: &[&Code], index_dir: &Path) -> io::Result<FileSum> {
    write_points(
        dir,
        NIBBLES,
        codes,
        crate::search::ann::nibbles::nibble_point,
        || crate::failpoint::pause_at("nibbles-write", index_dir),
    )
}

/// Write `point` of each of `codes` (in point order) as `dir/name`, synced; `halfway`
/// runs when half the points are written and flushed (a test's failpoint).
fn write_points(
    dir: &Path,
    name: &str,
    codes: &[&Code],
    point: impl Fn(&Code) -> Vec<u8>,
    halfway: impl Fn(),
) -> io::Result<FileSum> {
    let path = dir.join(name);
    let mut out = io::BufWriter::new(File::create(&path)?);
    for (i, c) in codes.iter().enumerate() {
        if i == codes.len() / 2 {
            out.flush()?;
            halfway();
        }
        out.write_all(&point(c))?;
    }
    out.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    let (bytes, blake3) = digest(&path)?;
    Ok(FileSum {
        name: name.into(),
        bytes,
        blake3,
    })
}

/// Write `codes` as generation `g` of the index at `index_dir`, with `graph` (built over
/// them) when there is one, and the codes' 4-bit copy when they pass
/// [`nibbles_above`](crate::search::ann::nibbles_above): into `gen-g.tmp/`, synced, then
/// renamed to `gen-g/`. Returns its manifest.
pub fn write_generation(
    index_dir: &Path,
    g: u64,
    embedder: &str,
    graph: Option<&Graph>,
    codes: &[&Code],
    params: GraphParams,
) -> io::Result<Manifest> {
    let dim = codes.first().map_or(0, |c| c.dim());
    if codes.iter().any(|c| c.dim() != dim)
        || graph.is_some_and(|graph| codes.len() != graph.points || dim != graph.dim)
    {
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
    let mut m = manifest(g, embedder, dim, codes.len(), params);
    if let Some(graph) = graph {
        m.files = graph.dump(&tmp)?;
    }
    crate::failpoint::pause_at("graph-build", index_dir);
    m.codes = write_codes(&tmp, codes)?;
    if m.codes.bytes > crate::search::ann::nibbles_above() {
        m.nibbles = Some(write_nibbles(&tmp, codes, index_dir)?);
    }
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

/// Whether generation `g` holds a graph (its manifest says so), not only its codes.
pub fn has_graph(index_dir: &Path, g: u64) -> bool {
    read_manifest(index_dir, g).is_some_and(|m| m.has_graph())
}

/// Whether generation `g` has the shape a rebuild would give it now: a graph exactly
/// when its codes pass `graph_above` bytes ([`super::super::graph_above`]).
pub fn has_wanted_shape(index_dir: &Path, g: u64, graph_above: u64) -> bool {
    read_manifest(index_dir, g).is_some_and(|m| m.has_graph() == (m.codes.bytes > graph_above))
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
            .chain(&m.nibbles)
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
    let dir = generation_dir(index_dir, g);
    let mut codes = MappedCodes::open(&dir.join(&m.codes.name), m.dim, points)?;
    // Its size is checked against the points as the codes' is; a generation whose copy
    // cannot be read is scanned from its codes alone.
    let stride = crate::search::ann::nibbles::stride(m.dim) as u64;
    if let Some(n) = m.nibbles.filter(|n| n.bytes == points as u64 * stride) {
        if let Err(e) = codes.add_nibbles(&dir.join(&n.name)) {
            tracing::warn!(error = %e, "the codes' 4-bit copy is unreadable; scanning the codes alone");
        }
    }
    Ok(codes)
}

/// Check generation `g`'s codes against its manifest's digest, on top of what
/// [`open_codes`] checks: what a writer does before it reads the vectors the catalog
/// left to the generation (`catalog::held`) to write them anywhere else, so that damage
/// is not copied on.
pub fn verify_codes(index_dir: &Path, g: u64) -> Result<(), String> {
    let m = read_manifest(index_dir, g).ok_or("no readable manifest")?;
    let (bytes, blake3) = digest(&generation_dir(index_dir, g).join(&m.codes.name))
        .map_err(|e| format!("{}: {e}", m.codes.name))?;
    if bytes != m.codes.bytes || blake3 != m.codes.blake3 {
        return Err(format!("{} does not match its manifest", m.codes.name));
    }
    Ok(())
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
    use super::super::tests::{codes, refs, vectors, PARAMS};
    use super::*;
    use crate::search::ann::dist::{best, normalized};

    #[test]
    fn a_written_generation_reloads_and_answers_like_the_built_graph() {
        let d = tempfile::tempdir().unwrap();
        let v = vectors(300, 24, 7);
        let c = codes(&v);
        let g = Graph::build(&refs(&c), PARAMS);
        assert!(write_generation(d.path(), 3, "emb", Some(&g), &refs(&c[1..]), PARAMS).is_err());
        let m = write_generation(d.path(), 3, "emb", Some(&g), &refs(&c), PARAMS).unwrap();
        assert!(m.has_graph() && has_graph(d.path(), 3));
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
            assert_eq!(best(all, 10), a);
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
        write_generation(d.path(), 1, "emb", Some(&g), &refs(&c), PARAMS).unwrap();
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
    fn a_generation_of_codes_alone_is_scanned_and_refuses_to_load_a_graph() {
        let d = tempfile::tempdir().unwrap();
        let c = codes(&vectors(50, 8, 11));
        let m = write_generation(d.path(), 2, "emb", None, &refs(&c), PARAMS).unwrap();
        assert!(!m.has_graph() && !has_graph(d.path(), 2));
        assert_eq!((m.points, m.dim, m.codes.bytes), (50, 8, 50 * (4 + 8)));
        let mut left: Vec<_> = std::fs::read_dir(generation_dir(d.path(), 2))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        assert_eq!(left, vec![CODES, MANIFEST, NIBBLES]);
        assert_eq!(m.nibbles.as_ref().map(|n| n.bytes), Some(50 * (4 + 4)));
        assert!(looks_complete(d.path(), 2, "emb"));
        let codes = open_codes(d.path(), 2, "emb", 50).unwrap();
        assert_eq!(codes.len(), 50);
        assert!(codes.has_nibbles());
        // A generation written before the 4-bit copy (its manifest has none) is scanned
        // from its codes; so is one whose copy is cut short.
        let path = generation_dir(d.path(), 2).join(MANIFEST);
        let mut older = m.clone();
        older.nibbles = None;
        std::fs::write(&path, serde_json::to_vec(&older).unwrap()).unwrap();
        assert!(!std::fs::read_to_string(&path).unwrap().contains("nibbles"));
        assert!(looks_complete(d.path(), 2, "emb"));
        assert!(!open_codes(d.path(), 2, "emb", 50).unwrap().has_nibbles());
        std::fs::write(&path, serde_json::to_vec(&m).unwrap()).unwrap();
        let nib = generation_dir(d.path(), 2).join(NIBBLES);
        let bytes = std::fs::read(&nib).unwrap();
        std::fs::write(&nib, &bytes[..bytes.len() - 1]).unwrap();
        assert!(!looks_complete(d.path(), 2, "emb"));
        assert!(!open_codes(d.path(), 2, "emb", 50).unwrap().has_nibbles());
        std::fs::write(&nib, &bytes).unwrap();
        let e = open_generation(d.path(), 2, "emb", 50).unwrap_err();
        assert!(e.contains("no graph"), "{e}");
        // A graph is wanted above the threshold, and absent below it.
        assert!(has_wanted_shape(d.path(), 2, 600));
        assert!(!has_wanted_shape(d.path(), 2, 599));
        let g = Graph::build(&refs(&c), PARAMS);
        write_generation(d.path(), 3, "emb", Some(&g), &refs(&c), PARAMS).unwrap();
        assert!(has_wanted_shape(d.path(), 3, 599));
        assert!(!has_wanted_shape(d.path(), 3, 600));
        assert!(!has_wanted_shape(d.path(), 4, 0), "no generation 4");
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
