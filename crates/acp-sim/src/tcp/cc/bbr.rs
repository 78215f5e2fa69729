//! BBR v1 (draft-cardwell-iccrg-bbr-congestion-control-00).
//!
//! BBR models the path by two numbers: BtlBw, the windowed maximum of the delivery-rate samples
//! over the last 10 round trips (application-limited samples count only when they raise it), and
//! RTprop, the minimum RTT over the last 10 s (refreshed by a smaller sample, or any sample
//! once it is 10 s old, as Linux's `tcp_bbr.c`). It paces at `pacing_gain · BtlBw` less
//! Linux's 1 % margin (`bbr_pacing_margin_percent`) and caps the data in flight at
//! `cwnd_gain · BtlBw · RTprop` plus Linux's quantization budget — three TSO bursts
//! (`bbr_tso_segs_goal`, [`crate::tcp::tso_segs`]: two segments up to 23.7 Mbit/s of
//! 1,448-byte segments), two more segments in the 5/4 phase — never below four segments. The
//! sender paces in those bursts, as Linux paces its TSO/GSO packets. Its states:
//! - **Startup**: gains 2/ln 2 ≈ 2.885 until BtlBw has grown by less than 25 % for three
//!   round trips in a row (the pipe is full);
//! - **Drain**: pacing gain 1/2.885 until the data in flight falls to one BDP;
//! - **ProbeBW**: cwnd gain 2 and pacing gains cycling through 5/4, 3/4, 1, 1, 1, 1, 1, 1, a
//!   phase per RTprop (the 5/4 phase also lasts until a BDP·5/4 is in flight, the 3/4 phase
//!   ends early once a BDP or less is); the first phase is drawn at random, never 3/4;
//! - **ProbeRTT**: when RTprop is 10 s old, the window drops to four segments for at least
//!   200 ms and a round trip, then the previous window comes back.
//!
//! Once the pipe is full the window also holds Linux's ACK-aggregation allowance (`tcp_bbr.c`'s
//! `bbr_update_ack_aggregation` and `bbr_ack_aggregation_cwnd`): an *epoch* starts whenever
//! the data delivered since the last one falls to what BtlBw predicts over its time; the
//! excess of what was delivered (acknowledged or SACKed, each once) over that prediction,
//! capped by the window, is kept as the maximum over two windows of five round trips each
//! (the older is forgotten at the start of every fifth round trip), and the larger of the two,
//! at most BtlBw × 100 ms, is added to the window's target before the quantization budget.
//! ACKs that come in bursts (a shared WiFi access whose stations take turns, a receiver that
//! ACKs several segments at once) raise it; an ACK stream as even as the bottleneck leaves it
//! near one ACK's worth. Like Linux, only ACKs with a valid delivery-rate sample update it.
//!
//! Like Linux's `bbr_main`, it runs on every ACK that delivers data, SACK-only ACKs included,
//! and counts what each newly delivers (`acked_sacked`), not what it cumulatively acknowledges.
//! Losses: what an ACK newly finds lost comes off the window (`rs->losses`); fast recovery
//! starts from what is in flight (RFC 6675's `pipe`, Linux's `tcp_packets_in_flight`) plus one
//! segment, with packet conservation (the window at least `pipe` plus what the ACK delivered)
//! for its first round trip, then the model's window; a timeout leaves one segment; both save
//! the window, which the end of recovery restores. The sender marks samples
//! application-limited as Linux does at each write (`tcp_rate_check_app_limited`), so a flow
//! of small updates written one at a time may never find the pipe full and stay in Startup, as
//! Linux's does. The pacing rate starts at 2.885 times the initial window per millisecond (no
//! RTT sample yet), and never falls before the pipe is full.

use std::collections::VecDeque;
use std::time::Duration;

use acp_core::Time;
use acp_netmodel::Rng;

use super::{AckEvent, CongestionControl, LossEvent};

