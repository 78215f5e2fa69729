//! Results of a run, as JSON, CSV (written with the `csv` crate: quoted fields, one column per
//! value) and text tables, and the writers that make every format name a quantity alike.
//!
//! Units: the structs hold seconds and bits per second; their serialised names carry the unit of
//! `docs/OUTPUTS.md`, as in every output of `acp`: ages and round-trip times in milliseconds
//! (`_ms`), simulated durations in seconds (`_s`), rates per second (`_hz`), bit rates in Mbit/s
//! (`_mbit_s`; never `kbps` or `mbps`, which on the command line are bytes per second, as in tc).
//!
//! One serialisation feeds every writer: [`fields`] turns a row into the fields its JSON has,
//! [`rows_csv`] writes those fields as CSV columns and [`text_table`] shows chosen fields under
//! their names, so a CSV column or a table heading is always a JSON field, in the same unit.

use std::time::Duration;

use acp_netmodel::wifi::downlink::{Downlink, LinkCounters};
use acp_netmodel::wifi::medium::{Medium, StationCounters};
use acp_netmodel::wifi::phy::{AccessCategory, Mcs};
use acp_netmodel::wifi::FrameModel;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::slot_reports::ReportedSlot;

/// JSON forms of values held in seconds (see the module's units). Formats that are not human
/// readable (the result store's CBOR, [`crate::runs`]) keep the values as they are held, so a
/// result read back from one is bit for bit the result that was written.
pub mod json_units {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    /// Serialises `v`, `scaled` into its shown unit in human-readable formats.
    fn put<S: Serializer, T: Serialize>(
        v: &T,
        scaled: impl FnOnce(&T) -> T,
        ser: S,
    ) -> Result<S::Ok, S::Error> {
        if ser.is_human_readable() {
            scaled(v).serialize(ser)
        } else {
            v.serialize(ser)
        }
    }

    /// Deserialises a value, `unscaled` back from its shown unit in human-readable formats.
    fn get<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
        de: D,
        unscaled: impl FnOnce(&T) -> T,
    ) -> Result<T, D::Error> {
        let human = de.is_human_readable();
        let v = T::deserialize(de)?;
        Ok(if human { unscaled(&v) } else { v })
    }

    /// Declares a `with` module for `$t` held in base units and shown as `$map` makes it with
    /// `$k = $scale` (read back with `$k = 1 / $scale`).
    macro_rules! unit {
        ($(#[$doc:meta])* $name:ident, $t:ty, |$v:ident, $k:ident| $map:expr, $scale:expr) => {
            $(#[$doc])*
            pub mod $name {
                use super::*;

                /// The value in its shown unit (human-readable formats) or as held.
                pub fn serialize<S: Serializer>(v: &$t, ser: S) -> Result<S::Ok, S::Error> {
                    put(v, |$v: &$t| { let $k = $scale; $map }, ser)
                }

                /// The value back in the unit it is held in.
                pub fn deserialize<'de, D: Deserializer<'de>>(de: D) -> Result<$t, D::Error> {
                    get(de, |$v: &$t| { let $k = 1.0 / $scale; $map })
                }
            }
        };
    }

    unit!(
        /// Seconds as milliseconds.
        ms, f64, |v, k| *v * k, 1e3
    );
    unit!(
        /// Optional seconds as milliseconds.
        opt_ms, Option<f64>, |v, k| v.map(|x| x * k), 1e3
    );
    unit!(
        /// `(t, age)` pairs in seconds as `[t (s), age (ms)]`.
        trace_ms, Vec<(f64, f64)>, |v, k| v.iter().map(|&(t, a)| (t, a * k)).collect(), 1e3
    );
    unit!(
        /// Optional bits per second as Mbit/s.
        opt_mbit_s, Option<f64>, |v, k| v.map(|b| b / k), 1e6
    );
    unit!(
        /// Bits per second as Mbit/s.
        mbit_s, f64, |v, k| *v / k, 1e6
    );
}

/// The fields of `row` as its JSON has them: names, units and order.
pub fn fields(row: &impl Serialize) -> Map<String, Value> {
    match serde_json::to_value(row) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    }
}

/// Whether a field holds one value (a CSV cell can), rather than a list or an object.
fn single(v: &Value) -> bool {
    !matches!(v, Value::Array(_) | Value::Object(_))
}

/// `rows` as CSV: a column per field that holds one value, under its JSON name and in its JSON
/// unit (lists and nested objects are the JSON's alone), in the fields' order in the first row.
pub fn rows_csv(rows: &[Map<String, Value>]) -> String {
    let header: Vec<&str> = rows.first().map_or_else(Vec::new, |r| {
        r.iter()
            .filter(|(_, v)| single(v))
            .map(|(k, _)| k.as_str())
            .collect()
    });
    to_csv(
        &header,
        rows.iter().map(|r| {
            header
                .iter()
                .map(|h| {
                    r.get(*h)
                        .map_or_else(String::new, crate::reproduce::write::csv_field)
                })
                .collect()
        }),
    )
}

