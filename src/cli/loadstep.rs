//! `truebench loadstep`: the options of a load-step experiment; the session
//! (src/session/loadstep.rs) drives the built-in message-processing service (or an HTTP
//! server) open-loop at fixed rates, per placement policy and worker count, stores the run
//! and prints per step the rates, latency percentiles (corrected and uncorrected), queue
//! wait, cost per transaction and validity; then the knee, the USL and Amdahl fits and
//! which policy wins.

use crate::error::{usage, usage_hint};
use crate::policy::Policy;
use crate::session::{
    self,
    loadstep::{LoadStep, Options},
};
use crate::store::Location;

#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:\n  \
truebench loadstep                             mq: 5 steps up to the workers' nominal capacity\n  \
truebench loadstep --rates 2000,4000,8000 --workers 1,2,4\n  \
truebench loadstep --policy os,compact,pinned --repeat 3\n  \
truebench loadstep --cpu-quota 1,1.5 --cpuset-width 2 --rates 5000,10000   (root)\n  \
truebench loadstep --http http://127.0.0.1:8080/ --server \"./srv\" --ramp 1000:5000:1000")]
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
    #[arg(long, requires = "http", conflicts_with = "server")]
    pid: Option<i32>,
    /// With --http: the server command (words split on spaces), started by truebench for
    /// each variant under that variant's --policy, waited for until the URL answers, its
    /// whole process tree costed per request, stopped after the steps (SIGTERM, SIGKILL
    /// after 3 s), also on Ctrl-C and on error.
    #[arg(long, requires = "http", value_name = "\"CMD ARGS\"")]
    server: Option<String>,
    /// With --server: seconds the server may take to accept connections (0.1 to 3600).
    #[arg(long, default_value = "10", value_parser = super::parse_secs, requires = "server")]
    ready_timeout: f64,
    /// Planned rates, messages per second (1 to 5,000,000), comma-separated (default: 20%..100%
    /// of the workers' nominal capacity, workers x 10^6 / service-us, in five steps).
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "LIST",
        value_parser = parse_rate,
        conflicts_with = "ramp"
    )]
    rates: Option<Vec<f64>>,
    /// Rates from FROM to TO by STEP, messages per second (e.g. 2000:10000:2000; at most
    /// 1000 steps).
    #[arg(long, value_name = "FROM:TO:STEP")]
    ramp: Option<String>,
    /// Seconds measured per step (0.1 to 3600).
    #[arg(long, default_value = "3", value_parser = super::parse_secs)]
    step_duration: f64,
    /// Seconds of warm-up before each step's measured window (0.1 to 3600).
    #[arg(long, default_value = "0.5", value_parser = super::parse_secs)]
    warmup: f64,
    /// Worker threads, 1 to 4096 (default: the CPUs this process may use); a list sweeps
    /// concurrency (1,2,4) for a scaling curve.
    #[arg(long, value_delimiter = ',', value_name = "N[,N...]", value_parser = clap::value_parser!(u32).range(1..=4096))]
    workers: Option<Vec<u32>>,
    /// CPU work per message, µs (0 to 10^6).
    #[arg(long, default_value = "50", value_parser = parse_service)]
    service_us: f64,
    /// KiB of its own memory each worker touches per message (0 to 1048576, 1 GiB).
    #[arg(long, default_value_t = 0, value_name = "KB", value_parser = clap::value_parser!(u64).range(0..=1_048_576))]
    footprint: u64,
    /// Policies to compare, comma-separated. Placement: os (the scheduler), compact[:N]
    /// (workers packed on the fewest cores/LLCs), spread[:N] (across nodes, LLCs, cores),
    /// per-node (workers or the server confined to NUMA nodes, memory bound there), per-llc,
    /// pinned (each thread on its own CPU); class: other, batch, idle, fifo:PRIO, rr:PRIO,
    /// nice:N; memory: local, bind, interleave, preferred; capacity: cap:QUOTA/WIDTH[@PERIOD];
    /// joined by + (pinned+fifo:10). See docs/experiment.md.
    #[arg(long, value_delimiter = ',', value_name = "LIST", default_value = "os", value_parser = crate::policy::parse)]
    policy: Vec<Policy>,
    /// Capacity policies (root): CPU quotas in CPUs (above 0, at most the width),
    /// comma-separated, each run against every --cpuset-width in a cgroup truebench creates and removes (guaranteed capacity against
    /// virtual processors).
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "CPUS",
        requires = "cpuset_width"
    )]
    cpu_quota: Option<Vec<f64>>,
    /// Capacity policies: cpuset widths in CPUs (1 to 65536), comma-separated (with
    /// --cpu-quota).
    #[arg(long, value_delimiter = ',', value_name = "N", requires = "cpu_quota", value_parser = clap::value_parser!(u32).range(1..=65_536))]
    cpuset_width: Option<Vec<u32>>,
    /// The CFS period of those quotas (5ms, 2500us, 0.5s; the kernel takes 1ms to 1s): each
    /// period the group may run quota x period, then waits for the next, so the period is
    /// how long a throttled message can wait. A prediction holds at the period it learnt.
    #[arg(long, value_name = "PERIOD", default_value = "100ms", requires = "cpu_quota", value_parser = crate::loadstep::capacity::parse_period)]
    quota_period: u64,
    /// Runs of the whole plan per variant (1 to 20), in shuffled order (default 1, or 2 when
    /// several variants are compared).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=20))]
    repeat: Option<u32>,
    /// Print the run document as JSON instead of the tables.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    measuring: super::measuring::Args,
}

