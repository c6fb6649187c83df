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
    /// None: the tree has no cache directories.
    llc_level: Option<u32>,
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
        llc_level: Some(3),
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
        llc_level: Some(3),
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
        llc_level: Some(3),
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
        llc_level: Some(3),
        llc_groups: Ok(&["0", "1", "2", "3"]),
        nodes: 1,
        quota: None,
        usable: 4,
        vm: Some("kvm"),
        container: None,
        findings: &["single-core-packages"],
    },
    Expect {
        name: "vm-hotplug-slots",
        packages: 1,
        cores: 4,
        threads: 4,
        threads_per_core: 1,
        llc_level: Some(3),
        llc_groups: Ok(&["0-3"]),
        nodes: 1,
        quota: None,
        usable: 4,
        vm: Some("qemu"),
        container: None,
        findings: &[],
    },
    Expect {
        name: "vm-smt-no-shared-cache",
        packages: 1,
        cores: 2,
        threads: 4,
        threads_per_core: 2,
        llc_level: Some(3),
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
        llc_level: Some(2),
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
        llc_level: Some(3),
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
        llc_level: Some(3),
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
        llc_level: Some(3),
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
        llc_level: Some(3),
        llc_groups: Ok(&["0-1"]),
        nodes: 1,
        quota: None,
        usable: 2,
        vm: Some("kvm"),
        container: None,
        findings: &["stray-container-marker"],
    },
    Expect {
        name: "nul-terminated-8node",
        packages: 4,
        cores: 32,
        threads: 64,
        threads_per_core: 2,
        llc_level: Some(3),
        llc_groups: Err(8),
        nodes: 8,
        quota: None,
        usable: 64,
        vm: None,
        container: None,
        findings: &[],
    },
    Expect {
        name: "node-cpumap-only",
        packages: 2,
        cores: 8,
        threads: 16,
        threads_per_core: 2,
        llc_level: Some(3),
        llc_groups: Ok(&["0-3,8-11", "4-7,12-15"]),
        nodes: 2,
        quota: None,
        usable: 16,
        vm: None,
        container: None,
        findings: &[],
    },
    Expect {
        name: "s390-package-minus-one",
        packages: 8,
        cores: 16,
        threads: 32,
        threads_per_core: 2,
        llc_level: Some(3),
        llc_groups: Err(8),
        nodes: 1,
        quota: None,
        usable: 32,
        vm: None,
        container: None,
        findings: &[],
    },
    Expect {
        name: "itanium-repeated-package-id",
        packages: 16,
        cores: 32,
        threads: 32,
        threads_per_core: 1,
        llc_level: Some(3),
        llc_groups: Err(32),
        nodes: 8,
        quota: None,
        usable: 32,
        vm: None,
        container: None,
        findings: &["llc-not-shared"],
    },
    Expect {
        name: "no-cpu-online-file",
        packages: 1,
        cores: 12,
        threads: 12,
        threads_per_core: 1,
        llc_level: Some(3),
        llc_groups: Ok(&["0-11"]),
        nodes: 1,
        quota: None,
        usable: 12,
        vm: None,
        container: None,
        findings: &["offline-cpus"],
    },
    Expect {
        name: "amd-compute-units",
        packages: 4,
        cores: 64,
        threads: 64,
        threads_per_core: 1,
        llc_level: Some(3),
        llc_groups: Err(8),
        nodes: 8,
        quota: None,
        usable: 64,
        vm: None,
        container: None,
        findings: &[],
    },
    Expect {
        name: "cpuset-mems-v1",
        packages: 2,
        cores: 8,
        threads: 16,
        threads_per_core: 2,
        llc_level: Some(3),
        llc_groups: Ok(&["0-3,8-11", "4-7,12-15"]),
        nodes: 2,
        quota: None,
        usable: 16,
        vm: None,
        container: None,
        findings: &[],
    },
    Expect {
        name: "cpuset-mems-v2",
        packages: 1,
        cores: 16,
        threads: 16,
        threads_per_core: 1,
        llc_level: Some(3),
        llc_groups: Ok(&["0-3", "4-7", "8-11", "12-15"]),
        nodes: 4,
        quota: None,
        usable: 16,
        vm: None,
        container: None,
        findings: &[],
    },
    Expect {
        name: "cxl-memory-only",
        packages: 2,
        cores: 16,
        threads: 32,
        threads_per_core: 2,
        llc_level: Some(3),
        llc_groups: Ok(&["0-7,16-23", "8-15,24-31"]),
        nodes: 4,
        quota: None,
        usable: 32,
        vm: None,
        container: None,
        findings: &[],
    },
    Expect {
        name: "memoryless-node",
        packages: 1,
        cores: 8,
        threads: 8,
        threads_per_core: 1,
        llc_level: Some(3),
        llc_groups: Ok(&["0-7"]),
        nodes: 2,
        quota: None,
        usable: 8,
        vm: None,
        container: None,
        findings: &[],
    },
    Expect {
        name: "hybrid-laptop",
        packages: 1,
        cores: 14,
        threads: 20,
        threads_per_core: 2,
        llc_level: Some(3),
        llc_groups: Ok(&["0-19"]),
        nodes: 1,
        quota: None,
        usable: 20,
        vm: None,
        container: None,
        findings: &[],
    },
    Expect {
        name: "arm-biglittle",
        packages: 1,
        cores: 8,
        threads: 8,
        threads_per_core: 1,
        llc_level: Some(3),
        llc_groups: Ok(&["0-7"]),
        nodes: 1,
        quota: None,
        usable: 8,
        vm: None,
        container: None,
        findings: &[],
    },
    // Shapes of real machines as hwloc's test suite shows them (generate.py hwloc_shapes).
    Expect {
        name: "power7-sparse-nodes",
        // physical_package_id -1 and core_siblings = each core's 4 threads: 16 packages.
        packages: 16,
        cores: 16,
        threads: 64,
        threads_per_core: 4,
        llc_level: Some(3),
        llc_groups: Err(16),
        nodes: 4,
        quota: None,
        usable: 64,
        vm: None,
        container: None,
        findings: &["single-core-packages"],
    },
    Expect {
        name: "knl-snc4-mcdram",
        packages: 1,
        cores: 16,
        threads: 64,
        threads_per_core: 4,
        // No L3: the L2 of each 2-core tile.
        llc_level: Some(2),
        llc_groups: Err(8),
        nodes: 8,
        quota: None,
        usable: 64,
        vm: None,
        container: None,
        findings: &[],
    },
    Expect {
        name: "s390-books-drawers",
        packages: 8,
        cores: 20,
        threads: 20,
        threads_per_core: 1,
        llc_level: None,
        llc_groups: Ok(&[]),
        nodes: 1,
        quota: None,
        usable: 20,
        vm: None,
        container: None,
        findings: &[],
    },
    Expect {
        name: "ia64-cpuless-node",
        packages: 16,
        cores: 32,
        threads: 32,
        threads_per_core: 1,
        llc_level: None,
        llc_groups: Ok(&[]),
        nodes: 5,
        quota: None,
        // The legacy cpuset /job holds CPUs 0-15.
        usable: 16,
        vm: None,
        container: None,
        findings: &[],
    },
    Expect {
        name: "noprefix-cgroup-4n4c",
        packages: 4,
        cores: 16,
        threads: 16,
        threads_per_core: 1,
        llc_level: Some(3),
        llc_groups: Ok(&["0-3", "4-7", "8-11", "12-15"]),
        nodes: 4,
        quota: None,
        // The noprefix cgroup /prout holds CPUs 0-3.
        usable: 4,
        vm: None,
        container: None,
        findings: &[],
    },
    Expect {
        name: "noprefix-cpuset-8n2c",
        packages: 8,
        cores: 16,
        threads: 16,
        threads_per_core: 1,
        llc_level: Some(2),
        llc_groups: Err(16),
        nodes: 8,
        quota: None,
        // The noprefix cpuset /dummy holds CPUs 0-3,5-6,12-15.
        usable: 10,
        vm: None,
        container: None,
        findings: &["llc-not-shared"],
    },
    Expect {
        name: "offline-cpu0-node0",
        packages: 2,
        cores: 17,
        threads: 17,
        threads_per_core: 1,
        llc_level: Some(3),
        llc_groups: Ok(&["4,6,8,10,12,14,16,18,20", "5,7,9,11,13,15,17,19"]),
        nodes: 1,
        quota: None,
        usable: 17,
        vm: None,
        container: None,
        findings: &["offline-cpus"],
    },
    Expect {
        name: "arm-server-clusters",
        packages: 2,
        cores: 64,
        threads: 64,
        threads_per_core: 1,
        llc_level: Some(3),
        llc_groups: Err(4),
        nodes: 4,
        quota: None,
        usable: 64,
        vm: None,
        container: None,
        findings: &[],
    },
    Expect {
        name: "hybrid-laptop-gather",
        packages: 1,
        cores: 14,
        threads: 20,
        threads_per_core: 2,
        llc_level: Some(3),
        llc_groups: Ok(&["0-19"]),
        nodes: 1,
        quota: None,
        // The cgroup v1 cpuset /pcores (found through /proc/mounts) holds the P-cores.
        usable: 12,
        vm: None,
        container: None,
        findings: &[],
    },
    Expect {
        name: "cod-buggy-core-siblings",
        // physical_package_id 0/1 kept: core_siblings cut per node split them wrongly.
        packages: 2,
        cores: 28,
        threads: 28,
        threads_per_core: 1,
        llc_level: Some(3),
        llc_groups: Ok(&["0-6", "7-13", "14-20", "21-27"]),
        nodes: 4,
        quota: None,
        usable: 28,
        vm: None,
        container: None,
        findings: &[],
    },
    Expect {
        name: "multi-die-packages",
        packages: 2,
        cores: 32,
        threads: 64,
        threads_per_core: 2,
        llc_level: Some(3),
        llc_groups: Ok(&["0-7,32-39", "8-15,40-47", "16-23,48-55", "24-31,56-63"]),
        nodes: 4,
        quota: None,
        usable: 64,
        vm: None,
        container: None,
        findings: &[],
    },
    Expect {
        name: "memory-side-cache",
        packages: 2,
        cores: 16,
        threads: 32,
        threads_per_core: 2,
        llc_level: Some(3),
        llc_groups: Ok(&["0-7,16-23", "8-15,24-31"]),
        nodes: 2,
        quota: None,
        usable: 32,
        vm: None,
        container: None,
        findings: &[],
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
        assert_eq!(t.llc_level, e.llc_level, "{ctx}: LLC level");
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

/// Per CPU, as `lscpu --sysroot DIR -p=CPU,CORE,SOCKET,NODE,CACHE` says: (cpu,
/// socket:core, socket, node, last-level cache id).
type LscpuRow = (u32, String, String, String, String);

fn lscpu_rows(dir: &std::path::Path) -> Option<Vec<LscpuRow>> {
    let out = Command::new("lscpu")
        .arg("--sysroot")
        .arg(dir)
        .arg("-p=CPU,CORE,SOCKET,NODE,CACHE")
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    Some(
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| !l.starts_with('#') && !l.is_empty())
            .map(|l| {
                let f: Vec<&str> = l.split(',').collect();
                // CACHE expands to `,L1d,L1i,L2,L3`: the last column is the LLC.
                let llc = f.last().copied().unwrap_or("").to_string();
                (
                    f[0].parse().unwrap(),
                    format!("{}:{}", f[2], f[1]),
                    f[2].to_string(),
                    f[3].to_string(),
                    llc,
                )
            })
            .collect(),
    )
}

