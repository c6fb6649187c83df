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
            ci(v.makespan_s.as_ref(), " s"),
            ci(v.cpu_s.as_ref(), " s"),
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
                    ci(w.as_ref(), " s"),
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
