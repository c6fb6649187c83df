//! A process's resident memory per NUMA node, from /proc/PID/numa_maps (what pmap -L shows
//! on Solaris): one line per mapping, `ADDRESS POLICY [file=PATH] [heap] [stack] [huge]
//! ... N0=PAGES N1=PAGES ... kernelpagesize_kB=KB`. Pages are counted in the mapping's page
//! size (a transparent huge page counts as its base pages, a hugetlb page as one page of
//! `kernelpagesize_kB`), so bytes = pages x kernelpagesize_kB x 1024. A line that is not a
//! mapping, or whose counts do not read, is skipped and counted, never guessed.

use super::numa::{NodeMemory, ProcessMemory};
use std::collections::BTreeMap;

/// The kind of memory a mapping holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Heap,
    Stack,
    Anon,
    File,
}

/// One mapping of numa_maps.
struct Mapping {
    kind: Kind,
    /// A hugetlb mapping.
    huge: bool,
    /// Resident bytes per node.
    bytes: Vec<(u32, u64)>,
}

/// One line as a mapping; None when the line is not one.
fn mapping(line: &str, base_page_kb: u64) -> Option<Mapping> {
    let mut tokens = line.split_whitespace();
    u64::from_str_radix(tokens.next()?, 16).ok()?;
    tokens.next()?; // the memory policy
    let mut kind = Kind::Anon;
    let mut huge = false;
    let mut page_kb = None;
    let mut pages: Vec<(u32, u64)> = Vec::new();
    for t in tokens {
        match t {
            "heap" => kind = Kind::Heap,
            "huge" => huge = true,
            _ if t == "stack" || t.starts_with("stack:") => kind = Kind::Stack,
            _ => {
                let Some((k, v)) = t.split_once('=') else {
                    continue;
                };
                if k == "file" {
                    // Anonymous hugetlb and shared anonymous memory show as deleted files.
                    if !(v.starts_with("/anon_hugepage") || v.starts_with("/dev/zero")) {
                        kind = Kind::File;
                    }
                } else if k == "kernelpagesize_kB" {
                    page_kb = Some(v.parse::<u64>().ok().filter(|&kb| kb > 0)?);
                } else if let Some(node) = k.strip_prefix('N') {
                    let node: u32 = node.parse().ok()?;
                    if pages.iter().any(|(n, _)| *n == node) {
                        return None;
                    }
                    pages.push((node, v.parse().ok()?));
                }
            }
        }
    }
    // Without kernelpagesize_kB (kernels before 2.6.39) pages are base pages, except in a
    // hugetlb mapping, whose page size is then unknown.
    let page_kb = match (page_kb, huge) {
        (Some(kb), _) => kb,
        (None, false) => base_page_kb,
        (None, true) => return None,
    };
    let bytes = pages
        .into_iter()
        .map(|(n, p)| Some((n, p.checked_mul(page_kb)?.checked_mul(1024)?)))
        .collect::<Option<Vec<_>>>()?;
    Some(Mapping { kind, huge, bytes })
}

/// The memory per node of a numa_maps text; `pid` and `read_at_s` are carried as given.
pub fn parse(text: &str, base_page_kb: u64, pid: i32, read_at_s: f64) -> ProcessMemory {
    let mut nodes: BTreeMap<u32, NodeMemory> = BTreeMap::new();
    let (mut mappings, mut skipped_lines) = (0, 0);
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let Some(Mapping { kind, huge, bytes }) = mapping(line, base_page_kb) else {
            skipped_lines += 1;
            continue;
        };
        mappings += 1;
        for (node, b) in bytes {
            let m = nodes.entry(node).or_insert_with(|| NodeMemory {
                node,
                ..Default::default()
            });
            let field = match kind {
                Kind::Heap => &mut m.heap_bytes,
                Kind::Stack => &mut m.stack_bytes,
                Kind::Anon => &mut m.anon_bytes,
                Kind::File => &mut m.file_bytes,
            };
            *field = field.saturating_add(b);
            if huge {
                m.hugetlb_bytes = m.hugetlb_bytes.saturating_add(b);
            }
        }
    }
    ProcessMemory {
        pid,
        read_at_s,
        mappings,
        skipped_lines,
        nodes: nodes.into_values().collect(),
    }
}

