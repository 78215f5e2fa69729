//! The discrete-event engine.
//!
//! Events sit in a binary heap ordered by (time, insertion number), so simultaneous events run in
//! the order they were scheduled and a seed fully determines a run. Packets live in a slab whose
//! slots (and byte buffers) are reused, so memory stays bounded by the packets in flight. ACP
//! sources and monitors are the `acp-core` state machines, driven with the virtual clock; their
//! timers are heap events invalidated by a generation number when the source reschedules.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::time::Duration;

use acp_core::accounting::AgeIntegral;
use acp_core::time::secs_to_duration;
use acp_core::wire::HEADER_LEN;
use acp_core::{AppMode, Monitor, MonitorConfig, Source, Time};

use crate::flows::{CrossPattern, FlowKind, FlowSpec, Process};
use crate::report::{FlowResult, HopBacklog, LinkResult, SimResult};
use crate::rng::Rng;
use crate::topology::{LinkId, Service, Topology, TopologyError};

/// Run parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct SimConfig {
    /// Seed of the only random generator.
    pub seed: u64,
    /// Simulated time.
    pub duration: Duration,
    /// Measurements (age, backlog, rates) start after this.
    pub warmup: Duration,
    /// Record each update flow's age over time (for plots), at most this many points.
    pub trace_points: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Update,
    Ack,
    Cross,
}

#[derive(Debug)]
struct Packet {
    flow: u32,
    size: u32,
    route: u32,
    hop: u32,
    kind: Kind,
    seq: u64,
    gen: Time,
    bytes: Vec<u8>,
}

#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    LinkDone(u32),
    Arrive(u32),
    Timer(u32, u64),
    Generate(u32),
    Warmup,
}

enum State {
    Acp {
        source: Box<Source>,
        monitor: usize,
        fwd: u32,
        rev: u32,
        peer: SocketAddr,
        timer_gen: u64,
        timer_at: Option<Time>,
    },
    Updates {
        process: Process,
        rate: f64,
        size: u32,
        route: u32,
        next_seq: u64,
        freshest: u64,
    },
    Cross {
        pattern: CrossPattern,
        rate_bps: f64,
        size: u32,
        route: u32,
        on_until: Time,
    },
}

struct Flow {
    spec: FlowSpec,
    state: State,
    /// Index among update flows (for backlog tracking).
    tracked: Option<usize>,
    stop: Time,
    age: AgeIntegral,
    sent: u64,
    delivered: u64,
    delivered_in_window: u64,
    bytes_in_window: u64,
    dropped: u64,
    /// Age integral over the current trace interval.
    recent: AgeIntegral,
    trace: Vec<(f64, f64)>,
    next_trace: Time,
}

/// Errors building a simulation.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// A bad route or link.
    #[error(transparent)]
    Topology(#[from] TopologyError),
    /// A flow parameter out of range.
    #[error("flow {0}: {1}")]
    BadFlow(String, String),
}

/// A simulation ready to run.
pub struct Sim {
    cfg: SimConfig,
    now: Time,
    end: Time,
    topo: Topology,
    routes: Vec<Vec<LinkId>>,
    flows: Vec<Flow>,
    monitors: Vec<Monitor>,
    heap: BinaryHeap<Reverse<(Time, u64, Event)>>,
    counter: u64,
    packets: Vec<Packet>,
    free: Vec<u32>,
    rng: Rng,
    events: u64,
    measuring: bool,
    ack_buf: Vec<u8>,
}

fn check(spec: &FlowSpec) -> Result<(), BuildError> {
    let bad = |why: &str| Err(BuildError::BadFlow(spec.name.clone(), why.into()));
    match &spec.kind {
        FlowKind::Updates { rate, size, .. }
            if !(rate.is_finite() && *rate > 0.0) || *size == 0 =>
        {
            bad("updates need a positive rate and size")
        }
        FlowKind::Cross { rate_bps, size, .. }
            if !(rate_bps.is_finite() && *rate_bps > 0.0) || *size == 0 =>
        {
            bad("cross traffic needs a positive rate and packet size")
        }
        _ => Ok(()),
    }
}

