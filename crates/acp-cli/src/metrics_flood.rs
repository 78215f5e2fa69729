//! `acp bench flood`'s attacks on a monitor's metrics endpoint (`acp monitor --metrics`), each
//! beside an honest scraper that scrapes every 100 ms and should keep getting 200s:
//!
//! The attacker connects from a host of its own (127.88.0.1); the honest scraper from 127.0.0.1.
//!
//! - **metrics-header**: eight connections write a request whose header line never ends, flat
//!   out, reconnecting whenever the endpoint closes one (it answers 431 past its 8 KiB head);
//! - **metrics-idle**: as many idle connections as descriptors allow (up to 1,000), reopened
//!   whenever the endpoint closes one;
//! - **metrics-noread**: 256 scrapers that send a whole request and never read the answer,
//!   reopened whenever the endpoint closes one.
//!
//! They run through [`flood::run_beside`], so the established sources and newcomers measure the
//! monitor meanwhile: the protocol thread must not notice. The endpoint serves what the monitor
//! publishes (its totals and sessions, refreshed every 100 ms), as `acp monitor --metrics` does.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use acp_runtime::flood::{self, FloodConfig, FloodResult};
use acp_runtime::server::{MonitorServer, Snapshot};

use crate::metrics::monitor::{MonitorFamilies, PREFIX};
use crate::metrics::{Endpoint, Latest};

/// An attack on the metrics endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricsAttack {
    /// A request header line that never ends.
    Header,
    /// Many idle connections.
    Idle,
    /// Scrapers that never read.
    NoRead,
}

impl MetricsAttack {
    /// Every one, in the order `acp bench flood` runs them.
    pub const ALL: [MetricsAttack; 3] = [
        MetricsAttack::Header,
        MetricsAttack::Idle,
        MetricsAttack::NoRead,
    ];

    /// Its name in reports.
    pub fn name(self) -> &'static str {
        match self {
            MetricsAttack::Header => "metrics-header",
            MetricsAttack::Idle => "metrics-idle",
            MetricsAttack::NoRead => "metrics-noread",
        }
    }

    /// The attack called `name`.
    pub fn from_name(name: &str) -> Option<MetricsAttack> {
        Self::ALL.into_iter().find(|a| a.name() == name)
    }
}

/// What the attacker and the honest scraper saw.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MetricsReport {
    /// Connections the attacker opened.
    pub connections: u64,
    /// Bytes it wrote.
    pub bytes: u64,
    /// Scrapes the honest scraper made, and those answered 200 in full.
    pub scrapes: u64,
    pub scrapes_ok: u64,
    /// Its slowest scrape (connect to the end of the answer).
    pub slowest: Duration,
}

/// How often the honest scraper scrapes, and how long it waits for one answer at most.
const SCRAPE_EVERY: Duration = Duration::from_millis(100);
const SCRAPE_TIMEOUT: Duration = Duration::from_secs(2);

/// Runs `attack` against the metrics endpoint of a fresh monitor: the flood's measurements, and
/// the attacker's and honest scraper's.
pub fn run(attack: MetricsAttack, cfg: &FloodConfig) -> io::Result<(FloodResult, MetricsReport)> {
    let (mut r, report) = flood::run_beside(attack.name(), cfg, |server, stop| {
        beside(attack, server, stop)
    })?;
    r.attack_sent = report.connections;
    Ok((r, report))
}

/// Serves the monitor's metrics and attacks them until `stop`.
fn beside(
    attack: MetricsAttack,
    server: &MonitorServer,
    stop: &AtomicBool,
) -> io::Result<MetricsReport> {
    let published: Arc<Latest<Snapshot>> = Arc::default();
    published.publish(server.snapshot());
    let reader = published.clone();
    let scrape = Box::new(
        move || -> Box<dyn prometheus_client::collector::Collector> {
            let snap = reader.get().unwrap_or_default();
            Box::new(MonitorFamilies {
                totals: snap.totals,
                sessions: snap.sessions,
                publish_connection_failures: 0,
            })
        },
    );
    let endpoint = Endpoint::start("127.0.0.1:0".parse().expect("an address"), PREFIX, scrape)
        .map_err(|e| io::Error::other(format!("{e:#}")))?;
    let addr = endpoint.local_addr();
    std::thread::scope(|scope| {
        let attacker = scope.spawn(|| match attack {
            MetricsAttack::Header => endless_header(addr, stop),
            MetricsAttack::Idle => hold_open(addr, idle_count(), b"", stop),
            MetricsAttack::NoRead => hold_open(addr, 256, REQUEST, stop),
        });
        let honest = scope.spawn(|| honest_scraper(addr, stop));
        while !stop.load(Ordering::Relaxed) {
            published.publish(server.snapshot());
            std::thread::sleep(SCRAPE_EVERY);
        }
        let mut report = attacker
            .join()
            .map_err(|_| io::Error::other("attacker thread panicked"))??;
        let (scrapes, ok, slowest) = honest
            .join()
            .map_err(|_| io::Error::other("scraper thread panicked"))?;
        report.scrapes = scrapes;
        report.scrapes_ok = ok;
        report.slowest = slowest;
        Ok(report)
    })
}

