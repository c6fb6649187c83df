//! Named placements resolved against the probed topology into concrete CPUs for the tasks
//! of a benchmark, and per-task pinning that is verified before the measured loop.
//!
//! CPUs are picked by topology relation (SMT siblings, LLC groups, packages, NUMA nodes
//! from the probe), never by CPU-number arithmetic. A placement that cannot exist on this
//! machine is returned as not applicable with the reason, never silently dropped.

use crate::probe::ProbeDoc;
use serde::Serialize;

/// The named placements, in the order a full matrix runs them.
pub const NAMES: &[&str] = &[
    "same-cpu",
    "smt-sibling",
    "same-llc",
    "cross-llc",
    "cross-package",
    "cross-node",
    "os",
];

/// A placement resolved for two tasks: their CPUs, or None for `os` (not pinned).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Resolved {
    pub name: String,
    pub cpus: Option<[u32; 2]>,
    /// The relation in words: "CPUs 0 and 20: SMT siblings of core [0,20]".
    pub why: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NotApplicable {
    pub name: String,
    pub reason: String,
}

/// How two CPUs relate, from the closest relation to the farthest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Relation {
    SameCpu,
    SmtSibling,
    SameLlc,
    CrossLlc,
    CrossPackage,
    CrossNode,
}

impl Relation {
    /// Every relation, closest first.
    pub const ALL: [Relation; 6] = [
        Relation::SameCpu,
        Relation::SmtSibling,
        Relation::SameLlc,
        Relation::CrossLlc,
        Relation::CrossPackage,
        Relation::CrossNode,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Relation::SameCpu => "same-cpu",
            Relation::SmtSibling => "smt-sibling",
            Relation::SameLlc => "same-llc",
            Relation::CrossLlc => "cross-llc",
            Relation::CrossPackage => "cross-package",
            Relation::CrossNode => "cross-node",
        }
    }
}

/// Facts about CPUs that placements need, taken once from the probe.
pub struct Topo<'a> {
    p: &'a ProbeDoc,
}

impl<'a> Topo<'a> {
    pub fn new(p: &'a ProbeDoc) -> Self {
        Topo { p }
    }

    /// CPUs this process may run on (affinity ∩ cpuset ∩ online), ascending.
    pub fn usable(&self) -> &[u32] {
        &self.p.cpus.usable
    }

    fn core_of(&self, cpu: u32) -> Option<&Vec<u32>> {
        self.p.topology.place(cpu).map(|pl| &pl.core_cpus)
    }

    fn package_of(&self, cpu: u32) -> Option<i64> {
        self.p.topology.place(cpu).map(|pl| pl.package)
    }

    fn node_of(&self, cpu: u32) -> Option<u32> {
        self.p.numa.node_of(cpu)
    }

    /// The closest relation between two CPUs. Different nodes outrank different packages
    /// (a node boundary inside a package is still a memory boundary).
    pub fn relation(&self, a: u32, b: u32) -> Relation {
        if a == b {
            return Relation::SameCpu;
        }
        if self.core_of(a).is_some_and(|c| c.contains(&b)) {
            return Relation::SmtSibling;
        }
        if self.node_of(a) != self.node_of(b) {
            return Relation::CrossNode;
        }
        if self.package_of(a) != self.package_of(b) {
            return Relation::CrossPackage;
        }
        if self.p.topology.llc_of(a).is_some_and(|g| g.contains(&b)) {
            return Relation::SameLlc;
        }
        Relation::CrossLlc
    }

    /// Whether a pair of distinct CPUs fits the named relation.
    fn fits(&self, a: u32, b: u32, rel: Relation) -> bool {
        let same_core = self.core_of(a).is_some_and(|c| c.contains(&b));
        let same_llc = self.p.topology.llc_of(a).is_some_and(|g| g.contains(&b));
        let same_pkg = self.package_of(a) == self.package_of(b);
        match rel {
            Relation::SameCpu => a == b,
            Relation::SmtSibling => same_core,
            Relation::SameLlc => same_llc && !same_core,
            Relation::CrossLlc => same_pkg && !same_llc,
            Relation::CrossPackage => !same_pkg,
            Relation::CrossNode => self.node_of(a) != self.node_of(b),
        }
    }

