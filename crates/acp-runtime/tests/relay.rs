//! The relay (userspace UDP path emulator) over loopback: delay, rate, queue, loss, cross traffic,
//! blackhole, IPv6, unreachable targets and prompt shutdown.
//!
//! Timings are measured with `Instant` in this process on both ends of the path, so they need no
//! clock synchronisation. The tests take a shared lock so that they do not run concurrently: they
//! measure sub-millisecond timings and would otherwise compete for the CPUs. For the same reason
//! each runs at `SCHED_FIFO` when it may, ahead of other processes (with two busy loops beside
//! the suite and the load average at 21, one-way delays had a median 4–8 ms late at normal
//! priority).

use std::net::{SocketAddr, UdpSocket};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use acp_netmodel::{Discipline, LossModel, Schedule, Step, Trace};
use acp_runtime::clock;
use acp_runtime::net::{receive_dscp, recv_with_dscp, set_dscp};
use acp_runtime::relay::{PathConfig, Relay, RelayConfig, HEADER_BYTES};

mod common;
use acp_testkit::wait_for;
use common::serial;

fn link(rate_bps: f64, delay_ms: u64, queue_packets: usize) -> PathConfig {
    PathConfig::lossless(rate_bps, Duration::from_millis(delay_ms), queue_packets)
}

fn bind(ip: &str) -> UdpSocket {
    UdpSocket::bind(SocketAddr::new(ip.parse().unwrap(), 0)).unwrap()
}

fn relay(ip: &str, target: SocketAddr, path: PathConfig, seed: u64) -> Relay {
    let listen = SocketAddr::new(ip.parse().unwrap(), 0);
    Relay::start(RelayConfig::symmetric(listen, target, path, seed)).unwrap()
}

/// A datagram of `len` bytes carrying `seq` in its first 8.
fn datagram(seq: u64, len: usize) -> Vec<u8> {
    let mut d = vec![0u8; len.max(8)];
    d[..8].copy_from_slice(&seq.to_le_bytes());
    d.truncate(len);
    d
}

/// One datagram as seen by a recorder.
#[derive(Debug, Clone, Copy)]
struct Arrival {
    at: Instant,
    seq: u64,
    from: SocketAddr,
}

/// Records every datagram arriving on `socket` until `until`.
fn recorder(socket: &UdpSocket, until: Instant) -> JoinHandle<Vec<Arrival>> {
    let socket = socket.try_clone().unwrap();
    socket
        .set_read_timeout(Some(Duration::from_millis(10)))
        .unwrap();
    std::thread::spawn(move || {
        let mut out = Vec::new();
        let mut buf = vec![0u8; 65_536];
        while Instant::now() < until {
            if let Ok((n, from)) = socket.recv_from(&mut buf) {
                let at = Instant::now();
                let mut seq = [0u8; 8];
                if n >= 8 {
                    seq.copy_from_slice(&buf[..8]);
                }
                out.push(Arrival {
                    at,
                    seq: u64::from_le_bytes(seq),
                    from,
                });
            }
        }
        out
    })
}

