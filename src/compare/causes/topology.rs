//! Topology as the OS sees it, as a cause: last-level cache sharing (a machine whose LLC
//! spans no two cores, `llc-not-shared`, keeps a ping-pong on one CPU), SMT, CPU counts
//! and kinds, NUMA nodes, and the last-level cache size reported against the one a
//! latency sweep measured. A latency row whose working set fits one run's LLC and not the
//! other's is explained by it; the other facts contribute to the rows they act on.

use crate::bench::memory::latency::{effective_llc_of, LatencyParams};
use crate::compare::causes::explain::{Claim, Explanation, RowCtx};
use crate::compare::causes::llc_share::pages_words;
use crate::compare::settings::{llc_bytes, llc_not_shared};
use crate::result::RunDocument;
use crate::units::bytes;

/// This cause, as the JSON names it.
pub const TOPOLOGY: &str = "topology";

/// The LLC size a latency sweep of the run measured, when its `llc-size-mismatch` finding
/// says the reported one is wrong.
fn llc_mismatch(doc: &RunDocument) -> Option<String> {
    doc.results
        .iter()
        .flat_map(|r| &r.findings)
        .find(|f| f.id == "llc-size-mismatch")
        .map(|f| f.message.clone())
}

pub fn explain(c: &RowCtx) -> Option<Explanation> {
    if matches!(
        crate::bench::nature::of(c.ra).memory,
        crate::bench::nature::Memory::Chain { .. }
    ) {
        if let Some(e) = latency_fits(c) {
            return Some(e);
        }
    }
    let (ea, eb) = (&c.a.env, &c.b.env);
    // A pair left to the scheduler: LLC sharing decides whether it is spread.
    let colocation = |r: &crate::result::BenchResult| {
        r.placement
            .observed
            .as_ref()
            .and_then(|o| o.colocated_fraction())
    };
    if let (Some(fa), Some(fb), true) = (
        colocation(c.ra),
        colocation(c.rb),
        c.ra.placement.cpus.is_none(),
    ) {
        let (na, nb) = (llc_not_shared(ea), llc_not_shared(eb));
        // The side without a shared LLC keeps the pair together more.
        if na != nb
            && (fb - fa).abs() >= crate::compare::causes::placement::MIN_SHIFT
            && (nb == (fb > fa))
        {
            let side = if nb { "B" } else { "A" };
            return Some(
                Explanation::new(
                    TOPOLOGY,
                    Claim::Contributes,
                    format!("{side}'s CPUs share no last-level cache, so its scheduler keeps a woken task on its waker's CPU"),
                )
                .evidence(format!("{side}: llc-not-shared"))
                .evidence(format!(
                    "LLC groups: A {:?}, B {:?}",
                    ea.topology.llc_groups, eb.topology.llc_groups
                )),
            );
        }
    }
    // Parallel rows: CPU counts, SMT, kinds and NUMA nodes change what N copies share.
    let parallel = crate::compare::causes::capacity::tasks(c.ra) > 1
        || crate::compare::causes::capacity::tasks(c.rb) > 1;
    if parallel {
        let d: Vec<String> = crate::compare::settings::topology_differences(ea, eb)
            .into_iter()
            .filter(|d| !d.starts_with("reported LLC") && !d.starts_with("LLC not shared"))
            .collect();
        if !d.is_empty() {
            let mut e = Explanation::new(
                TOPOLOGY,
                Claim::Contributes,
                format!(
                    "its parallel tasks ran on another topology ({})",
                    d.join("; ")
                ),
            );
            e.evidence = d;
            return Some(e);
        }
    }
    None
}

/// One run's last-level cache for a latency row of page size `pages`: the effective LLC its
/// own latency curve measured (`hierarchy::effective_llc`), else the size its probe reports.
/// A VM may report 480 MiB and hold chains of 45 MiB at most; a bare-metal part reports
/// what it has.
struct RunLlc {
    bytes: u64,
    /// "measured 45 MiB (4 KiB pages), reported 480 MiB" or "reported 32 MiB".
    words: String,
}

fn run_llc(doc: &RunDocument, pages: &str) -> Option<RunLlc> {
    let reported = llc_bytes(&doc.env);
    let rep = |r: Option<u64>| r.map(bytes).unwrap_or_else(|| "unknown".into());
    match effective_llc_of(&doc.results, pages) {
        Some(e) => Some(RunLlc {
            bytes: e.bytes,
            words: format!(
                "measured {} (effective, {}), reported {}",
                bytes(e.bytes),
                pages_words(pages),
                rep(reported)
            ),
        }),
        None => Some(RunLlc {
            bytes: reported?,
            words: format!(
                "reported {} (no latency curve reaching memory)",
                rep(reported)
            ),
        }),
    }
}

