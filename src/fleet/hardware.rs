//! The fleet's hardware classes: hosts of one CPU model and shape (packages, cores, logical
//! CPUs). Every host is judged against the whole fleet's median, so in a fleet of two
//! classes the smaller one stands out by its hardware, not by anything wrong with it: the
//! view lists the classes, and an outlier whose hardware differs from the typical host's is
//! labelled `different hardware: ...` (grouped by that difference) whatever else explains
//! its rows, so that no host is reported as off when it is of other hardware.

use crate::probe::ProbeDoc;
use serde::Serialize;

/// The environment facts (as `compare` names them) that make a host's hardware.
pub const FACTS: &[&str] = &[
    "CPU model",
    "packages",
    "cores",
    "logical CPUs",
    "threads per core",
];

/// A hardware class and how many of the fleet's runs are of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Class {
    pub class: String,
    pub runs: usize,
}

/// "AMD EPYC, 1 package, 2 cores, 2 logical CPUs".
pub fn class_of(env: &ProbeDoc) -> String {
    let t = &env.topology;
    format!(
        "{}, {}, {}, {}",
        env.kernel
            .cpu_model
            .as_deref()
            .unwrap_or("CPU model not recorded"),
        crate::units::count(t.packages, "package"),
        crate::units::count(t.cores, "core"),
        crate::units::count(t.threads, "logical CPU"),
    )
}

/// The classes of `envs`, the most common first; one class (or none) is an even fleet.
pub fn classes<'a>(envs: impl Iterator<Item = &'a ProbeDoc>) -> Vec<Class> {
    let mut n: std::collections::BTreeMap<String, usize> = Default::default();
    for e in envs {
        *n.entry(class_of(e)).or_default() += 1;
    }
    let mut out: Vec<Class> = n
        .into_iter()
        .map(|(class, runs)| Class { class, runs })
        .collect();
    out.sort_by(|a, b| b.runs.cmp(&a.runs).then(a.class.cmp(&b.class)));
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use crate::compare::testing::timers_run;
    use crate::fleet::{view, Options};
    use crate::result::RunDocument;

    /// 12 hosts within 1%, four of them of another CPU model and 1.4x slower (also the
    /// fixture of `report::fleet_text`'s test of the words it gets).
    pub(crate) fn two_models() -> Vec<RunDocument> {
        (0..12)
            .map(|i| {
                let other = i < 4;
                let f = if other { 1.4 } else { 1.0 + 0.001 * i as f64 };
                let mut d = timers_run(&format!("r{i}"), 20.0 * f, None);
                d.host = Some(format!("h{i}"));
                d.env.kernel.cpu_model = Some(
                    if other {
                        "Intel Xeon 8375C"
                    } else {
                        "AMD EPYC 7B13"
                    }
                    .into(),
                );
                d
            })
            .collect()
    }

    #[test]
    fn a_fleet_of_two_cpu_models_says_so_and_labels_the_other_models_hosts_by_it() {
        let v = view(&two_models(), &Options::default());
        assert_eq!(v.hardware.len(), 2, "{:?}", v.hardware);
        assert_eq!(v.hardware[0].runs, 8);
        assert!(
            v.hardware[0].class.starts_with("AMD EPYC 7B13, "),
            "{:?}",
            v.hardware
        );
        let outliers: Vec<&crate::fleet::Host> = v.hosts.iter().filter(|h| h.outlier).collect();
        assert_eq!(outliers.len(), 4);
        for h in outliers {
            let label = &h.cause.as_ref().expect("explained").label;
            assert!(
                label.starts_with(
                    "different hardware: CPU model Intel Xeon 8375C (typical host: AMD EPYC 7B13)"
                ),
                "{label}"
            );
        }
        assert_eq!(v.cause_groups.len(), 1);
    }
}
