//! `memory.latency@1`: dependent loads over a random cyclic permutation of cache lines (one
//! pointer per 64-byte line), so neither prefetchers nor parallelism hide the latency; ns
//! per load for working sets from 4 KiB upward in sqrt(2) steps, with 4 KiB pages and with
//! transparent huge pages. The curve's plateaus give the measured cache levels, shown
//! beside what sysfs reports (`cache-levels`, `llc-size-mismatch`).

use super::region::{available_bytes, Pages, Region};
use crate::bench::{Benchmark, Emitted, RunContext, Skipped};
use crate::error::Interrupted;
use crate::findings::memory;
use crate::findings::results::annotate;
use crate::measure::batch::{calibrate, time_batch, Batch};
use crate::measure::plateaus;
use crate::placement::pin_current_thread;
use crate::report::units::bytes;
use crate::result::{BenchResult, Placement, Quality};
use rand::seq::SliceRandom;
use rand::SeedableRng;

pub struct Latency;

const LINE: usize = 64;
const MIB: u64 = 1 << 20;
/// The sweep goes at least this far, and past twice the reported LLC.
const MIN_TOP: u64 = 128 * MIB;
/// Never beyond this, nor beyond a quarter of the available memory.
const MAX_TOP: u64 = 2048 * MIB;

/// The working-set sizes to measure: 4 KiB upward in sqrt(2) steps, line-aligned, to `top`.
pub fn sizes(top: u64) -> Vec<u64> {
    let mut v = Vec::new();
    let mut s = 4096.0f64;
    while s as u64 <= top {
        let b = (s as u64 / LINE as u64) * LINE as u64;
        if v.last() != Some(&b) {
            v.push(b);
        }
        s *= std::f64::consts::SQRT_2;
    }
    v
}

/// How far the sweep goes: past twice the reported LLC and at least 64 MiB, within memory.
pub fn top_size(reported_llc: Option<u64>, available: Option<u64>) -> u64 {
    let want = (2 * reported_llc.unwrap_or(0)).max(MIN_TOP);
    let cap = available.map(|a| a / 4).unwrap_or(MAX_TOP).min(MAX_TOP);
    want.min(cap).max(MIB)
}

/// Memory reached: the last four points (a 4x size range) agree within 15%, past MIN_TOP.
fn memory_plateau(curve: &[(u64, f64)]) -> bool {
    if curve.len() < 4 || curve.last().unwrap().0 < MIN_TOP {
        return false;
    }
    let tail: Vec<f64> = curve[curve.len() - 4..].iter().map(|x| x.1).collect();
    let (lo, hi) = tail
        .iter()
        .fold((f64::MAX, 0.0f64), |(l, h), x| (l.min(*x), h.max(*x)));
    hi <= lo * 1.15
}

/// A chain of `lines` cache lines in one random cycle, in a fresh region. Returns the region
/// and the address to start from.
fn build_chain(
    size: u64,
    pages: Pages,
    seed: u64,
    node: Option<u32>,
) -> anyhow::Result<(Region, usize)> {
    let lines = (size as usize / LINE).max(2);
    let mut region = Region::map(lines * LINE, pages, node)?;
    let words = region.words(lines * LINE / 8);
    let base = words.as_ptr() as usize;
    let mut order: Vec<u32> = (0..lines as u32).collect();
    order.shuffle(&mut rand::rngs::SmallRng::seed_from_u64(seed));
    for i in 0..lines {
        let here = order[i] as usize * (LINE / 8);
        let next = order[(i + 1) % lines] as usize;
        words[here] = base + next * LINE;
    }
    Ok((region, base + order[0] as usize * LINE))
}

/// Follow the chain `n` loads from `*p`, leaving `*p` where it stopped.
fn chase(p: &mut usize, n: u64) {
    let mut q = *p;
    for _ in 0..n {
        // SAFETY: every chain word holds the address of another line of the same live region.
        q = unsafe { std::ptr::read_volatile(q as *const usize) };
    }
    *p = std::hint::black_box(q);
}

