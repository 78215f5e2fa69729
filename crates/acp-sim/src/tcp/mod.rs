//! TCP models: a sender and a receiver that run on the simulator's links like any other flow,
//! with the congestion controls of the ACP+ paper's comparisons behind one trait.
//!
//! Sans-IO, like `acp-core`: every call takes `now`; the engine asks what to send and when to be
//! woken. One connection is a [`Connection`] (the application at both ends, the [`Sender`] and
//! the [`Receiver`]); the engine carries its [`Wire`] packets, data along the flow's path and
//! ACKs back along the reversed path, exactly as it carries ACP's updates and ACKs.
//!
//! What is modelled (the parameters are [`TcpConfig`]'s):
//! - a byte stream cut into segments of at most SMSS bytes; Nagle's algorithm unless `nodelay`
//!   (a segment shorter than SMSS waits while data is unacknowledged);
//! - a congestion window ([`cc`]: NewReno, CUBIC, BBR v1, Vegas, YeAH) counted in bytes, as
//!   RFC 5681 and ns-3 count it, or in packets, as Linux does ([`WindowUnit`]);
//! - loss recovery as Linux runs it against a peer that sends SACK blocks ([`sender`]): RACK's
//!   time-based loss marking with a reordering window and tail-loss probes (RFC 8985,
//!   [`rack`]), RFC 6675's scoreboard and `pipe`, lost segments resent before new data, and a
//!   scoreboard that survives a retransmission timeout (only the holes are resent); against a
//!   peer without SACK ([`TcpConfig::sack`] off), NewReno fast recovery (RFC 5681, RFC 6582:
//!   the third duplicate ACK, window inflation, a retransmission per partial ACK);
//! - the retransmission timer of RFC 6298 with Linux's bound (`SRTT + max(4·RTTVAR, 200 ms)`,
//!   Karn's rule, exponential backoff up to 60 s), restarted when the first unacknowledged
//!   segment is resent;
//! - a receiver that delivers bytes to its application **in order only** (data behind a hole
//!   waits for the retransmission: head-of-line blocking), ACKs a duplicate, out-of-order or
//!   hole-filling segment at once and delays other ACKs (every second full segment's worth of
//!   bytes, or a timer), and advertises its free receive buffer (rwnd);
//! - delivery-rate samples (draft-cheng-iccrg-delivery-rate-estimation) for BBR, pacing when
//!   the controller sets a rate.
//!
//! Not modelled: the handshake and teardown (the connection exists at the flow's start with
//! the peer's window known), D-SACK (so RACK's reordering window never widens), F-RTO and the
//! undo of spurious recoveries, timestamps, window scaling limits, ECN, PRR, slow start after
//! idle, receive-buffer autotuning. Segments carry 40 bytes of IPv4
//! and TCP headers (no options) on the links; pure ACKs are 40 bytes plus their SACK option.

pub mod app;
pub mod cc;
pub mod connection;
pub mod gro;
pub mod rack;
pub mod receiver;
pub mod rto;
pub mod sender;

use std::time::Duration;

pub use app::{Application, UpdateMode};
pub use cc::CcKind;
pub use connection::{Connection, Output};
pub use receiver::Receiver;
pub use sender::Sender;
pub use sender::SenderStats;

/// Bytes of IPv4 and TCP headers on every segment (no options).
pub const TCP_IP_OVERHEAD: u32 = 40;

/// Segments per pacing burst, as Linux sizes its TSO/GSO packets for BBR (`tcp_tso_autosize`
/// with `sk_pacing_shift` 10 and `bbr_tso_segs_goal`): what the pacing `rate` sends in about a
/// millisecond (1/1024 s), in segments of `smss` (both in one unit: bytes, or packets), at
/// least two and at most 44 (GSO's 64 KB of 1,448-byte segments). Two up to 2,048 segments a
/// second (23.7 Mbit/s of 1,448-byte segments). Linux takes one below 1.2 Mbit/s of pacing and
/// adds more at minimum RTTs under ~4 ms (`tcp_tso_rtt_log`); neither is modelled.
pub fn tso_segs(rate: f64, smss: u64) -> u64 {
    ((rate / 1024.0 / smss.max(1) as f64) as u64).clamp(2, 44)
}

/// A data segment: `len` bytes of the stream from byte `seq` on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    /// Offset of its first byte in the stream.
    pub seq: u64,
    /// Payload bytes.
    pub len: u32,
    /// PSH: the segment ends an application's write.
    pub push: bool,
}

impl Segment {
    /// Offset just past its last byte.
    pub fn end(&self) -> u64 {
        self.seq + u64::from(self.len)
    }
}