/// Sends `count` datagrams of `len` bytes (sequence numbers from 0) every `gap`; returns the
/// instant just before each send.
fn paced_send(
    socket: &UdpSocket,
    to: SocketAddr,
    count: u64,
    gap: Duration,
    len: usize,
) -> Vec<Instant> {
    let start = Instant::now();
    let mut sent = Vec::new();
    for seq in 0..count {
        clock::wait_until(start + gap * seq as u32);
        let d = datagram(seq, len);
        sent.push(Instant::now());
        socket.send_to(&d, to).unwrap();
    }
    sent
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Sorted one-way delays in ms of the recorded arrivals.
fn delays(sent: &[Instant], arrivals: &[Arrival]) -> Vec<f64> {
    let mut d: Vec<f64> = arrivals
        .iter()
        .map(|a| ms(a.at - sent[a.seq as usize]))
        .collect();
    d.sort_by(f64::total_cmp);
    d
}

/// The rate on the wire (bit/s) of datagrams of `payload` bytes arriving back to back, robust to
/// late arrivals.
///
/// The span from arrival k to arrival k + `lag` is `lag` packet times plus the difference of the
/// two arrivals' lateness. Lateness is what the machine adds to the model (the relay's thread or
/// the recorder's woken late); on a machine whose cores are busy with other processes it is
/// usually tens of µs and now and then tens of ms. The rate from the first to the last arrival
/// takes the lateness of those two in full (+19% was seen under load); the median span over
/// every k ignores the arrivals that were held back, as long as most were not. `lag` is a
/// multiple of whatever period the link's service has (1 for a constant rate).
fn back_to_back_rate(arrivals: &[Arrival], payload: usize, lag: usize) -> f64 {
    let n = arrivals.len();
    assert!(n > 2 * lag, "{n} arrivals for a lag of {lag}");
    let mut spans: Vec<Duration> = (0..n - lag)
        .map(|k| arrivals[k + lag].at - arrivals[k].at)
        .collect();
    spans.sort();
    let median = spans[spans.len() / 2];
    (lag * (payload + HEADER_BYTES) * 8) as f64 / median.as_secs_f64()
}

/// Waits (at most 10 s: a loaded machine holds the relay's thread back) until the relay's stats
/// satisfy `done`.
fn settle(relay: &Relay, done: impl Fn(&acp_runtime::relay::RelayStats) -> bool) {
    wait_for(
        Duration::from_secs(10),
        || done(&relay.stats()),
        || format!("{:?}", relay.stats()),
    );
}

/// Measures the one-way delay through a 2 Mbit/s, 20 ms link in both directions on loopback of
/// the family of `ip`: `count` datagrams of 472 B payload (500 B on the wire with the relay's
/// 28 header bytes, so 2 ms of serialisation), one every 50 ms so the queue is always empty.
/// Returns the sorted delays in ms, forward then reverse.
fn one_way_delays(ip: &str, count: u64) -> (Vec<f64>, Vec<f64>) {
    const PAYLOAD: usize = 472;
    const GAP: Duration = Duration::from_millis(50);
    assert_eq!(PAYLOAD + HEADER_BYTES, 500);
    let client = bind(ip);
    let sink = bind(ip);
    let relay = relay(ip, sink.local_addr().unwrap(), link(2e6, 20, 100), 1);
    // The last arrival is due 22 ms after the last send; the rest is slack for a loaded machine.
    let span = GAP * count as u32 + Duration::from_millis(700);

    // Client → relay → sink.
    let rec = recorder(&sink, Instant::now() + span);
    let sent = paced_send(&client, relay.local_addr(), count, GAP, PAYLOAD);
    let arrivals = rec.join().unwrap();
    assert_eq!(arrivals.len() as u64, count, "every datagram arrives");
    let forward = delays(&sent, &arrivals);
    // The sink replies to the relay's upstream socket for this client.
    let upstream = arrivals[0].from;
    assert_eq!(
        upstream.ip(),
        relay.local_addr().ip(),
        "upstream on loopback"
    );

    // Sink → relay's upstream socket → client.
    let rec = recorder(&client, Instant::now() + span);
    let sent = paced_send(&sink, upstream, count, GAP, PAYLOAD);
    let arrivals = rec.join().unwrap();
    assert_eq!(arrivals.len() as u64, count, "every reply arrives");
    assert!(arrivals.iter().all(|a| a.from == relay.local_addr()));
    let reverse = delays(&sent, &arrivals);

    let s = relay.stats();
    assert_eq!(s.to_target.forwarded, count);
    assert_eq!(s.to_client.forwarded, count);
    assert_eq!(s.clients, 1);
    (forward, reverse)
}

fn check_delays(label: &str, d: &[f64]) {
    let median = d[d.len() / 2];
    println!(
        "{label}: one-way delay min {:.3} median {:.3} max {:.3} ms (model 22.000 ms)",
        d[0],
        median,
        d[d.len() - 1]
    );
    // The model gives exactly 20 ms + 2 ms. The relay never sends early, so no datagram can beat
    // it.
    assert!(d[0] >= 22.0, "{label}: min {} ms", d[0]);
    // What the test measures adds the relay's send lateness and the wake-up latencies of its read
    // and of the recorder: tens of µs on a quiet machine, where the median is within 0.5 ms. On a
    // machine whose cores are busy with other processes most datagrams come about 1 ms late (a
    // median of 23.0 ms seen at load 12 on 2 cores) and a few tens of ms late; that is the
    // scheduler's, and the relay's precision is `acp bench`'s business. So the model's delay is
    // checked on the promptest of the datagrams (one of 20–30 within 0.5 ms: a delay off by 0.5
    // ms or more fails), and the typical one only for lateness far beyond the scheduler's (3 ms).
    assert!(d[0] <= 22.5, "{label}: min {} ms", d[0]);
    assert!(median - 22.0 <= 3.0, "{label}: median {median} ms");
}

#[test]
fn one_way_delay_is_delay_plus_serialisation() {
    let _g = serial();
    let _rt = common::ahead_of_other_work();
    let (forward, reverse) = one_way_delays("127.0.0.1", 30);
    check_delays("ipv4 forward", &forward);
    check_delays("ipv4 reverse", &reverse);
}

#[test]
fn ipv6_works_both_ways() {
    let _g = serial();
    let _rt = common::ahead_of_other_work();
    let (forward, reverse) = one_way_delays("::1", 20);
    check_delays("ipv6 forward", &forward);
    check_delays("ipv6 reverse", &reverse);
}

#[test]
fn delivered_rate_caps_at_the_bottleneck() {
    let _g = serial();
    let _rt = common::ahead_of_other_work();
    const RATE: f64 = 2e6;
    const PAYLOAD: usize = 472; // 500 B = 4000 bits on the wire: 2 ms each, 500 packets/s
    let client = bind("127.0.0.1");
    let sink = bind("127.0.0.1");
    let relay = relay(
        "127.0.0.1",
        sink.local_addr().unwrap(),
        link(RATE, 10, 50),
        2,
    );
    // Offer 2× the rate (1000 packets/s) for 2 s.
    // The last arrival is due about 2.11 s in; the rest is slack for a loaded machine.
    let rec = recorder(&sink, Instant::now() + Duration::from_millis(3500));
    let sent = paced_send(
        &client,
        relay.local_addr(),
        2000,
        Duration::from_millis(1),
        PAYLOAD,
    );
    let arrivals = rec.join().unwrap();
    let n = arrivals.len();
    // Spans of 100 packets (200 ms).
    let rate = back_to_back_rate(&arrivals, PAYLOAD, 100);
    let err = rate / RATE - 1.0;
    println!(
        "delivered {n} of 2000, {rate:.0} bit/s (first to last {:.1} ms): error {:+.3}%",
        ms(arrivals[n - 1].at - arrivals[0].at),
        err * 100.0
    );
    // Link time is virtual, so the model's rate is exact; the median span is off by the lateness
    // of ordinary arrivals (≪ 1 ms of 200 ms) and the brief's ±5% is generous.
    assert!(err.abs() <= 0.05, "rate {rate}");
    // The cap, exactly: the link serialises one packet after another from the first arrival on,
    // so the n-th delivered datagram cannot arrive before the first was sent plus n packet times
    // plus the 10 ms delay, however late the machine's load makes the relay (it never sends
    // early).
    let packet_time = Duration::from_secs_f64(((PAYLOAD + HEADER_BYTES) * 8) as f64 / RATE);
    let earliest_last = sent[0] + packet_time * n as u32 + Duration::from_millis(10);
    assert!(
        arrivals[n - 1].at >= earliest_last,
        "{n} delivered {:?} before the bottleneck allows",
        earliest_last - arrivals[n - 1].at
    );
    settle(&relay, |s| {
        s.to_target.forwarded + s.to_target.dropped_queue >= 2000
    });
    let s = relay.stats().to_target;
    assert_eq!(s.received, 2000);
    assert_eq!(s.forwarded, n as u64);
    assert_eq!(s.received, s.forwarded + s.dropped_queue, "{s:?}");
    // About half is dropped: 2 s × 500/s delivered plus the queue of 50.
    assert!((1000..=1100).contains(&s.forwarded), "{s:?}");
}

#[test]
fn queue_limit_is_respected() {
    let _g = serial();
    let _rt = common::ahead_of_other_work();
    // 100 B payload = 128 B = 1024 bits on the wire: 51.2 ms each at 20 kbit/s.
    let client = bind("127.0.0.1");
    // Precondition: the burst ends before the first packet has been serialised, so no slot frees
    // during it and exactly the queue's 10 packets get in. On a machine busy with other processes
    // this thread can be held back mid-burst; then the trial says nothing of the relay and is run
    // again with a fresh relay (at most 5 times: a machine that never lets 100 sends finish
    // within 40 ms fails the test).
    let (relay, sink, burst) = (0..5)
        .find_map(|trial| {
            let sink = bind("127.0.0.1");
            let relay = relay(
                "127.0.0.1",
                sink.local_addr().unwrap(),
                link(20e3, 5, 10),
                3,
            );
            let start = Instant::now();
            for seq in 0..100 {
                client
                    .send_to(&datagram(seq, 100), relay.local_addr())
                    .unwrap();
            }
            let burst = start.elapsed();
            println!("trial {trial}: burst of 100 in {burst:?}");
            (burst < Duration::from_millis(40)).then_some((relay, sink, burst))
        })
        .expect("no burst of 100 sends within 40 ms in 5 trials");
    // 10 × 51.2 ms + 5 ms: the last arrives after 517 ms, at the earliest.
    let rec = recorder(&sink, Instant::now() + Duration::from_millis(1500));
    let arrivals = rec.join().unwrap();
    let seqs: Vec<u64> = arrivals.iter().map(|a| a.seq).collect();
    println!("burst of 100 in {burst:?}: delivered {seqs:?}");
    assert_eq!(
        seqs,
        (0..10).collect::<Vec<_>>(),
        "drop-tail keeps the head"
    );
    let s = relay.stats().to_target;
    assert_eq!(s.received, 100, "the kernel lost none of the burst");
    assert_eq!(s.forwarded, 10);
    assert_eq!(s.dropped_queue, 90);
}

#[test]
fn random_loss_matches_its_probability() {
    let _g = serial();
    let _rt = common::ahead_of_other_work();
    const COUNT: u64 = 2000;
    let client = bind("127.0.0.1");
    let sink = bind("127.0.0.1");
    let mut cfg = link(100e6, 1, 1000);
    cfg.link.loss = LossModel::Bernoulli { p: 0.3 };
    let relay = relay("127.0.0.1", sink.local_addr().unwrap(), cfg, 4);
    // 2000 datagrams of 100 B, one every 250 µs: 3.2 Mbit/s on a 100 Mbit/s link, no queueing.
    // The last arrival is due about 0.5 s in; the rest is slack for a loaded machine.
    let rec = recorder(&sink, Instant::now() + Duration::from_millis(2000));
    paced_send(
        &client,
        relay.local_addr(),
        COUNT,
        Duration::from_micros(250),
        100,
    );
    let arrivals = rec.join().unwrap();
    let lost = 1.0 - arrivals.len() as f64 / COUNT as f64;
    println!("lost fraction {lost:.4} (p = 0.3)");
    // The number lost is Binomial(2000, 0.3): standard deviation sqrt(0.3·0.7/2000) = 0.0102,
    // so ±0.04 is about 4 standard deviations. With the fixed seed the outcome is fixed; the
    // tolerance is what any seed passes with probability 0.9999.
    assert!((lost - 0.3).abs() <= 0.04, "lost {lost}");
    let s = relay.stats().to_target;
    assert_eq!(s.received, COUNT);
    assert_eq!(s.dropped_queue, 0);
    assert_eq!(s.dropped_loss, COUNT - arrivals.len() as u64);
    assert_eq!(s.forwarded, arrivals.len() as u64);
}

#[test]
fn cross_traffic_takes_its_share_of_the_bottleneck() {
    let _g = serial();
    let _rt = common::ahead_of_other_work();
    const RATE: f64 = 20e6;
    const CROSS: f64 = RATE / 2.0;
    const OFFERED: f64 = 0.55 * RATE;
    const COUNT: u64 = 2750; // 2 s at 11 Mbit/s
    const PAYLOAD: usize = 972; // 1000 B on the wire, like the cross traffic
    let client = bind("127.0.0.1");
    let sink = bind("127.0.0.1");
    let cfg = PathConfig {
        cross_bps: CROSS,
        ..link(RATE, 5, 4000)
    };
    let relay = relay("127.0.0.1", sink.local_addr().unwrap(), cfg, 5);
    // The flow offers 0.55 of the rate, more than the half the cross traffic leaves it, so the
    // link is saturated and a queue builds (by 0.05 × 20 Mbit/s × 2 s = 250 packets, well within
    // its 4000, so nothing is dropped). A FIFO queue then serves the two in proportion to what
    // they offer: the flow gets 0.55 / (0.55 + 0.5) = 0.524 of the link, about half. (Offering
    // more would get it more: at 0.75 it gets 0.6, not 0.5; the relay's unit tests check that.)
    let rec = recorder(&sink, Instant::now() + Duration::from_millis(2600));
    let gap = Duration::from_secs_f64((PAYLOAD + HEADER_BYTES) as f64 * 8.0 / OFFERED);
    paced_send(&client, relay.local_addr(), COUNT, gap, PAYLOAD);
    let arrivals = rec.join().unwrap();
    // Measure over 1.5 s once the backlog is established (after 250 ms) and before the sender
    // stops (2 s): there the link is always busy.
    let t0 = arrivals[0].at + Duration::from_millis(250);
    let t1 = t0 + Duration::from_millis(1500);
    let n = arrivals.iter().filter(|a| a.at >= t0 && a.at < t1).count();
    let rate = (n * (PAYLOAD + HEADER_BYTES) * 8) as f64 / 1.5;
    let share = rate / RATE;
    let law = OFFERED / (OFFERED + CROSS);
    println!(
        "flow delivered {rate:.0} bit/s = {share:.3} of the link (half ±10%; FIFO law {law:.3})"
    );
    // The brief: about half, ±10% of it. Cross traffic is Poisson, about 1875 packets in the
    // window (standard deviation 43, 2.3%), which moves the flow's share by about 1%; simulating
    // the model with 8 seeds gave 0.518–0.533.
    assert!((share - 0.5).abs() <= 0.05, "share {share}");
    assert!(
        (share / law - 1.0).abs() <= 0.05,
        "share {share}, law {law}"
    );
    settle(&relay, |s| s.to_target.forwarded >= COUNT);
    let s = relay.stats().to_target;
    assert_eq!(s.forwarded, COUNT);
    assert_eq!(s.dropped_queue, 0);
    assert_eq!(s.cross_dropped, 0);
    // 1250 cross packets/s for the ≥ 2.6 s the relay has run.
    assert!(s.cross_packets > 2800, "{s:?}");
}

/// Waits up to `timeout` for one datagram.
fn recv_one(socket: &UdpSocket, timeout: Duration) -> Option<(Vec<u8>, SocketAddr)> {
    socket.set_read_timeout(Some(timeout)).unwrap();
    let mut buf = vec![0u8; 65_536];
    let (n, from) = socket.recv_from(&mut buf).ok()?;
    buf.truncate(n);
    Some((buf, from))
}

#[test]
fn blackhole_drops_everything_both_ways_until_lifted() {
    let _g = serial();
    let _rt = common::ahead_of_other_work();
    let client = bind("127.0.0.1");
    let sink = bind("127.0.0.1");
    let relay = relay(
        "127.0.0.1",
        sink.local_addr().unwrap(),
        link(10e6, 20, 100),
        6,
    );
    let wait = Duration::from_millis(500);

    // Set up the mapping: one datagram each way.
    client
        .send_to(&datagram(1, 64), relay.local_addr())
        .unwrap();
    let (_, upstream) = recv_one(&sink, wait).expect("forward path works");
    sink.send_to(&datagram(2, 64), upstream).unwrap();
    recv_one(&client, wait).expect("reverse path works");

    // Datagrams in flight (20 ms of delay) when the blackhole goes on are dropped too.
    client
        .send_to(&datagram(3, 64), relay.local_addr())
        .unwrap();
    sink.send_to(&datagram(4, 64), upstream).unwrap();
    relay.set_blackhole(true);
    for seq in 10..20 {
        client
            .send_to(&datagram(seq, 64), relay.local_addr())
            .unwrap();
        sink.send_to(&datagram(seq, 64), upstream).unwrap();
    }
    assert!(recv_one(&sink, Duration::from_millis(200)).is_none());
    assert!(recv_one(&client, Duration::from_millis(50)).is_none());
    let s = relay.stats();
    assert_eq!(s.to_target.dropped_blackhole, 11);
    assert_eq!(s.to_client.dropped_blackhole, 11);
    assert_eq!(s.to_target.forwarded, 1);
    assert_eq!(s.to_client.forwarded, 1);

    relay.set_blackhole(false);
    for seq in 30..35 {
        client
            .send_to(&datagram(seq, 64), relay.local_addr())
            .unwrap();
        sink.send_to(&datagram(seq, 64), upstream).unwrap();
    }
    for seq in 30..35 {
        let (d, _) = recv_one(&sink, wait).expect("forward path works again");
        assert_eq!(d, datagram(seq, 64));
        let (d, from) = recv_one(&client, wait).expect("reverse path works again");
        assert_eq!(d, datagram(seq, 64));
        assert_eq!(from, relay.local_addr());
    }
    let s = relay.stats();
    assert_eq!(s.to_target.forwarded, 6);
    assert_eq!(s.to_client.forwarded, 6);
}

#[test]
fn unreachable_target_is_survived_and_odd_sizes_pass() {
    let _g = serial();
    let _rt = common::ahead_of_other_work();
    // A port with nobody behind it (for now).
    let target = bind("127.0.0.1").local_addr().unwrap();
    let client = bind("127.0.0.1");
    let relay = relay("127.0.0.1", target, link(100e6, 1, 100), 7);
    for seq in 0..20 {
        client
            .send_to(&datagram(seq, 64), relay.local_addr())
            .unwrap();
        std::thread::sleep(Duration::from_millis(2));
    }
    settle(&relay, |s| {
        s.to_target.forwarded + s.to_target.send_errors >= 20
    });
    let s = relay.stats();
    println!("unreachable target: {s:?}");
    // Each send either succeeded (and drew an ICMP port unreachable, reported as ECONNREFUSED on
    // the upstream socket) or failed with that error; both are counted, nothing else happens.
    assert_eq!(s.to_target.forwarded + s.to_target.send_errors, 20);

    // Someone now listens there: traffic flows, including empty and maximum-size datagrams.
    let sink = UdpSocket::bind(target).unwrap();
    let sizes = [0usize, 1, 8, 1472, 65_507];
    for len in sizes {
        client
            .send_to(&datagram(len as u64, len), relay.local_addr())
            .unwrap();
        let (d, _) = recv_one(&sink, Duration::from_millis(500)).expect("forwarded");
        assert_eq!(d, datagram(len as u64, len));
    }
}

#[test]
fn stop_is_prompt_and_releases_the_port() {
    let _g = serial();
    let _rt = common::ahead_of_other_work();
    // Each trial stops the relay just after it forwarded a datagram, when its thread has gone
    // back to waiting with the idle poll's 50 ms timeout: without the wake-up through a socket
    // pair every stop would take about 50 ms. A machine busy with other processes can make any
    // one stop slow (the relay's and this thread wait for a core), so the quickest of 5 trials is
    // what is checked.
    let took = (0..5)
        .map(|trial| {
            let sink = bind("127.0.0.1");
            let client = bind("127.0.0.1");
            let relay = relay(
                "127.0.0.1",
                sink.local_addr().unwrap(),
                link(1e6, 10, 10),
                8,
            );
            let addr = relay.local_addr();
            client.send_to(&datagram(trial, 64), addr).unwrap();
            recv_one(&sink, Duration::from_secs(10)).expect("forwarded");
            let start = Instant::now();
            relay.stop();
            let took = start.elapsed();
            UdpSocket::bind(addr).expect("the listen port is free again");
            took
        })
        .collect::<Vec<_>>();
    println!("stops took {took:?}");
    let quickest = *took.iter().min().unwrap();
    assert!(quickest < Duration::from_millis(40), "stops took {took:?}");
}

#[test]
fn each_client_gets_its_own_mapping() {
    let _g = serial();
    let _rt = common::ahead_of_other_work();
    let sink = bind("127.0.0.1");
    let relay = relay(
        "127.0.0.1",
        sink.local_addr().unwrap(),
        link(10e6, 2, 100),
        9,
    );
    let wait = Duration::from_millis(500);
    let clients: Vec<UdpSocket> = (0..3).map(|_| bind("127.0.0.1")).collect();
    let mut upstreams = Vec::new();
    for (i, c) in clients.iter().enumerate() {
        c.send_to(&datagram(i as u64, 32), relay.local_addr())
            .unwrap();
        let (d, from) = recv_one(&sink, wait).expect("forwarded");
        assert_eq!(d, datagram(i as u64, 32));
        assert!(
            !upstreams.contains(&from),
            "a new upstream socket per client"
        );
        upstreams.push(from);
    }
    assert_eq!(relay.stats().clients, 3);
    // Replies in reverse order each reach the client behind their upstream socket.
    for (i, up) in upstreams.iter().enumerate().rev() {
        sink.send_to(&datagram(100 + i as u64, 32), *up).unwrap();
        let (d, from) = recv_one(&clients[i], wait).expect("reply forwarded");
        assert_eq!(d, datagram(100 + i as u64, 32));
        assert_eq!(from, relay.local_addr());
    }
    // A second datagram from a known client reuses its mapping.
    clients[1]
        .send_to(&datagram(7, 32), relay.local_addr())
        .unwrap();
    let (_, from) = recv_one(&sink, wait).expect("forwarded");
    assert_eq!(from, upstreams[1]);
    assert_eq!(relay.stats().clients, 3);
}

#[test]
fn invalid_config_is_refused() {
    let target = "127.0.0.1:9".parse().unwrap();
    let mut lossy = link(1e6, 1, 10);
    lossy.link.loss = LossModel::Bernoulli { p: 1.01 };
    for bad in [
        link(0.0, 1, 10),
        link(f64::NAN, 1, 10),
        link(1e6, 1, 0),
        lossy,
        PathConfig {
            cross_bps: f64::INFINITY,
            ..link(1e6, 1, 10)
        },
    ] {
        // Refused in either direction, and the message says which.
        let listen = "127.0.0.1:0".parse().unwrap();
        let mut cfg = RelayConfig::symmetric(listen, target, link(1e6, 1, 10), 0);
        cfg.to_client = bad.clone();
        let err = Relay::start(cfg).expect_err("refused");
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput, "{bad:?}");
        assert!(err.to_string().starts_with("target→client: "), "{err}");
    }
}

