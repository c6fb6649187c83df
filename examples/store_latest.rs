//! Time `Store::latest_per_host` (what `compare --latest-per-host` reads) on the store
//! that `--db`/`TRUEBENCH_DB` name: prints the hosts found and the best of 5 timings in ms.
//! Used by bench/store_scale.sh.

use truebench::store::{default_path, Store};

fn main() -> anyhow::Result<()> {
    let at = default_path(None)?;
    let store = Store::open_ro(&at)?.ok_or_else(|| anyhow::anyhow!("no store at {at}"))?;
    let mut best = f64::INFINITY;
    let mut hosts = 0;
    for _ in 0..5 {
        let t = std::time::Instant::now();
        hosts = store.latest_per_host()?.len();
        best = best.min(t.elapsed().as_secs_f64() * 1e3);
    }
    println!("{hosts} {best:.2}");
    Ok(())
}
