//! The receiving half: reassembly, in-order delivery and ACKs.
//!
//! Bytes reach the application only in order: a segment beyond a hole is held until the hole is
//! filled, and then everything up to the next hole is delivered at once (head-of-line blocking).
//! The application reads at once, so the advertised window is the whole receive buffer; data held
//! beyond a hole is not subtracted (like Linux, the window's right edge never moves left).
//!
//! ACKs (RFC 5681 §4.2, RFC 1122): a duplicate segment, a segment beyond a hole and a segment
//! that fills (part of) a hole are acknowledged at once (Linux's SACK compression, which delays
//! the fourth and later ACKs for one `rcv_nxt` by up to 1 ms, is not modelled). Otherwise, with
//! delayed ACKs, the delayed-ACK timer, started by the first unacknowledged byte, sends one
//! unless a rule calls for it sooner. With [`DelayedAck::linux`] those are Linux's rules
//! (`net/ipv4/tcp_input.c`, `tcp.c`; read in 6.18, the lab's kernel):
//!
//! - **The receive-MSS estimate** (`tcp_measure_rcv_mss`; it starts at min(SMSS, window / 2,
//!   536 bytes), at least 88). A segment at least as long as it becomes it (at most SMSS). A
//!   shorter one of at least 536 bytes, or of at least 88 without PSH, becomes it when the
//!   segment before had the same length (the model's headers carry no options: Linux compares
//!   the length with its TCP header, options included, and subtracts the header with the
//!   timestamp option, so with timestamps on a segment of 524 bytes already qualifies).
//! - **Pushed:** a segment shorter than the estimate that did not become it, or one at least as
//!   long that carries PSH (the latter since 6.11), marks the ACK pushed; when the application
//!   reads and so empties the receive queue, a pushed ACK goes out (`tcp_cleanup_rbuf`). This
//!   model's application reads at once. (The second mark, `ICSK_ACK_PUSHED2`, matters only to an
//!   interactive, "ping-pong" connection; data here flows one way.)
//! - **More than `every − 1` estimates** (Linux: more than one) unacknowledged: an ACK at once
//!   (`__tcp_ack_snd_check`; the window's right edge advances, as the application has read).
//! - **Quick ACKs:** each data segment is ACKed at once while credits remain; each ACK uses
//!   one. The first data segment and one after an idle gap longer than the receiver's RTO raise
//!   them to min(16, window / (2 · estimate)) (`tcp_event_data_recv`, `tcp_incr_quickack`), and
//!   so does a duplicate (`tcp_enter_quickack_mode`; a segment beyond a hole does not, since
//!   Linux 4.18). Linux's receiver takes its RTO from the handshake's RTT sample (that sample
//!   plus max(2 × it, `tcp_rto_min`)); the model has no handshake and takes `min_rto`, its lower
//!   bound. Linux also grants one credit whenever it raises its window's slow-start threshold
//!   (`tcp_grow_window`, tied to receive-buffer autotuning): not modelled.
//!
//! Without `linux` (ns-3's receiver), an ACK goes once `every · SMSS` bytes are unacknowledged.
//!
//! Every ACK carries SACK blocks (RFC 2018; Linux negotiates SACK by default; none if the
//! configuration turns SACK off) for the data held
//! beyond a hole, at most [`SACK_BLOCKS`]: first the range holding the latest out-of-order
//! segment, then those holding the ones before it, newest first (§4), then any other held
//! range, highest first.

use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

use acp_core::Time;

use super::gro::{self, AckWhen, Gro};
use super::{Ack, DelayedAck, Segment, TcpConfig, SACK_BLOCKS};

/// Out-of-order arrivals remembered to order the SACK blocks by recency.
const RECENT: usize = 16;

/// Linux's `TCP_MSS_DEFAULT` (RFC 1122's default MSS): where the receive-MSS estimate starts, and
/// the length from which a short segment may become it.
const MSS_DEFAULT: u64 = 536;
/// Linux's `TCP_MIN_MSS`: the estimate's floor, and the shortest segment without PSH that may
/// become it.
const MIN_MSS: u64 = 88;
/// Linux's `TCP_MAX_QUICKACKS`: the most quick-ACK credits one event grants.
const MAX_QUICKACKS: u32 = 16;

