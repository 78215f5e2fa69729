//! A userspace UDP path emulator: the relay.
//!
//! A [`Relay`] sits between UDP clients and one target and makes the path between them behave like
//! the network model of `acp-netmodel` — the same code the simulator runs: rate or Mahimahi
//! delivery trace, a drop-tail or strict-priority queue, deterministic or exponential service,
//! random loss (Bernoulli or Gilbert–Elliott), propagation delay with jitter, schedules of rate,
//! delay and loss, blackhole windows, and Poisson cross traffic competing for the bottleneck.
//!
//! ```text
//!  client A ─┐                   ┌─ upstream socket A ─┐
//!  client B ─┼─► listen socket ──┼─ upstream socket B ─┼─► target
//!            │      ("client→target" path: link + cross traffic)
//!            └◄── listen socket ◄┴── ("target→client" path, same kind, own state and streams)
//! ```
//!
//! Modules: [`path`] is one direction's model (pure, driven with synthetic times in its tests),
//! `nat` the client table and `limits` its bounds ([`ClientLimits`]), `worker` the thread that
//! moves datagrams between sockets and paths.
//!
//! # Model
//!
//! Each direction is a [`PathModel`] built from its [`PathConfig`]: an `acp_netmodel::Link` named
//! [`TO_TARGET`] or [`TO_CLIENT`] and, if `cross_bps > 0`, a cross flow named `cross NAME`. A
//! datagram is a packet of its UDP payload plus [`HEADER_BYTES`] (28: the IPv4 and UDP headers)
//! on the link; the same 28 bytes are counted for IPv6 (whose headers take 48) so that a link
//! behaves the same whatever family carries it. Its DSCP is read from the IP header (`IP_TOS`,
//! `IPV6_TCLASS`) and decides its class under strict priority; the relay forwards it with the same
//! marking, so a chain of relays keeps it. All randomness comes from one seed through named
//! streams ([`acp_netmodel::Streams`]): the same seed and names give the same loss, jitter,
//! service times and cross traffic as a simulated link of the same name.
//!
//! Link time is virtual: the model is fed the instant each datagram was read and replays service
//! ends and cross arrivals at their exact instants whenever the thread looks, so departure times
//! depend only on arrival times and the seed, and long-run rates are exact.
//!
//! # NAT
//!
//! For every distinct client address the relay opens an upstream UDP socket (an ephemeral port on
//! the target's address family, loopback if the target is loopback, otherwise unspecified),
//! connected to the target. The client's datagrams go out from that socket; what the target sends
//! back to it goes to that client from the listen socket. The table is bounded by
//! [`ClientLimits`] (defaults in brackets), so that no host can shut other clients out or use up
//! the relay's file descriptors:
//!
//! - it holds at most `max_clients` mappings ([`MAX_CLIENTS`]);
//! - the clients of one network, IPv4 /24 or IPv6 /48, hold at most `max_share` of it
//!   ([`MAX_CLIENT_SHARE`], 1,024 of 4,096), so one host with many ports, or its neighbours,
//!   cannot fill it;
//! - a mapping that has carried a single datagram from its client and nothing back from the
//!   target is on probation: it expires `probation` ([`CLIENT_PROBATION`]) after that datagram
//!   left the relay, so one datagram from a spoofed address holds a slot and a socket only
//!   briefly. Any further datagram from the client, or any from the target, ends the probation;
//! - other mappings expire after `idle_timeout` ([`CLIENT_IDLE_TIMEOUT`]) without traffic in
//!   either direction.
//!
//! Expired mappings are looked for every second (every half probation if that is shorter), and
//! when a newcomer is refused (at most every 50 ms, so a flood of newcomers does not make every
//! datagram scan the table). A mapping that keeps carrying traffic is never displaced. A datagram
//! from a new client that cannot get a mapping is dropped and counted in
//! [`DirectionStats::dropped_unmapped`] and, by reason, in [`RelayStats::refused`]: the table is
//! full, the client's network holds its share (reported even if the table is full too), or no
//! socket could be opened.
//!
//! # Loops
//!
//! The relay forwards datagrams as a router does: each leaves with the hop limit (IPv4 TTL,
//! IPv6 hop limit) it arrived with, less one, and one that arrives with 1 or less is dropped and
//! counted ([`DirectionStats::dropped_hop_limit`]). Relays pointed at each other (or at
//! themselves) therefore pass a datagram around at most as many times as its sender's hop limit
//! (64 on Linux by default) instead of forever. The limit is the IP header's own field, so the
//! datagrams stay opaque, and nothing legitimate is dropped that a chain of routers would have
//! delivered: only a path of more relays and routers than the sender's hop limit. The hop limit
//! of a datagram the kernel does not report (IPv4 traffic to an IPv6 socket on an old kernel)
//! is left at the system's default.
//!
//! # Timing
//!
//! One thread serves both directions. It blocks in `ppoll` on all sockets with a timeout that ends
//! [`SPIN_WINDOW`] before the next send, then finishes the wait with [`clock::wait_until`]; its
//! timer slack is tightened with [`clock::tighten_timer_slack`]. Sends are the next events of a
//! link with a real packet inside ([`PathModel::next_send`]); a link carrying only cross traffic
//! wakes it through `ppoll` alone. When nothing is pending it blocks without a deadline but
//! wakes at least every 50 ms; [`Relay::stop`] (or dropping the handle) wakes it at once through
//! a socket pair. Arrivals are timestamped when read: the sockets are checked
//! (without blocking) before every spin, so a datagram that arrives while the thread is spinning
//! before a send is stamped at most [`SPIN_WINDOW`] late.
//!
//! Nothing received can make the relay panic; send and receive errors (such as `ECONNREFUSED` after
//! an ICMP port unreachable) are counted in [`RelayStats`] and otherwise ignored.

