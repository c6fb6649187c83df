//! The effective CPU speed of a run: a short chain of dependent integer additions timed as
//! a batch on one CPU gives cycles per nanosecond (the effective clock in GHz on current
//! x86 and ARM cores, where such an add retires one per cycle). Sampled at the start and
//! end of each suite, on one CPU of each kind, so `compare` can tell a CPU-bound difference
//! that the clock explains from one it does not.

use serde::{Deserialize, Serialize};

/// Every speed sample of a run, in the order they were taken.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuSpeed {
    /// How the figure was measured, in words (shown beside it in reports).
    pub method: String,
    pub samples: Vec<SpeedSample>,
    /// Samples that could not be taken, each with its reason (a CPU that refused the pin).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unavailable: Vec<String>,
    /// The short canaries read before each round on the round's CPUs (0.5 ms batches, the
    /// best of 3), in the order read: dozens per run, from which `compare` knows the run's
    /// typical clock to a fraction of a percent. Absent in runs without rounds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub canaries: Vec<CanaryReading>,
    /// The pair canaries read before each round of a benchmark with a case pinned to two or
    /// more CPUs (the one-way cache-line latency between the first two CPUs of such a case,
    /// median of 5 short batches), in the order read: whether the host kept the two virtual
    /// CPUs on one core or placed them apart. Absent in runs without such rounds and in
    /// documents of earlier versions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pair_canaries: Vec<PairCanaryReading>,
}

/// Pair canary readings this many times apart (either way) mean the host placed the two
/// CPUs differently: on this 2-vCPU KVM guest a cache line took 21-24 ns between the vCPUs
/// on one core's SMT siblings and 119-120 ns between cores, and a quiet pair's readings
/// move by well under 1.5x. `run` flags such a round (`session::disturbance::pair_moved`),
/// `compare` such a run (`compare::causes::host_placement`).
pub const PAIR_RATIO: f64 = 1.5;

impl CpuSpeed {
    /// The typical pair canary reading for `cpus` (the median, ns) and how many readings
    /// it rests on; None without readings.
    pub fn pair_typical(&self, cpus: [u32; 2]) -> Option<(f64, usize)> {
        let v: Vec<f64> = self
            .pair_canaries
            .iter()
            .filter(|p| p.cpus == cpus && p.ns.is_finite() && p.ns > 0.0)
            .map(|p| p.ns)
            .collect();
        (!v.is_empty()).then(|| (super::rounds::median(&v), v.len()))
    }
}

/// One pair canary reading before a round.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PairCanaryReading {
    pub cpus: [u32; 2],
    /// One-way cache-line latency between them, ns.
    pub ns: f64,
}

/// One canary reading before a round.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CanaryReading {
    pub cpu: u32,
    /// Dependent integer adds per nanosecond.
    pub cycles_per_ns: f64,
}

/// When in the run a speed sample was taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SpeedPoint {
    Start,
    End,
}

impl SpeedPoint {
    /// `start` or `end`, as the JSON writes it.
    pub fn name(self) -> &'static str {
        match self {
            SpeedPoint::Start => "start",
            SpeedPoint::End => "end",
        }
    }
}

/// One effective-speed measurement on one CPU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpeedSample {
    /// The suite it belongs to (its start or end).
    pub suite: String,
    pub point: SpeedPoint,
    /// The CPU it ran pinned to.
    pub cpu: u32,
    /// The CPU's kind (as `env.topology.cpu_kinds` names it); absent on machines of one kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_kind: Option<String>,
    /// Dependent integer adds per nanosecond: the effective clock in GHz.
    pub cycles_per_ns: f64,
    /// Wall time of the measured chain, in nanoseconds.
    pub elapsed_ns: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_document_with_cpu_speed_round_trips_and_matches_the_schema() {
        let mut doc = crate::result::testing::run("run-1", vec![], crate::result::testing::env());
        let plain = serde_json::to_value(&doc).unwrap();
        assert!(plain.get("cpu_speed").is_none(), "absent when not measured");
        doc.cpu_speed = Some(CpuSpeed {
            method: "chain".into(),
            samples: vec![
                SpeedSample {
                    suite: "ctx".into(),
                    point: SpeedPoint::Start,
                    cpu: 0,
                    cpu_kind: None,
                    cycles_per_ns: 2.9,
                    elapsed_ns: 2.1e6,
                },
                SpeedSample {
                    suite: "ctx".into(),
                    point: SpeedPoint::End,
                    cpu: 4,
                    cpu_kind: Some("intel-atom".into()),
                    cycles_per_ns: 2.1,
                    elapsed_ns: 2.0e6,
                },
            ],
            unavailable: vec!["ctx end on CPU 5: refused".into()],
            canaries: vec![],
            pair_canaries: vec![PairCanaryReading {
                cpus: [0, 1],
                ns: 23.1,
            }],
        });
        let v = serde_json::to_value(&doc).unwrap();
        assert_eq!(v["cpu_speed"]["samples"][0]["point"], "start");
        assert_eq!(
            v["cpu_speed"]["pair_canaries"],
            serde_json::json!([{"cpus": [0, 1], "ns": 23.1}])
        );
        assert_eq!(
            doc.cpu_speed.as_ref().unwrap().pair_typical([0, 1]),
            Some((23.1, 1))
        );
        assert_eq!(doc.cpu_speed.as_ref().unwrap().pair_typical([1, 2]), None);
        assert!(v["cpu_speed"]["samples"][0].get("cpu_kind").is_none());
        let back = crate::result::validate(&v).unwrap();
        assert_eq!(back.cpu_speed, doc.cpu_speed);
        // The schema refuses what the type cannot mean.
        let mut bad = v.clone();
        bad["cpu_speed"]["samples"][0]["cycles_per_ns"] = serde_json::json!(0.0);
        assert!(crate::result::validate(&bad).is_err());
        let mut bad = v.clone();
        bad["cpu_speed"]["samples"][1]["point"] = serde_json::json!("middle");
        assert!(crate::result::validate(&bad).is_err());
        let mut bad = v.clone();
        bad["cpu_speed"]["pair_canaries"][0]["cpus"] = serde_json::json!([0, 1, 2]);
        assert!(crate::result::validate(&bad).is_err());
        // A document of an earlier version, without pair canaries, still loads.
        let mut old = v;
        old["cpu_speed"]
            .as_object_mut()
            .unwrap()
            .remove("pair_canaries");
        let back = crate::result::validate(&old).unwrap();
        assert!(back.cpu_speed.unwrap().pair_canaries.is_empty());
    }
}
