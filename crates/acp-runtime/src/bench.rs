//! Measurements behind `acp bench`: pacing precision of the source driver, the throughput of
//! the monitor server next to a minimal batched UDP echo server driven the same way, and of
//! several monitor servers sharing one port next to one.

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use acp_core::seal::{Keyring, SessionCipher};
use acp_core::wire::{Cookie, Update, COOKIE_LEN};
use acp_core::{Fixed, MonitorConfig, SourceConfig};

use crate::driver::{Payload, RunLimits, SourceSet, SourceSpec};
use crate::net::{RecvBatch, SendBatch};
use crate::server::{MonitorServer, ServerConfig};

/// Distribution of send-time errors at one rate.
#[derive(Debug, Clone, PartialEq)]
pub struct PacingResult {
    /// Updates per second asked for.
    pub rate: f64,
    /// Updates measured.
    pub samples: usize,
    /// Median absolute error (µs).
    pub p50_us: f64,
    /// 99th percentile absolute error (µs).
    pub p99_us: f64,
    /// Largest absolute error (µs).
    pub max_us: f64,
}

/// Sends at a fixed `rate` to a monitor on loopback for `duration`, or until `stop` is raised,
/// and measures how far each send instant is from its scheduled instant.
pub fn pacing(
    rate: f64,
    duration: Duration,
    stop: Option<Arc<AtomicBool>>,
) -> io::Result<PacingResult> {
    let server = MonitorServer::start(
        ServerConfig::new(
            "127.0.0.1:0".parse().map_err(io::Error::other)?,
            MonitorConfig::default(),
        ),
        None,
    )?;
    let mut set = SourceSet::new(server.local_addr())?;
    set.add(SourceSpec {
        name: "pacing".into(),
        controller: Box::new(Fixed::new(rate)),
        config: SourceConfig {
            min_rate: rate,
            max_rate: rate,
            ..SourceConfig::default()
        },
        payload: Payload::Synthetic(32),
    });
    set.record_pacing();
    let limits = RunLimits {
        duration: Some(duration),
        stop,
        ..RunLimits::default()
    };
    set.run(&limits, Duration::from_secs(3600), |_| {})?;
    server.stop()?;
    let mut abs: Vec<f64> = set
        .pacing()
        .map(|log| {
            log.errors_ns
                .iter()
                .map(|e| e.unsigned_abs() as f64 / 1e3)
                .collect()
        })
        .unwrap_or_default();
    abs.sort_by(f64::total_cmp);
    let pct = |p: f64| -> f64 {
        if abs.is_empty() {
            return f64::NAN;
        }
        abs[((abs.len() - 1) as f64 * p).round() as usize]
    };
    Ok(PacingResult {
        rate,
        samples: abs.len(),
        p50_us: pct(0.5),
        p99_us: pct(0.99),
        max_us: pct(1.0),
    })
}

/// Throughput of one server under the closed-loop load generator.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadResult {
    /// Datagrams sent by the generator per second.
    pub sent_per_sec: f64,
    /// Replies received per second.
    pub replies_per_sec: f64,
    /// Replies received.
    pub replies: u64,
    /// CPU time the server thread spent per reply (ns; NaN where it could not be read). Its
    /// inverse is what one core can serve, however the machine's other work shares that core.
    pub server_cpu_ns_per_reply: f64,
}

impl LoadResult {
    /// Replies one fully busy server core would send per second (NaN if unknown).
    pub fn capacity_per_sec(&self) -> f64 {
        1e9 / self.server_cpu_ns_per_reply
    }
}

/// A minimal batched UDP echo server: answers every datagram with its first 20 bytes. The
/// baseline the monitor server is compared with.
pub struct EchoServer {
    local: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl EchoServer {
    /// Binds to `listen` and serves until stopped.
    pub fn start(listen: SocketAddr, batch: usize) -> io::Result<Self> {
        let socket = UdpSocket::bind(listen)?;
        socket.set_read_timeout(Some(Duration::from_millis(20)))?;
        let local = socket.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let stop_t = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut rx = RecvBatch::new(batch);
            let mut tx = SendBatch::new(batch);
            while !stop_t.load(Ordering::Relaxed) {
                let Ok(received) = rx.recv(&socket) else {
                    continue;
                };
                for r in &received {
                    let Some(peer) = r.from else { continue };
                    let n = r.len.min(20);
                    tx.next_slot()[..n].copy_from_slice(&rx.slot(r)[..n]);
                    tx.push(n, &peer);
                }
                let _ = tx.flush(&socket);
            }
        });
        Ok(EchoServer {
            local,
            stop,
            thread: Some(thread),
        })
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }
}

