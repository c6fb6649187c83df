//! Rules over the probed environment: topology the scheduler will misread, clock reads
//! that became syscalls, stolen time, quotas narrower than the cpuset, missing counters.

use crate::finding::{Finding, Severity};
use crate::probe::cpulist::format_list;
use crate::probe::ProbeDoc;

/// Every probe rule, in report order.
pub fn evaluate(p: &ProbeDoc) -> Vec<Finding> {
    let rules: &[fn(&ProbeDoc) -> Option<Finding>] = &[
        llc_not_shared,
        smt_without_shared_cache,
        single_core_packages,
        clock_read_syscall,
        steal_time,
        cpu_quota_below_cpuset,
        pmu_unavailable,
        stray_container_marker,
        offline_cpus,
    ];
    rules.iter().filter_map(|r| r(p)).collect()
}

/// No LLC instance spans two cores of a package that has several cores: Linux builds no LLC
/// scheduling domain, so a woken task stays on the waker's CPU (docs/methodology.md, "Why it exists" 1).
fn llc_not_shared(p: &ProbeDoc) -> Option<Finding> {
    let t = &p.topology;
    let cores = t.core_sets();
    let mut evidence = Vec::new();
    for (pkg, cpus) in t.package_cpus() {
        let pkg_cores = cores
            .iter()
            .filter(|c| c.iter().any(|x| cpus.contains(x)))
            .count();
        if pkg_cores < 2 {
            continue;
        }
        let groups: Vec<&Vec<u32>> = t
            .llc_groups
            .iter()
            .filter(|g| g.iter().any(|x| cpus.contains(x)))
            .collect();
        let spans_cores = groups.iter().any(|g| {
            cores
                .iter()
                .filter(|c| c.iter().any(|x| g.contains(x)))
                .count()
                >= 2
        });
        if groups.is_empty() || spans_cores {
            return None;
        }
        evidence.push(format!(
            "package {pkg}: {}, LLC groups {}",
            crate::units::count(pkg_cores, "core"),
            groups
                .iter()
                .map(|g| format!("[{}]", format_list(g)))
                .collect::<Vec<_>>()
                .join(" ")
        ));
    }
    if evidence.is_empty() {
        return None;
    }
    evidence.push(format!("LLC level L{}", t.llc_level.unwrap_or(0)));
    Some(Finding::new(
        "llc-not-shared",
        Severity::Warning,
        "No last-level cache is shared between cores: Linux builds no LLC scheduling domain and keeps a woken task on the waker's CPU, so unpinned IPC benchmarks (pipe ping-pong, UnixBench context switching) measure same-CPU switching. Compare pinned placements (truebench run ctx).",
        evidence,
    ))
}

/// SMT siblings that share no cache at all: impossible on real hardware, so the topology is synthetic.
fn smt_without_shared_cache(p: &ProbeDoc) -> Option<Finding> {
    let t = &p.topology;
    let bad: Vec<String> = t
        .core_sets()
        .into_iter()
        .filter(|core| core.len() > 1)
        .filter(|core| {
            !t.caches
                .iter()
                .any(|c| core.iter().all(|x| c.cpus.contains(x)))
        })
        .map(|core| format!("core [{}] shares no cache instance", format_list(&core)))
        .collect();
    if bad.is_empty() {
        return None;
    }
    Some(Finding::new(
        "smt-without-shared-cache",
        Severity::Warning,
        "SMT siblings are reported without any shared cache, which real hardware never does: the topology is synthetic (a hypervisor's), so placement by topology may not match the physical machine.",
        bad.into_iter().take(8).collect(),
    ))
}

/// Several packages with one core each (a common VM presentation): every CPU looks like a socket.
fn single_core_packages(p: &ProbeDoc) -> Option<Finding> {
    let t = &p.topology;
    if t.packages < 2 || t.cores != t.packages {
        return None;
    }
    Some(Finding::new(
        "single-core-packages",
        Severity::Warning,
        "Every package has a single core: the machine is presented as many one-core sockets (a common VM layout), so the scheduler sees no shared cache between CPUs and cross-package numbers mean nothing physical.",
        vec![format!(
            "{}, {}, {}",
            crate::units::count(t.packages, "package"),
            crate::units::count(t.cores, "core"),
            crate::units::count(t.threads, "CPU")
        )],
    ))
}

/// The vDSO read costs about as much as the system call: the clock read enters the kernel.
fn clock_read_syscall(p: &ProbeDoc) -> Option<Finding> {
    let c = &p.clock;
    let slow: Vec<String> = ["monotonic", "realtime", "monotonic_raw", "boottime"]
        .iter()
        .filter_map(|name| {
            let v = *c.read_cost_ns.get(*name)?;
            let s = *c.syscall_cost_ns.get(*name)?;
            (v >= 0.6 * s).then(|| format!("{name}: {v:.1} ns via vDSO vs {s:.1} ns via syscall"))
        })
        .collect();
    if slow.is_empty() {
        return None;
    }
    let mut evidence = slow;
    evidence.push(format!(
        "clocksource {}",
        c.clocksource.as_deref().unwrap_or("unknown")
    ));
    Some(Finding::new(
        "clock-read-syscall",
        Severity::Warning,
        "Reading the clock costs as much as a system call: the vDSO fast path is not used (clocksource without vDSO support, or a clock the vDSO does not serve). Benchmarks that read the clock per event measure the clock.",
        evidence,
    ))
}

