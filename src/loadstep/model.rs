//! Scalability models for load steps: the Universal Scalability Law
//! X(N) = γN / (1 + σ(N−1) + κN(N−1)) and Amdahl's law (κ = 0), fitted by bounded
//! Levenberg–Marquardt least squares on (concurrency, throughput) points with fractional N
//! (from Little's law), with standard errors from the residual variance and (JᵀJ)⁻¹; the
//! predicted peak; the knee of a load-step curve; and Little's-law consistency. Pure
//! functions, tested on synthetic data with known parameters.

use serde::{Deserialize, Serialize};

/// A fitted model.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Fit {
    /// Contention (serial fraction).
    pub sigma: f64,
    pub sigma_se: f64,
    /// Coherency (crosstalk); 0 and no standard error for Amdahl.
    pub kappa: f64,
    pub kappa_se: Option<f64>,
    /// Throughput at N = 1.
    pub gamma: f64,
    pub gamma_se: f64,
    /// Concurrency of the peak throughput (USL with κ > 0: √((1−σ)/κ)); None when the model
    /// has no peak (Amdahl, κ = 0).
    pub peak_n: Option<f64>,
    /// The peak throughput, or Amdahl's asymptote γ/σ.
    pub peak_x: Option<f64>,
    /// Residual standard error, in throughput units.
    pub residual_se: f64,
    pub points: usize,
}

/// USL throughput at concurrency n.
pub fn usl(n: f64, sigma: f64, kappa: f64, gamma: f64) -> f64 {
    gamma * n / (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0))
}

/// Solve the symmetric positive system A x = b (3x3 at most) by Gaussian elimination with
/// partial pivoting; None when singular.
fn solve(a: &[Vec<f64>], b: &[f64]) -> Option<Vec<f64>> {
    let n = b.len();
    let mut m: Vec<Vec<f64>> = (0..n)
        .map(|i| {
            let mut r = a[i].clone();
            r.push(b[i]);
            r
        })
        .collect();
    for c in 0..n {
        let p = (c..n).max_by(|x, y| m[*x][c].abs().total_cmp(&m[*y][c].abs()))?;
        if m[p][c].abs() < 1e-300 {
            return None;
        }
        m.swap(c, p);
        let pivot = m[c].clone();
        for (r, row) in m.iter_mut().enumerate() {
            if r != c {
                let f = row[c] / pivot[c];
                for (x, pv) in row.iter_mut().zip(&pivot).skip(c) {
                    *x -= f * pv;
                }
            }
        }
    }
    Some((0..n).map(|i| m[i][n] / m[i][i]).collect())
}

fn inverse(a: &[Vec<f64>]) -> Option<Vec<Vec<f64>>> {
    let n = a.len();
    let cols: Vec<Vec<f64>> = (0..n)
        .map(|j| {
            let e: Vec<f64> = (0..n).map(|i| if i == j { 1.0 } else { 0.0 }).collect();
            solve(a, &e)
        })
        .collect::<Option<_>>()?;
    Some(
        (0..n)
            .map(|i| (0..n).map(|j| cols[j][i]).collect())
            .collect(),
    )
}

/// Parameters are (σ, κ, γ); `with_kappa` false fixes κ = 0 (Amdahl).
fn residuals_and_jacobian(
    pts: &[(f64, f64)],
    p: &[f64; 3],
    with_kappa: bool,
) -> (Vec<f64>, Vec<Vec<f64>>) {
    let mut r = Vec::with_capacity(pts.len());
    let mut j = Vec::with_capacity(pts.len());
    for &(n, x) in pts {
        let (s, k, g) = (p[0], if with_kappa { p[1] } else { 0.0 }, p[2]);
        let d = 1.0 + s * (n - 1.0) + k * n * (n - 1.0);
        let f = g * n / d;
        r.push(x - f);
        let ds = -g * n * (n - 1.0) / (d * d);
        let dk = -g * n * n * (n - 1.0) / (d * d);
        let dg = n / d;
        j.push(if with_kappa {
            vec![ds, dk, dg]
        } else {
            vec![ds, dg]
        });
    }
    (r, j)
}

fn clamp(p: &mut [f64; 3]) {
    p[0] = p[0].clamp(0.0, 1.0);
    p[1] = p[1].clamp(0.0, 1.0);
    p[2] = p[2].max(1e-300);
}

