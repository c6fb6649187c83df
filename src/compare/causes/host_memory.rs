//! The host's memory as a cause of a memory row's move. On a VM the host decides where the
//! guest's memory lies and other tenants load the same memory controllers; the guest sees
//! neither, but each run measures its own path to memory: its latency sweep's points well
//! past its effective LLC ([`memory_latency`]), combined per round ([`Paths`]). When the two
//! runs' memory latencies differ beyond their rounds' noise (Welch's t, as a row is
//! tested), the run with the higher one is predicted worse on every row that goes to
//! memory: memory.bandwidth rows lower (Contributes, no figure: a bandwidth rests on many
//! loads in flight, not one; arrays at least [`ARRAY_PAST_LLC`] × the larger effective LLC), memory.numa's latency rows slower and its read bandwidth
//! lower, memory.latency rows past the LLC share's cliff (`llc_share::ZONE` × the larger
//! effective LLC) slower. A latency row whose ratio matches the memory latency's within
//! their combined noise is explained, one that moved less or more contributes; a row that
//! moved the other way rules the cause out. When the memory latencies do not differ and
//! their interval lies within [`SAME`] either way, those rows are ruled out with the figures
//! that say so; a wider interval says the path may have changed (NotMeasured). Other
//! benchmarks: nothing. The row stays called.

use crate::bench::memory::latency::{effective_llc_of, LatencyParams};
use crate::bench::memory::numa::NumaParams;
use crate::bench::nature::Memory;
use crate::compare::causes::explain::{Claim, Explanation, RowCtx};
use crate::compare::causes::llc_share::{pages_words, ZONE};
use crate::compare::stats::noise_model::{self, test, RowNoise, RowTest};
use crate::measure::mde::{two_sided, ALPHA};
use crate::result::{BenchResult, RunDocument};
use crate::units::bytes;

/// This cause, as the JSON names it.
pub const HOST_MEMORY: &str = "host-memory";

/// A run's memory latency is read at its sweep's largest size only when that is at least
/// this factor past its effective LLC: memory.bandwidth and memory.numa size their arrays
/// the same way ("past the caches": 4x the LLC), and a random chain that large hits the L3
/// in at most a quarter of its loads (at 128 MiB against the 9.7-18 MiB effective LLCs of
/// 2026-11-27, 8-14%).
pub const FAR: f64 = 4.0;

/// Memory latencies whose 95% interval lies within this factor either way are alike (the
/// cause is ruled out); a wider interval that holds 1 says nothing either way.
pub const SAME: f64 = 1.10;

/// The page size of the memory latency a bandwidth or NUMA row is held against: both map
/// their arrays with 4 KiB pages (`Region::map(.., Pages::Small, ..)`).
const ARRAY_PAGES: &str = "4k";

/// A run's memory latency with one page size: its memory.latency rows at sizes at least
/// [`FAR`] × its effective LLC (the largest last), when its largest size measured lies that
/// far (which also says the curve reached memory). Also the effective LLC, bytes.
pub fn memory_latency<'a>(
    doc: &'a RunDocument,
    pages: &str,
) -> Option<(Vec<&'a BenchResult>, u64)> {
    let llc = effective_llc_of(&doc.results, pages)?;
    let chains: Vec<(&BenchResult, u64)> = doc
        .results
        .iter()
        .filter_map(|r| match crate::bench::nature::of(r).memory {
            Memory::Chain {
                size_bytes,
                pages: p,
            } if p == pages => Some((r, size_bytes)),
            _ => None,
        })
        .collect();
    let mut far: Vec<(&BenchResult, u64)> = chains
        .iter()
        .copied()
        .filter(|(_, size)| *size as f64 >= FAR * llc.bytes as f64)
        .collect();
    far.sort_by_key(|(_, size)| *size);
    let largest = chains.iter().map(|(_, size)| *size).max()?;
    (far.last().map(|f| f.1) == Some(largest))
        .then(|| (far.into_iter().map(|f| f.0).collect(), llc.bytes))
}

/// One run's memory latency from its rounds: per round kept in every size, the mean log
/// latency over the sizes; their mean, spread and count.
struct RoundMeans {
    mean: f64,
    sd: f64,
    n: usize,
}

