//! Planted fleets for the fleet view's tests, built from two real runs of this machine
//! (tests/fixtures/fleet: `run timers --samples 5` under clocksource tsc, and a second
//! later under kvm-clock).
//!
//! Each host differs from the others as hosts of one model do: by a host factor and, on
//! each row, a row factor of its own, each log-normal with σ 1% (so a row's hosts scatter
//! by about 1.4%). The fixtures predate rounds, so each row is given rounds as a current run
//! writes them (17, as `run timers` wrote them on 2026-12-07) whose
//! medians scatter around the host's level by 1.25%, 2.5%, 5% or 7.5% (by row, as the
//! families differ), the row's median being the median
//! of its round medians and its `rounds.noise` computed from them as a run computes it
//! (`result::rounds::noise_of`). One ordinary row in a hundred is a disturbed run on that
//! row (a third of its rounds 12-20% slower, which moves the median a few percent and
//! widens the rounds' spread, as a burst of other work does). Planted: hosts under
//! kvm-clock (the kvm-clock run), and hosts uniformly 1.35x slower on every row.

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

pub const ROUNDS: usize = 17;
/// The σ of the log-normal host factor and of each row's factor.
pub const SIGMA: f64 = 0.01;
/// The standard deviation of a round's median about the host's level, by row index
/// (cycled): the standard error of the row's median is this over √ROUNDS (0.3-1.8%).
pub const ROUND_SIGMA: [f64; 4] = [0.0125, 0.025, 0.05, 0.075];
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
                (SIGMA * normal(&mut rng)).exp()
            };
            for (r, res) in d.results.iter_mut().enumerate() {
                let spread = ROUND_SIGMA[r % ROUND_SIGMA.len()];
                let disturbed = kind == Kind::Ordinary && rng.gen_bool(DISTURBED);
                let row = level * (SIGMA * normal(&mut rng)).exp();
                let mut f: Vec<f64> = (0..ROUNDS)
                    .map(|k| {
                        let burst = if disturbed && k < ROUNDS / 3 {
                            rng.gen_range(1.12..1.20)
                        } else {
                            1.0
                        };
                        row * burst * (spread * normal(&mut rng)).exp()
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
                let g = if ROUNDS % 2 == 1 {
                    f[ROUNDS / 2]
                } else {
                    (f[ROUNDS / 2 - 1] + f[ROUNDS / 2]) / 2.0
                };
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
