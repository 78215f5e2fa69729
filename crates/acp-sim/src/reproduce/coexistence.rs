//! `coexistence`: the coexistence paper's §V-A (thesis §5.5.1, Figs. 5.3–5.6): 1, 2, 5, 10 and
//! 20 ACP flows beside 1, 2 and 5 bulk TCP CUBIC flows on a 12 Mbit/s WiFi access under the
//! three configurations of [`super::coexistence_net`] (BP, MP, BE); ACP+, and Seek beside it.
//! Per point: the ACP flows' mean age (each source's estimate from its ACKs, the paper's
//! measure; the age at the monitor beside it), their RTT, the ACP, TCP and total throughput,
//! the MAC retries of the ACP flows' stations, and the age over BP's at the same point.
//!
//! The rows, their measurement and the paper's numbers are shared with [`super::no_tcp`], which
//! runs other points of the same network.

use acp_core::controller::ControllerKind;
use serde::Serialize;

use super::access::seed_range;
use acp_netmodel::wifi::medium::VoiceQueue;

use super::coexistence_net::{
    voice_key, Coexistence, Config, StationQueues, AP_EGRESS_DISCIPLINE, INTERNET_DELAY_MS,
};
use super::harness::{
    by_point, stat, Chart, Declaration, Done, Draw, Job, Options, Plan, Source, Trace, View,
};
use super::per_source::per_source;
use crate::report::SimResult;

/// The numbers of ACP flows.
pub const ACP_FLOWS: [usize; 5] = [1, 2, 5, 10, 20];
/// The numbers of TCP flows.
pub const TCP_FLOWS: [usize; 3] = [1, 2, 5];
/// The controllers: the paper's, and ours beside it.
pub const CONTROLLERS: [ControllerKind; 2] = [ControllerKind::AcpPlus, ControllerKind::Seek];
/// The PHY rate of §V-A (Mbit/s).
pub const RATE_MBIT: f64 = 12.0;
/// Simulated seconds per run unless the caller says otherwise (the paper's runs: 1000 s).
pub const DEFAULT_SECS: u64 = 200;

/// The published numbers (seed `003_a8ec1da38bc36102.txt`, §V; thesis §5.5), ACP+'s.
pub mod paper {
    use super::Config;

    /// BP's mean age (ms) by ACP flows, whatever the TCP count: "≈ 220 ms for 1 - 2 ACP
    /// flows", "≈ 222 ms for 1, 2, and 5 TCP flows" with 5, "≈ 230.5 ms" with 20.
    pub const BP_AGE_MS: [(usize, f64); 4] = [(1, 220.0), (2, 220.0), (5, 222.0), (20, 230.5)];
    /// MP's mean age (ms) at (ACP, TCP) flows (§V-B, Fig. 7): 10 ACP: 230.7, 247.25, 309; 20
    /// ACP: 252.76, 298.9, 358.77 for 1, 2, 5 TCP.
    pub const MP_AGE_MS: [(usize, usize, f64); 6] = [
        (10, 1, 230.7),
        (10, 2, 247.25),
        (10, 5, 309.0),
        (20, 1, 252.76),
        (20, 2, 298.9),
        (20, 5, 358.77),
    ];
    /// MP's age over BP's (ms) at (ACP, TCP) flows: "about 9 ms", "38 ms", "55 ms", "130 ms".
    pub const MP_OVER_BP_MS: [(usize, usize, f64); 4] =
        [(2, 2, 9.0), (2, 5, 38.0), (5, 5, 55.0), (20, 5, 130.0)];
    /// BP's ACP sum throughput (Mbit/s): "0.8 Mbps for when we have 2 ACP flows and goes up to
    /// about 5 Mbps for 20".
    pub const BP_ACP_MBIT: [(usize, f64); 2] = [(2, 0.8), (20, 5.0)];
    /// The sum throughput of every configuration and count: "the very narrow range of 8.8 to
    /// 9 Mbps" (Mbit/s).
    pub const TOTAL_MBIT: (f64, f64) = (8.8, 9.0);
    /// TCP's sum throughput at 12 Mbit/s beside (ACP flows, low, high) (Mbit/s): "as high as 8
    /// Mbps" beside 1, "7 - 7.5" beside 5, "6 - 6.5" beside 10, "5 Mbps" beside 20.
    pub const TCP_MBIT: [(usize, f64, f64); 4] =
        [(1, 8.0, 8.0), (5, 7.0, 7.5), (10, 6.0, 6.5), (20, 5.0, 5.0)];
    /// §V-B, No TCP (ACP alone on 6 Mbit/s) by ACP flows: mean age (ms).
    pub const NO_TCP_AGE_MS: [(usize, f64); 5] = [
        (5, 209.43),
        (10, 219.18),
        (20, 243.79),
        (40, 275.15),
        (80, 327.41),
    ];
    /// Likewise, the ACP sum throughput (Mbit/s).
    pub const NO_TCP_ACP_MBIT: [(usize, f64); 5] =
        [(5, 2.0), (10, 2.9), (20, 3.7), (40, 4.0), (80, 5.0)];
    /// Likewise, the retries: "2% for 5 ACP flows and increase to 17% for 80".
    pub const NO_TCP_RETRIES_PCT: [(usize, f64); 2] = [(5, 2.0), (80, 17.0)];
    /// TCP alone on 6 Mbit/s: "≈ 5.5 Mbps" (Mbit/s).
    pub const TCP_ALONE_6_MBIT: f64 = 5.5;

