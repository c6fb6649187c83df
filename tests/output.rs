//! What a person reads after `truebench run`: a summary per suite no wider than 100
//! columns, findings with warnings first; `--verbose` (and `show --all`) the full
//! per-result table.

mod common;

use common::TestEnv;

fn widest(text: &str) -> (usize, String) {
    text.lines()
        .map(|l| (l.chars().count(), l.to_string()))
        .max()
        .unwrap_or_default()
}

#[test]
fn run_prints_a_summary_within_100_columns_and_verbose_the_full_table() {
    let env = TestEnv::new();
    let args = [
        "run",
        "timers,ctx,c2c,memory",
        "--samples",
        "3",
        "--mode",
        "thread",
        "--array-size",
        "16M",
        // What is printed is tested here, not how sharp the rows are.
        "--budget",
        "12s",
    ];
    let text = env.text(&args);
    let (w, line) = widest(&text);
    assert!(w <= 100, "a line of {w} columns: {line}\n{text}");
    for want in [
        "Clock read cost",
        "Pipe round trip per placement",
        "thread round trip",
        "Cache-line one-way latency",
        "Memory bandwidth",
        "Measured levels",
        "Findings (warnings first):",
    ] {
        assert!(text.contains(want), "summary lacks '{want}':\n{text}");
    }
    // The summary is not the per-result table: no params column, no timer share.
    assert!(!text.contains("timer share"), "{text}");
    let tables = &text[..text.find("Findings").unwrap()];
    assert!(!tables.contains("size_bytes="), "{tables}");
    // Warnings before infos.
    let findings = &text[text.find("Findings (warnings first):").unwrap()..];
    let first_info = findings.find("[info]").unwrap_or(usize::MAX);
    let last_warning = findings.rfind("[warning]").unwrap_or(0);
    assert!(
        findings.find("[warning]").is_none() || last_warning < first_info,
        "{findings}"
    );

    let stored = env.text(&["show", "latest"]);
    assert_eq!(
        stored.lines().skip(1).collect::<Vec<_>>(),
        text.lines().skip(1).collect::<Vec<_>>(),
        "show prints what run printed"
    );
    let all = env.text(&["show", "latest", "--all"]);
    for want in [
        "timer share",
        "ctx.pipe@1",
        "memory.latency@1",
        "size_bytes=",
    ] {
        assert!(all.contains(want), "show --all lacks '{want}'");
    }

    let verbose = env.text(&[
        "run",
        "timers",
        "--samples",
        "3",
        "--verbose",
        "--budget",
        "5s",
    ]);
    for want in [
        "timer share",
        "95% CI",
        "timers.clock-read@1",
        "clock=monotonic",
    ] {
        assert!(
            verbose.contains(want),
            "--verbose lacks '{want}':\n{verbose}"
        );
    }
    let rows = verbose
        .lines()
        .filter(|l| l.contains("timers.clock-read@1"))
        .count();
    assert!(rows >= 6, "{rows} result rows:\n{verbose}");
}
