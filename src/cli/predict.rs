//! `truebench predict RUN... [--rate R] [--p99 T] [--capacity Q/W ...] [--json]`: the
//! highest rate a service holds below a p99 target per capacity setting, and the smallest
//! setting for a target rate, from stored load-step runs (src/predict/).

use crate::store::{default_path, load_runs, Location};

#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:\n  \
truebench loadstep --cpu-quota 1,1.5,2 --cpuset-width 2    (root; then:)\n  \
truebench predict latest --p99 5ms             the highest rate held per setting measured\n  \
truebench predict latest --rate 20000 --capacity 1.2/2,1.8/2")]
pub struct Args {
    /// Load-step runs to predict from (ids, unique prefixes, or `latest`), of one workload
    /// on one machine.
    #[arg(required = true, value_name = "RUN")]
    runs: Vec<String>,
    /// A target rate, messages per second (above 0, at most 10^9): the smallest capacity
    /// setting that holds it.
    #[arg(long, value_name = "R", value_parser = parse_rate)]
    rate: Option<f64>,
    /// The p99 latency target: `5ms`, `800us` or µs as a number (1 µs to 1 h).
    #[arg(long, value_name = "T", default_value = "5ms", value_parser = parse_p99)]
    p99: f64,
    /// Capacity settings to predict, QUOTA/WIDTH[@PERIOD] (CPUs of quota / CPUs of cpuset,
    /// e.g. 1.8/2); comma-separated or repeated (default: the settings the runs measured).
    /// A prediction holds at the CFS quota period its runs learnt at (loadstep
    /// --quota-period, default 100ms), which it uses; a PERIOD other than theirs (0.6/2@100ms
    /// from runs at 5ms) gets no figure, as the period sets how long throttling delays.
    #[arg(long, value_name = "Q/W[@PERIOD]", value_delimiter = ',', value_parser = crate::predict::parse_capacity)]
    capacity: Vec<crate::predict::Asked>,
    /// Print the prediction as JSON (schema truebench.predict/1).
    #[arg(long)]
    json: bool,
}

fn parse_rate(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim_end_matches("/s")
        .parse()
        .map_err(|_| format!("'{s}' is not a rate in messages per second"))?;
    if v > 0.0 && v <= 1e9 {
        Ok(v)
    } else {
        Err(format!(
            "a rate of {}/s: give more than 0 and at most 10^9 messages per second",
            crate::units::num(v)
        ))
    }
}

/// A p99 target in µs from `5ms`, `800us`, `800µs`, `0.2s` or a number of µs.
fn parse_p99(s: &str) -> Result<f64, String> {
    let us = crate::duration::micros(s, crate::duration::Bare::Micros)
        .ok_or_else(|| format!("'{s}' is not a latency (5ms, 800us)"))?;
    if (1.0..=3.6e9).contains(&us) {
        Ok(us)
    } else {
        Err(format!("{s} is outside 1 µs to 1 h"))
    }
}

pub fn exec(a: Args, db: Option<&Location>) -> anyhow::Result<()> {
    super::distinct(
        "--capacity",
        &a.capacity.iter().map(|a| a.name()).collect::<Vec<_>>(),
    )?;
    let docs = load_runs(&default_path(db)?, &a.runs)?;
    let q = crate::predict::Question {
        p99_us: a.p99,
        rate: a.rate,
        capacity: a.capacity,
    };
    let p = crate::predict::predict(&docs, &q)?;
    if a.json {
        super::print_json(&p)
    } else {
        crate::stdout::write(&crate::predict::text::render(&p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_targets_parse_with_their_units() {
        assert_eq!(parse_p99("5ms"), Ok(5000.0));
        assert_eq!(parse_p99("800us"), Ok(800.0));
        assert_eq!(parse_p99("0.2s"), Ok(200_000.0));
        assert_eq!(parse_p99("250"), Ok(250.0));
        assert!(parse_p99("fast").is_err() && parse_p99("0ms").is_err());
        assert!(parse_rate("20000/s").is_ok() && parse_rate("-1").is_err());
        // Said with the one number formatter: no 300-digit figure, no "0 is outside 0".
        let e = parse_rate("1e308").unwrap_err();
        assert!(e.contains("1.000e308") && e.len() < 120, "{e}");
        let e = parse_rate("0").unwrap_err();
        assert!(e.contains("more than 0"), "{e}");
    }
}
