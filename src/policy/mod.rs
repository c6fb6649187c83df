//! Execution policies: where a workload runs (placement), in which scheduling class, with
//! which memory policy and under which capacity (CPU quota x cpuset width). One type,
//! [`Policy`], one parser (`FromStr`, the `--policy` syntax of `loadstep` and
//! `experiment`), resolved against the probed machine in `resolve.rs` (the CPUs and memory
//! nodes of each instance, or why the variant cannot exist here) and applied in one place,
//! `apply.rs` (to a process truebench launches, or to a worker thread of its own).
//!
//! Syntax: aspects joined by `+`, each at most once, e.g. `pinned+fifo:10+local`,
//! `compact:2`, `nice:10`, `per-node+bind`, `cap:1.5/2`.
//! - placement: `os`, `compact[:N]`, `spread[:N]`, `per-node`, `per-llc`, `pinned`;
//! - class: `other`, `batch`, `idle`, `fifo:PRIO`, `rr:PRIO` (1-99), `nice:N` (-20..19);
//! - memory: `local`, `bind`, `interleave`, `preferred`;
//! - capacity: `cap:QUOTA/WIDTH[@PERIOD]` (CPUs of quota / CPUs in the cpuset, the quota's
//!   period, default 100 ms; root).

pub mod apply;
pub mod launch;
pub mod resolve;
pub mod setting;
pub mod sides;

use crate::loadstep::capacity::{self, Setting};
use std::fmt;
use std::str::FromStr;

/// Where the workload's threads run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// The scheduler places them.
    Os,
    /// Packed on the fewest cores and LLCs: the first N CPUs of the compact order (None:
    /// as many as there are workers).
    Compact(Option<usize>),
    /// Across nodes, LLCs and cores: the first N CPUs of the spread order.
    Spread(Option<usize>),
    /// Confined to one NUMA node's CPUs with its memory there (one node per instance).
    PerNode,
    /// Confined to one LLC group's CPUs with its memory on that group's node.
    PerLlc,
    /// Each thread bound to its own CPU, round-robin over the spread order, re-applied as
    /// new threads appear (pbind).
    Pinned,
}

/// The scheduling class of every thread of the workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    Other,
    Batch,
    Idle,
    /// SCHED_FIFO at a fixed priority (1-99): the model of priocntl's FX class.
    Fifo(u8),
    Rr(u8),
    /// SCHED_OTHER at this nice value.
    Nice(i8),
}

/// The memory policy of the launched process (set_mempolicy before exec).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Memory {
    /// MPOL_LOCAL: on the node of the CPU that allocates.
    Local,
    /// MPOL_BIND to the nodes of the placement.
    Bind,
    /// MPOL_INTERLEAVE over the nodes of the placement.
    Interleave,
    /// MPOL_PREFERRED: the first node of the placement, others when it is full.
    Preferred,
}

/// One variant of an experiment: placement, and optionally a class, a memory policy and a
/// capacity setting (absent: inherited from truebench).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Policy {
    pub placement: Placement,
    pub class: Option<Class>,
    pub memory: Option<Memory>,
    pub capacity: Option<Setting>,
}

impl Policy {
    /// The scheduler's placement, nothing changed.
    pub const OS: Policy = Policy {
        placement: Placement::Os,
        class: None,
        memory: None,
        capacity: None,
    };

    /// This policy under a capacity setting.
    pub fn with_capacity(mut self, c: Setting) -> Policy {
        self.capacity = Some(c);
        self
    }

    /// Whether the policy needs a privilege this process lacks, and which: checked before
    /// anything starts (exit 2).
    pub fn missing_privilege(&self) -> Option<String> {
        let root = nix::unistd::geteuid().is_root();
        if let Some(Class::Fifo(p) | Class::Rr(p)) = self.class {
            if !root && rlimit(libc::RLIMIT_RTPRIO) < p as u64 {
                return Some(format!(
                    "{self}: a real-time class needs root or CAP_SYS_NICE (RLIMIT_RTPRIO is {} here, priority {p} asked)",
                    rlimit(libc::RLIMIT_RTPRIO)
                ));
            }
        }
        if let Some(Class::Nice(n)) = self.class {
            // RLIMIT_NICE allows nice values down to 20 - limit.
            if n < 0 && !root && 20 - (rlimit(libc::RLIMIT_NICE) as i64) > n as i64 {
                return Some(format!(
                    "{self}: a negative nice value needs root or CAP_SYS_NICE"
                ));
            }
        }
        if self.capacity.is_some() && !root {
            return Some(format!(
                "{self}: capacity settings create cgroups: run as root"
            ));
        }
        None
    }
}