/// A partition of CPUs as a sorted list of sorted groups.
fn groups<K: Ord>(pairs: impl Iterator<Item = (K, u32)>) -> Vec<Vec<u32>> {
    let mut m: std::collections::BTreeMap<K, Vec<u32>> = Default::default();
    for (k, c) in pairs {
        m.entry(k).or_default().push(c);
    }
    let mut g: Vec<Vec<u32>> = m.into_values().collect();
    for x in &mut g {
        x.sort();
    }
    g.sort();
    g
}

/// Facts lscpu does not read the way the kernel means them on some trees, with why.
const LSCPU_DIFFERS: &[(&str, &str, &str)] = &[
    (
        "no-cpu-online-file",
        "all",
        "without cpu/online lscpu counts every cpuN directory, offline ones too",
    ),
    (
        "amd-compute-units",
        "cores",
        "lscpu counts a thread_siblings mask as one core; two core_ids in it are two cores",
    ),
    (
        "itanium-repeated-package-id",
        "llc",
        "lscpu takes an all-zero shared_cpu_map as an instance shared by no CPU",
    ),
    (
        "cod-buggy-core-siblings",
        "sockets",
        "lscpu takes a socket per core_siblings mask (cut per node by the kernel): 4; physical_package_id and distinct core_ids say 2",
    ),
    (
        "offline-cpu0-node0",
        "nodes",
        "socket 0's CPUs belong to no online node: lscpu groups them under an empty node column, the probe puts them in no node",
    ),
    (
        "s390-books-drawers",
        "llc",
        "no cache directories: lscpu's empty cache column puts every CPU in one group, the probe has no LLC",
    ),
    (
        "ia64-cpuless-node",
        "llc",
        "no cache directories: lscpu's empty cache column puts every CPU in one group, the probe has no LLC",
    ),
];

