//! The fleet's noise hook (`outliers::RowNoise`) fed by `compare`'s noise model: for each
//! host, its calibration, else its stored history of the row (`noise_model::NoiseModel`).
//! It serves documents without rounds (the rounds of a run give its own noise first): a
//! host's σ on a row is the noise its deviation must also exceed, and the row's minimum
//! detectable effect for one run (α 0.05, power 0.8) raises the practical floor. A row
//! neither covers adds nothing: the fleet's own spread already holds every host's
//! run-to-run noise once (each host ran once), so nothing is assumed for it.

use super::outliers::RowNoise;
use super::table::RowDef;
use crate::compare::stats::noise_model::{mde_log, NoiseModel};
use crate::result::RunDocument;
use std::collections::BTreeMap;

/// The noise models of a fleet's hosts, by host name.
pub struct HostModels(pub BTreeMap<String, NoiseModel>);

impl HostModels {
    fn noise(
        &self,
        run: &RunDocument,
        row: &RowDef,
    ) -> Option<crate::compare::stats::noise_model::RowNoise> {
        self.0.get(run.host.as_deref()?)?.measured(&row.key)
    }
}

impl RowNoise for HostModels {
    fn sigma(&self, run: &RunDocument, row: &RowDef) -> Option<f64> {
        self.noise(run, row)?.sigma
    }

    fn df(&self, run: &RunDocument, row: &RowDef) -> Option<f64> {
        self.noise(run, row).and_then(|n| n.df())
    }

    fn floor(&self, run: &RunDocument, row: &RowDef) -> Option<f64> {
        let n = self.noise(run, row)?;
        Some(mde_log(n.sigma?, n.df()).exp_m1())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::compare::testing::timers_run;
    use crate::fleet::{view, Options};

    #[test]
    fn a_host_whose_calibration_covers_its_deviation_is_not_an_outlier_and_one_without_is() {
        // Twelve hosts within 1%; two at 1.5x, one of them calibrated as noisy on that row.
        let docs: Vec<RunDocument> = (0..12)
            .map(|i| {
                let f = match i {
                    3 | 7 => 1.5,
                    _ => 1.0 + 0.001 * i as f64,
                };
                let mut d = timers_run(&format!("r{i}"), f, None);
                d.host = Some(format!("h{i}"));
                d
            })
            .collect();
        let plain = view(&docs, &Options::default());
        let out = |v: &crate::fleet::FleetView| -> Vec<String> {
            let mut o: Vec<String> = v
                .hosts
                .iter()
                .filter(|h| h.outlier)
                .map(|h| h.run.clone())
                .collect();
            o.sort();
            o
        };
        assert_eq!(out(&plain), vec!["r3", "r7"]);
        assert!(plain.outlier_calls.is_none());
        // h3's calibration: its rows moved 40% between runs (log sd 0.4).
        let cal: Vec<RunDocument> = [1.0, 1.6, 0.8, 1.3, 0.7]
            .iter()
            .map(|f| timers_run("c", *f, None))
            .collect();
        let models = HostModels(BTreeMap::from([(
            "h3".to_string(),
            NoiseModel::new("h3", Some(("cal", &cal)), &[]),
        )]));
        let noisy = view(
            &docs,
            &Options {
                noise: Some(&models),
                ..Options::default()
            },
        );
        assert_eq!(out(&noisy), vec!["r7"]);
    }

    /// Four hosts, one 5x slower: below the fleet size outliers are called at (also the
    /// fixture of `report::fleet_text`'s test of the words it gets).
    pub(crate) fn four_hosts() -> Vec<RunDocument> {
        (0..4)
            .map(|i| timers_run(&format!("r{i}"), if i == 0 { 5.0 } else { 1.0 }, None))
            .collect()
    }

    #[test]
    fn a_fleet_below_the_minimum_says_it_calls_no_outlier() {
        let v = view(&four_hosts(), &Options::default());
        assert!(v.hosts.iter().all(|h| !h.outlier));
        let why = v.outlier_calls.clone().unwrap();
        assert!(why.contains("4 hosts, fewer than 10"), "{why}");
    }
}
