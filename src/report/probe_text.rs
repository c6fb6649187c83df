//! The probe as a readable summary, with a compact topology picture in the manner of
//! lstopo: packages > LLC groups > cores > CPUs (summarised on large machines).

use crate::probe::cgroup::UNREADABLE;
use crate::probe::cpulist::format_list;
use crate::probe::ProbeDoc;
use crate::units::{bytes, count, num};
use std::fmt::Write;

fn list(v: &[u32]) -> String {
    format!("[{}]", format_list(v))
}

/// Private caches of a core, smallest level first: "L1d 32 KiB, L1i 64 KiB, L2 512 KiB".
fn private_caches(p: &ProbeDoc, core: &[u32]) -> String {
    p.topology
        .caches
        .iter()
        .filter(|c| c.cpus.iter().all(|x| core.contains(x)) && c.cpus.contains(&core[0]))
        .map(|c| {
            let t = match c.kind.as_str() {
                "Data" => "d",
                "Instruction" => "i",
                _ => "",
            };
            format!(
                "L{}{t} {}",
                c.level,
                c.size_bytes.map(bytes).unwrap_or_else(|| "?".into())
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

pub fn render(p: &ProbeDoc) -> String {
    let mut s = String::new();
    let t = &p.topology;
    let _ = writeln!(
        s,
        "Machine {}{}{}",
        p.hostname.as_deref().unwrap_or("(unknown host)"),
        p.kernel
            .cpu_model
            .as_deref()
            .map(|m| format!(" — {m}"))
            .unwrap_or_default(),
        if p.live {
            String::new()
        } else {
            format!(" (captured tree {})", p.root)
        }
    );
    let v = &p.virtualization;
    let _ = writeln!(
        s,
        "  VM layer: {}   container layer: {}",
        v.vm.as_deref().unwrap_or("none"),
        v.container.as_deref().unwrap_or("none")
    );
    for e in &v.evidence {
        let _ = writeln!(s, "    evidence: {e}");
    }
    let c = &p.cpus;
    // A cgroup fact whose file held garbage is unknown, not absent (no cpuset, no quota).
    let unknown_or = |key: &str, absent: &str| {
        let unread = p
            .unavailable
            .0
            .get(key)
            .is_some_and(|why| why.contains(UNREADABLE));
        if unread {
            "unknown (see below)"
        } else {
            absent
        }
        .to_string()
    };
    let _ = writeln!(
        s,
        "CPUs: online {} of possible {}{}; affinity {}; cgroup cpuset {}; quota {}",
        list(&c.online),
        list(&c.possible),
        if c.offline.is_empty() {
            String::new()
        } else {
            format!(" (offline {})", list(&c.offline))
        },
        list(&c.allowed),
        c.cgroup_cpuset
            .as_deref()
            .map(list)
            .unwrap_or_else(|| unknown_or("cpus.cgroup_cpuset", "none")),
        c.cgroup_quota
            .map(|q| format!("{q:.2} CPUs"))
            .unwrap_or_else(|| unknown_or("cpus.cgroup_quota", "unlimited")),
    );
    let _ = writeln!(
        s,
        "  usable capacity: {} CPUs ({})",
        num(c.capacity),
        c.capacity_basis
    );
    if let Some(m) = &c.cgroup_mems {
        let _ = writeln!(s, "  cgroup memory nodes: {}", list(m));
    }
    if let Some(w) = p.cgroup.as_ref().and_then(|g| g.cpu_weight.as_ref()) {
        let _ = writeln!(
            s,
            "  CPU weight: {}{}\n    {}",
            w.words(),
            if w.below_default() {
                ": less than a fair share of a CPU its neighbours keep busy"
            } else {
                ""
            },
            w.file
        );
    }
    for l in p.memory.lines() {
        let _ = writeln!(s, "{l}");
    }
    if !c.isolated.is_empty() {
        let _ = writeln!(s, "  isolated: {}", list(&c.isolated));
    }
    let _ = writeln!(
        s,
        "Topology: {}, {}, {}, {}, {} per core{}",
        count(t.packages, "package"),
        count(t.dies, "die"),
        count(t.cores, "core"),
        count(t.threads, "CPU"),
        count(t.threads_per_core, "thread"),
        t.clusters
            .map(|n| format!(", {}", count(n, "cluster")))
            .unwrap_or_default()
    );
    if !t.caches.is_empty() {
        let _ = writeln!(
            s,
            "  cache sizes below: as the OS reports them (sysfs; a VM's may be synthetic): `truebench run memory` measures where they end"
        );
    }
    let llc_level = t.llc_level.unwrap_or(0);
    for (pkg, cpus) in t.package_cpus() {
        let _ = writeln!(s, "  Package {pkg} {}", list(&cpus));
        for g in t
            .llc_groups
            .iter()
            .filter(|g| g.iter().any(|x| cpus.contains(x)))
        {
            let size = t
                .caches
                .iter()
                .find(|c| c.level == llc_level && &c.cpus == g)
                .and_then(|c| c.size_bytes)
                .map(bytes)
                .unwrap_or_else(|| "?".into());
            let cores: Vec<Vec<u32>> = t
                .core_sets()
                .into_iter()
                .filter(|core| core.iter().all(|x| g.contains(x)))
                .collect();
            let _ = writeln!(
                s,
                "    L{llc_level} {size} (LLC) {}: {}",
                list(g),
                count(cores.len(), "core")
            );
            if cores.len() <= 16 {
                for core in &cores {
                    let _ = writeln!(s, "      Core {} — {}", list(core), private_caches(p, core));
                }
            } else {
                let _ = writeln!(
                    s,
                    "      {} like {} — {}",
                    count(cores.len(), "core"),
                    list(&cores[0]),
                    private_caches(p, &cores[0])
                );
            }
        }
    }
    for kind in &t.cpu_kinds {
        let _ = writeln!(
            s,
            "  CPU kind {}: {} ({})",
            kind.kind,
            list(&kind.cpus),
            kind.evidence.join("; ")
        );
    }
    // The usual case (ids agreeing with the masks) is not worth a line.
    for e in t.evidence.iter().filter(|e| !e.contains("agreeing")) {
        let _ = writeln!(s, "  topology: {e}");
    }
    let _ = writeln!(
        s,
        "NUMA ({}): {}",
        p.numa.source,
        count(p.numa.nodes.len(), "node")
    );
    for (i, n) in p.numa.nodes.iter().enumerate() {
        let _ = writeln!(
            s,
            "  node {} ({}{}) {} memory {} distances {:?}",
            n.id,
            n.kind,
            n.memory_tier
                .map(|t| format!(", memory tier {t}"))
                .unwrap_or_default(),
            list(&n.cpus),
            n.memory_bytes
                .map(bytes)
                .unwrap_or_else(|| "unknown".into()),
            p.numa.distances.get(i).cloned().unwrap_or_default()
        );
    }
    let k = &p.clock;
    let _ = writeln!(
        s,
        "Clock: clocksource {} (available: {}); TSC flags: {}",
        k.clocksource.as_deref().unwrap_or("unknown"),
        k.available.join(" "),
        if k.tsc_flags.is_empty() {
            "none".into()
        } else {
            k.tsc_flags.join(" ")
        }
    );
    if let Some(hz) = k.counter_hz {
        let _ = writeln!(
            s,
            "  counter cntvct_el0: {:.3} MHz (cntfrq_el0)",
            hz as f64 / 1e6
        );
    }
    if k.read_cost_ns.is_empty() {
        let _ = writeln!(s, "  read costs: not measured (captured tree)");
    } else {
        for (name, ns) in &k.read_cost_ns {
            let sys = k
                .syscall_cost_ns
                .get(name)
                .map(|x| format!(", {} ns via syscall", num(*x)))
                .unwrap_or_default();
            let _ = writeln!(s, "  {name:<17} {} ns per read{sys}", num(*ns));
        }
    }
    let kr = &p.kernel;
    let _ = writeln!(
        s,
        "Kernel {}; cpufreq {}; THP {}; idle driver {}",
        kr.release.as_deref().unwrap_or("unknown"),
        match (&kr.cpufreq_driver, &kr.cpufreq_governor) {
            (Some(d), Some(g)) => format!("{d}/{g}"),
            _ => kr
                .cpuinfo_mhz
                .map(|m| format!("absent ({m:.0} MHz in /proc/cpuinfo)"))
                .unwrap_or_else(|| "absent".into()),
        },
        kr.thp.as_deref().unwrap_or("unknown"),
        kr.idle_driver.as_deref().unwrap_or("none"),
    );
    let _ = writeln!(
        s,
        "PMU: {}",
        match p.pmu.available {
            Some(true) => "hardware counters available".to_string(),
            _ => p.pmu.reason.clone().unwrap_or_default(),
        }
    );
    if let Some(st) = &p.steal {
        let _ = writeln!(
            s,
            "Steal so far: {:.1} s ({:.3}% of CPU time)",
            st.seconds,
            st.share * 100.0
        );
    }
    if let Some(l) = &p.load {
        let _ = writeln!(
            s,
            "Load average: {:.2} {:.2} {:.2} ({} runnable of {})",
            l.one,
            l.five,
            l.fifteen,
            l.runnable,
            count(l.tasks, "task")
        );
    }
    if !p.unavailable.0.is_empty() {
        let _ = writeln!(s, "Not available:");
        for (k, why) in &p.unavailable.0 {
            let _ = writeln!(s, "  {k}: {why}");
        }
    }
    if p.findings.is_empty() {
        let _ = writeln!(s, "Findings: none");
    } else {
        let _ = writeln!(s, "Findings:");
        s.push_str(&super::findings_text(&p.findings));
    }
    let _ = writeln!(s, "(probe took {:.0} ms)", p.probe_ms);
    s
}
