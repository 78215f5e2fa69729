//! The IPv4 header fields the emulator routes and schedules by (RFC 791), and the length of the
//! transport payload it counts by (TCP's data offset, RFC 9293; UDP's 8-byte header), each range
//! named once.

use std::net::Ipv4Addr;

/// Byte ranges and offsets of the fields read.
mod field {
    use std::ops::Range;
    /// Version (high nibble) and header length in 32-bit words (low nibble).
    pub const VERSION_IHL: usize = 0;
    /// DSCP (high six bits) and ECN.
    pub const TOS: usize = 1;
    pub const TOTAL_LEN: Range<usize> = 2..4;
    pub const PROTOCOL: usize = 9;
    pub const SRC: Range<usize> = 12..16;
    pub const DST: Range<usize> = 16..20;
    /// The fixed header's length.
    pub const MIN_HEADER: usize = 20;
    /// In the TCP header: the data offset in 32-bit words (high nibble).
    pub const TCP_DATA_OFFSET: usize = 12;
    /// The UDP header's length.
    pub const UDP_HEADER: u32 = 8;
    /// In the TCP and UDP headers: the source port.
    pub const SRC_PORT: Range<usize> = 0..2;
}

/// IP protocol numbers.
const TCP: u8 = 6;
const UDP: u8 = 17;

/// A packet's transport.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// TCP, with this many payload bytes (0: a pure ACK or a control segment).
    Tcp(u32),
    /// UDP, with this many payload bytes.
    Udp(u32),
    /// Anything else, or a header cut short.
    Other,
}

/// What the emulator needs of a packet read from a TUN device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub src: Ipv4Addr,
    /// The TCP or UDP source port (0 for other protocols or a header cut short).
    pub src_port: u16,
    pub dst: Ipv4Addr,
    pub dscp: u8,
    /// Length on the wire (headers included).
    pub len: u32,
    pub transport: Transport,
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
    let len = u32::from(u16::from_be_bytes([
        packet[field::TOTAL_LEN.start],
        packet[field::TOTAL_LEN.start + 1],
    ]));
    let ihl = usize::from(packet[field::VERSION_IHL] & 0x0f) * 4;
    let after_ip = len.checked_sub(ihl as u32);
    let transport = match (packet[field::PROTOCOL], after_ip) {
        (TCP, Some(rest)) => packet
            .get(ihl + field::TCP_DATA_OFFSET)
            .and_then(|b| rest.checked_sub(u32::from(b >> 4) * 4))
            .map_or(Transport::Other, Transport::Tcp),
        (UDP, Some(rest)) => rest
            .checked_sub(field::UDP_HEADER)
            .map_or(Transport::Other, Transport::Udp),
        _ => Transport::Other,
    };
    let src_port = match packet[field::PROTOCOL] {
        TCP | UDP => packet
            .get(ihl + field::SRC_PORT.start..ihl + field::SRC_PORT.end)
            .map_or(0, |b| u16::from_be_bytes([b[0], b[1]])),
        _ => 0,
    };
    Some(Header {
        src: addr(packet, field::SRC),
        src_port,
        dst: addr(packet, field::DST),
        dscp: packet[field::TOS] >> 2,
        len,
        transport,
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
                src_port: 0,
                dst: Ipv4Addr::new(10, 77, 0, 2),
                dscp: 46,
                len: 28,
                transport: Transport::Other,
            }
        );
        p[9] = 17;
        p[20..22].copy_from_slice(&4321u16.to_be_bytes());
        let udp = parse(&p).unwrap();
        assert_eq!((udp.transport, udp.src_port), (Transport::Udp(0), 4321));
        p[0] = 0x60;
        assert_eq!(parse(&p), None, "IPv6");
        assert_eq!(parse(&[0x45; 19]), None, "short");
    }

    #[test]
    fn a_tcp_payload_is_the_ip_length_less_both_headers() {
        // 20 bytes of IPv4 and 32 of TCP (data offset 8: timestamps) before 1,448 of data.
        let mut p = [0u8; 52];
        p[0] = 0x45;
        p[2..4].copy_from_slice(&1500u16.to_be_bytes());
        p[9] = 6;
        p[20 + 12] = 8 << 4;
        assert_eq!(parse(&p).unwrap().transport, Transport::Tcp(1448));
        p[2..4].copy_from_slice(&52u16.to_be_bytes());
        assert_eq!(
            parse(&p).unwrap().transport,
            Transport::Tcp(0),
            "a pure ACK"
        );
        assert_eq!(
            parse(&p[..30]).unwrap().transport,
            Transport::Other,
            "cut short"
        );
    }
}
