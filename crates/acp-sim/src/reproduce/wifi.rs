//! The multi-source results: sources behind one 802.11g access point, then five point-to-point
//! hops to the monitor (the network of the ACP+ paper's Fig. 14, the thesis's Fig. 3.12).
//!
//! - [`FIG15`]: ACP+ against Lazy with 1, 6, 12, 24 and 48 sources (paper Fig. 15, thesis
//!   Figs. 3.20–3.21);
//! - [`FIG3_16`]: ACP (κ = 0.25) against Lazy with 1 to 20 sources (thesis Fig. 3.16);
//! - [`fig3_15`]: one ACP source while UDP flows switch on and off (thesis Fig. 3.15).
//!
//! Every point runs several seeds. A seed places the stations, draws their shadowing and drives
//! every other random element, so the spread over seeds is the spread over placements; results
//! are means with 95 % confidence intervals (Student's t).
//!
//! What the papers leave unstated is chosen as ns-3 (their simulator) does by default: no
//! propagation delay on the point-to-point links, 100-packet drop-tail queues there, 500-frame
//! WiFi queues, 16.02 dBm transmit power, the retry limit of 7. Updates carry the papers' 1024
//! bytes of payload. `docs/SIMULATOR.md` compares the results with the papers' and explains the
//! differences.

use std::fmt;

use acp_core::controller::ControllerKind;
use serde::Serialize;

use crate::report::SimResult;
use crate::scenario::Scenario;
use crate::sweep::{self, mean_ci95, parallel, Cancel, SweepPoint};
use crate::tcp::CcKind;

/// Nodes after the stations, in path order: the access point, the ISP routers, the second
/// access point and the monitor (five point-to-point links between them).
const BACKHAUL: [&str; 6] = ["ap1", "isp1", "core", "isp2", "ap2", "monitor"];

/// Bytes an update adds to its payload on a link: the ACP header (44) and IPv4/UDP (28).
const UPDATE_OVERHEAD: u32 = 72;

/// The access network: a square area of stations around one 802.11g AP, then five equal
/// point-to-point links.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AccessNet {
    /// Propagation delay of each point-to-point link, each way (ms).
    pub hop_delay_ms: f64,
    /// Side of the square area (m); the AP is at its centre.
    pub side_m: f64,
    /// σ of the log-normal shadowing (dB).
    pub shadowing_db: f64,
    /// The WiFi PHY rate (Mbit/s, an 802.11g OFDM rate).
    pub wifi_mbit: f64,
    /// Rate of each point-to-point link (Mbit/s).
    pub p2p_mbit: f64,
    /// Update payload (bytes).
    pub payload: u32,
    /// The AP serves its stations in turn (`ap_queue = "per-station"`) instead of one FIFO.
    pub ap_per_station: bool,
}

/// Fig. 15: 20 × 20 m², σ = 12 dB, WiFi at 12 Mbit/s, 6 Mbit/s links, 1024-byte updates.
pub const FIG15_NET: AccessNet = AccessNet {
    hop_delay_ms: 0.0,
    side_m: 20.0,
    shadowing_db: 12.0,
    wifi_mbit: 12.0,
    p2p_mbit: 6.0,
    payload: 1024,
    ap_per_station: false,
};

/// Fig. 3.16: 100 m² (10 × 10 m), σ = 4 dB, otherwise as Fig. 15.
pub const FIG3_16_NET: AccessNet = AccessNet {
    side_m: 10.0,
    shadowing_db: 4.0,
    ..FIG15_NET
};

/// The numbers of sources of Fig. 15.
pub const FIG15_SOURCES: [usize; 5] = [1, 6, 12, 24, 48];

/// The numbers of sources of Fig. 3.16 (the thesis plots 1 to 20).
pub const FIG3_16_SOURCES: [usize; 12] = [1, 2, 3, 4, 5, 6, 8, 10, 12, 14, 17, 20];

