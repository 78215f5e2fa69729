//! An 802.11ac downlink with aggregation: an access point sending A-MPDUs to its stations from
//! per-station queues, answered by block ACKs, with per-MPDU loss, link-layer retransmission,
//! rate adaptation, beacons, and the stations' own (feedback) frames contending for the air.
//!
//! # Scope and driving
//!
//! One BSS on one channel, station 0 the access point, stations `1..=n` its clients. Like
//! [`super::medium::Medium`] it is sans-IO and driven in the same order: [`Downlink::enqueue`]
//! when a packet reaches a MAC (downlink: from 0 to a station; uplink: from a station to 0),
//! [`Downlink::handle_timeout`] at [`Downlink::poll_timeout`], then [`Downlink::poll_delivery`]
//! until it returns `None`, with non-decreasing `now`. Calling late is harmless: everything in
//! between is played at its own instant, so outcomes depend only on the enqueue times and the
//! seed. Where the one-frame medium carries any frame between any stations, this model is the
//! thesis's setting (ch. 5 §5.2): aggregated downlink data, short unaggregated uplink frames.
//!
//! # Model
//!
//! - **Per-station queues.** The AP holds one FIFO per station (at most
//!   [`DownlinkConfig::queue_limit`] packets not yet sent; an arriving packet that does not fit
//!   is given back) and serves the stations with something to send in round-robin order, one
//!   A-MPDU per channel access (the §5.2 model's scheduler; modern APs' per-station queueing).
//!   A station with [`Traffic::Saturated`] is a *legacy* station: its queue never runs dry (the
//!   AP has a persistent backlog for it, as in the thesis's Fig. 4.10), so every frame to it is
//!   as large as the limits allow. Its packets are made up here and never handed out.
//! - **Aggregation** ([`super::ampdu`]). An A-MPDU takes the station's MPDUs in sequence order
//!   within [`Aggregation`]: at most `max_mpdus` MPDUs (64, the block ACK window), each an
//!   A-MSDU of up to `msdus_per_mpdu` packets, lasting at most 5.484 ms.
//! - **Block ACK** ([`super::blockack`]). The station answers SIFS later with a BlockAck whose
//!   bitmap reports every MPDU; with none received it sends nothing and the AP waits out the
//!   BlockAck timeout. A received BlockAck resets the AP's contention window, a missing one
//!   doubles it. Each MPDU is received with the probability the [`ErrorModel`] gives its bits at
//!   the station's SNR and MCS, after the PHY header (its SIG fields at BPSK ½) was decoded: one
//!   draw for the header, one per MPDU, from the stream `"wifi NAME station K errors"`.
//! - **Retransmission.** A lost MPDU is sent again, up to [`DownlinkConfig::retry_limit`]
//!   attempts, then dropped (`Err(Dropped { reason: DropReason::Loss, .. })` per packet). With
//!   [`Retransmissions::Dedicated`] (the default) a station's pending retransmissions go in an
//!   A-MPDU of their own before any new MPDU, which is what the thesis measured on its testbed
//!   (§4.2.1.1: retransmissions "usually occur in a dedicated frame", so that frame's aggregation
//!   level is lower); [`Retransmissions::Mixed`] puts them at the head of the next A-MPDU and
//!   fills it with new MPDUs (ns-3's behaviour). Either way an outstanding MPDU holds the block
//!   ACK window, so at most 64 MPDUs are outstanding per station. Received packets are handed
//!   out when their frame ends, without a reorder buffer: a retransmitted packet arrives after
//!   later ones, as the thesis saw (§4.2.1.1).
//! - **Rates** ([`RateControl`]). A fixed VHT MCS per station, or [`super::minstrel`]'s
//!   adaptation (new data at the best-throughput rate, retransmission frames at the most
//!   reliable rate) fed by every BlockAck. [`DownlinkConfig::rate_changes`] switches every
//!   fixed-rate station to another MCS at given instants (the thesis's Fig. 4.7 changes from
//!   two spatial streams to one), taking effect from the first exchange that starts then or
//!   later.
//! - **Contention.** The AP's data and every station's uplink queue are EDCA entities with
//!   [`DownlinkConfig::access`] (default: best effort, AIFSN 3, CW 15–1023), counting down on the
//!   slot grid as [`super::medium`]'s [`super::medium::Countdown::Edca`] does: after the medium
//!   turns idle at `t₀` an entity may send at `t₀ + SIFS + k·slot` for `k ≥ AIFSN + counter`;
//!   every boundary up to and including the one where somebody else starts costs one count; a
//!   frame that reaches an idle entity whose counter has run out goes at the next boundary; one
//!   that reaches it while the medium is busy draws a counter. Counters are uniform in
//!   `[0, CW]` (streams `"wifi NAME ap backoff"`, `"wifi NAME station K backoff"`), drawn after
//!   every exchange the entity took part in (post-backoff). Frames that start at the same
//!   boundary collide and are all lost; the air is then reserved until the ACK timeout after the
//!   longest of them.
//! - **Uplink (feedback) frames.** A packet from a station to the AP (a receiver report, a
//!   transport ACK) is one MPDU sent alone at the station's current rate and acknowledged by an
//!   ACK, retried up to the retry limit like the one-frame medium's frames. With
//!   [`DownlinkConfig::uplink_mpdus`] above 1 a station aggregates what its uplink queue holds
//!   (up to that many MPDUs of one packet, within the A-MPDU limits) into one A-MPDU answered
//!   by a BlockAck, as 802.11ac stations do with a block ACK agreement for the uplink (a bulk
//!   download's TCP ACKs); each MPDU is lost on its own and retried at the head of the queue.
//! - **Beacons** ([`DownlinkConfig::beacon_interval`]): every interval (the first at a uniform
//!   draw in the first, stream `"wifi NAME beacons"`) the AP sends a beacon at 6 Mbit/s, SIFS +
//!   one slot after the medium is idle, without backoff, ahead of its own data at the same
//!   boundary; a broadcast, never acknowledged or retried.
//!
//! Every frame sent is recorded ([`Downlink::take_frames`]): what a receiver's MAC timestamps
//! reveal, and what an aggregation-level controller or estimator learns from.
//!
//! # Non-goals
//!
//! Per-receiver (SINR) reception and capture, hidden terminals, RTS/CTS, MU-MIMO, TXOPs of
//! several A-MPDUs, lost BlockAcks or ACKs, the receiver's reorder buffer and several access
//! categories. MIMO links see the same SNR per stream as a single-stream link.
//!
//! Nothing here panics on a configuration that passed [`DownlinkConfig::validate`], except
//! [`Downlink::enqueue`] given a station that does not exist.