/// A column of a [`text_table`]: a field, shown under its own name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Column {
    /// The field's name.
    pub field: &'static str,
    /// Characters wide.
    pub width: usize,
    /// Decimals of a number (`None`: a text, left-aligned).
    pub digits: Option<usize>,
}

impl Column {
    /// A text column, left-aligned.
    pub const fn text(field: &'static str, width: usize) -> Column {
        Column {
            field,
            width,
            digits: None,
        }
    }

    /// A number column with `digits` decimals, right-aligned (integers as they are).
    pub const fn num(field: &'static str, width: usize, digits: usize) -> Column {
        Column {
            field,
            width,
            digits: Some(digits),
        }
    }
}

/// The heading line of a [`text_table`] of `columns` (no newline).
pub fn table_header(columns: &[Column]) -> String {
    let cells: Vec<String> = columns
        .iter()
        .map(|c| match c.digits {
            None => format!("{:<w$}", c.field, w = c.width),
            Some(_) => format!("{:>w$}", c.field, w = c.width),
        })
        .collect();
    cells.join(" ").trim_end().to_string()
}

/// One line of a [`text_table`] (no newline): each column's field of `row`, `-` where it is
/// null or absent.
pub fn table_line(columns: &[Column], row: &Map<String, Value>) -> String {
    let cells: Vec<String> = columns
        .iter()
        .map(|c| {
            let w = c.width;
            match (row.get(c.field), c.digits) {
                (None | Some(Value::Null), None) => format!("{:<w$}", "-"),
                (None | Some(Value::Null), Some(_)) => format!("{:>w$}", "-"),
                (Some(Value::String(s)), None) => format!("{s:<w$}"),
                (Some(Value::String(s)), Some(_)) => format!("{s:>w$}"),
                (Some(Value::Number(n)), Some(d)) if n.is_f64() => {
                    format!("{:>w$.d$}", n.as_f64().unwrap_or(f64::NAN))
                }
                (Some(v), None) => format!("{:<w$}", v.to_string()),
                (Some(v), Some(_)) => format!("{:>w$}", v.to_string()),
            }
        })
        .collect();
    cells.join(" ").trim_end().to_string()
}

/// A text table: the heading and a line per row, each ending in a newline.
pub fn text_table(columns: &[Column], rows: &[Map<String, Value>]) -> String {
    std::iter::once(table_header(columns))
        .chain(rows.iter().map(|r| table_line(columns, r)))
        .map(|l| l + "\n")
        .collect()
}

/// Average number of one flow's updates at one link (queued or in service): the backlog of the
/// paper's Fig. 8.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HopBacklog {
    /// The link's first node.
    pub from: String,
    /// The link's second node.
    pub to: String,
    /// Time-average number of the flow's updates there over the measurement window.
    pub backlog: f64,
}

