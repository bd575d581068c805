//! Similarity on unit vectors: the dot product, the graph's distance over compact codes,
//! and exact top-n scoring over a flat matrix of codes (the small-index path and the
//! graph's delta).

use super::pool::{Kept, SharedFloor};
use crate::compact::{dot_f32_i8, dot_i8, Code};
use hnsw_rs::anndists::dist::Distance;

/// Dot product of two equally long slices (SIMD where the CPU has it).
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    crate::compact::dot_f32(a, b)
}

/// A copy of `v` scaled to unit length; zero and non-finite vectors become all zeros
/// (texts with nothing to embed give the zero vector, which is similar to nothing).
pub fn normalized(v: &[f32]) -> Vec<f32> {
    let mut out = v.to_vec();
    crate::embed::l2_normalize(&mut out);
    out
}

/// Cosine distance of two graph points, `1 - cos`. A point is a code's scale (four
/// bytes, little-endian f32) followed by its codes ([`point`]): hnsw_rs hands a distance
/// two slices and nothing else, and with the scale at hand a distance is one pass of
/// integer products, where the cosine of two bare codes needs their norms too (three
/// passes, for a graph build of twice the CPU of the f32 one).
///
/// hnsw_rs asserts that distances are ≥ 0 and panics on NaN. This one is clamped to
/// `[0, 2]` and maps zero codes, short slices and slices of different lengths to 1
/// (unrelated), and so cannot panic whatever is stored.
#[derive(Debug, Default, Clone, Copy)]
pub struct CodeCosine;

/// The scale of a graph point, or 0 for a slice too short to hold one.
fn point_scale(p: &[i8]) -> f32 {
    match p {
        [a, b, c, d, ..] => {
            let s = f32::from_le_bytes([*a as u8, *b as u8, *c as u8, *d as u8]);
            if s.is_finite() {
                s
            } else {
                0.0
            }
        }
        _ => 0.0,
    }
}

/// A code as a graph point: its scale's four bytes, then the codes.
pub fn point(c: &Code) -> Vec<i8> {
    let mut out: Vec<i8> = c.scale.to_le_bytes().iter().map(|&b| b as i8).collect();
    out.extend_from_slice(&c.codes);
    out
}

/// The similarity of the unit vector `q` with a graph point.
pub fn point_dot(q: &[f32], p: &[i8]) -> f32 {
    if p.len() < 4 {
        return 0.0;
    }
    point_scale(p) * dot_f32_i8(q, &p[4..])
}

impl Distance<i8> for CodeCosine {
    fn eval(&self, va: &[i8], vb: &[i8]) -> f32 {
        if va.len() != vb.len() || va.len() < 4 {
            return 1.0;
        }
        let s = point_scale(va) * point_scale(vb);
        if s == 0.0 {
            return 1.0;
        }
        let d = 1.0 - s * dot_i8(&va[4..], &vb[4..]) as f32;
        if d.is_nan() {
            1.0
        } else {
            d.clamp(0.0, 2.0)
        }
    }
}

/// Row-major codes of one dimension with their scales, scored exhaustively: a quarter
/// of the memory of f32 rows, and as many fewer bytes to read per query.
#[derive(Debug, Default, Clone)]
pub struct Flat {
    dim: usize,
    codes: Vec<i8>,
    scales: Vec<f32>,
}

impl Flat {
    /// An empty matrix of `dim` columns.
    pub fn new(dim: usize) -> Flat {
        Flat {
            dim,
            codes: Vec::new(),
            scales: Vec::new(),
        }
    }

    /// Append a code. One of another dimension is refused (false): it was made by
    /// another embedder and cannot be compared.
    pub fn push(&mut self, c: &Code) -> bool {
        if c.dim() != self.dim {
            return false;
        }
        self.codes.extend_from_slice(&c.codes);
        self.scales.push(c.scale);
        true
    }

    /// Append the code of `v` (see [`Flat::push`]).
    pub fn push_f32(&mut self, v: &[f32]) -> bool {
        self.push(&Code::new(v))
    }

    /// Rows stored.
    pub fn len(&self) -> usize {
        self.scales.len()
    }

    /// Whether no row is stored.
    pub fn is_empty(&self) -> bool {
        self.scales.is_empty()
    }

