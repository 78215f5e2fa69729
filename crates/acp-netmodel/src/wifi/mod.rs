//! A shared 802.11 channel: stations and an access point contending for one medium.
//!
//! - [`phy`]: PHY parameter sets (802.11g ERP-OFDM; 802.11n/ac MCS, spatial streams, channel
//!   width) and frame airtime from the standard's preamble, header and symbol formulas;
//! - [`channel`]: positions, log-distance path loss with log-normal shadowing, and the frame
//!   error rate from SNR for the chosen rate;
//! - [`medium`]: the sans-IO DCF/EDCA medium (backoff, collisions, ACKs, retries), driven like a
//!   [`crate::Link`];
//! - [`bianchi`]: Bianchi's saturation model of DCF, the medium's validation oracle.
//!
//! The medium asks the PHY and the channel about frames only through [`FrameModel`], so a
//! future A-MPDU aggregation model plugs in there.

pub mod bianchi;
pub mod channel;
pub mod medium;
pub mod phy;

use std::time::Duration;

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
}
