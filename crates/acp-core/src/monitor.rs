//! The monitor state machine (sans-IO).
//!
//! One [`Monitor`] serves many sources behind one socket. For each datagram the caller passes in,
//! [`Monitor::handle_datagram`] validates it, writes the ACK into a caller-provided buffer and, when
//! the update is the freshest of its session, hands its payload back for delivery.
//!
//! Sessions are keyed by (peer address, session id). The table is bounded so that spoofed session
//! ids cannot exhaust memory. Admission and eviction (`docs/SECURITY.md`):
//! - no network prefix (IPv4 /24, IPv6 /48) may hold more than `max_prefix_share` of the table;
//! - once the table is `cookie_threshold` full, a new session must prove its address first: its
//!   update is answered with a stateless COOKIE ([`crate::cookie`]) and only an update echoing it
//!   gets state (with pre-shared keys, always);
//! - an unsealed session that has sent a single update is on *probation* and expires after
//!   `probation` of silence (spoofed one-shot ids are gone quickly);
//! - an established session expires after `idle_timeout` of silence;
//! - when the table is full, a new session triggers a sweep of expired ones (at most once per
//!   quarter of the probation time) and is refused if none could be freed. Refused updates are not
//!   answered and are counted by reason. Established sessions are never displaced by newcomers.
//!
//! Updates may also arrive over a stream connection (TCP, [`Monitor::handle_stream_update`]),
//! for comparing ACP with TCP on one path: the same sessions, statistics and true age, but no
//! reply (the transport acknowledges) and no cookie (the connection's handshake has proved the
//! peer's address). With pre-shared keys a stream cannot open a session (the cookie is also what
//! refuses a replayed first update): sealed updates captured and written into a connection are
//! refused (`stream_start`), and those of an existing session pass its replay window.
//!
//! With pre-shared keys ([`MonitorConfig::keys`]) only sealed updates are accepted, replays are
//! dropped unanswered and every reply is sealed with the session's key ([`crate::seal`]).
//!
//! Without keys, a jump of more than 64 sequences is held, not delivered, until the next update
//! of its line confirms it, and the line it left stays open (`SessionStats::record`): a spoofed
//! update cannot make the real source's later updates stale.
//!
//! **Multipath sessions** (flag MULTIPATH, `docs/PROTOCOL.md`): a source that sends one session
//! over several paths (relays, interfaces) reaches the monitor from several addresses. Its
//! updates are keyed by session id alone: the address the session's first update came from
//! names it ([`SessionKey::peer`]), updates from any other address join it, and each update is
//! answered to the address it came from, so its ACK returns over its own path. The session's
//! sequence window removes the duplicates, and its age is the age over the union of the paths.
//! Without keys, anyone who knows a session id can add a path to it, as anyone who can forge
//! the source's address can talk for a single-path session; the jump rule below still protects
//! the session's line. With keys every path's updates must carry the session's seal.
//!
//! Expiry is driven by [`Monitor::poll_timeout`] / [`Monitor::handle_timeout`]; established sessions
//! that expire are reported once through [`Monitor::poll_event`].

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::net::SocketAddr;
use std::time::Duration;

use thiserror::Error;

use crate::accounting::AgeIntegral;
use crate::cookie::CookieJar;
use crate::prefix::PrefixShare;
use crate::seal::{AuthError, Keyring, PacketKey, Secret, SessionCipher};
use crate::session_table::{SessionTable, MAX_RECORDS};
use crate::time::Time;
use crate::wire::{
    encode_feedback, Ack, Cookie, DecodeError, EncodeError, FeedbackItem, Packet, Update,
    FLAG_STALE, HEADER_LEN, TAG_LEN,
};

/// Monitor parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct MonitorConfig {
    /// Most sessions tracked at once.
    pub max_sessions: usize,
    /// Silence after which an established session is forgotten.
    pub idle_timeout: Duration,
    /// Silence after which an unsealed session that sent only one update is forgotten (sealed
    /// sessions are validated by their key and wait `idle_timeout`).
    pub probation: Duration,
    /// The caller declares the sources' clocks synchronised with `now`, so the true age
    /// `t − generation time` can be tracked per session.
    pub clocks_synchronised: bool,
    /// An established session's next update may run at most `max_seq_jump` sequences ahead of
    /// its highest, plus `max_update_rate` for every second of silence since its last update.
    /// Further jumps are dropped unanswered and counted (`MonitorStats::seq_jumps`): one spoofed
    /// update with a huge sequence would otherwise make every later real update look stale.
    pub max_seq_jump: u64,
    /// Fastest update rate a source may have (updates/s; a source's default `max_rate`).
    pub max_update_rate: f64,
    /// Most of `max_sessions` one network prefix (IPv4 /24, IPv6 /48) may hold, as a fraction
    /// (1 = no limit).
    pub max_prefix_share: f64,
    /// Occupancy of the table, as a fraction of `max_sessions`, from which a new session must
    /// echo a cookie before it gets state (above 1: never, unless `keys` is set).
    pub cookie_threshold: f64,
    /// A cookie is valid in the epoch it was issued and the next. Keep two epochs within
    /// `idle_timeout`, so that a replayed first update cannot revive an expired sealed session.
    pub cookie_epoch: Duration,
    /// The key cookies are made with (random by default).
    pub cookie_secret: Secret,
    /// Pre-shared keys: when set, only sealed updates are accepted, replies are sealed and every
    /// new session must echo a cookie.
    pub keys: Option<Keyring>,
}

impl MonitorConfig {
    /// The highest sequence believable from a session whose highest is `highest`, after
    /// `silence` without updates.
    fn believable(&self, highest: u64, silence: Duration) -> u64 {
        let grace = (self.max_update_rate * silence.as_secs_f64()).min(u64::MAX as f64) as u64;
        highest
            .saturating_add(self.max_seq_jump)
            .saturating_add(grace)
    }
}

impl Default for MonitorConfig {
    fn default() -> Self {
        MonitorConfig {
            max_sessions: 10_000,
            idle_timeout: Duration::from_secs(30),
            probation: Duration::from_secs(2),
            clocks_synchronised: false,
            max_seq_jump: 65_536,
            max_update_rate: 1_000_000.0,
            max_prefix_share: 0.25,
            cookie_threshold: 0.5,
            cookie_epoch: Duration::from_secs(10),
            cookie_secret: Secret::random(),
            keys: None,
        }
    }
}

/// Identifies a session: the source's address and its random session id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionKey {
    /// Where the updates come from (and ACKs go to).
    pub peer: SocketAddr,
    /// The source's session id.
    pub session: u64,
}

/// Per-session statistics.
#[derive(Debug, Clone)]
pub struct SessionStats {
    /// First update received.
    pub first_seen: Time,
    /// Last update received.
    pub last_seen: Time,
    /// Updates delivered (in sequence).
    pub delivered: u64,
    /// Updates that arrived after a fresher one (ACKed, not delivered).
    pub stale: u64,
    /// Duplicates of updates already received (ACKed, not delivered).
    pub duplicates: u64,
    /// Sequence numbers never received (gaps), net of late arrivals seen within 64 of the freshest.
    pub lost: u64,
    /// Probes received.
    pub probes: u64,
    /// Payload bytes delivered.
    pub bytes: u64,
    /// Highest sequence received.
    pub highest_seq: u64,
    /// Whether the session's updates come over a stream connection (TCP) rather than datagrams.
    pub stream: bool,
    /// Generation time (source clock, ns) of the freshest update.
    pub freshest_gen_ts: u64,
    /// The source's backlog estimate `seq − acked seq` carried by the freshest update.
    pub source_backlog: u64,
    /// Bit i set: sequence `highest_seq − 1 − i` has been received.
    window: u64,
    /// The other line of an unsealed session (0: none): a jump held until the next update on
    /// its line confirms it, or the line a confirmed jump left behind ([`SessionStats::record`]).
    other_seq: u64,
    /// True age process, when clocks are declared synchronised.
    age: Option<AgeIntegral>,
}