    /// Columns.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The `n` rows most similar to the unit vector `q`: (row, similarity), best first,
    /// ties by row. Empty when `q` has another dimension.
    pub fn top(&self, q: &[f32], n: usize) -> Vec<(usize, f32)> {
        if q.len() != self.dim || self.dim == 0 || n == 0 {
            return Vec::new();
        }
        let sims: Vec<(usize, f32)> = self
            .codes
            .chunks_exact(self.dim)
            .zip(&self.scales)
            .map(|(row, s)| s * dot_f32_i8(q, row))
            .enumerate()
            .collect();
        best(sims, n)
    }
}

/// Best first, ties by id.
pub(crate) fn order(a: &(usize, f32), b: &(usize, f32)) -> std::cmp::Ordering {
    b.1.total_cmp(&a.1).then(a.0.cmp(&b.0))
}

/// The `n` best of `(id, similarity)`, best first, ties by id.
pub fn best(mut sims: Vec<(usize, f32)>, n: usize) -> Vec<(usize, f32)> {
    if n == 0 {
        return Vec::new();
    }
    if sims.len() > n {
        sims.select_nth_unstable_by(n - 1, order);
        sims.truncate(n);
    }
    sims.sort_unstable_by(order);
    sims
}

/// The points of a generation's `codes.bin`, memory-mapped and scored exhaustively: what
/// a process that searches once uses instead of loading the graph (at 100k files the
/// load is most of a `lakestar search`; one pass over the codes costs a few
/// milliseconds). Point `i` is `4 + dim` bytes at `i · (4 + dim)`: its scale, then its
/// codes ([`point`]).
pub struct MappedCodes {
    map: memmap2::Mmap,
    dim: usize,
    points: usize,
    /// The generation's 4-bit copy of the codes, when it has one: scans read it first
    /// ([`super::nibbles`]).
    nibbles: Option<memmap2::Mmap>,
}

impl std::fmt::Debug for MappedCodes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MappedCodes")
            .field("points", &self.points)
            .field("dim", &self.dim)
            .finish()
    }
}

/// Points per parallel task of a scan: large enough that scheduling is noise, small
/// enough that a task's scores stay in the cache.
const SCAN_CHUNK: usize = 4096;
/// Points rescored per parallel task, at least.
const RESCORE_TASK: usize = 128;

impl MappedCodes {
    /// Map `path`, which must hold exactly `points` points of dimension `dim`.
    pub fn open(path: &std::path::Path, dim: usize, points: usize) -> Result<MappedCodes, String> {
        if dim == 0 {
            return Err(format!("{}: points of dimension 0", path.display()));
        }
        let map = map_exact(path, points as u64 * (4 + dim as u64), points, dim)?;
        Ok(MappedCodes {
            map,
            dim,
            points,
            nibbles: None,
        })
    }

    /// Read these codes' 4-bit copy at `path` ([`super::nibbles`]), which must hold
    /// exactly as many points of the same dimension; scans then read it first and
    /// rescore a pool of its best from the 8-bit codes.
    pub fn add_nibbles(&mut self, path: &std::path::Path) -> Result<(), String> {
        let want = (self.points * super::nibbles::stride(self.dim)) as u64;
        let map = map_exact(path, want, self.points, self.dim)?;
        self.nibbles = Some(map);
        Ok(())
    }

    /// Whether scans read a 4-bit copy first.
    pub fn has_nibbles(&self) -> bool {
        self.nibbles.is_some()
    }

    /// Points held.
    pub fn len(&self) -> usize {
        self.points
    }

    /// Whether no point is held.
    pub fn is_empty(&self) -> bool {
        self.points == 0
    }

    /// Vector dimension.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Bytes mapped: what one scan reads.
    pub fn bytes(&self) -> usize {
        self.map.len()
    }

