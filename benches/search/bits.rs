//! What a 1-bit first pass would keep, before it is built: `--existing IDX --bits`
//! reduces every code to its signs (32 bytes at 256 dimensions, a quarter of the 4-bit
//! pass's bytes) and counts, for each number of points kept by the signs, how many of the
//! exact 200 and 10 best survive the chain a scan would run — the kept points rescored by
//! the 4-bit pass, its pool of 1,000 rescored exactly. Two sign scores: the query's own
//! signs against the point's (Hamming: XOR and popcount, the cheapest), and the query's
//! 4-bit values against the point's signs (four bit planes, AND and popcount).

use lakestar_index::compact::Code;
use lakestar_index::search::ann::dist::point;
use lakestar_index::search::ann::nibbles::{nibble_point, scores_into, NibbleQuery};
use std::time::Instant;

/// Points the signs keep.
const KEPT: [usize; 6] = [2_000, 5_000, 10_000, 20_000, 50_000, 100_000];
/// The 4-bit pass's pool (the scans' `pool` for 200 results).
const POOL: usize = 1_000;

/// The sign bits of `v`, 64 dimensions a word (a zero counts as positive).
fn signs<T: Copy + PartialOrd + Default>(v: &[T]) -> Vec<u64> {
    let mut out = vec![0u64; v.len().div_ceil(64)];
    for (i, &x) in v.iter().enumerate() {
        if x < T::default() {
            out[i / 64] |= 1 << (i % 64);
        }
    }
    out
}

/// The query's magnitudes as four bit planes of a 4-bit value, with its signs: the
/// asymmetric score is `Σ_d |q_d|·(±1)`, the sign the product of both signs.
struct Planes {
    planes: [Vec<u64>; 4],
    neg: Vec<u64>,
}

fn planes(q: &[f32]) -> Planes {
    let max = q.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    let words = q.len().div_ceil(64);
    let mut planes: [Vec<u64>; 4] = std::array::from_fn(|_| vec![0u64; words]);
    for (i, x) in q.iter().enumerate() {
        let m = if max > 0.0 {
            (x.abs() / max * 15.0).round() as u32
        } else {
            0
        };
        for (b, plane) in planes.iter_mut().enumerate() {
            if m >> b & 1 == 1 {
                plane[i / 64] |= 1 << (i % 64);
            }
        }
    }
    Planes {
        planes,
        neg: signs(q),
    }
}

/// `Σ |q|·s` where `s` is +1 where the signs agree: the total minus twice the part
/// where they differ, each plane weighted by its bit.
fn plane_score(p: &Planes, x: &[u64]) -> i32 {
    let mut differ = 0i32;
    let mut total = 0i32;
    for (b, plane) in p.planes.iter().enumerate() {
        let (mut d, mut t) = (0u32, 0u32);
        for ((&w, &n), &s) in plane.iter().zip(&p.neg).zip(x) {
            d += (w & (n ^ s)).count_ones();
            t += w.count_ones();
        }
        differ += (d as i32) << b;
        total += (t as i32) << b;
    }
    total - 2 * differ
}

/// Measure and print (see the module's comment).
pub fn bits_recall(codes: &[Code], queries: &[Vec<f32>]) {
    let points: Vec<Vec<i8>> = codes.iter().map(point).collect();
    let nib: Vec<u8> = codes.iter().flat_map(nibble_point).collect();
    let stride = nib.len() / codes.len().max(1);
    let bits: Vec<Vec<u64>> = codes.iter().map(|c| signs(&c.codes)).collect();
    let kinds = ["hamming", "4-bit query planes"];
    let mut hit200 = vec![vec![0usize; KEPT.len()]; kinds.len()];
    let mut hit10 = vec![vec![0usize; KEPT.len()]; kinds.len()];
    let (mut n200, mut n10) = (0usize, 0usize);
    let mut spent = [0.0f64; 2];
    for q in queries {
        let (exact, order) = crate::exact_order(&points, q);
        let (k200, k10) = (order.len().min(200), order.len().min(10));
        let Some(nq) = NibbleQuery::new(q) else {
            continue;
        };
        if k10 == 0 {
            continue;
        }
        let (f200, f10) = (exact[order[k200 - 1]] - 1e-5, exact[order[k10 - 1]] - 1e-5);
        n200 += k200;
        n10 += k10;
        let qs = signs(q);
        let qp = planes(q);
        for (kind, hits200) in hit200.iter_mut().enumerate() {
            let started = Instant::now();
            let score: Vec<i32> = bits
                .iter()
                .map(|x| match kind {
                    0 => {
                        -(qs.iter()
                            .zip(x)
                            .map(|(a, b)| (a ^ b).count_ones())
                            .sum::<u32>() as i32)
                    }
                    _ => plane_score(&qp, x),
                })
                .collect();
            spent[kind] += started.elapsed().as_secs_f64();
            let mut by: Vec<usize> = (0..codes.len()).collect();
            by.sort_by(|&a, &b| score[b].cmp(&score[a]).then(a.cmp(&b)));
            for (k, &kept) in KEPT.iter().enumerate() {
                let chosen = &by[..kept.min(by.len())];
                let mut four = vec![0.0f32; chosen.len()];
                for (i, &c) in chosen.iter().enumerate() {
                    scores_into(&nq, &nib[c * stride..(c + 1) * stride], &mut four[i..i + 1]);
                }
                let mut pool: Vec<usize> = (0..chosen.len()).collect();
                pool.sort_by(|&a, &b| four[b].total_cmp(&four[a]));
                let mut kept_exact: Vec<f32> =
                    pool.iter().take(POOL).map(|&i| exact[chosen[i]]).collect();
                kept_exact.sort_by(|a, b| b.total_cmp(a));
                hits200[k] += kept_exact.iter().take(k200).filter(|&&s| s >= f200).count();
                hit10[kind][k] += kept_exact.iter().take(k10).filter(|&&s| s >= f10).count();
            }
        }
    }
    println!(
        "1-bit first pass over {} points, then the 4-bit pool of {POOL} ({} questions):",
        codes.len(),
        queries.len()
    );
    for (kind, name) in kinds.iter().enumerate() {
        println!(
            "{name} (scored in {:.2} ms a question, one thread, not vectorized):",
            spent[kind] * 1e3 / queries.len().max(1) as f64
        );
        for (k, kept) in KEPT.iter().enumerate() {
            println!(
                "  kept {kept:>7}: recall@200 {:.4}, recall@10 {:.4}",
                hit200[kind][k] as f64 / n200.max(1) as f64,
                hit10[kind][k] as f64 / n10.max(1) as f64
            );
        }
    }
}
