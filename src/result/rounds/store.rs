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

/// Significant digits of a stored round median: a millionth of it, far below any spread
/// between rounds (the outlier test assumes at least 0.5%).
pub const MEDIAN_DIGITS: i32 = 6;
/// Significant digits of a stored share or disturbance figure (percent, or x).
const SHARE_DIGITS: i32 = 4;

/// How far a stored median may lie from the one measured, relative to it: half a unit of
/// its last digit, a leading 1 (1.00000x) the widest.
pub fn median_slack() -> f64 {
    0.5 * 10f64.powi(1 - MEDIAN_DIGITS)
}

/// How a figure is written: as it is, to a number of decimals, or to a number of
/// significant digits.
#[derive(Debug, Clone, Copy)]
pub enum Digits {
    Exact,
    Decimals(i32),
    Significant(i32),
}

impl Digits {
    pub fn round(self, x: f64) -> f64 {
        if !x.is_finite() || x == 0.0 {
            return x;
        }
        let places = match self {
            Digits::Exact => return x,
            Digits::Decimals(d) => d,
            Digits::Significant(n) => n - 1 - x.abs().log10().floor() as i32,
        };
        // Powers of ten as exact as f64 holds them, dividing for negative places.
        if places >= 0 {
            let s = 10f64.powi(places);
            let r = (x * s).round() / s;
            if r.is_finite() {
                r
            } else {
                x
            }
        } else {
            let s = 10f64.powi(-places);
            (x / s).round() * s
        }
    }
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

/// A column of figures, each written to `d`; empty when every figure is absent (the column
/// is then left out).
pub fn column<T: Figure>(values: impl Iterator<Item = T>, d: Digits) -> Vec<T> {
    let v: Vec<T> = values.map(|x| x.written(d)).collect();
    if v.iter().all(Figure::is_absent) && T::absent().is_some() {
        vec![]
    } else {
        v
    }
}

/// Set a figure of every round from its column (empty when the document has none).
pub fn set_column<T: Figure>(
    col: &[T],
    rounds: &mut [Round],
    name: &str,
    set: impl Fn(&mut Round, T),
) -> Result<(), String> {
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
    percent: Vec<Option<f64>>,
}

/// One cause's disturbances of a row's rounds: its figure in each round it disturbed (null
/// in the others) and the limit it passed.
#[derive(Debug, Serialize, Deserialize)]
pub struct CauseColumn {
    value: Vec<Option<f64>>,
    limit: OneOrEach<f64>,
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
        let causes: std::collections::BTreeSet<Cause> = rounds
            .iter()
            .flat_map(|x| x.disturbed.iter().map(|d| d.cause))
            .collect();
        for cause in causes {
            let of = |x: &Round| x.disturbed.iter().find(|d| d.cause == cause).cloned();
            let found: Vec<Option<Disturbance>> = rounds.iter().map(of).collect();
            let figure = |f: fn(&Disturbance) -> f64| -> Vec<Option<f64>> {
                found
                    .iter()
                    .map(|d| d.as_ref().map(|d| share.round(f(d))))
                    .collect()
            };
            c.disturbed.insert(
                cause,
                CauseColumn {
                    value: figure(|d| d.value),
                    limit: OneOrEach::of(figure(|d| d.limit), |_| true),
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
        let n = c.seq.len();
        if n == 0 {
            return Err("no rounds: its 'seq' column is empty".into());
        }
        let mut rounds = vec![Round::default(); n];
        c.set_figures(&mut rounds)?;
        if let Some(o) = &c.others {
            if o.percent.len() != n {
                return Err(format!(
                    "its others' 'percent' has {} values for {}",
                    o.percent.len(),
                    crate::units::count(n, "round")
                ));
            }
            for (i, r) in rounds.iter_mut().enumerate() {
                if let (Some(percent), Some(cpus)) = (o.percent[i], o.cpus.get(i, n, "CPUs")?) {
                    r.others = Some(Others { cpus, percent });
                }
            }
        }
        for (cause, col) in &c.disturbed {
            if col.value.len() != n {
                return Err(format!(
                    "its '{}' values are {} for {}",
                    cause.text(),
                    col.value.len(),
                    crate::units::count(n, "round")
                ));
            }
            for (i, r) in rounds.iter_mut().enumerate() {
                if let Some(value) = col.value[i] {
                    let Some(limit) = col.limit.get(i, n, "limit")? else {
                        return Err(format!("a '{}' value with no limit", cause.text()));
                    };
                    r.disturbed.push(Disturbance {
                        cause: *cause,
                        value,
                        limit,
                    });
                }
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
struct RowRound {
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

/// A row's rounds as documents of earlier versions wrote them.
#[derive(Debug, Deserialize)]
struct Rows {
    rounds: Vec<RowRound>,
    #[serde(default)]
    noise: Option<RoundNoise>,
}

impl From<Rows> for Rounds {
    fn from(r: Rows) -> Rounds {
        Rounds {
            rounds: r
                .rounds
                .into_iter()
                .map(|x| Round {
                    seq: x.seq,
                    at_s: x.at_s,
                    median: x.median,
                    samples: x.samples,
                    disturbed: x.disturbed,
                    others: x.others,
                    ..Round::default()
                })
                .collect(),
            noise: r.noise,
        }
    }
}

/// Read in either form: columns, or (with a `rounds` list) the form of earlier versions.
impl TryFrom<Value> for Rounds {
    type Error = String;

    fn try_from(v: Value) -> Result<Rounds, String> {
        if v.get("rounds").is_some() {
            Rows::deserialize(v)
                .map(Rounds::from)
                .map_err(|e| e.to_string())
        } else {
            Columns::deserialize(v)
                .map_err(|e| e.to_string())
                .and_then(Rounds::try_from)
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
                    at_s: 4.11663537,
                    median: 23.339858504131755,
                    samples: 2,
                    disturbed: vec![],
                    others: others(5.060435874773968),
                },
                Round {
                    seq: 11,
                    at_s: 7.851763358,
                    median: 24.841569268657018,
                    samples: 2,
                    disturbed: vec![
                        d(Cause::Steal, 4.464285714285714, 2.0),
                        d(Cause::OtherTasks, 14.718206831016115, 10.0),
                    ],
                    others: others(14.718206831016115),
                },
                Round {
                    seq: 20,
                    at_s: 13.828814029,
                    median: 25.278604427911443,
                    samples: 3,
                    disturbed: vec![d(Cause::Steal, 30.0, 2.0)],
                    others: None,
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
                "at_s": [4.117, 7.852, 13.829],
                "median": [23.3399, 24.8416, 25.2786],
                "samples": [2, 2, 3],
                "others": {"cpus": [0, 1], "percent": [5.06, 14.72, null]},
                "disturbed": {
                    "steal": {"value": [null, 4.464, 30.0], "limit": 2.0},
                    "other-tasks": {"value": [null, 14.72, null], "limit": 10.0},
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
            assert!((b.at_s - w.at_s).abs() <= 5e-4);
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
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["others"]["cpus"], json!([[0, 1], [2], null]));
        assert_eq!(v["disturbed"]["steal"]["limit"], json!([null, 2.0, 3.0]));
        let back: Rounds = serde_json::from_value(v).unwrap();
        assert_eq!(back.rounds[1].others.as_ref().unwrap().cpus, [2]);
        assert_eq!(back.rounds[2].disturbed[0].limit, 3.0);
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
                    "disturbed": {"steal": {"value": [null], "limit": 2.0}}}),
                "'steal' values are 1 for 2 rounds",
            ),
        ] {
            let err = serde_json::from_value::<Rounds>(bad)
                .unwrap_err()
                .to_string();
            assert!(err.contains(why), "{err}");
        }
    }

    #[test]
    fn digits_round_as_said() {
        assert_eq!(Digits::Significant(6).round(51406.10778859527), 51406.1);
        assert_eq!(Digits::Significant(6).round(0.0012345678), 0.00123457);
        assert_eq!(Digits::Significant(2).round(123456.0), 120000.0);
        assert_eq!(Digits::Decimals(3).round(14.988703469), 14.989);
        assert_eq!(Digits::Exact.round(1.23456789), 1.23456789);
        assert_eq!(Digits::Significant(4).round(0.0), 0.0);
    }
}
