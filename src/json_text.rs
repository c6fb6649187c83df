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
/// The widest a container of plain values other than numbers is kept on one line.
const WIDTH: usize = 100;

/// An open array or object.
#[derive(Debug)]
struct Frame {
    object: bool,
    /// Set once an element is an array or object: each element then on a line of its own.
    block: bool,
    /// While not `block`: each element written so far (an object's with its key), the last
    /// one being written.
    items: Vec<Vec<u8>>,
    /// Whether every element is a number or null (such an array stays on one line at any
    /// length: samples, the columns of rounds).
    numbers: bool,
}

/// The formatter of [`pretty`]. Only the innermost open container can be undecided (on one
/// line or not): opening a container inside another decides the outer one.
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

    /// Write `bytes` of a value: into the element being written of an undecided container,
    /// else out.
    fn put<W: ?Sized + Write>(&mut self, w: &mut W, bytes: &[u8]) -> io::Result<()> {
        match self.open.last_mut() {
            Some(f) if !f.block => {
                if let Some(item) = f.items.last_mut() {
                    item.extend_from_slice(bytes);
                }
                Ok(())
            }
            _ => w.write_all(bytes),
        }
    }

    /// A plain value's token.
    fn plain<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        bytes: &[u8],
        number: bool,
    ) -> io::Result<()> {
        if let Some(f) = self.open.last_mut() {
            f.numbers &= number || f.object;
        }
        self.put(w, bytes)
    }

    /// An array or object opens inside the innermost one: that one is decided, a line per
    /// element; what it held so far goes out so.
    fn nest<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        let depth = self.open.len();
        let Some(f) = self.open.last_mut() else {
            return Ok(());
        };
        if f.block {
            return Ok(());
        }
        f.block = true;
        w.write_all(if f.object { b"{" } else { b"[" })?;
        let items = std::mem::take(&mut f.items);
        let last = items.len().saturating_sub(1);
        for (i, item) in items.iter().enumerate() {
            Self::newline(w, depth)?;
            w.write_all(item)?;
            if i < last {
                w.write_all(b",")?;
            }
        }
        Ok(())
    }

    fn begin<W: ?Sized + Write>(&mut self, w: &mut W, object: bool) -> io::Result<()> {
        self.nest(w)?;
        self.open.push(Frame {
            object,
            block: false,
            items: vec![],
            numbers: true,
        });
        Ok(())
    }

    /// The next element of the innermost container.
    fn element<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        let depth = self.open.len();
        match self.open.last_mut() {
            Some(f) if f.block => {
                if !first {
                    w.write_all(b",")?;
                }
                Self::newline(w, depth)
            }
            Some(f) => {
                f.items.push(vec![]);
                Ok(())
            }
            None => Ok(()),
        }
    }

    fn end<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        let Some(f) = self.open.pop() else {
            return Ok(());
        };
        let (open, close): (&[u8], &[u8]) = if f.object { (b"{", b"}") } else { (b"[", b"]") };
        if f.block {
            Self::newline(w, self.open.len())?;
            return w.write_all(close);
        }
        let len: usize = f.items.iter().map(|i| i.len() + 2).sum();
        let one_line = (f.numbers && !f.object) || len + self.open.len() * INDENT.len() <= WIDTH;
        if one_line || f.items.is_empty() {
            let mut line = open.to_vec();
            for (i, item) in f.items.iter().enumerate() {
                if i > 0 {
                    line.extend_from_slice(b", ");
                }
                line.extend_from_slice(item);
            }
            line.extend_from_slice(close);
            return self.put(w, &line);
        }
        // Too wide for a line: a line per element after all (its parent, if any, is
        // decided already: this container was nested in it).
        self.open.push(Frame {
            items: vec![],
            block: false,
            ..f
        });
        let items = f.items;
        if let Some(top) = self.open.last_mut() {
            top.items = items;
        }
        self.nest(w)?;
        self.open.pop();
        Self::newline(w, self.open.len())?;
        w.write_all(close)
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

    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.begin(w, false)
    }

    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.element(w, first)
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        Ok(())
    }

    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.end(w)
    }

    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.begin(w, true)
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.element(w, first)
    }

    fn end_object_key<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        Ok(())
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.put(w, b": ")
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
    fn containers_of_plain_values_stay_on_one_line_and_the_rest_is_indented() {
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
        });
        let text = pretty(&v).unwrap();
        let want = r#"{
  "cpus": [
    [0, 1],
    null,
    [2]
  ],
  "empty": [],
  "findings": [
    {
      "evidence": [
        "a \"b\"\n",
        "LONG"
      ],
      "id": "x"
    },
    {
      "evidence": [],
      "id": "y"
    }
  ],
  "mixed": [
    1,
    {"a": 2},
    true
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
  "samples": [23.5, 1, null, 24.25, 1e-7, 23.5, 1, null, 24.25, 1e-7, 23.5, 1, null, 24.25],
  "stats": {"median": 1.5, "n": 10, "unit": "ns"}
}"#
        .replace("LONG", &long);
        assert_eq!(text, want);
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, v);
        assert_eq!(pretty(&json!([])).unwrap(), "[]");
        assert_eq!(pretty(&json!(1.5)).unwrap(), "1.5");
        assert_eq!(
            pretty(&json!({"a": [1, 2]})).unwrap(),
            "{\n  \"a\": [1, 2]\n}"
        );
    }
}
