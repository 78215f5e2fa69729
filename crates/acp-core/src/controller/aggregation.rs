//! PI aggregation control (aggregation thesis Algorithm 1): hold the receiver's mean A-MPDU
//! aggregation level at a target N_ε by adjusting the send rate once per slot of Δ seconds,
//!
//! x ← x − K·(μ_N − N_ε),  K = K₀/n,
//!
//! where μ_N is the mean number of MPDUs per frame the receiver saw during the slot and `n` the
//! number of stations the access point serves. Defaults (thesis §4.3.1): K₀ = 1, Δ = 500 ms,
//! N_ε = 32.
//!
//! Units. The thesis states the rule without units; its gain only makes sense with x in Mbit/s:
//! at N_ε = 32 on the §5.2 plant with c = 270 µs and μ_R = 585 Mbit/s, dμ_N/dx ≈ 0.28 per Mbit/s,
//! so the loop gain K₀·0.28 is below the limit 2 for K₀ = 1 and above it for K₀ = 10 — exactly
//! the convergence and "large, sustained oscillations" §4.3.3.1 reports. (With x in packets/s
//! K₀ = 10 would be 83 times too small to oscillate.) We therefore read K in Mbit/s per MPDU and
//! convert it to updates/s with the thesis' 1500-byte packets: 1 Mbit/s = 83.3 updates/s.
//!
//! The receiver reports slots of its own length ([`AggregationReport`], repeated on every ACK);
//! [`SlotMeans`] keeps each slot once, and at the end of each Δ-long epoch the controller
//! applies the rule to the frame-weighted mean of the slots reported during the epoch. An
//! epoch with no new report keeps the rate. The rule starts from the rate in force, so the
//! source's rate bounds cannot wind the controller up.

use crate::wire::{AggregationReport, FeedbackItem, FEEDBACK_AGGREGATION};

use super::{Controller, EpochSummary, Estimates};

/// Bits of a data packet in the thesis' experiments (1500 bytes).
const PACKET_BITS: f64 = 1500.0 * 8.0;

/// The receiver's reports of the slots that ended during one controller epoch.
#[derive(Debug, Clone, Default)]
pub struct SlotMeans {
    last_slot: Option<u32>,
    frames: f64,
    level_sum: f64,
    inverse_rate_sum: f64,
    rated_frames: f64,
}

/// The frame-weighted means of the reports taken by [`SlotMeans::take`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SlotMean {
    /// Mean MPDUs per frame, μ̃_N.
    pub level: f64,
    /// Mean PHY rate μ_R = 1/E[1/R] (bit/s), if the reports carried one.
    pub phy_rate: Option<f64>,
}

impl SlotMeans {
    /// Adds the report in `item` if it is an aggregation report of a slot not seen before.
    pub fn add(&mut self, item: &FeedbackItem<'_>) {
        if item.kind != FEEDBACK_AGGREGATION {
            return;
        }
        let Ok(r) = AggregationReport::decode(item.value) else {
            return;
        };
        if self.last_slot == Some(r.slot) {
            return;
        }
        self.last_slot = Some(r.slot);
        let frames = f64::from(r.frames);
        self.frames += frames;
        self.level_sum += frames * r.level();
        if let Some(rate) = r.phy_rate() {
            self.inverse_rate_sum += frames / rate;
            self.rated_frames += frames;
        }
    }

    /// The means of the reports added since the last call, if there were any.
    pub fn take(&mut self) -> Option<SlotMean> {
        let last_slot = self.last_slot;
        let taken = std::mem::replace(
            self,
            SlotMeans {
                last_slot,
                ..SlotMeans::default()
            },
        );
        (taken.frames > 0.0).then(|| SlotMean {
            level: taken.level_sum / taken.frames,
            phy_rate: (taken.rated_frames > 0.0)
                .then(|| taken.rated_frames / taken.inverse_rate_sum),
        })
    }
}

