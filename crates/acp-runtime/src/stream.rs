//! ACP updates over TCP, for comparing ACP with TCP on one path: the framing both ends use, and
//! the monitor side's listener.
//!
//! A frame is a 4-byte big-endian length followed by one ACP update exactly as a datagram carries
//! it ([`acp_core::wire::Update`]), so the monitor handles it with the same code, statistics and
//! true age ([`acp_core::Monitor::handle_stream_update`]). TCP delivers every frame in order; the
//! monitor sends nothing back (TCP's own ACKs are the transport's business).
//!
//! [`StreamListener`] is the monitor's side: its connection table, for a server loop that waits
//! in `mio` (epoll on Linux) beside its UDP socket, so that a wake-up costs the descriptors that
//! are ready, not every open one. It is built so that TCP cannot take the monitor from its UDP
//! sources (`docs/SECURITY.md`, "TCP on the monitor's port"):
//! - **fair turns**: a turn reads at most [`READ_CHUNK`] from a connection and [`TURN_BYTES`] or
//!   [`TURN_FRAMES`] in all, round-robin; connections with bytes left wait for the next turn, which the server
//!   starts after serving its UDP socket again. A turn that used its whole budget is followed by
//!   a pause of up to [`crate::server`]'s `TCP_PAUSE` that a datagram ends at once: the server
//!   thread keeps sleeping between turns, so on a busy machine the scheduler still wakes it
//!   promptly for a datagram;
//! - **bounded table**: at most `max_connections`, of which one network (IPv4 /24, IPv6 /48)
//!   holds at most its share ([`acp_core::prefix::PrefixShare`]), as for the monitor's sessions;
//! - **bounded time and memory**: a connection silent for `idle_timeout`, or whose unfinished
//!   frame is older than `frame_timeout`, is closed; a connection buffers at most one unfinished
//!   frame and one read; a frame length outside what an update can be closes the connection;
//! - **out of descriptors** (`EMFILE`, `ENFILE`): accepting stops for [`ACCEPT_BACKOFF`], is
//!   counted and logged once per episode, and the loop never spins on a listener it cannot
//!   serve.
//!
//! Expiry is checked once per [`SWEEP_EVERY`] (one pass over the table), not per wake-up.

use std::collections::VecDeque;
use std::io::{self, Read};
use std::net::SocketAddr;
use std::time::Duration;

use acp_core::prefix::PrefixShare;
use acp_core::wire::{Update, HEADER_LEN};
use acp_core::Time;
use mio::net::{TcpListener, TcpStream};
use mio::{Interest, Registry, Token};

/// Most bytes one read takes from one connection.
pub const READ_CHUNK: usize = 16 * 1024;
/// Most bytes one turn reads from all connections together.
pub const TURN_BYTES: usize = 4 * READ_CHUNK;
/// A turn ends after the read that completed this many frames (small frames cost the monitor
/// more per byte than large ones).
pub const TURN_FRAMES: usize = 256;
/// Most connections accepted in one turn.
const ACCEPT_PER_TURN: usize = 64;
/// How long accepting pauses once the process is out of descriptors.
pub const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);
/// How often idle connections and stalled frames are looked for.
pub const SWEEP_EVERY: Duration = Duration::from_millis(250);
/// The listener's token; connections take the tokens after it.
pub const LISTENER: Token = Token(1);

/// Bytes of the length prefix.
pub const PREFIX_LEN: usize = 4;
/// Longest frame body: the longest update a datagram can carry.
pub const MAX_FRAME: usize = 65_535;

/// Appends `update` to `out` as one frame.
pub fn encode_frame(update: &Update<'_>, out: &mut Vec<u8>) {
    let len = update.encoded_len();
    out.extend_from_slice(&(len as u32).to_be_bytes());
    let start = out.len();
    out.resize(start + len, 0);
    update
        .encode(&mut out[start..])
        .expect("the buffer was sized by encoded_len");
}

/// A frame length outside `HEADER_LEN..=MAX_FRAME`: the stream is not ACP framing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BadLength(pub u32);

/// Reassembles frames from the bytes of one connection.
#[derive(Debug, Default)]
pub struct FrameReader {
    buf: Vec<u8>,
}

impl FrameReader {
    /// Appends bytes received.
    pub fn push(&mut self, data: &[u8]) {
        self.buf.extend_from_slice(data);
    }

    /// Bytes of an unfinished frame held.
    pub fn pending(&self) -> usize {
        self.buf.len()
    }

