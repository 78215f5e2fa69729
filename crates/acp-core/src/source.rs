//! The source state machine (sans-IO, in the style of `quinn-proto`).
//!
//! The caller owns the socket and the clock:
//! - [`Source::poll_transmit`] writes the next datagram to send, if one is due at `now`;
//! - [`Source::handle_datagram`] takes every datagram received from the monitor;
//! - [`Source::poll_timeout`] says when to call again if nothing arrives;
//! - [`Source::stats`] reports rate, estimates and counters.
//!
//! Life of a session:
//! 1. **Probing**: stop-and-wait probes (flag PROBE). Each waits for its ACK or a timeout; once
//!    `probes` probes have been sent and at least one was answered, RTT̄ and Z̄ are set to the mean
//!    probe RTT and λ₁ comes from [`Controller::initial_rate`]. If no probe is ever answered the
//!    source keeps probing, one probe per timeout.
//! 2. **Running**: updates are sent every 1/λ; at the end of every control epoch the controller
//!    sees the epoch's time-average estimated age and backlog and sets λ for the next epoch.
//! 3. **Outage**: when updates are outstanding and no in-sequence ACK has come for
//!    `max(outage_after, 4·RTT̄, 3/λ)` (counted from the last ACK, or from the first send after
//!    everything was acknowledged) the source stops running epochs and sends at the floor rate
//!    `min(λ, floor_rate)` (never below λ_min). The first in-sequence ACK restores the rate in force
//!    before the outage and restarts the controller's epoch history.
//!
//! A monitor under pressure may answer an update with a COOKIE instead of an ACK: the source
//! then echoes the cookie in every update until one of them is acknowledged, and while probing
//! it sends the next probe at once. With a pre-shared key ([`SourceConfig::psk`]) every update is
//! sealed and only sealed replies under the session's key are believed ([`crate::seal`]).
//!
//! Payloads come from the application in one of two ways ([`AppMode`]): *generate at will* (the
//! source calls the application's generator at each send instant, so every update is fresh) or
//! *push* (the application offers updates at its own pace with [`Source::push`]; only the freshest
//! unsent one is kept and the ones it replaces are counted as `dropped_stale`).

use std::fmt;
use std::time::Duration;

use crate::accounting::{AgeIntegral, StepIntegral};
use crate::controller::{Controller, ControllerState, EpochSummary, Estimates};
use crate::ewma::Ewma;
use crate::seal::{AuthError, Psk, SessionCipher};
use crate::sent_log::{Echo, SentLog};
use crate::time::{secs_to_duration, Time};
use crate::wire::{
    Ack, AggregationReport, Cookie, Packet, Update, COOKIE_LEN, FEEDBACK_AGGREGATION,
    FLAG_MULTIPATH, FLAG_PROBE, TAG_LEN,
};

/// Source parameters. `Default` gives the values of the reference implementation where it has one.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceConfig {
    /// Number of stop-and-wait probes in the initialisation phase (N).
    pub probes: u32,
    /// How long a probe waits for its ACK before it counts as lost.
    pub probe_timeout: Duration,
    /// EWMA weight α of RTT̄ and Z̄.
    pub alpha: f64,
    /// Lowest rate λ_min (updates/s) the source will use.
    pub min_rate: f64,
    /// Highest rate λ_max (updates/s), e.g. the application's sensing rate.
    pub max_rate: f64,
    /// Rate during an outage (bounded by λ and λ_min).
    pub floor_rate: f64,
    /// Minimum silence before an outage is declared.
    pub outage_after: Duration,
    /// Pre-shared key: seal every update and believe only sealed replies.
    pub psk: Option<Psk>,
}

impl Default for SourceConfig {
    fn default() -> Self {
        SourceConfig {
            probes: 10,
            probe_timeout: Duration::from_secs(1),
            alpha: 0.2,
            min_rate: 0.1,
            max_rate: 1_000_000.0,
            floor_rate: 2.0,
            outage_after: Duration::from_millis(500),
            psk: None,
        }
    }
}

impl SourceConfig {
    /// Checks the rate range: `0 < min_rate <= max_rate`, both finite (a source clamps every
    /// rate into it, which needs an ordered range). For configurations from outside the program
    /// (bindings, files).
    pub fn check_rates(&self) -> Result<(), String> {
        let (min, max) = (self.min_rate, self.max_rate);
        if min.is_finite() && max.is_finite() && min > 0.0 && min <= max {
            Ok(())
        } else {
            Err(format!(
                "rates must satisfy 0 < min_rate <= max_rate, got min_rate {min} and max_rate {max}"
            ))
        }
    }
}

