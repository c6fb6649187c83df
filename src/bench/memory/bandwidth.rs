//! `memory.bandwidth@1`: STREAM's copy, scale, add and triad, plus sum (read-only) and fill
//! (write-only), in MB/s (10^6 B/s, STREAM byte counting: loads and stores named in the
//! loop, no write-allocate; `derived.est_dram_mb_s` adds it back for ordinary stores).
//! Regular and, on x86-64, non-temporal-store variants side by side. Each thread owns
//! page-aligned arrays it touches first, pinned by the `compact` or `spread` order, swept
//! over 1, 2, 4 ... N threads. Each sample maps fresh arrays, first-touches them (the
//! warm-up) and times one pass of every kernel whole, from a barrier to a barrier; the arrays
//! are validated after it. Each round holds a spacer of random size while it maps
//! (`region::Spacer`), so the rounds draw their physical pages afresh. The arrays are sized by the
//! LLC this run measured (`array_bytes`).

use super::kernels::{self, expected, relative_error, Arrays, Kernel};
use super::latency;
use super::region::{available_bytes, spacer_room, Pages, Region, Spacer};
use crate::bench::{Benchmark, Emitted, RunContext, Skipped};
use crate::findings::results::annotate;
use crate::measure::batch::Batch;
use crate::measure::clocks::now_ns;
use crate::measure::hierarchy;
use crate::placement::{compact_order, pin_current_thread, spread_order};
use crate::probe::memory_limit::{limit_words, Room};
use crate::result::{BenchResult, Placement, Quality};
use crate::units::bytes;
use anyhow::{anyhow, bail};
use std::sync::Barrier;

pub struct Bandwidth;

const MIB: u64 = 1 << 20;
/// Each array (all threads together) is at least this large.
const MIN_ARRAY: u64 = 128 * MIB;

/// The size of each of the three arrays (all threads together), and why: 4 x the measured
/// LLC (the end of the last cache plateau) or the floor, whichever is larger; 4 x the
/// reported LLC total only when nothing was measured. A reported size more than 4x the
/// measured one is implausible (a VM's synthetic CPUID) and is named as not used.
pub fn array_bytes(
    reported_llc_total: u64,
    measured_llc: Option<u64>,
    available: Option<u64>,
    asked: Option<u64>,
) -> Result<(u64, String), String> {
    if let Some(a) = asked {
        if let Some(av) = available {
            if 3 * a > av {
                return Err(format!(
                    "3 arrays of {} need {} but only {} is available",
                    bytes(a),
                    bytes(3 * a),
                    bytes(av)
                ));
            }
        }
        return Ok((a, "as asked (--array-size)".into()));
    }
    let (want, why) = match measured_llc {
        Some(m) => {
            let want = (4 * m).max(MIN_ARRAY);
            let report = if reported_llc_total > 4 * m {
                format!(
                    "the reported LLC total {} is more than 4x the measured one and not used (4 x it would be {})",
                    bytes(reported_llc_total),
                    bytes(4 * reported_llc_total)
                )
            } else {
                format!("the reported LLC total is {}", bytes(reported_llc_total))
            };
            (
                want,
                format!(
                    "max(4 x measured LLC {}, {}) = {}; {report}",
                    bytes(m),
                    bytes(MIN_ARRAY),
                    bytes(want)
                ),
            )
        }
        None => {
            let want = (4 * reported_llc_total).max(MIN_ARRAY);
            (
                want,
                format!(
                    "max(4 x reported LLC total {}, {}) = {}: the LLC was not measured",
                    bytes(reported_llc_total),
                    bytes(MIN_ARRAY),
                    bytes(want)
                ),
            )
        }
    };
    match available {
        Some(av) if 3 * want > av / 2 => {
            let cut = (av / 6).max(MIB);
            Ok((
                cut,
                format!(
                    "{why}; cut to {} to fit half the available memory",
                    bytes(cut)
                ),
            ))
        }
        _ => Ok((want, why)),
    }
}

