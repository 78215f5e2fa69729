//! The sending half: segmentation, the windows, loss recovery, the retransmission timer and
//! delivery-rate samples.
//!
//! The application writes bytes into a send buffer of `send_buffer` bytes ([`Sender::write`]);
//! [`Sender::poll_transmit`] cuts them into segments of at most SMSS bytes. A segment goes out
//! when it fits the congestion window (what is in flight plus the segment ≤ window, counted in
//! the window's unit: bytes, or segments as Linux counts them, [`WindowUnit`]) and the
//! receiver's window, the pacing rate allows it, and — unless `nodelay` — it is a full segment or nothing
//! is unacknowledged (Nagle). Segments are never split to fit a window.
//!
//! Loss recovery, the same under every congestion control:
//! - the third duplicate ACK starts fast recovery (unless it acknowledges nothing beyond the
//!   `recover` point of an earlier recovery or timeout): the controller sets its window
//!   ([`CongestionControl::on_loss`]) and the first unacknowledged segment is resent;
//! - once the peer has sent SACK blocks, recovery follows RFC 6675 (as Linux, whose SACK is on by
//!   default): a scoreboard marks the segments SACK blocks cover; a segment is lost when at
//!   least three SACKed segments, or more than 2·SMSS SACKed bytes, lie above it (`IsLost`,
//!   DupThresh = 3); `pipe` counts the segments neither SACKed nor lost (in the window's unit),
//!   plus those retransmitted in this recovery; while `pipe` leaves an SMSS of the controller's window, the
//!   lowest lost segment not yet resent goes out, else new data (`NextSeg` rules 1 and 2, no
//!   rescue retransmission);
//! - against a peer without SACK, NewReno (RFC 5681, RFC 6582): the window is inflated by 3·SMSS,
//!   then by one SMSS per further duplicate ACK; a partial ACK resends the next unacknowledged
//!   segment and deflates the inflation by the bytes it acknowledged (adding one SMSS back if
//!   that was at least one SMSS);
//! - a full ACK ends recovery: the inflation goes, the controller's window stays.
//!
//! The retransmission timer (RFC 6298) runs while data is unacknowledged and restarts when an
//! ACK acknowledges new data; on expiry the controller is told, the RTO backs off and sending
//! goes back to the first unacknowledged byte (go-back-N: the SACK marks are dropped, as RFC 2018
//! §8 advises since the receiver may have reneged, and every segment after the hole is presumed
//! lost). RTT samples follow Karn's rule: an ACK that acknowledges a retransmitted segment gives
//! none.
//!
//! Delivery-rate samples follow draft-cheng-iccrg-delivery-rate-estimation over cumulative ACKs,
//! in the window's unit: each segment remembers what was delivered and the times when it was
//! sent; a segment is delivered when first SACKed or else when cumulatively acknowledged, as
//! Linux counts `delivered`; the sample of an ACK is what was delivered since the newest segment
//! it delivers was sent, over the longer of that segment's send and ACK intervals, dropped if
//! that is shorter than the minimum RTT (Linux's `tcp_rate_gen`), and marked
//! application-limited when the sender ran out of data with room in its window.

use std::collections::VecDeque;
use std::time::Duration;

use acp_core::Time;

use super::cc::{AckEvent, CongestionControl, RateSample};
use super::rto::RtoEstimator;
use super::{Ack, Segment, TcpConfig, WindowUnit};

/// Duplicate ACKs, or SACKed segments above a hole, that mean a loss (RFC 5681, RFC 6675).
const DUP_THRESH: u32 = 3;

/// One transmission of a segment still unacknowledged.
#[derive(Debug, Clone, Copy)]
struct Sent {
    seq: u64,
    end: u64,
    sent_at: Time,
    retransmitted: bool,
    /// Whether a SACK block covered it.
    sacked: bool,
    /// Whether it was retransmitted in the current SACK-based recovery.
    resent: bool,
    /// The connection's delivery state when it was sent.
    delivered: u64,
    delivered_time: Time,
    first_sent_time: Time,
    app_limited: bool,
}

