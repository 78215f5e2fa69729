//! 802.11 PHY parameter sets, MAC timing and frame airtime, from the standard (IEEE 802.11-2016:
//! clause 17 OFDM, 18 ERP, 19 HT, 21 VHT).
//!
//! A [`PhyConfig`] is a [`Standard`] — 802.11g (ERP-OFDM, 2.4 GHz), 802.11n (HT, 2.4 or 5 GHz) or
//! 802.11ac (VHT, 5 GHz) — with its [`Band`], a data [`Rate`] (one of the eight OFDM rates for g;
//! an [`Mcs`]: index, spatial streams, channel width and guard interval for n and ac), the
//! [`SlotTime`], and whether data frames carry the 2-byte QoS Control field. There is no rate
//! adaptation: every data frame uses the configured rate. [`PhyConfig::validate`] rejects what the
//! standard does not allow; nothing here panics on a configuration that passed it (on one that
//! did not, results are meaningless but still no panic).
//!
//! # Timing
//!
//! | parameter            | g (ERP, 2.4 GHz)     | n at 2.4 GHz         | n at 5 GHz, ac |
//! |----------------------|----------------------|----------------------|----------------|
//! | slot                 | 9 µs (20 µs: `Long`) | 9 µs (20 µs: `Long`) | 9 µs           |
//! | SIFS                 | 10 µs                | 10 µs                | 16 µs          |
//! | signal extension     | 6 µs                 | 6 µs                 | none           |
//! | aCWmin, aCWmax       | 15, 1023             | 15, 1023             | 15, 1023       |
//!
//! `DIFS = SIFS + 2·slot`, `AIFS[AC] = SIFS + AIFSN[AC]·slot`, and `EIFS = SIFS + DIFS + T_ACK(6
//! Mbit/s)` (the ACK at the lowest mandatory rate). The signal extension is idle air the ERP and
//! HT PHYs add after every OFDM PPDU at 2.4 GHz so that a 10 µs SIFS leaves the same 16 µs of
//! decoding time as 5 GHz; it is part of every airtime below.
//!
//! **Slot time of 802.11g.** We default to the 9 µs *short* slot: it is what an ERP-only BSS uses
//! (every station ERP and short-slot capable, as in a simulated BSS of identical g stations), and
//! it is what ns-3 ends up with in that case — its `WifiPhy::Configure80211g` starts from the 20 µs
//! long slot of mixed b/g deployments, and its AP and stations switch to 9 µs on association when
//! all stations are ERP with `ShortSlotTimeSupported` (true by default). [`SlotTime::Long`] (20 µs)
//! models a BSS that also serves 802.11b stations (or ns-3 ad-hoc mode). aCWmin stays 15 either
//! way, as in ns-3.
//!
//! **ACKTimeout** is the standard's `aSIFSTime + aSlotTime + aRxPHYStartDelay`, counted from the
//! end of the data PPDU. We take `aRxPHYStartDelay` as the duration of the ACK's legacy preamble
//! and L-SIG (20 µs) — the time until the receiver can tell an ACK is arriving — which is how ns-3
//! reads it: 39 µs with the 9 µs slot at 2.4 GHz, 45 µs at 5 GHz.
//!
//! # Airtime
//!
//! With `L` the PSDU length in bytes, 16 SERVICE bits and 6 tail bits per BCC encoder:
//!
//! ```text
//! OFDM / ERP:  T = 16 µs (L-STF + L-LTF) + 4 µs (L-SIG) + 4 µs · ⌈(16 + 8·L + 6) / N_DBPS⌉ + T_ext
//! HT mixed:    T = 16 + 4 + 8 (HT-SIG) + 4 (HT-STF) + 4·N_LTF µs
//!                  + T_SYM · ⌈(16 + 8·L + 6·N_ES) / N_DBPS⌉ + T_ext
//! VHT:         T = 16 + 4 + 8 (VHT-SIG-A) + 4 (VHT-STF) + 4·N_LTF + 4 (VHT-SIG-B) µs
//!                  + T_SYM · ⌈(16 + 8·L + 6·N_ES) / N_DBPS⌉
//! ```
//!
//! - `T_SYM` = 4 µs, or 3.6 µs with the short guard interval; `T_ext` = 6 µs at 2.4 GHz, else 0.
//! - `N_DBPS = N_SD · N_BPSCS · R · N_SS`: data subcarriers `N_SD` = 48 (legacy OFDM), 52, 108,
//!   234, 468 (20, 40, 80, 160 MHz); bits per subcarrier `N_BPSCS` = 1, 2, 4, 6, 8 (BPSK, QPSK,
//!   16-, 64-, 256-QAM); coding rate `R`; spatial streams `N_SS`.
//! - `N_LTF` = 1, 2, 4, 4 for `N_SS` = 1, 2, 3, 4 (no STBC).
//! - `N_ES`, the number of BCC encoders: one per 1080 bits of `N_DBPS` for HT (300 Mbit/s with the
//!   short GI) and per 2160 bits for VHT (600 Mbit/s), rounded up — raised further, for VHT, until
//!   it divides `N_DBPS` and `N_CBPS` (this only changes 160 MHz, 4 streams, MCS 7 from 5 to 6).
//!   ns-3 uses the same per-encoder limits.
//!
//! Two readings to know about:
//! - **Short GI.** The standard's L-SIG LENGTH (and VHT's TXTIME) round the short-GI data portion up
//!   to a multiple of 4 µs for the sake of legacy receivers; the PPDU itself ends after
//!   `N_SYM · 3.6 µs`, and that on-air time is what we return (as ns-3 and Linux's ath9k do). The
//!   difference is under 4 µs.
//! - **VHT-SIG-B.** Every VHT PPDU, single-user included, carries the 4 µs VHT-SIG-B field, and we
//!   count it. ns-3 counts it only in multi-user PPDUs, so its VHT single-user airtimes are 4 µs
//!   shorter than ours (see the test against ns-3's table).
//!
//! # Frames
//!
//! A data frame's PSDU is the MAC header (24 bytes, plus 2 for QoS Control when
//! [`PhyConfig::qos`]), the LLC/SNAP header (8 bytes), the payload (the IP packet) and the FCS
//! (4 bytes); a VHT PSDU is always an A-MPDU, which adds a 4-byte MPDU delimiter even for a single
//! MPDU. An ACK is 14 bytes, sent in a legacy OFDM (non-HT) PPDU at the *control response rate*:
//! the highest rate of the basic rate set not above the data frame's rate (802.11-2016, "rate
//! selection for control response frames"). We take the basic rate set to be the mandatory OFDM
//! rates {6, 12, 24} Mbit/s. For an HT or VHT data frame the rate compared is its non-HT reference
//! rate — the legacy rate of the same modulation and coding (BPSK ½ → 6, QPSK ½ → 12, QPSK ¾ → 18,
//! 16-QAM ½ → 24, 16-QAM ¾ → 36, 64-QAM ⅔ → 48, 64-QAM ¾ and ⅚ and 256-QAM → 54) — so the ACK
//! goes at 6 Mbit/s after MCS 0, 12 after MCS 1–2, and 24 after MCS 3 and above.
//!
//! # EDCA defaults and DSCP mapping
//!
//! [`edca_defaults`] gives the default EDCA parameter set of a non-AP station (802.11-2016, Table
//! 9-137), identical for the OFDM, ERP, HT and VHT PHYs (aCWmin = 15, aCWmax = 1023):
//!
//! | AC | AIFSN | CWmin | CWmax | TXOP limit |
//! |----|-------|-------|-------|------------|
//! | BK | 7     | 15    | 1023  | 0 (one frame) |
//! | BE | 3     | 15    | 1023  | 0 (one frame) |
//! | VI | 2     | 7     | 15    | 3.008 ms   |
//! | VO | 2     | 3     | 7     | 1.504 ms   |
//!
//! [`AccessCategory::from_dscp`] maps a DSCP to a user priority as RFC 8325 (Figure 1)
//! recommends, then the user priority to its access category (UP 1, 2 → BK; 0, 3 → BE; 4, 5 → VI;
//! 6, 7 → VO):
//!
//! | DSCP                                  | UP | AC |
//! |---------------------------------------|----|----|
//! | CS7 (56), CS6 (48)                    | 7  | VO |
//! | EF (46), VOICE-ADMIT (44)             | 6  | VO |
//! | CS5 (40)                              | 5  | VI |
//! | AF41–43, CS4, AF31–33, CS3            | 4  | VI |
//! | AF21–23 (18, 20, 22)                  | 3  | BE |
//! | CS2 (16), AF11–13 (10, 12, 14), DF (0)| 0  | BE |
//! | CS1 (8), LE (1, RFC 8622)             | 1  | BK |
//! | every other codepoint                 | 0  | BE |
//!
//! (RFC 8325 §8.2 also suggests mapping CS6 and CS7 to UP 0 where stations are untrusted; we keep
//! Figure 1's mapping.) Only the low six bits of the argument are read, as in [`crate::queue`].