#[test]
fn agrees_with_lscpu_sysroot() {
    if Command::new("lscpu").arg("--version").output().is_err() {
        panic!("lscpu (util-linux) is needed for this cross-check; .ci/run installs it");
    }
    let differs = |tree: &str, what: &str| {
        LSCPU_DIFFERS
            .iter()
            .any(|(t, w, _)| *t == tree && (*w == what || *w == "all"))
    };
    for e in EXPECT {
        let name = e.name;
        if differs(name, "all") {
            continue;
        }
        let dir = fixture(name);
        let rows = lscpu_rows(&dir).unwrap_or_else(|| panic!("{name}: lscpu --sysroot failed"));
        let p = probe_fixture(name);
        let cpus: Vec<u32> = rows.iter().map(|r| r.0).collect();
        let ours: Vec<u32> = p.topology.cpus.iter().map(|c| c.cpu).collect();
        assert_eq!(cpus, ours, "{name}: CPUs vs lscpu");
        if !differs(name, "sockets") {
            assert_eq!(
                groups(rows.iter().map(|r| (r.2.clone(), r.0))),
                groups(p.topology.cpus.iter().map(|c| (c.package, c.cpu))),
                "{name}: sockets vs lscpu"
            );
        }
        if !differs(name, "cores") {
            assert_eq!(
                groups(rows.iter().map(|r| (r.1.clone(), r.0))),
                groups(p.topology.cpus.iter().map(|c| (c.core_cpus.clone(), c.cpu))),
                "{name}: cores vs lscpu"
            );
        }
        // lscpu lists the nodes that hold CPUs.
        let cpu_nodes: Vec<Vec<u32>> = {
            let mut g: Vec<Vec<u32>> = p
                .numa
                .nodes
                .iter()
                .filter(|n| !n.cpus.is_empty())
                .map(|n| n.cpus.clone())
                .collect();
            g.sort();
            g
        };
        if !differs(name, "nodes") {
            assert_eq!(
                groups(rows.iter().map(|r| (r.3.clone(), r.0))),
                cpu_nodes,
                "{name}: nodes vs lscpu"
            );
        }
        if !differs(name, "llc") {
            let mut ours = p.topology.llc_groups.clone();
            ours.sort();
            assert_eq!(
                groups(rows.iter().map(|r| (r.4.clone(), r.0))),
                ours,
                "{name}: LLC instances vs lscpu"
            );
        }
    }
}

fn list(s: &str) -> Vec<u32> {
    parse_list(s).unwrap()
}

#[test]
fn nul_terminated_lists_keep_every_node_and_sibling() {
    let p = probe_fixture("nul-terminated-8node");
    assert_eq!(p.numa.source, "sysfs");
    assert!(!p.unavailable.0.contains_key("numa"), "{:?}", p.unavailable);
    assert_eq!(p.numa.nodes.len(), 8);
    assert_eq!(p.numa.nodes[0].cpus, list("0-3,32-35"));
    assert_eq!(p.numa.nodes[7].cpus, list("28-31,60-63"));
    assert!(p.numa.nodes.iter().all(|n| n.kind == "cpus+memory"));
    assert_eq!(p.numa.distances[0], vec![10, 12, 32, 32, 32, 32, 32, 32]);
    assert_eq!(p.topology.place(0).unwrap().core_cpus, vec![0, 32]);
    assert_eq!(p.topology.place(0).unwrap().package_cpus.len(), 16);
    assert_eq!(p.cpus.online, (0..64).collect::<Vec<u32>>());
    let l3 = p.topology.caches.iter().find(|c| c.level == 3).unwrap();
    assert_eq!(l3.cpus, list("0-3,32-35"));
}

#[test]
fn nodes_with_only_a_cpumap_get_their_cpus() {
    let p = probe_fixture("node-cpumap-only");
    assert!(!fixture("node-cpumap-only")
        .join("sys/devices/system/node/node0/cpulist")
        .exists());
    assert_eq!(p.numa.nodes[0].cpus, list("0-3,8-11"));
    assert_eq!(p.numa.nodes[1].cpus, list("4-7,12-15"));
    // Topology and cache sharing from masks alone (no *_list files on 2.6.32).
    assert_eq!(p.topology.place(1).unwrap().core_cpus, vec![1, 9]);
    assert_eq!(p.topology.place(1).unwrap().package_cpus, list("0-3,8-11"));
    let l2 = p
        .topology
        .caches
        .iter()
        .find(|c| c.level == 2 && c.cpus.contains(&1))
        .unwrap();
    assert_eq!(l2.cpus, vec![1, 9]);
}

#[test]
fn packages_come_from_the_masks_when_ids_are_negative_or_repeated() {
    let s = probe_fixture("s390-package-minus-one");
    assert_eq!(s.topology.packages, 8);
    assert_eq!(s.topology.place(5).unwrap().package_cpus, list("4-7"));
    assert_ne!(
        s.topology.place(3).unwrap().package,
        s.topology.place(4).unwrap().package
    );
    assert!(
        s.topology.evidence[0].contains("physical_package_id is missing or negative"),
        "{:?}",
        s.topology.evidence
    );
    let i = probe_fixture("itanium-repeated-package-id");
    assert_eq!(i.topology.packages, 16);
    // CPUs 0 and 16 both say physical_package_id 0, but their masks differ.
    assert_ne!(
        i.topology.place(0).unwrap().package,
        i.topology.place(16).unwrap().package
    );
    assert!(i.topology.evidence[0].contains("contradict"));
    // Where ids and masks agree, the ids are the labels and the evidence says so.
    let t = probe_fixture("two-socket-smt");
    assert_eq!(t.topology.place(10).unwrap().package, 1);
    assert!(t.topology.evidence[0].contains("agreeing"));
}

/// Offline is present and not online: a VM's hotplug slots (possible, not present) are not
/// offline CPUs, although the kernel's own `offline` file lists them.
#[test]
fn hotplug_slots_are_not_offline_cpus() {
    let v = probe_fixture("vm-hotplug-slots");
    assert_eq!(v.cpus.possible.len(), 64);
    assert_eq!(v.cpus.present, Some(vec![0, 1, 2, 3]));
    assert!(v.cpus.offline.is_empty(), "{:?}", v.cpus.offline);
    assert!(!v.findings.iter().any(|f| f.id == "offline-cpus"));
    // Present CPUs that are off still count, and the finding names the present list.
    let o = probe_fixture("offline-cpus");
    assert_eq!(o.cpus.offline, vec![6, 7]);
    let f = o.findings.iter().find(|f| f.id == "offline-cpus").unwrap();
    assert!(
        f.message.starts_with("2 present CPUs are offline"),
        "{}",
        f.message
    );
    assert!(f.evidence[0].contains("present [0-7]"), "{:?}", f.evidence);
    // Without cpu/online, CPUs off by their own online file are present and offline.
    let n = probe_fixture("no-cpu-online-file");
    assert_eq!(n.cpus.present.as_ref().map(Vec::len), Some(16));
    assert_eq!(n.cpus.offline, vec![12, 13, 14, 15]);
}

