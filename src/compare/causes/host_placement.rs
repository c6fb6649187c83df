//! The host's placement of the virtual CPUs as a cause: a hypervisor may keep a guest's two
//! vCPUs on SMT siblings of one core or place them on different cores, and that changes
//! what passing a cache line (or waking a task) between them costs several times over. Each
//! run reads a pair canary before its rounds (`cpu_speed.pair_canaries`: the one-way
//! cache-line latency between the first two CPUs of a pinned case); when both runs hold
//! readings for the same pair and their typical readings (medians) differ by at least
//! `PAIR_RATIO`, the host placed that pair differently in the two runs.
//!
//! For a row pinned to both CPUs of that pair: c2c between exactly that pair measures what
//! the canary measures, so the canaries' ratio is its prediction (Explains within `MATCH`);
//! a ctx ping-pong across them wakes its partner over the same distance and moves the same
//! way (further apart: slower), so it Contributes when it moved that way and is RuledOut
//! when it moved the other; a memory bandwidth of two or more threads on them moves the
//! other way (further apart, each thread has a core of its own: its own L1 and L2 and the
//! misses they keep in flight; on one core's siblings they share them — on 2026-11-27 a run
//! the host kept apart, its canary 5x the others', read every two-thread bandwidth row
//! 1.4-1.6x higher), so it Contributes when it moved that way and is RuledOut when it moved
//! the other; any other row on both CPUs: NotMeasured. Silent for rows on one CPU, unpinned
//! rows, rows on CPUs the canaries did not sample, and runs whose typicals are alike.

use crate::bench::nature::{Nature, Tasks};
use crate::compare::causes::explain::{Claim, Explanation, RowCtx};
use crate::result::speed::PAIR_RATIO;
use crate::result::RunDocument;

/// This cause, as the JSON names it.
pub const HOST_PLACEMENT: &str = "host-placement";

/// A run's typical pair canary reading for one pair: median ns, readings.
fn typical(doc: &RunDocument, cpus: [u32; 2]) -> Option<(f64, usize)> {
    doc.cpu_speed.as_ref()?.pair_typical(cpus)
}

/// The pairs run `doc` read pair canaries for, in the order first read.
fn pairs(doc: &RunDocument) -> Vec<[u32; 2]> {
    let mut out: Vec<[u32; 2]> = vec![];
    for p in doc.cpu_speed.iter().flat_map(|s| &s.pair_canaries) {
        if !out.contains(&p.cpus) {
            out.push(p.cpus);
        }
    }
    out
}

/// Whether the row's figure is the time of passing something between its CPUs, which the
/// distance between them sets: a pair's cache line (c2c) or wake-up (ctx pinned across
/// CPUs), as its benchmark declares it (`bench::nature::Tasks::Pair`).
fn crosses(n: &Nature) -> bool {
    n.tasks == Tasks::Pair
}

/// Whether the row is a memory bandwidth of two or more threads, which the distance between
/// its CPUs moves the other way: further apart, each thread has a core of its own
/// (`bench::nature::Tasks::Threads`: memory.bandwidth with `threads` of 2 or more, and
/// memory.numa's read bandwidth, a thread on each CPU it is pinned to, the pair as
/// `explain` checks).
fn shares_a_core(n: &Nature) -> bool {
    matches!(n.tasks, Tasks::Threads(t) if t >= 2)
}

