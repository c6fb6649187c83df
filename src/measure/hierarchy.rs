//! The memory hierarchy a latency sweep measured, judged in one place for every reader (the
//! latency benchmark, the latency findings, the bandwidth arrays' size, `show` and the
//! report; the curves of a run's results are read by `bench::memory::latency::curves_of`),
//! below all of them: which steps of the
//! curve are caches, which are TLB reach, which lie past the last cache, and where the
//! last-level cache ends. The sizes a sweep measures (`sizes`) are here too, so the
//! hierarchy's tests build their curves on them from below the benchmark.
//!
//! - A step of the 4 KiB-page curve that is absent, or comes later, in the huge-page curve
//!   is a TLB step (huge pages reach 512x further with the same TLB entries): over the same
//!   sizes (the end of the 4 KiB plateau to the start of its next one) the huge-page curve
//!   rises by less than the square root of the 4 KiB step.
//! - A plateau is a cache only when the latency at the largest working set (memory) is at
//!   least [`CACHE_VS_FAR`] times its own or it is faster than any memory
//!   ([`MEMORY_FLOOR_NS`]: a sweep may stop before a large L3 is left behind), and the curve
//!   leaves it (the largest size, not the
//!   curve's maximum: a transient spike on the way must not turn page walks into caches). The steps after the last cache
//!   are page walks (TLB reach, nested paging in a VM) on the way to memory, not caches;
//!   no plateau of memory itself is needed (only a latency at the largest size of at least
//!   [`MEMORY_FLOOR_NS`]), so a curve that keeps rising to its largest size
//!   (a VM's nested paging) still shows where the caches end.
//! - The last-level cache ends where the curve leaves the last cache plateau: between its
//!   largest size and the next size measured. The huge-page curve judges it when there is
//!   one (fewer TLB steps), else the 4 KiB curve.
//! - The effective LLC ([`effective_llc`], per page size) is where the curve crosses the
//!   geometric mean of the last cache plateau's latency and memory's: on a VM it follows how
//!   much of the physical L3 the host left the guest in that run (`compare`'s `llc-share`).

use crate::measure::plateaus::{self, Plateau};
use serde::Serialize;

/// A plateau counts as a cache only when the latency at the largest working set is at least
/// this many times its own: a step within 2x of memory's latency is a page-walk step.
pub const CACHE_VS_FAR: f64 = 2.0;

/// No memory answers a dependent random load this fast: a curve whose latency at its largest
/// size is below it never left the caches, and judges no LLC.
pub const MEMORY_FLOOR_NS: f64 = 40.0;

/// What the step at the end of a level is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// A cache: the step at its end is a cache boundary.
    Cache,
    /// The step at its end is TLB reach: with huge pages the latency is still this level's.
    Tlb,
    /// Past the last cache and within 2x of memory's latency: a page-walk step (TLB
    /// reach or nested paging in a VM) on the way to memory, not a cache.
    Paging,
    /// A short step past the geometric mean of the cache before it and memory: part of the
    /// working set still hits that cache (on a VM, a share of the L3 the host changed
    /// during the sweep), not a cache of its own.
    Cliff,
    /// The last plateau, past every cache: memory.
    Memory,
}

impl Kind {
    /// A short label for tables.
    pub fn short(self) -> &'static str {
        match self {
            Kind::Cache => "cache",
            Kind::Tlb => "TLB step, not a cache",
            Kind::Paging => "page walks, not a cache",
            Kind::Cliff => "on the cache's cliff, not a cache",
            Kind::Memory => "",
        }
    }

    /// The label shown for a level.
    pub fn label(self) -> &'static str {
        match self {
            Kind::Cache => "cache",
            Kind::Tlb => "TLB step (absent or later with huge pages): not a cache",
            Kind::Paging => {
                "page-walk step past the last cache (TLB reach or nested paging): not a cache"
            }
            Kind::Cliff => {
                "a step on the last cache's way down to memory (part of it still hits): not a cache"
            }
            Kind::Memory => "memory",
        }
    }
}