impl SessionStats {
    fn new(now: Time, synced: bool, stream: bool) -> Self {
        SessionStats {
            stream,
            first_seen: now,
            last_seen: now,
            delivered: 0,
            stale: 0,
            duplicates: 0,
            lost: 0,
            probes: 0,
            bytes: 0,
            highest_seq: 0,
            freshest_gen_ts: 0,
            source_backlog: 0,
            window: 0,
            other_seq: 0,
            age: synced.then(|| AgeIntegral::new(now)),
        }
    }

    /// Updates received, delivered or not.
    pub fn received(&self) -> u64 {
        self.delivered + self.stale + self.duplicates
    }

    /// True age at `now` (s), when clocks are synchronised.
    pub fn age(&self, now: Time) -> Option<f64> {
        self.age.as_ref()?.age_at(now).map(|ns| ns as f64 * 1e-9)
    }

    /// True time-average age from the first delivery to `now` (s), when clocks are synchronised.
    pub fn avg_age(&self, now: Time) -> Option<f64> {
        self.age.as_ref()?.average(now)
    }

    /// ∫ age dt from the first delivery to `now` (s²), when clocks are synchronised: its rate over
    /// any interval is that interval's time-average age.
    pub fn age_area(&self, now: Time) -> Option<f64> {
        self.age.as_ref()?.area(now)
    }

    /// Delivered updates per second between the first and the last one.
    pub fn delivery_rate(&self) -> f64 {
        let span = self.last_seen.nanos_since(self.first_seen) as f64 * 1e-9;
        if span > 0.0 && self.delivered > 1 {
            (self.delivered - 1) as f64 / span
        } else {
            0.0
        }
    }

    /// Whether `seq` was already received or lies beyond the 64-sequence window behind the
    /// freshest, so that it cannot be told from a replay.
    fn seen_or_too_old(&self, seq: u64) -> bool {
        if seq > self.highest_seq {
            return false;
        }
        let back = self.highest_seq - seq;
        back == 0 || back > WINDOW || self.window & (1 << (back - 1)) != 0
    }

    /// The highest sequence of the line furthest ahead: the one a believable update may run
    /// ahead of (a held jump must be confirmable).
    fn line_ahead(&self) -> u64 {
        self.highest_seq.max(self.other_seq)
    }

    /// Records sequence `seq`; returns whether it is the freshest so far.
    ///
    /// With `two_lines` (an unsealed session, whose updates anyone who knows its id and address
    /// can forge), a jump more than [`WINDOW`] ahead does not move the session at once: it is
    /// held (`other_seq`) while the current line goes on being served, and only the next update
    /// within [`WINDOW`] after it confirms it. The confirmed line becomes current and the one it
    /// left is kept as the other line, which takes over again when it is extended (an update
    /// within [`WINDOW`] after its highest, and further than [`WINDOW`] from the current one).
    /// So the current line is always the one extended last, and a single spoofed update cannot
    /// make the real source's later updates stale (`docs/SECURITY.md`, "Poisoning").
    fn record(&mut self, seq: u64, two_lines: bool) -> Freshness {
        if two_lines && self.highest_seq > 0 && seq.abs_diff(self.highest_seq) > WINDOW {
            let other = self.other_seq;
            if other > 0 && seq > other && seq - other <= WINDOW {
                let left = self.highest_seq;
                // The gap the jump made, if it ran ahead, and the one since on its line.
                self.lost += other.saturating_sub(left).saturating_sub(1) + (seq - other - 1);
                self.window = 1 << (seq - other - 1);
                self.highest_seq = seq;
                self.other_seq = left;
                return Freshness::Fresh;
            }
            if seq > self.highest_seq {
                self.other_seq = seq;
                self.stale += 1;
                return Freshness::Held;
            }
        }
        if seq > self.highest_seq {
            let shift = seq - self.highest_seq;
            self.lost += shift - 1;
            // Slide the window: the old highest becomes bit `shift − 1` (bit 63 at most; a jump
            // of more than 64 leaves nothing in the window).
            self.window = if shift > WINDOW {
                0
            } else {
                self.window.checked_shl(shift as u32).unwrap_or(0) | (1 << (shift - 1))
            };
            if self.highest_seq == 0 {
                self.window = 0;
            }
            self.highest_seq = seq;
            return Freshness::Fresh;
        }
        if seq == self.highest_seq {
            self.duplicates += 1;
            return Freshness::Duplicate;
        }
        let back = self.highest_seq - seq - 1;
        if back < WINDOW {
            let bit = 1u64 << back;
            if self.window & bit != 0 {
                self.duplicates += 1;
                return Freshness::Duplicate;
            }
            self.window |= bit;
            self.lost = self.lost.saturating_sub(1);
        }
        self.stale += 1;
        Freshness::Stale
    }
}

/// Sequences a session remembers behind its highest (the bits of `SessionStats::window`), and
/// the furthest an update may run ahead of its line and still extend it.
const WINDOW: u64 = 64;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Freshness {
    Fresh,
    Stale,
    Duplicate,
    /// A jump held until its line is confirmed (ACKed STALE, not delivered).
    Held,
}

/// Monitor-wide counters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MonitorStats {
    /// Datagrams handed to the monitor.
    pub datagrams: u64,
    /// Updates handed to the monitor from stream connections (TCP).
    pub stream_updates: u64,
    /// Datagrams that failed to decode (the sum of `malformed_by`).
    pub malformed: u64,
    /// Malformed datagrams by the decoding rule they failed ([`DecodeError::reason`]); reasons
    /// never seen are absent.
    pub malformed_by: BTreeMap<&'static str, u64>,
    /// Valid ACP packets that are not updates.
    pub not_updates: u64,
    /// ACKs written.
    pub acks: u64,
    /// Updates delivered to the application.
    pub delivered: u64,
    /// Sessions created.
    pub sessions_created: u64,
    /// Sessions forgotten after silence.
    pub sessions_expired: u64,
    /// New sessions refused (the sum of `refused_by`).
    pub sessions_refused: u64,
    /// New sessions refused, by reason: `table_full`, `prefix_share`.
    pub refused_by: BTreeMap<&'static str, u64>,
    /// COOKIEs sent to new sessions.
    pub cookies_sent: u64,
    /// Updates that echoed a cookie that was wrong or had expired.
    pub cookies_rejected: u64,
    /// Updates dropped by authentication, by reason ([`AuthError::reason`], and `replayed`).
    pub auth_failed_by: BTreeMap<&'static str, u64>,
    /// Updates dropped for running implausibly far ahead of their session
    /// ([`MonitorConfig::max_seq_jump`]).
    pub seq_jumps: u64,
    /// Updates of unsealed sessions that jumped more than 64 sequences ahead, held (ACKed STALE,
    /// not delivered) until the next update of their line confirmed them, or forever if none came.
    pub seq_jumps_held: u64,
    /// Updates of multipath sessions that came from another address than the one naming their
    /// session (they joined it over another path).
    pub joined_updates: u64,
}

