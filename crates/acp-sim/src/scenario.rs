//! Scenario files, format 2 (TOML), documented in `docs/SIMULATOR.md`; examples in `scenarios/`.
//!
//! ```toml
//! format = 2
//! name = "one bottleneck"
//! seed = 1
//! duration = "300s"
//! warmup = "30s"
//!
//! [[link]]                       # both ways unless both_ways = false
//! from = "src"
//! to = "mon"
//! rate = "1mbit"                 # or trace = "cell.trace" (Mahimahi format)
//! delay = "10ms"
//! queue = 100                    # packets, or queue_bytes = 150000
//! loss = 0.01                    # or { model = "gilbert-elliott", p = 0.01, r = 0.3 }
//!
//! [[flow]]
//! type = "acp"                   # acp | updates | cross | tcp: each type has exactly its own
//! name = "sensor"                #   fields
//! count = 16                     # sensor#1 … sensor#16, starts staggered by a seeded draw
//! controller = "acp+"            # seek (the default) | acp+ | acp[:KAPPA] | lazy | fixed:RATE
//! path = ["src", "mon"]          # or, one session over several paths (docs/MULTIPATH.md):
//!                                #   paths = [["src", "a", "mon"], ["src", "b", "mon"]]
//!                                #   scheduler = "qaware"  # | minsrtt | roundrobin | duplicate
//!
//! [[flow]]
//! type = "tcp"                   # data along the path, ACKs back along the reversed path
//! cc = "cubic"                   # newreno (default) | cubic | bbr | vegas | yeah
//! app = "updates"                # bulk (default) | updates
//! payload = 536                  # updates: bytes per update record
//! rate = 40                      # updates: one every 1/40 s; without it, at will
//! # notsent_lowat = 1072         # at will: write when poll() wakes (under half of it unsent)
//! smss = 536                     # default 1448
//! nodelay = true                 # TCP_NODELAY (default false: Nagle on, as in Linux)
//! window = "packets"             # bytes (default: RFC 5681, ns-3) | packets (Linux)
//! delayed_ack = { every = 2, timeout = "40ms" }   # default; false ACKs every segment;
//!                                #   linux = false: ns-3's receiver (no receive-MSS
//!                                #   estimate, pushed or quick ACKs; tcp::receiver)
//! gro = true                     # stretch ACKs: one per GRO super-packet of 64 KiB, or of
//!                                #   N bytes with gro = N (default false; tcp::gro)
//! sack = false                   # no SACK blocks: NewReno's recovery (default true: RACK-TLP)
//! receive_buffer = 65536         # rwnd (default 1 MiB); send_buffer likewise
//! # rmem = [300000, 900000]      # or Linux's tcp_rmem default, max: window max/2 (autotuned)
//! path = ["src", "mon"]          # also initial_window (10), min_rto (200ms), initial_rto (1s),
//!                                #   max_rto (60s)
//!
//! [[flow]]
//! type = "mptcp"                 # multipath TCP: one subflow per path
//! app = "cbr"                    # bulk (default) | cbr (with rate = "12mbit") |
//!                                #   file (with size = BYTES: completion_s in the results)
//! rate = "12mbit"
//! paths = [["src", "wifi", "mon"], ["src", "lte", "mon"]]   # instead of `path`
//! scheduler = "qaware"           # linux-default (default) | minsrtt | round-robin | ecf |
//!                                #   blest | daps | qaware
//! coupling = "lia"               # none (default: each subflow its own cc) | lia (RFC 6356)
//! device_sampling = "10ms"       # Algorithm 1's Δt for the device queues' dequeue rate
//! assign = "window"              # when a subflow has cwnd room (default) | on-write (each
//!                                #   write at once into the picked subflow's send buffer)
//! receive_buffer = 262144        # the connection's; every tcp key but payload/
//!                                #   notsent_lowat/rmem applies to each subflow
//! ```
//!
//! Errors name the line and the field (the CLI adds the file): the `toml` crate reports the line
//! of a bad link or top-level value; flows are read in two steps (their common fields, then the
//! fields of their type), and errors there name the line where the `[[flow]]` starts.

use std::path::Path;
use std::time::Duration;

use acp_core::controller::ControllerKind;
use acp_core::multipath::PathRule;
use acp_core::{SourceConfig, Time};
use std::sync::Arc;

use acp_netmodel::wifi::ampdu::Aggregation;
use acp_netmodel::wifi::channel::{
    ChannelConfig, ErrorModel, Placement, Position, ReferenceLoss, WifiFrames, MAX_RADIO_STATIONS,
};
use acp_netmodel::wifi::downlink::{
    DownlinkConfig, RateChange, RateControl, Retransmissions, StationConfig, Traffic,
};
use acp_netmodel::wifi::medium::{
    ApQueue, Beacons, Countdown, MacTiming, MediumConfig, Reception, VoiceQueue,
};
use acp_netmodel::wifi::minstrel::MinstrelConfig;
use acp_netmodel::wifi::phy::Rate as PhyRate;
use acp_netmodel::wifi::phy::{edca_defaults, Mcs, OfdmRate, PhyConfig, Standard};
use acp_netmodel::wifi::FrameModel;
use acp_netmodel::{
    Discipline, Jitter, LinkConfig, LossModel, Process, QueueLimit, Service, Streams, Trace,
};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use thiserror::Error;

use crate::engine::{BuildError, Sim, SimConfig};
use crate::flows::{AcpPaths, FlowKind, FlowSpec};
use crate::mptcp::connection::{MptcpApp, MptcpConfig};
use crate::slot_reports::ReportSettings;
use crate::spec::{describe_toml_error, Dur, LossToml, Rate, ScheduleToml};
use crate::tcp::gro::Gro;
use crate::tcp::{Application, DelayedAck, Rmem, TcpConfig, UpdateMode, WindowUnit};
use crate::topology::{FramesBuilder, Topology};

