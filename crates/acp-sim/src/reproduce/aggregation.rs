//! The aggregation thesis's results on an 802.11ac downlink (seed `004_410656f6d7aa2e5b.txt`),
//! with the aggregation controllers closing their loop through the stations' reports
//! ([`crate::slot_reports`]) over the network of [`super::agg_net`]:
//!
//! - `thesis-4-8`: sum goodput, delay, fairness and aggregation level against the number of
//!   receivers under Algorithm 1, with the GP-theory line (Fig. 4.8);
//! - `thesis-4-10`: ten stations, some legacy (the AP always has packets for them), the others
//!   controlled, on one AP (Fig. 4.10 (c)–(d));
//! - `thesis-4-15`: one station, Algorithm 1 (N_ε = 60, Δ = 1 s, A-MSDU, N_max = 128) against
//!   bulk TCP CUBIC and BBR, and BBR with the end-host latency the thesis names (Fig. 4.15);
//! - `agg-age`: Seek, ACP+ and the aggregation controllers side by side on the downlink: age,
//!   delay and goodput (issue 22 item 6).

use acp_core::controller::{ControllerKind, PiParams};
use acp_netmodel::wifi::aggregation_model::AggregationModel;
use acp_netmodel::wifi::phy::{edca_defaults, Mcs, PhyConfig, Standard};
use serde::Serialize;

use super::agg_net::{measure, AggNet, Sender, StationMeasure, TcpAcks, LINUX_RMEM_MAX};
use super::harness::{
    by_point, jain, stat, Chart, Declaration, Done, Draw, Job, Options, Plan, Source, Trace, View,
    Work,
};

/// Which of the thesis's results.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Figure {
    /// Fig. 4.8.
    Receivers,
    /// Fig. 4.9.
    Random,
    /// Fig. 4.10 (c)–(d).
    Legacy,
    /// Fig. 4.15.
    Tcp,
    /// Issue 22 item 6.
    Age,
}

/// One of the reproductions.
pub struct AggFigure {
    /// `acp reproduce NAME`.
    pub name: &'static str,
    /// One line on it.
    pub about: &'static str,
    /// Which.
    pub figure: Figure,
}

/// Fig. 4.8.
pub const FIG4_8: AggFigure = AggFigure {
    name: "thesis-4-8",
    about: "sum goodput, delay and aggregation level against 1–20 receivers under Algorithm 1, with the GP-theory line (aggregation thesis Fig. 4.8)",
    figure: Figure::Receivers,
};

/// Fig. 4.9.
pub const FIG4_9: AggFigure = AggFigure {
    name: "thesis-4-9",
    about: "eight stations placed at random in 40 × 40 m² with Minstrel rate adaptation (one stream) under equal airtime (agg-air), beside Algorithm 1 (aggregation thesis Fig. 4.9)",
    figure: Figure::Random,
};

/// Fig. 4.10.
pub const FIG4_10: AggFigure = AggFigure {
    name: "thesis-4-10",
    about: "ten stations on one 802.11ac AP, 0–10 of them legacy, the others under Algorithm 1: goodput and delay per class (aggregation thesis Fig. 4.10)",
    figure: Figure::Legacy,
};

/// Fig. 4.15.
pub const FIG4_15: AggFigure = AggFigure {
    name: "thesis-4-15",
    about: "one 802.11ac station: Algorithm 1 (N_ε = 60) against bulk TCP CUBIC and BBR (aggregation thesis Fig. 4.15)",
    figure: Figure::Tcp,
};

/// Issue 22 item 6.
pub const AGE: AggFigure = AggFigure {
    name: "agg-age",
    about: "Seek, ACP+ and aggregation control (agg, agg-io) on an 802.11ac downlink: age, delay and goodput",
    figure: Figure::Age,
};

/// The numbers of receivers of Fig. 4.8 (the thesis plots 1 to 20).
pub const RECEIVERS: [usize; 6] = [1, 2, 5, 10, 15, 20];
/// The numbers of legacy stations of Fig. 4.10 (of ten).
pub const LEGACY: [usize; 6] = [0, 2, 5, 8, 9, 10];
/// The numbers of stations of the age comparison.
pub const AGE_STATIONS: [usize; 2] = [1, 4];

