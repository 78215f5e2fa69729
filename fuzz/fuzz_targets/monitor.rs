//! Fuzz target: the monitor state machine (`acp_core::Monitor`) under an arbitrary sequence of
//! operations.
//!
//! The input is read as a small configuration (1–64 sessions, probation and idle timeouts of a
//! few milliseconds to a minute, clocks synchronised or not, optional receiver feedback, pre-shared
//! keys or not; a fixed cookie secret so that runs replay; `..MonitorConfig::default()` for the
//! rest, so the default prefix share, cookie threshold and cookie epoch apply) followed by up to
//! `MAX_OPS` operations: time steps (nanoseconds to decades, anywhere in the `u64` range),
//! `handle_timeout` calls (at the current time or at `poll_timeout`'s deadline), event drains, and
//! datagrams from twelve peers in eight network prefixes (IPv4, IPv6, an IPv4-mapped IPv6 address,
//! a scoped link-local one). Most datagrams are *valid* UPDATEs encoded from fuzzed fields, with
//! session ids from a small set (so sessions collide and the table fills), sequences next to the
//! session's previous ones, around the `max_seq_jump` edge and near `u64::MAX`, probes included,
//! echoing the cookie the monitor issued to that peer and session (or none, or a forged one);
//! others are mutated copies of such UPDATEs (bit flips, byte writes, truncation, extension, a
//! patched length field, a fake seal), replays of earlier datagrams from any peer, well-formed
//! ACKs and COOKIEs, or raw bytes.
//!
//! *Sealed mode* (bit 7 of the first input byte): the monitor holds a keyring of two pre-shared
//! keys (`MonitorConfig::keys`). Each UPDATE the harness builds is then sealed as the input says:
//! correctly, with either key of the ring, or not at all, or with a key id the ring lacks, or with
//! a ring id and the wrong secret, or with the right key derived for another session id; mutations
//! then tamper with it, and replays resend it. The harness remembers every datagram it sealed
//! correctly: only those exact bytes may pass authentication. Replays are refused within a
//! session's life. Sealed sessions are not on probation, but an expired session's window is
//! gone, so a replay of its cookie-bearing first update opens it again while that cookie is
//! valid (the target's idle timeouts are often shorter than the default cookie epoch's two,
//! which the defaults rule out): predicted, not flagged.
//!
//! Checked after every step, besides "never panics":
//! - every datagram's outcome is the one the harness predicts: the exact `DecodeError`;
//!   `NotAnUpdate` for an ACK or COOKIE; without keys, `Auth(Unexpected)` for a sealed UPDATE;
//!   with keys, `Auth(Unsealed)` for an unsealed one, `Auth(UnknownKey)` for a key id the ring
//!   (or, for a known session, its key) lacks and `Auth(BadTag)` for any sealed datagram the
//!   harness did not seal correctly — nothing tampered, forged or unsealed gets further — then
//!   `Replayed` exactly when a known session has already recorded the sequence or it is too
//!   old for the 64-sequence window (a replay is never ACKed nor delivered); every new session
//!   must echo a cookie; for an unknown session `PrefixShare` exactly when its prefix holds its
//!   share, else `TableFull` only with a full table, else a COOKIE exactly when the table is
//!   `cookie_threshold` full and the update does not echo a cookie issued to that peer and session
//!   in this cookie epoch or the previous one; `SeqJump` exactly beyond `max_seq_jump` plus the
//!   silence allowance of a known session; an ACK otherwise;
//! - an ACK or COOKIE is no longer than its datagram (no amplification) and decodes; an ACK echoes
//!   the update's session, sequence, generation time and hold time, carries `rx_ts = now` (with
//!   keys: at least `now` and above every earlier sealed ACK's, so that nonces differ), the
//!   configured feedback only when it fits, and is STALE exactly when the update is not
//!   delivered; a COOKIE echoes session, sequence and generation time and creates no state; with
//!   keys every reply is sealed with the session's key;
//! - an update is delivered exactly when its sequence exceeds its session's highest, and the
//!   delivery and the session's statistics say so;
//! - `sessions().count() <= max_sessions`, and equals `sessions_created − sessions_expired`;
//! - the monitor's counters agree with the outcomes seen (`datagrams`, `malformed ==
//!   Σ malformed_by`, `not_updates`, `acks`, `delivered`, `sessions_refused == Σ refused_by`,
//!   `cookies_sent`, `cookies_rejected`, `auth_failed_by` by reason, `replayed` included,
//!   `seq_jumps`);
//! - after `handle_timeout(now)` nothing expired is left and `poll_timeout` is in the future;
//! - a drain yields at most `max_sessions` events, each for an established session;
//! - with synchronised clocks, a session's age is `now − generation time` of its freshest update,
//!   or that saturated to the `i64` range (fuzz/regressions/monitor-age-wrap), and its
//!   time-average age is the one the harness integrates from the deliveries it saw, unless the
//!   area may have saturated (see `AgeTrack`; fuzz/regressions/monitor-age-area-overflow).
//!
//! Time is not limited. Inputs used to stay within 2⁶¹ ns of their start because the age area
//! overflowed; now that the age and its area saturate, the age invariants above hold over the
//! whole `u64` nanosecond range, and inputs that start near `u64::MAX` or step by centuries are
//! the ones that check the saturation (and `Time::MAX` itself, where sealed rx times run out).
#![no_main]

use std::collections::{BTreeMap, HashMap, HashSet};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV6};
use std::sync::OnceLock;
use std::time::Duration;

use acp_core::monitor::{Dropped, MonitorEvent, SessionStats};
use acp_core::seal::{AuthError, Keyring, Psk, Secret, SessionCipher, KEY_LEN};
use acp_core::wire::{
    encode_feedback, Ack, Cookie, FeedbackItem, Packet, Update, COOKIE_LEN, FLAG_AUTH, FLAG_PROBE,
    HEADER_LEN, MAX_BODY, TAG_LEN,
};
use acp_core::{Monitor, MonitorConfig, SessionKey, Time};
use arbitrary::{Arbitrary, Result, Unstructured};
use libfuzzer_sys::fuzz_target;

/// Set `ACP_FUZZ_TRACE=1` to print each operation (when replaying an input).
fn trace() -> bool {
    static TRACE: OnceLock<bool> = OnceLock::new();
    *TRACE.get_or_init(|| std::env::var_os("ACP_FUZZ_TRACE").is_some())
}