impl Drop for EchoServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Drives `target` from one thread with valid ACP updates of `sessions` synthetic sessions,
/// keeping up to `window` datagrams in flight, for `duration`. Each reply frees a window slot;
/// if nothing comes back for 5 ms the window is reopened (replies were lost). With `keys`, every
/// update is sealed with the first key and each session echoes the cookie it is sent until it is
/// acknowledged. Session `s` sends from the `s % sockets`-th of `sockets` sockets (distinct
/// source ports, so that servers sharing a port with `SO_REUSEPORT` each get a share).
pub fn load(
    target: SocketAddr,
    sessions: u64,
    window: usize,
    duration: Duration,
    keys: Option<&Keyring>,
    sockets: usize,
) -> io::Result<LoadResult> {
    let mut sockets = (0..sockets.max(1))
        .map(|_| {
            let socket = UdpSocket::bind("127.0.0.1:0")?;
            socket.set_nonblocking(true)?;
            Ok((socket, SendBatch::new(64)))
        })
        .collect::<io::Result<Vec<_>>>()?;
    let mut rx = RecvBatch::new(64);
    let mut seqs = vec![0u64; sessions.max(1) as usize];
    // Session s has id s + 1.
    let ciphers: Vec<SessionCipher> = keys.map_or_else(Vec::new, |ring| {
        (1..=seqs.len() as u64)
            .map(|id| SessionCipher::new(ring.first(), id))
            .collect()
    });
    let mut cookies: Vec<Option<[u8; COOKIE_LEN]>> = vec![None; ciphers.len()];
    let (mut sent, mut replies, mut in_flight) = (0u64, 0u64, 0usize);
    let start = Instant::now();
    let mut last_progress = start;
    let payload = [0u8; 20];
    let mut next_session = 0usize;
    while start.elapsed() < duration {
        while in_flight < window {
            let s = next_session;
            let from = s % sockets.len();
            let tx = &mut sockets[from].1;
            if tx.is_full() {
                break;
            }
            next_session = (next_session + 1) % seqs.len();
            seqs[s] += 1;
            let u = Update {
                flags: 0,
                session: s as u64 + 1,
                seq: seqs[s],
                gen_ts: crate::clock::now().as_nanos(),
                acked_seq: seqs[s] - 1,
                hold_ns: 0,
                cookie: cookies.get(s).copied().flatten(),
                payload: &payload,
            };
            let slot = tx.next_slot();
            let mut n = u.encode(slot).map_err(io::Error::other)?;
            if let Some(cipher) = ciphers.get(s) {
                n = cipher.seal(slot, n).map_err(io::Error::other)?;
            }
            tx.push(n, &target);
            in_flight += 1;
        }
        let mut got = 0;
        for (socket, tx) in &mut sockets {
            sent += tx.flush(socket)? as u64;
            let received = rx.recv(socket)?;
            got += received.len();
            if !ciphers.is_empty() {
                // Sealed: learn each session's cookie (the ACKs need no parsing).
                for r in &received {
                    if let Ok(c) = Cookie::decode(rx.slot(r)) {
                        if let Some(slot) = cookies.get_mut(c.session.wrapping_sub(1) as usize) {
                            *slot = Some(c.cookie);
                        }
                    }
                }
            }
        }
        if got > 0 {
            replies += got as u64;
            in_flight = in_flight.saturating_sub(got);
            last_progress = Instant::now();
        } else if last_progress.elapsed() > Duration::from_millis(5) {
            in_flight = 0;
            last_progress = Instant::now();
        }
    }
    let secs = start.elapsed().as_secs_f64();
    Ok(LoadResult {
        sent_per_sec: sent as f64 / secs,
        replies_per_sec: replies as f64 / secs,
        replies,
        server_cpu_ns_per_reply: f64::NAN,
    })
}

