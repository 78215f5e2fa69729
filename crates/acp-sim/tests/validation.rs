//! The simulator against closed-form queueing results (`acp_sim::analytic`).
//!
//! Seeds are fixed, so every number here is reproducible. Tolerances: with n updates the
//! relative standard error of a time-average age estimate from one M/M/1 run is about
//! c/√n with c ≈ 2–4 at these loads (batch-means estimates from longer runs), i.e. 0.3–0.6 % at
//! n = 400,000; a 2 % bound is therefore several standard errors wide.

use std::time::Duration;

use acp_netmodel::{Discipline, LinkConfig, LossModel, QueueLimit, Service, Trace};
use acp_sim::analytic;
use acp_sim::engine::{Sim, SimConfig};
use acp_sim::flows::{FlowKind, FlowSpec, Process};
use acp_sim::reproduce::fig7::queue_chain;
use acp_sim::sweep::{mean_age, parallel, Cancel};
use acp_sim::topology::Topology;

const UPDATES: u64 = 400_000;

fn config(seed: u64, secs: u64, warmup: u64) -> SimConfig {
    SimConfig {
        seed,
        duration: Duration::from_secs(secs),
        warmup: Duration::from_secs(warmup),
        trace_points: 0,
        packet_log: false,
    }
}

/// A feedback-free update stream over the node path `path`.
fn stream(name: &str, process: Process, rate: f64, size: u32, dscp: u8, path: &[&str]) -> FlowSpec {
    FlowSpec {
        name: name.into(),
        kind: FlowKind::Updates {
            process,
            rate,
            size,
        },
        path: path.iter().map(|n| n.to_string()).collect(),
        start: Duration::ZERO,
        stagger: Duration::ZERO,
        stop: None,
        dscp,
    }
}

fn assert_close(sim: f64, exact: f64, tol: f64, what: &str) {
    let err = (sim / exact - 1.0).abs();
    assert!(
        err < tol,
        "{what}: simulated {sim:.5}, analytic {exact:.5}, error {:.2} %",
        err * 100.0
    );
}

#[test]
fn mm1_age_matches_the_closed_form() {
    for rho in [0.3, 0.53, 0.8] {
        let r = queue_chain(rho, &[1.0], UPDATES, 11);
        assert_close(
            mean_age(&r),
            analytic::mm1_age(rho, 1.0),
            0.02,
            &format!("M/M/1 ρ={rho}"),
        );
        // Little's law: mean number in system ρ/(1−ρ).
        let backlog: f64 = r.flows[0].backlog.iter().map(|h| h.backlog).sum();
        assert_close(
            backlog,
            rho / (1.0 - rho),
            0.03,
            &format!("M/M/1 backlog ρ={rho}"),
        );
    }
}

#[test]
fn tandem_age_matches_the_corrected_appendix_result() {
    for (lambda, mu1, mu2) in [
        (0.3, 1.0, 1.0),
        (0.5, 1.0, 1.0),
        (0.7, 1.0, 1.0),
        (0.5, 1.0, 2.0),
        (0.8, 2.0, 1.0),
    ] {
        let r = queue_chain(lambda, &[mu1, mu2], UPDATES, 12);
        assert_close(
            mean_age(&r),
            analytic::tandem_age(lambda, mu1, mu2),
            0.02,
            &format!("tandem λ={lambda} μ1={mu1} μ2={mu2}"),
        );
    }
}

#[test]
fn dd1_chain_age_is_exact() {
    // Periodic updates every 5 ms through links of 1, 4, 2 ms service and 3 ms propagation each.
    let services = [1e-3, 4e-3, 2e-3];
    let mut topo = Topology::default();
    let names = ["a", "b", "c", "d"];
    for (i, s) in services.iter().enumerate() {
        let spec = LinkConfig::new(
            8.0 * 1000.0 / s,
            Duration::from_millis(3),
            QueueLimit::Packets(10),
        );
        topo.add_link(names[i], names[i + 1], spec).unwrap();
    }
    let flows = vec![stream("u", Process::Periodic, 200.0, 1000, 0, &names)];
    let cfg = config(1, 100, 1);
    let r = Sim::new(cfg, topo, flows).unwrap().run();
    let exact = analytic::dd1_chain_age_with_delay(5e-3, &services, 9e-3);
    assert!(
        (mean_age(&r) - exact).abs() < 1e-9,
        "{} vs {exact}",
        mean_age(&r)
    );
    // One update every 5 ms spends 4 ms at the middle link: 0.8 of it, exactly.
    assert!((r.flows[0].backlog[1].backlog - 0.8).abs() < 1e-9);
}

