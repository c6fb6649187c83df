//! Rules over the measured memory hierarchy: the cache levels a latency curve shows, and a
//! last-level cache whose reported size the curve contradicts (`llc-size-mismatch`).

use super::{Finding, Severity};
use crate::measure::plateaus::Plateau;
use crate::report::units::bytes;

/// The reported LLC must lie within this factor of the measured boundary.
pub const MISMATCH_FACTOR: f64 = 2.0;

/// The measured levels as evidence lines ("L1: up to 32 KiB at 1.30 ns; ...").
pub fn levels_text(plateaus: &[Plateau], memory_reached: bool) -> Vec<String> {
    let n = plateaus.len();
    plateaus
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let name = if memory_reached && i + 1 == n {
                "memory".to_string()
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
    // The last cache level: the plateau before memory.
    let llc = if judge_llc && memory_reached && plateaus.len() >= 2 {
        plateaus.get(plateaus.len() - 2)
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
