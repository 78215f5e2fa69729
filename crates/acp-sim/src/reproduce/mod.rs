//! Reproductions of the ACP+ paper's results, each a function returning its table's rows.
//!
//! - [`fig7`]: age against update rate for three M/M/1 queues and two M/M/1 queues in tandem,
//!   simulation points against the analytic curves.
//! - [`dd1_scenario`]: the D/D/1 "virtual path" of `docs/ALGORITHMS.md` §8, whose optimum is known
//!   exactly.
//! - [`table1`]: the six-hop networks Net A–E of Table I with 0.2 Mbit/s of other traffic on every
//!   hop: the oracle's per-node backlog (Fig. 8) and the age of ACP+, ACP (κ = 0.25) and Lazy as a
//!   ratio to the oracle's.
//! - [`wifi`]: the multi-source results behind a shared 802.11 access point (Fig. 15, thesis
//!   Figs. 3.15 and 3.16).
//! - [`controllers`]: our evaluation suite, every controller of a list against the fixed-rate
//!   oracle on 36 scenarios.
//! - [`core_tcp`]: §XI-A, ACP+, Lazy and bulk TCP over a long core path, one at a time.
//! - [`tcp_updates`]: §III, status updates over TCP against UDP (Fig. 2) and small payloads
//!   over TCP (Fig. 4).
//! - [`contention`]: §XI-B, TCP clients (CUBIC, Vegas, BBR) against ACP+ sources sharing one
//!   WiFi access, 1 to 80 clients.
//!
//! Each takes a [`Cancel`] handle for all its runs: once it is cancelled, the runs not yet started
//! are skipped and the results cover the runs done (rows or points with no run left out, cells
//! whose run was skipped `None`).

pub mod contention;
pub mod controllers;
pub mod core_tcp;
pub mod dd1;
pub mod harness;
pub mod tcp_updates;
pub mod wifi;
pub mod write;

use harness::Reproduction;

/// Every reproduction, in the order `acp reproduce` lists them.
pub fn registry() -> Vec<&'static dyn Reproduction> {
    vec![&dd1::Dd1]
}

/// The reproduction called `name`.
pub fn find(name: &str) -> Option<&'static dyn Reproduction> {
    registry().into_iter().find(|r| r.name() == name)
}

use std::time::Duration;

use acp_core::controller::ControllerKind;

use crate::analytic;
use crate::engine::{Sim, SimConfig};
use crate::flows::{FlowKind, FlowSpec, Process};
use crate::report::SimResult;
use crate::scenario::Scenario;
use crate::sweep::{self, mean_age, parallel, Cancel};
use crate::topology::Topology;
use acp_netmodel::{LinkConfig, QueueLimit, Service};

/// Bytes per update in the queueing models: with a link of `1000·μ` bit/s, service has mean 1/μ.
const MODEL_BYTES: u32 = 125;

/// Simulates Poisson updates at `lambda` through exponential servers of rates `mus` in tandem.
pub fn queue_chain(lambda: f64, mus: &[f64], updates: u64, seed: u64) -> SimResult {
    let mut topo = Topology::default();
    let names: Vec<String> = (0..=mus.len()).map(|i| format!("n{i}")).collect();
    for (i, mu) in mus.iter().enumerate() {
        let spec = LinkConfig {
            service: Service::Exponential,
            ..LinkConfig::new(
                8.0 * f64::from(MODEL_BYTES) * mu,
                Duration::ZERO,
                QueueLimit::Packets(usize::MAX),
            )
        };
        // Names are distinct, so adding cannot fail.
        let _ = topo.add_link(&names[i], &names[i + 1], spec);
    }
    let secs = updates as f64 / lambda;
    let flows = vec![FlowSpec {
        name: "updates".into(),
        kind: FlowKind::Updates {
            process: Process::Poisson,
            rate: lambda,
            size: MODEL_BYTES,
        },
        path: names,
        start: Duration::ZERO,
        stagger: Duration::ZERO,
        stop: None,
        dscp: 0,
    }];
    let cfg = SimConfig {
        seed,
        duration: Duration::from_secs_f64(secs),
        warmup: Duration::from_secs_f64(secs * 0.02),
        trace_points: 0,
        packet_log: false,
    };
    match Sim::new(cfg, topo, flows) {
        Ok(sim) => sim.run(),
        Err(e) => unreachable!("a chain of distinct links always builds: {e}"),
    }
}

