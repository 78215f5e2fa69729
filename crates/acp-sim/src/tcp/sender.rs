//! The sending half: segmentation, the windows, loss detection and recovery, the timers and
//! delivery-rate samples.
//!
//! The application writes bytes into a send buffer of `send_buffer` bytes ([`Sender::write`]);
//! [`Sender::poll_transmit`] cuts them into segments of at most SMSS bytes. A segment goes out
//! when it fits the congestion window (`pipe`, below, plus the segment ≤ window, counted in
//! the window's unit: bytes, or segments as Linux counts them, [`WindowUnit`]) and the
//! receiver's window, the pacing rate allows it, and — unless `nodelay` — it is a full segment or nothing
//! is unacknowledged (Nagle). Segments are never split to fit a window.
//!
//! A scoreboard, one record per segment sent and not cumulatively acknowledged, marks each as
//! SACKed, lost, and retransmitted since it was last marked lost; `pipe` counts what is in
//! flight less what is SACKed or lost plus what was retransmitted (RFC 6675's `pipe`, Linux's
//! `tcp_packets_in_flight`). Loss detection and recovery, the same under every congestion
//! control, as Linux runs them against a peer that sends SACK blocks (its default,
//! [`TcpConfig::sack`]):
//! - RACK ([`super::rack`], RFC 8985 §6) marks segments lost by time: one is lost once a segment
//!   sent after it is delivered and the reordering window has passed, so a lost retransmission
//!   is found like a lost original. The first loss marked outside recovery starts fast recovery
//!   (the controller sets its window, [`CongestionControl::on_loss`]); it ends when an ACK covers
//!   everything sent before it began (`recover`);
//! - while `pipe` leaves room in the window, lost segments not yet retransmitted go out, lowest
//!   first, then new data;
//! - a tail-loss probe (TLP, RFC 8985 §7, Linux's `tcp_send_loss_probe`): with data in flight
//!   and no recovery under way, 2·SRTT after the latest transmission or ACK (plus 2 ms, or the
//!   minimum RTO if one segment is in flight; no later than the RTO would fire) the sender
//!   sends one new segment, or else resends the highest one, whatever the window says, so that
//!   the ACK it draws lets RACK find the losses of a window's tail. One probe at a time; when a
//!   retransmitted probe turns out to have repaired a loss (an ACK beyond it, Linux's
//!   `tcp_process_tlp_ack`; without D-SACK, a pure duplicate ACK at its end says it did not),
//!   the controller reduces its window once (loss and immediate recovery end, Linux's CWR);
//! - the retransmission timer (RFC 6298, its RTO as Linux computes it: [`super::rto`]) runs
//!   while data is unacknowledged, restarts when an ACK acknowledges new data, when the first
//!   unacknowledged segment is retransmitted (as Linux's `tcp_xmit_retransmit_queue` does) and
//!   when a SACK covers data sent before that segment was last sent (Linux's
//!   `tcp_clean_rtx_queue`: its ACK cannot be due before theirs). On expiry the controller is told, the RTO backs
//!   off, and every segment not SACKed is marked lost: the SACK marks stay (RFC 6675 §5.1 and
//!   Linux keep them; the model's receiver never reneges), so the recovery that follows resends
//!   only the holes, in order as the window grows from the controller's loss window, and never
//!   what the receiver holds. It ends (`recover`) like fast recovery;
//! - against a peer without SACK, NewReno (RFC 5681, RFC 6582): the third duplicate ACK starts
//!   fast recovery (unless it acknowledges nothing beyond the `recover` point of an earlier
//!   recovery or timeout) and resends the first unacknowledged segment; the window is inflated
//!   by 3·SMSS, then by one SMSS per further duplicate ACK; a partial ACK resends the next
//!   unacknowledged segment and deflates the inflation by the bytes it acknowledged (adding one
//!   SMSS back if that was at least one SMSS); a full ACK ends recovery: the inflation goes, the
//!   controller's window stays. No RACK, no TLP (Linux schedules probes only with SACK).
//!
//! RTT samples follow Karn's rule: an ACK that acknowledges a retransmitted segment gives none.
//! Unlike Linux (`tcp_ack_update_rtt`'s `sack_rtt_us`), the estimator takes no sample from
//! what an ACK only SACKs: tried, it moved no timeout on the networks measured against the
//! kernel and took LIA's coupled subflows from 1.08 to 1.47 times a TCP flow's share of a
//! bottleneck (`docs/SIMULATOR.md`, "Several stations").
//!
//! Delivery-rate samples follow draft-cheng-iccrg-delivery-rate-estimation over cumulative ACKs,
//! in the window's unit: each segment remembers what was delivered and the times when it was
//! sent; a segment is delivered when first SACKed or else when cumulatively acknowledged, as
//! Linux counts `delivered`; the sample of an ACK is what was delivered since the newest segment
//! it delivers was sent, over the longer of that segment's send and ACK intervals, dropped if
//! that is shorter than the minimum RTT (Linux's `tcp_rate_gen`), and marked
//! application-limited when the sender ran out of data with room in its window.

use std::collections::VecDeque;
use std::time::Duration;

use acp_core::Time;

use super::cc::{AckEvent, CongestionControl, LossEvent, RateSample};
use super::rack::{Rack, Verdict};
use super::rto::RtoEstimator;
use super::{Ack, Segment, TcpConfig, WindowUnit};

