//! The relay thread: reads datagrams (with their DSCP) from the listen and upstream sockets,
//! feeds them to the two path models with the instant they were read, and sends what leaves the
//! models on time — blocking in `ppoll` until [`SPIN_WINDOW`] before the next send, then spinning.

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixDatagram;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use acp_netmodel::freshest::source_of;
use acp_netmodel::Time;

use crate::clock;
use crate::net::{poll_fds, recv_with_dscp, Marked, MarkingSocket};

use super::limits::Refusal;
use super::nat::Nat;
use super::path::earliest;
use super::{bump, Counters, PathModel, Shared, HEADER_BYTES, SPIN_WINDOW};

/// Longest block in `ppoll` when nothing is pending.
const IDLE_POLL: Duration = Duration::from_millis(50);

/// Receive buffer size: the largest UDP datagram.
const MAX_DATAGRAM: usize = 65_536;

/// Most datagrams read from one socket per wake, so a flood cannot delay due sends for long; the
/// rest are read on the next wake, which comes at once.
const DRAIN_LIMIT: usize = 256;

/// A datagram crossing the relay, with the client it belongs to.
#[derive(Debug)]
pub(super) struct Packet {
    data: Vec<u8>,
    client: SocketAddr,
    /// The hop limit to send it with: one less than it arrived with (`None`: not reported).
    hop_limit: Option<u8>,
}

/// The two directions, indexed.
const TO_TARGET: usize = 0;
const TO_CLIENT: usize = 1;

/// A socket found ready by poll.
#[derive(Debug, Clone, Copy)]
enum Ready {
    Waker,
    Listen,
    Upstream(SocketAddr),
}

/// The relay thread's state.
pub(super) struct Worker {
    shared: Arc<Shared>,
    listen: MarkingSocket,
    wake_rx: UnixDatagram,
    nat: Nat,
    /// Client→target, then target→client.
    paths: [PathModel<Packet>; 2],
    /// Poll set: waker, listen socket, then one upstream socket per entry of `fd_clients`.
    fds: Vec<libc::pollfd>,
    fd_clients: Vec<SocketAddr>,
    fds_stale: bool,
    ready: Vec<Ready>,
    buf: Vec<u8>,
    last_expiry: Instant,
}

impl Worker {
    pub(super) fn new(
        shared: Arc<Shared>,
        listen: UdpSocket,
        wake_rx: UnixDatagram,
        nat: Nat,
        paths: [PathModel<Packet>; 2],
        now: Instant,
    ) -> Self {
        Worker {
            shared,
            listen: MarkingSocket::new(listen),
            wake_rx,
            nat,
            paths,
            fds: Vec::new(),
            fd_clients: Vec::new(),
            fds_stale: true,
            ready: Vec::new(),
            buf: vec![0; MAX_DATAGRAM],
            last_expiry: now,
        }
    }

    pub(super) fn run(mut self) {
        clock::tighten_timer_slack();
        while !self.shared.stop.load(Ordering::Acquire) {
            let now = Instant::now();
            self.send_due(clock::to_time(now));
            if now.saturating_duration_since(self.last_expiry) >= self.nat.scan_every() {
                self.last_expiry = now;
                self.nat.expire(now);
                self.publish_clients();
            }
            self.wait();
        }
    }

    fn counters(&self, dir: usize) -> &Counters {
        if dir == TO_TARGET {
            &self.shared.to_target
        } else {
            &self.shared.to_client
        }
    }

    /// Applies the handle's blackhole switch to both paths.
    fn sync_blackhole(&mut self) {
        let down = self.shared.blackhole.load(Ordering::Relaxed);
        for path in &mut self.paths {
            path.set_down(down);
        }
    }

