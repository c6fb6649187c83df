//! Finding the plateaus of a latency curve (ns per load against working-set size): the
//! measured cache levels, each with the largest size still at its latency, and memory.
//!
//! Consecutive points within `TOLERANCE` of their segment's median form a segment; segments
//! of two or more points are plateaus, single points are transitions; adjacent plateaus
//! whose latencies agree are merged (a noise spike splits a plateau in two).

use serde::Serialize;

/// Points within this factor of the segment median belong to it.
pub const TOLERANCE: f64 = 1.3;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plateau {
    /// Smallest and largest working set on the plateau, bytes.
    pub from_bytes: u64,
    pub up_to_bytes: u64,
    /// The first larger size measured off the plateau, if any: the level ends between.
    pub next_bytes: Option<u64>,
    /// Median latency on the plateau, ns.
    pub latency_ns: f64,
    pub points: usize,
}

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

fn within(a: f64, b: f64) -> bool {
    a <= b * TOLERANCE && b <= a * TOLERANCE
}

/// Plateaus of `curve` (size in bytes, ns), sorted by size.
pub fn find(curve: &[(u64, f64)]) -> Vec<Plateau> {
    let mut segments: Vec<Vec<(u64, f64)>> = Vec::new();
    for &p in curve {
        match segments.last_mut() {
            Some(seg) if within(p.1, median(&seg.iter().map(|x| x.1).collect::<Vec<_>>())) => {
                seg.push(p)
            }
            _ => segments.push(vec![p]),
        }
    }
    let mut plateaus: Vec<Vec<(u64, f64)>> = Vec::new();
    for seg in segments.into_iter().filter(|s| s.len() >= 2) {
        let lat = |s: &Vec<(u64, f64)>| median(&s.iter().map(|x| x.1).collect::<Vec<_>>());
        match plateaus.last_mut() {
            Some(prev) if within(lat(prev), lat(&seg)) => prev.extend(seg),
            _ => plateaus.push(seg),
        }
    }
    plateaus
        .iter()
        .map(|p| {
            let up_to = p.last().unwrap().0;
            Plateau {
                from_bytes: p[0].0,
                up_to_bytes: up_to,
                next_bytes: curve.iter().map(|x| x.0).find(|s| *s > up_to),
                latency_ns: median(&p.iter().map(|x| x.1).collect::<Vec<_>>()),
                points: p.len(),
            }
        })
        .collect()
}

/// Whether the curve's last plateau reaches its largest point (memory was reached and the
/// sweep went past the last cache level).
pub fn ends_on_plateau(curve: &[(u64, f64)], plateaus: &[Plateau]) -> bool {
    match (curve.last(), plateaus.last()) {
        (Some(last), Some(p)) => p.up_to_bytes == last.0 && p.points >= 3,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KIB: u64 = 1024;
    const MIB: u64 = 1024 * 1024;

    /// sizes 4 KiB.. in sqrt(2) steps with a latency per level.
    fn curve(levels: &[(u64, f64)], noise: &[(usize, f64)]) -> Vec<(u64, f64)> {
        let mut v = Vec::new();
        let mut size = 4.0 * KIB as f64;
        let top = levels.last().unwrap().0;
        while size as u64 <= top {
            let s = size as u64;
            let lat = levels.iter().find(|(cap, _)| s <= *cap).unwrap().1;
            v.push((s, lat));
            size *= std::f64::consts::SQRT_2;
        }
        for &(i, factor) in noise {
            v[i].1 *= factor;
        }
        v
    }

    #[test]
    fn three_caches_and_memory() {
        let c = curve(
            &[
                (32 * KIB, 1.3),
                (MIB, 5.0),
                (16 * MIB, 40.0),
                (512 * MIB, 200.0),
            ],
            &[],
        );
        let p = find(&c);
        assert_eq!(p.len(), 4, "{p:#?}");
        let lat: Vec<f64> = p.iter().map(|x| x.latency_ns).collect();
        assert_eq!(lat, vec![1.3, 5.0, 40.0, 200.0]);
        assert!(p[0].up_to_bytes <= 32 * KIB && p[0].next_bytes.unwrap() > 32 * KIB);
        assert!(p[2].up_to_bytes <= 16 * MIB && p[2].next_bytes.unwrap() > 16 * MIB);
        assert!(ends_on_plateau(&c, &p));
    }

    #[test]
    fn a_noise_spike_does_not_split_a_level_and_transitions_are_skipped() {
        let mut c = curve(
            &[
                (32 * KIB, 1.3),
                (MIB, 5.0),
                (16 * MIB, 40.0),
                (512 * MIB, 200.0),
            ],
            &[(14, 2.5)],
        );
        // A gradual transition point between L3 and memory.
        let i = c.iter().position(|x| x.0 > 16 * MIB).unwrap();
        c[i].1 = 110.0;
        let p = find(&c);
        assert_eq!(p.len(), 4, "{p:#?}");
        assert_eq!(p[3].latency_ns, 200.0);
        assert!(p[2].next_bytes.unwrap() <= p[3].from_bytes);
    }

    #[test]
    fn a_curve_still_rising_has_not_reached_memory() {
        let c = curve(&[(32 * KIB, 1.3), (MIB, 5.0), (2 * MIB, 40.0)], &[]);
        let mut rising = c.clone();
        rising.push((4 * MIB, 80.0));
        let p = find(&rising);
        assert!(!ends_on_plateau(&rising, &p));
    }
}
