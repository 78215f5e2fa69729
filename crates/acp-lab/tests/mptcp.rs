//! Kernel MPTCP in the lab against the simulator's model of Linux's `default` scheduler: the
//! files of `scenarios/lab/mptcp/` run in both (4 s warm-up), and the connection's throughput
//! and each path's share of it agree. Root only: the test prints why and passes without it.
//!
//! Tolerances: 10 % on the connection's throughput (issue 21's goal). The loss-free cases run
//! 8 s, their shares held within 0.05: both sides put 0.500 / 0.667 on the paths in the runs of
//! `docs/MULTIPATH.md`, so 0.05 leaves room for the machine's load only. The lossy case runs
//! 20 s: over a 4 s window a loss-limited CUBIC subflow's throughput moves with the loss draws
//! (an 8 s run gave 13.43 Mbit/s in the simulator against 11.53 in the lab, 12 s runs 12.92
//! against 11.64, 20 s 12.68 in the simulator); its shares are held within 0.06, the spread
//! seen — 0.234–0.264 over seeds 1–4 in the simulator, 0.217–0.262 over three lab runs.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use acp_lab::{plan, run};
use acp_sim::scenario::Scenario;

// Only the privilege gate of the shared helpers is used here.
#[allow(dead_code)]
mod common;

use common::privileged;

/// (connection Mbit/s, shares) of `file` in the simulator and in the lab, each run `secs` s.
fn both(file: &str, secs: u64) -> ((f64, Vec<f64>), (f64, Vec<f64>)) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/lab/mptcp/")
        .join(file);
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("duration = \"12s\"", &format!("duration = \"{secs}s\""));
    let sim = Scenario::parse(&text).unwrap().build().unwrap().run();
    let f = &sim.flows[0];
    let m = f.mptcp.as_ref().unwrap();
    let sim = (
        f.throughput_bps / 1e6,
        m.subflows.iter().map(|s| s.share).collect(),
    );
    let p = plan::parse(&text).unwrap();
    let r = run::run(&p, Some(Duration::from_secs(secs)), &AtomicBool::new(false)).unwrap();
    let f = &r.flows[0];
    let m = f.mptcp.as_ref().unwrap();
    assert_eq!(m.subflows.len(), 2, "{m:?}");
    let lab = (
        f.throughput_bps / 1e6,
        m.subflows.iter().map(|s| s.share).collect(),
    );
    eprintln!("{file}: sim {sim:?}, lab {lab:?}");
    (sim, lab)
}

fn agree(file: &str, secs: u64, share_tolerance: f64) {
    let ((sim, sim_shares), (lab, lab_shares)) = both(file, secs);
    assert!(
        (lab - sim).abs() <= 0.1 * sim,
        "{file}: connection {lab:.3} Mbit/s in the lab, {sim:.3} in the simulator"
    );
    for (k, (s, l)) in sim_shares.iter().zip(&lab_shares).enumerate() {
        assert!(
            (s - l).abs() <= share_tolerance,
            "{file}: path {k}'s share {l:.3} in the lab, {s:.3} in the simulator"
        );
    }
}

#[test]
fn kernel_mptcp_agrees_with_the_linux_default_model() {
    if !privileged("kernel mptcp against the model") {
        return;
    }
    for file in ["equal.toml", "rate_2to1.toml", "rtt_4to1.toml"] {
        agree(file, 8, 0.05);
    }
    agree("lossy.toml", 20, 0.06);
}
