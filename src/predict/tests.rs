//! Predictions on synthetic load-step curves made by a known model: the prediction
//! recovers the parameters it was made with (cost, ceiling, the rate held at a target), and
//! runs that cannot support one say why and give no figure.

use super::evidence::{Evidence, Measured, Obs};
use super::model::{Params, Setting};
use super::*;

const COST_US: f64 = 50.0;

/// The model the synthetic runs follow: 50 CPU-µs per message, p99 = 2 × M/M/c, a
/// generator that takes 0.2 CPU + 0.02 per 1000/s, no contention.
fn truth() -> Params {
    Params {
        cost_us: COST_US,
        efficiency: 1.0,
        latency_factor: 2.0,
        generator_base: 0.2,
        generator_per_rate: 2e-5,
        generator_max: 1.0,
        generator_spins_from: None,
        sigma: 0.0,
        kappa: 0.0,
    }
}

/// A variant measured at `quota`/`width` with 2 workers on a 2-CPU machine (generator
/// outside the quota), at the given shares of its ceiling; steps past the ceiling complete
/// the ceiling and are not steady.
fn variant(quota: f64, width: usize, shares: &[f64], wobble: f64) -> Measured {
    variant_of(&truth(), 1, quota, width, shares, wobble)
}

/// `variant` for the model `t`, its generator of `generator_threads` threads.
fn variant_of(
    t: &Params,
    generator_threads: usize,
    quota: f64,
    width: usize,
    shares: &[f64],
    wobble: f64,
) -> Measured {
    variant_at(t, generator_threads, quota, width, 100_000, shares, wobble)
}

/// `variant_of` at a quota period of `period_us`.
fn variant_at(
    t: &Params,
    generator_threads: usize,
    quota: f64,
    width: usize,
    period_us: u64,
    shares: &[f64],
    wobble: f64,
) -> Measured {
    let s = Setting {
        quota,
        width,
        workers: 2,
        generator_in_quota: false,
        machine_cpus: 2,
        period_s: period_us as f64 * 1e-6,
    };
    let (x, _) = t.ceiling(&s);
    let steps = shares
        .iter()
        .enumerate()
        .map(|(i, share)| {
            let rate = x * share;
            let w = if i % 2 == 0 {
                1.0 + wobble
            } else {
                1.0 - wobble
            };
            Obs {
                rate,
                completed: rate.min(x),
                steady: rate < x,
                p99_us: t.p99_s(&s, rate).map(|p| p * 1e6 * w).or(Some(1e6)),
                cost_us: Some(t.cost_us * w),
                generator_cpus: t.generator(rate),
                throttled_periods: None,
            }
        })
        .collect();
    Measured {
        run_id: "synthetic".into(),
        label: format!("os x2 {quota}/{width}"),
        quota,
        width,
        capacity_policy: true,
        period_us,
        workers: 2,
        generator_in_quota: false,
        generator_threads,
        generator_spins_from: None,
        steps,
    }
}

fn evidence(variants: Vec<Measured>) -> Evidence {
    Evidence {
        runs: vec!["synthetic".into()],
        workload: "mq".into(),
        service_us: 50.0,
        machine_cpus: 2,
        variants,
        period_us: 100_000,
        scaling: None,
    }
}

fn ask(capacity: Vec<(f64, usize)>, rate: Option<f64>) -> Question {
    Question {
        p99_us: 5000.0,
        rate,
        capacity: capacity
            .into_iter()
            .map(|(quota, width)| Asked {
                quota,
                width,
                period_us: None,
            })
            .collect(),
    }
}

const SHARES: &[f64] = &[0.2, 0.4, 0.6, 0.75, 0.85, 0.92, 0.97, 1.1, 1.3];