/// Startup's gains, 2/ln 2.
pub const HIGH_GAIN: f64 = 2.885;
/// ProbeBW's pacing gains, one phase per RTprop.
pub const PACING_GAIN_CYCLE: [f64; 8] = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
const CWND_GAIN: f64 = 2.0;
const BTLBW_ROUNDS: u64 = 10;
const RTPROP_WINDOW: Duration = Duration::from_secs(10);
const PROBE_RTT_TIME: Duration = Duration::from_millis(200);
const FULL_BW_GROWTH: f64 = 1.25;
const FULL_BW_ROUNDS: u32 = 3;
/// What Linux paces at, as a fraction of the gain times BtlBw (`bbr_pacing_margin_percent`).
const PACING_MARGIN: f64 = 0.99;
/// Round trips per window of the ACK-aggregation maximum (`bbr_extra_acked_win_rtts`).
const EXTRA_ACKED_WIN_RTTS: u32 = 5;
/// The ACK-aggregation allowance's cap in time at BtlBw (`bbr_extra_acked_max_us`).
const EXTRA_ACKED_MAX: Duration = Duration::from_millis(100);
/// Segments delivered in one aggregation epoch that end it whatever the rate
/// (`bbr_ack_epoch_acked_reset_thresh`).
const ACK_EPOCH_RESET_SEGMENTS: u64 = 1 << 20;

/// BBR's states.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Exponential search for the bottleneck rate.
    Startup,
    /// Draining the queue Startup built.
    Drain,
    /// Cruising at the bottleneck rate, probing for more.
    ProbeBw,
    /// Draining everything to measure the path's RTT.
    ProbeRtt,
}

/// BBR v1.
#[derive(Debug, Clone)]
pub struct Bbr {
    smss: u64,
    initial: u64,
    mode: Mode,
    /// (round, rate) samples, decreasing in rate: the windowed maximum is the front.
    btlbw: VecDeque<(u64, f64)>,
    rtprop: Option<Duration>,
    rtprop_stamp: Time,
    round: u64,
    next_round_delivered: u64,
    pacing_gain: f64,
    cwnd_gain: f64,
    pacing_rate: f64,
    cwnd: u64,
    filled_pipe: bool,
    full_bw: f64,
    full_bw_rounds: u32,
    cycle_index: usize,
    cycle_stamp: Time,
    probe_rtt_done: Option<Time>,
    probe_rtt_round_done: bool,
    prior_cwnd: u64,
    /// Packet conservation until this round begins.
    conserve_until_round: Option<u64>,
    /// The ACK-aggregation allowance's state.
    aggregation: AckAggregation,
    rng: Rng,
}

/// Linux BBR's estimate of ACK aggregation: the largest excess of delivered data over what
/// BtlBw predicts within an epoch, over the last two windows of five round trips.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AckAggregation {
    /// The maximum excess of each window (the window's unit).
    extra: [u64; 2],
    /// The window being filled.
    index: usize,
    /// Round trips into that window.
    rounds: u32,
    /// When the epoch began.
    epoch_start: Time,
    /// Delivered since then.
    epoch_delivered: u64,
}

impl AckAggregation {
    /// An ACK at `now` delivered `delivered` (acknowledged or SACKed, each once), with the
    /// bottleneck estimated at `btlbw` per second, the window at `cwnd`; `round_start` if it
    /// began a round trip; `smss` is what a segment counts for.
    pub fn update(
        &mut self,
        now: Time,
        delivered: u64,
        btlbw: f64,
        cwnd: u64,
        round_start: bool,
        smss: u64,
    ) {
        if delivered == 0 {
            return;
        }
        if round_start {
            self.rounds += 1;
            if self.rounds >= EXTRA_ACKED_WIN_RTTS {
                self.rounds = 0;
                self.index = 1 - self.index;
                self.extra[self.index] = 0;
            }
        }
        let elapsed = now.saturating_since(self.epoch_start).as_secs_f64();
        let mut expected = (btlbw * elapsed) as u64;
        if self.epoch_delivered <= expected
            || self.epoch_delivered + delivered >= ACK_EPOCH_RESET_SEGMENTS * smss
        {
            self.epoch_delivered = 0;
            self.epoch_start = now;
            expected = 0;
        }
        self.epoch_delivered =
            (self.epoch_delivered + delivered).min(ACK_EPOCH_RESET_SEGMENTS * smss);
        let extra = (self.epoch_delivered - expected).min(cwnd);
        self.extra[self.index] = self.extra[self.index].max(extra);
    }

    /// The larger of the two windows' maxima.
    pub fn extra(&self) -> u64 {
        self.extra[0].max(self.extra[1])
    }
}

impl Bbr {
    /// A BBR controller for segments of `smss` bytes, starting at `initial` bytes; `seed` draws
    /// the first ProbeBW phase.
    pub fn new(smss: u64, initial: u64, seed: u64) -> Self {
        Bbr {
            smss,
            initial,
            mode: Mode::Startup,
            btlbw: VecDeque::new(),
            rtprop: None,
            rtprop_stamp: Time::ZERO,
            round: 0,
            next_round_delivered: 0,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            pacing_rate: HIGH_GAIN * initial as f64 / 1e-3,
            cwnd: initial,
            filled_pipe: false,
            full_bw: 0.0,
            full_bw_rounds: 0,
            cycle_index: 0,
            cycle_stamp: Time::ZERO,
            probe_rtt_done: None,
            probe_rtt_round_done: false,
            prior_cwnd: initial,
            conserve_until_round: None,
            aggregation: AckAggregation::default(),
            rng: Rng::new(seed),
        }
    }

