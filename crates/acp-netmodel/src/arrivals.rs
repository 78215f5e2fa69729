//! Arrival processes: when the next packet of a stream is born.
//!
//! One generator serves cross traffic (CBR, Poisson, on-off) and feedback-free update streams
//! (periodic, Poisson). Each draws from its own random stream, so its arrivals do not depend on
//! anything else in the run.

use std::time::Duration;

use acp_core::time::secs_to_duration;

use crate::rng::Rng;
use crate::Time;

/// The pattern of a stream's arrivals.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Process {
    /// Evenly spaced (constant bit rate): the first at the start, then every mean gap.
    Periodic,
    /// Exponential gaps with the mean gap: the first one gap after the start.
    Poisson,
    /// Periodic while on; on and off periods are exponential with these means; starts on.
    OnOff {
        /// Mean on period.
        on: Duration,
        /// Mean off period.
        off: Duration,
    },
}

/// A running arrival process.
#[derive(Debug, Clone)]
pub struct Arrivals {
    process: Process,
    gap: f64,
    rng: Rng,
    next: Time,
    on_until: Time,
}

impl Arrivals {
    /// A process of `rate` arrivals per second (while on) starting at `start`.
    pub fn new(process: Process, rate: f64, mut rng: Rng, start: Time) -> Self {
        let gap = 1.0 / rate;
        let (next, on_until) = match process {
            Process::Periodic => (start, Time::MAX),
            Process::Poisson => (start + secs_to_duration(rng.exp(gap)), Time::MAX),
            Process::OnOff { on, .. } => {
                (start, start + secs_to_duration(rng.exp(on.as_secs_f64())))
            }
        };
        Arrivals {
            process,
            gap,
            rng,
            next,
            on_until,
        }
    }

    /// When the next arrival happens.
    pub fn next_at(&self) -> Time {
        self.next
    }

    /// Consumes the next arrival and returns its time.
    pub fn pop(&mut self) -> Time {
        let now = self.next;
        self.next = match self.process {
            Process::Periodic => now + secs_to_duration(self.gap),
            Process::Poisson => now + secs_to_duration(self.rng.exp(self.gap)),
            Process::OnOff { on, off } => {
                let mut next = now + secs_to_duration(self.gap);
                if next >= self.on_until {
                    let silent = secs_to_duration(self.rng.exp(off.as_secs_f64()));
                    let talk = secs_to_duration(self.rng.exp(on.as_secs_f64()));
                    next = self.on_until + silent;
                    self.on_until = next + talk;
                }
                next
            }
        };
        now
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count_until(a: &mut Arrivals, end: Time) -> usize {
        std::iter::from_fn(|| (a.next_at() < end).then(|| a.pop())).count()
    }

    #[test]
    fn periodic_is_exact() {
        let mut a = Arrivals::new(Process::Periodic, 100.0, Rng::new(1), Time::from_secs(1));
        let times: Vec<Time> = (0..3).map(|_| a.pop()).collect();
        assert_eq!(
            times,
            [
                Time::from_millis(1000),
                Time::from_millis(1010),
                Time::from_millis(1020)
            ]
        );
    }

    #[test]
    fn poisson_has_its_mean_rate() {
        let mut a = Arrivals::new(Process::Poisson, 1000.0, Rng::new(2), Time::ZERO);
        let n = count_until(&mut a, Time::from_secs(100)) as f64;
        // Poisson count with mean 10⁵: standard deviation 316; ±1500 is ~5σ.
        assert!((n - 1e5).abs() < 1500.0, "{n}");
    }

    #[test]
    fn on_off_sends_half_the_time_with_equal_periods() {
        let p = Process::OnOff {
            on: Duration::from_millis(500),
            off: Duration::from_millis(500),
        };
        let mut a = Arrivals::new(p, 1000.0, Rng::new(3), Time::ZERO);
        let n = count_until(&mut a, Time::from_secs(10_000)) as f64;
        // About 10,000 on/off cycles, each period exponential (sd 0.5 s): the on fraction
        // A/(A + B) has standard deviation 0.5·√2·50 s / 10⁴ s = 0.35 %, i.e. 0.7 % of its value
        // 0.5. 4 % is over five of them.
        assert!((n / 5e6 - 1.0).abs() < 0.04, "{n}");
    }
}