impl Sim {
    /// Builds a simulation of `flows` over `topo`.
    pub fn new(
        cfg: SimConfig,
        mut topo: Topology,
        specs: Vec<FlowSpec>,
    ) -> Result<Self, BuildError> {
        let start = Time::ZERO;
        let tracked_count = specs.iter().filter(|f| f.is_update_flow()).count();
        topo.track(tracked_count, start);
        let mut routes = Vec::new();
        let mut monitors: Vec<Monitor> = Vec::new();
        let mut monitor_at: HashMap<String, usize> = HashMap::new();
        let mut flows = Vec::new();
        let mut next_tracked = 0;
        for (i, spec) in specs.into_iter().enumerate() {
            check(&spec)?;
            let fwd = routes.len() as u32;
            routes.push(topo.route(&spec.path)?);
            let tracked = spec.is_update_flow().then(|| {
                next_tracked += 1;
                next_tracked - 1
            });
            let state = match &spec.kind {
                FlowKind::Acp {
                    controller,
                    config,
                    payload,
                } => {
                    let rev_path: Vec<String> = spec.path.iter().rev().cloned().collect();
                    let rev = routes.len() as u32;
                    routes.push(topo.route(&rev_path)?);
                    let last = spec.path.last().cloned().unwrap_or_default();
                    let monitor = *monitor_at.entry(last).or_insert_with(|| {
                        monitors.push(Monitor::new(
                            MonitorConfig {
                                clocks_synchronised: true,
                                max_sessions: 1 << 20,
                                idle_timeout: Duration::from_secs(1 << 30),
                                probation: Duration::from_secs(1 << 30),
                            },
                            start,
                        ));
                        monitors.len() - 1
                    });
                    let n = *payload as usize;
                    let mode = AppMode::GenerateAtWill(Box::new(move |_, out: &mut Vec<u8>| {
                        out.resize(out.len() + n, 0)
                    }));
                    let source = Source::new(
                        config.clone(),
                        controller.build(),
                        mode,
                        0xACE0_0000 + i as u64,
                        start + spec.start,
                    );
                    let ip = Ipv4Addr::from(0x0A00_0000 + i as u32);
                    State::Acp {
                        source: Box::new(source),
                        monitor,
                        fwd,
                        rev,
                        peer: SocketAddr::V4(SocketAddrV4::new(ip, 4000)),
                        timer_gen: 0,
                        timer_at: None,
                    }
                }
                FlowKind::Updates {
                    process,
                    rate,
                    size,
                } => State::Updates {
                    process: *process,
                    rate: *rate,
                    size: *size,
                    route: fwd,
                    next_seq: 1,
                    freshest: 0,
                },
                FlowKind::Cross {
                    pattern,
                    rate_bps,
                    size,
                } => State::Cross {
                    pattern: *pattern,
                    rate_bps: *rate_bps,
                    size: *size,
                    route: fwd,
                    on_until: Time::MAX,
                },
            };
            flows.push(Flow {
                stop: spec.stop.map_or(Time::MAX, |s| start + s),
                spec,
                state,
                tracked,
                age: AgeIntegral::new(start),
                sent: 0,
                delivered: 0,
                delivered_in_window: 0,
                bytes_in_window: 0,
                dropped: 0,
                recent: AgeIntegral::new(start),
                trace: Vec::new(),
                next_trace: start,
            });
        }
        let mut sim = Sim {
            now: start,
            end: start + cfg.duration,
            rng: Rng::new(cfg.seed),
            cfg,
            topo,
            routes,
            flows,
            monitors,
            heap: BinaryHeap::new(),
            counter: 0,
            packets: Vec::new(),
            free: Vec::new(),
            events: 0,
            measuring: false,
            ack_buf: vec![0u8; HEADER_LEN + 64],
        };
        sim.schedule(start + sim.cfg.warmup, Event::Warmup);
        for i in 0..sim.flows.len() {
            let at = start + sim.flows[i].spec.start;
            match sim.flows[i].state {
                State::Acp { .. } => sim.reschedule_source(i),
                State::Cross {
                    pattern: CrossPattern::OnOff { on, .. },
                    ..
                } => {
                    let on_for = secs_to_duration(sim.rng.exp(on.as_secs_f64()));
                    if let State::Cross { on_until, .. } = &mut sim.flows[i].state {
                        *on_until = at + on_for;
                    }
                    sim.schedule(at, Event::Generate(i as u32));
                }
                _ => sim.schedule(at, Event::Generate(i as u32)),
            }
        }
        Ok(sim)
    }

    fn schedule(&mut self, at: Time, ev: Event) {
        self.counter += 1;
        self.heap.push(Reverse((at, self.counter, ev)));
    }

