//! The probe against captured and synthetic system trees (tests/fixtures/sysroots/): counts,
//! LLC groups, NUMA, quotas, virtualization layers and findings, cross-checked with
//! `lscpu --sysroot` where lscpu applies.

use std::process::Command;
use truebench::probe::{cpulist::parse_list, sysroot::SysRoot, ProbeDoc};
use truebench::session::probe;

mod common;

use common::fixture;

fn probe_fixture(name: &str) -> ProbeDoc {
    probe(&SysRoot::captured(fixture(name)))
}

struct Expect {
    name: &'static str,
    packages: usize,
    cores: usize,
    threads: usize,
    threads_per_core: usize,
    llc_level: u32,
    /// The LLC groups as kernel lists, or just their count on big machines.
    llc_groups: Result<&'static [&'static str], usize>,
    nodes: usize,
    quota: Option<f64>,
    usable: usize,
    vm: Option<&'static str>,
    container: Option<&'static str>,
    findings: &'static [&'static str],
}

const EXPECT: &[Expect] = &[
    Expect {
        name: "two-socket-smt",
        packages: 2,
        cores: 20,
        threads: 40,
        threads_per_core: 2,
        llc_level: 3,
        llc_groups: Ok(&["0-9,20-29", "10-19,30-39"]),
        nodes: 2,
        quota: None,
        usable: 40,
        vm: None,
        container: None,
        findings: &[],
    },
    Expect {
        name: "epyc-multi-llc-2node",
        packages: 1,
        cores: 16,
        threads: 32,
        threads_per_core: 2,
        llc_level: 3,
        llc_groups: Ok(&["0-3,16-19", "4-7,20-23", "8-11,24-27", "12-15,28-31"]),
        nodes: 2,
        quota: None,
        usable: 32,
        vm: None,
        container: None,
        findings: &[],
    },
    Expect {
        name: "vm-private-llc",
        packages: 1,
        cores: 4,
        threads: 4,
        threads_per_core: 1,
        llc_level: 3,
        llc_groups: Ok(&["0", "1", "2", "3"]),
        nodes: 1,
        quota: None,
        usable: 4,
        vm: Some("qemu"),
        container: None,
        findings: &["llc-not-shared", "steal-time"],
    },
    Expect {
        name: "vm-socket-per-vcpu",
        packages: 4,
        cores: 4,
        threads: 4,
        threads_per_core: 1,
        llc_level: 3,
        llc_groups: Ok(&["0", "1", "2", "3"]),
        nodes: 1,
        quota: None,
        usable: 4,
        vm: Some("kvm"),
        container: None,
        findings: &["single-core-packages"],
    },
    Expect {
        name: "vm-smt-no-shared-cache",
        packages: 1,
        cores: 2,
        threads: 4,
        threads_per_core: 2,
        llc_level: 3,
        llc_groups: Ok(&["0", "1", "2", "3"]),
        nodes: 1,
        quota: None,
        usable: 4,
        vm: Some("amazon"),
        container: None,
        findings: &["llc-not-shared", "smt-without-shared-cache"],
    },
    Expect {
        name: "arm-no-l3",
        packages: 1,
        cores: 8,
        threads: 8,
        threads_per_core: 1,
        llc_level: 2,
        llc_groups: Ok(&["0-3", "4-7"]),
        nodes: 1,
        quota: None,
        usable: 8,
        vm: None,
        container: None,
        findings: &[],
    },
    Expect {
        name: "container-quota",
        packages: 1,
        cores: 8,
        threads: 16,
        threads_per_core: 2,
        llc_level: 3,
        llc_groups: Ok(&["0-15"]),
        nodes: 1,
        quota: Some(1.5),
        usable: 6,
        vm: None,
        container: Some("docker"),
        findings: &["cpu-quota-below-cpuset"],
    },
    Expect {
        name: "offline-cpus",
        packages: 1,
        cores: 6,
        threads: 6,
        threads_per_core: 1,
        llc_level: 3,
        llc_groups: Ok(&["0-5"]),
        nodes: 1,
        quota: Some(4.0),
        usable: 6,
        vm: None,
        container: None,
        findings: &["cpu-quota-below-cpuset", "offline-cpus"],
    },
    Expect {
        name: "epyc-256",
        packages: 2,
        cores: 128,
        threads: 256,
        threads_per_core: 2,
        llc_level: 3,
        llc_groups: Err(16),
        nodes: 4,
        quota: None,
        usable: 256,
        vm: None,
        container: None,
        findings: &[],
    },
    Expect {
        name: "this-vm",
        packages: 1,
        cores: 2,
        threads: 2,
        threads_per_core: 1,
        llc_level: 3,
        llc_groups: Ok(&["0-1"]),
        nodes: 1,
        quota: None,
        usable: 2,
        vm: Some("kvm"),
        container: None,
        findings: &["stray-container-marker"],
    },
];

