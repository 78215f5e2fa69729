//! A figure against the number of sources sharing the access network ([`super::access`]):
//! every controller of the figure with every number of sources and every seed, and, where the
//! figure asks, the best fixed rate for one source (the oracle). `fig15` and `fig3-16` are such
//! figures; each declares its network, counts, controllers and published numbers in its own
//! module, and this one runs and reports them alike.
//!
//! Per controller and number of sources, the per-source means of a run (age at the monitor,
//! backlog, RTT, update rate, throughput of fresh updates, Jain's fairness of the ages) are
//! averaged over the seeds, with 95 % confidence intervals (Student's t).

use acp_core::controller::ControllerKind;
use serde::Serialize;

use super::access::{access_scenario, seed_range, AccessNet, UPDATE_OVERHEAD};
use super::harness::{
    by_point, jain, stat, Chart, Declaration, Done, Job, Options, Plan, Source, Trace, View,
};
use crate::report::{FlowResult, SimResult};

/// The published numbers of a figure: (field, controller label, sources) → value in the
/// field's unit.
pub type Published = fn(&str, &str, usize) -> Option<f64>;

/// A figure against the number of sources.
#[derive(Debug, Clone, Copy)]
pub struct SourcesFigure {
    /// Its name (`acp reproduce NAME`).
    pub name: &'static str,
    /// One line on what it reproduces.
    pub about: &'static str,
    /// The figure, as the papers number it.
    pub figure: &'static str,
    /// The network (its payload is the default of `--payload`).
    pub net: AccessNet,
    /// The numbers of sources.
    pub counts: &'static [usize],
    /// The controllers compared.
    pub controllers: &'static [ControllerKind],
    /// Whether the best fixed rate for one source is found too (an `oracle` row).
    pub oracle: bool,
    /// The published numbers.
    pub published: Published,
    /// Where they come from.
    pub sources: &'static [Source],
    /// The papers' claims that are no table cell.
    pub claims: &'static [&'static str],
}

/// Simulated seconds per run unless the caller says otherwise.
pub const DEFAULT_SECS: u64 = 300;

/// One run's per-source averages.
#[derive(Debug, Clone, Copy)]
pub struct PerSource {
    age: f64,
    est_age: f64,
    backlog: f64,
    rtt: f64,
    rate: f64,
    throughput: f64,
    jain: f64,
}

/// What a job yields: a run's per-source averages, or the oracle's best rate.
#[derive(Debug, Clone)]
pub enum Measure {
    /// A controller's run.
    Run(PerSource),
    /// The oracle: rate, age, its CI and the seeds run (s, updates/s).
    Oracle {
        rate: f64,
        age: f64,
        ci95: f64,
        seeds: usize,
    },
}

fn per_source(r: &SimResult) -> PerSource {
    let acp: Vec<_> = r.flows.iter().filter(|f| f.kind == "acp").collect();
    let mean = |v: &dyn Fn(&FlowResult) -> Option<f64>| {
        let xs: Vec<f64> = acp.iter().filter_map(|f| v(f)).collect();
        xs.iter().sum::<f64>() / xs.len().max(1) as f64
    };
    let ages: Vec<f64> = acp.iter().map(|f| f.age.unwrap_or(f64::INFINITY)).collect();
    PerSource {
        age: ages.iter().sum::<f64>() / ages.len().max(1) as f64,
        est_age: mean(&|f| f.est_age),
        backlog: mean(&|f| f.source_backlog),
        rtt: mean(&|f| f.mean_rtt),
        rate: mean(&|f| Some(f.send_rate)),
        throughput: mean(&|f| Some(f.throughput_bps)),
        jain: jain(&ages),
    }
}