/// The application's payload generator for [`AppMode::GenerateAtWill`]: called with the send
/// instant, it appends a fresh payload to the vector it is given.
pub type Generator = Box<dyn FnMut(Time, &mut Vec<u8>) + Send>;

/// Where payloads come from.
pub enum AppMode {
    /// The source asks for a fresh payload at each send instant (generation time = send time).
    GenerateAtWill(Generator),
    /// The application offers payloads with [`Source::push`].
    Push,
}

impl fmt::Debug for AppMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AppMode::GenerateAtWill(_) => "GenerateAtWill",
            AppMode::Push => "Push",
        })
    }
}

/// Phase of a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Stop-and-wait initialisation.
    Probing,
    /// Control epochs.
    Running,
    /// No ACKs: sending at the floor rate.
    Outage,
}

impl Phase {
    /// Its name in every output (JSON, text, metrics labels, Python): `probing`, `running` or
    /// `outage`.
    pub const fn name(self) -> &'static str {
        match self {
            Phase::Probing => "probing",
            Phase::Running => "running",
            Phase::Outage => "outage",
        }
    }
}

/// One datagram written by [`Source::poll_transmit`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transmit {
    /// Bytes written to the buffer.
    pub len: usize,
    /// Sequence number of the update.
    pub seq: u64,
    /// Whether it is an initialisation probe.
    pub probe: bool,
}

/// What the source did with a received datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AckOutcome {
    /// An in-sequence ACK: estimates updated.
    InSequence,
    /// An ACK older than one already received: discarded.
    OutOfSequence,
    /// A COOKIE for this session: it will be echoed in the next updates.
    Cookie,
    /// Not a valid ACK for this session: discarded.
    Invalid,
}

/// Counters and current estimates.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceStats {
    /// Current phase.
    pub phase: Phase,
    /// Rate λ in force (updates/s); 0 while probing.
    pub rate: f64,
    /// RTT̄ (s), once known.
    pub rtt: Option<f64>,
    /// Z̄ (s), once known.
    pub z: Option<f64>,
    /// Estimated age Δ̂ at the time of the call (s).
    pub age: Option<f64>,
    /// Estimated backlog B̂ = S − N̂.
    pub backlog: u64,
    /// Time-average estimated age since the first ACK, or since [`Source::restart_averages`] (s).
    pub avg_age: Option<f64>,
    /// Time-average estimated backlog since the session started, or since
    /// [`Source::restart_averages`].
    pub avg_backlog: f64,
    /// ∫ estimated age dt over the span of `avg_age` (s²): a counter whose rate is the
    /// time-average age over any interval.
    pub age_area: Option<f64>,
    /// ∫ estimated backlog dt over the span of `avg_backlog` (updates × s).
    pub backlog_area: f64,
    /// Updates sent, probes included.
    pub sent: u64,
    /// Bytes sent (datagram sizes).
    pub bytes_sent: u64,
    /// Probes sent.
    pub probes_sent: u64,
    /// Probes that timed out.
    pub probes_lost: u64,
    /// In-sequence ACKs.
    pub acks_in_sequence: u64,
    /// Out-of-sequence ACKs (discarded).
    pub acks_out_of_sequence: u64,
    /// ACKs the monitor flagged STALE (forward-path reordering).
    pub acks_stale: u64,
    /// Datagrams that were not a valid ACK for this session, `acks_mismatched` included.
    pub invalid: u64,
    /// ACKs whose echoed timestamps differ from what was sent for their sequence (forged, or
    /// corrupted), or whose sequence is too far behind to check.
    pub acks_mismatched: u64,
    /// Datagrams whose seal was missing, unexpected or wrong (counted in `invalid` too).
    pub auth_failed: u64,
    /// COOKIEs received from the monitor (address validation).
    pub cookies: u64,
    /// Push mode: updates replaced by a fresher one before they could be sent.
    pub dropped_stale: u64,
    /// Send slots skipped because the payload exceeded the wire limit.
    pub oversized: u64,
    /// Receiver-feedback elements of a kind this crate defines whose value was malformed
    /// (dropped before the controller saw them).
    pub feedback_malformed: u64,
    /// Control epochs completed.
    pub epochs: u64,
    /// Outages entered.
    pub outages: u64,
    /// The controller's internal state.
    pub controller: ControllerState,
}

