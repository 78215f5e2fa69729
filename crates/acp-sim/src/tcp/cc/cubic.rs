//! CUBIC (RFC 9438).
//!
//! After a congestion event the window follows `W_cubic(t) = C·(t − K)³ + W_max`, in segments,
//! `t` the time since the congestion-avoidance epoch began, `K = ∛((W_max − cwnd_epoch)/C)`,
//! `C = 0.4`, and at each ACK the window moves towards `W_cubic(t + RTT)` (by
//! `(target − cwnd)/cwnd` segments per segment acknowledged, the target kept within
//! `[cwnd, 1.5·cwnd]`). Where Reno would do better (the Reno-friendly region) it follows Reno's
//! estimate `W_est`, which grows by `α = 3(1 − β)/(1 + β)` segments per window (1 once past
//! `W_max`). A congestion event multiplies the window by `β = 0.7`; with fast convergence
//! `W_max` is lowered to `cwnd·(1 + β)/2` when the window had not regained the previous
//! `W_max`. Slow start and the loss window after a timeout are Reno's. RTT here is the minimum
//! RTT seen, as in Linux.

use acp_core::Time;

use super::newreno::RenoWindow;
use super::{AckEvent, CongestionControl};

/// The cubic's scaling constant (segments / s³).
pub const C: f64 = 0.4;
/// The multiplicative decrease factor.
pub const BETA: f64 = 0.7;

/// CUBIC.
#[derive(Debug, Clone)]
pub struct Cubic {
    window: RenoWindow,
    smss: f64,
    /// `W_max` (segments).
    w_max: f64,
    /// When the current congestion-avoidance epoch began, its `K` (s) and its Reno estimate
    /// (segments).
    epoch: Option<Epoch>,
    /// Fractions of a byte of growth not yet added to the window.
    carry: f64,
}

#[derive(Debug, Clone, Copy)]
struct Epoch {
    start: Time,
    k: f64,
    w_est: f64,
}

impl Cubic {
    /// A CUBIC controller for segments of `smss` bytes, starting at `initial` bytes.
    pub fn new(smss: u64, initial: u64) -> Self {
        Cubic {
            window: RenoWindow::new(smss, initial),
            smss: smss as f64,
            w_max: 0.0,
            epoch: None,
            carry: 0.0,
        }
    }

    fn segments(&self) -> f64 {
        self.window.cwnd as f64 / self.smss
    }

    /// `W_cubic(t)` of the current epoch (segments), `t` in seconds since it began.
    pub fn w_cubic(&self, t: f64) -> Option<f64> {
        self.epoch.map(|e| C * (t - e.k).powi(3) + self.w_max)
    }

    /// `W_max` (segments).
    pub fn w_max(&self) -> f64 {
        self.w_max
    }

    fn reduce(&mut self) {
        let cwnd = self.segments();
        self.w_max = if cwnd < self.w_max {
            cwnd * (1.0 + BETA) / 2.0
        } else {
            cwnd
        };
        self.epoch = None;
        self.carry = 0.0;
        let ssthresh = ((cwnd * BETA * self.smss) as u64).max(2 * self.smss as u64);
        self.window.ssthresh = ssthresh;
        self.window.cwnd = ssthresh;
    }
}

impl CongestionControl for Cubic {
    fn on_ack(&mut self, now: Time, ack: &AckEvent) {
        if ack.in_recovery || !ack.cwnd_limited {
            return;
        }
        if self.window.in_slow_start() {
            self.window.slow_start(ack.acked);
            return;
        }
        let cwnd = self.segments();
        let w_max = self.w_max;
        let epoch = *self.epoch.get_or_insert_with(|| Epoch {
            start: now,
            k: ((w_max - cwnd).max(0.0) / C).cbrt(),
            w_est: cwnd,
        });
        if self.w_max < cwnd && epoch.k == 0.0 {
            self.w_max = cwnd;
        }
        let rtt = ack.min_rtt.map_or(0.0, |d| d.as_secs_f64());
        let t = now.saturating_since(epoch.start).as_secs_f64() + rtt;
        let target = (C * (t - epoch.k).powi(3) + self.w_max).clamp(cwnd, 1.5 * cwnd);
        let acked = ack.acked as f64 / self.smss;
        let alpha = if epoch.w_est >= self.w_max {
            1.0
        } else {
            3.0 * (1.0 - BETA) / (1.0 + BETA)
        };
        let w_est = epoch.w_est + alpha * acked / cwnd;
        self.epoch = Some(Epoch { w_est, ..epoch });
        let grow = if w_est > target {
            w_est - cwnd
        } else {
            (target - cwnd) / cwnd * acked
        };
        self.carry += grow.max(0.0) * self.smss;
        let whole = self.carry.floor();
        self.carry -= whole;
        self.window.cwnd += whole as u64;
    }

    fn on_loss(&mut self, _now: Time, _flight: u64) {
        self.reduce();
    }

    fn on_recovery_end(&mut self, _now: Time) {}

    fn on_timeout(&mut self, _now: Time, _flight: u64) {
        self.reduce();
        self.window.cwnd = self.smss as u64;
    }

    fn window(&self) -> u64 {
        self.window.cwnd
    }

    fn ssthresh(&self) -> u64 {
        self.window.ssthresh
    }

    fn phase(&self) -> &'static str {
        self.window.phase()
    }
}
