//! How a row's rounds are stored in a document: a column per figure (`"seq": [4, 7, 9]`,
//! `"median": [23.34, 23.48, 23.01]`) rather than an object per round, each figure rounded
//! to the digits it means; the CPUs of other tasks' share written once when every round
//! has the same; what disturbed the rounds as a column of values per cause, its limit once
//! when every round's is the same. A disturbance's words are not stored: they are made
//! from its figures (`Disturbance::text`). A loud run disturbs most rounds of every row,
//! and an object per round, with its words, made such a document 0.78 MB.
//!
//! Documents of earlier versions wrote `{"rounds": [{"seq", "at_s", "median", "samples",
//! "disturbed": [{"cause", "value", "limit", "detail"}], "others"}], "noise"}`: that form
//! still reads (its `detail` words are made again from the figures).

use super::{Cause, Columns, Disturbance, Others, Round, RoundNoise, Rounds};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

pub use crate::result::digits::Digits;

/// Significant digits of a stored round median.
pub const MEDIAN_DIGITS: i32 = crate::result::digits::MEDIAN;
/// Significant digits of a stored share or disturbance figure (percent, or x).
const SHARE_DIGITS: i32 = crate::result::digits::SHARE;

/// How far a stored median may lie from the one measured, relative to it.
pub fn median_slack() -> f64 {
    Digits::Significant(MEDIAN_DIGITS).slack()
}

/// A figure of a round, as a column stores it.
pub trait Figure: Sized + Copy {
    /// The figure as written, rounded to `d`.
    fn written(self, d: Digits) -> Self;
    /// Its value in a round whose document has no column for it: None when every
    /// document has the column (it is required).
    fn absent() -> Option<Self>;
    /// Whether it says no more than an absent column would.
    fn is_absent(&self) -> bool {
        false
    }
}

impl Figure for usize {
    fn written(self, _: Digits) -> Self {
        self
    }
    fn absent() -> Option<Self> {
        None
    }
}

impl Figure for f64 {
    fn written(self, d: Digits) -> Self {
        d.round(self)
    }
    fn absent() -> Option<Self> {
        None
    }
}

impl<T: Figure> Figure for Option<T> {
    fn written(self, d: Digits) -> Self {
        self.map(|x| x.written(d))
    }
    fn absent() -> Option<Self> {
        Some(None)
    }
    fn is_absent(&self) -> bool {
        self.is_none()
    }
}

/// A figure's column: its value in each round, or one value when every round has the same.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum Column<T> {
    Each(Vec<T>),
    One(T),
}

/// A list is `Each`, a number or null `One`, read in one pass (as `untagged`, serde first
/// copies the value aside and tries each form on it: a tenth of the fleet view's time).
impl<'de, T: Deserialize<'de>> Deserialize<'de> for Column<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{value::SeqAccessDeserializer, Error, SeqAccess, Visitor};
        struct Of<T>(std::marker::PhantomData<T>);
        impl<T> Of<T> {
            /// One figure, through a JSON value of it (a number or null: nothing allocated),
            /// so that `Option` reads a number as `Some`.
            fn one<'de, E: Error>(v: Value) -> Result<Column<T>, E>
            where
                T: Deserialize<'de>,
            {
                T::deserialize(v).map(Column::One).map_err(E::custom)
            }
        }
        impl<'de, T: Deserialize<'de>> Visitor<'de> for Of<T> {
            type Value = Column<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a figure, or a list of one per round")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Column<T>, A::Error> {
                Vec::<T>::deserialize(SeqAccessDeserializer::new(seq)).map(Column::Each)
            }
            fn visit_u64<E: Error>(self, v: u64) -> Result<Column<T>, E> {
                Self::one(v.into())
            }
            fn visit_i64<E: Error>(self, v: i64) -> Result<Column<T>, E> {
                Self::one(v.into())
            }
            fn visit_f64<E: Error>(self, v: f64) -> Result<Column<T>, E> {
                Self::one(v.into())
            }
            fn visit_unit<E: Error>(self) -> Result<Column<T>, E> {
                Self::one(Value::Null)
            }
            fn visit_none<E: Error>(self) -> Result<Column<T>, E> {
                Self::one(Value::Null)
            }
        }
        d.deserialize_any(Of(std::marker::PhantomData))
    }
}

impl<T> Column<T> {
    /// No column: every round's figure is absent.
    pub fn is_absent(&self) -> bool {
        matches!(self, Column::Each(v) if v.is_empty())
    }
}

impl<T> Default for Column<T> {
    fn default() -> Self {
        Column::Each(vec![])
    }
}

