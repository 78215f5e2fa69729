//! Stateless address-validation cookies (`docs/PROTOCOL.md`, "Address validation").
//!
//! When its session table is under pressure, a monitor answers an update from an unknown session
//! with a COOKIE instead of creating state; the source proves it receives at its address by
//! echoing the cookie in its next updates. The monitor keeps nothing per cookie: a cookie is the
//! first 12 bytes of HMAC-SHA256 under the monitor's secret over the time epoch, the peer's
//! address and port, and the session id. It is accepted in its epoch and the next, so it expires
//! after one to two epochs.

use std::net::SocketAddr;
use std::time::Duration;

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

use crate::seal::Secret;
use crate::time::Time;
use crate::wire::COOKIE_LEN;

/// Issues and checks cookies.
#[derive(Debug, Clone)]
pub struct CookieJar {
    secret: Secret,
    epoch: Duration,
}

impl CookieJar {
    /// Cookies under `secret`, each valid for one to two `epoch`s.
    pub fn new(secret: Secret, epoch: Duration) -> Self {
        CookieJar {
            secret,
            epoch: epoch.max(Duration::from_millis(1)),
        }
    }

    fn epoch_of(&self, now: Time) -> u64 {
        now.as_nanos() / self.epoch.as_nanos() as u64
    }

    fn mac(&self, epoch: u64, peer: SocketAddr, session: u64) -> Hmac<Sha256> {
        let mut mac =
            Hmac::<Sha256>::new_from_slice(&self.secret.0).expect("HMAC takes keys of any length");
        let ip = match peer.ip().to_canonical() {
            std::net::IpAddr::V4(v4) => v4.to_ipv6_mapped(),
            std::net::IpAddr::V6(v6) => v6,
        };
        mac.update(&epoch.to_be_bytes());
        mac.update(&ip.octets());
        mac.update(&peer.port().to_be_bytes());
        mac.update(&session.to_be_bytes());
        mac
    }

    /// The cookie for `peer`'s `session` at `now`.
    pub fn issue(&self, now: Time, peer: SocketAddr, session: u64) -> [u8; COOKIE_LEN] {
        let full = self
            .mac(self.epoch_of(now), peer, session)
            .finalize()
            .into_bytes();
        let mut cookie = [0u8; COOKIE_LEN];
        cookie.copy_from_slice(&full[..COOKIE_LEN]);
        cookie
    }

    /// Whether `cookie` was issued to `peer`'s `session` in this epoch or the previous one
    /// (compared in constant time).
    pub fn check(
        &self,
        now: Time,
        peer: SocketAddr,
        session: u64,
        cookie: &[u8; COOKIE_LEN],
    ) -> bool {
        let epoch = self.epoch_of(now);
        [Some(epoch), epoch.checked_sub(1)]
            .into_iter()
            .flatten()
            .any(|e| {
                self.mac(e, peer, session)
                    .verify_truncated_left(cookie)
                    .is_ok()
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jar() -> CookieJar {
        CookieJar::new(Secret([5; 32]), Duration::from_secs(10))
    }

    fn peer(port: u16) -> SocketAddr {
        SocketAddr::from(([192, 0, 2, 1], port))
    }

    #[test]
    fn a_cookie_is_bound_to_address_port_and_session() {
        let j = jar();
        let now = Time::from_secs(100);
        let c = j.issue(now, peer(1), 9);
        assert!(j.check(now, peer(1), 9, &c));
        assert!(!j.check(now, peer(2), 9, &c));
        assert!(!j.check(now, SocketAddr::from(([192, 0, 2, 2], 1)), 9, &c));
        assert!(!j.check(now, peer(1), 10, &c));
        let other = CookieJar::new(Secret([6; 32]), Duration::from_secs(10));
        assert!(!other.check(now, peer(1), 9, &c));
        // An IPv4-mapped IPv6 peer is the same peer.
        let mapped = SocketAddr::from((std::net::Ipv4Addr::new(192, 0, 2, 1).to_ipv6_mapped(), 1));
        assert!(j.check(now, mapped, 9, &c));
    }

    #[test]
    fn a_cookie_expires_after_one_to_two_epochs() {
        let j = jar();
        let c = j.issue(Time::from_secs(105), peer(1), 9);
        assert!(j.check(Time::from_secs(119), peer(1), 9, &c));
        assert!(!j.check(Time::from_secs(120), peer(1), 9, &c));
        let mut bad = c;
        bad[11] ^= 1;
        assert!(!j.check(Time::from_secs(105), peer(1), 9, &bad));
    }
}