/// Counters kept by the source (the rest of [`SourceStats`] is derived on demand).
#[derive(Debug, Clone, Default)]
struct Counters {
    sent: u64,
    bytes_sent: u64,
    probes_sent: u64,
    probes_lost: u64,
    acks_in_sequence: u64,
    acks_out_of_sequence: u64,
    acks_stale: u64,
    invalid: u64,
    acks_mismatched: u64,
    auth_failed: u64,
    cookies: u64,
    dropped_stale: u64,
    oversized: u64,
    feedback_malformed: u64,
    epochs: u64,
    outages: u64,
}

/// Initialisation bookkeeping.
#[derive(Debug, Clone, Default)]
struct Probing {
    /// Sequence and deadline of the probe awaiting its ACK.
    outstanding: Option<(u64, Time)>,
    /// Probes whose ACK came back or that timed out.
    finished: u32,
    /// RTT samples gathered.
    samples: u32,
    rtt_sum: f64,
}

/// One ACP source session.
pub struct Source {
    cfg: SourceConfig,
    controller: Box<dyn Controller>,
    mode: AppMode,
    session: u64,
    phase: Phase,
    probing: Probing,
    /// S(t): highest sequence sent (0 = none).
    sent_seq: u64,
    /// N̂(t): highest sequence ACKed in sequence (0 = none).
    acked_seq: u64,
    last_ack: Option<Time>,
    /// Since when the source has been waiting for an ACK: the later of the last in-sequence ACK
    /// and the first send after everything was acknowledged; `None` when nothing is unacknowledged.
    waiting_since: Option<Time>,
    /// Skip the next Z sample (first ACK after an outage spans the silence).
    skip_z: bool,
    rtt: Ewma,
    z: Ewma,
    rate: f64,
    /// Rate to restore when an outage ends.
    resume_rate: f64,
    last_send: Option<Time>,
    next_send: Time,
    epoch_end: Time,
    epoch_age: AgeIntegral,
    epoch_backlog: StepIntegral,
    life_age: AgeIntegral,
    life_backlog: StepIntegral,
    pending: Option<(Time, Vec<u8>)>,
    scratch: Vec<u8>,
    sent_log: SentLog,
    /// The session's key, with a pre-shared key.
    cipher: Option<SessionCipher>,
    /// The monitor's cookie, echoed in every update from sequence `.1` on until one of those is
    /// acknowledged.
    cookie: Option<([u8; COOKIE_LEN], u64)>,
    /// Every update carries flag MULTIPATH ([`Source::set_multipath`]).
    multipath: bool,
    counters: Counters,
}

impl fmt::Debug for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Source")
            .field("session", &format_args!("{:016x}", self.session))
            .field("controller", &self.controller.name())
            .field("mode", &self.mode)
            .field("phase", &self.phase)
            .field("rate", &self.rate)
            .finish_non_exhaustive()
    }
}

impl Source {
    /// A new session with id `session` (choose it at random), starting at `now`.
    pub fn new(
        cfg: SourceConfig,
        controller: Box<dyn Controller>,
        mode: AppMode,
        session: u64,
        now: Time,
    ) -> Self {
        let cipher = cfg.psk.as_ref().map(|psk| SessionCipher::new(psk, session));
        Source {
            rtt: Ewma::new(cfg.alpha),
            z: Ewma::new(cfg.alpha),
            cfg,
            controller,
            mode,
            session,
            phase: Phase::Probing,
            probing: Probing::default(),
            sent_seq: 0,
            acked_seq: 0,
            last_ack: None,
            waiting_since: None,
            skip_z: false,
            rate: 0.0,
            resume_rate: 0.0,
            last_send: None,
            next_send: now,
            epoch_end: Time::MAX,
            epoch_age: AgeIntegral::new(now),
            epoch_backlog: StepIntegral::new(now),
            life_age: AgeIntegral::new(now),
            life_backlog: StepIntegral::new(now),
            pending: None,
            scratch: Vec::new(),
            sent_log: SentLog::default(),
            cipher,
            cookie: None,
            multipath: false,
            counters: Counters::default(),
        }
    }

