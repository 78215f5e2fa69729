//! The retransmission timeout as Linux computes it (`tcp_rtt_estimator`, `tcp_set_rto` in
//! `net/ipv4/tcp_input.c`), RFC 6298's estimator with Linux's changes:
//! - SRTT takes 1/8 of each sample's error; the mean deviation (`mdev`, kept at four times
//!   RFC 6298's RTTVAR) takes 1/4 of `|error| − mdev/4`, but only 1/32 of it when the sample
//!   is below SRTT and its error exceeds mdev/4 (a falling RTT barely widens the timeout);
//! - the variance term the RTO adds (`rttvar_us`) is the largest `mdev` of the round trip
//!   (`mdev_max_us`, which starts each round trip at the minimum RTO), raised at once when
//!   `mdev` exceeds it and lowered only when a round trip ends — a sample that acknowledges
//!   beyond what was sent when the round began (`rtt_seq`) — by a quarter of its excess over
//!   that round's largest `mdev`;
//! - `RTO = SRTT + rttvar`, at most `max_rto`: the variance term never falls below the minimum
//!   RTO, so a path whose RTT is steady and long (a full queue) keeps `min_rto` of slack above
//!   SRTT (RFC 6298 bounds the RTO itself below instead).
//!
//! Before the first sample the RTO is 1 s (or the configured initial value); the first sample
//! sets SRTT to it, `mdev` to twice it and the variance term to the larger of that and the
//! minimum RTO. Each expiry doubles the RTO (backoff) until the next sample. Samples follow
//! Karn's rule, which is the sender's business: it never passes the RTT of a retransmitted
//! segment.

use std::time::Duration;

/// Clock granularity G of RFC 6298: the simulator's clock is exact, Linux's is 1 ms.
const GRANULARITY: Duration = Duration::from_millis(1);

/// SRTT, the deviations, the minimum RTT seen and the current RTO with its backoff.
#[derive(Debug, Clone)]
pub struct RtoEstimator {
    srtt: Option<Duration>,
    /// Smoothed mean deviation, four times RFC 6298's RTTVAR (Linux's `mdev_us`).
    mdev: Duration,
    /// The largest `mdev` of the current round trip, at least `min_rto` (`mdev_max_us`).
    mdev_max: Duration,
    /// The variance term of the RTO (`rttvar_us`).
    variance: Duration,
    /// The sequence number whose acknowledgement ends the round trip (`rtt_seq`).
    round_end: u64,
    min_rtt: Option<Duration>,
    rto: Duration,
    min_rto: Duration,
    max_rto: Duration,
    /// Expiries since the last sample.
    backoffs: u32,
}

impl RtoEstimator {
    /// An estimator with no sample yet (RTO = `initial`).
    pub fn new(initial: Duration, min_rto: Duration, max_rto: Duration) -> Self {
        RtoEstimator {
            srtt: None,
            mdev: Duration::ZERO,
            mdev_max: min_rto,
            variance: Duration::ZERO,
            round_end: 0,
            min_rtt: None,
            rto: initial,
            min_rto,
            max_rto,
            backoffs: 0,
        }
    }

    /// Takes one RTT measurement on an ACK that leaves `una` the first unacknowledged byte,
    /// with `nxt` the next byte to send, and recomputes the RTO (clearing any backoff).
    pub fn sample(&mut self, rtt: Duration, una: u64, nxt: u64) {
        match self.srtt {
            None => {
                self.srtt = Some(rtt);
                self.mdev = rtt * 2;
                self.variance = self.mdev.max(self.min_rto);
                self.mdev_max = self.variance;
                self.round_end = nxt;
            }
            Some(srtt) => {
                self.srtt = Some((srtt * 7 + rtt) / 8);
                let quarter = self.mdev / 4;
                if rtt < srtt && srtt - rtt > quarter {
                    self.mdev += (srtt - rtt - quarter) / 8;
                } else {
                    self.mdev = self.mdev - quarter + srtt.abs_diff(rtt);
                }
                if self.mdev > self.mdev_max {
                    self.mdev_max = self.mdev;
                    self.variance = self.variance.max(self.mdev_max);
                }
                if una > self.round_end {
                    if self.mdev_max < self.variance {
                        self.variance -= (self.variance - self.mdev_max) / 4;
                    }
                    self.round_end = nxt;
                    self.mdev_max = self.min_rto;
                }
            }
        }
        self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
        let srtt = self.srtt.unwrap_or(rtt);
        self.rto = (srtt + self.variance.max(GRANULARITY)).min(self.max_rto);
        self.backoffs = 0;
    }

    /// The timer expired: the RTO doubles (up to `max_rto`).
    pub fn back_off(&mut self) {
        self.rto = (self.rto * 2).min(self.max_rto);
        self.backoffs += 1;
    }

    /// The current RTO.
    pub fn rto(&self) -> Duration {
        self.rto
    }

    /// Smoothed RTT, once there is a sample.
    pub fn srtt(&self) -> Option<Duration> {
        self.srtt
    }

    /// RTT variation on RFC 6298's scale, a quarter of the mean deviation (what Linux reports
    /// as `tcpi_rttvar`; zero before the first sample).
    pub fn rttvar(&self) -> Duration {
        self.mdev / 4
    }