/// One round: the echo baseline and the monitor server under the same load, back to back.
#[derive(Debug, Clone, PartialEq)]
pub struct MonitorRound {
    /// The ACP monitor server.
    pub monitor: LoadResult,
    /// Updates the monitor handled per second (from its own counters).
    pub monitor_handled_per_sec: f64,
    /// The echo baseline.
    pub echo: LoadResult,
    /// The monitor server with pre-shared keys, sealed load (when asked for).
    pub sealed: Option<LoadResult>,
}

impl MonitorRound {
    /// Monitor ACKs per echo reply in this round.
    pub fn ratio(&self) -> f64 {
        self.monitor.replies_per_sec / self.echo.replies_per_sec
    }

    /// Sealed ACKs per unauthenticated ACK in this round (NaN if not measured).
    pub fn sealed_ratio(&self) -> f64 {
        self.sealed.as_ref().map_or(f64::NAN, |s| {
            s.replies_per_sec / self.monitor.replies_per_sec
        })
    }

    /// Sealed capacity per unauthenticated capacity (one core's worth of each; NaN if not
    /// measured): the throughput cost of authentication to the monitor itself.
    pub fn sealed_capacity_ratio(&self) -> f64 {
        self.sealed.as_ref().map_or(f64::NAN, |s| {
            s.capacity_per_sec() / self.monitor.capacity_per_sec()
        })
    }
}

/// All rounds of the monitor benchmark.
#[derive(Debug, Clone, PartialEq)]
pub struct MonitorBench {
    /// In the order they ran.
    pub rounds: Vec<MonitorRound>,
}

impl MonitorBench {
    /// The median over the rounds of `figure` (NaN without rounds).
    pub fn median(&self, figure: impl Fn(&MonitorRound) -> f64) -> f64 {
        median(self.rounds.iter().map(figure))
    }
}

/// The median of `values` (NaN if there are none).
pub fn median(values: impl Iterator<Item = f64>) -> f64 {
    let mut v: Vec<f64> = values.collect();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// Pins the calling thread (and threads it spawns later) to one CPU, if the machine has it.
fn pin_to_cpu(cpu: usize) {
    // SAFETY: cpu_set_t is plain old data; CPU_SET stays within it for cpu < CPU_SETSIZE.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if cpu < libc::CPU_SETSIZE as usize {
            libc::CPU_SET(cpu, &mut set);
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
        }
    }
}

/// Lets the calling thread run on every CPU again.
fn unpin() {
    // SAFETY: as in `pin_to_cpu`.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for cpu in 0..(libc::CPU_SETSIZE as usize) {
            libc::CPU_SET(cpu, &mut set);
        }
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

/// The monitor's settings under the load generator: room for its `sessions`, all from one local
/// host.
fn loaded_config(sessions: u64) -> MonitorConfig {
    MonitorConfig {
        max_sessions: sessions as usize + 16,
        max_prefix_share: 1.0,
        ..MonitorConfig::default()
    }
}

/// A server the load generator drives: where it listens and how much CPU its thread has used.
trait Served {
    fn addr(&self) -> SocketAddr;
    fn cpu_time(&self) -> Option<Duration>;
}

impl Served for EchoServer {
    fn addr(&self) -> SocketAddr {
        self.local
    }
    fn cpu_time(&self) -> Option<Duration> {
        self.thread.as_ref().and_then(crate::clock::thread_cpu_time)
    }
}

impl Served for MonitorServer {
    fn addr(&self) -> SocketAddr {
        self.local_addr()
    }
    fn cpu_time(&self) -> Option<Duration> {
        MonitorServer::cpu_time(self)
    }
}

/// Monitor servers sharing one port: their CPU time is the sum of their threads'.
impl Served for Vec<MonitorServer> {
    fn addr(&self) -> SocketAddr {
        self[0].local_addr()
    }
    fn cpu_time(&self) -> Option<Duration> {
        self.iter().map(MonitorServer::cpu_time).sum()
    }
}

/// The load of [`on_separate_cores`].
#[derive(Clone, Copy)]
struct Load<'a> {
    sessions: u64,
    window: usize,
    duration: Duration,
    keys: Option<&'a Keyring>,
    sockets: usize,
}

