//! The relay's client table: one upstream socket per client, connected to the target, as through
//! a NAT, within [`ClientLimits`].
//!
//! A new client is refused when its network (IPv4 /24, IPv6 /48) already holds its share of the
//! table ([`acp_core::prefix::PrefixShare`]) or when the table is full; a refused newcomer first
//! makes the table look for expired mappings, at most once per [`SWEEP_GAP`], so a flood of
//! newcomers costs one scan per gap rather than one per datagram. Mappings are only ever removed
//! when they have expired, so one that keeps carrying traffic is never displaced.
//!
//! A mapping starts on probation: while it has carried a single datagram from its client and
//! nothing back from the target, it expires [`ClientLimits::probation`] after that datagram
//! left the relay (or was dropped on the path), so that one-shot (for example spoofed) addresses
//! free their slot and socket quickly. The clock starts on leaving, not on arrival, so that a long
//! emulated delay or queue cannot expire a mapping before its target had a chance to answer. A
//! second datagram from the client or any from the target ends the probation; from then on the
//! mapping expires after [`ClientLimits::idle_timeout`] without traffic either way.

use std::collections::HashMap;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket};
use std::os::fd::{AsRawFd, RawFd};
use std::time::{Duration, Instant};

use acp_core::prefix::PrefixShare;

use crate::net::MarkingSocket;

use super::limits::{ClientLimits, Refusal};
use super::prepare_socket;

/// Least time between two scans for expired mappings made by refused newcomers.
pub(super) const SWEEP_GAP: Duration = Duration::from_millis(50);

/// Longest time between two periodic scans for expired mappings (shorter if probation is short).
const EXPIRY_SCAN: Duration = Duration::from_secs(1);

/// Shortest time between two periodic scans, however short probation is.
const MIN_EXPIRY_SCAN: Duration = Duration::from_millis(10);

/// Where a mapping stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Its client's one datagram is still crossing the path to the target.
    InFlight,
    /// Its client's one datagram left the relay (or was dropped) at this instant, and nothing
    /// came back.
    Probation(Instant),
    /// More than one datagram from its client, or any from the target.
    Regular,
}

/// A client mapping.
#[derive(Debug)]
struct Client {
    /// Connected to the target.
    upstream: MarkingSocket,
    last_active: Instant,
    stage: Stage,
}

impl Client {
    fn expired(&self, now: Instant, limits: &ClientLimits) -> bool {
        let idle = now.saturating_duration_since(self.last_active) >= limits.idle_timeout;
        let unanswered = match self.stage {
            Stage::Probation(since) => now.saturating_duration_since(since) >= limits.probation,
            Stage::InFlight | Stage::Regular => false,
        };
        idle || unanswered
    }
}

/// The client table.
#[derive(Debug)]
pub(super) struct Nat {
    target: SocketAddr,
    /// Where upstream sockets bind: loopback for a loopback target, otherwise unspecified, of the
    /// target's family.
    bind: SocketAddr,
    limits: ClientLimits,
    clients: HashMap<SocketAddr, Client>,
    /// Mappings per network, always equal to a count of `clients` by prefix.
    share: PrefixShare,
    changed: bool,
    /// The last scan for expired mappings, periodic or made by a refused newcomer.
    last_sweep: Option<Instant>,
}

impl Nat {
    pub(super) fn new(target: SocketAddr, limits: ClientLimits) -> Self {
        let ip = match (target.ip(), target.ip().is_loopback()) {
            (IpAddr::V4(_), true) => IpAddr::V4(Ipv4Addr::LOCALHOST),
            (IpAddr::V4(_), false) => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
            (IpAddr::V6(_), true) => IpAddr::V6(Ipv6Addr::LOCALHOST),
            (IpAddr::V6(_), false) => IpAddr::V6(Ipv6Addr::UNSPECIFIED),
        };
        Nat {
            target,
            bind: SocketAddr::new(ip, 0),
            limits,
            clients: HashMap::new(),
            share: PrefixShare::new(limits.max_share, limits.max_clients),
            changed: false,
            last_sweep: None,
        }
    }

    /// Mappings held.
    pub(super) fn len(&self) -> usize {
        self.clients.len()
    }

    /// How often the worker should call [`Nat::expire`]: every second, or every half probation
    /// if that is shorter (but not more often than every 10 ms).
    pub(super) fn scan_every(&self) -> Duration {
        (self.limits.probation / 2).clamp(MIN_EXPIRY_SCAN, EXPIRY_SCAN)
    }

    /// A datagram from `client` at `now`: refreshes its mapping (ending its probation), or opens
    /// one if the client's network is within its share and the table has room, once expired
    /// mappings are gone.
    pub(super) fn map(&mut self, client: SocketAddr, now: Instant) -> Result<(), Refusal> {
        if let Some(c) = self.clients.get_mut(&client) {
            c.last_active = now;
            c.stage = Stage::Regular;
            return Ok(());
        }
        let ip = client.ip();
        if self.refusal(ip).is_some() && self.may_sweep(now) {
            self.expire(now);
        }
        if let Some(refused) = self.refusal(ip) {
            return Err(refused);
        }
        let socket = self.open_upstream().map_err(|_| Refusal::NoSocket)?;
        self.clients.insert(
            client,
            Client {
                upstream: MarkingSocket::new(socket),
                last_active: now,
                stage: Stage::InFlight,
            },
        );
        self.share.add(ip);
        self.changed = true;
        Ok(())
    }

