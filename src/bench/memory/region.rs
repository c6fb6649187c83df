//! Page-aligned anonymous memory for memory benchmarks: mapped with mmap, optionally advised
//! to use transparent huge pages (or not to), optionally bound to one NUMA node with mbind,
//! first-touched by the thread that will use it, unmapped on drop.

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
