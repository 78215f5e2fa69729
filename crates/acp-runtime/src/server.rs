//! The monitor server: one UDP socket, many sources.
//!
//! A thread receives datagrams in batches (`recvmmsg`), passes each to the sans-IO
//! [`acp_core::Monitor`], hands fresh updates to the application's callback, and returns the ACKs
//! in batches (`sendmmsg`). Malformed datagrams are counted and dropped by the monitor.
//!
//! Other threads read the server's state in two ways. Every `snapshot_every` the thread publishes
//! the monitor-wide [`Totals`], which cost it nothing to read. A [`Snapshot`] with every session
//! is made only when a reader asks for one ([`MonitorServer::snapshot`]): the server thread copies
//! its session table at its next loop turn, in one pass and at most once per `snapshot_every`,
//! and the reader builds and sorts the reports on its own thread, so that serving a large table
//! (100,000 sessions) is not held up by sorting it or by readers that need only the totals. A
//! reader that lists only the sessions silent the longest
//! ([`MonitorServer::snapshot_silent_longest`], as `acp monitor`'s reports and metrics do) has
//! the server thread keep only those in its pass: a copy of a million sessions would cost as
//! much memory again as the table (`docs/SCALING.md`). [`MonitorServer::stop`] ends the thread
//! and returns the final snapshot, with every session.
//!
//! With [`ServerConfig::tcp`] the same thread also accepts updates over TCP on the same port
//! ([`crate::stream`]): it then waits in epoll (`mio`) for its UDP socket and every connection,
//! at a cost per wake-up that grows with the descriptors ready, not with those open. Each turn
//! serves one batch of datagrams, then one fair share of TCP bytes ([`crate::stream::TURN_BYTES`]),
//! and does not sleep while either has more, so a connection written to flat out cannot hold
//! the UDP sources back. Each frame goes to the same monitor as a datagram would, without a
//! reply. At start the server checks that the process may open the descriptors
//! `max_connections` needs ([`crate::net::ensure_fd_limit`]) and logs what it found.
//!
//! With [`ServerConfig::feedback`] another thread can replace, while the server runs, the
//! receiver feedback the monitor appends to its ACKs ([`FeedbackCell`]); the server thread picks
//! up a new value at its next loop turn, before it answers the datagrams of that turn.
//!
//! With [`ServerConfig::ack_interval`] the server answers each peer at most once per interval
//! (every update is still received and counted): the aggregation thesis's receivers send one
//! feedback packet per interval rather than an ACK per packet, which matters where the way
//! back costs a channel access per packet (an 802.11ac station's uplink).

use std::io;
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use acp_core::monitor::{Delivery, MonitorStats, SessionKey, SessionStats};
use acp_core::{Monitor, MonitorConfig, Time};

use crate::clock;
use crate::net::{RecvBatch, SendBatch};
use crate::stream::{StreamCounters, StreamLimits, StreamListener};

/// Longest wait for traffic before the server thread looks at its timers and readers.
const WAIT: Duration = Duration::from_millis(20);
/// The UDP socket's token in the server's epoll set (the TCP listener's and connections' follow).
const UDP: mio::Token = mio::Token(0);
/// After a TCP turn that read all it may, the server waits this long for a datagram before the
/// next turn: TCP written flat out gets a turn (`TURN_BYTES`, 64 KiB, or `TURN_FRAMES`, 256
/// frames) per pause, 64 MB/s or 256,000 frames/s, while UDP is idle, and
/// the server thread sleeps often enough that the scheduler wakes it at once for a datagram.
const TCP_PAUSE: Duration = Duration::from_millis(1);

/// Called for every fresh update, on the server thread, with the kernel's receive time of its
/// datagram (ns since the Unix epoch) when [`ServerConfig::kernel_timestamps`] is set (`None`
/// otherwise, and for updates over TCP).
pub type OnUpdate = Box<dyn FnMut(&Delivery<'_>, Option<u64>) + Send>;

/// Server parameters.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Address to bind (IPv4 or IPv6; port 0 picks one).
    pub listen: SocketAddr,
    /// The monitor's own parameters.
    pub monitor: MonitorConfig,
    /// Datagrams per `recvmmsg`/`sendmmsg` call.
    pub batch: usize,
    /// How often the totals are refreshed, and the shortest time between two copies of the
    /// session table for [`MonitorServer::snapshot`].
    pub snapshot_every: Duration,
    /// Set `SO_REUSEPORT` before binding, so that several servers (threads or processes) can
    /// listen on one address; the kernel then hands each datagram to one of them by a hash of
    /// its source and destination, so a source sticks to one server (see `docs/SCALING.md`).
    pub reuse_port: bool,
    /// Also accept updates over TCP on the same address and port ([`crate::stream`]), to
    /// compare ACP with TCP on one path.
    pub tcp: Option<TcpConfig>,
    /// Receiver feedback to append to the ACKs, replaceable while the server runs.
    pub feedback: Option<Arc<FeedbackCell>>,
    /// Answer each peer at most once per this interval (`None`: every update).
    pub ack_interval: Option<Duration>,
    /// Have the kernel stamp each datagram's arrival (`SO_TIMESTAMPNS`) and hand the stamp to
    /// the [`OnUpdate`] callback: the receive time before the socket queue and the server
    /// thread's scheduling, as the aggregation estimator is trained to read it.
    pub kernel_timestamps: bool,
}

