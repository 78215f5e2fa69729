//! A userspace UDP path emulator: the relay.
//!
//! A [`Relay`] sits between UDP clients and one target and makes the path between them behave like
//! a bottleneck link: random loss, a drop-tail queue, serialisation at a fixed rate, a fixed
//! propagation delay and, optionally, Poisson cross traffic that competes for the bottleneck.
//!
//! ```text
//!  client A ─┐                   ┌─ upstream socket A ─┐
//!  client B ─┼─► listen socket ──┼─ upstream socket B ─┼─► target
//!            │    (to_target link: loss → queue → serialise → delay)
//!            └◄── listen socket ◄┴── (to_client link, same model, own state)
//! ```
//!
//! For every distinct client address the relay opens an upstream UDP socket (an ephemeral port on
//! the target's address family, loopback if the target is loopback, otherwise unspecified),
//! connected to the target. The client's datagrams go out from that socket; what the target sends
//! back to it goes to that client from the listen socket, as through a NAT. The mapping table is
//! bounded ([`MAX_CLIENTS`]) and entries expire after [`CLIENT_IDLE_TIMEOUT`] without traffic.
//!
//! # The link model
//!
//! Each direction has its own instance of the same model ([`LinkConfig`]), with its own state and
//! its own random streams derived from the seed:
//!
//! 1. **Loss**: on arrival a datagram is dropped with probability `loss`.
//! 2. **Queue**: a FIFO drop-tail queue holds at most `queue_packets` packets, *including* the one
//!    being serialised; an arrival that finds it full is dropped.
//! 3. **Serialisation**: a packet occupies the link for `wire_bytes * 8 / rate_bps` seconds, where
//!    `wire_bytes` is the UDP payload plus [`HEADER_BYTES`] (28: the IPv4 and UDP headers). The
//!    same 28 bytes are counted for IPv6 (whose headers take 48) so that a link behaves the same
//!    whatever family carries it. Link time is virtual: the next packet starts exactly when the previous one ends, whenever the
//!    relay thread happens to notice, so the long-run rate is exact.
//! 4. **Propagation**: after serialisation the packet waits `delay`, then is sent.
//! 5. **Cross traffic**: if `cross_bps > 0`, packets of [`CROSS_PACKET_BYTES`] on the wire arrive
//!    as a Poisson process of mean rate `cross_bps` (exponential gaps). They are not subject to
//!    random loss, enter the same queue (and are dropped if it is full), take serialisation time,
//!    and are discarded instead of being sent. Being FIFO, the queue shares a saturated link in
//!    proportion to what is offered: a flow offering `f` bit/s against cross traffic of `c` gets
//!    about `rate * f / (f + c)`, not `rate - c` (equal to it only when `f + c = rate`).
//!
//! # Timing
//!
//! One thread serves both directions. It blocks in `ppoll` on all sockets with a timeout that ends
//! [`SPIN_WINDOW`] before the next send, then finishes the wait with [`clock::wait_until`]; its
//! timer slack is tightened with [`clock::tighten_timer_slack`]. When nothing is pending it blocks
//! without a deadline but wakes at least every 50 ms; [`Relay::stop`] (or dropping the handle) wakes
//! it at once through a socket pair. Arrivals are timestamped when read: the sockets are checked
//! (without blocking) before every spin, so a datagram that arrives while the thread is spinning
//! before a send is stamped at most [`SPIN_WINDOW`] late.
//!
//! Nothing received can make the relay panic; send and receive errors (such as `ECONNREFUSED` after
//! an ICMP port unreachable) are counted in [`RelayStats`] and otherwise ignored.

use std::collections::{HashMap, VecDeque};
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixDatagram;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::clock;
use crate::net::poll_fds;

/// Header bytes added to every UDP payload to get its size on the link (IPv4 20 + UDP 8), for
/// both address families.
pub const HEADER_BYTES: usize = 28;

/// Size on the wire of a cross-traffic packet (headers included).
pub const CROSS_PACKET_BYTES: usize = 1000;

/// Most client mappings held at once; datagrams from further new clients are dropped (counted in
/// [`DirectionStats::dropped_unmapped`]) until a mapping expires.
pub const MAX_CLIENTS: usize = 4096;

/// A client mapping without traffic in either direction for this long is removed.
pub const CLIENT_IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// How long before a send deadline the relay stops polling its sockets and finishes the wait
/// with [`clock::wait_until`]. It covers the wake-up latency of `ppoll`.
pub const SPIN_WINDOW: Duration = Duration::from_micros(250);

