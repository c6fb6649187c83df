//! Page-aligned anonymous memory for memory benchmarks: mapped with mmap, optionally advised
//! to use transparent huge pages (or not to), optionally bound to one NUMA node with mbind,
//! first-touched by the thread that will use it, unmapped on drop; and the spacer a round
//! holds while it maps its memory, so its physical pages are drawn afresh ([`Spacer`]).

use anyhow::{bail, Context};

/// Page policy of a region.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pages {
    /// 4 KiB pages: THP explicitly refused (MADV_NOHUGEPAGE).
    Small,
    /// Transparent huge pages requested (MADV_HUGEPAGE).
    Huge,
}

impl Pages {
    pub fn name(self) -> &'static str {
        match self {
            Pages::Small => "4k",
            Pages::Huge => "thp",
        }
    }
}

pub struct Region {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: a Region is plain memory owned by one value; moving it between threads is fine.
unsafe impl Send for Region {}

const HUGE: usize = 2 << 20;

impl Region {
    /// Map `len` bytes (rounded up to 2 MiB so huge pages can back it), advise the page policy,
    /// and bind it to `node` when given. Nothing is touched yet.
    pub fn map(len: usize, pages: Pages, node: Option<u32>) -> anyhow::Result<Region> {
        if len == 0 {
            bail!("empty region");
        }
        let len = len.div_ceil(HUGE) * HUGE;
        // SAFETY: an anonymous private mapping with no address hint.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error())
                .with_context(|| format!("mmap of {len} bytes"));
        }
        let r = Region {
            ptr: ptr.cast(),
            len,
        };
        let advice = match pages {
            Pages::Small => libc::MADV_NOHUGEPAGE,
            Pages::Huge => libc::MADV_HUGEPAGE,
        };
        // SAFETY: the range is exactly our mapping. Advice failure only loses the page policy.
        unsafe { libc::madvise(r.ptr.cast(), r.len, advice) };
        if let Some(n) = node {
            r.bind(n)?;
        }
        Ok(r)
    }

    /// Bind the region's pages to NUMA node `node` (MPOL_BIND), before they are touched.
    fn bind(&self, node: u32) -> anyhow::Result<()> {
        const MPOL_BIND: libc::c_long = 2;
        let mut mask = [0u64; 16];
        if node as usize >= mask.len() * 64 {
            bail!("NUMA node {node} out of range");
        }
        mask[node as usize / 64] |= 1 << (node % 64);
        // SAFETY: mbind(addr, len, mode, nodemask, maxnode, flags) over our own mapping.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_mbind,
                self.ptr,
                self.len,
                MPOL_BIND,
                mask.as_ptr(),
                (mask.len() * 64) as libc::c_ulong,
                0 as libc::c_uint,
            )
        };
        if rc != 0 {
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::ENOSYS) {
                bail!(
                    "binding memory to node {node}: {}",
                    crate::policy::apply::no_memory_policies("mbind")
                );
            }
            return Err(e).with_context(|| format!("mbind to node {node}"));
        }
        Ok(())
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The region as `n` f64 values (n * 8 <= len).
    pub fn f64s(&mut self, n: usize) -> &mut [f64] {
        assert!(n * 8 <= self.len);
        // SAFETY: the mapping is page-aligned, at least n*8 bytes, and exclusively borrowed.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.cast::<f64>(), n) }
    }

    /// `n` f64 values starting `offset` bytes into the region (offset a multiple of 64).
    pub fn f64s_at(&mut self, offset: usize, n: usize) -> &mut [f64] {
        assert!(offset % 64 == 0 && offset + n * 8 <= self.len);
        // SAFETY: in bounds (checked), 64-byte aligned, exclusively borrowed.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.add(offset).cast::<f64>(), n) }
    }

    /// The region as `n` usize values.
    pub fn words(&mut self, n: usize) -> &mut [usize] {
        assert!(n * std::mem::size_of::<usize>() <= self.len);
        // SAFETY: as above.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.cast::<usize>(), n) }
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly the mapping made in `map`.
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}

/// Bytes populated between two looks at the run's deadline while a spacer is touched.
const POPULATE_STEP: usize = 16 << 20;

