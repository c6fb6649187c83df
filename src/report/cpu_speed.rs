//! The run's effective CPU speed in a few lines (text and HTML reports): per CPU (one per
//! kind), each suite's figure at its start and end, and the samples that could not be taken.

use crate::result::{CpuSpeed, RunDocument, SpeedPoint};

/// The unit of `cycles_per_ns`: GHz from the assembly chain, relative otherwise.
fn unit(speed: &CpuSpeed) -> &'static str {
    if speed.method.contains("relative only") {
        "adds/ns (relative, not GHz)"
    } else {
        "GHz"
    }
}

/// "CPU speed, CPU 0 (intel-core): timers 2.91 GHz effective at start, 2.90 GHz at end; ctx
/// 2.90 GHz at start, not sampled at end", one line per CPU sampled, each suite once (a
/// run in rounds samples every suite's start before their ends); empty when the run has
/// none.
pub fn lines(doc: &RunDocument) -> Vec<String> {
    let Some(speed) = &doc.cpu_speed else {
        return vec![];
    };
    let unit = unit(speed);
    let mut cpus: Vec<(u32, Option<&str>)> = Vec::new();
    for s in &speed.samples {
        if !cpus.iter().any(|(c, _)| *c == s.cpu) {
            cpus.push((s.cpu, s.cpu_kind.as_deref()));
        }
    }
    let mut out = Vec::new();
    for (cpu, kind) in cpus {
        // Each suite once, in the order first sampled: its first start, its last end.
        let mut suites: Vec<(&str, Option<f64>, Option<f64>)> = Vec::new();
        for s in speed.samples.iter().filter(|s| s.cpu == cpu) {
            let i = match suites.iter().position(|(n, _, _)| *n == s.suite) {
                Some(i) => i,
                None => {
                    suites.push((&s.suite, None, None));
                    suites.len() - 1
                }
            };
            let entry = &mut suites[i];
            match s.point {
                SpeedPoint::Start => {
                    entry.1.get_or_insert(s.cycles_per_ns);
                }
                SpeedPoint::End => entry.2 = Some(s.cycles_per_ns),
            }
        }
        let f = |v: Option<f64>, eff: &str| {
            v.map_or("not sampled".to_string(), |v| format!("{v:.2} {unit}{eff}"))
        };
        let parts: Vec<String> = suites
            .iter()
            .enumerate()
            .map(|(i, (name, a, b))| {
                let eff = if i == 0 { " effective" } else { "" };
                format!("{name} {} at start, {} at end", f(*a, eff), f(*b, ""))
            })
            .collect();
        let who = match kind {
            Some(k) => format!("CPU {cpu} ({k})"),
            None => format!("CPU {cpu}"),
        };
        out.push(format!("CPU speed, {who}: {}", parts.join("; ")));
    }
    for u in &speed.unavailable {
        out.push(format!("CPU speed not measured: {u}"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_give_each_suite_start_and_end_per_cpu() {
        let mut doc = crate::result::testing::run("r", vec![], crate::result::testing::env());
        assert!(lines(&doc).is_empty());
        let s = |suite: &str, point, cpu, v| {
            let kind = if cpu == 0 { "intel-core" } else { "intel-atom" };
            crate::result::testing::speed_sample(suite, point, cpu, Some(kind), v)
        };
        use SpeedPoint::{End, Start};
        doc.cpu_speed = Some(CpuSpeed {
            method: crate::bench::cpu_speed::method().into(),
            samples: vec![
                s("ctx", Start, 0, 2.9),
                s("ctx", Start, 8, 2.1),
                s("ctx", End, 0, 2.88),
                s("ctx", End, 8, 2.1),
                s("memory", Start, 0, 2.5),
                // A run in rounds: every suite's start, then the ends.
                s("timers", Start, 0, 2.7),
                s("timers", End, 0, 2.6),
            ],
            unavailable: vec!["memory end on CPU 8: could not pin".into()],
            canaries: vec![],
            pair_canaries: vec![],
        });
        let l = lines(&doc);
        assert_eq!(
            l[0],
            "CPU speed, CPU 0 (intel-core): ctx 2.90 GHz effective at start, 2.88 GHz at end; \
             memory 2.50 GHz at start, not sampled at end; timers 2.70 GHz at start, 2.60 GHz \
             at end"
        );
        assert!(l[1].starts_with("CPU speed, CPU 8 (intel-atom): ctx 2.10 GHz"));
        assert_eq!(
            l[2],
            "CPU speed not measured: memory end on CPU 8: could not pin"
        );
    }
}
