//! Candidate causes that nothing in the documents quantifies: CPU model, microcode, kernel,
//! mitigations, SMT on/off, cpufreq governor and driver, THP, idle driver. Each is listed
//! with what both documents say (or that they do not record it); one that differs is
//! attached to a row it could explain, marked "not measured".

use super::explain::{Claim, Explanation, CANDIDATE};
use crate::probe::ProbeDoc;
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Candidate {
    pub what: String,
    pub a: String,
    pub b: String,
    /// `differs`, `same`, or `not recorded` (the documents do not hold it).
    pub status: String,
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

const FACTS: &[(&str, Read)] = &[
    ("CPU model", |e| text(&e.kernel.cpu_model)),
    ("kernel", |e| text(&e.kernel.release)),
    ("mitigations", mitigations),
    ("SMT", smt),
    ("cpufreq governor", |e| text(&e.kernel.cpufreq_governor)),
    ("cpufreq driver", |e| text(&e.kernel.cpufreq_driver)),
    ("THP", |e| text(&e.kernel.thp)),
    ("idle driver", |e| text(&e.kernel.idle_driver)),
];

/// Every candidate with both runs' values; microcode is not recorded by the probe.
pub fn list(a: &ProbeDoc, b: &ProbeDoc) -> Vec<Candidate> {
    let mut v: Vec<Candidate> = FACTS
        .iter()
        .map(|(what, read)| {
            let (x, y) = (read(a), read(b));
            Candidate {
                what: what.to_string(),
                status: if x == y { "same" } else { "differs" }.into(),
                a: x,
                b: y,
            }
        })
        .collect();
    v.push(Candidate {
        what: "microcode".into(),
        a: "not recorded".into(),
        b: "not recorded".into(),
        status: "not recorded".into(),
    });
    v
}

/// The candidates that differ, as one "not measured" explanation; None when none differs.
pub fn explain(cands: &[Candidate]) -> Option<Explanation> {
    let diff: Vec<&Candidate> = cands.iter().filter(|c| c.status == "differs").collect();
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
        .map(|c| format!("{}: A {} | B {} (not measured)", c.what, c.a, c.b))
        .collect();
    Some(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_different_kernel_is_a_candidate_and_the_same_machine_has_none() {
        let a = crate::result::testing::env();
        let mut b = a.clone();
        assert!(explain(&list(&a, &b)).is_none());
        assert!(list(&a, &b)
            .iter()
            .any(|c| c.what == "microcode" && c.status == "not recorded"));
        b.kernel.release = Some("9.9.9".into());
        let e = explain(&list(&a, &b)).unwrap();
        assert_eq!(e.claim, Claim::NotMeasured);
        assert!(
            e.evidence[0].contains("kernel") && e.evidence[0].contains("9.9.9"),
            "{e:?}"
        );
    }
}
