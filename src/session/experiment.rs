//! `truebench experiment`: a batch command run to completion under each policy variant
//! inside the session, in shuffled repeated order (every round runs each variant once, in a
//! fresh random order, so drift and warm caches do not pass for a difference). With
//! `--instances K` each run starts K copies at once, each in its own partition. Per run and
//! instance: wall time, CPU time and context switches (wait4 rusage, the command and the
//! descendants it waited for), migrations (an inherited perf software counter on the
//! thread that starts it), the business metric from `--metric-file`; per variant the
//! medians with CIs; the winner on makespan by Mann-Whitney.

use super::{Measurement, Measuring};
use crate::error::{usage, usage_hint};
use crate::measure::stats::{mann_whitney_p, Stats};
use crate::policy::apply::RtThrottling;
use crate::policy::launch::{Exited, Launched};
use crate::policy::resolve::{instances, Instance};
use crate::policy::Policy;
use crate::probe::ProbeDoc;
use crate::result::batch::{
    BatchComparison, BatchExperiment, BatchRun, BatchVariant, FailedRun, InstanceRun, Rival,
};
use crate::result::{RunDocument, Skipped};
use crate::store::Location;
use rand::{seq::SliceRandom, SeedableRng};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime};

/// The experiment as the command line asked for it.
#[derive(Debug, Clone)]
pub struct Options {
    pub runs: usize,
    pub policies: Vec<Policy>,
    pub instances: usize,
    /// `{i}` in it is replaced by the instance number (1..K).
    pub metric_file: Option<PathBuf>,
    pub command: Vec<String>,
    /// Show the command's own output (else discarded).
    pub show_output: bool,
    pub json: bool,
}

/// The experiment inside the session.
pub struct Experiment {
    o: Options,
    /// The variants that can run here, with each instance's placement.
    runnable: Vec<(Policy, Vec<Instance>)>,
    skipped: Vec<Skipped>,
    /// The run that failed and ended it.
    failed: Option<FailedRun>,
}

impl Experiment {
    pub fn new(o: Options) -> Experiment {
        Experiment {
            o,
            runnable: vec![],
            skipped: vec![],
            failed: None,
        }
    }
}

/// Where `prog` would be executed from, or why it cannot be.
pub fn executable(prog: &str) -> Result<PathBuf, String> {
    use std::os::unix::fs::PermissionsExt;
    let ok = |p: &Path| {
        p.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if prog.contains('/') {
        let p = PathBuf::from(prog);
        return if ok(&p) {
            Ok(p)
        } else if p.exists() {
            Err(format!("cannot execute '{prog}': not an executable file"))
        } else {
            Err(format!("cannot execute '{prog}': no such file"))
        };
    }
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|d| d.join(prog))
        .find(|p| ok(p))
        .ok_or_else(|| format!("cannot execute '{prog}': not found in PATH"))
}

/// The policies resolved for `k` instances: those that can run, and the skipped ones.
pub fn resolve_all(
    policies: &[Policy],
    k: usize,
    env: &ProbeDoc,
) -> (Vec<(Policy, Vec<Instance>)>, Vec<Skipped>) {
    let mut ok = Vec::new();
    let mut skipped = Vec::new();
    for p in policies {
        match instances(p, k, env) {
            Ok(i) => ok.push((*p, i)),
            Err(reason) => skipped.push(Skipped {
                benchmark: "experiment".into(),
                case: p.to_string(),
                reason,
            }),
        }
    }
    (ok, skipped)
}