/// One plateau of a curve and what it is.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Level {
    #[serde(flatten)]
    pub plateau: Plateau,
    pub kind: Kind,
}

/// The levels of one page size's curve.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CurveLevels {
    /// `4k` or `thp`.
    pub pages: String,
    pub levels: Vec<Level>,
    /// The latency at the largest working set measured (memory), ns per load.
    pub far_ns: f64,
}

/// Where the measured last-level cache ends.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Llc {
    /// The largest working set still on the last cache plateau, bytes.
    pub up_to_bytes: u64,
    /// The next size measured, off the plateau: the cache ends before it. This is the
    /// measured LLC size the bandwidth arrays are sized by (the generous end).
    pub next_bytes: u64,
    pub latency_ns: f64,
    /// The curve that judged it (`thp` or `4k`).
    pub pages: String,
}

/// The judged hierarchy: per curve its levels, and the LLC.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Hierarchy {
    pub curves: Vec<CurveLevels>,
    pub llc: Option<Llc>,
}

/// A latency curve: (working set in bytes, ns per load), by size.
pub type Curve = Vec<(u64, f64)>;

/// The working-set sizes a latency sweep measures: 4 KiB upward in sqrt(2) steps, aligned to
/// the 64-byte cache line, to `top`.
pub fn sizes(top: u64) -> Vec<u64> {
    const LINE: u64 = 64;
    let mut v = Vec::new();
    let mut s = 4096.0f64;
    while s as u64 <= top {
        let b = (s as u64 / LINE) * LINE;
        if v.last() != Some(&b) {
            v.push(b);
        }
        s *= std::f64::consts::SQRT_2;
    }
    v
}

/// Latency of `curve` at `size`, or at the next larger size measured.
fn at(curve: &[(u64, f64)], size: u64) -> Option<f64> {
    curve.iter().find(|p| p.0 >= size).map(|p| p.1)
}

/// Label the plateaus of one curve by latency alone (cache, page-walk step, memory).
fn by_latency(curve: &[(u64, f64)], pages: &str) -> CurveLevels {
    let found = plateaus::find(curve);
    // Memory is what the largest working set measured reaches: its latency, not the
    // curve's maximum, which a transient disturbance on the way (a neighbour, compaction)
    // can inflate and so turn page-walk plateaus into apparent caches.
    let far_ns = curve.last().map_or(0.0, |p| p.1);
    let reached = far_ns >= MEMORY_FLOOR_NS;
    // A plateau faster than any memory is a cache even when the largest size is within 2x of
    // it: a page-walk step past the last cache costs a load from memory and more, and a sweep
    // that stops at twice a 105 MiB L3 still hits it in half its loads (65 ns with huge
    // pages against the L3's 33).
    let cache = |p: &Plateau| {
        !reached
            || (p.next_bytes.is_some()
                && (p.latency_ns * CACHE_VS_FAR <= far_ns || p.latency_ns < MEMORY_FLOOR_NS))
    };
    // A short plateau past the crossing of the cache before it is on that cache's cliff.
    let mut cliff = vec![false; found.len()];
    if reached {
        let mut before: Option<f64> = None;
        for (i, p) in found.iter().enumerate() {
            if !cache(p) {
                continue;
            }
            match before {
                Some(ns) if on_cliff(p, ns, far_ns) => cliff[i] = true,
                _ => before = Some(p.latency_ns),
            }
        }
    }
    let last_cache = (0..found.len()).rposition(|i| cache(&found[i]) && !cliff[i]);
    let n = found.len();
    let levels = found
        .into_iter()
        .enumerate()
        .map(|(i, plateau)| {
            let kind = match last_cache {
                Some(l) if i <= l && !cliff[i] => Kind::Cache,
                _ if cliff[i] => Kind::Cliff,
                _ if i + 1 == n => Kind::Memory,
                _ => Kind::Paging,
            };
            Level { plateau, kind }
        })
        .collect();
    CurveLevels {
        pages: pages.into(),
        levels,
        far_ns,
    }
}

