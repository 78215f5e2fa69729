//! Seek: moves the rate while the freshness a faster rate buys outweighs the delay it costs.
//!
//! ACP+ infers the direction to move from the signs of two successive epoch changes, each
//! epoch as short as ten send periods; `docs/ALGORITHMS.md` §8 shows how that misleads it
//! when an epoch is shorter than a round trip (each action is judged by its predecessor's effect)
//! or when service is random (the signs are mostly noise). Seek asks the path directly.
//!
//! - **Dithered sides.** One *cycle* is four epochs: settle and measure at λc·e^{+ε}, then at
//!   λc·e^{−ε} (the order alternates from cycle to cycle, so a drift biases neither side). A
//!   settle epoch lasts at least 1.25 RTT̄, so a measurement sees only updates sent at its own
//!   rate; a measurement lasts at least 2 RTT̄ and 20 send periods and takes the mean RTT̄ over
//!   its in-sequence ACKs.
//! - **The decision.** For periodic updates the time-average age is about the mean delay plus
//!   half a send period. Going from the low side to the high side shortens the half period by
//!   `fresher = 1/(2λ_low) − 1/(2λ_high)` and lengthens the delay by the measured
//!   `slower = RTT_high − RTT_low`; λc moves up if `slower ≤ fresher`, down otherwise. The delay
//!   is far less noisy than the age (it carries neither the sampling nor the loss of updates),
//!   and a freshness term known exactly needs no measurement at all.
//! - **Significance.** Where the delay's noise does not shrink with the rate (an update that
//!   waits for a path's next delivery slot), the freshness gain, shrinking as 1/λ², is soon
//!   smaller than the noise and "down" would win half the time: λc moves down on the slope only
//!   if the cost exceeds the gain by [`MARGIN`] σ_d (σ_d² an EWMA of `slower²` over cycles); the
//!   first cycle, with no σ_d yet, never goes down on the slope (one noisy difference would end
//!   the fast start). Not within [`NEAR_CEILING`] of the ceiling: there the cost is real (a queue
//!   starts), and ignoring it would hold λc at the ceiling until its creep overloaded the path.
//! - **Shared queues.** If the mean delay stands more than half a send period above the base
//!   delay (the least of the last 64 measurements), λc comes down whatever the slope says: an
//!   update would wait longer in the queue than the rate saves it. On a shared bottleneck a
//!   source's own dither barely moves the delay, so the slope misses what its rate costs the
//!   others; this level, the same for every source, brings the fastest down first.
//! - **Steps.** `ln λc` moves by a step that grows ×1.5 while the direction holds and halves
//!   when it turns (resilient back-propagation): decades in a few cycles far from the optimum, a
//!   dither of a few per cent within the flat bottom of the age curve.
//! - **Overload and ceiling.** At the end of any epoch, if ACKs come back slower than updates
//!   leave (λ·Z̄ > 1.02) and either RTT̄ grew as a queue fed at that excess would, or the delay
//!   stands far above the least delay of the last 64 measurements (a full drop-tail queue no
//!   longer grows), the path is overloaded: its delivery rate 1/Z̄ becomes a *ceiling* for the
//!   high side, λc drops under it and the step restarts small. On a D/D/1 path this is what
//!   stops the standing queue ACP+ keeps. Each cycle that ends at the ceiling wanting to go higher
//!   raises it by 0.5 %, so a capacity that grows is found again, slowly (a doubling takes
//!   about 140 cycles; see docs/ALGORITHMS.md §9 for what that costs).
//! - **Window.** On every ACK the rate in force is at most `W/RTT̄`, `W` the updates the path
//!   holds at the side's rate with an empty queue (`λ·D_base`) plus [`WINDOW`] more: when the
//!   bottleneck's capacity collapses, RTT̄ rises with every ACK and the rate falls with it at
//!   once, instead of a round trip or more of updates piling up at the old rate until the
//!   epoch ends. An epoch the window held down is judged at the rate it asked for (it is not a
//!   clamp), and an overload's drain is no deeper than [`DRAIN_FLOOR`] (the window drains the
//!   rest).
//! - **Bounds.** A rate the source clamps (its `[λ_min, λ_max]`) pulls λc back to what is in
//!   force, so a bounded source does not wind λc up beyond its bounds.
//!
//! Per ACK it adds one RTT̄ to a sum while measuring and compares the rate with the window (a
//! multiplication and a division); everything else happens once per epoch.

use super::{Action, Controller, ControllerState, EpochSummary, Estimates};

