//! The rows a comparison tests per cycle, and the clock it holds out of them. On one host in
//! one setting the core clock moves between runs by a few percent (the host's other tenants
//! take its turbo budget); the canaries each run reads before its rounds measure that shift
//! (`held_clock`), and a row whose figure follows the clock (`clock_bound`, from what its
//! benchmark declares, `bench::nature::Clock`) is tested on its ratio divided by the
//! clock's. A latency point at the edge of its core's own cache (`cache_edge`) moves between
//! runs in a way the rounds of one run cannot sample, and is kept out of its family. The
//! `cpu-speed` cause (`causes::speed`) explains what the clock did; this is what the
//! pipeline itself needs, so editing a cause cannot change a verdict.

use crate::bench::nature::{Clock, Memory};
use crate::result::{BenchResult, RunDocument};
use serde::Serialize;

/// Effective clocks within this factor are the same: the drift floor results must exceed
/// to differ, because two runs of one command on a shared host measured clocks 3.4% apart.
/// Two clocks also count as the same when they differ by less than either run's own samples
/// did (a shared host moved the figure by up to 8% within one quiet run). What changes a
/// clock for real (a governor, turbo off, a power cap, a slower host) moves it far more.
pub const SAME: f64 = 1.05;

/// Whether a row's figure moves with the core clock: CPU work that follows it, or a
/// memory-latency point whose chain fits in a core's own caches (at most the smallest L2
/// the probe reports: a hit there takes a fixed number of core cycles; beyond it, the
/// shared cache and memory run on clocks of their own).
///
/// A clock read through the system call is CPU-bound but does not follow the clock all the
/// way: over 25 runs of one host (2026-11-27, effective clocks 4.11-4.28 GHz) the vDSO reads
/// and rdtsc moved by 0.76-0.90 of the clock's change (±0.1), the system-call reads by only
/// 0.19-0.58 (±0.2), so holding the clock out of them made differences rather than removed
/// them (an A/A called four of them "2% slower per cycle" on raw ratios of 1.01). They are
/// compared as measured.
pub fn clock_bound(r: &BenchResult, env: &crate::probe::ProbeDoc) -> bool {
    let n = crate::bench::nature::of(r);
    match (n.clock, n.memory) {
        (Clock::Follows, _) => true,
        (Clock::WhileInCoreCache, Memory::Chain { size_bytes, .. }) => {
            l2_of(r, env).is_some_and(|l2| size_bytes <= l2)
        }
        _ => false,
    }
}

/// A latency point this close to its core's own cache capacity (within this factor either
/// way) sits on the cliff between two levels: the sweep's points √2 either side of a 1 MiB
/// L2 moved 7-10% between runs of one host whose rounds each agreed within 1% (0.71 MiB:
/// 4.08-5.00 ns; 1.41 MiB: 9.2-10.7 ns over 20 runs, 2026-11-27), the ones 2x away did
/// not (0.5 MiB: 3.7-3.9 ns).
const EDGE: f64 = 1.5;

/// The smallest L2 (data or unified) the probe reports, bytes.
pub fn smallest_l2(env: &crate::probe::ProbeDoc) -> Option<u64> {
    env.topology
        .caches
        .iter()
        .filter(|c| c.level == 2 && c.kind != "Instruction")
        .filter_map(|c| c.size_bytes)
        .min()
}

/// The L2 of the CPU a latency row was pinned to (a hybrid machine's kinds have L2s of
/// their own sizes: 1.25 MiB on a P core, 2 MiB shared by four E cores), else the smallest
/// the probe reports.
fn l2_of(r: &BenchResult, env: &crate::probe::ProbeDoc) -> Option<u64> {
    let own = r.pinned_cpus().first().and_then(|cpu| {
        env.topology
            .caches
            .iter()
            .find(|c| c.level == 2 && c.kind != "Instruction" && c.cpus.contains(cpu))
            .and_then(|c| c.size_bytes)
    });
    own.or_else(|| smallest_l2(env))
}

/// The L2 size when `r` is a memory-latency point at its edge: a chain that about fills
/// the core's own cache stays there or spills to the next level with whatever else the
/// host keeps in that core's cache for minutes at a time, so its figure moves between
/// runs (measured: a 1 MiB chain on huge pages in a 1 MiB L2 took 4.4-4.6 ns in every
/// round of three runs and 6.4-7.1 ns in every round of the next two), which the rounds
/// of one run cannot sample.
pub fn cache_edge(r: &BenchResult, env: &crate::probe::ProbeDoc) -> Option<u64> {
    let Memory::Chain { size_bytes, .. } = crate::bench::nature::of(r).memory else {
        return None;
    };
    let size = size_bytes as f64;
    let l2 = l2_of(r, env)?;
    (size >= l2 as f64 / EDGE && size <= l2 as f64 * EDGE).then_some(l2)
}