    fn alloc(&mut self, flow: usize, kind: Kind, route: u32) -> u32 {
        let p = Packet {
            flow: flow as u32,
            size: 0,
            route,
            hop: 0,
            kind,
            seq: 0,
            gen: self.now,
            bytes: Vec::new(),
        };
        match self.free.pop() {
            Some(id) => {
                let slot = &mut self.packets[id as usize];
                let bytes = std::mem::take(&mut slot.bytes);
                *slot = Packet { bytes, ..p };
                slot.bytes.clear();
                id
            }
            None => {
                self.packets.push(p);
                (self.packets.len() - 1) as u32
            }
        }
    }

    fn release(&mut self, id: u32) {
        self.free.push(id);
    }

    fn reschedule_source(&mut self, i: usize) {
        let now = self.now;
        let State::Acp {
            source,
            timer_gen,
            timer_at,
            ..
        } = &mut self.flows[i].state
        else {
            return;
        };
        let next = source.poll_timeout().map(|t| t.max(now));
        if next == *timer_at {
            return;
        }
        *timer_at = next;
        *timer_gen += 1;
        let generation = *timer_gen;
        if let Some(t) = next {
            self.schedule(t, Event::Timer(i as u32, generation));
        }
    }

    /// Runs to the end and returns the results.
    pub fn run(mut self) -> SimResult {
        while let Some(Reverse((t, _, ev))) = self.heap.pop() {
            if t > self.end {
                break;
            }
            self.now = t;
            self.events += 1;
            match ev {
                Event::LinkDone(l) => self.link_done(l as usize),
                Event::Arrive(p) => self.arrive(p),
                Event::Timer(f, generation) => self.timer(f as usize, generation),
                Event::Generate(f) => self.generate(f as usize),
                Event::Warmup => self.start_measuring(),
            }
        }
        self.now = self.end;
        self.results()
    }

    fn start_measuring(&mut self) {
        self.measuring = true;
        let now = self.now;
        for f in &mut self.flows {
            f.age.take_window(now);
        }
        for l in &mut self.topo.links {
            for b in &mut l.backlog {
                b.take_window(now);
            }
        }
    }

    fn enqueue(&mut self, link: LinkId, p: u32) {
        let (size, flow, kind) = {
            let pk = &self.packets[p as usize];
            (pk.size, pk.flow as usize, pk.kind)
        };
        let now = self.now;
        let l = &mut self.topo.links[link];
        if !l.admits(size) {
            l.counters.dropped += 1;
            if kind == Kind::Update {
                self.flows[flow].dropped += 1;
            }
            self.release(p);
            return;
        }
        l.counters.enqueued += 1;
        l.queue.push_back(p);
        l.queued_bytes += u64::from(size);
        if let (Kind::Update, Some(t)) = (kind, self.flows[flow].tracked) {
            let b = &mut l.backlog[t];
            b.set(now, b.value() + 1);
        }
        if !l.busy {
            self.start_service(link);
        }
    }

    fn start_service(&mut self, link: LinkId) {
        let l = &self.topo.links[link];
        let Some(&head) = l.queue.front() else {
            return;
        };
        let mean = l.mean_service(self.packets[head as usize].size);
        let secs = match l.spec.service {
            Service::Deterministic => mean,
            Service::Exponential => self.rng.exp(mean),
        };
        self.topo.links[link].busy = true;
        let at = self.now + secs_to_duration(secs);
        self.schedule(at, Event::LinkDone(link as u32));
    }

    fn link_done(&mut self, link: LinkId) {
        let now = self.now;
        let l = &mut self.topo.links[link];
        l.busy = false;
        let Some(p) = l.queue.pop_front() else {
            return;
        };
        let pk = &mut self.packets[p as usize];
        l.queued_bytes -= u64::from(pk.size);
        l.counters.bytes += u64::from(pk.size);
        if let (Kind::Update, Some(t)) = (pk.kind, self.flows[pk.flow as usize].tracked) {
            let b = &mut l.backlog[t];
            b.set(now, b.value().saturating_sub(1));
        }
        pk.hop += 1;
        let at = now + l.spec.delay;
        self.schedule(at, Event::Arrive(p));
        if !self.topo.links[link].queue.is_empty() {
            self.start_service(link);
        }
    }

    fn arrive(&mut self, p: u32) {
        let (route, hop) = {
            let pk = &self.packets[p as usize];
            (pk.route as usize, pk.hop as usize)
        };
        match self.routes[route].get(hop) {
            Some(&link) => self.enqueue(link, p),
            None => self.deliver(p),
        }
    }

