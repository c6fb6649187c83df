//! The VM layer and the container layer, detected separately, each with its evidence.
//!
//! VM: CPUID hypervisor bit and vendor leaf (live only), DMI strings, /sys/hypervisor,
//! the `hypervisor` CPU flag. Container: this process's namespaces compared with the
//! kernel's initial namespace inodes (strong), container markers such as `/.dockerenv`
//! (weak: never decisive alone), the cgroup path (a hint). A VM with a stray
//! `/.dockerenv` and initial namespaces is a VM, not a container.

use super::sysroot::SysRoot;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Virtualization {
    /// Hypervisor name (`kvm`, `xen`, `vmware`, `microsoft`, `qemu`, `amazon`, ...), or null.
    pub vm: Option<String>,
    /// Container runtime (`docker`, `podman`, `lxc`, `container-other`), or null.
    pub container: Option<String>,
    /// Every piece of evidence, VM and container alike, as readable sentences.
    pub evidence: Vec<String>,
    pub vm_evidence: Vec<String>,
    pub container_evidence: Vec<String>,
    /// Container markers present although the namespaces say this is no container.
    pub stray_markers: Vec<String>,
}

/// The kernel's initial namespace inode numbers (PROC_*_INIT_INO in include/linux/proc_ns.h).
const INITIAL_NS: &[(&str, u64)] = &[
    ("ipc", 0xEFFF_FFFF),
    ("uts", 0xEFFF_FFFE),
    ("user", 0xEFFF_FFFD),
    ("pid", 0xEFFF_FFFC),
    ("cgroup", 0xEFFF_FFFB),
];

/// The inode in a namespace link text such as `pid:[4026531836]`.
pub fn ns_inode(link: &str) -> Option<u64> {
    let start = link.find('[')? + 1;
    let end = link.find(']')?;
    link.get(start..end)?.parse().ok()
}

// Read from CPUID on x86-64 only; the names are tested on every architecture.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
fn vm_from_cpuid_vendor(sig: &str) -> String {
    match sig {
        s if s.starts_with("KVMKVMKVM") || s.starts_with("Linux KVM Hv") => "kvm",
        s if s.starts_with("XenVMMXenVMM") => "xen",
        s if s.starts_with("VMwareVMware") => "vmware",
        s if s.starts_with("Microsoft Hv") => "microsoft",
        s if s.starts_with("TCGTCGTCGTCG") => "qemu",
        s if s.starts_with("bhyve bhyve") => "bhyve",
        s if s.starts_with("ACRNACRNACRN") => "acrn",
        s if s.starts_with("QNXQVMBSQG") => "qnx",
        s if s.starts_with("Apple VZ") => "apple",
        _ => "vm-other",
    }
    .to_string()
}

/// Map DMI vendor/product strings to a hypervisor name, as systemd-detect-virt does.
pub fn vm_from_dmi(s: &str) -> Option<&'static str> {
    const TABLE: &[(&str, &str)] = &[
        ("KVM", "kvm"),
        ("OpenStack", "kvm"),
        ("KubeVirt", "kvm"),
        ("Amazon EC2", "amazon"),
        ("QEMU", "qemu"),
        ("VMware", "vmware"),
        ("VMW", "vmware"),
        ("innotek GmbH", "oracle"),
        ("VirtualBox", "oracle"),
        ("Xen", "xen"),
        ("Bochs", "bochs"),
        ("Parallels", "parallels"),
        ("BHYVE", "bhyve"),
        ("Microsoft Corporation Virtual Machine", "microsoft"),
        ("Hyper-V", "microsoft"),
        ("Google Compute Engine", "google"),
        ("Apple Virtualization", "apple"),
    ];
    TABLE
        .iter()
        .find(|(prefix, _)| s.starts_with(prefix))
        .map(|(_, name)| *name)
}

