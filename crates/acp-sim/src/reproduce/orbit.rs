//! `orbit`: the ACP+ paper's ORBIT experiments (§VIII, Figs. 12–13; thesis §3.12, Figs.
//! 3.18–3.19): 1, 2, 5, 10, 20, 40 and 80 sources on the testbed's grid share one WiFi access
//! point at a fixed 6, 12 or 24 Mbit/s and send 1024-byte updates over the Internet to AWS
//! Mumbai; ACP+, and Seek beside it. Per point: each source's age (its own estimate from its
//! ACKs, the papers' real-world age), the age at the monitor, backlog, RTT and throughput, the sum throughput
//! over the WiFi rate (Fig. 13) and Jain's fairness of the ages.
//!
//! The network is [`super::access`]'s: the access, then 30 hops of 200 Mbit/s and 3.4 ms
//! each way (a baseline RTT of about 206 ms; the paper's is 200–210). `scenarios/paper/orbit.toml`
//! is its 10-source, 12 Mbit/s point; it and `docs/SIMULATOR.md` say what the paper states and
//! what is derived.

use acp_core::controller::ControllerKind;
use serde::Serialize;

use super::access::{access_scenario, scenario_text, AccessNet, Backhaul};
use super::harness::{
    by_point, stat, Chart, Declaration, Done, Job, Options, Plan, Source, Trace, View,
};
use super::per_source::{per_source, PerSource};

/// The WiFi rates (Mbit/s).
pub const RATES_MBIT: [f64; 3] = [6.0, 12.0, 24.0];
/// The numbers of sources.
pub const SOURCES: [usize; 7] = [1, 2, 5, 10, 20, 40, 80];
/// The controllers: the paper's, and ours beside it.
pub const CONTROLLERS: [ControllerKind; 2] = [ControllerKind::AcpPlus, ControllerKind::Seek];
/// Simulated seconds per run unless the caller says otherwise.
pub const DEFAULT_SECS: u64 = 300;
/// A source's age within this fraction of one source's is "similar" (the flat region).
pub const FLAT: f64 = 0.03;

/// The network at `wifi_mbit` (the payload is the papers' 1024 bytes unless `--payload`).
pub fn net(wifi_mbit: f64, payload: u32) -> AccessNet {
    AccessNet {
        backhaul: Backhaul::Internet {
            hops: 30,
            monitor: "aws",
        },
        hop_delay_ms: 3.4,
        side_m: 20.0,
        shadowing_db: 0.0,
        wifi_mbit,
        p2p_mbit: 200.0,
        payload,
        ap_per_station: true,
        whole_medium: false,
    }
}

/// The published numbers.
pub mod paper {
    /// §VIII: one source's throughput, "about 0.5 Mbps" (Mbit/s).
    pub const ONE_SOURCE_MBIT_S: f64 = 0.5;
    /// Thesis §4.6.2: ACP+'s age on 24 Mbit/s with 20 and 80 sources (ms).
    pub const AGE_24_MS: [(usize, f64); 2] = [(20, 215.5), (80, 249.65)];
    /// §VIII: the age "stays similar" up to this many sources at each rate (Mbit/s, sources).
    pub const FLAT_UP_TO: [(f64, usize); 3] = [(6.0, 5), (12.0, 10), (24.0, 20)];
    /// §IX: Jain's index "lies between .99 to 1.0" for 2 to 80 sources at every rate.
    pub const JAIN_MIN: f64 = 0.99;
}

/// One controller at one rate with one number of sources, over the seeds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// The controller's label.
    pub controller: String,
    /// The WiFi rate.
    pub wifi_mbit_s: f64,
    /// Sources sharing the access.
    pub sources: usize,
    /// Seeds run.
    pub seeds: usize,
    /// Per-source time-average age at the monitor (ms).
    pub age_ms: f64,
    /// Per-source age as the source estimates it from its ACKs (ms): the papers' measure.
    pub est_age_ms: f64,
    /// Its 95 % confidence half-width over the seeds.
    pub est_age_ms_ci95: f64,
    /// The papers'.
    pub paper_est_age_ms: Option<f64>,
    /// The estimated age over one source's at the same rate.
    pub est_age_over_one: f64,
    /// Per-source backlog (updates sent and not yet acknowledged).
    pub backlog: f64,
    /// Per-source mean RTT (ms).
    pub rtt_ms: f64,
    /// Its 95 % confidence half-width.
    pub rtt_ms_ci95: f64,
    /// Per-source throughput of fresh updates (Mbit/s, IP datagrams).
    pub throughput_mbit_s: f64,
    /// Its 95 % confidence half-width.
    pub throughput_mbit_s_ci95: f64,
    /// The papers'.
    pub paper_throughput_mbit_s: Option<f64>,
    /// The sources' sum throughput over the WiFi rate (Fig. 13).
    pub utilisation: f64,
    /// Its 95 % confidence half-width.
    pub utilisation_ci95: f64,
    /// Jain's fairness index of the sources' ages (estimated, as the age).
    pub jain: f64,
}

