//! A shift within one run: a stretch of a row's rounds, consecutive in the run's time,
//! whose level differs from the rest of the run's rounds more than rounds drawn in any
//! order would. The rounds of a row are spread over the run in a shuffled order so that a
//! host that changes for a while (a neighbouring guest busy for ten seconds, a sibling
//! hyperthread of the host taken) lands in some rounds of every row rather than in all of
//! one; a change lasting a good part of the run still moves every row measured then, and
//! the rounds' own spread, which counts them as independent, takes that run's level for a
//! property of the machine. Seen on 2026-11-28: the system-call clock reads of one run of
//! five were 20% slower in its rounds 11 to 21 of 29 and in none of the others, and every
//! comparison with that run called those rows.
//!
//! The test: for each stretch of consecutive rounds (at least [`MIN_STRETCH`], at most all
//! but [`MIN_STRETCH`]), the difference of its mean log median from the rest's, over its
//! standard error from the two parts' pooled spread; the largest over all stretches is
//! the statistic. Its distribution when the rounds' order does not matter (the rounds
//! exchangeable: no shift) comes from [`PERMUTATIONS`] shuffles of the same rounds, so the
//! test holds whatever the rounds' distribution (two modes, a long tail); the p-value is
//! the share of shuffles at least as extreme, with the observed order counted among them.
//! Deterministic: the shuffles are seeded from the rounds themselves.

use rand::seq::SliceRandom;
use rand::SeedableRng;

/// Fewest rounds a stretch, and the rest, may have: a lone round far from the others is an
/// outlier (`result::rounds`), not a shift.
pub const MIN_STRETCH: usize = 3;
/// Fewest rounds a row needs for the test.
pub const MIN_ROUNDS: usize = 2 * MIN_STRETCH + 2;
/// Shuffles the statistic is held against.
pub const PERMUTATIONS: usize = 999;
/// The largest p-value that counts as a shift: 1%. The test runs only on rows already
/// called, on both sides, so a quiet run is wrongly said to have shifted on about one
/// called row in fifty.
pub const MAX_P: f64 = 0.01;

/// A stretch of rounds found to differ from the rest of the run.
#[derive(Debug, Clone, PartialEq)]
pub struct Shift {
    /// The stretch: positions `from..to` (0-based) of the rounds in the run's order.
    pub from: usize,
    pub to: usize,
    /// Rounds in all.
    pub rounds: usize,
    /// Mean log median of the stretch and of the rest.
    pub stretch_level: f64,
    pub rest_level: f64,
    /// The permutation p-value.
    pub p: f64,
}

impl Shift {
    /// The part of the run that is its usual state: the larger of the stretch and the
    /// rest (the rest when they are equal), as its mean log median and its rounds.
    pub fn usual(&self) -> (f64, usize) {
        let len = self.to - self.from;
        if len > self.rounds - len {
            (self.stretch_level, len)
        } else {
            (self.rest_level, self.rounds - len)
        }
    }

    /// The stretch's level against the rest's, as a ratio (1.2: the stretch 20% higher).
    pub fn ratio(&self) -> f64 {
        (self.stretch_level - self.rest_level).exp()
    }
}

/// The largest standardised difference between a stretch of `x` and the rest, with that
/// stretch (`from`, `to`); None when no stretch can be tested.
fn largest(x: &[f64]) -> Option<(f64, usize, usize)> {
    let n = x.len();
    let mut sum = vec![0.0; n + 1];
    let mut sq = vec![0.0; n + 1];
    for (i, v) in x.iter().enumerate() {
        sum[i + 1] = sum[i] + v;
        sq[i + 1] = sq[i] + v * v;
    }
    let (total, total_sq) = (sum[n], sq[n]);
    let mut best: Option<(f64, usize, usize)> = None;
    for from in 0..n {
        for to in from + MIN_STRETCH..=n {
            let len = to - from;
            if n - len < MIN_STRETCH {
                break;
            }
            let (s1, q1) = (sum[to] - sum[from], sq[to] - sq[from]);
            let (s2, q2) = (total - s1, total_sq - q1);
            let (n1, n2) = (len as f64, (n - len) as f64);
            let (m1, m2) = (s1 / n1, s2 / n2);
            // Pooled variance of the two parts about their own means.
            let ss = (q1 - n1 * m1 * m1).max(0.0) + (q2 - n2 * m2 * m2).max(0.0);
            let var = ss / (n as f64 - 2.0);
            // A floor on the spread: rounds stored to their digits may tie exactly.
            let se = (var.max(1e-12) * (1.0 / n1 + 1.0 / n2)).sqrt();
            let z = (m1 - m2).abs() / se;
            if best.is_none_or(|(b, _, _)| z > b) {
                best = Some((z, from, to));
            }
        }
    }
    best
}

/// The most points the test runs on: a row of more rounds (up to 1000) is tested on the
/// means of consecutive blocks of them (a stretch of the run stays a stretch of blocks), so
/// the test's cost stays that of 100 rounds.
pub const MAX_POINTS: usize = 100;

