//! The receiving half: reassembly, in-order delivery and ACKs.
//!
//! Bytes reach the application only in order: a segment beyond a hole is held until the hole is
//! filled, and then everything up to the next hole is delivered at once (head-of-line blocking).
//! The application reads at once, so the advertised window is the whole receive buffer; data held
//! beyond a hole is not subtracted (like Linux, the window's right edge never moves left).
//!
//! ACKs (RFC 5681 §4.2, RFC 1122): a duplicate segment, a segment beyond a hole and a segment
//! that fills (part of) a hole are acknowledged at once; otherwise, with delayed ACKs, an ACK
//! goes out once `every · SMSS` bytes are unacknowledged, when a segment carrying PSH and
//! shorter than SMSS arrives (Linux's rule: `tcp_measure_rcv_mss` marks the ACK pushed only for
//! a segment below its receive-MSS estimate, which SMSS stands for here; [`DelayedAck::push`]),
//! or when the delayed-ACK timer, started by the first
//! unacknowledged byte, expires. Linux's quick-ACK mode at the start of a
//! connection is not modelled.
//!
//! Every ACK carries SACK blocks (RFC 2018; Linux negotiates SACK by default; none if the
//! configuration turns SACK off) for the data held
//! beyond a hole, at most [`SACK_BLOCKS`]: first the range holding the latest out-of-order
//! segment, then those holding the ones before it, newest first (§4), then any other held
//! range, highest first.

use std::collections::{BTreeMap, VecDeque};

use acp_core::Time;

use super::gro::{self, AckWhen, Gro};
use super::{Ack, DelayedAck, Segment, TcpConfig, SACK_BLOCKS};

/// Out-of-order arrivals remembered to order the SACK blocks by recency.
const RECENT: usize = 16;

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
        match self.delayed_ack {
            Some(d) if !filled_hole => {
                self.unacked += delivered;
                let short = u64::from(seg.len) < self.smss;
                let threshold = if d.push && seg.push && short {
                    0
                } else {
                    u64::from(d.every) * self.smss
                };
                match gro::ack_when(self.gro, self.unacked, threshold) {
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
        let cfg = TcpConfig {
            smss: 100,
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

    #[test]
    fn acks_a_pushed_segment_at_once_unless_told_not_to() {
        let pushed = |seq, len| Segment {
            seq,
            len,
            push: true,
        };
        let mut r = Receiver::new(&TcpConfig::default());
        let t = Time::ZERO;
        r.handle_segment(t, seg(0, 536));
        assert_eq!(r.poll_ack(), None, "no PSH: delayed");
        r.handle_segment(t, pushed(536, 536));
        assert_eq!(r.poll_ack().map(|a| a.ack), Some(1072), "PSH: at once");
        r.handle_segment(t, pushed(1072, 536));
        assert_eq!(
            r.poll_ack().map(|a| a.ack),
            Some(1608),
            "one ACK per pushed segment"
        );
        let smss = TcpConfig::default().smss;
        r.handle_segment(t, pushed(1608, smss));
        assert_eq!(r.poll_ack(), None, "a full-size pushed segment: delayed");
        r.handle_segment(t, pushed(1608 + u64::from(smss), smss));
        assert!(r.poll_ack().is_some(), "the second full segment: at once");
        let ns3 = TcpConfig {
            delayed_ack: Some(DelayedAck {
                push: false,
                ..DelayedAck::default()
            }),
            ..TcpConfig::default()
        };
        let mut r = Receiver::new(&ns3);
        r.handle_segment(t, pushed(0, 536));
        assert_eq!(r.poll_ack(), None, "ns-3's receiver: delayed");
    }

    #[test]
    fn delays_acks_to_every_second_full_segment_or_the_timer() {
        let cfg = TcpConfig {
            smss: 100,
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
