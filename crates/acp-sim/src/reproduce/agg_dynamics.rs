//! The aggregation thesis's results on how its controllers move, one station on an 802.11ac
//! downlink ([`super::agg_net`]), read from the slots the station reported
//! ([`crate::slot_reports`]):
//!
//! - `thesis-4-5`: Algorithm 1's convergence time from start-up and the noise of the slot
//!   levels against K₀ (Δ = 0.5 s) and against Δ (K₀ = 1) (Figs. 4.5–4.6), and the noise
//!   against Δ again on a channel that changes ([`channel_changes`]), the thesis's explanation
//!   of its sweet spot in Δ;
//! - `thesis-4-7`: the AP drops from two spatial streams to one at 20 s: how long the frames
//!   stay full and how long the level then takes to settle (Fig. 4.7), and the same change
//!   with a smaller AP queue or from a lower rate before it ([`QUEUES`], [`MCS_BEFORE`]), which
//!   separate what sets the two times;
//! - `thesis-5-7`: the inner–outer controller (Algorithm 2): the level's noise against K₁
//!   (Fig. 5.7 (a)), its convergence against K₂ (Fig. 5.9 (a)), the delay held at T̄ = 2.5 ms
//!   as the MCS varies (Fig. 5.9 (b)–(d)), and against Algorithm 1 (Fig. 5.11); and over three
//!   stations at different MCS, one controller at the sender for all of them (Algorithm 2 as
//!   the thesis states it, seed lines 1214–1233) against one per station's flow, with the §5.3
//!   allocation ([`pf_low_delay`]) each station's level is steered to, and the thesis's
//!   three-client testbed (Table 5.1) beside its setting.
//!
//! "Settled" is the end of the first reported slot from which every later slot's level lies
//! within ±10 % of the level the loop aims at (N_ε for Algorithm 1; for Algorithm 2, whose
//! target moves, the mean level of the run's second half).

use acp_core::controller::aggregation_model::{dot, AggregationModel, MPDU_BITS};
use acp_core::controller::pf_allocation::pf_low_delay;
use acp_core::controller::{ControllerKind, PiParams};
use serde::Serialize;

use acp_netmodel::Streams;

use super::access::seed_range;
use super::agg_net::{mean_sd, AggNet, Sender};
use super::harness::{
    by_point, stat, Band, Chart, Declaration, Done, Draw, Job, Options, Plan, Source, Trace, View,
    Work,
};
use crate::slot_reports::ReportedSlot;

/// Which of the thesis's figure groups.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    /// Figs. 4.5–4.6.
    Gains,
    /// Fig. 4.7.
    Streams,
    /// Figs. 5.7–5.11.
    InnerOuter,
}

/// One of the reproductions.
pub struct AggDynamics {
    /// `acp reproduce NAME`.
    pub name: &'static str,
    /// One line on it.
    pub about: &'static str,
    /// Which.
    pub group: Group,
}

/// Figs. 4.5–4.6.
pub const FIG4_5: AggDynamics = AggDynamics {
    name: "thesis-4-5",
    about: "one 802.11ac station under Algorithm 1: convergence time and noise of the aggregation level against K₀ and Δ (aggregation thesis Figs. 4.5–4.6)",
    group: Group::Gains,
};

/// Fig. 4.7.
pub const FIG4_7: AggDynamics = AggDynamics {
    name: "thesis-4-7",
    about: "one 802.11ac station under Algorithm 1 while the AP drops from two spatial streams to one: saturation and settling (aggregation thesis Fig. 4.7)",
    group: Group::Streams,
};

/// Figs. 5.7–5.11.
pub const FIG5_7: AggDynamics = AggDynamics {
    name: "thesis-5-7",
    about: "the inner–outer controller (Algorithm 2) on one 802.11ac station: noise against K₁, convergence against K₂, delay at T̄ = 2.5 ms as the MCS varies, against Algorithm 1 (aggregation thesis Figs. 5.7–5.11); and one controller at the sender over three stations against the §5.3 allocation (Table 5.1 beside)",
    group: Group::InnerOuter,
};

/// The changing channel's mean time between changes (s).
pub const CHANGE_EVERY_S: f64 = 5.0;
/// Fig. 4.7's variants: the AP's queue (packets; ns-3's `WifiMacQueue` holds 500 by default,
/// `src/wifi/model/wifi-mac-queue.cc`, where our network has 1000).
pub const QUEUES: [usize; 2] = [500, 100];
/// Fig. 4.7's variants: the MCS before the change (two streams; the change is to MCS 9 with one
/// stream as in the figure), so that the rate before it is lower than at MCS 9.
pub const MCS_BEFORE: [u8; 2] = [7, 8];

/// Fig. 4.5 (a), 4.6 (a): the gains K₀ at Δ = 0.5 s (the thesis does not list its values; it
/// names K₀ = 10 as oscillating, seed line 467).
pub const K0S: [f64; 5] = [0.5, 1.0, 2.0, 5.0, 10.0];
/// Fig. 4.5 (a)'s gains again on the thesis's own plant: its testbed's one station fits the
/// §5.2 model with μ_R ≈ 585 Mbit/s (seed line 852: three streams, the MCS varying, a mean
/// rate), which is MCS 7 with two streams and the 400 ns guard interval ([`PLANT_MCS`]); the
/// loop's gain is larger there than at MCS 9 ("Stability on the model").
pub const PLANT_K0S: [f64; 2] = [1.0, 10.0];
/// The MCS index, spatial streams and width of [`PLANT_K0S`]'s runs (short guard interval:
/// 585 Mbit/s).
pub const PLANT_MCS: (u8, u8, u16) = (7, 2, 80);
/// Fig. 4.5 (b), 4.6 (b): the intervals Δ (s) at K₀ = 1, around the sweet spot of 1.25–2 s
/// (seed line 483).
pub const DELTAS: [f64; 6] = [0.25, 0.5, 1.0, 1.25, 2.0, 3.0];
/// Fig. 5.7 (a): the inner gains K₁ (the thesis marks the limit at K₁ = 2, seed line 1094).
pub const K1S: [f64; 6] = [0.25, 0.5, 1.0, 1.5, 1.9, 2.5];
/// Fig. 5.9 (a): the outer gains K₂ (oscillatory from K₂ ≥ 1, seed line 1185), at the
/// figure's MCS 9 with one stream, where the cap N̄ binds.
pub const K2S: [f64; 6] = [0.1, 0.2, 0.5, 0.9, 1.2, 1.5];
/// The outer gains again at MCS 4 with one stream, where the delay target T̄ binds and the
/// outer loop's set point moves with the rate (Fig. 5.9 (b)–(d)'s MCS 4 point): 2.5 is past
/// Lemma 2's bound K₂ < 2 (seed lines 1174–1177).
pub const K2S_DELAY_BOUND: [f64; 4] = [0.2, 1.2, 1.5, 2.5];
/// Fig. 5.9 (b)–(d): MCS indices with one stream, and the thesis's level and delay at each
/// (seed line 1194: ≈ 16 packets at MCS 2, 23 at MCS 4, the cap 48 at MCS 9 with 1.7 ms).
pub const MCS_LEVELS: [(u8, f64, f64); 3] = [(2, 16.0, 2.5), (4, 23.0, 2.5), (9, 48.0, 1.7)];

