//! The mean model of aggregation level and delay of an 802.11ac downlink (the aggregation
//! thesis, ch. 5 §5.2), and its parameters derived from the standard's timings.
//!
//! An AP serves `n` stations round-robin, one A-MPDU each per round; station `i` is sent `xᵢ`
//! packets/s, paced. A frame of `N` packets holds the air for `T_oh + w·N`: a fixed overhead
//! `T_oh` (channel access, preamble, SIFS, BlockAck) and `w = (l + l_oh)/R` per packet. With
//! `c = n·E[T_oh]` and each frame clearing the queue (regime two: fewer than `N_max` packets
//! arrive per round), the mean aggregation level and the bound on the mean delay at the AP are
//!
//! ```text
//! μ_N = Π[1, N_max]( c·x / (1 − wᵀx) )                                  (5.8)
//! μ_T ≤ max{ min{ c / (1 − wᵀx), N_max / xᵢ }, 1 / xᵢ }                   (5.10)
//! x   = μ_N / (c + wᵀμ_N)                                               (5.11)
//! ```
//!
//! [`AggregationModel::derive`] takes `c` and `w` from a configuration: per frame
//! `T_oh = AIFS + (CWmin/2)·slot + preamble + SIFS + BlockAck + 6·N_ES/R + T_SYM/2` (the tail
//! bits, and half a symbol for the padding of the last one on average), and per packet
//! `l + l_oh` = the A-MPDU subframe of one packet (delimiter, MAC header, LLC/SNAP, FCS,
//! padding: 1544 bytes for a 1500-byte packet). [`AggregationModel::fit`] estimates them from
//! measured `(x, μ_N)` pairs instead, by least squares on `1/μ_N = 1/(c·x) − w/c`.

use super::ampdu::{ampdu_bytes, mpdu_bytes};
use super::blockack::block_ack_airtime;
use super::phy::{AcParams, PhyConfig};

/// `c` and `w` of the model for stations that share one rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AggregationModel {
    /// Fixed time per round, all stations' frames together (s).
    pub c: f64,
    /// Airtime per packet, `(l + l_oh)/μ_R` (s).
    pub w: f64,
    /// Stations in a round.
    pub stations: usize,
    /// Most packets per frame.
    pub n_max: f64,
}

impl AggregationModel {
    /// The model of `stations` stations served at `phy`'s rate with `access`'s EDCA parameters,
    /// packets of `packet_bytes`, at most `n_max` per frame.
    pub fn derive(
        phy: &PhyConfig,
        access: AcParams,
        stations: usize,
        packet_bytes: u32,
        n_max: usize,
    ) -> Self {
        let slot = phy.slot().as_secs_f64();
        let rate = phy.data_rate_bps();
        let symbol = 1.0 / rate * f64::from(phy.bits_per_symbol());
        let tail = 6.0 * phy.encoders() as f64 / rate;
        let per_frame = phy.sifs().as_secs_f64()
            + f64::from(access.aifsn) * slot
            + f64::from(access.cw_min) / 2.0 * slot
            + phy.preamble_airtime().as_secs_f64()
            + phy.sifs().as_secs_f64()
            + block_ack_airtime(phy).as_secs_f64()
            + tail
            + symbol / 2.0;
        AggregationModel {
            c: stations as f64 * per_frame,
            w: 8.0 * subframe_bytes(phy, packet_bytes) as f64 / rate,
            stations,
            n_max: n_max as f64,
        }
    }

    /// The model with `c` (s) and `μ_R` (bit/s) given, for packets of `packet_bytes` framed as
    /// by `phy` (how the thesis states its testbed's parameters).
    pub fn with_parameters(
        c: f64,
        rate_bps: f64,
        phy: &PhyConfig,
        stations: usize,
        packet_bytes: u32,
        n_max: usize,
    ) -> Self {
        AggregationModel {
            c,
            w: 8.0 * subframe_bytes(phy, packet_bytes) as f64 / rate_bps,
            stations,
            n_max: n_max as f64,
        }
    }

    /// `μ_R` (bit/s) for packets of `packet_bytes` framed as by `phy`.
    pub fn rate_bps(&self, phy: &PhyConfig, packet_bytes: u32) -> f64 {
        8.0 * subframe_bytes(phy, packet_bytes) as f64 / self.w
    }

    /// Unprojected `c·x / (1 − wᵀx)` with every station sent `x` packets/s (`∞` when `x` is
    /// not feasible).
    pub fn unclamped_aggregation(&self, x: f64) -> f64 {
        let load = self.w * x * self.stations as f64;
        if load >= 1.0 {
            f64::INFINITY
        } else {
            self.c * x / (1.0 - load)
        }
    }