mod limits;
mod nat;
pub mod path;
mod worker;

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::ops::RangeInclusive;
use std::os::unix::net::UnixDatagram;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use acp_netmodel::{LinkConfig, QueueLimit, Streams};

use crate::clock;
use crate::net;

pub use limits::ClientLimits;
pub use path::{PathCounters, PathModel};

/// Header bytes added to every UDP payload to get its size on the link (IPv4 20 + UDP 8), for
/// both address families.
pub const HEADER_BYTES: usize = 28;

/// Size on the wire of a cross-traffic packet (headers included).
pub const CROSS_PACKET_BYTES: u32 = 1000;

/// Default of [`ClientLimits::max_clients`]: most client mappings held at once; datagrams from
/// further new clients are dropped (counted in [`DirectionStats::dropped_unmapped`] and
/// [`Refusals::table_full`]) until a mapping expires.
pub const MAX_CLIENTS: usize = 4096;

/// Default of [`ClientLimits::max_share`]: the clients of one network (IPv4 /24, IPv6 /48) hold
/// at most this share of the table.
pub const MAX_CLIENT_SHARE: f64 = 0.25;

/// Default of [`ClientLimits::idle_timeout`]: a client mapping without traffic in either
/// direction for this long is removed.
pub const CLIENT_IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// Default of [`ClientLimits::probation`]: a mapping that has carried a single datagram from its
/// client and nothing back is removed this long after the datagram left the relay.
pub const CLIENT_PROBATION: Duration = Duration::from_secs(2);

/// How long before a send deadline the relay stops polling its sockets and finishes the wait
/// with [`clock::wait_until`]. It covers the wake-up latency of `ppoll`.
pub const SPIN_WINDOW: Duration = Duration::from_micros(250);

/// Name of the link from clients to the target (also the label of its random streams).
pub const TO_TARGET: &str = "client→target";

/// Name of the link from the target back to clients.
pub const TO_CLIENT: &str = "target→client";

/// Largest accepted cross-traffic rate (bits per second).
const MAX_CROSS_BPS: f64 = 1e10;

/// Accepted link rates (bits per second), whether constant or set by a schedule step: from
/// 1 kbit/s, at which a full-size datagram already holds the link for 12 s, to 100 Gbit/s.
pub const LINK_RATES_BPS: RangeInclusive<f64> = 1e3..=1e11;