/// A whole scrape request.
const REQUEST: &[u8] = b"GET /metrics HTTP/1.1\r\nHost: acp\r\n\r\n";

/// Scrapes `addr` every [`SCRAPE_EVERY`] until `stop`: (scrapes, answered 200 in full, slowest).
fn honest_scraper(addr: SocketAddr, stop: &AtomicBool) -> (u64, u64, Duration) {
    let (mut scrapes, mut ok, mut slowest) = (0, 0, Duration::ZERO);
    while !stop.load(Ordering::Relaxed) {
        let began = Instant::now();
        let answered = scrape_once(addr).is_ok_and(|text| text.starts_with("HTTP/1.1 200"));
        slowest = slowest.max(began.elapsed());
        scrapes += 1;
        ok += u64::from(answered);
        std::thread::sleep(SCRAPE_EVERY.saturating_sub(began.elapsed()));
    }
    (scrapes, ok, slowest)
}

/// One scrape: the whole answer.
fn scrape_once(addr: SocketAddr) -> io::Result<String> {
    let mut conn = TcpStream::connect_timeout(&addr, SCRAPE_TIMEOUT)?;
    conn.set_read_timeout(Some(SCRAPE_TIMEOUT))?;
    conn.set_write_timeout(Some(SCRAPE_TIMEOUT))?;
    conn.write_all(REQUEST)?;
    let mut text = String::new();
    conn.read_to_string(&mut text)?;
    Ok(text)
}

/// Idle connections to open: 1,000, or what the descriptor limit leaves (both ends of each are
/// this process's).
fn idle_count() -> usize {
    let wanted = 1000u64;
    let reserved = acp_runtime::net::RESERVED_FDS;
    let soft =
        acp_runtime::net::ensure_fd_limit(2 * wanted + 2 * reserved).map_or(0, |limit| limit.soft);
    (soft.saturating_sub(2 * reserved) / 2).min(wanted) as usize
}

/// The attacker's address: a host of its own network, as a greedy host has.
const ATTACKER: [u8; 4] = [127, 88, 0, 1];

/// A connection from [`ATTACKER`] to `addr` that has sent `opening`, non-blocking.
fn open(addr: SocketAddr, opening: &[u8]) -> io::Result<TcpStream> {
    let mut conn = flood::connect_from(ATTACKER, addr)?;
    conn.write_all(opening)?;
    conn.set_nonblocking(true)?;
    Ok(conn)
}

/// Whether the endpoint has closed `conn` (its end shut down or reset), without reading it.
fn closed_by_peer(conn: &TcpStream) -> bool {
    let mut fds = [libc::pollfd {
        fd: conn.as_raw_fd(),
        events: libc::POLLRDHUP,
        revents: 0,
    }];
    acp_runtime::net::poll_fds(&mut fds, Duration::ZERO).is_ok()
        && fds[0].revents & (libc::POLLRDHUP | libc::POLLHUP | libc::POLLERR) != 0
}

/// Keeps `count` connections open to `addr`, each having sent `opening` and then nothing, and
/// reopens every one the endpoint closes, until `stop`.
fn hold_open(
    addr: SocketAddr,
    count: usize,
    opening: &[u8],
    stop: &AtomicBool,
) -> io::Result<MetricsReport> {
    let mut report = MetricsReport::default();
    let mut conns: Vec<Option<TcpStream>> = (0..count).map(|_| None).collect();
    while !stop.load(Ordering::Relaxed) {
        for slot in &mut conns {
            if slot.as_ref().is_some_and(|c| !closed_by_peer(c)) {
                continue;
            }
            // A refused or failed connection is tried again on the next round.
            *slot = open(addr, opening).ok();
            if slot.is_some() {
                report.connections += 1;
                report.bytes += opening.len() as u64;
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    Ok(report)
}

/// Eight connections writing one header line that never ends, flat out; each one the endpoint
/// closes is replaced.
fn endless_header(addr: SocketAddr, stop: &AtomicBool) -> io::Result<MetricsReport> {
    const OPENING: &[u8] = b"GET /metrics HTTP/1.1\r\nX-Never-Ends: ";
    let chunk = [b'a'; 4096];
    let mut report = MetricsReport::default();
    let mut conns: Vec<Option<TcpStream>> = (0..8).map(|_| None).collect();
    while !stop.load(Ordering::Relaxed) {
        let mut wrote = false;
        for slot in &mut conns {
            let Some(conn) = slot else {
                *slot = open(addr, OPENING).ok();
                if slot.is_some() {
                    report.connections += 1;
                    report.bytes += OPENING.len() as u64;
                }
                continue;
            };
            match conn.write(&chunk) {
                Ok(n) => {
                    report.bytes += n as u64;
                    wrote = true;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                // Closed by the endpoint (431, or its head timeout).
                Err(_) => *slot = None,
            }
        }
        if !wrote {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    Ok(report)
}
