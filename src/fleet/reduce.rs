//! What the fleet view keeps of each host's document while it ranks: the results' figures
//! (medians, intervals, sample counts, the rounds' noise) and what pairs them into rows
//! (benchmark, params, placement, role, units; the machine's CPU count), without the
//! samples, the per-round lists beyond the first (whose sample count says comparability),
//! the findings or a recording. At 10,000 hosts of 75 KiB documents the whole documents
//! took 1.2 GB; the view reads them in chunks, reduces each as it is decoded, and reads the
//! few whole documents its explanations need (the outliers', the typical host's) afterwards
//! by key.

use crate::result::RunDocument;

/// Drop from `d` what the fleet's ranking does not read.
pub fn reduce(mut d: RunDocument) -> RunDocument {
    d.findings = vec![];
    d.skipped = vec![];
    d.recording = None;
    d.env.findings = vec![];
    for r in &mut d.results {
        r.samples = vec![];
        r.findings = vec![];
        if let Some(rounds) = &mut r.rounds {
            rounds.rounds.truncate(1);
            for x in &mut rounds.rounds {
                x.disturbed = vec![];
            }
            rounds.rounds.shrink_to_fit();
        }
    }
    d.results.shrink_to_fit();
    d
}