    /// The published number for `field` at a point, ACP+'s (`config` at `wifi` Mbit/s with `acp`
    /// and `tcp` flows).
    pub fn at(field: &str, config: Config, wifi: f64, acp: usize, tcp: usize) -> Option<f64> {
        let one = |v: &[(usize, f64)]| v.iter().find(|x| x.0 == acp).map(|x| x.1);
        let two =
            |v: &[(usize, usize, f64)]| v.iter().find(|x| x.0 == acp && x.1 == tcp).map(|x| x.2);
        let bp = config == Config::BaselinePriority;
        let mp = config == Config::MultiaccessPriority;
        match field {
            "est_age_ms" if wifi == 12.0 && bp && tcp > 0 => one(&BP_AGE_MS),
            "est_age_ms" if wifi == 12.0 && mp && tcp > 0 => two(&MP_AGE_MS),
            "est_age_ms" if wifi == 6.0 && tcp == 0 => one(&NO_TCP_AGE_MS),
            "over_bp_ms" if wifi == 12.0 && mp => two(&MP_OVER_BP_MS),
            "acp_mbit_s" if wifi == 12.0 && bp && tcp > 0 => one(&BP_ACP_MBIT),
            "acp_mbit_s" if wifi == 6.0 && tcp == 0 => one(&NO_TCP_ACP_MBIT),
            "retries_pct" if wifi == 6.0 && tcp == 0 => one(&NO_TCP_RETRIES_PCT),
            "tcp_mbit_s" if wifi == 6.0 && acp == 0 => Some(TCP_ALONE_6_MBIT),
            _ => None,
        }
    }
}

/// One point: a configuration at a rate with so many ACP and TCP flows, and the controller.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    /// The part of the paper it belongs to (a table of its own).
    pub part: &'static str,
    /// The ACP flows' controller.
    pub controller: ControllerKind,
    /// The configuration.
    pub config: Config,
    /// The PHY rate (Mbit/s).
    pub wifi_mbit: f64,
    /// ACP flows.
    pub acp: usize,
    /// TCP flows.
    pub tcp: usize,
    /// The monitor's ACKs unmarked though the updates are ([`Coexistence::unmarked_acks`]).
    pub unmarked_acks: bool,
    /// How the AP orders each client's frames ([`Coexistence::ap_queue`]).
    pub ap_queue: StationQueues,
    /// What the clients' voice queues keep ([`Coexistence::voice_queue`]).
    pub voice_queue: VoiceQueue,
}

impl Point {
    /// Its scenario for `seed` and `o`'s payload and duration.
    pub fn scenario(&self, o: &Options, secs: u64, seed: u64) -> Coexistence {
        Coexistence {
            payload: o.payload.unwrap_or(super::coexistence_net::PAYLOAD),
            secs: o.secs.unwrap_or(secs),
            seed,
            unmarked_acks: self.unmarked_acks,
            ap_queue: self.ap_queue,
            voice_queue: self.voice_queue,
            ..Coexistence::new(
                self.config,
                self.acp,
                self.tcp,
                self.wifi_mbit,
                self.controller,
            )
        }
    }
}