/// The connection's delivery state, as a transmission records it.
#[derive(Debug, Clone, Copy)]
struct DeliveryState {
    delivered: u64,
    delivered_time: Time,
    first_sent_time: Time,
    app_limited: bool,
}

impl DeliveryState {
    /// A transmission of `[seq, end)` at `sent_at` in this state.
    fn record(self, seq: u64, end: u64, sent_at: Time, retransmitted: bool) -> Sent {
        Sent {
            seq,
            end,
            sent_at,
            retransmitted,
            sacked: false,
            resent: false,
            delivered: self.delivered,
            delivered_time: self.delivered_time,
            first_sent_time: self.first_sent_time,
            app_limited: self.app_limited,
        }
    }
}

/// What keeps the next segment from going out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Blocked {
    NoData,
    Nagle,
    Window,
    Receiver,
    Pacing(Time),
}

/// The sender's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SenderStats {
    /// Segments sent, retransmissions included.
    pub segments: u64,
    /// Segments sent again (fast retransmits, partial-ACK and go-back-N resends).
    pub retransmits: u64,
    /// Fast retransmits (fast recoveries entered).
    pub fast_retransmits: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// ACKs received.
    pub acks: u64,
    /// Duplicate ACKs among them.
    pub dup_acks: u64,
}

/// The sending half of a connection.
#[derive(Debug)]
pub struct Sender {
    smss: u64,
    /// What the window counts, and what a full segment counts for in it.
    unit: WindowUnit,
    unit_smss: u64,
    nodelay: bool,
    send_buffer: u64,
    cc: Box<dyn CongestionControl>,
    rto: RtoEstimator,
    /// End of the bytes the application wrote.
    written: u64,
    /// First unacknowledged byte.
    una: u64,
    /// Next byte to send.
    nxt: u64,
    /// End of the highest byte ever sent.
    max: u64,
    /// The receiver's window edge: no byte at or beyond it may be sent.
    peer_edge: u64,
    sent: VecDeque<Sent>,
    rto_at: Option<Time>,
    dup_acks: u32,
    in_recovery: bool,
    /// End of the data outstanding when the last recovery or timeout began (RFC 6582's
    /// `recover`, exclusive).
    recover: Option<u64>,
    /// Bytes fast recovery adds to the controller's window (may be negative after deflation).
    inflation: i64,
    /// Whether the peer has sent SACK blocks (its recovery is then RFC 6675's).
    sack_seen: bool,
    retransmit_pending: bool,
    delivered: u64,
    delivered_time: Time,
    first_sent_time: Time,
    /// Nonzero while application-limited: delivered must pass it for samples to count again.
    app_limited_until: u64,
    round_end: u64,
    limited_this_round: bool,
    limited_last_round: bool,
    next_send: Time,
    stats: SenderStats,
}

impl Sender {
    /// A sender under `cfg` with congestion control `cc`, its window opened to the receive
    /// buffer, created at `now`.
    pub fn new(cfg: &TcpConfig, cc: Box<dyn CongestionControl>, now: Time) -> Self {
        Sender {
            smss: u64::from(cfg.smss),
            unit: cfg.window,
            unit_smss: cfg.window.count(u64::from(cfg.smss)),
            nodelay: cfg.nodelay,
            send_buffer: cfg.send_buffer,
            cc,
            rto: RtoEstimator::new(cfg.initial_rto, cfg.min_rto, cfg.max_rto),
            written: 0,
            una: 0,
            nxt: 0,
            max: 0,
            peer_edge: cfg.receive_buffer,
            sent: VecDeque::new(),
            rto_at: None,
            dup_acks: 0,
            in_recovery: false,
            recover: None,
            inflation: 0,
            sack_seen: false,
            retransmit_pending: false,
            delivered: 0,
            delivered_time: now,
            first_sent_time: now,
            app_limited_until: 0,
            round_end: 0,
            limited_this_round: false,
            limited_last_round: false,
            next_send: now,
            stats: SenderStats::default(),
        }
    }

