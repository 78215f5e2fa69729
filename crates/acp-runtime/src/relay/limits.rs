//! How the relay bounds its client table: how many mappings, how much of the table one network
//! may hold, and when mappings expire (probation for one-shot clients, an idle timeout for the
//! rest). The table itself is `nat`; this is its configuration and the reasons it refuses.

use std::time::Duration;

use super::{CLIENT_IDLE_TIMEOUT, CLIENT_PROBATION, MAX_CLIENTS, MAX_CLIENT_SHARE};

/// Limits of the client table (see the relay's module documentation, "NAT").
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClientLimits {
    /// Most mappings held at once (each holds an upstream socket, a file descriptor).
    pub max_clients: usize,
    /// Largest share of `max_clients` that the clients of one network (IPv4 /24, IPv6 /48) may
    /// hold, in (0, 1]; 1 leaves only the table's own bound. A network always gets at least one.
    pub max_share: f64,
    /// A mapping without traffic in either direction for this long is removed.
    pub idle_timeout: Duration,
    /// A mapping that has carried a single datagram from its client and nothing back from the
    /// target is removed this long after that datagram left the relay (or was dropped).
    pub probation: Duration,
}

impl Default for ClientLimits {
    fn default() -> Self {
        ClientLimits {
            max_clients: MAX_CLIENTS,
            max_share: MAX_CLIENT_SHARE,
            idle_timeout: CLIENT_IDLE_TIMEOUT,
            probation: CLIENT_PROBATION,
        }
    }
}

impl ClientLimits {
    /// Checks that the table holds at least one client, the share is in (0, 1] and both
    /// timeouts are longer than zero.
    pub fn validate(&self) -> Result<(), String> {
        if self.max_clients == 0 {
            return Err("the client table must hold at least one client".into());
        }
        if !(self.max_share > 0.0 && self.max_share <= 1.0) {
            return Err(format!("client share {} must be in (0, 1]", self.max_share));
        }
        if self.idle_timeout.is_zero() || self.probation.is_zero() {
            return Err("client timeouts must be longer than zero".into());
        }
        Ok(())
    }

    /// Most mappings one network may hold.
    pub fn per_network(&self) -> usize {
        acp_core::prefix::PrefixShare::new(self.max_share, self.max_clients)
            .cap()
            .min(self.max_clients)
    }
}

/// Why a datagram from a client without a mapping opened none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Refusal {
    /// The table holds `max_clients` mappings, none of them expired.
    TableFull,
    /// The client's network holds its share of the table.
    PrefixShare,
    /// No upstream socket could be opened (for example out of file descriptors).
    NoSocket,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_are_valid_and_give_a_network_a_quarter() {
        let d = ClientLimits::default();
        assert_eq!(d.validate(), Ok(()));
        assert_eq!(d.per_network(), 1024);
        let whole = ClientLimits {
            max_share: 1.0,
            ..d
        };
        assert_eq!(whole.per_network(), MAX_CLIENTS);
    }

    #[test]
    fn out_of_range_limits_are_refused() {
        let d = ClientLimits::default();
        for share in [0.0, -0.5, 1.01, f64::NAN, f64::INFINITY] {
            let bad = ClientLimits {
                max_share: share,
                ..d
            };
            assert!(bad.validate().is_err(), "{share}");
        }
        let none = ClientLimits {
            max_clients: 0,
            ..d
        };
        assert!(none.validate().is_err());
        let instant = ClientLimits {
            probation: Duration::ZERO,
            ..d
        };
        assert!(instant.validate().is_err());
    }
}
