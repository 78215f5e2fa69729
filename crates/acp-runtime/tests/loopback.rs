//! The runtime over loopback, without a relay: monitor server and source driver together.

use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use acp_core::source::{Phase, SourceStats};
use acp_core::{Acp, Fixed, MonitorConfig, SourceConfig};
use acp_runtime::driver::{Payload, RunLimits, SourceSet, SourceSpec};
use acp_runtime::server::{MonitorServer, ServerConfig};
use acp_testkit::update_datagram;

fn server(listen: &str, synced: bool) -> MonitorServer {
    let cfg = MonitorConfig {
        clocks_synchronised: synced,
        max_sessions: 4096,
        ..MonitorConfig::default()
    };
    MonitorServer::start(ServerConfig::new(listen.parse().unwrap(), cfg), None).unwrap()
}

fn limits(ms: u64) -> RunLimits {
    RunLimits {
        duration: Some(Duration::from_millis(ms)),
        ..RunLimits::default()
    }
}

/// Whether a source has finished probing and has had ACKs for at least its 10 probes.
fn running_with_acks(stats: &SourceStats) -> bool {
    stats.phase == Phase::Running && stats.acks_in_sequence >= 10
}

#[test]
fn one_thousand_concurrent_sources_from_one_process() {
    let server = server("127.0.0.1:0", true);
    let mut set = SourceSet::new(server.local_addr()).unwrap();
    let mut sessions = Vec::new();
    for i in 0..1000 {
        sessions.push(set.add(SourceSpec {
            name: format!("s{i}"),
            controller: Box::new(Acp::plus()),
            // Cap each source at 20 updates/s: 20,000 updates/s in all.
            config: SourceConfig {
                max_rate: 20.0,
                ..SourceConfig::default()
            },
            payload: Payload::Synthetic(16),
        }));
    }
    // Until every source has finished its 10 probes and is running with ACKs coming back, checked
    // every 100 ms, rather than for a fixed time: on a machine whose cores are busy with other
    // processes the 10,000 probes of 1,000 sources take longer than on a quiet one (a fixed 4 s
    // was not always enough). A minute is far more than any load here needs; a source that never
    // gets going fails the test.
    let stop = Arc::new(AtomicBool::new(false));
    let limits = RunLimits {
        duration: Some(Duration::from_secs(60)),
        stop: Some(stop.clone()),
        ..RunLimits::default()
    };
    let reports = set
        .run(&limits, Duration::from_millis(100), |reports| {
            if reports.iter().all(|r| running_with_acks(&r.stats)) {
                stop.store(true, Ordering::Relaxed);
            }
        })
        .unwrap();
    // What is checked below of the monitor follows from the ACKs the sources already have, so
    // nothing needs to wait for updates still on their way.
    let snap = server.stop().unwrap();
    assert_eq!(snap.sessions.len(), 1000, "every source has a session");
    for r in &reports {
        // Every source finished its 10 probes and got ACKs back.
        assert!(running_with_acks(&r.stats), "{}: {:?}", r.name, r.stats);
        assert_eq!(r.stats.invalid, 0);
    }
    for s in &snap.sessions {
        assert!(sessions.contains(&s.key.session));
        assert!(s.stats.delivered >= 10);
        // Same clock on both ends: the true age on loopback is well under a second.
        assert!(s.avg_age.is_some_and(|a| a < 1.0), "{:?}", s.avg_age);
    }
    assert_eq!(snap.totals.stats.malformed, 0);
}

/// A monitor server on loopback that keeps the payload of every fresh update it delivers.
fn collecting_server() -> (MonitorServer, Arc<Mutex<Vec<Vec<u8>>>>) {
    let delivered = Arc::new(Mutex::new(Vec::new()));
    let sink = delivered.clone();
    let server = MonitorServer::start(
        ServerConfig::new("127.0.0.1:0".parse().unwrap(), MonitorConfig::default()),
        Some(Box::new(move |d, _| {
            sink.lock().unwrap().push(d.payload.to_vec());
        })),
    )
    .unwrap();
    (server, delivered)
}

#[test]
fn fresh_updates_reach_the_application_and_malformed_datagrams_are_counted() {
    let (server, delivered) = collecting_server();
    // Garbage from another socket: counted, never answered.
    let junk = UdpSocket::bind("127.0.0.1:0").unwrap();
    for bad in [&b"hello"[..], &[0u8; 100][..], &b"AC\x01\x01"[..]] {
        junk.send_to(bad, server.local_addr()).unwrap();
    }
    let mut set = SourceSet::new(server.local_addr()).unwrap();
    let session = set.add(SourceSpec {
        name: "push".into(),
        controller: Box::new(Fixed::new(100.0)),
        config: SourceConfig::default(),
        payload: Payload::Push,
    });
    let feed = set.push_feed(session).unwrap();
    let feeder = std::thread::spawn(move || {
        for i in 0..40 {
            feed.offer(format!("reading {i}").as_bytes()).unwrap();
            std::thread::sleep(Duration::from_millis(10));
        }
    });
    set.run(&limits(800), Duration::from_secs(60), |_| {})
        .unwrap();
    feeder.join().unwrap();
    std::thread::sleep(Duration::from_millis(50));
    let snap = server.stop().unwrap();
    assert_eq!(snap.totals.stats.malformed, 3);
    let got = delivered.lock().unwrap();
    assert!(got.len() >= 20, "{} delivered", got.len());
    assert!(got.iter().all(|p| p.starts_with(b"reading ")));
    junk.set_read_timeout(Some(Duration::from_millis(50)))
        .unwrap();
    assert!(
        junk.recv(&mut [0u8; 64]).is_err(),
        "malformed input is not answered"
    );
}