    /// Free space in the send buffer (bytes).
    pub fn send_space(&self) -> u64 {
        self.send_buffer - (self.written - self.una)
    }

    /// Bytes written but not yet sent (what TCP_NOTSENT_LOWAT compares).
    pub fn not_sent(&self) -> u64 {
        self.written - self.nxt
    }

    /// The application writes `bytes` (at most [`send_space`](Self::send_space)).
    pub fn write(&mut self, bytes: u64) {
        self.written += bytes.min(self.send_space());
    }

    /// The window in force, in its unit: the controller's, plus fast recovery's inflation, at
    /// least one segment.
    pub fn window(&self) -> u64 {
        let w = self.cc.window() as i64 + self.inflation;
        w.max(self.unit_smss as i64) as u64
    }

    /// The controller's window in bytes (a packet window at SMSS bytes a segment), without
    /// recovery's inflation.
    pub fn cwnd(&self) -> u64 {
        self.cc.window() * self.unit.bytes(self.smss)
    }

    /// The controller's slow-start threshold in bytes, as [`cwnd`](Self::cwnd) (`u64::MAX`
    /// before the first loss).
    pub fn ssthresh(&self) -> u64 {
        self.cc
            .ssthresh()
            .saturating_mul(self.unit.bytes(self.smss))
    }

    /// The controller's pacing rate in bytes/s, if it paces.
    pub fn pacing_rate(&self) -> Option<f64> {
        self.cc
            .pacing_rate()
            .map(|r| r * self.unit.bytes(self.smss) as f64)
    }

    /// The congestion control.
    pub fn cc(&self) -> &dyn CongestionControl {
        self.cc.as_ref()
    }

    /// Bytes in flight: sent and neither acknowledged nor presumed lost.
    pub fn flight(&self) -> u64 {
        self.nxt - self.una
    }

    /// What is in flight in the window's unit (the records of what was sent cover exactly the
    /// bytes in flight).
    fn in_flight(&self) -> u64 {
        match self.unit {
            WindowUnit::Bytes => self.flight(),
            WindowUnit::Packets => self.sent.len() as u64,
        }
    }

    /// First unacknowledged byte.
    pub fn una(&self) -> u64 {
        self.una
    }

    /// The RTT estimator.
    pub fn rto(&self) -> &RtoEstimator {
        &self.rto
    }

    /// Whether fast recovery is under way.
    pub fn in_recovery(&self) -> bool {
        self.in_recovery
    }

    /// The counters.
    pub fn stats(&self) -> SenderStats {
        self.stats
    }

    fn blocked(&self, now: Time) -> Result<u64, Blocked> {
        let available = self.written - self.nxt;
        if available == 0 {
            return Err(Blocked::NoData);
        }
        let len = available.min(self.smss);
        if !self.nodelay && len < self.smss && self.nxt > self.una {
            return Err(Blocked::Nagle);
        }
        if self.outstanding() + self.unit.count(len) > self.window() {
            return Err(Blocked::Window);
        }
        if self.nxt + len > self.peer_edge {
            return Err(Blocked::Receiver);
        }
        if self.cc.pacing_rate().is_some() && now < self.next_send {
            return Err(Blocked::Pacing(self.next_send));
        }
        Ok(len)
    }

