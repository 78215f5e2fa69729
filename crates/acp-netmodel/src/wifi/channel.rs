//! Positions, path loss, SNR and the frame error rate of one 802.11 BSS.
//!
//! # Placement
//!
//! Stations are placed uniformly at random in a `width × height` m² rectangle (`x` in
//! `[0, width]`, `y` in `[0, height]`), the access point at its centre unless a position is given.
//! Station `k` (the medium's station `k + 1`; the AP is station 0) takes the `2k`-th and
//! `(2k + 1)`-th draws of the stream `"wifi NAME placement"`, so adding stations never moves the
//! ones already placed.
//!
//! # Link budget
//!
//! ```text
//! PL(d)  = PL(d₀) + 10·n·log₁₀(d / d₀)        log-distance path loss, d₀ = 1 m, exponent n
//! PL(d₀) = 46.6777 dB                         ns-3's default reference loss, or
//! PL(d₀) = 20·log₁₀(4π·d₀·f / c)              free space at the carrier f ([`ReferenceLoss::Friis`])
//! P_rx   = P_tx − PL(d) − X,  X ~ N(0, σ²) dB  log-normal shadowing
//! N      = −174 dBm/Hz + 10·log₁₀(B) + NF      thermal noise in the channel width B
//! SNR    = P_rx − N                            (dB; linear 10^(SNR/10) below)
//! ```
//!
//! - The reference loss defaults to ns-3's `LogDistancePropagationLossModel::ReferenceLoss`,
//!   46.6777 dB whatever the band (`src/propagation/model/propagation-loss-model.cc`; it is free
//!   space at 5.15 GHz), so that placements match ns-3's. [`ReferenceLoss::Friis`] takes free space
//!   at the carrier instead: `f` is 2.412 GHz (channel 1) at 2.4 GHz and 5.18 GHz (channel 36) at
//!   5 GHz ([`super::phy::PhyConfig::carrier_hz`]), `PL(1 m)` = 40.10 dB and 46.73 dB.
//! - Distances under `d₀` take `PL(d₀)`, as ns-3's `LogDistancePropagationLossModel` does.
//! - Shadowing is static and per link: one draw per station (stream `"wifi NAME shadowing"`,
//!   station `k` taking the `k`-th normal), used both ways, since the AP↔station link is
//!   symmetric (same path, same power). Each pair of stations `i < j` has its own draw too
//!   (stream `"wifi NAME pair shadowing"`, pairs in the order (1, 2), (1, 3), …, (2, 3), …),
//!   used both ways; these only matter to per-receiver reception ([`super::radio`]). σ = 4, 8,
//!   12 dB are light, moderate, heavy indoor shadowing; the default is 0 (none).
//! - Defaults: transmit power 16.0206 dBm (40 mW, the default `TxPowerStart`/`TxPowerEnd` of
//!   ns-3's `YansWifiPhy`), noise figure 7 dB (ns-3's `RxNoiseFigure`), exponent 3 (ns-3's
//!   `LogDistancePropagationLossModel`), no antenna gains. A 20 MHz channel has a noise floor of
//!   −174 + 73.01 + 7 = −93.99 dBm.
//!
//! # Frame error model
//!
//! Two models, chosen by [`ChannelConfig::error_model`]: [`ErrorModel::Table`] (the default),
//! ns-3's default `TableBasedErrorRateModel` ([`super::per_table`]), and [`ErrorModel::Nist`],
//! the formulas below. They differ most where capture is decided: for a 1088-byte frame at
//! 12 Mbit/s (QPSK ½) the table's PER is 50 % near 3.3 dB of SINR, the formulas' near 5.3 dB (the
//! table model lets ns-3 capture more, see docs/SIMULATOR.md). Where the table has no curve
//! (BPSK ¾, 9 Mbit/s) the table model takes the formulas (ns-3 takes its YANS formulas there).
//!
//! The NIST OFDM error-rate model, as ns-3's `NistErrorRateModel` implements it (G. Pei and
//! T. R. Henderson, "Validation of OFDM error rate model in ns-3", Boeing Research & Technology,
//! 2010; source `src/wifi/model/nist-error-rate-model.cc` of ns-3). The code here is our own, from
//! these formulas. With `γ` the SNR per symbol (linear) and `M` the constellation size, the uncoded
//! bit error rate is
//!
//! ```text
//! BPSK:      p = ½·erfc(√γ)
//! QPSK:      p = ½·erfc(√(γ/2))
//! M-QAM:     p = (√M − 1) / (√M·log₂√M) · erfc(√(3γ / (2(M − 1))))     M = 16, 64, 256
//! ```
//!
//! and the hard-decision Viterbi decoder's error-event probability is bounded by the usual union
//! bound over the code's distance spectrum, with the Bhattacharyya parameter `D` of the binary
//! symmetric channel the demodulator leaves (e.g. Proakis, *Digital Communications*, on
//! convolutional codes)
//!
//! ```text
//! D   = √(4p(1 − p))
//! P_e = 1/(2k) · Σ_d β_d · D^d                 k = 1, 2, 3, 5 for R = ½, ⅔, ¾, ⅚
//! P(success of b bits) = (1 − min(P_e, 1))^b
//! ```
//!
//! where `β_d` is the information-bit weight of the error events at distance `d` of the K = 7
//! (133, 171) code and its punctured versions — for ½: d = 10, 12, …, 26; ⅔: d = 6…15; ¾:
//! d = 5…14; ⅚: d = 4…13 — the coefficients ns-3 tabulates (the ⅚ spectrum from D. Haccoun and
//! G. Bégin, "High-rate punctured convolutional codes for Viterbi and sequential decoding", IEEE
//! Trans. Commun., 1989, Table V). [`success_probability`] is this last line.
//!
//! A frame is received when its SIG fields (BPSK ½, [`super::phy::PhyConfig::header_bits`]) and
//! its data symbols (`N_SYM · N_DBPS` bits, padding included, at the data rate's modulation and
//! coding) both are. With `N_SS` spatial streams we follow ns-3's AWGN abstraction: each stream
//! sees the full SNR (as many receive antennas as streams, so no diversity gain) and the bit count
//! is divided by `N_SS`. The ACK is a legacy PPDU sent as a non-HT duplicate over the data frame's
//! width (as ns-3 does), so it sees the same SNR.
//!
//! Under interference ([`WifiFrames::decode_probabilities`], used by the medium's per-receiver
//! reception) the same formulas apply piecewise, as ns-3's `InterferenceHelper::CalculatePayloadPer`
//! does: the SIG fields at the SINR they overlap, and the data symbols cut into chunks of constant
//! interference, each chunk succeeding with `(1 − P_e(SINR))^b` for its share `b` of the data
//! bits (ns-3 counts a chunk's bits as its duration times the data rate; the share of
//! `N_SYM · N_DBPS` is the same up to rounding).
//!
//! [`WifiFrames`] puts it together as the medium's [`FrameModel`]. Nothing here panics on a
//! configuration that passed [`ChannelConfig::validate`] and [`PhyConfig::validate`]; asking
//! about a station that does not exist does.