/// Why a scenario could not be loaded.
#[derive(Debug, Error)]
pub enum ScenarioError {
    /// Not valid TOML, a missing or unknown key, a value of the wrong form, out of range or
    /// inconsistent; the message names the line and the field.
    #[error("{0}")]
    Invalid(String),
    /// The network could not be built.
    #[error(transparent)]
    Build(#[from] BuildError),
}

fn invalid(msg: impl Into<String>) -> ScenarioError {
    ScenarioError::Invalid(msg.into())
}

/// The only format this version reads.
pub const FORMAT: u32 = 2;

#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
enum ServiceToml {
    #[default]
    Deterministic,
    Exponential,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
enum JitterToml {
    Amount(Dur),
    Full {
        max: Dur,
        #[serde(default)]
        reorder: bool,
    },
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct OutageToml {
    at: Dur,
    duration: Dur,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct LinkToml {
    from: String,
    to: String,
    rate: Option<Rate>,
    trace: Option<String>,
    #[serde(default)]
    delay: Option<Dur>,
    queue: Option<usize>,
    queue_bytes: Option<u64>,
    #[serde(default)]
    service: ServiceToml,
    #[serde(default = "yes")]
    both_ways: bool,
    loss: Option<LossToml>,
    jitter: Option<JitterToml>,
    /// DSCPs per priority class, highest first.
    priority: Option<Vec<Vec<u8>>>,
    /// A queue discipline by name (`acp_netmodel::DISCIPLINE_NAMES`); not with `priority`.
    discipline: Option<String>,
    #[serde(default)]
    outages: Vec<OutageToml>,
    schedule: Option<ScheduleToml>,
}

#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
enum StandardToml {
    #[default]
    G,
    N,
    Ac,
}

#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
enum AccessToml {
    #[default]
    Dcf,
    Edca,
}

/// How the AP orders its frames: one FIFO, its stations in turn, or its stations in turn and
/// each station's flows by mac80211's fair queueing.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
enum ApQueueToml {
    #[default]
    Fifo,
    PerStation,
    Fq,
    FqCodel,
}

/// What the client stations' voice queues keep: every frame, or only fresh updates.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
enum VoiceQueueToml {
    #[default]
    Fifo,
    Freshest,
    FreshestPreempt,
}

/// A shared WiFi channel: an AP and `count` stations named `stations#1…#count` (or `stations`
/// when `count = 1`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct WifiToml {
    name: Option<String>,
    ap: String,
    stations: String,
    #[serde(default = "one_usize")]
    count: usize,
    #[serde(default)]
    standard: StandardToml,
    /// 802.11g: the OFDM rate (6–54 Mbit/s).
    rate: Option<Rate>,
    /// 802.11n/ac: MCS index, spatial streams, channel width (MHz), short guard interval.
    mcs: Option<u8>,
    #[serde(default = "one_u8")]
    spatial_streams: u8,
    #[serde(default = "twenty")]
    width: u16,
    #[serde(default)]
    short_gi: bool,
    /// Area (m × m) the stations are placed in, AP at the centre.
    #[serde(default = "twenty_square")]
    area: [f64; 2],
    exponent: Option<f64>,
    /// σ of the log-normal shadowing (dB).
    #[serde(default)]
    shadowing: f64,
    tx_power: Option<f64>,
    /// Place the stations with this seed instead of the run's.
    placement_seed: Option<u64>,
    #[serde(default)]
    access: AccessToml,
    /// Frames each station (and access category) may hold.
    #[serde(default = "hundred")]
    queue: usize,
    #[serde(default)]
    ap_queue: ApQueueToml,
    /// Under EDCA: what the client stations' voice (AC_VO) queues keep.
    #[serde(default)]
    voice_queue: VoiceQueueToml,
    retry_limit: Option<u32>,
    /// Per-receiver SINR reception with capture, or whole-medium collisions.
    #[serde(default)]
    reception: ReceptionToml,
    /// Path loss at 1 m: dB, or `"friis"`.
    reference_loss: Option<ReferenceLossToml>,
    /// Frame errors from the SNR: ns-3's tables (default) or the NIST formulas.
    #[serde(default)]
    error_model: ErrorModelToml,
    /// Backoff countdown rule (default: `legacy` with `access = "dcf"`, `edca` with EDCA).
    countdown: Option<CountdownToml>,
    /// The AP's beacons: on, off, or on at this interval.
    #[serde(default = "default_beacons")]
    beacons: BeaconsToml,
    /// Station positions (m east and north of the AP), one per station, instead of `area`'s
    /// random placement.
    positions: Option<Vec<[f64; 2]>>,
    /// The 802.11ac A-MPDU downlink instead of the one-frame medium (`aggregation = {}` for its
    /// defaults).
    aggregation: Option<AggregationToml>,
}

/// `aggregation`: the A-MPDU downlink's settings (`acp_netmodel::wifi::downlink`). It has its
/// own per-station AP queues (`queue` packets each), EDCA best-effort access and whole-medium
/// collisions, so `access`, `ap_queue`, `voice_queue`, `countdown` and `reception` do not apply to it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct AggregationToml {
    /// MPDUs per A-MPDU at most (1–64).
    #[serde(default = "sixty_four")]
    max_mpdus: usize,
    /// Packets per MPDU (an A-MSDU above 1).
    #[serde(default = "one_usize")]
    amsdu: usize,
    /// Longest PPDU (µs), at most 5484.
    #[serde(default = "ppdu_max_us")]
    max_duration_us: u64,
    /// Retransmissions in frames of their own (`dedicated`) or at the head of the next
    /// (`mixed`).
    #[serde(default)]
    retransmissions: RetransmissionsToml,
    /// The configured MCS (`fixed`) or Minstrel-HT-like adaptation up to it (`minstrel`).
    #[serde(default)]
    rate_control: RateControlToml,
    /// The first `legacy` stations are legacy stations: the AP always has packets for them.
    #[serde(default)]
    legacy: usize,
    /// Bytes of a legacy station's packets.
    #[serde(default = "fifteen_hundred")]
    legacy_packet: u32,
    /// The slot of the stations' aggregation reports (ms; `crate::slot_reports`).
    #[serde(default = "five_hundred")]
    report_ms: u64,
    /// The stations' monitors answer at most one update per this many ms per flow (0: every
    /// update).
    #[serde(default)]
    feedback_ms: u64,
    /// MPDUs a station's uplink A-MPDU holds at most (1: every uplink packet alone).
    #[serde(default = "one_usize")]
    uplink_mpdus: usize,
    /// Changes of the fixed rate during the run (`rate_control = "fixed"` only).
    #[serde(default)]
    rate_changes: Vec<RateChangeToml>,
}

/// One of `aggregation.rate_changes`: from `at` on, the stations use MCS `mcs` with
/// `spatial_streams` streams (the channel width and guard interval stay the section's).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RateChangeToml {
    at: Dur,
    mcs: u8,
    spatial_streams: u8,
}

/// `aggregation.retransmissions`.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
enum RetransmissionsToml {
    #[default]
    Dedicated,
    Mixed,
}

/// `aggregation.rate_control`.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
enum RateControlToml {
    #[default]
    Fixed,
    Minstrel,
}

fn sixty_four() -> usize {
    64
}
fn ppdu_max_us() -> u64 {
    5_484
}
fn fifteen_hundred() -> u32 {
    1500
}
fn five_hundred() -> u64 {
    500
}

/// The stations' report settings of `aggregation`.
fn report_settings(a: &AggregationToml) -> Result<ReportSettings, String> {
    if !(1..=u64::from(u16::MAX)).contains(&a.report_ms) {
        return Err(format!(
            "aggregation.report_ms = {}: a report slot is 1–65535 ms",
            a.report_ms
        ));
    }
    Ok(ReportSettings {
        slot: Duration::from_millis(a.report_ms),
        feedback: (a.feedback_ms > 0).then(|| Duration::from_millis(a.feedback_ms)),
    })
}

/// The A-MPDU downlink of a `[[wifi]]` section at `phy`, its stations' SNRs left at ∞ (the run
/// fills them in from its placement).
fn downlink_config(
    w: &WifiToml,
    a: &AggregationToml,
    phy: &PhyConfig,
    error_model: ErrorModel,
) -> Result<DownlinkConfig, String> {
    let PhyRate::Mcs(mcs) = phy.rate else {
        return Err("aggregation needs standard = \"ac\"".into());
    };
    if phy.standard != Standard::Ac {
        return Err("aggregation needs standard = \"ac\"".into());
    }
    if a.legacy > w.count {
        return Err(format!(
            "aggregation.legacy = {} but there are {} stations",
            a.legacy, w.count
        ));
    }
    let rate = match a.rate_control {
        RateControlToml::Fixed => RateControl::Fixed(mcs),
        RateControlToml::Minstrel => RateControl::Minstrel(MinstrelConfig {
            short_gi: mcs.short_gi,
            ..MinstrelConfig::new(mcs.width_mhz, mcs.spatial_streams)
        }),
    };
    let stations = (0..w.count)
        .map(|k| StationConfig {
            rate,
            snr_db: f64::INFINITY,
            traffic: if k < a.legacy {
                Traffic::Saturated {
                    packet_bytes: a.legacy_packet,
                }
            } else {
                Traffic::Offered
            },
        })
        .collect();
    let mut config = DownlinkConfig::new(stations);
    config.aggregation = Aggregation {
        max_mpdus: a.max_mpdus,
        msdus_per_mpdu: a.amsdu,
        max_duration: Duration::from_micros(a.max_duration_us),
    };
    if let Some(r) = w.retry_limit {
        config.retry_limit = r;
    }
    config.queue_limit = w.queue;
    config.uplink_mpdus = a.uplink_mpdus;
    config.retransmissions = match a.retransmissions {
        RetransmissionsToml::Dedicated => Retransmissions::Dedicated,
        RetransmissionsToml::Mixed => Retransmissions::Mixed,
    };
    config.beacon_interval = w.beacons.0;
    config.error_model = error_model;
    if !a.rate_changes.is_empty() && !matches!(a.rate_control, RateControlToml::Fixed) {
        return Err("aggregation.rate_changes needs rate_control = \"fixed\"".into());
    }
    config.rate_changes = a
        .rate_changes
        .iter()
        .map(|c| RateChange {
            at: Time::ZERO + c.at.0,
            mcs: Mcs {
                index: c.mcs,
                spatial_streams: c.spatial_streams,
                ..mcs
            },
        })
        .collect();
    config.validate()?;
    Ok(config)
}

/// `reception`.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
enum ReceptionToml {
    #[default]
    Sinr,
    Collision,
}

/// `error_model`.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
enum ErrorModelToml {
    #[default]
    Table,
    Nist,
}

/// `countdown`.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "lowercase")]
enum CountdownToml {
    Edca,
    Legacy,
}

/// `reference_loss`: dB at 1 m, or `"friis"` (free space at the carrier).
#[derive(Debug, Clone, Copy)]
struct ReferenceLossToml(ReferenceLoss);

impl<'de> Deserialize<'de> for ReferenceLossToml {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = ReferenceLossToml;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a loss in dB at 1 m (such as 46.6777) or \"friis\"")
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Self::Value, E> {
                if v.is_finite() {
                    Ok(ReferenceLossToml(ReferenceLoss::Db(v)))
                } else {
                    Err(E::custom(format!("reference loss {v} dB must be finite")))
                }
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Self::Value, E> {
                self.visit_f64(v as f64)
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
                match v {
                    "friis" => Ok(ReferenceLossToml(ReferenceLoss::Friis)),
                    _ => Err(E::custom(format!(
                        "reference_loss \"{v}\": give dB at 1 m (a number) or \"friis\""
                    ))),
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// `beacons`: `true` (every 102.4 ms, ns-3's default), `false`, or an interval (`"50ms"`).
#[derive(Debug, Clone, Copy)]
struct BeaconsToml(Option<Duration>);

/// ns-3's `ApWifiMac::BeaconInterval` default: 102.4 ms (100 TU).
const DEFAULT_BEACON_INTERVAL: Duration = Duration::from_micros(102_400);

fn default_beacons() -> BeaconsToml {
    BeaconsToml(Some(DEFAULT_BEACON_INTERVAL))
}

impl<'de> Deserialize<'de> for BeaconsToml {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = BeaconsToml;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("true, false or a beacon interval with a unit (such as \"102.4ms\")")
            }
            fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Self::Value, E> {
                Ok(BeaconsToml(v.then_some(DEFAULT_BEACON_INTERVAL)))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
                acp_core::units::parse_duration(v)
                    .map(|d| BeaconsToml(Some(d)))
                    .map_err(|e| E::custom(format!("beacons \"{v}\": {e}")))
            }
        }
        d.deserialize_any(V)
    }
}

fn one_u8() -> u8 {
    1
}
fn twenty() -> u16 {
    20
}
fn twenty_square() -> [f64; 2] {
    [20.0, 20.0]
}
fn hundred() -> usize {
    100
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScenarioToml {
    format: Option<u32>,
    name: Option<String>,
    #[serde(default = "one")]
    seed: u64,
    duration: Dur,
    #[serde(default)]
    warmup: Option<Dur>,
    #[serde(default)]
    trace_points: usize,
    #[serde(default, rename = "link")]
    links: Vec<LinkToml>,
    #[serde(default)]
    wifi: Vec<toml::Spanned<WifiToml>>,
    #[serde(default, rename = "flow")]
    flows: Vec<toml::Spanned<toml::Table>>,
}

fn yes() -> bool {
    true
}
fn one() -> u64 {
    1
}

/// The arrival pattern of an `updates` or `cross` flow: `"periodic"` (also `"cbr"`),
/// `"poisson"`, or `{ onoff = { on = "1s", off = "1s" } }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
enum ProcessToml {
    #[serde(alias = "cbr")]
    Periodic,
    Poisson,
    Onoff {
        on: Dur,
        off: Dur,
    },
}

impl ProcessToml {
    fn process(&self) -> Process {
        match self {
            ProcessToml::Periodic => Process::Periodic,
            ProcessToml::Poisson => Process::Poisson,
            ProcessToml::Onoff { on, off } => Process::OnOff {
                on: on.0,
                off: off.0,
            },
        }
    }
}

/// Fields every flow has.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct CommonToml {
    name: Option<String>,
    path: Option<Vec<String>>,
    start: Option<Dur>,
    stop: Option<Dur>,
    #[serde(default)]
    dscp: u8,
    #[serde(default = "one_usize")]
    count: usize,
    stagger: Option<Dur>,
}

fn one_usize() -> usize {
    1
}

/// Keys of [`CommonToml`], split off a flow's table before its type's fields are read.
const COMMON: [&str; 7] = ["name", "path", "start", "stop", "dscp", "count", "stagger"];

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct AcpToml {
    #[serde(default = "default_controller")]
    controller: String,
    #[serde(default = "default_payload")]
    payload: u32,
    min_rate: Option<f64>,
    max_rate: Option<f64>,
    probes: Option<u32>,
    probe_timeout: Option<Dur>,
    alpha: Option<f64>,
    floor_rate: Option<f64>,
    outage_after: Option<Dur>,
    ack_dscp: Option<u8>,
    /// A multipath source's paths (instead of `path`).
    paths: Option<Vec<Vec<String>>>,
    /// A multipath source's scheduler (`qaware` by default).
    scheduler: Option<String>,
    /// The sender the flow belongs to: one controller over all flows that name it.
    sender: Option<String>,
}

fn default_controller() -> String {
    "seek".into()
}
fn default_payload() -> u32 {
    100
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct UpdatesToml {
    /// Updates per second.
    rate: f64,
    #[serde(default = "periodic")]
    process: ProcessToml,
    #[serde(default = "default_payload")]
    size: u32,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct CrossToml {
    rate: Rate,
    #[serde(default = "poisson")]
    process: ProcessToml,
    #[serde(default = "default_cross_size")]
    size: u32,
}

/// What a TCP flow's sending application does.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
enum TcpAppToml {
    #[default]
    Bulk,
    Updates,
}

/// `delayed_ack = false`, `true` (Linux's: every 2 full segments or 40 ms) or a table.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
enum DelayedAckToml {
    Switch(bool),
    Table {
        #[serde(default = "two")]
        every: u32,
        #[serde(default = "forty_ms")]
        timeout: Dur,
        #[serde(default = "yes")]
        linux: bool,
    },
}

/// `gro = false`, `true` (64 KiB super-packets) or their size in bytes.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(untagged)]
enum GroToml {
    Switch(bool),
    Bytes(u64),
}

fn two() -> u32 {
    2
}
fn forty_ms() -> Dur {
    Dur(Duration::from_millis(40))
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct TcpToml {
    #[serde(default = "default_cc")]
    cc: String,
    #[serde(default)]
    app: TcpAppToml,
    payload: Option<u32>,
    rate: Option<f64>,
    notsent_lowat: Option<u64>,
    smss: Option<u32>,
    initial_window: Option<u32>,
    nodelay: Option<bool>,
    sack: Option<bool>,
    #[serde(default)]
    window: WindowUnit,
    delayed_ack: Option<DelayedAckToml>,
    gro: Option<GroToml>,
    send_buffer: Option<u64>,
    receive_buffer: Option<u64>,
    rmem: Option<[u64; 2]>,
    min_rto: Option<Dur>,
    initial_rto: Option<Dur>,
    max_rto: Option<Dur>,
}

fn default_cc() -> String {
    "newreno".into()
}

fn tcp_kind(t: TcpToml) -> Result<FlowKind, String> {
    let mut config = TcpConfig {
        cc: t.cc.parse()?,
        ..TcpConfig::default()
    };
    let set = |slot: &mut u32, v: Option<u32>| *slot = v.unwrap_or(*slot);
    set(&mut config.smss, t.smss);
    set(&mut config.initial_window, t.initial_window);
    config.nodelay = t.nodelay.unwrap_or(config.nodelay);
    config.sack = t.sack.unwrap_or(config.sack);
    config.window = t.window;
    config.delayed_ack = match t.delayed_ack {
        None | Some(DelayedAckToml::Switch(true)) => Some(DelayedAck::default()),
        Some(DelayedAckToml::Switch(false)) => None,
        Some(DelayedAckToml::Table {
            every,
            timeout,
            linux,
        }) => Some(DelayedAck {
            every,
            timeout: timeout.0,
            linux,
        }),
    };
    config.gro = match t.gro {
        None | Some(GroToml::Switch(false)) => None,
        Some(GroToml::Switch(true)) => Some(Gro::default()),
        Some(GroToml::Bytes(max_bytes)) => Some(Gro { max_bytes }),
    };
    config.send_buffer = t.send_buffer.unwrap_or(config.send_buffer);
    config.receive_buffer = t.receive_buffer.unwrap_or(config.receive_buffer);
    if let Some([default, max]) = t.rmem {
        if t.receive_buffer.is_some() {
            return Err(
                "give receive_buffer (a fixed window) or rmem (autotuned), not both".into(),
            );
        }
        let rmem = Rmem { default, max };
        rmem.validate()?;
        config.receive_buffer = rmem.window();
        config.rmem = Some(rmem);
    }
    config.min_rto = t.min_rto.map_or(config.min_rto, |d| d.0);
    config.initial_rto = t.initial_rto.map_or(config.initial_rto, |d| d.0);
    config.max_rto = t.max_rto.map_or(config.max_rto, |d| d.0);
    config.validate()?;
    let app = match t.app {
        TcpAppToml::Bulk => {
            if t.payload.is_some() || t.rate.is_some() || t.notsent_lowat.is_some() {
                return Err("payload, rate and notsent_lowat need app = \"updates\"".into());
            }
            Application::Bulk
        }
        TcpAppToml::Updates => Application::Updates {
            payload: t.payload.unwrap_or(default_payload()),
            mode: match (t.rate, t.notsent_lowat) {
                (Some(_), Some(_)) => {
                    return Err(
                        "give rate (fixed-rate updates) or notsent_lowat (at will), not both"
                            .into(),
                    )
                }
                (Some(r), None) => UpdateMode::Rate(r),
                (None, lowat) => UpdateMode::AtWill {
                    notsent_lowat: lowat,
                },
            },
        },
    };
    app.validate()?;
    Ok(FlowKind::Tcp { config, app })
}

/// The keys of a multipath flow beside its TCP ones.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct MptcpToml {
    paths: Vec<Vec<String>>,
    scheduler: Option<String>,
    coupling: Option<String>,
    device_sampling: Option<Dur>,
    assign: Option<String>,
    #[serde(default)]
    app: MptcpAppToml,
    rate: Option<Rate>,
    size: Option<u64>,
}

/// What a multipath flow's sending application does.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
enum MptcpAppToml {
    #[default]
    Bulk,
    Cbr,
    File,
}

/// Keys of [`MptcpToml`], split off before the rest is read as a TCP flow's.
const MPTCP_KEYS: [&str; 8] = [
    "paths",
    "scheduler",
    "coupling",
    "device_sampling",
    "assign",
    "app",
    "rate",
    "size",
];

/// The application of a multipath flow from its `app`, `rate` and `size` keys.
fn mptcp_app(m: &MptcpToml) -> Result<MptcpApp, String> {
    match (m.app, m.rate, m.size) {
        (MptcpAppToml::Bulk, None, None) => Ok(MptcpApp::Bulk),
        (MptcpAppToml::Cbr, Some(r), None) => Ok(MptcpApp::Cbr { bits_per_s: r.0 }),
        (MptcpAppToml::File, None, Some(bytes)) => Ok(MptcpApp::File { bytes }),
        (MptcpAppToml::Bulk, ..) => Err("rate needs app = \"cbr\", size app = \"file\"".into()),
        (MptcpAppToml::Cbr, ..) => Err("app = \"cbr\" takes rate (and no size)".into()),
        (MptcpAppToml::File, ..) => Err("app = \"file\" takes size in bytes (and no rate)".into()),
    }
}

fn mptcp_kind(mut table: toml::Table) -> Result<FlowKind, String> {
    let mut own = toml::Table::new();
    for key in MPTCP_KEYS {
        if let Some(v) = table.remove(key) {
            own.insert(key.into(), v);
        }
    }
    for key in ["payload", "notsent_lowat", "rmem"] {
        if table.contains_key(key) {
            return Err(format!(
                "{key}: mptcp flows carry bulk, cbr or file data with a fixed receive_buffer"
            ));
        }
    }
    let m: MptcpToml = from_table(own)?;
    let FlowKind::Tcp { config: tcp, .. } = tcp_kind(from_table(table)?)? else {
        unreachable!("tcp_kind makes tcp flows")
    };
    let app = mptcp_app(&m)?;
    let mut config = MptcpConfig {
        tcp,
        app,
        ..MptcpConfig::new(m.paths)
    };
    if let Some(s) = m.scheduler {
        config.scheduler = s
            .parse()
            .map_err(|e: crate::mptcp::scheduler::UnknownScheduler| e.to_string())?;
    }
    if let Some(c) = m.coupling {
        config.coupling = c.parse()?;
    }
    if let Some(d) = m.device_sampling {
        config.device_sampling = d.0;
    }
    if let Some(a) = m.assign {
        config.assignment = a.parse()?;
    }
    config.validate()?;
    Ok(FlowKind::Mptcp(config))
}

fn periodic() -> ProcessToml {
    ProcessToml::Periodic
}
fn poisson() -> ProcessToml {
    ProcessToml::Poisson
}
fn default_cross_size() -> u32 {
    1000
}

/// A parsed scenario; [`Scenario::build`] turns it into a runnable simulation.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// Its name.
    pub name: String,
    /// Run parameters.
    pub config: SimConfig,
    /// The network.
    pub topology: Topology,
    /// The flows, replicas expanded.
    pub flows: Vec<FlowSpec>,
}

/// 1-based line of byte offset `at` in `text`.
fn line_of(text: &str, at: usize) -> usize {
    text.get(..at).map_or(0, |s| s.matches('\n').count()) + 1
}

fn link_config(l: &LinkToml, base: Option<&Path>) -> Result<LinkConfig, String> {
    let limit = match (l.queue, l.queue_bytes) {
        (Some(_), Some(_)) => return Err("give queue or queue_bytes, not both".into()),
        (_, Some(b)) => QueueLimit::Bytes(b),
        (q, None) => QueueLimit::Packets(q.unwrap_or(1000)),
    };
    let trace = match (&l.trace, &l.rate) {
        (Some(_), Some(_)) => return Err("give rate or trace, not both".into()),
        (None, None) => return Err("needs rate (e.g. \"2mbit\") or trace (a file)".into()),
        (Some(file), None) => {
            let path = base.map_or_else(|| Path::new(file).to_path_buf(), |b| b.join(file));
            let text = std::fs::read_to_string(&path)
                .map_err(|e| format!("trace {}: {e}", path.display()))?;
            Some(Trace::parse(&text).map_err(|e| format!("trace {}: {e}", path.display()))?)
        }
        (None, Some(_)) => None,
    };
    let mut cfg = LinkConfig::new(
        l.rate.as_ref().map_or(f64::INFINITY, |r| r.0),
        l.delay.as_ref().map_or(Duration::ZERO, |d| d.0),
        limit,
    );
    cfg.trace = trace;
    cfg.service = match l.service {
        ServiceToml::Deterministic => Service::Deterministic,
        ServiceToml::Exponential => Service::Exponential,
    };
    cfg.loss = l.loss.as_ref().map_or(LossModel::None, LossToml::to_model);
    cfg.jitter = l.jitter.as_ref().map(|j| match j {
        JitterToml::Amount(d) => Jitter {
            max: d.0,
            reorder: false,
        },
        JitterToml::Full { max, reorder } => Jitter {
            max: max.0,
            reorder: *reorder,
        },
    });
    cfg.discipline = match (&l.priority, &l.discipline) {
        (Some(_), Some(_)) => return Err("give priority or discipline, not both".into()),
        (Some(classes), None) => Discipline::StrictPriority {
            classes: classes.clone(),
        },
        (None, Some(name)) => Discipline::from_name(name)?,
        (None, None) => Discipline::DropTail,
    };
    cfg.outages = l.outages.iter().map(|o| (o.at.0, o.duration.0)).collect();
    cfg.schedule = l
        .schedule
        .as_ref()
        .map(ScheduleToml::to_schedule)
        .transpose()?;
    cfg.validate()?;
    Ok(cfg)
}

/// The PHY of a `[[wifi]]` section.
fn wifi_phy(w: &WifiToml) -> Result<PhyConfig, String> {
    let mcs = || {
        let index = w.mcs.ok_or("802.11n/ac need `mcs`")?;
        let m = Mcs::new(index, w.spatial_streams, w.width);
        Ok::<Mcs, String>(if w.short_gi { m.short_gi() } else { m })
    };
    let phy = match w.standard {
        StandardToml::G => {
            if w.mcs.is_some() {
                return Err("802.11g takes `rate`, not `mcs`".into());
            }
            let bps = w.rate.map_or(12e6, |r| r.0);
            let rate = OfdmRate::from_mbps((bps / 1e6).round() as u32)
                .filter(|r| (f64::from(r.mbps()) * 1e6 - bps).abs() < 1.0)
                .ok_or_else(|| {
                    format!("802.11g rate {bps} bit/s is not one of 6, 9, 12, 18, 24, 36, 48, 54 Mbit/s")
                })?;
            PhyConfig::g(rate)
        }
        StandardToml::N if w.rate.is_none() => PhyConfig::n(mcs()?),
        StandardToml::Ac if w.rate.is_none() => PhyConfig::ac(mcs()?),
        _ => return Err("802.11n/ac take `mcs`, not `rate`".into()),
    };
    let phy = PhyConfig {
        qos: phy.qos || matches!(w.access, AccessToml::Edca),
        ..phy
    };
    phy.validate()?;
    Ok(phy)
}

/// Adds a `[[wifi]]` section's medium to `topology`.
fn add_wifi(topology: &mut Topology, w: &WifiToml) -> Result<(), String> {
    if w.count == 0 {
        return Err("count must be at least 1".into());
    }
    let phy = wifi_phy(w)?;
    let mut channel = ChannelConfig::new(w.area[0], w.area[1]);
    channel.shadowing_db = w.shadowing;
    if let Some(r) = w.reference_loss {
        channel.reference_loss = r.0;
    }
    if let Some(e) = w.exponent {
        channel.exponent = e;
    }
    channel.error_model = match w.error_model {
        ErrorModelToml::Table => ErrorModel::Table,
        ErrorModelToml::Nist => ErrorModel::Nist,
    };
    if let Some(p) = w.tx_power {
        channel.tx_power_dbm = p;
    }
    channel.validate()?;
    let timing = MacTiming {
        slot: phy.slot(),
        sifs: phy.sifs(),
        ack_timeout: phy.ack_timeout(),
        eifs_beyond_difs: phy.eifs_beyond_difs(),
    };
    let offsets = match &w.positions {
        Some(p) if p.len() != w.count => {
            return Err(format!(
                "positions gives {} stations, count is {}: give one [x, y] per station",
                p.len(),
                w.count
            ))
        }
        Some(p) => {
            if let Some(bad) = p.iter().find(|xy| !xy[0].is_finite() || !xy[1].is_finite()) {
                return Err(format!("position {bad:?} must be finite"));
            }
            Some(
                p.iter()
                    .map(|&[x, y]| Position { x, y })
                    .collect::<Vec<_>>(),
            )
        }
        None => None,
    };
    if matches!(w.reception, ReceptionToml::Sinr) && w.count >= MAX_RADIO_STATIONS {
        return Err(format!(
            "reception = \"sinr\" takes at most {} stations (count is {}); use reception = \"collision\"",
            MAX_RADIO_STATIONS - 1,
            w.count
        ));
    }
    let limit = QueueLimit::Packets(w.queue.max(1));
    let mut mac = match w.access {
        AccessToml::Dcf => MediumConfig::dcf(timing, w.count, limit),
        AccessToml::Edca => MediumConfig::edca(timing, edca_defaults(phy.standard), w.count, limit),
    };
    if let Some(r) = w.retry_limit {
        mac.retry_limit = r;
    }
    mac.ap_queue = match w.ap_queue {
        ApQueueToml::Fifo => ApQueue::Fifo,
        ApQueueToml::PerStation => ApQueue::PerStation,
        ApQueueToml::Fq => ApQueue::Fq,
        ApQueueToml::FqCodel => ApQueue::FqCodel,
    };
    mac.voice_queue = match w.voice_queue {
        VoiceQueueToml::Fifo => VoiceQueue::Fifo,
        VoiceQueueToml::Freshest => VoiceQueue::Freshest,
        VoiceQueueToml::FreshestPreempt => VoiceQueue::FreshestPreempt,
    };
    mac.reception = match w.reception {
        ReceptionToml::Sinr => Reception::Sinr,
        ReceptionToml::Collision => Reception::Collision,
    };
    mac.countdown = match (w.countdown, w.access) {
        (Some(CountdownToml::Edca), _) | (None, AccessToml::Edca) => Countdown::Edca,
        (Some(CountdownToml::Legacy), _) | (None, AccessToml::Dcf) => Countdown::Legacy,
    };
    mac.beacons = w.beacons.0.map(|interval| Beacons {
        interval,
        airtime: phy.beacon_airtime(),
    });
    mac.validate()?;
    let aggregation = w
        .aggregation
        .as_ref()
        .map(|a| downlink_config(w, a, &phy, channel.error_model))
        .transpose()?;
    let name = w.name.clone().unwrap_or_else(|| w.ap.clone());
    let stations: Vec<String> = (1..=w.count)
        .map(|k| replica_name(&w.stations, k, w.count))
        .collect();
    let (count, placement_seed, label) = (w.count, w.placement_seed, name.clone());
    let frames: FramesBuilder = Arc::new(move |streams: &Streams| {
        let streams = placement_seed.map_or(*streams, Streams::new);
        let built = match &offsets {
            Some(offsets) => {
                let ap = channel.ap.unwrap_or(Position {
                    x: channel.width_m / 2.0,
                    y: channel.height_m / 2.0,
                });
                let placement = Placement::around(ap, offsets);
                WifiFrames::placed(phy, channel, placement, &streams, &label)
            }
            None => WifiFrames::new(phy, channel, count, &streams, &label),
        };
        match built {
            Ok(f) => Box::new(f) as Box<dyn FrameModel>,
            // WifiFrames::new fails only where phy.validate() or channel.validate() does, and
            // both passed above; placement is drawn per run, from the run's seed.
            Err(e) => unreachable!("checked when the scenario was read: {e}"),
        }
    });
    let medium = topology
        .add_wifi(&name, &w.ap, &stations, mac, frames)
        .map_err(|e| e.to_string())?;
    topology.wifi[medium].aggregation = aggregation;
    if let Some(a) = &w.aggregation {
        topology.wifi[medium].reports = report_settings(a)?;
    }
    Ok(())
}

/// The name of replica `k` of `count` called `base`.
fn replica_name(base: &str, k: usize, count: usize) -> String {
    if count == 1 {
        base.to_string()
    } else {
        format!("{base}#{k}")
    }
}

/// Deserialises a table, or explains which field is wrong.
fn from_table<T: DeserializeOwned>(table: toml::Table) -> Result<T, String> {
    toml::Value::Table(table)
        .try_into()
        .map_err(|e: toml::de::Error| e.message().trim().to_string())
}

fn acp_kind(t: AcpToml) -> Result<FlowKind, String> {
    let controller: ControllerKind = t.controller.parse()?;
    let mut config = SourceConfig::default();
    let set = |slot: &mut f64, v: Option<f64>, what: &str| -> Result<(), String> {
        match v {
            Some(x) if !(x.is_finite() && x > 0.0) => Err(format!("{what} must be positive")),
            Some(x) => {
                *slot = x;
                Ok(())
            }
            None => Ok(()),
        }
    };
    set(&mut config.min_rate, t.min_rate, "min_rate")?;
    set(&mut config.max_rate, t.max_rate, "max_rate")?;
    set(&mut config.floor_rate, t.floor_rate, "floor_rate")?;
    if let Some(a) = t.alpha {
        if !(a > 0.0 && a <= 1.0) {
            return Err("alpha must be in (0, 1]".into());
        }
        config.alpha = a;
    }
    if let Some(n) = t.probes {
        if n == 0 {
            return Err("probes must be at least 1".into());
        }
        config.probes = n;
    }
    if let Some(d) = t.probe_timeout {
        config.probe_timeout = d.0;
    }
    if let Some(d) = t.outage_after {
        config.outage_after = d.0;
    }
    if config.min_rate > config.max_rate {
        return Err("min_rate is above max_rate".into());
    }
    if t.ack_dscp.is_some_and(|d| d > 63) {
        return Err("ack_dscp must be 0–63".into());
    }
    let multipath = match (t.paths, t.scheduler) {
        (None, Some(_)) => return Err("scheduler needs paths (a multipath source)".into()),
        (None, None) => None,
        (Some(paths), scheduler) => {
            let m = AcpPaths {
                paths,
                rule: scheduler.map_or(Ok(PathRule::QAware), |s| s.parse())?,
            };
            m.validate()?;
            Some(m)
        }
    };
    Ok(FlowKind::Acp {
        controller,
        config,
        payload: t.payload,
        ack_dscp: t.ack_dscp,
        multipath,
        sender: t.sender,
    })
}

/// One `[[flow]]` table, expanded into its replicas.
fn flows(i: usize, mut table: toml::Table) -> Result<Vec<FlowSpec>, String> {
    let kind = match table.remove("type") {
        Some(toml::Value::String(s)) => s,
        Some(other) => return Err(format!("type must be a string, got {other}")),
        None => return Err("missing field `type` (acp, updates, cross, tcp or mptcp)".into()),
    };
    let mut common = toml::Table::new();
    for key in COMMON {
        if let Some(v) = table.remove(key) {
            common.insert(key.into(), v);
        }
    }
    let c: CommonToml = from_table(common)?;
    let kind = match kind.as_str() {
        "acp" => acp_kind(from_table(table)?)?,
        "updates" => {
            let t: UpdatesToml = from_table(table)?;
            if !(t.rate.is_finite() && t.rate > 0.0) {
                return Err("rate (updates/s) must be positive".into());
            }
            FlowKind::Updates {
                process: t.process.process(),
                rate: t.rate,
                size: t.size,
            }
        }
        "cross" => {
            let t: CrossToml = from_table(table)?;
            FlowKind::Cross {
                process: t.process.process(),
                rate_bps: t.rate.0,
                size: t.size,
            }
        }
        "tcp" => tcp_kind(from_table(table)?)?,
        "mptcp" => mptcp_kind(table)?,
        other => {
            return Err(format!(
                "unknown type {other:?} (expected acp, updates, cross, tcp or mptcp)"
            ))
        }
    };
    let path = match (&kind, c.path) {
        (FlowKind::Mptcp(_), Some(_)) => {
            return Err("mptcp flows take `paths` (one per subflow), not `path`".into())
        }
        (
            FlowKind::Acp {
                multipath: Some(_), ..
            },
            Some(_),
        ) => return Err("a multipath acp flow takes `paths`, not `path`".into()),
        (FlowKind::Mptcp(m), None) => m.paths[0].clone(),
        (
            FlowKind::Acp {
                multipath: Some(m), ..
            },
            None,
        ) => m.paths[0].clone(),
        (_, Some(p)) => p,
        (_, None) => return Err("missing field `path`".into()),
    };
    if c.count == 0 {
        return Err("count must be at least 1".into());
    }
    if c.dscp > 63 {
        return Err(format!("dscp {} is out of range 0–63", c.dscp));
    }
    let base = c.name.unwrap_or_else(|| format!("flow{i}"));
    let stagger = c.stagger.map_or(
        if c.count > 1 {
            Duration::from_secs(1)
        } else {
            Duration::ZERO
        },
        |s| s.0,
    );
    Ok((1..=c.count)
        .map(|k| FlowSpec {
            name: replica_name(&base, k, c.count),
            kind: kind.clone(),
            path: path.clone(),
            start: c.start.as_ref().map_or(Duration::ZERO, |s| s.0),
            stagger,
            stop: c.stop.as_ref().map(|s| s.0),
            dscp: c.dscp,
        })
        .collect())
}

impl Scenario {
    /// Reads a scenario file; trace files it names are found relative to it.
    pub fn load(path: &Path) -> Result<Self, ScenarioError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| invalid(format!("cannot read {}: {e}", path.display())))?;
        Self::parse_in(&text, path.parent())
    }

