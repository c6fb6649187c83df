//! One view per suite behind one trait: each knows its concise summary (what `run` and
//! `show` print by default, no wider than 100 columns), its full sections (`--verbose`,
//! `show --all`), its headline (the few lines the HTML report shows above its charts) and its
//! charts. The text and HTML renderers loop over [`VIEWS`]; adding a suite's presentation
//! is adding a file here and a line to that table.

pub mod c2c;
pub mod classic;
pub mod ctx;
pub mod experiment;
pub mod kinds;
pub mod loadstep;
pub mod memory;
pub mod predict;
pub mod record;
pub mod timers;

use super::svg::Chart;
use crate::result::{BenchResult, RunDocument};
use serde::de::DeserializeOwned;

/// The widest line a summary may print.
pub const WIDTH: u16 = 100;

pub trait View: Sync {
    /// The section's title.
    fn title(&self) -> &'static str;
    /// Whether the run has anything this view shows.
    fn applies(&self, doc: &RunDocument) -> bool;
    /// The concise summary, no line wider than [`WIDTH`].
    fn summary(&self, doc: &RunDocument) -> String;
    /// The full sections beyond the per-result table (matrices, per-step tables...).
    fn full(&self, _doc: &RunDocument) -> String {
        String::new()
    }
    /// A few lines the HTML report shows above the charts.
    fn headline(&self, _doc: &RunDocument) -> Vec<String> {
        vec![]
    }
    fn charts(&self, doc: &RunDocument) -> Vec<Chart>;
}

/// Every view, in the order sections are shown.
pub const VIEWS: &[&dyn View] = &[
    &timers::Timers,
    &ctx::Ctx,
    &c2c::C2c,
    &memory::Memory,
    &classic::Classic,
    &record::Record,
    &loadstep::Loadstep,
    &experiment::Experiment,
];

/// The results of one benchmark (`family.name`, any version).
pub fn of<'a>(doc: &'a RunDocument, base: &str) -> Vec<&'a BenchResult> {
    doc.results.iter().filter(|r| r.base_id() == base).collect()
}

/// The results of one benchmark with their params read as `P`.
pub fn with_params<'a, P: DeserializeOwned>(
    doc: &'a RunDocument,
    base: &str,
) -> Vec<(&'a BenchResult, P)> {
    of(doc, base)
        .into_iter()
        .filter_map(|r| Some((r, r.params.read::<P>()?)))
        .collect()
}

/// A line wrapped to [`WIDTH`] columns: continuation lines indented 4 more than the first,
/// words (and hyphenated names) never split, a word longer than the line on a line of its
/// own; ends with a newline.
pub fn wrap(line: &str) -> String {
    let lead = line.len() - line.trim_start().len();
    let indent = " ".repeat(lead + 4);
    let opts = textwrap::Options::new(WIDTH as usize)
        .initial_indent(&line[..lead])
        .subsequent_indent(&indent)
        .word_splitter(textwrap::WordSplitter::NoHyphenation)
        .break_words(false);
    textwrap::fill(line.trim_start(), opts) + "\n"
}

/// A table no wider than [`WIDTH`] (cells wrap).
pub fn narrow_table(header: &[&str]) -> comfy_table::Table {
    let mut t = super::table(header);
    t.set_width(WIDTH);
    t
}

/// A median bar with its CI: (label, median, low, high).
pub fn bar(label: String, r: &BenchResult) -> super::svg::Bar {
    (label, r.stats.median, r.stats.ci95_low, r.stats.ci95_high)
}
