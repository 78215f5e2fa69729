//! The network of the aggregation thesis's reproductions ([`super::aggregation`]): a server on
//! a wire to an 802.11ac access point (80 MHz, MCS 9, two spatial streams unless a figure says
//! otherwise) that aggregates (`[[wifi]] aggregation = { … }`, `docs/SIMULATOR.md`), and one
//! downlink flow per controlled station, the first `legacy` stations legacy ones (the AP always
//! has 1500-byte packets for them). What each run yields: per station its goodput, delay and
//! age, and the aggregation levels its monitor reported.

use std::time::Duration;

use acp_core::controller::ControllerKind;

use crate::report::SimResult;
use crate::scenario::Scenario;

/// An update's payload: with the 44-byte ACP header and 28 bytes of UDP/IP, a 1500-byte IP
/// packet, the thesis's packets (§5.4.2.2: l = 1500 B).
pub const PAYLOAD: u32 = 1500 - 44 - crate::engine::UDP_IP_OVERHEAD;

/// A TCP receiver's `tcp_rmem` maximum by default: Linux's 6 MiB, a 3 MiB window. The thesis
/// does not give its hosts'; CUBIC's ≈ 50 ms at ≈ 600 Mbit/s (seed line 634) needs a window of
/// ≈ 3.75 MB, more than the 1 MiB default of our TCP model.
pub const LINUX_RMEM_MAX: u64 = 6_291_456;

/// A TCP sender's send buffer: Linux's `tcp_wmem` maximum, 4 MiB.
const SEND_BUFFER: u64 = 4_194_304;

/// What a controlled station's flow runs.
#[derive(Debug, Clone, PartialEq)]
pub enum Sender {
    /// An ACP source with this controller.
    Acp(ControllerKind),
    /// Bulk TCP with this congestion control (`cubic`, `bbr`) and receiver ACKs.
    Tcp(&'static str, TcpAcks),
}

/// How a TCP receiver station ACKs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TcpAcks {
    /// Delayed ACKs behind GRO (Linux's host: one stretch ACK per A-MPDU's poll, at most per
    /// 64 KiB; [`crate::tcp::gro`]); otherwise one every second full segment.
    pub gro: bool,
    /// The station aggregates its uplink (the ACKs) in A-MPDUs of up to 64 MPDUs; otherwise
    /// every ACK is a frame of its own.
    pub uplink_ampdu: bool,
}

impl TcpAcks {
    /// A Linux (Android) handset's: GRO and uplink A-MPDUs.
    pub const HANDSET: TcpAcks = TcpAcks {
        gro: true,
        uplink_ampdu: true,
    };
}

impl Sender {
    /// Its name in the rows.
    pub fn name(&self) -> String {
        match self {
            // K = K₀/n changes with the stations: the target names the series.
            Sender::Acp(ControllerKind::AggPi(p)) => format!("agg:{}", p.n_eps),
            Sender::Acp(ControllerKind::AggAirtime { lead_mbps, .. }) => {
                format!("agg-air:{lead_mbps}")
            }
            Sender::Acp(c) => c.to_string(),
            Sender::Tcp(cc, acks) => {
                let mut without = Vec::new();
                if !acks.gro {
                    without.push("GRO");
                }
                if !acks.uplink_ampdu {
                    without.push("uplink A-MPDU");
                }
                if without.is_empty() {
                    (*cc).to_string()
                } else {
                    format!("{cc} (no {})", without.join(", no "))
                }
            }
        }
    }
}