    /// A usable pair fitting the relation: among the fitting pairs, the one whose closest
    /// relation is nearest (cross-llc prefers a pair inside one node), then ascending CPUs.
    pub fn first_pair(&self, rel: Relation) -> Option<[u32; 2]> {
        let u = self.usable();
        if rel == Relation::SameCpu {
            return u.first().map(|&c| [c, c]);
        }
        let mut best: Option<(Relation, [u32; 2])> = None;
        for (i, &a) in u.iter().enumerate() {
            for &b in &u[i + 1..] {
                if self.fits(a, b, rel) {
                    let r = self.relation(a, b);
                    if best.is_none_or(|(br, _)| r < br) {
                        best = Some((r, [a, b]));
                    }
                    if r == rel {
                        return Some([a, b]);
                    }
                }
            }
        }
        best.map(|(_, pair)| pair)
    }

    /// Why no usable pair has this relation here.
    fn absent_reason(&self, rel: Relation) -> String {
        let t = &self.p.topology;
        let u = self.usable().len();
        match rel {
            _ if u == 0 => "no usable CPU".into(),
            Relation::SameCpu => unreachable!("same-cpu exists whenever a CPU is usable"),
            _ if u < 2 => format!("only {u} usable CPU"),
            Relation::SmtSibling if t.threads_per_core < 2 => "no SMT (one thread per core)".into(),
            Relation::SmtSibling => "no core has two usable SMT threads".into(),
            Relation::SameLlc if t.llc_groups.iter().all(|g| self.cores_in(g) < 2) => {
                "no LLC is shared by two cores (each core has its own)".into()
            }
            Relation::SameLlc => "no two usable cores share an LLC".into(),
            Relation::CrossLlc if t.llc_groups.len() < 2 => "one LLC".into(),
            Relation::CrossLlc => "one LLC per package among usable CPUs".into(),
            Relation::CrossPackage if t.packages < 2 => "one package".into(),
            Relation::CrossPackage => "usable CPUs are all in one package".into(),
            Relation::CrossNode if self.p.numa.nodes.len() < 2 => "one NUMA node".into(),
            Relation::CrossNode => "usable CPUs are all in one NUMA node".into(),
        }
    }

    fn cores_in(&self, cpus: &[u32]) -> usize {
        self.p
            .topology
            .core_sets()
            .iter()
            .filter(|c| c.iter().any(|x| cpus.contains(x)))
            .count()
    }
}

fn relation_from_name(name: &str) -> Option<Relation> {
    Relation::ALL.into_iter().find(|r| r.name() == name)
}

/// Check placement names given by the user: Err(bad name) for one that does not exist.
pub fn check_names(names: &[String]) -> Result<(), String> {
    match names.iter().find(|n| !NAMES.contains(&n.as_str())) {
        Some(bad) => Err(bad.clone()),
        None => Ok(()),
    }
}

/// Resolve one named placement for two tasks.
pub fn resolve(name: &str, p: &ProbeDoc) -> Result<Resolved, NotApplicable> {
    let topo = Topo::new(p);
    if name == "os" {
        return Ok(Resolved {
            name: "os".into(),
            cpus: None,
            why: format!(
                "not pinned: the scheduler chooses among CPUs [{}]",
                crate::probe::cpulist::format_list(topo.usable())
            ),
        });
    }
    let rel = relation_from_name(name).ok_or_else(|| NotApplicable {
        name: name.into(),
        reason: "unknown placement".into(),
    })?;
    match topo.first_pair(rel) {
        Some(pair) => Ok(Resolved {
            name: name.into(),
            cpus: Some(pair),
            why: describe(&topo, pair, rel),
        }),
        None => Err(NotApplicable {
            name: name.into(),
            reason: topo.absent_reason(rel),
        }),
    }
}

