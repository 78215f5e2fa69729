//! NewReno's window (RFC 5681; the recovery of RFC 6582 is the sender's).
//!
//! - Slow start below `ssthresh`: the window grows by the bytes acknowledged, at most 2·SMSS per
//!   ACK (RFC 3465's appropriate byte counting with L = 2, so that a delayed ACK covering two
//!   segments counts both and the window doubles per round trip, as Linux's does).
//! - Congestion avoidance: bytes acknowledged are counted, and each time they reach the window
//!   it grows by one SMSS (RFC 3465 §2.1): one SMSS per window of data, however small the
//!   segments.
//! - Loss found by duplicate ACKs: `ssthresh = max(FlightSize/2, 2·SMSS)`, the window drops to
//!   it. A timeout: the same `ssthresh`, and a loss window of one SMSS.
//! - Windows grow only while the sender is window-limited.
//!
//! [`RenoWindow`] is this arithmetic alone; CUBIC, Vegas and YeAH use it for their slow start
//! and Reno-like phases.

use acp_core::Time;

use super::{AckEvent, RenoBased};

/// Reno's slow start and congestion avoidance over a byte window.
#[derive(Debug, Clone)]
pub struct RenoWindow {
    /// The congestion window (bytes).
    pub cwnd: u64,
    /// The slow-start threshold (bytes).
    pub ssthresh: u64,
    smss: u64,
    /// Bytes acknowledged in congestion avoidance since the window last grew.
    bytes_acked: u64,
}

impl RenoWindow {
    /// A window of `initial` bytes for segments of `smss`, no threshold yet.
    pub fn new(smss: u64, initial: u64) -> Self {
        RenoWindow {
            cwnd: initial,
            ssthresh: u64::MAX,
            smss,
            bytes_acked: 0,
        }
    }

    /// Whether the window is below the threshold.
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    /// Slow start: `acked` bytes (at most 2·SMSS) are added, up to the threshold.
    pub fn slow_start(&mut self, acked: u64) {
        self.cwnd = (self.cwnd + acked.min(2 * self.smss)).min(self.ssthresh.max(self.cwnd));
    }

    /// Congestion avoidance: one SMSS per window's worth of bytes acknowledged.
    pub fn avoid_congestion(&mut self, acked: u64) {
        self.grow_per(acked, self.cwnd);
    }

    /// Additive increase at another pace: one SMSS per `per` bytes acknowledged.
    pub fn grow_per(&mut self, acked: u64, per: u64) {
        self.bytes_acked += acked;
        if self.bytes_acked >= per {
            self.bytes_acked -= per;
            self.cwnd += self.smss;
        }
    }

    /// Slow start below the threshold, congestion avoidance above it.
    pub fn grow(&mut self, acked: u64) {
        if self.in_slow_start() {
            self.slow_start(acked);
        } else {
            self.avoid_congestion(acked);
        }
    }

    /// Loss found by duplicate ACKs: half the flight (at least 2·SMSS) becomes threshold and
    /// window.
    pub fn halve(&mut self, flight: u64) {
        self.ssthresh = (flight / 2).max(2 * self.smss);
        self.cwnd = self.ssthresh;
        self.bytes_acked = 0;
    }

    /// A timeout: the threshold as for [`halve`](Self::halve), the window one SMSS.
    pub fn collapse(&mut self, flight: u64) {
        self.halve(flight);
        self.cwnd = self.smss;
    }

    /// `slow start` or `congestion avoidance`.
    pub fn phase(&self) -> &'static str {
        if self.in_slow_start() {
            "slow start"
        } else {
            "congestion avoidance"
        }
    }
}

/// NewReno.
#[derive(Debug, Clone)]
pub struct NewReno {
    window: RenoWindow,
}

impl NewReno {
    /// A NewReno controller for segments of `smss` bytes, starting at `initial` bytes.
    pub fn new(smss: u64, initial: u64) -> Self {
        NewReno {
            window: RenoWindow::new(smss, initial),
        }
    }
}

impl RenoBased for NewReno {
    fn reno(&self) -> &RenoWindow {
        &self.window
    }

    fn reno_mut(&mut self) -> &mut RenoWindow {
        &mut self.window
    }

    fn acked(&mut self, _now: Time, ack: &AckEvent) {
        if !ack.in_recovery && ack.cwnd_limited {
            self.window.grow(ack.acked);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_counting_grows_one_smss_per_window() {
        let mut w = RenoWindow::new(1000, 10_000);
        w.ssthresh = 10_000;
        // 500-byte segments: twenty ACKs make one window's worth of bytes.
        for _ in 0..19 {
            w.grow(500);
        }
        assert_eq!(w.cwnd, 10_000);
        w.grow(500);
        assert_eq!(w.cwnd, 11_000);
    }

    #[test]
    fn slow_start_counts_at_most_two_segments_per_ack() {
        let mut w = RenoWindow::new(1000, 2000);
        w.grow(5000);
        assert_eq!(w.cwnd, 4000);
        w.ssthresh = 4500;
        w.grow(2000);
        assert_eq!(w.cwnd, 4500);
        w.halve(9000);
        assert_eq!((w.cwnd, w.ssthresh), (4500, 4500));
        w.collapse(1000);
        assert_eq!((w.cwnd, w.ssthresh), (1000, 2000));
    }
}