/// Longest block in `ppoll` when nothing is pending.
const IDLE_POLL: Duration = Duration::from_millis(50);

/// How often idle mappings are looked for.
const EXPIRY_SCAN: Duration = Duration::from_secs(1);

/// Receive buffer size: the largest UDP datagram.
const MAX_DATAGRAM: usize = 65_536;

/// Most datagrams read from one socket per wake, so a flood cannot delay due sends for long; the
/// rest are read on the next wake, which comes at once.
const DRAIN_LIMIT: usize = 256;

/// Socket buffer sizes asked for (best effort; the kernel caps them at `net.core.*mem_max`).
const SOCKET_BUFFER_BYTES: libc::c_int = 4 << 20;

/// Largest accepted propagation delay.
const MAX_DELAY: Duration = Duration::from_secs(3600);

/// Largest accepted cross-traffic rate (bits per second).
const MAX_CROSS_BPS: f64 = 1e10;

/// The model of one direction of the emulated path.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkConfig {
    /// Bottleneck rate in bits per second (at least 1; `f64::INFINITY` for no bottleneck).
    pub rate_bps: f64,
    /// Propagation delay added after serialisation (at most one hour).
    pub delay: Duration,
    /// Queue capacity in packets, including the one being serialised (at least 1).
    pub queue_packets: usize,
    /// Probability in `[0, 1]` that an arriving datagram is dropped.
    pub loss: f64,
    /// Mean rate of Poisson cross traffic in bits per second (0 for none, at most 10 Gbit/s).
    pub cross_bps: f64,
}

impl LinkConfig {
    /// A link with no random loss and no cross traffic.
    pub fn lossless(rate_bps: f64, delay: Duration, queue_packets: usize) -> Self {
        LinkConfig {
            rate_bps,
            delay,
            queue_packets,
            loss: 0.0,
            cross_bps: 0.0,
        }
    }

    /// How long a packet of `wire_bytes` (headers included) occupies the link.
    pub fn transmission_time(&self, wire_bytes: usize) -> Duration {
        let secs = wire_bytes as f64 * 8.0 / self.rate_bps;
        Duration::try_from_secs_f64(secs).unwrap_or(Duration::MAX)
    }

