//! `truebench plan [SUITE,...] [--root DIR] [--json]`: what `run` would run where, without
//! running: each case's CPUs and the topology relation or rule that chose them, or why it
//! cannot exist here. Every benchmark plans with the functions its `run` uses, so what
//! `plan` says is what `run` does; with `--root` it shows placement on a captured tree.

use crate::bench::{self, RunContext, RunOptions, DEFAULT_SUITES};
use crate::error::usage_hint;
use crate::placement::Planned;
use crate::probe::{cpulist::format_list, probe, sysroot::SysRoot, ProbeDoc};
use serde::Serialize;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:\n  \
truebench plan                                 the default suites, placements and copies\n  \
truebench plan ctx --placement same-cpu,cross-llc --mode thread\n  \
truebench plan --policy os,per-node,pinned --instances 2\n  \
truebench plan --root DIR                      a tree from `probe --capture`, unpacked")]
pub struct Args {
    /// Suites or benchmarks to plan, comma-separated (default: the default suites of `run`).
    #[arg(value_delimiter = ',', value_name = "SUITE[,SUITE...]")]
    suites: Vec<String>,
    /// Print the plan as JSON (schema truebench.plan/1).
    #[arg(long)]
    json: bool,
    /// Plan for a captured system tree instead of this machine (see `probe --capture`).
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
    /// Placements for communication tests, as `run --placement` (default: every one and os).
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    placement: Vec<super::choices::Placement>,
    /// An explicit CPU pair for communication tests, as `run --cpus`.
    #[arg(long, value_delimiter = ',', value_name = "A,B")]
    cpus: Option<Vec<u32>>,
    /// ctx suite: task mode, as `run --mode`: process, thread, or both [default: both].
    #[arg(long)]
    mode: Option<super::choices::Mode>,
    /// Classic suite: copy counts, as `run --copies` (numbers or `2x`; default: 1 and N).
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    copies: Option<Vec<crate::bench::classic::copies::CopyCount>>,
    /// Classic suite: plan copies pinned one per CPU, as `run --pin` does.
    #[arg(long)]
    pin: bool,
    /// Plan `experiment` policy variants instead (as `experiment --policy`): where each
    /// instance would run, or why the variant cannot exist there.
    #[arg(long, value_delimiter = ',', value_name = "LIST", value_parser = crate::policy::parse, conflicts_with = "suites")]
    policy: Vec<crate::policy::Policy>,
    /// With --policy: instances run at once (1 to 1024), as `experiment --instances`.
    #[arg(long, default_value_t = 1, value_name = "K", requires = "policy", value_parser = clap::value_parser!(u32).range(1..=1024))]
    instances: u32,
}

pub const SCHEMA: &str = "truebench.plan/1";

/// The plan document.
#[derive(Debug, Serialize)]
pub struct PlanDoc {
    pub schema: &'static str,
    pub root: String,
    pub suites: Vec<String>,
    /// CPUs this process may use and the capacity basis, as the probe found them.
    pub usable: Vec<u32>,
    pub capacity_basis: String,
    pub cpu_kinds: Vec<crate::probe::kinds::CpuKind>,
    pub cases: Vec<Planned>,
}

/// The plan of the named benchmarks (suites already resolved) on a probed machine.
pub fn plan_for(
    benches: &[&dyn bench::Benchmark],
    env: &ProbeDoc,
    options: &RunOptions,
) -> Vec<Planned> {
    let measured = bench::Measured::default();
    let ctx = RunContext {
        probe: env,
        options,
        samples: 10,
        clock_cost_ns: 0.0,
        min_batch_ns: 0.0,
        measured: &measured,
        only: None,
    };
    benches.iter().flat_map(|b| b.plan(&ctx)).collect()
}

/// The suite names given (the default suites when none) and their benchmarks, as `run`
/// and `plan` both take them; an unknown name is a usage error.
pub(crate) fn suites(
    given: &[String],
) -> anyhow::Result<(Vec<String>, Vec<&'static dyn bench::Benchmark>)> {
    let names: Vec<String> = if given.is_empty() {
        DEFAULT_SUITES.iter().map(|s| s.to_string()).collect()
    } else {
        given
            .iter()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect()
    };
    if names.is_empty() {
        return Err(usage_hint(
            "no suite named (an empty list)",
            "name suites (truebench run --list), or give none for the default suites",
        ));
    }
    let benches = bench::select(&names).map_err(|bad| {
        usage_hint(
            format!("unknown suite '{bad}'"),
            format!("known suites: {}", bench::suites().join(", ")),
        )
    })?;
    Ok((names, benches))
}

pub fn exec(a: Args) -> anyhow::Result<()> {
    let (names, benches) = if a.policy.is_empty() {
        suites(&a.suites)?
    } else {
        (vec!["experiment".to_string()], vec![])
    };
    let root = match &a.root {
        Some(dir) => super::probe::sysroot_from(dir)?,
        None => SysRoot::live(),
    };
    let env = probe(&root);
    if let Some(cpus) = &a.cpus {
        crate::placement::explicit(cpus, &env)
            .map_err(|e| crate::error::usage(format!("--cpus: {e}")))?;
    }
    let options = RunOptions {
        placements: a.placement.iter().map(|p| p.name().to_string()).collect(),
        cpus: a.cpus.clone(),
        modes: a.mode.unwrap_or(super::choices::Mode::Both).names(),
        classic: crate::bench::classic::Options {
            copies: a.copies.clone(),
            pin: a.pin,
            ..Default::default()
        },
        ..RunOptions::default()
    };
    let doc = PlanDoc {
        schema: SCHEMA,
        root: env.root.clone(),
        suites: names,
        usable: env.cpus.usable.clone(),
        capacity_basis: env.cpus.capacity_basis.clone(),
        cpu_kinds: env.topology.cpu_kinds.clone(),
        cases: plan_for(&benches, &env, &options)
            .into_iter()
            .chain(crate::session::experiment::plan(
                &a.policy,
                a.instances as usize,
                &env,
            ))
            .collect(),
    };
    if a.json {
        return super::print_json(&doc);
    }
    crate::stdout::write(&render(&doc))
}

/// The plan as text: per benchmark, each case with its CPUs and why (or why not).
pub fn render(doc: &PlanDoc) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "Plan for {} on {}: usable CPUs [{}] ({})",
        doc.suites.join(","),
        doc.root,
        format_list(&doc.usable),
        doc.capacity_basis
    );
    for k in &doc.cpu_kinds {
        let _ = writeln!(s, "  CPU kind {}: [{}]", k.kind, format_list(&k.cpus));
    }
    let mut current = "";
    for c in &doc.cases {
        if c.benchmark != current {
            current = &c.benchmark;
            let _ = writeln!(s, "{current}");
        }
        match (&c.skipped, &c.cpus) {
            (Some(why), _) => {
                let _ = writeln!(s, "  {:<28} not run: {why}", c.case);
            }
            (None, Some(cpus)) => {
                let _ = writeln!(s, "  {:<28} CPUs {:<14} {}", c.case, cpus_text(cpus), c.why);
            }
            (None, None) => {
                let _ = writeln!(s, "  {:<28} {:<19} {}", c.case, "unpinned", c.why);
            }
        }
    }
    s
}

/// CPUs in task order: `0,20` for a pair, the compact list for many.
fn cpus_text(cpus: &[u32]) -> String {
    if cpus.len() <= 3 {
        cpus.iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(",")
    } else {
        format!("[{}]", format_list(cpus))
    }
}