/// The published numbers these reproductions are compared with.
pub mod paper {
    /// Fig. 15b / thesis Fig. 3.20b: ACP+'s backlog per source at 1, 6, 12, 24, 48 sources
    /// (Lazy's is ≈ 1 throughout).
    pub const FIG15_ACP_PLUS_BACKLOG: [f64; 5] = [3.23, 1.39, 0.91, 0.57, 0.34];
    /// Thesis Fig. 3.20c: ACP+'s average RTT (ms).
    pub const FIG15_ACP_PLUS_RTT_MS: [f64; 5] = [5.5, 7.1, 7.9, 9.0, 10.4];
    /// Thesis Fig. 3.20c: Lazy's average RTT (ms).
    pub const FIG15_LAZY_RTT_MS: [f64; 5] = [5.5, 6.3, 11.8, 26.3, 61.1];
    /// Thesis Fig. 3.21: one ACP+ source's throughput (Mbit/s).
    pub const FIG15_ONE_SOURCE_MBIT: f64 = 2.25;
    /// Thesis §3.13: one ACP+ source's age and the empirically best age (ms).
    pub const FIG15_ONE_SOURCE_AGE_MS: (f64, f64) = (6.3, 5.69);
    /// §IX: Jain's fairness of age at 6 and at 48 sources.
    pub const FIG15_JAIN: [(usize, f64); 2] = [(6, 0.99), (48, 0.89)];
    /// Thesis §3.10: ACP's update rate with 1 and with 20 sources (updates/s).
    pub const FIG3_16_ACP_RATE: [(usize, f64); 2] = [(1, 800.0), (20, 70.0)];
    /// Thesis §3.10: ACP's age below Lazy's with 1 and with 2 sources (fraction); from about 5
    /// sources on Lazy is as good as ACP.
    pub const FIG3_16_ACP_GAIN: [(usize, f64); 2] = [(1, 0.21), (2, 0.13)];
    /// Thesis §3.10: "RTT of the simulated network under light load … about 5 msec".
    pub const FIG3_16_LIGHT_RTT_MS: f64 = 5.0;
}

/// What each station of the access network runs: one flow to the monitor.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Client {
    /// An ACP source with this controller, updates of the network's payload.
    Acp(ControllerKind),
    /// A bulk TCP transfer (as iPerf3 sends) with this congestion control and the model's
    /// Linux defaults otherwise.
    Tcp(CcKind),
}

impl From<ControllerKind> for Client {
    fn from(c: ControllerKind) -> Self {
        Client::Acp(c)
    }
}

impl fmt::Display for Client {
    /// The controller's or congestion control's label (`acp+`, `bbr`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Client::Acp(c) => c.fmt(f),
            Client::Tcp(cc) => cc.fmt(f),
        }
    }
}

impl Client {
    /// The fields of its `[[flow]]` after the common ones.
    fn flow_fields(&self, payload: u32) -> String {
        match self {
            Client::Acp(c) => {
                format!("type = \"acp\"\ncontroller = \"{c}\"\npayload = {payload}\n")
            }
            Client::Tcp(cc) => format!("type = \"tcp\"\ncc = \"{cc}\"\n"),
        }
    }
}

/// `sources` stations of `net` each running one flow of `client` to the monitor for `secs`
/// seconds (the first tenth not measured).
pub fn access_scenario(
    net: &AccessNet,
    sources: usize,
    client: impl Into<Client>,
    secs: u64,
    seed: u64,
) -> Scenario {
    let mut text = format!(
        "format = 2\nname = \"{sources} sources behind 802.11g\"\nseed = {seed}\n\
         duration = \"{secs}s\"\nwarmup = \"{}s\"\n\
         [[wifi]]\nap = \"ap1\"\nstations = \"source\"\ncount = {sources}\nstandard = \"g\"\n\
         rate = \"{}mbit\"\narea = [{:?}, {:?}]\nshadowing = {:?}\nexponent = 3.0\nqueue = 500\n\
         ap_queue = \"{}\"\n",
        secs / 10,
        net.wifi_mbit,
        net.side_m,
        net.side_m,
        net.shadowing_db,
        if net.ap_per_station {
            "per-station"
        } else {
            "fifo"
        }
    );
    for pair in BACKHAUL.windows(2) {
        text += &format!(
            "[[link]]\nfrom = \"{}\"\nto = \"{}\"\nrate = \"{}mbit\"\ndelay = \"{}ms\"\nqueue = 100\n",
            pair[0], pair[1], net.p2p_mbit, net.hop_delay_ms
        );
    }
    let mut path = vec!["source"];
    path.extend(BACKHAUL);
    text += &format!(
        "[[flow]]\nname = \"source\"\ncount = {sources}\npath = {path:?}\n{}",
        client.into().flow_fields(net.payload)
    );
    match Scenario::parse(&text) {
        Ok(s) => s,
        Err(e) => unreachable!("the access network's scenario is well formed: {e}"),
    }
}

