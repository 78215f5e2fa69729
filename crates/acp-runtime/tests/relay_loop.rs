//! Relays in a forwarding loop, on loopback: each hop spends one of the datagram's hop limit
//! (IPv4 TTL), so two relays pointed at each other pass a datagram around at most as many times
//! as its sender allowed, where they used to pass it around forever; a chain of relays delivers
//! what it always did, one hop limit lower per relay.
//!
//! Nothing here depends on the machine's speed: the tests wait for counters (with a generous
//! deadline) rather than for a set time, and the final quiet period only has to be longer than a
//! few 1 ms hops.

use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use acp_runtime::net::{receive_hop_limit, recv_with_dscp, set_hop_limit};
use acp_runtime::relay::{PathConfig, Relay, RelayConfig, RelayStats};

/// Longest wait for anything; only reached if the test is going to fail.
const PATIENCE: Duration = Duration::from_secs(20);

fn relay(listen: SocketAddr, target: SocketAddr) -> Relay {
    let path = PathConfig::lossless(100e6, Duration::from_millis(1), 100);
    Relay::start(RelayConfig::symmetric(listen, target, path, 1)).unwrap()
}

/// Forwarded and dropped by hop limit, client→target, over `stats`.
fn totals(stats: &[RelayStats]) -> (u64, u64) {
    stats.iter().fold((0, 0), |(f, h), s| {
        (f + s.to_target.forwarded, h + s.to_target.dropped_hop_limit)
    })
}

#[test]
fn two_relays_pointed_at_each_other_stop_a_datagram_when_its_hops_run_out() {
    // B's address, free when A starts: A forwards to it, and B then listens on it.
    let b_addr = UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let a = relay("127.0.0.1:0".parse().unwrap(), b_addr);
    let b = relay(b_addr, a.local_addr());
    let client = UdpSocket::bind("127.0.0.1:0").unwrap();
    let hops = 20;
    set_hop_limit(&client, Some(hops)).unwrap();
    client.send_to(b"round and round", a.local_addr()).unwrap();
    // Each relay forwards it while it has a hop to spend: hops − 1 times in all, then the
    // relay it reaches with one hop left drops it.
    let until = Instant::now() + PATIENCE;
    while totals(&[a.stats(), b.stats()]).1 == 0 {
        assert!(
            Instant::now() < until,
            "still looping: {:?}",
            totals(&[a.stats(), b.stats()])
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let stopped = totals(&[a.stats(), b.stats()]);
    assert_eq!(stopped, (u64::from(hops) - 1, 1));
    // And nothing more moves.
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(totals(&[a.stats(), b.stats()]), stopped);
    // At the system's default hop limit the loop ends too.
    set_hop_limit(&client, None).unwrap();
    client.send_to(b"round again", a.local_addr()).unwrap();
    while totals(&[a.stats(), b.stats()]).1 == 1 {
        assert!(Instant::now() < until, "still looping");
        std::thread::sleep(Duration::from_millis(10));
    }
    let default_ttl: u64 = std::fs::read_to_string("/proc/sys/net/ipv4/ip_default_ttl")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!(
        totals(&[a.stats(), b.stats()]),
        (stopped.0 + default_ttl - 1, 2)
    );
}

#[test]
fn a_chain_of_relays_delivers_with_one_hop_less_per_relay() {
    let sink = UdpSocket::bind("127.0.0.1:0").unwrap();
    sink.set_read_timeout(Some(PATIENCE)).unwrap();
    receive_hop_limit(&sink).unwrap();
    let second = relay("127.0.0.1:0".parse().unwrap(), sink.local_addr().unwrap());
    let first = relay("127.0.0.1:0".parse().unwrap(), second.local_addr());
    let client = UdpSocket::bind("127.0.0.1:0").unwrap();
    let mut buf = [0u8; 64];
    for hops in [3, 64, 255] {
        set_hop_limit(&client, Some(hops)).unwrap();
        client.send_to(b"update", first.local_addr()).unwrap();
        let got = recv_with_dscp(&sink, &mut buf).unwrap();
        assert_eq!(
            (&buf[..got.len], got.hop_limit),
            (&b"update"[..], Some(hops - 2))
        );
    }
    // A datagram with one hop left goes no further than the first relay.
    set_hop_limit(&client, Some(1)).unwrap();
    client.send_to(b"update", first.local_addr()).unwrap();
    let until = Instant::now() + PATIENCE;
    while first.stats().to_target.dropped_hop_limit == 0 {
        assert!(Instant::now() < until, "not dropped");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(first.stats().to_target.forwarded, 3);
}
