//! Integer time keeping.
//!
//! The core never reads a clock: callers pass a [`Time`] into every call. A `Time` is a count of
//! nanoseconds since an arbitrary origin chosen by the caller (process start for the runtime, zero
//! for the simulator). Durations are `std::time::Duration`. No floating point is used here; floats
//! appear only in the estimators that consume these values.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};
use std::time::Duration;

/// An instant, in nanoseconds since a caller-chosen origin.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Time(u64);

impl Time {
    /// The origin.
    pub const ZERO: Time = Time(0);
    /// The largest representable instant (about 584 years after the origin).
    pub const MAX: Time = Time(u64::MAX);

    /// An instant `nanos` nanoseconds after the origin.
    pub const fn from_nanos(nanos: u64) -> Self {
        Time(nanos)
    }

    /// An instant `micros` microseconds after the origin.
    pub const fn from_micros(micros: u64) -> Self {
        Time(micros.saturating_mul(1_000))
    }

    /// An instant `millis` milliseconds after the origin.
    pub const fn from_millis(millis: u64) -> Self {
        Time(millis.saturating_mul(1_000_000))
    }

    /// An instant `secs` seconds after the origin.
    pub const fn from_secs(secs: u64) -> Self {
        Time(secs.saturating_mul(1_000_000_000))
    }

    /// Nanoseconds since the origin.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }

    /// Seconds since the origin, as a float (for reports only).
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-9
    }

    /// Time elapsed from `earlier` to `self`, zero if `earlier` is later.
    pub fn saturating_since(self, earlier: Time) -> Duration {
        Duration::from_nanos(self.0.saturating_sub(earlier.0))
    }

    /// Nanoseconds elapsed from `earlier` to `self`, zero if `earlier` is later.
    pub const fn nanos_since(self, earlier: Time) -> u64 {
        self.0.saturating_sub(earlier.0)
    }

    /// `self + d`, saturating at [`Time::MAX`].
    pub fn saturating_add(self, d: Duration) -> Time {
        Time(self.0.saturating_add(duration_nanos(d)))
    }
}

/// A duration in whole nanoseconds, saturating at `u64::MAX`.
pub fn duration_nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// A duration of `secs` seconds (a float from an estimator), clamped to `[0, u64::MAX]` ns.
/// NaN maps to zero.
pub fn secs_to_duration(secs: f64) -> Duration {
    let nanos = secs * 1e9;
    if nanos.is_nan() || nanos <= 0.0 {
        Duration::ZERO
    } else if nanos >= u64::MAX as f64 {
        Duration::from_nanos(u64::MAX)
    } else {
        Duration::from_nanos(nanos.round() as u64)
    }
}

impl Add<Duration> for Time {
    type Output = Time;
    fn add(self, d: Duration) -> Time {
        self.saturating_add(d)
    }
}

impl AddAssign<Duration> for Time {
    fn add_assign(&mut self, d: Duration) {
        *self = *self + d;
    }
}

impl Sub<Time> for Time {
    type Output = Duration;
    /// Saturating difference: `a - b` is zero when `b` is later than `a`.
    fn sub(self, earlier: Time) -> Duration {
        self.saturating_since(earlier)
    }
}

impl fmt::Debug for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}.{:09}s",
            self.0 / 1_000_000_000,
            self.0 % 1_000_000_000
        )
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_saturates() {
        assert_eq!(Time::MAX + Duration::from_secs(1), Time::MAX);
        assert_eq!(Time::from_secs(1) - Time::from_secs(2), Duration::ZERO);
        assert_eq!(
            Time::from_millis(1500) - Time::from_secs(1),
            Duration::from_millis(500)
        );
    }

    #[test]
    fn float_seconds_convert_with_clamping() {
        assert_eq!(secs_to_duration(0.25), Duration::from_millis(250));
        assert_eq!(secs_to_duration(-1.0), Duration::ZERO);
        assert_eq!(secs_to_duration(f64::NAN), Duration::ZERO);
        assert_eq!(
            secs_to_duration(f64::INFINITY),
            Duration::from_nanos(u64::MAX)
        );
    }

    #[test]
    fn debug_prints_seconds_and_nanos() {
        assert_eq!(
            format!("{:?}", Time::from_nanos(1_000_000_123)),
            "1.000000123s"
        );
    }
}