/// One run's network.
#[derive(Debug, Clone, PartialEq)]
pub struct AggNet {
    /// Stations (legacy ones included).
    pub stations: usize,
    /// Of those, the first `legacy` are legacy stations.
    pub legacy: usize,
    /// What the other stations' flows run.
    pub sender: Sender,
    /// The ACP flows are one sender's (`sender = "server"`): one controller sets all their rates
    /// (Algorithm 2 over every station, [`ControllerKind::build_sender`]); otherwise each flow
    /// has a controller of its own.
    pub one_sender: bool,
    /// MCS index, spatial streams, channel width (MHz).
    pub mcs: (u8, u8, u16),
    /// The 400 ns guard interval instead of 800 ns.
    pub short_gi: bool,
    /// Minstrel-like rate adaptation up to `mcs` instead of the fixed rate.
    pub minstrel: bool,
    /// Stations placed at random in a square of this side (m), the AP at its centre; `None`:
    /// every station 1 m from the AP.
    pub area_m: Option<f64>,
    /// Each station's distance from the AP (m), east of it, when `area_m` is `None`; empty:
    /// every station at 1 m.
    pub distances_m: Vec<f64>,
    /// Packets per MPDU (2: the handsets' A-MSDU, N_max = 128).
    pub amsdu: usize,
    /// Packets each station's queue at the AP holds.
    pub queue: usize,
    /// The wire's rate (Mbit/s).
    pub wire_mbit_s: u64,
    /// The stations' report slot (ms).
    pub report_ms: u64,
    /// The stations' feedback interval (ms; 0: every update answered).
    pub feedback_ms: u64,
    /// Simulated and warm-up seconds.
    pub secs: (u64, u64),
    /// Scheduled rate changes: (second, MCS index, spatial streams).
    pub rate_changes: Vec<(u64, u8, u8)>,
    /// End-host latency on the data path (ms): a delay on the server's wire toward the AP
    /// only, the ACKs return without it (0: none).
    pub host_latency_ms: u64,
    /// TCP receivers' `tcp_rmem` maximum (bytes): the window is half of it.
    pub rmem_max: u64,
}

impl AggNet {
    /// `stations` stations at MCS 9, 2 streams, 80 MHz, 1 m from the AP, each fed by `sender`;
    /// the defaults of the thesis's ns-3 runs (§4.6: "80MHz channel … MCS=9 … NSS = 2"),
    /// 1000-packet queues, a 10 Gbit/s wire (never the bottleneck), 500 ms report slots and
    /// 100 ms feedback for the aggregation controllers (Fig. 4.8's "10 feedback packets per
    /// second per receiver"), an ACK per update for the others.
    pub fn new(stations: usize, sender: Sender, secs: (u64, u64)) -> AggNet {
        let feedback_ms = match &sender {
            Sender::Acp(
                ControllerKind::AggPi(_)
                | ControllerKind::AggInnerOuter { .. }
                | ControllerKind::AggAirtime { .. },
            ) => 100,
            _ => 0,
        };
        AggNet {
            stations,
            legacy: 0,
            sender,
            one_sender: false,
            mcs: (9, 2, 80),
            short_gi: false,
            minstrel: false,
            area_m: None,
            distances_m: Vec::new(),
            amsdu: 1,
            queue: 1000,
            wire_mbit_s: 10_000,
            report_ms: 500,
            feedback_ms,
            secs,
            rate_changes: Vec::new(),
            host_latency_ms: 0,
            rmem_max: LINUX_RMEM_MAX,
        }
    }

    /// The name of station `k` (1-based).
    fn station(&self, k: usize) -> String {
        if self.stations == 1 {
            "sta".into()
        } else {
            format!("sta#{k}")
        }
    }

    /// MPDUs per uplink A-MPDU: 64 for TCP stations that aggregate their ACKs, else 1.
    fn uplink_mpdus(&self) -> usize {
        match self.sender {
            Sender::Tcp(_, acks) if acks.uplink_ampdu => 64,
            _ => 1,
        }
    }

