//! The link emulator: one thread that holds every host's TUN device and carries IP packets
//! between them through the scenario's links, each an `acp-netmodel` link driven by the relay's
//! [`PathModel`] (the same model the simulator and the relay run; there is no second one).
//!
//! A packet read from host `a`'s TUN device and addressed to host `b` follows the route `a → b`:
//! it arrives at the route's first link at the instant it was read, arrives at each next link at
//! the instant it left the previous one, and is written into `b`'s TUN device when it leaves the
//! last. Its size on the links is its IP length, its class (strict priority, Diffserv tins) its
//! DSCP.
//! Packets that are not IPv4, or have no route, are counted and dropped.
//!
//! # WiFi media
//!
//! A route may cross a scenario's `[[wifi]]` medium: the hop is the simulator's own 802.11
//! DCF/EDCA medium, or its 802.11ac A-MPDU downlink for a section with `aggregation`
//! ([`crate::air`]), built from the same definition and random-stream labels, and played in
//! the same time order as the links. A packet enters the medium as a frame from its sending
//! station to its receiving one (the AP is station 0); its access category comes from the real
//! packet's DSCP (the TOS byte) through the medium's RFC 8325 mapping, as in the simulator.
//! It moves on when its data frame ends received; a frame dropped at the retry limit or by a
//! full station queue is counted against the medium.
//!
//! # Timing
//!
//! Link time is virtual, as in the relay: the links are played in time order — every link is
//! stepped to the earliest pending event of any link before later ones — so that a packet
//! handed from one link to the next arrives there exactly when it left, whenever the thread
//! looked. The thread waits for the TUN devices in `ppoll` until
//! [`SPIN_WINDOW`] before the next departure of a real packet, then spins to it
//! ([`clock::wait_until`]), so packets leave the last link within microseconds of their
//! scheduled instant; arrivals are stamped when read.
//!
//! # Per-route counts
//!
//! Once [`Emulator::measure`] is called, each route tallies what it delivers by transport: TCP
//! segments with data (their payload: the segment lengths a capture at the receiver sees), TCP
//! segments without (pure ACKs), UDP datagrams; each tally keeps the first and latest delivery
//! instants, so the mean time between deliveries (the inter-ACK time, on a route that carries
//! a flow's ACKs) is exact.

use std::collections::HashMap;
use std::io;
use std::net::Ipv4Addr;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use acp_netmodel::link::DropReason;
use acp_netmodel::{Streams, Time};
use acp_runtime::clock;
use acp_runtime::net::poll_fds;
use acp_runtime::relay::{PathConfig, PathCounters, PathModel, SPIN_WINDOW};
use acp_sim::report::WifiResult;
use acp_sim::topology::{Hop, WifiDef};

use crate::air::{Air, ReportTo};
use crate::ipv4::{self, Transport};
use crate::tun::Tun;

/// Longest wait without looking at the stop flag.
const IDLE_POLL: Duration = Duration::from_millis(50);

/// Most packets read from one device before the others get a turn.
const DRAIN_LIMIT: usize = 64;

/// Largest packet read (a TUN device without offloads hands over at most its MTU; this leaves
/// room for any MTU).
const MAX_PACKET: usize = 65_536;

/// A host as the emulator sees it: its TUN device and address.
#[derive(Debug)]
pub struct Port {
    pub tun: Tun,
    pub addr: Ipv4Addr,
}

/// A directed link: its name (the label of its random streams) and model.
#[derive(Debug, Clone)]
pub struct LinkSpec {
    pub name: String,
    pub path: PathConfig,
}

/// A WiFi medium: the simulator's definition and its stations' node names, the AP first; for
/// an A-MPDU downlink, where its stations' aggregation reports go ([`crate::air`]).
#[derive(Debug, Clone)]
pub struct MediumSpec {
    pub def: WifiDef,
    pub nodes: Vec<String>,
    pub reports: Vec<ReportTo>,
}

/// The hops a packet crosses from host `from` to host `to` (links and media by index).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    pub from: usize,
    pub to: usize,
    pub hops: Vec<Hop>,
}

/// What one link carried.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LinkStats {
    pub name: String,
    /// Packets offered to the link.
    pub offered: u64,
    /// Packets that left it.
    pub delivered: u64,
    /// Dropped by random loss, by a full queue, by an outage.
    pub dropped_loss: u64,
    pub dropped_queue: u64,
    pub dropped_outage: u64,
}

/// Packets of one kind a route delivered while measuring.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    pub packets: u64,
    /// Their transport payload (bytes).
    pub payload_bytes: u64,
    /// When the first and the latest were delivered.
    pub first: Option<Time>,
    pub last: Option<Time>,
}

impl Tally {
    fn add(&mut self, t: Time, payload: u32) {
        self.packets += 1;
        self.payload_bytes += u64::from(payload);
        self.first.get_or_insert(t);
        self.last = Some(t);
    }

