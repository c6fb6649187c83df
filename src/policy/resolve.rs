//! A policy resolved against the probed machine: for each of K instances of a workload,
//! the CPUs it may run on, the CPUs its threads are bound to one each, and the memory
//! nodes of its memory policy; or why the variant cannot exist here (a skipped case with
//! its reason: one NUMA node, fewer partitions than instances, a CPU count beyond the
//! usable CPUs). Worker placement for truebench's own load-step workers comes from here
//! too (`worker_cpus`, `node_groups`).

use super::{Memory, Placement, Policy};
use crate::placement::{compact_order, llc_groups, spread_order};
use crate::probe::{cpulist::format_list, ProbeDoc};
use serde::{Deserialize, Serialize};

/// Where one instance runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Instance {
    /// The CPUs its process may run on; None: all of truebench's (the scheduler places it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<Vec<u32>>,
    /// `pinned`: its threads are bound one each to these CPUs, in this order, round-robin.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pin_order: Option<Vec<u32>>,
    /// The memory nodes its memory policy names (bind, interleave, preferred: the first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_nodes: Option<Vec<u32>>,
    /// The partition, in words: "node 1: CPUs [8-15]".
    pub partition: String,
}

/// The NUMA nodes with CPUs this process may use and memory it may allocate on, with
/// those CPUs (the `per-node` partitions).
pub fn node_groups(probe: &ProbeDoc) -> Vec<(u32, Vec<u32>)> {
    per_node(probe).0
}

/// The nodes with usable CPUs that `per-node` leaves out, each with the reason: no memory
/// on the node, or memory the cpuset (or the task's Mems_allowed) refuses.
pub fn refused_nodes(probe: &ProbeDoc) -> Vec<(u32, String)> {
    per_node(probe).1
}

/// Nodes with their usable CPUs, and nodes left out with the reason.
type NodeChoice = (Vec<(u32, Vec<u32>)>, Vec<(u32, String)>);

fn per_node(probe: &ProbeDoc) -> NodeChoice {
    let mut ok = Vec::new();
    let mut refused = Vec::new();
    for n in &probe.numa.nodes {
        let cpus: Vec<u32> = n
            .cpus
            .iter()
            .copied()
            .filter(|c| probe.cpus.usable.contains(c))
            .collect();
        if cpus.is_empty() {
            continue;
        }
        if !n.has_memory() {
            refused.push((n.id, format!("node {} has no memory to bind", n.id)));
        } else if !probe.cpus.usable_mems.contains(&n.id) {
            refused.push((
                n.id,
                format!(
                    "node {}'s memory is refused to this process (allowed memory nodes: [{}])",
                    n.id,
                    format_list(&probe.cpus.usable_mems)
                ),
            ));
        } else {
            ok.push((n.id, cpus));
        }
    }
    (ok, refused)
}

/// The CPUs truebench's own `workers` worker threads are pinned to, one each round-robin
/// (None: the scheduler places them): compact, spread (N CPUs of the order when given) and
/// pinned (the spread order).
pub fn worker_cpus(placement: Placement, workers: usize, probe: &ProbeDoc) -> Option<Vec<u32>> {
    let (order, n) = match placement {
        Placement::Compact(n) => (compact_order(probe), n),
        Placement::Spread(n) => (spread_order(probe), n),
        Placement::Pinned => (spread_order(probe), None),
        _ => return None,
    };
    let take = n.unwrap_or(workers).min(order.len());
    (take > 0).then(|| order.into_iter().take(take).cycle().take(workers).collect())
}

/// The memory nodes truebench may allocate on, and the node of each CPU.
fn node_of(probe: &ProbeDoc, cpu: u32) -> Option<u32> {
    probe
        .numa
        .nodes
        .iter()
        .find(|n| n.cpus.contains(&cpu))
        .map(|n| n.id)
}