/// Most operations (datagrams, time steps, timeouts, drains) one input may perform.
const MAX_OPS: usize = 2_000;
/// Datagrams remembered for replays.
const HISTORY: usize = 32;
/// Session ids most updates use, so that they collide across peers and inputs.
const SESSION_IDS: [u64; 6] = [1, 2, 3, 0x5eed_5eed_5eed_5eed, u64::MAX, 0];

fn peers() -> [SocketAddr; 12] {
    let v4 = |a, b, c, d, port| SocketAddr::new(IpAddr::V4(Ipv4Addr::new(a, b, c, d)), port);
    let v6 = |segments: [u16; 8], port| {
        let [a, b, c, d, e, f, g, h] = segments;
        SocketAddr::new(IpAddr::V6(Ipv6Addr::new(a, b, c, d, e, f, g, h)), port)
    };
    [
        v4(127, 0, 0, 1, 40_000),
        v4(127, 0, 0, 1, 40_001),
        v4(10, 1, 2, 3, 40_000),
        // The same /24 as the previous peer.
        v4(10, 1, 2, 4, 40_000),
        v4(0, 0, 0, 0, 0),
        v4(192, 0, 2, 1, 40_000),
        v6([0, 0, 0, 0, 0, 0, 0, 1], 40_000),
        // The first peer seen through a dual-stack socket: another session key, but the same
        // prefix and the same cookies.
        SocketAddr::new(IpAddr::V6(Ipv4Addr::LOCALHOST.to_ipv6_mapped()), 40_000),
        SocketAddr::V6(SocketAddrV6::new(
            Ipv6Addr::new(0xfe80, 0, 0, 0, 0, 0, 0, 1),
            40_000,
            0,
            2,
        )),
        v6([0x2001, 0xdb8, 0, 0, 0, 0, 0, 1], u16::MAX),
        // The same /48 as the previous peer.
        v6([0x2001, 0xdb8, 0, 0, 0, 0, 0, 2], u16::MAX),
        v6([0x2001, 0xdb8, 1, 0, 0, 0, 0, 1], 1),
    ]
}

/// A peer's network prefix, as the monitor shares its table out (IPv4 /24, IPv6 /48; an
/// IPv4-mapped address counts as IPv4).
fn prefix(peer: SocketAddr) -> Vec<u8> {
    match peer.ip().to_canonical() {
        IpAddr::V4(ip) => ip.octets()[..3].to_vec(),
        IpAddr::V6(ip) => ip.octets()[..6].to_vec(),
    }
}

/// Who a cookie is issued to: the peer's canonical address and port, and the session id.
type CookieOwner = (IpAddr, u16, u64);

fn cookie_owner(peer: SocketAddr, session: u64) -> CookieOwner {
    (peer.ip().to_canonical(), peer.port(), session)
}

#[derive(Arbitrary, Debug)]
struct Setup {
    /// `max_sessions = 1 + this % 64`; bit 7 set: sealed mode (the monitor holds `keyring()`).
    /// The mode hides in a bit `% 64` ignores so that older inputs keep their meaning.
    max_sessions: u8,
    /// `probation = 1 + this % 2000` ms.
    probation_ms: u16,
    /// `idle_timeout = 1 + this % 60_000` ms.
    idle_ms: u16,
    synchronised: bool,
    /// Up to three feedback TLVs (kind, length ≤ 15) to attach to ACKs.
    feedback: Vec<(u8, u8)>,
    start: Start,
}

#[derive(Arbitrary, Debug)]
enum Start {
    Zero,
    Millis(u32),
    Any(u64),
}

#[derive(Arbitrary, Debug)]
enum Step {
    Nanos(u16),
    Micros(u16),
    Millis(u16),
    Secs(u16),
    Any(u64),
}

impl Step {
    fn duration(&self) -> Duration {
        match *self {
            Step::Nanos(n) => Duration::from_nanos(n.into()),
            Step::Micros(n) => Duration::from_micros(n.into()),
            Step::Millis(n) => Duration::from_millis(n.into()),
            Step::Secs(n) => Duration::from_secs(n.into()),
            Step::Any(n) => Duration::from_nanos(n),
        }
    }
}

#[derive(Arbitrary, Debug)]
enum SessionSel {
    Common(u8),
    Any(u64),
}

/// A sequence number, mostly relative to the highest the harness sent for that session id.
#[derive(Arbitrary, Debug)]
enum SeqSel {
    Next,
    Same,
    Ahead(u8),
    Behind(u8),
    Small(u8),
    /// Around the default `max_seq_jump` (65,536) past the last one.
    JumpEdge(i8),
    NearMax(u16),
    Any(u64),
}

#[derive(Arbitrary, Debug)]
enum GenSel {
    Now,
    Behind(u32),
    Ahead(u32),
    Any(u64),
}

#[derive(Arbitrary, Debug)]
enum PayloadSel {
    Empty,
    Bytes(Vec<u8>),
    /// A zero-filled payload of `this % 2048` bytes.
    Zeros(u16),
    /// A zero-filled payload of the wire's maximum size.
    Largest,
}

#[derive(Arbitrary, Debug)]
struct UpdateSpec {
    session: SessionSel,
    seq: SeqSel,
    gen: GenSel,
    /// `acked_seq = seq − this` (saturating), or anything when `None`.
    acked_back: Option<u8>,
    acked_any: u64,
    hold_ns: u32,
    probe: bool,
    cookie: CookieSel,
    payload: PayloadSel,
}

#[derive(Arbitrary, Debug)]
enum CookieSel {
    None,
    /// The last cookie the monitor issued to this peer and session, if any.
    Echo,
    Forged([u8; COOKIE_LEN]),
}

#[derive(Arbitrary, Debug)]
enum Mutation {
    Flip {
        at: u16,
        bit: u8,
    },
    Set {
        at: u16,
        value: u8,
    },
    Truncate(u16),
    Extend(Vec<u8>),
    /// Rewrites the length field to match the datagram's actual size.
    FixLength,
    /// Frames the datagram as sealed: flag AUTH, a key id, and a tag after the body.
    Seal {
        key_id: u8,
        tag: [u8; TAG_LEN],
    },
}

