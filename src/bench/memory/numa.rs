//! `memory.numa@1`: from each NUMA node's CPUs to each node's memory (pages bound with
//! mbind), the dependent-load latency (ns/load, a chain past the caches) and the read
//! bandwidth of the node's usable CPUs (MB/s, the `sum` kernel), as node x node cells beside
//! the firmware distances. On one node: the one cell, and a note that there is nothing to
//! compare. A memory-only node (CXL, HBM, a slower memory tier) is measured as a target
//! from its nearest CPU nodes (the firmware's initiators, else the smallest distance);
//! memory the cgroup's cpuset.mems refuses, and nodes without memory, are skipped cases
//! with their reason.

use super::bandwidth::{reported_llc_total, run_passes, within_limit, Fit};
use super::kernels::Kernel;
use super::latency;
use super::region::Pages;
use crate::bench::{Benchmark, Emitted, RunContext, Skipped};
use crate::findings::results::annotate;
use crate::measure::batch::Batch;
use crate::probe::ProbeDoc;
use crate::result::{BenchResult, Placement, Quality};

pub struct Numa;

const MIB: u64 = 1 << 20;

/// One cell: threads on `cpus` (of node `cpu_node`) reading memory of node `mem_node`.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    pub cpu_node: u32,
    pub mem_node: u32,
    pub cpus: Vec<u32>,
    /// The firmware (SLIT) distance between the two nodes, when known.
    pub distance: Option<u32>,
    /// For a memory-only target: how its CPU nodes were chosen.
    pub nearest: Option<String>,
}

/// A memory node no cell measures, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Refused {
    pub case: String,
    pub reason: String,
}

/// The cells to measure: every node with usable CPUs against every node with memory this
/// process may allocate on; memory-only nodes from their nearest CPU nodes only. The
/// memory nodes left out come back with the reason.
pub fn plan(p: &ProbeDoc) -> (Vec<Cell>, Vec<Refused>) {
    let numa = &p.numa;
    let usable_of = |n: &crate::probe::numa::Node| -> Vec<u32> {
        n.cpus
            .iter()
            .copied()
            .filter(|c| p.cpus.usable.contains(c))
            .collect()
    };
    let cpu_nodes: Vec<u32> = numa
        .nodes
        .iter()
        .filter(|n| !usable_of(n).is_empty())
        .map(|n| n.id)
        .collect();
    let mut refused = Vec::new();
    // Each target memory node with the CPU nodes that measure it.
    let mut targets: Vec<(u32, Vec<u32>, Option<String>)> = Vec::new();
    for to in &numa.nodes {
        let case = format!("node{} memory", to.id);
        if !to.has_memory() {
            refused.push(Refused {
                case,
                reason: format!("node {} has no memory ({})", to.id, to.kind),
            });
        } else if !p.cpus.usable_mems.contains(&to.id) {
            let why = match &p.cpus.cgroup_mems {
                Some(m) if !m.contains(&to.id) => {
                    format!("cpuset.mems [{}]", crate::probe::cpulist::format_list(m))
                }
                _ => "Mems_allowed_list".into(),
            };
            refused.push(Refused {
                case,
                reason: format!(
                    "this process may not allocate on node {} ({why} refuses it)",
                    to.id
                ),
            });
        } else if to.cpus.is_empty() && numa.nodes.len() > 1 {
            let (from, how) = numa.nearest_cpu_nodes(to.id, &cpu_nodes);
            targets.push((to.id, from, Some(how)));
        } else {
            targets.push((to.id, cpu_nodes.clone(), None));
        }
    }
    let mut cells = Vec::new();
    for from in numa.nodes.iter().filter(|n| cpu_nodes.contains(&n.id)) {
        let cpus = usable_of(from);
        for (to, froms, how) in &targets {
            if froms.contains(&from.id) {
                cells.push(Cell {
                    cpu_node: from.id,
                    mem_node: *to,
                    cpus: cpus.clone(),
                    distance: numa.distance(from.id, *to),
                    nearest: how.clone(),
                });
            }
        }
    }
    (cells, refused)
}

