//! ARM cores from /proc/cpuinfo: an aarch64 kernel prints no `model name`, only each
//! processor's MIDR fields (`CPU implementer`, `CPU part`, `CPU variant`, `CPU revision`)
//! and `Features` (read by probe/kernel.rs). The core's name comes from the implementer and part numbers (the table
//! below, from the vendors' technical reference manuals); a part not in it is named by its
//! numbers, never guessed. Several kinds of core (big.LITTLE) are listed with their counts.

/// Known (implementer, part) pairs and their core names.
const CORES: &[(u32, u32, &str)] = &[
    (0x41, 0xd03, "Cortex-A53"),
    (0x41, 0xd04, "Cortex-A35"),
    (0x41, 0xd05, "Cortex-A55"),
    (0x41, 0xd07, "Cortex-A57"),
    (0x41, 0xd08, "Cortex-A72"),
    (0x41, 0xd09, "Cortex-A73"),
    (0x41, 0xd0a, "Cortex-A75"),
    (0x41, 0xd0b, "Cortex-A76"),
    (0x41, 0xd0c, "Neoverse-N1"),
    (0x41, 0xd0d, "Cortex-A77"),
    (0x41, 0xd40, "Neoverse-V1"),
    (0x41, 0xd41, "Cortex-A78"),
    (0x41, 0xd44, "Cortex-X1"),
    (0x41, 0xd46, "Cortex-A510"),
    (0x41, 0xd47, "Cortex-A710"),
    (0x41, 0xd48, "Cortex-X2"),
    (0x41, 0xd49, "Neoverse-N2"),
    (0x41, 0xd4a, "Neoverse-E1"),
    (0x41, 0xd4d, "Cortex-A715"),
    (0x41, 0xd4e, "Cortex-X3"),
    (0x41, 0xd4f, "Neoverse-V2"),
    (0x41, 0xd80, "Cortex-A520"),
    (0x41, 0xd81, "Cortex-A720"),
    (0x41, 0xd82, "Cortex-X4"),
    (0x41, 0xd84, "Neoverse-V3"),
    (0x41, 0xd8e, "Neoverse-N3"),
    (0x42, 0x516, "Vulcan"),
    (0x43, 0x0a1, "ThunderX"),
    (0x43, 0x0af, "ThunderX2"),
    (0x46, 0x001, "A64FX"),
    (0x48, 0xd01, "Kunpeng-920 (TSV110)"),
    (0x4e, 0x004, "Carmel"),
    (0x50, 0x000, "X-Gene"),
    (0x51, 0x800, "Kryo-2XX-Gold"),
    (0x51, 0xc00, "Falkor"),
    (0x61, 0x022, "M1 Icestorm"),
    (0x61, 0x023, "M1 Firestorm"),
    (0xc0, 0xac3, "Ampere-1"),
    (0xc0, 0xac4, "Ampere-1a"),
];

/// Implementer codes and their names.
const IMPLEMENTERS: &[(u32, &str)] = &[
    (0x41, "ARM"),
    (0x42, "Broadcom"),
    (0x43, "Cavium"),
    (0x46, "Fujitsu"),
    (0x48, "HiSilicon"),
    (0x4e, "NVIDIA"),
    (0x50, "APM"),
    (0x51, "Qualcomm"),
    (0x61, "Apple"),
    (0x6d, "Microsoft"),
    (0xc0, "Ampere"),
];

/// One processor's MIDR identity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Midr {
    pub implementer: u32,
    pub part: u32,
}

impl Midr {
    /// "ARM Neoverse-N1", or the numbers when the part is not known
    /// ("implementer 0x41 (ARM) part 0xd99").
    pub fn name(self) -> String {
        let vendor = IMPLEMENTERS
            .iter()
            .find(|(i, _)| *i == self.implementer)
            .map(|(_, n)| *n);
        match CORES
            .iter()
            .find(|(i, p, _)| *i == self.implementer && *p == self.part)
        {
            Some((_, _, core)) => format!("{} {core}", vendor.unwrap_or("?")),
            None => format!(
                "implementer {:#04x}{} part {:#05x}",
                self.implementer,
                vendor.map(|v| format!(" ({v})")).unwrap_or_default(),
                self.part
            ),
        }
    }
}

fn hex(s: &str) -> Option<u32> {
    u32::from_str_radix(s.trim().trim_start_matches("0x"), 16).ok()
}

/// Each processor's MIDR identity, in /proc/cpuinfo's order (empty on x86 kernels).
pub fn cores(cpuinfo: &str) -> Vec<Midr> {
    let mut out = Vec::new();
    let mut implementer = None;
    for line in cpuinfo.lines() {
        let Some((k, v)) = line.split_once(':') else {
            continue;
        };
        match k.trim() {
            "CPU implementer" => implementer = hex(v),
            "CPU part" => {
                if let (Some(i), Some(p)) = (implementer.take(), hex(v)) {
                    out.push(Midr {
                        implementer: i,
                        part: p,
                    });
                }
            }
            _ => {}
        }
    }
    out
}

/// The model of an ARM machine from its cpuinfo: one core name, or each kind with its
/// count ("ARM Cortex-A55 x4 + ARM Cortex-A76 x4"); None without MIDR fields.
pub fn model(cpuinfo: &str) -> Option<String> {
    let all = cores(cpuinfo);
    let mut kinds: Vec<(Midr, usize)> = Vec::new();
    for m in &all {
        match kinds.iter_mut().find(|(k, _)| k == m) {
            Some((_, n)) => *n += 1,
            None => kinds.push((*m, 1)),
        }
    }
    match kinds.len() {
        0 => None,
        1 => Some(kinds[0].0.name()),
        _ => Some(
            kinds
                .iter()
                .map(|(m, n)| format!("{} x{n}", m.name()))
                .collect::<Vec<_>>()
                .join(" + "),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn processor(n: u32, implementer: &str, part: &str) -> String {
        format!(
            "processor\t: {n}\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics sve\n\
             CPU implementer\t: {implementer}\nCPU architecture: 8\nCPU variant\t: 0x3\nCPU part\t: {part}\nCPU revision\t: 1\n\n"
        )
    }

    #[test]
    fn a_graviton2_like_machine_is_named_by_its_core() {
        let info: String = (0..4).map(|i| processor(i, "0x41", "0xd0c")).collect();
        assert_eq!(model(&info).as_deref(), Some("ARM Neoverse-N1"));
    }

    #[test]
    fn big_little_lists_each_kind_with_its_count() {
        let info: String = (0..2)
            .map(|i| processor(i, "0x41", "0xd05"))
            .chain((2..3).map(|i| processor(i, "0x41", "0xd0b")))
            .collect();
        assert_eq!(
            model(&info).as_deref(),
            Some("ARM Cortex-A55 x2 + ARM Cortex-A76 x1")
        );
    }

    #[test]
    fn an_unknown_part_is_named_by_its_numbers_and_x86_gives_nothing() {
        let info = processor(0, "0xc0", "0xfff");
        assert_eq!(
            model(&info).as_deref(),
            Some("implementer 0xc0 (Ampere) part 0xfff")
        );
        let x86 = "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R)\nflags\t\t: fpu sse2 avx2\n";
        assert_eq!(model(x86), None);
    }
}
