//! Per-network shares of a bounded table: no single host or prefix may hold more than a set
//! share of a monitor's sessions or a relay's clients.
//!
//! Addresses are grouped by network prefix: IPv4 /24 and IPv6 /48 (an IPv4-mapped IPv6 address
//! counts as its IPv4 address). A host is always inside its prefix, so one cap on the prefix
//! bounds both a single host holding many ports and sessions and its neighbours together.
//! [`PrefixShare`] counts entries per prefix and refuses one more once a prefix holds its cap.

use std::collections::HashMap;
use std::net::IpAddr;

/// The network an address belongs to: IPv4 /24 or IPv6 /48.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Prefix {
    /// The first three octets of an IPv4 address.
    V4([u8; 3]),
    /// The first six octets of an IPv6 address.
    V6([u8; 6]),
}

impl Prefix {
    /// The prefix `ip` belongs to.
    pub fn of(ip: IpAddr) -> Prefix {
        match ip.to_canonical() {
            IpAddr::V4(v4) => {
                let o = v4.octets();
                Prefix::V4([o[0], o[1], o[2]])
            }
            IpAddr::V6(v6) => {
                let o = v6.octets();
                Prefix::V6([o[0], o[1], o[2], o[3], o[4], o[5]])
            }
        }
    }
}

/// Entries per prefix in a table of `table` entries, each prefix capped at a share of it.
#[derive(Debug, Clone)]
pub struct PrefixShare {
    cap: usize,
    held: HashMap<Prefix, usize>,
}

impl PrefixShare {
    /// A prefix may hold `share` of `table` entries (at least one; `share` ≥ 1 means no cap
    /// beyond the table's own size).
    pub fn new(share: f64, table: usize) -> Self {
        let cap = if share >= 1.0 {
            usize::MAX
        } else {
            ((share.max(0.0) * table as f64) as usize).max(1)
        };
        PrefixShare {
            cap,
            held: HashMap::new(),
        }
    }

    /// Most entries one prefix may hold.
    pub fn cap(&self) -> usize {
        self.cap
    }

    /// Entries held by `ip`'s prefix.
    pub fn held(&self, ip: IpAddr) -> usize {
        self.held.get(&Prefix::of(ip)).copied().unwrap_or(0)
    }

    /// Whether `ip`'s prefix may take one more entry.
    pub fn admits(&self, ip: IpAddr) -> bool {
        self.held(ip) < self.cap
    }

    /// Records a new entry of `ip` (the caller checked [`PrefixShare::admits`]).
    pub fn add(&mut self, ip: IpAddr) {
        *self.held.entry(Prefix::of(ip)).or_default() += 1;
    }

    /// Records that an entry of `ip` is gone.
    pub fn remove(&mut self, ip: IpAddr) {
        let prefix = Prefix::of(ip);
        if let Some(n) = self.held.get_mut(&prefix) {
            *n -= 1;
            if *n == 0 {
                self.held.remove(&prefix);
            }
        }
    }

    /// Prefixes holding at least one entry.
    pub fn prefixes(&self) -> usize {
        self.held.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn hosts_of_one_network_share_a_prefix() {
        assert_eq!(Prefix::of(ip("10.1.2.3")), Prefix::of(ip("10.1.2.200")));
        assert_ne!(Prefix::of(ip("10.1.2.3")), Prefix::of(ip("10.1.3.3")));
        assert_eq!(
            Prefix::of(ip("2001:db8:1::1")),
            Prefix::of(ip("2001:db8:1:ffff::9"))
        );
        assert_ne!(
            Prefix::of(ip("2001:db8:1::1")),
            Prefix::of(ip("2001:db8:2::1"))
        );
        assert_eq!(
            Prefix::of(ip("::ffff:10.1.2.3")),
            Prefix::of(ip("10.1.2.9"))
        );
    }

    #[test]
    fn a_prefix_is_capped_at_its_share_and_frees_what_it_releases() {
        let mut share = PrefixShare::new(0.25, 10);
        assert_eq!(share.cap(), 2);
        let a = ip("192.0.2.1");
        share.add(a);
        share.add(ip("192.0.2.77"));
        assert!(!share.admits(ip("192.0.2.5")));
        assert!(share.admits(ip("198.51.100.1")));
        share.remove(a);
        assert!(share.admits(a));
        share.remove(ip("192.0.2.77"));
        assert_eq!(share.prefixes(), 0);
    }

    #[test]
    fn a_full_share_means_no_cap_and_a_tiny_one_still_admits_one() {
        assert_eq!(PrefixShare::new(1.0, 10).cap(), usize::MAX);
        assert_eq!(PrefixShare::new(0.0001, 10).cap(), 1);
    }
}
