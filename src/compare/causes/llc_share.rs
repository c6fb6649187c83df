//! The host's share of the last-level cache as a cause of a memory-latency row's move. On a
//! VM the host decides, per run, how much of the physical L3 the guest effectively gets
//! (other tenants use it too): within one run the rounds agree, so the rows have a small σ,
//! but between runs the cliff from the LLC plateau to memory moves. Each run's effective
//! LLC per page size is measured from its own latency curve
//! (`measure::hierarchy::effective_llc`); when the two differ by [`DIFFER`] or more, the
//! run with the smaller one is predicted slower from the smaller / [`ZONE`] up to the
//! largest size measured (more of the chain misses the L3). A row in the cliff (the smaller
//! / ZONE to the larger × ZONE) that moved that way is explained; a larger one that did
//! contributes (no figure); a row that moved the other way rules the cause out. A row on
//! the LLC plateau below that zone contributes when the run with less of the L3 is slower
//! (other tenants evict part of a chain that fits; a fraction of a percent of loads going
//! to memory costs several percent) and rules the cause out when it is faster. Rows below
//! the LLC plateau, other benchmarks and alike LLCs: nothing to say. A measured cause, not
//! a verdict: the row stays called.

use crate::bench::memory::latency::{effective_llc_of, LatencyParams};
use crate::compare::causes::explain::{Claim, Explanation, RowCtx};
use crate::measure::hierarchy::EffectiveLlc;
use crate::units::bytes;

/// This cause, as the JSON names it.
pub const LLC_SHARE: &str = "llc-share";

/// Effective LLCs at least this factor apart differ. Five runs back to back on one VM
/// (2026-11-27) measured 13.5, 13.9 and 14.4 MiB in three (within 6.3%) and 9.7 and
/// 18.0 MiB in the other two (25% or more from every other run).
pub const DIFFER: f64 = 1.10;

/// The cliff from the LLC plateau to memory (`hierarchy::CLIFF` either side of the
/// effective LLC): the smaller effective LLC over it is the smallest size the cause acts on.
pub use crate::measure::hierarchy::CLIFF as ZONE;

/// How a page size is named in the evidence.
pub fn pages_words(pages: &str) -> &str {
    match pages {
        "4k" => "4 KiB pages",
        "thp" => "huge pages",
        other => other,
    }
}

/// Where a side's effective LLC was read: "12 ns and 176 ns, between 8 MiB and 11.3 MiB".
fn read_at(e: &EffectiveLlc) -> String {
    format!(
        "{:.0} ns and {:.0} ns, crossed between {} and {}",
        e.plateau_ns,
        e.far_ns,
        bytes(e.between[0]),
        bytes(e.between[1])
    )
}

/// What the two runs' effective LLCs (of the row's page size) say about a latency row.
pub fn explain(c: &RowCtx) -> Option<Explanation> {
    // The host's share of its L3 between two of its runs; between two hosts the caches
    // themselves differ (the topology cause holds their measured sizes against each other).
    let chain = matches!(
        crate::bench::nature::of(c.ra).memory,
        crate::bench::nature::Memory::Chain { .. }
    );
    if !chain || c.one_host().is_none() {
        return None;
    }
    let p = c.ra.params.read::<LatencyParams>()?;
    let ea = effective_llc_of(&c.a.results, &p.pages)?;
    let eb = effective_llc_of(&c.b.results, &p.pages)?;
    let (less, small, more, large) = if eb.bytes < ea.bytes {
        ("B", &eb, "A", &ea)
    } else {
        ("A", &ea, "B", &eb)
    };
    if (large.bytes as f64) < small.bytes as f64 * DIFFER {
        return None;
    }
    let size = p.size_bytes as f64;
    let (from, cliff_end) = (small.bytes as f64 / ZONE, large.bytes as f64 * ZONE);
    let gave = format!(
        "the host gave {less}'s run less of the last-level cache (effective {} vs {})",
        bytes(small.bytes),
        bytes(large.bytes)
    );
    if size < from {
        return on_plateau(c, &p, (less, small), (more, large), &gave);
    }
    let in_cliff = size <= cliff_end;
    let (claim, because) = if c.worse_side() != less {
        (
            Claim::RuledOut,
            format!("{gave}, which makes {less} slower here, not {more}"),
        )
    } else if in_cliff {
        (Claim::Explains, gave)
    } else {
        (Claim::Contributes, gave)
    };
    let zone = format!(
        "the smaller LLC slows chains from {} (its size / {ZONE}) up to the largest size measured; the cliff lies between {} and {} (the larger × {ZONE}): this row's {} is {}",
        bytes(from as u64),
        bytes(from as u64),
        bytes(cliff_end as u64),
        bytes(p.size_bytes),
        if in_cliff { "in it" } else { "past it, where more of the chain misses the L3" }
    );
    Some(
        Explanation::new(LLC_SHARE, claim, because)
            .evidence(format!(
                "effective LLC ({}) {} in {less}'s run, {} in {more}'s: where each run's latency curve crosses the geometric mean of its LLC plateau and memory ({less}: {}; {more}: {})",
                pages_words(&p.pages),
                bytes(small.bytes),
                bytes(large.bytes),
                read_at(small),
                read_at(large)
            ))
            .evidence(zone),
    )
}

