//! The ACP+ paper's §XI-B (thesis §4.6): TCP clients against ACP+ sources sharing one WiFi
//! access point, then the Internet to a distant server.
//!
//! - low contention: 1 to 5 clients on a 12 Mbit/s access, CUBIC, Vegas and BBR against ACP+
//!   and Seek (paper Fig. 22, thesis Fig. 4.8);
//! - high contention: 10, 20, 40 and 80 clients on 6, 12 and 24 Mbit/s, BBR against ACP+ and Seek
//!   (paper Fig. 23, thesis Figs. 4.9–4.11; ACP+'s side is paper Fig. 12, thesis Fig. 3.18).
//!
//! The network is the access network of [`super::access`] (stations in a 20 × 20 m² area around
//! one 802.11g AP, then five point-to-point hops), with the backhaul of the paper's testbed: a
//! stop-and-wait round trip of ≈ 200 ms (the paper's "baseline RTT" of 200–210 ms; 20 ms of
//! propagation per hop each way) and 200 Mbit/s per hop (the paper's path carried TCP at up to
//! 200 Mbit/s without the WiFi), so the access is the bottleneck. TCP clients send in bulk as
//! iPerf3 does; ACP+ sources send the paper's 1024-byte updates.
//!
//! Each client's age is measured as the paper measures TCP's (§X): every segment is taken to
//! carry an update fresh when it is sent, its age on arrival is its RTT, and the ACKs' spacing
//! stands for the deliveries' ([`crate::report::FlowResult::est_age`]). For ACP+ the same
//! estimate is its source's own (`est_age_ms`); its age at the monitor (`age_ms`) is reported beside it. Every point
//! runs several seeds (a seed places the stations and drives every random element): means with
//! 95 % confidence intervals. `docs/SIMULATOR.md` compares the results with the papers'.

use acp_core::controller::ControllerKind;
use serde::Serialize;

use super::access::{access_scenario, seed_range, AccessNet, Client};
use super::fig15::NET as FIG15_NET;
use super::harness::{
    by_point, stat, Chart, Declaration, Done, Job, Options, Plan, Source, Trace, View,
};
use crate::report::{FlowResult, SimResult};
use crate::tcp::CcKind;

/// The network (the WiFi rate is set per point): the area and queue sizes of
/// [`FIG15_NET`] (20 × 20 m² is also the ORBIT grid's size); σ = 4 dB of shadowing, under which
/// every station reaches the AP at 24 Mbit/s (the testbed's nodes were all in range; with
/// Fig. 15's 12 dB some placements leave a station unable to); an AP that serves its stations
/// in turn, as Linux's per-station queues do (a FIFO starves most TCP clients of their ACKs,
/// `docs/SIMULATOR.md`); the backhaul of the paper's testbed; and the real-world experiments'
/// 1024-byte updates (ACP+ paper §VIII), not Fig. 15's inferred 560.
pub const NET: AccessNet = AccessNet {
    payload: 1024,
    hop_delay_ms: 20.0,
    p2p_mbit: 200.0,
    shadowing_db: 4.0,
    ap_per_station: true,
    ..FIG15_NET
};

/// The low-contention access rate (Mbit/s).
pub const LOW_RATE_MBIT: f64 = 12.0;
/// The low-contention numbers of clients.
pub const LOW_CLIENTS: [usize; 5] = [1, 2, 3, 4, 5];
/// What the low-contention clients run.
pub const LOW_KINDS: [Client; 5] = [
    Client::Tcp(CcKind::Cubic),
    Client::Tcp(CcKind::Vegas),
    Client::Tcp(CcKind::Bbr),
    Client::Acp(ControllerKind::AcpPlus),
    Client::Acp(ControllerKind::Seek),
];
/// The high-contention access rates (Mbit/s).
pub const HIGH_RATES_MBIT: [f64; 3] = [6.0, 12.0, 24.0];
/// The high-contention numbers of clients.
pub const HIGH_CLIENTS: [usize; 4] = [10, 20, 40, 80];
/// What the high-contention clients run.
pub const HIGH_KINDS: [Client; 3] = [
    Client::Tcp(CcKind::Bbr),
    Client::Acp(ControllerKind::AcpPlus),
    Client::Acp(ControllerKind::Seek),
];
/// The most clients of the low-contention configuration (the papers: "five or fewer").
pub const LOW_MAX: usize = 5;