    /// Marks every update from now on with flag MULTIPATH: the session is sent over several
    /// paths, and the monitor joins them into one session (`docs/PROTOCOL.md`, multipath
    /// extension; [`crate::multipath`] chooses the paths). Call it before the first
    /// [`Source::poll_transmit`].
    pub fn set_multipath(&mut self) {
        self.multipath = true;
    }

    /// Multiplies every rate the controller remembers ([`crate::Controller::scale_rates`]) and,
    /// unless the controller's rate is not a share of the capacity (Fixed, Lazy), the rate in
    /// force, by `factor` at once: a multipath source whose
    /// working paths changed ([`crate::multipath::PathScheduler::on_timer`] and
    /// [`crate::multipath::PathScheduler::handle_datagram`]). Ignored outside
    /// the running phase or for a factor that is not positive and finite.
    pub fn scale_rate(&mut self, now: Time, factor: f64) {
        if self.phase != Phase::Running || !(factor.is_finite() && factor > 0.0) {
            return;
        }
        if self.controller.scale_rates(factor) {
            self.set_rate(now, self.rate * factor);
        }
    }

    /// The session id.
    pub fn session(&self) -> u64 {
        self.session
    }

    /// The current phase.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// The rate λ in force (0 while probing).
    pub fn rate(&self) -> f64 {
        self.rate
    }

    /// The controller's name.
    pub fn controller_name(&self) -> String {
        self.controller.name()
    }

    /// Push mode: offer a fresh update generated at `now`. It replaces any unsent one, which is
    /// counted as dropped-stale. Ignored in generate-at-will mode.
    pub fn push(&mut self, now: Time, payload: &[u8]) {
        if !matches!(self.mode, AppMode::Push) {
            return;
        }
        let mut buf = match self.pending.take() {
            Some((_, buf)) => {
                self.counters.dropped_stale += 1;
                buf
            }
            None => std::mem::take(&mut self.scratch),
        };
        buf.clear();
        buf.extend_from_slice(payload);
        self.pending = Some((now, buf));
    }

    /// Whether an update is available to send (always, in generate-at-will mode).
    fn has_payload(&self) -> bool {
        match self.mode {
            AppMode::GenerateAtWill(_) => true,
            AppMode::Push => self.pending.is_some(),
        }
    }

    fn estimates(&self) -> Option<Estimates> {
        Some(Estimates {
            rtt: self.rtt.get()?,
            z: self.z.get()?,
            rate: self.rate,
        })
    }

    fn bounded(&self, rate: f64) -> f64 {
        if rate.is_finite() {
            rate.clamp(self.cfg.min_rate, self.cfg.max_rate)
        } else if self.rate > 0.0 {
            self.rate
        } else {
            self.cfg.min_rate
        }
    }

    /// Puts `rate` in force from `now`: the next send is one new period after the last one.
    fn set_rate(&mut self, now: Time, rate: f64) {
        self.rate = self.bounded(rate);
        let period = secs_to_duration(1.0 / self.rate);
        self.next_send = match self.last_send {
            Some(last) => (last + period).max(now),
            None => now,
        };
    }

    fn outage_deadline(&self) -> Option<Time> {
        if self.phase != Phase::Running {
            return None;
        }
        let rtt = self.rtt.get().unwrap_or(0.0);
        let silence = self
            .cfg
            .outage_after
            .max(secs_to_duration(4.0 * rtt))
            .max(secs_to_duration(3.0 / self.rate));
        Some(self.waiting_since? + silence)
    }

    /// When the source next needs [`Source::poll_transmit`] or [`Source::handle_timeout`].
    pub fn poll_timeout(&self) -> Option<Time> {
        let send = match self.phase {
            Phase::Probing => match self.probing.outstanding {
                Some((_, deadline)) => Some(deadline),
                None => self.has_payload().then_some(self.next_send),
            },
            Phase::Running | Phase::Outage => self.has_payload().then_some(self.next_send),
        };
        let epoch = (self.phase == Phase::Running).then_some(self.epoch_end);
        [send, epoch, self.outage_deadline()]
            .into_iter()
            .flatten()
            .min()
    }