#[test]
fn a_held_out_setting_is_recovered_from_two_others() {
    let e = evidence(vec![
        variant(0.5, 1, SHARES, 0.02),
        variant(1.0, 1, SHARES, 0.02),
    ]);
    let p = answer(&e, &ask(vec![(1.8, 2)], None));
    assert!(p.supported, "{:?}", p.why_not);
    let i = p.inputs.as_ref().unwrap();
    assert!((i.cost_us.value - COST_US).abs() / COST_US < 0.03, "{i:?}");
    assert!((i.efficiency.value - 1.0).abs() < 0.05, "{i:?}");
    assert!((i.latency_factor.value - 2.0).abs() < 0.2, "{i:?}");
    // What the truth says at 1.8/2.
    let s = Setting {
        quota: 1.8,
        width: 2,
        workers: 2,
        generator_in_quota: false,
        machine_cpus: 2,
        period_s: 0.1,
    };
    let (want, _) = truth().max_rate(&s, 0.005).unwrap();
    let got = &p.settings[0];
    let r = got.max_rate.expect("a figure");
    assert!((r - want).abs() / want < 0.05, "{r} vs {want}");
    let [lo, hi] = got.interval.unwrap();
    assert!(lo <= r && r <= hi && hi / lo < 1.3, "{lo} {r} {hi}");
    assert!(!got.measured && got.model.contains("utilisation law"));
    // At 1.8/2 the generator takes part of the 2 CPUs: the CPUs, not the quota, set the
    // ceiling, and queueing reaches 5 ms below it.
    let (ceiling, by) = truth().ceiling(&s);
    assert_eq!(by, Limit::Cpus);
    assert!(ceiling < 1.8 / 50e-6 * 0.95, "{ceiling}");
    assert!((got.ceiling.unwrap() - ceiling).abs() / ceiling < 0.05);
    assert_eq!(got.limited_by, Some(Limit::Latency));
}

/// Steps past the ceiling as measured in an overload: the window's own messages complete
/// less and less (a backlog ahead of them), and the CPU per completed message grows with
/// the overload, though the service's throughput and a message's cost have not changed.
fn collapse(mut v: Measured, shares: &[f64]) -> Measured {
    let x = v.steps.iter().map(|o| o.completed).fold(0.0, f64::max);
    let base = v.steps[0].clone();
    for share in shares {
        v.steps.push(Obs {
            rate: x * share,
            completed: x / share,
            steady: false,
            p99_us: Some(1e6 * share),
            cost_us: base.cost_us.map(|c| c * share * share),
            generator_cpus: truth().generator(x * share),
            throttled_periods: None,
        });
    }
    v
}

#[test]
fn an_overload_collapse_does_not_bias_the_cost_or_the_efficiency() {
    // Half the steps deep past the ceiling, as a load step plan up to 3x its ceiling gives.
    let deep = [1.5, 2.0, 2.5, 3.0, 3.5, 4.0];
    let e = evidence(vec![
        collapse(variant(0.5, 1, SHARES, 0.02), &deep),
        collapse(variant(1.0, 1, SHARES, 0.02), &deep),
    ]);
    let p = answer(&e, &ask(vec![(1.8, 2)], None));
    assert!(p.supported, "{:?}", p.why_not);
    let i = p.inputs.as_ref().unwrap();
    assert!((i.cost_us.value - COST_US).abs() / COST_US < 0.03, "{i:?}");
    assert!((i.efficiency.value - 1.0).abs() < 0.05, "{i:?}");
    let s = Setting {
        quota: 1.8,
        width: 2,
        workers: 2,
        generator_in_quota: false,
        machine_cpus: 2,
        period_s: 0.1,
    };
    let (want, _) = truth().max_rate(&s, 0.005).unwrap();
    let r = p.settings[0].max_rate.expect("a figure");
    assert!((r - want).abs() / want < 0.05, "{r} vs {want}");
}