/// What `plan --policy` shows: each variant's instances with their CPUs and partition,
/// or the variant skipped with its reason.
pub fn plan(policies: &[Policy], k: usize, env: &ProbeDoc) -> Vec<crate::placement::Planned> {
    use crate::placement::Planned;
    policies
        .iter()
        .flat_map(|p| match instances(p, k, env) {
            Ok(all) => all
                .into_iter()
                .enumerate()
                .map(|(i, at)| {
                    let mems = at
                        .memory_nodes
                        .as_ref()
                        .map(|m| {
                            format!(
                                "; memory on {} [{}]",
                                crate::units::noun(m.len(), "node"),
                                crate::probe::cpulist::format_list(m)
                            )
                        })
                        .unwrap_or_default();
                    Planned::run(
                        "experiment",
                        format!("{p} instance {}/{k}", i + 1),
                        at.cpus.or(at.pin_order),
                        format!("{}{mems}", at.partition),
                    )
                })
                .collect(),
            Err(reason) => vec![Planned::skip("experiment", p.to_string(), reason)],
        })
        .collect()
}

impl Measurement for Experiment {
    fn suites(&self) -> Vec<String> {
        vec!["experiment".into()]
    }

    fn holder(&self) -> String {
        format!("truebench experiment -- {}", self.o.command.join(" "))
    }

    fn check(&mut self, env: &ProbeDoc) -> anyhow::Result<()> {
        let prog =
            self.o.command.first().ok_or_else(|| {
                usage_hint("no command given", "truebench experiment -- CMD ARGS")
            })?;
        executable(prog).map_err(usage)?;
        for p in &self.o.policies {
            if let Some(why) = p.missing_privilege() {
                return Err(usage(format!("--policy {why}")));
            }
            if p.capacity.is_some() && crate::loadstep::capacity::Layout::live().is_err() {
                let e = crate::loadstep::capacity::Layout::live().unwrap_err();
                return Err(usage(format!("--policy {p}: {e}")));
            }
        }
        let (ok, skipped) = resolve_all(&self.o.policies, self.o.instances, env);
        if ok.is_empty() {
            return Err(usage(format!(
                "no policy can run here: {}",
                skipped
                    .iter()
                    .map(|s| format!("{}: {}", s.case, s.reason))
                    .collect::<Vec<_>>()
                    .join("; ")
            )));
        }
        self.runnable = ok;
        self.skipped = skipped;
        Ok(())
    }

    fn measure(&mut self, m: &mut Measuring) -> anyhow::Result<()> {
        let seed = crate::measure::clocks::now_ns();
        let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
        let mut by_variant: Vec<Vec<BatchRun>> = vec![vec![]; self.runnable.len()];
        let mut order = Vec::new();
        let mut unavailable = BTreeMap::new();
        let total = self.o.runs * self.runnable.len();
        let layout = self
            .runnable
            .iter()
            .any(|(p, _)| p.capacity.is_some())
            .then(crate::loadstep::capacity::Layout::live)
            .transpose()
            .map_err(anyhow::Error::msg)?;
        for s in &self.skipped {
            eprintln!("truebench: skipped {}: {}", s.case, s.reason);
        }
        m.speed("experiment", crate::result::SpeedPoint::Start);
        'rounds: for round in 0..self.o.runs {
            let mut idx: Vec<usize> = (0..self.runnable.len()).collect();
            idx.shuffle(&mut rng);
            for v in idx {
                let (policy, placement) = &self.runnable[v];
                order.push(format!("{policy} (run {})", round + 1));
                let run = run_once(
                    &self.o,
                    policy,
                    placement,
                    layout.as_ref(),
                    m.env,
                    &mut unavailable,
                    round + 1,
                )?;
                let run = match run {
                    None => {
                        m.interrupted = true;
                        break 'rounds;
                    }
                    Some(Err(failed)) => {
                        self.failed = Some(failed);
                        break 'rounds;
                    }
                    Some(Ok(run)) => run,
                };
                eprintln!(
                    "truebench: run {}/{total}: {policy}: {:.3} s{}",
                    order.len(),
                    run.makespan_s,
                    if self.o.instances > 1 {
                        " makespan"
                    } else {
                        ""
                    }
                );
                by_variant[v].push(run);
            }
        }
        if !m.interrupted {
            m.speed("experiment", crate::result::SpeedPoint::End);
        }
        let variants: Vec<BatchVariant> = self
            .runnable
            .iter()
            .zip(by_variant)
            .filter(|(_, runs)| !runs.is_empty())
            .map(|((p, placement), runs)| summarize(p, placement.clone(), runs, self.o.instances))
            .collect();
        m.doc.skipped.extend(self.skipped.clone());
        m.doc.experiment = Some(BatchExperiment {
            command: self.o.command.clone(),
            runs: self.o.runs,
            instances: self.o.instances,
            seed,
            order,
            comparison: compare(&variants),
            variants,
            metric_file: self.o.metric_file.as_ref().map(|p| p.display().to_string()),
            rt_throttling: RtThrottling::read(),
            unavailable,
            failed: self.failed.clone(),
        });
        Ok(())
    }

    /// A failed run ends the experiment with an error naming how it ended, after the
    /// document (the runs before it, and the failure) is stored.
    fn outcome(&self) -> anyhow::Result<()> {
        match &self.failed {
            Some(f) => anyhow::bail!(
                "{}: a failing command has no time to compare (the runs before it are stored)",
                f.words()
            ),
            None => Ok(()),
        }
    }

    fn print(&self, doc: &RunDocument, stored: Option<&Location>) -> anyhow::Result<()> {
        super::print_document(
            doc,
            self.o.json,
            crate::report::text::Detail::Summary,
            stored,
            "experiment run",
        )
    }
}

