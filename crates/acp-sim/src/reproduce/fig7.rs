//! `fig7`: the ACP+ paper's Fig. 7a, age against the update rate λ for three M/M/1 queues
//! (μ = 1, 2, 4) and two M/M/1 queues in tandem (μ1 = μ2 = 1): the simulator's points against
//! the analytic curves (time in units of 1/μ = 1 s).

use std::time::Duration;

use serde::Serialize;

use super::harness::{Chart, Declaration, Done, Draw, Job, Options, Plan, Source, Trace, View};
use crate::analytic;
use crate::engine::SimConfig;
use crate::flows::{FlowKind, FlowSpec, Process};
use crate::report::SimResult;
use crate::scenario::Scenario;
use crate::sweep::mean_age;
use crate::topology::Topology;
use acp_netmodel::{LinkConfig, QueueLimit, Service};

/// Bytes per update in the queueing models: with a link of `1000·μ` bit/s, service has mean 1/μ.
const MODEL_BYTES: u32 = 125;

/// Rates per system, between 5 % and 95 % of its slowest server.
pub const POINTS: usize = 12;

/// Simulated updates per point unless the caller says otherwise.
pub const DEFAULT_UPDATES: u64 = 1_000_000;

/// Poisson updates at `lambda` through exponential servers of rates `mus` in tandem, for
/// `updates` updates, as a scenario.
pub fn queue_chain_scenario(lambda: f64, mus: &[f64], updates: u64, seed: u64) -> Scenario {
    let mut topology = Topology::default();
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
        let _ = topology.add_link(&names[i], &names[i + 1], spec);
    }
    let secs = updates as f64 / lambda;
    Scenario {
        name: "queue chain".into(),
        config: SimConfig {
            seed,
            duration: Duration::from_secs_f64(secs),
            warmup: Duration::from_secs_f64(secs * 0.02),
            trace_points: 0,
            packet_log: false,
        },
        topology,
        flows: vec![FlowSpec {
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
        }],
    }
}

/// Simulates [`queue_chain_scenario`].
pub fn queue_chain(lambda: f64, mus: &[f64], updates: u64, seed: u64) -> SimResult {
    match queue_chain_scenario(lambda, mus, updates, seed).build() {
        Ok(sim) => sim.run(),
        Err(e) => unreachable!("a chain of distinct links always builds: {e}"),
    }
}

/// The systems: M/M/1 with μ = 1, 2, 4 and the tandem with μ1 = μ2 = 1.
pub fn systems() -> Vec<(String, Vec<f64>)> {
    vec![
        ("M/M/1 μ=1".into(), vec![1.0]),
        ("M/M/1 μ=2".into(), vec![2.0]),
        ("M/M/1 μ=4".into(), vec![4.0]),
        ("tandem μ1=μ2=1".into(), vec![1.0, 1.0]),
    ]
}

/// Analytic average age of a chain of one or two M/M/1 queues.
pub fn chain_age(lambda: f64, mus: &[f64]) -> f64 {
    match mus {
        [mu] => analytic::mm1_age(lambda, *mu),
        [mu1, mu2] => analytic::tandem_age(lambda, *mu1, *mu2),
        _ => f64::NAN,
    }
}

/// The slowest of `mus`.
fn slowest(mus: &[f64]) -> f64 {
    mus.iter().copied().fold(f64::INFINITY, f64::min)
}

/// The (system, rate) of every point.
fn points() -> Vec<(String, Vec<f64>, f64)> {
    let mut out = Vec::new();
    for (name, mus) in systems() {
        let slowest = slowest(&mus);
        for k in 0..POINTS {
            let lambda = slowest * (0.05 + 0.9 * k as f64 / (POINTS - 1) as f64);
            out.push((name.clone(), mus.clone(), lambda));
        }
    }
    out
}

/// One point.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// "M/M/1 μ=…" or "tandem μ1=…".
    pub system: String,
    /// Update rate λ (per unit of time, 1/s).
    pub rate_hz: f64,
    /// Analytic average age (s).
    pub analytic_age_s: f64,
    /// Simulated average age (s).
    pub simulated_age_s: f64,
    /// Simulated over analytic, less one, in per cent.
    pub error_pct: f64,
}

/// The reproduction.
pub struct Fig7;

impl Declaration for Fig7 {
    type Measure = f64;
    type Row = Row;

    fn name(&self) -> &'static str {
        "fig7"
    }

    fn about(&self) -> &'static str {
        "Age against λ: three M/M/1 queues and the tandem, simulation over analysis (Fig. 7a)"
    }

    fn default_seeds(&self) -> u64 {
        1
    }

    fn plan(&self, o: &Options) -> Plan {
        let updates = o.updates.unwrap_or(DEFAULT_UPDATES);
        let jobs = points()
            .into_iter()
            .enumerate()
            .map(|(k, (_, mus, lambda))| {
                Job::sim(k, queue_chain_scenario(lambda, &mus, updates, o.seed))
            })
            .collect();
        Plan { jobs }
    }

    fn measure(&self, _job: &Job, done: Done<'_>) -> f64 {
        match done {
            Done::Sim(r) => mean_age(r),
            _ => f64::NAN,
        }
    }

    fn rows(&self, _o: &Options, plan: &Plan, done: &[Option<f64>]) -> Vec<Row> {
        let points = points();
        plan.jobs
            .iter()
            .zip(done)
            .filter_map(|(job, age)| {
                let (system, mus, lambda) = points[job.point].clone();
                let simulated = (*age)?;
                let analytic = chain_age(lambda, &mus);
                Some(Row {
                    system,
                    rate_hz: lambda,
                    analytic_age_s: analytic,
                    simulated_age_s: simulated,
                    error_pct: (simulated / analytic - 1.0) * 100.0,
                })
            })
            .collect()
    }

    fn setup(&self, o: &Options) -> String {
        format!(
            "Fig. 7a: average age against λ, Poisson updates through exponential servers; {} \
             simulated updates per point, seed {}",
            o.updates.unwrap_or(DEFAULT_UPDATES),
            o.seed
        )
    }

    fn sources(&self) -> Vec<Source> {
        Vec::new()
    }

    fn views(&self) -> Vec<View> {
        vec![View::new(
            "",
            &[
                "system",
                "rate_hz",
                "analytic_age_s",
                "simulated_age_s",
                "error_pct",
            ],
        )]
    }

    fn charts(&self, _o: &Options, _traces: &[Trace]) -> Vec<Chart> {
        // The analytic curves on a fine grid up to each system's slowest server.
        let curves = systems()
            .into_iter()
            .map(|(name, mus)| {
                let slowest = slowest(&mus);
                let points = (1..400)
                    .map(|k| slowest * k as f64 / 400.0)
                    .map(|l| (l, chain_age(l, &mus)))
                    .collect();
                Trace { name, points }
            })
            .collect();
        vec![Chart::lines(
            "fig7",
            "Average age against λ: analysis (lines) and simulation (points), Fig. 7a",
            ("rate_hz", "update rate λ (1/s)"),
            ("simulated_age_s", "average age (s)"),
            &["system"],
        )
        .y_max(20.0)
        .draw(Draw::Model(curves))]
    }
}
