//! Per-CPU-kind summaries for hybrid machines (Intel P/E cores, ARM big.LITTLE): c2c pairs
//! grouped by the kinds of their two CPUs, and classic copies grouped by the kind of CPU
//! each copy ran on. Nothing on machines of one kind.

use super::narrow_table;
use crate::probe::kinds::{kind_of, CpuKind};
use crate::result::{BenchResult, Observed};
use crate::units::num;
use std::collections::BTreeMap;

/// "intel-core", or "intel-core+intel-atom" for a pair across kinds (fastest kind first).
pub fn pair_kinds(kinds: &[CpuKind], a: u32, b: u32) -> String {
    let rank = |c: u32| kinds.iter().position(|k| k.cpus.contains(&c));
    let name = |c: u32| kind_of(kinds, c).unwrap_or("unknown").to_string();
    let (x, y) = if rank(a) <= rank(b) { (a, b) } else { (b, a) };
    if name(x) == name(y) {
        name(x)
    } else {
        format!("{}+{}", name(x), name(y))
    }
}

/// c2c: per kind pair, how many pairs and their median, min and max of the pair medians.
/// `pairs`: (cpu_a, cpu_b, median ns). Empty on a machine of one kind.
pub fn c2c_table(kinds: &[CpuKind], pairs: &[(u32, u32, f64)]) -> String {
    if kinds.is_empty() || pairs.is_empty() {
        return String::new();
    }
    let mut by: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for (a, b, ns) in pairs {
        by.entry(pair_kinds(kinds, *a, *b)).or_default().push(*ns);
    }
    let mut t = narrow_table(&["CPU kinds", "pairs", "median ns", "min ns", "max ns"]);
    for (k, v) in by {
        let Some(st) = crate::measure::stats::Stats::of(&v) else {
            continue;
        };
        t.add_row(vec![
            k,
            v.len().to_string(),
            num(st.median),
            num(st.min),
            num(st.max),
        ]);
    }
    format!("Per CPU kind (pairs by the kinds of their two CPUs):\n{t}\n")
}

/// classic: per test (name, result) and kind, the copies that stayed on CPUs of that kind
/// and their mean rate per copy; copies seen on several kinds are counted as "mixed".
pub fn classic_table(kinds: &[CpuKind], tests: &[(String, &BenchResult)]) -> String {
    if kinds.is_empty() {
        return String::new();
    }
    let mut t = narrow_table(&["test", "CPU kind", "copies", "rate per copy", "unit"]);
    let mut rows = 0;
    for (name, r) in tests {
        let Some(Observed::Copies(c)) = &r.placement.observed else {
            continue;
        };
        let mut by: BTreeMap<usize, (String, Vec<f64>)> = BTreeMap::new();
        for copy in &c.copies {
            let seen: std::collections::BTreeSet<usize> = copy
                .cpus_seen
                .iter()
                .filter_map(|cpu| kinds.iter().position(|k| k.cpus.contains(cpu)))
                .collect();
            let (rank, label) = match (seen.len(), seen.iter().next()) {
                (1, Some(i)) => (*i, kinds[*i].kind.clone()),
                _ => (usize::MAX, "mixed or unknown".to_string()),
            };
            let mean = copy.rates.iter().sum::<f64>() / copy.rates.len().max(1) as f64;
            if !copy.rates.is_empty() {
                by.entry(rank).or_insert((label, vec![])).1.push(mean);
            }
        }
        for (label, rates) in by.into_values() {
            let mean = rates.iter().sum::<f64>() / rates.len() as f64;
            t.add_row(vec![
                name.clone(),
                label,
                rates.len().to_string(),
                num(mean),
                r.unit.clone(),
            ]);
            rows += 1;
        }
    }
    if rows == 0 {
        return String::new();
    }
    format!("Per CPU kind (copies by the kind of CPU they ran on; mean of their passes):\n{t}\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::observed::{CopiesSeen, CopySeen};

    #[test]
    fn c2c_pairs_group_by_the_kinds_of_their_cpus_on_hybrid_machines_only() {
        let h = crate::probe::fixture("hybrid-laptop");
        let k = &h.topology.cpu_kinds;
        let (core, atom) = (k[0].cpus[0], k[1].cpus[0]);
        let (core2, atom2) = (k[0].cpus[2], k[1].cpus[1]);
        assert_eq!(
            pair_kinds(k, atom, core),
            format!("{}+{}", k[0].kind, k[1].kind)
        );
        assert_eq!(pair_kinds(k, core, core2), k[0].kind);
        let pairs = [
            (core, core2, 30.0),
            (atom, atom2, 50.0),
            (core, atom, 80.0),
            (atom2, core2, 90.0),
        ];
        let t = c2c_table(k, &pairs);
        let line = |kind: &str| {
            t.lines()
                .find(|l| l.contains(&format!(" {kind} ")))
                .unwrap()
        };
        assert!(line(&k[0].kind).contains(" 30.00 "), "{t}");
        assert!(line(&k[1].kind).contains(" 50.00 "), "{t}");
        let cross = t.lines().find(|l| l.contains('+')).unwrap();
        assert!(cross.contains(" 2 ") && cross.contains(" 85.00 "), "{t}");
        // One kind: nothing.
        let plain = crate::probe::fixture("this-vm");
        assert!(c2c_table(&plain.topology.cpu_kinds, &pairs).is_empty());
    }

    #[test]
    fn classic_copies_group_by_the_kind_they_ran_on() {
        let h = crate::probe::fixture("arm-biglittle");
        let k = &h.topology.cpu_kinds;
        assert!(k.len() >= 2);
        let copy = |cpus: &[u32], rate: f64| CopySeen {
            cpus_seen: cpus.iter().copied().collect(),
            rates: vec![rate, rate],
            partner_cpus_seen: None,
        };
        let mut r = crate::result::testing::result(
            "classic.dhrystone@1",
            "os",
            None,
            serde_json::json!({"copies": 3}),
            100.0,
        );
        r.placement.observed = Some(Observed::Copies(CopiesSeen {
            copies: vec![
                copy(&[k[0].cpus[0]], 300.0),
                copy(&[k[1].cpus[0]], 100.0),
                copy(&[k[0].cpus[0], k[1].cpus[1]], 200.0),
            ],
            observations: None,
            colocated_fraction: None,
            tasks: None,
            cpu_kinds: None,
        }));
        let t = classic_table(k, &[("dhrystone".into(), &r)]);
        let line = |kind: &str| t.lines().find(|l| l.contains(kind)).unwrap().to_string();
        assert!(line(&k[0].kind).contains("300"), "{t}");
        assert!(line(&k[1].kind).contains("100"), "{t}");
        assert!(line("mixed").contains("200"), "{t}");
        assert!(classic_table(&[], &[("dhrystone".into(), &r)]).is_empty());
    }
}
