//! Change points in one series: E-divisive means (Matteson and James, 2014) with a t-test
//! in place of its permutation test, as Hunter (Apache Otava) does it: deterministic, it
//! finds changes a few points apart and ignores a lone outlier.
//!
//! Two passes over the series x (ln of the run medians, so a factor is a difference):
//! 1. Candidates: split a stretch where the energy statistic Q(τ) (α = 1) is largest,
//!    then split both halves again, down to stretches shorter than two segments of
//!    `min_segment` points. Q is computed in O(1) per τ from a 2-D prefix sum of |xᵢ − xⱼ|
//!    (stretches of at most `window` points; longer series in half-overlapping windows).
//! 2. Pruning: every candidate is tested between its neighbouring candidates with Student's
//!    two-sample t-test (pooled σ, at least `sigma_floor` per point), and the weakest is
//!    dropped while one has p above `max_p` or a difference below the detectable effect
//!    (`mde_log` of that standard error); then the survivors are tested again.
//!
//! A change whose two sides a straight line fits better than two levels is a drift, not a
//! step; and when one line fits the whole series at least as well as its levels between
//! the changes (BIC), every change is a drift: a slow drift is reported as drift (or not
//! at all).

use crate::compare::stats::noise_model::mde_log;
use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};

/// What the detection is run with; stated in every output.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Params {
    /// Fewest points a segment may have: a change in the last `min_segment − 1` runs is
    /// not seen yet, and a lone point is never a segment.
    pub min_segment: usize,
    /// Largest two-sided t-test p-value a change keeps.
    pub max_p: f64,
    /// Longest stretch the energy statistic is computed over at once.
    pub window: usize,
    /// The least noise per point (σ of ln median) assumed, whatever the series shows.
    pub sigma_floor: f64,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            min_segment: 3,
            max_p: 1e-4,
            window: 1000,
            sigma_floor: crate::compare::stats::noise_model::MIN_SIGMA,
        }
    }
}

/// What a change is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// Two levels: the series moved at this point and stayed.
    Step,
    /// A line fits the two sides better than two levels: a slow drift through this point.
    Drift,
}

/// One change point: the first point of the new segment and the segments either side.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    /// Index of the first point after the change.
    pub at: usize,
    /// The segment before, [from, at).
    pub from: usize,
    /// The segment after, [at, to).
    pub to: usize,
    /// Mean of x after minus before (ln of the factor).
    pub d: f64,
    /// Its 95% interval (Student's t, pooled).
    pub d_low: f64,
    pub d_high: f64,
    /// Two-sided t-test p-value between the two segments.
    pub p: f64,
    /// The smallest |d| the segments' noise lets be detected here.
    pub mde: f64,
    pub kind: Kind,
}

impl Change {
    /// The factor after/before and its 95% interval.
    pub fn factor(&self) -> (f64, f64, f64) {
        (self.d.exp(), self.d_low.exp(), self.d_high.exp())
    }
}

/// Prefix sums of x and x² for O(1) segment means and variances.
struct Moments {
    s: Vec<f64>,
    s2: Vec<f64>,
}

impl Moments {
    fn new(x: &[f64]) -> Moments {
        let mut s = vec![0.0; x.len() + 1];
        let mut s2 = vec![0.0; x.len() + 1];
        for (i, v) in x.iter().enumerate() {
            s[i + 1] = s[i] + v;
            s2[i + 1] = s2[i] + v * v;
        }
        Moments { s, s2 }
    }

    fn mean(&self, a: usize, b: usize) -> f64 {
        (self.s[b] - self.s[a]) / (b - a) as f64
    }

    /// Sum of squared deviations from the mean over [a, b).
    fn ss(&self, a: usize, b: usize) -> f64 {
        let n = (b - a) as f64;
        let sum = self.s[b] - self.s[a];
        (self.s2[b] - self.s2[a] - sum * sum / n).max(0.0)
    }
}

/// The 2-D prefix sum of |xᵢ − xⱼ| over a stretch of the series.
struct Distances {
    n: usize,
    p: Vec<f64>,
}

impl Distances {
    fn new(x: &[f64]) -> Distances {
        let n = x.len();
        let w = n + 1;
        let mut p = vec![0.0; w * w];
        for i in 0..n {
            let mut row = 0.0;
            for j in 0..n {
                row += (x[i] - x[j]).abs();
                p[(i + 1) * w + j + 1] = p[i * w + j + 1] + row;
            }
        }
        Distances { n, p }
    }

    /// Σ |xᵢ − xⱼ| over i in [r0, r1), j in [c0, c1).
    fn rect(&self, r0: usize, r1: usize, c0: usize, c1: usize) -> f64 {
        let w = self.n + 1;
        self.p[r1 * w + c1] - self.p[r0 * w + c1] - self.p[r1 * w + c0] + self.p[r0 * w + c0]
    }