    /// (5.8): the mean aggregation level at `x` packets/s per station.
    pub fn mean_aggregation(&self, x: f64) -> f64 {
        self.unclamped_aggregation(x).clamp(1.0, self.n_max)
    }

    /// (5.10): the bound on the mean delay at the AP (s).
    pub fn delay_bound(&self, x: f64) -> f64 {
        let round = self.unclamped_aggregation(x) / x;
        round.min(self.n_max / x).max(1.0 / x)
    }

    /// (5.11): the rate per station (packets/s) at which the mean aggregation level is `mu_n`.
    pub fn rate_for(&self, mu_n: f64) -> f64 {
        mu_n / (self.c + self.w * mu_n * self.stations as f64)
    }

    /// Least-squares `c` and `w` from `(x, μ_N)` pairs measured in regime two (`x` packets/s
    /// per station); `None` with fewer than two distinct rates.
    pub fn fit(points: &[(f64, f64)], stations: usize, n_max: usize) -> Option<Self> {
        // 1/μ_N = (1/c)·(1/x) − (w·n/c): a line in 1/x.
        let pts: Vec<(f64, f64)> = points.iter().map(|(x, m)| (1.0 / x, 1.0 / m)).collect();
        let k = pts.len() as f64;
        let mean_u = pts.iter().map(|p| p.0).sum::<f64>() / k;
        let mean_v = pts.iter().map(|p| p.1).sum::<f64>() / k;
        let suu: f64 = pts.iter().map(|p| (p.0 - mean_u).powi(2)).sum();
        let suv: f64 = pts.iter().map(|p| (p.0 - mean_u) * (p.1 - mean_v)).sum();
        if pts.len() < 2 || suu <= 0.0 {
            return None;
        }
        let slope = suv / suu;
        let intercept = mean_v - slope * mean_u;
        let c = 1.0 / slope;
        Some(AggregationModel {
            c,
            w: -intercept * c / stations as f64,
            stations,
            n_max: n_max as f64,
        })
    }
}

/// Bytes one packet of `packet_bytes` adds to an A-MPDU: its padded subframe.
fn subframe_bytes(phy: &PhyConfig, packet_bytes: u32) -> u64 {
    let mpdu = mpdu_bytes(phy.qos, &[packet_bytes]);
    ampdu_bytes(&[mpdu, mpdu]) - ampdu_bytes(&[mpdu])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wifi::phy::{edca_defaults, Mcs, Standard};

    #[test]
    fn derived_parameters_by_hand() {
        // 80 MHz, 2 streams, MCS 9, long GI: 780 Mbit/s, N_ES = 2. Per frame: SIFS 16 + 3·9 +
        // 7.5·9 + preamble 44 + SIFS 16 + BlockAck 32 + 12 bits/780 Mbit/s + 2 µs
        // = 204.515 µs; per packet 1544·8 bits / 780 Mbit/s = 15.836 µs.
        let phy = PhyConfig::ac(Mcs::new(9, 2, 80));
        let be = edca_defaults(Standard::Ac)[1];
        let m = AggregationModel::derive(&phy, be, 1, 1500, 64);
        assert!((m.c - 204.515e-6).abs() < 1e-9, "{}", m.c);
        assert!((m.w - 1544.0 * 8.0 / 780e6).abs() < 1e-12);
        assert!((m.rate_bps(&phy, 1500) - 780e6).abs() < 1.0);
        let two = AggregationModel::derive(&phy, be, 2, 1500, 64);
        assert!((two.c - 2.0 * m.c).abs() < 1e-12);
    }

    #[test]
    fn inverse_and_projection() {
        let phy = PhyConfig::ac(Mcs::new(7, 2, 80));
        let m = AggregationModel::with_parameters(270e-6, 585e6, &phy, 1, 1500, 64);
        for mu in [2.0, 10.0, 32.0, 60.0] {
            let x = m.rate_for(mu);
            assert!((m.mean_aggregation(x) - mu).abs() < 1e-9);
            // (5.12): c / (1 − wx) = c + w·μ_N, so the delay bound is μ_N / x.
            assert!((m.delay_bound(x) - mu / x).abs() < 1e-12);
        }
        assert_eq!(m.mean_aggregation(1.0), 1.0);
        assert_eq!(m.mean_aggregation(1e9), 64.0);
        assert!((m.delay_bound(1e9) - 64.0 / 1e9).abs() < 1e-18);
        let pts: Vec<(f64, f64)> = [5e3, 1e4, 2e4, 3e4]
            .iter()
            .map(|x| (*x, m.mean_aggregation(*x)))
            .collect();
        let f = AggregationModel::fit(&pts, 1, 64).unwrap();
        assert!((f.c - m.c).abs() < 1e-9 && (f.w - m.w).abs() < 1e-12);
        assert!(AggregationModel::fit(&pts[..1], 1, 64).is_none());
    }
}
