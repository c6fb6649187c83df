//! Ranks that mean something over many runs. Sorted best first, a run ties with the
//! leader of its tie group (the first run of the group, the best of it) only when its 95%
//! interval overlaps the leader's, never because it overlaps its neighbour's: over 500
//! sorted hosts neighbours' intervals always overlap, and ties that chain put the fastest
//! and the slowest host at rank 1. Each run also gets its percentile (the share of runs
//! that are not better), which needs no tie rule at all.

/// One run's figure for ranking: its centre and 95% interval, on a scale where higher is
/// better (the caller negates or inverts times).
#[derive(Debug, Clone, Copy)]
pub struct Figure {
    pub value: f64,
    pub low: f64,
    pub high: f64,
}

fn overlaps(x: &Figure, y: &Figure) -> bool {
    x.low <= y.high && y.low <= x.high
}

/// Ranks (1 = best) of `sorted`, which is best first: a run shares the rank of its group's
/// leader when their intervals overlap; the first run that does not overlap the leader
/// starts a new group, ranked by its position.
pub fn tie_ranks(sorted: &[Figure]) -> Vec<usize> {
    let mut ranks = Vec::with_capacity(sorted.len());
    let mut leader = 0;
    for (i, f) in sorted.iter().enumerate() {
        if i > 0 && overlaps(f, &sorted[leader]) {
            ranks.push(ranks[leader]);
        } else {
            leader = i;
            ranks.push(i + 1);
        }
    }
    ranks
}

/// Percentile of each of `sorted` (best first): the share of runs, in %, that are not
/// better than it (the best of 500 is 100, the worst 0.2).
pub fn percentiles(sorted: &[Figure]) -> Vec<f64> {
    let n = sorted.len() as f64;
    (0..sorted.len())
        .map(|i| 100.0 * (n - i as f64) / n)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn five_hundred_hosts_whose_intervals_overlap_in_a_chain_do_not_all_tie_with_the_best() {
        // Each host 0.1% slower than the one before, each interval ±0.5%: every neighbour
        // overlaps, the ends are 50% apart.
        let figs: Vec<Figure> = (0..500)
            .map(|i| {
                let v = 1.0 - 0.001 * i as f64;
                Figure {
                    value: v,
                    low: v - 0.005,
                    high: v + 0.005,
                }
            })
            .collect();
        assert!(figs.windows(2).all(|w| overlaps(&w[0], &w[1])));
        let r = tie_ranks(&figs);
        assert_eq!(r[0], 1);
        assert!(r[499] > 450, "the slowest host ranks {}", r[499]);
        // Ties are real: the hosts within the best's interval share rank 1, no more.
        let ones = r.iter().filter(|x| **x == 1).count();
        assert!((5..=12).contains(&ones), "{ones} hosts tie with the best");
        // Ranks never go down the list and never exceed the position.
        assert!(r.windows(2).all(|w| w[0] <= w[1]));
        assert!(r.iter().enumerate().all(|(i, x)| *x <= i + 1));
        let p = percentiles(&figs);
        assert_eq!((p[0], p[499]), (100.0, 0.2));
    }

    #[test]
    fn runs_apart_get_their_positions_and_overlapping_ones_share() {
        let f = |v: f64| Figure {
            value: v,
            low: v - 0.5,
            high: v + 0.5,
        };
        assert_eq!(
            tie_ranks(&[f(10.0), f(9.8), f(5.0), f(4.9), f(1.0)]),
            vec![1, 1, 3, 3, 5]
        );
        assert!(tie_ranks(&[]).is_empty());
    }
}
