//! The monitor's TCP port under attack, on loopback (issue 25, item 1): a connection written to
//! flat out, sealed updates replayed into a connection, idle connections and unfinished frames,
//! one network holding the connection table, and idle connections taxing UDP service. Each test
//! reproduces an attack that succeeded against the server before it waited in epoll and served
//! connections in fair turns.

mod common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use acp_core::seal::{Keyring, Psk, Secret, SessionCipher};
use acp_core::wire::Ack;
use acp_core::MonitorConfig;
use acp_runtime::server::{MonitorServer, ServerConfig, TcpConfig};
use acp_runtime::stream::encode_frame;
use acp_testkit::{update, Sender};

/// (session id, sequence) of every update delivered, in order.
type Deliveries = Arc<Mutex<Vec<(u64, u64)>>>;

fn start(monitor: MonitorConfig, tcp: TcpConfig) -> (MonitorServer, Deliveries) {
    let delivered = Arc::new(Mutex::new(Vec::new()));
    let sink = delivered.clone();
    let mut cfg = ServerConfig::new("127.0.0.1:0".parse().unwrap(), monitor);
    cfg.tcp = Some(tcp);
    let on_update = Box::new(move |d: &acp_core::monitor::Delivery<'_>, _: Option<u64>| {
        sink.lock().unwrap().push((d.key.session, d.seq));
    });
    (
        MonitorServer::start(cfg, Some(on_update)).unwrap(),
        delivered,
    )
}

/// Sends `count` updates of one session over UDP, one at a time, each when the previous one's
/// ACK came back (or after `give_up`); returns how many ACKs took longer than `within`.
/// Stops early once more than `max_late` were late: the verdict is known.
fn probe(to: SocketAddr, count: u64, within: Duration, max_late: u64) -> u64 {
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    socket
        .set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let session = 0xACE + count;
    let (mut late, mut buf) = (0, [0u8; 128]);
    for seq in 1..=count {
        let mut out = [0u8; 128];
        let n = update(session, seq, b"x").encode(&mut out).unwrap();
        let sent = Instant::now();
        socket.send_to(&out[..n], to).unwrap();
        let answered = loop {
            match socket.recv(&mut buf) {
                Ok(n) if Ack::decode(&buf[..n]).is_ok_and(|a| a.seq == seq) => break true,
                Ok(_) => {}
                Err(_) => break false,
            }
        };
        if !answered || sent.elapsed() > within {
            late += 1;
            if late > max_late {
                break;
            }
        }
        std::thread::sleep(Duration::from_micros(500));
    }
    late
}

/// Writes frames of one session into a connection as fast as the server takes them, until
/// `stop`; returns the frames written. The same 1,000 frames go again and again (the server
/// decodes and checks each as it would a new one), so the writer spends its CPU in the kernel
/// copying bytes rather than encoding them.
fn flood(to: SocketAddr, stop: &AtomicBool) -> u64 {
    let mut conn = TcpStream::connect(to).unwrap();
    let mut bytes = Vec::new();
    for seq in 1..=1000 {
        encode_frame(&update(0xF100D, seq, b"x"), &mut bytes);
    }
    let mut frames = 0;
    while !stop.load(Ordering::Relaxed) && conn.write_all(&bytes).is_ok() {
        frames += 1000;
    }
    frames
}