/// One point of Fig. 7.
#[derive(Debug, Clone, PartialEq)]
pub struct Fig7Point {
    /// The system: "M/M/1 μ=…" or "tandem μ1=…, μ2=…".
    pub system: String,
    /// Update rate.
    pub lambda: f64,
    /// Analytic average age.
    pub analytic: f64,
    /// Simulated average age.
    pub simulated: f64,
}

/// The systems of Fig. 7: M/M/1 with μ = 1, 2, 4 and the tandem with μ1 = μ2 = 1.
pub fn fig7_systems() -> Vec<(String, Vec<f64>)> {
    vec![
        ("M/M/1 μ=1".into(), vec![1.0]),
        ("M/M/1 μ=2".into(), vec![2.0]),
        ("M/M/1 μ=4".into(), vec![4.0]),
        ("tandem μ1=μ2=1".into(), vec![1.0, 1.0]),
    ]
}

/// Analytic age of a chain of one or two M/M/1 queues.
pub fn chain_age(lambda: f64, mus: &[f64]) -> f64 {
    match mus {
        [mu] => analytic::mm1_age(lambda, *mu),
        [mu1, mu2] => analytic::tandem_age(lambda, *mu1, *mu2),
        _ => f64::NAN,
    }
}

/// Fig. 7: `points` rates per system between 5 % and 95 % of the slowest server, `updates`
/// simulated updates per point; points skipped by `cancel` are left out.
pub fn fig7(
    points: usize,
    updates: u64,
    seed: u64,
    threads: usize,
    cancel: &Cancel,
) -> Vec<Fig7Point> {
    let mut jobs = Vec::new();
    for (name, mus) in fig7_systems() {
        let slowest = mus.iter().copied().fold(f64::INFINITY, f64::min);
        for k in 0..points {
            let lambda = slowest * (0.05 + 0.9 * k as f64 / (points.max(2) - 1) as f64);
            jobs.push((name.clone(), mus.clone(), lambda));
        }
    }
    parallel(jobs, threads, cancel, |(system, mus, lambda)| {
        let r = queue_chain(lambda, &mus, updates, seed);
        Fig7Point {
            analytic: chain_age(lambda, &mus),
            simulated: mean_age(&r),
            system,
            lambda,
        }
    })
    .into_iter()
    .flatten()
    .collect()
}

/// Link rates (Mbit/s) of Net A–E (Table I), hop 1 (source → AP-1) to hop 6 (AP-2 → monitor).
pub const TABLE1: [(&str, [f64; 6]); 5] = [
    ("Net A", [1.0, 1.0, 1.0, 1.0, 1.0, 1.0]),
    ("Net B", [1.0, 1.0, 5.0, 5.0, 1.0, 1.0]),
    ("Net C", [1.0, 5.0, 5.0, 5.0, 5.0, 1.0]),
    ("Net D", [5.0, 5.0, 5.0, 5.0, 5.0, 1.0]),
    ("Net E", [5.0, 5.0, 5.0, 5.0, 5.0, 5.0]),
];

/// Update payload of the Table I networks (bytes, as in the paper's simulations).
pub const TABLE1_PAYLOAD: u32 = 1024;