use std::time::Duration;

/// The 802.11 amendment whose PHY is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Standard {
    /// 802.11g: ERP-OFDM at 2.4 GHz, 20 MHz, rates 6–54 Mbit/s.
    G,
    /// 802.11n: HT mixed format, 20 or 40 MHz, 1–4 spatial streams.
    N,
    /// 802.11ac: VHT at 5 GHz, 20–160 MHz, 1–4 spatial streams.
    Ac,
}

/// The frequency band.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Band {
    /// 2.4 GHz (carrier of channel 1, 2.412 GHz).
    Ghz2_4,
    /// 5 GHz (carrier of channel 36, 5.18 GHz).
    Ghz5,
}

/// Slot time at 2.4 GHz (5 GHz always uses 9 µs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SlotTime {
    /// 9 µs: a BSS of ERP (or HT) stations only.
    #[default]
    Short,
    /// 20 µs: a BSS that also serves 802.11b stations.
    Long,
}

/// Modulation of the data subcarriers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Constellation {
    /// BPSK, 1 bit per subcarrier.
    Bpsk,
    /// QPSK, 2 bits.
    Qpsk,
    /// 16-QAM, 4 bits.
    Qam16,
    /// 64-QAM, 6 bits.
    Qam64,
    /// 256-QAM, 8 bits.
    Qam256,
}

impl Constellation {
    /// Bits per subcarrier per symbol (`N_BPSCS`).
    pub fn bits(self) -> u32 {
        match self {
            Constellation::Bpsk => 1,
            Constellation::Qpsk => 2,
            Constellation::Qam16 => 4,
            Constellation::Qam64 => 6,
            Constellation::Qam256 => 8,
        }
    }

    /// Number of constellation points (`2^bits`).
    pub fn points(self) -> u32 {
        1 << self.bits()
    }
}

/// Coding rate of the binary convolutional code (punctured from the rate-½, K = 7 mother code).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CodeRate {
    /// ½.
    Half,
    /// ⅔.
    TwoThirds,
    /// ¾.
    ThreeQuarters,
    /// ⅚.
    FiveSixths,
}

impl CodeRate {
    /// `(numerator, denominator)`.
    pub fn ratio(self) -> (u32, u32) {
        match self {
            CodeRate::Half => (1, 2),
            CodeRate::TwoThirds => (2, 3),
            CodeRate::ThreeQuarters => (3, 4),
            CodeRate::FiveSixths => (5, 6),
        }
    }
}

/// A modulation and coding pair: what the frame error model needs to know about a rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Mode {
    /// Modulation.
    pub constellation: Constellation,
    /// Coding rate.
    pub code_rate: CodeRate,
}

impl Mode {
    const fn new(constellation: Constellation, code_rate: CodeRate) -> Self {
        Mode {
            constellation,
            code_rate,
        }
    }

    /// BPSK ½: the L-SIG, HT-SIG and VHT-SIG fields, and the 6 Mbit/s rate.
    pub const BPSK_HALF: Mode = Mode::new(Constellation::Bpsk, CodeRate::Half);
}

/// The eight OFDM (802.11a/g) data rates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum OfdmRate {
    /// 6 Mbit/s: BPSK ½ (mandatory).
    M6,
    /// 9 Mbit/s: BPSK ¾.
    M9,
    /// 12 Mbit/s: QPSK ½ (mandatory).
    M12,
    /// 18 Mbit/s: QPSK ¾.
    M18,
    /// 24 Mbit/s: 16-QAM ½ (mandatory).
    M24,
    /// 36 Mbit/s: 16-QAM ¾.
    M36,
    /// 48 Mbit/s: 64-QAM ⅔.
    M48,
    /// 54 Mbit/s: 64-QAM ¾.
    M54,
}

impl OfdmRate {
    /// All eight, slowest first.
    pub const ALL: [OfdmRate; 8] = [
        OfdmRate::M6,
        OfdmRate::M9,
        OfdmRate::M12,
        OfdmRate::M18,
        OfdmRate::M24,
        OfdmRate::M36,
        OfdmRate::M48,
        OfdmRate::M54,
    ];

    /// The basic (mandatory) rates, which control responses use.
    pub const BASIC: [OfdmRate; 3] = [OfdmRate::M6, OfdmRate::M12, OfdmRate::M24];

    /// The rate of `mbps` Mbit/s, if it is one of the eight.
    pub fn from_mbps(mbps: u32) -> Option<Self> {
        OfdmRate::ALL.into_iter().find(|r| r.mbps() == mbps)
    }

    /// The rate in Mbit/s.
    pub fn mbps(self) -> u32 {
        match self {
            OfdmRate::M6 => 6,
            OfdmRate::M9 => 9,
            OfdmRate::M12 => 12,
            OfdmRate::M18 => 18,
            OfdmRate::M24 => 24,
            OfdmRate::M36 => 36,
            OfdmRate::M48 => 48,
            OfdmRate::M54 => 54,
        }
    }

    /// Data bits per 4 µs symbol (`N_DBPS`): the rate times 4 µs.
    pub fn bits_per_symbol(self) -> u32 {
        4 * self.mbps()
    }

    /// Modulation and coding.
    pub fn mode(self) -> Mode {
        use CodeRate::*;
        use Constellation::*;
        match self {
            OfdmRate::M6 => Mode::new(Bpsk, Half),
            OfdmRate::M9 => Mode::new(Bpsk, ThreeQuarters),
            OfdmRate::M12 => Mode::new(Qpsk, Half),
            OfdmRate::M18 => Mode::new(Qpsk, ThreeQuarters),
            OfdmRate::M24 => Mode::new(Qam16, Half),
            OfdmRate::M36 => Mode::new(Qam16, ThreeQuarters),
            OfdmRate::M48 => Mode::new(Qam64, TwoThirds),
            OfdmRate::M54 => Mode::new(Qam64, ThreeQuarters),
        }
    }

    /// The legacy rate of the same modulation and coding (the "non-HT reference rate" of an HT or
    /// VHT MCS); 64-QAM ⅚ and 256-QAM map to 54 Mbit/s.
    pub fn reference_for(mode: Mode) -> OfdmRate {
        use CodeRate::*;
        use Constellation::*;
        match (mode.constellation, mode.code_rate) {
            (Bpsk, Half | TwoThirds) => OfdmRate::M6,
            (Bpsk, ThreeQuarters | FiveSixths) => OfdmRate::M9,
            (Qpsk, Half | TwoThirds) => OfdmRate::M12,
            (Qpsk, ThreeQuarters | FiveSixths) => OfdmRate::M18,
            (Qam16, Half | TwoThirds) => OfdmRate::M24,
            (Qam16, ThreeQuarters | FiveSixths) => OfdmRate::M36,
            (Qam64, Half | TwoThirds) => OfdmRate::M48,
            (Qam64, ThreeQuarters | FiveSixths) | (Qam256, _) => OfdmRate::M54,
        }
    }

    /// The control response rate after a frame at this rate: the highest basic rate not above it.
    pub fn control_response(self) -> OfdmRate {
        OfdmRate::BASIC
            .into_iter()
            .filter(|b| *b <= self)
            .max()
            .unwrap_or(OfdmRate::M6)
    }
}