#[test]
fn ipv6_works() {
    let server = server("[::1]:0", false);
    assert!(matches!(server.local_addr(), SocketAddr::V6(_)));
    let mut set = SourceSet::new(server.local_addr()).unwrap();
    set.add(SourceSpec {
        name: "v6".into(),
        controller: Box::new(Acp::plus()),
        config: SourceConfig::default(),
        payload: Payload::Synthetic(8),
    });
    let reports = set
        .run(&limits(500), Duration::from_secs(60), |_| {})
        .unwrap();
    assert_eq!(reports[0].stats.phase, Phase::Running);
    assert!(server.stop().unwrap().totals.stats.delivered > 10);
}

#[test]
fn updates_of_every_size_the_wire_allows_are_acked_and_overlong_datagrams_are_not() {
    let server = server("127.0.0.1:0", false);
    let client = UdpSocket::bind("127.0.0.1:0").unwrap();
    client
        .set_read_timeout(Some(Duration::from_secs(2)))
        .unwrap();
    let mut ack = [0u8; 128];
    // Just past the old 9,216-byte receive slot, and the largest IPv4 payload.
    for (seq, size) in [(1u64, 9_173usize), (2, acp_core::wire::MAX_IPV4_PAYLOAD)] {
        let update = update_datagram(7, seq, &vec![0x5a; size]);
        client.send_to(&update, server.local_addr()).unwrap();
        let n = client.recv(&mut ack).expect("an ACK");
        match acp_core::wire::Packet::decode(&ack[..n]).unwrap() {
            acp_core::wire::Packet::Ack(a) => assert_eq!((a.session, a.seq), (7, seq)),
            other => panic!("expected an ACK, got {other:?}"),
        }
    }
    // One byte more than the length field says: dropped, counted, never answered.
    let mut overlong = update_datagram(7, 3, b"reading");
    overlong.push(0);
    client.send_to(&overlong, server.local_addr()).unwrap();
    client
        .set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    assert!(
        client.recv(&mut ack).is_err(),
        "an overlong datagram was answered"
    );
    let snap = server.stop().unwrap();
    assert_eq!(
        snap.totals.stats.malformed_by.get("length_mismatch"),
        Some(&1)
    );
    assert_eq!((snap.totals.stats.acks, snap.totals.acks_sent), (2, 2));
    assert_eq!(snap.totals.truncated, 0);
}

#[test]
fn an_application_event_loop_drives_a_push_source_without_a_thread() {
    use std::os::fd::AsRawFd;

    let (server, delivered) = collecting_server();
    let mut set = SourceSet::new(server.local_addr()).unwrap();
    let session = set.add(SourceSpec {
        name: "loop".into(),
        controller: Box::new(Acp::plus()),
        config: SourceConfig::default(),
        payload: Payload::Push,
    });
    // Too long for an update: refused, nothing queued.
    let err = set.push(session, &vec![0u8; 70_000]).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
    assert!(set.push(session ^ 1, b"x").is_err(), "unknown session");
    // The loop: a new reading every 5 ms, poll(2) on the set's socket until the next deadline.
    let start = std::time::Instant::now();
    let mut next_reading = start;
    let mut reading = 0u32;
    while start.elapsed() < Duration::from_millis(1500) {
        let now = std::time::Instant::now();
        if now >= next_reading {
            reading += 1;
            set.push(session, format!("reading {reading}").as_bytes())
                .unwrap();
            next_reading += Duration::from_millis(5);
        }
        let deadline = set.drive().unwrap();
        let wake = deadline
            .map(acp_runtime::clock::to_instant)
            .unwrap_or(next_reading)
            .min(next_reading);
        let timeout = wake.saturating_duration_since(std::time::Instant::now());
        let mut fd = libc::pollfd {
            fd: set.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd for the duration of the call.
        unsafe { libc::poll(&mut fd, 1, timeout.as_millis() as libc::c_int) };
    }
    let stats = &set.reports()[0].stats;
    std::thread::sleep(Duration::from_millis(100));
    server.stop().unwrap();
    let delivered = delivered.lock().unwrap();
    // The 10 probes at one per RTT, then a fresh reading at each send: far more than the probes,
    // each one a reading that was pushed, in order.
    assert_eq!(stats.phase, Phase::Running, "{stats:?}");
    assert!(stats.acks_in_sequence >= 50, "{stats:?}");
    assert!(delivered.len() >= 50, "{}", delivered.len());
    let numbers: Vec<u32> = delivered
        .iter()
        .map(|p| {
            let text = std::str::from_utf8(p).unwrap();
            text.strip_prefix("reading ").unwrap().parse().unwrap()
        })
        .collect();
    assert!(numbers.windows(2).all(|w| w[0] < w[1]), "{numbers:?}");
    assert!(
        *numbers.last().unwrap() > reading - 10,
        "the latest readings arrive"
    );
}
