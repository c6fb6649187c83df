//! The summary on top of a comparison: per suite, the one or two sentences a performance
//! engineer would write: the largest real difference with its cause and what remains when
//! the cause is held equal ("B is 28x faster because its tasks shared one CPU in 100% of
//! observations and A's in 0% (placement); pinned, the two are within 3% (no real
//! difference)"), then how many rows differ and how many of them are explained. The
//! first line says how many rows were tested, how many are real at the false discovery
//! rate, how many were not tested (at the edge of the L2, not comparable), and which noise
//! the verdicts rest on.

use super::causes::explain::{Claim, Status};
use super::stats::verdict::in_words;
use super::{Comparison, Row};
use crate::units::count;

/// A row in a few words (`Row::label`), with the role its copies play where the words do
/// not say it: "vdso clock_gettime(MONOTONIC)", "syscall 2 copies (all usable CPUs)".
pub fn row_name(r: &Row) -> String {
    match &r.role {
        Some(role) if !r.label.contains(role.as_str()) => format!("{} ({role})", r.label),
        _ => r.label.clone(),
    }
}

/// A row's one sentence: what differs, by how much, and why.
pub fn row_sentence(r: &Row) -> String {
    let what = row_name(r);
    let how = format!("B is {}", in_words(r.ratio, r.lower_is_better));
    let best = r
        .explanations
        .iter()
        .find(|e| e.claim == Claim::Explains)
        .or_else(|| r.explanations.iter().find(|e| e.claim == Claim::Partly));
    match best {
        Some(e) => {
            let mut s = format!("{what}: {how} because {} ({})", e.because, e.cause);
            if let Some(h) = &e.held_equal {
                s.push_str(&format!("; {h}"));
            }
            if r.status == Status::Partly {
                if let Some(rem) = &r.remains {
                    s.push_str(&format!("; partly explained: {rem}"));
                }
            }
            s.push('.');
            s
        }
        None => {
            let named: Vec<String> = r
                .explanations
                .iter()
                .filter(|e| matches!(e.claim, Claim::Contributes | Claim::NotMeasured))
                .map(|e| format!("{} ({})", e.cause, e.because))
                .collect();
            if named.is_empty() {
                format!("{what}: {how}, unexplained: no recorded cause changed.")
            } else {
                format!(
                    "{what}: {how}, unexplained; candidates: {}.",
                    named.join("; ")
                )
            }
        }
    }
}

/// The suite a row belongs to (`ctx` of `ctx.pipe@1`).
fn suite(r: &Row) -> &str {
    r.benchmark.split('.').next().unwrap_or(&r.benchmark)
}

/// The rows not tested, after the tested ones: "; 2 more at the edge of the L2 not tested
/// from one run a side; 1 not comparable" (empty when every row was tested).
fn untested(c: &Comparison) -> String {
    let mut s = String::new();
    if c.fdr.edge > 0 {
        s.push_str(&format!(
            "; {} more at the edge of the L2 not tested from one run a side",
            c.fdr.edge
        ));
    }
    if c.fdr.no_noise > 0 {
        // A side measured in one piece (an earlier version's), or with too few rounds kept.
        let earlier = c.rows.iter().any(|r| {
            r.noise.basis == crate::compare::stats::noise_model::Basis::None
                && r.rounds.iter().any(Option::is_none)
        });
        s.push_str(&format!(
            "; {} more not tested: {}, and no calibration or stored history of the host",
            c.fdr.no_noise,
            if earlier {
                crate::compare::stats::noise_model::NO_ROUNDS
            } else {
                "fewer than two rounds kept"
            }
        ));
    }
    if c.fdr.not_comparable > 0 {
        s.push_str(&format!("; {} not comparable", c.fdr.not_comparable));
    }
    s
}

