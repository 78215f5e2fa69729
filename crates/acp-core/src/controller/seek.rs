//! Seek: finds the bottom of the age-versus-rate curve by measuring its slope.
//!
//! ACP+ infers the direction to move from the signs of two successive epoch changes, each
//! epoch as short as ten send periods; `docs/ALGORITHMS.md` §8 shows how that misleads it
//! when an epoch is shorter than a round trip (each action is judged by its predecessor's effect)
//! or when service is random (the signs are mostly noise). Seek asks the path directly: it runs
//! the rate a little above and a little below a centre rate λc, each long enough to be measured
//! on its own, and moves λc towards the side with the lower age.
//!
//! One *cycle* is four epochs: settle and measure on one side (λc·e^{±ε}), then settle and
//! measure on the other. A settle epoch lasts until the updates sent at the new rate are being
//! acknowledged (at least one RTT̄), so a measurement sees only its own rate; its averages are
//! discarded. The sides alternate order from cycle to cycle, so a slow drift of the path (or of
//! other sources) biases neither side.
//!
//! From the two measurements Seek takes the *elasticity* of age with respect to rate,
//! `e = (Δ̄_high − Δ̄_low) / (2ε · (Δ̄_high + Δ̄_low)/2)`, and moves `ln λc` against its sign by a
//! step that grows while the sign stays the same and halves when it flips (resilient
//! back-propagation, "Rprop"): far from the optimum it covers decades in a few cycles, near it the
//! step shrinks to a small floor and λc dithers within the flat bottom of the curve. The
//! magnitude of `e` is not used, so neither the scale of ages nor noise in a single measurement
//! can throw λc far.
//!
//! A rate the source clamps (its `[λ_min, λ_max]`) pulls λc back to what is in force, so a
//! bounded source does not wind λc up beyond its bounds.

use super::{Action, Controller, ControllerState, EpochSummary, Estimates};

/// Relative dither ε: the two sides run at λc·e^{±ε}.
pub const DITHER: f64 = 0.05;
/// First step of `ln λc`, and the step after an outage.
pub const STEP_INITIAL: f64 = 0.1;
/// Smallest step of `ln λc`: the dither around the optimum once the sign keeps flipping.
pub const STEP_MIN: f64 = 0.02;
/// Largest step of `ln λc` (a factor of e^0.3 ≈ 1.35 per cycle).
pub const STEP_MAX: f64 = 0.3;
/// Growth of the step while the direction holds.
pub const STEP_GROW: f64 = 1.5;
/// Settle epochs last at least this many RTT̄ …
pub const SETTLE_RTTS: f64 = 1.25;
/// … and at least this many send periods.
pub const SETTLE_PERIODS: f64 = 2.0;
/// Measurement epochs last at least this many RTT̄ …
pub const MEASURE_RTTS: f64 = 2.0;
/// … and at least this many send periods.
pub const MEASURE_PERIODS: f64 = 20.0;
/// A side whose send rate exceeds the rate ACKs come back (1/Z̄) by more than this factor, while
/// RTT̄ grew over its measurement as a queue fed at that excess would, is beyond what the path
/// serves.
pub const OVERLOAD: f64 = 1.02;
/// Relative rise of the ceiling per cycle spent at it without overload.
pub const CEILING_CREEP: f64 = 0.005;

/// Which side of λc an epoch runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    High,
    Low,
}

impl Side {
    fn other(self) -> Side {
        match self {
            Side::High => Side::Low,
            Side::Low => Side::High,
        }
    }

    /// `e^{±ε}`.
    fn factor(self) -> f64 {
        match self {
            Side::High => DITHER.exp(),
            Side::Low => (-DITHER).exp(),
        }
    }
}

/// Where in its cycle the controller is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Settle(Side),
    Measure(Side),
}

/// The Seek controller (see the module documentation).
#[derive(Debug, Clone)]
pub struct Seek {
    /// λc (updates/s); 0 before the first rate is chosen.
    centre: f64,
    /// Current step of `ln λc`.
    step: f64,
    /// Direction of the last move: +1 up, −1 down, 0 none yet.
    last_dir: i8,
    /// The epoch now running.
    phase: Phase,
    /// Which side this cycle measures first.
    first: Side,
    /// Mean RTT measured on the high and low sides in this cycle (s).
    high: Option<f64>,
    low: Option<f64>,
    /// Sum and count of RTT̄ over the in-sequence ACKs of the running measurement.
    rtt_sum: f64,
    rtt_count: u32,
    /// The rate the path delivered when Seek last overloaded it (updates/s; ∞ before): the high
    /// side stays at or below it, and it creeps up by [`CEILING_CREEP`] each cycle the high side
    /// spends there without overloading the path, so that it follows a capacity that grows.
    ceiling: f64,
    /// RTT̄ when the running measurement began, and how long it is meant to last (s).
    rtt_start: f64,
    measure_len: f64,
    state: ControllerState,
}

impl Default for Seek {
    fn default() -> Self {
        Seek::new()
    }
}

impl Seek {
    /// A Seek controller with the published constants of this module.
    pub fn new() -> Self {
        Seek {
            centre: 0.0,
            step: STEP_INITIAL,
            last_dir: 0,
            phase: Phase::Settle(Side::High),
            first: Side::High,
            high: None,
            low: None,
            rtt_sum: 0.0,
            rtt_count: 0,
            ceiling: f64::INFINITY,
            rtt_start: 0.0,
            measure_len: 0.0,
            state: ControllerState::default(),
        }
    }