/// The shift in `logs` (a row's log round medians in the run's order), if its rounds
/// differ by stretch more than shuffled rounds would at [`MAX_P`]; None otherwise, and for
/// fewer than [`MIN_ROUNDS`] rounds.
pub fn find(logs: &[f64]) -> Option<Shift> {
    let n = logs.len();
    if n < MIN_ROUNDS || logs.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let block = n.div_ceil(MAX_POINTS);
    let points: Vec<f64> = logs
        .chunks(block)
        .map(|c| c.iter().sum::<f64>() / c.len() as f64)
        .collect();
    let (observed, from, to) = largest(&points)?;
    let (from, to) = (from * block, (to * block).min(n));
    let seed = logs
        .iter()
        .fold(0u64, |h, v| h.rotate_left(7) ^ v.to_bits());
    let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
    let mut shuffled = points.clone();
    let mut as_extreme = 1usize;
    for _ in 0..PERMUTATIONS {
        shuffled.shuffle(&mut rng);
        if largest(&shuffled).is_some_and(|(z, _, _)| z >= observed) {
            as_extreme += 1;
        }
        // Past the limit already: the answer cannot change.
        if as_extreme as f64 > MAX_P * (PERMUTATIONS + 1) as f64 {
            return None;
        }
    }
    let p = as_extreme as f64 / (PERMUTATIONS + 1) as f64;
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let rest: Vec<f64> = logs[..from].iter().chain(&logs[to..]).copied().collect();
    Some(Shift {
        from,
        to,
        rounds: n,
        stretch_level: mean(&logs[from..to]),
        rest_level: mean(&rest),
        p,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    fn noisy(n: usize, seed: u64, sigma: f64) -> Vec<f64> {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
        (0..n)
            .map(|_| {
                // A sum of uniforms: near normal, deterministic.
                let u: f64 = (0..12).map(|_| rng.gen::<f64>()).sum::<f64>() - 6.0;
                5.5 + sigma * u
            })
            .collect()
    }

    /// The 2026-11-28 run: its system-call clock rows 20% slower in rounds 11 to 21 of 29.
    #[test]
    fn a_stretch_of_slow_rounds_is_found_where_it_was() {
        let mut x = noisy(29, 1, 0.03);
        for v in &mut x[10..21] {
            *v += 0.18;
        }
        let s = find(&x).expect("a shift");
        assert!(s.from.abs_diff(10) <= 1 && s.to.abs_diff(21) <= 1, "{s:?}");
        assert!(s.p <= MAX_P);
        assert!((s.ratio() - 1.2).abs() < 0.05, "{}", s.ratio());
        // The usual state is the rest: 18 rounds against 11.
        assert_eq!(s.usual().1, 29 - (s.to - s.from));
        assert!((s.usual().0 - 5.5).abs() < 0.03);
    }

    /// Rounds in two modes drawn in any order (a fresh process's system call costs 250 or
    /// 300 ns on this host) are no shift, nor are plain noisy rounds: at most about 1% of
    /// such rows are said to have shifted.
    #[test]
    fn rounds_in_two_modes_or_plain_noise_are_rarely_a_shift() {
        let mut found = 0;
        let rows = 300;
        for seed in 0..rows {
            let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
            let two_modes: Vec<f64> = (0..25)
                .map(|_| {
                    let mode = if rng.gen_bool(0.3) { 300f64 } else { 250f64 };
                    mode.ln() + 0.01 * (rng.gen::<f64>() - 0.5)
                })
                .collect();
            found += find(&two_modes).is_some() as usize;
            found += find(&noisy(25, 1000 + seed, 0.05)).is_some() as usize;
        }
        // 600 rows at 1%: 6 expected; 15 is beyond any chance reading of a 1% test.
        assert!(found <= 15, "{found} of {}", 2 * rows);
    }

    /// A row of 1000 rounds is tested on blocks of ten, and its stretch found to a block.
    #[test]
    fn a_thousand_rounds_are_tested_in_blocks() {
        let mut x = noisy(1000, 5, 0.03);
        for v in &mut x[400..700] {
            *v += 0.1;
        }
        let s = find(&x).expect("a shift");
        assert!(
            s.from.abs_diff(400) <= 10 && s.to.abs_diff(700) <= 10,
            "{s:?}"
        );
        assert_eq!(s.rounds, 1000);
        assert!(find(&noisy(1000, 6, 0.03)).is_none());
    }

    #[test]
    fn too_few_rounds_or_a_lone_far_round_are_not_tested_as_a_shift() {
        assert!(find(&noisy(MIN_ROUNDS - 1, 3, 0.01)).is_none());
        let mut x = noisy(20, 4, 0.01);
        x[7] += 1.0;
        assert!(find(&x).is_none(), "{:?}", find(&x));
    }
}