/// A mean over seeds with its 95 % confidence half-width.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Stat {
    /// The mean.
    pub mean: f64,
    /// Half-width of its 95 % confidence interval (0 with one seed).
    pub ci95: f64,
}

impl Stat {
    /// The mean of `xs` and its 95 % confidence half-width.
    pub fn of(xs: &[f64]) -> Stat {
        let (mean, ci95) = mean_ci95(xs);
        Stat { mean, ci95 }
    }

    /// A statistic of seconds in milliseconds, for JSON.
    pub(crate) fn ms<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        Stat {
            mean: self.mean * 1e3,
            ci95: self.ci95 * 1e3,
        }
        .serialize(ser)
    }

    /// A statistic of bit/s in kbit/s, for JSON.
    pub(crate) fn kbps<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        Stat {
            mean: self.mean / 1e3,
            ci95: self.ci95 / 1e3,
        }
        .serialize(ser)
    }
}

/// Jain's fairness index of `xs`: (Σx)² / (n·Σx²), 1 when all are equal.
pub fn jain(xs: &[f64]) -> f64 {
    let sum: f64 = xs.iter().sum();
    let squares: f64 = xs.iter().map(|x| x * x).sum();
    if xs.is_empty() || squares == 0.0 {
        return f64::NAN;
    }
    sum * sum / (xs.len() as f64 * squares)
}

/// One run's per-source averages.
#[derive(Debug, Clone, Copy)]
struct PerSource {
    age: f64,
    backlog: f64,
    rtt: f64,
    rate: f64,
    throughput: f64,
    jain: f64,
}

fn per_source(r: &SimResult) -> PerSource {
    let acp: Vec<_> = r.flows.iter().filter(|f| f.kind == "acp").collect();
    let mean = |v: &dyn Fn(&crate::report::FlowResult) -> Option<f64>| {
        let xs: Vec<f64> = acp.iter().filter_map(|f| v(f)).collect();
        xs.iter().sum::<f64>() / xs.len().max(1) as f64
    };
    let ages: Vec<f64> = acp.iter().map(|f| f.age.unwrap_or(f64::INFINITY)).collect();
    PerSource {
        age: ages.iter().sum::<f64>() / ages.len().max(1) as f64,
        backlog: mean(&|f| f.source_backlog),
        rtt: mean(&|f| f.mean_rtt),
        rate: mean(&|f| Some(f.send_rate)),
        throughput: mean(&|f| Some(f.throughput_bps)),
        jain: jain(&ages),
    }
}

/// One controller at one number of sources, over the seeds.
#[derive(Debug, Clone, Serialize)]
pub struct SourcesRow {
    /// The controller's label.
    pub controller: String,
    /// Sources sharing the AP.
    pub sources: usize,
    /// Seeds run.
    pub seeds: usize,
    /// Per-source time-average age at the monitor (s).
    #[serde(rename = "age_ms", serialize_with = "Stat::ms")]
    pub age: Stat,
    /// Per-source time-average backlog (updates sent and not yet acknowledged).
    pub backlog: Stat,
    /// Per-source mean RTT of the ACKs (s).
    #[serde(rename = "rtt_ms", serialize_with = "Stat::ms")]
    pub rtt: Stat,
    /// Per-source update rate λ (updates/s).
    #[serde(rename = "rate_hz")]
    pub rate: Stat,
    /// Per-source throughput of fresh updates (bit/s, IP datagrams).
    #[serde(rename = "throughput_kbps", serialize_with = "Stat::kbps")]
    pub throughput: Stat,
    /// Jain's fairness index of the sources' ages.
    pub jain: Stat,
}

