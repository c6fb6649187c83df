//! Persistent and transient disturbances: which of what disturbed a row's rounds was a
//! condition of the whole run, and which a burst in some of its rounds.
//!
//! A round is judged against absolute limits (other tasks' share of its CPUs, the
//! hypervisor's steal: `session::disturbance::judge`). A neighbour that runs for the whole run,
//! a loud host, passes those limits in every round, and setting every round aside would
//! leave the row nothing but the disturbance it was set aside for: such a run is *what B
//! is*, and `compare` must call the difference it makes and name it. A burst that hits a
//! few rounds is noise: those rounds are set aside, as before.
//!
//! The rule, per row and per cause (only causes judged against an absolute limit can
//! persist: a canary slower than the run's typical, the host's placement against the
//! run's typical pair reading and an outlier round are departures from the run itself):
//!
//! - the cause disturbed at least [`SHARE`] of the row's rounds, and the row has at least
//!   [`MIN_ROUNDS`] rounds (two rounds cannot tell "throughout" from "twice");
//! - its size was steady: the interquartile range of its figure over the row's rounds
//!   (recorded in every round, past the limit or below it; in a document of an earlier
//!   version only where it disturbed) is at most [`SPREAD`] of its median.
//!
//! A persistent cause's disturbances are marked (`Disturbance::persistent`) and its rounds
//! kept; a round another, transient, cause disturbed is still set aside.

use super::{Cause, Round};

/// A cause persists when it disturbed at least this share of the row's rounds ...
pub const SHARE: f64 = 0.8;
/// ... of at least this many rounds ...
pub const MIN_ROUNDS: usize = 3;
/// ... and the interquartile range of its figure over the rounds is at most this share of
/// its median: a neighbour taking 40-45% of the CPUs in every round persists, one taking
/// 12% in some rounds and 60% in others comes and goes.
pub const SPREAD: f64 = 0.5;

/// Whether `cause` is judged against an absolute limit, so that it can be present
/// throughout a run (other tasks, steal, and the CPU pressure of earlier versions).
pub fn can_persist(cause: Cause) -> bool {
    matches!(cause, Cause::OtherTasks | Cause::Steal | Cause::Pressure)
}

/// A cause's figure in one round: the share recorded in every round where there is one
/// (other tasks, steal), else its disturbance's value (None where it did not disturb).
fn figure(r: &Round, cause: Cause) -> Option<f64> {
    let recorded = match cause {
        Cause::OtherTasks => r.others.as_ref().map(|o| o.percent),
        Cause::Steal => r.steal,
        _ => None,
    };
    r.figure_or_disturbance(recorded, cause)
}

/// The quartiles' distance over the median of `x` (None for an empty list or a median of
/// zero).
fn relative_iqr(x: &[f64]) -> Option<f64> {
    let mut v = x.to_vec();
    v.sort_by(f64::total_cmp);
    let q = |p: f64| {
        let at = p * (v.len() - 1) as f64;
        let (lo, hi) = (at.floor() as usize, at.ceil() as usize);
        v[lo] + (v[hi] - v[lo]) * (at - lo as f64)
    };
    let m = q(0.5);
    (!v.is_empty() && m > 0.0).then(|| (q(0.75) - q(0.25)) / m)
}

/// The causes present throughout `rounds` (a row's, in the order they ran) at a steady
/// size, by the rule of this module.
pub fn persistent_causes(rounds: &[Round]) -> Vec<Cause> {
    let n = rounds.len();
    if n < MIN_ROUNDS {
        return vec![];
    }
    let mut causes: Vec<Cause> = rounds
        .iter()
        .flat_map(|r| r.disturbed.iter().map(|d| d.cause))
        .filter(|c| can_persist(*c))
        .collect();
    causes.sort();
    causes.dedup();
    causes
        .into_iter()
        .filter(|cause| {
            let hit = rounds
                .iter()
                .filter(|r| r.disturbed.iter().any(|d| d.cause == *cause))
                .count();
            let sizes: Vec<f64> = rounds.iter().filter_map(|r| figure(r, *cause)).collect();
            hit as f64 >= SHARE * n as f64 && relative_iqr(&sizes).is_some_and(|s| s <= SPREAD)
        })
        .collect()
}

/// Mark the disturbances of the causes persistent over `rounds` (and only those: a mark
/// the rule no longer gives is taken off). Returns whether any mark changed.
pub fn mark(rounds: &mut [Round]) -> bool {
    let persistent = persistent_causes(rounds);
    let mut changed = false;
    for d in rounds.iter_mut().flat_map(|r| r.disturbed.iter_mut()) {
        let p = persistent.contains(&d.cause);
        changed |= d.persistent != p;
        d.persistent = p;
    }
    changed
}

