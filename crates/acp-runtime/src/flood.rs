//! `acp bench flood`: the attacks of `docs/SECURITY.md` against a local monitor, measured.
//!
//! Each attack runs against a fresh [`MonitorServer`] on loopback while established sources
//! keep sending at a fixed rate and new sources try to join:
//! - **hold**: one host (one IP address, several ports) opens a whole table's worth of sessions
//!   with two updates each and refreshes each every `refresh`; it reads its replies and echoes
//!   every cookie with two updates (one would leave the session on probation), as a real host
//!   can;
//! - **spoof**: one-shot updates with random session ids from 256 network prefixes that never
//!   read a reply (blind spoofing);
//! - **malformed**: random bytes;
//! - **tcp-writer**: one TCP connection to the monitor's port written to flat out;
//! - **tcp-idle**: connections opened from eight networks, one and a half times each network's
//!   share of the connection table, and left idle: three times what the table holds;
//! - **hold-prefixes**: the hold attack from four networks (127.66–69.0.1), each holding its
//!   quarter of the table: together they fill it. Newcomers are refused while it lasts; once
//!   the attacker stops, one more newcomer measures how long it waits to be admitted;
//! - **seq-jump**: a victim source of its own (127.77.0.1, 200 updates/s, sealed when the
//!   monitor has keys) and, ten times a second, an unsealed update from its address and session
//!   with its sequence 60,000 ahead (what a spoofer that saw the session id sends); reported:
//!   how many of the victim's updates were delivered.
//!
//! The two TCP attacks run against a monitor that accepts TCP, as `acp monitor` does by default;
//! the others against UDP only. [`run_beside`] runs an attack the caller brings against a
//! service of its own beside the monitor (the CLI's metrics endpoint), measured the same way.
//!
//! Linux routes all of 127.0.0.0/8 to the loopback device, so attackers bind to addresses of
//! their own (127.66.0.1, 127.100–103.x.1, 127.99.0.1) and legitimate sources use 127.0.0.1:
//! nothing leaves the host. Reported per attack: the established sources' ACK loss while it
//! ran, how long each newcomer waited for its first ACK, the attacker's share of the table and
//! the process's resident memory.

use std::collections::HashSet;
use std::io::{self, Write};
use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use acp_core::seal::Keyring;
use acp_core::source::AckOutcome;
use acp_core::wire::{Packet, Update, COOKIE_LEN, TAG_LEN};
use acp_core::{Acp, AppMode, Fixed, MonitorConfig, Source, SourceConfig};
use acp_netmodel::rng::Rng;

use crate::clock;
use crate::driver::{random_session_id, Payload, RunLimits, SourceReport, SourceSet, SourceSpec};
use crate::server::{MonitorServer, ServerConfig, TcpConfig};

/// Which attack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attack {
    /// One host holds as many sessions as it can.
    Hold,
    /// Blind one-shot sessions from many prefixes.
    Spoof,
    /// Random bytes.
    Malformed,
    /// One TCP connection written to flat out.
    TcpWriter,
    /// Idle TCP connections from many networks.
    TcpIdle,
    /// Spoofed sequence jumps into a victim's session.
    SeqJump,
    /// Four networks, each holding its share: together the whole table.
    HoldPrefixes,
    /// An attack of the caller's on a service beside the monitor ([`run_beside`]), by name.
    Beside(&'static str),
}

impl Attack {
    /// Every attack of this module, in the order `acp bench flood` runs them.
    pub const ALL: [Attack; 7] = [
        Attack::Hold,
        Attack::Spoof,
        Attack::Malformed,
        Attack::TcpWriter,
        Attack::TcpIdle,
        Attack::SeqJump,
        Attack::HoldPrefixes,
    ];

    /// Its name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Attack::Hold => "hold",
            Attack::Spoof => "spoof",
            Attack::Malformed => "malformed",
            Attack::TcpWriter => "tcp-writer",
            Attack::TcpIdle => "tcp-idle",
            Attack::SeqJump => "seq-jump",
            Attack::HoldPrefixes => "hold-prefixes",
            Attack::Beside(name) => name,
        }
    }

    /// The attack called `name`.
    pub fn from_name(name: &str) -> Option<Attack> {
        Attack::ALL.into_iter().find(|a| a.name() == name)
    }

    fn uses_tcp(self) -> bool {
        matches!(self, Attack::TcpWriter | Attack::TcpIdle)
    }
}

