//! `thesis-3-9`: the thesis's §3.9, ten ACP sources behind an 802.11g campus access point send
//! updates over a 30-hop Internet path (RTT ≈ 185 ms) to AWS Frankfurt: ACP with κ = 1 and
//! κ = 2 against Lazy, and ACP+ and Seek beside them, with 1 and 10 sources. Per point: each
//! source's age (its own estimate, the thesis's real-world age), the age at the monitor, backlog, RTT,
//! throughput, the age over Lazy's, Jain's fairness.
//!
//! The network is [`super::access`]'s: 54 Mbit/s WiFi, then 30 hops of 100 Mbit/s and 3 ms
//! each way. The update size is not stated; Little's law on the thesis's numbers (about 1 Mbit/s
//! per source at a backlog of about 30 over 185 ms) gives 771 bytes per update, so 700 bytes of
//! payload (772 on the wire). `scenarios/paper/thesis_3_9.toml` is its 10-source ACP point;
//! it and `docs/SIMULATOR.md` say what the thesis states and what is derived.

use acp_core::controller::ControllerKind;
use serde::Serialize;

use super::access::{access_scenario, scenario_text, AccessNet, Backhaul};
use super::harness::{
    by_point, stat, Chart, Declaration, Done, Job, Options, Plan, Source, Trace, View,
};
use super::per_source::{per_source, PerSource};

/// The controllers.
pub const CONTROLLERS: [ControllerKind; 5] = [
    ControllerKind::Acp(1.0),
    ControllerKind::Acp(2.0),
    ControllerKind::Lazy,
    ControllerKind::AcpPlus,
    ControllerKind::Seek,
];
/// The numbers of sources (the thesis's figures are of 10; it quotes one source's too).
pub const SOURCES: [usize; 2] = [1, 10];
/// The payload the thesis's numbers imply (bytes).
pub const PAYLOAD: u32 = 700;
/// Simulated seconds per run unless the caller says otherwise.
pub const DEFAULT_SECS: u64 = 300;

/// The network with `payload`-byte updates.
pub fn net(payload: u32) -> AccessNet {
    AccessNet {
        backhaul: Backhaul::Internet {
            hops: 30,
            monitor: "frankfurt",
        },
        hop_delay_ms: 3.0,
        side_m: 20.0,
        shadowing_db: 0.0,
        wifi_mbit: 54.0,
        p2p_mbit: 100.0,
        payload,
        ap_per_station: false,
        whole_medium: false,
    }
}

/// The published numbers (thesis §3.9), ACP with κ = 1.
pub mod paper {
    /// Median age with 1 and with 10 sources (ms).
    pub const ACP_AGE_MS: [(usize, f64); 2] = [(1, 190.0), (10, 200.0)];
    /// Median RTT with 1 and with 10 sources (ms).
    pub const RTT_MS: [(usize, f64); 2] = [(1, 182.5), (10, 185.0)];
    /// Median backlog (updates), with 1 and with 10 sources.
    pub const ACP_BACKLOG: f64 = 30.0;
    /// Lazy's backlog, "about 1".
    pub const LAZY_BACKLOG: f64 = 1.0;
    /// Each source's throughput, "about 1 Mbps" (Mbit/s).
    pub const ACP_THROUGHPUT_MBIT_S: f64 = 1.0;
    /// ACP's age over Lazy's with 10 sources: "≈ 33%" below.
    pub const ACP_OVER_LAZY: f64 = 0.67;
}

/// One controller with one number of sources, over the seeds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// The controller's label.
    pub controller: String,
    /// Sources sharing the access.
    pub sources: usize,
    /// Seeds run.
    pub seeds: usize,
    /// Per-source time-average age at the monitor (ms).
    pub age_ms: f64,
    /// Per-source age as the source estimates it from its ACKs (ms).
    pub est_age_ms: f64,
    /// Its 95 % confidence half-width over the seeds.
    pub est_age_ms_ci95: f64,
    /// The thesis's (median over sources and runs).
    pub paper_est_age_ms: Option<f64>,
    /// The estimated age over Lazy's with as many sources.
    pub est_age_over_lazy: f64,
    /// The thesis's.
    pub paper_est_age_over_lazy: Option<f64>,
    /// Per-source backlog (updates sent and not yet acknowledged).
    pub backlog: f64,
    /// Its 95 % confidence half-width.
    pub backlog_ci95: f64,
    /// The thesis's.
    pub paper_backlog: Option<f64>,
    /// Per-source mean RTT (ms).
    pub rtt_ms: f64,
    /// The thesis's.
    pub paper_rtt_ms: Option<f64>,
    /// Per-source throughput of fresh updates (Mbit/s, IP datagrams).
    pub throughput_mbit_s: f64,
    /// The thesis's.
    pub paper_throughput_mbit_s: Option<f64>,
    /// Jain's fairness index of the sources' ages.
    pub jain: f64,
}

