//! The one place a policy is applied. To a process truebench launches: everything is
//! prepared in the parent ([`Prepared`]), and the child, between fork and exec, only makes
//! raw system calls (its own process group, death with truebench, the capacity cgroup, CPU
//! affinity, set_mempolicy, scheduling class), so the command starts under the policy with
//! no instant outside it. `pinned` then binds each new thread of the process tree to its
//! own CPU ([`Pinner`]). To truebench's own worker threads: [`current_thread`].
//! The kernel's real-time throttling settings are read here too ([`RtThrottling`]).

use super::resolve::Instance;
use super::{Class, Memory, Policy};
use crate::loadstep::capacity::Group;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::ffi::CString;
use std::os::unix::process::CommandExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

const MPOL_PREFERRED: libc::c_long = 1;
const MPOL_BIND: libc::c_long = 2;
const MPOL_INTERLEAVE: libc::c_long = 3;
const MPOL_LOCAL: libc::c_long = 4;
/// Bits of the node masks passed to set_mempolicy.
const MASK_WORDS: usize = 16;

/// Why `call` (mbind, set_mempolicy) failed with ENOSYS: the kernel has no NUMA memory
/// policies (built without CONFIG_NUMA; qemu-user answers the same), so memory cannot be
/// bound or given a policy there.
pub fn no_memory_policies(call: &str) -> String {
    format!(
        "{call}: this kernel has no NUMA memory policies (ENOSYS: built without CONFIG_NUMA, \
         or emulated by qemu-user), so memory cannot be bound or given a policy here"
    )
}

/// Whether this kernel offers NUMA memory policies: get_mempolicy, which changes nothing,
/// answers. Err: the reason ([`no_memory_policies`] for ENOSYS).
pub fn memory_policies() -> Result<(), String> {
    // SAFETY: get_mempolicy with null mode and mask pointers and no flags writes nothing.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_get_mempolicy,
            std::ptr::null_mut::<libc::c_int>(),
            std::ptr::null_mut::<libc::c_ulong>(),
            0 as libc::c_ulong,
            std::ptr::null_mut::<libc::c_void>(),
            0 as libc::c_ulong,
        )
    };
    if rc == 0 {
        return Ok(());
    }
    let e = std::io::Error::last_os_error();
    Err(match e.raw_os_error() {
        Some(libc::ENOSYS) => no_memory_policies("get_mempolicy"),
        _ => format!("get_mempolicy: {e}"),
    })
}

/// The kernel's real-time throttling: real-time tasks may use `runtime_us` of every
/// `period_us` on each CPU (-1: unlimited); the rest is kept for the other classes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RtThrottling {
    pub runtime_us: Option<i64>,
    pub period_us: Option<i64>,
    /// In words: "real-time tasks get at most 95% of each CPU (950000 µs per 1000000 µs)".
    pub note: String,
}

impl RtThrottling {
    pub fn read() -> RtThrottling {
        let num = |f: &str| -> Option<i64> {
            std::fs::read_to_string(format!("/proc/sys/kernel/{f}"))
                .ok()?
                .trim()
                .parse()
                .ok()
        };
        let (runtime_us, period_us) = (num("sched_rt_runtime_us"), num("sched_rt_period_us"));
        let note = match (runtime_us, period_us) {
            (Some(-1), _) => "real-time throttling is off (sched_rt_runtime_us -1): a spinning real-time thread can starve its CPU".into(),
            (Some(r), Some(p)) if p > 0 => format!(
                "real-time tasks get at most {:.0}% of each CPU ({r} µs per {p} µs period): beyond that they are throttled",
                r as f64 * 100.0 / p as f64
            ),
            _ => "sched_rt_runtime_us / sched_rt_period_us could not be read".into(),
        };
        RtThrottling {
            runtime_us,
            period_us,
            note,
        }
    }
}

