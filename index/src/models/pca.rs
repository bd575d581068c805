//! Principal components of a small symmetric matrix (a covariance of a few hundred
//! dimensions) by the cyclic Jacobi eigenvalue method.
//!
//! Hand-written on purpose: the one eigenproblem of `model distill` is a 384 × 384
//! matrix solved once, and the linear-algebra crates that solve it (nalgebra, faer,
//! ndarray-linalg with LAPACK) would each add far more to the build than these lines.
//! Jacobi is exact to rounding, simple and stable for symmetric matrices.

/// Eigenvectors of the symmetric `n × n` row-major matrix `a` for its `k` largest
/// eigenvalues, largest first, each of unit length; with the eigenvalues.
pub fn top_eigenvectors(a: &[f64], n: usize, k: usize) -> (Vec<Vec<f64>>, Vec<f64>) {
    assert_eq!(a.len(), n * n, "matrix of {n} × {n}");
    let mut a = a.to_vec();
    // v accumulates the rotations: its columns become the eigenvectors.
    let mut v = vec![0.0f64; n * n];
    for i in 0..n {
        v[i * n + i] = 1.0;
    }
    let total: f64 = a.iter().map(|x| x * x).sum();
    for _sweep in 0..100 {
        let off: f64 = (0..n)
            .flat_map(|i| (0..n).filter(move |&j| j != i).map(move |j| (i, j)))
            .map(|(i, j)| a[i * n + j] * a[i * n + j])
            .sum();
        if off <= 1e-22 * total.max(f64::MIN_POSITIVE) {
            break;
        }
        for p in 0..n {
            for q in p + 1..n {
                let apq = a[p * n + q];
                if apq.abs() < 1e-300 {
                    continue;
                }
                // The rotation that zeroes a[p][q] (Golub & Van Loan 8.4.2).
                let theta = (a[q * n + q] - a[p * n + p]) / (2.0 * apq);
                let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
                let t = if theta == 0.0 { 1.0 } else { t };
                let c = 1.0 / (t * t + 1.0).sqrt();
                let s = t * c;
                for r in 0..n {
                    let (arp, arq) = (a[r * n + p], a[r * n + q]);
                    a[r * n + p] = c * arp - s * arq;
                    a[r * n + q] = s * arp + c * arq;
                }
                for r in 0..n {
                    let (apr, aqr) = (a[p * n + r], a[q * n + r]);
                    a[p * n + r] = c * apr - s * aqr;
                    a[q * n + r] = s * apr + c * aqr;
                }
                for r in 0..n {
                    let (vrp, vrq) = (v[r * n + p], v[r * n + q]);
                    v[r * n + p] = c * vrp - s * vrq;
                    v[r * n + q] = s * vrp + c * vrq;
                }
            }
        }
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&i, &j| a[j * n + j].total_cmp(&a[i * n + i]));
    order
        .into_iter()
        .take(k)
        .map(|j| ((0..n).map(|r| v[r * n + j]).collect(), a[j * n + j]))
        .unzip()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_eigenpairs() {
        // [[2, 1], [1, 2]]: eigenvalues 3 (along (1, 1)) and 1 (along (1, -1)).
        let (vecs, vals) = top_eigenvectors(&[2.0, 1.0, 1.0, 2.0], 2, 2);
        assert!((vals[0] - 3.0).abs() < 1e-12 && (vals[1] - 1.0).abs() < 1e-12);
        let h = std::f64::consts::FRAC_1_SQRT_2;
        assert!((vecs[0][0].abs() - h).abs() < 1e-12);
        assert!((vecs[0][0] - vecs[0][1]).abs() < 1e-12);
        assert!((vecs[1][0] + vecs[1][1]).abs() < 1e-12);
    }

    #[test]
    fn random_symmetric_matrix_is_diagonalized() {
        let n = 12;
        let mut rng = fastrand::Rng::with_seed(5);
        let b: Vec<f64> = (0..n * n).map(|_| rng.f64() - 0.5).collect();
        // a = bᵀb: symmetric positive semi-definite, like a covariance.
        let mut a = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                a[i * n + j] = (0..n).map(|r| b[r * n + i] * b[r * n + j]).sum();
            }
        }
        let (vecs, vals) = top_eigenvectors(&a, n, n);
        assert!(vals.windows(2).all(|w| w[0] >= w[1]), "{vals:?}");
        for (x, &lambda) in vecs.iter().zip(&vals) {
            // a·x = λx, and |x| = 1.
            for i in 0..n {
                let ax: f64 = (0..n).map(|j| a[i * n + j] * x[j]).sum();
                assert!(
                    (ax - lambda * x[i]).abs() < 1e-9,
                    "{ax} vs {}",
                    lambda * x[i]
                );
            }
            assert!((x.iter().map(|v| v * v).sum::<f64>() - 1.0).abs() < 1e-12);
        }
        // Orthogonal to each other.
        let dot: f64 = vecs[0].iter().zip(&vecs[1]).map(|(a, b)| a * b).sum();
        assert!(dot.abs() < 1e-9);
    }
}
