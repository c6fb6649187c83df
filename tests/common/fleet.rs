//! Planted fleets for the fleet view's tests, built from two real runs of this machine
//! (tests/fixtures/fleet: `run timers --samples 5` under clocksource tsc, and a second
//! later under kvm-clock).
//!
//! The fixtures predate rounds, so each host's document is given rounds noise like real
//! runs': six rounds per row whose medians scatter around the host's level with a per-row
//! standard error of its median of 0.5%, 1%, 2% or 3% (by row, as the families differ),
//! the row's median being the median of its round medians and its `rounds.noise` computed
//! from them as a run computes it (`result::rounds::noise_of`). Ordinary hosts are the tsc
//! run at their own level within ±2%; one row in a hundred is a disturbed run on that row
//! (two of the six rounds 12-20% slower, which moves the median a few percent and widens
//! the rounds' spread, as a burst of other work does). Planted: hosts under kvm-clock (the
//! kvm-clock run), and hosts uniformly 1.35x slower on every row.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use truebench::result::rounds::{noise_of, Round, Rounds};
use truebench::result::RunDocument;

/// What a host of a planted fleet is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Ordinary,
    Clocksource,
    Slower,
}

pub const ROUNDS: usize = 6;
/// The standard error of a row's median by row index (cycled).
pub const ROW_SE: [f64; 4] = [0.005, 0.01, 0.02, 0.03];
pub const SLOWER: f64 = 1.35;
/// The share of ordinary host x rows disturbed in their run.
pub const DISTURBED: f64 = 0.01;

pub fn fixture(name: &str) -> RunDocument {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/fleet")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn normal(rng: &mut SmallRng) -> f64 {
    let (u, v): (f64, f64) = (rng.gen_range(1e-12..1.0), rng.gen());
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

/// `n` hosts; `kinds(i)` says what host i is. Deterministic for a seed.
pub fn planted(n: usize, seed: u64, kinds: impl Fn(usize) -> Kind) -> Vec<(RunDocument, Kind)> {
    let tsc = fixture("timers-tsc.json");
    let kvm = fixture("timers-kvm-clock.json");
    let mut rng = SmallRng::seed_from_u64(seed);
    (0..n)
        .map(|i| {
            let kind = kinds(i);
            let mut d = if kind == Kind::Clocksource {
                kvm.clone()
            } else {
                tsc.clone()
            };
            let host = format!("host-{i:05}");
            d.run_id = format!("20990101T000000Z-{i:05}");
            d.host = Some(host.clone());
            d.env.hostname = Some(host.clone());
            d.tags = [("host".to_string(), host)].into();
            let level = if kind == Kind::Slower {
                SLOWER
            } else {
                rng.gen_range(0.98..1.02)
            };
            for (r, res) in d.results.iter_mut().enumerate() {
                let se = ROW_SE[r % ROW_SE.len()];
                let spread = se * (ROUNDS as f64).sqrt();
                let disturbed = kind == Kind::Ordinary && rng.gen_bool(DISTURBED);
                let mut f: Vec<f64> = (0..ROUNDS)
                    .map(|k| {
                        let burst = if disturbed && k < 2 {
                            rng.gen_range(1.12..1.20)
                        } else {
                            1.0
                        };
                        level * burst * (spread * normal(&mut rng)).exp()
                    })
                    .collect();
                let base = res.stats.median;
                let rounds: Vec<Round> = f
                    .iter()
                    .enumerate()
                    .map(|(k, x)| Round {
                        seq: k * 100 + r,
                        waited: None,
                        at_s: k as f64,
                        median: base * x,
                        samples: res.samples.len(),
                        disturbed: vec![],
                        others: None,
                        steal: None,
                    })
                    .collect();
                f.sort_by(|a, b| a.total_cmp(b));
                let g = (f[ROUNDS / 2 - 1] + f[ROUNDS / 2]) / 2.0;
                for s in &mut res.samples {
                    *s *= g;
                }
                let st = &mut res.stats;
                st.median *= g;
                st.ci95_low *= g;
                st.ci95_high *= g;
                st.mean *= g;
                st.min *= g;
                st.max *= g;
                res.derived.clear();
                let noise = noise_of(&rounds, None, None);
                res.rounds = Some(Rounds { rounds, noise });
            }
            (d, kind)
        })
        .collect()
}

/// 500 hosts: 10 under kvm-clock (from host 3, every 50th), 10 uniformly slower (from 17).
pub fn kind_of(i: usize) -> Kind {
    match i % 50 {
        3 => Kind::Clocksource,
        17 => Kind::Slower,
        _ => Kind::Ordinary,
    }
}
