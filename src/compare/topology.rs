//! Topology as the OS sees it, as a cause: last-level cache sharing (a machine whose LLC
//! spans no two cores, `llc-not-shared`, keeps a ping-pong on one CPU), SMT, CPU counts
//! and kinds, NUMA nodes, and the last-level cache size reported against the one a
//! latency sweep measured. A latency row whose working set fits one run's LLC and not the
//! other's is explained by it; the other facts contribute to the rows they act on.

use super::explain::{Claim, Explanation, RowCtx, TOPOLOGY};
use crate::bench::memory::latency::LatencyParams;
use crate::probe::ProbeDoc;
use crate::result::RunDocument;
use crate::units::bytes;

fn llc_not_shared(env: &ProbeDoc) -> bool {
    env.findings.iter().any(|f| f.id == "llc-not-shared")
}

/// The last-level cache size the probe reports (the largest instance at the LLC level).
pub fn llc_bytes(env: &ProbeDoc) -> Option<u64> {
    let level = env.topology.llc_level?;
    env.topology
        .caches
        .iter()
        .filter(|c| c.level == level && c.kind != "Instruction")
        .filter_map(|c| c.size_bytes)
        .max()
}

/// The LLC size a latency sweep of the run measured, when its `llc-size-mismatch` finding
/// says the reported one is wrong.
fn llc_mismatch(doc: &RunDocument) -> Option<String> {
    doc.results
        .iter()
        .flat_map(|r| &r.findings)
        .find(|f| f.id == "llc-size-mismatch")
        .map(|f| f.message.clone())
}

/// One topology fact of both runs, as text, when it differs.
fn differs(what: &str, a: String, b: String) -> Option<String> {
    (a != b).then(|| format!("{what}: A {a}, B {b}"))
}

/// The topology facts that differ between the runs.
pub fn differences(a: &ProbeDoc, b: &ProbeDoc) -> Vec<String> {
    fn t(e: &ProbeDoc) -> &crate::probe::topology::Topology {
        &e.topology
    }
    let yes = |x: bool| if x { "yes" } else { "no" }.to_string();
    [
        differs(
            "LLC not shared between cores (llc-not-shared)",
            yes(llc_not_shared(a)),
            yes(llc_not_shared(b)),
        ),
        differs(
            "threads per core (SMT)",
            t(a).threads_per_core.to_string(),
            t(b).threads_per_core.to_string(),
        ),
        differs(
            "packages / cores / logical CPUs",
            format!("{}/{}/{}", t(a).packages, t(a).cores, t(a).threads),
            format!("{}/{}/{}", t(b).packages, t(b).cores, t(b).threads),
        ),
        differs(
            "CPU kinds",
            t(a).cpu_kinds.len().max(1).to_string(),
            t(b).cpu_kinds.len().max(1).to_string(),
        ),
        differs(
            "NUMA nodes",
            a.numa.nodes.len().to_string(),
            b.numa.nodes.len().to_string(),
        ),
        differs(
            "reported LLC size",
            llc_bytes(a).map(bytes).unwrap_or_else(|| "unknown".into()),
            llc_bytes(b).map(bytes).unwrap_or_else(|| "unknown".into()),
        ),
    ]
    .into_iter()
    .flatten()
    .collect()
}

pub fn explain(c: &RowCtx) -> Option<Explanation> {
    if c.ra.base_id() == "memory.latency" {
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
        if na != nb && (fb - fa).abs() >= super::placement::MIN_SHIFT && (nb == (fb > fa)) {
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
    let parallel = super::capacity::tasks(c.ra) > 1 || super::capacity::tasks(c.rb) > 1;
    if parallel {
        let d: Vec<String> = differences(ea, eb)
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

/// A latency row whose working set fits in one run's LLC and not in the other's.
fn latency_fits(c: &RowCtx) -> Option<Explanation> {
    let p: LatencyParams = c.ra.params.read()?;
    let (la, lb) = (llc_bytes(&c.a.env)?, llc_bytes(&c.b.env)?);
    let (fits_a, fits_b) = (p.size_bytes <= la, p.size_bytes <= lb);
    if fits_a == fits_b {
        return None;
    }
    let fits = if fits_b { "B" } else { "A" };
    // The side it fits on must be the faster one.
    let faster = if c.worse_side() == "A" { "B" } else { "A" };
    if fits != faster {
        return None;
    }
    let mut e = Explanation::new(
        TOPOLOGY,
        Claim::Explains,
        format!(
            "its {} working set fits in {fits}'s last-level cache ({}) and not in the other's ({})",
            bytes(p.size_bytes),
            bytes(if fits_b { lb } else { la }),
            bytes(if fits_b { la } else { lb })
        ),
    )
    .evidence(format!("reported LLC: A {}, B {}", bytes(la), bytes(lb)));
    for (side, d) in [("A", c.a), ("B", c.b)] {
        if let Some(m) = llc_mismatch(d) {
            e.evidence.push(format!("{side}: llc-size-mismatch: {m}"));
        }
    }
    Some(e)
}

#[cfg(test)]
mod tests {
    use super::super::testing::{ctx_run, judged_ctx, judged_rows, latency_run};
    use super::*;

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

    #[test]
    fn llc_not_shared_contributes_to_a_colocated_pair_only_when_it_differs() {
        let a = ctx_run("a", 0.0, 52000.0, Some(4700.0), Some(51000.0));
        let mut b = ctx_run("b", 1.0, 4800.0, Some(4750.0), Some(51500.0));
        assert!(judged_ctx(&a, &b, explain).is_none(), "same topology");
        b.env.findings.push(crate::findings::Finding::new(
            "llc-not-shared",
            crate::findings::Severity::Warning,
            "no LLC spans two cores",
            vec![],
        ));
        let e = judged_ctx(&a, &b, explain).unwrap();
        assert_eq!(e.claim, Claim::Contributes);
        assert!(e.because.starts_with("B's CPUs share no"), "{}", e.because);
    }
}