/// The published numbers.
pub mod paper {
    /// Fig. 4.9: the bound on the delay (ms).
    pub const RANDOM_DELAY_MS: f64 = 6.0;
    /// Fig. 4.9's range (seed line 511): "as low as 150Mb/s when MinstrelHT selects MCS4 for
    /// all receivers, but converges to 300Mb/s with MCS 9" (MCS index, Mbit/s).
    pub const RANDOM_ENDS: [(u8, f64); 2] = [(9, 300.0), (4, 150.0)];
    /// Fig. 4.8: the delay grows by this much per station (ms).
    pub const DELAY_PER_STATION_MS: f64 = 0.350;
    /// Fig. 4.10: ten legacy stations (N = 64), ten controlled ones (N = 32), Mbit/s.
    pub const LEGACY_GOODPUT: [(usize, f64); 2] = [(10, 615.0), (0, 515.0)];
    /// Fig. 4.10 (d): controlled stations' delay with all ten controlled and with one against
    /// nine legacy stations ("always less than 12ms … falls to 7ms"), ms.
    pub const CONTROLLED_DELAY: [(usize, f64); 2] = [(0, 7.0), (9, 12.0)];
    /// Fig. 4.15: receive rate (Mbit/s) and one-way delay (ms) of CUBIC, BBR and aggregation
    /// control.
    pub const TCP: [(&str, f64, f64); 3] = [
        ("cubic", 600.0, 50.0),
        ("bbr", 400.0, 75.0),
        ("agg", 480.0, 2.0),
    ];
}

/// A point: the network run, and the rows' series.
#[derive(Debug, Clone)]
struct Point {
    net: AggNet,
}

impl AggFigure {
    /// The simulated and warm-up seconds (`o.secs` sets the first, the warm-up half of it).
    fn secs(&self, o: &Options) -> (u64, u64) {
        let secs = o.secs.unwrap_or(match self.figure {
            Figure::Receivers | Figure::Random | Figure::Legacy | Figure::Tcp => 40,
            // agg-io's outer loop (K₂ = 0.2, Δ = 1 s) is still approaching N̄ at four stations
            // 15 s in; over 15–30 s its level depended on the seed (29.0 and 30.2).
            Figure::Age => 60,
        });
        (secs, secs / 2)
    }

