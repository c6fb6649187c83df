//! `truebench experiment [--runs N] [--policy LIST] [--instances K] [--metric-file F] --
//! CMD ARGS`: the options of a batch experiment; the session (src/session/experiment.rs)
//! runs the command to completion under each policy variant in shuffled repeated order and
//! stores the run; the text shows per variant the medians with CIs and the winner.

use crate::policy::Policy;
use crate::session::{
    self,
    experiment::{Experiment, Options},
};
use crate::store::Location;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:\n  \
truebench experiment --runs 10 --policy os,compact:1,pinned -- ./batch-job input\n  \
truebench experiment --instances 2 --policy os,per-node,per-llc -- java -jar batch.jar\n  \
truebench experiment --policy nice:10,fifo:10 --metric-file /tmp/done -- ./job\n\n\
Each run starts the command under the variant's policy (its own process group, killed with \
truebench), waits for it and takes wall time, CPU time and context switches (wait4), CPU \
migrations (perf software event) and the metric file's first number. A variant that cannot \
exist here (one NUMA node, too few CPUs) is a skipped case with its reason. See docs/experiment.md.")]
pub struct Args {
    /// Runs per variant, 1 to 1000 (each round runs every variant once, in a fresh shuffled
    /// order).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=1000))]
    runs: u32,
    /// Policy variants, comma-separated. Placement: os, compact[:N], spread[:N] (N CPUs of
    /// each instance), per-node, per-llc (one partition per instance, memory there), pinned
    /// (each thread on its own CPU); class: other, batch, idle, fifo:PRIO, rr:PRIO, nice:N;
    /// memory: local, bind, interleave, preferred; capacity: cap:QUOTA/WIDTH (root); joined
    /// by + (pinned+fifo:10).
    #[arg(long, value_delimiter = ',', value_name = "LIST", default_value = "os", value_parser = crate::policy::parse)]
    policy: Vec<Policy>,
    /// Copies of the command run at once per run (1 to 1024), each in its own partition; the
    /// run's figure is then the makespan (first start to last end).
    #[arg(long, default_value_t = 1, value_name = "K", value_parser = clap::value_parser!(u32).range(1..=1024))]
    instances: u32,
    /// A file the command writes its business counter to (first number; `{i}` is the
    /// instance number 1..K), read after each run.
    #[arg(long, value_name = "PATH")]
    metric_file: Option<PathBuf>,
    /// Let the command's stdout and stderr through (default: discarded).
    #[arg(long)]
    show_output: bool,
    /// Print the run document as JSON instead of the tables.
    #[arg(long)]
    json: bool,
    /// The command (after `--`).
    #[arg(last = true, required = true, value_name = "CMD")]
    command: Vec<String>,
    #[command(flatten)]
    measuring: super::measuring::Args,
}

pub fn exec(a: Args, db: Option<&Location>) -> anyhow::Result<()> {
    let common = a.measuring.common()?;
    super::distinct("--policy", &a.policy)?;
    let o = Options {
        runs: a.runs as usize,
        policies: a.policy,
        instances: a.instances as usize,
        metric_file: a.metric_file,
        command: a.command,
        show_output: a.show_output,
        json: a.json,
    };
    session::run_with(&mut Experiment::new(o), db, &common)
}
