//! A 4-bit copy of a generation's codes (`nibbles.bin`), for a first pass that reads half
//! the bytes of the 8-bit scan: the scan of the codes is memory-bound (BENCHMARKS.md, "Vector
//! search settings"), so halving its bytes halves it. Its best points, a pool several
//! times the results asked, are rescored from the 8-bit codes, which keeps nearly all of
//! the exact results.
//!
//! Point `i` is `4 + ⌈dim / 2⌉` bytes at `i · (4 + ⌈dim / 2⌉)`: the reciprocal of its
//! 4-bit code's norm (f32, little-endian), then the code two values a byte, dimension
//! `2j` in the low nibble of byte `j` and `2j + 1` in the high one, each value
//! `v ∈ [-7, 7]` stored as `v + 8` (an odd last dimension's partner is 8, a zero).

use crate::compact::Code;

/// The largest magnitude of a 4-bit value (symmetric, so that a sign flip is exact).
const MAX4: f32 = 7.0;

/// Bytes of one point of dimension `dim`.
pub fn stride(dim: usize) -> usize {
    4 + dim.div_ceil(2)
}

/// `c`'s 4-bit point: its own scale (`max |c| / 7` a step), packed as the module says.
pub fn nibble_point(c: &Code) -> Vec<u8> {
    let max = c.codes.iter().map(|x| x.unsigned_abs()).max().unwrap_or(0);
    let values: Vec<i8> = if max == 0 {
        vec![0; c.codes.len()]
    } else {
        let step = f32::from(max) / MAX4;
        c.codes
            .iter()
            .map(|&x| (f32::from(x) / step).round().clamp(-MAX4, MAX4) as i8)
            .collect()
    };
    let norm: i32 = values.iter().map(|&v| i32::from(v) * i32::from(v)).sum();
    let scale = if norm > 0 {
        1.0 / (norm as f32).sqrt()
    } else {
        0.0
    };
    let mut out = Vec::with_capacity(stride(values.len()));
    out.extend_from_slice(&scale.to_le_bytes());
    for pair in values.chunks(2) {
        let lo = (pair[0] + 8) as u8;
        let hi = pair.get(1).map_or(8, |&v| (v + 8) as u8);
        out.push(lo | (hi << 4));
    }
    out
}

/// The query for [`scores_into`]: `q` quantized to ±127 on its even and odd dimensions
/// apart (as the bytes hold them), with the sum that the nibbles' offset of 8 subtracts.
pub struct NibbleQuery {
    // Quantized to ±127, so that each fits the signed operand of `vpmaddubsw`
    // (`super::avx2`).
    pub(super) even: Vec<i8>,
    pub(super) odd: Vec<i8>,
    pub(super) offset: i32,
    pub(super) step: f32,
}

impl NibbleQuery {
    /// `q` quantized; `None` for a zero or non-finite query (nothing to rank by).
    pub fn new(q: &[f32]) -> Option<NibbleQuery> {
        let max = q.iter().fold(0.0f32, |m, x| m.max(x.abs()));
        if !max.is_finite() || max == 0.0 {
            return None;
        }
        let step = max / 127.0;
        let qi: Vec<i8> = q
            .iter()
            .map(|x| (x / step).round().clamp(-127.0, 127.0) as i8)
            .collect();
        let even: Vec<i8> = qi.iter().step_by(2).copied().collect();
        let mut odd: Vec<i8> = qi.iter().skip(1).step_by(2).copied().collect();
        odd.resize(even.len(), 0);
        let offset = 8 * qi.iter().map(|&v| i32::from(v)).sum::<i32>();
        Some(NibbleQuery {
            even,
            odd,
            offset,
            step,
        })
    }
}

