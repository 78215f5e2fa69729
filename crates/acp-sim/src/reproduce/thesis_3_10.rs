//! `thesis-3-10`: the thesis's §3.10 (with §3.8's setup), 20 ACP sources (κ = 0.25) behind one
//! 802.11g access point, then five point-to-point hops whose rate is swept over 0.3, 0.6, 1.2
//! and 6 Mbit/s; ACP+ and Seek beside ACP. At every rate ACP also runs with the other areas
//! (20 × 20 and 50 × 50 m²), shadowing (σ = 8 and 12 dB) and WiFi rate (54 Mbit/s) of §3.8, one
//! at a time from 10 × 10 m², σ = 4 dB, 12 Mbit/s. Per point: the age at the monitor, the
//! update rate, RTT, backlog, throughput and Jain's fairness per source.
//!
//! The network is [`super::access`]'s (ns-3's defaults where the thesis is silent, as
//! `fig3-16`), with 1024-byte updates unless `--payload`. `scenarios/paper/thesis_3_10.toml` is
//! its 0.3 Mbit/s ACP point; `docs/SIMULATOR.md` compares the results with the thesis's and
//! tests the explanation of the difference at 0.3 Mbit/s.

use acp_core::controller::ControllerKind;
use serde::Serialize;

use super::access::{access_scenario, AccessNet, Backhaul};
use super::harness::{
    by_point, stat, Chart, Declaration, Done, Job, Options, Plan, Source, Trace, View,
};
use super::per_source::{per_source, PerSource};

/// The point-to-point rates (Mbit/s).
pub const P2P_MBIT: [f64; 4] = [0.3, 0.6, 1.2, 6.0];
/// The thesis's controller (κ = 0.25, its simulation setting), and ACP+ and Seek beside it.
pub const CONTROLLERS: [ControllerKind; 3] = [
    ControllerKind::Acp(0.25),
    ControllerKind::AcpPlus,
    ControllerKind::Seek,
];
/// Sources sharing the access.
pub const SOURCES: usize = 20;
/// Simulated seconds per run unless the caller says otherwise (ages of seconds need long runs).
pub const DEFAULT_SECS: u64 = 600;

/// The base network: 10 × 10 m², σ = 4 dB, WiFi at 12 Mbit/s, no propagation delay.
pub const BASE: AccessNet = AccessNet {
    backhaul: Backhaul::Fig14,
    hop_delay_ms: 0.0,
    side_m: 10.0,
    shadowing_db: 4.0,
    wifi_mbit: 12.0,
    p2p_mbit: 0.3,
    payload: 1024,
    ap_per_station: false,
    whole_medium: false,
};

/// The other settings of §3.8, each run on its own from [`BASE`]: (side, σ, WiFi rate).
pub const VARIANTS: [(f64, f64, f64); 5] = [
    (20.0, 4.0, 12.0),
    (50.0, 4.0, 12.0),
    (10.0, 8.0, 12.0),
    (10.0, 12.0, 12.0),
    (10.0, 4.0, 54.0),
];

/// The published numbers (thesis §3.10), ACP with 20 sources on the base network.
pub mod paper {
    /// The age at 0.3 and at 6 Mbit/s (ms): "≈ 6 seconds", "≈ 0.25 seconds".
    pub const AGE_MS: [(f64, f64); 2] = [(0.3, 6000.0), (6.0, 250.0)];
    /// The update rate per source at 0.3 Mbit/s: "about 5 updates/second/source".
    pub const RATE_HZ_AT_0_3: f64 = 5.0;
}

/// One point: the controller and the network.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Point {
    controller: ControllerKind,
    net: AccessNet,
}

