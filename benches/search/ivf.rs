//! What an inverted file would keep of the exact nearest points, before it is built:
//! `--existing IDX --ivf LISTS` clusters the generation's points into `LISTS` lists
//! (spherical k-means on a sample, then every point to its nearest centroid) and counts,
//! for each share of the points scanned (the lists nearest the query first), how many of
//! the exact 200 and 10 best lie in the lists scanned. The pool's rescoring within them
//! is taken as perfect: this is the inverted file's own loss, to multiply by the 4-bit
//! pass's (`--nibbles`).

use lakestar_index::compact::{dot_f32, Code};
use lakestar_index::search::ann::dist::point;
use rayon::prelude::*;
use std::time::Instant;

/// Points the centroids are trained on, at most.
const SAMPLE: usize = 50_000;
/// Rounds of k-means over the sample.
const ROUNDS: usize = 8;
/// Shares of the points scanned.
const SHARES: [f64; 6] = [0.01, 0.02, 0.05, 0.1, 0.2, 0.3];

/// The unit vector of a code.
fn unit(c: &Code) -> Vec<f32> {
    c.codes.iter().map(|&x| f32::from(x) * c.scale).collect()
}

/// The index of the centroid most similar to `v`.
fn nearest(centroids: &[Vec<f32>], v: &[f32]) -> usize {
    let mut best = (0, f32::NEG_INFINITY);
    for (i, c) in centroids.iter().enumerate() {
        let s = dot_f32(c, v);
        if s > best.1 {
            best = (i, s);
        }
    }
    best.0
}

/// `lists` centroids of `vs` (spherical k-means: unit means).
fn train(vs: &[Vec<f32>], lists: usize) -> Vec<Vec<f32>> {
    let dim = vs[0].len();
    let step = (vs.len() / lists).max(1);
    let mut centroids: Vec<Vec<f32>> = vs.iter().step_by(step).take(lists).cloned().collect();
    for _ in 0..ROUNDS {
        let owner: Vec<usize> = vs.par_iter().map(|v| nearest(&centroids, v)).collect();
        let mut sums = vec![vec![0.0f32; dim]; centroids.len()];
        for (v, &o) in vs.iter().zip(&owner) {
            for (s, x) in sums[o].iter_mut().zip(v) {
                *s += x;
            }
        }
        for (c, s) in centroids.iter_mut().zip(sums) {
            let norm = s.iter().map(|x| x * x).sum::<f32>().sqrt();
            if norm > 0.0 {
                *c = s.into_iter().map(|x| x / norm).collect();
            }
        }
    }
    centroids
}

/// Measure and print (see the module's comment).
pub fn ivf_recall(codes: &[Code], queries: &[Vec<f32>], lists: usize) {
    let started = Instant::now();
    let step = (codes.len() / SAMPLE).max(1);
    let sample: Vec<Vec<f32>> = codes.iter().step_by(step).map(unit).collect();
    let centroids = train(&sample, lists.min(sample.len()));
    let trained = started.elapsed();
    let owner: Vec<usize> = codes
        .par_iter()
        .map(|c| nearest(&centroids, &unit(c)))
        .collect();
    let assigned = started.elapsed() - trained;
    let mut sizes = vec![0usize; centroids.len()];
    for &o in &owner {
        sizes[o] += 1;
    }
    let largest = sizes.iter().max().copied().unwrap_or(0);
    let points: Vec<Vec<i8>> = codes.iter().map(point).collect();
    let (mut hit200, mut hit10) = (vec![0usize; SHARES.len()], vec![0usize; SHARES.len()]);
    let mut scanned = vec![0usize; SHARES.len()];
    let (mut n200, mut n10) = (0usize, 0usize);
    for q in queries {
        let (_, order) = crate::exact_order(&points, q);
        let (k200, k10) = (order.len().min(200), order.len().min(10));
        if k10 == 0 {
            continue;
        }
        n200 += k200;
        n10 += k10;
        let mut by_list: Vec<(usize, f32)> = centroids
            .iter()
            .enumerate()
            .map(|(i, c)| (i, dot_f32(c, q)))
            .collect();
        by_list.sort_by(|a, b| b.1.total_cmp(&a.1));
        // The rank at which each list is scanned.
        let mut rank_of = vec![0usize; centroids.len()];
        for (r, &(l, _)) in by_list.iter().enumerate() {
            rank_of[l] = r;
        }
        for (k, share) in SHARES.iter().enumerate() {
            let want = (share * codes.len() as f64).ceil() as usize;
            let (mut taken, mut lists_taken) = (0usize, 0usize);
            for &(l, _) in &by_list {
                if taken >= want {
                    break;
                }
                taken += sizes[l];
                lists_taken += 1;
            }
            scanned[k] += taken;
            let inside = |i: usize| rank_of[owner[i]] < lists_taken;
            hit200[k] += order[..k200].iter().filter(|&&i| inside(i)).count();
            hit10[k] += order[..k10].iter().filter(|&&i| inside(i)).count();
        }
    }
    println!(
        "inverted file over {} points, {} lists (trained on {} in {:.1} s, assigned in {:.1} s; largest list {largest}), {} questions:",
        codes.len(),
        centroids.len(),
        sample.len(),
        trained.as_secs_f64(),
        assigned.as_secs_f64(),
        queries.len()
    );
    for (k, share) in SHARES.iter().enumerate() {
        println!(
            "share {:>4.0} %: points scanned {:>8.0} a question, recall@200 {:.4}, recall@10 {:.4}",
            share * 100.0,
            scanned[k] as f64 / queries.len().max(1) as f64,
            hit200[k] as f64 / n200.max(1) as f64,
            hit10[k] as f64 / n10.max(1) as f64
        );
    }
}