/// A Table I network as a scenario: seven nodes in a line, links of the given rates with 2 ms of
/// propagation and 100-packet queues in both directions, one ACP flow with `controller`, and
/// 0.2 Mbit/s of Poisson other traffic of 1000-byte packets across every hop.
pub fn table1_scenario(
    rates: &[f64; 6],
    controller: ControllerKind,
    secs: u64,
    seed: u64,
) -> Scenario {
    let nodes = ["source", "ap1", "isp1", "core", "isp2", "ap2", "monitor"];
    let mut text = format!(
        "format = 2\nname = \"table1\"\nseed = {seed}\nduration = \"{secs}s\"\nwarmup = \"{}s\"\n",
        secs / 10
    );
    for (i, r) in rates.iter().enumerate() {
        text += &format!(
            "[[link]]\nfrom = \"{}\"\nto = \"{}\"\nrate = \"{}mbit\"\ndelay = \"2ms\"\nqueue = 100\n",
            nodes[i],
            nodes[i + 1],
            r
        );
        text += &format!(
            "[[flow]]\nname = \"other{}\"\ntype = \"cross\"\nprocess = \"poisson\"\nrate = \"0.2mbit\"\nsize = 1000\npath = [\"{}\", \"{}\"]\n",
            i + 1,
            nodes[i],
            nodes[i + 1]
        );
    }
    text += &format!(
        "[[flow]]\nname = \"updates\"\ntype = \"acp\"\ncontroller = \"{controller}\"\npayload = {TABLE1_PAYLOAD}\npath = {:?}\n",
        nodes
    );
    match Scenario::parse(&text) {
        Ok(s) => s,
        Err(e) => unreachable!("the Table I scenario is well formed: {e}"),
    }
}

/// A controller's entry in a row of [`table1`] or [`dd1_table`]: its label and two figures, `None`
/// if its run was skipped.
pub type ControllerRun = (String, Option<(f64, f64)>);

/// One network's row of the Table I reproduction.
#[derive(Debug, Clone)]
pub struct Table1Row {
    /// "Net A" … "Net E".
    pub network: String,
    /// The oracle's rate (updates/s) and age (s).
    pub oracle_rate: f64,
    /// The oracle's age (s).
    pub oracle_age: f64,
    /// Backlog of updates at each hop at the oracle's rate (Fig. 8).
    pub backlog: Vec<f64>,
    /// (controller, (age / oracle age, age in s)) for ACP+, ACP κ=0.25, Lazy; `None` if the
    /// controller's run was skipped.
    pub controllers: Vec<ControllerRun>,
}

/// Table I: sweeps each network's fixed rates for the oracle, then runs the controllers;
/// `progress(networks done, networks)` after each network. A network whose oracle `cancel` cut
/// short has no row (its controllers' runs are skipped too).
pub fn table1(
    secs: u64,
    seed: u64,
    threads: usize,
    cancel: &Cancel,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Vec<Table1Row> {
    let controllers = [
        ControllerKind::AcpPlus,
        ControllerKind::Acp(0.25),
        ControllerKind::Lazy,
    ];
    let mut rows = Vec::new();
    let total = TABLE1.len();
    for (n, (name, rates)) in TABLE1.iter().enumerate() {
        let base = table1_scenario(rates, ControllerKind::Fixed(1.0), secs, seed);
        // Updates are 1024 + 44 + 28 bytes; the slowest link bounds the useful rates.
        let bits = f64::from(TABLE1_PAYLOAD + 72) * 8.0;
        let cap = rates.iter().copied().fold(f64::INFINITY, f64::min) * 1e6 / bits;
        let oracle = sweep::oracle(&base, cap, &[seed], threads, cancel);
        let (oracle_rate, oracle_age, backlog) =
            oracle
                .as_ref()
                .map_or((f64::NAN, f64::NAN, Vec::new()), |o| {
                    let upd = o.result.flows.iter().find(|f| f.kind == "acp");
                    (
                        o.rate,
                        o.age,
                        upd.map(|f| f.backlog.iter().map(|h| h.backlog).collect())
                            .unwrap_or_default(),
                    )
                });
        let runs = parallel(controllers.to_vec(), threads, cancel, |c| {
            let r = table1_scenario(rates, c, secs, seed).build().map(Sim::run);
            r.map(|r| mean_age(&r)).unwrap_or(f64::NAN)
        });
        if oracle.is_none() && runs.iter().all(Option::is_none) {
            // Cancelled: nothing of this network ran to the end.
            continue;
        }
        rows.push(Table1Row {
            network: (*name).into(),
            oracle_rate,
            oracle_age,
            backlog,
            controllers: controllers
                .iter()
                .zip(runs)
                .map(|(c, age)| (c.to_string(), age.map(|age| (age / oracle_age, age))))
                .collect(),
        });
        progress(n + 1, total);
    }
    rows
}
