//! The inner–outer nonlinear controller (aggregation thesis §5.4, Algorithm 2): it drives the
//! send rates to the proportional-fair low-delay allocation ([`super::pf_allocation`]) without
//! knowing the channel-access overhead `c` in advance.
//!
//! Once per slot, with station 1 the one with the lowest PHY rate and w_i = (l + l_oh)/μ_R_i:
//!
//! - inner loop: z_i ← z_i + K₁(N_target,i − μ̃_N_i), kept in [1, N̄] (5.45);
//!   ĉ ← (1 − β)ĉ + β·(μ̃_N1/x₁)(1 − wᵀx) (5.40); x_i = z_i/(ĉ + wᵀz) (5.46);
//! - outer loop: v ← max{v + K₂(min{T̄·x₁, N̄} − v), 1} (5.43);
//!   N_target,i = v·w₁/w_i, kept in [1, N̄] (5.44).
//!
//! The inner loop is stable for K₁·c̃/ĉ < 2 (§5.4.1.3), the outer for 0 < K₂ < 1 (Lemma 2).
//! Defaults are the thesis' (Fig. 5.11): K₁ = 0.5, K₂ = 0.2, β = 0.05, T̄ = 5 ms, N̄ = 32,
//! ĉ₀ = 200 µs, Δ = 1 s. The controller starts from z = v = N_target = 1.
//!
//! [`InnerOuter`] serves any number of stations. [`InnerOuterControl`] is the [`Controller`] of
//! one station's flow, fed by that receiver's [`AggregationReport`]s, which must carry the PHY
//! rate (a slot reported without it keeps the rate). [`InnerOuterControl::group`] makes the
//! controllers of one sender that feeds n stations, one per station's flow, all sharing one
//! [`InnerOuter`]: the thesis's Algorithm 2, one controller at the sender setting every station's
//! rate (seed lines 1214–1233). [`InnerOuterControl::new`] is its n = 1 case.
//!
//! How the flows share it: at the end of its epoch (Δ) each flow hands in the mean of the slots
//! its station reported and the rate it sent at. Once every station has handed one in since the
//! last step, the flow that completes the set steps [`InnerOuter`] with all of them and takes its
//! own new rate; each other flow takes its new rate at its next ACK ([`Controller::on_ack`]), so a
//! rate reaches its flow within one feedback interval, not one epoch. A station that hands in
//! twice before the others keeps its newer slot. The flows' epochs are Δ long each, so the core
//! steps about once per Δ; a station that never reports (no frames, or no PHY rate) holds every
//! rate where it is (each flow keeps the rate in force).
//!
//! [`AggregationReport`]: crate::wire::AggregationReport

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::wire::FeedbackItem;

use super::aggregation::SlotMeans;
use super::aggregation_model::{dot, inverse, MPDU_BITS};
use super::airtime::StationSlot;
use super::{Controller, EpochSummary, Estimates};

/// Parameters of Algorithm 2.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct InnerOuterParams {
    /// Inner-loop gain K₁.
    pub k1: f64,
    /// Outer-loop gain K₂.
    pub k2: f64,
    /// Weight β of the newest sample in the estimate ĉ.
    pub beta: f64,
    /// Delay target T̄ (s).
    pub t_bar: f64,
    /// Aggregation level cap N̄.
    pub n_bar: f64,
    /// Initial estimate ĉ of the round overhead (s).
    pub c_init: f64,
    /// Slot length Δ (s).
    pub delta: f64,
}

impl Default for InnerOuterParams {
    fn default() -> Self {
        InnerOuterParams {
            k1: 0.5,
            k2: 0.2,
            beta: 0.05,
            t_bar: 5e-3,
            n_bar: 32.0,
            c_init: 200e-6,
            delta: 1.0,
        }
    }
}

/// Algorithm 2's state for a fixed set of stations.
#[derive(Debug, Clone)]
pub struct InnerOuter {
    p: InnerOuterParams,
    z: Vec<f64>,
    target: Vec<f64>,
    v: f64,
    c_hat: f64,
}

impl InnerOuter {
    /// Algorithm 2 for `stations` stations.
    pub fn new(p: InnerOuterParams, stations: usize) -> Self {
        InnerOuter {
            p,
            z: vec![1.0; stations],
            target: vec![1.0; stations],
            v: 1.0,
            c_hat: p.c_init,
        }
    }