/// A persistent cause over a row's rounds in figures: the cause, its mean figure over the
/// rounds (% of the rounds' CPUs' time) and the rounds it was read in.
#[derive(Debug, Clone, PartialEq)]
pub struct Condition {
    pub cause: Cause,
    pub mean: f64,
    pub rounds: usize,
}

/// What a cause took over `rounds` on average: its mean figure over the rounds it was read
/// in (every round where it is recorded below its limit too), and how many; None where no
/// round read it.
pub fn took(rounds: &[&Round], cause: Cause) -> Option<Condition> {
    let x: Vec<f64> = rounds.iter().filter_map(|r| figure(r, cause)).collect();
    (!x.is_empty()).then(|| Condition {
        cause,
        mean: x.iter().sum::<f64>() / x.len() as f64,
        rounds: x.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::rounds::{quiet_rounds, Disturbance, Others};

    /// `n` rounds with other tasks taking `share[i]` of CPU 0-1, past the 10% limit where
    /// they are.
    fn beside(share: &[f64]) -> Vec<Round> {
        let mut rs = quiet_rounds(&vec![0.0; share.len()]);
        for (r, s) in rs.iter_mut().zip(share) {
            r.others = Some(Others {
                cpus: vec![0, 1],
                percent: *s,
            });
            if *s >= 10.0 {
                r.disturbed.push(Disturbance {
                    cause: Cause::OtherTasks,
                    value: *s,
                    limit: 10.0,
                    persistent: false,
                });
            }
        }
        rs
    }

    #[test]
    fn a_neighbour_in_every_round_at_a_steady_share_persists() {
        let mut rs = beside(&[42.5, 40.5, 41.2]);
        assert_eq!(persistent_causes(&rs), vec![Cause::OtherTasks]);
        assert!(mark(&mut rs));
        assert!(rs.iter().all(|r| r.kept()));
        // Marking again changes nothing.
        assert!(!mark(&mut rs));
        // Four of five rounds is throughout; the quiet one is read too (9% is steady).
        assert_eq!(
            persistent_causes(&beside(&[45.0, 9.0, 50.0, 48.0, 44.0])),
            vec![Cause::OtherTasks]
        );
    }

    #[test]
    fn bursts_and_swings_are_transient() {
        // Half the rounds: a burst.
        assert!(persistent_causes(&beside(&[50.0, 0.5, 48.0, 1.0, 52.0, 0.3])).is_empty());
        // Every round, but 12% in some and 60% in others.
        assert!(persistent_causes(&beside(&[12.0, 60.0, 15.0, 55.0, 11.0])).is_empty());
        // Two rounds cannot tell throughout from twice.
        assert!(persistent_causes(&beside(&[40.0, 41.0])).is_empty());
        let mut rs = beside(&[50.0, 0.5, 48.0, 1.0, 52.0, 0.3]);
        assert!(!mark(&mut rs));
        assert_eq!(rs.iter().filter(|r| r.kept()).count(), 3);
    }

    #[test]
    fn only_causes_with_an_absolute_limit_persist_and_a_transient_one_still_sets_aside() {
        let mut rs = beside(&[42.0, 41.0, 43.0, 40.0]);
        // A slow canary in every round is a departure from the run's own typical: never
        // persistent.
        for r in &mut rs {
            r.disturbed.push(Disturbance {
                cause: Cause::CpuSpeed,
                value: 5.0,
                limit: 3.0,
                persistent: false,
            });
        }
        assert_eq!(persistent_causes(&rs), vec![Cause::OtherTasks]);
        mark(&mut rs);
        assert!(rs.iter().all(|r| !r.kept()));
        // The host's placement moved once: that round alone is set aside.
        let mut rs = beside(&[42.0, 41.0, 43.0, 40.0]);
        rs[2].disturbed.push(Disturbance {
            cause: Cause::HostPlacement,
            value: 3.6,
            limit: 1.5,
            persistent: false,
        });
        mark(&mut rs);
        let kept: Vec<bool> = rs.iter().map(|r| r.kept()).collect();
        assert_eq!(kept, vec![true, true, false, true]);
    }

    #[test]
    fn what_a_cause_took_is_its_mean_over_the_rounds_that_read_it() {
        let rs = beside(&[30.0, 0.0, 33.0]);
        let refs: Vec<&Round> = rs.iter().collect();
        let c = took(&refs, Cause::OtherTasks).unwrap();
        assert_eq!((c.mean, c.rounds), (21.0, 3));
        assert!(took(&refs, Cause::Steal).is_none());
    }
}