/// The age-optimal rate found by simulation: a quadratic fitted through simulated ages on a grid
/// around the bowl's bottom (common random numbers: one seed for all points).
fn simulated_optimum(mus: &[f64], grid: &[f64]) -> f64 {
    let ages: Vec<f64> = parallel(grid.to_vec(), 2, &Cancel::new(), |l| {
        mean_age(&queue_chain(l, mus, UPDATES, 21))
    })
    .into_iter()
    .flatten()
    .collect();
    // Least-squares parabola a + b·x + c·x² through (grid, ages).
    let n = grid.len() as f64;
    let s = |p: i32| grid.iter().map(|x| x.powi(p)).sum::<f64>();
    let t = |p: i32| {
        grid.iter()
            .zip(&ages)
            .map(|(x, y)| x.powi(p) * y)
            .sum::<f64>()
    };
    let m = [[n, s(1), s(2)], [s(1), s(2), s(3)], [s(2), s(3), s(4)]];
    let v = [t(0), t(1), t(2)];
    let det = |m: [[f64; 3]; 3]| {
        m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1])
            - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
            + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
    };
    let col = |k: usize| {
        let mut c = m;
        for r in 0..3 {
            c[r][k] = v[r];
        }
        det(c) / det(m)
    };
    -col(1) / (2.0 * col(2))
}

#[test]
fn optimum_sends_about_1_13_updates_per_system_time_through_one_queue() {
    let grid: Vec<f64> = (0..9).map(|k| 0.43 + 0.025 * k as f64).collect();
    let lambda = simulated_optimum(&[1.0], &grid);
    let r = queue_chain(lambda, &[1.0], UPDATES, 22);
    // Little's law: updates in the system = λ·T.
    let per_system_time: f64 = r.flows[0].backlog.iter().map(|h| h.backlog).sum();
    let (l_star, _) = analytic::mm1_optimum(1.0);
    let expected =
        analytic::updates_per_system_time(l_star, analytic::mm1_system_time(l_star, 1.0));
    assert!((expected - 1.13).abs() < 0.01);
    assert_close(per_system_time, expected, 0.05, "M/M/1 λ*·T");
}

#[test]
fn optimum_sends_about_1_6_updates_per_system_time_through_two_equal_queues() {
    let grid: Vec<f64> = (0..9).map(|k| 0.42 + 0.025 * k as f64).collect();
    let lambda = simulated_optimum(&[1.0, 1.0], &grid);
    let r = queue_chain(lambda, &[1.0, 1.0], UPDATES, 23);
    let per_system_time: f64 = r.flows[0].backlog.iter().map(|h| h.backlog).sum();
    let (l_star, _) = analytic::tandem_optimum(1.0, 1.0);
    let expected =
        analytic::updates_per_system_time(l_star, analytic::tandem_system_time(l_star, 1.0, 1.0));
    assert!((expected - 1.6).abs() < 0.1, "{expected}");
    assert_close(per_system_time, expected, 0.05, "tandem λ*·T");
}

/// Cobham's formula: mean wait in queue of class `k` (0 highest) of a non-preemptive priority
/// M/G/1 queue with arrival rates `lambdas`, mean service `s` and second moment `s2` for all.
fn cobham_wait(lambdas: &[f64], s: f64, s2: f64, k: usize) -> f64 {
    let w0: f64 = lambdas.iter().map(|l| l * s2 / 2.0).sum();
    let sigma = |j: usize| lambdas[..j].iter().map(|l| l * s).sum::<f64>();
    w0 / ((1.0 - sigma(k)) * (1.0 - sigma(k + 1)))
}