/// Runs every controller with every number of sources of `net` and every seed, `secs` each, on
/// `threads` threads; `progress(done, total)` after each run. Rows come by controller, then by
/// number of sources. Once `cancel` stops the runs, a row covers the seeds that ran (its
/// `seeds`), and a row none of whose seeds ran is left out.
#[allow(clippy::too_many_arguments)]
pub fn versus_sources(
    net: &AccessNet,
    counts: &[usize],
    controllers: &[ControllerKind],
    secs: u64,
    seeds: &[u64],
    threads: usize,
    cancel: &Cancel,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Vec<SourcesRow> {
    let mut jobs: Vec<(ControllerKind, usize, u64)> = controllers
        .iter()
        .flat_map(|&c| {
            counts
                .iter()
                .flat_map(move |&n| seeds.iter().map(move |&s| (c, n, s)))
        })
        .collect();
    // The largest runs first, so that no thread is left with one at the end.
    jobs.sort_by_key(|&(_, n, _)| std::cmp::Reverse(n));
    let done = std::sync::atomic::AtomicUsize::new(0);
    let total = jobs.len();
    let runs = parallel(jobs.clone(), threads, cancel, |(c, n, seed)| {
        let r = access_scenario(net, n, c, secs, seed)
            .build()
            .map(|s| s.run());
        progress(
            done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1,
            total,
        );
        r.ok().map(|r| per_source(&r))
    });
    let mut rows = Vec::new();
    for &c in controllers {
        for &n in counts {
            // This point's runs (one per seed that built), then each metric over them.
            let point: Vec<PerSource> = jobs
                .iter()
                .zip(&runs)
                .filter(|((jc, jn, _), _)| *jc == c && *jn == n)
                .filter_map(|(_, r)| r.flatten())
                .collect();
            if point.is_empty() && cancel.is_cancelled() {
                continue;
            }
            let of = |m: fn(&PerSource) -> f64| Stat::of(&point.iter().map(m).collect::<Vec<_>>());
            rows.push(SourcesRow {
                controller: c.to_string(),
                sources: n,
                seeds: point.len(),
                age: of(|p| p.age),
                backlog: of(|p| p.backlog),
                rtt: of(|p| p.rtt),
                rate: of(|p| p.rate),
                throughput: of(|p| p.throughput),
                jain: of(|p| p.jain),
            });
        }
    }
    rows
}

/// The best fixed rate for one source of `net` (the oracle the paper's 5.69 ms is), each rate
/// run with every one of `seeds`; `None` if `cancel` cut it short ([`sweep::oracle`]).
pub fn one_source_oracle(
    net: &AccessNet,
    secs: u64,
    seeds: &[u64],
    threads: usize,
    cancel: &Cancel,
) -> Option<SweepPoint> {
    // The sweep sets each run's seed; the base scenario's own is never used.
    let base = access_scenario(net, 1, ControllerKind::Fixed(1.0), secs, 1);
    let cap = net.p2p_mbit * 1e6 / (8.0 * f64::from(net.payload + UPDATE_OVERHEAD));
    sweep::oracle(&base, cap, seeds, threads, cancel)
}

/// A figure against the number of sources: its network, its counts and the two controllers it
/// compares.
#[derive(Debug, Clone, Copy)]
pub struct SourcesFigure {
    /// The network.
    pub net: AccessNet,
    /// The numbers of sources.
    pub counts: &'static [usize],
    /// The controllers compared.
    pub controllers: [ControllerKind; 2],
}

/// Fig. 15: ACP+ and Lazy with 1, 6, 12, 24 and 48 sources.
pub const FIG15: SourcesFigure = SourcesFigure {
    net: FIG15_NET,
    counts: &FIG15_SOURCES,
    controllers: [ControllerKind::AcpPlus, ControllerKind::Lazy],
};

/// Fig. 3.16: ACP (κ = 0.25, the thesis's simulation setting) and Lazy with 1 to 20 sources.
pub const FIG3_16: SourcesFigure = SourcesFigure {
    net: FIG3_16_NET,
    counts: &FIG3_16_SOURCES,
    controllers: [ControllerKind::Acp(0.25), ControllerKind::Lazy],
};

impl SourcesFigure {
    /// The figure with updates of `payload` bytes.
    pub fn with_payload(self, payload: u32) -> SourcesFigure {
        SourcesFigure {
            net: AccessNet {
                payload,
                ..self.net
            },
            ..self
        }
    }

    /// Runs in all ([`versus_sources`]).
    pub fn runs(&self, seeds: usize) -> usize {
        self.counts.len() * self.controllers.len() * seeds
    }

    /// Runs the figure ([`versus_sources`]).
    pub fn run(
        &self,
        secs: u64,
        seeds: &[u64],
        threads: usize,
        cancel: &Cancel,
        progress: &(dyn Fn(usize, usize) + Sync),
    ) -> Vec<SourcesRow> {
        versus_sources(
            &self.net,
            self.counts,
            &self.controllers,
            secs,
            seeds,
            threads,
            cancel,
            progress,
        )
    }
}

/// Fig. 3.15's run length (s).
pub const FIG3_15_SECS: u64 = 1400;

/// One of Fig. 3.15's UDP flows; it goes to the monitor.
#[derive(Debug, Clone, Copy)]
pub struct UdpFlow {
    /// Its name.
    pub name: &'static str,
    /// The node it enters at.
    pub entry: &'static str,
    /// Its rate (bit/s).
    pub bps: f64,
    /// When it is on (s).
    pub on: [(u64, u64); 2],
}

/// Fig. 3.15's other traffic.
pub const FIG3_15_UDP: [UdpFlow; 2] = [
    UdpFlow {
        name: "udp-ap1",
        entry: "ap1",
        bps: 0.2e6,
        on: [(200, 400), (1000, 1200)],
    },
    UdpFlow {
        name: "udp-ap2",
        entry: "ap2",
        bps: 0.3e6,
        on: [(600, 800), (1000, 1200)],
    },
];

/// Bytes of each of Fig. 3.15's UDP packets (ns-3's `UdpClient` default).
const FIG3_15_UDP_BYTES: u32 = 1024;

/// Fig. 3.15's network: one ACP (κ = 0.25) source, six 1 Mbit/s point-to-point hops (the
/// thesis: "all links are 1 Mbps"), the UDP flows of [`FIG3_15_UDP`] as Poisson packet
/// streams, the age traced on a 1 s grid. The thesis does not say how its UDP clients send;
/// Poisson (the other traffic of its Table I networks) makes the seeds differ, where constant
/// rate would make every seed's run the same.
pub fn fig3_15_scenario(seed: u64) -> Scenario {
    let mut text = format!(
        "format = 2\nname = \"ACP and switching UDP flows\"\nseed = {seed}\n\
         duration = \"{FIG3_15_SECS}s\"\n"
    );
    let mut path = vec!["source"];
    path.extend(BACKHAUL);
    for pair in path.windows(2) {
        text += &format!(
            "[[link]]\nfrom = \"{}\"\nto = \"{}\"\nrate = \"1mbit\"\nqueue = 100\n",
            pair[0], pair[1]
        );
    }
    text += &format!(
        "[[flow]]\ntype = \"acp\"\nname = \"acp\"\ncontroller = \"acp:0.25\"\npayload = {}\npath = {path:?}\n",
        FIG15_NET.payload
    );
    for UdpFlow {
        name,
        entry,
        bps,
        on: intervals,
    } in FIG3_15_UDP
    {
        let from = BACKHAUL.iter().position(|n| *n == entry).unwrap_or(0);
        for (k, (on, off)) in intervals.iter().enumerate() {
            text += &format!(
                "[[flow]]\ntype = \"cross\"\nname = \"{name}-{}\"\nprocess = \"poisson\"\nrate = \"{bps}bit\"\n\
                 size = {FIG3_15_UDP_BYTES}\nstart = \"{on}s\"\nstop = \"{}s\"\npath = {:?}\n",
                k + 1,
                off,
                &BACKHAUL[from..]
            );
        }
    }
    let mut s = match Scenario::parse(&text) {
        Ok(s) => s,
        Err(e) => unreachable!("Fig. 3.15's scenario is well formed: {e}"),
    };
    s.config.trace_points = FIG3_15_SECS as usize;
    s
}

/// One interval of Fig. 3.15 with a constant set of UDP flows.
#[derive(Debug, Clone, Serialize)]
pub struct Phase {
    /// Start (s).
    #[serde(rename = "from_s")]
    pub from: u64,
    /// End (s).
    #[serde(rename = "to_s")]
    pub to: u64,
    /// The UDP flows on (names).
    pub udp: Vec<&'static str>,
    /// Their total rate (bit/s).
    #[serde(
        rename = "load_kbps",
        serialize_with = "crate::report::json_units::kbps"
    )]
    pub load_bps: f64,
    /// ACP's time-average age over the interval (s).
    #[serde(rename = "age_ms", serialize_with = "Stat::ms")]
    pub age: Stat,
    /// ACP's fresh updates delivered per second over the interval.
    #[serde(rename = "rate_hz")]
    pub rate: Stat,
}

