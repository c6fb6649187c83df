//! `truebench probe --capture FILE.tar.gz`: the files a probe of this machine reads, and
//! nothing else, in a gzip'd tar that `probe --root DIR` reads once unpacked (what a user
//! attaches to "my machine is probed wrong"). The probe runs on a recording root, so the
//! archive holds exactly the paths it touched; two files are cut down to what the probe
//! uses: PID 1's environment to its `container=` entry, and mountinfo to the cgroup
//! mounts. The archive is built in memory (a few KiB); the command writes it with the one
//! output-file writer (`cli/output.rs`: never over an existing file, no partial file).

use super::sysroot::SysRoot;
use std::path::Path;

/// What was archived.
#[derive(Debug, Clone)]
pub struct Captured {
    pub files: usize,
    pub dirs: usize,
    pub links: usize,
    pub bytes: u64,
}

/// The content to archive for a system path: as read, or cut to what the probe uses.
fn content(path: &Path) -> Option<Vec<u8>> {
    let data = super::sysroot::read_at(path, path).ok()?;
    Some(cut(&path.to_string_lossy(), data))
}

/// A file's data cut to what the probe uses: a process environment to its `container=`
/// entry, mountinfo to the cgroup mounts; anything else whole.
fn cut(path: &str, data: Vec<u8>) -> Vec<u8> {
    if path.starts_with("/proc/") && path.ends_with("/environ") {
        return data
            .split(|b| *b == 0)
            .filter(|e| e.starts_with(b"container="))
            .flat_map(|e| e.iter().copied().chain([0]))
            .collect();
    }
    if path.starts_with("/proc/") && path.ends_with("/mountinfo") {
        return String::from_utf8_lossy(&data)
            .lines()
            .filter(|l| l.contains(" - cgroup ") || l.contains(" - cgroup2 "))
            .map(|l| format!("{l}\n"))
            .collect::<String>()
            .into_bytes();
    }
    data
}

/// Probe this machine on a recording root and return the root (with what it read).
pub fn record() -> (SysRoot, super::ProbeDoc) {
    let root = SysRoot::live().recording();
    let doc = super::probe(&root);
    // A captured tree names its host from this file (the live probe asks the kernel).
    let _ = root.path("/proc/sys/kernel/hostname");
    (root, doc)
}

/// The gzip'd tar of what `root` recorded, and what it holds. Err: why it could not be built.
pub fn archive(root: &SysRoot) -> Result<(Vec<u8>, Captured), String> {
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let mut tar = tar::Builder::new(gz);
    let mut n = Captured {
        files: 0,
        dirs: 0,
        links: 0,
        bytes: 0,
    };
    let err = |e: std::io::Error| format!("building the archive: {e}");
    for (path, asked) in root.recorded() {
        let Ok(rel) = path.strip_prefix("/") else {
            continue;
        };
        if rel.as_os_str().is_empty() {
            continue;
        }
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue; // asked for, absent: absent in the capture too
        };
        let mut h = tar::Header::new_gnu();
        h.set_mtime(0);
        if meta.file_type().is_symlink() && path.starts_with("/proc") {
            // Namespace links (`pid:[4026531836]`): kept as links, their targets are the fact.
            let Ok(target) = std::fs::read_link(&path) else {
                continue;
            };
            h.set_entry_type(tar::EntryType::Symlink);
            h.set_size(0);
            h.set_mode(0o777);
            tar.append_link(&mut h, rel, &target).map_err(err)?;
            n.links += 1;
        } else if path.is_dir() {
            h.set_entry_type(tar::EntryType::Directory);
            h.set_size(0);
            h.set_mode(0o755);
            tar.append_data(&mut h, rel, std::io::empty())
                .map_err(err)?;
            n.dirs += 1;
        } else if !asked {
            // A file only seen in a directory listing: the probe never read it.
            continue;
        } else if let Some(data) = content(&path) {
            h.set_entry_type(tar::EntryType::Regular);
            h.set_size(data.len() as u64);
            h.set_mode(0o644);
            tar.append_data(&mut h, rel, data.as_slice()).map_err(err)?;
            n.files += 1;
            n.bytes += data.len() as u64;
        }
    }
    let gz = tar.into_inner().map_err(err)?;
    let bytes = gz.finish().map_err(err)?;
    Ok((bytes, n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn environ_and_mountinfo_are_cut_to_what_the_probe_uses() {
        let env = b"HOME=/root\0container=podman\0SECRET=x\0".to_vec();
        assert_eq!(cut("/proc/1/environ", env), b"container=podman\0");
        assert!(cut("/proc/1/environ", b"PATH=/bin\0".to_vec()).is_empty());
        let mi = "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n30 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n31 23 0:27 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n";
        let kept = String::from_utf8(cut("/proc/self/mountinfo", mi.into())).unwrap();
        assert_eq!(kept.lines().count(), 2);
        assert!(!kept.contains("ext4"));
        assert_eq!(cut("/proc/cpuinfo", b"x".to_vec()), b"x");
    }
}
