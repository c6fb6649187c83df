//! A result's params: what distinguishes it from the other results of its benchmark
//! (`mode=thread`, `cpu_a=0`, `size_bytes=65536`...). Each value is a typed scalar; a suite
//! reads its params as its own struct with [`Params::read`].

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
}
