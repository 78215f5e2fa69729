//! Equal airtime across stations (aggregation thesis §4.3.2): Algorithm 1 regulates the station
//! with the highest PHY rate, i*, and every other station gets a rate in proportion to its own
//! PHY rate,
//!
//! x_{i*} ← x_{i*} − K(μ_{N_{i*}} − N_ε)   (4.1),   x_i = x_{i*}·μ_{R_i}/μ_{R_{i*}}   (4.2),
//!
//! so that the payload airtime μ_{N_i}·L/μ_{R_i} is the same for all stations. [`EqualAirtime`]
//! is for a sender that feeds several stations at once (one rate per station); it uses only what
//! each station measures, its mean aggregation level and its mean PHY rate.
//!
//! [`PiAggregation::equal_airtime`](super::PiAggregation::equal_airtime) is the same allocation
//! for a source that feeds one station and sees only its own reports (the simulator's and the
//! CLI's flows, `agg-air:LEAD_MBPS[,NEPS[,K0[,DELTA]]]`):
//! the access point serves its stations round robin, so every station's frames share one
//! interval between transmission opportunities and (4.1)–(4.2)'s equal payload airtime is the
//! level N_i = N_ε·μ_{R_i}/μ_{R_{i*}}. Each source runs Algorithm 1 towards that level, with the
//! lead station's PHY rate μ_{R_{i*}} given; the lead station's source is Algorithm 1 itself.
//! The fixed point is (4.1)–(4.2)'s; the difference is that a slow station's rate follows its own
//! level rather than being set from the lead's rate.

use super::aggregation::PiParams;

/// What one station measured over a slot.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StationSlot {
    /// Mean MPDUs per frame, μ_N.
    pub level: f64,
    /// Mean PHY rate μ_R (bit/s).
    pub phy_rate: f64,
}

/// Index of the station with the highest PHY rate (the first of equals); `None` if empty.
pub fn fastest(stations: &[StationSlot]) -> Option<usize> {
    (0..stations.len()).reduce(|best, i| {
        if stations[i].phy_rate > stations[best].phy_rate {
            i
        } else {
            best
        }
    })
}

/// The equal-airtime controller (4.1)–(4.2) for a fixed set of stations.
#[derive(Debug, Clone)]
pub struct EqualAirtime {
    params: PiParams,
    lead_rate: f64,
}

impl EqualAirtime {
    /// Starts with the fastest station sent `lead_rate` packets/s.
    pub fn new(params: PiParams, lead_rate: f64) -> Self {
        EqualAirtime { params, lead_rate }
    }

    /// One slot: the stations' measurements in, the rates (packets/s, same order) for the next
    /// slot out. K = K₀/n with n the number of stations. Empty in, empty out.
    pub fn step(&mut self, stations: &[StationSlot]) -> Vec<f64> {
        let Some(lead) = fastest(stations) else {
            return Vec::new();
        };
        self.lead_rate = self
            .params
            .step(self.lead_rate, stations[lead].level, stations.len());
        let lead_phy = stations[lead].phy_rate;
        stations
            .iter()
            .map(|s| self.lead_rate * s.phy_rate / lead_phy)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::super::aggregation::tests::{feed, report};
    use super::super::{Controller, EpochSummary, Estimates, PiAggregation};
    use super::*;

    /// Each row: the reported (level, PHY Mbit/s), the rate in force, and the rate the rule
    /// must give, with the lead at 866.7 Mbit/s and K = 1/12000 Mbit → 83.333… updates/s.
    #[test]
    fn airtime_share_table() {
        let k = 1e6 / 12000.0;
        let est = |rate| Estimates {
            rtt: 0.01,
            z: 0.001,
            rate,
        };
        let summary = EpochSummary {
            avg_age: 0.0,
            avg_backlog: 0.0,
        };
        #[rustfmt::skip]
        let rows: &[(&str, f64, u32, f64, f64)] = &[
            ("lead below N_ε raises", 28.0, 866_700, 5000.0, 5000.0 + 4.0 * k),
            ("half rate holds at N_ε/2", 16.0, 433_350, 3000.0, 3000.0),
            ("half rate above N_ε/2 lowers", 20.0, 433_350, 3000.0, 3000.0 - 4.0 * k),
            ("no PHY rate: regulated as the lead", 30.0, 0, 3000.0, 3000.0 + 2.0 * k),
        ];
        for &(name, level, phy_kbps, rate, want) in rows {
            let mut c = PiAggregation::equal_airtime(PiParams::default(), 866.7);
            feed(&mut c, &report(1, 10, level, phy_kbps));
            let got = c.on_epoch(&summary, &est(rate));
            assert!((got - want).abs() < 1e-6, "{name}: {got} != {want}");
        }
        let mut c = PiAggregation::equal_airtime(PiParams::default(), 866.7);
        assert_eq!(c.on_epoch(&summary, &est(42.0)), 42.0);
        assert_eq!(c.name(), "agg-air:866.7,32,1,0.5");
    }

    #[test]
    fn fastest_station_is_regulated_and_the_rest_follow_its_phy_rate() {
        let k = 1e6 / 12000.0;
        let mut a = EqualAirtime::new(PiParams::default(), 10_000.0);
        let st = |level, mbps: f64| StationSlot {
            level,
            phy_rate: mbps * 1e6,
        };
        // Station 1 (400 Mbit/s) leads at level 28: x₁ = 10000 + 4k/2 (K = K₀/2).
        let x = a.step(&[st(50.0, 100.0), st(28.0, 400.0)]);
        let lead = 10_000.0 + 4.0 * k / 2.0;
        assert!((x[1] - lead).abs() < 1e-9 && (x[0] - lead / 4.0).abs() < 1e-9);
        // The slow station's own level plays no part; at target the rates hold.
        let y = a.step(&[st(1.0, 100.0), st(32.0, 400.0)]);
        assert_eq!(x, y);
        // Equal payload airtime per unit time: x_i / μ_R_i is the same for every station.
        assert!((y[0] / 100e6 - y[1] / 400e6).abs() < 1e-15);
        assert!(a.step(&[]).is_empty());
        assert_eq!(
            fastest(&[st(1.0, 5.0), st(1.0, 9.0), st(1.0, 9.0)]),
            Some(1)
        );
    }
}
