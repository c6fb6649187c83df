//! The measured memory hierarchy against machines this test may not run on: a memory run
//! of a VM whose CPUID and sysfs report a 480 MiB L3 (tests/fixtures/memory/), and the
//! captured and synthetic system trees (tests/fixtures/sysroots/) with latency curves whose
//! caches end where the tree reports them. The LLC judgement, `llc-size-mismatch`, the
//! bandwidth arrays' size and the memory the bandwidth benchmark takes when fed the VM.

use truebench::bench::memory::bandwidth::{array_bytes, Bandwidth};
use truebench::bench::memory::latency;
use truebench::bench::memory::latency::{may_stop, reported_caches};
use truebench::bench::{Benchmark, Emitted, Measured, RunContext, RunOptions};
use truebench::findings::memory::evaluate;
use truebench::measure::hierarchy::{self, Kind};
use truebench::probe::sysroot::SysRoot;
use truebench::result::RunDocument;

const MIB: u64 = 1 << 20;

fn vm_480() -> RunDocument {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/memory/vm-480mib-l3.memory.json"
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    truebench::result::validate(&v).unwrap()
}

#[test]
fn the_480_mib_vm_measures_a_small_llc_and_its_report_is_a_mismatch() {
    let doc = vm_480();
    let h = latency::of_results(&doc.results).unwrap();
    let llc = h.llc.clone().unwrap();
    // Its curves leave the last cache plateau (38-44 ns) by 16 MiB, far below 480 MiB.
    assert_eq!(llc.pages, "thp");
    assert!((8 * MIB..=16 * MIB).contains(&llc.next_bytes), "{llc:?}");
    assert!((30.0..50.0).contains(&llc.latency_ns), "{llc:?}");
    let (reported, text) = reported_caches(&doc.env, 0);
    assert_eq!(reported, Some(480 * MIB));
    let f = evaluate(&h, reported, &text);
    let m = f
        .iter()
        .find(|f| f.id == "llc-size-mismatch")
        .expect("llc-size-mismatch");
    assert!(m.message.contains("480 MiB"), "{}", m.message);
    // No level of either curve is taken for a TLB step: the 4 KiB and huge-page curves step
    // at the same sizes on this VM.
    assert!(h
        .curves
        .iter()
        .all(|c| c.levels.iter().all(|l| l.kind != Kind::Tlb)));
    // The arrays follow the measurement: 128 MiB each, not 1.9 GiB.
    let (a, why) = array_bytes(480 * MIB, Some(llc.next_bytes), Some(24 << 30), None).unwrap();
    assert!(a <= (4 * llc.next_bytes).max(128 * MIB), "{a} {why}");
    assert!(why.contains("more than 4x"), "{why}");
    // The 4 KiB sweep stops at 128 MiB on this curve (memory's plateau), not at 960 MiB:
    // its largest chain (the region and 4 bytes of layout per line) stays far below 1 GB.
    let (small, _) = latency::curves_of(&doc.results);
    let stop = (1..=small.len())
        .find(|&n| may_stop(&small[..n]))
        .map(|n| small[n - 1].0)
        .unwrap();
    assert_eq!(stop, 128 * MIB);
    assert!(stop + stop / 64 * 4 < 1_000_000_000);
}

/// A curve on `sizes` whose caches end at `ends` (bytes) with latencies 1.3, 4.5, 14, 30 ns
/// ... and memory (95 ns) past the last, measured to 8x the last end or 128 MiB.
fn curve_ending_at(ends: &[u64]) -> Vec<(u64, f64)> {
    let lat = [1.3, 4.5, 14.0, 30.0, 45.0];
    let top = (8 * ends.last().copied().unwrap_or(MIB)).max(128 * MIB);
    hierarchy::sizes(top)
        .into_iter()
        .map(|s| {
            let ns = ends
                .iter()
                .position(|e| s <= *e)
                .map(|i| lat[i.min(lat.len() - 1)])
                .unwrap_or(95.0);
            (s, ns)
        })
        .collect()
}

