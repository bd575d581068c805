//! The AVX2 kernels of the 4-bit scan ([`nibble_scores`], and [`nibble_scores_vnni`]
//! where the CPU has AVX-VNNI): the score of every point of a generation's `nibbles.bin`
//! against a query, four points at a time so that one horizontal sum serves four.
//!
//! Hand-written with `core::arch`: it rests on `vpmaddubsw` (32 unsigned bytes times 32
//! signed ones, neighbours added, in one instruction — what the nibbles' offset-binary
//! layout is for), which LLVM does not find in the portable loop (3× the time, measured
//! on a million points); pulp's safe wrappers, called from the closures this needs, are
//! not inlined (18× slower); and no maintained crate offers a 4-bit × 8-bit integer dot
//! product. The caller detects AVX2 and keeps a portable loop that gives the same bits.
//! (The same treatment of the 8-bit scan, `vpsignb` + `vpmaddubsw`, gains nothing
//! measurable in a search at 100k files and is not here.)

use super::nibbles::NibbleQuery;
use std::arch::x86_64::*;

/// 32 bytes of `b` from `at` as a vector (a safe unaligned load).
#[inline(always)]
fn load(b: &[u8], at: usize) -> __m256i {
    let block: [u8; 32] = b[at..at + 32].try_into().expect("32 bytes");
    bytemuck::cast(block)
}

/// `v` (a multiple of 32 values) as vectors.
fn vectors(v: &[i8]) -> Vec<__m256i> {
    v.chunks_exact(32)
        .map(|c| bytemuck::cast(<[i8; 32]>::try_from(c).expect("32 values")))
        .collect()
}

/// The eight 32-bit lanes of four points' sums as each point's total.
#[inline]
#[target_feature(enable = "avx2")]
fn four_sums(a: __m256i, b: __m256i, c: __m256i, d: __m256i) -> [i32; 4] {
    let h = _mm256_hadd_epi32(_mm256_hadd_epi32(a, b), _mm256_hadd_epi32(c, d));
    // Lane j and j + 4 hold the halves of point j's sum.
    let lanes: [i32; 8] = bytemuck::cast(h);
    [0, 1, 2, 3].map(|j| lanes[j] + lanes[j + 4])
}

/// A point's scale: the four little-endian bytes before its values.
#[inline(always)]
fn scale_of(p: &[u8]) -> f32 {
    f32::from_le_bytes([p[0], p[1], p[2], p[3]])
}

/// Score every whole point of `points` (`stride` bytes each, its values after a 4-byte
/// scale) into `out`: `one` gives a point's lanes, `four` four points' totals at once,
/// `score` a point's score from its total; four points at a time, then the rest one by
/// one.
#[inline(always)]
fn each_point(
    points: &[u8],
    stride: usize,
    out: &mut [f32],
    one: impl Fn(&[u8]) -> __m256i,
    four: impl Fn([__m256i; 4]) -> [i32; 4],
    score: impl Fn(&[u8], i32) -> f32,
) {
    let mut groups = points.chunks_exact(4 * stride);
    let mut outs = out.chunks_exact_mut(4);
    for (p, o) in (&mut groups).zip(&mut outs) {
        let at = |j: usize| &p[j * stride..(j + 1) * stride];
        let sums = four([one(at(0)), one(at(1)), one(at(2)), one(at(3))]);
        for (j, o) in o.iter_mut().enumerate() {
            *o = score(at(j), sums[j]);
        }
    }
    for (p, o) in groups
        .remainder()
        .chunks_exact(stride)
        .zip(outs.into_remainder())
    {
        let lanes: [i32; 8] = bytemuck::cast(one(p));
        *o = score(p, lanes.iter().sum());
    }
}

/// The body of a 4-bit kernel over `points` into `out`: each point's 32-byte blocks
/// split into their low and high nibbles, folded into 32-bit lanes by `$fold(acc, lo,
/// hi, even block, odd block)`, four points' lanes summed at once. A macro so that each
/// kernel compiles it within its own `target_feature` function, where the intrinsics
/// inline.
macro_rules! nibble_kernel {
    ($q:ident, $points:ident, $out:ident, $fold:expr) => {{
        let (even, odd) = (vectors(&$q.even), vectors(&$q.odd));
        let mask = _mm256_set1_epi8(0x0f);
        let fold = $fold;
        let one = |p: &[u8]| {
            let mut acc = _mm256_setzero_si256();
            for (k, (e, o)) in even.iter().zip(&odd).enumerate() {
                let b = load(p, 4 + 32 * k);
                let lo = _mm256_and_si256(b, mask);
                let hi = _mm256_and_si256(_mm256_srli_epi16::<4>(b), mask);
                acc = fold(acc, lo, hi, *e, *o);
            }
            acc
        };
        let four = |[a, b, c, d]: [__m256i; 4]| four_sums(a, b, c, d);
        let (offset, step) = ($q.offset, $q.step);
        let score = |p: &[u8], dot: i32| (dot - offset) as f32 * scale_of(p) * step;
        each_point($points, 4 + 32 * even.len(), $out, one, four, score);
    }};
}

/// `super::nibbles::scores_into` for a query whose half dimension (`even.len()`) is
/// whole 32-byte blocks. No overflow: a pair of products is at most 2 · 15 · 127 in 16
/// bits, an even and an odd pair 4 · 15 · 127 < 2¹⁵, summed into 32 bits.
#[target_feature(enable = "avx2")]
pub(super) fn nibble_scores(q: &NibbleQuery, points: &[u8], out: &mut [f32]) {
    let ones = _mm256_set1_epi16(1);
    nibble_kernel!(q, points, out, |acc, lo, hi, e, o| {
        let s = _mm256_add_epi16(_mm256_maddubs_epi16(lo, e), _mm256_maddubs_epi16(hi, o));
        _mm256_add_epi32(acc, _mm256_madd_epi16(s, ones))
    });
}

/// [`nibble_scores`] with AVX-VNNI's `vpdpbusd`, which multiplies the unsigned nibbles by
/// the signed query bytes and adds each four products into a 32-bit lane in one
/// instruction, where the AVX2 kernel takes four (`vpmaddubsw` twice, `vpaddw`,
/// `vpmaddwd`) and an add: measured on a million points, a tenth less time (BENCHMARKS.md,
/// "Vector search settings"). Exact 32-bit sums, so the same bits.
#[target_feature(enable = "avx2,avxvnni")]
pub(super) fn nibble_scores_vnni(q: &NibbleQuery, points: &[u8], out: &mut [f32]) {
    nibble_kernel!(q, points, out, |acc, lo, hi, e, o| {
        _mm256_dpbusd_avx_epi32(_mm256_dpbusd_avx_epi32(acc, lo, e), hi, o)
    });
}