/// A touched mapping of a random size a round holds while it maps its memory, so the
/// physical pages the round gets are drawn afresh. The kernel gives a fresh mapping the
/// pages freed last: a process that maps, frees and maps again lands on much the same
/// pages each time, so without a spacer every round of a run measures one set of pages and
/// what those pages cost (their cache sets, how the host backs them) is drawn once per run
/// (docs/measurements.md, 2026-12-07). A spacer of a random size takes the pages at the
/// head of the free lists first, and each round's memory lands elsewhere. It is touched
/// before the round's timed part and unmapped after it (on drop).
pub struct Spacer {
    _region: Option<Region>,
    held: bool,
}

impl Spacer {
    /// Hold a spacer of a random size in [0, `most`) bytes (whole 4 KiB pages, of the kind
    /// `pages`), touched now. Below a page holds none ([`Spacer::held`] false). Stops
    /// touching early at Ctrl-C or the run's deadline (the round then stops at its next
    /// look).
    pub fn hold(most: u64, pages: Pages) -> anyhow::Result<Spacer> {
        use rand::Rng;
        const PAGE: u64 = 4096;
        if most < PAGE {
            return Ok(Spacer {
                _region: None,
                held: false,
            });
        }
        Spacer::of(
            rand::thread_rng().gen_range(0..most / PAGE) as usize * PAGE as usize,
            pages,
        )
    }

    /// A spacer of `len` bytes, touched now.
    fn of(len: usize, pages: Pages) -> anyhow::Result<Spacer> {
        let region = match len {
            0 => None,
            len => {
                let mut r = Region::map(len, pages, None)?;
                r.populate(len);
                Some(r)
            }
        };
        Ok(Spacer {
            _region: region,
            held: true,
        })
    }

    /// Whether a spacer was drawn (0 bytes included), so the round's pages were drawn
    /// afresh.
    pub fn held(&self) -> bool {
        self.held
    }
}

/// The most a spacer may take ([`Spacer::hold`]): `want`, within what `room` leaves beside
/// the `need` bytes the round holds itself (0 when nothing is left: the round's pages are then
/// not drawn afresh, and its rows say so).
pub fn spacer_room(want: u64, need: u64, room: &crate::probe::memory_limit::Room) -> u64 {
    match room.bytes {
        Some(left) => want.min(left.saturating_sub(need)),
        None => want,
    }
}

impl Region {
    /// Touch the first `len` bytes (each page written once, in steps that look at the run's
    /// deadline), so their pages are taken now: MADV_POPULATE_WRITE where the kernel has it
    /// (5.14), else a write to every 4 KiB page.
    fn populate(&mut self, len: usize) {
        let len = len.min(self.len);
        let mut at = 0;
        while at < len {
            if crate::deadline::stop_requested() {
                return;
            }
            let step = POPULATE_STEP.min(len - at);
            // SAFETY: the range lies inside our mapping.
            let p = unsafe { self.ptr.add(at) };
            // SAFETY: madvise over part of our own mapping; failure is handled below.
            let rc = unsafe { libc::madvise(p.cast(), step, libc::MADV_POPULATE_WRITE) };
            if rc != 0 {
                for page in (0..step).step_by(4096) {
                    // SAFETY: inside the mapping (page < step, at + step <= len).
                    unsafe { std::ptr::write_volatile(p.add(page), 1u8) };
                }
            }
            at += step;
        }
    }
}