    /// The points.
    fn points(&self, o: &Options) -> Vec<Point> {
        let secs = self.secs(o);
        let params = |n_eps: f64, stations: usize, delta: f64| PiParams {
            n_eps,
            k0: 1.0 / stations as f64,
            delta,
        };
        let pi = |n_eps, stations, delta| {
            Sender::Acp(ControllerKind::AggPi(params(n_eps, stations, delta)))
        };
        let pick = |all: &[usize]| -> Vec<usize> {
            if o.clients.is_empty() {
                all.to_vec()
            } else {
                o.clients.clone()
            }
        };
        match self.figure {
            Figure::Receivers => pick(&RECEIVERS)
                .into_iter()
                .map(|n| Point {
                    net: AggNet::new(n, pi(32.0, n, 0.5), secs),
                })
                .collect(),
            Figure::Random => {
                // §4.3.2's equal airtime, as the thesis ran the figure (seed line 509: the levels
                // per MCS sit at the equal-airtime allocation), each source towards
                // N_ε·μ_R/μ_R*, with μ_R* the lead station's PHY rate (`lead_mbps`).
                let air = |mcs: u8| {
                    Sender::Acp(ControllerKind::AggAirtime {
                        pi: params(32.0, 8, 0.5),
                        lead_mbps: lead_mbps(mcs),
                    })
                };
                let placed = |sender| Point {
                    net: AggNet {
                        mcs: (9, 1, 80),
                        minstrel: true,
                        area_m: Some(40.0),
                        ..AggNet::new(8, sender, secs)
                    },
                };
                // The ends of the thesis's range (seed line 511): every station at MCS 4 and
                // every station at MCS 9, one stream, fixed, 1 m from the AP.
                let all_at = |mcs| Point {
                    net: AggNet {
                        mcs: (mcs, 1, 80),
                        ..AggNet::new(8, air(mcs), secs)
                    },
                };
                // Beside them, the placement under plain Algorithm 1 (every level at N_ε).
                vec![
                    placed(air(9)),
                    placed(pi(32.0, 8, 0.5)),
                    all_at(9),
                    all_at(4),
                ]
            }
            Figure::Legacy => pick(&LEGACY)
                .into_iter()
                .filter(|&k| k <= 10)
                .map(|k| {
                    let mut net = AggNet::new(10, pi(32.0, 10, 0.5), secs);
                    net.legacy = k;
                    Point { net }
                })
                .collect(),
            Figure::Tcp => {
                let senders = [
                    pi(60.0, 1, 1.0),
                    Sender::Tcp("cubic", TcpAcks::HANDSET),
                    Sender::Tcp("bbr", TcpAcks::HANDSET),
                ];
                // What each half of the handset's ACK thinning contributes.
                let partial =
                    [(true, false), (false, true), (false, false)].map(|(gro, up)| TcpAcks {
                        gro,
                        uplink_ampdu: up,
                    });
                let others = partial
                    .into_iter()
                    .flat_map(|a| [Sender::Tcp("cubic", a), Sender::Tcp("bbr", a)]);
                let handset = |s| {
                    let mut net = AggNet::new(1, s, secs);
                    net.amsdu = 2;
                    net.queue = TCP_QUEUE;
                    net.wire_mbit_s = 1000;
                    net.report_ms = 1000;
                    net
                };
                // The thesis's BBR client with its end-host latency, with Linux's window and
                // with the window the thesis's own numbers imply.
                let latent = [LINUX_RMEM_MAX, IMPLIED_RMEM_MAX].map(|rmem_max| AggNet {
                    host_latency_ms: BBR_HOST_LATENCY_MS,
                    rmem_max,
                    ..handset(Sender::Tcp("bbr", TcpAcks::HANDSET))
                });
                senders
                    .into_iter()
                    .chain(others)
                    .map(handset)
                    .chain(latent)
                    .map(|net| Point { net })
                    .collect()
            }
            Figure::Age => {
                let mut points = Vec::new();
                for n in pick(&AGE_STATIONS) {
                    let controllers = if o.controllers.is_empty() {
                        vec![
                            ControllerKind::Seek,
                            ControllerKind::AcpPlus,
                            ControllerKind::AggPi(PiParams {
                                k0: 1.0 / n as f64,
                                ..PiParams::default()
                            }),
                            ControllerKind::AggInnerOuter {
                                t_bar: 5e-3,
                                n_bar: 32.0,
                                k1: 0.5,
                                k2: 0.2,
                            },
                        ]
                    } else {
                        o.controllers.clone()
                    };
                    for c in controllers {
                        points.push(Point {
                            net: AggNet::new(n, Sender::Acp(c), secs),
                        });
                    }
                }
                points
            }
        }
    }
}

/// Fig. 4.9's lead rate for stations whose rate control picks up to MCS `mcs` (one stream,
/// 80 MHz, long guard interval), Mbit/s. §4.3.2's lead station i* is the one with the highest
/// MCS rate; our sources each see only their own station, so each is given i*'s rate: the PHY
/// rate of the top MCS the stations can use (Minstrel's MCS 9; the fixed MCS of the ends).
/// That is i*'s rate whenever a station reaches the top, as the thesis's MCS 9 end does (seed
/// line 511); if none does, every target is lower by the same factor and the airtimes stay
/// equal (our decision).
pub fn lead_mbps(mcs: u8) -> f64 {
    PhyConfig::ac(Mcs::new(mcs, 1, 80)).data_rate_bps() / 1e6
}

/// Fig. 4.15's queue at the AP (packets): the thesis does not give its AP's buffer; CUBIC fills
/// it, and "around 600Mbps … around 50ms" (seed line 634) is a backlog of 600 Mbit/s × 50 ms ÷
/// 12 kbit = 2500 packets of 1500 bytes (our inference).
pub const TCP_QUEUE: usize = 2500;

/// Fig. 4.15's BBR client's end-host latency on the data path (ms): the thesis puts its BBR's
/// ≈ 75 ms one-way delay down to "end-host latency within the BBR kernel implementation at
/// both sender and receiver" (seed line 636) without giving the amount; BBR keeps the AP's
/// queue near empty (RTT 0.8 ms without the latency), so the latency is the one-way delay
/// (our inference).
pub const BBR_HOST_LATENCY_MS: u64 = 75;

/// The `tcp_rmem` maximum whose window (half of it) is the 3.75 MB that both of the thesis's
/// TCP results imply, as rate × one-way delay: CUBIC's 600 Mbit/s × 50 ms (seed line 634)
/// and BBR's 400 Mbit/s × 75 ms (seed line 636) (our inference; Linux's default gives 3 MiB).
pub const IMPLIED_RMEM_MAX: u64 = 7_500_000;

