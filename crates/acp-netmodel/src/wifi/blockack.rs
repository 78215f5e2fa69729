//! Block ACK (IEEE 802.11-2016 §10.24): the compressed BlockAck frame that answers an A-MPDU,
//! and the originator's transmit window.
//!
//! - **Frame.** The compressed BlockAck is 32 bytes (Frame Control 2, Duration 2, RA 6, TA 6,
//!   BA Control 2, Starting Sequence Control 2, a 64-bit bitmap 8, FCS 4), sent SIFS after the
//!   A-MPDU in a legacy OFDM PPDU at the control response rate ([`PhyConfig::ack_rate`]), like
//!   an ACK. Its bitmap says which MPDUs arrived. When no MPDU arrived the receiver sends
//!   nothing and the originator waits out the BlockAck timeout ([`PhyConfig::ack_timeout`]).
//! - **Window.** The originator gives every new MPDU the next sequence number and may have only
//!   [`BLOCK_ACK_WINDOW`] of them outstanding from the oldest one not yet acknowledged or given
//!   up (`WinStartO`): a retransmission that is still pending holds new MPDUs back.
//!
//! Sequence numbers are counted without the standard's modulo-4096 wrap (a wire detail).

use std::collections::BTreeSet;
use std::time::Duration;

use super::ampdu::BLOCK_ACK_WINDOW;
use super::phy::PhyConfig;

/// A compressed BlockAck frame.
pub const BLOCK_ACK_BYTES: u64 = 32;

/// Airtime of the BlockAck answering an A-MPDU sent with `phy`.
pub fn block_ack_airtime(phy: &PhyConfig) -> Duration {
    phy.legacy_airtime(phy.ack_rate(), BLOCK_ACK_BYTES)
}

/// The originator's side of one block ACK agreement.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Window {
    /// The next sequence number to give out.
    next: u64,
    /// Sequence numbers given out and neither acknowledged nor given up.
    outstanding: BTreeSet<u64>,
}

impl Window {
    /// `WinStartO`: the oldest outstanding sequence number, or the next one.
    pub fn start(&self) -> u64 {
        self.outstanding.first().copied().unwrap_or(self.next)
    }

    /// How many new MPDUs may be numbered now.
    pub fn room(&self) -> usize {
        let used = self.next - self.start();
        BLOCK_ACK_WINDOW.saturating_sub(usize::try_from(used).unwrap_or(usize::MAX))
    }

    /// Numbers a new MPDU, if the window has room.
    pub fn assign(&mut self) -> Option<u64> {
        (self.room() > 0).then(|| {
            let seq = self.next;
            self.next += 1;
            self.outstanding.insert(seq);
            seq
        })
    }

    /// The MPDU `seq` was acknowledged or given up: the window may move past it.
    pub fn settle(&mut self, seq: u64) {
        self.outstanding.remove(&seq);
    }

    /// MPDUs outstanding.
    pub fn outstanding(&self) -> usize {
        self.outstanding.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wifi::phy::Mcs;

    #[test]
    fn block_ack_airtime_by_hand() {
        // 16 + 8·32 + 6 = 278 bits. After MCS ≥ 3 at 24 Mbit/s: ⌈278/96⌉ = 3 symbols, 20 + 12 µs.
        // After MCS 1–2 at 12 Mbit/s: ⌈278/48⌉ = 6, 44 µs. After MCS 0 at 6: ⌈278/24⌉ = 12, 68 µs.
        let t = |index| block_ack_airtime(&PhyConfig::ac(Mcs::new(index, 2, 80)));
        assert_eq!(t(9), Duration::from_micros(32));
        assert_eq!(t(1), Duration::from_micros(44));
        assert_eq!(t(0), Duration::from_micros(68));
    }

    #[test]
    fn a_pending_retransmission_holds_the_window() {
        let mut w = Window::default();
        let seqs: Vec<u64> = (0..64).map_while(|_| w.assign()).collect();
        assert_eq!(seqs, (0..64).collect::<Vec<_>>());
        assert_eq!((w.room(), w.assign()), (0, None));
        // Everything but MPDU 3 acknowledged: the window starts at 3 and 3 more may go.
        for s in (0..64).filter(|s| *s != 3) {
            w.settle(s);
        }
        assert_eq!((w.start(), w.room(), w.outstanding()), (3, 3, 1));
        assert_eq!(w.assign(), Some(64));
        w.settle(3);
        assert_eq!((w.start(), w.room()), (64, 63));
        w.settle(64);
        assert_eq!((w.start(), w.room()), (65, 64));
    }
}