#[test]
fn an_http_load_generator_may_take_more_than_one_cpu() {
    // nginx-like: 25 CPU-µs per request, a client of 5 threads (producer + 4 connections)
    // paying 60 CPU-µs per request, which passes one CPU at 16,000/s.
    let t = Params {
        cost_us: 25.0,
        generator_base: 0.05,
        generator_per_rate: 6e-5,
        generator_max: 2.0,
        generator_spins_from: None,
        ..truth()
    };
    let e = Evidence {
        workload: "http".into(),
        ..evidence(vec![
            variant_of(&t, 5, 0.2, 1, SHARES, 0.02),
            variant_of(&t, 5, 0.4, 1, SHARES, 0.02),
        ])
    };
    let s = Setting {
        quota: 1.2,
        width: 2,
        workers: 2,
        generator_in_quota: false,
        machine_cpus: 2,
        period_s: 0.1,
    };
    // At 1.2/2 the client's CPU, not the quota, bounds the server: 2 − 0.05 − 60 µs × r
    // = 25 µs × r gives about 22,900/s, where a one-CPU client would leave it 40,000/s.
    let (want, _) = t.ceiling(&s);
    assert!((want - 1.95 / 85e-6).abs() < 50.0, "{want}");
    let one_cpu = Params {
        generator_max: 1.0,
        generator_spins_from: None,
        ..t
    };
    assert!(one_cpu.ceiling(&s).0 > 1.5 * want);
    let p = answer(&e, &ask(vec![(1.2, 2)], None));
    assert!(p.supported, "{:?}", p.why_not);
    let got = p.settings[0].ceiling.unwrap();
    assert!((got - want).abs() / want < 0.05, "{got} vs {want}");
    let (held, _) = t.max_rate(&s, 0.005).unwrap();
    let r = p.settings[0].max_rate.unwrap();
    assert!((r - held).abs() / held < 0.05, "{r} vs {held}");
}

/// Runs at 0.5/1 and 1.0/1 that follow the truth exactly (the setting-needed tests: one
/// test per question, so that the slowest tests of this module, each a bootstrap of
/// `needed_quota`, can run side by side).
fn needed_evidence() -> Evidence {
    evidence(vec![
        variant(0.5, 1, SHARES, 0.0),
        variant(1.0, 1, SHARES, 0.0),
    ])
}

#[test]
fn the_setting_needed_for_a_rate_is_the_smallest_that_holds_it() {
    let e = needed_evidence();
    // 12,000/s at 50 µs needs 0.6 CPUs of work, plus the queue's margin: width 1 holds it.
    let p = answer(&e, &ask(vec![], Some(12_000.0)));
    let n = p.needed.unwrap();
    assert_eq!(n.width, Some(1), "{n:?}");
    let q = n.quota.unwrap();
    assert!(q > 0.6 && q < 0.75, "{q}");
    // And the truth agrees: that quota holds it, 0.05 CPU less does not.
    let at = |quota| Setting {
        quota,
        width: 1,
        workers: 2,
        generator_in_quota: false,
        machine_cpus: 2,
        period_s: 0.1,
    };
    assert!(truth().max_rate(&at(q), 0.005).unwrap().0 >= 12_000.0 * 0.99);
    assert!(truth().max_rate(&at(q - 0.05), 0.005).unwrap().0 < 12_000.0);
}

#[test]
fn the_setting_needed_among_asked_settings_is_the_smallest_that_holds_it() {
    let e = needed_evidence();
    let p = answer(&e, &ask(vec![(0.5, 1), (0.9, 1), (1.8, 2)], Some(12_000.0)));
    assert_eq!(p.needed.unwrap().capacity.as_deref(), Some("0.9/1"));
}

#[test]
fn a_rate_no_setting_holds_is_said_so() {
    let p = answer(&needed_evidence(), &ask(vec![], Some(100_000.0)));
    let n = p.needed.unwrap();
    assert!(n.capacity.is_none() && n.why_not.unwrap().contains("holds"));
}

#[test]
fn quota_throttling_bounds_a_narrow_quota_below_its_ceiling() {
    // A service whose queue alone would hold 98% of the ceiling: at 0.3/1, 70 ms of each
    // 100 ms period are throttled, far above 5 ms, so periods that run out of quota must
    // stay rare and throttling bounds the rate.
    let p = Params {
        latency_factor: 0.1,
        ..truth()
    };
    let s = Setting {
        quota: 0.3,
        width: 1,
        workers: 2,
        generator_in_quota: false,
        machine_cpus: 2,
        period_s: 0.1,
    };
    let (x, _) = p.ceiling(&s);
    assert!((x - 6000.0).abs() < 1.0, "{x}");
    let (r, why) = p.max_rate(&s, 0.005).unwrap();
    assert_eq!(why, Limit::Throttling);
    assert!(r < 0.97 * x && r > 0.85 * x, "{r} {x}");
    // The whole CPU: no throttled phase, the queue bounds it near the ceiling.
    let full = Setting { quota: 1.0, ..s };
    let (r, why) = p.max_rate(&full, 0.005).unwrap();
    assert_ne!(why, Limit::Throttling);
    assert!(r > 0.97 * p.ceiling(&full).0);
}