use std::collections::VecDeque;
use std::time::Duration;

use super::ampdu::{mpdu_bytes, plan, Aggregation, BLOCK_ACK_WINDOW, VHT_MAX_MPDU_BYTES};
use super::blockack::{block_ack_airtime, Window};
use super::channel::ErrorModel;
use super::medium::{pop_due, Delivered, Outcome};
use super::minstrel::{Minstrel, MinstrelConfig};
use super::phy::{edca_defaults, AcParams, Mcs, Mode, PhyConfig, Standard};
use crate::link::{DropReason, Dropped};
use crate::queue::Parcel;
use crate::rng::{Rng, Streams};
use crate::Time;

/// How a station's rate is chosen.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RateControl {
    /// Always this VHT MCS.
    Fixed(Mcs),
    /// Minstrel-HT-like adaptation.
    Minstrel(MinstrelConfig),
}

/// Where a station's downlink packets come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Traffic {
    /// The caller's packets ([`Downlink::enqueue`]).
    Offered,
    /// A legacy station: the AP always has packets of this many bytes for it.
    Saturated {
        /// Bytes per packet.
        packet_bytes: u32,
    },
}

/// One client station.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StationConfig {
    /// Rate selection for frames to (and from) it.
    pub rate: RateControl,
    /// SNR of its link with the AP (dB; `f64::INFINITY`: no frame errors).
    pub snr_db: f64,
    /// Its downlink traffic.
    pub traffic: Traffic,
}

/// When retransmissions are sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Retransmissions {
    /// In an A-MPDU of their own, before new MPDUs (the thesis's testbed, §4.2.1.1).
    #[default]
    Dedicated,
    /// At the head of the next A-MPDU, filled up with new MPDUs.
    Mixed,
}

/// A downlink's configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct DownlinkConfig {
    /// The stations (station `k` is `stations[k − 1]`).
    pub stations: Vec<StationConfig>,
    /// The AP's aggregation limits.
    pub aggregation: Aggregation,
    /// EDCA parameters of the AP and of the stations.
    pub access: AcParams,
    /// Attempts per MPDU (and per uplink frame) before it is dropped.
    pub retry_limit: u32,
    /// Packets per station queue at the AP (and per station's uplink queue), not counting those
    /// sent and awaiting their BlockAck or retransmission.
    pub queue_limit: usize,
    /// When retransmissions go.
    pub retransmissions: Retransmissions,
    /// Beacon interval (`None`: no beacons).
    pub beacon_interval: Option<Duration>,
    /// MPDUs a station's uplink A-MPDU holds at most (1: every uplink packet in a frame of its
    /// own, the default).
    pub uplink_mpdus: usize,
    /// How frame errors follow from the SNR.
    pub error_model: ErrorModel,
    /// Scheduled changes of the fixed-rate stations' MCS, in time order.
    pub rate_changes: Vec<RateChange>,
}

/// From `at` on, every station with [`RateControl::Fixed`] sends (and is answered) at `mcs`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateChange {
    /// When (since the start of the run).
    pub at: Time,
    /// The new rate.
    pub mcs: Mcs,
}

/// ns-3's beacon interval: 102.4 ms.
pub const BEACON_INTERVAL: Duration = Duration::from_micros(102_400);

