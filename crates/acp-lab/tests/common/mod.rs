//! What the lab's root-only tests share: the privilege gate, a UDP socket inside a host's
//! namespace, and a timed UDP echo between two hosts through the emulator.

use std::net::UdpSocket;
use std::time::{Duration, Instant};

use acp_lab::hosts::Host;

/// Whether the test may create namespaces; if not, prints why `test` is skipped.
pub fn privileged(test: &str) -> bool {
    match acp_lab::privilege::check() {
        Ok(()) => true,
        Err(e) => {
            eprintln!("{test}: skipped: {e}");
            false
        }
    }
}

/// A UDP socket bound to `h`'s address inside its namespace.
pub fn socket(h: &Host) -> UdpSocket {
    let addr = h.addr;
    h.ns.enter(move || UdpSocket::bind((addr, 0))).unwrap()
}

/// Sends `rounds` datagrams of `size` bytes from `client` to `server`, each echoed back before
/// the next; returns the round-trip times, sorted (a lost datagram fails after 2 s).
pub fn echo_rtts(client: &Host, server: &Host, size: usize, rounds: usize) -> Vec<Duration> {
    let (sa, sb) = (socket(client), socket(server));
    sb.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    sa.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    let mut buf = [0u8; 1500];
    let payload = vec![7u8; size];
    let mut rtts = Vec::new();
    for _ in 0..rounds {
        let t0 = Instant::now();
        sa.send_to(&payload, sb.local_addr().unwrap()).unwrap();
        let (n, from) = sb.recv_from(&mut buf).unwrap();
        sb.send_to(&buf[..n], from).unwrap();
        sa.recv_from(&mut buf).unwrap();
        rtts.push(t0.elapsed());
    }
    rtts.sort();
    rtts
}
