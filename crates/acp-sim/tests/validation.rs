//! The simulator against closed-form queueing results (`acp_sim::analytic`).
//!
//! Seeds are fixed, so every number here is reproducible. Tolerances: with n updates the
//! relative standard error of a time-average age estimate from one M/M/1 run is about
//! c/√n with c ≈ 2–4 at these loads (batch-means estimates from longer runs), i.e. 0.3–0.6 % at
//! n = 400,000; a 2 % bound is therefore several standard errors wide.

use std::time::Duration;

use acp_sim::analytic;
use acp_sim::engine::{Sim, SimConfig};
use acp_sim::flows::{FlowKind, FlowSpec, Process};
use acp_sim::reproduce::queue_chain;
use acp_sim::sweep::{mean_age, parallel};
use acp_sim::topology::{LinkSpec, QueueLimit, Service, Topology};

const UPDATES: u64 = 400_000;

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
        let spec = LinkSpec {
            rate_bps: 8.0 * 1000.0 / s,
            delay: Duration::from_millis(3),
            limit: QueueLimit::Packets(10),
            service: Service::Deterministic,
        };
        topo.add_link(names[i], names[i + 1], spec).unwrap();
    }
    let flows = vec![FlowSpec {
        name: "u".into(),
        kind: FlowKind::Updates {
            process: Process::Periodic,
            rate: 200.0,
            size: 1000,
        },
        path: names.iter().map(|n| n.to_string()).collect(),
        start: Duration::ZERO,
        stop: None,
    }];
    let cfg = SimConfig {
        seed: 1,
        duration: Duration::from_secs(100),
        warmup: Duration::from_secs(1),
        trace_points: 0,
    };
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
    let ages = parallel(grid.to_vec(), 2, |l| {
        mean_age(&queue_chain(l, mus, UPDATES, 21))
    });
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