    /// The state.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The bottleneck bandwidth estimate (bytes/s).
    pub fn btlbw(&self) -> f64 {
        self.btlbw.front().map_or(0.0, |&(_, r)| r)
    }

    /// The round-trip propagation time estimate.
    pub fn rtprop(&self) -> Option<Duration> {
        self.rtprop
    }

    /// `gain` bandwidth-delay products (bytes), the initial window before any RTT sample.
    fn inflight(&self, gain: f64) -> u64 {
        match self.rtprop {
            Some(rtprop) if self.btlbw() > 0.0 => {
                (gain * self.btlbw() * rtprop.as_secs_f64()) as u64
            }
            _ => self.initial,
        }
    }

    fn update_btlbw(&mut self, rate: f64) {
        while self.btlbw.back().is_some_and(|&(_, r)| r <= rate) {
            self.btlbw.pop_back();
        }
        self.btlbw.push_back((self.round, rate));
        while self
            .btlbw
            .front()
            .is_some_and(|&(round, _)| round + BTLBW_ROUNDS <= self.round)
        {
            self.btlbw.pop_front();
        }
    }

    /// `gain` bandwidth-delay products plus Linux's quantization budget (`bbr_inflight`).
    fn inflight_budget(&self, gain: f64) -> u64 {
        self.inflight(gain) + self.quantization_budget()
    }

    /// Linux's quantization budget: three TSO bursts, two more segments in the 5/4 phase.
    fn quantization_budget(&self) -> u64 {
        let probing = self.mode == Mode::ProbeBw && self.cycle_index == 0;
        let tso = crate::tcp::tso_segs(self.pacing_rate, self.smss);
        (3 * tso + 2 * u64::from(probing)) * self.smss
    }

    /// The ACK-aggregation allowance (`bbr_ack_aggregation_cwnd`): none before the pipe is
    /// full, at most BtlBw × 100 ms.
    pub fn aggregation_allowance(&self) -> u64 {
        if !self.filled_pipe {
            return 0;
        }
        let cap = (self.btlbw() * EXTRA_ACKED_MAX.as_secs_f64()) as u64;
        self.aggregation.extra().min(cap)
    }

    /// The window's target (`bbr_set_cwnd`): `cwnd_gain` BDPs, the ACK-aggregation allowance
    /// and the quantization budget.
    fn cwnd_target(&self) -> u64 {
        self.inflight(self.cwnd_gain) + self.aggregation_allowance() + self.quantization_budget()
    }

    /// The ACK-aggregation estimate's state.
    pub fn aggregation(&self) -> &AckAggregation {
        &self.aggregation
    }

    fn enter_probe_bw(&mut self, now: Time) {
        self.mode = Mode::ProbeBw;
        self.pacing_gain = 1.0;
        self.cwnd_gain = CWND_GAIN;
        // Any phase but the 3/4 one.
        let draw = self.rng.up_to(6) as usize;
        self.cycle_index = if draw == 0 { 0 } else { draw + 1 };
        self.advance_cycle(now);
    }

    fn advance_cycle(&mut self, now: Time) {
        self.cycle_stamp = now;
        self.cycle_index = (self.cycle_index + 1) % PACING_GAIN_CYCLE.len();
        self.pacing_gain = PACING_GAIN_CYCLE[self.cycle_index];
    }

    fn next_cycle_phase(&self, now: Time, prior_inflight: u64) -> bool {
        let full_length = self
            .rtprop
            .is_some_and(|r| now.saturating_since(self.cycle_stamp) > r);
        if self.pacing_gain > 1.0 {
            full_length && prior_inflight >= self.inflight_budget(self.pacing_gain)
        } else if self.pacing_gain < 1.0 {
            full_length || prior_inflight <= self.inflight_budget(1.0)
        } else {
            full_length
        }
    }

    fn exit_probe_rtt(&mut self, now: Time) {
        self.rtprop_stamp = now;
        self.cwnd = self.cwnd.max(self.prior_cwnd);
        if self.filled_pipe {
            self.enter_probe_bw(now);
        } else {
            self.mode = Mode::Startup;
            self.pacing_gain = HIGH_GAIN;
            self.cwnd_gain = HIGH_GAIN;
        }
    }