#[test]
fn cpus_offline_by_their_own_online_file_are_not_usable() {
    let p = probe_fixture("no-cpu-online-file");
    assert_eq!(p.cpus.online, (0..12).collect::<Vec<u32>>());
    assert_eq!(p.cpus.offline, vec![12, 13, 14, 15]);
    assert_eq!(p.cpus.usable_width, 12);
    assert_eq!(p.cpus.capacity, 12.0);
    assert!(p.unavailable.0["cpus.online"].contains("cpuN/online"));
    assert_eq!(p.numa.nodes[0].cpus.len(), 12);
}

#[test]
fn compute_units_are_cores_not_smt_threads() {
    let p = probe_fixture("amd-compute-units");
    assert_eq!(p.topology.cores, 64);
    assert_eq!(p.topology.threads_per_core, 1);
    assert_eq!(p.topology.place(0).unwrap().core_cpus, vec![0]);
    assert_eq!(p.topology.place(1).unwrap().core_cpus, vec![1]);
    // core_id repeats on the package's second die: still a different core.
    assert_eq!(p.topology.place(8).unwrap().core_id, 0);
    assert_eq!(p.topology.place(8).unwrap().core_cpus, vec![8]);
    // The compute unit shares its L2; the L1d is per core.
    let l2 = p
        .topology
        .caches
        .iter()
        .find(|c| c.level == 2 && c.cpus.contains(&0))
        .unwrap();
    assert_eq!(l2.cpus, vec![0, 1]);
    let l1d = p
        .topology
        .caches
        .iter()
        .find(|c| c.level == 1 && c.kind == "Data" && c.cpus.contains(&0))
        .unwrap();
    assert_eq!(l1d.cpus, vec![0]);
    assert!(p
        .topology
        .evidence
        .iter()
        .any(|e| e.contains("compute units, not SMT")));
    assert_eq!(p.topology.llc_groups.len(), 8);
    assert_eq!(p.topology.llc_groups[0], list("0-7"));
}

#[test]
fn an_all_zero_sharing_mask_is_the_cpus_own_core() {
    let p = probe_fixture("itanium-repeated-package-id");
    let l3: Vec<_> = p.topology.caches.iter().filter(|c| c.level == 3).collect();
    assert_eq!(l3.len(), 32, "one L3 per core");
    assert!(l3.iter().all(|c| c.cpus.len() == 1));
    assert_eq!(p.topology.llc_level, Some(3));
    assert_eq!(p.topology.llc_of(5), Some(&vec![5]));
    assert!(p
        .topology
        .evidence
        .iter()
        .any(|e| e.contains("shared_cpu_map all zeros")));
}

#[test]
fn cgroup_mems_in_v1_and_v2() {
    let v1 = probe_fixture("cpuset-mems-v1");
    assert_eq!(v1.cpus.cgroup_mems, Some(vec![0]));
    assert_eq!(v1.cpus.usable_mems, vec![0]);
    assert_eq!(v1.cpus.usable_width, 16, "CPUs of both nodes stay usable");
    let v2 = probe_fixture("cpuset-mems-v2");
    assert_eq!(v2.cpus.cgroup_mems, Some(vec![0, 1, 3]));
    assert_eq!(v2.cpus.usable_mems, vec![0, 1, 3]);
    // No cpuset controller: null, with the reason.
    let o = probe_fixture("offline-cpus");
    assert_eq!(o.cpus.cgroup_mems, None);
    assert!(o.unavailable.0.contains_key("cpus.cgroup_mems"));
    assert_eq!(o.cpus.usable_mems, vec![0]);
}

#[test]
fn memory_only_and_memoryless_nodes_are_kinds_not_errors() {
    let p = probe_fixture("cxl-memory-only");
    let kinds: Vec<&str> = p.numa.nodes.iter().map(|n| n.kind.as_str()).collect();
    assert_eq!(
        kinds,
        ["cpus+memory", "cpus+memory", "memory-only", "memory-only"]
    );
    let n2 = &p.numa.nodes[2];
    assert!(n2.cpus.is_empty());
    assert_eq!(n2.memory_bytes, Some(128 << 30));
    assert_eq!(n2.memory_tier, Some(22));
    assert_eq!(p.numa.nodes[0].memory_tier, Some(4));
    assert_eq!(n2.initiators, Some(vec![0]));
    assert_eq!(n2.access.get("read_latency"), Some(&260));
    assert_eq!(p.numa.nearest_cpu_nodes(3, &[0, 1]).0, vec![1]);
    assert_eq!(p.cpus.usable_mems, vec![0, 1, 2, 3]);
    let m = probe_fixture("memoryless-node");
    assert_eq!(m.numa.nodes[1].kind, "cpus-only");
    assert_eq!(m.numa.nodes[1].cpus, vec![4, 5, 6, 7]);
    assert_eq!(
        m.cpus.usable_mems,
        vec![0],
        "no memory to allocate on node 1"
    );
    assert!(m.unavailable.0.keys().all(|k| !k.starts_with("numa")));
}

#[test]
fn hybrid_machines_report_cpu_kinds_fastest_first() {
    let h = probe_fixture("hybrid-laptop");
    let k = &h.topology.cpu_kinds;
    assert_eq!(k.len(), 2);
    assert_eq!(k[0].kind, "intel-core");
    assert_eq!(k[0].cpus, list("0-11"));
    assert_eq!(k[1].kind, "intel-atom");
    assert_eq!(k[1].cpus, list("12-19"));
    assert!(k[0].evidence[0].contains("/sys/devices/cpu_core/cpus"));
    assert_eq!(h.topology.place(12).unwrap().core_cpus, vec![12]);
    assert_eq!(h.topology.place(0).unwrap().core_cpus, vec![0, 1]);
    let a = probe_fixture("arm-biglittle");
    let k = &a.topology.cpu_kinds;
    assert_eq!(k.len(), 2);
    assert_eq!(
        (k[0].kind.as_str(), k[0].cpus.clone()),
        ("capacity-1024", list("4-7"))
    );
    assert_eq!(
        (k[1].kind.as_str(), k[1].cpus.clone()),
        ("capacity-446", list("0-3"))
    );
    // Homogeneous machines have no kinds.
    for t in ["two-socket-smt", "this-vm", "epyc-256"] {
        assert!(probe_fixture(t).topology.cpu_kinds.is_empty(), "{t}");
    }
}