/// Linux's receive-side ACK state (`icsk_ack`).
#[derive(Debug)]
struct LinuxAcks {
    /// Receive-MSS estimate (`rcv_mss`), bytes.
    rcv_mss: u64,
    /// Length of the last short segment that could become the estimate (`last_seg_size`; 0:
    /// none).
    last_seg_size: u64,
    /// `ICSK_ACK_PUSHED`.
    pushed: bool,
    /// Quick-ACK credits.
    quick: u32,
    /// Arrival of the last in-order data (`lrcvtime`; none before the first).
    last_data: Option<Time>,
    /// The receiver's RTO, against which an idle gap is judged.
    rto: Duration,
    /// The sender's MSS: the estimate's ceiling, bytes.
    smss: u64,
    /// The receive window, bytes: it bounds the quick-ACK credits.
    window: u64,
}

impl LinuxAcks {
    fn new(cfg: &TcpConfig) -> Self {
        let smss = u64::from(cfg.smss);
        LinuxAcks {
            rcv_mss: smss.min(cfg.receive_buffer / 2).clamp(MIN_MSS, MSS_DEFAULT),
            last_seg_size: 0,
            pushed: false,
            quick: 0,
            last_data: None,
            rto: cfg.min_rto,
            smss,
            window: cfg.receive_buffer,
        }
    }

    /// In-order data of `len` bytes arrived at `now` (`tcp_event_data_recv`).
    fn data(&mut self, now: Time, len: u64, push: bool) {
        self.measure(len, push);
        if self.last_data.is_none_or(|t| now - t > self.rto) {
            self.grant();
        }
        self.last_data = Some(now);
    }

    /// `tcp_measure_rcv_mss`.
    fn measure(&mut self, len: u64, push: bool) {
        let last = std::mem::take(&mut self.last_seg_size);
        if len >= self.rcv_mss {
            self.rcv_mss = len.min(self.smss);
            self.pushed |= push;
            return;
        }
        if len >= MSS_DEFAULT || (len >= MIN_MSS && !push) {
            self.last_seg_size = len;
            if len == last {
                self.rcv_mss = len;
                return;
            }
        }
        self.pushed = true;
    }

    /// Raises the quick-ACK credits (`tcp_incr_quickack`).
    fn grant(&mut self) {
        let credits = match self.window / (2 * self.rcv_mss) {
            0 => 2,
            n => u32::try_from(n).unwrap_or(u32::MAX).min(MAX_QUICKACKS),
        };
        self.quick = self.quick.max(credits);
    }

    /// Whether `unacked` in-order bytes call for an ACK now.
    fn due(&self, unacked: u64, every: u32) -> bool {
        unacked > u64::from(every.saturating_sub(1)) * self.rcv_mss || self.quick > 0 || self.pushed
    }

    /// An ACK went out (`tcp_event_ack_sent`: the marks cleared, one credit used).
    fn acked(&mut self) {
        self.pushed = false;
        self.quick = self.quick.saturating_sub(1);
    }
}

/// The receiver's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReceiverStats {
    /// Segments received.
    pub segments: u64,
    /// Segments that brought nothing new (wholly below the next expected byte or inside data
    /// held beyond a hole): retransmissions of what had arrived, as the network never
    /// duplicates a segment.
    pub duplicates: u64,
    /// Segments beyond a hole.
    pub out_of_order: u64,
    /// ACKs sent.
    pub acks: u64,
}