/// The 4-bit score of every point of `points` (whole points of [`stride`] bytes) against
/// `q`, into `out`: the quantized dot product over the point's norm, in units of the
/// query's step. Integer arithmetic, exact whatever the instructions: an AVX2 kernel
/// (with AVX-VNNI where the CPU has it) where the query's half dimension is whole
/// 32-byte blocks (256, 384, 512, 768 dimensions), else a portable loop; all give the
/// same bits.
pub fn scores_into(q: &NibbleQuery, points: &[u8], out: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if q.even.len().is_multiple_of(32)
        && std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("avxvnni")
    {
        // SAFETY: as below, both features just detected.
        unsafe { super::avx2::nibble_scores_vnni(q, points, out) };
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if q.even.len().is_multiple_of(32) && std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the only requirement of a `target_feature` function is that the CPU
        // has the feature, which was just detected.
        unsafe { super::avx2::nibble_scores(q, points, out) };
        return;
    }
    portable_scores_into(q, points, out);
}

/// [`scores_into`] as plain loops over fixed-size blocks, for the compiler to vectorize
/// as it can (it does not find `vpmaddubsw`: 3× the AVX2 kernel's time, measured).
fn portable_scores_into(q: &NibbleQuery, points: &[u8], out: &mut [f32]) {
    let stride = 4 + q.even.len();
    for (p, out) in points.chunks_exact(stride).zip(out.iter_mut()) {
        let scale = f32::from_le_bytes([p[0], p[1], p[2], p[3]]);
        let bytes = &p[4..];
        let mut acc = [0i32; 32];
        let (cb, ce, co) = (
            bytes.chunks_exact(32),
            q.even.chunks_exact(32),
            q.odd.chunks_exact(32),
        );
        let (rb, re, ro) = (cb.remainder(), ce.remainder(), co.remainder());
        for ((b, e), o) in cb.zip(ce).zip(co) {
            for i in 0..32 {
                let lo = i16::from(b[i] & 0x0f);
                let hi = i16::from(b[i] >> 4);
                acc[i] += i32::from(lo * i16::from(e[i])) + i32::from(hi * i16::from(o[i]));
            }
        }
        let mut dot: i32 = acc.iter().sum();
        for ((&b, &e), &o) in rb.iter().zip(re).zip(ro) {
            dot += i32::from(i16::from(b & 0x0f) * i16::from(e))
                + i32::from(i16::from(b >> 4) * i16::from(o));
        }
        *out = (dot - q.offset) as f32 * scale * q.step;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::ann::dist::normalized;

    #[test]
    fn packing_round_trips_and_odd_dimensions_pad_with_a_zero() {
        let c = Code::new(&[1.0, -0.5, 0.25, 0.0, -1.0]);
        let p = nibble_point(&c);
        assert_eq!(p.len(), stride(5));
        let values: Vec<i32> = p[4..]
            .iter()
            .flat_map(|b| [i32::from(b & 0x0f) - 8, i32::from(b >> 4) - 8])
            .collect();
        assert_eq!(values, vec![7, -4, 2, 0, -7, 0]);
        let scale = f32::from_le_bytes([p[0], p[1], p[2], p[3]]);
        assert!((scale - 1.0 / (49.0f32 + 16.0 + 4.0 + 49.0).sqrt()).abs() < 1e-7);
        assert_eq!(nibble_point(&Code::new(&[0.0; 3]))[..4], [0, 0, 0, 0]);
    }

    #[test]
    fn the_kernel_is_the_plain_sum_and_close_to_the_cosine() {
        let mut rng = fastrand::Rng::with_seed(21);
        for dim in [3, 64, 65, 256] {
            let unit = |rng: &mut fastrand::Rng| {
                normalized(&(0..dim).map(|_| rng.f32() - 0.5).collect::<Vec<_>>())
            };
            let q = unit(&mut rng);
            let nq = NibbleQuery::new(&q).unwrap();
            let vs: Vec<Vec<f32>> = (0..50).map(|_| unit(&mut rng)).collect();
            let points: Vec<u8> = vs
                .iter()
                .flat_map(|v| nibble_point(&Code::new(v)))
                .collect();
            let mut out = vec![0.0; vs.len()];
            scores_into(&nq, &points, &mut out);
            for (i, v) in vs.iter().enumerate() {
                let p = nibble_point(&Code::new(v));
                let scale = f32::from_le_bytes([p[0], p[1], p[2], p[3]]);
                let naive: i32 = (0..dim)
                    .map(|d| {
                        let b = p[4 + d / 2];
                        let v = if d % 2 == 0 { b & 0x0f } else { b >> 4 };
                        (i32::from(v) - 8) * ((q[d] / nq.step).round() as i32)
                    })
                    .sum();
                assert!(
                    (out[i] - naive as f32 * scale * nq.step).abs() < 1e-5,
                    "{dim}"
                );
                // 4 bits a dimension keep the cosine to within a few hundredths.
                let cos: f32 = q.iter().zip(v).map(|(a, b)| a * b).sum();
                assert!(
                    (out[i] - cos).abs() < 0.12,
                    "dim {dim}: {} vs {cos}",
                    out[i]
                );
            }
        }
        assert!(NibbleQuery::new(&[0.0; 4]).is_none());
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn both_x86_kernels_give_the_portable_bits() {
        if !std::arch::is_x86_feature_detected!("avx2") {
            return;
        }
        let vnni = std::arch::is_x86_feature_detected!("avxvnni");
        let mut rng = fastrand::Rng::with_seed(8);
        for (dim, n) in [(64, 9), (256, 103), (512, 6)] {
            let q = normalized(&(0..dim).map(|_| rng.f32() - 0.5).collect::<Vec<_>>());
            let nq = NibbleQuery::new(&q).unwrap();
            let points: Vec<u8> = (0..n)
                .flat_map(|i| {
                    // Every value ±7 (the largest sums), and random ones.
                    let v: Vec<f32> = if i % 3 == 0 {
                        (0..dim)
                            .map(|d| if d % 2 == 0 { 1.0 } else { -1.0 })
                            .collect()
                    } else {
                        (0..dim).map(|_| rng.f32() - 0.5).collect()
                    };
                    nibble_point(&Code::new(&v))
                })
                .collect();
            let mut plain = vec![0.0f32; n];
            portable_scores_into(&nq, &points, &mut plain);
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            let mut avx2 = vec![0.0f32; n];
            // SAFETY: AVX2 detected above.
            unsafe { super::super::avx2::nibble_scores(&nq, &points, &mut avx2) };
            assert_eq!(bits(&avx2), bits(&plain), "avx2, dim {dim}");
            if vnni {
                let mut fast = vec![0.0f32; n];
                // SAFETY: AVX2 and AVX-VNNI detected above.
                unsafe { super::super::avx2::nibble_scores_vnni(&nq, &points, &mut fast) };
                assert_eq!(bits(&fast), bits(&plain), "avx-vnni, dim {dim}");
            }
        }
    }

    #[test]
    fn the_dispatched_kernel_gives_the_portable_bits() {
        let mut rng = fastrand::Rng::with_seed(5);
        // 64 and 256 dimensions take the AVX2 kernel where the CPU has it (whole blocks;
        // 4·k points and a remainder), 66 the portable one.
        for (dim, n) in [(64, 9), (256, 103), (256, 4), (66, 7)] {
            let q = normalized(&(0..dim).map(|_| rng.f32() - 0.5).collect::<Vec<_>>());
            let nq = NibbleQuery::new(&q).unwrap();
            let points: Vec<u8> = (0..n)
                .flat_map(|i| {
                    // Extremes too: every value ±7, and a zero point.
                    let v: Vec<f32> = match i % 5 {
                        0 => (0..dim)
                            .map(|d| if d % 3 == 0 { 1.0 } else { -1.0 })
                            .collect(),
                        1 => vec![0.0; dim],
                        _ => (0..dim).map(|_| rng.f32() - 0.5).collect(),
                    };
                    nibble_point(&Code::new(&v))
                })
                .collect();
            let (mut fast, mut plain) = (vec![0.0f32; n], vec![0.0f32; n]);
            scores_into(&nq, &points, &mut fast);
            portable_scores_into(&nq, &points, &mut plain);
            assert_eq!(
                fast.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                plain.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                "dim {dim}"
            );
        }
    }
}