    fn rate(&self, side: Side) -> f64 {
        self.centre * side.factor()
    }

    /// Starts a cycle (its first side settles now) and returns the rate for it.
    fn start_cycle(&mut self) -> f64 {
        self.high = None;
        self.low = None;
        self.phase = Phase::Settle(self.first);
        self.rate(self.first)
    }

    /// Whether the measurement now ending ran beyond what the path serves: ACKs came back slower
    /// than updates left, and RTT̄ grew by at least half of what that excess, queued for the
    /// measurement's length, adds (and by at least half a send period).
    fn overloaded(&self, est: &Estimates) -> bool {
        let excess = est.rate * est.z;
        let growth = est.rtt - self.rtt_start;
        excess > OVERLOAD && growth > (0.5 * (excess - 1.0) * self.measure_len).max(0.5 / est.rate)
    }

    /// Moves λc after a cycle measured `high` and `low`: against the sign of the elasticity, by a
    /// step that grows while the direction holds and halves when it turns.
    fn move_centre(&mut self, high: f64, low: f64) -> Action {
        // Going from the low side to the high side shortens the half period an update waits
        // for its successor by this much …
        let fresher = 0.5 / self.rate(Side::Low) - 0.5 / self.rate(Side::High);
        // … and lengthens the delay by this much.
        let slower = high - low;
        let dir: i8 = if slower > fresher { -1 } else { 1 };
        if self.last_dir == dir {
            self.step = (self.step * STEP_GROW).min(STEP_MAX);
        } else if self.last_dir != 0 {
            self.step = (self.step * 0.5).max(STEP_MIN);
        }
        self.last_dir = dir;
        let highest = self.ceiling / Side::High.factor();
        if self.centre >= highest * (1.0 - 1e-9) {
            self.ceiling *= 1.0 + CEILING_CREEP;
        }
        self.centre = (self.centre * (f64::from(dir) * self.step).exp()).min(highest);
        self.state.target = f64::from(dir) * self.step;
        if dir > 0 {
            Action::Inc
        } else {
            Action::Dec
        }
    }
}

impl Controller for Seek {
    fn name(&self) -> String {
        "seek".into()
    }

    fn initial_rate(&mut self, est: &Estimates) -> f64 {
        self.centre = 1.0 / est.rtt;
        self.start_cycle()
    }

    fn on_ack(&mut self, est: &Estimates) -> Option<f64> {
        if matches!(self.phase, Phase::Measure(_)) {
            self.rtt_sum += est.rtt;
            self.rtt_count += 1;
        }
        None
    }

    fn on_epoch(&mut self, _summary: &EpochSummary, est: &Estimates) -> f64 {
        let side = match self.phase {
            Phase::Settle(side) | Phase::Measure(side) => side,
        };
        // The source may have clamped the rate asked for: centre on what is in force.
        if est.rate > 0.0 && (est.rate / self.rate(side) - 1.0).abs() > 1e-9 {
            self.centre = est.rate / side.factor();
        }
        self.state.last_action = Some(Action::Hold);
        match self.phase {
            Phase::Settle(side) => {
                self.phase = Phase::Measure(side);
                self.rtt_start = est.rtt;
                self.rtt_sum = 0.0;
                self.rtt_count = 0;
                let rate = self.rate(side);
                self.measure_len = (MEASURE_RTTS * est.rtt).max(MEASURE_PERIODS / rate);
                rate
            }
            Phase::Measure(_) if self.overloaded(est) => {
                // Overload: the path delivers 1/Z̄ at most; put the high side there.
                self.ceiling = 1.0 / est.z;
                self.centre = self.ceiling / Side::High.factor();
                self.step = STEP_MIN;
                self.last_dir = -1;
                self.state.last_action = Some(Action::Mdec(1));
                self.start_cycle()
            }
            Phase::Measure(side) => {
                let delay = if self.rtt_count > 0 {
                    self.rtt_sum / f64::from(self.rtt_count)
                } else {
                    est.rtt
                };
                match side {
                    Side::High => self.high = Some(delay),
                    Side::Low => self.low = Some(delay),
                }
                if let (Some(high), Some(low)) = (self.high, self.low) {
                    self.state.last_action = Some(self.move_centre(high, low));
                    self.first = self.first.other();
                    self.start_cycle()
                } else {
                    self.phase = Phase::Settle(side.other());
                    self.rate(side.other())
                }
            }
        }
    }

    fn epoch_length(&self, est: &Estimates) -> f64 {
        let (rtts, periods) = match self.phase {
            Phase::Settle(_) => (SETTLE_RTTS, SETTLE_PERIODS),
            Phase::Measure(_) => (MEASURE_RTTS, MEASURE_PERIODS),
        };
        (rtts * est.rtt).max(periods / est.rate)
    }

    fn restart(&mut self) {
        self.step = STEP_INITIAL;
        self.last_dir = 0;
        self.state = ControllerState::default();
        self.start_cycle();
    }

    fn state(&self) -> ControllerState {
        self.state
    }
}