    /// Hands every complete frame body to `f`, in order, and keeps the incomplete rest.
    pub fn drain(&mut self, mut f: impl FnMut(&[u8])) -> Result<(), BadLength> {
        let mut at = 0;
        let result = loop {
            let Some(prefix) = self.buf.get(at..at + PREFIX_LEN) else {
                break Ok(());
            };
            let len = u32::from_be_bytes(prefix.try_into().expect("four bytes"));
            if !(HEADER_LEN..=MAX_FRAME).contains(&(len as usize)) {
                break Err(BadLength(len));
            }
            let body = at + PREFIX_LEN;
            let Some(frame) = self.buf.get(body..body + len as usize) else {
                break Ok(());
            };
            f(frame);
            at = body + len as usize;
        };
        self.buf.drain(..at);
        result
    }
}

/// Limits of a [`StreamListener`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StreamLimits {
    /// Most connections open at once.
    pub max_connections: usize,
    /// Most of `max_connections` one network prefix may hold, as a fraction (1 = no limit).
    pub max_prefix_share: f64,
    /// A connection that sends nothing for this long is closed.
    pub idle_timeout: Duration,
    /// A frame must arrive whole within this long of its first byte.
    pub frame_timeout: Duration,
}

/// What a [`StreamListener`] counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StreamCounters {
    /// Connections accepted and served.
    pub accepted: u64,
    /// Connections closed at once because `max_connections` were open.
    pub refused: u64,
    /// Connections closed at once because their network held its share of the table.
    pub refused_prefix_share: u64,
    /// Connections closed for a frame length no update can have.
    pub bad_framing: u64,
    /// Connections closed after `idle_timeout` without a byte.
    pub idle_closed: u64,
    /// Connections closed because a frame did not arrive whole within `frame_timeout`.
    pub frame_timeouts: u64,
    /// Times accepting failed for want of file descriptors (`EMFILE`, `ENFILE`) and paused.
    pub fd_exhausted: u64,
    /// Connections open now.
    pub open: u64,
}

struct Connection {
    stream: TcpStream,
    peer: SocketAddr,
    frames: FrameReader,
    /// Last byte received (or the accept).
    last_data: Time,
    /// When the unfinished frame held in `frames` began, if any.
    partial_since: Option<Time>,
    /// Waiting in the turn queue.
    queued: bool,
}

/// Why a connection is closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Close {
    Ended,
    BadFraming,
    Idle,
    FrameTimeout,
}

/// The monitor's TCP connections: accepts, reads fairly and expires them, never blocking.
pub struct StreamListener {
    listener: TcpListener,
    slots: Vec<Option<Connection>>,
    free: Vec<usize>,
    open: usize,
    /// Connections that may have bytes to read, in turn order.
    turns: VecDeque<usize>,
    shares: PrefixShare,
    limits: StreamLimits,
    counters: StreamCounters,
    chunk: Vec<u8>,
    /// The listener may have connections waiting (edge-triggered: until `accept` says none).
    accept_ready: bool,
    /// Accepting is paused until then (out of descriptors).
    backoff_until: Option<Time>,
    /// The last accept failed for want of descriptors (logged once until one succeeds).
    out_of_fds: bool,
    next_sweep: Time,
}

impl StreamListener {
    /// Listens on `addr` (TCP) and registers with `registry` under [`LISTENER`].
    /// `recv_buffer`: the receive buffer of every connection (bytes; it bounds TCP's receive
    /// window, so it is set on the listener before `listen`, where accepted connections inherit
    /// it and window scaling is chosen to fit).
    pub fn bind(
        addr: SocketAddr,
        recv_buffer: Option<usize>,
        limits: StreamLimits,
        registry: &Registry,
        now: Time,
    ) -> io::Result<Self> {
        let socket = socket2::Socket::new(
            socket2::Domain::for_address(addr),
            socket2::Type::STREAM,
            Some(socket2::Protocol::TCP),
        )?;
        socket.set_reuse_address(true)?;
        if let Some(bytes) = recv_buffer {
            socket.set_recv_buffer_size(bytes)?;
        }
        socket.bind(&addr.into())?;
        socket.listen(1024)?;
        socket.set_nonblocking(true)?;
        let mut listener = TcpListener::from_std(socket.into());
        registry.register(&mut listener, LISTENER, Interest::READABLE)?;
        Ok(StreamListener {
            listener,
            slots: Vec::new(),
            free: Vec::new(),
            open: 0,
            turns: VecDeque::new(),
            shares: PrefixShare::new(limits.max_prefix_share, limits.max_connections),
            limits,
            counters: StreamCounters::default(),
            chunk: vec![0; READ_CHUNK],
            accept_ready: true,
            backoff_until: None,
            out_of_fds: false,
            next_sweep: now + SWEEP_EVERY,
        })
    }