/// An HT or VHT modulation and coding scheme with its stream count, width and guard interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Mcs {
    /// Modulation and coding index, per stream: 0–7 for HT, 0–9 for VHT. (HT numbers its MCSs
    /// across streams: this index with `n` streams is the standard's HT MCS `8·(n − 1) + index`.)
    pub index: u8,
    /// Spatial streams, 1–4.
    pub spatial_streams: u8,
    /// Channel width in MHz: 20 or 40 for HT; 20, 40, 80 or 160 for VHT.
    pub width_mhz: u16,
    /// 400 ns short guard interval (3.6 µs symbols) instead of 800 ns (4 µs).
    pub short_gi: bool,
}

impl Mcs {
    /// MCS `index` with `spatial_streams` streams on `width_mhz` MHz, long guard interval.
    pub fn new(index: u8, spatial_streams: u8, width_mhz: u16) -> Self {
        Mcs {
            index,
            spatial_streams,
            width_mhz,
            short_gi: false,
        }
    }

    /// The same with the short guard interval.
    pub fn short_gi(self) -> Self {
        Mcs {
            short_gi: true,
            ..self
        }
    }

    /// Modulation and coding of `index` (0–9), the same table for HT and VHT.
    pub fn mode(self) -> Option<Mode> {
        use CodeRate::*;
        use Constellation::*;
        Some(match self.index {
            0 => Mode::new(Bpsk, Half),
            1 => Mode::new(Qpsk, Half),
            2 => Mode::new(Qpsk, ThreeQuarters),
            3 => Mode::new(Qam16, Half),
            4 => Mode::new(Qam16, ThreeQuarters),
            5 => Mode::new(Qam64, TwoThirds),
            6 => Mode::new(Qam64, ThreeQuarters),
            7 => Mode::new(Qam64, FiveSixths),
            8 => Mode::new(Qam256, ThreeQuarters),
            9 => Mode::new(Qam256, FiveSixths),
            _ => return None,
        })
    }
}

/// The data rate of a configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Rate {
    /// An OFDM rate (802.11g).
    Ofdm(OfdmRate),
    /// An HT or VHT MCS (802.11n, 802.11ac).
    Mcs(Mcs),
}

/// An access category of EDCA.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AccessCategory {
    /// Background.
    Bk,
    /// Best effort.
    Be,
    /// Video.
    Vi,
    /// Voice.
    Vo,
}

impl AccessCategory {
    /// The four, in the order of [`edca_defaults`] (lowest priority first).
    pub const ALL: [AccessCategory; 4] = [
        AccessCategory::Bk,
        AccessCategory::Be,
        AccessCategory::Vi,
        AccessCategory::Vo,
    ];

    /// Position in [`AccessCategory::ALL`] and in [`edca_defaults`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// Its short name: `bk`, `be`, `vi` or `vo`.
    pub fn name(self) -> &'static str {
        match self {
            AccessCategory::Bk => "bk",
            AccessCategory::Be => "be",
            AccessCategory::Vi => "vi",
            AccessCategory::Vo => "vo",
        }
    }

    /// The access category of 802.1D user priority `up` (802.11-2016 Table 10-1); values above 7
    /// are read modulo 8.
    pub fn from_up(up: u8) -> Self {
        match up & 7 {
            1 | 2 => AccessCategory::Bk,
            0 | 3 => AccessCategory::Be,
            4 | 5 => AccessCategory::Vi,
            _ => AccessCategory::Vo,
        }
    }

    /// The access category of a DSCP, through [`user_priority`] (RFC 8325).
    pub fn from_dscp(dscp: u8) -> Self {
        AccessCategory::from_up(user_priority(dscp))
    }
}

/// The 802.11 user priority RFC 8325 recommends for a DSCP (table in the module documentation).
/// Only the low six bits of `dscp` are read.
pub fn user_priority(dscp: u8) -> u8 {
    match dscp & 63 {
        48 | 56 => 7,                               // CS6, CS7: network control
        44 | 46 => 6,                               // VOICE-ADMIT, EF: telephony
        40 => 5,                                    // CS5: signaling
        24 | 26 | 28 | 30 | 32 | 34 | 36 | 38 => 4, // CS3, AF3x, CS4, AF4x: video, real-time
        18 | 20 | 22 => 3,                          // AF2x: low-latency data
        1 | 8 => 1,                                 // LE, CS1: low-priority data
        _ => 0,                                     // DF, AF1x, CS2 and every unused codepoint
    }
}

/// EDCA parameters of one access category.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AcParams {
    /// AIFS in slots after SIFS: `AIFS = SIFS + aifsn · slot`.
    pub aifsn: u32,
    /// Initial contention window (slots): the backoff is uniform in `0..=cw`.
    pub cw_min: u32,
    /// Largest contention window.
    pub cw_max: u32,
    /// TXOP limit; zero means one MSDU (with its ACK) per channel access.
    pub txop: Duration,
}

impl AcParams {
    /// DCF for OFDM PHYs: DIFS (AIFSN 2), `CWmin` 15, `CWmax` 1023, one frame per access.
    pub const DCF: AcParams = AcParams {
        aifsn: 2,
        cw_min: 15,
        cw_max: 1023,
        txop: Duration::ZERO,
    };
}

/// The default EDCA parameter set of a non-AP station (802.11-2016 Table 9-137), `[BK, BE, VI,
/// VO]`: the same for the three standards, whose PHYs all have aCWmin = 15, aCWmax = 1023.
pub fn edca_defaults(standard: Standard) -> [AcParams; 4] {
    let (a_cw_min, a_cw_max) = match standard {
        Standard::G | Standard::N | Standard::Ac => (A_CW_MIN, A_CW_MAX),
    };
    let ac = |aifsn, cw_min, cw_max, txop_us| AcParams {
        aifsn,
        cw_min,
        cw_max,
        txop: Duration::from_micros(txop_us),
    };
    // The standard's (aCWmin + 1)/2 − 1 and (aCWmin + 1)/4 − 1.
    let share = |parts: u32| (a_cw_min + 1) / parts - 1;
    [
        ac(7, a_cw_min, a_cw_max, 0),
        ac(3, a_cw_min, a_cw_max, 0),
        ac(2, share(2), a_cw_min, 3008),
        ac(2, share(4), share(2), 1504),
    ]
}

/// aCWmin of the OFDM, ERP, HT and VHT PHYs.
const A_CW_MIN: u32 = 15;
/// aCWmax of the same.
const A_CW_MAX: u32 = 1023;

/// Durations in nanoseconds.
const NS_PER_US: u64 = 1_000;
/// L-STF + L-LTF.
const T_LEGACY_TRAINING: u64 = 16 * NS_PER_US;
/// L-SIG.
const T_L_SIG: u64 = 4 * NS_PER_US;
/// HT-SIG (two symbols), and VHT-SIG-A (two symbols).
const T_SIG_A: u64 = 8 * NS_PER_US;
/// HT-STF, VHT-STF.
const T_STF: u64 = 4 * NS_PER_US;
/// One HT-LTF or VHT-LTF.
const T_LTF: u64 = 4 * NS_PER_US;
/// VHT-SIG-B.
const T_VHT_SIG_B: u64 = 4 * NS_PER_US;
/// OFDM symbol with the 800 ns guard interval.
const T_SYM: u64 = 4_000;
/// OFDM symbol with the 400 ns short guard interval.
const T_SYM_SHORT_GI: u64 = 3_600;
/// ERP (and HT at 2.4 GHz) signal extension.
const T_SIGNAL_EXTENSION: u64 = 6 * NS_PER_US;

/// SERVICE field bits at the start of the DATA field.
const SERVICE_BITS: u64 = 16;
/// Tail bits per BCC encoder.
const TAIL_BITS: u64 = 6;
/// Data bits carried by one 4 µs BPSK-½ SIG symbol (48 subcarriers): 6 Mbit/s × 4 µs.
const SIG_BITS_PER_SYMBOL: u64 = 24;

