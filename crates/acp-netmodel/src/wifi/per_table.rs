//! ns-3's default frame error model for OFDM, `TableBasedErrorRateModel`: packet error rates
//! read from link-level simulation tables instead of a formula.
//!
//! ns-3 (since 3.33, `src/wifi/model/table-based-error-rate-model.cc`) looks a chunk of a frame up
//! in tables of packet error rate against SNR for an AWGN channel with BCC coding, one curve per
//! modulation and coding (the HT MCS 0–7 and VHT MCS 8–9 pairs; a legacy OFDM rate takes the MCS
//! of its modulation and coding, 12 Mbit/s QPSK ½ being MCS 1), measured on 0.5 dB steps for a
//! 32-byte and a 1458-byte frame. The PER values below are the data of ns-3's
//! `src/wifi/model/reference/error-rate-tables.h` (AWGN link simulations of the MATLAB WLAN
//! Toolbox, as ns-3's wifi documentation describes them); the lookup is ours, written from the
//! rule ns-3 applies:
//!
//! 1. the chunk's size is `max(1, bits / 8)` bytes; below 400 bytes (ns-3's `SizeThreshold`) the
//!    32-byte table is read, from 400 on the 1458-byte one;
//! 2. the SNR in dB is rounded to 0.01 dB; under the curve's first point the PER is 1, over its
//!    last 0, in between linear between the two neighbouring points;
//! 3. a size other than the table's scales it as independent bytes would,
//!    `PER = 1 − (1 − PER_table)^(size / table size)` (IEEE 802.11 document 11-14/0803r1);
//! 4. a PER under 10⁻⁵ counts as 0.
//!
//! BPSK ¾ (802.11a/g's 9 Mbit/s) has no MCS and so no table: ns-3 falls back to its YANS
//! formula there, [`success_probability`] answers `None` and the caller chooses (ours: the
//! NIST formula, [`super::channel::ErrorModel`]).

use super::phy::{CodeRate, Constellation, Mode};

/// Below this many bytes a chunk is looked up in the 32-byte table (ns-3's `SizeThreshold`).
pub const SIZE_THRESHOLD_BYTES: u64 = 400;
/// The small table's frame size (bytes).
pub const SMALL_FRAME_BYTES: u64 = 32;
/// The large table's frame size (bytes).
pub const LARGE_FRAME_BYTES: u64 = 1458;
/// PERs under this count as 0 (ns-3's `TABLED_BASED_ERROR_MODEL_PRECISION`).
pub const PER_FLOOR: f64 = 1e-5;
/// The tables' SNR step (dB).
const STEP_DB: f64 = 0.5;

/// One modulation and coding's curve: PER at `first_db + STEP_DB·i` dB for each `per[i]` (at
/// least two points, the last 0).
struct Curve {
    first_db: f64,
    per: &'static [f64],
}

impl Curve {
    /// PER at `snr_db`: 1 below the first point, 0 above the last, linear in between.
    fn per(&self, snr_db: f64) -> f64 {
        let x = (snr_db - self.first_db) / STEP_DB;
        if x.is_nan() {
            return f64::NAN;
        }
        let last = self.per.len() - 1;
        if x < 0.0 {
            return 1.0;
        }
        if x >= last as f64 {
            return self.per[last];
        }
        let i = x.floor() as usize;
        let (a, b) = (self.per[i], self.per[i + 1]);
        a + (x - i as f64) * (b - a)
    }
}

/// The table row of `mode`: its HT/VHT MCS index, `None` for BPSK ¾.
fn index(mode: Mode) -> Option<usize> {
    use CodeRate::*;
    use Constellation::*;
    Some(match (mode.constellation, mode.code_rate) {
        (Bpsk, Half) => 0,
        (Qpsk, Half) => 1,
        (Qpsk, ThreeQuarters) => 2,
        (Qam16, Half) => 3,
        (Qam16, ThreeQuarters) => 4,
        (Qam64, TwoThirds) => 5,
        (Qam64, ThreeQuarters) => 6,
        (Qam64, FiveSixths) => 7,
        (Qam256, ThreeQuarters) => 8,
        (Qam256, FiveSixths) => 9,
        _ => return None,
    })
}

/// Probability that a chunk of `bits` bits sent with `mode` at SNR (or SINR) `snr_linear` is
/// received (1 − PER); `None` for a modulation and coding without a table (BPSK ¾). Zero bits
/// always succeed.
pub fn success_probability(snr_linear: f64, mode: Mode, bits: u64) -> Option<f64> {
    let row = index(mode)?;
    if bits == 0 {
        return Some(1.0);
    }
    let size = (bits / 8).max(1);
    let (table, table_bytes) = if size < SIZE_THRESHOLD_BYTES {
        (&BCC_32_BYTES, SMALL_FRAME_BYTES)
    } else {
        (&BCC_1458_BYTES, LARGE_FRAME_BYTES)
    };
    let snr_db = (1000.0 * snr_linear.log10()).round() / 100.0;
    let mut per = table[row].per(snr_db);
    if size != table_bytes {
        per = 1.0 - (1.0 - per).powf(size as f64 / table_bytes as f64);
    }
    Some(if per < PER_FLOOR { 1.0 } else { 1.0 - per })
}