    /// The bound address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// The counters as of now.
    pub fn counters(&self) -> StreamCounters {
        StreamCounters {
            open: self.open as u64,
            ..self.counters
        }
    }

    /// Notes a readiness event for `token` (the listener's or a connection's).
    pub fn on_event(&mut self, token: Token) {
        if token == LISTENER {
            self.accept_ready = true;
            return;
        }
        let Some(i) = token.0.checked_sub(LISTENER.0 + 1) else {
            return;
        };
        if let Some(Some(c)) = self.slots.get_mut(i) {
            if !c.queued {
                c.queued = true;
                self.turns.push_back(i);
            }
        }
    }

    /// Whether work is waiting that needs no new event: bytes left to read, or connections to
    /// accept once a pause is over.
    pub fn has_work(&self, now: Time) -> bool {
        !self.turns.is_empty() || (self.accept_ready && self.backoff_until.is_none_or(|t| now >= t))
    }

    /// The next instant [`StreamListener::serve`] has something to do without an event.
    pub fn next_deadline(&self) -> Time {
        match self.backoff_until {
            Some(t) if self.accept_ready => t.min(self.next_sweep),
            _ => self.next_sweep,
        }
    }

    /// One turn: accepts waiting connections, reads the connections whose turn it is (each
    /// complete frame goes to `f` with its peer), and closes expired ones when due. Returns
    /// whether the turn read all it may ([`TURN_BYTES`], [`TURN_FRAMES`]): connections are
    /// written to faster than it serves them.
    pub fn serve(
        &mut self,
        now: Time,
        registry: &Registry,
        mut f: impl FnMut(SocketAddr, &[u8]),
    ) -> bool {
        self.accept(now, registry);
        let (mut bytes, mut frames) = (0, 0);
        while bytes < TURN_BYTES && frames < TURN_FRAMES {
            let Some(i) = self.turns.pop_front() else {
                break;
            };
            let Some(c) = self.slots.get_mut(i).and_then(Option::as_mut) else {
                continue;
            };
            c.queued = false;
            match read_turn(c, &mut self.chunk, now, &mut f) {
                Ok((0, _)) => {}
                Ok((n, k)) => {
                    bytes += n;
                    frames += k;
                    // Bytes may be left: its next turn comes after the others'.
                    c.queued = true;
                    self.turns.push_back(i);
                }
                Err(why) => self.close(i, why, registry),
            }
        }
        if now >= self.next_sweep {
            self.sweep(now, registry);
        }
        bytes >= TURN_BYTES || frames >= TURN_FRAMES
    }

    fn accept(&mut self, now: Time, registry: &Registry) {
        if !self.accept_ready || self.backoff_until.is_some_and(|t| now < t) {
            return;
        }
        self.backoff_until = None;
        for _ in 0..ACCEPT_PER_TURN {
            match self.listener.accept() {
                Ok((stream, peer)) => {
                    self.out_of_fds = false;
                    self.admit(stream, peer, now, registry);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.accept_ready = false;
                    return;
                }
                Err(e) if matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE)) => {
                    if !self.out_of_fds {
                        tracing::warn!(
                            open = self.open,
                            "out of file descriptors: TCP connections wait {} ms before the \
                             next accept (raise LimitNOFILE, or lower --max-tcp-connections)",
                            ACCEPT_BACKOFF.as_millis()
                        );
                    }
                    self.out_of_fds = true;
                    self.counters.fd_exhausted += 1;
                    self.backoff_until = Some(now + ACCEPT_BACKOFF);
                    return;
                }
                // The peer gave up while queued (ECONNABORTED) and the like: next one.
                Err(_) => {}
            }
        }
    }

    fn admit(&mut self, mut stream: TcpStream, peer: SocketAddr, now: Time, registry: &Registry) {
        if self.open >= self.limits.max_connections {
            self.counters.refused += 1;
            return;
        }
        if !self.shares.admits(peer.ip()) {
            self.counters.refused_prefix_share += 1;
            return;
        }
        let i = self.free.pop().unwrap_or_else(|| {
            self.slots.push(None);
            self.slots.len() - 1
        });
        let token = Token(LISTENER.0 + 1 + i);
        if registry
            .register(&mut stream, token, Interest::READABLE)
            .is_err()
        {
            self.free.push(i);
            self.counters.refused += 1;
            return;
        }
        self.shares.add(peer.ip());
        self.open += 1;
        self.counters.accepted += 1;
        // Bytes may have arrived with the handshake: read them in this turn's round.
        self.slots[i] = Some(Connection {
            stream,
            peer,
            frames: FrameReader::default(),
            last_data: now,
            partial_since: None,
            queued: true,
        });
        self.turns.push_back(i);
    }

    fn close(&mut self, i: usize, why: Close, registry: &Registry) {
        let Some(mut c) = self.slots.get_mut(i).and_then(Option::take) else {
            return;
        };
        let _ = registry.deregister(&mut c.stream);
        if c.queued {
            self.turns.retain(|&j| j != i);
        }
        self.shares.remove(c.peer.ip());
        self.open -= 1;
        self.free.push(i);
        match why {
            Close::Ended => {}
            Close::BadFraming => self.counters.bad_framing += 1,
            Close::Idle => self.counters.idle_closed += 1,
            Close::FrameTimeout => self.counters.frame_timeouts += 1,
        }
    }

    /// Closes connections silent for `idle_timeout` or holding a frame older than
    /// `frame_timeout`: one pass over the table per [`SWEEP_EVERY`].
    fn sweep(&mut self, now: Time, registry: &Registry) {
        self.next_sweep = now + SWEEP_EVERY;
        let limits = self.limits;
        let expired: Vec<(usize, Close)> = self
            .slots
            .iter()
            .enumerate()
            .filter_map(|(i, c)| {
                let c = c.as_ref()?;
                if c.partial_since
                    .is_some_and(|t| now >= t + limits.frame_timeout)
                {
                    Some((i, Close::FrameTimeout))
                } else if now >= c.last_data + limits.idle_timeout {
                    Some((i, Close::Idle))
                } else {
                    None
                }
            })
            .collect();
        for (i, why) in expired {
            self.close(i, why, registry);
        }
    }
}