    /// Checks the ranges documented on the fields.
    pub fn validate(&self) -> Result<(), String> {
        if self.rate_bps.is_nan() || self.rate_bps < 1.0 {
            return Err(format!("rate_bps {} must be at least 1", self.rate_bps));
        }
        if self.delay > MAX_DELAY {
            return Err(format!("delay {:?} exceeds {MAX_DELAY:?}", self.delay));
        }
        if self.queue_packets == 0 {
            return Err("queue_packets must be at least 1".to_string());
        }
        if !(0.0..=1.0).contains(&self.loss) {
            return Err(format!("loss {} must be in [0, 1]", self.loss));
        }
        if !(0.0..=MAX_CROSS_BPS).contains(&self.cross_bps) {
            return Err(format!(
                "cross_bps {} must be in [0, {MAX_CROSS_BPS}]",
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
    /// The link model, applied independently in each direction.
    pub link: LinkConfig,
    /// Seed of all randomness (loss and cross traffic): equal seeds give equal draws.
    pub seed: u64,
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
    /// Dropped because the blackhole was on when they arrived or were due to leave.
    pub dropped_blackhole: u64,
    /// Dropped for want of a client mapping (table full, socket could not be opened, or the
    /// mapping expired while the datagram was in flight).
    pub dropped_unmapped: u64,
    /// Sends that failed (the datagram is lost).
    pub send_errors: u64,
    /// UDP payload bytes received.
    pub bytes_received: u64,
    /// UDP payload bytes forwarded.
    pub bytes_forwarded: u64,
    /// Cross-traffic packets generated on this direction's link.
    pub cross_packets: u64,
    /// Cross-traffic packets dropped because the queue was full.
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
            send_errors: get(&self.send_errors),
            bytes_received: get(&self.bytes_received),
            bytes_forwarded: get(&self.bytes_forwarded),
            cross_packets: get(&self.cross_packets),
            cross_dropped: get(&self.cross_dropped),
        }
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
}

/// A running relay. Dropping it (or calling [`Relay::stop`]) stops its thread and closes its
/// sockets.
///
/// ```no_run
/// use std::time::Duration;
/// use acp_runtime::relay::{LinkConfig, Relay, RelayConfig};
///
/// let relay = Relay::start(RelayConfig {
///     listen: "127.0.0.1:0".parse().unwrap(),
///     target: "127.0.0.1:9000".parse().unwrap(),
///     link: LinkConfig {
///         rate_bps: 2e6,
///         delay: Duration::from_millis(20),
///         queue_packets: 50,
///         loss: 0.0,
///         cross_bps: 0.0,
///     },
///     seed: 1,
/// })?;
/// println!("send to {}", relay.local_addr());
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug)]
pub struct Relay {
    local_addr: SocketAddr,
    shared: Arc<Shared>,
    waker: UnixDatagram,
    thread: Option<JoinHandle<()>>,
}

impl Relay {
    /// Binds the listen socket, starts the relay thread and returns once bound. Fails with
    /// `InvalidInput` if the link configuration is out of range, or with the error of binding.
    pub fn start(cfg: RelayConfig) -> io::Result<Relay> {
        cfg.link
            .validate()
            .map_err(|msg| io::Error::new(io::ErrorKind::InvalidInput, msg))?;
        let listen = UdpSocket::bind(cfg.listen)?;
        listen.set_nonblocking(true)?;
        enlarge_buffers(&listen);
        let local_addr = listen.local_addr()?;
        let (waker, wake_rx) = UnixDatagram::pair()?;
        waker.set_nonblocking(true)?;
        wake_rx.set_nonblocking(true)?;

        let shared = Arc::new(Shared::default());
        let now = Instant::now();
        let mut seeds = SplitMix64::new(cfg.seed);
        let to_target = Link::new(cfg.link.clone(), &mut seeds, now);
        let to_client = Link::new(cfg.link, &mut seeds, now);
        let upstream_ip = match (cfg.target.ip(), cfg.target.ip().is_loopback()) {
            (IpAddr::V4(_), true) => IpAddr::V4(Ipv4Addr::LOCALHOST),
            (IpAddr::V4(_), false) => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
            (IpAddr::V6(_), true) => IpAddr::V6(Ipv6Addr::LOCALHOST),
            (IpAddr::V6(_), false) => IpAddr::V6(Ipv6Addr::UNSPECIFIED),
        };
        let worker = Worker {
            shared: Arc::clone(&shared),
            listen,
            wake_rx,
            target: cfg.target,
            upstream_bind: SocketAddr::new(upstream_ip, 0),
            clients: HashMap::new(),
            to_target,
            to_client,
            fds: Vec::new(),
            fd_clients: Vec::new(),
            fds_dirty: true,
            ready: Vec::new(),
            buf: vec![0; MAX_DATAGRAM],
            last_expiry: now,
        };
        let thread = std::thread::Builder::new()
            .name("acp-relay".to_string())
            .spawn(move || worker.run())?;
        Ok(Relay {
            local_addr,
            shared,
            waker,
            thread: Some(thread),
        })
    }