    /// One slot: what each station measured while it was sent `rates` (packets/s), in; the rates
    /// for the next slot, out. Slices of another length than the station count leave the state
    /// alone and return `rates` unchanged.
    pub fn step(&mut self, measured: &[StationSlot], rates: &[f64]) -> Vec<f64> {
        let n = self.z.len();
        if measured.len() != n || rates.len() != n || n == 0 {
            return rates.to_vec();
        }
        let p = self.p;
        let w: Vec<f64> = measured.iter().map(|s| MPDU_BITS / s.phy_rate).collect();
        // Station 1 of the thesis: the lowest PHY rate, largest w.
        let slow = (0..n).fold(0, |b, i| if w[i] > w[b] { i } else { b });
        for ((z, target), m) in self.z.iter_mut().zip(&self.target).zip(measured) {
            *z = (*z + p.k1 * (target - m.level)).clamp(1.0, p.n_bar);
        }
        if rates[slow] > 0.0 {
            let sample = measured[slow].level / rates[slow] * (1.0 - dot(&w, rates));
            self.c_hat = (1.0 - p.beta) * self.c_hat + p.beta * sample.max(0.0);
        }
        let x = inverse(self.c_hat, &w, &self.z);
        self.v = (self.v + p.k2 * ((p.t_bar * x[slow]).min(p.n_bar) - self.v)).max(1.0);
        for (target, wi) in self.target.iter_mut().zip(&w) {
            *target = (self.v * w[slow] / wi).clamp(1.0, p.n_bar);
        }
        x
    }

    /// The estimate ĉ (s).
    pub fn c_hat(&self) -> f64 {
        self.c_hat
    }

    /// The outer-loop variable v (the slowest station's target level).
    pub fn v(&self) -> f64 {
        self.v
    }

    /// The inner-loop variables z (the levels the rates are set for).
    pub fn z(&self) -> &[f64] {
        &self.z
    }
}

/// Algorithm 2 as the [`Controller`] of one station's flow of a sender that feeds one or more
/// stations (module docs: how the flows share one [`InnerOuter`]).
#[derive(Debug)]
pub struct InnerOuterControl {
    shared: Arc<Mutex<Shared>>,
    station: usize,
    slots: SlotMeans,
}

/// What the flows of one sender share.
#[derive(Debug)]
struct Shared {
    core: InnerOuter,
    /// Each station's newest slot mean since the last step, with the rate its flow sent at.
    handed_in: Vec<Option<(StationSlot, f64)>>,
    /// The last step's rates that their flows have not taken up yet.
    assigned: Vec<Option<f64>>,
}

impl InnerOuterControl {
    /// The controller of a sender that feeds one station.
    pub fn new(p: InnerOuterParams) -> Self {
        Self::group(p, 1).remove(0)
    }

    /// The controllers of one sender that feeds `stations` stations (at least one), in the
    /// stations' order: one per station's flow, sharing one [`InnerOuter`].
    pub fn group(p: InnerOuterParams, stations: usize) -> Vec<Self> {
        let stations = stations.max(1);
        let shared = Arc::new(Mutex::new(Shared {
            core: InnerOuter::new(p, stations),
            handed_in: vec![None; stations],
            assigned: vec![None; stations],
        }));
        (0..stations)
            .map(|station| InnerOuterControl {
                shared: Arc::clone(&shared),
                station,
                slots: SlotMeans::default(),
            })
            .collect()
    }

