//! Links that change over time: piecewise schedules and packet-delivery traces.
//!
//! A [`Schedule`] is a list of steps, each setting some of the link's rate, delay and loss model
//! from its time on (relative to the link's start); with `repeat` it loops with that period. A
//! packet's service time is fixed when its service starts, at the rate in force then; its delay
//! is the one in force when its service ends.
//!
//! A [`Trace`] replaces the rate by the delivery opportunities of a Mahimahi/Pantheon trace: each
//! line holds a millisecond timestamp, and each line is one opportunity to deliver `mtu` bytes
//! (1500 in Mahimahi). Several lines with the same timestamp are several opportunities at that
//! instant. The trace loops with a period equal to its last timestamp. Bytes of an opportunity
//! that the packet in service does not need go to the next queued packet at the same instant;
//! when the queue is empty they are lost (as in Mahimahi).

use std::time::Duration;

use thiserror::Error;

use crate::loss::LossModel;
use crate::Time;

/// One change of a link's parameters.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Step {
    /// When, from the link's start (within one period when the schedule repeats).
    pub at: Duration,
    /// New rate (bit/s), if it changes.
    pub rate_bps: Option<f64>,
    /// New propagation delay, if it changes.
    pub delay: Option<Duration>,
    /// New loss model, if it changes.
    pub loss: Option<LossModel>,
}

/// A piecewise schedule of link parameters.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Schedule {
    /// Steps in time order.
    pub steps: Vec<Step>,
    /// Loop with this period (every step's `at` must be below it).
    pub repeat: Option<Duration>,
}

impl Schedule {
    /// Checks the steps are in order, within the period and in range.
    pub fn validate(&self) -> Result<(), String> {
        if self.steps.is_empty() {
            return Err("a schedule needs at least one step".into());
        }
        for (i, s) in self.steps.iter().enumerate() {
            let n = i + 1;
            if i > 0 && s.at < self.steps[i - 1].at {
                return Err(format!("step {n}: times must not decrease"));
            }
            if let Some(period) = self.repeat {
                if s.at >= period {
                    return Err(format!(
                        "step {n}: at {:?} is not below repeat {period:?}",
                        s.at
                    ));
                }
            }
            if let Some(r) = s.rate_bps {
                if !(r.is_finite() && r > 0.0) {
                    return Err(format!("step {n}: rate must be positive"));
                }
            }
            if let Some(l) = &s.loss {
                l.validate().map_err(|e| format!("step {n}: {e}"))?;
            }
        }
        if self.repeat == Some(Duration::ZERO) {
            return Err("repeat must be positive".into());
        }
        Ok(())
    }

    /// When step number `k` (counting through the loops) happens for a link started at `start`.
    pub fn time_of(&self, k: u64, start: Time) -> Option<Time> {
        let n = self.steps.len() as u64;
        let step = self.steps.get(usize::try_from(k % n.max(1)).ok()?)?;
        match self.repeat {
            None if k >= n => None,
            None => Some(start + step.at),
            Some(period) => {
                let cycles = u32::try_from(k / n).ok()?;
                Some(start + period.checked_mul(cycles)? + step.at)
            }
        }
    }

    /// Step number `k` (counting through the loops).
    pub fn step(&self, k: u64) -> &Step {
        &self.steps[(k % self.steps.len() as u64) as usize]
    }
}

/// Why a trace file was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("line {line}: {message}")]
pub struct TraceError {
    /// 1-based line number (0 for the file as a whole).
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// A Mahimahi packet-delivery trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trace {
    /// Opportunity offsets within one period (ns), non-decreasing.
    times: Vec<u64>,
    /// The period (ns): the last timestamp.
    period: u64,
    /// Bytes per opportunity.
    pub mtu: u32,
}

/// Bytes per delivery opportunity in Mahimahi.
pub const MAHIMAHI_MTU: u32 = 1500;

