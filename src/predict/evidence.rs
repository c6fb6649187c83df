//! What a prediction rests on, read from stored load-step runs: per measured variant its
//! capacity setting (CPU quota × cpuset width; the run's own limits when it ran without
//! one), worker count, whether its load generator shared the quota, and per step the
//! planned and completed rates, the p99 latency, the service's CPU cost per message, the
//! generator's CPU and the throttling. Runs that hold nothing to predict from (a batch
//! experiment, no load steps) are refused here, in a sentence.

use crate::loadstep::capacity::{period_words, DEFAULT_PERIOD_US};
use crate::loadstep::step::StepSummary;
use crate::result::{figures, RunDocument};

/// One measured step, in the units the models use.
#[derive(Debug, Clone, PartialEq)]
pub struct Obs {
    /// Planned and completed rates, messages per second.
    pub rate: f64,
    pub completed: f64,
    /// The step completed at least 98% of what was sent (a steady state).
    pub steady: bool,
    /// p99 latency, µs (from the due time).
    pub p99_us: Option<f64>,
    /// The service's CPU per completed message, µs.
    pub cost_us: Option<f64>,
    /// The load generator's CPU, in CPUs.
    pub generator_cpus: f64,
    pub throttled_periods: Option<u64>,
}

/// One measured variant (placement policy × workers × capacity setting).
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    pub run_id: String,
    pub label: String,
    /// Quota in CPUs and cpuset width in CPUs.
    pub quota: f64,
    pub width: usize,
    /// Whether the setting was a capacity policy (else the run's own limits).
    pub capacity_policy: bool,
    /// The quota's CFS period, µs (a capacity policy's; else the run's cgroup's, or the
    /// kernel's default 100 ms when unknown).
    pub period_us: u64,
    pub workers: usize,
    /// The load generator ran inside the quota (cgroup v2, or a process-wide quota).
    pub generator_in_quota: bool,
    /// Threads of the load generator that can run at once: the producer (mq), or the
    /// producer and one per connection (http, where truebench's whole process is the
    /// generator).
    pub generator_threads: usize,
    /// The rate from which the generator spins a CPU through every gap (mq's producer);
    /// None where it never does (http). Runs made before 2026-11-23 12:36 UTC spun from
    /// 5,000/s (gaps under 200 µs): their generator line, fitted on what was measured,
    /// already carries that CPU below 20,000/s.
    pub generator_spins_from: Option<f64>,
    /// The valid steps (the generator kept its schedule).
    pub steps: Vec<Obs>,
}

/// Everything read from the runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Evidence {
    pub runs: Vec<String>,
    pub workload: String,
    pub service_us: f64,
    /// CPUs the runs' process could use (the machine the prediction is for).
    pub machine_cpus: usize,
    pub variants: Vec<Measured>,
    /// The quota period the capacity settings ran at, µs: one per prediction.
    pub period_us: u64,
    /// A USL fit of the highest valid rate across worker counts, from a run without
    /// capacity policies (`loadstep --workers 1,2,4`), and that run's id.
    pub scaling: Option<(crate::loadstep::model::Fit, String)>,
}

fn obs(s: &StepSummary) -> Obs {
    Obs {
        rate: s.planned_rate,
        completed: s.completed_rate,
        steady: s.completed_rate >= crate::loadstep::experiment::STEADY_SHARE * s.sent_rate,
        p99_us: s.latency.as_ref().map(|l| l.p99),
        cost_us: s
            .per_tx
            .get(figures::CPU_US)
            .copied()
            .filter(|c| *c > 0.0 && c.is_finite()),
        generator_cpus: s.generator_cpu_pct / 100.0,
        throttled_periods: s.throttled_periods,
    }
}

/// Why a run cannot be read for a prediction; Ok with its variants otherwise.
fn variants_of(doc: &RunDocument) -> Result<Vec<Measured>, String> {
    let Some(ls) = &doc.loadstep else {
        return Err(if doc.experiment.is_some() {
            format!(
                "run {} is a batch experiment: it timed a command to completion, with no rates or latency to predict a service's capacity from (use `truebench loadstep`)",
                doc.run_id
            )
        } else {
            format!(
                "run {} has no load steps (suites: {})",
                doc.run_id,
                doc.suites.join(", ")
            )
        });
    };
    let cpus = &doc.env.cpus;
    let own_period = doc
        .env
        .cgroup
        .as_ref()
        .and_then(|c| c.period_us)
        .and_then(|p| u64::try_from(p).ok())
        .filter(|p| *p > 0)
        .unwrap_or(DEFAULT_PERIOD_US);
    Ok(ls
        .variants
        .iter()
        .map(|v| {
            let (quota, width, policy) = match v.capacity {
                Some(c) => (c.quota, c.width, true),
                None => (
                    cpus.capacity,
                    v.pinned_cpus
                        .as_ref()
                        .map(|p| {
                            let mut u = p.clone();
                            u.sort_unstable();
                            u.dedup();
                            u.len()
                        })
                        .unwrap_or(cpus.usable_width)
                        .max(1),
                    false,
                ),
            };
            let generator_in_quota = if policy {
                v.capacity_note
                    .as_deref()
                    .is_some_and(|n| n.contains(crate::loadstep::capacity::GENERATOR_INCLUDED))
            } else {
                cpus.cgroup_quota.is_some()
            };
            Measured {
                run_id: doc.run_id.clone(),
                label: match v.capacity {
                    Some(c) => format!("{} x{} {}", v.policy, v.workers, c.spec()),
                    None => format!("{} x{}", v.policy, v.workers),
                },
                quota,
                width,
                capacity_policy: policy,
                period_us: v.capacity.map_or(own_period, |c| c.period_us),
                workers: v.workers,
                generator_in_quota,
                generator_threads: if ls.workload == "http" {
                    v.workers + 1
                } else {
                    1
                },
                generator_spins_from: (ls.workload != "http")
                    .then(crate::loadstep::mq::producer_spins_from),
                steps: v.steps.iter().filter(|s| s.valid).map(obs).collect(),
            }
        })
        .collect())
}