    fn shared(&self) -> MutexGuard<'_, Shared> {
        // The state stays consistent between calls, so a panic elsewhere cannot poison it.
        self.shared.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Controller for InnerOuterControl {
    fn name(&self) -> String {
        let (p, d) = (self.shared().core.p, InnerOuterParams::default());
        if (p.k1, p.k2) == (d.k1, d.k2) {
            format!("agg-io:{},{}", p.t_bar * 1e3, p.n_bar)
        } else {
            format!("agg-io:{},{},{},{}", p.t_bar * 1e3, p.n_bar, p.k1, p.k2)
        }
    }

    fn on_epoch(&mut self, _summary: &EpochSummary, est: &Estimates) -> f64 {
        let mean = self.slots.take();
        let k = self.station;
        let mut s = self.shared();
        if let Some((level, Some(phy_rate))) = mean.map(|m| (m.level, m.phy_rate)) {
            s.handed_in[k] = Some((StationSlot { level, phy_rate }, est.rate));
        }
        if s.handed_in.iter().all(Option::is_some) {
            let (slots, rates): (Vec<StationSlot>, Vec<f64>) =
                s.handed_in.iter_mut().filter_map(Option::take).unzip();
            let x = s.core.step(&slots, &rates);
            s.assigned = x.into_iter().map(Some).collect();
        }
        s.assigned[k].take().unwrap_or(est.rate)
    }

    fn on_ack(&mut self, _est: &Estimates) -> Option<f64> {
        let k = self.station;
        self.shared().assigned[k].take()
    }

    fn epoch_length(&self, _est: &Estimates) -> f64 {
        self.shared().core.p.delta
    }

    fn on_feedback(&mut self, item: &FeedbackItem<'_>) {
        self.slots.add(item);
    }

    fn restart(&mut self) {
        self.slots.take();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controller::aggregation::tests::{feed, report};

    /// Algorithm 2 by hand for one station at 390 Mbit/s: w = 12384/390e6 s.
    #[test]
    fn algorithm_2_first_slots_by_hand() {
        let p = InnerOuterParams::default();
        let w = MPDU_BITS / 390e6;
        let mut io = InnerOuter::new(p, 1);
        let slot = |level| StationSlot {
            level,
            phy_rate: 390e6,
        };
        // Slot 1 at 2000 packets/s measured μ̃ = 1.4: z = max(1 + 0.5(1 − 1.4), 1) = 1;
        // ĉ = 0.95·200e-6 + 0.05·(1.4/2000)(1 − 2000w); x = 1/(ĉ + w); v = 1 + 0.2(min(T̄x, 32) − 1).
        let x = io.step(&[slot(1.4)], &[2000.0]);
        let c = 0.95 * 200e-6 + 0.05 * (1.4 / 2000.0) * (1.0 - 2000.0 * w);
        assert!((io.c_hat() - c).abs() < 1e-15);
        assert_eq!(io.z(), &[1.0]);
        let x1 = 1.0 / (c + w);
        assert!((x[0] - x1).abs() < 1e-9);
        let v = 1.0 + 0.2 * (5e-3 * x1 - 1.0);
        assert!((io.v() - v).abs() < 1e-12);
        // Slot 2 measured 2.0 at x1: z = 1 + 0.5(v − 2) (the target is v).
        let x = io.step(&[slot(2.0)], &[x1]);
        let z = (1.0 + 0.5 * (v - 2.0)).max(1.0);
        assert!((io.z()[0] - z).abs() < 1e-12);
        let c2 = 0.95 * c + 0.05 * (2.0 / x1) * (1.0 - x1 * w);
        assert!((x[0] - z / (c2 + w * z)).abs() < 1e-9);
        // Wrong lengths change nothing.
        assert_eq!(io.step(&[], &[5.0]), vec![5.0]);
    }

    /// Three stations on the §5.2 model, closed slot by slot (c = 300 µs, 100, 250 and
    /// 400 Mbit/s, N_max = 64): from z = v = 1 and ĉ₀ = 200 µs, Algorithm 2 with the thesis's
    /// gains reaches the proportional-fair low-delay allocation of §5.3 ([`pf_low_delay`]) and
    /// holds every station's delay at T̄. T̄ = 3 ms puts the fastest station's level at 29, under
    /// the cap N̄ = 32, so the delay target binds (the allocation is then equal airtime: every
    /// station's frame takes the same air): levels 7.27, 18.17 and 29.07. Tolerance 0.1 % after
    /// 200 slots.
    #[test]
    fn three_stations_on_the_model_settle_at_the_pf_low_delay_allocation_with_delay_t_bar() {
        use crate::controller::aggregation_model::AggregationModel;
        use crate::controller::pf_allocation::pf_low_delay;
        let phy = [100e6, 250e6, 400e6];
        let plant = AggregationModel::from_phy_rates(300e-6, &phy, 64.0);
        let p = InnerOuterParams {
            t_bar: 3e-3,
            n_bar: 32.0,
            ..InnerOuterParams::default()
        };
        let mut io = InnerOuter::new(p, 3);
        let mut x = vec![1000.0; 3];
        for _ in 0..200 {
            let slots: Vec<StationSlot> = plant
                .levels(&x)
                .iter()
                .zip(phy)
                .map(|(&level, phy_rate)| StationSlot { level, phy_rate })
                .collect();
            x = io.step(&slots, &x);
        }
        let want = pf_low_delay(&plant, p.t_bar, p.n_bar);
        let levels = plant.levels(&x);
        let near = |a: &[f64], b: &[f64]| a.iter().zip(b).all(|(a, b)| (a / b - 1.0).abs() < 1e-3);
        assert!(near(&x, &want.rates), "{x:?} {want:?}");
        assert!(near(&levels, &want.levels), "{levels:?} {want:?}");
        assert!(near(&plant.delays(&x), &[p.t_bar; 3]), "{x:?}");
        // The delay target binds, not the cap; equal airtime: w_i·μ_N_i is the same for all.
        assert!(want.levels.iter().all(|&n| n < p.n_bar - 1.0), "{want:?}");
        let air: Vec<f64> = (0..3).map(|i| plant.w[i] * levels[i]).collect();
        assert!((air[0] / air[2] - 1.0).abs() < 1e-3, "{air:?}");
        assert!((io.c_hat() / plant.c - 1.0).abs() < 1e-3, "{}", io.c_hat());
    }

    #[test]
    fn controller_needs_phy_rates_and_uses_each_slot_once() {
        let mut c = InnerOuterControl::new(InnerOuterParams::default());
        assert_eq!(c.name(), "agg-io:5,32");
        assert_eq!(c.epoch_length(&est()), 1.0);
        let s = EpochSummary {
            avg_age: 0.0,
            avg_backlog: 0.0,
        };
        feed(&mut c, &report(1, 10, 3.0, 0));
        assert_eq!(c.on_epoch(&s, &est()), 2000.0);
        feed(&mut c, &report(2, 10, 3.0, 390_000));
        assert_ne!(c.on_epoch(&s, &est()), 2000.0);
        assert_eq!(c.on_epoch(&s, &est()), 2000.0);
    }

    /// One sender over three stations: the flows hand in their slots at their own epochs; the
    /// flow that completes the set steps the one shared core (the same rates as [`InnerOuter`]
    /// stepped by hand) and takes its rate at once, the others at their next ACK, each once.
    /// A flow without a new slot hands in nothing, and the core waits for it.
    #[test]
    fn one_sender_steps_its_shared_core_once_every_station_has_reported() {
        let p = InnerOuterParams::default();
        let mut flows = InnerOuterControl::group(p, 3);
        let mut by_hand = InnerOuter::new(p, 3);
        let s = EpochSummary {
            avg_age: 0.0,
            avg_backlog: 0.0,
        };
        let at = |rate| Estimates {
            rtt: 0.01,
            z: 0.001,
            rate,
        };
        let (levels, phy_kbps, rates) = (
            [3.0, 5.0, 8.0],
            [100_000, 250_000, 400_000],
            [800.0, 1500.0, 2500.0],
        );
        for (slot, want_step) in [(1, true), (2, false)] {
            // Station 3 reports nothing in slot 2.
            let reporting = if want_step { 3 } else { 2 };
            for k in 0..reporting {
                feed(&mut flows[k], &report(slot, 10, levels[k], phy_kbps[k]));
            }
            assert_eq!(flows[0].on_epoch(&s, &at(rates[0])), rates[0]);
            assert_eq!(flows[1].on_epoch(&s, &at(rates[1])), rates[1]);
            assert_eq!(flows[0].on_ack(&at(rates[0])), None);
            let got = flows[2].on_epoch(&s, &at(rates[2]));
            if !want_step {
                assert_eq!(got, rates[2]);
                assert!(flows.iter_mut().all(|f| f.on_ack(&at(1.0)).is_none()));
                continue;
            }
            let slots: Vec<StationSlot> = (0..3)
                .map(|k| StationSlot {
                    level: levels[k],
                    phy_rate: f64::from(phy_kbps[k]) * 1e3,
                })
                .collect();
            let want = by_hand.step(&slots, &rates);
            assert_eq!(got, want[2]);
            assert_eq!(flows[0].on_ack(&at(rates[0])), Some(want[0]));
            assert_eq!(flows[1].on_ack(&at(rates[1])), Some(want[1]));
            assert!(flows.iter_mut().all(|f| f.on_ack(&at(1.0)).is_none()));
        }
        assert_eq!(flows[1].name(), "agg-io:5,32");
    }

    fn est() -> Estimates {
        Estimates {
            rtt: 0.01,
            z: 0.001,
            rate: 2000.0,
        }
    }
}
