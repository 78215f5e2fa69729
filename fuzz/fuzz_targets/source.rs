//! Fuzz target: the source state machine (`acp_core::Source`) under an arbitrary interleaving of
//! time steps, transmit polls, timeouts, pushes and incoming datagrams.
//!
//! The input is read as a configuration (generate-at-will or push mode; ACP+, ACP, Lazy or
//! Fixed; 1–10 probes; fuzzed probe timeout, EWMA weight, rate bounds, floor rate and outage
//! threshold, `..SourceConfig::default()` for the rest) followed by up to `MAX_OPS` operations.
//! The harness keeps a simulated path: every update the source transmits may be answered, after
//! a fuzzed delay and jitter and with fuzzed losses and duplicates, by an ACK that echoes it
//! exactly as a monitor would (flagged STALE when the path reordered it), or, when the path's
//! monitor is under pressure, by a COOKIE until the source echoes it. The `Run` operation is
//! an event loop (sleep until `poll_timeout` or the next ACK, deliver, transmit) that takes the
//! source through probing, control epochs and outages in a few bytes of input. Other operations
//! inject ACKs of any transmitted update with fuzzed perturbations (sequence, timestamps,
//! session, feedback), COOKIEs, forged ACKs, mutated or fake-sealed ACKs, reflected UPDATEs,
//! replays and raw bytes, and change the payload size (beyond the wire's limit too).
//!
//! Checked, besides "never panics":
//! - every transmitted datagram fits the wire's maximum size, is exactly the `Transmit`'s length,
//!   and decodes as an UPDATE of this session with the next sequence, the acknowledged sequence
//!   the harness expects, the right probe flag, generation time and hold time, and the payload
//!   the application gave, and the monitor's cookie from the first update after a COOKIE until
//!   one of those is acknowledged (or counts as oversized when it exceeds the wire's limit);
//! - every incoming datagram has the outcome the harness predicts from what was transmitted:
//!   an exact echo of an unacknowledged update is in sequence, of an acknowledged one out of
//!   sequence; a COOKIE echoing a sent generation time is a cookie; a wrong session, an unsent
//!   sequence, a future timestamp, a seal (no key is configured) or an UPDATE is invalid; a wrong
//!   echo of a remembered sequence is invalid and counted as mismatched;
//! - the counters in `stats()` equal the harness's counts (sent, bytes, probes, ACK outcomes,
//!   STALE ACKs, cookies, authentication failures, dropped-stale pushes, oversized slots),
//!   backlog is `sent − acked`;
//! - the rate is 0 while probing and otherwise finite and within `[min_rate, max_rate]`; RTT̄,
//!   Z̄, ages and averages are finite and non-negative; the phase never returns to probing;
//! - after `handle_timeout(now)`, `poll_timeout()` is after `now` unless a transmission is due,
//!   and one `poll_transmit(now)` then makes (or skips) it and leaves the next deadline after
//!   `now`: no spurious wake-up, let alone a busy loop (fuzz/regressions/source-late-outage).
//!
//! Time is not limited: an input may start anywhere in the `u64` nanosecond range and run to
//! `Time::MAX`. The source's ages are `now −` the generation time of an acknowledged update,
//! never negative, so when the age area saturates over spans of centuries (it does beyond about
//! 2⁶² ns) the averages stay finite and non-negative, which is all this target checks of them.
#![no_main]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use acp_core::source::{AckOutcome, Phase, Transmit};
use acp_core::wire::{
    encode_feedback, Ack, Cookie, FeedbackItem, Packet, Update, COOKIE_LEN, FLAG_AUTH, HEADER_LEN,
    MAX_BODY, TAG_LEN,
};
use acp_core::{Acp, AppMode, Controller, Fixed, Lazy, Source, SourceConfig, Time};
use arbitrary::{Arbitrary, Result, Unstructured};
use libfuzzer_sys::fuzz_target;

/// Most operations one input may perform; each iteration of `Run` and each ACK the path
/// delivers counts as one.
const MAX_OPS: usize = 2_000;
/// ACK datagrams remembered for replays.
const HISTORY: usize = 16;
/// Sequences behind the newest one that the source's sent log always remembers.
const ALWAYS_REMEMBERED: u64 = 64;

/// Set `ACP_FUZZ_TRACE=1` to print each operation (when replaying an input).
fn trace() -> bool {
    static TRACE: OnceLock<bool> = OnceLock::new();
    *TRACE.get_or_init(|| std::env::var_os("ACP_FUZZ_TRACE").is_some())
}