/// Bytes the machine can give now (MemAvailable), or None when unreadable.
pub fn available_bytes() -> Option<u64> {
    let m = std::fs::read_to_string("/proc/meminfo").ok()?;
    m.lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        .map(|kb| kb * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_are_aligned_rounded_and_writable() {
        let mut r = Region::map(5000, Pages::Small, None).unwrap();
        assert_eq!(r.len(), 2 << 20);
        let v = r.f64s(1000);
        assert_eq!(v.as_ptr() as usize % 4096, 0);
        v.fill(1.5);
        assert_eq!(v.iter().sum::<f64>(), 1500.0);
    }

    /// A spacer takes at most what the room leaves beside the round's own memory, and
    /// none when nothing is left (a cgroup squeeze): its rows then keep the default level.
    #[test]
    fn a_spacer_is_drawn_within_the_room_the_round_leaves() {
        use crate::probe::memory_limit::Room;
        const MIB: u64 = 1 << 20;
        let free = Room::machine(Some(8 << 30));
        assert_eq!(spacer_room(128 * MIB, 384 * MIB, &free), 128 * MIB);
        assert_eq!(
            spacer_room(128 * MIB, 384 * MIB, &Room::machine(None)),
            128 * MIB
        );
        let tight = Room::machine(Some(400 * MIB));
        assert_eq!(spacer_room(128 * MIB, 384 * MIB, &tight), 16 * MIB);
        assert_eq!(spacer_room(128 * MIB, 500 * MIB, &tight), 0);
        assert!(!Spacer::hold(0, Pages::Small).unwrap().held());
        assert!(!Spacer::hold(4095, Pages::Small).unwrap().held());
        for _ in 0..20 {
            assert!(Spacer::hold(8 * MIB, Pages::Small).unwrap().held());
        }
    }

    /// The physical pages of a region's first `len` bytes, touched now (root only: PFNs in
    /// /proc/self/pagemap).
    fn frames(r: &mut Region, len: usize) -> std::collections::HashSet<u64> {
        use std::io::{Read, Seek};
        r.populate(len);
        let mut f = std::fs::File::open("/proc/self/pagemap").unwrap();
        f.seek(std::io::SeekFrom::Start(r.ptr as u64 / 4096 * 8))
            .unwrap();
        let mut raw = vec![0u8; len / 4096 * 8];
        f.read_exact(&mut raw).unwrap();
        raw.chunks(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
            .filter(|v| v >> 63 == 1)
            .map(|v| v & ((1 << 55) - 1))
            .collect()
    }

    /// While a spacer of its size is held, a fresh mapping lands on other pages than the
    /// one freed just before it (those go to the spacer), which it would mostly reuse
    /// without one (printed: other tests allocating beside it can take them).
    #[test]
    #[ignore = "needs root"]
    fn a_spacer_moves_the_next_mapping_onto_other_pages() {
        const LEN: usize = 64 << 20;
        let shared = |a: &std::collections::HashSet<u64>, b: &std::collections::HashSet<u64>| {
            a.intersection(b).count() as f64 / a.len().max(1) as f64
        };
        let mapped = || frames(&mut Region::map(LEN, Pages::Small, None).unwrap(), LEN);
        let first = mapped();
        assert!(first.len() * 4096 >= LEN / 2, "no PFNs read: not root?");
        let again = mapped();
        let spaced = {
            let _s = Spacer::of(LEN, Pages::Small).unwrap();
            mapped()
        };
        let (same, moved) = (shared(&again, &first), shared(&spaced, &again));
        eprintln!(
            "pages shared with the mapping before: {same:.2} without a spacer, {moved:.2} with one"
        );
        assert!(
            moved < 0.5,
            "{moved} of its pages shared with a spacer held"
        );
    }

    /// On a kernel with memory policies, binding to node 0 works and a node that does not
    /// exist fails; without them (ENOSYS: no CONFIG_NUMA, qemu-user) every binding fails
    /// and says so, while an unbound region still maps.
    #[test]
    fn binding_to_node_0_works_and_a_missing_node_fails() {
        match crate::policy::apply::memory_policies() {
            Ok(()) => {
                let mut r = Region::map(1 << 20, Pages::Small, Some(0)).unwrap();
                r.f64s(100).fill(2.0);
                let e = Region::map(1 << 20, Pages::Small, Some(1000))
                    .err()
                    .expect("node 1000 does not exist");
                assert!(!format!("{e:#}").contains("ENOSYS"), "{e:#}");
            }
            Err(why) => {
                assert!(
                    why.contains("ENOSYS"),
                    "get_mempolicy failed otherwise: {why}"
                );
                for node in [0, 1000] {
                    let e = Region::map(1 << 20, Pages::Small, Some(node))
                        .err()
                        .expect("binding is refused");
                    let text = format!("{e:#}");
                    assert!(
                        text.contains(&format!("binding memory to node {node}"))
                            && text.contains("no NUMA memory policies"),
                        "{text}"
                    );
                }
                Region::map(1 << 20, Pages::Small, None).unwrap();
            }
        }
    }
}
