//! Rules over a whole measuring run, from readings taken at its start and its end: the
//! hypervisor taking CPU time (`steal-time`), the clocksource changing (`clocksource-changed`),
//! a `--start-at` run that cannot be lined up with other hosts' (`start-clock-unsynchronised`,
//! `start-late`), the effective CPU speed falling between a suite's start and end
//! (`cpu-speed-dropped`).

use crate::finding::{Finding, Severity};
use crate::probe::cpu_weight::CpuWeight;
use crate::probe::{kernel, sysroot::SysRoot};
use crate::result::{CpuSpeed, ScheduledStart, SpeedPoint, SpeedSample};

/// Steal seconds over the run, from two /proc/stat readings.
pub fn steal_during(
    before: Option<&kernel::Steal>,
    after: Option<&kernel::Steal>,
    secs: f64,
    cpus: usize,
) -> Option<Finding> {
    let stolen = after?.seconds - before?.seconds;
    let share = stolen / (secs * cpus.max(1) as f64);
    let ticks = nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
        .ok()
        .flatten()
        .unwrap_or(100) as f64;
    (share >= 0.01 && crate::findings::noise::steal_resolved(stolen, ticks)).then(|| {
        Finding::new(
            "steal-time",
            Severity::Warning,
            format!("The hypervisor took {:.1}% of the CPU time during this run: results include waiting for the physical CPU.", share * 100.0),
            vec![format!(
                "/proc/stat steal grew by {stolen:.2} s over {secs:.1} s on {}",
                crate::units::count(cpus, "CPU")
            )],
        )
    })
}

/// A row the run's budget left short of its target MDE, with why (`session::precision::spend`).
#[derive(Debug, Clone, PartialEq)]
pub struct Short {
    /// The row's label.
    pub row: String,
    pub mde: Option<f64>,
    pub target: f64,
    /// Its rounds in all.
    pub rounds: usize,
    /// The hypervisor's mean share of the CPU time (%) over its rounds, when read.
    pub steal: Option<f64>,
    pub why: String,
}

/// Steal (%) over a row's rounds from which a short row names the hypervisor as the cause.
pub const STEAL_NAMED: f64 = 5.0;

/// Rows the run's budget of `budget_s` left short of their target MDE (`session::precision::
/// spend`), each with what it reached and why; `ended` when the budget ran out (a warning:
/// the run said less than it was asked to, and when the hypervisor took the time, it says
/// so).
pub fn budget_short(short: &[Short], budget_s: f64, ended: bool) -> Option<Finding> {
    if short.is_empty() {
        return None;
    }
    let rows = crate::units::count(short.len(), "row");
    let steal = short
        .iter()
        .filter_map(|s| s.steal)
        .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))))
        .filter(|s| *s >= STEAL_NAMED);
    let cause = steal
        .map(|s| format!("; the hypervisor took up to {s:.0}% of the CPU during their rounds"))
        .unwrap_or_default();
    let message = if ended {
        format!("The budget of {budget_s:.0} s ended with {rows} short of their target MDE{cause}: compare calls a smaller difference in them only if their MDE allows it.")
    } else {
        format!(
            "{rows} stayed short of their target MDE within the budget of {budget_s:.0} s{cause}."
        )
    };
    let evidence = short
        .iter()
        .map(|s| {
            let mde = s
                .mde
                .map(crate::measure::mde::mde_text_fine)
                .unwrap_or_else(|| "unknown".into());
            format!(
                "{}: MDE {mde} (target {:.1}%) in {}: {}",
                s.row,
                s.target * 100.0,
                crate::units::count(s.rounds, "round"),
                s.why
            )
        })
        .collect();
    Some(Finding::new(
        "budget-short",
        if ended {
            Severity::Warning
        } else {
            Severity::Info
        },
        message,
        evidence,
    ))
}

/// The clocksource at the end of the run differs from the one at its start (the kernel's
/// watchdog switches away from an unstable TSC; a migration can do it too).
pub fn clocksource_changed(before: Option<&str>, live: &SysRoot) -> Option<Finding> {
    let after = live.read_opt(crate::measure::clocksource::CURRENT)?;
    let before = before?;
    (before != after).then(|| {
        Finding::new(
            "clocksource-changed",
            Severity::Warning,
            format!("The clocksource changed during the run, from {before} to {after}: clock-read costs, and anything timed per event, differ before and after."),
            vec![format!("current_clocksource: {before} at the start, {after} at the end")],
        )
    })
}

/// Lateness from which a scheduled start is called late, ms.
pub const LATE_MS: f64 = 1000.0;