/// A column of figures, each written to `d`: one value when two rounds or more have the
/// same, none when every figure is absent (the column is then left out).
pub fn column<T: Figure + PartialEq>(values: impl Iterator<Item = T>, d: Digits) -> Column<T> {
    let v: Vec<T> = values.map(|x| x.written(d)).collect();
    if v.iter().all(Figure::is_absent) && T::absent().is_some() {
        Column::Each(vec![])
    } else if v.len() >= 2 && v.iter().all(|x| *x == v[0]) {
        Column::One(v[0])
    } else {
        Column::Each(v)
    }
}

/// Set a figure of every round from its column (empty when the document has none).
pub fn set_column<T: Figure>(
    col: &Column<T>,
    rounds: &mut [Round],
    name: &str,
    set: impl Fn(&mut Round, T),
) -> Result<(), String> {
    let col = match col {
        Column::One(v) => {
            rounds.iter_mut().for_each(|r| set(r, *v));
            return Ok(());
        }
        Column::Each(col) => col,
    };
    if col.is_empty() {
        let Some(v) = T::absent() else {
            return Err(format!("no '{name}' column"));
        };
        rounds.iter_mut().for_each(|r| set(r, v));
        return Ok(());
    }
    if col.len() != rounds.len() {
        return Err(format!(
            "its '{name}' column has {} values for {}",
            col.len(),
            crate::units::count(rounds.len(), "round")
        ));
    }
    for (r, v) in rounds.iter_mut().zip(col) {
        set(r, *v);
    }
    Ok(())
}

/// One value for every round, or one per round (null where a round has none).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum OneOrEach<T> {
    Each(Vec<Option<T>>),
    One(T),
}

impl<T: Clone + PartialEq> OneOrEach<T> {
    /// One value when every round that has one has the same (and `one_ok` allows it).
    fn of(values: Vec<Option<T>>, one_ok: impl Fn(&T) -> bool) -> OneOrEach<T> {
        let mut present = values.iter().flatten();
        match present.next() {
            Some(first) if one_ok(first) && present.all(|x| x == first) => {
                OneOrEach::One(first.clone())
            }
            _ => OneOrEach::Each(values),
        }
    }

    /// Round `i`'s value; `present` says whether it has one.
    fn get(&self, i: usize, n: usize, what: &str) -> Result<Option<T>, String> {
        match self {
            OneOrEach::One(x) => Ok(Some(x.clone())),
            OneOrEach::Each(v) if v.len() == n => Ok(v[i].clone()),
            OneOrEach::Each(v) => Err(format!(
                "its {what} has {} values for {}",
                v.len(),
                crate::units::count(n, "round")
            )),
        }
    }
}

/// Other tasks' CPU time per round (`Others`), as columns.
#[derive(Debug, Serialize, Deserialize)]
pub struct OthersColumns {
    /// The rounds' CPUs: one list when every round has the same.
    cpus: OneOrEach<Vec<u32>>,
    /// Their share per round (%), null where it was not read.
    percent: Column<Option<f64>>,
}

/// One cause's disturbances of a row's rounds: the round each disturbed (its place among
/// the row's rounds, from 0; a round twice when the cause disturbed it twice, as the speed
/// canaries of two CPUs can), its figure, and the limit it passed (one when alike).
/// `round` is left out when the cause disturbed every round once (a loud run's), `value`
/// when each is its round's share of other tasks (`other-tasks` is that share past its
/// limit: one figure, stored once).
#[derive(Debug, Serialize, Deserialize)]
pub struct CauseColumn {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    round: Option<Vec<usize>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    value: Option<Vec<f64>>,
    limit: OneOrEach<f64>,
    /// The cause was present throughout the row's rounds (`persistence`): its rounds are
    /// kept, and `compare` names it as a condition of the run.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    persistent: bool,
}