/// `probe --capture` archives what the probe read; unpacked, `probe --root` reads the same
/// machine; nothing else (no environment, no other processes) is in it.
#[test]
fn capture_round_trips_and_holds_only_what_the_probe_reads() {
    let env = common::TestEnv::new();
    let out = env.dir.path().join("m.tar.gz");
    let live = env.json(&["probe", "--json", "--capture", out.to_str().unwrap()]);
    let f = std::fs::File::open(&out).unwrap();
    let mut ar = tar::Archive::new(flate2::read::GzDecoder::new(f));
    let unpacked = env.dir.path().join("tree");
    let mut names = Vec::new();
    for e in ar.entries().unwrap() {
        let e = e.unwrap();
        names.push((
            format!("/{}", e.path().unwrap().display()),
            e.header().entry_type(),
        ));
    }
    let allowed = [
        "/sys/devices/system/",
        "/sys/devices/virtual/memory_tiering",
        "/sys/devices/cpu_",
        "/sys/fs/cgroup",
        "/sys/class/dmi/id",
        "/sys/hypervisor",
        "/sys/kernel/mm/transparent_hugepage/",
        "/sys/bus/event_source/devices",
        "/proc/self/status",
        "/proc/self/cgroup",
        "/proc/self/mountinfo",
        "/proc/self/ns",
        "/proc/1/environ",
        "/proc/cpuinfo",
        "/proc/stat",
        "/proc/loadavg",
        "/proc/meminfo",
        "/proc/cmdline",
        "/proc/sys/kernel/",
        "/.dockerenv",
        "/run/.containerenv",
    ];
    for (n, kind) in &names {
        if kind.is_dir() {
            continue;
        }
        assert!(
            allowed.iter().any(|a| n.starts_with(a)),
            "{n} is not a file the probe needs"
        );
    }
    assert!(names
        .iter()
        .any(|(n, _)| n.ends_with("/cpu0/topology/core_id")));
    // Unpacked, it probes as the machine did.
    let f = std::fs::File::open(&out).unwrap();
    tar::Archive::new(flate2::read::GzDecoder::new(f))
        .unpack(&unpacked)
        .unwrap();
    if let Ok(environ) = std::fs::read(unpacked.join("proc/1/environ")) {
        for e in environ.split(|b| *b == 0).filter(|e| !e.is_empty()) {
            assert!(e.starts_with(b"container="), "environ kept {e:?}");
        }
    }
    let mi = std::fs::read_to_string(unpacked.join("proc/self/mountinfo")).unwrap_or_default();
    assert!(mi.lines().all(|l| l.contains(" - cgroup")), "{mi}");
    let back = env.json(&["probe", "--json", "--root", unpacked.to_str().unwrap()]);
    for key in ["cpus", "topology", "numa"] {
        assert_eq!(back[key], live[key], "{key} differs after the round trip");
    }
    assert_eq!(back["virtualization"]["vm"], live["virtualization"]["vm"]);
    assert_eq!(
        back["virtualization"]["container"],
        live["virtualization"]["container"]
    );
    assert_eq!(back["cgroup"]["hierarchy"], live["cgroup"]["hierarchy"]);
    assert_eq!(back["cgroup"]["quota_cpus"], live["cgroup"]["quota_cpus"]);
}

#[test]
fn capture_to_a_path_that_cannot_be_written_leaves_nothing() {
    let env = common::TestEnv::new();
    let file = env.file("plain", "x");
    let dir = env.dir.path().join("adir");
    std::fs::create_dir(&dir).unwrap();
    for target in [
        env.dir.path().join("missing/m.tar.gz"),
        file.join("m.tar.gz"),
        dir.clone(),
        std::path::PathBuf::from("/proc/m.tar.gz"),
    ] {
        let out = env
            .cmd()
            .args(["probe", "--capture", target.to_str().unwrap()])
            .output()
            .unwrap();
        common::assert_refused(&env, &out, &target);
        assert!(out.stdout.is_empty(), "{target:?}: printed a probe");
        assert!(!target.is_file(), "{target:?}: written");
    }
    // No temporary file left beside any of them.
    let left: Vec<String> = std::fs::read_dir(env.dir.path())
        .unwrap()
        .chain(std::fs::read_dir(&dir).unwrap())
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("truebench-capture"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// Copy a tree (files, directories, symbolic links) into `to`.
fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let (src, dst) = (e.path(), to.join(e.file_name()));
        let ft = e.file_type().unwrap();
        if ft.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&src).unwrap(), &dst).unwrap();
        } else if ft.is_dir() {
            copy_tree(&src, &dst);
        } else {
            std::fs::copy(&src, &dst).unwrap();
        }
    }
}

fn files_under(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let ft = e.file_type().unwrap();
        if ft.is_dir() {
            files_under(&e.path(), out);
        } else if ft.is_file() {
            out.push(e.path());
        }
    }
}

/// Whether a path is under `cpuN/` with N >= 1.
fn beyond_cpu1() -> impl Fn(&str) -> bool {
    |p: &str| {
        p.split('/').any(|part| {
            part.strip_prefix("cpu")
                .and_then(|n| n.parse::<u32>().ok())
                .is_some_and(|n| n >= 1)
        })
    }
}

/// Garbage in any one file of a tree: the probe still answers (never panics), its document
/// is valid, and the facts that file carried are absent with a reason or fall back.
#[test]
fn garbage_in_any_file_never_panics() {
    let garbage: [&[u8]; 8] = [
        b"\xff\xfe\x00garbage",
        b"-1\n",
        b"99999999999999999999999\n",
        b"0-4294967295\n",
        b"\0\0\0",
        b"",
        b"3-1,x\n",
        b"ffffffffffffffffffff,zz\n",
    ];
    // Every file of the real capture; of the synthetic trees, all but the repeats of
    // cpu0's files on the other CPUs (the same readers, to keep the test fast).
    let repeat = beyond_cpu1();
    for tree in [
        "this-vm",
        "arm-biglittle",
        "cpuset-mems-v2",
        "cxl-memory-only",
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join(tree);
        copy_tree(&fixture(tree), &root);
        let mut files = Vec::new();
        files_under(&root, &mut files);
        files.retain(|f| tree == "this-vm" || !repeat(&f.display().to_string()));
        files.sort();
        for (i, f) in files.iter().enumerate() {
            let original = std::fs::read(f).unwrap();
            std::fs::write(f, garbage[i % garbage.len()]).unwrap();
            let rel = f.strip_prefix(&root).unwrap().display().to_string();
            let p = std::panic::catch_unwind(|| probe(&SysRoot::captured(&root)))
                .unwrap_or_else(|_| panic!("{tree}: garbage in {rel} panicked the probe"));
            let doc = serde_json::to_value(&p).unwrap();
            // Schema validation is the slow part: every fourth file (each garbage kind
            // still meets every validated reader over the trees).
            if i % 4 == 0 || rel.contains("node") || rel.contains("cgroup") {
                truebench::result::validate_probe(&doc)
                    .unwrap_or_else(|e| panic!("{tree}: garbage in {rel}: schema: {e}"));
            }
            std::fs::write(f, original).unwrap();
        }
    }
}