/// What makes a scheduled start unfit for lining up with other hosts: a clock nothing
/// synchronises, or a start well after the time asked for.
pub fn scheduled_start(s: &ScheduledStart) -> Vec<Finding> {
    let mut out = vec![];
    if let Some(c) = s.clock_sync.as_ref().filter(|c| !c.synchronised) {
        out.push(Finding::new(
            "start-clock-unsynchronised",
            Severity::Warning,
            format!("This host's clock was not synchronised when measuring began at {}: other hosts started for the same time may have measured up to {:.1} s apart from it.", s.began_at, c.maximum_error_us as f64 / 1e6),
            vec![format!(
                "adjtimex: {} {}, maximum error {} µs, estimated error {} µs",
                c.state,
                c.status.join(" "),
                c.maximum_error_us,
                c.estimated_error_us
            )],
        ));
    }
    if s.late_ms >= LATE_MS {
        out.push(Finding::new(
            "start-late",
            Severity::Warning,
            format!("Measuring began {:.1} s after the --start-at time (probing outlasted the wait): hosts meant to measure together overlapped that much less.", s.late_ms / 1e3),
            vec![format!("asked for {}, began {}", s.requested_at, s.began_at)],
        ));
    }
    out
}

/// A fall of the effective speed from a suite's start to its end larger than this share
/// raises `cpu-speed-dropped` (well beyond the few percent two quiet samples differ by).
pub const SPEED_DROP: f64 = 0.10;

/// "CPU 0 (intel-core)", or "CPU 0" on a machine of one kind.
fn speed_cpu(s: &SpeedSample) -> String {
    match &s.cpu_kind {
        Some(k) => format!("CPU {} ({k})", s.cpu),
        None => format!("CPU {}", s.cpu),
    }
}