/// A fresh update for the application.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Delivery<'a> {
    /// Its session.
    pub key: SessionKey,
    /// Sequence number.
    pub seq: u64,
    /// Generation time, ns on the source's clock.
    pub gen_ts: u64,
    /// Whether it was an initialisation probe.
    pub probe: bool,
    /// Application payload.
    pub payload: &'a [u8],
}

/// The result of a valid update.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Handled<'a> {
    /// Length of the reply written to the caller's buffer (an ACK, or a COOKIE); send it back to
    /// the peer.
    pub ack_len: usize,
    /// The reply is a COOKIE: the update must prove its address before it is accepted.
    pub cookie: bool,
    /// The update, if it is the freshest of its session.
    pub delivery: Option<Delivery<'a>>,
}

/// Why a datagram was dropped without an ACK.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum Dropped {
    /// Not a valid ACP packet.
    #[error("malformed datagram: {0}")]
    Malformed(#[from] DecodeError),
    /// A valid ACP packet that is not an UPDATE.
    #[error("not an update")]
    NotAnUpdate,
    /// A new session while the table is full.
    #[error("session table full")]
    TableFull,
    /// A new session from a network prefix that holds its share of the table.
    #[error("the peer's network holds its share of the session table")]
    PrefixShare,
    /// Refused by authentication.
    #[error("authentication: {0}")]
    Auth(#[from] AuthError),
    /// With pre-shared keys: an update already received, or too old to tell from a replay.
    #[error("replayed update")]
    Replayed,
    /// A sequence implausibly far ahead of its session's ([`MonitorConfig::max_seq_jump`]).
    #[error("sequence jumps too far ahead")]
    SeqJump,
    /// The caller's ACK buffer is too small.
    #[error("ACK buffer too small: {0}")]
    AckBuffer(EncodeError),
}

/// Something the application may want to know about.
#[derive(Debug, Clone)]
pub enum MonitorEvent {
    /// An established session was forgotten after `idle_timeout` of silence.
    SessionExpired {
        /// Which one.
        key: SessionKey,
        /// Its final statistics.
        stats: Box<SessionStats>,
    },
}

/// One session's state: with its key, the record a monitor keeps per session (208 bytes on a
/// 64-bit target, `tests::a_session_record_is_208_bytes`; `docs/SCALING.md`).
#[derive(Debug)]
struct Session {
    stats: SessionStats,
    /// Its key, with pre-shared keys (boxed: a pointer's width when there are none).
    cipher: Option<Box<SessionCipher>>,
}

/// The ACP monitor.
#[derive(Debug)]
pub struct Monitor {
    cfg: MonitorConfig,
    sessions: SessionTable<SessionKey, Session>,
    /// Multipath sessions: session id → the address naming the session (its key's `peer`).
    joined: HashMap<u64, SocketAddr>,
    shares: PrefixShare,
    cookies: CookieJar,
    stats: MonitorStats,
    feedback: Vec<u8>,
    events: VecDeque<MonitorEvent>,
    last_sweep: Time,
    /// Latest rx time written into a sealed ACK (each gets its own, see [`crate::seal`]).
    last_rx: u64,
}

impl Monitor {
    /// A monitor with no sessions; `now` starts its sweep schedule.
    pub fn new(cfg: MonitorConfig, now: Time) -> Self {
        Monitor {
            sessions: SessionTable::with_capacity(cfg.max_sessions.min(1 << 16)),
            joined: HashMap::new(),
            shares: PrefixShare::new(cfg.max_prefix_share, cfg.max_sessions),
            cookies: CookieJar::new(cfg.cookie_secret.clone(), cfg.cookie_epoch),
            cfg,
            stats: MonitorStats::default(),
            feedback: Vec::new(),
            events: VecDeque::new(),
            last_sweep: now,
            last_rx: 0,
        }
    }

    /// Receiver feedback to append to every ACK from now on (only where the ACK stays no larger
    /// than its update).
    pub fn set_feedback(&mut self, items: &[FeedbackItem<'_>]) -> Result<(), EncodeError> {
        let mut buf = Vec::new();
        encode_feedback(items, &mut buf)?;
        self.feedback = buf;
        Ok(())
    }

    /// Handles one datagram from `peer` received at `now`. On success a reply (an ACK, or a
    /// COOKIE) of `ack_len` bytes is in `ack_buf`, which needs [`Monitor::ack_capacity`] bytes.
    pub fn handle_datagram<'a>(
        &mut self,
        now: Time,
        peer: SocketAddr,
        data: &'a [u8],
        ack_buf: &mut [u8],
    ) -> Result<Handled<'a>, Dropped> {
        self.stats.datagrams += 1;
        let result = self.handle(now, peer, data, ack_buf, false);
        self.count(&result, true);
        result
    }

    /// Handles one update from a stream connection (TCP) with `peer`, received at `now`: as a
    /// datagram, except that a new session need not echo a cookie (the connection's handshake
    /// proved the address) and nothing is sent back (the transport acknowledges). `scratch`
    /// ([`Monitor::ack_capacity`] bytes) receives the ACK a datagram would have had.
    pub fn handle_stream_update<'a>(
        &mut self,
        now: Time,
        peer: SocketAddr,
        data: &'a [u8],
        scratch: &mut [u8],
    ) -> Result<Option<Delivery<'a>>, Dropped> {
        self.stats.stream_updates += 1;
        let result = self.handle(now, peer, data, scratch, true);
        self.count(&result, false);
        result.map(|h| h.delivery)
    }

    /// Counts the outcome of one update; `answered`: a reply goes back to the peer.
    fn count(&mut self, result: &Result<Handled<'_>, Dropped>, answered: bool) {
        match result {
            Err(Dropped::Malformed(e)) => {
                self.stats.malformed += 1;
                *self.stats.malformed_by.entry(e.reason()).or_default() += 1;
            }
            Err(Dropped::NotAnUpdate) => self.stats.not_updates += 1,
            Err(Dropped::Auth(e)) => *self.stats.auth_failed_by.entry(e.reason()).or_default() += 1,
            Err(Dropped::Replayed) => {
                *self.stats.auth_failed_by.entry("replayed").or_default() += 1
            }
            Err(refused @ (Dropped::TableFull | Dropped::PrefixShare)) => {
                self.stats.sessions_refused += 1;
                let reason = if *refused == Dropped::TableFull {
                    "table_full"
                } else {
                    "prefix_share"
                };
                *self.stats.refused_by.entry(reason).or_default() += 1;
            }
            Err(Dropped::SeqJump) => self.stats.seq_jumps += 1,
            Err(Dropped::AckBuffer(_)) => {}
            Ok(h) if h.cookie => self.stats.cookies_sent += 1,
            Ok(h) => {
                self.stats.acks += u64::from(answered);
                self.stats.delivered += u64::from(h.delivery.is_some());
            }
        }
    }

    /// One update; `stream`: it came over a stream connection ([`Monitor::handle_stream_update`]).
    fn handle<'a>(
        &mut self,
        now: Time,
        peer: SocketAddr,
        data: &'a [u8],
        ack_buf: &mut [u8],
        stream: bool,
    ) -> Result<Handled<'a>, Dropped> {
        let update = match Packet::decode(data)? {
            Packet::Update(u) => u,
            Packet::Ack(_) | Packet::Cookie(_) => return Err(Dropped::NotAnUpdate),
        };
        match (&self.cfg.keys, update.flags & crate::wire::FLAG_AUTH != 0) {
            (None, true) => return Err(AuthError::Unexpected.into()),
            (Some(_), false) => return Err(AuthError::Unsealed.into()),
            _ => {}
        }
        let named_by = if update.is_multipath() {
            self.joined.get(&update.session).copied()
        } else {
            None
        };
        let key = SessionKey {
            peer: named_by.unwrap_or(peer),
            session: update.session,
        };
        let known = self.sessions.contains_key(&key);
        self.stats.joined_updates += u64::from(named_by.is_some_and(|named| named != peer));
        // The key that seals the reply, once the update's seal is checked.
        let mut reply_key = None;
        if !known {
            let cipher = match &self.cfg.keys {
                // Only a cookie tells a sealed update from a replay of one captured earlier, and
                // a stream cannot carry one: sealed sessions start over datagrams only.
                Some(_) if stream => return Err(AuthError::StreamStart.into()),
                Some(ring) => {
                    let id = crate::seal::key_id(data).unwrap_or(0);
                    let psk = ring.get(id).ok_or(AuthError::UnknownKey(id))?;
                    let cipher = SessionCipher::new(psk, update.session);
                    reply_key = Some(cipher.open(data)?);
                    // Sequences start at 1, and a sealed session counts every sequence before
                    // its first as received: sequence 0 could only open a session that refuses
                    // everything it has seen.
                    if update.seq == 0 {
                        return Err(Dropped::Replayed);
                    }
                    Some(Box::new(cipher))
                }
                None => None,
            };
            if !self.shares.admits(peer.ip()) {
                return Err(Dropped::PrefixShare);
            }
            if self.sessions.len() >= self.max_sessions() && !self.make_room(now) {
                return Err(Dropped::TableFull);
            }
            if !stream && self.needs_cookie() {
                let echoed = update.cookie;
                if !echoed.is_some_and(|c| self.cookies.check(now, peer, update.session, &c)) {
                    self.stats.cookies_rejected += u64::from(echoed.is_some());
                    let reply = Cookie {
                        flags: 0,
                        session: update.session,
                        seq: update.seq,
                        gen_ts: update.gen_ts,
                        cookie: self.cookies.issue(now, peer, update.session),
                    };
                    let len = reply.encode(ack_buf).map_err(Dropped::AckBuffer)?;
                    let len = seal(reply_key.as_ref(), ack_buf, len)?;
                    return Ok(Handled {
                        ack_len: len,
                        cookie: true,
                        delivery: None,
                    });
                }
            }
            self.shares.add(peer.ip());
            self.stats.sessions_created += 1;
            let stats = SessionStats::new(now, self.cfg.clocks_synchronised, stream);
            self.sessions.insert_new(key, Session { stats, cipher });
            if update.is_multipath() {
                self.joined.insert(update.session, peer);
            }
        }
        let s = self
            .sessions
            .get_mut(&key)
            .expect("present or just inserted");
        if let Some(cipher) = &s.cipher {
            // A new session's seal was checked before it got state.
            if known {
                reply_key = Some(cipher.open(data)?);
            }
            if s.stats.seen_or_too_old(update.seq) {
                return Err(Dropped::Replayed);
            }
        }
        let rx_ts = if s.cipher.is_some() {
            self.last_rx = now.as_nanos().max(self.last_rx.saturating_add(1));
            self.last_rx
        } else {
            now.as_nanos()
        };
        let sealed = s.cipher.is_some();
        let sealed_start = !known && sealed;
        let s = &mut s.stats;
        if s.highest_seq > 0 {
            let silence = Duration::from_nanos(now.nanos_since(s.last_seen));
            if update.seq > self.cfg.believable(s.line_ahead(), silence) {
                return Err(Dropped::SeqJump);
            }
        }
        s.last_seen = now;
        let freshness = s.record(update.seq, !sealed);
        self.stats.seq_jumps_held += u64::from(freshness == Freshness::Held);
        if sealed_start {
            // Earlier sequences were never accepted: the ones a COOKIE answered must not be
            // replayable into the session.
            s.window = u64::MAX;
        }
        let ack_len = write_ack(
            &self.feedback,
            reply_key.as_ref(),
            &update,
            freshness,
            rx_ts,
            ack_buf,
        )?;
        if update.is_probe() {
            s.probes += 1;
        }
        if freshness != Freshness::Fresh {
            return Ok(Handled {
                ack_len,
                cookie: false,
                delivery: None,
            });
        }
        s.delivered += 1;
        s.bytes += update.payload.len() as u64;
        s.freshest_gen_ts = update.gen_ts;
        s.source_backlog = update.seq.saturating_sub(update.acked_seq);
        if let Some(age) = &mut s.age {
            age.reset(now, update.gen_ts);
        }
        Ok(Handled {
            ack_len,
            cookie: false,
            delivery: Some(Delivery {
                key,
                seq: update.seq,
                gen_ts: update.gen_ts,
                probe: update.is_probe(),
                payload: update.payload,
            }),
        })
    }

    /// Whether a new session must echo a cookie before it gets state.
    fn needs_cookie(&self) -> bool {
        self.cfg.keys.is_some()
            || self.sessions.len() as f64
                >= self.cfg.cookie_threshold * self.cfg.max_sessions as f64
    }

    /// Whether a new session fits, sweeping expired ones if the table is full.
    fn make_room(&mut self, now: Time) -> bool {
        if now >= self.last_sweep + self.cfg.probation / 4 {
            self.sweep(now);
        }
        self.sessions.len() < self.max_sessions()
    }

    /// Most sessions the table may hold: `max_sessions`, within what the table can index.
    fn max_sessions(&self) -> usize {
        self.cfg.max_sessions.min(MAX_RECORDS)
    }

    /// Whether session `s` has been silent too long. Probation sheds unvalidated one-shot
    /// sessions; a sealed session is validated by its key and is not on probation, so it outlives
    /// the cookie that admitted it and a replay of its first update cannot reopen it.
    fn expired(cfg: &MonitorConfig, s: &Session, now: Time) -> bool {
        let limit = if s.stats.received() <= 1 && s.cipher.is_none() {
            cfg.probation
        } else {
            cfg.idle_timeout
        };
        now >= s.stats.last_seen + limit
    }

    fn sweep(&mut self, now: Time) {
        self.last_sweep = now;
        let cfg = &self.cfg;
        let (shares, stats, events) = (&mut self.shares, &mut self.stats, &mut self.events);
        let joined = &mut self.joined;
        self.sessions.remove_where(
            |_, s| Self::expired(cfg, s, now),
            |key, Session { stats: s, .. }| {
                shares.remove(key.peer.ip());
                if joined.get(&key.session) == Some(&key.peer) {
                    joined.remove(&key.session);
                }
                stats.sessions_expired += 1;
                if s.received() > 1 && events.len() < cfg.max_sessions {
                    events.push_back(MonitorEvent::SessionExpired {
                        key,
                        stats: Box::new(s),
                    });
                }
            },
        );
    }

    /// When [`Monitor::handle_timeout`] should next run (the next expiry sweep).
    pub fn poll_timeout(&self) -> Option<Time> {
        let interval = self.cfg.probation.min(self.cfg.idle_timeout) / 2;
        (!self.sessions.is_empty()).then(|| self.last_sweep + interval)
    }

    /// Expires silent sessions.
    pub fn handle_timeout(&mut self, now: Time) {
        if self.poll_timeout().is_some_and(|t| now >= t) {
            self.sweep(now);
        }
    }

    /// The next event, if any.
    pub fn poll_event(&mut self) -> Option<MonitorEvent> {
        self.events.pop_front()
    }

    /// Statistics of one session.
    pub fn session(&self, key: &SessionKey) -> Option<&SessionStats> {
        self.sessions.get(key).map(|s| &s.stats)
    }

    /// All sessions currently tracked.
    pub fn sessions(&self) -> impl Iterator<Item = (&SessionKey, &SessionStats)> {
        self.sessions.iter().map(|(k, s)| (k, &s.stats))
    }

    /// Sessions currently tracked.
    pub fn session_count(&self) -> usize {
        self.sessions.len()
    }

    /// Monitor-wide counters.
    pub fn stats(&self) -> &MonitorStats {
        &self.stats
    }

    /// Buffer size that always holds an ACK with the configured feedback.
    pub fn ack_capacity(&self) -> usize {
        HEADER_LEN + self.feedback.len() + TAG_LEN
    }
}

