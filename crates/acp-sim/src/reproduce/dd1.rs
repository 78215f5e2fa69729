//! `dd1`: the D/D/1 "virtual path" of `docs/ALGORITHMS.md` §8, whose optimum is known exactly
//! (our finding; the paper has no such table, it claims ACP+ reaches the optimum with about one
//! update at the bottleneck). Seek, ACP+, ACP (κ = 0.25) and Lazy on ten paths of service S and
//! propagation P: each one's age as a ratio to the optimum's and its updates at the server.

use std::time::Duration;

use acp_core::controller::ControllerKind;
use serde::Serialize;

use super::harness::{Chart, Declaration, Done, Job, Options, Plan, Source, Trace, View};
use crate::engine::SimConfig;
use crate::flows::{FlowKind, FlowSpec};
use crate::scenario::Scenario;
use crate::topology::Topology;
use acp_netmodel::{LinkConfig, QueueLimit};

/// Payload of the D/D/1 path's updates (bytes).
pub const DD1_PAYLOAD: u32 = 64;

/// The paths: (service S, propagation P) in ms.
pub const DD1_PATHS: [(u64, u64); 10] = [
    (1, 2),
    (1, 5),
    (1, 10),
    (1, 20),
    (2, 2),
    (2, 5),
    (2, 10),
    (5, 2),
    (5, 10),
    (5, 20),
];

/// The controllers compared.
pub const CONTROLLERS: [ControllerKind; 4] = [
    ControllerKind::Seek,
    ControllerKind::AcpPlus,
    ControllerKind::Acp(0.25),
    ControllerKind::Lazy,
];

/// Simulated seconds per run unless the caller says otherwise.
pub const DEFAULT_SECS: u64 = 60;

/// The D/D/1 path of `docs/ALGORITHMS.md` §8: one ACP flow with `controller` through a server
/// that takes exactly `service` per update, then `delay` of propagation; ACKs come back after
/// `delay` without queueing. Rate 1/S is optimal there, with age `S + P + S/2` and one update at
/// the server. Measured over the last two thirds of `secs`.
pub fn dd1_scenario(
    service: Duration,
    delay: Duration,
    controller: ControllerKind,
    secs: u64,
) -> Scenario {
    let bits = 8.0 * f64::from(DD1_PAYLOAD + acp_core::wire::HEADER_LEN as u32 + 28);
    let mut topology = Topology::default();
    let forward = LinkConfig::new(
        bits / service.as_secs_f64(),
        delay,
        QueueLimit::Packets(10_000),
    );
    let back = LinkConfig::new(f64::INFINITY, delay, QueueLimit::Packets(10_000));
    for (from, to, cfg) in [("source", "monitor", forward), ("monitor", "source", back)] {
        if let Err(e) = topology.add_link(from, to, cfg) {
            unreachable!("the D/D/1 path's two links are valid and distinct: {e}");
        }
    }
    Scenario {
        name: format!(
            "D/D/1 S = {} ms, P = {} ms",
            service.as_secs_f64() * 1e3,
            delay.as_secs_f64() * 1e3
        ),
        config: SimConfig {
            seed: 1,
            duration: Duration::from_secs(secs),
            warmup: Duration::from_secs(secs / 3),
            trace_points: 0,
            packet_log: false,
        },
        topology,
        flows: vec![FlowSpec {
            name: "updates".into(),
            kind: FlowKind::Acp {
                controller,
                config: acp_core::SourceConfig::default(),
                payload: DD1_PAYLOAD,
                ack_dscp: None,
                multipath: None,
                sender: None,
            },
            path: vec!["source".into(), "monitor".into()],
            start: Duration::ZERO,
            stagger: Duration::ZERO,
            stop: None,
            dscp: 0,
        }],
    }
}

/// One controller on one path.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// Service time S (ms).
    pub service_ms: u64,
    /// Propagation each way P (ms).
    pub delay_ms: u64,
    /// The optimum's age S + P + S/2 (ms).
    pub optimal_age_ms: f64,
    /// The controller.
    pub controller: String,
    /// Its time-average age (ms).
    pub age_ms: f64,
    /// Its age over the optimum's.
    pub age_ratio: f64,
    /// Its mean number of updates at the server (the optimum holds one).
    pub server_backlog: f64,
}

/// The reproduction.
pub struct Dd1;

impl Declaration for Dd1 {
    type Measure = (f64, f64);
    type Row = Row;

    fn name(&self) -> &'static str {
        "dd1"
    }

    fn about(&self) -> &'static str {
        "The D/D/1 paths of docs/ALGORITHMS.md §8: Seek, ACP+, ACP(κ=0.25), Lazy against the exact optimum"
    }

    fn default_seeds(&self) -> u64 {
        // Deterministic paths: one run per controller and path.
        1
    }

    fn plan(&self, o: &Options) -> Plan {
        let secs = o.secs.unwrap_or(DEFAULT_SECS);
        let mut jobs = Vec::new();
        for (p, &(s, d)) in DD1_PATHS.iter().enumerate() {
            for (c, &controller) in CONTROLLERS.iter().enumerate() {
                let scenario = dd1_scenario(
                    Duration::from_millis(s),
                    Duration::from_millis(d),
                    controller,
                    secs,
                );
                jobs.push(Job::sim(p * CONTROLLERS.len() + c, scenario));
            }
        }
        Plan { jobs }
    }

    fn measure(&self, _job: &Job, done: Done<'_>) -> (f64, f64) {
        let Done::Sim(r) = done else {
            return (f64::NAN, f64::NAN);
        };
        r.flows.first().map_or((f64::NAN, f64::NAN), |f| {
            let b = f.backlog.first().map_or(f64::NAN, |h| h.backlog);
            (f.age.unwrap_or(f64::INFINITY), b)
        })
    }

    fn rows(&self, _o: &Options, plan: &Plan, done: &[Option<(f64, f64)>]) -> Vec<Row> {
        plan.jobs
            .iter()
            .zip(done)
            .filter_map(|(job, m)| {
                let (age, backlog) = (*m)?;
                let (s, d) = DD1_PATHS[job.point / CONTROLLERS.len()];
                let controller = CONTROLLERS[job.point % CONTROLLERS.len()];
                let optimal_age = (1.5 * s as f64 + d as f64) * 1e-3;
                Some(Row {
                    service_ms: s,
                    delay_ms: d,
                    optimal_age_ms: optimal_age * 1e3,
                    controller: controller.to_string(),
                    age_ms: age * 1e3,
                    age_ratio: age / optimal_age,
                    server_backlog: backlog,
                })
            })
            .collect()
    }

    fn setup(&self, o: &Options) -> String {
        let secs = o.secs.unwrap_or(DEFAULT_SECS);
        format!(
            "D/D/1 path: service S, propagation P each way; {secs} s per run (last two thirds \
             measured). Optimum: rate 1/S, age S + P + S/2, one update at the server (paper: \
             ACP+ ≈ optimum with ≈ 1 update at the bottleneck)"
        )
    }

    fn sources(&self) -> Vec<Source> {
        Vec::new()
    }

    fn views(&self) -> Vec<View> {
        vec![View::new(
            "",
            &[
                "service_ms",
                "delay_ms",
                "optimal_age_ms",
                "controller",
                "age_ms",
                "age_ratio",
                "server_backlog",
            ],
        )]
    }

    fn charts(&self, _o: &Options, _traces: &[Trace]) -> Vec<Chart> {
        Vec::new()
    }
}