/// Each suite whose effective CPU speed at its end is more than [`SPEED_DROP`] below the
/// one at its start, on the same CPU: the suite's later results ran on a slower clock
/// (thermal or power limit, the governor, a busier host), so they are not comparable
/// with its earlier ones, nor with a run that kept its clock.
pub fn cpu_speed_dropped(speed: &CpuSpeed) -> Vec<Finding> {
    let mut out = Vec::new();
    for (i, end) in speed.samples.iter().enumerate() {
        if end.point != SpeedPoint::End {
            continue;
        }
        let Some(start) = speed.samples[..i]
            .iter()
            .rev()
            .find(|s| s.point == SpeedPoint::Start && s.suite == end.suite && s.cpu == end.cpu)
        else {
            continue;
        };
        let fall = 1.0 - end.cycles_per_ns / start.cycles_per_ns;
        if fall > SPEED_DROP {
            out.push(Finding::new(
                "cpu-speed-dropped",
                Severity::Warning,
                format!(
                    "The effective speed of {} fell by {:.0}% during {}, from {:.2} to {:.2} GHz: its later results ran on a slower clock (thermal or power limit, the frequency governor, or a busier host).",
                    speed_cpu(end),
                    fall * 100.0,
                    end.suite,
                    start.cycles_per_ns,
                    end.cycles_per_ns
                ),
                vec![
                    format!(
                        "{} start: {:.3} adds/ns over {:.2} ms; end: {:.3} adds/ns over {:.2} ms",
                        speed_cpu(end),
                        start.cycles_per_ns,
                        start.elapsed_ns / 1e6,
                        end.cycles_per_ns,
                        end.elapsed_ns / 1e6
                    ),
                    format!("method: {}", speed.method),
                ],
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::start_at::{decode, record};
    use chrono::{DateTime, Utc};

    fn waits(waited: &[f64], others: f64) -> Vec<RoundWait> {
        waited
            .iter()
            .map(|w| RoundWait {
                waited: *w,
                others: Some(others),
                steal: Some(0.0),
            })
            .collect()
    }

    #[test]
    fn a_cgroup_of_the_lowest_weight_beside_busy_neighbours_is_named_starved_with_its_weight() {
        // The 2026-11-28 case: cpu.shares 2 beside two spinning groups of the default weight.
        let w = CpuWeight {
            file: "/sys/fs/cgroup/cpu/low/cpu.shares".into(),
            value: 2,
            default: 1024,
            idle: false,
        };
        let f = cpu_starved(
            &waits(&[99.5, 99.4, 99.3, 40.0, 99.4], 97.0),
            Some(&w),
            None,
        )
        .expect("fires");
        assert_eq!(f.id, "cpu-starved");
        assert_eq!(f.severity, Severity::Warning);
        assert!(f.message.starts_with("This cgroup got 0.6% of a CPU: truebench's threads waited for one 99% of the time, because of its cgroup's weight, cpu.shares 2 (default 1024), against busy neighbours (against one busy neighbour of the default weight it gets 0.2% of a CPU)"), "{}", f.message);
        assert!(
            f.evidence[0].contains("5 rounds waited for a CPU 99.4% of their wall time"),
            "{:?}",
            f.evidence
        );
        assert!(
            f.evidence[0].ends_with("while other tasks used 97% of its CPUs"),
            "{:?}",
            f.evidence
        );
        assert_eq!(
            f.evidence[1],
            "CPU weight: cpu.shares 2 (default 1024) in /sys/fs/cgroup/cpu/low/cpu.shares"
        );
        // The default weight: busy neighbours of the same weight, said so.
        let d = CpuWeight {
            value: 1024,
            ..w.clone()
        };
        let f = cpu_starved(&waits(&[70.0, 65.0, 80.0], 90.0), Some(&d), None).unwrap();
        assert!(f.message.contains("tasks of this machine kept its CPUs busy (its cgroup's weight, cpu.shares 1024 (default 1024), is not below the default)"), "{}", f.message);
        assert!(cpu_starved(&waits(&[70.0], 90.0), None, None)
            .unwrap()
            .message
            .contains("no CPU weight was readable"));
    }

    #[test]
    fn a_neighbour_sharing_the_cpus_or_steal_is_not_starvation() {
        let w = CpuWeight {
            file: "/sys/fs/cgroup/cpu/low/cpu.shares".into(),
            value: 2,
            default: 1024,
            idle: false,
        };
        // A low weight matters only against busy neighbours: an idle machine waits ~0%.
        assert!(cpu_starved(&waits(&[0.1, 0.0, 0.3], 1.0), Some(&w), None).is_none());
        // One neighbour of the same weight on each CPU: up to half the time.
        assert!(cpu_starved(&waits(&[45.0, 48.0, 30.0, 60.0], 95.0), None, None).is_none());
        // No round read its canaries' waiting: nothing said.
        assert!(cpu_starved(&[], Some(&w), None).is_none());
        // Many rounds judge alone: the run's own thread does not outvote them.
        let run = Some(RunWait { percent: 99.0 });
        assert!(cpu_starved(&waits(&[0.1, 0.0, 0.3], 1.0), Some(&w), run).is_none());
        // A run's own thread that got its CPU when it wanted one is not starved.
        let idle = Some(RunWait { percent: 3.0 });
        assert!(cpu_starved(&waits(&[80.0], 1.0), Some(&w), idle).is_none());
    }

    #[test]
    fn a_run_the_budget_ended_after_a_round_or_two_is_judged_by_its_own_thread() {
        let w = CpuWeight {
            file: "/sys/fs/cgroup/cpu/low/cpu.shares".into(),
            value: 2,
            default: 1024,
            idle: false,
        };
        // One round, whose canary ran in a lucky moment; the thread that ran the rounds
        // waited 99% of the time it wanted a CPU.
        let run = Some(RunWait { percent: 99.2 });
        let f = cpu_starved(&waits(&[12.0], 97.0), Some(&w), run).expect("fires");
        assert!(
            f.message.starts_with("This cgroup got 0.8% of a CPU"),
            "{}",
            f.message
        );
        assert!(
            f.evidence[0].starts_with("the thread that ran the rounds waited for a CPU 99.2% of the time it wanted one over the whole run")
                && f.evidence[0].contains("fewer than 3 rounds had canaries (1)"),
            "{:?}",
            f.evidence
        );
        // No round at all: the run's thread alone says it.
        assert!(cpu_starved(&[], Some(&w), run).is_some());
    }

    fn at(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    fn ids(f: &[Finding]) -> Vec<&str> {
        f.iter().map(|f| f.id.as_str()).collect()
    }

    fn short(row: &str, steal: Option<f64>, why: &str) -> Short {
        Short {
            row: row.into(),
            mde: Some(0.14),
            target: 0.08,
            rounds: 5,
            steal,
            why: why.into(),
        }
    }

    #[test]
    fn a_budget_that_left_rows_short_says_so_and_names_steal_only_when_it_took_the_time() {
        assert!(budget_short(&[], 40.0, true).is_none());
        let loud = budget_short(
            &[
                short(
                    "memory.latency 4 KiB",
                    Some(27.0),
                    "the budget of 40 s ran out after 5 rounds",
                ),
                short(
                    "ctx same-cpu",
                    Some(3.0),
                    "the budget of 40 s ran out after 5 rounds",
                ),
            ],
            40.0,
            true,
        )
        .unwrap();
        assert_eq!(loud.severity, Severity::Warning);
        assert!(
            loud.message.contains("budget of 40 s ended with 2 rows"),
            "{}",
            loud.message
        );
        assert!(
            loud.message.contains("hypervisor took up to 27%"),
            "{}",
            loud.message
        );
        assert!(
            loud.evidence[0].contains("MDE 14.0% (target 8.0%) in 5 rounds"),
            "{:?}",
            loud.evidence
        );
        // Steal below 5% of the rows' rounds is not named; within the budget it is info.
        let quiet = budget_short(
            &[short("ctx same-cpu", Some(3.0), "rounds disagree")],
            40.0,
            false,
        )
        .unwrap();
        assert_eq!(quiet.severity, Severity::Info);
        assert!(!quiet.message.contains("hypervisor"), "{}", quiet.message);
        assert!(
            quiet.message.starts_with("1 row stayed short"),
            "{}",
            quiet.message
        );
    }

    #[test]
    fn a_synchronised_punctual_start_raises_nothing() {
        let synced = decode(libc::TIME_OK, libc::STA_PLL, 50, 1200, 0);
        let s = record(
            at("2026-11-23T15:00:00Z"),
            at("2026-11-23T15:00:00.004Z"),
            std::time::Duration::from_secs(30),
            Ok(synced),
        );
        assert!(scheduled_start(&s).is_empty());
        // Unreadable adjtimex is recorded as such, not called unsynchronised.
        let unknown = record(
            at("2026-11-23T15:00:00Z"),
            at("2026-11-23T15:00:00.004Z"),
            std::time::Duration::ZERO,
            Err("adjtimex failed".into()),
        );
        assert!(scheduled_start(&unknown).is_empty());
    }

    #[test]
    fn an_unsynchronised_clock_and_a_late_start_are_each_named_with_their_evidence() {
        let unsynced = decode(
            libc::TIME_ERROR,
            libc::STA_UNSYNC,
            16_000_000,
            16_000_000,
            0,
        );
        let s = record(
            at("2026-11-23T15:00:00Z"),
            at("2026-11-23T15:00:02.5Z"),
            std::time::Duration::ZERO,
            Ok(unsynced),
        );
        let f = scheduled_start(&s);
        assert_eq!(ids(&f), ["start-clock-unsynchronised", "start-late"]);
        assert!(f[0].evidence[0].contains("TIME_ERROR STA_UNSYNC, maximum error 16000000 µs"));
        assert!(f[0].message.contains("16.0 s apart"));
        assert!(f[1].message.contains("2.5 s after"));
        assert!(f[1].evidence[0].contains("asked for 2026-11-23T15:00:00.000Z"));
        // Just under a second late is not late.
        let s = record(
            at("2026-11-23T15:00:00Z"),
            at("2026-11-23T15:00:00.999Z"),
            std::time::Duration::ZERO,
            Ok(decode(libc::TIME_OK, 0, 0, 100, 0)),
        );
        assert!(scheduled_start(&s).is_empty());
    }

    fn sample(suite: &str, point: SpeedPoint, cpu: u32, ghz: f64) -> SpeedSample {
        let kind = (cpu > 0).then_some("intel-atom");
        crate::result::testing::speed_sample(suite, point, cpu, kind, ghz)
    }

    #[test]
    fn cpu_speed_dropped_fires_on_a_large_fall_within_a_suite_only() {
        use SpeedPoint::{End, Start};
        let speed = CpuSpeed {
            method: "test".into(),
            samples: vec![
                sample("ctx", Start, 0, 3.0),
                sample("ctx", Start, 4, 2.0),
                sample("ctx", End, 0, 2.95),
                sample("ctx", End, 4, 1.5),
                // A slower next suite is no fall within a suite.
                sample("memory", Start, 0, 2.0),
                sample("memory", End, 0, 1.9),
                // A rise is not a drop.
                sample("classic", Start, 0, 2.0),
                sample("classic", End, 0, 3.0),
            ],
            unavailable: vec![],
            canaries: vec![],
            pair_canaries: vec![],
        };
        let f = cpu_speed_dropped(&speed);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].id, "cpu-speed-dropped");
        assert!(f[0]
            .message
            .contains("CPU 4 (intel-atom) fell by 25% during ctx"));
        assert!(f[0].evidence[0].contains("2.000") && f[0].evidence[0].contains("1.500"));
        // An end without its start (an older document cut short) raises nothing.
        let lone = CpuSpeed {
            samples: vec![sample("ctx", End, 0, 1.0)],
            ..speed
        };
        assert!(cpu_speed_dropped(&lone).is_empty());
    }
}

/// What one round's canaries and readings said of the CPU its cgroup got (`cpu_starved`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RoundWait {
    /// The share (%) of the canaries' wall time they waited for a CPU (`Round::waited`).
    pub waited: f64,
    /// Other tasks' share (%) of the round's CPUs, where read.
    pub others: Option<f64>,
    /// The hypervisor's steal (%) of the round's CPUs, where read.
    pub steal: Option<f64>,
}

/// The median waiting share (%) of a run's rounds from which the run was starved of CPU: its
/// threads waited for a CPU more than they ran. A neighbour of the same weight on each CPU
/// makes a thread wait about half the time at most; a cgroup of the lowest weight beside
/// busy groups waits 99% or more.
pub const STARVED_PERCENT: f64 = 50.0;

/// Fewest rounds with canaries whose median `cpu_starved` judges by alone; with fewer (a
/// starved run's budget may end after one round, whose canary may have been lucky), the
/// run's own thread over the whole run (`RunWait`) judges instead.
pub const STARVED_MIN_ROUNDS: usize = 3;

/// How long the thread that ran the rounds waited for a CPU over the whole run, as a share
/// (%) of the time it wanted one (`measure::run_delay::wanted_share`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunWait {
    pub percent: f64,
}

/// The run's threads waited for a CPU most of the time (median over its rounds at least
/// `STARVED_PERCENT`; with fewer than `STARVED_MIN_ROUNDS` rounds read, the run's own
/// thread over the whole run, `run`, where read): the share of a CPU this cgroup got, and
/// why as far as it is read: its weight against busy neighbours (`weight` below its
/// default), or neighbours of its own weight. A warning: every figure of the run is a
/// figure of a starved process.
pub fn cpu_starved(
    rounds: &[RoundWait],
    weight: Option<&CpuWeight>,
    run: Option<RunWait>,
) -> Option<Finding> {
    let median = |v: Vec<f64>| (!v.is_empty()).then(|| crate::result::rounds::median(&v));
    let by_rounds = median(rounds.iter().map(|r| r.waited).collect());
    let by_run = run.filter(|_| rounds.len() < STARVED_MIN_ROUNDS);
    let waited = match by_run {
        Some(r) => r.percent,
        None => by_rounds?,
    };
    if waited < STARVED_PERCENT {
        return None;
    }
    let others = median(rounds.iter().filter_map(|r| r.others).collect());
    let steal = median(rounds.iter().filter_map(|r| r.steal).collect());
    let got = 100.0 - waited;
    let busy = others
        .map(|o| format!(" while other tasks used {o:.0}% of its CPUs"))
        .unwrap_or_default();
    let why = match weight {
        Some(w) if w.below_default() => format!(
            "its cgroup's weight, {}, against busy neighbours (against one busy neighbour of the default weight it gets {:.1}% of a CPU)",
            w.words(),
            100.0 * w.share_against(1.0)
        ),
        Some(w) => format!(
            "tasks of this machine kept its CPUs busy (its cgroup's weight, {}, is not below the default)",
            w.words()
        ),
        None => "tasks of this machine kept its CPUs busy (no CPU weight was readable)".into(),
    };
    let mut evidence = vec![match by_run {
        Some(r) => format!(
            "the thread that ran the rounds waited for a CPU {:.1}% of the time it wanted one over the whole run (schedstat run delay against run time), read because fewer than {STARVED_MIN_ROUNDS} rounds had canaries ({}){busy}",
            r.percent,
            rounds.len()
        ),
        None => format!(
            "the canaries before {} waited for a CPU {waited:.1}% of their wall time (median; schedstat run delay of their thread){busy}",
            crate::units::count(rounds.len(), "round")
        ),
    }];
    if let Some(w) = weight {
        evidence.push(format!("CPU weight: {} in {}", w.words(), w.file));
    }
    if let Some(s) = steal {
        evidence.push(format!(
            "the hypervisor's steal over the rounds: {s:.1}% (median), apart from the waiting"
        ));
    }
    Some(Finding::new(
        "cpu-starved",
        Severity::Warning,
        format!("This cgroup got {got:.1}% of a CPU: truebench's threads waited for one {waited:.0}% of the time, because of {why}. Every figure of this run is that of a starved process."),
        evidence,
    ))
}
