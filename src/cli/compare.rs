//! `truebench compare RUN_A RUN_B [RUN...]`: two runs row by row with every difference
//! explained; three runs or more as a fleet (`fleet`: each host against the
//! fleet's median, outliers first with their causes), or ranked against one of them with
//! `--baseline RUN`. Runs come from their ids, `--latest-per-host` (the newest run of each
//! host in the database), or, with no ids, the stored runs carrying `--tag K=V` or the tag
//! of `--by tag:KEY`. `--top N` caps every list. The drift of each row of a two-run
//! compare comes from the stored history of the baseline's host. With `--precision P`, a
//! two-run compare first adds rounds to its rows above P where it can (`compare_precision`).

use crate::compare::stats::noise_model::NoiseModel;
use crate::compare::stats::verdict::History;
use crate::error::{usage, usage_hint};
use crate::result::RunDocument;
use crate::store::{default_path, Location, Store};

/// At most this many earlier runs of a host make its drift history.
const HISTORY_RUNS: usize = 30;
/// How far back in the database the history is looked for.
const HISTORY_SCAN: usize = crate::store::calibration::SCAN;

#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:\n  \
truebench compare A B                          row by row, each difference explained\n  \
truebench compare A B -v                       with MDE, noise basis and each cause's evidence\n  \
truebench compare A B C --baseline B           A and C ranked against B\n  \
truebench compare --latest-per-host            the newest run of every host, outliers first\n  \
truebench compare --tag rack=b4 --by tag:host  the runs tagged rack=b4, one host per tag value")]
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
    /// With many runs: show the best N and the worst N of each benchmark (N at least 1;
    /// default: every run).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    top: Option<u32>,
    /// Group runs by one of their tags (`tag:KEY`, as given with `--tag KEY=VALUE`).
    #[arg(long, value_name = "tag:KEY")]
    by: Option<String>,
    /// With no run ids: compare the stored runs carrying this tag (repeatable: every one).
    #[arg(long = "tag", value_name = "KEY=VALUE", value_parser = super::measuring::parse_tag)]
    tags: Vec<(String, String)>,
    /// Two runs: every column (MDE, noise basis, rank test, p against the noise) and each
    /// cause's evidence. Fleet view: also the per-row table, each outlier's evidence and every
    /// host.
    #[arg(short, long)]
    verbose: bool,
    /// Print the comparison as JSON (schema truebench.compare/1).
    #[arg(long)]
    json: bool,
    /// The false discovery rate controlled across the rows: the expected share of rows
    /// called better or worse that are not (0 < Q < 1).
    #[arg(long, value_name = "Q", default_value_t = crate::compare::stats::verdict::DEFAULT_FDR, value_parser = parse_fdr)]
    fdr: f64,
    /// Two runs: add rounds, measured now on this machine, to the rows whose MDE is above
    /// this (`5%` or `0.05`) until they reach it or --budget runs out, for each run measured
    /// on this host in the setting it is in now (same CPU, quota, clocksource, kernel...);
    /// the added rounds are stored as a run tagged adds-to=RUN, the number of rounds is
    /// decided from the run's own rounds only (docs/compare.md, Precision on demand). Prints
    /// per row what it reached and why not; refused when neither run can be re-measured here.
    #[arg(long, value_name = "PERCENT", value_parser = super::run::parse_precision)]
    precision: Option<f64>,
    /// Time --precision may spend measuring added rounds (`90s`, or seconds; 1 s to 24 h)
    /// [default: 60s].
    #[arg(long, value_name = "DURATION", requires = "precision", value_parser = super::run::parse_budget)]
    budget: Option<f64>,
}

pub(super) fn parse_fdr(s: &str) -> Result<f64, String> {
    s.parse::<f64>()
        .ok()
        .filter(|q| *q > 0.0 && *q < 1.0)
        .ok_or_else(|| format!("'{s}' is not a rate between 0 and 1 (e.g. 0.05)"))
}

/// At most this many stored runs are selected by tag.
const SELECT_LIMIT: usize = 100_000;

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
    model_of(store, &list, host, doc, compared)
}

