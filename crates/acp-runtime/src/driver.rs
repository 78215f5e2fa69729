//! Drives one or many ACP sources over one UDP socket, with precise pacing, or over several
//! paths.
//!
//! All sources of a [`SourceSet`] share one socket connected to the monitor (or to a relay in
//! front of it); the monitor tells them apart by session id, and ACKs are routed back to their
//! source by the session id they carry.
//!
//! A *multipath* set ([`SourceSet::multipath`]) has one socket per path, each connected to the
//! path's first hop (a relay or gateway that forwards to the monitor, or the monitor itself);
//! or ([`SourceSet::multipath_bound`]) each bound to a local address of its own (and its
//! interface) and connected to the monitor: a multi-homed host's ways out.
//! Each of its sources is one session over all the paths (flag MULTIPATH, `docs/PROTOCOL.md`):
//! its controller sets the total rate, and an [`acp_core::multipath::PathScheduler`] picks the
//! path(s) of every update. An ACK tells the scheduler which path it came back on (the socket it
//! arrived at) once the source has found it valid. One thread runs everything: it waits in the kernel
//! (`ppoll`) for ACKs until shortly before the earliest deadline of any source, then spins to the
//! deadline and sends, so send instants follow the controllers' schedule to within microseconds
//! rather than the granularity of a timer wheel.
//!
//! The socket's datagrams can be marked with a DSCP ([`SourceSet::set_dscp`]) so that a relay
//! with priority classes, or a real network, treats them accordingly.
//!
//! A source in push mode can be fed through a [`PushFeed`]: another thread (e.g. one reading
//! stdin) sends payloads into it, and the driver wakes at once to offer them to the source. The
//! thread that owns the set can also offer updates directly ([`SourceSet::push`]).
//!
//! A set runs either on a thread of its own ([`SourceSet::run`], blocking, precisely paced) or
//! inside the application's event loop: wait until the set's socket ([`AsRawFd`]) is readable or
//! the deadline [`SourceSet::drive`] returned has come, then call `drive` again. That costs
//! pacing precision (the event loop's timer decides when updates leave) but no thread.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixDatagram;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use acp_core::multipath::{PathRule, PathScheduler, PathSet, PathStats, MAX_PATHS};
use acp_core::source::{SourceStats, Transmit};
use acp_core::wire::{HEADER_LEN, MAX_IPV4_PAYLOAD};
use acp_core::{AppMode, Controller, Source, SourceConfig, Time};
use acp_netmodel::driver::on_timer;

use crate::clock;
use crate::net::{self, poll_fds};

/// One source to run.
pub struct SourceSpec {
    /// A label for reports.
    pub name: String,
    /// Its controller.
    pub controller: Box<dyn Controller>,
    /// Its parameters.
    pub config: SourceConfig,
    /// Where its payloads come from.
    pub payload: Payload,
}

/// Where a source's payloads come from.
pub enum Payload {
    /// Generate at will: `n` bytes, the first 8 of them the update's sequence in the session.
    Synthetic(usize),
    /// Push mode, fed through the [`PushFeed`] returned by [`SourceSet::push_feed`].
    Push,
}

/// Appends the synthetic payload of update `seq` to `out`: `len` bytes, the first 8 of them `seq`
/// (big-endian), then zeros; shorter payloads keep the first `len` bytes of `seq`.
pub fn synthetic_payload(seq: u64, len: usize, out: &mut Vec<u8>) {
    let bytes = seq.to_be_bytes();
    out.extend((0..len).map(|i| bytes.get(i).copied().unwrap_or(0)));
}

/// The sending half of a push-mode feed.
pub struct PushFeed {
    tx: UnixDatagram,
}

impl PushFeed {
    /// Offers a fresh update (at most 64 KiB).
    pub fn offer(&self, payload: &[u8]) -> io::Result<()> {
        self.tx.send(payload).map(|_| ())
    }
}

/// What the driver reports as it runs and when it ends.
#[derive(Debug, Clone)]
pub struct SourceReport {
    /// The label.
    pub name: String,
    /// The controller's name.
    pub controller: String,
    /// The session id.
    pub session: u64,
    /// The source's statistics.
    pub stats: SourceStats,
    /// A multipath source's paths: each one's first hop and state (empty for a single path).
    pub paths: Vec<(SocketAddr, PathStats)>,
}