/// Starts a server (or servers) on CPU 0 and drives it with [`load`] from CPU 1 (one core each);
/// records the servers' CPU time per reply.
fn on_separate_cores<S: Served>(
    start: impl FnOnce() -> io::Result<S>,
    l: Load<'_>,
) -> io::Result<(S, LoadResult)> {
    pin_to_cpu(0);
    let server = start();
    pin_to_cpu(1);
    let result = server.and_then(|s| {
        let before = s.cpu_time();
        let mut r = load(
            s.addr(),
            l.sessions,
            l.window,
            l.duration,
            l.keys,
            l.sockets,
        )?;
        if let (Some(a), Some(b)) = (before, s.cpu_time()) {
            r.server_cpu_ns_per_reply = b.saturating_sub(a).as_nanos() as f64 / r.replies as f64;
        }
        Ok((s, r))
    });
    unpin();
    result
}

/// Runs [`load`] against an [`EchoServer`] and against a [`MonitorServer`], each server on CPU 0
/// and the load generator on CPU 1, for `rounds` rounds of `duration` per server. The order
/// alternates between rounds, and each round's ratio compares two runs seconds apart, so slow
/// drifts of a shared machine cancel out of the median ratio. Raising `stop` ends the benchmark
/// after the round under way (at least one round is run).
pub fn monitor(
    sessions: u64,
    window: usize,
    duration: Duration,
    rounds: usize,
    keys: Option<&Keyring>,
    stop: &AtomicBool,
) -> io::Result<MonitorBench> {
    let any: SocketAddr = "127.0.0.1:0".parse().map_err(io::Error::other)?;
    let echo = || -> io::Result<LoadResult> {
        let (server, r) = on_separate_cores(
            || EchoServer::start(any, 64),
            Load {
                sessions,
                window,
                duration,
                keys: None,
                sockets: 1,
            },
        )?;
        drop(server);
        Ok(r)
    };
    let serve = |keys: Option<&Keyring>| -> io::Result<(LoadResult, f64)> {
        let cfg = MonitorConfig {
            keys: keys.cloned(),
            ..loaded_config(sessions)
        };
        let started = Instant::now();
        let (server, r) = on_separate_cores(
            || MonitorServer::start(ServerConfig::new(any, cfg), None),
            Load {
                sessions,
                window,
                duration,
                keys,
                sockets: 1,
            },
        )?;
        let secs = started.elapsed().as_secs_f64();
        let snapshot = server.stop()?;
        Ok((r, snapshot.totals.acks_sent as f64 / secs))
    };
    let mut out = Vec::with_capacity(rounds);
    for round in 0..rounds {
        if round > 0 && stop.load(Ordering::Relaxed) {
            tracing::info!("interrupted: {round} of {rounds} rounds done");
            break;
        }
        tracing::debug!("monitor benchmark round {} of {rounds}", round + 1);
        let (echo, (monitor, handled)) = if round % 2 == 0 {
            (echo()?, serve(None)?)
        } else {
            let m = serve(None)?;
            (echo()?, m)
        };
        let sealed = keys.map(|k| serve(Some(k))).transpose()?.map(|(r, _)| r);
        out.push(MonitorRound {
            monitor,
            monitor_handled_per_sec: handled,
            echo,
            sealed,
        });
    }
    Ok(MonitorBench { rounds: out })
}

/// Source ports the load generator sends from in [`monitor_workers`]: enough 4-tuples for the
/// kernel's hash to give every worker a share.
pub const WORKER_LOAD_SOCKETS: usize = 16;

/// One round of [`monitor_workers`]: one server, then several sharing its port, or the reverse.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkersRound {
    /// One monitor server.
    pub one: LoadResult,
    /// The workers, sharing one port with `SO_REUSEPORT`.
    pub many: LoadResult,
    /// ACKs each worker sent.
    pub acks_by_worker: Vec<u64>,
}

impl WorkersRound {
    /// ACKs of the workers per ACK of one server, in this round.
    pub fn ratio(&self) -> f64 {
        self.many.replies_per_sec / self.one.replies_per_sec
    }
}

