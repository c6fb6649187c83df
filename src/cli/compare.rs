//! `truebench compare RUN_A RUN_B [RUN...]`: two runs row by row with every difference
//! explained; several runs ranked against a baseline (`--baseline`, default the first);
//! `--latest-per-host` for the newest run of each host in the database; `--top N` and
//! `--by tag:KEY` for fleets. The drift of each row comes from the stored history of the
//! baseline's host.

use crate::compare::noise_model::{latest_calibration, NoiseModel};
use crate::compare::verdict::History;
use crate::error::{usage, usage_hint};
use crate::result::RunDocument;
use crate::store::{default_path, Location, Store};

/// At most this many earlier runs of a host make its drift history.
const HISTORY_RUNS: usize = 30;
/// How far back in the database the history is looked for.
const HISTORY_SCAN: usize = 1000;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Runs to compare (ids, unique prefixes, or `latest`): the first is the baseline unless
    /// --baseline names another.
    #[arg(value_name = "RUN")]
    runs: Vec<String>,
    /// The run the others are compared with (default: the first run given).
    #[arg(long, value_name = "RUN")]
    baseline: Option<String>,
    /// Compare the newest run of each host in the database.
    #[arg(long)]
    latest_per_host: bool,
    /// With many runs: show the best N and the worst N of each benchmark.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    top: Option<u32>,
    /// Group runs by one of their tags (`tag:KEY`, as given with `--tag KEY=VALUE`).
    #[arg(long, value_name = "tag:KEY")]
    by: Option<String>,
    /// Print the comparison as JSON (schema truebench.compare/1).
    #[arg(long)]
    json: bool,
    /// The false discovery rate controlled across the rows: the expected share of rows
    /// called better or worse that are not (0 < Q < 1).
    #[arg(long, value_name = "Q", default_value_t = crate::compare::verdict::DEFAULT_FDR, value_parser = parse_fdr)]
    fdr: f64,
}

fn parse_fdr(s: &str) -> Result<f64, String> {
    s.parse::<f64>()
        .ok()
        .filter(|q| *q > 0.0 && *q < 1.0)
        .ok_or_else(|| format!("'{s}' is not a rate between 0 and 1 (e.g. 0.05)"))
}

/// The tag key of `--by tag:KEY`.
fn tag_key(by: &str) -> anyhow::Result<&str> {
    match by.strip_prefix("tag:") {
        Some(k) if !k.is_empty() => Ok(k),
        _ => Err(usage_hint(
            format!("--by '{by}' is not tag:KEY"),
            "group by a tag, e.g. --by tag:rack",
        )),
    }
}

/// The noise model of `doc`'s host: its newest calibration's runs and its other stored
/// runs (newest first, the compared ones left out of both).
fn history(store: Option<&Store>, doc: &RunDocument, compared: &[String]) -> History {
    let (Some(store), Some(host)) = (store, doc.host.as_deref()) else {
        return History::default();
    };
    let Ok(list) = store.list(HISTORY_SCAN) else {
        return History::default();
    };
    let others: Vec<_> = list
        .iter()
        .filter(|s| s.host.as_deref() == Some(host) && !compared.contains(&s.run_id))
        .collect();
    let calibration = latest_calibration(
        others
            .iter()
            .map(|s| (s.run_id.as_str(), s.host.as_deref(), &s.tags)),
        host,
    )
    .map(|(id, ids)| {
        let runs: Vec<RunDocument> = ids.iter().filter_map(|r| store.get(r).ok()).collect();
        (id, runs)
    });
    let runs: Vec<RunDocument> = others
        .iter()
        .filter(|s| {
            !s.tags
                .contains_key(crate::compare::noise_model::CALIBRATION_TAG)
        })
        .take(HISTORY_RUNS)
        .filter_map(|s| store.get(&s.run_id).ok())
        .collect();
    NoiseModel::new(
        host,
        calibration
            .as_ref()
            .map(|(id, r)| (id.as_str(), r.as_slice())),
        &runs,
    )
}

pub fn exec(a: Args, db: Option<&Location>) -> anyhow::Result<()> {
    let by = a.by.as_deref().map(tag_key).transpose()?;
    if a.latest_per_host && !a.runs.is_empty() {
        return Err(usage_hint(
            "give runs or --latest-per-host, not both",
            "--baseline picks the baseline among the latest runs",
        ));
    }
    if !a.latest_per_host && a.runs.len() < 2 {
        return Err(usage_hint(
            "compare needs at least two runs",
            "give two or more run ids (see `truebench history`), or --latest-per-host",
        ));
    }
    for r in a.runs.iter().chain(&a.baseline) {
        crate::store::check_run_ref(r)?;
    }
    let path = default_path(db)?;
    let Some(store) = Store::open_ro(&path)? else {
        return Err(usage_hint(
            format!(
                "no runs to compare: the results database {} does not exist yet",
                path.display()
            ),
            "run `truebench run` first, or pass --db",
        ));
    };
    let ids: Vec<String> = if a.latest_per_host {
        store
            .latest_per_host()?
            .into_iter()
            .map(|s| s.run_id)
            .collect()
    } else {
        a.runs.clone()
    };
    let mut docs = ids
        .iter()
        .map(|r| store.get(r))
        .collect::<anyhow::Result<Vec<_>>>()?;
    if docs.len() < 2 {
        return Err(usage(format!(
            "--latest-per-host found {} host(s) among the {} runs stored (runs without a host name are left out): nothing to compare",
            docs.len(),
            store.count()?
        )));
    }
    let baseline = match &a.baseline {
        None => 0,
        Some(b) => {
            let want = store.get(b)?;
            match docs.iter().position(|d| d.run_id == want.run_id) {
                Some(i) => i,
                None => {
                    docs.insert(0, want);
                    0
                }
            }
        }
    };
    let compared: Vec<String> = docs.iter().map(|d| d.run_id.clone()).collect();
    let hist = |d: &RunDocument| history(Some(&store), d, &compared);
    if docs.len() == 2 && a.top.is_none() && by.is_none() {
        let (x, y) = (&docs[baseline], &docs[1 - baseline]);
        let c = crate::compare::compare_at(x, y, &hist(x), a.fdr);
        return if a.json {
            super::print_json(&c)
        } else {
            crate::stdout::write(&crate::report::compare_table::render(&c))
        };
    }
    let fleet =
        crate::compare::ranking::rank(&docs, baseline, a.top.map(|n| n as usize), by, &hist);
    if a.json {
        super::print_json(&fleet)
    } else {
        crate::stdout::write(&crate::report::compare_table::render_fleet(&fleet))
    }
}