/// Fig. 3.15's results: the phases and, per seed, ACP's mean age on the 1 s grid.
#[derive(Debug, Clone)]
pub struct Fig315 {
    /// The intervals between switches, in time order (none if no seed's run was done).
    pub phases: Vec<Phase>,
    /// The seeds the results cover, in order: all of them unless the runs were cancelled.
    pub seeds: Vec<u64>,
    /// Per seed of `seeds`, `(t s, mean age over the second ending at t, s)`.
    pub traces: Vec<Vec<(f64, f64)>>,
}

/// The intervals between Fig. 3.15's switches, with the UDP flows on in each.
pub fn fig3_15_phases() -> Vec<(u64, u64, Vec<&'static str>, f64)> {
    let mut cuts: Vec<u64> = vec![0, FIG3_15_SECS];
    for flow in FIG3_15_UDP {
        for (on, off) in flow.on {
            cuts.extend([on, off]);
        }
    }
    cuts.sort_unstable();
    cuts.dedup();
    cuts.windows(2)
        .map(|w| {
            let on: Vec<&UdpFlow> = FIG3_15_UDP
                .iter()
                .filter(|f| f.on.iter().any(|&(a, b)| a <= w[0] && w[1] <= b))
                .collect();
            let load = on.iter().fold(0.0, |sum, f| sum + f.bps);
            (w[0], w[1], on.iter().map(|f| f.name).collect(), load)
        })
        .collect()
}

