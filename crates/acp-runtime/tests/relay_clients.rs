//! The relay's client table over loopback: one host cannot take more than its network's share,
//! one-shot clients expire after probation and free their slot and socket, established clients
//! stay, and refusals are counted by reason.
//!
//! All of 127.0.0.0/8 is local on Linux, so sockets bound to 127.0.0.2, 127.0.1.2, … act as hosts
//! of different /24 networks. The table is test-sized and the timeouts are chosen so that nothing
//! depends on how fast the machine is: the tests wait for counters to reach their values (with a
//! generous deadline) instead of for a set time.

use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use acp_runtime::relay::{ClientLimits, PathConfig, Refusals, Relay, RelayConfig, RelayStats};

mod common;
use common::serial;

/// Longest wait for anything; only reached if the test is going to fail.
const PATIENCE: Duration = Duration::from_secs(20);

fn bind(ip: &str) -> UdpSocket {
    let socket = UdpSocket::bind(SocketAddr::new(ip.parse().unwrap(), 0)).unwrap();
    socket.set_read_timeout(Some(PATIENCE)).unwrap();
    socket
}

/// Every datagram a target received: where from (the relay's upstream socket) and what.
type Seen = Arc<Mutex<Vec<(SocketAddr, Vec<u8>)>>>;

/// A target that records every datagram's source and echoes those starting with `echo`.
struct Target {
    addr: SocketAddr,
    seen: Seen,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Target {
    fn start() -> Target {
        let socket = bind("127.0.0.1");
        socket
            .set_read_timeout(Some(Duration::from_millis(10)))
            .unwrap();
        let addr = socket.local_addr().unwrap();
        let seen = Seen::default();
        let stop = Arc::new(AtomicBool::new(false));
        let (seen_t, stop_t) = (Arc::clone(&seen), Arc::clone(&stop));
        let thread = std::thread::spawn(move || {
            let mut buf = [0u8; 2048];
            while !stop_t.load(Ordering::Relaxed) {
                if let Ok((n, from)) = socket.recv_from(&mut buf) {
                    // Recorded before the echo, so whoever got the echo finds it recorded.
                    seen_t.lock().unwrap().push((from, buf[..n].to_vec()));
                    if buf[..n].starts_with(b"echo") {
                        socket.send_to(&buf[..n], from).unwrap();
                    }
                }
            }
        });
        Target {
            addr,
            seen,
            stop,
            thread: Some(thread),
        }
    }

    /// The upstream addresses (one per client mapping) that sent `payload`.
    fn senders_of(&self, payload: &[u8]) -> Vec<SocketAddr> {
        let seen = self.seen.lock().unwrap();
        seen.iter()
            .filter(|(_, p)| p == payload)
            .map(|(from, _)| *from)
            .collect()
    }

    /// Waits until `n` datagrams starting with `prefix` have arrived, and returns their payloads.
    fn wait_for(&self, prefix: &str, n: usize) -> Vec<String> {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let got: Vec<String> = self
                .seen
                .lock()
                .unwrap()
                .iter()
                .filter(|(_, p)| p.starts_with(prefix.as_bytes()))
                .map(|(_, p)| String::from_utf8_lossy(p).into_owned())
                .collect();
            if got.len() >= n {
                return got;
            }
            assert!(Instant::now() < deadline, "{prefix}: {got:?}");
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

impl Drop for Target {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn start_relay(target: SocketAddr, clients: ClientLimits) -> Relay {
    let path = PathConfig::lossless(1e8, Duration::from_millis(1), 1000);
    let mut cfg = RelayConfig::symmetric("127.0.0.1:0".parse().unwrap(), target, path, 1);
    cfg.clients = clients;
    Relay::start(cfg).unwrap()
}

/// Waits until the relay's counters satisfy `done`, and returns them.
fn wait_for(relay: &Relay, what: &str, done: impl Fn(&RelayStats) -> bool) -> RelayStats {
    acp_testkit::wait_for(
        PATIENCE,
        || done(&relay.stats()),
        || format!("{what}: {:?}", relay.stats()),
    );
    relay.stats()
}

/// Sends `msg` (which should start with `echo`) through the relay and waits for it to come back.
fn exchange(socket: &UdpSocket, relay: &Relay, msg: &str) {
    socket.send_to(msg.as_bytes(), relay.local_addr()).unwrap();
    let mut buf = [0u8; 2048];
    let (n, from) = socket
        .recv_from(&mut buf)
        .unwrap_or_else(|e| panic!("{msg}: no echo through the relay: {e}"));
    assert_eq!((&buf[..n], from), (msg.as_bytes(), relay.local_addr()));
}

/// Descriptors open in this process.
fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

#[test]
fn one_host_is_held_to_its_share_while_other_networks_get_through() {
    let _serial = serial();
    let target = Target::start();
    let limits = ClientLimits {
        max_clients: 6,
        max_share: 0.5,
        // Nothing expires during the test.
        idle_timeout: Duration::from_secs(3600),
        probation: Duration::from_secs(3600),
    };
    assert_eq!(limits.per_network(), 3);
    let relay = start_relay(target.addr, limits);

    // One host, five ports: three get mappings (the first three read), two are refused.
    let host: Vec<UdpSocket> = (0..5).map(|_| bind("127.0.0.2")).collect();
    let payload = |i: usize| format!("echo host {i}");
    for (i, socket) in host.iter().enumerate() {
        socket
            .send_to(payload(i).as_bytes(), relay.local_addr())
            .unwrap();
    }
    let st = wait_for(&relay, "host's datagrams read", |s| {
        s.to_target.received == 5
    });
    assert_eq!(st.clients, 3);
    let refused = Refusals {
        prefix_share: 2,
        ..Refusals::default()
    };
    assert_eq!(st.refused, refused);
    assert_eq!(st.to_target.dropped_unmapped, 2);
    let through = target.wait_for("echo host", 3);
    let (admitted, shut_out): (Vec<usize>, Vec<usize>) =
        (0..5).partition(|i| through.contains(&payload(*i)));
    assert_eq!((admitted.len(), shut_out.len()), (3, 2));
    let mut buf = [0u8; 64];
    for &i in &admitted {
        let n = host[i].recv(&mut buf).unwrap();
        assert_eq!(&buf[..n], payload(i).as_bytes());
    }

    // Another network is still admitted, and its traffic crosses both ways.
    let neighbour = bind("127.0.1.2");
    exchange(&neighbour, &relay, "echo neighbour");
    exchange(&neighbour, &relay, "echo neighbour again");
    assert_eq!(relay.stats().clients, 4);
    let upstream = target.senders_of(b"echo neighbour");
    assert_eq!(upstream, target.senders_of(b"echo neighbour again"));
    assert_eq!(upstream.len(), 1);

    // A third network fills the table; then its next port finds the table full, while the
    // host's next port is refused for its share (reported first).
    let third: Vec<UdpSocket> = (0..3).map(|_| bind("127.0.2.2")).collect();
    exchange(&third[0], &relay, "echo third 0");
    exchange(&third[1], &relay, "echo third 1");
    assert_eq!(relay.stats().clients, 6);
    third[2]
        .send_to(b"echo third 2", relay.local_addr())
        .unwrap();
    let retry = shut_out[0];
    host[retry]
        .send_to(payload(retry).as_bytes(), relay.local_addr())
        .unwrap();
    let st = wait_for(&relay, "refusals counted", |s| s.refused.total() == 4);
    let refused = Refusals {
        table_full: 1,
        prefix_share: 3,
        no_socket: 0,
    };
    assert_eq!(st.refused, refused);
    assert_eq!(st.clients, 6);
    assert_eq!(st.to_target.dropped_unmapped, 4);
    // The admitted clients still get through.
    exchange(&host[admitted[0]], &relay, "echo host again");
    exchange(&neighbour, &relay, "echo neighbour once more");
    // Everything the target saw came from the six mappings.
    let st = relay.stats();
    assert_eq!(st.to_target.forwarded, 3 + 2 + 2 + 2);
    let mut upstreams = Vec::new();
    for &i in &admitted {
        upstreams.extend(target.senders_of(payload(i).as_bytes()));
    }
    for p in ["echo third 0", "echo third 1"] {
        upstreams.extend(target.senders_of(p.as_bytes()));
    }
    upstreams.extend(upstream);
    upstreams.sort();
    upstreams.dedup();
    assert_eq!(upstreams.len(), 6);
}

#[test]
fn one_shot_clients_expire_after_probation_while_an_established_one_stays() {
    let _serial = serial();
    let target = Target::start();
    let limits = ClientLimits {
        max_clients: 4,
        max_share: 1.0,
        // Longer than the test: only probation can expire anything.
        idle_timeout: Duration::from_secs(3600),
        probation: Duration::from_millis(200),
    };
    let relay = start_relay(target.addr, limits);

    // An established client: traffic both ways.
    let established = bind("127.0.0.2");
    exchange(&established, &relay, "echo 0");
    let fds = open_fds();

    // Three one-shot clients (as from spoofed addresses: one datagram each, never answered)
    // fill the table.
    for net in 1..=3 {
        let socket = bind(&format!("127.0.{net}.2"));
        socket.send_to(b"one-shot", relay.local_addr()).unwrap();
    }
    target.wait_for("one-shot", 3);
    let st = wait_for(&relay, "one-shots counted", |s| s.to_target.forwarded == 4);
    assert_eq!(st.refused.total(), 0);

    // They expire after their probation; the established client, talking meanwhile, stays.
    let mut round = 0;
    let deadline = Instant::now() + PATIENCE;
    while relay.stats().clients > 1 {
        assert!(Instant::now() < deadline, "{:?}", relay.stats());
        round += 1;
        exchange(&established, &relay, &format!("echo {round}"));
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(relay.stats().clients, 1);
    assert_eq!(
        open_fds(),
        fds,
        "the one-shots' upstream sockets are closed"
    );
    round += 1;
    exchange(&established, &relay, &format!("echo {round}"));
    let first = target.senders_of(b"echo 0");
    for r in 1..=round {
        let payload = format!("echo {r}");
        assert_eq!(target.senders_of(payload.as_bytes()), first, "{payload}");
    }

    // Their slots are free for newcomers, up to a full table again.
    let newcomers: Vec<UdpSocket> = (4..=7).map(|net| bind(&format!("127.0.{net}.2"))).collect();
    for (i, socket) in newcomers.iter().take(3).enumerate() {
        exchange(socket, &relay, &format!("echo newcomer {i}"));
    }
    assert_eq!(relay.stats().clients, 4);
    newcomers[3]
        .send_to(b"echo newcomer 3", relay.local_addr())
        .unwrap();
    let st = wait_for(&relay, "refusal counted", |s| s.refused.total() == 1);
    assert_eq!(st.refused.table_full, 1);
    assert_eq!(st.clients, 4);
}
