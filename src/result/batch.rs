//! A `truebench experiment` as stored: a batch command run to completion under each
//! policy variant, in shuffled repeated order; per run and instance the wall time, CPU
//! time, context switches, migrations and business metric; per variant their medians with
//! CIs; which variant wins on wall time (makespan with several instances) by a rank test.

use crate::measure::stats::Stats;
use crate::policy::apply::RtThrottling;
use crate::policy::resolve::Instance;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One instance's run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InstanceRun {
    /// From just before the fork to the end of wait4, s.
    pub wall_s: f64,
    /// User and system CPU time of it and its waited-for descendants (wait4 rusage), s.
    pub user_s: f64,
    pub system_s: f64,
    /// Voluntary and involuntary context switches (rusage).
    pub voluntary: u64,
    pub involuntary: u64,
    /// CPU migrations of its tasks (perf software event, inherited); absent when the event
    /// could not be opened (the experiment's `unavailable` says why).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub migrations: Option<u64>,
    /// The business counter it wrote to the metric file (absent: none written by this run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric: Option<f64>,
    /// The CPUs its threads and its descendants' were seen on, sampled every 20 ms while it
    /// ran (the CPU each last ran on); empty when it ended before the first sample, and in
    /// documents made before it was recorded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpus_seen: Vec<u32>,
}

impl BatchVariant {
    /// The CPUs this variant's threads were seen on over all its runs, for one instance
    /// (by index) or all (None); empty: never sampled.
    pub fn cpus_seen(&self, instance: Option<usize>) -> Vec<u32> {
        let mut v: Vec<u32> = self
            .runs
            .iter()
            .flat_map(|r| r.instances.iter().enumerate())
            .filter(|(i, _)| instance.is_none_or(|k| k == *i))
            .flat_map(|(_, x)| x.cpus_seen.iter().copied())
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }
}

/// One run of a variant: its instances side by side.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BatchRun {
    /// Start of the first instance to the end of the last, s.
    pub makespan_s: f64,
    pub instances: Vec<InstanceRun>,
}

/// A variant's runs and their statistics (each over the runs; sums over instances).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BatchVariant {
    pub policy: String,
    /// Where each instance ran.
    pub placement: Vec<Instance>,
    pub runs: Vec<BatchRun>,
    /// Makespan (the wall time with one instance), s.
    pub makespan_s: Option<Stats>,
    /// Per instance index, its wall time over the runs, s.
    pub instance_wall_s: Vec<Option<Stats>>,
    /// CPU time (user + system, all instances), s.
    pub cpu_s: Option<Stats>,
    pub context_switches: Option<Stats>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub migrations: Option<Stats>,
    /// The business metric (sum over instances), in the command's own unit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric: Option<Stats>,
}

/// How another variant compares with the winner.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rival {
    pub median_makespan_s: Option<f64>,
    /// Ratio of its median makespan to the winner's.
    pub ratio: Option<f64>,
    /// Mann-Whitney p against the winner; null with under 3 runs a side.
    pub p_value: Option<f64>,
    /// p < 0.05.
    pub real: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BatchComparison {
    /// The variant with the lowest median makespan.
    pub winner: String,
    pub others: BTreeMap<String, Rival>,
    pub test: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BatchExperiment {
    pub command: Vec<String>,
    pub runs: usize,
    pub instances: usize,
    pub seed: u64,
    /// The runs in the (shuffled) order they ran.
    pub order: Vec<String>,
    pub variants: Vec<BatchVariant>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comparison: Option<BatchComparison>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric_file: Option<String>,
    /// The kernel's real-time throttling, which bounds what fifo/rr variants may take.
    pub rt_throttling: RtThrottling,
    /// Figures that could not be measured, with the reason.
    #[serde(default)]
    pub unavailable: BTreeMap<String, String>,
    /// The run that failed and ended the experiment (the runs before it are kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed: Option<FailedRun>,
}

/// A run of the command that did not exit 0: which, how it ended, and the OOM kills its
/// memory cgroup counted while it ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FailedRun {
    /// "sh -c ... under default (run 2, instance 1)".
    pub run: String,
    pub exit_status: Option<i32>,
    pub exit_signal: Option<i32>,
    /// OOM kills counted in truebench's memory cgroup (the command's) while it ran; absent
    /// when none were counted or the counter cannot be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oom_kills: Option<crate::probe::memory_limit::OomKills>,
}

impl FailedRun {
    /// "'cmd' under default (run 2, instance 1) ended with killed by signal 9 (SIGKILL):
    /// the kernel's OOM killer (...)".
    pub fn words(&self) -> String {
        let ended = match (self.exit_status, self.exit_signal) {
            (Some(c), _) => format!("exit status {c}"),
            (None, Some(s)) => crate::policy::launch::killed_by(s),
            _ => "ended".into(),
        };
        match &self.oom_kills {
            Some(k) => format!("{} ended with {ended}: {}", self.run, k.words()),
            None => format!("{} ended with {ended}", self.run),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::memory_limit::{Limit, OomKills};

    /// A run killed by SIGKILL with the cgroup's OOM kills says both, with the limit; an
    /// exit status alone says that.
    #[test]
    fn a_failed_run_names_its_signal_and_the_oom_killer() {
        let mut f = FailedRun {
            run: "'./eat 400' under default (run 1, instance 1)".into(),
            exit_status: None,
            exit_signal: Some(9),
            oom_kills: Some(OomKills {
                kills: 1,
                file: "/sys/fs/cgroup/memory/job/memory.oom_control".into(),
                limit: Some(Limit {
                    bytes: 128 << 20,
                    file: "/sys/fs/cgroup/memory/job/memory.limit_in_bytes".into(),
                }),
            }),
        };
        let w = f.words();
        assert!(
            w.contains("ended with killed by signal 9 (SIGKILL): the kernel's OOM killer (/sys/fs/cgroup/memory/job/memory.oom_control counted 1 OOM kill while it ran; memory limit 128 MiB"),
            "{w}"
        );
        f.exit_status = Some(3);
        f.exit_signal = None;
        f.oom_kills = None;
        assert_eq!(
            f.words(),
            "'./eat 400' under default (run 1, instance 1) ended with exit status 3"
        );
    }
}