fn describe(topo: &Topo, [a, b]: [u32; 2], rel: Relation) -> String {
    let t = &topo.p.topology;
    let list = |v: &[u32]| crate::probe::cpulist::format_list(v);
    match rel {
        Relation::SameCpu => format!("both tasks on CPU {a}"),
        Relation::SmtSibling => format!(
            "CPUs {a} and {b}: SMT siblings of core [{}]",
            list(topo.core_of(a).unwrap())
        ),
        Relation::SameLlc => format!(
            "CPUs {a} and {b}: different cores sharing the L{} [{}]",
            t.llc_level.unwrap_or(0),
            list(t.llc_of(a).unwrap())
        ),
        Relation::CrossLlc => format!("CPUs {a} and {b}: same package, different LLCs"),
        Relation::CrossPackage => format!(
            "CPUs {a} and {b}: packages {} and {}",
            topo.package_of(a).unwrap_or(-1),
            topo.package_of(b).unwrap_or(-1)
        ),
        Relation::CrossNode => format!(
            "CPUs {a} and {b}: NUMA nodes {} and {}",
            topo.node_of(a).unwrap_or(0),
            topo.node_of(b).unwrap_or(0)
        ),
    }
}

/// An explicit CPU pair (`--cpus A,B`), checked against the usable CPUs.
pub fn explicit(cpus: &[u32], p: &ProbeDoc) -> Result<Resolved, String> {
    let topo = Topo::new(p);
    let pair: [u32; 2] = match cpus {
        [a] => [*a, *a],
        [a, b] => [*a, *b],
        _ => return Err(format!("--cpus takes one or two CPUs, got {}", cpus.len())),
    };
    for c in pair {
        if !topo.usable().contains(&c) {
            return Err(format!(
                "CPU {c} is not usable here (usable: [{}])",
                crate::probe::cpulist::format_list(topo.usable())
            ));
        }
    }
    let rel = topo.relation(pair[0], pair[1]);
    Ok(Resolved {
        name: "cpus".into(),
        cpus: Some(pair),
        why: format!("explicit: {}", describe(&topo, pair, rel)),
    })
}

/// Resolve a list of placement names: the applicable ones in the order of `NAMES`, and
/// the others with their reasons.
pub fn resolve_all(names: &[String], p: &ProbeDoc) -> (Vec<Resolved>, Vec<NotApplicable>) {
    let mut ok = Vec::new();
    let mut na = Vec::new();
    for n in NAMES.iter().filter(|n| names.iter().any(|x| x == *n)) {
        match resolve(n, p) {
            Ok(r) => match ok
                .iter()
                .find(|o: &&Resolved| o.cpus.is_some() && o.cpus == r.cpus)
            {
                // Packages that are NUMA nodes give cross-package and cross-node one pair.
                Some(earlier) => na.push(NotApplicable {
                    name: r.name.clone(),
                    reason: format!("same CPUs as {} ({})", earlier.name, r.why),
                }),
                None => ok.push(r),
            },
            Err(e) => na.push(e),
        }
    }
    (ok, na)
}

/// The usable CPUs as a tree: NUMA node > LLC group > core > CPU, each level in ascending
/// order of its first CPU.
fn cpu_tree(p: &ProbeDoc) -> Vec<Vec<Vec<Vec<u32>>>> {
    let topo = Topo::new(p);
    let usable = topo.usable();
    let mut nodes: Vec<Vec<Vec<Vec<u32>>>> = Vec::new();
    let mut node_ids: Vec<Option<u32>> = Vec::new();
    for &cpu in usable {
        let node = topo.node_of(cpu);
        let ni = node_ids.iter().position(|n| *n == node).unwrap_or_else(|| {
            node_ids.push(node);
            nodes.push(Vec::new());
            nodes.len() - 1
        });
        let llc = p.topology.llc_of(cpu).cloned().unwrap_or_else(|| vec![cpu]);
        let core = topo.core_of(cpu).cloned().unwrap_or_else(|| vec![cpu]);
        let groups = &mut nodes[ni];
        let gi = match groups
            .iter()
            .position(|g| g.iter().flatten().any(|c| llc.contains(c)))
        {
            Some(i) => i,
            None => {
                groups.push(Vec::new());
                groups.len() - 1
            }
        };
        let cores = &mut groups[gi];
        match cores
            .iter_mut()
            .find(|c| c.iter().any(|x| core.contains(x)))
        {
            Some(c) => c.push(cpu),
            None => cores.push(vec![cpu]),
        }
    }
    nodes
}