/// Duplicate ACKs that mean a loss without SACK (RFC 5681).
const DUP_THRESH: u32 = 3;

/// What a tail-loss probe's timeout adds to 2·SRTT with more than one segment in flight
/// (Linux's `TCP_TIMEOUT_MIN`, two jiffies at 1000 Hz).
const PTO_SLACK: Duration = Duration::from_millis(2);

/// The probe timeout before the first RTT sample (Linux's `TCP_TIMEOUT_INIT`).
const PTO_INITIAL: Duration = Duration::from_secs(1);

/// One transmission of a segment still unacknowledged.
#[derive(Debug, Clone, Copy)]
struct Sent {
    seq: u64,
    end: u64,
    /// When it was last sent.
    sent_at: Time,
    /// Whether it was ever sent again (Karn's rule).
    retransmitted: bool,
    /// Whether a SACK block covered it.
    sacked: bool,
    /// Whether it is marked lost (by RACK or a timeout), until delivered.
    lost: bool,
    /// Whether it was retransmitted since it was last marked lost (or by a probe) and that
    /// retransmission is not known lost: in flight again (Linux's `TCPCB_SACKED_RETRANS`).
    resent: bool,
    /// The connection's delivery state when it was sent.
    delivered: u64,
    delivered_time: Time,
    first_sent_time: Time,
    app_limited: bool,
    /// Whether it carries PSH: it ended the data written when it was first sent (Linux marks
    /// the tail of every write, and a retransmission keeps the mark; [`Sender::write_more`]).
    push: bool,
}

/// What an ACK's SACK blocks newly covered.
#[derive(Debug, Clone, Copy, Default)]
struct Sacked {
    /// The latest sent of the segments newly SACKed.
    newest: Option<Sent>,
    /// When the earliest sent of them that was never retransmitted was sent (Linux's
    /// `first_sackt`).
    first_sent: Option<Time>,
    /// When the latest sent of those was sent (Linux's `last_sackt`).
    last_sent: Option<Time>,
}

impl Sacked {
    /// The RTT samples these SACKs give at `now` (Karn's rule: never-retransmitted segments
    /// only): the earliest sent's, which Linux's smoothed RTT takes when the cumulative ACK
    /// gives none (`sack_rtt_us`), and the latest sent's, which its controls take
    /// (`ca_rtt_us`).
    fn rtts(&self, now: Time) -> (Option<Duration>, Option<Duration>) {
        let since = |t: Option<Time>| t.map(|t| now.saturating_since(t));
        (since(self.first_sent), since(self.last_sent))
    }
}

/// The connection's delivery state, as a transmission records it.
#[derive(Debug, Clone, Copy)]
struct DeliveryState {
    delivered: u64,
    delivered_time: Time,
    first_sent_time: Time,
    app_limited: bool,
}

impl DeliveryState {
    /// A transmission of `[seq, end)` at `sent_at` in this state.
    fn record(self, seq: u64, end: u64, sent_at: Time, retransmitted: bool) -> Sent {
        Sent {
            seq,
            end,
            sent_at,
            retransmitted,
            sacked: false,
            lost: false,
            resent: false,
            delivered: self.delivered,
            delivered_time: self.delivered_time,
            first_sent_time: self.first_sent_time,
            app_limited: self.app_limited,
            push: false,
        }
    }
}

/// The scoreboard's totals, kept as records change so that `pipe` costs nothing to read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Tally {
    /// SACKed, in the window's unit.
    sacked: u64,
    /// Marked lost, in the window's unit.
    lost: u64,
    /// Retransmitted and in flight, in the window's unit.
    resent: u64,
    /// SACKed segments.
    sacked_segments: u64,
    /// Segments lost and not yet retransmitted.
    to_resend: u64,
}

impl Tally {
    /// Adds (`sign` 1) or takes away (`sign` −1) what `s` counts for.
    fn count(&mut self, s: &Sent, unit: WindowUnit, sign: i64) {
        let units = unit.count(s.end - s.seq);
        let add = |slot: &mut u64, on: bool, by: u64| {
            if on {
                *slot = slot.wrapping_add_signed(sign * by as i64);
            }
        };
        add(&mut self.sacked, s.sacked, units);
        add(&mut self.lost, s.lost, units);
        add(&mut self.resent, s.resent, units);
        add(&mut self.sacked_segments, s.sacked, 1);
        add(&mut self.to_resend, s.lost && !s.resent, 1);
    }
}

/// The tail-loss probe in flight: what was sent up to it, and whether it was a retransmission.
#[derive(Debug, Clone, Copy)]
struct Probe {
    end: u64,
    retransmission: bool,
}

/// What keeps the next segment from going out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Blocked {
    NoData,
    Nagle,
    Window,
    Receiver,
    Pacing(Time),
}

/// The sender's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SenderStats {
    /// Segments sent, retransmissions included.
    pub segments: u64,
    /// Segments sent again (fast retransmits, recovery's resends, probes that resend).
    pub retransmits: u64,
    /// Fast recoveries entered.
    pub fast_retransmits: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// Tail-loss probes sent.
    pub probes: u64,
    /// Probes that repaired a loss (the window was reduced once).
    pub probe_recoveries: u64,
    /// ACKs received.
    pub acks: u64,
    /// Duplicate ACKs among them.
    pub dup_acks: u64,
}