/// Arrivals from `from` to `to` after `t0`.
fn between(arrivals: &[Arrival], t0: Instant, from: Duration, to: Duration) -> Vec<Arrival> {
    arrivals
        .iter()
        .filter(|a| a.at >= t0 + from && a.at < t0 + to)
        .copied()
        .collect()
}

#[test]
fn a_schedule_of_rate_and_delay_is_reproduced() {
    let _g = serial();
    let _rt = common::ahead_of_other_work();
    const PAYLOAD: usize = 472; // 500 B on the wire
    const PROBE: usize = 20; // 48 B on the wire: 0.19 ms at 2 Mbit/s, 0.38 ms at 1 Mbit/s
    let s = Duration::from_secs;
    let ms = Duration::from_millis;
    // 2 Mbit/s and 20 ms for 2 s, then 1 Mbit/s and 40 ms, both ways.
    let mut path = link(2e6, 20, 50);
    path.link.schedule = Some(Schedule {
        steps: vec![Step {
            at: s(2),
            rate_bps: Some(1e6),
            delay: Some(ms(40)),
            loss: None,
        }],
        repeat: None,
    });
    let phases = [(0.0, 2e6, 20.0), (2.0, 1e6, 40.0)]; // (from s, bit/s, delay ms)
    let client = bind("127.0.0.1");
    let sink = bind("127.0.0.1");
    let relay = relay("127.0.0.1", sink.local_addr().unwrap(), path, 12);
    let t0 = relay.started();
    client
        .send_to(&datagram(u64::MAX, 8), relay.local_addr())
        .unwrap();
    let (_, upstream) = recv_one(&sink, Duration::from_millis(500)).expect("mapped");

    // Forward: a saturating sender, 3 Mbit/s on the wire from 0.1 s to 4.1 s. Reverse: a probe
    // of 20 B every 50 ms, alone on its link.
    let end = t0 + ms(4400);
    let forward = recorder(&sink, end);
    let reverse = recorder(&client, end);
    let sender = {
        let client = client.try_clone().unwrap();
        let to = relay.local_addr();
        std::thread::spawn(move || {
            clock::wait_until(t0 + ms(100));
            paced_send(&client, to, 3000, Duration::from_nanos(1_333_333), PAYLOAD)
        })
    };
    clock::wait_until(t0 + ms(100));
    let probes = paced_send(&sink, upstream, 80, ms(50), PROBE);
    sender.join().unwrap();
    let forward: Vec<Arrival> = forward
        .join()
        .unwrap()
        .into_iter()
        .filter(|a| a.seq != u64::MAX)
        .collect();
    let reverse = reverse.join().unwrap();

    for (i, &(from, rate, delay)) in phases.iter().enumerate() {
        // Rate: departures 0.4–1.9 s into the phase, when the queue is long (delivery lags
        // service by the phase's delay, which only shifts the window).
        let start = Duration::from_secs_f64(from);
        let window = between(&forward, t0, start + ms(400), start + ms(1900));
        let got = back_to_back_rate(&window, PAYLOAD, window.len() / 4);
        // Delay: probes whose service ended inside the phase, 20 ms or more from its edges.
        let mut delays: Vec<f64> = reverse
            .iter()
            .filter(|a| {
                let sent = probes[a.seq as usize] - t0;
                let (lo, hi) = (start + ms(20), start + s(2) - ms(20));
                sent >= lo && (i == 1 || sent < hi)
            })
            .map(|a| (a.at - probes[a.seq as usize]).as_secs_f64() * 1e3)
            .collect();
        delays.sort_by(f64::total_cmp);
        let tx = (PROBE + HEADER_BYTES) as f64 * 8.0 / rate * 1e3;
        println!(
            "phase {i}: delivered {got:.0} bit/s ({} packets, scheduled {rate:.0}: {:+.3}%); \
             {} probes' one-way delay min {:.3} median {:.3} max {:.3} ms (scheduled {delay} ms \
             + {tx:.3} ms serialisation)",
            window.len(),
            (got / rate - 1.0) * 100.0,
            delays.len(),
            delays[0],
            delays[delays.len() / 2],
            delays[delays.len() - 1],
        );
        // Link time is virtual, so the model's rate is exact; the median span (a quarter of the
        // window, about 375 ms) is off by the lateness of ordinary arrivals, tens of µs.
        assert!((got / rate - 1.0).abs() <= 0.02, "phase {i}: {got} bit/s");
        assert!(window.len() > 300, "phase {i}: {} packets", window.len());
        // A probe takes exactly the delay plus its serialisation (under 0.4 ms) in the model;
        // the relay never sends early, and reading, waking and the loopback add tens of µs.
        assert!(delays.len() >= 30, "phase {i}: {} probes", delays.len());
        assert!(delays[0] >= delay + tx, "phase {i}: min {}", delays[0]);
        // The promptest within 0.5 ms of the model: the phase's delay is the scheduled one. The
        // typical probe within 3 ms, far less than the phases' delays differ: on a 2-core machine
        // busy with other processes the threads of this test and the relay wake late (the 90th
        // percentile was 1.7 ms late once, the slowest tens of ms); the relay's precision is
        // `acp bench`'s business.
        assert!(
            delays[0] <= delay + tx + 0.5,
            "phase {i}: min {}",
            delays[0]
        );
        let median = delays[delays.len() / 2];
        assert!(median - delay < 3.0, "phase {i}: median {median} ms");
    }
    let st = relay.stats();
    assert!(
        st.to_target.dropped_queue > 0,
        "the sender saturated the link"
    );
    assert_eq!(st.to_client.dropped_queue, 0, "probes never queue");
}

