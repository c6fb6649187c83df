//! A `truebench experiment`: the command, per variant where its instances were placed and
//! the CPUs their threads were seen on, and the medians (95% CI) of makespan, CPU time, context switches, migrations and the business
//! metric; the winner and whether each difference is real; skipped variants with their
//! reasons (in the run's skipped cases); the kernel's real-time throttling. Charted as makespan bars with CIs.

use super::View;
use crate::measure::stats::Stats;
use crate::report::svg::Chart;
use crate::result::batch::BatchExperiment;
use crate::result::RunDocument;
use crate::units::num;

pub struct Experiment;

/// "1.234 s [1.200, 1.300]" of a statistic, in `unit`; "-" when absent.
fn ci(s: Option<&Stats>, unit: &str) -> String {
    match s {
        Some(s) => format!(
            "{}{unit} [{}, {}]",
            num(s.median),
            num(s.ci95_low),
            num(s.ci95_high)
        ),
        None => "-".into(),
    }
}

/// "2.10 ms [2.00, 9.00]" of a statistic in seconds, in the unit its median reads best
/// in (s, ms, µs: a short command's CPU time was "7.51e-4 s"); "-" when absent.
fn ci_secs(s: Option<&Stats>) -> String {
    let Some(st) = s else {
        return "-".into();
    };
    let m = st.median.abs();
    let (div, unit) = if m >= 1.0 || m == 0.0 {
        (1.0, "s")
    } else if m >= 1e-3 {
        (1e-3, "ms")
    } else {
        (1e-6, "µs")
    };
    format!(
        "{} {unit} [{}, {}]",
        num(st.median / div),
        num(st.ci95_low / div),
        num(st.ci95_high / div)
    )
}

/// "52 [21, 93]" of a count statistic: whole numbers (a median of an even number of runs
/// is rounded); "-" when absent.
fn count_ci(s: Option<&Stats>) -> String {
    match s {
        Some(s) => format!("{:.0} [{:.0}, {:.0}]", s.median, s.ci95_low, s.ci95_high),
        None => "-".into(),
    }
}

/// "threads seen on CPUs [1]": where the variant's threads really ran, beside where
/// they were placed (a pinned variant placed on all usable CPUs runs each thread on one).
fn seen(cpus: &[u32]) -> String {
    if cpus.is_empty() {
        "threads seen on: not sampled (every run ended before the first 20 ms sample)".into()
    } else {
        format!(
            "threads seen on CPUs [{}]",
            crate::probe::cpulist::format_list(cpus)
        )
    }
}

fn lines(e: &BatchExperiment) -> Vec<String> {
    let mut s = vec![format!(
        "Experiment: `{}`, {} per variant{}, shuffled order",
        crate::stdout::field(&crate::policy::launch::words(&e.command)),
        crate::units::count(e.runs, "run"),
        if e.instances > 1 {
            format!(", {} instances at once (figure: makespan)", e.instances)
        } else {
            String::new()
        }
    )];
    for v in &e.variants {
        s.push(format!(
            "  {}: {} {}; CPU {}; switches {}; migrations {}{}",
            v.policy,
            if e.instances > 1 { "makespan" } else { "wall" },
            ci_secs(v.makespan_s.as_ref()),
            ci_secs(v.cpu_s.as_ref()),
            count_ci(v.context_switches.as_ref()),
            count_ci(v.migrations.as_ref()),
            v.metric
                .as_ref()
                .map(|m| format!("; metric {}", ci(Some(m), " units")))
                .unwrap_or_default()
        ));
        if e.instances > 1 {
            for (i, (w, at)) in v.instance_wall_s.iter().zip(&v.placement).enumerate() {
                s.push(format!(
                    "    instance {}: wall {}, placed on {}; {}",
                    i + 1,
                    ci_secs(w.as_ref()),
                    at.partition,
                    seen(&v.cpus_seen(Some(i)))
                ));
            }
        } else if let Some(at) = v.placement.first() {
            s.push(format!(
                "    placed on {}; {}",
                at.partition,
                seen(&v.cpus_seen(None))
            ));
        }
    }
    if let Some(c) = &e.comparison {
        s.push(format!(
            "  fastest median: {} (against it, {}):",
            c.winner, c.test
        ));
        for (name, r) in &c.others {
            s.push(format!(
                "    {name}: x{} the winner's time, p {} -> {}",
                r.ratio.map(|x| format!("{x:.3}")).unwrap_or("-".into()),
                r.p_value.map(|p| format!("{p:.3}")).unwrap_or("-".into()),
                if r.real {
                    "a real difference"
                } else {
                    "not a real difference at p < 0.05"
                }
            ));
        }
    }
    for (k, why) in &e.unavailable {
        s.push(format!("  not available: {k}: {why}"));
    }
    if let Some(f) = &e.failed {
        s.push(format!(
            "  stopped: {} (the runs before it are kept)",
            crate::stdout::field(&f.words())
        ));
    }
    if e.variants
        .iter()
        .any(|v| v.policy.contains("fifo") || v.policy.contains("rr:"))
    {
        s.push(format!("  {}", e.rt_throttling.note));
    }
    s
}

impl View for Experiment {
    fn title(&self) -> &'static str {
        "Experiment"
    }

    fn applies(&self, doc: &RunDocument) -> bool {
        doc.experiment.is_some()
    }

    fn summary(&self, doc: &RunDocument) -> String {
        self.headline(doc).iter().map(|l| super::wrap(l)).collect()
    }

    fn headline(&self, doc: &RunDocument) -> Vec<String> {
        doc.experiment.as_ref().map(lines).unwrap_or_default()
    }

    fn charts(&self, doc: &RunDocument) -> Vec<Chart> {
        let Some(e) = &doc.experiment else {
            return vec![];
        };
        let bars = e
            .variants
            .iter()
            .filter_map(|v| {
                let s = v.makespan_s.as_ref()?;
                Some((v.policy.clone(), s.median, s.ci95_low, s.ci95_high))
            })
            .collect();
        vec![Chart::bars("Experiment: makespan per variant", "s", bars)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_said_in_the_unit_their_median_reads_best_in() {
        let s = Stats::of(&[7.51e-4, 6.31e-4, 9.31e-4, 7.0e-4, 8.0e-4]).unwrap();
        let t = ci_secs(Some(&s));
        assert!(
            t.ends_with(']') && t.contains(" µs [") && !t.contains('e'),
            "{t}"
        );
        let s = Stats::of(&[0.002, 0.0021, 0.009]).unwrap();
        assert!(ci_secs(Some(&s)).contains(" ms ["), "{}", ci_secs(Some(&s)));
        let s = Stats::of(&[12.5, 12.0, 13.0]).unwrap();
        assert!(ci_secs(Some(&s)).starts_with("12.50 s ["));
        assert_eq!(ci_secs(None), "-");
    }
}