/// One receiver-feedback element (kind and value) shared with a running server.
#[derive(Debug, Default)]
pub struct FeedbackCell {
    version: AtomicU64,
    item: Mutex<Option<(u8, Vec<u8>)>>,
}

impl FeedbackCell {
    /// Replaces the element appended to every ACK from the server's next loop turn on.
    pub fn set(&self, kind: u8, value: Vec<u8>) {
        *self.item.lock().unwrap_or_else(|e| e.into_inner()) = Some((kind, value));
        self.version.fetch_add(1, Ordering::Release);
    }

    /// Hands the element to `monitor` if it changed since `seen`; returns the version applied.
    fn apply(&self, seen: u64, monitor: &mut Monitor) -> u64 {
        let version = self.version.load(Ordering::Acquire);
        if version != seen {
            if let Some((kind, value)) = &*self.item.lock().unwrap_or_else(|e| e.into_inner()) {
                let item = acp_core::wire::FeedbackItem { kind: *kind, value };
                if let Err(e) = monitor.set_feedback(&[item]) {
                    tracing::warn!(error = %e, "receiver feedback refused");
                }
            }
        }
        version
    }
}

/// Which updates are answered: every one, or each peer's first after an interval since its
/// last answer ([`ServerConfig::ack_interval`]).
struct AckPacer {
    interval: Option<Duration>,
    /// Per peer, when it may be answered again.
    next: std::collections::HashMap<SocketAddr, Time>,
}

impl AckPacer {
    /// Peers remembered before those already due again are forgotten.
    const PRUNE_AT: usize = 4096;

    fn new(interval: Option<Duration>) -> Self {
        AckPacer {
            interval,
            next: std::collections::HashMap::new(),
        }
    }

    /// Whether an update from `peer` at `now` is answered (and if so, the next is not before
    /// an interval has passed).
    fn due(&mut self, now: Time, peer: SocketAddr) -> bool {
        let Some(interval) = self.interval else {
            return true;
        };
        if self.next.get(&peer).is_some_and(|&at| now < at) {
            return false;
        }
        if self.next.len() >= Self::PRUNE_AT {
            self.next.retain(|_, at| *at > now);
        }
        self.next.insert(peer, now + interval);
        true
    }
}

/// The TCP side of a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TcpConfig {
    /// Receive buffer of each connection (bytes; it bounds TCP's window), or the kernel's
    /// default (`net.ipv4.tcp_rmem`, autotuned).
    pub recv_buffer: Option<usize>,
    /// Most connections open at once; more are closed as they arrive. One network (IPv4 /24,
    /// IPv6 /48) may hold the monitor's `max_prefix_share` of them.
    pub max_connections: usize,
    /// A connection that sends nothing for this long is closed.
    pub idle_timeout: Duration,
    /// A frame must arrive whole within this long of its first byte, or its connection is closed.
    pub frame_timeout: Duration,
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            recv_buffer: None,
            max_connections: 1024,
            idle_timeout: Duration::from_secs(60),
            frame_timeout: Duration::from_secs(10),
        }
    }
}

/// The TCP side of the server thread: its epoll set and connections.
struct TcpSide {
    poll: mio::Poll,
    events: mio::Events,
    /// The UDP socket alone, for the pause after a full TCP turn.
    udp_only: mio::Poll,
    listener: StreamListener,
    /// The UDP socket may hold datagrams (edge-triggered: until a batch comes back short).
    udp_ready: bool,
    /// The last TCP turn read all it may.
    saturated: bool,
}

/// Waits in `poll` for at most `timeout`; a signal ends the wait early.
fn wait_in(poll: &mut mio::Poll, events: &mut mio::Events, timeout: Duration) -> io::Result<()> {
    match poll.poll(events, Some(timeout)) {
        Err(e) if e.kind() != io::ErrorKind::Interrupted => Err(e),
        _ => Ok(()),
    }
}