    /// The mean payload (bytes), if any packet was counted.
    pub fn mean_payload(&self) -> Option<f64> {
        (self.packets > 0).then(|| self.payload_bytes as f64 / self.packets as f64)
    }

    /// The mean time between deliveries (s), if two or more were counted.
    pub fn mean_gap(&self) -> Option<f64> {
        let (first, last) = (self.first?, self.last?);
        (self.packets > 1)
            .then(|| last.nanos_since(first) as f64 * 1e-9 / (self.packets - 1) as f64)
    }
}

/// What one route delivered while measuring (see the module's Per-route counts).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RouteStats {
    /// TCP segments carrying data.
    pub tcp_data: Tally,
    /// TCP segments without data: pure ACKs (and handshake segments).
    pub tcp_empty: Tally,
    pub udp: Tally,
}

/// What the emulator did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EmulatorStats {
    /// Packets read from the hosts' devices.
    pub read: u64,
    /// Packets written into their destination's device.
    pub forwarded: u64,
    /// Bytes (IP length) written.
    pub bytes_forwarded: u64,
    /// Packets dropped for not being IPv4 (e.g. IPv6 router solicitations), or for want of a
    /// route between their hosts.
    pub not_ipv4: u64,
    pub unrouted: u64,
    /// Writes the destination device refused.
    pub write_errors: u64,
    /// Per link, in the order given.
    pub links: Vec<LinkStats>,
    /// Per route, in the order given.
    pub routes: Vec<RouteStats>,
    /// Per WiFi medium, in the order given.
    pub media: Vec<MediumStats>,
}

/// What one WiFi medium carried.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MediumStats {
    pub name: String,
    /// Frames offered to its stations' queues.
    pub offered: u64,
    /// Frames received by their destination station.
    pub delivered: u64,
    /// Dropped by a full station queue, at the retry limit.
    pub dropped_queue: u64,
    pub dropped_retry: u64,
    /// The medium's own counters over the whole run, as `acp sim` reports them (per station
    /// and access category); `None` until the emulator stops.
    pub counters: Option<WifiResult>,
    /// How late the emulator handled the frames the medium delivered; `None` until it stops or
    /// if no frame was delivered.
    pub timing: Option<FrameTiming>,
}

/// How late frames left a medium: the instant the emulator handed each delivered frame on
/// minus the instant the medium scheduled its reception (µs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FrameTiming {
    pub frames: usize,
    pub p50_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
}

impl FrameTiming {
    /// The percentiles of `samples` (µs), sorting them; `None` if there are none.
    pub fn of(samples: &mut [f64]) -> Option<Self> {
        samples.sort_by(f64::total_cmp);
        Some(FrameTiming {
            frames: samples.len(),
            p50_us: quantile(samples, 0.5)?,
            p99_us: quantile(samples, 0.99)?,
            max_us: quantile(samples, 1.0)?,
        })
    }
}

/// The `q` quantile of sorted `samples` (nearest rank); `None` if there are none.
pub fn quantile(sorted: &[f64], q: f64) -> Option<f64> {
    let last = sorted.len().checked_sub(1)?;
    Some(sorted[(last as f64 * q).round() as usize])
}

/// A packet on its way.
#[derive(Debug)]
struct Transit {
    data: Vec<u8>,
    route: usize,
    hop: usize,
    /// The destination host.
    to: usize,
    transport: Transport,
}

/// The running emulator.
#[derive(Debug)]
pub struct Emulator {
    stop: Arc<AtomicBool>,
    measuring: Arc<AtomicBool>,
    thread: JoinHandle<EmulatorStats>,
}

impl Emulator {
    /// Starts forwarding between `ports` over `links` and `media` along `routes`, all
    /// randomness drawn from `seed` (the same stream labels as the simulator's links and media
    /// of the same names).
    pub fn start(
        ports: Vec<Port>,
        links: &[LinkSpec],
        media: &[MediumSpec],
        routes: &[Route],
        seed: u64,
    ) -> io::Result<Self> {
        let streams = Streams::new(seed);
        let start = clock::now();
        let worker = Worker {
            by_addr: ports.iter().enumerate().map(|(i, p)| (p.addr, i)).collect(),
            tuns: ports.into_iter().map(|p| p.tun).collect(),
            route_ids: routes
                .iter()
                .enumerate()
                .map(|(i, r)| ((r.from, r.to), i))
                .collect(),
            routes: routes.iter().map(|r| r.hops.clone()).collect(),
            models: links
                .iter()
                .map(|l| PathModel::new(&l.path, &streams, &l.name, start))
                .collect(),
            media: media
                .iter()
                .map(|m| Air::new(&m.def, &streams, start, m.reports.clone()))
                .collect::<Result<_, _>>()
                .map_err(io::Error::other)?,
            media_nodes: media.iter().map(|m| m.nodes.clone()).collect(),
            lateness: vec![Vec::new(); media.len()],
            stats: EmulatorStats {
                links: links
                    .iter()
                    .map(|l| LinkStats {
                        name: l.name.clone(),
                        ..LinkStats::default()
                    })
                    .collect(),
                routes: vec![RouteStats::default(); routes.len()],
                media: media
                    .iter()
                    .map(|m| MediumStats {
                        name: m.def.name.clone(),
                        ..MediumStats::default()
                    })
                    .collect(),
                ..EmulatorStats::default()
            },
            buf: vec![0; MAX_PACKET],
            stepped: start,
            start,
            measuring: Arc::new(AtomicBool::new(false)),
        };
        let measuring = worker.measuring.clone();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("lab-emulator".into())
            .spawn(move || worker.run(&flag))?;
        Ok(Emulator {
            stop,
            measuring,
            thread,
        })
    }