/// The jobs of `points`, every one with each seed of `o` (`seeds` unless it says), the largest
/// first so that no thread is left with one at the end.
pub fn plan(points: &[Point], o: &Options, seeds: u64, secs: u64) -> Plan {
    let mut jobs = Vec::new();
    for (k, p) in points.iter().enumerate() {
        for seed in o.seed_list(seeds) {
            match p.scenario(o, secs, seed).scenario() {
                Ok(s) => jobs.push(Job::sim(k, s)),
                Err(e) => unreachable!("the coexistence points are well formed: {e}"),
            }
        }
    }
    jobs.sort_by_key(|j| std::cmp::Reverse(points[j.point].acp + points[j.point].tcp));
    Plan { jobs }
}

/// One run's measurements.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Measure {
    /// The ACP flows' mean age as their sources estimate it (s).
    pub est_age: f64,
    /// Their mean age at the monitor (s).
    pub age: f64,
    /// Their mean RTT (s).
    pub rtt: f64,
    /// Their sum throughput (bit/s).
    pub acp: f64,
    /// The TCP flows' sum throughput (bit/s).
    pub tcp: f64,
    /// Retransmissions of the stations that carry ACP flows, % of their attempts.
    pub retries: f64,
}

/// The measurements of `r`, a run of a [`Coexistence`] scenario (with no ACP flow the ACP
/// fields are NaN, with no TCP flow `tcp` is 0). The scenario puts its ACP flows on its first
/// clients, so their retries are those of the first as many stations (after the AP) as there are
/// ACP flows (under BP, the one).
pub fn measure(r: &SimResult) -> Measure {
    let acp_flows = r.flows.iter().filter(|f| f.kind == "acp").count();
    let nan_if_none = |x: f64| if acp_flows == 0 { f64::NAN } else { x };
    let s = per_source(r);
    let (attempts, retries) = r
        .wifi
        .iter()
        .flat_map(|w| w.per_station.iter().skip(1).take(acp_flows))
        .fold((0, 0), |(a, t), p| {
            (a + p.counts.attempts, t + p.counts.retries)
        });
    Measure {
        est_age: nan_if_none(s.est_age),
        age: nan_if_none(s.age),
        rtt: nan_if_none(s.rtt),
        acp: s.sum_throughput,
        tcp: r
            .flows
            .iter()
            .filter(|f| f.kind == "tcp")
            .map(|f| f.throughput_bps)
            .sum(),
        retries: nan_if_none(100.0 * retries as f64 / attempts.max(1) as f64),
    }
}

/// [`measure`] of a simulation run (the coexistence reproductions run nothing else).
pub fn measure_done(done: Done<'_>) -> Measure {
    match done {
        Done::Sim(r) => measure(r),
        Done::Oracle(_) | Done::Lab(_) => unreachable!("the coexistence runs are simulations"),
    }
}

/// One point over the seeds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// The part of the paper.
    pub part: &'static str,
    /// The ACP flows' controller (`none` without ACP flows).
    pub controller: String,
    /// BP, MP or BE.
    pub config: Config,
    /// Whether the ACP flows' ACKs carry CS7 as their updates (BP and MP; `false` for BE and
    /// for the runs with [`Coexistence::unmarked_acks`]).
    pub acks_marked: bool,
    /// How the AP ordered each client's frames: `per-station` (arrival order) or `fq`.
    pub ap_queue: StationQueues,
    /// What the clients' voice queues kept: `fifo`, `freshest` or `freshest-preempt`.
    pub voice_queue: &'static str,
    /// The 802.11g PHY rate.
    pub wifi_mbit_s: f64,
    /// ACP flows.
    pub acp_flows: usize,
    /// TCP flows.
    pub tcp_flows: usize,
    /// Seeds run.
    pub seeds: usize,
    /// The ACP flows' mean time-average age as each source estimates it from its ACKs (ms):
    /// the paper's measure.
    pub est_age_ms: f64,
    /// Its 95 % confidence half-width over the seeds.
    pub est_age_ms_ci95: f64,
    /// The paper's.
    pub paper_est_age_ms: Option<f64>,
    /// Their mean age at the monitor (ms).
    pub age_ms: f64,
    /// `est_age_ms` over BP's at the same controller and counts (ms; MP and BE at 12 Mbit/s).
    pub over_bp_ms: Option<f64>,
    /// The paper's.
    pub paper_over_bp_ms: Option<f64>,
    /// The ACP flows' mean RTT (ms).
    pub rtt_ms: f64,
    /// Its 95 % confidence half-width.
    pub rtt_ms_ci95: f64,
    /// The ACP flows' sum throughput of fresh updates (Mbit/s, IP datagrams).
    pub acp_mbit_s: f64,
    /// Its 95 % confidence half-width.
    pub acp_mbit_s_ci95: f64,
    /// The paper's.
    pub paper_acp_mbit_s: Option<f64>,
    /// The TCP flows' sum throughput (Mbit/s, bytes the receivers read).
    pub tcp_mbit_s: f64,
    /// Its 95 % confidence half-width.
    pub tcp_mbit_s_ci95: f64,
    /// The paper's.
    pub paper_tcp_mbit_s: Option<f64>,
    /// ACP and TCP together (Mbit/s).
    pub total_mbit_s: f64,
    /// Its 95 % confidence half-width.
    pub total_mbit_s_ci95: f64,
    /// Retransmissions of the stations carrying ACP flows, % of their attempts (under BP the
    /// one client's, TCP's included).
    pub retries_pct: f64,
    /// Its 95 % confidence half-width.
    pub retries_pct_ci95: f64,
    /// The paper's.
    pub paper_retries_pct: Option<f64>,
}