/// One flow's measurements, over the part of its active time (`start` to `stop`) after the
/// warm-up unless stated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FlowResult {
    /// Its label.
    pub name: String,
    /// `acp`, `updates` or `cross`.
    pub kind: String,
    /// The ACP controller, if any, with its parameters (e.g. `acp(κ=0.25)`).
    pub controller: Option<String>,
    /// DSCP of its packets.
    pub dscp: u8,
    /// Seconds of active time inside the measurement window.
    pub active_s: f64,
    /// True time-average age at the receiver (s).
    #[serde(rename = "age_ms", with = "json_units::opt_ms")]
    pub age: Option<f64>,
    /// Time-average age as the sender estimates it from its ACKs (s): an ACP source's own
    /// estimate; for TCP the ACP+ paper's (§X), which takes every segment to carry an update
    /// fresh when it is sent and the age at an ACK to be that segment's RTT (Karn's samples).
    #[serde(rename = "est_age_ms", with = "json_units::opt_ms")]
    pub est_age: Option<f64>,
    /// The ACP source's RTT̄ at the end (s).
    #[serde(rename = "rtt_ms", with = "json_units::opt_ms")]
    pub rtt: Option<f64>,
    /// Mean round-trip time of the ACKs received in the window, each measured from its update's
    /// send time (s): the papers' "average RTT" (`rtt` is the source's smoothed RTT̄ at the end).
    #[serde(rename = "mean_rtt_ms", with = "json_units::opt_ms")]
    pub mean_rtt: Option<f64>,
    /// Mean time between the ACKs that gave those round-trip samples (s): every ACK of an ACP
    /// flow; a TCP flow's ACKs of new data under Karn's rule, the instants its age estimate
    /// resets at (the ACP+ paper's "inter-ACK time", §XI-A).
    #[serde(rename = "inter_ack_ms", with = "json_units::opt_ms")]
    pub inter_ack: Option<f64>,
    /// Mean payload of the data segments a TCP flow sent in the window, retransmissions
    /// included (the paper's "segment length", §XI-A).
    pub segment_bytes: Option<f64>,
    /// Mean delay of the updates delivered in the window, from generation to delivery (s).
    #[serde(rename = "mean_delay_ms", with = "json_units::opt_ms")]
    pub mean_delay: Option<f64>,
    /// The ACP source's time-average estimated backlog.
    pub source_backlog: Option<f64>,
    /// The ACP source's rate at the end (updates/s).
    #[serde(rename = "final_rate_hz")]
    pub final_rate: Option<f64>,
    /// Fresh updates (cross traffic: packets) delivered per second of active time.
    #[serde(rename = "rate_hz")]
    pub rate: f64,
    /// Updates (packets) sent per second of active time in the window: the update rate λ.
    #[serde(rename = "send_rate_hz")]
    pub send_rate: f64,
    /// Bits per second of active time of fresh updates (cross traffic: packets) delivered.
    #[serde(rename = "throughput_mbit_s", with = "json_units::mbit_s")]
    pub throughput_bps: f64,
    /// Updates (packets) sent over the whole run.
    pub sent: u64,
    /// Fresh updates (packets) delivered over the whole run.
    pub delivered: u64,
    /// Updates (cross traffic: packets; TCP: data segments) dropped by the links (queue, loss,
    /// outage) over the whole run.
    pub dropped: u64,
    /// Backlog at each link of the flow's route.
    pub backlog: Vec<HopBacklog>,
    /// The ACP source's protocol counters over the whole run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<SourceCounters>,
    /// `(t, mean age over the grid interval ending at t)` (s, s) on a regular grid of
    /// `trace_points` intervals over the run (empty unless asked for).
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        with = "json_units::trace_ms"
    )]
    pub mean_age_trace: Vec<(f64, f64)>,
    /// `(t, fresh updates delivered per second over the grid interval ending at t)` on the same
    /// grid (empty unless asked for).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub delivery_trace: Vec<(f64, f64)>,
    /// A TCP flow's counters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp: Option<TcpCounters>,
    /// A multipath flow's connection and subflow counters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mptcp: Option<MptcpCounters>,
    /// A multipath ACP source's session at the monitor and its paths.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multipath: Option<AcpMultipathCounters>,
}

/// A multipath ACP source: its one session at the monitor and each path as its scheduler saw it
/// ([`acp_core::multipath::PathStats`]), over the whole run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AcpMultipathCounters {
    /// The scheduler (`qaware`, `minsrtt`, `roundrobin`, `duplicate`).
    pub scheduler: String,
    /// Sequence numbers the monitor never received on any path.
    pub lost: u64,
    /// Updates that arrived after a fresher one (over another path).
    pub stale: u64,
    /// Copies of updates already received (probes, `duplicate`).
    pub duplicates: u64,
    /// Per path, in the order of the flow's `paths`.
    pub paths: Vec<AcpPathResult>,
}

impl AcpMultipathCounters {
    /// Flow `flow`'s session (scheduler, lost, stale, duplicates), then a line per path
    /// ([`AcpPathResult::line`]).
    pub fn lines(&self, flow: &str) -> Vec<String> {
        let session = format!(
            "{flow}: scheduler {}, lost {}, stale {}, duplicates {}",
            self.scheduler, self.lost, self.stale, self.duplicates
        );
        std::iter::once(session)
            .chain(self.paths.iter().enumerate().map(|(k, p)| p.line(flow, k)))
            .collect()
    }
}

/// One path of a multipath ACP source at the end of the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AcpPathResult {
    /// Its path, `a>r1>b`.
    pub path: String,
    /// Updates sent on it (probes of an overdue path and duplicates included).
    pub sent: u64,
    /// Updates acknowledged over it.
    pub acked: u64,
    /// Updates given up on it (overtaken by a later ACK on it, or beyond its memory).
    pub given_up: u64,
    /// Its smoothed RTT (s).
    #[serde(rename = "srtt_ms", with = "json_units::opt_ms")]
    pub srtt: Option<f64>,
    /// QAware's `Ŝ_k`, the round trip without waiting (s).
    #[serde(rename = "service_ms", with = "json_units::opt_ms")]
    pub service: Option<f64>,
    /// QAware's `b̂_k`, the bottleneck's service time per update (s).
    #[serde(rename = "bottleneck_ms", with = "json_units::opt_ms")]
    pub bottleneck: Option<f64>,
    /// Times it became overdue (no ACK for too long).
    pub failures: u64,
    /// Updates in flight on it when it last became overdue: what that failure can have lost.
    pub stranded: u64,
    /// When it last came back from a failure (its first ACK after it, s from the run's start).
    pub recovered_at_s: Option<f64>,
}