/// Fit the USL (`with_kappa`) or Amdahl's law to (N, X) points: bounded Levenberg–Marquardt
/// (σ, κ in [0, 1], γ > 0), started as the R usl package starts (γ = max X/N, σ = 0.01,
/// κ = 0.0001). None with fewer points than parameters + 1, N ≤ 0 anywhere (fractional N,
/// below 1 too, is fine: Little's law gives it), or a singular fit.
pub fn fit(pts: &[(f64, f64)], with_kappa: bool) -> Option<Fit> {
    let k = if with_kappa { 3 } else { 2 };
    if pts.len() < k + 1
        || !pts
            .iter()
            .all(|(n, x)| *n > 0.0 && n.is_finite() && x.is_finite())
    {
        return None;
    }
    let gamma0 = pts.iter().map(|(n, x)| x / n).fold(0.0, f64::max);
    let mut p = [0.01, if with_kappa { 1e-4 } else { 0.0 }, gamma0];
    let ssr = |p: &[f64; 3]| -> f64 {
        residuals_and_jacobian(pts, p, with_kappa)
            .0
            .iter()
            .map(|r| r * r)
            .sum()
    };
    let mut lambda = 1e-3;
    let mut cur = ssr(&p);
    for _ in 0..2000 {
        let (r, j) = residuals_and_jacobian(pts, &p, with_kappa);
        let mut jtj = vec![vec![0.0; k]; k];
        let mut jtr = vec![0.0; k];
        for (row, ri) in j.iter().zip(&r) {
            for a in 0..k {
                jtr[a] += row[a] * ri;
                for b in 0..k {
                    jtj[a][b] += row[a] * row[b];
                }
            }
        }
        let mut improved = false;
        for _ in 0..30 {
            let mut damped = jtj.clone();
            for (a, row) in damped.iter_mut().enumerate() {
                row[a] += lambda * jtj[a][a].max(1e-12);
            }
            let Some(step) = solve(&damped, &jtr) else {
                lambda *= 10.0;
                continue;
            };
            let mut q = p;
            q[0] += step[0];
            if with_kappa {
                q[1] += step[1];
                q[2] += step[2];
            } else {
                q[2] += step[1];
            }
            clamp(&mut q);
            let s = ssr(&q);
            if s < cur {
                let rel = (cur - s) / cur.max(1e-300);
                p = q;
                cur = s;
                lambda = (lambda / 10.0).max(1e-12);
                improved = rel > 1e-15;
                break;
            }
            lambda *= 10.0;
        }
        if !improved {
            break;
        }
    }
    let (_, j) = residuals_and_jacobian(pts, &p, with_kappa);
    let mut jtj = vec![vec![0.0; k]; k];
    for row in &j {
        for a in 0..k {
            for b in 0..k {
                jtj[a][b] += row[a] * row[b];
            }
        }
    }
    let dof = (pts.len() - k).max(1) as f64;
    let s2 = cur / dof;
    let cov = inverse(&jtj)?;
    let se = |i: usize| (s2 * cov[i][i]).max(0.0).sqrt();
    let (sigma, kappa, gamma) = (p[0], if with_kappa { p[1] } else { 0.0 }, p[2]);
    let (peak_n, peak_x) = if kappa > 0.0 {
        let n = ((1.0 - sigma) / kappa).sqrt();
        (Some(n), Some(usl(n, sigma, kappa, gamma)))
    } else if sigma > 0.0 {
        (None, Some(gamma / sigma))
    } else {
        (None, None)
    };
    Some(Fit {
        sigma,
        sigma_se: se(0),
        kappa,
        kappa_se: with_kappa.then(|| se(1)),
        gamma,
        gamma_se: se(k - 1),
        peak_n,
        peak_x,
        residual_se: s2.sqrt(),
        points: pts.len(),
    })
}

/// The knee of a load-step curve: the index of the last step before the first one whose
/// `cost` (latency, or cost per transaction) grows faster than the load, relatively:
/// cost[i+1]/cost[i] > (load[i+1]/load[i]) × (1 + tolerance). None when it never does.
pub fn knee(load: &[f64], cost: &[f64], tolerance: f64) -> Option<usize> {
    (0..load.len().min(cost.len()).saturating_sub(1)).find(|&i| {
        load[i] > 0.0
            && cost[i] > 0.0
            && cost[i + 1] / cost[i] > (load[i + 1] / load[i]) * (1.0 + tolerance)
    })
}

