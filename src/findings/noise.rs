//! Rules over what the sampler saw while one result was measured: other processes using
//! the CPUs (`noisy-neighbour`), the hypervisor taking them (`steal-time`), the cgroup quota
//! throttling this process (`throttled`). A noisy result is flagged, never dropped.

use crate::finding::{Finding, Severity};
use crate::observe::sampler::Sample;

/// Other processes using at least this share of the usable CPUs make a result noisy.
pub const NOISY_SHARE: f64 = 0.10;
/// Steal at least this share of the usable CPUs' time during a result.
pub const STEAL_SHARE: f64 = 0.02;
/// /proc/stat counts steal in whole clock ticks (10 ms): a share is claimed from at least
/// this many stolen ticks, so that one tick more or less (the counter's resolution) moves
/// it by at most a quarter. One tick of 42 is below what the counter resolves.
pub const MIN_STEAL_TICKS: u64 = 4;

/// Whether `stolen_s` seconds of steal (counted in ticks of `ticks_per_s`) are enough
/// ticks to claim anything.
pub fn steal_resolved(stolen_s: f64, ticks_per_s: f64) -> bool {
    (stolen_s * ticks_per_s).round() >= MIN_STEAL_TICKS as f64
}

/// The samples that enclose [start, end]: the last at or before start, the first at or
/// after end (widened to the sampling interval for short results). None without two.
pub fn window(samples: &[Sample], start_ns: u64, end_ns: u64) -> Option<(&Sample, &Sample)> {
    let before = samples
        .iter()
        .rev()
        .find(|s| s.t_ns <= start_ns)
        .or(samples.first())?;
    let after = samples
        .iter()
        .find(|s| s.t_ns >= end_ns)
        .or(samples.last())?;
    (after.t_ns > before.t_ns).then_some((before, after))
}

/// Findings for one window over `usable` CPUs with `ticks_per_s` clock ticks per second.
pub fn evaluate(before: &Sample, after: &Sample, usable: usize, ticks_per_s: f64) -> Vec<Finding> {
    let mut out = Vec::new();
    let secs = (after.t_ns - before.t_ns) as f64 / 1e9;
    let span = format!("sampled over the {:.0} ms around this result", secs * 1e3);
    let capacity = secs * ticks_per_s * usable.max(1) as f64;
    let mut busy: Vec<(String, i32, u64)> = after
        .others
        .iter()
        .map(|(pid, (name, t))| {
            let was = before.others.get(pid).map(|x| x.1).unwrap_or(0);
            (name.clone(), *pid, t.saturating_sub(was))
        })
        .filter(|x| x.2 > 0)
        .collect();
    busy.sort_by_key(|x| std::cmp::Reverse(x.2));
    let others: u64 = busy.iter().map(|x| x.2).sum();
    let share = others as f64 / capacity;
    if capacity > 0.0 && share >= NOISY_SHARE {
        let mut evidence = vec![format!(
            "other processes: {:.2} CPU-s of {:.2} CPU-s available on {usable} usable {}, {span}",
            others as f64 / ticks_per_s,
            capacity / ticks_per_s,
            crate::units::noun(usable, "CPU")
        )];
        evidence.extend(
            busy.iter().take(3).map(|(n, pid, t)| {
                format!("{n} (pid {pid}): {:.2} CPU-s", *t as f64 / ticks_per_s)
            }),
        );
        out.push(Finding::new(
            "noisy-neighbour",
            Severity::Warning,
            format!(
                "Other processes used {:.0}% of the usable CPUs while this was measured: the figure includes waiting for them.",
                share * 100.0
            ),
            evidence,
        ));
    }
    let dt = after.total_ticks.saturating_sub(before.total_ticks);
    let ds = after.steal_ticks.saturating_sub(before.steal_ticks);
    if dt > 0 && ds >= MIN_STEAL_TICKS && ds as f64 / dt as f64 >= STEAL_SHARE {
        out.push(Finding::new(
            "steal-time",
            Severity::Warning,
            format!(
                "The hypervisor took {:.1}% of the usable CPUs' time while this was measured.",
                ds as f64 / dt as f64 * 100.0
            ),
            vec![format!(
                "/proc/stat steal: {ds} of {dt} ticks ({:.0} ms each; one tick is {:.1}% here), {span}",
                1e3 / ticks_per_s,
                100.0 / dt as f64
            )],
        ));
    }
    if let (Some(a), Some(b)) = (before.nr_throttled, after.nr_throttled) {
        if b > a {
            let us = match (before.throttled_us, after.throttled_us) {
                (Some(x), Some(y)) => {
                    format!(", {:.1} ms throttled", y.saturating_sub(x) as f64 / 1e3)
                }
                _ => String::new(),
            };
            out.push(Finding::new(
                "throttled",
                Severity::Warning,
                "The cgroup CPU quota throttled this process while this was measured: the figure includes time spent waiting for the next quota period.".to_string(),
                vec![format!("cpu.stat nr_throttled +{}{us}, {span}", b - a)],
            ));
        }
    }
    out
}

