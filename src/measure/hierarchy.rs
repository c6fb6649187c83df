//! The memory hierarchy a latency sweep measured, judged in one place for every reader (the
//! latency benchmark, the latency findings, the bandwidth arrays' size, `show` and the
//! report; the curves of a run's results are read by `bench::memory::latency::curves_of`),
//! below all of them: which steps of the
//! curve are caches, which are TLB reach, which lie past the last cache, and where the
//! last-level cache ends.
//!
//! - A step of the 4 KiB-page curve that is absent, or comes later, in the huge-page curve
//!   is a TLB step (huge pages reach 512x further with the same TLB entries): over the same
//!   sizes (the end of the 4 KiB plateau to the start of its next one) the huge-page curve
//!   rises by less than the square root of the 4 KiB step.
//! - A plateau is a cache only when the latency at the largest working set (memory) is at
//!   least [`CACHE_VS_FAR`] times its own, and the curve leaves it (the largest size, not the
//!   curve's maximum: a transient spike on the way must not turn page walks into caches). The steps after the last cache
//!   are page walks (TLB reach, nested paging in a VM) on the way to memory, not caches;
//!   no plateau of memory itself is needed (only a latency at the largest size of at least
//!   [`MEMORY_FLOOR_NS`]), so a curve that keeps rising to its largest size
//!   (a VM's nested paging) still shows where the caches end.
//! - The last-level cache ends where the curve leaves the last cache plateau: between its
//!   largest size and the next size measured. The huge-page curve judges it when there is
//!   one (fewer TLB steps), else the 4 KiB curve.

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
    let cache =
        |p: &Plateau| !reached || (p.next_bytes.is_some() && p.latency_ns * CACHE_VS_FAR <= far_ns);
    let last_cache = found.iter().rposition(cache);
    let n = found.len();
    let levels = found
        .into_iter()
        .enumerate()
        .map(|(i, plateau)| {
            let kind = match last_cache {
                Some(l) if i <= l => Kind::Cache,
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

    /// Sizes from 4 KiB in sqrt(2) steps to `top`, each at the latency of the first level
    /// (largest size, ns) that holds it; sizes past the last level take its latency.
    pub fn synthetic(levels: &[(u64, f64)], top: u64) -> Vec<(u64, f64)> {
        crate::bench::memory::latency::sizes(top)
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