use std::f64::consts::PI;
use std::time::Duration;

use super::per_table;
use super::phy::{CodeRate, Constellation, Mode, PhyConfig};
use super::radio::{Chunk, Radio};
use super::{FrameModel, Uplink};
use crate::rng::Streams;

/// Speed of light in vacuum (m/s).
pub const SPEED_OF_LIGHT: f64 = 299_792_458.0;
/// Reference distance `d₀` of the log-distance model (m).
pub const REFERENCE_DISTANCE_M: f64 = 1.0;
/// Thermal noise density at 290 K (dBm/Hz), rounded as link budgets usually do.
pub const THERMAL_NOISE_DBM_PER_HZ: f64 = -174.0;
/// ns-3's `YansWifiPhy` default transmit power: 40 mW.
pub const DEFAULT_TX_POWER_DBM: f64 = 16.0206;
/// ns-3's default receiver noise figure (dB).
pub const DEFAULT_NOISE_FIGURE_DB: f64 = 7.0;
/// ns-3's default log-distance path-loss exponent.
pub const DEFAULT_EXPONENT: f64 = 3.0;
/// ns-3's default log-distance reference loss at 1 m (dB).
pub const NS3_REFERENCE_LOSS_DB: f64 = 46.6777;
/// Most stations (the AP included) a BSS has the station-to-station powers of per-receiver
/// reception for: the table grows with the square of the count (1024² powers are 8 MiB).
pub const MAX_RADIO_STATIONS: usize = 1024;

/// The path loss at the reference distance of 1 m.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ReferenceLoss {
    /// This many dB (ns-3's default: [`NS3_REFERENCE_LOSS_DB`]).
    Db(f64),
    /// Free space at the carrier: 40.10 dB at 2.412 GHz, 46.73 dB at 5.18 GHz.
    Friis,
}

impl ReferenceLoss {
    /// The loss at 1 m (dB) for a carrier of `carrier_hz`.
    pub fn db(self, carrier_hz: f64) -> f64 {
        match self {
            ReferenceLoss::Db(db) => db,
            ReferenceLoss::Friis => free_space_loss_db(REFERENCE_DISTANCE_M, carrier_hz),
        }
    }
}

/// A point in the plane (m).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Position {
    /// Metres from the left edge.
    pub x: f64,
    /// Metres from the bottom edge.
    pub y: f64,
}

impl Position {
    /// Euclidean distance (m).
    pub fn distance(self, other: Position) -> f64 {
        (self.x - other.x).hypot(self.y - other.y)
    }
}

/// Where the access point and the stations are.
#[derive(Debug, Clone, PartialEq)]
pub struct Placement {
    /// The access point (the medium's station 0).
    pub ap: Position,
    /// `stations[k]` is the medium's station `k + 1`.
    pub stations: Vec<Position>,
}

impl Placement {
    /// `stations` positions uniform in `[0, width_m] × [0, height_m]`, drawn from the stream
    /// `"wifi NAME placement"`; the AP at `ap`, or the centre.
    pub fn random(
        width_m: f64,
        height_m: f64,
        ap: Option<Position>,
        stations: usize,
        streams: &Streams,
        name: &str,
    ) -> Self {
        let mut rng = streams.stream(&format!("wifi {name} placement"));
        let stations = (0..stations)
            .map(|_| {
                let x = rng.uniform(0.0, width_m);
                let y = rng.uniform(0.0, height_m);
                Position { x, y }
            })
            .collect();
        Placement {
            ap: ap.unwrap_or(Position {
                x: width_m / 2.0,
                y: height_m / 2.0,
            }),
            stations,
        }
    }

    /// The AP at `ap`, station `k + 1` at `ap + offsets[k]` (metres east and north of the AP).
    pub fn around(ap: Position, offsets: &[Position]) -> Self {
        Placement {
            ap,
            stations: offsets
                .iter()
                .map(|o| Position {
                    x: ap.x + o.x,
                    y: ap.y + o.y,
                })
                .collect(),
        }
    }

    /// Distance from station `k` (the medium's station `k + 1`) to the AP.
    pub fn distance_to_ap(&self, k: usize) -> f64 {
        self.stations[k].distance(self.ap)
    }

    /// The medium's station `i` (0: the AP).
    pub fn station(&self, i: usize) -> Position {
        if i == 0 {
            self.ap
        } else {
            self.stations[i - 1]
        }
    }
}

/// How the success of a frame (or of a chunk of one) follows from its SNR (see the module's
/// frame error model).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ErrorModel {
    /// ns-3's default `TableBasedErrorRateModel` ([`super::per_table`]); the NIST formulas where
    /// it has no table.
    #[default]
    Table,
    /// The NIST formulas ([`success_probability`]), ns-3's `NistErrorRateModel`.
    Nist,
}

impl ErrorModel {
    /// Probability that `bits` bits sent with `mode` at SNR `snr_linear` are all received.
    pub fn success_probability(self, snr_linear: f64, mode: Mode, bits: u64) -> f64 {
        match self {
            ErrorModel::Table => per_table::success_probability(snr_linear, mode, bits)
                .unwrap_or_else(|| success_probability(snr_linear, mode, bits)),
            ErrorModel::Nist => success_probability(snr_linear, mode, bits),
        }
    }
}

/// The radio environment of a BSS.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChannelConfig {
    /// Width of the area (m).
    pub width_m: f64,
    /// Height of the area (m).
    pub height_m: f64,
    /// The access point's position (`None`: the centre of the area).
    pub ap: Option<Position>,
    /// Path-loss exponent `n`.
    pub exponent: f64,
    /// Path loss at 1 m.
    pub reference_loss: ReferenceLoss,
    /// Standard deviation σ of the log-normal shadowing (dB).
    pub shadowing_db: f64,
    /// Transmit power of the AP and of every station (dBm).
    pub tx_power_dbm: f64,
    /// Receiver noise figure (dB).
    pub noise_figure_db: f64,
    /// How frame errors follow from the SNR.
    pub error_model: ErrorModel,
}