impl AcpPathResult {
    /// Path `path` as its scheduler reported it ([`acp_core::multipath::PathStats`]), its
    /// recovery timed from `origin` (the run's start).
    pub fn new(path: String, p: &acp_core::multipath::PathStats, origin: acp_core::Time) -> Self {
        AcpPathResult {
            path,
            sent: p.sent,
            acked: p.acked,
            given_up: p.given_up,
            srtt: p.srtt,
            service: p.service,
            bottleneck: p.bottleneck,
            failures: p.failures,
            stranded: p.stranded,
            recovered_at_s: p.recovered_at.map(|t| t.nanos_since(origin) as f64 * 1e-9),
        }
    }

    /// `FLOW[k] PATH: sent, acked, given up, SRTT, Ŝ, b̂, failures`, as `acp sim` prints a path.
    pub fn line(&self, flow: &str, k: usize) -> String {
        let ms =
            |v: Option<f64>| v.map_or_else(|| "-".to_string(), |v| format!("{:.2} ms", v * 1e3));
        format!(
            "{flow}[{k}] {}: sent {}, acked {}, given up {}, srtt {}, service {}, bottleneck {}, \
             failures {}",
            self.path,
            self.sent,
            self.acked,
            self.given_up,
            ms(self.srtt),
            ms(self.service),
            ms(self.bottleneck),
            self.failures
        )
    }
}

/// A multipath flow's connection-level counters and its subflows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MptcpCounters {
    /// The scheduler.
    pub scheduler: String,
    /// `none` or `lia`.
    pub coupling: String,
    /// Seconds of the flow's active time (the whole run, warm-up included) the sender had data
    /// and a subflow had congestion-window room, but the connection-level receive window was
    /// closed: the receive-buffer stall.
    #[serde(rename = "stalled_s")]
    pub stalled: f64,
    /// The most bytes the connection's receive buffer held behind a hole (head-of-line
    /// blocking).
    #[serde(rename = "max_held_bytes")]
    pub max_held: u64,
    /// `app = "file"`: seconds from the flow's start until the receiving application read the
    /// whole file (`None`: not within the run, or another application).
    #[serde(rename = "completion_s", default)]
    pub completion: Option<f64>,
    /// Per subflow, in the order of the flow's `paths`.
    pub subflows: Vec<SubflowResult>,
}

/// One subflow of a multipath flow.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubflowResult {
    /// Its path, `a>r1>b`.
    pub path: String,
    /// Bits per second of the flow's active time in the window that this subflow's receiver
    /// passed in order to the connection.
    #[serde(rename = "throughput_mbit_s", with = "json_units::mbit_s")]
    pub throughput_bps: f64,
    /// Its part of the bytes all subflows passed on in the window.
    pub share: f64,
    /// Data segments sent, retransmissions included (whole run).
    pub segments: u64,
    /// Segments sent again.
    pub retransmits: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// Congestion window at the end (bytes).
    #[serde(rename = "cwnd_bytes")]
    pub cwnd: u64,
    /// Smoothed RTT at the end (s).
    #[serde(rename = "srtt_ms", with = "json_units::opt_ms")]
    pub srtt: Option<f64>,
    /// Its device queue's last sampled dequeue rate (packets/s of every flow through the
    /// path's first link).
    #[serde(rename = "device_dequeue_rate_pps")]
    pub device_dequeue_rate: Option<f64>,
}

impl SubflowResult {
    /// `FLOW[k] PATH: share, throughput, SRTT, segments, retransmits`, as `acp sim` and
    /// `acp lab` print a subflow.
    pub fn line(&self, flow: &str, k: usize) -> String {
        format!(
            "{flow}[{k}] {}: share {:.3}, {:.4} Mbit/s, srtt {}, {} segments, {} retransmits",
            self.path,
            self.share,
            self.throughput_bps / 1e6,
            self.srtt
                .map_or_else(|| "-".to_string(), |r| format!("{:.3} ms", r * 1e3)),
            self.segments,
            self.retransmits
        )
    }
}