/// Parameters of [`run`].
#[derive(Debug, Clone)]
pub struct FloodConfig {
    /// How long each attack runs.
    pub duration: Duration,
    /// The monitor's table size (`--max-sessions`).
    pub max_sessions: usize,
    /// Sessions the hold attacker tries to keep.
    pub hold_sessions: u64,
    /// How often the hold attacker refreshes each session.
    pub refresh: Duration,
    /// Datagrams per second of the spoof and malformed floods.
    pub flood_rate: f64,
    /// Established sources, and each one's fixed rate (updates/s).
    pub established: usize,
    /// Rate of each established source.
    pub established_rate: f64,
    /// New sources that try to join during each attack, one after another.
    pub newcomers: usize,
    /// Pre-shared keys: the monitor and the legitimate sources seal; attackers cannot.
    pub keys: Option<Keyring>,
}

impl Default for FloodConfig {
    fn default() -> Self {
        FloodConfig {
            duration: Duration::from_secs(15),
            max_sessions: 10_000,
            hold_sessions: 10_000,
            refresh: Duration::from_secs(10),
            flood_rate: 20_000.0,
            established: 20,
            established_rate: 200.0,
            newcomers: 5,
            keys: None,
        }
    }
}

/// What one attack did.
#[derive(Debug, Clone, PartialEq)]
pub struct FloodResult {
    /// Which attack.
    pub attack: Attack,
    /// Datagrams the attacker sent.
    pub attack_sent: u64,
    /// Updates the established sources sent while it ran.
    pub established_sent: u64,
    /// ACKs they received for them.
    pub established_acked: u64,
    /// Time each newcomer waited for its first ACK (`None`: not within 5 s).
    pub admissions: Vec<Option<Duration>>,
    /// Sessions the monitor held at the end.
    pub sessions_held: u64,
    /// Of which the attacker's (hold attack: sessions that got an ACK; tcp-idle: connections
    /// open at the end).
    pub attacker_sessions: u64,
    /// The monitor's TCP counters at the end (TCP attacks).
    pub tcp: Option<crate::stream::StreamCounters>,
    /// The seq-jump attack's victim: updates it sent, and of them those delivered.
    pub victim: Option<(u64, u64)>,
    /// hold-prefixes: how long a newcomer that started as the attacker stopped waited for its
    /// first ACK (`None`: not within [`AFTER_ATTACK_PATIENCE`]).
    pub admission_after_attack: Option<Option<Duration>>,
    /// The monitor's counters at the end.
    pub stats: acp_core::monitor::MonitorStats,
    /// Resident memory of the process before the monitor started and at the end (bytes).
    pub rss_before: u64,
    /// See `rss_before`.
    pub rss_after: u64,
}

impl FloodResult {
    /// Fraction of the established sources' updates that got no ACK.
    pub fn established_loss(&self) -> f64 {
        if self.established_sent == 0 {
            return f64::NAN;
        }
        1.0 - self.established_acked as f64 / self.established_sent as f64
    }

    /// The longest admission, if every newcomer was admitted.
    pub fn worst_admission(&self) -> Option<Duration> {
        self.admissions
            .iter()
            .copied()
            .collect::<Option<Vec<_>>>()?
            .into_iter()
            .max()
    }
}

/// Resident memory of this process (bytes), from `/proc/self/status`.
pub fn rss() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let line = s.lines().find(|l| l.starts_with("VmRSS:"))?;
            let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
            Some(kib * 1024)
        })
        .unwrap_or(0)
}

/// How long the newcomer after the hold-prefixes attack may wait: more than the 30 s after
/// which the monitor forgets a silent session.
pub const AFTER_ATTACK_PATIENCE: Duration = Duration::from_secs(45);