    /// From now on the routes tally what they deliver ([`EmulatorStats::routes`]).
    pub fn measure(&self) {
        self.measuring.store(true, Ordering::Release);
    }

    /// Stops the thread and returns what it did.
    pub fn stop(self) -> EmulatorStats {
        self.stop.store(true, Ordering::Release);
        self.thread.join().unwrap_or_default()
    }
}

struct Worker {
    tuns: Vec<Tun>,
    by_addr: HashMap<Ipv4Addr, usize>,
    route_ids: HashMap<(usize, usize), usize>,
    routes: Vec<Vec<Hop>>,
    models: Vec<PathModel<Transit>>,
    media: Vec<Air<Transit>>,
    /// Per medium, its stations' node names, the AP first.
    media_nodes: Vec<Vec<String>>,
    /// Per medium, each delivered frame's lateness (µs; see [`FrameTiming`]).
    lateness: Vec<Vec<f64>>,
    stats: EmulatorStats,
    buf: Vec<u8>,
    /// The last instant the links were stepped to.
    stepped: Time,
    /// When the emulator started.
    start: Time,
    /// Whether the routes tally their deliveries.
    measuring: Arc<AtomicBool>,
}

impl Worker {
    fn run(mut self, stop: &AtomicBool) -> EmulatorStats {
        clock::tighten_timer_slack();
        while !stop.load(Ordering::Acquire) {
            self.advance(clock::now());
            self.wait();
        }
        for (model, stats) in self.models.iter_mut().zip(&mut self.stats.links) {
            add(stats, model.take_counters());
        }
        let ran = clock::now().saturating_since(self.start);
        for (m, stats) in self.stats.media.iter_mut().enumerate() {
            stats.counters = Some(self.media[m].result(&stats.name, &self.media_nodes[m], ran));
            stats.timing = FrameTiming::of(&mut self.lateness[m]);
        }
        self.stats
    }

    /// Plays every link's and medium's events up to `now` in time order.
    fn advance(&mut self, now: Time) {
        while let Some(t) = self.next_change() {
            if t > now {
                break;
            }
            self.step(t.max(self.stepped));
        }
        self.step(now);
    }

    /// The earliest pending event of any link or medium.
    fn next_change(&self) -> Option<Time> {
        let links = self.models.iter().filter_map(PathModel::next_change);
        let media = self.media.iter().filter_map(Air::poll_timeout);
        links.chain(media).min()
    }

    /// Steps every link and medium to `t` and moves what left them on.
    fn step(&mut self, t: Time) {
        // Events at or before the last step were all played: go on by at least a nanosecond.
        let t = if t > self.stepped {
            t
        } else {
            self.stepped + Duration::from_nanos(1)
        };
        self.stepped = t;
        for i in 0..self.models.len() {
            self.models[i].handle_timeout(t);
            while let Some(d) = self.models[i].poll_departure(t) {
                self.stats.links[i].delivered += 1;
                let mut transit = d.parcel.item;
                transit.hop += 1;
                self.forward(t, transit, d.parcel.bytes, d.parcel.dscp, d.parcel.source);
            }
        }
        for m in 0..self.media.len() {
            self.media[m].handle_timeout(t);
            let real = clock::now();
            while let Some(outcome) = self.media[m].poll_delivery(t) {
                match outcome {
                    Ok(d) => {
                        self.stats.media[m].delivered += 1;
                        let late = real.saturating_since(d.at).as_secs_f64() * 1e6;
                        self.lateness[m].push(late);
                        let mut transit = d.parcel.item;
                        transit.hop += 1;
                        self.forward(t, transit, d.parcel.bytes, d.parcel.dscp, d.parcel.source);
                    }
                    // A full queue may push out a frame it held to admit a new one.
                    Err(d) if d.reason == DropReason::QueueFull => {
                        self.stats.media[m].dropped_queue += 1;
                    }
                    Err(_) => self.stats.media[m].dropped_retry += 1,
                }
            }
        }
    }

