//! The CPU share as a cause: a row's threads waiting for a CPU on this machine's own run
//! queues while its rounds ran, as the canaries before each round read it (`Round::waited`,
//! the schedstat run delay of a thread that wanted a CPU all along). It is what a cgroup
//! gets of a busy CPU against the tasks beside it: its weight (`cpu.shares`, `cpu.weight`,
//! `cpu.idle`) against busy neighbours. The hypervisor's steal is not in it (`steal`).
//!
//! Waiting acts on a figure as steal does: a batch timed on the monotonic clock holds the
//! time its thread sat on a run queue, so the side that waited more is slower by at most
//! exp(mean over its rounds of -k·ln(1 - share)); the verdicts follow `steal`'s (explained
//! within that bound, partly beyond it, ruled out the other way or when alike), and the
//! evidence adds each side's CPU weight where its document recorded one.

use crate::compare::causes::explain::{Explanation, RowCtx};
use crate::compare::causes::steal::{explain_by, Taker};
use crate::result::rounds::Round;

/// This cause, as the JSON names it.
pub const CPU_SHARE: &str = "cpu-share";

/// This machine's scheduler making the row's threads wait (`Round::waited`).
pub struct Waited;

impl Taker for Waited {
    fn cause(&self) -> &'static str {
        CPU_SHARE
    }
    fn figure(&self, r: &Round) -> Option<f64> {
        r.waited
    }
    fn took(&self, share: f64, side: &str) -> String {
        format!("{side}'s threads waited for a CPU {share:.0}% of the time")
    }
    fn average(&self, share: f64, _on: &str) -> String {
        format!("its threads waited for a CPU {share:.1}% of the time on average")
    }
    fn held(&self) -> &'static str {
        "waited"
    }
    fn more(&self) -> &'static str {
        "the side whose threads waited more"
    }
    fn setting(&self, c: &RowCtx) -> Vec<String> {
        [("A", c.a), ("B", c.b)]
            .iter()
            .map(
                |(side, d)| match d.env.cgroup.as_ref().and_then(|g| g.cpu_weight.as_ref()) {
                    Some(w) => {
                        format!("{side}: its cgroup's CPU weight {} ({})", w.words(), w.file)
                    }
                    None => format!("{side}: no CPU weight recorded"),
                },
            )
            .collect()
    }
}

pub fn explain(c: &RowCtx) -> Option<Explanation> {
    explain_by(&Waited, c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::causes::explain::Claim;
    use crate::compare::causes::testing::judged_rows;
    use crate::compare::testing::{stolen, timers_run};
    use crate::result::RunDocument;

    /// A timers run whose rounds' canaries waited `percents` of their time (no steal).
    fn waited(id: &str, median: f64, percents: &[f64]) -> RunDocument {
        let mut d = stolen(timers_run(id, median, None), &vec![0.0; percents.len()]);
        for r in &mut d.results[0].rounds.as_mut().unwrap().rounds {
            r.waited = Some(percents[r.seq]);
        }
        d
    }

    fn only(a: &RunDocument, b: &RunDocument) -> Option<Explanation> {
        judged_rows(a, b, explain).remove(0).1
    }

    fn weight(d: &mut RunDocument, shares: u64) {
        if let Some(g) = d.env.cgroup.as_mut() {
            g.cpu_weight = Some(crate::probe::cpu_weight::CpuWeight {
                file: "/sys/fs/cgroup/cpu/low/cpu.shares".into(),
                value: shares,
                default: 1024,
                idle: false,
            });
        }
    }

    #[test]
    fn a_row_slower_in_a_starved_cgroup_is_explained_by_its_cpu_share_with_the_weight() {
        let a = waited("a", 40.0, &[0.5, 1.0, 0.0, 0.5, 1.0]);
        let mut b = waited("b", 80.0, &[99.0, 98.0, 99.5, 99.0, 98.5]);
        weight(&mut b, 2);
        let e = only(&a, &b).expect("the waiting explains");
        assert_eq!(e.cause, CPU_SHARE);
        assert_eq!(e.claim, Claim::Explains, "{e:?}");
        assert_eq!(
            e.because,
            "B's threads waited for a CPU 99% of the time during this row and 1% of A's"
        );
        assert!(
            e.evidence.iter().any(|x| x.starts_with(
                "B: its threads waited for a CPU 98.8% of the time on average over the 5 rounds"
            )),
            "{:?}",
            e.evidence
        );
        if b.env.cgroup.is_some() {
            assert!(
                e.evidence.iter().any(|x| x == "B: its cgroup's CPU weight cpu.shares 2 (default 1024) (/sys/fs/cgroup/cpu/low/cpu.shares)"),
                "{:?}",
                e.evidence
            );
        }
    }

    #[test]
    fn waiting_alike_or_absent_explains_nothing_and_the_faster_waiting_side_is_ruled_out() {
        let quiet = |id, m| waited(id, m, &[0.0, 1.0, 0.5]);
        assert!(
            only(&quiet("a", 40.0), &quiet("b", 54.0)).is_none(),
            "no waiting"
        );
        // Rounds of an earlier version record no waiting: nothing known.
        let old = stolen(timers_run("b", 54.0, None), &[0.0, 0.0, 0.0]);
        assert!(only(&quiet("a", 40.0), &old).is_none());
        // B waited most of the time yet was faster: not the CPU share's doing.
        let b = waited("b", 30.0, &[90.0, 92.0, 91.0]);
        assert_eq!(only(&quiet("a", 40.0), &b).unwrap().claim, Claim::RuledOut);
    }
}
