//! ACP updates over TCP, for comparing ACP with TCP on one path: the framing both ends use, and
//! the monitor side's listener.
//!
//! A frame is a 4-byte big-endian length followed by one ACP update exactly as a datagram carries
//! it ([`acp_core::wire::Update`]), so the monitor handles it with the same code, statistics and
//! true age ([`acp_core::Monitor::handle_stream_update`]). TCP delivers every frame in order; the
//! monitor sends nothing back (TCP's own ACKs are the transport's business).
//!
//! [`StreamListener`] accepts connections and reads frames without blocking, for a server loop
//! that waits on its descriptors ([`StreamListener::fds`]) beside its UDP socket. A connection
//! that sends a frame length outside what an update can be is closed and counted.

use std::io::{self, Read};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, RawFd};

use acp_core::wire::{Update, HEADER_LEN};

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

/// What a [`StreamListener`] counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StreamCounters {
    /// Connections accepted and served.
    pub accepted: u64,
    /// Connections closed at once because `max_connections` were open.
    pub refused: u64,
    /// Connections closed for a frame length no update can have.
    pub bad_framing: u64,
    /// Connections open now.
    pub open: u64,
}

struct Connection {
    stream: TcpStream,
    peer: SocketAddr,
    frames: FrameReader,
}

/// Accepts TCP connections and reads ACP frames from them, never blocking.
pub struct StreamListener {
    listener: TcpListener,
    connections: Vec<Connection>,
    max_connections: usize,
    counters: StreamCounters,
    chunk: Vec<u8>,
}

impl StreamListener {
    /// Listens on `addr` (TCP). `recv_buffer`: the receive buffer of every connection (bytes;
    /// it bounds TCP's receive window, so it is set on the listener before `listen`, where
    /// accepted connections inherit it and window scaling is chosen to fit).
    pub fn bind(
        addr: SocketAddr,
        recv_buffer: Option<usize>,
        max_connections: usize,
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
        socket.listen(128)?;
        socket.set_nonblocking(true)?;
        Ok(StreamListener {
            listener: socket.into(),
            connections: Vec::new(),
            max_connections,
            counters: StreamCounters::default(),
            chunk: vec![0; 64 * 1024],
        })
    }

    /// The bound address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// The counters as of now.
    pub fn counters(&self) -> StreamCounters {
        StreamCounters {
            open: self.connections.len() as u64,
            ..self.counters
        }
    }

    /// The descriptors to wait on for reading: the listener, then each connection.
    pub fn fds(&self) -> impl Iterator<Item = RawFd> + '_ {
        std::iter::once(self.listener.as_raw_fd())
            .chain(self.connections.iter().map(|c| c.stream.as_raw_fd()))
    }

    /// Serves the descriptors `ready` says are readable (one flag per [`StreamListener::fds`]
    /// entry, in order): reads what arrived and hands each complete frame to `f` with its peer,
    /// accepts new connections, and closes those that ended or broke the framing.
    pub fn serve(&mut self, ready: &[bool], mut f: impl FnMut(SocketAddr, &[u8])) {
        let mut closed = Vec::new();
        for (i, c) in self.connections.iter_mut().enumerate() {
            if !ready.get(i + 1).copied().unwrap_or(false) {
                continue;
            }
            let keep = loop {
                match c.stream.read(&mut self.chunk) {
                    // The peer closed the connection.
                    Ok(0) => break false,
                    Ok(n) => {
                        c.frames.push(&self.chunk[..n]);
                        let peer = c.peer;
                        if c.frames.drain(|frame| f(peer, frame)).is_err() {
                            self.counters.bad_framing += 1;
                            break false;
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break true,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(_) => break false,
                }
            };
            if !keep {
                closed.push(i);
            }
        }
        for i in closed.into_iter().rev() {
            self.connections.swap_remove(i);
        }
        if ready.first().copied().unwrap_or(false) {
            self.accept_all();
        }
    }

    fn accept_all(&mut self) {
        loop {
            match self.listener.accept() {
                Ok((stream, peer)) => {
                    if self.connections.len() >= self.max_connections
                        || stream.set_nonblocking(true).is_err()
                    {
                        self.counters.refused += 1;
                        continue;
                    }
                    self.counters.accepted += 1;
                    self.connections.push(Connection {
                        stream,
                        peer,
                        frames: FrameReader::default(),
                    });
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                // WouldBlock: none left; anything else (e.g. out of descriptors): try next turn.
                Err(_) => return,
            }
        }
    }
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