/// When to stop.
#[derive(Debug, Clone, Default)]
pub struct RunLimits {
    /// Wall-clock duration.
    pub duration: Option<Duration>,
    /// Updates sent by all sources together (probes included).
    pub count: Option<u64>,
    /// Raised by another thread (e.g. on SIGINT) to stop.
    pub stop: Option<Arc<AtomicBool>>,
}

/// Errors of sends relative to their scheduled instants, in nanoseconds (late is positive).
#[derive(Debug, Clone, Default)]
pub struct PacingLog {
    /// One entry per update sent after initialisation.
    pub errors_ns: Vec<i64>,
}

struct Entry {
    name: String,
    source: Source,
    /// A multipath set's path choices for this source.
    scheduler: Option<PathScheduler>,
    /// Bumped at every reschedule; heap entries with an older generation are stale.
    generation: u64,
}

/// Many sources, one socket (one per path), one thread.
pub struct SourceSet {
    /// One socket per path.
    sockets: Vec<UdpSocket>,
    /// What names path `k` in reports: the first hop it is connected to, or (bound paths) its
    /// local address.
    targets: Vec<SocketAddr>,
    /// The scheduler rule of a multipath set.
    rule: Option<PathRule>,
    entries: Vec<Entry>,
    by_session: HashMap<u64, usize>,
    heap: BinaryHeap<Reverse<(Time, usize, u64)>>,
    push: Option<(UnixDatagram, usize)>,
    pacing: Option<PacingLog>,
}

impl AsRawFd for SourceSet {
    /// The (first path's) socket: readable when ACKs are waiting for [`SourceSet::drive`]. A
    /// multipath set has one socket per path: wait on all of [`SourceSet::raw_fds`].
    fn as_raw_fd(&self) -> RawFd {
        self.sockets[0].as_raw_fd()
    }
}

/// A UDP socket bound to an ephemeral port of `target`'s family and connected to it.
fn connected_socket(target: SocketAddr) -> io::Result<UdpSocket> {
    let bind: SocketAddr = if target.is_ipv4() {
        "0.0.0.0:0".parse().map_err(io::Error::other)?
    } else {
        "[::]:0".parse().map_err(io::Error::other)?
    };
    connect_from(UdpSocket::bind(bind)?, target)
}

/// `socket` connected to `target`, with large buffers, non-blocking.
fn connect_from(socket: UdpSocket, target: SocketAddr) -> io::Result<UdpSocket> {
    socket.connect(target)?;
    // Room for the ACKs of many sources arriving while the thread is sending.
    let recv_buffer = net::grow_buffers(&socket)?;
    tracing::debug!(%target, local = %socket.local_addr()?, recv_buffer, "source socket connected");
    socket.set_nonblocking(true)?;
    Ok(socket)
}

/// Sends `datagram` on `socket`; a full buffer or a refusal (monitor not up yet) is a loss the
/// source's timers handle, not an error.
fn send_lossy(socket: &UdpSocket, datagram: &[u8]) -> io::Result<()> {
    match socket.send(datagram) {
        Ok(_) => Ok(()),
        Err(err)
            if matches!(
                err.kind(),
                io::ErrorKind::WouldBlock | io::ErrorKind::ConnectionRefused
            ) =>
        {
            Ok(())
        }
        Err(err) => Err(err),
    }
}

/// A random 64-bit session id from the operating system's generator (`getrandom`).
///
/// # Panics
/// If the operating system cannot supply random bytes, which `getrandom` reports only on
/// platforms without a usable source: a predictable session id would let anyone guess it.
pub fn random_session_id() -> u64 {
    getrandom::u64().expect("the operating system's random source failed")
}

impl SourceSet {
    /// A socket bound to an ephemeral port of `target`'s family and connected to it.
    pub fn new(target: SocketAddr) -> io::Result<Self> {
        Self::over(&[target], None)
    }

    /// A multipath set: one socket per path, connected to `paths[k]` (1 to
    /// [`MAX_PATHS`] first hops that all lead to one monitor). Every source added sends one
    /// session over all of them, with flag MULTIPATH, on the paths `rule` picks.
    pub fn multipath(paths: &[SocketAddr], rule: PathRule) -> io::Result<Self> {
        Self::check_paths(paths.len())?;
        Self::over(paths, Some(rule))
    }