/// The reproduction.
pub struct Thesis3_9;

/// The points: (controller, sources), controller-major; the controllers and numbers of sources
/// are the thesis's, or those `controllers` and `clients` list.
fn points(o: &Options) -> Vec<(ControllerKind, usize)> {
    let counts = if o.clients.is_empty() {
        SOURCES.to_vec()
    } else {
        o.clients.clone()
    };
    let controllers = if o.controllers.is_empty() {
        CONTROLLERS.to_vec()
    } else {
        o.controllers.clone()
    };
    controllers
        .into_iter()
        .flat_map(|c| counts.iter().map(move |&n| (c, n)))
        .collect()
}

impl Thesis3_9 {
    fn payload(o: &Options) -> u32 {
        o.payload.unwrap_or(PAYLOAD)
    }

    /// The scenario file of the 10-source ACP point (`scenarios/paper/thesis_3_9.toml`).
    pub fn example() -> String {
        scenario_text(&net(PAYLOAD), 10, ControllerKind::Acp(1.0), DEFAULT_SECS, 1)
    }
}

/// The thesis's number for `field` of `controller` with `sources` sources.
fn published(field: &str, controller: ControllerKind, sources: usize) -> Option<f64> {
    let at = |v: &[(usize, f64)]| v.iter().find(|p| p.0 == sources).map(|p| p.1);
    let acp = controller == ControllerKind::Acp(1.0);
    match field {
        "est_age_ms" if acp => at(&paper::ACP_AGE_MS),
        "est_age_over_lazy" if acp && sources == 10 => Some(paper::ACP_OVER_LAZY),
        "backlog" if acp => Some(paper::ACP_BACKLOG),
        "backlog" if controller == ControllerKind::Lazy => Some(paper::LAZY_BACKLOG),
        "rtt_ms" if acp => at(&paper::RTT_MS),
        "throughput_mbit_s" if acp => Some(paper::ACP_THROUGHPUT_MBIT_S),
        _ => None,
    }
}

impl Declaration for Thesis3_9 {
    type Measure = PerSource;
    type Row = Row;

    fn takes_controllers(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "thesis-3-9"
    }

