//! The timers suite: what one read of each clock costs, per read path.

use super::{bar, narrow_table, with_params, View};
use crate::bench::timers::ClockReadParams as ClockRead;
use crate::report::svg::Chart;
use crate::result::RunDocument;
use crate::units::{duration_ns, pct};

pub struct Timers;

const BENCH: &str = "timers.clock-read";

impl View for Timers {
    fn title(&self) -> &'static str {
        "Clock read cost"
    }

    fn applies(&self, doc: &RunDocument) -> bool {
        !with_params::<ClockRead>(doc, BENCH).is_empty()
    }

    fn summary(&self, doc: &RunDocument) -> String {
        let rs = with_params::<ClockRead>(doc, BENCH);
        let sweep = rs.iter().any(|(_, p)| p.clocksource.is_some());
        let mut header = vec!["clock", "path"];
        if sweep {
            header.push("clocksource");
        }
        header.extend(["per read (median)", "95% CI", "CV"]);
        let mut t = narrow_table(&header);
        for (r, p) in &rs {
            let mut row = vec![p.clock.clone(), p.path.clone()];
            if sweep {
                row.push(p.clocksource.clone().unwrap_or_default());
            }
            row.extend([
                duration_ns(r.stats.median),
                format!(
                    "{} – {}",
                    duration_ns(r.stats.ci95_low),
                    duration_ns(r.stats.ci95_high)
                ),
                pct(r.stats.cv),
            ]);
            t.add_row(row);
        }
        format!("Clock read cost (ns per read; a timed batch lasts at least 10^4 reads):\n{t}\n")
    }

    fn charts(&self, doc: &RunDocument) -> Vec<Chart> {
        let bars = with_params::<ClockRead>(doc, BENCH)
            .into_iter()
            .map(|(r, p)| {
                let label = format!(
                    "{} {} {}",
                    p.clock,
                    p.path,
                    p.clocksource.unwrap_or_default()
                );
                bar(label, r)
            })
            .collect();
        vec![Chart::bars("Clock read cost", "ns/read", bars)]
    }
}