#[test]
fn garbage_facts_are_absent_with_their_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("t");
    copy_tree(&fixture("cpuset-mems-v2"), &root);
    let w = |rel: &str, text: &str| std::fs::write(root.join(rel), text).unwrap();
    w("sys/devices/system/node/node1/cpulist", "4-7 junk\n");
    w("sys/devices/system/node/node1/cpumap", "not a mask\n");
    w("sys/devices/system/node/node2/distance", "12 12 ten 12\n");
    w(
        "sys/fs/cgroup/system.slice/db.service/cpuset.mems.effective",
        "0-1,\u{1}\n",
    );
    w("sys/devices/system/cpu/online", "zero\n");
    let p = probe(&SysRoot::captured(&root));
    let u = &p.unavailable.0;
    assert!(u["numa.nodes.cpus"].contains("node 1"), "{u:?}");
    assert!(p.numa.nodes[1].cpus.is_empty());
    assert!(u["numa.distances"].contains("node 2"), "{u:?}");
    assert!(p.numa.distances[2].is_empty());
    assert_eq!(p.numa.distances[1].len(), 4, "other rows kept");
    assert_eq!(p.cpus.cgroup_mems, None);
    assert!(u["cpus.cgroup_mems"].contains("cpuset.mems.effective"));
    // cpu/online unreadable: each cpuN directory counted, and said so.
    assert_eq!(p.cpus.online.len(), 16);
    assert!(u["cpus.online"].contains("bad CPU number"), "{u:?}");
}

#[test]
fn the_schema_checks_the_new_keys() {
    let p = probe_fixture("cxl-memory-only");
    let mut doc = serde_json::to_value(&p).unwrap();
    truebench::result::validate_probe(&doc).unwrap();
    assert_eq!(doc["numa"]["nodes"][2]["kind"], "memory-only");
    doc["numa"]["nodes"][2]["kind"] = "cpu-less".into();
    assert!(truebench::result::validate_probe(&doc).is_err());
    let mut doc = serde_json::to_value(probe_fixture("hybrid-laptop")).unwrap();
    assert_eq!(doc["topology"]["cpu_kinds"][0]["kind"], "intel-core");
    doc["topology"]["cpu_kinds"][0]["cpus"] = "0-11".into();
    assert!(truebench::result::validate_probe(&doc).is_err());
    let mut doc = serde_json::to_value(probe_fixture("cpuset-mems-v1")).unwrap();
    assert_eq!(doc["cpus"]["cgroup_mems"], serde_json::json!([0]));
    doc["cpus"]["cgroup_mems"] = "0".into();
    assert!(truebench::result::validate_probe(&doc).is_err());
}

#[test]
fn hwloc_gather_captures_read_cgroups_and_kernel_from_mounts_and_version() {
    // /proc/mounts (no mountinfo) with a v1 cpuset hierarchy, /proc/version (no /proc/sys).
    let p = probe_fixture("hybrid-laptop-gather");
    assert_eq!(p.cpus.cgroup_cpuset, Some(list("0-11")));
    assert_eq!(p.cpus.cgroup_mems, Some(list("0")));
    assert_eq!(p.kernel.release.as_deref(), Some("6.1.0-13-amd64"));
    // The pre-cgroup cpuset filesystem, named by /proc/self/cpuset, without /proc/self/cgroup.
    let p = probe_fixture("ia64-cpuless-node");
    assert_eq!(p.cpus.cgroup_cpuset, Some(list("0-15")));
    assert_eq!(p.cpus.cgroup_mems, Some(list("0-1")));
    assert_eq!(p.cpus.usable, list("0-15"));
    assert_eq!(p.kernel.release.as_deref(), Some("2.6.16.60-0.21-default"));
    // No cgroup mount at all: absent with the reason naming both sources.
    let p = probe_fixture("power7-sparse-nodes");
    assert_eq!(p.cpus.cgroup_cpuset, None);
    assert!(p.unavailable.0["cgroup"].contains("/proc/mounts"));
}

#[test]
fn a_cgroup_v1_cpuset_mounted_with_noprefix_is_read_like_the_prefixed_one() {
    // /dev/cpuset mounted `cgroup rw,cpuset,noprefix`: files `cpus` and `mems`. Found
    // through /proc/self/cgroup...
    let p = probe_fixture("noprefix-cgroup-4n4c");
    assert_eq!(p.cpus.cgroup_cpuset, Some(list("0-3")));
    assert_eq!(p.cpus.cgroup_mems, Some(list("2-3")));
    assert_eq!(p.cpus.usable, list("0-3"));
    assert_eq!(p.cpus.usable_mems, list("2-3"));
    assert_eq!(p.cpus.cgroup_quota, None);
    // ...and through /proc/self/cpuset alone (no /proc/self/cgroup in that capture).
    let p = probe_fixture("noprefix-cpuset-8n2c");
    assert_eq!(p.cpus.cgroup_cpuset, Some(list("0-3,5-6,12-15")));
    assert_eq!(p.cpus.cgroup_mems, Some(list("1-4")));
    assert_eq!(p.cpus.usable, list("0-3,5-6,12-15"));
    assert_eq!(p.cpus.usable_mems, list("1-4"));
    assert!(!p.unavailable.0.contains_key("cpus.cgroup_mems"));
}

#[test]
fn packages_and_cores_of_power_s390_and_itanium() {
    // POWER7: -1 ids, each core's threads its package mask: 16 packages of 4 threads.
    let p = probe_fixture("power7-sparse-nodes");
    assert!(
        p.topology.evidence[0].contains("sibling masks"),
        "{:?}",
        p.topology.evidence
    );
    assert_eq!(p.topology.place(5).unwrap().core_cpus, list("4-7"));
    // s390: uneven packages with non-monotonic numbers; one core_id per package, the masks
    // split it into one core per CPU.
    let p = probe_fixture("s390-books-drawers");
    assert_eq!(p.topology.place(9).unwrap().package_cpus, list("9-11"));
    assert_eq!(p.topology.place(14).unwrap().package_cpus, list("14"));
    assert!(p.topology.core_sets().iter().all(|c| c.len() == 1));
    // Cluster-on-Die with core_siblings per node: the ids decide (core_ids distinct in each
    // id), while on the Itanium tree, where ids repeat and so do core_ids, the masks do.
    let p = probe_fixture("cod-buggy-core-siblings");
    assert_eq!(p.topology.place(7).unwrap().package_cpus, list("0-13"));
    assert!(
        p.topology.evidence[0].contains("split them into 4 groups"),
        "{:?}",
        p.topology.evidence
    );
    assert_eq!(
        probe_fixture("itanium-repeated-package-id")
            .topology
            .packages,
        16
    );
    // Two dies per package: 4 dies, die_id kept per CPU.
    let p = probe_fixture("multi-die-packages");
    assert_eq!(p.topology.dies, 4);
    assert_eq!(p.topology.place(40).unwrap().die, Some(1));
    // Itanium: ids node*65536 + slot (above any CPU number) are valid package ids.
    let p = probe_fixture("ia64-cpuless-node");
    assert_eq!(p.topology.place(31).unwrap().package, 3 * 65536 + 256 + 1);
    assert!(p.topology.evidence[0].contains("agreeing"));
}