/// The rows of `points` from the plan's measurements, BP's age subtracted where BP ran.
pub fn rows(points: &[Point], plan: &Plan, done: &[Option<Measure>]) -> Vec<Row> {
    let by = by_point(plan, done, points.len());
    let age_of = |p: &Point| {
        points
            .iter()
            .position(|q| q == p)
            .filter(|&k| !by[k].is_empty())
            .map(|k| stat(&by[k], |m| m.est_age).0 * 1e3)
    };
    let mut out = Vec::new();
    for (p, runs) in points.iter().zip(&by) {
        if runs.is_empty() {
            continue;
        }
        let ms = |f: fn(&Measure) -> f64, scale: f64| {
            let (m, ci) = stat(runs, f);
            (m * scale, ci * scale)
        };
        let (est_age, est_age_ci) = ms(|m| m.est_age, 1e3);
        let (rtt, rtt_ci) = ms(|m| m.rtt, 1e3);
        let (acp, acp_ci) = ms(|m| m.acp, 1e-6);
        let (tcp, tcp_ci) = ms(|m| m.tcp, 1e-6);
        let (total, total_ci) = ms(|m| m.acp + m.tcp, 1e-6);
        let (retries, retries_ci) = ms(|m| m.retries, 1.0);
        let bp = Point {
            config: Config::BaselinePriority,
            ..*p
        };
        // The paper's numbers stand beside its own configurations (this reproduction's and
        // no-tcp's parts), not beside the variants only ours runs.
        let published = |field| {
            (p.controller == ControllerKind::AcpPlus && !PARTS[1..].contains(&p.part))
                .then(|| paper::at(field, p.config, p.wifi_mbit, p.acp, p.tcp))
                .flatten()
        };
        out.push(Row {
            part: p.part,
            controller: if p.acp == 0 {
                "none".into()
            } else {
                p.controller.to_string()
            },
            config: p.config,
            acks_marked: p.scenario(&Options::default(), 0, 0).acks_marked(),
            ap_queue: p.ap_queue,
            voice_queue: voice_key(p.voice_queue),
            wifi_mbit_s: p.wifi_mbit,
            acp_flows: p.acp,
            tcp_flows: p.tcp,
            seeds: runs.len(),
            est_age_ms: est_age,
            est_age_ms_ci95: est_age_ci,
            paper_est_age_ms: published("est_age_ms"),
            age_ms: ms(|m| m.age, 1e3).0,
            over_bp_ms: (p.config != Config::BaselinePriority)
                .then(|| age_of(&bp))
                .flatten()
                .map(|a| est_age - a),
            paper_over_bp_ms: published("over_bp_ms"),
            rtt_ms: rtt,
            rtt_ms_ci95: rtt_ci,
            acp_mbit_s: acp,
            acp_mbit_s_ci95: acp_ci,
            paper_acp_mbit_s: published("acp_mbit_s"),
            tcp_mbit_s: tcp,
            tcp_mbit_s_ci95: tcp_ci,
            paper_tcp_mbit_s: published("tcp_mbit_s"),
            total_mbit_s: total,
            total_mbit_s_ci95: total_ci,
            retries_pct: retries,
            retries_pct_ci95: retries_ci,
            paper_retries_pct: published("retries_pct"),
        });
    }
    out
}

