//! NUMA allocation and balancing counters from /proc/vmstat: where allocations were served
//! (`numa_hit`, `numa_miss`, `numa_foreign`, `numa_local`, `numa_other`, `numa_interleave`,
//! with CONFIG_NUMA) and what automatic NUMA balancing did (`numa_pte_updates`,
//! `numa_hint_faults`, `numa_pages_migrated`..., with CONFIG_NUMA_BALANCING), plus page
//! migration and tiering counts (`pgmigrate_*`, `pgpromote_*`, `pgdemote_*`). Cumulative
//! since boot; the recording keeps their deltas per interval.

use std::collections::BTreeMap;

/// Counters the recording expects, with why a kernel may lack each.
pub const EXPECTED: &[(&str, &str)] = &[
    ("numa_hit", "kernel without CONFIG_NUMA"),
    ("numa_miss", "kernel without CONFIG_NUMA"),
    ("numa_foreign", "kernel without CONFIG_NUMA"),
    ("numa_local", "kernel without CONFIG_NUMA"),
    ("numa_other", "kernel without CONFIG_NUMA"),
    ("numa_pte_updates", "kernel without CONFIG_NUMA_BALANCING"),
    ("numa_hint_faults", "kernel without CONFIG_NUMA_BALANCING"),
    (
        "numa_pages_migrated",
        "kernel without CONFIG_NUMA_BALANCING",
    ),
];

fn is_numa(name: &str) -> bool {
    ["numa_", "pgmigrate_", "pgpromote_", "pgdemote_"]
        .iter()
        .any(|p| name.starts_with(p))
}

/// The NUMA counters of a /proc/vmstat text (`name value` lines; other lines, and values
/// that are not counts, are left out).
pub fn parse(text: &str) -> BTreeMap<String, u64> {
    text.lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let (name, value) = (f.next()?, f.next()?);
            if f.next().is_some() || !is_numa(name) {
                return None;
            }
            Some((name.to_string(), value.parse().ok()?))
        })
        .collect()
}

/// Counts between two readings, for the counters present in both (a counter that went
/// backwards, as after a hot-unplugged node's stats are folded, counts 0).
pub fn deltas(a: &BTreeMap<String, u64>, b: &BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    b.iter()
        .filter_map(|(k, v)| Some((k.clone(), v.saturating_sub(*a.get(k)?))))
        .collect()
}

/// The expected counters absent from a reading, each with its reason.
pub fn missing(read: &BTreeMap<String, u64>, readable: bool) -> Vec<(String, String)> {
    EXPECTED
        .iter()
        .filter(|(k, _)| !read.contains_key(*k))
        .map(|(k, why)| {
            let why = if readable {
                format!("not in /proc/vmstat ({why})")
            } else {
                "/proc/vmstat unreadable".to_string()
            };
            (k.to_string(), why)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_real_vmstat_has_the_numa_counters() {
        // /proc/vmstat captured on the project's one-node VM (kernel 6.x).
        let m = parse(include_str!("../../tests/fixtures/proc/vmstat"));
        for (k, _) in EXPECTED {
            assert!(m.contains_key(*k), "{k} missing from {m:?}");
        }
        assert_eq!(m["numa_miss"], 0);
        assert!(m["numa_hit"] > 0 && m["numa_hit"] == m["numa_local"]);
        assert!(m.contains_key("pgmigrate_success"));
        assert!(!m.contains_key("nr_free_pages"));
        assert!(missing(&m, true).is_empty());
    }

    #[test]
    fn hostile_lines_and_deltas() {
        let a = parse("numa_hit 100\nnuma_miss x\nnuma_local 90 91\nnuma_other\nnuma_foreign -3\n");
        assert_eq!(a, BTreeMap::from([("numa_hit".to_string(), 100)]));
        let b = parse("numa_hit 150\nnuma_miss 4\nnr_dirty 5\n");
        // numa_miss is not in the first reading: no delta rather than 4.
        assert_eq!(
            deltas(&a, &b),
            BTreeMap::from([("numa_hit".to_string(), 50)])
        );
        assert_eq!(
            deltas(&b, &a),
            BTreeMap::from([("numa_hit".to_string(), 0)])
        );
    }

    #[test]
    fn a_kernel_without_numa_balancing_lists_its_counters_with_a_reason() {
        let m = parse("numa_hit 1\nnuma_miss 0\nnuma_foreign 0\nnuma_local 1\nnuma_other 0\n");
        let gone = missing(&m, true);
        assert_eq!(gone.len(), 3, "{gone:?}");
        assert!(gone
            .iter()
            .all(|(_, why)| why.contains("CONFIG_NUMA_BALANCING")));
        assert_eq!(missing(&BTreeMap::new(), false).len(), EXPECTED.len());
    }
}