/// The reproduction.
pub struct Orbit;

/// The numbers of sources: the paper's, or those `clients` lists.
pub fn counts(o: &Options) -> Vec<usize> {
    if o.clients.is_empty() {
        SOURCES.to_vec()
    } else {
        o.clients.clone()
    }
}

/// The controllers: ACP+ and Seek, or those `controllers` lists.
pub fn controllers(o: &Options) -> Vec<ControllerKind> {
    if o.controllers.is_empty() {
        CONTROLLERS.to_vec()
    } else {
        o.controllers.clone()
    }
}

/// The points: (controller, rate, sources), controller-major.
fn points(o: &Options) -> Vec<(ControllerKind, f64, usize)> {
    let mut out = Vec::new();
    for c in controllers(o) {
        for r in RATES_MBIT {
            for n in counts(o) {
                out.push((c, r, n));
            }
        }
    }
    out
}

impl Orbit {
    /// The payload of `o`.
    fn payload(o: &Options) -> u32 {
        o.payload.unwrap_or(1024)
    }

    /// The scenario file of the 10-source, 12 Mbit/s ACP+ point (`scenarios/paper/orbit.toml`).
    pub fn example() -> String {
        scenario_text(
            &net(12.0, 1024),
            10,
            ControllerKind::AcpPlus,
            DEFAULT_SECS,
            1,
        )
    }
}

impl Declaration for Orbit {
    type Measure = PerSource;
    type Row = Row;

    fn takes_controllers(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "orbit"
    }