/// A plateau shorter than this (largest size over smallest) can be a step on a cache's cliff;
/// a cache level holds a working set several times its predecessor's.
pub const CLIFF_SPAN: f64 = 4.0;

/// Whether plateau `p`, after a cache plateau at `before_ns` on a curve reaching `far_ns`,
/// is a step on that cache's way down to memory rather than a cache of its own: it spans
/// less than [`CLIFF_SPAN`] in size and lies at or above the geometric mean of the cache's
/// latency and memory's, past the crossing [`effective_llc`] reads. Measured on a VM whose
/// host's L3 share wavered during one run: 13-14 ns to 8 MiB, 80 and 78 ns at 11.3 and
/// 16 MiB, 140-190 ns from 22.6 MiB (2026-11-27). A cache level, even one slow against
/// its predecessor (a VM's 42 ns L3 after a 5 ns L2), holds many times its predecessor's
/// working set.
fn on_cliff(p: &Plateau, before_ns: f64, far_ns: f64) -> bool {
    let span = p.up_to_bytes as f64 / p.from_bytes.max(1) as f64;
    span < CLIFF_SPAN && p.latency_ns >= (before_ns * far_ns).sqrt()
}

/// The last cache level of a labelled curve, when the curve leaves it.
fn llc_of(c: &CurveLevels) -> Option<Llc> {
    if c.far_ns < MEMORY_FLOOR_NS {
        return None;
    }
    let l = c.levels.iter().rev().find(|l| l.kind == Kind::Cache)?;
    Some(Llc {
        up_to_bytes: l.plateau.up_to_bytes,
        next_bytes: l.plateau.next_bytes?,
        latency_ns: l.plateau.latency_ns,
        pages: c.pages.clone(),
    })
}

/// The cliff from the LLC plateau to memory spans about this factor either side of an
/// effective LLC (a chain of 2/3 of it already misses in part; one of 1.5x still hits in
/// part). Past the larger side a chain's loads go to memory ([`EffectiveLlc::past_cliff`]).
pub const CLIFF: f64 = 1.5;

/// The last-level cache a run effectively had, read from its own latency curve of one page
/// size: the working set where the curve crosses the geometric mean of its last cache
/// plateau's latency and the latency at the largest size measured (memory), interpolated
/// between the two sizes measured around the crossing (log latency against log size). On a
/// VM the host decides per run how much of the physical L3 the guest effectively gets (other
/// tenants use it too), and this figure follows it between the sizes of the sweep, where
/// [`Llc`] (the last size on the plateau) moves in √2 steps.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EffectiveLlc {
    /// The effective size, bytes.
    pub bytes: u64,
    /// The curve it was read from (`4k` or `thp`).
    pub pages: String,
    /// The last cache plateau's latency, ns per load.
    pub plateau_ns: f64,
    /// The latency at the largest size measured (memory), ns per load.
    pub far_ns: f64,
    /// The two sizes measured around the crossing, bytes.
    pub between: [u64; 2],
    /// The smallest working set on the last cache plateau, bytes: from there on a chain
    /// lives in the LLC.
    pub plateau_from: u64,
}

impl EffectiveLlc {
    /// Whether a working set of `size` bytes lies past this LLC's cliff ([`CLIFF`] × it):
    /// its loads go to memory.
    pub fn past_cliff(&self, size: u64) -> bool {
        size as f64 > CLIFF * self.bytes as f64
    }

    /// The latency the curve crosses there: the geometric mean of the plateau's and memory's.
    pub fn crossing_ns(&self) -> f64 {
        (self.plateau_ns * self.far_ns).sqrt()
    }
}

