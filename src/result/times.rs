//! The times of a run document as `import` takes them: `started_at` and `finished_at` are
//! RFC 3339 times, neither before the Unix epoch (no Linux clock reads earlier) nor more
//! than [`AHEAD`] after the importing machine's clock (a machine whose clock was a little
//! off still imports; a document dated 9999 would have been `latest` and the end of every
//! series for ever), and a finish is not more than [`AHEAD`] before its start (a clock
//! stepped back during a run moves it by seconds). A long run is not refused: `record`
//! runs until Ctrl-C, and a clock set mid-run (a board without a real-time clock) makes one
//! that is years long. A time with another offset is written in UTC (`Z`), the instant unchanged, so
//! that the store's order by text is the order in time (`2026-11-23T23:00:00-05:00` sorted
//! before `2026-11-24T01:00:00Z`, five hours earlier).

use super::RunDocument;
use chrono::{DateTime, SecondsFormat, Utc};

/// How far a document's times may be ahead of the importing machine's clock, and a finish
/// before its start.
pub const AHEAD: chrono::Duration = chrono::Duration::days(1);

/// Check `doc`'s times against `now` and write them in UTC; the reason when refused (one
/// line naming the field and its value).
pub fn admit(doc: &mut RunDocument, now: DateTime<Utc>) -> Result<(), String> {
    let start = parse("started_at", &doc.started_at, now)?;
    in_utc(&mut doc.started_at, start);
    if let Some(f) = doc.finished_at.as_mut() {
        let finish = parse("finished_at", f, now)?;
        if finish < start - AHEAD {
            return Err(format!(
                "finished_at {} is {} before started_at {}: more than the {} a clock stepped \
                 back during a run explains",
                utc(finish),
                span(start - finish),
                utc(start),
                span(AHEAD)
            ));
        }
        in_utc(f, finish);
    }
    Ok(())
}

/// `text` (the time `t`) written in UTC when it has another offset; a time already in UTC
/// (`Z`, as truebench writes it) is kept as given, digit for digit (a start at a whole
/// second written `.000Z` comes back out of `export` as it went in).
fn in_utc(text: &mut String, t: DateTime<Utc>) {
    if !text.ends_with(['Z', 'z']) {
        *text = utc(t);
    }
}

/// `text` as a time in UTC, within the epoch and `now` + [`AHEAD`].
fn parse(field: &str, text: &str, now: DateTime<Utc>) -> Result<DateTime<Utc>, String> {
    let shown = || crate::stdout::field(&text.chars().take(40).collect::<String>()).into_owned();
    let t = DateTime::parse_from_rfc3339(text)
        .map_err(|e| format!("{field} '{}' is not an RFC 3339 time ({e})", shown()))?
        .with_timezone(&Utc);
    if t < DateTime::UNIX_EPOCH {
        return Err(format!(
            "{field} {} is before 1970-01-01: no Linux clock reads that",
            shown()
        ));
    }
    if t > now + AHEAD {
        return Err(format!(
            "{field} {} is {} after this machine's clock ({}): more than the {} a clock that \
             is off may be ahead",
            shown(),
            span(t - now),
            utc(now),
            span(AHEAD)
        ));
    }
    Ok(t)
}

/// A time as truebench writes it: UTC, `Z`, the fraction of a second as given (0, 3, 6 or
/// 9 digits).
fn utc(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::AutoSi, true)
}

