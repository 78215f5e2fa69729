//! The controllers' evaluation suite (`acp_sim::reproduce::controllers`): its scenarios cover
//! every dimension it promises, all build, and a tiny end-to-end run on quick scenarios behaves
//! (Fixed at the oracle's own rate matches the oracle exactly, Lazy on a D/D/1 path is clearly
//! worse, the results do not depend on the thread count).

use std::collections::HashSet;
use std::time::{Duration, Instant};

use acp_core::controller::ControllerKind;
use acp_netmodel::{LossModel, Process, Service};
use acp_sim::flows::FlowKind;
use acp_sim::reproduce::controllers::{
    self, select, suite, summarise, Controllers, Length, SuiteScenario,
};
use acp_sim::reproduce::harness::{Options, Report, Reproduction};
use acp_sim::sweep::Cancel;
use serde_json::{Map, Value};

/// The suite's quick runs of `ids` with `controllers`, seeds 1 to `seeds`, on `threads` threads.
fn evaluate(
    ids: &[&str],
    controllers: &[ControllerKind],
    first: u64,
    seeds: u64,
    threads: usize,
    cancel: &Cancel,
) -> Report {
    let o = Options {
        seed: first,
        seeds: Some(seeds),
        scenarios: ids.iter().map(|s| s.to_string()).collect(),
        controllers: controllers.to_vec(),
        quick: true,
        threads,
        ..Options::default()
    };
    Controllers.run(&o, cancel, &|_, _| {}, None).unwrap()
}

/// A number of a row.
fn num(r: &Map<String, Value>, field: &str) -> f64 {
    r[field]
        .as_f64()
        .unwrap_or_else(|| panic!("{field} of {r:?}"))
}

fn cross_processes(s: &SuiteScenario) -> Vec<(Process, f64)> {
    s.scenario
        .flows
        .iter()
        .filter_map(|f| match f.kind {
            FlowKind::Cross {
                process, rate_bps, ..
            } => Some((process, rate_bps / s.bottleneck_bps())),
            _ => None,
        })
        .collect()
}

#[test]
fn the_suite_has_at_least_32_scenarios_with_unique_ids_and_descriptions() {
    let s = suite(Length::Full);
    assert!(s.len() >= 32, "{} scenarios", s.len());
    let ids: HashSet<&str> = s.iter().map(|x| x.id.as_str()).collect();
    assert_eq!(ids.len(), s.len(), "duplicate ids");
    for x in &s {
        assert!(!x.about.is_empty(), "{}", x.id);
        assert!(
            x.id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'),
            "{}",
            x.id
        );
        assert!(x.sources() >= 1 && x.hops() >= 1, "{}", x.id);
        assert!(x.cap().is_finite() && x.cap() > 0.0, "{}", x.id);
        x.scenario
            .build()
            .unwrap_or_else(|e| panic!("{}: {e}", x.id));
    }
    for id in [
        "demo",
        "dd1-s5-p20",
        "table1-netb",
        "share16-10mbit",
        "mm1-2mbit",
    ] {
        assert!(ids.contains(id), "{id} missing");
    }
}

#[test]
fn the_suite_covers_every_dimension() {
    let s = suite(Length::Full);
    let hops: HashSet<usize> = s.iter().map(SuiteScenario::hops).collect();
    for h in 1..=6 {
        assert!(hops.contains(&h), "no scenario with {h} hops");
    }
    let bps: Vec<f64> = s.iter().map(SuiteScenario::bottleneck_bps).collect();
    assert!(
        bps.iter().any(|&b| b <= 0.5e6),
        "no bottleneck ≤ 0.5 Mbit/s"
    );
    assert!(bps.iter().any(|&b| b >= 1e9), "no bottleneck ≥ 1 Gbit/s");
    let delays: Vec<Duration> = s.iter().map(SuiteScenario::delay).collect();
    assert!(delays.contains(&Duration::ZERO), "no path without delay");
    assert!(delays.contains(&Duration::from_millis(80)), "no 80 ms path");
    assert!(delays.iter().all(|&d| d <= Duration::from_millis(80)));
    let payloads: Vec<u32> = s.iter().map(SuiteScenario::payload).collect();
    assert!(payloads.contains(&64) && payloads.contains(&1400));
    assert!(payloads.iter().all(|p| (64..=1400).contains(p)));
    let sources: HashSet<usize> = s.iter().map(SuiteScenario::residents).collect();
    for n in [1, 4, 16] {
        assert!(sources.contains(&n), "no scenario with {n} sources");
    }
    let cross: Vec<(Process, f64)> = s.iter().flat_map(cross_processes).collect();
    assert!(s.iter().any(|x| cross_processes(x).is_empty()));
    assert!(cross.iter().any(|c| c.0 == Process::Periodic));
    assert!(cross.iter().any(|c| c.0 == Process::Poisson));
    assert!(cross.iter().any(|c| matches!(c.0, Process::OnOff { .. })));
    let most = cross.iter().map(|c| c.1).fold(0.0, f64::max);
    assert!((most - 0.7).abs() < 1e-6, "heaviest cross traffic {most}");
    let links = || s.iter().flat_map(|x| x.links());
    assert!(links().any(|l| l.service == Service::Exponential));
    assert!(links().any(|l| l.service == Service::Deterministic));
    assert!(links().any(|l| matches!(l.loss, LossModel::Bernoulli { .. })));
    assert!(links().any(|l| matches!(l.loss, LossModel::GilbertElliott { .. })));
    assert!(links().any(|l| l.schedule.is_some()), "no capacity change");
    assert!(
        s.iter().any(|x| x
            .scenario
            .flows
            .iter()
            .any(|f| f.stop.is_some() && !f.start.is_zero())),
        "no source joining and leaving"
    );
    // A 1 Gbit/s path uses large updates: its optimum is 10^4–10^5 updates/s, not 10^6.
    for x in s.iter().filter(|x| x.bottleneck_bps() >= 1e9) {
        assert!(x.cap() < 1e5, "{}: cap {}", x.id, x.cap());
    }
}

