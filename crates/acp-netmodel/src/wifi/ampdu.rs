//! A-MPDU and A-MSDU framing of 802.11ac (VHT) data and the airtime of an aggregate
//! (IEEE 802.11-2016 §9.3.2.2 A-MSDU, §9.7 A-MPDU, §21.4.3 TXTIME).
//!
//! # Framing
//!
//! - **MPDU.** A QoS data frame: MAC header (24 bytes + 2 for QoS Control), its body and the
//!   4-byte FCS. Carrying one MSDU (an IP packet) the body is the 8-byte LLC/SNAP header and the
//!   packet. Carrying an **A-MSDU** of several MSDUs the body is one subframe per MSDU: a 14-byte
//!   subframe header (DA, SA, length), the LLC/SNAP header and the packet, every subframe but
//!   the last padded to a multiple of 4 bytes. An MPDU is at most [`VHT_MAX_MPDU_BYTES`].
//! - **A-MPDU.** One subframe per MPDU: the 4-byte MPDU delimiter and the MPDU, every subframe
//!   but the last padded to a multiple of 4 bytes. The padding after the last subframe (EOF
//!   delimiters and pad bits up to the last symbol) fills symbols that are counted anyway and
//!   adds no airtime. This length is the TXVECTOR's `APEP_LENGTH`; an A-MPDU is at most
//!   [`VHT_MAX_AMPDU_BYTES`] (maximum A-MPDU length exponent 7).
//! - **Airtime.** `N_SYM = ⌈(8·APEP_LENGTH + 16 + 6·N_ES) / N_DBPS⌉` data symbols after the VHT
//!   preamble ([`PhyConfig::ppdu_airtime`]). A PPDU lasts at most [`PPDU_MAX_TIME`]
//!   (aPPDUMaxTime, 5.484 ms), which bounds the aggregate as much as the MPDU count does.
//!
//! A single MPDU is sent as an A-MPDU of one subframe (a VHT single MPDU), which is exactly
//! [`PhyConfig::psdu_bytes`]: the one-frame medium's airtime and this module's agree.
//!
//! [`Aggregation`] holds the limits of one transmitter and [`plan`] decides how many MPDUs of a
//! queue go into the next A-MPDU.

use std::time::Duration;

use super::phy::MPDU_DELIMITER_BYTES;
use super::phy::{PhyConfig, FCS_BYTES, LLC_SNAP_BYTES, MAC_HEADER_BYTES, QOS_CONTROL_BYTES};

/// aPPDUMaxTime of the VHT PHY: 5.484 ms.
pub const PPDU_MAX_TIME: Duration = Duration::from_micros(5_484);
/// Largest VHT A-MPDU (maximum A-MPDU length exponent 7: 2^(13+7) − 1 bytes).
pub const VHT_MAX_AMPDU_BYTES: u64 = 1_048_575;
/// Largest VHT MPDU (maximum MPDU length capability 2).
pub const VHT_MAX_MPDU_BYTES: u64 = 11_454;
/// A-MSDU subframe header: DA, SA and length.
pub const AMSDU_SUBFRAME_HEADER_BYTES: u64 = 14;
/// The block ACK window (and so the most MPDUs in one A-MPDU) of an HT/VHT block ACK agreement.
pub const BLOCK_ACK_WINDOW: usize = 64;

/// Aggregation limits of a transmitter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Aggregation {
    /// MPDUs per A-MPDU at most (`N_max` when every MPDU holds one packet), 1–64.
    pub max_mpdus: usize,
    /// MSDUs per MPDU at most: 1 sends no A-MSDUs; 2 with 64 MPDUs aggregates 128 packets.
    pub msdus_per_mpdu: usize,
    /// Longest PPDU, at most [`PPDU_MAX_TIME`].
    pub max_duration: Duration,
}

impl Default for Aggregation {
    /// 64 MPDUs of one MSDU each, 5.484 ms.
    fn default() -> Self {
        Aggregation {
            max_mpdus: BLOCK_ACK_WINDOW,
            msdus_per_mpdu: 1,
            max_duration: PPDU_MAX_TIME,
        }
    }
}

impl Aggregation {
    /// Packets (MSDUs) per A-MPDU at most.
    pub fn max_packets(&self) -> usize {
        self.max_mpdus * self.msdus_per_mpdu
    }

    /// Checks the limits; the message names the one out of range.
    pub fn validate(&self) -> Result<(), String> {
        if !(1..=BLOCK_ACK_WINDOW).contains(&self.max_mpdus) {
            return Err(format!(
                "{} MPDUs per A-MPDU: 1–{BLOCK_ACK_WINDOW} (the block ACK window)",
                self.max_mpdus
            ));
        }
        if !(1..=MAX_MSDUS_PER_MPDU).contains(&self.msdus_per_mpdu) {
            return Err(format!(
                "{} MSDUs per A-MSDU: 1–{MAX_MSDUS_PER_MPDU}",
                self.msdus_per_mpdu
            ));
        }
        if self.max_duration.is_zero() || self.max_duration > PPDU_MAX_TIME {
            return Err(format!(
                "A-MPDU duration {:?} must be positive and at most {PPDU_MAX_TIME:?}",
                self.max_duration
            ));
        }
        Ok(())
    }
}

