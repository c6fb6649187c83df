//! `memory.latency@1`: dependent loads over a random cyclic permutation of cache lines (one
//! pointer per 64-byte line), so neither prefetchers nor parallelism hide the latency; ns
//! per load for working sets from 4 KiB upward in sqrt(2) steps, with 4 KiB pages and with
//! transparent huge pages. Each sample walks the chain in an allocation of its own, and each
//! round holds a spacer of random size while it maps (`region::Spacer`), so the rounds draw
//! their physical pages afresh (a fresh allocation alone lands on the pages the last one
//! freed). The curves give the measured cache levels
//! (`hierarchy`), shown beside what sysfs reports (`cache-levels`, `llc-size-mismatch`), and
//! the measured LLC the bandwidth arrays are sized by later in the run (latency runs first).
//! The sweep stops on memory's plateau or well past the last cache (`may_stop`).

use super::region::{available_bytes, spacer_room, Pages, Region, Spacer};
use crate::bench::{Benchmark, Emitted, RunContext, Skipped};
use crate::findings::memory;
use crate::findings::results::annotate;
use crate::measure::batch::{calibrate, time_batch, Batch};
use crate::measure::hierarchy;
use crate::placement::pin_current_thread;
use crate::probe::memory_limit::{limit_words, Room};
use crate::result::{BenchResult, Placement, Quality};
use crate::units::bytes;
use rand::seq::SliceRandom;
use rand::SeedableRng;

pub struct Latency;

const LINE: usize = 64;
const MIB: u64 = 1 << 20;
/// The sweep goes at least this far, and past twice the reported LLC.
const MIN_TOP: u64 = 128 * MIB;
/// Never beyond this, nor beyond a quarter of the available memory.
const MAX_TOP: u64 = 2048 * MIB;

/// How far the sweep goes: past twice the reported LLC and at least 64 MiB, within memory.
pub fn top_size(reported_llc: Option<u64>, available: Option<u64>) -> u64 {
    let want = (2 * reported_llc.unwrap_or(0)).max(MIN_TOP);
    let cap = available.map(|a| a / 4).unwrap_or(MAX_TOP).min(MAX_TOP);
    want.min(cap).max(MIB)
}

/// The sweep's top within `room` (see [`Room::now`]): a chain of `size` bytes holds its
/// region and, while it is built, 8 bytes of layout per line (an eighth more). Under a cgroup
/// limit that leaves less, the top is cut to fit and the reason names the limit.
pub fn top_within(top: u64, room: &Room) -> (u64, Option<String>) {
    let (Some(squeeze), Some(left)) = (&room.squeeze, room.bytes) else {
        return (top, None);
    };
    let need = top + top / 8;
    if need <= left {
        return (top, None);
    }
    let cut = (left / 9 * 8 / MIB * MIB).max(MIB);
    let reason = format!(
        "{} {}: memory.latency's chains up to {} need {}, it leaves {} (its cgroup holds {}, and headroom); measured up to {}",
        limit_words(&squeeze.limit),
        bytes(squeeze.limit.bytes),
        bytes(top),
        bytes(need),
        bytes(left),
        bytes(squeeze.held_bytes),
        bytes(cut)
    );
    (cut, Some(reason))
}

/// The top of this run's sweep (`top_size` within the memory left now), and the reason
/// when a memory limit cut it.
pub fn sweep_top(ctx: &RunContext, cpu: u32) -> (u64, Option<String>) {
    let top = top_size(reported(ctx, cpu).0, available_bytes());
    top_within(top, &Room::now(&ctx.probe.memory))
}

/// The case of the sizes a memory limit left out of the sweep (one skipped entry a run).
pub const CUT_CASE: &str = "sizes past the memory limit";

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

/// The sweep has gone this many times past the end of the last cache it found.
pub const PAST_LLC: u64 = 8;