/// One row: a class of stations (or all of them) at one point.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// What the stations of the row run (`legacy`, a controller, a TCP congestion control;
    /// `all` for every station of the run).
    pub series: String,
    /// Stations on the AP.
    pub stations: usize,
    /// Of those, legacy stations.
    pub legacy: usize,
    /// Seeds run.
    pub seeds: usize,
    /// Sum of the row's stations' goodput (Mbit/s; 1500-byte IP packets).
    pub goodput_mbit_s: f64,
    /// Its 95 % confidence half-width over the seeds.
    pub goodput_mbit_s_ci95: f64,
    /// The thesis's.
    pub paper_goodput_mbit_s: Option<f64>,
    /// Fig. 4.8's GP theory: N_ε = 32 packets per A-MPDU, 10 feedback packets per second per
    /// receiver, 10 beacons per second, no collisions (Mbit/s).
    pub theory_goodput_mbit_s: Option<f64>,
    /// Mean delay from the sender to the station over the row's stations (ms).
    pub delay_ms: Option<f64>,
    /// Its 95 % confidence half-width.
    pub delay_ms_ci95: Option<f64>,
    /// The thesis's.
    pub paper_delay_ms: Option<f64>,
    /// Mean RTT the senders measured, mean over the row's stations (ms): TCP's only delay
    /// measure (the TCP model does not time its segments one way).
    pub rtt_ms: Option<f64>,
    /// Time-average age at the station, mean over the row's stations (ms; ACP only).
    pub age_ms: Option<f64>,
    /// Its 95 % confidence half-width.
    pub age_ms_ci95: Option<f64>,
    /// Mean aggregation level the stations reported after the warm-up (packets per A-MPDU).
    pub level: Option<f64>,
    /// The standard deviation of the reported slot levels, mean over the stations (Fig. 4.6's
    /// measure of noise).
    pub level_sd: Option<f64>,
    /// The target the thesis holds it at.
    pub paper_level: Option<f64>,
    /// Jain's index of the row's stations' goodputs (mean over the seeds).
    pub jain: Option<f64>,
}

/// Which stations a row counts.
type Keep = fn(&StationMeasure) -> bool;

/// The measurements of the stations of one class in one run.
fn class<'a>(
    stations: &'a [StationMeasure],
    keep: impl Fn(&StationMeasure) -> bool + 'a,
) -> Vec<&'a StationMeasure> {
    stations.iter().filter(|s| keep(s)).collect()
}

/// Mean of the `Some` values of `f` over `stations`.
fn mean_of(
    stations: &[&StationMeasure],
    f: impl Fn(&StationMeasure) -> Option<f64>,
) -> Option<f64> {
    let xs: Vec<f64> = stations.iter().filter_map(|s| f(s)).collect();
    (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64)
}

/// A mean and CI over the seeds of a per-run value, `None` if no run had it.
fn over_runs(per_run: Vec<Option<f64>>) -> (Option<f64>, Option<f64>) {
    let xs: Vec<f64> = per_run.into_iter().flatten().collect();
    if xs.is_empty() {
        return (None, None);
    }
    let refs: Vec<&f64> = xs.iter().collect();
    let (m, ci) = stat(&refs, |x| *x);
    (Some(m), Some(ci))
}

/// Fig. 4.8's GP theory for `n` receivers (Mbit/s): every station's A-MPDU holds N_ε = 32
/// 1500-byte packets ((5.11) with the standard's c and w, [`AggregationModel::derive`]), less
/// the air of 10 beacons a second and 10 feedback packets a second per receiver (each a
/// channel access, a 100-byte frame at the data rate, SIFS and an ACK), no collisions.
pub fn gp_theory_mbit_s(n: usize) -> f64 {
    let phy = PhyConfig::ac(Mcs::new(9, 2, 80));
    let access = edca_defaults(Standard::Ac)[1];
    let model = AggregationModel::derive(&phy, access, n, 1500, 64);
    let x = model.rate_for(32.0);
    let slot = phy.slot().as_secs_f64();
    let access_s = phy.sifs().as_secs_f64()
        + f64::from(access.aifsn) * slot
        + f64::from(access.cw_min) / 2.0 * slot;
    let beacon = access_s + phy.beacon_airtime().as_secs_f64();
    let feedback = access_s
        + phy.data_airtime(100).as_secs_f64()
        + phy.sifs().as_secs_f64()
        + phy.ack_airtime().as_secs_f64();
    let free = 1.0 - 10.0 * beacon - 10.0 * n as f64 * feedback;
    n as f64 * x * 1500.0 * 8.0 * free * 1e-6
}