    /// Processes timers due at `now`: probe timeouts, epoch ends, outage detection.
    pub fn handle_timeout(&mut self, now: Time) {
        if let Some((_, deadline)) = self.probing.outstanding {
            if now >= deadline {
                self.probing.outstanding = None;
                self.probing.finished += 1;
                self.counters.probes_lost += 1;
                self.next_send = now;
                self.maybe_finish_probing(now);
            }
        }
        self.enter_outage_if_due(now);
        if self.phase == Phase::Running && now >= self.epoch_end {
            self.end_epoch(now);
            // A higher rate shortens the outage threshold (3/λ), so its deadline may have just
            // passed; checking again keeps `poll_timeout` from ever lying in the past.
            self.enter_outage_if_due(now);
        }
    }

    fn enter_outage_if_due(&mut self, now: Time) {
        if self.outage_deadline().is_some_and(|d| now >= d) {
            self.enter_outage(now);
        }
    }

    fn enter_outage(&mut self, now: Time) {
        self.phase = Phase::Outage;
        self.counters.outages += 1;
        self.resume_rate = self.rate;
        let floor = self.rate.min(self.cfg.floor_rate);
        self.set_rate(now, floor);
    }

    fn end_epoch(&mut self, now: Time) {
        let avg_backlog = self.epoch_backlog.take_window(now);
        let avg_age = self.epoch_age.take_window(now);
        if let (Some(avg_age), Some(est)) = (avg_age, self.estimates()) {
            let summary = EpochSummary {
                avg_age,
                avg_backlog,
            };
            let rate = self.controller.on_epoch(&summary, &est);
            self.set_rate(now, rate);
            self.counters.epochs += 1;
        }
        self.start_epoch(now);
    }

    /// Discards the current epoch's averages (nothing to compare them with) and starts afresh.
    fn restart_epoch(&mut self, now: Time) {
        self.epoch_age.take_window(now);
        self.epoch_backlog.take_window(now);
        self.start_epoch(now);
    }

    fn start_epoch(&mut self, now: Time) {
        let len = self
            .estimates()
            .map_or(0.0, |est| self.controller.epoch_length(&est));
        // An epoch lasts at least one send period, so that it sees at least one update.
        let len = len.max(1.0 / self.rate);
        self.epoch_end = now + secs_to_duration(len);
    }

    fn maybe_finish_probing(&mut self, now: Time) {
        let p = &self.probing;
        if p.outstanding.is_some() || p.finished < self.cfg.probes || p.samples == 0 {
            return;
        }
        let mean = p.rtt_sum / f64::from(p.samples);
        self.rtt.set(mean);
        self.z.set(mean);
        self.phase = Phase::Running;
        let est = Estimates {
            rtt: mean,
            z: mean,
            rate: 1.0 / mean,
        };
        let rate = self.controller.initial_rate(&est);
        self.set_rate(now, rate);
        self.restart_epoch(now);
    }

    /// Writes the next update into `buf` (cleared first) if one is due at `now`.
    pub fn poll_transmit(&mut self, now: Time, buf: &mut Vec<u8>) -> Option<Transmit> {
        self.handle_timeout(now);
        let due = match self.phase {
            Phase::Probing => self.probing.outstanding.is_none() && now >= self.next_send,
            Phase::Running | Phase::Outage => now >= self.next_send,
        };
        if !due || !self.has_payload() {
            return None;
        }
        let probe = self.phase == Phase::Probing;
        let seq = self.sent_seq.checked_add(1)?;
        let (gen, payload) = match &mut self.mode {
            AppMode::GenerateAtWill(generate) => {
                let mut payload = std::mem::take(&mut self.scratch);
                payload.clear();
                generate(now, &mut payload);
                (now, payload)
            }
            AppMode::Push => self.pending.take()?,
        };
        let update = Update {
            flags: if probe { FLAG_PROBE } else { 0 }
                | if self.multipath { FLAG_MULTIPATH } else { 0 },
            session: self.session,
            seq,
            gen_ts: gen.as_nanos(),
            acked_seq: self.acked_seq,
            hold_ns: u32::try_from(now.nanos_since(gen)).unwrap_or(u32::MAX),
            cookie: self.cookie.map(|(c, _)| c),
            payload: &payload,
        };
        let echo = (update.gen_ts, update.hold_ns);
        buf.clear();
        buf.resize(update.encoded_len() + TAG_LEN, 0);
        let encoded = update.encode(buf).and_then(|len| match &self.cipher {
            Some(c) => c.seal(buf, len),
            None => Ok(len),
        });
        self.scratch = payload;
        let Ok(len) = encoded else {
            // The application produced more than fits a datagram: skip this send slot.
            self.counters.oversized += 1;
            self.schedule_next(now, false);
            return None;
        };
        buf.truncate(len);
        if self.sent_seq == self.acked_seq {
            self.waiting_since = Some(now);
        }
        self.sent_seq = seq;
        self.sent_log.record(seq, echo.0, echo.1, self.acked_seq);
        self.last_send = Some(now);
        self.counters.sent += 1;
        self.counters.bytes_sent += len as u64;
        self.record_backlog(now);
        if probe {
            self.counters.probes_sent += 1;
            self.probing.outstanding = Some((seq, now + self.probe_timeout()));
        }
        self.schedule_next(now, probe);
        Some(Transmit { len, seq, probe })
    }