#[test]
fn no_step_near_saturation_gives_no_figure() {
    let e = evidence(vec![variant(1.0, 1, &[0.1, 0.2, 0.3, 0.4], 0.0)]);
    let p = answer(&e, &ask(vec![(1.8, 2)], Some(10_000.0)));
    assert!(!p.supported);
    assert!(p.why_not.unwrap().contains("no step near saturation"));
    assert!(p.settings.is_empty() && p.needed.is_none());
}

#[test]
fn a_single_worker_asked_about_a_wider_setting_gives_no_figure() {
    let mut v = variant(1.0, 1, SHARES, 0.0);
    v.workers = 1;
    let e = evidence(vec![v]);
    // One answer to the three settings asked (each setting's figure is its own).
    let p = answer(&e, &ask(vec![(1.0, 1), (1.8, 2), (3.0, 4)], None));
    assert!(p.supported);
    assert!(p.settings[0].max_rate.is_some());
    let wide = &p.settings[1];
    assert!(wide.max_rate.is_none() && wide.interval.is_none());
    assert!(
        wide.why_not.as_deref().unwrap().contains("1 worker"),
        "{wide:?}"
    );
    // Nor a width this machine does not have.
    assert!(p.settings[2]
        .why_not
        .as_deref()
        .unwrap()
        .contains("usable CPUs"));
}

#[test]
fn too_few_valid_steps_give_no_figure() {
    // A busy machine: the generator kept its schedule in two steps only.
    let e = evidence(vec![variant(1.0, 1, &[0.5, 0.9, 1.2], 0.0)]);
    let p = answer(&e, &ask(vec![(1.8, 2)], None));
    assert!(!p.supported && p.settings.is_empty());
    assert!(p.why_not.unwrap().contains("only 2 valid steady step"));
}

#[test]
fn a_cost_that_wanders_is_a_fit_with_a_huge_error() {
    let e = evidence(vec![variant(1.0, 1, SHARES, 0.7)]);
    let p = answer(&e, &ask(vec![(1.8, 2)], None));
    assert!(!p.supported);
    assert!(p.why_not.unwrap().contains("huge error"));
    // And without any cost per message there is nothing to rest on.
    let mut v = variant(1.0, 1, SHARES, 0.0);
    for o in &mut v.steps {
        o.cost_us = None;
    }
    let p = answer(&evidence(vec![v]), &ask(vec![], None));
    assert!(!p.supported && p.why_not.unwrap().contains("CPU cost per message"));
}

#[test]
fn the_measured_setting_is_predicted_near_what_it_held() {
    let e = evidence(vec![variant(1.0, 1, SHARES, 0.0)]);
    let p = answer(&e, &ask(vec![], None));
    let s = &p.settings[0];
    assert_eq!(s.capacity, "1/1");
    assert!(s.measured);
    let (pred, meas) = (s.max_rate.unwrap(), s.measured_max_rate.unwrap());
    // The steps are 3-15% apart near the top: the measured held rate is within a step.
    assert!(meas <= pred * 1.01 && meas >= pred * 0.85, "{meas} {pred}");
}

/// nginx-like at a 5 ms period: 25 CPU-µs per request, a latency factor of 1 (the queue is
/// what it is), a client of 5 threads at 28 CPU-µs per request.
fn short_period_truth() -> Params {
    Params {
        cost_us: 25.0,
        latency_factor: 1.0,
        generator_base: 0.05,
        generator_per_rate: 2.8e-5,
        generator_max: 2.0,
        generator_spins_from: None,
        ..truth()
    }
}

