//! The host's share of the last-level cache as a cause of a memory-latency row's move. On a
//! VM the host decides, per run, how much of the physical L3 the guest effectively gets
//! (other tenants use it too): within one run the rounds agree, so the rows have a small σ,
//! but between runs the cliff from the LLC plateau to memory moves. Each run's effective
//! LLC per page size is measured from its own latency curve
//! (`measure::hierarchy::effective_llc`); when the two differ by [`DIFFER`] or more, the
//! run with the smaller one is predicted slower from the smaller / [`ZONE`] up to the
//! largest size measured (more of the chain misses the L3). A row in the cliff (the smaller
//! / ZONE to the larger × ZONE) that moved that way is explained; a larger one that did
//! contributes (no figure); a row that moved the other way rules the cause out. Smaller
//! rows, other benchmarks and alike LLCs: nothing to say. A measured cause, not a verdict:
//! the row stays called.

use super::explain::{Claim, Explanation, RowCtx, LLC_SHARE};
use crate::bench::memory::latency::{effective_llc_of, LatencyParams};
use crate::measure::hierarchy::EffectiveLlc;
use crate::units::bytes;

/// Effective LLCs at least this factor apart differ. Five runs back to back on one VM
/// (2026-11-27) measured 13.5, 13.9 and 14.4 MiB in three (within 6.3%) and 9.7 and
/// 18.0 MiB in the other two (25% or more from every other run).
pub const DIFFER: f64 = 1.10;

/// The cliff from the LLC plateau to memory spans about this factor either side of the
/// effective LLC (a chain of 2/3 of it already misses in part; one of 1.5x still hits in
/// part): the smaller effective LLC over it is the smallest size the cause acts on.
pub const ZONE: f64 = 1.5;

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
    if c.ra.base_id() != "memory.latency" {
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
    if size < from {
        return None;
    }
    let gave = format!(
        "the host gave {less}'s run less of the last-level cache (effective {} vs {})",
        bytes(small.bytes),
        bytes(large.bytes)
    );
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

#[cfg(test)]
mod tests {
    use super::super::testing::{in_rounds, judged_rows, latency_curves_run, result};
    use super::*;
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
        // 5.66 MiB lies below run 3's 9.7 MiB / 1.5.
        assert!(at(&run(1), &run(3), "4k", 2).is_none());
        // A clock read.
        let rows = judged_rows(&run(1), &run(3), explain);
        let clock = rows.iter().find(|(l, _)| l.contains("clock-read")).unwrap();
        assert!(clock.1.is_none(), "{clock:?}");
        // A curve that never reaches memory (run 5 cut at 16 MiB: 32 ns) gives no figure.
        let mut short = run(5);
        let big = aa_sizes()[5];
        short.results.retain(|r| {
            r.params
                .get("size_bytes")
                .and_then(|v| v.as_u64())
                .is_none_or(|s| s <= big)
        });
        assert!(at(&run(3), &short, "4k", 4).is_none());
        assert!(at(&short, &run(3), "4k", 5).is_none());
    }

    #[test]
    fn compare_keeps_the_row_called_and_names_the_cause() {
        let c = super::super::compare(&in_rounds(run(1)), &in_rounds(run(3)));
        let size = format!("size_bytes={}", aa_sizes()[4]);
        let row = c
            .rows
            .iter()
            .find(|r| r.params.contains(&size) && r.params.contains("pages=4k"))
            .unwrap();
        assert_eq!(
            row.verdict,
            super::super::verdict::Verdict::Worse,
            "{row:?}"
        );
        assert_eq!(
            row.status,
            super::super::explain::Status::Explained,
            "{row:?}"
        );
        assert!(
            row.explanations.iter().any(|e| e.cause == LLC_SHARE),
            "{row:?}"
        );
    }
}