fn interleave<T: Clone>(lists: Vec<Vec<T>>) -> Vec<T> {
    let longest = lists.iter().map(Vec::len).max().unwrap_or(0);
    (0..longest)
        .flat_map(|i| lists.iter().filter_map(move |l| l.get(i).cloned()))
        .collect()
}

/// Thread placement `compact`: fill a core's SMT siblings, then the cores of one LLC, then
/// the next LLC, then the next node. The first t CPUs hold t threads.
pub fn compact_order(p: &ProbeDoc) -> Vec<u32> {
    cpu_tree(p)
        .into_iter()
        .flatten()
        .flatten()
        .flatten()
        .collect()
}

/// The usable CPUs by LLC group, each with its NUMA node (None where the probe has no
/// node for it), in ascending order of the group's first CPU within each node.
pub fn llc_groups(p: &ProbeDoc) -> Vec<(Option<u32>, Vec<u32>)> {
    let topo = Topo::new(p);
    cpu_tree(p)
        .into_iter()
        .flatten()
        .map(|cores| {
            let cpus: Vec<u32> = cores.into_iter().flatten().collect();
            (cpus.first().and_then(|c| topo.node_of(*c)), cpus)
        })
        .collect()
}

/// Thread placement `spread`: one thread per node, then per LLC, then per core, before any
/// second SMT sibling (round-robin at every level).
pub fn spread_order(p: &ProbeDoc) -> Vec<u32> {
    let nodes: Vec<Vec<u32>> = cpu_tree(p)
        .into_iter()
        .map(|groups| {
            let groups: Vec<Vec<u32>> = groups
                .into_iter()
                .map(|cores| {
                    // Every core's first thread before any core's second.
                    interleave(cores)
                })
                .collect();
            interleave(groups)
        })
        .collect();
    interleave(nodes)
}

/// One case a benchmark would run, and where (what `truebench plan` prints and what
/// `run` does: both take it from the benchmark's own planning functions).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Planned {
    pub benchmark: String,
    /// The case: a placement name, `threads=4 spread`, `copies=8`, `node0 -> node1 memory`.
    pub case: String,
    /// The CPUs its tasks are pinned to, in task order; None when the scheduler places them.
    pub cpus: Option<Vec<u32>>,
    /// The topology relation or rule that chose them, in words.
    pub why: String,
    /// Why the case cannot run here, when it cannot (it is then a skipped case).
    pub skipped: Option<String>,
}

impl Planned {
    pub fn run(
        benchmark: &str,
        case: impl Into<String>,
        cpus: Option<Vec<u32>>,
        why: impl Into<String>,
    ) -> Self {
        Planned {
            benchmark: benchmark.into(),
            case: case.into(),
            cpus,
            why: why.into(),
            skipped: None,
        }
    }

    pub fn skip(benchmark: &str, case: impl Into<String>, reason: impl Into<String>) -> Self {
        Planned {
            benchmark: benchmark.into(),
            case: case.into(),
            cpus: None,
            why: String::new(),
            skipped: Some(reason.into()),
        }
    }
}