/// Whether the sweep may stop: memory's plateau is reached, or (past MIN_TOP) the curve left
/// its last cache at least [`PAST_LLC`] times below the current size. A VM whose report
/// inflates the LLC (480 MiB) and whose curve keeps rising under nested paging thus stops
/// near 8x its real LLC instead of at twice the reported one.
pub fn may_stop(curve: &[(u64, f64)]) -> bool {
    let Some(&(size, _)) = curve.last() else {
        return false;
    };
    memory_plateau(curve)
        || (size >= MIN_TOP
            && hierarchy::judge_one(curve, "4k")
                .llc
                .is_some_and(|l| l.next_bytes.saturating_mul(PAST_LLC) <= size))
}

/// The layout of a chain over `lines` cache lines: one random cycle, as the index of the
/// line each line points to, and the line to start from. The same layout is written into
/// a fresh allocation per sample (see [`place`]).
pub struct Chain {
    next: Vec<u32>,
    start: u32,
}

impl Chain {
    pub fn random(lines: usize, seed: u64) -> Chain {
        let lines = lines.max(2);
        let mut order: Vec<u32> = (0..lines as u32).collect();
        order.shuffle(&mut rand::rngs::SmallRng::seed_from_u64(seed));
        let mut next = vec![0u32; lines];
        for i in 0..lines {
            next[order[i] as usize] = order[(i + 1) % lines];
        }
        Chain {
            next,
            start: order[0],
        }
    }
}

/// Lines written between two looks at the run's deadline while a chain is placed (4 MiB).
const PLACE_STEP: usize = 1 << 16;