    /// The next segment to send now, if any; call until `None`.
    #[must_use]
    pub fn poll_transmit(&mut self, now: Time) -> Option<Segment> {
        if std::mem::take(&mut self.retransmit_pending) {
            // The first unacknowledged segment as it was sent (or SMSS if none is on record).
            let len = self
                .sent
                .front()
                .map_or(self.smss, |s| s.end - s.seq)
                .min(self.max - self.una);
            if len > 0 {
                let seg = Segment {
                    seq: self.una,
                    len: len as u32,
                };
                self.stats.segments += 1;
                self.stats.retransmits += 1;
                let state = self.delivery_state();
                let resent = self.in_recovery;
                for s in self.sent.iter_mut().take_while(|s| s.seq < seg.end()) {
                    *s = Sent {
                        resent,
                        ..state.record(s.seq, s.end, now, true)
                    };
                }
                self.rto_at.get_or_insert(now + self.rto.rto());
                return Some(seg);
            }
        }
        if self.sack_recovery() {
            if let Some(seg) = self.resend_lost(now) {
                return Some(seg);
            }
        }
        let len = match self.blocked(now) {
            Ok(len) => len,
            Err(Blocked::Window) => {
                self.limited_this_round = true;
                return None;
            }
            Err(Blocked::NoData) => {
                if self.outstanding() + self.unit_smss <= self.window() {
                    self.app_limited_until = (self.delivered + self.in_flight()).max(1);
                }
                return None;
            }
            Err(_) => return None,
        };
        if self.nxt == self.una {
            self.first_sent_time = now;
            self.delivered_time = now;
        }
        let seg = Segment {
            seq: self.nxt,
            len: len as u32,
        };
        let retransmission = seg.seq < self.max;
        let record = self
            .delivery_state()
            .record(seg.seq, seg.end(), now, retransmission);
        self.sent.push_back(record);
        self.nxt = seg.end();
        self.max = self.max.max(self.nxt);
        self.stats.segments += 1;
        self.stats.retransmits += u64::from(retransmission);
        if self.outstanding() + self.unit_smss > self.window() {
            self.limited_this_round = true;
        }
        if let Some(rate) = self.pacing_rate() {
            let gap = Duration::from_secs_f64(len as f64 / rate.max(1.0));
            self.next_send = self.next_send.max(now) + gap;
        }
        self.rto_at.get_or_insert(now + self.rto.rto());
        Some(seg)
    }

    /// What counts against the window: RFC 6675's `pipe` in SACK-based recovery, else what is
    /// in flight.
    fn outstanding(&self) -> u64 {
        if self.sack_recovery() {
            self.scoreboard().0
        } else {
            self.in_flight()
        }
    }

    fn sack_recovery(&self) -> bool {
        self.in_recovery && self.sack_seen
    }

    /// RFC 6675's `pipe` and the index of the lowest lost segment not yet resent, from one walk
    /// down the scoreboard.
    fn scoreboard(&self) -> (u64, Option<usize>) {
        let (mut pipe, mut lost_first) = (0, None);
        let (mut sacked_segments, mut sacked_bytes) = (0u32, 0u64);
        for (i, s) in self.sent.iter().enumerate().rev() {
            let len = s.end - s.seq;
            if s.sacked {
                sacked_segments += 1;
                sacked_bytes += len;
                continue;
            }
            let lost = sacked_segments >= DUP_THRESH || sacked_bytes > 2 * self.smss;
            if !lost {
                pipe += self.unit.count(len);
            } else if !s.resent {
                lost_first = Some(i);
            }
            if s.resent {
                pipe += self.unit.count(len);
            }
        }
        (pipe, lost_first)
    }

    /// Resends the lowest lost segment of a SACK-based recovery if the window has room.
    fn resend_lost(&mut self, now: Time) -> Option<Segment> {
        let (pipe, lost) = self.scoreboard();
        let i = lost?;
        let s = self.sent[i];
        let len = s.end - s.seq;
        if pipe + self.unit.count(len) > self.window() {
            self.limited_this_round = true;
            return None;
        }
        self.sent[i] = Sent {
            resent: true,
            ..self.delivery_state().record(s.seq, s.end, now, true)
        };
        self.stats.segments += 1;
        self.stats.retransmits += 1;
        self.rto_at.get_or_insert(now + self.rto.rto());
        Some(Segment {
            seq: s.seq,
            len: len as u32,
        })
    }

