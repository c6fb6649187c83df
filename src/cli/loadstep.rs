//! `truebench loadstep`: drive the built-in message-processing service open-loop at fixed
//! rates, per placement policy and worker count, and print per step the rates, latency
//! percentiles (corrected and uncorrected), queue wait, cost per transaction and validity;
//! then the knee, the USL and Amdahl fits and which policy wins. Stored as a run.

use crate::error::{usage, usage_hint};
use crate::loadstep::experiment::{self, Config, POLICIES};
use crate::probe::{probe, sysroot::SysRoot};
use crate::report::units::num;
use crate::store::{default_path, Store};
use std::io::IsTerminal;
use std::path::Path;
use std::time::Duration;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The workload: `mq`, an in-process message-processing service (a paced producer, one
    /// queue, a pool of workers).
    #[arg(long, default_value = "mq", value_parser = ["mq"], conflicts_with = "http")]
    workload: String,
    /// Instead of mq: GET this http:// URL, each worker one keep-alive HTTP/1.1 connection
    /// (--workers = connections); latency from the planned send time.
    #[arg(long, value_name = "URL")]
    http: Option<String>,
    /// With --http: the server's PID, for its CPU, switches and system calls per request.
    #[arg(long, requires = "http")]
    pid: Option<i32>,
    /// Planned rates, messages per second, comma-separated (default: 20%..100% of the
    /// workers' nominal capacity, workers x 10^6 / service-us, in five steps).
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "LIST",
        conflicts_with = "ramp"
    )]
    rates: Option<Vec<f64>>,
    /// Rates from FROM to TO by STEP (e.g. 2000:10000:2000).
    #[arg(long, value_name = "FROM:TO:STEP")]
    ramp: Option<String>,
    /// Seconds measured per step.
    #[arg(long, default_value = "3", value_parser = super::parse_secs)]
    step_duration: f64,
    /// Seconds of warm-up before each step's measured window.
    #[arg(long, default_value = "0.5", value_parser = super::parse_secs)]
    warmup: f64,
    /// Worker threads; a list sweeps concurrency (1,2,4) for a scaling curve.
    #[arg(long, value_delimiter = ',', value_name = "N[,N...]", value_parser = clap::value_parser!(u32).range(1..=4096))]
    workers: Option<Vec<u32>>,
    /// CPU work per message, µs.
    #[arg(long, default_value = "50", value_parser = parse_service)]
    service_us: f64,
    /// KiB of its own memory each worker touches per message.
    #[arg(long, default_value_t = 0, value_name = "KB", value_parser = clap::value_parser!(u64).range(0..=1_048_576))]
    footprint: u64,
    /// Placement policies to compare, comma-separated: os (the scheduler), compact (workers
    /// packed on the fewest cores/LLCs), spread (across nodes, LLCs, cores), per-node
    /// (workers in groups, each confined to one NUMA node's CPUs with its memory bound there).
    #[arg(long, value_delimiter = ',', value_name = "LIST", default_value = "os")]
    policy: Vec<String>,
    /// Capacity policies (root): CPU quotas in CPUs, comma-separated, each run against every
    /// --cpuset-width in a cgroup truebench creates and removes (guaranteed capacity against
    /// virtual processors).
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "CPUS",
        requires = "cpuset_width"
    )]
    cpu_quota: Option<Vec<f64>>,
    /// Capacity policies: cpuset widths in CPUs, comma-separated (with --cpu-quota).
    #[arg(long, value_delimiter = ',', value_name = "N", requires = "cpu_quota", value_parser = clap::value_parser!(u32).range(1..=65_536))]
    cpuset_width: Option<Vec<u32>>,
    /// Runs of the whole plan per variant, in shuffled order (default 1, or 2 when several
    /// variants are compared).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=20))]
    repeat: Option<u32>,
    /// Print the run document as JSON instead of the tables.
    #[arg(long)]
    json: bool,
}