    /// A packet reached the end of its route.
    fn deliver(&mut self, p: u32) {
        let now = self.now;
        let (flow, kind, size, seq, gen) = {
            let pk = &self.packets[p as usize];
            (pk.flow as usize, pk.kind, pk.size, pk.seq, pk.gen)
        };
        match kind {
            Kind::Cross => {
                let f = &mut self.flows[flow];
                f.delivered += 1;
                if self.measuring {
                    f.delivered_in_window += 1;
                    f.bytes_in_window += u64::from(size);
                }
            }
            Kind::Ack => {
                if let State::Acp { source, .. } = &mut self.flows[flow].state {
                    source.handle_datagram(now, &self.packets[p as usize].bytes);
                }
                self.reschedule_source(flow);
            }
            Kind::Update => {
                let mut ack = None;
                let fresh = match &mut self.flows[flow].state {
                    State::Acp {
                        monitor, peer, rev, ..
                    } => {
                        let m = &mut self.monitors[*monitor];
                        match m.handle_datagram(
                            now,
                            *peer,
                            &self.packets[p as usize].bytes,
                            &mut self.ack_buf,
                        ) {
                            Ok(h) => {
                                ack = Some((h.ack_len, *rev));
                                h.delivery.map(|d| Time::from_nanos(d.gen_ts))
                            }
                            Err(_) => None,
                        }
                    }
                    State::Updates { freshest, .. } => (seq > *freshest).then(|| {
                        *freshest = seq;
                        gen
                    }),
                    State::Cross { .. } => None,
                };
                if let Some(gen) = fresh {
                    self.record_delivery(flow, gen, size);
                }
                if let Some((len, rev)) = ack {
                    let a = self.alloc(flow, Kind::Ack, rev);
                    let pk = &mut self.packets[a as usize];
                    pk.bytes.extend_from_slice(&self.ack_buf[..len]);
                    pk.size = len as u32 + UDP_IP_OVERHEAD;
                    self.arrive(a);
                }
            }
        }
        self.release(p);
    }

    fn record_delivery(&mut self, flow: usize, gen: Time, size: u32) {
        let now = self.now;
        let measuring = self.measuring;
        let spacing = self.cfg.duration / (self.cfg.trace_points.max(1) as u32);
        let f = &mut self.flows[flow];
        f.age.reset(now, gen.as_nanos());
        f.delivered += 1;
        if measuring {
            f.delivered_in_window += 1;
            f.bytes_in_window += u64::from(size);
        }
        if self.cfg.trace_points > 0 {
            if now >= f.next_trace {
                if let Some(avg) = f.recent.take_window(now) {
                    f.trace.push((now.as_secs_f64(), avg));
                }
                f.next_trace = now + spacing;
            }
            f.recent.reset(now, gen.as_nanos());
        }
    }

    fn timer(&mut self, i: usize, generation: u64) {
        let now = self.now;
        let route = match &mut self.flows[i].state {
            State::Acp {
                timer_gen,
                timer_at,
                fwd,
                ..
            } if *timer_gen == generation => {
                *timer_at = None;
                *fwd
            }
            _ => return,
        };
        if now < self.flows[i].stop {
            loop {
                let p = self.alloc(i, Kind::Update, route);
                let mut bytes = std::mem::take(&mut self.packets[p as usize].bytes);
                let sent = match &mut self.flows[i].state {
                    State::Acp { source, .. } => source.poll_transmit(now, &mut bytes),
                    _ => None,
                };
                let pk = &mut self.packets[p as usize];
                pk.bytes = bytes;
                let Some(tx) = sent else {
                    self.release(p);
                    break;
                };
                pk.size = tx.len as u32 + UDP_IP_OVERHEAD;
                pk.seq = tx.seq;
                self.flows[i].sent += 1;
                self.arrive(p);
            }
        }
        if let State::Acp { source, .. } = &mut self.flows[i].state {
            source.handle_timeout(now);
        }
        if now < self.flows[i].stop {
            self.reschedule_source(i);
        }
    }