/// Write `chain` into a fresh region (in address order, so building is quick even for large
/// sets): new physical pages, new cache-set and TLB layout. Returns the region and the
/// address to start from; None when Ctrl-C or the run's deadline came first (a large set on
/// a starved CPU takes seconds to place).
fn place(
    chain: &Chain,
    pages: Pages,
    node: Option<u32>,
) -> anyhow::Result<Option<(Region, usize)>> {
    let lines = chain.next.len();
    let mut region = Region::map(lines * LINE, pages, node)?;
    let words = region.words(lines * LINE / 8);
    let base = words.as_ptr() as usize;
    for (line, &next) in chain.next.iter().enumerate() {
        if line % PLACE_STEP == PLACE_STEP - 1 && crate::deadline::stop_requested() {
            return Ok(None);
        }
        words[line * (LINE / 8)] = base + next as usize * LINE;
    }
    Ok(Some((region, base + chain.start as usize * LINE)))
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

/// Measure one size (memory on `node` when given): samples of ns per load. Each sample walks
/// the chain in an allocation of its own (its TLB layout fresh; its physical pages much the
/// same as the last one's unless a spacer moved them: `region::Spacer`, held per round by
/// `run`). Fewer samples than asked when Ctrl-C or the run's deadline came first.
pub fn measure(
    size: u64,
    pages: Pages,
    node: Option<u32>,
    samples: usize,
    min_batch_ns: f64,
) -> anyhow::Result<Vec<Batch>> {
    let chain = Chain::random(size as usize / LINE, 0x7275_6562 ^ size);
    let mut n = None;
    let mut out = Vec::with_capacity(samples);
    for _ in 0..samples {
        if crate::deadline::stop_requested() {
            break;
        }
        let Some((region, start)) = place(&chain, pages, node)? else {
            break;
        };
        let mut p = start;
        let mut work = |k: u64| chase(&mut p, k);
        work(((size / LINE as u64) * 2).min(200_000)); // warm: walk the chain, fill the TLBs
        let n = *n.get_or_insert_with(|| calibrate(&mut work, min_batch_ns));
        out.push(time_batch(&mut work, n));
        drop(region);
    }
    Ok(out)
}

/// A short coarse curve on `cpu` (sizes doubling from 4 KiB, three short samples each,
/// stopping as the full sweep does): enough to see where the last cache ends when no full
/// latency sweep ran before (`run memory.bandwidth` alone).
pub fn coarse_curve(cpu: u32, pages: Pages, top: u64) -> anyhow::Result<Vec<(u64, f64)>> {
    std::thread::scope(|s| {
        s.spawn(|| -> anyhow::Result<Vec<(u64, f64)>> {
            pin_current_thread(cpu).map_err(anyhow::Error::msg)?;
            let mut curve = Vec::new();
            let mut size = 4096u64;
            while size <= top && !may_stop(&curve) {
                let mut ns: Vec<f64> = measure(size, pages, None, 3, 5e5)?
                    .iter()
                    .map(|b| b.ns_per_iteration())
                    .collect();
                if ns.len() < 3 {
                    crate::deadline::stopped()?;
                    return Ok(curve);
                }
                ns.sort_by(f64::total_cmp);
                curve.push((size, ns[1]));
                size *= 2;
            }
            Ok(curve)
        })
        .join()
        .unwrap_or_else(|_| Err(anyhow::anyhow!("the coarse latency thread panicked")))
    })
}

/// The caches the OS reports for `cpu` (data and unified), as text ("L1d 48 KiB"), and
/// the size of the last level among them.
pub fn reported_caches(env: &crate::probe::ProbeDoc, cpu: u32) -> (Option<u64>, Vec<String>) {
    let t = &env.topology;
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

pub fn reported(ctx: &RunContext, cpu: u32) -> (Option<u64>, Vec<String>) {
    reported_caches(ctx.probe, cpu)
}

impl Benchmark for Latency {
    /// "latency 4 KiB 4k pages", "latency 1.5 MiB huge pages".
    fn label(&self, params: &crate::result::Params, _: &str) -> Option<String> {
        let p: LatencyParams = params.read()?;
        let pages = match p.pages.as_str() {
            "thp" => "huge pages".to_string(),
            other => format!("{other} pages"),
        };
        Some(format!(
            "latency {} {pages}",
            crate::units::bytes(p.size_bytes)
        ))
    }

    fn levels(&self) -> &'static [crate::bench::levels::LevelUse] {
        super::variance::LATENCY
    }

    /// The bandwidth arrays are sized by the LLC this sweep measures.
    fn feeds_its_suite(&self) -> bool {
        true
    }

    fn id(&self) -> &'static str {
        "memory.latency@1"
    }

    /// A chain of loads on pages it advises: it follows the core clock while it fits the
    /// core's own cache, holds its region and a layout an eighth of it, and past the run's
    /// LLC its figure is the host's memory, drawn once per run.
    fn nature(&self, r: &BenchResult) -> crate::bench::nature::Nature {
        use crate::bench::nature::{Clock, Memory, Nature, RunLevel};
        let size = r.params.get("size_bytes").and_then(|v| v.as_u64());
        Nature {
            clock: Clock::WhileInCoreCache,
            memory: r
                .params
                .read::<LatencyParams>()
                .map_or(Memory::Other, |p| Memory::Chain {
                    size_bytes: p.size_bytes,
                    pages: p.pages,
                }),
            footprint_bytes: size.map(|s| s + s / 8),
            advises_pages: true,
            run_level: RunLevel::HostMemoryPastTheLlc,
            ..Nature::default()
        }
    }

    fn describe(&self) -> &'static str {
        "ns per dependent load over a random cyclic chain of cache lines, per working-set size (4 KiB and THP pages); plateaus give the measured cache levels"
    }

    /// 12 s of a default run: about four whole sweeps of both page sizes up to 128 MiB
    /// (2.5 s each on a 2-vCPU guest) and rounds of the points whose verdict is short; more
    /// where the sweep goes further (past twice a larger LLC).
    fn budget_share_s(&self, ctx: &RunContext) -> f64 {
        let cpu = ctx.probe.cpus.usable.first().copied().unwrap_or(0);
        let top = sweep_top(ctx, cpu).0;
        crate::bench::scaled_share(12.0, top as f64, MIN_TOP as f64)
    }

    /// 8%: a point inside a cache is sharp within a few rounds; near a cache's edge (where
    /// the host's share of the LLC moves) it needs more.
    fn mde_target(&self, _r: &BenchResult) -> f64 {
        0.08
    }

    /// Each point (page size and working set) is a case of its own: a round the allocation
    /// gives measures only the points whose verdict is short.
    fn case_of(&self, r: &BenchResult) -> Option<String> {
        let p = r.params.read::<LatencyParams>()?;
        Some(case(&p.pages, p.size_bytes))
    }

    fn planned(&self, ctx: &RunContext) -> usize {
        if let Some(only) = ctx.only {
            return only.len();
        }
        let cpu = ctx.probe.cpus.usable.first().copied().unwrap_or(0);
        hierarchy::sizes(sweep_top(ctx, cpu).0).len() * 2
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
        let (top, cut) = sweep_top(ctx, cpu);
        if let Some(reason) = cut {
            emit(Emitted::Skipped(Skipped {
                benchmark: self.id().into(),
                case: CUT_CASE.into(),
                reason,
            }));
        }
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
        let last_variant = variants.len() - 1;
        // The 4 KiB sweep decides how far to go (`may_stop`); the huge-page sweep measures the
        // same sizes, so the two curves can be compared step by step. A round given some
        // cases only (`RunContext::only`) measures those, the curves left to whole rounds.
        let whole = ctx.only.is_none();
        let mut sweep_sizes = hierarchy::sizes(top);
        let mut curves: Vec<Vec<(u64, f64)>> = Vec::new();
        for (vi, pages) in variants.into_iter().enumerate() {
            let asked: Vec<u64> = sweep_sizes
                .iter()
                .copied()
                .filter(|s| ctx.wants(&case(pages.name(), *s)))
                .collect();
            if asked.is_empty() {
                continue;
            }
            emit(Emitted::Running(format!(
                "pages={} size sweep",
                pages.name()
            )));
            // The sweep runs in a thread pinned to one CPU, so the caller's affinity is untouched.
            let sizes_now = &asked;
            // The round's pages drawn afresh: a spacer of up to its largest chain, within the
            // memory the chain leaves.
            let largest = asked.iter().copied().max().unwrap_or(0);
            let spacer_most = spacer_room(
                largest,
                largest + largest / 8,
                &Room::now(&ctx.probe.memory),
            );
            let sweep = std::thread::scope(|s| {
                s.spawn(|| -> anyhow::Result<Sweep> {
                    pin_current_thread(cpu).map_err(anyhow::Error::msg)?;
                    let spacer = Spacer::hold(spacer_most, pages)?;
                    let mut done = Vec::new();
                    let mut curve = Vec::new();
                    for &size in sizes_now {
                        let batches = measure(size, pages, None, ctx.samples, ctx.min_batch_ns)?;
                        if batches.len() < ctx.samples {
                            return Ok((done, curve, true));
                        }
                        let samples: Vec<f64> =
                            batches.iter().map(|b| b.ns_per_iteration()).collect();
                        let params = crate::result::Params::from_struct(&LatencyParams {
                            size_bytes: size,
                            pages: pages.name().into(),
                        });
                        let placement = Placement::on("cpus", vec![cpu]);
                        let mut q = Quality::of(ctx.clock_cost_ns, &batches);
                        q.pages_per_round = spacer.held();
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
                        if vi == 0 && whole && may_stop(&curve) {
                            break;
                        }
                    }
                    Ok((done, curve, false))
                })
                .join()
                .unwrap_or_else(|_| Err(anyhow::anyhow!("the latency thread panicked")))
            })?;
            let (mut done, curve, stopped) = sweep;
            if vi == 0 && whole {
                sweep_sizes.truncate(curve.len());
            }
            curves.push(curve);
            if vi == last_variant && !stopped && whole {
                // Both curves measured: judge the hierarchy once, for the findings here and
                // for the bandwidth arrays' size later in this run.
                let h = hierarchy::judge(&curves[0], curves.get(1).map(|c| &c[..]));
                if let Some(last) = done.last_mut() {
                    last.findings.extend(memory::evaluate(&h, llc, &levels));
                }
                ctx.measured.set_hierarchy(h);
            }
            for r in done {
                emit(Emitted::Result(Box::new(r)));
            }
            if stopped {
                return crate::deadline::stopped();
            }
        }
        Ok(())
    }
}