impl Declaration for AggFigure {
    type Measure = Vec<StationMeasure>;
    type Row = Row;

    fn name(&self) -> &'static str {
        self.name
    }

    fn about(&self) -> &'static str {
        self.about
    }

    fn default_seeds(&self) -> u64 {
        3
    }

    fn takes_controllers(&self) -> bool {
        self.figure == Figure::Age
    }

    /// Fig. 4.10's `--clients` counts legacy stations, and none is its all-controlled point.
    fn min_clients(&self) -> usize {
        usize::from(self.figure != Figure::Legacy)
    }

    fn check(&self, o: &Options) -> Result<(), String> {
        if self.figure == Figure::Legacy && o.clients.iter().any(|&k| k > 10) {
            return Err("--clients: 0–10 legacy stations of ten".into());
        }
        if o.secs.is_some_and(|s| s < 4) {
            return Err("--secs: at least 4 (half of it is warm-up)".into());
        }
        Ok(())
    }

    fn plan(&self, o: &Options) -> Plan {
        let seeds = self.seeds(o);
        let mut jobs = Vec::new();
        for (k, p) in self.points(o).iter().enumerate() {
            for &seed in &seeds {
                jobs.push(Job::sim(k, p.net.scenario(seed)));
            }
        }
        Plan { jobs }
    }

    fn measure(&self, job: &Job, done: Done<'_>) -> Vec<StationMeasure> {
        let (Done::Sim(r), Work::Sim(scenario)) = (done, &job.work) else {
            unreachable!("the aggregation reproductions run in the simulator only")
        };
        measure(r, scenario.config.warmup)
    }

    fn rows(&self, o: &Options, plan: &Plan, done: &[Option<Vec<StationMeasure>>]) -> Vec<Row> {
        let points = self.points(o);
        let runs = by_point(plan, done, points.len());
        let mut rows = Vec::new();
        for (p, runs) in points.iter().zip(&runs) {
            let net = &p.net;
            let mut classes: Vec<(String, Keep)> = Vec::new();
            if net.legacy < net.stations {
                classes.push((series(net), |s| !s.legacy));
            }
            if self.figure == Figure::Legacy {
                if net.legacy > 0 {
                    classes.push(("legacy".into(), |s| s.legacy));
                }
                classes.push(("all".into(), |_| true));
            }
            for (series, keep) in classes {
                let per_run: Vec<Vec<&StationMeasure>> =
                    runs.iter().map(|r| class(r, keep)).collect();
                let sums: Vec<f64> = per_run
                    .iter()
                    .map(|s| s.iter().map(|m| m.goodput_mbit_s).sum())
                    .collect();
                let sum_refs: Vec<&f64> = sums.iter().collect();
                let (goodput, goodput_ci) = stat(&sum_refs, |x| *x);
                let (delay, delay_ci) =
                    over_runs(per_run.iter().map(|s| mean_of(s, |m| m.delay_ms)).collect());
                let (rtt, _) =
                    over_runs(per_run.iter().map(|s| mean_of(s, |m| m.rtt_ms)).collect());
                let (age, age_ci) =
                    over_runs(per_run.iter().map(|s| mean_of(s, |m| m.age_ms)).collect());
                let (level, _) =
                    over_runs(per_run.iter().map(|s| mean_of(s, |m| m.level)).collect());
                let (level_sd, _) =
                    over_runs(per_run.iter().map(|s| mean_of(s, |m| m.level_sd)).collect());
                let (fairness, _) = over_runs(
                    per_run
                        .iter()
                        .map(|s| {
                            let g: Vec<f64> = s.iter().map(|m| m.goodput_mbit_s).collect();
                            (g.len() > 1).then(|| jain(&g))
                        })
                        .collect(),
                );
                let controlled = series != "legacy" && series != "all";
                rows.push(Row {
                    paper_goodput_mbit_s: self.paper_goodput(net, &series),
                    theory_goodput_mbit_s: (self.figure == Figure::Receivers)
                        .then(|| gp_theory_mbit_s(net.stations)),
                    paper_delay_ms: self.paper_delay(net, &series),
                    paper_level: (controlled
                        && matches!(self.figure, Figure::Receivers | Figure::Legacy))
                    .then_some(32.0),
                    series,
                    stations: net.stations,
                    legacy: net.legacy,
                    seeds: runs.len(),
                    goodput_mbit_s: goodput,
                    goodput_mbit_s_ci95: goodput_ci,
                    delay_ms: delay,
                    delay_ms_ci95: delay_ci,
                    rtt_ms: rtt,
                    age_ms: age,
                    age_ms_ci95: age_ci,
                    level,
                    level_sd,
                    jain: fairness,
                });
            }
        }
        rows
    }

    fn traces(
        &self,
        o: &Options,
        _plan: &Plan,
        _done: &[Option<Vec<StationMeasure>>],
    ) -> Vec<Trace> {
        if self.figure != Figure::Receivers {
            return Vec::new();
        }
        let ns: Vec<usize> = self.points(o).iter().map(|p| p.net.stations).collect();
        let last = ns.iter().copied().max().unwrap_or(1);
        vec![Trace {
            name: "GP theory".into(),
            points: (1..=last)
                .map(|n| (n as f64, gp_theory_mbit_s(n)))
                .collect(),
        }]
    }

    fn setup(&self, o: &Options) -> String {
        let (secs, warm) = self.secs(o);
        let what = match self.figure {
            Figure::Receivers => "MCS 9, 2 spatial streams, stations 1 m from the AP; n stations, each fed by agg:32 with K₀ = 1 (K = 1/n), Δ = 0.5 s",
            Figure::Random => "eight stations placed at random in 40 × 40 m² (ns-3's channel defaults), Minstrel over MCS 0–9 with one stream, each fed by §4.3.2's equal airtime, agg-air with N_ε = 32, K = 1/8, Δ = 0.5 s and the lead rate of MCS 9 (390 Mbit/s); the same placement under agg:32; the ends of the thesis's range, all eight 1 m from the AP at MCS 9 and at MCS 4, one stream, agg-air with the lead rate of their MCS",
            Figure::Legacy => "MCS 9, 2 spatial streams, stations 1 m from the AP; ten stations, the first k legacy, the others fed by agg:32 with K = 1/10, Δ = 0.5 s",
            Figure::Tcp => "MCS 9, 2 spatial streams, one station 1 m from the AP, A-MSDU of 2 (N_max = 128), a 1 Gbit/s wire, 2500-packet AP queue; agg:60 with K₀ = 1, Δ = 1 s, against bulk CUBIC and BBR with Linux's socket buffers (3 MiB window) on a handset that thins its ACKs: GRO's stretch ACKs (one per A-MPDU's poll or 64 KiB) aggregated in uplink A-MPDUs of up to 64; and with either or both left out (an ACK every 2 segments, each ACK a frame of its own); and the handset's BBR with 75 ms of end-host latency on the data path (a delay on the wire toward the AP, none on the ACKs' way back), with Linux's window and with a 3.75 MB one",
            Figure::Age => "MCS 9, 2 spatial streams, 1 and 4 stations 1 m from the AP, each fed by one ACP source with the controller of its row",
        };
        format!(
            "802.11ac downlink, 80 MHz, EDCA best effort, beacons every 102.4 ms, 1500-byte IP packets; {what}; aggregation \
             controllers' stations report 500 ms slots (1 s for agg:60) and answer one update \
             per 100 ms, the others every update; {secs} s per run, the first {warm} s \
             warm-up; {} seed(s); mean ± 95 % CI",
            self.seeds(o).len()
        )
    }

    fn sources(&self) -> Vec<Source> {
        match self.figure {
            Figure::Receivers => vec![Source {
                column: "paper_level",
                locator: "aggregation thesis §4.3.4, Fig. 4.8 (seed line 505: \"tightly concentrates the aggregation level around the target value of N_e = 32\")",
            }],
            Figure::Random => vec![
                Source {
                    column: "paper_goodput_mbit_s",
                    locator: "aggregation thesis §4.3.4.2, Fig. 4.9 (seed line 511: \"as low as 150Mb/s when MinstrelHT selects MCS4 for all receivers, but converges to 300Mb/s with MCS 9\"): the rows with every station at MCS 4 and at MCS 9",
                },
                Source {
                    column: "paper_delay_ms",
                    locator: "aggregation thesis §4.3.4, Fig. 4.9 (delay below 6 ms: a bound, not a mean)",
                },
            ],
            Figure::Legacy => vec![
                Source {
                    column: "paper_goodput_mbit_s",
                    locator: "aggregation thesis §4.3.5, Fig. 4.10 (seed line 524: ≈ 615 Mbit/s with ten legacy stations, ≈ 515 with ten controlled)",
                },
                Source {
                    column: "paper_delay_ms",
                    locator: "aggregation thesis §4.3.5, Fig. 4.10 (d) (seed line 538: controlled stations' delay \"always less than 12ms\" with one against nine legacy, \"7ms when all stations are controlled\")",
                },
                Source {
                    column: "paper_level",
                    locator: "aggregation thesis Algorithm 1's target N_ε = 32 (seed line 424)",
                },
            ],
            Figure::Tcp => vec![
                Source {
                    column: "paper_goodput_mbit_s",
                    locator: "aggregation thesis §4.4.5, Fig. 4.15 (seed lines 634–638: CUBIC ≈ 600, BBR ≈ 400, aggregation control ≈ 480 Mbit/s)",
                },
                Source {
                    column: "paper_delay_ms",
                    locator: "aggregation thesis §4.4.5, Fig. 4.15 (seed lines 634–638: one-way delay ≈ 50, ≈ 75 and ≈ 2 ms)",
                },
            ],
            Figure::Age => Vec::new(),
        }
    }

    fn views(&self) -> Vec<View> {
        let mut columns = vec!["series", "stations"];
        if self.figure == Figure::Legacy {
            columns.push("legacy");
        }
        columns.extend(["goodput_mbit_s", "delay_ms"]);
        match self.figure {
            Figure::Receivers => {
                columns.extend(["theory_goodput_mbit_s", "level", "level_sd", "jain"])
            }
            Figure::Legacy | Figure::Random => columns.extend(["level"]),
            Figure::Tcp => columns.extend(["rtt_ms", "level"]),
            Figure::Age => columns.extend(["age_ms", "level"]),
        }
        vec![View::new("", &columns)]
    }

    fn charts(&self, _o: &Options, traces: &[Trace]) -> Vec<Chart> {
        let stem = self.name.replace('-', "_");
        match self.figure {
            Figure::Receivers => vec![
                Chart::lines(
                    format!("{stem}_goodput"),
                    "Sum goodput against receivers, Algorithm 1 (points) and GP theory (line), Fig. 4.8",
                    ("stations", "receivers"),
                    ("goodput_mbit_s", "sum goodput (Mbit/s)"),
                    &["series"],
                )
                .draw(Draw::Model(traces.to_vec())),
                Chart::lines(
                    format!("{stem}_delay"),
                    "Delay against receivers, Fig. 4.8",
                    ("stations", "receivers"),
                    ("delay_ms", "mean delay (ms)"),
                    &["series"],
                ),
            ],
            Figure::Random => vec![Chart::lines(
                stem.clone(),
                "Eight stations at random in 40 m, Minstrel, equal airtime, Fig. 4.9",
                ("stations", ""),
                ("goodput_mbit_s", "Mbit/s, ms"),
                &["series"],
            )
            .draw(Draw::Bars(vec![
                ("goodput_mbit_s", "goodput (Mbit/s)"),
                ("delay_ms", "delay (ms)"),
            ]))],
            Figure::Legacy => vec![
                Chart::lines(
                    format!("{stem}_goodput"),
                    "Goodput per class, ten stations on one AP, Fig. 4.10 (c)",
                    ("legacy", "legacy stations (of 10)"),
                    ("goodput_mbit_s", "sum goodput (Mbit/s)"),
                    &["series"],
                ),
                Chart::lines(
                    format!("{stem}_delay"),
                    "Controlled stations' delay, Fig. 4.10 (d)",
                    ("legacy", "legacy stations (of 10)"),
                    ("delay_ms", "mean delay (ms)"),
                    &["series"],
                ),
            ],
            Figure::Tcp => vec![Chart::lines(
                stem.clone(),
                "Aggregation control against CUBIC and BBR, one 802.11ac station, Fig. 4.15",
                ("stations", ""),
                ("goodput_mbit_s", "Mbit/s, ms"),
                &["series"],
            )
            .draw(Draw::Bars(vec![
                ("goodput_mbit_s", "goodput (Mbit/s)"),
                ("delay_ms", "delay (ms)"),
            ]))],
            Figure::Age => vec![
                Chart::lines(
                    format!("{stem}_age"),
                    "Age on an 802.11ac downlink",
                    ("stations", ""),
                    ("age_ms", "ms"),
                    &["series"],
                )
                .draw(Draw::Bars(vec![("age_ms", "age (ms)"), ("delay_ms", "delay (ms)")])),
                Chart::lines(
                    format!("{stem}_goodput"),
                    "Goodput on an 802.11ac downlink",
                    ("stations", ""),
                    ("goodput_mbit_s", "Mbit/s"),
                    &["series"],
                )
                .draw(Draw::Bars(vec![("goodput_mbit_s", "sum goodput")])),
            ],
        }
    }

    fn notes(&self, _o: &Options, rows: &[Row]) -> Vec<String> {
        match self.figure {
            Figure::Receivers => {
                let pts: Vec<(f64, f64)> = rows
                    .iter()
                    .filter_map(|r| r.delay_ms.map(|d| (r.stations as f64, d)))
                    .collect();
                match slope(&pts) {
                    Some(s) => vec![format!(
                        "delay grows {:.0} µs per station (least squares over the rows); thesis ≈ {:.0} µs (seed line 505)",
                        s * 1e3,
                        paper::DELAY_PER_STATION_MS * 1e3
                    )],
                    None => Vec::new(),
                }
            }
            Figure::Random | Figure::Legacy | Figure::Tcp | Figure::Age => Vec::new(),
        }
    }
}