/// MAC header of a data frame (Frame Control, Duration, three addresses, Sequence Control).
pub const MAC_HEADER_BYTES: u32 = 24;
/// QoS Control field of a QoS data frame.
pub const QOS_CONTROL_BYTES: u32 = 2;
/// LLC/SNAP header before the IP packet.
pub const LLC_SNAP_BYTES: u32 = 8;
/// Frame check sequence.
pub const FCS_BYTES: u32 = 4;
/// MPDU delimiter of an A-MPDU subframe (every VHT PSDU is an A-MPDU).
pub const MPDU_DELIMITER_BYTES: u32 = 4;
/// An ACK frame: Frame Control, Duration, RA, FCS.
pub const ACK_BYTES: u32 = 14;

/// A PHY configuration: standard, band, rate, slot and data frame format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PhyConfig {
    /// Which amendment's PHY.
    pub standard: Standard,
    /// Data rate.
    pub rate: Rate,
    /// Band (g: 2.4 GHz; n: either; ac: 5 GHz).
    pub band: Band,
    /// Slot time (`Long` only at 2.4 GHz).
    pub slot: SlotTime,
    /// Data frames are QoS data frames (2 more header bytes). Required for n and ac (HT and VHT
    /// stations are QoS stations); for g, true under EDCA and false under plain DCF.
    pub qos: bool,
}

impl PhyConfig {
    /// 802.11g at `rate`: 2.4 GHz, short slot, non-QoS data frames (DCF).
    pub fn g(rate: OfdmRate) -> Self {
        PhyConfig {
            standard: Standard::G,
            rate: Rate::Ofdm(rate),
            band: Band::Ghz2_4,
            slot: SlotTime::Short,
            qos: false,
        }
    }

    /// 802.11n with `mcs` at 2.4 GHz, short slot, QoS data frames.
    pub fn n(mcs: Mcs) -> Self {
        PhyConfig {
            standard: Standard::N,
            rate: Rate::Mcs(mcs),
            band: Band::Ghz2_4,
            slot: SlotTime::Short,
            qos: true,
        }
    }

    /// 802.11ac with `mcs` (5 GHz, QoS data frames).
    pub fn ac(mcs: Mcs) -> Self {
        PhyConfig {
            standard: Standard::Ac,
            rate: Rate::Mcs(mcs),
            band: Band::Ghz5,
            slot: SlotTime::Short,
            qos: true,
        }
    }

    /// Checks the combination against the standard; the message names what is not allowed.
    pub fn validate(&self) -> Result<(), String> {
        match (self.standard, self.band) {
            (Standard::G, Band::Ghz5) => return Err("802.11g is a 2.4 GHz PHY".into()),
            (Standard::Ac, Band::Ghz2_4) => return Err("802.11ac is a 5 GHz PHY".into()),
            _ => {}
        }
        if self.band == Band::Ghz5 && self.slot == SlotTime::Long {
            return Err("the 20 µs long slot exists only at 2.4 GHz".into());
        }
        if self.standard != Standard::G && !self.qos {
            return Err("HT and VHT stations send QoS data frames (qos must be true)".into());
        }
        let mcs = match (self.standard, self.rate) {
            (Standard::G, Rate::Ofdm(_)) => return Ok(()),
            (Standard::G, Rate::Mcs(_)) => {
                return Err("802.11g takes an OFDM rate (6–54 Mbit/s), not an MCS".into())
            }
            (_, Rate::Ofdm(_)) => return Err("802.11n/ac take an MCS, not an OFDM rate".into()),
            (_, Rate::Mcs(mcs)) => mcs,
        };
        if !(1..=4).contains(&mcs.spatial_streams) {
            return Err(format!(
                "{} spatial streams: 1–4 are supported",
                mcs.spatial_streams
            ));
        }
        let (max_index, widths): (u8, &[u16]) = match self.standard {
            Standard::N => (7, &[20, 40]),
            _ => (9, &[20, 40, 80, 160]),
        };
        if mcs.index > max_index {
            return Err(format!(
                "MCS {} out of range 0–{max_index} (per stream)",
                mcs.index
            ));
        }
        if !widths.contains(&mcs.width_mhz) {
            return Err(format!(
                "channel width {} MHz: {:?} MHz allowed",
                mcs.width_mhz, widths
            ));
        }
        // The VHT MCSs the standard's tables mark "not valid" for up to 4 streams: N_DBPS (or
        // N_DBPS/N_ES, N_CBPS/N_ES) would not be an integer.
        let not_valid = matches!(
            (mcs.width_mhz, mcs.spatial_streams, mcs.index),
            (20, 1 | 2 | 4, 9) | (80, 3, 6) | (160, 3, 9)
        );
        if self.standard == Standard::Ac && not_valid {
            return Err(format!(
                "VHT MCS {} with {} spatial streams is not valid at {} MHz",
                mcs.index, mcs.spatial_streams, mcs.width_mhz
            ));
        }
        Ok(())
    }

    /// Carrier frequency used for path loss: 2.412 GHz (channel 1) or 5.18 GHz (channel 36).
    pub fn carrier_hz(&self) -> f64 {
        match self.band {
            Band::Ghz2_4 => 2.412e9,
            Band::Ghz5 => 5.18e9,
        }
    }

    /// Channel width in MHz (20 for g).
    pub fn width_mhz(&self) -> u16 {
        match self.rate {
            Rate::Ofdm(_) => 20,
            Rate::Mcs(m) => m.width_mhz,
        }
    }

    /// Spatial streams (1 for g).
    pub fn spatial_streams(&self) -> u8 {
        match self.rate {
            Rate::Ofdm(_) => 1,
            Rate::Mcs(m) => m.spatial_streams,
        }
    }

    /// Slot time.
    pub fn slot(&self) -> Duration {
        match (self.band, self.slot) {
            (Band::Ghz2_4, SlotTime::Long) => Duration::from_micros(20),
            _ => Duration::from_micros(9),
        }
    }

    /// SIFS: 10 µs at 2.4 GHz, 16 µs at 5 GHz.
    pub fn sifs(&self) -> Duration {
        match self.band {
            Band::Ghz2_4 => Duration::from_micros(10),
            Band::Ghz5 => Duration::from_micros(16),
        }
    }

    /// DIFS = SIFS + 2·slot.
    pub fn difs(&self) -> Duration {
        self.sifs() + 2 * self.slot()
    }

    /// AIFS of an access category with the default parameters: SIFS + AIFSN·slot.
    pub fn aifs(&self, ac: AccessCategory) -> Duration {
        let aifsn = edca_defaults(self.standard)[ac.index()].aifsn;
        self.sifs() + aifsn * self.slot()
    }

    /// EIFS = SIFS + DIFS + `EstimatedAckTxTime`, the ACK airtime 802.11-2016 Table 10-5 charges
    /// for the PPDU that caused it, as ns-3's `WifiPhy::GetAckTxTime` sets it: at 2.4 GHz (ERP
    /// and HT, whose BSS may hold DSSS stations) 304 µs, an ACK at 1 Mbit/s with the long DSSS
    /// preamble; at 5 GHz 44 µs, an ACK at 6 Mbit/s.
    pub fn eifs(&self) -> Duration {
        self.difs() + self.eifs_beyond_difs()
    }

    /// EIFS − DIFS (ns-3's `EifsNoDifs`): SIFS + `EstimatedAckTxTime` ([`PhyConfig::eifs`]).
    pub fn eifs_beyond_difs(&self) -> Duration {
        let ack = match self.band {
            Band::Ghz2_4 => dsss_airtime(u64::from(ACK_BYTES)),
            Band::Ghz5 => self.legacy_airtime(OfdmRate::M6, u64::from(ACK_BYTES)),
        };
        self.sifs() + ack
    }