#[test]
fn the_cap_is_the_bottleneck_in_updates_shared_by_the_sources() {
    let s = suite(Length::Quick);
    let get = |id: &str| s.iter().find(|x| x.id == id).unwrap();
    // D/D/1 with S = 5 ms: 200 updates/s.
    assert!((get("dd1-s5-p20").cap() - 200.0).abs() < 1e-6);
    // 16 sources, 10 Mbit/s, 200 + 72 bytes.
    let c = get("share16-10mbit").cap();
    assert!((c - 10e6 / (272.0 * 8.0) / 16.0).abs() < 1e-6, "{c}");
    // Eight residents and eight guests: the residents share it.
    let c = get("churn16-10mbit").cap();
    assert!((c - 10e6 / (272.0 * 8.0) / 8.0).abs() < 1e-6, "{c}");
}

#[test]
fn unknown_ids_are_named() {
    let s = suite(Length::Quick);
    let ids = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let got = select(&s, &ids(&["demo", "dd1-s1-p10"])).unwrap();
    assert_eq!(
        got.iter().map(|x| x.id.as_str()).collect::<Vec<_>>(),
        ["demo", "dd1-s1-p10"]
    );
    assert_eq!(
        select(&s, &ids(&["demo", "nope"])).err(),
        Some("nope".into())
    );
}

/// Quick D/D/1 paths: the oracle, Fixed at the oracle's rate (identical runs, ratio exactly 1)
/// and Lazy (about 1.7 times the optimum on these paths).
#[test]
fn fixed_at_the_oracle_rate_matches_it_and_lazy_is_worse_on_dd1() {
    let cancel = Cancel::new();
    for (id, sv, p) in [("dd1-s2-p5", 2e-3, 5e-3), ("dd1-s5-p20", 5e-3, 20e-3)] {
        // First the oracle (with Lazy), then Fixed at its rate.
        let lazy = evaluate(&[id], &[ControllerKind::Lazy], 1, 2, 2, &cancel).rows;
        let rate = num(&lazy[0], "oracle_rate_hz");
        let fixed = evaluate(&[id], &[ControllerKind::Fixed(rate)], 1, 2, 2, &cancel).rows;
        assert_eq!(fixed[0]["oracle_age_ms"], lazy[0]["oracle_age_ms"]);
        let f = num(&fixed[0], "age_ratio");
        assert!((f - 1.0).abs() < 1e-12, "{id}: fixed {f}");
        assert!(num(&lazy[0], "age_ratio") > 1.2, "{id}: {:?}", lazy[0]);
        assert_eq!(fixed[0]["seeds"], 2);
        assert!(fixed[0]["jain"].is_null(), "one source: no fairness index");
        // The D/D/1 optimum is 1/S with age S + P + S/2.
        assert!((rate * sv - 1.0).abs() < 0.03, "{id}: {rate}");
        let age = num(&lazy[0], "oracle_age_ms") * 1e-3;
        assert!((age / (1.5 * sv + p) - 1.0).abs() < 0.03, "{id}");
    }
    assert!(!cancel.tally().interrupted());
}