/// One direction of the emulated path.
#[derive(Debug, Clone, PartialEq)]
pub struct PathConfig {
    /// The link: rate or trace, delay and jitter, queue, service, loss, schedule, outages.
    pub link: LinkConfig,
    /// Mean rate of Poisson cross traffic in bits per second (0 for none, at most 10 Gbit/s), in
    /// packets of [`CROSS_PACKET_BYTES`] at DSCP 0. Being FIFO, a drop-tail queue shares a
    /// saturated link in proportion to what is offered: a flow offering `f` bit/s against cross
    /// traffic of `c` gets about `rate · f / (f + c)`, not `rate − c`.
    pub cross_bps: f64,
}

impl PathConfig {
    /// A drop-tail link of `queue_packets` (counting the packet in service) with no loss, no
    /// jitter and no cross traffic.
    pub fn lossless(rate_bps: f64, delay: Duration, queue_packets: usize) -> Self {
        PathConfig {
            link: LinkConfig::new(rate_bps, delay, QueueLimit::Packets(queue_packets)),
            cross_bps: 0.0,
        }
    }

    /// Checks the link ([`LinkConfig::validate`]), its rates ([`LINK_RATES_BPS`]; a trace's
    /// are what it is) and the cross-traffic rate.
    pub fn validate(&self) -> Result<(), String> {
        self.link.validate()?;
        let constant = self.link.trace.is_none().then_some(self.link.rate_bps);
        let steps = self.link.schedule.iter().flat_map(|s| &s.steps);
        for rate in constant.into_iter().chain(steps.filter_map(|s| s.rate_bps)) {
            if !LINK_RATES_BPS.contains(&rate) {
                return Err(format!(
                    "rate {rate} bit/s must be in [{}, {}]",
                    LINK_RATES_BPS.start(),
                    LINK_RATES_BPS.end()
                ));
            }
        }
        if !(0.0..=MAX_CROSS_BPS).contains(&self.cross_bps) {
            return Err(format!(
                "cross traffic {} bit/s must be in [0, {MAX_CROSS_BPS}]",
                self.cross_bps
            ));
        }
        Ok(())
    }
}

/// Where the relay listens, where it forwards to, and the path it emulates.
#[derive(Debug, Clone, PartialEq)]
pub struct RelayConfig {
    /// Address clients send to (port 0 picks a free port; see [`Relay::local_addr`]).
    pub listen: SocketAddr,
    /// Where client datagrams are forwarded.
    pub target: SocketAddr,
    /// From clients to the target.
    pub to_target: PathConfig,
    /// From the target back to clients.
    pub to_client: PathConfig,
    /// Seed of all randomness: equal seeds give equal draws.
    pub seed: u64,
    /// Bounds of the client table.
    pub clients: ClientLimits,
}

impl RelayConfig {
    /// The same path model in both directions (each with its own state and random streams).
    pub fn symmetric(listen: SocketAddr, target: SocketAddr, path: PathConfig, seed: u64) -> Self {
        RelayConfig {
            listen,
            target,
            to_target: path.clone(),
            to_client: path,
            seed,
            clients: ClientLimits::default(),
        }
    }
}

/// Counters of one direction. Every datagram received ends up in exactly one of `forwarded`,
/// `dropped_*` or `send_errors`, or is still in flight.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DirectionStats {
    /// Datagrams read from the sockets.
    pub received: u64,
    /// Datagrams sent on after crossing the link.
    pub forwarded: u64,
    /// Dropped because the queue was full.
    pub dropped_queue: u64,
    /// Dropped by random loss.
    pub dropped_loss: u64,
    /// Dropped because the blackhole (switch or configured window) was on when they arrived or
    /// were due to leave.
    pub dropped_blackhole: u64,
    /// Dropped for want of a client mapping: refused one (see [`RelayStats::refused`]), or the
    /// mapping expired while the datagram was in flight.
    pub dropped_unmapped: u64,
    /// Dropped because they arrived with a hop limit (IPv4 TTL) of 1 or less: they have crossed
    /// as many hops as their sender allowed, as in a forwarding loop (see "Loops").
    pub dropped_hop_limit: u64,
    /// Sends that failed (the datagram is lost).
    pub send_errors: u64,
    /// UDP payload bytes received.
    pub bytes_received: u64,
    /// UDP payload bytes forwarded.
    pub bytes_forwarded: u64,
    /// Cross-traffic packets offered to this direction's link.
    pub cross_packets: u64,
    /// Cross-traffic packets the link dropped (queue full, loss or blackhole).
    pub cross_dropped: u64,
}