fn rlimit(which: libc::__rlimit_resource_t) -> u64 {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct we own.
    if unsafe { libc::getrlimit(which, &mut r) } != 0 {
        return 0;
    }
    r.rlim_cur
}

impl fmt::Display for Placement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Placement::Os => write!(f, "os"),
            Placement::Compact(None) => write!(f, "compact"),
            Placement::Compact(Some(n)) => write!(f, "compact:{n}"),
            Placement::Spread(None) => write!(f, "spread"),
            Placement::Spread(Some(n)) => write!(f, "spread:{n}"),
            Placement::PerNode => write!(f, "per-node"),
            Placement::PerLlc => write!(f, "per-llc"),
            Placement::Pinned => write!(f, "pinned"),
        }
    }
}

impl fmt::Display for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Class::Other => write!(f, "other"),
            Class::Batch => write!(f, "batch"),
            Class::Idle => write!(f, "idle"),
            Class::Fifo(p) => write!(f, "fifo:{p}"),
            Class::Rr(p) => write!(f, "rr:{p}"),
            Class::Nice(n) => write!(f, "nice:{n}"),
        }
    }
}

impl fmt::Display for Memory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Memory::Local => "local",
            Memory::Bind => "bind",
            Memory::Interleave => "interleave",
            Memory::Preferred => "preferred",
        })
    }
}

/// The canonical name: the aspects given, `+`-joined; `os` alone when nothing is set.
/// Parsing the name gives the same policy back.
impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        let rest = self.class.is_some() || self.memory.is_some() || self.capacity.is_some();
        if self.placement != Placement::Os || !rest {
            parts.push(self.placement.to_string());
        }
        parts.extend(self.class.map(|c| c.to_string()));
        parts.extend(self.memory.map(|m| m.to_string()));
        parts.extend(self.capacity.map(|c| format!("cap:{}", c.spec())));
        f.write_str(&parts.join("+"))
    }
}

/// The syntax, for error messages and --help.
pub const SYNTAX: &str = "placement os|compact[:N]|spread[:N]|per-node|per-llc|pinned, class other|batch|idle|fifo:PRIO|rr:PRIO|nice:N, memory local|bind|interleave|preferred, capacity cap:QUOTA/WIDTH[@PERIOD]; joined by + (e.g. pinned+fifo:10)";

fn count(what: &str, v: &str) -> Result<usize, String> {
    match v.parse::<usize>() {
        Ok(n) if (1..=65_536).contains(&n) => Ok(n),
        _ => Err(format!("{what}:{v}: N is a number of CPUs from 1")),
    }
}

fn rt_prio(what: &str, v: &str) -> Result<u8, String> {
    match v.parse::<u8>() {
        Ok(p) if (1..=99).contains(&p) => Ok(p),
        _ => Err(format!("{what}:{v}: a real-time priority is 1 to 99")),
    }
}

impl FromStr for Policy {
    type Err = String;