impl Benchmark for Numa {
    /// "numa latency CPU node 0 memory node 1".
    fn label(&self, params: &crate::result::Params, _: &str) -> Option<String> {
        let p: NumaParams = params.read()?;
        Some(format!(
            "numa {} CPU node {} memory node {}",
            p.metric, p.cpu_node, p.mem_node
        ))
    }

    fn levels(&self) -> &'static [crate::bench::levels::LevelUse] {
        super::variance::NUMA
    }

    fn id(&self) -> &'static str {
        "memory.numa@1"
    }

    /// A cell's latency, or the read bandwidth of a thread on each of its CPUs, of three
    /// arrays on pages it advises.
    fn nature(&self, r: &BenchResult) -> crate::bench::nature::Nature {
        use crate::bench::nature::{Memory, Nature, Tasks};
        let metric = r.params.read::<NumaParams>().map(|p| p.metric);
        let (memory, tasks) = match metric.as_deref() {
            Some("latency") => (Memory::Latency, Tasks::One),
            Some("read-bandwidth") => (
                Memory::Bandwidth { array_bytes: None },
                Tasks::Threads(r.pinned_cpus().len() as u64),
            ),
            _ => (Memory::Other, Tasks::One),
        };
        let size = r.params.get("size_bytes").and_then(|v| v.as_u64());
        Nature {
            tasks,
            memory,
            footprint_bytes: size.map(|s| 3 * s),
            advises_pages: true,
            ..Nature::default()
        }
    }

    fn describe(&self) -> &'static str {
        "per (CPU node, memory node) cell: ns per dependent load past the caches, and read MB/s of the node's CPUs, memory bound with mbind"
    }

    fn planned(&self, ctx: &RunContext) -> usize {
        plan(ctx.probe).0.len() * 2
    }

    /// 3 s of a default run: about five rounds of one cell (0.5 s each on a 2-vCPU guest),
    /// more with more cells.
    fn budget_share_s(&self, ctx: &RunContext) -> f64 {
        crate::bench::scaled_share(3.0, plan(ctx.probe).0.len() as f64, 1.0)
    }

    /// Latency past the caches as `memory.latency`'s (8%), read bandwidth as
    /// `memory.bandwidth`'s (15%).
    fn mde_target(&self, r: &BenchResult) -> f64 {
        match r.params.read::<NumaParams>() {
            Some(p) if p.metric == "latency" => 0.08,
            _ => 0.15,
        }
    }

    fn plan(&self, ctx: &RunContext) -> Vec<crate::placement::Planned> {
        use crate::placement::Planned;
        let (cells, refused) = plan(ctx.probe);
        cells
            .into_iter()
            .map(|c| {
                let mut why = format!(
                    "CPU node {} reads node {}'s memory: latency on CPU {}, read bandwidth on the node's {} usable CPUs",
                    c.cpu_node,
                    c.mem_node,
                    c.cpus[0],
                    c.cpus.len()
                );
                if let Some(d) = c.distance {
                    why.push_str(&format!("; distance {d}"));
                }
                if let Some(how) = &c.nearest {
                    why.push_str(&format!("; memory-only node, nearest CPUs by {how}"));
                }
                Planned::run(
                    self.id(),
                    format!("node{} -> node{} memory", c.cpu_node, c.mem_node),
                    Some(c.cpus),
                    why,
                )
            })
            .chain(
                refused
                    .into_iter()
                    .map(|r| Planned::skip(self.id(), r.case, r.reason)),
            )
            .collect()
    }

    fn run(&self, ctx: &RunContext, emit: &mut dyn FnMut(Emitted)) -> anyhow::Result<()> {
        let (cells, refused) = plan(ctx.probe);
        for r in refused {
            emit(Emitted::Skipped(Skipped {
                benchmark: self.id().into(),
                case: r.case,
                reason: r.reason,
            }));
        }
        if ctx.probe.numa.nodes.len() < 2 {
            emit(Emitted::Skipped(Skipped {
                benchmark: self.id().into(),
                case: "remote cells".into(),
                reason: "one NUMA node: nothing to compare (the local cell is measured)".into(),
            }));
        }
        // Past the caches: 4x the reported LLC total, at least 64 MiB; within a memory
        // limit, the read arrays (three of the size, as the bandwidth kernels map them)
        // fit what it leaves, else the cells are skipped naming it.
        let reported = reported_llc_total(ctx);
        let size = (4 * reported).max(64 * MIB);
        let measured = ctx
            .measured
            .hierarchy()
            .and_then(|h| h.llc.map(|l| l.next_bytes));
        let llc = measured.or((reported > 0).then_some(reported));
        let room = crate::probe::memory_limit::Room::now(&ctx.probe.memory);
        let why = "4 x the reported LLC total, at least 64 MiB";
        let size = match within_limit(self.id(), size, why, llc, measured.is_some(), &room) {
            Fit::Use(s, reason) => {
                if s < size {
                    emit(Emitted::Skipped(Skipped {
                        benchmark: self.id().into(),
                        case: format!("cells at {} (measured smaller)", crate::units::bytes(size)),
                        reason,
                    }));
                }
                s
            }
            Fit::Skip(reason) => {
                emit(Emitted::Skipped(Skipped {
                    benchmark: self.id().into(),
                    case: "every cell".into(),
                    reason,
                }));
                return Ok(());
            }
        };
        for cell in cells {
            if crate::deadline::stop_requested() {
                return crate::deadline::stopped();
            }
            emit(Emitted::Running(format!(
                "CPUs of node {}, memory of node {}",
                cell.cpu_node, cell.mem_node
            )));
            let node = (ctx.probe.numa.source == "sysfs").then_some(cell.mem_node);
            let placement = Placement::on(format!("node{}", cell.cpu_node), cell.cpus.clone());
            let base = |metric: &str| {
                crate::result::Params::from_struct(&NumaParams {
                    cpu_node: cell.cpu_node as u64,
                    mem_node: cell.mem_node as u64,
                    metric: metric.into(),
                    size_bytes: size,
                    distance: cell.distance.map(|d| d as u64),
                    mem_node_kind: cell.nearest.as_ref().map(|_| "memory-only".to_string()),
                    cpu_node_chosen_by: cell.nearest.clone(),
                })
            };
            // Latency: one thread on the node's first usable CPU.
            let first = cell.cpus[0];
            let lat = std::thread::scope(|s| {
                s.spawn(|| {
                    crate::placement::pin_current_thread(first).map_err(anyhow::Error::msg)?;
                    latency::measure(size, Pages::Small, node, ctx.samples, ctx.min_batch_ns)
                })
                .join()
                .unwrap_or_else(|_| Err(anyhow::anyhow!("latency thread panicked")))
            })?;
            if lat.len() < ctx.samples {
                return crate::deadline::stopped(); // an unfinished result is not kept
            }
            let samples: Vec<f64> = lat.iter().map(|b| b.ns_per_iteration()).collect();
            let one_cpu = Placement {
                cpu_kinds: None,
                cpus: Some(vec![first]),
                ..placement.clone()
            };
            let mut r = BenchResult::new(
                self.id(),
                base("latency"),
                one_cpu,
                "ns/load",
                true,
                samples,
                Quality::of(ctx.clock_cost_ns, &lat),
            )
            .ok_or_else(|| anyhow::anyhow!("numa latency: no samples"))?;
            annotate(&mut r);
            emit(Emitted::Result(Box::new(r)));

            // Read bandwidth: every usable CPU of the node, each with its own bound arrays.
            let threads = cell.cpus.len();
            let n = ((size / 8) as usize / threads).max(8) / 8 * 8;
            let p = run_passes(&cell.cpus, n, ctx.samples + 1, false, node)?;
            if p.interrupted {
                return crate::deadline::stopped();
            }
            let ki = Kernel::ALL
                .iter()
                .position(|k| *k == Kernel::Sum)
                .unwrap_or(4);
            let elements = (n * threads) as u64;
            let batches: Vec<Batch> = p.durations[ki][1..]
                .iter()
                .map(|&ns| Batch {
                    iterations: elements,
                    elapsed_ns: ns.max(1),
                })
                .collect();
            let mb = 8.0 * elements as f64 / 1e6;
            let samples: Vec<f64> = batches
                .iter()
                .map(|b| mb / (b.elapsed_ns as f64 / 1e9))
                .collect();
            let mut r = BenchResult::new(
                self.id(),
                base("read-bandwidth"),
                placement,
                "MB/s",
                false,
                samples,
                Quality::of(ctx.clock_cost_ns, &batches),
            )
            .ok_or_else(|| anyhow::anyhow!("numa bandwidth: no samples"))?;
            annotate(&mut r);
            emit(Emitted::Result(Box::new(r)));
        }
        Ok(())
    }
}