/// The three-station points' stations: distances from the AP (m), under Minstrel over MCS 0–9
/// with two streams (it settles on MCS 9, 5 and 3: the network of "Equal airtime in
/// simulation", `docs/AGGREGATION.md`).
pub const STATIONS_M: [f64; 3] = [1.0, 20.0, 35.0];
/// Their Algorithm 2's T̄ (ms) and N̄: on the §5.2 model with c ≈ 300 µs the delay target binds
/// at every station (levels ≈ 11, 21 and 36 under N̄ = 48), so the §5.3 allocation is equal
/// airtime (Example 1) and tells one sender from one loop per station.
pub const STATIONS_IO: (f64, f64) = (2.0, 48.0);
/// Table 5.1's setting (seed lines 1253–1255 and 1276: T̄ = 10 ms, N̄ = 30, three clients at 866–1247 Mbit/s):
/// three stations near the AP (m; Minstrel, two streams, our fastest rates).
pub const TABLE_5_1_M: [f64; 3] = [1.0, 10.0, 15.0];
/// Table 5.1's T̄ (ms) and N̄.
pub const TABLE_5_1_IO: (f64, f64) = (10.0, 30.0);

/// The published numbers.
pub mod paper {
    /// Table 5.1 (seed lines 1253–1255), its clients in our stations' order, the fastest
    /// first: PC₂ (MCS 1247 Mbit/s), PC₁ (960), the tablet (866); each (aggregation level,
    /// delay ms, receive rate Mbit/s), means of its testbed run.
    pub const TABLE_5_1: [(f64, f64, f64); 3] =
        [(18.0, 4.4, 193.0), (29.0, 4.3, 172.0), (30.0, 4.0, 168.0)];
    /// Fig. 4.7: seconds the frames stay at 64 after the change (Δt₁) and seconds from then
    /// until the rate settles (Δt₂) (seed line 492).
    pub const STREAMS: (f64, f64) = (2.24, 1.26);
    /// Fig. 5.11: one-way delay (ms) of both controllers on the testbed ("≈ 1 ms", seed line
    /// 1248) and the linear controller's loss ("around 0.15%"; the nonlinear one's is "almost
    /// half").
    pub const TESTBED: (f64, f64) = (1.0, 0.0015);
}

/// Fig. 5.7 (a)'s delay target (ms): the thesis holds N_target = 32 at MCS 9 with one stream
/// (seed line 1099) without giving T̄ and N̄. With N̄ = 32 the cap clamps the inner loop from
/// above and hides its instability, so we take N̄ = 48 and the T̄ whose level is 32 on the §5.2
/// model: c + 32·w = 0.2 ms + 32 × 1548 B × 8 / 390 Mbit/s ≈ 1.22 ms (c ≈ 200 µs as the thesis
/// reads it, seed line 1194), rounded to 1.25 ms (our inference).
pub const K1_T_BAR_MS: f64 = 1.25;

/// When the AP changes to one stream in Fig. 4.7 (s; the thesis's T_a, seed line 492).
pub const STREAMS_CHANGE_S: u64 = 20;
/// A slot whose mean level is at least this share of N_max = 64 counts as saturated.
const SATURATED: f64 = 0.95;
/// The settling band: ±10 % of the level aimed at.
const BAND: f64 = 0.1;

/// A point: its network, and the sweep and value it stands for.
#[derive(Debug, Clone)]
struct Point {
    net: AggNet,
    /// The parameter swept (`K0`, `K0_585`, `delta_s`, `K1`, `K2`, `K2_mcs4`, `mcs`,
    /// `controller`, `streams`).
    param: &'static str,
    /// Its value.
    value: f64,
    /// Algorithm 1's target, if the point runs it (`None`: Algorithm 2).
    target: Option<f64>,
    /// The thesis's (level, delay ms) for the point.
    paper: (Option<f64>, Option<f64>),
    /// The thesis's (level, delay ms, receive rate Mbit/s) for each station of a point of
    /// several (empty: none).
    paper_stations: Vec<(f64, f64, f64)>,
}

impl Point {
    /// Its name for `--scenarios` (`K0=2`, `delta_s=1.25`, `mcs=4`, `controller=agg`,
    /// `controller=agg-io`).
    fn id(&self) -> String {
        match (self.param, self.target) {
            ("controller", Some(_)) => "controller=agg".into(),
            ("controller", None) => "controller=agg-io".into(),
            (p, _) => format!("{p}={}", self.value),
        }
    }
}

/// Algorithm 1 on one station with K₀ and Δ (the station reports slots of Δ).
fn pi(k0: f64, delta: f64) -> Sender {
    Sender::Acp(ControllerKind::AggPi(PiParams {
        n_eps: 32.0,
        k0,
        delta,
    }))
}

/// Algorithm 2 with T̄ (ms), N̄, K₁ and K₂.
fn io(t_ms: f64, n_bar: f64, k1: f64, k2: f64) -> Sender {
    Sender::Acp(ControllerKind::AggInnerOuter {
        t_bar: t_ms * 1e-3,
        n_bar,
        k1,
        k2,
    })
}

/// The changing channel of `thesis-4-5`'s `changing_delta_s` points, over `secs` seconds: from
/// 10 s on, the AP's MCS (two streams) is drawn anew between 8 and 9 (780 and 866.7 Mbit/s,
/// a tenth apart) at whole seconds, the gaps exponential with mean [`CHANGE_EVERY_S`] and at
/// least 1 s. One schedule for every Δ and seed (its own random stream), so that the points
/// differ only in Δ.
pub fn channel_changes(secs: u64) -> Vec<(u64, u8, u8)> {
    let mut rng = Streams::new(1).stream("changing channel");
    let mut changes: Vec<(u64, u8, u8)> = Vec::new();
    let mut t = 10.0;
    loop {
        t += (-rng.unit().ln() * CHANGE_EVERY_S).max(1.0);
        let at = (t.round() as u64).max(changes.last().map_or(0, |c| c.0 + 1));
        if at >= secs {
            return changes;
        }
        let mcs = if rng.unit() <= 0.5 { 8 } else { 9 };
        changes.push((at, mcs, 2));
    }
}