/// One point over the seeds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// The controller's label.
    pub controller: String,
    /// The point-to-point links' rate.
    pub p2p_mbit_s: f64,
    /// Side of the square the stations are placed in (m).
    pub side_m: f64,
    /// σ of the log-normal shadowing (dB).
    pub shadowing_db: f64,
    /// The WiFi rate.
    pub wifi_mbit_s: f64,
    /// Seeds run.
    pub seeds: usize,
    /// Per-source time-average age at the monitor (ms).
    pub age_ms: f64,
    /// Its 95 % confidence half-width over the seeds.
    pub age_ms_ci95: f64,
    /// The thesis's.
    pub paper_age_ms: Option<f64>,
    /// Per-source update rate λ (updates/s).
    pub rate_hz: f64,
    /// The thesis's.
    pub paper_rate_hz: Option<f64>,
    /// Per-source mean RTT (ms).
    pub rtt_ms: f64,
    /// Per-source backlog (updates sent and not yet acknowledged).
    pub backlog: f64,
    /// Per-source throughput of fresh updates (Mbit/s, IP datagrams).
    pub throughput_mbit_s: f64,
    /// Jain's fairness index of the sources' ages.
    pub jain: f64,
}

/// The reproduction.
pub struct Thesis3_10;

/// The points: every controller at every rate on the base network, then ACP on each variant;
/// the payload and reception model of `o`.
fn points(o: &Options) -> Vec<Point> {
    let base = AccessNet {
        payload: Thesis3_10::payload(o),
        whole_medium: o.whole_medium,
        ..BASE
    };
    let mut out = Vec::new();
    for controller in CONTROLLERS {
        for p2p_mbit in P2P_MBIT {
            out.push(Point {
                controller,
                net: AccessNet { p2p_mbit, ..base },
            });
        }
    }
    for (side_m, shadowing_db, wifi_mbit) in VARIANTS {
        for p2p_mbit in P2P_MBIT {
            out.push(Point {
                controller: CONTROLLERS[0],
                net: AccessNet {
                    side_m,
                    shadowing_db,
                    wifi_mbit,
                    p2p_mbit,
                    ..base
                },
            });
        }
    }
    out
}

impl Thesis3_10 {
    fn payload(o: &Options) -> u32 {
        o.payload.unwrap_or(BASE.payload)
    }
}

impl Declaration for Thesis3_10 {
    type Measure = PerSource;
    type Row = Row;