impl RoundMeans {
    /// The variance of the run's mean, with the run level no round samples. The nominal
    /// one, not a latency row's past the LLC (`MEMORY_LATENCY_RUN_SIGMA`): this cause asks
    /// whether the two runs' paths to memory differed, and that they differ from run to run
    /// is what the larger level stands for.
    fn var(&self) -> f64 {
        crate::compare::stats::noise_model::rounds_var(
            self.sd / (self.n as f64).sqrt(),
            crate::compare::stats::noise_model::RUN_SIGMA,
        )
    }

    fn df(&self) -> f64 {
        (self.n - 1) as f64
    }
}

/// The per-round means of `rows` (one run's rows at the sizes past its LLC); None with fewer
/// than two rounds kept in every row.
fn round_means(rows: &[&BenchResult]) -> Option<RoundMeans> {
    let first = rows.first()?.rounds.as_ref()?;
    let means: Vec<f64> = first
        .rounds
        .iter()
        .filter(|r| r.kept())
        .filter_map(|r0| {
            let logs: Option<Vec<f64>> = rows
                .iter()
                .map(|row| {
                    row.rounds
                        .as_ref()?
                        .rounds
                        .iter()
                        .find(|r| r.seq == r0.seq && r.kept() && r.median > 0.0)
                        .map(|r| r.median.ln())
                })
                .collect();
            logs.map(|l| l.iter().sum::<f64>() / l.len() as f64)
        })
        .collect();
    if means.len() < 2 {
        return None;
    }
    let n = means.len();
    let mean = means.iter().sum::<f64>() / n as f64;
    let sd = (means.iter().map(|m| (m - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt();
    Some(RoundMeans { mean, sd, n })
}

/// The two runs' memory latencies with one page size, tested against each other.
struct Paths<'a> {
    pages: &'a str,
    /// The two runs' rows at the largest size (the figures quoted).
    a: &'a BenchResult,
    b: &'a BenchResult,
    /// How many sizes past both runs' LLCs the test rests on.
    points: usize,
    /// The larger of the two effective LLCs, bytes.
    larger_llc: u64,
    test: RowTest,
}

impl Paths<'_> {
    /// The sizes both runs measured past [`FAR`] × their own effective LLC, combined into one
    /// memory latency per run: per round, the mean log latency over those sizes (the rounds
    /// kept in every one of them), its standard error from the spread of those per-round
    /// means (so that what moves all sizes of a round together is counted once, and what
    /// moves one alone is averaged down), with the run level (`RUN_SIGMA`) added, tested as
    /// a row is (Welch's t). Where the rounds do not line up across the sizes, the sizes' own
    /// tests averaged, their errors taken as moving together; a run without rounds (an
    /// earlier version's document) gives no memory latency. One size is
    /// noisy where the host's memory is busy (rounds 156-248 ns at 128 MiB in one run of
    /// 2026-11-27); the mean over three or four tells a 1.13x move from it.
    fn of<'a>(ca: &'a RunDocument, cb: &'a RunDocument, pages: &'a str) -> Option<Paths<'a>> {
        let (fa, la) = memory_latency(ca, pages)?;
        let (fb, lb) = memory_latency(cb, pages)?;
        let pairs: Vec<(&BenchResult, &BenchResult)> = fa
            .iter()
            .filter_map(|a| fb.iter().find(|b| b.params == a.params).map(|b| (*a, *b)))
            .collect();
        // Both at the same largest size, or the figures are not the same measurement.
        let (a, b) = *pairs.last()?;
        if fa.last()?.params != a.params || fb.last()?.params != b.params {
            return None;
        }
        // Each size tested on its runs' rounds: a run without them (an earlier version's
        // document) has no memory latency to hold a row against.
        let none = RowNoise::unmeasured(noise_model::NO_ROUNDS.into());
        let tests: Vec<RowTest> = pairs
            .iter()
            .map(|(a, b)| test(a, b, &none))
            .collect::<Option<_>>()?;
        let sides = (
            round_means(&pairs.iter().map(|p| p.0).collect::<Vec<_>>()),
            round_means(&pairs.iter().map(|p| p.1).collect::<Vec<_>>()),
        );
        let (d, se, df) = match sides {
            (Some(ma), Some(mb)) => {
                let (va, vb) = (ma.var(), mb.var());
                let df = crate::measure::mde::welch_df(&[(va, Some(ma.df())), (vb, Some(mb.df()))]);
                (mb.mean - ma.mean, (va + vb).sqrt(), df)
            }
            _ => {
                let n = tests.len() as f64;
                (
                    tests.iter().map(|t| t.d).sum::<f64>() / n,
                    tests.iter().map(|t| t.se).sum::<f64>() / n,
                    tests
                        .iter()
                        .map(|t| t.df)
                        .try_fold(f64::INFINITY, |m, df| df.map(|x| m.min(x))),
                )
            }
        };
        let largest = tests[tests.len() - 1];
        Some(Paths {
            pages,
            a,
            b,
            points: tests.len(),
            larger_llc: la.max(lb),
            test: RowTest {
                d,
                se,
                df,
                p: crate::measure::mde::p_value(d, se, df),
                mde_log: crate::measure::mde::mde_log(se, df),
                basis: largest.basis,
            },
        })
    }

    /// Whether they differ beyond their noise: the 95% interval of ln(B/A) excludes 0.
    fn differ(&self) -> bool {
        self.test.p < ALPHA
    }

    /// "3 sizes past both LLCs", "1 size past both LLCs".
    fn sizes(&self) -> String {
        format!(
            "{} past both LLCs",
            crate::units::count(self.points, "size")
        )
    }

    /// The side whose loads from memory took longer.
    fn slower(&self) -> &'static str {
        if self.test.d > 0.0 {
            "B"
        } else {
            "A"
        }
    }

    /// Where the figures were read: "128 MiB, 4 KiB pages".
    fn at(&self) -> String {
        let size = self
            .a
            .params
            .read::<LatencyParams>()
            .map_or(0, |p| p.size_bytes);
        format!("{}, {}", bytes(size), pages_words(self.pages))
    }

    /// The memory latencies in one sentence, with their ratio and its 95% interval.
    fn figures(&self) -> String {
        let (a, b) = (self.a.stats.median, self.b.stats.median);
        let (slow, fast, ns_slow, ns_fast) = if self.slower() == "B" {
            ("B", "A", b, a)
        } else {
            ("A", "B", a, b)
        };
        let half = two_sided(self.test.df) * self.test.se;
        let over = if self.points > 1 {
            format!(" over the {}", self.sizes())
        } else {
            String::new()
        };
        format!(
            "{slow}'s loads from memory took {ns_slow:.1} ns against {fast}'s {ns_fast:.1} ns (memory.latency at {}; {:.2}x{over}, ±{:.0}%)",
            self.at(),
            self.test.d.abs().exp(),
            half.exp_m1() * 100.0
        )
    }
}