    fn about(&self) -> &'static str {
        "ACP+ and Seek, 1–80 sources behind one WiFi AP at 6, 12, 24 Mbit/s, then a 30-hop Internet path (§VIII ORBIT, Figs. 12–13)"
    }

    fn default_seeds(&self) -> u64 {
        3
    }

    fn plan(&self, o: &Options) -> Plan {
        let secs = o.secs.unwrap_or(DEFAULT_SECS);
        let payload = Self::payload(o);
        let all = points(o);
        let mut jobs = Vec::new();
        for (k, &(c, rate, n)) in all.iter().enumerate() {
            for seed in o.seed_list(self.default_seeds()) {
                jobs.push(Job::sim(
                    k,
                    access_scenario(&net(rate, payload), n, c, secs, seed),
                ));
            }
        }
        // The largest runs first, so that no thread is left with one at the end.
        jobs.sort_by_key(|j| std::cmp::Reverse(all[j.point].2));
        Plan { jobs }
    }

    fn measure(&self, _job: &Job, done: Done<'_>) -> PerSource {
        match done {
            Done::Sim(r) => per_source(r),
            Done::Oracle(_) | Done::Lab(_) => unreachable!("orbit runs the simulator only"),
        }
    }

    fn rows(&self, o: &Options, plan: &Plan, done: &[Option<PerSource>]) -> Vec<Row> {
        let all = points(o);
        let by = by_point(plan, done, all.len());
        let one = |c: ControllerKind, rate: f64| {
            all.iter()
                .position(|&(pc, pr, n)| pc == c && pr == rate && n == 1)
                .map(|p| stat(&by[p], |m| m.est_age).0)
        };
        let mut rows = Vec::new();
        for (p, &(c, rate, sources)) in all.iter().enumerate() {
            let runs = &by[p];
            if runs.is_empty() {
                continue;
            }
            let label = c.to_string();
            let acp_plus = c == ControllerKind::AcpPlus;
            let (age, age_ci) = stat(runs, |m| m.est_age);
            let (rtt, rtt_ci) = stat(runs, |m| m.rtt);
            let (bps, bps_ci) = stat(runs, |m| m.throughput);
            let (util, util_ci) = stat(runs, |m| m.sum_throughput / (rate * 1e6));
            rows.push(Row {
                controller: label,
                wifi_mbit_s: rate,
                sources,
                seeds: runs.len(),
                age_ms: stat(runs, |m| m.age).0 * 1e3,
                est_age_ms: age * 1e3,
                est_age_ms_ci95: age_ci * 1e3,
                paper_est_age_ms: paper::AGE_24_MS
                    .iter()
                    .find(|&&(n, _)| acp_plus && rate == 24.0 && n == sources)
                    .map(|p| p.1),
                est_age_over_one: one(c, rate).map_or(f64::NAN, |a| age / a),
                backlog: stat(runs, |m| m.backlog).0,
                rtt_ms: rtt * 1e3,
                rtt_ms_ci95: rtt_ci * 1e3,
                throughput_mbit_s: bps / 1e6,
                throughput_mbit_s_ci95: bps_ci / 1e6,
                paper_throughput_mbit_s: (acp_plus && sources == 1)
                    .then_some(paper::ONE_SOURCE_MBIT_S),
                utilisation: util,
                utilisation_ci95: util_ci,
                jain: stat(runs, |m| m.jain_est).0,
            });
        }
        rows
    }

    fn setup(&self, o: &Options) -> String {
        let secs = o.secs.unwrap_or(DEFAULT_SECS);
        let seeds = o.seed_list(self.default_seeds());
        format!(
            "§VIII ORBIT (thesis §3.12): ACP+ and Seek with 1, 2, 5, 10, 20, 40, 80 sources behind \
             one 802.11g AP at 6, 12 and 24 Mbit/s (per-station AP queues, 20 × 20 m², no \
             shadowing), then 30 hops of 200 Mbit/s and 3.4 ms each way to the monitor; \
             {}-byte updates; {secs} s per run ({} s warm-up), seeds {}–{}; ages are the sources' \
             estimates from their ACKs (the paper's); mean ± 95 % CI over the seeds",
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
                locator:
                    "thesis §4.6.2 (ACP+ on 24 Mbit/s: 215.5 ms with 20 sources, 249.65 with 80)",
            },
            Source {
                column: "paper_throughput_mbit_s",
                locator: "ACP+ paper §VIII-A (one source \"about 0.5 Mbps\" at 1024 bytes)",
            },
        ]
    }

    fn views(&self) -> Vec<View> {
        vec![
            View::new(
                "age per source (Fig. 12a) and its growth over one source's",
                &[
                    "controller",
                    "wifi_mbit_s",
                    "sources",
                    "est_age_ms",
                    "est_age_over_one",
                    "age_ms",
                ],
            ),
            View::new(
                "backlog, RTT, throughput (Fig. 12b–d), utilisation (Fig. 13), fairness",
                &[
                    "controller",
                    "wifi_mbit_s",
                    "sources",
                    "backlog",
                    "rtt_ms",
                    "throughput_mbit_s",
                    "utilisation",
                    "jain",
                ],
            ),
        ]
    }

    fn charts(&self, _o: &Options, _traces: &[Trace]) -> Vec<Chart> {
        let metrics = [
            (
                "est_age_ms",
                "average age per source, the source's estimate (ms)",
            ),
            ("backlog", "average backlog per source (updates)"),
            ("throughput_mbit_s", "throughput per source (Mbit/s)"),
            ("rtt_ms", "average RTT per source (ms)"),
            ("utilisation", "sum throughput ÷ WiFi rate"),
            ("jain", "Jain's fairness index of age"),
        ];
        CONTROLLERS
            .iter()
            .flat_map(|c| {
                let label = c.to_string();
                metrics.iter().map(move |&(field, text)| {
                    Chart::lines(
                        format!("orbit_{}_{field}", label.replace('+', "_plus")),
                        format!("{text}, {label} (ORBIT)"),
                        ("sources", "sources sharing the access"),
                        (field, text),
                        &["wifi_mbit_s"],
                    )
                    .only("controller", label.clone())
                })
            })
            .collect()
    }

    fn notes(&self, _o: &Options, rows: &[Row]) -> Vec<String> {
        let mut notes = Vec::new();
        for c in CONTROLLERS {
            let label = c.to_string();
            let mine: Vec<&Row> = rows.iter().filter(|r| r.controller == label).collect();
            let flat: Vec<String> = RATES_MBIT
                .iter()
                .map(|&rate| {
                    let last = mine
                        .iter()
                        .filter(|r| r.wifi_mbit_s == rate)
                        .take_while(|r| r.est_age_over_one <= 1.0 + FLAT)
                        .map(|r| r.sources)
                        .last();
                    format!(
                        "{} on {rate} Mbit/s",
                        last.map_or("-".into(), |n| n.to_string())
                    )
                })
                .collect();
            notes.push(format!(
                "{label}: estimated age within {:.0} % of one source's up to {} (paper, ACP+: {})",
                FLAT * 100.0,
                flat.join(", "),
                paper::FLAT_UP_TO
                    .iter()
                    .map(|(r, n)| format!("{n} on {r} Mbit/s"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
            let least = mine
                .iter()
                .filter(|r| r.sources >= 2)
                .map(|r| r.jain)
                .fold(f64::INFINITY, f64::min);
            if least.is_finite() {
                notes.push(format!(
                    "{label}: Jain's index of age ≥ {least:.3} from 2 sources on (paper, ACP+: {} to 1.0)",
                    paper::JAIN_MIN
                ));
            }
        }
        notes.push(
            "differences from the paper are explained in docs/SIMULATOR.md (\"ORBIT\")".into(),
        );
        notes
    }

    fn files(&self, _o: &Options) -> Vec<(String, String)> {
        vec![("scenarios/orbit.toml".into(), Self::example())]
    }
}
