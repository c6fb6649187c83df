//! A load-step experiment: per variant (policy x workers x capacity) its steps, knee and
//! fits; which variant won each step and whether the difference is real; the scaling curve;
//! what could not be measured. The summary keeps the columns a reader decides on; the full
//! view every measured column.

use super::{narrow_table, View};
use crate::loadstep::experiment::{Comparison, Knee, VariantResult};
use crate::loadstep::model::{usl, Fit};
use crate::loadstep::step::{Percentiles, StepSummary};
use crate::report::svg::{Chart, LineChart};
use crate::result::experiment::Experiment;
use crate::result::{figures, RunDocument};
use crate::units::num;

pub struct Loadstep;

fn f(v: Option<f64>) -> String {
    v.map(num).unwrap_or_else(|| "-".into())
}

fn pct_of(p: &Option<Percentiles>, pick: fn(&Percentiles) -> f64) -> String {
    f(p.as_ref().map(pick))
}

fn per_tx(s: &StepSummary, what: &str) -> String {
    f(s.per_tx.get(what).copied())
}

fn valid(s: &StepSummary) -> String {
    match &s.invalid_reason {
        None => "yes".into(),
        Some(why) => format!("NO: {why}"),
    }
}

fn variant_name(v: &VariantResult) -> String {
    format!(
        "{} x{}{}",
        v.policy,
        v.workers,
        v.capacity
            .map(|c| format!(" {}", c.name().replace('/', " ")))
            .unwrap_or_default()
    )
}

fn variant_title(v: &VariantResult) -> String {
    format!(
        "Policy {} with {}{}{}",
        v.policy,
        crate::units::count(v.workers, "worker"),
        v.pinned_cpus
            .as_ref()
            .map(|c| format!(", pinned to CPUs {}", crate::probe::cpulist::format_list(c)))
            .unwrap_or_default(),
        match (&v.capacity, &v.cpuset) {
            (Some(c), Some(cpus)) => format!(
                ", capacity: quota {} CPUs per {} period on a cpuset of {} [{}] ({})",
                c.quota,
                crate::loadstep::capacity::period_words(c.period_us),
                c.width,
                crate::probe::cpulist::format_list(cpus),
                v.capacity_note.as_deref().unwrap_or("")
            ),
            _ => String::new(),
        }
    )
}

fn knees(v: &VariantResult) -> String {
    let knee = |k: &Option<Knee>| {
        k.as_ref()
            .map(|k| format!("{}/s", num(k.rate)))
            .unwrap_or_else(|| "-".into())
    };
    let invalid = v.steps.iter().filter(|s| !s.valid).count();
    if v.knee_latency.is_none() && v.knee_cost.is_none() {
        match invalid {
            0 => "Knee: none (latency and cost per transaction grew no faster than load)\n"
                .to_string(),
            n if n == v.steps.len() => {
                format!(
                    "Knee: not determined: none of the {} is valid\n",
                    crate::units::count(n, "step")
                )
            }
            n => format!(
                "Knee: none among the {} (latency and cost per transaction grew no faster than load); {n} invalid\n",
                crate::units::count(v.steps.len() - n, "valid step")
            ),
        }
    } else {
        format!(
            "Knee: latency after {}; CPU cost per transaction after {}\n",
            knee(&v.knee_latency),
            knee(&v.knee_cost)
        )
    }
}

/// Where a fit says throughput peaks, or its asymptote.
fn peak(u: &Fit) -> String {
    match (u.peak_n, u.peak_x) {
        (Some(n), Some(x)) => format!("predicted peak {}/s at N = {}", num(x), num(n)),
        (None, Some(x)) => format!("asymptote {}/s", num(x)),
        _ => "no limit within the model".into(),
    }
}

fn fits(v: &VariantResult) -> String {
    let mut out = String::new();
    for (label, fit, min) in [("USL", &v.usl, 4), ("Amdahl", &v.amdahl, 3)] {
        let Some(u) = fit else {
            out.push_str(&format!(
                "{label}: not fitted (needs at least {min} intervals of steady steps with work in flight, and a non-singular fit)\n"
            ));
            continue;
        };
        out.push_str(&format!(
            "{label} on completed rate vs Little's-law concurrency ({} of 100 ms in the steady steps): σ {} ± {}, κ {}{}, γ {}/s; {}\n",
            crate::units::count(u.points, "interval"),
            num(u.sigma),
            num(u.sigma_se),
            num(u.kappa),
            u.kappa_se.map(|s| format!(" ± {}", num(s))).unwrap_or_default(),
            num(u.gamma),
            peak(u)
        ));
    }
    out
}

