//! Received powers between the stations of a BSS and the preamble-detection rule: what the
//! medium's per-receiver (SINR) reception needs to know about the radio.
//!
//! A [`Radio`] holds, for every ordered pair of stations (station 0 is the access point), the
//! power at which one station receives the other's frames, and the receivers' noise floor. It is
//! computed once, when the BSS is built, so deciding a frame's fate at a receiver costs a table
//! look-up and a few additions.
//!
//! # Preamble detection
//!
//! ns-3's default `ThresholdPreambleDetectionModel` (`src/wifi/model/threshold-preamble-detection-model.cc`,
//! `IsPreambleDetected`): a receiver synchronises on a frame when its received power is at least
//! −82 dBm (`MinimumRssi`) *and* its SINR at the end of the 4 µs detection window is at least
//! 4 dB (`Threshold`). [`Radio::detects`] is that test.

/// ns-3's `ThresholdPreambleDetectionModel::Threshold`: the least SINR (dB) at which a preamble
/// is detected.
pub const DETECTION_SINR_DB: f64 = 4.0;
/// ns-3's `ThresholdPreambleDetectionModel::MinimumRssi`: the least received power (dBm) at which
/// a preamble is detected.
pub const DETECTION_MIN_RSSI_DBM: f64 = -82.0;

/// Linear power (mW) of `dbm`.
pub fn dbm_to_mw(dbm: f64) -> f64 {
    10f64.powf(dbm / 10.0)
}

/// A part of a frame's payload during which the interference is constant.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Chunk {
    /// Its share of the payload's airtime (the shares of a frame's chunks add up to 1).
    pub fraction: f64,
    /// Signal over interference plus noise during it (linear).
    pub sinr: f64,
}

/// Received powers between every pair of stations and the noise floor.
#[derive(Debug, Clone, PartialEq)]
pub struct Radio {
    stations: usize,
    rx_mw: Vec<f64>,
    noise_mw: f64,
    min_rssi_mw: f64,
    detection_sinr: f64,
}

impl Radio {
    /// `stations` stations (the AP included), station `at` receiving station `from`'s frames at
    /// `rx_dbm(from, at)` dBm, over a noise floor of `noise_dbm`.
    pub fn new(stations: usize, noise_dbm: f64, rx_dbm: impl Fn(usize, usize) -> f64) -> Self {
        let rx_mw = (0..stations * stations)
            .map(|i| {
                let (from, at) = (i / stations, i % stations);
                if from == at {
                    0.0
                } else {
                    dbm_to_mw(rx_dbm(from, at))
                }
            })
            .collect();
        Radio {
            stations,
            rx_mw,
            noise_mw: dbm_to_mw(noise_dbm),
            min_rssi_mw: dbm_to_mw(DETECTION_MIN_RSSI_DBM),
            detection_sinr: dbm_to_mw(DETECTION_SINR_DB),
        }
    }

    /// Stations, the AP included.
    pub fn stations(&self) -> usize {
        self.stations
    }

    /// Power (mW) at which `at` receives `from`'s frames.
    pub fn rx_mw(&self, from: usize, at: usize) -> f64 {
        self.rx_mw[from * self.stations + at]
    }

    /// Power (dBm) at which `at` receives `from`'s frames.
    pub fn rx_dbm(&self, from: usize, at: usize) -> f64 {
        10.0 * self.rx_mw(from, at).log10()
    }

    /// The noise floor (mW).
    pub fn noise_mw(&self) -> f64 {
        self.noise_mw
    }

    /// SNR (dB) of `from`'s frames at `at`.
    pub fn snr_db(&self, from: usize, at: usize) -> f64 {
        10.0 * (self.rx_mw(from, at) / self.noise_mw).log10()
    }

    /// Whether a receiver synchronises on a frame it receives at `signal_mw` while other frames
    /// add up to `interference_mw` (ns-3's threshold preamble detection).
    pub fn detects(&self, signal_mw: f64, interference_mw: f64) -> bool {
        signal_mw >= self.min_rssi_mw
            && signal_mw >= self.detection_sinr * (interference_mw + self.noise_mw)
    }

    /// `signal_mw` over `interference_mw` plus noise (linear).
    pub fn sinr(&self, signal_mw: f64, interference_mw: f64) -> f64 {
        signal_mw / (interference_mw + self.noise_mw)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detection_needs_both_power_and_sinr() {
        // Noise at −94 dBm. A −80 dBm frame alone: 14 dB SNR, above −82 dBm: detected.
        let r = Radio::new(3, -94.0, |from, _| if from == 1 { -80.0 } else { -83.0 });
        assert!(r.detects(r.rx_mw(1, 0), 0.0));
        // A −83 dBm frame: 11 dB SNR, but under the −82 dBm floor.
        assert!(!r.detects(r.rx_mw(2, 0), 0.0));
        // −80 dBm against −83 dBm: SINR 3 dB (less a hair of noise) < 4 dB.
        assert!(!r.detects(r.rx_mw(1, 0), r.rx_mw(2, 0)));
        // Exactly 4 dB over interference plus noise passes.
        let i = r.rx_mw(1, 0) / dbm_to_mw(4.0) - r.noise_mw();
        assert!(r.detects(r.rx_mw(1, 0), i * (1.0 - 1e-12)));
        assert!((r.snr_db(1, 0) - 14.0).abs() < 1e-9);
        assert!((r.rx_dbm(2, 1) + 83.0).abs() < 1e-9);
        assert_eq!(r.rx_mw(1, 1), 0.0);
    }
}
