//! The model's parameters from measured steps: the CPU cost per message (median over the
//! valid steady steps), the load generator's CPU against the rate (least squares, below the rate
//! where mq's producer spins through every gap), the efficiency
//! of the utilisation law (the highest rate completed ÷ predicted, per variant that could
//! not keep up), the latency factor (the factor on the M/M/c time that makes the model's
//! p99, throttling included, the measured one; geometric median over the steady steps
//! toward the ceiling), and the USL contention when a run measured a
//! scaling curve. Each resample of the steps (bootstrap) gives another set, which is where
//! a prediction's interval comes from.

use super::bisect::{absolute, bisect};
use super::evidence::{Evidence, Measured, Obs};
use super::model::{Params, Setting};
use rand::{Rng, SeedableRng};

/// A step at this share of its setting's ceiling or more is near saturation.
pub const NEAR_SATURATION: f64 = 0.6;
/// Cost per message varying more than this (coefficient of variation) across steps is a
/// fit with a huge error: no prediction.
pub const MAX_COST_CV: f64 = 0.5;

/// Contention across CPUs, and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Contention {
    pub sigma: f64,
    pub kappa: f64,
    /// In words: the run's scaling fit, or assumed none.
    pub source: String,
    /// The widest parallelism the runs measured (CPUs used at once).
    pub measured_parallel: usize,
}

/// The model's setting for a measured variant.
pub fn setting_of(m: &Measured, machine_cpus: usize) -> Setting {
    Setting {
        quota: m.quota,
        width: m.width,
        workers: m.workers,
        generator_in_quota: m.generator_in_quota,
        machine_cpus,
        period_s: m.period_us as f64 * 1e-6,
    }
}

fn median(v: &mut [f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    })
}

/// Least squares y = a + b x; (mean, 0) with one distinct x.
fn line(pts: &[(f64, f64)]) -> (f64, f64) {
    let n = pts.len() as f64;
    if pts.is_empty() {
        return (0.0, 0.0);
    }
    let mx = pts.iter().map(|p| p.0).sum::<f64>() / n;
    let my = pts.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx).powi(2)).sum();
    if sxx <= 0.0 {
        return (my, 0.0);
    }
    let b = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum::<f64>() / sxx;
    (my - b * mx, b)
}

/// Fit the parameters on `variants` (their steps possibly resampled). None without a
/// measured cost per message.
pub fn fit(variants: &[Measured], machine_cpus: usize, contention: &Contention) -> Option<Params> {
    let all: Vec<&Obs> = variants.iter().flat_map(|v| &v.steps).collect();
    // The cost of the steady steps only: past saturation the service's CPU goes to a
    // backlog of messages due before the window, so the CPU per completed message of the
    // window grows with the overload (measured here: 51 to 104 CPU-µs for 50 µs of
    // service) and says nothing about the cost of a message.
    let mut costs: Vec<f64> = all
        .iter()
        .filter(|o| o.steady)
        .filter_map(|o| o.cost_us)
        .collect();
    let cost_us = median(&mut costs)?;
    // The generator's line on the steady steps too (an http client past saturation waits
    // on its connections instead of sending); on all steps when fewer than two are steady.
    // Below the rate where the generator spins through every gap (its CPU is known there):
    // the line is for the generator that sleeps between messages.
    let spins_from = variants
        .iter()
        .filter_map(|v| v.generator_spins_from)
        .fold(None, |a: Option<f64>, r| Some(a.map_or(r, |a| a.min(r))));
    let steady: Vec<(f64, f64)> = all
        .iter()
        .filter(|o| o.steady && spins_from.is_none_or(|r| o.rate < r))
        .map(|o| (o.rate, o.generator_cpus))
        .collect();
    let (generator_base, generator_per_rate) = if steady.len() >= 2 {
        line(&steady)
    } else {
        line(
            &all.iter()
                .map(|o| (o.rate, o.generator_cpus))
                .collect::<Vec<_>>(),
        )
    };
    let mut p = Params {
        cost_us,
        efficiency: 1.0,
        latency_factor: 1.0,
        generator_base,
        generator_per_rate,
        generator_max: variants
            .iter()
            .map(|v| v.generator_threads)
            .max()
            .unwrap_or(1)
            .min(machine_cpus.max(1)) as f64,
        generator_spins_from: spins_from,
        sigma: contention.sigma,
        kappa: contention.kappa,
    };
    // Efficiency: per variant that could not keep up at some step, the highest rate it
    // completed against its ceiling. Not each saturated step's: the deeper the overload,
    // the fewer of the window's own messages complete within it (measured here: 8,300/s
    // at the knee, 3,800/s at twice the ceiling), which is backlog, not throughput.
    let mut eff: Vec<f64> = variants
        .iter()
        .filter(|v| v.steps.iter().any(|o| !o.steady))
        .filter_map(|v| {
            let (x, _) = p.ceiling(&setting_of(v, machine_cpus));
            let top = v.steps.iter().map(|o| o.completed).fold(0.0, f64::max);
            (x > 0.0).then(|| top / x)
        })
        .collect();
    if let Some(e) = median(&mut eff) {
        p.efficiency = e.clamp(0.05, 2.0);
    }
    // Latency factor: measured p99 against the model's, over the steady steps below the
    // ceiling; those toward it (at least NEAR_SATURATION of it) when there are two.
    let ratios: Vec<(f64, f64)> = variants
        .iter()
        .flat_map(|v| {
            let s = setting_of(v, machine_cpus);
            let (x, _) = p.ceiling(&s);
            v.steps
                .iter()
                .filter(|o| o.steady && o.rate < 0.995 * x)
                .filter_map(|o| Some((o.rate / x, log_factor(&p, &s, o.rate, o.p99_us? * 1e-6)?)))
                .collect::<Vec<_>>()
        })
        .collect();
    let near: Vec<f64> = ratios
        .iter()
        .filter(|r| r.0 >= NEAR_SATURATION)
        .map(|r| r.1)
        .collect();
    let mut logs: Vec<f64> = if near.len() >= 2 {
        near
    } else {
        ratios.iter().map(|r| r.1).collect()
    };
    if let Some(l) = median(&mut logs) {
        p.latency_factor = l.exp();
    }
    Some(p)
}