/// Fig. 3.15 over `seeds`, or over those whose runs `cancel` let start.
pub fn fig3_15(seeds: &[u64], threads: usize, cancel: &Cancel) -> Fig315 {
    let runs = parallel(seeds.to_vec(), threads, cancel, |seed| {
        let r = fig3_15_scenario(seed).build().map(|s| s.run());
        r.ok().and_then(|r| {
            let f = r.flows.into_iter().find(|f| f.kind == "acp")?;
            Some((f.mean_age_trace, f.delivery_trace))
        })
    });
    let (seeds, runs): (Vec<u64>, Vec<_>) = seeds
        .iter()
        .zip(runs)
        .filter_map(|(&seed, r)| Some((seed, r.flatten()?)))
        .unzip();
    // The mean of a 1 s grid over [from, to): grid point t closes the second ending at t.
    let over = |trace: &[(f64, f64)], from: u64, to: u64| {
        let xs: Vec<f64> = trace
            .iter()
            .filter(|(t, _)| *t > from as f64 && *t <= to as f64)
            .map(|p| p.1)
            .collect();
        xs.iter().sum::<f64>() / xs.len().max(1) as f64
    };
    // No run, no phases: a mean over no seed would read as an age of 0.
    let phases = fig3_15_phases()
        .into_iter()
        .filter(|_| !runs.is_empty())
        .map(|(from, to, udp, load_bps)| {
            let ages: Vec<f64> = runs.iter().map(|(a, _)| over(a, from, to)).collect();
            let rates: Vec<f64> = runs.iter().map(|(_, d)| over(d, from, to)).collect();
            Phase {
                from,
                to,
                udp,
                load_bps,
                age: Stat::of(&ages),
                rate: Stat::of(&rates),
            }
        })
        .collect();
    Fig315 {
        phases,
        seeds,
        traces: runs.into_iter().map(|(a, _)| a).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jains_index() {
        assert_eq!(jain(&[2.0, 2.0, 2.0]), 1.0);
        // One of n holds everything: 1/n.
        assert!((jain(&[1.0, 0.0, 0.0, 0.0]) - 0.25).abs() < 1e-12);
        assert!((jain(&[1.0, 3.0]) - 16.0 / 20.0).abs() < 1e-12);
        assert!(jain(&[]).is_nan());
    }

    #[test]
    fn the_access_network_has_its_stations_hops_and_flows() {
        let s = access_scenario(&FIG15_NET, 6, ControllerKind::Lazy, 30, 4);
        assert_eq!(s.flows.len(), 6);
        assert!(s.flows.iter().all(|f| f.path.len() == 7));
        assert_eq!(s.flows[0].path[0], "source#1");
        assert_eq!(s.config.seed, 4);
        assert_eq!(s.config.warmup, std::time::Duration::from_secs(3));
    }

    #[test]
    fn fig3_15_phases_follow_the_switches() {
        let phases = fig3_15_phases();
        let spans: Vec<(u64, u64)> = phases.iter().map(|p| (p.0, p.1)).collect();
        assert_eq!(
            spans,
            [
                (0, 200),
                (200, 400),
                (400, 600),
                (600, 800),
                (800, 1000),
                (1000, 1200),
                (1200, 1400)
            ]
        );
        let loads: Vec<f64> = phases.iter().map(|p| p.3).collect();
        assert_eq!(loads, [0.0, 0.2e6, 0.0, 0.3e6, 0.0, 0.5e6, 0.0]);
        assert_eq!(phases[5].2, ["udp-ap1", "udp-ap2"]);
    }
}