/// Which rows the cause speaks for, and the page size of the memory latency each is held
/// against; a latency row must lie past the LLC share's cliff (checked with the paths).
enum Row {
    /// A latency figure (memory.latency past the cliff, memory.numa latency): its ratio is
    /// the memory latency's prediction.
    Latency,
    /// A bandwidth: lower, no figure.
    Bandwidth,
}

/// What a row is against the memory latency, from its benchmark's declared nature
/// (`bench::nature::Memory`): a chain's latency on its own pages and size, another
/// latency of memory, or a bandwidth (of arrays of its recorded size); None for the rest.
fn kind(r: &BenchResult) -> Option<(Row, String, Option<u64>)> {
    match crate::bench::nature::of(r).memory {
        Memory::Chain { size_bytes, pages } => Some((Row::Latency, pages, Some(size_bytes))),
        Memory::Latency => Some((Row::Latency, ARRAY_PAGES.into(), None)),
        Memory::Bandwidth { array_bytes } => {
            Some((Row::Bandwidth, ARRAY_PAGES.into(), array_bytes))
        }
        Memory::None | Memory::Other => None,
    }
}

/// The NUMA node whose memory a run's latency sweep walked: the node of the CPU it was pinned
/// to (its allocations are local). None on a machine of one node (all memory is the sweep's)
/// or when no node holds that CPU.
fn sweep_node(doc: &RunDocument) -> Option<u32> {
    let nodes = &doc.env.numa.nodes;
    if nodes.len() < 2 {
        return None;
    }
    let cpu = doc
        .results
        .iter()
        .find(|r| matches!(crate::bench::nature::of(r).memory, Memory::Chain { .. }))
        .and_then(|r| r.pinned_cpus().first().copied())?;
    nodes.iter().find(|n| n.cpus.contains(&cpu)).map(|n| n.id)
}

