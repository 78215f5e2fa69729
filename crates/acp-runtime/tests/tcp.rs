//! Updates over kernel TCP on loopback: the monitor server accepts them beside UDP and measures
//! their true age as it does for ACP, the source reports the kernel's view and the paper's age
//! estimate, and broken framing closes only the connection that sent it.

use std::io::Write;
use std::net::TcpStream;
use std::time::Duration;

use acp_core::MonitorConfig;
use acp_runtime::driver::RunLimits;
use acp_runtime::server::{MonitorServer, ServerConfig, TcpConfig};
use acp_runtime::tcp_source::{TcpOptions, TcpSource};
use acp_testkit::wait_for;

fn server() -> MonitorServer {
    let monitor = MonitorConfig {
        clocks_synchronised: true,
        ..MonitorConfig::default()
    };
    let mut cfg = ServerConfig::new("127.0.0.1:0".parse().unwrap(), monitor);
    cfg.tcp = Some(TcpConfig::default());
    MonitorServer::start(cfg, None).unwrap()
}

fn run_for(source: &mut TcpSource, ms: u64) -> acp_runtime::tcp_source::TcpReport {
    let limits = RunLimits {
        duration: Some(Duration::from_millis(ms)),
        ..RunLimits::default()
    };
    source
        .run(&limits, Duration::from_millis(100), |_| {})
        .unwrap()
}

/// Waits until the server has read `sent` updates from its connections: they were written
/// before the source returned, but the server's thread may not have read them yet (a machine busy
/// with other processes holds it back). Generous: 10 s; they never arrive if it stopped reading.
fn written_updates_read(server: &MonitorServer, sent: u64) {
    wait_for(
        Duration::from_secs(10),
        || server.totals().stats.stream_updates >= sent,
        || format!("{sent} written: {:?}", server.totals()),
    );
}

/// The congestion controls this kernel lets an unprivileged socket choose.
fn available() -> Vec<String> {
    std::fs::read_to_string("/proc/sys/net/ipv4/tcp_available_congestion_control")
        .unwrap()
        .split_whitespace()
        .map(String::from)
        .collect()
}

#[test]
fn every_update_written_arrives_in_order_and_its_true_age_is_measured() {
    let server = server();
    let options = TcpOptions {
        nodelay: true,
        notsent_lowat: Some(4096),
        ..TcpOptions::default()
    };
    let mut source =
        TcpSource::connect(server.local_addr(), &options, 100, Duration::from_secs(2)).unwrap();
    let report = run_for(&mut source, 1500);
    written_updates_read(&server, report.sent);
    let snap = server.stop().unwrap();
    assert_eq!(snap.sessions.len(), 1, "{:?}", snap.sessions);
    let s = &snap.sessions[0];
    assert!(s.stats.stream);
    assert_eq!(s.key.session, report.session);
    // TCP loses nothing and reorders nothing: every update written whole was delivered, each
    // one fresher than the last.
    assert!(report.sent > 100, "{report:?}");
    assert_eq!(s.stats.delivered, report.sent);
    assert_eq!((s.stats.lost, s.stats.stale, s.stats.duplicates), (0, 0, 0));
    assert_eq!(s.stats.bytes, 100 * report.sent);
    // No replies over TCP, and nothing malformed.
    let totals = &snap.totals;
    assert_eq!(totals.stats.stream_updates, report.sent);
    assert_eq!((totals.stats.acks, totals.stats.malformed), (0, 0));
    let streams = totals.streams.unwrap();
    assert_eq!((streams.accepted, streams.bad_framing), (1, 0));
    // One clock: the true age on loopback is well under a second, and so is the estimate.
    let age = s.avg_age.unwrap();
    assert!(age > 0.0 && age < 0.5, "{age}");
    let est = report.est_avg_age.unwrap();
    assert!(est > 0.0 && est < 0.5, "{est}");
    assert!(
        report.info.bytes_acked > 0 && report.info.mss > 0,
        "{report:?}"
    );
}

#[test]
fn the_congestion_control_asked_for_is_the_one_in_force() {
    let server = server();
    for name in available() {
        let options = TcpOptions {
            congestion: Some(name.clone()),
            ..TcpOptions::default()
        };
        let mut source =
            TcpSource::connect(server.local_addr(), &options, 64, Duration::from_secs(2)).unwrap();
        let report = run_for(&mut source, 200);
        assert_eq!(report.congestion, name);
        assert!(report.sent > 0, "{name}: {report:?}");
    }
    let options = TcpOptions {
        congestion: Some("no-such-cc".into()),
        ..TcpOptions::default()
    };
    let err = TcpSource::connect(server.local_addr(), &options, 64, Duration::from_secs(2))
        .err()
        .unwrap();
    let text = err.to_string();
    assert!(
        text.contains("no-such-cc") && text.contains("offers"),
        "{text}"
    );
    server.stop().unwrap();
}

#[test]
fn broken_framing_closes_its_connection_and_nothing_else() {
    let server = server();
    let mut bad = TcpStream::connect(server.local_addr()).unwrap();
    // A frame length no update can have.
    bad.write_all(&u32::MAX.to_be_bytes()).unwrap();
    let mut good = TcpSource::connect(
        server.local_addr(),
        &TcpOptions::default(),
        8,
        Duration::from_secs(2),
    )
    .unwrap();
    let report = run_for(&mut good, 300);
    written_updates_read(&server, report.sent);
    let snap = server.stop().unwrap();
    let streams = snap.totals.streams.unwrap();
    assert_eq!(
        (streams.accepted, streams.bad_framing, streams.open),
        (2, 1, 1)
    );
    assert_eq!(snap.sessions.len(), 1);
    assert_eq!(snap.sessions[0].stats.delivered, report.sent);
}