pub fn explain(c: &RowCtx) -> Option<Explanation> {
    let cpus = c.ra.pinned_cpus();
    if cpus.len() < 2 || c.rb.pinned_cpus() != cpus {
        return None;
    }
    let pair = pairs(c.a)
        .into_iter()
        .find(|p| p.iter().all(|x| cpus.contains(x)))?;
    let ((ta, na), (tb, nb)) = (typical(c.a, pair)?, typical(c.b, pair)?);
    let canaries = tb / ta;
    if canaries.ln().abs() < PAIR_RATIO.ln() {
        return None;
    }
    let how = if canaries > 1.0 {
        "apart"
    } else {
        "closer together"
    };
    // One host placed the vCPUs anew; two hosts' pairs differ as their machines do.
    let placed = if c.one_host().is_some() {
        format!("the host placed B's CPUs {} and {} {how}", pair[0], pair[1])
    } else {
        let than = if canaries > 1.0 {
            "further apart"
        } else {
            "closer together"
        };
        format!(
            "B's CPUs {} and {} sit {than} than A's (two hosts)",
            pair[0], pair[1]
        )
    };
    let because = format!(
        "{placed}: a cache line took {tb:.0} ns between them (typical of {nb} readings) in B's run, {ta:.0} ns in A's"
    );
    let evidence = [
        format!(
            "A: pair canary CPU {},{}: median {ta:.1} ns one-way over {na} readings",
            pair[0], pair[1]
        ),
        format!(
            "B: pair canary CPU {},{}: median {tb:.1} ns one-way over {nb} readings, B/A {canaries:.2}",
            pair[0], pair[1]
        ),
    ];
    let nature = crate::bench::nature::of(c.ra);
    let e = if nature.pair_canary && cpus == pair {
        // The row measures what the canary measures: the canaries' ratio is its prediction.
        let predicted = if c.ra.lower_is_better {
            canaries
        } else {
            1.0 / canaries
        };
        Explanation::new(HOST_PLACEMENT, Claim::Contributes, because).predict(predicted, c.ratio())
    } else if crosses(&nature) || shares_a_core(&nature) {
        // Further apart: a cache line or a wake-up between them takes longer, and a
        // bandwidth of several threads gains a core per thread.
        let apart = if canaries > 1.0 { "B" } else { "A" };
        let closer = if canaries > 1.0 { "A" } else { "B" };
        let slower = if crosses(&nature) { apart } else { closer };
        let claim = if c.worse_side() == slower {
            Claim::Contributes
        } else {
            Claim::RuledOut
        };
        let mut e = Explanation::new(HOST_PLACEMENT, claim, because);
        if claim == Claim::RuledOut {
            e.evidence.push(format!(
                "it makes {slower} worse on its CPUs, and {} was",
                c.worse_side()
            ));
        }
        e
    } else {
        Explanation::new(
            HOST_PLACEMENT,
            Claim::NotMeasured,
            format!("{because}; what that does to this row is not measured"),
        )
    };
    Some(Explanation {
        evidence: [e.evidence, evidence.to_vec()].concat(),
        ..e
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::causes::testing::judged_rows;
    use crate::compare::testing::{ctx_run, result, with_pair_canaries};
    use serde_json::json;

    /// A run of c2c between CPUs 0 and 1 (median `c2c` ns) and ctx on CPU 0,0 and across
    /// CPUs 0,1, with `n` pair canaries around `canary` ns.
    fn run(id: &str, c2c: f64, ctx_apart: f64, canary: Option<f64>) -> RunDocument {
        let mut doc = ctx_run(id, 0.0, 50.0, Some(10.0), Some(ctx_apart));
        doc.results.push(result(
            "c2c.cacheline@1",
            "same-llc",
            Some(vec![0, 1]),
            json!({"cpu_a": 0, "cpu_b": 1, "pairs": "all"}),
            c2c,
            true,
        ));
        match canary {
            Some(ns) => with_pair_canaries(doc, [0, 1], ns, 40),
            None => doc,
        }
    }

    fn row(a: &RunDocument, b: &RunDocument, label: &str) -> Option<Explanation> {
        judged_rows(a, b, explain)
            .into_iter()
            .find(|(l, _)| l.contains(label))
            .unwrap_or_else(|| panic!("no row {label}"))
            .1
    }

    #[test]
    fn cpus_placed_apart_explain_a_slower_cache_line_and_a_slower_wake_up() {
        let a = run("a", 23.0, 20.0, Some(23.0));
        let b = run("b", 118.0, 26.0, Some(119.0));
        let e = row(&a, &b, "c2c").expect("the placement explains c2c");
        assert_eq!(e.claim, Claim::Explains, "{e:?}");
        assert!(
            e.because.starts_with("the host placed B's CPUs 0 and 1 apart: a cache line took 119 ns between them (typical of 40 readings) in B's run, 23 ns in A's"),
            "{}",
            e.because
        );
        assert!((e.predicted.unwrap() - 119.0 / 23.0).abs() < 0.1, "{e:?}");
        let w = row(&a, &b, "same-llc").expect("a wake-up across the CPUs");
        assert_eq!(w.claim, Claim::Contributes);
        // A row on one CPU is not the placement's to explain.
        assert!(row(&a, &b, "same-cpu").is_none());
        assert!(row(&a, &b, "[os]").is_none());
        // A c2c row that moved 1.5x where the canaries moved 5x is only partly explained.
        let b = run("b", 35.0, 26.0, Some(119.0));
        assert_eq!(row(&a, &b, "c2c").unwrap().claim, Claim::Partly);
        // A wake-up across the CPUs that got faster while they moved apart: not this.
        let b = run("b", 118.0, 15.0, Some(119.0));
        assert_eq!(row(&a, &b, "same-llc").unwrap().claim, Claim::RuledOut);
    }

    #[test]
    fn two_hosts_pairs_are_told_apart_without_saying_one_host_moved_them() {
        let a = run("a", 23.0, 20.0, Some(23.0));
        let mut b = run("b", 118.0, 26.0, Some(119.0));
        b.host = Some("another-host".into());
        let e = row(&a, &b, "c2c").expect("the pairs' distance still predicts c2c");
        assert_eq!(e.claim, Claim::Explains, "{e:?}");
        assert!(
            e.because.starts_with(
                "B's CPUs 0 and 1 sit further apart than A's (two hosts): a cache line took 119 ns"
            ),
            "{}",
            e.because
        );
        assert!(!e.because.contains("the host placed"), "{}", e.because);
    }

    #[test]
    fn cpus_placed_closer_explain_a_faster_cache_line() {
        let a = run("a", 118.0, 26.0, Some(119.0));
        let b = run("b", 23.0, 20.0, Some(23.0));
        let e = row(&a, &b, "c2c").unwrap();
        assert_eq!(e.claim, Claim::Explains, "{e:?}");
        assert!(e.because.contains("closer together"), "{}", e.because);
        assert_eq!(row(&a, &b, "same-llc").unwrap().claim, Claim::Contributes);
    }

    #[test]
    fn cpus_placed_apart_contribute_to_a_higher_bandwidth_of_two_threads() {
        // The 18:06 A/A of 2026-11-27: the run the host kept apart read its two-thread
        // bandwidth rows 1.4-1.6x higher; one thread on one CPU is not the placement's.
        let with_bw = |id: &str, c2c: f64, canary: f64, two: f64, one: f64| {
            let mut doc = run(id, c2c, 20.0, None);
            for (threads, cpus, mb) in [(2, vec![0, 1], two), (1, vec![0], one)] {
                doc.results.push(result(
                    "memory.bandwidth@1",
                    "compact",
                    Some(cpus),
                    json!({"kernel": "copy", "stores": "regular", "threads": threads, "array_bytes": 128u64 << 20}),
                    mb,
                    false,
                ));
            }
            with_pair_canaries(doc, [0, 1], canary, 40)
        };
        let a = with_bw("a", 23.0, 23.0, 30000.0, 20000.0);
        let b = with_bw("b", 118.0, 119.0, 45000.0, 20500.0);
        let e = row(&a, &b, "threads=2").expect("two threads on the pair");
        assert_eq!(e.claim, Claim::Contributes, "{e:?}");
        assert!(row(&a, &b, "threads=1").is_none());
        // The NUMA read bandwidth, a thread on each CPU of the node (the 20:49 A/A: 1.35-1.48x
        // in the two runs kept apart), likewise; its latency, on one CPU, is not.
        let numa = |mut doc: RunDocument, mb: f64| {
            for (metric, cpus, v) in [
                ("read-bandwidth", vec![0, 1], mb),
                ("latency", vec![0], 180.0),
            ] {
                doc.results.push(result(
                    "memory.numa@1",
                    "node0",
                    Some(cpus),
                    json!({"cpu_node": 0, "mem_node": 0, "metric": metric, "size_bytes": 128u64 << 20}),
                    v,
                    metric == "latency",
                ));
            }
            doc
        };
        let (na, nb) = (numa(a.clone(), 20000.0), numa(b.clone(), 28000.0));
        let e = row(&na, &nb, "metric=read-bandwidth").expect("a thread on each CPU of the pair");
        assert_eq!(e.claim, Claim::Contributes, "{e:?}");
        assert!(row(&na, &nb, "metric=latency").is_none());
        // The other way round: closer together, lower.
        assert_eq!(row(&b, &a, "threads=2").unwrap().claim, Claim::Contributes);
        // Apart and lower: not this.
        let lower = with_bw("b", 118.0, 119.0, 24000.0, 20500.0);
        let e = row(&a, &lower, "threads=2").unwrap();
        assert_eq!(e.claim, Claim::RuledOut, "{e:?}");
        assert!(
            e.evidence
                .iter()
                .any(|x| x == "it makes A worse on its CPUs, and B was"),
            "{e:?}"
        );
    }

    #[test]
    fn alike_or_missing_canaries_explain_nothing() {
        // Typicals 10% apart: the same placement; the row moved for another reason.
        let a = run("a", 23.0, 20.0, Some(23.0));
        let b = run("b", 118.0, 26.0, Some(25.3));
        assert!(row(&a, &b, "c2c").is_none());
        assert!(row(&a, &b, "same-llc").is_none());
        // A run without pair canaries (an earlier version's) tells nothing.
        let b = run("b", 118.0, 26.0, None);
        assert!(row(&a, &b, "c2c").is_none());
        // Canaries of another pair say nothing of this one.
        let other = |id, ns| {
            let doc = ctx_run(id, 0.0, 50.0, Some(10.0), Some(20.0));
            with_pair_canaries(doc, [2, 3], ns, 40)
        };
        assert!(row(&other("a", 23.0), &other("b", 119.0), "same-llc").is_none());
    }
}