    /// Plays both paths up to `now` and sends what has left them.
    fn send_due(&mut self, now: Time) {
        self.sync_blackhole();
        for dir in [TO_TARGET, TO_CLIENT] {
            self.paths[dir].handle_timeout(now);
            while let Some(d) = self.paths[dir].poll_departure(now) {
                let (packet, dscp) = (d.parcel.item, d.parcel.dscp);
                let hops = packet.hop_limit;
                let sent = if dir == TO_TARGET {
                    let sent = self
                        .nat
                        .upstream(packet.client)
                        .map(|up| up.send(&packet.data, dscp, hops));
                    self.nat.settled(packet.client, clock::to_instant(now));
                    sent
                } else {
                    Some(self.listen.send_to(&packet.data, packet.client, dscp, hops))
                };
                let c = self.counters(dir);
                match sent {
                    None => bump(&c.dropped_unmapped, 1),
                    Some(Ok(_)) => {
                        bump(&c.forwarded, 1);
                        bump(&c.bytes_forwarded, packet.data.len() as u64);
                    }
                    Some(Err(e)) => {
                        tracing::debug!(direction = dir, error = %e, "relay cannot forward a datagram");
                        bump(&c.send_errors, 1);
                    }
                }
            }
            self.publish_path_counts(dir);
        }
    }

    fn publish_path_counts(&mut self, dir: usize) {
        let counts = self.paths[dir].take_counters();
        if counts != Default::default() {
            self.counters(dir).add(counts);
        }
    }

    fn publish_clients(&mut self) {
        if self.nat.take_changed() {
            self.fds_stale = true;
            self.shared.clients.store(self.nat.len(), Ordering::Relaxed);
        }
    }

    /// Blocks until the next event: in `ppoll` until [`SPIN_WINDOW`] before the next send (or the
    /// next change of a path, or [`IDLE_POLL`]), then in [`clock::wait_until`]. Reads whatever
    /// arrives meanwhile.
    fn wait(&mut self) {
        let now = Instant::now();
        let [a, b] = &self.paths;
        let send = earliest(a.next_send(), b.next_send()).map(clock::to_instant);
        let change = earliest(a.next_change(), b.next_change()).map(clock::to_instant);
        let mut wake = now + IDLE_POLL;
        if let Some(send) = send {
            match send.checked_sub(SPIN_WINDOW) {
                Some(poll_end) if poll_end > now => wake = wake.min(poll_end),
                _ => {
                    // Within the spin window. Read what has already arrived first, so that
                    // back-to-back sends cannot starve the sockets; if anything was read, go
                    // round again, as it may have brought an earlier deadline.
                    if !self.poll_and_drain(Duration::ZERO) {
                        clock::wait_until(send);
                    }
                    return;
                }
            }
        }
        if let Some(change) = change {
            wake = wake.min(change);
        }
        self.poll_and_drain(wake.saturating_duration_since(now));
    }

    /// Waits up to `timeout` for a socket to become readable and reads what is ready; true if
    /// anything was.
    fn poll_and_drain(&mut self, timeout: Duration) -> bool {
        self.rebuild_fds();
        for fd in &mut self.fds {
            fd.revents = 0;
        }
        match poll_fds(&mut self.fds, timeout) {
            Ok(0) => false,
            Ok(_) => {
                self.drain_ready();
                true
            }
            Err(e) => {
                tracing::warn!(error = %e, "relay cannot wait for its sockets");
                // Should not happen (EINTR is retried); avoid a hot loop if it persists.
                bump(&self.shared.recv_errors, 1);
                std::thread::sleep(Duration::from_millis(1));
                false
            }
        }
    }

    fn rebuild_fds(&mut self) {
        if !self.fds_stale {
            return;
        }
        let entry = |fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        self.fds.clear();
        self.fd_clients.clear();
        self.fds.push(entry(self.wake_rx.as_raw_fd()));
        self.fds.push(entry(self.listen.socket().as_raw_fd()));
        for (addr, fd) in self.nat.sockets() {
            self.fds.push(entry(fd));
            self.fd_clients.push(addr);
        }
        self.fds_stale = false;
    }