impl ChannelConfig {
    /// A `width_m × height_m` area with the AP at its centre and ns-3's defaults: exponent 3,
    /// reference loss 46.6777 dB, no shadowing, 16.0206 dBm, noise figure 7 dB, the table-based
    /// error model.
    pub fn new(width_m: f64, height_m: f64) -> Self {
        ChannelConfig {
            width_m,
            height_m,
            ap: None,
            exponent: DEFAULT_EXPONENT,
            reference_loss: ReferenceLoss::Db(NS3_REFERENCE_LOSS_DB),
            shadowing_db: 0.0,
            tx_power_dbm: DEFAULT_TX_POWER_DBM,
            noise_figure_db: DEFAULT_NOISE_FIGURE_DB,
            error_model: ErrorModel::Table,
        }
    }

    /// Checks every parameter; the message names the one out of range.
    pub fn validate(&self) -> Result<(), String> {
        let positive = |v: f64| v.is_finite() && v > 0.0;
        if !positive(self.width_m) || !positive(self.height_m) {
            return Err(format!(
                "area {} × {} m must have finite positive sides",
                self.width_m, self.height_m
            ));
        }
        if let Some(ap) = self.ap {
            if !ap.x.is_finite() || !ap.y.is_finite() {
                return Err(format!("AP position ({}, {}) must be finite", ap.x, ap.y));
            }
        }
        if !positive(self.exponent) {
            return Err(format!(
                "path-loss exponent {} must be positive",
                self.exponent
            ));
        }
        if let ReferenceLoss::Db(db) = self.reference_loss {
            if !db.is_finite() {
                return Err(format!("reference loss {db} dB must be finite"));
            }
        }
        if !(self.shadowing_db.is_finite() && self.shadowing_db >= 0.0) {
            return Err(format!(
                "shadowing σ {} dB must be finite and not negative",
                self.shadowing_db
            ));
        }
        if !self.tx_power_dbm.is_finite() {
            return Err(format!(
                "transmit power {} dBm must be finite",
                self.tx_power_dbm
            ));
        }
        if !(self.noise_figure_db.is_finite() && self.noise_figure_db >= 0.0) {
            return Err(format!(
                "noise figure {} dB must be finite and not negative",
                self.noise_figure_db
            ));
        }
        Ok(())
    }
}

/// Free-space loss `20·log₁₀(4π·d·f/c)` (dB) at `distance_m` and `carrier_hz`.
pub fn free_space_loss_db(distance_m: f64, carrier_hz: f64) -> f64 {
    20.0 * (4.0 * PI * distance_m * carrier_hz / SPEED_OF_LIGHT).log10()
}

/// Log-distance loss `PL(d₀) + 10·n·log₁₀(d/d₀)` (dB) with `PL(d₀)` = `reference_db`, `d₀` = 1 m;
/// distances under `d₀` count as `d₀`.
pub fn log_distance_loss_db(distance_m: f64, reference_db: f64, exponent: f64) -> f64 {
    let d = distance_m.max(REFERENCE_DISTANCE_M);
    reference_db + 10.0 * exponent * (d / REFERENCE_DISTANCE_M).log10()
}

/// Noise floor `−174 dBm/Hz + 10·log₁₀(B) + NF` (dBm).
pub fn noise_floor_dbm(bandwidth_hz: f64, noise_figure_db: f64) -> f64 {
    THERMAL_NOISE_DBM_PER_HZ + 10.0 * bandwidth_hz.log10() + noise_figure_db
}

/// The complementary error function `erfc(x) = 1 − erf(x)`, to a few units in the last place of
/// an `f64` relative to the result for `x ≥ 0`.
///
/// For `x < 2` through the series `erf(x) = 2/√π · e^{−x²} · Σₙ 2ⁿ x^{2n+1} / (1·3·…·(2n+1))`
/// (positive terms, no cancellation); above, through the continued fraction
/// `erfc(x) = e^{−x²}/√π · 1/(x + ½/(x + 1/(x + (3/2)/(x + 2/(x + …)))))`, evaluated by the
/// modified Lentz method. `erfc(−x) = 2 − erfc(x)`.
pub fn erfc(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    if x < 0.0 {
        return 2.0 - erfc(-x);
    }
    if x >= 27.3 {
        // e^{−x²} underflows: erfc(27.3) < 1e-325.
        return 0.0;
    }
    let x2 = x * x;
    if x < 2.0 {
        let mut term = x;
        let mut sum = x;
        let mut n = 0u32;
        while term > sum * 1e-17 {
            n += 1;
            term *= 2.0 * x2 / f64::from(2 * n + 1);
            sum += term;
        }
        return 1.0 - 2.0 / PI.sqrt() * (-x2).exp() * sum;
    }
    // f = x + a₁/(x + a₂/(x + …)), aₖ = k/2.
    const TINY: f64 = 1e-300;
    let mut f = x;
    let mut c = f;
    let mut d = 0.0;
    for k in 1..1000u32 {
        let a = f64::from(k) / 2.0;
        d = x + a * d;
        if d == 0.0 {
            d = TINY;
        }
        d = 1.0 / d;
        c = x + a / c;
        if c == 0.0 {
            c = TINY;
        }
        let delta = c * d;
        f *= delta;
        if (delta - 1.0).abs() < 1e-16 {
            break;
        }
    }
    (-x2).exp() / (PI.sqrt() * f)
}

/// Uncoded bit error rate of `constellation` at SNR per symbol `snr_linear` (NIST model).
pub fn bit_error_rate(snr_linear: f64, constellation: Constellation) -> f64 {
    match constellation {
        Constellation::Bpsk => 0.5 * erfc(snr_linear.sqrt()),
        Constellation::Qpsk => 0.5 * erfc((snr_linear / 2.0).sqrt()),
        Constellation::Qam16 | Constellation::Qam64 | Constellation::Qam256 => {
            let m = f64::from(constellation.points());
            let root = m.sqrt();
            (root - 1.0) / (root * root.log2())
                * erfc((3.0 * snr_linear / (2.0 * (m - 1.0))).sqrt())
        }
    }
}

