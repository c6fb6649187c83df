//! The effective CPU speed: a chain of dependent register-to-register integer adds, timed as
//! a batch on one pinned CPU. Each add needs the previous one's result, and on current x86
//! and ARM cores an add retires in one cycle, so adds per nanosecond is the clock the core
//! really ran at (GHz), whatever the governor, turbo, thermal or power limit, or a
//! hypervisor's share of the physical core made of it.
//!
//! On x86_64 and aarch64 the chain is inline assembly (64 adds per loop pass, the loop
//! counter on a chain of its own), so the compiler can neither fold nor shorten it; the
//! adds take a register operand, never an immediate (some cores fold `add reg, imm` at
//! rename, which would break the one-add-per-cycle rule). Elsewhere a portable loop passes
//! each partial sum through `black_box`, which costs more than a cycle per add: its figure
//! is relative only, and the document's `method` says so.
//!
//! One sample: pin the calling thread to the CPU (its affinity is restored afterwards,
//! even on a panic), one warm-up batch, then the fastest of [`REPEATS`] batches of about
//! [`BATCH_NS`] each.

use crate::measure::clocks::now_ns;
use crate::result::{CpuSpeed, SpeedPoint, SpeedSample};

/// Adds per loop pass of the assembly chain.
const UNROLL: u64 = 64;
/// The wall time each timed batch aims for.
pub const BATCH_NS: f64 = 2e6;
/// Timed batches per sample; the fastest counts (a preempted batch only looks slower).
pub const REPEATS: usize = 5;

/// How the figure is measured, in words: the document's `cpu_speed.method`.
pub fn method() -> &'static str {
    if cfg!(any(target_arch = "x86_64", target_arch = "aarch64")) {
        "chain of dependent register adds in inline assembly (64 per loop pass), one CPU \
         pinned, fastest of 5 batches of about 2 ms after a warm-up batch: adds per ns = \
         effective GHz (one add per cycle on current x86 and ARM cores)"
    } else {
        "chain of dependent adds through black_box (portable fallback: more than one cycle \
         per add, so the figure is relative only, not GHz), one CPU pinned, fastest of 5 \
         batches of about 2 ms after a warm-up batch"
    }
}

/// Run a chain of `passes` x 64 dependent adds; returns the sum (so nothing is dead).
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
#[inline(never)]
pub fn add_chain(passes: u64) -> u64 {
    let mut acc: u64 = 0;
    let mut n = passes.max(1);
    // SAFETY: register-only arithmetic and a loop on a local label; no memory, no stack.
    unsafe {
        #[cfg(target_arch = "x86_64")]
        std::arch::asm!(
            "2:",
            ".rept 64",
            "add {acc}, {inc}",
            ".endr",
            "dec {n}",
            "jnz 2b",
            acc = inout(reg) acc,
            n = inout(reg) n,
            inc = in(reg) 1u64,
            options(nomem, nostack),
        );
        #[cfg(target_arch = "aarch64")]
        std::arch::asm!(
            "2:",
            ".rept 64",
            "add {acc}, {acc}, {inc}",
            ".endr",
            "subs {n}, {n}, #1",
            "b.ne 2b",
            acc = inout(reg) acc,
            n = inout(reg) n,
            inc = in(reg) 1u64,
            options(nomem, nostack),
        );
    }
    let _ = n;
    acc
}

/// Run a chain of `passes` x 64 dependent adds; returns the sum (so nothing is dead).
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
#[inline(never)]
pub fn add_chain(passes: u64) -> u64 {
    let mut acc: u64 = 0;
    let inc = std::hint::black_box(1u64);
    for _ in 0..passes.max(1) * UNROLL {
        acc = std::hint::black_box(acc.wrapping_add(inc));
    }
    acc
}

/// Wall time of one chain of `passes` x 64 adds, ns.
pub fn time_chain(passes: u64) -> u64 {
    let t0 = now_ns();
    std::hint::black_box(add_chain(std::hint::black_box(passes)));
    (now_ns() - t0).max(1)
}

