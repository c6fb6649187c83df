//! `truebench predict`: from stored load-step runs, the highest rate a service holds below a
//! p99 latency target under each capacity setting (CPU quota / cpuset width), and for a
//! target rate the smallest setting that holds it; each with a bootstrap interval over the
//! measured steps and the model it rests on (model.rs: utilisation law, USL contention,
//! M/M/c queue, quota throttling). When the runs cannot support a figure (no step near
//! saturation, a worker count below the asked width, a fit with a huge error), it says why
//! and gives none. The document is `truebench.predict/1`.

pub mod bisect;
pub mod calibrate;
pub mod evidence;
pub mod model;
pub mod queue;
pub mod text;

#[cfg(test)]
mod tests;

use crate::loadstep::capacity::{check_quota, period_spec, period_words, DEFAULT_PERIOD_US};
use crate::units::num;
use calibrate::Contention;
use evidence::Evidence;
use model::{Limit, Params, Setting};
use serde::Serialize;

pub const SCHEMA: &str = "truebench.predict/1";
/// Bootstrap resamples behind each interval.
pub const RESAMPLES: usize = 200;
/// An interval wider than this ratio (high ÷ low) is a fit with a huge error: no figure.
pub const MAX_INTERVAL_RATIO: f64 = 2.0;
/// Fewer valid steps with a cost per message than this support no prediction.
pub const MIN_STEPS: usize = 4;
/// The p99 target when none is given, µs.
pub const DEFAULT_P99_US: f64 = 5000.0;

/// What the user asks.
#[derive(Debug, Clone, PartialEq)]
pub struct Question {
    /// p99 target, µs.
    pub p99_us: f64,
    /// A target rate, messages/s: the smallest setting that holds it.
    pub rate: Option<f64>,
    /// Settings to predict; empty: the measured ones.
    pub capacity: Vec<Asked>,
}

/// A capacity setting asked about: quota and cpuset width in CPUs, and the quota period
/// when given (`0.6/2@5ms`); without one, the period the runs learnt at.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Asked {
    pub quota: f64,
    pub width: usize,
    /// µs.
    pub period_us: Option<u64>,
}

impl Asked {
    /// `Q/W`, with `@PERIOD` when one was given.
    pub fn name(&self) -> String {
        match self.period_us {
            Some(p) => format!(
                "{}@{}",
                capacity_name(self.quota, self.width, DEFAULT_PERIOD_US),
                period_spec(p)
            ),
            None => capacity_name(self.quota, self.width, DEFAULT_PERIOD_US),
        }
    }
}

/// A figure with its 95% bootstrap interval.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Estimate {
    pub value: f64,
    pub interval: Option<[f64; 2]>,
}