#[test]
fn every_fixture_reads_as_expected() {
    for e in EXPECT {
        let p = probe_fixture(e.name);
        let t = &p.topology;
        let ctx = e.name;
        assert_eq!(t.packages, e.packages, "{ctx}: packages");
        assert_eq!(t.cores, e.cores, "{ctx}: cores");
        assert_eq!(t.threads, e.threads, "{ctx}: threads");
        assert_eq!(
            t.threads_per_core, e.threads_per_core,
            "{ctx}: threads per core"
        );
        assert_eq!(t.llc_level, Some(e.llc_level), "{ctx}: LLC level");
        match e.llc_groups {
            Ok(lists) => {
                let want: Vec<Vec<u32>> = lists.iter().map(|l| parse_list(l).unwrap()).collect();
                let mut got = t.llc_groups.clone();
                got.sort();
                let mut want_sorted = want.clone();
                want_sorted.sort();
                assert_eq!(got, want_sorted, "{ctx}: LLC groups");
            }
            Err(n) => {
                assert_eq!(t.llc_groups.len(), n, "{ctx}: LLC group count");
                // Every CPU in exactly one group.
                let total: usize = t.llc_groups.iter().map(Vec::len).sum();
                assert_eq!(total, e.threads, "{ctx}: LLC groups cover every CPU once");
            }
        }
        assert_eq!(p.numa.nodes.len(), e.nodes, "{ctx}: NUMA nodes");
        assert_eq!(p.numa.distances.len(), e.nodes, "{ctx}: distance rows");
        assert_eq!(p.cpus.cgroup_quota, e.quota, "{ctx}: quota");
        assert_eq!(p.cpus.usable_width, e.usable, "{ctx}: usable CPUs");
        assert_eq!(p.virtualization.vm.as_deref(), e.vm, "{ctx}: VM layer");
        assert_eq!(
            p.virtualization.container.as_deref(),
            e.container,
            "{ctx}: container layer"
        );
        let mut ids: Vec<&str> = p.findings.iter().map(|f| f.id.as_str()).collect();
        ids.sort();
        assert_eq!(ids, e.findings, "{ctx}: findings");
        for f in &p.findings {
            assert!(
                !f.evidence.is_empty(),
                "{ctx}: finding {} cites no evidence",
                f.id
            );
        }
        // Live-only measurements are skipped and say so.
        assert!(
            p.clock.read_cost_ns.is_empty(),
            "{ctx}: clock costs measured on a captured tree"
        );
        assert!(
            p.unavailable.0.contains_key("clock.read_cost_ns"),
            "{ctx}: skipped clock costs not marked"
        );
        assert_eq!(p.pmu.available, None, "{ctx}: PMU tried on a captured tree");
        let doc = serde_json::to_value(&p).unwrap();
        truebench::result::validate_probe(&doc).unwrap_or_else(|e| panic!("{ctx}: schema: {e}"));
    }
}

#[test]
fn numa_distances_and_memory_come_from_the_tree() {
    let p = probe_fixture("epyc-256");
    assert_eq!(p.numa.distances[0], vec![10, 12, 32, 32]);
    assert_eq!(p.numa.distances[3], vec![32, 32, 12, 10]);
    assert_eq!(p.numa.nodes[1].cpus.len(), 64);
    assert_eq!(p.numa.nodes[0].memory_bytes, Some(192 * 1024 * 1024 * 1024));
    // Kernel without NUMA: one implicit node holding every CPU and /proc/meminfo's memory.
    let arm = probe_fixture("arm-no-l3");
    assert_eq!(arm.numa.source, "implicit");
    assert_eq!(arm.numa.nodes[0].cpus, (0..8).collect::<Vec<u32>>());
    assert_eq!(arm.numa.nodes[0].memory_bytes, Some(8 * 1024 * 1024 * 1024));
    assert!(arm.unavailable.0.contains_key("numa"));
}

#[test]
fn smt_siblings_are_found_by_relation_not_numbering() {
    // Split numbering: CPU 0's sibling is 20 on the two-socket machine.
    let p = probe_fixture("two-socket-smt");
    assert_eq!(p.topology.place(0).unwrap().core_cpus, vec![0, 20]);
    assert_eq!(p.topology.place(10).unwrap().package, 1);
    // Adjacent numbering: CPU 0's sibling is 1 on this VM.
    let v = probe_fixture("vm-smt-no-shared-cache");
    assert_eq!(v.topology.place(0).unwrap().core_cpus, vec![0, 1]);
}

