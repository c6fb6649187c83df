//! A result's params: what distinguishes it from the other results of its benchmark
//! (`mode=thread`, `cpu_a=0`, `size_bytes=65536`...). Each value is a typed scalar; a suite
//! reads its params as its own struct with [`Params::read`]; the params read across suites
//! (a size, a thread or copy count, a clock and its read path...) have typed accessors here,
//! their names in [`key`], so no reader spells a key.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// One param value, kept in the JSON form it was written in (an integer stays an integer).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ParamValue {
    Bool(bool),
    Unsigned(u64),
    Signed(i64),
    Float(f64),
    Text(String),
}

impl ParamValue {
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            ParamValue::Unsigned(n) => Some(*n),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            ParamValue::Text(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            ParamValue::Bool(b) => Some(*b),
            _ => None,
        }
    }
}

impl fmt::Display for ParamValue {
    /// Strings unquoted, numbers as JSON writes them.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamValue::Bool(b) => write!(f, "{b}"),
            ParamValue::Unsigned(n) => write!(f, "{n}"),
            ParamValue::Signed(n) => write!(f, "{n}"),
            ParamValue::Float(x) => {
                write!(f, "{}", serde_json::to_string(x).map_err(|_| fmt::Error)?)
            }
            ParamValue::Text(s) => write!(f, "{s}"),
        }
    }
}

macro_rules! from_unsigned {
    ($($t:ty),*) => {$(
        impl From<$t> for ParamValue {
            fn from(v: $t) -> Self {
                ParamValue::Unsigned(v as u64)
            }
        }
    )*};
}
from_unsigned!(u32, u64, usize);

impl From<f64> for ParamValue {
    fn from(v: f64) -> Self {
        ParamValue::Float(v)
    }
}

impl From<bool> for ParamValue {
    fn from(v: bool) -> Self {
        ParamValue::Bool(v)
    }
}

impl From<&str> for ParamValue {
    fn from(v: &str) -> Self {
        ParamValue::Text(v.to_string())
    }
}

impl From<String> for ParamValue {
    fn from(v: String) -> Self {
        ParamValue::Text(v)
    }
}

/// The names of the params read outside the suite that writes them.
pub mod key {
    /// A memory row's working-set size, bytes.
    pub const SIZE_BYTES: &str = "size_bytes";
    /// How many threads one measurement ran.
    pub const THREADS: &str = "threads";
    /// How many parallel copies one measurement ran (classic).
    pub const COPIES: &str = "copies";
    /// Which clock a clock-read row read (`monotonic`, `realtime_coarse`...).
    pub const CLOCK: &str = "clock";
    /// How a clock-read row read its clock (`vdso`, `syscall`, `instruction`).
    pub const PATH: &str = "path";
    /// Which pages a memory row's memory sat on (`4k`, `thp`).
    pub const PAGES: &str = "pages";
    /// What a NUMA row measured (`latency`, `read-bandwidth`).
    pub const METRIC: &str = "metric";
    /// How a timer row timed its events (`per-event`, `batch`).
    pub const TIMING: &str = "timing";
    /// Whether a classic file copy synced each write.
    pub const FSYNC: &str = "fsync";
    /// Which modules a classic Whetstone row ran.
    pub const WORK: &str = "work";
    /// Which pinned variant of the classic context-switch pair a row is.
    pub const PAIR: &str = "pair";
}

/// A result's params by name, in name order.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Params(pub BTreeMap<String, ParamValue>);

impl<K: Into<String>> FromIterator<(K, ParamValue)> for Params {
    fn from_iter<I: IntoIterator<Item = (K, ParamValue)>>(iter: I) -> Params {
        Params(iter.into_iter().map(|(k, v)| (k.into(), v)).collect())
    }
}

impl Params {
    /// Params from (name, value) pairs.
    pub fn of<I, K, V>(pairs: I) -> Params
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<ParamValue>,
    {
        Params(
            pairs
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        )
    }

    pub fn insert(&mut self, name: &str, value: impl Into<ParamValue>) {
        self.0.insert(name.to_string(), value.into());
    }

    pub fn get(&self, name: &str) -> Option<&ParamValue> {
        self.0.get(name)
    }

