//! `--start-at TIME`: when a measuring command begins measuring. The time is parsed (RFC
//! 3339, or `+SECONDS` from now) and refused when past or unreadable before anything runs;
//! the session probes first, then waits here (a line on stderr says until when; Ctrl-C
//! cancels with nothing stored), and records the requested and actual start with the
//! clock's synchronisation as adjtimex(2) reports it (read only: `modes = 0`).

use crate::result::{ClockSync, ScheduledStart};
use chrono::{DateTime, SecondsFormat, Utc};
use std::io::IsTerminal;
use std::time::Duration;

/// The furthest ahead a start may be asked for (a longer wait is a scheduler's job).
pub const MAX_AHEAD_S: i64 = 24 * 3600;

/// A start time given as RFC 3339 or `+SECONDS` (relative to `now`): in the future, at
/// most a day ahead.
pub fn parse(s: &str, now: DateTime<Utc>) -> Result<DateTime<Utc>, String> {
    let at = if let Some(rel) = s.strip_prefix('+') {
        let secs: f64 = rel
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite())
            .ok_or_else(|| format!("'{s}' is not +SECONDS (e.g. +30)"))?;
        if secs <= 0.0 {
            return Err(format!("'{s}' is not in the future (give +SECONDS > 0)"));
        }
        if secs > MAX_AHEAD_S as f64 {
            return Err(format!(
                "'{s}' is more than {MAX_AHEAD_S} s (a day) ahead; start it from a scheduler"
            ));
        }
        now + chrono::Duration::microseconds((secs * 1e6) as i64)
    } else {
        DateTime::parse_from_rfc3339(s)
            .map_err(|e| {
                format!("'{s}' is not an RFC 3339 time such as 2026-11-23T15:00:00Z, nor +SECONDS ({e})")
            })?
            .with_timezone(&Utc)
    };
    if at <= now {
        return Err(format!("{} is in the past (now {})", text(&at), text(&now)));
    }
    if (at - now).num_seconds() > MAX_AHEAD_S {
        return Err(format!(
            "{} is more than a day ahead (now {}); start it from a scheduler",
            text(&at),
            text(&now)
        ));
    }
    Ok(at)
}