    /// Bytes of the beacon ns-3's `ApWifiMac::SendOneBeacon` sends for this PHY (MAC header and
    /// FCS included), element by element (802.11-2016 §9.3.3.3, §9.4.2): timestamp 8, beacon
    /// interval 2, capabilities 2, SSID 2 + [`BEACON_SSID_BYTES`], supported rates 2 + 8; at
    /// 2.4 GHz the extended supported rates (2 + 4: ns-3's 802.11g PHY lists the 4 DSSS/HR and
    /// 8 ERP rates), the DSSS parameter set (3) and the ERP information (3); with QoS the EDCA
    /// parameter set (20); 802.11n adds HT capabilities (28) and HT operation (24), 802.11ac
    /// also VHT capabilities (14) and VHT operation (7).
    pub fn beacon_bytes(&self) -> u64 {
        let mut bytes = u64::from(MAC_HEADER_BYTES + FCS_BYTES) + 8 + 2 + 2;
        bytes += 2 + BEACON_SSID_BYTES + 2 + 8;
        if self.band == Band::Ghz2_4 {
            bytes += (2 + 4) + 3 + 3;
        }
        if self.qos {
            bytes += 20;
        }
        bytes += match self.standard {
            Standard::G => 0,
            Standard::N => 28 + 24,
            Standard::Ac => 28 + 24 + 14 + 7,
        };
        bytes
    }

    /// Airtime of a beacon at ns-3's non-unicast rate, the lowest basic rate: DSSS 1 Mbit/s
    /// ([`dsss_airtime`]) at 2.4 GHz, where ns-3's 802.11g and n PHYs also hold the DSSS
    /// modes; OFDM 6 Mbit/s at 5 GHz.
    pub fn beacon_airtime(&self) -> Duration {
        match self.band {
            Band::Ghz2_4 => dsss_airtime(self.beacon_bytes()),
            Band::Ghz5 => self.legacy_airtime(OfdmRate::M6, self.beacon_bytes()),
        }
    }

    /// Everything before a data frame's data symbols: preamble and PHY headers.
    pub fn preamble_airtime(&self) -> Duration {
        Duration::from_nanos(self.preamble_ns())
    }

    /// The signal extension after every OFDM PPDU: 6 µs at 2.4 GHz, none at 5 GHz.
    pub fn signal_extension(&self) -> Duration {
        Duration::from_nanos(self.extension_ns())
    }

    /// aCWmin (15), the DCF's initial contention window.
    pub fn cw_min(&self) -> u32 {
        A_CW_MIN
    }

    /// aCWmax (1023).
    pub fn cw_max(&self) -> u32 {
        A_CW_MAX
    }

    /// Modulation and coding of data frames.
    pub fn data_mode(&self) -> Mode {
        match self.rate {
            Rate::Ofdm(r) => r.mode(),
            Rate::Mcs(m) => m.mode().unwrap_or(Mode::BPSK_HALF),
        }
    }

    /// Data bits per OFDM symbol (`N_DBPS`), all streams together.
    pub fn bits_per_symbol(&self) -> u32 {
        match self.rate {
            Rate::Ofdm(r) => r.bits_per_symbol(),
            Rate::Mcs(m) => {
                let mode = self.data_mode();
                let (num, den) = mode.code_rate.ratio();
                let coded = coded_bits_per_symbol(m, mode);
                (coded * num / den).max(1)
            }
        }
    }

    /// Data rate in bit/s: `N_DBPS / T_SYM`.
    pub fn data_rate_bps(&self) -> f64 {
        f64::from(self.bits_per_symbol()) * 1e9 / self.symbol_ns() as f64
    }

    /// PSDU length of a data frame carrying `payload_bytes` (an IP packet): MAC header (+ QoS
    /// Control), LLC/SNAP, payload, FCS, and for VHT the A-MPDU delimiter.
    pub fn psdu_bytes(&self, payload_bytes: u32) -> u64 {
        let mut overhead = MAC_HEADER_BYTES + LLC_SNAP_BYTES + FCS_BYTES;
        if self.qos {
            overhead += QOS_CONTROL_BYTES;
        }
        if self.standard == Standard::Ac {
            overhead += MPDU_DELIMITER_BYTES;
        }
        u64::from(payload_bytes) + u64::from(overhead)
    }

    /// Airtime of a PPDU carrying `psdu_bytes` at the configured rate: preamble, PHY headers,
    /// data symbols and signal extension.
    pub fn ppdu_airtime(&self, psdu_bytes: u64) -> Duration {
        let data = self
            .data_symbols(psdu_bytes)
            .saturating_mul(self.symbol_ns());
        Duration::from_nanos(
            self.preamble_ns()
                .saturating_add(data)
                .saturating_add(self.extension_ns()),
        )
    }

    /// Airtime of a data frame carrying `payload_bytes` (see [`PhyConfig::psdu_bytes`]).
    pub fn data_airtime(&self, payload_bytes: u32) -> Duration {
        self.ppdu_airtime(self.psdu_bytes(payload_bytes))
    }

    /// Bits carried by the data symbols of such a frame (`N_SYM · N_DBPS`, padding included):
    /// what the frame error model counts.
    pub fn data_bits(&self, payload_bytes: u32) -> u64 {
        self.data_symbols(self.psdu_bytes(payload_bytes))
            .saturating_mul(u64::from(self.bits_per_symbol()))
    }

    /// Bits of the data PPDU's SIG fields, all BPSK ½: L-SIG (24); HT adds HT-SIG (48); VHT adds
    /// VHT-SIG-A (48) and VHT-SIG-B (counted as one 24-bit symbol).
    pub fn header_bits(&self) -> u64 {
        let symbols = match self.standard {
            Standard::G => 1,
            Standard::N => 3,
            Standard::Ac => 4,
        };
        symbols * SIG_BITS_PER_SYMBOL
    }

    /// The legacy rate the ACK is sent at (module documentation: control response rate).
    pub fn ack_rate(&self) -> OfdmRate {
        let reference = match self.rate {
            Rate::Ofdm(r) => r,
            Rate::Mcs(_) => OfdmRate::reference_for(self.data_mode()),
        };
        reference.control_response()
    }

    /// Airtime of the ACK (14 bytes, legacy OFDM at [`PhyConfig::ack_rate`], signal extension at
    /// 2.4 GHz).
    pub fn ack_airtime(&self) -> Duration {
        self.legacy_airtime(self.ack_rate(), u64::from(ACK_BYTES))
    }

    /// Bits carried by the ACK's data symbols.
    pub fn ack_bits(&self) -> u64 {
        let rate = self.ack_rate();
        legacy_symbols(rate, u64::from(ACK_BYTES)) * u64::from(rate.bits_per_symbol())
    }

    /// ACKTimeout after the end of a data frame: SIFS + slot + 20 µs (the ACK's legacy preamble
    /// and L-SIG, as `aRxPHYStartDelay`).
    pub fn ack_timeout(&self) -> Duration {
        self.sifs() + self.slot() + Duration::from_nanos(T_LEGACY_TRAINING + T_L_SIG)
    }

    /// Airtime of a legacy OFDM PPDU (an ACK, say) of `psdu_bytes` at `rate` in this band.
    pub fn legacy_airtime(&self, rate: OfdmRate, psdu_bytes: u64) -> Duration {
        let data = legacy_symbols(rate, psdu_bytes).saturating_mul(T_SYM);
        Duration::from_nanos(
            (T_LEGACY_TRAINING + T_L_SIG)
                .saturating_add(data)
                .saturating_add(self.extension_ns()),
        )
    }

    fn extension_ns(&self) -> u64 {
        match self.band {
            Band::Ghz2_4 => T_SIGNAL_EXTENSION,
            Band::Ghz5 => 0,
        }
    }

    fn symbol_ns(&self) -> u64 {
        match self.rate {
            Rate::Mcs(m) if m.short_gi => T_SYM_SHORT_GI,
            _ => T_SYM,
        }
    }

    /// Everything before the data symbols.
    fn preamble_ns(&self) -> u64 {
        let legacy = T_LEGACY_TRAINING + T_L_SIG;
        let ltfs = T_LTF * u64::from(long_training_fields(self.spatial_streams()));
        match self.standard {
            Standard::G => legacy,
            Standard::N => legacy + T_SIG_A + T_STF + ltfs,
            Standard::Ac => legacy + T_SIG_A + T_STF + ltfs + T_VHT_SIG_B,
        }
    }

