//! The cgroup memory limit as a cause of a memory row's move: where A and B ran under
//! different limits (one none), a row whose buffers reach into the tighter limit's room
//! was measured closer to reclaim (and its arrays may have been sized by it: the
//! `memory-limit` finding), so the limit contributes, with no figure; a row whose buffers
//! lie far below both limits rules it out. Rows of other benchmarks: nothing. The array
//! sizes themselves differ only where the limit cut them, which comparability says first
//! (`params differ: array_bytes`, then the limits from here).

use crate::compare::causes::explain::{Claim, Explanation, RowCtx};
use crate::compare::settings::{binding, memory_limits_differ};
use crate::result::BenchResult;
use crate::units::bytes;

/// This cause, as the JSON names it.
pub const MEMORY_LIMIT: &str = "memory-limit";

/// A row's buffers within this share of the tighter limit are in reach of its reclaim.
const REACH: f64 = 0.25;

/// The bytes a memory row holds while measured, as its benchmark declares them
/// (`bench::nature::Nature::footprint_bytes`: a latency chain's region and its layout,
/// three bandwidth arrays, memory.numa's three read arrays); None for other rows.
pub fn footprint(r: &BenchResult) -> Option<u64> {
    crate::bench::nature::of(r).footprint_bytes
}

pub fn explain(c: &RowCtx) -> Option<Explanation> {
    let limits = memory_limits_differ(c.a, c.b)?;
    let (fa, fb) = (footprint(c.ra)?, footprint(c.rb)?);
    let tighter = [binding(c.a), binding(c.b)]
        .into_iter()
        .flatten()
        .map(|l| l.bytes)
        .min()?;
    let held = fa.max(fb);
    let evidence = vec![
        limits,
        format!(
            "its buffers: {} in A, {} in B; the tighter limit {}",
            bytes(fa),
            bytes(fb),
            bytes(tighter)
        ),
    ];
    let mut e = if held as f64 >= REACH * tighter as f64 || fa != fb {
        Explanation::new(
            MEMORY_LIMIT,
            Claim::Contributes,
            format!(
                "its {} of buffers lay within reach of the tighter memory limit {} (the runs' limits differ)",
                bytes(held),
                bytes(tighter)
            ),
        )
    } else {
        Explanation::new(
            MEMORY_LIMIT,
            Claim::RuledOut,
            format!(
                "its {} of buffers lay far below both runs' memory limits",
                bytes(held)
            ),
        )
    };
    e.evidence = evidence;
    Some(e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::causes::testing::ctx_of;
    use crate::compare::testing::result;
    use crate::probe::memory_limit::{Limit, MemoryCgroup};
    use crate::result::RunDocument;
    use serde_json::json;

    const MIB: u64 = 1 << 20;

    fn limited(doc: &mut RunDocument, mib: Option<u64>) {
        doc.env.memory.cgroup = Some(MemoryCgroup {
            version: "v1".into(),
            limit: mib.map(|m| Limit {
                bytes: m * MIB,
                file: "/sys/fs/cgroup/memory/pod/memory.limit_in_bytes".into(),
            }),
            ..Default::default()
        });
    }

    /// Fires on a bandwidth row under a 256 MiB limit beside none, naming both and the
    /// buffers; a small latency point far below the limit is ruled out; same limits, or
    /// a row of another benchmark: nothing.
    #[test]
    fn a_differing_memory_limit_is_named_for_the_rows_it_reaches() {
        let mut a = crate::result::testing::run("a", vec![], crate::result::testing::env());
        let mut b = a.clone();
        limited(&mut a, None);
        limited(&mut b, Some(256));
        let bw = |arr: u64| {
            result(
                "memory.bandwidth@1",
                "compact",
                None,
                json!({"kernel": "triad", "stores": "regular", "threads": 1, "array_bytes": arr}),
                1e4,
                false,
            )
        };
        let (ra, rb) = (bw(128 * MIB), bw(32 * MIB));
        let e = explain(&ctx_of(&a, &b, &ra, &rb)).expect("fires");
        assert_eq!(
            (e.cause.as_str(), e.claim),
            (MEMORY_LIMIT, Claim::Contributes)
        );
        assert!(
            e.evidence[0].contains("A: no memory limit; B: memory limit 256 MiB (/sys/fs/cgroup/memory/pod/memory.limit_in_bytes)"),
            "{:?}",
            e.evidence
        );
        assert!(
            e.evidence[1].contains("384 MiB in A, 96 MiB in B"),
            "{:?}",
            e.evidence
        );
        let lat = result(
            "memory.latency@1",
            "cpus",
            None,
            json!({"size_bytes": 65536, "pages": "4k"}),
            2.0,
            true,
        );
        let e = explain(&ctx_of(&a, &b, &lat, &lat)).expect("fires");
        assert_eq!(e.claim, Claim::RuledOut, "{e:?}");
        // The same limit on both sides, or a row that holds no buffers: nothing.
        let mut same = a.clone();
        limited(&mut same, None);
        assert!(explain(&ctx_of(&a, &same, &ra, &ra)).is_none());
        let other = result("timers.clock-read@1", "os", None, json!({}), 20.0, true);
        // Comparability says why the array sizes differ, only where the limits differ.
        let p = crate::compare::settings::with_limits(
            vec!["params differ: array_bytes 134217728 vs 33554432".into()],
            &a,
            &b,
        );
        assert!(
            p[1].contains("memory limits differ (A: no memory limit; B: memory limit 256 MiB"),
            "{p:?}"
        );
        assert_eq!(
            crate::compare::settings::with_limits(
                vec!["params differ: array_bytes 1 vs 2".into()],
                &a,
                &same
            )
            .len(),
            1
        );
        assert!(explain(&ctx_of(&a, &b, &other, &other)).is_none());
    }
}