#[test]
fn cgroup_limits_and_throttling() {
    let c = probe_fixture("container-quota");
    let cg = c.cgroup.as_ref().unwrap();
    assert_eq!(cg.hierarchy, "v2");
    assert_eq!(c.cpus.cgroup_cpuset, Some(vec![0, 1, 2, 3, 4, 5]));
    assert_eq!(c.cpus.allowed, vec![0, 1, 2, 3, 4, 5]);
    assert_eq!(cg.nr_throttled, Some(3100));
    assert_eq!(cg.throttled_us, Some(98_000_000));
    assert_eq!(c.cpus.capacity, 1.5);
    // v1: the parent's quota binds the child whose own quota is unlimited.
    let o = probe_fixture("offline-cpus");
    let cg = o.cgroup.as_ref().unwrap();
    assert_eq!(cg.hierarchy, "v1");
    assert_eq!(
        cg.quota_source.as_deref(),
        Some("/sys/fs/cgroup/cpu,cpuacct/batch/cpu.cfs_quota_us")
    );
    assert_eq!(cg.throttled_us, Some(2_500_000));
    assert_eq!(o.cpus.offline, vec![6, 7]);
    assert_eq!(o.cpus.possible.len(), 8);
    // Hybrid v1 + cgroup2 without controllers (this VM): v1 answers.
    let v = probe_fixture("this-vm");
    assert_eq!(v.cgroup.as_ref().unwrap().hierarchy, "hybrid");
    assert_eq!(v.cpus.cgroup_quota, None);
}

#[test]
fn container_marker_alone_is_not_a_container() {
    let v = probe_fixture("this-vm");
    assert!(v
        .virtualization
        .stray_markers
        .contains(&"/.dockerenv".to_string()));
    assert!(v
        .virtualization
        .container_evidence
        .iter()
        .any(|e| e.contains("contradicted by the initial namespaces")));
    let c = probe_fixture("container-quota");
    assert!(c.virtualization.stray_markers.is_empty());
    assert!(c
        .virtualization
        .evidence
        .iter()
        .any(|e| e.contains("non-initial namespaces")));
}

#[test]
fn kernel_facts_and_their_absence() {
    let s = probe_fixture("two-socket-smt");
    assert_eq!(s.kernel.cpufreq_governor.as_deref(), Some("performance"));
    assert_eq!(s.kernel.cpufreq_driver.as_deref(), Some("intel_pstate"));
    assert_eq!(s.kernel.thp.as_deref(), Some("madvise"));
    assert!(s.clock.tsc_flags.contains(&"constant_tsc".to_string()));
    let v = probe_fixture("this-vm");
    assert_eq!(v.kernel.cpufreq_governor, None);
    assert!(v.unavailable.0["kernel.cpufreq_governor"].contains("MHz"));
    let steal = probe_fixture("vm-private-llc").steal.unwrap();
    assert!(
        (steal.share - 0.03).abs() < 0.001,
        "steal share {}",
        steal.share
    );
}

#[test]
fn probing_256_cpus_takes_under_a_second() {
    let t0 = std::time::Instant::now();
    let p = probe_fixture("epyc-256");
    let took = t0.elapsed();
    assert_eq!(p.topology.threads, 256);
    assert!(took.as_secs_f64() < 1.0, "probe of 256 CPUs took {took:?}");
}

/// Counts per lscpu -p: (cpus, cores, sockets, nodes, LLC instances).
fn lscpu_counts(dir: &std::path::Path) -> Option<(usize, usize, usize, usize, usize)> {
    let out = Command::new("lscpu")
        .arg("--sysroot")
        .arg(dir)
        .arg("-p=CPU,CORE,SOCKET,NODE,CACHE")
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let rows: Vec<Vec<String>> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| l.split(',').map(String::from).collect())
        .collect();
    let distinct = |f: &dyn Fn(&Vec<String>) -> String| {
        rows.iter()
            .map(f)
            .collect::<std::collections::BTreeSet<_>>()
            .len()
    };
    Some((
        rows.len(),
        distinct(&|r| format!("{}:{}", r[2], r[1])),
        distinct(&|r| r[2].clone()),
        distinct(&|r| r[3].clone()),
        distinct(&|r| r.last().cloned().unwrap_or_default()),
    ))
}

#[test]
fn agrees_with_lscpu_sysroot() {
    if Command::new("lscpu").arg("--version").output().is_err() {
        panic!("lscpu (util-linux) is needed for this cross-check; .ci/run installs it");
    }
    for e in EXPECT {
        let dir = fixture(e.name);
        let (cpus, cores, sockets, nodes, llcs) =
            lscpu_counts(&dir).unwrap_or_else(|| panic!("{}: lscpu --sysroot failed", e.name));
        let p = probe_fixture(e.name);
        assert_eq!(cpus, p.topology.threads, "{}: CPUs vs lscpu", e.name);
        assert_eq!(cores, p.topology.cores, "{}: cores vs lscpu", e.name);
        assert_eq!(sockets, p.topology.packages, "{}: sockets vs lscpu", e.name);
        assert_eq!(nodes, p.numa.nodes.len(), "{}: nodes vs lscpu", e.name);
        assert_eq!(
            llcs,
            p.topology.llc_groups.len(),
            "{}: LLC instances vs lscpu",
            e.name
        );
    }
}
