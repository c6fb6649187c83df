//! Rules over the measured memory hierarchy (judged in `measure::hierarchy`): the cache
//! levels the latency curves show, with TLB and page-walk steps named as such, and a
//! last-level cache whose reported size the curves contradict (`llc-size-mismatch`).

use crate::finding::{Finding, Severity};
use crate::measure::hierarchy::{Hierarchy, Kind};
use crate::result::BenchResult;
use crate::units::{bytes, num, pct};

/// The reported LLC must lie within this factor of the measured boundary.
pub const MISMATCH_FACTOR: f64 = 2.0;

/// The judged levels as evidence lines, per curve ("4k level 2: up to 256 KiB (off the
/// plateau at 362 KiB), 3.40 ns per load: TLB step ... not a cache").
pub fn levels_text(h: &Hierarchy) -> Vec<String> {
    let mut out = Vec::new();
    for c in &h.curves {
        let n = c.levels.len();
        for (i, l) in c.levels.iter().enumerate() {
            let p = &l.plateau;
            let end = match (l.kind, p.next_bytes) {
                (Kind::Memory, _) => format!("from {}", bytes(p.from_bytes)),
                (_, Some(next)) => format!(
                    "up to {} (off the plateau at {})",
                    bytes(p.up_to_bytes),
                    bytes(next)
                ),
                (_, None) => format!("up to {} (largest size measured)", bytes(p.up_to_bytes)),
            };
            let rising = if l.kind == Kind::Memory && p.points < 3 && i + 1 == n {
                " (still rising at the largest size)"
            } else {
                ""
            };
            out.push(format!(
                "{} pages, level {}: {end}, {:.2} ns per load: {}{rising}",
                c.pages,
                i + 1,
                p.latency_ns,
                l.kind.label()
            ));
        }
    }
    out
}

/// `cache-levels` (what the curves show, beside what sysfs says) and, when the reported LLC
/// size falls outside the measured boundary, `llc-size-mismatch`.
pub fn evaluate(
    h: &Hierarchy,
    reported_llc: Option<u64>,
    reported_levels: &[String],
) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut evidence = levels_text(h);
    evidence.push(format!("sysfs reports: {}", reported_levels.join(", ")));
    let count = |k: Kind| {
        h.curves
            .first()
            .map(|c| c.levels.iter().filter(|l| l.kind == k).count())
            .unwrap_or(0)
    };
    let caches = h
        .curves
        .iter()
        .map(|c| c.levels.iter().filter(|l| l.kind == Kind::Cache).count())
        .max()
        .unwrap_or(0);
    let (tlb, paging, cliff) = (count(Kind::Tlb), count(Kind::Paging), count(Kind::Cliff));
    let mut not_caches = Vec::new();
    if cliff > 0 {
        not_caches.push(format!(
            "{} on the last cache's cliff",
            crate::units::count(cliff, "step")
        ));
    }
    if tlb > 0 {
        not_caches.push(crate::units::count(tlb, "TLB step"));
    }
    if paging > 0 {
        not_caches.push(format!(
            "{} past the last cache",
            crate::units::count(paging, "page-walk step")
        ));
    }
    out.push(Finding::new(
        "cache-levels",
        Severity::Info,
        format!(
            "The latency curves show {}{}{}.",
            crate::units::count(caches, "cache level"),
            match &h.llc {
                Some(l) => format!(
                    ", the last ending between {} and {} ({} pages)",
                    bytes(l.up_to_bytes),
                    bytes(l.next_bytes),
                    l.pages
                ),
                None => ", and never leave the last one: the LLC is not measured".into(),
            },
            match (not_caches.len(), tlb + paging + cliff) {
                (0, _) => String::new(),
                (_, 1) => format!("; {} is not a cache", not_caches[0]),
                _ => format!("; {} are not caches", not_caches.join(" and ")),
            }
        ),
        evidence.clone(),
    ));
    if let (Some(llc), Some(reported)) = (&h.llc, reported_llc) {
        // A cache of the reported size holds a working set of half of it, so the curve
        // stays on its plateau at least that far: a report more than twice the largest size
        // still on the plateau is too large, and one below half the size the curve had
        // already left it at is too small.
        let low = llc.next_bytes as f64 / MISMATCH_FACTOR;
        let high = llc.up_to_bytes as f64 * MISMATCH_FACTOR;
        if (reported as f64) < low || (reported as f64) > high {
            out.push(Finding::new(
                "llc-size-mismatch",
                Severity::Warning,
                format!(
                    "The last-level cache is reported as {} but the measured latency curve leaves its last cache plateau between {} and {}: trust the measurement (a VM's CPUID/sysfs cache sizes are often synthetic), and size memory tests beyond it.",
                    bytes(reported),
                    bytes(llc.up_to_bytes),
                    bytes(llc.next_bytes)
                ),
                evidence,
            ));
        }
    }
    out
}