/// A TCP flow's counters over the whole run and its state at the end.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TcpCounters {
    /// The congestion control.
    pub cc: String,
    /// Data segments sent, retransmissions included.
    pub segments: u64,
    /// Segments sent again.
    pub retransmits: u64,
    /// Fast retransmits (fast recoveries entered).
    pub fast_retransmits: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// Tail-loss probes sent.
    pub probes: u64,
    /// Segments that reached the receiver again after an earlier copy had (retransmissions
    /// that were not needed).
    pub spurious_retransmits: u64,
    /// Segments the receiver got.
    pub segments_received: u64,
    /// ACKs the receiver sent.
    pub acks_sent: u64,
    /// Duplicate ACKs the sender received.
    pub dup_acks: u64,
    /// Segments that arrived beyond a hole.
    pub out_of_order: u64,
    /// Fixed-rate updates skipped because the send buffer was full.
    pub updates_skipped: u64,
    /// Congestion window at the end (bytes).
    #[serde(rename = "cwnd_bytes")]
    pub cwnd: u64,
    /// Slow-start threshold at the end (bytes), once set.
    #[serde(rename = "ssthresh_bytes")]
    pub ssthresh: Option<u64>,
    /// The congestion control's phase at the end.
    pub phase: String,
    /// Pacing rate at the end (bit/s of payload), if the congestion control paces.
    #[serde(rename = "pacing_rate_mbit_s", with = "json_units::opt_mbit_s")]
    pub pacing_rate_bps: Option<f64>,
    /// Smoothed RTT at the end (s).
    #[serde(rename = "srtt_ms", with = "json_units::opt_ms")]
    pub srtt: Option<f64>,
    /// RTO at the end (s).
    #[serde(rename = "rto_ms", with = "json_units::ms")]
    pub rto: f64,
    /// `(t s, congestion window in bytes)` at the first event after each grid point (empty
    /// unless `trace_points` asks for a grid).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cwnd_trace: Vec<(f64, f64)>,
}

/// An ACP source's protocol counters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceCounters {
    /// Phase at the end: `probing`, `running` or `outage`.
    pub phase: String,
    /// Initialisation probes sent.
    pub probes_sent: u64,
    /// Probes that timed out.
    pub probes_lost: u64,
    /// Control epochs completed.
    pub epochs: u64,
    /// Outages entered.
    pub outages: u64,
    /// In-sequence ACKs.
    pub acks_in_sequence: u64,
    /// Out-of-sequence ACKs.
    pub acks_out_of_sequence: u64,
}

/// One link's counters over the whole run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinkResult {
    /// Its first node.
    pub from: String,
    /// Its second node.
    pub to: String,
    /// Packets offered.
    pub arrived: u64,
    /// Dropped by random loss.
    pub lost: u64,
    /// Dropped by a full queue.
    pub dropped_queue: u64,
    /// Dropped by an outage.
    pub dropped_outage: u64,
    /// Packets served.
    pub served: u64,
    /// Fraction of the run the link was serving.
    pub utilisation: f64,
}

/// One WiFi medium's counters over the whole run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WifiResult {
    /// Its name.
    pub name: String,
    /// Associated stations (the AP not counted).
    pub stations: usize,
    /// Data frames put on the air.
    pub attempts: u64,
    /// Frames received and acknowledged.
    pub successes: u64,
    /// Attempts that collided.
    pub collisions: u64,
    /// Attempts lost to channel errors.
    pub errors: u64,
    /// Attempts that were retransmissions.
    #[serde(default)]
    pub retries: u64,
    /// Frames dropped at the retry limit.
    pub retry_drops: u64,
    /// Frames refused by a full station queue.
    pub queue_drops: u64,
    /// Fraction of the run the channel was busy.
    pub busy: f64,
    /// Fraction of the run spent in collisions.
    pub collision_time: f64,
    /// How frames were decided: `sinr` (per receiver, with capture) or `collision`.
    pub reception: String,
    /// Attempts that overlapped another and were received all the same (capture).
    pub captures: u64,
    /// Beacons the AP sent.
    pub beacons: u64,
    /// Each station's position and link to the AP (empty when the medium has no geometry).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub placement: Vec<WifiStationResult>,
    /// Each station's A-MPDU downlink (empty for the one-frame medium).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aggregation: Vec<AggregationResult>,
    /// Each station's counters, the AP first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_station: Vec<WifiStationCounts>,
}

impl WifiResult {
    /// Where each station is and how its AP hears it, when `frames` places them; `nodes` names
    /// the medium's stations, the AP first.
    pub fn placement(frames: &dyn FrameModel, nodes: &[String]) -> Vec<WifiStationResult> {
        nodes
            .iter()
            .enumerate()
            .skip(1)
            .filter_map(|(k, node)| {
                let u = frames.uplink(k)?;
                Some(WifiStationResult {
                    name: node.clone(),
                    x_m: u.x_m,
                    y_m: u.y_m,
                    rx_power_dbm: u.rx_power_dbm,
                    snr_db: u.snr_db,
                })
            })
            .collect()
    }

