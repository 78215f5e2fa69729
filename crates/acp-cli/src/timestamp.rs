//! Wall-clock timestamps in outputs and logs: RFC 3339 in UTC with microseconds, e.g.
//! `2026-11-23T17:23:25.123456Z` (fixed width, so text columns line up and strings sort by time).
//!
//! `acp_core::Time` read from `acp_runtime::clock` counts nanoseconds since the Unix epoch, so a
//! time the runtime recorded (an update's arrival) is formatted as it is, without converting
//! between clocks.

use acp_core::Time;
use time::format_description::BorrowedFormatItem;
use time::macros::format_description;
use time::OffsetDateTime;

/// The format of every timestamp.
pub const FORMAT: &[BorrowedFormatItem<'static>] =
    format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:6]Z");

/// `t` (nanoseconds since the Unix epoch) as RFC 3339 UTC.
pub fn rfc3339(t: Time) -> String {
    OffsetDateTime::from_unix_timestamp_nanos(i128::from(t.as_nanos()))
        .ok()
        .and_then(|at| at.format(FORMAT).ok())
        // Only years past 9999 fail; the clock does not reach them.
        .unwrap_or_else(|| format!("@{}ns", t.as_nanos()))
}

/// The current time, RFC 3339 UTC.
pub fn now() -> String {
    rfc3339(acp_runtime::clock::now())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_rfc3339_utc_with_microseconds() {
        assert_eq!(rfc3339(Time::from_nanos(0)), "1970-01-01T00:00:00.000000Z");
        // 2026-11-23T17:23:25.123456789Z, truncated to microseconds.
        let t = Time::from_nanos(1_795_454_605_123_456_789);
        assert_eq!(rfc3339(t), "2026-11-23T17:23:25.123456Z");
        let now = now();
        assert_eq!(now.len(), 27, "{now}");
        assert!(now.starts_with("20") && now.ends_with('Z'), "{now}");
    }
}