impl AggDynamics {
    /// Simulated seconds per run at the group's base interval (Δ = 0.5 s for Algorithm 1,
    /// 1 s for Algorithm 2).
    fn secs(&self, o: &Options) -> u64 {
        o.secs.unwrap_or(match self.group {
            Group::Gains => 80,
            Group::Streams => 40,
            Group::InnerOuter => 60,
        })
    }

    /// The points `o` selects.
    fn points(&self, o: &Options) -> Vec<Point> {
        let secs = self.secs(o);
        let one = |sender: Sender, secs: u64| AggNet::new(1, sender, (secs, secs / 2));
        let point = |net, param, value, target| Point {
            net,
            param,
            value,
            target,
            paper: (None, None),
            paper_stations: Vec::new(),
        };
        let all = match self.group {
            Group::Gains => {
                let mut v: Vec<Point> = K0S
                    .iter()
                    .map(|&k0| point(one(pi(k0, 0.5), secs), "K0", k0, Some(32.0)))
                    .collect();
                for &k0 in &PLANT_K0S {
                    let net = AggNet {
                        mcs: PLANT_MCS,
                        short_gi: true,
                        ..one(pi(k0, 0.5), secs)
                    };
                    v.push(point(net, "K0_585", k0, Some(32.0)));
                }
                for &delta in &DELTAS {
                    // As many slots as the runs at Δ = 0.5 s.
                    let s = (secs as f64 * delta / 0.5).round() as u64;
                    let mut net = one(pi(1.0, delta), s);
                    net.report_ms = (delta * 1e3) as u64;
                    v.push(point(net, "delta_s", delta, Some(32.0)));
                }
                // The same time at every Δ: the channel changes in seconds, not slots.
                let changing = secs * 5 / 2;
                for &delta in &DELTAS {
                    let mut net = one(pi(1.0, delta), changing);
                    net.report_ms = (delta * 1e3) as u64;
                    net.rate_changes = channel_changes(changing);
                    v.push(point(net, "changing_delta_s", delta, Some(32.0)));
                }
                v
            }
            Group::Streams => {
                let mut net = one(pi(1.0, 0.5), secs.max(STREAMS_CHANGE_S + 5));
                net.secs.1 = STREAMS_CHANGE_S;
                net.rate_changes = vec![(STREAMS_CHANGE_S, 9, 1)];
                let mut v = vec![point(net.clone(), "streams", 1.0, Some(32.0))];
                for &queue in &QUEUES {
                    let net = AggNet {
                        queue,
                        ..net.clone()
                    };
                    v.push(point(net, "queue", queue as f64, Some(32.0)));
                }
                for &mcs in &MCS_BEFORE {
                    let net = AggNet {
                        mcs: (mcs, 2, 80),
                        ..net.clone()
                    };
                    v.push(point(net, "mcs_before", f64::from(mcs), Some(32.0)));
                }
                v
            }
            Group::InnerOuter => {
                let mcs9_1 = |sender| AggNet {
                    mcs: (9, 1, 80),
                    ..one(sender, secs)
                };
                let mut v: Vec<Point> = K1S
                    .iter()
                    .map(|&k1| {
                        let net = mcs9_1(io(K1_T_BAR_MS, 48.0, k1, 0.2));
                        point(net, "K1", k1, None)
                    })
                    .collect();
                v.extend(
                    K2S.iter()
                        .map(|&k2| point(mcs9_1(io(2.5, 48.0, 0.5, k2)), "K2", k2, None)),
                );
                v.extend(K2S_DELAY_BOUND.iter().map(|&k2| {
                    let net = AggNet {
                        mcs: (4, 1, 80),
                        ..one(io(2.5, 48.0, 0.5, k2), secs)
                    };
                    point(net, "K2_mcs4", k2, None)
                }));
                for &(mcs, level, delay) in &MCS_LEVELS {
                    let net = AggNet {
                        mcs: (mcs, 1, 80),
                        ..one(io(2.5, 48.0, 0.5, 0.2), secs)
                    };
                    v.push(Point {
                        paper: (Some(level), Some(delay)),
                        ..point(net, "mcs", f64::from(mcs), None)
                    });
                }
                v.push(point(
                    one(pi(1.0, 0.5), secs),
                    "controller",
                    0.0,
                    Some(32.0),
                ));
                v.push(point(
                    one(io(5.0, 32.0, 0.5, 0.2), secs),
                    "controller",
                    0.0,
                    None,
                ));
                let three = |(t_ms, n_bar), at: [f64; 3], one_sender| AggNet {
                    minstrel: true,
                    distances_m: at.to_vec(),
                    one_sender,
                    ..AggNet::new(3, io(t_ms, n_bar, 0.5, 0.2), (secs, secs / 2))
                };
                v.push(point(
                    three(STATIONS_IO, STATIONS_M, true),
                    "stations",
                    3.0,
                    None,
                ));
                v.push(point(
                    three(STATIONS_IO, STATIONS_M, false),
                    "stations_per_source",
                    3.0,
                    None,
                ));
                v.push(Point {
                    paper_stations: paper::TABLE_5_1.to_vec(),
                    ..point(
                        three(TABLE_5_1_IO, TABLE_5_1_M, true),
                        "table5_1",
                        3.0,
                        None,
                    )
                });
                v
            }
        };
        if o.scenarios.is_empty() {
            all
        } else {
            all.into_iter()
                .filter(|p| o.scenarios.contains(&p.id()))
                .collect()
        }
    }
}

/// What one run yields, per station in order.
#[derive(Debug, Clone)]
pub struct RunMeasure {
    stations: Vec<StationRun>,
}

/// One station's reported slots and its flow's numbers.
#[derive(Debug, Clone)]
pub struct StationRun {
    reports: Vec<ReportedSlot>,
    goodput_mbit_s: f64,
    delay_ms: Option<f64>,
    loss: Option<f64>,
}