    /// The points that can be among the `n` nearest to the unit vector `q`: every point
    /// scored against `q` quantized like a code, in integer arithmetic (a third of the
    /// instructions of [`scores`](Self::scores), which would be a third of a `lakestar
    /// search` at 100k files), for [`Scan::top`] to score in f32 only those the
    /// quantization cannot have moved out of reach. With a 4-bit copy
    /// ([`add_nibbles`](Self::add_nibbles)) every point is scored from it instead, at
    /// half the bytes, and `top` rescores a pool of the best: the scan keeps the pool
    /// `top(n)` needs as it goes ([`super::pool`]); a `top` of more than `n` scores every
    /// point again.
    pub fn scan<'a>(&'a self, q: &'a [f32], n: usize) -> Scan<'a> {
        use rayon::prelude::*;
        let max = q.iter().fold(0.0f32, |m, x| m.max(x.abs()));
        if q.len() != self.dim || !max.is_finite() || max == 0.0 {
            // Nothing to quantize: every point is scored in f32 (zero query: all 0).
            let approx = if q.len() == self.dim {
                self.scores(q).into_iter().map(|(_, s)| s).collect()
            } else {
                Vec::new()
            };
            return Scan {
                codes: self,
                q,
                scores: Scores::All(approx),
                slack: 0.0,
            };
        }
        if let (Some(nibbles), Some(nq)) = (&self.nibbles, super::nibbles::NibbleQuery::new(q)) {
            let kept = self.nibble_pool(nibbles, &nq, pool_of(n).min(self.points));
            return Scan {
                codes: self,
                q,
                scores: Scores::Pooled(kept, nq, nibbles),
                slack: 0.0,
            };
        }
        let step = max / 127.0;
        let qi: Vec<i8> = q
            .iter()
            .map(|x| (x / step).round().clamp(-127.0, 127.0) as i8)
            .collect();
        // For a point's unit vector `s·c` (a code's scale is 1/‖c‖) the quantized score
        // is off by `s·c·r`, with `r = q - step·qi`: at most ‖r‖ (Cauchy–Schwarz), and
        // f32 rounding in either score is far below the 1e-4 added.
        let r: f32 = q
            .iter()
            .zip(&qi)
            .map(|(x, &c)| (x - step * f32::from(c)).powi(2))
            .sum::<f32>()
            .sqrt();
        let stride = 4 + self.dim;
        let points: &[i8] = bytemuck::cast_slice(&self.map[..self.points * stride]);
        let mut approx = vec![0.0f32; self.points];
        points
            .par_chunks(stride * SCAN_CHUNK)
            .zip(approx.par_chunks_mut(SCAN_CHUNK))
            .for_each(|(points, out)| {
                pulp::Arch::new().dispatch(QuantizedScores {
                    q: &qi,
                    step,
                    points,
                    out,
                })
            });
        Scan {
            codes: self,
            q,
            scores: Scores::All(approx),
            slack: 2.0 * (r + 1e-4),
        }
    }

    /// The 4-bit scores of every point of `nibbles` (these codes' 4-bit copy) against
    /// `nq`, each task keeping those that can be among the `rank` best as it goes
    /// ([`super::pool`]): a task scores its points into a buffer that stays in the
    /// cache rather than into a lake-sized one.
    fn nibble_pool(&self, nibbles: &[u8], nq: &super::nibbles::NibbleQuery, rank: usize) -> Kept {
        use rayon::prelude::*;
        let stride = super::nibbles::stride(self.dim);
        let shared = SharedFloor::new();
        nibbles[..self.points * stride]
            .par_chunks(stride * SCAN_CHUNK)
            .enumerate()
            .fold(
                || Kept::new(rank),
                |mut kept, (c, points)| {
                    let mut buf = [0.0f32; SCAN_CHUNK];
                    let out = &mut buf[..points.len() / stride];
                    super::nibbles::scores_into(nq, points, out);
                    kept.absorb(c * SCAN_CHUNK, out, &shared);
                    kept
                },
            )
            .reduce(|| Kept::new(rank), Kept::merge)
    }

    /// Point `id`'s code, if there is such a point: what the catalog reads back for a
    /// vector it left to the generation (`catalog::held`).
    pub fn code(&self, id: usize) -> Option<Code> {
        if id >= self.points {
            return None;
        }
        let p = self.point(id);
        Some(Code {
            scale: point_scale(p),
            codes: p[4..].to_vec(),
        })
    }

    /// Point `id` as a graph point (scale, then codes).
    fn point(&self, id: usize) -> &[i8] {
        let stride = 4 + self.dim;
        bytemuck::cast_slice(&self.map[id * stride..(id + 1) * stride])
    }