/// The metric file of instance `i` (1-based): `{i}` replaced.
fn metric_path(template: &Path, i: usize) -> PathBuf {
    PathBuf::from(template.to_string_lossy().replace("{i}", &i.to_string()))
}

/// The metric file's state before a run: its modification time and size (None: absent).
fn file_state(path: &Path) -> Option<(SystemTime, u64)> {
    let m = std::fs::metadata(path).ok()?;
    Some((m.modified().ok()?, m.len()))
}

/// The metric the run wrote: the first number of the file, if the run wrote it (its
/// state differs from `before`; file times are too coarse to compare with a clock).
fn read_metric(path: &Path, before: Option<(SystemTime, u64)>) -> Option<f64> {
    let after = file_state(path)?;
    if before == Some(after) {
        return None;
    }
    crate::observe::recorder::read_metric(None, Some(path), 1.0).ok()
}

/// One instance started and waited for on a thread of its own, so an inherited counter on
/// that thread counts the instance's migrations only.
struct Finished {
    index: usize,
    exited: Result<(Exited, Option<u64>), String>,
    migrations_unavailable: Option<String>,
}

fn migrations_counter() -> Result<crate::measure::perf::Counter, String> {
    use crate::measure::perf::{Counter, Event, Spec, Whom};
    let mut c = Counter::open(&Spec {
        event: Event::CpuMigrations,
        whom: Whom::Me,
        inherit: true,
        exclude_kernel: false,
    })
    .map_err(|e| format!("perf software event cpu-migrations: {e}"))?;
    c.enable()
        .map_err(|e| format!("perf software event cpu-migrations: {e}"))?;
    Ok(c)
}