/// A snapshot of the relay's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RelayStats {
    /// From clients to the target.
    pub to_target: DirectionStats,
    /// From the target back to clients.
    pub to_client: DirectionStats,
    /// Client mappings currently held.
    pub clients: usize,
    /// Failed receives and polls (for example `ECONNREFUSED` reported after an ICMP port
    /// unreachable); counted and ignored.
    pub recv_errors: u64,
    /// Datagrams from new clients that got no mapping, by reason.
    pub refused: Refusals,
}

/// Datagrams from clients without a mapping that could not get one, by reason (each also counted
/// in the client→target [`DirectionStats::dropped_unmapped`]). A refused client that keeps
/// sending is counted once per datagram.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Refusals {
    /// The table held [`ClientLimits::max_clients`] mappings, none of them expired.
    pub table_full: u64,
    /// The client's network (IPv4 /24, IPv6 /48) held its share of the table (counted here even
    /// if the table was full too).
    pub prefix_share: u64,
    /// No upstream socket could be opened (for example for want of file descriptors).
    pub no_socket: u64,
}

impl Refusals {
    /// All refusals.
    pub fn total(&self) -> u64 {
        self.table_full + self.prefix_share + self.no_socket
    }
}

/// Live counters of one direction, shared with the handle.
#[derive(Debug, Default)]
struct Counters {
    received: AtomicU64,
    forwarded: AtomicU64,
    dropped_queue: AtomicU64,
    dropped_loss: AtomicU64,
    dropped_blackhole: AtomicU64,
    dropped_unmapped: AtomicU64,
    dropped_hop_limit: AtomicU64,
    send_errors: AtomicU64,
    bytes_received: AtomicU64,
    bytes_forwarded: AtomicU64,
    cross_packets: AtomicU64,
    cross_dropped: AtomicU64,
}

fn bump(counter: &AtomicU64, n: u64) {
    counter.fetch_add(n, Ordering::Relaxed);
}

impl Counters {
    fn snapshot(&self) -> DirectionStats {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        DirectionStats {
            received: get(&self.received),
            forwarded: get(&self.forwarded),
            dropped_queue: get(&self.dropped_queue),
            dropped_loss: get(&self.dropped_loss),
            dropped_blackhole: get(&self.dropped_blackhole),
            dropped_unmapped: get(&self.dropped_unmapped),
            dropped_hop_limit: get(&self.dropped_hop_limit),
            send_errors: get(&self.send_errors),
            bytes_received: get(&self.bytes_received),
            bytes_forwarded: get(&self.bytes_forwarded),
            cross_packets: get(&self.cross_packets),
            cross_dropped: get(&self.cross_dropped),
        }
    }

    /// Adds what a path model counted since the last call.
    fn add(&self, c: PathCounters) {
        bump(&self.dropped_loss, c.dropped_loss);
        bump(&self.dropped_queue, c.dropped_queue);
        bump(&self.dropped_blackhole, c.dropped_outage);
        bump(&self.cross_packets, c.cross_packets);
        bump(&self.cross_dropped, c.cross_dropped);
    }
}

/// State shared between the handle and the relay thread.
#[derive(Debug, Default)]
struct Shared {
    stop: AtomicBool,
    blackhole: AtomicBool,
    to_target: Counters,
    to_client: Counters,
    clients: AtomicUsize,
    recv_errors: AtomicU64,
    refused_full: AtomicU64,
    refused_share: AtomicU64,
    refused_socket: AtomicU64,
}

/// A running relay. Dropping it (or calling [`Relay::stop`]) stops its thread and closes its
/// sockets.
///
/// ```no_run
/// use std::time::Duration;
/// use acp_runtime::relay::{PathConfig, Relay, RelayConfig};
///
/// let path = PathConfig::lossless(2e6, Duration::from_millis(20), 50);
/// let relay = Relay::start(RelayConfig::symmetric(
///     "127.0.0.1:0".parse().unwrap(),
///     "127.0.0.1:9000".parse().unwrap(),
///     path,
///     1,
/// ))?;
/// println!("send to {}", relay.local_addr());
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug)]
pub struct Relay {
    local_addr: SocketAddr,
    started: Instant,
    shared: Arc<Shared>,
    waker: UnixDatagram,
    thread: Option<JoinHandle<()>>,
}

