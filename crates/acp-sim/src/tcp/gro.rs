//! Stretch ACKs of a receiver behind generic receive offload (GRO).
//!
//! A Linux host hands the segments that one NAPI poll collects to TCP as GRO super-packets of at
//! most 64 KiB (`GRO_LEGACY_MAX_SIZE`, `include/linux/netdevice.h`); the poll ends by flushing
//! them (`napi_complete_done` → `gro_normal_list`). TCP sees one segment of several SMSS and,
//! having more than one full segment unacknowledged, ACKs it at once
//! (`__tcp_ack_snd_check`, `net/ipv4/tcp_input.c`): one ACK per super-packet, a *stretch ACK*.
//! Behind an 802.11 station every A-MPDU's packets reach the host in one receive interrupt, so
//! the receiver ACKs once per A-MPDU (or per 64 KiB of it) instead of every second segment.
//!
//! The model: the segments that reach the receiver at one instant are one poll. A delayed-ACK
//! rule that is satisfied waits for the end of the instant (the poll's flush: the timer is set
//! to now, and the engine runs timers after the deliveries of that instant), unless the bytes
//! since the last ACK fill a super-packet, which is flushed at once.

/// GRO at the receiving host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gro {
    /// Bytes of payload a super-packet holds at most.
    pub max_bytes: u64,
}

impl Default for Gro {
    /// Linux's 64 KiB.
    fn default() -> Self {
        Gro { max_bytes: 65_536 }
    }
}

/// When the receiver ACKs what it has delivered since its last ACK.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AckWhen {
    /// Now.
    Now,
    /// At the end of this instant's poll (GRO's flush).
    EndOfPoll,
    /// When the delayed-ACK timer expires (started now if none runs).
    Timer,
}

/// The delayed-ACK decision for `unacked` bytes delivered in order since the last ACK, when the
/// receiver's rules call for an ACK now (`due`) or not.
pub fn ack_when(gro: Option<Gro>, unacked: u64, due: bool) -> AckWhen {
    match gro {
        Some(g) if unacked >= g.max_bytes => AckWhen::Now,
        Some(_) if due => AckWhen::EndOfPoll,
        None if due => AckWhen::Now,
        _ => AckWhen::Timer,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gro_defers_a_due_ack_to_the_end_of_the_poll_unless_a_super_packet_is_full() {
        let gro = Some(Gro::default());
        assert_eq!(ack_when(None, 2896, true), AckWhen::Now);
        assert_eq!(ack_when(None, 1448, false), AckWhen::Timer);
        assert_eq!(ack_when(gro, 2896, true), AckWhen::EndOfPoll);
        assert_eq!(ack_when(gro, 1448, false), AckWhen::Timer);
        // 45 segments of 1448 bytes (65160) still fit; the 46th fills the super-packet.
        assert_eq!(ack_when(gro, 45 * 1448, true), AckWhen::EndOfPoll);
        assert_eq!(ack_when(gro, 46 * 1448, false), AckWhen::Now);
    }
}