/// Run every instance of `policy` once (the `round`th run); None when Ctrl-C stopped it,
/// Some(Err) when an instance did not exit 0 (with the OOM kills its cgroup counted).
#[allow(clippy::too_many_arguments)]
fn run_once(
    o: &Options,
    policy: &Policy,
    placement: &[Instance],
    layout: Option<&crate::loadstep::capacity::Layout>,
    env: &ProbeDoc,
    unavailable: &mut BTreeMap<String, String>,
    round: usize,
) -> anyhow::Result<Option<Result<BatchRun, FailedRun>>> {
    let oom = crate::probe::memory_limit::OomWatch::start(&env.memory);
    let before: Vec<Option<(SystemTime, u64)>> = (0..placement.len())
        .map(|i| {
            o.metric_file
                .as_ref()
                .and_then(|t| file_state(&metric_path(t, i + 1)))
        })
        .collect();
    let (tx, rx) = mpsc::channel::<Finished>();
    let (pid_tx, pid_rx) = mpsc::channel::<(usize, i32)>();
    let t0 = Instant::now();
    let mut handles = Vec::new();
    for (i, at) in placement.iter().enumerate() {
        let group = match (policy.capacity, layout) {
            (Some(c), Some(l)) => {
                let order: Vec<u32> = crate::placement::spread_order(env);
                let mems = crate::loadstep::capacity::parent_mems(l);
                Some(
                    crate::loadstep::capacity::Group::create(l, i + 1, c, &order, &mems, false)
                        .map_err(anyhow::Error::msg)?,
                )
            }
            _ => None,
        };
        let (tx, pid_tx, at, argv, policy) = (
            tx.clone(),
            pid_tx.clone(),
            at.clone(),
            o.command.clone(),
            *policy,
        );
        let show = o.show_output;
        handles.push(std::thread::spawn(move || {
            let mut counter = migrations_counter();
            let out = || {
                if show {
                    Stdio::inherit()
                } else {
                    Stdio::null()
                }
            };
            let exited = Launched::start(&argv, &policy, &at, group, out(), out()).map(|mut l| {
                let _ = pid_tx.send((i, l.pid));
                l.wait()
            });
            let (migrations, why) = match (counter.as_mut(), &exited) {
                (Ok(c), Ok(_)) => match c.read() {
                    Ok(v) => (Some(v), None),
                    Err(e) => (None, Some(format!("reading cpu-migrations: {e}"))),
                },
                (Err(e), _) => (None, Some(e.clone())),
                _ => (None, None),
            };
            let _ = tx.send(Finished {
                index: i,
                exited: exited.map(|e| (e, migrations)),
                migrations_unavailable: why,
            });
        }));
    }
    drop(tx);
    drop(pid_tx);
    // The commands still running, by instance: only these are signalled (a reaped one's
    // pid may be another process's by now).
    let mut pids: BTreeMap<usize, i32> = BTreeMap::new();
    // The CPUs each instance's threads (and its descendants') were seen on, sampled at
    // every turn of the wait below (the CPU each thread last ran on).
    let mut seen: Vec<std::collections::BTreeSet<u32>> = vec![Default::default(); placement.len()];
    let mut done: Vec<Option<(Exited, Option<u64>)>> = vec![None; placement.len()];
    let mut first_error = None;
    let mut interrupted = false;
    let mut interrupted_at: Option<std::time::Instant> = None;
    let mut received = 0;
    while received < placement.len() {
        pids.extend(pid_rx.try_iter());
        for (i, p) in &pids {
            let tree = crate::observe::process::tree(*p);
            if let Some(c) = crate::observe::process::read_sum(&tree) {
                seen[*i].extend(c.cpus);
            }
        }
        if crate::interrupt::requested() && !interrupted {
            interrupted = true;
            interrupted_at = Some(std::time::Instant::now());
            for p in pids.values() {
                crate::policy::launch::signal_command(*p, nix::sys::signal::Signal::SIGTERM);
            }
        }
        // A command that ignores SIGTERM is killed after the grace period (its group and
        // tree; what left them is stopped when its instance's wait ends).
        if interrupted_at.is_some_and(|t| t.elapsed() >= crate::policy::launch::GRACE) {
            for p in pids.values() {
                crate::policy::launch::signal_command(*p, nix::sys::signal::Signal::SIGKILL);
            }
        }
        match rx.recv_timeout(Duration::from_millis(20)) {
            Ok(f) => {
                received += 1;
                pids.remove(&f.index);
                if let Some(why) = f.migrations_unavailable {
                    unavailable.insert("migrations".into(), why);
                }
                match f.exited {
                    Ok(e) => done[f.index] = Some(e),
                    Err(e) => {
                        first_error.get_or_insert(e);
                    }
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    let makespan_s = t0.elapsed().as_secs_f64();
    for h in handles {
        let _ = h.join();
    }
    if interrupted {
        return Ok(None);
    }
    if let Some(e) = first_error {
        anyhow::bail!("{e}");
    }
    let mut instances = Vec::new();
    for (i, d) in done.into_iter().enumerate() {
        let (e, migrations) =
            d.ok_or_else(|| anyhow::anyhow!("instance {} did not report", i + 1))?;
        if e.code != Some(0) {
            return Ok(Some(Err(FailedRun {
                run: format!(
                    "'{}' under {policy} (run {round}, instance {})",
                    o.command.join(" "),
                    i + 1
                ),
                exit_status: e.code,
                exit_signal: e.signal,
                oom_kills: oom.as_ref().and_then(|w| w.since(&env.memory)),
            })));
        }
        let metric = o
            .metric_file
            .as_ref()
            .and_then(|t| read_metric(&metric_path(t, i + 1), before[i]));
        if o.metric_file.is_some() && metric.is_none() {
            unavailable.insert(
                "metric".into(),
                "the metric file was not written (or holds no number) after a run".into(),
            );
        }
        instances.push(InstanceRun {
            wall_s: e.wall_s,
            user_s: e.user_s,
            system_s: e.system_s,
            voluntary: e.voluntary,
            involuntary: e.involuntary,
            migrations,
            metric,
            cpus_seen: seen[i].iter().copied().collect(),
        });
    }
    Ok(Some(Ok(BatchRun {
        makespan_s,
        instances,
    })))
}

fn stats_of(v: impl Iterator<Item = Option<f64>>) -> Option<Stats> {
    let v: Option<Vec<f64>> = v.collect();
    Stats::of(&v?)
}

/// A variant's statistics over its runs.
pub fn summarize(
    policy: &Policy,
    placement: Vec<Instance>,
    runs: Vec<BatchRun>,
    k: usize,
) -> BatchVariant {
    let sum = |f: &dyn Fn(&InstanceRun) -> Option<f64>| {
        stats_of(
            runs.iter()
                .map(|r| r.instances.iter().map(f).sum::<Option<f64>>()),
        )
    };
    BatchVariant {
        policy: policy.to_string(),
        placement,
        makespan_s: stats_of(runs.iter().map(|r| Some(r.makespan_s))),
        instance_wall_s: (0..k)
            .map(|i| stats_of(runs.iter().map(|r| r.instances.get(i).map(|x| x.wall_s))))
            .collect(),
        cpu_s: sum(&|x| Some(x.user_s + x.system_s)),
        context_switches: sum(&|x| Some((x.voluntary + x.involuntary) as f64)),
        migrations: sum(&|x| x.migrations.map(|m| m as f64)),
        metric: sum(&|x| x.metric),
        runs,
    }
}

/// The winner (lowest median makespan) and each other variant against it.
pub fn compare(variants: &[BatchVariant]) -> Option<BatchComparison> {
    if variants.len() < 2 {
        return None;
    }
    let med = |v: &BatchVariant| v.makespan_s.as_ref().map(|s| s.median);
    let best = variants
        .iter()
        .filter(|v| med(v).is_some())
        .min_by(|a, b| med(a).unwrap().total_cmp(&med(b).unwrap()))?;
    let samples = |v: &BatchVariant| -> Vec<f64> { v.runs.iter().map(|r| r.makespan_s).collect() };
    let others = variants
        .iter()
        .filter(|v| v.policy != best.policy)
        .map(|v| {
            let p = mann_whitney_p(&samples(best), &samples(v));
            (
                v.policy.clone(),
                Rival {
                    median_makespan_s: med(v),
                    ratio: med(v).zip(med(best)).map(|(a, b)| a / b),
                    p_value: p,
                    real: p.is_some_and(|p| p < 0.05),
                },
            )
        })
        .collect();
    Some(BatchComparison {
        winner: best.policy.clone(),
        others,
        test: "Mann-Whitney U on the makespans of the runs, p < 0.05".into(),
    })
}