/// Runs `attack` (one of [`Attack::ALL`]) against a fresh monitor.
pub fn run(attack: Attack, cfg: &FloodConfig) -> io::Result<FloodResult> {
    let (mut r, (sent, sessions)) = run_with(attack, cfg, |target, _, stop| match attack {
        Attack::Hold => hold(target, &cfg.hold_plan(&[[127, 66, 0, 1]]), stop),
        Attack::HoldPrefixes => hold(target, &cfg.hold_plan(&HOLD_NETWORKS), stop),
        Attack::Spoof => spoof(target, cfg.flood_rate, stop).map(|n| (n, 0)),
        Attack::Malformed => malformed(target, cfg.flood_rate, stop).map(|n| (n, 0)),
        Attack::TcpWriter => tcp_writer(target, stop).map(|n| (n, 0)),
        Attack::TcpIdle => tcp_idle(target, stop),
        Attack::SeqJump => seq_jump(target, &source_config(cfg), stop),
        Attack::Beside(name) => Err(io::Error::other(format!("{name} runs with run_beside"))),
    })?;
    r.attack_sent = sent;
    // Idle connections: those the monitor kept (refused ones it closed at once).
    r.attacker_sessions = match (attack, r.tcp) {
        (Attack::TcpIdle, Some(c)) => c.accepted - c.idle_closed,
        // `seq_jump` returns the victim's updates sent in place of the attacker's sessions.
        (Attack::SeqJump, _) => {
            r.victim = r.victim.map(|(_, delivered)| (sessions, delivered));
            0
        }
        _ => sessions,
    };
    Ok(r)
}

/// Runs an attack of the caller's, `name`, against a service it serves beside a fresh monitor
/// (over UDP only), measured as [`run`] measures its own: `attack` gets the monitor server
/// (running, with the established sources sending) and the flag that ends the attack, and
/// returns its own report. The result's `attack_sent` and `attacker_sessions` are left 0 for
/// the caller to fill from that report.
pub fn run_beside<R: Send>(
    name: &'static str,
    cfg: &FloodConfig,
    attack: impl FnOnce(&MonitorServer, &AtomicBool) -> io::Result<R> + Send,
) -> io::Result<(FloodResult, R)> {
    run_with(Attack::Beside(name), cfg, |_, server, stop| {
        attack(server, stop)
    })
}

/// The configuration of the legitimate sources.
fn source_config(cfg: &FloodConfig) -> SourceConfig {
    SourceConfig {
        psk: cfg.keys.as_ref().map(|k| k.first().clone()),
        ..SourceConfig::default()
    }
}

/// The networks of the hold-prefixes attack, one address each.
const HOLD_NETWORKS: [[u8; 4]; 4] = [
    [127, 66, 0, 1],
    [127, 67, 0, 1],
    [127, 68, 0, 1],
    [127, 69, 0, 1],
];

/// The hold attacker's plan: sessions, refresh, opening rate, and the addresses it sends from.
struct HoldPlan<'a> {
    sessions: u64,
    refresh: Duration,
    rate: f64,
    from: &'a [[u8; 4]],
}

impl FloodConfig {
    fn hold_plan<'a>(&self, from: &'a [[u8; 4]]) -> HoldPlan<'a> {
        HoldPlan {
            sessions: self.hold_sessions,
            refresh: self.refresh,
            rate: self.flood_rate,
            from,
        }
    }
}

