//! Candidate causes that nothing in the documents quantifies: CPU model, microcode, kernel,
//! mitigations, SMT on/off, cpufreq governor and driver, THP, idle driver, clocksource. Each is listed
//! with what both documents say (or that they do not record it); one that differs is
//! attached, marked "not measured", only to a row its mechanism can touch (`MECHANISMS`:
//! THP to huge-page rows, not to 4 KiB-page rows that refuse it; mitigations to rows that
//! enter the kernel; the idle driver to rows whose tasks sleep and wake; the clocksource to
//! those and to clock-read rows, unless the timer cause measured it for the row...).

use crate::bench::nature::{Kernel, Tasks};
use crate::compare::causes::explain::{Claim, Explanation};
use crate::compare::causes::timer::TIMER;
use crate::probe::ProbeDoc;
use crate::result::BenchResult;
use serde::Serialize;

/// A candidate, as the JSON names it.
pub const CANDIDATE: &str = "candidate";

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Candidate {
    pub what: String,
    pub a: String,
    pub b: String,
    /// `differs`, `same`, or `not recorded` (the documents do not hold it).
    pub status: String,
    /// The rows it can touch, and how.
    pub mechanism: &'static str,
}

fn text(v: &Option<String>) -> String {
    v.clone().unwrap_or_else(|| "unknown".into())
}

/// The kernel command line's `mitigations=` setting, when it has one.
fn mitigations(e: &ProbeDoc) -> String {
    e.kernel
        .cmdline
        .as_deref()
        .and_then(|c| c.split_whitespace().find(|w| w.starts_with("mitigations=")))
        .map(String::from)
        .unwrap_or_else(|| "kernel default (no mitigations= on the command line)".into())
}

fn smt(e: &ProbeDoc) -> String {
    format!(
        "{} thread(s) per core, control {}",
        e.topology.threads_per_core,
        text(&e.topology.smt_control)
    )
}

type Read = fn(&ProbeDoc) -> String;
/// Whether a candidate (with both runs' values) can move a row's figure.
type Touches = fn(&Candidate, &BenchResult) -> bool;

/// What the kernel is to a row's measured path, as its benchmark declares it
/// (`bench::nature::Kernel`).
fn kernel(r: &BenchResult) -> Kernel {
    crate::bench::nature::of(r).kernel
}

/// Pure user-space compute loops: they neither enter the kernel nor sleep.
fn compute_only(r: &BenchResult) -> bool {
    kernel(r) == Kernel::Never
}

/// Rows that cross into the kernel on their measured path (system calls, pipes, context
/// switches, exec, file I/O, clock reads that may trap).
fn enters_kernel(r: &BenchResult) -> bool {
    kernel(r) >= Kernel::Enters
}

/// Rows whose tasks block and are woken on their measured path.
fn sleeps_and_wakes(r: &BenchResult) -> bool {
    kernel(r) == Kernel::Sleeps
}

/// Rows running more than one task at once, which may share a core's pipeline: a pair, a
/// bandwidth's threads (`bench::nature::Tasks`), or copies.
fn several_tasks(r: &BenchResult) -> bool {
    crate::bench::nature::of(r).tasks != Tasks::One
        || crate::compare::matching::copies(r).is_some_and(|c| c > 1)
}

/// Rows THP governs: the huge-page variant (it asks for THP with MADV_HUGEPAGE, which
/// `never` refuses), and, when either side is `always`, memory no benchmark advised.
/// Rows on 4 KiB pages refused THP (MADV_NOHUGEPAGE): no THP setting touches them.
fn thp_governs(c: &Candidate, r: &BenchResult) -> bool {
    match r.params.pages() {
        Some("thp") => true,
        Some(_) => false,
        None => {
            let advised = crate::bench::nature::of(r).advises_pages;
            !advised && (c.a.contains("always") || c.b.contains("always"))
        }
    }
}

/// The lowest CPU weight on the way up from the run's cgroup (`probe::cpu_weight`).
fn cpu_weight(e: &ProbeDoc) -> String {
    e.cgroup
        .as_ref()
        .and_then(|c| c.cpu_weight.as_ref())
        .map_or_else(|| "unknown".into(), |w| w.words())
}