impl DownlinkConfig {
    /// `stations` with the defaults: 64 MPDUs of one packet, best effort, 7 attempts, 1000
    /// packets per queue, dedicated retransmission frames, beacons every 102.4 ms, the
    /// table-based error model.
    pub fn new(stations: Vec<StationConfig>) -> Self {
        DownlinkConfig {
            stations,
            aggregation: Aggregation::default(),
            access: edca_defaults(Standard::Ac)[1],
            retry_limit: 7,
            queue_limit: 1000,
            retransmissions: Retransmissions::Dedicated,
            beacon_interval: Some(BEACON_INTERVAL),
            uplink_mpdus: 1,
            error_model: ErrorModel::Table,
            rate_changes: Vec::new(),
        }
    }

    /// Checks the configuration; the message names what is wrong.
    pub fn validate(&self) -> Result<(), String> {
        if self.stations.is_empty() {
            return Err("a downlink needs at least one station".into());
        }
        self.aggregation.validate()?;
        if !(1..=BLOCK_ACK_WINDOW).contains(&self.uplink_mpdus) {
            return Err(format!(
                "{} MPDUs per uplink A-MPDU: 1–{BLOCK_ACK_WINDOW} (the block ACK window)",
                self.uplink_mpdus
            ));
        }
        for (k, s) in self.stations.iter().enumerate() {
            let which = |e: String| format!("station {}: {e}", k + 1);
            match s.rate {
                RateControl::Fixed(mcs) => PhyConfig::ac(mcs).validate().map_err(which)?,
                RateControl::Minstrel(m) => m.validate().map_err(which)?,
            }
            if s.snr_db.is_nan() || s.snr_db == f64::NEG_INFINITY {
                return Err(which(format!(
                    "SNR {} dB must be a number above −∞",
                    s.snr_db
                )));
            }
            if let Traffic::Saturated { packet_bytes } = s.traffic {
                let mpdu = mpdu_bytes(true, &[packet_bytes]);
                if packet_bytes == 0 || mpdu > VHT_MAX_MPDU_BYTES {
                    return Err(which(format!(
                        "saturated packets of {packet_bytes} bytes: 1 byte to an MPDU of \
                         {VHT_MAX_MPDU_BYTES}"
                    )));
                }
            }
        }
        let a = self.access;
        if a.cw_min == 0 || a.cw_max < a.cw_min || a.aifsn < 1 {
            return Err(format!(
                "EDCA parameters AIFSN {} CW {}–{}: need AIFSN ≥ 1 and 1 ≤ CWmin ≤ CWmax",
                a.aifsn, a.cw_min, a.cw_max
            ));
        }
        if self.retry_limit == 0 {
            return Err("the retry limit counts attempts: at least 1".into());
        }
        if self.queue_limit == 0 {
            return Err("queues must hold at least one packet".into());
        }
        for (k, c) in self.rate_changes.iter().enumerate() {
            PhyConfig::ac(c.mcs)
                .validate()
                .map_err(|e| format!("rate change {}: {e}", k + 1))?;
            if k > 0 && c.at < self.rate_changes[k - 1].at {
                return Err(format!(
                    "rate change {} at {:?} comes before the one ahead of it",
                    k + 1,
                    c.at
                ));
            }
        }
        if let Some(i) = self.beacon_interval {
            if i < Duration::from_millis(1) || i > Duration::from_secs(3600) {
                return Err(format!("beacon interval {i:?} must be within 1 ms – 1 h"));
            }
        }
        Ok(())
    }
}

/// Counters of one station's link.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LinkCounters {
    /// A-MPDUs the AP sent to it (collided ones included).
    pub frames: u64,
    /// Of those, frames that held only retransmissions.
    pub retransmission_frames: u64,
    /// MPDUs sent (retransmissions included).
    pub mpdus: u64,
    /// Of those, retransmissions.
    pub retransmitted_mpdus: u64,
    /// Packets sent (retransmissions included).
    pub packets: u64,
    /// Packets received by the station.
    pub delivered: u64,
    /// Their bytes.
    pub delivered_bytes: u64,
    /// Packets dropped at the retry limit.
    pub dropped: u64,
    /// Packets refused by the full queue.
    pub queue_drops: u64,
    /// A-MPDUs lost in a collision.
    pub collisions: u64,
    /// Air held by the AP's exchanges with it (A-MPDU and BlockAck or its timeout), ns.
    pub airtime_ns: u64,
    /// Uplink frames the station put on the air.
    pub uplink_attempts: u64,
    /// Of those, received by the AP.
    pub uplink_delivered: u64,
    /// Uplink packets dropped at the retry limit.
    pub uplink_dropped: u64,
}

impl LinkCounters {
    /// Mean packets per A-MPDU sent: the aggregation level a receiver sees, retransmission
    /// frames included.
    pub fn mean_aggregation(&self) -> f64 {
        if self.frames == 0 {
            0.0
        } else {
            self.packets as f64 / self.frames as f64
        }
    }
}

/// One A-MPDU put on the air.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameRecord {
    /// When it started.
    pub start: Time,
    /// When its last symbol ended (the receiver's MAC timestamp).
    pub end: Time,
    /// Its station.
    pub station: usize,
    /// Its rate.
    pub mcs: Mcs,
    /// MPDUs in it.
    pub mpdus: usize,
    /// Packets in it.
    pub packets: usize,
    /// Packets the station received.
    pub received: usize,
    /// Whether it held only retransmissions.
    pub retransmission: bool,
    /// Whether it collided.
    pub collided: bool,
}