    /// Parses a scenario's text (trace files relative to the working directory).
    pub fn parse(text: &str) -> Result<Self, ScenarioError> {
        Self::parse_in(text, None)
    }

    /// Parses a scenario's text, finding trace files relative to `base` (or to the working
    /// directory if `None`).
    pub fn parse_in(text: &str, base: Option<&Path>) -> Result<Self, ScenarioError> {
        let t: ScenarioToml =
            toml::from_str(text).map_err(|e| invalid(describe_toml_error(text, &e)))?;
        match t.format {
            Some(FORMAT) => {}
            Some(v) => return Err(invalid(format!("format {v} is not supported (this is {FORMAT})"))),
            None => {
                return Err(invalid(
                    "missing `format = 2` (format 1 files: see \"Migrating from format 1\" in docs/SIMULATOR.md)",
                ))
            }
        }
        let config = SimConfig {
            seed: t.seed,
            duration: t.duration.0,
            warmup: t.warmup.map_or(Duration::ZERO, |w| w.0),
            trace_points: t.trace_points,
            packet_log: false,
        };
        if config.warmup >= config.duration {
            return Err(invalid("warmup must be shorter than duration"));
        }
        let mut topology = Topology::default();
        for l in &t.links {
            let cfg = link_config(l, base)
                .map_err(|e| invalid(format!("link {} → {}: {e}", l.from, l.to)))?;
            topology
                .add_link(&l.from, &l.to, cfg.clone())
                .map_err(BuildError::from)?;
            if l.both_ways {
                topology
                    .add_link(&l.to, &l.from, cfg)
                    .map_err(BuildError::from)?;
            }
        }
        for spanned in &t.wifi {
            let w = spanned.get_ref();
            add_wifi(&mut topology, w).map_err(|e| {
                invalid(format!(
                    "line {}: [[wifi]] {}: {e}",
                    line_of(text, spanned.span().start),
                    w.name.as_ref().unwrap_or(&w.ap)
                ))
            })?;
        }
        let mut all = Vec::new();
        for (i, spanned) in t.flows.into_iter().enumerate() {
            let line = line_of(text, spanned.span().start);
            let table = spanned.into_inner();
            let name = table
                .get("name")
                .and_then(|v| v.as_str())
                .map_or_else(|| format!("flow{i}"), str::to_string);
            let mut expanded = flows(i, table)
                .map_err(|e| invalid(format!("line {line}: [[flow]] {name}: {e}")))?;
            // Replica k of a replicated flow leaves from node X#k wherever its path names a node
            // X that has replicas (e.g. the stations of a [[wifi]] section).
            let count = expanded.len();
            if count > 1 {
                for (k, f) in expanded.iter_mut().enumerate() {
                    let subflow_paths = match &mut f.kind {
                        FlowKind::Mptcp(m) => m.paths.iter_mut().collect(),
                        _ => Vec::new(),
                    };
                    for node in f.path.iter_mut().chain(subflow_paths.into_iter().flatten()) {
                        let own = replica_name(node, k + 1, count);
                        if topology.has_node(&own) {
                            *node = own;
                        }
                    }
                }
            }
            all.extend(expanded);
        }
        let scenario = Scenario {
            name: t.name.unwrap_or_else(|| "scenario".into()),
            config,
            topology,
            flows: all,
        };
        // Build once to report bad routes and flows now rather than at run time.
        scenario.build()?;
        Ok(scenario)
    }