#[test]
fn two_class_priority_queue_gives_cobhams_waits() {
    // Poisson classes of 200/s (DSCP 46, high) and 400/s (best effort) through one strict-priority
    // server of 1 ms mean service (125 B at 1 Mbit/s): load 0.2 + 0.4. Each class's mean wait
    // comes from its time-average number at the link by Little's law, W = L/λ − E[S].
    // Over 2000 s the waits' errors had a standard deviation of 0.6 % across eight seeds
    // (exponential service; 0.4 % deterministic); 4000 s (2.4 M packets) halves the variance,
    // so 2 % is over four standard deviations.
    for service in [Service::Exponential, Service::Deterministic] {
        let mut topo = Topology::default();
        let link = LinkConfig {
            service,
            discipline: Discipline::StrictPriority {
                classes: vec![vec![46]],
            },
            ..LinkConfig::new(1e6, Duration::ZERO, QueueLimit::Packets(100_000))
        };
        topo.add_link("a", "b", link).unwrap();
        let lambdas = [200.0, 400.0];
        let flows = vec![
            stream("high", Process::Poisson, lambdas[0], 125, 46, &["a", "b"]),
            stream("low", Process::Poisson, lambdas[1], 125, 0, &["a", "b"]),
        ];
        let r = Sim::new(config(5, 4000, 10), topo, flows).unwrap().run();
        let s = 1e-3;
        let s2 = match service {
            Service::Exponential => 2.0 * s * s,
            Service::Deterministic => s * s,
        };
        for (k, f) in r.flows.iter().enumerate() {
            let wait = f.backlog[0].backlog / lambdas[k] - s;
            assert_close(
                wait,
                cobham_wait(&lambdas, s, s2, k),
                0.02,
                &format!("{service:?} class {k} wait"),
            );
        }
    }
}

#[test]
fn trace_link_delivers_exactly_the_trace() {
    // A saturating CBR stream of MTU-sized packets through a 4-opportunity, 5 ms trace: exactly
    // one packet leaves per opportunity, at the opportunity's instant (plus 2 ms propagation).
    let trace = Trace::parse("1\n1\n3\n5\n").unwrap();
    let mut topo = Topology::default();
    let link = LinkConfig {
        trace: Some(trace.clone()),
        ..LinkConfig::new(
            f64::INFINITY,
            Duration::from_millis(2),
            QueueLimit::Packets(100_000),
        )
    };
    topo.add_link("a", "b", link).unwrap();
    let flows = vec![stream("u", Process::Periodic, 2000.0, 1500, 0, &["a", "b"])];
    let mut cfg = config(1, 10, 1);
    cfg.packet_log = true;
    let r = Sim::new(cfg, topo, flows).unwrap().run();
    let out: Vec<u64> = r.packet_log.iter().filter_map(|e| e.departed_ns).collect();
    // 10 s of a 5 ms trace: 2000 periods, 8000 opportunities (the last at 10 s + 2 ms is past the end).
    let want: Vec<u64> = (0..out.len() as u64)
        .map(|k| trace.offset_of(k) + 2_000_000)
        .collect();
    assert_eq!(out.len(), 7999);
    assert_eq!(out, want);
}