/// SACK blocks an ACK carries at most (RFC 2018: three beside the timestamps option that Linux
/// sends).
pub const SACK_BLOCKS: usize = 3;

/// A pure ACK: everything before `ack` arrived; the receiver can take bytes up to
/// `ack + window`; `sack` lists blocks `[start, end)` held beyond `ack` (RFC 2018), the one
/// holding the latest arrival first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ack {
    /// Cumulative acknowledgement: the next byte expected.
    pub ack: u64,
    /// Free receive buffer (bytes).
    pub window: u64,
    /// SACK blocks, unused ones `None`.
    pub sack: [Option<(u64, u64)>; SACK_BLOCKS],
}

impl Ack {
    /// An ACK without SACK blocks.
    pub fn new(ack: u64, window: u64) -> Self {
        Ack {
            ack,
            window,
            sack: [None; SACK_BLOCKS],
        }
    }

    /// Bytes of its SACK option on the wire: kind, length and 8 bytes per block, padded to four
    /// bytes with two NOPs as Linux sends it (none without blocks).
    pub fn sack_option_bytes(&self) -> u32 {
        match self.sack.iter().flatten().count() as u32 {
            0 => 0,
            n => 4 + 8 * n,
        }
    }
}

/// What a TCP flow puts on a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    /// Data, sender to receiver.
    Data(Segment),
    /// An ACK, receiver to sender.
    Ack(Ack),
}

impl Wire {
    /// Bytes on the link, headers included.
    pub fn wire_bytes(&self) -> u32 {
        match self {
            Wire::Data(s) => s.len + TCP_IP_OVERHEAD,
            Wire::Ack(a) => TCP_IP_OVERHEAD + a.sack_option_bytes(),
        }
    }
}

/// The receiver's delayed ACKs: an ACK once enough bytes are unacknowledged, or `timeout` after
/// the first unacknowledged byte (the details: [`receiver`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DelayedAck {
    /// Full segments per ACK (2 in RFC 1122 and Linux): with `linux`, an ACK once more than
    /// `every − 1` receive-MSS estimates are unacknowledged (Linux: more than one); without, once
    /// `every · SMSS` bytes are.
    pub every: u32,
    /// The delayed-ACK timer (Linux: 40 ms, its minimum).
    pub timeout: Duration,
    /// Linux's receiver: the receive-MSS estimate, the ACK of a pushed or short segment once the
    /// application has read it, and quick ACKs at the start, after an idle gap and after a
    /// duplicate ([`receiver`]). `false`: ns-3's receiver, which counts bytes against SMSS only.
    pub linux: bool,
}

impl Default for DelayedAck {
    fn default() -> Self {
        DelayedAck {
            every: 2,
            timeout: Duration::from_millis(40),
            linux: true,
        }
    }
}

/// What the congestion window counts.
///
/// In bytes (RFC 5681, ns-3), a segment takes its length from the window and the controllers see
/// bytes acknowledged, in flight and delivered. In packets (Linux: `snd_cwnd`, `packets_out`,
/// `delivered`), every segment takes one, however short, and the controllers see segments; a
/// pacing rate then converts to bytes at SMSS bytes per segment (Linux's `mss_cache`), so short
/// segments go out faster than the rate says, as in Linux. The two differ only when segments
/// are shorter than SMSS.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WindowUnit {
    /// Bytes.
    #[default]
    Bytes,
    /// Segments.
    Packets,
}

impl WindowUnit {
    /// What a segment of `len` bytes counts for.
    pub fn count(self, len: u64) -> u64 {
        match self {
            WindowUnit::Bytes => len,
            WindowUnit::Packets => 1,
        }
    }

    /// Bytes one unit of a rate stands for, with segments of at most `smss` bytes.
    pub fn bytes(self, smss: u64) -> u64 {
        match self {
            WindowUnit::Bytes => 1,
            WindowUnit::Packets => smss,
        }
    }
}

/// A Linux receiver's `net.ipv4.tcp_rmem` default and maximum (bytes): the receive buffer
/// starts at `default` and autotuning grows it up to `max` while the application keeps up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rmem {
    pub default: u64,
    pub max: u64,
}

impl Rmem {
    /// The share of the buffer Linux advertises as window: half (`tcp_adv_win_scale = 1`
    /// before Linux 6.6, and the initial `scaling_ratio` since; `docs/LAB.md` has the share
    /// measured in the lab).
    pub const WINDOW_SHARE: f64 = 0.5;

    /// The largest window (bytes) the buffer grows to: the model's `receive_buffer`. The
    /// model's window is fixed, so `default` (where the buffer starts) plays no part in it.
    pub fn window(&self) -> u64 {
        (self.max as f64 * Self::WINDOW_SHARE) as u64
    }