/// Each candidate: its name, where it is read, which rows its mechanism touches and how.
const MECHANISMS: &[(&str, Read, Touches, &str)] = &[
    ("CPU model", |e| text(&e.kernel.cpu_model), |_, _| true, "every row: all code runs on it"),
    ("kernel", |e| text(&e.kernel.release), |_, r| !compute_only(r),
        "rows that enter the kernel, are placed by its scheduler or get pages from it (not pure compute loops)"),
    ("mitigations", mitigations, |_, r| enters_kernel(r),
        "rows that cross into the kernel (system calls, context switches, pipes, exec)"),
    ("SMT", smt, |_, r| several_tasks(r),
        "rows running several tasks at once, which may share a core"),
    ("cpufreq governor", |e| text(&e.kernel.cpufreq_governor), |_, _| true,
        "every row: the clock speed its code runs at"),
    ("cpufreq driver", |e| text(&e.kernel.cpufreq_driver), |_, _| true,
        "every row: the clock speed its code runs at"),
    ("THP", |e| text(&e.kernel.thp), thp_governs,
        "huge-page rows (MADV_HUGEPAGE), and un-advised memory under `always`; never 4 KiB-page rows (MADV_NOHUGEPAGE)"),
    ("idle driver", |e| text(&e.kernel.idle_driver), |_, r| sleeps_and_wakes(r),
        "rows whose tasks sleep and are woken (wake-up latency from idle states)"),
    ("clocksource", |e| text(&e.clock.clocksource), |_, r| sleeps_and_wakes(r) || crate::compare::causes::timer::reads_clocksource(r),
        "rows whose tasks sleep and wake or switch context (the kernel reads the clock at each switch and wake-up), and clock-read rows that read it"),
    ("CPU weight", cpu_weight, |_, _| true,
        "every row, while other tasks keep the CPUs busy: the share of a busy CPU the cgroup gets against them (the cpu-share cause measures its threads' waiting)"),
];

/// Whether a cause already found for the row quantifies candidate `c` there: the timer
/// cause measures a clock-read row's clocksource (the probe's read cost of that clock on
/// each side), so the clocksource is not listed again as not measured beside it. On a row
/// whose tasks sleep and wake the timer measures at most the benchmark's own clock reads,
/// not the kernel's at each switch: there the clocksource stays a candidate.
fn quantified(c: &Candidate, r: &BenchResult, found: &[Explanation]) -> bool {
    let by = |cause: &str| found.iter().any(|e| e.cause == cause);
    match c.what.as_str() {
        "clocksource" => crate::compare::causes::timer::reads_clocksource(r) && by(TIMER),
        // The waiting it causes is measured on the row by the cpu-share cause.
        "CPU weight" => by(crate::compare::causes::cpu_share::CPU_SHARE),
        _ => false,
    }
}

/// Microcode is not recorded by the probe; it would touch every row.
const MICROCODE: &str = "every row: all code runs on it";

/// Whether candidate `c` can touch row `r` (microcode and unknown names: every row).
pub fn touches(c: &Candidate, r: &BenchResult) -> bool {
    MECHANISMS
        .iter()
        .find(|(what, ..)| *what == c.what)
        .is_none_or(|(_, _, t, _)| t(c, r))
}

/// Every candidate with both runs' values; microcode is not recorded by the probe.
pub fn list(a: &ProbeDoc, b: &ProbeDoc) -> Vec<Candidate> {
    let mut v: Vec<Candidate> = MECHANISMS
        .iter()
        .map(|(what, read, _, mechanism)| {
            let (x, y) = (read(a), read(b));
            Candidate {
                what: what.to_string(),
                status: if x == y { "same" } else { "differs" }.into(),
                a: x,
                b: y,
                mechanism,
            }
        })
        .collect();
    v.push(Candidate {
        what: "microcode".into(),
        a: "not recorded".into(),
        b: "not recorded".into(),
        status: "not recorded".into(),
        mechanism: MICROCODE,
    });
    v
}