    pub fn contains_key(&self, name: &str) -> bool {
        self.0.contains_key(name)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Params written from a suite's own struct (its fields named as the params; a field
    /// that is None is left out with `skip_serializing_if`).
    pub fn from_struct<T: Serialize>(v: &T) -> Params {
        serde_json::to_value(v)
            .and_then(serde_json::from_value)
            .expect("a params struct serializes to scalars by name")
    }

    /// The params read as a suite's own struct (its fields named as the params); None when
    /// they do not fit it (a result of another benchmark).
    pub fn read<T: DeserializeOwned>(&self) -> Option<T> {
        serde_json::to_value(self)
            .ok()
            .and_then(|v| serde_json::from_value(v).ok())
    }

    /// A param that is a count (absent when missing or not an unsigned integer).
    fn count(&self, name: &str) -> Option<u64> {
        self.get(name).and_then(ParamValue::as_u64)
    }

    /// A param that is a word (absent when missing or not a string).
    fn word(&self, name: &str) -> Option<&str> {
        self.get(name).and_then(ParamValue::as_str)
    }

    /// The working-set size, bytes ([`key::SIZE_BYTES`]).
    pub fn size_bytes(&self) -> Option<u64> {
        self.count(key::SIZE_BYTES)
    }

    /// The thread count ([`key::THREADS`]).
    pub fn threads(&self) -> Option<u64> {
        self.count(key::THREADS)
    }

    /// The copy count ([`key::COPIES`]).
    pub fn copies(&self) -> Option<u64> {
        self.count(key::COPIES)
    }

    /// The clock read ([`key::CLOCK`]).
    pub fn clock(&self) -> Option<&str> {
        self.word(key::CLOCK)
    }

    /// The clock's read path ([`key::PATH`]).
    pub fn path(&self) -> Option<&str> {
        self.word(key::PATH)
    }

    /// The pages the memory sat on ([`key::PAGES`]).
    pub fn pages(&self) -> Option<&str> {
        self.word(key::PAGES)
    }

    /// What a NUMA row measured ([`key::METRIC`]).
    pub fn metric(&self) -> Option<&str> {
        self.word(key::METRIC)
    }

    /// How the events were timed ([`key::TIMING`]).
    pub fn timing(&self) -> Option<&str> {
        self.word(key::TIMING)
    }

    /// Whether each write was synced ([`key::FSYNC`]).
    pub fn fsync(&self) -> Option<bool> {
        self.get(key::FSYNC).and_then(ParamValue::as_bool)
    }

    /// The Whetstone modules run ([`key::WORK`]).
    pub fn work(&self) -> Option<&str> {
        self.word(key::WORK)
    }

    /// The pinned variant of a context-switch pair ([`key::PAIR`]).
    pub fn pair(&self) -> Option<&str> {
        self.word(key::PAIR)
    }

    /// `k=v,k=v` (strings unquoted).
    pub fn text(&self) -> String {
        self.0
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(",")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_keep_their_json_form_and_read_as_structs() {
        let text = r#"{"copies":2,"fsync":false,"offset":-3,"plan":"quick","window_s":1.0}"#;
        let p: Params = serde_json::from_str(text).unwrap();
        assert_eq!(serde_json::to_string(&p).unwrap(), text);
        assert_eq!(p.0["copies"], ParamValue::Unsigned(2));
        assert_eq!(p.0["window_s"], ParamValue::Float(1.0));
        assert_eq!(p.0["offset"], ParamValue::Signed(-3));
        assert_eq!(
            p.text(),
            "copies=2,fsync=false,offset=-3,plan=quick,window_s=1.0"
        );
        #[derive(Deserialize)]
        struct Classic {
            copies: u32,
            plan: String,
        }
        let c: Classic = p.read().unwrap();
        assert_eq!((c.copies, c.plan.as_str()), (2, "quick"));
        #[derive(Deserialize, Debug)]
        #[allow(dead_code)]
        struct Other {
            cpu_a: u32,
        }
        assert!(p.read::<Other>().is_none());
    }

    #[test]
    fn accessors_read_their_key_and_are_absent_when_missing_or_of_another_type() {
        let p: Params = serde_json::from_str(
            r#"{"size_bytes":4096,"threads":2,"copies":3,"clock":"monotonic","path":"vdso",
                "pages":"thp","metric":"latency","timing":"batch","fsync":true,
                "work":"all-modules","pair":"same-cpu"}"#,
        )
        .unwrap();
        assert_eq!(p.size_bytes(), Some(4096));
        assert_eq!(p.threads(), Some(2));
        assert_eq!(p.copies(), Some(3));
        assert_eq!(p.clock(), Some("monotonic"));
        assert_eq!(p.path(), Some("vdso"));
        assert_eq!(p.pages(), Some("thp"));
        assert_eq!(p.metric(), Some("latency"));
        assert_eq!(p.timing(), Some("batch"));
        assert_eq!(p.fsync(), Some(true));
        assert_eq!(p.work(), Some("all-modules"));
        assert_eq!(p.pair(), Some("same-cpu"));

        let none = Params::default();
        assert_eq!(none.size_bytes(), None);
        assert_eq!(none.threads(), None);
        assert_eq!(none.copies(), None);
        assert_eq!(none.clock(), None);
        assert_eq!(none.path(), None);
        assert_eq!(none.pages(), None);
        assert_eq!(none.metric(), None);
        assert_eq!(none.timing(), None);
        assert_eq!(none.fsync(), None);
        assert_eq!(none.work(), None);
        assert_eq!(none.pair(), None);

        // Each key holding a value of another type reads as absent, never as a guess: a
        // count written as text or signed, a word written as a number, a flag as a word.
        let wrong: Params = serde_json::from_str(
            r#"{"size_bytes":"4096","threads":-2,"copies":1.0,"clock":1,"path":true,
                "pages":4,"metric":false,"timing":0,"fsync":"true","work":2,"pair":1}"#,
        )
        .unwrap();
        assert_eq!(wrong.size_bytes(), None);
        assert_eq!(wrong.threads(), None);
        assert_eq!(wrong.copies(), None);
        assert_eq!(wrong.clock(), None);
        assert_eq!(wrong.path(), None);
        assert_eq!(wrong.pages(), None);
        assert_eq!(wrong.metric(), None);
        assert_eq!(wrong.timing(), None);
        assert_eq!(wrong.fsync(), None);
        assert_eq!(wrong.work(), None);
        assert_eq!(wrong.pair(), None);
    }
}
