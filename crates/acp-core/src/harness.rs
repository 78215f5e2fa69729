//! A deterministic test harness: one source and one monitor joined by a tiny virtual path.
//!
//! The path is a FIFO drop-tail server with a deterministic service time S, followed by a fixed
//! propagation delay to the monitor; ACKs return after a fixed reverse delay without queueing.
//! Time is virtual (the monitor's and the source's clocks are the same clock), so the true age at
//! the monitor is known exactly and every run is reproducible. The discrete-event simulator is the
//! tool for real networks; this harness exists to test the protocol core against a path whose
//! optimum is known in closed form: the best rate is 1/S, which keeps exactly one update at the
//! server and gives an average age of `S + P + S/2`.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::net::SocketAddr;
use std::time::Duration;

use crate::accounting::{AgeIntegral, StepIntegral};
use crate::controller::Controller;
use crate::monitor::{Monitor, MonitorConfig};
use crate::source::{AppMode, Source, SourceConfig, SourceStats};
use crate::time::Time;
use crate::wire::HEADER_LEN;

/// The virtual path.
#[derive(Debug, Clone, PartialEq)]
pub struct VirtualPath {
    /// Service time of every update at the bottleneck server.
    pub service: Duration,
    /// Propagation delay from the server to the monitor.
    pub forward_delay: Duration,
    /// Delay of ACKs from the monitor back to the source.
    pub reverse_delay: Duration,
    /// Most updates at the server, queued or in service; arrivals beyond are dropped.
    pub queue_limit: usize,
}

impl VirtualPath {
    /// Average age at the optimum, rate 1/S: `S + P + S/2` (s).
    pub fn optimal_age(&self) -> f64 {
        (self.service.as_secs_f64() * 1.5) + self.forward_delay.as_secs_f64()
    }
}

/// What to run.
#[derive(Debug, Clone)]
pub struct HarnessConfig {
    /// The path.
    pub path: VirtualPath,
    /// Length of the run.
    pub duration: Duration,
    /// Measurements start after this much time.
    pub warmup: Duration,
    /// Source parameters.
    pub source: SourceConfig,
    /// Payload bytes per update.
    pub payload: usize,
    /// The path drops every packet (both ways) during these intervals (s, from start).
    pub outages: Vec<(Duration, Duration)>,
}

/// Results, measured over `[warmup, duration]` unless stated otherwise.
#[derive(Debug, Clone)]
pub struct HarnessReport {
    /// The controller's name.
    pub controller: String,
    /// True time-average age at the monitor (s).
    pub age: f64,
    /// True age at the end of the run (s).
    pub final_age: f64,
    /// Time-average number of this source's updates at the server (queued or in service).
    pub server_backlog: f64,
    /// Updates delivered per second.
    pub delivery_rate: f64,
    /// Updates dropped at the server.
    pub dropped: u64,
    /// Updates the source sent while the path was blackholed (over the whole run).
    pub sent_in_outages: u64,
    /// The source's own statistics at the end (lifetime averages).
    pub source: SourceStats,
}

#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    ServiceDone,
    AtMonitor(Vec<u8>),
    AtSource(Vec<u8>),
}

/// A FIFO drop-tail server with deterministic service.
struct Server {
    queue: VecDeque<Vec<u8>>,
    occupancy: StepIntegral,
    dropped: u64,
}

