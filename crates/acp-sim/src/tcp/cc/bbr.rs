//! BBR v1 (draft-cardwell-iccrg-bbr-congestion-control-00).
//!
//! BBR models the path by two numbers: BtlBw, the windowed maximum of the delivery-rate samples
//! over the last 10 round trips (application-limited samples count only when they raise it), and
//! RTprop, the minimum RTT over the last 10 s (refreshed by a smaller sample, or any sample
//! once it is 10 s old, as Linux's `tcp_bbr.c`). It paces at `pacing_gain · BtlBw` less
//! Linux's 1 % margin (`bbr_pacing_margin_percent`) and caps the data in flight at
//! `cwnd_gain · BtlBw · RTprop` plus Linux's quantization budget — three TSO bursts of two
//! segments (`bbr_tso_segs_goal` at the rates of this model's links), two more in the 5/4 phase
//! — never below four segments. Its states:
//! - **Startup**: gains 2/ln 2 ≈ 2.885 until BtlBw has grown by less than 25 % for three
//!   round trips in a row (the pipe is full);
//! - **Drain**: pacing gain 1/2.885 until the data in flight falls to one BDP;
//! - **ProbeBW**: cwnd gain 2 and pacing gains cycling through 5/4, 3/4, 1, 1, 1, 1, 1, 1, a
//!   phase per RTprop (the 5/4 phase also lasts until a BDP·5/4 is in flight, the 3/4 phase
//!   ends early once a BDP or less is); the first phase is drawn at random, never 3/4;
//! - **ProbeRTT**: when RTprop is 10 s old, the window drops to four segments for at least
//!   200 ms and a round trip, then the previous window comes back.
//!
//! Losses: fast recovery starts from the data in flight plus one segment (packet conservation
//! for its first round trip, then the model's window); a timeout leaves one segment; both save
//! the window, which the end of recovery restores. The pacing rate starts at 2.885 times the
//! initial window per millisecond (no RTT sample yet), and never falls before the pipe is
//! full.

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
/// Segments of a TSO burst (Linux's `bbr_tso_segs_goal`, two above 1.2 Mbit/s of pacing).
const TSO_SEGS: u64 = 2;

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
    rng: Rng,
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
        let probing = self.mode == Mode::ProbeBw && self.cycle_index == 0;
        self.inflight(gain) + (3 * TSO_SEGS + 2 * u64::from(probing)) * self.smss
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
        }
        let prior_inflight = ack.flight + ack.acked;
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
        if self.mode == Mode::Drain && ack.flight <= self.inflight_budget(1.0) {
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
                None if ack.flight <= 4 * self.smss => {
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
        let target = self.inflight_budget(self.cwnd_gain);
        if self.conserve_until_round.is_some() {
            self.cwnd = self.cwnd.max(ack.flight + ack.acked);
        } else if self.filled_pipe {
            self.cwnd = (self.cwnd + ack.acked).min(target);
        } else if self.cwnd < target || ack.delivered < self.initial {
            self.cwnd += ack.acked;
        }
        self.cwnd = self.cwnd.max(4 * self.smss);
        if self.mode == Mode::ProbeRtt {
            self.cwnd = self.cwnd.min(4 * self.smss);
        }
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