#[derive(Arbitrary, Debug)]
enum Op {
    Advance(Step),
    Timeout,
    /// Jumps to `poll_timeout()` (if later) and handles the timeout there.
    WakeUp,
    Drain,
    Update {
        peer: u8,
        spec: UpdateSpec,
    },
    Mutated {
        peer: u8,
        spec: UpdateSpec,
        mutations: Vec<Mutation>,
    },
    Replay {
        peer: u8,
        back: u8,
    },
    /// A well-formed ACK, or COOKIE, sent to the monitor.
    Reply {
        peer: u8,
        session: SessionSel,
        seq: u64,
        stale: bool,
        cookie: bool,
    },
    Raw {
        peer: u8,
        bytes: Vec<u8>,
    },
    /// An update handed over with an ACK buffer that may be too small (caller error).
    ShortAckBuffer {
        peer: u8,
        spec: UpdateSpec,
        len: u8,
    },
}

/// Sealed mode: how the harness seals an UPDATE it built (read after the operation).
#[derive(Arbitrary, Debug, Clone, Copy)]
enum SealSel {
    /// Correctly, as a source holding the ring's first (`false`) or second key would.
    Ring(bool),
    /// Not at all.
    None,
    /// With a key id the ring lacks.
    UnknownKey,
    /// With a ring key id and the wrong secret.
    WrongSecret,
    /// With the ring's first key, derived for another session id.
    OtherSession,
}

fn psk(id: u8, fill: u8) -> Psk {
    Psk {
        id,
        key: Secret([fill; KEY_LEN]),
    }
}

/// The pre-shared keys of a sealed monitor.
fn keyring() -> Keyring {
    Keyring::new(vec![psk(1, 0x11), psk(2, 0x22)]).expect("two keys, distinct ids")
}

/// Sealed mode: what one session's replay window must hold, from what the harness saw it record.
struct Window {
    /// The pre-shared key the session was opened with; its later updates must use it.
    key_id: u8,
    /// The sequence of the update that opened the session: it and all below count as seen (a
    /// COOKIE may have answered them before). `None` when the session was opened by an update
    /// refused as a replay (sequence 0, see `deliver`).
    floor: Option<u64>,
    /// Sequences recorded since.
    received: HashSet<u64>,
}

impl Window {
    /// Whether the monitor must refuse `seq` as a replay, the session's highest being `highest`:
    /// already recorded, or too far behind for the 64-sequence window to tell.
    fn seen(&self, highest: u64, seq: u64) -> bool {
        seq <= highest
            && (seq == highest
                || highest - seq > 64
                || self.floor.is_some_and(|f| seq <= f)
                || self.received.contains(&seq))
    }
}

/// What the harness knows of one session's age process (synchronised clocks), rebuilt from the
/// deliveries it saw: the time-average age is twice the area under the age, `Σ (a1 − a0)(a1 +
/// a0)` over the pieces between deliveries (ages `a0`, `a1` at a piece's ends), divided by twice
/// the time the age was defined.
///
/// The harness sums the pieces in floating point, so its sum is off by about `n·ε·Σ|piece|` at
/// most, which sets the tolerance. The monitor sums them exactly in an `i128` that saturates
/// instead of overflowing (fuzz/regressions/monitor-age-area-overflow): no exact answer fits
/// there, and a finite one is the contract. No partial sum can saturate while `Σ|piece|` stays
/// within the `i128` range; beyond `SATURATION` (half of it, against rounding) the monitor's
/// average need only be finite. It takes ages and spans of centuries to get there.
#[derive(Debug, Clone, Default)]
struct AgeTrack {
    /// Deliveries accounted for.
    delivered: u64,
    /// The freshest generation time and when it was delivered; `None` before the first delivery.
    reference: Option<(u64, Time)>,
    /// Up to the last delivery: time the age was defined (ns), twice the area (ns²), `Σ|piece|`.
    defined_ns: u64,
    twice_area: f64,
    magnitude: f64,
}

/// `Σ|piece|` (ns²) from which the monitor's area may have saturated: 2¹²⁶.
const SATURATION: f64 = (1u128 << 126) as f64;

impl AgeTrack {
    /// `(defined_ns, twice_area, magnitude)` up to `now`.
    fn upto(&self, now: Time) -> (u64, f64, f64) {
        let Some((z, last)) = self.reference else {
            return (0, 0.0, 0.0);
        };
        // The ages at the piece's ends, exactly; then one rounding per factor and product.
        let a0 = i128::from(last.as_nanos()) - i128::from(z);
        let a1 = i128::from(now.as_nanos()) - i128::from(z);
        let piece = (a1 - a0) as f64 * (a1 + a0) as f64;
        (
            self.defined_ns + now.nanos_since(last),
            self.twice_area + piece,
            self.magnitude + piece.abs(),
        )
    }

    /// A delivery at `now` of an update generated at `z`.
    fn deliver(&mut self, now: Time, z: u64) {
        (self.defined_ns, self.twice_area, self.magnitude) = self.upto(now);
        self.reference = Some((z, now));
        self.delivered += 1;
    }

    /// Checks the time-average age `avg` (s) the monitor reports at `now`.
    fn check(&self, now: Time, avg: Option<f64>) {
        let (defined, twice_area, magnitude) = self.upto(now);
        let Some(avg) = avg else {
            assert_eq!(
                defined, 0,
                "no average age after {defined} ns of defined age"
            );
            return;
        };
        assert!(
            defined > 0,
            "an average age {avg} s before any age was defined"
        );
        assert!(avg.is_finite(), "average age {avg} s");
        if magnitude >= SATURATION {
            return;
        }
        let per_ns = 1e-9 / (2.0 * defined as f64);
        let want = twice_area * per_ns;
        let tolerance = 1e-9 * magnitude * per_ns;
        assert!(
            (avg - want).abs() <= tolerance,
            "average age {avg} s, expected {want} s ± {tolerance} ({self:?}, now {now:?})"
        );
    }
}

/// What the harness knows and counts.
struct Harness {
    m: Monitor,
    cfg: MonitorConfig,
    peers: [SocketAddr; 12],
    now: Time,
    feedback: Vec<u8>,
    /// Highest sequence the harness has used per session id.
    last_seq: HashMap<u64, u64>,
    history: Vec<Vec<u8>>,
    /// Sessions touched by an update whose ACK did not fit the buffer: the monitor records the
    /// update before encoding the ACK, so their counters need not add up.
    tainted: HashSet<SessionKey>,
    datagrams: u64,
    malformed: BTreeMap<&'static str, u64>,
    not_updates: u64,
    acks: u64,
    delivered: u64,
    refused_by: BTreeMap<&'static str, u64>,
    cookies_sent: u64,
    cookies_rejected: u64,
    auth_failed_by: BTreeMap<&'static str, u64>,
    seq_jumps: u64,
    drained: u64,
    /// The cookies the monitor issued, with the cookie epoch they were issued in.
    issued: HashMap<CookieOwner, Vec<(u64, [u8; COOKIE_LEN])>>,
    /// The last cookie issued to each peer's session.
    last_cookie: HashMap<SessionKey, [u8; COOKIE_LEN]>,
    /// Synchronised clocks: each session's age process (see `AgeTrack`).
    ages: HashMap<SessionKey, AgeTrack>,
    /// Sealed mode: the datagrams the harness sealed correctly, the only ones that may pass
    /// authentication.
    authentic: HashSet<Vec<u8>>,
    /// Sealed mode: each session's replay window, from its latest opening on.
    windows: HashMap<SessionKey, Window>,
    /// Sealed mode: the latest ACK's rx time.
    last_rx: Option<u64>,
}

