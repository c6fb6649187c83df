//! What each suite of a run cost: its wall time and the peak resident memory of the truebench
//! process while it ran, so users can tell how long and how much memory a suite takes before
//! running it on a small machine. The peak is the kernel's high-water mark of this process
//! (`VmHWM` in /proc/self/status), reset at the suite's start by writing `5` to
//! /proc/self/clear_refs; child processes (the classic suite's workers) are not in it.

use serde::{Deserialize, Serialize};

/// One suite's cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SuiteCost {
    pub suite: String,
    /// Wall time from the suite's start to its end, including its CPU-speed samples, s.
    pub wall_s: f64,
    /// Peak resident set of the truebench process during the suite, bytes; absent (with
    /// `peak_rss_note`) when /proc/self/status could not be read.
    pub peak_rss_bytes: Option<u64>,
    /// What limits the peak figure: e.g. that the high-water mark could not be reset, so it
    /// is the process's peak since it started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_rss_note: Option<String>,
}

/// Measures one suite: started when the suite begins, finished when it ends.
pub struct SuiteMeter {
    suite: String,
    t0: std::time::Instant,
    reset: Result<(), String>,
}

/// The process's resident-set high-water mark, bytes.
fn peak_rss() -> Result<u64, String> {
    let s = std::fs::read_to_string("/proc/self/status")
        .map_err(|e| format!("/proc/self/status: {e}"))?;
    s.lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        .map(|kb| kb * 1024)
        .ok_or_else(|| "no VmHWM in /proc/self/status".into())
}

impl SuiteMeter {
    pub fn start(suite: &str) -> SuiteMeter {
        let reset = std::fs::write("/proc/self/clear_refs", "5")
            .map_err(|e| format!("/proc/self/clear_refs: {e}"));
        SuiteMeter {
            suite: suite.into(),
            t0: std::time::Instant::now(),
            reset,
        }
    }

    pub fn finish(self) -> SuiteCost {
        let wall_s = self.t0.elapsed().as_secs_f64();
        match (peak_rss(), self.reset) {
            (Ok(b), Ok(())) => SuiteCost {
                suite: self.suite,
                wall_s,
                peak_rss_bytes: Some(b),
                peak_rss_note: None,
            },
            (Ok(b), Err(e)) => SuiteCost {
                suite: self.suite,
                wall_s,
                peak_rss_bytes: Some(b),
                peak_rss_note: Some(format!(
                    "the process's peak since it started: the high-water mark could not be reset ({e})"
                )),
            },
            (Err(e), _) => SuiteCost {
                suite: self.suite,
                wall_s,
                peak_rss_bytes: None,
                peak_rss_note: Some(e),
            },
        }
    }
}

/// Add one stretch of a suite to a run's costs: a suite whose benchmarks ran in several
/// stretches (a calibration run's shuffled order) keeps one entry, its wall times summed and
/// the highest of its peaks (absent, with the reason, when any stretch's peak is).
pub fn add(costs: &mut Vec<SuiteCost>, c: SuiteCost) {
    let Some(e) = costs.iter_mut().find(|e| e.suite == c.suite) else {
        costs.push(c);
        return;
    };
    e.wall_s += c.wall_s;
    e.peak_rss_bytes = match (e.peak_rss_bytes, c.peak_rss_bytes) {
        (Some(a), Some(b)) => Some(a.max(b)),
        _ => None,
    };
    if e.peak_rss_note.is_none() {
        e.peak_rss_note = c.peak_rss_note;
    }
}

/// One line per suite: "Suite memory: 23.4 s, peak RSS 412 MiB".
pub fn lines(costs: &[SuiteCost]) -> Vec<String> {
    costs
        .iter()
        .map(|c| {
            let peak = match (c.peak_rss_bytes, &c.peak_rss_note) {
                (Some(b), None) => format!("peak RSS {}", crate::units::bytes(b)),
                (Some(b), Some(n)) => {
                    format!("peak RSS {} ({n})", crate::units::bytes(b))
                }
                (None, n) => format!(
                    "peak RSS not measured ({})",
                    n.as_deref().unwrap_or("unknown reason")
                ),
            };
            format!("Suite {}: {:.1} s wall time, {peak}", c.suite, c.wall_s)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_suite_run_in_stretches_keeps_one_entry_with_summed_time_and_highest_peak() {
        let c = |suite: &str, wall_s: f64, peak: Option<u64>| SuiteCost {
            suite: suite.into(),
            wall_s,
            peak_rss_bytes: peak,
            peak_rss_note: peak.is_none().then(|| "unreadable".to_string()),
        };
        let mut costs = vec![];
        add(&mut costs, c("memory", 2.0, Some(100)));
        add(&mut costs, c("ctx", 1.0, Some(10)));
        add(&mut costs, c("memory", 3.0, Some(400)));
        assert_eq!(costs.len(), 2);
        assert_eq!(costs[0].wall_s, 5.0);
        assert_eq!(costs[0].peak_rss_bytes, Some(400));
        add(&mut costs, c("ctx", 1.0, None));
        assert_eq!(costs[1].peak_rss_bytes, None);
        assert_eq!(costs[1].peak_rss_note.as_deref(), Some("unreadable"));
    }

    #[test]
    fn a_suite_that_touches_memory_shows_it_in_its_peak() {
        let m = SuiteMeter::start("test");
        let v = vec![1u8; 64 << 20];
        std::hint::black_box(&v);
        let c = m.finish();
        drop(v);
        let peak = c.peak_rss_bytes.expect("VmHWM readable on Linux");
        assert!(peak >= 64 << 20, "{peak}");
        assert!(c.wall_s >= 0.0 && c.wall_s < 60.0, "{}", c.wall_s);
        let l = lines(&[c]);
        assert!(
            l[0].starts_with("Suite test: ") && l[0].contains("peak RSS"),
            "{l:?}"
        );
    }

    #[test]
    fn an_unreadable_peak_is_absent_with_its_reason() {
        let c = SuiteCost {
            suite: "memory".into(),
            wall_s: 12.0,
            peak_rss_bytes: None,
            peak_rss_note: Some("no VmHWM".into()),
        };
        assert_eq!(
            lines(&[c]),
            vec!["Suite memory: 12.0 s wall time, peak RSS not measured (no VmHWM)"]
        );
    }
}