/// Most MSDUs one A-MSDU may hold here (seven 1500-byte packets fill an 11454-byte MPDU).
pub const MAX_MSDUS_PER_MPDU: usize = 16;

/// Rounds up to a multiple of 4 bytes.
fn pad4(bytes: u64) -> u64 {
    bytes.div_ceil(4) * 4
}

/// Bytes of an MPDU carrying the packets (MSDUs) of `payloads` (one: a plain QoS data frame;
/// several: an A-MSDU), MAC header and FCS included; `qos` adds QoS Control.
pub fn mpdu_bytes(qos: bool, payloads: &[u32]) -> u64 {
    let mut header = u64::from(MAC_HEADER_BYTES + FCS_BYTES);
    if qos {
        header += u64::from(QOS_CONTROL_BYTES);
    }
    let body = match payloads {
        [one] => u64::from(LLC_SNAP_BYTES) + u64::from(*one),
        many => {
            let sub = |p: &u32| AMSDU_SUBFRAME_HEADER_BYTES + u64::from(LLC_SNAP_BYTES + *p);
            let padded: u64 = many.iter().map(|p| pad4(sub(p))).sum();
            // The last subframe is not padded.
            padded - many.last().map_or(0, |p| pad4(sub(p)) - sub(p))
        }
    };
    header + body
}

/// `APEP_LENGTH` of an A-MPDU whose MPDUs have the lengths `mpdus`: delimiter and MPDU per
/// subframe, all but the last padded to 4 bytes.
pub fn ampdu_bytes(mpdus: &[u64]) -> u64 {
    let mut total = 0;
    for (i, m) in mpdus.iter().enumerate() {
        let sub = u64::from(MPDU_DELIMITER_BYTES) + m;
        total += if i + 1 == mpdus.len() { sub } else { pad4(sub) };
    }
    total
}

/// An A-MPDU that is being filled one MPDU at a time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AmpduLength {
    /// MPDUs so far.
    pub mpdus: usize,
    /// `APEP_LENGTH` so far.
    pub bytes: u64,
}

impl AmpduLength {
    /// The length after appending an MPDU of `mpdu` bytes (the previous last subframe gets its
    /// padding).
    pub fn with(self, mpdu: u64) -> AmpduLength {
        AmpduLength {
            mpdus: self.mpdus + 1,
            bytes: pad4(self.bytes) + u64::from(MPDU_DELIMITER_BYTES) + mpdu,
        }
    }
}

/// The next A-MPDU of a queue: how many of its head MPDUs it takes and how long it lasts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    /// MPDUs taken from the head of the candidates (at least one when there was one).
    pub mpdus: usize,
    /// `APEP_LENGTH`.
    pub bytes: u64,
    /// PPDU airtime.
    pub airtime: Duration,
}