fn pick<T: Copy>(items: &[T], i: u8) -> T {
    items[usize::from(i) % items.len()]
}

impl Harness {
    fn session_id(&self, s: &SessionSel) -> u64 {
        match *s {
            SessionSel::Common(i) => pick(&SESSION_IDS, i),
            SessionSel::Any(id) => id,
        }
    }

    /// Encodes the UPDATE `spec` describes into `out`; returns its session id.
    fn build_update(&mut self, spec: &UpdateSpec, peer: SocketAddr, out: &mut Vec<u8>) -> u64 {
        let session = self.session_id(&spec.session);
        let last = self.last_seq.get(&session).copied().unwrap_or(0);
        let seq = match spec.seq {
            SeqSel::Next => last.wrapping_add(1),
            SeqSel::Same => last,
            SeqSel::Ahead(d) => last.saturating_add(u64::from(d)),
            SeqSel::Behind(d) => last.saturating_sub(u64::from(d)),
            SeqSel::Small(s) => u64::from(s),
            SeqSel::JumpEdge(d) => last.saturating_add(65_536).saturating_add_signed(d.into()),
            SeqSel::NearMax(d) => u64::MAX - u64::from(d),
            SeqSel::Any(s) => s,
        };
        if seq > last {
            self.last_seq.insert(session, seq);
        }
        let now = self.now.as_nanos();
        let gen_ts = match spec.gen {
            GenSel::Now => now,
            GenSel::Behind(d) => now.saturating_sub(d.into()),
            GenSel::Ahead(d) => now.saturating_add(d.into()),
            GenSel::Any(t) => t,
        };
        let cookie = match spec.cookie {
            CookieSel::None => None,
            CookieSel::Echo => self.last_cookie.get(&SessionKey { peer, session }).copied(),
            CookieSel::Forged(c) => Some(c),
        };
        let zeros;
        let payload: &[u8] = match &spec.payload {
            PayloadSel::Empty => &[],
            PayloadSel::Bytes(b) => &b[..b.len().min(512)],
            PayloadSel::Zeros(n) => {
                zeros = vec![0u8; usize::from(*n) % 2048];
                &zeros
            }
            PayloadSel::Largest => {
                zeros = vec![0u8; MAX_BODY - cookie.map_or(0, |_| COOKIE_LEN)];
                &zeros
            }
        };
        let update = Update {
            flags: if spec.probe { FLAG_PROBE } else { 0 },
            session,
            seq,
            gen_ts,
            acked_seq: match spec.acked_back {
                Some(back) => seq.saturating_sub(back.into()),
                None => spec.acked_any,
            },
            hold_ns: spec.hold_ns,
            cookie,
            payload,
        };
        out.clear();
        out.resize(update.encoded_len(), 0);
        assert_eq!(update.encode(out), Ok(out.len()));
        session
    }

    /// Sealed mode: seals the UPDATE of `session` in `buf` as the input says (it reads a
    /// `SealSel`); remembers it when sealed correctly. Does nothing without keys.
    fn seal(&mut self, u: &mut Unstructured<'_>, session: u64, buf: &mut Vec<u8>) -> Result<()> {
        let Some(ring) = &self.cfg.keys else {
            return Ok(());
        };
        let sel = SealSel::arbitrary(u)?;
        if trace() {
            eprintln!("  sealed: {sel:?}");
        }
        let (key, for_session) = match sel {
            SealSel::Ring(second) => (ring.get(1 + u8::from(second)).unwrap().clone(), session),
            SealSel::None => return Ok(()),
            SealSel::UnknownKey => (psk(3, 0x11), session),
            SealSel::WrongSecret => (psk(1, 0x99), session),
            SealSel::OtherSession => (ring.first().clone(), session ^ 1),
        };
        let len = buf.len();
        buf.resize(len + TAG_LEN, 0);
        let sealed = SessionCipher::new(&key, for_session).seal(buf, len);
        assert_eq!(sealed, Ok(buf.len()));
        if matches!(sel, SealSel::Ring(_)) {
            self.authentic.insert(buf.clone());
        }
        Ok(())
    }

    /// Why authentication refuses `data`, a decoded UPDATE of `key`'s session, if it does.
    fn auth_error(&self, key: &SessionKey, known: bool, data: &[u8]) -> Option<AuthError> {
        let sealed = data[4] & FLAG_AUTH != 0;
        let Some(ring) = &self.cfg.keys else {
            return sealed.then_some(AuthError::Unexpected);
        };
        if !sealed {
            return Some(AuthError::Unsealed);
        }
        let id = data[5];
        // A new session may use any key of the ring, a known one only the key it opened with.
        let usable = if known {
            self.windows[key].key_id == id
        } else {
            ring.get(id).is_some()
        };
        if !usable {
            return Some(AuthError::UnknownKey(id));
        }
        (!self.authentic.contains(data)).then_some(AuthError::BadTag)
    }

    /// Sealed mode: `reply` must be sealed with the key of `session` under pre-shared key
    /// `key_id`. Does nothing without keys.
    fn check_seal(&self, reply: &[u8], key_id: u8, session: u64) {
        let Some(ring) = &self.cfg.keys else {
            return;
        };
        assert_eq!((reply[4] & FLAG_AUTH, reply[5]), (FLAG_AUTH, key_id));
        let psk = ring.get(key_id).expect("a session's key id is in the ring");
        let opened = SessionCipher::new(psk, session).open(reply);
        assert!(opened.is_ok(), "a reply not sealed with its session's key");
    }

    /// Sealed mode: the monitor recorded `seq` in `key`'s session, which it opened if `opened`.
    fn recorded(&mut self, key: &SessionKey, seq: u64, opened: bool) {
        if let Some(w) = self.windows.get_mut(key) {
            w.received.insert(seq);
            if opened {
                w.floor = Some(seq);
            }
        }
    }