/// Measure one size (memory on `node` when given): samples of ns per load.
pub fn measure(
    size: u64,
    pages: Pages,
    node: Option<u32>,
    samples: usize,
    min_batch_ns: f64,
) -> anyhow::Result<Vec<Batch>> {
    let (_region, start) = build_chain(size, pages, 0x7275_6562 ^ size, node)?;
    let mut p = start;
    let mut work = |n: u64| chase(&mut p, n);
    work(((size / LINE as u64) * 2).min(200_000)); // warm: walk the chain, fill the TLBs
    let n = calibrate(&mut work, min_batch_ns);
    Ok((0..samples)
        .map_while(|_| (!crate::interrupt::requested()).then(|| time_batch(&mut work, n)))
        .collect())
}

fn reported(ctx: &RunContext, cpu: u32) -> (Option<u64>, Vec<String>) {
    let t = &ctx.probe.topology;
    let mine: Vec<_> = t
        .caches
        .iter()
        .filter(|c| c.cpus.contains(&cpu) && c.kind != "Instruction")
        .collect();
    let text = mine
        .iter()
        .map(|c| {
            format!(
                "L{}{} {}",
                c.level,
                if c.kind == "Data" { "d" } else { "" },
                c.size_bytes.map(bytes).unwrap_or_else(|| "?".into())
            )
        })
        .collect();
    let llc = mine
        .iter()
        .max_by_key(|c| c.level)
        .and_then(|c| c.size_bytes);
    (llc, text)
}

impl Benchmark for Latency {
    fn id(&self) -> &'static str {
        "memory.latency@1"
    }

    fn describe(&self) -> &'static str {
        "ns per dependent load over a random cyclic chain of cache lines, per working-set size (4 KiB and THP pages); plateaus give the measured cache levels"
    }

    fn planned(&self, ctx: &RunContext) -> usize {
        let cpu = ctx.probe.cpus.usable.first().copied().unwrap_or(0);
        sizes(top_size(reported(ctx, cpu).0, available_bytes())).len() * 2
    }

    fn plan(&self, ctx: &RunContext) -> Vec<crate::placement::Planned> {
        match ctx.probe.cpus.usable.first() {
            Some(&cpu) => vec![crate::placement::Planned::run(
                self.id(),
                "sweep",
                Some(vec![cpu]),
                "one thread on the first usable CPU",
            )],
            None => vec![crate::placement::Planned::skip(
                self.id(),
                "sweep",
                "no usable CPU",
            )],
        }
    }

    fn run(&self, ctx: &RunContext, emit: &mut dyn FnMut(Emitted)) -> anyhow::Result<()> {
        let cpu = ctx.probe.cpus.usable.first().copied().unwrap_or(0);
        let (llc, levels) = reported(ctx, cpu);
        let top = top_size(llc, available_bytes());
        let thp = ctx.probe.kernel.thp.as_deref();
        let mut variants = vec![Pages::Small];
        match thp {
            Some("always") | Some("madvise") => variants.push(Pages::Huge),
            other => emit(Emitted::Skipped(Skipped {
                benchmark: self.id().into(),
                case: "pages=thp".into(),
                reason: format!(
                    "transparent huge pages are {}",
                    other.unwrap_or("not available")
                ),
            })),
        }
        let judge_4k = variants.len() == 1;
        for pages in variants {
            let judge = pages == Pages::Huge || judge_4k;
            emit(Emitted::Running(format!(
                "pages={} size sweep",
                pages.name()
            )));
            // The sweep runs in a thread pinned to one CPU, so the caller's affinity is untouched.
            let sweep = std::thread::scope(|s| {
                s.spawn(|| -> anyhow::Result<(Vec<BenchResult>, bool)> {
                    pin_current_thread(cpu).map_err(anyhow::Error::msg)?;
                    let mut done = Vec::new();
                    let mut curve = Vec::new();
                    for size in sizes(top) {
                        let batches = measure(size, pages, None, ctx.samples, ctx.min_batch_ns)?;
                        if batches.len() < ctx.samples {
                            return Ok((done, true));
                        }
                        let samples: Vec<f64> =
                            batches.iter().map(|b| b.ns_per_iteration()).collect();
                        let params = crate::result::Params::from_struct(&LatencyParams {
                            size_bytes: size,
                            pages: pages.name().into(),
                        });
                        let placement = Placement {
                            cpu_kinds: None,
                            name: "cpus".into(),
                            cpus: Some(vec![cpu]),
                            observed: None,
                        };
                        let q = Quality::of(ctx.clock_cost_ns, &batches);
                        let mut r = BenchResult::new(
                            self.id(),
                            params,
                            placement,
                            "ns/load",
                            true,
                            samples,
                            q,
                        )
                        .ok_or_else(|| anyhow::anyhow!("memory.latency: no valid samples"))?;
                        annotate(&mut r);
                        curve.push((size, r.stats.median));
                        done.push(r);
                        if memory_plateau(&curve) {
                            break;
                        }
                    }
                    let found = plateaus::find(&curve);
                    let reached = plateaus::ends_on_plateau(&curve, &found);
                    if let Some(last) = done.last_mut() {
                        last.findings.extend(memory::evaluate(
                            &found,
                            reached,
                            llc,
                            &levels,
                            pages.name(),
                            judge,
                        ));
                    }
                    Ok((done, false))
                })
                .join()
                .unwrap_or_else(|_| Err(anyhow::anyhow!("the latency thread panicked")))
            })?;
            let (done, interrupted) = sweep;
            for r in done {
                emit(Emitted::Result(Box::new(r)));
            }
            if interrupted {
                return Err(Interrupted.into());
            }
        }
        Ok(())
    }
}