    /// Marks the segments the ACK's SACK blocks cover. A segment is delivered when first
    /// SACKed, as Linux counts `delivered`; returns the latest sent of those this ACK SACKed.
    fn mark_sacked(&mut self, now: Time, ack: &Ack) -> Option<Sent> {
        let (unit, mut delivered, mut newest) = (self.unit, 0, None::<Sent>);
        for &(start, end) in ack.sack.iter().flatten() {
            self.sack_seen = true;
            for s in self.sent.iter_mut() {
                if !s.sacked && s.seq >= start && s.end <= end {
                    s.sacked = true;
                    delivered += unit.count(s.end - s.seq);
                    if newest.is_none_or(|n| s.sent_at >= n.sent_at) {
                        newest = Some(*s);
                    }
                }
            }
        }
        if delivered > 0 {
            self.delivered += delivered;
            self.delivered_time = now;
        }
        newest
    }

    fn delivery_state(&self) -> DeliveryState {
        DeliveryState {
            delivered: self.delivered,
            delivered_time: self.delivered_time,
            first_sent_time: self.first_sent_time,
            app_limited: self.app_limited_until > 0,
        }
    }

    /// An ACK arrived; returns the RTT of the oldest segment it newly acknowledges, if Karn's
    /// rule allows one: what Linux's smoothed RTT averages (`tcp_clean_rtx_queue`'s
    /// `seq_rtt_us`), reported so that the simulator's mean RTT and the lab's measure the same
    /// thing. The estimator and the controller take the newest segment's (Linux's `ca_rtt_us`).
    pub fn handle_ack(&mut self, now: Time, ack: Ack) -> Option<Duration> {
        self.stats.acks += 1;
        if ack.ack > self.max {
            return None; // acknowledges bytes never sent
        }
        self.peer_edge = ack.ack + ack.window;
        let sacked = self.mark_sacked(now, &ack);
        if ack.ack <= self.una {
            if ack.ack == self.una && self.max > self.una {
                self.duplicate_ack(now);
            }
            return None;
        }
        let acked_bytes = ack.ack - self.una;
        // Delivered by this ACK: the records it acknowledges that no SACK block covered (bytes
        // the receiver held that no record stands for any more, after a timeout dropped the
        // SACK marks, were delivered when first SACKed).
        let (mut acked_segments, mut delivered) = (0, 0);
        let mut karn = true;
        let (mut oldest, mut newest): (Option<Sent>, Option<Sent>) = (None, None);
        // The latest sent of the segments this ACK delivers (SACKed ones were delivered then).
        let mut sampled = sacked;
        while let Some(s) = self.sent.front_mut() {
            if s.end > ack.ack {
                if s.seq < ack.ack {
                    if self.unit == WindowUnit::Bytes && !s.sacked {
                        delivered += ack.ack - s.seq;
                    }
                    s.seq = ack.ack;
                    karn = false;
                }
                break;
            }
            karn &= !s.retransmitted;
            let s = *s;
            self.sent.pop_front();
            acked_segments += 1;
            oldest.get_or_insert(s);
            if newest.is_none_or(|n| s.sent_at >= n.sent_at) {
                newest = Some(s);
            }
            if !s.sacked {
                delivered += self.unit.count(s.end - s.seq);
                if sampled.is_none_or(|n| s.sent_at >= n.sent_at) {
                    sampled = Some(s);
                }
            }
        }
        let since_sent = |s: Option<Sent>| {
            s.filter(|_| karn)
                .map(|s: Sent| now.saturating_since(s.sent_at))
        };
        let rtt = since_sent(newest);
        let acked = match self.unit {
            WindowUnit::Bytes => acked_bytes,
            WindowUnit::Packets => acked_segments,
        };
        self.delivered += delivered;
        self.delivered_time = now;
        // Linux's `tcp_rate_gen` drops samples over less than the minimum RTT: what such an
        // interval delivered was not paced by the path (e.g. data the receiver held, ACKed at
        // once when a hole fills).
        let min_rtt = self.rto.min_rtt().into_iter().chain(rtt).min();
        let rate = sampled.and_then(|p| {
            let send = p.sent_at.saturating_since(p.first_sent_time);
            let ack = now.saturating_since(p.delivered_time);
            self.first_sent_time = p.sent_at;
            let interval = send.max(ack);
            let valid = !interval.is_zero() && min_rtt.is_none_or(|m| interval >= m);
            let interval = interval.as_secs_f64();
            valid.then(|| RateSample {
                delivery_rate: (self.delivered - p.delivered) as f64 / interval,
                app_limited: p.app_limited,
                prior_delivered: p.delivered,
            })
        });
        if self.app_limited_until > 0 && self.delivered > self.app_limited_until {
            self.app_limited_until = 0;
        }
        self.una = ack.ack;
        self.nxt = self.nxt.max(self.una);
        self.dup_acks = 0;
        let round_start = self.una >= self.round_end;
        if round_start {
            self.round_end = self.max;
            self.limited_last_round = self.limited_this_round;
            self.limited_this_round = false;
        }
        let mut partial = false;
        // The ACK that ends recovery still belongs to it: no window growth on it.
        let in_recovery = self.in_recovery;
        if self.in_recovery {
            if self.recover.is_some_and(|r| ack.ack >= r) {
                self.in_recovery = false;
                self.inflation = 0;
                self.cc.on_recovery_end(now);
            } else {
                partial = true;
                if !self.sack_seen {
                    self.retransmit_pending = true;
                    self.inflation -= acked as i64;
                    if acked >= self.unit_smss {
                        self.inflation += self.unit_smss as i64;
                    }
                }
            }
        }
        if let Some(r) = rtt {
            self.rto.sample(r);
        }
        let event = AckEvent {
            acked,
            rtt,
            min_rtt: self.rto.min_rtt(),
            flight: self.in_flight(),
            delivered: self.delivered,
            in_recovery,
            cwnd_limited: self.limited_this_round || self.limited_last_round,
            round_start,
            rate,
        };
        self.cc.on_ack(now, &event);
        self.rto_at = (self.una < self.max || partial).then(|| now + self.rto.rto());
        since_sent(oldest)
    }