    /// Synchronised clocks: follows the age process of `key`'s session after a datagram (a
    /// delivery now makes its generation time the reference); `opened` if the datagram opened
    /// the session. (Not by `first_seen`: at `Time::MAX` a session can expire and reopen at once.)
    fn follow_age(&mut self, key: SessionKey, opened: bool) {
        let Some(s) = self
            .m
            .session(&key)
            .filter(|_| self.cfg.clocks_synchronised)
        else {
            return;
        };
        let track = self.ages.entry(key).or_default();
        if opened {
            *track = AgeTrack::default();
        }
        if s.delivered > track.delivered {
            assert_eq!(s.delivered, track.delivered + 1, "deliveries unseen");
            track.deliver(self.now, s.freshest_gen_ts);
        }
    }

    /// Moves the clock forward to `t` (never back).
    fn advance_to(&mut self, t: Time) {
        self.now = self.now.max(t);
    }

    fn peer(&self, i: u8) -> SocketAddr {
        pick(&self.peers, i)
    }

    fn cookie_epoch(&self, t: Time) -> u64 {
        let epoch = self.cfg.cookie_epoch.max(Duration::from_millis(1));
        t.as_nanos() / u64::try_from(epoch.as_nanos()).unwrap_or(u64::MAX)
    }

    /// Whether `cookie` was issued to `peer`'s `session` in this cookie epoch or the previous.
    fn cookie_valid(&self, peer: SocketAddr, session: u64, cookie: &[u8; COOKIE_LEN]) -> bool {
        let epoch = self.cookie_epoch(self.now);
        self.issued
            .get(&cookie_owner(peer, session))
            .is_some_and(|issued| {
                issued
                    .iter()
                    .any(|(e, c)| c == cookie && (*e == epoch || e + 1 == epoch))
            })
    }

    /// The most sessions one prefix may hold (`max_prefix_share` of the table, at least one).
    fn prefix_cap(&self) -> usize {
        let share = self.cfg.max_prefix_share;
        if share >= 1.0 {
            usize::MAX
        } else {
            ((share.max(0.0) * self.cfg.max_sessions as f64) as usize).max(1)
        }
    }

    /// Whether a table of `count` sessions makes newcomers echo a cookie (with keys, always).
    fn needs_cookie(&self, count: usize) -> bool {
        self.cfg.keys.is_some()
            || count as f64 >= self.cfg.cookie_threshold * self.cfg.max_sessions as f64
    }

    /// Hands `data` to the monitor with an ACK buffer of `ack_room` bytes (the monitor's
    /// `ack_capacity` unless given) and checks the outcome against the harness's prediction.
    fn deliver(&mut self, peer: SocketAddr, data: &[u8], ack_room: Option<usize>) {
        let key = match Packet::decode(data) {
            Ok(Packet::Update(u)) => Some(SessionKey {
                peer,
                session: u.session,
            }),
            _ => None,
        };
        let existed = key.is_some_and(|k| self.m.session(&k).is_some());
        self.exchange(peer, data, ack_room);
        if let Some(key) = key {
            self.follow_age(key, !existed);
        }
    }