/// The case of one point of the sweep (`Benchmark::case_of`): its page size and working set.
pub fn case(pages: &str, size_bytes: u64) -> String {
    format!("pages={pages} size_bytes={size_bytes}")
}

/// One page size's sweep: its results, its curve, and whether Ctrl-C or the run's deadline
/// cut it short.
type Sweep = (Vec<BenchResult>, hierarchy::Curve, bool);

/// The params of `memory.latency`: working set and page size (`4k`, `thp`).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct LatencyParams {
    pub size_bytes: u64,
    pub pages: String,
}

/// The latency curves of results (`memory.latency` rows): (4 KiB, huge pages), by size.
pub fn curves_of<'a>(
    results: impl IntoIterator<Item = &'a crate::result::BenchResult>,
) -> (hierarchy::Curve, hierarchy::Curve) {
    let (mut small, mut huge) = (Vec::new(), Vec::new());
    for r in results
        .into_iter()
        .filter(|r| r.base_id() == "memory.latency")
    {
        let Some(p) = r.params.read::<LatencyParams>() else {
            continue;
        };
        match p.pages.as_str() {
            "4k" => small.push((p.size_bytes, r.stats.median)),
            "thp" => huge.push((p.size_bytes, r.stats.median)),
            _ => {}
        }
    }
    small.sort_by_key(|p| p.0);
    huge.sort_by_key(|p| p.0);
    (small, huge)
}