/// The setup line of a run of `o` (`what`: the points).
pub fn setup(what: &str, o: &Options, seeds: &[u64], secs: u64) -> String {
    let secs = o.secs.unwrap_or(secs);
    format!(
        "{what}; 802.11g EDCA access (20 × 20 m², no shadowing, 500 frames per station and \
         category, the AP serving its stations in turn), the AP's 1 Gbit/s egress under `{}`, \
         then {} ms each way to the server; {}-byte updates, bulk TCP CUBIC; {secs} s per run \
         ({} s warm-up), seeds {}; ages are the sources' estimates from their ACKs (the \
         paper's); mean ± 95 % CI over the seeds",
        AP_EGRESS_DISCIPLINE,
        INTERNET_DELAY_MS,
        o.payload.unwrap_or(super::coexistence_net::PAYLOAD),
        secs / 10,
        seed_range(seeds)
    )
}

/// Where the `paper_*` numbers come from.
pub fn sources() -> Vec<Source> {
    vec![
        Source {
            column: "paper_est_age_ms",
            locator: "coexistence paper §V-A (BP: ≈ 220 ms with 1–2 ACP, ≈ 222 with 5, ≈ 230.5 with 20) and §V-B, Fig. 7 (MP with 10 and 20 ACP; No TCP at 6 Mbit/s: 209.43 … 327.41 ms)",
        },
        Source {
            column: "paper_over_bp_ms",
            locator: "coexistence paper §V-A (MP − BP ≈ 9 / 38 / 55 / 130 ms at (ACP, TCP) = (2, 2) / (2, 5) / (5, 5) / (20, 5))",
        },
        Source {
            column: "paper_acp_mbit_s",
            locator: "coexistence paper §V-A, Fig. 4 (BP: 0.8 Mbit/s with 2 ACP, ≈ 5 with 20) and §V-B, Fig. 5b (No TCP: 2, 2.9, 3.7, 4, 5 Mbit/s)",
        },
        Source {
            column: "paper_tcp_mbit_s",
            locator: "coexistence paper §V-B (TCP alone on 6 Mbit/s ≈ 5.5 Mbit/s)",
        },
        Source {
            column: "paper_retries_pct",
            locator: "coexistence paper §V-B (No TCP: 2 % with 5 ACP, 17 % with 80)",
        },
    ]
}

/// `xs`'s least and greatest, "lo–hi" with `digits` decimals.
fn range(xs: &[f64], digits: usize) -> String {
    let lo = xs.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    format!("{lo:.digits$}–{hi:.digits$}")
}

/// The paper's three findings on age beside ours, for controller `c`'s rows of `part`: BP flat
/// in the TCP count, MP − BP growing with it, MP barely better than BE (BE's rows are always
/// those of the paper's part: its ACKs are unmarked either way).
fn findings(rows: &[Row], c: &str, part: &str) -> Vec<String> {
    let mut acps: Vec<usize> = rows
        .iter()
        .filter(|r| r.part == part)
        .map(|r| r.acp_flows)
        .collect();
    acps.sort_unstable();
    acps.dedup();
    if acps.is_empty() {
        return Vec::new();
    }
    let spread: Vec<String> = acps
        .iter()
        .filter_map(|&n| {
            let ages: Vec<f64> = TCP_FLOWS
                .iter()
                .filter_map(|&t| find(rows, part, c, Config::BaselinePriority, n, t))
                .map(|r| r.est_age_ms)
                .collect();
            (!ages.is_empty()).then(|| format!("{n} ACP {}", range(&ages, 1)))
        })
        .collect();
    let gaps: Vec<String> = acps
        .iter()
        .map(|&n| {
            let cells: Vec<String> = TCP_FLOWS
                .iter()
                .map(|&t| {
                    find(rows, part, c, Config::MultiaccessPriority, n, t)
                        .and_then(|r| r.over_bp_ms)
                        .map_or("-".into(), |g| format!("{g:+.1}"))
                })
                .collect();
            format!("{n} ACP {}", cells.join("/"))
        })
        .collect();
    let mut out = vec![
        format!("  {c} ({part}), BP age across 1/2/5 TCP (paper: unchanged, ≈ 220–230.5 ms): {} ms", spread.join(", ")),
        format!("  {c} ({part}), MP − BP at 1/2/5 TCP (paper: +9 at (2, 2), +38 at (2, 5), +55 at (5, 5), +130 at (20, 5)): {} ms", gaps.join("; ")),
    ];
    let be_over_mp: Vec<f64> = rows
        .iter()
        .filter(|r| r.part == part && r.controller == c && r.config == Config::MultiaccessPriority)
        .filter_map(|mp| {
            find(
                rows,
                PAPER,
                c,
                Config::BestEffort,
                mp.acp_flows,
                mp.tcp_flows,
            )
            .map(|be| be.est_age_ms - mp.est_age_ms)
        })
        .collect();
    if !be_over_mp.is_empty() {
        let mean = be_over_mp.iter().sum::<f64>() / be_over_mp.len() as f64;
        out.push(format!(
            "  {c} ({part}), BE − MP (paper: MP \"in general not much smaller\" than BE): mean {mean:+.1} ms, range {} ms",
            range(&be_over_mp, 1)
        ));
    }
    out
}