/// Relative dither ε: the two sides run at λc·e^{±ε}.
pub const DITHER: f64 = 0.05;
/// First step of `ln λc`, and the step after an outage.
pub const STEP_INITIAL: f64 = 0.1;
/// Smallest step of `ln λc`: the dither around the optimum once the sign keeps flipping.
pub const STEP_MIN: f64 = 0.02;
/// Largest step of `ln λc` (a factor of e^0.3 ≈ 1.35 per cycle).
pub const STEP_MAX: f64 = 0.3;
/// Queueing delay (mean delay above the base delay), in half send periods, beyond which λc
/// comes down whatever the slope says.
pub const QUEUE_SHARE: f64 = 1.0;
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
/// Relative rise of the ceiling per cycle that ends at it wanting to go higher.
pub const CEILING_CREEP: f64 = 0.005;
/// A delay above `STANDING·base + STANDING_PERIODS/λ`, with ACKs slower than updates, is a
/// standing queue of our making (a full drop-tail queue no longer grows).
pub const STANDING: f64 = 1.25;
/// The send periods a standing queue holds beyond [`STANDING`] times the base delay.
pub const STANDING_PERIODS: f64 = 4.0;
/// Measurements over which the base delay (the least mean RTT measured) is remembered.
pub const FLOOR_WINDOW: usize = 64;
/// The slope says "down" only for a delay cost above the freshness gain by this many σ_d, the
/// typical size of a cycle's delay difference …
pub const MARGIN: f64 = 2.0;
/// … whose square is an EWMA of the squared differences, with this weight per cycle …
pub const NOISE_WEIGHT: f64 = 0.1;
/// … except within this distance (of `ln λc`) under the highest λc the ceiling allows: next to a
/// rate that overloaded the path, a delay cost is taken at its face value.
pub const NEAR_CEILING: f64 = 0.2;

