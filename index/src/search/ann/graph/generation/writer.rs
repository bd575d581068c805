//! Writing a generation: a point and a member at a time ([`GenerationWriter`]), or all
//! at once ([`write_generation`]).

use super::{
    digest, generation_dir, manifest, FileSum, Manifest, CODES, MANIFEST, MEMBERS, MEMBER_PATHS,
    NIBBLES, VECTORS_DIR,
};
use crate::compact::Code;
use crate::search::ann::graph::{Graph, GraphParams};
use crate::search::ann::members::MembersWriter;
use crate::search::ann::pages::ChunkWriter;
use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

/// A generation written a point and a member at a time, as a rebuild reads them
/// ([`GenerationWriter::create`] … [`SealedGeneration::finish`]): into `gen-g.tmp/`,
/// synced, then renamed to `gen-g/`. Its memory is bounded: the codes, the paths and
/// the 4-bit copy go to their files as they come, and the members' arrays through an
/// external sort of `run` items at a time ([`MembersWriter`]).
pub struct GenerationWriter {
    index_dir: PathBuf,
    tmp: PathBuf,
    manifest: Manifest,
    codes: ChunkWriter<File>,
    points: usize,
    members: MembersWriter,
}

/// A generation whose codes are written and synced (with their 4-bit copy when due):
/// what is left is the graph's dump, the members, the manifest and the rename.
pub struct SealedGeneration {
    index_dir: PathBuf,
    tmp: PathBuf,
    manifest: Manifest,
    members: MembersWriter,
}

impl GenerationWriter {
    /// Start generation `g` of the index at `index_dir` for points of `dim` dimensions
    /// by `embedder`, its members sorted `run` at a time
    /// ([`SORT_RUN`](crate::search::ann::SORT_RUN)): leftovers of an earlier attempt at
    /// `g` are removed first.
    pub fn create(
        index_dir: &Path,
        g: u64,
        embedder: &str,
        dim: usize,
        params: GraphParams,
        run: usize,
    ) -> io::Result<GenerationWriter> {
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
        Ok(GenerationWriter {
            index_dir: index_dir.to_path_buf(),
            codes: ChunkWriter::new(File::create(tmp.join(CODES))?),
            members: MembersWriter::create(&tmp.join(MEMBER_PATHS), run)?,
            tmp,
            manifest: manifest(g, embedder, dim, 0, params),
            points: 0,
        })
    }

    /// Append a point: its id.
    pub fn push_point(&mut self, c: &Code) -> io::Result<u32> {
        if c.dim() != self.manifest.dim {
            return Err(io::Error::other("the codes are not the graph's points"));
        }
        let id = u32::try_from(self.points).map_err(|_| io::Error::other("too many points"))?;
        self.codes.write_all(&c.scale.to_le_bytes())?;
        self.codes.write_all(bytemuck::cast_slice(&c.codes))?;
        self.points += 1;
        Ok(id)
    }

    /// Append a member: the file `path` (after the last one's in byte order) stands for
    /// `point`.
    pub fn push_member(&mut self, path: &str, point: u32) -> io::Result<()> {
        self.members.push(path, point)
    }

    /// Points so far.
    pub fn points(&self) -> usize {
        self.points
    }

    /// Its directory while it is written (`gen-g.tmp/`): where a rebuild's external
    /// sorts spill.
    pub fn dir(&self) -> &Path {
        &self.tmp
    }

    /// Sync the codes and write their 4-bit copy when they pass
    /// [`nibbles_above`](crate::search::ann::nibbles_above). A test can stop the process
    /// halfway through the copy (`nibbles-write`, a failpoint of the index).
    pub fn seal(self) -> io::Result<SealedGeneration> {
        let GenerationWriter {
            index_dir,
            tmp,
            mut manifest,
            codes,
            points,
            members,
        } = self;
        codes.finish()?.sync_all()?;
        manifest.points = points;
        manifest.codes = file_sum(&tmp, CODES)?;
        if manifest.codes.bytes > crate::search::ann::nibbles_above() {
            let dim = manifest.dim;
            let mut out = ChunkWriter::new(File::create(tmp.join(NIBBLES))?);
            let mut p = 0;
            for_each_code(&tmp.join(CODES), dim, |c| {
                if p == points / 2 {
                    crate::failpoint::pause_at("nibbles-write", &index_dir);
                }
                p += 1;
                out.write_all(&crate::search::ann::nibbles::nibble_point(c))
            })?;
            out.finish()?.sync_all()?;
            manifest.nibbles = Some(file_sum(&tmp, NIBBLES)?);
        }
        Ok(SealedGeneration {
            index_dir,
            tmp,
            manifest,
            members,
        })
    }

    /// Give it up: its directory is removed.
    pub fn abandon(self) -> io::Result<()> {
        let tmp = self.tmp.clone();
        drop(self);
        std::fs::remove_dir_all(tmp)
    }
}

impl SealedGeneration {
    /// Points written.
    pub fn points(&self) -> usize {
        self.manifest.points
    }