/// One row: a point's means over the seeds.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// The parameter swept.
    pub param: String,
    /// Its value.
    pub value: f64,
    /// The station (1-based; the points of three stations have a row each).
    pub station: usize,
    /// The station's controller; `(one sender)`: one controller over every station's flow.
    pub series: String,
    /// Seeds run.
    pub seeds: usize,
    /// The station's mean reported PHY rate over the second half, 1/E[1/R] (Mbit/s).
    pub phy_mbit_s: Option<f64>,
    /// Payload airtime per frame, level × (1500 + 48) B / PHY rate (µs): equal at every station
    /// under equal airtime (§5.3 Example 1).
    pub air_us: Option<f64>,
    /// The §5.3 proportional-fair low-delay allocation's level for the station (points of
    /// several stations under Algorithm 2; `pf_levels`).
    pub pf_level: Option<f64>,
    /// Seconds from the start (Fig. 4.7: from the end of the saturation) until the level
    /// settled; mean over the runs that settled.
    pub converged_s: Option<f64>,
    /// Its 95 % confidence half-width.
    pub converged_s_ci95: Option<f64>,
    /// Runs whose level never settled.
    pub unsettled_runs: usize,
    /// Mean reported level over the second half of the run.
    pub level: Option<f64>,
    /// The thesis's.
    pub paper_level: Option<f64>,
    /// Standard deviation of the reported slot levels over the second half (the thesis's
    /// noise, Figs. 4.6, 5.7 (a)).
    pub level_sd: Option<f64>,
    /// Its 95 % confidence half-width over the seeds.
    pub level_sd_ci95: Option<f64>,
    /// Goodput over the second half (Mbit/s).
    pub goodput_mbit_s: f64,
    /// The thesis's receive rate (Table 5.1).
    pub paper_goodput_mbit_s: Option<f64>,
    /// Mean one-way delay over the second half (ms).
    pub delay_ms: Option<f64>,
    /// The thesis's (Fig. 5.11's testbed).
    pub paper_delay_ms: Option<f64>,
    /// Mean length of a scheduling round, level ÷ packet rate (ms): the delay Algorithm 2
    /// holds at T̄ (§5.4.2.2: "the mean delay is just the mean duration of a scheduling round").
    pub round_ms: Option<f64>,
    /// The thesis's (Fig. 5.9 (d)).
    pub paper_round_ms: Option<f64>,
    /// Share of the updates sent that were lost.
    pub loss: Option<f64>,
    /// The thesis's.
    pub paper_loss: Option<f64>,
    /// Fig. 4.7: seconds after the change during which the slots were saturated.
    pub saturated_s: Option<f64>,
    /// The thesis's Δt₁.
    pub paper_saturated_s: Option<f64>,
    /// Fig. 4.7: seconds from the end of the saturation until the level settled at N_ε.
    pub settled_s: Option<f64>,
    /// The thesis's Δt₂.
    pub paper_settled_s: Option<f64>,
    /// Fig. 4.7: packets in the frames received per second (Mbit/s of 1500-byte packets) over
    /// the 5 s before the change, and over the saturated slots after it (what one stream
    /// carries in frames of 64): Algorithm 1 cuts K·(64 − N_ε) = 32 Mbit/s a round while the
    /// frames are full, so their difference sets the rounds of Δt₁.
    pub rate_before_mbit_s: Option<f64>,
    pub rate_saturated_mbit_s: Option<f64>,
}

/// Packets in the frames of the slots of `reports` ending in (`from_s`, `to_s`], per second
/// (Mbit/s of 1500-byte packets); `None` without such a slot.
fn frame_rate(reports: &[ReportedSlot], from_s: f64, to_s: f64, slot_s: f64) -> Option<f64> {
    let slots: Vec<&ReportedSlot> = reports
        .iter()
        .filter(|r| r.t_s > from_s && r.t_s <= to_s)
        .collect();
    let packets: f64 = slots.iter().map(|r| f64::from(r.frames) * r.level).sum();
    (!slots.is_empty()).then(|| packets * 1500.0 * 8.0 / (slots.len() as f64 * slot_s) * 1e-6)
}

/// The end of the first report at or after `from_s` from which every later report's level lies
/// within ±10 % of `aim`, less `from_s`; `None` if the last one does not.
pub fn settle_time(reports: &[ReportedSlot], from_s: f64, aim: f64) -> Option<f64> {
    let later: Vec<&ReportedSlot> = reports.iter().filter(|r| r.t_s >= from_s).collect();
    let inside = |r: &&ReportedSlot| (r.level - aim).abs() <= BAND * aim;
    let first_out = later.iter().rposition(|r| !inside(r));
    match first_out {
        None => later.first().map(|r| r.t_s - from_s),
        Some(k) => later.get(k + 1).map(|r| r.t_s - from_s),
    }
}

/// The run of saturated slots that starts with the first one ending after `change_s`: the
/// end of its last slot (s since the start), `None` if no slot after the change is saturated.
pub fn saturation_end(reports: &[ReportedSlot], change_s: f64, n_max: f64) -> Option<f64> {
    let full = |r: &ReportedSlot| r.level >= SATURATED * n_max;
    let after = reports.iter().skip_while(|r| r.t_s <= change_s);
    let run: Vec<&ReportedSlot> = after
        .skip_while(|r| !full(r))
        .take_while(|r| full(r))
        .collect();
    run.last().map(|r| r.t_s)
}

/// Mean and standard deviation of the levels of `reports` after `from_s`.
fn level_stats(reports: &[ReportedSlot], from_s: f64) -> Option<(f64, f64)> {
    let xs: Vec<f64> = reports
        .iter()
        .filter(|r| r.t_s > from_s)
        .map(|r| r.level)
        .collect();
    match mean_sd(&xs) {
        (Some(mean), Some(sd)) => Some((mean, sd)),
        _ => None,
    }
}

/// The frame-weighted mean PHY rate 1/E[1/R] (Mbit/s) of the slots of `reports` after `from_s`.
fn mean_phy(reports: &[ReportedSlot], from_s: f64) -> Option<f64> {
    let later = reports
        .iter()
        .filter(|r| r.t_s > from_s && r.phy_mbps > 0.0);
    let (frames, inverse) = later.fold((0.0, 0.0), |(n, i), r| {
        let f = f64::from(r.frames);
        (n + f, i + f / r.phy_mbps)
    });
    (inverse > 0.0).then(|| frames / inverse)
}

