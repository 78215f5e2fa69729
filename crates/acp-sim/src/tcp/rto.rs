//! The retransmission timeout of RFC 6298 as Linux computes it: SRTT and RTTVAR from RTT
//! samples (gains 1/8 and 1/4), `RTO = SRTT + max(G, 4·RTTVAR, min_rto)` at most `max_rto`,
//! 1 s (or the configured initial value) before the first sample, and doubling on every expiry
//! (backoff) until the next sample. RFC 6298 bounds the RTO itself below by `min_rto`; Linux
//! (`__tcp_set_rto`, whose `rttvar_us` never falls below `tcp_rto_min`) bounds its variance
//! term, so that a path whose RTT is steady and long (a full queue) keeps 200 ms of slack
//! above SRTT. Linux's tracking of the largest deviation per round trip (`mdev_max_us`) is not
//! modelled: RTTVAR is RFC 6298's. Samples follow Karn's rule, which is the sender's business: it never
//! passes the RTT of a retransmitted segment.

use std::time::Duration;

/// Clock granularity G of RFC 6298: the simulator's clock is exact, Linux's is 1 ms.
const GRANULARITY: Duration = Duration::from_millis(1);

/// SRTT, RTTVAR, the minimum RTT seen and the current RTO with its backoff.
#[derive(Debug, Clone)]
pub struct RtoEstimator {
    srtt: Option<Duration>,
    rttvar: Duration,
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
            rttvar: Duration::ZERO,
            min_rtt: None,
            rto: initial,
            min_rto,
            max_rto,
            backoffs: 0,
        }
    }

    /// Takes one RTT measurement and recomputes the RTO (clearing any backoff).
    pub fn sample(&mut self, rtt: Duration) {
        match self.srtt {
            None => {
                self.srtt = Some(rtt);
                self.rttvar = rtt / 2;
            }
            Some(srtt) => {
                let diff = srtt.abs_diff(rtt);
                self.rttvar = (self.rttvar * 3 + diff) / 4;
                self.srtt = Some((srtt * 7 + rtt) / 8);
            }
        }
        self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
        let srtt = self.srtt.unwrap_or(rtt);
        let variance = GRANULARITY.max(self.rttvar * 4).max(self.min_rto);
        self.rto = (srtt + variance).min(self.max_rto);
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

    /// RTT variation (RFC 6298's RTTVAR; zero before the first sample).
    pub fn rttvar(&self) -> Duration {
        self.rttvar
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

    #[test]
    fn follows_rfc6298_with_linuxs_floor_on_the_variance_term() {
        let mut r = RtoEstimator::new(ms(1000), ms(200), ms(60_000));
        assert_eq!(r.rto(), ms(1000));
        r.sample(ms(100));
        // SRTT 100, RTTVAR 50: 100 + max(200, 200) = 300 ms.
        assert_eq!((r.srtt(), r.rto()), (Some(ms(100)), ms(300)));
        r.sample(ms(180));
        // RTTVAR = 3/4·50 + 1/4·80 = 57.5; SRTT = 7/8·100 + 1/8·180 = 110; 110 + 230 = 340.
        assert_eq!(r.srtt(), Some(ms(110)));
        assert_eq!(r.rto(), Duration::from_micros(340_000));
        for _ in 0..3 {
            r.back_off();
        }
        assert_eq!((r.rto(), r.backoffs()), (ms(2720), 3));
        for _ in 0..10 {
            r.back_off();
        }
        assert_eq!(r.rto(), ms(60_000));
        r.sample(ms(110));
        assert_eq!(r.backoffs(), 0);
        assert!(r.rto() < ms(400));
    }

    #[test]
    fn steady_paths_keep_the_minimum_above_srtt() {
        let mut r = RtoEstimator::new(ms(1000), ms(200), ms(60_000));
        for _ in 0..50 {
            r.sample(ms(2));
        }
        // RTTVAR has decayed to almost nothing: SRTT + 200 ms (RFC 6298 would give 200 ms).
        assert_eq!(r.rto(), ms(202));
        for _ in 0..200 {
            r.sample(ms(900));
        }
        let rto = r.rto().as_secs_f64();
        assert!((rto - 1.1).abs() < 1e-3, "{rto}");
        assert_eq!(r.min_rtt(), Some(ms(2)));
    }
}