    fn save_cwnd(&mut self) {
        self.prior_cwnd = if self.conserve_until_round.is_none() && self.mode != Mode::ProbeRtt {
            self.cwnd
        } else {
            self.prior_cwnd.max(self.cwnd)
        };
    }
}

impl CongestionControl for Bbr {
    fn on_ack(&mut self, now: Time, ack: &AckEvent) {
        // The model: round trips, BtlBw, the full pipe, RTprop.
        let mut round_start = false;
        if let Some(rs) = ack.rate {
            if rs.prior_delivered >= self.next_round_delivered {
                self.next_round_delivered = ack.delivered;
                self.round += 1;
                round_start = true;
            }
            if !rs.app_limited || rs.delivery_rate >= self.btlbw() {
                self.update_btlbw(rs.delivery_rate);
            }
            let (btlbw, cwnd) = (self.btlbw(), self.cwnd);
            self.aggregation
                .update(now, ack.acked_sacked, btlbw, cwnd, round_start, self.smss);
        }
        let prior_inflight = ack.prior_pipe;
        if self.mode == Mode::ProbeBw && self.next_cycle_phase(now, prior_inflight) {
            self.advance_cycle(now);
        }
        if !self.filled_pipe && round_start && !ack.rate.is_some_and(|r| r.app_limited) {
            if self.btlbw() >= self.full_bw * FULL_BW_GROWTH {
                self.full_bw = self.btlbw();
                self.full_bw_rounds = 0;
            } else {
                self.full_bw_rounds += 1;
                self.filled_pipe = self.full_bw_rounds >= FULL_BW_ROUNDS;
            }
        }
        if self.mode == Mode::Startup && self.filled_pipe {
            self.mode = Mode::Drain;
            self.pacing_gain = 1.0 / HIGH_GAIN;
            self.cwnd_gain = HIGH_GAIN;
        }
        if self.mode == Mode::Drain && ack.pipe <= self.inflight_budget(1.0) {
            self.enter_probe_bw(now);
        }
        let expired = now.saturating_since(self.rtprop_stamp) > RTPROP_WINDOW;
        if let Some(rtt) = ack.rtt {
            if self.rtprop.is_none_or(|r| rtt < r) || expired {
                self.rtprop = Some(rtt);
                self.rtprop_stamp = now;
            }
        }
        if self.mode != Mode::ProbeRtt && expired {
            self.mode = Mode::ProbeRtt;
            self.pacing_gain = 1.0;
            self.cwnd_gain = 1.0;
            self.save_cwnd();
            self.probe_rtt_done = None;
        }
        if self.mode == Mode::ProbeRtt {
            match self.probe_rtt_done {
                None if ack.pipe <= 4 * self.smss => {
                    self.probe_rtt_done = Some(now + PROBE_RTT_TIME);
                    self.probe_rtt_round_done = false;
                    self.next_round_delivered = ack.delivered;
                }
                Some(done) => {
                    self.probe_rtt_round_done |= round_start;
                    if self.probe_rtt_round_done && now > done {
                        self.exit_probe_rtt(now);
                    }
                }
                None => {}
            }
        }
        // The controls: pacing rate and window.
        let rate = PACING_MARGIN * self.pacing_gain * self.btlbw();
        if rate > 0.0 && (self.filled_pipe || rate > self.pacing_rate) {
            self.pacing_rate = rate;
        }
        if self.conserve_until_round.is_some_and(|r| self.round >= r) {
            self.conserve_until_round = None;
        }
        // The window (`bbr_set_cwnd`): nothing changes on an ACK that delivers nothing; what
        // it found lost comes off first.
        let acked = ack.acked_sacked;
        if acked > 0 {
            if ack.losses > 0 {
                self.cwnd = self.cwnd.saturating_sub(ack.losses).max(self.smss);
            }
            let target = self.cwnd_target();
            if self.conserve_until_round.is_some() {
                self.cwnd = self.cwnd.max(ack.pipe + acked);
            } else if self.filled_pipe {
                self.cwnd = (self.cwnd + acked).min(target);
            } else if self.cwnd < target || ack.delivered < self.initial {
                self.cwnd += acked;
            }
            self.cwnd = self.cwnd.max(4 * self.smss);
        }
        if self.mode == Mode::ProbeRtt {
            self.cwnd = self.cwnd.min(4 * self.smss);
        }
    }