    /// BCC encoders (`N_ES`).
    pub fn encoders(&self) -> u64 {
        let Rate::Mcs(mcs) = self.rate else {
            return 1;
        };
        let n_dbps = u64::from(self.bits_per_symbol());
        let per_encoder = match self.standard {
            Standard::Ac => 2160,
            _ => 1080,
        };
        let mut n_es = n_dbps.div_ceil(per_encoder).max(1);
        if self.standard == Standard::Ac {
            let n_cbps = u64::from(coded_bits_per_symbol(mcs, self.data_mode()));
            while n_es < n_dbps && (n_dbps % n_es != 0 || n_cbps % n_es != 0) {
                n_es += 1;
            }
        }
        n_es
    }

    /// `N_SYM = ⌈(16 + 8·L + 6·N_ES) / N_DBPS⌉`.
    fn data_symbols(&self, psdu_bytes: u64) -> u64 {
        let bits = SERVICE_BITS
            .saturating_add(psdu_bytes.saturating_mul(8))
            .saturating_add(TAIL_BITS * self.encoders());
        bits.div_ceil(u64::from(self.bits_per_symbol()))
    }
}

/// Data symbols of a legacy OFDM PPDU.
/// SSID length of the beacons [`PhyConfig::beacon_bytes`] counts: `"ns-3-ssid"`, the SSID of
/// ns-3's WiFi examples.
pub const BEACON_SSID_BYTES: u64 = 9;

/// Airtime of a DSSS PPDU at 1 Mbit/s with the long preamble (802.11-2016 clause 15: 144 µs
/// PLCP preamble, 48 µs PLCP header, 8 µs per byte): how ns-3 sends an 802.11g BSS's
/// non-unicast frames (its lowest basic rate, DSSS 1 Mbit/s) and the ACK its EIFS assumes.
pub fn dsss_airtime(psdu_bytes: u64) -> Duration {
    Duration::from_micros(192u64.saturating_add(psdu_bytes.saturating_mul(8)))
}

fn legacy_symbols(rate: OfdmRate, psdu_bytes: u64) -> u64 {
    let bits = SERVICE_BITS
        .saturating_add(psdu_bytes.saturating_mul(8))
        .saturating_add(TAIL_BITS);
    bits.div_ceil(u64::from(rate.bits_per_symbol()))
}

/// Coded bits per symbol (`N_CBPS = N_SD · N_BPSCS · N_SS`).
fn coded_bits_per_symbol(mcs: Mcs, mode: Mode) -> u32 {
    let data_subcarriers = match mcs.width_mhz {
        20 => 52,
        40 => 108,
        80 => 234,
        160 => 468,
        _ => 0,
    };
    data_subcarriers * mode.constellation.bits() * u32::from(mcs.spatial_streams)
}

