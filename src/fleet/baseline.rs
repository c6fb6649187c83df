//! The fleet as its own baseline: per row, the median over hosts of their medians; each
//! host's deviation from it as a log ratio; the fleet's spread per row as a robust scale
//! (1.4826 x the median absolute deviation of the log ratios, which the few outliers being
//! looked for do not move; Leys et al., JESP 2013); and the typical host (the medoid), the
//! one nearest the fleet median over all rows, against which outliers are explained.

use super::table::Table;

/// The consistency constant that makes the MAD estimate a normal standard deviation.
pub const MAD_TO_SD: f64 = 1.4826;
/// The smallest spread assumed on a row (0.1%): hosts that all report one figure would
/// otherwise make any difference infinitely significant (the practical floor still
/// decides what counts).
pub const MIN_SCALE: f64 = 0.001;

/// Per row, the fleet's centre and spread.
#[derive(Debug, Clone)]
pub struct Baseline {
    /// The fleet median of each row (in the row's unit).
    pub median: Vec<f64>,
    /// The robust standard deviation of the hosts' log ratios, per row.
    pub scale: Vec<f64>,
    /// `dev[host][row]`: ln(host median / fleet median).
    pub dev: Vec<Vec<Option<f64>>>,
}

pub fn median(v: &mut [f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

pub fn of(t: &Table) -> Baseline {
    let mut b = Baseline {
        median: vec![],
        scale: vec![],
        dev: vec![vec![None; t.rows.len()]; t.cells.len()],
    };
    for r in 0..t.rows.len() {
        let mut logs: Vec<f64> = t
            .cells
            .iter()
            .filter_map(|c| c[r].map(|c| c.median.ln()))
            .collect();
        let centre = median(&mut logs).unwrap_or(0.0);
        for (h, c) in t.cells.iter().enumerate() {
            b.dev[h][r] = c[r].map(|c| c.median.ln() - centre);
        }
        let mut abs: Vec<f64> = b.dev.iter().filter_map(|d| d[r].map(f64::abs)).collect();
        let mad = median(&mut abs).unwrap_or(0.0);
        b.median.push(centre.exp());
        b.scale.push((MAD_TO_SD * mad).max(MIN_SCALE));
    }
    b
}

impl Baseline {
    /// The typical host: the one that measured the most rows, and of those the nearest the
    /// fleet median (the smallest sum of |deviation| / spread over rows).
    pub fn medoid(&self) -> Option<usize> {
        let rows = |h: usize| self.dev[h].iter().filter(|d| d.is_some()).count();
        let most = (0..self.dev.len()).map(rows).max()?;
        (0..self.dev.len())
            .filter(|h| rows(*h) == most)
            .map(|h| {
                let d: f64 = self.dev[h]
                    .iter()
                    .zip(&self.scale)
                    .filter_map(|(d, s)| d.map(|d| d.abs() / s))
                    .sum();
                (h, d)
            })
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(h, _)| h)
    }
}

#[cfg(test)]
mod tests {
    use super::super::table::{one_row, Cell, Table};
    use super::*;

    fn table(medians: &[f64]) -> Table {
        one_row(
            medians
                .iter()
                .map(|m| Cell {
                    median: *m,
                    ci95_low: *m,
                    ci95_high: *m,
                    run_noise: None,
                })
                .collect(),
        )
    }

    #[test]
    fn the_spread_ignores_the_outliers_it_is_meant_to_find() {
        let mut m: Vec<f64> = (0..20).map(|i| 100.0 * (1.0 + 0.001 * i as f64)).collect();
        let tight = of(&table(&m)).scale[0];
        m.extend([200.0, 300.0, 400.0]);
        let b = of(&table(&m));
        assert!(b.scale[0] < 2.0 * tight, "{} vs {tight}", b.scale[0]);
        assert!((b.median[0] - 101.1).abs() < 0.2, "{}", b.median[0]);
        let medoid = b.medoid().unwrap();
        assert!(m[medoid] < 102.0, "the medoid {} is typical", m[medoid]);
        // Identical hosts: the spread is the floor, not zero.
        assert_eq!(of(&table(&[5.0; 4])).scale[0], MIN_SCALE);
    }
}