/// A policy made ready for a child: only plain data, used between fork and exec.
pub struct Prepared {
    affinity: Option<libc::cpu_set_t>,
    mempolicy: Option<(libc::c_long, [u64; MASK_WORDS])>,
    class: Option<Class>,
    /// `cgroup.procs` files the child writes "0" to (joins), in order.
    cgroup_files: Vec<CString>,
}

fn cpu_set(cpus: &[u32]) -> Result<libc::cpu_set_t, String> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for c in cpus {
        if *c as usize >= libc::CPU_SETSIZE as usize {
            return Err(format!(
                "CPU {c} is beyond the {} a CPU set holds",
                libc::CPU_SETSIZE
            ));
        }
        // SAFETY: the CPU is within the set's size (checked above).
        unsafe { libc::CPU_SET(*c as usize, &mut set) };
    }
    Ok(set)
}

fn node_mask(nodes: &[u32]) -> Result<[u64; MASK_WORDS], String> {
    let mut mask = [0u64; MASK_WORDS];
    for n in nodes {
        if *n as usize >= MASK_WORDS * 64 {
            return Err(format!("NUMA node {n} out of range"));
        }
        mask[*n as usize / 64] |= 1 << (n % 64);
    }
    Ok(mask)
}

fn mempolicy(
    memory: Option<Memory>,
    nodes: Option<&[u32]>,
) -> Result<Option<(libc::c_long, [u64; MASK_WORDS])>, String> {
    let mode = match (memory, nodes) {
        (Some(Memory::Local), _) => return Ok(Some((MPOL_LOCAL, [0; MASK_WORDS]))),
        (Some(Memory::Preferred), Some(_)) => MPOL_PREFERRED,
        (Some(Memory::Interleave), Some(_)) => MPOL_INTERLEAVE,
        // A partition's memory (per-node, per-llc) is bound there unless told otherwise.
        (Some(Memory::Bind) | None, Some(_)) => MPOL_BIND,
        _ => return Ok(None),
    };
    Ok(Some((mode, node_mask(nodes.unwrap_or_default())?)))
}

impl Prepared {
    /// Prepare `policy` for one instance, joining `group` (the capacity cgroup) if any.
    pub fn new(policy: &Policy, at: &Instance, group: Option<&Group>) -> Result<Prepared, String> {
        let first_pin = at
            .pin_order
            .as_ref()
            .and_then(|o| o.first())
            .map(|c| vec![*c]);
        let affinity = match first_pin.as_ref().or(at.cpus.as_ref()) {
            Some(c) => Some(cpu_set(c)?),
            None => None,
        };
        let cgroup_files = group
            .map(|g| g.procs_files())
            .unwrap_or_default()
            .into_iter()
            .map(|p| CString::new(p.into_os_string().into_encoded_bytes()))
            .collect::<Result<_, _>>()
            .map_err(|_| "a cgroup path holds a NUL byte".to_string())?;
        let mempolicy = mempolicy(policy.memory, at.memory_nodes.as_deref())?;
        // Refused here, in one line, rather than as a bare ENOSYS from the spawn.
        if mempolicy.is_some() {
            memory_policies().map_err(|why| format!("memory policy of {policy}: {why}"))?;
        }
        Ok(Prepared {
            affinity,
            mempolicy,
            class: policy.class,
            cgroup_files,
        })
    }

