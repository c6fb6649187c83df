//! JSON as truebench prints and exports it: a line per record, written compactly
//! (`{"median":23.5,"n":20}`, as the store keeps it), the containers that hold the records
//! indented. On one line, at any width: each element of an array (a run's result, a finding,
//! a canary reading, a CPU of the topology: a record), an array of numbers (samples), and an
//! object that is the value of a member and holds only plain values, arrays of plain values
//! and such objects (the probe's `cpus`, a compare row's figures). On one line when it fits
//! in [`WIDTH`] columns: any other container holding nothing written over several lines. The
//! rest is indented, a line per element: the document, its members that hold lists of
//! records (`results`, `findings`, `env`, `cpu_speed`) and those lists. A line per number,
//! or a result indented a line per member, made a run's document several times, then a
//! fifth more than, the size of its content. Any JSON reader reads either form alike, and
//! `jq .` indents it fully.

use serde::Serialize;
use serde_json::ser::Formatter;
use std::io::{self, Write};

/// `v` as indented JSON, what is data on one line.
pub fn pretty<T: Serialize + ?Sized>(v: &T) -> serde_json::Result<String> {
    let mut out = Vec::with_capacity(4096);
    let mut ser = serde_json::Serializer::with_formatter(&mut out, Indented::default());
    v.serialize(&mut ser)?;
    // serde_json writes only UTF-8.
    Ok(String::from_utf8(out).unwrap_or_default())
}

const INDENT: &[u8] = b"  ";
/// The widest a container other than a flat member object or an array of numbers is kept
/// on one line (its indentation included).
const WIDTH: usize = 100;

/// One element of an open container: an object's key (as JSON), the element written
/// compactly, and written over several lines when it is to be (None: on one line).
#[derive(Debug, Default)]
struct Item {
    key: Vec<u8>,
    compact: Vec<u8>,
    lines: Option<Vec<u8>>,
}

/// An open array or object; undecided (on one line or not) until it closes.
#[derive(Debug)]
struct Frame {
    object: bool,
    /// The value of an object's member (not an array's element, not the document).
    member: bool,
    /// An element of an array (a record of a list: a result, a finding): on one line.
    element: bool,
    /// While an object's key is being written.
    in_key: bool,
    items: Vec<Item>,
    /// Every element a number or null.
    numbers: bool,
    /// Every element a plain value (not an array or object).
    plain: bool,
    /// Every element a plain value, an array of plain values or an object of such (flat).
    flat: bool,
    /// Some element is written over several lines.
    lines: bool,
}

/// The formatter of [`pretty`]: each open container's elements are kept until it closes,
/// written both compactly and (where decided so) over lines, so that a container is laid
/// out once what it holds is known.
#[derive(Debug, Default)]
struct Indented {
    open: Vec<Frame>,
}

impl Indented {
    fn newline(out: &mut Vec<u8>, depth: usize) {
        out.push(b'\n');
        for _ in 0..depth {
            out.extend_from_slice(INDENT);
        }
    }

    /// Write `bytes` of a plain value or key: into the element being written of the
    /// innermost container, else (a plain document) out.
    fn put<W: ?Sized + Write>(&mut self, w: &mut W, bytes: &[u8]) -> io::Result<()> {
        match self.open.last_mut() {
            Some(f) => {
                if let Some(item) = f.items.last_mut() {
                    if f.in_key {
                        item.key.extend_from_slice(bytes);
                    } else {
                        item.compact.extend_from_slice(bytes);
                    }
                }
                Ok(())
            }
            None => w.write_all(bytes),
        }
    }

    /// A plain value's first token.
    fn plain<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        bytes: &[u8],
        number: bool,
    ) -> io::Result<()> {
        if let Some(f) = self.open.last_mut().filter(|f| !f.in_key) {
            f.numbers &= number;
        }
        self.put(w, bytes)
    }

    fn begin(&mut self, object: bool) {
        let member = self.open.last().is_some_and(|f| f.object);
        let element = self.open.last().is_some_and(|f| !f.object);
        self.open.push(Frame {
            object,
            member,
            element,
            in_key: false,
            items: vec![],
            numbers: true,
            plain: true,
            flat: true,
            lines: false,
        });
    }

    /// The next element of the innermost container.
    fn element(&mut self, key: bool) {
        if let Some(f) = self.open.last_mut() {
            f.items.push(Item::default());
            f.in_key = key;
        }
    }

    fn end<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        let Some(f) = self.open.pop() else {
            return Ok(());
        };
        let depth = self.open.len();
        let (open, close) = if f.object { (b'{', b'}') } else { (b'[', b']') };
        let mut compact = vec![open];
        for (i, item) in f.items.iter().enumerate() {
            if i > 0 {
                compact.push(b',');
            }
            if f.object {
                compact.extend_from_slice(&item.key);
                compact.push(b':');
            }
            compact.extend_from_slice(&item.compact);
        }
        compact.push(close);
        let fits = !f.lines && compact.len() + depth * INDENT.len() <= WIDTH;
        let one_line = f.items.is_empty()
            || fits
            || f.element
            || if f.object {
                f.member && f.flat
            } else {
                f.plain && f.numbers
            };
        let lines = (!one_line).then(|| {
            let mut out = vec![open];
            let last = f.items.len().saturating_sub(1);
            for (i, item) in f.items.iter().enumerate() {
                Self::newline(&mut out, depth + 1);
                if f.object {
                    out.extend_from_slice(&item.key);
                    out.extend_from_slice(b": ");
                }
                out.extend_from_slice(item.lines.as_ref().unwrap_or(&item.compact));
                if i < last {
                    out.push(b',');
                }
            }
            Self::newline(&mut out, depth);
            out.push(close);
            out
        });
        // A flat container: plain values, arrays of them, objects of such.
        let flat = if f.object { f.flat } else { f.plain };
        match self.open.last_mut() {
            Some(parent) => {
                parent.numbers = false;
                parent.plain = false;
                parent.flat &= flat;
                parent.lines |= lines.is_some();
                if let Some(item) = parent.items.last_mut() {
                    item.compact = compact;
                    item.lines = lines;
                }
                Ok(())
            }
            None => w.write_all(lines.as_ref().unwrap_or(&compact)),
        }
    }
}

