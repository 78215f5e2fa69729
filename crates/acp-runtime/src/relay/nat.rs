//! The relay's client table: one upstream socket per client, connected to the target, as through
//! a NAT. Bounded by [`MAX_CLIENTS`]; a mapping idle for [`CLIENT_IDLE_TIMEOUT`] is removed.

use std::collections::HashMap;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket};
use std::os::fd::{AsRawFd, RawFd};
use std::time::Instant;

use crate::net::MarkingSocket;

use super::{prepare_socket, CLIENT_IDLE_TIMEOUT, MAX_CLIENTS};

/// A client mapping.
#[derive(Debug)]
struct Client {
    /// Connected to the target.
    upstream: MarkingSocket,
    last_active: Instant,
}

/// The client table.
#[derive(Debug)]
pub(super) struct Nat {
    target: SocketAddr,
    /// Where upstream sockets bind: loopback for a loopback target, otherwise unspecified, of the
    /// target's family.
    bind: SocketAddr,
    clients: HashMap<SocketAddr, Client>,
    changed: bool,
}

impl Nat {
    pub(super) fn new(target: SocketAddr) -> Self {
        let ip = match (target.ip(), target.ip().is_loopback()) {
            (IpAddr::V4(_), true) => IpAddr::V4(Ipv4Addr::LOCALHOST),
            (IpAddr::V4(_), false) => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
            (IpAddr::V6(_), true) => IpAddr::V6(Ipv6Addr::LOCALHOST),
            (IpAddr::V6(_), false) => IpAddr::V6(Ipv6Addr::UNSPECIFIED),
        };
        Nat {
            target,
            bind: SocketAddr::new(ip, 0),
            clients: HashMap::new(),
            changed: false,
        }
    }

    /// Mappings held.
    pub(super) fn len(&self) -> usize {
        self.clients.len()
    }

    /// Refreshes `client`'s mapping, or opens one (expiring idle mappings first if the table is
    /// full). False if there is no room or the socket could not be opened.
    pub(super) fn map(&mut self, client: SocketAddr, now: Instant) -> bool {
        if let Some(c) = self.clients.get_mut(&client) {
            c.last_active = now;
            return true;
        }
        if self.clients.len() >= MAX_CLIENTS {
            self.expire(now);
        }
        if self.clients.len() >= MAX_CLIENTS {
            return false;
        }
        let Ok(socket) = self.open_upstream() else {
            return false;
        };
        self.clients.insert(
            client,
            Client {
                upstream: MarkingSocket::new(socket),
                last_active: now,
            },
        );
        self.changed = true;
        true
    }

    /// Traffic from the target for `client`: its mapping stays alive.
    pub(super) fn touch(&mut self, client: SocketAddr, now: Instant) {
        if let Some(c) = self.clients.get_mut(&client) {
            c.last_active = now;
        }
    }

    /// The upstream socket of `client`, if mapped.
    pub(super) fn upstream(&mut self, client: SocketAddr) -> Option<&mut MarkingSocket> {
        self.clients.get_mut(&client).map(|c| &mut c.upstream)
    }

    /// Removes mappings idle for [`CLIENT_IDLE_TIMEOUT`].
    pub(super) fn expire(&mut self, now: Instant) {
        let before = self.clients.len();
        self.clients
            .retain(|_, c| now.saturating_duration_since(c.last_active) < CLIENT_IDLE_TIMEOUT);
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
