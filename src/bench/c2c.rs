//! The `c2c` suite: `c2c.cacheline@1`, the hardware cost of talking between CPUs. Two
//! threads pinned to CPUs A and B take turns swapping one cache line with compare-and-swap
//! (A: PONG->PING, B: PING->PONG, `bench::pair`), as core-to-core-latency does; one-way latency is a
//! round trip's time over two, in ns. Every CPU pair is measured on machines of up to 16
//! usable CPUs; beyond that a few pairs per relation (SMT sibling, same LLC, cross LLC,
//! cross package, cross node), and the result says so. Next to `ctx`, the OS cost.

use super::{Benchmark, Emitted, RunContext, Skipped};
use crate::bench::pair::{one_way_ns, ping_pong};
use crate::findings::results::annotate;
use crate::measure::batch::{calibrate, time_batch, Batch};
use crate::placement::{Relation, Topo};
use crate::result::{BenchResult, Placement, Quality};

pub struct CacheLine;

/// Every pair is measured up to this many usable CPUs.
pub const ALL_PAIRS_UP_TO: usize = 16;
/// Pairs per relation on larger machines.
pub const PAIRS_PER_RELATION: usize = 4;

/// The CPU pairs to measure and whether they are a sample.
pub fn pairs(topo: &Topo) -> (Vec<([u32; 2], Relation)>, bool) {
    let u = topo.usable();
    if u.len() <= ALL_PAIRS_UP_TO {
        let mut v = Vec::new();
        for (i, &a) in u.iter().enumerate() {
            for &b in &u[i + 1..] {
                v.push(([a, b], topo.relation(a, b)));
            }
        }
        return (v, false);
    }
    // Spread the first CPU of each pair over the machine, one pair per start CPU.
    let stride = (u.len() / 8).max(1);
    let mut v = Vec::new();
    for rel in [
        Relation::SmtSibling,
        Relation::SameLlc,
        Relation::CrossLlc,
        Relation::CrossPackage,
        Relation::CrossNode,
    ] {
        let mut n = 0;
        for &a in u.iter().step_by(stride) {
            if n == PAIRS_PER_RELATION {
                break;
            }
            if let Some(&b) = u.iter().find(|&&b| b != a && topo.relation(a, b) == rel) {
                v.push(([a.min(b), a.max(b)], rel));
                n += 1;
            }
        }
    }
    v.sort();
    v.dedup();
    (v, true)
}

/// Ping-pong between threads pinned to `a` and `b` (`bench::pair`); one batch per sample.
fn measure_pair(a: u32, b: u32, samples: usize, min_batch_ns: f64) -> anyhow::Result<Vec<Batch>> {
    ping_pong(a, b, None, |work| {
        work(10_000); // warm up: both lines of play in cache, both CPUs awake
        let n = calibrate(work, min_batch_ns);
        let mut out = Vec::with_capacity(samples);
        for _ in 0..samples {
            if crate::deadline::stop_requested() {
                break;
            }
            out.push(time_batch(work, n));
        }
        out
    })
    .map(|(mut out, cut)| {
        // The batch the deadline cut short is not a batch of n round trips.
        if cut {
            out.pop();
        }
        out
    })
}