/// The hierarchy a run's latency results show, or None when it has none.
pub fn of_results<'a>(
    results: impl IntoIterator<Item = &'a crate::result::BenchResult>,
) -> Option<hierarchy::Hierarchy> {
    let (small, huge) = curves_of(results);
    if small.is_empty() && huge.is_empty() {
        return None;
    }
    Some(if small.is_empty() {
        hierarchy::judge_one(&huge, "thp")
    } else {
        hierarchy::judge(&small, (!huge.is_empty()).then_some(&huge[..]))
    })
}

/// The effective LLC (`hierarchy::effective_llc`) a run's latency results show with pages
/// `pages` (`4k` or `thp`), or None.
pub fn effective_llc_of<'a>(
    results: impl IntoIterator<Item = &'a crate::result::BenchResult>,
    pages: &str,
) -> Option<hierarchy::EffectiveLlc> {
    let (small, huge) = curves_of(results);
    match pages {
        "4k" => hierarchy::effective_llc(&small, pages),
        "thp" => hierarchy::effective_llc(&huge, pages),
        _ => None,
    }
}

/// Whether `r` is a memory.latency row past the LLC cliff (`EffectiveLlc::past_cliff`) of
/// the run whose results are `run`, for its page size: its loads go to memory. False for
/// other rows and where the run's curve gives no effective LLC.
pub fn past_the_llc(r: &crate::result::BenchResult, run: &[crate::result::BenchResult]) -> bool {
    if r.base_id() != "memory.latency" {
        return false;
    }
    r.params
        .read::<LatencyParams>()
        .and_then(|p| Some(effective_llc_of(run, &p.pages)?.past_cliff(p.size_bytes)))
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The 128 MiB sweep of a 32 MiB LLC fits 256, 384 and 512 MiB (40 held) and no
    /// limit; under 160 MiB it is cut to what the limit leaves and the reason names it.
    #[test]
    fn the_sweep_fits_the_memory_limit() {
        use crate::probe::memory_limit::{Limit, Squeeze};
        let top = top_size(Some(32 * MIB), Some(24 << 30));
        assert_eq!(top, 128 * MIB);
        assert_eq!(top_within(top, &Room::machine(Some(12 << 30))), (top, None));
        for limit in [160u64, 256, 384, 512] {
            let room = Room::of(
                Some(10 << 30),
                Some(Squeeze {
                    limit: Limit {
                        bytes: limit * MIB,
                        file: "/sys/fs/cgroup/pod/memory.max".into(),
                    },
                    held_bytes: 40 * MIB,
                }),
            );
            let left = room.bytes.unwrap();
            let (t, why) = top_within(top, &room);
            assert!(t + t / 8 <= left, "{limit}: {t}");
            match why {
                None => assert_eq!(t, top, "{limit}"),
                Some(w) => {
                    assert!(t < top, "{limit}");
                    assert!(
                        w.starts_with(&format!("memory limit {limit} MiB: memory.latency's chains up to 128 MiB need 144 MiB")),
                        "{w}"
                    );
                }
            }
            assert_eq!(limit == 160, t < top, "{limit}: {t}");
        }
    }

    #[test]
    fn the_sweep_goes_past_the_reported_llc_within_memory() {
        assert_eq!(top_size(Some(8 * MIB), Some(24 << 30)), 128 * MIB);
        assert_eq!(top_size(Some(480 * MIB), Some(24 << 30)), 960 * MIB);
        assert_eq!(top_size(Some(4096 * MIB), Some(24 << 30)), MAX_TOP);
        assert_eq!(top_size(Some(480 * MIB), Some(1 << 30)), 256 * MIB);
    }

    #[test]
    fn a_curve_rising_to_the_end_stops_8x_past_its_llc_not_at_twice_the_report() {
        // The 480 MiB VM as the issue saw it: last cache left by 64 MiB, then page-walk steps
        // and no plateau of memory up to 960 MiB.
        let (small, _) = hierarchy::tests::vm_480_rising();
        let stop_at = |c: &[(u64, f64)]| {
            (1..=c.len())
                .find(|&n| may_stop(&c[..n]))
                .map(|n| c[n - 1].0)
        };
        let stop = stop_at(&small).unwrap();
        assert_eq!(stop, 512 * MIB);
        // Its largest chain: the region and 4 bytes of layout per line, well under 1 GB.
        assert!(stop + stop / 64 * 4 < 1_000_000_000);
        // A bare-metal curve stops on memory's plateau at the floor, 128 MiB.
        let bare = hierarchy::tests::synthetic(
            &[
                (32 << 10, 1.3),
                (MIB, 4.5),
                (16 * MIB, 14.0),
                (1024 * MIB, 95.0),
            ],
            1024 * MIB,
        );
        assert_eq!(stop_at(&bare), Some(128 * MIB));
    }

    #[test]
    fn the_chain_is_one_cycle_over_every_line() {
        let (_r, start) = place(&Chain::random(1024, 1), Pages::Small, None)
            .unwrap()
            .expect("no deadline in a test");
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
        // Other tests share the CPUs, and a batch they preempt only reads slower: the fastest
        // of five samples of each size is the one undisturbed.
        let fastest = |size: u64| {
            measure(size, Pages::Small, None, 5, 1e6)
                .unwrap()
                .iter()
                .map(|b| b.ns_per_iteration())
                .fold(f64::INFINITY, f64::min)
        };
        let (s, b) = (fastest(16 * 1024), fastest(128 * MIB));
        assert!((0.2..20.0).contains(&s), "16 KiB: {s} ns per load");
        assert!(
            b > 3.0 * s,
            "128 MiB {b} ns is not slower than 16 KiB {s} ns"
        );
    }
}