/// The sending half of a connection.
#[derive(Debug)]
pub struct Sender {
    smss: u64,
    /// What the window counts, and what a full segment counts for in it.
    unit: WindowUnit,
    unit_smss: u64,
    nodelay: bool,
    /// Whether the peer sends SACK blocks (RACK, TLP and the scoreboard's recovery).
    sack: bool,
    send_buffer: u64,
    min_rto: Duration,
    cc: Box<dyn CongestionControl>,
    rto: RtoEstimator,
    /// End of the bytes the application wrote.
    written: u64,
    /// End of the last write that ended the application's data ([`write`](Self::write)): the
    /// segment that ends there carries PSH.
    push_at: u64,
    /// First unacknowledged byte.
    una: u64,
    /// Next new byte to send: everything before it was sent.
    nxt: u64,
    /// The receiver's window edge: no byte at or beyond it may be sent.
    peer_edge: u64,
    /// The scoreboard: one record per segment in `[una, nxt)`, in order.
    sent: VecDeque<Sent>,
    tally: Tally,
    rack: Rack,
    rto_at: Option<Time>,
    /// RACK's reordering timer.
    rack_at: Option<Time>,
    /// The tail-loss probe's timer.
    probe_at: Option<Time>,
    /// A probe is due at the next transmission.
    probe_due: bool,
    /// The probe in flight.
    probe: Option<Probe>,
    dup_acks: u32,
    /// Fast recovery.
    in_recovery: bool,
    /// Recovery after a timeout (Linux's `TCP_CA_Loss`).
    in_loss: bool,
    /// End of the data outstanding when the last recovery or timeout began (RFC 6582's
    /// `recover`, exclusive).
    recover: Option<u64>,
    /// Bytes fast recovery adds to the controller's window without SACK (may be negative after
    /// deflation).
    inflation: i64,
    retransmit_pending: bool,
    delivered: u64,
    delivered_time: Time,
    first_sent_time: Time,
    /// Nonzero while application-limited: delivered must pass it for samples to count again.
    app_limited_until: u64,
    /// Linux's smoothed RTT as `TCP_INFO` reports it: the moving average (gain 1/8) of the
    /// samples `tcp_rtt_estimator` takes.
    reported_srtt: Option<Duration>,
    round_end: u64,
    limited_this_round: bool,
    limited_last_round: bool,
    /// When pacing lets the next burst go.
    next_send: Time,
    /// The burst being sent (one TSO/GSO packet of Linux's): when it began, its segments and
    /// bytes, and the instant its pacing counts from.
    burst: Burst,
    stats: SenderStats,
}

/// A pacing burst: segments sent at one instant as one of Linux's TSO/GSO packets.
#[derive(Debug, Clone, Copy)]
struct Burst {
    at: Time,
    segments: u64,
    bytes: u64,
    base: Time,
}

impl Sender {
    /// A sender under `cfg` with congestion control `cc`, its window opened to the receive
    /// buffer, created at `now`.
    pub fn new(cfg: &TcpConfig, cc: Box<dyn CongestionControl>, now: Time) -> Self {
        Sender {
            smss: u64::from(cfg.smss),
            unit: cfg.window,
            unit_smss: cfg.window.count(u64::from(cfg.smss)),
            nodelay: cfg.nodelay,
            sack: cfg.sack,
            send_buffer: cfg.send_buffer,
            min_rto: cfg.min_rto,
            cc,
            rto: RtoEstimator::new(cfg.initial_rto, cfg.min_rto, cfg.max_rto),
            written: 0,
            push_at: 0,
            una: 0,
            nxt: 0,
            peer_edge: cfg.receive_buffer,
            sent: VecDeque::new(),
            tally: Tally::default(),
            rack: Rack::default(),
            rto_at: None,
            rack_at: None,
            probe_at: None,
            probe_due: false,
            probe: None,
            dup_acks: 0,
            in_recovery: false,
            in_loss: false,
            recover: None,
            inflation: 0,
            retransmit_pending: false,
            delivered: 0,
            delivered_time: now,
            first_sent_time: now,
            app_limited_until: 0,
            reported_srtt: None,
            round_end: 0,
            limited_this_round: false,
            limited_last_round: false,
            next_send: now,
            burst: Burst {
                at: now,
                segments: u64::MAX,
                bytes: 0,
                base: now,
            },
            stats: SenderStats::default(),
        }
    }

    /// Free space in the send buffer (bytes).
    pub fn send_space(&self) -> u64 {
        self.send_buffer - (self.written - self.una)
    }

    /// Bytes written but not yet sent (what TCP_NOTSENT_LOWAT compares).
    pub fn not_sent(&self) -> u64 {
        self.written - self.nxt
    }

    /// The application writes `bytes` (at most [`send_space`](Self::send_space)).
    ///
    /// A write is where Linux judges whether the sender is application-limited
    /// (`tcp_rate_check_app_limited`, called on every `sendmsg`): less than a segment written
    /// and not yet sent, the window not full and every segment marked lost already
    /// retransmitted. Then the samples of what is sent until everything now in flight is
    /// delivered are marked application-limited (the host's queues below TCP, which Linux also
    /// requires empty, are not modelled: segments leave the sender when sent).
    pub fn write(&mut self, bytes: u64) {
        self.write_more(bytes);
        self.push_at = self.written;
    }