    /// The similarity of the unit vector `q` with every point, by point id. Empty when
    /// `q` has another dimension.
    pub fn scores(&self, q: &[f32]) -> Vec<(usize, f32)> {
        use rayon::prelude::*;
        if q.len() != self.dim {
            return Vec::new();
        }
        let stride = 4 + self.dim;
        // The file's bytes are the points' i8 values, written as bytes.
        let bytes: &[u8] = &self.map[..self.points * stride];
        bytes
            .par_chunks(stride * SCAN_CHUNK)
            .enumerate()
            .flat_map_iter(|(c, chunk)| {
                chunk
                    .chunks_exact(stride)
                    .enumerate()
                    .map(move |(i, p)| (c * SCAN_CHUNK + i, point_dot(q, bytemuck::cast_slice(p))))
            })
            .collect()
    }
}

/// Map the generation file at `path`, which must be `want` bytes long (`points` points
/// of dimension `dim`, for the message).
fn map_exact(
    path: &std::path::Path,
    want: u64,
    points: usize,
    dim: usize,
) -> Result<memmap2::Mmap, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let len = file
        .metadata()
        .map_err(|e| format!("{}: {e}", path.display()))?
        .len();
    if len != want {
        return Err(format!(
            "{} holds {len} bytes, {points} points of {dim} need {want}",
            path.display()
        ));
    }
    // SAFETY: a generation's files are written once, synced and renamed into place, and
    // never written again: only truncation by hand under the index directory can change
    // the bytes under the map (the same bargain tantivy's segments make). Every read of
    // the map is bounds-checked against the length verified above.
    unsafe { super::pages::map(&file) }.map_err(|e| format!("{}: {e}", path.display()))
}

/// The quantized scores of a run of graph points ([`point`]) against the quantized query
/// `q` (`step` a unit of it), into `out`: one dispatch per run, so that the whole loop is
/// compiled for the CPU's vector extensions (AVX2 here) with the integer kernel inlined.
/// Dispatched per point from a closure, it ran in the portable SSE2 version, at twice the
/// CPU. The products are exact integers whatever the instructions.
struct QuantizedScores<'a> {
    q: &'a [i8],
    step: f32,
    points: &'a [i8],
    out: &'a mut [f32],
}

impl pulp::WithSimd for QuantizedScores<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        let stride = 4 + self.q.len();
        for (p, out) in self.points.chunks_exact(stride).zip(self.out.iter_mut()) {
            let dot = crate::compact::lanes_i8(self.q, &p[4..]) as f32;
            *out = point_scale(p) * self.step * dot;
        }
    }
}

/// The pool a 4-bit scan rescores for the `n` best (see [`super::NIBBLE_POOL_PER_RESULT`]).
fn pool_of(n: usize) -> usize {
    (n * super::NIBBLE_POOL_PER_RESULT).max(super::NIBBLE_POOL_MIN)
}

/// What a scan scored.
enum Scores<'a> {
    /// The quantized score of every point, by id.
    All(Vec<f32>),
    /// The 4-bit copy's best points, kept for a pool of the best to be rescored, not
    /// every point within the slack (4 bits have no useful bound); and the query, to
    /// score every point again (from the copy) for a larger pool.
    Pooled(Kept, super::nibbles::NibbleQuery, &'a [u8]),
}

/// A query's quantized scores over [`MappedCodes`], from which the exact top points are
/// read ([`MappedCodes::scan`]).
pub struct Scan<'a> {
    codes: &'a MappedCodes,
    q: &'a [f32],
    scores: Scores<'a>,
    /// How far below the n-th best quantized score a point can still be among the n
    /// best in f32: twice the bound on a quantized score's error.
    slack: f32,
}