/// Information-bit weights `β_d` of the error events of the K = 7 convolutional code at each
/// rate, from the free distance up (`(first d, step, weights)`).
fn distance_spectrum(code_rate: CodeRate) -> (i32, i32, &'static [f64]) {
    match code_rate {
        CodeRate::Half => (
            10,
            2,
            &[
                36.0,
                211.0,
                1_404.0,
                11_633.0,
                77_433.0,
                502_690.0,
                3_322_763.0,
                21_292_910.0,
                134_365_911.0,
            ],
        ),
        CodeRate::TwoThirds => (
            6,
            1,
            &[
                3.0,
                70.0,
                285.0,
                1_276.0,
                6_160.0,
                27_128.0,
                117_019.0,
                498_860.0,
                2_103_891.0,
                8_784_123.0,
            ],
        ),
        CodeRate::ThreeQuarters => (
            5,
            1,
            &[
                42.0,
                201.0,
                1_492.0,
                10_469.0,
                62_935.0,
                379_644.0,
                2_253_373.0,
                13_073_811.0,
                75_152_755.0,
                428_005_675.0,
            ],
        ),
        CodeRate::FiveSixths => (
            4,
            1,
            &[
                92.0,
                528.0,
                8_694.0,
                79_453.0,
                792_114.0,
                7_375_573.0,
                67_884_974.0,
                610_875_423.0,
                5_427_275_376.0,
                47_664_215_639.0,
            ],
        ),
    }
}

/// Union bound on the decoder's error-event probability per bit, `1/(2k)·Σ β_d·D^d` with
/// `D = √(4p(1−p))`, for an uncoded bit error rate `ber` (not capped at 1).
pub fn coded_error_probability(ber: f64, code_rate: CodeRate) -> f64 {
    let d = (4.0 * ber * (1.0 - ber)).sqrt();
    let (first, step, weights) = distance_spectrum(code_rate);
    let k = match code_rate {
        CodeRate::Half => 1.0,
        CodeRate::TwoThirds => 2.0,
        CodeRate::ThreeQuarters => 3.0,
        CodeRate::FiveSixths => 5.0,
    };
    let sum: f64 = weights
        .iter()
        .enumerate()
        .map(|(i, w)| w * d.powi(first + step * i as i32))
        .sum();
    sum / (2.0 * k)
}

/// Probability that `bits` coded bits sent with `mode` at SNR `snr_linear` are all decoded:
/// `(1 − min(P_e, 1))^bits` (NIST model; 1 when the uncoded bit error rate is 0).
pub fn success_probability(snr_linear: f64, mode: Mode, bits: u64) -> f64 {
    if bits == 0 {
        return 1.0;
    }
    let ber = bit_error_rate(snr_linear, mode.constellation);
    if ber.is_nan() {
        return f64::NAN;
    }
    if ber == 0.0 {
        return 1.0;
    }
    let pe = coded_error_probability(ber, mode.code_rate);
    if pe >= 1.0 {
        return 0.0;
    }
    (bits as f64 * (-pe).ln_1p()).exp()
}

/// The frames of one BSS: the PHY configuration and every station's SNR to the access point.
///
/// Station 0 is the AP, stations `1..=stations()` its associated stations; a frame between the
/// AP and station `k` (either way) sees station `k`'s SNR. A frame between two stations is
/// relayed by the AP in an infrastructure BSS: the answer is for the sender's link (its first
/// hop).
#[derive(Debug, Clone)]
pub struct WifiFrames {
    phy: PhyConfig,
    placement: Option<Placement>,
    shadowing_db: Vec<f64>,
    snr_db: Vec<f64>,
    noise_dbm: f64,
    radio: Option<Radio>,
    error_model: ErrorModel,
}

impl WifiFrames {
    /// A BSS of `stations` stations (besides the AP) placed at random in the area of `channel`
    /// (streams `"wifi NAME placement"`, `"wifi NAME shadowing"` and `"wifi NAME pair
    /// shadowing"`).
    pub fn new(
        phy: PhyConfig,
        channel: ChannelConfig,
        stations: usize,
        streams: &Streams,
        name: &str,
    ) -> Result<Self, String> {
        let placement = Placement::random(
            channel.width_m,
            channel.height_m,
            channel.ap,
            stations,
            streams,
            name,
        );
        WifiFrames::placed(phy, channel, placement, streams, name)
    }

    /// A BSS with its stations where `placement` puts them (the area of `channel` is not used;
    /// shadowing as in [`WifiFrames::new`]). Its [`FrameModel::radio`] holds the powers between
    /// every pair of stations when there are fewer than [`MAX_RADIO_STATIONS`] of them, the AP
    /// included (`None` above).
    pub fn placed(
        phy: PhyConfig,
        channel: ChannelConfig,
        placement: Placement,
        streams: &Streams,
        name: &str,
    ) -> Result<Self, String> {
        phy.validate()?;
        channel.validate()?;
        if let Some(p) = placement
            .stations
            .iter()
            .chain([&placement.ap])
            .find(|p| !p.x.is_finite() || !p.y.is_finite())
        {
            return Err(format!("position ({}, {}) must be finite", p.x, p.y));
        }
        let stations = placement.stations.len();
        let mut rng = streams.stream(&format!("wifi {name} shadowing"));
        let shadowing_db: Vec<f64> = (0..stations)
            .map(|_| channel.shadowing_db * rng.normal())
            .collect();
        let with_radio = stations < MAX_RADIO_STATIONS;
        // Pair (i, j), 1 ≤ i < j ≤ stations, is draw (i − 1)·stations − i·(i − 1)/2 + (j − i − 1).
        let pair_shadowing_db: Vec<f64> = if with_radio && channel.shadowing_db > 0.0 {
            let mut rng = streams.stream(&format!("wifi {name} pair shadowing"));
            (0..stations * stations.saturating_sub(1) / 2)
                .map(|_| channel.shadowing_db * rng.normal())
                .collect()
        } else {
            Vec::new()
        };
        let shadow = |a: usize, b: usize| -> f64 {
            let (i, j) = (a.min(b), a.max(b));
            match i {
                0 => shadowing_db[j - 1],
                _ => pair_shadowing_db
                    .get((i - 1) * stations - i * (i - 1) / 2 + (j - i - 1))
                    .copied()
                    .unwrap_or(0.0),
            }
        };
        let reference_db = channel.reference_loss.db(phy.carrier_hz());
        let rx_dbm = |a: usize, b: usize| {
            let d = placement.station(a).distance(placement.station(b));
            channel.tx_power_dbm
                - log_distance_loss_db(d, reference_db, channel.exponent)
                - shadow(a, b)
        };
        let noise = noise_floor_dbm(f64::from(phy.width_mhz()) * 1e6, channel.noise_figure_db);
        let snr_db = (1..=stations).map(|k| rx_dbm(k, 0) - noise).collect();
        let radio = with_radio.then(|| Radio::new(stations + 1, noise, rx_dbm));
        Ok(WifiFrames {
            phy,
            shadowing_db,
            snr_db,
            noise_dbm: noise,
            radio,
            error_model: channel.error_model,
            placement: Some(placement),
        })
    }

