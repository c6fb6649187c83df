//! Placement resolution on every fixture tree: which CPUs each named placement picks, and
//! which placements are not applicable and why.

mod common;

use truebench::placement::{resolve_all, NAMES};
use truebench::probe::{probe, sysroot::SysRoot};

fn resolved(name: &str) -> Vec<(String, Result<[u32; 2], String>)> {
    let p = probe(&SysRoot::captured(common::fixture(name)));
    let all: Vec<String> = NAMES.iter().map(|s| s.to_string()).collect();
    let (ok, na) = resolve_all(&all, &p);
    let mut out: Vec<(String, Result<[u32; 2], String>)> = Vec::new();
    for n in NAMES {
        if let Some(r) = ok.iter().find(|r| r.name == *n) {
            out.push((n.to_string(), Ok(r.cpus.unwrap_or([u32::MAX, u32::MAX]))));
        } else if let Some(e) = na.iter().find(|e| e.name == *n) {
            out.push((n.to_string(), Err(e.reason.clone())));
        } else {
            panic!("{name}: placement {n} silently dropped");
        }
    }
    out
}

const OS: [u32; 2] = [u32::MAX, u32::MAX];

fn check(name: &str, want: &[(&str, Result<[u32; 2], &str>)]) {
    let got = resolved(name);
    assert_eq!(got.len(), want.len(), "{name}");
    for ((gn, g), (wn, w)) in got.iter().zip(want) {
        assert_eq!(gn, wn);
        match (g, w) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "{name}: {gn} CPUs"),
            (Err(a), Err(b)) => assert!(
                a.starts_with(b),
                "{name}: {gn}: reason {a:?}, expected {b:?}"
            ),
            _ => panic!("{name}: {gn}: got {g:?}, expected {w:?}"),
        }
    }
}

#[test]
fn two_socket_smt() {
    check(
        "two-socket-smt",
        &[
            ("same-cpu", Ok([0, 0])),
            ("smt-sibling", Ok([0, 20])),
            ("same-llc", Ok([0, 1])),
            ("cross-llc", Err("one LLC per package")),
            ("cross-package", Ok([0, 10])),
            ("cross-node", Err("same CPUs as cross-package")),
            ("os", Ok(OS)),
        ],
    );
}

#[test]
fn epyc_multi_llc_two_nodes() {
    check(
        "epyc-multi-llc-2node",
        &[
            ("same-cpu", Ok([0, 0])),
            ("smt-sibling", Ok([0, 16])),
            ("same-llc", Ok([0, 1])),
            ("cross-llc", Ok([0, 4])),
            ("cross-package", Err("one package")),
            ("cross-node", Ok([0, 8])),
            ("os", Ok(OS)),
        ],
    );
}

#[test]
fn vms() {
    check(
        "vm-private-llc",
        &[
            ("same-cpu", Ok([0, 0])),
            ("smt-sibling", Err("no SMT")),
            ("same-llc", Err("no LLC is shared by two cores")),
            ("cross-llc", Ok([0, 1])),
            ("cross-package", Err("one package")),
            ("cross-node", Err("one NUMA node")),
            ("os", Ok(OS)),
        ],
    );
    check(
        "vm-socket-per-vcpu",
        &[
            ("same-cpu", Ok([0, 0])),
            ("smt-sibling", Err("no SMT")),
            ("same-llc", Err("no LLC is shared by two cores")),
            ("cross-llc", Err("one LLC per package")),
            ("cross-package", Ok([0, 1])),
            ("cross-node", Err("one NUMA node")),
            ("os", Ok(OS)),
        ],
    );
    check(
        "vm-smt-no-shared-cache",
        &[
            ("same-cpu", Ok([0, 0])),
            ("smt-sibling", Ok([0, 1])),
            ("same-llc", Err("no LLC is shared by two cores")),
            ("cross-llc", Ok([0, 2])),
            ("cross-package", Err("one package")),
            ("cross-node", Err("one NUMA node")),
            ("os", Ok(OS)),
        ],
    );
    check(
        "this-vm",
        &[
            ("same-cpu", Ok([0, 0])),
            ("smt-sibling", Err("no SMT")),
            ("same-llc", Ok([0, 1])),
            ("cross-llc", Err("one LLC")),
            ("cross-package", Err("one package")),
            ("cross-node", Err("one NUMA node")),
            ("os", Ok(OS)),
        ],
    );
}

#[test]
fn arm_clusters_and_limited_containers() {
    check(
        "arm-no-l3",
        &[
            ("same-cpu", Ok([0, 0])),
            ("smt-sibling", Err("no SMT")),
            ("same-llc", Ok([0, 1])),
            ("cross-llc", Ok([0, 4])),
            ("cross-package", Err("one package")),
            ("cross-node", Err("one NUMA node")),
            ("os", Ok(OS)),
        ],
    );
    // The cpuset 0-5 holds no SMT pair (siblings are 8 apart): nothing is guessed from numbers.
    check(
        "container-quota",
        &[
            ("same-cpu", Ok([0, 0])),
            ("smt-sibling", Err("no core has two usable SMT threads")),
            ("same-llc", Ok([0, 1])),
            ("cross-llc", Err("one LLC")),
            ("cross-package", Err("one package")),
            ("cross-node", Err("one NUMA node")),
            ("os", Ok(OS)),
        ],
    );
    check(
        "offline-cpus",
        &[
            ("same-cpu", Ok([0, 0])),
            ("smt-sibling", Err("no SMT")),
            ("same-llc", Ok([0, 1])),
            ("cross-llc", Err("one LLC")),
            ("cross-package", Err("one package")),
            ("cross-node", Err("one NUMA node")),
            ("os", Ok(OS)),
        ],
    );
}

#[test]
fn epyc_256() {
    check(
        "epyc-256",
        &[
            ("same-cpu", Ok([0, 0])),
            ("smt-sibling", Ok([0, 128])),
            ("same-llc", Ok([0, 1])),
            ("cross-llc", Ok([0, 8])),
            ("cross-package", Ok([0, 64])),
            ("cross-node", Ok([0, 32])),
            ("os", Ok(OS)),
        ],
    );
}
