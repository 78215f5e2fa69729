//! CUBIC (RFC 9438).
//!
//! After a congestion event the window follows `W_cubic(t) = C·(t − K)³ + W_max`, in segments,
//! `t` the time since the congestion-avoidance epoch began, `K = ∛((W_max − cwnd_epoch)/C)`,
//! `C = 0.4`, and at each ACK the window moves towards `W_cubic(t + RTT)` (by
//! `(target − cwnd)/cwnd` segments per segment acknowledged, the target kept within
//! `[cwnd, 1.5·cwnd]`). Where Reno would do better (the Reno-friendly region) it follows Reno's
//! estimate `W_est`, which grows by `α = 3(1 − β)/(1 + β)` segments per window — always, as
//! in Linux's `tcp_cubic.c` (its `beta_scale`), not RFC 9438 §4.3's α = 1 once `W_est` passes
//! `W_max`: with 1 % random loss on a 10 Mbit/s, 40 ms path that switch gave 3.3–3.9 Mbit/s
//! where the kernel gave 2.8 (`docs/MULTIPATH.md`, "Against the kernel"). A congestion event multiplies the window by `β = 0.7`; with fast convergence
//! `W_max` is lowered to `cwnd·(1 + β)/2` when the window had not regained the previous
//! `W_max`. Slow start is Reno's, ended early by Linux's HyStart ([`super::hystart`]: RFC 9438
//! §4.10 leaves the slow-start exit open and Linux's CUBIC runs HyStart by default); the loss
//! window after a timeout is Reno's, and a timeout re-arms HyStart. RTT here is the minimum RTT
//! seen, as in Linux.

use acp_core::Time;

use super::hystart::HyStart;
use super::newreno::RenoWindow;
use super::{AckEvent, RenoBased};

/// The cubic's scaling constant (segments / s³).
pub const C: f64 = 0.4;
/// The multiplicative decrease factor.
pub const BETA: f64 = 0.7;
/// The Reno-friendly estimate's growth (segments per window): `3(1 − β)/(1 + β)`, as Linux's
/// `tcp_cubic.c` keeps it (`beta_scale`) however far the estimate has grown.
const ALPHA: f64 = 3.0 * (1.0 - BETA) / (1.0 + BETA);

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
    hystart: HyStart,
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
            hystart: HyStart::default(),
        }
    }

    /// The slow-start exit's state.
    pub fn hystart(&self) -> &HyStart {
        &self.hystart
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

impl RenoBased for Cubic {
    fn reno(&self) -> &RenoWindow {
        &self.window
    }

    fn reno_mut(&mut self) -> &mut RenoWindow {
        &mut self.window
    }

    fn acked(&mut self, now: Time, ack: &AckEvent) {
        if ack.in_recovery {
            return;
        }
        // As Linux, HyStart sees every ACK in slow start (before the window grows on it).
        if self.window.in_slow_start() {
            let cwnd = self.window.cwnd / self.smss as u64;
            let exit = self
                .hystart
                .on_ack(now, cwnd, ack.round_start, ack.rtt, ack.min_rtt);
            if exit.is_some() {
                self.window.ssthresh = self.window.cwnd;
            }
        }
        if !ack.cwnd_limited {
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
        let w_est = epoch.w_est + ALPHA * acked / cwnd;
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

    fn lost(&mut self, _now: Time, _flight: u64) {
        self.reduce();
    }

    fn timed_out(&mut self, _now: Time, _flight: u64) {
        self.reduce();
        self.window.cwnd = self.smss as u64;
        self.hystart.reset();
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::tcp::cc::hystart::Exit;
    use crate::tcp::cc::CongestionControl;

    #[test]
    fn hystart_ends_slow_start_at_the_window_a_rising_rtt_finds() {
        let smss = 1448;
        let mut c = Cubic::new(smss, 10 * smss);
        let min = Duration::from_millis(40);
        let mut now = Time::ZERO;
        let ack = |c: &mut Cubic, rtt: u64, round_start: bool, now: Time| {
            let mut e = AckEvent::new(smss);
            e.rtt = Some(Duration::from_millis(rtt));
            e.min_rtt = Some(min);
            e.round_start = round_start;
            c.on_ack(now, &e);
        };
        // Slow start at the base RTT up to 20 segments, ACKs 3 ms apart.
        while c.window() < 20 * smss {
            now += Duration::from_millis(3);
            ack(&mut c, 40, false, now);
        }
        assert_eq!(c.ssthresh(), u64::MAX);
        // A round trip whose RTT samples show a 10 ms queue.
        for i in 0..MIN_SAMPLES_PLUS_ONE {
            now += Duration::from_millis(3);
            ack(&mut c, 50, i == 0, now);
        }
        assert_eq!(c.hystart().found(), Some(Exit::DelayIncrease));
        assert_eq!(c.phase(), "congestion avoidance");
        assert!(c.ssthresh() >= 20 * smss && c.ssthresh() < 40 * smss);
        // A timeout re-arms it.
        c.on_timeout(now, 0);
        assert_eq!(c.hystart().found(), None);
    }

    const MIN_SAMPLES_PLUS_ONE: u32 = crate::tcp::cc::hystart::MIN_SAMPLES + 1;
}