#[test]
fn trees_without_caches_say_so() {
    for name in ["s390-books-drawers", "ia64-cpuless-node"] {
        let p = probe_fixture(name);
        assert!(p.topology.caches.is_empty() && p.topology.llc_groups.is_empty());
        assert!(
            p.unavailable.0["topology.caches"].contains("no cpuN/cache"),
            "{name}: {:?}",
            p.unavailable.0
        );
    }
    assert!(!probe_fixture("two-socket-smt")
        .unavailable
        .0
        .contains_key("topology.caches"));
}

#[test]
fn sparse_offline_and_memory_only_nodes() {
    // Node ids 0, 1, 4, 5: distances follow the ids, not the positions.
    let p = probe_fixture("power7-sparse-nodes");
    let ids: Vec<u32> = p.numa.nodes.iter().map(|n| n.id).collect();
    assert_eq!(ids, vec![0, 1, 4, 5]);
    assert_eq!(p.numa.distance(4, 5), Some(20));
    assert_eq!(p.numa.distance(1, 4), Some(40));
    assert_eq!(p.numa.node_of(63), Some(5));
    // KNL: MCDRAM nodes 4-7 are memory-only, each nearest its quadrant's DDR node.
    let p = probe_fixture("knl-snc4-mcdram");
    for n in 4..8u32 {
        let node = p.numa.nodes.iter().find(|x| x.id == n).unwrap();
        assert_eq!(node.kind, "memory-only", "node {n}");
        assert_eq!(p.numa.nearest_cpu_nodes(n, &[0, 1, 2, 3]).0, vec![n - 4]);
    }
    // CPU 0 and node 0 offline: node 1 alone, socket 0's CPUs in no node.
    let p = probe_fixture("offline-cpu0-node0");
    assert_eq!(p.cpus.online, list("4-20"));
    assert!(p.cpus.offline.contains(&0));
    assert_eq!(p.numa.nodes.len(), 1);
    assert_eq!(p.numa.nodes[0].id, 1);
    assert_eq!(p.numa.node_of(4), None);
    assert_eq!(p.numa.node_of(5), Some(1));
    // Memory-side caches in front of each node's memory.
    let p = probe_fixture("memory-side-cache");
    for n in &p.numa.nodes {
        assert_eq!(n.memory_side_cache_bytes, Some(16 << 30), "node {}", n.id);
    }
}

#[test]
fn clusters_and_kinds_of_arm_servers_and_captured_hybrids() {
    let p = probe_fixture("arm-server-clusters");
    assert_eq!(p.topology.clusters, Some(16));
    assert!(
        p.topology.cpu_kinds.is_empty(),
        "every capacity 1024: one kind"
    );
    // Without the hybrid PMU directories the cpufreq maxima decide; favoured P-cores at
    // 5.2 GHz and the others at 5.0 are one kind.
    let p = probe_fixture("hybrid-laptop-gather");
    let kinds: Vec<(&str, Vec<u32>)> = p
        .topology
        .cpu_kinds
        .iter()
        .map(|k| (k.kind.as_str(), k.cpus.clone()))
        .collect();
    assert_eq!(
        kinds,
        vec![
            ("max-5200-MHz", list("0-11")),
            ("max-3900-MHz", list("12-19"))
        ]
    );
}

/// hwloc (lstopo) reads every fixture tree; tests/fixtures/sysroots/probe_vs_hwloc.py compares
/// its packages, dies, cores, PUs, caches, NUMA nodes, distances, memory-side caches, CPU
/// kinds and cgroup sets with the probe's, and fails on any difference its KNOWN table does
/// not explain (or a KNOWN one that no longer happens).
#[test]
fn agrees_with_hwloc_on_every_tree() {
    if Command::new("lstopo-no-graphics")
        .arg("--version")
        .output()
        .is_err()
    {
        panic!(
            "lstopo-no-graphics (hwloc) is needed for this cross-check; scripts/test installs it"
        );
    }
    let script = fixture("probe_vs_hwloc.py");
    let out = Command::new("python3")
        .arg(&script)
        .arg("--check")
        .arg("--truebench")
        .arg(env!("CARGO_BIN_EXE_truebench"))
        .output()
        .expect("python3 runs the comparison");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "truebench and hwloc disagree:\n{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Every tree was compared (a directory listing that found nothing would pass vacuously).
    let trees = std::fs::read_dir(fixture(""))
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.path().is_dir() && !e.file_name().to_string_lossy().starts_with(['_', '.']))
        .count();
    assert!(
        text.contains(&format!("{trees} trees: ")),
        "not every tree compared:\n{text}"
    );
}