    /// Writes `bytes` that do not end the application's data: like [`write`](Self::write), but
    /// the segment ending them carries no PSH (as `MSG_MORE`). An MPTCP subflow's share of the
    /// connection's data is written so unless it ends what the application wrote.
    pub fn write_more(&mut self, bytes: u64) {
        if bytes > 0
            && self.not_sent() < self.smss
            && self.pipe() < self.window()
            && self.tally.to_resend == 0
        {
            self.app_limited_until = (self.delivered + self.in_flight()).max(1);
        }
        self.written += bytes.min(self.send_space());
    }

    /// The window in force, in its unit: the controller's, plus fast recovery's inflation, at
    /// least one segment.
    pub fn window(&self) -> u64 {
        let w = self.cc.window() as i64 + self.inflation;
        w.max(self.unit_smss as i64) as u64
    }

    /// The controller's window in bytes (a packet window at SMSS bytes a segment), without
    /// recovery's inflation.
    pub fn cwnd(&self) -> u64 {
        self.cc.window() * self.unit.bytes(self.smss)
    }

    /// The controller's slow-start threshold in bytes, as [`cwnd`](Self::cwnd) (`u64::MAX`
    /// before the first loss).
    pub fn ssthresh(&self) -> u64 {
        self.cc
            .ssthresh()
            .saturating_mul(self.unit.bytes(self.smss))
    }

    /// The controller's pacing rate in bytes/s, if it paces.
    pub fn pacing_rate(&self) -> Option<f64> {
        self.cc
            .pacing_rate()
            .map(|r| r * self.unit.bytes(self.smss) as f64)
    }

    /// The congestion control.
    pub fn cc(&self) -> &dyn CongestionControl {
        self.cc.as_ref()
    }

    /// Bytes sent and not cumulatively acknowledged.
    pub fn flight(&self) -> u64 {
        self.nxt - self.una
    }

    /// What is sent and not cumulatively acknowledged, in the window's unit (the records cover
    /// exactly those bytes).
    fn in_flight(&self) -> u64 {
        match self.unit {
            WindowUnit::Bytes => self.flight(),
            WindowUnit::Packets => self.sent.len() as u64,
        }
    }

    /// What counts against the window, in its unit: RFC 6675's `pipe` (in flight, less what is
    /// SACKed or lost, plus what was retransmitted).
    pub fn pipe(&self) -> u64 {
        let t = &self.tally;
        (self.in_flight() + t.resent).saturating_sub(t.sacked + t.lost)
    }

    /// First unacknowledged byte.
    pub fn una(&self) -> u64 {
        self.una
    }

    /// The RTT estimator.
    pub fn rto(&self) -> &RtoEstimator {
        &self.rto
    }

    /// Whether fast recovery is under way.
    pub fn in_recovery(&self) -> bool {
        self.in_recovery
    }

    /// Whether the recovery after a timeout is under way.
    pub fn in_loss(&self) -> bool {
        self.in_loss
    }

    /// The counters.
    pub fn stats(&self) -> SenderStats {
        self.stats
    }

    /// Changes record `i` through `f`, keeping the tally.
    fn update(&mut self, i: usize, f: impl FnOnce(&mut Sent)) {
        let mut s = self.sent[i];
        self.tally.count(&s, self.unit, -1);
        f(&mut s);
        self.tally.count(&s, self.unit, 1);
        self.sent[i] = s;
    }

    fn blocked(&self, now: Time) -> Result<u64, Blocked> {
        let len = self.next_len().ok_or(Blocked::NoData)?;
        if !self.nodelay && len < self.smss && self.nxt > self.una {
            return Err(Blocked::Nagle);
        }
        if self.pipe() + self.unit.count(len) > self.window() {
            return Err(Blocked::Window);
        }
        if self.nxt + len > self.peer_edge {
            return Err(Blocked::Receiver);
        }
        if let Some(t) = self.pacing_wait(now) {
            return Err(Blocked::Pacing(t));
        }
        Ok(len)
    }

    /// When pacing lets the next segment go, if not now: a segment that joins the burst sent
    /// at this instant goes with it.
    fn pacing_wait(&self, now: Time) -> Option<Time> {
        let rate = self.pacing_rate()?;
        let joins = self.burst.at == now && self.burst.segments < self.burst_segments(rate);
        (now < self.next_send && !joins).then_some(self.next_send)
    }

    /// Linux's segments per burst at `rate` bytes/s ([`super::tso_segs`]).
    fn burst_segments(&self, rate: f64) -> u64 {
        super::tso_segs(rate, self.smss)
    }

    /// Spaces what follows a segment of `len` bytes sent at `now` at the pacing rate, as Linux
    /// paces its TSO/GSO packets (`tcp_update_skb_after_send`): the segments sent at one
    /// instant, up to [`super::tso_segs`], leave together as one burst, and the next burst
    /// waits for the whole burst's time at the pacing rate.
    fn pace(&mut self, now: Time, len: u64) {
        let Some(rate) = self.pacing_rate() else {
            return;
        };
        let segments = self.burst_segments(rate);
        let b = &mut self.burst;
        if b.at == now && b.segments < segments {
            b.segments += 1;
            b.bytes += len;
        } else {
            *b = Burst {
                at: now,
                segments: 1,
                bytes: len,
                base: self.next_send.max(now),
            };
        }
        self.next_send = b.base + Duration::from_secs_f64(b.bytes as f64 / rate.max(1.0));
    }

    /// The length of the next new segment, if there is data to send.
    fn next_len(&self) -> Option<u64> {
        let available = self.written - self.nxt;
        (available > 0).then(|| available.min(self.smss))
    }

