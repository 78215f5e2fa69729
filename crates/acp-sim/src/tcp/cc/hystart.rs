//! HyStart, the slow-start exit of Linux's CUBIC (`net/ipv4/tcp_cubic.c`, on by default:
//! `hystart = 1`, `hystart_detect = 3`), after Ha and Rhee, "Taming the elephants: new TCP slow
//! start" (2011).
//!
//! Slow start doubles the window each round trip until a loss; on a path whose queue holds more
//! than a BDP, the last doubling overflows it by up to a window's worth of segments. HyStart
//! ends slow start (sets ssthresh to the window) before that, on either of two signs that the
//! pipe is full, watched once the window is at least `hystart_low_window` = 16 segments:
//! - **delay increase**: the least RTT sample among the first eight ACKs of a round trip exceeds
//!   the connection's least RTT by more than `clamp(min_rtt / 8, 4 ms, 16 ms)` (a queue is
//!   building);
//! - **ACK train**: the ACKs of a round trip, each within `hystart_ack_delta_us` = 2 ms of the
//!   one before, have been arriving for longer than half the least RTT plus the ACK delay
//!   Linux allows for (the train as long as the pipe). Linux estimates that delay as
//!   `min(1 ms, 4 · gso_max_size / pacing_rate)`; its slow-start pacing rate (twice the window
//!   per smoothed RTT) stays below the ~2 Gbit/s at which that falls under 1 ms, so it is 1 ms
//!   here.
//!
//! A round trip starts when an ACK acknowledges data sent after the previous round began
//! (Linux: `snd_una` passes the `snd_nxt` recorded at the round's start). Once HyStart has
//! fired it stays off until a retransmission timeout resets it (Linux resets it on entering
//! the Loss state); fast recovery leaves it as it is. Not modelled: Linux's discarding of delay
//! samples in the first second after a congestion-avoidance epoch starts (it only matters for
//! slow start after a timeout with a stale epoch, which the controller here never keeps).

use std::time::Duration;

use acp_core::Time;

/// The window (segments) below which HyStart does not look (`hystart_low_window`).
pub const LOW_WINDOW: u64 = 16;
/// ACKs closer than this belong to one train (`hystart_ack_delta_us`).
pub const ACK_DELTA: Duration = Duration::from_millis(2);
/// RTT samples per round trip the delay test takes the least of (`HYSTART_MIN_SAMPLES`).
pub const MIN_SAMPLES: u32 = 8;
/// Bounds of the delay-increase threshold (`HYSTART_DELAY_MIN`, `HYSTART_DELAY_MAX`).
pub const DELAY_MIN: Duration = Duration::from_millis(4);
pub const DELAY_MAX: Duration = Duration::from_millis(16);
/// The ACK delay the train test allows for (see the module documentation).
pub const ACK_DELAY: Duration = Duration::from_millis(1);

/// Why HyStart ended slow start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// The ACK train was as long as the pipe.
    AckTrain,
    /// The round's RTT rose above the least RTT by the threshold.
    DelayIncrease,
}

/// HyStart's state over a connection.
#[derive(Debug, Clone, Default)]
pub struct HyStart {
    /// Set once it has ended slow start.
    found: Option<Exit>,
    /// When the current round trip started and when its latest train ACK arrived.
    round_start: Option<Time>,
    last_ack: Option<Time>,
    /// Least RTT sample of the round so far and how many samples it has taken.
    curr_rtt: Option<Duration>,
    samples: u32,
}

impl HyStart {
    /// Why it ended slow start, if it has.
    pub fn found(&self) -> Option<Exit> {
        self.found
    }

    /// Starts over (after a retransmission timeout).
    pub fn reset(&mut self) {
        *self = HyStart::default();
    }

    fn start_round(&mut self, now: Time) {
        self.round_start = Some(now);
        self.last_ack = Some(now);
        self.curr_rtt = None;
        self.samples = 0;
    }

