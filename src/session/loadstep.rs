//! `truebench loadstep`: an open-loop load-step experiment inside the session. The plan is
//! completed against the probed machine (default worker count and rates, cpuset widths
//! within the usable CPUs, capacity groups), then run; the document carries the plan, every
//! variant's steps, knee and fits, the scaling curve and the comparison of variants.

use super::{Measurement, Measuring};
use crate::error::{usage, usage_hint};
use crate::loadstep::experiment::{self, Config};
use crate::probe::ProbeDoc;
use crate::result::{RunDocument, SpeedPoint};
use crate::store::Location;
use std::io::IsTerminal;
use std::time::Duration;

/// A load-step experiment, as the command line asked for it.
#[derive(Debug, Clone)]
pub struct Options {
    /// `mq`, or `http` with `http` set.
    pub workload: String,
    /// `--http URL`, as given, and parsed.
    pub http_url: Option<String>,
    pub http: Option<crate::loadstep::http::Target>,
    /// `--pid`: the server's PID.
    pub server_pid: Option<i32>,
    /// `--server`: the command truebench starts per variant, and its readiness timeout.
    pub server: Option<(Vec<String>, Duration)>,
    /// Planned rates, per second (`--rates` or `--ramp`); None: from the workers' capacity.
    pub rates: Option<Vec<f64>>,
    pub step_duration_s: f64,
    pub warmup_s: f64,
    /// Worker counts; None: the usable CPUs.
    pub workers: Option<Vec<usize>>,
    pub service_us: f64,
    pub footprint_kb: usize,
    pub policies: Vec<crate::policy::Policy>,
    /// CPU quotas (CPUs), each against every cpuset width.
    pub cpu_quota: Option<Vec<f64>>,
    pub cpuset_width: Option<Vec<u32>>,
    /// The quota period of those settings, µs (`--quota-period`; default 100 ms).
    pub quota_period_us: u64,
    pub repeat: Option<u32>,
    pub json: bool,
}

/// The experiment inside the session.
pub struct LoadStep {
    o: Options,
    /// The complete plan, once checked against the machine.
    cfg: Option<Config>,
    /// How many variants (policy x workers x capacity) the plan compares.
    variants: usize,
}

impl LoadStep {
    /// An experiment with these options, checked against the machine by the session.
    pub fn new(o: Options) -> LoadStep {
        LoadStep {
            o,
            cfg: None,
            variants: 1,
        }
    }
}

impl Measurement for LoadStep {
    fn suites(&self) -> Vec<String> {
        vec!["loadstep".into()]
    }

    fn holder(&self) -> String {
        "truebench loadstep".into()
    }

    /// The load-step figures include this process's own CPU time per message.
    fn samples_noise(&self) -> bool {
        false
    }