fn text(t: &DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// Wait until `at` on the wall clock, saying so on stderr (a line updated each second on a
/// terminal, one line otherwise). Returns false when Ctrl-C cancelled the wait.
pub fn wait_until(at: DateTime<Utc>) -> bool {
    let tty = std::io::stderr().is_terminal();
    let remaining = |now: DateTime<Utc>| (at - now).to_std().unwrap_or_default();
    let first = remaining(Utc::now());
    if first.is_zero() {
        return !crate::interrupt::requested();
    }
    eprintln!(
        "truebench: probed; measuring starts at {} (in {:.1} s; Ctrl-C cancels, nothing is stored)",
        text(&at),
        first.as_secs_f64()
    );
    let mut shown = u64::MAX;
    loop {
        if crate::interrupt::requested() {
            if tty {
                eprintln!();
            }
            return false;
        }
        let left = remaining(Utc::now());
        if left.is_zero() {
            break;
        }
        if tty && left.as_secs() != shown {
            shown = left.as_secs();
            eprint!("\rtruebench: starting in {:>6} s ", shown + 1);
        }
        // Short steps: Ctrl-C is seen within 50 ms and the last step ends on time.
        std::thread::sleep(left.min(Duration::from_millis(50)));
    }
    if tty {
        eprintln!("\rtruebench: starting now          ");
    }
    true
}

/// The record of a start asked for `requested` that began at `began` after waiting `waited`.
pub fn record(
    requested: DateTime<Utc>,
    began: DateTime<Utc>,
    waited: Duration,
    sync: Result<ClockSync, String>,
) -> ScheduledStart {
    let late = (began - requested)
        .num_microseconds()
        .unwrap_or(i64::MAX)
        .max(0) as f64
        / 1e3;
    let (clock_sync, clock_sync_unavailable) = match sync {
        Ok(s) => (Some(s), None),
        Err(why) => (None, Some(why)),
    };
    ScheduledStart {
        requested_at: text(&requested),
        began_at: began.to_rfc3339_opts(SecondsFormat::Micros, true),
        late_ms: late,
        waited_s: waited.as_secs_f64(),
        clock_sync,
        clock_sync_unavailable,
    }
}

const STATUS_FLAGS: &[(i32, &str)] = &[
    (libc::STA_PLL, "STA_PLL"),
    (libc::STA_PPSFREQ, "STA_PPSFREQ"),
    (libc::STA_PPSTIME, "STA_PPSTIME"),
    (libc::STA_FLL, "STA_FLL"),
    (libc::STA_INS, "STA_INS"),
    (libc::STA_DEL, "STA_DEL"),
    (libc::STA_UNSYNC, "STA_UNSYNC"),
    (libc::STA_FREQHOLD, "STA_FREQHOLD"),
    (libc::STA_PPSSIGNAL, "STA_PPSSIGNAL"),
    (libc::STA_PPSJITTER, "STA_PPSJITTER"),
    (libc::STA_PPSWANDER, "STA_PPSWANDER"),
    (libc::STA_PPSERROR, "STA_PPSERROR"),
    (libc::STA_CLOCKERR, "STA_CLOCKERR"),
    (libc::STA_NANO, "STA_NANO"),
    (libc::STA_MODE, "STA_MODE"),
    (libc::STA_CLK, "STA_CLK"),
];

/// The clock's synchronisation from adjtimex's return value and its fields.
pub fn decode(state: i32, status: i32, esterror: i64, maxerror: i64, offset: i64) -> ClockSync {
    let state_name = match state {
        libc::TIME_OK => "TIME_OK",
        libc::TIME_INS => "TIME_INS",
        libc::TIME_DEL => "TIME_DEL",
        libc::TIME_OOP => "TIME_OOP",
        libc::TIME_WAIT => "TIME_WAIT",
        libc::TIME_ERROR => "TIME_ERROR",
        _ => "unknown",
    };
    let flags: Vec<String> = STATUS_FLAGS
        .iter()
        .filter(|(bit, _)| status & bit != 0)
        .map(|(_, name)| name.to_string())
        .collect();
    // The offset is in ns with STA_NANO, else in µs.
    let offset_us = if status & libc::STA_NANO != 0 {
        offset as f64 / 1e3
    } else {
        offset as f64
    };
    ClockSync {
        synchronised: state != libc::TIME_ERROR && status & libc::STA_UNSYNC == 0,
        state: state_name.into(),
        status: flags,
        estimated_error_us: esterror.max(0),
        maximum_error_us: maxerror.max(0),
        offset_us,
    }
}

/// Read this host's clock synchronisation (adjtimex with `modes = 0`: changes nothing).
pub fn clock_sync() -> Result<ClockSync, String> {
    // SAFETY: a zeroed timex with modes 0 asks adjtimex to only fill it in.
    let mut tx: libc::timex = unsafe { std::mem::zeroed() };
    tx.modes = 0;
    // SAFETY: tx is a valid, writable timex.
    let state = unsafe { libc::adjtimex(&mut tx) };
    if state < 0 {
        return Err(format!(
            "adjtimex failed: {}",
            std::io::Error::last_os_error()
        ));
    }
    Ok(decode(
        state,
        tx.status,
        tx.esterror as i64,
        tx.maxerror as i64,
        tx.offset as i64,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2026-11-23T15:00:00Z")
            .unwrap()
            .with_timezone(&Utc)
    }

    #[test]
    fn a_start_is_a_future_rfc3339_time_or_seconds_from_now() {
        let at = |s: &str| text(&parse(s, now()).unwrap());
        assert_eq!(at("+30"), "2026-11-23T15:00:30.000Z");
        assert_eq!(at("+0.5"), "2026-11-23T15:00:00.500Z");
        assert_eq!(at("2026-11-23T16:00:01+01:00"), "2026-11-23T15:00:01.000Z");
        assert_eq!(at("2026-11-23T15:10:00Z"), "2026-11-23T15:10:00.000Z");
    }

    #[test]
    fn a_past_unreadable_or_far_start_is_refused_with_its_reason() {
        let err = |s: &str| parse(s, now()).unwrap_err();
        assert!(err("2026-11-23T14:59:59Z").contains("is in the past"));
        assert!(err("2026-11-23T16:00:00+01:00").contains("is in the past"));
        assert!(err("+0").contains("not in the future"));
        assert!(err("+-5").contains("not in the future"));
        assert!(err("+abc").contains("not +SECONDS"));
        assert!(err("+inf").contains("not +SECONDS"));
        assert!(err("tomorrow").contains("not an RFC 3339 time"));
        assert!(err("2026-11-23 15:10").contains("not an RFC 3339 time"));
        assert!(err("+90000").contains("a day"));
        assert!(err("2026-11-25T15:00:00Z").contains("a day ahead"));
    }

    #[test]
    fn lateness_is_measured_from_the_requested_time_and_never_negative() {
        let began = now() + chrono::Duration::microseconds(1500);
        let r = record(now(), began, Duration::from_secs(3), Err("no".into()));
        assert_eq!(r.late_ms, 1.5);
        assert_eq!(r.began_at, "2026-11-23T15:00:00.001500Z");
        assert_eq!(r.waited_s, 3.0);
        assert_eq!(r.clock_sync_unavailable.as_deref(), Some("no"));
        let early = record(
            now(),
            now() - chrono::Duration::milliseconds(1),
            Duration::ZERO,
            Err("x".into()),
        );
        assert_eq!(early.late_ms, 0.0);
    }

    #[test]
    fn adjtimex_state_and_flags_decode_to_names_and_microseconds() {
        // An NTP-disciplined clock (chrony: PLL, nanosecond offsets).
        let s = decode(
            libc::TIME_OK,
            libc::STA_PLL | libc::STA_NANO,
            120,
            4500,
            25_000,
        );
        assert!(s.synchronised);
        assert_eq!(s.state, "TIME_OK");
        assert_eq!(s.status, ["STA_PLL", "STA_NANO"]);
        assert_eq!((s.estimated_error_us, s.maximum_error_us), (120, 4500));
        assert_eq!(s.offset_us, 25.0);
        // Nothing disciplines the clock: the kernel's defaults.
        let u = decode(
            libc::TIME_ERROR,
            libc::STA_UNSYNC,
            16_000_000,
            16_000_000,
            7,
        );
        assert!(!u.synchronised);
        assert_eq!(u.status, ["STA_UNSYNC"]);
        assert_eq!(u.offset_us, 7.0);
        // STA_UNSYNC alone is enough to say unsynchronised.
        assert!(!decode(libc::TIME_OK, libc::STA_UNSYNC, 0, 0, 0).synchronised);
    }

    #[test]
    fn this_hosts_clock_can_be_read_without_changing_it() {
        let s = clock_sync().unwrap();
        assert!(s.maximum_error_us >= s.estimated_error_us || !s.synchronised);
        assert_eq!(
            s.synchronised,
            !s.status.iter().any(|f| f == "STA_UNSYNC") && s.state != "TIME_ERROR"
        );
    }
}