/// Runs the attack `attacker` (given the monitor's address, the server and the flag that ends
/// it) against a fresh monitor beside established sources and newcomers; the result's
/// `attack_sent` and `attacker_sessions` are 0, and `victim` holds (0, the victim's updates
/// delivered) for seq-jump.
fn run_with<R: Send>(
    attack: Attack,
    cfg: &FloodConfig,
    attacker: impl FnOnce(SocketAddr, &MonitorServer, &AtomicBool) -> io::Result<R> + Send,
) -> io::Result<(FloodResult, R)> {
    tracing::info!("flood: {} attack for {:?}", attack.name(), cfg.duration);
    let rss_before = rss();
    let monitor_cfg = MonitorConfig {
        max_sessions: cfg.max_sessions,
        keys: cfg.keys.clone(),
        ..MonitorConfig::default()
    };
    let listen: SocketAddr = "127.0.0.1:0".parse().map_err(io::Error::other)?;
    let mut server_cfg = ServerConfig::new(listen, monitor_cfg);
    server_cfg.tcp = attack.uses_tcp().then(TcpConfig::default);
    // The seq-jump victim's own updates delivered (the forged ones carry another payload).
    let victim_delivered = Arc::new(AtomicU64::new(0));
    let counter = victim_delivered.clone();
    let on_update: crate::server::OnUpdate = Box::new(move |d, _| {
        if d.key.peer.ip() == std::net::Ipv4Addr::from(VICTIM) && d.payload == VICTIM_PAYLOAD {
            counter.fetch_add(1, Ordering::Relaxed);
        }
    });
    let server =
        MonitorServer::start(server_cfg, (attack == Attack::SeqJump).then_some(on_update))?;
    let target = server.local_addr();
    let source_cfg = source_config(cfg);

    let stop_sources = Arc::new(AtomicBool::new(false));
    let latest: Arc<Mutex<Vec<SourceReport>>> = Arc::default();
    let established = {
        let mut set = SourceSet::new(target)?;
        for i in 0..cfg.established {
            set.add(SourceSpec {
                name: format!("established-{i}"),
                controller: Box::new(Fixed::new(cfg.established_rate)),
                config: SourceConfig {
                    min_rate: cfg.established_rate,
                    max_rate: cfg.established_rate,
                    ..source_cfg.clone()
                },
                payload: Payload::Synthetic(32),
            });
        }
        let limits = RunLimits {
            stop: Some(stop_sources.clone()),
            ..RunLimits::default()
        };
        let latest = latest.clone();
        std::thread::spawn(move || {
            set.run(&limits, Duration::from_millis(50), |r| {
                *latest.lock().unwrap_or_else(|e| e.into_inner()) = r.to_vec()
            })
        })
    };
    // Let them finish probing.
    std::thread::sleep(Duration::from_secs(2));
    let (sent0, acked0) = totals(&latest.lock().unwrap_or_else(|e| e.into_inner()));

    let stop_attack = AtomicBool::new(false);
    let (mut measured, report) = std::thread::scope(|scope| {
        let attacker = scope.spawn(|| attacker(target, &server, &stop_attack));
        let started = Instant::now();
        // Newcomers join once the attack is under way, one after another.
        std::thread::sleep(Duration::from_secs(1).min(cfg.duration / 4));
        let mut admissions = Vec::with_capacity(cfg.newcomers);
        for _ in 0..cfg.newcomers {
            admissions.push(admit(target, &source_cfg, Duration::from_secs(5))?);
            std::thread::sleep(Duration::from_millis(200));
        }
        if let Some(rest) = cfg.duration.checked_sub(started.elapsed()) {
            std::thread::sleep(rest);
        }
        // The sources stop first, within the attack. Their updates still in flight then (a
        // loopback round trip's worth, under one) count as lost.
        stop_sources.store(true, Ordering::Relaxed);
        let (sent1, acked1) = totals(
            &established
                .join()
                .map_err(|_| io::Error::other("source thread panicked"))??,
        );
        stop_attack.store(true, Ordering::Relaxed);
        let report = attacker
            .join()
            .map_err(|_| io::Error::other("attacker thread panicked"))??;
        let rss_after = rss();
        let admission_after_attack = match attack {
            Attack::HoldPrefixes => Some(admit(target, &source_cfg, AFTER_ATTACK_PATIENCE)?),
            _ => None,
        };
        // The monitor's own counts, and the victim's deliveries, are filled in once it has
        // stopped.
        let measured = FloodResult {
            attack,
            attack_sent: 0,
            established_sent: sent1 - sent0,
            established_acked: acked1 - acked0,
            admissions,
            sessions_held: 0,
            attacker_sessions: 0,
            tcp: None,
            victim: None,
            admission_after_attack,
            stats: Default::default(),
            rss_before,
            rss_after,
        };
        io::Result::Ok((measured, report))
    })?;
    let snap = server.stop()?;
    let stats = snap.totals.stats;
    measured.sessions_held = stats.sessions_created - stats.sessions_expired;
    measured.tcp = snap.totals.streams;
    measured.stats = stats;
    // Counted by the server thread, which has now handled every update it received.
    measured.victim =
        (attack == Attack::SeqJump).then(|| (0, victim_delivered.load(Ordering::Relaxed)));
    Ok((measured, report))
}