impl From<Rounds> for Columns {
    fn from(r: Rounds) -> Columns {
        let rounds = &r.rounds;
        let share = Digits::Significant(SHARE_DIGITS);
        let mut c = Columns::figures(rounds);
        if rounds.iter().any(|x| x.others.is_some()) {
            c.others = Some(OthersColumns {
                // An empty list as one value would read back as a column of none.
                cpus: OneOrEach::of(
                    rounds
                        .iter()
                        .map(|x| x.others.as_ref().map(|o| o.cpus.clone()))
                        .collect(),
                    |cpus| !cpus.is_empty(),
                ),
                percent: column(
                    rounds.iter().map(|x| x.others.as_ref().map(|o| o.percent)),
                    share,
                ),
            });
        }
        // Per cause: (round, value, limit) of each disturbance, in round order.
        let mut found: BTreeMap<Cause, Vec<(usize, f64, f64)>> = BTreeMap::new();
        let mut persistent: Vec<Cause> = vec![];
        for (i, x) in rounds.iter().enumerate() {
            for d in &x.disturbed {
                let (value, limit) = (share.round(d.value), share.round(d.limit));
                found.entry(d.cause).or_default().push((i, value, limit));
                if d.persistent && !persistent.contains(&d.cause) {
                    persistent.push(d.cause);
                }
            }
        }
        let others_share = |i: usize| rounds[i].others.as_ref().map(|o| share.round(o.percent));
        for (cause, all) in found {
            let every_round =
                all.len() == rounds.len() && all.iter().enumerate().all(|(k, x)| x.0 == k);
            let is_others = cause == Cause::OtherTasks
                && all.iter().all(|(i, v, _)| others_share(*i) == Some(*v));
            c.disturbed.insert(
                cause,
                CauseColumn {
                    round: (!every_round).then(|| all.iter().map(|x| x.0).collect()),
                    value: (!is_others).then(|| all.iter().map(|x| x.1).collect()),
                    limit: OneOrEach::of(all.iter().map(|x| Some(x.2)).collect(), |_| true),
                    persistent: persistent.contains(&cause),
                },
            );
        }
        c.noise = r.noise;
        c
    }
}

impl TryFrom<Columns> for Rounds {
    type Error = String;

    fn try_from(c: Columns) -> Result<Rounds, String> {
        if let Some(rounds) = c.rounds {
            return Ok(Rows {
                rounds,
                noise: c.noise,
            }
            .into());
        }
        let n = c.seq.len();
        if n == 0 {
            return Err("no rounds: its 'seq' column is empty".into());
        }
        let mut rounds = vec![Round::default(); n];
        c.set_figures(&mut rounds)?;
        if let Some(o) = &c.others {
            // The share first, as a figure of its own; the CPUs where it was read.
            let mut shares = vec![Round::default(); n];
            set_column(&o.percent, &mut shares, "percent", |r, v| {
                r.others = v.map(|percent| Others {
                    cpus: vec![],
                    percent,
                })
            })?;
            for (i, (r, s)) in rounds.iter_mut().zip(shares).enumerate() {
                if let (Some(mut others), Some(cpus)) = (s.others, o.cpus.get(i, n, "CPUs")?) {
                    others.cpus = cpus;
                    r.others = Some(others);
                }
            }
        }
        for (cause, col) in &c.disturbed {
            let what = cause.text();
            let which: Vec<usize> = match &col.round {
                Some(v) => v.clone(),
                None => (0..n).collect(),
            };
            if let Some(v) = col.value.as_ref().filter(|v| v.len() != which.len()) {
                return Err(format!(
                    "its '{what}' disturbances have {} rounds and {} values",
                    which.len(),
                    v.len()
                ));
            }
            for (k, i) in which.iter().enumerate() {
                let Some(r) = rounds.get_mut(*i) else {
                    return Err(format!(
                        "its '{what}' disturbs round {i} of {}",
                        crate::units::count(n, "round")
                    ));
                };
                let value = match (&col.value, &r.others) {
                    (Some(v), _) => v[k],
                    (None, Some(o)) if *cause == Cause::OtherTasks => o.percent,
                    _ => return Err(format!("a '{what}' disturbance of round {i} with no value")),
                };
                let Some(limit) = col.limit.get(k, which.len(), "limit")? else {
                    return Err(format!("a '{what}' disturbance with no limit"));
                };
                r.disturbed.push(Disturbance {
                    cause: *cause,
                    value,
                    limit,
                    persistent: col.persistent,
                });
            }
        }
        Ok(Rounds {
            rounds,
            noise: c.noise,
        })
    }
}

/// A round as documents of earlier versions wrote it, an object each.
#[derive(Debug, Deserialize)]
pub(super) struct RowRound {
    seq: usize,
    at_s: f64,
    median: f64,
    samples: usize,
    /// Each with its words (`detail`), which are made again from the figures.
    #[serde(default)]
    disturbed: Vec<Disturbance>,
    #[serde(default)]
    others: Option<Others>,
}

/// A row's rounds as documents of earlier versions wrote them (read through `Columns`,
/// whose `rounds` holds them: one pass over the JSON, no tree of it first).
struct Rows {
    rounds: Vec<RowRound>,
    noise: Option<RoundNoise>,
}