/// One measurement on the CPU the caller runs on: (adds per ns, elapsed ns of the fastest
/// batch). A short probe sizes the batch to [`BATCH_NS`]; one warm-up batch, then the
/// fastest of [`REPEATS`].
pub fn measure_here() -> (f64, f64) {
    measure_here_for(BATCH_NS, REPEATS)
}

/// The canary before a round (`session::rounds`): batches of 0.5 ms, fastest of 3.
pub const CANARY_BATCH_NS: f64 = 5e5;
pub const CANARY_REPEATS: usize = 3;

/// One measurement with batches of about `batch_ns`, the fastest of `repeats` counting.
pub fn measure_here_for(batch_ns: f64, repeats: usize) -> (f64, f64) {
    let mut passes = 4096u64;
    // Grow until a chain lasts long enough to extrapolate from (>= 100 us); the fastest of
    // three timings at that length sizes the batch (one interrupted timing would leave the
    // batches short).
    loop {
        let t = time_chain(passes);
        if t >= 100_000 || passes >= 1 << 40 {
            let t = (0..2).map(|_| time_chain(passes)).fold(t, u64::min);
            passes = ((passes as f64 * batch_ns / t as f64).ceil() as u64).max(1);
            break;
        }
        passes *= 4;
    }
    time_chain(passes);
    let best = (0..repeats.max(1))
        .map(|_| time_chain(passes))
        .min()
        .unwrap_or(1) as f64;
    ((passes * UNROLL) as f64 / best, best)
}

/// Restores the calling thread's affinity when dropped.
struct AffinityGuard(nix::sched::CpuSet);

impl Drop for AffinityGuard {
    fn drop(&mut self) {
        // Restoring a mask the thread had a moment ago: only a CPU going offline meanwhile
        // could make it fail, and then the kernel has already widened it.
        let _ = nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), &self.0);
    }
}

/// One measurement pinned to `cpu`, the calling thread's affinity restored afterwards:
/// (adds per ns, elapsed ns). Err(reason) when the thread cannot be pinned there.
pub fn measure_on(cpu: u32) -> Result<(f64, f64), String> {
    on_cpu(cpu, measure_here)
}

/// The short canary pinned to `cpu`, affinity restored: adds per ns.
pub fn canary_on(cpu: u32) -> Result<f64, String> {
    on_cpu(cpu, || measure_here_for(CANARY_BATCH_NS, CANARY_REPEATS)).map(|x| x.0)
}

fn on_cpu<T>(cpu: u32, f: impl FnOnce() -> T) -> Result<T, String> {
    let saved = nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0))
        .map_err(|e| format!("sched_getaffinity: {e}"))?;
    let _restore = AffinityGuard(saved);
    crate::placement::pin_current_thread(cpu)?;
    Ok(f())
}

/// The CPUs to sample: the first usable CPU of each kind (fastest kind first), with the
/// kind's name; one CPU without a name on a machine of one kind. Kinds with no usable CPU
/// are left out.
pub fn targets(env: &crate::probe::ProbeDoc) -> Vec<(u32, Option<String>)> {
    let usable = &env.cpus.usable;
    if env.topology.cpu_kinds.is_empty() {
        return usable.first().map(|c| (*c, None)).into_iter().collect();
    }
    env.topology
        .cpu_kinds
        .iter()
        .filter_map(|k| {
            let cpu = usable.iter().find(|c| k.cpus.contains(c))?;
            Some((*cpu, Some(k.kind.clone())))
        })
        .collect()
}

/// The speed samples of a run as they are taken.
#[derive(Debug, Default)]
pub struct Recorder {
    speed: Option<CpuSpeed>,
}

impl Recorder {
    /// The run's speed record, begun on first use.
    fn speed(&mut self) -> &mut CpuSpeed {
        self.speed.get_or_insert_with(|| CpuSpeed {
            method: method().into(),
            ..Default::default()
        })
    }

