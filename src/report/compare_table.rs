//! A comparison of two runs as a table, with the environment differences that could explain it.

use super::units::num;
use crate::compare::Comparison;

pub fn render(c: &Comparison) -> String {
    let mut t = super::table(&[
        "benchmark",
        "params",
        "placement",
        "A median",
        "B median",
        "B/A",
        "CIs overlap",
        "p (rank test)",
        "verdict",
    ]);
    for r in &c.rows {
        t.add_row(vec![
            r.benchmark.clone(),
            r.params.clone(),
            r.placement.clone(),
            format!("{} {}", num(r.a_median), r.unit),
            format!("{} {}", num(r.b_median), r.unit),
            format!("{:.3}", r.ratio),
            if r.ci_overlap { "yes" } else { "no" }.into(),
            r.p_value
                .map(|p| format!("{p:.3}"))
                .unwrap_or_else(|| "n/a (<3 samples)".into()),
            match &r.warning {
                Some(w) => format!("{} ({w})", r.verdict),
                None => r.verdict.clone(),
            },
        ]);
    }
    let mut s = format!("A = {}\nB = {}\n{t}\n", c.a, c.b);
    for k in &c.only_in_a {
        s.push_str(&format!("only in A: {k}\n"));
    }
    for k in &c.only_in_b {
        s.push_str(&format!("only in B: {k}\n"));
    }
    if c.env_differences.is_empty() {
        s.push_str("Environment: no differences in topology, virtualization, clocksource, kernel or quota.\n");
    } else {
        s.push_str("Environment differences that could explain the results:\n");
        for d in &c.env_differences {
            s.push_str(&format!("  {}: A {} | B {}\n", d.what, d.a, d.b));
        }
    }
    s
}