    /// The next segment to send now, if any; call until `None`.
    #[must_use]
    pub fn poll_transmit(&mut self, now: Time) -> Option<Segment> {
        if std::mem::take(&mut self.retransmit_pending) {
            if let Some(seg) = self.resend(now, 0) {
                return Some(seg);
            }
        }
        if std::mem::take(&mut self.probe_due) {
            if let Some(seg) = self.send_probe(now) {
                return Some(seg);
            }
        }
        if self.tally.to_resend > 0 {
            if let Some(seg) = self.resend_lost(now) {
                return Some(seg);
            }
        }
        let len = match self.blocked(now) {
            Ok(len) => len,
            Err(Blocked::Window) => {
                self.limited_this_round = true;
                return None;
            }
            Err(_) => return None,
        };
        let seg = self.send_new(now, len);
        if self.pipe() + self.unit_smss > self.window() {
            self.limited_this_round = true;
        }
        self.pace(now, len);
        self.arm_probe(now);
        Some(seg)
    }

    /// Sends `len` new bytes.
    fn send_new(&mut self, now: Time, len: u64) -> Segment {
        if self.nxt == self.una {
            self.first_sent_time = now;
            self.delivered_time = now;
        }
        let end = self.nxt + len;
        let seg = Segment {
            seq: self.nxt,
            len: len as u32,
            push: end == self.push_at,
        };
        let record = Sent {
            push: seg.push,
            ..self.delivery_state().record(seg.seq, end, now, false)
        };
        self.sent.push_back(record);
        self.nxt = seg.end();
        self.stats.segments += 1;
        self.rto_at.get_or_insert(now + self.rto.rto());
        seg
    }

    /// Sends record `i` again; the copy counts in `pipe` if the record was marked lost.
    fn resend(&mut self, now: Time, i: usize) -> Option<Segment> {
        let s = *self.sent.get(i)?;
        let state = self.delivery_state();
        self.resend_marked(now, i, state, s.lost)
    }

    /// [`resend`](Self::resend) with the delivery state and whether the copy counts in `pipe`.
    fn resend_marked(
        &mut self,
        now: Time,
        i: usize,
        state: DeliveryState,
        counted: bool,
    ) -> Option<Segment> {
        let s = *self.sent.get(i)?;
        self.update(i, |r| {
            *r = Sent {
                lost: s.lost,
                resent: counted,
                push: s.push,
                ..state.record(s.seq, s.end, now, true)
            }
        });
        self.stats.segments += 1;
        self.stats.retransmits += 1;
        if i == 0 {
            // Linux restarts the timer when it resends the first unacknowledged segment.
            self.rto_at = Some(now + self.rto.rto());
        }
        Some(Segment {
            seq: s.seq,
            len: (s.end - s.seq) as u32,
            push: s.push,
        })
    }

    /// Resends the lowest lost segment not yet resent if the window has room and pacing
    /// allows (Linux paces retransmissions as it paces new data).
    fn resend_lost(&mut self, now: Time) -> Option<Segment> {
        let i = self.sent.iter().position(|s| s.lost && !s.resent)?;
        let len = self.sent[i].end - self.sent[i].seq;
        if self.pipe() + self.unit.count(len) > self.window() {
            self.limited_this_round = true;
            return None;
        }
        if self.pacing_wait(now).is_some() {
            return None;
        }
        self.pace(now, len);
        self.resend(now, i)
    }

    /// The tail-loss probe: one new segment if the receiver's window takes it, else the highest
    /// segment not SACKed again; either whatever the congestion window says.
    fn send_probe(&mut self, now: Time) -> Option<Segment> {
        let new = self
            .next_len()
            .filter(|&len| self.nxt + len <= self.peer_edge);
        let seg = match new {
            Some(len) => self.send_new(now, len),
            None => {
                let last = self.sent.iter().rposition(|s| !s.sacked)?;
                let state = self.delivery_state();
                self.resend_marked(now, last, state, true)?
            }
        };
        self.probe = Some(Probe {
            end: self.nxt,
            retransmission: new.is_none(),
        });
        self.stats.probes += 1;
        self.rto_at = Some(now + self.rto.rto());
        Some(seg)
    }

    /// Whether a tail-loss probe may be scheduled or sent: SACK, data in flight, no recovery,
    /// no probe in flight, no reordering timer pending.
    fn may_probe(&self) -> bool {
        self.sack
            && !self.sent.is_empty()
            && !self.in_recovery
            && !self.in_loss
            && self.probe.is_none()
            && self.rack_at.is_none()
    }

    /// (Re)arms the probe timer (Linux's `tcp_schedule_loss_probe`).
    fn arm_probe(&mut self, now: Time) {
        if !self.may_probe() {
            return;
        }
        let pto = match self.rto.srtt() {
            Some(srtt) if self.sent.len() == 1 => 2 * srtt + self.min_rto,
            Some(srtt) => 2 * srtt + PTO_SLACK,
            None => PTO_INITIAL,
        };
        let at = now + pto;
        self.probe_at = Some(self.rto_at.map_or(at, |r| r.min(at)));
    }

