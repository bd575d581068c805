//! Compact vectors: a vector's direction as one signed byte per component and one
//! scale, a quarter of the f32 bytes.
//!
//! Retrieval compares directions only (cosine of unit vectors), so a code keeps the
//! direction: components are scaled so the largest is ±127 and rounded, and the scale is
//! `1 / ‖code‖`, which makes `scale · code` a unit vector again. The rounding moves a
//! cosine by about 10⁻³ on 256–768 dimensions (tested below), far less than what separates
//! a question's candidates.
//!
//! CatalogReader blobs (`embeddings.vector`) are written by [`Code::to_blob`]: a tag byte, the
//! scale, the codes, zero padding to a length of `1 mod 4`. Blobs of earlier versions are
//! raw little-endian f32 (length `0 mod 4`) and still read, so an old catalog keeps
//! working and shrinks as it is re-embedded or compacted.

/// Tag of a code blob; its low two bits hold the number of padding bytes.
const TAG: u8 = 0xA0;
/// Tag and scale before the codes.
const HEAD: usize = 5;

/// A vector's direction: `scale · codes` is its unit vector (the zero vector: all zeros,
/// scale 0).
#[derive(Debug, Clone, PartialEq)]
pub struct Code {
    /// `1 / ‖codes‖`, or 0 for the zero vector.
    pub scale: f32,
    /// Components scaled to at most ±127 and rounded.
    pub codes: Vec<i8>,
}

impl Code {
    /// The code of `v`'s direction. Zero, NaN or infinite input gives the zero code
    /// (similar to nothing), like [`crate::embed::l2_normalize`].
    pub fn new(v: &[f32]) -> Code {
        let max = v.iter().fold(0.0f32, |m, x| m.max(x.abs()));
        if !max.is_finite() || max == 0.0 || v.iter().any(|x| !x.is_finite()) {
            return Code {
                scale: 0.0,
                codes: vec![0; v.len()],
            };
        }
        let k = 127.0 / max;
        let codes: Vec<i8> = v
            .iter()
            .map(|x| (x * k).round().clamp(-127.0, 127.0) as i8)
            .collect();
        let norm = norm_sq(&codes).sqrt();
        Code {
            scale: if norm > 0.0 { 1.0 / norm } else { 0.0 },
            codes,
        }
    }

    /// Components.
    pub fn dim(&self) -> usize {
        self.codes.len()
    }

    /// The unit vector it stands for.
    pub fn to_f32(&self) -> Vec<f32> {
        self.codes
            .iter()
            .map(|&c| f32::from(c) * self.scale)
            .collect()
    }

    /// Cosine similarity of the unit vector `q` with this direction.
    pub fn dot(&self, q: &[f32]) -> f32 {
        self.scale * dot_f32_i8(q, &self.codes)
    }

    /// The catalog blob: tag, scale, codes, padding.
    pub fn to_blob(&self) -> Vec<u8> {
        let pad = (4 - (HEAD + self.codes.len() - 1) % 4) % 4;
        let mut out = Vec::with_capacity(HEAD + self.codes.len() + pad);
        out.push(TAG | pad as u8);
        out.extend(self.scale.to_le_bytes());
        out.extend(self.codes.iter().map(|&c| c as u8));
        out.resize(out.len() + pad, 0);
        out
    }

    /// Read a blob: a code, or the raw f32 of earlier catalogs (coded here). `None` for
    /// bytes that are neither.
    pub fn from_blob(b: &[u8]) -> Option<Code> {
        match b.len() % 4 {
            0 => {
                let v: Vec<f32> = b
                    .chunks_exact(4)
                    .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                    .collect();
                Some(Code::new(&v))
            }
            1 if b[0] & !3 == TAG => {
                let pad = usize::from(b[0] & 3);
                let end = b.len().checked_sub(pad).filter(|&e| e >= HEAD)?;
                let scale = f32::from_le_bytes([b[1], b[2], b[3], b[4]]);
                if !scale.is_finite() || scale < 0.0 {
                    return None;
                }
                let codes = b[HEAD..end].iter().map(|&c| c as i8).collect();
                Some(Code { scale, codes })
            }
            _ => None,
        }
    }
}

/// `Σ c²` of codes, exact in f32 up to 1,040 components of ±127 (and near enough above).
fn norm_sq(codes: &[i8]) -> f32 {
    dot_i8(codes, codes) as f32
}

/// Dot product of an f32 vector and codes.
pub fn dot_f32_i8(a: &[f32], b: &[i8]) -> f32 {
    pulp::Arch::new().dispatch(|| lanes_f32(a, b))
}

/// Dot product of two code slices, exact in i32 (±127² × 2¹⁷ components fits).
pub fn dot_i8(a: &[i8], b: &[i8]) -> i32 {
    pulp::Arch::new().dispatch(|| lanes_i8(a, b))
}

/// Dot product of two f32 slices.
pub fn dot_f32(a: &[f32], b: &[f32]) -> f32 {
    pulp::Arch::new().dispatch(|| lanes_f32(a, b))
}

// The kernels below are plain loops over independent lane sums, which the compiler
// turns into SIMD: one running sum is a serial dependency it may not reorder, so it
// would not vectorize. They are inlined into `pulp`'s dispatch, which compiles them
// once more with AVX2 and FMA and picks that version at run time on CPUs that have
// them (the portable x86-64 baseline has only SSE2, with which the build of the graph
// over codes takes twice the CPU of the f32 one).

