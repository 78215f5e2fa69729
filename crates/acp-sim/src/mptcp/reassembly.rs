//! The connection-level receive buffer of a multipath connection: segments from all subflows
//! are placed by their data sequence number (DSN); bytes reach the application only in DSN
//! order. A segment lost or late on one subflow holds back everything after it that other
//! subflows delivered (head-of-line blocking), and those bytes occupy the buffer, shrinking the
//! window the receiver advertises until the hole fills: with a small buffer the fast subflow
//! stalls behind the slow one.
//!
//! Contract: bytes beyond the advertised window are refused (returned as not accepted), never
//! stored, so the buffer is bounded by its capacity; duplicate bytes are ignored.

use std::collections::BTreeMap;

/// Reorders DSN ranges and delivers them in order.
#[derive(Debug, Clone)]
pub struct ReceiveBuffer {
    capacity: u64,
    next: u64,
    held: BTreeMap<u64, u64>,
    held_bytes: u64,
    delivered: u64,
}

/// What one arriving segment did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arrival {
    /// Whether the segment lay inside the window (refused segments are dropped whole).
    pub accepted: bool,
    /// Bytes this arrival released to the application, in order.
    pub delivered: u64,
}

impl ReceiveBuffer {
    /// An empty buffer of `capacity` bytes expecting DSN 0.
    pub fn new(capacity: u64) -> Self {
        ReceiveBuffer {
            capacity,
            next: 0,
            held: BTreeMap::new(),
            held_bytes: 0,
            delivered: 0,
        }
    }

    /// The next DSN the application is waiting for (the connection-level cumulative ACK).
    pub fn next_expected(&self) -> u64 {
        self.next
    }

    /// Free space advertised to the sender: capacity minus bytes held behind a hole (in-order
    /// bytes go straight to the application).
    pub fn window(&self) -> u64 {
        self.capacity - self.held_bytes
    }

    /// Bytes held out of order, waiting for a hole to fill.
    pub fn held_bytes(&self) -> u64 {
        self.held_bytes
    }

    /// Bytes delivered to the application so far.
    pub fn delivered(&self) -> u64 {
        self.delivered
    }

    /// A segment covering DSNs `[dsn, dsn + len)` arrived on some subflow.
    pub fn receive(&mut self, dsn: u64, len: u64) -> Arrival {
        let end = dsn.saturating_add(len);
        if end > self.next.saturating_add(self.capacity) {
            return Arrival {
                accepted: false,
                delivered: 0,
            };
        }
        let start = dsn.max(self.next);
        if start < end {
            self.hold(start, end);
        }
        let before = self.delivered;
        while let Some((&s, &e)) = self.held.first_key_value() {
            if s > self.next {
                break;
            }
            self.held.remove(&s);
            self.held_bytes -= e - s;
            if e > self.next {
                self.delivered += e - self.next;
                self.next = e;
            }
        }
        Arrival {
            accepted: true,
            delivered: self.delivered - before,
        }
    }

    /// Adds `[start, end)` minus what is already held (ranges kept disjoint).
    fn hold(&mut self, start: u64, end: u64) {
        let mut s = start;
        let mut e = end;
        let overlapping: Vec<(u64, u64)> = self
            .held
            .range(..=end)
            .filter(|&(&hs, &he)| he >= s && hs <= e)
            .map(|(&hs, &he)| (hs, he))
            .collect();
        for (hs, he) in overlapping {
            self.held.remove(&hs);
            self.held_bytes -= he - hs;
            s = s.min(hs);
            e = e.max(he);
        }
        self.held.insert(s, e);
        self.held_bytes += e - s;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_order_bytes_pass_straight_through() {
        let mut rb = ReceiveBuffer::new(10_000);
        assert_eq!(
            rb.receive(0, 1_000),
            Arrival {
                accepted: true,
                delivered: 1_000
            }
        );
        assert_eq!(rb.receive(1_000, 1_000).delivered, 1_000);
        assert_eq!(rb.window(), 10_000);
    }

    /// Head-of-line blocking: the slow subflow's segment 0 is late; the fast subflow's segments
    /// fill the small buffer, the window closes (a stall: the sender may send nothing more),
    /// and only the late segment releases everything at once.
    #[test]
    fn a_hole_fills_a_small_buffer_and_stalls_the_window() {
        let mss = 1_000;
        let mut rb = ReceiveBuffer::new(4 * mss);
        for k in 1..4 {
            let a = rb.receive(k * mss, mss);
            assert!(a.accepted);
            assert_eq!(a.delivered, 0);
        }
        assert_eq!(rb.window(), mss, "three segments held behind the hole");
        assert!(!rb.receive(4 * mss, mss).accepted, "beyond the window");
        assert_eq!(rb.receive(0, mss).delivered, 4 * mss);
        assert_eq!(rb.window(), 4 * mss);
        assert_eq!(rb.next_expected(), 4 * mss);
    }

    #[test]
    fn duplicates_and_overlaps_count_once() {
        let mut rb = ReceiveBuffer::new(10_000);
        rb.receive(2_000, 1_000);
        rb.receive(2_500, 1_000);
        rb.receive(2_000, 1_000);
        assert_eq!(rb.held_bytes(), 1_500);
        assert_eq!(rb.receive(0, 2_000).delivered, 3_500);
        assert_eq!(rb.receive(0, 500).delivered, 0);
        assert_eq!(rb.delivered(), 3_500);
    }
}