    /// Marks the segments the ACK's SACK blocks cover. A segment is delivered when first
    /// SACKed, as Linux counts `delivered`.
    fn mark_sacked(&mut self, now: Time, ack: &Ack) -> Sacked {
        let (unit, mut delivered, mut newly) = (self.unit, 0, Sacked::default());
        let min_rtt = self.rto.min_rtt();
        for &(start, end) in ack.sack.iter().flatten() {
            let first = self.sent.partition_point(|s| s.seq < start);
            for i in first..self.sent.len() {
                let s = self.sent[i];
                if s.end > end {
                    break;
                }
                if s.sacked {
                    continue;
                }
                self.update(i, |r| {
                    r.sacked = true;
                    r.lost = false;
                    r.resent = false;
                });
                self.rack
                    .delivered(now, s.end, s.sent_at, s.retransmitted, min_rtt);
                delivered += unit.count(s.end - s.seq);
                if newly.newest.is_none_or(|n| s.sent_at >= n.sent_at) {
                    newly.newest = Some(s);
                }
                if !s.retransmitted {
                    if newly.first_sent.is_none_or(|t| s.sent_at < t) {
                        newly.first_sent = Some(s.sent_at);
                    }
                    if newly.last_sent.is_none_or(|t| s.sent_at > t) {
                        newly.last_sent = Some(s.sent_at);
                    }
                }
            }
        }
        if delivered > 0 {
            self.delivered += delivered;
            self.delivered_time = now;
        }
        newly
    }

    /// The delivery-rate sample of an ACK whose most recently sent delivered segment is
    /// `sampled` (Linux's `tcp_rate_gen`), `rtt` this ACK's RTT sample; ends the
    /// application-limited period once what was in flight when it began is delivered.
    fn rate_sample(
        &mut self,
        now: Time,
        sampled: Option<Sent>,
        rtt: Option<Duration>,
    ) -> Option<RateSample> {
        // Linux drops samples over less than the minimum RTT: what such an interval delivered
        // was not paced by the path (e.g. data the receiver held, ACKed at once when a hole
        // fills).
        let min_rtt = self.rto.min_rtt().into_iter().chain(rtt).min();
        let rate = sampled.and_then(|p| {
            let send = p.sent_at.saturating_since(p.first_sent_time);
            let ack = now.saturating_since(p.delivered_time);
            self.first_sent_time = p.sent_at;
            let interval = send.max(ack);
            let valid = !interval.is_zero() && min_rtt.is_none_or(|m| interval >= m);
            let interval = interval.as_secs_f64();
            valid.then(|| RateSample {
                delivery_rate: (self.delivered - p.delivered) as f64 / interval,
                app_limited: p.app_limited,
                prior_delivered: p.delivered,
            })
        });
        if self.app_limited_until > 0 && self.delivered > self.app_limited_until {
            self.app_limited_until = 0;
        }
        rate
    }

    fn delivery_state(&self) -> DeliveryState {
        DeliveryState {
            delivered: self.delivered,
            delivered_time: self.delivered_time,
            first_sent_time: self.first_sent_time,
            app_limited: self.app_limited_until > 0,
        }
    }

