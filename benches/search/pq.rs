//! What a first pass over fewer bytes than the 4-bit copy would keep, before one is built:
//! `--existing IDX --pq` trains product quantizers on a sample of the generation's points
//! (k-means per subspace), scores every point by table lookups, and counts, for each
//! number of points kept, how many of the exact 200 and 10 best survive when the kept
//! points are rescored exactly (from the 8-bit codes, as a scan's pool is). Also the
//! principal components' share of the variance, and a pass over the first principal
//! dimensions alone (f32: the best a prefix of rotated codes could do).

use lakestar_index::compact::Code;
use lakestar_index::models::top_eigenvectors;
use lakestar_index::search::ann::dist::point;
use rayon::prelude::*;
use std::time::Instant;

/// Points the first pass keeps.
const KEPT: [usize; 7] = [1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000];
/// Points the quantizers and the rotation are trained on.
const TRAIN: usize = 30_000;

/// A product quantizer: `m` subspaces of `sub` dimensions, `k` centroids each.
struct Pq {
    sub: usize,
    m: usize,
    k: usize,
    /// `m × k × sub`.
    centroids: Vec<f32>,
}

fn nearest(c: &[f32], k: usize, sub: usize, x: &[f32]) -> usize {
    (0..k)
        .min_by(|&a, &b| {
            let da: f32 = (0..sub).map(|d| (c[a * sub + d] - x[d]).powi(2)).sum();
            let db: f32 = (0..sub).map(|d| (c[b * sub + d] - x[d]).powi(2)).sum();
            da.total_cmp(&db)
        })
        .unwrap()
}

fn train(sample: &[&[f32]], sub: usize, k: usize) -> Pq {
    let dim = sample[0].len();
    let m = dim / sub;
    let centroids: Vec<f32> = (0..m)
        .into_par_iter()
        .flat_map_iter(|j| {
            let xs: Vec<&[f32]> = sample.iter().map(|v| &v[j * sub..(j + 1) * sub]).collect();
            let mut rng = fastrand::Rng::with_seed(j as u64);
            let mut c: Vec<f32> = (0..k)
                .flat_map(|_| xs[rng.usize(..xs.len())].to_vec())
                .collect();
            for _ in 0..15 {
                let mut sum = vec![0.0f64; k * sub];
                let mut count = vec![0usize; k];
                for x in &xs {
                    let a = nearest(&c, k, sub, x);
                    count[a] += 1;
                    for d in 0..sub {
                        sum[a * sub + d] += f64::from(x[d]);
                    }
                }
                for a in 0..k {
                    if count[a] == 0 {
                        let x = xs[rng.usize(..xs.len())];
                        c[a * sub..(a + 1) * sub].copy_from_slice(x);
                    } else {
                        for d in 0..sub {
                            c[a * sub + d] = (sum[a * sub + d] / count[a] as f64) as f32;
                        }
                    }
                }
            }
            c
        })
        .collect();
    Pq {
        sub,
        m,
        k,
        centroids,
    }
}

impl Pq {
    fn encode(&self, v: &[f32]) -> Vec<u8> {
        (0..self.m)
            .map(|j| {
                let c = &self.centroids[j * self.k * self.sub..(j + 1) * self.k * self.sub];
                nearest(c, self.k, self.sub, &v[j * self.sub..(j + 1) * self.sub]) as u8
            })
            .collect()
    }

    fn table(&self, q: &[f32]) -> Vec<f32> {
        (0..self.m * self.k)
            .map(|i| {
                let (j, a) = (i / self.k, i % self.k);
                let c = &self.centroids[(j * self.k + a) * self.sub..][..self.sub];
                (0..self.sub).map(|d| c[d] * q[j * self.sub + d]).sum()
            })
            .collect()
    }
}

/// Rows of `vs` times the rotation (whose rows are the principal directions).
fn rotate(rot: &[Vec<f32>], v: &[f32]) -> Vec<f32> {
    rot.iter()
        .map(|r| r.iter().zip(v).map(|(a, b)| a * b).sum())
        .collect()
}

/// Count, for each of [`KEPT`], the exact 200 and 10 best among the kept points' exact top.
fn count(score: &[f32], exact: &[f32], f200: f32, f10: f32, hits: &mut [(usize, usize)]) {
    let mut by: Vec<usize> = (0..score.len()).collect();
    by.sort_unstable_by(|&a, &b| score[b].total_cmp(&score[a]));
    for (k, &kept) in KEPT.iter().enumerate() {
        let mut top: Vec<f32> = by[..kept.min(by.len())].iter().map(|&i| exact[i]).collect();
        top.sort_unstable_by(|a, b| b.total_cmp(a));
        hits[k].0 += top.iter().take(200).filter(|&&s| s >= f200).count();
        hits[k].1 += top.iter().take(10).filter(|&&s| s >= f10).count();
    }
}

