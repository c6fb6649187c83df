//! Capacity as a cause: the CPU a row's tasks could use in each run, from the probe (usable
//! CPUs, the cgroup quota against the cpuset's width, and the capacity they give) and the
//! row's own task count (copies, threads, else one), and the `throttled` finding of the
//! row's measurement window. A rate is predicted to scale with the CPU available to its
//! tasks: min(tasks, capacity) B over A.

use crate::compare::causes::explain::{Claim, Explanation, RowCtx};
use crate::probe::cpulist::format_list;
use crate::result::{BenchResult, RunDocument};

/// This cause, as the JSON names it.
pub const CAPACITY: &str = "capacity";

/// Capacities within this factor are the same.
const SAME: f64 = 1.05;

/// How many tasks of a result compete for CPU: its copies or threads, else one.
pub fn tasks(r: &BenchResult) -> u64 {
    crate::compare::matching::copies(r)
        .or_else(|| r.params.threads())
        .unwrap_or(1)
        .max(1)
}

fn throttled(r: &BenchResult) -> Option<&crate::finding::Finding> {
    r.findings.iter().find(|f| f.id == "throttled")
}

fn limits(doc: &RunDocument) -> String {
    let c = &doc.env.cpus;
    format!(
        "usable CPUs [{}] ({}), quota {}, capacity {:.2} CPUs ({})",
        format_list(&c.usable),
        c.usable_width,
        c.cgroup_quota
            .map(|q| format!("{q:.2} CPUs"))
            .unwrap_or_else(|| "none".into()),
        c.capacity,
        c.capacity_basis
    )
}

pub fn explain(c: &RowCtx) -> Option<Explanation> {
    let (ta, tb) = (tasks(c.ra), tasks(c.rb));
    let avail_a = (ta as f64).min(c.a.env.cpus.capacity);
    let avail_b = (tb as f64).min(c.b.env.cpus.capacity);
    let (tha, thb) = (throttled(c.ra), throttled(c.rb));
    let cap_ratio = avail_b / avail_a;
    let changed = cap_ratio.ln().abs() >= SAME.ln();
    if !changed && tha.is_some() == thb.is_some() {
        return None;
    }
    let mut e = Explanation::new(
        CAPACITY,
        Claim::Contributes,
        format!(
            "its {} could use {avail_b:.2} CPUs and A's {} {avail_a:.2}{}",
            crate::units::count(tb, "task"),
            crate::units::count(ta, "task"),
            match (tha.is_some(), thb.is_some()) {
                (false, true) => ", and the quota throttled it",
                (true, false) => ", and the quota throttled A",
                (true, true) => ", both throttled by their quota",
                _ => "",
            }
        ),
    )
    .evidence(format!("A: {}", limits(c.a)))
    .evidence(format!("B: {}", limits(c.b)))
    .evidence(format!(
        "CPU available to the row's tasks: A min({ta}, {:.2}) = {avail_a:.2}, B min({tb}, {:.2}) = {avail_b:.2}",
        c.a.env.cpus.capacity, c.b.env.cpus.capacity
    ));
    for (side, f) in [("A", tha), ("B", thb)] {
        if let Some(f) = f {
            e.evidence
                .push(format!("{side}: throttled: {}", f.evidence.join("; ")));
        }
    }
    for (side, d) in [("A", c.a), ("B", c.b)] {
        if let Some(f) = d
            .env
            .findings
            .iter()
            .find(|f| f.id == "cpu-quota-below-cpuset")
        {
            e.evidence
                .push(format!("{side}: cpu-quota-below-cpuset: {}", f.message));
        }
    }
    if changed {
        let predicted = if c.ra.lower_is_better {
            1.0 / cap_ratio
        } else {
            cap_ratio
        };
        e = e.predict(predicted, c.ratio());
    } else {
        // Same capacity, throttled on one side only: it acts only on the throttled side's
        // figure, with no figure of its own.
        let throttled_side = if thb.is_some() { "B" } else { "A" };
        if throttled_side != c.worse_side() {
            return None;
        }
    }
    Some(e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::causes::testing::judged_rows;
    use crate::compare::testing::classic_run;

    #[test]
    fn a_half_cpu_quota_explains_one_copy_at_half_the_rate() {
        let a = classic_run("a", None, &[(1, 1000.0), (2, 1900.0)], false);
        let b = classic_run("b", Some(0.5), &[(1, 520.0)], true);
        let rows = judged_rows(&a, &b, explain);
        assert_eq!(rows.len(), 2, "1-copy and all-CPUs rows both match");
        for (l, e) in &rows {
            let e = e.as_ref().unwrap_or_else(|| panic!("{l}: no capacity"));
            assert!(
                matches!(e.claim, Claim::Explains | Claim::Partly),
                "{l}: {e:?}"
            );
            assert!(e.evidence.iter().any(|x| x.contains("throttled")), "{e:?}");
        }
        let one = rows[0].1.as_ref().unwrap();
        assert_eq!(one.claim, Claim::Explains);
        assert!((one.predicted.unwrap() - 0.5).abs() < 1e-9);
    }

    #[test]
    fn the_same_capacity_explains_nothing() {
        let a = classic_run("a", None, &[(1, 1000.0), (2, 1900.0)], false);
        let b = classic_run("b", None, &[(1, 500.0), (2, 950.0)], false);
        for (l, e) in judged_rows(&a, &b, explain) {
            assert!(e.is_none(), "{l}: {e:?}");
        }
    }
}