#[derive(Arbitrary, Debug)]
enum ControllerSel {
    AcpPlus,
    Acp(u8),
    Lazy,
    Fixed(u32),
}

#[derive(Arbitrary, Debug)]
struct Setup {
    push: bool,
    controller: ControllerSel,
    /// `probes = 1 + this % 10`.
    probes: u8,
    /// `probe_timeout = 1 + this % 2000` ms.
    probe_timeout_ms: u16,
    /// `alpha = (1 + this % 100) / 100`.
    alpha: u8,
    /// `min_rate = (1 + this % 1000) / 10` updates/s.
    min_rate: u16,
    /// `max_rate = min(min_rate + this / 100, 10⁶)` updates/s.
    max_rate: u32,
    /// `floor_rate = (1 + this % 1000) / 10` updates/s.
    floor_rate: u16,
    /// `outage_after = this % 2000` ms.
    outage_ms: u16,
    session: u64,
    start: Start,
    path: Path,
    payload: Len,
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

/// The simulated path the automatic ACKs take.
#[derive(Arbitrary, Debug, Clone, Copy)]
struct Path {
    /// One-way delay there and back, `this % 500_000` µs in all.
    rtt_us: u32,
    /// Up to `this` µs more, drawn per update.
    jitter_us: u16,
    /// Probability ×256 that an update or its ACK is lost.
    loss: u8,
    /// Probability ×256 that an ACK arrives twice.
    duplicate: u8,
    /// Seed of the path's random draws.
    seed: u64,
    /// Odd: the monitor at the end of the path is under pressure and answers a new session's
    /// updates with a COOKIE until one echoes it.
    cookies: u8,
}

/// A payload size.
#[derive(Arbitrary, Debug, Clone, Copy)]
enum Len {
    Small(u8),
    Medium(u16),
    /// Exactly the wire's maximum body.
    Largest,
    /// Just beyond it: the source must skip the slot.
    TooLarge(u8),
}

impl Len {
    fn bytes(self) -> usize {
        match self {
            Len::Small(n) => n.into(),
            Len::Medium(n) => usize::from(n) % 4096,
            Len::Largest => MAX_BODY,
            Len::TooLarge(n) => MAX_BODY + 1 + usize::from(n),
        }
    }
}

#[derive(Arbitrary, Debug)]
enum Perturb {
    Exact,
    Seq(i8),
    GenTs(i16),
    Hold(i16),
    Session(u64),
    /// Generation time moved into the future.
    Future(u32),
    /// `gen_ts + hold_ns` overflows.
    Overflow,
}

#[derive(Arbitrary, Debug)]
enum SessionSel {
    Own,
    Other(u64),
}

#[derive(Arbitrary, Debug)]
enum SeqSel {
    Sent(u16),
    Ahead(u8),
    Zero,
    Any(u64),
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
    /// Frames the datagram as sealed: flag AUTH, a key id, and a tag after the body.
    Seal {
        key_id: u8,
        tag: [u8; TAG_LEN],
    },
}

#[derive(Arbitrary, Debug)]
enum Op {
    /// Moves time forward, delivering the ACKs due on the way (without transmitting).
    Advance(Step),
    /// `poll_transmit(now)`.
    Transmit,
    /// `handle_timeout(now)`, then the busy-loop check.
    Timeout,
    /// An event loop of up to `this` iterations.
    Run(u8),
    Push(Len, u8),
    SetPayload(Len),
    SetPath(Path),
    /// An ACK of the update sent `back` updates before the newest one, perturbed.
    AckOf {
        back: u16,
        perturb: Perturb,
        stale: bool,
        feedback: Vec<(u8, u8)>,
    },
    Forged {
        session: SessionSel,
        seq: SeqSel,
        gen_ts: u64,
        hold_ns: u32,
        stale: bool,
    },
    MutatedAck {
        back: u16,
        mutations: Vec<Mutation>,
    },
    /// A COOKIE answering the update sent `back` updates before the newest one.
    CookieOf {
        back: u16,
        /// Moves the echoed generation time.
        gen_delta: Option<i16>,
        cookie: [u8; COOKIE_LEN],
    },
    /// An ACK of this session carried by an UPDATE (a reflected datagram).
    Reflected {
        back: u16,
    },
    Replay(u8),
    Raw(Vec<u8>),
    RestartAverages,
}

/// "No size" in [`Sizes`].
const NONE: usize = usize::MAX;
/// Payloads above this size are generated once, not at every send (they are slow to copy).
const ONCE_ABOVE: usize = 4096;

/// The generate-at-will payload sizes.
struct Sizes {
    /// The usual size.
    normal: AtomicUsize,
    /// A large size for the next payload only, or `NONE`.
    once: AtomicUsize,
    /// The size of the last payload generated, or `NONE`.
    last: AtomicUsize,
}

impl Sizes {
    fn set(&self, n: usize) {
        if n > ONCE_ABOVE {
            self.once.store(n, Ordering::Relaxed);
        } else {
            self.normal.store(n, Ordering::Relaxed);
        }
    }

