//! Noise as a cause: other processes using the CPUs and the hypervisor taking them while a
//! row was measured, as its `noisy-neighbour` and `steal-time` findings record them (each
//! states its share of the usable CPUs), or, for a result measured in rounds whose figures
//! include disturbed rounds (fewer than two were undisturbed), as those rounds recorded
//! it (other tasks' share of the round's CPUs and steal's of their time, averaged over the
//! rounds). The two are stated apart, each at most 100%; the share of the CPUs' time they
//! took together (at most 100%) decides: the noisier run being the slower one by a clear
//! margin explains the difference; noise is never held equal, so it predicts no figure.

use crate::compare::causes::explain::{Claim, Explanation, RowCtx};
use crate::finding::Finding;
use crate::result::{BenchResult, RunDocument};

/// This cause, as the JSON names it.
pub const NOISE: &str = "noise";

/// Noise shares (of the usable CPUs) must differ by at least this to explain anything.
pub const MIN_DIFFERENCE: f64 = 0.15;

/// The percentage a finding's message states after `marker` ("used 40% of").
fn percent_after(message: &str, marker: &str) -> Option<f64> {
    let rest = &message[message.find(marker)? + marker.len()..];
    let num: String = rest
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    rest.trim_start()[num.len()..]
        .starts_with('%')
        .then(|| num.parse::<f64>().ok().map(|p| p / 100.0))
        .flatten()
}

/// What took CPU from one result, each share of its own denominator and at most 100%: the
/// share of the CPUs other processes used and the share of the CPUs' time the hypervisor
/// took, with the findings that say so.
#[derive(Debug, Default)]
pub struct Noise<'a> {
    /// Other processes' share of the CPUs (0..=1).
    pub others: f64,
    /// The hypervisor's share of the CPUs' time (0..=1).
    pub steal: f64,
    /// Of what the shares are: "the usable CPUs" (the findings), "its rounds' CPUs".
    pub of: &'static str,
    pub findings: Vec<&'a Finding>,
    /// What the disturbed rounds in the figures recorded, one line each.
    pub rounds: Vec<String>,
}

impl Noise<'_> {
    /// The share of the CPUs' time lost to both (they are apart in /proc/stat's ticks: busy
    /// and steal), at most 100%.
    pub fn taken(&self) -> f64 {
        (self.others + self.steal).min(1.0)
    }

    /// "other processes used 48% of the usable CPUs and the hypervisor took 20% of their
    /// time".
    fn text(&self) -> String {
        format!(
            "other processes used {:.0}% of {} and the hypervisor took {:.0}% of their time",
            self.others * 100.0,
            self.of,
            self.steal * 100.0
        )
    }
}

pub fn of(r: &BenchResult) -> Noise<'_> {
    let mut n = Noise {
        of: "the usable CPUs",
        ..Noise::default()
    };
    for f in &r.findings {
        // A finding whose share cannot be read still counts as its threshold.
        match f.id.as_str() {
            "noisy-neighbour" => {
                n.others +=
                    percent_after(&f.message, "used").unwrap_or(crate::findings::noise::NOISY_SHARE)
            }
            "steal-time" => {
                n.steal +=
                    percent_after(&f.message, "took").unwrap_or(crate::findings::noise::STEAL_SHARE)
            }
            _ => continue,
        }
        n.findings.push(f);
    }
    if let (Some(rs), Some(noise)) = (&r.rounds, r.run_noise()) {
        // Disturbed rounds in the figures: none left to set them aside, or a condition
        // present throughout (`persistence`).
        let in_figures = noise.includes_disturbed
            || rs
                .rounds
                .iter()
                .any(|x| !x.disturbed.is_empty() && x.kept());
        if in_figures && !rs.rounds.is_empty() {
            use crate::result::rounds::Cause;
            let mean = |cause: Cause| {
                rs.rounds
                    .iter()
                    .flat_map(|x| &x.disturbed)
                    .filter(|d| d.cause == cause)
                    .map(|d| d.value / 100.0)
                    .sum::<f64>()
                    / rs.rounds.len() as f64
            };
            n.others += mean(Cause::OtherTasks);
            n.steal += mean(Cause::Steal);
            if n.findings.is_empty() {
                n.of = "its rounds' CPUs";
            }
            n.rounds
                .extend(crate::result::rounds::disturbed_evidence(&rs.rounds));
        }
    }
    n.others = n.others.min(1.0);
    n.steal = n.steal.min(1.0);
    n
}