/// The base page size, KiB.
pub fn base_page_kb() -> u64 {
    nix::unistd::sysconf(nix::unistd::SysconfVar::PAGE_SIZE)
        .ok()
        .flatten()
        .map_or(4, |b| (b as u64 / 1024).max(1))
}

/// Read process `pid`'s numa_maps: Err with the reason when it cannot be read; a process
/// without mappings (gone, a zombie, a kernel thread) gives Ok(None).
pub fn read(pid: i32, read_at_s: f64) -> Result<Option<ProcessMemory>, String> {
    let path = format!("/proc/{pid}/numa_maps");
    let text = std::fs::read_to_string(&path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => {
            format!("no {path} (kernel without CONFIG_NUMA, or the process is gone)")
        }
        _ => format!("{path}: {e}"),
    })?;
    let m = parse(&text, base_page_kb(), pid, read_at_s);
    Ok((m.mappings > 0).then_some(m))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    /// A two-node process: heap on both nodes, a main stack, a thread stack, a 2 MiB
    /// hugetlb mapping, transparent huge pages, file mappings (one with a space in its
    /// name), and hostile lines.
    fn two_node() -> ProcessMemory {
        let text = include_str!("../../tests/fixtures/proc/numa_maps-two-node");
        parse(text, 4, 7, 1.5)
    }

    #[test]
    fn memory_per_node_by_kind_in_bytes() {
        let m = two_node();
        assert_eq!((m.pid, m.read_at_s), (7, 1.5));
        let n0 = &m.nodes[0];
        let n1 = &m.nodes[1];
        assert_eq!((n0.node, n1.node), (0, 1));
        // heap: N0=2560 N1=512 4 KiB pages.
        assert_eq!(n0.heap_bytes, 10 * MIB);
        assert_eq!(n1.heap_bytes, 2 * MIB);
        // stack: N0=33 pages.
        assert_eq!(n0.stack_bytes, 33 * 4096);
        // anonymous: 1024 + 8 pages on node 1 (THP counted in base pages, a thread stack),
        // 3 hugetlb pages of 2 MiB on node 1 and 1 on node 0 (file=/anon_hugepage).
        assert_eq!(n1.anon_bytes, 1032 * 4096 + 6 * MIB);
        assert_eq!(n1.hugetlb_bytes, 6 * MIB);
        assert_eq!(n0.anon_bytes, 2 * MIB);
        assert_eq!(n0.hugetlb_bytes, 2 * MIB);
        // files: libc (100 + 20 pages, one on each node) and a data file with a space.
        assert_eq!(n0.file_bytes, (100 + 5) * 4096);
        assert_eq!(n1.file_bytes, (20 + 7) * 4096);
        assert_eq!(m.largest().unwrap().node, 0);
        assert_eq!(m.on(1), n1.total_bytes());
        assert_eq!(m.total_bytes(), n0.total_bytes() + n1.total_bytes());
    }

    #[test]
    fn hostile_lines_are_skipped_and_counted() {
        let m = two_node();
        // Counted mappings: every line of the fixture that is a mapping.
        assert_eq!(m.mappings, 10);
        // garbage, a bad address, N0=lots, a duplicated node, a 0 page size, an overflowing
        // count, a hugetlb mapping without page size, a node id that is not a number.
        assert_eq!(m.skipped_lines, 8);
        assert!(m.nodes.iter().all(|n| n.node <= 1), "{:?}", m.nodes);
    }

    #[test]
    fn old_kernels_without_page_size_count_base_pages() {
        let m = parse("00400000 default anon=3 dirty=3 N0=3\n", 4, 1, 0.0);
        assert_eq!(m.nodes[0].anon_bytes, 3 * 4096);
        let m = parse("", 4, 1, 0.0);
        assert!(m.nodes.is_empty() && m.mappings == 0 && m.largest().is_none());
    }

    #[test]
    fn this_process_has_memory_on_a_node() {
        let m = read(std::process::id() as i32, 0.0).unwrap().unwrap();
        assert!(m.mappings > 5);
        assert!(m.total_bytes() > MIB, "{m:?}");
        assert!(read(i32::MAX, 0.0).is_err());
    }
}