/// Read the runs: load-step runs of one workload and service, one machine. A run that is
/// not a load-step run, or a mix, is bad input (Err, exit 2); runs that cannot support a
/// prediction (quota periods that differ) are `Ok(Err(why))`: said plainly, exit 0.
pub fn read(docs: &[RunDocument]) -> anyhow::Result<Result<Evidence, String>> {
    let mut variants = Vec::new();
    let mut kind: Option<(String, f64, Option<String>)> = None;
    let mut host: Option<Option<String>> = None;
    for d in docs {
        let vs = variants_of(d).map_err(|why| {
            crate::error::usage_hint(
                why,
                "predict reads `truebench loadstep` runs (`truebench history` lists the runs)",
            )
        })?;
        let ls = d.loadstep.as_ref().expect("checked by variants_of");
        let this = (ls.workload.clone(), ls.plan.service_us, ls.target.clone());
        match &kind {
            Some(k) if *k != this => {
                return Err(crate::error::usage_hint(
                    format!(
                        "run {} drove {} ({} µs of service{}), another run {} ({} µs{}): one prediction rests on one workload",
                        d.run_id,
                        this.0,
                        this.1,
                        this.2.as_deref().map(|t| format!(", {t}")).unwrap_or_default(),
                        k.0,
                        k.1,
                        k.2.as_deref().map(|t| format!(", {t}")).unwrap_or_default()
                    ),
                    "give runs of the same workload",
                ))
            }
            _ => kind = Some(this),
        }
        match &host {
            Some(h) if *h != d.host => {
                return Err(crate::error::usage_hint(
                    format!(
                        "run {} was measured on {}, another on {}: a prediction is for the machine its runs measured",
                        d.run_id,
                        d.host.as_deref().unwrap_or("an unnamed host"),
                        h.as_deref().unwrap_or("an unnamed host")
                    ),
                    "give runs of one host",
                ))
            }
            _ => host = Some(d.host.clone()),
        }
        variants.extend(vs);
    }
    let Some((workload, service_us, _)) = kind else {
        return Ok(Err("no run given".into()));
    };
    let period_us = match one_period(&variants) {
        Ok(p) => p,
        Err(why) => return Ok(Err(why)),
    };
    Ok(Ok(Evidence {
        runs: docs.iter().map(|d| d.run_id.clone()).collect(),
        workload,
        service_us,
        machine_cpus: docs
            .iter()
            .map(|d| d.env.cpus.usable_width)
            .max()
            .unwrap_or(1)
            .max(1),
        scaling: docs.iter().find_map(|d| {
            let ls = d.loadstep.as_ref()?;
            if ls.variants.iter().any(|v| v.capacity.is_some()) {
                return None;
            }
            Some((ls.scaling.as_ref()?.usl.clone()?, d.run_id.clone()))
        }),
        variants,
        period_us,
    }))
}

/// The one quota period of the variants that ran under a quota (capacity policies first;
/// else the run's own cgroup's). Variants learnt at different periods are refused: the
/// period decides how long a throttled message waits, so what one period taught does not
/// carry to another.
pub fn one_period(variants: &[Measured]) -> Result<u64, String> {
    let mut periods: Vec<(u64, &str)> = variants
        .iter()
        .filter(|v| v.capacity_policy)
        .map(|v| (v.period_us, v.label.as_str()))
        .collect();
    if periods.is_empty() {
        periods = variants
            .iter()
            .map(|v| (v.period_us, v.label.as_str()))
            .collect();
    }
    let first = periods.first().map_or(DEFAULT_PERIOD_US, |p| p.0);
    if let Some((other, label)) = periods.iter().find(|p| p.0 != first) {
        return Err(format!(
            "the runs' quotas ran at different CFS periods ({} in {}, {} in {label}): the period decides how long a throttled message waits, so a prediction learns at one period; predict from the runs of one period",
            period_words(first),
            periods[0].1,
            period_words(*other)
        ));
    }
    Ok(first)
}