/// One controller (or the oracle) at one number of sources, over the seeds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// The controller's label, or `oracle` (the best fixed rate, one source).
    pub controller: String,
    /// Sources sharing the AP.
    pub sources: usize,
    /// Seeds run.
    pub seeds: usize,
    /// Per-source time-average age at the monitor (ms).
    pub age_ms: f64,
    /// Its 95 % confidence half-width over the seeds.
    pub age_ms_ci95: f64,
    /// The papers'.
    pub paper_age_ms: Option<f64>,
    /// Per-source time-average of the source's own age estimate (ms): the age as the source
    /// sees it from its ACKs, RTT-based, what the papers plot for ACP+ (docs/ALGORITHMS.md §6).
    pub est_age_ms: f64,
    /// Its 95 % confidence half-width.
    pub est_age_ms_ci95: f64,
    /// The papers'.
    pub paper_est_age_ms: Option<f64>,
    /// The age over Lazy's with as many sources.
    pub age_over_lazy: Option<f64>,
    /// The papers'.
    pub paper_age_over_lazy: Option<f64>,
    /// Per-source time-average backlog (updates sent and not yet acknowledged).
    pub backlog: f64,
    /// Its 95 % confidence half-width.
    pub backlog_ci95: f64,
    /// The papers'.
    pub paper_backlog: Option<f64>,
    /// The backlog per source of an ideal round-robin, contention-free schedule, as the papers
    /// work it out (`None` where they do not).
    pub round_robin_backlog: Option<f64>,
    /// Per-source mean RTT of the ACKs (ms).
    pub rtt_ms: f64,
    /// Its 95 % confidence half-width.
    pub rtt_ms_ci95: f64,
    /// The papers'.
    pub paper_rtt_ms: Option<f64>,
    /// Per-source update rate λ (updates/s).
    pub rate_hz: f64,
    /// Its 95 % confidence half-width.
    pub rate_hz_ci95: f64,
    /// The papers'.
    pub paper_rate_hz: Option<f64>,
    /// Per-source throughput of fresh updates (Mbit/s, IP datagrams).
    pub throughput_mbit_s: f64,
    /// Its 95 % confidence half-width.
    pub throughput_mbit_s_ci95: f64,
    /// The papers'.
    pub paper_throughput_mbit_s: Option<f64>,
    /// Jain's fairness index of the sources' ages.
    pub jain: f64,
    /// Its 95 % confidence half-width.
    pub jain_ci95: f64,
    /// The papers'.
    pub paper_jain: Option<f64>,
}

/// The measured fields, with their descriptions (tables, chart axes).
const METRICS: [(&str, &str); 8] = [
    ("age_ms", "average age per source (ms)"),
    (
        "est_age_ms",
        "average age per source as the source estimates it (ms)",
    ),
    ("age_over_lazy", "age over Lazy's"),
    ("backlog", "average backlog per source (updates)"),
    ("rtt_ms", "average RTT (ms)"),
    ("rate_hz", "update rate λ per source (updates/s)"),
    ("throughput_mbit_s", "throughput per source (Mbit/s)"),
    ("jain", "Jain's fairness index of age"),
];

impl SourcesFigure {
    /// The network with the payload of `o`.
    pub fn net(&self, o: &Options) -> AccessNet {
        AccessNet {
            payload: o.payload.unwrap_or(self.net.payload),
            whole_medium: o.whole_medium,
            ..self.net
        }
    }

    /// The point of controller `c` with the `n`-th number of sources.
    fn point(&self, c: usize, n: usize) -> usize {
        c * self.counts.len() + n
    }

    /// The oracle's point.
    fn oracle_point(&self) -> usize {
        self.controllers.len() * self.counts.len()
    }
}

impl Declaration for SourcesFigure {
    type Measure = Measure;
    type Row = Row;