/// What a cgroup memory limit leaves of the arrays [`array_bytes`] chose.
#[derive(Debug, Clone, PartialEq)]
pub enum Fit {
    /// Arrays of this size (all threads together), and why.
    Use(u64, String),
    /// Not measured: the limit leaves no room for arrays past the caches (the reason).
    Skip(String),
}

/// The arrays within `room` (see [`Room::now`]): as chosen when no cgroup limit squeezes
/// them or the three fit; else the largest power of two whose three arrays fit, when it
/// is at least twice the measured LLC (the reported one when nothing was measured), so the
/// arrays still lie past the caches; else skipped. Each reason begins with the limit.
pub fn within_limit(
    bench: &str,
    total: u64,
    why: &str,
    llc: Option<u64>,
    llc_measured: bool,
    room: &Room,
) -> Fit {
    let (Some(squeeze), Some(left)) = (&room.squeeze, room.bytes) else {
        return Fit::Use(total, why.to_string());
    };
    if 3 * total <= left {
        return Fit::Use(total, why.to_string());
    }
    let head = format!(
        "{} {}: the {} arrays of {bench} need {}, it leaves {} (its cgroup holds {}, and headroom)",
        limit_words(&squeeze.limit),
        bytes(squeeze.limit.bytes),
        bytes(total),
        bytes(3 * total),
        bytes(left),
        bytes(squeeze.held_bytes)
    );
    let fit = match left / 3 {
        0 => 0,
        t => 1u64 << (63 - t.leading_zeros()),
    };
    let which = if llc_measured { "measured" } else { "reported" };
    match llc {
        Some(l) if l > 0 && fit >= 2 * l => Fit::Use(
            fit,
            format!(
                "{head}; measured at {}, {}x the {which} LLC {} ({why})",
                bytes(fit),
                fit / l,
                bytes(l)
            ),
        ),
        Some(l) => Fit::Skip(format!(
            "{head}; three arrays of twice the {which} LLC {} ({} each) do not fit: they would measure a cache, not memory",
            bytes(l),
            bytes(2 * l)
        )),
        None => Fit::Skip(format!(
            "{head}; no LLC size is known to tell whether arrays of {} would lie past the caches",
            bytes(fit)
        )),
    }
}

impl Fit {
    /// The reason a size was chosen or the row skipped.
    pub fn reason(&self) -> String {
        match self {
            Fit::Use(_, r) | Fit::Skip(r) => r.clone(),
        }
    }
}

/// The LLC this run measured: the latency sweep's when it ran before, else a short coarse
/// sweep now (huge pages where THP allows it). Returns the end of the last cache plateau
/// (the first size off it), and how it was measured.
fn measured_llc(
    ctx: &RunContext,
    emit: &mut dyn FnMut(Emitted),
) -> anyhow::Result<Option<(u64, String)>> {
    if let Some(h) = ctx.measured.hierarchy() {
        return Ok(h.llc.map(|l| {
            (
                l.next_bytes,
                format!("memory.latency's {} curve of this run", l.pages),
            )
        }));
    }
    let cpu = ctx.probe.cpus.usable.first().copied().unwrap_or(0);
    let pages = match ctx.probe.kernel.thp.as_deref() {
        Some("always") | Some("madvise") => Pages::Huge,
        _ => Pages::Small,
    };
    emit(Emitted::Running(format!(
        "coarse latency sweep ({} pages) to find the LLC",
        pages.name()
    )));
    let top = latency::sweep_top(ctx, cpu).0;
    let curve = latency::coarse_curve(cpu, pages, top)?;
    Ok(hierarchy::judge_one(&curve, pages.name()).llc.map(|l| {
        (
            l.next_bytes,
            format!("a coarse latency sweep ({} pages, sizes doubling)", l.pages),
        )
    }))
}

/// Thread counts: 1, 2, 4, ... and N.
pub fn thread_counts(n: usize) -> Vec<usize> {
    let mut v: Vec<usize> = std::iter::successors(Some(1usize), |x| Some(x * 2))
        .take_while(|x| *x < n)
        .collect();
    v.push(n.max(1));
    v.dedup();
    v
}