/// Parameters of [`PiAggregation`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PiParams {
    /// Target mean aggregation level N_ε (MPDUs per frame).
    pub n_eps: f64,
    /// Gain K₀ (Mbit/s per MPDU, divided by the number of stations).
    pub k0: f64,
    /// Slot length Δ (s).
    pub delta: f64,
}

impl Default for PiParams {
    fn default() -> Self {
        PiParams {
            n_eps: 32.0,
            k0: 1.0,
            delta: 0.5,
        }
    }
}

impl PiParams {
    /// The gain K = K₀/n in updates/s per MPDU of level error, for `stations` stations.
    pub fn gain(&self, stations: usize) -> f64 {
        self.k0 / stations.max(1) as f64 * 1e6 / PACKET_BITS
    }

    /// One step of Algorithm 1: the rate after a slot at `rate` with mean level `level`.
    pub fn step(&self, rate: f64, level: f64, stations: usize) -> f64 {
        rate - self.gain(stations) * (level - self.n_eps)
    }
}

/// Algorithm 1 for one source feeding one station (n = 1), towards N_ε; or, as
/// [`PiAggregation::equal_airtime`], towards the station's share of equal airtime
/// ([`super::airtime`]).
#[derive(Debug, Clone, Default)]
pub struct PiAggregation {
    params: PiParams,
    /// Equal airtime: the lead (fastest) station's PHY rate (Mbit/s).
    lead_mbps: Option<f64>,
    slots: SlotMeans,
}

impl PiAggregation {
    /// A controller with the given parameters.
    pub fn new(params: PiParams) -> Self {
        PiAggregation {
            params,
            lead_mbps: None,
            slots: SlotMeans::default(),
        }
    }

    /// One source's share of equal airtime (thesis §4.3.2): Algorithm 1 towards the level
    /// N_ε·μ_R/`lead_mbps` that gives its station the lead station's airtime at the PHY rate μ_R
    /// it reports (N_ε itself when it reports none: taken to be the lead).
    pub fn equal_airtime(params: PiParams, lead_mbps: f64) -> Self {
        PiAggregation {
            lead_mbps: Some(lead_mbps),
            ..Self::new(params)
        }
    }

    /// The level a slot with mean PHY rate `phy` (bit/s) aims at.
    fn target(&self, phy: Option<f64>) -> f64 {
        match (self.lead_mbps, phy) {
            (Some(lead), Some(r)) => self.params.n_eps * r * 1e-6 / lead,
            _ => self.params.n_eps,
        }
    }
}

impl Controller for PiAggregation {
    fn name(&self) -> String {
        let p = self.params;
        match self.lead_mbps {
            None => format!("agg:{},{},{}", p.n_eps, p.k0, p.delta),
            Some(lead) => format!("agg-air:{lead},{},{},{}", p.n_eps, p.k0, p.delta),
        }
    }

    fn on_epoch(&mut self, _summary: &EpochSummary, est: &Estimates) -> f64 {
        let Some(mean) = self.slots.take() else {
            return est.rate;
        };
        let p = PiParams {
            n_eps: self.target(mean.phy_rate),
            ..self.params
        };
        p.step(est.rate, mean.level, 1)
    }

    fn epoch_length(&self, _est: &Estimates) -> f64 {
        self.params.delta
    }

    fn on_feedback(&mut self, item: &FeedbackItem<'_>) {
        self.slots.add(item);
    }