    /// Checks the pair, naming what is wrong.
    pub fn validate(&self) -> Result<(), String> {
        if self.default == 0 || self.default > self.max {
            return Err("rmem = [default, max] needs 0 < default ≤ max".into());
        }
        Ok(())
    }
}

/// A connection's parameters; the defaults are Linux's where it has one.
#[derive(Debug, Clone, PartialEq)]
pub struct TcpConfig {
    /// Sender maximum segment size (payload bytes).
    pub smss: u32,
    /// Initial congestion window in segments (RFC 6928, Linux: 10).
    pub initial_window: u32,
    /// Disable Nagle's algorithm (TCP_NODELAY; Linux sockets have Nagle on by default).
    pub nodelay: bool,
    /// The receiver's delayed ACKs; `None` ACKs every segment at once.
    pub delayed_ack: Option<DelayedAck>,
    /// GRO at the receiving host: one (stretch) ACK per super-packet ([`gro`]); `None`: none.
    pub gro: Option<gro::Gro>,
    /// Socket send buffer (bytes the application may have written and not had acknowledged).
    pub send_buffer: u64,
    /// Receive buffer (bytes): the largest window the receiver advertises.
    pub receive_buffer: u64,
    /// The Linux receiver's `net.ipv4.tcp_rmem` this connection stands for, if the scenario
    /// gave one (`rmem = [default, max]`): `receive_buffer` is then the window Linux's
    /// autotuning grows to, [`Rmem::window`]. The lab sets the receiving host's `tcp_rmem`.
    pub rmem: Option<Rmem>,
    /// Lower bound of the RTO's variance term (Linux's `tcp_rto_min`, 200 ms; `rto`), so
    /// also of the RTO.
    pub min_rto: Duration,
    /// RTO before the first RTT sample (RFC 6298: 1 s).
    pub initial_rto: Duration,
    /// Upper bound of the RTO, backoff included (RFC 6298 allows 60 s or more).
    pub max_rto: Duration,
    /// The congestion control.
    pub cc: CcKind,
    /// What the congestion window counts (bytes by default, as RFC 5681).
    pub window: WindowUnit,
    /// Whether the receiver sends SACK blocks (RFC 2018; Linux negotiates them by default).
    /// With them the sender recovers as Linux does (RACK-TLP, the scoreboard kept across a
    /// timeout); without, by NewReno's rules. Scenario key `sack` (the lab refuses `false`: its
    /// kernel negotiates SACK).
    pub sack: bool,
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            smss: 1448,
            initial_window: 10,
            nodelay: false,
            delayed_ack: Some(DelayedAck::default()),
            gro: None,
            send_buffer: 1 << 20,
            receive_buffer: 1 << 20,
            rmem: None,
            min_rto: Duration::from_millis(200),
            initial_rto: Duration::from_secs(1),
            max_rto: Duration::from_secs(60),
            cc: CcKind::NewReno,
            window: WindowUnit::Bytes,
            sack: true,
        }
    }
}

impl TcpConfig {
    /// The congestion control, counting in the window's unit (segments of `smss` bytes, or
    /// packets); `seed` drives its random choices.
    pub fn controller(&self, seed: u64) -> Box<dyn cc::CongestionControl> {
        let smss = self.window.count(u64::from(self.smss)) as u32;
        self.cc.build(smss, self.initial_window, seed)
    }

    /// Checks the parameters, naming the first one out of range.
    pub fn validate(&self) -> Result<(), String> {
        if self.smss < 64 {
            return Err("smss must be at least 64 bytes".into());
        }
        if self.initial_window == 0 {
            return Err("initial_window must be at least 1 segment".into());
        }
        if self.receive_buffer < 2 * u64::from(self.smss) {
            return Err("receive_buffer must hold at least two segments (2 · smss)".into());
        }
        if self.send_buffer < u64::from(self.smss) {
            return Err("send_buffer must hold at least one segment (smss)".into());
        }
        if let Some(d) = self.delayed_ack {
            if d.every == 0 || d.timeout.is_zero() {
                return Err("delayed_ack needs every ≥ 1 and a positive timeout".into());
            }
        }
        if self.gro.is_some_and(|g| g.max_bytes < u64::from(self.smss)) {
            return Err("gro must hold at least one segment (smss)".into());
        }
        if self.min_rto.is_zero() || self.min_rto > self.max_rto {
            return Err("min_rto must be positive and at most max_rto".into());
        }
        if self.initial_rto < self.min_rto || self.initial_rto > self.max_rto {
            return Err("initial_rto must lie between min_rto and max_rto".into());
        }
        Ok(())
    }
}