/// A packet at the AP, or queued for the uplink.
#[derive(Debug)]
struct Msdu<P> {
    /// `None` for a legacy station's made-up packet.
    parcel: Option<Parcel<P>>,
    bytes: u32,
}

/// An MPDU sent at least once and awaiting retransmission.
#[derive(Debug)]
struct Mpdu<P> {
    seq: u64,
    msdus: Vec<Msdu<P>>,
    bytes: u64,
    tries: u32,
}

/// A backoff entity.
#[derive(Debug, Clone, Copy)]
struct Entity {
    cw: u32,
    counter: u32,
    /// When its queue last turned non-empty (it may not send before the next boundary).
    eligible: Time,
}

#[derive(Debug)]
enum Rates {
    Fixed(Mcs),
    Adaptive(Box<Minstrel>),
}

#[derive(Debug)]
struct Station<P> {
    config: StationConfig,
    snr: f64,
    queue: VecDeque<Msdu<P>>,
    retries: VecDeque<Mpdu<P>>,
    window: Window,
    rates: Rates,
    uplink: VecDeque<(Msdu<P>, u32)>,
    entity: Entity,
    backoff: Rng,
    errors: Rng,
    counters: LinkCounters,
}

impl<P> Station<P> {
    fn has_downlink(&self) -> bool {
        !self.retries.is_empty()
            || !self.queue.is_empty()
            || matches!(self.config.traffic, Traffic::Saturated { .. })
    }

    /// The MCS its uplink frames use: the fixed one, or the adaptation's current best.
    fn uplink_mcs(&self) -> Mcs {
        match &self.rates {
            Rates::Fixed(m) => *m,
            Rates::Adaptive(m) => m.best(),
        }
    }
}

/// Who transmits at a slot boundary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sender {
    Beacon,
    Ap,
    Uplink(usize),
}

/// What one sender put on the air.
struct Sent<P> {
    sender: Sender,
    air: Duration,
    /// The exchange's end when it is sent alone and answered (data, SIFS, ACK or BlockAck; a
    /// beacon's last symbol); otherwise it ends an ACK timeout after the frame.
    answered_end: Option<Time>,
    /// Packets received, at the frame's end.
    delivered: Vec<Delivered<P>>,
    /// Packets given up at the retry limit (`served_at` is set to the exchange's end).
    dropped: Vec<Dropped<P>>,
}

impl<P> Sent<P> {
    fn new(sender: Sender, air: Duration) -> Self {
        Sent {
            sender,
            air,
            answered_end: None,
            delivered: Vec::new(),
            dropped: Vec::new(),
        }
    }
}

/// Counters of the whole channel.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ChannelCounters {
    /// Beacons sent.
    pub beacons: u64,
    /// Exchanges in which frames collided.
    pub collisions: u64,
    /// Time held by exchanges, ns.
    pub busy_ns: u64,
    /// The part of it spent in exchanges where frames collided, ns.
    pub collision_ns: u64,
}

/// The downlink; `P` is the caller's packet.
#[derive(Debug)]
pub struct Downlink<P> {
    config: DownlinkConfig,
    /// Timing shared by every VHT rate (slot, SIFS, ACK timeout).
    timing: PhyConfig,
    stations: Vec<Station<P>>,
    ap: Entity,
    ap_backoff: Rng,
    /// The station the round-robin scheduler looks at first next time (0-based).
    next_station: usize,
    /// The first of [`DownlinkConfig::rate_changes`] not yet in force.
    next_rate_change: usize,
    /// When the medium last turned idle (it is busy before).
    idle_since: Time,
    next_beacon: Option<Time>,
    outbox: VecDeque<(Time, Outcome<P>)>,
    frames: Vec<FrameRecord>,
    counters: ChannelCounters,
}

const AP: usize = 0;