/// The part of the paper's three configurations.
pub const PAPER: &str = "coexistence";
/// The part of BP and MP with the monitor's ACKs unmarked.
pub const UNMARKED: &str = "coexistence, ACKs unmarked";
/// The part of BP and MP with the monitor's ACKs unmarked and the AP's fair queueing.
pub const UNMARKED_FQ: &str = "coexistence, ACKs unmarked, fq AP";
/// The part of BP and MP with the monitor's ACKs unmarked and the AP's fair queueing with CoDel.
pub const UNMARKED_FQ_CODEL: &str = "coexistence, ACKs unmarked, fq-codel AP";

/// The part of BP and MP with freshest voice queues at the clients.
pub const FRESHEST: &str = "coexistence, freshest voice queues";
/// The part of BP and MP with freshest-preempt voice queues at the clients.
pub const FRESHEST_PREEMPT: &str = "coexistence, freshest-preempt voice queues";

/// The parts, in the order of [`VARIANTS`].
pub const PARTS: [&str; 6] = [
    PAPER,
    UNMARKED,
    UNMARKED_FQ,
    UNMARKED_FQ_CODEL,
    FRESHEST,
    FRESHEST_PREEMPT,
];

/// One configuration run and the part (a table of its own) it belongs to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Variant {
    /// Its part.
    pub part: &'static str,
    /// BP, MP or BE.
    pub config: Config,
    /// The monitor's ACKs unmarked.
    pub unmarked_acks: bool,
    /// How the AP orders each client's frames.
    pub ap_queue: StationQueues,
    /// What the clients' voice queues keep.
    pub voice_queue: VoiceQueue,
}

/// `config` in `part` with the monitor's ACKs unmarked or not, the AP's queues and the clients'
/// voice queues.
const fn variant(
    part: &'static str,
    config: Config,
    unmarked_acks: bool,
    ap_queue: StationQueues,
    voice_queue: VoiceQueue,
) -> Variant {
    Variant {
        part,
        config,
        unmarked_acks,
        ap_queue,
        voice_queue,
    }
}

/// The configurations run, by part: the paper's three; BP and MP with the monitor's ACKs
/// unmarked, the run that tests why ours differ; those two again with the AP scheduling each
/// client's flows by fair queueing, the run that tests why the paper's BP stays flat, and with
/// CoDel behind the fair queueing as mac80211 has it, the run that tests why that BP fails with
/// many ACP flows; and BP and MP (ACKs marked) with the clients' voice queues keeping only fresh updates, without and
/// with pre-emption (`docs/COEXISTENCE.md`).
pub const VARIANTS: [Variant; 13] = {
    use Config::{BaselinePriority as Bp, BestEffort as Be, MultiaccessPriority as Mp};
    use StationQueues::{Fq, FqCodel, InTurn};
    use VoiceQueue::{Fifo, Freshest, FreshestPreempt};
    [
        variant(PAPER, Bp, false, InTurn, Fifo),
        variant(PAPER, Mp, false, InTurn, Fifo),
        variant(PAPER, Be, false, InTurn, Fifo),
        variant(UNMARKED, Bp, true, InTurn, Fifo),
        variant(UNMARKED, Mp, true, InTurn, Fifo),
        variant(UNMARKED_FQ, Bp, true, Fq, Fifo),
        variant(UNMARKED_FQ, Mp, true, Fq, Fifo),
        variant(UNMARKED_FQ_CODEL, Bp, true, FqCodel, Fifo),
        variant(UNMARKED_FQ_CODEL, Mp, true, FqCodel, Fifo),
        variant(FRESHEST, Bp, false, InTurn, Freshest),
        variant(FRESHEST, Mp, false, InTurn, Freshest),
        variant(FRESHEST_PREEMPT, Bp, false, InTurn, FreshestPreempt),
        variant(FRESHEST_PREEMPT, Mp, false, InTurn, FreshestPreempt),
    ]
};