    /// A multipath set over a multi-homed host's ways out: path `k`'s socket is bound to the
    /// local address `paths[k].0` and, if given, to the interface `paths[k].1`
    /// (`SO_BINDTODEVICE`, so that it leaves by that interface whatever the routing table says
    /// of `monitor`), and connected to `monitor`. Reports name each path by its local address.
    pub fn multipath_bound(
        monitor: SocketAddr,
        paths: &[(SocketAddr, Option<&str>)],
        rule: PathRule,
    ) -> io::Result<Self> {
        Self::check_paths(paths.len())?;
        let sockets = paths
            .iter()
            .map(|&(local, device)| {
                let socket = UdpSocket::bind(local)?;
                if let Some(d) = device {
                    socket2::SockRef::from(&socket).bind_device(Some(d.as_bytes()))?;
                }
                connect_from(socket, monitor)
            })
            .collect::<io::Result<Vec<_>>>()?;
        let targets = paths.iter().map(|&(local, _)| local).collect();
        Ok(Self::with_sockets(sockets, targets, Some(rule)))
    }

    fn check_paths(n: usize) -> io::Result<()> {
        if n == 0 || n > MAX_PATHS {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("a multipath source needs 1 to {MAX_PATHS} paths, got {n}"),
            ));
        }
        Ok(())
    }

    fn over(targets: &[SocketAddr], rule: Option<PathRule>) -> io::Result<Self> {
        let sockets = targets
            .iter()
            .map(|&t| connected_socket(t))
            .collect::<io::Result<Vec<_>>>()?;
        Ok(Self::with_sockets(sockets, targets.to_vec(), rule))
    }

    fn with_sockets(
        sockets: Vec<UdpSocket>,
        targets: Vec<SocketAddr>,
        rule: Option<PathRule>,
    ) -> Self {
        SourceSet {
            sockets,
            targets,
            rule,
            entries: Vec::new(),
            by_session: HashMap::new(),
            heap: BinaryHeap::new(),
            push: None,
            pacing: None,
        }
    }

    /// Marks every datagram the set sends with `dscp` (0–63; `IP_TOS` or `IPV6_TCLASS`).
    pub fn set_dscp(&self, dscp: u8) -> io::Result<()> {
        self.sockets.iter().try_for_each(|s| net::set_dscp(s, dscp))
    }

    /// Every socket of the set, one per path: wait until any is readable before
    /// [`SourceSet::drive`].
    pub fn raw_fds(&self) -> Vec<RawFd> {
        self.sockets.iter().map(|s| s.as_raw_fd()).collect()
    }

    /// Adds a source starting now; returns its session id.
    pub fn add(&mut self, spec: SourceSpec) -> u64 {
        let mut session = random_session_id();
        while self.by_session.contains_key(&session) {
            session = random_session_id();
        }
        let mode = match spec.payload {
            Payload::Synthetic(n) => {
                let mut seq = 0u64;
                AppMode::GenerateAtWill(Box::new(move |_, out: &mut Vec<u8>| {
                    seq += 1;
                    synthetic_payload(seq, n, out);
                }))
            }
            Payload::Push => AppMode::Push,
        };
        let mut source = Source::new(spec.config, spec.controller, mode, session, clock::now());
        let scheduler = self.rule.map(|rule| {
            source.set_multipath();
            PathScheduler::new(rule, self.sockets.len())
                .expect("SourceSet::multipath checked the number of paths")
        });
        let idx = self.entries.len();
        self.entries.push(Entry {
            name: spec.name,
            source,
            scheduler,
            generation: 0,
        });
        self.by_session.insert(session, idx);
        self.reschedule(idx);
        session
    }

    /// A feed for the push-mode source `session` (one feed per set).
    pub fn push_feed(&mut self, session: u64) -> io::Result<PushFeed> {
        let idx = self.index_of(session)?;
        let (rx, tx) = UnixDatagram::pair()?;
        rx.set_nonblocking(true)?;
        self.push = Some((rx, idx));
        Ok(PushFeed { tx })
    }

    /// Offers a fresh update to the push-mode source `session`, replacing its unsent one (if
    /// any). Payloads longer than an update carries over IPv4 are refused.
    pub fn push(&mut self, session: u64, payload: &[u8]) -> io::Result<()> {
        if payload.len() > MAX_IPV4_PAYLOAD {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "an update carries at most {MAX_IPV4_PAYLOAD} bytes, got {}",
                    payload.len()
                ),
            ));
        }
        let idx = self.index_of(session)?;
        self.entries[idx].source.push(clock::now(), payload);
        self.reschedule(idx);
        Ok(())
    }

    fn index_of(&self, session: u64) -> io::Result<usize> {
        self.by_session
            .get(&session)
            .copied()
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no such session"))
    }

    /// One turn of an application's event loop: takes the ACKs and pushed updates waiting, sends
    /// every update due by now, and returns the next deadline (`None`: nothing is scheduled until
    /// an ACK or a push arrives). Call it again when a socket ([`SourceSet::raw_fds`]) is
    /// readable or the deadline has come, whichever is first; it never blocks.
    pub fn drive(&mut self) -> io::Result<Option<Time>> {
        self.receive_acks()?;
        self.receive_pushes();
        if let Some(deadline) = self.next_deadline() {
            let now = clock::now();
            if deadline <= now {
                self.serve_due(now, deadline, &mut 0)?;
            }
        }
        Ok(self.next_deadline())
    }

    /// Records the pacing error of every update from now on.
    pub fn record_pacing(&mut self) {
        self.pacing = Some(PacingLog::default());
    }

    /// The pacing log, if recording.
    pub fn pacing(&self) -> Option<&PacingLog> {
        self.pacing.as_ref()
    }

    fn reschedule(&mut self, idx: usize) {
        let next = self.entries[idx].source.poll_timeout();
        self.arm(idx, next);
    }

    /// Makes `next` source `idx`'s only deadline in the heap.
    fn arm(&mut self, idx: usize, next: Option<Time>) {
        let e = &mut self.entries[idx];
        e.generation += 1;
        if let Some(t) = next {
            self.heap.push(Reverse((t, idx, e.generation)));
        }
    }

    /// The earliest valid deadline, dropping stale heap entries.
    fn next_deadline(&mut self) -> Option<Time> {
        while let Some(&Reverse((t, idx, generation))) = self.heap.peek() {
            if self.entries[idx].generation == generation {
                return Some(t);
            }
            self.heap.pop();
        }
        None
    }

    /// Restarts every source's time averages now (the end of a warm-up): their reports' `avg_age`
    /// and `avg_backlog` then cover only what follows.
    pub fn restart_averages(&mut self) {
        let now = clock::now();
        for e in &mut self.entries {
            e.source.restart_averages(now);
        }
    }

    /// Reports for every source as of now.
    pub fn reports(&self) -> Vec<SourceReport> {
        let now = clock::now();
        self.entries
            .iter()
            .map(|e| SourceReport {
                name: e.name.clone(),
                controller: e.source.controller_name(),
                session: e.source.session(),
                stats: e.source.stats(now),
                paths: e.scheduler.as_ref().map_or_else(Vec::new, |s| {
                    (0..s.paths())
                        .filter_map(|k| Some((self.targets[k], s.path_stats(k, now)?)))
                        .collect()
                }),
            })
            .collect()
    }

    fn receive_acks(&mut self) -> io::Result<()> {
        let mut buf = [0u8; 2048];
        for path in 0..self.sockets.len() {
            loop {
                match self.sockets[path].recv(&mut buf) {
                    Ok(n) => self.handle_reply(path, clock::now(), &buf[..n]),
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    // ICMP errors (monitor not up yet) surface here; the source's timers
                    // handle it.
                    Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => continue,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(e),
                }
            }
        }
        Ok(())
    }

    /// A datagram that came back over `path` at `now`.
    fn handle_reply(&mut self, path: usize, now: Time, data: &[u8]) {
        // Route by the session id at bytes 8..16; the source validates the rest.
        let field = |at: std::ops::Range<usize>| {
            data.get(at)
                .and_then(|b| <[u8; 8]>::try_from(b).ok())
                .map(u64::from_be_bytes)
        };
        let idx = field(8..16).and_then(|s| self.by_session.get(&s).copied());
        // Unroutable datagrams are given to the first source, which counts them as invalid.
        let idx = idx.unwrap_or(0);
        let Some(e) = self.entries.get_mut(idx) else {
            return;
        };
        match &mut e.scheduler {
            Some(s) => s.handle_datagram(&mut e.source, path, now, data),
            None => e.source.handle_datagram(now, data),
        };
        self.reschedule(idx);
    }

    fn receive_pushes(&mut self) {
        let Some((rx, idx)) = &self.push else { return };
        let idx = *idx;
        let mut buf = vec![0u8; 65_536];
        let mut offered = false;
        while let Ok(n) = rx.recv(&mut buf) {
            self.entries[idx].source.push(clock::now(), &buf[..n]);
            offered = true;
        }
        if offered {
            self.reschedule(idx);
        }
    }

    /// Sends whatever is due at `now` for every source whose deadline has come.
    fn serve_due(&mut self, now: Time, deadline: Time, sent: &mut u64) -> io::Result<()> {
        let mut buf = Vec::with_capacity(HEADER_LEN + 1500);
        while let Some(t) = self.next_deadline() {
            if t > now {
                break;
            }
            let Some(Reverse((_, idx, _))) = self.heap.pop() else {
                break;
            };
            let (sockets, pacing) = (&self.sockets, &mut self.pacing);
            let Entry {
                source, scheduler, ..
            } = &mut self.entries[idx];
            let mut send = |datagram: &[u8], tx: Transmit, paths: PathSet| {
                let at = Instant::now();
                for path in paths.iter() {
                    send_lossy(&sockets[path], datagram)?;
                }
                *sent += 1;
                if let (Some(log), false) = (pacing.as_mut(), tx.probe) {
                    let late = clock::to_time(at).as_nanos() as i128 - deadline.as_nanos() as i128;
                    log.errors_ns.push(late as i64);
                }
                Ok::<(), io::Error>(())
            };
            let next = match scheduler {
                Some(s) => s.on_timer(source, now, &mut buf, send)?,
                None => on_timer(source, now, &mut buf, |datagram, tx| {
                    send(datagram, tx, PathSet::single(0))
                })?,
            };
            self.arm(idx, next);
        }
        Ok(())
    }

    /// Runs until a limit is reached, calling `tick` every `tick_every` with the current reports.
    pub fn run(
        &mut self,
        limits: &RunLimits,
        tick_every: Duration,
        mut tick: impl FnMut(&[SourceReport]),
    ) -> io::Result<Vec<SourceReport>> {
        clock::tighten_timer_slack();
        let start = Instant::now();
        let end = limits.duration.map(|d| start + d);
        let mut next_tick = start + tick_every;
        let mut sent = 0u64;
        let readable = |fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        let mut fds: Vec<libc::pollfd> = self.raw_fds().into_iter().map(readable).collect();
        if let Some((rx, _)) = &self.push {
            fds.push(readable(rx.as_raw_fd()));
        }
        loop {
            let now = Instant::now();
            let stopped = limits
                .stop
                .as_ref()
                .is_some_and(|s| s.load(Ordering::Relaxed));
            if stopped || end.is_some_and(|e| now >= e) || limits.count.is_some_and(|c| sent >= c) {
                break;
            }
            if now >= next_tick {
                tick(&self.reports());
                next_tick += tick_every;
            }
            let deadline = self.next_deadline();
            let wake = deadline
                .map(clock::to_instant)
                .unwrap_or(now + Duration::from_millis(50))
                .min(next_tick)
                .min(end.unwrap_or(now + Duration::from_secs(3600)));
            let sleep = wake
                .saturating_duration_since(now)
                .saturating_sub(clock::SPIN_MARGIN);
            if !sleep.is_zero() {
                poll_fds(&mut fds, sleep)?;
            }
            self.receive_acks()?;
            self.receive_pushes();
            if let Some(deadline) = self.next_deadline() {
                let at = clock::to_instant(deadline);
                if at <= Instant::now() + clock::SPIN_MARGIN {
                    clock::wait_until(at);
                    self.serve_due(clock::now(), deadline, &mut sent)?;
                }
            }
        }
        Ok(self.reports())
    }
}

#[cfg(test)]
mod tests {
    use super::synthetic_payload;

    #[test]
    fn a_synthetic_payload_starts_with_its_sequence_then_zeros() {
        let mut out = vec![0xff];
        synthetic_payload(0x0102_0304_0506_0708, 10, &mut out);
        assert_eq!(out, [0xff, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0]);
        out.clear();
        synthetic_payload(0x0102_0304_0506_0708, 3, &mut out);
        assert_eq!(out, [1, 2, 3]);
    }
}
