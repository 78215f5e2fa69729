//! The ACP+ paper's §XI-B (thesis §4.6): TCP clients against ACP+ sources sharing one WiFi
//! access point, then the Internet to a distant server.
//!
//! - low contention: 1 to 5 clients on a 12 Mbit/s access, CUBIC, Vegas and BBR against ACP+
//!   (paper Fig. 22, thesis Fig. 4.8);
//! - high contention: 10, 20, 40 and 80 clients on 6, 12 and 24 Mbit/s, BBR against ACP+
//!   (paper Fig. 23, thesis Figs. 4.9–4.11; ACP+'s side is paper Fig. 12, thesis Fig. 3.18).
//!
//! The network is the access network of [`super::wifi`] (stations in a 20 × 20 m² area around
//! one 802.11g AP, then five point-to-point hops), with the backhaul of the paper's testbed: a
//! stop-and-wait round trip of ≈ 200 ms (the paper's "baseline RTT" of 200–210 ms; 20 ms of
//! propagation per hop each way) and 200 Mbit/s per hop (the paper's path carried TCP at up to
//! 200 Mbit/s without the WiFi), so the access is the bottleneck. TCP clients send in bulk as
//! iPerf3 does; ACP+ sources send the paper's 1024-byte updates.
//!
//! Each client's age is measured as the paper measures TCP's (§X): every segment is taken to
//! carry an update fresh when it is sent, its age on arrival is its RTT, and the ACKs' spacing
//! stands for the deliveries' ([`crate::report::FlowResult::est_age`]). For ACP+ the same
//! estimate is its source's own; its true age at the monitor is reported beside it. Every point
//! runs several seeds (a seed places the stations and drives every random element): means with
//! 95 % confidence intervals. `docs/SIMULATOR.md` compares the results with the papers'.

use acp_core::controller::ControllerKind;
use serde::{Serialize, Serializer};

use super::wifi::{access_scenario, AccessNet, Client, Stat, FIG15_NET};
use crate::report::{FlowResult, SimResult};
use crate::sweep::{parallel, Cancel};
use crate::tcp::CcKind;

/// The network (the WiFi rate is set per point): the area, queue sizes and payload of
/// [`FIG15_NET`] (20 × 20 m² is also the ORBIT grid's size); σ = 4 dB of shadowing, under which
/// every station reaches the AP at 24 Mbit/s (the testbed's nodes were all in range; with
/// Fig. 15's 12 dB some placements leave a station unable to); an AP that serves its stations
/// in turn, as Linux's per-station queues do (a FIFO starves most TCP clients of their ACKs,
/// `docs/SIMULATOR.md`); and the backhaul of the paper's testbed.
pub const NET: AccessNet = AccessNet {
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
pub const LOW_KINDS: [Client; 4] = [
    Client::Tcp(CcKind::Cubic),
    Client::Tcp(CcKind::Vegas),
    Client::Tcp(CcKind::Bbr),
    Client::Acp(ControllerKind::AcpPlus),
];
/// The high-contention access rates (Mbit/s).
pub const HIGH_RATES_MBIT: [f64; 3] = [6.0, 12.0, 24.0];
/// The high-contention numbers of clients.
pub const HIGH_CLIENTS: [usize; 4] = [10, 20, 40, 80];
/// What the high-contention clients run.
pub const HIGH_KINDS: [Client; 2] = [
    Client::Tcp(CcKind::Bbr),
    Client::Acp(ControllerKind::AcpPlus),
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

/// One run's measurements.
#[derive(Debug, Clone, Copy)]
struct Measure {
    age: f64,
    true_age: Option<f64>,
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
        age: mean(|f| f.est_age),
        true_age: carries_updates.then(|| mean(|f| f.age)),
        rtt: mean(|f| f.mean_rtt),
        throughput: r.flows.iter().map(|f| f.throughput_bps).sum(),
        retries: 100.0 * attempts.saturating_sub(successes) as f64 / attempts.max(1) as f64,
        starved: r.flows.iter().filter(|f| f.mean_rtt.is_none()).count() as f64,
    }
}

/// One point over the seeds.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// Its part of the section.
    pub contention: Contention,
    /// What the clients run (`cubic`, `vegas`, `bbr`, `acp+`).
    pub client: String,
    /// The 802.11g rate (Mbit/s).
    pub wifi_mbit: f64,
    /// Clients sharing the access.
    pub clients: usize,
    /// Seeds run.
    pub seeds: usize,
    /// Per-client time-average age as the sender estimates it from its ACKs (s), over the
    /// clients that had an estimate.
    #[serde(rename = "age_ms", serialize_with = "Stat::ms")]
    pub age: Stat,
    /// Per-client true time-average age at the monitor (s); ACP+ only (bulk TCP carries no
    /// updates).
    #[serde(rename = "true_age_ms", serialize_with = "opt_ms")]
    pub true_age: Option<Stat>,
    /// Per-client mean RTT (s), over the clients that had an ACK in the measurement window.
    #[serde(rename = "rtt_ms", serialize_with = "Stat::ms")]
    pub rtt: Stat,
    /// Clients without an ACK in the measurement window (starved).
    pub starved: Stat,
    /// Sum of the clients' throughputs (bit/s): TCP's bytes read by the receiving
    /// application, ACP+'s fresh updates as IP datagrams.
    #[serde(rename = "sum_throughput_kbps", serialize_with = "Stat::kbps")]
    pub throughput: Stat,
    /// WiFi transmissions that failed (collided or were lost), % of all transmissions: the
    /// share of frames a sniffer sees with the retry flag.
    #[serde(rename = "retries_pct")]
    pub retries: Stat,
}

