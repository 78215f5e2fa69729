//! Measurements of the emulator itself (`acp bench lab`): how many packets a second it forwards
//! between two hosts over a link too fast to matter, how far the one-way delay of probes
//! through a 20 ms link lands from the model's, and how late it hands on the frames of a
//! saturated 802.11g cell of 2 to 32 stations.

use std::io;
use std::net::UdpSocket;
use std::time::{Duration, Instant};

use acp_netmodel::Time;
use acp_runtime::clock;
use acp_runtime::relay::PathConfig;
use acp_sim::topology::Hop;

use std::sync::atomic::AtomicBool;

use crate::emulator::{quantile, Emulator, FrameTiming, LinkSpec, Route};
use crate::hosts::{self, Host};
use crate::{plan, run};

/// What the emulator forwarded from a saturating sender.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ceiling {
    /// IP packet size (bytes).
    pub packet_bytes: usize,
    /// Packets offered by the sender and received by the receiver, per second.
    pub offered_pps: f64,
    pub received_pps: f64,
    /// Received IP bits per second.
    pub received_bps: f64,
}

/// Errors of probes' one-way delays against the model's (µs; late is positive).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Accuracy {
    pub probes: usize,
    pub min_us: f64,
    pub median_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
}

/// UDP and IPv4 headers.
const HEADERS: usize = 28;

fn pair(path: PathConfig) -> io::Result<(UdpSocket, UdpSocket, Emulator)> {
    let (a, pa) = hosts::create("a", 0)?;
    let (b, pb) = hosts::create("b", 1)?;
    let links = ["a→b", "b→a"].map(|name| LinkSpec {
        name: name.into(),
        path: path.clone(),
    });
    let routes = [(0, 1, 0), (1, 0, 1)].map(|(from, to, l)| Route {
        from,
        to,
        hops: vec![Hop::Link(l)],
    });
    let emu = Emulator::start(vec![pa, pb], &links, &[], &routes, 1)?;
    let bind = |h: &Host| {
        let addr = h.addr;
        h.ns.enter(move || UdpSocket::bind((addr, 0)))
    };
    Ok((bind(&a)?, bind(&b)?, emu))
}

/// Sends `packet_bytes` packets from one host to the other as fast as the sender can for
/// `duration`, over a 100 Gbit/s link without delay.
pub fn ceiling(packet_bytes: usize, duration: Duration) -> io::Result<Ceiling> {
    let (tx, rx, emu) = pair(PathConfig::lossless(1e11, Duration::ZERO, 100_000))?;
    rx.set_read_timeout(Some(Duration::from_millis(200)))?;
    let to = rx.local_addr()?;
    let receiver = std::thread::spawn(move || {
        let mut buf = [0u8; 2048];
        let mut n = 0u64;
        while rx.recv(&mut buf).is_ok() {
            n += 1;
        }
        n
    });
    let payload = vec![0u8; packet_bytes.saturating_sub(HEADERS)];
    let start = Instant::now();
    let mut sent = 0u64;
    while start.elapsed() < duration {
        if tx.send_to(&payload, to).is_ok() {
            sent += 1;
        }
    }
    let received = receiver
        .join()
        .map_err(|_| io::Error::other("receiver panicked"))?;
    emu.stop();
    let secs = duration.as_secs_f64();
    Ok(Ceiling {
        packet_bytes,
        offered_pps: sent as f64 / secs,
        received_pps: received as f64 / secs,
        received_bps: received as f64 * (packet_bytes * 8) as f64 / secs,
    })
}

/// Sends `probes` probes of 100 B, 10 ms apart, through a 10 Mbit/s, 20 ms link, and compares
/// each one-way delay with the model's (20 ms plus 80 µs of serialisation).
pub fn delay_accuracy(probes: usize) -> io::Result<Accuracy> {
    let rate = 10e6;
    let (tx, rx, emu) = pair(PathConfig::lossless(rate, Duration::from_millis(20), 1000))?;
    rx.set_read_timeout(Some(Duration::from_secs(1)))?;
    let to = rx.local_addr()?;
    let expected = 0.020 + 100.0 * 8.0 / rate;
    let receiver = std::thread::spawn(move || {
        let mut buf = [0u8; 256];
        let mut errors = Vec::new();
        while let Ok(n) = rx.recv(&mut buf) {
            let now = clock::now();
            if n >= 8 {
                let sent =
                    Time::from_nanos(u64::from_be_bytes(buf[..8].try_into().unwrap_or_default()));
                let delay = now.saturating_since(sent).as_secs_f64();
                errors.push((delay - expected) * 1e6);
            }
        }
        errors
    });
    for _ in 0..probes {
        let mut probe = [0u8; 100 - HEADERS];
        probe[..8].copy_from_slice(&clock::now().as_nanos().to_be_bytes());
        tx.send_to(&probe, to)?;
        std::thread::sleep(Duration::from_millis(10));
    }
    let mut errors = receiver
        .join()
        .map_err(|_| io::Error::other("receiver panicked"))?;
    emu.stop();
    errors.sort_by(f64::total_cmp);
    let at = |q: f64| quantile(&errors, q).ok_or_else(|| io::Error::other("no probe came through"));
    Ok(Accuracy {
        probes: errors.len(),
        min_us: at(0.0)?,
        median_us: at(0.5)?,
        p99_us: at(0.99)?,
        max_us: at(1.0)?,
    })
}

/// What a saturated 802.11g cell did in real time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WifiRealtime {
    pub stations: usize,
    /// Frames the stations offered and the medium delivered, per second.
    pub offered_fps: f64,
    pub delivered_fps: f64,
    /// How late the emulator handed the delivered frames on ([`FrameTiming`]).
    pub timing: FrameTiming,
}

/// Frames per second each station offers in [`wifi_realtime`]: together more than any 802.11g
/// cell carries, so the medium is saturated.
pub const WIFI_STATION_FPS: usize = 4000;

/// Runs `stations` stations of an 802.11g cell at 54 Mbit/s (DCF), each sending
/// [`WIFI_STATION_FPS`] 200-byte datagrams a second to the AP's host, for `duration`, through
/// the lab (`acp lab`'s own run), and measures how late the emulator handled the frames.
pub fn wifi_realtime(stations: usize, duration: Duration) -> io::Result<WifiRealtime> {
    let bits = WIFI_STATION_FPS * 200 * 8;
    let text = format!(
        "format = 2\nname = \"bench wifi\"\nduration = \"{}ms\"\n\
         [[wifi]]\nap = \"ap\"\nstations = \"sta\"\ncount = {stations}\nstandard = \"g\"\nrate = \"54mbit\"\n\
         [[flow]]\ntype = \"cross\"\nname = \"load\"\ncount = {stations}\nprocess = \"cbr\"\nrate = \"{bits}bit\"\nsize = 200\npath = [\"sta\", \"ap\"]\n",
        duration.as_millis()
    );
    let plan = plan::parse(&text).map_err(io::Error::other)?;
    let result = run::run(&plan, None, &AtomicBool::new(false))?;
    let secs = result.ran.as_secs_f64();
    let air = result
        .emulator
        .media
        .first()
        .ok_or_else(|| io::Error::other("the bench cell has no medium"))?;
    Ok(WifiRealtime {
        stations,
        offered_fps: air.offered as f64 / secs,
        delivered_fps: air.delivered as f64 / secs,
        timing: air
            .timing
            .ok_or_else(|| io::Error::other("no frame crossed the bench cell"))?,
    })
}