/// Distinct nodes of a CPU set, among the allowed memory nodes.
fn nodes_of(probe: &ProbeDoc, cpus: &[u32]) -> Vec<u32> {
    let mut v: Vec<u32> = cpus
        .iter()
        .filter_map(|c| node_of(probe, *c))
        .filter(|n| probe.cpus.usable_mems.contains(n))
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// `k` disjoint slices of `n` CPUs of `order` (n None: an equal share each).
fn slices(
    what: &str,
    order: &[u32],
    n: Option<usize>,
    k: usize,
) -> Result<Vec<(Vec<u32>, String)>, String> {
    let n = n.unwrap_or(order.len() / k);
    if n == 0 || n * k > order.len() {
        return Err(format!(
            "{what}: {} x {}, and this process may use {}",
            crate::units::count(k, "instance"),
            crate::units::count(n, "CPU"),
            crate::units::count(order.len(), "CPU")
        ));
    }
    Ok((0..k)
        .map(|i| {
            let mut cpus = order[i * n..(i + 1) * n].to_vec();
            cpus.sort_unstable();
            let words = format!("{what}: CPUs [{}]", format_list(&cpus));
            (cpus, words)
        })
        .collect())
}

/// One instance's CPUs (None: all), its partition's memory nodes, and the words for it.
type Part = (Option<Vec<u32>>, Option<Vec<u32>>, String);

/// Where each of `k` instances runs under `policy` on this machine; Err: why the variant
/// cannot exist here.
pub fn instances(policy: &Policy, k: usize, probe: &ProbeDoc) -> Result<Vec<Instance>, String> {
    let k = k.max(1);
    let usable = &probe.cpus.usable;
    // (CPUs, memory nodes of the partition, words) per instance.
    let parts: Vec<Part> = match policy.placement {
        Placement::Os | Placement::Pinned => (0..k)
            .map(|_| {
                (
                    None,
                    None,
                    format!("all usable CPUs [{}]", format_list(usable)),
                )
            })
            .collect(),
        Placement::Compact(n) => slices("compact", &compact_order(probe), n, k)?
            .into_iter()
            .map(|(c, w)| (Some(c), None, w))
            .collect(),
        Placement::Spread(n) => slices("spread", &spread_order(probe), n, k)?
            .into_iter()
            .map(|(c, w)| (Some(c), None, w))
            .collect(),
        Placement::PerNode => {
            let groups = node_groups(probe);
            if groups.len() < k {
                let refused: Vec<String> = refused_nodes(probe).into_iter().map(|r| r.1).collect();
                return Err(format!(
                    "per-node needs one NUMA node per instance: {}, and this machine has {} with usable CPUs and memory{}",
                    crate::units::count(k, "instance"),
                    crate::units::count(groups.len(), "node"),
                    if refused.is_empty() { String::new() } else { format!(" ({})", refused.join("; ")) }
                ));
            }
            groups
                .into_iter()
                .take(k)
                .map(|(node, cpus)| {
                    let w = format!("node {node}: CPUs [{}]", format_list(&cpus));
                    (Some(cpus), Some(vec![node]), w)
                })
                .collect()
        }
        Placement::PerLlc => {
            let groups = llc_groups(probe);
            if groups.len() < k {
                return Err(format!(
                    "per-llc needs one LLC group per instance: {}, and this process may use {}",
                    crate::units::count(k, "instance"),
                    crate::units::count(groups.len(), "LLC group")
                ));
            }
            groups
                .into_iter()
                .take(k)
                .map(|(node, cpus)| {
                    let mems = node.filter(|n| probe.cpus.usable_mems.contains(n));
                    let w = format!(
                        "LLC group CPUs [{}]{}",
                        format_list(&cpus),
                        node.map(|n| format!(" on node {n}")).unwrap_or_default()
                    );
                    (Some(cpus), mems.map(|m| vec![m]), w)
                })
                .collect()
        }
    };
    let spread = spread_order(probe);
    parts
        .into_iter()
        .enumerate()
        .map(|(i, (cpus, part_mems, partition))| {
            let memory_nodes = memory_nodes(policy, probe, cpus.as_deref(), part_mems)?;
            let pin_order =
                (policy.placement == Placement::Pinned && !spread.is_empty()).then(|| {
                    // Instances start at different CPUs of the order, so their first threads
                    // do not share one.
                    let s = i % spread.len();
                    spread[s..].iter().chain(&spread[..s]).copied().collect()
                });
            Ok(Instance {
                cpus,
                pin_order,
                memory_nodes,
                partition,
            })
        })
        .collect()
}

/// The nodes the memory policy names: those of the partition (per-node, per-llc), else
/// of its CPUs, else every allowed node; Err when the policy cannot differ from `local`
/// here.
fn memory_nodes(
    policy: &Policy,
    probe: &ProbeDoc,
    cpus: Option<&[u32]>,
    partition: Option<Vec<u32>>,
) -> Result<Option<Vec<u32>>, String> {
    let nodes = partition
        .clone()
        .or_else(|| cpus.map(|c| nodes_of(probe, c)))
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| probe.cpus.usable_mems.clone());
    match policy.memory {
        None => Ok(partition),
        Some(Memory::Local) => Ok(None),
        Some(m) if probe.cpus.usable_mems.len() <= 1 => Err(format!(
            "{m}: this process may allocate on one memory node only ([{}]), where local allocation puts everything already",
            format_list(&probe.cpus.usable_mems)
        )),
        Some(Memory::Interleave) if nodes.len() <= 1 => Err(format!(
            "interleave: the placement's memory is on one node ([{}]): there is nothing to interleave over",
            format_list(&nodes)
        )),
        Some(Memory::Preferred) => Ok(Some(nodes[..1].to_vec())),
        Some(_) => Ok(Some(nodes)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pol(s: &str) -> Policy {
        s.parse().unwrap()
    }

    #[test]
    fn per_node_groups_are_the_nodes_with_usable_cpus() {
        let p = crate::probe::fixture("epyc-multi-llc-2node");
        let g = node_groups(&p);
        assert_eq!(g.len(), 2);
        assert_ne!(g[0].0, g[1].0);
        // Every usable CPU is in exactly one group, and only in its own node's.
        let all: Vec<u32> = g.iter().flat_map(|(_, c)| c.clone()).collect();
        assert_eq!(all.len(), p.cpus.usable.len());
        for (node, cpus) in &g {
            let n = p.numa.nodes.iter().find(|n| n.id == *node).unwrap();
            assert!(cpus.iter().all(|c| n.cpus.contains(c)));
        }
        assert_eq!(node_groups(&crate::probe::fixture("this-vm")).len(), 1);
    }

    #[test]
    fn per_node_keeps_to_nodes_whose_memory_is_allowed() {
        let p = crate::probe::fixture("cpuset-mems-v1");
        let g = node_groups(&p);
        assert_eq!(g.len(), 1);
        assert_eq!(g[0].0, 0);
        let r = refused_nodes(&p);
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].0, 1);
        assert!(r[0].1.contains("refused"), "{r:?}");
        let m = crate::probe::fixture("memoryless-node");
        assert_eq!(node_groups(&m).len(), 1);
        assert!(refused_nodes(&m)[0].1.contains("no memory"));
        // Memory-only nodes have no CPUs to run workers: neither a group nor refused.
        let c = crate::probe::fixture("cxl-memory-only");
        assert_eq!(node_groups(&c).len(), 2);
        assert!(refused_nodes(&c).is_empty());
    }

    #[test]
    fn per_node_partitions_two_nodes_and_refuses_more_instances_than_nodes() {
        let p = crate::probe::fixture("epyc-multi-llc-2node");
        let two = instances(&pol("per-node"), 2, &p).unwrap();
        assert_eq!(two.len(), 2);
        let (a, b) = (two[0].cpus.clone().unwrap(), two[1].cpus.clone().unwrap());
        assert!(a.iter().all(|c| !b.contains(c)), "disjoint: {a:?} {b:?}");
        assert_ne!(two[0].memory_nodes, two[1].memory_nodes);
        assert!(instances(&pol("per-node"), 3, &p)
            .unwrap_err()
            .contains("2 nodes"));
        // One node: one instance is the whole machine, two cannot exist.
        let one = crate::probe::fixture("this-vm");
        assert_eq!(instances(&pol("per-node"), 1, &one).unwrap().len(), 1);
        let e = instances(&pol("per-node"), 2, &one).unwrap_err();
        assert!(e.contains("1 node with"), "{e}");
    }

    #[test]
    fn compact_slices_are_disjoint_and_bounded_by_the_usable_cpus() {
        let p = crate::probe::fixture("two-socket-smt");
        let two = instances(&pol("compact:2"), 2, &p).unwrap();
        let (a, b) = (two[0].cpus.clone().unwrap(), two[1].cpus.clone().unwrap());
        assert_eq!(a.len(), 2);
        assert!(a.iter().all(|c| !b.contains(c)));
        let n = p.cpus.usable.len();
        assert!(instances(&pol(&format!("compact:{n}")), 2, &p).is_err());
        assert!(instances(&pol("os"), 3, &p).unwrap()[0].cpus.is_none());
    }

    #[test]
    fn memory_policies_that_cannot_differ_on_one_node_are_skipped() {
        let one = crate::probe::fixture("this-vm");
        for m in ["bind", "interleave", "preferred"] {
            let e = instances(&pol(m), 1, &one).unwrap_err();
            assert!(e.contains("one memory node"), "{m}: {e}");
        }
        assert!(instances(&pol("local"), 1, &one).is_ok());
        let two = crate::probe::fixture("epyc-multi-llc-2node");
        let i = instances(&pol("interleave"), 1, &two).unwrap();
        assert_eq!(i[0].memory_nodes.as_ref().unwrap().len(), 2);
        let e = instances(&pol("per-node+interleave"), 1, &two).unwrap_err();
        assert!(e.contains("nothing to interleave"), "{e}");
        let b = instances(&pol("per-node+bind"), 2, &two).unwrap();
        assert_eq!(b[1].memory_nodes.as_ref().unwrap().len(), 1);
    }

    #[test]
    fn pinned_orders_start_at_different_cpus() {
        let p = crate::probe::fixture("two-socket-smt");
        let i = instances(&pol("pinned"), 2, &p).unwrap();
        let (a, b) = (
            i[0].pin_order.clone().unwrap(),
            i[1].pin_order.clone().unwrap(),
        );
        assert_eq!(a.len(), p.cpus.usable.len());
        assert_ne!(a[0], b[0]);
        let w = worker_cpus(Placement::Compact(None), 4, &p).unwrap();
        assert_eq!(w.len(), 4);
        assert!(worker_cpus(Placement::Os, 4, &p).is_none());
        assert_eq!(
            worker_cpus(Placement::Compact(Some(1)), 3, &p).unwrap(),
            vec![w[0]; 3]
        );
    }
}
