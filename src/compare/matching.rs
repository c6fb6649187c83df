//! Row matching: which result of run B measured the same thing as a result of run A. Two
//! results match on what was measured (benchmark id, the params that define the
//! measurement, the placement) and, for suites of parallel copies, on the copies' ROLE (one
//! copy, or all the CPUs the run could use), never on descriptive text such as
//! `copies_basis`: a 2-CPU run's 2-copy row and a quota-limited run's 1-copy full-width row
//! are both "all usable CPUs". Params that are settings of the same measurement (window,
//! plan, array size) do not prevent a match; comparability says they differ.

use crate::result::params::key;
use crate::result::{BenchResult, Params, RunDocument};
use serde::Serialize;
use std::collections::{HashMap, HashSet};

/// Params that describe a result without defining what it measured: the copy count (its
/// role is matched instead), what the copy count was derived from, sizes of the exec'd
/// binary, how a memory-only node's CPU node was chosen, and how many passes a classic
/// test drew (`passes` in one piece, as earlier versions measured it, `passes_per_round` in
/// rounds): how many samples estimate the figure, not what it is (the sample counts of
/// results measured in one piece are compared by `comparability`).
pub const DESCRIPTIVE: &[&str] = &[
    key::COPIES,
    "copies_per_cpu",
    "copies_basis",
    "exec_target_bytes",
    "mem_node_kind",
    "cpu_node_chosen_by",
    "passes",
    "passes_per_round",
];

/// Params that are settings of one measurement: results that differ only in them still
/// match, and comparability says the settings differ (no verdict).
pub const SETTINGS: &[&str] = &["window_s", "plan", "array_bytes"];

/// The part a result's copies play in its run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    /// One copy.
    One,
    /// As many copies as the CPUs the run could use (its full width N).
    All,
    /// k copies per usable CPU.
    PerCpu(u64),
    /// A copy count that is none of the above.
    Exactly(u64),
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            Role::One => write!(f, "1 copy"),
            Role::All => write!(f, "all usable CPUs"),
            Role::PerCpu(k) => write!(f, "{k} copies per usable CPU"),
            Role::Exactly(n) => write!(f, "{n} copies"),
        }
    }
}

/// The full-width copy count of a run: the classic suite's own N when it recorded one, else
/// the CPU capacity rounded up (usable CPUs narrowed by a quota), at least 1.
pub fn full_width(doc: &RunDocument) -> u64 {
    doc.indexes
        .as_ref()
        .map(|i| i.n)
        .filter(|n| *n > 0)
        .unwrap_or_else(|| (doc.env.cpus.capacity.ceil() as u64).max(1))
}

/// A result's copy count, when it ran parallel copies.
pub fn copies(r: &BenchResult) -> Option<u64> {
    r.params.copies()
}

/// The roles of a result in its run, most specific first; empty for results without
/// copies. A 1-copy result of a run whose full width is 1 plays both roles.
pub fn roles(doc: &RunDocument, r: &BenchResult) -> Vec<Role> {
    let Some(c) = copies(r) else {
        return vec![];
    };
    let n = full_width(doc);
    let mut v = vec![];
    if c == 1 {
        v.push(Role::One);
    }
    if c == n {
        v.push(Role::All);
    } else if c > n && c % n == 0 {
        v.push(Role::PerCpu(c / n));
    }
    if v.is_empty() {
        v.push(Role::Exactly(c));
    }
    v
}

/// The params that identify the measurement (without descriptive params and settings).
pub fn identity(r: &BenchResult) -> Params {
    Params(
        r.params
            .0
            .iter()
            .filter(|(k, _)| !DESCRIPTIVE.contains(&k.as_str()) && !SETTINGS.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    )
}

/// The identity without the pinned-pair variant param: the params shared by an unpinned
/// pair result and its pinned siblings.
pub fn identity_without_pair(r: &BenchResult) -> Params {
    let mut p = identity(r);
    p.0.remove(key::PAIR);
    p
}

/// One result of A and the result of B that measured the same thing, and the role they
/// share (for copies).
#[derive(Debug, Clone, Copy)]
pub struct Match<'a> {
    pub a: &'a BenchResult,
    pub b: &'a BenchResult,
    pub role: Option<Role>,
}

/// The shared role of two results, the first of A's roles that B plays too; Some(None)
/// when neither ran copies; None when they play no common role.
fn shared_role(
    a: &RunDocument,
    ra: &BenchResult,
    b: &RunDocument,
    rb: &BenchResult,
) -> Option<Option<Role>> {
    let (ka, kb) = (roles(a, ra), roles(b, rb));
    match (ka.is_empty(), kb.is_empty()) {
        (true, true) => Some(None),
        (false, false) => ka.iter().find(|k| kb.contains(k)).map(|k| Some(*k)),
        _ => None,
    }
}