fn opt_ms<S: Serializer>(s: &Option<Stat>, ser: S) -> Result<S::Ok, S::Error> {
    match s {
        Some(s) => Stat::ms(s, ser),
        None => ser.serialize_none(),
    }
}

/// Runs every point of `points` with every seed, `secs` each, on `threads` threads;
/// `progress(done, total)` after each run. Rows come in the order of `points`; once `cancel`
/// stops the runs, a row covers the seeds that ran (its `seeds`), and a point none of whose
/// seeds ran has no row.
pub fn run(
    points: &[Point],
    secs: u64,
    seeds: &[u64],
    threads: usize,
    cancel: &Cancel,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Vec<Row> {
    let mut jobs: Vec<(usize, u64)> = (0..points.len())
        .flat_map(|p| seeds.iter().map(move |&s| (p, s)))
        .collect();
    // The largest runs first, so that no thread is left with one at the end.
    jobs.sort_by_key(|&(p, _)| std::cmp::Reverse(points[p].clients));
    let done = std::sync::atomic::AtomicUsize::new(0);
    let total = jobs.len();
    let runs = parallel(jobs.clone(), threads, cancel, |(p, seed)| {
        let pt = &points[p];
        let net = AccessNet {
            wifi_mbit: pt.wifi_mbit,
            ..NET
        };
        let r = access_scenario(&net, pt.clients, pt.client, secs, seed)
            .build()
            .map(|s| s.run());
        progress(
            done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1,
            total,
        );
        r.ok().map(|r| measure(&r))
    });
    let mut rows = Vec::new();
    for (p, pt) in points.iter().enumerate() {
        let point: Vec<Measure> = jobs
            .iter()
            .zip(&runs)
            .filter(|((jp, _), _)| *jp == p)
            .filter_map(|(_, r)| r.flatten())
            .collect();
        if point.is_empty() {
            continue;
        }
        let of = |m: fn(&Measure) -> f64| Stat::of(&point.iter().map(m).collect::<Vec<_>>());
        rows.push(Row {
            contention: pt.contention,
            client: pt.client.to_string(),
            wifi_mbit: pt.wifi_mbit,
            clients: pt.clients,
            seeds: point.len(),
            age: of(|m| m.age),
            true_age: point
                .iter()
                .map(|m| m.true_age)
                .collect::<Option<Vec<f64>>>()
                .map(|xs| Stat::of(&xs)),
            rtt: of(|m| m.rtt),
            throughput: of(|m| m.throughput),
            retries: of(|m| m.retries),
            starved: of(|m| m.starved),
        });
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_section_has_its_points() {
        let all = points(None);
        // 4 kinds × 5 counts at low contention, 2 kinds × 3 rates × 4 counts at high.
        assert_eq!(all.len(), 20 + 24);
        assert!(all[..20]
            .iter()
            .all(|p| p.contention == Contention::Low && p.wifi_mbit == 12.0));
        assert_eq!(all[20].client, Client::Tcp(CcKind::Bbr));
        assert_eq!((all[20].wifi_mbit, all[20].clients), (6.0, 10));
        let some = points(Some(&[2, 20]));
        assert_eq!(some.len(), 4 + 6);
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