/// The noise model of `host` from the stored runs `list` (newest first): its calibration,
/// and as history its other runs measured in the same setting as `like` (a run under
/// another quota, clocksource or kernel differs by design, not by noise).
fn model_of(
    store: &Store,
    list: &[crate::store::RunSummary],
    host: &str,
    like: &RunDocument,
    compared: &[String],
) -> History {
    let others: Vec<_> = list
        .iter()
        .filter(|s| s.host.as_deref() == Some(host) && !compared.contains(&s.run_id))
        .collect();
    let (chosen, passed) =
        crate::store::calibration::choose(others.iter().copied(), host, chrono::Utc::now());
    for f in &passed {
        eprintln!(
            "{}",
            crate::stdout::printable(&format!(
                "truebench: {}",
                crate::store::calibration::passed_over(f, host)
            ))
        );
    }
    let calibration = chosen.map(|f| {
        let runs: Vec<RunDocument> = f.runs.iter().filter_map(|r| store.get(r).ok()).collect();
        (f.id, runs)
    });
    let runs: Vec<RunDocument> = others
        .iter()
        .filter(|s| {
            !s.tags
                .contains_key(crate::compare::stats::noise_model::CALIBRATION_TAG)
                && !s.tags.contains_key(crate::result::tags::ADDS_TO)
        })
        .filter_map(|s| store.get(&s.run_id).ok())
        .filter(|d| crate::compare::same_setting(&d.env, &like.env))
        .take(HISTORY_RUNS)
        .collect();
    NoiseModel::new(
        host,
        calibration
            .as_ref()
            .map(|(id, r)| (id.as_str(), r.as_slice())),
        &runs,
    )
}

/// The noise models of the fleet's hosts (those with a calibration or history only).
fn host_models(
    store: &Store,
    docs: &[RunDocument],
    compared: &[String],
) -> crate::fleet::noise::HostModels {
    let mut out = std::collections::BTreeMap::new();
    let Ok(list) = store.list(HISTORY_SCAN) else {
        return crate::fleet::noise::HostModels(out);
    };
    for (host, d) in docs.iter().filter_map(|d| Some((d.host.as_deref()?, d))) {
        if out.contains_key(host) {
            continue;
        }
        let m = model_of(store, &list, host, d, compared);
        if m.calibration.is_some() || !m.history.is_empty() {
            out.insert(host.to_string(), m);
        }
    }
    crate::fleet::noise::HostModels(out)
}

/// The run ids to compare: given, the newest of each host, or selected by tag.
fn select(a: &Args, by: Option<&str>, store: &Store) -> anyhow::Result<Vec<String>> {
    if a.latest_per_host {
        let ids: Vec<String> = store
            .latest_per_host()?
            .into_iter()
            .filter(|s| a.tags.iter().all(|(k, v)| s.tags.get(k) == Some(v)))
            .map(|s| s.run_id)
            .collect();
        if ids.len() < 2 {
            return Err(usage(format!(
                "--latest-per-host found {} in the database{}: nothing to compare",
                crate::units::count(ids.len(), "host"),
                if a.tags.is_empty() {
                    ""
                } else {
                    " with those tags"
                }
            )));
        }
        return Ok(ids);
    }
    if !a.runs.is_empty() {
        return Ok(a.runs.clone());
    }
    // No ids: the runs carrying the tags, and the tag of --by; oldest first.
    let mut ids: Vec<String> = store
        .list_filtered(SELECT_LIMIT, &a.tags)?
        .into_iter()
        .filter(|s| by.is_none_or(|k| s.tags.contains_key(k)))
        .map(|s| s.run_id)
        .collect();
    ids.reverse();
    if ids.len() < 2 {
        let what: Vec<String> = a
            .tags
            .iter()
            .map(|(k, v)| format!("tag {k}={v}"))
            .chain(by.map(|k| format!("a {k} tag")))
            .collect();
        return Err(usage_hint(
            format!(
                "{} stored {} {} {}: compare needs at least two",
                ids.len(),
                crate::units::noun(ids.len(), "run"),
                if ids.len() == 1 { "carries" } else { "carry" },
                what.join(" and ")
            ),
            "see `truebench history --tag KEY=VALUE`",
        ));
    }
    Ok(ids)
}

fn fleet_options<'a>(
    a: &Args,
    by: Option<&'a str>,
    models: &'a crate::fleet::noise::HostModels,
) -> crate::fleet::Options<'a> {
    crate::fleet::Options {
        top: a.top.map(|n| n as usize),
        by,
        noise: Some(models),
        explain_all: false,
    }
}

fn print_fleet(a: &Args, view: &crate::fleet::FleetView) -> anyhow::Result<()> {
    if a.json {
        super::print_json(view)
    } else {
        crate::stdout::write(&crate::report::fleet_text::render(view, a.verbose))
    }
}