macro_rules! plain {
    ($($name:ident($t:ty)),* $(,)?) => {$(
        fn $name<W: ?Sized + Write>(&mut self, w: &mut W, v: $t) -> io::Result<()> {
            let mut b = Vec::new();
            serde_json::ser::CompactFormatter.$name(&mut b, v)?;
            self.plain(w, &b, true)
        }
    )*};
}

impl Formatter for Indented {
    plain!(
        write_i8(i8),
        write_i16(i16),
        write_i32(i32),
        write_i64(i64),
        write_i128(i128),
        write_u8(u8),
        write_u16(u16),
        write_u32(u32),
        write_u64(u64),
        write_u128(u128),
        write_f32(f32),
        write_f64(f64),
        write_number_str(&str),
    );

    fn write_bool<W: ?Sized + Write>(&mut self, w: &mut W, v: bool) -> io::Result<()> {
        self.plain(w, if v { b"true" } else { b"false" }, false)
    }

    fn write_null<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.plain(w, b"null", true)
    }

    fn write_raw_fragment<W: ?Sized + Write>(&mut self, w: &mut W, v: &str) -> io::Result<()> {
        self.plain(w, v.as_bytes(), false)
    }

    fn begin_string<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.plain(w, b"\"", false)
    }

    fn end_string<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.put(w, b"\"")
    }

    fn write_string_fragment<W: ?Sized + Write>(&mut self, w: &mut W, s: &str) -> io::Result<()> {
        self.put(w, s.as_bytes())
    }

    fn write_char_escape<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        c: serde_json::ser::CharEscape,
    ) -> io::Result<()> {
        let mut b = Vec::new();
        serde_json::ser::CompactFormatter.write_char_escape(&mut b, c)?;
        self.put(w, &b)
    }

    fn begin_array<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.begin(false);
        Ok(())
    }

    fn begin_array_value<W: ?Sized + Write>(&mut self, _: &mut W, _: bool) -> io::Result<()> {
        self.element(false);
        Ok(())
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        Ok(())
    }

    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.end(w)
    }

    fn begin_object<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.begin(true);
        Ok(())
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, _: &mut W, _: bool) -> io::Result<()> {
        self.element(true);
        Ok(())
    }

    fn end_object_key<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        Ok(())
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        if let Some(f) = self.open.last_mut() {
            f.in_key = false;
        }
        Ok(())
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        Ok(())
    }

    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.end(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_record_is_a_line_and_the_lists_that_hold_records_are_indented() {
        let long = "x".repeat(80);
        let v = json!({
            "samples": [23.5, 1, null, 24.25, 1e-7, 23.5, 1, null, 24.25, 1e-7, 23.5, 1, null, 24.25],
            "stats": {"median": 1.5, "n": 10, "unit": "ns"},
            "empty": [],
            "none": {},
            "rounds": {"seq": [4, 7], "disturbed": {"steal": {"value": [null, 4.5], "limit": 2.0}}},
            "findings": [{"id": "x", "evidence": ["a \"b\"\n", long.clone()]}, {"id": "y", "evidence": []}],
            "cpus": [[0, 1], null, [2]],
            "mixed": [1, {"a": 2}, true],
            "wide": {"seq": (0..40).collect::<Vec<u32>>(), "others": {"cpus": [0, 1], "why": long.clone()}},
            "records": [{"cpu": 0, "why": long.clone()}, {"cpu": 1}],
            "names": [long.clone(), long.clone()],
        });
        let text = pretty(&v).unwrap();
        let want = r#"{
  "cpus": [[0,1],null,[2]],
  "empty": [],
  "findings": [
    {"evidence":["a \"b\"\n","LONG"],"id":"x"},
    {"evidence":[],"id":"y"}
  ],
  "mixed": [1,{"a":2},true],
  "names": [
    "LONG",
    "LONG"
  ],
  "none": {},
  "records": [
    {"cpu":0,"why":"LONG"},
    {"cpu":1}
  ],
  "rounds": {"disturbed":{"steal":{"limit":2.0,"value":[null,4.5]}},"seq":[4,7]},
  "samples": [23.5,1,null,24.25,1e-7,23.5,1,null,24.25,1e-7,23.5,1,null,24.25],
  "stats": {"median":1.5,"n":10,"unit":"ns"},
  "wide": {"others":{"cpus":[0,1],"why":"LONG"},"seq":[SEQ]}
}"#
        .replace("LONG", &long)
        .replace(
            "SEQ",
            &(0..40).map(|i| i.to_string()).collect::<Vec<_>>().join(","),
        );
        assert_eq!(text, want);
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, v);
        assert_eq!(pretty(&json!([])).unwrap(), "[]");
        assert_eq!(pretty(&json!(1.5)).unwrap(), "1.5");
        assert_eq!(pretty(&json!({"a": [1, 2]})).unwrap(), "{\"a\":[1,2]}");
        // Keys in the order the type writes them (a struct's, not sorted), integer keys
        // quoted.
        let m: std::collections::BTreeMap<u32, Vec<u32>> = [(2, vec![1]), (10, vec![])].into();
        assert_eq!(pretty(&m).unwrap(), "{\"2\":[1],\"10\":[]}");
    }
}