    /// Sample every target CPU for `suite` at `point`; a CPU that cannot be pinned is
    /// recorded in `unavailable` with the reason.
    pub fn sample(&mut self, env: &crate::probe::ProbeDoc, suite: &str, point: SpeedPoint) {
        let speed = self.speed();
        for (cpu, kind) in targets(env) {
            match measure_on(cpu) {
                Ok((cycles_per_ns, elapsed_ns)) => speed.samples.push(SpeedSample {
                    suite: suite.into(),
                    point,
                    cpu,
                    cpu_kind: kind,
                    cycles_per_ns,
                    elapsed_ns,
                }),
                Err(e) => speed
                    .unavailable
                    .push(format!("{suite} {} on CPU {cpu}: {e}", point.name())),
            }
        }
    }

    /// Keep a round's canary reading on `cpu` (adds per ns).
    pub fn canary(&mut self, cpu: u32, cycles_per_ns: f64) {
        let speed = self.speed();
        speed
            .canaries
            .push(crate::result::CanaryReading { cpu, cycles_per_ns });
    }

    /// Keep a round's pair canary reading between `cpus` (ns one-way).
    pub fn pair_canary(&mut self, cpus: [u32; 2], ns: f64) {
        let speed = self.speed();
        speed
            .pair_canaries
            .push(crate::result::PairCanaryReading { cpus, ns });
    }

    /// What was sampled; None when nothing was asked for.
    pub fn finish(self) -> Option<CpuSpeed> {
        self.speed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chain_returns_its_count_of_adds() {
        assert_eq!(add_chain(3), 3 * UNROLL);
        assert_eq!(add_chain(0), UNROLL);
    }

    /// The fastest of 7 timings of a chain of `passes`, ns.
    fn best(passes: u64) -> f64 {
        (0..7).map(|_| time_chain(passes)).min().unwrap() as f64
    }

    #[test]
    fn twice_the_adds_take_twice_the_time() {
        // Sized to about 0.5 ms (short enough to run between a busy machine's preemptions),
        // and the two lengths interleaved so a neighbour slows both alike.
        let passes = (0.5e6 / (best(2_000) / 2_000.0)).ceil() as u64;
        let (mut one, mut two) = (f64::MAX, f64::MAX);
        for _ in 0..5 {
            one = one.min(best(passes));
            two = two.min(best(2 * passes));
        }
        let ratio = two / one;
        // Loose bounds: the suite's other tests share the two CPUs (once 1.51x under that
        // load). A chain the compiler folded, or a timing of overhead only, gives about 1x.
        assert!(
            (1.35..2.7).contains(&ratio),
            "2x the chain took {ratio:.2}x the time"
        );
    }

    #[test]
    fn the_figure_is_a_plausible_clock_and_the_affinity_is_restored() {
        let before = nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0)).unwrap();
        let cpu = crate::placement::current_cpu().unwrap();
        let (ghz, elapsed) = measure_on(cpu).unwrap();
        assert!((0.2..8.0).contains(&ghz), "{ghz} adds/ns is no clock");
        assert!((0.2e6..50e6).contains(&elapsed), "batch of {elapsed} ns");
        let after = nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0)).unwrap();
        assert_eq!(before, after, "affinity not restored");
        // A CPU that does not exist is refused with the reason, and the affinity kept.
        let e = measure_on(4000).unwrap_err();
        assert!(e.contains("could not pin"), "{e}");
        let after = nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0)).unwrap();
        assert_eq!(before, after);
    }

    #[test]
    fn targets_take_one_usable_cpu_per_kind() {
        let p = crate::probe::fixture("hybrid-laptop");
        let t = targets(&p);
        assert_eq!(t.len(), p.topology.cpu_kinds.len());
        assert!(t.len() >= 2, "{t:?}");
        for ((cpu, kind), k) in t.iter().zip(&p.topology.cpu_kinds) {
            assert_eq!(kind.as_deref(), Some(k.kind.as_str()));
            assert!(k.cpus.contains(cpu) && p.cpus.usable.contains(cpu));
        }
        let plain = crate::probe::fixture("this-vm");
        assert_eq!(targets(&plain), vec![(plain.cpus.usable[0], None)]);
    }
}