/// The reproduction.
pub struct CoexistenceRepro;

/// The controllers of `o`: ACP+ and Seek, or those `--controllers` lists.
pub fn controllers(o: &Options) -> Vec<ControllerKind> {
    if o.controllers.is_empty() {
        CONTROLLERS.to_vec()
    } else {
        o.controllers.clone()
    }
}

/// The points of `o`: every controller (or `--controllers`), configuration, ACP count (or
/// `--clients`) and TCP count, at 12 Mbit/s.
fn points(o: &Options) -> Vec<Point> {
    let controllers = controllers(o);
    let acps = if o.clients.is_empty() {
        ACP_FLOWS.to_vec()
    } else {
        o.clients.clone()
    };
    let mut out = Vec::new();
    for &controller in &controllers {
        for v in VARIANTS {
            for &acp in &acps {
                for tcp in TCP_FLOWS {
                    out.push(Point {
                        part: v.part,
                        controller,
                        config: v.config,
                        wifi_mbit: RATE_MBIT,
                        acp,
                        tcp,
                        unmarked_acks: v.unmarked_acks,
                        ap_queue: v.ap_queue,
                        voice_queue: v.voice_queue,
                    });
                }
            }
        }
    }
    out
}

/// The row of a point of `part`, if it ran.
fn find<'a>(
    rows: &'a [Row],
    part: &str,
    c: &str,
    config: Config,
    acp: usize,
    tcp: usize,
) -> Option<&'a Row> {
    rows.iter().find(|r| {
        r.part == part
            && r.controller == c
            && r.config == config
            && r.acp_flows == acp
            && r.tcp_flows == tcp
    })
}

impl Declaration for CoexistenceRepro {
    type Measure = Measure;
    type Row = Row;