    fn duplicate_ack(&mut self, now: Time) {
        self.stats.dup_acks += 1;
        self.dup_acks += 1;
        if self.in_recovery {
            if !self.sack_seen {
                self.inflation += self.unit_smss as i64;
            }
            return;
        }
        if self.dup_acks == DUP_THRESH && self.recover.is_none_or(|r| self.una >= r) {
            self.recover = Some(self.max);
            self.in_recovery = true;
            self.cc.on_loss(now, self.in_flight());
            for s in self.sent.iter_mut() {
                s.resent = false;
            }
            self.inflation = if self.sack_seen {
                0
            } else {
                i64::from(DUP_THRESH) * self.unit_smss as i64
            };
            self.retransmit_pending = true;
            self.stats.fast_retransmits += 1;
        }
    }

    /// When the sender needs waking: its retransmission timer, or the pacing instant of a
    /// segment that only pacing holds back.
    pub fn poll_timeout(&self, now: Time) -> Option<Time> {
        let pacing = match self.blocked(now) {
            Err(Blocked::Pacing(t)) => Some(t),
            _ => None,
        };
        match (self.rto_at, pacing) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Runs the retransmission timer if it is due.
    pub fn handle_timeout(&mut self, now: Time) {
        if self.rto_at.is_none_or(|t| t > now) {
            return;
        }
        self.stats.timeouts += 1;
        self.cc.on_timeout(now, self.in_flight());
        self.rto.back_off();
        self.in_recovery = false;
        self.inflation = 0;
        self.dup_acks = 0;
        self.retransmit_pending = false;
        self.recover = Some(self.max);
        self.nxt = self.una;
        self.sent.clear();
        self.next_send = now;
        self.rto_at = Some(now + self.rto.rto());
    }
}