    fn restart(&mut self) {
        self.slots.take();
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A FEEDBACK_AGGREGATION value for `slot` with `frames` frames at `level`.
    pub(crate) fn report(slot: u32, frames: u16, level: f64, phy: u32) -> Vec<u8> {
        AggregationReport {
            slot,
            slot_ms: 500,
            frames,
            level_256: AggregationReport::level_field(level),
            phy_kbps: phy,
            delay_us: 0,
        }
        .encode()
        .to_vec()
    }

    pub(crate) fn feed(c: &mut dyn Controller, value: &[u8]) {
        c.on_feedback(&FeedbackItem {
            kind: FEEDBACK_AGGREGATION,
            value,
        });
    }

    const SUMMARY: EpochSummary = EpochSummary {
        avg_age: 0.0,
        avg_backlog: 0.0,
    };

    fn est(rate: f64) -> Estimates {
        Estimates {
            rtt: 0.01,
            z: 0.001,
            rate,
        }
    }

    /// Reports (slot, frames, level) of one epoch.
    type Reports = &'static [(u32, u16, f64)];
    /// Name, reports, rate in force, expected rate.
    type Row = (&'static str, Reports, f64, f64);

    /// Each row: the reports (slot, frames, level) that arrive during one epoch, the rate in
    /// force, and the rate the rule must give. K = 1/12000 Mbit → 83.333… updates/s per MPDU.
    #[test]
    fn algorithm_1_table() {
        let k = 1e6 / 12000.0;
        #[rustfmt::skip]
        let rows: &[Row] = &[
            ("below target raises", &[(1, 10, 28.0)], 1000.0, 1000.0 + 4.0 * k),
            ("above target lowers", &[(2, 10, 40.0)], 5000.0, 5000.0 - 8.0 * k),
            ("at target holds", &[(3, 10, 32.0)], 5000.0, 5000.0),
            // Frame-weighted: (30·20 + 10·40)/40 = 25.
            ("two slots weighted", &[(4, 30, 20.0), (5, 10, 40.0)], 3000.0, 3000.0 + 7.0 * k),
            // The same slot repeated on many ACKs counts once.
            ("repeats count once", &[(6, 10, 30.0), (6, 10, 30.0), (6, 10, 30.0)], 3000.0, 3000.0 + 2.0 * k),
            ("no report holds", &[], 4321.0, 4321.0),
        ];
        for &(name, reports, rate, want) in rows {
            let mut c = PiAggregation::new(PiParams::default());
            for &(slot, frames, level) in reports {
                feed(&mut c, &report(slot, frames, level, 0));
            }
            let got = c.on_epoch(&SUMMARY, &est(rate));
            assert!((got - want).abs() < 1e-9, "{name}: {got} != {want}");
        }
    }

    #[test]
    fn gain_scales_with_k0_and_stations_and_slot_sets_the_epoch() {
        let p = PiParams {
            n_eps: 20.0,
            k0: 3.0,
            delta: 1.5,
        };
        assert!((p.gain(1) - 250.0).abs() < 1e-9);
        assert!((p.gain(3) - 250.0 / 3.0).abs() < 1e-9);
        assert!((p.step(1000.0, 24.0, 2) - 500.0).abs() < 1e-9);
        let mut c = PiAggregation::new(p);
        assert_eq!(c.epoch_length(&est(1.0)), 1.5);
        assert_eq!(c.name(), "agg:20,3,1.5");
        // Feedback of other kinds is ignored; a slot seen in an earlier epoch is not reused.
        c.on_feedback(&FeedbackItem {
            kind: 9,
            value: &[1, 2],
        });
        feed(&mut c, &report(7, 5, 22.0, 0));
        assert!((c.on_epoch(&SUMMARY, &est(1000.0)) - 500.0).abs() < 1e-9);
        feed(&mut c, &report(7, 5, 22.0, 0));
        assert_eq!(c.on_epoch(&SUMMARY, &est(1000.0)), 1000.0);
    }

    #[test]
    fn slot_means_weight_phy_rates_harmonically() {
        let mut s = SlotMeans::default();
        s.add(&FeedbackItem {
            kind: FEEDBACK_AGGREGATION,
            value: &report(1, 1, 10.0, 100_000),
        });
        s.add(&FeedbackItem {
            kind: FEEDBACK_AGGREGATION,
            value: &report(2, 1, 10.0, 300_000),
        });
        // μ_R = 1/E[1/R] = 2/(1/100 + 1/300) Mbit/s = 150 Mbit/s.
        let m = s.take().unwrap();
        assert!((m.phy_rate.unwrap() - 150e6).abs() < 1e-3);
        assert_eq!(s.take(), None);
    }
}