/// Where array `k` starts in its mapping. Mappings of equal power-of-two sizes put a[i],
/// b[i] and c[i] at the same address bits: the same cache sets, and loads that alias the
/// stores 4 KiB apart (STREAM's OFFSET knob exists for this). A different number of cache
/// lines per array breaks the alignment.
/// Per thread count, the CPUs of each thread placement (`compact`, `spread`) in thread
/// order, or why it is not run (the same CPUs as an earlier placement).
pub fn thread_placements(p: &crate::probe::ProbeDoc) -> Vec<ThreadCases> {
    let orders = [("compact", compact_order(p)), ("spread", spread_order(p))];
    thread_counts(p.cpus.usable.len())
        .into_iter()
        .map(|threads| {
            let mut seen: Vec<Vec<u32>> = Vec::new();
            let cases = orders
                .iter()
                .map(|(policy, order)| {
                    let cpus = order[..threads.min(order.len())].to_vec();
                    let mut sorted = cpus.clone();
                    sorted.sort_unstable();
                    if seen.contains(&sorted) {
                        return (*policy, Err("same CPUs as compact".to_string()));
                    }
                    seen.push(sorted);
                    (*policy, Ok(cpus))
                })
                .collect();
            (threads, cases)
        })
        .collect()
}

/// One thread count and its placements (see `thread_placements`).
pub type ThreadCases = (usize, Vec<(&'static str, Result<Vec<u32>, String>)>);

pub fn stagger(k: usize) -> usize {
    k * (4096 + 3 * 64) + k * k * 64
}

/// Per pass and kernel: the duration of the pass, from thread 0's view of the barriers.
pub struct Passes {
    /// durations[kernel][pass] in ns.
    pub durations: Vec<Vec<u64>>,
    pub interrupted: bool,
}

/// Elements filled between two looks at the run's deadline while the arrays are first
/// touched (8 MiB of f64).
const FILL_STEP: usize = 1 << 20;

/// Fill `v` with `x` in steps, stopping early (false) at Ctrl-C or the run's deadline:
/// first-touching large arrays on a starved CPU takes seconds.
fn fill_until_stopped(v: &mut [f64], x: f64) -> bool {
    for chunk in v.chunks_mut(FILL_STEP) {
        if crate::deadline::stop_requested() {
            return false;
        }
        chunk.fill(x);
    }
    true
}

/// Run `passes` passes of every kernel on threads pinned to `cpus`, each with `n` elements
/// per array. Validates the arrays and every Sum. Stops (`interrupted`) at Ctrl-C or the
/// run's deadline: while the arrays are filled, and before each pass and each kernel (as
/// thread 0 or a filling thread decides, seen by every thread at the barrier after).
pub fn run_passes(
    cpus: &[u32],
    n: usize,
    passes: usize,
    nt: bool,
    node: Option<u32>,
) -> anyhow::Result<Passes> {
    let barrier = Barrier::new(cpus.len());
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        let handles: Vec<_> = cpus
            .iter()
            .enumerate()
            .map(|(tid, &cpu)| {
                let barrier = &barrier;
                let stop = &stop;
                s.spawn(move || -> anyhow::Result<Passes> {
                    use std::sync::atomic::Ordering::Relaxed;
                    let pinned = pin_current_thread(cpu);
                    // Allocate and first-touch on the pinned thread (NUMA-local pages).
                    let mut regions = Vec::new();
                    if pinned.is_ok() {
                        for k in 0..3 {
                            regions.push(Region::map(n * 8 + stagger(k), Pages::Small, node)?);
                        }
                    }
                    barrier.wait();
                    pinned.map_err(|e| anyhow!(e))?;
                    let [ra, rb, rc] = &mut regions[..] else { bail!("three arrays expected") };
                    let (a, b, c) = (ra.f64s_at(stagger(0), n), rb.f64s_at(stagger(1), n), rc.f64s_at(stagger(2), n));
                    let filled = fill_until_stopped(a, 1.0)
                        && fill_until_stopped(b, 2.0)
                        && fill_until_stopped(c, 0.0);
                    if !filled {
                        stop.store(true, Relaxed);
                    }
                    let mut x = Arrays { a, b, c };
                    let mut durations = vec![Vec::with_capacity(passes); Kernel::ALL.len()];
                    let mut interrupted = false;
                    // Decided before a barrier (by thread 0, or a thread that stopped
                    // filling), read by all after it: they stop together.
                    let decide = |stop: &std::sync::atomic::AtomicBool| {
                        if tid == 0 && crate::deadline::stop_requested() {
                            stop.store(true, Relaxed);
                        }
                        barrier.wait();
                        stop.load(Relaxed)
                    };
                    'passes: for pass in 0..passes {
                        if decide(stop) {
                            interrupted = true;
                            break;
                        }
                        for (ki, k) in Kernel::ALL.into_iter().enumerate() {
                            if ki > 0 && decide(stop) {
                                interrupted = true;
                                break 'passes;
                            }
                            barrier.wait();
                            let t0 = now_ns();
                            let sum = kernels::run(k, &mut x, nt);
                            barrier.wait();
                            let t1 = now_ns();
                            if tid == 0 {
                                durations[ki].push(t1 - t0);
                            }
                            if k == Kernel::Sum {
                                let want = n as f64 * expected(pass + 1).0;
                                if (sum - want).abs() > 1e-9 * want {
                                    bail!("sum on CPU {cpu} gave {sum}, expected {want}");
                                }
                            }
                        }
                    }
                    if !interrupted {
                        let (ea, eb, ec) = expected(passes);
                        for (name, v, want) in [("a", &*x.a, ea), ("b", &*x.b, eb), ("c", &*x.c, ec)] {
                            let err = relative_error(v, want);
                            if err > 1e-13 {
                                bail!("array {name} on CPU {cpu} fails validation (average relative error {err:e})");
                            }
                        }
                    }
                    Ok(Passes { durations, interrupted })
                })
            })
            .collect();
        let mut first = None;
        for h in handles {
            let r = h
                .join()
                .map_err(|_| anyhow!("a bandwidth thread panicked"))??;
            first.get_or_insert(r);
        }
        first.ok_or_else(|| anyhow!("no threads"))
    })
}