impl From<Rows> for Rounds {
    fn from(r: Rows) -> Rounds {
        Rounds {
            rounds: r
                .rounds
                .into_iter()
                .map(|x| {
                    // A figure added after this form was written takes its default.
                    let mut r = Round::default();
                    (r.seq, r.at_s, r.median, r.samples) = (x.seq, x.at_s, x.median, x.samples);
                    (r.disturbed, r.others) = (x.disturbed, x.others);
                    r
                })
                .collect(),
            noise: r.noise,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rounds() -> Rounds {
        let d = |cause, value, limit| Disturbance {
            cause,
            value,
            limit,
            persistent: false,
        };
        let others = |p| {
            Some(Others {
                cpus: vec![0, 1],
                percent: p,
            })
        };
        Rounds {
            rounds: vec![
                Round {
                    seq: 4,
                    waited: None,
                    at_s: 4.11663537,
                    median: 23.339858504131755,
                    samples: 2,
                    disturbed: vec![],
                    others: others(5.060435874773968),
                    steal: Some(1.25),
                },
                Round {
                    seq: 11,
                    waited: None,
                    at_s: 7.851763358,
                    median: 24.841569268657018,
                    samples: 2,
                    disturbed: vec![
                        d(Cause::Steal, 4.464285714285714, 2.0),
                        d(Cause::OtherTasks, 14.718206831016115, 10.0),
                    ],
                    others: others(14.718206831016115),
                    steal: Some(4.464285714285714),
                },
                Round {
                    seq: 20,
                    waited: None,
                    at_s: 13.828814029,
                    median: 25.278604427911443,
                    samples: 3,
                    disturbed: vec![d(Cause::Steal, 30.0, 2.0)],
                    others: None,
                    steal: None,
                },
            ],
            noise: None,
        }
    }

    #[test]
    fn rounds_are_stored_as_columns_rounded_to_the_digits_they_mean() {
        let v = serde_json::to_value(rounds()).unwrap();
        assert_eq!(
            v,
            json!({
                "seq": [4, 11, 20],
                "at_s": [4.1, 7.9, 13.8],
                "median": [23.3399, 24.8416, 25.2786],
                "samples": [2, 2, 3],
                "others": {"cpus": [0, 1], "percent": [5.06, 14.72, null]},
                "steal": [1.25, 4.464, null],
                "disturbed": {
                    "steal": {"round": [1, 2], "value": [4.464, 30.0], "limit": 2.0},
                    // Its figure is the round's share of other tasks, stored once.
                    "other-tasks": {"round": [1], "limit": 10.0},
                }
            })
        );
        // Read back: the same rounds, each figure within its digits.
        let back: Rounds = serde_json::from_value(v.clone()).unwrap();
        let want = rounds();
        assert_eq!(back.rounds.len(), 3);
        for (b, w) in back.rounds.iter().zip(&want.rounds) {
            assert_eq!((b.seq, b.samples), (w.seq, w.samples));
            assert!((b.median / w.median - 1.0).abs() <= median_slack());
            assert!((b.at_s - w.at_s).abs() <= 0.05);
            assert_eq!(b.others.is_some(), w.others.is_some());
            let causes = |r: &Round| {
                let mut c: Vec<Cause> = r.disturbed.iter().map(|d| d.cause).collect();
                c.sort();
                c
            };
            assert_eq!(causes(b), causes(w));
        }
        assert_eq!(back.rounds[1].others.as_ref().unwrap().cpus, [0, 1]);
        // Written again, nothing moves.
        assert_eq!(serde_json::to_value(back).unwrap(), v);
    }

    #[test]
    fn different_cpus_and_limits_are_kept_per_round() {
        let mut r = rounds();
        r.rounds[1].others.as_mut().unwrap().cpus = vec![2];
        r.rounds[2].disturbed[0].limit = 3.0;
        // The speed canaries of two CPUs both slow: one cause twice in a round.
        let slow = |value| Disturbance {
            cause: Cause::CpuSpeed,
            value,
            limit: 3.0,
            persistent: false,
        };
        r.rounds[0].disturbed = vec![slow(4.0), slow(5.0)];
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["others"]["cpus"], json!([[0, 1], [2], null]));
        assert_eq!(v["disturbed"]["steal"]["limit"], json!([2.0, 3.0]));
        assert_eq!(
            v["disturbed"]["cpu-speed"],
            json!({"round": [0, 0], "value": [4.0, 5.0], "limit": 3.0})
        );
        let back: Rounds = serde_json::from_value(v).unwrap();
        assert_eq!(back.rounds[1].others.as_ref().unwrap().cpus, [2]);
        assert_eq!(back.rounds[2].disturbed[0].limit, 3.0);
        assert_eq!(back.rounds[0].disturbed, [slow(4.0), slow(5.0)]);
        assert_eq!(back.causes(), r.causes());
    }

    #[test]
    fn a_cause_in_every_round_is_stored_without_its_rounds() {
        // A loud run: steal in every round, other tasks too (their figure, the share).
        let mut r = rounds();
        for (i, x) in r.rounds.iter_mut().enumerate() {
            let share = 20.0 + i as f64;
            x.others = Some(Others {
                cpus: vec![0, 1],
                percent: share,
            });
            x.disturbed = vec![
                Disturbance {
                    cause: Cause::OtherTasks,
                    value: share,
                    limit: 10.0,
                    persistent: false,
                },
                Disturbance {
                    cause: Cause::Steal,
                    value: 5.0 + i as f64,
                    limit: 2.0,
                    persistent: false,
                },
            ];
        }
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(
            v["disturbed"],
            json!({
                "steal": {"value": [5.0, 6.0, 7.0], "limit": 2.0},
                "other-tasks": {"limit": 10.0},
            })
        );
        let back: Rounds = serde_json::from_value(v).unwrap();
        let causes = |r: &Rounds| -> Vec<Vec<(Cause, f64)>> {
            r.rounds
                .iter()
                .map(|x| {
                    let mut c: Vec<(Cause, f64)> =
                        x.disturbed.iter().map(|d| (d.cause, d.value)).collect();
                    c.sort_by_key(|x| x.0);
                    c
                })
                .collect()
        };
        assert_eq!(causes(&back), causes(&r));
        // An other-tasks figure with no share to take it from is refused.
        let bad = json!({"seq": [1], "at_s": [0.1], "median": [1.0], "samples": [1],
                         "disturbed": {"other-tasks": {"limit": 10.0}}});
        let err = serde_json::from_value::<Rounds>(bad)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("'other-tasks' disturbance of round 0 with no value"),
            "{err}"
        );
    }

