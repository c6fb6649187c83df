//! A `truebench loadstep` experiment as stored: its plan, per variant (policy x workers x
//! capacity) the steps, knee and fits, which variant won each step, the scaling curve
//! across worker counts, and what could not be measured. The parts loadstep computes
//! (variants, comparison, scaling) are its own types, stored here as they are.

use crate::loadstep::experiment::{Comparison, Knee, Scaling, VariantResult};
use crate::loadstep::model::Fit;
use crate::loadstep::step::StepSummary;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// Planned rates, messages per second, in order.
    pub rates: Vec<f64>,
    pub warmup_s: f64,
    pub step_duration_s: f64,
    pub workers: Vec<usize>,
    pub service_us: f64,
    pub footprint_kb: usize,
    pub policies: Vec<String>,
    pub repeat: usize,
    pub seed: u64,
    /// The variants in the (shuffled) order they ran.
    pub order: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Knees {
    pub latency: Option<Knee>,
    pub cost: Option<Knee>,
}

/// With a single variant, its steps, knees and fits repeated at the top level (as earlier
/// versions wrote them, for scripts that read them there).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SingleVariant {
    pub steps: Vec<StepSummary>,
    pub knee: Knees,
    pub usl: Option<Fit>,
    pub amdahl: Option<Fit>,
}

/// Each step list of `e` holds each planned rate once (a list given twice made `predict`
/// fit twice the steps and narrow its interval), and each capacity setting is one the
/// kernel takes (a period of 0 gave "a quota from inf"): None, or why not.
pub fn check(e: &Experiment) -> Option<String> {
    let once = |what: String, steps: &[StepSummary]| {
        let mut seen = std::collections::HashSet::new();
        steps
            .iter()
            .find(|s| !seen.insert(s.planned_rate.to_bits()))
            .map(|s| {
                // As a person reads it: a hand-edited rate of 1e300 is not 300 digits.
                let rate = crate::units::num(s.planned_rate);
                format!("{what} holds the step at {rate}/s twice")
            })
    };
    let single = e
        .single
        .as_ref()
        .map(|s| ("loadstep.steps".to_string(), &s.steps));
    let variants = e.variants.iter().enumerate().flat_map(|(i, v)| {
        std::iter::once((format!("loadstep.variants[{i}].steps"), &v.steps)).chain(
            v.repeats
                .iter()
                .enumerate()
                .map(move |(j, r)| (format!("loadstep.variants[{i}].repeats[{j}]"), r)),
        )
    });
    if let Some(why) = single
        .into_iter()
        .chain(variants)
        .find_map(|(what, steps)| once(what, steps))
    {
        return Some(why);
    }
    e.variants.iter().enumerate().find_map(|(i, v)| {
        v.capacity.and_then(|c| {
            c.check()
                .err()
                .map(|why| format!("loadstep.variants[{i}].capacity: {why}"))
        })
    })
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Experiment {
    /// `mq` or `http`.
    pub workload: String,
    /// The URL of an http workload.
    pub target: Option<String>,
    pub plan: Plan,
    pub variants: Vec<VariantResult>,
    pub comparison: Option<Comparison>,
    pub scaling: Option<Scaling>,
    /// Costs per transaction that could not be measured, with the reason.
    pub unavailable: BTreeMap<String, String>,
    #[serde(flatten)]
    pub single: Option<SingleVariant>,
}

impl Experiment {
    /// An experiment from its parts; the single-variant copy is filled in here.
    pub fn new(
        workload: String,
        target: Option<String>,
        plan: Plan,
        variants: Vec<VariantResult>,
        comparison: Option<Comparison>,
        scaling: Option<Scaling>,
        unavailable: BTreeMap<String, String>,
    ) -> Experiment {
        let single = match variants.as_slice() {
            [only] => Some(SingleVariant {
                steps: only.steps.clone(),
                knee: Knees {
                    latency: only.knee_latency.clone(),
                    cost: only.knee_cost.clone(),
                },
                usl: only.usl.clone(),
                amdahl: only.amdahl.clone(),
            }),
            _ => None,
        };
        Experiment {
            workload,
            target,
            plan,
            variants,
            comparison,
            scaling,
            unavailable,
            single,
        }
    }
}
