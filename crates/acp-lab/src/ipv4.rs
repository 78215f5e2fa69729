//! The IPv4 header fields the emulator routes and schedules by (RFC 791), each range named once.

use std::net::Ipv4Addr;

/// Byte ranges and offsets of the fields read.
mod field {
    use std::ops::Range;
    /// Version (high nibble) and header length.
    pub const VERSION_IHL: usize = 0;
    /// DSCP (high six bits) and ECN.
    pub const TOS: usize = 1;
    pub const TOTAL_LEN: Range<usize> = 2..4;
    pub const SRC: Range<usize> = 12..16;
    pub const DST: Range<usize> = 16..20;
    /// The fixed header's length.
    pub const MIN_HEADER: usize = 20;
}

/// What the emulator needs of a packet read from a TUN device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub src: Ipv4Addr,
    pub dst: Ipv4Addr,
    pub dscp: u8,
    /// Length on the wire (headers included).
    pub len: u32,
}

fn addr(packet: &[u8], range: std::ops::Range<usize>) -> Ipv4Addr {
    let mut b = [0u8; 4];
    b.copy_from_slice(&packet[range]);
    Ipv4Addr::from(b)
}

/// The header of an IPv4 packet; `None` for anything else (IPv6, truncated data).
pub fn parse(packet: &[u8]) -> Option<Header> {
    if packet.len() < field::MIN_HEADER || packet[field::VERSION_IHL] >> 4 != 4 {
        return None;
    }
    Some(Header {
        src: addr(packet, field::SRC),
        dst: addr(packet, field::DST),
        dscp: packet[field::TOS] >> 2,
        len: u32::from(u16::from_be_bytes([
            packet[field::TOTAL_LEN.start],
            packet[field::TOTAL_LEN.start + 1],
        ])),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_addresses_dscp_and_length() {
        let mut p = [0u8; 28];
        p[0] = 0x45;
        p[1] = 46 << 2;
        p[2..4].copy_from_slice(&28u16.to_be_bytes());
        p[12..16].copy_from_slice(&[10, 77, 0, 1]);
        p[16..20].copy_from_slice(&[10, 77, 0, 2]);
        let h = parse(&p).unwrap();
        assert_eq!(
            h,
            Header {
                src: Ipv4Addr::new(10, 77, 0, 1),
                dst: Ipv4Addr::new(10, 77, 0, 2),
                dscp: 46,
                len: 28
            }
        );
        p[0] = 0x60;
        assert_eq!(parse(&p), None, "IPv6");
        assert_eq!(parse(&[0x45; 19]), None, "short");
    }
}