impl TcpSide {
    /// Registers `socket` (made non-blocking) and listens on its address and port.
    fn new(
        socket: &std::net::UdpSocket,
        local: SocketAddr,
        tcp: TcpConfig,
        monitor: &MonitorConfig,
    ) -> io::Result<Self> {
        let needed = crate::net::RESERVED_FDS + tcp.max_connections as u64;
        let limit = crate::net::ensure_fd_limit(needed)?;
        if limit.soft < needed {
            tracing::warn!(
                soft = limit.soft,
                hard = limit.hard,
                needed,
                "the descriptor limit is below what {} TCP connections need: raise LimitNOFILE \
                 (or ulimit -n) to {needed}, or lower --max-tcp-connections",
                tcp.max_connections
            );
        } else {
            tracing::debug!(soft = limit.soft, needed, "descriptor limit suffices");
        }
        socket.set_nonblocking(true)?;
        let (poll, udp_only) = (mio::Poll::new()?, mio::Poll::new()?);
        for p in [&poll, &udp_only] {
            p.registry().register(
                &mut mio::unix::SourceFd(&socket.as_raw_fd()),
                UDP,
                mio::Interest::READABLE,
            )?;
        }
        let limits = StreamLimits {
            max_connections: tcp.max_connections,
            max_prefix_share: monitor.max_prefix_share,
            idle_timeout: tcp.idle_timeout,
            frame_timeout: tcp.frame_timeout,
        };
        let listener = StreamListener::bind(
            local,
            tcp.recv_buffer,
            limits,
            poll.registry(),
            clock::now(),
        )?;
        Ok(TcpSide {
            poll,
            events: mio::Events::with_capacity(1024),
            udp_only,
            listener,
            udp_ready: true,
            saturated: false,
        })
    }

    /// Waits for traffic (not at all while work is left over from the last turn); returns
    /// whether the UDP socket may hold datagrams.
    fn wait(&mut self) -> io::Result<bool> {
        if self.saturated && !self.udp_ready {
            wait_in(&mut self.udp_only, &mut self.events, TCP_PAUSE)?;
            self.udp_ready = !self.events.is_empty();
        }
        let now = clock::now();
        let timeout = if self.udp_ready || self.listener.has_work(now) {
            Duration::ZERO
        } else {
            WAIT.min(Duration::from_nanos(
                self.listener.next_deadline().nanos_since(now),
            ))
        };
        wait_in(&mut self.poll, &mut self.events, timeout)?;
        for event in self.events.iter() {
            match event.token() {
                UDP => self.udp_ready = true,
                token => self.listener.on_event(token),
            }
        }
        Ok(self.udp_ready)
    }
}

impl ServerConfig {
    /// Defaults for `listen`: 64-datagram batches, totals every 200 ms, UDP only.
    pub fn new(listen: SocketAddr, monitor: MonitorConfig) -> Self {
        ServerConfig {
            listen,
            monitor,
            batch: 64,
            snapshot_every: Duration::from_millis(200),
            reuse_port: false,
            tcp: None,
            feedback: None,
            ack_interval: None,
            kernel_timestamps: false,
        }
    }
}

/// One session as seen at snapshot time.
#[derive(Debug, Clone)]
pub struct SessionReport {
    /// Peer and session id.
    pub key: SessionKey,
    /// The monitor's statistics.
    pub stats: SessionStats,
    /// True time-average age from the first to the latest update received (s), when clocks are
    /// declared synchronised. (Measured to the latest arrival rather than to the snapshot, so a
    /// source that has finished is not charged for the time since it stopped.)
    pub avg_age: Option<f64>,
}

impl SessionReport {
    fn new(key: SessionKey, stats: SessionStats) -> Self {
        SessionReport {
            key,
            avg_age: stats.avg_age(stats.last_seen),
            stats,
        }
    }
}

/// The server's monitor-wide counters at one instant: cheap to read at any time.
#[derive(Debug, Clone, Default)]
pub struct Totals {
    /// When they were taken.
    pub at: Time,
    /// Monitor-wide counters.
    pub stats: MonitorStats,
    /// Datagrams longer than a receive slot, dropped unread (none can be, short of IPv6
    /// jumbograms: a slot holds the largest UDP payload).
    pub truncated: u64,
    /// ACKs the kernel took to send (`stats.acks` counts those the monitor wrote).
    pub acks_sent: u64,
    /// Sessions tracked.
    pub sessions: usize,
    /// TCP connections, when the server accepts updates over TCP ([`ServerConfig::tcp`]).
    pub streams: Option<StreamCounters>,
}

/// The server's state at one instant: its counters and every session.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    /// Monitor-wide counters.
    pub totals: Totals,
    /// Sessions, ordered by key.
    pub sessions: Vec<SessionReport>,
}

impl Snapshot {
    /// The report of session `key`, if tracked.
    pub fn session(&self, key: &SessionKey) -> Option<&SessionReport> {
        let i = self.sessions.binary_search_by(|s| s.key.cmp(key)).ok()?;
        self.sessions.get(i)
    }
}

/// The session table, copied.
type Entries = Vec<(SessionKey, SessionStats)>;

/// A raw copy of the session table, as the server thread makes it.
#[derive(Default)]
struct Table {
    totals: Totals,
    /// Every session, or those silent the longest ([`select_silent_longest`]).
    entries: Entries,
}