/// The test: UDP sources keep ≥ 99 % of their ACKs within 5 ms while one loopback
/// connection is written to flat out. Tolerance: the share of late ACKs may exceed the share
/// measured just before without the writer by 2 points (20 of 1,000): on a machine whose cores
/// are both busy the scheduler alone can hold a thread back a few ms now and then, and the
/// writer is one more busy thread (at a load of 11–12 on 2 cores, 0, 1, 1, 1 and 11 of 1,000
/// were late with the writer in 5 runs, 0 without). Before the
/// fix the server read the connection until it ran dry, which a loopback writer never lets
/// happen: nearly every ACK was late (RTTs near 2 s).
#[test]
fn a_flat_out_writer_does_not_delay_udp_acks() {
    let _serial = common::serial();
    // The server, the prober and the writer run ahead of other work on the machine: 5 ms is a
    // scheduling quantum on a busy machine (26 of 1,000 ACKs late at load 13.5 at normal
    // priority), and what is measured here is the server's choice of whom to serve, which
    // priority does not change: a server that read the connection until it ran dry would starve
    // UDP at any priority (RTTs near 2 s before the fair turns).
    let _rt = common::ahead_of_other_work();
    let (server, _) = start(MonitorConfig::default(), TcpConfig::default());
    let to = server.local_addr();
    let within = Duration::from_millis(5);
    let count = 1000;
    let quiet = probe(to, count, within, count);
    let stop = AtomicBool::new(false);
    let (loaded, written) = std::thread::scope(|scope| {
        let writer = scope.spawn(|| flood(to, &stop));
        // Let the writer fill the connection first.
        std::thread::sleep(Duration::from_millis(200));
        let late = probe(to, count, within, quiet + count * 2 / 100);
        stop.store(true, Ordering::Relaxed);
        let totals = server.totals();
        // Unblocks the writer if the server stopped reading.
        drop(server);
        (late, (writer.join().unwrap(), totals))
    });
    let (frames, totals) = written;
    eprintln!("late ACKs: {loaded} of {count} with the writer ({frames} frames), {quiet} without");
    assert!(
        loaded <= quiet + count * 2 / 100,
        "{loaded} of {count} ACKs later than {within:?} with the writer, {quiet} without"
    );
    // The writer did write flat out, and the server did serve it.
    assert!(frames > 10_000, "{frames} frames written");
    assert!(totals.stats.stream_updates > 5_000, "{totals:?}");
}

/// Sealed updates captured on-path and written into a connection from another address used to
/// open a second session under the same id and be delivered (82 of 82; a sink then rolled back
/// from sequence 40 to 1). A sealed session cannot start over TCP now: all are refused, counted,
/// and the deliveries of the session id never go backwards.
#[test]
fn sealed_updates_replayed_into_a_connection_are_refused() {
    let _serial = common::serial();
    let psk = Psk {
        id: 1,
        key: Secret([0x42; 32]),
    };
    let monitor = MonitorConfig {
        keys: Some(Keyring::new(vec![psk.clone()]).unwrap()),
        ..MonitorConfig::default()
    };
    let (server, delivered) = start(monitor, TcpConfig::default());
    let session = 0x5EA1ED;
    let mut source = Sender::new(
        server.local_addr(),
        session,
        Some(SessionCipher::new(&psk, session)),
    );
    for seq in 1..=40 {
        source.send(seq);
    }
    let mut replay = Vec::new();
    for dg in &source.sent {
        replay.extend_from_slice(&(dg.len() as u32).to_be_bytes());
        replay.extend_from_slice(dg);
    }
    let mut conn = TcpStream::connect(server.local_addr()).unwrap();
    conn.write_all(&replay).unwrap();
    let captured = source.sent.len() as u64;
    let deadline = Instant::now() + Duration::from_secs(10);
    while server.totals().stats.stream_updates < captured && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    let snap = server.stop().unwrap();
    let stats = &snap.totals.stats;
    assert_eq!(stats.stream_updates, captured);
    assert_eq!(
        stats.auth_failed_by.get("stream_start"),
        Some(&captured),
        "{stats:?}"
    );
    let seqs: Vec<u64> = delivered.lock().unwrap().iter().map(|d| d.1).collect();
    assert_eq!(seqs, (1..=40).collect::<Vec<_>>());
    assert_eq!(snap.sessions.len(), 1);
}

/// Waits until `conn` is closed by the server (EOF or reset) or `limit` passes; returns whether
/// it was.
fn closed_within(mut conn: &TcpStream, limit: Duration) -> bool {
    conn.set_read_timeout(Some(limit)).unwrap();
    let mut buf = [0u8; 16];
    match conn.read(&mut buf) {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) => !matches!(
            e.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
        ),
    }
}