#[test]
fn gilbert_elliott_link_loses_its_stationary_share_in_bursts() {
    // Gilbert model p = 0.02, r = 0.25: loss 0.02/0.27 = 7.41 %, bursts of mean 4. Over 10⁶
    // packets the loss rate's relative standard error is 0.9 % (the binomial one, inflated by
    // (1 + ρ)/(1 − ρ) ≈ 6.4 for the chain's lag-one correlation ρ = 0.73), so 4 % is 4.4 of them;
    // the ≈ 18,500 bursts (geometric, sd 3.5) give the mean burst 0.6 %, so 3 % is 4.7. The
    // model's own test checks both to 2 % over 8·10⁶ packets.
    let model = LossModel::GilbertElliott {
        p: 0.02,
        r: 0.25,
        loss_good: 0.0,
        loss_bad: 1.0,
    };
    let mut topo = Topology::default();
    let link = LinkConfig {
        loss: model,
        ..LinkConfig::new(f64::INFINITY, Duration::ZERO, QueueLimit::Packets(10))
    };
    topo.add_link("a", "b", link).unwrap();
    let flows = vec![stream(
        "u",
        Process::Periodic,
        10_000.0,
        100,
        0,
        &["a", "b"],
    )];
    let mut cfg = config(3, 100, 0);
    cfg.packet_log = true;
    let r = Sim::new(cfg, topo, flows).unwrap().run();
    let lost: Vec<bool> = r
        .packet_log
        .iter()
        .map(|e| e.departed_ns.is_none())
        .collect();
    let rate = lost.iter().filter(|&&l| l).count() as f64 / lost.len() as f64;
    let bursts = lost.windows(2).filter(|w| w[1] && !w[0]).count() + usize::from(lost[0]);
    let burst = lost.iter().filter(|&&l| l).count() as f64 / bursts as f64;
    assert_close(
        rate,
        model.stationary_loss(),
        0.03,
        "Gilbert–Elliott loss rate",
    );
    assert_close(
        burst,
        model.mean_burst().unwrap(),
        0.03,
        "Gilbert–Elliott mean burst",
    );
    assert_eq!(
        r.links[0].lost as usize,
        lost.iter().filter(|&&l| l).count()
    );
}

/// Per-flow ages of Poisson update streams of rates `lambdas` (per second) sharing one
/// exponential server of rate 1/s with the freshest-update discipline, run until `updates`
/// updates have been offered in all.
fn freshest_ages(lambdas: &[f64], preempt: bool, updates: f64, seed: u64) -> Vec<f64> {
    let mut topo = Topology::default();
    let link = LinkConfig {
        service: Service::Exponential,
        discipline: Discipline::Freshest { preempt },
        // 125 B at 1000 bit/s: a mean service of 1 s.
        ..LinkConfig::new(1000.0, Duration::ZERO, QueueLimit::Packets(1000))
    };
    topo.add_link("a", "b", link).unwrap();
    let flows = lambdas
        .iter()
        .enumerate()
        .map(|(i, &l)| stream(&format!("s{i}"), Process::Poisson, l, 125, 0, &["a", "b"]))
        .collect();
    let secs = (updates / lambdas.iter().sum::<f64>()) as u64;
    let r = Sim::new(config(seed, secs, secs / 50), topo, flows)
        .unwrap()
        .run();
    r.flows
        .iter()
        .map(|f| f.age.expect("updates arrive"))
        .collect()
}

/// Tolerance 2 %: a source's age is a time average over its delivery cycles; with 4 · 10⁵
/// updates offered in all (runs of 6.7 · 10⁵ s at λ = 0.6/s, 2 · 10⁵ s at 2/s and more) the
/// rarest source here still completes several 10⁴ cycles, and across seeds 21–28 every error
/// was within −0.91 … +0.72 % for M/M/1* (standard deviation 0.45 %) and −0.19 … +0.67 % for
/// M/M/1/2*: 2 % is over four standard deviations.
#[test]
fn freshest_preempt_gives_yates_and_kauls_multi_source_ages() {
    for lambdas in [vec![0.1, 0.2, 0.3], vec![0.5, 0.5, 1.0]] {
        let got = freshest_ages(&lambdas, true, 400_000.0, 21);
        let want = analytic::lcfs_preemptive_ages(&lambdas, 1.0);
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            eprintln!("M/M/1* {lambdas:?} source {i}: {g:.4} vs {w:.4}");
            assert_close(*g, *w, 0.02, &format!("M/M/1* {lambdas:?} source {i}"));
        }
    }
}

#[test]
fn freshest_without_preemption_gives_the_mm1_2_star_age() {
    for rho in [0.5, 1.0, 3.0] {
        let got = freshest_ages(&[rho], false, 400_000.0, 21);
        let want = analytic::mm1_2_star_age(rho, 1.0);
        eprintln!("M/M/1/2* ρ={rho}: {:.4} vs {want:.4}", got[0]);
        assert_close(got[0], want, 0.02, &format!("M/M/1/2* ρ={rho}"));
    }
}