    /// In the child between fork and exec: raw system calls only. The first failure ends
    /// the spawn with its errno.
    fn apply_in_child(&self) -> std::io::Result<()> {
        let fail = || Err(std::io::Error::last_os_error());
        // SAFETY: each call takes plain values or pointers to data this struct owns, and
        // none allocates: they are async-signal-safe.
        unsafe {
            // Its own process group (stopped as a whole), killed if truebench dies.
            if libc::setpgid(0, 0) != 0 || libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return fail();
            }
            for f in &self.cgroup_files {
                let fd = libc::open(f.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
                if fd < 0 {
                    return fail();
                }
                let ok = libc::write(fd, b"0".as_ptr().cast(), 1) == 1;
                libc::close(fd);
                if !ok {
                    return fail();
                }
            }
            if let Some(set) = &self.affinity {
                if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), set) != 0 {
                    return fail();
                }
            }
            if let Some((mode, mask)) = &self.mempolicy {
                let (ptr, bits) = if *mode == MPOL_LOCAL {
                    (std::ptr::null(), 0)
                } else {
                    (mask.as_ptr(), (MASK_WORDS * 64) as libc::c_ulong)
                };
                if libc::syscall(libc::SYS_set_mempolicy, *mode, ptr, bits) != 0 {
                    return fail();
                }
            }
        }
        if let Some(c) = self.class {
            set_class(c).map_err(std::io::Error::from_raw_os_error)?;
        }
        Ok(())
    }
}

/// Put the calling thread in scheduling class `c`; Err is the errno. Raw calls only.
fn set_class(c: Class) -> Result<(), i32> {
    let (policy, prio, nice) = match c {
        Class::Other => (libc::SCHED_OTHER, 0, None),
        Class::Batch => (libc::SCHED_BATCH, 0, None),
        Class::Idle => (libc::SCHED_IDLE, 0, None),
        Class::Fifo(p) => (libc::SCHED_FIFO, p as i32, None),
        Class::Rr(p) => (libc::SCHED_RR, p as i32, None),
        Class::Nice(n) => (libc::SCHED_OTHER, 0, Some(n as i32)),
    };
    let param = libc::sched_param {
        sched_priority: prio,
    };
    // SAFETY: plain values and a pointer to a local; the calls apply to the calling thread.
    unsafe {
        if libc::sched_setscheduler(0, policy, &param) != 0 {
            return Err(*libc::__errno_location());
        }
        if let Some(n) = nice {
            if libc::setpriority(libc::PRIO_PROCESS, 0, n) != 0 {
                return Err(*libc::__errno_location());
            }
        }
    }
    Ok(())
}

/// Make `cmd` start under the prepared policy.
pub fn install(cmd: &mut Command, prepared: Prepared) {
    // SAFETY: the hook only makes raw system calls on data prepared before the fork.
    unsafe {
        cmd.pre_exec(move || prepared.apply_in_child());
    }
}

use std::process::Command;

/// Apply a policy's class (and memory policy, over `memory_nodes`) to the calling thread
/// (a load-step worker); its CPUs are placed by the caller.
pub fn current_thread(policy: &Policy, memory_nodes: Option<&[u32]>) -> Result<(), String> {
    if let Some((mode, mask)) = mempolicy(policy.memory, memory_nodes)? {
        let (ptr, bits) = if mode == MPOL_LOCAL {
            (std::ptr::null(), 0)
        } else {
            (mask.as_ptr(), (MASK_WORDS * 64) as libc::c_ulong)
        };
        // SAFETY: set_mempolicy with a mask we own.
        if unsafe { libc::syscall(libc::SYS_set_mempolicy, mode, ptr, bits) } != 0 {
            let e = std::io::Error::last_os_error();
            return Err(match e.raw_os_error() {
                Some(libc::ENOSYS) => {
                    format!(
                        "memory policy of {policy}: {}",
                        no_memory_policies("set_mempolicy")
                    )
                }
                _ => format!("set_mempolicy for {policy}: {e}"),
            });
        }
    }
    if let Some(c) = policy.class {
        set_class(c).map_err(|e| {
            format!(
                "scheduling class {c}: {}",
                nix::errno::Errno::from_raw(e).desc()
            )
        })?;
    }
    Ok(())
}

/// `pinned`: binds each thread of a process tree, as it appears, to the next CPU of an
/// order (round-robin), every 10 ms until dropped.
pub struct Pinner {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<usize>>,
}