impl AggFigure {
    /// The thesis's goodput for `series` at `net`.
    fn paper_goodput(&self, net: &AggNet, series: &str) -> Option<f64> {
        match self.figure {
            Figure::Legacy if series == "all" => paper::LEGACY_GOODPUT
                .iter()
                .find(|p| p.0 == net.legacy)
                .map(|p| p.1),
            Figure::Tcp => tcp_paper(series).map(|p| p.1),
            Figure::Random => paper::RANDOM_ENDS
                .iter()
                .find(|e| !net.minstrel && e.0 == net.mcs.0)
                .map(|e| e.1),
            _ => None,
        }
    }

    /// The thesis's delay for `series` at `net`.
    fn paper_delay(&self, net: &AggNet, series: &str) -> Option<f64> {
        match self.figure {
            Figure::Legacy if series.starts_with("agg") => paper::CONTROLLED_DELAY
                .iter()
                .find(|p| p.0 == net.legacy)
                .map(|p| p.1),
            Figure::Tcp => tcp_paper(series).map(|p| p.2),
            Figure::Random => Some(paper::RANDOM_DELAY_MS),
            _ => None,
        }
    }
}

/// The series of a row: the sender, for Fig. 4.9 how the rates were chosen, and for
/// Fig. 4.15 the end-host latency and the window where they are not the default.
fn series(net: &AggNet) -> String {
    let name = net.sender.name();
    if net.host_latency_ms > 0 {
        let window = if net.rmem_max == LINUX_RMEM_MAX {
            String::new()
        } else {
            format!(", {:.2} MB window", net.rmem_max as f64 / 2e6)
        };
        return format!("{name} ({} ms host latency{window})", net.host_latency_ms);
    }
    match (net.minstrel, net.area_m) {
        (true, _) => format!("{name} (Minstrel)"),
        (false, None) if net.mcs.1 == 1 => format!("{name} (MCS {})", net.mcs.0),
        (false, _) => name,
    }
}

/// Fig. 4.15's numbers for `series`: the handset's runs, and BBR's with its end-host latency.
fn tcp_paper(series: &str) -> Option<(&'static str, f64, f64)> {
    paper::TCP.iter().copied().find(|p| {
        series == p.0
            || (p.0 == "agg" && series.starts_with("agg"))
            || (p.0 == "bbr" && series.starts_with("bbr (") && series.contains("host latency"))
    })
}

/// The least-squares slope of `pts` (`None` with fewer than two distinct x).
fn slope(pts: &[(f64, f64)]) -> Option<f64> {
    let n = pts.len() as f64;
    let mx = pts.iter().map(|p| p.0).sum::<f64>() / n;
    let my = pts.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    (pts.len() >= 2 && sxx > 0.0).then(|| sxy / sxx)
}