/// Which of two sessions has been silent longer (the earlier `last_seen`; then by key).
fn silent_longer(
    a: &(SessionKey, SessionStats),
    b: &(SessionKey, SessionStats),
) -> std::cmp::Ordering {
    (a.1.last_seen, a.0).cmp(&(b.1.last_seen, b.0))
}

/// Keeps the `n` entries silent the longest (in no particular order).
fn keep_silent_longest(entries: &mut Entries, n: usize) {
    if entries.len() > n {
        if n > 0 {
            entries.select_nth_unstable_by(n - 1, silent_longer);
        }
        entries.truncate(n);
    }
}

/// Copies into `entries` the `limit` sessions of `monitor` silent the longest (all if it holds
/// no more), in one pass: entries gather until there are twice `limit`, then the `limit` silent
/// the longest are kept, and sessions heard from later than the last of those are passed over.
/// `entries` needs `2 × limit` of capacity ([`table_capacity`]) not to grow.
fn select_silent_longest(monitor: &Monitor, limit: usize, entries: &mut Entries) {
    if limit >= monitor.session_count() {
        entries.extend(monitor.sessions().map(|(k, s)| (*k, s.clone())));
        return;
    }
    if limit == 0 {
        return;
    }
    let mut bound: Option<(Time, SessionKey)> = None;
    for (key, stats) in monitor.sessions() {
        if bound.is_some_and(|b| (stats.last_seen, *key) >= b) {
            continue;
        }
        entries.push((*key, stats.clone()));
        if entries.len() >= 2 * limit {
            keep_silent_longest(entries, limit);
            bound = entries.last().map(|(k, s)| (s.last_seen, *k));
        }
    }
    keep_silent_longest(entries, limit);
}

/// The capacity a copy of `limit` of `sessions` sessions needs, with room for sessions added
/// meanwhile.
fn table_capacity(limit: usize, sessions: usize) -> usize {
    if limit >= sessions {
        sessions + sessions / 8 + 64
    } else {
        2 * limit
    }
}

/// Memory for a copy of `capacity` entries: `reuse` if large enough (and not many times too
/// large: a reader of a few sessions must not keep a copy of them all alive), or a new buffer
/// whose pages are touched here rather than by the server thread's copy.
fn table_buffer(reuse: Option<Entries>, capacity: usize) -> Entries {
    match reuse {
        Some(mut entries)
            if entries.capacity() >= capacity && entries.capacity() <= 4 * capacity + 64 =>
        {
            entries.clear();
            entries
        }
        _ => {
            let mut entries = Vec::with_capacity(capacity);
            entries
                .spare_capacity_mut()
                .fill_with(std::mem::MaybeUninit::zeroed);
            entries
        }
    }
}

impl Table {
    /// Reports of the `limit` sessions silent the longest (of those copied), ordered by key:
    /// the work done on the reader's thread.
    fn snapshot(&self, limit: usize) -> Snapshot {
        let chosen: Vec<&(SessionKey, SessionStats)> = if limit >= self.entries.len() {
            self.entries.iter().collect()
        } else {
            let mut by_silence: Vec<_> = self.entries.iter().collect();
            by_silence.select_nth_unstable_by(limit.max(1) - 1, |a, b| silent_longer(a, b));
            by_silence.truncate(limit);
            by_silence
        };
        let mut sessions: Vec<SessionReport> = chosen
            .into_iter()
            .map(|(key, stats)| SessionReport::new(*key, stats.clone()))
            .collect();
        sessions.sort_unstable_by_key(|s| s.key);
        Snapshot {
            totals: self.totals.clone(),
            sessions,
        }
    }
}

/// What the server thread and its readers share.
#[derive(Default)]
struct Shared {
    /// Refreshed every `snapshot_every`, and with every table.
    totals: Totals,
    /// Session tables asked for by readers, and the number answered by `table`.
    asked: u64,
    answered: u64,
    /// The most sessions a reader waiting for a table lists (the silent longest).
    limit: usize,
    /// The latest table copied for readers, and the number of copies made.
    table: Arc<Table>,
    copies: u64,
    /// Memory for the next copy, allocated and touched by a reader, and the tables replaced
    /// since, left for a reader to free or reuse: the server thread neither allocates nor frees
    /// tables (megabytes for 100,000 sessions) while serving.
    buffer: Option<Entries>,
    retired: Vec<Arc<Table>>,
    /// The server thread has ended: `table` is final.
    finished: bool,
}

struct Channel {
    shared: Mutex<Shared>,
    answered: Condvar,
    /// A reader waits for a table (checked by the server thread every turn without locking).
    wanted: AtomicBool,
}

