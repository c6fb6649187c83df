//! Noise as a cause: other processes using the CPUs and the hypervisor taking them while a
//! row was measured, as its `noisy-neighbour` and `steal-time` findings record them (each
//! states its share of the usable CPUs), or, for a result measured in rounds whose figures
//! include disturbed rounds (fewer than two were undisturbed), as those rounds recorded
//! it (other tasks' and steal's share of the round's CPUs, averaged over the rounds). The noisier run being the slower one by a clear
//! margin explains the difference; noise is never held equal, so it predicts no figure.

use super::explain::{Claim, Explanation, RowCtx, NOISE};
use crate::findings::Finding;
use crate::result::{BenchResult, RunDocument};

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

/// What took CPU from one result: the share of the usable CPUs others used and the share
/// stolen, with the findings that say so.
#[derive(Debug, Default)]
pub struct Noise<'a> {
    pub share: f64,
    pub findings: Vec<&'a Finding>,
    /// What the disturbed rounds in the figures recorded, one line each.
    pub rounds: Vec<String>,
}

pub fn of(r: &BenchResult) -> Noise<'_> {
    let mut n = Noise::default();
    for f in &r.findings {
        let share = match f.id.as_str() {
            "noisy-neighbour" => percent_after(&f.message, "used"),
            "steal-time" => percent_after(&f.message, "took"),
            _ => continue,
        };
        // A finding whose share cannot be read still counts as its threshold.
        n.share += share.unwrap_or(crate::findings::noise::NOISY_SHARE);
        n.findings.push(f);
    }
    if let (Some(rs), Some(noise)) = (&r.rounds, r.run_noise()) {
        if noise.includes_disturbed && !rs.rounds.is_empty() {
            use crate::result::rounds::Cause;
            let taken: f64 = rs
                .rounds
                .iter()
                .flat_map(|x| &x.disturbed)
                .filter(|d| matches!(d.cause, Cause::OtherTasks | Cause::Steal))
                .map(|d| d.value / 100.0)
                .sum();
            n.share += taken / rs.rounds.len() as f64;
            n.rounds
                .extend(crate::result::rounds::disturbed_evidence(&rs.rounds));
        }
    }
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
    let diff = nb.share - na.share;
    if diff.abs() < MIN_DIFFERENCE {
        return None;
    }
    let noisier = if diff > 0.0 { "B" } else { "A" };
    if noisier != c.worse_side() {
        return None;
    }
    let pct = |x: f64| format!("{:.0}%", x * 100.0);
    let mut e = Explanation::new(
        NOISE,
        Claim::Explains,
        format!(
            "other processes and steal took {} of the usable CPUs while it was measured and {} during A's",
            pct(nb.share),
            pct(na.share)
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
    use super::super::testing::{judged_rows, noisy, timers_run};
    use super::*;

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
        assert!(e.because.contains("55%"), "{}", e.because);
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
