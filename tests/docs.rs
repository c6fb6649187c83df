//! The method apart from its measurements: docs/methodology.md says what is done and why,
//! short enough to read through, and links into docs/measurements.md, the dated log, by
//! section; every such link must land on a heading of the log, and the log's dates run
//! newest first. Reads the two files as text; measures nothing.

use std::path::Path;

fn doc(name: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("docs")
            .join(name),
    )
    .unwrap_or_else(|e| panic!("docs/{name}: {e}"))
}

/// A heading's anchor as GitHub makes it: lower case, punctuation but `-` and `_` dropped,
/// spaces made `-`.
fn anchor(heading: &str) -> String {
    heading
        .trim_start_matches('#')
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

#[test]
fn anchors_are_made_as_github_makes_them() {
    assert_eq!(anchor("### A/A at 11:59-12:02"), "aa-at-1159-1202");
    assert_eq!(anchor("## 2026-11-28"), "2026-11-28");
    assert_eq!(
        anchor("### The test command's time (10:53-11:26)"),
        "the-test-commands-time-1053-1126"
    );
}

#[test]
fn the_method_links_to_sections_of_the_log_that_exist() {
    let method = doc("methodology.md");
    let log = doc("measurements.md");
    let anchors: Vec<String> = log
        .lines()
        .filter(|l| l.starts_with('#'))
        .map(anchor)
        .collect();
    let links: Vec<&str> = method
        .split("measurements.md#")
        .skip(1)
        .map(|rest| rest.split(')').next().unwrap_or(rest))
        .collect();
    assert!(
        !links.is_empty(),
        "docs/methodology.md links to no section of docs/measurements.md"
    );
    for l in links {
        assert!(
            anchors.iter().any(|a| a == l),
            "docs/methodology.md links to measurements.md#{l}, which is no heading there"
        );
    }
}

#[test]
fn the_log_runs_newest_first() {
    let log = doc("measurements.md");
    let dates: Vec<&str> = log
        .lines()
        .filter_map(|l| l.strip_prefix("## "))
        .filter(|d| d.len() == 10 && d.as_bytes()[4] == b'-')
        .collect();
    assert!(dates.len() >= 2, "dated sections: {dates:?}");
    let mut sorted = dates.clone();
    sorted.sort_unstable_by(|a, b| b.cmp(a));
    assert_eq!(dates, sorted, "docs/measurements.md's dates, newest first");
}

#[test]
fn the_method_stays_short_enough_to_read_through() {
    let lines = doc("methodology.md").lines().count();
    assert!(
        lines < 400,
        "docs/methodology.md has {lines} lines: dated measurements belong in docs/measurements.md"
    );
}