    /// The scenario file of a run with `seed`.
    pub fn text(&self, seed: u64) -> String {
        let (mcs, nss, width) = self.mcs;
        let place = match self.area_m {
            Some(side) => format!("area = [{side}, {side}]"),
            None => {
                let at: Vec<String> = (0..self.stations)
                    .map(|k| format!("[{:?}, 0.0]", self.distances_m.get(k).unwrap_or(&1.0)))
                    .collect();
                format!("positions = [{}]", at.join(", "))
            }
        };
        let rate_control = if self.minstrel { "minstrel" } else { "fixed" };
        let changes: Vec<String> = self
            .rate_changes
            .iter()
            .map(|(at, mcs, nss)| {
                format!("{{ at = \"{at}s\", mcs = {mcs}, spatial_streams = {nss} }}")
            })
            .collect();
        let wire = |from: &str, to: &str| {
            format!(
                "[[link]]\nfrom = \"{from}\"\nto = \"{to}\"\nrate = \"{}mbit\"\nqueue = 100000\n",
                self.wire_mbit_s
            )
        };
        let wires = if self.host_latency_ms == 0 {
            wire("server", "ap")
        } else {
            format!(
                "{}delay = \"{}ms\"\nboth_ways = false\n\n{}both_ways = false\n",
                wire("server", "ap"),
                self.host_latency_ms,
                wire("ap", "server")
            )
        };
        let mut text = format!(
            "format = 2\nname = \"aggregation\"\nseed = {seed}\nduration = \"{}s\"\n\
             warmup = \"{}s\"\n\n{wires}\n[[wifi]]\nap = \"ap\"\nstations = \"sta\"\n\
             count = {}\nstandard = \"ac\"\nmcs = {mcs}\nspatial_streams = {nss}\n\
             width = {width}\nshort_gi = {}\nqueue = {}\n{place}\naggregation = {{ legacy = {}, amsdu = {}, \
             rate_control = \"{rate_control}\", report_ms = {}, feedback_ms = {}, \
             uplink_mpdus = {}, rate_changes = [{}] }}\n",
            self.secs.0,
            self.secs.1,
            self.stations,
            self.short_gi,
            self.queue,
            self.legacy,
            self.amsdu,
            self.report_ms,
            self.feedback_ms,
            self.uplink_mpdus(),
            changes.join(", "),
        );
        for k in self.legacy + 1..=self.stations {
            let flow = match &self.sender {
                Sender::Acp(c) => {
                    let sender = if self.one_sender {
                        "sender = \"server\"\n"
                    } else {
                        ""
                    };
                    format!("type = \"acp\"\ncontroller = \"{c}\"\npayload = {PAYLOAD}\n{sender}")
                }
                Sender::Tcp(cc, acks) => {
                    format!(
                        "type = \"tcp\"\ncc = \"{cc}\"\ngro = {}\nrmem = [131072, {}]\n\
                         send_buffer = {SEND_BUFFER}\n",
                        acks.gro, self.rmem_max
                    )
                }
            };
            text += &format!(
                "\n[[flow]]\nname = \"to-{k}\"\npath = [\"server\", \"ap\", \"{}\"]\n{flow}",
                self.station(k)
            );
        }
        text
    }

    /// The scenario of a run with `seed`.
    pub fn scenario(&self, seed: u64) -> Scenario {
        match Scenario::parse(&self.text(seed)) {
            Ok(s) => s,
            Err(e) => unreachable!("the aggregation network is well formed: {e}"),
        }
    }
}

/// One station's numbers from a run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StationMeasure {
    /// Whether it is a legacy station.
    pub legacy: bool,
    /// Goodput (Mbit/s): a flow's IP datagrams (ACP's fresh updates, TCP's bytes) in the
    /// measurement window; a legacy station's packets over the whole run.
    pub goodput_mbit_s: f64,
    /// Mean delay from the sender to the station (ms; not measured for legacy stations).
    pub delay_ms: Option<f64>,
    /// Mean RTT the sender measured (ms).
    pub rtt_ms: Option<f64>,
    /// Time-average age at the station (ms; ACP only).
    pub age_ms: Option<f64>,
    /// Mean of the levels its monitor reported after the warm-up (ACP only).
    pub level: Option<f64>,
    /// Their standard deviation.
    pub level_sd: Option<f64>,
}

/// The stations of run `r`, in order: a station without a flow `to-K` is a legacy one; the
/// levels count from `warmup` on.
pub fn measure(r: &SimResult, warmup: Duration) -> Vec<StationMeasure> {
    let Some(wifi) = r.wifi.first() else {
        return Vec::new();
    };
    let warmup = warmup.as_secs_f64();
    wifi.aggregation
        .iter()
        .enumerate()
        .map(|(k, a)| {
            let flow = r.flows.iter().find(|f| f.name == format!("to-{}", k + 1));
            let levels: Vec<f64> = a
                .reports
                .iter()
                .filter(|s| s.t_s > warmup)
                .map(|s| s.level)
                .collect();
            let (level, level_sd) = mean_sd(&levels);
            StationMeasure {
                legacy: flow.is_none(),
                goodput_mbit_s: match flow {
                    Some(f) => f.throughput_bps * 1e-6,
                    None => a.throughput_mbit_s,
                },
                delay_ms: flow.and_then(|f| f.mean_delay).map(|d| d * 1e3),
                rtt_ms: flow.and_then(|f| f.mean_rtt).map(|d| d * 1e3),
                age_ms: flow.and_then(|f| f.age).map(|a| a * 1e3),
                level,
                level_sd,
            }
        })
        .collect()
}

/// Mean and standard deviation of `xs` (`None` if empty).
pub fn mean_sd(xs: &[f64]) -> (Option<f64>, Option<f64>) {
    if xs.is_empty() {
        return (None, None);
    }
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n;
    (Some(mean), Some(var.sqrt()))
}