/// The params of `memory.numa`: the cell (CPU node, memory node), what was measured
/// (`latency`, `read-bandwidth`), the buffer size and the firmware distance when known.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct NumaParams {
    pub cpu_node: u64,
    pub mem_node: u64,
    pub metric: String,
    #[serde(default)]
    pub size_bytes: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distance: Option<u64>,
    /// `memory-only` when the memory node has no CPUs of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mem_node_kind: Option<String>,
    /// How the CPU node of a memory-only node was chosen (initiators, or distance).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_node_chosen_by: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::fixture;

    #[test]
    fn two_nodes_give_four_cells_with_their_distances() {
        let p = fixture("epyc-multi-llc-2node");
        let (cells, refused) = plan(&p);
        assert_eq!(cells.len(), 4);
        assert!(refused.is_empty());
        let c01 = cells
            .iter()
            .find(|c| c.cpu_node == 0 && c.mem_node == 1)
            .unwrap();
        assert_eq!(c01.distance, Some(12));
        assert_eq!(c01.cpus.len(), 16);
        assert!(c01.cpus.contains(&0) && c01.cpus.contains(&16) && !c01.cpus.contains(&8));
    }

    #[test]
    fn one_node_gives_one_cell_and_usable_cpus_limit_the_rows() {
        assert_eq!(plan(&fixture("this-vm")).0.len(), 1);
        let mut p = fixture("epyc-256");
        p.cpus.usable = (0..32).collect(); // a cpuset inside node 0
        let (cells, _) = plan(&p);
        assert_eq!(cells.len(), 4, "node 0 against the 4 memory nodes");
        assert!(cells.iter().all(|c| c.cpu_node == 0));
    }

    #[test]
    fn refused_memory_nodes_are_skipped_cases_with_the_reason() {
        let p = fixture("cpuset-mems-v1");
        let (cells, refused) = plan(&p);
        // Both CPU nodes measure node 0's memory; node 1's memory is refused.
        assert_eq!(cells.len(), 2);
        assert!(cells.iter().all(|c| c.mem_node == 0));
        assert_eq!(refused.len(), 1);
        assert_eq!(refused[0].case, "node1 memory");
        assert!(refused[0].reason.contains("cpuset.mems [0]"), "{refused:?}");
        let m = fixture("memoryless-node");
        let (cells, refused) = plan(&m);
        assert_eq!(cells.len(), 2, "nodes 0 and 1 read node 0's memory");
        assert!(refused[0].reason.contains("no memory (cpus-only)"));
    }

    #[test]
    fn memory_only_nodes_are_targets_from_their_nearest_cpus() {
        let p = fixture("cxl-memory-only");
        let (cells, refused) = plan(&p);
        assert!(refused.is_empty());
        // 2 x 2 CPU-node cells, and each CXL node from its own socket only.
        assert_eq!(cells.len(), 6);
        let cxl: Vec<(u32, u32)> = cells
            .iter()
            .filter(|c| c.nearest.is_some())
            .map(|c| (c.cpu_node, c.mem_node))
            .collect();
        assert_eq!(cxl, vec![(0, 2), (1, 3)]);
        let c = cells.iter().find(|c| c.mem_node == 2).unwrap();
        assert_eq!(c.distance, Some(14));
        assert!(c.nearest.as_deref().unwrap().contains("initiators"));
        // Without initiators the smallest distance decides.
        let mut q = p.clone();
        for n in &mut q.numa.nodes {
            n.initiators = None;
        }
        let (cells, _) = plan(&q);
        let c = cells.iter().find(|c| c.mem_node == 3).unwrap();
        assert_eq!(c.cpu_node, 1);
        assert!(c.nearest.as_deref().unwrap().contains("distance"));
    }
}