    fn on_sack(&mut self, now: Time, ack: &AckEvent) {
        self.on_ack(now, ack);
    }

    fn on_loss(&mut self, _now: Time, loss: &LossEvent) {
        // Packet conservation from what is still in flight (Linux's `tcp_packets_in_flight`).
        self.save_cwnd();
        self.cwnd = loss.pipe + self.smss;
        self.conserve_until_round = Some(self.round + 1);
    }

    fn on_recovery_end(&mut self, _now: Time) {
        self.conserve_until_round = None;
        self.cwnd = self.cwnd.max(self.prior_cwnd);
    }

    fn on_timeout(&mut self, _now: Time, _flight: u64) {
        self.save_cwnd();
        self.cwnd = self.smss;
        self.conserve_until_round = None;
    }

    fn window(&self) -> u64 {
        self.cwnd
    }

    fn ssthresh(&self) -> u64 {
        u64::MAX
    }

    fn pacing_rate(&self) -> Option<f64> {
        Some(self.pacing_rate)
    }

    fn phase(&self) -> &'static str {
        match self.mode {
            Mode::Startup => "startup",
            Mode::Drain => "drain",
            Mode::ProbeBw => "probe_bw",
            Mode::ProbeRtt => "probe_rtt",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(m: u64) -> Time {
        Time::from_millis(m)
    }

    /// 1,000 segments a second: BtlBw of a path that delivers one segment per millisecond.
    const BW: f64 = 1000.0;

    #[test]
    fn an_ack_stream_as_even_as_btlbw_leaves_one_ack_of_allowance() {
        let mut a = AckAggregation::default();
        for i in 0..100 {
            a.update(ms(i), 1, BW, 200, i % 10 == 0, 1);
        }
        // Each ACK finds the epoch's delivery at what BtlBw predicts: a new epoch every time.
        assert_eq!(a.extra(), 1);
    }

    #[test]
    fn a_burst_counts_what_it_delivers_beyond_btlbw_since_the_epoch_began() {
        let mut a = AckAggregation::default();
        // An epoch begins at 0; 20 segments by 5 ms, where BtlBw predicts 5.
        for t in 0..=3 {
            a.update(ms(t), 2, BW, 200, false, 1);
        }
        a.update(ms(5), 12, BW, 200, false, 1);
        assert_eq!(a.extra(), 20 - 5);
        // A silence lets the prediction catch up: the next ACK starts a new epoch, and the
        // maximum stays.
        a.update(ms(40), 3, BW, 200, false, 1);
        assert_eq!(a.extra(), 15);
        // The excess never exceeds the window.
        a.update(ms(40), 30, BW, 12, false, 1);
        assert_eq!(a.extra(), 15);
        a.update(ms(40), 30, BW, 40, false, 1);
        assert_eq!(
            a.extra(),
            40,
            "3 + 30 + 30 delivered at once, capped at cwnd 40"
        );
    }

    #[test]
    fn the_maximum_is_kept_over_two_windows_of_five_round_trips() {
        let mut a = AckAggregation::default();
        a.update(ms(0), 30, BW, 200, false, 1);
        assert_eq!(a.extra(), 30);
        // Four round trips later the first window is still filling; the fifth opens the
        // second window, and the first's maximum still counts.
        let mut t = 100;
        for round in 1..=9 {
            a.update(ms(t), 1, BW, 200, true, 1);
            t += 100;
            assert_eq!(a.extra(), 30, "round {round}");
        }
        // The tenth round trip reopens the first window, forgetting its 30.
        a.update(ms(t), 1, BW, 200, true, 1);
        assert_eq!(a.extra(), 1);
    }

    #[test]
    fn no_ack_without_new_delivery_moves_the_estimate() {
        let mut a = AckAggregation::default();
        a.update(ms(0), 10, BW, 200, false, 1);
        let before = a.clone();
        a.update(ms(1), 0, BW, 200, true, 1);
        assert_eq!(a, before);
    }

    #[test]
    fn an_epoch_of_a_million_segments_restarts() {
        let mut a = AckAggregation::default();
        // A huge burst fills the epoch's counter; the next ACK starts a new epoch however far
        // behind BtlBw the deliveries are.
        a.update(ms(0), ACK_EPOCH_RESET_SEGMENTS - 1, 1.0, u64::MAX, false, 1);
        assert_eq!(a.extra(), ACK_EPOCH_RESET_SEGMENTS - 1);
        a.update(ms(0), 5, 1.0, u64::MAX, true, 1);
        assert_eq!(a.epoch_delivered, 5);
    }
}