fn steal_time(p: &ProbeDoc) -> Option<Finding> {
    let s = p.steal.as_ref()?;
    if s.share < 0.005 {
        return None;
    }
    Some(Finding::new(
        "steal-time",
        if s.share >= 0.05 { Severity::Warning } else { Severity::Info },
        format!(
            "The hypervisor has taken {:.1}% of this machine's CPU time since boot: other guests compete for the physical CPUs, so results vary with their load.",
            s.share * 100.0
        ),
        vec![format!("/proc/stat steal: {:.1} s, {:.2}% of all CPU time", s.seconds, s.share * 100.0)],
    ))
}

/// The quota grants fewer CPUs than the cpuset is wide: the Linux analogue of entitled
/// capacity below the virtual processors (docs/methodology.md, "Why it exists" 4).
fn cpu_quota_below_cpuset(p: &ProbeDoc) -> Option<Finding> {
    let quota = p.cpus.cgroup_quota?;
    let width = p.cpus.usable_width;
    if quota >= width as f64 - 1e-9 {
        return None;
    }
    let source = p
        .cgroup
        .as_ref()
        .and_then(|c| c.quota_source.clone())
        .unwrap_or_default();
    Some(Finding::new(
        "cpu-quota-below-cpuset",
        Severity::Warning,
        format!(
            "The CPU quota grants {quota:.2} CPUs but this process may run on {}: parallel work is throttled once it uses the quota in a period, so latency rises while utilisation looks low (entitlement below virtual processors).",
            crate::units::count(width, "CPU")
        ),
        vec![
            format!("quota {quota:.2} CPUs from {source}"),
            format!(
                "affinity ∩ cpuset ∩ online = [{}] ({})",
                format_list(&p.cpus.usable),
                crate::units::count(width, "CPU")
            ),
        ],
    ))
}

fn pmu_unavailable(p: &ProbeDoc) -> Option<Finding> {
    if p.pmu.available != Some(false) {
        return None;
    }
    Some(Finding::new(
        "pmu-unavailable",
        Severity::Info,
        "Hardware performance counters cannot be opened: cycles, instructions and cache misses are absent from every result; software events and /proc counters are used instead.",
        vec![
            p.pmu.reason.clone().unwrap_or_default(),
            format!("event sources: {}", p.pmu.event_sources.join(", ")),
        ],
    ))
}

fn stray_container_marker(p: &ProbeDoc) -> Option<Finding> {
    let v = &p.virtualization;
    if v.stray_markers.is_empty() {
        return None;
    }
    Some(Finding::new(
        "stray-container-marker",
        Severity::Info,
        format!(
            "Container marker {} exists but the namespaces are the kernel's initial ones: this is not a container (tools that trust the file, such as systemd-detect-virt, say it is).",
            v.stray_markers.join(", ")
        ),
        v.container_evidence.clone(),
    ))
}

fn offline_cpus(p: &ProbeDoc) -> Option<Finding> {
    if p.cpus.offline.is_empty() {
        return None;
    }
    let present = p.cpus.present.as_deref().unwrap_or(&p.cpus.possible);
    Some(Finding::new(
        "offline-cpus",
        Severity::Info,
        format!(
            "{} present CPUs are offline: copy counts and placements use the {} online CPUs.",
            p.cpus.offline.len(),
            p.cpus.online.len()
        ),
        vec![format!(
            "present [{}], online [{}], offline [{}]",
            format_list(present),
            format_list(&p.cpus.online),
            format_list(&p.cpus.offline)
        )],
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::fixture;

    #[test]
    fn clock_read_syscall_when_vdso_costs_like_the_syscall() {
        let mut p = fixture("this-vm");
        p.clock.read_cost_ns.insert("monotonic".into(), 22.0);
        p.clock.syscall_cost_ns.insert("monotonic".into(), 180.0);
        assert!(clock_read_syscall(&p).is_none());
        p.clock.read_cost_ns.insert("monotonic".into(), 175.0);
        let f = clock_read_syscall(&p).unwrap();
        assert!(
            f.evidence[0].contains("175.0 ns via vDSO vs 180.0 ns via syscall"),
            "{:?}",
            f.evidence
        );
        assert!(f.evidence.iter().any(|e| e.contains("clocksource tsc")));
    }

    #[test]
    fn pmu_finding_only_when_the_counter_failed() {
        let mut p = fixture("this-vm");
        assert!(
            pmu_unavailable(&p).is_none(),
            "not tried is not unavailable"
        );
        p.pmu.available = Some(false);
        p.pmu.reason = Some("hardware events not supported".into());
        assert!(pmu_unavailable(&p).unwrap().evidence[0].contains("not supported"));
    }

    #[test]
    fn steal_severity_grows_with_the_share() {
        let mut p = fixture("vm-private-llc");
        assert_eq!(steal_time(&p).unwrap().severity, Severity::Info);
        p.steal.as_mut().unwrap().share = 0.08;
        assert_eq!(steal_time(&p).unwrap().severity, Severity::Warning);
        p.steal.as_mut().unwrap().share = 0.001;
        assert!(steal_time(&p).is_none());
    }

    #[test]
    fn quota_equal_to_the_cpuset_is_no_finding() {
        let mut p = fixture("container-quota");
        assert!(cpu_quota_below_cpuset(&p)
            .unwrap()
            .message
            .contains("1.50 CPUs"));
        p.cpus.cgroup_quota = Some(6.0);
        assert!(cpu_quota_below_cpuset(&p).is_none());
    }
}
