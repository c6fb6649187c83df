//! Rules over a placement matrix: what the unpinned (`os`) run really measured, judged by
//! where its tasks were seen and by the pinned figures it sits between.

use crate::finding::{Finding, Severity};
use crate::result::BenchResult;
use crate::units::num;

/// Colocated at least this often: the os run measured same-CPU switching.
pub const COLOCATED: f64 = 0.8;
/// Colocated at most this often: the os run paid the cross-CPU price.
pub const SPREAD: f64 = 0.2;

/// Pinned cross-CPU placements, nearest first: the figure an os run that spread would show.
pub const CROSS_ORDER: &[&str] = &[
    "same-llc",
    "smt-sibling",
    "cross-llc",
    "cross-package",
    "cross-node",
    "cpus",
];

/// What the two sides of an observed pair are, in a finding's words: `{share}` is replaced
/// by the percentage the message is about, `{between}` by the pinned figures the os run
/// sits between (or nothing), `{n}` by the number of observations with their noun
/// (`counted`: "1 fork", "40 forks").
pub struct PairWords {
    /// Side A and side B, for the CPUs-seen evidence.
    pub sides: [&'static str; 2],
    /// The evidence line of the colocated share.
    pub seen: &'static str,
    /// What one observation is called.
    pub counted: &'static str,
    pub colocated: &'static str,
    /// `{share}` here is the share apart.
    pub spread: &'static str,
    pub mixed: &'static str,
}

/// Two tasks passing a token (ctx, classic context-switch): observations are samples of
/// both tasks' CPUs.
pub const TASKS: PairWords = PairWords {
    sides: ["A", "B"],
    seen: "both tasks on one CPU in {share} of {n}",
    counted: "observation",
    colocated: "Unpinned, the scheduler kept both tasks on one CPU in {share} of observations: the os figure measures same-CPU switching, not communication between CPUs{between}. A machine whose scheduler spreads the pair will score far worse on the same hardware; compare the pinned rows.",
    spread: "Unpinned, the tasks ran on different CPUs in {share} of observations and pay the cross-CPU price{between}.",
    mixed: "Unpinned, the tasks shared one CPU in {share} of observations and ran apart in the rest: the os figure mixes same-CPU and cross-CPU costs{between}, and changes from run to run with the scheduler's choice.",
};

/// A parent forking children that exit at once (classic process-creation): an
/// observation is one fork, colocated when the child started on the CPU the fork ran on.
pub const FORKS: PairWords = PairWords {
    sides: ["parents", "children"],
    seen: "children started on the CPU of their fork in {share} of {n}",
    counted: "fork",
    colocated: "Unpinned, {share} of the forked children started on the CPU their parent forked on: the figure measures process creation kept on one CPU{between}. A scheduler that starts children on other CPUs gives another figure on the same hardware (each wait then ends with a wake-up across CPUs); the pinned pair=same-cpu row is the steady figure.",
    spread: "Unpinned, {share} of the forked children started on another CPU than the one their parent forked on, so each wait ended with a wake-up across CPUs{between}: the figure depends on where the scheduler starts children; the pinned pair=same-cpu row is the steady figure.",
    mixed: "Unpinned, {share} of the forked children started on the CPU their parent forked on and the rest on another CPU: the figure mixes both costs{between} and changes from run to run with the scheduler's choice; the pinned pair=same-cpu row is the steady figure.",
};

fn figure(r: &BenchResult) -> String {
    format!("{} {} {}", r.placement.name, num(r.stats.median), r.unit)
}

/// Explain the os result of one benchmark and mode, given the pinned results beside it
/// and the probe's findings (for `llc-not-shared`).
pub fn explain_os(os: &BenchResult, pinned: &[BenchResult], probe: &[Finding]) -> Option<Finding> {
    explain_pair(&TASKS, os, pinned, probe)
}

/// The findings `explain_pair` raises.
pub const PAIR_FINDINGS: &[&str] = &[
    "os-placement-colocated",
    "os-placement-spread",
    "os-placement-mixed",
];

/// Explain an os result whose observed pair is described by `words` (TASKS, FORKS): the
/// same rule and thresholds for every kind of pair.
pub fn explain_pair(
    words: &PairWords,
    os: &BenchResult,
    pinned: &[BenchResult],
    probe: &[Finding],
) -> Option<Finding> {
    let obs = os.placement.observed.as_ref()?;
    let frac = obs.colocated_fraction()?;
    let n = obs.observations();
    let say = |t: &str, share: f64, between: &str| {
        t.replace("{share}", &format!("{:.0}%", share * 100.0))
            .replace("{between}", between)
            .replace("{n}", &crate::units::count(n, words.counted))
    };
    let (seen_a, seen_b) = obs.sides().unwrap_or_default();
    let list = |v: &[u32]| serde_json::to_string(v).unwrap_or_default();
    let same = pinned.iter().find(|r| r.placement.name == "same-cpu");
    let cross = CROSS_ORDER.iter().find_map(|name| {
        pinned.iter().find(|r| {
            r.placement.name == *name
                && r.placement
                    .cpus
                    .as_ref()
                    .is_some_and(|c| c.len() == 2 && c[0] != c[1])
        })
    });
    let mut evidence = vec![
        format!(
            "os: {} {}, CV {:.0}%",
            num(os.stats.median),
            os.unit,
            os.stats.cv * 100.0
        ),
        say(words.seen, frac, ""),
        format!(
            "CPUs seen: {} {}, {} {}",
            words.sides[0],
            list(&seen_a),
            words.sides[1],
            list(&seen_b)
        ),
    ];
    evidence.extend(same.map(figure));
    evidence.extend(cross.map(figure));
    let between = match (same, cross) {
        (Some(s), Some(c)) => format!(
            " (same-cpu {} vs {} {}: {:.1}x apart)",
            num(s.stats.median),
            c.placement.name,
            num(c.stats.median),
            c.stats.median / s.stats.median
        ),
        _ => String::new(),
    };
    if frac >= COLOCATED {
        if let Some(f) = probe.iter().find(|f| f.id == "llc-not-shared") {
            evidence.push(format!("probe: llc-not-shared: {}", f.evidence.join("; ")));
        }
        Some(Finding::new(
            "os-placement-colocated",
            Severity::Warning,
            say(words.colocated, frac, &between),
            evidence,
        ))
    } else if frac <= SPREAD {
        Some(Finding::new(
            "os-placement-spread",
            Severity::Info,
            say(words.spread, 1.0 - frac, &between),
            evidence,
        ))
    } else {
        Some(Finding::new(
            "os-placement-mixed",
            Severity::Warning,
            say(words.mixed, frac, &between),
            evidence,
        ))
    }
}

/// On a hybrid machine: write the kind of every CPU the result ran on into what was
/// observed (`cpu_kinds`: kind -> CPUs), and when the result was not pinned and its tasks
/// ran on CPUs of several kinds, the `mixed-cpu-kinds` finding (its figure mixes fast
/// and slow cores, so it depends on where the scheduler happened to put them).
pub fn mixed_cpu_kinds(kinds: &[crate::probe::kinds::CpuKind], r: &mut BenchResult) {
    if kinds.is_empty() {
        return;
    }
    let mut seen = std::collections::BTreeSet::new();
    if let Some(o) = &r.placement.observed {
        seen.extend(o.all_cpus());
    }
    seen.extend(r.placement.cpus.iter().flatten().copied());
    let mut by_kind: std::collections::BTreeMap<usize, Vec<u32>> = Default::default();
    for c in &seen {
        if let Some(i) = kinds.iter().position(|k| k.cpus.contains(c)) {
            by_kind.entry(i).or_default().push(*c);
        }
    }
    let named: std::collections::BTreeMap<String, Vec<u32>> = by_kind
        .iter()
        .map(|(i, cpus)| (kinds[*i].kind.clone(), cpus.clone()))
        .collect();
    if let Some(o) = r.placement.observed.as_mut() {
        o.set_cpu_kinds(named);
    }
    let pinned = r.placement.cpus.is_some()
        && r.placement.observed.as_ref().and_then(|o| o.pinned()) != Some(false);
    if pinned || by_kind.len() < 2 {
        return;
    }
    let evidence = by_kind
        .iter()
        .map(|(i, cpus)| {
            format!(
                "ran on {} CPUs [{}] ({})",
                kinds[*i].kind,
                crate::probe::cpulist::format_list(cpus),
                kinds[*i].evidence.join("; ")
            )
        })
        .collect();
    r.findings.push(Finding::new(
        "mixed-cpu-kinds",
        Severity::Warning,
        format!(
            "This unpinned result ran on {} kinds of CPU: its figure mixes fast and slow cores in proportions the scheduler chose, so it can move between runs. Pin it to one kind (--cpus, --placement) to compare like with like.",
            by_kind.len()
        ),
        evidence,
    ));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::testing::result;
    use serde_json::json;

    fn r(name: &str, cpus: Option<Vec<u32>>, median: f64, frac: Option<f64>) -> BenchResult {
        let mut r = result("ctx.pipe@1", name, cpus, json!({}), median);
        r.placement.observed = frac.map(|f| {
            serde_json::from_value(json!({"relation": "test", "pinned": false,
                   "colocated_fraction": f, "observations": 10, "round_trips": 100,
                   "tasks": {"a": {"cpus_seen": [0], "migrations": 0, "voluntary_switches": 1, "involuntary_switches": 0},
                             "b": {"cpus_seen": [0, 1], "migrations": 1, "voluntary_switches": 1, "involuntary_switches": 0}}}))
            .unwrap()
        });
        r
    }

    fn pinned() -> Vec<BenchResult> {
        vec![
            r("same-cpu", Some(vec![0, 0]), 2000.0, Some(1.0)),
            r("same-llc", Some(vec![0, 1]), 50000.0, Some(0.0)),
        ]
    }

    #[test]
    fn colocated_os_cites_both_figures_and_the_llc_finding() {
        let os = r("os", None, 2100.0, Some(0.9));
        let llc = Finding::new(
            "llc-not-shared",
            Severity::Warning,
            "x",
            vec!["package 0: 4 cores".into()],
        );
        let f = explain_os(&os, &pinned(), &[llc]).unwrap();
        assert_eq!(f.id, "os-placement-colocated");
        assert!(f.message.contains("90%"), "{}", f.message);
        assert!(f.message.contains("25.0x apart"), "{}", f.message);
        assert!(f.evidence.iter().any(|e| e.starts_with("same-cpu 2000")));
        assert!(f.evidence.iter().any(|e| e.starts_with("same-llc 50000")));
        assert!(f
            .evidence
            .iter()
            .any(|e| e.contains("llc-not-shared: package 0")));
    }

    #[test]
    fn spread_and_mixed_os_runs() {
        let spread = explain_os(&r("os", None, 48000.0, Some(0.1)), &pinned(), &[]).unwrap();
        assert_eq!(spread.id, "os-placement-spread");
        assert!(spread.message.contains("90%"));
        let mixed = explain_os(&r("os", None, 20000.0, Some(0.5)), &pinned(), &[]).unwrap();
        assert_eq!(mixed.id, "os-placement-mixed");
    }

    #[test]
    fn no_observation_no_finding_and_alone_still_explained() {
        assert!(explain_os(&r("os", None, 2000.0, None), &pinned(), &[]).is_none());
        let alone = explain_os(&r("os", None, 2000.0, Some(1.0)), &[], &[]).unwrap();
        assert_eq!(alone.id, "os-placement-colocated");
        assert!(!alone.message.contains("apart"));
    }

    /// The same rule in the words of forks (classic process-creation): each share names
    /// the forked children and the sides are parents and children.
    #[test]
    fn forks_are_explained_in_their_own_words() {
        let os = |frac| {
            let mut o = r("os", None, 6000.0, Some(frac));
            o.benchmark = "classic.process-creation@3".into();
            o
        };
        let together = explain_pair(&FORKS, &os(0.9), &[], &[]).unwrap();
        assert_eq!(together.id, "os-placement-colocated");
        assert!(
            together
                .message
                .contains("90% of the forked children started on the CPU"),
            "{}",
            together.message
        );
        assert!(together
            .evidence
            .iter()
            .any(|e| e == "children started on the CPU of their fork in 90% of 10 forks"));
        assert!(together
            .evidence
            .iter()
            .any(|e| e == "CPUs seen: parents [0], children [0,1]"));
        let apart = explain_pair(&FORKS, &os(0.1), &[], &[]).unwrap();
        assert_eq!(apart.id, "os-placement-spread");
        assert!(apart
            .message
            .contains("90% of the forked children started on another CPU"));
        let mixed = explain_pair(&FORKS, &os(0.5), &[], &[]).unwrap();
        assert_eq!(mixed.id, "os-placement-mixed");
        assert!(mixed.message.contains("pair=same-cpu"));
        // Nothing observed (a pinned run, or an old document): no finding.
        assert!(explain_pair(&FORKS, &r("os", None, 6000.0, None), &[], &[]).is_none());
        // The tasks' words are unchanged.
        let tasks = explain_os(&r("os", None, 2100.0, Some(0.9)), &[], &[]).unwrap();
        assert!(tasks
            .evidence
            .contains(&"both tasks on one CPU in 90% of 10 observations".to_string()));
        assert!(tasks
            .evidence
            .contains(&"CPUs seen: A [0], B [0,1]".to_string()));
    }

    #[test]
    fn mixed_cpu_kinds_fires_on_unpinned_results_across_kinds_only() {
        let h = crate::probe::fixture("hybrid-laptop");
        let kinds = &h.topology.cpu_kinds;
        let pair = |pinned: bool, a: &[u32], b: &[u32]| -> crate::result::Observed {
            let task = |c: &[u32]| json!({"cpus_seen": c, "migrations": null, "voluntary_switches": null, "involuntary_switches": null});
            serde_json::from_value(json!({"relation": "test", "pinned": pinned, "observations": 10, "colocated_fraction": 0.0, "round_trips": 100, "tasks": {"a": task(a), "b": task(b)}})).unwrap()
        };
        let seen = |a: &[u32], b: &[u32]| pair(false, a, b);
        let kinds_of = |r: &BenchResult| {
            serde_json::to_value(r.placement.observed.as_ref().unwrap()).unwrap()["cpu_kinds"]
                .clone()
        };
        // Unpinned, seen on a P-core and an E-core: the finding, citing both kinds.
        let mut os = r("os", None, 2000.0, None);
        os.placement.observed = Some(seen(&[0, 1], &[13]));
        mixed_cpu_kinds(kinds, &mut os);
        let f = os
            .findings
            .iter()
            .find(|f| f.id == "mixed-cpu-kinds")
            .unwrap();
        assert!(
            f.evidence[0].contains("intel-core CPUs [0-1]"),
            "{:?}",
            f.evidence
        );
        assert!(f.evidence[1].contains("intel-atom CPUs [13]"));
        assert_eq!(kinds_of(&os)["intel-atom"], json!([13]));
        // Unpinned on P-cores only: kinds stated, no finding.
        let mut one = r("os", None, 2000.0, None);
        one.placement.observed = Some(seen(&[0], &[2]));
        mixed_cpu_kinds(kinds, &mut one);
        assert!(one.findings.is_empty());
        assert_eq!(kinds_of(&one)["intel-core"], json!([0, 2]));
        // Pinned across kinds on purpose: no finding.
        let mut p = r("cpus", Some(vec![0, 12]), 2000.0, None);
        p.placement.observed = Some(pair(true, &[0], &[12]));
        mixed_cpu_kinds(kinds, &mut p);
        assert!(p.findings.is_empty());
        // A machine of one kind: nothing at all.
        let mut plain = r("os", None, 2000.0, None);
        plain.placement.observed = Some(seen(&[0], &[13]));
        mixed_cpu_kinds(&[], &mut plain);
        assert!(plain.findings.is_empty());
        assert!(kinds_of(&plain).is_null());
    }
}