/// `samples` samples of every kernel, each in arrays of its own: per sample fresh arrays are
/// mapped and first-touched (the fill also warms them up), one pass of every kernel is
/// timed, and the arrays are unmapped (the next sample's land on much the same pages).
/// durations[kernel][sample] in ns; None when Ctrl-C or the run's deadline stopped it.
fn placed_samples(
    cpus: &[u32],
    n: usize,
    samples: usize,
    nt: bool,
) -> anyhow::Result<Option<Vec<Vec<u64>>>> {
    let mut out = vec![Vec::with_capacity(samples); Kernel::ALL.len()];
    for _ in 0..samples {
        let p = run_passes(cpus, n, 1, nt, None)?;
        if p.interrupted || crate::deadline::stop_requested() {
            return Ok(None);
        }
        for (ki, d) in p.durations.into_iter().enumerate() {
            out[ki].extend(d);
        }
    }
    Ok(Some(out))
}

pub fn reported_llc_total(ctx: &RunContext) -> u64 {
    let t = &ctx.probe.topology;
    t.caches
        .iter()
        .filter(|c| Some(c.level) == t.llc_level && c.kind != "Instruction")
        .filter_map(|c| c.size_bytes)
        .sum()
}

impl Benchmark for Bandwidth {
    /// "bandwidth triad 2T non-temporal 128 MiB spread": kernel, threads, stores other than
    /// regular ones, array size, and the placement of more than one thread.
    fn label(&self, params: &crate::result::Params, placement: &str) -> Option<String> {
        let p: BandwidthParams = params.read()?;
        let mut s = format!("bandwidth {} {}T", p.kernel, p.threads);
        if p.stores != "regular" {
            s.push_str(&format!(" {}", p.stores));
        }
        if p.array_bytes > 0 {
            s.push_str(&format!(" {}", crate::units::bytes(p.array_bytes)));
        }
        if p.threads > 1 {
            s.push_str(&format!(" {placement}"));
        }
        Some(s)
    }