/// Updates in flight the window allows beyond what the path holds at the side's rate with an
/// empty queue (`λ·D_base`).
pub const WINDOW: f64 = 2.0;
/// The least fraction of the ceiling's rate an overload's drain leaves (`D_base/D` below it
/// would hold the rate far down for many long measurements; the window drains the queue).
pub const DRAIN_FLOOR: f64 = 0.3;

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
    /// Whether λc has had to come down since the start (or the last outage): until then
    /// measurements last [`SETTLE_PERIODS`] send periods at least, not [`MEASURE_PERIODS`].
    found: bool,
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
    /// side stays at or below it, and it creeps up by [`CEILING_CREEP`] each cycle that ends there
    /// wanting to go higher, so that it follows a capacity that grows.
    ceiling: f64,
    /// σ_d²: EWMA of the squared delay differences `slower²` of the cycles so far (`None`
    /// before the first).
    noise: Option<f64>,
    /// The mean RTTs of the last [`FLOOR_WINDOW`] measurements (0 where none yet), a ring.
    delays: [f64; FLOOR_WINDOW],
    /// The ring's next slot.
    next_delay: usize,
    /// RTT̄ when the running measurement began, and how long it is meant to last (s).
    rtt_start: f64,
    epoch_len: f64,
    /// The rate the running epoch asked for (updates/s), and the base delay (s, ∞ before the
    /// first measurement): the window's terms, kept so that an ACK costs no search.
    asked: f64,
    base: f64,
    /// Whether the window holds the rate below `asked` now, and whether it did at any time in
    /// the running epoch.
    holding: bool,
    capped: bool,
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
            found: false,
            phase: Phase::Settle(Side::High),
            first: Side::High,
            high: None,
            low: None,
            rtt_sum: 0.0,
            rtt_count: 0,
            ceiling: f64::INFINITY,
            noise: None,
            delays: [0.0; FLOOR_WINDOW],
            next_delay: 0,
            rtt_start: 0.0,
            epoch_len: 0.0,
            asked: 0.0,
            base: f64::INFINITY,
            holding: false,
            capped: false,
            state: ControllerState::default(),
        }
    }

    fn rate(&self, side: Side) -> f64 {
        self.centre * side.factor()
    }

    /// The highest λc: the one whose high side runs at the ceiling.
    fn highest(&self) -> f64 {
        self.ceiling / Side::High.factor()
    }

    /// Starts watching the epoch that now begins at `rate`: RTT̄ at its start, its length, and an
    /// empty RTT sum.
    fn begin_epoch(&mut self, rtt: f64, rate: f64) {
        self.rtt_start = rtt;
        self.rtt_sum = 0.0;
        self.rtt_count = 0;
        self.asked = rate;
        self.capped = false;
        self.epoch_len = self.length(rtt, rate);
    }

    /// Starts a cycle (its first side settles now) and returns the rate for it.
    fn start_cycle(&mut self) -> f64 {
        self.high = None;
        self.low = None;
        self.phase = Phase::Settle(self.first);
        self.rate(self.first)
    }

    /// The length of the epoch now in `phase` at `rate` (s).
    fn length(&self, rtt: f64, rate: f64) -> f64 {
        let (rtts, periods) = match self.phase {
            Phase::Settle(_) => (SETTLE_RTTS, SETTLE_PERIODS),
            // Until the rate first has to come down, every cycle says "faster": measuring for
            // many send periods would only slow the start on long paths.
            Phase::Measure(_) if !self.found => (MEASURE_RTTS, SETTLE_PERIODS),
            Phase::Measure(_) => (MEASURE_RTTS, MEASURE_PERIODS),
        };
        (rtts * rtt).max(periods / rate)
    }

    /// Whether the epoch now ending ran beyond what the path serves: ACKs came back slower than
    /// updates left (at the rate the epoch asked for, if the window held it down), and either
    /// RTT̄ grew by a quarter of what that excess, queued for the epoch's length, adds (and by at
    /// least half a send period) or the delay stands far above the base.
    fn overloaded(&self, est: &Estimates, delay: f64) -> bool {
        let excess = if self.capped { self.asked } else { est.rate } * est.z;
        let growth = est.rtt - self.rtt_start;
        let growing = growth > (0.25 * (excess - 1.0) * self.epoch_len).max(0.5 / est.rate);
        // A full queue does not grow; it shows as a delay far above the base delay.
        let standing = delay > STANDING * self.base_delay() + STANDING_PERIODS / est.rate;
        excess > OVERLOAD && (growing || standing)
    }

    /// Answers an overload seen with the delay `delay`: the path delivers 1/Z̄ at most, so the
    /// high side goes there, and lower still in the proportion the queue adds to the base delay
    /// (to no less than [`DRAIN_FLOOR`] of it), so that the queue drains within about one round
    /// trip. A new cycle starts; its rate.
    ///
    /// A path that delivers fewer updates than before takes longer to deliver each (its
    /// bottleneck serves an update in about Z̄ now, 1/ceiling before), and so does its empty
    /// queue: the delays remembered for the base rise by the difference. Otherwise the base
    /// would stay that of the faster path for [`FLOOR_WINDOW`] measurements, and the queue
    /// level would read the longer service as a queue and hold the rate far down.
    fn back_off(&mut self, est: &Estimates, delay: f64) -> f64 {
        let drain = (self.base_delay() / delay).clamp(DRAIN_FLOOR, 1.0);
        let slower_service = (est.z - 1.0 / self.ceiling).max(0.0);
        for d in self.delays.iter_mut().filter(|d| **d > 0.0) {
            *d += slower_service;
        }
        self.base = self.base_delay();
        self.ceiling = 1.0 / est.z;
        self.centre = self.highest() * drain;
        self.step = STEP_MIN;
        self.last_dir = -1;
        self.found = true;
        self.state.last_action = Some(Action::Mdec(1));
        self.start_cycle()
    }

    /// The least mean RTT of the last [`FLOOR_WINDOW`] measurements (∞ before the first).
    fn base_delay(&self) -> f64 {
        self.delays
            .iter()
            .copied()
            .filter(|&d| d > 0.0)
            .fold(f64::INFINITY, f64::min)
    }

    /// The mean RTT of the measurement now ending, remembered for the base delay.
    fn take_delay(&mut self, est: &Estimates) -> f64 {
        let delay = if self.rtt_count > 0 {
            self.rtt_sum / f64::from(self.rtt_count)
        } else {
            est.rtt
        };
        self.delays[self.next_delay] = delay;
        self.next_delay = (self.next_delay + 1) % FLOOR_WINDOW;
        self.base = self.base_delay();
        delay
    }

    /// Moves λc after a cycle measured the mean delays `high` and `low`: down if the high side's
    /// extra delay outweighs the freshness it buys by more than its noise (away from the
    /// ceiling) or the queue is crowded, up otherwise, by a
    /// step that grows while the direction holds and halves when it turns; never above
    /// `highest()`.
    fn move_centre(&mut self, high: f64, low: f64) -> Action {
        // Going from the low side to the high side shortens the half period an update waits
        // for its successor by this much …
        let fresher = 0.5 / self.rate(Side::Low) - 0.5 / self.rate(Side::High);
        // … and lengthens the delay by this much.
        let slower = high - low;
        // A queue that makes updates wait longer than half a send period costs more than the
        // rate buys; on a shared bottleneck each source's own slope misses what its rate costs
        // the others, and this level, the same for all, brings the faster ones down first.
        let queueing = 0.5 * (high + low) - self.base_delay();
        let crowded = queueing > QUEUE_SHARE * 0.5 / self.centre;
        // A cost within the noise of the difference is no reason to slow down, unless λc is
        // next to a rate that overloaded the path.
        let near_ceiling = self.centre >= self.highest() * (-NEAR_CEILING).exp();
        let margin = match self.noise {
            _ if near_ceiling => 0.0,
            Some(noise) => MARGIN * noise.sqrt(),
            // The first cycle has no noise to judge its difference by, and one noisy "down"
            // would end the fast start: the slope alone does not bring λc down (the queue
            // level and the overload test still do), and its difference starts σ_d².
            None => f64::INFINITY,
        };
        let dir: i8 = if slower > fresher + margin || crowded {
            -1
        } else {
            1
        };
        let squared = slower * slower;
        self.noise = Some(self.noise.map_or(squared, |n| {
            (1.0 - NOISE_WEIGHT) * n + NOISE_WEIGHT * squared
        }));
        if self.last_dir == dir {
            self.step = (self.step * STEP_GROW).min(STEP_MAX);
        } else if self.last_dir != 0 {
            self.step = (self.step * 0.5).max(STEP_MIN);
        }
        self.last_dir = dir;
        self.found |= dir < 0;
        if dir > 0 && self.centre >= self.highest() * (1.0 - 1e-9) {
            self.ceiling *= 1.0 + CEILING_CREEP;
        }
        self.centre = (self.centre * (f64::from(dir) * self.step).exp()).min(self.highest());
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
        let rate = self.start_cycle();
        self.begin_epoch(est.rtt, rate);
        rate
    }

    fn on_ack(&mut self, est: &Estimates) -> Option<f64> {
        if matches!(self.phase, Phase::Measure(_)) {
            self.rtt_sum += est.rtt;
            self.rtt_count += 1;
        }
        // The window: at most the updates the path holds at the asked rate, and WINDOW more.
        let cap = (self.asked * self.base + WINDOW) / est.rtt;
        if cap < self.asked * 0.99 {
            self.holding = true;
            self.capped = true;
            if (cap / est.rate - 1.0).abs() > 0.01 {
                return Some(cap);
            }
        } else if self.holding {
            self.holding = false;
            return Some(self.asked);
        }
        None
    }

    fn on_epoch(&mut self, _: &EpochSummary, est: &Estimates) -> f64 {
        let (Phase::Settle(side) | Phase::Measure(side)) = self.phase;
        // The source may have clamped the rate asked for: centre on what is in force (a rate
        // the window held down is not a clamp).
        if !self.capped && est.rate > 0.0 && (est.rate / self.rate(side) - 1.0).abs() > 1e-9 {
            self.centre = est.rate / side.factor();
        }
        self.state.last_action = Some(Action::Hold);
        let delay = match self.phase {
            Phase::Settle(_) => est.rtt,
            Phase::Measure(_) => self.take_delay(est),
        };
        let rate = if self.overloaded(est, delay) {
            self.back_off(est, delay)
        } else {
            match self.phase {
                Phase::Settle(side) => {
                    self.phase = Phase::Measure(side);
                    self.rate(side)
                }
                Phase::Measure(side) => {
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
        };
        self.begin_epoch(est.rtt, rate);
        rate
    }

    fn epoch_length(&self, est: &Estimates) -> f64 {
        self.length(est.rtt, est.rate)
    }

    fn restart(&mut self) {
        // The source resumes at a rate of its own: no window until the next epoch asks one.
        self.asked = f64::INFINITY;
        self.holding = false;
        self.step = STEP_INITIAL;
        self.last_dir = 0;
        self.found = false;
        self.state = ControllerState::default();
        self.start_cycle();
    }

    fn scale_rates(&mut self, factor: f64) -> bool {
        self.centre *= factor;
        self.asked *= factor;
        self.ceiling *= factor;
        true
    }

    fn state(&self) -> ControllerState {
        self.state
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RTT: f64 = 0.1;

    fn est(rate: f64, rtt: f64, z: f64) -> Estimates {
        Estimates { rtt, z, rate }
    }

    const ANY: EpochSummary = EpochSummary {
        avg_age: 0.2,
        avg_backlog: 1.0,
    };

    /// A controller that started at λc = 10/s and has just settled its first (high) side.
    fn measuring_high() -> Seek {
        let mut c = Seek::new();
        let r = c.initial_rate(&est(10.0, RTT, RTT));
        let r = c.on_epoch(&ANY, &est(r, RTT, 1.0 / r));
        assert_eq!(c.phase, Phase::Measure(Side::High));
        assert!((r - 10.0 * DITHER.exp()).abs() < 1e-9);
        c
    }

    /// Ends the running measurement after ACKs that each saw RTT̄ = `rtt`, with Z̄ = 1/rate (the
    /// window's answers to them are left aside: the rate in force stays the asked one).
    fn measure(c: &mut Seek, rtt: f64) -> f64 {
        let rate = c.rate(match c.phase {
            Phase::Settle(s) | Phase::Measure(s) => s,
        });
        let e = est(rate, rtt, 1.0 / rate);
        for _ in 0..10 {
            c.on_ack(&e);
        }
        c.on_epoch(&ANY, &e)
    }

    /// Runs the rest of a cycle whose high side measured `high` and low side `low` (s of RTT).
    fn cycle(c: &mut Seek, high: f64, low: f64) {
        let (a, b) = match c.first {
            Side::High => (high, low),
            Side::Low => (low, high),
        };
        if matches!(c.phase, Phase::Settle(_)) {
            measure(c, a);
        }
        measure(c, a);
        measure(c, b);
        measure(c, b);
    }

    #[test]
    fn a_cycle_settles_and_measures_each_side_then_moves() {
        let mut c = measuring_high();
        // Measure high → settle low → measure low → next cycle starts with the low side.
        let r = measure(&mut c, RTT);
        assert_eq!(c.phase, Phase::Settle(Side::Low));
        assert!((r - 10.0 * (-DITHER).exp()).abs() < 1e-9);
        measure(&mut c, RTT);
        assert_eq!(c.phase, Phase::Measure(Side::Low));
        let r = measure(&mut c, RTT);
        // Same delay on both sides: the faster rate is fresher for free, so λc rises.
        assert_eq!(c.state().last_action, Some(Action::Inc));
        assert_eq!(c.phase, Phase::Settle(Side::Low));
        let centre = 10.0 * STEP_INITIAL.exp();
        assert!((c.centre - centre).abs() < 1e-9);
        assert!((r - centre * (-DITHER).exp()).abs() < 1e-9);
        assert!((c.state().target - STEP_INITIAL).abs() < 1e-12);
    }

    #[test]
    fn decisions_and_steps() {
        // λc = 10/s: fresher = 1/(2·9.512) − 1/(2·10.513) ≈ 5.0 ms.
        struct Row {
            name: &'static str,
            slower: f64,
            last_dir: i8,
            step: f64,
            action: Action,
            step_after: f64,
        }
        #[rustfmt::skip]
        let rows = [
            Row { name: "no delay cost, first move", slower: 0.0, last_dir: 0, step: STEP_INITIAL, action: Action::Inc, step_after: STEP_INITIAL },
            Row { name: "cost below the gain", slower: 0.004, last_dir: 1, step: 0.1, action: Action::Inc, step_after: 0.1 * STEP_GROW },
            Row { name: "cost above the gain", slower: 0.006, last_dir: 1, step: 0.1, action: Action::Dec, step_after: 0.05 },
            Row { name: "down again grows", slower: 0.05, last_dir: -1, step: 0.1, action: Action::Dec, step_after: 0.1 * STEP_GROW },
            Row { name: "growth is capped", slower: 0.05, last_dir: -1, step: STEP_MAX, action: Action::Dec, step_after: STEP_MAX },
            Row { name: "halving is floored", slower: 0.0, last_dir: -1, step: STEP_MIN, action: Action::Inc, step_after: STEP_MIN },
        ];
        for r in rows {
            let mut c = measuring_high();
            // Past the first cycle, with no noise: the slope alone decides.
            c.noise = Some(0.0);
            c.last_dir = r.last_dir;
            c.step = r.step;
            cycle(&mut c, RTT + r.slower, RTT);
            assert_eq!(c.state().last_action, Some(r.action), "{}", r.name);
            assert!(
                (c.step - r.step_after).abs() < 1e-12,
                "{}: step {}",
                r.name,
                c.step
            );
            let dir = if r.action == Action::Inc { 1.0 } else { -1.0 };
            let want = 10.0 * (dir * r.step_after).exp();
            assert!(
                (c.centre - want).abs() < 1e-9,
                "{}: λc {}",
                r.name,
                c.centre
            );
        }
    }

    #[test]
    fn the_slope_needs_a_cost_beyond_its_noise_away_from_the_ceiling() {
        // λc = 10/s: fresher ≈ 5.0 ms; σ_d = 4 ms, so away from the ceiling the cost must
        // exceed 5.0 + 2·4 = 13.0 ms.
        struct Row {
            name: &'static str,
            slower: f64,
            /// `ln` of the highest λc the ceiling allows over λc (∞: no ceiling).
            headroom: f64,
            action: Action,
        }
        #[rustfmt::skip]
        let rows = [
            Row { name: "cost within the noise", slower: 0.012, headroom: f64::INFINITY, action: Action::Inc },
            Row { name: "cost beyond the noise", slower: 0.0135, headroom: f64::INFINITY, action: Action::Dec },
            Row { name: "within the noise, ceiling far", slower: 0.012, headroom: 0.3, action: Action::Inc },
            Row { name: "next to the ceiling: no margin", slower: 0.006, headroom: 0.1, action: Action::Dec },
            Row { name: "next to the ceiling, cost below the gain", slower: 0.004, headroom: 0.1, action: Action::Inc },
        ];
        for r in rows {
            let mut c = measuring_high();
            c.noise = Some(0.004 * 0.004);
            c.ceiling = 10.0 * (r.headroom + DITHER).exp();
            cycle(&mut c, RTT + r.slower, RTT);
            assert_eq!(c.state().last_action, Some(r.action), "{}", r.name);
            let noise = (1.0 - NOISE_WEIGHT) * 0.004 * 0.004 + NOISE_WEIGHT * r.slower * r.slower;
            assert!((c.noise.unwrap() - noise).abs() < 1e-15, "{}", r.name);
        }
        // The first cycle has no noise to go by: however large its cost, the slope does not
        // bring λc down (the fast start goes on), and its difference starts σ_d². The next
        // cycle (λc = 10·e^0.1/s, fresher ≈ 4.5 ms) judges by it: a cost of 25 ms is within
        // 4.5 + 2·20 ms, one of 50 ms beyond.
        for (second, action) in [(0.025, Action::Inc), (0.05, Action::Dec)] {
            let mut c = measuring_high();
            cycle(&mut c, RTT + 0.02, RTT);
            assert_eq!(c.state().last_action, Some(Action::Inc));
            assert!(!c.found);
            assert!((c.noise.unwrap() - 0.02 * 0.02).abs() < 1e-15);
            cycle(&mut c, RTT + second, RTT);
            assert_eq!(c.state().last_action, Some(action), "second cost {second}");
        }
        // Next to a ceiling the first cycle's cost counts at its face value, as in any cycle.
        let mut c = measuring_high();
        c.ceiling = 10.0 * (0.1 + DITHER).exp();
        cycle(&mut c, RTT + 0.006, RTT);
        assert_eq!(c.state().last_action, Some(Action::Dec));
        // A queue beyond half a period brings λc down in the first cycle too.
        // (An earlier measurement put the base delay at RTT.)
        let mut c = measuring_high();
        c.delays[FLOOR_WINDOW - 1] = RTT;
        cycle(&mut c, RTT + 0.06, RTT + 0.06);
        assert_eq!(c.state().last_action, Some(Action::Dec));
    }

    #[test]
    fn a_queue_longer_than_half_a_period_brings_the_rate_down() {
        // λc = 10/s: half a period is 50 ms. Base delay 0.1 s from the first cycle.
        for (queue, action) in [(0.049, Action::Inc), (0.051, Action::Dec)] {
            let mut c = measuring_high();
            cycle(&mut c, RTT, RTT);
            c.last_dir = 0;
            c.centre = 10.0;
            cycle(&mut c, RTT + queue, RTT + queue);
            assert_eq!(c.state().last_action, Some(action), "queue {queue}");
        }
    }

    #[test]
    fn overload_sets_a_ceiling_that_creeps_up() {
        struct Row {
            name: &'static str,
            /// Z̄ as a multiple of the send period, RTT̄ at the end of the measurement.
            z_periods: f64,
            rtt_end: f64,
            overload: bool,
        }
        #[rustfmt::skip]
        let rows = [
            // ACKs 20 % slower than sends and RTT̄ up by 10 periods: overload.
            Row { name: "growing queue", z_periods: 1.2, rtt_end: RTT + 1.0, overload: true },
            // Slow ACKs, but RTT̄ neither grew nor stands above an earlier base: no overload.
            Row { name: "no queue", z_periods: 1.2, rtt_end: RTT, overload: false },
            // ACKs as fast as sends: whatever the delay does, no overload.
            Row { name: "keeping up", z_periods: 1.0, rtt_end: RTT + 1.0, overload: false },
            // Slower ACKs (loss) but no queue: no overload.
            Row { name: "loss only", z_periods: 1.2, rtt_end: RTT + 0.001, overload: false },
        ];
        for r in rows {
            let mut c = measuring_high();
            let rate = c.rate(Side::High);
            let e = est(rate, r.rtt_end, r.z_periods / rate);
            c.on_ack(&e);
            let next = c.on_epoch(&ANY, &e);
            assert_eq!(
                c.state().last_action == Some(Action::Mdec(1)),
                r.overload,
                "{}",
                r.name
            );
            if r.overload {
                assert!((c.ceiling - rate / r.z_periods).abs() < 1e-9, "{}", r.name);
                assert!(
                    (next - c.ceiling).abs() < 1e-9,
                    "{}: high side at the ceiling",
                    r.name
                );
                assert_eq!((c.step, c.last_dir), (STEP_MIN, -1), "{}", r.name);
            } else {
                assert_eq!(c.ceiling, f64::INFINITY, "{}", r.name);
            }
        }
        // A delay far above the base delay of earlier measurements, with slow ACKs: standing.
        let mut c = measuring_high();
        measure(&mut c, RTT);
        measure(&mut c, RTT);
        measure(&mut c, RTT);
        let rate = c.rate(Side::High);
        c.rtt_start = 0.5;
        let e = est(rate, 0.5, 1.2 / rate);
        c.on_ack(&e);
        c.on_epoch(&ANY, &e);
        assert_eq!(c.state().last_action, Some(Action::Mdec(1)), "standing");
        // The high side goes to the ceiling scaled by base delay / delay = 0.1 / 0.5, to drain,
        // but no lower than DRAIN_FLOOR of it.
        let drained = c.highest() * DRAIN_FLOOR;
        assert!((c.centre - drained).abs() < 1e-9, "{}", c.centre);
        // At the ceiling, each cycle with no delay cost raises it by 0.5 %; λc stays under it.
        c.centre = c.highest();
        let ceiling = c.ceiling;
        cycle(&mut c, RTT, RTT);
        assert!((c.ceiling / ceiling - 1.005).abs() < 1e-9);
        cycle(&mut c, RTT, RTT);
        assert!((c.ceiling / ceiling - 1.005 * 1.005).abs() < 1e-9);
        assert!((c.centre - c.highest()).abs() < 1e-9);
        // A cycle that wants to go lower leaves it alone.
        cycle(&mut c, RTT + 1.0, RTT);
        assert!((c.ceiling / ceiling - 1.005 * 1.005).abs() < 1e-9);
        assert_eq!(c.state().last_action, Some(Action::Dec));
    }

    #[test]
    fn a_slower_path_raises_the_base_delay_by_its_longer_service() {
        // Overloads the high side with ACKs `z` apart and RTT̄ far above the base (standing).
        fn overload(c: &mut Seek, z: f64) {
            c.phase = Phase::Measure(Side::High);
            c.begin_epoch(0.5, c.rate(Side::High));
            let e = est(c.rate(Side::High), 0.5, z);
            c.on_ack(&e);
            c.on_epoch(&ANY, &e);
            assert_eq!(c.state().last_action, Some(Action::Mdec(1)));
        }
        let mut c = measuring_high();
        cycle(&mut c, RTT, RTT);
        assert!((c.base_delay() - RTT).abs() < 1e-12);
        // First overload (no ceiling before): an update now takes Z̄ = 50 ms to serve.
        c.centre = 100.0;
        overload(&mut c, 0.05);
        assert!((c.base_delay() - (RTT + 0.05)).abs() < 1e-12);
        assert!((c.ceiling - 20.0).abs() < 1e-9);
        // Slower still (Z̄ = 80 ms): the base rises by the 30 ms difference.
        c.centre = 30.0;
        overload(&mut c, 0.08);
        assert!((c.base_delay() - (RTT + 0.08)).abs() < 1e-12);
        // Faster delivery than the ceiling: the base stays.
        c.centre = 30.0;
        overload(&mut c, 0.04);
        assert!((c.base_delay() - (RTT + 0.08)).abs() < 1e-12);
        // At the slower path's empty-queue delay the queue level does not hold the rate down:
        // λc = 10/s, half a period is 50 ms, and the delay is 80 ms above the first base.
        c.centre = 10.0;
        c.ceiling = f64::INFINITY;
        c.last_dir = 0;
        cycle(&mut c, RTT + 0.08, RTT + 0.08);
        assert_eq!(c.state().last_action, Some(Action::Inc));
    }

    #[test]
    fn the_window_holds_the_rate_to_what_the_path_carries_per_ack() {
        // Base delay 0.1 s at λc = 100/s: the path holds 10.5 updates at the high side's rate,
        // the window 12.5.
        let mut c = measuring_high();
        cycle(&mut c, RTT, RTT);
        assert!((c.base - RTT).abs() < 1e-12);
        c.centre = 100.0;
        c.phase = Phase::Measure(Side::High);
        let high = c.rate(Side::High);
        c.begin_epoch(RTT, high);
        let w = high * RTT + WINDOW;
        // A short queue (RTT̄ 0.11 s) is within the window: nothing changes.
        assert_eq!(c.on_ack(&est(high, 0.11, 1.0 / high)), None);
        // The capacity collapses: RTT̄ 0.5 s; the rate falls to W/RTT̄ on this ACK.
        let held = c.on_ack(&est(high, 0.5, 0.05)).expect("held");
        assert!((held - w / 0.5).abs() < 1e-9, "{held}");
        // Within 1 % of the rate in force already: no new rate.
        assert_eq!(c.on_ack(&est(held, 0.502, 0.05)), None);
        // RTT̄ back to the base: the asked rate returns, once.
        assert_eq!(c.on_ack(&est(held, RTT, 0.01)), Some(high));
        assert_eq!(c.on_ack(&est(high, RTT, 0.01)), None);
        // The epoch was held down: judged at the asked rate (ACKs 50 ms apart against 9.5 ms
        // sent: an overload, the delay of 1 s standing far above the base), not re-centred on
        // `held` as a clamp would be.
        c.rtt_start = 1.0;
        c.rtt_sum = 1.0;
        c.rtt_count = 1;
        c.on_epoch(&ANY, &est(held, 1.0, 0.05));
        assert_eq!(c.state().last_action, Some(Action::Mdec(1)));
        assert!((c.ceiling - 20.0).abs() < 1e-9);
        // The drain (base 0.15 s after the slower service, delay 1 s) is floored at 0.3.
        assert!(
            (c.centre - c.highest() * DRAIN_FLOOR).abs() < 1e-9,
            "{}",
            c.centre
        );
        // After an outage no window applies until an epoch asks a rate.
        c.restart();
        assert_eq!(c.on_ack(&est(5.0, 10.0, 0.2)), None);
    }

    #[test]
    fn a_clamped_rate_recentres_and_restart_keeps_the_centre() {
        let mut c = measuring_high();
        // The source held the rate at 5/s (its λ_max): λc follows.
        c.on_epoch(&ANY, &est(5.0, RTT, 0.2));
        assert!((c.centre - 5.0 / DITHER.exp()).abs() < 1e-9);
        c.step = STEP_MAX;
        c.last_dir = 1;
        c.found = true;
        c.restart();
        assert_eq!((c.step, c.last_dir, c.found), (STEP_INITIAL, 0, false));
        assert_eq!(c.phase, Phase::Settle(c.first));
        assert!((c.centre - 5.0 / DITHER.exp()).abs() < 1e-9);
        assert_eq!(c.name(), "seek");
        // Epoch lengths: settle max(1.25 RTT̄, 2 periods); measure max(2 RTT̄, 2 periods) until
        // the rate first had to come down, then max(2 RTT̄, 20 periods).
        assert!((c.epoch_length(&est(100.0, RTT, 0.01)) - 0.125).abs() < 1e-12);
        assert!((c.epoch_length(&est(10.0, RTT, 0.1)) - 0.2).abs() < 1e-12);
        c.phase = Phase::Measure(Side::Low);
        assert!((c.epoch_length(&est(50.0, RTT, 0.02)) - 0.2).abs() < 1e-12);
        assert!((c.epoch_length(&est(5.0, RTT, 0.2)) - 0.4).abs() < 1e-12);
        c.found = true;
        assert!((c.epoch_length(&est(100.0, RTT, 0.01)) - 0.2).abs() < 1e-12);
        assert!((c.epoch_length(&est(50.0, RTT, 0.02)) - 0.4).abs() < 1e-12);
        // A move down is what ends the fast start.
        let mut d = measuring_high();
        d.noise = Some(0.0);
        cycle(&mut d, RTT + 1.0, RTT);
        assert!(d.found);
    }
}