    fn exchange(&mut self, peer: SocketAddr, data: &[u8], ack_room: Option<usize>) {
        let room = ack_room.unwrap_or_else(|| self.m.ack_capacity());
        let mut ack_buf = vec![0u8; room];
        let expected = Packet::decode(data);
        let key = match &expected {
            Ok(Packet::Update(u)) => Some(SessionKey {
                peer,
                session: u.session,
            }),
            _ => None,
        };
        let before: Option<SessionStats> = key.and_then(|k| self.m.session(&k).cloned());
        let count_before = self.m.sessions().count();
        let held = self
            .m
            .sessions()
            .filter(|(k, _)| prefix(k.peer) == prefix(peer))
            .count();
        let now = self.now;
        let result = self.m.handle_datagram(now, peer, data, &mut ack_buf);
        self.datagrams += 1;
        let update = match expected {
            Err(e) => {
                assert_eq!(result, Err(Dropped::Malformed(e)));
                *self.malformed.entry(e.reason()).or_default() += 1;
                return;
            }
            Ok(Packet::Update(u)) => u,
            Ok(_) => {
                assert_eq!(result, Err(Dropped::NotAnUpdate));
                self.not_updates += 1;
                return;
            }
        };
        let key = key.unwrap();
        let count_after = self.m.sessions().count();
        // Authentication comes first: nothing unsealed, forged or tampered gets further.
        if let Some(e) = self.auth_error(&key, before.is_some(), data) {
            assert_eq!(result, Err(Dropped::Auth(e)), "update of {key:?}");
            assert_eq!(count_after, count_before);
            if let Some(b) = &before {
                let after = self.m.session(&key).expect("a session lost to a bad seal");
                assert_eq!(
                    (after.received(), after.last_seen),
                    (b.received(), b.last_seen)
                );
            }
            *self.auth_failed_by.entry(e.reason()).or_default() += 1;
            return;
        }
        let sealed = self.cfg.keys.is_some();
        let opened = before.is_none() && self.m.session(&key).is_some();
        if sealed && opened {
            self.windows.insert(
                key,
                Window {
                    key_id: data[5],
                    floor: None,
                    received: HashSet::new(),
                },
            );
        }
        // A sealed session cannot start at sequence 0 (it counts everything before its first
        // sequence as received): refused as a replay before it gets any state.
        let zero_start = sealed && before.is_none() && update.seq == 0;
        if sealed {
            // A replay is refused unanswered.
            let replay = match &before {
                Some(b) => self.windows[&key].seen(b.highest_seq, update.seq),
                None => zero_start,
            };
            assert_eq!(
                result == Err(Dropped::Replayed),
                replay,
                "update {} of {key:?} (highest {:?}): {result:?}",
                update.seq,
                before.as_ref().map(|b| b.highest_seq)
            );
        }
        let echoed_valid = update
            .cookie
            .is_some_and(|c| self.cookie_valid(peer, update.session, &c));
        if before.is_none() && !zero_start {
            // A newcomer: prefix share, then room, then (under pressure) a cookie.
            let by_prefix = held >= self.prefix_cap();
            assert_eq!(
                result == Err(Dropped::PrefixShare),
                by_prefix,
                "{held} sessions in the prefix of {peer}, cap {}: {result:?}",
                self.prefix_cap()
            );
        }
        let handled = match result {
            Ok(h) => h,
            Err(Dropped::PrefixShare) => {
                assert_eq!(count_after, count_before);
                *self.refused_by.entry("prefix_share").or_default() += 1;
                return;
            }
            Err(Dropped::TableFull) => {
                assert!(before.is_none(), "a known session was refused");
                assert!(count_before >= self.cfg.max_sessions);
                assert_eq!(count_after, self.cfg.max_sessions);
                assert!(self.m.session(&key).is_none());
                *self.refused_by.entry("table_full").or_default() += 1;
                return;
            }
            Err(Dropped::SeqJump) => {
                let b = before.expect("a sequence jump in a new session");
                assert!(b.highest_seq > 0);
                assert!(
                    update.seq > b.highest_seq.saturating_add(self.cfg.max_seq_jump),
                    "update {} refused as a jump from {}",
                    update.seq,
                    b.highest_seq
                );
                let after = self.m.session(&key).expect("session lost on a jump");
                assert_eq!(after.highest_seq, b.highest_seq);
                assert_eq!(after.received(), b.received());
                self.seq_jumps += 1;
                return;
            }
            Err(Dropped::Replayed) => {
                match &before {
                    Some(b) => {
                        let after = self.m.session(&key).expect("a replay into no session");
                        assert_eq!(
                            (after.received(), after.highest_seq, after.last_seen),
                            (b.received(), b.highest_seq, b.last_seen)
                        );
                    }
                    None => {
                        assert!(zero_start, "a new session refused as a replay");
                        assert_eq!(count_after, count_before);
                    }
                }
                *self.auth_failed_by.entry("replayed").or_default() += 1;
                return;
            }
            Err(Dropped::AckBuffer(_)) => {
                assert!(ack_room.is_some(), "an ack_capacity() buffer was too small");
                let tag = if sealed { TAG_LEN } else { 0 };
                assert!(room < HEADER_LEN + self.feedback.len() + tag);
                if self.m.session(&key).is_some() {
                    // The update was recorded before its ACK failed to fit.
                    self.tainted.insert(key);
                    self.recorded(&key, update.seq, opened);
                } else {
                    // The COOKIE did not fit; the echoed cookie was still checked and counted.
                    assert!(self.needs_cookie(count_after) && !echoed_valid);
                    self.cookies_rejected += u64::from(update.cookie.is_some());
                }
                return;
            }
            Err(other) => panic!("valid update dropped as {other:?}"),
        };
        assert!(
            handled.ack_len <= data.len(),
            "reply larger than its update"
        );
        if handled.cookie {
            // Address validation: a COOKIE, and no state.
            assert!(before.is_none(), "a known session was asked for a cookie");
            assert!(handled.delivery.is_none());
            assert!(self.m.session(&key).is_none());
            assert!(
                self.needs_cookie(count_after),
                "a cookie below the threshold"
            );
            assert!(!echoed_valid, "a valid cookie was refused");
            let reply = &ack_buf[..handled.ack_len];
            let c = Cookie::decode(reply).expect("the COOKIE decodes");
            let (tag, flags) = if sealed { (TAG_LEN, FLAG_AUTH) } else { (0, 0) };
            assert_eq!(handled.ack_len, HEADER_LEN + tag);
            assert_eq!(
                (c.session, c.seq, c.gen_ts, c.flags),
                (update.session, update.seq, update.gen_ts, flags)
            );
            self.check_seal(reply, data[5], update.session);
            let epoch = self.cookie_epoch(now);
            let issued = self
                .issued
                .entry(cookie_owner(peer, update.session))
                .or_default();
            if !issued.contains(&(epoch, c.cookie)) {
                issued.push((epoch, c.cookie));
            }
            self.last_cookie.insert(key, c.cookie);
            self.cookies_sent += 1;
            self.cookies_rejected += u64::from(update.cookie.is_some());
            return;
        }
        if before.is_none() {
            assert!(
                !self.needs_cookie(count_after - 1) || echoed_valid,
                "a newcomer got state under pressure without a valid cookie"
            );
        }
        self.acks += 1;
        self.recorded(&key, update.seq, opened);
        if let Some(b) = before.as_ref().filter(|b| b.highest_seq > 0) {
            // Not a jump: within `max_seq_jump` plus `max_update_rate` per second of silence.
            let silence = Duration::from_nanos(now.nanos_since(b.last_seen));
            let grace = (self.cfg.max_update_rate * silence.as_secs_f64()).min(u64::MAX as f64);
            let limit = b
                .highest_seq
                .saturating_add(self.cfg.max_seq_jump)
                .saturating_add(grace as u64);
            assert!(
                update.seq <= limit,
                "update {} beyond {limit} accepted",
                update.seq
            );
        }

        // The ACK echoes the update.
        let fb: &[u8] = if self.feedback.len() <= update.payload.len() {
            &self.feedback
        } else {
            &[]
        };
        let tag = if sealed { TAG_LEN } else { 0 };
        assert_eq!(handled.ack_len, HEADER_LEN + fb.len() + tag);
        let reply = &ack_buf[..handled.ack_len];
        let ack = Ack::decode(reply).expect("the monitor's ACK decodes");
        assert_eq!(
            (ack.session, ack.seq, ack.gen_ts, ack.hold_ns),
            (update.session, update.seq, update.gen_ts, update.hold_ns)
        );
        assert_eq!(ack.feedback, fb);
        if sealed {
            // Each sealed ACK gets its own rx time (part of the nonce), never before `now`;
            // only at the end of time (`u64::MAX`, which no real clock reaches) may it repeat.
            assert!(
                ack.rx_ts >= now.as_nanos(),
                "rx time {} before now",
                ack.rx_ts
            );
            assert!(
                self.last_rx
                    .is_none_or(|last| ack.rx_ts > last || ack.rx_ts == u64::MAX),
                "rx time {} repeats or goes back",
                ack.rx_ts
            );
            self.last_rx = Some(ack.rx_ts);
            self.check_seal(reply, self.windows[&key].key_id, update.session);
        } else {
            assert_eq!(ack.rx_ts, now.as_nanos());
        }

        // Freshness: delivered exactly when the sequence beats the session's highest.
        let highest_before = before.as_ref().map_or(0, |b| b.highest_seq);
        let fresh = update.seq > highest_before;
        assert_eq!(handled.delivery.is_some(), fresh);
        assert_eq!(ack.is_stale(), !fresh);
        if let Some(d) = handled.delivery {
            assert_eq!(d.key, key);
            assert_eq!(
                (d.seq, d.gen_ts, d.probe),
                (update.seq, update.gen_ts, update.is_probe())
            );
            assert_eq!(d.payload, update.payload);
            self.delivered += 1;
        }

        let after = self.m.session(&key).expect("an ACKed update has a session");
        assert_eq!(after.last_seen, now);
        assert_eq!(after.highest_seq, highest_before.max(update.seq));
        match &before {
            None => assert_eq!(after.first_seen, now),
            Some(b) => assert_eq!(after.first_seen, b.first_seen),
        }
        let (d0, r0, p0, bytes0) = before.as_ref().map_or((0, 0, 0, 0), |b| {
            (b.delivered, b.received(), b.probes, b.bytes)
        });
        assert_eq!(after.received(), r0 + 1);
        assert_eq!(after.probes, p0 + u64::from(update.is_probe()));
        if fresh {
            assert_eq!(after.delivered, d0 + 1);
            assert_eq!(after.bytes, bytes0 + update.payload.len() as u64);
            assert_eq!(after.freshest_gen_ts, update.gen_ts);
            assert_eq!(
                after.source_backlog,
                update.seq.saturating_sub(update.acked_seq)
            );
        } else {
            assert_eq!(after.delivered, d0);
        }
    }