/// The receiving half of a connection.
#[derive(Debug)]
pub struct Receiver {
    smss: u64,
    receive_buffer: u64,
    delayed_ack: Option<DelayedAck>,
    /// Linux's ACK rules, with delayed ACKs that follow them.
    linux: Option<LinuxAcks>,
    /// Stretch ACKs behind GRO.
    gro: Option<Gro>,
    /// Whether ACKs carry SACK blocks.
    sack: bool,
    /// Next byte expected: everything before it was delivered to the application.
    rcv_nxt: u64,
    /// Data held beyond holes: start → end, disjoint, all above `rcv_nxt`.
    held: BTreeMap<u64, u64>,
    /// First bytes of the latest out-of-order segments, newest first: the SACK blocks name the
    /// ranges holding them in that order (RFC 2018 §4).
    recent: VecDeque<u64>,
    /// Bytes delivered since the last ACK.
    unacked: u64,
    ack_timer: Option<Time>,
    ack_due: bool,
    stats: ReceiverStats,
}

impl Receiver {
    /// A receiver under `cfg`.
    pub fn new(cfg: &TcpConfig) -> Self {
        Receiver {
            smss: u64::from(cfg.smss),
            receive_buffer: cfg.receive_buffer,
            delayed_ack: cfg.delayed_ack,
            linux: cfg
                .delayed_ack
                .is_some_and(|d| d.linux)
                .then(|| LinuxAcks::new(cfg)),
            gro: cfg.gro,
            sack: cfg.sack,
            rcv_nxt: 0,
            held: BTreeMap::new(),
            recent: VecDeque::new(),
            unacked: 0,
            ack_timer: None,
            ack_due: false,
            stats: ReceiverStats::default(),
        }
    }

    /// Next byte expected (all bytes before it were delivered in order).
    pub fn rcv_nxt(&self) -> u64 {
        self.rcv_nxt
    }

    /// Bytes held beyond holes.
    pub fn held(&self) -> u64 {
        self.held.iter().map(|(s, e)| e - s).sum()
    }

    /// The counters.
    pub fn stats(&self) -> ReceiverStats {
        self.stats
    }

    /// A segment arrived; returns how many bytes it let through to the application.
    pub fn handle_segment(&mut self, now: Time, seg: Segment) -> u64 {
        self.stats.segments += 1;
        if seg.end() <= self.rcv_nxt {
            self.stats.duplicates += 1;
            if let Some(l) = &mut self.linux {
                l.grant();
            }
            self.ack_due = true;
            return 0;
        }
        if seg.seq > self.rcv_nxt {
            if self.holds(seg.seq, seg.end()) {
                self.stats.duplicates += 1;
            }
            self.stats.out_of_order += 1;
            self.hold(seg.seq, seg.end());
            self.recent.retain(|&s| s != seg.seq);
            self.recent.push_front(seg.seq);
            self.recent.truncate(RECENT);
            self.ack_due = true;
            return 0;
        }
        let filled_hole = !self.held.is_empty();
        let before = self.rcv_nxt;
        self.rcv_nxt = seg.end();
        while let Some((&start, &end)) = self.held.first_key_value() {
            if start > self.rcv_nxt {
                break;
            }
            self.rcv_nxt = self.rcv_nxt.max(end);
            self.held.pop_first();
        }
        let rcv_nxt = self.rcv_nxt;
        self.recent.retain(|&s| s >= rcv_nxt);
        let delivered = self.rcv_nxt - before;
        if let Some(l) = &mut self.linux {
            l.data(now, u64::from(seg.len), seg.push);
        }
        match self.delayed_ack {
            Some(d) if !filled_hole => {
                self.unacked += delivered;
                let due = match &self.linux {
                    Some(l) => l.due(self.unacked, d.every),
                    None => self.unacked >= u64::from(d.every) * self.smss,
                };
                match gro::ack_when(self.gro, self.unacked, due) {
                    AckWhen::Now => self.ack_due = true,
                    AckWhen::EndOfPoll => self.ack_timer = Some(now),
                    AckWhen::Timer => {
                        self.ack_timer.get_or_insert(now + d.timeout);
                    }
                }
            }
            _ => self.ack_due = true,
        }
        delivered
    }

    /// Whether `[start, end)` is held already.
    fn holds(&self, start: u64, end: u64) -> bool {
        self.held
            .range(..=start)
            .next_back()
            .is_some_and(|(_, &e)| e >= end)
    }