    /// An ACK arrived; if it acknowledged new data cumulatively, returns Linux's smoothed RTT as
    /// `TCP_INFO` then reads it, what the lab records at each new acknowledgement (so that the
    /// simulator's mean RTT and the lab's measure the same thing). That average takes a sample
    /// from every ACK that delivers, if Karn's rule allows one: the oldest segment it newly and
    /// cumulatively acknowledges, else the earliest sent of those it newly SACKs
    /// (`tcp_clean_rtx_queue`'s `seq_rtt_us`, `sack_rtt_us`). The controller takes the latest
    /// sent of those newly SACKed, else of those newly acknowledged (Linux's `ca_rtt_us`); the
    /// RTO estimator the newest segment the ACK acknowledges cumulatively.
    pub fn handle_ack(&mut self, now: Time, ack: Ack) -> Option<Duration> {
        self.stats.acks += 1;
        if ack.ack > self.nxt {
            return None; // acknowledges bytes never sent
        }
        self.peer_edge = ack.ack + ack.window;
        self.rack.new_ack();
        let delivered_before = self.delivered;
        let prior_pipe = self.pipe();
        let newly = if self.sack {
            self.mark_sacked(now, &ack)
        } else {
            Sacked::default()
        };
        let sacked = newly.newest;
        if ack.ack <= self.una {
            if ack.ack == self.una && self.nxt > self.una {
                self.duplicate_ack(now);
            }
            // Linux (`tcp_clean_rtx_queue`) restarts the timer on a SACK of data sent before
            // the first unacknowledged segment was last sent (its `sack_rtt_us` longer than
            // that segment's age): that segment's ACK cannot be due before such data's.
            let head = self.sent.front().map(|h| h.sent_at);
            if newly.first_sent.zip(head).is_some_and(|(t, h)| t < h) {
                self.rto_at = Some(now + self.rto.rto());
            }
            if sacked.is_none() && self.probe.is_some_and(|p| ack.ack >= p.end) {
                // A pure duplicate ACK at the probe's end: the original and the probe both
                // arrived, nothing was lost.
                self.probe = None;
            }
            let recovering = self.in_recovery || self.in_loss;
            let losses = self.mark_lost(now);
            let (sack_rtt, rtt) = newly.rtts(now);
            self.report_rtt(sack_rtt);
            if self.delivered > delivered_before {
                let rate = self.rate_sample(now, sacked, rtt);
                let event = AckEvent {
                    acked: 0,
                    acked_sacked: self.delivered - delivered_before,
                    rtt,
                    min_rtt: self.rto.min_rtt(),
                    prior_pipe,
                    pipe: self.pipe(),
                    losses,
                    delivered: self.delivered,
                    in_recovery: self.in_recovery,
                    cwnd_limited: self.limited_this_round || self.limited_last_round,
                    round_start: false,
                    rate,
                };
                self.cc.on_sack(now, &event);
            }
            if losses > 0 && !recovering {
                self.enter_recovery(now);
            }
            return None;
        }
        let acked_bytes = ack.ack - self.una;
        // Delivered by this ACK: the records it acknowledges that no SACK block covered.
        let (mut acked_segments, mut delivered) = (0, 0);
        let mut karn = true;
        let (mut oldest, mut newest): (Option<Sent>, Option<Sent>) = (None, None);
        // The RTO estimator's sample: the newest segment acknowledged, SACKed ones included (the
        // model's rule before SACK RTTs were taken; Linux's estimator takes `seq_rtt_us`, which
        // moved the shares of MPTCP's coupled subflows: docs/SIMULATOR.md).
        let mut estimator_newest: Option<Sent> = None;
        // The latest sent of the segments this ACK delivers (SACKed ones were delivered then).
        let mut sampled = sacked;
        let min_rtt = self.rto.min_rtt();
        while let Some(&s) = self.sent.front() {
            if s.end > ack.ack {
                if s.seq < ack.ack {
                    if self.unit == WindowUnit::Bytes && !s.sacked {
                        delivered += ack.ack - s.seq;
                    }
                    self.update(0, |r| r.seq = ack.ack);
                    karn = false;
                }
                break;
            }
            karn &= !s.retransmitted;
            self.tally.count(&s, self.unit, -1);
            self.sent.pop_front();
            acked_segments += 1;
            if estimator_newest.is_none_or(|n| s.sent_at >= n.sent_at) {
                estimator_newest = Some(s);
            }
            if !s.sacked {
                oldest.get_or_insert(s);
                if newest.is_none_or(|n| s.sent_at >= n.sent_at) {
                    newest = Some(s);
                }
                self.rack
                    .delivered(now, s.end, s.sent_at, s.retransmitted, min_rtt);
                delivered += self.unit.count(s.end - s.seq);
                if sampled.is_none_or(|n| s.sent_at >= n.sent_at) {
                    sampled = Some(s);
                }
            }
        }
        let since_sent = |s: Option<Sent>| {
            s.filter(|_| karn)
                .map(|s: Sent| now.saturating_since(s.sent_at))
        };
        // Linux's samples (`tcp_clean_rtx_queue`): the cumulatively acknowledged segments'
        // unless a SACK newly covered some, for the controls; for the smoothed RTT, the SACKs'
        // only when the cumulative ACK gives none.
        let (sack_rtt, sack_ca_rtt) = newly.rtts(now);
        let rtt = sack_ca_rtt.or_else(|| since_sent(newest));
        let seq_rtt = since_sent(oldest).or(sack_rtt);
        let acked = match self.unit {
            WindowUnit::Bytes => acked_bytes,
            WindowUnit::Packets => acked_segments,
        };
        self.delivered += delivered;
        self.delivered_time = now;
        let rate = self.rate_sample(now, sampled, rtt);
        self.una = ack.ack;
        self.dup_acks = 0;
        let round_start = self.una >= self.round_end;
        if round_start {
            self.round_end = self.nxt;
            self.limited_last_round = self.limited_this_round;
            self.limited_this_round = false;
        }
        let mut partial = false;
        // The ACK that ends recovery still belongs to it: no window growth on it.
        let in_recovery = self.in_recovery;
        let recovered = self.recover.is_some_and(|r| ack.ack >= r);
        if self.in_recovery || self.in_loss {
            if recovered {
                self.in_recovery = false;
                self.in_loss = false;
                self.inflation = 0;
                self.cc.on_recovery_end(now);
            } else if self.in_recovery {
                partial = true;
                if !self.sack {
                    self.retransmit_pending = true;
                    self.inflation -= acked as i64;
                    if acked >= self.unit_smss {
                        self.inflation += self.unit_smss as i64;
                    }
                }
            }
        }
        if let Some(r) = since_sent(estimator_newest) {
            self.rto.sample(r, self.una, self.nxt);
        }
        // Linux marks losses before its congestion control hears of the ACK, and BBR takes
        // them off its window (`rs->losses`); recovery begins after, as here.
        let recovering = self.in_recovery || self.in_loss;
        let losses = self.mark_lost(now);
        let event = AckEvent {
            acked,
            acked_sacked: self.delivered - delivered_before,
            rtt,
            min_rtt: self.rto.min_rtt(),
            prior_pipe,
            pipe: self.pipe(),
            losses,
            delivered: self.delivered,
            in_recovery,
            cwnd_limited: self.limited_this_round || self.limited_last_round,
            round_start,
            rate,
        };
        self.cc.on_ack(now, &event);
        self.probe_acked(now, ack.ack);
        self.rto_at = (self.una < self.nxt || partial).then(|| now + self.rto.rto());
        if losses > 0 && !recovering {
            self.enter_recovery(now);
        }
        self.arm_probe(now);
        self.report_rtt(seq_rtt);
        self.reported_srtt
    }

    /// Adds a sample to the smoothed RTT `TCP_INFO` would report.
    fn report_rtt(&mut self, sample: Option<Duration>) {
        if let Some(r) = sample {
            self.reported_srtt = Some(self.reported_srtt.map_or(r, |s| (s * 7 + r) / 8));
        }
    }