fn parse_service(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .parse()
        .map_err(|_| format!("'{s}' is not a number of µs"))?;
    if (0.0..=1e6).contains(&v) {
        Ok(v)
    } else {
        Err(format!("{} µs is outside 0 to 10^6", crate::units::num(v)))
    }
}

/// One planned rate, messages per second (its range is checked with the plan).
fn parse_rate(s: &str) -> Result<f64, String> {
    s.trim()
        .parse::<f64>()
        .ok()
        .filter(|r| r.is_finite())
        .ok_or_else(|| format!("'{s}' is not a rate in messages per second (e.g. 2000)"))
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

pub fn exec(a: Args, db: Option<&Location>) -> anyhow::Result<()> {
    let common = a.measuring.common()?;
    super::distinct("--policy", &a.policy)?;
    super::distinct("--workers", a.workers.as_deref().unwrap_or_default())?;
    super::distinct("--cpu-quota", a.cpu_quota.as_deref().unwrap_or_default())?;
    super::distinct(
        "--cpuset-width",
        a.cpuset_width.as_deref().unwrap_or_default(),
    )?;
    let http = match &a.http {
        Some(u) => {
            Some(crate::loadstep::http::parse_url(u).map_err(|e| usage(format!("--http {e}")))?)
        }
        None => None,
    };
    if a.http.is_some()
        && a.server.is_none()
        && (a.cpu_quota.is_some() || a.policy.iter().any(|p| p.capacity.is_some()))
    {
        return Err(usage_hint(
            "a capacity setting with --http applies to the server, which truebench must start"
                .to_string(),
            "give the server's command with --server",
        ));
    }
    let server: Option<Vec<String>> = a
        .server
        .as_ref()
        .map(|s| s.split_whitespace().map(String::from).collect());
    if let Some(argv) = &server {
        let prog = argv
            .first()
            .ok_or_else(|| usage("--server: no command given"))?;
        crate::session::experiment::executable(prog)
            .map_err(|e| usage(format!("--server: {e}")))?;
        if let Some(t) = &http {
            if crate::loadstep::http::check_reachable(t).is_ok() {
                return Err(usage_hint(
                    format!("--server: something already answers at {}", t.addr),
                    "stop it, or give a free port in --http",
                ));
            }
        }
    } else if let Some(t) = &http {
        crate::loadstep::http::check_reachable(t).map_err(|e| {
            usage_hint(
                format!("--http: cannot connect: {e}"),
                "start the server first",
            )
        })?;
    }
    if let Some(pid) = a.pid {
        if crate::observe::process::read(pid).is_none() {
            return Err(usage(format!("--pid {pid}: no such process")));
        }
    }
    let ramp = match &a.ramp {
        Some(r) => Some(parse_ramp(r).map_err(|e| usage(format!("--ramp {e}")))?),
        None => None,
    };
    let o = Options {
        workload: a.workload,
        http_url: a.http,
        http,
        server_pid: a.pid,
        server: server.map(|s| (s, std::time::Duration::from_secs_f64(a.ready_timeout))),
        rates: a.rates.or(ramp),
        step_duration_s: a.step_duration,
        warmup_s: a.warmup,
        workers: a.workers.map(|w| w.iter().map(|x| *x as usize).collect()),
        service_us: a.service_us,
        footprint_kb: a.footprint as usize,
        policies: a.policy,
        cpu_quota: a.cpu_quota,
        cpuset_width: a.cpuset_width,
        quota_period_us: a.quota_period,
        repeat: a.repeat,
        json: a.json,
    };
    session::run_with(&mut LoadStep::new(o), db, &common)
}
