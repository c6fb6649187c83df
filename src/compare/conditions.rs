//! The conditions of a run a row was measured under: what was present throughout its
//! rounds (a neighbour, a loud host: `result::rounds::persistence`) and what a burst in
//! some of them cost. A condition present in every round of B and absent from A is what B
//! is: its rows are compared as measured and the condition is offered as their cause; a
//! burst in some rounds is noise, set aside, and a row that cannot be told for it says
//! what it took.
//!
//! Documents of earlier versions did not mark persistence: `rejudged` marks it on their
//! rounds by the same rule (a current run's document is left as it is: the run marked it
//! when it merged the rounds) and takes the row's noise again from the rounds its figures
//! now rest on.

use crate::result::rounds::{persistence, Cause, Round, Rounds};
use crate::result::{BenchResult, RunDocument};
use std::borrow::Cow;

/// `doc` with persistence marked on every row's rounds by the current rule; borrowed when
/// no mark changes (a current document, or one with no condition throughout a row).
pub fn rejudged(doc: &RunDocument) -> Cow<'_, RunDocument> {
    let changes = |r: &BenchResult| {
        r.rounds.as_ref().is_some_and(|rs| {
            let mut rounds = rs.rounds.clone();
            persistence::mark(&mut rounds)
        })
    };
    if !doc.results.iter().any(changes) {
        return Cow::Borrowed(doc);
    }
    let mut out = doc.clone();
    for r in &mut out.results {
        if let Some(rs) = r.rounds.as_mut() {
            rejudge_rounds(rs);
        }
    }
    Cow::Owned(out)
}

/// Mark persistence on `rs` and, where that moved a round in or out of the figures, take
/// the noise again from the rounds the figures now rest on (about their median: the stored
/// median rests on the rounds kept before).
fn rejudge_rounds(rs: &mut Rounds) {
    if !persistence::mark(&mut rs.rounds) {
        return;
    }
    let logs = rs.pooled_logs();
    let center = (!logs.is_empty()).then(|| crate::result::rounds::median(&logs));
    rs.noise = crate::result::rounds::noise_of(&rs.rounds, center, None);
}

/// A cause's share in words, as its figure reads: "other tasks took 41% of CPU 0-1", "the
/// hypervisor took 12% of CPU 0-1" (who, " took ", the share: `summary` reads them so).
fn took_words(c: &persistence::Condition, cpus: &str) -> String {
    let who = match c.cause {
        Cause::Steal => "the hypervisor",
        Cause::Pressure => "waiting tasks (CPU pressure)",
        _ => "other tasks",
    };
    format!("{who} took {:.0}% of {cpus}", c.mean)
}

/// The rounds' CPUs in words ("CPU 0-1"), or "the CPUs" where not recorded.
fn cpus_of(rounds: &[&Round]) -> String {
    rounds
        .iter()
        .find_map(|r| r.others.as_ref().filter(|o| !o.cpus.is_empty()))
        .map(|o| format!("CPU {}", crate::probe::cpulist::format_list(&o.cpus)))
        .unwrap_or_else(|| "the CPUs".into())
}

/// The conditions present throughout a row's rounds, in words ("other tasks took 41% of
/// CPU 0-1 in every round"); empty without rounds or without such a condition.
pub fn throughout(r: &BenchResult) -> Vec<String> {
    let Some(rs) = r.rounds.as_ref() else {
        return vec![];
    };
    let pooled = rs.pooled();
    let cpus = cpus_of(&pooled);
    rs.persistent()
        .iter()
        .map(|c| format!("{} throughout", took_words(c, &cpus)))
        .collect()
}

/// What other tasks and the hypervisor took over all of a row's rounds, in words, for a row
/// that cannot be told for its disturbed rounds ("other tasks took 31% of CPU 0-1"); None
/// where neither was read or both took under 1%.
pub fn cost(r: &BenchResult) -> Option<String> {
    let rs = r.rounds.as_ref()?;
    let all: Vec<&Round> = rs.rounds.iter().collect();
    let cpus = cpus_of(&all);
    let words: Vec<String> = [Cause::OtherTasks, Cause::Steal]
        .into_iter()
        .filter_map(|c| persistence::took(&all, c))
        .filter(|c| c.mean >= 1.0)
        .map(|c| took_words(&c, &cpus))
        .collect();
    (!words.is_empty()).then(|| words.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::testing::{beside, timers_run};

    #[test]
    fn an_earlier_documents_neighbour_throughout_is_marked_and_a_current_one_kept_as_is() {
        let b = beside(timers_run("b", 20.0, None), &[42.0, 40.0, 41.0]);
        let judged = rejudged(&b);
        assert!(matches!(judged, Cow::Owned(_)));
        let r = &judged.results[0];
        let rs = r.rounds.as_ref().unwrap();
        assert_eq!(rs.kept(), 3, "{rs:?}");
        assert!(!rs.noise.as_ref().unwrap().includes_disturbed);
        assert_eq!(
            throughout(r),
            vec!["other tasks took 41% of CPU 0-1 throughout".to_string()]
        );
        // Judged again, nothing changes: borrowed.
        assert!(matches!(rejudged(&judged), Cow::Borrowed(_)));
        // A burst in one round of three is not throughout, and is what it cost.
        let burst = beside(timers_run("c", 20.0, None), &[0.5, 40.0, 0.8]);
        assert!(matches!(rejudged(&burst), Cow::Borrowed(_)));
        assert!(throughout(&burst.results[0]).is_empty());
        assert_eq!(
            cost(&burst.results[0]).as_deref(),
            Some("other tasks took 14% of CPU 0-1")
        );
        let quiet = beside(timers_run("d", 20.0, None), &[0.5, 0.2, 0.8]);
        assert_eq!(cost(&quiet.results[0]), None);
    }
}
