//! Parsing of `--controller` values: `acp+`, `acp`, `acp:KAPPA`, `lazy`, `fixed:RATE`.

use std::fmt;
use std::str::FromStr;

use acp_core::{Acp, Controller, Fixed, Lazy};

/// A controller chosen on the command line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ControllerSpec {
    /// ACP+.
    AcpPlus,
    /// Original ACP with step κ (default 1, the thesis' Internet setting).
    Acp(f64),
    /// Lazy.
    Lazy,
    /// Fixed rate (updates/s).
    Fixed(f64),
}

impl ControllerSpec {
    /// A fresh controller of this kind.
    pub fn build(&self) -> Box<dyn Controller> {
        match *self {
            ControllerSpec::AcpPlus => Box::new(Acp::plus()),
            ControllerSpec::Acp(kappa) => Box::new(Acp::original(kappa)),
            ControllerSpec::Lazy => Box::new(Lazy),
            ControllerSpec::Fixed(rate) => Box::new(Fixed::new(rate)),
        }
    }
}

fn positive(what: &str, s: &str) -> Result<f64, String> {
    s.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v > 0.0)
        .ok_or_else(|| format!("{what} must be a positive number, got {s:?}"))
}

impl FromStr for ControllerSpec {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (name, arg) = match s.split_once(':') {
            Some((n, a)) => (n, Some(a)),
            None => (s, None),
        };
        match (name.to_ascii_lowercase().as_str(), arg) {
            ("acp+", None) => Ok(ControllerSpec::AcpPlus),
            ("acp", None) => Ok(ControllerSpec::Acp(1.0)),
            ("acp", Some(k)) => positive("KAPPA", k).map(ControllerSpec::Acp),
            ("lazy", None) => Ok(ControllerSpec::Lazy),
            ("fixed", Some(r)) => positive("RATE", r).map(ControllerSpec::Fixed),
            ("fixed", None) => Err("fixed needs a rate: fixed:RATE (updates/s)".into()),
            _ => Err(format!(
                "unknown controller {s:?} (expected acp+, acp[:KAPPA], lazy or fixed:RATE)"
            )),
        }
    }
}

impl fmt::Display for ControllerSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.build().name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_form() {
        assert_eq!("acp+".parse(), Ok(ControllerSpec::AcpPlus));
        assert_eq!("ACP".parse(), Ok(ControllerSpec::Acp(1.0)));
        assert_eq!("acp:0.25".parse(), Ok(ControllerSpec::Acp(0.25)));
        assert_eq!("lazy".parse(), Ok(ControllerSpec::Lazy));
        assert_eq!("fixed:50".parse(), Ok(ControllerSpec::Fixed(50.0)));
        for bad in ["fixed", "fixed:-1", "acp:x", "tcp", "lazy:3"] {
            assert!(bad.parse::<ControllerSpec>().is_err(), "{bad}");
        }
        assert_eq!(ControllerSpec::Fixed(50.0).to_string(), "fixed:50");
    }
}