    fn name(&self) -> &'static str {
        self.name
    }

    fn about(&self) -> &'static str {
        self.about
    }

    fn plan(&self, o: &Options) -> Plan {
        let net = self.net(o);
        let secs = o.secs.unwrap_or(DEFAULT_SECS);
        let seeds = o.seed_list(self.default_seeds());
        let mut jobs = Vec::new();
        for (c, &controller) in self.controllers.iter().enumerate() {
            for (n, &count) in self.counts.iter().enumerate() {
                for &seed in &seeds {
                    let s = access_scenario(&net, count, controller, secs, seed);
                    jobs.push(Job::sim(self.point(c, n), s));
                }
            }
        }
        // The largest runs first, so that no thread is left with one at the end.
        jobs.sort_by_key(|j| std::cmp::Reverse(self.counts[j.point % self.counts.len()]));
        if self.oracle {
            // The sweep sets each run's seed; the base scenario's own is never used.
            let base = access_scenario(&net, 1, ControllerKind::Fixed(1.0), secs, 1);
            let cap = net.p2p_mbit * 1e6 / (8.0 * f64::from(net.payload + UPDATE_OVERHEAD));
            let coarse = (1..=24).map(|k| cap * f64::from(k) / 24.0).collect();
            jobs.push(Job::oracle(self.oracle_point(), base, coarse, seeds));
        }
        Plan { jobs }
    }

    fn measure(&self, _job: &Job, done: Done<'_>) -> Measure {
        match done {
            Done::Sim(r) => Measure::Run(per_source(r)),
            Done::Oracle(p) => Measure::Oracle {
                rate: p.rate,
                age: p.age,
                ci95: p.ci95,
                seeds: p.ages.len(),
            },
            Done::Lab(_) => unreachable!("{} has no lab runs", self.name),
        }
    }

    fn rows(&self, _o: &Options, plan: &Plan, done: &[Option<Measure>]) -> Vec<Row> {
        let points = by_point(plan, done, self.oracle_point() + 1);
        let runs = |p: usize| -> Vec<&PerSource> {
            points[p]
                .iter()
                .filter_map(|m| match m {
                    Measure::Run(r) => Some(r),
                    Measure::Oracle { .. } => None,
                })
                .collect()
        };
        let lazy = self
            .controllers
            .iter()
            .position(|c| *c == ControllerKind::Lazy);
        let mean_age = |p: usize| stat(&runs(p), |r| r.age).0;
        let mut rows = Vec::new();
        for (c, controller) in self.controllers.iter().enumerate() {
            let label = controller.to_string();
            for (n, &sources) in self.counts.iter().enumerate() {
                let point = runs(self.point(c, n));
                if point.is_empty() {
                    continue;
                }
                let paper = |field: &str| (self.published)(field, &label, sources);
                let (age, age_ci) = stat(&point, |r| r.age);
                let (est_age, est_age_ci) = stat(&point, |r| r.est_age);
                let (backlog, backlog_ci) = stat(&point, |r| r.backlog);
                let (rtt, rtt_ci) = stat(&point, |r| r.rtt);
                let (rate, rate_ci) = stat(&point, |r| r.rate);
                let (bps, bps_ci) = stat(&point, |r| r.throughput);
                let (j, j_ci) = stat(&point, |r| r.jain);
                rows.push(Row {
                    controller: label.clone(),
                    sources,
                    seeds: point.len(),
                    age_ms: age * 1e3,
                    age_ms_ci95: age_ci * 1e3,
                    paper_age_ms: paper("age_ms"),
                    est_age_ms: est_age * 1e3,
                    est_age_ms_ci95: est_age_ci * 1e3,
                    paper_est_age_ms: paper("est_age_ms"),
                    age_over_lazy: lazy.map(|l| age / mean_age(self.point(l, n))),
                    paper_age_over_lazy: paper("age_over_lazy"),
                    backlog,
                    backlog_ci95: backlog_ci,
                    paper_backlog: paper("backlog"),
                    round_robin_backlog: paper("round_robin_backlog"),
                    rtt_ms: rtt * 1e3,
                    rtt_ms_ci95: rtt_ci * 1e3,
                    paper_rtt_ms: paper("rtt_ms"),
                    rate_hz: rate,
                    rate_hz_ci95: rate_ci,
                    paper_rate_hz: paper("rate_hz"),
                    throughput_mbit_s: bps / 1e6,
                    throughput_mbit_s_ci95: bps_ci / 1e6,
                    paper_throughput_mbit_s: paper("throughput_mbit_s"),
                    jain: j,
                    jain_ci95: j_ci,
                    paper_jain: paper("jain"),
                });
            }
        }
        for m in &points[self.oracle_point()] {
            if let Measure::Oracle {
                rate,
                age,
                ci95,
                seeds,
            } = **m
            {
                let paper = |field: &str| (self.published)(field, "oracle", 1);
                rows.push(Row {
                    controller: "oracle".into(),
                    sources: 1,
                    seeds,
                    age_ms: age * 1e3,
                    age_ms_ci95: ci95 * 1e3,
                    paper_age_ms: paper("age_ms"),
                    est_age_ms: f64::NAN,
                    est_age_ms_ci95: f64::NAN,
                    paper_est_age_ms: None,
                    age_over_lazy: None,
                    paper_age_over_lazy: None,
                    backlog: f64::NAN,
                    backlog_ci95: f64::NAN,
                    paper_backlog: None,
                    round_robin_backlog: None,
                    rtt_ms: f64::NAN,
                    rtt_ms_ci95: f64::NAN,
                    paper_rtt_ms: None,
                    rate_hz: rate,
                    rate_hz_ci95: 0.0,
                    paper_rate_hz: None,
                    throughput_mbit_s: f64::NAN,
                    throughput_mbit_s_ci95: f64::NAN,
                    paper_throughput_mbit_s: None,
                    jain: f64::NAN,
                    jain_ci95: f64::NAN,
                    paper_jain: None,
                });
            }
        }
        rows
    }

    fn setup(&self, o: &Options) -> String {
        let net = self.net(o);
        let secs = o.secs.unwrap_or(DEFAULT_SECS);
        let labels: Vec<String> = self.controllers.iter().map(ToString::to_string).collect();
        format!(
            "{}: {}{} with {} sources behind one 802.11g AP at {} Mbit/s ({} × {} m², σ = {} dB, \
             exponent 3; {}), then five {} Mbit/s hops; {}-byte updates; {secs} s per run ({} s \
             warm-up), seeds {}; mean ± 95 % CI over the seeds",
            self.figure,
            labels.join(", "),
            if self.oracle {
                " and the best fixed rate for one source (oracle)"
            } else {
                ""
            },
            self.counts
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", "),
            net.wifi_mbit,
            net.side_m,
            net.side_m,
            net.shadowing_db,
            net.reception(),
            net.p2p_mbit,
            net.payload,
            secs / 10,
            seed_range(&o.seed_list(self.default_seeds()))
        )
    }

    fn sources(&self) -> Vec<Source> {
        self.sources.to_vec()
    }

    fn views(&self) -> Vec<View> {
        vec![
            View::new(
                "age, backlog and RTT per source",
                &[
                    "controller",
                    "sources",
                    "age_ms",
                    "est_age_ms",
                    "age_over_lazy",
                    "backlog",
                    "round_robin_backlog",
                    "rtt_ms",
                ],
            ),
            View::new(
                "rate, throughput and fairness",
                &[
                    "controller",
                    "sources",
                    "rate_hz",
                    "throughput_mbit_s",
                    "jain",
                ],
            ),
        ]
    }

    fn charts(&self, _o: &Options, _traces: &[Trace]) -> Vec<Chart> {
        METRICS
            .iter()
            .map(|&(field, label)| {
                Chart::lines(
                    format!("{}_{field}", self.name),
                    format!("{label} ({})", self.name),
                    ("sources", "sources sharing the access point"),
                    (field, label),
                    &["controller"],
                )
            })
            .collect()
    }

    fn notes(&self, _o: &Options, rows: &[Row]) -> Vec<String> {
        let mut notes: Vec<String> = self.claims.iter().map(|c| c.to_string()).collect();
        let one = |c: &str| {
            rows.iter()
                .find(|r| r.controller == c && r.sources == 1)
                .map(|r| r.age_ms)
        };
        if let (Some(acp), Some(best)) = (one("acp+"), one("oracle")) {
            notes.push(format!(
                "one source: ACP+ {acp:.2} ms against the best fixed rate's {best:.2} ms, ratio {:.3}",
                acp / best
            ));
        }
        notes.push(
            "differences from the papers are explained in docs/SIMULATOR.md (\"Multi-source reproductions\")"
                .into(),
        );
        notes
    }
}