/// Whether a memory.numa row reads the memory the latency sweep walked in both runs: on a
/// machine of several nodes the sweep measured its own node's path to memory, which says
/// nothing of another node's (its controllers, the link to it).
fn reads_the_sweeps_node(c: &RowCtx) -> bool {
    let Some(p) = c.ra.params.read::<NumaParams>() else {
        return true;
    };
    [c.a, c.b].iter().all(|d| {
        d.env.numa.nodes.len() < 2 || sweep_node(d).is_some_and(|n| u64::from(n) == p.mem_node)
    })
}

/// A bandwidth array smaller than this many times the larger effective LLC is streamed in
/// part from the cache (a user's `--array-size`): the path to memory does not set it.
pub const ARRAY_PAST_LLC: f64 = 2.0;

/// What the two runs' memory latencies say about a memory row.
pub fn explain(c: &RowCtx) -> Option<Explanation> {
    let (row, pages, size) = kind(c.ra)?;
    if !reads_the_sweeps_node(c) {
        return None;
    }
    let paths = Paths::of(c.a, c.b, &pages)?;
    if let Some(size) = size {
        // Inside the cliff the LLC share speaks; past it both caches are left behind. An
        // array that fits in part in the cache is not the memory's to explain.
        let past = match row {
            Row::Latency => ZONE,
            Row::Bandwidth => ARRAY_PAST_LLC,
        };
        if (size as f64) <= past * paths.larger_llc as f64 {
            return None;
        }
    }
    if !paths.differ() {
        let (a, b) = (paths.a.stats.median, paths.b.stats.median);
        let half = two_sided(paths.test.df) * paths.test.se;
        if paths.test.d.abs() + half > SAME.ln() {
            // Not told apart, and not shown alike either (the interval reaches past 10%
            // one way): a busy host's memory spreads one run's rounds too widely to say.
            return Some(
                Explanation::new(
                    HOST_MEMORY,
                    Claim::NotMeasured,
                    format!(
                        "the path to memory may have changed: the runs' loads from memory took {a:.1} and {b:.1} ns ({}), {:.2}x over the {}, within the noise of their rounds (±{:.0}%)",
                        paths.at(),
                        paths.test.d.exp(),
                        paths.sizes(),
                        half.exp_m1() * 100.0
                    ),
                )
                .evidence(format!(
                    "A {a:.1} ns, B {b:.1} ns; p = {:.2}: neither a difference nor the same within {:.0}%",
                    paths.test.p,
                    (SAME - 1.0) * 100.0
                )),
            );
        }
        return Some(
            Explanation::new(
                HOST_MEMORY,
                Claim::RuledOut,
                format!(
                    "both runs' loads from memory took {a:.1} and {b:.1} ns ({}): the path to memory did not change",
                    paths.at()
                ),
            )
            .evidence(format!(
                "A {a:.1} ns, B {b:.1} ns; B/A {:.3} over the {}, within the noise of their rounds (p = {:.2})",
                paths.test.d.exp(),
                paths.sizes(),
                paths.test.p
            )),
        );
    }
    let slow = paths.slower();
    let fast = if slow == "B" { "A" } else { "B" };
    let because = format!(
        "the path to memory was slower during {slow}'s run (its loads from memory took {:.2}x as long)",
        paths.test.d.abs().exp()
    );
    // Two runs of one host: the host moved; two hosts: their memory differs as well.
    let why = if c.one_host().is_some() {
        "the host's placement of the guest's memory or other tenants' traffic, which the guest cannot see, or a neighbour's traffic in the guest"
    } else {
        "two hosts: their memory itself, its placement or the traffic on it"
    };
    let figures = format!(
        "{}: memory was further or busier during {slow} ({why})",
        paths.figures()
    );
    if c.worse_side() != slow {
        return Some(
            Explanation::new(
                HOST_MEMORY,
                Claim::RuledOut,
                format!("{because}, which makes {slow} worse here, not {fast}"),
            )
            .evidence(figures),
        );
    }
    let e = Explanation::new(HOST_MEMORY, Claim::Contributes, because).evidence(figures);
    Some(match row {
        Row::Bandwidth => e.evidence(
            "a bandwidth keeps many loads in flight: a slower path to memory lowers it, by no figure one load's latency gives",
        ),
        Row::Latency => held_against(e, c, &paths),
    })
}