/// The §5.3 allocation's level for each station of run `r` ([`pf_low_delay`] with T̄ `t_bar`
/// (s) and N̄ `n_bar`) on the §5.2 model of the run after `from_s`: each station's mean PHY rate,
/// and the round overhead c = R − Σ w_i·μ_N_i, R being the stations' mean round (level ÷ packet
/// rate). `None` if a station has no slots or no goodput.
fn pf_levels(r: &RunMeasure, from_s: f64, t_bar: f64, n_bar: f64) -> Option<Vec<f64>> {
    let mut levels = Vec::new();
    let mut phys = Vec::new();
    let mut rounds = 0.0;
    for s in &r.stations {
        let pps = s.goodput_mbit_s * 1e6 / (1500.0 * 8.0);
        if pps <= 0.0 {
            return None;
        }
        let level = level_stats(&s.reports, from_s)?.0;
        phys.push(mean_phy(&s.reports, from_s)? * 1e6);
        rounds += level / pps;
        levels.push(level);
    }
    let mut model = AggregationModel::from_phy_rates(0.0, &phys, 64.0);
    model.c = rounds / levels.len().max(1) as f64 - dot(&model.w, &levels);
    Some(pf_low_delay(&model, t_bar, n_bar).levels)
}

/// A mean and CI of the `Some` values, `(None, None)` if there are none.
fn mean_ci(xs: &[Option<f64>]) -> (Option<f64>, Option<f64>) {
    let xs: Vec<f64> = xs.iter().flatten().copied().collect();
    if xs.is_empty() {
        return (None, None);
    }
    let refs: Vec<&f64> = xs.iter().collect();
    let (m, ci) = stat(&refs, |x| *x);
    (Some(m), Some(ci))
}

impl Declaration for AggDynamics {
    type Measure = RunMeasure;
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