#[cfg(target_arch = "x86_64")]
fn cpuid_vm(ev: &mut Vec<String>) -> Option<String> {
    let cpuid = raw_cpuid::CpuId::new();
    let bit = cpuid
        .get_feature_info()
        .map(|f| f.has_hypervisor())
        .unwrap_or(false);
    if !bit {
        ev.push("CPUID leaf 1 ECX bit 31 (hypervisor present) is clear".into());
        return None;
    }
    // Leaf 0x40000000: the vendor signature in EBX:ECX:EDX.
    let r = raw_cpuid::native_cpuid::cpuid_count(0x4000_0000, 0);
    let mut sig = Vec::new();
    for w in [r.ebx, r.ecx, r.edx] {
        sig.extend_from_slice(&w.to_le_bytes());
    }
    let sig: String = String::from_utf8_lossy(&sig)
        .trim_end_matches('\0')
        .to_string();
    let name = vm_from_cpuid_vendor(&sig);
    ev.push(format!(
        "CPUID hypervisor bit set; vendor leaf 0x40000000 = '{sig}' ({name})"
    ));
    Some(name)
}

#[cfg(not(target_arch = "x86_64"))]
fn cpuid_vm(_ev: &mut Vec<String>) -> Option<String> {
    None
}

fn detect_vm(root: &SysRoot, ev: &mut Vec<String>) -> Option<String> {
    let mut vm = None;
    if root.is_live() {
        vm = cpuid_vm(ev);
    } else {
        ev.push("CPUID not read: captured tree (--root), live only".into());
    }
    for f in ["sys_vendor", "product_name", "board_vendor", "bios_vendor"] {
        if let Some(s) = root.read_opt(format!("/sys/class/dmi/id/{f}")) {
            if let Some(name) = vm_from_dmi(&s) {
                ev.push(format!("DMI {f} = '{s}' ({name})"));
                // A DMI name is more specific than a generic CPUID kvm (amazon, google...).
                if vm.is_none() || matches!(name, "amazon" | "google" | "oracle" | "parallels") {
                    vm = Some(name.to_string());
                }
            }
        }
    }
    if let Some(t) = root.read_opt("/sys/hypervisor/type") {
        ev.push(format!("/sys/hypervisor/type = '{t}'"));
        vm.get_or_insert(t);
    }
    let flagged = root
        .read_opt("/proc/cpuinfo")
        .map(|c| {
            c.lines()
                .filter(|l| l.starts_with("flags"))
                .any(|l| l.split_whitespace().any(|w| w == "hypervisor"))
        })
        .unwrap_or(false);
    if flagged {
        ev.push("/proc/cpuinfo flags include 'hypervisor'".into());
        vm.get_or_insert_with(|| "vm-other".into());
    }
    if let Some(cs) =
        root.read_opt("/sys/devices/system/clocksource/clocksource0/available_clocksource")
    {
        for (pv, name) in [
            ("kvm-clock", "kvm"),
            ("xen", "xen"),
            ("hyperv_clocksource_tsc_page", "microsoft"),
        ] {
            if cs.split_whitespace().any(|w| w == pv) {
                ev.push(format!("paravirtual clocksource '{pv}' available ({name})"));
                // Names the hypervisor when only the generic CPU flag said "some VM".
                if vm.as_deref() == Some("vm-other") {
                    vm = Some(name.to_string());
                }
            }
        }
    }
    vm
}