/// Runs [`load`] from [`WORKER_LOAD_SOCKETS`] sockets against one [`MonitorServer`] and against
/// `workers` servers sharing one port with `SO_REUSEPORT`, for `rounds` rounds of `duration`
/// each, alternating the order. As in [`monitor`], the servers are started on CPU 0 (the workers
/// all share it) and the load generator runs on CPU 1: on a two-core machine this measures what
/// spreading a port over several sockets costs on one core, not scaling over cores.
pub fn monitor_workers(
    workers: usize,
    sessions: u64,
    window: usize,
    duration: Duration,
    rounds: usize,
) -> io::Result<Vec<WorkersRound>> {
    let any: SocketAddr = "127.0.0.1:0".parse().map_err(io::Error::other)?;
    let load = Load {
        sessions,
        window,
        duration,
        keys: None,
        sockets: WORKER_LOAD_SOCKETS,
    };
    let serve = |n: usize| -> io::Result<(LoadResult, Vec<u64>)> {
        let start = || -> io::Result<Vec<MonitorServer>> {
            let mut servers: Vec<MonitorServer> = Vec::with_capacity(n);
            for _ in 0..n {
                let listen = servers.first().map_or(any, MonitorServer::local_addr);
                let mut cfg = ServerConfig::new(listen, loaded_config(sessions));
                cfg.reuse_port = true;
                servers.push(MonitorServer::start(cfg, None)?);
            }
            Ok(servers)
        };
        let (servers, r) = on_separate_cores(start, load)?;
        let acks = servers
            .into_iter()
            .map(|s| s.stop().map(|snap| snap.totals.acks_sent))
            .collect::<io::Result<Vec<u64>>>()?;
        Ok((r, acks))
    };
    let mut out = Vec::with_capacity(rounds);
    for round in 0..rounds {
        let ((one, _), (many, acks_by_worker)) = if round % 2 == 0 {
            (serve(1)?, serve(workers)?)
        } else {
            let many = serve(workers)?;
            (serve(1)?, many)
        };
        out.push(WorkersRound {
            one,
            many,
            acks_by_worker,
        });
    }
    Ok(out)
}

/// Reply latency of the monitor server while it holds many live sessions.
#[derive(Debug, Clone, PartialEq)]
pub struct LatencyResult {
    /// Sessions the monitor held at the end.
    pub sessions: u64,
    /// Updates per second sent during the measurement.
    pub rate: f64,
    /// Updates sent during the measurement.
    pub sent: u64,
    /// ACKs received for them.
    pub replies: u64,
    /// Median time from sending an update to receiving its ACK (µs).
    pub p50_us: f64,
    /// 99th percentile of the same (µs).
    pub p99_us: f64,
    /// 99.9th percentile of the same (µs).
    pub p999_us: f64,
    /// Longest (µs).
    pub max_us: f64,
    /// Times a reader asked for the per-session list during the measurement.
    pub session_reads: u64,
    /// Resident memory of the process before the server started (bytes).
    pub rss_before: u64,
    /// The same once every session was established, before the measurement.
    pub rss_held: u64,
    /// The same after the measurement (with the session-list reads, if any), less the delays
    /// recorded (8 bytes each).
    pub rss_end: u64,
}

impl LatencyResult {
    /// What the process grew by from `rss_before` to `rss`, per session held (bytes; NaN
    /// without sessions). It includes the load generator's 9 bytes per session (its next
    /// sequence and ACK count of each), which live in the same process.
    pub fn bytes_per_session(&self, rss: u64) -> f64 {
        if self.sessions == 0 {
            return f64::NAN;
        }
        rss.saturating_sub(self.rss_before) as f64 / self.sessions as f64
    }
}

/// The `p` quantile of sorted `v` (NaN if empty).
fn quantile(v: &[u64], p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v[((v.len() - 1) as f64 * p).round() as usize] as f64
}

/// Encodes an update of `session` with sequence `seq`, generated now, into `tx`.
fn push_update(tx: &mut SendBatch, target: &SocketAddr, session: u64, seq: u64) -> io::Result<()> {
    let u = Update {
        flags: 0,
        session,
        seq,
        gen_ts: crate::clock::now().as_nanos(),
        acked_seq: seq - 1,
        hold_ns: 0,
        cookie: None,
        payload: &[0u8; 20],
    };
    let n = u.encode(tx.next_slot()).map_err(io::Error::other)?;
    tx.push(n, target);
    Ok(())
}