    /// A BSS whose station `k + 1` has SNR `snr_db[k]` (dB; `f64::INFINITY` for an error-free
    /// link), without positions, with the default (table-based) error model.
    pub fn with_snr_db(phy: PhyConfig, snr_db: Vec<f64>) -> Result<Self, String> {
        phy.validate()?;
        if let Some(bad) = snr_db
            .iter()
            .find(|s| s.is_nan() || **s == f64::NEG_INFINITY)
        {
            return Err(format!("SNR {bad} dB: must be a number above −∞"));
        }
        Ok(WifiFrames {
            phy,
            placement: None,
            shadowing_db: Vec::new(),
            snr_db,
            noise_dbm: noise_floor_dbm(f64::from(phy.width_mhz()) * 1e6, DEFAULT_NOISE_FIGURE_DB),
            radio: None,
            error_model: ErrorModel::default(),
        })
    }

    /// A BSS of `stations` error-free links (every frame sent alone is received).
    pub fn ideal(phy: PhyConfig, stations: usize) -> Result<Self, String> {
        WifiFrames::with_snr_db(phy, vec![f64::INFINITY; stations])
    }

    /// The same BSS with `model` deciding frame errors.
    pub fn with_error_model(self, model: ErrorModel) -> Self {
        WifiFrames {
            error_model: model,
            ..self
        }
    }

    /// The PHY configuration.
    pub fn phy(&self) -> &PhyConfig {
        &self.phy
    }

    /// Stations besides the AP.
    pub fn stations(&self) -> usize {
        self.snr_db.len()
    }

    /// Positions, when the stations were placed.
    pub fn placement(&self) -> Option<&Placement> {
        self.placement.as_ref()
    }

    /// Each placed station's shadowing draw (dB), `[k]` for station `k + 1`; empty without
    /// placement.
    pub fn shadowing_db(&self) -> &[f64] {
        &self.shadowing_db
    }

    /// SNR (dB) of the link between the AP and station `station` (1-based).
    ///
    /// # Panics
    /// If `station` is 0 or above [`WifiFrames::stations`].
    pub fn snr_db(&self, station: usize) -> f64 {
        assert!(
            (1..=self.stations()).contains(&station),
            "station {station} is not one of 1..={}",
            self.stations()
        );
        self.snr_db[station - 1]
    }

    /// Probability that the ACK answering a correctly received frame from `from` to `to` is
    /// received in turn (not used by [`FrameModel`], whose medium never loses ACKs).
    pub fn ack_success_probability(&self, from: usize, to: usize) -> f64 {
        let snr = self.link_snr(from, to);
        let m = self.error_model;
        m.success_probability(snr, Mode::BPSK_HALF, 24)
            * m.success_probability(snr, self.phy.ack_rate().mode(), self.phy.ack_bits())
    }

    /// Linear SNR of the link a frame from `from` to `to` crosses.
    fn link_snr(&self, from: usize, to: usize) -> f64 {
        let station = if from != 0 { from } else { to };
        10f64.powf(self.snr_db(station) / 10.0)
    }
}

impl FrameModel for WifiFrames {
    fn data_airtime(&self, _from: usize, _to: usize, bytes: u32) -> Duration {
        self.phy.data_airtime(bytes)
    }

    fn radio(&self) -> Option<&Radio> {
        self.radio.as_ref()
    }

    fn uplink(&self, station: usize) -> Option<Uplink> {
        let p = self.placement.as_ref()?;
        let at = p.stations.get(station.checked_sub(1)?)?;
        let snr_db = self.snr_db[station - 1];
        Some(Uplink {
            x_m: at.x - p.ap.x,
            y_m: at.y - p.ap.y,
            rx_power_dbm: snr_db + self.noise_dbm,
            snr_db,
        })
    }

    fn payload_offset(&self) -> Duration {
        self.phy.preamble_airtime()
    }

    /// The SIG fields (BPSK ½) at `header_sinr`; the data symbols chunk by chunk, each with its
    /// share of [`PhyConfig::data_bits`] (per spatial stream) at its SINR.
    fn decode_probabilities(&self, bytes: u32, header_sinr: f64, chunks: &[Chunk]) -> (f64, f64) {
        let m = self.error_model;
        let header = m.success_probability(header_sinr, Mode::BPSK_HALF, self.phy.header_bits());
        let streams = u64::from(self.phy.spatial_streams().max(1));
        let bits = (self.phy.data_bits(bytes) / streams) as f64;
        let mode = self.phy.data_mode();
        let payload = chunks
            .iter()
            .map(|c| m.success_probability(c.sinr, mode, (bits * c.fraction).round() as u64))
            .product();
        (header, payload)
    }

    fn ack_airtime(&self, _from: usize, _to: usize) -> Duration {
        self.phy.ack_airtime()
    }

    /// SIG fields and data symbols both decoded, at the sender's link SNR.
    ///
    /// # Panics
    /// If both ends are the AP, or either is not a station of this BSS.
    fn success_probability(&self, from: usize, to: usize, bytes: u32) -> f64 {
        assert!(
            to <= self.stations(),
            "station {to} is not one of 0..={}",
            self.stations()
        );
        let snr = self.link_snr(from, to);
        let streams = u64::from(self.phy.spatial_streams().max(1));
        let m = self.error_model;
        m.success_probability(snr, Mode::BPSK_HALF, self.phy.header_bits())
            * m.success_probability(
                snr,
                self.phy.data_mode(),
                self.phy.data_bits(bytes) / streams,
            )
    }
}

#[cfg(test)]
mod tests {
    use super::super::phy::{Band, Mcs, OfdmRate};
    use super::*;