    fn timeout(&mut self) {
        let now = self.now;
        let due = self.m.poll_timeout().is_some_and(|t| now >= t);
        let (count, expired) = (self.m.sessions().count(), self.m.stats().sessions_expired);
        self.m.handle_timeout(now);
        let swept = self.m.stats().sessions_expired - expired;
        assert_eq!(self.m.sessions().count() as u64 + swept, count as u64);
        if due {
            // A sweep ran: whatever is left has not expired.
            // Probation is for unsealed sessions only.
            let sealed = self.cfg.keys.is_some();
            for (k, s) in self.m.sessions() {
                let limit = if s.received() <= 1 && !sealed {
                    self.cfg.probation
                } else {
                    self.cfg.idle_timeout
                };
                assert!(
                    now < s.last_seen + limit || self.tainted.contains(k),
                    "an expired session survived a sweep"
                );
            }
        } else {
            assert_eq!(swept, 0, "sessions swept before the timeout was due");
        }
        if let Some(t) = self.m.poll_timeout() {
            assert!(
                t > now,
                "poll_timeout {t:?} is not after handle_timeout({now:?})"
            );
        }
    }

    fn drain(&mut self) {
        let mut n = 0;
        while let Some(event) = self.m.poll_event() {
            n += 1;
            match event {
                MonitorEvent::SessionExpired { key, stats } => {
                    assert!(
                        stats.received() > 1 || self.tainted.contains(&key),
                        "a probationary session reported as expired"
                    );
                    assert!(stats.last_seen <= self.now);
                }
            }
        }
        assert!(n <= self.cfg.max_sessions, "{n} events queued");
        self.drained += n as u64;
    }

    /// Checks the monitor-wide invariants, and each session's too when `sessions` is set.
    fn check(&self, sessions: bool) {
        let m = &self.m;
        let st = m.stats();
        let count = m.sessions().count();
        assert!(count <= self.cfg.max_sessions);
        assert_eq!(st.sessions_created - st.sessions_expired, count as u64);
        assert_eq!(st.datagrams, self.datagrams);
        assert_eq!(st.malformed, st.malformed_by.values().sum::<u64>());
        assert_eq!(st.malformed_by, self.malformed);
        assert_eq!(st.not_updates, self.not_updates);
        assert_eq!(st.acks, self.acks);
        assert_eq!(st.delivered, self.delivered);
        assert_eq!(st.sessions_refused, st.refused_by.values().sum::<u64>());
        assert_eq!(st.refused_by, self.refused_by);
        assert_eq!(st.cookies_sent, self.cookies_sent);
        assert_eq!(st.cookies_rejected, self.cookies_rejected);
        assert_eq!(st.auth_failed_by, self.auth_failed_by);
        assert_eq!(st.seq_jumps, self.seq_jumps);
        assert!(st.delivered <= st.acks && st.acks <= st.datagrams);
        assert!(self.drained <= st.sessions_expired);
        assert_eq!(m.poll_timeout().is_some(), count > 0);
        if !sessions {
            return;
        }
        let mut delivered = 0;
        for (key, s) in m.sessions() {
            assert!(s.first_seen <= s.last_seen && s.last_seen <= self.now);
            // A sealed session opened by a refused update of sequence 0 may have received nothing.
            let opened_empty = self.windows.get(key).is_some_and(|w| w.floor.is_none());
            assert!(s.received() >= 1 || self.tainted.contains(key) || opened_empty);
            assert!(s.probes <= s.received() || self.tainted.contains(key));
            delivered += s.delivered;
            let rate = s.delivery_rate();
            assert!(rate.is_finite() && rate >= 0.0);
            if !self.cfg.clocks_synchronised {
                assert_eq!(s.age(self.now), None);
                continue;
            }
            if s.delivered > 0 {
                let age = s.age(self.now).expect("age after a delivery");
                let exact = i128::from(self.now.as_nanos()) - i128::from(s.freshest_gen_ts);
                // Exact within ±2⁶³ ns (292 years), saturated beyond: never wrapped around to a
                // plausible age (fuzz/regressions/monitor-age-wrap).
                let want = exact.clamp(i64::MIN.into(), i64::MAX.into()) as f64 * 1e-9;
                assert!(
                    (age - want).abs() <= 1e-9 * want.abs().max(1.0),
                    "age {age} s, expected {want} s (gen_ts {}, now {:?})",
                    s.freshest_gen_ts,
                    self.now
                );
            }
            let track = self
                .ages
                .get(key)
                .expect("a session whose age nobody followed");
            assert_eq!(track.delivered, s.delivered);
            track.check(self.now, s.avg_age(self.now));
        }
        assert!(delivered <= st.delivered);
    }
}