    #[test]
    fn the_form_of_earlier_versions_still_reads() {
        let v = json!({
            "rounds": [
                {"seq": 4, "at_s": 4.1, "median": 23.3, "samples": 1,
                 "others": {"cpus": [0, 1], "percent": 5.0}},
                {"seq": 9, "at_s": 7.7, "median": 25.2, "samples": 1,
                 "disturbed": [{"cause": "other-tasks", "value": 14.7, "limit": 10.0,
                                "detail": "other tasks used 15% of CPU 0-1 (0.03 CPU-s in 102 ms)"}]}
            ],
            "noise": {"kept": 2, "sigma": 0.01, "se": 0.007, "df": 1.0}
        });
        let r: Rounds = serde_json::from_value(v).unwrap();
        assert_eq!(r.rounds.len(), 2);
        assert_eq!(r.rounds[1].disturbed[0].cause, Cause::OtherTasks);
        assert_eq!(r.noise.as_ref().unwrap().kept, 2);
        assert_eq!(
            r.rounds[1].text(&r.rounds[1].disturbed[0]),
            "other tasks used 15% of the round's CPUs (limit 10%)"
        );
    }

    #[test]
    fn columns_that_disagree_on_the_rounds_are_refused() {
        for (bad, why) in [
            (
                json!({"seq": [1, 2], "at_s": [0.1], "median": [1.0, 2.0], "samples": [1, 1]}),
                "'at_s' column has 1 values for 2 rounds",
            ),
            (
                json!({"seq": [1, 2], "median": [1.0, 2.0], "samples": [1, 1]}),
                "no 'at_s' column",
            ),
            (
                json!({"seq": [], "at_s": [], "median": [], "samples": []}),
                "no rounds",
            ),
            (
                json!({"seq": [1, 2], "at_s": [0.1, 0.2], "median": [1.0, 2.0], "samples": [1, 1],
                    "disturbed": {"steal": {"round": [0, 1], "value": [3.0], "limit": 2.0}}}),
                "'steal' disturbances have 2 rounds and 1 values",
            ),
            (
                json!({"seq": [1, 2], "at_s": [0.1, 0.2], "median": [1.0, 2.0], "samples": [1, 1],
                    "disturbed": {"steal": {"round": [2], "value": [3.0], "limit": 2.0}}}),
                "'steal' disturbs round 2 of 2 rounds",
            ),
        ] {
            let err = serde_json::from_value::<Rounds>(bad)
                .unwrap_err()
                .to_string();
            assert!(err.contains(why), "{err}");
        }
    }
}