fn full_variant(v: &VariantResult) -> String {
    let mut t = crate::report::table(&[
        "planned/s",
        "sent/s",
        "completed/s",
        "failed",
        "p50 µs",
        "p90 µs",
        "p99 µs",
        "p99.9 µs",
        "max µs",
        "p99 uncorr. µs",
        "queue p99 µs",
        "service µs",
        "lag p99 µs",
        "CPU %",
        "generator CPU %",
        "CPU-µs/tx",
        "cs/tx",
        "migr/tx",
        "syscalls/tx",
        "throttled",
        "valid",
    ]);
    for s in &v.steps {
        t.add_row(vec![
            num(s.planned_rate),
            num(s.sent_rate),
            num(s.completed_rate),
            s.failed.to_string(),
            pct_of(&s.latency, |p| p.p50),
            pct_of(&s.latency, |p| p.p90),
            pct_of(&s.latency, |p| p.p99),
            pct_of(&s.latency, |p| p.p999),
            pct_of(&s.latency, |p| p.max),
            pct_of(&s.latency_uncorrected, |p| p.p99),
            pct_of(&s.queue_wait, |p| p.p99),
            pct_of(&s.service_time, |p| p.mean),
            pct_of(&s.schedule_lag_us, |p| p.p99),
            f(s.cpu_pct),
            num(s.generator_cpu_pct),
            per_tx(s, figures::CPU_US),
            per_tx(s, figures::CONTEXT_SWITCHES),
            per_tx(s, figures::MIGRATIONS),
            per_tx(s, figures::SYSCALLS),
            match (s.throttled_periods, s.throttled_ms) {
                (Some(n), Some(ms)) => format!("{n} periods, {} ms", num(ms)),
                _ => "-".into(),
            },
            valid(s),
        ]);
    }
    format!("{}\n{t}\n{}{}", variant_title(v), knees(v), fits(v))
}

fn short_variant(v: &VariantResult) -> String {
    let mut t = narrow_table(&[
        "planned/s",
        "completed/s",
        "p50 µs",
        "p99 µs",
        "p99.9 µs",
        "p99 uncorr. µs",
        "CPU-µs/tx",
        "valid",
    ]);
    for s in &v.steps {
        t.add_row(vec![
            num(s.planned_rate),
            num(s.completed_rate),
            pct_of(&s.latency, |p| p.p50),
            pct_of(&s.latency, |p| p.p99),
            pct_of(&s.latency, |p| p.p999),
            pct_of(&s.latency_uncorrected, |p| p.p99),
            per_tx(s, figures::CPU_US),
            valid(s),
        ]);
    }
    let usl_line = match &v.usl {
        Some(u) => format!("USL: σ {}, κ {}; {}\n", num(u.sigma), num(u.kappa), peak(u)),
        None => "USL: not fitted\n".into(),
    };
    let title = super::wrap(&variant_title(v));
    format!("{title}{t}\n{}{usl_line}", knees(v))
}

fn comparison(c: &Comparison) -> String {
    let mut out = format!(
        "Winner: {} (most steps with the lowest p99; {}). Per step:\n",
        c.winner.as_deref().unwrap_or("none"),
        c.test
    );
    for s in &c.steps {
        if !s.compared {
            out.push_str(&format!(
                "  {}/s: not compared ({})\n",
                num(s.rate),
                s.why.as_deref().unwrap_or("")
            ));
            continue;
        }
        let others: Vec<String> = s
            .others
            .iter()
            .flatten()
            .map(|(k, v)| {
                format!(
                    "{k} {} µs ({})",
                    f(v.median_interval_p99_us),
                    if v.real {
                        "real difference"
                    } else {
                        "not significant"
                    }
                )
            })
            .collect();
        out.push_str(&format!(
            "  {}/s: {} {} µs; {}\n",
            num(s.rate),
            s.best.as_deref().unwrap_or(""),
            f(s.best_median_interval_p99_us),
            others.join("; ")
        ));
    }
    out
}

/// What follows the variants: comparison, scaling, what was not measured.
fn tail(ls: &Experiment) -> String {
    let mut out = String::new();
    if let Some(c) = &ls.comparison {
        out.push_str(&comparison(c));
    }
    if let Some(sc) = &ls.scaling {
        let pts: Vec<String> = sc
            .points
            .iter()
            .map(|p| {
                format!(
                    "{} {} {}/s",
                    p.workers,
                    // The worker count is an f64 here: one reads "worker", any other "workers".
                    crate::units::noun(u64::from(p.workers == 1.0), "worker"),
                    num(p.max_valid_completed_rate)
                )
            })
            .collect();
        out.push_str(&format!(
            "Scaling (highest valid completed rate per worker count): {}\n",
            pts.join(", ")
        ));
    }
    for (k, why) in &ls.unavailable {
        out.push_str(&format!("not measured: {k} per transaction: {why}\n"));
    }
    out
}