/// "114 rows tested, 0 real at FDR 5%; 2 more at the edge of the L2 not tested from one run
/// a side; 6 more not tested: no rounds (an earlier version's document), and no calibration
/// or stored history of the host; noise: calibration X (110 rows), none (6 rows)": the rows
/// tested, at the edge of the L2, without noise and not comparable add up to the rows the
/// noise bases count.
pub fn overall(c: &Comparison) -> String {
    let n = &c.noise;
    let mut bases = vec![];
    if n.rounds_rows > 0 {
        bases.push(format!(
            "each run's rounds ({})",
            count(n.rounds_rows, "row")
        ));
    }
    if n.calibration_rows > 0 {
        bases.push(format!(
            "calibration {} ({})",
            n.calibration.as_deref().unwrap_or("?"),
            count(n.calibration_rows, "row")
        ));
    }
    if n.history_rows > 0 {
        bases.push(format!("stored history ({})", count(n.history_rows, "row")));
    }
    if n.paired_rows > 0 {
        bases.push(format!(
            "the ab run's paired rounds ({})",
            count(n.paired_rows, "row")
        ));
    }
    if n.none_rows > 0 {
        bases.push(format!(
            "none ({}: `truebench calibrate` on the host measures it)",
            count(n.none_rows, "row")
        ));
    }
    let per_cycle =
        match &n.clock {
            Some(clock) if n.per_cycle_rows > 0 => format!(
            " {} that {} with the core clock compared per cycle: one host, one setting, and {}.",
            count(n.per_cycle_rows, "row"),
            if n.per_cycle_rows == 1 { "moves" } else { "move" },
            clock.text()
        ),
            _ => String::new(),
        };
    format!(
        "{} tested, {} real at FDR {}%{}; noise: {}.{per_cycle}",
        count(c.fdr.tested, "row"),
        c.fdr.real,
        percent(c.fdr.q),
        untested(c),
        if bases.is_empty() {
            "none (no rows)".to_string()
        } else {
            bases.join(", ")
        }
    )
}