/// The params of `memory.latency`: working set and page size (`4k`, `thp`).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct LatencyParams {
    pub size_bytes: u64,
    pub pages: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_grow_by_sqrt2_from_4k() {
        let s = sizes(64 * 1024);
        assert_eq!(s[0], 4096);
        assert_eq!(s[2], 8192);
        assert_eq!(*s.last().unwrap(), 65536);
        assert!(s.iter().all(|x| x % 64 == 0));
    }

    #[test]
    fn the_sweep_goes_past_the_reported_llc_within_memory() {
        assert_eq!(top_size(Some(8 * MIB), Some(24 << 30)), 128 * MIB);
        assert_eq!(top_size(Some(480 * MIB), Some(24 << 30)), 960 * MIB);
        assert_eq!(top_size(Some(4096 * MIB), Some(24 << 30)), MAX_TOP);
        assert_eq!(top_size(Some(480 * MIB), Some(1 << 30)), 256 * MIB);
    }

    #[test]
    fn the_chain_is_one_cycle_over_every_line() {
        let (_r, start) = build_chain(64 * 1024, Pages::Small, 1, None).unwrap();
        let mut seen = std::collections::HashSet::new();
        let mut p = start;
        for _ in 0..1024 {
            assert!(seen.insert(p), "line visited twice before the cycle closed");
            chase(&mut p, 1);
        }
        assert_eq!(p, start, "the cycle does not close after 1024 lines");
    }

    #[test]
    fn l1_loads_are_faster_than_memory_loads() {
        let small = measure(16 * 1024, Pages::Small, None, 3, 1e6).unwrap();
        let big = measure(128 * MIB, Pages::Small, None, 3, 1e6).unwrap();
        let (s, b) = (small[1].ns_per_iteration(), big[1].ns_per_iteration());
        assert!((0.2..20.0).contains(&s), "16 KiB: {s} ns per load");
        assert!(
            b > 3.0 * s,
            "128 MiB {b} ns is not slower than 16 KiB {s} ns"
        );
    }
}