impl Benchmark for CacheLine {
    fn id(&self) -> &'static str {
        "c2c.cacheline@1"
    }

    /// A cache line passed between two spinning CPUs: what the pair canaries measure.
    fn nature(&self, _: &BenchResult) -> super::nature::Nature {
        use super::nature::{Nature, Tasks};
        Nature {
            tasks: Tasks::Pair,
            pair_canary: true,
            ..Nature::default()
        }
    }

    /// "cache line CPU 0 to 1 same-llc": the pair and how the two CPUs relate.
    fn label(&self, params: &crate::result::Params, placement: &str) -> Option<String> {
        let p: PairParams = params.read()?;
        Some(format!(
            "cache line CPU {} to {} {placement}",
            p.cpu_a, p.cpu_b
        ))
    }

    fn levels(&self) -> &'static [super::levels::LevelUse] {
        use super::levels::*;
        const L: &[LevelUse] = &[
            per_sample(Level::Sample, "consecutive timed batches of the pair's ping-pong"),
            per_round(Level::Allocation, "each round draws the line afresh (`bench::pair`: a random line of a fresh mapping), so which LLC slice or home agent owns it varies between rounds as between runs; the samples of one round share it"),
            not_applicable(Level::Process, "both threads pinned to the pair's CPUs: the placement cannot vary"),
            between_runs(Level::Run, "frequency and neighbours of the run: separate runs (calibrate)"),
            BOOT_AND_HOST[0],
            BOOT_AND_HOST[1],
        ];
        L
    }

    /// Twice the rounds: a round of every pair takes about 0.02 s on a small machine, and the
    /// rows' noise is between rounds (where the host keeps the virtual CPUs).
    fn round_weight(&self) -> usize {
        2
    }

    /// 2 s of a default run on a machine of one CPU pair (a round takes 0.02 s), more with
    /// more pairs.
    fn budget_share_s(&self, ctx: &RunContext) -> f64 {
        crate::bench::scaled_share(2.0, pairs(&Topo::new(ctx.probe)).0.len() as f64, 1.0)
    }

    /// 20%: the host may move two virtual CPUs between one core's SMT siblings and two
    /// cores (23 against 120 ns here), so its rounds spread wide on a VM.
    fn mde_target(&self, _r: &BenchResult) -> f64 {
        0.20
    }

    fn describe(&self) -> &'static str {
        "ns one-way for a cache line passed between two pinned CPUs by compare-and-swap, per CPU pair (sampled per relation above 16 CPUs)"
    }

    fn planned(&self, ctx: &RunContext) -> usize {
        pairs(&Topo::new(ctx.probe)).0.len().max(1)
    }

    fn plan(&self, ctx: &RunContext) -> Vec<crate::placement::Planned> {
        use crate::placement::Planned;
        let topo = Topo::new(ctx.probe);
        let (pairs, sampled) = pairs(&topo);
        if pairs.is_empty() {
            return vec![Planned::skip(
                self.id(),
                "all pairs",
                format!(
                    "needs two usable CPUs, this process has {}",
                    topo.usable().len()
                ),
            )];
        }
        let how = if sampled {
            "sampled pairs per relation"
        } else {
            "every pair of usable CPUs"
        };
        pairs
            .into_iter()
            .map(|([a, b], rel)| {
                Planned::run(
                    self.id(),
                    format!("{a},{b}"),
                    Some(vec![a, b]),
                    format!("{} ({how})", rel.name()),
                )
            })
            .collect()
    }

    fn run(&self, ctx: &RunContext, emit: &mut dyn FnMut(Emitted)) -> anyhow::Result<()> {
        let topo = Topo::new(ctx.probe);
        let (pairs, sampled) = pairs(&topo);
        if pairs.is_empty() {
            emit(Emitted::Skipped(Skipped {
                benchmark: self.id().into(),
                case: "all pairs".into(),
                reason: format!(
                    "needs two usable CPUs, this process has {}",
                    topo.usable().len()
                ),
            }));
            return Ok(());
        }
        for ([a, b], rel) in pairs {
            if crate::deadline::stop_requested() {
                return crate::deadline::stopped();
            }
            emit(Emitted::Running(format!("CPUs {a},{b} ({})", rel.name())));
            let batches = match measure_pair(a, b, ctx.samples, ctx.min_batch_ns) {
                Ok(b) => b,
                Err(e) => {
                    emit(Emitted::Skipped(Skipped {
                        benchmark: self.id().into(),
                        case: format!("CPUs {a},{b}"),
                        reason: e.to_string(),
                    }));
                    continue;
                }
            };
            if batches.len() < ctx.samples {
                return crate::deadline::stopped(); // an unfinished result is not kept
            }
            // One-way: half a round trip.
            let samples: Vec<f64> = batches.iter().map(one_way_ns).collect();
            let quality = Quality::of(ctx.clock_cost_ns, &batches);
            let params = crate::result::Params::from_struct(&PairParams {
                cpu_a: a,
                cpu_b: b,
                pairs: if sampled {
                    "sampled per relation"
                } else {
                    "all"
                }
                .into(),
            });
            let placement = Placement::on(rel.name(), vec![a, b]);
            let mut r = BenchResult::new(
                self.id(),
                params,
                placement,
                "ns/one-way",
                true,
                samples,
                quality,
            )
            .ok_or_else(|| anyhow::anyhow!("c2c: no valid samples"))?;
            annotate(&mut r);
            emit(Emitted::Result(Box::new(r)));
        }
        Ok(())
    }
}

/// The params of `c2c.cacheline`: the CPU pair, and whether every pair was measured (`all`)
/// or pairs were sampled per relation.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct PairParams {
    pub cpu_a: u32,
    pub cpu_b: u32,
    pub pairs: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::fixture;

    #[test]
    fn small_machines_get_every_pair() {
        let p = fixture("arm-no-l3");
        let (v, sampled) = pairs(&Topo::new(&p));
        assert!(!sampled);
        assert_eq!(v.len(), 8 * 7 / 2);
        assert!(v.contains(&([0, 1], Relation::SameLlc)));
        assert!(v.contains(&([3, 4], Relation::CrossLlc)));
    }

    #[test]
    fn large_machines_get_a_few_pairs_per_relation() {
        let p = fixture("epyc-256");
        let (v, sampled) = pairs(&Topo::new(&p));
        assert!(sampled);
        for rel in [
            Relation::SmtSibling,
            Relation::SameLlc,
            Relation::CrossLlc,
            Relation::CrossNode,
        ] {
            let n = v.iter().filter(|(_, r)| *r == rel).count();
            assert!((1..=PAIRS_PER_RELATION).contains(&n), "{rel:?}: {n} pairs");
        }
        // Packages are split into nodes here: a cross-package pair is always cross-node.
        assert_eq!(
            v.iter()
                .filter(|(_, r)| *r == Relation::CrossPackage)
                .count(),
            0
        );
        assert!(v.len() <= 5 * PAIRS_PER_RELATION);
        for ([a, b], rel) in &v {
            assert_eq!(Topo::new(&p).relation(*a, *b), *rel);
        }
    }

    #[test]
    fn a_pair_measures_a_plausible_latency() {
        let Some(cpus) = crate::bench::pair::two_usable_cpus() else {
            return;
        };
        let b = measure_pair(cpus[0], cpus[1], 3, 1e6).unwrap();
        assert_eq!(b.len(), 3);
        for x in &b {
            let one_way = one_way_ns(x);
            // A cache line hand-off: tens of ns on bare metal, more in a busy VM; never sub-ns.
            assert!((5.0..1e6).contains(&one_way), "{one_way} ns one-way");
        }
    }
}
