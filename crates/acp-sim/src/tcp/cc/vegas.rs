//! Vegas (Brakmo and Peterson 1995, as Linux's `tcp_vegas` runs it).
//!
//! Once per round trip Vegas compares the window with what the path holds without a queue:
//! `diff = cwnd · (RTT − BaseRTT) / RTT` is the number of its segments queued, with BaseRTT the
//! smallest RTT ever seen and RTT the smallest of the last round trip. In congestion avoidance
//! the window grows by one segment if `diff < α` (2), shrinks by one if `diff > β` (4) and stays
//! otherwise, so between α and β segments wait in the bottleneck queue. In slow start, Vegas
//! leaves it as soon as `diff > γ` (1), setting the window to what the path holds plus one
//! segment. Without an RTT sample in the round it behaves as Reno; losses are handled as Reno.

use std::time::Duration;

use acp_core::Time;

use super::newreno::RenoWindow;
use super::{AckEvent, RenoBased};

/// Fewest queued segments before Vegas grows.
pub const ALPHA: f64 = 2.0;
/// Most queued segments before Vegas shrinks.
pub const BETA: f64 = 4.0;
/// Queued segments that end slow start.
pub const GAMMA: f64 = 1.0;

/// Vegas.
#[derive(Debug, Clone)]
pub struct Vegas {
    window: RenoWindow,
    smss: u64,
    base_rtt: Option<Duration>,
    /// Smallest RTT sample of the current round trip.
    round_rtt: Option<Duration>,
}

impl Vegas {
    /// A Vegas controller for segments of `smss` bytes, starting at `initial` bytes.
    pub fn new(smss: u64, initial: u64) -> Self {
        Vegas {
            window: RenoWindow::new(smss, initial),
            smss,
            base_rtt: None,
            round_rtt: None,
        }
    }

    /// Once per round trip: the window from the queue the last round trip saw.
    fn adjust(&mut self, base: Duration, rtt: Duration) {
        let cwnd = self.window.cwnd as f64 / self.smss as f64;
        let rtt_s = rtt.as_secs_f64();
        let diff = cwnd * (rtt_s - base.as_secs_f64()) / rtt_s;
        if self.window.in_slow_start() {
            if diff > GAMMA {
                let fits = (cwnd * base.as_secs_f64() / rtt_s).floor() as u64 + 1;
                self.window.cwnd = self.window.cwnd.min(fits * self.smss);
                self.window.ssthresh = self.window.cwnd.saturating_sub(self.smss);
            }
        } else if diff > BETA {
            self.window.cwnd -= self.smss;
            self.window.ssthresh = self.window.ssthresh.min(self.window.cwnd);
        } else if diff < ALPHA {
            self.window.cwnd += self.smss;
        }
        self.window.cwnd = self.window.cwnd.max(2 * self.smss);
    }
}

impl RenoBased for Vegas {
    fn reno(&self) -> &RenoWindow {
        &self.window
    }

    fn reno_mut(&mut self) -> &mut RenoWindow {
        &mut self.window
    }

    fn acked(&mut self, _now: Time, ack: &AckEvent) {
        if let Some(rtt) = ack.rtt {
            self.base_rtt = Some(self.base_rtt.map_or(rtt, |b| b.min(rtt)));
            self.round_rtt = Some(self.round_rtt.map_or(rtt, |r| r.min(rtt)));
        }
        if ack.in_recovery || !ack.cwnd_limited {
            return;
        }
        if ack.round_start {
            match (self.base_rtt, self.round_rtt.take()) {
                (Some(base), Some(rtt)) => self.adjust(base, rtt),
                _ => self.window.grow(ack.acked),
            }
        } else if self.window.in_slow_start() {
            self.window.slow_start(ack.acked);
        }
    }
}
