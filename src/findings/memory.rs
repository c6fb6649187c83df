//! Rules over the measured memory hierarchy: the cache levels a latency curve shows, and a
//! last-level cache whose reported size the curve contradicts (`llc-size-mismatch`).

use super::{Finding, Severity};
use crate::measure::plateaus::Plateau;
use crate::report::units::{bytes, num, pct};
use crate::result::BenchResult;

/// The reported LLC must lie within this factor of the measured boundary.
pub const MISMATCH_FACTOR: f64 = 2.0;
/// A level counts as a cache only when memory is at least this much slower; a step closer
/// to memory latency is a TLB or memory effect (e.g. page walks), not a cache.
pub const CACHE_VS_MEMORY: f64 = 1.5;

/// Whether plateau `i` is a cache: not the memory plateau, and clearly faster than memory.
fn is_cache(plateaus: &[Plateau], i: usize, memory_reached: bool) -> bool {
    if !memory_reached {
        return true;
    }
    let mem = plateaus.last().map(|p| p.latency_ns).unwrap_or(f64::MAX);
    i + 1 < plateaus.len() && plateaus[i].latency_ns * CACHE_VS_MEMORY <= mem
}

/// The measured levels as evidence lines ("L1: up to 32 KiB at 1.30 ns; ...").
pub fn levels_text(plateaus: &[Plateau], memory_reached: bool) -> Vec<String> {
    let n = plateaus.len();
    plateaus
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let name = if memory_reached && i + 1 == n {
                "memory".to_string()
            } else if !is_cache(plateaus, i, memory_reached) {
                format!("level {} (within {CACHE_VS_MEMORY}x of memory latency: a TLB or memory step, not a cache)", i + 1)
            } else {
                format!("level {}", i + 1)
            };
            let end = match (memory_reached && i + 1 == n, p.next_bytes) {
                (true, _) => format!("from {}", bytes(p.from_bytes)),
                (false, Some(next)) => format!(
                    "up to {} (off the plateau at {})",
                    bytes(p.up_to_bytes),
                    bytes(next)
                ),
                (false, None) => format!("up to {} (largest size measured)", bytes(p.up_to_bytes)),
            };
            format!("{name}: {end}, {:.2} ns per load", p.latency_ns)
        })
        .collect()
}

/// `cache-levels` (what the curve shows, beside what sysfs says) and, when the reported LLC
/// size falls outside the measured boundary, `llc-size-mismatch`.
///
/// `judge_llc` is false for a curve measured with 4 KiB pages when a huge-page curve exists:
/// TLB misses add steps of their own there, so only the huge-page curve judges the LLC.
pub fn evaluate(
    plateaus: &[Plateau],
    memory_reached: bool,
    reported_llc: Option<u64>,
    reported_levels: &[String],
    pages: &str,
    judge_llc: bool,
) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut evidence = levels_text(plateaus, memory_reached);
    evidence.push(format!("sysfs reports: {}", reported_levels.join(", ")));
    if !memory_reached {
        evidence.push(
            "the curve was still rising at the largest size: memory latency not reached".into(),
        );
    }
    out.push(Finding::new(
        "cache-levels",
        Severity::Info,
        format!(
            "The latency curve ({pages} pages) shows {} level(s){}{}.",
            if memory_reached {
                plateaus.len().saturating_sub(1)
            } else {
                plateaus.len()
            },
            if memory_reached { " before memory" } else { "" },
            if pages == "4k" {
                "; with 4 KiB pages, TLB reach adds steps that are not caches"
            } else {
                ""
            }
        ),
        evidence.clone(),
    ));
    // The last cache level: the last plateau clearly faster than memory.
    let llc = if judge_llc && memory_reached {
        (0..plateaus.len())
            .rev()
            .find(|&i| is_cache(plateaus, i, true))
            .map(|i| &plateaus[i])
    } else {
        None
    };
    if let (Some(llc), Some(reported)) = (llc, reported_llc) {
        let low = llc.up_to_bytes as f64 / MISMATCH_FACTOR;
        let high = llc.next_bytes.unwrap_or(llc.up_to_bytes) as f64 * MISMATCH_FACTOR;
        if (reported as f64) < low || (reported as f64) > high {
            out.push(Finding::new(
                "llc-size-mismatch",
                Severity::Warning,
                format!(
                    "The last-level cache is reported as {} but the measured latency curve leaves its last cache plateau between {} and {}: trust the measurement (a VM's CPUID/sysfs cache sizes are often synthetic), and size memory tests beyond it.",
                    bytes(reported),
                    bytes(llc.up_to_bytes),
                    bytes(llc.next_bytes.unwrap_or(llc.up_to_bytes))
                ),
                evidence,
            ));
        }
    }
    out
}