/// Establishes `sessions` sessions (ids 1 to `sessions`) at `target`, keeping at most 256
/// datagrams in flight: sends two updates back to back (enough to leave probation) for every
/// session that has not had both of a pair ACKed yet, until all have or 30 s (and 30 µs per
/// session: a million take about 10 s on a quiet machine) have passed. Returns the next
/// sequence of every session.
fn establish(socket: &UdpSocket, target: SocketAddr, sessions: u64) -> io::Result<Vec<u64>> {
    let mut tx = SendBatch::new(64);
    let mut rx = RecvBatch::new(64);
    let mut seqs = vec![1u64; sessions as usize];
    let mut acked = vec![0u8; sessions as usize];
    let give_up = Instant::now()
        + Duration::from_secs(30)
        + Duration::from_micros(30).saturating_mul(u32::try_from(sessions).unwrap_or(u32::MAX));
    while Instant::now() < give_up {
        let missing: Vec<usize> = (0..acked.len()).filter(|&i| acked[i] < 2).collect();
        if missing.is_empty() {
            break;
        }
        for &i in &missing {
            acked[i] = 0;
        }
        let (mut next, mut in_flight, mut last_progress) = (0usize, 0usize, Instant::now());
        while next < missing.len() || in_flight > 0 {
            while next < missing.len() && in_flight < 256 && tx.is_empty() {
                let i = missing[next];
                for _ in 0..2 {
                    push_update(&mut tx, &target, i as u64 + 1, seqs[i])?;
                    seqs[i] += 1;
                }
                next += 1;
                in_flight += 2;
                tx.flush(socket)?;
            }
            let got = rx.recv(socket)?;
            for r in &got {
                if let Ok(ack) = acp_core::wire::Ack::decode(rx.slot(r)) {
                    if let Some(n) = acked.get_mut((ack.session as usize).wrapping_sub(1)) {
                        *n = n.saturating_add(1);
                    }
                }
            }
            if !got.is_empty() {
                in_flight = in_flight.saturating_sub(got.len());
                last_progress = Instant::now();
            } else if last_progress.elapsed() > Duration::from_millis(5) {
                in_flight = 0;
                last_progress = Instant::now();
            }
        }
    }
    Ok(seqs)
}

/// A reader of the session list beside the latency measurement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionReads {
    /// How often it reads.
    pub every: Duration,
    /// Sessions it lists, those silent the longest ([`MonitorServer::snapshot_silent_longest`];
    /// `usize::MAX`: all). `acp monitor`'s reports list 20 by default.
    pub listed: usize,
}

/// Holds `sessions` sessions live in a monitor server (on CPU 0) and, from CPU 1, sends updates
/// of them round-robin at `rate` per second (open loop) for `duration`, measuring the time from
/// each send to its ACK. With `reads`, another thread reads the per-session list that often, as
/// `acp monitor`'s reports do. Raising `stop` ends the measurement early. The
/// process's resident memory is read before the server starts, once the sessions are
/// established and at the end ([`LatencyResult::bytes_per_session`]).
pub fn monitor_latency(
    sessions: u64,
    rate: f64,
    duration: Duration,
    reads: Option<SessionReads>,
    stop: &AtomicBool,
) -> io::Result<LatencyResult> {
    let any: SocketAddr = "127.0.0.1:0".parse().map_err(io::Error::other)?;
    let cfg = MonitorConfig {
        // The load generator sends no cookies.
        cookie_threshold: 2.0,
        // A session is sent an update every `sessions / rate` (50 s for a million at 20,000/s),
        // and establishing a million takes longer than the default 30 s: all stay held.
        idle_timeout: Duration::from_secs(3600),
        ..loaded_config(sessions)
    };
    let rss_before = crate::flood::rss();
    pin_to_cpu(0);
    let server = MonitorServer::start(ServerConfig::new(any, cfg), None);
    pin_to_cpu(1);
    let result = server.and_then(|server| {
        let r = measure_latency(&server, sessions, rate, duration, reads, stop);
        // Not `stop`: its final snapshot copies every session.
        let held = server.totals().sessions;
        drop(server);
        Ok(LatencyResult {
            sessions: held as u64,
            rss_before,
            ..r?
        })
    });
    unpin();
    result
}