    /// Moves the send schedule past a slot used at `now`. Probes are paced by their ACKs and
    /// timeouts; updates every 1/λ without bursting to catch up after a late wake-up.
    fn schedule_next(&mut self, now: Time, probe: bool) {
        if self.phase == Phase::Probing {
            if !probe {
                self.next_send = now + self.probe_timeout();
            }
            return;
        }
        let period = secs_to_duration(1.0 / self.rate);
        let next = self.next_send + period;
        self.next_send = if next <= now { now + period } else { next };
    }

    /// B̂ = S − N̂ changes at `now`; returns it.
    fn record_backlog(&mut self, now: Time) -> u64 {
        let backlog = self.sent_seq - self.acked_seq;
        self.epoch_backlog.set(now, backlog);
        self.life_backlog.set(now, backlog);
        backlog
    }

    fn probe_timeout(&self) -> Duration {
        let p = &self.probing;
        if p.samples == 0 {
            return self.cfg.probe_timeout;
        }
        let mean = p.rtt_sum / f64::from(p.samples);
        secs_to_duration(4.0 * mean)
            .max(Duration::from_millis(10))
            .min(self.cfg.probe_timeout)
    }

    /// Takes a datagram received from the monitor at `now`.
    pub fn handle_datagram(&mut self, now: Time, data: &[u8]) -> AckOutcome {
        let packet = match Packet::decode(data) {
            Ok(p) => p,
            Err(_) => return self.invalid(),
        };
        let sealed = match (&self.cipher, packet.is_sealed()) {
            (Some(c), true) => c.open(data).map(drop),
            (Some(_), false) => Err(AuthError::Unsealed),
            (None, true) => Err(AuthError::Unexpected),
            (None, false) => Ok(()),
        };
        if sealed.is_err() {
            self.counters.auth_failed += 1;
            return self.invalid();
        }
        let ack = match packet {
            Packet::Ack(ack) if self.plausible(ack.session, ack.seq) => ack,
            Packet::Cookie(c) if self.plausible(c.session, c.seq) => {
                return self.handle_cookie(now, &c)
            }
            _ => return self.invalid(),
        };
        if !self.echo_plausible(now, &ack) {
            return self.invalid();
        }
        match self.sent_log.check(ack.seq, ack.gen_ts, ack.hold_ns) {
            Echo::Matches => {}
            // Too far behind to check, and already superseded: harmless.
            Echo::Forgotten if ack.seq <= self.acked_seq => {}
            Echo::Differs | Echo::Forgotten => {
                self.counters.invalid += 1;
                self.counters.acks_mismatched += 1;
                return AckOutcome::Invalid;
            }
        }
        if ack.is_stale() {
            self.counters.acks_stale += 1;
        }
        if ack.seq <= self.acked_seq {
            self.counters.acks_out_of_sequence += 1;
            return AckOutcome::OutOfSequence;
        }
        self.counters.acks_in_sequence += 1;
        if self.cookie.is_some_and(|(_, from)| ack.seq >= from) {
            self.cookie = None;
        }
        let sent_at = ack.gen_ts + u64::from(ack.hold_ns);
        let rtt = now.nanos_since(Time::from_nanos(sent_at)) as f64 * 1e-9;
        self.acked_seq = ack.seq;
        let backlog = self.record_backlog(now);
        for integral in [&mut self.epoch_age, &mut self.life_age] {
            integral.reset(now, ack.gen_ts);
        }
        let previous_ack = self.last_ack.replace(now);
        self.waiting_since = (backlog > 0).then_some(now);
        match self.phase {
            Phase::Probing => {
                self.probing.samples += 1;
                self.probing.rtt_sum += rtt;
                if self
                    .probing
                    .outstanding
                    .is_some_and(|(seq, _)| ack.seq >= seq)
                {
                    self.probing.outstanding = None;
                    self.probing.finished += 1;
                    self.next_send = now;
                }
                self.maybe_finish_probing(now);
                return AckOutcome::InSequence;
            }
            Phase::Outage => {
                self.phase = Phase::Running;
                self.skip_z = true;
                self.controller.restart();
                let resume = self.resume_rate;
                self.set_rate(now, resume);
                self.restart_epoch(now);
            }
            Phase::Running => {}
        }
        self.rtt.update(rtt);
        match previous_ack {
            Some(prev) if !std::mem::take(&mut self.skip_z) => {
                self.z.update(now.nanos_since(prev) as f64 * 1e-9);
            }
            _ => {}
        }
        for item in ack.feedback_items() {
            if item.kind == FEEDBACK_AGGREGATION && AggregationReport::decode(item.value).is_err() {
                self.counters.feedback_malformed += 1;
                continue;
            }
            self.controller.on_feedback(&item);
        }
        if let Some(est) = self.estimates() {
            if let Some(rate) = self.controller.on_ack(&est) {
                self.set_rate(now, rate);
            }
        }
        AckOutcome::InSequence
    }