    /// Offers a packet to the next link of its route, or delivers it at the route's end.
    fn forward(&mut self, t: Time, transit: Transit, bytes: u32, dscp: u8, source: u64) {
        let route = &self.routes[transit.route];
        match route.get(transit.hop) {
            Some(&Hop::Link(link)) => {
                self.stats.links[link].offered += 1;
                // A drop is counted by the model.
                let _ = self.models[link].arrive(t, transit, bytes, dscp, source);
            }
            Some(&Hop::Wifi { medium, from, to }) => {
                self.stats.media[medium].offered += 1;
                let parcel = acp_netmodel::Parcel {
                    item: transit,
                    bytes,
                    dscp,
                    source,
                };
                if self.media[medium].enqueue(t, from, to, parcel).is_err() {
                    self.stats.media[medium].dropped_queue += 1;
                }
            }
            None => match self.tuns[transit.to].send(&transit.data) {
                Ok(()) => {
                    self.stats.forwarded += 1;
                    self.stats.bytes_forwarded += u64::from(bytes);
                    if self.measuring.load(Ordering::Relaxed) {
                        let r = &mut self.stats.routes[transit.route];
                        match transit.transport {
                            Transport::Tcp(0) => r.tcp_empty.add(t, 0),
                            Transport::Tcp(n) => r.tcp_data.add(t, n),
                            Transport::Udp(n) => r.udp.add(t, n),
                            Transport::Other => {}
                        }
                    }
                }
                Err(_) => self.stats.write_errors += 1,
            },
        }
    }

    /// A packet read from host `from`'s device at `now` (in `self.buf[..len]`).
    fn on_packet(&mut self, from: usize, len: usize, now: Time) {
        self.stats.read += 1;
        let Some(h) = ipv4::parse(&self.buf[..len]) else {
            self.stats.not_ipv4 += 1;
            return;
        };
        let routed = self.by_addr.get(&h.dst).and_then(|&to| {
            let route = self.route_ids.get(&(from, to))?;
            Some((*route, to))
        });
        let Some((route, to)) = routed else {
            self.stats.unrouted += 1;
            return;
        };
        let transit = Transit {
            data: self.buf[..len].to_vec(),
            route,
            hop: 0,
            to,
            transport: h.transport,
        };
        let source = acp_netmodel::freshest::source_of((h.src, h.src_port).into());
        self.forward(now, transit, len as u32, h.dscp, source);
    }

    /// Blocks until the next event (see the module's Timing section), reading what arrives.
    fn wait(&mut self) {
        let now = Instant::now();
        let send = self.models.iter().filter_map(PathModel::next_send).min();
        // Medium events (a transmission starting, a frame received) are woken for in `ppoll`,
        // not spun to: a busy cell has one every few tens of µs.
        let change = self.next_change();
        let mut wake = now + IDLE_POLL;
        if let Some(send) = send.map(clock::to_instant) {
            match send.checked_sub(SPIN_WINDOW) {
                Some(poll_end) if poll_end > now => wake = wake.min(poll_end),
                _ => {
                    // Read what has arrived first, so back-to-back sends cannot starve the
                    // devices; if anything was read, go round again (it may be due earlier).
                    if !self.poll_and_read(Duration::ZERO) {
                        clock::wait_until(send);
                    }
                    return;
                }
            }
        }
        if let Some(change) = change.map(clock::to_instant) {
            wake = wake.min(change);
        }
        self.poll_and_read(wake.saturating_duration_since(now));
    }

    /// Waits up to `timeout` for a device to have packets and reads them; true if any.
    fn poll_and_read(&mut self, timeout: Duration) -> bool {
        let mut fds: Vec<libc::pollfd> = self
            .tuns
            .iter()
            .map(|t| libc::pollfd {
                fd: t.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        match poll_fds(&mut fds, timeout) {
            Ok(0) => false,
            Ok(_) => {
                for (from, fd) in fds.iter().enumerate() {
                    if fd.revents != 0 {
                        self.drain(from);
                    }
                }
                true
            }
            Err(e) => {
                tracing::warn!(error = %e, "the lab emulator cannot wait for its devices");
                std::thread::sleep(Duration::from_millis(1));
                false
            }
        }
    }

    fn drain(&mut self, from: usize) {
        for _ in 0..DRAIN_LIMIT {
            match self.tuns[from].recv(&mut self.buf) {
                Ok(len) => {
                    let now = clock::now();
                    self.advance(now);
                    self.on_packet(from, len, now);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return,
            }
        }
    }
}

fn add(stats: &mut LinkStats, c: PathCounters) {
    stats.dropped_loss += c.dropped_loss;
    stats.dropped_queue += c.dropped_queue;
    stats.dropped_outage += c.dropped_outage;
}