    /// An ACK reached `ack` with a probe in flight (Linux's `tcp_process_tlp_ack`): beyond a
    /// retransmitted probe's end, the probe repaired a loss and the controller reduces its
    /// window once.
    fn probe_acked(&mut self, now: Time, ack: u64) {
        let Some(p) = self.probe.filter(|p| ack >= p.end) else {
            return;
        };
        if !p.retransmission {
            self.probe = None;
        } else if ack > p.end {
            self.probe = None;
            if !self.in_recovery && !self.in_loss {
                self.cc.on_loss(now, &self.loss_event());
                self.cc.on_recovery_end(now);
                self.stats.probe_recoveries += 1;
            }
        }
    }

    /// Marks losses as [`mark_lost`](Self::mark_lost) does and starts fast recovery on a first
    /// loss.
    fn detect_losses(&mut self, now: Time) {
        let recovering = self.in_recovery || self.in_loss;
        if self.mark_lost(now) > 0 && !recovering {
            self.enter_recovery(now);
        }
    }

    /// RACK's pass over the scoreboard (RFC 8985 `RACK_detect_loss`): marks lost what it finds
    /// lost and arms the reordering timer for the rest; returns what it marked, in the window's
    /// unit.
    fn mark_lost(&mut self, now: Time) -> u64 {
        if !self.sack {
            return 0;
        }
        let recovering = self.in_recovery || self.in_loss;
        let reo_wnd = self.rack.reo_wnd(
            recovering,
            self.tally.sacked_segments,
            self.rto.min_rtt(),
            self.rto.srtt(),
        );
        let (mut wait, mut lost) = (None::<Duration>, 0);
        for i in 0..self.sent.len() {
            let s = self.sent[i];
            if s.sacked || (s.lost && !s.resent) {
                continue;
            }
            match self.rack.verdict(now, s.end, s.sent_at, reo_wnd) {
                // Records after a segment never resent were all sent after it.
                Verdict::SentLater if !s.retransmitted => break,
                Verdict::SentLater => {}
                Verdict::Lost => {
                    self.update(i, |r| {
                        r.lost = true;
                        r.resent = false;
                    });
                    lost += self.unit.count(s.end - s.seq);
                }
                Verdict::Wait(d) => wait = Some(wait.map_or(d, |w| w.max(d))),
            }
        }
        self.rack_at = wait.map(|d| now + d);
        if self.rack_at.is_some() {
            self.probe_at = None;
        }
        lost
    }

    fn loss_event(&self) -> LossEvent {
        LossEvent::new(self.in_flight(), self.pipe())
    }

    /// Starts fast recovery: the controller sets its window.
    fn enter_recovery(&mut self, now: Time) {
        self.recover = Some(self.nxt);
        self.in_recovery = true;
        self.cc.on_loss(now, &self.loss_event());
        self.stats.fast_retransmits += 1;
        self.probe = None;
        self.probe_at = None;
    }

    fn duplicate_ack(&mut self, now: Time) {
        self.stats.dup_acks += 1;
        self.dup_acks += 1;
        if self.sack {
            return; // RACK decides
        }
        if self.in_recovery {
            self.inflation += self.unit_smss as i64;
            return;
        }
        if self.dup_acks == DUP_THRESH && self.recover.is_none_or(|r| self.una >= r) {
            self.enter_recovery(now);
            self.inflation = i64::from(DUP_THRESH) * self.unit_smss as i64;
            self.retransmit_pending = true;
        }
    }

    /// When the sender needs waking: its retransmission, reordering or probe timer, or the
    /// pacing instant of a segment that only pacing holds back.
    pub fn poll_timeout(&self, now: Time) -> Option<Time> {
        let pacing = match self.blocked(now) {
            Err(Blocked::Pacing(t)) => Some(t),
            _ if self.tally.to_resend > 0 => self.pacing_wait(now),
            _ => None,
        };
        [self.rto_at, self.rack_at, self.probe_at, pacing]
            .into_iter()
            .flatten()
            .min()
    }

    /// Runs the timers that are due.
    pub fn handle_timeout(&mut self, now: Time) {
        let due = |t: Option<Time>| t.is_some_and(|t| t <= now);
        if due(self.rack_at) {
            self.rack_at = None;
            self.detect_losses(now);
        }
        if due(self.probe_at) {
            self.probe_at = None;
            if self.may_probe() {
                // The probe takes the place of the timeout it may have been due with.
                self.probe_due = true;
                self.rto_at = Some(now + self.rto.rto());
            }
        }
        if due(self.rto_at) {
            self.retransmission_timeout(now);
        }
    }

    /// The retransmission timer expired: every segment not SACKed is lost.
    fn retransmission_timeout(&mut self, now: Time) {
        self.stats.timeouts += 1;
        self.cc.on_timeout(now, self.in_flight());
        self.rto.back_off();
        self.in_recovery = false;
        self.in_loss = true;
        self.inflation = 0;
        self.dup_acks = 0;
        self.retransmit_pending = false;
        self.probe_due = false;
        self.probe = None;
        self.probe_at = None;
        self.rack_at = None;
        self.recover = Some(self.nxt);
        for i in 0..self.sent.len() {
            if !self.sent[i].sacked {
                self.update(i, |r| {
                    r.lost = true;
                    r.resent = false;
                });
            }
        }
        self.next_send = now;
        self.rto_at = Some(now + self.rto.rto());
    }
}
