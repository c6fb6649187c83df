//! What a document loses when read into its types and written back, as the store keeps it:
//! a number that does not fit its field (1e300 in a 32-bit load average became infinity,
//! written as null: the stored run was unreadable by `show`, `compare` and `export`) is
//! refused; a key no field holds (a newer version's, or one an earlier version wrote that
//! this one no longer reads) is named, since it is not stored.

use serde_json::Value;

/// The most dropped keys named.
const NAMED: usize = 5;

/// Keys of a form earlier versions wrote that this one reads and writes in another form:
/// not lost. A row's rounds as an object per round (`results/N/rounds/rounds`), now a
/// column per figure (`result::rounds`), their words made again from the figures.
fn rewritten(path: &str) -> bool {
    path.starts_with("/results/") && path.ends_with("/rounds/rounds")
}

/// What `input` lost in `kept` (the same document read and written back).
#[derive(Debug, Default, PartialEq)]
pub struct Lost {
    /// The first number that did not fit: its JSON pointer and value.
    pub unfit: Option<(String, String)>,
    /// JSON pointers of keys holding something (not null, empty or false) that `kept` has
    /// not, the first [`NAMED`].
    pub dropped: Vec<String>,
    /// How many keys were dropped in all.
    pub dropped_count: usize,
}

pub fn lost(input: &Value, kept: &Value) -> Lost {
    let mut out = Lost::default();
    walk(input, kept, &mut Vec::new(), &mut out);
    out
}

/// A value that says nothing a default does not (a field written only when set).
fn empty(v: &Value) -> bool {
    match v {
        Value::Null | Value::Bool(false) => true,
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        _ => false,
    }
}

/// One step of the path to a value: a key or an index (the JSON pointer is written only
/// for a value named in the answer: building it for every key was a tenth of an import).
enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

fn pointer(path: &[Step]) -> String {
    let mut out = String::new();
    for step in path {
        out.push('/');
        match step {
            Step::Key(k) => out.push_str(&k.replace('~', "~0").replace('/', "~1")),
            Step::Index(i) => out.push_str(&i.to_string()),
        }
    }
    out
}

fn walk<'a>(a: &'a Value, b: &Value, path: &mut Vec<Step<'a>>, out: &mut Lost) {
    match (a, b) {
        (Value::Number(n), Value::Null) if out.unfit.is_none() => {
            out.unfit = Some((pointer(path), n.to_string()));
        }
        (Value::Object(x), Value::Object(y)) => {
            for (k, v) in x {
                path.push(Step::Key(k));
                match y.get(k) {
                    Some(w) => walk(v, w, path, out),
                    None if !empty(v) => {
                        let at = pointer(path);
                        if !rewritten(&at) {
                            out.dropped_count += 1;
                            if out.dropped.len() < NAMED {
                                out.dropped.push(at);
                            }
                        }
                    }
                    None => {}
                }
                path.pop();
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (v, w)) in x.iter().zip(y).enumerate() {
                path.push(Step::Index(i));
                walk(v, w, path, out);
                path.pop();
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unfit_numbers_and_dropped_keys_are_found_defaults_are_not() {
        let input = json!({
            "env": {"load": {"one": 1e300, "five": 0.5}},
            "results": [{"x": 1}, {"x": 2, "new~key": {"a": 1}}],
            "pad": "text",
            "tags": {},
            "finished_at": null,
            "interrupted": false,
        });
        let kept = json!({
            "env": {"load": {"one": null, "five": 0.5}},
            "results": [{"x": 1}, {"x": 2}],
        });
        let l = lost(&input, &kept);
        assert_eq!(l.unfit, Some(("/env/load/one".into(), "1e+300".into())));
        assert_eq!(l.dropped, ["/pad", "/results/1/new~0key"]);
        assert_eq!(l.dropped_count, 2);
        assert_eq!(lost(&kept, &kept), Lost::default());
        // A row's rounds in the form of earlier versions are read, not lost.
        let rows = json!({"results": [{"rounds": {"rounds": [{"seq": 0}]}}]});
        let columns = json!({"results": [{"rounds": {"seq": [0]}}]});
        assert_eq!(lost(&rows, &columns), Lost::default());
    }
}