// The tables (ns-3's `AwgnErrorTableBcc32` and `AwgnErrorTableBcc1458`): MCS 0–9.
#[rustfmt::skip]
const BCC_32_BYTES: [Curve; 10] = [
    // MCS 0: BPSK ½
    Curve { first_db: -3.5, per: &[1.0, 0.995, 0.9408, 0.8259, 0.5895, 0.3083, 0.1254, 0.0344, 0.0085, 0.0015, 0.00024, 9e-05, 0.0] },
    // MCS 1: QPSK ½
    Curve { first_db: -0.5, per: &[1.0, 0.9921, 0.9671, 0.8349, 0.5874, 0.3169, 0.1182, 0.0364, 0.0085, 0.0016, 0.00026, 3e-05, 0.0] },
    // MCS 2: QPSK ¾
    Curve { first_db: 2.0, per: &[1.0, 0.994, 0.9588, 0.8512, 0.599, 0.3125, 0.1171, 0.0339, 0.0078, 0.0016, 0.00028, 8e-05, 0.0] },
    // MCS 3: 16-QAM ½
    Curve { first_db: 4.0, per: &[1.0, 0.999, 0.998, 0.969, 0.8843, 0.7409, 0.4651, 0.2571, 0.108, 0.0381, 0.0119, 0.0032, 0.00076, 0.00017, 3e-05, 0.0] },
    // MCS 4: 16-QAM ¾
    Curve { first_db: 8.0, per: &[1.0, 0.999, 0.9479, 0.7989, 0.5923, 0.337, 0.1572, 0.0542, 0.0158, 0.004, 0.0011, 0.00027, 9e-05, 0.0] },
    // MCS 5: 64-QAM ⅔
    Curve { first_db: 11.5, per: &[1.0, 0.998, 0.9653, 0.897, 0.7301, 0.5257, 0.3058, 0.1575, 0.0646, 0.0241, 0.0079, 0.0023, 0.00069, 0.00018, 4e-05, 2e-05, 0.0] },
    // MCS 6: 64-QAM ¾
    Curve { first_db: 13.0, per: &[1.0, 0.9901, 0.9625, 0.8398, 0.6866, 0.4634, 0.252, 0.1145, 0.0461, 0.0158, 0.0049, 0.0016, 0.00039, 0.00011, 2e-05, 0.0] },
    // MCS 7: 64-QAM ⅚
    Curve { first_db: 14.0, per: &[1.0, 0.997, 0.9833, 0.9426, 0.8483, 0.6347, 0.4377, 0.2226, 0.1111, 0.044, 0.0173, 0.0053, 0.0019, 0.00052, 0.00016, 4e-05, 0.0] },
    // MCS 8: 256-QAM ¾
    Curve { first_db: 17.5, per: &[1.0, 0.996, 0.9804, 0.9286, 0.8225, 0.675, 0.4414, 0.2666, 0.1338, 0.0595, 0.0245, 0.0091, 0.0032, 0.00098, 0.00033, 0.00014, 4e-05, 0.0] },
    // MCS 9: 256-QAM ⅚
    Curve { first_db: 19.0, per: &[1.0, 0.998, 0.9891, 0.9597, 0.875, 0.7317, 0.5154, 0.3038, 0.1524, 0.0634, 0.0247, 0.0085, 0.0029, 0.001, 0.00017, 0.00014, 2e-05, 0.0] },
];
const BCC_1458_BYTES: [Curve; 10] = [
    // MCS 0: BPSK ½
    Curve {
        first_db: -1.0,
        per: &[
            1.0, 0.994, 0.8185, 0.2908, 0.0663, 0.0112, 0.0015, 0.00015, 1e-05, 0.0,
        ],
    },
    // MCS 1: QPSK ½
    Curve {
        first_db: 2.0,
        per: &[
            1.0, 0.997, 0.7944, 0.3008, 0.0728, 0.012, 0.0015, 0.00023, 0.0,
        ],
    },
    // MCS 2: QPSK ¾
    Curve {
        first_db: 4.5,
        per: &[
            1.0, 0.998, 0.7578, 0.301, 0.0676, 0.0122, 0.0023, 0.00035, 4e-05, 0.0,
        ],
    },
    // MCS 3: 16-QAM ½
    Curve {
        first_db: 7.5,
        per: &[
            1.0, 0.994, 0.8405, 0.4341, 0.1419, 0.0374, 0.0086, 0.0019, 0.00036, 5e-05, 0.0,
        ],
    },
    // MCS 4: 16-QAM ¾
    Curve {
        first_db: 11.0,
        per: &[
            1.0, 0.9269, 0.5139, 0.1826, 0.0465, 0.011, 0.0026, 0.00041, 0.0001, 0.0,
        ],
    },
    // MCS 5: 64-QAM ⅔
    Curve {
        first_db: 14.5,
        per: &[
            1.0, 0.999, 0.9479, 0.6625, 0.2978, 0.1058, 0.0334, 0.0091, 0.0023, 0.00064, 0.00017,
            2e-05, 0.0,
        ],
    },
    // MCS 6: 64-QAM ¾
    Curve {
        first_db: 16.0,
        per: &[
            1.0, 0.995, 0.8796, 0.5139, 0.2091, 0.0639, 0.0186, 0.0046, 0.0013, 0.00023, 2e-05, 0.0,
        ],
    },
    // MCS 7: 64-QAM ⅚
    Curve {
        first_db: 17.5,
        per: &[
            1.0, 0.9785, 0.7393, 0.3375, 0.1234, 0.0355, 0.01, 0.0027, 0.0005, 9e-05, 1e-05, 0.0,
        ],
    },
    // MCS 8: 256-QAM ¾
    Curve {
        first_db: 21.0,
        per: &[
            1.0, 0.998, 0.9399, 0.6709, 0.3525, 0.1376, 0.0475, 0.0154, 0.0052, 0.0015, 0.00036,
            7e-05, 0.0,
        ],
    },
    // MCS 9: 256-QAM ⅚
    Curve {
        first_db: 22.5,
        per: &[
            1.0, 0.999, 0.9506, 0.6847, 0.3261, 0.1248, 0.0409, 0.013, 0.0036, 0.00082, 0.0001,
            2e-05, 1e-05, 0.0,
        ],
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    fn db(v: f64) -> f64 {
        10f64.powf(v / 10.0)
    }

    const QPSK_HALF: Mode = Mode {
        constellation: Constellation::Qpsk,
        code_rate: CodeRate::Half,
    };

    #[test]
    fn grid_points_and_interpolation_by_hand() {
        // 1458 bytes of QPSK ½ (MCS 1): 3.5 dB → PER 0.3008; 3.75 dB halfway to 4.0 dB's 0.0728.
        let bits = 1458 * 8;
        let at = |snr_db| success_probability(db(snr_db), QPSK_HALF, bits).unwrap();
        assert!((at(3.5) - (1.0 - 0.3008)).abs() < 1e-12);
        assert!((at(3.75) - (1.0 - (0.3008 + 0.0728) / 2.0)).abs() < 1e-12);
        // Under the first point (2.0 dB) nothing gets through, past the last (6.0 dB) all.
        assert_eq!(at(1.9), 0.0);
        assert_eq!(at(6.1), 1.0);
        assert_eq!(
            success_probability(f64::INFINITY, QPSK_HALF, bits),
            Some(1.0)
        );
        assert_eq!(success_probability(0.0, QPSK_HALF, bits), Some(0.0));
    }

    #[test]
    fn sizes_scale_the_nearest_table() {
        // 729 bytes at 3.5 dB: the 1458-byte table, PER 1 − (1 − 0.3008)^½.
        let half = success_probability(db(3.5), QPSK_HALF, 729 * 8).unwrap();
        assert!((half - (1.0f64 - 0.3008).sqrt()).abs() < 1e-12);
        // 3 bytes (the L-SIG's 24 bits, BPSK ½) at 0 dB: the 32-byte table's 0.0344, scaled.
        let bpsk = success_probability(1.0, Mode::BPSK_HALF, 24).unwrap();
        assert!((bpsk - (1.0f64 - 0.0344).powf(3.0 / 32.0)).abs() < 1e-12);
        // 399 bytes read the small table, 400 the large one: at 3.0 dB the small one says
        // 0.0364 for 32 bytes, the large one 0.7944 for 1458.
        let small = success_probability(db(3.0), QPSK_HALF, 399 * 8).unwrap();
        let large = success_probability(db(3.0), QPSK_HALF, 400 * 8).unwrap();
        assert!((small - (1.0f64 - 0.0364).powf(399.0 / 32.0)).abs() < 1e-12);
        assert!((large - (1.0f64 - 0.7944).powf(400.0 / 1458.0)).abs() < 1e-12);
    }

    #[test]
    fn tiny_error_rates_count_as_none_and_bpsk_three_quarters_has_no_table() {
        // MCS 0, 1458 bytes, 3.0 dB: PER 10⁻⁵ is not under the floor; 32 bytes of it is.
        let bpsk = |bits| success_probability(db(3.0), Mode::BPSK_HALF, bits).unwrap();
        assert!((bpsk(1458 * 8) - (1.0 - 1e-5)).abs() < 1e-15);
        assert_eq!(bpsk(400 * 8), 1.0);
        let nine = Mode {
            constellation: Constellation::Bpsk,
            code_rate: CodeRate::ThreeQuarters,
        };
        assert_eq!(success_probability(10.0, nine, 1000), None);
    }

    #[test]
    fn every_curve_falls_from_one_to_zero() {
        for table in [&BCC_32_BYTES, &BCC_1458_BYTES] {
            for c in table.iter() {
                assert_eq!(c.per.first(), Some(&1.0));
                assert_eq!(c.per.last(), Some(&0.0));
                assert!(c.per.windows(2).all(|w| w[1] <= w[0]));
            }
        }
    }
}
