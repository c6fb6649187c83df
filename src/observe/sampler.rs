//! The sampler that runs beside every benchmark run: every 250 ms it reads the CPU time of
//! every other process (/proc/PID/stat, outside this process and its children), the steal
//! and busy time of the usable CPUs (/proc/stat), and this cgroup's throttling counters
//! (cpu.stat). Each result then gets the deltas over the time it was measured.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

pub const INTERVAL_MS: u64 = 250;

#[derive(Debug, Clone, Default)]
pub struct Sample {
    /// CLOCK_MONOTONIC, ns.
    pub t_ns: u64,
    /// Cumulative CPU ticks (utime + stime) of every other process: pid -> (name, ticks).
    pub others: HashMap<i32, (String, u64)>,
    /// Cumulative steal ticks over the usable CPUs.
    pub steal_ticks: u64,
    /// Cumulative ticks of all kinds over the usable CPUs.
    pub total_ticks: u64,
    pub nr_throttled: Option<u64>,
    pub throttled_us: Option<u64>,
}

/// Parse /proc/PID/stat: (name, ppid, utime + stime).
pub fn parse_pid_stat(text: &str) -> Option<(String, i32, u64)> {
    let s = super::process::parse_stat(text)?;
    Some((s.comm, s.ppid, s.utime + s.stime))
}

/// Sum of the steal column and of all columns of the `cpuN` lines of `usable` CPUs.
pub fn parse_stat_ticks(text: &str, usable: &[u32]) -> (u64, u64) {
    let t = cpu_ticks(text, usable);
    (t.steal, t.total)
}

/// Ticks of some CPUs from /proc/stat.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTicks {
    /// user, nice, system, irq and softirq.
    pub busy: u64,
    pub steal: u64,
    /// The first eight columns (user to steal; guest time is inside user).
    pub total: u64,
}

/// The ticks of the `cpuN` lines of `cpus` in /proc/stat's text (the aggregate `cpu` line
/// is not a CPU).
pub fn cpu_ticks(text: &str, cpus: &[u32]) -> CpuTicks {
    let mut t = CpuTicks::default();
    for l in text.lines() {
        let Some(rest) = l
            .strip_prefix("cpu")
            .filter(|r| r.starts_with(|c: char| c.is_ascii_digit()))
        else {
            continue;
        };
        let mut f = rest.split_whitespace();
        let Some(Ok(cpu)) = f.next().map(str::parse::<u32>) else {
            continue;
        };
        if !cpus.contains(&cpu) {
            continue;
        }
        let v: Vec<u64> = f.filter_map(|x| x.parse().ok()).collect();
        let at = |i: usize| v.get(i).copied().unwrap_or(0);
        // user nice system idle iowait irq softirq steal
        t.busy += at(0) + at(1) + at(2) + at(5) + at(6);
        t.steal += at(7);
        t.total += (0..8).map(at).sum::<u64>();
    }
    t
}

fn read_sample(me: i32, usable: &[u32], cpu_stat: Option<&PathBuf>) -> Sample {
    let mut others = HashMap::new();
    if let Ok(rd) = std::fs::read_dir("/proc") {
        for e in rd.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
                continue;
            };
            if pid == me {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                continue;
            };
            if let Some((name, ppid, ticks)) = parse_pid_stat(&text) {
                if ppid != me {
                    others.insert(pid, (name, ticks));
                }
            }
        }
    }
    let (steal_ticks, total_ticks) = std::fs::read_to_string("/proc/stat")
        .map(|s| parse_stat_ticks(&s, usable))
        .unwrap_or((0, 0));
    let throttling = cpu_stat
        .and_then(|p| std::fs::read_to_string(p).ok())
        .map(|s| crate::probe::cgroup::parse_cpu_stat(&s, s.contains("throttled_usec")));
    Sample {
        t_ns: crate::measure::clocks::now_ns(),
        others,
        steal_ticks,
        total_ticks,
        nr_throttled: throttling.and_then(|t| t.1),
        throttled_us: throttling.and_then(|t| t.2),
    }
}

pub struct Sampler {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<Vec<Sample>>>,
}

impl Sampler {
    /// Start sampling the usable CPUs, and the cgroup `cpu.stat` file when there is one.
    pub fn start(usable: Vec<u32>, cpu_stat: Option<PathBuf>) -> Sampler {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let me = std::process::id() as i32;
        let handle = std::thread::Builder::new()
            .name("truebench-sampler".into())
            .spawn(move || {
                let mut v = vec![read_sample(me, &usable, cpu_stat.as_ref())];
                while !flag.load(Ordering::Relaxed) {
                    // One wake-up per interval (not a polling loop that would disturb the
                    // benchmark); `finish` unparks the thread to stop it at once.
                    std::thread::park_timeout(std::time::Duration::from_millis(INTERVAL_MS));
                    v.push(read_sample(me, &usable, cpu_stat.as_ref()));
                }
                v
            })
            .ok();
        Sampler { stop, handle }
    }

    /// Stop and return the samples (none if the thread could not start).
    pub fn finish(mut self) -> Vec<Sample> {
        self.stop.store(true, Ordering::Relaxed);
        let Some(h) = self.handle.take() else {
            return vec![];
        };
        h.thread().unpark();
        h.join().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pid_stat_with_spaces_and_parens_in_the_name() {
        // A real /proc/PID/stat line (kernel 6.x), with an awkward name and utime 250, stime 50.
        let s = "1234 (my (odd) prog) R 1 1234 1234 0 -1 4194304 100 0 0 0 250 50 0 0 20 0 1 0 735038 3133440 412 18446744073709551615 94548863877120 94548863897001 140737017710800 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 94548863913008 94548863914624 94549107675136 140737017719279 140737017719299 140737017719299 140737017720811 0";
        assert_eq!(parse_pid_stat(s), Some(("my (odd) prog".into(), 1, 300)));
        assert_eq!(parse_pid_stat("garbage"), None);
    }

    #[test]
    fn stat_ticks_of_usable_cpus_only() {
        let s = "cpu  10 0 10 100 0 0 0 5 0 0\ncpu0 5 0 5 50 0 0 0 2 0 0\ncpu1 5 0 5 50 0 0 0 3 0 0\nintr 1\n";
        assert_eq!(parse_stat_ticks(s, &[1]), (3, 63));
        assert_eq!(parse_stat_ticks(s, &[0, 1]), (5, 125));
    }

    #[test]
    fn the_sampler_reads_throttling_from_cpu_stat() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("cpu.stat");
        std::fs::write(
            &f,
            "usage_usec 5\nnr_periods 10\nnr_throttled 3\nthrottled_usec 4500\n",
        )
        .unwrap();
        let s = read_sample(std::process::id() as i32, &[0], Some(&f));
        assert_eq!((s.nr_throttled, s.throttled_us), (Some(3), Some(4500)));
    }

    #[test]
    fn the_sampler_collects_and_stops() {
        let s = Sampler::start(vec![0], None);
        std::thread::sleep(std::time::Duration::from_millis(300));
        let v = s.finish();
        assert!(v.len() >= 2, "{} samples", v.len());
        assert!(v.windows(2).all(|w| w[1].t_ns > w[0].t_ns));
        assert!(
            !v[0].others.is_empty(),
            "no other process seen (PID 1 at least)"
        );
    }
}