/// The published numbers these results are compared with.
pub mod paper {
    /// Thesis §4.6.2: BBR's average age per client on the 24 Mbit/s access, (clients, ms).
    pub const BBR_AGE_24_MS: [(usize, f64); 2] = [(20, 321.5), (80, 3054.7)];
    /// Thesis §4.6.2: ACP+'s, likewise.
    pub const ACP_PLUS_AGE_24_MS: [(usize, f64); 2] = [(20, 215.5), (80, 249.65)];
    /// §XI-B-1: TCP's sum throughput with 1 to 5 clients on 12 Mbit/s, "about 8–9 Mbps".
    pub const TCP_SUM_MBIT: (f64, f64) = (8.0, 9.0);
    /// §VIII: one ACP+ source's throughput, "about 0.5 Mbps" (Mbit/s).
    pub const ACP_PLUS_ONE_SOURCE_MBIT: f64 = 0.5;
    /// §VIII: the baseline (stop-and-wait) RTT between sources and monitor (ms).
    pub const BASE_RTT_MS: (f64, f64) = (200.0, 210.0);
    /// Thesis Fig. 4.12: WiFi retries with many clients, % of transmissions: BBR's approach
    /// 50 %, ACP+'s level off at about 20 %.
    pub const RETRIES_PCT: [(&str, f64); 2] = [("bbr", 50.0), ("acp+", 20.0)];
}

/// Low or high contention: the part of the section a point belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Contention {
    /// 1–5 clients.
    Low,
    /// More.
    High,
}

/// Simulated seconds per run unless the caller says otherwise.
pub const DEFAULT_SECS: u64 = 300;

/// One point: what the clients run, how many, on which access rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    /// Its part of the section.
    pub contention: Contention,
    /// What every client runs.
    pub client: Client,
    /// The 802.11g rate (Mbit/s).
    pub wifi_mbit: f64,
    /// Clients sharing the access.
    pub clients: usize,
}

/// The section's points: the low-contention ones first (by client kind, then count), then the
/// high-contention ones (by kind, rate, count). `only` restricts the numbers of clients to
/// those it lists: up to [`LOW_MAX`] at low contention, the others at high contention.
pub fn points(only: Option<&[usize]>) -> Vec<Point> {
    let pick = |default: &[usize], low: bool| -> Vec<usize> {
        match only {
            None => default.to_vec(),
            Some(ns) => ns
                .iter()
                .copied()
                .filter(|&n| (n <= LOW_MAX) == low)
                .collect(),
        }
    };
    let mut points = Vec::new();
    let low = pick(&LOW_CLIENTS, true);
    for client in LOW_KINDS {
        for &clients in &low {
            points.push(Point {
                contention: Contention::Low,
                client,
                wifi_mbit: LOW_RATE_MBIT,
                clients,
            });
        }
    }
    let high = pick(&HIGH_CLIENTS, false);
    for client in HIGH_KINDS {
        for wifi_mbit in HIGH_RATES_MBIT {
            for &clients in &high {
                points.push(Point {
                    contention: Contention::High,
                    client,
                    wifi_mbit,
                    clients,
                });
            }
        }
    }
    points
}

/// The points `o` asks for: the numbers of clients of `--clients` (deduplicated, in order), or
/// all of the papers'.
fn chosen(o: &Options) -> Vec<Point> {
    let mut clients = o.clients.clone();
    clients.sort_unstable();
    clients.dedup();
    points((!clients.is_empty()).then_some(&clients[..]))
}

/// One run's measurements.
#[derive(Debug, Clone, Copy)]
pub struct Measure {
    est_age: f64,
    age: Option<f64>,
    rtt: f64,
    throughput: f64,
    retries: f64,
    starved: f64,
}