/// Pin the calling thread to one CPU and verify it runs there. Only raw system calls: safe
/// in a child between fork and exit. False when the CPU cannot be set (or is >= 1024).
pub fn pin_raw(cpu: u32) -> bool {
    if cpu as usize >= libc::CPU_SETSIZE as usize {
        return false;
    }
    // SAFETY: a zeroed cpu_set_t is a valid empty set; the calls take valid pointers.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu as usize, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return false;
        }
        // The kernel moves the thread at its next scheduling point; yield until it is there.
        for _ in 0..1000 {
            if libc::sched_getcpu() == cpu as i32 {
                return true;
            }
            libc::sched_yield();
        }
    }
    false
}

/// Pin the calling thread to one CPU and verify it (see `pin_raw`), with the reason on failure.
pub fn pin_current_thread(cpu: u32) -> Result<(), String> {
    if pin_raw(cpu) {
        Ok(())
    } else {
        Err(format!(
            "could not pin a task to CPU {cpu} (sched_setaffinity refused, or the task did not move there)"
        ))
    }
}

/// Confine the calling thread to a set of CPUs (one NUMA node's, say).
pub fn confine_current_thread(cpus: &[u32]) -> Result<(), String> {
    let mut set = nix::sched::CpuSet::new();
    for c in cpus {
        set.set(*c as usize)
            .map_err(|e| format!("CPU {c} out of range: {e}"))?;
    }
    nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), &set)
        .map_err(|e| format!("sched_setaffinity to CPUs {cpus:?}: {e}"))
}

/// The CPU the calling thread runs on now (getcpu through the vDSO: tens of ns).
pub fn current_cpu() -> Option<u32> {
    // SAFETY: sched_getcpu has no preconditions.
    let c = unsafe { libc::sched_getcpu() };
    (c >= 0).then_some(c as u32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::fixture;

    #[test]
    fn relations_follow_the_topology_not_the_numbering() {
        let p = fixture("two-socket-smt");
        let t = Topo::new(&p);
        assert_eq!(t.relation(0, 20), Relation::SmtSibling);
        assert_eq!(t.relation(0, 1), Relation::SameLlc);
        assert_eq!(t.relation(0, 10), Relation::CrossNode);
        let e = fixture("epyc-multi-llc-2node");
        let t = Topo::new(&e);
        assert_eq!(t.relation(0, 16), Relation::SmtSibling);
        assert_eq!(t.relation(0, 4), Relation::CrossLlc);
        assert_eq!(t.relation(0, 8), Relation::CrossNode);
    }

    #[test]
    fn explicit_pairs_are_checked_against_usable_cpus() {
        let p = fixture("container-quota");
        assert!(explicit(&[0, 5], &p).is_ok());
        assert!(explicit(&[0, 9], &p).unwrap_err().contains("not usable"));
        assert!(explicit(&[0, 1, 2], &p).is_err());
        assert_eq!(explicit(&[3], &p).unwrap().cpus, Some([3, 3]));
    }

    #[test]
    fn compact_fills_siblings_and_llcs_first_spread_goes_wide() {
        let p = fixture("two-socket-smt");
        let c = compact_order(&p);
        assert_eq!(&c[..4], &[0, 20, 1, 21]);
        let s = spread_order(&p);
        assert_eq!(
            &s[..4],
            &[0, 10, 1, 11],
            "one per node first, then per core"
        );
        assert_eq!(s.len(), 40);
        let e = fixture("epyc-multi-llc-2node");
        // Node 0 then node 1, and within a node LLC groups alternate.
        assert_eq!(&spread_order(&e)[..4], &[0, 8, 4, 12]);
        assert_eq!(&compact_order(&e)[..3], &[0, 16, 1]);
        let mut all = spread_order(&e);
        all.sort();
        assert_eq!(all, (0..32).collect::<Vec<u32>>());
    }

    #[test]
    fn unknown_names_are_caught() {
        assert_eq!(
            check_names(&["same-cpu".into(), "sideways".into()]),
            Err("sideways".into())
        );
        assert!(check_names(&["os".into()]).is_ok());
    }
}