    #[test]
    fn free_space_loss_at_one_metre() {
        // 4π·d₀·f/c at 2.412 GHz: 12.566371 · 2.412e9 / 299792458 = 101.1036;
        // 20·log₁₀(101.1036) = 20 · 2.004766 = 40.0953 dB.
        // (At exactly 2.400 GHz: 100.6066 → 40.052 dB, the figure usually quoted for "2.4 GHz".)
        assert!((free_space_loss_db(1.0, 2.412e9) - 40.0953).abs() < 1e-4);
        assert!((free_space_loss_db(1.0, 2.4e9) - 40.0520).abs() < 1e-4);
        // 5.18 GHz: 217.1337 → 46.7344 dB. (ns-3's LogDistance default reference loss, 46.6777
        // dB, is the same formula at 5.15 GHz with c rounded to 3e8 m/s.)
        assert!((free_space_loss_db(1.0, 5.18e9) - 46.7344).abs() < 1e-4);
        // Free space doubles the distance: +6.02 dB.
        let twice = free_space_loss_db(2.0, 2.412e9) - free_space_loss_db(1.0, 2.412e9);
        assert!((twice - 20.0 * 2f64.log10()).abs() < 1e-12);
    }

    #[test]
    fn log_distance_and_noise_floor() {
        let pl1 = free_space_loss_db(1.0, 2.412e9);
        // n = 3: +30 dB per decade.
        assert!((log_distance_loss_db(10.0, pl1, 3.0) - (pl1 + 30.0)).abs() < 1e-9);
        assert!((log_distance_loss_db(100.0, pl1, 3.5) - (pl1 + 70.0)).abs() < 1e-9);
        // Under d₀ the loss stays PL(d₀).
        assert_eq!(log_distance_loss_db(0.0, pl1, 3.0), pl1);
        assert_eq!(log_distance_loss_db(0.3, pl1, 3.0), pl1);
        assert_eq!(ReferenceLoss::Friis.db(2.412e9), pl1);
        assert_eq!(
            ReferenceLoss::Db(NS3_REFERENCE_LOSS_DB).db(2.412e9),
            46.6777
        );
        // −174 + 10·log₁₀(20e6) + 7 = −174 + 73.0103 + 7 = −93.9897 dBm.
        assert!((noise_floor_dbm(20e6, 7.0) - (-93.9897)).abs() < 1e-4);
        // Doubling the width adds 3.01 dB.
        let d = noise_floor_dbm(40e6, 7.0) - noise_floor_dbm(20e6, 7.0);
        assert!((d - 10.0 * 2f64.log10()).abs() < 1e-12);
    }

    #[test]
    fn erfc_matches_reference_values() {
        // Reference values from CPython's math.erfc (the C library's erfc), an independent
        // implementation.
        let reference = [
            (0.0, 1.0),
            (0.1, 0.887_537_083_981_715_2),
            (0.5, 0.479_500_122_186_953_5),
            (1.0, 0.157_299_207_050_285_13),
            (1.5, 0.033_894_853_524_689_274),
            (1.99, 0.004_888_586_800_383_003),
            (2.0, 0.004_677_734_981_047_265),
            (2.5, 0.000_406_952_017_444_958_9),
            (3.0, 2.209_049_699_858_543_8e-5),
            (5.0, 1.537_459_794_428_035_1e-12),
            (10.0, 2.088_487_583_762_545e-45),
            (20.0, 5.395_865_611_607_900_5e-176),
        ];
        for (x, want) in reference {
            let got = erfc(x);
            assert!(
                ((got - want) / want).abs() < 1e-13,
                "erfc({x}) = {got}, want {want}"
            );
            // erfc(−x) = 2 − erfc(x).
            assert!((erfc(-x) - (2.0 - want)).abs() < 1e-15);
        }
        assert_eq!(erfc(f64::INFINITY), 0.0);
        assert_eq!(erfc(f64::NEG_INFINITY), 2.0);
        assert!(erfc(f64::NAN).is_nan());
    }

    #[test]
    fn uncoded_bit_error_rates_by_hand() {
        // Every case puts erfc's argument at 1: erfc(1) = 0.15729920705028513.
        let e1 = 0.157_299_207_050_285_13;
        // BPSK at γ = 1 (0 dB): ½·erfc(1) = 0.078649603525.
        assert!((bit_error_rate(1.0, Constellation::Bpsk) - 0.5 * e1).abs() < 1e-15);
        // QPSK at γ = 2: ½·erfc(√(2/2)).
        assert!((bit_error_rate(2.0, Constellation::Qpsk) - 0.5 * e1).abs() < 1e-15);
        // 16-QAM at γ = 10: 3γ/(2·15) = 1; (4 − 1)/(4·2) = 3/8; 3/8·erfc(1) = 0.058987.
        assert!((bit_error_rate(10.0, Constellation::Qam16) - 0.375 * e1).abs() < 1e-15);
        // 64-QAM at γ = 42: 3γ/(2·63) = 1; (8 − 1)/(8·3) = 7/24.
        assert!((bit_error_rate(42.0, Constellation::Qam64) - 7.0 / 24.0 * e1).abs() < 1e-15);
        // 256-QAM at γ = 170: 3γ/(2·255) = 1; (16 − 1)/(16·4) = 15/64.
        assert!((bit_error_rate(170.0, Constellation::Qam256) - 15.0 / 64.0 * e1).abs() < 1e-15);
        // No signal: a coin toss for BPSK.
        assert_eq!(bit_error_rate(0.0, Constellation::Bpsk), 0.5);
    }

    #[test]
    fn coded_bpsk_half_by_hand() {
        // BPSK ½ at γ = 4 (6.02 dB):
        //   p = ½·erfc(2) = ½ · 0.004677734981047265 = 0.0023388674905236327
        //   D = √(4p(1 − p)) = √(0.0093336...) = 0.09661050024475402
        //   Σ β_d D^d: 36·D¹⁰ = 2.5500330517e-9, 211·D¹² = 1.3950007007e-10,
        //     1404·D¹⁴ = 8.663786e-12, 11633·D¹⁶ = 6.700096e-13, 77433·D¹⁸ = 4.16259e-14,
        //     then 2.52e-15, 1.56e-16, 9.3e-18, 5.5e-19: total 2.69891123152274e-9
        //   P_e = ½ · 2.69891123152274e-9 = 1.34945561576137e-9
        //   1000 bits: (1 − P_e)^1000 = 0.99999865054529
        let p = bit_error_rate(4.0, Constellation::Bpsk);
        assert!((p - 0.002_338_867_490_523_632_7).abs() < 1e-17);
        let pe = coded_error_probability(p, CodeRate::Half);
        assert!(((pe - 1.349_455_615_761_37e-9) / pe).abs() < 1e-12, "{pe}");
        let s = success_probability(4.0, Mode::BPSK_HALF, 1000);
        assert!((s - 0.999_998_650_545_29).abs() < 1e-12, "{s}");
        assert_eq!(success_probability(4.0, Mode::BPSK_HALF, 0), 1.0);
    }