    fn levels(&self) -> &'static [crate::bench::levels::LevelUse] {
        super::variance::BANDWIDTH
    }

    /// Twice the rounds, of one sample each (the run's samples, in twice as many places
    /// across it): each sample is a pass of every kernel in fresh arrays, and the rows'
    /// noise lies between rounds (a round's two samples moved together with the host's
    /// memory traffic of the moment); with five rounds the t quantile of four degrees of
    /// freedom, fewer when the host's placement kept two rounds out, set most of the MDE.
    fn round_weight(&self) -> usize {
        2
    }

    fn min_samples_per_round(&self) -> usize {
        1
    }

    fn id(&self) -> &'static str {
        "memory.bandwidth@1"
    }

    /// Threads streaming through three arrays on pages it advises: a bandwidth of the
    /// host's memory, drawn once per run.
    fn nature(&self, r: &BenchResult) -> crate::bench::nature::Nature {
        use crate::bench::nature::{Memory, Nature, RunLevel, Tasks};
        let array = r.params.get("array_bytes").and_then(|v| v.as_u64());
        // Earlier documents did not record the size (0): their arrays were sized past
        // the caches, as today's default is.
        let memory = r
            .params
            .read::<BandwidthParams>()
            .map_or(Memory::Other, |p| Memory::Bandwidth {
                array_bytes: (p.array_bytes > 0).then_some(p.array_bytes),
            });
        Nature {
            tasks: Tasks::Threads(r.params.threads().unwrap_or(1)),
            memory,
            footprint_bytes: array.map(|a| 3 * a),
            advises_pages: true,
            run_level: RunLevel::HostMemory,
            ..Nature::default()
        }
    }

    /// 8 s of a default run: about eight rounds of its four cases on a 2-vCPU guest (each
    /// a pass of every kernel in fresh 128 MiB arrays, 1 s a round), more where there are
    /// more thread counts and placements.
    fn budget_share_s(&self, ctx: &RunContext) -> f64 {
        let cases: usize = thread_placements(ctx.probe)
            .iter()
            .map(|(_, c)| c.iter().filter(|x| x.1.is_ok()).count())
            .sum();
        let stores = if kernels::HAVE_NT { 2 } else { 1 };
        crate::bench::scaled_share(8.0, (cases * stores) as f64, 4.0)
    }

    /// 15%: a pass in fresh arrays moves with the host's memory traffic of the moment.
    fn mde_target(&self, _r: &BenchResult) -> f64 {
        0.15
    }

    /// A case is a placement, thread count and store kind (its kernels measured in one
    /// pass): a round the allocation gives measures only the cases with a row short.
    fn case_of(&self, r: &BenchResult) -> Option<String> {
        let p = r.params.read::<BandwidthParams>()?;
        Some(case(&r.placement.name, p.threads, &p.stores))
    }

    fn describe(&self) -> &'static str {
        "MB/s (10^6 B/s, STREAM counting) of copy, scale, add, triad, sum and fill, regular and non-temporal stores, per thread count and placement (compact, spread)"
    }

    fn planned(&self, ctx: &RunContext) -> usize {
        if let Some(only) = ctx.only {
            // Every kernel of a case (Sum has no non-temporal form).
            let kernels = Kernel::ALL.len();
            return only
                .iter()
                .map(|c| kernels - usize::from(c.ends_with("non-temporal")))
                .sum();
        }
        let t = thread_counts(ctx.probe.cpus.usable.len()).len();
        t * 2 * Kernel::ALL.len() * if kernels::HAVE_NT { 2 } else { 1 }
    }

    fn plan(&self, ctx: &RunContext) -> Vec<crate::placement::Planned> {
        use crate::placement::Planned;
        let mut out = Vec::new();
        for (threads, cases) in thread_placements(ctx.probe) {
            for (policy, cpus) in cases {
                let case = format!("{policy} threads={threads}");
                out.push(match cpus {
                    Ok(c) => Planned::run(
                        self.id(),
                        case,
                        Some(c),
                        match policy {
                            "compact" => "compact: a core's SMT siblings, then the cores of one LLC, then the next LLC, then the next node",
                            _ => "spread: one thread per node, then per LLC, then per core, before any second SMT sibling",
                        },
                    ),
                    Err(reason) => Planned::skip(self.id(), case, reason),
                });
            }
        }
        out
    }

    fn run(&self, ctx: &RunContext, emit: &mut dyn FnMut(Emitted)) -> anyhow::Result<()> {
        let measured = match ctx.options.array_bytes {
            Some(_) => None,
            None => measured_llc(ctx, emit)?,
        };
        if crate::deadline::stop_requested() {
            return crate::deadline::stopped();
        }
        let reported = reported_llc_total(ctx);
        let (total, why) = array_bytes(
            reported,
            measured.as_ref().map(|m| m.0),
            available_bytes(),
            ctx.options.array_bytes,
        )
        .map_err(|e| crate::error::usage(format!("--array-size: {e}")))?;
        let why = match &measured {
            Some((_, how)) => format!("{why} (measured by {how})"),
            None => why,
        };
        let llc = measured.as_ref().map(|m| m.0);
        let room = Room::now(&ctx.probe.memory);
        let llc_known = llc.or((reported > 0).then_some(reported));
        let (total, why) =
            match within_limit(self.id(), total, &why, llc_known, llc.is_some(), &room) {
                Fit::Use(t, w) => (t, w),
                Fit::Skip(reason) => {
                    emit(Emitted::Skipped(Skipped {
                        benchmark: self.id().into(),
                        case: "every case".into(),
                        reason,
                    }));
                    return Ok(());
                }
            };
        if !kernels::HAVE_NT {
            emit(Emitted::Skipped(Skipped {
                benchmark: self.id().into(),
                case: "stores=non-temporal".into(),
                reason: "non-temporal store kernels exist for x86-64 only".into(),
            }));
        }
        // The round's pages drawn afresh: a spacer of up to one array, within the memory
        // the three arrays leave; held until the round's cases are measured.
        let spacer = Spacer::hold(spacer_room(total, 3 * total, &room), Pages::Small)?;
        let mut said_size = false;
        for (threads, cases) in thread_placements(ctx.probe) {
            for (policy, cpus) in cases {
                let cpus = match cpus {
                    Ok(c) => c,
                    Err(reason) => {
                        emit(Emitted::Skipped(Skipped {
                            benchmark: self.id().into(),
                            case: format!("{policy} threads={threads}"),
                            reason,
                        }));
                        continue;
                    }
                };
                // Elements per thread per array, a multiple of 8 (the kernels' chunk).
                let n = ((total / 8) as usize / threads).max(8) / 8 * 8;
                for nt in if kernels::HAVE_NT {
                    vec![false, true]
                } else {
                    vec![false]
                } {
                    let case = case(policy, threads as u64, stores_name(nt));
                    if !ctx.wants(&case) {
                        continue;
                    }
                    emit(Emitted::Running(case));
                    let Some(durations) = placed_samples(&cpus, n, ctx.samples, nt)? else {
                        return crate::deadline::stopped(); // an unfinished case is not kept
                    };
                    for (ki, k) in Kernel::ALL.into_iter().enumerate() {
                        if nt && !k.stores() {
                            continue; // Sum stores nothing: one form only
                        }
                        let elements = (n * threads) as u64;
                        let batches: Vec<Batch> = durations[ki]
                            .iter()
                            .map(|&ns| Batch {
                                iterations: elements,
                                elapsed_ns: ns.max(1),
                            })
                            .collect();
                        let mb = k.bytes_per_element() as f64 * elements as f64 / 1e6;
                        let samples: Vec<f64> = batches
                            .iter()
                            .map(|b| mb / (b.elapsed_ns as f64 / 1e9))
                            .collect();
                        let params = crate::result::Params::from_struct(&BandwidthParams {
                            kernel: k.name().into(),
                            stores: stores_name(nt).into(),
                            threads: threads as u64,
                            array_bytes: n as u64 * 8 * threads as u64,
                        });
                        let placement = Placement::on(policy.to_string(), cpus.clone());
                        let mut q = Quality::of(ctx.clock_cost_ns, &batches);
                        q.pages_per_round = spacer.held();
                        let mut r = BenchResult::new(
                            self.id(),
                            params,
                            placement,
                            "MB/s",
                            false,
                            samples,
                            q,
                        )
                        .ok_or_else(|| anyhow!("memory.bandwidth: no valid samples"))?;
                        if !nt {
                            r.derived.insert(
                                "est_dram_mb_s".into(),
                                r.stats.median * k.write_allocate_factor(),
                            );
                        }
                        annotate(&mut r);
                        if !said_size {
                            said_size = true;
                            r.findings.push(crate::findings::memory::memory_array_size(
                                total,
                                measured.as_ref().map(|m| m.0),
                                reported,
                                &why,
                            ));
                        }
                        emit(Emitted::Result(Box::new(r)));
                    }
                }
            }
        }
        Ok(())
    }
}