/// `Σ a·b` over f32 and any component type that converts to f32 (f32 itself, codes).
#[inline(always)]
fn lanes_f32<T: Copy + Into<f32>>(a: &[f32], b: &[T]) -> f32 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0.0f32; 16];
    let (ca, cb) = (a.chunks_exact(16), b.chunks_exact(16));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for i in 0..16 {
            acc[i] += x[i] * y[i].into();
        }
    }
    let mut tail = 0.0f32;
    for (x, &y) in ra.iter().zip(rb) {
        tail += x * y.into();
    }
    acc.iter().sum::<f32>() + tail
}

#[inline(always)]
pub(crate) fn lanes_i8(a: &[i8], b: &[i8]) -> i32 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0i32; 32];
    let (ca, cb) = (a.chunks_exact(32), b.chunks_exact(32));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for i in 0..32 {
            acc[i] += i32::from(i16::from(x[i]) * i16::from(y[i]));
        }
    }
    let mut tail = 0i32;
    for (&x, &y) in ra.iter().zip(rb) {
        tail += i32::from(x) * i32::from(y);
    }
    acc.iter().sum::<i32>() + tail
}

/// Cosine of two code slices (their scales are not needed: a code's norm is its own),
/// 0 when either is zero.
pub fn cosine_i8(a: &[i8], b: &[i8]) -> f32 {
    let (ab, aa, bb) = (
        dot_i8(a, b) as f32,
        dot_i8(a, a) as f32,
        dot_i8(b, b) as f32,
    );
    if aa == 0.0 || bb == 0.0 {
        return 0.0;
    }
    ab / (aa.sqrt() * bb.sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(n: usize, seed: u64) -> Vec<f32> {
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut v: Vec<f32> = (0..n).map(|_| rng.f32() - 0.5).collect();
        crate::embed::l2_normalize(&mut v);
        v
    }

    fn dot(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn a_code_keeps_cosines_within_a_few_thousandths() {
        for dim in [8, 256, 384, 512, 768] {
            let mut worst = 0.0f32;
            for s in 0..50 {
                let (a, b) = (unit(dim, s), unit(dim, s + 1000));
                let (ca, cb) = (Code::new(&a), Code::new(&b));
                let exact = dot(&a, &b);
                worst = worst.max((ca.dot(&b) - exact).abs());
                worst = worst.max((cosine_i8(&ca.codes, &cb.codes) - exact).abs());
                let back = ca.to_f32();
                assert!((dot(&back, &back) - 1.0).abs() < 1e-4, "unit again");
            }
            assert!(worst < 0.01, "dim {dim}: worst cosine error {worst}");
        }
    }

    #[test]
    fn blobs_round_trip_and_old_f32_blobs_still_read() {
        for dim in [0, 1, 2, 3, 4, 5, 511, 512] {
            let v = unit(dim, 7);
            let c = Code::new(&v);
            let blob = c.to_blob();
            assert_eq!(blob.len() % 4, 1, "dim {dim}");
            assert_eq!(Code::from_blob(&blob), Some(c.clone()), "dim {dim}");
            let old: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
            assert_eq!(Code::from_blob(&old), Some(c), "dim {dim}");
        }
        assert_eq!(Code::from_blob(&[1, 2]), None);
        assert_eq!(Code::from_blob(&[0x11, 0, 0, 0, 0]), None, "no tag");
        let mut bad = Code::new(&[0.5, 0.5, 0.5]).to_blob();
        bad[1..5].copy_from_slice(&f32::NAN.to_le_bytes());
        assert_eq!(Code::from_blob(&bad), None, "a NaN scale is refused");
        assert_eq!(
            Code::from_blob(&[TAG | 3, 0, 0]),
            None,
            "shorter than its padding"
        );
    }

    #[test]
    fn zero_and_non_finite_vectors_code_to_nothing() {
        for v in [
            vec![0.0f32; 4],
            vec![f32::NAN, 1.0],
            vec![f32::INFINITY, 0.0],
        ] {
            let c = Code::new(&v);
            assert_eq!(c.scale, 0.0);
            assert!(c.codes.iter().all(|&x| x == 0));
            assert_eq!(c.dot(&[1.0; 4]), 0.0);
            assert_eq!(cosine_i8(&c.codes, &c.codes), 0.0);
        }
        // The largest component codes to ±127 exactly.
        assert_eq!(Code::new(&[-2.0, 1.0]).codes, vec![-127, 64]);
    }

    #[test]
    fn the_kernels_match_the_naive_sums_at_every_length() {
        for len in [0, 1, 15, 16, 17, 100, 512] {
            let a: Vec<i8> = (0..len).map(|i| ((i * 37) % 255) as i8).collect();
            let b: Vec<i8> = (0..len).map(|i| ((i * 11 + 5) % 255) as i8).collect();
            let naive: i64 = a
                .iter()
                .zip(&b)
                .map(|(&x, &y)| i64::from(x) * i64::from(y))
                .sum();
            assert_eq!(i64::from(dot_i8(&a, &b)), naive, "len {len}");
            let f: Vec<f32> = (0..len).map(|i| (i as f32 * 0.3).sin()).collect();
            let naive: f64 = f
                .iter()
                .zip(&b)
                .map(|(&x, &y)| f64::from(x) * f64::from(y))
                .sum();
            assert!(
                (f64::from(dot_f32_i8(&f, &b)) - naive).abs() < 1e-2,
                "len {len}"
            );
        }
    }
}