/// A latency row whose working set fits in one run's LLC and not in the other's, each LLC
/// as measured by the run's own latency curve when it has one. Between two runs of one host
/// that report the same LLC, the measured sizes differ by the host's share of it: that is
/// `llc_share`'s, not the topology's.
fn latency_fits(c: &RowCtx) -> Option<Explanation> {
    let p: LatencyParams = c.ra.params.read()?;
    if c.one_host().is_some() && llc_bytes(&c.a.env) == llc_bytes(&c.b.env) {
        return None;
    }
    let (la, lb) = (run_llc(c.a, &p.pages)?, run_llc(c.b, &p.pages)?);
    let (fits_a, fits_b) = (p.size_bytes <= la.bytes, p.size_bytes <= lb.bytes);
    if fits_a == fits_b {
        return None;
    }
    let fits = if fits_b { "B" } else { "A" };
    // The side it fits on must be the faster one.
    let faster = if c.worse_side() == "A" { "B" } else { "A" };
    if fits != faster {
        return None;
    }
    let (yes, no) = if fits_b { (&lb, &la) } else { (&la, &lb) };
    let mut e = Explanation::new(
        TOPOLOGY,
        Claim::Explains,
        format!(
            "its {} working set fits in {fits}'s last-level cache ({}) and not in the other's ({})",
            bytes(p.size_bytes),
            bytes(yes.bytes),
            bytes(no.bytes)
        ),
    )
    .evidence(format!("LLC: A {}, B {}", la.words, lb.words));
    for (side, d) in [("A", c.a), ("B", c.b)] {
        if let Some(m) = llc_mismatch(d) {
            e.evidence.push(format!("{side}: llc-size-mismatch: {m}"));
        }
    }
    Some(e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::causes::testing::{judged_ctx, judged_rows};
    use crate::compare::testing::{ctx_run, latency_curves_run, latency_run};

    #[test]
    fn a_working_set_between_the_two_llc_sizes_is_explained_by_the_cache() {
        let a = latency_run("a", 32 << 20, 8 << 20, 20.0);
        let b = latency_run("b", 4 << 20, 8 << 20, 120.0);
        let e = judged_rows(&a, &b, explain)[0].1.clone().unwrap();
        assert_eq!(e.claim, Claim::Explains, "{e:?}");
        assert!(e.because.contains("fits in A's"), "{}", e.because);
        // Same LLC on both: nothing.
        let b = latency_run("b", 32 << 20, 8 << 20, 120.0);
        assert!(judged_rows(&a, &b, explain)[0].1.is_none());
    }

    /// A run on host `host` reporting an LLC of `reported` bytes whose 4 KiB latency curve
    /// has these levels (largest size, ns), up to 960 MiB.
    fn machine(host: &str, reported: u64, levels: &[(u64, f64)]) -> RunDocument {
        let curve = crate::measure::hierarchy::tests::synthetic(levels, 960 << 20);
        let mut doc = latency_curves_run(host, &[("4k", &curve)]);
        doc.host = Some(host.into());
        let level = doc.env.topology.llc_level.unwrap();
        for c in doc
            .env
            .topology
            .caches
            .iter_mut()
            .filter(|c| c.level == level)
        {
            c.size_bytes = Some(reported);
        }
        doc
    }

    fn at(a: &RunDocument, b: &RunDocument, size: u64) -> Option<Explanation> {
        judged_rows(a, b, explain)
            .into_iter()
            .find(|(l, _)| l.contains(&format!("size_bytes={size}")))
            .unwrap_or_else(|| panic!("no row {size}"))
            .1
    }

    #[test]
    fn the_llcs_measured_decide_what_fits_not_the_sizes_reported() {
        const MIB: u64 = 1 << 20;
        // A VM reporting 480 MiB whose curve leaves its 42 ns L3 at 45 MiB, with fast memory;
        // a bare-metal host reporting and holding 32 MiB, with slow memory.
        let (vm_l3, bare_l3) = (47453120, 32 * MIB); // 45.3 MiB, a point of the sweep
        let vm = machine(
            "vm480",
            480 * MIB,
            &[(46336, 1.4), (MIB, 5.0), (vm_l3, 42.0), (960 * MIB, 120.0)],
        );
        let bare = machine(
            "metal",
            32 * MIB,
            &[
                (32 << 10, 1.3),
                (MIB, 4.5),
                (bare_l3, 12.0),
                (960 * MIB, 250.0),
            ],
        );
        // 128 MiB fits in neither measured LLC: the VM's faster memory, not its cache.
        assert!(at(&vm, &bare, 128 * MIB).is_none());
        // 45 MiB fits in the VM's 45 MiB L3 and not in the bare-metal 32 MiB one.
        let e = at(&bare, &vm, vm_l3).expect("45 MiB fits in B's L3 only");
        assert_eq!(e.claim, Claim::Explains, "{e:?}");
        assert!(e.because.contains("fits in B's"), "{e:?}");
        assert!(
            e.evidence[0].contains("B measured") && e.evidence[0].contains("reported 480 MiB"),
            "{e:?}"
        );
        // Two hosts that report the same 32 MiB: one holds it all, the other (a VM whose
        // host leaves it 14 MiB) does not: 22.6 MiB fits the first only.
        let shared = machine(
            "vm32",
            32 * MIB,
            &[
                (32 << 10, 1.3),
                (MIB, 4.5),
                (14 * MIB, 13.0),
                (960 * MIB, 180.0),
            ],
        );
        let size = 23726528; // 22.6 MiB, a point of the sweep
        let e = at(&shared, &bare, size).expect("22.6 MiB fits in the bare-metal L3");
        assert_eq!(e.claim, Claim::Explains, "{e:?}");
        // One host, one report: how much of its L3 a run got is the LLC share's.
        let mut again = shared.clone();
        again.host = Some("metal".into());
        assert!(at(&again, &bare, size).is_none());
    }

    #[test]
    fn llc_not_shared_contributes_to_a_colocated_pair_only_when_it_differs() {
        let a = ctx_run("a", 0.0, 52000.0, Some(4700.0), Some(51000.0));
        let mut b = ctx_run("b", 1.0, 4800.0, Some(4750.0), Some(51500.0));
        assert!(judged_ctx(&a, &b, explain).is_none(), "same topology");
        b.env.findings.push(crate::finding::Finding::new(
            "llc-not-shared",
            crate::finding::Severity::Warning,
            "no LLC spans two cores",
            vec![],
        ));
        let e = judged_ctx(&a, &b, explain).unwrap();
        assert_eq!(e.claim, Claim::Contributes);
        assert!(e.because.starts_with("B's CPUs share no"), "{}", e.because);
    }
}