fn parse_service(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .parse()
        .map_err(|_| format!("'{s}' is not a number of µs"))?;
    if (0.0..=1e6).contains(&v) {
        Ok(v)
    } else {
        Err(format!("{v} µs is outside 0 to 10^6"))
    }
}

fn parse_ramp(s: &str) -> Result<Vec<f64>, String> {
    let p: Vec<f64> = s
        .split(':')
        .map(|x| x.parse::<f64>())
        .collect::<Result<_, _>>()
        .map_err(|_| format!("'{s}' is not FROM:TO:STEP"))?;
    let [from, to, step] = p[..] else {
        return Err(format!("'{s}' is not FROM:TO:STEP"));
    };
    if !(from > 0.0 && to >= from && step > 0.0) || (to - from) / step > 1000.0 {
        return Err(format!(
            "'{s}': need 0 < FROM <= TO, STEP > 0, at most 1000 steps"
        ));
    }
    let n = ((to - from) / step + 1e-9).floor() as usize;
    Ok((0..=n).map(|i| from + i as f64 * step).collect())
}

pub fn exec(a: Args, db: Option<&Path>) -> anyhow::Result<()> {
    for p in &a.policy {
        if !POLICIES.contains(&p.as_str()) {
            return Err(usage_hint(
                format!("unknown policy '{p}'"),
                format!("policies: {}", POLICIES.join(", ")),
            ));
        }
    }
    let http = match &a.http {
        Some(u) => {
            Some(crate::loadstep::http::parse_url(u).map_err(|e| usage(format!("--http {e}")))?)
        }
        None => None,
    };
    if let Some(t) = &http {
        std::net::TcpStream::connect(&t.addr).map_err(|e| {
            usage_hint(
                format!("--http: cannot connect to {}: {e}", t.addr),
                "start the server first",
            )
        })?;
    }
    if let Some(pid) = a.pid {
        if crate::observe::process::read(pid).is_none() {
            return Err(usage(format!("--pid {pid}: no such process")));
        }
    }
    let env = probe(&SysRoot::live());
    let workers: Vec<usize> = match &a.workers {
        Some(w) => w.iter().map(|x| *x as usize).collect(),
        None => vec![env.cpus.usable_width.max(1)],
    };
    let ramp = match &a.ramp {
        Some(r) => Some(parse_ramp(r).map_err(|e| usage(format!("--ramp {e}")))?),
        None => None,
    };
    let rates = match (a.rates.clone(), ramp) {
        (Some(r), _) | (None, Some(r)) => r,
        (None, None) if http.is_some() => {
            return Err(usage_hint(
                "--http needs the load steps",
                "give --rates LIST or --ramp FROM:TO:STEP",
            ))
        }
        (None, None) => {
            let cap = workers[0] as f64 * 1e6 / a.service_us.max(1.0);
            (1..=5).map(|i| (cap * i as f64 / 5.0).round()).collect()
        }
    };
    if let Some(bad) = rates.iter().find(|r| !(**r >= 1.0 && **r <= 5e6)) {
        return Err(usage(format!(
            "rate {bad}/s is outside 1 to 5,000,000 per second"
        )));
    }
    let measured: f64 = rates.iter().map(|r| r * a.step_duration).sum::<f64>()
        * a.repeat.unwrap_or(1) as f64
        * (a.policy.len()
            * workers.len()
            * a.cpu_quota.as_ref().map(|q| q.len()).unwrap_or(1)
            * a.cpuset_width.as_ref().map(|w| w.len()).unwrap_or(1)) as f64;
    if measured > 2e8 {
        return Err(usage_hint(
            format!("the plan measures {measured:.0} messages, each kept with its timestamps"),
            "shorten --step-duration or lower the rates",
        ));
    }
    let mut capacity = Vec::new();
    for q in a.cpu_quota.iter().flatten() {
        if !(*q > 0.0 && *q <= 65_536.0) {
            return Err(usage(format!(
                "--cpu-quota {q}: a quota is a positive number of CPUs"
            )));
        }
        for w in a.cpuset_width.iter().flatten() {
            if *w as usize > env.cpus.usable.len() {
                return Err(usage_hint(
                    format!(
                        "--cpuset-width {w}: this process may use {} CPUs",
                        env.cpus.usable.len()
                    ),
                    "give widths up to the usable CPUs (truebench probe shows them)",
                ));
            }
            capacity.push(crate::loadstep::capacity::Setting {
                quota: *q,
                width: *w as usize,
            });
        }
    }
    let layout = if capacity.is_empty() {
        None
    } else {
        Some(
            crate::loadstep::capacity::Layout::live()
                .map_err(|e| usage(format!("--cpu-quota: {e}")))?,
        )
    };
    let variants = a.policy.len() * workers.len() * capacity.len().max(1);
    let cfg = Config {
        rates,
        warmup: Duration::from_secs_f64(a.warmup),
        measure: Duration::from_secs_f64(a.step_duration),
        workers,
        service_us: a.service_us,
        footprint_kb: a.footprint as usize,
        policies: a.policy.clone(),
        capacity,
        layout,
        repeat: a
            .repeat
            .map(|r| r as usize)
            .unwrap_or(if variants > 1 { 2 } else { 1 }),
        seed: crate::measure::clocks::now_ns(),
        http: http.clone(),
        server_pid: a.pid,
    };
    let db_path = default_path(db)?;
    let mut store = Store::open_rw(&db_path)?;
    let _lock = crate::lock::acquire("truebench loadstep")?;
    crate::interrupt::install()?;
    let started = chrono::Utc::now();
    let tty = std::io::stderr().is_terminal();
    let total = cfg.rates.len() * variants * cfg.repeat;
    let mut done = 0;
    let out = experiment::run(&cfg, &env, &mut |what| {
        done += 1;
        if tty || !a.json {
            eprintln!("truebench: step {done}/{total}: {what}");
        }
    })?;
    let (results, order, unavailable, interrupted) =
        (out.variants, out.order, out.unavailable, out.interrupted);
    let comparison = (results.len() > 1).then(|| experiment::compare(&results));
    let scaling = experiment::scaling(&results);
    let plan = crate::result::experiment::Plan {
        rates: cfg.rates.clone(),
        warmup_s: a.warmup,
        step_duration_s: a.step_duration,
        workers: cfg.workers.clone(),
        service_us: cfg.service_us,
        footprint_kb: cfg.footprint_kb,
        policies: cfg.policies.clone(),
        repeat: cfg.repeat,
        seed: cfg.seed,
        order,
    };
    let workload = if a.http.is_some() {
        "http"
    } else {
        a.workload.as_str()
    };
    let ls = crate::result::Experiment::new(
        workload.to_string(),
        a.http.clone(),
        plan,
        results,
        comparison,
        scaling,
        unavailable,
    );
    let mut doc = super::bare_document(&started, &env, "loadstep", interrupted)?;
    for v in &ls.variants {
        let hit: Vec<String> = v
            .steps
            .iter()
            .filter(|s| s.throttled_periods.is_some_and(|n| n > 0))
            .map(|s| {
                format!(
                    "{}/s: {} quota periods throttled, {} ms throttled over {} s",
                    num(s.planned_rate),
                    s.throttled_periods.unwrap_or(0),
                    num(s.throttled_ms.unwrap_or(0.0)),
                    a.step_duration
                )
            })
            .collect();
        if let (Some(c), false) = (&v.capacity, hit.is_empty()) {
            doc.findings.push(crate::findings::Finding::new(
                "throttled",
                crate::findings::Severity::Warning,
                format!(
                    "Under a quota of {} CPUs on {} CPUs, the service was throttled: its latency includes waiting for the next quota period, not only for a CPU.",
                    c.quota, c.width
                ),
                hit,
            ));
        }
    }
    doc.loadstep = Some(ls);
    super::store_and_print(
        &mut store,
        &doc,
        a.json,
        &db_path,
        "loadstep run",
        crate::report::text::Detail::Summary,
    )
}