/// Updates sent and ACKs received (in sequence or not) by `reports`.
fn totals(reports: &[SourceReport]) -> (u64, u64) {
    reports.iter().fold((0, 0), |(s, a), r| {
        (
            s + r.stats.sent,
            a + r.stats.acks_in_sequence + r.stats.acks_out_of_sequence,
        )
    })
}

/// A new source from 127.0.0.1: how long until its first in-sequence ACK (`None` after `limit`).
fn admit(target: SocketAddr, cfg: &SourceConfig, limit: Duration) -> io::Result<Option<Duration>> {
    let socket = UdpSocket::bind("127.0.0.1:0")?;
    socket.connect(target)?;
    socket.set_read_timeout(Some(Duration::from_millis(1)))?;
    let start = clock::now();
    let mut src = Source::new(
        cfg.clone(),
        Box::new(Acp::plus()),
        AppMode::GenerateAtWill(Box::new(|_, out: &mut Vec<u8>| {
            out.extend_from_slice(b"new")
        })),
        random_session_id(),
        start,
    );
    let (mut out, mut buf) = (Vec::new(), vec![0u8; 2048]);
    let began = Instant::now();
    while began.elapsed() < limit {
        if src.poll_transmit(clock::now(), &mut out).is_some() {
            socket.send(&out)?;
        }
        if let Ok(n) = socket.recv(&mut buf) {
            if src.handle_datagram(clock::now(), &buf[..n]) == AckOutcome::InSequence {
                return Ok(Some(began.elapsed()));
            }
        }
    }
    Ok(None)
}