    /// The counters of `medium`, called `name`, after `elapsed` of running; `nodes` names its
    /// stations, the AP first (medium station `k` is `nodes[k]`).
    pub fn of<P>(name: &str, medium: &Medium<P>, nodes: &[String], elapsed: Duration) -> Self {
        let per_station = nodes
            .iter()
            .enumerate()
            .filter_map(|(k, node)| {
                let c = medium.station_counters(k)?;
                let categories = if medium.config().access.is_edca() {
                    AccessCategory::ALL
                        .iter()
                        .filter_map(|&ac| {
                            let c = medium.ac_counters(k, ac)?;
                            (*c != StationCounters::default()).then(|| WifiAcCounts {
                                ac: ac.name().into(),
                                counts: WifiCounts::from(c),
                            })
                        })
                        .collect()
                } else {
                    Vec::new()
                };
                Some(WifiStationCounts {
                    name: node.clone(),
                    counts: WifiCounts::from(c),
                    access_categories: categories,
                })
            })
            .collect::<Vec<_>>();
        let sum = |f: fn(&WifiCounts) -> u64| per_station.iter().map(|s| f(&s.counts)).sum();
        let c = medium.counters();
        let elapsed = elapsed.as_nanos().max(1) as f64;
        WifiResult {
            name: name.into(),
            stations: medium.station_count() - 1,
            attempts: sum(|s| s.attempts),
            successes: sum(|s| s.successes),
            collisions: sum(|s| s.collisions),
            errors: sum(|s| s.errors),
            retries: sum(|s| s.retries),
            retry_drops: sum(|s| s.retry_drops),
            queue_drops: sum(|s| s.queue_drops),
            busy: c.busy_ns as f64 / elapsed,
            collision_time: c.collision_ns as f64 / elapsed,
            reception: if medium.per_receiver() {
                "sinr"
            } else {
                "collision"
            }
            .into(),
            captures: sum(|s| s.captures),
            beacons: c.beacons,
            placement: Self::placement(medium.frame_model(), nodes),
            per_station,
            aggregation: Vec::new(),
        }
    }

    /// The results of A-MPDU downlink `downlink` named `name` after `elapsed`, its station `k`
    /// being `nodes[k]` (the AP first) and `reports(k)` the slots station `k` reported.
    pub fn of_downlink<P>(
        name: &str,
        downlink: &Downlink<P>,
        frames: &dyn FrameModel,
        nodes: &[String],
        elapsed: Duration,
        reports: impl Fn(usize) -> Vec<ReportedSlot>,
    ) -> Self {
        let elapsed = elapsed.as_nanos().max(1) as f64;
        let links: Vec<&LinkCounters> = (1..nodes.len())
            .filter_map(|k| downlink.link_counters(k))
            .collect();
        let sum = |f: fn(&LinkCounters) -> u64| links.iter().map(|c| f(c)).sum();
        let c = downlink.counters();
        WifiResult {
            name: name.into(),
            stations: links.len(),
            attempts: sum(|c| c.frames + c.uplink_attempts),
            successes: sum(|c| c.delivered + c.uplink_delivered),
            collisions: sum(|c| c.collisions),
            errors: sum(|c| c.mpdus - c.delivered.min(c.mpdus)),
            // Frames of retransmissions only (a retransmission mixed into a frame of new MPDUs
            // is in `aggregation`'s retransmitted_mpdus).
            retries: sum(|c| c.retransmission_frames),
            retry_drops: sum(|c| c.dropped + c.uplink_dropped),
            queue_drops: sum(|c| c.queue_drops),
            busy: c.busy_ns as f64 / elapsed,
            collision_time: c.collision_ns as f64 / elapsed,
            reception: "ampdu".into(),
            captures: 0,
            beacons: c.beacons,
            placement: Self::placement(frames, nodes),
            aggregation: nodes[1..]
                .iter()
                .zip(&links)
                .enumerate()
                .map(|(i, (node, c))| {
                    let mcs = downlink.rate(i + 1).unwrap_or(Mcs::new(0, 1, 20));
                    AggregationResult {
                        name: node.clone(),
                        frames: c.frames,
                        mean_aggregation: c.mean_aggregation(),
                        throughput_mbit_s: c.delivered_bytes as f64 * 8e3 / elapsed,
                        mpdus: c.mpdus,
                        retransmitted_mpdus: c.retransmitted_mpdus,
                        retransmission_frames: c.retransmission_frames,
                        mcs: mcs.index,
                        spatial_streams: mcs.spatial_streams,
                        reports: reports(i + 1),
                    }
                })
                .collect(),
            per_station: Vec::new(),
        }
    }
}

/// What one station (all its access categories, or one) put on the air and what became of it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WifiCounts {
    /// Data frames put on the air.
    pub attempts: u64,
    /// Frames received and acknowledged.
    pub successes: u64,
    /// Attempts that were retransmissions.
    pub retries: u64,
    /// Attempts that collided with another station's.
    pub collisions: u64,
    /// Of those, the attempts received all the same (capture).
    pub captures: u64,
    /// Attempts lost to channel errors.
    pub errors: u64,
    /// Attempts lost to a higher access category of the same station (EDCA).
    pub internal_collisions: u64,
    /// Frames dropped at the retry limit.
    pub retry_drops: u64,
    /// Frames refused by a full queue.
    pub queue_drops: u64,
}

