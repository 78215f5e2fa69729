//! Host names to socket addresses, for every address a user gives: `HOST:PORT`, where HOST is a
//! name (`localhost`, `monitor.example.net`), an IPv4 address or a bracketed IPv6 address
//! (`[::1]:7200`).
//!
//! A name may resolve to several addresses of both families. [`resolve`] keeps the system
//! resolver's order (RFC 6724 preference) and returns the first address this host can actually
//! use for the purpose: one of its own ([`Purpose::Listen`]; checked by binding it with an
//! ephemeral port, so a port in use, or shared with `SO_REUSEPORT`, is left for the real bind to
//! judge), or one a UDP socket of its family can be connected to ([`Purpose::Connect`]; that
//! fails at once for a family the host has no route for, e.g. IPv6 on an IPv4-only host, without
//! sending anything). Names under the reserved `.invalid` top-level domain never resolve
//! (RFC 6761 §6.4) and are answered without a lookup, so they fail at once even where DNS is
//! unreachable.
//!
//! Resolution happens once, when a command starts: the runtime then works with the chosen
//! [`SocketAddr`] (a monitor whose address changes needs the source restarted).

use std::io;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs, UdpSocket};

/// What an address is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// A local address to bind and receive on.
    Listen,
    /// A peer to send to (a monitor, or a relay's target).
    Connect,
}

/// Why `HOST:PORT` gave no usable address.
#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    /// Not of the form `HOST:PORT`.
    #[error("expected HOST:PORT (e.g. localhost:7200, 192.0.2.1:7200 or [::1]:7200), got {0:?}")]
    Syntax(String),
    /// The name does not resolve.
    #[error("cannot resolve host {host}: {reason}")]
    Unknown {
        /// The host as given.
        host: String,
        /// The resolver's answer.
        reason: String,
    },
    /// It resolves, but no address can be used for the purpose.
    #[error("no address of host {host} can be used here ({tried}): {last}")]
    Unusable {
        /// The host as given.
        host: String,
        /// The addresses tried, in order.
        tried: String,
        /// The error of the last one.
        last: io::Error,
    },
}

/// Splits `HOST:PORT`, checking that the port is a number and the host is not empty; brackets
/// around an IPv6 host are removed.
fn split(spec: &str) -> Result<(&str, u16), ResolveError> {
    let bad = || ResolveError::Syntax(spec.to_string());
    let (host, port) = spec.rsplit_once(':').ok_or_else(bad)?;
    let port: u16 = port.parse().map_err(|_| bad())?;
    let host = match host.strip_prefix('[') {
        Some(inner) => inner.strip_suffix(']').ok_or_else(bad)?,
        // An unbracketed IPv6 address ("::1:7200") is ambiguous.
        None if host.contains(':') => return Err(bad()),
        None => host,
    };
    if host.is_empty() {
        return Err(bad());
    }
    Ok((host, port))
}

/// Whether `host` is under the reserved `.invalid` domain (RFC 6761 §6.4).
fn is_reserved_invalid(host: &str) -> bool {
    let name = host.trim_end_matches('.').to_ascii_lowercase();
    name == "invalid" || name.ends_with(".invalid")
}

/// Checks that `addr` can be used for `purpose` on this host.
fn usable(addr: SocketAddr, purpose: Purpose) -> io::Result<()> {
    match purpose {
        Purpose::Listen => UdpSocket::bind(SocketAddr::new(addr.ip(), 0)).map(drop),
        Purpose::Connect => {
            let any: SocketAddr = if addr.is_ipv4() {
                (Ipv4Addr::UNSPECIFIED, 0).into()
            } else {
                (Ipv6Addr::UNSPECIFIED, 0).into()
            };
            UdpSocket::bind(any)?.connect(addr)
        }
    }
}

/// The first address of `spec` (`HOST:PORT`) usable for `purpose`, in the resolver's order.
pub fn resolve(spec: &str, purpose: Purpose) -> Result<SocketAddr, ResolveError> {
    let (host, port) = split(spec)?;
    let unknown = |reason: String| ResolveError::Unknown {
        host: host.to_string(),
        reason,
    };
    if is_reserved_invalid(host) {
        return Err(unknown(
            "names under .invalid never resolve (RFC 6761)".into(),
        ));
    }
    let addrs: Vec<SocketAddr> = (host, port)
        .to_socket_addrs()
        .map_err(|e| unknown(e.to_string()))?
        .collect();
    first_usable(host, &addrs, purpose)
}

/// The first of `addrs` (those of `host`) usable for `purpose`.
fn first_usable(
    host: &str,
    addrs: &[SocketAddr],
    purpose: Purpose,
) -> Result<SocketAddr, ResolveError> {
    let mut last = None;
    for &addr in addrs {
        match usable(addr, purpose) {
            Ok(()) => return Ok(addr),
            Err(e) => last = Some(e),
        }
    }
    let tried: Vec<String> = addrs.iter().map(SocketAddr::to_string).collect();
    Err(ResolveError::Unusable {
        host: host.to_string(),
        tried: tried.join(", "),
        last: last.unwrap_or_else(|| io::Error::other("the resolver returned no address")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_and_names_resolve() {
        let v4: SocketAddr = "127.0.0.1:7200".parse().unwrap();
        assert_eq!(resolve("127.0.0.1:7200", Purpose::Connect).unwrap(), v4);
        let local = resolve("localhost:7200", Purpose::Connect).unwrap();
        assert!(local.ip().is_loopback() && local.port() == 7200, "{local}");
        let listen = resolve("localhost:0", Purpose::Listen).unwrap();
        assert!(listen.ip().is_loopback(), "{listen}");
    }

    #[test]
    fn malformed_specs_are_refused_before_any_lookup() {
        for bad in [
            "localhost",
            "localhost:",
            ":7200",
            "::1:7200",
            "[::1:7200",
            "host:99999",
        ] {
            assert!(
                matches!(resolve(bad, Purpose::Connect), Err(ResolveError::Syntax(_))),
                "{bad}"
            );
        }
    }

    #[test]
    fn reserved_invalid_names_fail_at_once_naming_the_host() {
        let started = std::time::Instant::now();
        let err = resolve("monitor.x.invalid:7200", Purpose::Connect).unwrap_err();
        assert!(started.elapsed() < std::time::Duration::from_millis(100));
        assert!(matches!(err, ResolveError::Unknown { .. }));
        assert!(err.to_string().contains("monitor.x.invalid"), "{err}");
        assert!(resolve("INVALID.:1", Purpose::Connect).is_err());
        // Only the top-level domain is reserved.
        assert!(!is_reserved_invalid("invalid.example"));
    }

    #[test]
    fn an_address_this_host_cannot_use_is_skipped_or_reported() {
        // TEST-NET-1 is nobody's local address: it cannot be bound, and the next one is taken.
        let unusable: SocketAddr = "192.0.2.1:0".parse().unwrap();
        let loopback: SocketAddr = "127.0.0.1:0".parse().unwrap();
        let got = first_usable("h", &[unusable, loopback], Purpose::Listen).unwrap();
        assert_eq!(got, loopback);
        let err = first_usable("h", &[unusable], Purpose::Listen).unwrap_err();
        assert!(matches!(err, ResolveError::Unusable { .. }), "{err}");
        assert!(err.to_string().contains("192.0.2.1:0"), "{err}");
        let err = resolve("192.0.2.1:0", Purpose::Listen).unwrap_err();
        assert!(
            err.to_string().starts_with("no address of host 192.0.2.1"),
            "{err}"
        );
    }
}
