//! The ctx suite: a pipe round trip per placement and task mode, where the tasks were seen,
//! and what the unpinned (`os`) figure really measured.

use super::{bar, narrow_table, with_params, View};
use crate::bench::ctx::PipeParams as Pipe;
use crate::report::svg::Chart;
use crate::result::{BenchResult, RunDocument};
use crate::units::duration_ns;

pub struct Ctx;

const BENCH: &str = "ctx.pipe";

fn placement_label(r: &BenchResult) -> String {
    match &r.placement.cpus {
        Some(c) => format!("{} {c:?}", r.placement.name),
        None => r.placement.name.clone(),
    }
}

/// The os row's verdict, from its os-placement finding.
fn verdict(r: &BenchResult) -> Option<&'static str> {
    r.findings.iter().find_map(|f| match f.id.as_str() {
        "os-placement-colocated" => Some("kept on one CPU: measures same-CPU switching"),
        "os-placement-spread" => Some("spread: pays the cross-CPU price"),
        "os-placement-mixed" => Some("mixed: same-CPU and cross-CPU, varies run to run"),
        _ => None,
    })
}

impl View for Ctx {
    fn title(&self) -> &'static str {
        "Context switch per placement"
    }

    fn applies(&self, doc: &RunDocument) -> bool {
        !with_params::<Pipe>(doc, BENCH).is_empty()
    }

    fn summary(&self, doc: &RunDocument) -> String {
        let rs = with_params::<Pipe>(doc, BENCH);
        let mut modes: Vec<&str> = rs.iter().map(|(_, p)| p.mode.as_str()).collect();
        modes.dedup();
        modes.sort_unstable();
        modes.dedup();
        let mut places: Vec<String> = Vec::new();
        for (r, _) in &rs {
            let l = placement_label(r);
            if !places.contains(&l) {
                places.push(l);
            }
        }
        let mut header = vec!["placement".to_string()];
        for m in &modes {
            header.push(format!("{m} round trip"));
            header.push("together".into());
        }
        header.push("os verdict".into());
        let mut t = narrow_table(&header.iter().map(String::as_str).collect::<Vec<_>>());
        for place in &places {
            let mut row = vec![place.clone()];
            let mut why = String::new();
            for m in &modes {
                match rs
                    .iter()
                    .find(|(r, p)| placement_label(r) == *place && p.mode == *m)
                {
                    Some((r, _)) => {
                        row.push(duration_ns(r.stats.median));
                        row.push(
                            r.placement
                                .observed
                                .as_ref()
                                .and_then(|o| o.colocated_fraction())
                                .map(|f| format!("{:.0}%", f * 100.0))
                                .unwrap_or_else(|| "-".into()),
                        );
                        if let (Some(v), true) = (verdict(r), why.is_empty()) {
                            why = v.to_string();
                        }
                    }
                    None => row.extend(["-".to_string(), "-".to_string()]),
                }
            }
            row.push(why);
            t.add_row(row);
        }
        format!(
            "Pipe round trip per placement (median; together = share of observations with both \
             tasks on one CPU):\n{t}\n"
        )
    }

    fn charts(&self, doc: &RunDocument) -> Vec<Chart> {
        let rs = with_params::<Pipe>(doc, BENCH);
        ["process", "thread"]
            .into_iter()
            .map(|mode| {
                let bars = rs
                    .iter()
                    .filter(|(_, p)| p.mode == mode)
                    .map(|(r, _)| bar(placement_label(r), r))
                    .collect();
                Chart::bars(
                    format!("Pipe round trip per placement ({mode} mode)"),
                    "ns/round-trip",
                    bars,
                )
            })
            .collect()
    }
}