    /// Why a new client at `ip` would be refused now: its network's share before a full table.
    fn refusal(&self, ip: IpAddr) -> Option<Refusal> {
        if !self.share.admits(ip) {
            Some(Refusal::PrefixShare)
        } else if self.clients.len() >= self.limits.max_clients {
            Some(Refusal::TableFull)
        } else {
            None
        }
    }

    fn may_sweep(&self, now: Instant) -> bool {
        self.last_sweep
            .is_none_or(|t| now.saturating_duration_since(t) >= SWEEP_GAP)
    }

    /// A datagram of `client` left the relay for the target, or was dropped on the way, at
    /// `now`: if it was the mapping's only one, its probation starts.
    pub(super) fn settled(&mut self, client: SocketAddr, now: Instant) {
        if let Some(c) = self.clients.get_mut(&client) {
            if c.stage == Stage::InFlight {
                c.stage = Stage::Probation(now);
            }
        }
    }

    /// Traffic from the target for `client`: its mapping stays alive and is off probation.
    pub(super) fn answered(&mut self, client: SocketAddr, now: Instant) {
        if let Some(c) = self.clients.get_mut(&client) {
            c.last_active = now;
            c.stage = Stage::Regular;
        }
    }

    /// The upstream socket of `client`, if mapped.
    pub(super) fn upstream(&mut self, client: SocketAddr) -> Option<&mut MarkingSocket> {
        self.clients.get_mut(&client).map(|c| &mut c.upstream)
    }

    /// Removes (and closes the sockets of) mappings whose probation is over or that have been
    /// idle for the idle timeout.
    pub(super) fn expire(&mut self, now: Instant) {
        self.last_sweep = Some(now);
        let before = self.clients.len();
        let (limits, share) = (&self.limits, &mut self.share);
        self.clients.retain(|addr, c| {
            let expired = c.expired(now, limits);
            if expired {
                share.remove(addr.ip());
            }
            !expired
        });
        self.changed |= self.clients.len() != before;
    }

    /// Whether mappings were added or removed since the last call.
    pub(super) fn take_changed(&mut self) -> bool {
        std::mem::take(&mut self.changed)
    }

    /// Every client and its upstream socket's descriptor.
    pub(super) fn sockets(&self) -> impl Iterator<Item = (SocketAddr, RawFd)> + '_ {
        self.clients
            .iter()
            .map(|(addr, c)| (*addr, c.upstream.socket().as_raw_fd()))
    }

    /// A new upstream socket, connected to the target.
    fn open_upstream(&self) -> io::Result<UdpSocket> {
        let socket = UdpSocket::bind(self.bind)?;
        socket.connect(self.target)?;
        prepare_socket(&socket)?;
        Ok(socket)
    }
}

#[cfg(test)]
mod tests {
    //! The table with synthetic instants (its sockets are real, on loopback, but nothing is sent).

    use super::*;

    const SECOND: Duration = Duration::from_secs(1);