    fn generate(&mut self, i: usize) {
        let now = self.now;
        if now >= self.flows[i].stop {
            return;
        }
        let (kind, route, size, gap) = match &mut self.flows[i].state {
            State::Updates {
                process,
                rate,
                size,
                route,
                next_seq,
                ..
            } => {
                let gap = match process {
                    Process::Periodic => 1.0 / *rate,
                    Process::Poisson => self.rng.exp(1.0 / *rate),
                };
                *next_seq += 1;
                (Kind::Update, *route, *size, secs_to_duration(gap))
            }
            State::Cross {
                pattern,
                rate_bps,
                size,
                route,
                on_until,
            } => {
                let mean_gap = 8.0 * f64::from(*size) / *rate_bps;
                let gap = match pattern {
                    CrossPattern::Cbr => secs_to_duration(mean_gap),
                    CrossPattern::Poisson => secs_to_duration(self.rng.exp(mean_gap)),
                    CrossPattern::OnOff { on, off } => {
                        let mut next = now + secs_to_duration(mean_gap);
                        if next >= *on_until {
                            let silent = secs_to_duration(self.rng.exp(off.as_secs_f64()));
                            let talk = secs_to_duration(self.rng.exp(on.as_secs_f64()));
                            next = *on_until + silent;
                            *on_until = next + talk;
                        }
                        next - now
                    }
                };
                (Kind::Cross, *route, *size, gap)
            }
            State::Acp { .. } => return,
        };
        let p = self.alloc(i, kind, route);
        let seq = match &self.flows[i].state {
            State::Updates { next_seq, .. } => next_seq - 1,
            _ => 0,
        };
        let pk = &mut self.packets[p as usize];
        pk.size = size;
        pk.seq = seq;
        pk.gen = now;
        self.flows[i].sent += 1;
        self.arrive(p);
        self.schedule(now + gap, Event::Generate(i as u32));
    }

    fn results(&self) -> SimResult {
        let now = self.now;
        let measured = now.nanos_since(Time::ZERO + self.cfg.warmup) as f64 * 1e-9;
        let flows = self
            .flows
            .iter()
            .map(|f| {
                let (controller, est_age, rtt, source_backlog, final_rate) = match &f.state {
                    State::Acp { source, .. } => {
                        let s = source.stats(now);
                        (
                            Some(source.controller_name()),
                            s.avg_age,
                            s.rtt,
                            Some(s.avg_backlog),
                            Some(s.rate),
                        )
                    }
                    _ => (None, None, None, None, None),
                };
                let backlog = match (f.tracked, self.routes.get(self.fwd_route(f))) {
                    (Some(t), Some(route)) => route
                        .iter()
                        .map(|&l| HopBacklog {
                            link: self.topo.link_name(l),
                            backlog: self.topo.links[l].backlog[t].average(now),
                        })
                        .collect(),
                    _ => Vec::new(),
                };
                FlowResult {
                    name: f.spec.name.clone(),
                    kind: match f.spec.kind {
                        FlowKind::Acp { .. } => "acp",
                        FlowKind::Updates { .. } => "updates",
                        FlowKind::Cross { .. } => "cross",
                    }
                    .into(),
                    controller,
                    age: f.tracked.and_then(|_| f.age.average(now)),
                    est_age,
                    rtt,
                    source_backlog,
                    final_rate,
                    rate: f.delivered_in_window as f64 / measured.max(1e-12),
                    throughput_bps: f.bytes_in_window as f64 * 8.0 / measured.max(1e-12),
                    sent: f.sent,
                    delivered: f.delivered,
                    dropped: f.dropped,
                    backlog,
                    age_trace: f.trace.clone(),
                }
            })
            .collect();
        let links = self
            .topo
            .links
            .iter()
            .enumerate()
            .map(|(i, l)| LinkResult {
                link: self.topo.link_name(i),
                enqueued: l.counters.enqueued,
                dropped: l.counters.dropped,
                utilisation: l.counters.bytes as f64 * 8.0
                    / l.spec.rate_bps
                    / now.as_secs_f64().max(1e-12),
            })
            .collect();
        SimResult {
            seed: self.cfg.seed,
            duration: self.cfg.duration.as_secs_f64(),
            warmup: self.cfg.warmup.as_secs_f64(),
            events: self.events,
            flows,
            links,
        }
    }

    fn fwd_route(&self, f: &Flow) -> usize {
        match &f.state {
            State::Acp { fwd, .. } => *fwd as usize,
            State::Updates { route, .. } | State::Cross { route, .. } => *route as usize,
        }
    }
}

/// Bytes of IPv4 and UDP headers added to every ACP datagram on a link.
pub const UDP_IP_OVERHEAD: u32 = 28;