/// The effective LLC of one curve (`pages`: `4k` or `thp`); None when the curve never leaves
/// its caches (memory's latency below [`MEMORY_FLOOR_NS`]), stops within [`CACHE_VS_FAR`] of
/// its last cache plateau (still on its cliff), or has no cache plateau.
pub fn effective_llc(curve: &[(u64, f64)], pages: &str) -> Option<EffectiveLlc> {
    let levels = by_latency(curve, pages);
    let llc = llc_of(&levels)?;
    let plateau_from = levels
        .levels
        .iter()
        .find(|l| l.kind == Kind::Cache && l.plateau.up_to_bytes == llc.up_to_bytes)?
        .plateau
        .from_bytes;
    let far_ns = curve.last()?.1;
    // The crossing is half-way (in log latency) from the LLC to memory only when the curve
    // got there: one that stops within 2x of the plateau (a sweep stopping at twice a large
    // L3) is still on the cliff, and its half-way point says where the sweep stopped.
    if far_ns < CACHE_VS_FAR * llc.latency_ns {
        return None;
    }
    let target = (llc.latency_ns * far_ns).sqrt();
    // From the plateau's end on (a cache plateau lies at least 2x below memory, so the
    // crossing, √2x above it or more, is past the plateau).
    let start = curve.iter().position(|p| p.0 == llc.up_to_bytes)?;
    let i = start + curve[start..].iter().position(|p| p.1 >= target)?;
    let ((s0, y0), (s1, y1)) = (curve[i.checked_sub(1)?], curve[i]);
    if !(y0 > 0.0 && s0 > 0) {
        return None;
    }
    let f = (target / y0).ln() / (y1 / y0).ln();
    let bytes = ((s0 as f64).ln() + f * ((s1 as f64) / (s0 as f64)).ln()).exp();
    Some(EffectiveLlc {
        bytes: bytes.round() as u64,
        pages: pages.into(),
        plateau_ns: llc.latency_ns,
        far_ns,
        between: [s0, s1],
        plateau_from,
    })
}

/// Judge the hierarchy from the 4 KiB-page curve and, when measured, the huge-page curve
/// (each: working set in bytes, ns per load, by size).
pub fn judge(small: &[(u64, f64)], huge: Option<&[(u64, f64)]>) -> Hierarchy {
    let mut curves = Vec::new();
    if !small.is_empty() {
        let mut c = by_latency(small, "4k");
        if let Some(h) = huge.filter(|h| !h.is_empty()) {
            // A step of the 4 KiB curve is TLB reach when the huge-page curve, over the same
            // sizes (from the end of the plateau to the start of the next), rises less than
            // half as much (in ratio, the square root of the 4 KiB step): absent or later.
            let next: Vec<Option<(u64, f64)>> = c
                .levels
                .iter()
                .skip(1)
                .map(|l| Some((l.plateau.from_bytes, l.plateau.latency_ns)))
                .chain([None])
                .collect();
            for (l, next) in c.levels.iter_mut().zip(next) {
                let Some((from, after)) = next else { continue };
                if l.kind == Kind::Cliff {
                    continue;
                }
                let step = after / l.plateau.latency_ns;
                if let (Some(a), Some(b)) = (at(h, l.plateau.up_to_bytes), at(h, from)) {
                    if step > 1.0 && b / a < step.sqrt() {
                        l.kind = Kind::Tlb;
                    }
                }
            }
        }
        curves.push(c);
    }
    if let Some(h) = huge.filter(|h| !h.is_empty()) {
        curves.push(by_latency(h, "thp"));
    }
    // The huge-page curve judges the LLC when it has one; else the 4 KiB curve.
    let llc = curves.iter().rev().find_map(llc_of);
    Hierarchy { curves, llc }
}

/// Judge one curve of page size `pages` alone (no comparison: TLB steps are not told apart).
pub fn judge_one(curve: &[(u64, f64)], pages: &str) -> Hierarchy {
    let c = by_latency(curve, pages);
    Hierarchy {
        llc: llc_of(&c),
        curves: vec![c],
    }
}

