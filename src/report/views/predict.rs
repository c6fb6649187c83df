//! The prediction section of the report (`truebench predict` on a load-step run's own
//! settings, at a p99 target of 5 ms): per measured setting the measured p99 curve, the
//! calibrated model's curve, and the predicted highest rate with its interval; or, when
//! the run cannot support a prediction, why.

use super::View;
use crate::predict::{self, DEFAULT_P99_US};
use crate::report::svg::{Chart, LineChart};
use crate::result::RunDocument;
use crate::units::num;

pub struct Predict;

impl View for Predict {
    fn title(&self) -> &'static str {
        "Capacity prediction"
    }

    fn applies(&self, doc: &RunDocument) -> bool {
        doc.loadstep.is_some()
    }

    fn summary(&self, _doc: &RunDocument) -> String {
        // `truebench predict RUN` prints it; the run's own summary stays as it was.
        String::new()
    }

    fn headline(&self, doc: &RunDocument) -> Vec<String> {
        let (p, _) = predict::curves(doc, DEFAULT_P99_US);
        predict::text::render(&p)
            .lines()
            .map(|l| l.trim().to_string())
            .collect()
    }

    fn charts(&self, doc: &RunDocument) -> Vec<Chart> {
        let (_, curves) = predict::curves(doc, DEFAULT_P99_US);
        curves
            .into_iter()
            .map(|c| {
                let mut marks = vec![];
                if let Some(r) = c.max_rate {
                    marks.push((r, format!("predicted {}/s", num(r))));
                }
                if let Some([lo, hi]) = c.interval {
                    marks.push((lo, "95% interval".to_string()));
                    marks.push((hi, String::new()));
                }
                let top = c
                    .measured
                    .iter()
                    .chain(&c.model)
                    .map(|p| p.0)
                    .fold(0.0, f64::max);
                let target = vec![(0.0, DEFAULT_P99_US), (top, DEFAULT_P99_US)];
                Chart::Lines(
                    LineChart::new(
                        format!("Predicted and measured p99 against load: {}", c.capacity),
                        "messages/s",
                        "p99 µs (log)",
                    )
                    .log(false, true)
                    .series_if_any("measured p99 (valid steps)", c.measured)
                    .series_if_any("model p99 (M/M/c, calibrated)", c.model)
                    .series("p99 target 5 ms", target)
                    .marks(marks),
                )
            })
            .collect()
    }
}