    fn drain_ready(&mut self) {
        self.sync_blackhole();
        let mut ready = std::mem::take(&mut self.ready);
        ready.clear();
        for (i, fd) in self.fds.iter().enumerate() {
            if fd.revents == 0 {
                continue;
            }
            ready.push(match i {
                0 => Ready::Waker,
                1 => Ready::Listen,
                _ => match self.fd_clients.get(i - 2) {
                    Some(addr) => Ready::Upstream(*addr),
                    None => continue,
                },
            });
        }
        for r in &ready {
            match *r {
                Ready::Waker => while self.wake_rx.recv(&mut self.buf).is_ok() {},
                Ready::Listen => self.drain(None),
                Ready::Upstream(client) => self.drain(Some(client)),
            }
        }
        self.ready = ready;
    }

    /// Reads datagrams from clients (`None`: the listen socket) or from the target on one
    /// client's upstream socket (connected, so the kernel accepts nothing else).
    fn drain(&mut self, upstream_of: Option<SocketAddr>) {
        for _ in 0..DRAIN_LIMIT {
            let socket = match upstream_of {
                None => self.listen.socket(),
                Some(client) => match self.nat.upstream(client) {
                    Some(up) => up.socket(),
                    None => return,
                },
            };
            match recv_with_dscp(socket, &mut self.buf) {
                Ok(d) => match (upstream_of, d.from) {
                    (None, Some(from)) => self.on_client_datagram(d, from),
                    (None, None) => bump(&self.shared.recv_errors, 1),
                    (Some(client), _) => self.on_target_datagram(d, client),
                },
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    tracing::debug!(error = %e, "relay cannot receive");
                    bump(&self.shared.recv_errors, 1);
                }
            }
        }
    }

    /// Offers the datagram in the receive buffer to path `dir`, stamped `now`; false if the path
    /// dropped it at once.
    fn offer(&mut self, dir: usize, d: Marked, client: SocketAddr, now: Instant) -> bool {
        let packet = Packet {
            data: self.buf[..d.len].to_vec(),
            client,
            hop_limit: d.hop_limit.map(|h| h - 1),
        };
        let bytes = u32::try_from(d.len + HEADER_BYTES).unwrap_or(u32::MAX);
        // Drops are counted by the path and published with its other counts.
        self.paths[dir]
            .arrive(
                clock::to_time(now),
                packet,
                bytes,
                d.dscp,
                source_of(client),
            )
            .is_ok()
    }

    /// Counts a datagram received in direction `dir`; false if it has no hop left (counted
    /// dropped: see "Loops" in the module documentation).
    fn count_received(&self, dir: usize, d: &Marked) -> bool {
        let c = self.counters(dir);
        bump(&c.received, 1);
        bump(&c.bytes_received, d.len as u64);
        let spent = d.hop_limit.is_some_and(|h| h <= 1);
        if spent {
            bump(&c.dropped_hop_limit, 1);
        }
        !spent
    }

    fn on_client_datagram(&mut self, d: Marked, from: SocketAddr) {
        let now = Instant::now();
        // A datagram out of hops opens no mapping.
        if !self.count_received(TO_TARGET, &d) {
            return;
        }
        // A datagram the blackhole drops opens no mapping.
        if !self.paths[TO_TARGET].is_down(clock::to_time(now)) {
            let mapped = self.nat.map(from, now);
            self.publish_clients();
            if let Err(refusal) = mapped {
                tracing::debug!(client = %from, reason = ?refusal, "relay refused a new client");
                let s = &self.shared;
                bump(&s.to_target.dropped_unmapped, 1);
                bump(
                    match refusal {
                        Refusal::TableFull => &s.refused_full,
                        Refusal::PrefixShare => &s.refused_share,
                        Refusal::NoSocket => &s.refused_socket,
                    },
                    1,
                );
                return;
            }
        }
        if !self.offer(TO_TARGET, d, from, now) {
            // Dropped on arrival (loss, full queue): a one-shot client's probation starts now.
            self.nat.settled(from, now);
        }
    }

    fn on_target_datagram(&mut self, d: Marked, client: SocketAddr) {
        let now = Instant::now();
        if !self.count_received(TO_CLIENT, &d) {
            return;
        }
        self.nat.answered(client, now);
        self.offer(TO_CLIENT, d, client, now);
    }
}