/// HT-LTFs or VHT-LTFs for `streams` spatial streams (no STBC).
fn long_training_fields(streams: u8) -> u8 {
    match streams {
        0 | 1 => 1,
        2 => 2,
        3 | 4 => 4,
        5 | 6 => 6,
        _ => 8,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(micros: u64) -> Duration {
        Duration::from_micros(micros)
    }

    fn ns(nanos: u64) -> Duration {
        Duration::from_nanos(nanos)
    }

    #[test]
    fn g_data_airtimes_by_hand() {
        // 1500-byte IP packet, non-QoS data frame: PSDU = 24 + 8 + 1500 + 4 = 1536 bytes,
        // DATA field bits = 16 + 8·1536 + 6 = 12310.
        // 54 Mbit/s: N_DBPS = 216, ⌈12310/216⌉ = ⌈56.99⌉ = 57 symbols = 228 µs;
        //   T = 16 + 4 + 228 + 6 (signal extension) = 254 µs.
        // 12 Mbit/s: N_DBPS = 48, ⌈12310/48⌉ = ⌈256.46⌉ = 257 symbols = 1028 µs;
        //   T = 20 + 1028 + 6 = 1054 µs.
        let g54 = PhyConfig::g(OfdmRate::M54);
        assert_eq!(g54.psdu_bytes(1500), 1536);
        assert_eq!(g54.data_airtime(1500), us(254));
        assert_eq!(PhyConfig::g(OfdmRate::M12).data_airtime(1500), us(1054));
        // As a QoS data frame (EDCA): PSDU 1538 bytes, 16 + 12304 + 6 = 12326 bits; 57 symbols
        // carry only 57·216 = 12312, so ⌈12326/216⌉ = 58 symbols = 232 µs: T = 20 + 232 + 6 =
        // 258 µs.
        let qos = PhyConfig { qos: true, ..g54 };
        assert_eq!(qos.data_airtime(1500), us(258));
        assert!((g54.data_rate_bps() - 54e6).abs() < 1e-6);
    }

    #[test]
    fn ack_airtimes_by_hand() {
        // ACK: 14 bytes, 16 + 112 + 6 = 134 bits.
        // 6 Mbit/s: N_DBPS 24, ⌈134/24⌉ = 6 symbols = 24 µs; 20 + 24 + 6 = 50 µs at 2.4 GHz.
        // 12 Mbit/s: N_DBPS 48, ⌈134/48⌉ = 3 symbols = 12 µs; 20 + 12 + 6 = 38 µs.
        // 24 Mbit/s: N_DBPS 96, ⌈134/96⌉ = 2 symbols = 8 µs; 20 + 8 + 6 = 34 µs.
        let cases = [
            (OfdmRate::M6, OfdmRate::M6, 50),
            (OfdmRate::M9, OfdmRate::M6, 50),
            (OfdmRate::M12, OfdmRate::M12, 38),
            (OfdmRate::M18, OfdmRate::M12, 38),
            (OfdmRate::M24, OfdmRate::M24, 34),
            (OfdmRate::M36, OfdmRate::M24, 34),
            (OfdmRate::M48, OfdmRate::M24, 34),
            (OfdmRate::M54, OfdmRate::M24, 34),
        ];
        for (data, ack, micros) in cases {
            let phy = PhyConfig::g(data);
            assert_eq!(phy.ack_rate(), ack, "{data:?}");
            assert_eq!(phy.ack_airtime(), us(micros), "{data:?}");
        }
        // At 5 GHz there is no signal extension: 24 Mbit/s ACK = 28 µs.
        let ac = PhyConfig::ac(Mcs::new(9, 2, 80).short_gi());
        assert_eq!(ac.ack_rate(), OfdmRate::M24);
        assert_eq!(ac.ack_airtime(), us(28));
        // MCS 0 → 6 Mbit/s; MCS 1, 2 → 12; MCS 3 and up → 24.
        let ack_of = |index| PhyConfig::n(Mcs::new(index, 1, 20)).ack_rate();
        assert_eq!(ack_of(0), OfdmRate::M6);
        assert_eq!(ack_of(1), OfdmRate::M12);
        assert_eq!(ack_of(2), OfdmRate::M12);
        assert_eq!(ack_of(3), OfdmRate::M24);
        assert_eq!(ack_of(7), OfdmRate::M24);
    }

    #[test]
    fn ht_mcs7_by_hand() {
        // HT MCS 7, 20 MHz, long GI, 1 stream: 64-QAM ⅚, N_DBPS = 52·6·⅚ = 260 (65 Mbit/s).
        // QoS data frame, 1500-byte payload: PSDU = 26 + 8 + 1500 + 4 = 1538 bytes,
        // bits = 16 + 12304 + 6 = 12326, ⌈12326/260⌉ = ⌈47.41⌉ = 48 symbols = 192 µs.
        // Preamble: 16 + 4 (L-SIG) + 8 (HT-SIG) + 4 (HT-STF) + 4 (1 HT-LTF) = 36 µs.
        // 5 GHz: 36 + 192 = 228 µs; 2.4 GHz adds the 6 µs signal extension: 234 µs.
        let mcs7 = Mcs::new(7, 1, 20);
        let phy = PhyConfig::n(mcs7);
        assert_eq!(phy.bits_per_symbol(), 260);
        assert!((phy.data_rate_bps() - 65e6).abs() < 1e-6);
        assert_eq!(phy.data_airtime(1500), us(234));
        let at5 = PhyConfig {
            band: Band::Ghz5,
            ..phy
        };
        assert_eq!(at5.data_airtime(1500), us(228));
        // Short GI: 72.2 Mbit/s, 48 symbols · 3.6 µs = 172.8 µs; 36 + 172.8 = 208.8 µs at 5 GHz.
        let sgi = PhyConfig {
            rate: Rate::Mcs(mcs7.short_gi()),
            ..at5
        };
        assert!((sgi.data_rate_bps() - 260.0 / 3.6e-6).abs() < 1.0);
        assert_eq!(sgi.data_airtime(1500), ns(208_800));
    }

    #[test]
    fn vht_mcs9_80mhz_2ss_short_gi_by_hand() {
        // VHT MCS 9 (256-QAM ⅚), 80 MHz, 2 streams, short GI:
        // N_DBPS = 234·8·⅚·2 = 3120 (3120 bits / 3.6 µs = 866.7 Mbit/s);
        // N_ES = ⌈3120/2160⌉ = 2 (3120 and N_CBPS = 3744 both even), so 12 tail bits.
        // PSDU = 4 (MPDU delimiter) + 26 (QoS header) + 8 + 1500 + 4 = 1542 bytes;
        // bits = 16 + 12336 + 12 = 12364, ⌈12364/3120⌉ = ⌈3.96⌉ = 4 symbols · 3.6 = 14.4 µs.
        // Preamble: 16 + 4 + 8 (VHT-SIG-A) + 4 (VHT-STF) + 2·4 (2 VHT-LTFs) + 4 (VHT-SIG-B) = 44 µs.
        // T = 58.4 µs.
        let phy = PhyConfig::ac(Mcs::new(9, 2, 80).short_gi());
        assert_eq!(phy.validate(), Ok(()));
        assert_eq!(phy.bits_per_symbol(), 3120);
        assert_eq!(phy.encoders(), 2);
        assert!((phy.data_rate_bps() / 1e6 - 866.666_666).abs() < 1e-3);
        assert_eq!(phy.psdu_bytes(1500), 1542);
        assert_eq!(phy.data_airtime(1500), ns(58_400));
    }

    /// Total TX durations from ns-3's `src/wifi/test/tx-duration-test.cc` (nsnam/ns-3-dev,
    /// `TxDurationTest::DoRun`, "CheckTxDuration"): (PSDU bytes, ns-3's duration at 5 GHz in ns).
    /// ns-3 adds 6 µs for OFDM-family PPDUs at 2.4 GHz, as we do. Its 802.11a/g values at 54
    /// Mbit/s are themselves from Gast's O'Reilly "802.11 wireless throughput" table (2003).
    #[test]
    fn airtimes_match_ns3_tx_duration_test() {
        // 802.11g, 54 Mbit/s (ns-3: ErpOfdmRate54Mbps, values given with the extension).
        let g = PhyConfig::g(OfdmRate::M54);
        for (bytes, micros) in [(1536, 254), (76, 38), (14, 30)] {
            assert_eq!(g.ppdu_airtime(bytes), us(micros), "g {bytes}");
        }
        // 802.11n at 5 GHz (ns-3's values) and 2.4 GHz (+6 µs).
        let ht = |index, width, sgi: bool| {
            let mcs = Mcs::new(index, 1, width);
            PhyConfig {
                band: Band::Ghz5,
                ..PhyConfig::n(if sgi { mcs.short_gi() } else { mcs })
            }
        };
        let ht_cases = [
            (7, 20, false, 1536, 228_000),
            (7, 20, false, 76, 48_000),
            (7, 20, false, 14, 40_000),
            (0, 20, true, 1536, 1_742_400),
            (0, 20, true, 76, 126_000),
            (0, 20, true, 14, 57_600),
            (6, 20, true, 1536, 226_800),
            (6, 20, true, 76, 46_800),
            (6, 20, true, 14, 39_600),
            (7, 40, false, 1536, 128_000),
            (7, 40, false, 76, 44_000),
            (7, 40, false, 14, 40_000),
            (7, 40, true, 1536, 118_800),
            (7, 40, true, 76, 43_200),
            (7, 40, true, 14, 39_600),
        ];
        for (index, width, sgi, bytes, nanos) in ht_cases {
            let phy = ht(index, width, sgi);
            assert_eq!(
                phy.ppdu_airtime(bytes),
                ns(nanos),
                "HT {index} {width} {sgi} {bytes}"
            );
            let at24 = PhyConfig {
                band: Band::Ghz2_4,
                ..phy
            };
            assert_eq!(at24.ppdu_airtime(bytes), ns(nanos + 6_000));
        }
        // 802.11ac single-user: ns-3 leaves out VHT-SIG-B, so ours are 4 µs longer.
        let vht_cases = [
            (8, 20, false, 1536, 196_000),
            (8, 20, false, 76, 48_000),
            (8, 20, true, 1536, 180_000),
            (8, 20, true, 76, 46_800),
            (9, 40, false, 1536, 108_000),
            (9, 40, true, 1536, 100_800),
            (0, 80, false, 1536, 460_000),
            (0, 80, false, 14, 44_000),
            (0, 80, true, 1536, 417_600),
            (9, 80, false, 1536, 68_000),
            (9, 80, true, 1536, 64_800),
            (8, 160, false, 1536, 56_000),
            (8, 160, true, 1536, 54_000),
            (8, 160, true, 14, 39_600),
        ];
        for (index, width, sgi, bytes, nanos) in vht_cases {
            let mcs = Mcs::new(index, 1, width);
            let phy = PhyConfig::ac(if sgi { mcs.short_gi() } else { mcs });
            assert_eq!(phy.validate(), Ok(()));
            assert_eq!(
                phy.ppdu_airtime(bytes),
                ns(nanos + 4_000),
                "VHT {index} {width} {sgi} {bytes}"
            );
        }
    }

    #[test]
    fn timing_per_band_and_slot() {
        let g = PhyConfig::g(OfdmRate::M54);
        assert_eq!((g.slot(), g.sifs(), g.difs()), (us(9), us(10), us(28)));
        assert_eq!(g.ack_timeout(), us(39)); // 10 + 9 + 20
                                             // EIFS charges ns-3's 304 µs DSSS ACK at 2.4 GHz, its 44 µs OFDM ACK at 5 GHz.
        assert_eq!(g.eifs(), us(10 + 28 + 304));
        assert_eq!(dsss_airtime(14), us(304));
        // A non-QoS 802.11g beacon: 28 + 12 + 11 + 10 + 6 + 3 + 3 = 73 bytes, 192 + 584 µs.
        assert_eq!(g.beacon_bytes(), 73);
        assert_eq!(g.beacon_airtime(), us(776));
        assert_eq!(g.signal_extension(), us(6));
        let long = PhyConfig {
            slot: SlotTime::Long,
            ..g
        };
        assert_eq!(long.validate(), Ok(()));
        assert_eq!(
            (long.slot(), long.difs(), long.ack_timeout()),
            (us(20), us(50), us(50))
        );
        let ac = PhyConfig::ac(Mcs::new(7, 1, 80));
        assert_eq!((ac.slot(), ac.sifs(), ac.difs()), (us(9), us(16), us(34)));
        assert_eq!(ac.ack_timeout(), us(45));
        assert_eq!(ac.eifs(), us(16 + 34 + 44));
        assert_eq!(ac.signal_extension(), Duration::ZERO);
        // AIFS[AC] = SIFS + AIFSN·slot.
        assert_eq!(ac.aifs(AccessCategory::Bk), us(16 + 7 * 9));
        assert_eq!(ac.aifs(AccessCategory::Be), us(16 + 3 * 9));
        assert_eq!(ac.aifs(AccessCategory::Vi), us(16 + 2 * 9));
        assert_eq!(ac.aifs(AccessCategory::Vo), ac.difs());
    }

    #[test]
    fn edca_defaults_table() {
        for standard in [Standard::G, Standard::N, Standard::Ac] {
            let t = edca_defaults(standard);
            let row = |ac: AccessCategory| {
                let p = t[ac.index()];
                (p.aifsn, p.cw_min, p.cw_max, p.txop)
            };
            assert_eq!(row(AccessCategory::Bk), (7, 15, 1023, Duration::ZERO));
            assert_eq!(row(AccessCategory::Be), (3, 15, 1023, Duration::ZERO));
            assert_eq!(row(AccessCategory::Vi), (2, 7, 15, us(3008)));
            assert_eq!(row(AccessCategory::Vo), (2, 3, 7, us(1504)));
        }
    }

    #[test]
    fn dscp_to_access_category() {
        use AccessCategory::*;
        let cases = [
            (0, 0, Be),       // DF
            (1, 1, Bk),       // LE
            (8, 1, Bk),       // CS1
            (10, 0, Be),      // AF11
            (16, 0, Be),      // CS2
            (18, 3, Be),      // AF21
            (24, 4, Vi),      // CS3
            (26, 4, Vi),      // AF31
            (32, 4, Vi),      // CS4
            (34, 4, Vi),      // AF41
            (38, 4, Vi),      // AF43
            (40, 5, Vi),      // CS5
            (44, 6, Vo),      // VOICE-ADMIT
            (46, 6, Vo),      // EF
            (48, 7, Vo),      // CS6
            (56, 7, Vo),      // CS7
            (2, 0, Be),       // unused
            (63, 0, Be),      // unused
            (46 + 64, 6, Vo), // high bits ignored
        ];
        for (dscp, up, ac) in cases {
            assert_eq!(user_priority(dscp), up, "DSCP {dscp}");
            assert_eq!(AccessCategory::from_dscp(dscp), ac, "DSCP {dscp}");
        }
        let by_up: Vec<_> = (0..8).map(AccessCategory::from_up).collect();
        assert_eq!(by_up, [Be, Bk, Bk, Be, Vi, Vi, Vo, Vo]);
    }

    #[test]
    fn validation() {
        let ok = |p: PhyConfig| assert_eq!(p.validate(), Ok(()), "{p:?}");
        let bad = |p: PhyConfig| assert!(p.validate().is_err(), "{p:?}");
        for r in OfdmRate::ALL {
            ok(PhyConfig::g(r));
            assert_eq!(OfdmRate::from_mbps(r.mbps()), Some(r));
        }
        assert_eq!(OfdmRate::from_mbps(11), None);
        bad(PhyConfig {
            band: Band::Ghz5,
            ..PhyConfig::g(OfdmRate::M6)
        });
        bad(PhyConfig {
            rate: Rate::Mcs(Mcs::new(0, 1, 20)),
            ..PhyConfig::g(OfdmRate::M6)
        });
        // HT: MCS 0–7 per stream, 1–4 streams, 20/40 MHz, QoS.
        ok(PhyConfig::n(Mcs::new(7, 4, 40).short_gi()));
        bad(PhyConfig::n(Mcs::new(8, 1, 20)));
        bad(PhyConfig::n(Mcs::new(0, 0, 20)));
        bad(PhyConfig::n(Mcs::new(0, 5, 20)));
        bad(PhyConfig::n(Mcs::new(0, 1, 80)));
        bad(PhyConfig {
            qos: false,
            ..PhyConfig::n(Mcs::new(0, 1, 20))
        });
        ok(PhyConfig {
            band: Band::Ghz5,
            ..PhyConfig::n(Mcs::new(0, 1, 20))
        });
        bad(PhyConfig {
            band: Band::Ghz5,
            slot: SlotTime::Long,
            ..PhyConfig::n(Mcs::new(0, 1, 20))
        });
        // VHT: MCS 0–9; the combinations the standard marks not valid (ns-3's
        // VhtPhy::IsCombinationAllowed lists the first two; 160 MHz, 3 streams, MCS 9 fails the
        // same integrality test: N_ES = 5 does not divide N_CBPS = 11232).
        bad(PhyConfig::ac(Mcs::new(10, 1, 20)));
        bad(PhyConfig::ac(Mcs::new(0, 1, 60)));
        bad(PhyConfig {
            band: Band::Ghz2_4,
            ..PhyConfig::ac(Mcs::new(0, 1, 20))
        });
        let mut invalid = Vec::new();
        for width in [20, 40, 80, 160] {
            for nss in 1..=4 {
                for index in 0..=9 {
                    let p = PhyConfig::ac(Mcs::new(index, nss, width));
                    if p.validate().is_err() {
                        invalid.push((width, nss, index));
                    }
                }
            }
        }
        assert_eq!(
            invalid,
            [(20, 1, 9), (20, 2, 9), (20, 4, 9), (80, 3, 6), (160, 3, 9)]
        );
        // Every valid VHT configuration has an integer N_DBPS that N_ES divides.
        for width in [20u16, 40, 80, 160] {
            for nss in 1..=4u8 {
                for index in 0..=9u8 {
                    let p = PhyConfig::ac(Mcs::new(index, nss, width));
                    if p.validate().is_ok() {
                        let mode = p.data_mode();
                        let (num, den) = mode.code_rate.ratio();
                        let coded = coded_bits_per_symbol(Mcs::new(index, nss, width), mode);
                        assert_eq!(coded * num % den, 0, "{width} {nss} {index}");
                        assert_eq!(u64::from(p.bits_per_symbol()) % p.encoders(), 0);
                    }
                }
            }
        }
    }

    #[test]
    fn encoders_follow_the_per_encoder_limit() {
        // HT: one encoder up to 1080 bits per symbol (300 Mbit/s short GI).
        let ht = |index, nss, width| PhyConfig::n(Mcs::new(index, nss, width)).encoders();
        assert_eq!(ht(7, 2, 40), 1); // MCS 15, 40 MHz: N_DBPS 1080 (270/300 Mbit/s)
        assert_eq!(ht(4, 3, 40), 1); // MCS 20 (16-QAM ¾, 3 streams): 972 bits
        assert_eq!(ht(5, 3, 40), 2); // MCS 21 (64-QAM ⅔, 3 streams): 1296 bits
        assert_eq!(ht(7, 4, 40), 2); // MCS 31: 2160 bits
                                     // VHT: one per 2160 bits (600 Mbit/s short GI).
        let vht = |index, nss, width| PhyConfig::ac(Mcs::new(index, nss, width)).encoders();
        assert_eq!(vht(9, 1, 80), 1); // 1560 bits
        assert_eq!(vht(7, 2, 80), 2); // 2340 bits
        assert_eq!(vht(9, 3, 80), 3); // 4680 bits
        assert_eq!(vht(7, 4, 160), 6); // 9360 bits: 5 does not divide N_CBPS 11232, 6 does
        assert_eq!(PhyConfig::g(OfdmRate::M54).encoders(), 1);
    }

    #[test]
    fn bits_counted_by_the_error_model() {
        // 54 Mbit/s, 1536-byte PSDU: 57 symbols of 216 bits.
        let g = PhyConfig::g(OfdmRate::M54);
        assert_eq!(g.data_bits(1500), 57 * 216);
        assert_eq!(g.header_bits(), 24);
        // ACK at 24 Mbit/s: 2 symbols of 96 bits.
        assert_eq!(g.ack_bits(), 192);
        assert_eq!(PhyConfig::n(Mcs::new(0, 1, 20)).header_bits(), 72);
        assert_eq!(PhyConfig::ac(Mcs::new(0, 1, 20)).header_bits(), 96);
    }

    #[test]
    fn unvalidated_configs_do_not_panic() {
        let weird = PhyConfig {
            rate: Rate::Mcs(Mcs::new(200, 0, 7)),
            ..PhyConfig::ac(Mcs::new(0, 1, 20))
        };
        assert!(weird.validate().is_err());
        let _ = weird.data_airtime(u32::MAX);
        let _ = weird.ack_airtime();
        let _ = weird.data_bits(u32::MAX);
        assert!(weird.data_rate_bps() > 0.0);
    }
}