    /// The E-divisive statistic Q of splitting [a, b) at τ.
    fn q(&self, a: usize, t: usize, b: usize) -> f64 {
        let (n1, n2) = ((t - a) as f64, (b - t) as f64);
        let between = self.rect(a, t, t, b);
        let within = |lo: usize, hi: usize, n: f64| self.rect(lo, hi, lo, hi) / (n * (n - 1.0));
        let e = 2.0 * between / (n1 * n2) - within(a, t, n1) - within(t, b, n2);
        n1 * n2 / (n1 + n2) * e
    }
}

/// Pass 1 over one stretch: candidate split points, recursively where Q is largest.
fn candidates(x: &[f64], m: usize, out: &mut Vec<usize>, offset: usize) {
    let d = Distances::new(x);
    let mut stack = vec![(0, x.len())];
    while let Some((a, b)) = stack.pop() {
        if b - a < 2 * m {
            continue;
        }
        let best = (a + m..=b - m).map(|t| (t, d.q(a, t, b))).fold(
            None,
            |acc: Option<(usize, f64)>, (t, q)| match acc {
                Some((_, bq)) if bq >= q => acc,
                _ => Some((t, q)),
            },
        );
        if let Some((t, q)) = best {
            if q > 0.0 {
                out.push(offset + t);
                stack.push((a, t));
                stack.push((t, b));
            }
        }
    }
}

/// Student's two-sample t-test (pooled variance, at least the floor per point) of [a, t)
/// against [t, b): (d, se, df, p). Pooled: both sides of a change carry the row's noise, and
/// a side of a few runs alone says little about it.
fn t_test(m: &Moments, a: usize, t: usize, b: usize, floor: f64) -> (f64, f64, f64, f64) {
    let (n1, n2) = ((t - a) as f64, (b - t) as f64);
    let d = m.mean(t, b) - m.mean(a, t);
    let df = n1 + n2 - 2.0;
    let se = sigma(m, a, t, b, floor) * (1.0 / n1 + 1.0 / n2).sqrt();
    if se <= 0.0 || !se.is_finite() {
        let p = if d == 0.0 { 1.0 } else { 0.0 };
        return (d, 0.0, df, p);
    }
    let p = StudentsT::new(0.0, 1.0, df)
        .map(|t| 2.0 * (1.0 - t.cdf(d.abs() / se)))
        .unwrap_or(1.0);
    (d, se, df, p.clamp(0.0, 1.0))
}

/// The pooled σ of the two segments, at least the floor.
fn sigma(m: &Moments, a: usize, t: usize, b: usize, floor: f64) -> f64 {
    ((m.ss(a, t) + m.ss(t, b)) / (b - a - 2) as f64)
        .sqrt()
        .max(floor)
}

/// Judge the change at `t` between its neighbours a and b.
fn judge(x: &[f64], m: &Moments, a: usize, t: usize, b: usize, p: &Params) -> Change {
    let (d, se, df, pv) = t_test(m, a, t, b, p.sigma_floor);
    let mde = mde_log(se, Some(df));
    let q = StudentsT::new(0.0, 1.0, df.max(1.0))
        .map(|t| t.inverse_cdf(0.975))
        .unwrap_or(1.96);
    Change {
        at: t,
        from: a,
        to: b,
        d,
        d_low: d - q * se,
        d_high: d + q * se,
        p: pv,
        mde,
        kind: kind(x, m, a, t, b),
    }
}

/// Step or drift: whether a line through [a, b) leaves less than two levels do.
fn kind(x: &[f64], m: &Moments, a: usize, t: usize, b: usize) -> Kind {
    let n = (b - a) as f64;
    let mx = (n - 1.0) / 2.0;
    let my = m.mean(a, b);
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (i, y) in x[a..b].iter().enumerate() {
        let dx = i as f64 - mx;
        sxy += dx * (y - my);
        sxx += dx * dx;
    }
    let line = m.ss(a, b) - sxy * sxy / sxx;
    if line <= m.ss(a, t) + m.ss(t, b) {
        Kind::Drift
    } else {
        Kind::Step
    }
}

/// Whether a judged change is kept.
fn holds(c: &Change, p: &Params) -> bool {
    c.p <= p.max_p && c.d.abs() >= c.mde
}

