//! A graph's generations on disk.
//!
//! A generation is a directory `vectors/gen-N/` holding the points' codes as one flat
//! file (`codes.bin`, for exact search without loading a graph: [`MappedCodes`]), when
//! its codes are large enough for a long-lived process to want it hnsw_rs's dump of the
//! graph (`ann.hnsw.graph`, `ann.hnsw.data`; [`Manifest::has_graph`]), and a
//! the files each point stands for (`members.bin`, [`Members`]), and a
//! `manifest.json` with the sizes and BLAKE3 digests of its files. It is
//! written as `gen-N.tmp/`, synced, and renamed into place, and never changed after: the
//! catalog says which generation is current, so a reader sees a whole generation or none.
//! Loading checks the digests first, because hnsw_rs's reader asserts (and in places
//! exits the process) on malformed input: it only ever sees bytes this module wrote.

use super::{Graph, GraphParams, Inner, Reloaded};
use crate::search::ann::dist::{CodeCosine, MappedCodes};
use crate::search::ann::members::Members;
use hnsw_rs::api::AnnT;
use hnsw_rs::hnswio::HnswIo;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

/// Directory of the vector graph's generations inside the index directory.
pub const VECTORS_DIR: &str = "vectors";
/// hnsw_rs's dump basename inside a generation.
const BASENAME: &str = "ann";
/// The manifest's file name inside a generation.
const MANIFEST: &str = "manifest.json";
/// Version of the generation layout; a generation of another version is rebuilt.
/// 2: points are codes ([`Code`]), not f32 vectors. 3: `codes.bin`, and the catalog
/// keeps `vector_stale`. (Its later files, the 4-bit copy and the members, are optional
/// in the manifest, so that a generation without them keeps its codes readable; one
/// without members is rebuilt: [`looks_complete`].)
const LAYOUT: u32 = 3;
/// The flat file of the points' codes inside a generation.
const CODES: &str = "codes.bin";
/// Their 4-bit copy ([`crate::search::ann::nibbles`]), which scans read first.
const NIBBLES: &str = "nibbles.bin";
/// The files of each point ([`Members`]).
const MEMBERS: &str = "members.bin";
/// The members' paths while they are written ([`MembersWriter`]), removed after.
const MEMBER_PATHS: &str = "members.paths";

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
    /// The files each point stands for ([`Members`]). Generations written before it
    /// (whose catalog kept them) are rebuilt by the next refresh; until then their codes
    /// still serve the vectors their catalog rows left to them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub members: Option<FileSum>,
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

/// The rows a rebuild into generation `g` spilled (`search::ann::spill`), beside it.
pub fn spill_path(index_dir: &Path, g: u64) -> PathBuf {
    index_dir.join(VECTORS_DIR).join(format!("gen-{g}.rows"))
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
        members: None,
    }
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

/// Which generations a writer accepts, by whether they hold a graph and whether their
/// codes pass the bytes above which a graph is wanted ([`super::super::graph_above`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// A graph exactly where one is wanted: what a writer that builds graphs makes.
    GraphExactlyIfWanted,
    /// A graph only where one is wanted, codes alone anywhere: what a writer that
    /// writes codes alone keeps (a graph another writer built is not undone).
    GraphIfWanted,
}

/// Whether generation `g` has a `shape` for codes above `graph_above` bytes.
pub fn has_shape(index_dir: &Path, g: u64, graph_above: u64, shape: Shape) -> bool {
    read_manifest(index_dir, g).is_some_and(|m| {
        let wanted = m.codes.bytes > graph_above;
        match shape {
            Shape::GraphExactlyIfWanted => m.has_graph() == wanted,
            Shape::GraphIfWanted => !m.has_graph() || wanted,
        }
    })
}

/// Whether generation `g` looks complete for `embedder` without reading it whole: a
/// manifest of this layout and distance with its members, and files of the recorded
/// sizes. (Readers check the digests; this is what a writer can afford on every run.)
pub fn looks_complete(index_dir: &Path, g: u64, embedder: &str) -> bool {
    let Some(m) = read_manifest(index_dir, g) else {
        return false;
    };
    let dir = generation_dir(index_dir, g);
    m.layout == LAYOUT
        && m.generation == g
        && m.embedder == embedder
        && m.distance == std::any::type_name::<CodeCosine>()
        && m.members.is_some()
        && m.files
            .iter()
            .chain([&m.codes])
            .chain(&m.nibbles)
            .chain(&m.members)
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

/// Map the files of each of generation `g`'s points, checking that it is what the
/// catalog expects (this embedder, this many points) and that the file has its
/// manifest's size; its digest is not read, as for the codes ([`Members::open`]).
pub fn open_members(
    index_dir: &Path,
    g: u64,
    embedder: &str,
    points: usize,
) -> Result<Members, String> {
    let m = expected_manifest(index_dir, g, embedder, points)?;
    let f = m
        .members
        .ok_or("a generation written before its members were kept with it")?;
    let path = generation_dir(index_dir, g).join(&f.name);
    let len = std::fs::metadata(&path)
        .map_err(|e| format!("{}: {e}", f.name))?
        .len();
    if len != f.bytes {
        return Err(format!("{} does not match its manifest", f.name));
    }
    Members::open(&path, points)
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
        // `gen-N`, its build's `gen-N.tmp` and the rows spilled for it, `gen-N.rows`.
        let number = name
            .strip_prefix("gen-")
            .map(|s| s.trim_end_matches(".tmp").trim_end_matches(".rows"))
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
mod tests;
mod writer;

pub use writer::{write_generation, GenerationWriter, SealedGeneration};