impl Scan<'_> {
    /// The `n` points most similar to the query, best first, ties by id, with their f32
    /// similarity: exactly what the `n` best of [`MappedCodes::scores`] are. At least
    /// `n` points score at least the n-th best quantized score less the error bound, so
    /// the n-th best f32 score does too; a point quantized below that by more than the
    /// bound again scores below it in f32, and is not looked at. Over a 4-bit copy the
    /// pool of the best 4-bit scores is rescored instead: the `n` best but for the rare
    /// point the pool misses, and exactly them when the pool is every point.
    pub fn top(&self, n: usize) -> Vec<(usize, f32)> {
        use rayon::prelude::*;
        let n = n.min(self.len());
        if n == 0 {
            return Vec::new();
        }
        // A 4-bit scan rescores a pool of its best (see `NIBBLE_POOL_PER_RESULT`); an
        // 8-bit one every point within the error bound of the n-th best.
        let ids = match &self.scores {
            Scores::All(approx) => super::select::within(approx, n, self.slack),
            Scores::Pooled(kept, nq, nibbles) => {
                let rank = pool_of(n).min(self.len());
                if rank <= kept.rank() {
                    kept.within(rank)
                } else {
                    self.codes.nibble_pool(nibbles, nq, rank).within(rank)
                }
            }
        };
        // On both cores: a thousand points of the 8-bit codes, scattered over them.
        let near: Vec<(usize, f32)> = ids
            .into_par_iter()
            .with_min_len(RESCORE_TASK)
            .map(|id| (id, point_dot(self.q, self.codes.point(id))))
            .collect();
        best(near, n)
    }

    /// Points scored.
    pub fn len(&self) -> usize {
        match &self.scores {
            Scores::All(approx) => approx.len(),
            Scores::Pooled(..) => self.codes.points,
        }
    }

    /// Whether no point was scored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `codes` as a mapped `codes.bin` in `dir`.
    fn mapped(dir: &std::path::Path, codes: &[Code]) -> MappedCodes {
        let dim = codes[0].dim();
        let bytes: Vec<u8> = codes
            .iter()
            .flat_map(|c| point(c).into_iter().map(|b| b as u8))
            .collect();
        let path = dir.join("codes.bin");
        std::fs::write(&path, bytes).unwrap();
        MappedCodes::open(&path, dim, codes.len()).unwrap()
    }

    #[test]
    fn the_quantized_scan_finds_exactly_the_best_points_of_the_f32_scores() {
        let d = tempfile::tempdir().unwrap();
        let mut rng = fastrand::Rng::with_seed(5);
        for dim in [8, 64, 512] {
            // Families of near-identical vectors (as siblings' descriptions are), exact
            // duplicates (ties) and zero vectors among unrelated ones.
            let mut vs: Vec<Vec<f32>> = Vec::new();
            for _ in 0..40 {
                let base: Vec<f32> = (0..dim).map(|_| rng.f32() - 0.5).collect();
                for _ in 0..rng.usize(1..60) {
                    vs.push(base.iter().map(|x| x + 0.02 * (rng.f32() - 0.5)).collect());
                }
                vs.push(base);
            }
            vs.push(vs[3].clone());
            vs.push(vec![0.0; dim]);
            let codes: Vec<Code> = vs.iter().map(|v| Code::new(&normalized(v))).collect();
            let m = mapped(d.path(), &codes);
            let mut queries: Vec<Vec<f32>> = (0..12)
                .map(|_| normalized(&(0..dim).map(|_| rng.f32() - 0.5).collect::<Vec<_>>()))
                .collect();
            queries.push(normalized(&vs[10]));
            queries.push(codes[3].to_f32());
            for q in &queries {
                let scan = m.scan(q, 1);
                assert_eq!(scan.len(), codes.len());
                for n in [1, 5, 37, 200, codes.len(), codes.len() + 3] {
                    assert_eq!(scan.top(n), best(m.scores(q), n), "dim {dim}, n {n}");
                }
            }
            // A zero query scores every point 0, by id; another dimension scores none.
            let zero = vec![0.0; dim];
            assert_eq!(m.scan(&zero, 3).top(3), best(m.scores(&zero), 3));
            assert!(m.scan(&[0.5; 3], 3).top(3).is_empty());
        }
    }

    /// [`mapped`] with the codes' 4-bit copy beside them.
    fn mapped_with_nibbles(dir: &std::path::Path, codes: &[Code]) -> MappedCodes {
        let mut m = mapped(dir, codes);
        let bytes: Vec<u8> = codes
            .iter()
            .flat_map(super::super::nibbles::nibble_point)
            .collect();
        let path = dir.join("nibbles.bin");
        std::fs::write(&path, bytes).unwrap();
        m.add_nibbles(&path).unwrap();
        m
    }

    #[test]
    fn a_4_bit_scan_is_exact_when_its_pool_holds_every_point_and_near_it_beyond() {
        let d = tempfile::tempdir().unwrap();
        let mut rng = fastrand::Rng::with_seed(17);
        let unit = |rng: &mut fastrand::Rng, dim: usize| {
            normalized(&(0..dim).map(|_| rng.f32() - 0.5).collect::<Vec<_>>())
        };
        // Fewer points than the smallest pool: every point is rescored, so the result is
        // the exact one, ties and zero vectors included.
        let mut small: Vec<Code> = (0..300).map(|_| Code::new(&unit(&mut rng, 64))).collect();
        small.push(small[7].clone());
        small.push(Code::new(&[0.0; 64]));
        let m = mapped_with_nibbles(d.path(), &small);
        assert!(m.has_nibbles());
        for _ in 0..10 {
            let q = unit(&mut rng, 64);
            for n in [1, 10, 200, small.len() + 1] {
                assert_eq!(m.scan(&q, n).top(n), best(m.scores(&q), n), "n {n}");
                // Scanned for fewer: the larger pool is scored again.
                assert_eq!(m.scan(&q, 1).top(n), best(m.scores(&q), n), "n {n}");
            }
        }
        // Families of near-identical vectors, as siblings' descriptions are, beyond the
        // pool: the 10 best are the exact 10 best.
        let mut vs: Vec<Code> = Vec::new();
        for _ in 0..200 {
            let base = unit(&mut rng, 128);
            for _ in 0..rng.usize(5..40) {
                let v: Vec<f32> = base.iter().map(|x| x + 0.03 * (rng.f32() - 0.5)).collect();
                vs.push(Code::new(&normalized(&v)));
            }
        }
        assert!(vs.len() > 2 * crate::search::ann::NIBBLE_POOL_MIN);
        let e = tempfile::tempdir().unwrap();
        let m = mapped_with_nibbles(e.path(), &vs);
        for i in 0..20 {
            // Queries near a point (as a question near its file) and random ones.
            let q = if i % 2 == 0 {
                let c = vs[rng.usize(..vs.len())].to_f32();
                normalized(
                    &c.iter()
                        .map(|x| x + 0.05 * (rng.f32() - 0.5))
                        .collect::<Vec<_>>(),
                )
            } else {
                unit(&mut rng, 128)
            };
            assert_eq!(m.scan(&q, 10).top(10), best(m.scores(&q), 10), "query {i}");
        }
    }

    #[test]
    fn a_scan_of_several_chunks_scores_every_point_in_its_place() {
        // More points than a parallel task takes, the last chunk partial: each chunk's
        // scores land at its points' ids.
        let d = tempfile::tempdir().unwrap();
        let mut rng = fastrand::Rng::with_seed(9);
        let dim = 24;
        let codes: Vec<Code> = (0..2 * SCAN_CHUNK + 37)
            .map(|_| {
                Code::new(&normalized(
                    &(0..dim).map(|_| rng.f32() - 0.5).collect::<Vec<_>>(),
                ))
            })
            .collect();
        let m = mapped(d.path(), &codes);
        let q = normalized(&(0..dim).map(|_| rng.f32() - 0.5).collect::<Vec<_>>());
        let scan = m.scan(&q, 1);
        assert_eq!(scan.len(), codes.len());
        let Scores::All(approx) = &scan.scores else {
            panic!("an 8-bit scan scores every point")
        };
        for id in [0, SCAN_CHUNK - 1, SCAN_CHUNK, 2 * SCAN_CHUNK + 36] {
            let exact = point_dot(&q, &point(&codes[id]));
            assert!((approx[id] - exact).abs() <= scan.slack, "{id}");
        }
        for n in [1, 10, 200, codes.len()] {
            assert_eq!(scan.top(n), best(m.scores(&q), n), "n {n}");
        }
    }

    #[test]
    fn the_pool_kept_while_scanning_is_the_pool_of_every_4_bit_score() {
        // Several tasks' worth of points, ties among them (repeated codes): the points
        // rescored, and so the answer, are those of a selection over every 4-bit score.
        let d = tempfile::tempdir().unwrap();
        let mut rng = fastrand::Rng::with_seed(23);
        let dim = 64;
        let mut codes: Vec<Code> = (0..3 * SCAN_CHUNK + 101)
            .map(|_| {
                Code::new(&normalized(
                    &(0..dim).map(|_| rng.f32() - 0.5).collect::<Vec<_>>(),
                ))
            })
            .collect();
        for i in 0..500 {
            codes[SCAN_CHUNK + 7 * i] = codes[11].clone();
        }
        let m = mapped_with_nibbles(d.path(), &codes);
        let stride = super::super::nibbles::stride(dim);
        for i in 0..8 {
            let q = if i == 0 {
                codes[11].to_f32()
            } else {
                normalized(&(0..dim).map(|_| rng.f32() - 0.5).collect::<Vec<_>>())
            };
            let nq = super::super::nibbles::NibbleQuery::new(&q).unwrap();
            let mut every = vec![0.0f32; codes.len()];
            let bytes = m.nibbles.as_ref().unwrap();
            super::super::nibbles::scores_into(&nq, &bytes[..codes.len() * stride], &mut every);
            for (scanned, n) in [(10, 10), (200, 200), (10, 400)] {
                let rank = pool_of(n).min(codes.len());
                let want: Vec<(usize, f32)> = super::super::select::within(&every, rank, 0.0)
                    .into_iter()
                    .map(|id| (id, point_dot(&q, m.point(id))))
                    .collect();
                let scan = m.scan(&q, scanned);
                let Scores::Pooled(kept, ..) = &scan.scores else {
                    panic!("a scan with a 4-bit copy keeps a pool")
                };
                assert!(kept.rank() == pool_of(scanned));
                assert_eq!(scan.top(n), best(want, n), "query {i}, n {n}");
            }
        }
    }

    #[test]
    fn dot_matches_the_naive_sum_at_every_length() {
        for len in [0, 1, 7, 8, 9, 31, 512] {
            let a: Vec<f32> = (0..len).map(|i| (i as f32 * 0.37).sin()).collect();
            let b: Vec<f32> = (0..len).map(|i| (i as f32 * 0.11).cos()).collect();
            let naive: f64 = a.iter().zip(&b).map(|(x, y)| f64::from(x * y)).sum();
            assert!((f64::from(dot(&a, &b)) - naive).abs() < 1e-4, "len {len}");
        }
    }

    #[test]
    fn identical_zero_and_odd_codes_give_a_distance_in_range() {
        let d = CodeCosine;
        let c = Code::new(&[0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1]);
        let v = point(&c);
        let x = d.eval(&v, &v);
        assert!((0.0..1e-5).contains(&x), "{x}");
        let zero = point(&Code::new(&[0.0; 9]));
        assert_eq!(d.eval(&zero, &zero), 1.0);
        assert_eq!(d.eval(&zero, &v), 1.0);
        assert_eq!(d.eval(&v, &v[..3]), 1.0);
        assert_eq!(d.eval(&v[..2], &v[..2]), 1.0);
        let neg = point(&Code {
            scale: c.scale,
            codes: c.codes.iter().map(|x| -x).collect(),
        });
        assert!((d.eval(&v, &neg) - 2.0).abs() < 1e-5);
        let q = normalized(&[0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1]);
        assert!((point_dot(&q, &v) - 1.0).abs() < 1e-3);
        let mut nan = v.clone();
        nan[..4].copy_from_slice(&f32::NAN.to_le_bytes().map(|b| b as i8));
        assert_eq!(d.eval(&nan, &v), 1.0);
        assert_eq!(normalized(&[f32::INFINITY, 1.0]), vec![0.0, 0.0]);
    }

    #[test]
    fn flat_top_is_best_first_with_ties_by_row() {
        let mut f = Flat::new(2);
        assert!(f.push_f32(&[1.0, 0.0]));
        assert!(f.push_f32(&[0.0, 3.0]));
        assert!(f.push_f32(&[2.0, 0.0])); // same direction as row 0: a tie
        assert!(f.push_f32(&[0.0, 0.0]));
        assert!(!f.push_f32(&[1.0, 0.0, 0.0]));
        assert_eq!(f.len(), 4);
        let top = f.top(&[1.0, 0.0], 3);
        assert_eq!(
            top.iter().map(|t| t.0).collect::<Vec<_>>(),
            vec![0, 2, 1],
            "{top:?}"
        );
        assert!((top[0].1 - 1.0).abs() < 1e-6);
        assert_eq!(f.top(&[1.0, 0.0], 10).len(), 4);
        assert!(f.top(&[1.0], 3).is_empty());
        assert!(Flat::new(2).top(&[1.0, 0.0], 3).is_empty());
    }
}