/// Sends `rate` datagrams per second, in 1 ms slices, until `stop`; `send` sends one.
fn paced(
    rate: f64,
    stop: &AtomicBool,
    mut send: impl FnMut() -> io::Result<()>,
) -> io::Result<u64> {
    let (start, mut sent) = (Instant::now(), 0u64);
    while !stop.load(Ordering::Relaxed) {
        let due = (start.elapsed().as_secs_f64() * rate) as u64;
        while sent < due {
            // A full socket buffer drops the datagram, as the network would.
            match send() {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e),
            }
            sent += 1;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    Ok(sent)
}

/// One attacker socket bound to `ip`.
fn attacker_socket(ip: [u8; 4]) -> io::Result<UdpSocket> {
    let s = UdpSocket::bind(SocketAddr::from((ip, 0)))?;
    s.set_nonblocking(true)?;
    Ok(s)
}

/// An unsealed update of `session`, sequence `seq`, echoing `cookie`.
fn update(session: u64, seq: u64, cookie: Option<[u8; COOKIE_LEN]>, out: &mut [u8]) -> usize {
    Update {
        flags: 0,
        session,
        seq,
        gen_ts: clock::now().as_nanos(),
        acked_seq: seq - 1,
        hold_ns: 0,
        cookie,
        payload: b"hold",
    }
    .encode(out)
    .expect("a 4-byte payload fits")
}

/// The hold attack, from eight sockets on each of `plan.from`'s addresses (session `s` from
/// socket `s` modulo their number, so the addresses share the sessions evenly); returns
/// (datagrams sent, sessions that got an ACK).
fn hold(target: SocketAddr, plan: &HoldPlan<'_>, stop: &AtomicBool) -> io::Result<(u64, u64)> {
    let sockets: Vec<UdpSocket> = (0..8 * plan.from.len())
        .map(|i| attacker_socket(plan.from[i % plan.from.len()]))
        .collect::<io::Result<_>>()?;
    let n = plan.sessions.max(1);
    // Per session: next sequence and the cookie to echo.
    let mut state: Vec<(u64, Option<[u8; COOKIE_LEN]>)> = vec![(1, None); n as usize];
    let mut acked: HashSet<u64> = HashSet::new();
    let mut buf = [0u8; 128];
    let mut rx = [0u8; 2048];
    // Two updates per session as fast as the flood rate allows, then one per session every
    // `refresh`.
    let mut i = 0u64;
    let first_round = 2 * n;
    let refresh_rate = n as f64 / plan.refresh.as_secs_f64();
    let (start, mut sent) = (Instant::now(), 0u64);
    while !stop.load(Ordering::Relaxed) {
        let elapsed = start.elapsed().as_secs_f64();
        let burst_done = (elapsed * plan.rate) as u64;
        let due = if burst_done < first_round {
            burst_done
        } else {
            first_round + ((elapsed - first_round as f64 / plan.rate) * refresh_rate) as u64
        };
        while sent < due {
            let s = (i % n) as usize;
            i += 1;
            let (seq, cookie) = state[s];
            let len = update(s as u64 + 1, seq, cookie, &mut buf);
            state[s].0 += 1;
            match sockets[s % sockets.len()].send_to(&buf[..len], target) {
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e),
            }
            sent += 1;
        }
        // Read replies: ACKs count as held sessions; COOKIEs are echoed at once.
        for socket in &sockets {
            while let Ok(len) = socket.recv(&mut rx) {
                match Packet::decode(&rx[..len]) {
                    Ok(Packet::Ack(a)) => {
                        acked.insert(a.session);
                    }
                    // Echoed with a second update at once: a session of one update would be
                    // on probation, forgotten after 2 s of silence.
                    Ok(Packet::Cookie(c)) if c.session >= 1 && c.session <= n => {
                        let s = (c.session - 1) as usize;
                        state[s].1 = Some(c.cookie);
                        for _ in 0..2 {
                            let len = update(c.session, state[s].0, Some(c.cookie), &mut buf);
                            state[s].0 += 1;
                            let _ = socket.send_to(&buf[..len], target);
                            sent += 1;
                        }
                    }
                    _ => {}
                }
            }
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    Ok((sent, acked.len() as u64))
}

/// Blind one-shot sessions from 256 prefixes; returns datagrams sent.
fn spoof(target: SocketAddr, rate: f64, stop: &AtomicBool) -> io::Result<u64> {
    let sockets: Vec<UdpSocket> = (0..256u32)
        .map(|k| attacker_socket([127, 100 + (k / 64) as u8, (k % 64) as u8, 1]))
        .collect::<io::Result<_>>()?;
    let mut rng = Rng::new(0x5300F);
    let mut buf = [0u8; 128];
    let mut k = 0usize;
    paced(rate, stop, || {
        let len = update(rng.next_u64(), 1, None, &mut buf);
        k = (k + 1) % sockets.len();
        sockets[k].send_to(&buf[..len], target).map(|_| ())
    })
}

/// Random bytes, 0–120 of them, some starting like an ACP header; returns datagrams sent.
fn malformed(target: SocketAddr, rate: f64, stop: &AtomicBool) -> io::Result<u64> {
    let socket = attacker_socket([127, 99, 0, 1])?;
    let mut rng = Rng::new(0xBAD);
    let mut buf = [0u8; 120 + TAG_LEN];
    paced(rate, stop, || {
        let len = rng.up_to(120) as usize;
        for b in &mut buf[..len] {
            *b = rng.next_u64() as u8;
        }
        if len >= 4 && rng.chance(0.5) {
            buf[..4].copy_from_slice(&[b'A', b'C', 1, 1]);
        }
        socket.send_to(&buf[..len], target).map(|_| ())
    })
}

/// A TCP connection to `target` from `ip` (an attacker's own address on loopback).
pub fn connect_from(ip: [u8; 4], target: SocketAddr) -> io::Result<TcpStream> {
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None)?;
    socket.bind(&SocketAddr::from((ip, 0)).into())?;
    socket.connect(&target.into())?;
    Ok(socket.into())
}

/// One connection from 127.66.0.1 written to flat out with frames of one session (the same
/// 1,000 again and again: the monitor checks each as it would a new one); returns frames written.
fn tcp_writer(target: SocketAddr, stop: &AtomicBool) -> io::Result<u64> {
    let mut conn = connect_from([127, 66, 0, 1], target)?;
    // Short, so that a stalled write still sees `stop`.
    conn.set_write_timeout(Some(Duration::from_millis(100)))?;
    let mut bytes = Vec::new();
    let mut buf = [0u8; 128];
    for seq in 1..=1000 {
        let len = update(0xF100D, seq, None, &mut buf);
        bytes.extend_from_slice(&(len as u32).to_be_bytes());
        bytes.extend_from_slice(&buf[..len]);
    }
    let (mut at, mut frames) = (0, 0);
    while !stop.load(Ordering::Relaxed) {
        match conn.write(&bytes[at..]) {
            Ok(n) => {
                at += n;
                if at == bytes.len() {
                    at = 0;
                    frames += 1000;
                }
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock
                        | io::ErrorKind::TimedOut
                        | io::ErrorKind::Interrupted
                ) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(frames)
}

/// Connections from eight networks (127.100–107.0.1), one network after another, each opening
/// one and a half times the quarter of the 1,024-connection table a network may hold, left
/// idle until `stop`; returns (connections opened, 0). The monitor keeps a quarter per network
/// until its table is full and closes the rest at once.
fn tcp_idle(target: SocketAddr, stop: &AtomicBool) -> io::Result<(u64, u64)> {
    let per_network = (TcpConfig::default().max_connections / 4) as u64 * 3 / 2;
    // Both ends of every connection are this process's descriptors.
    let wanted = 8 * per_network;
    let limit = crate::net::ensure_fd_limit(2 * wanted + crate::net::RESERVED_FDS)?;
    let opened = wanted.min(limit.soft.saturating_sub(crate::net::RESERVED_FDS) / 2);
    let held: Vec<TcpStream> = (0..opened)
        .map(|i| connect_from([127, 100 + (i / per_network) as u8, 0, 1], target))
        .collect::<io::Result<_>>()?;
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(10));
    }
    Ok((held.len() as u64, 0))
}

/// The seq-jump attack's victim source's address.
const VICTIM: [u8; 4] = [127, 77, 0, 1];
/// The victim's payload (a forged update carries another).
const VICTIM_PAYLOAD: &[u8] = b"victim";
/// How far each forged update runs ahead of the victim: inside the 65,536 a session may jump.
const JUMP: u64 = 60_000;

/// A victim source at 200 updates/s and, every 100 ms, an unsealed update from its socket with
/// its session id and the sequence it last sent plus [`JUMP`]; returns (forged updates, updates
/// the victim sent).
fn seq_jump(target: SocketAddr, cfg: &SourceConfig, stop: &AtomicBool) -> io::Result<(u64, u64)> {
    let socket = UdpSocket::bind(SocketAddr::from((VICTIM, 0)))?;
    socket.connect(target)?;
    socket.set_read_timeout(Some(Duration::from_millis(1)))?;
    let session = random_session_id();
    let rate = 200.0;
    let mut src = Source::new(
        SourceConfig {
            min_rate: rate,
            max_rate: rate,
            ..cfg.clone()
        },
        Box::new(Fixed::new(rate)),
        AppMode::GenerateAtWill(Box::new(|_, out: &mut Vec<u8>| {
            out.extend_from_slice(VICTIM_PAYLOAD)
        })),
        session,
        clock::now(),
    );
    let (mut out, mut buf, mut forged_buf) = (Vec::new(), vec![0u8; 2048], [0u8; 128]);
    let (mut sent, mut forged, mut last_seq) = (0u64, 0u64, 0u64);
    let mut next_forgery = Instant::now() + Duration::from_millis(100);
    while !stop.load(Ordering::Relaxed) {
        if src.poll_transmit(clock::now(), &mut out).is_some() {
            socket.send(&out)?;
            sent += 1;
            if let Ok(Packet::Update(u)) = Packet::decode(&out) {
                last_seq = u.seq;
            }
        }
        if Instant::now() >= next_forgery && last_seq > 0 {
            let len = update(session, last_seq + JUMP, None, &mut forged_buf);
            socket.send(&forged_buf[..len])?;
            forged += 1;
            next_forgery += Duration::from_millis(100);
        }
        if let Ok(n) = socket.recv(&mut buf) {
            // ACKs of forged updates do not match what the source sent: it ignores them.
            let _ = src.handle_datagram(clock::now(), &buf[..n]);
        }
    }
    Ok((forged, sent))
}
