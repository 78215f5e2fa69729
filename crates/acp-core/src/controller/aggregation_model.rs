//! The mean model of WiFi aggregation level and delay (aggregation thesis §5.2), shared by the
//! controllers that invert it and by the tests that use it as the plant.
//!
//! `n` stations receive downlink traffic from an access point that serves them round robin. A
//! round costs `c` seconds of fixed overhead (channel access, headers, block ACK) plus `w_i`
//! seconds per MPDU sent to station `i`, `w_i = (l + l_oh)/μ_R_i`. At send rates `x` (packets/s)
//! the mean aggregation levels and delay are
//!
//! - μ_N = Π(c·x / (1 − wᵀx)) with Π the projection onto `[1, N_max]` (5.8),
//! - μ_T,i = max{min{c/(1 − wᵀx), N_max/x_i}, 1/x_i} (5.10),
//!
//! and the map is inverted by x = μ_N / (c + wᵀμ_N) (5.11). Rates with `wᵀx ≥ 1` are infeasible:
//! every queue grows, so every level sits at `N_max`.

/// Bits of one MPDU on the air in the thesis' examples: a 1500-byte packet plus 48 bytes of MAC
/// framing (§5.4.2.2, "l = 1500B, overhead l_oh = 48B").
pub const MPDU_BITS: f64 = (1500.0 + 48.0) * 8.0;

/// Parameters of the §5.2 model.
#[derive(Debug, Clone, PartialEq)]
pub struct AggregationModel {
    /// Fixed overhead of one scheduling round, `c` (s).
    pub c: f64,
    /// Per-MPDU airtime of each station, `w_i` (s).
    pub w: Vec<f64>,
    /// Largest aggregate, `N_max` (MPDUs).
    pub n_max: f64,
}

impl AggregationModel {
    /// A model whose stations use the given mean PHY rates (bit/s) for [`MPDU_BITS`]-bit MPDUs.
    pub fn from_phy_rates(c: f64, phy_rates: &[f64], n_max: f64) -> Self {
        AggregationModel {
            c,
            w: phy_rates.iter().map(|r| MPDU_BITS / r).collect(),
            n_max,
        }
    }

    /// Mean aggregation levels at send rates `x` (5.8).
    pub fn levels(&self, x: &[f64]) -> Vec<f64> {
        let busy = dot(&self.w, x);
        x.iter()
            .map(|&xi| {
                if busy >= 1.0 {
                    self.n_max
                } else {
                    (self.c * xi / (1.0 - busy)).clamp(1.0, self.n_max)
                }
            })
            .collect()
    }

    /// Mean delay at the access point of each station at send rates `x` (5.10), seconds.
    pub fn delays(&self, x: &[f64]) -> Vec<f64> {
        let busy = dot(&self.w, x);
        let round = if busy >= 1.0 {
            f64::INFINITY
        } else {
            self.c / (1.0 - busy)
        };
        x.iter()
            .map(|&xi| round.min(self.n_max / xi).max(1.0 / xi))
            .collect()
    }

    /// The send rates that give mean levels `levels` (5.11).
    pub fn rates_for(&self, levels: &[f64]) -> Vec<f64> {
        inverse(self.c, &self.w, levels)
    }
}

/// x = z / (c + wᵀz) (5.11), for a controller's own estimate `c` and airtimes `w`.
pub fn inverse(c: f64, w: &[f64], levels: &[f64]) -> Vec<f64> {
    let round = c + dot(w, levels);
    levels.iter().map(|z| z / round).collect()
}

/// wᵀx.
pub fn dot(w: &[f64], x: &[f64]) -> f64 {
    w.iter().zip(x).map(|(a, b)| a * b).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_inverts_and_matches_the_thesis_numbers() {
        // §5.4.2.2: c ≈ 200 µs, MCS 2 NSS 1 at 87.7 Mbit/s and 16 MPDUs per frame give a delay of
        // about 2.5 ms; MCS 9 at 390 Mbit/s and 48 MPDUs about 1.7 ms.
        for (phy, level, delay) in [(87.7e6, 16.0, 2.5e-3), (390e6, 48.0, 1.7e-3)] {
            let m = AggregationModel::from_phy_rates(200e-6, &[phy], 64.0);
            let x = m.rates_for(&[level]);
            assert!((m.levels(&x)[0] - level).abs() < 1e-9);
            assert!(
                (m.delays(&x)[0] - delay).abs() < 0.05e-3,
                "{}",
                m.delays(&x)[0]
            );
        }
        let m = AggregationModel::from_phy_rates(200e-6, &[100e6, 400e6], 64.0);
        let x = m.rates_for(&[10.0, 40.0]);
        let back = m.levels(&x);
        assert!((back[0] - 10.0).abs() < 1e-9 && (back[1] - 40.0).abs() < 1e-9);
        // Overload: every level saturates, the round time is unbounded.
        assert_eq!(m.levels(&[1e6, 1e6]), vec![64.0, 64.0]);
        assert_eq!(m.delays(&[1e6, 1e6]), vec![64e-6, 64e-6]);
    }
}
