//! `truebench compare RUN_A RUN_B`.

use crate::store::{default_path, load_run, Location};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The baseline run (id, unique prefix, or `latest`).
    a: String,
    /// The run compared with it.
    b: String,
    /// Print the comparison as JSON.
    #[arg(long)]
    json: bool,
}

pub fn exec(a: Args, db: Option<&Location>) -> anyhow::Result<()> {
    let path = default_path(db)?;
    let ra = load_run(&path, &a.a)?;
    let rb = load_run(&path, &a.b)?;
    let c = crate::compare::compare(&ra, &rb);
    if a.json {
        super::print_json(&c)
    } else {
        crate::stdout::write(&crate::report::compare_table::render(&c))
    }
}