/// The store kind's name in a row's params: `regular` or `non-temporal`.
fn stores_name(nt: bool) -> &'static str {
    if nt {
        "non-temporal"
    } else {
        "regular"
    }
}

/// The case of a row (`Benchmark::case_of`): its placement, thread count and store kind; a
/// case measures every kernel in one pass, so its rows are measured together.
pub fn case(policy: &str, threads: u64, stores: &str) -> String {
    format!("{policy} threads={threads} stores={stores}")
}

/// The params of `memory.bandwidth`: kernel, store kind, threads and the bytes of each array.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct BandwidthParams {
    pub kernel: String,
    pub stores: String,
    pub threads: u64,
    #[serde(default)]
    pub array_bytes: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_epyc_arrays_follow_the_measurement_not_the_32_mib_report() {
        let (small, huge) = hierarchy::tests::epyc();
        let llc = hierarchy::judge(&small, Some(&huge)).llc.unwrap();
        let (a, why) = array_bytes(32 << 20, Some(llc.next_bytes), Some(24 << 30), None).unwrap();
        assert_eq!(a, 128 << 20);
        assert!(
            why.contains("more than 4x") && why.contains("5.7 MiB"),
            "{why}"
        );
    }

    #[test]
    fn thread_counts_double_then_end_at_n() {
        assert_eq!(thread_counts(1), vec![1]);
        assert_eq!(thread_counts(2), vec![1, 2]);
        assert_eq!(thread_counts(6), vec![1, 2, 4, 6]);
        assert_eq!(thread_counts(8), vec![1, 2, 4, 8]);
    }

    #[test]
    fn arrays_follow_the_measured_llc_and_fit_memory() {
        // Nothing measured: the report decides.
        let (a, why) = array_bytes(480 * MIB, None, Some(24 << 30), None).unwrap();
        assert_eq!(a, 1920 * MIB);
        assert!(
            why.contains("480 MiB") && why.contains("not measured"),
            "{why}"
        );
        let (a, _) = array_bytes(8 * MIB, Some(16 * MIB), Some(24 << 30), None).unwrap();
        assert_eq!(a, 128 * MIB);
        // The 480 MiB VM measured at 16 MiB: the measurement wins and the report is named.
        let (a, why) = array_bytes(480 * MIB, Some(16 * MIB), Some(24 << 30), None).unwrap();
        assert_eq!(a, 128 * MIB);
        assert!(
            why.contains("more than 4x") && why.contains("16 MiB"),
            "{why}"
        );
        // A measured 64 MiB LLC: 4 x it, whatever the report.
        let (a, why) = array_bytes(96 * MIB, Some(64 * MIB), Some(24 << 30), None).unwrap();
        assert_eq!(a, 256 * MIB);
        assert!(why.contains("reported LLC total is 96 MiB"), "{why}");
        let (a, why) = array_bytes(480 * MIB, None, Some(4 << 30), None).unwrap();
        assert!(a <= (4u64 << 30) / 6 && why.contains("cut"), "{a} {why}");
        assert!(array_bytes(8 * MIB, None, Some(1 << 30), Some(1 << 30))
            .unwrap_err()
            .contains("available"));
    }

    /// A room squeezed by a memory limit of `limit_mib` of which `held_mib` is held.
    fn squeezed(limit_mib: u64, held_mib: u64) -> Room {
        use crate::probe::memory_limit::{Limit, Squeeze};
        let s = Squeeze {
            limit: Limit {
                bytes: limit_mib * MIB,
                file: "/sys/fs/cgroup/memory/pod/memory.limit_in_bytes".into(),
            },
            held_bytes: held_mib * MIB,
        };
        Room::of(Some(10 << 30), Some(s))
    }

    /// Synthetic machines (an LLC measured at 2 MiB and at 32 MiB) under limits of 256,
    /// 384 and 512 MiB (40 MiB held) and none: the arrays are chosen by the LLC, then fit
    /// the limit (a power of two, three of them within what it leaves, at least twice the
    /// LLC), or the row is skipped with the limit named.
    #[test]
    fn arrays_fit_the_memory_limit_or_are_skipped_naming_it() {
        // (LLC, limit MiB, arrays MiB expected; 0: skipped)
        let table = [
            (2, 256, 32),
            (2, 384, 64),
            (2, 512, 128),
            (32, 256, 0),
            (32, 384, 64),
            (32, 512, 128),
        ];
        for (llc_mib, limit, want) in table {
            let llc = llc_mib * MIB;
            let (total, why) = array_bytes(32 * MIB, Some(llc), Some(24 << 30), None).unwrap();
            assert_eq!(total, 128 * MIB, "4 x 32 MiB and the floor agree");
            // No limit: as chosen, within the 600 MB a default run may hold.
            let free = Room::machine(Some(12 << 30));
            assert_eq!(
                within_limit("memory.bandwidth", total, &why, Some(llc), true, &free),
                Fit::Use(total, why.clone())
            );
            assert!(3 * total <= 600_000_000);
            let room = squeezed(limit, 40);
            let left = room.bytes.unwrap();
            let case = format!("LLC {llc_mib} MiB, limit {limit} MiB");
            let head = format!(
                "memory limit {limit} MiB: the 128 MiB arrays of memory.bandwidth need 384 MiB"
            );
            match within_limit("memory.bandwidth", total, &why, Some(llc), true, &room) {
                Fit::Use(t, w) => {
                    assert_eq!(t, want * MIB, "{case}: {w}");
                    assert!(3 * t <= left && t >= 2 * llc, "{case}");
                    if t == total {
                        assert_eq!(w, why, "{case}: the limit did not shape it");
                    } else {
                        assert!(w.starts_with(&head), "{case}: {w}");
                        let at = format!(
                            "measured at {} MiB, {}x the measured LLC",
                            want,
                            want / llc_mib
                        );
                        assert!(w.contains(&at), "{case}: {w}");
                    }
                }
                Fit::Skip(r) => {
                    assert_eq!(want, 0, "{case}: skipped: {r}");
                    assert!(r.starts_with(&head), "{case}: {r}");
                    assert!(r.contains("twice the measured LLC 32 MiB"), "{case}: {r}");
                }
            }
        }
        // Nothing known of the LLC: skipped rather than measure a cache.
        let r = within_limit(
            "memory.bandwidth",
            128 * MIB,
            "w",
            None,
            false,
            &squeezed(256, 40),
        )
        .reason();
        assert!(r.contains("no LLC size is known"), "{r}");
    }

    #[test]
    fn a_short_threaded_run_validates() {
        let cpus: Vec<u32> = vec![crate::placement::current_cpu().unwrap_or(0)];
        for nt in [false, true] {
            let p = run_passes(&cpus, 1 << 16, 3, nt, None).unwrap();
            assert_eq!(p.durations.len(), 6);
            assert!(p.durations.iter().all(|d| d.len() == 3));
        }
    }
}
