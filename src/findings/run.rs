//! Rules over a whole measuring run, from readings taken at its start and its end: the
//! hypervisor taking CPU time (`steal-time`), the clocksource changing (`clocksource-changed`),
//! a `--start-at` run that cannot be lined up with other hosts' (`start-clock-unsynchronised`,
//! `start-late`).

use super::{Finding, Severity};
use crate::probe::{kernel, sysroot::SysRoot};
use crate::result::ScheduledStart;

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
            vec![format!("/proc/stat steal grew by {stolen:.2} s over {secs:.1} s on {cpus} CPUs")],
        )
    })
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::start_at::{decode, record};
    use chrono::{DateTime, Utc};

    fn at(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    fn ids(f: &[Finding]) -> Vec<&str> {
        f.iter().map(|f| f.id.as_str()).collect()
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
}