    /// Keeps `[start, end)` beyond a hole, merged with what is held already.
    fn hold(&mut self, mut start: u64, mut end: u64) {
        if let Some((&s, &e)) = self.held.range(..=start).next_back() {
            if e >= start {
                start = s;
                end = end.max(e);
                self.held.remove(&s);
            }
        }
        while let Some((&s, &e)) = self.held.range(start..).next() {
            if s > end {
                break;
            }
            end = end.max(e);
            self.held.remove(&s);
        }
        self.held.insert(start, end);
    }

    /// The ACK to send now, if one is due.
    #[must_use]
    pub fn poll_ack(&mut self) -> Option<Ack> {
        if !std::mem::take(&mut self.ack_due) {
            return None;
        }
        self.unacked = 0;
        self.ack_timer = None;
        self.stats.acks += 1;
        if let Some(l) = &mut self.linux {
            l.acked();
        }
        let mut ack = Ack::new(self.rcv_nxt, self.receive_buffer);
        if !self.sack {
            return Some(ack);
        }
        let mut blocks = ack.sack.iter_mut();
        let mut reported: Vec<u64> = Vec::with_capacity(SACK_BLOCKS);
        let others = self.held.keys().rev().copied();
        for seq in self.recent.iter().copied().chain(others) {
            let Some((&start, &end)) = self.held.range(..=seq).next_back() else {
                continue;
            };
            if end <= seq || reported.contains(&start) {
                continue;
            }
            let Some(slot) = blocks.next() else {
                break;
            };
            *slot = Some((start, end));
            reported.push(start);
        }
        Some(ack)
    }

    /// When the delayed-ACK timer expires.
    pub fn poll_timeout(&self) -> Option<Time> {
        self.ack_timer
    }