/// Reads once from `c` (at most `chunk.len()` bytes) and hands its complete frames to `f`.
/// Returns the bytes read (0: none waiting) and the frames completed, or why the connection must
/// close.
fn read_turn(
    c: &mut Connection,
    chunk: &mut [u8],
    now: Time,
    f: &mut impl FnMut(SocketAddr, &[u8]),
) -> Result<(usize, usize), Close> {
    let n = loop {
        match c.stream.read(chunk) {
            // The peer closed the connection.
            Ok(0) => return Err(Close::Ended),
            Ok(n) => break n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok((0, 0)),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => return Err(Close::Ended),
        }
    };
    c.last_data = now;
    c.frames.push(&chunk[..n]);
    let peer = c.peer;
    let mut frames = 0usize;
    c.frames
        .drain(|frame| {
            frames += 1;
            f(peer, frame);
        })
        .map_err(|_| Close::BadFraming)?;
    // A frame's clock starts at its first byte, and a complete frame restarts it.
    c.partial_since = match (c.frames.pending(), c.partial_since) {
        (0, _) => None,
        (_, Some(t)) if frames == 0 => Some(t),
        _ => Some(now),
    };
    Ok((n, frames))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn update(seq: u64, payload: &[u8]) -> Update<'_> {
        Update {
            flags: 0,
            session: 7,
            seq,
            gen_ts: 1_000 * seq,
            acked_seq: 0,
            hold_ns: 0,
            cookie: None,
            payload,
        }
    }

    #[test]
    fn frames_survive_any_split_and_a_bad_length_is_refused() {
        let mut bytes = Vec::new();
        let payloads: [&[u8]; 3] = [b"", b"one", &[9u8; 1000]];
        for (i, p) in payloads.iter().enumerate() {
            encode_frame(&update(i as u64 + 1, p), &mut bytes);
        }
        // Fed one byte at a time or all at once, the same frames come out.
        for step in [1, 7, bytes.len()] {
            let mut r = FrameReader::default();
            let mut got = Vec::new();
            for piece in bytes.chunks(step) {
                r.push(piece);
                r.drain(|f| {
                    let u = match acp_core::wire::Packet::decode(f).unwrap() {
                        acp_core::wire::Packet::Update(u) => u,
                        other => panic!("{other:?}"),
                    };
                    got.push((u.seq, u.payload.to_vec()));
                })
                .unwrap();
            }
            let want: Vec<_> = payloads
                .iter()
                .enumerate()
                .map(|(i, p)| (i as u64 + 1, p.to_vec()))
                .collect();
            assert_eq!(got, want, "step {step}");
        }
        for len in [0u32, HEADER_LEN as u32 - 1, MAX_FRAME as u32 + 1, u32::MAX] {
            let mut r = FrameReader::default();
            r.push(&len.to_be_bytes());
            assert_eq!(r.drain(|_| panic!("no frame")), Err(BadLength(len)));
        }
    }
}