#[test]
fn a_short_period_s_throttle_wait_is_part_of_the_p99() {
    let t = short_period_truth();
    let at = |quota: f64, width: usize, period_s: f64| Setting {
        quota,
        width,
        workers: 4,
        generator_in_quota: false,
        machine_cpus: 2,
        period_s,
    };
    // 0.4 CPU on one: 3 ms of each 5 ms period throttled. Near the quota's ceiling most
    // periods run out, and the p99 is the wait for the next period, not the queue's.
    let s = at(0.4, 1, 0.005);
    let (x, _) = t.ceiling(&s);
    let near = 0.85 * x;
    let queue = t.queue_p99_s(&s, near).unwrap();
    let p99 = t.p99_s(&s, near).unwrap();
    assert!(t.throttled_share(&s, near, 0.0) > 0.01);
    assert!(p99 > queue && p99 < 0.003 + queue, "{p99} {queue}");
    // Far below it no period runs out: the queue alone.
    let low = t.p99_s(&s, 0.3 * x).unwrap();
    assert!((low - t.queue_p99_s(&s, 0.3 * x).unwrap()).abs() < 1e-6);
    // The same quota at 100 ms waits up to 60 ms once a period runs out: a rate held at
    // 5 ms is not higher there.
    let (r5, _) = t.max_rate(&s, 0.005).unwrap();
    let (r100, _) = t.max_rate(&at(0.4, 1, 0.1), 0.005).unwrap();
    assert!(r100 < r5, "{r100} {r5}");
    assert!(t.p99_s(&at(0.4, 1, 0.1), 0.97 * x).unwrap() > 0.005);
}

#[test]
fn a_held_out_width_is_recovered_at_a_short_period() {
    let t = short_period_truth();
    let v = |q| {
        let mut m = variant_at(&t, 5, q, 1, 5000, SHARES, 0.02);
        m.workers = 4;
        m
    };
    let e = Evidence {
        workload: "http".into(),
        period_us: 5000,
        ..evidence(vec![v(0.2), v(0.4)])
    };
    // One answer to every setting asked below (each setting's figure is its own: the
    // others asked beside it change nothing): the held-out 0.6/2, then 0.6/2 at another
    // period, 0.6/2 at its own period, and a quota the kernel refuses at 5 ms.
    let mut q = ask(vec![(0.6, 2), (0.6, 2), (0.6, 2), (0.1, 1)], None);
    q.capacity[1].period_us = Some(100_000);
    q.capacity[2].period_us = Some(5000);
    let p = answer(&e, &q);
    assert!(p.supported, "{:?}", p.why_not);
    let got = &p.settings[0];
    assert_eq!(got.capacity, "0.6/2@5ms");
    assert_eq!(got.period_ms, 5.0);
    assert!(got.model.contains("CFS period 5 ms"), "{}", got.model);
    let i = p.inputs.as_ref().unwrap();
    assert!((i.latency_factor.value - 1.0).abs() < 0.15, "{i:?}");
    let s = Setting {
        quota: 0.6,
        width: 2,
        workers: 4,
        generator_in_quota: false,
        machine_cpus: 2,
        period_s: 0.005,
    };
    let (want, _) = t.max_rate(&s, 0.005).unwrap();
    let r = got.max_rate.expect("a figure");
    assert!((r - want).abs() / want < 0.05, "{r} vs {want}");
    // Asked at another period: no figure, and why.
    let s = &p.settings[1];
    assert!(s.max_rate.is_none() && s.capacity == "0.6/2@100ms");
    assert!(
        s.why_not.as_deref().unwrap().contains("learnt at 5 ms"),
        "{s:?}"
    );
    // Asked at its own period: the same as without one.
    assert_eq!(p.settings[2].max_rate, Some(r));
    // A quota the kernel refuses at 5 ms (under 1 ms per period).
    assert!(p.settings[3].why_not.as_deref().unwrap().contains("kernel"));
}

#[test]
fn runs_learnt_at_two_periods_are_refused() {
    let t = short_period_truth();
    let vs = vec![
        variant_at(&t, 5, 0.4, 1, 5000, SHARES, 0.0),
        variant_at(&t, 5, 0.4, 1, 100_000, SHARES, 0.0),
    ];
    let why = evidence::one_period(&vs).unwrap_err();
    assert!(why.contains("5 ms") && why.contains("100 ms"), "{why}");
    assert_eq!(evidence::one_period(&vs[..1]), Ok(5000));
    // No capacity policy: the runs' own cgroup's period.
    let mut own = variant_at(&t, 5, 1.0, 1, 20_000, SHARES, 0.0);
    own.capacity_policy = false;
    assert_eq!(evidence::one_period(&[own]), Ok(20_000));
}