/// Little's law per step: the mean in-flight count measured directly against X·R; the
/// relative difference (0 = consistent).
pub fn little_mismatch(mean_in_flight: f64, throughput: f64, mean_response_s: f64) -> f64 {
    let xr = throughput * mean_response_s;
    if xr <= 0.0 && mean_in_flight <= 0.0 {
        return 0.0;
    }
    (mean_in_flight - xr).abs() / xr.max(mean_in_flight)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Points on a known USL curve at fractional N, with a small deterministic wobble.
    fn curve(sigma: f64, kappa: f64, gamma: f64, noise: f64) -> Vec<(f64, f64)> {
        (0..14)
            .map(|i| {
                let n = 1.0 + i as f64 * 1.7;
                let wobble = if i % 2 == 0 { 1.0 + noise } else { 1.0 - noise };
                (n, usl(n, sigma, kappa, gamma) * wobble)
            })
            .collect()
    }

    #[test]
    fn usl_parameters_are_recovered_within_their_standard_errors() {
        let (s, k, g) = (0.05, 0.002, 1000.0);
        let f = fit(&curve(s, k, g, 0.01), true).unwrap();
        assert!((f.sigma - s).abs() <= 3.0 * f.sigma_se.max(1e-9), "{f:?}");
        assert!(
            (f.kappa - k).abs() <= 3.0 * f.kappa_se.unwrap().max(1e-9),
            "{f:?}"
        );
        assert!((f.gamma - g).abs() <= 3.0 * f.gamma_se.max(1e-9), "{f:?}");
        assert!(f.sigma_se > 0.0 && f.gamma_se > 0.0);
        // Peak at √((1−σ)/κ) ≈ 21.8.
        let want = ((1.0 - s) / k).sqrt();
        assert!((f.peak_n.unwrap() - want).abs() / want < 0.1, "{f:?}");
        // Exact data: exact answer.
        let e = fit(&curve(s, k, g, 0.0), true).unwrap();
        assert!(
            (e.sigma - s).abs() < 1e-6 && (e.kappa - k).abs() < 1e-7,
            "{e:?}"
        );
    }

    #[test]
    fn amdahl_is_the_usl_without_coherency() {
        let (s, g) = (0.1, 500.0);
        let f = fit(&curve(s, 0.0, g, 0.005), false).unwrap();
        assert_eq!(f.kappa, 0.0);
        assert!(f.kappa_se.is_none() && f.peak_n.is_none());
        assert!((f.sigma - s).abs() <= 3.0 * f.sigma_se, "{f:?}");
        // Asymptote γ/σ.
        assert!((f.peak_x.unwrap() - g / s).abs() / (g / s) < 0.05, "{f:?}");
    }

    #[test]
    fn bounds_hold_and_too_few_points_give_nothing() {
        // Super-linear data would want σ < 0: it stays at 0.
        let pts: Vec<(f64, f64)> = (1..8)
            .map(|n| (n as f64, 100.0 * (n as f64).powf(1.2)))
            .collect();
        let f = fit(&pts, true).unwrap();
        assert!(f.sigma >= 0.0 && f.kappa >= 0.0);
        assert!(fit(&pts[..3], true).is_none());
        assert!(fit(&[(0.0, 1.0), (1.0, 2.0), (2.0, 3.0), (3.0, 4.0)], true).is_none());
    }

    #[test]
    fn the_knee_is_where_cost_outgrows_load() {
        let load = [2000.0, 4000.0, 6000.0, 8000.0, 10000.0];
        // Latency flat, then it explodes after 6000/s.
        let p99 = [100.0, 102.0, 110.0, 900.0, 5000.0];
        assert_eq!(knee(&load, &p99, 0.1), Some(2));
        // Cost growing in proportion to load is not a knee.
        assert_eq!(knee(&load, &load, 0.1), None);
        assert_eq!(knee(&load[..1], &p99[..1], 0.1), None);
    }

    #[test]
    fn littles_law() {
        assert!(little_mismatch(10.0, 1000.0, 0.01) < 1e-12);
        assert!((little_mismatch(5.0, 1000.0, 0.01) - 0.5).abs() < 1e-12);
        assert_eq!(little_mismatch(0.0, 0.0, 0.0), 0.0);
    }
}