    fn check(&mut self, env: &ProbeDoc) -> anyhow::Result<()> {
        let workers: Vec<usize> = match &self.o.workers {
            Some(w) => w.clone(),
            None => vec![env.cpus.usable_width.max(1)],
        };
        let rates = match self.o.rates.clone() {
            Some(r) => r,
            None if self.o.http.is_some() => {
                return Err(usage_hint(
                    "--http needs the load steps",
                    "give --rates LIST or --ramp FROM:TO:STEP",
                ))
            }
            None => {
                let cap = workers[0] as f64 * 1e6 / self.o.service_us.max(1.0);
                (1..=5).map(|i| (cap * i as f64 / 5.0).round()).collect()
            }
        };
        if let Some(bad) = rates.iter().find(|r| !(**r >= 1.0 && **r <= 5e6)) {
            return Err(usage(format!(
                "rate {bad}/s is outside 1 to 5,000,000 per second"
            )));
        }
        let measured: f64 = rates
            .iter()
            .map(|r| r * self.o.step_duration_s)
            .sum::<f64>()
            * self.o.repeat.unwrap_or(1) as f64
            * (self.o.policies.len()
                * workers.len()
                * self.o.cpu_quota.as_ref().map(|q| q.len()).unwrap_or(1)
                * self.o.cpuset_width.as_ref().map(|w| w.len()).unwrap_or(1)) as f64;
        if measured > 2e8 {
            return Err(usage_hint(
                format!("the plan measures {measured:.0} messages, each kept with its timestamps"),
                "shorten --step-duration or lower the rates",
            ));
        }
        for p in &self.o.policies {
            if let Some(why) = p.missing_privilege() {
                return Err(usage(format!("--policy {why}")));
            }
            if let Some(c) = p.capacity {
                if c.width > env.cpus.usable.len() {
                    return Err(usage(format!(
                        "--policy {p}: a cpuset of {}, and this process may use {}",
                        crate::units::count(c.width, "CPU"),
                        env.cpus.usable.len()
                    )));
                }
            }
        }
        let mut capacity = Vec::new();
        let mut unusable = Vec::new();
        for q in self.o.cpu_quota.iter().flatten() {
            crate::loadstep::capacity::check_quota(*q, self.o.quota_period_us)
                .map_err(|e| usage(format!("--cpu-quota {q}: {e}")))?;
            for w in self.o.cpuset_width.iter().flatten() {
                if *w as usize > env.cpus.usable.len() {
                    return Err(usage_hint(
                        format!(
                            "--cpuset-width {w}: this process may use {}",
                            crate::units::count(env.cpus.usable.len(), "CPU")
                        ),
                        "give widths up to the usable CPUs (truebench probe shows them)",
                    ));
                }
                // A quota above the width is never reached: that combination of the
                // two lists is not measured, said with the rule's message; when no
                // combination is left, the lists are refused with it.
                if let Err(why) = crate::loadstep::capacity::check_within_width(*q, *w as usize) {
                    unusable.push(format!("--cpu-quota {q} --cpuset-width {w}: {why}"));
                    continue;
                }
                capacity.push(crate::loadstep::capacity::Setting {
                    quota: *q,
                    width: *w as usize,
                    period_us: self.o.quota_period_us,
                });
            }
        }
        if capacity.is_empty() {
            if let Some(why) = unusable.first() {
                return Err(usage(why.clone()));
            }
        }
        for why in &unusable {
            eprintln!("truebench: not measured: {why}");
        }
        let own_capacity = self.o.policies.iter().any(|p| p.capacity.is_some());
        let layout = if capacity.is_empty() && !own_capacity {
            None
        } else {
            Some(
                crate::loadstep::capacity::Layout::live()
                    .map_err(|e| usage(format!("--cpu-quota: {e}")))?,
            )
        };
        self.variants = self.o.policies.len() * workers.len() * capacity.len().max(1);
        self.cfg = Some(Config {
            rates,
            warmup: Duration::from_secs_f64(self.o.warmup_s),
            measure: Duration::from_secs_f64(self.o.step_duration_s),
            workers,
            service_us: self.o.service_us,
            footprint_kb: self.o.footprint_kb,
            policies: self.o.policies.clone(),
            capacity,
            layout,
            repeat: self
                .o
                .repeat
                .map(|r| r as usize)
                .unwrap_or(if self.variants > 1 { 2 } else { 1 }),
            seed: crate::measure::clocks::now_ns(),
            http: self.o.http.clone(),
            server_pid: self.o.server_pid,
            server: self.o.server.clone(),
        });
        Ok(())
    }

    fn measure(&mut self, m: &mut Measuring) -> anyhow::Result<()> {
        let cfg = self
            .cfg
            .as_ref()
            .expect("the session checks the plan before measuring");
        let tty = std::io::stderr().is_terminal();
        let total = cfg.rates.len() * self.variants * cfg.repeat;
        let mut done = 0;
        let json = self.o.json;
        m.speed("loadstep", SpeedPoint::Start);
        let out = experiment::run(cfg, m.env, &mut |what| {
            done += 1;
            if tty || !json {
                eprintln!("truebench: step {done}/{total}: {what}");
            }
        })?;
        m.speed("loadstep", SpeedPoint::End);
        let (results, order, unavailable) = (out.variants, out.order, out.unavailable);
        m.interrupted = out.interrupted;
        let comparison = (results.len() > 1).then(|| experiment::compare(&results));
        let scaling = experiment::scaling(&results);
        let plan = crate::result::experiment::Plan {
            rates: cfg.rates.clone(),
            warmup_s: self.o.warmup_s,
            step_duration_s: self.o.step_duration_s,
            workers: cfg.workers.clone(),
            service_us: cfg.service_us,
            footprint_kb: cfg.footprint_kb,
            policies: cfg.policies.iter().map(|p| p.to_string()).collect(),
            repeat: cfg.repeat,
            seed: cfg.seed,
            order,
        };
        let workload = if self.o.http_url.is_some() {
            "http"
        } else {
            self.o.workload.as_str()
        };
        let ls = crate::result::Experiment::new(
            workload.to_string(),
            self.o.http_url.clone(),
            plan,
            results,
            comparison,
            scaling,
            unavailable,
        );
        m.doc.findings.extend(crate::findings::loadstep::throttled(
            &ls.variants,
            self.o.step_duration_s,
        ));
        m.doc.loadstep = Some(ls);
        Ok(())
    }

    fn print(&self, doc: &RunDocument, stored: Option<&Location>) -> anyhow::Result<()> {
        super::print_document(
            doc,
            self.o.json,
            crate::report::text::Detail::Summary,
            stored,
            "loadstep run",
        )
    }
}