    /// A fresh simulation of this scenario.
    pub fn build(&self) -> Result<Sim, BuildError> {
        Sim::new(
            self.config.clone(),
            self.topology.clone(),
            self.flows.clone(),
        )
    }

    /// A copy with every ACP flow under `controller` (its other parameters, and every other
    /// flow, unchanged).
    pub fn with_controller(&self, controller: ControllerKind) -> Scenario {
        let mut s = self.clone();
        for f in &mut s.flows {
            if let FlowKind::Acp { controller: c, .. } = &mut f.kind {
                *c = controller;
            }
        }
        s
    }

    /// Replaces every ACP flow's controller by Fixed(`rate`) and every update stream's rate (and
    /// every fixed-rate TCP update flow's) by `rate`: one point of an oracle sweep. Cross traffic is untouched and, drawing from its own
    /// random streams, arrives exactly as in every other point.
    pub fn with_fixed_rate(&self, rate: f64) -> Scenario {
        let mut s = self.clone();
        for f in &mut s.flows {
            match &mut f.kind {
                FlowKind::Acp { controller, .. } => *controller = ControllerKind::Fixed(rate),
                FlowKind::Updates { rate: r, .. }
                | FlowKind::Tcp {
                    app:
                        Application::Updates {
                            mode: UpdateMode::Rate(r),
                            ..
                        },
                    ..
                } => *r = rate,
                FlowKind::Cross { .. } | FlowKind::Tcp { .. } | FlowKind::Mptcp(_) => {}
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::WifiCounts;

    const MINI: &str = r#"
        format = 2
        seed = 3
        duration = "10s"
        warmup = "1s"
        [[link]]
        from = "a"
        to = "b"
        rate = "1mbit"
        delay = "5ms"
        queue = 20
        [[flow]]
        name = "x"
        type = "acp"
        controller = "lazy"
        max_rate = 500
        path = ["a", "b"]
        [[flow]]
        type = "cross"
        process = { onoff = { on = "1s", off = "1s" } }
        rate = "0.2mbit"
        path = ["a", "b"]
    "#;

    const TCP: &str = r#"
        format = 2
        duration = "10s"
        [[link]]
        from = "a"
        to = "b"
        rate = "1mbit"
        delay = "5ms"
        queue = 20
        [[flow]]
        name = "t"
        type = "tcp"
        cc = "newreno"
        app = "updates"
        payload = 200
        rate = 20
        smss = 536
        delayed_ack = { every = 3 }
        path = ["a", "b"]
    "#;

    /// Two stations at given positions, free-space reference loss, beacons every 50 ms.
    const WIFI: &str = r#"
        format = 2
        duration = "2s"
        [[wifi]]
        ap = "ap"
        stations = "sta"
        count = 2
        positions = [[3.0, 4.0], [-6.0, 0.0]]
        reference_loss = "friis"
        countdown = "edca"
        beacons = "50ms"
        reception = "sinr"
        [[flow]]
        type = "cross"
        count = 2
        process = "cbr"
        rate = "1mbit"
        size = 1000
        path = ["sta", "ap"]
    "#;

    #[test]
    fn wifi_keys_place_the_stations_and_report_their_links() {
        let r = Scenario::parse(WIFI).unwrap().build().unwrap().run();
        let w = &r.wifi[0];
        assert_eq!(w.reception, "sinr");
        // A beacon every 50 ms, the first one jittered within the first interval.
        assert!((39..=40).contains(&w.beacons), "{}", w.beacons);
        let at = |k: usize| (w.placement[k].x_m, w.placement[k].y_m);
        assert!((at(0).0 - 3.0).abs() < 1e-9 && (at(0).1 - 4.0).abs() < 1e-9);
        assert!((at(1).0 + 6.0).abs() < 1e-9 && at(1).1.abs() < 1e-9);
        // 5 m away: 16.0206 dBm − (40.0953 dB at 1 m, Friis at 2.412 GHz, + 30·log₁₀ 5 =
        // 20.9691 dB) = −45.0438 dBm, over a −93.9897 dBm noise floor: 48.9459 dB.
        assert!(
            (w.placement[0].rx_power_dbm + 45.0438).abs() < 1e-3,
            "{w:?}"
        );
        assert!((w.placement[0].snr_db - 48.9459).abs() < 1e-3, "{w:?}");
        assert_eq!(w.placement[1].name, "sta#2");
        // ns-3's reference loss is the default: 46.6777 dB, 6.5824 dB more.
        let ns3 = WIFI.replace("reference_loss = \"friis\"", "");
        let r = Scenario::parse(&ns3).unwrap().build().unwrap().run();
        assert!((r.wifi[0].placement[0].rx_power_dbm + 45.0438 + 6.5824).abs() < 1e-3);
        // Whole-medium reception and no beacons, on request.
        let old = WIFI
            .replace("reception = \"sinr\"", "reception = \"collision\"")
            .replace("beacons = \"50ms\"", "beacons = false");
        let w = &Scenario::parse(&old).unwrap().build().unwrap().run().wifi[0];
        assert_eq!(
            (w.reception.as_str(), w.beacons, w.captures),
            ("collision", 0, 0)
        );
    }

    /// An 802.11ac A-MPDU downlink: 80 MHz, 2 streams, MCS 9, two stations 5 m away.
    const AMPDU: &str = r#"
        format = 2
        duration = "2s"
        [[wifi]]
        ap = "ap"
        stations = "sta"
        count = 2
        standard = "ac"
        mcs = 9
        spatial_streams = 2
        width = 80
        positions = [[3.0, 4.0], [-3.0, -4.0]]
        queue = 1000
        aggregation = {}
        [[flow]]
        type = "cross"
        process = "cbr"
        rate = "250mbit"
        size = 1500
        path = ["ap", "sta#1"]
        [[flow]]
        type = "cross"
        process = "cbr"
        rate = "1mbit"
        size = 1500
        path = ["ap", "sta#2"]
    "#;

    #[test]
    fn aggregation_keys_build_the_ampdu_downlink() {
        let r = Scenario::parse(AMPDU).unwrap().build().unwrap().run();
        let w = &r.wifi[0];
        assert_eq!(w.reception, "ampdu");
        assert_eq!(w.aggregation.len(), 2);
        let (busy, idle) = (&w.aggregation[0], &w.aggregation[1]);
        assert_eq!(
            (busy.name.as_str(), busy.mcs, busy.spatial_streams),
            ("sta#1", 9, 2)
        );
        // 250 Mbit/s of 1500-byte packets to one station and 1 Mbit/s to the other: the §5.2
        // model (c = 2 × 204.5 µs, 15.8 µs per packet) puts the first near 8 packets per
        // frame, the second at one.
        assert!(
            busy.mean_aggregation > 5.0 && busy.mean_aggregation < 12.0,
            "{busy:?}"
        );
        assert!(idle.mean_aggregation < 1.5, "{idle:?}");
        assert_eq!(w.retry_drops, 0);
        assert!(
            (39..=40).contains(&w.beacons) || (19..=20).contains(&w.beacons),
            "{}",
            w.beacons
        );
        // A scheduled change to one stream: the run ends at the new rate.
        let changed = AMPDU.replace(
            "aggregation = {}",
            "aggregation = { rate_changes = [{ at = \"1s\", mcs = 7, spatial_streams = 1 }] }",
        );
        let w = &Scenario::parse(&changed)
            .unwrap()
            .build()
            .unwrap()
            .run()
            .wifi[0];
        assert_eq!(
            (w.aggregation[0].mcs, w.aggregation[0].spatial_streams),
            (7, 1)
        );
        // Legacy stations, A-MSDUs and Minstrel on request; errors name their line.
        let legacy = AMPDU.replace(
            "aggregation = {}",
            "aggregation = { legacy = 1, amsdu = 2, rate_control = \"minstrel\" }",
        );
        let w = &Scenario::parse(&legacy)
            .unwrap()
            .build()
            .unwrap()
            .run()
            .wifi[0];
        // 128 packets per frame (64 A-MSDUs of two), less the retransmission frames that
        // Minstrel's failed samples leave behind.
        let legacy = &w.aggregation[0];
        assert!(legacy.mean_aggregation > 120.0, "{legacy:?}");
        assert!(
            legacy.frames > 100 * legacy.retransmission_frames / 10,
            "{legacy:?}"
        );
        for (to, says) in [
            ("aggregation = { legacy = 3 }", "legacy"),
            ("aggregation = { max_mpdus = 65 }", "MPDUs per A-MPDU"),
            ("aggregation = { max_duration_us = 6000 }", "duration"),
            ("aggregation = { retransmissions = \"never\" }", "dedicated"),
            ("aggregation = { nmax = 3 }", "nmax"),
            ("aggregation = { report_ms = 0 }", "report slot"),
            (
                "aggregation = { rate_control = \"minstrel\", rate_changes = [{ at = \"1s\", mcs = 7, spatial_streams = 1 }] }",
                "rate_changes",
            ),
            (
                "aggregation = { rate_changes = [{ at = \"1s\", mcs = 7, spatial_streams = 9 }] }",
                "rate change 1",
            ),
        ] {
            let e = Scenario::parse(&AMPDU.replace("aggregation = {}", to))
                .unwrap_err()
                .to_string();
            assert!(e.contains("line ") && e.contains(says), "{to}: {e}");
        }
        let g = AMPDU
            .replace("standard = \"ac\"", "standard = \"n\"")
            .replace("width = 80", "width = 40")
            .replace("mcs = 9", "mcs = 7");
        let e = Scenario::parse(&g).unwrap_err().to_string();
        assert!(e.contains("standard = \"ac\""), "{e}");
    }

    #[test]
    fn wifi_counters_are_reported_per_station_and_access_category() {
        // One station's cross traffic marked EF (voice), the other's unmarked, under EDCA.
        let edca = r#"
            format = 2
            duration = "2s"
            [[wifi]]
            ap = "ap"
            stations = "sta"
            count = 2
            access = "edca"
            [[flow]]
            type = "cross"
            process = "cbr"
            rate = "1mbit"
            size = 1000
            dscp = 46
            path = ["sta#1", "ap"]
            [[flow]]
            type = "cross"
            process = "cbr"
            rate = "1mbit"
            size = 1000
            path = ["sta#2", "ap"]
        "#;
        let w = &Scenario::parse(edca).unwrap().build().unwrap().run().wifi[0];
        let names: Vec<_> = w.per_station.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["ap", "sta#1", "sta#2"], "{w:?}");
        // The rows add up to the medium's totals; the AP sent data to nobody (beacons are not
        // data frames).
        let total =
            |f: fn(&WifiCounts) -> u64| w.per_station.iter().map(|s| f(&s.counts)).sum::<u64>();
        assert_eq!(total(|c| c.attempts), w.attempts);
        assert_eq!(total(|c| c.retries), w.retries);
        assert_eq!(total(|c| c.collisions), w.collisions);
        assert_eq!(w.per_station[0].counts.attempts, 0);
        // 2 s of 1 Mbit/s in 1000-byte packets: about 250 frames each, all delivered.
        for (k, ac) in [(1, "vo"), (2, "be")] {
            let s = &w.per_station[k];
            assert!((200..300).contains(&s.counts.successes), "{s:?}");
            let acs: Vec<_> = s.access_categories.iter().map(|a| a.ac.as_str()).collect();
            assert_eq!(acs, [ac], "{s:?}");
            assert_eq!(s.access_categories[0].counts, s.counts);
        }
    }

    #[test]
    fn bad_wifi_keys_name_their_line() {
        for (from, to, says) in [
            (
                "positions = [[3.0, 4.0], [-6.0, 0.0]]",
                "positions = [[3.0, 4.0]]",
                "positions gives 1 stations, count is 2",
            ),
            (
                "reference_loss = \"friis\"",
                "reference_loss = \"free\"",
                "friis",
            ),
            ("beacons = \"50ms\"", "beacons = 3", "beacon interval"),
            (
                "beacons = \"50ms\"",
                "beacons = \"0.1ms\"",
                "beacon interval",
            ),
            ("reception = \"sinr\"", "reception = \"capture\"", "sinr"),
            ("countdown = \"edca\"", "countdown = \"dcf\"", "legacy"),
        ] {
            let text = WIFI.replace(from, to);
            let e = Scenario::parse(&text).unwrap_err().to_string();
            assert!(e.contains("line ") && e.contains(says), "{to}: {e}");
        }
    }

    #[test]
    fn reads_tcp_flows() {
        let s = Scenario::parse(TCP).unwrap();
        let FlowKind::Tcp { config, app } = &s.flows[0].kind else {
            panic!("{:?}", s.flows[0].kind)
        };
        assert_eq!(config.smss, 536);
        assert_eq!(
            config.delayed_ack,
            Some(DelayedAck {
                every: 3,
                timeout: Duration::from_millis(40),
                linux: true,
            })
        );
        assert_eq!(
            *app,
            Application::Updates {
                payload: 200,
                mode: UpdateMode::Rate(20.0)
            }
        );
        let r = s.build().unwrap().run();
        let f = &r.flows[0];
        assert_eq!(f.kind, "tcp");
        assert_eq!(f.controller.as_deref(), Some("newreno"));
        assert!((f.rate - 20.0).abs() < 0.5, "{}", f.rate);
        assert!(f.age.is_some() && f.mean_delay.is_some());
        let bulk = TCP.replace(
            "app = \"updates\"\n        payload = 200\n        rate = 20",
            "delayed_ack = false",
        );
        let bulk = bulk.replace("\n        delayed_ack = { every = 3 }", "");
        let s = Scenario::parse(&bulk).unwrap();
        assert!(matches!(
            &s.flows[0].kind,
            FlowKind::Tcp {
                app: Application::Bulk,
                config
            } if config.delayed_ack.is_none()
        ));
        let r = s.build().unwrap().run();
        assert!(r.flows[0].age.is_none());
        assert!(
            r.flows[0].throughput_bps > 0.8e6,
            "{}",
            r.flows[0].throughput_bps
        );
    }

    #[test]
    fn parses_and_runs() {
        let s = Scenario::parse(MINI).unwrap();
        assert_eq!(s.config.seed, 3);
        assert_eq!(s.flows.len(), 2);
        match &s.flows[0].kind {
            FlowKind::Acp { config, .. } => assert_eq!(config.max_rate, 500.0),
            k => panic!("{k:?}"),
        }
        let r = s.build().unwrap().run();
        assert!(r.flows[0].age.is_some());
        assert!(r.flows[0].delivered > 100);
    }

    #[test]
    fn a_discipline_by_name_reaches_both_directions() {
        use acp_netmodel::Discipline;
        let text = MINI.replace(
            "queue = 20",
            "queue = 20\n        discipline = \"freshest-preempt\"",
        );
        let s = Scenario::parse(&text).unwrap();
        assert_eq!(s.topology.links.len(), 2);
        for l in &s.topology.links {
            assert_eq!(l.config.discipline, Discipline::Freshest { preempt: true });
        }
        assert!(s.build().unwrap().run().flows[0].delivered > 100);
    }

    #[test]
    fn count_replicates_with_distinct_seeded_starts() {
        let text = MINI.replace("name = \"x\"", "name = \"x\"\ncount = 3\nstagger = \"2s\"");
        let s = Scenario::parse(&text).unwrap();
        let names: Vec<&str> = s.flows.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["x#1", "x#2", "x#3", "flow1"]);
        assert!(s.flows[..3]
            .iter()
            .all(|f| f.stagger == Duration::from_secs(2)));
    }

    #[test]
    fn errors_name_the_line_and_field() {
        let cases = [
            (MINI.replace("\"lazy\"", "\"tcp\""), "unknown controller"),
            (
                MINI.replace("max_rate = 500", "max_rate = 500\n        colour = 1"),
                "line 12: [[flow]] x: unknown field `colour`",
            ),
            (MINI.replace("\"0.2mbit\"", "\"0.2 furlongs\""), "line 18"),
            (
                MINI.replace("max_rate = 500", "max_rate = 500\n        size = 3"),
                "unknown field `size`",
            ),
            (
                MINI.replace(
                    "path = [\"a\", \"b\"]\n        [[flow]]",
                    "path = [\"a\", \"c\"]\n        [[flow]]",
                ),
                "no link from a to c",
            ),
            (MINI.replace("\"1mbit\"", "\"fast\""), "line 9"),
            (
                MINI.replace("warmup = \"1s\"", "warmup = \"20s\""),
                "warmup",
            ),
            (
                MINI.replace("queue = 20", "queue = 20\n        colour = 1"),
                "unknown field `colour`",
            ),
            (
                MINI.replace("queue = 20", "queue = 20\n        discipline = \"fresh\""),
                "unknown queue discipline \"fresh\" (known: diffserv4, freshest, freshest-preempt)",
            ),
            (
                MINI.replace(
                    "queue = 20",
                    "queue = 20\n        discipline = \"freshest\"\n        priority = [[46]]",
                ),
                "give priority or discipline, not both",
            ),
            (MINI.replace("format = 2", ""), "format = 2"),
            (
                MINI.replace("type = \"cross\"", "type = \"udp\""),
                "unknown type",
            ),
            (
                MINI.replace("type = \"cross\"", "type = \"tcp\""),
                "line 18: [[flow]] flow1: unknown field `process`",
            ),
            (
                TCP.replace("cc = \"newreno\"", "cc = \"hybla\""),
                "unknown congestion control",
            ),
            (
                TCP.replace("rate = 20", "rate = 20\n        notsent_lowat = 10"),
                "not both",
            ),
            (
                TCP.replace("app = \"updates\"", "app = \"bulk\""),
                "need app",
            ),
            (
                TCP.replace(
                    "smss = 536",
                    "smss = 536\n        rmem = [1000, 2000]\n        receive_buffer = 6000",
                ),
                "receive_buffer (a fixed window) or rmem (autotuned), not both",
            ),
            (
                TCP.replace("smss = 536", "smss = 536\n        rmem = [3000, 2000]"),
                "0 < default ≤ max",
            ),
            (
                TCP.replace("smss = 536", "smss = 536\n        receive_buffer = 600"),
                "line 10: [[flow]] t: receive_buffer must hold at least two segments",
            ),
            (
                TCP.replace("rate = 20", "rate = -2"),
                "rate (updates/s) must be positive",
            ),
            (TCP.replace("smss = 536", "smss = \"big\""), "invalid type"),
        ];
        for (text, needle) in cases {
            let e = Scenario::parse(&text).unwrap_err().to_string();
            assert!(e.contains(needle), "{e:?} lacks {needle:?}");
        }
    }
}
