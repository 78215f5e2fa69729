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
//! [`InnerOuter`] serves any number of stations; [`InnerOuterControl`] is the [`Controller`] of
//! one source feeding one station, fed by the receiver's [`AggregationReport`]s, which must carry
//! the PHY rate (a slot reported without it keeps the rate).
//!
//! [`AggregationReport`]: crate::wire::AggregationReport

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

/// Algorithm 2 as the [`Controller`] of one source feeding one station.
#[derive(Debug, Clone)]
pub struct InnerOuterControl {
    core: InnerOuter,
    slots: SlotMeans,
}

impl InnerOuterControl {
    /// A controller with the given parameters.
    pub fn new(p: InnerOuterParams) -> Self {
        InnerOuterControl {
            core: InnerOuter::new(p, 1),
            slots: SlotMeans::default(),
        }
    }
}

impl Controller for InnerOuterControl {
    fn name(&self) -> String {
        let (p, d) = (self.core.p, InnerOuterParams::default());
        if (p.k1, p.k2) == (d.k1, d.k2) {
            format!("agg-io:{},{}", p.t_bar * 1e3, p.n_bar)
        } else {
            format!("agg-io:{},{},{},{}", p.t_bar * 1e3, p.n_bar, p.k1, p.k2)
        }
    }

    fn on_epoch(&mut self, _summary: &EpochSummary, est: &Estimates) -> f64 {
        let Some(mean) = self.slots.take() else {
            return est.rate;
        };
        let Some(phy_rate) = mean.phy_rate else {
            return est.rate;
        };
        let slot = StationSlot {
            level: mean.level,
            phy_rate,
        };
        self.core.step(&[slot], &[est.rate])[0]
    }

    fn epoch_length(&self, _est: &Estimates) -> f64 {
        self.core.p.delta
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

    fn est() -> Estimates {
        Estimates {
            rtt: 0.01,
            z: 0.001,
            rate: 2000.0,
        }
    }
}