/// The candidates that differ and can touch row `r`, as one "not measured" explanation,
/// less those a cause already `found` for the row quantifies; None when none is left.
pub fn explain(cands: &[Candidate], r: &BenchResult, found: &[Explanation]) -> Option<Explanation> {
    let diff: Vec<&Candidate> = cands
        .iter()
        .filter(|c| c.status == "differs" && touches(c, r) && !quantified(c, r, found))
        .collect();
    if diff.is_empty() {
        return None;
    }
    let mut e = Explanation::new(
        CANDIDATE,
        Claim::NotMeasured,
        format!(
            "its {} differ from A's (not measured: nothing quantifies their effect)",
            diff.iter()
                .map(|c| c.what.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    );
    e.evidence = diff
        .iter()
        .map(|c| {
            format!(
                "{}: A {} | B {} (not measured; it touches {})",
                c.what, c.a, c.b, c.mechanism
            )
        })
        .collect();
    Some(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::result::testing::result;
    use serde_json::json;

    fn latency(pages: &str) -> BenchResult {
        result(
            "memory.latency@1",
            "cpus",
            Some(vec![0]),
            json!({"size_bytes": 1 << 30, "pages": pages}),
            100.0,
        )
    }

    fn named(bench: &str) -> BenchResult {
        result(bench, "os", None, json!({}), 100.0)
    }

    #[test]
    fn a_different_kernel_is_a_candidate_and_the_same_machine_has_none() {
        let a = crate::result::testing::env();
        let mut b = a.clone();
        let r = named("ctx.pipe@1");
        assert!(explain(&list(&a, &b), &r, &[]).is_none());
        assert!(list(&a, &b)
            .iter()
            .any(|c| c.what == "microcode" && c.status == "not recorded"));
        b.kernel.release = Some("9.9.9".into());
        let e = explain(&list(&a, &b), &r, &[]).unwrap();
        assert_eq!(e.claim, Claim::NotMeasured);
        assert!(
            e.evidence[0].contains("kernel") && e.evidence[0].contains("9.9.9"),
            "{e:?}"
        );
    }

    #[test]
    fn a_lower_cpu_weight_is_a_candidate_until_the_cpu_share_cause_measures_it() {
        let mut a = crate::result::testing::env();
        let weight = |v| crate::probe::cpu_weight::CpuWeight {
            file: "/sys/fs/cgroup/cpu/cpu.shares".into(),
            value: v,
            default: 1024,
            idle: false,
        };
        let Some(g) = a.cgroup.as_mut() else {
            panic!("the test environment has a cgroup");
        };
        g.cpu_weight = Some(weight(1024));
        let mut b = a.clone();
        let r = named("timers.clock-read@1");
        assert!(explain(&list(&a, &b), &r, &[]).is_none(), "the same weight");
        b.cgroup.as_mut().unwrap().cpu_weight = Some(weight(2));
        let c = list(&a, &b);
        let w = c.iter().find(|c| c.what == "CPU weight").unwrap();
        assert_eq!(
            (w.status.as_str(), w.b.as_str()),
            ("differs", "cpu.shares 2 (default 1024)")
        );
        assert!(explain(&c, &r, &[]).is_some());
        let share = Explanation::new(
            crate::compare::causes::cpu_share::CPU_SHARE,
            Claim::Explains,
            "B's threads waited",
        );
        assert!(explain(&c, &r, &[share]).is_none(), "measured by cpu-share");
    }

    #[test]
    fn thp_is_attached_to_huge_page_rows_only() {
        let mut a = crate::result::testing::env();
        a.kernel.thp = Some("madvise".into());
        let mut b = a.clone();
        b.kernel.thp = Some("never".into());
        let c = list(&a, &b);
        let e = explain(&c, &latency("thp"), &[]).expect("THP governs the huge-page curve");
        assert!(e.because.contains("THP"), "{e:?}");
        assert!(
            explain(&c, &latency("4k"), &[]).is_none(),
            "4 KiB pages refuse THP"
        );
        // Un-advised memory and other suites: only `always` reaches them.
        for bench in ["ctx.pipe@1", "memory.per-event@1", "classic.dhrystone@1"] {
            assert!(explain(&c, &named(bench), &[]).is_none(), "{bench}");
        }
        b.kernel.thp = Some("always".into());
        let c = list(&a, &b);
        assert!(explain(&c, &named("memory.per-event@1"), &[]).is_some());
        assert!(explain(&c, &latency("4k"), &[]).is_none());
    }

    #[test]
    fn each_candidate_touches_only_the_rows_of_its_mechanism() {
        let a = crate::result::testing::env();
        let with = |f: fn(&mut ProbeDoc)| {
            let mut b = a.clone();
            f(&mut b);
            list(&a, &b)
        };
        let idle = with(|b| b.kernel.idle_driver = Some("haltpoll-x".into()));
        assert!(explain(&idle, &named("ctx.pipe@1"), &[]).is_some());
        assert!(explain(&idle, &named("classic.dhrystone@1"), &[]).is_none());
        assert!(explain(&idle, &latency("4k"), &[]).is_none());
        let mitig = with(|b| b.kernel.cmdline = Some("mitigations=off".into()));
        assert!(explain(&mitig, &named("classic.syscall@1"), &[]).is_some());
        assert!(explain(&mitig, &named("c2c.cacheline@1"), &[]).is_none());
        assert!(explain(&mitig, &named("classic.whetstone@1"), &[]).is_none());
        let kernel = with(|b| b.kernel.release = Some("9.9".into()));
        assert!(explain(&kernel, &latency("4k"), &[]).is_some());
        assert!(explain(&kernel, &named("classic.dhrystone@1"), &[]).is_none());
        let gov = with(|b| b.kernel.cpufreq_governor = Some("powersave".into()));
        assert!(explain(&gov, &named("classic.dhrystone@1"), &[]).is_some());
    }

    fn clock_read(clock: &str, path: &str) -> BenchResult {
        result(
            "timers.clock-read@1",
            "os",
            None,
            json!({"clock": clock, "path": path}),
            20.0,
        )
    }

    #[test]
    fn a_clocksource_that_differs_is_a_candidate_for_rows_that_switch_or_read_it() {
        let mut a = crate::result::testing::env();
        a.clock.clocksource = Some("tsc".into());
        let mut b = a.clone();
        b.clock.clocksource = Some("kvm-clock".into());
        let c = list(&a, &b);
        // Two ctx.pipe rows called with no cause (tsc vs kvm-clock, 2026-11-27): the
        // clocksource is named on them, with both values and what it touches.
        let e = explain(&c, &named("ctx.pipe@1"), &[]).expect("ctx rows switch context");
        assert_eq!(e.claim, Claim::NotMeasured);
        assert!(e.because.contains("clocksource"), "{e:?}");
        assert!(
            e.evidence
                .iter()
                .any(|x| x.starts_with("clocksource: A tsc | B kvm-clock (not measured")),
            "{e:?}"
        );
        assert!(explain(&c, &named("classic.context-switch@1"), &[]).is_some());
        assert!(explain(&c, &clock_read("monotonic", "vdso"), &[]).is_some());
        // Rows its mechanism does not reach: memory bandwidth, compute, clocks that never
        // read it.
        for r in [
            named("memory.bandwidth@1"),
            named("classic.dhrystone@1"),
            latency("4k"),
            clock_read("monotonic_coarse", "vdso"),
            clock_read("rdtsc", "instruction"),
        ] {
            assert!(explain(&c, &r, &[]).is_none(), "{}", r.key());
        }
        // The same clocksource on both: no candidate.
        let same = list(&a, &a.clone());
        assert!(same
            .iter()
            .any(|x| x.what == "clocksource" && x.status == "same"));
        assert!(explain(&same, &named("ctx.pipe@1"), &[]).is_none());
        // Where the timer cause measured it (a clock-read row), it is not named again; on a
        // ctx row the timer measures only the benchmark's own reads, and it stays.
        let timer = [Explanation::new(TIMER, Claim::Contributes, "a slower read")];
        assert!(explain(&c, &clock_read("monotonic", "vdso"), &timer).is_none());
        assert!(explain(&c, &named("ctx.pipe@1"), &timer).is_some());
    }
}