    /// Smallest RTT sample so far.
    pub fn min_rtt(&self) -> Option<Duration> {
        self.min_rtt
    }

    /// Expiries since the last sample.
    pub fn backoffs(&self) -> u32 {
        self.backoffs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    fn us(v: u64) -> Duration {
        Duration::from_micros(v)
    }

    fn estimator() -> RtoEstimator {
        RtoEstimator::new(ms(1000), ms(200), ms(60_000))
    }

    #[test]
    fn starts_at_three_rtts_or_srtt_plus_the_minimum_and_backs_off() {
        let mut r = estimator();
        assert_eq!(r.rto(), ms(1000));
        r.sample(ms(100), 0, 10);
        // SRTT 100, mdev 200 (RTTVAR 50): 100 + max(200, 200) = 300 ms.
        assert_eq!(
            (r.srtt(), r.rto(), r.rttvar()),
            (Some(ms(100)), ms(300), ms(50))
        );
        r.sample(ms(180), 1, 10);
        // mdev = 3/4·200 + 80 = 230 (RTTVAR 57.5); SRTT = 7/8·100 + 1/8·180 = 110.
        assert_eq!((r.srtt(), r.rto()), (Some(ms(110)), ms(340)));
        for _ in 0..3 {
            r.back_off();
        }
        assert_eq!((r.rto(), r.backoffs()), (ms(2720), 3));
        for _ in 0..10 {
            r.back_off();
        }
        assert_eq!(r.rto(), ms(60_000));
        r.sample(ms(110), 2, 10);
        assert_eq!(r.backoffs(), 0);
        assert!(r.rto() < ms(400));
    }

    /// `mdev_max_us`: the variance term holds the round trip's largest deviation while the
    /// deviation itself decays, and falls only when a round trip ends, by a quarter of its
    /// excess over the ended round's largest deviation (RFC 6298 would be back at SRTT +
    /// 200 ms after two steady samples).
    #[test]
    fn holds_the_round_trips_largest_deviation_and_decays_once_per_round_trip() {
        let mut r = estimator();
        r.sample(ms(100), 0, 10);
        r.sample(ms(300), 1, 12);
        // SRTT 125, mdev = 150 + 200 = 350: the variance term rises with it at once.
        assert_eq!((r.srtt(), r.rto()), (Some(ms(125)), ms(475)));
        for _ in 0..3 {
            r.sample(ms(125), 2, 12);
        }
        // mdev fell to 350·(3/4)³ ≈ 148 (RTTVAR 37); the round trip's largest stays.
        assert_eq!(r.rttvar(), Duration::from_nanos(36_914_062));
        assert_eq!(r.rto(), ms(475));
        // The round trip ends (una beyond 10): its largest deviation was 350, nothing falls.
        r.sample(ms(125), 11, 20);
        assert_eq!(r.rto(), ms(475));
        // The next ones' largest is the 200 ms floor: 350 − 150/4, then 312.5 − 112.5/4.
        r.sample(ms(125), 21, 30);
        assert_eq!(r.rto(), us(437_500));
        r.sample(ms(125), 31, 40);
        assert_eq!(r.rto(), us(409_375));
        // Within a round trip nothing decays.
        r.sample(ms(125), 35, 40);
        assert_eq!(r.rto(), us(409_375));
    }

    /// A sample below SRTT by more than a quarter of the mean deviation moves the deviation by
    /// only 1/32 of the excess (`tcp_rtt_estimator`'s finer gain, after Eifel).
    #[test]
    fn a_falling_rtt_widens_the_deviation_by_a_thirty_second() {
        let mut r = estimator();
        r.sample(ms(400), 0, 10);
        assert_eq!(r.rto(), ms(1200));
        r.sample(ms(80), 1, 10);
        // Error −320, mdev/4 = 200: mdev = 800 + 120/8 = 815 (RFC 6298: 600 + 320 = 920);
        // SRTT 360, RTO 360 + 815.
        assert_eq!((r.srtt(), r.rto()), (Some(ms(360)), ms(1175)));
        r.sample(ms(500), 2, 10);
        // A rise takes the full gain: mdev = 815 − 203.75 + 140 = 751.25, under the round
        // trip's largest (815), which the variance term keeps; SRTT 377.5.
        assert_eq!(r.rttvar(), Duration::from_nanos(187_812_500));
        assert_eq!(r.rto(), us(1_192_500));
    }

    #[test]
    fn steady_paths_keep_the_minimum_above_srtt() {
        let mut r = estimator();
        for i in 0..50 {
            r.sample(ms(2), i * 10 + 1, i * 10 + 10);
        }
        // The deviation has decayed to almost nothing: SRTT + 200 ms (RFC 6298 would give
        // 200 ms).
        assert_eq!(r.rto(), ms(202));
        for i in 50..250 {
            r.sample(ms(900), i * 10 + 1, i * 10 + 10);
        }
        let rto = r.rto().as_secs_f64();
        assert!((rto - 1.1).abs() < 1e-3, "{rto}");
        assert_eq!(r.min_rtt(), Some(ms(2)));
    }
}