    fn about(&self) -> &'static str {
        "ACP (κ = 1, 2), Lazy, ACP+ and Seek, 1 and 10 sources over a 30-hop Internet path, RTT ≈ 185 ms (thesis §3.9, Fig. 3.13)"
    }

    fn default_seeds(&self) -> u64 {
        3
    }

    fn plan(&self, o: &Options) -> Plan {
        let secs = o.secs.unwrap_or(DEFAULT_SECS);
        let net = net(Self::payload(o));
        let all = points(o);
        let mut jobs = Vec::new();
        for (k, &(c, n)) in all.iter().enumerate() {
            for seed in o.seed_list(self.default_seeds()) {
                jobs.push(Job::sim(k, access_scenario(&net, n, c, secs, seed)));
            }
        }
        jobs.sort_by_key(|j| std::cmp::Reverse(all[j.point].1));
        Plan { jobs }
    }

    fn measure(&self, _job: &Job, done: Done<'_>) -> PerSource {
        match done {
            Done::Sim(r) => per_source(r),
            Done::Oracle(_) | Done::Lab(_) => unreachable!("thesis-3-9 runs the simulator only"),
        }
    }

    fn rows(&self, o: &Options, plan: &Plan, done: &[Option<PerSource>]) -> Vec<Row> {
        let all = points(o);
        let by = by_point(plan, done, all.len());
        let lazy = |n: usize| {
            all.iter()
                .position(|&(c, m)| c == ControllerKind::Lazy && m == n)
                .filter(|&p| !by[p].is_empty())
                .map(|p| stat(&by[p], |m| m.est_age).0)
        };
        let mut rows = Vec::new();
        for (p, &(c, sources)) in all.iter().enumerate() {
            let runs = &by[p];
            if runs.is_empty() {
                continue;
            }
            let (age, age_ci) = stat(runs, |m| m.est_age);
            let (backlog, backlog_ci) = stat(runs, |m| m.backlog);
            rows.push(Row {
                controller: c.to_string(),
                sources,
                seeds: runs.len(),
                age_ms: stat(runs, |m| m.age).0 * 1e3,
                est_age_ms: age * 1e3,
                est_age_ms_ci95: age_ci * 1e3,
                paper_est_age_ms: published("est_age_ms", c, sources),
                est_age_over_lazy: lazy(sources).map_or(f64::NAN, |l| age / l),
                paper_est_age_over_lazy: published("est_age_over_lazy", c, sources),
                backlog,
                backlog_ci95: backlog_ci,
                paper_backlog: published("backlog", c, sources),
                rtt_ms: stat(runs, |m| m.rtt).0 * 1e3,
                paper_rtt_ms: published("rtt_ms", c, sources),
                throughput_mbit_s: stat(runs, |m| m.throughput).0 / 1e6,
                paper_throughput_mbit_s: published("throughput_mbit_s", c, sources),
                jain: stat(runs, |m| m.jain_est).0,
            });
        }
        rows
    }

    fn setup(&self, o: &Options) -> String {
        let secs = o.secs.unwrap_or(DEFAULT_SECS);
        let seeds = o.seed_list(self.default_seeds());
        format!(
            "thesis §3.9: ACP (κ = 1, 2), Lazy, ACP+ and Seek with 1 and 10 sources behind one \
             802.11g AP at 54 Mbit/s, then 30 hops of 100 Mbit/s and 3 ms each way to the \
             monitor; {}-byte updates; {secs} s per run ({} s warm-up), seeds {}–{}; ages are \
             the sources' estimates from their ACKs; mean ± 95 % CI over the seeds",
            Self::payload(o),
            secs / 10,
            seeds.first().copied().unwrap_or(o.seed),
            seeds.last().copied().unwrap_or(o.seed),
        )
    }

    fn sources(&self) -> Vec<Source> {
        vec![
            Source {
                column: "paper_est_age_ms",
                locator: "thesis §3.9 (ACP κ = 1: median 190 ms with one source, 200 ms with 10)",
            },
            Source {
                column: "paper_est_age_over_lazy",
                locator: "thesis §3.9 (\"about 100 msec in age (≈ 33% over average age obtained using Lazy)\")",
            },
            Source {
                column: "paper_backlog",
                locator: "thesis §3.9 (ACP κ = 1 \"about 30\"; Lazy \"about 1\")",
            },
            Source {
                column: "paper_rtt_ms",
                locator: "thesis §3.9 (median RTT 182.5 ms with one source, 185 ms with 10)",
            },
            Source {
                column: "paper_throughput_mbit_s",
                locator: "thesis §3.9 (\"each source utilized a throughput of about 1 Mbps\")",
            },
        ]
    }

    fn views(&self) -> Vec<View> {
        vec![View::new(
            "age, backlog, RTT and throughput per source",
            &[
                "controller",
                "sources",
                "est_age_ms",
                "est_age_over_lazy",
                "age_ms",
                "backlog",
                "rtt_ms",
                "throughput_mbit_s",
                "jain",
            ],
        )]
    }

    fn charts(&self, _o: &Options, _traces: &[Trace]) -> Vec<Chart> {
        vec![Chart::lines(
            "thesis-3-9_est_age_ms",
            "average age per source, the source's estimate (thesis §3.9)",
            ("sources", "sources sharing the access"),
            (
                "est_age_ms",
                "average age per source, the source's estimate (ms)",
            ),
            &["controller"],
        )]
    }

    fn notes(&self, _o: &Options, rows: &[Row]) -> Vec<String> {
        let mut notes = Vec::new();
        let ten = |c: &str| rows.iter().find(|r| r.controller == c && r.sources == 10);
        if let (Some(acp), Some(lazy)) = (ten(&ControllerKind::Acp(1.0).to_string()), ten("lazy")) {
            notes.push(format!(
                "10 sources: ACP (κ = 1) {:.1} ms below Lazy ({:.0} %); thesis: about 100 ms (≈ 33 %)",
                lazy.est_age_ms - acp.est_age_ms,
                100.0 * (1.0 - acp.est_age_ms / lazy.est_age_ms)
            ));
        }
        notes.push(
            "differences from the thesis are explained in docs/SIMULATOR.md (\"Thesis §3.9\")"
                .into(),
        );
        notes
    }

    fn files(&self, _o: &Options) -> Vec<(String, String)> {
        vec![("scenarios/thesis_3_9.toml".into(), Self::example())]
    }
}