    /// The size the generator will use next.
    fn peek(&self) -> usize {
        match self.once.load(Ordering::Relaxed) {
            NONE => self.normal.load(Ordering::Relaxed),
            n => n,
        }
    }

    /// Called by the generator.
    fn next(&self) -> usize {
        let n = match self.once.swap(NONE, Ordering::Relaxed) {
            NONE => self.normal.load(Ordering::Relaxed),
            n => n,
        };
        self.last.store(n, Ordering::Relaxed);
        n
    }
}

/// What the source transmitted for one sequence.
#[derive(Debug, Clone, Copy)]
struct Sent {
    gen_ts: u64,
    hold_ns: u32,
}

struct Harness {
    src: Source,
    cfg: SourceConfig,
    push: bool,
    session: u64,
    start: Time,
    now: Time,
    ops: usize,
    /// Generate-at-will payload sizes, shared with the generator.
    sizes: Arc<Sizes>,
    /// Push mode: the update waiting to be sent (generation time, payload).
    pending: Option<(Time, Vec<u8>)>,
    path: Path,
    rng: u64,
    /// ACKs on their way: (arrival, datagram), sorted by arrival.
    inflight: Vec<(Time, Vec<u8>)>,
    /// Highest sequence the simulated monitor has seen.
    monitor_highest: u64,
    /// Whether the simulated monitor has given the session state (ACKed it).
    monitor_knows: bool,
    /// The cookie the source must echo, and the first sequence that must carry it.
    cookie: Option<([u8; COOKIE_LEN], u64)>,
    sent: Vec<Sent>,
    acked: u64,
    left_probing: bool,
    history: Vec<Vec<u8>>,
    buf: Vec<u8>,
    // The harness's counts, compared with `stats()`.
    bytes_sent: u64,
    probes_sent: u64,
    in_sequence: u64,
    out_of_sequence: u64,
    stale: u64,
    invalid: u64,
    mismatched: u64,
    dropped_stale: u64,
    oversized: u64,
    auth_failed: u64,
    cookies: u64,
    epochs: u64,
    outages: u64,
}

impl Harness {
    fn random(&mut self) -> u64 {
        // xorshift64*
        let mut x = self.rng;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn chance(&mut self, p: u8) -> bool {
        (self.random() >> 56) < u64::from(p)
    }

    /// Moves the clock to `t` (never back).
    fn advance_to(&mut self, t: Time) {
        self.now = self.now.max(t);
    }

    /// Delivers the path's ACKs due by `t`, each at its arrival time, then moves to `t`.
    fn advance_delivering(&mut self, t: Time) {
        while self.ops < MAX_OPS {
            match self.inflight.first() {
                Some((arrival, _)) if *arrival <= t => {
                    let (arrival, data) = self.inflight.remove(0);
                    self.advance_to(arrival);
                    self.ops += 1;
                    self.receive(&data);
                }
                _ => break,
            }
        }
        self.advance_to(t);
    }

    /// `poll_transmit(now)`, checked; returns whether an update left.
    fn transmit(&mut self) -> bool {
        let now = self.now;
        let phase_before = self.src.phase();
        let oversized = self.src.stats(now).oversized;
        let size = self.sizes.peek();
        self.sizes.last.store(NONE, Ordering::Relaxed);
        let mut buf = std::mem::take(&mut self.buf);
        let t = self.src.poll_transmit(now, &mut buf);
        if !self.push {
            // The generator runs exactly for the slots that send or are skipped as oversized.
            let last = self.sizes.last.load(Ordering::Relaxed);
            let used = t.is_some() || self.src.stats(now).oversized > oversized;
            assert_eq!(last, if used { size } else { NONE });
        }
        let sent = match t {
            Some(t) => {
                self.check_transmit(&t, &buf);
                true
            }
            None if self.src.stats(now).oversized > oversized => {
                // The application's payload exceeds the wire's limit: the slot is skipped.
                let len = match self.pending.take() {
                    Some((_, payload)) if self.push => payload.len(),
                    _ => self.sizes.last.load(Ordering::Relaxed),
                };
                let body = len + self.cookie.map_or(0, |_| COOKIE_LEN);
                assert!(
                    body > MAX_BODY,
                    "a body of {body} bytes counted as oversized"
                );
                self.oversized += 1;
                false
            }
            None => false,
        };
        self.buf = buf;
        if phase_before != Phase::Probing || self.src.phase() != Phase::Probing {
            self.left_probing = true;
        }
        sent
    }

    fn check_transmit(&mut self, t: &Transmit, buf: &[u8]) {
        let now = self.now;
        assert_eq!(buf.len(), t.len);
        assert!(
            t.len <= HEADER_LEN + MAX_BODY,
            "datagram of {} bytes",
            t.len
        );
        let u = Update::decode(buf).expect("the source's update decodes");
        assert_eq!(u.session, self.session);
        assert_eq!(u.seq, t.seq);
        assert_eq!(
            t.seq,
            self.sent.len() as u64 + 1,
            "sequences skip or repeat"
        );
        assert_eq!(u.is_probe(), t.probe);
        assert_eq!(t.probe, self.src.phase() == Phase::Probing);
        assert_eq!(u.acked_seq, self.acked);
        assert_eq!(u.cookie, self.cookie.map(|(c, _)| c), "cookie echo");
        assert!(self.cookie.is_none_or(|(_, from)| u.seq >= from));
        assert!(u.gen_ts <= now.as_nanos());
        let hold = u32::try_from(now.as_nanos() - u.gen_ts).unwrap_or(u32::MAX);
        assert_eq!(u.hold_ns, hold);
        if self.push {
            let (gen, payload) = self.pending.take().expect("sent without a pushed update");
            assert_eq!(u.gen_ts, gen.as_nanos());
            assert_eq!(u.payload, &payload[..]);
        } else {
            assert_eq!(u.gen_ts, now.as_nanos());
            assert_eq!(u.payload.len(), self.sizes.last.load(Ordering::Relaxed));
        }
        self.sent.push(Sent {
            gen_ts: u.gen_ts,
            hold_ns: u.hold_ns,
        });
        self.bytes_sent += t.len as u64;
        self.probes_sent += u64::from(t.probe);

        // The path: maybe lost, otherwise ACKed after a delay, maybe twice.
        let path = self.path;
        if self.chance(path.loss) {
            return;
        }
        let jitter = if path.jitter_us == 0 {
            0
        } else {
            self.random() % u64::from(path.jitter_us)
        };
        let rtt = Duration::from_micros(u64::from(path.rtt_us % 500_000) + jitter);
        let mut data = vec![0u8; HEADER_LEN];
        let path_cookie = path.seed.to_be_bytes().repeat(2)[..COOKIE_LEN]
            .try_into()
            .unwrap();
        if path.cookies % 2 == 1 && !self.monitor_knows && u.cookie != Some(path_cookie) {
            let reply = Cookie {
                flags: 0,
                session: u.session,
                seq: u.seq,
                gen_ts: u.gen_ts,
                cookie: path_cookie,
            };
            reply.encode(&mut data).unwrap();
        } else {
            self.monitor_knows = true;
            let stale = u.seq < self.monitor_highest;
            self.monitor_highest = self.monitor_highest.max(u.seq);
            let ack = Ack {
                flags: u8::from(stale),
                session: u.session,
                seq: u.seq,
                gen_ts: u.gen_ts,
                rx_ts: (now + rtt / 2).as_nanos(),
                hold_ns: u.hold_ns,
                feedback: &[],
            };
            ack.encode(&mut data).unwrap();
        }
        let copies = if self.chance(path.duplicate) { 2 } else { 1 };
        for _ in 0..copies {
            let arrival = now + rtt;
            let at = self.inflight.partition_point(|(a, _)| *a <= arrival);
            self.inflight.insert(at, (arrival, data.clone()));
        }
    }

    /// `handle_datagram(now, data)`, checked against what the harness predicts.
    fn receive(&mut self, data: &[u8]) {
        let now = self.now;
        let outcome = self.src.handle_datagram(now, data);
        if self.history.len() == HISTORY {
            self.history.remove(0);
        }
        self.history.push(data.to_vec());
        let sent_seq = self.sent.len() as u64;
        let session = self.session;
        let ours = |s: u64, seq: u64| s == session && seq >= 1 && seq <= sent_seq;
        let invalid = |h: &mut Harness, why: &str| {
            assert_eq!(outcome, AckOutcome::Invalid, "{why} accepted");
            h.invalid += 1;
        };
        let packet = match Packet::decode(data) {
            Ok(p) => p,
            Err(_) => return invalid(self, "a malformed datagram"),
        };
        if packet.is_sealed() {
            // No key is configured: a seal is an authentication failure.
            self.auth_failed += 1;
            return invalid(self, "a sealed datagram");
        }
        let ack = match packet {
            Packet::Ack(a) if ours(a.session, a.seq) => a,
            Packet::Cookie(c) if ours(c.session, c.seq) => {
                return self.cookie_received(outcome, &c)
            }
            _ => return invalid(self, "a datagram of another session or sequence"),
        };
        let sent_at = ack.gen_ts.checked_add(ack.hold_ns.into());
        if sent_at.is_none_or(|t| t > now.as_nanos()) {
            return invalid(self, "an ACK from the future");
        }
        let s = self.sent[(ack.seq - 1) as usize];
        let echoes = s.gen_ts == ack.gen_ts && s.hold_ns == ack.hold_ns;
        let remembered = self.remembered(ack.seq);
        let expected = if ack.seq > self.acked {
            if echoes {
                AckOutcome::InSequence
            } else {
                AckOutcome::Invalid
            }
        } else if echoes || !remembered && outcome == AckOutcome::OutOfSequence {
            AckOutcome::OutOfSequence
        } else {
            AckOutcome::Invalid
        };
        assert_eq!(
            outcome, expected,
            "{ack:?} (sent {s:?}, acked {}, newest {sent_seq})",
            self.acked
        );
        match outcome {
            AckOutcome::InSequence => {
                self.in_sequence += 1;
                self.acked = ack.seq;
                if self.cookie.is_some_and(|(_, from)| ack.seq >= from) {
                    self.cookie = None;
                }
            }
            AckOutcome::OutOfSequence => self.out_of_sequence += 1,
            AckOutcome::Invalid => {
                self.invalid += 1;
                self.mismatched += 1;
            }
            AckOutcome::Cookie => panic!("an ACK taken for a COOKIE"),
        }
        if outcome != AckOutcome::Invalid && ack.is_stale() {
            self.stale += 1;
        }
    }

    /// Unacknowledged sequences and the newest ones are always remembered by the sent log.
    fn remembered(&self, seq: u64) -> bool {
        seq > self.acked || self.sent.len() as u64 - seq < ALWAYS_REMEMBERED
    }

    /// A COOKIE of this session for a sequence it sent: believed when it echoes that update's
    /// generation time, then echoed from the next update on.
    fn cookie_received(&mut self, outcome: AckOutcome, c: &Cookie) {
        let echoes = self.sent[(c.seq - 1) as usize].gen_ts == c.gen_ts;
        let expected = if echoes && (self.remembered(c.seq) || outcome == AckOutcome::Cookie) {
            AckOutcome::Cookie
        } else {
            AckOutcome::Invalid
        };
        assert_eq!(outcome, expected, "{c:?}");
        if outcome == AckOutcome::Cookie {
            self.cookies += 1;
            self.cookie = Some((c.cookie, self.sent.len() as u64 + 1));
        } else {
            self.invalid += 1;
            self.mismatched += 1;
        }
    }

    /// `handle_timeout(now)`, then: a deadline at or before `now` must be a transmission that
    /// one `poll_transmit(now)` makes (or skips, for an oversized payload), after which the
    /// next deadline is in the future.
    fn timeout(&mut self) {
        let now = self.now;
        self.src.handle_timeout(now);
        self.note_phase();
        let Some(t) = self.src.poll_timeout() else {
            return;
        };
        if t > now {
            return;
        }
        if now == Time::MAX {
            // The end of time (584 years after the origin): every deadline saturates to it, so
            // none can lie in the future. No real clock gets here.
            self.transmit();
            return;
        }
        let oversized = self.src.stats(now).oversized;
        let sent = self.transmit();
        let acted = sent || self.src.stats(now).oversized > oversized;
        let after = self.src.poll_timeout();
        let settled = after.map_or(true, |t| t > now);
        assert!(
            acted && settled,
            "after handle_timeout({now:?}), poll_timeout() = {t:?} but poll_transmit {} and \
             poll_timeout() is then {after:?} ({:?})",
            if acted { "acted" } else { "did nothing" },
            self.src
        );
    }

    fn note_phase(&mut self) {
        if self.src.phase() != Phase::Probing {
            self.left_probing = true;
        }
    }

    /// One event-loop iteration: sleep until the next deadline or ACK, deliver, transmit.
    fn run_once(&mut self) -> bool {
        let next_ack = self.inflight.first().map(|(t, _)| *t);
        let next = match (self.src.poll_timeout(), next_ack) {
            (Some(a), Some(b)) => a.min(b),
            (Some(a), None) | (None, Some(a)) => a,
            (None, None) => return false,
        };
        self.advance_delivering(next.max(self.now));
        self.timeout();
        for i in 0.. {
            if !self.transmit() {
                break;
            }
            if i == 2 && self.now < Time::MAX {
                panic!("a burst of updates at {:?}", self.now);
            }
            if i == 2 {
                break;
            }
        }
        true
    }

    fn ack_of(&self, back: u16) -> Option<(u64, Sent)> {
        let n = self.sent.len();
        if n == 0 {
            return None;
        }
        let i = n - 1 - usize::from(back) % n;
        Some((i as u64 + 1, self.sent[i]))
    }

    fn check(&mut self) {
        let now = self.now;
        self.note_phase();
        let st = self.src.stats(now);
        assert_eq!(st.phase, self.src.phase());
        assert_eq!(st.rate.to_bits(), self.src.rate().to_bits());
        if st.phase == Phase::Probing {
            assert!(!self.left_probing, "back to probing");
            assert_eq!(st.rate, 0.0);
        } else {
            assert!(
                st.rate.is_finite() && st.rate >= self.cfg.min_rate && st.rate <= self.cfg.max_rate,
                "rate {} outside [{}, {}]",
                st.rate,
                self.cfg.min_rate,
                self.cfg.max_rate
            );
            assert!(st.rtt.is_some() && st.z.is_some());
        }
        for (name, v) in [
            ("rtt", st.rtt),
            ("z", st.z),
            ("age", st.age),
            ("avg_age", st.avg_age),
        ] {
            if let Some(v) = v {
                assert!(v.is_finite() && v >= 0.0, "{name} = {v}");
            }
        }
        assert!(st.avg_backlog.is_finite() && st.avg_backlog >= 0.0);
        assert_eq!(st.sent, self.sent.len() as u64);
        assert_eq!(st.bytes_sent, self.bytes_sent);
        assert_eq!(st.probes_sent, self.probes_sent);
        assert!(st.probes_lost <= st.probes_sent);
        assert_eq!(st.backlog, self.sent.len() as u64 - self.acked);
        assert_eq!(st.acks_in_sequence, self.in_sequence);
        assert_eq!(st.acks_out_of_sequence, self.out_of_sequence);
        assert_eq!(st.acks_stale, self.stale);
        assert_eq!(st.invalid, self.invalid);
        assert_eq!(st.acks_mismatched, self.mismatched);
        assert_eq!(st.dropped_stale, self.dropped_stale);
        assert_eq!(st.oversized, self.oversized);
        assert_eq!(st.auth_failed, self.auth_failed);
        assert_eq!(st.cookies, self.cookies);
        assert!(st.epochs >= self.epochs && st.outages >= self.outages);
        (self.epochs, self.outages) = (st.epochs, st.outages);
        if let Some(t) = self.src.poll_timeout() {
            assert!(t >= self.start, "a deadline before the session started");
        }
    }
}

fn run(u: &mut Unstructured<'_>) -> Result<()> {
    let setup = Setup::arbitrary(u)?;
    if trace() {
        eprintln!("{setup:?}");
    }
    let min_rate = f64::from(1 + setup.min_rate % 1000) / 10.0;
    let cfg = SourceConfig {
        probes: 1 + u32::from(setup.probes % 10),
        probe_timeout: Duration::from_millis(1 + u64::from(setup.probe_timeout_ms % 2000)),
        alpha: f64::from(1 + setup.alpha % 100) / 100.0,
        min_rate,
        max_rate: (min_rate + f64::from(setup.max_rate) / 100.0).min(1e6),
        floor_rate: f64::from(1 + setup.floor_rate % 1000) / 10.0,
        outage_after: Duration::from_millis(u64::from(setup.outage_ms % 2000)),
        ..SourceConfig::default()
    };
    let controller: Box<dyn Controller> = match setup.controller {
        ControllerSel::AcpPlus => Box::new(Acp::plus()),
        ControllerSel::Acp(k) => Box::new(Acp::original([0.25, 1.0, 2.0][usize::from(k % 3)])),
        ControllerSel::Lazy => Box::new(Lazy),
        ControllerSel::Fixed(r) => Box::new(Fixed::new(f64::from(r % 1_000_000 + 1) / 10.0)),
    };
    let start = match setup.start {
        Start::Zero => Time::ZERO,
        Start::Millis(ms) => Time::from_millis(ms.into()),
        Start::Any(ns) => Time::from_nanos(ns),
    };
    let sizes = Arc::new(Sizes {
        normal: AtomicUsize::new(0),
        once: AtomicUsize::new(NONE),
        last: AtomicUsize::new(NONE),
    });
    sizes.set(setup.payload.bytes());
    let mode = if setup.push {
        AppMode::Push
    } else {
        let sizes = Arc::clone(&sizes);
        AppMode::GenerateAtWill(Box::new(move |now: Time, out: &mut Vec<u8>| {
            let n = sizes.next();
            out.resize(out.len() + n, now.as_nanos() as u8);
        }))
    };
    let src = Source::new(cfg.clone(), controller, mode, setup.session, start);
    assert_eq!(src.session(), setup.session);
    let mut h = Harness {
        src,
        cfg,
        push: setup.push,
        session: setup.session,
        start,
        now: start,
        ops: 0,
        sizes,
        pending: None,
        path: setup.path,
        rng: setup.path.seed | 1,
        inflight: Vec::new(),
        monitor_highest: 0,
        monitor_knows: false,
        cookie: None,
        sent: Vec::new(),
        acked: 0,
        left_probing: false,
        history: Vec::new(),
        buf: Vec::new(),
        bytes_sent: 0,
        probes_sent: 0,
        in_sequence: 0,
        out_of_sequence: 0,
        stale: 0,
        invalid: 0,
        mismatched: 0,
        dropped_stale: 0,
        oversized: 0,
        auth_failed: 0,
        cookies: 0,
        epochs: 0,
        outages: 0,
    };
    h.check();
    let mut scratch = Vec::new();
    while h.ops < MAX_OPS && !u.is_empty() {
        let op = Op::arbitrary(u)?;
        if trace() {
            eprintln!("{:?} {:?} {op:?}", h.now, h.src.phase());
        }
        h.ops += 1;
        match op {
            Op::Advance(step) => {
                let t = h.now + step.duration();
                h.advance_delivering(t);
            }
            Op::Transmit => {
                h.transmit();
            }
            Op::Timeout => h.timeout(),
            Op::Run(n) => {
                for _ in 0..n {
                    if h.ops >= MAX_OPS || !h.run_once() {
                        break;
                    }
                    h.ops += 1;
                }
            }
            Op::Push(len, fill) => {
                let payload = vec![fill; len.bytes()];
                h.src.push(h.now, &payload);
                if h.push {
                    if h.pending.is_some() {
                        h.dropped_stale += 1;
                    }
                    h.pending = Some((h.now, payload));
                }
            }
            Op::SetPayload(len) => h.sizes.set(len.bytes()),
            Op::SetPath(path) => h.path = path,
            Op::AckOf {
                back,
                perturb,
                stale,
                feedback,
            } => {
                let Some((seq, s)) = h.ack_of(back) else {
                    continue;
                };
                let mut ack = Ack {
                    flags: u8::from(stale),
                    session: h.session,
                    seq,
                    gen_ts: s.gen_ts,
                    rx_ts: h.now.as_nanos(),
                    hold_ns: s.hold_ns,
                    feedback: &[],
                };
                match perturb {
                    Perturb::Exact => {}
                    Perturb::Seq(d) => ack.seq = seq.saturating_add_signed(d.into()),
                    Perturb::GenTs(d) => ack.gen_ts = s.gen_ts.saturating_add_signed(d.into()),
                    Perturb::Hold(d) => ack.hold_ns = s.hold_ns.saturating_add_signed(d.into()),
                    Perturb::Session(x) => ack.session ^= x,
                    Perturb::Future(d) => {
                        ack.gen_ts = h.now.as_nanos().saturating_add(1 + u64::from(d))
                    }
                    Perturb::Overflow => {
                        ack.gen_ts = u64::MAX;
                        ack.hold_ns = ack.hold_ns.max(1);
                    }
                }
                let values: Vec<Vec<u8>> = feedback
                    .iter()
                    .take(4)
                    .map(|&(kind, len)| vec![kind; usize::from(len % 8)])
                    .collect();
                let items: Vec<FeedbackItem<'_>> = feedback
                    .iter()
                    .zip(&values)
                    .map(|(&(kind, _), value)| FeedbackItem { kind, value })
                    .collect();
                let mut fb = Vec::new();
                encode_feedback(&items, &mut fb).unwrap();
                ack.feedback = &fb;
                scratch.clear();
                scratch.resize(ack.encoded_len(), 0);
                ack.encode(&mut scratch).unwrap();
                let data = std::mem::take(&mut scratch);
                h.receive(&data);
                scratch = data;
            }
            Op::Forged {
                session,
                seq,
                gen_ts,
                hold_ns,
                stale,
            } => {
                let sent = h.sent.len() as u64;
                let ack = Ack {
                    flags: u8::from(stale),
                    session: match session {
                        SessionSel::Own => h.session,
                        SessionSel::Other(x) => h.session ^ x.max(1),
                    },
                    seq: match seq {
                        SeqSel::Sent(back) => sent.saturating_sub(back.into()),
                        SeqSel::Ahead(d) => sent + 1 + u64::from(d),
                        SeqSel::Zero => 0,
                        SeqSel::Any(s) => s,
                    },
                    gen_ts,
                    rx_ts: gen_ts,
                    hold_ns,
                    feedback: &[],
                };
                scratch.clear();
                scratch.resize(ack.encoded_len(), 0);
                ack.encode(&mut scratch).unwrap();
                let data = std::mem::take(&mut scratch);
                h.receive(&data);
                scratch = data;
            }
            Op::MutatedAck { back, mutations } => {
                let Some((seq, s)) = h.ack_of(back) else {
                    continue;
                };
                let ack = Ack {
                    flags: 0,
                    session: h.session,
                    seq,
                    gen_ts: s.gen_ts,
                    rx_ts: h.now.as_nanos(),
                    hold_ns: s.hold_ns,
                    feedback: &[],
                };
                let mut data = vec![0u8; ack.encoded_len()];
                ack.encode(&mut data).unwrap();
                for m in mutations.iter().take(4) {
                    mutate(&mut data, m);
                }
                h.receive(&data);
            }
            Op::Reflected { back } => {
                let Some((seq, s)) = h.ack_of(back) else {
                    continue;
                };
                let update = Update {
                    flags: 0,
                    session: h.session,
                    seq,
                    gen_ts: s.gen_ts,
                    acked_seq: 0,
                    hold_ns: s.hold_ns,
                    cookie: None,
                    payload: &[],
                };
                let mut data = vec![0u8; update.encoded_len()];
                update.encode(&mut data).unwrap();
                h.receive(&data);
            }
            Op::CookieOf {
                back,
                gen_delta,
                cookie,
            } => {
                let Some((seq, s)) = h.ack_of(back) else {
                    continue;
                };
                let reply = Cookie {
                    flags: 0,
                    session: h.session,
                    seq,
                    gen_ts: s
                        .gen_ts
                        .saturating_add_signed(gen_delta.map_or(0, i64::from)),
                    cookie,
                };
                let mut data = vec![0u8; HEADER_LEN];
                reply.encode(&mut data).unwrap();
                h.receive(&data);
            }
            Op::Replay(back) => {
                if !h.history.is_empty() {
                    let i = h.history.len() - 1 - usize::from(back) % h.history.len();
                    let data = h.history[i].clone();
                    h.receive(&data);
                }
            }
            Op::Raw(bytes) => h.receive(&bytes),
            Op::RestartAverages => h.src.restart_averages(h.now),
        }
        h.check();
    }
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
