//! What the cause tests judge their documents with (the documents themselves are built by
//! `compare::testing`): the context of one row pair, and what a cause says about each
//! matched row of two runs.

use crate::compare::causes::explain::{Explanation, RowCtx};
use crate::compare::matching::pair_up;
use crate::compare::stats::verdict::{judge, DEFAULT_DRIFT};
use crate::result::{BenchResult, RunDocument};

/// The context of one row pair of A and B, judged.
pub fn ctx_of<'a>(
    a: &'a RunDocument,
    b: &'a RunDocument,
    ra: &'a BenchResult,
    rb: &'a BenchResult,
) -> RowCtx<'a> {
    RowCtx {
        a,
        b,
        ra,
        rb,
        judged: judge(ra, rb, DEFAULT_DRIFT),
        drift: DEFAULT_DRIFT,
        shared: Box::leak(Box::default()),
    }
}

/// Every matched row of A and B with what `cause` says about it.
pub fn judged_rows(
    a: &RunDocument,
    b: &RunDocument,
    cause: fn(&RowCtx) -> Option<Explanation>,
) -> Vec<(String, Option<Explanation>)> {
    pair_up(a, b)
        .matched
        .iter()
        .map(|m| {
            (
                crate::compare::matching::label(m.a),
                cause(&ctx_of(a, b, m.a, m.b)),
            )
        })
        .collect()
}

/// What `cause` says about the os row of two ctx runs.
pub fn judged_ctx(
    a: &RunDocument,
    b: &RunDocument,
    cause: fn(&RowCtx) -> Option<Explanation>,
) -> Option<Explanation> {
    judged_rows(a, b, cause)
        .into_iter()
        .find(|(l, _)| l.contains("[os]"))
        .and_then(|x| x.1)
}

/// What `cause` says about the one row of two timer runs whose rounds have these medians
/// (`compare::testing::timers_in_rounds`, rounds `seq_step` apart in the run).
pub fn judged_timers(
    a: &[f64],
    b: &[f64],
    seq_step: usize,
    cause: fn(&RowCtx) -> Option<Explanation>,
) -> Option<Explanation> {
    use crate::compare::testing::timers_in_rounds;
    judged_rows(
        &timers_in_rounds("a", a, seq_step),
        &timers_in_rounds("b", b, seq_step),
        cause,
    )
    .into_iter()
    .next()
    .unwrap()
    .1
}