/// A row on the smaller run's LLC plateau, below the cliff (from the plateau's start to the
/// smaller LLC / [`ZONE`]): the other tenants that took the L3 from that run also evict
/// part of a chain that fits in its share, and every load that goes to memory costs the
/// plateau's latency many times over (0.6% of loads at 190 ns add 8% to a 13 ns plateau).
/// The direction is predicted, not the size: the run with less of the L3 slower
/// contributes; faster rules the cause out. Rows below the plateau (the L2 and nearer):
/// nothing to say.
fn on_plateau(
    c: &RowCtx,
    p: &LatencyParams,
    (less, small): (&str, &EffectiveLlc),
    (more, large): (&str, &EffectiveLlc),
    gave: &str,
) -> Option<Explanation> {
    if p.size_bytes < small.plateau_from.max(large.plateau_from) {
        return None;
    }
    let worse = c.worse_side();
    let slower = crate::compare::stats::verdict::speedup(c.ratio(), c.ra.lower_is_better).recip();
    let (claim, because) = if worse != less {
        (
            Claim::RuledOut,
            format!("{gave}, which makes {less} slower on its LLC plateau, not {more}"),
        )
    } else {
        (Claim::Contributes, gave.to_string())
    };
    // The share of loads that would have to miss to memory for the row's ratio, from the
    // smaller run's plateau and memory latencies.
    let misses = (slower - 1.0).max(0.0) * small.plateau_ns / (small.far_ns - small.plateau_ns);
    let mut e = Explanation::new(LLC_SHARE, claim, because).evidence(format!(
        "effective LLC ({}) {} in {less}'s run, {} in {more}'s (the curves cross the geometric mean of their LLC plateau and memory between {} and {}, and {} and {})",
        pages_words(&p.pages),
        bytes(small.bytes),
        bytes(large.bytes),
        bytes(small.between[0]),
        bytes(small.between[1]),
        bytes(large.between[0]),
        bytes(large.between[1])
    ));
    e = e.evidence(format!(
        "this row's {} lies on the LLC plateau (from {}), below the cliff (from {}): other tenants' use of the L3 evicts part of a chain that fits",
        bytes(p.size_bytes),
        bytes(small.plateau_from.max(large.plateau_from)),
        bytes((small.bytes as f64 / ZONE) as u64)
    ));
    if claim == Claim::Contributes {
        e = e.evidence(format!(
            "{worse}'s {:.1}% more time per load is as if {:.2}% of its loads went to memory ({:.0} ns plateau, {:.0} ns memory)",
            (slower - 1.0) * 100.0,
            misses * 100.0,
            small.plateau_ns,
            small.far_ns
        ));
    }
    Some(e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::causes::testing::judged_rows;
    use crate::compare::testing::{in_rounds, latency_curves_run, result};
    use crate::measure::hierarchy::tests::{aa_curve, aa_sizes, AA_4K, AA_THP};
    use crate::result::RunDocument;

    /// Run `n` (1-5) of 2026-11-27: its 4 KiB curve, and its huge-page curve when the figures
    /// kept one (runs 1, 3, 5), plus a clock-read row.
    fn run(n: usize) -> RunDocument {
        let small = aa_curve(&AA_4K[n - 1]);
        let huge = match n {
            1 => Some(aa_curve(&AA_THP[0])),
            3 => Some(aa_curve(&AA_THP[1])),
            5 => Some(aa_curve(&AA_THP[2])),
            _ => None,
        };
        let mut curves: Vec<(&str, &[(u64, f64)])> = vec![("4k", &small)];
        if let Some(h) = &huge {
            curves.push(("thp", h));
        }
        let mut doc = latency_curves_run(&format!("run{n}"), &curves);
        doc.results.push(result(
            "timers.clock-read@1",
            "os",
            None,
            serde_json::json!({"clock": "monotonic", "path": "vdso"}),
            20.0 + n as f64 * 5.0,
            true,
        ));
        doc
    }

    /// What the cause says about the row of `pages` at the sweep's size index `i` (of
    /// `aa_sizes`: 4 is 11.31 MiB, 11 is 128 MiB).
    fn at(a: &RunDocument, b: &RunDocument, pages: &str, i: usize) -> Option<Explanation> {
        let size = aa_sizes()[i];
        let want = format!("size_bytes={size}");
        judged_rows(a, b, explain)
            .into_iter()
            .find(|(l, _)| l.contains(&want) && l.contains(&format!("pages={pages}")))
            .unwrap_or_else(|| panic!("no row {pages} {size}"))
            .1
    }

    #[test]
    fn a_run_given_less_of_the_l3_explains_its_slower_cliff() {
        // Run 3 (B) against run 1 (A), 11.31 MiB with 4 KiB pages: 91.9 ns against 15.5.
        let e = at(&run(1), &run(3), "4k", 4).expect("the LLC share explains the cliff");
        assert_eq!(e.claim, Claim::Explains, "{e:?}");
        assert_eq!(
            e.because,
            "the host gave B's run less of the last-level cache (effective 9.7 MiB vs 13.9 MiB)"
        );
        assert!(
            e.evidence[0].starts_with("effective LLC (4 KiB pages) 9.7 MiB in B's run, 13.9 MiB in A's: where each run's latency curve crosses the geometric mean of its LLC plateau and memory (B: 12 ns and 176 ns, crossed between 8 MiB and 11.3 MiB; A: 13 ns and 171 ns"),
            "{:?}",
            e.evidence
        );
        assert!(
            e.evidence[1].ends_with("this row's 11.3 MiB is in it"),
            "{:?}",
            e.evidence
        );
        // Either way round: run 1 as B is faster, A (run 3) had less.
        let e = at(&run(3), &run(1), "4k", 4).unwrap();
        assert_eq!(e.claim, Claim::Explains, "{e:?}");
        assert!(e.because.starts_with("the host gave A's run less"), "{e:?}");
        // 8 MiB lies in the cliff too (9.7 / 1.5 = 6.4 MiB): 21.0 ns against 13.8.
        assert_eq!(
            at(&run(1), &run(3), "4k", 3).unwrap().claim,
            Claim::Explains
        );
    }

    #[test]
    fn past_the_cliff_a_smaller_llc_contributes_and_a_move_against_it_rules_it_out() {
        // 128 MiB: run 1 (13.9 MiB effective) 171.4 ns, run 5 (18.0 MiB) 161.1 ns.
        let e = at(&run(5), &run(1), "4k", 11).unwrap();
        assert_eq!(e.claim, Claim::Contributes, "{e:?}");
        assert!(
            e.evidence[1].ends_with("past it, where more of the chain misses the L3"),
            "{e:?}"
        );
        // Huge pages at 90.5 MiB: run 3 had the smaller LLC (12.6 vs 15.8 MiB) and was
        // faster (152.1 ns vs 153.3): not the LLC share.
        let e = at(&run(1), &run(3), "thp", 10).unwrap();
        assert_eq!(e.claim, Claim::RuledOut, "{e:?}");
        assert!(
            e.because.ends_with("which makes B slower here, not A"),
            "{e:?}"
        );
        // In the cliff, the run with the larger LLC slower: ruled out as well.
        let mut odd = run(5);
        odd.results[5].stats.median = 120.0; // run 5 at 16 MiB, 4 KiB pages
        let e = at(&run(3), &odd, "4k", 5).unwrap();
        assert_eq!(e.claim, Claim::RuledOut, "{e:?}");
    }

    #[test]
    fn alike_llcs_small_sizes_other_rows_and_curves_in_the_caches_say_nothing() {
        // Runs 1 and 2 (13.9 and 13.5 MiB), runs 1 and 4 (13.9 and 14.4 MiB): alike, though
        // 11.31 MiB moved 1.4x between runs 1 and 2.
        assert!(at(&run(1), &run(2), "4k", 4).is_none());
        assert!(at(&run(1), &run(4), "4k", 5).is_none());
        // A clock read.
        let rows = judged_rows(&run(1), &run(3), explain);
        let clock = rows.iter().find(|(l, _)| l.contains("clock-read")).unwrap();
        assert!(clock.1.is_none(), "{clock:?}");
        // A curve that never reaches memory (run 5 cut at 16 MiB: 32 ns) gives no figure.
        let mut short = run(5);
        let big = aa_sizes()[5];
        short
            .results
            .retain(|r| r.params.size_bytes().is_none_or(|s| s <= big));
        assert!(at(&run(3), &short, "4k", 4).is_none());
        assert!(at(&short, &run(3), "4k", 5).is_none());
    }

    #[test]
    fn two_hosts_are_not_one_hosts_share_of_its_cache() {
        // Runs 1 and 3 as two machines: their caches differ, no host gave either less.
        let mut other = run(3);
        other.host = Some("db1".into());
        assert!(at(&run(1), &other, "4k", 4).is_none());
        // The same hostname named by the document or, in an earlier version's, by its probe.
        let (mut a, mut b) = (run(1), run(3));
        a.host = Some("vm".into());
        b.host = None;
        assert_eq!(b.env.hostname.as_deref(), Some("vm"));
        assert_eq!(at(&a, &b, "4k", 4).unwrap().claim, Claim::Explains);
        // Neither names a host: nothing says it is one.
        a.host = None;
        a.env.hostname = None;
        assert!(at(&a, &b, "4k", 4).is_none());
    }

    /// Run `n`'s 4 KiB curve behind an L2 plateau (0.5 to 1 MiB at 4.5 ns): the LLC plateau
    /// then starts at the curve's 2.83 MiB.
    fn behind_l2(n: usize, at_size: Option<(usize, f64)>) -> RunDocument {
        let mut ns = AA_4K[n - 1];
        if let Some((i, v)) = at_size {
            ns[i] = v;
        }
        let mut curve: Vec<(u64, f64)> = [512 << 10, 724 << 10, 1 << 20]
            .iter()
            .map(|s| (*s, 4.5))
            .collect();
        curve.extend(aa_curve(&ns));
        latency_curves_run(&format!("run{n}"), &[("4k", &curve)])
    }

    #[test]
    fn on_the_llc_plateau_a_smaller_share_contributes_and_below_it_nothing_is_said() {
        // 5.66 MiB lies below run 3's 9.7 MiB / 1.5 but on its LLC plateau (from 2.83 MiB):
        // run 3 took 13.6 ns there, run 1 13.3.
        let size = |i: usize| aa_sizes()[i];
        let find = |a: &RunDocument, b: &RunDocument, size: u64| {
            judged_rows(a, b, explain)
                .into_iter()
                .find(|(l, _)| l.contains(&format!("size_bytes={size}")))
                .unwrap()
                .1
        };
        let e = find(&behind_l2(1, None), &behind_l2(3, None), size(2)).unwrap();
        assert_eq!(e.claim, Claim::Contributes, "{e:?}");
        assert!(e.because.starts_with("the host gave B's run less"), "{e:?}");
        assert!(
            e.evidence[1].starts_with("this row's 5.7 MiB lies on the LLC plateau (from 2.8 MiB)"),
            "{:?}",
            e.evidence
        );
        // 13.6 / 13.3: 2.3% more, as if 0.16-0.18% of the loads went to memory.
        let misses = &e.evidence[2];
        assert!(
            misses.starts_with("B's 2.3% more time per load is as if 0.1"),
            "{misses}"
        );
        // The run with more of the L3 slower on the plateau: ruled out.
        let e = find(&behind_l2(1, Some((2, 14.5))), &behind_l2(3, None), size(2)).unwrap();
        assert_eq!(e.claim, Claim::RuledOut, "{e:?}");
        assert!(
            e.because
                .ends_with("which makes B slower on its LLC plateau, not A"),
            "{e:?}"
        );
        assert_eq!(e.evidence.len(), 2, "{e:?}");
        // The L2 (1 MiB) lies below the LLC plateau: nothing to say.
        assert!(find(&behind_l2(1, None), &behind_l2(3, None), 1 << 20).is_none());
        // Alike LLCs say nothing on the plateau either (runs 1 and 2).
        assert!(find(&behind_l2(1, None), &behind_l2(2, None), size(2)).is_none());
    }

    #[test]
    fn compare_keeps_the_row_called_and_names_the_cause() {
        let c = crate::compare::compare(&in_rounds(run(1)), &in_rounds(run(3)));
        let size = format!("size_bytes={}", aa_sizes()[4]);
        let row = c
            .rows
            .iter()
            .find(|r| r.params.contains(&size) && r.params.contains("pages=4k"))
            .unwrap();
        assert_eq!(
            row.verdict,
            crate::compare::stats::verdict::Verdict::Worse,
            "{row:?}"
        );
        assert_eq!(
            row.status,
            crate::compare::causes::explain::Status::Explained,
            "{row:?}"
        );
        assert!(
            row.explanations.iter().any(|e| e.cause == LLC_SHARE),
            "{row:?}"
        );
    }
}