/// A cgroup file holding what the kernel never writes there (a period of 0, a quota of 0 or
/// garbage, an empty cpuset) was read as no quota or no cpuset: the capacity said "no
/// quota" and the text "quota unlimited" of a container whose limit was not read. Such a
/// fact is unknown now, with its reason; `max` and v1's -1 are still no quota.
#[test]
fn cgroup_values_the_kernel_never_writes_are_unknown_not_absent() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("v2");
    copy_tree(&fixture("container-quota"), &root);
    let cg = root.join("sys/fs/cgroup");
    let text = |p: &ProbeDoc| truebench::report::probe_text::render(p);
    for (cpu_max, unknown) in [
        ("max 100000", false),
        ("150000 0", true),
        ("0 100000", true),
        ("-1 100000", true),
        ("lots", true),
        ("", true),
    ] {
        std::fs::write(cg.join("cpu.max"), cpu_max).unwrap();
        let p = probe(&SysRoot::captured(&root));
        assert_eq!(p.cpus.cgroup_quota, None, "{cpu_max}");
        let why = p.unavailable.0.get("cpus.cgroup_quota");
        let basis = &p.cpus.capacity_basis;
        if unknown {
            let why = why.unwrap_or_else(|| panic!("{cpu_max}: no reason"));
            assert!(
                why.starts_with(&format!("/sys/fs/cgroup/cpu.max reads '{cpu_max}'")),
                "{why}"
            );
            assert!(!basis.contains("no quota"), "{cpu_max}: {basis}");
            assert!(
                text(&p).contains("quota unknown (see below)"),
                "{}",
                text(&p)
            );
        } else {
            assert_eq!(why, None, "{cpu_max}");
            assert!(basis.ends_with("; no quota"), "{basis}");
            assert!(text(&p).contains("quota unlimited"));
        }
    }
    // An empty cpuset: unknown, not "none".
    std::fs::write(cg.join("cpuset.cpus.effective"), "\n").unwrap();
    let p = probe(&SysRoot::captured(&root));
    assert_eq!(p.cpus.cgroup_cpuset, None);
    let why = &p.unavailable.0["cpus.cgroup_cpuset"];
    assert!(
        why.starts_with("/sys/fs/cgroup/cpuset.cpus.effective is empty"),
        "{why}"
    );
    assert!(text(&p).contains("cgroup cpuset unknown (see below)"));

    // v1: the child's period of 0 is unreadable; the parent's 4 CPUs still bind, and the
    // reason says a tighter quota may apply.
    let root = tmp.path().join("v1");
    copy_tree(&fixture("offline-cpus"), &root);
    let job = root.join("sys/fs/cgroup/cpu,cpuacct/batch/job1");
    std::fs::write(job.join("cpu.cfs_quota_us"), "200000\n").unwrap();
    std::fs::write(job.join("cpu.cfs_period_us"), "0\n").unwrap();
    let p = probe(&SysRoot::captured(&root));
    assert_eq!(p.cpus.cgroup_quota, Some(4.0));
    let why = &p.unavailable.0["cpus.cgroup_quota"];
    assert!(
        why.contains("job1/cpu.cfs_quota_us reads '200000' with a period of '0'")
            && why.contains("a quota tighter than the one read may apply"),
        "{why}"
    );
    // -1 everywhere: no quota, nothing unavailable.
    std::fs::write(job.join("cpu.cfs_quota_us"), "-1\n").unwrap();
    std::fs::write(job.join("cpu.cfs_period_us"), "100000\n").unwrap();
    std::fs::write(job.join("../cpu.cfs_quota_us"), "-1\n").unwrap();
    let p = probe(&SysRoot::captured(&root));
    assert_eq!(p.cpus.cgroup_quota, None);
    assert!(!p.unavailable.0.contains_key("cpus.cgroup_quota"));
}

/// A cache whose size file is absent, `0K` or not a size was shown as "0 B" (a size of 0)
/// or as "?" with no reason. It has no size now, and `unavailable` names it.
#[test]
fn caches_without_a_readable_size_are_named() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("t");
    copy_tree(&fixture("two-socket-smt"), &root);
    let mut files = Vec::new();
    files_under(&root, &mut files);
    let sizes: Vec<_> = files
        .iter()
        .filter(|f| f.ends_with("size") && f.display().to_string().contains("/cache/index"))
        .collect();
    assert!(!sizes.is_empty());
    let p = probe(&SysRoot::captured(&root));
    assert!(!p.unavailable.0.contains_key("topology.caches.size_bytes"));
    let llc = p.topology.llc_level.unwrap();
    for f in &sizes {
        // The LLC's size: 0K; the L1's: absent; the rest: M and plain bytes read as sizes.
        let level: u32 = std::fs::read_to_string(f.with_file_name("level"))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        match level {
            l if l == llc => std::fs::write(f, "0K\n").unwrap(),
            1 => std::fs::remove_file(f).unwrap(),
            _ => std::fs::write(f, "1M\n").unwrap(),
        }
    }
    let p = probe(&SysRoot::captured(&root));
    for c in &p.topology.caches {
        match c.level {
            l if l == llc || l == 1 => assert_eq!(c.size_bytes, None, "{c:?}"),
            _ => assert_eq!(c.size_bytes, Some(1 << 20), "{c:?}"),
        }
    }
    let why = &p.unavailable.0["topology.caches.size_bytes"];
    assert!(
        why.contains(&format!("L{llc} Unified")) && why.contains("L1 Data"),
        "{why}"
    );
    truebench::result::validate_probe(&serde_json::to_value(&p).unwrap()).unwrap();
}

/// Memory limits up the hierarchy into the document: v1, where an ancestor's limit binds
/// below the cgroup's own (and the root's PAGE_COUNTER_MAX is no limit), with memsw and the
/// OOM counter; v2, where `memory.high` binds below an ancestor's `memory.max` and a swap
/// file holding what the kernel never writes is unavailable with its reason; a tree with no
/// memory controller is unavailable too.
#[test]
fn memory_limits_in_v1_and_v2() {
    let v1 = probe_fixture("cpuset-mems-v1");
    let c = v1.memory.cgroup.as_ref().expect("a v1 memory cgroup");
    assert_eq!(
        (c.version.as_str(), c.path.as_str()),
        ("v1", "/kubepods/db")
    );
    let limit = c.limit.as_ref().expect("a limit");
    assert_eq!(limit.bytes, 384 << 20);
    assert_eq!(
        limit.file,
        "/sys/fs/cgroup/memory/kubepods/memory.limit_in_bytes"
    );
    assert_eq!(v1.memory.binding(), Some(limit));
    assert_eq!(c.swap_limit.as_ref().map(|l| l.bytes), Some(768 << 20));
    assert_eq!(
        c.swap_allowed(),
        Some(384 << 20),
        "memsw less the memory limit"
    );
    assert_eq!((c.usage_bytes, c.oom_kills), (Some(100 << 20), Some(2)));
    assert!(!v1
        .unavailable
        .0
        .keys()
        .any(|k| k.starts_with("memory.cgroup")));

    let v2 = probe_fixture("cpuset-mems-v2");
    let c = v2.memory.cgroup.as_ref().expect("a v2 memory cgroup");
    assert_eq!(c.version, "v2");
    assert_eq!(c.limit.as_ref().map(|l| l.bytes), Some(512 << 20));
    let high = c.high.as_ref().expect("memory.high");
    assert_eq!(high.bytes, 256 << 20);
    assert_eq!(
        v2.memory.binding(),
        Some(high),
        "memory.high binds below memory.max"
    );
    assert_eq!(c.swap_limit.as_ref().map(|l| l.bytes), Some(0));
    assert_eq!((c.usage_bytes, c.oom_kills), (Some(60 << 20), Some(0)));
    let why = &v2.unavailable.0["memory.cgroup.limit"];
    assert!(
        why.contains("db.service/memory.swap.max reads 'bogus'") && why.contains("tighter"),
        "{why}"
    );
    // The JSON document carries them, and the text view names the limit and its file.
    let json = serde_json::to_value(&v1).unwrap();
    assert_eq!(json["memory"]["cgroup"]["limit"]["bytes"], 384u64 << 20);
    let lines = v2.memory.lines().join("\n");
    assert!(
        lines.contains("memory limit 512 MiB, memory.high 256 MiB"),
        "{lines}"
    );

    let none = probe_fixture("offline-cpus");
    assert!(none.memory.cgroup.is_none());
    assert!(
        none.unavailable.0["memory.cgroup"].contains("no memory controller"),
        "{:?}",
        none.unavailable
    );
}