    fn addr(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    fn nat(max_clients: usize, max_share: f64) -> Nat {
        let limits = ClientLimits {
            max_clients,
            max_share,
            idle_timeout: 60 * SECOND,
            probation: 2 * SECOND,
        };
        Nat::new(addr("127.0.0.1:9"), limits)
    }

    /// The share's counts are the table's, prefix by prefix.
    fn assert_counts_exact(nat: &Nat) {
        let mut by_ip: HashMap<acp_core::prefix::Prefix, usize> = HashMap::new();
        for a in nat.clients.keys() {
            *by_ip
                .entry(acp_core::prefix::Prefix::of(a.ip()))
                .or_default() += 1;
        }
        assert_eq!(nat.share.prefixes(), by_ip.len());
        for a in nat.clients.keys() {
            let prefix = acp_core::prefix::Prefix::of(a.ip());
            assert_eq!(nat.share.held(a.ip()), by_ip[&prefix], "{a}");
        }
    }

    #[test]
    fn one_network_holds_at_most_its_share() {
        let t = Instant::now();
        let mut nat = nat(8, 0.25);
        for port in 1..=2 {
            let host = SocketAddr::new("10.0.0.1".parse().unwrap(), port);
            assert_eq!(nat.map(host, t), Ok(()));
        }
        assert_eq!(nat.map(addr("10.0.0.1:3"), t), Err(Refusal::PrefixShare));
        assert_eq!(nat.map(addr("10.0.0.200:1"), t), Err(Refusal::PrefixShare));
        assert_eq!(nat.map(addr("10.0.0.1:1"), t), Ok(()), "a known client");
        assert_eq!(nat.map(addr("10.0.1.1:1"), t), Ok(()), "another /24");
        assert_eq!(nat.map(addr("[2001:db8:1::1]:1"), t), Ok(()));
        assert_eq!(nat.map(addr("[2001:db8:1:2::1]:1"), t), Ok(()));
        assert_eq!(
            nat.map(addr("[2001:db8:1:3::1]:1"), t),
            Err(Refusal::PrefixShare),
            "same /48"
        );
        assert_eq!(nat.len(), 5);
        assert_counts_exact(&nat);
    }

    #[test]
    fn a_full_table_refuses_newcomers_until_a_mapping_expires() {
        let t = Instant::now();
        let mut nat = nat(3, 1.0);
        for i in 1..=3 {
            assert_eq!(nat.map(addr(&format!("10.0.{i}.1:1")), t), Ok(()));
            nat.answered(addr(&format!("10.0.{i}.1:1")), t);
        }
        assert_eq!(nat.map(addr("10.0.9.1:1"), t), Err(Refusal::TableFull));
        // Established clients that keep talking are never displaced.
        for s in 1..=120 {
            let now = t + s * SECOND;
            nat.answered(addr("10.0.1.1:1"), now);
            assert_eq!(nat.map(addr("10.0.2.1:1"), now), Ok(()));
            if s < 60 {
                assert_eq!(nat.map(addr("10.0.9.1:1"), now), Err(Refusal::TableFull));
            }
        }
        // By now 10.0.3.1 has been idle for 60 s: the next newcomer sweeps it out.
        assert_eq!(nat.map(addr("10.0.9.1:1"), t + 121 * SECOND), Ok(()));
        assert!(nat.upstream(addr("10.0.3.1:1")).is_none());
        assert!(nat.upstream(addr("10.0.1.1:1")).is_some());
        assert!(nat.upstream(addr("10.0.2.1:1")).is_some());
        assert_counts_exact(&nat);
    }

    #[test]
    fn one_shot_clients_expire_after_probation_counted_from_leaving() {
        let t = Instant::now();
        let mut nat = nat(4, 1.0);
        let regular = addr("10.1.0.1:5000");
        nat.map(regular, t).unwrap();
        nat.settled(regular, t);
        nat.answered(regular, t + SECOND / 10);
        let one_shots: Vec<SocketAddr> = (1..=3).map(|i| addr(&format!("10.2.{i}.9:7"))).collect();
        for a in &one_shots {
            nat.map(*a, t).unwrap();
        }
        // The first left the relay at once, the second after 10 s in a slow queue, the third is
        // still inside the emulated path.
        nat.settled(one_shots[0], t);
        nat.settled(one_shots[1], t + 10 * SECOND);
        nat.expire(t + 5 * SECOND);
        assert!(nat.upstream(one_shots[0]).is_none(), "probation over");
        assert_eq!(nat.len(), 3);
        nat.expire(t + 11 * SECOND);
        assert_eq!(nat.len(), 3, "probation runs from leaving");
        nat.expire(t + 12 * SECOND);
        assert!(nat.upstream(one_shots[1]).is_none());
        assert!(nat.upstream(one_shots[2]).is_some(), "in flight");
        // Without probation, the idle timeout still applies.
        nat.answered(regular, t + 59 * SECOND);
        nat.expire(t + 60 * SECOND);
        assert!(nat.upstream(one_shots[2]).is_none());
        assert!(nat.upstream(regular).is_some());
        assert_eq!(nat.len(), 1);
        assert_counts_exact(&nat);
    }

    #[test]
    fn a_second_datagram_or_an_answer_ends_probation() {
        let t = Instant::now();
        let mut nat = nat(4, 1.0);
        let (twice, answered) = (addr("10.3.0.1:1"), addr("10.4.0.1:1"));
        for a in [twice, answered] {
            nat.map(a, t).unwrap();
            nat.settled(a, t);
        }
        nat.map(twice, t + SECOND).unwrap();
        nat.answered(answered, t + SECOND);
        nat.settled(twice, t + SECOND);
        nat.expire(t + 30 * SECOND);
        assert_eq!(nat.len(), 2);
        nat.expire(t + 61 * SECOND);
        assert_eq!(nat.len(), 0);
        assert_counts_exact(&nat);
    }

    #[test]
    fn refused_newcomers_sweep_at_most_once_per_gap() {
        let t = Instant::now();
        let mut nat = nat(2, 1.0);
        let (one_shot, newcomer) = (addr("10.0.0.1:1"), addr("10.0.2.1:1"));
        nat.map(one_shot, t).unwrap();
        nat.map(addr("10.0.1.1:1"), t).unwrap();
        nat.settled(one_shot, t);
        // Just before the probation ends, a refused newcomer sweeps for nothing; just after it,
        // but within the gap, the next one does not sweep.
        let before = t + 2 * SECOND - SWEEP_GAP / 2;
        assert_eq!(nat.map(newcomer, before), Err(Refusal::TableFull));
        assert_eq!(nat.map(newcomer, t + 2 * SECOND), Err(Refusal::TableFull));
        assert_eq!(nat.len(), 2, "no sweep within the gap");
        assert_eq!(nat.map(newcomer, before + SWEEP_GAP), Ok(()));
        assert!(nat.upstream(one_shot).is_none());
        assert_counts_exact(&nat);
    }
}
