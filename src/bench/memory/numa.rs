//! `memory.numa@1`: from each NUMA node's CPUs to each node's memory (pages bound with
//! mbind), the dependent-load latency (ns/load, a chain past the caches) and the read
//! bandwidth of the node's usable CPUs (MB/s, the `sum` kernel), as node x node cells beside
//! the firmware distances. On one node: the one cell, and a note that there is nothing to
//! compare.

use super::bandwidth::{reported_llc_total, run_passes};
use super::kernels::Kernel;
use super::latency;
use super::region::Pages;
use crate::bench::{Benchmark, Emitted, RunContext, Skipped};
use crate::error::Interrupted;
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
}

/// The cells to measure: every node with usable CPUs against every node with memory.
pub fn plan(p: &ProbeDoc) -> Vec<Cell> {
    let nodes = &p.numa.nodes;
    let mut cells = Vec::new();
    for (i, from) in nodes.iter().enumerate() {
        let cpus: Vec<u32> = from
            .cpus
            .iter()
            .copied()
            .filter(|c| p.cpus.usable.contains(c))
            .collect();
        if cpus.is_empty() {
            continue;
        }
        for (j, to) in nodes.iter().enumerate() {
            if to.memory_bytes == Some(0) {
                continue;
            }
            cells.push(Cell {
                cpu_node: from.id,
                mem_node: to.id,
                cpus: cpus.clone(),
                distance: p.numa.distances.get(i).and_then(|row| row.get(j)).copied(),
            });
        }
    }
    cells
}

impl Benchmark for Numa {
    fn id(&self) -> &'static str {
        "memory.numa@1"
    }

    fn describe(&self) -> &'static str {
        "per (CPU node, memory node) cell: ns per dependent load past the caches, and read MB/s of the node's CPUs, memory bound with mbind"
    }

    fn planned(&self, ctx: &RunContext) -> usize {
        plan(ctx.probe).len() * 2
    }

    fn run(&self, ctx: &RunContext, emit: &mut dyn FnMut(Emitted)) -> anyhow::Result<()> {
        let cells = plan(ctx.probe);
        if ctx.probe.numa.nodes.len() < 2 {
            emit(Emitted::Skipped(Skipped {
                benchmark: self.id().into(),
                case: "remote cells".into(),
                reason: "one NUMA node: nothing to compare (the local cell is measured)".into(),
            }));
        }
        // Past the caches: 4x the reported LLC total, at least 64 MiB.
        let size = (4 * reported_llc_total(ctx)).max(64 * MIB);
        for cell in cells {
            let node = (ctx.probe.numa.source == "sysfs").then_some(cell.mem_node);
            let placement = Placement {
                name: format!("node{}", cell.cpu_node),
                cpus: Some(cell.cpus.clone()),
                observed: None,
            };
            let base = |metric: &str| {
                crate::result::Params::from_struct(&NumaParams {
                    cpu_node: cell.cpu_node as u64,
                    mem_node: cell.mem_node as u64,
                    metric: metric.into(),
                    size_bytes: size,
                    distance: cell.distance.map(|d| d as u64),
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
                return Err(Interrupted.into());
            }
            let samples: Vec<f64> = lat.iter().map(|b| b.ns_per_iteration()).collect();
            let one_cpu = Placement {
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
                return Err(Interrupted.into());
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::fixture;

    #[test]
    fn two_nodes_give_four_cells_with_their_distances() {
        let p = fixture("epyc-multi-llc-2node");
        let cells = plan(&p);
        assert_eq!(cells.len(), 4);
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
        assert_eq!(plan(&fixture("this-vm")).len(), 1);
        let mut p = fixture("epyc-256");
        p.cpus.usable = (0..32).collect(); // a cpuset inside node 0
        let cells = plan(&p);
        assert_eq!(cells.len(), 4, "node 0 against the 4 memory nodes");
        assert!(cells.iter().all(|c| c.cpu_node == 0));
    }
}