#[test]
fn fixture_trees_whose_report_is_right_raise_no_mismatch_and_a_wrong_one_does() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/sysroots");
    let mut judged = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let path = e.unwrap().path();
        if !path.is_dir() {
            continue;
        }
        let env = truebench::session::probe(&SysRoot::captured(path.clone()));
        let Some(&cpu) = env.cpus.usable.first() else {
            continue;
        };
        let mut sizes: Vec<(u32, u64)> = env
            .topology
            .caches
            .iter()
            .filter(|c| c.cpus.contains(&cpu) && c.kind != "Instruction")
            .filter_map(|c| Some((c.level, c.size_bytes?)))
            .collect();
        sizes.sort();
        sizes.dedup_by_key(|x| x.0);
        let ends: Vec<u64> = sizes.iter().map(|x| x.1).collect();
        let (reported, text) = reported_caches(&env, cpu);
        let (Some(reported), false) = (reported, ends.is_empty()) else {
            continue;
        };
        // Levels that do not grow (a tree's odd sizes) cannot be a curve.
        if ends.windows(2).any(|w| w[1] <= w[0] * 2) || ends[0] < 8192 {
            continue;
        }
        judged += 1;
        let h = hierarchy::judge(&curve_ending_at(&ends), None);
        let f = evaluate(&h, Some(reported), &text);
        assert!(
            f.iter().all(|f| f.id != "llc-size-mismatch"),
            "{}: report {reported} right, yet {f:#?}",
            path.display()
        );
        // The same tree measured with its last cache ending at an eighth of the report.
        let mut short = ends.clone();
        *short.last_mut().unwrap() /= 8;
        if short.len() > 1 && short[short.len() - 1] <= short[short.len() - 2] * 2 {
            continue;
        }
        let h = hierarchy::judge(&curve_ending_at(&short), None);
        assert!(
            evaluate(&h, Some(reported), &text)
                .iter()
                .any(|f| f.id == "llc-size-mismatch"),
            "{}: report 8x the measurement",
            path.display()
        );
    }
    assert!(judged >= 10, "only {judged} trees had usable caches");
}

/// VmHWM of this process, bytes.
fn peak_rss() -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap();
    s.lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        .unwrap()
        * 1024
}

#[test]
fn bandwidth_fed_the_480_mib_vm_sizes_by_the_measurement_and_stays_under_1_gb() {
    let doc = vm_480();
    let measured = Measured::default();
    measured.set_hierarchy(latency::of_results(&doc.results).unwrap());
    let options = RunOptions::default();
    let ctx = RunContext {
        probe: &doc.env,
        options: &options,
        samples: 2,
        clock_cost_ns: 20.0,
        min_batch_ns: 2e6,
        measured: &measured,
        only: None,
    };
    std::fs::write("/proc/self/clear_refs", "5").unwrap();
    let mut results = Vec::new();
    Bandwidth
        .run(&ctx, &mut |e| {
            if let Emitted::Result(r) = e {
                results.push(*r)
            }
        })
        .unwrap();
    let peak = peak_rss();
    assert!(peak < 1_000_000_000, "peak RSS {peak} B");
    let first = &results[0];
    let size = first
        .params
        .get("array_bytes")
        .and_then(|v| v.as_u64())
        .unwrap();
    assert!(size <= 128 * MIB, "{size}");
    let f = first
        .findings
        .iter()
        .find(|f| f.id == "memory-array-size")
        .unwrap();
    assert!(
        f.message.contains("reports 480 MiB") && f.message.contains("ends by"),
        "{}",
        f.message
    );
    assert!(
        f.evidence[0].contains("memory.latency's thp curve"),
        "{:?}",
        f.evidence
    );
    // Two samples per result (each in arrays of its own), all valid.
    assert!(results
        .iter()
        .all(|r| r.samples.len() == 2 && r.stats.median > 0.0));
}

/// Nine runs of the default suites on a VM reporting a 32 MiB L3 whose usable cache ends
/// between about 3 and 16 MiB, moving from run to run (tests/fixtures/memory/).
fn epyc_runs() -> Vec<(String, hierarchy::Curve, hierarchy::Curve)> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/memory/epyc-32mib-runs.json"
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let curve = |c: &serde_json::Value| -> hierarchy::Curve {
        c.as_array()
            .unwrap()
            .iter()
            .map(|p| (p[0].as_u64().unwrap(), p[1].as_f64().unwrap()))
            .collect()
    };
    v["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["name"].as_str().unwrap().to_string(),
                curve(&r["curves"]["4k"]),
                curve(&r["curves"]["thp"]),
            )
        })
        .collect()
}

#[test]
fn every_run_of_the_32_mib_vm_measures_a_smaller_llc_and_says_so() {
    for (name, small, huge) in epyc_runs() {
        let h = hierarchy::judge(&small, Some(&huge));
        let llc = h.llc.clone().unwrap_or_else(|| panic!("{name}: no LLC"));
        assert!(llc.next_bytes <= 16 * MIB, "{name}: {llc:?}");
        let f = evaluate(&h, Some(32 * MIB), &[]);
        assert!(
            f.iter().any(|f| f.id == "llc-size-mismatch"),
            "{name}: no llc-size-mismatch; {llc:?}"
        );
        // The arrays follow the measurement: the 128 MiB floor, never more.
        let (a, _) = array_bytes(32 * MIB, Some(llc.next_bytes), Some(24 << 30), None).unwrap();
        assert_eq!(a, 128 * MIB, "{name}");
    }
}