    fn name(&self) -> &'static str {
        "thesis-3-10"
    }

    fn about(&self) -> &'static str {
        "ACP (κ = 0.25), ACP+ and Seek, 20 sources behind one 802.11g AP, five hops at 0.3–6 Mbit/s; areas, shadowing and WiFi rates of §3.8 (thesis §3.10)"
    }

    fn default_seeds(&self) -> u64 {
        3
    }

    fn plan(&self, o: &Options) -> Plan {
        let secs = o.secs.unwrap_or(DEFAULT_SECS);
        let mut jobs = Vec::new();
        for (k, p) in points(o).into_iter().enumerate() {
            for seed in o.seed_list(self.default_seeds()) {
                let s = access_scenario(&p.net, SOURCES, p.controller, secs, seed);
                jobs.push(Job::sim(k, s));
            }
        }
        Plan { jobs }
    }

    fn measure(&self, _job: &Job, done: Done<'_>) -> PerSource {
        match done {
            Done::Sim(r) => per_source(r),
            Done::Oracle(_) | Done::Lab(_) => unreachable!("thesis-3-10 runs the simulator only"),
        }
    }

    fn rows(&self, o: &Options, plan: &Plan, done: &[Option<PerSource>]) -> Vec<Row> {
        let all = points(o);
        let by = by_point(plan, done, all.len());
        let mut rows = Vec::new();
        for (p, point) in all.iter().enumerate() {
            let runs = &by[p];
            if runs.is_empty() {
                continue;
            }
            let net = point.net;
            let thesis = point.controller == CONTROLLERS[0]
                && (net.side_m, net.shadowing_db, net.wifi_mbit)
                    == (BASE.side_m, BASE.shadowing_db, BASE.wifi_mbit);
            let (age, age_ci) = stat(runs, |m| m.age);
            rows.push(Row {
                controller: point.controller.to_string(),
                p2p_mbit_s: net.p2p_mbit,
                side_m: net.side_m,
                shadowing_db: net.shadowing_db,
                wifi_mbit_s: net.wifi_mbit,
                seeds: runs.len(),
                age_ms: age * 1e3,
                age_ms_ci95: age_ci * 1e3,
                paper_age_ms: paper::AGE_MS
                    .iter()
                    .find(|&&(r, _)| thesis && r == net.p2p_mbit)
                    .map(|p| p.1),
                rate_hz: stat(runs, |m| m.rate).0,
                paper_rate_hz: (thesis && net.p2p_mbit == 0.3).then_some(paper::RATE_HZ_AT_0_3),
                rtt_ms: stat(runs, |m| m.rtt).0 * 1e3,
                backlog: stat(runs, |m| m.backlog).0,
                throughput_mbit_s: stat(runs, |m| m.throughput).0 / 1e6,
                jain: stat(runs, |m| m.jain).0,
            });
        }
        rows
    }

    fn setup(&self, o: &Options) -> String {
        let secs = o.secs.unwrap_or(DEFAULT_SECS);
        let seeds = o.seed_list(self.default_seeds());
        format!(
            "thesis §3.10: {SOURCES} sources behind one 802.11g AP (10 × 10 m², σ = 4 dB, \
             12 Mbit/s unless the row says otherwise; {}), then five hops at 0.3, 0.6, 1.2, 6 Mbit/s \
             (no propagation delay, 100-packet queues); ACP (κ = 0.25), ACP+ and Seek, and ACP \
             alone on the other settings of §3.8; {}-byte updates; {secs} s per run ({} s \
             warm-up), seeds {}–{}; mean ± 95 % CI over the seeds",
            points(o)[0].net.reception(),
            Self::payload(o),
            secs / 10,
            seeds.first().copied().unwrap_or(o.seed),
            seeds.last().copied().unwrap_or(o.seed),
        )
    }

    fn sources(&self) -> Vec<Source> {
        vec![
            Source {
                column: "paper_age_ms",
                locator: "thesis §3.10 (ACP, 20 sources: \"≈ 6 seconds\" at 0.3 Mbit/s, \"≈ 0.25 seconds\" at 6.0)",
            },
            Source {
                column: "paper_rate_hz",
                locator: "thesis §3.10 (\"smaller λ of about 5 updates/second/source\" at 0.3 Mbit/s)",
            },
        ]
    }

    fn views(&self) -> Vec<View> {
        vec![View::new(
            "per source, against the point-to-point rate",
            &[
                "controller",
                "p2p_mbit_s",
                "side_m",
                "shadowing_db",
                "wifi_mbit_s",
                "age_ms",
                "rate_hz",
                "rtt_ms",
                "backlog",
                "jain",
            ],
        )]
    }

    fn charts(&self, _o: &Options, _traces: &[Trace]) -> Vec<Chart> {
        [
            ("age_ms", "average age per source (ms)"),
            ("rate_hz", "update rate per source (updates/s)"),
            ("backlog", "average backlog per source (updates)"),
        ]
        .into_iter()
        .map(|(field, text)| {
            Chart::lines(
                format!("thesis-3-10_{field}"),
                format!("{text}, base network (thesis §3.10)"),
                ("p2p_mbit_s", "point-to-point rate (Mbit/s)"),
                (field, text),
                &["controller"],
            )
            .only("side_m", BASE.side_m)
            .only("shadowing_db", BASE.shadowing_db)
            .only("wifi_mbit_s", BASE.wifi_mbit)
        })
        .collect()
    }

    fn notes(&self, o: &Options, _rows: &[Row]) -> Vec<String> {
        let wire = Self::payload(o) + super::access::UPDATE_OVERHEAD;
        vec![
            format!(
                "0.3 Mbit/s carries {:.1} updates/s of {wire} bytes on the wire: the thesis's 20 × 5 updates/s overload it",
                0.3e6 / (8.0 * f64::from(wire))
            ),
            "differences from the thesis are explained in docs/SIMULATOR.md (\"Thesis §3.10\")"
                .into(),
        ]
    }
}