/// Fills an A-MPDU at `phy`'s rate with the head of `mpdus` (lengths in bytes, in sending
/// order) within `limits`: at most `limits.max_mpdus` (and `window`) MPDUs, at most
/// [`VHT_MAX_AMPDU_BYTES`], and lasting at most `limits.max_duration`. The first MPDU is always
/// taken, however long, so that every frame can be sent.
pub fn plan(phy: &PhyConfig, limits: &Aggregation, window: usize, mpdus: &[u64]) -> Plan {
    let most = limits.max_mpdus.min(window).max(1);
    let mut length = AmpduLength::default();
    for &m in mpdus.iter().take(most) {
        let next = length.with(m);
        let fits = next.bytes <= VHT_MAX_AMPDU_BYTES
            && phy.ppdu_airtime(next.bytes) <= limits.max_duration;
        if length.mpdus > 0 && !fits {
            break;
        }
        length = next;
    }
    Plan {
        mpdus: length.mpdus,
        bytes: length.bytes,
        airtime: phy.ppdu_airtime(length.bytes),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wifi::phy::Mcs;

    fn us(micros: u64) -> Duration {
        Duration::from_micros(micros)
    }

    #[test]
    fn mpdu_and_amsdu_lengths_by_hand() {
        // QoS data, one 1500-byte packet: 26 + 8 + 1500 + 4.
        assert_eq!(mpdu_bytes(true, &[1500]), 1538);
        assert_eq!(mpdu_bytes(false, &[1500]), 1536);
        // A-MSDU of two: subframes 14 + 8 + 1500 = 1522 (padded to 1524) and 1522 unpadded.
        assert_eq!(mpdu_bytes(true, &[1500, 1500]), 26 + 1524 + 1522 + 4);
        // Of 100 and 1: 122 (already a multiple of 4) and 23.
        assert_eq!(mpdu_bytes(true, &[100, 1]), 26 + 124 + 23 + 4);
        // A single-MPDU A-MPDU is the one-frame medium's PSDU.
        let phy = PhyConfig::ac(Mcs::new(9, 2, 80));
        assert_eq!(
            ampdu_bytes(&[mpdu_bytes(true, &[1500])]),
            phy.psdu_bytes(1500)
        );
    }

    #[test]
    fn ampdu_length_pads_all_but_the_last_subframe() {
        // 4 + 1538 = 1542 → 1544 for every subframe but the last.
        assert_eq!(ampdu_bytes(&[1538; 32]), 31 * 1544 + 1542);
        assert_eq!(ampdu_bytes(&[1536, 1537]), 1540 + 1541);
        let mut acc = AmpduLength::default();
        for m in [1538, 7, 1536, 90] {
            acc = acc.with(m);
        }
        assert_eq!(acc.bytes, ampdu_bytes(&[1538, 7, 1536, 90]));
        assert_eq!(acc.mpdus, 4);
    }

    /// 802.11-2016 §21.4.3: T = 36 µs + 4 µs·N_VHT-LTF (L-STF, L-LTF, L-SIG, VHT-SIG-A, VHT-STF,
    /// VHT-LTFs, VHT-SIG-B = 16 + 4 + 8 + 4 + 4·N_LTF + 4) + N_SYM·T_SYM, worked by hand.
    #[test]
    fn aggregate_airtime_by_the_standards_formula() {
        // 80 MHz, 2 streams, MCS 9 (256-QAM ⅚): N_DBPS = 234·8·2·5/6 = 3120, N_ES = 2.
        // 32 MPDUs of 1538 bytes: APEP_LENGTH 49406, bits 16 + 395248 + 12 = 395276,
        // N_SYM = ⌈126.69⌉ = 127; T = 36 + 8 + 127·4 = 552 µs (127·3.6 = 457.2 µs with SGI).
        let phy = PhyConfig::ac(Mcs::new(9, 2, 80));
        let limits = Aggregation::default();
        let p = plan(&phy, &limits, 64, &[1538; 32]);
        assert_eq!((p.mpdus, p.bytes), (32, 49_406));
        assert_eq!(p.airtime, us(552));
        let sgi = PhyConfig::ac(Mcs::new(9, 2, 80).short_gi());
        assert_eq!(
            sgi.ppdu_airtime(49_406),
            Duration::from_nanos(44_000 + 457_200)
        );
        // 64 MPDUs: 63·1544 + 1542 = 98814 bytes, bits 16 + 790512 + 12 = 790540,
        // N_SYM = ⌈253.38⌉ = 254, T = 44 + 1016 = 1060 µs.
        let p = plan(&phy, &limits, 64, &[1538; 100]);
        assert_eq!((p.mpdus, p.bytes, p.airtime), (64, 98_814, us(1060)));
        // The block ACK window caps it too.
        assert_eq!(plan(&phy, &limits, 5, &[1538; 100]).mpdus, 5);
    }

    #[test]
    fn the_ppdu_duration_limit_caps_slow_aggregates() {
        // 20 MHz, 1 stream, MCS 0: N_DBPS = 26, N_ES = 1, preamble 36 + 4 = 40 µs.
        // k MPDUs of 1538 bytes: APEP_LENGTH 1544·k − 2, N_SYM = ⌈(16 + 8·(1544k − 2) + 6)/26⌉.
        // k = 2: ⌈24710/26⌉ = 951 symbols, 40 + 3804 = 3844 µs; k = 3: ⌈37062/26⌉ = 1426
        // symbols, 5744 µs > 5484 µs.
        let phy = PhyConfig::ac(Mcs::new(0, 1, 20));
        let p = plan(&phy, &Aggregation::default(), 64, &[1538; 64]);
        assert_eq!((p.mpdus, p.airtime), (2, us(40 + 951 * 4)));
        assert_eq!(phy.ppdu_airtime(3 * 1544 - 2), us(40 + 1426 * 4));
        // A shorter limit, and a first MPDU longer than the limit is still sent.
        let short = Aggregation {
            max_duration: us(1000),
            ..Aggregation::default()
        };
        let p = plan(&phy, &short, 64, &[1538; 4]);
        assert_eq!(p.mpdus, 1);
        assert!(p.airtime > us(1000));
        assert_eq!(plan(&phy, &short, 64, &[]).mpdus, 0);
    }

    #[test]
    fn limits_are_validated() {
        assert_eq!(Aggregation::default().validate(), Ok(()));
        assert_eq!(Aggregation::default().max_packets(), 64);
        let amsdu = Aggregation {
            msdus_per_mpdu: 2,
            ..Aggregation::default()
        };
        assert_eq!(amsdu.max_packets(), 128);
        for bad in [
            Aggregation {
                max_mpdus: 0,
                ..Aggregation::default()
            },
            Aggregation {
                max_mpdus: 65,
                ..Aggregation::default()
            },
            Aggregation {
                msdus_per_mpdu: 0,
                ..Aggregation::default()
            },
            Aggregation {
                max_duration: us(5485),
                ..Aggregation::default()
            },
        ] {
            assert!(bad.validate().is_err(), "{bad:?}");
        }
    }
}