/// The change points of `x` (ln of the medians, in time order), oldest first. When one
/// straight line fits the whole series at least as well as the levels between the changes
/// do (by the Bayesian information criterion), every change found is a drift.
pub fn detect(x: &[f64], p: &Params) -> Vec<Change> {
    let mut found = points(x, p);
    if !found.is_empty() {
        let mom = Moments::new(x);
        let mut cuts: Vec<usize> = found.iter().map(|c| c.at).collect();
        cuts.insert(0, 0);
        cuts.push(x.len());
        let levels: f64 = cuts.windows(2).map(|w| mom.ss(w[0], w[1])).sum();
        let line: f64 = detrended(x).iter().map(|r| r * r).sum();
        // Bayesian information criterion: k changes cost a level and a place each.
        let n = x.len() as f64;
        let bic = |sse: f64, params: usize| n * (sse / n + 1e-300).ln() + params as f64 * n.ln();
        if bic(line, 2) <= bic(levels, 2 * found.len() + 1) {
            found.iter_mut().for_each(|c| c.kind = Kind::Drift);
        }
    }
    found
}

/// x less its least-squares line.
fn detrended(x: &[f64]) -> Vec<f64> {
    let n = x.len() as f64;
    let mx = (n - 1.0) / 2.0;
    let my = x.iter().sum::<f64>() / n;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (i, y) in x.iter().enumerate() {
        sxy += (i as f64 - mx) * (y - my);
        sxx += (i as f64 - mx).powi(2);
    }
    let slope = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    x.iter()
        .enumerate()
        .map(|(i, y)| y - my - slope * (i as f64 - mx))
        .collect()
}

/// The change points of `x` without the drift check of the whole series.
fn points(x: &[f64], p: &Params) -> Vec<Change> {
    let m = p.min_segment.max(2);
    if x.len() < 2 * m || x.iter().any(|v| !v.is_finite()) {
        return vec![];
    }
    let mut cands = vec![];
    if x.len() <= p.window {
        candidates(x, m, &mut cands, 0);
    } else {
        let w = p.window.max(4 * m);
        let mut start = 0;
        loop {
            let end = (start + w).min(x.len());
            candidates(&x[start..end], m, &mut cands, start);
            if end == x.len() {
                break;
            }
            start += w / 2;
        }
    }
    cands.sort_unstable();
    cands.dedup();
    // Windows may propose points closer than a segment: keep the first of such a run.
    let mut points: Vec<usize> = vec![];
    for c in cands {
        let prev = points.last().copied().unwrap_or(0);
        if c - prev >= m && x.len() - c >= m {
            points.push(c);
        }
    }
    let mom = Moments::new(x);
    loop {
        prune(x, &mom, &mut points, p);
        if !refine(&mom, &mut points, m, p.sigma_floor) {
            break;
        }
    }
    (0..points.len())
        .map(|i| {
            let (a, b) = bounds(x.len(), &points, i);
            judge(x, &mom, a, points[i], b, p)
        })
        .collect()
}

/// The neighbours of point i: the previous point (or 0) and the next (or the end).
fn bounds(n: usize, pts: &[usize], i: usize) -> (usize, usize) {
    let a = if i == 0 { 0 } else { pts[i - 1] };
    let b = pts.get(i + 1).copied().unwrap_or(n);
    (a, b)
}

/// Drop the weakest failing point (highest p, then smallest |d| over its MDE) until every
/// point holds between its neighbours.
fn prune(x: &[f64], mom: &Moments, points: &mut Vec<usize>, p: &Params) {
    loop {
        let judged: Vec<Change> = (0..points.len())
            .map(|i| {
                let (a, b) = bounds(x.len(), points, i);
                judge(x, mom, a, points[i], b, p)
            })
            .collect();
        let weakest = judged
            .iter()
            .enumerate()
            .filter(|(_, c)| !holds(c, p))
            .max_by(|(_, a), (_, b)| {
                a.p.total_cmp(&b.p)
                    .then((b.d.abs() / b.mde).total_cmp(&(a.d.abs() / a.mde)))
            })
            .map(|(i, _)| i);
        match weakest {
            Some(i) => {
                points.remove(i);
            }
            None => return,
        }
    }
}