/// The latency factor's log that makes the model's p99 (queue and throttling together) at
/// `rate` the `measured` one, within e^±6 (at the low end: throttling alone explains more
/// than was measured, so queueing counts for little there). None past the ceiling.
fn log_factor(p: &Params, s: &Setting, rate: f64, measured: f64) -> Option<f64> {
    // The queue and throttling at this rate do not depend on the factor: found once.
    let a = p.at_rate(s, rate)?;
    let at = |l: f64| a.p99_s(l.exp());
    // To 1e-6 in the log: the factor to a millionth of itself.
    let (lo, hi) = bisect(-6.0, 6.0, absolute(1e-6), |l| at(l) < measured);
    Some(0.5 * (lo + hi))
}

/// How close the steps came to saturation: the highest share of its setting's ceiling
/// any valid step was planned at, and whether a step could not keep up.
pub fn saturation(e: &Evidence, p: &Params) -> (f64, bool) {
    let mut top: f64 = 0.0;
    let mut saturated = false;
    for v in &e.variants {
        let (x, _) = p.ceiling(&setting_of(v, e.machine_cpus));
        for o in &v.steps {
            top = top.max(o.rate / x);
            saturated |= !o.steady;
        }
    }
    (top, saturated)
}

/// The coefficient of variation of the measured cost per message (steady steps).
pub fn cost_cv(e: &Evidence) -> Option<f64> {
    let c: Vec<f64> = e
        .variants
        .iter()
        .flat_map(|v| &v.steps)
        .filter(|o| o.steady)
        .filter_map(|o| o.cost_us)
        .collect();
    crate::measure::stats::Stats::of(&c).map(|s| s.cv)
}

/// `n` parameter sets fitted on the steps resampled with replacement within each variant
/// (a variant keeps its setting); seeded, so a prediction repeats.
pub fn bootstrap(e: &Evidence, contention: &Contention, n: usize, seed: u64) -> Vec<Params> {
    let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
    (0..n)
        .filter_map(|_| {
            let resampled: Vec<Measured> = e
                .variants
                .iter()
                .map(|v| Measured {
                    steps: (0..v.steps.len())
                        .map(|_| v.steps[rng.gen_range(0..v.steps.len())].clone())
                        .collect(),
                    ..v.clone()
                })
                .collect();
            fit(&resampled, e.machine_cpus, contention)
        })
        .collect()
}

/// The 2.5% and 97.5% points of `v` (sorted here).
pub fn interval(v: &mut [f64]) -> Option<(f64, f64)> {
    if v.len() < 10 {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
    Some((at(0.025), at(0.975)))
}