    /// Bytes of the codes.
    pub fn code_bytes(&self) -> u64 {
        self.manifest.codes.bytes
    }

    /// The graph over its points, inserted straight from the codes file, mapped
    /// ([`Graph::build_from_points`]): `None` once `cancel` is set.
    pub fn build_graph(
        &self,
        params: GraphParams,
        cancel: &AtomicBool,
    ) -> io::Result<Option<Graph>> {
        let dim = self.manifest.dim;
        if self.manifest.points == 0 {
            return Ok(Graph::build_from_points(&[], dim, params, cancel));
        }
        let file = File::open(self.tmp.join(CODES))?;
        // SAFETY: the codes are written and synced (sealed), and nothing writes them
        // again; the map is dropped before the generation is renamed or removed.
        let map = unsafe { crate::search::ann::pages::map(&file) }?;
        if map.len() != self.manifest.points * (4 + dim) {
            return Err(io::Error::other("the codes file does not hold its points"));
        }
        let points: &[i8] = bytemuck::cast_slice(&map[..]);
        Ok(Graph::build_from_points(points, dim, params, cancel))
    }

    /// Finish it with `graph` (built over its points) when there is one: the graph's
    /// dump, the members (every point among the points written), the manifest, and the
    /// rename into place. Returns its manifest.
    pub fn finish(self, graph: Option<&Graph>) -> io::Result<Manifest> {
        let SealedGeneration {
            index_dir,
            tmp,
            mut manifest,
            members,
        } = self;
        if graph.is_some_and(|g| g.points != manifest.points || g.dim != manifest.dim) {
            return Err(io::Error::other("the codes are not the graph's points"));
        }
        if let Some(graph) = graph {
            manifest.files = graph.dump(&tmp)?;
        }
        crate::failpoint::pause_at("graph-build", &index_dir);
        let points =
            u32::try_from(manifest.points).map_err(|_| io::Error::other("too many points"))?;
        let mut f = File::create(tmp.join(MEMBERS))?;
        members.finish(&mut f, points)?;
        f.sync_all()?;
        drop(f);
        manifest.members = Some(file_sum(&tmp, MEMBERS)?);
        let mut f = File::create(tmp.join(MANIFEST))?;
        f.write_all(&serde_json::to_vec_pretty(&manifest).map_err(io::Error::other)?)?;
        f.sync_all()?;
        File::open(&tmp)?.sync_all()?;
        let root = index_dir.join(VECTORS_DIR);
        std::fs::rename(&tmp, generation_dir(&index_dir, manifest.generation))?;
        File::open(&root)?.sync_all()?;
        Ok(manifest)
    }

    /// Give it up: its directory is removed.
    pub fn abandon(self) -> io::Result<()> {
        let tmp = self.tmp.clone();
        drop(self);
        std::fs::remove_dir_all(tmp)
    }
}

/// Call `f` on each point of the codes file at `path` (`dim` dimensions), read in order.
fn for_each_code(
    path: &Path,
    dim: usize,
    mut f: impl FnMut(&Code) -> io::Result<()>,
) -> io::Result<()> {
    let mut input = io::BufReader::with_capacity(1 << 20, File::open(path)?);
    let mut point = vec![0u8; 4 + dim];
    let mut code = Code {
        scale: 0.0,
        codes: vec![0; dim],
    };
    loop {
        match input.read_exact(&mut point) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(()),
            Err(e) => return Err(e),
        }
        code.scale = f32::from_le_bytes([point[0], point[1], point[2], point[3]]);
        for (c, &b) in code.codes.iter_mut().zip(&point[4..]) {
            *c = b as i8;
        }
        f(&code)?;
    }
}

/// The [`FileSum`] of `dir/name`.
fn file_sum(dir: &Path, name: &str) -> io::Result<FileSum> {
    let (bytes, blake3) = digest(&dir.join(name))?;
    Ok(FileSum {
        name: name.into(),
        bytes,
        blake3,
    })
}

/// Write `codes` as generation `g` of the index at `index_dir`, with `graph` (built over
/// them) when there is one, the codes' 4-bit copy when they pass
/// [`nibbles_above`](crate::search::ann::nibbles_above), and the files each point stands
/// for (`members`: path and point, sorted by path): [`GenerationWriter`] over them all.
/// Returns its manifest.
pub fn write_generation(
    index_dir: &Path,
    g: u64,
    embedder: &str,
    graph: Option<&Graph>,
    codes: &[&Code],
    members: &[(&str, u32)],
    params: GraphParams,
) -> io::Result<Manifest> {
    let dim = codes.first().map_or(0, |c| c.dim());
    let run = crate::search::ann::SORT_RUN;
    let mut w = GenerationWriter::create(index_dir, g, embedder, dim, params, run)?;
    for c in codes {
        w.push_point(c)?;
    }
    for &(path, point) in members {
        w.push_member(path, point)?;
    }
    w.seal()?.finish(graph)
}