/// Writes the ACK of `update`, with `feedback` where it keeps the ACK no larger than the update,
/// sealed with `key` (the update's, for a sealed session).
fn write_ack(
    feedback: &[u8],
    key: Option<&PacketKey>,
    update: &Update<'_>,
    freshness: Freshness,
    rx_ts: u64,
    ack_buf: &mut [u8],
) -> Result<usize, Dropped> {
    let feedback = if feedback.len() <= update.payload.len() {
        feedback
    } else {
        &[]
    };
    let ack = Ack {
        flags: if freshness == Freshness::Fresh {
            0
        } else {
            FLAG_STALE
        },
        session: update.session,
        seq: update.seq,
        gen_ts: update.gen_ts,
        rx_ts,
        hold_ns: update.hold_ns,
        feedback,
    };
    let len = ack.encode(ack_buf).map_err(Dropped::AckBuffer)?;
    seal(key, ack_buf, len)
}

/// Seals the reply in `buf[..len]` with `key`, if any; returns its final length.
fn seal(key: Option<&PacketKey>, buf: &mut [u8], len: usize) -> Result<usize, Dropped> {
    match key {
        Some(k) => k.seal_reply(buf, len).map_err(Dropped::AckBuffer),
        None => Ok(len),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{Update, FLAG_PROBE};

    fn peer(port: u16) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], port))
    }

    fn update(session: u64, seq: u64, gen_ms: u64, payload: &[u8]) -> Vec<u8> {
        let u = Update {
            flags: 0,
            session,
            seq,
            gen_ts: Time::from_millis(gen_ms).as_nanos(),
            acked_seq: seq.saturating_sub(3),
            hold_ns: 7,
            cookie: None,
            payload,
        };
        let mut buf = vec![0u8; u.encoded_len()];
        u.encode(&mut buf).unwrap();
        buf
    }

    fn synced() -> Monitor {
        Monitor::new(
            MonitorConfig {
                clocks_synchronised: true,
                ..MonitorConfig::default()
            },
            Time::ZERO,
        )
    }

    #[test]
    fn acks_echo_the_update_and_fresh_ones_are_delivered() {
        let mut m = synced();
        let mut ack = [0u8; 64];
        let dg = update(9, 1, 10, b"temp=21");
        let h = m
            .handle_datagram(Time::from_millis(15), peer(1), &dg, &mut ack)
            .unwrap();
        let a = Ack::decode(&ack[..h.ack_len]).unwrap();
        assert_eq!(
            (a.session, a.seq, a.gen_ts, a.hold_ns, a.rx_ts, a.is_stale()),
            (9, 1, 10_000_000, 7, 15_000_000, false)
        );
        assert!(h.ack_len <= dg.len());
        let d = h.delivery.unwrap();
        assert_eq!((d.seq, d.payload), (1, &b"temp=21"[..]));
    }

    /// The Fig. 5 sample path at the monitor: update 2 arrives after 3, is ACKed STALE, not
    /// delivered, and does not reset age; the gap it left is no longer counted as lost.
    #[test]
    fn out_of_sequence_updates_are_acked_but_not_delivered() {
        let mut m = synced();
        let mut ack = [0u8; 64];
        let a = [0u64, 1, 2, 4, 5, 7];
        let d = [1u64, 4, 3, 6, 8, 9];
        let mut order: Vec<usize> = (0..6).collect();
        order.sort_by_key(|&i| d[i]);
        let mut delivered = vec![];
        for i in order {
            let dg = update(1, i as u64 + 1, a[i], &[]);
            let h = m
                .handle_datagram(Time::from_millis(d[i]), peer(1), &dg, &mut ack)
                .unwrap();
            assert_eq!(Ack::decode(&ack[..h.ack_len]).unwrap().is_stale(), i == 1);
            if let Some(del) = h.delivery {
                delivered.push(del.seq);
            }
        }
        assert_eq!(delivered, [1, 3, 4, 5, 6]);
        let key = SessionKey {
            peer: peer(1),
            session: 1,
        };
        let s = m.session(&key).unwrap();
        assert_eq!((s.delivered, s.stale, s.lost, s.duplicates), (5, 1, 0, 0));
        // Same hand computation as accounting::tests: 23.5 ms² over 9 ms.
        let avg = s.avg_age(Time::from_millis(10)).unwrap();
        assert!((avg - 23.5 / 9.0 * 1e-3).abs() < 1e-12);
    }

    #[test]
    fn gaps_duplicates_and_late_arrivals_are_counted() {
        let mut m = synced();
        let mut ack = [0u8; 64];
        let t = Time::from_millis(1);
        for seq in [1, 2, 5, 5, 3, 3, 100, 101, 4] {
            let _ = m.handle_datagram(t, peer(2), &update(3, seq, seq, &[]), &mut ack);
        }
        let key = SessionKey {
            peer: peer(2),
            session: 3,
        };
        let s = m.session(&key).unwrap();
        // Gaps: 3,4 (then 3 arrives late), 6..99 (94), 4 is more than 64 behind 101: stays lost.
        // The jump to 100 is held (stale) until 101 confirms it.
        assert_eq!(s.highest_seq, 101);
        assert_eq!(s.duplicates, 2);
        assert_eq!(s.stale, 3);
        assert_eq!(s.lost, 1 + 94);
        assert_eq!(s.delivered, 4);
    }

    #[test]
    fn malformed_and_non_updates_are_counted_and_dropped() {
        let mut m = synced();
        let mut ack = [0u8; 64];
        assert!(matches!(
            m.handle_datagram(Time::ZERO, peer(1), b"garbage", &mut ack),
            Err(Dropped::Malformed(DecodeError::Truncated { len: 7 }))
        ));
        let a = Ack {
            flags: 0,
            session: 1,
            seq: 1,
            gen_ts: 0,
            rx_ts: 0,
            hold_ns: 0,
            feedback: &[],
        };
        let mut buf = [0u8; HEADER_LEN];
        a.encode(&mut buf).unwrap();
        assert_eq!(
            m.handle_datagram(Time::ZERO, peer(1), &buf, &mut ack),
            Err(Dropped::NotAnUpdate)
        );
        assert_eq!((m.stats().malformed, m.stats().not_updates), (1, 1));
        assert_eq!(m.sessions().count(), 0);
    }

    fn ms(x: u64) -> Time {
        Time::from_millis(x)
    }

    #[test]
    fn a_spoofed_huge_sequence_does_not_make_real_updates_stale() {
        // The attack: one UPDATE with the session id, the source's address and sequence 2⁶⁴−1.
        let mut m = synced();
        let mut ack = [0u8; 64];
        let real = |m: &mut Monitor, seq: u64, at_ms: u64| {
            let mut ack = [0u8; 64];
            let data = update(9, seq, at_ms, b"r");
            let h = m
                .handle_datagram(ms(at_ms), peer(1), &data, &mut ack)
                .expect("a real update is answered");
            h.delivery.is_some()
        };
        assert!(real(&mut m, 1, 0));
        assert!(real(&mut m, 2, 10));
        assert_eq!(
            m.handle_datagram(ms(20), peer(1), &update(9, u64::MAX, 20, b"x"), &mut ack),
            Err(Dropped::SeqJump)
        );
        // Beyond the window after a short silence, too.
        let far = 2 + MonitorConfig::default().max_seq_jump + 100_000;
        assert_eq!(
            m.handle_datagram(ms(30), peer(1), &update(9, far, 30, b"x"), &mut ack),
            Err(Dropped::SeqJump)
        );
        assert_eq!(m.stats().seq_jumps, 2);
        // The source's next updates are still fresh.
        assert!(real(&mut m, 3, 40));
        // A long silence (an outage at a high rate) widens the window: 10 s at up to 10⁶/s. The
        // jump is held until the source's next update confirms it.
        assert!(!real(&mut m, 3 + 5_000_000, 10_040));
        assert!(real(&mut m, 4 + 5_000_000, 10_041));
        let s = m.sessions().next().unwrap().1;
        // Lost: 4 to 5,000,002.
        assert_eq!((s.delivered, s.stale, s.lost), (4, 1, 4_999_999));
        assert_eq!(m.stats().seq_jumps_held, 1);
    }

    /// Delivers `seqs` of session 9 from `peer(1)`, one per millisecond from `at_ms`; returns
    /// those delivered.
    fn deliver(m: &mut Monitor, at_ms: u64, seqs: impl IntoIterator<Item = u64>) -> Vec<u64> {
        let mut ack = [0u8; 64];
        let mut delivered = Vec::new();
        for (i, seq) in seqs.into_iter().enumerate() {
            let t = at_ms + i as u64;
            let data = update(9, seq, t, b"r");
            let h = m
                .handle_datagram(ms(t), peer(1), &data, &mut ack)
                .expect("answered");
            let stale = Ack::decode(&ack[..h.ack_len]).unwrap().is_stale();
            assert_eq!(stale, h.delivery.is_none(), "seq {seq}");
            delivered.extend(h.delivery.map(|d| d.seq));
        }
        delivered
    }

    /// The attack inside the window: one spoofed update 60,000 ahead of the session. It is held,
    /// and every later update of the real source is still delivered.
    #[test]
    fn a_spoofed_jump_inside_the_window_is_held_and_the_real_line_goes_on() {
        let mut m = synced();
        assert_eq!(deliver(&mut m, 0, 1..=10), (1..=10).collect::<Vec<_>>());
        assert!(deliver(&mut m, 20, [10 + 60_000]).is_empty());
        assert_eq!(
            deliver(&mut m, 30, 11..=786),
            (11..=786).collect::<Vec<_>>()
        );
        let s = m.sessions().next().unwrap().1;
        assert_eq!((s.highest_seq, s.delivered, s.lost), (786, 786, 0));
        // Two spoofed updates (a jump and its confirmation) take the session over; the real
        // line is kept and takes it back with its next update.
        assert_eq!(deliver(&mut m, 900, [100_000, 100_001]), [100_001]);
        assert_eq!(
            deliver(&mut m, 910, 787..=800),
            (787..=800).collect::<Vec<_>>()
        );
        assert_eq!(m.sessions().next().unwrap().1.highest_seq, 800);
    }

    /// A small jump (at most 64 ahead, e.g. a burst of losses) moves the line at once; a jump
    /// that a replayed or reordered update of the line left behind does not bring it back.
    #[test]
    fn small_gaps_move_the_line_at_once() {
        let mut m = synced();
        assert_eq!(deliver(&mut m, 0, [1, 2, 66, 67]), [1, 2, 66, 67]);
        // 3 is within 64 of 67: a late arrival on the current line, ACKed STALE.
        assert!(deliver(&mut m, 10, [3]).is_empty());
        let s = m.sessions().next().unwrap().1;
        assert_eq!((s.lost, s.stale, m.stats().seq_jumps_held), (62, 1, 0));
    }

    /// With pre-shared keys a jump is the source's own (nobody else can seal it): taken at once.
    #[test]
    fn sealed_sessions_take_jumps_at_once() {
        let mut s = SessionStats::new(Time::ZERO, false, false);
        assert_eq!(s.record(1, false), Freshness::Fresh);
        assert_eq!(s.record(60_001, false), Freshness::Fresh);
        assert_eq!(s.record(2, false), Freshness::Stale);
        let mut u = SessionStats::new(Time::ZERO, false, false);
        assert_eq!(u.record(1, true), Freshness::Fresh);
        assert_eq!(u.record(60_001, true), Freshness::Held);
        assert_eq!(u.record(2, true), Freshness::Fresh);
    }

    /// What a monitor keeps per session (`docs/SCALING.md`): its key and record, side by side
    /// in the session table. Growing either costs every session of a million-source monitor.
    #[test]
    #[cfg(target_pointer_width = "64")]
    fn a_session_record_is_208_bytes() {
        use std::mem::size_of;
        assert_eq!(size_of::<SessionKey>(), 40);
        assert_eq!(size_of::<SessionStats>(), 160);
        assert_eq!(size_of::<(SessionKey, Session)>(), 208);
    }

    #[test]
    fn malformed_datagrams_are_counted_by_reason() {
        let mut m = synced();
        let mut ack = [0u8; 64];
        let good = update(1, 1, 0, b"payload");
        let mut bad_magic = good.clone();
        bad_magic[0] = b'X';
        let mut long = good.clone();
        long.push(0); // one byte more than the length field says
        let mut short = good.clone();
        short.pop();
        for d in [&b"garbage"[..], &bad_magic, &long, &short, &bad_magic] {
            assert!(m.handle_datagram(Time::ZERO, peer(1), d, &mut ack).is_err());
        }
        let by: Vec<(&str, u64)> = m
            .stats()
            .malformed_by
            .iter()
            .map(|(k, v)| (*k, *v))
            .collect();
        assert_eq!(
            by,
            [("bad_magic", 2), ("length_mismatch", 2), ("truncated", 1)]
        );
        assert_eq!(m.stats().malformed, 5);
        assert_eq!(m.stats().acks, 0);
    }

    #[test]
    fn sessions_are_keyed_by_peer_and_id() {
        let mut m = synced();
        let mut ack = [0u8; 64];
        for (p, id) in [(1, 5), (2, 5), (1, 6)] {
            m.handle_datagram(Time::ZERO, peer(p), &update(id, 1, 0, &[]), &mut ack)
                .unwrap();
        }
        assert_eq!(m.sessions().count(), 3);
    }

    #[test]
    fn full_table_refuses_newcomers_then_probation_frees_spoofed_sessions() {
        let cfg = MonitorConfig {
            max_sessions: 4,
            idle_timeout: Duration::from_secs(30),
            probation: Duration::from_secs(2),
            max_prefix_share: 1.0,
            cookie_threshold: 2.0,
            ..MonitorConfig::default()
        };
        let mut m = Monitor::new(cfg, Time::ZERO);
        let mut ack = [0u8; 64];
        // One established session (two updates) and three one-shot "spoofed" ids.
        for seq in 1..=2 {
            m.handle_datagram(Time::ZERO, peer(1), &update(1, seq, 0, &[]), &mut ack)
                .unwrap();
        }
        for id in 100..103 {
            m.handle_datagram(Time::ZERO, peer(9), &update(id, 1, 0, &[]), &mut ack)
                .unwrap();
        }
        let newcomer = update(7, 1, 0, &[]);
        assert_eq!(
            m.handle_datagram(Time::from_secs(1), peer(3), &newcomer, &mut ack),
            Err(Dropped::TableFull)
        );
        // After probation the one-shot sessions are swept on demand; the established one stays.
        m.handle_datagram(Time::from_millis(2500), peer(3), &newcomer, &mut ack)
            .unwrap();
        assert_eq!(m.sessions().count(), 2);
        assert_eq!(m.stats().sessions_refused, 1);
        assert_eq!(m.stats().sessions_expired, 3);
        // Established sessions expire after idle_timeout and are reported once.
        m.handle_timeout(Time::from_secs(40));
        assert_eq!(m.sessions().count(), 0);
        let mut expired = vec![];
        while let Some(MonitorEvent::SessionExpired { key, stats }) = m.poll_event() {
            expired.push((key.session, stats.delivered));
        }
        assert_eq!(expired, [(1, 2)]);
    }

    fn multipath_update(session: u64, seq: u64, gen_ms: u64) -> Vec<u8> {
        let mut dg = update(session, seq, gen_ms, b"mp");
        dg[4] |= crate::wire::FLAG_MULTIPATH;
        dg
    }

    /// One session over two paths: the second address joins the session the first named, a
    /// copy of an update already received is a duplicate, the union's freshest update resets
    /// the age, and each reply goes back to the address its update came from (the caller's
    /// job: the monitor answers the datagram it was given).
    #[test]
    fn multipath_updates_join_one_session_and_are_deduplicated() {
        let mut m = synced();
        let mut ack = [0u8; 64];
        let mut deliver = |m: &mut Monitor, at: u64, from: u16, dg: &[u8]| {
            let h = m
                .handle_datagram(Time::from_millis(at), peer(from), dg, &mut ack)
                .unwrap();
            let a = Ack::decode(&ack[..h.ack_len]).unwrap();
            (h.delivery.map(|d| (d.key.peer, d.seq)), a.seq, a.is_stale())
        };
        assert_eq!(
            deliver(&mut m, 10, 1, &multipath_update(5, 1, 0)),
            (Some((peer(1), 1)), 1, false)
        );
        // Update 2 over the second path: delivered in the same session (named by path 1).
        assert_eq!(
            deliver(&mut m, 12, 2, &multipath_update(5, 2, 8)),
            (Some((peer(1), 2)), 2, false)
        );
        // Its copy over the first path comes later: a duplicate, ACKed STALE.
        assert_eq!(
            deliver(&mut m, 30, 1, &multipath_update(5, 2, 8)),
            (None, 2, true)
        );
        // Update 1's copy over the second path, later still: not fresh either.
        assert_eq!(
            deliver(&mut m, 31, 2, &multipath_update(5, 1, 0)),
            (None, 1, true)
        );
        assert_eq!(m.session_count(), 1);
        let s = m
            .session(&SessionKey {
                peer: peer(1),
                session: 5,
            })
            .unwrap();
        assert_eq!((s.delivered, s.duplicates, s.lost), (2, 2, 0));
        // Age over the union: update 2 (generated at 8 ms) arrived at 12 ms, so at 40 ms the
        // age is 32 ms.
        assert!((s.age(Time::from_millis(40)).unwrap() - 0.032).abs() < 1e-12);
        assert_eq!(m.stats().joined_updates, 2);
    }

    /// Without the flag, the same session id from two addresses is two sessions (the v1 rule
    /// single-path peers rely on), and a flagged update does not join a session opened without
    /// it from another address.
    #[test]
    fn single_path_sessions_stay_keyed_by_address() {
        let mut m = synced();
        let mut ack = [0u8; 64];
        m.handle_datagram(Time::ZERO, peer(1), &update(5, 1, 0, b"a"), &mut ack)
            .unwrap();
        m.handle_datagram(Time::ZERO, peer(2), &update(5, 1, 0, b"a"), &mut ack)
            .unwrap();
        m.handle_datagram(Time::ZERO, peer(3), &multipath_update(5, 2, 0), &mut ack)
            .unwrap();
        assert_eq!(m.session_count(), 3);
        assert_eq!(m.stats().joined_updates, 0);
    }

    /// When a multipath session expires its id no longer names it: a later update with the id
    /// opens a new session keyed by its own address.
    #[test]
    fn an_expired_multipath_session_releases_its_id() {
        let mut m = synced();
        let mut ack = [0u8; 64];
        for seq in 1..=2 {
            m.handle_datagram(Time::ZERO, peer(1), &multipath_update(5, seq, 0), &mut ack)
                .unwrap();
        }
        m.handle_timeout(Time::from_secs(40));
        assert_eq!(m.session_count(), 0);
        let later = multipath_update(5, 3, 0);
        let h = m
            .handle_datagram(Time::from_secs(41), peer(2), &later, &mut ack)
            .unwrap();
        assert_eq!(h.delivery.unwrap().key.peer, peer(2));
        assert!(m.joined.get(&5) == Some(&peer(2)));
    }

    #[test]
    fn feedback_is_attached_only_when_the_ack_stays_no_larger() {
        let mut m = synced();
        m.set_feedback(&[FeedbackItem {
            kind: 1,
            value: &[1, 2],
        }])
        .unwrap();
        let mut ack = [0u8; 64];
        let small = update(1, 1, 0, &[0]);
        let h = m
            .handle_datagram(Time::ZERO, peer(1), &small, &mut ack)
            .unwrap();
        assert_eq!(h.ack_len, HEADER_LEN);
        let big = update(1, 2, 0, &[0; 8]);
        let h = m
            .handle_datagram(Time::ZERO, peer(1), &big, &mut ack)
            .unwrap();
        assert_eq!(h.ack_len, HEADER_LEN + 4);
        let a = Ack::decode(&ack[..h.ack_len]).unwrap();
        assert_eq!(a.feedback_items().next().unwrap().value, &[1, 2]);
    }

    #[test]
    fn probes_are_delivered_and_counted() {
        let mut m = synced();
        let mut ack = [0u8; 64];
        let u = Update {
            flags: FLAG_PROBE,
            session: 4,
            seq: 1,
            gen_ts: 0,
            acked_seq: 0,
            hold_ns: 0,
            cookie: None,
            payload: b"p",
        };
        let mut buf = [0u8; 64];
        let n = u.encode(&mut buf).unwrap();
        let h = m
            .handle_datagram(Time::ZERO, peer(1), &buf[..n], &mut ack)
            .unwrap();
        assert!(h.delivery.unwrap().probe);
    }

    fn host(a: u8, b: u8, port: u16) -> SocketAddr {
        SocketAddr::from(([10, a, b, 1], port))
    }

    /// The lock-out attack, scaled down: one host opens a whole table's worth of sessions, two
    /// updates each. It gets its share; a source from another network is still served.
    #[test]
    fn one_host_cannot_hold_more_than_its_share_of_the_table() {
        let cfg = MonitorConfig {
            max_sessions: 100,
            cookie_threshold: 2.0,
            ..MonitorConfig::default()
        };
        let mut m = Monitor::new(cfg, Time::ZERO);
        let mut ack = [0u8; 128];
        let mut held = 0;
        for id in 0..100 {
            for seq in 1..=2 {
                let d = update(id, seq, 0, &[]);
                if m.handle_datagram(ms(1), host(0, 0, 9), &d, &mut ack)
                    .is_ok()
                    && seq == 2
                {
                    held += 1;
                }
            }
        }
        // Also from other hosts of its /24.
        let late_comer = update(500, 1, 0, &[]);
        let neighbour = m.handle_datagram(ms(1), host(0, 0, 10), &late_comer, &mut ack);
        assert_eq!(held, 25);
        assert_eq!(neighbour, Err(Dropped::PrefixShare));
        assert_eq!(
            m.stats().refused_by.get("prefix_share"),
            Some(&(2 * 75 + 1))
        );
        let other = update(7, 1, 0, b"legit");
        assert!(m
            .handle_datagram(ms(2), host(1, 0, 9), &other, &mut ack)
            .unwrap()
            .delivery
            .is_some());
    }

    #[test]
    fn stream_updates_need_no_cookie_get_no_ack_and_count_as_datagrams_do() {
        let cfg = MonitorConfig {
            max_sessions: 8,
            max_prefix_share: 1.0,
            cookie_threshold: 0.5,
            clocks_synchronised: true,
            ..MonitorConfig::default()
        };
        let mut m = Monitor::new(cfg, Time::ZERO);
        let mut ack = [0u8; 128];
        for id in 0..4 {
            m.handle_datagram(ms(0), peer(1), &update(id, 1, 0, &[]), &mut ack)
                .unwrap();
        }
        // Half full: a datagram newcomer would be asked for a cookie; a stream one gets state.
        let (first, second) = (update(9, 1, 4, b"a"), update(9, 2, 25, b"b"));
        let d = m
            .handle_stream_update(ms(10), peer(2), &first, &mut ack)
            .unwrap()
            .unwrap();
        assert_eq!((d.seq, d.payload), (1, &b"a"[..]));
        let d = m
            .handle_stream_update(ms(30), peer(2), &second, &mut ack)
            .unwrap();
        assert_eq!(d.map(|d| d.seq), Some(2));
        // Garbage from a stream is counted as malformed, as from a datagram.
        assert!(m
            .handle_stream_update(ms(31), peer(2), b"junk", &mut ack)
            .is_err());
        let st = m.stats();
        assert_eq!((st.stream_updates, st.datagrams), (3, 4));
        assert_eq!(
            (st.acks, st.delivered, st.cookies_sent, st.malformed),
            (4, 6, 0, 1)
        );
        let key = SessionKey {
            peer: peer(2),
            session: 9,
        };
        let s = m.session(&key).unwrap();
        assert!(s.stream);
        assert_eq!((s.delivered, s.bytes), (2, 2));
        // True age: 6 ms at 10 ms, growing to 26 ms at 30 ms, then 5 ms: over [10, 30] the
        // average is 16 ms.
        assert!((s.avg_age(ms(30)).unwrap() - 0.016).abs() < 1e-9);
        assert!(
            !m.session(&SessionKey {
                peer: peer(1),
                session: 0
            })
            .unwrap()
            .stream
        );
    }

    #[test]
    fn under_pressure_a_new_session_gets_state_only_by_echoing_its_cookie() {
        let cfg = MonitorConfig {
            max_sessions: 8,
            max_prefix_share: 1.0,
            cookie_threshold: 0.5,
            cookie_secret: Secret([1; 32]),
            ..MonitorConfig::default()
        };
        let mut m = Monitor::new(cfg, Time::ZERO);
        let mut ack = [0u8; 128];
        for id in 0..4 {
            m.handle_datagram(ms(0), peer(1), &update(id, 1, 0, &[]), &mut ack)
                .unwrap();
        }
        // Half full: the next newcomer is answered with a COOKIE no larger than its update.
        let first = update(9, 1, 5, &[]);
        let h = m
            .handle_datagram(ms(10), peer(2), &first, &mut ack)
            .unwrap();
        assert!(h.cookie && h.delivery.is_none());
        assert!(h.ack_len <= first.len());
        let c = Cookie::decode(&ack[..h.ack_len]).unwrap();
        assert_eq!((c.session, c.seq, c.gen_ts), (9, 1, 5_000_000));
        assert_eq!(m.session_count(), 4);
        // From another port (a spoofer guessing), or with a flipped bit: another COOKIE.
        let echo = |seq: u64, cookie: [u8; 12]| {
            let u = Update {
                flags: 0,
                session: 9,
                seq,
                gen_ts: 0,
                acked_seq: 0,
                hold_ns: 0,
                cookie: Some(cookie),
                payload: b"hi",
            };
            let mut buf = vec![0u8; u.encoded_len()];
            u.encode(&mut buf).unwrap();
            buf
        };
        let good = echo(2, c.cookie);
        let h = m.handle_datagram(ms(20), peer(3), &good, &mut ack).unwrap();
        assert!(h.cookie);
        let mut flipped = c.cookie;
        flipped[0] ^= 1;
        assert!(
            m.handle_datagram(ms(20), peer(2), &echo(2, flipped), &mut ack)
                .unwrap()
                .cookie
        );
        assert_eq!(m.stats().cookies_rejected, 2);
        // Echoed from its own address: admitted and delivered.
        let h = m.handle_datagram(ms(30), peer(2), &good, &mut ack).unwrap();
        assert!(!h.cookie);
        assert_eq!(h.delivery.unwrap().payload, b"hi");
        // A cookie echoed two epochs (20 s) after it was issued has expired.
        let mut late = good.clone();
        late[8..16].copy_from_slice(&10u64.to_be_bytes());
        let first10 = update(10, 1, 0, &[]);
        let h = m
            .handle_datagram(ms(40), peer(5), &first10, &mut ack)
            .unwrap();
        let c10 = Cookie::decode(&ack[..h.ack_len]).unwrap().cookie;
        late[HEADER_LEN..HEADER_LEN + 12].copy_from_slice(&c10);
        assert!(
            m.handle_datagram(Time::from_secs(20), peer(5), &late, &mut ack)
                .unwrap()
                .cookie
        );
        assert_eq!((m.stats().cookies_sent, m.stats().cookies_rejected), (5, 3));
        assert_eq!(m.session_count(), 5);
    }
}