    /// An ACK in slow start with the window at `cwnd_segments`; `round_start` if it starts a new
    /// round trip, `rtt` its RTT sample, `min_rtt` the least so far. Returns the exit when this
    /// ACK shows the pipe full (the caller then sets ssthresh to the window).
    pub fn on_ack(
        &mut self,
        now: Time,
        cwnd_segments: u64,
        round_start: bool,
        rtt: Option<Duration>,
        min_rtt: Option<Duration>,
    ) -> Option<Exit> {
        if self.found.is_some() || cwnd_segments < LOW_WINDOW {
            return None;
        }
        let min_rtt = min_rtt?;
        if round_start || self.round_start.is_none() {
            self.start_round(now);
        }
        if let (Some(start), Some(last)) = (self.round_start, self.last_ack) {
            if now.saturating_since(last) <= ACK_DELTA {
                self.last_ack = Some(now);
                if now.saturating_since(start) > (min_rtt + ACK_DELAY) / 2 {
                    self.found = Some(Exit::AckTrain);
                    return self.found;
                }
            }
        }
        if let Some(rtt) = rtt {
            self.curr_rtt = Some(self.curr_rtt.map_or(rtt, |c| c.min(rtt)));
            if self.samples < MIN_SAMPLES {
                self.samples += 1;
            } else if self
                .curr_rtt
                .is_some_and(|c| c > min_rtt + (min_rtt / 8).clamp(DELAY_MIN, DELAY_MAX))
            {
                self.found = Some(Exit::DelayIncrease);
            }
        }
        self.found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIN: Duration = Duration::from_millis(40);

    fn at(ms: u64) -> Time {
        Time::ZERO + Duration::from_millis(ms)
    }

    #[test]
    fn a_rising_rtt_ends_slow_start_after_eight_samples() {
        let mut h = HyStart::default();
        // 46 ms > 40 ms + clamp(5 ms, 4, 16): a queue of 6 ms; ACKs 3 ms apart (no train).
        let rtt = Some(Duration::from_millis(46));
        for i in 0..MIN_SAMPLES as u64 {
            assert_eq!(h.on_ack(at(3 * i), 20, i == 0, rtt, Some(MIN)), None);
        }
        assert_eq!(
            h.on_ack(at(30), 20, false, rtt, Some(MIN)),
            Some(Exit::DelayIncrease)
        );
        // It stays found.
        assert_eq!(h.found(), Some(Exit::DelayIncrease));
    }

    #[test]
    fn a_small_rise_and_a_small_window_do_not() {
        let mut h = HyStart::default();
        let rtt = Some(Duration::from_millis(44)); // 4 ms < the 5 ms threshold
        for i in 0..40 {
            assert_eq!(h.on_ack(at(3 * i), 20, i % 10 == 0, rtt, Some(MIN)), None);
        }
        let mut small = HyStart::default();
        let high = Some(Duration::from_millis(80));
        for i in 0..40 {
            assert_eq!(small.on_ack(at(3 * i), 15, false, high, Some(MIN)), None);
        }
    }

    #[test]
    fn an_ack_train_longer_than_half_the_rtt_ends_slow_start() {
        let mut h = HyStart::default();
        let rtt = Some(MIN);
        // ACKs 1 ms apart from the round's start: the train passes (40 + 1)/2 ms at 21 ms.
        for i in 0..=20 {
            assert_eq!(h.on_ack(at(i), 32, i == 0, rtt, Some(MIN)), None, "{i}");
        }
        assert_eq!(
            h.on_ack(at(21), 32, false, rtt, Some(MIN)),
            Some(Exit::AckTrain)
        );
    }

    #[test]
    fn a_gap_breaks_the_train_and_a_timeout_resets() {
        let mut h = HyStart::default();
        for i in 0..=10 {
            h.on_ack(at(i), 32, i == 0, Some(MIN), Some(MIN));
        }
        // A 3 ms gap: this and later ACKs no longer extend the train.
        for i in 0..20 {
            assert_eq!(
                h.on_ack(at(13 + 3 * i), 32, false, Some(MIN), Some(MIN)),
                None
            );
        }
        h.found = Some(Exit::AckTrain);
        h.reset();
        assert_eq!(h.found(), None);
    }
}