/// Whether two results measured the same thing (any version of the benchmark).
fn same_measurement(ra: &BenchResult, rb: &BenchResult) -> bool {
    ra.base_id() == rb.base_id()
        && ra.placement.name == rb.placement.name
        && identity(ra) == identity(rb)
}

/// What a match is looked up by: the benchmark without its version, the placement, and the
/// identity params as canonical JSON (a BTreeMap, so in key order).
type MeasurementKey = (String, String, String);

fn measurement_key(r: &BenchResult) -> MeasurementKey {
    (
        r.base_id().to_string(),
        r.placement.name.clone(),
        serde_json::to_string(&identity(r)).unwrap_or_default(),
    )
}

/// The results of one run indexed for matching, built once per run: each lookup costs
/// a few hash probes, so pairing two runs is linear in their results (a scan of B per
/// result of A took 85 s for 4,000 against 8,000 results).
pub struct MatchIndex<'a> {
    doc: &'a RunDocument,
    /// (measurement, role or None without copies) -> the first result in document order.
    first: HashMap<(MeasurementKey, Option<Role>), usize>,
    /// The same, per exact benchmark id (version included).
    first_exact: HashMap<(MeasurementKey, String, Option<Role>), usize>,
}

impl<'a> MatchIndex<'a> {
    pub fn new(doc: &'a RunDocument) -> MatchIndex<'a> {
        let mut first = HashMap::new();
        let mut first_exact = HashMap::new();
        for (i, r) in doc.results.iter().enumerate() {
            let key = measurement_key(r);
            let roles = roles(doc, r);
            let played: Vec<Option<Role>> = match roles.is_empty() {
                true => vec![None],
                false => roles.into_iter().map(Some).collect(),
            };
            for role in played {
                first.entry((key.clone(), role)).or_insert(i);
                first_exact
                    .entry((key.clone(), r.benchmark.clone(), role))
                    .or_insert(i);
            }
        }
        MatchIndex {
            doc,
            first,
            first_exact,
        }
    }

    /// The result of this run matching `ra` of `a`: the same measurement in a shared role,
    /// the same benchmark version preferred, else the first in document order.
    pub fn find(
        &self,
        a: &RunDocument,
        ra: &BenchResult,
    ) -> Option<(&'a BenchResult, Option<Role>)> {
        let key = measurement_key(ra);
        let wanted: Vec<Option<Role>> = match roles(a, ra) {
            r if r.is_empty() => vec![None],
            r => r.into_iter().map(Some).collect(),
        };
        let earliest = |lookup: &dyn Fn(Option<Role>) -> Option<usize>| {
            wanted.iter().filter_map(|k| lookup(*k)).min()
        };
        let i = earliest(&|k| {
            self.first_exact
                .get(&(key.clone(), ra.benchmark.clone(), k))
                .copied()
        })
        .or_else(|| earliest(&|k| self.first.get(&(key.clone(), k)).copied()))?;
        let rb = &self.doc.results[i];
        // Re-checked exactly (the key is canonical JSON of the same values); the role is
        // the first of A's that B's result plays.
        if !same_measurement(ra, rb) {
            return None;
        }
        shared_role(a, ra, self.doc, rb).map(|role| (rb, role))
    }
}

/// The result of `b` matching `ra` of `a` (see [`MatchIndex::find`]; build the index once
/// when looking up many results).
pub fn find<'a>(
    a: &RunDocument,
    ra: &BenchResult,
    b: &'a RunDocument,
) -> Option<(&'a BenchResult, Option<Role>)> {
    MatchIndex::new(b).find(a, ra)
}

/// Every result of A with its match in B; A's results without one; B's results that no
/// result of A matched.
pub struct Pairing<'a> {
    pub matched: Vec<Match<'a>>,
    pub only_a: Vec<&'a BenchResult>,
    pub only_b: Vec<&'a BenchResult>,
}

pub fn pair_up<'a>(a: &'a RunDocument, b: &'a RunDocument) -> Pairing<'a> {
    let index = MatchIndex::new(b);
    let mut matched = vec![];
    let mut only_a = vec![];
    for ra in &a.results {
        match index.find(a, ra) {
            Some((rb, role)) => matched.push(Match { a: ra, b: rb, role }),
            None => only_a.push(ra),
        }
    }
    let taken: HashSet<*const BenchResult> = matched.iter().map(|m| m.b as *const _).collect();
    let only_b = b
        .results
        .iter()
        .filter(|rb| !taken.contains(&(*rb as *const _)))
        .collect();
    Pairing {
        matched,
        only_a,
        only_b,
    }
}

