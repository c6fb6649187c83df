//! The fleet at once: changes of many hosts at about the same time with the same cause, the
//! same direction and the same suites are one fleet change; largest first. "About the same
//! time": each change's first run after lies within `WITHIN_DAYS` of the previous one of
//! the group (single linkage in time), so a change rolled out over a few days, or placed a
//! run or two early on one host (a disturbed run just before it), is one change, and the
//! same change weeks apart is two.

use super::explain::{amount, day, Explained};
use serde::Serialize;

/// Changes whose first runs after lie within this many days of each other are "about the
/// same time".
pub const WITHIN_DAYS: f64 = 3.0;

#[derive(Debug, Clone, Serialize)]
pub struct FleetChange {
    pub hosts: Vec<String>,
    /// The earliest and the latest first run after the change.
    pub from: String,
    pub to: String,
    pub suites: Vec<String>,
    pub direction: &'static str,
    /// The median of the hosts' factors (after over before).
    pub factor: f64,
    pub cause: String,
    pub because: String,
    pub changed: Vec<String>,
    pub summary: String,
}

fn seconds(t: &str) -> Option<i64> {
    chrono::DateTime::parse_from_rfc3339(t)
        .ok()
        .map(|d| d.timestamp())
}

/// What must be equal for two hosts' changes to be one.
fn key(c: &Explained) -> (String, Vec<String>, &'static str, Vec<String>) {
    (
        c.cause.cause.clone(),
        c.cause.changed.clone(),
        c.direction,
        c.suites.clone(),
    )
}

/// Group the hosts' changes, largest group first (then oldest).
pub fn group(changes: &[Explained], within_days: f64) -> Vec<FleetChange> {
    let mut order: Vec<&Explained> = changes.iter().collect();
    order.sort_by(|a, b| a.after.started_at.cmp(&b.after.started_at));
    let within = (within_days * 86_400.0) as i64;
    let mut groups: Vec<Vec<&Explained>> = vec![];
    for c in order {
        let t = seconds(&c.after.started_at);
        // In time order: the group's last change is its latest.
        let found = groups.iter_mut().find(|g| {
            key(g[0]) == key(c)
                && !g.iter().any(|x| x.host == c.host)
                && match (seconds(&g[g.len() - 1].after.started_at), t) {
                    (Some(a), Some(b)) => b - a <= within,
                    _ => false,
                }
        });
        match found {
            Some(g) => g.push(c),
            None => groups.push(vec![c]),
        }
    }
    groups.sort_by_key(|g| std::cmp::Reverse(g.len()));
    groups
        .into_iter()
        .map(|g| {
            let mut f: Vec<f64> = g.iter().map(|c| c.factor).collect();
            f.sort_by(f64::total_cmp);
            let factor = f[f.len() / 2];
            let first = g[0];
            let (from, to) = (
                first.after.started_at.clone(),
                g[g.len() - 1].after.started_at.clone(),
            );
            let why = if first.cause.changed.is_empty() {
                first.cause.because.clone()
            } else {
                first.cause.changed.join("; ")
            };
            let how = if first.direction == "mixed" {
                "moved both ways".to_string()
            } else {
                amount(factor, first.direction)
            };
            let when = if day(&from) == day(&to) {
                format!("on {}", day(&from))
            } else {
                format!("between {} and {}", day(&from), day(&to))
            };
            let summary = format!(
                "{}: {} rows {how} {when}; {why}",
                crate::units::count(g.len(), "host"),
                first.suites.join("+"),
            );
            FleetChange {
                hosts: g.iter().map(|c| c.host.clone()).collect(),
                from,
                to,
                suites: first.suites.clone(),
                direction: first.direction,
                factor,
                cause: first.cause.cause.clone(),
                because: first.cause.because.clone(),
                changed: first.cause.changed.clone(),
                summary,
            }
        })
        .collect()
}