impl From<&StationCounters> for WifiCounts {
    fn from(c: &StationCounters) -> Self {
        WifiCounts {
            attempts: c.attempts,
            successes: c.successes,
            retries: c.retries,
            collisions: c.collisions,
            captures: c.captures,
            errors: c.errors,
            internal_collisions: c.internal_collisions,
            retry_drops: c.drops,
            queue_drops: c.queue_drops,
        }
    }
}

/// One station's counters on a WiFi medium.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WifiStationCounts {
    /// The station's node name (the AP's for medium station 0).
    pub name: String,
    #[serde(flatten)]
    pub counts: WifiCounts,
    /// EDCA: per access category (`bk`, `be`, `vi`, `vo`), those that sent or dropped anything.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub access_categories: Vec<WifiAcCounts>,
}

/// One access category's share of a station's counters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WifiAcCounts {
    /// `bk`, `be`, `vi` or `vo`.
    pub ac: String,
    #[serde(flatten)]
    pub counts: WifiCounts,
}

/// One station's A-MPDU downlink over the whole run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AggregationResult {
    /// The station's node name.
    pub name: String,
    /// A-MPDUs the AP sent it.
    pub frames: u64,
    /// Packets per A-MPDU (retransmission frames included).
    pub mean_aggregation: f64,
    /// The bytes of the packets it received over the whole run, per second (Mbit/s).
    #[serde(default)]
    pub throughput_mbit_s: f64,
    /// MPDUs sent, retransmissions included.
    pub mpdus: u64,
    /// Of those, retransmissions.
    pub retransmitted_mpdus: u64,
    /// A-MPDUs that held only retransmissions.
    pub retransmission_frames: u64,
    /// The MCS index in use at the end.
    pub mcs: u8,
    /// Its spatial streams.
    pub spatial_streams: u8,
    /// The slots its monitor reported, if it hosts one ([`crate::slot_reports`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reports: Vec<ReportedSlot>,
}

/// Where a WiFi station is and how its AP hears it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WifiStationResult {
    /// The station's node name.
    pub name: String,
    /// Metres east of the AP.
    pub x_m: f64,
    /// Metres north of the AP.
    pub y_m: f64,
    /// Power at which the AP receives it (dBm).
    pub rx_power_dbm: f64,
    /// The AP's SNR for its frames (dB).
    pub snr_db: f64,
}

/// One packet offered to one link (with [`crate::SimConfig::packet_log`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PacketEvent {
    /// "from→to".
    pub link: String,
    /// The flow's name.
    pub flow: String,
    /// `update`, `ack` or `cross`.
    pub kind: String,
    /// Sequence number within the flow (ACKs: of the update they answer).
    pub seq: u64,
    /// Bytes on the wire.
    pub bytes: u32,
    /// When it reached the link (ns).
    pub arrived_ns: u64,
    /// When it left the far end (ns); `None` if dropped.
    pub departed_ns: Option<u64>,
}

/// A whole run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimResult {
    /// The seed.
    pub seed: u64,
    /// Simulated seconds.
    #[serde(rename = "duration_s")]
    pub duration: f64,
    /// Warm-up seconds excluded from measurements.
    #[serde(rename = "warmup_s")]
    pub warmup: f64,
    /// Events processed.
    pub events: u64,
    /// Per flow.
    pub flows: Vec<FlowResult>,
    /// Per link.
    pub links: Vec<LinkResult>,
    /// Per WiFi medium.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub wifi: Vec<WifiResult>,
    /// Every packet offered to every link, if asked for.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub packet_log: Vec<PacketEvent>,
}

/// Writes `rows` under `header` as CSV.
pub fn to_csv(header: &[&str], rows: impl IntoIterator<Item = Vec<String>>) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    // Writing to memory cannot fail except on a record of the wrong length, which these callers
    // never produce.
    let _ = w.write_record(header);
    for r in rows {
        let _ = w.write_record(&r);
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}

impl SimResult {
    /// The result as pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }

    /// One CSV row per flow: its fields that hold one value, as the JSON names them.
    pub fn flows_csv(&self) -> String {
        rows_csv(&self.flows.iter().map(fields).collect::<Vec<_>>())
    }

    /// One CSV row per (flow, link) backlog.
    pub fn backlog_csv(&self) -> String {
        to_csv(
            &["flow", "from", "to", "backlog"],
            self.flows.iter().flat_map(|f| {
                f.backlog.iter().map(|h| {
                    vec![
                        f.name.clone(),
                        h.from.clone(),
                        h.to.clone(),
                        format!("{:.6}", h.backlog),
                    ]
                })
            }),
        )
    }

