//! Messages about many inputs, summarised by kind: the first few of each kind of message
//! are shown whole, the rest counted ("and 497 more of the same kind: is not valid JSON:
//! expected value at line N column N"). One helper for every place that loops over inputs
//! and reports something per item (a bulk import's refusals, runs named twice, rows left
//! out of a fleet), so 100 KB of binary garbage or a full disk under a bulk import is a
//! screenful, not 400 lines.

use std::collections::HashMap;

/// Messages shown whole per kind; the rest of that kind are counted.
pub const SHOWN_PER_KIND: usize = 3;

/// The kind of a reason: the reason with its figures and quoted names taken out (each run
/// of digits is `N`, text in single quotes `'…'`), so that "line 1 column 7" and "line 1
/// column 9" are one kind. Digits that end a name (`UTF-8`: after a letter and `-`) stay.
pub fn kind_of(reason: &str) -> String {
    let mut out = String::with_capacity(reason.len());
    let mut quoted = false;
    let mut digits = false;
    let mut name = false;
    let mut before = [' ', ' '];
    for c in reason.chars() {
        let named =
            c.is_ascii_digit() && (name || (before[1] == '-' && before[0].is_ascii_alphabetic()));
        before = [before[1], c];
        name = named;
        if named {
            out.push(c);
            continue;
        }
        if c == '\'' {
            if !quoted {
                out.push_str("'…'");
            }
            quoted = !quoted;
            digits = false;
            continue;
        }
        if quoted {
            continue;
        }
        if c.is_ascii_digit() {
            if !digits {
                out.push('N');
            }
            digits = true;
            continue;
        }
        digits = false;
        out.push(c);
    }
    out
}

/// Messages of many inputs, counted by kind.
#[derive(Debug, Default)]
pub struct Repeated {
    /// Messages seen per kind, in the order kinds first came.
    counts: Vec<(String, usize)>,
    index: HashMap<String, usize>,
}

impl Repeated {
    pub fn new() -> Repeated {
        Repeated::default()
    }

    /// One message of `kind`: `Some(line)` to show now (one of the first
    /// `SHOWN_PER_KIND` of its kind), None when it is only counted.
    pub fn push(&mut self, kind: &str, line: String) -> Option<String> {
        let i = match self.index.get(kind) {
            Some(i) => *i,
            None => {
                self.counts.push((kind.to_string(), 0));
                self.index.insert(kind.to_string(), self.counts.len() - 1);
                self.counts.len() - 1
            }
        };
        self.counts[i].1 += 1;
        (self.counts[i].1 <= SHOWN_PER_KIND).then_some(line)
    }

    /// A line per kind with messages not shown: `and N more of the same kind: KIND`.
    pub fn summary(&self) -> Vec<String> {
        self.counts
            .iter()
            .filter(|(_, n)| *n > SHOWN_PER_KIND)
            .map(|(kind, n)| format!("and {} more of the same kind: {kind}", n - SHOWN_PER_KIND))
            .collect()
    }

    /// Every line to show for `items` (each a kind and its message), summaries last.
    pub fn lines<I: IntoIterator<Item = (String, String)>>(items: I) -> Vec<String> {
        let mut r = Repeated::new();
        let mut out: Vec<String> = items
            .into_iter()
            .filter_map(|(kind, line)| r.push(&kind, line))
            .collect();
        out.extend(r.summary());
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_of_each_kind_are_shown_and_the_rest_counted() {
        // 500 files of binary garbage, each refused for a different column, and 2 runs
        // given twice: 3 of the first kind, both of the second, one count line.
        let mut items: Vec<(String, String)> = (0..500)
            .map(|i| {
                let why = format!("is not valid JSON: expected value at line 1 column {i}");
                (kind_of(&why), format!("refused f{i}.json: {why}"))
            })
            .collect();
        for id in ["r1", "r2"] {
            items.push((
                "a run given twice".into(),
                format!("refused {id}: given twice"),
            ));
        }
        let lines = Repeated::lines(items);
        assert_eq!(
            lines,
            [
                "refused f0.json: is not valid JSON: expected value at line 1 column 0",
                "refused f1.json: is not valid JSON: expected value at line 1 column 1",
                "refused f2.json: is not valid JSON: expected value at line 1 column 2",
                "refused r1: given twice",
                "refused r2: given twice",
                "and 497 more of the same kind: is not valid JSON: expected value at line N column N",
            ]
        );
        assert!(Repeated::lines(vec![]).is_empty());
    }

    #[test]
    fn a_kind_takes_out_figures_and_quoted_names() {
        assert_eq!(
            kind_of("'/a/b 1.json' has 12 results, 3.5 over"),
            "'…' has N results, N.N over"
        );
        assert_eq!(kind_of("not UTF-8 text"), "not UTF-8 text");
        assert_eq!(kind_of("run 2026-11-27 x"), "run N-N-N x");
    }
}