impl Channel {
    fn lock(&self) -> MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Marks the server thread finished when it ends, even by a panic, so no reader waits forever.
struct Finish(Arc<Channel>);

impl Drop for Finish {
    fn drop(&mut self) {
        self.0.lock().finished = true;
        self.0.answered.notify_all();
    }
}

/// A running monitor server.
pub struct MonitorServer {
    local: SocketAddr,
    stop: Arc<AtomicBool>,
    channel: Arc<Channel>,
    thread: Option<JoinHandle<io::Result<()>>>,
}

/// What the server counts beside the monitor.
#[derive(Debug, Clone, Copy, Default)]
struct Counters {
    truncated: u64,
    acks_sent: u64,
}

fn totals(
    monitor: &Monitor,
    counters: Counters,
    streams: Option<&StreamListener>,
    now: Time,
) -> Totals {
    // The session table's iterator knows its length; count only if it ever stops knowing.
    let sessions = match monitor.sessions().size_hint() {
        (low, Some(high)) if low == high => low,
        _ => monitor.sessions().count(),
    };
    Totals {
        at: now,
        stats: monitor.stats().clone(),
        truncated: counters.truncated,
        acks_sent: counters.acks_sent,
        sessions,
        streams: streams.map(StreamListener::counters),
    }
}

/// The server thread's side of the channel.
struct Publisher {
    channel: Arc<Channel>,
}

impl Publisher {
    fn totals(&self, totals: Totals) {
        self.channel.lock().totals = totals;
    }

    /// Copies the session table for the readers waiting (every session if `whole`, else as
    /// many as they list): one pass over the table, no sorting.
    fn table(&self, monitor: &Monitor, totals: Totals, whole: bool) {
        let (asked, buffer, limit) = {
            let mut shared = self.channel.lock();
            let limit = std::mem::take(&mut shared.limit);
            (shared.asked, shared.buffer.take(), limit)
        };
        let mut entries = buffer.unwrap_or_default();
        let limit = if whole { usize::MAX } else { limit };
        select_silent_longest(monitor, limit, &mut entries);
        let table = Arc::new(Table {
            totals: totals.clone(),
            entries,
        });
        {
            let mut shared = self.channel.lock();
            shared.totals = totals;
            shared.answered = asked;
            shared.copies += 1;
            let previous = std::mem::replace(&mut shared.table, table);
            shared.retired.push(previous);
        }
        self.channel.answered.notify_all();
    }
}

/// Binds the UDP socket and, with TCP, the listener on its port. For port 0 the kernel picks a
/// port free for UDP, which a TCP socket may hold (another connection's ephemeral port): then
/// another is picked, a few times.
fn bind(cfg: &ServerConfig) -> io::Result<(std::net::UdpSocket, SocketAddr, Option<TcpSide>)> {
    let mut attempts = 0;
    loop {
        let socket = crate::net::bind_udp(cfg.listen, cfg.reuse_port)?;
        socket.set_read_timeout(Some(WAIT))?;
        if cfg.kernel_timestamps {
            crate::net::receive_kernel_timestamps(&socket)?;
        }
        let local = socket.local_addr()?;
        match cfg
            .tcp
            .map(|t| TcpSide::new(&socket, local, t, &cfg.monitor))
            .transpose()
        {
            Ok(tcp) => return Ok((socket, local, tcp)),
            Err(e)
                if e.kind() == io::ErrorKind::AddrInUse
                    && cfg.listen.port() == 0
                    && attempts < 8 =>
            {
                attempts += 1;
            }
            Err(e) => return Err(e),
        }
    }
}

impl MonitorServer {
    /// Binds and starts serving; `on_update` receives every fresh update.
    pub fn start(cfg: ServerConfig, mut on_update: Option<OnUpdate>) -> io::Result<Self> {
        let (socket, local, mut tcp) = bind(&cfg)?;
        let recv_buffer = crate::net::grow_buffers(&socket)?;
        tracing::debug!(listen = %local, recv_buffer, tcp = tcp.is_some(), "monitor server started");
        let stop = Arc::new(AtomicBool::new(false));
        let channel = Arc::new(Channel {
            shared: Mutex::new(Shared::default()),
            answered: Condvar::new(),
            wanted: AtomicBool::new(false),
        });
        let (stop_t, channel_t) = (stop.clone(), channel.clone());
        let thread = std::thread::Builder::new()
            .name("acp-monitor".into())
            .spawn(move || -> io::Result<()> {
                let _finish = Finish(channel_t.clone());
                let publish = Publisher { channel: channel_t };
                let mut monitor = Monitor::new(cfg.monitor.clone(), clock::now());
                let mut rx = RecvBatch::new(cfg.batch);
                let mut tx = SendBatch::new(cfg.batch);
                let mut counters = Counters::default();
                let (mut next_totals, mut next_table) = (clock::now(), clock::now());
                let mut scratch = vec![0u8; monitor.ack_capacity()];
                let mut feedback_seen = 0;
                let mut answers = AckPacer::new(cfg.ack_interval);
                let mut serve = || -> io::Result<()> {
                    while !stop_t.load(Ordering::Relaxed) {
                        // With TCP, wait in epoll; without, in `recvmmsg` itself.
                        let udp_ready = match tcp.as_mut() {
                            None => true,
                            Some(t) => t.wait()?,
                        };
                        let received = if udp_ready {
                            rx.recv(&socket)?
                        } else {
                            Vec::new()
                        };
                        if let Some(t) = tcp.as_mut() {
                            // A full batch may have left datagrams behind.
                            t.udp_ready = received.len() >= cfg.batch.max(1);
                        }
                        if let Some(cell) = &cfg.feedback {
                            feedback_seen = cell.apply(feedback_seen, &mut monitor);
                            scratch.resize(monitor.ack_capacity(), 0);
                        }
                        let now = clock::now();
                        for r in &received {
                            let Some(peer) = r.from else { continue };
                            if r.truncated {
                                // Its length field cannot be checked against what was cut off.
                                counters.truncated += 1;
                                continue;
                            }
                            let data = rx.slot(r);
                            if let Ok(h) = monitor.handle_datagram(now, peer, data, tx.next_slot())
                            {
                                if answers.due(now, peer) {
                                    tx.push(h.ack_len, &peer);
                                }
                                if let (Some(d), Some(cb)) = (h.delivery, on_update.as_mut()) {
                                    cb(&d, r.kernel_ns);
                                }
                            }
                            if tx.is_full() {
                                counters.acks_sent += tx.flush(&socket)? as u64;
                            }
                        }
                        counters.acks_sent += tx.flush(&socket)? as u64;
                        if let Some(t) = tcp.as_mut() {
                            t.saturated =
                                t.listener.serve(now, t.poll.registry(), |peer, frame| {
                                    // Read after the bytes arrived: an update is never younger.
                                    let now = clock::now();
                                    let handled = monitor.handle_stream_update(
                                        now,
                                        peer,
                                        frame,
                                        &mut scratch,
                                    );
                                    if let (Ok(Some(d)), Some(cb)) = (handled, on_update.as_mut()) {
                                        cb(&d, None);
                                    }
                                });
                        }
                        monitor.handle_timeout(now);
                        while monitor.poll_event().is_some() {}
                        // At most one table per `snapshot_every`, however often readers ask.
                        if now >= next_table && publish.channel.wanted.swap(false, Ordering::AcqRel)
                        {
                            publish.table(
                                &monitor,
                                totals(&monitor, counters, tcp.as_ref().map(|t| &t.listener), now),
                                false,
                            );
                            next_table = now + cfg.snapshot_every;
                            next_totals = next_table;
                        } else if now >= next_totals {
                            publish.totals(totals(
                                &monitor,
                                counters,
                                tcp.as_ref().map(|t| &t.listener),
                                now,
                            ));
                            next_totals = now + cfg.snapshot_every;
                        }
                    }
                    Ok(())
                };
                let result = serve();
                // The final table, for `stop` and any reader still waiting.
                publish.table(
                    &monitor,
                    totals(
                        &monitor,
                        counters,
                        tcp.as_ref().map(|t| &t.listener),
                        clock::now(),
                    ),
                    true,
                );
                result
            })?;
        Ok(MonitorServer {
            local,
            stop,
            channel,
            thread: Some(thread),
        })
    }