    fn check(&self, o: &Options) -> Result<(), String> {
        if o.secs.is_some_and(|s| s < 10) {
            return Err("--secs: at least 10 (half of it is warm-up)".into());
        }
        let ids: Vec<String> = self
            .points(&Options {
                scenarios: Vec::new(),
                ..o.clone()
            })
            .iter()
            .map(Point::id)
            .collect();
        match o.scenarios.iter().find(|s| !ids.contains(s)) {
            Some(s) => Err(format!(
                "--scenarios: no point {s:?} in {} (it has {})",
                self.name,
                ids.join(", ")
            )),
            None => Ok(()),
        }
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

    fn measure(&self, job: &Job, done: Done<'_>) -> RunMeasure {
        let (Done::Sim(r), Work::Sim(_)) = (done, &job.work) else {
            unreachable!("the aggregation reproductions run in the simulator only")
        };
        let stations = r.wifi.first().map_or(&[][..], |w| &w.aggregation[..]);
        let stations = stations
            .iter()
            .enumerate()
            .map(|(k, a)| {
                let flow = r.flows.iter().find(|f| f.name == format!("to-{}", k + 1));
                StationRun {
                    reports: a.reports.clone(),
                    goodput_mbit_s: flow.map_or(0.0, |f| f.throughput_bps * 1e-6),
                    delay_ms: flow.and_then(|f| f.mean_delay).map(|d| d * 1e3),
                    loss: flow
                        .filter(|f| f.sent > 0)
                        .map(|f| f.dropped as f64 / f.sent as f64),
                }
            })
            .collect();
        RunMeasure { stations }
    }

    fn rows(&self, o: &Options, plan: &Plan, done: &[Option<RunMeasure>]) -> Vec<Row> {
        let points = self.points(o);
        let runs = by_point(plan, done, points.len());
        points
            .iter()
            .zip(&runs)
            .flat_map(|(p, runs)| {
                let half = p.net.secs.1 as f64;
                let pf: Vec<Option<Vec<f64>>> = match (&p.net.sender, p.net.stations) {
                    (Sender::Acp(ControllerKind::AggInnerOuter { t_bar, n_bar, .. }), 2..) => runs
                        .iter()
                        .map(|r| pf_levels(r, half, *t_bar, *n_bar))
                        .collect(),
                    _ => Vec::new(),
                };
                (0..p.net.stations).map(move |station| (p, station, runs, pf.clone()))
            })
            .map(|(p, station, runs, pf)| {
                let runs: Vec<&StationRun> = runs
                    .iter()
                    .filter_map(|r| r.stations.get(station))
                    .collect();
                let runs = &runs[..];
                let half = p.net.secs.1 as f64;
                let stats: Vec<Option<(f64, f64)>> =
                    runs.iter().map(|r| level_stats(&r.reports, half)).collect();
                let aim = |k: usize| p.target.or(stats[k].map(|s| s.0));
                let (converged, saturated, settled): (Vec<_>, Vec<_>, Vec<_>) = match p.param {
                    _ if self.group == Group::Streams => {
                        let change = STREAMS_CHANGE_S as f64;
                        let ends: Vec<Option<f64>> = runs
                            .iter()
                            .map(|r| saturation_end(&r.reports, change, 64.0))
                            .collect();
                        let settled = runs
                            .iter()
                            .zip(&ends)
                            .map(|(r, e)| e.and_then(|e| settle_time(&r.reports, e, 32.0)))
                            .collect();
                        let saturated = ends.iter().map(|e| e.map(|e| e - change)).collect();
                        (Vec::new(), saturated, settled)
                    }
                    // The channel moves the level out of any band: no convergence to read.
                    "changing_delta_s" => (Vec::new(), Vec::new(), Vec::new()),
                    _ => (
                        runs.iter()
                            .enumerate()
                            .map(|(k, r)| aim(k).and_then(|a| settle_time(&r.reports, 0.0, a)))
                            .collect(),
                        Vec::new(),
                        Vec::new(),
                    ),
                };
                let (converged_s, converged_ci) = mean_ci(&converged);
                let levels: Vec<Option<f64>> = stats.iter().map(|s| s.map(|s| s.0)).collect();
                let sds: Vec<Option<f64>> = stats.iter().map(|s| s.map(|s| s.1)).collect();
                let (level_sd, level_sd_ci) = mean_ci(&sds);
                let streams = self.group == Group::Streams;
                let slot_s = p.net.report_ms as f64 * 1e-3;
                let change = STREAMS_CHANGE_S as f64;
                let rate_before: Vec<Option<f64>> = runs
                    .iter()
                    .map(|r| frame_rate(&r.reports, change - 5.0, change, slot_s))
                    .filter(|_| streams)
                    .collect();
                let rate_saturated: Vec<Option<f64>> = runs
                    .iter()
                    .zip(&saturated)
                    .map(|(r, s)| {
                        s.and_then(|s| frame_rate(&r.reports, change, change + s, slot_s))
                    })
                    .collect();
                let linear_testbed = p.param == "controller";
                let paper_station = p.paper_stations.get(station);
                let phys: Vec<Option<f64>> =
                    runs.iter().map(|r| mean_phy(&r.reports, half)).collect();
                let air: Vec<Option<f64>> = stats
                    .iter()
                    .zip(&phys)
                    .map(|(s, phy)| Some(s.as_ref()?.0 * MPDU_BITS / (*phy)?))
                    .collect();
                let pf_level: Vec<Option<f64>> =
                    pf.iter().map(|l| l.as_ref().map(|l| l[station])).collect();
                Row {
                    param: p.param.into(),
                    value: p.value,
                    station: station + 1,
                    series: if p.net.one_sender {
                        format!("{} (one sender)", p.net.sender.name())
                    } else {
                        p.net.sender.name()
                    },
                    seeds: runs.len(),
                    phy_mbit_s: mean_ci(&phys).0,
                    air_us: mean_ci(&air).0,
                    pf_level: mean_ci(&pf_level).0,
                    converged_s,
                    converged_s_ci95: converged_ci,
                    unsettled_runs: if streams {
                        settled.iter().filter(|s| s.is_none()).count()
                    } else {
                        converged.iter().filter(|s| s.is_none()).count()
                    },
                    level: mean_ci(&levels).0,
                    paper_level: p.paper.0.or(paper_station.map(|s| s.0)),
                    level_sd,
                    level_sd_ci95: level_sd_ci,
                    goodput_mbit_s: stat(runs, |r| r.goodput_mbit_s).0,
                    paper_goodput_mbit_s: paper_station.map(|s| s.2),
                    delay_ms: mean_ci(&runs.iter().map(|r| r.delay_ms).collect::<Vec<_>>()).0,
                    paper_delay_ms: linear_testbed
                        .then_some(paper::TESTBED.0)
                        .or(paper_station.map(|s| s.1)),
                    round_ms: mean_ci(
                        &runs
                            .iter()
                            .zip(&stats)
                            .map(|(r, s)| {
                                let pps = r.goodput_mbit_s * 1e6 / (1500.0 * 8.0);
                                s.filter(|_| pps > 0.0).map(|s| s.0 / pps * 1e3)
                            })
                            .collect::<Vec<_>>(),
                    )
                    .0,
                    paper_round_ms: p.paper.1,
                    loss: mean_ci(&runs.iter().map(|r| r.loss).collect::<Vec<_>>()).0,
                    paper_loss: (linear_testbed && p.target.is_some()).then_some(paper::TESTBED.1),
                    saturated_s: mean_ci(&saturated).0,
                    paper_saturated_s: streams.then_some(paper::STREAMS.0),
                    settled_s: mean_ci(&settled).0,
                    paper_settled_s: streams.then_some(paper::STREAMS.1),
                    rate_before_mbit_s: mean_ci(&rate_before).0,
                    rate_saturated_mbit_s: mean_ci(&rate_saturated).0,
                }
            })
            .collect()
    }

    fn traces(&self, o: &Options, plan: &Plan, done: &[Option<RunMeasure>]) -> Vec<Trace> {
        if self.group != Group::Streams {
            return Vec::new();
        }
        let Some((job, Some(m))) = plan.jobs.iter().zip(done).next() else {
            return Vec::new();
        };
        let Some(m) = m.stations.first() else {
            return Vec::new();
        };
        let slot_s = self
            .points(o)
            .first()
            .map_or(0.5, |p| p.net.report_ms as f64 * 1e-3);
        vec![
            Trace {
                name: format!("level, seed {}", job.seed),
                points: m.reports.iter().map(|r| (r.t_s, r.level)).collect(),
            },
            Trace {
                name: format!("aggregated rate, seed {}", job.seed),
                points: m
                    .reports
                    .iter()
                    .map(|r| {
                        let rate = frame_rate(&m.reports, r.t_s - slot_s, r.t_s, slot_s);
                        (r.t_s, rate.unwrap_or(0.0))
                    })
                    .collect(),
            },
        ]
    }

    fn setup(&self, o: &Options) -> String {
        let secs = self.secs(o);
        let what = match self.group {
            Group::Gains => format!(
                "MCS 9, 2 spatial streams, one station 1 m from the AP, agg:32 with K₀ in {K0S:?} at Δ = 0.5 s, and Δ in {DELTAS:?} s at K₀ = 1; K0_585: K₀ in {PLANT_K0S:?} at Δ = 0.5 s on the thesis's plant, MCS 7 with 2 streams and the 400 ns guard interval (585 Mbit/s); the station reports slots of Δ; {secs} s per run at Δ = 0.5 s and as many slots at the other Δ, the second half measured; changing_delta_s: the same Δ on a channel whose MCS (2 streams) is drawn between 8 and 9 every ≈ {CHANGE_EVERY_S} s from 10 s on, {} s per run at every Δ, the second half measured",
                secs * 5 / 2
            ),
            Group::Streams => format!(
                "MCS 9, one station 1 m from the AP, agg:32 with K₀ = 1, Δ = 0.5 s; the AP changes from 2 spatial streams to 1 at {STREAMS_CHANGE_S} s; slots of 0.5 s (saturated: a slot mean of at least {} MPDUs); {} s per run; variants: an AP queue of {QUEUES:?} packets (queue), MCS {MCS_BEFORE:?} with 2 streams before the change (mcs_before)",
                SATURATED * 64.0,
                secs.max(STREAMS_CHANGE_S + 5)
            ),
            Group::InnerOuter => format!(
                "one station 1 m from the AP unless a point says, agg-io (β = 0.05, Δ = 1 s): K₁ in {K1S:?} at T̄ = {K1_T_BAR_MS} ms, N̄ = 48 (MCS 9, 1 stream); K₂ in {K2S:?} at T̄ = 2.5 ms, N̄ = 48 (MCS 9, 1 stream); K2_mcs4: K₂ in {K2S_DELAY_BOUND:?} at T̄ = 2.5 ms, N̄ = 48 (MCS 4, 1 stream); MCS 2, 4, 9 with 1 stream at T̄ = 2.5 ms, N̄ = 48; agg:32 (K₀ = 1, Δ = 0.5 s) against agg-io:5,32 at MCS 9, 2 streams; stations: three stations {STATIONS_M:?} m from the AP, Minstrel over MCS 0–9 with 2 streams, agg-io:{},{} with one controller at the sender over the three flows (stations_per_source: one per flow), pf_level the §5.3 allocation on the run's own §5.2 model (its PHY rates, c = round − Σ w·level); table5_1: the same one sender at T̄ = {} ms, N̄ = {} (Table 5.1's) with stations {TABLE_5_1_M:?} m away; {secs} s per run, the second half measured",
                STATIONS_IO.0, STATIONS_IO.1, TABLE_5_1_IO.0, TABLE_5_1_IO.1
            ),
        };
        format!(
            "802.11ac downlink, 80 MHz, long GI unless a point says, EDCA best effort, beacons every 102.4 ms, 1500-byte IP packets, 1000-packet AP queue unless a variant says, reports every 100 ms; {what}; settled: every later slot within ±10 % of the level aimed at; seeds {}; mean ± 95 % CI",
            seed_range(&self.seeds(o))
        )
    }

    fn sources(&self) -> Vec<Source> {
        match self.group {
            Group::Gains => Vec::new(),
            Group::Streams => vec![
                Source {
                    column: "paper_saturated_s",
                    locator: "aggregation thesis §4.3.3.3, Fig. 4.7 (seed line 492: \"For Δt₁ = 2.24s all AMPDUs hit the maximum aggregation level of 64\")",
                },
                Source {
                    column: "paper_settled_s",
                    locator: "aggregation thesis §4.3.3.3, Fig. 4.7 (seed line 492: \"After another three rounds (for approximately Δt₂ = 1.26s) … the sending rate settles\")",
                },
            ],
            Group::InnerOuter => vec![
                Source {
                    column: "paper_level",
                    locator: "aggregation thesis §5.4.2.2, Fig. 5.9 (b) (seed line 1194: ≈ 16 packets at MCS 2, 23 at MCS 4, N̄ = 48 at MCS 9)",
                },
                Source {
                    column: "paper_round_ms",
                    locator: "aggregation thesis Fig. 5.9 (d) (seed line 1194: T̄ = 2.5 ms at MCS 2 and 4, 1.7 ms at MCS 9)",
                },
                Source {
                    column: "paper_delay_ms",
                    locator: "aggregation thesis Fig. 5.11 (c) (seed line 1248: \"the delay is extremely low (≈ 1 ms)\" on the testbed)",
                },
                Source {
                    column: "paper_goodput_mbit_s",
                    locator: "aggregation thesis §5.5.3, Table 5.1 (seed lines 1253–1255: receive rate, delay and aggregation level of PC₂, PC₁ and the tablet; also the table5_1 rows' paper_level and paper_delay_ms)",
                },
                Source {
                    column: "paper_loss",
                    locator: "aggregation thesis §5.5, Fig. 5.11 (d) (seed line 1248: the linear controller's loss \"around 0.15%\", the nonlinear one's \"almost half\")",
                },
            ],
        }
    }

    fn views(&self) -> Vec<View> {
        let columns: &[&str] = match self.group {
            Group::Gains => &[
                "param",
                "value",
                "converged_s",
                "unsettled_runs",
                "level",
                "level_sd",
                "goodput_mbit_s",
                "delay_ms",
            ],
            Group::Streams => &[
                "param",
                "value",
                "saturated_s",
                "settled_s",
                "rate_before_mbit_s",
                "rate_saturated_mbit_s",
                "unsettled_runs",
                "level",
                "goodput_mbit_s",
                "delay_ms",
                "loss",
            ],
            Group::InnerOuter => &[
                "param",
                "value",
                "station",
                "series",
                "converged_s",
                "unsettled_runs",
                "phy_mbit_s",
                "level",
                "pf_level",
                "level_sd",
                "air_us",
                "goodput_mbit_s",
                "delay_ms",
                "round_ms",
                "loss",
            ],
        };
        vec![View::new("", columns)]
    }

    fn charts(&self, _o: &Options, traces: &[Trace]) -> Vec<Chart> {
        let stem = self.name.replace('-', "_");
        match self.group {
            Group::Gains => vec![
                Chart::lines(
                    format!("{stem}_convergence_k0"),
                    "Convergence time against K₀, Δ = 0.5 s (Fig. 4.5 (a))",
                    ("value", "K₀"),
                    ("converged_s", "time to settle (s)"),
                    &["series"],
                )
                .only("param", "K0"),
                Chart::lines(
                    format!("{stem}_convergence_delta"),
                    "Convergence time against Δ, K₀ = 1 (Fig. 4.5 (b))",
                    ("value", "Δ (s)"),
                    ("converged_s", "time to settle (s)"),
                    &["series"],
                )
                .only("param", "delta_s"),
                Chart::lines(
                    format!("{stem}_noise_k0"),
                    "SD of the slot level against K₀, Δ = 0.5 s (Fig. 4.6 (a))",
                    ("value", "K₀"),
                    ("level_sd", "SD of μ_N (MPDUs)"),
                    &["series"],
                )
                .only("param", "K0"),
                Chart::lines(
                    format!("{stem}_noise_delta"),
                    "SD of the slot level against Δ, K₀ = 1 (Fig. 4.6 (b))",
                    ("value", "Δ (s)"),
                    ("level_sd", "SD of μ_N (MPDUs)"),
                    &["series"],
                )
                .only("param", "delta_s"),
                Chart::lines(
                    format!("{stem}_noise_delta_changing"),
                    "SD of the slot level against Δ, K₀ = 1, MCS changing 8 ↔ 9 every ≈ 5 s",
                    ("value", "Δ (s)"),
                    ("level_sd", "SD of μ_N (MPDUs)"),
                    &["series"],
                )
                .only("param", "changing_delta_s"),
            ],
            Group::Streams => {
                let change = STREAMS_CHANGE_S as f64;
                let band = vec![Band {
                    from: change,
                    to: change + paper::STREAMS.0,
                    label: "thesis: saturated (Δt₁)".into(),
                    shade: 0.3,
                }];
                let pick = |prefix: &str| -> Vec<Trace> {
                    traces
                        .iter()
                        .filter(|t| t.name.starts_with(prefix))
                        .cloned()
                        .collect()
                };
                vec![
                    Chart::lines(
                        format!("{stem}_level"),
                        "Slot level, 2 → 1 spatial streams at 20 s (Fig. 4.7)",
                        ("t_s", "time (s)"),
                        ("level", "μ_N (MPDUs)"),
                        &[],
                    )
                    .draw(Draw::OverTime(pick("level"), band.clone())),
                    Chart::lines(
                        format!("{stem}_rate"),
                        "Aggregated rate, 2 → 1 spatial streams at 20 s (Fig. 4.7)",
                        ("t_s", "time (s)"),
                        ("rate", "packets in frames received (Mbit/s)"),
                        &[],
                    )
                    .draw(Draw::OverTime(pick("aggregated"), band)),
                ]
            }
            Group::InnerOuter => vec![
                Chart::lines(
                    format!("{stem}_noise_k1"),
                    "SD of the slot level against K₁ (Fig. 5.7 (a); limit K₁ = 2)",
                    ("value", "K₁"),
                    ("level_sd", "SD of μ_N (MPDUs)"),
                    &[],
                )
                .only("param", "K1"),
                Chart::lines(
                    format!("{stem}_convergence_k2"),
                    "Time to settle against K₂, T̄ = 2.5 ms, N̄ = 48 (Fig. 5.9 (a))",
                    ("value", "K₂"),
                    ("converged_s", "time to settle (s)"),
                    &[],
                )
                .only("param", "K2"),
                Chart::lines(
                    format!("{stem}_mcs_level"),
                    "Level held for T̄ = 2.5 ms as the MCS varies (Fig. 5.9 (b))",
                    ("value", "MCS index (1 stream)"),
                    ("level", "μ_N (MPDUs)"),
                    &[],
                )
                .only("param", "mcs"),
                Chart::lines(
                    format!("{stem}_mcs_round"),
                    "Round length at T̄ = 2.5 ms as the MCS varies (Fig. 5.9 (d))",
                    ("value", "MCS index (1 stream)"),
                    ("round_ms", "level ÷ packet rate (ms)"),
                    &[],
                )
                .only("param", "mcs"),
                Chart::lines(
                    format!("{stem}_against_linear"),
                    "Inner–outer against Algorithm 1, MCS 9, 2 streams (Fig. 5.11)",
                    ("value", ""),
                    ("converged_s", "s / MPDUs"),
                    &["series"],
                )
                .only("param", "controller")
                .draw(Draw::Bars(vec![
                    ("converged_s", "settled after (s)"),
                    ("level_sd", "SD of slot level (MPDUs)"),
                    ("delay_ms", "delay (ms)"),
                ])),
                Chart::lines(
                    format!("{stem}_three_stations"),
                    "Three stations (1, 20, 35 m), one agg-io at the sender: level against the §5.3 allocation",
                    ("station", ""),
                    ("level", "μ_N (MPDUs)"),
                    &["station"],
                )
                .only("param", "stations")
                .draw(Draw::Bars(vec![
                    ("level", "level"),
                    ("pf_level", "§5.3 allocation"),
                ])),
                Chart::lines(
                    format!("{stem}_three_stations_per_source"),
                    "Three stations (1, 20, 35 m), one agg-io per flow: level against the §5.3 allocation",
                    ("station", ""),
                    ("level", "μ_N (MPDUs)"),
                    &["station"],
                )
                .only("param", "stations_per_source")
                .draw(Draw::Bars(vec![
                    ("level", "level"),
                    ("pf_level", "§5.3 allocation"),
                ])),
            ],
        }
    }

    fn notes(&self, _o: &Options, rows: &[Row]) -> Vec<String> {
        let least_sd = |param: &str| {
            rows.iter()
                .filter(|r| r.param == param)
                .filter_map(|r| r.level_sd.map(|sd| (r.value, sd)))
                .min_by(|a, b| a.1.total_cmp(&b.1))
        };
        match self.group {
            Group::Gains => least_sd("delta_s")
                .map(|(delta, sd)| {
                    vec![format!(
                        "the least noise at Δ = {delta} s (SD {sd:.2} MPDUs); thesis: a sweet spot at Δ ≈ 1.25–2 s (seed line 483)"
                    )]
                })
                .unwrap_or_default(),
            Group::Streams => Vec::new(),
            Group::InnerOuter => least_sd("K1")
                .map(|(k1, sd)| {
                    vec![format!(
                        "the least noise at K₁ = {k1} (SD {sd:.2} MPDUs); thesis: insensitive to K₁ away from the limit K₁ = 2 (seed line 1094)"
                    )]
                })
                .unwrap_or_default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slots(levels: &[f64]) -> Vec<ReportedSlot> {
        levels
            .iter()
            .enumerate()
            .map(|(k, &level)| ReportedSlot {
                t_s: 0.5 * (k + 1) as f64,
                frames: 100,
                level,
                phy_mbps: 866.7,
                delay_ms: 1.0,
            })
            .collect()
    }

    #[test]
    fn settling_is_the_first_slot_after_the_last_one_outside_the_band() {
        let r = slots(&[5.0, 20.0, 30.0, 36.0, 33.0, 31.0, 32.0]);
        // 36 is outside 32 ± 3.2; the next slot ends at 2.5 s.
        assert_eq!(settle_time(&r, 0.0, 32.0), Some(2.5));
        assert_eq!(settle_time(&r, 1.0, 32.0), Some(1.5));
        assert_eq!(settle_time(&slots(&[31.0, 32.0]), 0.0, 32.0), Some(0.5));
        assert_eq!(settle_time(&slots(&[31.0, 50.0]), 0.0, 32.0), None);
        assert_eq!(settle_time(&[], 0.0, 32.0), None);
    }

    #[test]
    fn the_changing_channel_moves_between_mcs_8_and_9_about_every_five_seconds() {
        let c = channel_changes(1000);
        assert!(c.windows(2).all(|w| w[1].0 > w[0].0), "in time order");
        assert!(c
            .iter()
            .all(|&(at, mcs, nss)| (10..1000).contains(&at) && (mcs == 8 || mcs == 9) && nss == 2));
        // 990 s at a mean gap of E[max(X, 1)] = m + 1 − m(1 − e^(−1/m)) ≈ 5.09 s for X
        // exponential of mean m = 5: about 194 changes, whose count has an SD near
        // √194 ≈ 14 (7 %); ±25 % is over three of those.
        let m = CHANGE_EVERY_S;
        let expected = 990.0 / (m + 1.0 - m * (1.0 - (-1.0 / m).exp()));
        assert!(
            (c.len() as f64 - expected).abs() < 0.25 * expected,
            "{} changes, ≈ {expected:.0} expected",
            c.len()
        );
        let eights = c.iter().filter(|x| x.1 == 8).count() as f64 / c.len() as f64;
        assert!((0.35..0.65).contains(&eights), "{eights}");
        assert_eq!(c, channel_changes(1000), "one schedule");
    }

    #[test]
    fn saturation_is_the_first_run_of_full_slots_after_the_change() {
        // Slots end at 0.5, 1, …: the change at 1.2 s; full (≥ 60.8) at 2, 2.5, 3 s.
        let r = slots(&[64.0, 32.0, 32.0, 64.0, 61.0, 64.0, 40.0, 64.0]);
        assert_eq!(saturation_end(&r, 1.2, 64.0), Some(3.0));
        assert_eq!(saturation_end(&r, 3.6, 64.0), Some(4.0));
        assert_eq!(saturation_end(&slots(&[32.0; 4]), 0.0, 64.0), None);
    }
}