impl Trace {
    /// Parses a trace: one non-negative integer millisecond timestamp per line, non-decreasing,
    /// the last one positive. Blank lines and lines starting with `#` are skipped.
    pub fn parse(text: &str) -> Result<Trace, TraceError> {
        let mut times = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let err = |message: String| TraceError {
                line: i + 1,
                message,
            };
            let ms: u64 = line.parse().map_err(|_| {
                err(format!(
                    "expected a whole number of milliseconds, got {line:?}"
                ))
            })?;
            let ns = ms
                .checked_mul(1_000_000)
                .ok_or_else(|| err(format!("{ms} ms is too large")))?;
            if times.last().is_some_and(|&prev| ns < prev) {
                return Err(err(format!("{ms} is earlier than the line before")));
            }
            times.push(ns);
        }
        match times.last() {
            None => Err(TraceError {
                line: 0,
                message: "the trace has no timestamps".into(),
            }),
            Some(0) => Err(TraceError {
                line: 0,
                message: "the last timestamp (the trace's period) must be positive".into(),
            }),
            Some(&period) => Ok(Trace {
                times,
                period,
                mtu: MAHIMAHI_MTU,
            }),
        }
    }

    /// Opportunities per period.
    pub fn len(&self) -> usize {
        self.times.len()
    }

    /// Whether there are no opportunities (never true of a parsed trace).
    pub fn is_empty(&self) -> bool {
        self.times.is_empty()
    }

    /// The period.
    pub fn period(&self) -> Duration {
        Duration::from_nanos(self.period)
    }

    /// Mean capacity in bits per second.
    pub fn mean_rate_bps(&self) -> f64 {
        self.times.len() as f64 * f64::from(self.mtu) * 8.0 / (self.period as f64 * 1e-9)
    }

    /// Offset from the start of opportunity `k` (counting through the loops).
    pub fn offset_of(&self, k: u64) -> u64 {
        let n = self.times.len() as u64;
        (k / n)
            .saturating_mul(self.period)
            .saturating_add(self.times[(k % n) as usize])
    }

    /// The first opportunity at or after `offset` ns from the start.
    pub fn first_at_or_after(&self, offset: u64) -> u64 {
        let n = self.times.len() as u64;
        let cycle = offset / self.period;
        let within = offset % self.period;
        let idx = self.times.partition_point(|&t| t < within) as u64;
        cycle * n + idx
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_mahimahi_traces_and_loops_them() {
        let t = Trace::parse("# a trace\n1\n1\n3\n\n5\n").unwrap();
        assert_eq!(t.len(), 4);
        assert_eq!(t.period(), Duration::from_millis(5));
        let ms = |k| t.offset_of(k) / 1_000_000;
        assert_eq!(
            (0..8).map(ms).collect::<Vec<_>>(),
            [1, 1, 3, 5, 6, 6, 8, 10]
        );
        assert_eq!(t.first_at_or_after(0), 0);
        assert_eq!(t.first_at_or_after(1_000_000), 0);
        assert_eq!(t.first_at_or_after(1_000_001), 2);
        assert_eq!(
            t.first_at_or_after(5_000_000),
            4,
            "the period's end starts the next loop"
        );
        assert_eq!(t.first_at_or_after(5_500_000), 4);
        // 4 × 1500 B per 5 ms = 9.6 Mbit/s.
        assert!((t.mean_rate_bps() - 9.6e6).abs() < 1e-6);
    }

    #[test]
    fn errors_name_the_line() {
        assert_eq!(Trace::parse("1\n2\nx\n").unwrap_err().line, 3);
        assert_eq!(Trace::parse("5\n4\n").unwrap_err().line, 2);
        assert!(Trace::parse("0\n0\n").is_err());
        assert!(Trace::parse("\n").is_err());
        assert!(Trace::parse("-3\n").is_err());
    }

    #[test]
    fn schedule_times_loop() {
        let s = Schedule {
            steps: vec![
                Step {
                    at: Duration::ZERO,
                    rate_bps: Some(1e6),
                    ..Step::default()
                },
                Step {
                    at: Duration::from_secs(4),
                    rate_bps: Some(2e6),
                    ..Step::default()
                },
            ],
            repeat: Some(Duration::from_secs(10)),
        };
        assert!(s.validate().is_ok());
        let t0 = Time::from_secs(100);
        let secs = |k| s.time_of(k, t0).map(|t| t.as_secs_f64());
        assert_eq!(secs(0), Some(100.0));
        assert_eq!(secs(1), Some(104.0));
        assert_eq!(secs(3), Some(114.0));
        let once = Schedule {
            repeat: None,
            ..s.clone()
        };
        assert_eq!(once.time_of(2, t0), None);
        let bad = Schedule {
            repeat: Some(Duration::from_secs(3)),
            ..s
        };
        assert!(bad.validate().unwrap_err().contains("step 2"));
    }
}