    /// CPU time the server thread has used so far (see [`crate::clock::thread_cpu_time`]).
    pub fn cpu_time(&self) -> Option<Duration> {
        self.thread.as_ref().and_then(crate::clock::thread_cpu_time)
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// The latest monitor-wide counters: published every `snapshot_every` (and with every
    /// [`snapshot`](MonitorServer::snapshot)); reading them costs the server thread nothing.
    pub fn totals(&self) -> Totals {
        self.channel.lock().totals.clone()
    }

    /// Counters and every session, as of the server thread's next loop turn after this call
    /// (within about 20 ms, or `snapshot_every` after the previous copy, whichever is later).
    /// Blocks until then. The server thread only copies its session table, in one pass, and at
    /// most once per `snapshot_every` whatever the number of readers; the reports are built and
    /// sorted on the calling thread. Once the server has stopped, returns its final state.
    pub fn snapshot(&self) -> Snapshot {
        self.snapshot_silent_longest(usize::MAX)
    }

    /// As [`MonitorServer::snapshot`], with only the `n` sessions silent the longest (the
    /// earliest latest update; all if there are at most `n`), ordered by key. The server
    /// thread keeps only those as it passes over its table, so listing a few sessions of a
    /// million copies a few.
    pub fn snapshot_silent_longest(&self, n: usize) -> Snapshot {
        // Memory for the copy, made ready here (see `Shared::buffer`).
        let (capacity, retired, needed) = {
            let mut shared = self.channel.lock();
            let capacity = table_capacity(n, shared.totals.sessions);
            let needed = !shared.finished
                && shared
                    .buffer
                    .as_ref()
                    .is_none_or(|b| b.capacity() < capacity);
            let retired = std::mem::take(&mut shared.retired);
            (capacity, retired, needed)
        };
        let mut reuse = None;
        for table in retired {
            if let (Ok(table), None) = (Arc::try_unwrap(table), &reuse) {
                reuse = Some(table.entries);
            }
        }
        // Freed after the lock: the smaller buffer this one replaces, or this one if another
        // reader's came first.
        let mut buffer = needed.then(|| table_buffer(reuse, capacity));
        let table = {
            let mut shared = self.channel.lock();
            if buffer.is_some()
                && shared
                    .buffer
                    .as_ref()
                    .is_none_or(|b| b.capacity() < capacity)
            {
                std::mem::swap(&mut shared.buffer, &mut buffer);
            }
            shared.limit = shared.limit.max(n);
            shared.asked += 1;
            let ticket = shared.asked;
            self.channel.wanted.store(true, Ordering::Release);
            while shared.answered < ticket && !shared.finished {
                shared = self
                    .channel
                    .answered
                    .wait(shared)
                    .unwrap_or_else(PoisonError::into_inner);
            }
            shared.table.clone()
        };
        table.snapshot(n)
    }

    /// Stops the server and returns its final snapshot.
    pub fn stop(mut self) -> io::Result<Snapshot> {
        self.shutdown()?;
        let snapshot = self.snapshot();
        tracing::debug!(
            listen = %self.local,
            sessions = snapshot.totals.sessions,
            datagrams = snapshot.totals.stats.datagrams,
            "monitor server stopped"
        );
        Ok(snapshot)
    }

    fn shutdown(&mut self) -> io::Result<()> {
        self.stop.store(true, Ordering::Relaxed);
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(result)) => result,
            Some(Err(_)) => Err(io::Error::other("monitor thread panicked")),
            None => Ok(()),
        }
    }
}