#[test]
fn results_do_not_depend_on_the_thread_count_and_fairness_is_reported_for_shared_paths() {
    let run = |threads| {
        evaluate(
            &["demo-share4"],
            &[ControllerKind::Lazy],
            3,
            1,
            threads,
            &Cancel::new(),
        )
        .rows
    };
    let one = run(1);
    assert_eq!(one, run(2));
    let jain = num(&one[0], "jain");
    assert!(jain > 0.5 && jain <= 1.0, "{jain}");
    let ratio = num(&one[0], "age_ratio");
    assert!(ratio.is_finite() && ratio > 0.9, "{ratio}");
    let rows: Vec<controllers::Row> = one
        .iter()
        .map(|r| serde_json::from_value(Value::Object(r.clone())).unwrap())
        .collect();
    let s = summarise(&rows, &["lazy".into()]);
    assert_eq!(s[0].worst_id, "demo-share4");
    assert_eq!(s[0].worse_than_acp_plus, None);
}

#[test]
fn a_cancelled_evaluation_skips_and_counts_every_run() {
    let cancel = Cancel::new();
    cancel.cancel();
    let r = evaluate(
        &["dd1-s1-p10"],
        controllers::DEFAULT_CONTROLLERS,
        1,
        2,
        2,
        &cancel,
    );
    assert!(r.rows.is_empty());
    // 26 coarse and 13 fine rates, then every controller, each with two seeds.
    let t = cancel.tally();
    let runs = (26 + 13 + controllers::DEFAULT_CONTROLLERS.len()) * 2;
    assert_eq!((t.done, t.skipped), (0, runs));
}

/// Wall time of one run of each scenario at its cap (the costliest rate of its oracle) and under
/// ACP+; `cargo test --release -p acp-sim --test controller_suite -- --ignored --nocapture`.
#[test]
#[ignore]
fn timing() {
    let mut total = 0.0;
    for s in suite(Length::Full) {
        let t = Instant::now();
        let at_cap = s.scenario.with_fixed_rate(s.cap()).build().unwrap().run();
        let cap_s = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let acp = s
            .run_with(ControllerKind::AcpPlus, 1)
            .build()
            .unwrap()
            .run();
        let acp_s = t.elapsed().as_secs_f64();
        let age = |r: &acp_sim::report::SimResult| acp_sim::sweep::mean_age(r) * 1e3;
        total += cap_s;
        println!(
            "{:<20} cap {:>9.1}/s {:>6.3} s (age {:>8.2} ms)  acp+ {:>6.3} s (age {:>8.2} ms)",
            s.id,
            s.cap(),
            cap_s,
            age(&at_cap),
            acp_s,
            age(&acp)
        );
    }
    println!("sum at caps: {total:.2} s");
}

/// The short form of the held-out evaluation: three quick random paths of seed 1 (jitter,
/// exponential service with Poisson cross traffic on every hop, WiFi; `random_paths` draws path
/// k from its own stream, so these are the first three of any N). Every path has a row with its
/// class; Fixed at a path's oracle rate matches the oracle exactly (same seeds, same rate: the
/// common random numbers at work); Lazy, one update in flight, sends slower than the oracle and
/// is more than 5 % off on every one (the oracle keeps more than one in flight); the ECDF rises
/// to 1.
#[test]
fn a_random_draw_evaluates_every_path_against_its_oracle() {
    let o = |controllers: Vec<ControllerKind>, scenarios: Vec<String>| Options {
        seed: 1,
        random: Some(3),
        controllers,
        scenarios,
        quick: true,
        threads: 2,
        ..Options::default()
    };
    let report = Controllers
        .run(
            &o(vec![ControllerKind::Lazy], Vec::new()),
            &Cancel::new(),
            &|_, _| {},
            None,
        )
        .unwrap();
    assert_eq!(report.rows.len(), 3);
    assert_eq!(report.seeds, 1);
    for r in &report.rows {
        assert!(r["id"].as_str().unwrap().starts_with("r1-"), "{r:?}");
        assert_ne!(r["class"], "hand-made");
        assert!(num(r, "age_ratio") > 1.05, "{r:?}");
        assert!(num(r, "rate_hz") < num(r, "oracle_rate_hz"), "{r:?}");
    }
    let ecdf = &report.traces[0].points;
    assert_eq!(ecdf.len(), 3);
    assert!(ecdf.windows(2).all(|w| w[0].0 <= w[1].0 && w[0].1 < w[1].1));
    assert_eq!(ecdf[2].1, 1.0);
    assert!(report.notes.iter().any(|n| n.contains("per class")));
    // Fixed at the first path's oracle rate is the oracle's own run.
    let first = &report.rows[0];
    let id = first["id"].as_str().unwrap().to_string();
    let fixed = Controllers
        .run(
            &o(
                vec![ControllerKind::Fixed(num(first, "oracle_rate_hz"))],
                vec![id],
            ),
            &Cancel::new(),
            &|_, _| {},
            None,
        )
        .unwrap();
    assert_eq!(fixed.rows[0]["oracle_age_ms"], first["oracle_age_ms"]);
    assert!((num(&fixed.rows[0], "age_ratio") - 1.0).abs() < 1e-12);
}
