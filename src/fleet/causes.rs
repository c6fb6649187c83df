//! Why an outlier differs: the explained compare (`compare::compare_with`) of the typical
//! host (the medoid, as A) with the outlier (B). The leading cause is the one that explains
//! (or partly explains) the largest share of the outlier's real differences, weighted by
//! their size; its label names the environment fact behind it as both hosts recorded it
//! ("clocksource kvm-clock (typical host: tsc)"), so that outliers with the same cause and
//! the same evidence share a label and are grouped. An outlier no recorded cause explains
//! is `unexplained`, with the candidates that differ (kernel, governor, ...) in its label.

use crate::compare::causes::explain::{Claim, Explanation};
use crate::compare::stats::verdict::History;
use crate::compare::{compare_with, Comparison};
use crate::result::RunDocument;
use serde::Serialize;
use serde_json::Value;

/// The cause of an outlier's difference from the typical host.
#[derive(Debug, Clone, Serialize)]
pub struct Cause {
    /// The name of a cause of `compare::causes::REGISTRY` (`Cause::name`), or `unexplained`.
    pub cause: String,
    /// What outliers of one group share: the cause and its evidence in the environment.
    pub label: String,
    /// The compare's sentence for the largest difference it explains (or the largest).
    pub sentence: String,
    /// The evidence of that explanation.
    pub evidence: Vec<String>,
    /// The typical host's run the outlier was compared with.
    pub against: String,
    /// The rows of the compare with a real difference, and how many the cause explains.
    pub rows_real: usize,
    pub rows_explained: usize,
    /// Unexplained: the recorded facts that differ from the typical host all the same
    /// (none: nothing recorded differs).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub differs: Vec<String>,
}

fn show(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "none".into(),
        other => other.to_string(),
    }
}

/// The environment facts (as `compare` names them) that carry each cause.
fn facts_of(cause: &str) -> &'static [&'static str] {
    match cause {
        "timer" => &["clocksource"],
        "capacity" => &["usable CPUs", "CPU quota"],
        "topology" => &[
            "logical CPUs",
            "cores",
            "threads per core",
            "LLC groups",
            "NUMA nodes",
        ],
        "cpu-speed" => &["CPU model", "cpufreq governor"],
        _ => &[],
    }
}

/// The cause's words in the fleet view (REGISTRY's `words`), or its name.
fn words(cause: &str) -> &str {
    crate::compare::causes::REGISTRY
        .iter()
        .find(|c| c.name == cause)
        .map_or(cause, |c| c.words)
}

/// What differs all the same: the environment facts (but the host name) and the candidates
/// nothing quantifies.
fn differences(c: &Comparison) -> Vec<String> {
    c.env_differences
        .iter()
        .filter(|d| d.what != "host")
        .map(|d| format!("{} {} (typical host: {})", d.what, show(&d.b), show(&d.a)))
        .chain(
            c.candidates
                .iter()
                .filter(|k| k.status == "differs")
                .map(|k| format!("{} {} (typical host: {})", k.what, k.b, k.a)),
        )
        .collect()
}

/// The label of `cause` in comparison `c`: the cause and the facts behind it that differ;
/// for a host of other hardware than the typical host's, that hardware whatever the cause
/// (`hardware`: it is judged against a fleet of other machines).
fn label(cause: &str, c: &Comparison) -> String {
    let hardware: Vec<String> = c
        .env_differences
        .iter()
        .filter(|d| super::hardware::FACTS.contains(&d.what.as_str()))
        .map(|d| format!("{} {} (typical host: {})", d.what, show(&d.b), show(&d.a)))
        .collect();
    if !hardware.is_empty() {
        return format!(
            "different hardware: {}; judged against a fleet of other hardware",
            hardware.join(", ")
        );
    }
    if cause == "unexplained" {
        let differ = differences(c);
        return if differ.is_empty() {
            "unexplained: no recorded cause differs from the typical host".into()
        } else {
            format!("unexplained; differs: {}", differ.join(", "))
        };
    }
    let facts: Vec<String> = c
        .env_differences
        .iter()
        .filter(|d| facts_of(cause).contains(&d.what.as_str()))
        .map(|d| format!("{} {} (typical host: {})", d.what, show(&d.b), show(&d.a)))
        .collect();
    if facts.is_empty() {
        words(cause).to_string()
    } else {
        format!("{}: {}", words(cause), facts.join(", "))
    }
}

