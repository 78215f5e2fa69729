//! YeAH (Baiocchi, Castellani and Vacirca, "YeAH-TCP: Yet Another Highspeed TCP", PFLDnet
//! 2007), with the parameter values of its Linux implementation.
//!
//! Once per round trip YeAH estimates its queue at the bottleneck, `Q = cwnd·(RTT −
//! BaseRTT)/RTT` segments (RTT the smallest of the round, BaseRTT the smallest ever), and picks
//! a mode:
//! - **fast** while `Q < Q_max` (80) and the queueing delay `RTT − BaseRTT` stays below
//!   BaseRTT/φ (φ = 8): the window grows as Scalable TCP's, one segment per `min(cwnd, 100)`
//!   segments acknowledged (about 1 % per round trip);
//! - **slow** otherwise: Reno's growth, and when `Q > Q_max` a precautionary decongestion
//!   removes `min(Q/γ, cwnd/2^ε)` segments (γ = 1, ε = 1), not going below the Reno-competition
//!   floor `reno_count`.
//!
//! On a loss, unless the flow has been in slow mode for ρ = 16 round trips in a row (a sign that
//! Reno flows compete, when it halves like Reno), the window drops by the last queue estimate,
//! at least cwnd/2^δ (δ = 3) and at most half. `reno_count` starts at 2, is set to half the
//! window on a first slow-mode round, counts slow rounds up, halves on losses and resets after
//! ζ = 50 fast rounds. Slow start and timeouts are Reno's.

use std::time::Duration;

use acp_core::Time;

use super::newreno::RenoWindow;
use super::{AckEvent, RenoBased};

/// Most segments queued before YeAH leaves fast mode (`Q_max`).
pub const Q_MAX: f64 = 80.0;
/// Queueing delay, as a fraction 1/φ of the base RTT, that ends fast mode.
pub const PHI: f64 = 8.0;
const GAMMA: f64 = 1.0;
const EPSILON: u32 = 1;
const DELTA: u32 = 3;
const RHO: u32 = 16;
const ZETA: u32 = 50;
/// Segments acknowledged per segment of growth in fast mode, at most (Scalable TCP's 1 %).
const SCALABLE_PER: u64 = 100;

/// YeAH.
#[derive(Debug, Clone)]
pub struct Yeah {
    window: RenoWindow,
    smss: u64,
    base_rtt: Option<Duration>,
    round_rtt: Option<Duration>,
    /// Consecutive slow-mode rounds (0: fast mode).
    slow_rounds: u32,
    fast_rounds: u32,
    /// Segments: the window decongestion does not go below.
    reno_count: u64,
    /// The last queue estimate (segments).
    last_queue: f64,
}

impl Yeah {
    /// A YeAH controller for segments of `smss` bytes, starting at `initial` bytes.
    pub fn new(smss: u64, initial: u64) -> Self {
        Yeah {
            window: RenoWindow::new(smss, initial),
            smss,
            base_rtt: None,
            round_rtt: None,
            slow_rounds: 0,
            fast_rounds: 0,
            reno_count: 2,
            last_queue: 0.0,
        }
    }

    /// Whether it is in fast (Scalable) mode.
    pub fn fast_mode(&self) -> bool {
        self.slow_rounds == 0
    }

    fn segments(&self) -> u64 {
        self.window.cwnd / self.smss
    }

    /// Once per round trip: the queue estimate and the mode.
    fn end_round(&mut self, base: Duration, rtt: Duration) {
        let (base_s, rtt_s) = (base.as_secs_f64(), rtt.as_secs_f64());
        let cwnd = self.segments();
        let queue = cwnd as f64 * (rtt_s - base_s) / rtt_s;
        if queue > Q_MAX || rtt_s - base_s > base_s / PHI {
            if queue > Q_MAX && cwnd > self.reno_count {
                let reduction = (queue / GAMMA).min((cwnd >> EPSILON) as f64) as u64;
                let reduced = cwnd.saturating_sub(reduction).max(self.reno_count);
                self.window.cwnd = reduced * self.smss;
                self.window.ssthresh = self.window.cwnd;
            }
            self.reno_count = if self.reno_count <= 2 {
                (cwnd >> 1).max(2)
            } else {
                self.reno_count + 1
            };
            self.slow_rounds += 1;
        } else {
            self.fast_rounds += 1;
            if self.fast_rounds > ZETA {
                self.reno_count = 2;
                self.fast_rounds = 0;
            }
            self.slow_rounds = 0;
        }
        self.last_queue = queue;
    }
}

impl RenoBased for Yeah {
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
        if self.window.in_slow_start() {
            self.window.slow_start(ack.acked);
        } else if self.fast_mode() {
            let per = self.segments().min(SCALABLE_PER) * self.smss;
            self.window.grow_per(ack.acked, per);
        } else {
            self.window.avoid_congestion(ack.acked);
        }
        if ack.round_start {
            if let (Some(base), Some(rtt)) = (self.base_rtt, self.round_rtt.take()) {
                self.end_round(base, rtt);
            }
        }
    }

    fn lost(&mut self, _now: Time, _flight: u64) {
        let cwnd = self.segments();
        let half = (cwnd >> 1).max(2);
        let reduction = if self.slow_rounds < RHO {
            (self.last_queue as u64).min(half).max(cwnd >> DELTA)
        } else {
            half
        };
        self.fast_rounds = 0;
        self.reno_count = (self.reno_count >> 1).max(2);
        let ssthresh = cwnd.saturating_sub(reduction).max(2) * self.smss;
        self.window.ssthresh = ssthresh;
        self.window.cwnd = ssthresh;
    }

    fn reno_phase(&self) -> &'static str {
        match (self.window.in_slow_start(), self.fast_mode()) {
            (true, _) => "slow start",
            (false, true) => "fast",
            (false, false) => "slow",
        }
    }
}