impl Drop for MonitorServer {
    fn drop(&mut self) {
        let _ = self.shutdown();
    }
}

#[cfg(test)]
mod tests {
    use std::net::UdpSocket;

    use acp_core::wire::{Ack, Update};

    use super::*;

    #[test]
    fn an_ack_interval_answers_each_peer_once_per_interval() {
        let (a, b): (SocketAddr, SocketAddr) =
            ("10.0.0.1:1".parse().unwrap(), "10.0.0.2:1".parse().unwrap());
        let mut every = AckPacer::new(None);
        assert!((0..3).all(|i| every.due(Time::from_millis(i), a)));
        let mut paced = AckPacer::new(Some(Duration::from_millis(100)));
        let answered: Vec<u64> = (0..=250)
            .step_by(10)
            .filter(|&ms| paced.due(Time::from_millis(ms), a))
            .collect();
        assert_eq!(answered, [0, 100, 200]);
        // Each peer has its own interval.
        assert!(paced.due(Time::from_millis(250), b));
        assert!(!paced.due(Time::from_millis(260), b));
    }

    fn server() -> MonitorServer {
        let mut cfg = ServerConfig::new("127.0.0.1:0".parse().unwrap(), MonitorConfig::default());
        cfg.snapshot_every = Duration::from_millis(10);
        MonitorServer::start(cfg, None).unwrap()
    }

    /// Sends one update of each of `sessions` from `socket` and waits for their ACKs.
    fn updates(socket: &UdpSocket, to: SocketAddr, sessions: std::ops::Range<u64>, seq: u64) {
        let mut buf = [0u8; 256];
        for session in sessions.clone() {
            let u = Update {
                flags: 0,
                session,
                seq,
                gen_ts: seq,
                acked_seq: seq - 1,
                hold_ns: 0,
                cookie: None,
                payload: b"x",
            };
            let n = u.encode(&mut buf).unwrap();
            socket.send_to(&buf[..n], to).unwrap();
        }
        for _ in sessions {
            let n = socket.recv(&mut buf).unwrap();
            assert_eq!(Ack::decode(&buf[..n]).unwrap().seq, seq);
        }
    }

    fn client() -> UdpSocket {
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        socket
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        socket
    }

    #[test]
    fn the_session_table_is_copied_only_when_a_reader_asks() {
        let server = server();
        let socket = client();
        updates(&socket, server.local_addr(), 1..6, 1);
        // Many totals periods pass; the totals follow, the session table is never copied.
        while server.totals().stats.acks < 5 {
            std::thread::sleep(Duration::from_millis(5));
        }
        std::thread::sleep(Duration::from_millis(50));
        let totals = server.totals();
        assert_eq!((totals.sessions, totals.stats.delivered), (5, 5));
        assert_eq!(server.channel.lock().copies, 0);
        // A reader asks: every session, in key order, with totals of the same instant.
        let snap = server.snapshot();
        assert_eq!(server.channel.lock().copies, 1);
        assert_eq!(snap.totals.sessions, 5);
        let ids: Vec<u64> = snap.sessions.iter().map(|s| s.key.session).collect();
        assert_eq!(ids, [1, 2, 3, 4, 5]);
        let key = snap.sessions[2].key;
        assert_eq!(snap.session(&key).unwrap().stats.delivered, 1);
        // The next snapshot sees what happened since.
        updates(&socket, server.local_addr(), 6..8, 1);
        assert_eq!(server.snapshot().sessions.len(), 7);
        let last = server.stop().unwrap();
        assert_eq!((last.sessions.len(), last.totals.stats.acks), (7, 7));
    }

