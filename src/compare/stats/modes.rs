//! Two modes in a row's rounds: the pooled rounds of two runs fall in two groups far apart
//! with little between them. Seen on 2026-11-28 on an AMD EPYC guest: a fresh process's
//! system-call clock read cost about 250 ns or about 300 ns, whichever process it was, on
//! either CPU; one run drew the slow one in 54% of its rounds, four others in 0-38%. The
//! share a run draws differs between runs more than its rounds can show, so the runs'
//! levels differ while within each mode the two runs agree.
//!
//! The split: sorted, the pooled log medians are cut where the two parts' means are
//! furthest apart in units of their pooled spread (`d`); each part must hold at least
//! [`MIN_SHARE`] of the rounds (and three), so a tail or a lone far round is no mode.
//! Two modes need `d` at least [`MIN_D`] and [`MIN_ROUNDS`] rounds: one group of normal
//! rounds, or a long tail (Student's t with 3 degrees of freedom, log-normal with σ 0.5),
//! reached it in under 1% of 400 simulated sets of 25 or 50 (the unit tests hold a
//! simulated rate).

/// Fewest rounds (both runs pooled) to look for two modes in.
pub const MIN_ROUNDS: usize = 16;
/// The smaller mode holds at least this share of the pooled rounds.
pub const MIN_SHARE: f64 = 0.2;
/// The modes' means at least this many pooled standard deviations apart.
pub const MIN_D: f64 = 4.5;

/// Two modes of a row's pooled rounds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Modes {
    /// Log medians at or below this are the low mode.
    pub cut: f64,
    /// The modes' mean log medians.
    pub low: f64,
    pub high: f64,
    /// Their distance in pooled standard deviations.
    pub d: f64,
}

impl Modes {
    pub fn is_high(&self, log: f64) -> bool {
        log > self.cut
    }
}

/// The two modes of `logs` (log round medians, any order), if they are that clearly apart.
pub fn find(logs: &[f64]) -> Option<Modes> {
    let n = logs.len();
    if n < MIN_ROUNDS || logs.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let mut s = logs.to_vec();
    s.sort_by(f64::total_cmp);
    let least = ((MIN_SHARE * n as f64).ceil() as usize).max(3);
    let mut prefix = vec![0.0; n + 1];
    let mut prefix_sq = vec![0.0; n + 1];
    for (i, v) in s.iter().enumerate() {
        prefix[i + 1] = prefix[i] + v;
        prefix_sq[i + 1] = prefix_sq[i] + v * v;
    }
    let mut best: Option<Modes> = None;
    for k in least..=n.saturating_sub(least) {
        let (n1, n2) = (k as f64, (n - k) as f64);
        let (s1, s2) = (prefix[k], prefix[n] - prefix[k]);
        let (q1, q2) = (prefix_sq[k], prefix_sq[n] - prefix_sq[k]);
        let (m1, m2) = (s1 / n1, s2 / n2);
        let ss = (q1 - n1 * m1 * m1).max(0.0) + (q2 - n2 * m2 * m2).max(0.0);
        let sd = (ss / (n as f64 - 2.0)).sqrt().max(1e-9);
        let d = (m2 - m1) / sd;
        if best.is_none_or(|b| d > b.d) {
            best = Some(Modes {
                cut: 0.5 * (s[k - 1] + s[k]),
                low: m1,
                high: m2,
                d,
            });
        }
    }
    best.filter(|m| m.d >= MIN_D)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    fn normal(rng: &mut rand::rngs::SmallRng) -> f64 {
        (0..12).map(|_| rng.gen::<f64>()).sum::<f64>() - 6.0
    }

    #[test]
    fn rounds_at_250_and_300_ns_are_two_modes() {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(7);
        let logs: Vec<f64> = (0..56)
            .map(|i| {
                let at: f64 = if i % 4 == 0 { 300.0 } else { 250.0 };
                at.ln() + 0.015 * normal(&mut rng)
            })
            .collect();
        let m = find(&logs).expect("two modes");
        assert!(
            (m.low.exp() - 250.0).abs() < 3.0 && (m.high.exp() - 300.0).abs() < 4.0,
            "{m:?}"
        );
        assert!(m.is_high(290f64.ln()) && !m.is_high(260f64.ln()));
    }

    /// One mode of normal rounds, or a long tail, is rarely two modes: under 2% of sets.
    #[test]
    fn one_mode_or_a_long_tail_is_rarely_two() {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(11);
        let mut found = 0;
        let sets = 300;
        for _ in 0..sets {
            for n in [25, 50] {
                let plain: Vec<f64> = (0..n).map(|_| 0.05 * normal(&mut rng)).collect();
                found += find(&plain).is_some() as usize;
                // Student's t with 3 degrees of freedom.
                let t3: Vec<f64> = (0..n)
                    .map(|_| {
                        let chi: f64 = (0..3).map(|_| normal(&mut rng).powi(2)).sum::<f64>() / 3.0;
                        0.05 * normal(&mut rng) / chi.sqrt().max(1e-6)
                    })
                    .collect();
                found += find(&t3).is_some() as usize;
            }
        }
        assert!(found * 50 <= 4 * sets, "{found} of {}", 4 * sets);
    }

    #[test]
    fn too_few_rounds_are_not_split() {
        let logs: Vec<f64> = (0..MIN_ROUNDS - 1).map(|i| (i % 2) as f64).collect();
        assert!(find(&logs).is_none());
    }
}