/// A connection that never sends, and one that trickles a frame a byte at a time so it never
/// finishes, used to stay open for ever (each holding a descriptor and a slot of the table); a
/// connection sending whole frames stays open. Timeouts are 1 s; the busy connection writes
/// every 50 ms, so even a loaded machine keeps it well inside its idle timeout.
#[test]
fn idle_connections_and_unfinished_frames_are_closed() {
    let _serial = common::serial();
    let tcp = TcpConfig {
        idle_timeout: Duration::from_secs(1),
        frame_timeout: Duration::from_secs(1),
        ..TcpConfig::default()
    };
    let (server, _) = start(MonitorConfig::default(), tcp);
    let to = server.local_addr();
    let idle = TcpStream::connect(to).unwrap();
    let mut trickle = TcpStream::connect(to).unwrap();
    let mut busy = TcpStream::connect(to).unwrap();
    let mut frame = Vec::new();
    encode_frame(&update(77, 1, b"x"), &mut frame);
    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            let (mut seq, mut i) = (1, 0);
            while !stop.load(Ordering::Relaxed) {
                // One whole frame on `busy`, one byte of a frame that never ends on `trickle`.
                let mut whole = Vec::new();
                encode_frame(&update(78, seq, b"x"), &mut whole);
                seq += 1;
                let _ = busy.write_all(&whole);
                let _ = trickle.write_all(&frame[i % frame.len()..][..1]);
                i += 1;
                if i % frame.len() == 0 {
                    // Never complete: restart a frame length the server is still waiting for.
                    i = 1;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        });
        assert!(closed_within(&idle, Duration::from_secs(10)));
        std::thread::sleep(Duration::from_millis(1500));
        stop.store(true, Ordering::Relaxed);
    });
    let c = server.totals().streams.unwrap();
    assert_eq!((c.idle_closed, c.frame_timeouts), (1, 1), "{c:?}");
    assert_eq!(c.open, 1, "{c:?}");
    assert!(closed_within(&trickle, Duration::from_secs(1)));
}

/// One host opening the whole connection table used to lock every other source out of TCP. A
/// network (here 127.0.0.0/24) now holds at most its share (¼ of 8), and a host of another
/// network still gets in.
#[test]
fn one_network_holds_at_most_its_share_of_connections() {
    let _serial = common::serial();
    let tcp = TcpConfig {
        max_connections: 8,
        ..TcpConfig::default()
    };
    let (server, _) = start(MonitorConfig::default(), tcp);
    let to = server.local_addr();
    let greedy: Vec<TcpStream> = (0..6).map(|_| TcpStream::connect(to).unwrap()).collect();
    let closed = greedy
        .iter()
        .filter(|c| closed_within(c, Duration::from_millis(500)))
        .count();
    assert_eq!(closed, 4);
    // Another /24 of the loopback network.
    let other = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    other
        .bind(&"127.0.1.1:0".parse::<SocketAddr>().unwrap().into())
        .unwrap();
    other.connect(&to.into()).unwrap();
    let other: TcpStream = other.into();
    assert!(!closed_within(&other, Duration::from_millis(500)));
    let c = server.totals().streams.unwrap();
    assert_eq!(
        (c.accepted, c.refused_prefix_share, c.open),
        (3, 4, 3),
        "{c:?}"
    );
}

/// Sends `count` updates over UDP one at a time, each after the previous ACK; returns the CPU
/// time the server thread spent meanwhile.
fn udp_cpu(server: &MonitorServer, count: u64) -> Duration {
    let before = server.cpu_time().unwrap();
    let late = probe(server.local_addr(), count, Duration::from_secs(1), count);
    assert_eq!(late, 0);
    server.cpu_time().unwrap() - before
}

/// 1,024 idle connections used to be polled on every wake-up (a 20k updates/s load went from
/// 28 % to 91 % of a core). Waiting in epoll, they cost nothing per wake-up: the server's CPU
/// time for 3,000 UDP updates with them open is within 1.5× (plus 20 ms of sweeps and noise) of
/// its time without. CPU time, unlike wall time, is not stretched by other processes; a poll
/// over 1,025 descriptors costs some microseconds per update, several times the update itself.
#[test]
fn idle_connections_do_not_tax_udp_service() {
    let _serial = common::serial();
    // Loopback is one network: let it hold the whole table here.
    let monitor = MonitorConfig {
        max_prefix_share: 1.0,
        ..MonitorConfig::default()
    };
    let (server, _) = start(monitor, TcpConfig::default());
    let count = 3_000;
    let alone = udp_cpu(&server, count);
    let idle: Vec<TcpStream> = (0..1024)
        .map(|_| TcpStream::connect(server.local_addr()).unwrap())
        .collect();
    let deadline = Instant::now() + Duration::from_secs(10);
    while server.totals().streams.unwrap().open < 1024 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(server.totals().streams.unwrap().open, 1024);
    let beside = udp_cpu(&server, count);
    drop(idle);
    eprintln!("server CPU for {count} UDP updates: {alone:?} alone, {beside:?} beside 1,024 idle");
    assert!(
        beside <= alone * 3 / 2 + Duration::from_millis(20),
        "{count} UDP updates cost {beside:?} of server CPU beside 1,024 idle connections, \
         {alone:?} alone"
    );
}