    /// Runs the delayed-ACK timer if it is due.
    pub fn handle_timeout(&mut self, now: Time) {
        if self.ack_timer.is_some_and(|t| t <= now) {
            self.ack_due = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(seq: u64, len: u32) -> Segment {
        Segment {
            seq,
            len,
            push: false,
        }
    }

    #[test]
    fn sack_blocks_name_the_latest_arrival_first() {
        let cfg = TcpConfig {
            smss: 100,
            ..TcpConfig::default()
        };
        let mut r = Receiver::new(&cfg);
        let t = Time::ZERO;
        r.handle_segment(t, seg(0, 100));
        // Holes at 100, 300, 500 and 700; held 200, 400, 600 and 800, then half of 700.
        for s in [200, 400, 600, 800, 700] {
            r.handle_segment(t, seg(s, if s == 700 { 50 } else { 100 }));
        }
        let a = r.poll_ack().unwrap();
        assert_eq!(a.ack, 100);
        // 700 merged into [600, 750): first; then 800's, 400's (newest first); 200's is left out.
        assert_eq!(
            a.sack,
            [Some((600, 750)), Some((800, 900)), Some((400, 500))]
        );
        assert_eq!(a.sack_option_bytes(), 28);
        // Filling the first hole acknowledges [0, 300); the three blocks above remain, in the
        // same order.
        r.handle_segment(t, seg(100, 100));
        let a = r.poll_ack().unwrap();
        assert_eq!(a.ack, 300);
        assert_eq!(
            a.sack,
            [Some((600, 750)), Some((800, 900)), Some((400, 500))]
        );
    }

    #[test]
    fn holds_data_behind_a_hole_and_releases_it_at_once() {
        // ns-3's receiver: no quick ACKs for the first segments.
        let cfg = TcpConfig {
            smss: 100,
            delayed_ack: Some(DelayedAck {
                linux: false,
                ..DelayedAck::default()
            }),
            ..TcpConfig::default()
        };
        let mut r = Receiver::new(&cfg);
        let t = Time::ZERO;
        assert_eq!(r.handle_segment(t, seg(0, 100)), 100);
        assert_eq!(r.poll_ack(), None, "one segment: the ACK is delayed");
        assert_eq!(r.handle_segment(t, seg(200, 100)), 0);
        assert_eq!(r.handle_segment(t, seg(400, 100)), 0);
        assert_eq!(r.handle_segment(t, seg(300, 100)), 0);
        assert_eq!(r.held(), 300);
        assert_eq!(
            r.poll_ack().map(|a| a.ack),
            Some(100),
            "out of order: at once"
        );
        assert_eq!(r.handle_segment(t, seg(100, 100)), 400);
        assert_eq!(
            r.poll_ack().map(|a| a.ack),
            Some(500),
            "hole filled: at once"
        );
        assert_eq!(r.handle_segment(t, seg(0, 100)), 0);
        assert_eq!(r.poll_ack().map(|a| a.ack), Some(500), "duplicate: at once");
        assert_eq!(r.stats().out_of_order, 3);
        assert_eq!(r.stats().duplicates, 1);
    }

    /// Feeds `segs` back to back at `t` (each one's `seq` following the last) and returns, for
    /// each, whether an ACK went out at once.
    fn acks(r: &mut Receiver, t: Time, segs: &[(u32, bool)]) -> Vec<bool> {
        segs.iter()
            .map(|&(len, push)| {
                let seq = r.rcv_nxt();
                r.handle_segment(t, Segment { seq, len, push });
                r.poll_ack().is_some()
            })
            .collect()
    }

    /// A receiver whose 16 quick-ACK credits from its first segment are used up (at 0).
    fn settled(cfg: &TcpConfig) -> Receiver {
        let mut r = Receiver::new(cfg);
        let quick = acks(&mut r, Time::ZERO, &[(1448, false); 16]);
        assert_eq!(quick, [true; 16], "the first segment grants 16 quick ACKs");
        assert_eq!(acks(&mut r, Time::ZERO, &[(1448, false)]), [false]);
        assert!(r.poll_timeout().is_some());
        r.handle_timeout(Time::from_millis(40));
        assert!(r.poll_ack().is_some());
        r
    }

    #[test]
    fn linux_quick_acks_at_the_start_after_an_idle_gap_and_after_a_duplicate() {
        let cfg = TcpConfig::default();
        // 1 MiB window / (2 × 536-byte estimate) > 16: 16 credits.
        let mut r = settled(&cfg);
        let full = (1448, false);
        assert_eq!(
            acks(&mut r, Time::ZERO, &[full; 4]),
            [false, true, false, true]
        );
        // A gap longer than the RTO (min_rto, 200 ms) grants 16 again; one shorter does not.
        let t = Time::from_millis(150);
        assert_eq!(acks(&mut r, t, &[full; 2]), [false, true]);
        let t = Time::from_millis(351);
        assert_eq!(
            acks(&mut r, t, &[full; 17]),
            [[true; 16].as_slice(), &[false]].concat()
        );
        r.handle_timeout(t + Duration::from_millis(40));
        assert!(r.poll_ack().is_some());
        // A duplicate: its own ACK uses one credit, 15 remain.
        r.handle_segment(t, seg(0, 1448));
        assert!(r.poll_ack().is_some(), "duplicate: at once");
        assert_eq!(
            acks(&mut r, t, &[full; 16]),
            [[true; 15].as_slice(), &[false]].concat()
        );
        // A small window grants fewer: 4 KiB / (2 × 536-byte estimate) = 3. (The second
        // 100-byte segment makes the estimate 100: from the third on, one ACK per two.)
        let small = TcpConfig {
            receive_buffer: 4096,
            ..TcpConfig::default()
        };
        let mut r = Receiver::new(&small);
        assert_eq!(
            acks(&mut r, t, &[(100, false); 5]),
            [true, true, true, false, true]
        );
    }

    #[test]
    fn linux_acks_equal_short_segments_every_second_once_the_estimate_learns_them() {
        let mut r = settled(&TcpConfig::default());
        let t = Time::ZERO;
        // The estimate is 1448. The first 536-byte segment is short: pushed, ACKed at once. The
        // second of the same length becomes the estimate; from then on one ACK per two
        // (more than one estimate unacknowledged).
        assert_eq!(
            acks(&mut r, t, &[(536, false); 7]),
            [true, false, true, false, true, false, true]
        );
        // With PSH the same, until the estimate is learnt: from then on each segment is as long
        // as the estimate and carries PSH, so each is pushed (Linux 6.11 on).
        let mut r = settled(&TcpConfig::default());
        assert_eq!(
            acks(&mut r, t, &[(600, true); 4]),
            [true, false, true, true]
        );
        // Segments of varying length shorter than the estimate never become it: each is
        // pushed, each ACKed.
        let mut r = settled(&TcpConfig::default());
        let varying = [
            (536, false),
            (700, false),
            (536, false),
            (900, false),
            (536, false),
        ];
        assert_eq!(acks(&mut r, t, &varying), [true; 5]);
        // Under 536 bytes, equal segments become the estimate only without PSH.
        let mut r = settled(&TcpConfig::default());
        assert_eq!(
            acks(&mut r, t, &[(200, false); 5]),
            [true, false, true, false, true]
        );
        let mut r = settled(&TcpConfig::default());
        assert_eq!(acks(&mut r, t, &[(200, true); 3]), [true; 3]);
        // A segment as long as the estimate that carries PSH is pushed (Linux 6.11 on).
        let mut r = settled(&TcpConfig::default());
        assert_eq!(
            acks(&mut r, t, &[(1448, true), (1448, false), (1448, false)]),
            [true, false, true]
        );
    }

    #[test]
    fn linux_acks_a_filled_hole_at_once() {
        let mut r = settled(&TcpConfig::default());
        let t = Time::ZERO;
        let base = r.rcv_nxt();
        r.handle_segment(t, seg(base + 1448, 1448));
        assert!(r.poll_ack().is_some(), "beyond a hole: at once");
        r.handle_segment(t, seg(base, 1448));
        assert_eq!(
            r.poll_ack().map(|a| a.ack),
            Some(base + 2896),
            "hole filled: at once"
        );
        assert_eq!(
            acks(&mut r, t, &[(1448, false)]),
            [false],
            "no credits granted"
        );
    }

    #[test]
    fn ns3_receiver_counts_bytes_against_smss_only() {
        let ns3 = TcpConfig {
            delayed_ack: Some(DelayedAck {
                linux: false,
                ..DelayedAck::default()
            }),
            ..TcpConfig::default()
        };
        let mut r = Receiver::new(&ns3);
        let t = Time::ZERO;
        assert_eq!(
            acks(&mut r, t, &[(536, true); 6]),
            [false, false, false, false, false, true],
            "no quick ACKs, PSH ignored, an ACK per 2 × 1448 bytes"
        );
        assert_eq!(acks(&mut r, t, &[(1448, false); 2]), [false, true]);
    }

    #[test]
    fn delays_acks_to_every_second_full_segment_or_the_timer() {
        // ns-3's receiver: no quick ACKs for the first segments.
        let cfg = TcpConfig {
            smss: 100,
            delayed_ack: Some(DelayedAck {
                linux: false,
                ..DelayedAck::default()
            }),
            ..TcpConfig::default()
        };
        let mut r = Receiver::new(&cfg);
        let t = Time::from_millis(5);
        r.handle_segment(t, seg(0, 100));
        assert_eq!(r.poll_timeout(), Some(Time::from_millis(45)));
        r.handle_segment(t, seg(100, 100));
        assert_eq!(r.poll_ack().map(|a| a.ack), Some(200));
        r.handle_segment(t, seg(200, 60));
        r.handle_segment(t, seg(260, 60));
        r.handle_segment(t, seg(320, 60));
        assert_eq!(r.poll_ack(), None, "180 bytes: less than two full segments");
        r.handle_timeout(Time::from_millis(45));
        assert_eq!(r.poll_ack().map(|a| a.ack), Some(380));
    }
}
