//! Parsing of the quantities users type: rates (`2mbit`, `500kbit`, `1.5gbit`, `64kbps`,
//! `1000bit`), durations (`20ms`, `1.5s`, `250us`, `2m`), and plain numbers with an optional unit.
//!
//! Rates are bits per second (`bit`, `kbit`, `mbit`, `gbit`; `bps`/`kbps`/`mbps`/`gbps` are bytes
//! per second, as in `tc`). Durations take a unit (`ns`, `us`, `ms`, `s`, `m`, `h`); a bare number is seconds.

use std::time::Duration;

use thiserror::Error;

/// A quantity that could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum UnitError {
    /// No number at the start.
    #[error("{0:?}: expected a number followed by a unit")]
    NoNumber(String),
    /// A unit this parser does not know.
    #[error("{input:?}: unknown unit {unit:?} (expected one of {expected})")]
    UnknownUnit {
        /// What was typed.
        input: String,
        /// The unit part.
        unit: String,
        /// The accepted units.
        expected: &'static str,
    },
    /// Negative, zero where not allowed, or not finite.
    #[error("{0:?}: out of range")]
    OutOfRange(String),
}

/// Splits `12.5ms` into (12.5, "ms").
fn split(input: &str) -> Result<(f64, String), UnitError> {
    let s = input.trim();
    let end = s
        .find(|c: char| {
            !(c.is_ascii_digit() || c == '.' || c == 'e' || c == 'E' || c == '-' || c == '+')
        })
        .unwrap_or(s.len());
    // An exponent marker must be followed by a digit, else it starts the unit.
    let mut end = end;
    while end > 0 && matches!(s.as_bytes()[end - 1], b'e' | b'E' | b'+' | b'-') {
        end -= 1;
    }
    let value: f64 = s[..end]
        .parse()
        .map_err(|_| UnitError::NoNumber(input.to_string()))?;
    if !value.is_finite() || value < 0.0 {
        return Err(UnitError::OutOfRange(input.to_string()));
    }
    Ok((value, s[end..].trim().to_ascii_lowercase()))
}

/// A rate in bits per second, e.g. `2mbit` → 2,000,000. A bare number is bits per second.
pub fn parse_rate(input: &str) -> Result<f64, UnitError> {
    let (v, unit) = split(input)?;
    let factor = match unit.as_str() {
        "" | "bit" | "bits" => 1.0,
        "kbit" => 1e3,
        "mbit" => 1e6,
        "gbit" => 1e9,
        "bps" => 8.0,
        "kbps" => 8e3,
        "mbps" => 8e6,
        "gbps" => 8e9,
        _ => {
            return Err(UnitError::UnknownUnit {
                input: input.to_string(),
                unit,
                expected: "bit, kbit, mbit, gbit, bps, kbps, mbps, gbps",
            })
        }
    };
    let rate = v * factor;
    if rate <= 0.0 {
        return Err(UnitError::OutOfRange(input.to_string()));
    }
    Ok(rate)
}

/// A duration, e.g. `20ms`, `1.5s`.
pub fn parse_duration(input: &str) -> Result<Duration, UnitError> {
    let (v, unit) = split(input)?;
    let secs = match unit.as_str() {
        "ns" => v * 1e-9,
        "us" | "µs" => v * 1e-6,
        "ms" => v * 1e-3,
        "" | "s" | "sec" | "secs" => v,
        "m" | "min" => v * 60.0,
        "h" => v * 3600.0,
        _ => {
            return Err(UnitError::UnknownUnit {
                input: input.to_string(),
                unit,
                expected: "ns, us, ms, s, m, h",
            })
        }
    };
    Duration::try_from_secs_f64(secs).map_err(|_| UnitError::OutOfRange(input.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates() {
        assert_eq!(parse_rate("2mbit"), Ok(2e6));
        assert_eq!(parse_rate("1.5Gbit"), Ok(1.5e9));
        assert_eq!(parse_rate("64kbps"), Ok(512e3));
        assert_eq!(parse_rate("1000"), Ok(1000.0));
        assert!(matches!(
            parse_rate("2 furlongs"),
            Err(UnitError::UnknownUnit { .. })
        ));
        assert!(matches!(parse_rate("mbit"), Err(UnitError::NoNumber(_))));
        assert!(matches!(parse_rate("0mbit"), Err(UnitError::OutOfRange(_))));
        assert!(matches!(
            parse_rate("-1mbit"),
            Err(UnitError::OutOfRange(_)) | Err(UnitError::NoNumber(_))
        ));
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("20ms"), Ok(Duration::from_millis(20)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("250us"), Ok(Duration::from_micros(250)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("0s"), Ok(Duration::ZERO));
        assert_eq!(parse_duration("20"), Ok(Duration::from_secs(20)));
        assert!(matches!(
            parse_duration("20 parsecs"),
            Err(UnitError::UnknownUnit { .. })
        ));
        assert!(matches!(parse_duration("1e3ms"), Ok(d) if d == Duration::from_secs(1)));
    }
}
