//! JSON as truebench prints and exports it: indented like `serde_json::to_string_pretty`,
//! except that an array of plain values (numbers, strings, booleans, null) stays on one
//! line: `"samples": [23.3, 23.5, 23.0]`, not a line per number. A document's samples and
//! the columns of its rounds are such arrays; a line per value made a run's document
//! several times the size of its content. Any JSON reader reads either form alike.

use serde::Serialize;
use serde_json::ser::Formatter;
use std::io::{self, Write};

/// `v` as indented JSON, arrays of plain values on one line.
pub fn pretty<T: Serialize + ?Sized>(v: &T) -> serde_json::Result<String> {
    let mut out = Vec::with_capacity(4096);
    let mut ser = serde_json::Serializer::with_formatter(&mut out, Indented::default());
    v.serialize(&mut ser)?;
    // serde_json writes only UTF-8.
    Ok(String::from_utf8(out).unwrap_or_default())
}

const INDENT: &[u8] = b"  ";

/// An open array or object.
#[derive(Debug)]
enum Frame {
    /// An array: `block` once an element is an array or object (each element then on a
    /// line of its own); `next` set between `begin_array_value` and the element's first
    /// token, true for the first element.
    Array { block: bool, next: Option<bool> },
    /// An object: whether it has a key yet.
    Object { any: bool },
}

/// The formatter of [`pretty`].
#[derive(Debug, Default)]
struct Indented {
    open: Vec<Frame>,
}

impl Indented {
    fn newline<W: ?Sized + Write>(w: &mut W, depth: usize) -> io::Result<()> {
        w.write_all(b"\n")?;
        for _ in 0..depth {
            w.write_all(INDENT)?;
        }
        Ok(())
    }

    /// Before a value's first token: the separator an array element needs, on its own line
    /// when it (or an element before it) is an array or object.
    fn before_value<W: ?Sized + Write>(&mut self, w: &mut W, container: bool) -> io::Result<()> {
        let depth = self.open.len();
        let Some(Frame::Array { block, next }) = self.open.last_mut() else {
            return Ok(());
        };
        let Some(first) = next.take() else {
            return Ok(());
        };
        *block |= container;
        if !first {
            w.write_all(b",")?;
        }
        if *block {
            Self::newline(w, depth)
        } else if !first {
            w.write_all(b" ")
        } else {
            Ok(())
        }
    }
}

macro_rules! plain {
    ($($name:ident($t:ty)),* $(,)?) => {$(
        fn $name<W: ?Sized + Write>(&mut self, w: &mut W, v: $t) -> io::Result<()> {
            self.before_value(w, false)?;
            serde_json::ser::CompactFormatter.$name(w, v)
        }
    )*};
}

impl Formatter for Indented {
    plain!(
        write_bool(bool),
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
        write_raw_fragment(&str),
    );

    fn write_null<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.before_value(w, false)?;
        w.write_all(b"null")
    }

    fn begin_string<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.before_value(w, false)?;
        w.write_all(b"\"")
    }

    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.before_value(w, true)?;
        self.open.push(Frame::Array {
            block: false,
            next: None,
        });
        w.write_all(b"[")
    }

    fn begin_array_value<W: ?Sized + Write>(&mut self, _: &mut W, first: bool) -> io::Result<()> {
        if let Some(Frame::Array { next, .. }) = self.open.last_mut() {
            *next = Some(first);
        }
        Ok(())
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        Ok(())
    }

    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        if let Some(Frame::Array { block: true, .. }) = self.open.pop() {
            Self::newline(w, self.open.len())?;
        }
        w.write_all(b"]")
    }

    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.before_value(w, true)?;
        self.open.push(Frame::Object { any: false });
        w.write_all(b"{")
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if let Some(Frame::Object { any }) = self.open.last_mut() {
            *any = true;
        }
        if !first {
            w.write_all(b",")?;
        }
        Self::newline(w, self.open.len())
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }

    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        if let Some(Frame::Object { any: true }) = self.open.pop() {
            Self::newline(w, self.open.len())?;
        }
        w.write_all(b"}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn arrays_of_plain_values_stay_on_one_line_and_the_rest_is_indented() {
        let v = json!({
            "samples": [23.5, 1, "a", null, true],
            "empty": [],
            "none": {},
            "rounds": {"seq": [4, 7], "disturbed": {"steal": {"value": [null, 4.5], "limit": 2.0}}},
            "findings": [{"id": "x", "evidence": ["a \"b\"", "c"]}, {"id": "y", "evidence": []}],
            "cpus": [[0, 1], null, [2]],
            "mixed": [1, {"a": 2}, 3],
        });
        let text = pretty(&v).unwrap();
        assert_eq!(
            text,
            r#"{
  "cpus": [
    [0, 1],
    null,
    [2]
  ],
  "empty": [],
  "findings": [
    {
      "evidence": ["a \"b\"", "c"],
      "id": "x"
    },
    {
      "evidence": [],
      "id": "y"
    }
  ],
  "mixed": [1,
    {
      "a": 2
    },
    3
  ],
  "none": {},
  "rounds": {
    "disturbed": {
      "steal": {
        "limit": 2.0,
        "value": [null, 4.5]
      }
    },
    "seq": [4, 7]
  },
  "samples": [23.5, 1, "a", null, true]
}"#
        );
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, v);
        assert_eq!(pretty(&json!([])).unwrap(), "[]");
        assert_eq!(pretty(&json!(1.5)).unwrap(), "1.5");
    }
}