/// The result in `doc` of the same benchmark, params (but the pinned-pair variant) and role
/// as `r`, at placement `placement`: an unpinned result's pinned sibling.
pub fn sibling<'a>(
    doc: &'a RunDocument,
    r: &BenchResult,
    placement: &str,
) -> Option<&'a BenchResult> {
    let want = identity_without_pair(r);
    let role = roles(doc, r);
    doc.results.iter().find(|s| {
        s.benchmark == r.benchmark
            && s.placement.name == placement
            && identity_without_pair(s) == want
            && (role.is_empty() || roles(doc, s).iter().any(|k| role.contains(k)))
    })
}

/// Why `doc` has no result for a case, when it says so (its `skipped` list): a skipped
/// case of the same benchmark that names the result's placement, or whose `key=value`
/// params (`pages=thp`) the result has.
pub fn skipped_reason(doc: &RunDocument, r: &BenchResult) -> Option<String> {
    let params = r.params_text();
    let mine: Vec<&str> = params.split(',').collect();
    let names_params = |case: &str| {
        let kv: Vec<&str> = case.split([',', ' ']).filter(|t| t.contains('=')).collect();
        !kv.is_empty() && kv.iter().all(|t| mine.contains(t))
    };
    doc.skipped
        .iter()
        .find(|s| {
            s.benchmark == r.benchmark
                && (s.case.contains(&r.placement.name) || names_params(&s.case))
        })
        .map(|s| s.reason.clone())
}

/// A result's key as the rows name it: `benchmark [placement] params`.
pub fn label(r: &BenchResult) -> String {
    r.label()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::testing;
    use serde_json::json;

    fn classic(copies: u64, basis: &str) -> BenchResult {
        testing::result(
            "classic.dhrystone@1",
            "os",
            None,
            json!({"copies": copies, "copies_basis": basis, "passes": 5, "plan": "quick", "window_s": 0.5}),
            100.0,
        )
    }

    fn run_with_width(results: Vec<BenchResult>, quota: Option<f64>) -> RunDocument {
        let mut env = testing::env();
        env.cpus.cgroup_quota = quota;
        env.cpus.capacity = quota.unwrap_or(env.cpus.usable_width as f64);
        testing::run("x", results, env)
    }

    #[test]
    fn copies_match_by_role_not_by_their_basis_text() {
        let a = run_with_width(
            vec![
                classic(1, "1 copies: asked with --copies"),
                classic(2, "2 copies: the usable CPUs"),
            ],
            None,
        );
        let b = run_with_width(
            vec![classic(
                1,
                "1 copies: the cgroup quota of 0.50 CPUs rounded up, narrower than the 2 usable CPUs",
            )],
            Some(0.5),
        );
        let p = pair_up(&a, &b);
        assert_eq!(p.matched.len(), 2, "both A rows find B's one row");
        assert_eq!(p.matched[0].role, Some(Role::One));
        assert_eq!(p.matched[1].role, Some(Role::All));
        assert!(p.only_a.is_empty() && p.only_b.is_empty());
    }

    #[test]
    fn different_measurements_do_not_match() {
        let a = run_with_width(vec![classic(2, "x")], None);
        // B's 2 copies are not its full width under a quota of 1: no shared role.
        let b = run_with_width(vec![classic(2, "x")], Some(1.0));
        assert!(pair_up(&a, &b).matched.is_empty());
        let size = |s: u64| {
            testing::result(
                "memory.latency@1",
                "cpus",
                Some(vec![0]),
                json!({"size_bytes": s, "pages": "4k"}),
                10.0,
            )
        };
        let a = run_with_width(vec![size(4096)], None);
        let b = run_with_width(vec![size(8192)], None);
        let p = pair_up(&a, &b);
        assert!(p.matched.is_empty());
        assert_eq!((p.only_a.len(), p.only_b.len()), (1, 1));
    }

    #[test]
    fn a_case_skipped_by_its_params_gives_its_reason() {
        let thp = testing::result(
            "memory.latency@1",
            "cpus",
            Some(vec![0]),
            json!({"size_bytes": 1 << 21, "pages": "thp"}),
            10.0,
        );
        let mut b = run_with_width(vec![], None);
        assert_eq!(skipped_reason(&b, &thp), None);
        b.skipped.push(crate::result::Skipped {
            benchmark: "memory.latency@1".into(),
            case: "pages=thp".into(),
            reason: "transparent huge pages are never".into(),
        });
        assert_eq!(
            skipped_reason(&b, &thp).as_deref(),
            Some("transparent huge pages are never")
        );
        let mut small = thp.clone();
        small.params.insert("pages", "4k");
        assert_eq!(skipped_reason(&b, &small), None);
    }

    #[test]
    fn settings_differ_but_still_match() {
        let mut full = classic(1, "x");
        full.params.insert("passes", 10u64);
        let a = run_with_width(vec![classic(1, "x")], None);
        let b = run_with_width(vec![full], None);
        assert_eq!(pair_up(&a, &b).matched.len(), 1);
    }
}