impl Relay {
    /// Binds the listen socket, starts the relay thread and returns once bound; the paths'
    /// schedules and blackhole windows count from now. Fails with `InvalidInput` if a path's
    /// configuration is out of range (the message names the direction) or the client limits are
    /// ([`ClientLimits::validate`]), or with the error of binding.
    pub fn start(cfg: RelayConfig) -> io::Result<Relay> {
        for (name, path) in [(TO_TARGET, &cfg.to_target), (TO_CLIENT, &cfg.to_client)] {
            path.validate().map_err(|msg| {
                io::Error::new(io::ErrorKind::InvalidInput, format!("{name}: {msg}"))
            })?;
        }
        cfg.clients
            .validate()
            .map_err(|msg| io::Error::new(io::ErrorKind::InvalidInput, msg))?;
        let listen = UdpSocket::bind(cfg.listen)?;
        prepare_socket(&listen)?;
        let local_addr = listen.local_addr()?;
        let (waker, wake_rx) = UnixDatagram::pair()?;
        waker.set_nonblocking(true)?;
        wake_rx.set_nonblocking(true)?;

        let shared = Arc::new(Shared::default());
        let now = Instant::now();
        let start = clock::to_time(now);
        let streams = Streams::new(cfg.seed);
        let to_target = PathModel::new(&cfg.to_target, &streams, TO_TARGET, start);
        let to_client = PathModel::new(&cfg.to_client, &streams, TO_CLIENT, start);
        let worker = worker::Worker::new(
            Arc::clone(&shared),
            listen,
            wake_rx,
            nat::Nat::new(cfg.target, cfg.clients),
            [to_target, to_client],
            now,
        );
        let thread = std::thread::Builder::new()
            .name("acp-relay".to_string())
            .spawn(move || worker.run())?;
        tracing::debug!(listen = %local_addr, target = %cfg.target, "relay started");
        Ok(Relay {
            local_addr,
            started: now,
            shared,
            waker,
            thread: Some(thread),
        })
    }

    /// The address the relay listens on (with the actual port if port 0 was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The instant the paths started: their schedules, traces and blackhole windows count from
    /// it.
    pub fn started(&self) -> Instant {
        self.started
    }

    /// While on, every datagram in either direction is dropped, both on arrival and when a
    /// datagram already in flight is due to leave (on top of any configured blackhole windows).
    /// Counted in [`DirectionStats::dropped_blackhole`].
    pub fn set_blackhole(&self, on: bool) {
        self.shared.blackhole.store(on, Ordering::Relaxed);
    }

    /// A snapshot of the counters.
    pub fn stats(&self) -> RelayStats {
        RelayStats {
            to_target: self.shared.to_target.snapshot(),
            to_client: self.shared.to_client.snapshot(),
            clients: self.shared.clients.load(Ordering::Relaxed),
            recv_errors: self.shared.recv_errors.load(Ordering::Relaxed),
            refused: Refusals {
                table_full: self.shared.refused_full.load(Ordering::Relaxed),
                prefix_share: self.shared.refused_share.load(Ordering::Relaxed),
                no_socket: self.shared.refused_socket.load(Ordering::Relaxed),
            },
        }
    }

    /// Stops the relay thread (it exits within microseconds) and closes the sockets. Datagrams
    /// still in flight are discarded.
    pub fn stop(self) {
        drop(self);
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        // If the wake-up cannot be sent, the thread still notices within its idle poll.
        let _ = self.waker.send(&[0]);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Readies a relay socket: non-blocking, large buffers (best effort, so bursts are not lost in
/// the kernel), and the DSCP and hop limit of each received datagram reported.
fn prepare_socket(socket: &UdpSocket) -> io::Result<()> {
    socket.set_nonblocking(true)?;
    net::grow_buffers(socket)?;
    net::receive_dscp(socket)?;
    net::receive_hop_limit(socket)
}