#[test]
fn a_mahimahi_trace_is_reproduced() {
    let _g = serial();
    let _rt = common::ahead_of_other_work();
    // Opportunities at 5 (three), 12 (two), 19, 26 (two), 33, 40, 47 and 50 ms, looping every
    // 50 ms: 12 × 1500 B per 50 ms = 2.88 Mbit/s.
    const TRACE: &str = "5\n5\n5\n12\n12\n19\n26\n26\n33\n40\n47\n50\n";
    const PER_PERIOD: usize = 12;
    const PAYLOAD: usize = 1472; // 1500 B on the wire: one opportunity each
    let ms = Duration::from_millis;
    let trace = Trace::parse(TRACE).unwrap();
    let period = trace.period();
    let mean = trace.mean_rate_bps();
    let mut path = link(f64::INFINITY, 10, 100);
    path.link.trace = Some(trace);
    let client = bind("127.0.0.1");
    let sink = bind("127.0.0.1");
    let relay = relay("127.0.0.1", sink.local_addr().unwrap(), path, 13);
    let t0 = relay.started();

    // Saturate: 1.5 × the mean rate for 3 s. Then lone packets, each sent 2 ms before an
    // opportunity (with no other opportunity in between), one every 100 ms from 3.7 s.
    let rec = recorder(&sink, t0 + ms(4600));
    let gap = Duration::from_secs_f64(1500.0 * 8.0 / (1.5 * mean));
    paced_send(&client, relay.local_addr(), 1080, gap, PAYLOAD);
    let lone_at = [12u64, 19, 26, 33, 40, 47, 55]; // ms into a period (55 = next period's 5)
    let mut expected = Vec::new();
    for (q, x) in lone_at.iter().enumerate() {
        let cycle = t0 + period * (74 + 2 * q as u32);
        clock::wait_until(cycle + ms(x - 2));
        client
            .send_to(&datagram(10_000 + q as u64, PAYLOAD), relay.local_addr())
            .unwrap();
        // The opportunity, then the propagation delay; unless this test's thread was
        // descheduled past the opportunity (a loaded machine), which says nothing of the relay.
        let on_time = std::time::Instant::now() < cycle + ms(x - 1);
        expected.push(on_time.then(|| cycle + ms(*x) + ms(10)));
    }
    let arrivals = rec.join().unwrap();
    let (saturated, lone): (Vec<Arrival>, Vec<Arrival>) =
        arrivals.into_iter().partition(|a| a.seq < 10_000);

    // Every opportunity carries one packet while the queue is full, so packets i and i + 12k
    // are exactly k periods apart: measure over 40 periods from 0.5 s, in spans of 10 periods.
    let i = saturated.iter().position(|a| a.at >= t0 + ms(500)).unwrap();
    let k = 40;
    let window = &saturated[i..=i + PER_PERIOD * k];
    let got = back_to_back_rate(window, PAYLOAD, PER_PERIOD * 10);
    let span = window[window.len() - 1].at - window[0].at;
    println!(
        "trace: delivered {got:.0} bit/s over {:.3} ms, trace mean {mean:.0}: {:+.4}%",
        span.as_secs_f64() * 1e3,
        (got / mean - 1.0) * 100.0
    );
    // The model is exact; the median span (10 periods, 500 ms) is off by the lateness of ordinary
    // arrivals, tens of µs.
    assert!((got / mean - 1.0).abs() <= 0.02, "{got} bit/s");

    assert_eq!(lone.len(), lone_at.len(), "every lone packet arrives");
    let checked = expected.iter().flatten().count();
    assert!(
        checked * 2 >= lone_at.len(),
        "only {checked} lone packets sent on time"
    );
    let mut prompt = 0;
    for a in &lone {
        let Some(want) = expected[(a.seq - 10_000) as usize] else {
            println!(
                "lone packet {}: sent late by this machine, not checked",
                a.seq - 10_000
            );
            continue;
        };
        let late = a.at.checked_duration_since(want);
        println!(
            "lone packet {}: {:.3} ms after its opportunity + delay",
            a.seq - 10_000,
            late.map_or(f64::NAN, |d| d.as_secs_f64() * 1e3)
        );
        // Never early: the trace's opportunity is a hard bound.
        let late = late.expect("not before its opportunity");
        // Late by the relay's wake-up and the loopback: tens of µs on an idle machine. A busy
        // one (CI's two cores running other tests) can wake the relay's thread milliseconds late,
        // which is the scheduler, not the model: most must be under 1 ms, none beyond 20 ms.
        assert!(late < ms(20), "{late:?}");
        prompt += usize::from(late < ms(1));
    }
    assert!(
        prompt * 2 >= checked,
        "only {prompt} of {checked} lone packets within 1 ms"
    );
}