impl<P> Downlink<P> {
    /// A downlink named `name` (the label of its random streams) starting idle at `start`.
    pub fn new(
        config: DownlinkConfig,
        streams: &Streams,
        name: &str,
        start: Time,
    ) -> Result<Self, String> {
        config.validate()?;
        let fresh = Entity {
            cw: config.access.cw_min,
            counter: 0,
            eligible: Time::ZERO,
        };
        let stations = config
            .stations
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let k = i + 1;
                let rates = match s.rate {
                    RateControl::Fixed(m) => Rates::Fixed(m),
                    RateControl::Minstrel(m) => Rates::Adaptive(Box::new(Minstrel::new(
                        m,
                        config.access,
                        streams.stream(&format!("wifi {name} station {k} rate samples")),
                        start,
                    ))),
                };
                Station {
                    config: *s,
                    snr: 10f64.powf(s.snr_db / 10.0),
                    queue: VecDeque::new(),
                    retries: VecDeque::new(),
                    window: Window::default(),
                    rates,
                    uplink: VecDeque::new(),
                    entity: fresh,
                    backoff: streams.stream(&format!("wifi {name} station {k} backoff")),
                    errors: streams.stream(&format!("wifi {name} station {k} errors")),
                    counters: LinkCounters::default(),
                }
            })
            .collect();
        let next_beacon = config.beacon_interval.map(|i| {
            let mut rng = streams.stream(&format!("wifi {name} beacons"));
            start + Duration::from_nanos((rng.unit() * i.as_nanos() as f64) as u64)
        });
        Ok(Downlink {
            timing: PhyConfig::ac(Mcs::new(0, 1, 20)),
            stations,
            ap: fresh,
            ap_backoff: streams.stream(&format!("wifi {name} ap backoff")),
            next_station: 0,
            next_rate_change: 0,
            idle_since: start,
            next_beacon,
            outbox: VecDeque::new(),
            frames: Vec::new(),
            counters: ChannelCounters::default(),
            config,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &DownlinkConfig {
        &self.config
    }

    /// Counters of station `station` (1-based).
    pub fn link_counters(&self, station: usize) -> Option<&LinkCounters> {
        self.stations
            .get(station.checked_sub(1)?)
            .map(|s| &s.counters)
    }

    /// Counters of the channel.
    pub fn counters(&self) -> &ChannelCounters {
        &self.counters
    }

    /// The current best rate of station `station` (1-based).
    pub fn rate(&self, station: usize) -> Option<Mcs> {
        self.stations
            .get(station.checked_sub(1)?)
            .map(Station::uplink_mcs)
    }

    /// The A-MPDUs sent since the last call, in order.
    pub fn take_frames(&mut self) -> Vec<FrameRecord> {
        std::mem::take(&mut self.frames)
    }

    /// A packet from `from` to `to` (one of them the AP, 0) reaches `from`'s MAC at `now`. A
    /// packet its queue cannot hold is given back (`DropReason::QueueFull`), as is a downlink
    /// packet to a legacy station, whose queue is never short of packets.
    ///
    /// # Panics
    ///
    /// If the pair is not the AP and one of its stations.
    pub fn enqueue(
        &mut self,
        now: Time,
        from: usize,
        to: usize,
        parcel: Parcel<P>,
    ) -> Result<(), Dropped<P>> {
        let n = self.stations.len();
        let station = if from == AP { to } else { from };
        assert!(
            (from == AP) != (to == AP) && (1..=n).contains(&station),
            "no frame from station {from} to station {to} on a downlink of {n} stations"
        );
        self.advance(now);
        let limit = self.config.queue_limit;
        let ap_idle = !self.ap_has_frames();
        let s = &mut self.stations[station - 1];
        let full = if from == AP {
            s.queue.len() >= limit || matches!(s.config.traffic, Traffic::Saturated { .. })
        } else {
            s.uplink.len() >= limit
        };
        if full {
            s.counters.queue_drops += u64::from(from == AP);
            return Err(Dropped {
                reason: DropReason::QueueFull,
                parcel,
                served_at: None,
            });
        }
        let msdu = Msdu {
            bytes: parcel.bytes,
            parcel: Some(parcel),
        };
        let (entity, rng) = if from == AP {
            s.queue.push_back(msdu);
            if !ap_idle {
                return Ok(());
            }
            (&mut self.ap, &mut self.ap_backoff)
        } else {
            s.uplink.push_back((msdu, 0));
            if s.uplink.len() > 1 {
                return Ok(());
            }
            (&mut s.entity, &mut s.backoff)
        };
        // A frame reaching an empty entity: if the medium is busy and the counter has run
        // out it draws one; if idle it may go at the next boundary.
        if now < self.idle_since {
            if entity.counter == 0 {
                entity.counter = rng.up_to(entity.cw);
            }
        } else {
            entity.eligible = now;
        }
        Ok(())
    }

    /// When something next happens: a transmission starts or a delivery or drop is due.
    /// `None`: nothing will happen until a packet is enqueued.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Time> {
        let next_out = self.outbox.front().map(|(t, _)| *t);
        let next_start = self.next_start().map(|(t, _)| t);
        next_out.into_iter().chain(next_start).min()
    }

    /// Plays everything due up to `now`, in time order.
    pub fn handle_timeout(&mut self, now: Time) {
        self.advance(now);
    }

    /// The next delivery or drop due by `now`, in time order.
    #[must_use]
    pub fn poll_delivery(&mut self, now: Time) -> Option<Outcome<P>> {
        pop_due(&mut self.outbox, now)
    }

    fn ap_has_frames(&self) -> bool {
        self.stations.iter().any(Station::has_downlink)
    }

    /// The instant of slot boundary `k` of the current idle period.
    fn boundary_time(&self, k: u64) -> Time {
        let slot = self.timing.slot().as_nanos() as u64;
        self.idle_since + self.timing.sifs() + Duration::from_nanos(k.saturating_mul(slot))
    }

    /// The boundary at which an entity with `aifsn` and this state may send.
    fn boundary(&self, aifsn: u32, e: &Entity) -> u64 {
        let by_counter = u64::from(aifsn) + u64::from(e.counter);
        let grid_start = self.idle_since + self.timing.sifs();
        let by_arrival = if e.eligible < grid_start {
            0
        } else {
            let slot = self.timing.slot().as_nanos() as u64;
            (e.eligible - grid_start).as_nanos() as u64 / slot + 1
        };
        by_counter.max(by_arrival)
    }

    /// The next boundary anybody sends at, and who.
    fn next_start(&self) -> Option<(Time, Vec<Sender>)> {
        let aifsn = self.config.access.aifsn;
        let mut candidates: Vec<(u64, Sender)> = Vec::new();
        if let Some(tbtt) = self.next_beacon {
            let beacon = Entity {
                cw: 0,
                counter: 0,
                eligible: tbtt,
            };
            candidates.push((self.boundary(BEACON_AIFSN, &beacon), Sender::Beacon));
        }
        if self.ap_has_frames() {
            candidates.push((self.boundary(aifsn, &self.ap), Sender::Ap));
        }
        for (i, s) in self.stations.iter().enumerate() {
            if !s.uplink.is_empty() {
                candidates.push((self.boundary(aifsn, &s.entity), Sender::Uplink(i)));
            }
        }
        let first = candidates.iter().map(|(k, _)| *k).min()?;
        let mut senders: Vec<Sender> = candidates
            .into_iter()
            .filter(|(k, _)| *k == first)
            .map(|(_, s)| s)
            .collect();
        // The beacon goes ahead of the AP's own data at the same boundary.
        if senders.contains(&Sender::Beacon) {
            senders.retain(|s| *s != Sender::Ap);
        }
        Some((self.boundary_time(first), senders))
    }

    fn advance(&mut self, now: Time) {
        while let Some((at, senders)) = self.next_start() {
            if at > now {
                break;
            }
            self.transmit(at, &senders);
        }
    }

    /// Puts the rate changes due by `at` in force.
    fn change_rates(&mut self, at: Time) {
        while let Some(c) = self.config.rate_changes.get(self.next_rate_change).copied() {
            if c.at > at {
                break;
            }
            for s in &mut self.stations {
                if let Rates::Fixed(m) = &mut s.rates {
                    *m = c.mcs;
                }
            }
            self.next_rate_change += 1;
        }
    }

    /// Frames of `senders` start at `at` (the boundary of the current idle period).
    fn transmit(&mut self, at: Time, senders: &[Sender]) {
        self.change_rates(at);
        let slot = self.timing.slot().as_nanos() as u64;
        let k = (at - (self.idle_since + self.timing.sifs())).as_nanos() as u64 / slot;
        self.count_down(k, senders);
        let collided = senders.len() > 1;
        let mut sent: Vec<Sent<P>> = senders
            .iter()
            .map(|s| match *s {
                Sender::Beacon => self.send_beacon(at),
                Sender::Ap => self.send_ampdu(at, collided),
                Sender::Uplink(i) => self.send_uplink(at, i, collided),
            })
            .collect();
        let end = match (collided, sent.first()) {
            (false, Some(one)) => one
                .answered_end
                .unwrap_or(at + one.air + self.timing.ack_timeout()),
            _ => {
                let longest = sent.iter().map(|s| s.air).max().unwrap_or_default();
                self.counters.collisions += 1;
                at + longest + self.timing.ack_timeout()
            }
        };
        // Deliveries at their frame's end, then drops at the exchange's.
        for s in &mut sent {
            for d in s.delivered.drain(..) {
                self.outbox.push_back((d.at, Ok(d)));
            }
        }
        for s in &mut sent {
            for mut d in s.dropped.drain(..) {
                d.served_at = Some(end);
                self.outbox.push_back((end, Err(d)));
            }
        }
        let held = (end - at).as_nanos() as u64;
        self.counters.busy_ns += held;
        if collided {
            self.counters.collision_ns += held;
        }
        self.idle_since = end;
        for s in &sent {
            let success = !collided && s.answered_end.is_some();
            let cw_max = self.config.access.cw_max;
            let cw_min = self.config.access.cw_min;
            let (entity, rng) = match s.sender {
                Sender::Beacon => continue,
                Sender::Ap => (&mut self.ap, &mut self.ap_backoff),
                Sender::Uplink(i) => {
                    let st = &mut self.stations[i];
                    (&mut st.entity, &mut st.backoff)
                }
            };
            entity.cw = if success {
                cw_min
            } else {
                (2 * entity.cw + 1).min(cw_max)
            };
            entity.counter = rng.up_to(entity.cw);
            entity.eligible = Time::ZERO;
        }
    }

    /// Every entity that does not send at boundary `k` counts the boundaries it waited.
    fn count_down(&mut self, k: u64, senders: &[Sender]) {
        let aifsn = self.config.access.aifsn;
        let ap_waits = !senders.contains(&Sender::Ap);
        let ap_frames = self.ap_has_frames();
        if ap_waits {
            wait(&mut self.ap, &mut self.ap_backoff, aifsn, k, ap_frames);
        }
        for (i, s) in self.stations.iter_mut().enumerate() {
            if !senders.contains(&Sender::Uplink(i)) {
                let frames = !s.uplink.is_empty();
                wait(&mut s.entity, &mut s.backoff, aifsn, k, frames);
            }
        }
    }

    /// A beacon: a broadcast, over at its last symbol.
    fn send_beacon(&mut self, at: Time) -> Sent<P> {
        let interval = self.config.beacon_interval.unwrap_or(BEACON_INTERVAL);
        self.next_beacon = self.next_beacon.map(|t| t + interval);
        self.counters.beacons += 1;
        let mut out = Sent::new(Sender::Beacon, self.timing.beacon_airtime());
        out.answered_end = Some(at + out.air);
        out
    }

    /// The AP's next A-MPDU, to the next station in turn with something to send.
    fn send_ampdu(&mut self, at: Time, collided: bool) -> Sent<P> {
        let n = self.stations.len();
        let i = (0..n)
            .map(|j| (self.next_station + j) % n)
            .find(|j| self.stations[*j].has_downlink())
            .unwrap_or(0);
        self.next_station = (i + 1) % n;
        let limits = self.config.aggregation;
        let dedicated = self.config.retransmissions == Retransmissions::Dedicated;
        let s = &mut self.stations[i];
        let only_retries = dedicated && !s.retries.is_empty();
        let choice = match &mut s.rates {
            Rates::Fixed(m) => (None, *m),
            Rates::Adaptive(m) if only_retries => {
                let c = m.robust(at);
                (Some(c.index), c.mcs)
            }
            Rates::Adaptive(m) => {
                let c = m.choose(at);
                (Some(c.index), c.mcs)
            }
        };
        let phy = PhyConfig::ac(choice.1);
        if let Traffic::Saturated { packet_bytes } = s.config.traffic {
            while s.queue.len() < limits.max_packets() {
                s.queue.push_back(Msdu {
                    parcel: None,
                    bytes: packet_bytes,
                });
            }
        }
        // Candidates: the retransmissions, then new MPDUs the window has room for.
        let mut lengths: Vec<u64> = s.retries.iter().map(|m| m.bytes).collect();
        let mut groups: Vec<usize> = Vec::new();
        if !only_retries {
            let mut taken = 0;
            while lengths.len() < limits.max_mpdus
                && groups.len() < s.window.room()
                && taken < s.queue.len()
            {
                let sizes: Vec<u32> = s
                    .queue
                    .iter()
                    .skip(taken)
                    .take(limits.msdus_per_mpdu)
                    .map(|m| m.bytes)
                    .collect();
                let mut count = sizes.len();
                while count > 1 && mpdu_bytes(true, &sizes[..count]) > VHT_MAX_MPDU_BYTES {
                    count -= 1;
                }
                lengths.push(mpdu_bytes(true, &sizes[..count]));
                groups.push(count);
                taken += count;
            }
        }
        let frame = plan(&phy, &limits, lengths.len(), &lengths);
        let from_retries = frame.mpdus.min(s.retries.len());
        let mut mpdus: Vec<Mpdu<P>> = s.retries.drain(..from_retries).collect();
        for &count in groups.iter().take(frame.mpdus - from_retries) {
            let msdus: Vec<Msdu<P>> = s.queue.drain(..count).collect();
            let sizes: Vec<u32> = msdus.iter().map(|m| m.bytes).collect();
            let seq = s.window.assign().unwrap_or_default();
            mpdus.push(Mpdu {
                seq,
                bytes: mpdu_bytes(true, &sizes),
                msdus,
                tries: 0,
            });
        }
        // Reception: the PHY header once, then each MPDU.
        let model = self.config.error_model;
        let header_ok = !collided
            && s.errors.chance(model.success_probability(
                s.snr,
                Mode::BPSK_HALF,
                phy.header_bits(),
            ));
        let received: Vec<bool> = mpdus
            .iter()
            .map(|m| {
                let p = model.success_probability(s.snr, phy.data_mode(), 8 * m.bytes);
                header_ok && s.errors.chance(p)
            })
            .collect();
        let air = frame.airtime;
        let end_air = at + air;
        let answered = received.iter().any(|r| *r);
        let answered_end = answered.then(|| end_air + phy.sifs() + block_ack_airtime(&phy));
        let exchange_end = answered_end.unwrap_or(end_air + phy.ack_timeout());
        let c = &mut s.counters;
        let packets: usize = mpdus.iter().map(|m| m.msdus.len()).sum();
        let retransmitted = mpdus.iter().filter(|m| m.tries > 0).count();
        c.frames += 1;
        c.mpdus += mpdus.len() as u64;
        c.retransmitted_mpdus += retransmitted as u64;
        c.retransmission_frames += u64::from(retransmitted == mpdus.len());
        c.packets += packets as u64;
        c.collisions += u64::from(collided);
        c.airtime_ns += (exchange_end - at).as_nanos() as u64;
        if let (Some(index), Rates::Adaptive(m)) = (choice.0, &mut s.rates) {
            m.report(index, mpdus.len(), received.iter().filter(|r| **r).count());
        }
        let mut out = Sent::new(Sender::Ap, air);
        out.answered_end = (!collided).then_some(answered_end).flatten();
        let mut delivered = 0;
        let mut failed = Vec::new();
        for (mut m, ok) in mpdus.into_iter().zip(received) {
            m.tries += 1;
            if ok {
                s.window.settle(m.seq);
                for msdu in m.msdus {
                    delivered += 1;
                    s.counters.delivered += 1;
                    s.counters.delivered_bytes += u64::from(msdu.bytes);
                    if let Some(parcel) = msdu.parcel {
                        out.delivered.push(Delivered {
                            at: end_air,
                            from: AP,
                            to: i + 1,
                            parcel,
                        });
                    }
                }
            } else if m.tries >= self.config.retry_limit {
                s.window.settle(m.seq);
                for msdu in m.msdus {
                    s.counters.dropped += 1;
                    if let Some(parcel) = msdu.parcel {
                        out.dropped.push(Dropped {
                            reason: DropReason::Loss,
                            parcel,
                            served_at: None,
                        });
                    }
                }
            } else {
                failed.push(m);
            }
        }
        for m in failed.into_iter().rev() {
            s.retries.push_front(m);
        }
        self.frames.push(FrameRecord {
            start: at,
            end: end_air,
            station: i + 1,
            mcs: choice.1,
            mpdus: frame.mpdus,
            packets,
            received: delivered,
            retransmission: retransmitted == frame.mpdus,
            collided,
        });
        out
    }

    /// Station `i`'s (0-based) next uplink frame.
    fn send_uplink(&mut self, at: Time, i: usize, collided: bool) -> Sent<P> {
        let model = self.config.error_model;
        let limit = self.config.retry_limit;
        let s = &mut self.stations[i];
        let phy = PhyConfig::ac(s.uplink_mcs());
        let queued = s.uplink.len().min(self.config.uplink_mpdus);
        if queued == 0 {
            return Sent::new(Sender::Uplink(i), Duration::ZERO);
        }
        // One MPDU goes alone, answered by an ACK; several in an A-MPDU, by a BlockAck.
        let (count, air, answer) = if queued == 1 {
            (1, phy.data_airtime(s.uplink[0].0.bytes), phy.ack_airtime())
        } else {
            let lengths: Vec<u64> = s
                .uplink
                .iter()
                .take(queued)
                .map(|(m, _)| mpdu_bytes(true, &[m.bytes]))
                .collect();
            let limits = Aggregation {
                max_mpdus: queued,
                ..Aggregation::default()
            };
            let frame = plan(&phy, &limits, queued, &lengths);
            (frame.mpdus, frame.airtime, block_ack_airtime(&phy))
        };
        let header = model.success_probability(s.snr, Mode::BPSK_HALF, phy.header_bits());
        // A lone MPDU: one draw for header and body; an A-MPDU: the header, then each MPDU.
        let received: Vec<bool> = if count == 1 {
            let body = phy.data_bits(s.uplink[0].0.bytes);
            let p = header * model.success_probability(s.snr, phy.data_mode(), body);
            vec![!collided && s.errors.chance(p)]
        } else {
            let header_ok = !collided && s.errors.chance(header);
            let bodies: Vec<u64> = s
                .uplink
                .iter()
                .take(count)
                .map(|(m, _)| 8 * mpdu_bytes(true, &[m.bytes]))
                .collect();
            bodies
                .into_iter()
                .map(|bits| {
                    let p = model.success_probability(s.snr, phy.data_mode(), bits);
                    header_ok && s.errors.chance(p)
                })
                .collect()
        };
        s.counters.uplink_attempts += 1;
        let end_air = at + air;
        let mut out = Sent::new(Sender::Uplink(i), air);
        if received.iter().any(|r| *r) {
            out.answered_end = Some(end_air + phy.sifs() + answer);
        }
        let mut failed = Vec::new();
        let sent: Vec<_> = s.uplink.drain(..count).collect();
        for ((msdu, tries), ok) in sent.into_iter().zip(received) {
            let tries = tries + 1;
            if !ok && tries < limit {
                failed.push((msdu, tries));
                continue;
            }
            let Some(parcel) = msdu.parcel else {
                continue;
            };
            if ok {
                s.counters.uplink_delivered += 1;
                out.delivered.push(Delivered {
                    at: end_air,
                    from: i + 1,
                    to: AP,
                    parcel,
                });
            } else {
                s.counters.uplink_dropped += 1;
                out.dropped.push(Dropped {
                    reason: DropReason::Loss,
                    parcel,
                    served_at: None,
                });
            }
        }
        for m in failed.into_iter().rev() {
            s.uplink.push_front(m);
        }
        out
    }
}

/// AIFSN of beacons: SIFS + one slot (ns-3's beacon `Txop`).
const BEACON_AIFSN: u32 = 1;

/// An entity that did not send at boundary `k` counts down the boundaries from its AIFS to `k`
/// (EDCA counts the one where another starts); one whose counter had run out while it waited
/// for a frame, or whose frame was waiting for the next boundary, draws a new counter.
fn wait(e: &mut Entity, rng: &mut Rng, aifsn: u32, k: u64, has_frames: bool) {
    let expired = u64::from(aifsn) + u64::from(e.counter) <= k;
    if has_frames && expired {
        e.counter = rng.up_to(e.cw);
    } else {
        let counted = (k + 1).saturating_sub(u64::from(aifsn));
        e.counter = e
            .counter
            .saturating_sub(u32::try_from(counted).unwrap_or(u32::MAX));
    }
    e.eligible = Time::ZERO;
}