/// A run's per-client means over the clients that measured each (a client starved of ACKs
/// has no RTT, and no age estimate if it never had one), the sums, and the starved clients.
fn measure(r: &SimResult) -> Measure {
    let mean = |v: fn(&FlowResult) -> Option<f64>| {
        let xs: Vec<f64> = r.flows.iter().filter_map(v).collect();
        xs.iter().sum::<f64>() / xs.len() as f64
    };
    let carries_updates = r.flows.iter().any(|f| f.age.is_some());
    let (attempts, successes) = r
        .wifi
        .iter()
        .fold((0, 0), |(a, s), w| (a + w.attempts, s + w.successes));
    Measure {
        est_age: mean(|f| f.est_age),
        age: carries_updates.then(|| mean(|f| f.age)),
        rtt: mean(|f| f.mean_rtt),
        throughput: r.flows.iter().map(|f| f.throughput_bps).sum(),
        retries: 100.0 * attempts.saturating_sub(successes) as f64 / attempts.max(1) as f64,
        starved: r.flows.iter().filter(|f| f.mean_rtt.is_none()).count() as f64,
    }
}

/// One point over the seeds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// Its part of the section.
    pub contention: Contention,
    /// What the clients run (`cubic`, `vegas`, `bbr`, `acp+`, `seek`).
    pub client: String,
    /// The 802.11g rate (Mbit/s).
    pub wifi_mbit_s: f64,
    /// Clients sharing the access.
    pub clients: usize,
    /// Seeds run.
    pub seeds: usize,
    /// Per-client time-average age at the monitor (ms); ACP only (bulk TCP carries no
    /// updates).
    pub age_ms: Option<f64>,
    /// Its 95 % confidence half-width over the seeds.
    pub age_ms_ci95: Option<f64>,
    /// Per-client time-average age as the sender estimates it from its ACKs (ms), over the
    /// clients that had an estimate: the papers' measure for every client.
    pub est_age_ms: f64,
    /// Its 95 % confidence half-width over the seeds.
    pub est_age_ms_ci95: f64,
    /// The papers'.
    pub paper_est_age_ms: Option<f64>,
    /// Per-client mean RTT (ms), over the clients that had an ACK in the measurement window.
    pub rtt_ms: f64,
    /// Its 95 % confidence half-width.
    pub rtt_ms_ci95: f64,
    /// Clients without an ACK in the measurement window (starved).
    pub starved: f64,
    /// Its 95 % confidence half-width.
    pub starved_ci95: f64,
    /// Sum of the clients' throughputs (Mbit/s): TCP's bytes read by the receiving
    /// application, ACP's fresh updates as IP datagrams.
    pub sum_throughput_mbit_s: f64,
    /// Its 95 % confidence half-width.
    pub sum_throughput_mbit_s_ci95: f64,
    /// The papers'.
    pub paper_sum_throughput_mbit_s: Option<f64>,
    /// WiFi transmissions that failed (collided or were lost), % of all transmissions: the
    /// share of frames a sniffer sees with the retry flag.
    pub retries_pct: f64,
    /// Its 95 % confidence half-width.
    pub retries_pct_ci95: f64,
}

/// The papers' number for `field` at a point.
fn published(field: &str, p: &Point) -> Option<f64> {
    let at = |v: &[(usize, f64)]| v.iter().find(|x| x.0 == p.clients).map(|x| x.1);
    let client = p.client.to_string();
    match (field, p.contention, client.as_str()) {
        ("est_age_ms", Contention::High, "bbr") if p.wifi_mbit == 24.0 => at(&paper::BBR_AGE_24_MS),
        ("est_age_ms", Contention::High, "acp+") if p.wifi_mbit == 24.0 => {
            at(&paper::ACP_PLUS_AGE_24_MS)
        }
        ("sum_throughput_mbit_s", Contention::Low, "acp+") if p.clients == 1 => {
            Some(paper::ACP_PLUS_ONE_SOURCE_MBIT)
        }
        _ => None,
    }
}

/// The charted fields and their axis labels (the age at the monitor, ACP's only, and the
/// starved clients: table and CSV).
const CHARTED: [(&str, &str); 4] = [
    ("est_age_ms", "age per client, the sender's estimate (ms)"),
    ("rtt_ms", "RTT per client (ms)"),
    ("sum_throughput_mbit_s", "sum throughput (Mbit/s)"),
    ("retries_pct", "WiFi retries (%)"),
];

/// A file-name form of a client kind ("acp+" → "acp-plus").
fn file_name(client: &str) -> String {
    client.replace('+', "-plus")
}