/// `memory.per-event`: the per-event figure `p` (1 KiB events, three clock reads each)
/// against the same writes timed as a batch, `b`; a warning when the clock takes more
/// than a tenth off the figure.
pub fn per_event_timing(
    p: &BenchResult,
    b: &BenchResult,
    clock_cost_ns: f64,
    clocksource: Option<&str>,
) -> Finding {
    let block = crate::bench::memory::per_event::BLOCK as f64;
    let ratio = p.stats.median / b.stats.median;
    let ns_pe = block / p.stats.median * 1e3;
    let ns_b = block / b.stats.median * 1e3;
    Finding::new(
        "per-event-timing",
        if ratio < 0.9 { Severity::Warning } else { Severity::Info },
        format!(
            "Timing every 1 KiB event (3 clock reads each, as sysbench memory does) reports {} MB/s; the same writes timed as a batch give {} MB/s ({:.2}x). The clock reads take {} of the per-event time: a slower clock would lower this figure further while the memory stays as fast.",
            num(p.stats.median),
            num(b.stats.median),
            ratio,
            pct(p.quality.timer_share)
        ),
        vec![
            format!("per event: {ns_pe:.1} ns with clock reads, {ns_b:.1} ns without"),
            format!("CLOCK_MONOTONIC read: {clock_cost_ns:.1} ns"),
            format!("clocksource {}", clocksource.unwrap_or("unknown")),
        ],
    )
}

/// `memory.bandwidth`: the arrays' size and the rule that chose it (`why`).
pub fn memory_array_size(total_bytes: u64, why: &str) -> Finding {
    Finding::new(
        "memory-array-size",
        Severity::Info,
        format!("Each of the three arrays holds {} (all threads together), split evenly across the threads.", bytes(total_bytes)),
        vec![why.to_string()],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    fn p(from: u64, up_to: u64, next: Option<u64>, ns: f64) -> Plateau {
        Plateau {
            from_bytes: from,
            up_to_bytes: up_to,
            next_bytes: next,
            latency_ns: ns,
            points: 4,
        }
    }

    fn vm_curve() -> Vec<Plateau> {
        vec![
            p(4096, 45 << 10, Some(64 << 10), 1.4),
            p(64 << 10, 1280 << 10, Some(2 * MIB), 5.0),
            p(3 * MIB, 13 * MIB, Some(22 * MIB), 45.0),
            p(24 * MIB, 960 * MIB, None, 250.0),
        ]
    }

    #[test]
    fn the_research_vm_480_mib_l3_is_a_mismatch() {
        let f = evaluate(
            &vm_curve(),
            true,
            Some(480 * MIB),
            &["L3 480 MiB".into()],
            "thp",
            true,
        );
        assert_eq!(f[0].id, "cache-levels");
        assert!(f[0].message.contains("3 level(s) before memory"));
        let m = f.iter().find(|x| x.id == "llc-size-mismatch").unwrap();
        assert!(m.message.contains("480 MiB"), "{}", m.message);
        assert!(
            m.message.contains("between 13 MiB and 22 MiB"),
            "{}",
            m.message
        );
        assert!(m
            .evidence
            .iter()
            .any(|e| e.starts_with("memory: from 24 MiB")));
    }

    #[test]
    fn a_step_near_memory_latency_is_not_taken_for_the_llc() {
        // This VM: 13.8 ns up to 4 MiB, then a 94 ns step to 22 MiB, memory at 123 ns.
        let curve = vec![
            p(4096, 32 << 10, Some(45 << 10), 1.5),
            p(64 << 10, 256 << 10, Some(362 << 10), 4.2),
            p(512 << 10, 4 * MIB, Some(6 * MIB), 13.8),
            p(8 * MIB, 22 * MIB, Some(32 * MIB), 94.0),
            p(32 * MIB, 128 * MIB, None, 123.0),
        ];
        let f = evaluate(&curve, true, Some(8 * MIB), &[], "thp", true);
        assert!(f.iter().all(|x| x.id != "llc-size-mismatch"), "{f:#?}");
        assert!(
            f[0].evidence[3].contains("not a cache"),
            "{:?}",
            f[0].evidence
        );
        // Reported far off the 4 MiB level: a mismatch against that level.
        let f = evaluate(&curve, true, Some(480 * MIB), &[], "thp", true);
        let m = f.iter().find(|x| x.id == "llc-size-mismatch").unwrap();
        assert!(
            m.message.contains("between 4 MiB and 6 MiB"),
            "{}",
            m.message
        );
    }

    #[test]
    fn a_matching_llc_and_an_unfinished_curve_raise_no_mismatch() {
        let f = evaluate(&vm_curve(), true, Some(16 * MIB), &[], "thp", true);
        assert!(f.iter().all(|x| x.id != "llc-size-mismatch"));
        let f = evaluate(&vm_curve(), true, Some(480 * MIB), &[], "4k", false);
        assert!(f.iter().all(|x| x.id != "llc-size-mismatch"));
        let f = evaluate(&vm_curve()[..3], false, Some(480 * MIB), &[], "thp", true);
        assert!(f.iter().all(|x| x.id != "llc-size-mismatch"));
        assert!(f[0].evidence.iter().any(|e| e.contains("still rising")));
    }
}