/// Move each point, between its neighbours, to where the t statistic is largest (the
/// candidates were placed before their neighbours were final); whether any moved.
fn refine(mom: &Moments, points: &mut [usize], m: usize, floor: f64) -> bool {
    let mut moved = false;
    for i in 0..points.len() {
        let (a, b) = bounds(mom.s.len() - 1, points, i);
        let t = |t: usize| {
            let (d, se, _, _) = t_test(mom, a, t, b, floor);
            if se > 0.0 {
                d.abs() / se
            } else {
                f64::INFINITY
            }
        };
        let best = (a + m..=b - m).fold(points[i], |best, c| if t(c) > t(best) { c } else { best });
        if best != points[i] {
            points[i] = best;
            moved = true;
        }
    }
    moved
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};

    /// ln of medians around 100 with σ noise per point (normal by Box-Muller).
    fn noise(n: usize, sigma: f64, seed: u64) -> Vec<f64> {
        let mut rng = SmallRng::seed_from_u64(seed);
        (0..n)
            .map(|_| {
                let (u1, u2): (f64, f64) = (rng.gen_range(1e-12..1.0), rng.gen());
                100f64.ln() + sigma * (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
            })
            .collect()
    }

    fn shift(x: &mut [f64], from: usize, factor: f64) {
        x[from..].iter_mut().for_each(|v| *v += factor.ln());
    }

    #[test]
    fn a_step_is_found_at_its_index_with_its_factor() {
        for seed in 0..20 {
            let mut x = noise(60, 0.02, seed);
            shift(&mut x, 37, 1.2);
            let c = detect(&x, &Params::default());
            assert_eq!(c.len(), 1, "seed {seed}: {c:?}");
            assert_eq!((c[0].at, c[0].kind), (37, Kind::Step), "seed {seed}");
            let (f, lo, hi) = c[0].factor();
            assert!(
                lo < 1.2 && 1.2 < hi && (f - 1.2).abs() < 0.03,
                "{f} {lo} {hi}"
            );
        }
    }

    #[test]
    fn a_lone_outlier_is_not_a_change_anywhere() {
        for at in [0, 1, 10, 25, 48, 49] {
            let mut x = noise(50, 0.02, at as u64);
            x[at] += 1.5f64.ln();
            let c = detect(&x, &Params::default());
            assert!(c.is_empty(), "outlier at {at}: {c:?}");
        }
    }

    #[test]
    fn two_changes_five_runs_apart_are_both_found() {
        // Each change within one run of its place (a run drawn 3.5σ towards the other
        // level is the other level's), and at its place in most series.
        let mut exact = 0;
        for seed in 0..20 {
            // Up by 15% at 30, back down at 35: a bump of five runs.
            let mut x = noise(70, 0.02, 100 + seed);
            shift(&mut x, 30, 1.15);
            shift(&mut x, 35, 1.0 / 1.15);
            // Two steps the same way.
            let mut y = noise(70, 0.02, 200 + seed);
            shift(&mut y, 30, 1.15);
            shift(&mut y, 35, 1.15);
            for s in [x, y] {
                let at: Vec<usize> = detect(&s, &Params::default())
                    .iter()
                    .map(|c| c.at)
                    .collect();
                assert!(
                    at.len() == 2 && at[0].abs_diff(30) <= 1 && at[1].abs_diff(35) <= 1,
                    "seed {seed}: {at:?}"
                );
                exact += usize::from(at == [30, 35]);
            }
        }
        assert!(exact >= 36, "{exact} of 40 exact");
    }

    #[test]
    fn a_slow_drift_is_reported_as_drift_or_not_at_all() {
        let mut reported = 0;
        for seed in 0..20 {
            // 30% over 100 runs, 0.3% a run, below the 2% noise of one run.
            let mut x = noise(100, 0.02, 300 + seed);
            for (i, v) in x.iter_mut().enumerate() {
                *v += 1.3f64.ln() * i as f64 / 99.0;
            }
            let c = detect(&x, &Params::default());
            assert!(
                c.iter().all(|c| c.kind == Kind::Drift),
                "seed {seed}: {c:?}"
            );
            reported += usize::from(!c.is_empty());
        }
        // 30% is far beyond the noise: it is reported (as drift) in most series.
        assert!(reported >= 15, "drift reported in {reported} of 20");
    }

    #[test]
    fn pure_noise_gives_at_most_one_change_per_hundred_runs() {
        let (mut changes, mut runs) = (0, 0);
        for seed in 0..200 {
            let n = [30, 100, 250][seed as usize % 3];
            changes += detect(&noise(n, 0.03, 1000 + seed), &Params::default()).len();
            runs += n;
        }
        assert!(changes * 100 <= runs, "{changes} changes in {runs} runs");
    }

    #[test]
    fn a_long_series_is_read_in_windows_and_finds_its_steps() {
        let mut x = noise(2500, 0.02, 7);
        shift(&mut x, 700, 1.1);
        shift(&mut x, 1800, 0.9);
        let p = Params {
            window: 500,
            ..Params::default()
        };
        let at: Vec<usize> = detect(&x, &p).iter().map(|c| c.at).collect();
        assert_eq!(at, [700, 1800]);
    }

    #[test]
    fn a_quiet_series_still_needs_the_floor_to_be_passed() {
        // 0.5% apart on a series with nearly no noise: below the 1% floor per point's MDE
        // over 5 + 5 points.
        let mut x: Vec<f64> = (0..10).map(|i| 1e-6 * (i % 2) as f64).collect();
        shift(&mut x, 5, 1.005);
        assert!(detect(&x, &Params::default()).is_empty());
        shift(&mut x, 5, 1.05);
        assert_eq!(detect(&x, &Params::default()).len(), 1);
    }
}