    /// One CSV row per link.
    pub fn links_csv(&self) -> String {
        to_csv(
            &[
                "from",
                "to",
                "arrived",
                "lost",
                "dropped_queue",
                "dropped_outage",
                "served",
                "utilisation",
            ],
            self.links.iter().map(|l| {
                vec![
                    l.from.clone(),
                    l.to.clone(),
                    l.arrived.to_string(),
                    l.lost.to_string(),
                    l.dropped_queue.to_string(),
                    l.dropped_outage.to_string(),
                    l.served.to_string(),
                    format!("{:.6}", l.utilisation),
                ]
            }),
        )
    }

    /// One line per update flow: `NAME: from→to B, …`, its backlog at each hop.
    pub fn backlog_lines(&self) -> Vec<String> {
        self.flows
            .iter()
            .filter(|f| !f.backlog.is_empty())
            .map(|f| {
                let hops: Vec<String> = f
                    .backlog
                    .iter()
                    .map(|h| format!("{}→{} {:.3}", h.from, h.to, h.backlog))
                    .collect();
                format!("{}: {}", f.name, hops.join(", "))
            })
            .collect()
    }

    /// One line per subflow of each multipath flow: `NAME[k] PATH: share, throughput, SRTT`,
    /// after one line for the connection (scheduler, coupling, stall, bytes held, a file's
    /// completion time).
    pub fn subflow_lines(&self) -> Vec<String> {
        let mut lines = Vec::new();
        for f in &self.flows {
            let Some(m) = &f.mptcp else { continue };
            let completion = m
                .completion
                .map_or_else(String::new, |c| format!(", file read after {c:.3} s"));
            lines.push(format!(
                "{}: scheduler {}, coupling {}, receive-buffer stall {:.3} s, at most {} bytes held out of order{completion}",
                f.name, m.scheduler, m.coupling, m.stalled, m.max_held
            ));
            for (k, s) in m.subflows.iter().enumerate() {
                lines.push(s.line(&f.name, k));
            }
        }
        lines
    }

    /// Per multipath ACP source, a line for its session (scheduler, lost, stale, duplicates) and
    /// one per path ([`AcpPathResult::line`]).
    pub fn multipath_lines(&self) -> Vec<String> {
        let mut lines = Vec::new();
        for f in &self.flows {
            if let Some(m) = &f.multipath {
                lines.extend(m.lines(&f.name));
            }
        }
        lines
    }

    /// A human-readable table of the flows, under their JSON names: `mean_rtt_ms` is the mean
    /// RTT of the window's ACKs, `send_rate_hz` the update rate, `rate_hz` the fresh updates
    /// delivered per second.
    pub fn table(&self) -> String {
        text_table(
            &FLOW_COLUMNS,
            &self.flows.iter().map(fields).collect::<Vec<_>>(),
        )
    }
}

/// The columns of [`SimResult::table`].
pub const FLOW_COLUMNS: [Column; 10] = [
    Column::text("name", 14),
    Column::text("kind", 8),
    Column::text("controller", 12),
    Column::num("age_ms", 10, 3),
    Column::num("est_age_ms", 10, 3),
    Column::num("mean_rtt_ms", 11, 3),
    Column::num("send_rate_hz", 12, 2),
    Column::num("rate_hz", 9, 2),
    Column::num("throughput_mbit_s", 17, 4),
    Column::num("dropped", 8, 0),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_quotes_fields_that_need_it() {
        let text = to_csv(
            &["a", "b"],
            [vec!["x,y".to_string(), "say \"hi\"".to_string()]],
        );
        assert_eq!(text, "a,b\n\"x,y\",\"say \"\"hi\"\"\"\n");
    }

    #[derive(Serialize)]
    struct Row {
        name: &'static str,
        #[serde(rename = "age_ms", with = "json_units::opt_ms")]
        age: Option<f64>,
        count: u64,
        list: Vec<u8>,
    }

    fn rows() -> Vec<Map<String, Value>> {
        [
            Row {
                name: "a",
                age: Some(0.0125),
                count: 3,
                list: vec![1],
            },
            Row {
                name: "b",
                age: None,
                count: 40,
                list: vec![],
            },
        ]
        .iter()
        .map(fields)
        .collect()
    }

    #[test]
    fn csv_columns_are_the_json_fields_that_hold_one_value() {
        assert_eq!(rows_csv(&rows()), "name,age_ms,count\na,12.5,3\nb,,40\n");
    }

    #[test]
    fn tables_show_fields_under_their_json_names() {
        let cols = [
            Column::text("name", 4),
            Column::num("age_ms", 7, 2),
            Column::num("count", 5, 0),
        ];
        assert_eq!(
            text_table(&cols, &rows()),
            "name  age_ms count\na      12.50     3\nb          -    40\n"
        );
    }
}