fn measure_latency(
    server: &MonitorServer,
    sessions: u64,
    rate: f64,
    duration: Duration,
    reads: Option<SessionReads>,
    stop: &AtomicBool,
) -> io::Result<LatencyResult> {
    let target = server.local_addr();
    let socket = UdpSocket::bind("127.0.0.1:0")?;
    socket.set_nonblocking(true)?;
    let mut seqs = establish(&socket, target, sessions.max(1))?;
    // Let the last ACKs of the set-up drain.
    std::thread::sleep(Duration::from_millis(50));
    let mut rx = RecvBatch::new(64);
    while !rx.recv(&socket)?.is_empty() {}
    let rss_held = crate::flood::rss();
    let mut rtts: Vec<u64> = Vec::with_capacity((rate * duration.as_secs_f64()) as usize + 1);
    let mut fds = [libc::pollfd {
        fd: std::os::fd::AsRawFd::as_raw_fd(&socket),
        events: libc::POLLIN,
        revents: 0,
    }];
    // Receives the ACKs waiting, after up to `wait` for the first, and records their delays.
    let mut receive = |rtts: &mut Vec<u64>, wait: Duration| -> io::Result<()> {
        crate::net::poll_fds(&mut fds, wait)?;
        loop {
            let got = rx.recv(&socket)?;
            if got.is_empty() {
                return Ok(());
            }
            let now = crate::clock::now().as_nanos();
            for r in &got {
                if let Ok(ack) = acp_core::wire::Ack::decode(rx.slot(r)) {
                    rtts.push(now.saturating_sub(ack.gen_ts));
                }
            }
        }
    };
    let mut tx = SendBatch::new(64);
    let (mut sent, mut next_session) = (0u64, 0usize);
    let mut drive = || -> io::Result<()> {
        let start = Instant::now();
        while start.elapsed() < duration && !stop.load(Ordering::Relaxed) {
            let due = (start.elapsed().as_secs_f64() * rate) as u64;
            while sent < due {
                let s = next_session;
                next_session = (next_session + 1) % seqs.len();
                push_update(&mut tx, &target, s as u64 + 1, seqs[s])?;
                seqs[s] += 1;
                sent += 1;
                if tx.is_full() {
                    tx.flush(&socket)?;
                }
            }
            tx.flush(&socket)?;
            let next_due = Duration::from_secs_f64((sent + 1) as f64 / rate);
            let wait = next_due.saturating_sub(start.elapsed());
            receive(&mut rtts, wait.min(Duration::from_millis(1)))?;
        }
        // ACKs still on their way.
        let until = Instant::now() + Duration::from_millis(500);
        while Instant::now() < until && (rtts.len() as u64) < sent {
            receive(&mut rtts, Duration::from_millis(10))?;
        }
        Ok(())
    };
    let done = AtomicBool::new(false);
    let reads_made = std::sync::atomic::AtomicU64::new(0);
    std::thread::scope(|scope| {
        if let Some(SessionReads { every, listed }) = reads {
            let (reads, done) = (&reads_made, &done);
            scope.spawn(move || {
                unpin();
                let mut next = Instant::now() + every;
                while !done.load(Ordering::Relaxed) {
                    if Instant::now() < next {
                        std::thread::sleep(Duration::from_millis(5).min(every));
                        continue;
                    }
                    std::hint::black_box(server.snapshot_silent_longest(listed).sessions.len());
                    reads.fetch_add(1, Ordering::Relaxed);
                    next += every;
                }
            });
        }
        let result = drive();
        done.store(true, Ordering::Relaxed);
        result
    })?;
    let rss_end = crate::flood::rss().saturating_sub(8 * rtts.len() as u64);
    rtts.sort_unstable();
    let us = |ns: f64| ns / 1e3;
    Ok(LatencyResult {
        sessions: 0,
        rate,
        sent,
        replies: rtts.len() as u64,
        p50_us: us(quantile(&rtts, 0.5)),
        p99_us: us(quantile(&rtts, 0.99)),
        p999_us: us(quantile(&rtts, 0.999)),
        max_us: us(quantile(&rtts, 1.0)),
        session_reads: reads_made.load(Ordering::Relaxed),
        rss_before: 0,
        rss_held,
        rss_end,
    })
}