impl Pinner {
    /// Start binding the threads of `root`'s tree; the root's first thread already runs
    /// on `order[0]` (set before exec).
    pub fn start(root: i32, order: Vec<u32>) -> Pinner {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            let mut seen: BTreeSet<i32> = BTreeSet::from([root]);
            let mut next = 1;
            while !flag.load(Ordering::Relaxed) {
                for pid in crate::observe::process::tree(root) {
                    for tid in crate::observe::process::threads(pid) {
                        if seen.insert(tid) {
                            let mut set = nix::sched::CpuSet::new();
                            if set.set(order[next % order.len()] as usize).is_ok() {
                                // A thread gone meanwhile is nothing to bind.
                                let _ = nix::sched::sched_setaffinity(
                                    nix::unistd::Pid::from_raw(tid),
                                    &set,
                                );
                            }
                            next += 1;
                        }
                    }
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            seen.len()
        });
        Pinner {
            stop,
            thread: Some(thread),
        }
    }

    /// Stop; how many threads were bound.
    pub fn finish(mut self) -> usize {
        self.halt()
    }

    fn halt(&mut self) -> usize {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.take().and_then(|t| t.join().ok()).unwrap_or(0)
    }
}

impl Drop for Pinner {
    fn drop(&mut self) {
        self.halt();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn throttling_is_read_and_said() {
        let t = RtThrottling::read();
        assert!(t.runtime_us.is_some() && t.period_us.is_some(), "{t:?}");
        assert!(
            t.note.contains("µs") || t.note.contains("off"),
            "{}",
            t.note
        );
    }

    /// With memory policies (a NUMA kernel) the child starts under all three; without them
    /// (ENOSYS: a kernel without CONFIG_NUMA, qemu-user) the memory policy is refused in one
    /// line before anything starts, and placement and class still apply.
    #[test]
    fn a_child_starts_under_its_placement_class_and_memory_policy() {
        let cpu = crate::placement::current_cpu().unwrap_or(0);
        let at = Instance {
            cpus: Some(vec![cpu]),
            pin_order: None,
            memory_nodes: None,
            partition: "test".into(),
        };
        let mut p: Policy = "compact:1+batch+local".parse().unwrap();
        if let Err(why) = memory_policies() {
            assert!(
                why.contains("ENOSYS"),
                "get_mempolicy failed otherwise: {why}"
            );
            let refused = Prepared::new(&p, &at, None).err().expect("refused");
            assert!(
                refused.contains("no NUMA memory policies") && refused.contains("local"),
                "{refused}"
            );
            let thread = current_thread(&p, None).expect_err("refused");
            assert!(thread.contains("no NUMA memory policies"), "{thread}");
            p = "compact:1+batch".parse().unwrap();
        }
        let mut cmd = Command::new("/bin/sh");
        cmd.args([
            "-c",
            "grep Cpus_allowed_list /proc/self/status; awk '{print $41}' /proc/self/stat; cat /proc/self/numa_maps 2>/dev/null | head -1",
        ]);
        install(&mut cmd, Prepared::new(&p, &at, None).unwrap());
        let out = String::from_utf8(cmd.output().unwrap().stdout).unwrap();
        let mut lines = out.lines();
        assert_eq!(
            lines.next().unwrap().split_whitespace().last().unwrap(),
            cpu.to_string()
        );
        // Field 41 of stat is the scheduling policy: 3 is SCHED_BATCH.
        assert_eq!(lines.next().unwrap().trim(), "3");
    }

    #[test]
    fn a_policy_the_kernel_refuses_fails_the_spawn() {
        let at = Instance {
            cpus: Some(vec![1000]),
            pin_order: None,
            memory_nodes: None,
            partition: "test".into(),
        };
        let mut cmd = Command::new("/bin/true");
        install(&mut cmd, Prepared::new(&Policy::OS, &at, None).unwrap());
        let e = cmd.status().unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EINVAL), "{e}");
    }
}