fn load(doc: &RunDocument) -> String {
    match &doc.env.load {
        Some(l) => format!(
            "load average {:.2} with {} runnable at the probe, on {} usable {}",
            l.one,
            l.runnable,
            doc.env.cpus.usable_width,
            crate::units::noun(doc.env.cpus.usable_width, "CPU")
        ),
        None => "load not recorded".into(),
    }
}

pub fn explain(c: &RowCtx) -> Option<Explanation> {
    let (na, nb) = (of(c.ra), of(c.rb));
    let diff = nb.taken() - na.taken();
    if diff.abs() < MIN_DIFFERENCE {
        return None;
    }
    let noisier = if diff > 0.0 { "B" } else { "A" };
    if noisier != c.worse_side() {
        return None;
    }
    let mut e = Explanation::new(
        NOISE,
        Claim::Explains,
        format!(
            "{} while B was measured, {:.0}% and {:.0}%{} during A's",
            nb.text(),
            na.others * 100.0,
            na.steal * 100.0,
            if na.of == nb.of {
                String::new()
            } else {
                format!(" (of {})", na.of)
            }
        ),
    );
    for (side, n) in [("A", &na), ("B", &nb)] {
        if n.findings.is_empty() && n.rounds.is_empty() {
            e.evidence.push(format!(
                "{side}: no noisy-neighbour or steal-time finding, no disturbed round in its figures"
            ));
        }
        for line in &n.rounds {
            e.evidence.push(format!("{side}: {line}"));
        }
        for f in &n.findings {
            e.evidence.push(format!(
                "{side}: {}: {} ({})",
                f.id,
                f.message,
                f.evidence.join("; ")
            ));
        }
    }
    e.evidence.push(format!("A: {}", load(c.a)));
    e.evidence.push(format!("B: {}", load(c.b)));
    e.remains = None;
    Some(e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::causes::testing::judged_rows;
    use crate::compare::testing::{noisy, timers_run};
    use crate::finding::Severity;

    #[test]
    fn shares_are_read_from_the_findings() {
        assert_eq!(
            percent_after("Other processes used 40% of the usable CPUs", "used"),
            Some(0.4)
        );
        assert_eq!(percent_after("took 3.5% of", "took"), Some(0.035));
        assert_eq!(percent_after("used many", "used"), None);
    }

    #[test]
    fn a_hog_during_the_slower_run_explains_it() {
        let a = timers_run("a", 20.0, None);
        let b = timers_run("b", 40.0, Some(noisy(0.55)));
        let rows = judged_rows(&a, &b, explain);
        let e = rows[0].1.as_ref().expect("noise explains");
        assert_eq!(e.claim, Claim::Explains);
        assert_eq!(
            e.because,
            "other processes used 55% of the usable CPUs and the hypervisor took 0% of their time while B was measured, 0% and 0% during A's"
        );
    }

    #[test]
    fn other_tasks_and_steal_are_stated_apart_and_no_share_passes_100_percent() {
        // A round of B's where other tasks used 74% of its CPUs and the hypervisor took 42%
        // of their time: 116% added up, as the loud hour of 2026-11-28 printed it.
        let steal = Finding::new(
            "steal-time",
            Severity::Warning,
            "The hypervisor took 42.0% of the usable CPUs' time while this was measured.",
            vec![],
        );
        let a = timers_run("a", 20.0, None);
        let mut b = timers_run("b", 40.0, Some(noisy(0.74)));
        b.results[0].findings.push(steal);
        let n = of(&b.results[0]);
        assert_eq!((n.others, n.steal, n.taken()), (0.74, 0.42, 1.0));
        let e = judged_rows(&a, &b, explain)[0].1.clone().unwrap();
        assert!(
            e.because.starts_with("other processes used 74% of the usable CPUs and the hypervisor took 42% of their time while B was measured"),
            "{}",
            e.because
        );
        // A share read above 100% is stated as 100%.
        let b = timers_run("b", 40.0, Some(noisy(1.3)));
        assert_eq!(of(&b.results[0]).others, 1.0);
    }

    #[test]
    fn noise_in_both_or_on_the_faster_side_explains_nothing() {
        let a = timers_run("a", 20.0, Some(noisy(0.5)));
        let b = timers_run("b", 40.0, Some(noisy(0.45)));
        assert!(judged_rows(&a, &b, explain)[0].1.is_none());
        // The noisy run was the faster one: noise does not explain B's slowdown.
        let a = timers_run("a", 20.0, Some(noisy(0.6)));
        let b = timers_run("b", 40.0, None);
        assert!(judged_rows(&a, &b, explain)[0].1.is_none());
    }
}