/// CPUs whose clock ratios differ from the pooled one by more than this (beyond their own
/// error) moved unalike, and no clock is held.
const CPUS_ALIKE: f64 = 0.02;
/// Canary readings a CPU needs in each run for its clock to be held.
const MIN_CANARIES: usize = 5;
/// The smallest relative spread a CPU's canaries are taken to have (identical readings
/// do not make the clock exact).
const MIN_CANARY_SIGMA: f64 = 0.001;

/// How much faster B's run clocked than A's, on one host in one setting, from the canaries
/// read before their rounds: held out of CPU-bound rows by `compare`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RunClock {
    /// B's typical clock over A's.
    pub ratio: f64,
    /// The standard error of ln(ratio).
    pub se: f64,
    /// Canary readings used, A and B.
    pub readings: [usize; 2],
}

impl RunClock {
    /// "B's clock 2.1% faster than A's (canaries: 80 and 78 readings)".
    pub fn text(&self) -> String {
        let pct = (self.ratio - 1.0).abs() * 100.0;
        let way = if self.ratio >= 1.0 {
            "faster"
        } else {
            "slower"
        };
        format!(
            "B's clock {pct:.1}% {way} than A's (canaries: {} and {})",
            self.readings[0],
            crate::units::count(self.readings[1], "reading")
        )
    }

    /// ln of the ratio a row of B over A would show from the clock alone.
    pub fn expected_log(&self, lower_is_better: bool) -> f64 {
        if lower_is_better {
            -self.ratio.ln()
        } else {
            self.ratio.ln()
        }
    }
}

/// Per CPU read in both runs: (ln of B's median over A's, its variance, readings A, B).
fn per_cpu(
    a: &crate::result::CpuSpeed,
    b: &crate::result::CpuSpeed,
) -> Vec<(f64, f64, usize, usize)> {
    use crate::result::rounds::{median, robust_sigma};
    let of = |s: &crate::result::CpuSpeed, cpu: u32| -> Vec<f64> {
        s.canaries
            .iter()
            .filter(|c| c.cpu == cpu && c.cycles_per_ns.is_finite() && c.cycles_per_ns > 0.0)
            .map(|c| c.cycles_per_ns.ln())
            .collect()
    };
    let mut cpus: Vec<u32> = a.canaries.iter().map(|c| c.cpu).collect();
    cpus.sort_unstable();
    cpus.dedup();
    cpus.into_iter()
        .filter_map(|cpu| {
            let (x, y) = (of(a, cpu), of(b, cpu));
            if x.len() < MIN_CANARIES || y.len() < MIN_CANARIES {
                return None;
            }
            // The variance of a median: (π/2)·σ²/n.
            let v = |z: &[f64]| {
                std::f64::consts::FRAC_PI_2 * robust_sigma(z).max(MIN_CANARY_SIGMA).powi(2)
                    / z.len() as f64
            };
            Some((median(&y) - median(&x), v(&x) + v(&y), x.len(), y.len()))
        })
        .collect()
}

/// B's clock against A's when both runs were measured on one host in one setting and their
/// canaries moved by less than a changed setting would (`SAME`): the shift is the host's,
/// between runs, and a CPU-bound row is compared per cycle. None otherwise (another host
/// or setting, no canaries, or a shift as large as a governor's or a power cap's: then the
/// rows are compared as they are and the cause `explain` says what the clock did).
pub fn held_clock(a: &RunDocument, b: &RunDocument) -> Option<RunClock> {
    if a.host.is_none() || a.host != b.host || !crate::compare::same_setting(&a.env, &b.env) {
        return None;
    }
    let cpus = per_cpu(a.cpu_speed.as_ref()?, b.cpu_speed.as_ref()?);
    if cpus.is_empty() {
        return None;
    }
    // Inverse-variance weighted over the CPUs read in both runs.
    let w: f64 = cpus.iter().map(|c| 1.0 / c.1).sum();
    let d = cpus.iter().map(|c| c.0 / c.1).sum::<f64>() / w;
    // CPUs whose clocks moved unalike (a neighbour on one of them): no one clock to hold.
    let alike = cpus
        .iter()
        .all(|c| (c.0 - d).abs() <= CPUS_ALIKE + 3.0 * c.1.sqrt());
    (alike && d.abs() < SAME.ln()).then(|| RunClock {
        ratio: d.exp(),
        se: (1.0 / w).sqrt(),
        readings: [
            cpus.iter().map(|c| c.2).sum(),
            cpus.iter().map(|c| c.3).sum(),
        ],
    })
}