impl Hierarchy {
    /// The curve of one page size.
    pub fn curve(&self, pages: &str) -> Option<&CurveLevels> {
        self.curves.iter().find(|c| c.pages == pages)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    const KIB: u64 = 1024;
    const MIB: u64 = 1024 * KIB;

    #[test]
    fn sizes_grow_by_sqrt2_from_4k() {
        let s = sizes(64 * 1024);
        assert_eq!(s[0], 4096);
        assert_eq!(s[2], 8192);
        assert_eq!(*s.last().unwrap(), 65536);
        assert!(s.iter().all(|x| x % 64 == 0));
    }

    /// Sizes from 4 KiB in sqrt(2) steps to `top`, each at the latency of the first level
    /// (largest size, ns) that holds it; sizes past the last level take its latency.
    pub fn synthetic(levels: &[(u64, f64)], top: u64) -> Vec<(u64, f64)> {
        sizes(top)
            .into_iter()
            .map(|s| {
                let ns = levels
                    .iter()
                    .find(|(cap, _)| s <= *cap)
                    .unwrap_or(levels.last().unwrap())
                    .1;
                (s, ns)
            })
            .collect()
    }

    /// The EPYC VM of issue figures: 4 KiB curve 16.8 ns at 4 MiB, 123 ns at 5.7 MiB, 155 ns
    /// at 32 MiB and rising; levels end at 22.6 KiB, 256 KiB (a 64-entry L1 DTLB with 4 KiB
    /// pages), 724 KiB, 4 MiB. With huge pages the 256 KiB step is absent.
    pub fn epyc() -> (Curve, Curve) {
        let small = synthetic(
            &[
                (23168, 1.2),
                (256 * KIB, 3.4),
                (741440, 5.0),
                (4 * MIB, 16.8),
                (5931584, 123.0),
                (33554432, 155.0),
                (128 * MIB, 190.0),
            ],
            128 * MIB,
        );
        let huge = synthetic(
            &[
                (23168, 1.2),
                (741440, 3.6),
                (4 * MIB, 14.9),
                (5931584, 110.0),
                (33554432, 130.0),
                (128 * MIB, 150.0),
            ],
            128 * MIB,
        );
        (small, huge)
    }

    /// The 480 MiB VM as the issue saw it: levels end at 45 KiB, 1 MiB, 45 MiB, then page-walk
    /// steps at 90 and 256 MiB, both curves rising to the largest size (960 MiB).
    pub fn vm_480_rising() -> (Curve, Curve) {
        let levels = |l3: f64, s1: f64, s2: f64, top: f64| {
            vec![
                (46336, 1.4),
                (MIB, 5.0),
                (47453120, l3),
                (94906240, s1),
                (268435456, s2),
                (960 * MIB, top),
            ]
        };
        (
            synthetic(&levels(42.0, 150.0, 200.0, 280.0), 960 * MIB),
            synthetic(&levels(40.0, 128.0, 175.0, 240.0), 960 * MIB),
        )
    }

    /// Five default runs back to back on a 2-vCPU KVM guest of an AMD EPYC host (reported
    /// L3 32 MiB), 2026-11-27: the latency (ns) from 2.83 MiB to 128 MiB in √2 steps, per
    /// run, 4 KiB pages; the host left the guest a different share of the L3 in each run.
    pub const AA_4K: [[f64; 12]; 5] = [
        [
            11.6, 12.3, 13.3, 13.8, 15.5, 104.9, 131.7, 144.8, 154.1, 155.3, 163.6, 171.4,
        ],
        [
            11.6, 12.4, 13.3, 13.5, 21.9, 96.2, 130.1, 144.5, 150.6, 155.4, 162.2, 173.4,
        ],
        [
            12.2, 12.4, 13.6, 21.0, 91.9, 115.1, 123.7, 146.6, 153.9, 160.1, 164.7, 176.0,
        ],
        [
            11.7, 12.4, 13.5, 13.5, 16.4, 77.3, 113.2, 132.7, 150.2, 160.4, 160.2, 172.0,
        ],
        [
            11.6, 12.3, 13.3, 13.3, 14.6, 32.2, 95.6, 116.6, 144.1, 152.3, 152.2, 161.1,
        ],
    ];
    /// The same runs 1, 3 and 5 with huge pages.
    pub const AA_THP: [[f64; 12]; 3] = [
        [
            11.7, 12.3, 13.1, 13.3, 13.9, 46.9, 114.6, 135.3, 140.6, 147.5, 153.3, 154.8,
        ],
        [
            12.4, 12.4, 13.1, 13.9, 29.6, 108.6, 139.7, 144.9, 150.0, 151.2, 152.1, 154.7,
        ],
        [
            11.8, 12.5, 12.9, 13.3, 14.3, 18.8, 73.8, 121.6, 127.6, 136.2, 144.8, 146.9,
        ],
    ];

    /// The sweep's sizes from 2.83 MiB to 128 MiB.
    pub fn aa_sizes() -> Vec<u64> {
        let all = sizes(128 * MIB);
        all[all.len() - 12..].to_vec()
    }

    /// A curve of [`aa_sizes`] with these latencies.
    pub fn aa_curve(ns: &[f64; 12]) -> Curve {
        aa_sizes().into_iter().zip(ns.iter().copied()).collect()
    }

    #[test]
    fn the_effective_llc_follows_the_hosts_share_between_runs() {
        let s = aa_sizes();
        assert_eq!((s[0], s[11]), (2965760, 128 * MIB), "{s:?}");
        let e = |ns: &[f64; 12], pages| effective_llc(&aa_curve(ns), pages).unwrap();
        // Run 1: between 11.31 and 16 MiB; run 3 between 8 and 11.31; run 5 between 16 and
        // 22.6 (the sweep's sizes at indexes 4, 5, 3 and 6).
        for (run, lo, hi) in [(0, 4, 5), (2, 3, 4), (4, 5, 6)] {
            let got = e(&AA_4K[run], "4k");
            assert_eq!(got.between, [s[lo], s[hi]], "run {}: {got:?}", run + 1);
            assert!(got.bytes > s[lo] && got.bytes < s[hi], "{got:?}");
            assert_eq!(got.far_ns, AA_4K[run][11]);
            assert!((11.0..14.0).contains(&got.plateau_ns), "{got:?}");
            // The curve's latency at the crossing is the geometric mean.
            let x = got.crossing_ns();
            assert!(x > AA_4K[run][lo] && x <= AA_4K[run][hi], "{got:?}");
        }
        // Run 1: 13.3 ns plateau (its median), 171.4 ns memory: 47.7 ns, crossed 15.5 -> 104.9 ns,
        // 59% of the way in log latency, so 59% of the way from 11.31 to 16 MiB in log size.
        let r1 = e(&AA_4K[0], "4k");
        let f = (r1.crossing_ns() / 15.5).ln() / (104.9f64 / 15.5).ln();
        let want = s[4] as f64 * (s[5] as f64 / s[4] as f64).powf(f);
        assert!(
            (r1.bytes as f64 / want - 1.0).abs() < 1e-6,
            "{r1:?} vs {want}"
        );
        // The huge-page curves: run 3 the smallest again, run 5 the largest.
        let (h1, h3, h5) = (
            e(&AA_THP[0], "thp"),
            e(&AA_THP[1], "thp"),
            e(&AA_THP[2], "thp"),
        );
        assert!(
            h3.bytes < h1.bytes && h1.bytes < h5.bytes,
            "{h1:?} {h3:?} {h5:?}"
        );
        assert_eq!(h5.pages, "thp");
    }

    /// A run whose L3 share wavered during its sweep (2026-11-27, 18:06, 4 KiB pages): the
    /// latency (ns) from 2.83 MiB to 128 MiB, two points at 80 ns half-way down the cliff.
    pub const MID_CLIFF_4K: [f64; 12] = [
        11.3, 12.0, 12.7, 13.5, 80.0, 78.0, 140.0, 148.0, 151.0, 160.0, 178.0, 190.0,
    ];

    #[test]
    fn a_step_half_way_down_the_cliff_is_not_the_last_cache() {
        let kinds = |c: &[(u64, f64)]| -> Vec<Kind> {
            by_latency(c, "4k").levels.iter().map(|l| l.kind).collect()
        };
        let s = aa_sizes();
        let curve = aa_curve(&MID_CLIFF_4K);
        let e = effective_llc(&curve, "4k").unwrap();
        // The crossing of the 13 ns plateau and 190 ns memory (50 ns), between 8 and 11.3
        // MiB, not that of the 80 ns step (123 ns, past 16 MiB).
        assert_eq!(e.between, [s[3], s[4]], "{e:?}");
        assert!(e.plateau_ns < 14.0, "{e:?}");
        let k = kinds(&curve);
        assert!(k.contains(&Kind::Cliff), "{k:?}");
        assert_eq!(k.iter().filter(|k| **k == Kind::Cache).count(), 1);
        // The same curve judged with a huge-page curve keeps the step on the cliff.
        let h = judge(&curve, Some(&aa_curve(&AA_THP[0])));
        assert!(h.curves[0].levels.iter().any(|l| l.kind == Kind::Cliff));
        // A slow cache that holds many times its predecessor's working set is still a
        // cache (the 480 MiB VM's 42 ns L3 after a 5 ns L2, memory 280 ns), and so is a
        // short plateau below the crossing (a 2-point L2 of the EPYC curves).
        for c in [vm_480_rising().0, epyc().0]
            .into_iter()
            .chain(AA_4K.iter().chain(AA_THP.iter()).map(aa_curve))
        {
            assert!(!kinds(&c).contains(&Kind::Cliff), "{c:?}");
        }
    }

    #[test]
    fn no_effective_llc_without_memory_or_a_cache_plateau() {
        // Never leaves the caches: its far latency is below the memory floor.
        let flat = synthetic(&[(32 * KIB, 1.3), (MIB, 4.5), (16 * MIB, 14.0)], 16 * MIB);
        assert!(effective_llc(&flat, "4k").is_none());
        // No cache plateau: a curve rising from its first point.
        let rising: Curve = (0..8).map(|i| (MIB << i, 13.0 * 1.5f64.powi(i))).collect();
        assert!(effective_llc(&rising, "4k").is_none(), "{rising:?}");
        assert!(effective_llc(&[], "4k").is_none());
    }

    #[test]
    fn the_epyc_256_kib_step_is_tlb_reach_and_the_llc_ends_near_4_mib() {
        let (small, huge) = epyc();
        let h = judge(&small, Some(&huge));
        let kinds: Vec<(u64, Kind)> = h.curves[0]
            .levels
            .iter()
            .map(|l| (l.plateau.up_to_bytes, l.kind))
            .collect();
        assert_eq!(
            kinds,
            vec![
                (23168, Kind::Cache),
                (262144, Kind::Tlb),
                (741440, Kind::Cache),
                (4 * MIB, Kind::Cache),
                (128 * MIB, Kind::Memory),
            ],
            "{:#?}",
            h.curves[0]
        );
        let llc = h.llc.unwrap();
        assert_eq!((llc.up_to_bytes, llc.next_bytes), (4 * MIB, 5931584));
        assert_eq!(llc.pages, "thp");
    }

    #[test]
    fn page_walk_steps_past_the_llc_are_not_caches_on_a_curve_still_rising() {
        let (small, huge) = vm_480_rising();
        let h = judge(&small, Some(&huge));
        for c in &h.curves {
            let kinds: Vec<Kind> = c.levels.iter().map(|l| l.kind).collect();
            assert_eq!(
                kinds,
                vec![
                    Kind::Cache,
                    Kind::Cache,
                    Kind::Cache,
                    Kind::Paging,
                    Kind::Paging,
                    Kind::Memory
                ],
                "{c:#?}"
            );
        }
        let llc = h.llc.unwrap();
        assert_eq!((llc.up_to_bytes, llc.next_bytes), (47453120, 64 * MIB));
    }

    /// A server part with a 1.5 MiB L2 and a 105 MiB L3 (33 ns: a large mesh), its sweep
    /// stopping at 181 MiB (the last size within twice the report): with huge pages the chain
    /// still hits the L3 in half its loads there (65 ns against memory's ~110), with 4 KiB
    /// pages the page walks add their own (130 ns).
    pub fn big_l3() -> (Curve, Curve) {
        let top = 190 * MIB;
        let (l1, l2, l3) = (48 * KIB, 1536 * KIB, 105 * MIB);
        (
            synthetic(
                &[
                    (l1, 1.5),
                    (l2, 5.5),
                    (l3, 36.0),
                    (128 * MIB, 95.0),
                    (top, 130.0),
                ],
                top,
            ),
            synthetic(
                &[
                    (l1, 1.5),
                    (l2, 5.0),
                    (l3, 33.0),
                    (128 * MIB, 50.0),
                    (top, 65.0),
                ],
                top,
            ),
        )
    }

    #[test]
    fn a_plateau_faster_than_any_memory_is_a_cache_on_a_curve_that_stops_short_of_memory() {
        let (small, huge) = big_l3();
        assert_eq!(
            huge.last().unwrap().0,
            189812480,
            "the sweep ends at 181 MiB"
        );
        let h = judge(&small, Some(&huge));
        let thp = h.curve("thp").unwrap();
        let kinds: Vec<Kind> = thp.levels.iter().map(|l| l.kind).collect();
        assert_eq!(kinds[..3], [Kind::Cache; 3], "{thp:#?}");
        // The LLC is the L3 (last on its plateau at 90.5 MiB), not the 1.5 MiB L2.
        let llc = h.llc.unwrap();
        assert_eq!(
            (llc.next_bytes, llc.pages.as_str()),
            (128 * MIB, "thp"),
            "{llc:?}"
        );
        // Where a curve that stopped half-way down the L3's cliff crosses half-way to its
        // largest size is not where the L3 ends: no effective LLC from it. The 4 KiB curve
        // reached 3.6x its L3 plateau and gives one.
        assert_eq!(effective_llc(&huge, "thp"), None);
        let e = effective_llc(&small, "4k").unwrap();
        assert_eq!(e.between, [94906240, 128 * MIB], "{e:?}");
        // A page-walk step past the LLC costs a load from memory and more: never this fast.
        let (small, huge) = vm_480_rising();
        for c in judge(&small, Some(&huge)).curves {
            assert_eq!(c.levels[3].kind, Kind::Paging, "{c:#?}");
        }
    }

    #[test]
    fn a_bare_metal_curve_has_three_caches_and_memory() {
        let small = synthetic(
            &[
                (32 * KIB, 1.3),
                (MIB, 4.5),
                (11863232, 14.0),
                (512 * MIB, 95.0),
            ],
            512 * MIB,
        );
        let h = judge(&small, None);
        let kinds: Vec<Kind> = h.curves[0].levels.iter().map(|l| l.kind).collect();
        assert_eq!(
            kinds,
            vec![Kind::Cache, Kind::Cache, Kind::Cache, Kind::Memory]
        );
        assert_eq!(h.llc.unwrap().next_bytes, 16 * MIB);
        // A curve that never leaves its caches judges no LLC.
        let flat = synthetic(&[(32 * KIB, 1.3), (MIB, 4.5)], MIB);
        assert!(judge(&flat, None).llc.is_none());
    }
}