    /// The eight OFDM rates, HT MCS 0–7 and VHT MCS 0–9 (80 MHz) as PHY configurations.
    fn all_rates() -> Vec<Vec<PhyConfig>> {
        vec![
            OfdmRate::ALL.into_iter().map(PhyConfig::g).collect(),
            (0..=7).map(|i| PhyConfig::n(Mcs::new(i, 1, 20))).collect(),
            (0..=9).map(|i| PhyConfig::ac(Mcs::new(i, 1, 80))).collect(),
        ]
    }

    fn per(phy: &PhyConfig, snr_db: f64, model: ErrorModel) -> f64 {
        let frames = WifiFrames::with_snr_db(*phy, vec![snr_db])
            .unwrap()
            .with_error_model(model);
        1.0 - frames.success_probability(1, 0, 1500)
    }

    #[test]
    fn per_is_monotone_in_snr_and_extreme_at_the_ends() {
        for (family, model) in all_rates()
            .into_iter()
            .flat_map(|f| [(f.clone(), ErrorModel::Nist), (f, ErrorModel::Table)])
        {
            let per = |phy: &PhyConfig, snr_db| per(phy, snr_db, model);
            for phy in &family {
                let mut last = 1.0;
                for step in 0..=200 {
                    let snr_db = -10.0 + 0.25 * f64::from(step);
                    let p = per(phy, snr_db);
                    assert!((0.0..=1.0).contains(&p), "{phy:?} {snr_db}");
                    assert!(
                        p <= last,
                        "{phy:?}: PER rises from {last} to {p} at {snr_db} dB"
                    );
                    last = p;
                }
                // 40 dB is error-free for every rate; at −5 dB nothing gets through.
                assert!(per(phy, 40.0) < 1e-9, "{phy:?}");
                assert!(per(phy, -5.0) > 1.0 - 1e-6, "{phy:?}");
            }
        }
    }