/// The calibrated inputs, for the reader to check.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Inputs {
    /// CPU-µs per message.
    pub cost_us: Estimate,
    pub cost_steps: usize,
    /// Saturated throughput ÷ the utilisation law's.
    pub efficiency: Estimate,
    pub saturated_steps: usize,
    /// The factor on the M/M/c time that makes the model's p99 (throttling included) the
    /// measured one (geometric median over the steps).
    pub latency_factor: Estimate,
    /// The load generator's CPUs at 1,000 messages/s more (slope) and at rate 0.
    pub generator_cpus_per_1000_per_s: f64,
    pub generator_cpus_at_0: f64,
    pub sigma: f64,
    pub kappa: f64,
    pub contention_source: String,
    /// The highest share of its ceiling a measured step was planned at.
    pub highest_step_share_of_ceiling: f64,
    pub machine_cpus: usize,
    pub period_ms: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SettingPrediction {
    /// `QUOTA/WIDTH`, e.g. "1.8/2", with `@PERIOD` at a period other than 100 ms
    /// ("0.6/2@5ms").
    pub capacity: String,
    pub quota: f64,
    pub width: usize,
    /// The quota's CFS period, ms: the runs' (a prediction holds at the period it learnt).
    pub period_ms: f64,
    /// The highest rate held below the p99 target, messages/s; null with `why_not`.
    pub max_rate: Option<f64>,
    /// Its 95% bootstrap interval, messages/s.
    pub interval: Option<[f64; 2]>,
    /// The throughput ceiling (utilisation law), messages/s.
    pub ceiling: Option<f64>,
    pub limited_by: Option<Limit>,
    /// The model it rests on, in words.
    pub model: String,
    /// Whether a run measured this setting, and the highest rate held there below the
    /// target (a valid steady step), messages/s.
    pub measured: bool,
    pub measured_max_rate: Option<f64>,
    pub why_not: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Needed {
    /// The target rate, messages/s.
    pub rate: f64,
    /// The smallest setting that holds it, `QUOTA/WIDTH`.
    pub capacity: Option<String>,
    pub quota: Option<f64>,
    pub width: Option<usize>,
    /// The 95% bootstrap interval of the quota needed at that width, CPUs.
    pub interval: Option<[f64; 2]>,
    pub model: String,
    pub why_not: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Prediction {
    pub schema: &'static str,
    pub runs: Vec<String>,
    pub workload: Option<String>,
    pub service_us: Option<f64>,
    pub workers: Vec<usize>,
    pub p99_target_us: f64,
    pub rate_unit: &'static str,
    /// False when the runs cannot support any prediction; `why_not` says why.
    pub supported: bool,
    pub why_not: Option<String>,
    pub inputs: Option<Inputs>,
    pub settings: Vec<SettingPrediction>,
    pub needed: Option<Needed>,
}

/// `Q/W` as the user writes it, with `@PERIOD` at a period other than 100 ms.
pub fn capacity_name(quota: f64, width: usize, period_us: u64) -> String {
    if period_us == DEFAULT_PERIOD_US {
        format!("{}/{width}", num_plain(quota))
    } else {
        format!("{}/{width}@{}", num_plain(quota), period_spec(period_us))
    }
}

fn num_plain(v: f64) -> String {
    let s = format!("{v:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Parse `Q/W[@PERIOD]` (quota in CPUs, width in CPUs, the quota period).
pub fn parse_capacity(s: &str) -> Result<Asked, String> {
    let c = crate::loadstep::capacity::parse_setting(s)?;
    Ok(Asked {
        quota: c.quota,
        width: c.width,
        period_us: s.contains('@').then_some(c.period_us),
    })
}

fn refused(runs: Vec<String>, q: &Question, why: String) -> Prediction {
    Prediction {
        schema: SCHEMA,
        runs,
        workload: None,
        service_us: None,
        workers: vec![],
        p99_target_us: q.p99_us,
        rate_unit: "messages per second",
        supported: false,
        why_not: Some(why),
        inputs: None,
        settings: vec![],
        needed: None,
    }
}

fn contention(e: &Evidence) -> Contention {
    let measured_parallel = e
        .variants
        .iter()
        .filter(|v| !v.steps.is_empty())
        .map(|v| v.width.min(v.workers))
        .max()
        .unwrap_or(1);
    match &e.scaling {
        Some((f, run)) => Contention {
            sigma: f.sigma,
            kappa: f.kappa,
            source: format!(
                "USL fit across worker counts of run {run}: σ {} ± {}, κ {}{}",
                num(f.sigma),
                num(f.sigma_se),
                num(f.kappa),
                f.kappa_se.map(|s| format!(" ± {}", num(s))).unwrap_or_default()
            ),
            measured_parallel,
        },
        None => Contention {
            sigma: 0.0,
            kappa: 0.0,
            source: format!(
                "assumed none (σ = κ = 0): no run measured a scaling curve; the runs used at most {} in parallel",
                crate::units::count(measured_parallel, "CPU")
            ),
            measured_parallel,
        },
    }
}

/// Why a setting gets no figure before any model runs; None when it may get one.
/// `period_us`: the period asked, when one was.
fn setting_refusal(
    e: &Evidence,
    c: &Contention,
    quota: f64,
    width: usize,
    period_us: Option<u64>,
) -> Option<String> {
    if let Some(p) = period_us.filter(|p| *p != e.period_us) {
        return Some(format!(
            "asked at a {} quota period, and the runs learnt at {}: the period decides how long a throttled message waits (up to the period less the quota's share of it), so a prediction holds at the period it learnt; measure under --quota-period {} (or ask at @{})",
            period_words(p),
            period_words(e.period_us),
            period_spec(p),
            period_spec(e.period_us)
        ));
    }
    if let Err(why) = check_quota(quota, e.period_us) {
        return Some(format!("a quota of {} CPUs: {why}", num(quota)));
    }
    let workers: Vec<usize> = {
        let mut w: Vec<usize> = e.variants.iter().map(|v| v.workers).collect();
        w.sort_unstable();
        w.dedup();
        w
    };
    let most = *workers.last().unwrap_or(&1);
    if width > e.machine_cpus {
        return Some(format!(
            "a width of {width} CPUs: the runs' machine has {} usable {} (a prediction is for the machine measured)",
            e.machine_cpus,
            crate::units::noun(e.machine_cpus, "CPU")
        ));
    }
    if let Err(why) = crate::loadstep::capacity::check_within_width(quota, width) {
        return Some(why);
    }
    if width > most && c.measured_parallel < width {
        return Some(format!(
            "the runs measured {} {} only: at a width of {width} CPUs the service would need more workers, and how it scales across them was not measured (run loadstep with --workers {width} or a list)",
            workers.iter().map(|w| w.to_string()).collect::<Vec<_>>().join(","),
            // One count of one worker reads "1 worker"; "2" or "1,2" the plural.
            crate::units::noun(if workers == [1] { 1 } else { 2 }, "worker")
        ));
    }
    if let Some((f, _)) = &e.scaling {
        if width > c.measured_parallel && f.sigma_se > (2.0 * f.sigma).max(0.1) {
            return Some(format!(
                "the scaling fit's contention σ {} ± {} is too uncertain to extrapolate to {width} CPUs",
                num(f.sigma),
                num(f.sigma_se)
            ));
        }
    }
    None
}

/// The highest planned rate of a measured setting held below the target: a valid steady
/// step with its p99 at most the target.
fn measured_max(e: &Evidence, quota: f64, width: usize, p99_us: f64) -> (bool, Option<f64>) {
    let of: Vec<_> = e
        .variants
        .iter()
        .filter(|v| {
            v.capacity_policy
                && (v.quota - quota).abs() < 1e-9
                && v.width == width
                && v.period_us == e.period_us
        })
        .collect();
    let top = of
        .iter()
        .flat_map(|v| &v.steps)
        .filter(|o| o.steady && o.p99_us.is_some_and(|p| p <= p99_us))
        .map(|o| o.rate)
        .fold(None, |a: Option<f64>, r| Some(a.map_or(r, |a| a.max(r))));
    (!of.is_empty(), top)
}

fn estimate(point: f64, samples: &mut [f64]) -> Estimate {
    Estimate {
        value: point,
        interval: calibrate::interval(samples).map(|(a, b)| [a, b]),
    }
}

fn model_words(p: &Params, s: &Setting, c: &Contention, why: Limit) -> String {
    let r = p.ceiling(s).0;
    let par = p.parallel(s, r);
    let servers = s.width.min(s.workers).max(1);
    format!(
        "utilisation law: ceiling = {} × min(quota {} CPUs, {} parallel CPUs{}) / {} CPU-µs per message = {}/s; USL contention {}; M/M/{servers} p99 × {} (calibrated on the measured steps); CFS period {}{}; bound by {}",
        num(p.efficiency),
        num(s.quota),
        num(par),
        if s.generator_in_quota {
            String::from(", the load generator inside the quota")
        } else if par < s.width.min(s.workers) as f64 {
            format!(" after {} CPU for the load generator", num(s.width.min(s.workers) as f64 - par))
        } else {
            String::new()
        },
        num(p.cost_us),
        num(r),
        if c.sigma == 0.0 && c.kappa == 0.0 {
            "none (assumed)".to_string()
        } else {
            format!("σ {} κ {}", num(c.sigma), num(c.kappa))
        },
        num(p.latency_factor),
        period_words((s.period_s * 1e6).round() as u64),
        match queue::throttled_phase_s(s.period_s, s.quota, par) {
            t if t > 0.0 => format!(
                " (a throttled message waits up to {})",
                crate::units::duration_ns(t * 1e9)
            ),
            _ => String::new(),
        },
        why.words()
    ) + &spin_words(p, s)
}

/// What the generator's spin does to a setting, when it bounds it: the rate from which the
/// producer spins a CPU and what the service keeps then.
fn spin_words(p: &Params, s: &Setting) -> String {
    let Some(from) = p.generator_spins_from else {
        return String::new();
    };
    let without = Params {
        generator_spins_from: None,
        ..*p
    };
    if p.ceiling(s).0 >= 0.999 * without.ceiling(s).0 {
        return String::new();
    }
    format!(
        "; from {}/s the load generator's producer spins a CPU through every gap between messages, leaving the service {} parallel CPUs, so the ceiling stops there (the interval also spans the producer taking only its share)",
        num(from),
        num(p.parallel(s, from))
    )
}

/// Predict: read the runs' evidence, calibrate, and answer the question.
pub fn predict(docs: &[crate::result::RunDocument], q: &Question) -> anyhow::Result<Prediction> {
    let runs: Vec<String> = docs.iter().map(|d| d.run_id.clone()).collect();
    let e = match evidence::read(docs)? {
        Ok(e) => e,
        Err(why) => return Ok(refused(runs, q, why)),
    };
    Ok(answer(&e, q))
}

/// Answer the question from the evidence.
pub fn answer(e: &Evidence, q: &Question) -> Prediction {
    let c = contention(e);
    let mut workers: Vec<usize> = e.variants.iter().map(|v| v.workers).collect();
    workers.sort_unstable();
    workers.dedup();
    let mut out = refused(e.runs.clone(), q, String::new());
    out.workload = Some(e.workload.clone());
    out.service_us = Some(e.service_us);
    out.workers = workers.clone();
    let Some(p) = calibrate::fit(&e.variants, e.machine_cpus, &c) else {
        out.why_not = Some(
            "no valid steady step has a CPU cost per message (an http run without --pid or --server does not measure the server's CPU; a step past saturation costs the backlog, not a message): the utilisation law has nothing to rest on".into(),
        );
        return out;
    };
    let with_cost = e
        .variants
        .iter()
        .flat_map(|v| &v.steps)
        .filter(|o| o.steady && o.cost_us.is_some())
        .count();
    if with_cost < MIN_STEPS {
        out.why_not = Some(format!(
            "only {} with a CPU cost per message (at least {MIN_STEPS} are needed): the others were past saturation, or in them the load generator could not keep its schedule (a busy machine?) or the step was interrupted",
            crate::units::count(with_cost, "valid steady step")
        ));
        return out;
    }
    if let Some(cv) = calibrate::cost_cv(e).filter(|cv| *cv > calibrate::MAX_COST_CV) {
        out.why_not = Some(format!(
            "the CPU cost per message varies {:.0}% (coefficient of variation) across the steps: a fit with a huge error",
            cv * 100.0
        ));
        return out;
    }
    let (top, saturated) = calibrate::saturation(e, &p);
    if top < calibrate::NEAR_SATURATION && !saturated {
        let ceilings: Vec<String> = e
            .variants
            .iter()
            .map(|v| {
                format!(
                    "{} about {}/s",
                    v.label,
                    num(p.ceiling(&calibrate::setting_of(v, e.machine_cpus)).0)
                )
            })
            .collect();
        out.why_not = Some(format!(
            "no step near saturation: the highest valid step was planned at {:.0}% of its setting's ceiling by the utilisation law ({}), so the rise of latency toward the knee is not in the data; run loadstep with rates up to the ceiling",
            top * 100.0,
            ceilings.join(", ")
        ));
        return out;
    }
    let boot = calibrate::bootstrap(e, &c, RESAMPLES, 1);
    let pick = |f: fn(&Params) -> f64| -> Vec<f64> { boot.iter().map(f).collect() };
    let generator_in_quota = e
        .variants
        .iter()
        .filter(|v| v.capacity_policy)
        .any(|v| v.generator_in_quota);
    let most_workers = *workers.last().unwrap_or(&1);
    let setting = |quota: f64, width: usize| Setting {
        quota,
        width,
        workers: most_workers,
        generator_in_quota,
        machine_cpus: e.machine_cpus,
        period_s: e.period_us as f64 * 1e-6,
    };
    out.inputs = Some(Inputs {
        cost_us: estimate(p.cost_us, &mut pick(|b| b.cost_us)),
        cost_steps: e
            .variants
            .iter()
            .flat_map(|v| &v.steps)
            .filter(|o| o.steady && o.cost_us.is_some())
            .count(),
        efficiency: estimate(p.efficiency, &mut pick(|b| b.efficiency)),
        saturated_steps: e
            .variants
            .iter()
            .flat_map(|v| &v.steps)
            .filter(|o| !o.steady)
            .count(),
        latency_factor: estimate(p.latency_factor, &mut pick(|b| b.latency_factor)),
        generator_cpus_per_1000_per_s: p.generator_per_rate * 1000.0,
        generator_cpus_at_0: p.generator_base,
        sigma: c.sigma,
        kappa: c.kappa,
        contention_source: c.source.clone(),
        highest_step_share_of_ceiling: top,
        machine_cpus: e.machine_cpus,
        period_ms: e.period_us as f64 / 1e3,
    });
    let asked: Vec<Asked> = if q.capacity.is_empty() {
        let mut m: Vec<Asked> = Vec::new();
        for v in e.variants.iter().filter(|v| !v.steps.is_empty()) {
            if !m
                .iter()
                .any(|a| (a.quota - v.quota).abs() < 1e-9 && a.width == v.width)
            {
                m.push(Asked {
                    quota: v.quota,
                    width: v.width,
                    period_us: None,
                });
            }
        }
        m
    } else {
        q.capacity.clone()
    };
    let target_s = q.p99_us * 1e-6;
    out.settings = asked
        .iter()
        .map(|a| {
            let (quota, width) = (a.quota, a.width);
            let s = setting(quota, width);
            let (measured, measured_max_rate) = measured_max(e, quota, width, q.p99_us);
            let period_us = a.period_us.unwrap_or(e.period_us);
            let mut sp = SettingPrediction {
                capacity: match a.period_us {
                    Some(_) => a.name(),
                    None => capacity_name(quota, width, period_us),
                },
                quota,
                width,
                period_ms: period_us as f64 / 1e3,
                max_rate: None,
                interval: None,
                ceiling: None,
                limited_by: None,
                model: String::new(),
                measured,
                measured_max_rate,
                why_not: setting_refusal(e, &c, quota, width, a.period_us),
            };
            if sp.why_not.is_some() {
                return sp;
            }
            sp.ceiling = Some(p.ceiling(&s).0);
            let Some((rate, why)) = p.max_rate(&s, target_s) else {
                sp.why_not = Some(format!(
                    "no rate holds a p99 of {} µs: the calibrated p99 of a single message is above it",
                    num(q.p99_us)
                ));
                return sp;
            };
            sp.model = model_words(&p, &s, &c, why);
            // Where the generator's producer spins a CPU from some rate on, it mostly takes
            // the whole CPU there, and sometimes only its share beside the service's busy
            // workers: the interval spans both (each resample with and without the spin).
            let mut rates: Vec<f64> = boot
                .iter()
                .flat_map(|b| {
                    let without = b.generator_spins_from.map(|_| Params {
                        generator_spins_from: None,
                        ..*b
                    });
                    std::iter::once(*b).chain(without)
                })
                .map(|b| b.max_rate(&s, target_s).map_or(0.0, |r| r.0))
                .collect();
            let iv = calibrate::interval(&mut rates);
            if let Some((lo, hi)) = iv {
                if lo <= 0.0 || hi / lo > MAX_INTERVAL_RATIO {
                    sp.why_not = Some(format!(
                        "the fit's error is huge: resampling the steps puts the rate anywhere from {}/s to {}/s",
                        num(lo),
                        num(hi)
                    ));
                    return sp;
                }
            }
            sp.max_rate = Some(rate);
            sp.interval = iv.map(|(a, b)| [a, b]);
            sp.limited_by = Some(why);
            sp
        })
        .collect();
    out.needed = q.rate.map(|r| needed(e, &c, &p, &boot, q, r, &setting));
    out.supported = true;
    out.why_not = None;
    out
}

/// The smallest setting that holds `rate` below the target: per width (the asked settings'
/// widths, or every width of the machine) the smallest quota, then the smallest of those.
fn needed(
    e: &Evidence,
    c: &Contention,
    p: &Params,
    boot: &[Params],
    q: &Question,
    rate: f64,
    setting: &dyn Fn(f64, usize) -> Setting,
) -> Needed {
    let target_s = q.p99_us * 1e-6;
    let widths: Vec<usize> = if q.capacity.is_empty() {
        (1..=e.machine_cpus).collect()
    } else {
        let mut w: Vec<usize> = q.capacity.iter().map(|c| c.width).collect();
        w.sort_unstable();
        w.dedup();
        w
    };
    let mut best: Option<(f64, usize, Option<String>)> = None;
    let mut refusals = Vec::new();
    for w in widths {
        if let Some(why) = setting_refusal(e, c, w as f64, w, None) {
            refusals.push(format!("width {w}: {why}"));
            continue;
        }
        let Some(qn) = p.needed_quota(&setting(w as f64, w), rate, target_s) else {
            continue;
        };
        // With asked settings: the smallest of them at this width with at least that quota.
        let chosen = if q.capacity.is_empty() {
            Some((qn, None))
        } else {
            q.capacity
                .iter()
                .filter(|a| {
                    a.width == w
                        && a.quota + 1e-9 >= qn
                        && a.period_us.is_none_or(|p| p == e.period_us)
                })
                .map(|a| a.quota)
                .min_by(f64::total_cmp)
                .map(|qq| (qq, Some(capacity_name(qq, w, e.period_us))))
        };
        if let Some((qq, name)) = chosen {
            if best.as_ref().is_none_or(|b| qq < b.0) {
                best = Some((qq, w, name));
            }
        }
    }
    let Some((quota, width, name)) = best else {
        return Needed {
            rate,
            capacity: None,
            quota: None,
            width: None,
            interval: None,
            model: String::new(),
            why_not: Some(if refusals.is_empty() {
                format!(
                    "no setting {} holds {}/s at a p99 of {} µs",
                    if q.capacity.is_empty() {
                        "of this machine"
                    } else {
                        "asked"
                    },
                    num(rate),
                    num(q.p99_us)
                )
            } else {
                refusals.join("; ")
            }),
        };
    };
    let s = setting(quota, width);
    let mut qs: Vec<f64> = boot
        .iter()
        .map(|b| {
            b.needed_quota(&setting(width as f64, width), rate, target_s)
                .unwrap_or(f64::INFINITY)
        })
        .collect();
    let iv = calibrate::interval(&mut qs)
        .filter(|(_, hi)| hi.is_finite())
        .map(|(a, b)| [a, b]);
    let why = p.max_rate(&s, target_s).map_or(Limit::Latency, |r| r.1);
    Needed {
        rate,
        capacity: Some(name.unwrap_or_else(|| capacity_name(quota, width, e.period_us))),
        quota: Some(quota),
        width: Some(width),
        interval: iv,
        model: model_words(p, &s, c, why),
        why_not: None,
    }
}

/// A measured setting's latency curve beside the model's: for the report.
#[derive(Debug, Clone, PartialEq)]
pub struct Curve {
    pub capacity: String,
    /// (planned rate /s, p99 µs) of the valid steps.
    pub measured: Vec<(f64, f64)>,
    /// (rate /s, predicted p99 µs) up to the ceiling.
    pub model: Vec<(f64, f64)>,
    pub max_rate: Option<f64>,
    pub interval: Option<[f64; 2]>,
}

/// The prediction for the settings a run measured, and per setting its measured and
/// predicted p99 curves (none when the run cannot support a prediction).
pub fn curves(doc: &crate::result::RunDocument, p99_us: f64) -> (Prediction, Vec<Curve>) {
    let q = Question {
        p99_us,
        rate: None,
        capacity: vec![],
    };
    let e = match evidence::read(std::slice::from_ref(doc)) {
        Ok(Ok(e)) => e,
        Ok(Err(why)) => return (refused(vec![doc.run_id.clone()], &q, why), vec![]),
        Err(e) => return (refused(vec![doc.run_id.clone()], &q, e.to_string()), vec![]),
    };
    let pred = answer(&e, &q);
    let c = contention(&e);
    let Some(p) = calibrate::fit(&e.variants, e.machine_cpus, &c).filter(|_| pred.supported) else {
        return (pred, vec![]);
    };
    let curves = pred
        .settings
        .iter()
        .filter_map(|sp| {
            let v = e
                .variants
                .iter()
                .find(|v| (v.quota - sp.quota).abs() < 1e-9 && v.width == sp.width)?;
            let s = calibrate::setting_of(v, e.machine_cpus);
            let x = p.ceiling(&s).0;
            Some(Curve {
                capacity: sp.capacity.clone(),
                measured: v
                    .steps
                    .iter()
                    .filter_map(|o| Some((o.rate, o.p99_us?)))
                    .collect(),
                model: (1..=60)
                    .filter_map(|i| {
                        let r = x * (0.05 + 0.945 * i as f64 / 60.0);
                        Some((r, p.p99_s(&s, r)? * 1e6))
                    })
                    .collect(),
                max_rate: sp.max_rate,
                interval: sp.interval,
            })
        })
        .collect();
    (pred, curves)
}