/// The fleet view of stored runs: each document reduced as it is read
/// (`fleet::reduce`), the whole ones of the outliers and the typical host read again
/// by key for their explanations.
fn fleet_view(a: &Args, by: Option<&str>, store: &Store, ids: &[String]) -> anyhow::Result<()> {
    let docs = store.map_many(ids, crate::fleet::reduce::reduce)?;
    let models = host_models(store, &docs, ids);
    let mut whole = |hs: &[usize]| {
        let keys: Vec<String> = hs.iter().map(|h| ids[*h].clone()).collect();
        store.get_many(&keys)
    };
    let view = crate::fleet::view_reduced(&docs, &fleet_options(a, by, &models), &mut whole)?;
    print_fleet(a, &view)
}

pub fn exec(a: Args, db: Option<&Location>) -> anyhow::Result<()> {
    let by = a.by.as_deref().map(tag_key).transpose()?;
    if a.latest_per_host && !a.runs.is_empty() {
        return Err(usage_hint(
            "give runs or --latest-per-host, not both",
            "--baseline picks the baseline among the latest runs",
        ));
    }
    let from_store =
        a.latest_per_host || (a.runs.is_empty() && (by.is_some() || !a.tags.is_empty()));
    if !from_store && a.runs.len() < 2 {
        return Err(usage_hint(
            "compare needs at least two runs",
            "give two or more run ids (see `truebench history`), --latest-per-host, or --tag KEY=VALUE",
        ));
    }
    if !a.runs.is_empty() && !a.tags.is_empty() {
        return Err(usage_hint(
            "give runs or --tag, not both",
            "--tag selects the stored runs to compare when no run is named",
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
    let ids = select(&a, by, &store)?;
    if from_store && a.baseline.is_none() && ids.len() >= 3 {
        return fleet_view(&a, by, &store, &ids);
    }
    // Ids the store listed (latest per host, a tag selection) are read together; ids given
    // may be prefixes or `latest`, each resolved.
    let mut docs = if from_store {
        store.get_many(&ids)?
    } else {
        ids.iter()
            .map(|r| store.get(r))
            .collect::<anyhow::Result<Vec<_>>>()?
    };
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
    let two = docs.len() == 2 && a.top.is_none() && by.is_none();
    if a.precision.is_some() && !two {
        return Err(usage_hint(
            "--precision compares two runs",
            "name the two runs: truebench compare A B --precision 5%",
        ));
    }
    if two {
        let (x, y) = (&docs[baseline], &docs[1 - baseline]);
        if x.run_id == y.run_id {
            eprintln!(
                "truebench: A and B are the same run ({}): every row is equal by construction",
                crate::stdout::printable(&x.run_id)
            );
        }
        let (c, interrupted) = match a.precision {
            None => (crate::compare::compare_at(x, y, &hist(x), a.fdr), false),
            Some(target) => {
                let p = super::compare_precision::Precision {
                    target,
                    budget_s: a
                        .budget
                        .unwrap_or(crate::session::precision::DEFAULT_BUDGET_S),
                };
                super::compare_precision::compare(x, y, &hist(x), a.fdr, &p, db)?
            }
        };
        if a.json {
            super::print_json(&c)?;
        } else {
            crate::stdout::write(&crate::report::compare_table::render(&c, a.verbose))?;
            // What would reach each family's target on this host, from both runs' rounds.
            let work = crate::session::noise_said::compare_lines(x, y);
            if !work.is_empty() {
                let mut text = String::from("\n");
                text.push_str(&crate::report::views::wrap(
                    "What would work (each run's MDE against an identical run, and the time a run \
                     of this host would need for the target at the spread measured):",
                ));
                for l in work {
                    text.push_str(&crate::report::views::wrap(&format!("  {l}")));
                }
                crate::stdout::write(&text)?;
            }
        }
        return match interrupted {
            true => Err(crate::error::Interrupted.into()),
            false => Ok(()),
        };
    }
    if a.baseline.is_none() && docs.len() >= 3 {
        let models = host_models(&store, &docs, &compared);
        let view = crate::fleet::view(&docs, &fleet_options(&a, by, &models));
        return print_fleet(&a, &view);
    }
    let fleet = crate::fleet::ranking::rank(&docs, baseline, a.top.map(|n| n as usize), by, &hist);
    if a.json {
        super::print_json(&fleet)
    } else {
        crate::stdout::write(&crate::report::compare_table::render_fleet(&fleet))
    }
}