impl View for Loadstep {
    fn title(&self) -> &'static str {
        "Load steps"
    }

    fn applies(&self, doc: &RunDocument) -> bool {
        doc.loadstep.is_some()
    }

    fn summary(&self, doc: &RunDocument) -> String {
        let Some(ls) = &doc.loadstep else {
            return String::new();
        };
        let mut out: String = ls
            .variants
            .iter()
            .map(|v| short_variant(v) + "\n")
            .collect();
        for line in tail(ls).lines() {
            out.push_str(&super::wrap(line));
        }
        out
    }

    fn full(&self, doc: &RunDocument) -> String {
        let Some(ls) = &doc.loadstep else {
            return String::new();
        };
        let mut out: String = ls.variants.iter().map(|v| full_variant(v) + "\n").collect();
        out.push_str(&tail(ls));
        out
    }

    fn headline(&self, doc: &RunDocument) -> Vec<String> {
        let Some(ls) = &doc.loadstep else {
            return vec![];
        };
        let mut out: Vec<String> = ls
            .variants
            .iter()
            .flat_map(|v| {
                let mut l = vec![variant_title(v)];
                l.extend(knees(v).lines().map(str::to_string));
                l.extend(fits(v).lines().map(str::to_string));
                l
            })
            .collect();
        out.extend(tail(ls).lines().map(str::to_string));
        out
    }

    fn charts(&self, doc: &RunDocument) -> Vec<Chart> {
        let Some(ls) = &doc.loadstep else {
            return vec![];
        };
        ls.variants.iter().flat_map(variant_charts).collect()
    }
}

/// Per variant the latency percentiles and the cost per message against load, and the USL
/// curve with the measured points.
fn variant_charts(v: &VariantResult) -> Vec<Chart> {
    let name = variant_name(v);
    let series = |pick: &dyn Fn(&StepSummary) -> Option<f64>| -> Vec<(f64, f64)> {
        v.steps
            .iter()
            .filter_map(|s| Some((s.planned_rate, pick(s)?)))
            .collect()
    };
    let lat = LineChart::new(
        format!("Latency against load: {name}"),
        "planned messages/s",
        "µs (log)",
    )
    .log(false, true)
    .series("p50", series(&|s| s.latency.as_ref().map(|p| p.p50)))
    .series("p99", series(&|s| s.latency.as_ref().map(|p| p.p99)))
    .series("p99.9", series(&|s| s.latency.as_ref().map(|p| p.p999)))
    .series(
        "p99 uncorrected",
        series(&|s| s.latency_uncorrected.as_ref().map(|p| p.p99)),
    );
    let cost = LineChart::new(
        format!("Cost per message against load: {name}"),
        "planned messages/s",
        "CPU-µs per message",
    )
    .series(
        "CPU-µs/message",
        series(&|s| s.per_tx.get(figures::CPU_US).copied()),
    );
    let mut out = vec![Chart::Lines(lat), Chart::Lines(cost)];
    // The points the fit used: the intervals of the valid, steady steps.
    let measured: Vec<(f64, f64)> = v
        .steps
        .iter()
        .filter(|s| {
            s.valid && s.completed_rate >= crate::loadstep::experiment::STEADY_SHARE * s.sent_rate
        })
        .flat_map(|s| s.interval_points.iter().map(|p| (p[0], p[1])))
        .collect();
    if let (
        Some(Fit {
            sigma,
            kappa,
            gamma,
            ..
        }),
        false,
    ) = (&v.usl, measured.is_empty())
    {
        let top = measured.iter().map(|p| p.0).fold(0.0, f64::max) * 1.5;
        let curve = (1..=60)
            .map(|i| {
                let n = top * i as f64 / 60.0;
                (n, usl(n, *sigma, *kappa, *gamma))
            })
            .collect();
        out.push(Chart::Lines(
            LineChart::new(
                format!("USL fit on Little's-law concurrency: {name}"),
                "N = X·R (messages in flight)",
                "completed messages/s",
            )
            .series("measured (100 ms intervals of steady steps)", measured)
            .series(format!("USL σ {} κ {}", num(*sigma), num(*kappa)), curve),
        ));
    }
    out
}