    #[test]
    fn per_is_monotone_in_rate() {
        use super::super::phy::Rate;
        let near_tie = (Rate::Ofdm(OfdmRate::M9), Rate::Ofdm(OfdmRate::M12));
        for (family, model) in all_rates()
            .into_iter()
            .flat_map(|f| [(f.clone(), ErrorModel::Nist), (f, ErrorModel::Table)])
        {
            for step in 0..=160 {
                let snr_db = 0.25 * f64::from(step);
                let pers: Vec<f64> = family.iter().map(|phy| per(phy, snr_db, model)).collect();
                for j in 1..pers.len() {
                    for i in 0..j {
                        let (slow, fast) = (pers[i], pers[j]);
                        let nine = Rate::Ofdm(OfdmRate::M9);
                        if model == ErrorModel::Table
                            && (family[i].rate == nine || family[j].rate == nine)
                        {
                            // The table model has no curve for 9 Mbit/s (BPSK ¾): the NIST
                            // formulas answer for it, so it is not ordered against the tables.
                            continue;
                        }
                        if (family[i].rate, family[j].rate) == near_tie {
                            // 9 Mbit/s (BPSK ¾) and 12 Mbit/s (QPSK ½) are a near tie in the
                            // NIST model and their order flips (8.3e-8 against 6.8e-8 at
                            // 10 dB): only ask them to stay within a factor 1.5.
                            if slow.max(fast) > 1e-9 {
                                let ratio = fast / slow;
                                assert!((1.0 / 1.5..=1.5).contains(&ratio), "{snr_db} dB");
                            }
                            continue;
                        }
                        assert!(
                            fast >= slow,
                            "{:?} beats {:?} at {snr_db} dB",
                            family[j].rate,
                            family[i].rate
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn placement_is_reproducible_and_inside() {
        let s = Streams::new(7);
        let a = Placement::random(30.0, 20.0, None, 50, &s, "bss");
        assert_eq!(a, Placement::random(30.0, 20.0, None, 50, &s, "bss"));
        assert_ne!(
            a,
            Placement::random(30.0, 20.0, None, 50, &Streams::new(8), "bss")
        );
        assert_ne!(a, Placement::random(30.0, 20.0, None, 50, &s, "other"));
        assert_eq!(a.ap, Position { x: 15.0, y: 10.0 });
        assert!(a
            .stations
            .iter()
            .all(|p| (0.0..=30.0).contains(&p.x) && (0.0..=20.0).contains(&p.y)));
        // More stations leave the first ones where they were.
        let more = Placement::random(30.0, 20.0, None, 80, &s, "bss");
        assert_eq!(more.stations[..50], a.stations[..]);
        let ap = Position { x: 1.0, y: 2.0 };
        assert_eq!(Placement::random(30.0, 20.0, Some(ap), 1, &s, "bss").ap, ap);
        // Uniformity: over 20 000 stations, mean x is 15 ± 0.06 (σ = 30/√12 = 8.66, standard
        // error 8.66/√20000 = 0.061) and mean y 10 ± 0.041; allow 5 standard errors.
        let big = Placement::random(30.0, 20.0, None, 20_000, &s, "uniform");
        let n = big.stations.len() as f64;
        let mean_x = big.stations.iter().map(|p| p.x).sum::<f64>() / n;
        let mean_y = big.stations.iter().map(|p| p.y).sum::<f64>() / n;
        assert!((mean_x - 15.0).abs() < 5.0 * 0.0613, "{mean_x}");
        assert!((mean_y - 10.0).abs() < 5.0 * 0.0409, "{mean_y}");
    }

    #[test]
    fn shadowing_has_the_asked_moments() {
        // 20 000 stations with σ = 8 dB. Sample mean: standard error 8/√20000 = 0.0566 dB.
        // Sample standard deviation: standard error ≈ σ/√(2(n − 1)) = 0.0400 dB. Fraction within
        // ±σ: 0.6827, standard error √(0.6827·0.3173/20000) = 0.00329. Each allowed 5 standard
        // errors (a correct generator fails one of the three with probability ~2e-6).
        let mut channel = ChannelConfig::new(40.0, 40.0);
        channel.shadowing_db = 8.0;
        let phy = PhyConfig::g(OfdmRate::M54);
        let frames = WifiFrames::new(phy, channel, 20_000, &Streams::new(11), "shadow").unwrap();
        let x = frames.shadowing_db();
        let n = x.len() as f64;
        let mean = x.iter().sum::<f64>() / n;
        let sd = (x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
        let within = x.iter().filter(|v| v.abs() <= 8.0).count() as f64 / n;
        assert!(mean.abs() < 5.0 * 0.0566, "mean {mean}");
        assert!((sd - 8.0).abs() < 5.0 * 0.0400, "sd {sd}");
        assert!((within - 0.6827).abs() < 5.0 * 0.00329, "within {within}");
        // Shadowing does not move the stations: same positions as without it.
        let plain = WifiFrames::new(
            phy,
            ChannelConfig::new(40.0, 40.0),
            20_000,
            &Streams::new(11),
            "shadow",
        )
        .unwrap();
        assert_eq!(plain.placement(), frames.placement());
        assert!(plain.shadowing_db().iter().all(|&v| v == 0.0));
    }

    #[test]
    fn snr_is_the_link_budget() {
        let mut channel = ChannelConfig::new(50.0, 50.0);
        channel.shadowing_db = 4.0;
        channel.reference_loss = ReferenceLoss::Friis;
        let phy = PhyConfig::ac(Mcs::new(5, 2, 40));
        let frames = WifiFrames::new(phy, channel, 5, &Streams::new(3), "budget").unwrap();
        let placement = frames.placement().unwrap();
        for station in 1..=5 {
            let d = placement.distance_to_ap(station - 1).max(1.0);
            // PL(1 m) at 5.18 GHz 46.7344 dB, + 30·log₁₀(d), + shadowing; noise in 40 MHz with
            // NF 7: −174 + 76.0206 + 7 = −90.9794 dBm.
            let want = 16.0206 - (46.7344 + 30.0 * d.log10()) - frames.shadowing_db()[station - 1]
                + 90.9794;
            assert!(
                (frames.snr_db(station) - want).abs() < 1e-3,
                "station {station}"
            );
        }
    }

    #[test]
    fn frames_answer_per_link() {
        let phy = PhyConfig::n(Mcs::new(7, 1, 20));
        let frames = WifiFrames::with_snr_db(phy, vec![30.0, 23.0, 10.0])
            .unwrap()
            .with_error_model(ErrorModel::Nist);
        assert_eq!(frames.stations(), 3);
        assert_eq!(frames.data_airtime(1, 0, 1500), phy.data_airtime(1500));
        assert_eq!(frames.ack_airtime(0, 2), phy.ack_airtime());
        for station in 1..=3 {
            // Symmetric link.
            assert_eq!(
                frames.success_probability(station, 0, 1500),
                frames.success_probability(0, station, 1500)
            );
        }
        // Station to station: the sender's link.
        assert_eq!(
            frames.success_probability(3, 1, 1500),
            frames.success_probability(3, 0, 1500)
        );
        // MCS 7 (64-QAM ⅚) at 30 dB: error-free; at 23 dB about a third of 1500-byte frames get
        // through (NIST model: 0.33); at 10 dB none.
        assert!(frames.success_probability(1, 0, 1500) > 0.999_999);
        let mid = frames.success_probability(2, 0, 1500);
        assert!((0.2..0.5).contains(&mid), "{mid}");
        assert!(frames.success_probability(3, 0, 1500) < 1e-6);
        // The ACK (24 Mbit/s, 16-QAM ½) gets through where the data frame often does not.
        assert!(frames.ack_success_probability(0, 2) > 0.999_999);
        // Longer frames fail more.
        assert!(frames.success_probability(2, 0, 100) > frames.success_probability(2, 0, 1500));
        // ns-3's tables put MCS 7's 1458-byte PER at 50 % near 18.8 dB and at 10⁻⁵ by 22.5 dB:
        // at 23 dB every frame gets through.
        let table = frames.clone().with_error_model(ErrorModel::Table);
        assert_eq!(table.success_probability(2, 0, 1500), 1.0);
        let ideal = WifiFrames::ideal(phy, 4).unwrap();
        assert!((1..=4).all(|s| ideal.success_probability(s, 0, 65_000) == 1.0));
        assert_eq!(ideal.ack_success_probability(2, 0), 1.0);
    }

    #[test]
    #[should_panic(expected = "not one of")]
    fn asking_about_a_missing_station_panics() {
        let frames = WifiFrames::ideal(PhyConfig::g(OfdmRate::M6), 2).unwrap();
        frames.success_probability(3, 0, 100);
    }

    #[test]
    fn configuration_errors() {
        let phy = PhyConfig::g(OfdmRate::M6);
        let s = Streams::new(1);
        let with = |f: &dyn Fn(&mut ChannelConfig)| {
            let mut c = ChannelConfig::new(10.0, 10.0);
            f(&mut c);
            WifiFrames::new(phy, c, 3, &s, "x")
        };
        assert!(with(&|_| {}).is_ok());
        assert!(with(&|c| c.width_m = 0.0).is_err());
        assert!(with(&|c| c.height_m = f64::NAN).is_err());
        assert!(with(&|c| c.exponent = -1.0).is_err());
        assert!(with(&|c| c.shadowing_db = -2.0).is_err());
        assert!(with(&|c| c.tx_power_dbm = f64::INFINITY).is_err());
        assert!(with(&|c| c.noise_figure_db = f64::NAN).is_err());
        assert!(with(&|c| c.ap = Some(Position {
            x: f64::NAN,
            y: 0.0
        }))
        .is_err());
        let bad_phy = PhyConfig {
            band: Band::Ghz5,
            ..phy
        };
        assert!(WifiFrames::new(bad_phy, ChannelConfig::new(10.0, 10.0), 3, &s, "x").is_err());
        assert!(WifiFrames::with_snr_db(phy, vec![f64::NAN]).is_err());
        assert!(WifiFrames::with_snr_db(phy, vec![-20.0]).is_ok());
        assert_eq!(WifiFrames::ideal(phy, 0).unwrap().stations(), 0);
    }
}