#[test]
fn capacity_settings_parse_and_print_as_written() {
    let a = parse_capacity("1.8/2").unwrap();
    assert_eq!((a.quota, a.width, a.period_us), (1.8, 2, None));
    assert_eq!(parse_capacity("0.6/2@5ms").unwrap().period_us, Some(5000));
    assert_eq!(parse_capacity("0.6/2@5ms").unwrap().name(), "0.6/2@5ms");
    assert!(parse_capacity("0.6/2@0.5ms").is_err());
    assert_eq!(capacity_name(1.8, 2, 100_000), "1.8/2");
    assert_eq!(capacity_name(0.6, 2, 5000), "0.6/2@5ms");
    assert_eq!(capacity_name(1.0, 1, 100_000), "1/1");
    assert_eq!(capacity_name(0.93, 1, 100_000), "0.93/1");
    assert!(parse_capacity("2").is_err());
    assert!(parse_capacity("0/1").is_err());
    assert!(parse_capacity("1/0").is_err());
}

/// `m` with mq's producer, which spins a CPU through every gap from `from` messages/s.
fn spinning(m: Measured, from: f64) -> Measured {
    Measured {
        generator_spins_from: Some(from),
        ..m
    }
}

/// mq's producer spins a CPU through every gap from 20,000/s. Learnt at width 1, where the
/// generator has a CPU of its own and the spin costs the service nothing, a setting at full
/// width stops at that rate when the CPU left cannot carry it; a setting at width 1 is as
/// without the spin.
#[test]
fn a_spinning_producer_bounds_the_setting_whose_cpus_it_shares() {
    let spin = Params {
        generator_spins_from: Some(20_000.0),
        ..truth()
    };
    let e = evidence(vec![
        spinning(variant_of(&spin, 1, 0.5, 1, SHARES, 0.02), 20_000.0),
        spinning(variant_of(&spin, 1, 1.0, 1, SHARES, 0.02), 20_000.0),
    ]);
    let p = answer(&e, &ask(vec![(1.8, 2), (1.0, 1)], None));
    assert!(p.supported, "{:?}", p.why_not);
    // Without the spin, 1.8/2 carries (2 − 0.2) / (50 + 20) µs = 25,700/s; with it, the
    // one CPU left from 20,000/s carries 20,000/s at most, so the rate stops below that.
    let wide = &p.settings[0];
    let r = wide.max_rate.unwrap();
    assert!((19_500.0..=20_000.0).contains(&r), "{r}");
    assert!(wide.model.contains("spins a CPU"), "{}", wide.model);
    let [_, hi] = wide.interval.unwrap();
    assert!(
        hi > 23_000.0,
        "the interval spans the producer's share too: {hi}"
    );
    // Width 1: the same figure as a generator that never spins.
    let narrow = &p.settings[1];
    assert!(!narrow.model.contains("spins"), "{}", narrow.model);
    let plain = answer(
        &evidence(vec![
            variant_of(&truth(), 1, 0.5, 1, SHARES, 0.02),
            variant_of(&truth(), 1, 1.0, 1, SHARES, 0.02),
        ]),
        &ask(vec![(1.0, 1)], None),
    );
    let (a, b) = (
        narrow.max_rate.unwrap(),
        plain.settings[0].max_rate.unwrap(),
    );
    assert!((a - b).abs() / b < 0.01, "{a} vs {b}");
}

/// The generator's line is fitted where it sleeps between messages: steady steps at rates
/// where it spins (a whole CPU) do not bend it.
#[test]
fn the_generator_line_leaves_out_the_rates_where_it_spins() {
    let spin = Params {
        cost_us: 25.0,
        generator_spins_from: Some(20_000.0),
        ..truth()
    };
    // 1.0/1 at 25 µs: a ceiling of 40,000/s, steady steps from 8,000 to 38,800/s, those
    // from 20,000/s with the generator at one CPU.
    let v = spinning(variant_of(&spin, 1, 1.0, 1, SHARES, 0.0), 20_000.0);
    assert!(v.steps.iter().any(|o| o.steady && o.rate > 20_000.0));
    let got = calibrate::fit(&[v], 2, &contention(&evidence(vec![]))).unwrap();
    assert!(
        (got.generator_per_rate - 2e-5).abs() < 1e-7 && (got.generator_base - 0.2).abs() < 1e-3,
        "{got:?}"
    );
    assert_eq!(got.generator_spins_from, Some(20_000.0));
    assert_eq!(got.generator(25_000.0), 1.0);
}