fn detect_container(
    root: &SysRoot,
    ev: &mut Vec<String>,
    stray: &mut Vec<String>,
) -> Option<String> {
    let mut foreign = Vec::new();
    let mut initial = Vec::new();
    for (ns, init) in INITIAL_NS {
        if let Some(ino) = root
            .read_link(format!("/proc/self/ns/{ns}"))
            .and_then(|l| ns_inode(&l))
        {
            if ino == *init {
                initial.push(*ns);
            } else {
                foreign.push(format!("{ns}:[{ino}]"));
            }
        }
    }
    if !initial.is_empty() {
        ev.push(format!("initial namespaces: {}", initial.join(", ")));
    }
    if !foreign.is_empty() {
        ev.push(format!(
            "non-initial namespaces (strong): {}",
            foreign.join(", ")
        ));
    }
    if initial.is_empty() && foreign.is_empty() {
        ev.push("namespace links unreadable: container layer undecidable".into());
    }

    let mut markers = Vec::new();
    for (file, kind) in [
        ("/.dockerenv", "docker"),
        ("/run/.containerenv", "podman"),
        ("/run/host/container-manager", "container-other"),
    ] {
        if root.exists(file) {
            markers.push((file, kind));
        }
    }
    let pid1_env = root.read_opt("/proc/1/environ").and_then(|e| {
        e.split('\0')
            .find_map(|kv| kv.strip_prefix("container=").map(str::to_string))
    });
    if let Some(c) = &pid1_env {
        ev.push(format!("PID 1 environment has container={c}"));
    }
    let cgroup_hint = root.read_opt("/proc/self/cgroup").and_then(|c| {
        ["docker", "kubepods", "lxc", "libpod", "containerd"]
            .into_iter()
            .find(|k| c.contains(k))
    });
    if let Some(k) = cgroup_hint {
        ev.push(format!("cgroup path mentions '{k}'"));
    }

    let strong = !foreign.is_empty()
        && foreign
            .iter()
            .any(|f| f.starts_with("pid") || f.starts_with("cgroup") || f.starts_with("user"));
    if strong || pid1_env.is_some() {
        for (file, _) in &markers {
            ev.push(format!("marker file {file} (weak)"));
        }
        let kind = pid1_env
            .or_else(|| markers.first().map(|(_, k)| k.to_string()))
            .or_else(|| {
                cgroup_hint.map(|k| match k {
                    "kubepods" | "containerd" => "container-other".to_string(),
                    "libpod" => "podman".to_string(),
                    other => other.to_string(),
                })
            })
            .unwrap_or_else(|| "container-other".into());
        return Some(kind);
    }
    for (file, _) in &markers {
        let why = if initial.is_empty() {
            "weak evidence, not decisive alone"
        } else {
            "weak evidence, contradicted by the initial namespaces"
        };
        ev.push(format!("marker file {file} present: {why}"));
        stray.push(file.to_string());
    }
    None
}

pub fn read(root: &SysRoot) -> Virtualization {
    let mut vm_ev = Vec::new();
    let mut ct_ev = Vec::new();
    let mut stray = Vec::new();
    let vm = detect_vm(root, &mut vm_ev);
    let container = detect_container(root, &mut ct_ev, &mut stray);
    let evidence = vm_ev
        .iter()
        .map(|e| format!("vm: {e}"))
        .chain(ct_ev.iter().map(|e| format!("container: {e}")))
        .collect();
    Virtualization {
        vm,
        container,
        evidence,
        vm_evidence: vm_ev,
        container_evidence: ct_ev,
        stray_markers: stray,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespace_inode_from_link_text() {
        assert_eq!(ns_inode("pid:[4026531836]"), Some(4026531836));
        assert_eq!(ns_inode("garbage"), None);
    }

    #[test]
    fn dmi_names_map_like_systemd() {
        assert_eq!(vm_from_dmi("Amazon EC2"), Some("amazon"));
        assert_eq!(vm_from_dmi("QEMU"), Some("qemu"));
        assert_eq!(vm_from_dmi("Dell Inc."), None);
    }

    #[test]
    fn cpuid_vendor_names() {
        assert_eq!(vm_from_cpuid_vendor("KVMKVMKVM"), "kvm");
        assert_eq!(vm_from_cpuid_vendor("Microsoft Hv"), "microsoft");
        assert_eq!(vm_from_cpuid_vendor("????"), "vm-other");
    }
}