/// The explanation that accounts for a row: one that explains, else one that explains part.
fn leading(ex: &[Explanation]) -> Option<&Explanation> {
    ex.iter()
        .find(|e| e.claim == Claim::Explains)
        .or_else(|| ex.iter().find(|e| e.claim == Claim::Partly))
}

/// The cause of `outlier`'s difference from `typical`.
pub fn of(typical: &RunDocument, outlier: &RunDocument) -> Cause {
    let c = compare_with(typical, outlier, &History::default());
    let real: Vec<&crate::compare::Row> = c.rows.iter().filter(|r| r.verdict.is_real()).collect();
    let mut weight: Vec<(String, f64, usize)> = vec![];
    for r in &real {
        if let Some(e) = leading(&r.explanations) {
            let w = r.ratio.ln().abs();
            match weight.iter_mut().find(|x| x.0 == e.cause) {
                Some(x) => {
                    x.1 += w;
                    x.2 += 1;
                }
                None => weight.push((e.cause.clone(), w, 1)),
            }
        }
    }
    let top = weight.iter().max_by(|a, b| a.1.total_cmp(&b.1)).cloned();
    let largest = |keep: &dyn Fn(&crate::compare::Row) -> bool| {
        real.iter()
            .filter(|r| keep(r))
            .max_by(|a, b| a.ratio.ln().abs().total_cmp(&b.ratio.ln().abs()))
            .copied()
    };
    let (cause, explained) = match &top {
        Some((cause, _, n)) => (cause.clone(), *n),
        None => ("unexplained".to_string(), 0),
    };
    let row = match &top {
        Some((name, _, _)) => {
            largest(&|r| leading(&r.explanations).is_some_and(|e| &e.cause == name))
        }
        None => largest(&|_| true),
    };
    let (sentence, evidence) = match row {
        Some(r) => (
            crate::compare::summary::row_sentence(r),
            leading(&r.explanations)
                .map(|e| e.evidence.clone())
                .unwrap_or_default(),
        ),
        None => (
            "no row differs beyond the drift from the typical host's in a two-run compare"
                .to_string(),
            vec![],
        ),
    };
    Cause {
        label: label(&cause, &c),
        differs: if cause == "unexplained" {
            differences(&c)
        } else {
            vec![]
        },
        cause,
        sentence,
        evidence,
        against: typical.run_id.clone(),
        rows_real: real.len(),
        rows_explained: explained,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::testing::{in_rounds, with_speed};

    /// A timers run measured in rounds (`testing::timers_run`).
    fn timers_run(id: &str, median: f64, noise: Option<crate::finding::Finding>) -> RunDocument {
        in_rounds(crate::compare::testing::timers_run(id, median, noise))
    }

    #[test]
    fn a_slower_clock_is_named_with_its_figures_and_an_unchanged_host_is_unexplained() {
        let typical = with_speed(timers_run("t", 20.0, None), 3.0);
        let slow_cpu = with_speed(timers_run("s", 26.0, None), 2.3);
        let c = of(&typical, &slow_cpu);
        assert_eq!(c.cause, "cpu-speed", "{c:?}");
        assert_eq!(c.rows_real, 1);
        assert_eq!(c.against, "t");
        let same_env = with_speed(timers_run("u", 26.0, None), 3.0);
        let c = of(&typical, &same_env);
        assert_eq!(c.cause, "unexplained", "{c:?}");
        assert!(c.label.contains("no recorded cause"), "{}", c.label);
    }

    #[test]
    fn a_host_of_another_cpu_model_is_labelled_other_hardware_whatever_explains_its_rows() {
        let typical = with_speed(timers_run("t", 20.0, None), 3.0);
        let mut other = with_speed(timers_run("s", 26.0, None), 2.3);
        other.env.kernel.cpu_model = Some("Intel Xeon 8375C".into());
        let c = of(&typical, &other);
        assert!(
            c.label
                .starts_with("different hardware: CPU model Intel Xeon 8375C (typical host: "),
            "{}",
            c.label
        );
        // Its rows still carry the cause that explains them.
        assert_eq!(c.cause, "cpu-speed", "{c:?}");
    }

    #[test]
    fn every_cause_that_can_explain_a_row_has_words_of_its_own() {
        for c in crate::compare::causes::measured_causes() {
            assert_ne!(words(c), c, "no words for the cause {c}");
        }
    }
}