    fn name(&self) -> &'static str {
        "coexistence"
    }

    fn about(&self) -> &'static str {
        "ACP+ and Seek beside 1–5 TCP CUBIC flows on a 12 Mbit/s WiFi access: Baseline Priority, Multiaccess Priority, Best Effort (coexistence paper §V-A)"
    }

    fn default_seeds(&self) -> u64 {
        3
    }

    fn takes_controllers(&self) -> bool {
        true
    }

    fn plan(&self, o: &Options) -> Plan {
        plan(&points(o), o, self.default_seeds(), DEFAULT_SECS)
    }

    fn measure(&self, _job: &Job, done: Done<'_>) -> Measure {
        measure_done(done)
    }

    fn rows(&self, o: &Options, plan: &Plan, done: &[Option<Measure>]) -> Vec<Row> {
        rows(&points(o), plan, done)
    }

    fn setup(&self, o: &Options) -> String {
        setup(
            "coexistence paper §V-A: 1, 2, 5, 10, 20 ACP flows (ACP+ and Seek) beside 1, 2, 5 \
             TCP flows under BP (one client, ACP CS7), MP (a client per flow, ACP CS7), BE (a \
             client per flow, unmarked) at 12 Mbit/s",
            o,
            &o.seed_list(self.default_seeds()),
            DEFAULT_SECS,
        )
    }

    fn sources(&self) -> Vec<Source> {
        sources()
    }

    fn views(&self) -> Vec<View> {
        let keys = ["part", "controller", "config", "acp_flows", "tcp_flows"];
        let view = |title: &str, more: &[&str]| {
            let columns: Vec<&str> = keys.iter().chain(more).copied().collect();
            View::new(title, &columns)
        };
        vec![
            view(
                "mean age of the ACP flows (Fig. 3), over BP's, RTT (Fig. 6)",
                &["est_age_ms", "over_bp_ms", "age_ms", "rtt_ms"],
            ),
            view(
                "throughput (Fig. 4) and the ACP stations' MAC retries (Fig. 5a)",
                &["acp_mbit_s", "tcp_mbit_s", "total_mbit_s", "retries_pct"],
            ),
        ]
    }

    fn charts(&self, o: &Options, _traces: &[Trace]) -> Vec<Chart> {
        let mut charts = Vec::new();
        for c in controllers(o) {
            let label = c.to_string();
            let stem = label.replace('+', "_plus");
            // Every part's ages; the paper's part's RTTs and retries. A part's file carries its
            // suffix (the paper's none).
            let mut drawn: Vec<(&str, &str, &str)> = PARTS
                .iter()
                .map(|&part| ("est_age_ms", "mean age of the ACP flows (ms)", part))
                .collect();
            drawn.push(("rtt_ms", "mean RTT of the ACP flows (ms)", PAPER));
            drawn.push(("retries_pct", "MAC retries of the ACP stations (%)", PAPER));
            for (field, axis, part) in drawn {
                let suffix: String = part
                    .trim_start_matches(PAPER)
                    .chars()
                    .map(|ch| if ch.is_ascii_alphanumeric() { ch } else { '_' })
                    .collect();
                charts.push(
                    Chart::lines(
                        format!("coexistence_{stem}_{field}{suffix}"),
                        format!("{axis}, {label}, 12 Mbit/s ({part})"),
                        ("tcp_flows", "TCP flows"),
                        (field, axis),
                        &["config", "acp_flows"],
                    )
                    .only("controller", label.clone())
                    .only("part", part),
                );
            }
            charts.push(
                Chart::lines(
                    format!("coexistence_{stem}_throughput"),
                    format!("sum throughput (Fig. 4), {label}"),
                    ("acp_flows", ""),
                    ("total_mbit_s", "Mbit/s"),
                    &["config", "tcp_flows"],
                )
                .only("controller", label.clone())
                .only("part", PAPER)
                .draw(Draw::Bars(vec![
                    ("acp_mbit_s", "ACP"),
                    ("tcp_mbit_s", "TCP"),
                ])),
            );
        }
        charts
    }

    fn notes(&self, _o: &Options, rows: &[Row]) -> Vec<String> {
        let mut notes = vec!["the paper's findings beside ours:".to_string()];
        let mut controllers: Vec<&str> = rows.iter().map(|r| r.controller.as_str()).collect();
        controllers.dedup();
        for c in controllers {
            for part in PARTS {
                notes.extend(findings(rows, c, part));
            }
            let mine = || rows.iter().filter(|r| r.controller == c && r.part == PAPER);
            let totals: Vec<f64> = mine().map(|r| r.total_mbit_s).collect();
            if !totals.is_empty() {
                let (lo, hi) = paper::TOTAL_MBIT;
                notes.push(format!(
                    "  {c}, total throughput (paper: {lo}–{hi} Mbit/s everywhere): {}",
                    range(&totals, 2)
                ));
            }
            let tcp: Vec<String> = paper::TCP_MBIT
                .iter()
                .filter_map(|&(n, lo, hi)| {
                    let ours: Vec<f64> = mine()
                        .filter(|r| r.acp_flows == n)
                        .map(|r| r.tcp_mbit_s)
                        .collect();
                    (!ours.is_empty())
                        .then(|| format!("{n} ACP paper {lo}–{hi}, ours {}", range(&ours, 2)))
                })
                .collect();
            if !tcp.is_empty() {
                notes.push(format!(
                    "  {c}, TCP's sum throughput beside ACP (Mbit/s): {}",
                    tcp.join("; ")
                ));
            }
        }
        notes.push("differences from the paper are explained in docs/COEXISTENCE.md".into());
        notes
    }

    fn files(&self, _o: &Options) -> Vec<(String, String)> {
        Config::ALL
            .iter()
            .map(|&c| {
                let s = Coexistence::new(c, 5, 2, RATE_MBIT, ControllerKind::AcpPlus);
                (
                    format!("scenarios/{}_5acp_2tcp.toml", c.label().to_lowercase()),
                    s.text(),
                )
            })
            .collect()
    }
}