/// A span in its largest whole unit: `3 days`, `2 h`, `5 min`, `40 s`.
fn span(d: chrono::Duration) -> String {
    let s = d.num_seconds();
    match s {
        s if s >= 2 * 86_400 => format!("{} days", s / 86_400),
        s if s >= 86_400 => "1 day".into(),
        s if s >= 3_600 => format!("{} h", s / 3_600),
        s if s >= 60 => format!("{} min", s / 60),
        s => format!("{s} s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::testing::{env, run};

    #[test]
    fn a_time_in_utc_is_kept_digit_for_digit_and_an_offset_is_written_in_utc() {
        let mut d = doc("2026-11-27T10:00:00.000Z", Some("2026-11-27T10:00:31.5Z"));
        admit(&mut d, now()).unwrap();
        assert_eq!(d.started_at, "2026-11-27T10:00:00.000Z");
        assert_eq!(d.finished_at.as_deref(), Some("2026-11-27T10:00:31.5Z"));
        let mut d = doc("2026-11-27T05:00:00-05:00", None);
        admit(&mut d, now()).unwrap();
        assert_eq!(d.started_at, "2026-11-27T10:00:00Z");
    }

    fn now() -> DateTime<Utc> {
        "2026-11-27T12:00:00Z".parse().unwrap()
    }

    fn doc(start: &str, finish: Option<&str>) -> RunDocument {
        let mut d = run("times-1", vec![], env());
        d.started_at = start.into();
        d.finished_at = finish.map(Into::into);
        d
    }

    fn refusal(start: &str, finish: Option<&str>) -> String {
        admit(&mut doc(start, finish), now()).unwrap_err()
    }

    #[test]
    fn a_time_far_ahead_of_the_clock_is_refused_naming_the_field_and_value() {
        let e = refusal("9999-12-31T23:59:59Z", None);
        assert!(
            e.starts_with("started_at 9999-12-31T23:59:59Z is ")
                && e.contains("days after this machine's clock (2026-11-27T12:00:00Z)"),
            "{e}"
        );
        assert!(!e.contains('\n'), "{e}");
        let e = refusal("2026-11-28T12:00:01Z", None);
        assert!(
            e.starts_with("started_at 2026-11-28T12:00:01Z is 1 day after"),
            "{e}"
        );
        let e = refusal("2026-11-27T00:00:00Z", Some("2027-01-01T00:00:00Z"));
        assert!(
            e.starts_with("finished_at 2027-01-01T00:00:00Z is 34 days after"),
            "{e}"
        );
        let e = refusal("1969-12-31T23:59:59Z", None);
        assert!(e.contains("before 1970-01-01"), "{e}");
        let e = refusal("0000-01-01T00:00:00Z", None);
        assert!(
            e.starts_with("started_at 0000-01-01T00:00:00Z is before"),
            "{e}"
        );
        let e = refusal("tomorrow", None);
        assert!(
            e.starts_with("started_at 'tomorrow' is not an RFC 3339 time"),
            "{e}"
        );
    }

    #[test]
    fn a_clock_a_little_off_or_stepped_back_still_imports() {
        // Ahead by 23 h (a time zone taken for UTC), a finish 10 min before its start (a
        // clock stepped back), a run of years (a clock set mid-run), the epoch itself.
        for (start, finish) in [
            ("2026-11-28T11:00:00Z", None),
            ("2026-11-27T12:00:00Z", Some("2026-11-27T11:50:00Z")),
            ("1970-01-01T00:00:00Z", Some("2026-11-27T11:00:00Z")),
            ("2001-01-01T00:00:00.5Z", Some("2026-11-28T11:59:59Z")),
        ] {
            let mut d = doc(start, finish);
            assert_eq!(admit(&mut d, now()), Ok(()), "{start} {finish:?}");
        }
        let e = refusal("2026-11-27T12:00:00Z", Some("2026-11-26T11:59:59Z"));
        assert_eq!(
            e,
            "finished_at 2026-11-26T11:59:59Z is 1 day before started_at \
             2026-11-27T12:00:00Z: more than the 1 day a clock stepped back during a run \
             explains"
        );
    }

    #[test]
    fn times_are_written_in_utc_the_instant_unchanged() {
        let mut d = doc(
            "2026-11-23T23:00:00-05:00",
            Some("2026-11-24t04:00:01.25+00:00"),
        );
        admit(&mut d, now()).unwrap();
        assert_eq!(d.started_at, "2026-11-24T04:00:00Z");
        assert_eq!(d.finished_at.as_deref(), Some("2026-11-24T04:00:01.250Z"));
        // truebench's own times are unchanged.
        let mut d = doc("2026-11-23T11:56:46.002Z", Some("2026-11-23T11:56:46.141Z"));
        admit(&mut d, now()).unwrap();
        assert_eq!(d.started_at, "2026-11-23T11:56:46.002Z");
        assert_eq!(d.finished_at.as_deref(), Some("2026-11-23T11:56:46.141Z"));
    }
}
