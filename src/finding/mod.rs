//! The finding type every stage passes along: an id, a severity, a message and the
//! evidence it rests on (bounded), and the one table of ids (`table.rs`); ids are stable
//! (users filter on them). The rules that make findings are `crate::findings`.

pub mod table;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warning,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    pub id: String,
    pub severity: Severity,
    pub message: String,
    pub evidence: Vec<String>,
}

/// Evidence lines a finding holds whole; a longer list keeps the first of them and a count
/// of the rest (a finding over hundreds of CPUs or rounds stays a screenful, and so does
/// the document that holds it).
pub const MAX_EVIDENCE: usize = 16;

/// `evidence` within [`MAX_EVIDENCE`] lines: the first ones whole, the last line the count
/// of those left out.
pub fn bounded(mut evidence: Vec<String>) -> Vec<String> {
    if evidence.len() > MAX_EVIDENCE {
        let left = evidence.len() - (MAX_EVIDENCE - 1);
        evidence.truncate(MAX_EVIDENCE - 1);
        evidence.push(format!("and {left} more lines of the same evidence"));
    }
    evidence
}

/// Items a list inside an evidence line names ([`first_few`]); the rest are counted.
pub const SHOWN: usize = crate::repeated::SHOWN_PER_KIND;

/// The first [`SHOWN`] of `items` and a count of the rest, in words: "a", "a and b",
/// "a, b and c", "a, b, c and 37 more". Every finding that names items of a list that can
/// grow with the machine or the run (rounds, rows, CPUs) names them so.
pub fn first_few<T: std::fmt::Display>(items: &[T]) -> String {
    first_few_of(items, SHOWN)
}

/// [`first_few`] naming up to `shown` items.
pub fn first_few_of<T: std::fmt::Display>(items: &[T], shown: usize) -> String {
    let mut named: Vec<String> = items.iter().take(shown).map(|x| x.to_string()).collect();
    if items.len() > shown {
        named.push(format!("{} more", items.len() - shown));
    }
    match named.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    }
}

impl Finding {
    /// A finding of a kind in `table.rs`, its evidence [`bounded`].
    pub fn new(
        id: &str,
        severity: Severity,
        message: impl Into<String>,
        evidence: Vec<String>,
    ) -> Self {
        debug_assert!(
            table::kind(id).is_some_and(|k| k.severities.contains(&severity)),
            "finding {id} ({severity:?}) is not in finding/table.rs"
        );
        Finding {
            id: id.into(),
            severity,
            message: message.into(),
            evidence: bounded(evidence),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_evidence_list_keeps_its_first_lines_and_counts_the_rest() {
        let lines = |n: usize| (0..n).map(|i| format!("CPU {i}: 3.1 GHz")).collect();
        let f = Finding::new("steal-time", Severity::Warning, "m", lines(400));
        assert_eq!(f.evidence.len(), MAX_EVIDENCE);
        assert_eq!(f.evidence[14], "CPU 14: 3.1 GHz");
        assert_eq!(f.evidence[15], "and 385 more lines of the same evidence");
        let short = Finding::new("steal-time", Severity::Warning, "m", lines(MAX_EVIDENCE));
        assert_eq!(short.evidence, lines(MAX_EVIDENCE));
    }

    #[test]
    fn a_list_in_words_names_the_first_few_and_counts_the_rest() {
        let n = |k: usize| (1..=k).collect::<Vec<usize>>();
        assert_eq!(first_few::<usize>(&[]), "");
        assert_eq!(first_few(&n(1)), "1");
        assert_eq!(first_few(&n(2)), "1 and 2");
        assert_eq!(first_few(&n(3)), "1, 2 and 3");
        assert_eq!(first_few(&n(40)), "1, 2, 3 and 37 more");
        assert_eq!(first_few_of(&n(5), 4), "1, 2, 3, 4 and 1 more");
    }
}