/// Give every result the noise findings of its own measurement window (start, end); a
/// result without one (pooled from rounds) gets none.
pub fn annotate(
    results: &mut [crate::result::BenchResult],
    windows: &[Option<(u64, u64)>],
    samples: Vec<Sample>,
    usable: usize,
) {
    let ticks = ticks_per_s();
    for (r, w) in results.iter_mut().zip(windows) {
        let Some((from, end)) = *w else {
            continue;
        };
        if let Some((a, b)) = window(&samples, from, end) {
            r.findings.extend(evaluate(a, b, usable, ticks));
        }
    }
}

/// Clock ticks per second (USER_HZ), 100 when it cannot be read.
pub fn ticks_per_s() -> f64 {
    nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
        .ok()
        .flatten()
        .unwrap_or(100) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(
        t_ms: u64,
        others: &[(i32, &str, u64)],
        steal: u64,
        total: u64,
        throttled: Option<u64>,
    ) -> Sample {
        Sample {
            t_ns: t_ms * 1_000_000,
            others: others
                .iter()
                .map(|(p, n, t)| (*p, (n.to_string(), *t)))
                .collect(),
            steal_ticks: steal,
            total_ticks: total,
            nr_throttled: throttled,
            throttled_us: throttled.map(|n| n * 1000),
        }
    }

    #[test]
    fn a_hog_on_one_of_two_cpus_is_a_noisy_neighbour() {
        // One second, 100 ticks/s, 2 CPUs: 200 ticks of capacity; the hog took 95.
        let a = sample(0, &[(10, "yes", 1000), (11, "sshd", 5)], 0, 0, None);
        let b = sample(1000, &[(10, "yes", 1095), (11, "sshd", 6)], 0, 200, None);
        let f = evaluate(&a, &b, 2, 100.0);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].id, "noisy-neighbour");
        assert!(f[0].message.contains("48%"), "{}", f[0].message);
        assert!(
            f[0].evidence[1].starts_with("yes (pid 10): 0.95 CPU-s"),
            "{:?}",
            f[0].evidence
        );
    }

    #[test]
    fn a_quiet_window_raises_nothing_and_steal_and_throttling_do() {
        let a = sample(0, &[(11, "sshd", 5)], 0, 0, Some(7));
        let b = sample(1000, &[(11, "sshd", 8)], 1, 200, Some(7));
        assert!(evaluate(&a, &b, 2, 100.0).is_empty());
        let c = sample(1000, &[(11, "sshd", 8)], 10, 200, Some(9));
        let ids: Vec<String> = evaluate(&a, &c, 2, 100.0)
            .into_iter()
            .map(|f| f.id)
            .collect();
        assert_eq!(ids, vec!["steal-time", "throttled"]);
    }

    /// One stolen tick of 42 (2.4%, 251 ms on 2 CPUs) is below the counter's resolution:
    /// no claim. Four of 42 are.
    #[test]
    fn steal_is_claimed_only_from_enough_ticks() {
        let a = sample(0, &[], 0, 0, None);
        let b = sample(251, &[], 1, 42, None);
        assert!(evaluate(&a, &b, 2, 100.0).is_empty());
        let c = sample(251, &[], 4, 42, None);
        let f = evaluate(&a, &c, 2, 100.0);
        assert_eq!(f[0].id, "steal-time");
        assert!(
            f[0].evidence[0].contains("10 ms each"),
            "{:?}",
            f[0].evidence
        );
    }

    #[test]
    fn windows_widen_to_the_enclosing_samples() {
        let s = vec![
            sample(0, &[], 0, 0, None),
            sample(250, &[], 0, 50, None),
            sample(500, &[], 0, 100, None),
        ];
        let (a, b) = window(&s, 260_000_000, 270_000_000).unwrap();
        assert_eq!((a.t_ns, b.t_ns), (250_000_000, 500_000_000));
        assert!(window(&s[..1], 0, 10).is_none());
    }
}