    fn invalid(&mut self) -> AckOutcome {
        self.counters.invalid += 1;
        AckOutcome::Invalid
    }

    /// A reply of this session, to an update that was sent.
    fn plausible(&self, session: u64, seq: u64) -> bool {
        session == self.session && seq >= 1 && seq <= self.sent_seq
    }

    /// An ACK whose echoed timestamps are not in the future.
    fn echo_plausible(&self, now: Time, ack: &Ack<'_>) -> bool {
        ack.gen_ts
            .checked_add(u64::from(ack.hold_ns))
            .is_some_and(|sent| sent <= now.as_nanos())
    }

    /// The monitor asks for its cookie to be echoed before it accepts the session.
    fn handle_cookie(&mut self, now: Time, c: &Cookie) -> AckOutcome {
        if self.sent_log.check_generation(c.seq, c.gen_ts) != Echo::Matches {
            self.counters.acks_mismatched += 1;
            return self.invalid();
        }
        self.counters.cookies += 1;
        // Echoed from the next update on, until one of those is acknowledged.
        self.cookie = Some((c.cookie, self.sent_seq + 1));
        // The probe it answers will not be acknowledged: send the next one now.
        if self
            .probing
            .outstanding
            .is_some_and(|(seq, _)| seq == c.seq)
        {
            self.probing.outstanding = None;
            self.next_send = now;
        }
        AckOutcome::Cookie
    }

    /// Restarts the time averages of [`SourceStats`] (`avg_age`, `avg_backlog`) at `now`, e.g. at
    /// the end of a warm-up, so that they cover only what follows.
    pub fn restart_averages(&mut self, now: Time) {
        self.life_age.take_window(now);
        self.life_backlog.take_window(now);
    }

    /// Counters and estimates as of `now`.
    pub fn stats(&self, now: Time) -> SourceStats {
        let c = &self.counters;
        SourceStats {
            phase: self.phase,
            rate: self.rate,
            rtt: self.rtt.get(),
            z: self.z.get(),
            age: self.life_age.age_at(now).map(|ns| ns as f64 * 1e-9),
            backlog: self.sent_seq - self.acked_seq,
            avg_age: self.life_age.average(now),
            avg_backlog: self.life_backlog.average(now),
            age_area: self.life_age.area(now),
            backlog_area: self.life_backlog.area(now),
            sent: c.sent,
            bytes_sent: c.bytes_sent,
            probes_sent: c.probes_sent,
            probes_lost: c.probes_lost,
            acks_in_sequence: c.acks_in_sequence,
            acks_out_of_sequence: c.acks_out_of_sequence,
            acks_stale: c.acks_stale,
            invalid: c.invalid,
            acks_mismatched: c.acks_mismatched,
            auth_failed: c.auth_failed,
            cookies: c.cookies,
            dropped_stale: c.dropped_stale,
            oversized: c.oversized,
            feedback_malformed: c.feedback_malformed,
            epochs: c.epochs,
            outages: c.outages,
            controller: self.controller.state(),
        }
    }
}