    /// Sessions heard from at four distinct times: a reader of the two silent the longest
    /// gets those two, and the server copied no more than twice two.
    #[test]
    fn a_listing_of_the_silent_longest_copies_only_what_it_lists() {
        let server = server();
        let socket = client();
        for batch in [1..3, 3..5, 5..7, 7..9] {
            updates(&socket, server.local_addr(), batch, 1);
            std::thread::sleep(Duration::from_millis(5));
        }
        // Sessions 1 and 2 speak again: 3 and 4 are now the silent longest.
        updates(&socket, server.local_addr(), 1..3, 2);
        let snap = server.snapshot_silent_longest(2);
        let ids: Vec<u64> = snap.sessions.iter().map(|s| s.key.session).collect();
        assert_eq!(ids, [3, 4]);
        assert_eq!(snap.totals.sessions, 8);
        assert!(server.channel.lock().table.entries.len() <= 4);
        assert_eq!(server.snapshot_silent_longest(20).sessions.len(), 8);
        // The final table has them all, whatever the last reader listed.
        assert_eq!(server.stop().unwrap().sessions.len(), 8);
    }

    #[test]
    fn select_silent_longest_keeps_the_earliest_whatever_the_order() {
        let key = |session| SessionKey {
            peer: "127.0.0.1:9".parse().unwrap(),
            session,
        };
        let mut monitor = Monitor::new(MonitorConfig::default(), Time::ZERO);
        let mut ack = [0u8; 128];
        // Sessions 0..50 heard from at 50, 49, …, 1 ms: the silent longest are the highest ids.
        for id in 0..50u64 {
            let u = Update {
                flags: 0,
                session: id,
                seq: 1,
                gen_ts: 0,
                acked_seq: 0,
                hold_ns: 0,
                cookie: None,
                payload: b"",
            };
            let mut buf = [0u8; 64];
            let n = u.encode(&mut buf).unwrap();
            let peer = key(id).peer;
            monitor
                .handle_datagram(Time::from_millis(50 - id), peer, &buf[..n], &mut ack)
                .unwrap();
        }
        for limit in [0, 1, 7, 25, 49, 50, 80] {
            let mut entries = Vec::with_capacity(table_capacity(limit, 50));
            let capacity = entries.capacity();
            select_silent_longest(&monitor, limit, &mut entries);
            let mut ids: Vec<u64> = entries.iter().map(|(k, _)| k.session).collect();
            ids.sort_unstable();
            let expected: Vec<u64> = (50 - limit.min(50) as u64..50).collect();
            assert_eq!(ids, expected, "limit {limit}");
            // The server thread never grows the buffer a reader made ready.
            assert_eq!(entries.capacity(), capacity, "limit {limit}");
        }
    }

    #[test]
    fn concurrent_readers_are_all_answered_and_none_waits_after_stop() {
        let server = server();
        updates(&client(), server.local_addr(), 1..4, 1);
        std::thread::scope(|scope| {
            let readers: Vec<_> = (0..8)
                .map(|_| scope.spawn(|| server.snapshot().sessions.len()))
                .collect();
            for r in readers {
                assert_eq!(r.join().unwrap(), 3);
            }
        });
        let copies = server.channel.lock().copies;
        assert!((1..=8).contains(&copies), "{copies}");
        let mut server = server;
        server.shutdown().unwrap();
        // Stopped: a reader gets the final table at once.
        assert_eq!(server.snapshot().sessions.len(), 3);
    }

    #[test]
    fn the_table_is_copied_at_most_once_per_snapshot_every() {
        let mut cfg = ServerConfig::new("127.0.0.1:0".parse().unwrap(), MonitorConfig::default());
        cfg.snapshot_every = Duration::from_secs(3600);
        let mut server = MonitorServer::start(cfg, None).unwrap();
        updates(&client(), server.local_addr(), 1..3, 1);
        assert_eq!(server.snapshot().sessions.len(), 2);
        std::thread::scope(|scope| {
            // A second reader within the hour waits...
            let reader = scope.spawn(|| server.snapshot().sessions.len());
            while server.channel.lock().asked < 2 {
                std::thread::sleep(Duration::from_millis(1));
            }
            // ...through many turns of the server's loop without a copy...
            std::thread::sleep(Duration::from_millis(100));
            assert_eq!(server.channel.lock().copies, 1);
            // ...until the server stops and makes its final one.
            server.stop.store(true, Ordering::Relaxed);
            assert_eq!(reader.join().unwrap(), 2);
        });
        server.shutdown().unwrap();
        assert_eq!(server.channel.lock().copies, 2);
    }
}