/// `memory.per-event`: the per-event figure `p` (events of `event_bytes`, 1 KiB, three
/// clock reads each) against the same writes timed as a batch, `b`; a warning when the
/// clock takes more than a tenth off the figure.
pub fn per_event_timing(
    p: &BenchResult,
    b: &BenchResult,
    event_bytes: usize,
    clock_cost_ns: f64,
    clocksource: Option<&str>,
) -> Finding {
    let block = event_bytes as f64;
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

/// `memory.bandwidth`: the arrays' size, the LLC sizes it was chosen from (measured and
/// reported, both stated) and the rule that chose it (`why`).
pub fn memory_array_size(
    total_bytes: u64,
    measured_llc: Option<u64>,
    reported_llc: u64,
    why: &str,
) -> Finding {
    Finding::new(
        "memory-array-size",
        Severity::Info,
        format!(
            "Each of the three arrays holds {} (all threads together), split evenly across the threads; the LLC measured {}, the OS reports {}.",
            bytes(total_bytes),
            measured_llc
                .map(|m| format!("ends by {}", bytes(m)))
                .unwrap_or_else(|| "is not measured".into()),
            bytes(reported_llc)
        ),
        vec![why.to_string()],
    )
}

/// What a reason naming the cgroup memory limit begins with (see
/// `probe::memory_limit::limit_words`): "memory limit 256 MiB: ..." or "memory.high ...".
pub const LIMIT_PREFIX: &str = "memory limit ";

/// Whether a reason (a skipped row's, an array size's) says a memory limit shaped it.
pub fn names_limit(reason: &str) -> bool {
    reason.starts_with(LIMIT_PREFIX) || reason.starts_with("memory.high ")
}

/// `memory-limit`: the cgroup's memory limit shaped the run (rows measured smaller, sizes
/// left out or rows skipped, each reason naming it), with its OOM counter at the probe and
/// at the end; a limit the run fitted within is named too (a container's limit is a fact of
/// every figure's setting). None without a binding limit.
pub fn memory_limit(
    memory: &crate::probe::memory_limit::MemoryDoc,
    oom_kills_at_end: Option<u64>,
    skipped: &[crate::result::Skipped],
    results: &[BenchResult],
) -> Option<Finding> {
    let limit = memory.binding()?;
    let mut shaped: Vec<String> = skipped
        .iter()
        .filter(|s| names_limit(&s.reason))
        .map(|s| format!("{} {} skipped: {}", s.benchmark, s.case, s.reason))
        .collect();
    for r in results {
        for f in r.findings.iter().filter(|f| f.id == "memory-array-size") {
            for e in f.evidence.iter().filter(|e| names_limit(e)) {
                let line = format!("{}: {e}", r.benchmark);
                if !shaped.contains(&line) {
                    shaped.push(line);
                }
            }
        }
    }
    let fitted = shaped.is_empty();
    let before = memory.cgroup.as_ref().and_then(|c| c.oom_kills);
    shaped.push(match (before, oom_kills_at_end) {
        (Some(b), Some(e)) => {
            format!("the cgroup's OOM kills: {b} at the probe, {e} at the end of the run")
        }
        _ => "the cgroup's OOM kill counter could not be read (see unavailable)".into(),
    });
    Some(Finding::new(
        "memory-limit",
        Severity::Info,
        if fitted {
            format!(
                "The {} {} bound this run: every buffer was sized within what it leaves (less what the cgroup holds, with headroom), and all of them fitted (nothing was measured smaller or skipped).",
                crate::probe::memory_limit::limit_words(limit),
                limit.words()
            )
        } else {
            format!(
                "The {} {} shaped this run: buffers were sized within what it leaves (less what the cgroup holds, with headroom); the evidence names what was measured smaller or skipped.",
                crate::probe::memory_limit::limit_words(limit),
                limit.words()
            )
        },
        shaped,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::hierarchy::{judge, tests as curves};

    const MIB: u64 = 1 << 20;

    fn mismatch(h: &Hierarchy, reported: u64) -> Option<Finding> {
        evaluate(h, Some(reported), &["L3 ?".into()])
            .into_iter()
            .find(|f| f.id == "llc-size-mismatch")
    }

    /// Fires when a reason names the limit (a skipped row, an array size), with the limit
    /// and the OOM counter; not without a limit, nor when the run fitted within it.
    #[test]
    fn the_memory_limit_is_named_when_it_shaped_the_run() {
        use crate::probe::memory_limit::{Limit, MemoryCgroup, MemoryDoc};
        use crate::result::Skipped;
        let limited = MemoryDoc {
            cgroup: Some(MemoryCgroup {
                version: "v1".into(),
                limit: Some(Limit {
                    bytes: 256 * MIB,
                    file: "/sys/fs/cgroup/memory/pod/memory.limit_in_bytes".into(),
                }),
                oom_kills: Some(0),
                ..Default::default()
            }),
            ..Default::default()
        };
        let cut = Skipped {
            benchmark: "memory.bandwidth@1".into(),
            case: "every case".into(),
            reason: "memory limit 256 MiB: the 128 MiB arrays of memory.bandwidth need 384 MiB"
                .into(),
        };
        let other = Skipped {
            benchmark: "memory.bandwidth@1".into(),
            case: "stores=non-temporal".into(),
            reason: "non-temporal store kernels exist for x86-64 only".into(),
        };
        let f = memory_limit(&limited, Some(0), &[cut.clone(), other.clone()], &[])
            .expect("the limit shaped the run");
        assert_eq!(f.id, "memory-limit");
        assert!(
            f.message
                .contains("memory limit 256 MiB (/sys/fs/cgroup/memory/pod/memory.limit_in_bytes)"),
            "{}",
            f.message
        );
        assert!(
            f.evidence[0].contains("every case skipped: memory limit 256 MiB"),
            "{:?}",
            f.evidence
        );
        assert_eq!(
            f.evidence.len(),
            2,
            "the other skip is not the limit's: {:?}",
            f.evidence
        );
        assert!(
            f.evidence[1].contains("0 at the probe, 0 at the end"),
            "{:?}",
            f.evidence
        );
        // A shaped array size in a row's memory-array-size finding counts too.
        let mut r = crate::result::testing::result(
            "memory.bandwidth@1",
            "compact",
            None,
            serde_json::json!({}),
            1e4,
        );
        r.findings.push(memory_array_size(
            64 * MIB,
            Some(4 * MIB),
            32 * MIB,
            "memory limit 256 MiB: measured at 64 MiB",
        ));
        assert!(memory_limit(&limited, None, &[], std::slice::from_ref(&r)).is_some());
        // A run that fitted within the limit names it, and says nothing was shaped.
        let f = memory_limit(&limited, Some(0), std::slice::from_ref(&other), &[]).unwrap();
        assert!(f.message.contains("all of them fitted"), "{}", f.message);
        assert!(
            f.evidence
                .iter()
                .all(|e| e.starts_with("the cgroup's OOM kills")),
            "{:?}",
            f.evidence
        );
        // Not fired: there is no limit.
        let unlimited = MemoryDoc {
            cgroup: Some(MemoryCgroup {
                version: "v1".into(),
                ..Default::default()
            }),
            ..Default::default()
        };
        assert!(memory_limit(&unlimited, Some(0), &[cut], &[]).is_none());
    }

    #[test]
    fn the_epyc_vm_reporting_32_mib_is_a_mismatch_and_names_its_tlb_step() {
        let (small, huge) = curves::epyc();
        let h = judge(&small, Some(&huge));
        let f = evaluate(&h, Some(32 * MIB), &["L3 32 MiB".into()]);
        assert!(
            f[0].message.contains("4 cache levels") || f[0].message.contains("3 cache levels"),
            "{}",
            f[0].message
        );
        assert!(
            f[0].message.contains("1 TLB step is not a cache"),
            "{}",
            f[0].message
        );
        assert!(f[0]
            .evidence
            .iter()
            .any(|e| e.starts_with("4k pages, level 2: up to 256 KiB") && e.contains("TLB step")));
        let m = mismatch(&h, 32 * MIB).expect("llc-size-mismatch");
        assert!(
            m.message.contains("32 MiB") && m.message.contains("between 4 MiB and 5.7 MiB"),
            "{}",
            m.message
        );
    }

    #[test]
    fn the_480_mib_vm_curve_rising_to_the_end_is_a_mismatch() {
        let (small, huge) = curves::vm_480_rising();
        let h = judge(&small, Some(&huge));
        let m = mismatch(&h, 480 * MIB).expect("llc-size-mismatch");
        assert!(m.message.contains("480 MiB"), "{}", m.message);
        let f = evaluate(&h, Some(480 * MIB), &[]);
        assert!(f[0].message.contains("page-walk step"), "{}", f[0].message);
    }

    #[test]
    fn a_right_report_raises_no_mismatch() {
        let (small, huge) = curves::epyc();
        let h = judge(&small, Some(&huge));
        for ok in [4 * MIB, 8 * MIB, 3 * MIB] {
            assert!(mismatch(&h, ok).is_none(), "{ok}");
        }
        // A report far below the measurement is a mismatch too.
        assert!(mismatch(&h, 512 * 1024).is_some());
        // No LLC judged (the curve never leaves a cache): nothing to say.
        let flat = curves::synthetic(&[(32 << 10, 1.3), (MIB, 4.5)], MIB);
        assert!(mismatch(&judge(&flat, None), 480 * MIB).is_none());
    }

    #[test]
    fn the_array_size_finding_states_both_sizes() {
        let f = memory_array_size(128 * MIB, Some(16 * MIB), 480 * MIB, "why");
        assert!(
            f.message.contains("ends by 16 MiB") && f.message.contains("reports 480 MiB"),
            "{}",
            f.message
        );
        let f = memory_array_size(1920 * MIB, None, 480 * MIB, "why");
        assert!(f.message.contains("not measured"), "{}", f.message);
    }
}
