//! A shared 802.11 channel: stations and an access point contending for one medium.
//!
//! - [`phy`]: PHY parameter sets (802.11g ERP-OFDM; 802.11n/ac MCS, spatial streams, channel
//!   width) and frame airtime from the standard's preamble, header and symbol formulas;
//! - [`channel`]: positions, log-distance path loss with log-normal shadowing, and the frame
//!   error rate from SNR for the chosen rate (the NIST formulas or [`per_table`], ns-3's
//!   table-based model and the default);
//! - [`radio`]: received powers between every pair of stations and ns-3's preamble detection;
//! - [`medium`]: the sans-IO DCF/EDCA medium (backoff, per-receiver reception with capture, ACKs,
//!   retries, EIFS, beacons), driven like a [`crate::Link`];
//! - [`fq`]: mac80211's flow queueing within the AP's per-station queues
//!   ([`medium::ApQueue::Fq`]);
//! - [`bianchi`]: Bianchi's saturation model of DCF, the medium's validation oracle;
//! - [`edca_saturation`]: its EDCA extension with differentiated AIFS (Robinson & Randhawa),
//!   the oracle of the medium's EDCA;
//! - [`downlink`]: an 802.11ac downlink with aggregation, the alternative to [`medium`] for an
//!   AP's A-MPDU traffic, built from [`ampdu`] (A-MPDU and A-MSDU framing and airtime),
//!   [`blockack`] (the BlockAck and its window) and [`minstrel`] (rate adaptation);
//! - [`aggregation_model`]: the aggregation thesis's §5.2 model of its aggregation level and
//!   delay, its validation oracle; [`paced_load`]: paced load on it and the measurements.
//!
//! The medium asks the PHY and the channel about frames only through [`FrameModel`].

pub mod aggregation_model;
pub mod ampdu;
pub mod bianchi;
pub mod blockack;
pub mod channel;
pub mod codel;
pub mod downlink;
pub mod edca_saturation;
pub mod fq;
pub mod medium;
pub mod minstrel;
pub mod paced_load;
pub mod per_table;
pub mod phy;
pub mod radio;

use std::time::Duration;

use radio::{Chunk, Radio};

/// What the MAC needs to know about a frame from `from` to `to` (station indices of the medium;
/// the access point is station 0).
pub trait FrameModel: std::fmt::Debug + Send {
    /// Airtime of a data frame carrying `bytes` of MAC payload (MAC header and FCS added by the
    /// model), preamble and PHY header included.
    fn data_airtime(&self, from: usize, to: usize, bytes: u32) -> Duration;
    /// Airtime of the ACK answering such a frame.
    fn ack_airtime(&self, from: usize, to: usize) -> Duration;
    /// Probability that such a data frame, sent alone (no collision), is received correctly.
    fn success_probability(&self, from: usize, to: usize, bytes: u32) -> f64;
    /// The received powers between stations, when the model knows where they are: per-receiver
    /// (SINR) reception needs them. `None` (the default): the medium can only decide
    /// collisions for the whole medium.
    fn radio(&self) -> Option<&Radio> {
        None
    }
    /// Where station `station` (1-based) is and how the AP hears it, when the model places
    /// stations. `None` (the default): no geometry.
    fn uplink(&self, station: usize) -> Option<Uplink> {
        let _ = station;
        None
    }
    /// When a data frame's payload starts, after its preamble and PHY headers.
    fn payload_offset(&self) -> Duration {
        Duration::ZERO
    }
    /// Probabilities that a receiver synchronised on a data frame carrying `bytes` decodes its
    /// PHY header (at SINR `header_sinr`, linear) and then its payload (through `chunks`):
    /// `(header, payload)`. The default decodes everything.
    fn decode_probabilities(&self, bytes: u32, header_sinr: f64, chunks: &[Chunk]) -> (f64, f64) {
        let _ = (bytes, header_sinr, chunks);
        (1.0, 1.0)
    }
}

/// A station's place and its link to the access point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Uplink {
    /// Metres east of the AP.
    pub x_m: f64,
    /// Metres north of the AP.
    pub y_m: f64,
    /// Power at which the AP receives the station (dBm).
    pub rx_power_dbm: f64,
    /// The AP's SNR for the station's frames (dB).
    pub snr_db: f64,
}