#[test]
fn dscp_is_read_kept_and_served_first_under_priority() {
    let _g = serial();
    let _rt = common::ahead_of_other_work();
    // 1000 B on the wire at 800 kbit/s: 10 ms each. A burst of five best-effort datagrams, then
    // one marked 46 (expedited forwarding) while the first is in service.
    let mut path = link(800e3, 1, 100);
    path.link.discipline = Discipline::StrictPriority {
        classes: vec![vec![46]],
    };
    let client = bind("127.0.0.1");
    let sink = bind("127.0.0.1");
    receive_dscp(&sink).unwrap();
    sink.set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let relay = relay("127.0.0.1", sink.local_addr().unwrap(), path, 14);
    for seq in 0..5 {
        client
            .send_to(&datagram(seq, 972), relay.local_addr())
            .unwrap();
    }
    set_dscp(&client, 46).unwrap();
    client
        .send_to(&datagram(46, 972), relay.local_addr())
        .unwrap();
    let mut buf = vec![0u8; 2048];
    let got: Vec<(u64, u8)> = (0..6)
        .map(|_| {
            let d = recv_with_dscp(&sink, &mut buf).expect("forwarded");
            let seq = u64::from_le_bytes(buf[..8].try_into().unwrap());
            (seq, d.dscp)
        })
        .collect();
    println!("order and DSCP at the sink: {got:?}");
    // The first was already in service (service is not pre-empted); the marked one overtakes
    // the other four and keeps its marking on the way out.
    assert_eq!(got, [(0, 0), (46, 46), (1, 0), (2, 0), (3, 0), (4, 0)]);
}