/// The mean of `field` at one point, if it ran.
fn at<'a>(rows: &'a [Row], part: Contention, client: &str, wifi: f64, n: usize) -> Option<&'a Row> {
    rows.iter().find(|r| {
        r.contention == part && r.client == client && r.wifi_mbit_s == wifi && r.clients == n
    })
}

/// The reproduction.
pub struct ContentionTcp;

impl Declaration for ContentionTcp {
    type Measure = Measure;
    type Row = Row;

    fn name(&self) -> &'static str {
        "contention-tcp"
    }

    fn about(&self) -> &'static str {
        "TCP (CUBIC, Vegas, BBR) against ACP+ and Seek with 1–5 and 10–80 clients sharing one WiFi access, then a 200 ms Internet path (§XI-B, thesis §4.6)"
    }

    fn plan(&self, o: &Options) -> Plan {
        let points = chosen(o);
        let secs = o.secs.unwrap_or(DEFAULT_SECS);
        let mut jobs: Vec<Job> = Vec::new();
        for (k, pt) in points.iter().enumerate() {
            for seed in o.seed_list(self.default_seeds()) {
                let net = AccessNet {
                    wifi_mbit: pt.wifi_mbit,
                    whole_medium: o.whole_medium,
                    ..NET
                };
                jobs.push(Job::sim(
                    k,
                    access_scenario(&net, pt.clients, pt.client, secs, seed),
                ));
            }
        }
        // The largest runs first, so that no thread is left with one at the end.
        jobs.sort_by_key(|j| std::cmp::Reverse(points[j.point].clients));
        Plan { jobs }
    }

    fn measure(&self, _job: &Job, done: Done<'_>) -> Measure {
        match done {
            Done::Sim(r) => measure(r),
            _ => unreachable!("contention-tcp runs in the simulator only"),
        }
    }

    fn rows(&self, o: &Options, plan: &Plan, done: &[Option<Measure>]) -> Vec<Row> {
        let points = chosen(o);
        by_point(plan, done, points.len())
            .into_iter()
            .zip(&points)
            .filter(|(runs, _)| !runs.is_empty())
            .map(|(runs, pt)| {
                let (est_age, est_age_ci) = stat(&runs, |m| m.est_age);
                let age = runs
                    .iter()
                    .map(|m| m.age)
                    .collect::<Option<Vec<f64>>>()
                    .map(|xs| crate::sweep::mean_ci95(&xs));
                let (rtt, rtt_ci) = stat(&runs, |m| m.rtt);
                let (starved, starved_ci) = stat(&runs, |m| m.starved);
                let (bps, bps_ci) = stat(&runs, |m| m.throughput);
                let (retries, retries_ci) = stat(&runs, |m| m.retries);
                Row {
                    contention: pt.contention,
                    client: pt.client.to_string(),
                    wifi_mbit_s: pt.wifi_mbit,
                    clients: pt.clients,
                    seeds: runs.len(),
                    age_ms: age.map(|t| t.0 * 1e3),
                    age_ms_ci95: age.map(|t| t.1 * 1e3),
                    est_age_ms: est_age * 1e3,
                    est_age_ms_ci95: est_age_ci * 1e3,
                    paper_est_age_ms: published("est_age_ms", pt),
                    rtt_ms: rtt * 1e3,
                    rtt_ms_ci95: rtt_ci * 1e3,
                    starved,
                    starved_ci95: starved_ci,
                    sum_throughput_mbit_s: bps / 1e6,
                    sum_throughput_mbit_s_ci95: bps_ci / 1e6,
                    paper_sum_throughput_mbit_s: published("sum_throughput_mbit_s", pt),
                    retries_pct: retries,
                    retries_pct_ci95: retries_ci,
                }
            })
            .collect()
    }

    fn setup(&self, o: &Options) -> String {
        format!(
            "§XI-B (thesis §4.6): TCP clients against ACP+ and Seek sources behind one 802.11g AP \
             ({0} × {0} m², σ = {1} dB; {10}), then five {2} Mbit/s hops of {3} ms each way (base RTT ≈ \
             {4} ms); bulk TCP as iPerf3, {5}-byte updates; low contention {6} Mbit/s, high \
             contention BBR, ACP+ and Seek on 6, 12 and 24 Mbit/s; {7} s per run ({8} s warm-up), \
             seeds {9}; mean ± 95 % CI over the seeds",
            NET.side_m,
            NET.shadowing_db,
            NET.p2p_mbit,
            NET.hop_delay_ms,
            // Five hops, there and back.
            2.0 * 5.0 * NET.hop_delay_ms,
            NET.payload,
            LOW_RATE_MBIT,
            o.secs.unwrap_or(DEFAULT_SECS),
            o.secs.unwrap_or(DEFAULT_SECS) / 10,
            seed_range(&o.seed_list(self.default_seeds())),
            AccessNet {
                whole_medium: o.whole_medium,
                ..NET
            }
            .reception()
        )
    }

    fn sources(&self) -> Vec<Source> {
        vec![
            Source {
                column: "paper_est_age_ms",
                locator: "thesis §4.6.2 (24 Mbit/s access: BBR 321.5 → 3054.7 ms, ACP+ 215.5 → 249.65 ms from 20 to 80 clients)",
            },
            Source {
                column: "paper_sum_throughput_mbit_s",
                locator: "ACP+ paper §VIII (one ACP+ source ≈ 0.5 Mbit/s)",
            },
        ]
    }

    fn views(&self) -> Vec<View> {
        let keys = "contention client wifi_mbit_s clients";
        let view = |title: &str, more: &str| {
            let columns: Vec<&str> = keys.split(' ').chain(more.split(' ')).collect();
            View::new(title, &columns)
        };
        vec![
            view("age and RTT per client", "est_age_ms age_ms rtt_ms"),
            view(
                "sum throughput, WiFi retries, clients starved of ACKs (left out of age and RTT)",
                "sum_throughput_mbit_s retries_pct starved",
            ),
        ]
    }

    fn charts(&self, _o: &Options, _traces: &[Trace]) -> Vec<Chart> {
        let mut charts = Vec::new();
        for (field, axis) in CHARTED {
            charts.push(
                Chart::lines(
                    format!("low_{field}"),
                    format!("{axis} (low contention, {LOW_RATE_MBIT} Mbit/s access)"),
                    ("clients", "clients sharing the access point"),
                    (field, axis),
                    &["client"],
                )
                .only("contention", "low"),
            );
        }
        // High contention: a chart per kind, a curve per access rate (the thesis's
        // Figs. 4.9–4.11 have BBR and ACP+ on separate scales).
        for kind in HIGH_KINDS {
            let kind = kind.to_string();
            for (field, axis) in CHARTED {
                charts.push(
                    Chart::lines(
                        format!("high_{}_{field}", file_name(&kind)),
                        format!("{axis} (high contention, {kind})"),
                        ("clients", "clients sharing the access point"),
                        (field, axis),
                        &["client", "wifi_mbit_s"],
                    )
                    .only("contention", "high")
                    .only("client", kind.as_str()),
                );
            }
        }
        charts
    }

    fn notes(&self, _o: &Options, rows: &[Row]) -> Vec<String> {
        let mut notes = vec!["the papers' claims beside ours:".to_string()];
        let low = LOW_RATE_MBIT;
        let counts = |part: Contention| {
            let mut n: Vec<usize> = rows
                .iter()
                .filter(|r| r.contention == part)
                .map(|r| r.clients)
                .collect();
            n.sort_unstable();
            n.dedup();
            n
        };
        let low_counts = counts(Contention::Low);
        let tcps = ["cubic", "vegas", "bbr"];
        if !low_counts.is_empty() {
            let lowest = low_counts
                .iter()
                .filter(|&&n| {
                    let acp = at(rows, Contention::Low, "acp+", low, n).map(|r| r.est_age_ms);
                    let best_tcp = tcps
                        .iter()
                        .filter_map(|c| at(rows, Contention::Low, c, low, n))
                        .map(|r| r.est_age_ms)
                        .fold(f64::INFINITY, f64::min);
                    acp.is_some_and(|a| a < best_tcp)
                })
                .count();
            notes.push(format!(
                "  low contention, ACP+ the lowest age: paper at every count (1–5); ours at {lowest} of {} counts",
                low_counts.len()
            ));
            let sums: Vec<f64> = tcps
                .iter()
                .flat_map(|c| {
                    low_counts
                        .iter()
                        .filter_map(move |&n| at(rows, Contention::Low, c, low, n))
                })
                .map(|r| r.sum_throughput_mbit_s)
                .collect();
            if !sums.is_empty() {
                let (lo, hi) = paper::TCP_SUM_MBIT;
                notes.push(format!(
                    "  low contention, TCP's sum throughput: paper (§XI-B-1) about {lo}–{hi} Mbit/s; ours {:.2}–{:.2} Mbit/s",
                    sums.iter().copied().fold(f64::INFINITY, f64::min),
                    sums.iter().copied().fold(0.0, f64::max)
                ));
            }
            if let Some(r) = at(rows, Contention::Low, "acp+", low, 1) {
                let (lo, hi) = paper::BASE_RTT_MS;
                notes.push(format!(
                    "  one ACP+ source's RTT: paper's base RTT (§VIII) {lo}–{hi} ms; ours {:.1} ms",
                    r.rtt_ms
                ));
            }
        }
        if rows.iter().any(|r| r.contention == Contention::High) {
            for (client, published) in [
                ("bbr", paper::BBR_AGE_24_MS),
                ("acp+", paper::ACP_PLUS_AGE_24_MS),
            ] {
                let [(n1, p1), (n2, p2)] = published;
                let ours = |n| {
                    at(rows, Contention::High, client, 24.0, n)
                        .map_or_else(|| "not run".to_string(), |r| format!("{:.1}", r.est_age_ms))
                };
                notes.push(format!(
                    "  24 Mbit/s, {client} age from {n1} to {n2} clients: paper {p1} → {p2} ms; ours {} → {} ms",
                    ours(n1),
                    ours(n2)
                ));
            }
        }
        if let Some(&most) = counts(Contention::High).last() {
            let cells: Vec<String> = paper::RETRIES_PCT
                .iter()
                .map(|(client, p)| {
                    let ours: Vec<String> = HIGH_RATES_MBIT
                        .iter()
                        .map(|&w| {
                            at(rows, Contention::High, client, w, most).map_or_else(
                                || "not run".to_string(),
                                |r| format!("{:.0}", r.retries_pct),
                            )
                        })
                        .collect();
                    format!("{client} paper ≈ {p} %, ours {} %", ours.join("/"))
                })
                .collect();
            notes.push(format!(
                "  WiFi retries with {most} clients (thesis Fig. 4.12; ours at 6/12/24 Mbit/s): {}",
                cells.join("; ")
            ));
        }
        notes.push("differences from the papers are explained in docs/SIMULATOR.md (\"TCP against ACP+ over a shared WiFi access\")".into());
        notes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_section_has_its_points() {
        let all = points(None);
        // 5 kinds × 5 counts at low contention, 3 kinds × 3 rates × 4 counts at high.
        assert_eq!(all.len(), 25 + 36);
        assert!(all[..25]
            .iter()
            .all(|p| p.contention == Contention::Low && p.wifi_mbit == 12.0));
        assert_eq!(all[25].client, Client::Tcp(CcKind::Bbr));
        assert_eq!((all[25].wifi_mbit, all[25].clients), (6.0, 10));
        let some = points(Some(&[2, 20]));
        assert_eq!(some.len(), 5 + 9);
        assert!(some
            .iter()
            .all(|p| (p.clients == 2) == (p.contention == Contention::Low)));
    }

    #[test]
    fn the_backhaul_makes_the_base_rtt_of_the_testbed() {
        // One ACP+ source alone: its RTT is the propagation (5 hops × 20 ms × 2) plus a few
        // milliseconds of transmission and WiFi access, inside the paper's 200–210 ms.
        let net = AccessNet {
            wifi_mbit: LOW_RATE_MBIT,
            ..NET
        };
        let r = access_scenario(&net, 1, ControllerKind::AcpPlus, 60, 1)
            .build()
            .unwrap()
            .run();
        let rtt = r.flows[0].mean_rtt.unwrap() * 1e3;
        let (lo, hi) = paper::BASE_RTT_MS;
        assert!(rtt > lo && rtt < hi, "{rtt} ms");
    }
}