    fn from_str(s: &str) -> Result<Policy, String> {
        let mut placement = None;
        let mut p = Policy::OS;
        let twice = |what: &str| format!("'{s}' gives the {what} twice");
        for aspect in s.split('+').map(str::trim) {
            let (word, value) = match aspect.split_once(':') {
                Some((w, v)) => (w, Some(v)),
                None => (aspect, None),
            };
            let place = |x: Placement, placement: &mut Option<Placement>| {
                if placement.replace(x).is_some() {
                    Err(twice("placement"))
                } else {
                    Ok(())
                }
            };
            let class = |x: Class, p: &mut Policy| {
                if p.class.replace(x).is_some() {
                    Err(twice("scheduling class"))
                } else {
                    Ok(())
                }
            };
            let memory = |x: Memory, p: &mut Policy| {
                if p.memory.replace(x).is_some() {
                    Err(twice("memory policy"))
                } else {
                    Ok(())
                }
            };
            match (word, value) {
                ("os", None) => place(Placement::Os, &mut placement)?,
                ("compact", v) => place(
                    Placement::Compact(v.map(|v| count(word, v)).transpose()?),
                    &mut placement,
                )?,
                ("spread", v) => place(
                    Placement::Spread(v.map(|v| count(word, v)).transpose()?),
                    &mut placement,
                )?,
                ("per-node", None) => place(Placement::PerNode, &mut placement)?,
                ("per-llc", None) => place(Placement::PerLlc, &mut placement)?,
                ("pinned", None) => place(Placement::Pinned, &mut placement)?,
                ("other", None) => class(Class::Other, &mut p)?,
                ("batch", None) => class(Class::Batch, &mut p)?,
                ("idle", None) => class(Class::Idle, &mut p)?,
                ("fifo", Some(v)) => class(Class::Fifo(rt_prio(word, v)?), &mut p)?,
                ("rr", Some(v)) => class(Class::Rr(rt_prio(word, v)?), &mut p)?,
                ("nice", Some(v)) => match v.parse::<i8>() {
                    Ok(n) if (-20..=19).contains(&n) => class(Class::Nice(n), &mut p)?,
                    _ => return Err(format!("nice:{v}: a nice value is -20 to 19")),
                },
                ("local", None) => memory(Memory::Local, &mut p)?,
                ("bind", None) => memory(Memory::Bind, &mut p)?,
                ("interleave", None) => memory(Memory::Interleave, &mut p)?,
                ("preferred", None) => memory(Memory::Preferred, &mut p)?,
                ("cap", Some(v)) => {
                    let c = capacity::parse_setting(v).map_err(|e| format!("cap:{v}: {e}"))?;
                    if p.capacity.replace(c).is_some() {
                        return Err(twice("capacity"));
                    }
                }
                ("fifo" | "rr" | "nice" | "cap", None) => {
                    return Err(format!("'{aspect}' needs a value ({SYNTAX})"))
                }
                _ => return Err(format!("unknown policy '{aspect}' ({SYNTAX})")),
            }
        }
        p.placement = placement.unwrap_or(Placement::Os);
        Ok(p)
    }
}

/// A `--policy` value for clap.
pub fn parse(s: &str) -> Result<Policy, String> {
    s.parse()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_aspect_parses_and_prints_back() {
        for s in [
            "os",
            "compact",
            "compact:1",
            "spread:4",
            "per-node",
            "per-llc",
            "pinned",
            "nice:10",
            "nice:-5",
            "fifo:10",
            "rr:99",
            "batch",
            "idle",
            "other",
            "pinned+fifo:10",
            "per-node+bind",
            "interleave",
            "compact:2+batch+preferred+cap:1.5/2",
            "cap:0.4/1@5ms",
        ] {
            let p: Policy = s.parse().unwrap_or_else(|e| panic!("{s}: {e}"));
            assert_eq!(p.to_string(), s);
            assert_eq!(p.to_string().parse::<Policy>().unwrap(), p);
        }
        let p: Policy = "fifo:10+pinned".parse().unwrap();
        assert_eq!(p.placement, Placement::Pinned);
        assert_eq!(p.class, Some(Class::Fifo(10)));
    }

    #[test]
    fn bad_policies_are_refused_with_the_reason() {
        for (s, says) in [
            ("fifo:0", "1 to 99"),
            ("rr:100", "1 to 99"),
            ("fifo", "needs a value"),
            ("nice:20", "-20 to 19"),
            ("compact:0", "number of CPUs"),
            ("os+pinned", "placement twice"),
            ("nice:1+batch", "class twice"),
            ("cap:0/1", "quota"),
            ("cap:1", "QUOTA/WIDTH"),
            ("cap:1/0", "width"),
            ("cap:1/1@500us", "1 ms to 1 s"),
            ("cap:0.1/1@5ms", "1000 µs per 5 ms period"),
            ("fast", "unknown policy"),
            ("", "unknown policy"),
        ] {
            let e = s.parse::<Policy>().unwrap_err();
            assert!(e.contains(says), "{s}: {e}");
        }
    }

    #[test]
    fn privileges_are_asked_for_what_needs_them_only() {
        let root = nix::unistd::geteuid().is_root();
        let p = |s: &str| s.parse::<Policy>().unwrap().missing_privilege();
        assert!(p("os").is_none());
        assert!(p("nice:10").is_none());
        assert!(p("batch+pinned").is_none());
        assert_eq!(p("cap:1/1").is_some(), !root);
        if root {
            assert!(p("fifo:10").is_none());
        }
    }
}