/// Runs `controller` over the path in `cfg`.
pub fn run(controller: Box<dyn Controller>, cfg: &HarnessConfig) -> HarnessReport {
    let name = controller.name();
    let start = Time::ZERO;
    let end = start + cfg.duration;
    let warmup = start + cfg.warmup;
    let payload = cfg.payload;
    let mode = AppMode::GenerateAtWill(Box::new(move |_, out: &mut Vec<u8>| {
        out.resize(out.len() + payload, 0xA5)
    }));
    let mut source = Source::new(cfg.source.clone(), controller, mode, 0x5EED, start);
    let mut monitor = Monitor::new(
        MonitorConfig {
            clocks_synchronised: true,
            ..MonitorConfig::default()
        },
        start,
    );
    let peer = SocketAddr::from(([192, 0, 2, 1], 4000));
    let mut server = Server {
        queue: VecDeque::new(),
        occupancy: StepIntegral::new(start),
        dropped: 0,
    };
    let mut age = AgeIntegral::new(start);
    let mut delivered_after_warmup = 0u64;
    let mut measuring = false;
    let mut sent_in_outages = 0u64;
    let mut events: BinaryHeap<Reverse<(Time, u64, Event)>> = BinaryHeap::new();
    let mut counter = 0u64;
    let mut push = |events: &mut BinaryHeap<_>, at: Time, ev: Event| {
        counter += 1;
        events.push(Reverse((at, counter, ev)));
    };
    let blackholed = |t: Time| {
        cfg.outages
            .iter()
            .any(|&(a, b)| t >= start + a && t < start + b)
    };
    let mut ack = vec![0u8; HEADER_LEN + 512];
    let mut buf = Vec::new();
    let mut clock = start;

    loop {
        let next_event = events.peek().map(|Reverse((t, _, _))| *t);
        let next = [next_event, source.poll_timeout()]
            .into_iter()
            .flatten()
            .min();
        // A deadline already past means "now": virtual time never runs backwards.
        let Some(now) = next.map(|t| t.max(clock)).filter(|&t| t <= end) else {
            break;
        };
        clock = now;
        if !measuring && now >= warmup {
            measuring = true;
            age.take_window(warmup);
            server.occupancy.take_window(warmup);
        }
        if next_event.is_some_and(|t| t <= now) {
            let Some(Reverse((_, _, event))) = events.pop() else {
                break;
            };
            match event {
                Event::ServiceDone => {
                    if let Some(packet) = server.queue.pop_front() {
                        push(
                            &mut events,
                            now + cfg.path.forward_delay,
                            Event::AtMonitor(packet),
                        );
                    }
                    server.occupancy.set(now, server.queue.len() as u64);
                    if !server.queue.is_empty() {
                        push(&mut events, now + cfg.path.service, Event::ServiceDone);
                    }
                }
                Event::AtMonitor(packet) if !blackholed(now) => {
                    if let Ok(h) = monitor.handle_datagram(now, peer, &packet, &mut ack) {
                        if let Some(d) = h.delivery {
                            age.reset(now, d.gen_ts);
                            delivered_after_warmup += u64::from(measuring);
                        }
                        let back = ack[..h.ack_len].to_vec();
                        push(
                            &mut events,
                            now + cfg.path.reverse_delay,
                            Event::AtSource(back),
                        );
                    }
                }
                Event::AtSource(packet) if !blackholed(now) => {
                    source.handle_datagram(now, &packet);
                }
                Event::AtMonitor(_) | Event::AtSource(_) => {}
            }
            continue;
        }
        while let Some(tx) = source.poll_transmit(now, &mut buf) {
            debug_assert_eq!(tx.len, buf.len());
            if blackholed(now) {
                sent_in_outages += 1;
                continue;
            }
            if server.queue.len() >= cfg.path.queue_limit {
                server.dropped += 1;
                continue;
            }
            server.queue.push_back(std::mem::take(&mut buf));
            server.occupancy.set(now, server.queue.len() as u64);
            if server.queue.len() == 1 {
                push(&mut events, now + cfg.path.service, Event::ServiceDone);
            }
        }
        source.handle_timeout(now);
    }

    let measured = end.nanos_since(warmup) as f64 * 1e-9;
    HarnessReport {
        controller: name,
        age: age.average(end).unwrap_or(f64::INFINITY),
        final_age: age.age_at(end).map_or(f64::INFINITY, |ns| ns as f64 * 1e-9),
        server_backlog: server.occupancy.average(end),
        delivery_rate: delivered_after_warmup as f64 / measured,
        dropped: server.dropped,
        sent_in_outages,
        source: source.stats(end),
    }
}