fn run(u: &mut Unstructured<'_>) -> Result<()> {
    let setup = Setup::arbitrary(u)?;
    if trace() {
        eprintln!("{setup:?}");
    }
    let cfg = MonitorConfig {
        max_sessions: 1 + usize::from(setup.max_sessions % 64),
        probation: Duration::from_millis(1 + u64::from(setup.probation_ms % 2_000)),
        idle_timeout: Duration::from_millis(1 + u64::from(setup.idle_ms % 60_000)),
        clocks_synchronised: setup.synchronised,
        // Fixed, so that an input replays exactly (the default is random).
        cookie_secret: Secret([0x5a; KEY_LEN]),
        keys: (setup.max_sessions & 0x80 != 0).then(keyring),
        ..MonitorConfig::default()
    };
    let start = match setup.start {
        Start::Zero => Time::ZERO,
        Start::Millis(ms) => Time::from_millis(ms.into()),
        Start::Any(ns) => Time::from_nanos(ns),
    };
    let mut m = Monitor::new(cfg.clone(), start);
    let values: Vec<Vec<u8>> = setup
        .feedback
        .iter()
        .take(3)
        .map(|&(kind, len)| vec![kind; usize::from(len % 16)])
        .collect();
    let items: Vec<FeedbackItem<'_>> = setup
        .feedback
        .iter()
        .zip(&values)
        .map(|(&(kind, _), value)| FeedbackItem { kind, value })
        .collect();
    m.set_feedback(&items).expect("short feedback encodes");
    let mut feedback = Vec::new();
    encode_feedback(&items, &mut feedback).unwrap();
    // Room for the ACK with its feedback and a seal's tag.
    assert!(m.ack_capacity() >= HEADER_LEN + feedback.len() + TAG_LEN);

    let mut h = Harness {
        m,
        cfg,
        peers: peers(),
        now: start,
        feedback,
        last_seq: HashMap::new(),
        history: Vec::new(),
        tainted: HashSet::new(),
        datagrams: 0,
        malformed: BTreeMap::new(),
        not_updates: 0,
        acks: 0,
        delivered: 0,
        refused_by: BTreeMap::new(),
        cookies_sent: 0,
        cookies_rejected: 0,
        auth_failed_by: BTreeMap::new(),
        seq_jumps: 0,
        drained: 0,
        issued: HashMap::new(),
        last_cookie: HashMap::new(),
        ages: HashMap::new(),
        authentic: HashSet::new(),
        windows: HashMap::new(),
        last_rx: None,
    };
    let mut buf = Vec::new();
    for i in 0..MAX_OPS {
        if u.is_empty() {
            break;
        }
        let op = Op::arbitrary(u)?;
        // Sessions change only through datagrams and sweeps: scanning them all every eighth
        // operation and after every timeout keeps the target fast.
        let scan = i % 8 == 7 || matches!(op, Op::Timeout | Op::WakeUp | Op::Drain);
        if trace() {
            eprintln!("{:?} {op:?}", h.now);
        }
        let mut sent: Option<(SocketAddr, Vec<u8>)> = None;
        match op {
            Op::Advance(step) => h.advance_to(h.now + step.duration()),
            Op::Timeout => h.timeout(),
            Op::WakeUp => {
                if let Some(t) = h.m.poll_timeout() {
                    h.advance_to(t);
                }
                h.timeout();
            }
            Op::Drain => h.drain(),
            Op::Update { peer, spec } => {
                let peer = h.peer(peer);
                let session = h.build_update(&spec, peer, &mut buf);
                h.seal(u, session, &mut buf)?;
                h.deliver(peer, &buf, None);
                sent = Some((peer, buf.clone()));
            }
            Op::Mutated {
                peer,
                spec,
                mutations,
            } => {
                let peer = h.peer(peer);
                let session = h.build_update(&spec, peer, &mut buf);
                h.seal(u, session, &mut buf)?;
                for mutation in mutations.iter().take(4) {
                    mutate(&mut buf, mutation);
                }
                h.deliver(peer, &buf, None);
                sent = Some((peer, buf.clone()));
            }
            Op::Replay { peer, back } => {
                if !h.history.is_empty() {
                    let i = h.history.len() - 1 - usize::from(back) % h.history.len();
                    let data = h.history[i].clone();
                    let peer = h.peer(peer);
                    h.deliver(peer, &data, None);
                }
            }
            Op::Reply {
                peer,
                session,
                seq,
                stale,
                cookie,
            } => {
                let (session, now) = (h.session_id(&session), h.now.as_nanos());
                buf.clear();
                buf.resize(HEADER_LEN, 0);
                let len = if cookie {
                    Cookie {
                        flags: 0,
                        session,
                        seq,
                        gen_ts: now,
                        cookie: [0xc0; COOKIE_LEN],
                    }
                    .encode(&mut buf)
                } else {
                    Ack {
                        flags: u8::from(stale),
                        session,
                        seq,
                        gen_ts: now,
                        rx_ts: now,
                        hold_ns: 0,
                        feedback: &[],
                    }
                    .encode(&mut buf)
                };
                assert_eq!(len, Ok(HEADER_LEN));
                let peer = h.peer(peer);
                h.deliver(peer, &buf, None);
            }
            Op::Raw { peer, bytes } => {
                let peer = h.peer(peer);
                h.deliver(peer, &bytes, None);
                sent = Some((peer, bytes));
            }
            Op::ShortAckBuffer { peer, spec, len } => {
                let peer = h.peer(peer);
                let session = h.build_update(&spec, peer, &mut buf);
                h.seal(u, session, &mut buf)?;
                h.deliver(peer, &buf, Some(usize::from(len)));
            }
        }
        if let Some((_, data)) = sent {
            if h.history.len() == HISTORY {
                h.history.remove(0);
            }
            h.history.push(data);
        }
        h.check(scan);
    }
    h.drain();
    h.check(true);
    Ok(())
}

fn mutate(buf: &mut Vec<u8>, mutation: &Mutation) {
    match mutation {
        Mutation::Flip { at, bit } => {
            if !buf.is_empty() {
                let i = usize::from(*at) % buf.len();
                buf[i] ^= 1 << (bit % 8);
            }
        }
        Mutation::Set { at, value } => {
            if !buf.is_empty() {
                let i = usize::from(*at) % buf.len();
                buf[i] = *value;
            }
        }
        Mutation::Truncate(len) => buf.truncate(usize::from(*len) % (buf.len() + 1)),
        Mutation::Extend(bytes) => buf.extend_from_slice(&bytes[..bytes.len().min(64)]),
        Mutation::FixLength => {
            if buf.len() >= HEADER_LEN {
                let body = (buf.len() - HEADER_LEN).min(usize::from(u16::MAX)) as u16;
                buf[6..8].copy_from_slice(&body.to_be_bytes());
            }
        }
        Mutation::Seal { key_id, tag } => {
            if buf.len() >= HEADER_LEN {
                buf[4] |= FLAG_AUTH;
                buf[5] = *key_id;
                buf.extend_from_slice(tag);
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let _ = run(&mut u);
});