    /// The address the relay listens on (with the actual port if port 0 was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// While on, every datagram in either direction is dropped, both on arrival and when a
    /// datagram already in flight is due to leave. Counted in
    /// [`DirectionStats::dropped_blackhole`].
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
        // If the wake-up cannot be sent, the thread still notices within IDLE_POLL.
        let _ = self.waker.send(&[0]);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Asks for large socket buffers so bursts are not lost in the kernel (best effort).
fn enlarge_buffers(socket: &UdpSocket) {
    let size: libc::c_int = SOCKET_BUFFER_BYTES;
    for option in [libc::SO_RCVBUF, libc::SO_SNDBUF] {
        // SAFETY: the descriptor is open for the duration of the call, and the option value
        // points to a live c_int whose size is passed alongside.
        unsafe {
            libc::setsockopt(
                socket.as_raw_fd(),
                libc::SOL_SOCKET,
                option,
                (&size as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            );
        }
    }
}

/// The splitmix64 generator: tiny, fast and good enough for loss draws and exponential gaps.
#[derive(Debug, Clone)]
struct SplitMix64(u64);

impl SplitMix64 {
    fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`.
    fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// A datagram crossing the relay, with the client it belongs to.
#[derive(Debug)]
struct Packet {
    data: Vec<u8>,
    client: SocketAddr,
}

/// What occupies a queue slot.
#[derive(Debug)]
enum Item<P> {
    Real(P),
    Cross,
}

#[derive(Debug)]
struct Slot<P> {
    item: Item<P>,
    /// Serialisation time.
    tx: Duration,
}

/// What became of an arrival.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Admission {
    Queued,
    Lost,
    QueueFull,
}

/// One direction of the path: loss, drop-tail queue, serialisation, propagation, cross traffic.
/// Pure model over `Instant`s: it does no I/O and never reads the clock, so it is unit-tested
/// with synthetic times.
#[derive(Debug)]
struct Link<P> {
    cfg: LinkConfig,
    loss_rng: SplitMix64,
    cross_rng: SplitMix64,
    cross_tx: Duration,
    /// Queued packets; the front one is being serialised.
    queue: VecDeque<Slot<P>>,
    /// When the front of `queue` finishes serialisation (meaningless if empty).
    head_end: Instant,
    /// Next cross-traffic arrival.
    next_cross: Option<Instant>,
    /// Serialised packets in propagation, with their departure times (non-decreasing).
    line: VecDeque<(Instant, P)>,
    /// Loss, queue and cross-traffic counters (the rest are kept by the caller).
    drops: LinkCounts,
}

/// What a [`Link`] counts itself.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct LinkCounts {
    dropped_loss: u64,
    dropped_queue: u64,
    cross_packets: u64,
    cross_dropped: u64,
}

impl<P> Link<P> {
    /// A link whose cross traffic starts at `start`; draws its two seeds from `seeds`.
    fn new(cfg: LinkConfig, seeds: &mut SplitMix64, start: Instant) -> Self {
        let mut link = Link {
            cross_tx: cfg.transmission_time(CROSS_PACKET_BYTES),
            cfg,
            loss_rng: SplitMix64::new(seeds.next_u64()),
            cross_rng: SplitMix64::new(seeds.next_u64()),
            queue: VecDeque::new(),
            head_end: start,
            next_cross: None,
            line: VecDeque::new(),
            drops: LinkCounts::default(),
        };
        link.next_cross = link.cross_gap().and_then(|gap| start.checked_add(gap));
        link
    }

    /// An exponential gap between cross-traffic packets, `None` without cross traffic.
    fn cross_gap(&mut self) -> Option<Duration> {
        if self.cfg.cross_bps <= 0.0 {
            return None;
        }
        let mean = CROSS_PACKET_BYTES as f64 * 8.0 / self.cfg.cross_bps;
        let u = 1.0 - self.cross_rng.next_f64(); // in (0, 1]
        Duration::try_from_secs_f64(-u.ln() * mean).ok()
    }

    /// Puts an item at the tail if there is room; starts serialising it if the link was idle.
    fn enqueue(&mut self, at: Instant, item: Item<P>, tx: Duration) -> bool {
        if self.queue.len() >= self.cfg.queue_packets {
            return false;
        }
        if self.queue.is_empty() {
            self.head_end = at + tx;
        }
        self.queue.push_back(Slot { item, tx });
        true
    }

    /// Plays every serialisation end and cross-traffic arrival up to `now`, in time order (a
    /// departure before an arrival at the same instant, freeing its slot).
    fn advance(&mut self, now: Instant) {
        loop {
            let departure = (!self.queue.is_empty()).then_some(self.head_end);
            let (at, is_departure) = match (departure, self.next_cross) {
                (Some(d), Some(c)) if c < d => (c, false),
                (Some(d), _) => (d, true),
                (None, Some(c)) => (c, false),
                (None, None) => return,
            };
            if at > now {
                return;
            }
            if is_departure {
                if let Some(slot) = self.queue.pop_front() {
                    if let Item::Real(p) = slot.item {
                        self.line.push_back((at + self.cfg.delay, p));
                    }
                }
                if let Some(next) = self.queue.front() {
                    self.head_end = at + next.tx;
                }
            } else {
                self.drops.cross_packets += 1;
                if !self.enqueue(at, Item::Cross, self.cross_tx) {
                    self.drops.cross_dropped += 1;
                }
                self.next_cross = self.cross_gap().and_then(|gap| at.checked_add(gap));
            }
        }
    }

    /// A datagram of `wire_bytes` (headers included) arrives at `now`.
    fn arrive(&mut self, now: Instant, packet: P, wire_bytes: usize) -> Admission {
        self.advance(now);
        if self.cfg.loss > 0.0 && self.loss_rng.next_f64() < self.cfg.loss {
            self.drops.dropped_loss += 1;
            return Admission::Lost;
        }
        let tx = self.cfg.transmission_time(wire_bytes);
        if self.enqueue(now, Item::Real(packet), tx) {
            Admission::Queued
        } else {
            self.drops.dropped_queue += 1;
            Admission::QueueFull
        }
    }

    /// The next packet due to leave by `now` (call [`Link::advance`] first).
    fn pop_due(&mut self, now: Instant) -> Option<P> {
        match self.line.front() {
            Some((at, _)) if *at <= now => self.line.pop_front().map(|(_, p)| p),
            _ => None,
        }
    }

    /// When the next real packet is due to leave, as far as is known now: the head of the
    /// propagation line, or the end of serialisation plus delay of a real packet being serialised.
    /// These deadlines are met precisely.
    fn next_send(&self) -> Option<Instant> {
        let in_line = self.line.front().map(|(at, _)| *at);
        let serialising = match self.queue.front() {
            Some(Slot {
                item: Item::Real(_),
                ..
            }) => Some(self.head_end + self.cfg.delay),
            _ => None,
        };
        earliest(in_line, serialising)
    }

    /// When the model next changes state without sending: the end of a cross packet's
    /// serialisation or the next cross arrival. Lateness here costs nothing (link time is virtual).
    fn next_internal(&self) -> Option<Instant> {
        let serialising = match self.queue.front() {
            Some(Slot {
                item: Item::Cross, ..
            }) => Some(self.head_end),
            _ => None,
        };
        earliest(serialising, self.next_cross)
    }
}

fn earliest(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, None) => a,
        (None, b) => b,
    }
}

/// A client mapping.
#[derive(Debug)]
struct Client {
    /// Connected to the target.
    socket: UdpSocket,
    last_active: Instant,
}

/// A socket found ready by poll.
#[derive(Debug, Clone, Copy)]
enum Ready {
    Waker,
    Listen,
    Upstream(SocketAddr),
}

/// The relay thread's state.
struct Worker {
    shared: Arc<Shared>,
    listen: UdpSocket,
    wake_rx: UnixDatagram,
    target: SocketAddr,
    upstream_bind: SocketAddr,
    clients: HashMap<SocketAddr, Client>,
    to_target: Link<Packet>,
    to_client: Link<Packet>,
    /// Poll set: waker, listen socket, then one upstream socket per entry of `fd_clients`.
    fds: Vec<libc::pollfd>,
    fd_clients: Vec<SocketAddr>,
    fds_dirty: bool,
    ready: Vec<Ready>,
    buf: Vec<u8>,
    last_expiry: Instant,
}

impl Worker {
    fn run(mut self) {
        clock::tighten_timer_slack();
        while !self.shared.stop.load(Ordering::Acquire) {
            let now = Instant::now();
            self.send_due(now);
            if now.saturating_duration_since(self.last_expiry) >= EXPIRY_SCAN {
                self.expire(now);
            }
            self.wait();
        }
    }

    fn blackhole(&self) -> bool {
        self.shared.blackhole.load(Ordering::Relaxed)
    }

    /// Advances both links to `now` and sends what is due.
    fn send_due(&mut self, now: Instant) {
        self.to_target.advance(now);
        while let Some(packet) = self.to_target.pop_due(now) {
            self.send_to_target(packet);
        }
        self.to_client.advance(now);
        while let Some(packet) = self.to_client.pop_due(now) {
            self.send_to_client(packet);
        }
        self.publish_link_counts();
    }

    fn publish_link_counts(&mut self) {
        for (link, counters) in [
            (&mut self.to_target.drops, &self.shared.to_target),
            (&mut self.to_client.drops, &self.shared.to_client),
        ] {
            let d = std::mem::take(link);
            if d != LinkCounts::default() {
                bump(&counters.dropped_loss, d.dropped_loss);
                bump(&counters.dropped_queue, d.dropped_queue);
                bump(&counters.cross_packets, d.cross_packets);
                bump(&counters.cross_dropped, d.cross_dropped);
            }
        }
    }

    fn send_to_target(&mut self, packet: Packet) {
        let c = &self.shared.to_target;
        if self.blackhole() {
            bump(&c.dropped_blackhole, 1);
            return;
        }
        match self.clients.get(&packet.client) {
            None => bump(&c.dropped_unmapped, 1),
            Some(client) => match client.socket.send(&packet.data) {
                Ok(_) => {
                    bump(&c.forwarded, 1);
                    bump(&c.bytes_forwarded, packet.data.len() as u64);
                }
                Err(_) => bump(&c.send_errors, 1),
            },
        }
    }

    fn send_to_client(&mut self, packet: Packet) {
        let c = &self.shared.to_client;
        if self.blackhole() {
            bump(&c.dropped_blackhole, 1);
            return;
        }
        match self.listen.send_to(&packet.data, packet.client) {
            Ok(_) => {
                bump(&c.forwarded, 1);
                bump(&c.bytes_forwarded, packet.data.len() as u64);
            }
            Err(_) => bump(&c.send_errors, 1),
        }
    }

    /// Removes mappings idle for [`CLIENT_IDLE_TIMEOUT`].
    fn expire(&mut self, now: Instant) {
        self.last_expiry = now;
        let before = self.clients.len();
        self.clients
            .retain(|_, c| now.saturating_duration_since(c.last_active) < CLIENT_IDLE_TIMEOUT);
        if self.clients.len() != before {
            self.fds_dirty = true;
            self.shared
                .clients
                .store(self.clients.len(), Ordering::Relaxed);
        }
    }

    /// Blocks until the next event: in `ppoll` until [`SPIN_WINDOW`] before the next send (or the
    /// next internal event, or [`IDLE_POLL`]), then in [`clock::wait_until`]. Reads whatever
    /// arrives meanwhile.
    fn wait(&mut self) {
        let now = Instant::now();
        let send = earliest(self.to_target.next_send(), self.to_client.next_send());
        let internal = earliest(
            self.to_target.next_internal(),
            self.to_client.next_internal(),
        );
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
        if let Some(internal) = internal {
            wake = wake.min(internal);
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
            Err(_) => {
                // Should not happen (EINTR is retried); avoid a hot loop if it persists.
                bump(&self.shared.recv_errors, 1);
                std::thread::sleep(Duration::from_millis(1));
                false
            }
        }
    }

    fn rebuild_fds(&mut self) {
        if !self.fds_dirty {
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
        self.fds.push(entry(self.listen.as_raw_fd()));
        for (addr, client) in &self.clients {
            self.fds.push(entry(client.socket.as_raw_fd()));
            self.fd_clients.push(*addr);
        }
        self.fds_dirty = false;
    }

    fn drain_ready(&mut self) {
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
                Ready::Listen => self.drain_listen(),
                Ready::Upstream(client) => self.drain_upstream(client),
            }
        }
        self.ready = ready;
    }

    /// Reads datagrams from clients.
    fn drain_listen(&mut self) {
        for _ in 0..DRAIN_LIMIT {
            match self.listen.recv_from(&mut self.buf) {
                Ok((n, from)) => self.on_client_datagram(n, from),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => bump(&self.shared.recv_errors, 1),
            }
        }
    }

    /// Reads datagrams from the target on one client's upstream socket.
    fn drain_upstream(&mut self, client: SocketAddr) {
        for _ in 0..DRAIN_LIMIT {
            let Some(mapping) = self.clients.get(&client) else {
                return;
            };
            // The socket is connected to the target, so the kernel accepts nothing else.
            match mapping.socket.recv(&mut self.buf) {
                Ok(n) => self.on_target_datagram(n, client),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => bump(&self.shared.recv_errors, 1),
            }
        }
    }

    /// The first `n` bytes of the receive buffer, copied.
    fn received(&self, n: usize) -> Vec<u8> {
        self.buf.get(..n).unwrap_or(&self.buf).to_vec()
    }

    fn on_client_datagram(&mut self, n: usize, from: SocketAddr) {
        let now = Instant::now();
        let c = &self.shared.to_target;
        bump(&c.received, 1);
        bump(&c.bytes_received, n as u64);
        if self.blackhole() {
            bump(&c.dropped_blackhole, 1);
            return;
        }
        match self.clients.get_mut(&from) {
            Some(client) => client.last_active = now,
            None => {
                if self.clients.len() >= MAX_CLIENTS {
                    self.expire(now);
                }
                let opened = if self.clients.len() < MAX_CLIENTS {
                    self.open_upstream().ok()
                } else {
                    None
                };
                let Some(socket) = opened else {
                    bump(&self.shared.to_target.dropped_unmapped, 1);
                    return;
                };
                self.clients.insert(
                    from,
                    Client {
                        socket,
                        last_active: now,
                    },
                );
                self.fds_dirty = true;
                self.shared
                    .clients
                    .store(self.clients.len(), Ordering::Relaxed);
            }
        }
        let packet = Packet {
            data: self.received(n),
            client: from,
        };
        self.to_target.arrive(now, packet, n + HEADER_BYTES);
    }

    fn on_target_datagram(&mut self, n: usize, client: SocketAddr) {
        let now = Instant::now();
        let c = &self.shared.to_client;
        bump(&c.received, 1);
        bump(&c.bytes_received, n as u64);
        if let Some(mapping) = self.clients.get_mut(&client) {
            mapping.last_active = now;
        }
        if self.blackhole() {
            bump(&c.dropped_blackhole, 1);
            return;
        }
        let packet = Packet {
            data: self.received(n),
            client,
        };
        self.to_client.arrive(now, packet, n + HEADER_BYTES);
    }

    /// A new upstream socket, connected to the target.
    fn open_upstream(&self) -> io::Result<UdpSocket> {
        let socket = UdpSocket::bind(self.upstream_bind)?;
        socket.connect(self.target)?;
        socket.set_nonblocking(true)?;
        enlarge_buffers(&socket);
        Ok(socket)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(rate_bps: f64, delay_ms: u64, queue_packets: usize) -> LinkConfig {
        LinkConfig::lossless(rate_bps, Duration::from_millis(delay_ms), queue_packets)
    }

    fn link(cfg: LinkConfig, seed: u64, start: Instant) -> Link<u32> {
        Link::new(cfg, &mut SplitMix64::new(seed), start)
    }

    /// Every departure up to `until`, stepping the clock in `step`s.
    fn drain(link: &mut Link<u32>, from: Instant, until: Instant) -> Vec<(Instant, u32)> {
        let mut out = Vec::new();
        let mut now = from;
        while now <= until {
            link.advance(now);
            while let Some(p) = link.pop_due(now) {
                out.push((now, p));
            }
            now += Duration::from_micros(10);
        }
        out
    }

    #[test]
    fn splitmix_matches_reference() {
        // First outputs of splitmix64 seeded with 0 (reference implementation by S. Vigna).
        let mut r = SplitMix64::new(0);
        assert_eq!(r.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(r.next_u64(), 0x6E78_9E6A_A1B9_65F4);
        let x = SplitMix64::new(7).next_f64();
        assert!((0.0..1.0).contains(&x));
    }

    #[test]
    fn validate_rejects_out_of_range() {
        assert!(cfg(1e6, 10, 10).validate().is_ok());
        assert!(cfg(f64::INFINITY, 0, 1).validate().is_ok());
        assert!(cfg(0.0, 10, 10).validate().is_err());
        assert!(cfg(f64::NAN, 10, 10).validate().is_err());
        assert!(cfg(1e6, 10, 0).validate().is_err());
        assert!(LinkConfig {
            loss: 1.5,
            ..cfg(1e6, 10, 10)
        }
        .validate()
        .is_err());
        assert!(LinkConfig {
            cross_bps: -1.0,
            ..cfg(1e6, 10, 10)
        }
        .validate()
        .is_err());
    }

    #[test]
    fn single_packet_takes_serialisation_plus_delay() {
        let t0 = Instant::now();
        let mut l = link(cfg(2e6, 20, 10), 1, t0);
        // 472 B payload + 28 = 500 B = 4000 bits at 2 Mbit/s = 2 ms.
        assert_eq!(l.arrive(t0, 1, 500), Admission::Queued);
        assert_eq!(l.next_send(), Some(t0 + Duration::from_millis(22)));
        l.advance(t0 + Duration::from_millis(22));
        assert_eq!(l.pop_due(t0 + Duration::from_micros(21_999)), None);
        assert_eq!(l.pop_due(t0 + Duration::from_millis(22)), Some(1));
    }

    #[test]
    fn back_to_back_packets_leave_at_the_link_rate() {
        let t0 = Instant::now();
        let mut l = link(cfg(1e6, 5, 100), 1, t0);
        for i in 0..10 {
            assert_eq!(l.arrive(t0, i, 125), Admission::Queued); // 1 ms each
        }
        let out = drain(&mut l, t0, t0 + Duration::from_millis(20));
        let got: Vec<u32> = out.iter().map(|(_, p)| *p).collect();
        assert_eq!(got, (0..10).collect::<Vec<_>>());
        for (k, (at, _)) in out.iter().enumerate() {
            assert_eq!(*at, t0 + Duration::from_millis(6 + k as u64));
        }
    }

    #[test]
    fn queue_counts_the_packet_in_service() {
        let t0 = Instant::now();
        let mut l = link(cfg(1e6, 0, 3), 1, t0);
        let verdicts: Vec<Admission> = (0..5).map(|i| l.arrive(t0, i, 125)).collect();
        assert_eq!(
            verdicts,
            [
                Admission::Queued,
                Admission::Queued,
                Admission::Queued,
                Admission::QueueFull,
                Admission::QueueFull
            ]
        );
        // When the first finishes (1 ms) a slot frees.
        assert_eq!(
            l.arrive(t0 + Duration::from_millis(1), 5, 125),
            Admission::Queued
        );
        assert_eq!(l.drops.dropped_queue, 2);
    }

    #[test]
    fn loss_is_seeded_and_near_its_probability() {
        let t0 = Instant::now();
        let run = |seed| {
            let mut l = link(
                LinkConfig {
                    loss: 0.25,
                    ..cfg(f64::INFINITY, 0, 100_000)
                },
                seed,
                t0,
            );
            (0..20_000)
                .map(|i| l.arrive(t0, i, 100) == Admission::Lost)
                .collect::<Vec<_>>()
        };
        let a = run(5);
        assert_eq!(a, run(5), "same seed, same draws");
        assert_ne!(a, run(6));
        let lost = a.iter().filter(|x| **x).count() as f64 / a.len() as f64;
        // Binomial standard deviation sqrt(0.25*0.75/20000) = 0.003; allow ~4 sigma.
        assert!((lost - 0.25).abs() < 0.012, "lost fraction {lost}");
    }

    #[test]
    fn cross_traffic_is_poisson_at_its_mean_rate_and_takes_link_time() {
        let t0 = Instant::now();
        // 1 Mbit/s of cross traffic = 125 packets/s of 1000 B on a 2 Mbit/s link.
        let mut l = link(
            LinkConfig {
                cross_bps: 1e6,
                ..cfg(2e6, 0, 1000)
            },
            3,
            t0,
        );
        l.advance(t0 + Duration::from_secs(100));
        let n = l.drops.cross_packets as f64;
        // Poisson count with mean 12500: standard deviation 112; allow ~4 sigma.
        assert!((n - 12_500.0).abs() < 450.0, "cross packets {n}");
        assert_eq!(l.drops.cross_dropped, 0);
        assert!(l.line.is_empty(), "cross traffic is never sent");

        // A real packet arriving behind a cross packet waits for it.
        let mut l = link(
            LinkConfig {
                cross_bps: 1e6,
                ..cfg(2e6, 0, 1000)
            },
            3,
            t0,
        );
        let first = l.next_cross.expect("cross traffic is on");
        l.arrive(first, 7, 250); // 1 ms of service, behind 4 ms of cross packet
        l.advance(first + Duration::from_millis(5));
        // Unless a second cross packet arrived in between (it would queue behind ours), ours left
        // exactly 4 + 1 ms after the cross packet started.
        assert_eq!(
            l.line.front().map(|(t, _)| *t),
            Some(first + Duration::from_millis(5))
        );
    }

    #[test]
    fn full_queue_drops_cross_traffic() {
        let t0 = Instant::now();
        let mut l = link(
            LinkConfig {
                cross_bps: 1e6,
                ..cfg(1e3, 0, 2)
            },
            9,
            t0,
        );
        l.arrive(t0, 1, 1000); // 8 s each
        l.arrive(t0, 2, 1000);
        l.advance(t0 + Duration::from_secs(1));
        assert!(l.drops.cross_packets > 50);
        assert_eq!(l.drops.cross_dropped, l.drops.cross_packets);
    }

    #[test]
    fn fifo_shares_a_saturated_link_in_proportion_to_offered_rates() {
        // A flow offering 0.75 of a 20 Mbit/s link against 0.5 of Poisson cross traffic, all in
        // 1000 B packets, through a queue that never fills: over a window where the link is
        // always busy the flow gets 0.75 / (0.75 + 0.5) = 0.6 of it.
        let t0 = Instant::now();
        let mut l = link(
            LinkConfig {
                cross_bps: 10e6,
                ..cfg(20e6, 0, 100_000)
            },
            11,
            t0,
        );
        let gap = Duration::from_nanos(533_333); // 15 Mbit/s
        let mut out = Vec::new();
        for i in 0..3750u32 {
            let now = t0 + gap * i;
            l.arrive(now, i, 1000);
            while let Some(p) = l.pop_due(now) {
                out.push((now, p));
            }
        }
        let (a, b) = (
            t0 + Duration::from_millis(250),
            t0 + Duration::from_millis(1750),
        );
        let n = out.iter().filter(|(t, _)| *t >= a && *t < b).count();
        let share = n as f64 * 8000.0 / 1.5 / 20e6;
        // About 1875 cross packets in the window: Poisson noise of 2.3% on their share.
        assert!((share - 0.6).abs() < 0.03, "share {share}");
        assert_eq!(l.drops.cross_dropped, 0);
    }
}