/// A rate as a percentage without trailing zeros: 0.05 is "5", 0.005 is "0.5".
fn percent(q: f64) -> String {
    let p = format!("{:.2}", q * 100.0);
    p.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The smallest and largest MDE of some rows, in words ("MDE 4-38%").
fn mde_range(rows: &[&Row]) -> Option<String> {
    let v: Vec<f64> = rows
        .iter()
        .filter(|r| r.comparability.is_empty())
        .filter_map(|r| r.mde)
        .collect();
    let lo = v.iter().copied().reduce(f64::min)?;
    let hi = v.iter().copied().reduce(f64::max)?;
    if hi < 0.995 {
        return Some(percent_range("MDE", lo * 100.0, hi * 100.0));
    }
    // Beyond 100% as factors ("MDE 49% to more than 10x"), never "MDE 106-79052%".
    let (lo, hi) = (mde_text(lo), mde_text(hi));
    Some(if lo == hi {
        format!("MDE {lo}")
    } else {
        format!("MDE {lo} to {hi}")
    })
}

/// "MDE 4-38%", or "MDE 8%" when both ends read the same as shown (7.6% and 8.4% read
/// "MDE 8-8%").
fn percent_range(what: &str, lo: f64, hi: f64) -> String {
    let (lo, hi) = (format!("{lo:.0}"), format!("{hi:.0}"));
    if lo == hi {
        format!("{what} {lo}%")
    } else {
        format!("{what} {lo}-{hi}%")
    }
}

use crate::compare::stats::noise_model::mde_text;

/// Per side, the conditions present throughout its rounds (`conditions::throughout`), one
/// sentence each: "Throughout B's rounds: other tasks took 41% of CPU 0-1 (22 rows: a
/// condition of B, compared as measured)". Empty where neither run had one.
fn conditions(c: &Comparison) -> Vec<String> {
    let mut out = vec![];
    for (i, side) in ["A", "B"].iter().enumerate() {
        let mut seen: Vec<(String, usize)> = vec![];
        for r in &c.rows {
            for t in r.rounds[i].iter().flat_map(|s| &s.throughout) {
                // "other tasks took 41% of CPU 0-1 throughout": the kind, before its figure.
                let kind = t.split(" took ").next().unwrap_or(t).to_string();
                match seen.iter_mut().find(|(k, _)| *k == kind) {
                    Some((_, n)) => *n += 1,
                    None => seen.push((kind, 1)),
                }
            }
        }
        for (kind, n) in seen {
            let shares: Vec<f64> = c
                .rows
                .iter()
                .flat_map(|r| r.rounds[i].iter().flat_map(|s| &s.throughout))
                .filter(|t| t.starts_with(&kind))
                .filter_map(|t| t.split(" took ").nth(1)?.split('%').next()?.parse().ok())
                .collect();
            let lo = shares.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = shares.iter().copied().fold(0.0, f64::max);
            let range = if (hi - lo).abs() < 0.5 {
                format!("{hi:.0}%")
            } else {
                format!("{lo:.0}-{hi:.0}%")
            };
            out.push(format!(
                "Throughout {side}'s rounds: {kind} took {range} of the rows' CPUs ({}: a condition of {side}, compared as measured, not set aside as noise).",
                count(n, "row")
            ));
        }
    }
    out
}

pub fn sentences(c: &Comparison) -> Vec<String> {
    let mut out = vec![overall(c)];
    out.extend(conditions(c));
    let mut suites: Vec<&str> = c.rows.iter().map(suite).collect();
    suites.dedup();
    let mut seen = std::collections::BTreeSet::new();
    suites.retain(|s| seen.insert(*s));
    for s in suites {
        let rows: Vec<&Row> = c.rows.iter().filter(|r| suite(r) == s).collect();
        let real: Vec<&&Row> = rows.iter().filter(|r| r.verdict.is_real()).collect();
        let with = |st: Status| real.iter().filter(|r| r.status == st).count();
        match real
            .iter()
            .max_by(|x, y| x.ratio.ln().abs().total_cmp(&y.ratio.ln().abs()))
        {
            Some(top) => {
                let mut line = format!("{s}: {}", row_sentence(top));
                line.push_str(&format!(
                    " {} of {} {}: {} explained, {} partly, {} unexplained.",
                    real.len(),
                    count(rows.len(), "row"),
                    if real.len() == 1 { "differs" } else { "differ" },
                    with(Status::Explained),
                    with(Status::Partly),
                    with(Status::Unexplained)
                ));
                out.push(line);
            }
            None => {
                use super::stats::verdict::Verdict;
                let of = |v: Verdict| rows.iter().filter(|r| r.verdict == v).count();
                let same: Vec<&Row> = rows
                    .iter()
                    .copied()
                    .filter(|r| r.verdict == Verdict::Equivalent)
                    .collect();
                let unsure: Vec<&Row> = rows
                    .iter()
                    .copied()
                    .filter(|r| r.verdict == Verdict::CannotTell)
                    .collect();
                let mut parts = vec![];
                if !same.is_empty() {
                    parts.push(format!(
                        "{} equivalent ({})",
                        same.len(),
                        mde_range(&same).unwrap_or_default()
                    ));
                }
                if !unsure.is_empty() {
                    let largest = unsure
                        .iter()
                        .map(|r| r.ratio)
                        .max_by(|x, y| x.ln().abs().total_cmp(&y.ln().abs()))
                        .unwrap_or(1.0);
                    // Rows with no noise to judge them by have no MDE: counted apart (the
                    // first sentence says why).
                    let untested = unsure.iter().filter(|r| r.mde.is_none()).count();
                    let what: Vec<String> = mde_range(&unsure)
                        .into_iter()
                        .chain((untested > 0).then(|| {
                            if untested == unsure.len() {
                                "not tested".to_string()
                            } else {
                                format!("{untested} not tested")
                            }
                        }))
                        .collect();
                    parts.push(format!(
                        "{} cannot tell ({}, largest B/A {largest:.3})",
                        unsure.len(),
                        what.join("; ")
                    ));
                }
                let not_comparable = of(Verdict::NotComparable);
                if not_comparable > 0 {
                    parts.push(format!("{not_comparable} not comparable"));
                }
                out.push(format!(
                    "{s}: no difference called in {}: {}.",
                    count(rows.len(), "row"),
                    parts.join(", ")
                ));
            }
        }
        if s == crate::bench::classic::SUITE {
            out.extend(c.indexes.iter().map(|i| format!("{s} {}.", i.sentence)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_range_whose_ends_read_the_same_is_one_figure() {
        assert_eq!(super::percent_range("MDE", 7.6, 8.4), "MDE 8%");
        assert_eq!(super::percent_range("MDE", 4.0, 38.2), "MDE 4-38%");
        use crate::compare::stats::noise_model::{mde_text, mde_text_fine};
        assert_eq!(mde_text(0.38), "38%");
        assert_eq!(mde_text(1.36), "2.4x");
        assert_eq!(mde_text(188.37), "more than 10x");
        assert_eq!(mde_text(f64::INFINITY), "more than 10x");
        assert_eq!(mde_text_fine(0.041), "4.1%");
        assert_eq!(mde_text_fine(23.4), "more than 10x");
    }
}