/// A latency row's ratio against the memory latency's: explained when they match within
/// their combined noise, else it contributes (the direction is right).
fn held_against(mut e: Explanation, c: &RowCtx, paths: &Paths) -> Explanation {
    let Some(own) = test(
        c.ra,
        c.rb,
        &RowNoise::unmeasured(noise_model::NO_ROUNDS.into()),
    ) else {
        return e;
    };
    let gap = own.d - paths.test.d;
    // Not f64::hypot: glibc versions it 2.35, past the C library the dist binary needs.
    let se = (own.se.powi(2) + paths.test.se.powi(2)).sqrt();
    let df = match (own.df, paths.test.df) {
        (Some(x), Some(y)) => Some(x.min(y)),
        _ => None,
    };
    let half = two_sided(df) * se;
    let predicted = paths.test.d.exp();
    let words = format!(
        "this row moved {:.2}x, the memory latency {:.2}x: {} within their combined noise (±{:.0}%)",
        own.d.exp(),
        predicted,
        if gap.abs() <= half { "they match" } else { "they do not match" },
        half.exp_m1() * 100.0
    );
    if gap.abs() <= half {
        e.claim = Claim::Explains;
        e.predicted = Some(predicted);
        e.residual = Some(gap.exp());
    }
    e.evidence(words)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::causes::testing::judged_rows;
    use crate::compare::testing::{in_rounds, latency_curves_run, result};
    use crate::measure::hierarchy::tests::{aa_curve, AA_4K, AA_THP};
    use serde_json::json;

    /// Run 1 of the 2026-11-27 sweep (13.9 MiB effective LLC, 171.4 ns at 128 MiB with
    /// 4 KiB pages) with its memory latencies scaled by `mem` past the LLC, a NUMA latency
    /// and read-bandwidth row, a copy bandwidth and a context switch, each of its own
    /// figure, measured in rounds.
    fn run(id: &str, mem: f64, numa_ns: f64, numa_mb: f64, copy_mb: f64) -> RunDocument {
        let scale = |ns: &[f64; 12]| {
            let mut c = aa_curve(ns);
            for p in c.iter_mut().skip(8) {
                p.1 *= mem;
            }
            c
        };
        let (small, huge) = (scale(&AA_4K[0]), scale(&AA_THP[0]));
        let mut doc = latency_curves_run(id, &[("4k", &small), ("thp", &huge)]);
        let numa = |metric: &str| json!({"cpu_node": 0, "mem_node": 0, "metric": metric, "size_bytes": 128u64 << 20});
        doc.results.extend([
            result("memory.numa@1", "node0", Some(vec![0]), numa("latency"), numa_ns, true),
            result("memory.numa@1", "node0", Some(vec![0, 1]), numa("read-bandwidth"), numa_mb, false),
            result(
                "memory.bandwidth@1",
                "all",
                Some(vec![0, 1]),
                json!({"kernel": "copy", "stores": "regular", "threads": 2, "array_bytes": 128u64 << 20}),
                copy_mb,
                false,
            ),
            result("ctx.pipe@1", "same-cpu", Some(vec![0, 0]), json!({"mode": "process"}), 2000.0 * mem, true),
        ]);
        in_rounds(doc)
    }

    /// What the cause says about the row whose label holds `what`.
    fn about(a: &RunDocument, b: &RunDocument, what: &str) -> Option<Explanation> {
        judged_rows(a, b, explain)
            .into_iter()
            .find(|(l, _)| l.contains(what))
            .unwrap_or_else(|| panic!("no row {what}"))
            .1
    }

    const NUMA_LATENCY: &str = "metric=latency";
    const COPY: &str = "kernel=copy";

    #[test]
    fn slower_memory_explains_a_numa_latency_and_contributes_a_bandwidth() {
        // B's loads from memory took 1.2x as long (171.4 -> 205.7 ns), its NUMA latency
        // 1.22x, its copy 13% lower (the 2026-11-27 A/A: 1.20x, 21-27%, 11-15%).
        let (a, b) = (
            run("a", 1.0, 176.7, 20000.0, 35000.0),
            run("b", 1.2, 215.6, 17000.0, 30300.0),
        );
        let e = about(&a, &b, NUMA_LATENCY).expect("the memory latency speaks");
        assert_eq!(e.claim, Claim::Explains, "{e:?}");
        assert_eq!(
            e.because,
            "the path to memory was slower during B's run (its loads from memory took 1.20x as long)"
        );
        assert!(
            e.evidence[0].starts_with("B's loads from memory took 205.7 ns against A's 171.4 ns (memory.latency at 128 MiB, 4 KiB pages; 1.20x over the 3 sizes past both LLCs, ±"),
            "{e:?}"
        );
        assert!(
            e.evidence[0].ends_with("or a neighbour's traffic in the guest)"),
            "{e:?}"
        );
        assert!(e.evidence[1].contains("they match"), "{e:?}");
        assert!((e.predicted.unwrap() - 1.2).abs() < 1e-9, "{e:?}");
        let e = about(&a, &b, COPY).unwrap();
        assert_eq!(e.claim, Claim::Contributes, "{e:?}");
        assert!(e.predicted.is_none());
        // Arrays of 16 MiB (a user's --array-size) fit in part in the 13.9 MiB LLC: the
        // path to memory does not set their bandwidth. One of earlier documents, with no
        // size recorded, was sized past the caches.
        for (bytes, said) in [(16u64 << 20, false), (0, true)] {
            let small = |mut d: RunDocument| {
                let r = d
                    .results
                    .iter_mut()
                    .find(|r| r.base_id() == "memory.bandwidth");
                r.unwrap().params.insert("array_bytes", bytes);
                d
            };
            let e = about(&small(a.clone()), &small(b.clone()), COPY);
            assert_eq!(e.is_some(), said, "{bytes}: {e:?}");
        }
        let e = about(&a, &b, "metric=read-bandwidth").unwrap();
        assert_eq!(e.claim, Claim::Contributes, "{e:?}");
        // A NUMA latency that moved 1.5x while memory moved 1.2x: the direction, no more.
        let odd = run("b", 1.2, 265.0, 17000.0, 30300.0);
        let e = about(&a, &odd, NUMA_LATENCY).unwrap();
        assert_eq!(e.claim, Claim::Contributes, "{e:?}");
        assert!(e.evidence[1].contains("they do not match"), "{e:?}");
        // Either way round: A the slower.
        let e = about(&b, &a, NUMA_LATENCY).unwrap();
        assert_eq!(e.claim, Claim::Explains, "{e:?}");
        assert!(e.because.contains("during A's run"), "{e:?}");
        // Two hosts: the same prediction, without saying one host moved the memory.
        let mut other = b.clone();
        other.host = Some("another-host".into());
        let e = about(&a, &other, NUMA_LATENCY).unwrap();
        assert_eq!(e.claim, Claim::Explains, "{e:?}");
        assert!(
            e.evidence[0]
                .ends_with("(two hosts: their memory itself, its placement or the traffic on it)"),
            "{e:?}"
        );
    }

    #[test]
    fn a_row_that_moved_against_the_memory_latency_rules_it_out() {
        // Memory 1.2x slower in B, its copy faster and its NUMA latency lower.
        let (a, b) = (
            run("a", 1.0, 176.7, 20000.0, 30000.0),
            run("b", 1.2, 160.0, 20000.0, 35000.0),
        );
        for what in [COPY, NUMA_LATENCY] {
            let e = about(&a, &b, what).unwrap();
            assert_eq!(e.claim, Claim::RuledOut, "{e:?}");
            assert!(
                e.because.ends_with("which makes B worse here, not A"),
                "{e:?}"
            );
        }
    }

    #[test]
    fn memory_latencies_within_noise_rule_it_out_with_their_figures() {
        // 0.8% apart, against rounds 1% apart and the 0.6% run level.
        let (a, b) = (
            run("a", 1.0, 176.7, 20000.0, 35000.0),
            run("b", 1.008, 215.6, 17000.0, 30300.0),
        );
        let e = about(&a, &b, NUMA_LATENCY).unwrap();
        assert_eq!(e.claim, Claim::RuledOut, "{e:?}");
        assert_eq!(
            e.because,
            "both runs' loads from memory took 171.4 and 172.8 ns (128 MiB, 4 KiB pages): the path to memory did not change"
        );
        assert_eq!(about(&a, &b, COPY).unwrap().claim, Claim::RuledOut);
    }

    #[test]
    fn memory_latencies_too_noisy_to_tell_say_so_and_rule_nothing_out() {
        // B's memory 1.12x slower, but its latency rounds spread 15% either way (a busy
        // host's memory): neither a difference nor alike.
        let a = run("a", 1.0, 176.7, 20000.0, 35000.0);
        let mut b = run("b", 1.12, 200.0, 18000.0, 31000.0);
        for r in b
            .results
            .iter_mut()
            .filter(|r| r.base_id() == "memory.latency")
        {
            use crate::result::rounds::{noise_of, quiet_rounds, Rounds};
            let m = r.stats.median.ln();
            let rounds = quiet_rounds(&[m - 0.15, m, m + 0.15]);
            r.rounds = Some(Rounds {
                noise: noise_of(&rounds, Some(m), None),
                rounds,
            });
        }
        let e = about(&a, &b, COPY).unwrap();
        assert_eq!(e.claim, Claim::NotMeasured, "{e:?}");
        assert!(
            e.because.starts_with("the path to memory may have changed"),
            "{e:?}"
        );
        // The same move with quiet rounds is told apart.
        let quiet = run("b", 1.12, 200.0, 18000.0, 31000.0);
        assert_eq!(about(&a, &quiet, COPY).unwrap().claim, Claim::Contributes);
    }

    #[test]
    fn context_switches_and_the_llc_shares_cliff_are_left_alone() {
        let (a, b) = (
            run("a", 1.0, 176.7, 20000.0, 35000.0),
            run("b", 1.2, 215.6, 17000.0, 30300.0),
        );
        assert!(about(&a, &b, "ctx.pipe").is_none());
        // The sweep's points: 11.3 and 16 MiB (indexes 4, 5) lie in the LLC share's cliff
        // (up to 1.5 × the larger effective LLC, about 14 MiB); 45.3, 90.5 and 128 MiB
        // (indexes 8, 10, 11) past it, 1.2x slower like memory.
        let s = crate::measure::hierarchy::tests::aa_sizes();
        let at = |i: usize| about(&a, &b, &format!("size_bytes={}", s[i]));
        assert!(at(4).is_none());
        assert!(at(5).is_none());
        for i in [8, 10, 11] {
            let e = at(i).unwrap_or_else(|| panic!("no claim at {}", s[i]));
            assert_eq!(e.claim, Claim::Explains, "{e:?}");
        }
    }

    #[test]
    fn another_nodes_memory_is_not_the_sweeps() {
        // Two nodes (CPUs 0-9,20-29 and 10-19,30-39): the sweep on CPU 0 walked node 0's
        // memory. A NUMA row reading node 1's memory is not held against it, either way.
        let two = |mut d: RunDocument| {
            d.env.numa = crate::probe::fixture("two-socket-smt").numa;
            let remote = d
                .results
                .iter()
                .find(|r| r.params.metric() == Some("latency"))
                .unwrap()
                .clone();
            let mut remote = remote;
            remote.params.insert("mem_node", 1u64);
            remote.placement.name = "node0-mem1".into();
            d.results.push(remote);
            d
        };
        let (a, b) = (
            two(run("a", 1.0, 176.7, 20000.0, 35000.0)),
            two(run("b", 1.2, 215.6, 17000.0, 30300.0)),
        );
        assert!(about(&a, &b, "mem_node=1").is_none());
        assert_eq!(
            about(&a, &b, "mem_node=0,metric=latency").unwrap().claim,
            Claim::Explains
        );
        // Alike memory latencies do not rule out a change of node 1's path either.
        let same = two(run("b", 1.008, 215.6, 17000.0, 30300.0));
        assert!(about(&a, &same, "mem_node=1").is_none());
    }

    #[test]
    fn a_sweep_that_stops_short_of_memory_gives_no_memory_latency() {
        let mut short = run("b", 1.2, 215.6, 17000.0, 30300.0);
        let cut = crate::measure::hierarchy::tests::aa_sizes()[8];
        short.results.retain(|r| {
            r.params
                .size_bytes()
                .is_none_or(|s| s <= cut || r.base_id() != "memory.latency")
        });
        assert!(memory_latency(&short, "4k").is_none());
        let a = run("a", 1.0, 176.7, 20000.0, 35000.0);
        assert!(about(&a, &short, NUMA_LATENCY).is_none());
    }
}