/// Measure and print (see the module's comment).
pub fn pq_recall(codes: &[Code], queries: &[Vec<f32>]) {
    let points: Vec<Vec<i8>> = codes.iter().map(point).collect();
    let vs: Vec<Vec<f32>> = codes.par_iter().map(|c| c.to_f32()).collect();
    let dim = vs[0].len();
    let mut rng = fastrand::Rng::with_seed(3);
    let sample_ids: Vec<usize> = (0..TRAIN.min(vs.len()))
        .map(|_| rng.usize(..vs.len()))
        .collect();
    // The covariance about zero (cosine compares directions from the origin).
    let mut cov = vec![0.0f64; dim * dim];
    for &i in &sample_ids {
        let v = &vs[i];
        for a in 0..dim {
            for b in a..dim {
                cov[a * dim + b] += f64::from(v[a] * v[b]);
            }
        }
    }
    for a in 0..dim {
        for b in 0..a {
            cov[a * dim + b] = cov[b * dim + a];
        }
    }
    let started = Instant::now();
    let (rows, values) = top_eigenvectors(&cov, dim, dim);
    let total: f64 = values.iter().sum();
    let share = |n: usize| values.iter().take(n).sum::<f64>() / total;
    println!(
        "principal components of {} points ({:.1} s): the first 16/32/64/128 carry {:.3}/{:.3}/{:.3}/{:.3} of the second moment",
        sample_ids.len(),
        started.elapsed().as_secs_f64(),
        share(16),
        share(32),
        share(64),
        share(128)
    );
    let rot: Vec<Vec<f32>> = rows
        .iter()
        .map(|r| r.iter().map(|&x| x as f32).collect())
        .collect();
    let rotated: Vec<Vec<f32>> = vs.par_iter().map(|v| rotate(&rot, v)).collect();

    struct Variant {
        name: String,
        pq: Option<Pq>,
        rotated: bool,
        prefix: usize,
        codes: Vec<Vec<u8>>,
    }
    let mut variants: Vec<Variant> = Vec::new();
    for (sub, k, rotated_in) in [
        (4, 16, false),
        (2, 16, false),
        (4, 16, true),
        (8, 256, true),
    ] {
        let space = if rotated_in { &rotated } else { &vs };
        let sample: Vec<&[f32]> = sample_ids.iter().map(|&i| space[i].as_slice()).collect();
        let started = Instant::now();
        let pq = train(&sample, sub, k);
        let codes: Vec<Vec<u8>> = space.par_iter().map(|v| pq.encode(v)).collect();
        let bytes = pq.m * (k.ilog2() as usize) / 8;
        variants.push(Variant {
            name: format!(
                "PQ {}×{sub} dims, {k} centroids ({bytes} B a point){}, trained+encoded in {:.1} s",
                pq.m,
                if rotated_in { ", rotated" } else { "" },
                started.elapsed().as_secs_f64()
            ),
            pq: Some(pq),
            rotated: rotated_in,
            prefix: 0,
            codes,
        });
    }
    for prefix in [32, 64, 128] {
        variants.push(Variant {
            name: format!("the first {prefix} principal dimensions, f32"),
            pq: None,
            rotated: true,
            prefix,
            codes: Vec::new(),
        });
    }
    let mut hits = vec![vec![(0usize, 0usize); KEPT.len()]; variants.len()];
    let (mut n200, mut n10) = (0usize, 0usize);
    for q in queries {
        let (exact, order) = crate::exact_order(&points, q);
        if order.len() < 200 {
            continue;
        }
        let (f200, f10) = (exact[order[199]] - 1e-5, exact[order[9]] - 1e-5);
        n200 += 200;
        n10 += 10;
        let qr = rotate(&rot, q);
        for (v, hits) in variants.iter().zip(hits.iter_mut()) {
            let qv = if v.rotated { &qr } else { q };
            let score: Vec<f32> = match &v.pq {
                Some(pq) => {
                    let t = pq.table(qv);
                    v.codes
                        .par_iter()
                        .map(|c| {
                            c.iter()
                                .enumerate()
                                .map(|(j, &a)| t[j * pq.k + usize::from(a)])
                                .sum()
                        })
                        .collect()
                }
                None => rotated
                    .par_iter()
                    .map(|x| {
                        x[..v.prefix]
                            .iter()
                            .zip(&qv[..v.prefix])
                            .map(|(a, b)| a * b)
                            .sum()
                    })
                    .collect(),
            };
            count(&score, &exact, f200, f10, hits);
        }
    }
    println!(
        "first passes over {} points, the kept points rescored exactly ({} questions):",
        codes.len(),
        queries.len()
    );
    for (v, hits) in variants.iter().zip(&hits) {
        println!("{}:", v.name);
        for (k, kept) in KEPT.iter().enumerate() {
            println!(
                "  kept {kept:>7}: recall@200 {:.4}, recall@10 {:.4}",
                hits[k].0 as f64 / n200.max(1) as f64,
                hits[k].1 as f64 / n10.max(1) as f64
            );
        }
    }
}
