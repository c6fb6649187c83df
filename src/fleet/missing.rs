//! The runs that did not measure every row of the fleet: a host whose run skipped a suite
//! (or whose results another setting left out of a row) is scored over the rows it has,
//! and the view says which runs those are and what they lack, so that a score over 18
//! rows is not read as one over 106.

use super::table::Table;
use super::Host;
use serde::Serialize;
use std::collections::BTreeMap;

/// A run that did not measure every row of the fleet (its score is over the rows it has).
#[derive(Debug, Clone, Serialize)]
pub struct Incomplete {
    pub run: String,
    /// The host as `Host::name` says it.
    pub host: String,
    /// Rows of the fleet it has no comparable result on.
    pub rows_missing: usize,
    /// Those rows per suite (the benchmark id's first part).
    pub suites: BTreeMap<String, usize>,
}

/// The runs of `hosts` missing rows of `t`, most missing first.
pub fn of(t: &Table, hosts: &[Host]) -> Vec<Incomplete> {
    let mut out: Vec<Incomplete> = hosts
        .iter()
        .filter_map(|h| {
            let mut suites: BTreeMap<String, usize> = BTreeMap::new();
            for (r, def) in t.rows.iter().enumerate() {
                if h.ratios.get(r).copied().flatten().is_none() {
                    let suite = def.benchmark.split('.').next().unwrap_or(&def.benchmark);
                    *suites.entry(suite.to_string()).or_default() += 1;
                }
            }
            let rows_missing: usize = suites.values().sum();
            (rows_missing > 0).then(|| Incomplete {
                run: h.run.clone(),
                host: h.name(),
                rows_missing,
                suites,
            })
        })
        .collect();
    out.sort_by(|a, b| {
        b.rows_missing
            .cmp(&a.rows_missing)
            .then(a.host.cmp(&b.host))
    });
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use crate::compare::testing::{result, timers_run};
    use crate::fleet::{view, Options};
    use crate::result::RunDocument;
    use serde_json::json;

    /// 12 hosts with a timers row and a ctx row; h3 has the timers row only (also the
    /// fixture of `report::fleet_text`'s test of the words it gets).
    pub(crate) fn one_skipped_ctx() -> Vec<RunDocument> {
        (0..12)
            .map(|i| {
                let f = 1.0 + 0.001 * i as f64;
                let mut d = timers_run(&format!("r{i}"), 20.0 * f, None);
                if i != 3 {
                    d.results.push(result(
                        "ctx.pipe@1",
                        "same-cpu",
                        None,
                        json!({}),
                        4000.0 * f,
                        true,
                    ));
                }
                d.host = Some(format!("h{i}"));
                d
            })
            .collect()
    }

    #[test]
    fn a_host_that_skipped_a_suite_is_named_with_the_rows_it_lacks() {
        let v = view(&one_skipped_ctx(), &Options::default());
        assert_eq!(v.rows.len(), 2);
        assert_eq!(v.incomplete.len(), 1, "{:?}", v.incomplete);
        let x = &v.incomplete[0];
        assert_eq!((x.host.as_str(), x.rows_missing), ("h3", 1));
        assert_eq!(x.suites.get("ctx"), Some(&1));
    }
}
